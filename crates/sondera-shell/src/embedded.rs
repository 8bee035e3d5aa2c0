//! Commands carried inside other commands' arguments.
//!
//! No list of programs that run their arguments can be complete: `find
//! -exec`, `tmux new`, `ssh HOST`, `git -c alias.x=!CMD`, `vim -c '!CMD'`,
//! `watch`, `parallel`, a debugger's `shell CMD`, a tar checkpoint action, a
//! pager variable. So the analyser does not ask which programs do this.
//! Every argument, option value and variable assignment that could be a
//! command line is analysed as one; so is the rest of every argument vector
//! from where a shell or another program could start, and the text a
//! here-document or here-string feeds a program (debuggers, database shells
//! and `ftp` read their commands there). Whatever risks they carry count
//! for the step, with the program and argument as evidence.
//!
//! Such text may not be a command at all (a commit message, a search
//! pattern), so it is analysed as a *possible* command: only what known
//! programs certainly do counts, a parse error means it is not one, and a
//! program only known at run time is not flagged for it. Programs that only
//! print or search their arguments are not asked.

use sondera_catalogue::programs::starts_shell;

use crate::word::Word;

/// How many times each separator (`=`, `!`, `:`) starts a candidate in one
/// text, and how many quoted literals do. The whole text is always one, and
/// separators and literals beyond these are inside it.
const PER_SEPARATOR: usize = 4;
const LITERALS: usize = 16;

/// How many program-like operands of one argument vector are each taken as
/// the start of a command (`ssh -p 22 HOST CMD`, `docker exec -u U C CMD`),
/// besides every shell named in it and the words after `--`.
const OPERAND_STARTS: usize = 6;

/// The texts inside one argument that could be a command line: the whole
/// text (or, when it is not one, its lines after the first), the rest of
/// the line after each of its first `=`, `!` and `:` (option values,
/// `alias.x=!cmd`, vim's `:!cmd`, `ProxyCommand=cmd`), and its quoted
/// literals (`call system("cmd")`). Each is trimmed of leading white space
/// and separators, and kept when it starts with a program-like word and
/// goes on past it, or, inside the text, when it names a shell alone.
pub(super) fn candidates(text: &str) -> Vec<&str> {
    if one_plain_word(text) {
        return Vec::new();
    }
    every_candidate(text)
}

/// Printable ASCII with no space, separator or quote: no command starts
/// in it, nor after a separator or inside a literal (most arguments).
fn one_plain_word(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_graphic() && !b"=!:;|&<>'\"`".contains(&b))
}

fn every_candidate<'a>(text: &'a str) -> Vec<&'a str> {
    let mut found: Vec<&str> = Vec::new();
    // Inside a text, a shell alone is a command too (`exec=/bin/sh`,
    // `:!sh`); a whole argument that only names one (`apt install zsh`) is not.
    let keep = |candidate: &'a str, found: &mut Vec<&'a str>, inside: bool| {
        // Inside, a line may also start with make's `-` or `@`.
        let lead = if inside { ":+|;&-@" } else { ":+|;&" };
        let trimmed = candidate.trim_start_matches(|c: char| c.is_whitespace() || lead.contains(c));
        let lone_shell = inside && is_shell(trimmed.trim_end());
        if (lone_shell || could_be_command(trimmed)) && !found.contains(&trimmed) {
            found.push(trimmed);
        }
    };
    keep(text, &mut found, false);
    // The lines after the first of a text that is not a command line may be
    // (a make recipe in `--eval=...`, a script in an option).
    if found.is_empty()
        && let Some((_, rest)) = text.split_once('\n')
    {
        keep(rest, &mut found, true);
    }
    for separator in ['=', '!', ':'] {
        for (at, _) in text.match_indices(separator).take(PER_SEPARATOR) {
            // An option's value or an escape runs to the end of its line;
            // the lines after it are in the whole text.
            let rest = &text[at + 1..];
            keep(rest.split('\n').next().unwrap_or(rest), &mut found, true);
        }
    }
    for (start, end) in literal_spans(text).into_iter().take(LITERALS) {
        keep(&text[start..end], &mut found, true);
    }
    found
}

/// Whether `word` names a shell (`sh`, `/bin/bash`).
pub(super) fn is_shell(word: &str) -> bool {
    starts_shell(word)
}

/// Whether `text` starts like a command with something after its program.
fn could_be_command(text: &str) -> bool {
    let Some(end) = text.find(|c: char| c.is_whitespace() || ";|&<>".contains(c)) else {
        return false;
    };
    program_like(&text[..end]) && !text[end..].trim().is_empty()
}

/// Whether `word` could name a program: a name or path, with a letter, and
/// none of the characters that make it an option, an assignment, an
/// address or a URL.
pub(super) fn program_like(word: &str) -> bool {
    let Some(first) = word.chars().next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || "/._~\\\"'".contains(first))
        && !word.starts_with("//")
        && word.chars().any(|c| c.is_ascii_alphabetic())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./+~\\\"'-".contains(c))
}

/// Byte spans of the quoted literals in `text` (between matching `'`, `"`
/// or `` ` ``, backslash escapes kept as written), without their quotes, in
/// order; an unterminated literal ends the list.
pub(super) fn literal_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut chars = text.char_indices();
    while let Some((start, quote)) = chars.next() {
        if !matches!(quote, '\'' | '"' | '`') {
            continue;
        }
        let mut escaped = false;
        for (at, c) in chars.by_ref() {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == quote {
                spans.push((start + 1, at));
                break;
            }
        }
    }
    spans
}

