//! Network destinations: hosts normalised and classified.
//!
//! An agent that is told to reach the instance metadata service rarely writes
//! `169.254.169.254`: `2852039166`, `0xa9fea9fe`, `0251.0376.0251.0376` and
//! `[::ffff:169.254.169.254]` reach the same address. Every IP literal is
//! parsed the way the C library's `inet_aton` and the URL standard parse it,
//! reduced to its canonical form, and classified by address range, so a
//! policy on `metadata` or `private` cannot be sidestepped by spelling. Names
//! are classified by what they are known to mean (`localhost`,
//! `metadata.google.internal`, `*.internal`); nothing is resolved.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of destination a host is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
#[non_exhaustive]
pub enum HostClass {
    /// This machine: `localhost`, 127.0.0.0/8, `::1`, and the unspecified
    /// addresses (`0.0.0.0` connects to the local host on Linux).
    Loopback,
    /// A private network: RFC 1918, carrier-grade NAT, IPv6 unique-local, and
    /// names under `.internal`, `.local`, `.lan`, `.home.arpa`.
    Private,
    /// 169.254.0.0/16 and fe80::/10, other than metadata endpoints.
    LinkLocal,
    /// A cloud instance metadata service, which hands out credentials.
    Metadata,
    /// Anything else: a public address or an ordinary DNS name.
    Public,
}

impl HostClass {
    /// The class's name in policies (`loopback`, `metadata`, ...).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One destination host, normalised and classified.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Host {
    /// Lower case without a trailing dot; an IP literal in canonical form.
    pub name: String,
    /// What kind of destination it is.
    pub class: HostClass,
    /// The host is an IP address rather than a name.
    pub ip_literal: bool,
    /// The host was an IP address written in a non-canonical form (integer,
    /// hex, octal, shortened, or IPv4 inside IPv6), a common way to slip past
    /// string matching.
    pub obfuscated: bool,
}

const METADATA_NAMES: &[&str] = &[
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.tencentyun.com",
];
const PRIVATE_SUFFIXES: &[&str] = &[".internal", ".local", ".lan", ".home.arpa", ".intranet"];

impl Host {
    /// Parses and classifies a host as written in a URL or command (brackets
    /// around IPv6 literals allowed, no port).
    ///
    /// A host that is not plain ASCII, or holds a percent sign, is read the
    /// way browsers and curl read it (the WHATWG URL host parser:
    /// percent-decoding, IDNA mapping of full-width and other compatibility
    /// forms, IPv4 numbers in any radix), so `１６９.２５４.１６９.２５４` and
    /// `%31%36%39.254.169.254` are 169.254.169.254. Such spellings of an ASCII
    /// host, and hosts that parser refuses, are `obfuscated`; an
    /// internationalised name (`münchen.de`, kept as `xn--mnchen-3ya.de`) is not.
    pub fn parse(raw: &str) -> Self {
        let trimmed = raw.trim();
        if !trimmed.is_ascii() || trimmed.contains('%') {
            return Self::parse_encoded(trimmed);
        }
        let trimmed = trimmed.trim_end_matches('.');
        let unbracketed = trimmed
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(trimmed);
        let lower = unbracketed.to_ascii_lowercase();
        match parse_ip(&lower) {
            Some(ip) => Self::address(ip, &lower),
            None => match echoed_address(&lower) {
                Some(ip) => Self {
                    class: classify_ip(ip),
                    ip_literal: false,
                    // Local development uses these names (`app.127.0.0.1.nip.io`);
                    // the class says where they lead.
                    obfuscated: false,
                    name: lower,
                },
                None => Self {
                    class: classify_name(&lower),
                    ip_literal: false,
                    obfuscated: false,
                    name: lower,
                },
            },
        }
    }

    fn address(ip: IpAddr, written: &str) -> Self {
        let name = ip.to_string();
        Self {
            class: classify_ip(ip),
            ip_literal: true,
            obfuscated: name != written,
            name,
        }
    }

