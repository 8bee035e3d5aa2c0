//! What a command reads that is secret, and what it sends where.

use super::paths::resolve;
use super::risks::{Risk, RiskKind};
use super::word::Word;
use super::{Invocation, ShellContext, Stdin};
use crate::net::{Host, HostClass, authority_host, plausible_host, url_host};
use crate::secrets::{credential_directory, sensitive_path};

/// Programs that read the contents of the files they name.
const READERS: &[&str] = &[
    "cat",
    "tac",
    "less",
    "more",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "awk",
    "sed",
    "cut",
    "sort",
    "uniq",
    "nl",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "base64",
    "base32",
    "openssl",
    "gpg",
    "cp",
    "mv",
    "scp",
    "rsync",
    "tar",
    "zip",
    "7z",
    "gzip",
    "bzip2",
    "xz",
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "dd",
    "jq",
    "yq",
    "diff",
    "cmp",
    "source",
    ".",
    "vi",
    "vim",
    "nano",
    "emacs",
    "view",
    "bat",
    "install",
    "ssh-keygen",
    "ssh-add",
    "sftp",
];
/// Programs that copy or archive whole directories.
const ARCHIVERS: &[&str] = &["tar", "zip", "7z", "cp", "rsync", "scp"];
const SEARCHERS: &[&str] = &["grep", "egrep", "fgrep", "rg", "ag", "ack"];
const SECRET_WORDS: &[&str] = &[
    "secret",
    "password",
    "passwd",
    "token",
    "api_key",
    "apikey",
    "private key",
    "begin rsa",
    "credential",
    "aws_access_key",
];
const SOCKETS: &[&str] = &["nc", "ncat", "netcat", "socat", "telnet"];
const RESOLVERS: &[&str] = &["dig", "nslookup", "host", "drill", "resolvectl"];

fn risk(kind: RiskKind, evidence: String) -> Risk {
    Risk { kind, evidence }
}

/// Files an argument names: `@file` (curl), `name=@file`, `--post-file=file`, `if=file`.
fn file_refs(word: &Word) -> Option<Word> {
    let text = word.text.as_str();
    let path = if let Some(rest) = text.strip_prefix('@') {
        rest
    } else if let Some((_, rest)) = text.split_once("=@") {
        rest
    } else if let Some(rest) = ["--post-file=", "--body-file=", "--upload-file=", "if="]
        .iter()
        .find_map(|p| text.strip_prefix(p))
    {
        rest
    } else if text.starts_with('-') {
        return None;
    } else {
        text
    };
    (!path.is_empty() && path != "-").then(|| Word {
        text: path.to_string(),
        home_relative: word.home_relative && path.len() == text.len(),
        ..word.clone()
    })
}

pub(super) fn assess(
    i: &Invocation,
    ctx: &ShellContext<'_>,
    hosts: &mut Vec<String>,
    out: &mut Vec<Risk>,
) {
    secret_reads(i, ctx, out);
    secret_search(i, ctx, out);
    uploads(i, ctx, out);
    let p = i.program.as_str();
    if matches!(p, "env" | "printenv") && i.args.iter().all(|a| a.starts_with('-'))
        || (p == "export" && i.args.iter().any(|a| a == "-p"))
        || (p == "cat"
            && i.args
                .iter()
                .any(|a| a.starts_with("/proc/") && a.ends_with("/environ")))
    {
        out.push(risk(RiskKind::EnvDump, format!("{p} {}", i.args.join(" "))));
    }
    if RESOLVERS.contains(&p)
        && i.arg_words
            .iter()
            .any(|w| !w.substitutions.is_empty() || w.dynamic)
    {
        out.push(risk(
            RiskKind::DnsExfil,
            format!("{p} looks up a name built at run time"),
        ));
    }
    for raw in destinations(i) {
        let host = Host::parse(&raw);
        if host.class == HostClass::Metadata {
            out.push(risk(
                RiskKind::MetadataEndpoint,
                format!("{p} reaches {raw} ({})", host.name),
            ));
        }
        hosts.push(host.name);
    }
}

