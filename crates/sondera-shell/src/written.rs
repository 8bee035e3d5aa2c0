//! What a command prints and writes with text it spells out, and the
//! commands after it that run what it wrote.
//!
//! `cat > x.sh <<EOF ... EOF; bash x.sh` and `echo 'DROP TABLE t;' > q.sql;
//! psql -f q.sql` run a script written a moment before, whose text is in
//! the command itself. The walk remembers what each file was given and,
//! when a later simple command runs that file (a shell or `source` given
//! it, an interpreter given it as its script, the file run by its path, a
//! database client reading it), the text is analysed as what runs.

use sondera_catalogue::Role;

use crate::interpreters::interpreter;
use crate::types::{Invocation, Stdin};
use crate::word::{self, Word};

/// Most files remembered in one command; the oldest is forgotten first.
const MAX_FILES: usize = 16;

/// The files written so far in a command with text it spells out.
#[derive(Debug, Default)]
pub(super) struct WrittenFiles {
    /// Each file's path as written (`./` dropped) and its text.
    files: Vec<(String, String)>,
}

/// How a file the command wrote is run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Runner {
    /// A shell runs it (`bash x.sh`, `source x.sh`, `./x.sh`).
    Shell,
    /// This interpreter runs it as code (`python3 x.py`, a `#!` line).
    Code(String),
    /// A database client reads its statements (`psql -f q.sql`, `< q.sql`).
    Statements,
    /// It is run by its path (`./x.sh`): its `#!` line says by what.
    Itself,
}

impl WrittenFiles {
    /// Remembers what `i` writes: the text when the command spells it
    /// out; a file written with text it does not is forgotten.
    pub(super) fn record(&mut self, i: &Invocation) {
        if i.writes.is_empty() && i.program != "tee" {
            return;
        }
        let known = written_content(i);
        if known.is_none() && self.files.is_empty() {
            return;
        }
        let content = known.as_ref().map(|(_, text)| text);
        for target in &i.writes {
            let key = key(&target.text);
            self.files.retain(|(path, _)| *path != key);
            let Some(text) = content.filter(|_| !target.dynamic) else {
                continue;
            };
            if self.files.len() == MAX_FILES {
                self.files.remove(0);
            }
            self.files.push((key, text.clone()));
        }
        if let Some((targets, text)) = known.filter(|_| i.program == "tee") {
            for target in targets.into_iter().filter(|t| !t.dynamic) {
                self.files.retain(|(path, _)| *path != key(&target.text));
                self.files.push((key(&target.text), text.clone()));
            }
            self.files
                .drain(..self.files.len().saturating_sub(MAX_FILES));
        }
    }

    /// The file of those written before that `i` runs, how, and its text.
    pub(super) fn run_by(&self, i: &Invocation) -> Option<(Runner, &str)> {
        if self.files.is_empty() {
            return None;
        }
        let (runner, path) = script_of(i)?;
        let text = self.text(path)?;
        let runner = match runner {
            Runner::Itself => interpreter_line(text),
            runner => runner,
        };
        Some((runner, text))
    }

    fn text(&self, path: &str) -> Option<&str> {
        let key = key(path);
        self.files
            .iter()
            .rev()
            .find(|(p, _)| *p == key)
            .map(|(_, text)| text.as_str())
    }
}

/// The file `i` runs as its script, as written, and how: a shell or
/// `source` given it, an interpreter given it as its script (not with
/// `-c` or `-m`), the file run by its path, a database client reading its
/// statements from it.
pub(super) fn script_of(i: &Invocation) -> Option<(Runner, &str)> {
    if i.path.contains('/') {
        return Some((Runner::Itself, i.path.as_str()));
    }
    let program = i.program.as_str();
    let shell = Role::Shell.includes(program) || matches!(program, "source" | ".");
    if shell || interpreter(program).is_some() {
        let runs_other_code = i.args.iter().any(|a| {
            a.starts_with('-') && !a.starts_with("--") && (a.contains('c') || a.contains('m'))
        });
        let script = i.args.iter().find(|a| !a.starts_with('-') && *a != "-")?;
        let runner = if shell {
            Runner::Shell
        } else {
            Runner::Code(program.to_string())
        };
        return (!runs_other_code).then_some((runner, script.as_str()));
    }
    if !Role::DatabaseClient.includes(program) {
        return None;
    }
    let named = i
        .args
        .iter()
        .enumerate()
        .find_map(|(n, a)| match a.as_str() {
            "-f" | "--file" => i.args.get(n + 1).map(String::as_str),
            _ => a.strip_prefix("--file="),
        });
    let from_input = match &i.stdin {
        Stdin::File(path) => Some(path.as_str()),
        _ => None,
    };
    named.or(from_input).map(|path| (Runner::Statements, path))
}

