//! Where a path lies, for judging what touching it may break: the agent's
//! workspace, scratch space, the user's home, or the system; and the
//! places detectors treat alike.

/// The operating system's own directories, on Linux and macOS. The root
/// directory is system too (see [`is_system`]); a home directory is not,
/// whatever holds it.
pub const SYSTEM_DIRS: &[&str] = &[
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/boot",
    "/var",
    "/sys",
    "/proc",
    "/dev",
    "/opt",
    "/root",
    "/snap",
    "/System",
    "/Library",
    "/Applications",
];

/// Caches in a home directory that tools rebuild by downloading again,
/// relative to home and ending in `/`.
pub const HOME_CACHES: &[&str] = &[
    ".cache/",
    ".npm/",
    ".pnpm-store/",
    ".yarn/cache/",
    ".gradle/caches/",
    ".m2/repository/",
    ".cargo/registry/",
    ".cargo/git/",
    "go/pkg/mod/",
    "Library/Caches/",
];

/// Whether `path` (absolute and normalised) is the root directory, one of
/// [`SYSTEM_DIRS`] or inside one.
pub fn is_system(path: &str) -> bool {
    let path = path.trim_end_matches('/');
    path.is_empty()
        || SYSTEM_DIRS.iter().any(|dir| {
            path.strip_prefix(dir)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
}

/// Devices whose reads and writes stay on the machine and hold nothing:
/// writing one saves no file.
pub fn is_null_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero"
    ) || path.starts_with("/dev/fd/")
        || is_socket_device(path)
}

/// Whether `text` names the socket of a daemon that runs containers as
/// root (Docker, containerd, Podman's root service, CRI-O): whoever speaks
/// to it can mount the host's root, so reaching it is root.
pub fn names_root_daemon_socket(text: &str) -> bool {
    const SOCKETS: &[&str] = &[
        "/run/docker.sock",
        "/run/containerd/containerd.sock",
        "/run/podman/podman.sock",
        "/run/crio/crio.sock",
    ];
    // Most words hold no `.sock`: ruled out by one pass over their bytes.
    text.as_bytes().windows(5).any(|w| w == b".sock") && SOCKETS.iter().any(|s| text.contains(s))
}

/// bash's network pseudo-files: redirecting to `/dev/tcp/HOST/PORT` opens a
/// connection.
pub fn is_socket_device(path: &str) -> bool {
    path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/")
}

/// The kind of place an absolute, normalised path lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Place {
    /// Inside the workspace root.
    Workspace,
    /// Below `/tmp`, `/var/tmp` or a package or build cache in home:
    /// contents nobody loses.
    Scratch,
    /// Elsewhere in the home directory.
    Home,
    /// The operating system's files: `/etc`, `/usr`, `/bin`, `/boot`, ...
    /// and the root directory itself.
    System,
    /// Anywhere else (other users' files, mounted volumes, `/srv`, ...).
    Other,
}

