//! Programs by the roles the shell analysis reads.
//!
//! Each role has one list ([`Role::members`]); a program may have several
//! roles (`rsync` copies, archives and reaches a host). What is derived
//! from roles ([`fetches`], [`reaches_hosts`], [`names_files`],
//! [`starts_shell`]) is derived here, so no analysis keeps a union of its
//! own.

use crate::names::NameIndex;

/// A job a program does that some analysis reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Role {
    /// Runs a script: its `-c` argument, a file, or what it reads on its
    /// standard input.
    Shell,
    /// One binary holding many programs, run as `NAME PROGRAM ARGS`
    /// (`busybox sh`).
    Multicall,
    /// Speaks HTTP to the URL or host it is given.
    HttpClient,
    /// Opens a raw connection to the host it is given.
    SocketClient,
    /// Looks up the name it is given in DNS.
    Resolver,
    /// Resolves the name it is given before doing anything else with it.
    NameLookup,
    /// Reaches a host named in its operands (`user@host:path`, a URL).
    Remote,
    /// Turns encoded or compressed text back into what was encoded.
    Decoder,
    /// Reads the contents of the files it names.
    FileReader,
    /// Takes files as operands without revealing their contents: listing,
    /// permissions, hashing, using a key to connect.
    FileNamer,
    /// Copies or archives whole directories.
    Archiver,
    /// Searches the files or text it is given.
    Searcher,
    /// Its last operand is where it writes, not what it reads.
    Copier,
    /// Prints, compares or tests its arguments and never runs them.
    Printer,
    /// Installs packages from a registry (`pip` and `python -m pip` are
    /// recognised by their names' start).
    PackageManager,
    /// Sends SQL or queries to a database: its arguments and input may be
    /// statements.
    DatabaseClient,
    /// Keeps passwords, tokens or keys and prints one when asked.
    CredentialStore,
    /// Prints data kept outside the workspace: a database's dump or export,
    /// a directory's entries, the system's logs, the shell's history of
    /// commands (and the secrets typed into them), the clipboard (`xclip`
    /// and `xsel` when asked for its output).
    DataDumper,
    /// Deploys applications and keeps their environment: the values it
    /// holds for an app (`heroku config`, `helm get values`) are its
    /// secrets.
    AppPlatform,
    /// Prints shell code that sets itself up (`pyenv init -`, `ssh-agent
    /// -s`, `brew shellenv`): `eval "$(pyenv init -)"` runs what the tool
    /// is, not unknown code.
    ShellSetup,
}

impl Role {
    /// Every role, for tests that hold each to its behaviour.
    pub const ALL: &[Role] = &[
        Role::Shell,
        Role::Multicall,
        Role::HttpClient,
        Role::SocketClient,
        Role::Resolver,
        Role::NameLookup,
        Role::Remote,
        Role::Decoder,
        Role::FileReader,
        Role::FileNamer,
        Role::Archiver,
        Role::Searcher,
        Role::Copier,
        Role::Printer,
        Role::PackageManager,
        Role::DatabaseClient,
        Role::CredentialStore,
        Role::DataDumper,
        Role::AppPlatform,
        Role::ShellSetup,
    ];

