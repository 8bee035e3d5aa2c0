//! Files whose content is executed later by a tool that reads them.
//!
//! Writing such a file is running its content, deferred: `npm install`
//! runs a manifest's lifecycle scripts, `direnv` the `.envrc` of a
//! directory entered, `ssh` a config's `ProxyCommand`, Python a `.pth`
//! line starting with `import`, an editor a task marked to run when the
//! folder opens, CI a workflow's steps. Each entry says how the tool reads
//! the file ([`Format`]), so the content can be analysed as what it will
//! execute. Dependency manifests are here too: what they change is where
//! code comes from.

/// How the tool that runs a file reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// The whole file is a shell script (`.envrc`, git and husky hooks).
    Shell,
    /// `package.json`: `scripts` run by the package manager (the lifecycle
    /// ones on install), `dependencies` say where packages come from.
    PackageManifest,
    /// An SSH client configuration: `ProxyCommand`, `LocalCommand`,
    /// `KnownHostsCommand` and `Match exec` run commands.
    SshConfig,
    /// A `.pth` file: lines starting with `import` run as Python at every
    /// interpreter start.
    PythonPath,
    /// Python source run without being asked (`sitecustomize.py`,
    /// `setup.py`, `conftest.py`).
    Python,
    /// Editor or container configuration in JSON: tasks that run when a
    /// folder opens, a dev container's life-cycle commands.
    EditorJson,
    /// Git configuration: aliases starting with `!`, `core.fsmonitor`,
    /// `core.sshCommand`, filters, helpers and other command values.
    GitConfig,
    /// A CI or compose file in YAML: `run`, `script`, `command` and
    /// `entrypoint` values.
    Yaml,
    /// A Dockerfile: `RUN`, `CMD` and `ENTRYPOINT` instructions.
    Dockerfile,
    /// A Makefile or justfile: recipe lines.
    Makefile,
    /// Source of a compiled language run at build time (`build.rs`): the
    /// commands it spawns appear as string literals.
    BuildSource,
    /// Cargo configuration: `runner` and wrapper commands, registries.
    CargoConfig,
    /// A dependency manifest or package-manager configuration: where
    /// packages come from (`go.mod`, `Cargo.toml`, `requirements.txt`,
    /// `pyproject.toml`, `.npmrc`, `pip.conf`).
    Dependencies,
    /// An editor's start-up file in its own language (Vim script, Lua,
    /// Emacs Lisp): shell escapes (`:!cmd`, `silent !cmd`) and the calls
    /// that run a command (`system(...)`, `os.execute(...)`,
    /// `(shell-command ...)`).
    EditorScript,
}

/// A file that runs later: what runs it and how it reads the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunsLater {
    /// Its name in policies (`package_scripts`, `direnv`, `ssh_config`).
    pub kind: &'static str,
    /// How it is read.
    pub format: Format,
}

/// One entry of the table: a test on the path and what it means.
struct Entry {
    matches: fn(&Path) -> bool,
    kind: &'static str,
    format: Format,
}

/// A path split once for the tests of [`ENTRIES`].
struct Path<'a> {
    full: &'a str,
    name: &'a str,
    parent: &'a str,
}

impl Path<'_> {
    fn under(&self, dir: &str) -> bool {
        self.full.contains(&format!("/{dir}/"))
    }
}

