//! Shell words after quote removal, with what could not be known statically.

use brush_parser::ParserOptions;
use brush_parser::word::{self, Parameter, ParameterExpr, WordPiece, WordPieceWithSource};

impl AsRef<str> for Word {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

/// What a word's text has in place of a parameter expansion that cannot be
/// known statically.
pub const EXPANSION: &str = "${...}";

/// A word as the shell would pass it, as far as that can be known without
/// running anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// The text after quote removal; expansions that cannot be known
    /// statically appear as `$NAME`, `$(...)` and so on.
    pub text: String,
    /// Some part comes from an expansion or substitution.
    pub dynamic: bool,
    /// Commands run by `$(...)` or backquotes inside the word.
    pub substitutions: Vec<String>,
    /// The word starts with `~` or `$HOME`, which resolve to the home directory.
    pub home_relative: bool,
    /// Names of the variables the word expands.
    pub variables: Vec<String>,
    /// The word is one plain expansion of this variable and nothing else
    /// (`$X`, `"${X}"`, `"${X[@]}"`): a value assigned statically earlier
    /// in the command stands for it.
    pub reference: Option<String>,
    /// The word is what a tool prints to set itself up in the shell
    /// (`$(pyenv init -)`): code of a known origin, not unknown text.
    pub shell_setup: bool,
}

impl Word {
    /// A word of static text used as a path (see [`starts_at_home`]).
    pub fn path(text: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            home_relative: starts_at_home(&text),
            text,
            ..Self::default()
        }
    }
}

/// Whether static text names a path below home: it starts with `~` or `$HOME`.
pub fn starts_at_home(text: &str) -> bool {
    text.starts_with('~') || text.starts_with("$HOME")
}

/// Words of static text, split at white space (for tests).
#[cfg(test)]
pub(crate) fn plain_words(text: &str) -> Vec<Word> {
    text.split_whitespace()
        .map(|t| Word {
            text: t.to_string(),
            ..Word::default()
        })
        .collect()
}

/// Most words one brace expansion yields; past this the command is unparsable.
const MAX_BRACE_EXPANSIONS: usize = 64;

/// The words a brace expansion stands for: `{/,}` is `/` and ``,
/// `/{etc,usr}` is `/etc` and `/usr`. A word without one is itself. The
/// flag is false when the expansion yields more than
/// `MAX_BRACE_EXPANSIONS` words, of which only that many are returned.
pub fn expand_braces(word: &Word) -> (Vec<Word>, bool) {
    let mut texts = vec![word.text.clone()];
    let mut done = Vec::new();
    let mut complete = true;
    while let Some(text) = texts.pop() {
        match split_first_brace(&text) {
            Some((prefix, alternatives, suffix)) => {
                if done.len() + texts.len() + alternatives.len() > MAX_BRACE_EXPANSIONS {
                    complete = false;
                    break;
                }
                // Reversed onto the stack, so that words come out in bash's order.
                let words = alternatives.iter().rev();
                texts.extend(words.map(|a| format!("{prefix}{a}{suffix}")));
            }
            None => done.push(text),
        }
    }
    complete &= texts.is_empty();
    let words = done
        .into_iter()
        .map(|text| Word {
            home_relative: word.home_relative && starts_at_home(&text),
            text,
            ..word.clone()
        })
        .collect();
    (words, complete)
}

/// `prefix{a,b,...}suffix` split at its first brace pair holding a comma at
/// its own level.
fn split_first_brace(text: &str) -> Option<(&str, Vec<&str>, &str)> {
    let open = text.find('{')?;
    let mut depth = 0;
    let mut commas = Vec::new();
    for (at, c) in text[open..].char_indices().map(|(i, c)| (open + i, c)) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    if commas.is_empty() {
                        return None;
                    }
                    let mut alternatives = Vec::new();
                    let mut start = open + 1;
                    for comma in commas {
                        alternatives.push(&text[start..comma]);
                        start = comma + 1;
                    }
                    alternatives.push(&text[start..at]);
                    return Some((&text[..open], alternatives, &text[at + 1..]));
                }
            }
            ',' if depth == 1 => commas.push(at),
            _ => {}
        }
    }
    None
}

/// Decodes a raw word (as written in the command) into its value.
pub(crate) fn decode(raw: &str, options: &ParserOptions) -> Result<Word, String> {
    // Most words are plain: nothing to remove or expand, so no parsing.
    if !raw.bytes().any(|b| b"'\"\\$`~{}*?[".contains(&b)) {
        return Ok(Word {
            text: raw.to_string(),
            ..Word::default()
        });
    }
    if let Some(inner) = quoted_literal(raw) {
        return Ok(Word {
            text: inner.to_string(),
            ..Word::default()
        });
    }
    let pieces = word::parse(raw, options).map_err(|e| e.to_string())?;
    let mut out = Word::default();
    for piece in &pieces {
        append(&mut out, piece, true);
    }
    out.reference = plain_reference(&pieces).map(str::to_string);
    Ok(out)
}

