//! Places in a file system that detectors treat alike.

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

/// bash's network pseudo-files: redirecting to `/dev/tcp/HOST/PORT` opens a
/// connection.
pub fn is_socket_device(path: &str) -> bool {
    path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/")
}

#[cfg(test)]
mod tests {
    use super::*;

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