/// A path as compared within one command: `./x.sh` is `x.sh`.
fn key(path: &str) -> String {
    path.trim_start_matches("./").to_string()
}

/// What runs a script run by its path: the interpreter its `#!` line
/// names, a shell without one.
fn interpreter_line(text: &str) -> Runner {
    let Some(line) = text.lines().next().and_then(|l| l.strip_prefix("#!")) else {
        return Runner::Shell;
    };
    let mut words = line.split_whitespace();
    let first = words.next().unwrap_or("");
    let name = match first.rsplit('/').next().unwrap_or(first) {
        "env" => words.find(|w| !w.starts_with('-')).unwrap_or(""),
        name => name,
    };
    if interpreter(name).is_some() && !Role::Shell.includes(name) {
        Runner::Code(name.to_string())
    } else {
        Runner::Shell
    }
}

/// The files `i` writes with text it spells out (`cat > f <<EOF`, `echo
/// ... >> f`, `tee f <<< ...`), and that text.
pub(super) fn written_content(i: &Invocation) -> Option<(Vec<&Word>, String)> {
    let targets: Vec<&Word> = match i.program.as_str() {
        "tee" => i.operand_words().chain(&i.writes).collect(),
        _ => i.writes.iter().collect(),
    };
    if targets.is_empty() {
        return None;
    }
    let content = match (&i.stdin, i.program.as_str()) {
        (Stdin::Text(text), "cat" | "tee") => Some(text.clone()),
        _ => printed_text(&[i]),
    }?;
    Some((targets, content))
}

/// The files `i` edits in place (`sed -i`, `perl -pi -e`) and the text its
/// script puts in them: the replacements of its `s` commands and the text
/// of sed's `a`, `i` and `c`. Matched patterns are not written, and a
/// script read from a file is not known.
pub(super) fn edited_content(i: &Invocation) -> Option<(Vec<&Word>, String)> {
    let perl = match i.program.as_str() {
        "perl" => true,
        "sed" => false,
        _ => return None,
    };
    let in_place = i.args.iter().any(|arg| {
        let short = arg.starts_with('-') && !arg.starts_with("--");
        arg.starts_with("--in-place")
            || (short && (arg.starts_with("-i") || (perl && arg.contains('i'))))
    });
    if !in_place {
        return None;
    }
    let (mut scripts, mut files) = (Vec::new(), Vec::new());
    let mut words = i.arg_words.iter();
    while let Some(word) = words.next() {
        let arg = word.text.as_str();
        let short = arg.starts_with('-') && !arg.starts_with("--");
        let expression =
            matches!(arg, "-e" | "--expression") || (perl && short && arg.ends_with('e'));
        if expression {
            scripts.extend(words.next().map(|w| w.text.as_str()));
        } else if let Some(script) = arg.strip_prefix("--expression=") {
            scripts.push(script);
        } else if matches!(arg, "-f" | "--file") || arg.starts_with("--file=") {
            return None;
        } else if !arg.starts_with('-') {
            files.push(word);
        }
    }
    if scripts.is_empty() && !files.is_empty() {
        scripts.push(files.remove(0).text.as_str());
    }
    let text: Vec<String> = scripts.iter().flat_map(|s| inserted_text(s)).collect();
    (!files.is_empty() && !text.is_empty()).then(|| (files, text.join("\n")))
}

/// The text a sed or perl script writes: each `s` command's replacement
/// (escapes of its delimiter undone, back-references dropped), and sed's
/// `a`, `i` and `c` text.
fn inserted_text(script: &str) -> Vec<String> {
    let chars: Vec<char> = script.chars().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        at = skip_address(&chars, at);
        match chars.get(at) {
            Some('a' | 'i' | 'c') if !chars.get(at + 1).is_some_and(|c| c.is_alphanumeric()) => {
                let (text, end) = appended(&chars, at + 1);
                found.push(text);
                at = end;
            }
            Some('s')
                if chars
                    .get(at + 1)
                    .is_some_and(|c| !c.is_alphanumeric() && !c.is_whitespace()) =>
            {
                let (text, end) = replacement(&chars, at + 1);
                found.extend(text);
                at = end;
            }
            Some(_) => {
                at = chars[at..]
                    .iter()
                    .position(|c| matches!(c, ';' | '\n'))
                    .map_or(chars.len(), |p| at + p + 1)
            }
            None => break,
        }
    }
    found
}