    /// A host with non-ASCII characters or percent-escapes, through the URL
    /// standard's host parser.
    fn parse_encoded(raw: &str) -> Self {
        let unreadable = || Self {
            name: raw.to_lowercase(),
            class: HostClass::Public,
            ip_literal: false,
            obfuscated: true,
        };
        match url::Host::parse(raw) {
            Ok(url::Host::Ipv4(v4)) => Self::address(IpAddr::V4(v4), raw),
            Ok(url::Host::Ipv6(v6)) => {
                Self::address(v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4), raw)
            }
            Ok(url::Host::Domain(domain)) => {
                let name = domain.trim_end_matches('.').to_string();
                let internationalised = name.split('.').any(|label| label.starts_with("xn--"));
                // An ASCII name is sometimes written otherwise to slip past
                // matching; the IPv4 forms the parser already resolved.
                let name_as_written = match parse_ip(&name) {
                    Some(ip) => return Self::address(ip, raw),
                    None => name,
                };
                Self {
                    class: classify_name(&name_as_written),
                    ip_literal: false,
                    obfuscated: !internationalised,
                    name: name_as_written,
                }
            }
            Err(_) => unreadable(),
        }
    }
}

/// Public DNS services that answer any name under them with the address it
/// spells (`169.254.169.254.nip.io`, `10-0-0-1.sslip.io`): the name is that
/// address.
const ADDRESS_ECHO_DOMAINS: &[&str] = &[".nip.io", ".sslip.io", ".xip.io", ".traefik.me"];

/// The address a name under an address-echoing DNS service stands for.
fn echoed_address(name: &str) -> Option<IpAddr> {
    let spelled = ADDRESS_ECHO_DOMAINS
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))?;
    // The address is the last four labels, or the last label with dashes.
    let labels: Vec<&str> = spelled.split('.').collect();
    let dotted = labels[labels.len().saturating_sub(4)..].join(".");
    let dashed = labels
        .last()
        .map(|l| l.replace('-', "."))
        .unwrap_or_default();
    parse_ipv4(&dotted)
        .or_else(|| parse_ipv4(&dashed))
        .map(IpAddr::V4)
}

fn classify_name(name: &str) -> HostClass {
    if name == "localhost" || name.ends_with(".localhost") {
        HostClass::Loopback
    } else if METADATA_NAMES.contains(&name) {
        HostClass::Metadata
    } else if PRIVATE_SUFFIXES.iter().any(|s| name.ends_with(s)) {
        HostClass::Private
    } else {
        HostClass::Public
    }
}

/// An IP address as `inet_aton` and the URL standard accept it: one to four
/// dot-separated parts, each decimal, `0x` hex or `0`-prefixed octal, the last
/// part filling the remaining bytes; or an IPv6 literal. IPv4-mapped and
/// IPv4-compatible IPv6 addresses become the IPv4 address they carry.
pub fn parse_ip(text: &str) -> Option<IpAddr> {
    if text.contains(':') {
        let v6: Ipv6Addr = text.split('%').next()?.parse().ok()?;
        return Some(match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        });
    }
    parse_ipv4(text).map(IpAddr::V4)
}

fn parse_ipv4(text: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let numbers = parts
        .iter()
        .map(|p| ipv4_part(p))
        .collect::<Option<Vec<u64>>>()?;
    let (last, leading) = numbers.split_last()?;
    if leading.iter().any(|&n| n > 255) {
        return None;
    }
    let last_bits = 8 * (5 - numbers.len() as u32);
    if last_bits < 64 && *last >= 1u64 << last_bits {
        return None;
    }
    let value = leading
        .iter()
        .enumerate()
        .fold(*last, |acc, (i, &n)| acc | n << (24 - 8 * i as u32));
    Some(Ipv4Addr::from(u32::try_from(value).ok()?))
}

fn ipv4_part(part: &str) -> Option<u64> {
    let (digits, radix) =
        if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
            (hex, 16)
        } else if part.len() > 1 && part.starts_with('0') {
            (&part[1..], 8)
        } else {
            (part, 10)
        };
    if digits.is_empty() {
        return (radix == 16).then_some(0);
    }
    if digits.len() > 12 || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

fn classify_ip(ip: IpAddr) -> HostClass {
    match ip {
        IpAddr::V4(v4) => classify_ipv4(v4),
        IpAddr::V6(v6) => classify_ipv6(v6),
    }
}

fn classify_ipv4(ip: Ipv4Addr) -> HostClass {
    let [a, b, _, _] = ip.octets();
    if matches!(ip.octets(), [169, 254, 169, 254] | [169, 254, 170, 2])
        || ip.octets() == [100, 100, 100, 200]
    {
        HostClass::Metadata
    } else if ip.is_loopback() || ip.is_unspecified() || a == 0 {
        HostClass::Loopback
    } else if ip.is_link_local() {
        HostClass::LinkLocal
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        HostClass::Private
    } else {
        HostClass::Public
    }
}

