//! Effects read from a command's grammar: what its subcommands and options
//! say it does, for any program, known or not.
//!
//! Command-line tools name their operations with verbs and nouns
//! (`apps:destroy`, `bucket delete`, `print-access-token`), skip their
//! confirmation with the same few options and widen their reach with
//! others. Reading those words (see [`sondera_catalogue::grammar`]) finds
//! a destructive operation or a printed credential in a tool nobody
//! listed, where a list of tools would only find the ones it names.

use sondera_catalogue::Role;
use sondera_catalogue::grammar::{
    self, BREADTH_TOKENS, CONFIRMATION_BYPASS, DESTROY_VERBS, DISPOSABLE_NOUNS, EMIT_VERBS,
    MINTED_NOUNS, MINTING_VERBS, PRODUCTION_TOKENS, QUIET_VERBS, REMOTE_STORAGE_SCHEMES,
    REMOVE_VERBS, REVEALING_OPTIONS, SHARED_NOUNS,
};

use crate::types::{Invocation, Risk, RiskKind, risk};

/// How many leading non-option words are read as the subcommand path and
/// its first operands (`gcloud sql instances delete NAME`).
const PATH_WORDS: usize = 5;

/// The words an invocation's grammar is read from.
struct Grammar {
    /// Tokens of each leading non-option word, program first.
    path: Vec<Vec<String>>,
    /// Tokens of each option, value included (`--fields=password`).
    options: Vec<Vec<String>>,
    /// Tokens of each option's name alone (`--delete-branch`).
    option_names: Vec<Vec<String>>,
}

impl Grammar {
    fn of(i: &Invocation) -> Self {
        let mut path = vec![grammar::tokens(&i.program).collect::<Vec<_>>()];
        let mut options = Vec::new();
        let mut option_names = Vec::new();
        for arg in &i.args {
            if arg.starts_with('-') {
                options.push(grammar::tokens(arg).collect());
                let name = arg.split('=').next().unwrap_or(arg);
                option_names.push(grammar::tokens(name).collect());
            } else if path.len() <= PATH_WORDS && !names_a_file(arg) && !is_text(arg) {
                path.push(grammar::tokens(arg).collect());
            }
        }
        Self {
            path,
            options,
            option_names,
        }
    }

    fn all(&self) -> impl Iterator<Item = &str> {
        self.path
            .iter()
            .chain(&self.options)
            .flatten()
            .map(String::as_str)
    }

    fn has_any(&self, words: &[&str]) -> bool {
        self.all().any(|t| words.contains(&t))
    }
}

/// Whether an operand is a file's path (`~/.aws/credentials`,
/// `./secret.txt`, `/etc/x`) or name (`prune.sql`): a file named is no
/// word of the grammar. `//host/:key` (a registry's configuration key) is
/// not one.
fn names_a_file(arg: &str) -> bool {
    let extension = arg.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=4).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphabetic())
    });
    extension || arg.starts_with(['~', '.']) || (arg.starts_with('/') && !arg.starts_with("//"))
}

/// Whether an operand is text rather than a word: a statement, a message
/// a script (`mysql -e "DELETE FROM t WHERE ..."`), an assignment or an
/// expansion, which the grammar does not read.
fn is_text(arg: &str) -> bool {
    arg.contains(char::is_whitespace) || arg.contains(['=', '$'])
}

/// A destructive operation read from the grammar of a program no other
/// analysis judges: a destroying verb, or a removing one applied to a
/// shared resource, remote storage, production or everything.
pub(super) fn destructive(i: &Invocation) -> Option<String> {
    if i.phantom {
        return None;
    }
    let g = Grammar::of(i);
    let nouns = g.path.iter().chain(&g.option_names).flatten();
    let shared = nouns.map(String::as_str).any(|t| SHARED_NOUNS.contains(&t))
        || i.args
            .iter()
            .any(|a| REMOTE_STORAGE_SCHEMES.iter().any(|s| a.starts_with(s)));
    let verbs = || g.path.iter().skip(1).chain(&g.option_names).flatten();
    let destroys = verbs().any(|t| DESTROY_VERBS.contains(&t.as_str()))
        && !g.all().any(|t| DISPOSABLE_NOUNS.contains(&t));
    let removes = verbs().any(|t| REMOVE_VERBS.contains(&t.as_str()))
        && (shared || broad(i) || names_production(i));
    (destroys || removes).then(|| {
        let confirmed = if i
            .args
            .iter()
            .any(|a| CONFIRMATION_BYPASS.contains(&a.as_str()))
        {
            ", its confirmation skipped"
        } else {
            ""
        };
        format!(
            "{} {} destroys what it names{confirmed}",
            i.program,
            i.args.join(" ")
        )
    })
}