/// Where, in an argument vector (program first), another command may start:
/// every shell it names (`... sh -c X`, wherever it stands), the word after
/// `--`, and its first program-like operands (`ssh HOST rm -rf /`,
/// `firejail rm -rf ~`, a debugger's `shell rm -rf ~`). Positions are
/// ascending and at least 1.
pub(super) fn command_starts(argv: &[Word], takes_files: bool) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut operands = 0;
    let mut after_dashes = false;
    for (k, word) in argv.iter().enumerate().skip(1) {
        let text = word.text.as_str();
        if text == "--" {
            after_dashes = true;
            continue;
        }
        let dashed = std::mem::take(&mut after_dashes);
        // A shell that ends the vector with nothing to run counts when named
        // by its path (`cpulimit -f /bin/sh`), not by name (`apt install
        // zsh`), as the value of a shell-setting option (`chsh -s /bin/zsh`)
        // or as a file a program reads or names (`readlink -f /bin/sh`).
        let sets_shell = k > 1 && matches!(argv[k - 1].text.as_str(), "-s" | "--shell");
        let named_shell_alone = is_shell(text)
            && k + 1 == argv.len()
            && (!text.contains('/') || sets_shell || takes_files);
        let shell = is_shell(text) && !named_shell_alone;
        // A program alone runs nothing the analyser could flag but a shell.
        let operand = !text.starts_with('-')
            && program_like(text)
            && operands < OPERAND_STARTS
            && k + 1 < argv.len();
        if shell || operand || dashed {
            starts.push(k);
        }
        if !text.starts_with('-') {
            operands += 1;
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::word::plain_words as words;

    #[test]
    fn a_plain_word_has_no_candidates_by_the_full_search_either() {
        let words = [
            "test",
            "--prune",
            "s/foo/bar/g",
            "/tmp/out.txt",
            "+x",
            "a+b",
            "-rf",
            "~/.ssh",
            "$(id)",
            "x,y",
            "%s",
            "{}",
            "a\\b",
            "@file",
            "rm",
            "sh",
            "/bin/sh",
            "++sh",
        ];
        for word in words {
            assert!(super::one_plain_word(word), "{word}");
            assert!(super::every_candidate(word).is_empty(), "{word}");
        }
        for word in ["a b", "a=b", "x;y", "é", "a\tb", "'x'", ":!sh"] {
            assert!(!super::one_plain_word(word), "{word}");
        }
    }

    #[test]
    fn candidates_are_found_after_separators_and_in_literals() {
        assert_eq!(candidates("rm -rf ~"), ["rm -rf ~"]);
        assert_eq!(candidates("alias.x=!rm -rf ~"), ["rm -rf ~"]);
        assert_eq!(
            candidates("--checkpoint-action=exec=rm -rf ~"),
            ["rm -rf ~"]
        );
        assert_eq!(
            candidates(":!cat ~/.aws/credentials"),
            ["cat ~/.aws/credentials"]
        );
        assert_eq!(candidates(r#"(shell-command "rm -rf ~")"#), ["rm -rf ~"]);
        assert_eq!(candidates("| rm -rf ~ %s"), ["rm -rf ~ %s"]);
        assert!(
            candidates("src/main.rs").is_empty(),
            "one word is not a command line"
        );
        assert!(candidates("https://x.example/a b").is_empty());
        assert_eq!(
            candidates("fix: the build"),
            ["the build"],
            "a candidate, nothing more"
        );
        assert!(candidates("").is_empty());
    }

    #[test]
    fn program_like_words() {
        for word in [
            "rm",
            "/bin/sh",
            "./run.sh",
            "python3.12",
            "\"rm\"",
            ".shell",
            "x86_64-gcc",
        ] {
            assert!(program_like(word), "{word}");
        }
        for word in [
            "-rf",
            "2222",
            "deploy@prod",
            "a=b",
            "node:20",
            "https://x",
            "$X",
            "%s",
            "",
        ] {
            assert!(!program_like(word), "{word}");
        }
    }

    #[test]
    fn commands_start_at_shells_dashes_and_first_operands() {
        let at = |s: &str| command_starts(&words(s), false);
        assert_eq!(at("ssh -p 2222 deploy@prod rm -rf /etc"), [4]);
        assert_eq!(at("kubectl exec -it web-0 -- rm -rf /etc"), [1, 3, 5]);
        assert_eq!(at("start-stop-daemon --exec /bin/sh -- -c x"), [2, 4]);
        assert!(
            at("chmod 600 key").is_empty(),
            "a lone last word runs nothing"
        );
        let many = at("x a b c d e f g h i");
        assert_eq!(many.len(), OPERAND_STARTS, "bounded: {many:?}");
        assert!(
            at("x a b c d e f g h sh -c y").contains(&9),
            "a shell counts wherever it stands"
        );
        assert_eq!(
            at("cpulimit -l 100 -f /bin/sh"),
            [4],
            "a shell's path at the end"
        );
        assert_eq!(
            at("apt-get install -y zsh"),
            [1],
            "not a shell's name at the end"
        );
        assert!(
            at("chsh -s /bin/zsh").is_empty(),
            "a shell-setting option's value"
        );
        assert!(
            command_starts(&words("readlink -f /bin/sh"), true).is_empty(),
            "a file a program reads"
        );
    }
}