fn classify_ipv6(ip: Ipv6Addr) -> HostClass {
    let first = ip.segments()[0];
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        HostClass::Metadata
    } else if ip.is_loopback() || ip.is_unspecified() {
        HostClass::Loopback
    } else if first & 0xffc0 == 0xfe80 {
        HostClass::LinkLocal
    } else if first & 0xfe00 == 0xfc00 {
        HostClass::Private
    } else {
        HostClass::Public
    }
}

/// Whether a bare word (no scheme) names a host: an address, `localhost`, a
/// known metadata name, or a dotted name ending in a letter label. A bare
/// small number is some option's value (a port, a timeout), not an address;
/// a large one is how `169.254.169.254` is hidden (`2852039166`).
pub fn plausible_host(word: &str) -> bool {
    if word.bytes().all(|b| b.is_ascii_digit()) {
        return word.parse::<u64>().is_ok_and(|n| n >= 1 << 24);
    }
    let host = Host::parse(word);
    host.ip_literal
        || matches!(host.class, HostClass::Loopback | HostClass::Metadata)
        || host
            .name
            .rsplit_once('.')
            .is_some_and(|(_, tld)| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()))
}

/// The host of a URL (`scheme://[user@]host[:port]/...`).
pub fn url_host(text: &str) -> Option<String> {
    let (scheme, rest) = text.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return None;
    }
    authority_host(rest)
}

/// The host at the start of `text`, an authority (`[user@]host[:port]`)
/// optionally followed by a path.
pub fn authority_host(text: &str) -> Option<String> {
    let authority = text.split(['/', '?', '#', '\\']).next()?;
    let host_port = authority.rsplit('@').next()?;
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        host_port.split(':').next()?
    };
    // A host followed by something that cannot be part of it (`$VAR`, a
    // quote) ends there: `http://169.254.170.2$URI` reaches 169.254.170.2.
    // Characters beyond ASCII stay: the host parser maps full-width digits
    // and dots (see [`Host::parse`]).
    let end = host
        .find(|c: char| c.is_ascii() && !(c.is_ascii_alphanumeric() || "-._:%".contains(c)))
        .unwrap_or(host.len());
    let host = &host[..end];
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Hosts of every URL inside a text (`see https://a.example/x and ftp://b`).
pub fn hosts_in_text(text: &str) -> Vec<String> {
    let mut hosts = Vec::new();
    for (at, _) in text.match_indices("://") {
        let start = text[..at]
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || "+-.".contains(*c)))
            .map_or(0, |(i, c)| i + c.len_utf8());
        if start == at {
            continue;
        }
        // The authority ends where its path, query or fragment starts: a
        // scan to the URL's end would read the rest of `a://b/a://b/...`
        // once per URL.
        let after = at + "://".len();
        let end = text[after..]
            .find(|c: char| c.is_whitespace() || "\"'<>`/?#\\".contains(c))
            .map_or(text.len(), |i| after + i);
        hosts.extend(url_host(&text[start..end]));
    }
    hosts
}

/// The path of a `file:` URL (`file:///etc/shadow`, `file://localhost/x`,
/// `FILE:/x`), which reads a local file wherever a URL is taken.
pub fn file_url_path(text: &str) -> Option<&str> {
    let scheme = text.get(..5)?;
    if !scheme.eq_ignore_ascii_case("file:") {
        return None;
    }
    let rest = &text[5..];
    let path = match rest.strip_prefix("//") {
        Some(authority) => {
            let at = authority.find('/')?;
            let host = &authority[..at];
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return None;
            }
            &authority[at..]
        }
        None => rest,
    };
    path.starts_with('/').then_some(path)
}

/// Whether `source` (a URL or `host[:port]`) is one of the public
/// registries package managers use by default.
pub fn official_registry(source: &str) -> bool {
    let host = url_host(source)
        .or_else(|| authority_host(source))
        .unwrap_or_default();
    matches!(
        host.as_str(),
        "pypi.org"
            | "upload.pypi.org"
            | "test.pypi.org"
            | "pypi.python.org"
            | "files.pythonhosted.org"
            | "registry.npmjs.org"
            | "registry.yarnpkg.com"
            | "index.crates.io"
            | "crates.io"
            | "static.crates.io"
            | "rubygems.org"
            | "proxy.golang.org"
    )
}

