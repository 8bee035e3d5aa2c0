//! The names Sondera Harness's detectors share, each defined once.
//!
//! A detector that asks "is this program an HTTP client?", "is this path a
//! system directory?", "does this file hold credentials?" or "is this host
//! a metadata endpoint?" asks it here. When two analyses kept lists of
//! their own, the lists drifted, and the same program got different
//! verdicts from analyses that read the same role: a client that fetched
//! but reported no host, a directory that was a system one for placing a
//! path and not for a permission change. With one list per role, a name
//! added to a role reaches every analysis that reads the role, and the
//! consistency test of `sondera-shell` holds each role to the same
//! behaviour everywhere.
//!
//! - [`programs`]: programs by the roles the shell analysis reads.
//! - [`places`]: where a path lies (workspace, scratch, home, system).
//! - [`secrets`]: the files and directories that hold credentials.
//! - [`persistence`]: the files whose writing makes something run later.
//! - [`controls`]: the machine's security controls and what switches
//!   each off.
//! - [`grammar`]: the verbs, nouns and options a command's effect is read
//!   from when its program is not otherwise known.
//! - [`runs_later`]: files whose content a tool executes later (manifests'
//!   scripts, `.envrc`, SSH and git configuration, CI workflows, ...).
//! - [`packages`]: widely used packages of the public registries, and the
//!   names made to be mistaken for them.
//! - [`names`]: an index that rules a name out of a list at a glance.
//! - [`hosts`]: hosts read as browsers read them and classified (loopback,
//!   private, metadata, public), and the hosts in URLs and text.
//!
//! Everything here is a pure function of its input: nothing is read from
//! the file system and no name is resolved.

pub mod controls;
pub mod grammar;
pub mod hosts;
pub mod names;
pub mod packages;
pub mod persistence;
pub mod places;
pub mod programs;
pub mod runs_later;
pub mod secrets;

pub use programs::Role;
