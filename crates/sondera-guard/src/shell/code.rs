//! Code handed to an interpreter on the command line (`python3 -c`,
//! `perl -e`, `node -e`, an awk program, a here-document fed to `ruby`),
//! read for what it does: spawning processes, opening connections, deleting,
//! reading credential files, writing where things persist.
//!
//! No language is parsed. The markers are calls and modules by their names,
//! compared case-insensitively, and the string literals of the code are
//! judged on their own: a literal that names a path is resolved like a shell
//! argument, and every literal (and the code itself) is also analysed as a
//! shell command, so `os.system("rm -rf ~")` is the `rm -rf ~` it runs. What
//! the markers cannot tell apart errs towards risky; a marker that appears in
//! ordinary code (`socket.gethostname()`) costs an escalation, never a miss.

use super::paths::resolve;
use super::risks::{Risk, RiskKind};
use super::word::Word;
use super::{Invocation, ShellContext, Stdin};

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
static INTERPRETERS: &[Interpreter] = &[
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
    INTERPRETERS
        .iter()
        .find(|i| i.name.eq_ignore_ascii_case(bare))
}

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

/// Calls that start another process.
const SPAWNS: &[&str] = &[
    "system(",
    "system ",
    "system2(",
    "exec(",
    "exec ",
    "execv",
    "execl",
    "execsync",
    "execfile",
    "spawn",
    "popen",
    "subprocess",
    "os.execute",
    "shell_exec",
    "passthru",
    "proc_open",
    "pcntl_exec",
    "child_process",
    "getruntime",
    "processbuilder",
    "qx{",
    "qx(",
    "qx/",
    "%x(",
    "%x{",
    "open3",
    "os:cmd",
    "system.cmd",
    "do shell script",
    ".execute()",
    "run(`",
    "deno.command",
    "start-process",
    "invoke-expression",
    "iex ",
    "| getline",
    "|getline",
    "|&",
    "shell(",
    "call-process",
    "shell-command",
    "exec.command",
    "process.run",
];
/// Calls and modules that open raw connections: with a spawn, the shape of
/// a remote shell.
const RAW_SOCKETS: &[&str] = &[
    "socket",
    "fsockopen",
    "/inet/tcp",
    "/inet/udp",
    "/inet6/",
    "/dev/tcp/",
    "/dev/udp/",
    "net.connect",
    "createconnection",
    "ztcp",
    "gen_tcp",
    "io::socket",
    "deno.connect",
    "bun.connect",
    "tcpclient",
];
/// Calls that decode text that may be code.
const DECODES: &[&str] = &[
    "base64",
    "b64decode",
    "atob(",
    "unhexlify",
    "fromhex",
    "fromcharcode",
    "from_base64",
    "decode(",
    "unpack(",
    "rot13",
    "zlib",
    "gzip",
];

/// Calls and modules that reach the network.
const NETWORK: &[&str] = &[
    "urlopen",
    "urllib",
    "requests.",
    "httpx",
    "http.client",
    "httplib",
    "http.get",
    "https.get",
    "http.request",
    "https.request",
    "fetch(",
    "xmlhttprequest",
    "lwp",
    "net::http",
    "open-uri",
    "curl_exec",
    "invoke-webrequest",
    "invoke-restmethod",
    "iwr ",
    "irm ",
    "webclient",
    "download.file",
    "httr",
    ":httpc",
    "websocket",
    "smtplib",
    "ftplib",
    "paramiko",
];
/// Calls that delete files or trees.
const DELETES: &[&str] = &[
    "rmtree",
    "rm_rf",
    "rm_r(",
    "remove_dir",
    "removedirs",
    "rmdir",
    "rmsync",
    "fs.rm",
    "unlink",
    "os.remove",
    "fileutils.rm",
    "file.delete",
    "remove-item",
    "deno.remove",
    "file_delete",
    "rimraf",
    "delete_file",
    "file.rm",
    "files.delete",
];
/// Calls that read a file's contents.
const READS: &[&str] = &[
    "open(",
    "open ",
    "read",
    "file_get_contents",
    "get-content",
    "fopen",
    "slurp",
    "cat(",
    "infile",
    "load(",
    "copy",
];
/// Calls that write or append to a file.
const WRITES: &[&str] = &[
    "write",
    "append",
    "file_put_contents",
    "fputs",
    "puts",
    "print ",
    ">>",
    "out-file",
    "set-content",
    "add-content",
    "copy",
    "'a'",
    "\"a\"",
    "'w'",
    "\"w\"",
];
/// Calls that tie a process's standard streams to a descriptor.
const STREAM_TIES: &[&str] = &[
    "dup2", "pty", "fileno", "stdin", "stdout", "<&", ">&", "in:", "pipe(",
];

