//! The words command-line grammars share: the verbs, nouns and options from
//! which a command's effect is read when its program is not otherwise
//! known.
//!
//! Command-line tools name their operations the same way whoever wrote
//! them: a verb (`delete`, `destroy`, `print`), a noun for what it acts on
//! (`database`, `bucket`, `token`), options that skip the confirmation
//! (`--yes`, `--force`) or widen the reach (`--all`, `--recursive`). The
//! words are compared as *tokens*: lower-cased pieces of a word split at
//! anything that is not a letter or digit (`apps:destroy` is `apps`,
//! `destroy`; `print-access-token` is `print`, `access`, `token`).

/// Verbs that destroy whatever they are applied to: on their own they make
/// an operation destructive.
pub const DESTROY_VERBS: &[&str] = &[
    "destroy",
    "drop",
    "purge",
    "wipe",
    "nuke",
    "obliterate",
    "terminate",
    "truncate",
    "flushall",
    "flushdb",
    "erase",
    "teardown",
    "decommission",
    // `rb`: remove bucket (`mc rb`, `s3cmd rb`, `aws s3 rb`).
    "rb",
];

/// Verbs that remove something: destructive when what they remove is a
/// shared resource ([`SHARED_NOUNS`]), remote storage, or everything.
pub const REMOVE_VERBS: &[&str] = &[
    "delete",
    "del",
    "remove",
    "rm",
    "prune",
    "reset",
    "revoke",
    "deprovision",
    "unregister",
];

/// Nouns for resources other people or systems depend on: removing one is
/// not undone by rebuilding the workspace.
pub const SHARED_NOUNS: &[&str] = &[
    "database",
    "databases",
    "db",
    "dbs",
    "bucket",
    "buckets",
    "cluster",
    "clusters",
    "project",
    "projects",
    "namespace",
    "namespaces",
    "volume",
    "volumes",
    "repo",
    "repos",
    "repository",
    "repositories",
    "instance",
    "instances",
    "table",
    "tables",
    "schema",
    "schemas",
    "keyspace",
    "topic",
    "topics",
    "zone",
    "zones",
    "domain",
    "domains",
    "account",
    "accounts",
    "org",
    "organization",
    "tenant",
    "environment",
    "stack",
    "stacks",
    "app",
    "apps",
    "site",
    "sites",
    "service",
    "services",
    "server",
    "servers",
    "droplet",
    "droplets",
    "vm",
    "vms",
    "disk",
    "disks",
    "snapshot",
    "snapshots",
    "backup",
    "backups",
    "secret",
    "secrets",
    "collection",
    "collections",
    "index",
    "indices",
    "deployment",
    "deployments",
    "function",
    "functions",
    "queue",
    "queues",
    "kv",
    "firestore",
    "storage",
    "metadata",
    "job",
    "jobs",
    "linodes",
    "workspace",
    "workspaces",
];

/// Nouns for what exists only to be rebuilt: destroying a cache is
/// housekeeping (`pip cache purge`).
pub const DISPOSABLE_NOUNS: &[&str] = &[
    "cache",
    "caches",
    "tmp",
    "temp",
    "build",
    "builds",
    "artifacts",
    "dist",
];

/// Options that answer a confirmation prompt in advance.
pub const CONFIRMATION_BYPASS: &[&str] = &[
    "--yes",
    "-y",
    "--force",
    "-f",
    "--auto-approve",
    "--quiet",
    "-q",
    "--confirm",
    "--no-confirm",
    "--noconfirm",
    "--non-interactive",
    "--noninteractive",
    "--assume-yes",
    "--skip-confirmation",
];

/// Tokens of options or operands that widen an operation to everything.
pub const BREADTH_TOKENS: &[&str] = &["all", "recursive", "recurse", "prefix"];

/// Tokens that name production: a destructive operation aimed at one is
/// denied, not asked about.
pub const PRODUCTION_TOKENS: &[&str] = &["prod", "production", "prd"];

/// Branches a repository's history is shared through: rewriting or deleting
/// one on a remote is destroying shared history.
pub fn protected_branch(name: &str) -> bool {
    let name = name.strip_prefix("refs/heads/").unwrap_or(name);
    matches!(
        name,
        "main" | "master" | "trunk" | "develop" | "production" | "prod" | "stable"
    ) || name.starts_with("release")
}

/// URL schemes of remote object storage: what is deleted there is shared.
pub const REMOTE_STORAGE_SCHEMES: &[&str] =
    &["s3://", "gs://", "az://", "r2://", "abfs://", "wasbs://"];

