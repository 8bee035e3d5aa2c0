//! Defences taken down: a security control switched off, the machine
//! opened to the network (a file server over home or the system, a tunnel
//! to a remote-login port), or access widened in a control plane (a cloud
//! or forge resource opened to anybody, an administering role granted).
//!
//! What is a control, and what switches it off, is the catalogue's table
//! ([`sondera_catalogue::controls`]); here it is read from the command.

use sondera_catalogue::controls::{
    DATA_PORTS, LOGIN_PORTS, PROCESS_KILLERS, SECURITY_UNIT_TOKENS, SERVICE_MANAGERS,
    STOPPING_VERBS, control, hardening_setting,
};
use sondera_catalogue::grammar::{
    self, ADMIN_ROLE_PIECES, ANYONE_TOKENS, BROAD_ROLES, EVERY_ADDRESS, GRANTING_VERBS,
    LOOKING_VERBS, PROTECTION_NOUNS, PUBLIC_ACLS, PUBLIC_SWITCHES, ROLE_OPTION_TOKENS,
    WITHDRAWING_VERBS, pieces,
};
use sondera_catalogue::places::{Place, holds_home, place};

use crate::paths::resolve;
use crate::types::{Invocation, Risk, RiskKind, ShellContext, risk};
use crate::word::Word;

/// A security control switched off by its own program, by a service
/// manager, or by setting a hardening kernel setting to 0.
pub(super) fn controls_off(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    writes_hardening_setting(i, ctx, out);
    let program = i.program.as_str();
    let control = control(program);
    let manager = SERVICE_MANAGERS.contains(&program);
    let killer = PROCESS_KILLERS.contains(&program);
    if control.is_none() && !manager && !killer && program != "sysctl" {
        return;
    }
    let args: Vec<&str> = i.args.iter().map(String::as_str).collect();
    let command = || format!("{} {}", i.program, i.args.join(" "));
    if control.is_some_and(|c| c.switched_off(&args)) {
        out.push(risk(RiskKind::SecurityControlOff, command()));
    }
    if manager && stops_a_control(&args) || killer && names_a_control(&args) {
        out.push(risk(RiskKind::SecurityControlOff, command()));
    }
    if program == "sysctl" {
        let off = args
            .iter()
            .filter_map(|a| a.split_once('='))
            .any(|(key, value)| hardening_setting(key.trim()).is_some() && value.trim() == "0");
        if off {
            out.push(risk(RiskKind::SecurityControlOff, command()));
        }
    }
}

/// A hardening setting written under `/proc/sys` (`echo 0 > ...`, `tee`).
fn writes_hardening_setting(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    let tee_targets = (i.program == "tee").then(|| i.operand_words().collect::<Vec<_>>());
    let targets = i.writes.iter().chain(tee_targets.into_iter().flatten());
    // Only a path through a `sys` directory, or one built at run time, can
    // resolve there.
    for target in targets.filter(|t| t.dynamic || t.text.contains("sys")) {
        let path = resolve(target, ctx).path;
        if let Some(setting) = hardening_setting(&path) {
            out.push(risk(
                RiskKind::SecurityControlOff,
                format!("{} writes {setting}", i.program),
            ));
        }
    }
}

/// A service manager's stopping verb applied to a unit whose name says it
/// is a security control (`systemctl disable --now firewalld`).
fn stops_a_control(args: &[&str]) -> bool {
    let stops = (args.iter().flat_map(|a| grammar::tokens(a)))
        .any(|t| STOPPING_VERBS.contains(&t.as_str()));
    stops && names_a_control(args)
}

/// Whether a word of `args` names a security control (`falcon-sensor`,
/// `osqueryd`).
fn names_a_control(args: &[&str]) -> bool {
    (args.iter().flat_map(|a| grammar::tokens(a)))
        .any(|t| SECURITY_UNIT_TOKENS.contains(&t.as_str()))
}

/// The machine opened to the network: a file server over home, the root
/// or the system, or a tunnel to a remote-login port or to local files.
pub(super) fn exposure(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    if let Some(dir) = served_directory(i, ctx) {
        let path = resolve(&dir, ctx).path;
        let broad = path == ctx.home.trim_end_matches('/')
            || holds_home(&path, ctx.home)
            || place(&path, ctx.workspace_root, ctx.home) == Place::System;
        if broad {
            out.push(risk(
                RiskKind::Exposure,
                format!("{} serves {path} over the network", i.program),
            ));
        }
    }
    if let Some(port) = published_everywhere(i) {
        out.push(risk(
            RiskKind::Exposure,
            format!(
                "{} {} publishes port {port} on every interface",
                i.program,
                i.args.join(" ")
            ),
        ));
    }
    if let Some(what) = tunnelled(i) {
        out.push(risk(
            RiskKind::Exposure,
            format!(
                "{} {} tunnels {what} to the network",
                i.program,
                i.args.join(" ")
            ),
        ));
    }
}

