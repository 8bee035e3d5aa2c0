//! Where packages and code come from, as configuration sets it: a source
//! redirected to a host that is no registry's own (`GOPROXY`, a mirror, a
//! channel, `url.X.insteadOf`), or the verification of what is fetched
//! switched off (`http.sslVerify false`, `NODE_TLS_REJECT_UNAUTHORIZED=0`,
//! a trusted or insecure host). Read from any tool's settings (options,
//! `key=value`, `config KEY VALUE`) and the environment it is given, so a
//! tool nobody listed is read the same way.

use sondera_catalogue::grammar::{
    CHECK_PIECES, NEGATING_PREFIXES, OFF_VALUES, SKIPPING_PIECES, SOURCE_PIECES, VERIFYING_PIECES,
};
use sondera_catalogue::hosts::{authority_host, official_registry, url_host};

use crate::types::{Invocation, Risk, RiskKind, risk};

pub(super) fn assess(i: &Invocation, out: &mut Vec<Risk>) {
    // A word inside another command's arguments configures nothing.
    if i.phantom {
        return;
    }
    let unofficial = |host: &String| !official_registry(&format!("https://{host}/"));
    let (mut unverified, mut redirected): (Option<String>, Option<String>) = (None, None);
    // One pass over what the command sets: every command has settings.
    let mut judge = |name: &str, value: &str, settles_source: bool| {
        let (name, value) = handed_on(name, value);
        squeezed(name, |key| {
            if unverified.is_none() && switches_off(key, Some(value)) {
                unverified = Some(format!("{name}={value}"));
            }
            if settles_source && redirected.is_none() && has_piece(key, SOURCE_PIECES) {
                redirected = hosts_in(value).find(unofficial);
            }
        });
    };
    i.for_each_setting(|name, value| judge(name, value, true));
    for (name, value) in config_pairs(i) {
        judge(name, value, false);
    }
    // An edit in place writes settings into files (`sed -i
    // 's/verify=True/verify=False/' app.py`): what it writes is set there.
    if let Some((_, text)) = crate::written::edited_content(i) {
        for (name, value) in settings_in(&text) {
            judge(name, value, false);
        }
    }
    // A flag that turns a check off needs no value (`yum install
    // --nogpgcheck x`, `wget --no-check-certificate URL`). `--no-verify`
    // skips a tool's own hooks (`git commit`), not a check of what is
    // fetched.
    if unverified.is_none() {
        unverified = i
            .args
            .iter()
            .filter_map(|a| a.strip_prefix('-'))
            .map(|flag| flag.trim_start_matches('-'))
            .filter(|flag| *flag != "no-verify")
            .find(|flag| squeezed(flag, |key| switches_off(key, None)))
            .map(|flag| format!("--{flag}"));
    }
    if unverified.is_none() {
        unverified = i
            .assignments
            .iter()
            .find(|name| squeezed(name, |key| switches_off(key, None)))
            .cloned();
    }
    let command = || format!("{} {}", i.program, i.args.join(" "));
    if let Some(setting) = unverified {
        out.push(risk(
            RiskKind::UntrustedPackageSource,
            format!("{} fetches without verification ({setting})", command()),
        ));
    }
    if let Some(host) = redirected.or_else(|| configured_source(i)) {
        out.push(risk(
            RiskKind::UntrustedPackageSource,
            format!("{} takes packages or code from {host}", command()),
        ));
    }
}

/// The `KEY=VALUE`, `KEY: VALUE` and `KEY = VALUE` settings of a text
/// (code or configuration), quotes taken off.
fn settings_in(text: &str) -> Vec<(&str, &str)> {
    const QUOTES: [char; 2] = ['"', '\''];
    let pieces: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || ",;(){}[]".contains(c))
        .filter(|p| !p.is_empty())
        .collect();
    let piece = |n: usize| pieces.get(n).copied().unwrap_or("");
    let mut settings = Vec::new();
    for n in 0..pieces.len() {
        let (name, value) = match piece(n).split_once(['=', ':']) {
            Some((name, "")) => (name, piece(n + 1)),
            Some(pair) => pair,
            None if matches!(piece(n + 1), "=" | ":") => (piece(n), piece(n + 2)),
            None => continue,
        };
        let name = name.trim_matches(QUOTES);
        if !name.is_empty() {
            settings.push((name, value.trim_matches(QUOTES)));
        }
    }
    settings
}

/// Whether the squeezed name `key` holds one of `pieces`.
fn has_piece(key: &str, pieces: &[&str]) -> bool {
    pieces.iter().any(|piece| {
        key.len() >= piece.len()
            && key
                .as_bytes()
                .windows(piece.len())
                .any(|w| w == piece.as_bytes())
    })
}

/// The setting an option hands on, when its value is one (`go env -w
/// GOPROXY=URL`, `git -c http.sslVerify=false`, `docker run -e
/// PIP_INDEX_URL=URL`); otherwise the option itself.
fn handed_on<'a>(name: &'a str, value: &'a str) -> (&'a str, &'a str) {
    match value.split_once('=') {
        Some((inner, rest)) if !inner.contains("://") => (inner, rest),
        _ => (name, value),
    }
}