/// Verbs that put what they act on in the command's output.
pub const EMIT_VERBS: &[&str] = &[
    "print", "show", "read", "export", "access", "fill", "lookup", "reveal", "dump", "display",
    "decrypt", "cat", "find", "get", "view", "search",
];

/// Verbs that act on credentials without printing them: listing names,
/// status, creating, rotating or removing.
pub const QUIET_VERBS: &[&str] = &[
    "list", "ls", "status", "whoami", "create", "new", "add", "set", "delete", "remove", "rm",
    "revoke", "rotate", "login", "logout", "setup", "refresh", "help", "describe", "version",
];

/// Verbs that create a credential, which a tool shows once, as it is made
/// (`aws iam create-access-key`, `kubectl create token`).
pub const MINTING_VERBS: &[&str] = &["create", "issue", "generate", "mint"];

/// Head nouns of credentials a tool prints as it creates them: tokens and
/// keys. A secret or password created is one the caller supplied.
pub const MINTED_NOUNS: &[&str] = &["token", "tokens", "authtoken", "apikey", "key", "keys"];

/// Head nouns of a word that names a credential value: the last token of
/// `print-access-token`, `get-login-password`, `export-credentials`.
pub const CREDENTIAL_NOUNS: &[&str] = &[
    "token",
    "tokens",
    "authtoken",
    "password",
    "passwd",
    "passphrase",
    "credential",
    "credentials",
    "creds",
    "apikey",
    "secret",
    "secrets",
];

/// Head nouns that name a credential only beside a word saying which
/// (`secret-keys`, `secret-value`, `access-key`, `private-key`).
pub const QUALIFIED_CREDENTIAL_NOUNS: &[&str] = &["key", "keys", "value", "subkeys"];

/// Words that make a following key or value a credential.
pub const CREDENTIAL_QUALIFIERS: &[&str] = &["secret", "private", "access", "api", "signing"];

/// Options that lift the redaction a tool applies to what it prints
/// (`--show-token`, `kubectl config view --raw`).
pub const REVEALING_OPTIONS: &[&str] = &[
    "--show-token",
    "--show-secrets",
    "--show-secret",
    "--show-password",
    "--reveal",
    "--unmask",
    "--raw",
    "--plaintext",
    "--with-decryption",
];

/// Options that print a resource's full data rather than a table of names
/// (`-o yaml`, `--output=json`, `-field=password`, `--query value`), given
/// the option and the word after it: an output format of names only
/// (`-o name`, `--output=wide`, `-o table`, a template reading only names:
/// `-o jsonpath={.metadata.name}`) prints none.
pub fn prints_data(option: &str, next: Option<&str>) -> bool {
    let (name, value) = match option.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (option, next),
    };
    let formats_names = matches!(name, "-o" | "--output" | "--format")
        && value.is_some_and(|v| matches!(v, "name" | "wide" | "table") || template_of_names(v));
    !formats_names
        && matches!(
            name,
            "-o" | "--output" | "-field" | "--field" | "--fields" | "--query" | "--format" | "-w"
        )
}

/// A `jsonpath=`, `go-template=` or `custom-columns=` output whose every
/// field is a name, a namespace, labels or a kind. An annotation may hold
/// the whole object (`last-applied-configuration`), so `.metadata` alone
/// is not one of them.
fn template_of_names(format: &str) -> bool {
    const NAME_FIELDS: &[&str] = &[
        ".metadata.name",
        ".metadata.namespace",
        ".metadata.uid",
        ".metadata.creationtimestamp",
        ".metadata.labels",
        ".items[*]",
        ".items",
        ".kind",
        ".type",
    ];
    let Some((kind, template)) = format.split_once('=') else {
        return false;
    };
    if !matches!(kind, "jsonpath" | "go-template" | "custom-columns") {
        return false;
    }
    let mut rest = template.to_ascii_lowercase();
    for field in NAME_FIELDS {
        rest = rest.replace(field, "_");
    }
    // Any other field, or the whole object (`{.}`, `{@}`).
    !rest.contains(['.', '@'])
}

/// Verbs of an operation that only looks at access (`get-bucket-acl`,
/// `list`, `describe`, `auth can-i`): it grants nothing.
pub const LOOKING_VERBS: &[&str] = &[
    "get", "list", "ls", "describe", "view", "show", "can", "check", "test", "plan", "diff",
    "explain", "history", "lookup",
];