/// Where a credential sent to a host goes, judged by the service its
/// variable is named for ([`CredentialService::fit`]); ordered from the
/// most fitting to the least.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CredentialFit {
    /// A host of the credential's service: `$GITHUB_TOKEN` to
    /// `api.github.com`, `$JENKINS_TOKEN` to `jenkins.acme.example`.
    Belongs,
    /// A host that may be the service's under another name, or may not:
    /// a self-hostable service's credential to a host that does not name
    /// it, or a hosted service's named only in a label anybody can make
    /// (`github.acme.example` is an Enterprise server or a look-alike).
    Unsure,
    /// Not the service's: a hosted service's credential to a host that
    /// does not name it, or to a bare address.
    Foreign,
}

/// A service credential variables are named for, and how hosts name it.
#[derive(Debug)]
struct Service {
    /// The first word of the variable's name, lower-cased.
    word: &'static str,
    /// What a host of the service has in one of its labels.
    spellings: &'static [&'static str],
    /// Reached at its own domains only, so a host that names it anywhere
    /// else is not it. A self-hostable service (Jenkins, GitLab, Jira) runs
    /// at whatever names its owners give it.
    hosted: bool,
}

/// Services whose hosts spell them otherwise than their variables do, and
/// those that are hosted only. Any other first word of a variable's name
/// names a self-hostable service spelled as the word.
const SERVICES: &[Service] = &[
    Service {
        word: "gh",
        spellings: &["github"],
        hosted: true,
    },
    Service {
        word: "github",
        spellings: &["github"],
        hosted: true,
    },
    Service {
        word: "hf",
        spellings: &["huggingface"],
        hosted: true,
    },
    Service {
        word: "huggingface",
        spellings: &["huggingface"],
        hosted: true,
    },
    Service {
        word: "aws",
        spellings: &["amazonaws"],
        hosted: true,
    },
    Service {
        word: "az",
        spellings: &["azure"],
        hosted: true,
    },
    Service {
        word: "azure",
        spellings: &["azure", "microsoftonline", "windows"],
        hosted: true,
    },
    Service {
        word: "gcp",
        spellings: &["googleapis"],
        hosted: true,
    },
    Service {
        word: "gcloud",
        spellings: &["googleapis"],
        hosted: true,
    },
    Service {
        word: "google",
        spellings: &["google", "googleapis"],
        hosted: true,
    },
    Service {
        word: "openai",
        spellings: &["openai"],
        hosted: true,
    },
    Service {
        word: "anthropic",
        spellings: &["anthropic"],
        hosted: true,
    },
    Service {
        word: "stripe",
        spellings: &["stripe"],
        hosted: true,
    },
    Service {
        word: "slack",
        spellings: &["slack"],
        hosted: true,
    },
    Service {
        word: "twilio",
        spellings: &["twilio"],
        hosted: true,
    },
    Service {
        word: "sendgrid",
        spellings: &["sendgrid"],
        hosted: true,
    },
    Service {
        word: "mailgun",
        spellings: &["mailgun"],
        hosted: true,
    },
    Service {
        word: "cf",
        spellings: &["cloudflare"],
        hosted: true,
    },
    Service {
        word: "cloudflare",
        spellings: &["cloudflare"],
        hosted: true,
    },
    Service {
        word: "vercel",
        spellings: &["vercel"],
        hosted: true,
    },
    Service {
        word: "netlify",
        spellings: &["netlify"],
        hosted: true,
    },
    Service {
        word: "heroku",
        spellings: &["heroku"],
        hosted: true,
    },
    Service {
        word: "dd",
        spellings: &["datadoghq"],
        hosted: true,
    },
    Service {
        word: "datadog",
        spellings: &["datadoghq", "datadog"],
        hosted: true,
    },
    Service {
        word: "do",
        spellings: &["digitalocean"],
        hosted: true,
    },
    Service {
        word: "digitalocean",
        spellings: &["digitalocean"],
        hosted: true,
    },
    Service {
        word: "npm",
        spellings: &["npmjs", "npm"],
        hosted: true,
    },
    Service {
        word: "pypi",
        spellings: &["pypi"],
        hosted: true,
    },
    Service {
        word: "twine",
        spellings: &["pypi"],
        hosted: true,
    },
    Service {
        word: "dockerhub",
        spellings: &["docker"],
        hosted: true,
    },
    Service {
        word: "linear",
        spellings: &["linear"],
        hosted: true,
    },
    Service {
        word: "notion",
        spellings: &["notion"],
        hosted: true,
    },
    Service {
        word: "discord",
        spellings: &["discord"],
        hosted: true,
    },
    Service {
        word: "telegram",
        spellings: &["telegram"],
        hosted: true,
    },
    Service {
        word: "circleci",
        spellings: &["circleci"],
        hosted: true,
    },
    Service {
        word: "snyk",
        spellings: &["snyk"],
        hosted: true,
    },
    Service {
        word: "jira",
        spellings: &["jira", "atlassian"],
        hosted: false,
    },
    Service {
        word: "confluence",
        spellings: &["confluence", "atlassian"],
        hosted: false,
    },
    Service {
        word: "artifactory",
        spellings: &["artifactory", "jfrog"],
        hosted: false,
    },
    Service {
        word: "jfrog",
        spellings: &["jfrog", "artifactory"],
        hosted: false,
    },
    Service {
        word: "tfe",
        spellings: &["terraform"],
        hosted: false,
    },
];

