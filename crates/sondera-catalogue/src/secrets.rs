//! Paths that hold credentials.
//!
//! Matching is on path components, not substrings, so `.env` is sensitive and
//! `.env.example` is not, and `~/.ssh/id_ed25519.pub` is a public key.

use std::borrow::Cow;

/// What kind of secret a path holds, if it holds one.
pub fn sensitive_path(path: &str) -> Option<&'static str> {
    let PathParts {
        count,
        first,
        parent,
        name,
        above,
    } = PathParts::of(path)?;
    let under = |directory: u16| above & directory != 0;
    if let Some(kind) = in_credential_directory(above, parent, name) {
        return Some(kind);
    }
    if let Some(kind) = mounted_secret(path) {
        return Some(kind);
    }
    if under(GNUPG) && (under(GNUPG_PRIVATE_KEYS) || name == "secring.gpg") {
        return Some("gpg_private_key");
    }
    if matches!(name, "id_rsa" | "id_dsa" | "id_ecdsa" | "id_ed25519") {
        return Some("ssh_private_key");
    }
    if first == Some("proc") && name == "environ" {
        return Some("process_environment");
    }
    let kind = match (parent, name) {
        (Some(".aws"), "credentials" | "config") => "cloud_credentials",
        (Some("gcloud"), "credentials.db" | "access_tokens.db") => "cloud_credentials",
        (_, _) if under(LEGACY_CREDENTIALS) => "cloud_credentials",
        (Some(".oci"), "config") => "cloud_credentials",
        (Some("gh"), "hosts.yml") => "credential_file",
        // hub, GitHub's older command line, keeps its OAuth token here.
        (Some(".config"), "hub") => "credential_file",
        (Some(".terraform.d"), "credentials.tfrc.json") => "credential_file",
        (Some(".cargo"), "credentials" | "credentials.toml") => "credential_file",
        (Some(".gem"), "credentials") => "credential_file",
        (Some(".composer"), "auth.json") => "credential_file",
        (Some("git"), "credentials") => "credential_file",
        (Some("rclone"), "rclone.conf") => "credential_file",
        // Developer tools that keep a token or password in their own file.
        (_, ".s3cfg" | ".boto") => "cloud_credentials",
        (Some("doctl"), "config.yaml") => "cloud_credentials",
        (_, ".my.cnf" | ".mylogin.cnf" | ".databrickscfg" | ".terraformrc" | "terraform.rc") => {
            "credential_file"
        }
        (Some(".m2"), "settings.xml" | "settings-security.xml") => "credential_file",
        (Some(".gradle"), "gradle.properties") => "credential_file",
        (Some(".snowsql"), "config") => "credential_file",
        (Some(".fly"), "config.yml") => "credential_file",
        (Some("composer"), "auth.json") => "credential_file",
        (Some("age"), "keys.txt") => "private_key_file",
        (_, ".vault-token" | ".htpasswd") => "credential_file",
        (_, n) if n.ends_with(".kdbx") || under(PASSWORD_STORE) => "password_store",
        (
            _,
            ".bash_history" | ".zsh_history" | ".sh_history" | ".python_history" | ".psql_history"
            | ".mysql_history" | ".sqlite_history" | ".node_repl_history",
        ) => "shell_history",
        (Some("gcloud"), n) if n.contains("credentials") && n.ends_with(".json") => {
            "cloud_credentials"
        }
        (Some(".docker"), "config.json") => "docker_credentials",
        (_, ".netrc" | "_netrc" | ".pgpass" | ".git-credentials" | ".pypirc" | ".npmrc") => {
            "credential_file"
        }
        (Some("etc"), "shadow" | "gshadow" | "master.passwd") if count == 2 => "system_passwords",
        (_, "Cookies" | "cookies.sqlite" | "Login Data" | "logins.json" | "key4.db") => {
            "browser_store"
        }
        (_, n) if n.ends_with(".keychain") || n.ends_with(".keychain-db") => "keychain",
        (Some("keyrings"), n) if n.ends_with(".keyring") => "keychain",
        (_, n) if is_dotenv(n) => "dotenv",
        (_, n)
            if n.ends_with(".pem")
                || n.ends_with(".key")
                || n.ends_with(".p12")
                || n.ends_with(".pfx") =>
        {
            if n.ends_with(".pem")
                && (n.contains("cert") || n.contains("chain") || n.contains("ca"))
            {
                return None;
            }
            "private_key_file"
        }
        (
            _,
            "secrets.yaml" | "secrets.yml" | "secrets.json" | "secrets.toml" | "credentials.json",
        ) => "secrets_file",
        _ => return None,
    };
    Some(kind)
}

