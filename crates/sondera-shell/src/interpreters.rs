//! Interpreters run from the command line and the code they are handed
//! (`python3 -c`, `perl -e`, `node -e`, an awk program, a here-document
//! fed to `ruby`), and the shell commands that code carries: its string
//! literals that read as commands, and the code itself read as a command
//! line, so `os.system("rm -rf ~")` is walked as the `rm -rf ~` it runs.
//!
//! This module only finds code; what the code does is read from it by the
//! facts layer (the `code` module).

use std::sync::LazyLock;

use crate::types::{Invocation, Stdin};
use sondera_catalogue::names::NameIndex;

/// A language whose code can come on the command line.
#[derive(Debug)]
pub(super) struct Interpreter {
    pub name: &'static str,
    /// Options whose value is code (`-c`, `-e`, `--eval`).
    code_options: &'static [&'static str],
    /// Short options that take code when they end an option cluster
    /// (`perl -ne CODE`, `ruby -pe CODE`).
    cluster_code_letter: Option<char>,
    /// The first operand is the program unless a file is named (`awk`).
    program_operand: bool,
    /// A subcommand whose operand is code (`deno eval CODE`).
    eval_subcommand: Option<&'static str>,
    /// With no script named, the interpreter runs what it reads on stdin.
    reads_stdin: bool,
}

const fn lang(
    name: &'static str,
    code_options: &'static [&'static str],
    reads_stdin: bool,
) -> Interpreter {
    Interpreter {
        name,
        code_options,
        cluster_code_letter: None,
        program_operand: false,
        eval_subcommand: None,
        reads_stdin,
    }
}

/// Interpreters by the name they are run as, without version suffixes
/// (`python3.12` is `python`, `lua5.4` is `lua`).
const INTERPRETERS: &[Interpreter] = &[
    lang("python", &["-c"], true),
    lang("pypy", &["-c"], true),
    Interpreter {
        cluster_code_letter: Some('e'),
        ..lang("perl", &["-e", "-E"], true)
    },
    Interpreter {
        cluster_code_letter: Some('e'),
        ..lang("ruby", &["-e"], true)
    },
    lang("node", &["-e", "--eval", "-p", "--print"], true),
    lang("nodejs", &["-e", "--eval", "-p", "--print"], true),
    Interpreter {
        eval_subcommand: Some("eval"),
        ..lang("deno", &[], false)
    },
    Interpreter {
        eval_subcommand: Some("eval"),
        ..lang("bun", &["-e", "--eval", "-p", "--print"], false)
    },
    lang("php", &["-r"], true),
    lang("lua", &["-e"], true),
    lang("luajit", &["-e"], true),
    Interpreter {
        program_operand: true,
        ..lang("awk", &[], false)
    },
    Interpreter {
        program_operand: true,
        ..lang("gawk", &[], false)
    },
    Interpreter {
        program_operand: true,
        ..lang("mawk", &[], false)
    },
    Interpreter {
        program_operand: true,
        ..lang("nawk", &[], false)
    },
    Interpreter {
        program_operand: true,
        ..lang("sed", &["-e", "--expression"], false)
    },
    lang("tclsh", &[], true),
    lang("wish", &[], true),
    lang("expect", &["-c"], true),
    lang("rscript", &["-e"], false),
    lang("r", &["-e"], true),
    lang("julia", &["-e", "-E", "--eval", "--print"], true),
    lang(
        "pwsh",
        &["-c", "-command", "-e", "-ec", "-encodedcommand"],
        true,
    ),
    lang(
        "powershell",
        &["-c", "-command", "-e", "-ec", "-encodedcommand"],
        true,
    ),
    lang("osascript", &["-e"], true),
    lang("elixir", &["-e", "--eval"], false),
    lang("erl", &["-eval"], false),
    lang("groovy", &["-e"], false),
    lang("scala", &["-e"], false),
    lang("kotlin", &["-e"], false),
    lang("clojure", &["-e"], false),
    lang("clj", &["-e"], false),
    lang("guile", &["-c"], false),
    lang("racket", &["-e"], false),
    lang("sbcl", &["--eval"], false),
    lang("jshell", &[], true),
];

/// The interpreter `program` is, if it is one.
pub(super) fn interpreter(program: &str) -> Option<&'static Interpreter> {
    let program = program.strip_suffix(".exe").unwrap_or(program);
    let bare = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    if !NAMES.may_hold(bare) {
        return None;
    }
    INTERPRETERS
        .iter()
        .find(|i| i.name.eq_ignore_ascii_case(bare))
}

/// The interpreters' names, indexed: most programs are ruled out by one
/// lookup, before comparing any names.
static NAMES: NameIndex = {
    let mut index = NameIndex::EMPTY;
    let mut at = 0;
    while at < INTERPRETERS.len() {
        index = index.with(INTERPRETERS[at].name);
        at += 1;
    }
    index
};