fn secret_reads(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    let reader = READERS.contains(&i.program.as_str());
    let mut named: Vec<Word> = Vec::new();
    if reader {
        named.extend(i.arg_words.iter().filter_map(file_refs));
    }
    if let Stdin::File(path) = &i.stdin {
        named.push(Word {
            text: path.clone(),
            home_relative: path.starts_with('~') || path.starts_with("$HOME"),
            ..Word::default()
        });
    }
    for word in named {
        let path = resolve(&word, ctx).path;
        if let Some(kind) = sensitive_path(&path) {
            out.push(risk(
                RiskKind::SecretRead,
                format!("{} reads {path} ({kind})", i.program),
            ));
        } else if ARCHIVERS.contains(&i.program.as_str()) && credential_directory(&path) {
            out.push(risk(
                RiskKind::SecretRead,
                format!("{} copies the credential directory {path}", i.program),
            ));
        }
    }
}

fn secret_search(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    if !SEARCHERS.contains(&i.program.as_str()) {
        return;
    }
    let mut operands = i.arg_words.iter().filter(|w| !w.text.starts_with('-'));
    let Some(pattern) = operands.next() else {
        return;
    };
    let lower = pattern.text.to_ascii_lowercase();
    if !SECRET_WORDS.iter().any(|s| lower.contains(s)) {
        return;
    }
    for root in operands {
        let resolved = resolve(root, ctx);
        let broad = !resolved.inside_workspace
            && (resolved.path == "/"
                || resolved.path == ctx.home
                || ctx.home.starts_with(&format!("{}/", resolved.path))
                || resolved.path.starts_with(ctx.home));
        if broad {
            out.push(risk(
                RiskKind::SecretSearch,
                format!(
                    "{} searches {} for `{}`",
                    i.program, resolved.path, pattern.text
                ),
            ));
        }
    }
}

fn uploads(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    let p = i.program.as_str();
    let args = &i.args;
    let flag = |names: &[&str]| {
        args.iter().any(|a| {
            names
                .iter()
                .any(|n| a == n || a.starts_with(&format!("{n}=")))
        })
    };
    let piped_in = matches!(i.stdin, Stdin::Pipe(_) | Stdin::File(_));
    let sending = match p {
        "curl" => {
            flag(&[
                "-d",
                "--data",
                "--data-binary",
                "--data-raw",
                "--data-urlencode",
                "--json",
                "-F",
                "--form",
                "-T",
                "--upload-file",
            ]) || args
                .windows(2)
                .any(|w| w[0] == "-X" && matches!(w[1].as_str(), "POST" | "PUT" | "PATCH"))
        }
        "wget" => {
            flag(&["--post-file", "--post-data", "--body-file", "--body-data"])
                || flag(&["--method"])
        }
        "scp" | "rsync" | "sftp" => args
            .iter()
            .filter(|a| !a.starts_with('-'))
            .skip(1)
            .any(|a| is_remote_path(a)),
        "ssh" => piped_in,
        "ftp" | "tftp" => true,
        _ if SOCKETS.contains(&p) => piped_in,
        _ => false,
    };
    if !sending {
        return;
    }
    out.push(risk(
        RiskKind::NetworkUpload,
        format!("{p} {}", args.join(" ")),
    ));
    let sent: Vec<Word> = match p {
        "scp" | "rsync" | "sftp" => {
            let operands: Vec<&Word> = i
                .arg_words
                .iter()
                .filter(|w| !w.text.starts_with('-'))
                .collect();
            operands
                .iter()
                .take(operands.len().saturating_sub(1))
                .map(|w| (*w).clone())
                .collect()
        }
        _ => i
            .arg_words
            .iter()
            .filter(|w| w.text.contains('@') || w.text.contains("-file="))
            .filter_map(file_refs)
            .collect(),
    };
    let mut sent = sent;
    if let Stdin::File(path) = &i.stdin {
        sent.push(Word {
            text: path.clone(),
            home_relative: path.starts_with('~'),
            ..Word::default()
        });
    }
    for word in sent {
        let resolved = resolve(&word, ctx);
        if !resolved.inside_workspace {
            out.push(risk(
                RiskKind::UploadExternalFile,
                format!("{p} sends {}", resolved.path),
            ));
        }
    }
}