/// A path read in one pass, in place: this runs for every path every
/// analysis meets.
struct PathParts<'a> {
    count: usize,
    first: Option<&'a str>,
    parent: Option<&'a str>,
    name: &'a str,
    /// The bits of the directories above the name.
    above: u16,
}

impl<'a> PathParts<'a> {
    fn of(path: &'a str) -> Option<Self> {
        let (mut count, mut first, mut parent, mut name) = (0, None, None, None);
        let mut above = 0;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            count += 1;
            first = first.or(Some(part));
            if let Some(directory) = name.replace(part) {
                above |= directory_bit(directory);
                parent = Some(directory);
            }
        }
        Some(Self {
            count,
            first,
            parent,
            name: name?,
            above,
        })
    }
}

/// The directories [`sensitive_path`] asks whether a path lies under, a
/// bit each, so a path's directories are looked up once.
const SSH: u16 = 1;
const GNUPG: u16 = 1 << 1;
const GNUPG_PRIVATE_KEYS: u16 = 1 << 2;
const LEGACY_CREDENTIALS: u16 = 1 << 3;
const PASSWORD_STORE: u16 = 1 << 4;
const AWS: u16 = 1 << 5;
const AZURE: u16 = 1 << 6;
const KUBE: u16 = 1 << 7;
const DOCKER: u16 = 1 << 8;
const GCLOUD: u16 = 1 << 9;
/// A cache: kubectl's discovery caches hold no credentials, the AWS
/// command line's and SSO's hold session tokens.
const CACHE: u16 = 1 << 10;
/// Included SSH client configuration (`~/.ssh/config.d/`).
const CONFIG_INCLUDES: u16 = 1 << 11;

/// Directories that as a whole hold credentials: archiving or searching
/// one reaches them all.
const CREDENTIAL_DIRECTORIES: u16 = SSH | GNUPG | AWS | AZURE | KUBE | DOCKER | GCLOUD;

/// `directory`'s bit, 0 for a directory [`sensitive_path`] does not ask about.
fn directory_bit(directory: &str) -> u16 {
    match directory {
        ".ssh" => SSH,
        ".gnupg" => GNUPG,
        "private-keys-v1.d" => GNUPG_PRIVATE_KEYS,
        "legacy_credentials" => LEGACY_CREDENTIALS,
        ".password-store" => PASSWORD_STORE,
        ".aws" => AWS,
        ".azure" => AZURE,
        ".kube" => KUBE,
        ".docker" => DOCKER,
        "gcloud" => GCLOUD,
        "cache" | "http-cache" => CACHE,
        "config.d" | "conf.d" => CONFIG_INCLUDES,
        _ => 0,
    }
}

/// What a file inside a credential directory holds, by the directory's
/// rule rather than by the file's name: a private key can be called
/// anything (`~/.ssh/deploy_key`), a kubeconfig too, and the token caches
/// name their files by hashes. Each rule names what such a directory keeps
/// that is not secret.
fn in_credential_directory(above: u16, parent: Option<&str>, name: &str) -> Option<&'static str> {
    let under = |directory: u16| above & directory != 0;
    if under(SSH) && !under(CONFIG_INCLUDES) && !is_public_ssh_file(name) {
        return Some("ssh_private_key");
    }
    if under(AWS) && parent == Some("cache") {
        return Some("cloud_credentials");
    }
    if under(AZURE) && names_a_credential(name) {
        return Some("cloud_credentials");
    }
    // Every file kubectl is pointed at with --kubeconfig or $KUBECONFIG
    // is kept here; its own caches and tools' state files are not.
    if under(KUBE) && !under(CACHE) && !matches!(name, "kubectx" | "kubens" | "kuberc") {
        return Some("kube_config");
    }
    None
}

/// Files of `~/.ssh` that hold no private key: public keys and
/// certificates, the client's configuration and the lists of known hosts
/// and authorised keys.
fn is_public_ssh_file(name: &str) -> bool {
    name.ends_with(".pub")
        || name.starts_with("known_hosts")
        || name.starts_with("authorized_keys")
        || matches!(name, "config" | "rc")
}

/// Whether a file's name says it holds tokens or secrets, in any case.
fn names_a_credential(name: &str) -> bool {
    let name = alphanumeric(name);
    ["token", "secret", "credential", "principal", "password"]
        .iter()
        .any(|word| name.contains(word))
}