/// Verbs of an operation that takes access away (`detach-user-policy`,
/// `role assignment delete`): what it names is being withdrawn, unless it is
/// a protection (see [`PROTECTION_NOUNS`]).
pub const WITHDRAWING_VERBS: &[&str] = &[
    "delete", "del", "remove", "rm", "revoke", "detach", "unbind", "unassign", "unset",
];

/// Nouns of a grant of access (`role assignment`, `iam-policy-binding`, a
/// group's `member`): deleting one withdraws access and destroys nothing.
pub const GRANT_NOUNS: &[&str] = &[
    "assignment",
    "assignments",
    "binding",
    "bindings",
    "member",
    "members",
    "membership",
    "memberships",
    "grant",
    "grants",
];

/// Kinds of cluster object that a controller makes again or that end on
/// their own (`kubectl delete pod NAME` restarts one): removing them by
/// name or label loses nothing.
pub const EPHEMERAL_KINDS: &[&str] = &["pod", "pods", "po", "job", "jobs", "event", "events", "ev"];

/// Whether `option` makes its command read a credential from standard
/// input (`--password-stdin`, `--token-stdin`, `gh auth login
/// --with-token`), so what is piped to it is handed on, not shown.
pub fn reads_credential_from_stdin(option: &str) -> bool {
    if !option.starts_with("--") {
        return false;
    }
    let mut stdin = false;
    let mut credential = false;
    let mut with = false;
    for piece in pieces(option) {
        let is = |word: &str| piece.eq_ignore_ascii_case(word);
        stdin |= is("stdin");
        with |= is("with");
        credential |= ["password", "passwd", "token", "secret", "key"]
            .into_iter()
            .any(is);
    }
    credential && (stdin || with)
}

/// Verbs of an operation that gives or changes access (`create`,
/// `add-iam-policy-binding`, `iam ch`, `attach-user-policy`): the first
/// verb of a command is its operation, so a resource named `get-x` after
/// `create` is not one that looks.
pub const GRANTING_VERBS: &[&str] = &[
    "create",
    "add",
    "attach",
    "put",
    "set",
    "assign",
    "bind",
    "ch",
    "grant",
    "update",
    "edit",
    "modify",
    "patch",
    "apply",
    "authorize",
    "enable",
    "allow",
    "share",
    "invite",
];

/// Nouns of what guards access: withdrawing one widens it
/// (`delete-public-access-block`, `DELETE .../branches/main/protection`).
pub const PROTECTION_NOUNS: &[&str] = &["block", "protection", "protections", "restriction"];

/// Tokens of a member or principal that is anybody at all (`allUsers`,
/// `AllUsers:R`, `allAuthenticatedUsers`).
pub const ANYONE_TOKENS: &[&str] = &["allusers", "allauthenticatedusers", "anyone", "everyone"];

/// Canned access lists that let anybody read or write.
pub const PUBLIC_ACLS: &[&str] = &["public-read", "public-read-write", "authenticated-read"];

/// Switches that on their own open a resource to anybody.
pub const PUBLIC_SWITCHES: &[&str] = &["--publicly-accessible", "--allow-unauthenticated"];

/// Address ranges that are every address.
pub const EVERY_ADDRESS: &[&str] = &["0.0.0.0/0", "::/0", "*", "internet", "any"];

/// Pieces of a role's name that say it administers, owns or impersonates
/// (`roles/owner`, `cluster-admin`, `AdministratorAccess`,
/// `serviceAccountTokenCreator`): compared within the value's tokens.
pub const ADMIN_ROLE_PIECES: &[&str] = &[
    "admin",
    "owner",
    "fullaccess",
    "poweruser",
    "superuser",
    "tokencreator",
    "serviceaccountuser",
    "impersonat",
];

/// Roles broad enough to count as administering without saying so.
pub const BROAD_ROLES: &[&str] = &["editor", "contributor", "root"];

/// Tokens of an option or key whose value names a role or a policy
/// granted (`--role`, `--clusterrole`, `--policy-arn`, `--group-name`,
/// `permission=`).
pub const ROLE_OPTION_TOKENS: &[&str] = &[
    "role",
    "roles",
    "clusterrole",
    "policy",
    "group",
    "permission",
    "permissions",
];

/// Pieces of a setting's name that say it chooses where packages or code
/// come from (`registry`, `GOPROXY`, `PIP_INDEX_URL`, `url.X.insteadOf`,
/// `mirror.https://rubygems.org`, `channels`, `repo.packagist`).
pub const SOURCE_PIECES: &[&str] = &[
    "registry",
    "registries",
    "index",
    "proxy",
    "mirror",
    "channel",
    "repo",
    "source",
    "insteadof",
    "packagist",
];