/// Past a sed command's address (`1`, `$`, `/re/`, `1,5`, `/a/,/b/!`)
/// and the blanks and separators before it.
fn skip_address(chars: &[char], mut at: usize) -> usize {
    loop {
        match chars.get(at) {
            Some(c)
                if c.is_whitespace()
                    || matches!(c, ';' | '{' | '}' | ',' | '!' | '$' | '~' | '+')
                    || c.is_ascii_digit() =>
            {
                at += 1
            }
            Some('/') => at = delimited(chars, at + 1, '/').1,
            _ => return at,
        }
    }
}

/// The text of sed's `a`, `i` or `c` from just after the letter: `a\`
/// and a new line, `a\text` or `a text`, to the end of the line.
fn appended(chars: &[char], mut at: usize) -> (String, usize) {
    while chars.get(at).is_some_and(|c| *c == ' ' || *c == '\t') {
        at += 1;
    }
    // A backslash opens the text, keeping the blanks after it.
    if chars.get(at) == Some(&'\\') {
        at += 1;
        if chars.get(at) == Some(&'\n') {
            at += 1;
        }
    }
    let end = chars[at..]
        .iter()
        .position(|c| *c == '\n')
        .map_or(chars.len(), |p| at + p);
    (chars[at..end].iter().collect(), end + 1)
}

/// An `s` command's replacement, from its delimiter on, and where the
/// command ends.
fn replacement(chars: &[char], at: usize) -> (Option<String>, usize) {
    let delimiter = chars[at];
    let close = match delimiter {
        '{' => '}',
        '(' => ')',
        '[' => ']',
        '<' => '>',
        other => other,
    };
    let (_, after_pattern) = delimited(chars, at + 1, close);
    // Perl's bracketed form opens the replacement with its own bracket.
    let start = if close != delimiter {
        chars[after_pattern..]
            .iter()
            .position(|c| *c == delimiter)
            .map_or(chars.len(), |p| after_pattern + p + 1)
    } else {
        after_pattern
    };
    let (text, end) = delimited(chars, start, close);
    let flags_end = chars[end.min(chars.len())..]
        .iter()
        .position(|c| matches!(c, ';' | '\n' | '}'))
        .map_or(chars.len(), |p| end + p);
    (Some(text), flags_end)
}

/// The text up to an unescaped `close`, with `\close` and `\n` undone and
/// back-references (`\1`) dropped, and the position after `close`.
fn delimited(chars: &[char], mut at: usize, close: char) -> (String, usize) {
    let mut text = String::new();
    while let Some(&c) = chars.get(at) {
        at += 1;
        match c {
            '\\' => match chars.get(at) {
                Some('n') => {
                    text.push('\n');
                    at += 1;
                }
                Some(d) if d.is_ascii_digit() => at += 1,
                Some(&other) => {
                    text.push(other);
                    at += 1;
                }
                None => {}
            },
            c if c == close => return (text, at),
            c => text.push(c),
        }
    }
    (text, at)
}

/// The text a stage prints when it is a lone `echo` or `printf` of static
/// words, or a `cat` of a here-document.
pub(super) fn printed_text(stage: &[&Invocation]) -> Option<String> {
    match stage {
        [only] if only.program == "cat" && only.args.is_empty() => match &only.stdin {
            Stdin::Text(text) => Some(text.clone()),
            _ => None,
        },
        [only]
            if matches!(only.program.as_str(), "echo" | "printf")
                && !only.arg_words.iter().any(|w| w.dynamic) =>
        {
            Some(printed_words(&only.program, &only.args))
        }
        _ => None,
    }
}