/// Compared with letters and digits only, so `api[_-]?key` is `apikey`.
const SECRET_WORDS: &[&str] = &[
    "secret",
    "password",
    "passwd",
    "token",
    "apikey",
    "privatekey",
    "beginrsa",
    "credential",
    "awsaccesskey",
    "accesskey",
];
/// Whether a search pattern looks for secrets (`password`, `api[_-]?key`,
/// `BEGIN RSA`): compared on letters and digits only.
pub fn names_secret(pattern: &str) -> bool {
    let text = alphanumeric(pattern);
    SECRET_WORDS.iter().any(|s| text.contains(s))
}

/// Names `find` and `locate` look for when they hunt for keys and secrets,
/// compared with letters and digits only.
const SECRET_FILE_NAMES: &[&str] = &[
    "idrsa",
    "ided25519",
    "idecdsa",
    "iddsa",
    "pem",
    "key",
    "p12",
    "pfx",
    "credentials",
    "env",
    "netrc",
    "pgpass",
    "kdbx",
    "secret",
    "password",
    "token",
    "gitcredentials",
    "keychain",
    "wallet",
];

/// Whether a file name pattern's last part looks for key or secret files
/// by name (`id_rsa`, `*.pem`, `.env`): compared on letters and digits only.
pub fn names_key_file(pattern: &str) -> bool {
    let name = alphanumeric(pattern.rsplit('/').next().unwrap_or(pattern));
    SECRET_FILE_NAMES.iter().any(|s| name.contains(s))
}

/// `text` lower-cased, letters and digits only.
pub(crate) fn alphanumeric(text: &str) -> Cow<'_, str> {
    if text
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    {
        return Cow::Borrowed(text);
    }
    text.chars()
        .filter(char::is_ascii_alphanumeric)
        .flat_map(|c| c.to_lowercase())
        .collect()
}

/// A directory whose contents are credentials, copied or archived as a whole.
/// Where credentials usually lie, relative to home (`~/`), the working
/// directory (`./`) or the root: what a glob is checked against, since a
/// pattern such as `~/.s*h/id_*` names files nobody wrote out. Every entry is
/// a [`sensitive_path`] (a test keeps it so).
pub const USUAL_LOCATIONS: &[&str] = &[
    "~/.ssh/id_rsa",
    "~/.ssh/id_ed25519",
    "~/.ssh/id_ecdsa",
    "~/.aws/credentials",
    "~/.aws/config",
    "~/.kube/config",
    "~/.docker/config.json",
    "~/.config/gcloud/credentials.db",
    "~/.config/gh/hosts.yml",
    "~/.azure/accessTokens.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.pgpass",
    "~/.npmrc",
    "~/.pypirc",
    "~/.vault-token",
    "~/.gnupg/secring.gpg",
    "~/.gnupg/private-keys-v1.d/key.key",
    "~/.bash_history",
    "~/.zsh_history",
    "./.env",
    "/etc/shadow",
];

/// The kind of credential a glob pattern (absolute, as the shell analysis
/// makes it from a word) can match inside a credential directory or at one
/// of the [`USUAL_LOCATIONS`], if any.
pub fn glob_reaches_secret(pattern: &str, home: &str, working_dir: &str) -> Option<&'static str> {
    // A credential directory's rule holds for every name in it, so a glob
    // only in the last part is judged by where it looks (`~/.aws/sso/cache/*`).
    if let Some((directory, _)) = pattern.rsplit_once('/')
        && !directory.contains(['*', '?', '['])
        && let Some(parts) = PathParts::of(pattern)
        && let Some(kind) = in_credential_directory(parts.above, parts.parent, parts.name)
    {
        return Some(kind);
    }
    let matcher = glob_regex(pattern)?;
    USUAL_LOCATIONS.iter().find_map(|location| {
        let path = if let Some(rest) = location.strip_prefix("~/") {
            format!("{}/{rest}", home.trim_end_matches('/'))
        } else if let Some(rest) = location.strip_prefix("./") {
            format!("{}/{rest}", working_dir.trim_end_matches('/'))
        } else {
            location.to_string()
        };
        matcher
            .is_match(&path)
            .then(|| sensitive_path(&path))
            .flatten()
    })
}