/// The directory a file server serves: its directory option or operand,
/// or the working directory.
fn served_directory(i: &Invocation, ctx: &ShellContext<'_>) -> Option<Word> {
    let args = &i.arg_words;
    let value_of = |options: &[&str]| {
        args.iter()
            .position(|w| options.contains(&w.text.as_str()))
            .and_then(|n| args.get(n + 1).cloned())
    };
    let cwd = || Word::path(ctx.working_dir);
    let first_operand = |skip: usize| {
        args.iter()
            .skip(skip)
            .find(|w| !w.text.starts_with('-') && w.text.parse::<u16>().is_err())
            .cloned()
    };
    let program = i.program.as_str();
    let python_server = crate::interpreters::interpreter(program).is_some()
        && args
            .windows(2)
            .any(|w| w[0].text == "-m" && w[1].text == "http.server");
    if python_server {
        return Some(value_of(&["--directory", "-d"]).unwrap_or_else(cwd));
    }
    match program {
        "php" if args.iter().any(|w| w.text == "-S") => Some(value_of(&["-t"]).unwrap_or_else(cwd)),
        "http-server" | "serve" | "live-server" => Some(first_operand(0).unwrap_or_else(cwd)),
        // BusyBox's `httpd` applet serves `-h DIR`.
        "httpd" | "busybox" if args.iter().any(|w| w.text == "-h") => value_of(&["-h"]),
        "ngrok" => args
            .iter()
            .find_map(|w| w.text.strip_prefix("file://").map(Word::path)),
        _ => None,
    }
}

/// What a tunnel exposes when it is a remote-login port: `ngrok tcp 22`,
/// `cloudflared tunnel --url ssh://localhost:22`, `ssh -R 2222:localhost:22`.
fn tunnelled(i: &Invocation) -> Option<String> {
    let login = |port: &str| port.parse::<u16>().is_ok_and(|p| LOGIN_PORTS.contains(&p));
    let last_port = |spec: &str| spec.rsplit(':').next().is_some_and(login);
    match i.program.as_str() {
        "ngrok" if i.args.first().is_some_and(|a| a == "tcp") => i
            .args
            .iter()
            .skip(1)
            .find(|a| !a.starts_with('-') && (login(a) || last_port(a)))
            .map(|a| format!("port {a}")),
        "cloudflared" => i
            .args
            .iter()
            .find(|a| {
                a.starts_with("ssh://")
                    || a.starts_with("rdp://")
                    || a.starts_with("tcp://") && last_port(a)
            })
            .cloned(),
        "socat" => relayed(&i.args),
        "ssh" | "autossh" => i.args.iter().enumerate().find_map(|(n, a)| {
            let spec = match a.strip_prefix("-R") {
                Some("") => i.args.get(n + 1)?.as_str(),
                Some(attached) => attached,
                None => return None,
            };
            last_port(spec).then(|| format!("the remote-login port of {spec}"))
        }),
        _ => None,
    }
}