/// Whether an operation is widened to everything by an option of its own
/// (`--all`, `-r`, `--recursive`, `--prefix`) or a wildcard operand.
fn broad(i: &Invocation) -> bool {
    i.args.iter().any(|a| {
        let name = a.split('=').next().unwrap_or(a);
        matches!(name, "-r" | "-R" | "*" | "/*")
            || (a.starts_with('-')
                && grammar::tokens(name).any(|t| BREADTH_TOKENS.contains(&t.as_str())))
    })
}

/// An HTTP `DELETE` sent by any client to a shared resource or to every
/// index (`curl -X DELETE es:9200/_all`, `gh api -X DELETE repos/o/r`).
pub(super) fn http_delete(i: &Invocation) -> Option<String> {
    let method = i.args.windows(2).any(|w| {
        matches!(w[0].as_str(), "-X" | "--request" | "--method")
            && w[1].eq_ignore_ascii_case("delete")
    }) || i.args.iter().any(|a| a.eq_ignore_ascii_case("-XDELETE"));
    if !method || i.phantom {
        return None;
    }
    let target = i.args.iter().filter(|a| !a.starts_with('-')).find(|a| {
        a.contains("/_all")
            || a.ends_with("/*")
            || a.contains("/*/")
            || grammar::tokens(a.split_once("://").map_or(a.as_str(), |(_, rest)| rest))
                .skip(1)
                .any(|t| SHARED_NOUNS.contains(&t.as_str()))
    })?;
    Some(format!("{} sends DELETE to {target}", i.program))
}

/// Whether an operation names production among its words
/// (`--stack prod`, `shop-production`, `-n production`).
pub(super) fn names_production(i: &Invocation) -> bool {
    i.args
        .iter()
        .flat_map(|a| grammar::tokens(a))
        .any(|t| PRODUCTION_TOKENS.contains(&t.as_str()))
}

/// Commands that stop every process of a user or of the system, or remove
/// every scheduled job: not one thing ended but everything.
pub(super) fn mass_disruption(i: &Invocation, out: &mut Vec<Risk>) {
    if !matches!(
        i.program.as_str(),
        "kill" | "killall5" | "pkill" | "killall" | "crontab" | "atrm"
    ) {
        return;
    }
    let args: Vec<&str> = i.args.iter().map(String::as_str).collect();
    let operands: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-'))
        .collect();
    let why = match i.program.as_str() {
        "kill" if kills_every_process(&args) => Some("signals every process (PID -1)"),
        "killall5" => Some("signals every process"),
        "pkill" | "killall"
            if args
                .iter()
                .any(|a| matches!(*a, "-u" | "--user" | "-U" | "--uid"))
                || operands.iter().any(|p| matches!(*p, "." | ".*" | "" | "^")) =>
        {
            Some("signals every process of a user, or matching anything")
        }
        "crontab" if args.iter().any(|a| *a == "-r" || *a == "--remove") => {
            Some("removes every scheduled job of the user")
        }
        "atrm" if i.arg_words.iter().any(|w| w.dynamic) => {
            Some("removes scheduled jobs listed at run time")
        }
        _ => None,
    };
    if let Some(why) = why {
        out.push(risk(
            RiskKind::MassDisruption,
            format!("{} {}: {why}", i.program, i.args.join(" ")),
        ));
    }
}

