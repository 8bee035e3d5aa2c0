//! Files whose contents run again later or grant access: writing to them is
//! how an attacker (or a confused agent) makes a change outlive the session.

/// What kind of persistence writing to `path` gives, if any. `path` is
/// absolute and normalised; `home` is what `~` stands for.
pub fn persistence_target(path: &str, home: &str) -> Option<&'static str> {
    // A directory named as the destination of a copy (`cp x ~/Library/LaunchAgents/`)
    // persists what lands in it; paths arrive without the trailing slash.
    let as_dir;
    let names_a_directory = DIRECTORIES
        .iter()
        .any(|d| d.strip_suffix('/').is_some_and(|d| path.ends_with(d)));
    let path = if names_a_directory {
        as_dir = format!("{path}/");
        as_dir.as_str()
    } else {
        path
    };
    let home = home.trim_end_matches('/');
    let in_home = |rel: &str| {
        path.strip_suffix(rel)
            .and_then(|dir| dir.strip_suffix('/'))
            .is_some_and(|dir| dir == home || is_user_home(dir))
    };
    let kind = if path.starts_with("/etc/sudoers") {
        "sudoers"
    } else if path.starts_with("/etc/cron")
        || path.starts_with("/var/spool/cron")
        || path == "/etc/anacrontab"
    {
        "cron"
    } else if path.starts_with("/etc/systemd/")
        || path.starts_with("/lib/systemd/")
        || path.starts_with("/usr/lib/systemd/")
        || path.starts_with("/etc/init.d/")
        || path == "/etc/rc.local"
        || path.contains("/.config/systemd/")
        || path.contains("/Library/LaunchAgents/")
        || path.contains("/Library/LaunchDaemons/")
    {
        "service"
    } else if path.contains("/.config/autostart/") {
        "autostart"
    } else if is_git_hook(path) {
        "git_hook"
    } else if path.ends_with("/.ssh/authorized_keys") || path.ends_with("/.ssh/authorized_keys2") {
        "authorized_keys"
    } else if path.starts_with("/etc/profile")
        || path == "/etc/bash.bashrc"
        || path == "/etc/environment"
        || path == "/etc/ld.so.preload"
        || SHELL_STARTUP.iter().any(|f| in_home(f))
    {
        "shell_startup"
    } else {
        return None;
    };
    Some(kind)
}

/// Whether `path` (absolute or relative) is a file coding agents load as
/// standing instructions at the start of every session: `AGENTS.md`,
/// `CLAUDE.md`, `GEMINI.md`, `.cursorrules` and the like, in a project or
/// in the user's configuration. What it says, every later session obeys:
/// the project's own instructions to its agents when a person wrote it, a
/// planted injection that outlives the session when an injection did.
pub fn agent_instructions(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let in_directory = |dir: &str| {
        (path.match_indices(dir)).any(|(at, _)| at == 0 || path.as_bytes()[at - 1] == b'/')
    };
    // Every directory listed is a hidden one: most paths are ruled out
    // before any is searched for.
    let hidden = path.starts_with('.') || path.contains("/.");
    AGENT_INSTRUCTION_FILES.contains(&name)
        || hidden
            && (name == "copilot-instructions.md" && in_directory(".github/")
                || name.ends_with(".instructions.md") && in_directory(".github/instructions/")
                || AGENT_INSTRUCTION_DIRECTORIES
                    .iter()
                    .any(|dir| in_directory(dir)))
}

/// Names of files agents load as instructions wherever they stand.
const AGENT_INSTRUCTION_FILES: &[&str] = &[
    "AGENTS.md",
    "AGENT.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    ".cursorrules",
    ".windsurfrules",
    ".clinerules",
];

/// Directories whose every file an agent loads as instructions, rules or
/// commands; each starts with a dot.
const AGENT_INSTRUCTION_DIRECTORIES: &[&str] = &[
    ".cursor/rules/",
    ".windsurf/rules/",
    ".clinerules/",
    ".claude/commands/",
    ".claude/agents/",
    ".gemini/commands/",
    ".continue/rules/",
    ".kiro/steering/",
    ".roo/rules/",
    ".amazonq/rules/",
    ".trae/rules/",
    ".junie/",
];

