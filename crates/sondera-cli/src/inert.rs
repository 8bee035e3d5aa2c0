//! Text that agents supplied, printed so a terminal shows it and does
//! nothing else: control characters (escape sequences, carriage returns,
//! newlines), C1 controls and the characters that reorder text
//! (bidirectional overrides) are written as visible escapes, so an agent
//! cannot erase, recolour or rearrange what an operator reads.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every character a terminal would act on made visible:
/// `\x1b`, `\r`, `\n`, `\u{202e}`, ...
pub(crate) fn inert(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => shown.push_str("\\n"),
            '\r' => shown.push_str("\\r"),
            '\t' => shown.push_str("\\t"),
            c if acts(c) && (c as u32) < 0x100 => {
                let _ = write!(shown, "\\x{:02x}", c as u32);
            }
            c if acts(c) => {
                let _ = write!(shown, "\\u{{{:x}}}", c as u32);
            }
            c => shown.push(c),
        }
    }
    Cow::Owned(shown)
}

/// Whether a terminal acts on `c` rather than only drawing it.
fn acts(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_terminal_acts_on_is_shown_and_nothing_else_changes() {
        assert_eq!(inert("rm -rf ./build"), "rm -rf ./build");
        assert!(matches!(inert("plain ü 日本"), Cow::Borrowed(_)));
        assert_eq!(
            inert("ls\u{1b}[2K\rrm -rf ~"),
            "ls\\x1b[2K\\rrm -rf ~",
            "an erased line stays visible"
        );
        assert_eq!(inert("a\nb\tc\u{7f}"), "a\\nb\\tc\\x7f");
        assert_eq!(
            inert("\u{9b}31m"),
            "\\x9b31m",
            "a C1 control sequence introducer"
        );
        assert_eq!(inert("abc\u{202e}fdp.exe"), "abc\\u{202e}fdp.exe");
    }
}