impl Place {
    /// The place's name in policies (`workspace`, `system`, ...).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Where `path` (absolute and normalised) lies, given the workspace root and
/// home directory.
pub fn place(path: &str, workspace_root: &str, home: &str) -> Place {
    let root = workspace_root.trim_end_matches('/');
    let home = home.trim_end_matches('/');
    let under = |dir: &str| path == dir || path.starts_with(&format!("{dir}/"));
    if !root.is_empty() && under(root) {
        Place::Workspace
    } else if is_scratch(path, home) {
        Place::Scratch
    } else if !home.is_empty() && under(home) {
        Place::Home
    } else if is_system(path) {
        Place::System
    } else {
        Place::Other
    }
}

/// Temporary and cache locations whose contents can be deleted without loss:
/// anything below `/tmp`, `/var/tmp` or a cache in home (not those
/// directories themselves). Inside the home directory only its caches are
/// scratch, wherever home is (a home under `/tmp` in CI or a sandbox), and
/// neither home nor a directory holding it ever is.
pub fn is_scratch(path: &str, home: &str) -> bool {
    let below = |dir: &str| path.starts_with(dir) && path.len() > dir.len();
    let home = home.trim_end_matches('/');
    if !home.is_empty() {
        if let Some(rest) = path.strip_prefix(home).and_then(|r| r.strip_prefix('/')) {
            return HOME_CACHES
                .iter()
                .any(|cache| rest.starts_with(cache) && rest.len() > cache.len());
        }
        if holds(path, home) {
            return false;
        }
    }
    below("/tmp/") || below("/var/tmp/")
}

/// Whether removing `path` removes the home directory or the workspace
/// root: it is one of them, or a directory holding one, or `/`. Such a
/// delete is destructive wherever they lie, even inside each other (a
/// workspace that is the home directory) or under `/tmp`.
pub fn holds_home_or_workspace(path: &str, workspace_root: &str, home: &str) -> bool {
    let path = path.trim_end_matches('/');
    path.is_empty()
        || [workspace_root, home].into_iter().any(|dir| {
            let dir = dir.trim_end_matches('/');
            !dir.is_empty() && holds(path, dir)
        })
}

/// Whether removing `path` removes the home directory: it is home or a
/// directory holding it.
pub fn holds_home(path: &str, home: &str) -> bool {
    let home = home.trim_end_matches('/');
    !home.is_empty() && holds(path, home)
}

/// `dir` is `path` or lies below it.
fn holds(path: &str, dir: &str) -> bool {
    let path = path.trim_end_matches('/');
    dir == path
        || dir
            .strip_prefix(path)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_placed() {
        let at = |p: &str| place(p, "/home/dev/project", "/home/dev");
        assert_eq!(at("/home/dev/project/src/a.rs"), Place::Workspace);
        assert_eq!(at("/home/dev/project"), Place::Workspace);
        assert_eq!(at("/tmp/build.lock"), Place::Scratch);
        assert_eq!(at("/home/dev/.cache/pip"), Place::Scratch);
        assert_eq!(at("/home/dev/.npm/_cacache"), Place::Scratch);
        assert_eq!(
            at("/home/dev/.npm"),
            Place::Home,
            "the cache itself is not scratch"
        );
        assert_eq!(at("/home/dev/.ssh/id_rsa"), Place::Home);
        assert_eq!(
            at("/home/dev/projectx"),
            Place::Home,
            "a sibling is not inside"
        );
        assert_eq!(at("/etc/passwd"), Place::System);
        assert_eq!(at("/"), Place::System);
        assert_eq!(at("/tmp"), Place::Other);
        assert_eq!(at("/srv/data"), Place::Other);
    }

    #[test]
    fn a_home_under_tmp_is_home_and_only_its_caches_are_scratch() {
        let at = |p: &str| place(p, "/tmp/ci/work", "/tmp/ci/home");
        assert_eq!(at("/tmp/ci/home/.bashrc"), Place::Home);
        assert_eq!(at("/tmp/ci/home"), Place::Home);
        assert_eq!(at("/tmp/ci/home/.cache/pip"), Place::Scratch);
        assert_eq!(at("/tmp/other"), Place::Scratch);
        assert!(!is_scratch("/tmp/ci", "/tmp/ci/home"), "it holds home");
    }

    #[test]
    fn home_the_workspace_root_and_their_ancestors_are_held() {
        let holds = |p: &str, root: &str, home: &str| holds_home_or_workspace(p, root, home);
        for (path, root, home) in [
            ("/home/dev", "/home/dev/project", "/home/dev"),
            ("/home/dev/", "/home/dev/project", "/home/dev"),
            ("/home", "/home/dev/project", "/home/dev"),
            ("/", "/home/dev/project", "/home/dev"),
            ("/home/dev/project", "/home/dev/project", "/home/dev"),
            ("/tmp/ci/home", "/tmp/ci/work", "/tmp/ci/home"),
            ("/tmp/ci", "/tmp/ci/work", "/tmp/ci/home"),
            ("/home/dev", "/home/dev", "/home/dev"),
        ] {
            assert!(
                holds(path, root, home),
                "{path} with root {root}, home {home}"
            );
        }
        for (path, root, home) in [
            ("/home/dev/project/build", "/home/dev/project", "/home/dev"),
            ("/home/dev/projectx", "/home/dev/project", "/home/dev"),
            ("/home/devx", "/home/dev/project", "/home/dev"),
            ("/tmp/ci/home/.cache", "/tmp/ci/work", "/tmp/ci/home"),
        ] {
            assert!(
                !holds(path, root, home),
                "{path} with root {root}, home {home}"
            );
        }
    }

    #[test]
    fn system_places_are_whole_directories() {
        assert!(is_system("/"));
        assert!(is_system("/etc"));
        assert!(is_system("/lib32/x"));
        assert!(is_system("/Library/"));
        assert!(!is_system("/etcetera"));
        assert!(!is_system("/home/dev"));
        assert!(!is_system("/tmp/x"));
    }

    #[test]
    fn home_caches_are_directories() {
        assert!(
            HOME_CACHES
                .iter()
                .all(|c| c.ends_with('/') && !c.starts_with('/'))
        );
    }
}