/// Pieces of a setting's name that say it verifies what is fetched
/// (`http.sslVerify`, `strict-ssl`, `NODE_TLS_REJECT_UNAUTHORIZED`,
/// `PYTHONHTTPSVERIFY`, `CURL_CA_BUNDLE`): set off, false or empty, the
/// check is gone.
pub const VERIFYING_PIECES: &[&str] = &[
    "ssl",
    "tls",
    "verify",
    "reject",
    "cabundle",
    "sumdb",
    "gpgcheck",
    "contenttrust",
    "signature",
    "checksum",
    "integrity",
];

/// How a setting's name begins when it turns a check off (`--nogpgcheck`,
/// `--no-check-certificate`, `--disable-content-trust`,
/// `--skip-tls-verify`, `--ignore-certificate-errors`): with a check's
/// piece ([`CHECK_PIECES`]) after it, given at all, the check is gone.
pub const NEGATING_PREFIXES: &[&str] = &["no", "disable", "skip", "ignore", "without"];

/// Pieces of a name that say what is checked: a signature, a certificate,
/// a checksum; right after the negation, or after "check" or "verify"
/// (`--no-check-certificate`). Not "check" or "verify" alone:
/// `--no-checkout` checks nothing out, and `--no-verify` skips a tool's own
/// hooks (`git commit`), not the verification of what is fetched; nor after
/// another word (`--no-show-signature` only shows less). Signing is not
/// checking: `--no-gpg-sign` fetches nothing.
pub const CHECK_PIECES: &[&str] = &[
    "gpgcheck",
    "signature",
    "sigcheck",
    "cert",
    "contenttrust",
    "trust",
    "ssl",
    "tls",
    "integrity",
];

/// Pieces of a setting's name that say it skips verification for what it
/// names (`trusted-host`, `GOINSECURE`, `GONOSUMDB`, `GIT_SSL_NO_VERIFY`):
/// set to anything, the check is gone there.
pub const SKIPPING_PIECES: &[&str] = &[
    "trusted",
    "dangerous",
    "allowunauthenticated",
    "allowunsigned",
    "insecure",
    "nosumdb",
    "nosumcheck",
    "noverify",
    "skipverify",
];

/// Values that switch a setting off.
pub const OFF_VALUES: &[&str] = &["false", "0", "no", "off", "none", ""];

/// The tokens of `word`: lower-cased runs of letters and digits.
pub fn tokens(word: &str) -> impl Iterator<Item = String> + '_ {
    pieces(word).map(str::to_ascii_lowercase)
}

/// The runs of letters and digits of `word` as written: its tokens before
/// lower-casing, for comparing in any case without copies.
pub fn pieces(word: &str) -> impl Iterator<Item = &str> {
    word.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
}

/// Whether the tokens of one word name a credential value: its head (last
/// token) is a credential noun, or a key or value a qualifier before it
/// makes one (`aws_secret_access_key`, `get-secret-value`).
pub fn names_credential(word_tokens: &[String]) -> bool {
    let Some(head) = word_tokens.last() else {
        return false;
    };
    CREDENTIAL_NOUNS.contains(&head.as_str())
        || (QUALIFIED_CREDENTIAL_NOUNS.contains(&head.as_str())
            && word_tokens[..word_tokens.len() - 1]
                .iter()
                .any(|t| CREDENTIAL_QUALIFIERS.contains(&t.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(word: &str) -> Vec<String> {
        tokens(word).collect()
    }

    #[test]
    fn words_split_into_lower_case_tokens() {
        assert_eq!(toks("apps:destroy"), ["apps", "destroy"]);
        assert_eq!(toks("--Print-Access-Token"), ["print", "access", "token"]);
        assert_eq!(
            toks("//registry.npmjs.org/:_authToken").last().unwrap(),
            "authtoken"
        );
    }

    #[test]
    fn credential_words_are_read_by_their_head() {
        for word in [
            "print-access-token",
            "get-login-password",
            "export-credentials",
            "aws_secret_access_key",
            "get-secret-value",
            "export-secret-keys",
            "_authToken",
        ] {
            assert!(names_credential(&toks(word)), "{word}");
        }
        for word in [
            "credential.helper",
            "list-keys",
            "get-caller-identity",
            "region",
            "key",
        ] {
            assert!(!names_credential(&toks(word)), "{word}");
        }
    }

    #[test]
    fn protected_branches() {
        assert!(protected_branch("main") && protected_branch("refs/heads/master"));
        assert!(protected_branch("release/2.1"));
        assert!(!protected_branch("feature/login"));
    }
}
