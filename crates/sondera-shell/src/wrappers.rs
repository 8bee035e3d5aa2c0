//! Programs that run another program: `sudo rm`, `env X=1 rm`,
//! `timeout 5 rm`, `xargs rm`, `find -exec rm`. Each is unwrapped to the
//! program it runs, keeping the wrappers as evidence.

use std::borrow::Cow;

use sondera_catalogue::programs::basename;

use crate::word::Word;

#[derive(Debug, Default)]
pub(super) struct Unwrapped<'w> {
    /// The program finally run and its arguments; empty when the wrappers
    /// run nothing (`sudo -v`, `command -v rm`). Borrowed from the words
    /// unwrapped unless a wrapper builds the command (`su -c STRING`).
    pub argv: Cow<'w, [Word]>,
    pub wrappers: Vec<String>,
    /// Run through `sudo` or `doas`.
    pub privileged: bool,
    /// Variables a wrapper sets for the program (`env X=1 cmd`).
    pub assignments: Vec<String>,
    /// Further commands the program runs itself (`find -exec`).
    pub also_runs: Vec<Vec<Word>>,
    /// Why the commands it runs were not all read: `find -exec find -exec
    /// ...` nested past the analysis depth.
    pub too_deep: Option<String>,
}

/// Options of a wrapper: those that take a value, and whether the first
/// operand is a value (the duration of `timeout`) rather than the program.
struct Spec {
    valued: &'static [&'static str],
    operand_first: bool,
    /// Options after which nothing is run.
    no_run: &'static [&'static str],
}

fn spec(program: &str) -> Option<Spec> {
    let s = |valued, operand_first, no_run| {
        Some(Spec {
            valued,
            operand_first,
            no_run,
        })
    };
    match program {
        "sudo" => s(
            &[
                "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "-R",
            ],
            false,
            // `-k` drops the cached credentials, then runs the command
            // that follows, if one does.
            &["-v", "-K", "-l", "-V"],
        ),
        "doas" => s(&["-u", "-C"], false, &[]),
        "env" => s(&["-u", "-C", "-P", "--unset", "--chdir"], false, &[]),
        "nice" => s(&["-n", "--adjustment"], false, &[]),
        "ionice" => s(&["-c", "-n", "-p", "-P", "-u"], false, &[]),
        "nohup" | "builtin" => s(&[], false, &[]),
        "timeout" => s(&["-s", "-k", "--signal", "--kill-after"], true, &[]),
        "time" => s(&["-f", "-o", "--format", "--output"], false, &[]),
        "stdbuf" => s(
            &["-i", "-o", "-e", "--input", "--output", "--error"],
            false,
            &[],
        ),
        "command" => s(&[], false, &["-v", "-V"]),
        "busybox" => s(&[], false, &["--list", "--help"]),
        "setsid" | "unbuffer" | "catchsegv" => s(&[], false, &[]),
        "nsenter" => s(
            &["-t", "--target", "-S", "--setuid", "-G", "--setgid"],
            false,
            &[],
        ),
        "proxychains" | "proxychains4" => s(&["-f"], false, &[]),
        "torsocks" => s(
            &[
                "-u",
                "-p",
                "-a",
                "-P",
                "--user",
                "--pass",
                "--address",
                "--port",
            ],
            false,
            &[],
        ),
        "pkexec" => s(&["--user"], false, &["--version", "--help"]),
        "flock" => s(
            &["-w", "--timeout", "-E", "--conflict-exit-code"],
            true,
            &[],
        ),
        "watch" => s(&["-n", "--interval", "-q", "--equexit"], false, &[]),
        "script" => s(
            &["-E", "--echo", "-T", "--log-timing", "-I", "-O", "-B"],
            false,
            &[],
        ),
        "su" | "runuser" | "sg" => s(
            &[
                "-u",
                "--user",
                "-g",
                "--group",
                "-G",
                "--supp-group",
                "-s",
                "--shell",
                "-w",
            ],
            false,
            &[],
        ),
        "systemd-run" => s(
            &[
                "-p",
                "--property",
                "-u",
                "--unit",
                "--description",
                "--slice",
                "-E",
                "--setenv",
                "--uid",
                "--gid",
                "-M",
                "--machine",
                "--working-directory",
                "--on-calendar",
                "--on-active",
                "--on-boot",
                "--on-startup",
            ],
            false,
            &[],
        ),
        "chroot" => s(&["--userspec", "--groups"], true, &[]),
        "unshare" => s(
            &[
                "--map-user",
                "--map-group",
                "-S",
                "--setuid",
                "-G",
                "--setgid",
                "-R",
                "--root",
                "-w",
                "--wd",
            ],
            false,
            &[],
        ),
        "taskset" | "chrt" | "faketime" => s(&[], true, &[]),
        "strace" | "ltrace" => s(
            &[
                "-e", "-o", "-p", "-s", "-u", "-E", "-P", "-I", "-b", "-a", "-X", "-O", "-S",
            ],
            false,
            &[],
        ),
        "exec" => s(&["-a"], false, &[]),
        "xargs" => s(
            &[
                "-a",
                "-d",
                "-E",
                "-I",
                "-L",
                "-n",
                "-P",
                "-s",
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--replace",
            ],
            false,
            &[],
        ),
        _ => None,
    }
}

pub(super) fn unwrap(words: &[Word]) -> Unwrapped<'_> {
    unwrap_at(words, 0)
}

