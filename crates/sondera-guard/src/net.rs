//! Network egress: the hosts a step reaches, checked against the allowlist
//! whoever runs the harness configures. How hosts are read and classified
//! is the catalogue's ([`sondera_catalogue::hosts`], re-exported here).

use serde_json::Value;

pub use sondera_catalogue::hosts::*;

use crate::classify::{BODY_KEYS, METHOD_KEYS};
use crate::json::visit_strings;

/// Hosts an agent may reach, configured by whoever runs the harness.
///
/// A pattern is a host name (`github.com`, matching only itself), a wildcard
/// (`*.github.com`, matching every name under it but not `github.com`), or an
/// IP address in any form [`parse_ip`] accepts. Matching is on normalised
/// hosts, so `GitHub.com.` is `github.com` and `0x7f.1` is `127.0.0.1`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostAllowlist {
    exact: Vec<String>,
    suffixes: Vec<String>,
}

/// A pattern that is not a host, a wildcard or an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidHostPattern {
    /// The pattern as configured.
    pub pattern: String,
    /// Why it is not a host, a wildcard or an address.
    pub reason: &'static str,
}

impl std::fmt::Display for InvalidHostPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "invalid allowed-host pattern `{}`: {} (write `example.com`, `*.example.com` or an IP address)",
            self.pattern, self.reason
        )
    }
}

impl std::error::Error for InvalidHostPattern {}

impl HostAllowlist {
    /// An allowlist of `patterns`, or the first that is not one.
    pub fn new<I, S>(patterns: I) -> Result<Self, InvalidHostPattern>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut list = Self::default();
        for pattern in patterns {
            list.add(pattern.as_ref())?;
        }
        list.exact.sort();
        list.exact.dedup();
        list.suffixes.sort();
        list.suffixes.dedup();
        Ok(list)
    }

    fn add(&mut self, pattern: &str) -> Result<(), InvalidHostPattern> {
        let invalid = |reason| InvalidHostPattern {
            pattern: pattern.to_string(),
            reason,
        };
        let (wildcard, host) = match pattern.trim().strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, pattern.trim()),
        };
        if host.is_empty() {
            return Err(invalid("it names no host"));
        }
        if host.contains(['/', '@', '*', ' ']) || host.contains("://") {
            return Err(invalid(
                "only a host belongs here, without scheme, path, user or inner wildcard",
            ));
        }
        let host = Host::parse(host);
        if wildcard && host.ip_literal {
            return Err(invalid("a wildcard applies to names, not addresses"));
        }
        if wildcard {
            self.suffixes.push(format!(".{}", host.name));
        } else {
            self.exact.push(host.name);
        }
        Ok(())
    }

    /// No host is listed: the harness was not configured with an allowlist.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.suffixes.is_empty()
    }

    /// Whether `host` (already normalised, see [`Host::parse`]) is listed.
    pub fn allows(&self, host: &Host) -> bool {
        self.exact.binary_search(&host.name).is_ok()
            || (!host.ip_literal && self.suffixes.iter().any(|s| host.name.ends_with(s)))
    }
}

/// Where a step sends or fetches data: the hosts it reaches and whether it
/// sends anything beyond the request for a resource.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Egress {
    /// Sorted, without repeats.
    pub hosts: Vec<Host>,
    /// Data leaves with the request: an upload, a body, or a method other
    /// than GET, HEAD or OPTIONS.
    pub sends_data: bool,
}

impl Egress {
    /// Egress to `hosts` (parsed, sorted, without repeats).
    pub fn new<'a>(hosts: impl IntoIterator<Item = &'a str>, sends_data: bool) -> Self {
        let mut hosts: Vec<Host> = hosts.into_iter().map(Host::parse).collect();
        hosts.sort();
        hosts.dedup();
        Self { hosts, sends_data }
    }

    /// The classes of the hosts reached, without repeats.
    pub fn classes(&self) -> Vec<&'static str> {
        let mut classes: Vec<&'static str> = self.hosts.iter().map(|h| h.class.as_str()).collect();
        classes.sort_unstable();
        classes.dedup();
        classes
    }

    /// Hosts `allowlist` does not list; none when no allowlist is configured,
    /// because an empty allowlist means egress is not restricted by host.
    pub fn unlisted<'a>(&'a self, allowlist: &'a HostAllowlist) -> impl Iterator<Item = &'a str> {
        self.hosts
            .iter()
            .filter(move |h| !allowlist.is_empty() && !allowlist.allows(h))
            .map(|h| h.name.as_str())
    }

    /// Some host is an IP address spelled to hide what it is.
    pub fn obfuscated(&self) -> bool {
        self.hosts.iter().any(|h| h.obfuscated)
    }
}

/// Argument keys that name a destination host directly, not as a URL.
const HOST_KEYS: &[&str] = &["host", "hostname", "domain", "server", "address", "ip"];
/// Argument keys that name message recipients; the domain of an address is
/// where the message goes.
pub(crate) const RECIPIENT_KEYS: &[&str] = &[
    "to",
    "cc",
    "bcc",
    "recipient",
    "recipients",
    "email",
    "address",
];

/// Where a web fetch goes and whether it sends data.
pub fn web_fetch_egress(url: &str, method: Option<&str>, body: Option<&str>) -> Egress {
    let host = url_host(url).or_else(|| authority_host(url));
    let sends_data = method.is_some_and(method_sends_data) || body.is_some_and(|b| !b.is_empty());
    Egress::new(host.as_deref(), sends_data)
}

