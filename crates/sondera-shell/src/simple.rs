//! The syntax tree of a plain command line, made without the parser.
//!
//! Most of what agents run is a few commands of plain words joined by `|`,
//! `&&`, `||` and `;`, now and then writing to or reading from a file
//! (`cargo test`, `git status && git diff | head > out.txt`).
//! `brush-parser` reads such a line for several times what the rest of the
//! analysis costs; this reads it in one pass over its bytes and builds the
//! tree the parser builds, or gives up at the first byte that could mean
//! anything else (an expansion, a descriptor's redirection, a keyword, an
//! assignment, a comment, a newline), leaving the line to the parser. A test holds the two
//! to the same tree on every command of the corpora and the fuzz corpus.

use brush_parser::ast::{
    AndOr, AndOrList, Command, CommandPrefixOrSuffixItem, CommandSuffix, CompoundList,
    CompoundListItem, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, Pipeline, Program,
    SeparatorOperator, SimpleCommand, Word,
};

/// The tree `brush-parser` makes of `line`, when `line` is plain enough to
/// read without it; `None` otherwise.
pub(crate) fn program(line: &str) -> Option<Program> {
    let mut tokens = Tokens {
        bytes: line.as_bytes(),
        at: 0,
    };
    let mut items = Vec::new();
    loop {
        let (list, next) = and_or_list(&mut tokens)?;
        items.push(CompoundListItem(list, SeparatorOperator::Sequence));
        match next {
            Token::End => break,
            Token::Sequence => continue,
            _ => return None,
        }
    }
    Some(Program {
        complete_commands: vec![CompoundList(items)],
    })
}

/// Pipelines joined by `&&` and `||`, and the token that ended them.
fn and_or_list(tokens: &mut Tokens<'_>) -> Option<(AndOrList, Token)> {
    let (first, mut next) = pipeline(tokens)?;
    let mut additional = Vec::new();
    loop {
        let join: fn(Pipeline) -> AndOr = match next {
            Token::And => AndOr::And,
            Token::Or => AndOr::Or,
            other => return Some((AndOrList { first, additional }, other)),
        };
        let (pipeline, after) = pipeline(tokens)?;
        additional.push(join(pipeline));
        next = after;
    }
}

/// Commands joined by `|`, and the token that ended them.
fn pipeline(tokens: &mut Tokens<'_>) -> Option<(Pipeline, Token)> {
    let mut seq = Vec::new();
    loop {
        let (command, next) = simple_command(tokens)?;
        seq.push(Command::Simple(command));
        if !matches!(next, Token::Pipe) {
            let pipeline = Pipeline {
                timed: None,
                bang: false,
                seq,
            };
            return Some((pipeline, next));
        }
    }
}

/// One command's words and redirections, and the operator (or end) after
/// them.
fn simple_command(tokens: &mut Tokens<'_>) -> Option<(SimpleCommand, Token)> {
    // A line starting with a redirection has it as a prefix: the parser's.
    let Token::Word(name) = tokens.next()? else {
        return None;
    };
    let mut arguments = Vec::new();
    let next = loop {
        match tokens.next()? {
            Token::Word(word) => arguments.push(CommandPrefixOrSuffixItem::Word(word)),
            Token::Redirect(kind) => {
                let Token::Word(target) = tokens.next()? else {
                    return None;
                };
                let file = IoFileRedirectTarget::Filename(target);
                let redirect = IoRedirect::File(None, kind, file);
                arguments.push(CommandPrefixOrSuffixItem::IoRedirect(redirect));
            }
            other => break other,
        }
    };
    let command = SimpleCommand {
        prefix: None,
        word_or_name: Some(name),
        suffix: (!arguments.is_empty()).then_some(CommandSuffix(arguments)),
    };
    Some((command, next))
}

enum Token {
    Word(Word),
    Redirect(IoFileRedirectKind),
    Pipe,
    And,
    Or,
    Sequence,
    End,
}