/// First words of variable names that name no service in particular.
const GENERIC: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "auth",
    "token",
    "client",
    "app",
    "service",
    "bearer",
    "my",
    "db",
    "database",
    "encryption",
    "signing",
    "master",
    "admin",
    "root",
    "user",
    "session",
    "refresh",
    "personal",
    "test",
    "prod",
    "dev",
    "staging",
    "local",
    "default",
    "key",
    "password",
    "pass",
    "passwd",
    "pat",
    "oauth",
    "webhook",
    "bot",
    "deploy",
    "ci",
    "registry",
    "cloud",
    "server",
    "web",
    "backend",
    "frontend",
];

/// The service a credential variable is named for: the first word of its
/// name, as its hosts spell it.
#[derive(Debug, Clone)]
pub struct CredentialService {
    word: String,
    known: Option<&'static Service>,
}

/// The service `variable` is named for; `None` when the name names no
/// service in particular (`API_KEY`, `TOKEN`, `ADMIN_PASSWORD`), whose
/// value could belong anywhere.
pub fn credential_service(variable: &str) -> Option<CredentialService> {
    let word = variable
        .split('_')
        .find(|w| !w.is_empty())?
        .to_ascii_lowercase();
    let known = SERVICES.iter().find(|s| s.word == word);
    if known.is_none() && (word.len() < 3 || GENERIC.contains(&word.as_str())) {
        return None;
    }
    Some(CredentialService { word, known })
}

impl CredentialService {
    /// Where its credential goes when sent to `host`. A hosted service's
    /// hosts have a spelling of it in their registrable label (`github` of
    /// `api.github.com`); a self-hostable one's in any label.
    pub fn fit(&self, host: &Host) -> CredentialFit {
        let hosted = self.known.is_some_and(|s| s.hosted);
        let spelled = |label: &str| match self.known {
            Some(service) => service.spellings.iter().any(|s| label.contains(s)),
            None => label.contains(self.word.as_str()),
        };
        if host.ip_literal {
            return if hosted {
                CredentialFit::Foreign
            } else {
                CredentialFit::Unsure
            };
        }
        let labels: Vec<&str> = host.name.split('.').collect();
        let registrable = registrable_label(&labels);
        let own = spelled(registrable)
            // Azure's resources live under names Azure assigns per service.
            || registrable == "azure" && labels.contains(&self.word.as_str());
        let named = labels.iter().any(|label| spelled(label));
        match (own, named, hosted) {
            (true, _, _) | (false, true, false) => CredentialFit::Belongs,
            (false, true, true) | (false, false, false) => CredentialFit::Unsure,
            (false, false, true) => CredentialFit::Foreign,
        }
    }
}

