//! The commands inline code starts when it spells them out.
//!
//! `subprocess.run(["npm", "test"])`, `execSync('git status')`,
//! `system("make", "test")` and expect's `spawn npm test` start a command
//! the code states in full: what runs is that command, and the shell
//! analyser judges it like any other. A call that starts a process with a
//! value the code computes (`os.system(sys.argv[1])`, an f-string, a
//! variable) leaves what runs unknown, and the code stays risky.
//!
//! Nothing is parsed as a language: a call is its name followed by `(` (or,
//! for the languages that call without parentheses, by a blank), and its
//! argument is accepted only when it is a quoted literal or a list of them.

use crate::embedded::literal_spans;

/// Calls that start a process, written with parentheses.
const CALLS: &[&str] = &[
    "system",
    "run",
    "call",
    "check_call",
    "check_output",
    "popen",
    "getoutput",
    "getstatusoutput",
    "execsync",
    "execfilesync",
    "execfile",
    "spawn",
    "spawnsync",
];
/// Calls that start a process written without parentheses (Perl, Ruby,
/// Tcl and expect).
const BARE_CALLS: &[&str] = &["system", "spawn"];
/// Arguments after the command that change which program runs or what it
/// sees, so the command is no longer what the code spells out.
const REDIRECTING_OPTIONS: &[&str] = &["executable", "env", "preexec", "argv0"];

/// The commands `code` starts, each as shell text, when every call that
/// starts a process spells its command out; `None` when some call takes a
/// value the code computes or no such call is found.
pub(crate) fn spelled_out(code: &str) -> Option<Vec<String>> {
    let lower = code.to_ascii_lowercase();
    let literals = literal_spans(code);
    let inside_literal = |at: usize| literals.iter().any(|&(s, e)| s <= at && at < e);
    let mut commands = Vec::new();
    for (at, name) in call_sites(&lower) {
        if inside_literal(at) {
            continue;
        }
        let rest = &code[at + name.len()..];
        let argv = match rest.strip_prefix('(') {
            Some(args) => parenthesised(args)?,
            None if BARE_CALLS.contains(&name) => bare(rest)?,
            None => continue,
        };
        commands.push(argv);
    }
    (!commands.is_empty()).then_some(commands)
}

/// Where each call name stands as a whole identifier, in order.
fn call_sites(lower: &str) -> Vec<(usize, &'static str)> {
    let identifier = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut sites: Vec<(usize, &'static str)> = CALLS
        .iter()
        .flat_map(|name| lower.match_indices(name).map(move |(at, _)| (at, *name)))
        .filter(|&(at, name)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + name.len()..].chars().next();
            !before.is_some_and(identifier)
                && matches!(after, Some('(' | ' ' | '\t'))
                && !matches!(before, Some('$' | '-'))
        })
        .collect();
    sites.sort_unstable();
    sites
}

/// The command of a call's parenthesised arguments: literals and lists of
/// literals up to the first argument that is something else, which may
/// only be an option that does not change the command.
fn parenthesised(args: &str) -> Option<String> {
    let (argv, rest) = literal_arguments(args)?;
    let rest = rest.trim_start();
    let end = rest.find([';', '\n']).unwrap_or(rest.len());
    let options = rest[..end].to_ascii_lowercase();
    let ends = rest.starts_with(')') || rest.starts_with(',');
    (ends && !REDIRECTING_OPTIONS.iter().any(|o| options.contains(o))).then(|| join(&argv))
}

/// The command of a call without parentheses: `system "make", "test"`
/// (Perl, Ruby) or `spawn npm test` (Tcl).
fn bare(rest: &str) -> Option<String> {
    let rest = rest.trim_start();
    if rest.starts_with(['\'', '"']) {
        let (argv, after) = literal_arguments(rest)?;
        let after = after.trim_start();
        return (after.is_empty() || after.starts_with([';', '\n', '}'])).then(|| join(&argv));
    }
    let end = rest.find([';', '\n', ']', '}']).unwrap_or(rest.len());
    let words = rest[..end].trim();
    let computed = words.is_empty() || words.contains(['$', '[', '`']);
    (!computed).then(|| words.to_string())
}

/// Leading arguments that are quoted literals or bracketed lists of them,
/// separated by commas, and the text after the last one.
fn literal_arguments(text: &str) -> Option<(Vec<String>, &str)> {
    let mut argv = Vec::new();
    let mut rest = text.trim_start();
    loop {
        rest = match rest.strip_prefix('[') {
            Some(list) => {
                let (items, after) = literal_arguments(list)?;
                argv.extend(items);
                after.trim_start().strip_prefix(']')?
            }
            None => {
                let (literal, after) = quoted(rest)?;
                argv.push(literal);
                after
            }
        };
        let after = rest.trim_start();
        match after.strip_prefix(',') {
            Some(next) if next.trim_start().starts_with(['\'', '"', '[']) => {
                rest = next.trim_start()
            }
            _ => return Some((argv, rest)),
        }
    }
}

/// The quoted literal `text` starts with and the text after it; `None`
/// when it does not start with one or the literal interpolates.
fn quoted(text: &str) -> Option<(String, &str)> {
    let quote = text.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let mut escaped = false;
    for (at, c) in text.char_indices().skip(1) {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote {
            let literal = &text[1..at];
            let interpolates = literal.contains("#{") || literal.contains("${");
            return (!interpolates).then(|| (literal.to_string(), &text[at + 1..]));
        }
    }
    None
}

/// An argument vector as shell text (a single element is already one).
fn join(argv: &[String]) -> String {
    if argv.len() == 1 {
        return argv[0].clone();
    }
    argv.iter()
        .map(|a| {
            if a.is_empty()
                || a.contains(|c: char| !c.is_ascii_alphanumeric() && !"-_./=:@%+,".contains(c))
            {
                format!("'{}'", a.replace('\'', r"'\''"))
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

    #[test]
    fn commands_spelled_out_are_read() {
        for (code, command) in [
            (
                r#"import subprocess; subprocess.run(["npm", "test"], check=True)"#,
                "npm test",
            ),
            (
                "require('child_process').execSync('git status', {stdio: 'inherit'})",
                "git status",
            ),
            (r#"system("make", "test")"#, "make test"),
            ("spawn npm test; expect eof", "npm test"),
            (r#"system "bundle exec rspec""#, "bundle exec rspec"),
            (
                "spawnSync('npm', ['run', 'build'], {stdio: 'inherit'})",
                "npm run build",
            ),
            (
                r#"subprocess.run(["rm", "-rf", "/home/dev"])"#,
                "rm -rf /home/dev",
            ),
            (r#"os.system("echo 'a b'")"#, "echo 'a b'"),
        ] {
            assert_eq!(spelled_out(code), Some(vec![command.to_string()]), "{code}");
        }
    }

    #[test]
    fn computed_commands_are_not() {
        for code in [
            "import os, sys; os.system(sys.argv[1])",
            r#"os.system("curl " + url)"#,
            r#"subprocess.run(f"rm {path}", shell=True)"#,
            r#"subprocess.run(["ls"], executable="/tmp/x")"#,
            r#"system("echo #{ENV['X']}")"#,
            "spawn $cmd",
            "import subprocess",
            r#"subprocess.run(["sh", "-c", x])"#,
        ] {
            assert_eq!(spelled_out(code), None, "{code}");
        }
    }
}