/// What `echo` or `printf` prints of static words: `printf` interprets
/// the escapes of its format (`\x72`, `\162`, `\n`) and fills its
/// conversions with the arguments, in order (any left over follow); `echo`
/// interprets escapes with `-e`.
fn printed_words(program: &str, args: &[String]) -> String {
    if program == "printf" {
        let Some((format, rest)) = args.split_first() else {
            return String::new();
        };
        let mut rest = rest.iter();
        let decoded = word::ansi_c(format);
        let mut out = String::with_capacity(decoded.len());
        let mut chars = decoded.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some(_) => out.push_str(rest.next().map_or("", String::as_str)),
                None => out.push('%'),
            }
        }
        for leftover in rest {
            out.push(' ');
            out.push_str(leftover);
        }
        return out;
    }
    let flags: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .take_while(|a| matches!(*a, "-n" | "-e" | "-E" | "-ne" | "-en"))
        .collect();
    let interpret = flags.iter().any(|f| f.contains('e'));
    args[flags.len()..]
        .iter()
        .map(|a| {
            if interpret {
                word::ansi_c(a)
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TEST_CONTEXT;

    fn run_after(command: &str) -> Option<(Runner, String)> {
        let analysis = crate::analyze(command, &TEST_CONTEXT);
        let mut files = WrittenFiles::default();
        let mut found = None;
        for i in analysis.invocations.iter().filter(|i| i.depth == 0) {
            found = files.run_by(i).map(|(r, t)| (r, t.to_string()));
            files.record(i);
        }
        found
    }

    #[test]
    fn files_written_then_run_are_read() {
        let shell = |t: &str| Some((Runner::Shell, t.to_string()));
        assert_eq!(
            run_after("echo 'rm -rf ~' > x.sh; bash x.sh"),
            shell("rm -rf ~")
        );
        assert_eq!(run_after("echo 'ls' > x.sh && ./x.sh"), shell("ls"));
        assert_eq!(run_after("echo 'ls' > x.sh; source ./x.sh"), shell("ls"));
        assert_eq!(
            run_after("printf '#!/usr/bin/env python3\\nprint(1)\\n' > t && ./t"),
            Some((
                Runner::Code("python3".into()),
                "#!/usr/bin/env python3\nprint(1)\n".into()
            ))
        );
        assert_eq!(
            run_after("echo 'DROP TABLE t;' > q.sql; psql -f q.sql"),
            Some((Runner::Statements, "DROP TABLE t;".into()))
        );
        assert_eq!(
            run_after("echo 'DROP TABLE t;' > q.sql; mysql db < q.sql"),
            Some((Runner::Statements, "DROP TABLE t;".into()))
        );
    }

    fn edit(command: &str) -> Option<(Vec<String>, String)> {
        let analysis = crate::analyze(command, &TEST_CONTEXT);
        let i = analysis.invocations.first()?;
        edited_content(i)
            .map(|(files, text)| (files.iter().map(|w| w.text.clone()).collect(), text))
    }

    #[test]
    fn in_place_edits_write_their_replacements_and_added_lines() {
        let cases = [
            ("sed -i 's/a/b c/' f", "b c"),
            ("sed -i.bak -e 's#x#y/z#g' f", "y/z"),
            ("sed -i '1a export X=1' f", "export X=1"),
            ("sed -i '/^Host p/a \\  User x' f", "  User x"),
            ("sed -i '$a\\\tmake all' f", "\tmake all"),
            ("sed -i 's/^\\(a\\)/\\1- run: x/' f", "- run: x"),
            ("perl -pi -e 's/a/b\\/c/' f", "b/c"),
            ("perl -i -pe 's{a}{b}g' f", "b"),
        ];
        for (command, text) in cases {
            assert_eq!(
                edit(command),
                Some((vec!["f".to_string()], text.replace("\\t", "\t"))),
                "{command}"
            );
        }
        for command in [
            "sed 's/a/b/' f",
            "sed -n '1p' f",
            "sed -i -f script.sed f",
            "perl -pe 's/a/b/' f",
            "sed -i 'd' f",
        ] {
            assert_eq!(edit(command), None, "{command}");
        }
    }

    #[test]
    fn files_not_written_with_known_text_are_not() {
        assert_eq!(run_after("bash x.sh"), None);
        assert_eq!(
            run_after("echo 'ls' > x.sh; echo \"$X\" > x.sh; bash x.sh"),
            None
        );
        assert_eq!(run_after("echo 'ls' > x.sh; bash -c 'x.sh'"), None);
        assert_eq!(run_after("echo 'ls' > x.sh; x.sh"), None);
    }
}