/// Whether `kill ARGS` signals PID -1: `-1` after the signal (`kill -9
/// -1`, `kill -s KILL -1`) or after `--`. Alone (`kill -1 PID`) it is
/// the signal.
fn kills_every_process(args: &[&str]) -> bool {
    let mut signal_given = false;
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        match *arg {
            "--" => return words.any(|a| *a == "-1"),
            "-s" | "-n" => {
                words.next();
                signal_given = true;
            }
            "-1" if signal_given => return true,
            a if a.starts_with('-') => signal_given = true,
            _ => {}
        }
    }
    false
}

/// Whether any word of the invocation could name a credential, a store of
/// them or a revealing option: the cheap test before the grammar is read.
fn mentions_credentials(i: &Invocation) -> bool {
    Role::CredentialStore.includes(&i.program)
        || Role::AppPlatform.includes(&i.program)
        || hints_credentials(&i.program)
        || i.args.iter().any(|a| hints_credentials(a))
}

/// Parts of words that hint at a credential, in any case.
const CREDENTIAL_HINTS: [&str; 10] = [
    "token",
    "pass",
    "secret",
    "cred",
    "key",
    "raw",
    "reveal",
    "unmask",
    "plaintext",
    "decrypt",
];

/// For each letter of the alphabet, the hints of [`CREDENTIAL_HINTS`]
/// that begin with it (bit `n` for the `n`th hint): most positions of a
/// word begin none, and the rest are compared with one or two hints.
const HINTS_BY_FIRST_LETTER: [u16; 26] = {
    let mut table = [0; 26];
    let mut at = 0;
    while at < CREDENTIAL_HINTS.len() {
        table[(CREDENTIAL_HINTS[at].as_bytes()[0] - b'a') as usize] |= 1 << at;
        at += 1;
    }
    table
};

fn hints_credentials(word: &str) -> bool {
    let bytes = word.as_bytes();
    (0..bytes.len()).any(|at| {
        let first = bytes[at].to_ascii_lowercase();
        if !first.is_ascii_lowercase() {
            return false;
        }
        let mut hints = HINTS_BY_FIRST_LETTER[(first - b'a') as usize];
        while hints != 0 {
            let hint = CREDENTIAL_HINTS[hints.trailing_zeros() as usize].as_bytes();
            let found = bytes[at..]
                .get(..hint.len())
                .is_some_and(|part| part.eq_ignore_ascii_case(hint));
            if found {
                return true;
            }
            hints &= hints - 1;
        }
        false
    })
}