/// Where a generic tool call reaches: the host of every URL anywhere in its
/// arguments, hosts named by keys such as `host`, and the domains of message
/// recipients (`to`, `cc`, ...). It sends data when it reaches somewhere and
/// chooses a sending method, carries a body, or sends a message.
pub fn tool_call_egress(arguments: &Value) -> Egress {
    let mut hosts = Vec::new();
    let mut sends = false;
    visit_strings(arguments, &mut |key, text| {
        hosts.extend(hosts_in_text(text));
        let Some(key) = key else { return };
        if RECIPIENT_KEYS.iter().any(|k| key.eq_ignore_ascii_case(k)) {
            let domains = text
                .split([',', ';', ' '])
                .filter_map(|address| address.trim_end_matches('>').rsplit_once('@'))
                .map(|(_, domain)| domain)
                .filter(|domain| plausible_host(domain));
            let before = hosts.len();
            hosts.extend(domains.map(str::to_ascii_lowercase));
            sends |= hosts.len() > before;
        }
        if HOST_KEYS.iter().any(|k| key.eq_ignore_ascii_case(k)) {
            hosts.extend(authority_host(text.trim()).filter(|h| plausible_host(h)));
        }
        sends |= (METHOD_KEYS.contains(&key) && method_sends_data(text))
            || (BODY_KEYS.contains(&key) && !text.is_empty());
    });
    if let Some(args) = arguments.as_object() {
        sends |= BODY_KEYS
            .iter()
            .any(|k| args.get(*k).is_some_and(|v| v.is_object() || v.is_array()));
    }
    let sends_data = sends && !hosts.is_empty();
    Egress::new(hosts.iter().map(String::as_str), sends_data)
}

/// Whether an HTTP method sends data rather than only asking for a resource.
pub fn method_sends_data(method: &str) -> bool {
    !(method.is_empty()
        || ["GET", "HEAD", "OPTIONS"]
            .iter()
            .any(|m| m.eq_ignore_ascii_case(method.trim())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowlist_matches_names_wildcards_and_addresses() {
        let list = HostAllowlist::new(["github.com", "*.crates.io", "10.0.0.1"]).unwrap();
        let allows = |h: &str| list.allows(&Host::parse(h));
        assert!(allows("github.com") && allows("GitHub.com."));
        assert!(
            !allows("api.github.com"),
            "an exact entry does not cover subdomains"
        );
        assert!(allows("static.crates.io") && !allows("crates.io"));
        assert!(!allows("evilcrates.io"), "a wildcard matches whole labels");
        assert!(allows("0xa000001") && allows("10.0.0.1"));
        assert!(!allows("example.com"));
        assert!(HostAllowlist::new(Vec::<String>::new()).unwrap().is_empty());
    }

    #[test]
    fn malformed_patterns_are_rejected_with_the_reason() {
        for pattern in [
            "",
            "*.",
            "https://github.com",
            "a*.b.com",
            "*.10.0.0.1",
            "user@host",
        ] {
            let error = HostAllowlist::new([pattern]).unwrap_err();
            assert_eq!(error.pattern, pattern);
            assert!(error.to_string().contains("invalid allowed-host pattern"));
        }
    }

    #[test]
    fn egress_reports_classes_and_unlisted_hosts() {
        let egress = Egress::new(["GitHub.com", "0x7f000001", "evil.example"], true);
        assert_eq!(egress.classes(), ["loopback", "public"]);
        assert!(egress.obfuscated());
        let none = HostAllowlist::default();
        assert_eq!(
            egress.unlisted(&none).count(),
            0,
            "no allowlist, no restriction"
        );
        let list = HostAllowlist::new(["github.com", "127.0.0.1"]).unwrap();
        assert_eq!(egress.unlisted(&list).collect::<Vec<_>>(), ["evil.example"]);
        assert!(method_sends_data("post") && !method_sends_data("GET") && !method_sends_data(""));
    }

    #[test]
    fn web_and_tool_calls_report_where_they_send() {
        let get = web_fetch_egress("https://docs.rs/x", None, None);
        assert_eq!(get.hosts[0].name, "docs.rs");
        assert!(!get.sends_data);
        assert!(web_fetch_egress("https://h.example", Some("PUT"), None).sends_data);
        assert!(web_fetch_egress("https://h.example", None, Some("a=1")).sends_data);

        let call = tool_call_egress(&serde_json::json!({
            "target": {"host": "0x7f000001"},
            "note": "see https://A.example/x and http://b.example",
            "json": {"secret": 1},
        }));
        let names: Vec<&str> = call.hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["127.0.0.1", "a.example", "b.example"]);
        assert!(call.sends_data);
        let mail =
            tool_call_egress(&serde_json::json!({"to": "Ann <ann@Corp.example>", "subject": "s"}));
        assert_eq!(mail.hosts[0].name, "corp.example");
        assert!(mail.sends_data, "a message carries content");
        let port = tool_call_egress(&serde_json::json!({"server": "8080", "ip": "10"}));
        assert!(
            port.hosts.is_empty(),
            "numbers under host keys are not addresses"
        );
        let local = tool_call_egress(&serde_json::json!({"body": "text", "title": "t"}));
        assert!(
            local.hosts.is_empty() && !local.sends_data,
            "no host, no egress"
        );
    }
}
