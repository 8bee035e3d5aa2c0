//! What inline code does (see [`crate::interpreters`] for how it is
//! found): spawning processes, opening connections, deleting, reading
//! credential files, writing where things persist.
//!
//! No language is parsed. The markers are calls and modules by their names,
//! compared case-insensitively, and the string literals of the code are
//! judged on their own: a literal that names a path is resolved like a shell
//! argument. What the markers cannot tell apart errs towards risky; a marker
//! that appears in ordinary code (`socket.gethostname()`) costs an
//! escalation, never a miss.

use sondera_catalogue::programs::starts_shell;

use crate::interpreters::{InlineCode, InlineRun, sed_runs_commands, string_literals};
use crate::paths::resolve;
use crate::types::{Risk, RiskKind, ShellContext, risk};
use crate::word::{Word, starts_at_home};

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
    "remove_tree",
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

/// What inline code does.
#[derive(Debug, Default)]
pub(super) struct CodeFacts {
    pub risks: Vec<Risk>,
    /// Hosts of URLs and addresses written in the code.
    pub hosts: Vec<String>,
}

/// What the inline code the walk found does, each risk with where the code
/// was found. Code that is not read (`-EncodedCommand`, code built at run
/// time) runs unseen, and that is a risk of its own.
pub(super) fn assess(runs: &[InlineRun], ctx: &ShellContext<'_>) -> CodeFacts {
    let mut all = CodeFacts::default();
    for run in runs {
        let code = match &run.code {
            InlineCode::Unread(what) => {
                all.risks.push(risk(
                    RiskKind::InlineCodeRisky,
                    format!("{}{what}: code that is not read runs", run.origin),
                ));
                continue;
            }
            InlineCode::Text(code) => code,
        };
        let found = facts(&run.program, code, ctx);
        all.risks.extend(found.risks.into_iter().map(|r| Risk {
            evidence: format!("{}{}", run.origin, r.evidence),
            ..r
        }));
        all.hosts.extend(found.hosts);
    }
    all
}

/// Reads `code`, run by `program`, in `ctx`.
fn facts(program: &str, code: &str, ctx: &ShellContext<'_>) -> CodeFacts {
    if program == "sed" {
        let mut out = CodeFacts::default();
        if sed_runs_commands(code) {
            out.risks.push(risk(
                RiskKind::InlineCodeRisky,
                "sed runs a command from its script",
            ));
        }
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
    // A process started with a command the code spells out is judged as
    // that command (the walk analyses it); only a computed one is unknown.
    let unknown_spawns: &[&str] = if crate::spawns::spelled_out(code).is_some() {
        &[]
    } else {
        &spawns
    };
    // Deleting only what the code names, inside the workspace, is what
    // `rm` of the same paths is (`shutil.rmtree('build')`).
    let named_deletions = (!deletes.is_empty())
        .then(|| deleted_literals(code, &lower, &deletes))
        .flatten()
        .filter(|targets| targets.iter().all(|t| deletes_in_workspace(t, ctx)));
    if let Some(targets) = &named_deletions {
        let mut named: Vec<&str> = targets.clone();
        named.sort_unstable();
        named.dedup();
        let shown = named.len().min(MAX_TARGETS_SHOWN);
        let more = match named.len() - shown {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        out.risks.push(risk(
            RiskKind::DeleteInWorkspace,
            format!(
                "{program} inline code deletes {}{more}",
                named[..shown].join(", ")
            ),
        ));
    }
    let unknown_deletes: &[&str] = if named_deletions.is_some() {
        &[]
    } else {
        &deletes
    };
    let risky: Vec<&str> = [unknown_spawns, &sockets, &network, unknown_deletes]
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
    let shell_literal = literals
        .iter()
        .any(|l| starts_shell(l.split_whitespace().next().unwrap_or("")));
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
        out.hosts
            .extend(sondera_catalogue::hosts::hosts_in_text(literal));
    }
    out.hosts
        .extend(sondera_catalogue::hosts::hosts_in_text(code));
    out
}

/// Most deleted paths an evidence names.
const MAX_TARGETS_SHOWN: usize = 8;

/// Longest rest of a deleting call's name after its marker (`Sync` of
/// `fs.rmSync`, `_rf` of `FileUtils.rm_rf`), and longest name of the
/// constructor of its receiver (`pathlib.Path`).
const MAX_CALL_NAME_TAIL: usize = 32;

/// The paths the code's deleting calls are given, when each is given a
/// string literal first (`rmtree('build')`, `fs.rmSync("dist", {...})`);
/// `None` when any is given something computed (`rmtree(path)`,
/// `unlink glob(...)`) or is not called where it is named.
fn deleted_literals<'c>(code: &'c str, lower: &str, deletes: &[&str]) -> Option<Vec<&'c str>> {
    let mut targets = Vec::new();
    for marker in deletes {
        for (at, _) in lower.match_indices(marker) {
            let rest = &code[at + marker.len()..];
            // Past the rest of the call's name (`fs.rm` in `fs.rmSync(`),
            // which is short: read without a bound, a marker repeated
            // (`unlinkunlink...(`) had every match read the whole run.
            let rest = &rest[name_length(rest.bytes())?..];
            let rest = match rest.strip_prefix('(') {
                Some(args) => args,
                None if marker.ends_with('(') => rest,
                None => return None,
            };
            let rest = rest.trim_start();
            // A method with nothing given deletes its receiver, when that
            // is one constructor given a literal (`Path('x').unlink()`).
            if rest.starts_with(')') {
                targets.push(receiver_literal(&code[..at])?);
                continue;
            }
            let quote = rest
                .chars()
                .next()
                .filter(|q| matches!(q, '\'' | '"' | '`'))?;
            let body = &rest[1..];
            let end = body.find(quote)?;
            let after = body[end + 1..].trim_start();
            if !after.starts_with([')', ',']) {
                return None;
            }
            targets.push(&body[..end]);
        }
    }
    Some(targets)
}