struct Tokens<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Tokens<'_> {
    /// The next token; `None` where the line is not plain.
    fn next(&mut self) -> Option<Token> {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t')) {
            self.at += 1;
        }
        let Some(&byte) = self.bytes.get(self.at) else {
            return Some(Token::End);
        };
        let operator = |token, len| Some((token, len));
        let (token, len) = match (byte, self.bytes.get(self.at + 1)) {
            (b'|', Some(b'|')) => operator(Token::Or, 2)?,
            (b'|', Some(b'&')) => return None,
            (b'|', _) => operator(Token::Pipe, 1)?,
            (b'&', Some(b'&')) => operator(Token::And, 2)?,
            (b';', Some(b';' | b'&')) => return None,
            (b';', _) => operator(Token::Sequence, 1)?,
            (b'<' | b'>', _) => return self.redirect(),
            _ => return self.word().map(Token::Word),
        };
        self.at += len;
        // An operator is followed by a command, never by another operator,
        // in a line read here; only `;` may end it, as if it were not there.
        let rest = &self.bytes[self.at..];
        let after = rest.iter().find(|b| !matches!(b, b' ' | b'\t'));
        match (after, token) {
            (None, Token::Sequence) => Some(Token::End),
            (None | Some(b'|' | b'&' | b';'), _) => None,
            (Some(_), token) => Some(token),
        }
    }

    /// `<`, `>` or `>>` after a space: a digit before it would name a
    /// descriptor, and any other character after it another redirection.
    fn redirect(&mut self) -> Option<Token> {
        if !matches!(self.bytes.get(self.at.checked_sub(1)?), Some(b' ' | b'\t')) {
            return None;
        }
        let (kind, len) = match &self.bytes[self.at..] {
            [b'>', b'>', ..] => (IoFileRedirectKind::Append, 2),
            [b'>', ..] => (IoFileRedirectKind::Write, 1),
            _ => (IoFileRedirectKind::Read, 1),
        };
        self.at += len;
        match self.bytes.get(self.at) {
            Some(b'>' | b'<' | b'&' | b'|' | b'(') => None,
            _ => Some(Token::Redirect(kind)),
        }
    }

    /// A word of plain bytes and quoted stretches, as written.
    fn word(&mut self) -> Option<Word> {
        let start = self.at;
        while let Some(&byte) = self.bytes.get(self.at) {
            match byte {
                b' ' | b'\t' | b'|' | b'&' | b';' | b'<' | b'>' => break,
                b'\'' => self.quoted(b'\'', |_| true)?,
                b'"' => self.quoted(b'"', |b| !matches!(b, b'$' | b'`' | b'\\' | b'!'))?,
                _ if plain(byte) => self.at += 1,
                _ => return None,
            }
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).ok()?;
        if text.is_empty() || is_assignment(text) || RESERVED.contains(&text) {
            return None;
        }
        Some(Word {
            value: text.to_string(),
            loc: None,
        })
    }

    /// Past a stretch quoted by `quote`, each byte of which `allowed` accepts.
    fn quoted(&mut self, quote: u8, allowed: impl Fn(u8) -> bool) -> Option<()> {
        let body = self.bytes.get(self.at + 1..)?;
        let len = body.iter().position(|&b| b == quote)?;
        let printable = |b: &u8| (b' '..=b'~').contains(b);
        if !body[..len].iter().all(|&b| printable(&b) && allowed(b)) {
            return None;
        }
        self.at += len + 2;
        Some(())
    }
}

/// A byte that means itself in a word, wherever it stands.
fn plain(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
        || matches!(
            byte,
            b'-' | b'_'
                | b'.'
                | b'/'
                | b','
                | b':'
                | b'@'
                | b'%'
                | b'+'
                | b'='
                | b'^'
                | b'*'
                | b'?'
        )
}