/// The text of a word that is one quoted stretch with nothing to expand
/// or escape inside (`'s/a/b/g'`, `"a message"`): the quotes removed.
fn quoted_literal(raw: &str) -> Option<&str> {
    let quote = match raw.as_bytes().first()? {
        b'\'' => '\'',
        b'"' => '"',
        _ => return None,
    };
    let inner = raw.strip_prefix(quote)?.strip_suffix(quote)?;
    let special: &[u8] = if quote == '\'' { b"'" } else { b"\"$`\\" };
    (!inner.bytes().any(|b| special.contains(&b))).then_some(inner)
}

/// The variable a word consists of, when it is one plain expansion of it,
/// quoted or not.
fn plain_reference(pieces: &[WordPieceWithSource]) -> Option<&str> {
    let [only] = pieces else { return None };
    match &only.piece {
        WordPiece::DoubleQuotedSequence(inner) => plain_reference(inner),
        WordPiece::ParameterExpansion(ParameterExpr::Parameter {
            parameter: Parameter::Named(name) | Parameter::NamedWithAllIndices { name, .. },
            indirect: false,
        }) if name != "HOME" => Some(name),
        _ => None,
    }
}

fn append(out: &mut Word, piece: &WordPieceWithSource, first: bool) {
    match &piece.piece {
        WordPiece::Text(t) | WordPiece::SingleQuotedText(t) => out.text.push_str(t),
        WordPiece::EscapeSequence(e) => out.text.push_str(e.strip_prefix('\\').unwrap_or(e)),
        WordPiece::AnsiCQuotedText(t) => out.text.push_str(&ansi_c(t)),
        WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
            for p in inner {
                append(out, p, false);
            }
        }
        WordPiece::TildeExpansion(_) => {
            out.text.push('~');
            out.home_relative |= first && piece.start_index == 0;
        }
        WordPiece::ParameterExpansion(expr) => {
            if first && piece.start_index == 0 && is_plain_home(expr) {
                out.text.push_str("$HOME");
                out.home_relative = true;
            } else if is_plain_home(expr) {
                // Quoted (`"$HOME"/x`) or within a word (`--output=$HOME/x`),
                // home keeps its name, so the path can still be read.
                out.home_relative |= out.text.is_empty();
                out.dynamic |= !out.home_relative;
                out.text.push_str("$HOME");
            } else {
                out.text.push_str(EXPANSION);
                out.dynamic = true;
                out.variables
                    .extend(variable_name(expr).map(str::to_string));
            }
        }
        WordPiece::CommandSubstitution(c) | WordPiece::BackquotedCommandSubstitution(c) => {
            out.text.push_str("$(...)");
            out.substitutions.push(c.clone());
            out.dynamic = true;
        }
        WordPiece::ArithmeticExpression(_) => {
            out.text.push_str("$((...))");
            out.dynamic = true;
        }
    }
}

/// The variable an expansion reads, when it is a named one.
fn variable_name(expr: &ParameterExpr) -> Option<&str> {
    use ParameterExpr as E;
    let parameter = match expr {
        E::Parameter { parameter, .. }
        | E::UseDefaultValues { parameter, .. }
        | E::AssignDefaultValues { parameter, .. }
        | E::IndicateErrorIfNullOrUnset { parameter, .. }
        | E::UseAlternativeValue { parameter, .. }
        | E::ParameterLength { parameter, .. }
        | E::RemoveSmallestSuffixPattern { parameter, .. }
        | E::RemoveLargestSuffixPattern { parameter, .. }
        | E::RemoveSmallestPrefixPattern { parameter, .. }
        | E::RemoveLargestPrefixPattern { parameter, .. }
        | E::Substring { parameter, .. }
        | E::Transform { parameter, .. }
        | E::UppercaseFirstChar { parameter, .. }
        | E::UppercasePattern { parameter, .. }
        | E::LowercaseFirstChar { parameter, .. }
        | E::LowercasePattern { parameter, .. }
        | E::ReplaceSubstring { parameter, .. } => parameter,
        E::VariableNames { .. } | E::MemberKeys { .. } => return None,
    };
    match parameter {
        Parameter::Named(name)
        | Parameter::NamedWithIndex { name, .. }
        | Parameter::NamedWithAllIndices { name, .. } => Some(name),
        Parameter::Positional(_) | Parameter::Special(_) => None,
    }
}