/// A shell glob (`*`, `?`, `[...]`) as an anchored regular expression,
/// with the shell's rule that a name's leading `.` is matched only by a `.`
/// written out (`*` does not match `.env`).
fn glob_regex(pattern: &str) -> Option<regex::Regex> {
    let mut out = String::from("^");
    let mut chars = pattern.chars();
    let mut name_start = true;
    while let Some(c) = chars.next() {
        match c {
            '*' if name_start => out.push_str("(?:[^/.][^/]*)?"),
            '*' => out.push_str("[^/]*"),
            '?' if name_start => out.push_str("[^/.]"),
            '?' => out.push_str("[^/]"),
            '[' => {
                let mut class = String::new();
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                    class.push(c);
                }
                let (negated, members) = match class.strip_prefix(['!', '^']) {
                    Some(rest) => (true, rest),
                    None => (false, class.as_str()),
                };
                let members = regex::escape(members).replace("\\-", "-");
                // A class matches neither `/` nor a name's leading `.`.
                let excluded = if name_start { "/." } else { "/" };
                if negated {
                    out.push_str(&format!("[^{members}{excluded}]"));
                } else {
                    out.push_str(&format!("[{members}&&[^{excluded}]]"));
                }
            }
            other => out.push_str(&regex::escape(&other.to_string())),
        }
        name_start = c == '/';
    }
    out.push('$');
    regex::Regex::new(&out).ok()
}

/// Whether `path` is, or ends in, a directory that holds credentials
/// (`.ssh`, `.aws`, `.gnupg`, `.kube`, `.docker`, `.azure`, `gcloud`), or
/// is where secrets are mounted into a container.
pub fn credential_directory(path: &str) -> bool {
    let name = path.rsplit('/').find(|p| !p.is_empty()).unwrap_or_default();
    directory_bit(name) & CREDENTIAL_DIRECTORIES != 0 || under_mounted_secrets(path).is_some()
}

/// Where orchestrators mount secrets into a container: Docker's and
/// Compose's secrets, Kubernetes' service-account token and the clouds'
/// workload-identity tokens (`/var/run/secrets/eks.amazonaws.com/...`).
/// Only these absolute places: a project's `secrets/` directory is named
/// by what it holds, file by file.
const MOUNTED_SECRETS: &[&str] = &["/run/secrets", "/var/run/secrets"];

/// What lies below a mount of secrets, `""` for the mount itself.
fn under_mounted_secrets(path: &str) -> Option<&str> {
    let path = path.trim_end_matches('/');
    MOUNTED_SECRETS.iter().find_map(|root| {
        let rest = path.strip_prefix(root)?;
        (rest.is_empty() || rest.starts_with('/')).then(|| rest.trim_start_matches('/'))
    })
}

/// A file of a mount of secrets, but for what the service-account volume
/// holds beside its token: the cluster's public certificate and the
/// namespace's name.
fn mounted_secret(path: &str) -> Option<&'static str> {
    let rest = under_mounted_secrets(path)?;
    let name = rest.rsplit('/').next().unwrap_or_default();
    let public = matches!(name, "ca.crt" | "service-ca.crt" | "namespace");
    (!rest.is_empty() && !public).then_some("mounted_secret")
}

fn is_dotenv(name: &str) -> bool {
    const TEMPLATES: &[&str] = &[
        "example", "sample", "template", "dist", "defaults", "schema",
    ];
    if name == ".env" || name == ".envrc" {
        return true;
    }
    match name.strip_prefix(".env.") {
        Some(variant) => !variant.split('.').any(|part| TEMPLATES.contains(&part)),
        None => name.ends_with(".env") && !name.starts_with('.') && name != "example.env",
    }
}

#[cfg(test)]
mod usual_locations {
    use super::*;

    #[test]
    fn every_usual_location_is_sensitive() {
        for location in USUAL_LOCATIONS {
            let path = location
                .replacen('~', "/home/dev", 1)
                .replacen("./", "/w/", 1);
            assert!(sensitive_path(&path).is_some(), "{location}");
        }
    }