/// `config KEY VALUE`: in a command that configures, each word beside the
/// next one (`git config --global http.sslVerify false`, `conda config
/// --set ssl_verify false`).
fn config_pairs(i: &Invocation) -> impl Iterator<Item = (&str, &str)> {
    let configures = i.args.iter().any(|a| a == "config");
    let words: Vec<&str> = if configures {
        i.args
            .iter()
            .map(String::as_str)
            .filter(|a| !a.starts_with('-'))
            .collect()
    } else {
        Vec::new()
    };
    (0..words.len().saturating_sub(1)).map(move |n| (words[n], words[n + 1]))
}

/// Whether setting the squeezed name `key` (to `value`, when it is known)
/// leaves what is fetched unverified: a verifying setting set off or empty,
/// or a skipping one set to anything.
fn switches_off(key: &str, value: Option<&str>) -> bool {
    let off = |value: &str| {
        OFF_VALUES
            .iter()
            .any(|v| v.eq_ignore_ascii_case(value.trim()))
    };
    let names_a_check = |rest: &str| {
        CHECK_PIECES.iter().any(|piece| rest.starts_with(piece))
            || ["check", "verify"].iter().any(|verb| {
                rest.strip_prefix(verb)
                    .is_some_and(|r| has_piece(r, CHECK_PIECES))
            })
    };
    // A skip negated keeps the check (`--no-allow-unauthenticated`).
    let negated_skip = NEGATING_PREFIXES.iter().any(|p| {
        key.strip_prefix(p)
            .is_some_and(|rest| SKIPPING_PIECES.iter().any(|s| rest.starts_with(s)))
    });
    if negated_skip {
        return false;
    }
    let negated_check = NEGATING_PREFIXES
        .iter()
        .any(|p| key.strip_prefix(p).is_some_and(names_a_check));
    if negated_check || has_piece(key, SKIPPING_PIECES) {
        return value.is_none_or(|value| !off(value));
    }
    let Some(value) = value else {
        return false;
    };
    let verifying = key == "ca" || has_piece(key, VERIFYING_PIECES);
    verifying && off(value)
        || value
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
            .any(|flag| flag.eq_ignore_ascii_case("-insecure"))
}

/// `f` of a name's letters and digits, lower-cased (`http.sslVerify`:
/// `httpsslverify`, `NODE_TLS_REJECT_UNAUTHORIZED`:
/// `nodetlsrejectunauthorized`). Every option of every command is read
/// so: names that fit are squeezed on the stack.
fn squeezed<R>(name: &str, f: impl FnOnce(&str) -> R) -> R {
    let mut buffer = [0u8; 64];
    let mut len = 0;
    for byte in name.bytes().filter(u8::is_ascii_alphanumeric) {
        let Some(slot) = buffer.get_mut(len) else {
            let long: String = name
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .collect();
            return f(&long);
        };
        *slot = byte.to_ascii_lowercase();
        len += 1;
    }
    f(std::str::from_utf8(&buffer[..len]).unwrap_or_default())
}

/// The host a command that configures or adds a source points it at,
/// when that is no registry's own (`git config url.URL.insteadOf`, `conda
/// config --add channels URL`, `helm repo add NAME URL`); a setting naming
/// a source (`GOPROXY=URL`, `--index-url URL`) is read with the others. Two
/// places of one host (`url."git@github.com:".insteadOf
/// https://github.com/`) rewrite the way to it, not where it is.
fn configured_source(i: &Invocation) -> Option<String> {
    let configures = i
        .args
        .iter()
        .any(|a| matches!(a.as_str(), "config" | "add" | "--add" | "-a" | "sources"));
    // A piece in an address is a path's, not a setting's:
    // `https://github.com/org/repo.git` names no source.
    if !configures
        || !i
            .args
            .iter()
            .any(|a| !is_address(a) && squeezed(a, |key| has_piece(key, SOURCE_PIECES)))
    {
        return None;
    }
    let hosts: Vec<String> = i.args.iter().flat_map(|a| hosts_in(a)).collect();
    if hosts.len() > 1 && hosts.iter().all(|h| *h == hosts[0]) {
        return None;
    }
    hosts
        .into_iter()
        .find(|host| !official_registry(&format!("https://{host}/")))
}

/// Whether `word` is an address (`https://host/path`,
/// `git@host:path`), not a setting whose name may hold one
/// (`url.https://host/.insteadOf`, `url.git@host:.insteadOf`).
fn is_address(word: &str) -> bool {
    let url = word.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+')
    });
    // A user's name has no dot: `url.git@host:.insteadOf` is a setting.
    let scp = word.split_once('@').is_some_and(|(user, rest)| {
        !user.is_empty()
            && user
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && rest
                .find(':')
                .is_some_and(|colon| !rest[..colon].contains('/'))
    });
    url || scp
}

/// Hosts of the URLs in a word, including one inside a setting's name
/// (`url.https://evil.example/.insteadOf`, `mirror.https://rubygems.org`)
/// and a list of them (`GOPROXY=https://proxy.example,direct`).
fn hosts_in(word: &str) -> impl Iterator<Item = String> + '_ {
    word.split([',', '=', ' ']).filter_map(|piece| {
        if let Some(at) = piece.find("://") {
            let start = piece[..at]
                .char_indices()
                .rfind(|&(_, c)| !c.is_ascii_alphanumeric() && c != '+')
                .map_or(0, |(n, c)| n + c.len_utf8());
            return url_host(&piece[start..]);
        }
        // An scp-like address: `git@git.example.org:acme/app.git`.
        let (user, rest) = piece.split_once('@')?;
        let host = rest.split(':').next()?;
        (!user.is_empty() && rest.contains(':') && host.contains('.'))
            .then(|| authority_host(host))
            .flatten()
    })
}
