//! Lexical path resolution: no file is ever touched.

use crate::types::ShellContext;
use crate::word::Word;

/// A path argument resolved against the working directory and home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Absolute and normalised (`.` and `..` folded); for a dynamic word, the
    /// static prefix up to the first expansion.
    pub path: String,
    /// The path lies inside the workspace root.
    pub inside_workspace: bool,
    /// Part of the path is only known at run time (`$X/..`, a glob).
    pub dynamic: bool,
}

/// Resolves a word used as a path.
pub fn resolve(word: &Word, context: &ShellContext<'_>) -> ResolvedPath {
    let text = &word.text;
    let (base, rest): (&str, &str) = if word.home_relative {
        let rest = text
            .strip_prefix("$HOME")
            .or_else(|| text.strip_prefix('~'))
            .unwrap_or(text);
        (context.home, rest)
    } else if text.starts_with('/') {
        ("/", text.as_str())
    } else {
        (context.working_dir, text.as_str())
    };
    // Past an expansion the path is unknown: keep what precedes it.
    let dynamic_at = rest.match_indices('$').map(|(at, _)| at).find(|&at| {
        let after = &rest[at..];
        after.starts_with(crate::word::EXPANSION)
            || after.starts_with("$(...")
            || after.starts_with("$HOME")
    });
    let glob_at = rest.find(['*', '?', '[']);
    let cut = [dynamic_at, glob_at].into_iter().flatten().min();
    let known = cut.map_or(rest, |i| &rest[..i]);
    let path = through_proc_root(normalise_joined(base, known));
    let root = context.workspace_root.trim_end_matches('/');
    let root: std::borrow::Cow<'_, str> = if is_normal(root) {
        std::borrow::Cow::Borrowed(root)
    } else {
        std::borrow::Cow::Owned(normalise(root))
    };
    let strictly_inside = path
        .strip_prefix(root.trim_end_matches('/'))
        .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1);
    // The root itself is inside only when named exactly: `rm -rf $ROOT/*`
    // is not, but a glob for some of its files (`rm -f *.pyc`) is.
    let names_files = || {
        glob_at.is_some_and(|at| {
            dynamic_at.is_none_or(|d| d > at) && rest[at..].contains(|c: char| !"*?[]/".contains(c))
        })
    };
    let inside = strictly_inside || (path == *root && (cut.is_none() || names_files()));
    ResolvedPath {
        path,
        inside_workspace: inside,
        dynamic: cut.is_some() || word.dynamic && !word.home_relative,
    }
}

/// The word as a full pattern (home and working directory applied, globs
/// kept): `~/.s*h/id_*` is `/home/dev/.s*h/id_*`.
pub fn pattern(word: &Word, context: &ShellContext<'_>) -> String {
    let text = &word.text;
    let (base, rest) = if word.home_relative {
        let rest = text
            .strip_prefix("$HOME")
            .or_else(|| text.strip_prefix('~'))
            .unwrap_or(text);
        (context.home, rest)
    } else if text.starts_with('/') {
        ("/", text.as_str())
    } else {
        (context.working_dir, text.as_str())
    };
    through_proc_root(normalise_joined(base, rest))
}

/// `/proc/self/root/etc/shadow` (or any process's root) is `/etc/shadow`.
fn through_proc_root(path: String) -> String {
    let Some(rest) = path.strip_prefix("/proc/") else {
        return path;
    };
    let Some((process, inside)) = rest.split_once('/') else {
        return path;
    };
    let process_dir = process == "self"
        || process == "thread-self"
        || process.bytes().all(|b| b.is_ascii_digit());
    match inside.strip_prefix("root") {
        Some(under) if process_dir && (under.is_empty() || under.starts_with('/')) => {
            normalise_joined("/", under)
        }
        _ => path,
    }
}

/// Whether `path` is already what [`normalise`] makes of it: absolute, with
/// no empty, `.` or `..` part and no trailing slash (the root aside).
fn is_normal(path: &str) -> bool {
    path == "/"
        || (path.starts_with('/')
            && !path.ends_with('/')
            && path[1..]
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != ".."))
}

fn normalise(path: &str) -> String {
    normalise_joined(path, "")
}

/// `base/rest` with `.` and `..` folded, written once: each part is
/// appended after a `/`, and `..` truncates back to the previous `/`.
fn normalise_joined(base: &str, rest: &str) -> String {
    let mut out = String::with_capacity(base.len() + rest.len() + 1);
    for text in [base, rest] {
        let mut start = 0;
        let bytes = text.as_bytes();
        // `/` is one byte, never part of another character's encoding.
        let ends = (0..=bytes.len()).filter(|&at| bytes.get(at).is_none_or(|&b| b == b'/'));
        for end in ends {
            match &text[start..end] {
                "" | "." => {}
                ".." => out.truncate(out.rfind('/').unwrap_or(0)),
                part => {
                    out.push('/');
                    out.push_str(part);
                }
            }
            start = end + 1;
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: ShellContext<'static> = crate::types::TEST_CONTEXT;

    fn at(text: &str) -> ResolvedPath {
        let home_relative = crate::word::starts_at_home(text);
        resolve(
            &Word {
                text: text.into(),
                home_relative,
                ..Word::default()
            },
            &CTX,
        )
    }

    #[test]
    fn workspace_paths_are_inside() {
        for p in [
            "./build",
            "build",
            "node_modules",
            "/workspace/project/target/debug",
            "a/../b",
        ] {
            assert!(at(p).inside_workspace, "{p}");
        }
    }

    #[test]
    fn escapes_and_roots_are_outside() {
        for p in [
            "/",
            "../../..",
            "~",
            "$HOME/*",
            "/etc",
            "..",
            "/workspace/project/../other",
            "*",
            "/workspace/projectx",
        ] {
            assert!(!at(p).inside_workspace, "{p}: {:?}", at(p));
        }
        assert_eq!(at("~/.ssh/../.aws").path, "/home/dev/.aws");
        assert_eq!(at("../../..").path, "/");
    }

    /// Folding by a stack of parts, the plain statement of what
    /// [`normalise_joined`] computes in place.
    fn folded_by_parts(path: &str) -> String {
        let mut parts: Vec<&str> = Vec::new();
        for part in path.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
        format!("/{}", parts.join("/"))
    }

    #[test]
    fn folding_in_place_agrees_with_folding_by_parts() {
        let pieces = [
            "", "/", "a", "..", ".", "b/", "/../", "c/./d", "//", "...", ".a", "../..",
        ];
        for base in ["/", "/workspace/project", "/home/dev/", "", "rel/x"] {
            for x in pieces {
                for y in pieces {
                    let rest = format!("{x}/{y}{x}");
                    assert_eq!(
                        normalise_joined(base, &rest),
                        folded_by_parts(&format!("{base}/{rest}")),
                        "{base:?} + {rest:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn globs_keep_their_static_prefix() {
        let r = at("/var/log/*.log");
        assert_eq!((r.path.as_str(), r.dynamic), ("/var/log", true));
        assert!(at("./build/*").inside_workspace);
    }
}