impl Interpreter {
    /// Whether this is PowerShell's `-EncodedCommand`, whose code is base64.
    fn encoded(&self, option: &str) -> bool {
        matches!(self.name, "pwsh" | "powershell")
            && matches!(
                option.to_ascii_lowercase().as_str(),
                "-e" | "-ec" | "-encodedcommand"
            )
    }

    fn takes_code(&self, option: &str) -> bool {
        let lower = option.to_ascii_lowercase();
        self.code_options.contains(&lower.as_str())
            || self.cluster_code_letter.is_some_and(|letter| {
                option.len() > 2
                    && option.starts_with('-')
                    && !option.starts_with("--")
                    && option.ends_with(letter)
                    && option[1..].chars().all(|c| c.is_ascii_alphabetic())
            })
    }
}

/// Code an invocation runs, and how it came.
#[derive(Debug)]
pub(super) enum InlineCode {
    Text(String),
    /// Code in a form the analyser does not read (PowerShell's base64
    /// `-EncodedCommand`): it runs unseen, so it counts as risky.
    Unread(String),
}

/// The inline code of `i`, if its program is an interpreter given some:
/// an option's value, the program operand of awk, the operand of an `eval`
/// subcommand, or a script on standard input (a here-document, a
/// here-string, or text an earlier stage printed, given as `printed`) when
/// no script file is named.
pub(super) fn inline_code(i: &Invocation, printed: Option<&str>) -> Option<InlineCode> {
    let lang = interpreter(&i.program)?;
    let args = &i.args;
    for (n, arg) in args.iter().enumerate() {
        let (option, attached) = match arg.split_once('=') {
            Some((option, value)) if option.starts_with("--") => (option, Some(value)),
            _ => (arg.as_str(), None),
        };
        if arg.starts_with('-') && lang.takes_code(option) {
            let code = attached
                .map(str::to_string)
                .or_else(|| args.get(n + 1).cloned())?;
            // Code only known when it runs (`python3 -c "$(curl ...)"`).
            let built_at_run_time = attached.is_none()
                && i.arg_words
                    .get(n + 1)
                    .is_some_and(|w| w.dynamic && !w.home_relative);
            return Some(if lang.encoded(option) {
                InlineCode::Unread(format!("{} -EncodedCommand", i.program))
            } else if built_at_run_time {
                InlineCode::Unread(format!("{} {option} {code}", i.program))
            } else {
                InlineCode::Text(code)
            });
        }
    }
    if lang.program_operand && !args.iter().any(|a| a == "-f" || a.starts_with("--file")) {
        // `-F SEP`, `-v NAME=VALUE` and `-W OPT` take the next word.
        let valued = |n: usize| n > 0 && matches!(args[n - 1].as_str(), "-F" | "-v" | "-W");
        return (0..args.len())
            .find(|&n| !args[n].starts_with('-') && !valued(n))
            .map(|n| InlineCode::Text(args[n].clone()));
    }
    let mut operands = args.iter().filter(|a| !a.starts_with('-'));
    if let Some(sub) = lang.eval_subcommand
        && args.first().is_some_and(|a| a == sub)
    {
        return args.get(1).cloned().map(InlineCode::Text);
    }
    let names_script = operands.any(|a| a != "-");
    if !lang.reads_stdin || names_script {
        return None;
    }
    match (&i.stdin, printed) {
        (Stdin::Text(body), _) => Some(InlineCode::Text(body.clone())),
        (Stdin::Pipe(_), Some(text)) => Some(InlineCode::Text(text.to_string())),
        _ => None,
    }
}

/// Whether `i` is an interpreter that runs a script file or stream rather
/// than code given inline (`python3 script.py`, `python3 <(curl ...)`).
pub(super) fn runs_script(i: &Invocation) -> bool {
    interpreter(&i.program).is_some_and(|lang| {
        !i.args
            .iter()
            .any(|a| a.starts_with('-') && lang.takes_code(a))
    })
}

/// Whether `i` is an interpreter that runs a script read from standard input
/// (no inline code, no script file named).
pub(super) fn runs_stdin_script(i: &Invocation) -> bool {
    let Some(lang) = interpreter(&i.program) else {
        return false;
    };
    let explicit_stdin = i.args.iter().any(|a| a == "-");
    let inline = i
        .args
        .iter()
        .any(|a| a.starts_with('-') && lang.takes_code(a));
    let names_script = i.args.iter().any(|a| !a.starts_with('-'));
    explicit_stdin || (lang.reads_stdin && !inline && !names_script)
}

/// Inline code the walk found, with who runs it and where.
#[derive(Debug)]
pub(super) struct InlineRun {
    /// Where it was found, as a prefix of evidence (the command an
    /// argument of which carried it), empty at top level.
    pub origin: String,
    pub program: String,
    pub code: InlineCode,
}