    /// The programs with this role, by the name they are run as.
    pub const fn members(self) -> &'static [&'static str] {
        match self {
            Role::Shell => &["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"],
            Role::Multicall => &["busybox"],
            Role::HttpClient => &["curl", "wget", "http", "https", "xh", "aria2c", "fetch"],
            Role::SocketClient => &["nc", "ncat", "netcat", "socat", "telnet"],
            Role::Resolver => &["dig", "nslookup", "host", "drill", "resolvectl"],
            Role::NameLookup => &[
                "ping",
                "ping6",
                "traceroute",
                "tracepath",
                "getent",
                "whois",
            ],
            Role::Remote => &["ssh", "scp", "sftp", "mosh", "rsync", "ftp", "git"],
            Role::Decoder => &[
                "base64", "base32", "xxd", "openssl", "gunzip", "zcat", "rev", "tr",
            ],
            Role::FileReader => FILE_READERS,
            Role::FileNamer => FILE_NAMERS,
            Role::Archiver => &["tar", "zip", "7z", "cp", "mv", "rsync", "scp"],
            Role::Searcher => &["grep", "egrep", "fgrep", "rg", "ag", "ack"],
            Role::Copier => &["cp", "mv", "install", "rsync", "scp"],
            Role::Printer => &[
                "echo", "printf", "cat", "tee", "grep", "egrep", "fgrep", "rg", "ag", "ack",
                "test", "[", "[[", ":", "true", "false",
            ],
            Role::PackageManager => &["npm", "yarn", "pnpm", "bun", "cargo", "gem", "uv", "poetry"],
            Role::DatabaseClient => &[
                "psql",
                "mysql",
                "mariadb",
                "sqlite3",
                "sqlcmd",
                "cqlsh",
                "clickhouse-client",
                "clickhouse",
                "duckdb",
                "cockroach",
                "mongosh",
                "mongo",
                "snowsql",
                "usql",
                "pgcli",
                "mycli",
                "litecli",
                "trino",
                "presto",
                "spark-sql",
                "beeline",
                "isql",
                "osql",
                "vsql",
                "impala-shell",
                "sqlplus",
                "bq",
                "redis-cli",
                "valkey-cli",
                "keydb-cli",
                "etcdctl",
            ],
            Role::CredentialStore => &[
                "pass",
                "gopass",
                "op",
                "bw",
                "lpass",
                "keyring",
                "secret-tool",
                "security",
                "vault",
                "kwallet-query",
                "keepassxc-cli",
                "chamber",
                "sops",
                "age",
            ],
            Role::DataDumper => &[
                "pg_dump",
                "pg_dumpall",
                "mysqldump",
                "mariadb-dump",
                "mongodump",
                "mongoexport",
                "pbpaste",
                "wl-paste",
                "xclip",
                "xsel",
                "ldapsearch",
                "journalctl",
                "history",
                "fc",
            ],
            Role::AppPlatform => &[
                "heroku",
                "helm",
                "vercel",
                "netlify",
                "fly",
                "flyctl",
                "railway",
                "render",
                "dokku",
                "eb",
                "infisical",
            ],
            Role::ShellSetup => &[
                "ssh-agent",
                "gpg-agent",
                "keychain",
                "pyenv",
                "rbenv",
                "jenv",
                "nodenv",
                "goenv",
                "plenv",
                "direnv",
                "brew",
                "starship",
                "zoxide",
                "conda",
                "micromamba",
                "mamba",
                "fnm",
                "mise",
                "rtx",
                "minikube",
                "dircolors",
                "atuin",
                "thefuck",
                "opam",
                "luarocks",
                "register-python-argcomplete",
                "fzf",
                "oh-my-posh",
                "rye",
            ],
        }
    }

    /// Whether `program` (a name without directories) has this role.
    pub fn includes(self, program: &str) -> bool {
        ROLE_INDEXES[self as usize].may_hold(program) && self.members().contains(&program)
    }
}

/// Each role's [`NameIndex`], by the role's place in its enum.
static ROLE_INDEXES: [NameIndex; Role::ALL.len()] = {
    let mut indexes = [NameIndex::EMPTY; Role::ALL.len()];
    let mut at = 0;
    while at < Role::ALL.len() {
        let role = Role::ALL[at];
        assert!(role as usize == at, "Role::ALL lists the roles in order");
        indexes[at] = NameIndex::of(role.members());
        at += 1;
    }
    indexes
};

const FILE_READERS: &[&str] = &[
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
    "vi",
    "vim",
    "nano",
    "emacs",
    "view",
    "bat",
    "install",
    "ssh-keygen",
    "sftp",
    // Text utilities that print or reshape what they read.
    "column",
    "fold",
    "fmt",
    "pr",
    "paste",
    "join",
    "comm",
    "rev",
    "expand",
    "unexpand",
    "look",
    "csplit",
    "split",
    "iconv",
    "dos2unix",
    "unix2dos",
    "ed",
    "ex",
    "pandoc",
    "enscript",
];

const FILE_NAMERS: &[&str] = &[
    "ls",
    "stat",
    "file",
    "chmod",
    "chown",
    "chgrp",
    "touch",
    "test",
    "[",
    "[[",
    "ssh",
    "ssh-add",
    "ssh-copy-id",
    "mkdir",
    "rm",
    "du",
    "realpath",
    "readlink",
    "dirname",
    "basename",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "shred",
    "git",
    "wc",
    "lsattr",
    "chattr",
    "setfacl",
    "getfacl",
    "echo",
    "printf",
    "cd",
    "pushd",
    "export",
    "unset",
    "command",
    "type",
    "which",
    "trash",
    "unlink",
    "rmdir",
    "ln",
    ":",
    "source",
    ".",
];

/// The options of `program` that take the next word as their value, so
/// that word is no operand (`curl -o FILE URL`, `ssh -i KEY HOST`).
pub fn options_with_values(program: &str) -> &'static [&'static str] {
    match program {
        p if Role::HttpClient.includes(p) => HTTP_VALUED_OPTIONS,
        "ssh" | "scp" | "sftp" | "mosh" => SSH_VALUED_OPTIONS,
        "shred" => &["-n", "-s", "--iterations", "--size", "--random-source"],
        "head" | "tail" => &["-n", "-c", "--lines", "--bytes"],
        "sed" => &["-e", "-f", "-l", "--expression", "--file", "--line-length"],
        _ => &[],
    }
}