    #[test]
    fn globs_that_can_name_a_credential_file_are_found() {
        for pattern in [
            "/home/dev/.s*h/id_*",
            "/home/dev/.aws/cred*",
            "/etc/sha??w",
            "/home/dev/.[s]sh/id_[!x]sa",
            "/w/.e*",
        ] {
            assert!(
                glob_reaches_secret(pattern, "/home/dev", "/w").is_some(),
                "{pattern}"
            );
        }
        for pattern in [
            "/home/dev/src/*.rs",
            "/etc/*.conf",
            "/home/dev/.ssh/*.pub",
            "/w/*",
            "/w/?env",
            "/home/dev/*/credentials",
        ] {
            assert_eq!(
                glob_reaches_secret(pattern, "/home/dev", "/w"),
                None,
                "{pattern}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_recognised() {
        for (path, kind) in [
            ("/home/dev/.ssh/id_rsa", "ssh_private_key"),
            ("/home/dev/.ssh/id_ed25519", "ssh_private_key"),
            ("/home/dev/.aws/credentials", "cloud_credentials"),
            (
                "/home/dev/.config/gcloud/application_default_credentials.json",
                "cloud_credentials",
            ),
            ("/home/dev/.kube/config", "kube_config"),
            ("/home/dev/.docker/config.json", "docker_credentials"),
            ("/home/dev/.netrc", "credential_file"),
            ("/home/dev/.pgpass", "credential_file"),
            ("/etc/shadow", "system_passwords"),
            ("/home/dev/.config/gh/hosts.yml", "credential_file"),
            ("/home/dev/.config/hub", "credential_file"),
            ("/home/dev/.cargo/credentials.toml", "credential_file"),
            ("/home/dev/.vault-token", "credential_file"),
            (
                "/home/dev/.config/gcloud/credentials.db",
                "cloud_credentials",
            ),
            ("/home/dev/.bash_history", "shell_history"),
            ("/proc/self/environ", "process_environment"),
            ("/workspace/project/deploy/id_ed25519", "ssh_private_key"),
            ("/workspace/project/.env", "dotenv"),
            ("/workspace/project/.env.production", "dotenv"),
            ("/workspace/project/config/secrets.yaml", "secrets_file"),
            (
                "/home/dev/.config/google-chrome/Default/Cookies",
                "browser_store",
            ),
            ("/workspace/project/server.key", "private_key_file"),
            ("/home/dev/.s3cfg", "cloud_credentials"),
            ("/home/dev/.m2/settings.xml", "credential_file"),
            ("/home/dev/.gradle/gradle.properties", "credential_file"),
            ("/home/dev/.config/sops/age/keys.txt", "private_key_file"),
        ] {
            assert_eq!(sensitive_path(path), Some(kind), "{path}");
        }
    }

    #[test]
    fn secrets_mounted_into_a_container_are_recognised() {
        for path in [
            "/var/run/secrets/kubernetes.io/serviceaccount/token",
            "/run/secrets/kubernetes.io/serviceaccount/token",
            "/var/run/secrets/eks.amazonaws.com/serviceaccount/token",
            "/var/run/secrets/azure/tokens/azure-identity-token",
            "/run/secrets/db_password",
        ] {
            assert_eq!(sensitive_path(path), Some("mounted_secret"), "{path}");
        }
        for path in [
            "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
            "/var/run/secrets/kubernetes.io/serviceaccount/namespace",
            "/run/secretsmanager/state",
            "/workspace/project/run/secrets/example.txt",
            "/run/systemd/resolve/resolv.conf",
        ] {
            assert_eq!(sensitive_path(path), None, "{path}");
        }
        assert!(credential_directory("/run/secrets"));
        assert!(credential_directory("/var/run/secrets/"));
        assert!(credential_directory(
            "/var/run/secrets/kubernetes.io/serviceaccount"
        ));
        assert!(!credential_directory("/var/run"));
        assert!(!credential_directory("/workspace/project/secrets"));
    }

    #[test]
    fn look_alikes_are_not_secrets() {
        for path in [
            "/home/dev/.ssh/id_ed25519.pub",
            "/home/dev/.ssh/known_hosts",
            "/home/dev/.ssh/config",
            "/workspace/project/.env.example",
            "/workspace/project/.env.sample",
            "/workspace/project/.env.template",
            "/workspace/project/.env.local.example",
            "/workspace/project/src/environment.rs",
            "/etc/passwd",
            "/workspace/project/etc/shadow",
            "/workspace/project/certs/ca-cert.pem",
            "/workspace/project/README.md",
            "/workspace/project/gradle.properties",
            "/workspace/project/settings.xml",
            "/home/dev/.m2/repository/org/slf4j/slf4j-api/2.0.9/slf4j-api-2.0.9.pom",
        ] {
            assert_eq!(sensitive_path(path), None, "{path}");
        }
    }

    #[test]
    fn a_file_anywhere_beneath_a_credential_directory_is_read_by_the_directory() {
        for (path, kind) in [
            ("/home/dev/.ssh/keys/old/id_work", "ssh_private_key"),
            (
                "/home/dev/.gnupg/private-keys-v1.d/ABCD.txt",
                "gpg_private_key",
            ),
            ("/home/dev/.gnupg/secring.gpg", "gpg_private_key"),
            (
                "/home/dev/.config/gcloud/legacy_credentials/dev@example.com/adc.json",
                "cloud_credentials",
            ),
            ("/home/dev/.password-store/mail/work.gpg", "password_store"),
        ] {
            assert_eq!(sensitive_path(path), Some(kind), "{path}");
        }
        // The same names, with the directory only as the file's own name
        // or not above it, are not.
        for path in [
            "/workspace/project/keys/old/id_work",
            "/workspace/project/private-keys-v1.d/ABCD.txt",
            "/workspace/project/dev@example.com/adc.json",
            "/workspace/project/mail/work.gpg",
            "/workspace/project/.password-store",
            "/workspace/project/.ssh",
        ] {
            assert_eq!(sensitive_path(path), None, "{path}");
        }
    }

    #[test]
    fn credential_directories() {
        for path in [
            "/home/dev/.aws",
            "/home/dev/.ssh/",
            "/home/dev/.gnupg",
            "/home/dev/.kube",
            "/home/dev/.docker",
            "/home/dev/.azure",
            "/home/dev/.config/gcloud",
        ] {
            assert!(credential_directory(path), "{path}");
        }
        for path in [
            "/home/dev/projects",
            "/home/dev/.ssh/config.d",
            "/home/dev/.cache",
        ] {
            assert!(!credential_directory(path), "{path}");
        }
    }

    /// A credential directory's rule, not the file's name, says what it
    /// holds: keys and kubeconfigs are named anything, token caches by hashes.
    #[test]
    fn a_credential_directory_keeps_secrets_under_any_name() {
        for (path, kind) in [
            ("/home/dev/.ssh/deploy_key", "ssh_private_key"),
            ("/home/dev/.ssh/github", "ssh_private_key"),
            ("/home/dev/.ssh/keys/prod", "ssh_private_key"),
            ("/home/dev/.ssh/bastion.priv", "ssh_private_key"),
            ("/home/dev/.aws/sso/cache/5f1a2b.json", "cloud_credentials"),
            ("/home/dev/.aws/cli/cache/0a1b2c.json", "cloud_credentials"),
            (
                "/home/dev/.azure/service_principal_entries.json",
                "cloud_credentials",
            ),
            ("/home/dev/.azure/msal_token_cache.bin", "cloud_credentials"),
            ("/home/dev/.azure/accessTokens.json", "cloud_credentials"),
            ("/home/dev/.kube/config-prod", "kube_config"),
            ("/home/dev/.kube/configs/staging.yaml", "kube_config"),
        ] {
            assert_eq!(sensitive_path(path), Some(kind), "{path}");
        }
        for path in [
            "/home/dev/.ssh/deploy_key.pub",
            "/home/dev/.ssh/github-cert.pub",
            "/home/dev/.ssh/known_hosts.old",
            "/home/dev/.ssh/authorized_keys2",
            "/home/dev/.ssh/config.d/work",
            "/home/dev/.aws/cli/alias",
            "/home/dev/.azure/config",
            "/home/dev/.azure/azureProfile.json",
            "/home/dev/.kube/cache/discovery/10.0.0.1_6443/servergroups.json",
            "/home/dev/.kube/http-cache/0a1b",
            "/home/dev/.kube/kubectx",
        ] {
            assert_eq!(sensitive_path(path), None, "{path}");
        }
    }

    #[test]
    fn a_glob_inside_a_credential_directory_is_judged_by_the_directory() {
        for (pattern, kind) in [
            ("/home/dev/.aws/sso/cache/*.json", "cloud_credentials"),
            ("/home/dev/.ssh/*", "ssh_private_key"),
            ("/home/dev/.ssh/keys/?rod", "ssh_private_key"),
            ("/home/dev/.kube/*.yaml", "kube_config"),
        ] {
            assert_eq!(
                glob_reaches_secret(pattern, "/home/dev", "/w"),
                Some(kind),
                "{pattern}"
            );
        }
        for pattern in ["/home/dev/.ssh/*.pub", "/home/dev/.kube/cache/*"] {
            assert_eq!(
                glob_reaches_secret(pattern, "/home/dev", "/w"),
                None,
                "{pattern}"
            );
        }
    }
}