/// What a piece of inline code does.
#[derive(Debug, Default)]
pub(super) struct CodeFacts {
    pub risks: Vec<Risk>,
    /// Hosts of URLs and addresses written in the code.
    pub hosts: Vec<String>,
    /// Texts to analyse as shell commands: the string literals of the code,
    /// and the code itself.
    pub commands: Vec<String>,
}

/// Reads `code`, run by `program`, in `ctx`.
pub(super) fn facts(program: &str, code: &str, ctx: &ShellContext<'_>) -> CodeFacts {
    if program == "sed" {
        let mut out = CodeFacts::default();
        sed_facts(code, &mut out);
        return out;
    }
    let lower = code.to_ascii_lowercase();
    let found = |markers: &[&'static str]| -> Vec<&'static str> {
        markers
            .iter()
            .copied()
            .filter(|m| lower.contains(m))
            .collect()
    };
    let (spawns, sockets, network) = (found(SPAWNS), found(RAW_SOCKETS), found(NETWORK));
    let (deletes, reads, writes) = (found(DELETES), found(READS), found(WRITES));
    let literals = string_literals(code);
    let mut out = CodeFacts::default();
    let risk = |kind, evidence: String| Risk { kind, evidence };
    out.risks.push(risk(
        RiskKind::InlineCode,
        format!("{program} runs inline code"),
    ));
    // Code that decodes more code and evaluates it runs what nobody read.
    let evaluates_decoded = ["eval", "exec(", "compile(", "function("]
        .iter()
        .any(|m| lower.contains(m))
        && DECODES.iter().any(|m| lower.contains(m));
    if evaluates_decoded {
        out.risks.push(risk(
            RiskKind::InlineCodeRisky,
            format!("{program} inline code evaluates code it decodes"),
        ));
    }
    let risky: Vec<&str> = [&spawns, &sockets, &network, &deletes]
        .into_iter()
        .flatten()
        .copied()
        .collect();
    if !risky.is_empty() {
        out.risks.push(risk(
            RiskKind::InlineCodeRisky,
            format!("{program} inline code calls {}", risky.join(", ")),
        ));
    }
    let shell_literal = literals.iter().any(|l| {
        super::walk::SHELLS.contains(&super::walk::basename(
            l.split_whitespace().next().unwrap_or(""),
        ))
    });
    let tied = STREAM_TIES.iter().any(|t| lower.contains(t));
    if !sockets.is_empty()
        && !spawns.is_empty()
        && (shell_literal || tied || lower.contains("getline"))
    {
        out.risks.push(risk(
            RiskKind::ReverseShell,
            format!(
                "{program} inline code opens a connection ({}) and runs commands ({})",
                sockets.join(", "),
                spawns.join(", ")
            ),
        ));
    }
    for literal in &literals {
        paths_in_literal(program, literal, ctx, &reads, &writes, &deletes, &mut out);
        out.hosts.extend(crate::net::hosts_in_text(literal));
        if literal.contains(char::is_whitespace) || super::embedded::is_shell(literal) {
            out.commands.push(literal.clone());
        }
    }
    out.hosts.extend(crate::net::hosts_in_text(code));
    out.commands.push(code.to_string());
    out
}

/// What a sed script does: GNU sed runs commands, through `e COMMAND` and
/// through the `e` flag of `s///e`. Its patterns are data, not calls, so
/// nothing else of it is read as code.
fn sed_facts(script: &str, out: &mut CodeFacts) {
    if !script.contains('e') {
        return;
    }
    static E_COMMAND: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?m)(?:^|[0-9$;{}/!])\s*e\s+([^;\n}]+)")
            .expect("sed command pattern compiles")
    });
    let mut runs = substitutions_execute(script);
    for found in E_COMMAND.captures_iter(script) {
        runs = true;
        out.commands.push(found[1].trim().to_string());
    }
    if runs {
        out.risks.push(Risk {
            kind: RiskKind::InlineCodeRisky,
            evidence: "sed runs a command from its script".to_string(),
        });
    }
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