/// Commands whose output is a credential: a verb of printing applied to a
/// word that names a token, password, secret or key (`auth
/// print-access-token`, `get-login-password`, `configure get
/// aws_secret_access_key`), a credential store asked for an entry, a
/// credential helper asked to fill one, or an option that lifts redaction.
pub(super) fn credential_output(i: &Invocation, out: &mut Vec<Risk>) {
    // Handed on (`TOKEN=$(gh auth token)`, `| docker login
    // --password-stdin`), the credential is not shown; where it is handed
    // is the egress analysis's to judge.
    // What printers and searchers print is judged by the files they read.
    if i.phantom
        || i.output_handed_on
        || Role::Printer.includes(&i.program)
        || Role::Searcher.includes(&i.program)
        || !mentions_credentials(i)
    {
        return;
    }
    let g = Grammar::of(i);
    let reveals = i
        .args
        .iter()
        .any(|a| REVEALING_OPTIONS.contains(&a.as_str()))
        && g.has_any(&["view", "show", "status", "get", "config"]);
    // Verbs lead their words (`list-secrets`, `get-login-password`).
    let quiet = g
        .path
        .iter()
        .skip(1)
        .filter_map(|w| w.first())
        .any(|t| QUIET_VERBS.contains(&t.as_str()));
    let minted = g
        .path
        .iter()
        .skip(1)
        .filter_map(|w| w.first())
        .any(|t| MINTING_VERBS.contains(&t.as_str()))
        && g.path.iter().skip(1).any(|w| {
            grammar::names_credential(w)
                && w.last().is_some_and(|h| MINTED_NOUNS.contains(&h.as_str()))
        });
    if quiet && !reveals && !minted {
        return;
    }
    // `secret/NAME` names one secret as `secret NAME` does.
    let credential_words: Vec<&[String]> = g
        .path
        .iter()
        .chain(&g.options)
        .map(|w| match w.first().map(String::as_str) {
            Some("secret" | "secrets") => &w[..1],
            _ => &w[..],
        })
        .filter(|w| grammar::names_credential(w))
        .collect();
    let emits = g.has_any(EMIT_VERBS);
    // A subcommand named for what it prints (`gh auth token`); a name in
    // capitals is a variable's (`API_KEY`), not a subcommand.
    let last = i.args.iter().rev().find(|a| !a.starts_with('-'));
    let last_word_names_one = g.path.len() > 1
        && last.is_some_and(|a| !a.bytes().any(|b| b.is_ascii_uppercase()))
        && grammar::names_credential(g.path.last().expect("path has the program"));
    // A credential helper is a store: `docker-credential-desktop`, `git
    // credential-osxkeychain`, `git credential`.
    let helper = |w: &Vec<String>| w.iter().any(|t| t == "credential" || t == "keychain");
    let store = Role::CredentialStore.includes(&i.program)
        || helper(&g.path[0])
        || g.path
            .get(1)
            .is_some_and(|w| w.first().is_some_and(|t| t == "credential"));
    let secret_only = credential_words
        .iter()
        .all(|w| w.last().is_some_and(|h| h == "secret" || h == "secrets"));
    let prints = if credential_words.is_empty() {
        store && emits
    } else if secret_only {
        // A secret by name is listed as often as shown: only a verb other
        // than `get`, an option printing its data, or a store asked for
        // it (`vault kv get secret/x`) shows it.
        g.all()
            .any(|t| EMIT_VERBS.contains(&t) && (t != "get" || store))
            || i.args
                .iter()
                .enumerate()
                .any(|(n, a)| grammar::prints_data(a, i.args.get(n + 1).map(String::as_str)))
    } else {
        emits || last_word_names_one || store
    };
    if prints || reveals || minted || app_environment_printed(i, &g) {
        out.push(risk(
            RiskKind::SecretRead,
            format!("{} {} prints a credential", i.program, i.args.join(" ")),
        ));
    }
}

/// Words for the environment a platform keeps for an app: its variables
/// and values, which hold the app's secrets.
const ENVIRONMENT_NOUNS: &[&str] = &[
    "config",
    "values",
    "env",
    "envs",
    "environment",
    "variables",
    "vars",
    "printenv",
];

/// Whether a deployment platform prints an app's environment: a noun of
/// it on the subcommand path, with no verb that lists, sets or changes
/// (`heroku config`, `helm get values`, `eb printenv`; not `heroku
/// config:set`, `vercel env ls`).
fn app_environment_printed(i: &Invocation, g: &Grammar) -> bool {
    Role::AppPlatform.includes(&i.program)
        && g.path
            .iter()
            .skip(1)
            .any(|w| w.iter().any(|t| ENVIRONMENT_NOUNS.contains(&t.as_str())))
        && !g
            .all()
            .any(|t| QUIET_VERBS.contains(&t) || CHANGE_VERBS.contains(&t))
}

/// Verbs of a platform's subcommands that change rather than show, beyond
/// the quiet verbs every credential tool shares ([`QUIET_VERBS`]).
const CHANGE_VERBS: &[&str] = &[
    "unset",
    "push",
    "import",
    "edit",
    "install",
    "upgrade",
    "rollback",
    "uninstall",
    "deploy",
    "apply",
];

#[cfg(test)]
mod tests {
    use crate::analyze;
    use crate::types::{RiskKind, ShellContext};

    const CTX: ShellContext<'static> = crate::types::TEST_CONTEXT;