/// Options of HTTP clients that take a value, which is not a destination.
const HTTP_VALUED_OPTIONS: &[&str] = &[
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

/// Options of `ssh` (and `scp`, `sftp`, `mosh`) that take a value; the
/// destination is the first operand after them.
const SSH_VALUED_OPTIONS: &[&str] = &[
    "-B", "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-P",
    "-p", "-Q", "-R", "-S", "-W", "-w",
];

/// Whether what `program` prints can come from the network: piped into a
/// shell, it runs a remote script.
pub fn fetches(program: &str) -> bool {
    Role::HttpClient.includes(program) || Role::SocketClient.includes(program)
}

/// Whether the arguments of `program` are data it prints, compares or
/// looks up, never a command it runs (`getent passwd dev`).
pub fn runs_no_arguments(program: &str) -> bool {
    Role::Printer.includes(program)
        || Role::NameLookup.includes(program)
        || Role::Resolver.includes(program)
}

/// Programs that copy their standard input to their standard output
/// (`tee` also into files, `pv` with a progress bar): a pipe through one
/// carries what the stage before it printed to the stage after it.
const PASS_THROUGH: &[&str] = &["tee", "pv", "buffer", "mbuffer", "cat"];

/// Whether `program` with `operands` hands on what it reads from a pipe:
/// one of [`PASS_THROUGH`], `cat` only when it reads nothing but its
/// standard input (`cat`, `cat -`).
pub fn passes_input_through<'a>(
    program: &str,
    mut operands: impl Iterator<Item = &'a str>,
) -> bool {
    PASS_THROUGH.contains(&program) && (program != "cat" || operands.all(|o| o == "-"))
}

/// Git's own subcommands whose operands are refs, remotes, paths and
/// messages, never a command to run: for these, no operand is read as the
/// start of another command (`git fetch origin --prune`). Those that run
/// one (`bisect run`, `rebase --exec`, `submodule foreach`, the filters
/// of `filter-branch`, `difftool --extcmd`) are not listed, nor are
/// aliases, which may run a shell.
pub const GIT_DATA_SUBCOMMANDS: &[&str] = &[
    "fetch",
    "pull",
    "push",
    "clone",
    "status",
    "log",
    "diff",
    "show",
    "add",
    "commit",
    "checkout",
    "switch",
    "branch",
    "merge",
    "stash",
    "tag",
    "remote",
    "init",
    "reset",
    "restore",
    "rm",
    "mv",
    "blame",
    "grep",
    "describe",
    "shortlog",
    "reflog",
    "ls-files",
    "ls-remote",
    "rev-parse",
    "rev-list",
    "cherry-pick",
    "revert",
    "clean",
    "archive",
    "apply",
    "format-patch",
    "am",
    "notes",
    "gc",
    "fsck",
    "prune",
    "cat-file",
    "show-ref",
    "for-each-ref",
    "merge-base",
    "name-rev",
    "range-diff",
    "sparse-checkout",
];

/// Whether `program` run with `args` prints shell code that sets the
/// program itself up: a [`Role::ShellSetup`] tool, or any program asked
/// for its shell completion (`kubectl completion bash`, `just
/// --completions zsh`).
pub fn prints_own_setup(program: &str, args: &[String]) -> bool {
    Role::ShellSetup.includes(program)
        || args
            .iter()
            .any(|a| a.trim_start_matches('-').starts_with("complet") || a.contains("-completion"))
}

/// Whether `program` talks to a host named in its operands.
pub fn reaches_hosts(program: &str) -> bool {
    [
        Role::HttpClient,
        Role::SocketClient,
        Role::Resolver,
        Role::Remote,
    ]
    .into_iter()
    .any(|role| role.includes(program))
}

/// Whether `program` takes files as operands, reading them or not: the
/// files it names are data, not commands it runs.
pub fn names_files(program: &str) -> bool {
    Role::FileReader.includes(program) || Role::FileNamer.includes(program)
}

/// Whether `word` (a name or path) names a program that starts a shell: a
/// shell, or a multi-call binary that holds one.
pub fn starts_shell(word: &str) -> bool {
    let name = basename(word);
    Role::Shell.includes(name) || Role::Multicall.includes(name)
}

/// A program's name without its directories (`/bin/rm` is `rm`).
pub fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_reads_the_files_it_names_or_does_not() {
        for program in FILE_READERS {
            assert!(
                !FILE_NAMERS.contains(program),
                "{program} is listed as reading and as only naming files"
            );
        }
    }

    #[test]
    fn every_role_has_members_and_no_repeats() {
        for role in Role::ALL {
            let members = role.members();
            assert!(!members.is_empty(), "{role:?}");
            for (n, program) in members.iter().enumerate() {
                assert!(
                    !members[..n].contains(program),
                    "{role:?} lists {program} twice"
                );
            }
        }
    }

    #[test]
    fn the_index_lets_every_member_through_and_answers_as_the_list_does() {
        let names: Vec<&str> = Role::ALL
            .iter()
            .flat_map(|r| r.members())
            .copied()
            .collect();
        for role in Role::ALL {
            for name in names.iter().chain(&["", "rm", "Bash", "git", "x"]) {
                assert_eq!(
                    role.includes(name),
                    role.members().contains(name),
                    "{role:?} {name}"
                );
            }
        }
    }

    #[test]
    fn derived_roles_follow_their_parts() {
        assert!(fetches("xh") && fetches("https") && fetches("socat"));
        assert!(reaches_hosts("ssh") && reaches_hosts("dig") && reaches_hosts("https"));
        assert!(names_files("ls") && names_files("cat"));
        assert!(starts_shell("/bin/bash") && starts_shell("busybox"));
        assert!(!starts_shell("bashful"));
    }
}