/// `NAME=value`, which the parser reads as an assignment wherever it stands.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Words the parser may read as keywords; a line with one goes to it.
const RESERVED: &[&str] = &[
    "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in",
    "select", "then", "time", "until", "while",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree as the parser would print it, without source locations.
    fn without_locations(program: &Program) -> String {
        let text = format!("{program:?}");
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find("loc: ") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 5..];
            let skip = if after.starts_with("None") {
                4
            } else {
                // `Some(SourceSpan { .. })`: up to its closing parenthesis.
                let mut depth = 0;
                let mut end = 0;
                for (i, c) in after.char_indices() {
                    match c {
                        '(' | '{' => depth += 1,
                        ')' | '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            };
            out.push_str("loc: _");
            rest = &after[skip..];
        }
        out.push_str(rest);
        out
    }

    fn parsed(line: &str) -> Option<Program> {
        let options = brush_parser::ParserOptions::default();
        brush_parser::Parser::new(std::io::Cursor::new(line), &options)
            .parse_program()
            .ok()
    }

    #[test]
    fn plain_lines_get_the_parsers_tree() {
        for line in [
            "npm test",
            "ls -la",
            "cargo test --workspace && git status",
            "git log --oneline --format=%h | head -5",
            "grep -v 'deleted' x.txt | sed -e 's/foo/bar/g' > /tmp/out.txt",
            "sort < in.txt >> sorted.txt; wc -l sorted.txt",
            "make; ",
            "cd /workspace/project && git fetch origin --prune | grep -v 'deleted' | sed -e 's/foo/bar/g' > /tmp/out.txt; ls",
            "echo \"hello world\" ; ls",
            "a || b && c | d",
            "  ls\t-l  ",
            "rm -rf build/* dist/?",
        ] {
            let fast = program(line).unwrap_or_else(|| panic!("not read: {line}"));
            let slow = parsed(line).unwrap();
            assert_eq!(without_locations(&fast), without_locations(&slow), "{line}");
        }
    }

    #[test]
    fn anything_else_is_left_to_the_parser() {
        for line in [
            "",
            "echo $HOME",
            "X=1 make",
            "export A=b",
            "env A=b c",
            "> out ls",
            "ls 2> err",
            "ls >out2>x",
            "ls >& out",
            "ls >| out",
            "ls <> f",
            "cat << EOF",
            "cat <<< word",
            "ls > >(tee x)",
            "ls >",
            "ls > ; x",
            "a &",
            "a |& b",
            "; a",
            "a ; ;",
            "a && && b",
            "a\nb",
            "if true; then ls; fi",
            "for x in a; do echo x; done",
            "echo `id`",
            "echo \"$(id)\"",
            "echo 'unterminated",
            "ls ~",
            "echo a # comment",
            "! false",
            "{ ls; }",
            "(ls)",
            "echo a\\ b",
            "echo \"a\\\"b\"",
            "time ls",
            "ls *.{rs,toml}",
            "echo héllo",
        ] {
            assert!(program(line).is_none(), "read: {line}");
        }
    }

    /// Every string of the corpora and every input of the shell fuzz
    /// corpus that this reads, the parser reads to the same tree.
    #[test]
    fn the_corpora_get_the_parsers_tree() {
        fn strings_in(value: &serde_json::Value, out: &mut Vec<String>) {
            match value {
                serde_json::Value::String(s) => out.push(s.clone()),
                serde_json::Value::Array(items) => items.iter().for_each(|v| strings_in(v, out)),
                serde_json::Value::Object(members) => {
                    members.values().for_each(|v| strings_in(v, out))
                }
                _ => {}
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut lines = Vec::new();
        for entry in std::fs::read_dir(root.join("tests/corpus")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                for line in std::fs::read_to_string(&path).unwrap().lines() {
                    if let Ok(value) = serde_json::from_str(line) {
                        strings_in(&value, &mut lines);
                    }
                }
            }
        }
        for entry in std::fs::read_dir(root.join("fuzz/corpus/shell")).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            lines.push(String::from_utf8_lossy(&bytes).into_owned());
        }
        let mut read = 0;
        for line in &lines {
            let Some(fast) = program(line) else {
                continue;
            };
            let slow = parsed(line).unwrap_or_else(|| panic!("the parser refuses `{line}`"));
            assert_eq!(without_locations(&fast), without_locations(&slow), "{line}");
            read += 1;
        }
        assert!(read > 1_000, "only {read} of {} lines read", lines.len());
    }
}