/// [`unwrap`] of a command run `depth` levels inside `find -exec`s.
fn unwrap_at(words: &[Word], depth: usize) -> Unwrapped<'_> {
    let mut out = Unwrapped::default();
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let program = basename(&word.text);
        let Some(spec) = spec(program) else { break };
        out.wrappers.push(program.to_string());
        out.privileged |= matches!(program, "sudo" | "doas" | "su" | "pkexec");
        i += 1;
        if let Some(script) = shell_string(program, &words[i..]) {
            // `su -c STRING` and the like run STRING with a shell.
            out.argv = Cow::Owned(vec![plain("sh"), plain("-c"), script.clone()]);
            return out;
        }
        let mut operand_taken = !spec.operand_first;
        while let Some(arg) = words.get(i) {
            let a = arg.text.as_str();
            if a == "--" {
                i += 1;
                break;
            }
            if spec.no_run.contains(&a) {
                // Nothing runs, so nothing runs with privileges (`sudo -l`
                // lists them).
                out.privileged = false;
                return out;
            }
            if program == "env" && !a.starts_with('-') && a.contains('=') {
                out.assignments
                    .extend(a.split('=').next().map(str::to_string));
                i += 1;
                continue;
            }
            if a.starts_with('-') && a.len() > 1 {
                let name = a.split('=').next().unwrap_or(a);
                let takes_value = spec.valued.contains(&name) && !a.contains('=');
                i += if takes_value { 2 } else { 1 };
                continue;
            }
            if !operand_taken {
                operand_taken = true;
                i += 1;
                continue;
            }
            break;
        }
    }
    out.argv = Cow::Borrowed(&words[i.min(words.len())..]);
    if out
        .argv
        .first()
        .is_some_and(|w| basename(&w.text) == "find")
    {
        if depth >= crate::MAX_DEPTH {
            out.too_deep = Some(format!(
                "`find -exec` nests deeper than {} levels",
                crate::MAX_DEPTH
            ));
            return out;
        }
        let (runs, too_deep) = find_exec(&out.argv, depth + 1);
        out.also_runs = runs;
        out.too_deep = too_deep;
    }
    out
}

/// Wrappers that also take the command as one string for a shell:
/// `su -c`, `runuser -c`, `flock FILE -c`, `script -c`, `sg GROUP -c`.
fn shell_string<'a>(program: &str, args: &'a [Word]) -> Option<&'a Word> {
    if !matches!(program, "su" | "runuser" | "flock" | "script" | "sg") {
        return None;
    }
    let at = args.iter().position(|a| {
        let t = a.text.as_str();
        t == "-c"
            || t == "--command"
            || (t.starts_with('-')
                && !t.starts_with("--")
                && t.ends_with('c')
                && program == "script")
    })?;
    args.get(at + 1)
}

fn plain(text: &str) -> Word {
    Word {
        text: text.to_string(),
        ..Word::default()
    }
}

/// The commands of `find ... -exec CMD ... ;` (and `-execdir`, `-ok`,
/// `-okdir`), with those a nested `find` among them runs.
fn find_exec(argv: &[Word], depth: usize) -> (Vec<Vec<Word>>, Option<String>) {
    let mut runs = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        if matches!(
            argv[i].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let start = i + 1;
            let end = (start..argv.len())
                .find(|&j| matches!(argv[j].text.as_str(), ";" | "+"))
                .unwrap_or(argv.len());
            if end > start {
                let nested = unwrap_at(&argv[start..end], depth);
                if nested.too_deep.is_some() {
                    return (runs, nested.too_deep);
                }
                runs.extend(nested.also_runs);
                if !nested.argv.is_empty() {
                    runs.push(nested.argv.into_owned());
                }
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    (runs, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::word::plain_words as words;

    fn program_of(s: &str) -> (String, Vec<String>, bool) {
        let words = words(s);
        let u = unwrap(&words);
        (
            u.argv.first().map(|w| w.text.clone()).unwrap_or_default(),
            u.wrappers,
            u.privileged,
        )
    }

    #[test]
    fn wrappers_unwrap_to_the_program() {
        assert_eq!(program_of("sudo -u root rm -rf /").0, "rm");
        assert!(program_of("sudo rm x").2);
        assert!(program_of("doas -u root rm x").2);
        assert_eq!(program_of("env -i PATH=/x FOO=1 rm -rf /").0, "rm");
        assert_eq!(program_of("timeout -s KILL 10 rm -rf /").0, "rm");
        assert_eq!(
            program_of("nice -n 5 nohup stdbuf -oL rm x").1,
            ["nice", "nohup", "stdbuf"]
        );
        assert_eq!(program_of("/usr/bin/sudo /bin/rm x").0, "/bin/rm");
        assert_eq!(program_of("exec -a name rm x").0, "rm");
        assert_eq!(program_of("time -p rm x").0, "rm");
        assert_eq!(program_of("command rm x").0, "rm");
        assert_eq!(program_of("xargs -0 -n 1 rm -rf").0, "rm");
    }

    #[test]
    fn lookups_run_nothing() {
        assert_eq!(program_of("command -v rm").0, "");
        assert_eq!(program_of("sudo -v").0, "");
        assert!(!unwrap(&words("sudo -l")).privileged);
        let command = words("sudo -k rm -rf /");
        let dropped_then_run = unwrap(&command);
        assert_eq!(dropped_then_run.argv[0].text, "rm");
        assert!(dropped_then_run.privileged);
    }

    #[test]
    fn find_exec_runs_its_command() {
        let words = words("find / -name x -exec rm -rf {} ; -execdir sudo shred {} +");
        let u = unwrap(&words);
        let runs: Vec<String> = u.also_runs.iter().map(|r| r[0].text.clone()).collect();
        assert_eq!(runs, ["rm", "shred"]);
    }
}