const ENTRIES: &[Entry] = &[
    Entry {
        matches: |p| p.name == "package.json",
        kind: "package_scripts",
        format: Format::PackageManifest,
    },
    Entry {
        // What the shell runs at every start, wherever its home is.
        matches: |p| {
            crate::persistence::SHELL_STARTUP
                .iter()
                .any(|f| p.full.strip_suffix(f).is_some_and(|dir| dir.ends_with('/')))
                || p.full.starts_with("/etc/profile")
                || p.full == "/etc/bash.bashrc"
        },
        kind: "shell_startup",
        format: Format::Shell,
    },
    Entry {
        matches: |p| p.name == ".envrc",
        kind: "direnv",
        format: Format::Shell,
    },
    Entry {
        matches: |p| p.parent.ends_with("/.husky") || p.under(".husky"),
        kind: "git_hook",
        format: Format::Shell,
    },
    Entry {
        matches: |p| p.under(".git/hooks") && !p.name.ends_with(".sample"),
        kind: "git_hook",
        format: Format::Shell,
    },
    Entry {
        matches: |p| {
            (p.parent.ends_with("/.ssh") && p.name == "config") || p.full == "/etc/ssh/ssh_config"
        },
        kind: "ssh_config",
        format: Format::SshConfig,
    },
    Entry {
        matches: |p| p.name.ends_with(".pth"),
        kind: "python_startup",
        format: Format::PythonPath,
    },
    Entry {
        matches: |p| matches!(p.name, "sitecustomize.py" | "usercustomize.py"),
        kind: "python_startup",
        format: Format::Python,
    },
    Entry {
        matches: |p| matches!(p.name, "setup.py" | "conftest.py" | "noxfile.py"),
        kind: "python_build",
        format: Format::Python,
    },
    Entry {
        matches: |p| p.parent.ends_with("/.vscode") && p.name == "tasks.json",
        kind: "editor_tasks",
        format: Format::EditorJson,
    },
    Entry {
        matches: |p| p.name == "devcontainer.json" || p.name == ".devcontainer.json",
        kind: "devcontainer",
        format: Format::EditorJson,
    },
    Entry {
        matches: |p| {
            (p.parent.ends_with("/.git") && p.name == "config")
                || matches!(p.name, ".gitconfig" | ".gitmodules")
                || (p.parent.ends_with("/.config/git") && p.name == "config")
        },
        kind: "git_config",
        format: Format::GitConfig,
    },
    Entry {
        matches: |p| {
            (p.parent.ends_with("/.github/workflows") && yaml(p.name))
                || matches!(
                    p.name,
                    ".gitlab-ci.yml"
                        | "azure-pipelines.yml"
                        | "bitbucket-pipelines.yml"
                        | ".travis.yml"
                        | "action.yml"
                        | "action.yaml"
                )
                || (p.parent.ends_with("/.circleci") && yaml(p.name))
        },
        kind: "ci_workflow",
        format: Format::Yaml,
    },
    Entry {
        matches: |p| {
            matches!(
                p.name,
                "docker-compose.yml" | "docker-compose.yaml" | "compose.yml" | "compose.yaml"
            )
        },
        kind: "container",
        format: Format::Yaml,
    },
    Entry {
        matches: |p| {
            p.name == "Dockerfile" || p.name.ends_with(".Dockerfile") || p.name == "Containerfile"
        },
        kind: "container",
        format: Format::Dockerfile,
    },
    Entry {
        matches: |p| {
            matches!(
                p.name,
                "Makefile" | "makefile" | "GNUmakefile" | "justfile" | "Justfile"
            ) || p.name.ends_with(".mk")
        },
        kind: "build_script",
        format: Format::Makefile,
    },
    Entry {
        matches: |p| p.name == "build.rs" || p.name == "Jenkinsfile" || p.name.ends_with(".gradle"),
        kind: "build_script",
        format: Format::BuildSource,
    },
    Entry {
        matches: |p| p.parent.ends_with("/.cargo") && matches!(p.name, "config" | "config.toml"),
        kind: "cargo_config",
        format: Format::CargoConfig,
    },
    Entry {
        matches: |p| {
            matches!(
                p.name,
                "go.mod"
                    | "Cargo.toml"
                    | "pyproject.toml"
                    | ".npmrc"
                    | ".yarnrc"
                    | ".yarnrc.yml"
                    | "pip.conf"
                    | "pip.ini"
                    | "uv.toml"
                    | "Pipfile"
                    | "Gemfile"
            ) || (p.name.starts_with("requirements") && p.name.ends_with(".txt"))
        },
        kind: "dependencies",
        format: Format::Dependencies,
    },
    Entry {
        // What Vim, Neovim and Emacs read at start, and the project files
        // they read on opening a folder (`.exrc`, `.nvim.lua`,
        // `.dir-locals.el`).
        matches: |p| {
            matches!(
                p.name,
                ".vimrc"
                    | "_vimrc"
                    | ".gvimrc"
                    | ".exrc"
                    | ".nvimrc"
                    | ".nvim.lua"
                    | ".emacs"
                    | ".dir-locals.el"
            ) || (p.parent.ends_with("/.vim") && matches!(p.name, "vimrc" | "gvimrc"))
                || (p.parent.ends_with("/nvim") && matches!(p.name, "init.vim" | "init.lua"))
                || (p.parent.ends_with("/.emacs.d")
                    && matches!(p.name, "init.el" | "early-init.el"))
                || ((p.under(".vim") || p.under("nvim"))
                    && (p.name.ends_with(".vim") || p.name.ends_with(".lua")))
        },
        kind: "editor_startup",
        format: Format::EditorScript,
    },
];