/// The texts of `code`, run by `program`, to analyse as shell commands:
/// the commands a sed script runs; for other languages the string literals
/// that read as commands, then the code itself.
pub(super) fn commands_in_code(program: &str, code: &str) -> Vec<String> {
    if program == "sed" {
        return sed_commands(code);
    }
    let mut commands: Vec<String> = string_literals(code)
        .into_iter()
        .filter(|l| l.contains(char::is_whitespace) || crate::embedded::is_shell(l))
        .collect();
    commands.extend(crate::spawns::spelled_out(code).unwrap_or_default());
    commands.push(code.to_string());
    commands
}

/// GNU sed's `e COMMAND`, which runs COMMAND.
static SED_E_COMMAND: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?m)(?:^|[0-9$;{}/!])\s*e\s+([^;\n}]+)")
        .expect("sed command pattern compiles")
});

/// The commands a sed script runs with `e COMMAND`.
fn sed_commands(script: &str) -> Vec<String> {
    if !script.contains('e') {
        return Vec::new();
    }
    SED_E_COMMAND
        .captures_iter(script)
        .map(|found| found[1].trim().to_string())
        .collect()
}

/// Whether a sed script runs commands: GNU sed does through `e COMMAND`
/// and through the `e` flag of `s///e`. Its patterns are data, not calls.
pub(super) fn sed_runs_commands(script: &str) -> bool {
    script.contains('e') && (substitutions_execute(script) || SED_E_COMMAND.is_match(script))
}

/// Whether some `s` command of a sed script carries the `e` flag.
fn substitutions_execute(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut at = 0;
    while at + 1 < chars.len() {
        let starts = chars[at] == 's'
            && (at == 0 || !chars[at - 1].is_alphanumeric())
            && !chars[at + 1].is_alphanumeric()
            && !chars[at + 1].is_whitespace();
        if !starts {
            at += 1;
            continue;
        }
        let delimiter = chars[at + 1];
        let mut parts = 0;
        let mut i = at + 2;
        while i < chars.len() && parts < 2 {
            match chars[i] {
                '\\' => i += 1,
                c if c == delimiter => parts += 1,
                _ => {}
            }
            i += 1;
        }
        let flags: String = chars[i.min(chars.len())..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if parts == 2 && flags.contains('e') {
            return true;
        }
        at = i.max(at + 1);
    }
    false
}

/// Most string literals taken from one piece of code; the code is also
/// analysed whole, so what lies beyond is not unread.
const MAX_LITERALS: usize = 256;

/// The string literals of `code` (see [`crate::embedded::literal_spans`]),
/// the first [`MAX_LITERALS`] that are not empty.
pub(super) fn string_literals(code: &str) -> Vec<String> {
    crate::embedded::literal_spans(code)
        .into_iter()
        .filter(|(start, end)| end > start)
        .take(MAX_LITERALS)
        .map(|(start, end)| code[start..end].to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpreters_are_known_by_name_and_version() {
        for program in [
            "python3.12",
            "python",
            "pypy3",
            "lua5.4",
            "php8.2",
            "Rscript",
            "node",
        ] {
            assert!(interpreter(program).is_some(), "{program}");
        }
        for program in ["pythonic", "nodemon", "rustc", "make"] {
            assert!(interpreter(program).is_none(), "{program}");
        }
    }

    #[test]
    fn the_first_letter_index_rules_out_no_interpreter() {
        for i in INTERPRETERS {
            for spelling in [i.name.to_string(), i.name.to_ascii_uppercase()] {
                assert!(NAMES.may_hold(&spelling), "{spelling}");
                assert_eq!(interpreter(&spelling).map(|found| found.name), Some(i.name));
            }
        }
        for other in [
            "",
            "1",
            "-",
            "é",
            "Ωmega",
            "cd",
            "git",
            "grep",
            "x".repeat(40).as_str(),
        ] {
            assert!(interpreter(other).is_none(), "{other}");
        }
    }

    #[test]
    fn sed_scripts_that_run_commands() {
        for script in ["1e rm -rf ~", "s/x/y/e", "/a/e id", "s|a|b|ge", "$ e date"] {
            assert!(sed_runs_commands(script), "{script}");
        }
        for script in [
            "s/exec(/run(/g",
            "p",
            "1,10p",
            "s/e/E/g",
            "/^e /d",
            "s/a/b/",
        ] {
            assert!(!sed_runs_commands(script), "{script}");
        }
        assert_eq!(commands_in_code("sed", "1e rm -rf ~"), ["rm -rf ~"]);
    }

    #[test]
    fn literals_are_taken_with_their_quotes_matched() {
        assert_eq!(
            string_literals(r#"os.system("rm -rf ~"); x = 'a\'b'; `id`"#),
            ["rm -rf ~", r"a\'b", "id"]
        );
        assert!(string_literals("no quotes here").is_empty());
        assert!(string_literals("'unterminated").is_empty());
    }
}