/// `$HOME` or `${HOME}`, with no operator that could change its value.
fn is_plain_home(expr: &ParameterExpr) -> bool {
    matches!(
        expr,
        ParameterExpr::Parameter { parameter: Parameter::Named(name), indirect: false } if name == "HOME"
    )
}

/// The value of the body of an ANSI-C quoted string (`$'...'`).
pub fn ansi_c(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            continue;
        }
        let (radix, max) = match e {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 2),
            _ => {
                out.push('\\');
                out.push(e);
                continue;
            }
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(e);
        }
        while digits.len() < max + usize::from(radix == 8) {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => digits.push(*d),
                _ => break,
            }
            chars.next();
        }
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(c) if !digits.is_empty() => out.push(c),
            _ => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(raw: &str) -> String {
        decode(raw, &ParserOptions::default()).unwrap().text
    }

    #[test]
    fn quote_removal_reveals_the_program() {
        for raw in [
            "r''m",
            "\"r\"\"m\"",
            "\\rm",
            "$'\\x72\\x6d'",
            "$'\\162\\155'",
            "'r'm",
            "r\\m",
        ] {
            assert_eq!(text(raw), "rm", "{raw}");
        }
    }

    #[test]
    fn expansions_are_dynamic_and_substitutions_kept() {
        let w = decode("$X", &ParserOptions::default()).unwrap();
        assert!(w.dynamic);
        let w = decode("\"a$(echo b)c\"", &ParserOptions::default()).unwrap();
        assert_eq!(
            (w.text.as_str(), w.substitutions.as_slice()),
            ("a$(...)c", &["echo b".to_string()][..])
        );
        let w = decode("`id`", &ParserOptions::default()).unwrap();
        assert_eq!(w.substitutions, ["id"]);
    }

    #[test]
    fn home_is_recognised_but_other_variables_are_not() {
        let opts = ParserOptions::default();
        assert!(decode("~/.ssh", &opts).unwrap().home_relative);
        let home = decode("$HOME/x", &opts).unwrap();
        assert!(home.home_relative && !home.dynamic);
        assert_eq!(home.text, "$HOME/x");
        assert!(decode("${HOME}", &opts).unwrap().home_relative);
        assert!(decode("$HOMEX", &opts).unwrap().dynamic);
        assert!(decode("${HOME#/}", &opts).unwrap().dynamic);
    }

    #[test]
    fn plain_and_quoted_words_take_the_fast_path_unchanged() {
        let opts = ParserOptions::default();
        for raw in [
            "ls",
            "-rf",
            "./build",
            "src/main.rs",
            "a=b",
            "user@host:/tmp/",
            "https://x.example/p",
            "'s/foo/bar/g'",
            "'a \"b\" $c `d` \\e ~ * {x,y}'",
            "''",
            "\"\"",
            "\"fix: the ~ and * {a,b} stay [x]\"",
            "\"it's\"",
        ] {
            let fast = decode(raw, &opts).unwrap();
            let parsed = word::parse(raw, &opts).unwrap();
            let mut slow = Word::default();
            for piece in &parsed {
                append(&mut slow, piece, true);
            }
            assert_eq!(fast, slow, "{raw}");
        }
    }

    #[test]
    fn words_the_fast_path_leaves_to_the_parser() {
        for raw in [
            "'a'b'",
            "\"a$b\"",
            "\"a\\\"b\"",
            "\"`id`\"",
            "'",
            "\"",
            "'a'\"b\"",
        ] {
            assert_eq!(quoted_literal(raw), None, "{raw}");
        }
    }

    #[test]
    fn plain_references_are_named() {
        let opts = ParserOptions::default();
        for raw in ["$CMD", "\"$CMD\"", "${CMD}", "\"${CMD[@]}\"", "${CMD[*]}"] {
            assert_eq!(
                decode(raw, &opts).unwrap().reference.as_deref(),
                Some("CMD"),
                "{raw}"
            );
        }
        for raw in ["${CMD:-ls}", "$CMD/x", "${!CMD}", "${#CMD}", "$1", "x$CMD"] {
            assert_eq!(decode(raw, &opts).unwrap().reference, None, "{raw}");
        }
    }

    #[test]
    fn ansi_c_escapes() {
        assert_eq!(ansi_c("a\\nb\\t\\x41\\u00e9\\'"), "a\nb\tAé'");
        assert_eq!(ansi_c("\\q\\"), "\\q\\");
    }
}