/// A file git runs on its own (`.git/hooks/pre-commit`): whoever next
/// commits, checks out or pushes runs what it holds. The samples git ships
/// do not run.
fn is_git_hook(path: &str) -> bool {
    path.split_once("/.git/hooks/")
        .is_some_and(|(_, name)| !name.is_empty() && !name.ends_with(".sample"))
}

/// `/root`, `/home/NAME` or `/Users/NAME`: the home of some user, when the
/// agent's own home is configured differently from the account it runs as.
fn is_user_home(dir: &str) -> bool {
    dir == "/root"
        || ["/home/", "/Users/"].iter().any(|prefix| {
            dir.strip_prefix(prefix)
                .is_some_and(|name| !name.is_empty() && !name.contains('/'))
        })
}

/// Directories whose every file persists something.
const DIRECTORIES: &[&str] = &[
    "/etc/sudoers.d/",
    "/etc/cron.d/",
    "/etc/cron.hourly/",
    "/etc/cron.daily/",
    "/etc/systemd/system/",
    "/.config/systemd/user/",
    "/.config/autostart/",
    "/Library/LaunchAgents/",
    "/Library/LaunchDaemons/",
];

/// The start-up files a user's shell runs, relative to home.
pub(crate) const SHELL_STARTUP: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".config/fish/config.fish",
];

#[cfg(test)]
mod tests {
    use super::{agent_instructions, persistence_target};

    #[test]
    fn agent_instruction_files_are_recognised_where_agents_look() {
        for path in [
            "AGENTS.md",
            "/workspace/project/packages/api/AGENTS.md",
            "CLAUDE.md",
            "/home/dev/.claude/CLAUDE.md",
            "/home/dev/.gemini/GEMINI.md",
            ".cursorrules",
            ".cursor/rules/style.mdc",
            "/workspace/project/.github/copilot-instructions.md",
            ".github/instructions/security.instructions.md",
            ".claude/commands/deploy.md",
        ] {
            assert!(agent_instructions(path), "{path}");
        }
        for path in [
            "README.md",
            "docs/AGENTS.md.bak",
            "copilot-instructions.md",
            "src/rules/style.mdc",
            "notes/CLAUDE.txt",
        ] {
            assert!(!agent_instructions(path), "{path}");
        }
        for dir in super::AGENT_INSTRUCTION_DIRECTORIES {
            assert!(
                dir.starts_with('.'),
                "{dir}: the quick rejection needs a dot"
            );
        }
        for dir in super::AGENT_INSTRUCTION_DIRECTORIES {
            assert!(
                dir.starts_with('.'),
                "{dir}: the quick rejection needs a dot"
            );
        }
    }

    #[test]
    fn persistence_targets_are_recognised() {
        let home = "/home/dev";
        for (path, kind) in [
            ("/etc/sudoers.d/agent", "sudoers"),
            ("/var/spool/cron/crontabs/dev", "cron"),
            ("/etc/systemd/system/x.service", "service"),
            ("/home/dev/.config/systemd/user/x.service", "service"),
            ("/Users/dev/Library/LaunchAgents/x.plist", "service"),
            ("/home/dev/.ssh/authorized_keys", "authorized_keys"),
            ("/home/dev/.bashrc", "shell_startup"),
            ("/home/other/.zshrc", "shell_startup"),
            ("/root/.profile", "shell_startup"),
            ("/home/dev/.config/fish/config.fish", "shell_startup"),
            ("/etc/ld.so.preload", "shell_startup"),
            ("/Users/dev/Library/LaunchAgents", "service"),
            ("/etc/cron.d", "cron"),
            ("/workspace/project/.git/hooks/pre-commit", "git_hook"),
        ] {
            assert_eq!(persistence_target(path, home), Some(kind), "{path}");
        }
        for path in [
            "/home/dev/project/.bashrc",
            "/home/dev/project/src/cron.rs",
            "/home/dev/.ssh/known_hosts",
            "/home/dev/notes/profile.md",
            "/home/.bashrc",
            "/srv/app/.bashrc",
            "/workspace/project/.git/hooks/pre-commit.sample",
            "/workspace/project/.git/hooks",
        ] {
            assert_eq!(persistence_target(path, home), None, "{path}");
        }
    }
}