pub(super) fn is_remote_path(arg: &str) -> bool {
    match arg.split_once(':') {
        Some((host, _)) => !host.is_empty() && !host.contains('/') && !arg.contains("://"),
        None => false,
    }
}

/// Options of HTTP clients that take a value, which is not a destination.
const VALUED_OPTIONS: &[&str] = &[
    "-o",
    "-d",
    "-H",
    "-X",
    "-u",
    "-A",
    "-e",
    "-b",
    "-c",
    "-T",
    "-F",
    "-w",
    "-m",
    "-K",
    "-E",
    "-r",
    "-x",
    "-U",
    "-Y",
    "-y",
    "-z",
    "-C",
    "-O",
    "-a",
    "-P",
    "-t",
    "-i",
    "--output",
    "--data",
    "--data-binary",
    "--data-raw",
    "--data-urlencode",
    "--json",
    "--header",
    "--request",
    "--user",
    "--user-agent",
    "--referer",
    "--cookie",
    "--cookie-jar",
    "--upload-file",
    "--form",
    "--write-out",
    "--max-time",
    "--config",
    "--cert",
    "--key",
    "--range",
    "--proxy",
    "--connect-timeout",
    "--retry",
    "--resolve",
    "--cacert",
    "--capath",
    "--interface",
    "--output-document",
    "--output-file",
    "--post-data",
    "--post-file",
    "--body-data",
    "--body-file",
    "--method",
    "--directory-prefix",
    "--input-file",
    "--tries",
    "--timeout",
    "--wait",
    "--limit-rate",
    "--max-filesize",
    "--connect-to",
    "--unix-socket",
    "--retry-delay",
    "--retry-max-time",
    "--speed-limit",
    "--speed-time",
    "--max-redirs",
    "--keepalive-time",
    "--expect100-timeout",
    "--local-port",
    "--dns-servers",
    "--noproxy",
];
const HTTP_CLIENTS: &[&str] = &["curl", "wget", "http", "https", "xh", "aria2c"];

/// The operands of an invocation: arguments that are neither options nor
/// the values of options known to take one.
fn operands(i: &Invocation) -> impl Iterator<Item = &String> {
    let http_client = HTTP_CLIENTS.contains(&i.program.as_str());
    let mut skip_next = false;
    i.args.iter().filter(move |a| {
        if std::mem::take(&mut skip_next) {
            return false;
        }
        if a.starts_with('-') {
            skip_next = http_client && VALUED_OPTIONS.contains(&a.as_str());
            return false;
        }
        true
    })
}

/// Hosts a network program talks to.
fn destinations(i: &Invocation) -> Vec<String> {
    let p = i.program.as_str();
    let network = matches!(
        p,
        "curl"
            | "wget"
            | "ssh"
            | "scp"
            | "rsync"
            | "sftp"
            | "ftp"
            | "git"
            | "http"
            | "xh"
            | "aria2c"
    ) || SOCKETS.contains(&p)
        || RESOLVERS.contains(&p);
    if !network {
        return Vec::new();
    }
    let mut hosts = Vec::new();
    let http_client = HTTP_CLIENTS.contains(&p);
    for (n, arg) in operands(i).enumerate() {
        if let Some(host) = url_host(arg) {
            hosts.push(host);
        } else if http_client && !arg.contains('=') {
            hosts.extend(authority_host(arg).filter(|h| plausible_host(h)));
        } else if is_remote_path(arg) || (p == "ssh" && n == 0) {
            let host = arg.split(':').next().unwrap_or(arg);
            hosts.push(host.rsplit('@').next().unwrap_or(host).to_string());
        } else if (SOCKETS.contains(&p) || RESOLVERS.contains(&p)) && n == 0 && !arg.contains('=') {
            hosts.push(arg.trim_start_matches('@').to_string());
        }
    }
    hosts
}