/// What a string literal of the code names, when it is a path: a credential
/// file read, a persistence location written, a place outside the
/// workspace deleted.
fn paths_in_literal(
    program: &str,
    literal: &str,
    ctx: &ShellContext<'_>,
    reads: &[&str],
    writes: &[&str],
    deletes: &[&str],
    out: &mut CodeFacts,
) {
    let text = literal.trim();
    if text.contains(char::is_whitespace) || text.contains("://") || !text.contains('/') {
        return;
    }
    let home_relative = super::word::starts_at_home(text);
    // A path joined onto the home directory at run time
    // (`os.homedir() + "/.aws/credentials"`) is named by its tail.
    let word = Word {
        text: text.to_string(),
        home_relative,
        ..Word::default()
    };
    let path = if text.starts_with('/') || home_relative {
        resolve(&word, ctx).path
    } else {
        format!("{}/{text}", ctx.home)
    };
    let risk = |kind, evidence: String| Risk { kind, evidence };
    if let Some(kind) = crate::secrets::sensitive_path(&path)
        && !reads.is_empty()
    {
        out.risks.push(risk(
            RiskKind::SecretRead,
            format!("{program} inline code reads {path} ({kind})"),
        ));
    }
    if let Some(kind) = crate::persistence::persistence_target(&path, ctx.home)
        && !writes.is_empty()
    {
        out.risks.push(risk(
            RiskKind::Persistence,
            format!("{program} inline code writes {path} ({kind})"),
        ));
    }
    let resolved = resolve(&word, ctx);
    let wipes_home_or_workspace = !resolved.dynamic
        && crate::places::holds_home_or_workspace(&resolved.path, ctx.workspace_root, ctx.home);
    let outside = wipes_home_or_workspace
        || !resolved.inside_workspace && !crate::places::is_scratch(&resolved.path, ctx.home);
    if !deletes.is_empty() && (text.starts_with('/') || home_relative) && outside {
        out.risks.push(risk(
            RiskKind::DeleteOutsideWorkspace,
            format!(
                "{program} inline code deletes with {} near {}",
                deletes.join(", "),
                resolved.path
            ),
        ));
    }
}

/// Most string literals taken from one piece of code; the code is also
/// analysed whole, so what lies beyond is not unread.
const MAX_LITERALS: usize = 256;

/// The string literals of `code` (see [`super::embedded::literal_spans`]),
/// the first [`MAX_LITERALS`] that are not empty.
pub(super) fn string_literals(code: &str) -> Vec<String> {
    super::embedded::literal_spans(code)
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
    fn sed_scripts_that_run_commands() {
        for script in ["1e rm -rf ~", "s/x/y/e", "/a/e id", "s|a|b|ge", "$ e date"] {
            let mut out = CodeFacts::default();
            sed_facts(script, &mut out);
            assert!(!out.risks.is_empty(), "{script}");
        }
        for script in [
            "s/exec(/run(/g",
            "p",
            "1,10p",
            "s/e/E/g",
            "/^e /d",
            "s/a/b/",
        ] {
            let mut out = CodeFacts::default();
            sed_facts(script, &mut out);
            assert!(out.risks.is_empty(), "{script}");
        }
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