/// How many of `bytes` make a dotted name (`fs.rmSync`, `pathlib.Path`),
/// read for at most [`MAX_CALL_NAME_TAIL`] bytes; `None` past that.
fn name_length(bytes: impl Iterator<Item = u8>) -> Option<usize> {
    let length = bytes
        .take(MAX_CALL_NAME_TAIL + 1)
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
        .count();
    (length <= MAX_CALL_NAME_TAIL).then_some(length)
}

/// The literal a method's receiver is made from, when the code before
/// the method (`before`, ending at its name) is one constructor given one
/// string literal: `Path('build/x.log').` and `pathlib.Path("x").`, not a
/// chain (`Path.home().joinpath('x').`) or a computed value.
fn receiver_literal(before: &str) -> Option<&str> {
    let call = before
        .strip_suffix('.')?
        .trim_end()
        .strip_suffix(')')?
        .trim_end();
    let quote = call.chars().last().filter(|q| matches!(q, '\'' | '"'))?;
    let inner = &call[..call.len() - 1];
    let open = inner.rfind(quote)?;
    let literal = &inner[open + 1..];
    let name = inner[..open].trim_end().strip_suffix('(')?.trim_end();
    let constructor = name_length(name.bytes().rev())?;
    let (head, constructor) = name.split_at(name.len() - constructor);
    let chained = head.ends_with(')') || constructor.starts_with('.');
    (!constructor.is_empty() && !chained).then_some(literal)
}

/// Whether deleting `target`, a path the code spells, stays inside the
/// workspace and spares it: relative to the working directory, no `..`,
/// no variable.
fn deletes_in_workspace(target: &str, ctx: &ShellContext<'_>) -> bool {
    let word = Word::path(target);
    let resolved = resolve(&word, ctx);
    !target.is_empty()
        && !target.contains(['$', '*', '?', '{', '~'])
        && !resolved.dynamic
        && resolved.inside_workspace
        && !sondera_catalogue::places::holds_home_or_workspace(
            &resolved.path,
            ctx.workspace_root,
            ctx.home,
        )
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
    let home_relative = starts_at_home(text);
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
    if let Some(kind) = sondera_catalogue::secrets::sensitive_path(&path)
        && !reads.is_empty()
    {
        out.risks.push(risk(
            RiskKind::SecretRead,
            format!("{program} inline code reads {path} ({kind})"),
        ));
    }
    if let Some(kind) = sondera_catalogue::persistence::persistence_target(&path, ctx.home)
        && !writes.is_empty()
    {
        out.risks.push(risk(
            RiskKind::Persistence,
            format!("{program} inline code writes {path} ({kind})"),
        ));
    }
    let resolved = resolve(&word, ctx);
    let wipes_home_or_workspace = !resolved.dynamic
        && sondera_catalogue::places::holds_home_or_workspace(
            &resolved.path,
            ctx.workspace_root,
            ctx.home,
        );
    let outside = wipes_home_or_workspace
        || !resolved.inside_workspace
            && !sondera_catalogue::places::is_scratch(&resolved.path, ctx.home);
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