fn yaml(name: &str) -> bool {
    name.ends_with(".yml") || name.ends_with(".yaml")
}

/// What runs the file at `path` (absolute and normalised) later, and how
/// it reads it; `None` for a file nothing runs.
pub fn runs_later(path: &str) -> Option<RunsLater> {
    let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
    let p = Path {
        full: path,
        name,
        parent,
    };
    ENTRIES.iter().find(|e| (e.matches)(&p)).map(|e| RunsLater {
        kind: e.kind,
        format: e.format,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One path per entry, with what it must be read as.
    const EXAMPLES: &[(&str, &str, Format)] = &[
        ("/home/dev/.bashrc", "shell_startup", Format::Shell),
        (
            "/home/dev/.config/fish/config.fish",
            "shell_startup",
            Format::Shell,
        ),
        ("/etc/profile.d/proxy.sh", "shell_startup", Format::Shell),
        (
            "/w/package.json",
            "package_scripts",
            Format::PackageManifest,
        ),
        ("/w/.envrc", "direnv", Format::Shell),
        ("/w/.husky/pre-commit", "git_hook", Format::Shell),
        ("/w/.git/hooks/post-checkout", "git_hook", Format::Shell),
        ("/home/dev/.ssh/config", "ssh_config", Format::SshConfig),
        (
            "/w/.venv/lib/python3.12/site-packages/x.pth",
            "python_startup",
            Format::PythonPath,
        ),
        (
            "/usr/lib/python3/sitecustomize.py",
            "python_startup",
            Format::Python,
        ),
        ("/w/setup.py", "python_build", Format::Python),
        ("/w/.vscode/tasks.json", "editor_tasks", Format::EditorJson),
        (
            "/w/.devcontainer/devcontainer.json",
            "devcontainer",
            Format::EditorJson,
        ),
        ("/w/.git/config", "git_config", Format::GitConfig),
        ("/w/.github/workflows/ci.yml", "ci_workflow", Format::Yaml),
        ("/w/docker-compose.yml", "container", Format::Yaml),
        ("/w/Dockerfile", "container", Format::Dockerfile),
        ("/w/Makefile", "build_script", Format::Makefile),
        ("/w/build.rs", "build_script", Format::BuildSource),
        ("/w/.cargo/config.toml", "cargo_config", Format::CargoConfig),
        ("/w/go.mod", "dependencies", Format::Dependencies),
        (
            "/w/requirements-dev.txt",
            "dependencies",
            Format::Dependencies,
        ),
        ("/home/dev/.vimrc", "editor_startup", Format::EditorScript),
        (
            "/home/dev/.config/nvim/init.lua",
            "editor_startup",
            Format::EditorScript,
        ),
    ];

    #[test]
    fn every_entry_is_found_by_its_example() {
        for (path, kind, format) in EXAMPLES {
            assert_eq!(
                runs_later(path),
                Some(RunsLater {
                    kind,
                    format: *format
                }),
                "{path}"
            );
        }
        for (n, entry) in ENTRIES.iter().enumerate() {
            let exemplified = EXAMPLES.iter().any(|(path, ..)| {
                let (parent, name) = path.rsplit_once('/').unwrap();
                (entry.matches)(&Path {
                    full: path,
                    name,
                    parent,
                })
            });
            assert!(exemplified, "entry {n} ({}) has no example", entry.kind);
        }
    }

    #[test]
    fn ordinary_files_do_not_run() {
        for path in [
            "/w/src/main.rs",
            "/w/README.md",
            "/w/.git/hooks/pre-commit.sample",
            "/w/config.json",
            "/w/.github/CODEOWNERS",
            "/w/tasks.json",
        ] {
            assert_eq!(runs_later(path), None, "{path}");
        }
    }
}