/// A remote-login or data store port published on every interface,
/// whatever the tool: bound to `0.0.0.0` (`docker run -p
/// 0.0.0.0:6379:6379`, `kubectl port-forward --address 0.0.0.0`), given a
/// load balancer or a node port (`kubectl expose --type=LoadBalancer`), or
/// opened by name (`az vm open-port --port 22`). Published on the loopback
/// interface, or a web port, it is ordinary work.
fn published_everywhere(i: &Invocation) -> Option<u16> {
    if i.phantom {
        return None;
    }
    let ends_with = |a: &str, suffix: &str| {
        a.len() >= suffix.len()
            && a.is_char_boundary(a.len() - suffix.len())
            && a[a.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
    };
    let everywhere = i.args.iter().any(|a| {
        a.starts_with("0.0.0.0")
            || matches!(a.as_str(), "::" | "[::]" | "open-port")
            || ["=0.0.0.0", "loadbalancer", "nodeport"]
                .iter()
                .any(|suffix| ends_with(a, suffix))
    });
    if !everywhere {
        return None;
    }
    i.args
        .iter()
        .filter(|a| !a.contains('.') || a.starts_with("0.0.0.0:"))
        .flat_map(|a| a.split([':', '=', ',', '/']))
        .filter_map(|piece| piece.parse::<u16>().ok())
        .find(|port| LOGIN_PORTS.contains(port) || DATA_PORTS.contains(port))
}

/// What `socat LISTEN-ADDRESS TARGET` relays from every interface: a
/// login or data store port, of this machine or another
/// (`TCP4-LISTEN:8080,fork TCP4:10.0.0.5:5432`). A listener bound to the
/// loopback interface exposes nothing.
fn relayed(args: &[String]) -> Option<String> {
    let listens = args.iter().map(|a| a.to_ascii_uppercase()).any(|a| {
        let listener = ["TCP-LISTEN:", "TCP4-LISTEN:", "TCP6-LISTEN:"]
            .iter()
            .any(|p| a.starts_with(p));
        let loopback = ["BIND=127.", "BIND=LOCALHOST", "BIND=[::1]", "BIND=::1"]
            .iter()
            .any(|b| a.contains(b));
        listener && !loopback
    });
    if !listens {
        return None;
    }
    args.iter().find_map(|a| {
        let target = ["TCP:", "TCP4:", "TCP6:", "TCP-CONNECT:"]
            .iter()
            .find_map(|p| {
                a.get(..p.len())
                    .filter(|h| h.eq_ignore_ascii_case(p))
                    .map(|_| &a[p.len()..])
            })?;
        let port = target
            .split(',')
            .next()?
            .rsplit(':')
            .next()?
            .parse::<u16>()
            .ok()?;
        (LOGIN_PORTS.contains(&port) || DATA_PORTS.contains(&port)).then(|| {
            format!(
                "port {port} of {}",
                target.split(',').next().unwrap_or(target)
            )
        })
    })
}

/// Access widened in a control plane, whatever the tool: a resource opened
/// to anybody (a public ACL or member, every address let in, a star
/// principal, public visibility, a protection removed) is `exposure`; an
/// administering role or a policy allowing every action granted is
/// `privilege_escalation`. The command's first verb is its operation: one
/// that only looks grants nothing, one that withdraws widens only when what
/// it withdraws is a protection. Every command passes here, so the words
/// are compared in place, in any case, without copies.
/// The length of the shortest word that marks access widened by itself.
const SHORTEST_MARKER: usize = 5;

pub(super) fn access_widened(i: &Invocation, out: &mut Vec<Risk>) {
    // A word inside another command's arguments has no operation of its own.
    if i.phantom {
        return;
    }
    let (mut anybody, mut administers) = (false, false);
    i.for_each_setting(|name, value| {
        anybody |= opens_to_anybody(name, value);
        administers |= grants_administration(name, value);
    });
    let mut protection = false;
    for arg in &i.args {
        // Every marker word is five letters or more (a test holds it).
        if arg.len() < SHORTEST_MARKER {
            continue;
        }
        if arg.starts_with('-') {
            anybody |= PUBLIC_SWITCHES.contains(&arg.as_str());
        } else {
            protection |= pieces(arg).any(|t| is_one_of(t, PROTECTION_NOUNS));
        }
        anybody |= pieces(arg).any(|t| is_one_of(t, ANYONE_TOKENS));
        if arg.contains('{') {
            let document = compact_lowercase(arg);
            anybody |= document.contains("group=all}")
                || document.contains(r#""group":"all""#)
                || document.contains(r#""principal":"*""#)
                || document.contains(r#""principal":{"aws":"*"}"#);
            administers |=
                document.contains(r#""action":"*""#) || document.contains(r#""action":["*"]"#);
        }
    }
    // Most commands carry no marker: their operation is not asked.
    if !anybody && !administers && !protection {
        return;
    }
    let command = || format!("{} {}", i.program, i.args.join(" "));
    match operation(i) {
        Operation::Looks => {}
        Operation::Withdraws => {
            if protection {
                out.push(risk(
                    RiskKind::Exposure,
                    format!("{} removes a protection", command()),
                ));
            }
        }
        Operation::Changes => {
            if anybody {
                out.push(risk(
                    RiskKind::Exposure,
                    format!("{} opens a resource to anybody", command()),
                ));
            }
            if administers {
                out.push(risk(
                    RiskKind::PrivilegeEscalation,
                    format!("{} grants an administering role", command()),
                ));
            }
        }
    }
}

enum Operation {
    Looks,
    Withdraws,
    Changes,
}

/// The command's operation, by its first verb among the words before its
/// options and the method it is told to use (`gh api -X DELETE`).
fn operation(i: &Invocation) -> Operation {
    let method = i
        .args
        .windows(2)
        .find(|w| matches!(w[0].as_str(), "-X" | "--method" | "--request"))
        .map(|w| w[1].as_str());
    let words = i.args.iter().take_while(|a| !a.starts_with('-'));
    let verb = method
        .into_iter()
        .chain(words.flat_map(|w| pieces(w)))
        .find(|t| {
            is_one_of(t, LOOKING_VERBS)
                || is_one_of(t, WITHDRAWING_VERBS)
                || is_one_of(t, GRANTING_VERBS)
        });
    match verb {
        Some(v) if is_one_of(v, LOOKING_VERBS) => Operation::Looks,
        Some(v) if is_one_of(v, WITHDRAWING_VERBS) => Operation::Withdraws,
        _ => Operation::Changes,
    }
}

fn opens_to_anybody(name: &str, value: &str) -> bool {
    let has = |token: &str| pieces(name).any(|t| t.eq_ignore_ascii_case(token));
    let lets_addresses_in = has("cidr")
        || has("source")
        || has("ip") && (has("range") || has("prefix"))
        || has("networks") && (has("authorized") || has("allowed"));
    // Cloud APIs name the public as the group "all" (`--group-names all`,
    // `--values-to-add all` for a snapshot's restore permission).
    let grantees =
        has("names") && has("group") || has("add") || has("grantees") || has("principals");
    let closed = ["off", "none", "false", "disabled"];
    is_one_of(value, PUBLIC_ACLS)
        || name == "visibility" && value.eq_ignore_ascii_case("public")
        || name == "private" && value.eq_ignore_ascii_case("false")
        || name == "public-access" && !is_one_of(value, &closed)
        || name == "principal" && value == "*"
        || grantees && value.eq_ignore_ascii_case("all")
        || lets_addresses_in
            && value
                .split(',')
                .any(|range| is_one_of(range.trim(), EVERY_ADDRESS))
}

fn grants_administration(name: &str, value: &str) -> bool {
    pieces(name).any(|t| is_one_of(t, ROLE_OPTION_TOKENS))
        && pieces(value).any(|t| {
            ADMIN_ROLE_PIECES
                .iter()
                .any(|piece| contains_ignoring_case(t, piece))
                || is_one_of(t, BROAD_ROLES)
        })
}

/// Whether `word` is one of the catalogue's lower-case `words`, in any case.
fn is_one_of(word: &str, words: &[&str]) -> bool {
    words.iter().any(|w| w.eq_ignore_ascii_case(word))
}

fn contains_ignoring_case(text: &str, lower: &str) -> bool {
    text.as_bytes()
        .windows(lower.len())
        .any(|w| w.eq_ignore_ascii_case(lower.as_bytes()))
}

/// A policy document as text to search: lower case, without white space.
fn compact_lowercase(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze;
    use crate::types::TEST_CONTEXT;
    use sondera_catalogue::controls::HARDENING_SETTINGS;

    fn has(command: &str, kind: RiskKind) -> bool {
        analyze(command, &TEST_CONTEXT).has(kind)
    }

    #[test]
    fn controls_switched_off() {
        for c in sondera_catalogue::controls::CONTROLS {
            assert!(
                has(c.example, RiskKind::SecurityControlOff),
                "{}",
                c.example
            );
        }
        for setting in HARDENING_SETTINGS {
            let command = format!("sysctl -w {setting}=0");
            assert!(has(&command, RiskKind::SecurityControlOff), "{command}");
        }
        for command in [
            "systemctl disable --now firewalld",
            "service apparmor stop",
            "echo 0 > /proc/sys/kernel/randomize_va_space",
            "pkill -9 -f falcon-sensor",
            "killall osqueryd",
        ] {
            assert!(has(command, RiskKind::SecurityControlOff), "{command}");
        }
        for command in [
            "systemctl status firewalld",
            "systemctl stop my-dev-server",
            "sysctl -w vm.max_map_count=262144",
            "sysctl kernel.randomize_va_space",
            "pkill -f 'node server.js'",
            "killall webpack",
        ] {
            assert!(!has(command, RiskKind::SecurityControlOff), "{command}");
        }
    }

    #[test]
    fn the_machine_exposed() {
        for command in [
            "python3 -m http.server 80 --directory ~",
            "php -S 0.0.0.0:8080 -t /",
            "http-server / -p 9000",
            "busybox httpd -f -p 8080 -h /home/dev",
            "ngrok tcp 22",
            "ngrok http file:///home/dev",
            "cloudflared tunnel --url ssh://localhost:22",
            "ssh -R 0.0.0.0:2222:localhost:22 user@203.0.113.7",
            "socat TCP-LISTEN:15432,fork TCP:db.internal:5432",
            "socat tcp4-listen:2222,reuseaddr,fork tcp4:10.1.2.3:22",
            "docker run -d -p 0.0.0.0:6379:6379 redis",
            "kubectl port-forward --address 0.0.0.0 svc/db 5432:5432",
            "kubectl expose deployment db --type=LoadBalancer --port 5432",
            "az vm open-port --port 22 --resource-group rg --name vm",
        ] {
            assert!(has(command, RiskKind::Exposure), "{command}");
        }
        for command in [
            "python3 -m http.server 8000",
            "python3 -m http.server 8000 --directory dist",
            "ngrok http 3000",
            "php -S localhost:8000 -t public",
            "ssh -L 5432:localhost:5432 bastion",
            "ssh -R 8080:localhost:3000 tunnel.example",
            "cloudflared tunnel --url http://localhost:3000",
            "socat TCP-LISTEN:15432,bind=127.0.0.1,fork TCP:db.internal:5432",
            "socat TCP-LISTEN:8080,fork TCP:localhost:3000",
            "socat - TCP:db.internal:5432",
            "docker run -d --name db -p 127.0.0.1:5432:5432 postgres:16",
            "docker run -d -p 0.0.0.0:8080:80 nginx",
            "kubectl port-forward svc/db 5432:5432",
            "kubectl expose deployment web --type=LoadBalancer --port 80",
            "az vm open-port --port 443 --resource-group rg --name vm",
        ] {
            assert!(!has(command, RiskKind::Exposure), "{command}");
        }
    }

    /// The first verb is the operation: a resource named after a looking
    /// verb does not hide a grant, and a withdrawal widens only when it
    /// removes a protection.
    #[test]
    fn access_widened_by_any_tool() {
        for command in [
            "kubectl create rolebinding get-pods --clusterrole=admin --user=x@example.com",
            "mytool users create --role Owner --email x@example.com",
            "gh api --method PUT repos/acme/app/collaborators/x -F permission=admin",
        ] {
            assert!(has(command, RiskKind::PrivilegeEscalation), "{command}");
        }
        for command in [
            "b2 bucket update media allPublic --acl public-read",
            "aws ec2 authorize-security-group-ingress --group-id sg-1 --ip-permissions --cidr-ip=0.0.0.0/0",
            "gh api -X DELETE repos/acme/app/branches/main/protection",
            "aws ec2 modify-snapshot-attribute --snapshot-id snap-1 --attribute createVolumePermission --operation-type add --group-names all",
            "aws rds modify-db-snapshot-attribute --db-snapshot-identifier s --attribute-name restore --values-to-add all",
            "aws ec2 modify-image-attribute --image-id ami-1 --launch-permission Add=[{Group=all}]",
            "gcloud sql instances patch prod --authorized-networks=0.0.0.0/0",
        ] {
            assert!(has(command, RiskKind::Exposure), "{command}");
        }
        for command in [
            "aws iam get-policy --policy-arn arn:aws:iam::aws:policy/AdministratorAccess",
            "aws iam detach-role-policy --role-name ci --policy-arn arn:aws:iam::aws:policy/AdministratorAccess",
            "kubectl describe clusterrole cluster-admin",
            "docker run -e ROLE=admin app",
            "aws ec2 describe-security-groups --filters Name=ip-permission.cidr,Values=0.0.0.0/0",
            "ip route add 0.0.0.0/0 via 10.0.0.1",
            "aws s3api put-public-access-block --bucket b --public-access-block-configuration BlockPublicAcls=true",
            "aws rds modify-db-snapshot-attribute --db-snapshot-identifier s --attribute-name restore --values-to-add 123456789012",
            "gcloud sql instances patch prod --authorized-networks=203.0.113.0/24",
            "pdm install --group all",
        ] {
            assert!(
                !has(command, RiskKind::PrivilegeEscalation) && !has(command, RiskKind::Exposure),
                "{command}"
            );
        }
    }

    #[test]
    fn no_marker_is_shorter_than_the_words_read_for_markers() {
        let markers = PUBLIC_SWITCHES
            .iter()
            .chain(ANYONE_TOKENS)
            .chain(PROTECTION_NOUNS);
        for marker in markers {
            assert!(marker.len() >= SHORTEST_MARKER, "{marker}");
        }
    }
}