/// The label a host's owner registered: the one before the public suffix
/// (`github` of `api.github.com`, `bbc` of `www.bbc.co.uk`).
fn registrable_label<'a>(labels: &[&'a str]) -> &'a str {
    match labels {
        [.., owner, second, country]
            if country.len() == 2
                && matches!(*second, "co" | "com" | "org" | "net" | "ac" | "gov" | "edu") =>
        {
            owner
        }
        [.., owner, _suffix] => owner,
        [only] => only,
        [] => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_variable_belongs_at_its_services_hosts() {
        use CredentialFit::{Belongs, Foreign, Unsure};
        for (variable, host, fit) in [
            ("GITHUB_TOKEN", "api.github.com", Some(Belongs)),
            ("GH_TOKEN", "raw.githubusercontent.com", Some(Belongs)),
            ("NPM_TOKEN", "registry.npmjs.org", Some(Belongs)),
            ("HF_TOKEN", "huggingface.co", Some(Belongs)),
            (
                "AWS_SECRET_ACCESS_KEY",
                "bucket.s3.amazonaws.com",
                Some(Belongs),
            ),
            ("OPENAI_API_KEY", "res.openai.azure.com", Some(Belongs)),
            ("DATADOG_API_KEY", "api.datadoghq.com", Some(Belongs)),
            ("DD_API_KEY", "api.datadoghq.com", Some(Belongs)),
            ("TWINE_PASSWORD", "upload.pypi.org", Some(Belongs)),
            ("JIRA_TOKEN", "acme.atlassian.net", Some(Belongs)),
            ("JIRA_TOKEN", "jira.acme.example", Some(Belongs)),
            ("JENKINS_TOKEN", "jenkins.acme-corp.com", Some(Belongs)),
            ("ACME_TOKEN", "api.acme.co.uk", Some(Belongs)),
            ("GITHUB_TOKEN", "github.evil.example", Some(Unsure)),
            ("NPM_TOKEN", "npm.acme.example", Some(Unsure)),
            ("JENKINS_TOKEN", "collector.evil.example", Some(Unsure)),
            ("NEXUS_PASSWORD", "203.0.113.50", Some(Unsure)),
            ("OPENAI_API_KEY", "api.anthropic.com", Some(Foreign)),
            ("OPENAI_API_KEY", "res.evil.azure.com", Some(Foreign)),
            ("SLACK_TOKEN", "203.0.113.9", Some(Foreign)),
            ("TWINE_PASSWORD", "uploads.evil.example", Some(Foreign)),
            ("API_KEY", "evil.example", None),
            ("ADMIN_PASSWORD", "evil.example", None),
            ("X_TOKEN", "evil.example", None),
        ] {
            assert_eq!(
                credential_service(variable).map(|s| s.fit(&Host::parse(host))),
                fit,
                "{variable} at {host}"
            );
        }
    }

    #[test]
    fn every_service_is_spelled_and_listed_once() {
        for (n, service) in SERVICES.iter().enumerate() {
            assert!(!service.spellings.is_empty(), "{}", service.word);
            assert!(!GENERIC.contains(&service.word), "{}", service.word);
            assert!(
                SERVICES[n + 1..].iter().all(|s| s.word != service.word),
                "{} is listed twice",
                service.word
            );
        }
    }

    #[test]
    fn metadata_addresses_are_recognised_however_they_are_written() {
        for spelling in [
            "169.254.169.254",
            "2852039166",
            "0xa9fea9fe",
            "0xA9.0xFE.0xA9.0xFE",
            "0251.0376.0251.0376",
            "169.254.43518",
            "[::ffff:169.254.169.254]",
            "::ffff:a9fe:a9fe",
            "metadata.google.internal.",
            "METADATA.GOOGLE.INTERNAL",
            "[fd00:ec2::254]",
        ] {
            let host = Host::parse(spelling);
            assert_eq!(host.class, HostClass::Metadata, "{spelling}");
        }
        let host = Host::parse("0xa9fea9fe");
        assert_eq!(host.name, "169.254.169.254");
        assert!(host.obfuscated && host.ip_literal);
        assert!(!Host::parse("169.254.169.254").obfuscated);
    }

    #[test]
    fn hosts_are_read_as_browsers_read_them() {
        for spelling in [
            "\u{ff11}\u{ff16}\u{ff19}.\u{ff12}\u{ff15}\u{ff14}.\u{ff11}\u{ff16}\u{ff19}.\u{ff12}\u{ff15}\u{ff14}",
            "%31%36%39.254.169.254",
            "169\u{3002}254\u{3002}169\u{3002}254",
            "\u{2460}\u{2465}\u{2468}.\u{2461}\u{2464}\u{2463}.\u{2460}\u{2465}\u{2468}.\u{2461}\u{2464}\u{2463}",
            "169.254.169.254%2e",
            "\u{24dc}\u{24d4}\u{24e3}\u{24d0}\u{24d3}\u{24d0}\u{24e3}\u{24d0}.google.internal",
        ] {
            let host = Host::parse(spelling);
            assert_eq!(
                host.class,
                HostClass::Metadata,
                "{spelling} is {}",
                host.name
            );
            assert!(host.obfuscated, "{spelling} hides what it is");
        }
        for echoed in ["169.254.169.254.nip.io", "app.169-254-169-254.sslip.io"] {
            let host = Host::parse(echoed);
            assert_eq!(host.class, HostClass::Metadata, "{echoed}");
        }
        assert_eq!(Host::parse("nip.io").class, HostClass::Public);
        assert_eq!(
            Host::parse("app.127.0.0.1.nip.io").class,
            HostClass::Loopback
        );
        let idn = Host::parse("M\u{fc}nchen.de");
        assert_eq!(idn.name, "xn--mnchen-3ya.de");
        assert!(
            !idn.obfuscated,
            "an internationalised name is an ordinary name"
        );
        for refused in [
            "exa mple.com%00",
            "[::ffff:\u{ff11}\u{ff16}\u{ff19}.254.169.254]",
        ] {
            assert!(
                Host::parse(refused).obfuscated,
                "{refused}: a host the URL parser refuses is obfuscated"
            );
        }
        assert_eq!(
            url_host("http://\u{ff11}\u{ff16}\u{ff19}.254.169.254/latest")
                .map(|h| Host::parse(&h).name),
            Some("169.254.169.254".to_string()),
            "full-width digits are part of the host"
        );
    }

    #[test]
    fn address_ranges_are_classified() {
        for (host, class) in [
            ("127.0.0.1", HostClass::Loopback),
            ("127.1", HostClass::Loopback),
            ("0", HostClass::Loopback),
            ("0.0.0.0", HostClass::Loopback),
            ("[::1]", HostClass::Loopback),
            ("localhost", HostClass::Loopback),
            ("api.localhost", HostClass::Loopback),
            ("10.0.0.8", HostClass::Private),
            ("172.16.4.1", HostClass::Private),
            ("192.168.1.1", HostClass::Private),
            ("100.64.0.1", HostClass::Private),
            ("fd12:3456::1", HostClass::Private),
            ("db.internal", HostClass::Private),
            ("printer.local", HostClass::Private),
            ("169.254.1.1", HostClass::LinkLocal),
            ("[fe80::1]", HostClass::LinkLocal),
            ("8.8.8.8", HostClass::Public),
            ("172.32.0.1", HostClass::Public),
            ("github.com", HostClass::Public),
            ("[2606:4700::1111]", HostClass::Public),
        ] {
            assert_eq!(Host::parse(host).class, class, "{host}");
        }
    }

    #[test]
    fn names_that_look_numeric_are_not_addresses() {
        for name in [
            "1.2.3.4.5",
            "256.1.1.1",
            "08.1.1.1",
            "1e3",
            "0xg",
            "example.com",
        ] {
            let host = Host::parse(name);
            assert!(!host.ip_literal, "{name} parsed as {}", host.name);
        }
        assert_eq!(
            parse_ip("1.2.3.4"),
            Some(IpAddr::V4(Ipv4Addr::new(1, 2, 3, 4)))
        );
        assert_eq!(parse_ip("4294967296"), None);
    }

    #[test]
    fn hosts_are_found_in_urls_and_free_text() {
        assert_eq!(
            url_host("https://user:pw@Example.COM:8443/x?y").as_deref(),
            Some("example.com")
        );
        assert_eq!(url_host("http://[::1]:8080/").as_deref(), Some("::1"));
        assert_eq!(url_host("not a url"), None);
        // A scheme after a character wider than a byte (found by fuzzing:
        // this once panicked on a char boundary).
        assert_eq!(hosts_in_text("\u{fffd}http://a.example/"), ["a.example"]);
        assert!(hosts_in_text("\u{e9}://x").is_empty());
        assert_eq!(
            hosts_in_text("post to https://a.example/x, then \"ftp://b.example\" and ://nothing"),
            ["a.example", "b.example"]
        );
    }
}