    #[test]
    fn credential_hints_are_found_as_a_search_for_each_hint_finds_them() {
        let by_each_hint = |word: &str| {
            super::CREDENTIAL_HINTS.iter().any(|hint| {
                word.as_bytes()
                    .windows(hint.len())
                    .any(|w| w.eq_ignore_ascii_case(hint.as_bytes()))
            })
        };
        let words = [
            "",
            "t",
            "tok",
            "TOKEN",
            "x-Api-Key",
            "--show-secret",
            "passwd",
            "pas",
            "ke",
            "unmasked",
            "PlainText",
            "decrypt=1",
            "raw",
            "dra",
            "créd",
            "crédential",
            "credential",
            "é",
            "print-access-token",
            "get-login-password",
            "s/foo/bar/g",
            "/workspace/project",
            "origin",
            "--prune",
            "kEy",
            "reveaL",
            "zzzzzzzz",
        ];
        for word in words {
            assert_eq!(super::hints_credentials(word), by_each_hint(word), "{word}");
        }
    }

    fn has(command: &str, kind: RiskKind) -> bool {
        analyze(command, &CTX).has(kind)
    }

    #[test]
    fn secrets_listed_by_name_are_not_read_their_data_is() {
        for c in [
            "kubectl get secrets -A -o yaml",
            "kubectl get secrets -o jsonpath='{.items[*].data}'",
        ] {
            assert!(has(c, RiskKind::SecretRead), "{c}");
        }
        for c in [
            "kubectl get secrets",
            "kubectl get secrets -A",
            "kubectl get secrets -o name",
            "gh secrets list",
            "aws secretsmanager list-secrets",
        ] {
            assert!(!has(c, RiskKind::SecretRead), "{c}");
        }
    }

    #[test]
    fn destroying_verbs_of_unknown_tools_are_destructive() {
        for c in [
            "acmectl apps:destroy --app shop",
            "cloudx bucket delete media --yes",
            "dbtool database drop orders",
            "objstore rm -r s3://backups",
        ] {
            assert!(has(c, RiskKind::InfraDestroy), "{c}");
        }
        for c in [
            "acmectl apps:list",
            "toolx cache purge",
            "toolx remove widget",
            "toolx --help",
            // A file named after a verb is data, not the verb.
            "psql -d app -f prune.sql",
            "dbtool load reset.json",
        ] {
            assert!(!has(c, RiskKind::InfraDestroy), "{c}");
        }
    }

    #[test]
    fn production_targets_are_protected() {
        assert!(has(
            "acmectl stack destroy --stack prod --yes",
            RiskKind::ProtectedTarget
        ));
        assert!(!has(
            "acmectl stack destroy --stack dev --yes",
            RiskKind::ProtectedTarget
        ));
    }

    #[test]
    fn printed_credentials_are_secret_reads() {
        for c in [
            "acmectl auth token",
            "cloudx iam print-identity-token",
            "cloudx configure get secret_access_key",
            "vaultish get password github",
            "kubectl config view --raw",
            "kubectl get secret db -o yaml",
            "kubectl get secret db --output=jsonpath={.data}",
            "kubectl get secret db -o jsonpath={.data.password}",
            "kubectl get secret db -o jsonpath={.metadata.annotations}",
            "kubectl get secret db -o go-template={{.data.token}}",
        ] {
            assert!(has(c, RiskKind::SecretRead), "{c}");
        }
        for c in [
            "acmectl auth status",
            "acmectl token list",
            "cloudx configure get region",
            "git config --get credential.helper",
            "kubectl get secret db -o name",
            "kubectl get secrets --output=wide",
            "kubectl get secret db -o jsonpath={.metadata.name}",
            "kubectl get secrets -o jsonpath={range .items[*]}{.metadata.name}{end}",
            "kubectl get secrets -o custom-columns=NAME:.metadata.name,TYPE:.type",
        ] {
            assert!(!has(c, RiskKind::SecretRead), "{c}");
        }
    }

    #[test]
    fn killing_everything_and_dropping_schedules_disrupt() {
        for c in ["kill -9 -1", "killall5 -9", "pkill -u dev", "crontab -r"] {
            assert!(has(c, RiskKind::MassDisruption), "{c}");
        }
        for c in ["kill 1234", "kill -9 1234", "pkill -f vite", "crontab -l"] {
            assert!(!has(c, RiskKind::MassDisruption), "{c}");
        }
    }
}
