//! Risk tags: what a command does that a policy may want to stop, each with
//! the evidence that established it.

use sondera_catalogue::Role;
use sondera_catalogue::grammar::EPHEMERAL_KINDS;
use sondera_catalogue::packages::Registry;
use sondera_catalogue::places::is_null_device;
use sondera_catalogue::programs::{fetches, names_files};

use crate::paths::resolve;
use crate::types::{Invocation, Risk, RiskKind, ShellAnalysis, ShellContext, Stdin, risk};
use sondera_catalogue::places::Place;

pub(super) fn assess(analysis: &mut ShellAnalysis, context: &ShellContext<'_>) {
    let mut found = Vec::new();
    if let Some(why) = &analysis.unparsable {
        found.push(risk(RiskKind::Unparsable, why.clone()));
    }
    let mut outside = Vec::new();
    let mut hosts = Vec::new();
    let mut cwd = context.working_dir.to_string();
    let mut downloaded = Vec::new();
    for invocation in &analysis.invocations {
        let here = ShellContext {
            working_dir: &cwd,
            ..*context
        };
        invocation_risks(invocation, &here, &mut outside, &mut found);
        crate::egress::assess(invocation, &here, &mut hosts, &mut found);
        runs_download(invocation, &here, &mut downloaded, &mut found);
        if let Some(next) = changed_directory(invocation, &here) {
            cwd = next;
        }
    }
    hosts.sort();
    hosts.dedup();
    analysis.hosts = hosts;
    outside.sort();
    outside.dedup();
    analysis.paths_outside_workspace = outside;
    pushes_to_new_remotes(&analysis.invocations, &mut found);
    crate::egress::secret_variables(&analysis.invocations, &mut found);
    crate::egress::connected_shells(&analysis.invocations, &mut found);
    crate::egress::piped_uploads(&analysis.invocations, context, &mut found);
    for function in &analysis.functions {
        if calls_itself_in_background(analysis, function) {
            found.push(risk(
                RiskKind::ForkBomb,
                format!("function `{function}` calls itself through a pipe"),
            ));
        }
    }
    found.sort_by(|a, b| (a.kind, &a.evidence).cmp(&(b.kind, &b.evidence)));
    found.dedup();
    if analysis.unparsable.is_none()
        && let Some(unread) = found.iter().find(|r| r.kind == RiskKind::Unparsable)
    {
        analysis.unparsable = Some(unread.evidence.clone());
    }
    analysis.risks = found;
}

/// A file a fetcher saved (`curl -o F`, `wget -O F`, `curl URL > F`) and a
/// later command runs (`bash F`, `python3 F`, `. F`, `./F`): the same as
/// piping the download into a shell.
fn runs_download(
    i: &Invocation,
    ctx: &ShellContext<'_>,
    downloaded: &mut Vec<String>,
    out: &mut Vec<Risk>,
) {
    let program = i.program.as_str();
    if fetches(program) {
        let saved = i.arg_words.windows(2).filter_map(|w| {
            matches!(
                w[0].text.as_str(),
                "-o" | "--output" | "-O" | "--output-document"
            )
            .then_some(&w[1])
        });
        for file in saved.chain(i.writes.iter()) {
            downloaded.push(resolve(file, ctx).path);
        }
        return;
    }
    let runs_script = Role::Shell.includes(program)
        || crate::interpreters::interpreter(program).is_some()
        || matches!(program, "source" | ".");
    let script = if runs_script {
        i.operand_words().next().map(|w| resolve(w, ctx).path)
    } else if i.path.contains('/') {
        Some(
            resolve(
                &crate::word::Word {
                    text: i.path.clone(),
                    ..Default::default()
                },
                ctx,
            )
            .path,
        )
    } else {
        None
    };
    if let Some(script) = script.filter(|s| downloaded.contains(s)) {
        out.push(risk(
            RiskKind::RemoteScript,
            format!("{program} runs {script}, which the command downloaded"),
        ));
    }
}

/// Where `cd` or `pushd` moves the commands after it. A directory only known
/// at run time (`cd $X`, `cd -`) becomes `/`, so relative paths after it are
/// judged as if they could be anywhere.
fn changed_directory(i: &Invocation, ctx: &ShellContext<'_>) -> Option<String> {
    if !matches!(i.program.as_str(), "cd" | "pushd") {
        return None;
    }
    let Some(target) = i.operand_words().next() else {
        return Some(ctx.home.to_string());
    };
    if target.text == "-" || (target.dynamic && !target.home_relative) {
        return Some("/".into());
    }
    Some(resolve(target, ctx).path)
}

fn calls_itself_in_background(analysis: &ShellAnalysis, function: &str) -> bool {
    let calls = analysis
        .invocations
        .iter()
        .filter(|i| i.program == function)
        .count();
    calls >= 2
}

fn invocation_risks(
    i: &Invocation,
    ctx: &ShellContext<'_>,
    outside: &mut Vec<String>,
    out: &mut Vec<Risk>,
) {
    let summary = || format!("{} {}", i.program, i.args.join(" "));
    if i.privileged {
        out.push(risk(
            RiskKind::PrivilegeEscalation,
            format!("{} {}", i.wrappers.join(" "), summary()),
        ));
    }
    if i.dynamic_program {
        out.push(risk(
            RiskKind::DynamicProgram,
            format!("program `{}` is only known at run time", i.path),
        ));
    }
    privilege(i, out);
    deletes(i, ctx, outside, out);
    disk(i, out);
    permissions(i, ctx, out);
    shells(i, out);
    git(i, ctx, out);
    infra(i, out);
    crate::effects::mass_disruption(i, out);
    crate::defences::controls_off(i, ctx, out);
    crate::defences::exposure(i, ctx, out);
    crate::defences::access_widened(i, out);
    crate::sources::assess(i, out);
    history(i, ctx, out);
    packages(i, out);
    package_config_writes(i, ctx, out);
    persistence(i, ctx, out);
    library_injection(i, out);
    files_that_run(i, ctx, out);
    system_writes(i, ctx, out);
}

/// Files of the operating system written by a redirection, `tee`, a copy
/// or an in-place edit (`echo ... > /etc/resolv.conf`): what a file tool
/// writing there is asked about, the shell is too. Devices and the process
/// tree are judged by the disk and environment analyses.
fn system_writes(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    let attached: Vec<crate::word::Word> = attached_outputs(i).collect();
    let written = i.writes.iter().chain(files_written(i)).chain(&attached);
    for word in written {
        let path = resolve(word, ctx).path;
        let device =
            path.starts_with("/dev/") || path.starts_with("/proc/") || path.starts_with("/sys/");
        if !device
            && sondera_catalogue::places::place(&path, ctx.workspace_root, ctx.home)
                == Place::System
        {
            out.push(risk(
                RiskKind::SystemWrite,
                format!("{} writes {path}", i.program),
            ));
        }
    }
}

/// A file a tool runs later (`.envrc`, an SSH config, a `.pth`), written
/// by the command with content it spells out (`cat > .envrc <<EOF`,
/// `echo ... >> ~/.ssh/config`): what the content will execute counts for
/// the command that writes it.
fn files_that_run(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    let written = crate::written::written_content(i).or_else(|| crate::written::edited_content(i));
    let Some((targets, content)) = written else {
        return;
    };
    for target in targets {
        let path = resolve(target, ctx).path;
        let Some(later) = crate::later::runs_later(&path, &content, ctx) else {
            continue;
        };
        for r in later.risks {
            out.push(risk(r.kind, format!("writes {path}: {}", r.evidence)));
        }
        for source in later.untrusted_sources {
            out.push(risk(
                RiskKind::UntrustedPackageSource,
                format!("writes {path}, which takes packages from {source}"),
            ));
        }
    }
}

fn packages(i: &Invocation, out: &mut Vec<Risk>) {
    let args: Vec<&str> = i.args.iter().map(String::as_str).collect();
    let remote = |a: &&str| {
        a.starts_with("git+")
            || a.starts_with("http://")
            || a.starts_with("https://")
            || a.starts_with("github:")
            || a.starts_with("git://")
            || a.starts_with("ssh://")
    };
    const INDEX_FLAGS: &[&str] = &[
        "-i",
        "--index-url",
        "--extra-index-url",
        "--trusted-host",
        "--registry",
        "--index",
        "--git",
        "--source",
    ];
    // The value each index flag names (`--index-url URL`, `--registry=URL`).
    let index_values: Vec<&str> = args
        .iter()
        .enumerate()
        .filter_map(|(n, a)| {
            INDEX_FLAGS.iter().find_map(|f| {
                if a == f {
                    Some(args.get(n + 1).copied().unwrap_or_default())
                } else {
                    a.strip_prefix(f).and_then(|rest| rest.strip_prefix('='))
                }
            })
        })
        .collect();
    let elsewhere = |source: &&str| !sondera_catalogue::hosts::official_registry(source);
    let pip = i.program.starts_with("pip")
        || (i.program.starts_with("python") && args.windows(2).any(|w| w == ["-m", "pip"]));
    let installs = args.iter().any(|a| matches!(*a, "install" | "add" | "i"));
    let manager = pip || Role::PackageManager.includes(&i.program);
    let from_elsewhere = manager
        && installs
        && (args.iter().any(|a| remote(a) && elsewhere(a)) || index_values.iter().any(elsewhere));
    let gem_source = i.program == "gem"
        && args.first() == Some(&"sources")
        && args.iter().any(|a| matches!(*a, "-a" | "--add"));
    let new_repository = matches!(
        i.program.as_str(),
        "add-apt-repository" | "apt-add-repository"
    ) || (i.program == "apt-key" && args.contains(&"add"))
        || (i.program == "rpm" && args.contains(&"--import"));
    if from_elsewhere || gem_source || new_repository {
        out.push(risk(
            RiskKind::UntrustedPackageSource,
            format!("{} {}", i.program, i.args.join(" ")),
        ));
    }
    look_alike_installs(i, out);
}

/// Packages installed or run by a name made to be mistaken for a widely
/// used one (`npm install expres`, `pip install reqeusts`).
fn look_alike_installs(i: &Invocation, out: &mut Vec<Risk>) {
    let Some((registry, names)) = installed_names(i) else {
        return;
    };
    for name in names {
        if let Some(imitated) = registry.imitated(name) {
            out.push(risk(
                RiskKind::UntrustedPackageSource,
                format!(
                    "{} installs `{name}`, one edit from the package `{imitated}`",
                    i.program
                ),
            ));
        }
    }
}

/// The registry a command installs from and the names it installs: the
/// operands after `install`, `add` or `i` (or what `npx` runs), without
/// versions or extras; paths, URLs and the values of options are not names.
fn installed_names(i: &Invocation) -> Option<(Registry, Vec<&str>)> {
    let python_pip =
        i.program.starts_with("python") && i.args.windows(2).any(|w| w[0] == "-m" && w[1] == "pip");
    let registry = match i.program.as_str() {
        "npm" | "yarn" | "pnpm" | "bun" | "npx" | "bunx" => Registry::Npm,
        "uv" | "poetry" | "pipx" | "pipenv" => Registry::PyPi,
        p if p.starts_with("pip") || python_pip => Registry::PyPi,
        "cargo" => Registry::Crates,
        "gem" | "bundle" => Registry::RubyGems,
        _ => return None,
    };
    let args: Vec<&str> = i.args.iter().map(String::as_str).collect();
    let start = if matches!(i.program.as_str(), "npx" | "bunx") {
        0
    } else {
        args.iter()
            .position(|a| matches!(*a, "install" | "add" | "i"))?
            + 1
    };
    // Options whose value is a file, a path or a source, not a package.
    const VALUED: &[&str] = &[
        "-r",
        "--requirement",
        "-e",
        "--editable",
        "-c",
        "--constraint",
        "-i",
        "--index-url",
        "--extra-index-url",
        "--registry",
        "--path",
        "--git",
        "--branch",
        "--tag",
        "--rev",
        "--version",
        "--features",
        "-F",
        "--target",
    ];
    let mut names = Vec::new();
    let mut operands = args[start..].iter();
    while let Some(arg) = operands.next() {
        if VALUED.contains(arg) {
            operands.next();
            continue;
        }
        if arg.starts_with('-') || arg.contains(['/', ':']) || arg.starts_with('.') {
            continue;
        }
        names.push(package_name(arg));
        if start == 0 {
            break;
        }
    }
    Some((registry, names))
}

/// A package operand's name: `express@4`, `requests[socks]>=2`, `serde@1`.
fn package_name(spec: &str) -> &str {
    let versionless = match spec.char_indices().skip(1).find(|(_, c)| *c == '@') {
        Some((at, _)) => &spec[..at],
        None => spec,
    };
    let end = versionless
        .find(['[', '=', '<', '>', '!', '~', ';'])
        .unwrap_or(versionless.len());
    &versionless[..end]
}

/// Package manager configuration: writing it can point installs elsewhere.
fn package_config(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        ".npmrc"
            | ".yarnrc"
            | ".yarnrc.yml"
            | "pip.conf"
            | "pip.ini"
            | ".pypirc"
            | ".gemrc"
            | ".condarc"
            | "sources.list"
            | "uv.toml"
    ) || path.contains("/sources.list.d/")
        || path.contains("/.cargo/config")
}

/// Writes that point package installs at another source.
fn package_config_writes(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    let tee_targets = (i.program == "tee").then(|| i.operand_words().collect::<Vec<_>>());
    for target in i.writes.iter().chain(tee_targets.into_iter().flatten()) {
        let path = resolve(target, ctx).path;
        if package_config(&path) {
            out.push(risk(
                RiskKind::UntrustedPackageSource,
                format!("{} writes {path}", i.program),
            ));
        }
    }
}

/// Files whose contents run again later, or grant access.
fn persistence(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    let p = i.program.as_str();
    let installs_crontab = p == "crontab"
        && !i
            .args
            .iter()
            .any(|a| matches!(a.as_str(), "-l" | "-r" | "-e"))
        && (i.args.iter().any(|a| a == "-")
            || i.args.iter().any(|a| !a.starts_with('-'))
            || matches!(i.stdin, Stdin::Pipe(_) | Stdin::Text(_)));
    let schedules = matches!(p, "at" | "batch")
        && !i
            .args
            .iter()
            .any(|a| matches!(a.as_str(), "-l" | "-r" | "-d" | "-c"));
    let enables = schedules
        || (p == "systemctl" && i.args.iter().any(|a| a == "enable"))
        || (p == "launchctl" && i.args.iter().any(|a| a == "load" || a == "bootstrap"));
    let attached: Vec<crate::word::Word> = attached_outputs(i).collect();
    let written: Vec<String> = i
        .writes
        .iter()
        .chain(files_written(i))
        .chain(&attached)
        .map(|w| resolve(w, ctx).path)
        .collect();
    if installs_crontab || enables {
        out.push(risk(
            RiskKind::Persistence,
            format!("{p} {}", i.args.join(" ")),
        ));
    }
    for path in written {
        if let Some(target) = sondera_catalogue::persistence::persistence_target(&path, ctx.home) {
            // What the content runs is judged by `files_that_run`.
            let reviewable = matches!(target, "shell_startup" | "git_hook")
                && spells_content_of(i, &path, ctx)
                && sondera_catalogue::runs_later::runs_later(&path).is_some();
            let kind = if reviewable {
                RiskKind::StartupFileWrite
            } else {
                RiskKind::Persistence
            };
            out.push(risk(kind, format!("{p} writes {path}")));
        }
        if sondera_catalogue::persistence::agent_instructions(&path) {
            let evidence = format!("{p} writes {path}, which agents load as instructions");
            out.push(risk(RiskKind::AgentInstructions, evidence));
        }
    }
}

/// Whether `i` writes `path` with text it spells out (`echo ... >> f`,
/// `sed -i '$a ...' f`).
fn spells_content_of(i: &Invocation, path: &str, ctx: &ShellContext<'_>) -> bool {
    crate::written::written_content(i)
        .or_else(|| crate::written::edited_content(i))
        .is_some_and(|(targets, _)| targets.iter().any(|w| resolve(w, ctx).path == path))
}

/// Files a program writes through its arguments: the operands of copiers and
/// linkers, files edited in place (`sed -i`, `perl -pi`), and the value of an
/// output option (`curl -o FILE`, `wget -O FILE`, `--output=FILE`).
fn files_written(i: &Invocation) -> Vec<&crate::word::Word> {
    let p = i.program.as_str();
    let in_place = (p == "sed"
        && i.args
            .iter()
            .any(|a| a.starts_with("-i") || a.starts_with("--in-place")))
        || (p == "perl"
            && i.args
                .iter()
                .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('i')));
    // A copy writes its destination only; a move also takes its sources
    // away.
    let mut written: Vec<&crate::word::Word> = if in_place || matches!(p, "tee" | "mv") {
        i.operand_words().collect()
    } else if matches!(p, "cp" | "install" | "ln" | "rsync" | "scp") {
        copied_to(i).into_iter().collect()
    } else {
        Vec::new()
    };
    let words = &i.arg_words;
    for (n, w) in words.iter().enumerate() {
        let t = w.text.as_str();
        // `-o FILE`, and a cluster ending in it (`-sSLo FILE`, `-qO FILE`).
        let short = t.starts_with('-')
            && !t.starts_with("--")
            && t.ends_with(['o', 'O'])
            && t[1..].chars().all(|c| c.is_ascii_alphabetic());
        if (short || matches!(t, "--output" | "--output-document"))
            && let Some(value) = words.get(n + 1)
        {
            written.push(value);
        }
    }
    written
}

/// Where a copy goes: the directory given with `-t` (`cp -t DIR FILE...`),
/// else the last operand.
fn copied_to(i: &Invocation) -> Option<&crate::word::Word> {
    let words = &i.arg_words;
    words
        .iter()
        .position(|w| matches!(w.text.as_str(), "-t" | "--target-directory"))
        .and_then(|n| words.get(n + 1))
        .or_else(|| i.operand_words().last())
}

/// Paths given as `--output=FILE` or `--output-document=FILE`.
fn attached_outputs(i: &Invocation) -> impl Iterator<Item = crate::word::Word> + '_ {
    i.arg_words.iter().filter_map(|w| {
        let path = ["--output=", "--output-document="]
            .iter()
            .find_map(|p| w.text.strip_prefix(p))?;
        Some(crate::word::Word {
            text: path.to_string(),
            home_relative: crate::word::starts_at_home(path),
            ..w.clone()
        })
    })
}

/// Variables that make every program the command runs load other code
/// (`LD_PRELOAD=./x.so ls`, `export LD_PRELOAD=...`).
const LOADER_VARIABLES: &[&str] = &["LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"];

fn library_injection(i: &Invocation, out: &mut Vec<Risk>) {
    let set_for_it = i
        .assignments
        .iter()
        .find(|a| LOADER_VARIABLES.contains(&a.as_str()));
    let exported = matches!(i.program.as_str(), "export" | "env" | "declare" | "typeset")
        .then(|| {
            i.args.iter().find(|a| {
                LOADER_VARIABLES
                    .iter()
                    .any(|v| a.strip_prefix(v).is_some_and(|rest| rest.starts_with('=')))
            })
        })
        .flatten();
    let named = set_for_it.or(exported);
    if named.is_some() {
        out.push(risk(
            RiskKind::InlineCodeRisky,
            format!(
                "{}: a loader variable injects a library into what runs",
                std::iter::once(i.program.as_str())
                    .chain(i.args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        ));
    }
}

fn has_flag(args: &[String], short: char, long: &str) -> bool {
    args.iter().any(|a| {
        a == long || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains(short))
    })
}

fn deletes(i: &Invocation, ctx: &ShellContext<'_>, outside: &mut Vec<String>, out: &mut Vec<Risk>) {
    if let Some(cleaned) = git_cleaned(i) {
        return judge_deletions(i, ctx, vec![(cleaned, true)], outside, out);
    }
    let targets: Vec<&crate::word::Word> = match i.program.as_str() {
        "rm" if has_flag(&i.args, 'r', "--recursive")
            || has_flag(&i.args, 'R', "--recursive")
            || has_flag(&i.args, 'f', "--force") =>
        {
            i.operand_words().collect()
        }
        "rmdir" | "unlink" | "shred" => i.operand_words().collect(),
        // `rsync --delete SRC DEST` deletes whatever in DEST is not in SRC;
        // `--remove-source-files` deletes every file it copied from SRC.
        "rsync" => {
            let all: Vec<_> = i.operand_words().collect();
            let (sources, destination) = all.split_at(all.len().saturating_sub(1));
            let flag = |name: &str| i.args.iter().any(|a| a.starts_with(name));
            let mut deleted = Vec::new();
            if flag("--remove-source-files") {
                deleted.extend_from_slice(sources);
            }
            if flag("--delete") {
                deleted.extend_from_slice(destination);
            }
            deleted
        }
        // `mv X /dev/null` destroys X.
        "mv" if i
            .operand_words()
            .last()
            .is_some_and(|w| w.text == "/dev/null") =>
        {
            let all: Vec<_> = i.operand_words().collect();
            all[..all.len() - 1].to_vec()
        }
        // `mv ~ X` takes the home directory (or the workspace, or a
        // directory holding one) from where everything expects it.
        "mv" => {
            let all: Vec<_> = i.operand_words().collect();
            let sources = &all[..all.len().saturating_sub(1)];
            (sources.iter().copied())
                .filter(|w| {
                    let path = resolve(w, ctx);
                    !path.dynamic
                        && sondera_catalogue::places::holds_home_or_workspace(
                            &path.path,
                            ctx.workspace_root,
                            ctx.home,
                        )
                })
                .collect()
        }
        "truncate" => {
            let size_values: Vec<usize> = i
                .args
                .iter()
                .enumerate()
                .filter(|(_, a)| matches!(a.as_str(), "-s" | "-r" | "--size" | "--reference"))
                .map(|(n, _)| n + 1)
                .collect();
            i.arg_words
                .iter()
                .enumerate()
                .filter(|(n, w)| !w.text.starts_with('-') && !size_values.contains(n))
                .map(|(_, w)| w)
                .collect()
        }
        // `dd of=FILE` overwrites FILE (devices are disk overwrites).
        "dd" => i
            .arg_words
            .iter()
            .filter(|w| w.text.starts_with("of=") && !w.text.starts_with("of=/dev/"))
            .collect(),
        // `> FILE`, `: > FILE`, `true > FILE`: the file is emptied
        // (devices such as /dev/null are not files).
        ":" | "true" if i.args.is_empty() => i
            .writes
            .iter()
            .filter(|w| !w.text.starts_with("/dev/"))
            .collect(),
        "git" => git_removed(i).unwrap_or_default(),
        // Run by `find -exec`, `rm` deletes whatever find finds, recursively.
        "rm" if i.wrappers.iter().any(|w| w == "find") => i.operand_words().collect(),
        "find" if i.args.iter().any(|a| a == "-delete") => i
            .operand_words()
            .take_while(|w| !w.text.starts_with('(') && !w.text.starts_with('!'))
            .take(1)
            .collect(),
        _ => return,
    };
    // `find` and what it runs delete what it finds below a directory, and
    // the operands `xargs` gets from a pipe are entries some program listed:
    // neither is the directory itself.
    let finds = i.program == "find" || i.wrappers.iter().any(|w| w == "find");
    let mut targets: Vec<(&crate::word::Word, bool)> =
        targets.into_iter().map(|t| (t, finds)).collect();
    if i.args_from_stdin {
        if i.piped_operands.is_empty() {
            out.push(risk(
                RiskKind::DeleteOutsideWorkspace,
                format!("{} deletes targets read from standard input", i.program),
            ));
            return;
        }
        targets.extend(i.piped_operands.iter().map(|t| (t, true)));
    }
    let mut expanded = Vec::new();
    for (target, below) in targets {
        let value = target
            .text
            .strip_prefix("of=")
            .filter(|_| i.program == "dd");
        let owned;
        let target = match value {
            Some(path) => {
                owned = crate::word::Word {
                    text: path.to_string(),
                    home_relative: crate::word::starts_at_home(path),
                    ..target.clone()
                };
                &owned
            }
            None => target,
        };
        let (words, complete) = crate::word::expand_braces(target);
        if !complete {
            out.push(risk(
                RiskKind::Unparsable,
                format!(
                    "{} {}: the brace expansion yields more words than are analysed",
                    i.program, target.text
                ),
            ));
        }
        expanded.extend(words.into_iter().map(|w| (w, below)));
    }
    judge_deletions(i, ctx, expanded, outside, out);
}

/// The directory `git clean --force` empties of untracked files: the one
/// `-C` names, else the working directory (pathspecs only narrow it).
fn git_cleaned(i: &Invocation) -> Option<crate::word::Word> {
    let (subcommand, rest) = i.git_subcommand()?;
    if subcommand != "clean" || !has_flag(rest, 'f', "--force") {
        return None;
    }
    let directory = i.args.iter().position(|a| a == "-C").map(|n| n + 1);
    Some(match directory.and_then(|n| i.arg_words.get(n)) {
        Some(dir) => dir.clone(),
        None => crate::word::Word::path("."),
    })
}

/// What `git rm` deletes from the working tree when recursive or forced,
/// as `rm` would be judged: its pathspecs (`--cached` keeps the files).
fn git_removed(i: &Invocation) -> Option<Vec<&crate::word::Word>> {
    let (subcommand, rest) = i.git_subcommand()?;
    let forced = has_flag(rest, 'r', "--recursive") || has_flag(rest, 'f', "--force");
    if subcommand != "rm" || !forced || rest.iter().any(|a| a == "--cached") {
        return None;
    }
    let after = i.arg_words.len() - rest.len();
    Some(
        (i.arg_words[after..].iter())
            .filter(|w| !w.text.starts_with('-'))
            .collect(),
    )
}

/// The risks of deleting `targets`, each with whether only what is below
/// it goes.
fn judge_deletions(
    i: &Invocation,
    ctx: &ShellContext<'_>,
    targets: Vec<(crate::word::Word, bool)>,
    outside: &mut Vec<String>,
    out: &mut Vec<Risk>,
) {
    for (target, below) in targets {
        let target = &target;
        let resolved = resolve(target, ctx);
        // `find DIR -delete` deletes below DIR, never DIR's parent.
        let deleted = if below {
            format!("{}/_", resolved.path)
        } else {
            resolved.path.clone()
        };
        // A glob or expansion names entries below the path, not the path.
        let wipes_home_or_workspace = !resolved.dynamic
            && sondera_catalogue::places::holds_home_or_workspace(
                &deleted,
                ctx.workspace_root,
                ctx.home,
            );
        if !wipes_home_or_workspace
            && !resolved.inside_workspace
            && sondera_catalogue::places::is_scratch(&deleted, ctx.home)
        {
            continue;
        }
        let kind = if resolved.inside_workspace && !wipes_home_or_workspace {
            RiskKind::DeleteInWorkspace
        } else {
            outside.push(resolved.path.clone());
            RiskKind::DeleteOutsideWorkspace
        };
        let what = if wipes_home_or_workspace {
            ": the home directory or the workspace root, or a directory holding one"
        } else {
            ""
        };
        out.push(risk(
            kind,
            format!(
                "{} {} (resolves to {}{what})",
                i.program, target.text, resolved.path
            ),
        ));
    }
}

fn disk(i: &Invocation, out: &mut Vec<Risk>) {
    let p = i.program.as_str();
    let device_write = i.args.iter().any(|a| {
        a.strip_prefix("of=")
            .is_some_and(|t| t.starts_with("/dev/") && !is_null_device(t))
    });
    let redirect_to_device = i
        .writes
        .iter()
        .any(|w| w.text.starts_with("/dev/") && !is_null_device(&w.text));
    let copy_to_device = matches!(p, "cp" | "mv" | "tee" | "install")
        && i.operand_words()
            .skip(usize::from(p != "tee"))
            .any(|w| w.text.starts_with("/dev/") && !is_null_device(&w.text));
    // `shred` of files is judged by the paths it destroys, as `rm` is.
    let shreds_device = p == "shred"
        && i.operand_words()
            .any(|w| w.dynamic || w.text.starts_with("/dev/") && !is_null_device(&w.text));
    if (p == "dd" && device_write)
        || copy_to_device
        || shreds_device
        || p.starts_with("mkfs")
        || matches!(p, "wipefs" | "mkswap")
        || redirect_to_device
    {
        out.push(risk(
            RiskKind::DiskOverwrite,
            format!("{p} {}", i.args.join(" ")),
        ));
    }
}

/// Whether `path` lies beyond the workspace and scratch space, where
/// changing who may use a file is not ordinary work.
fn beyond_work(path: &str, ctx: &ShellContext<'_>) -> bool {
    !matches!(
        sondera_catalogue::places::place(path, ctx.workspace_root, ctx.home),
        Place::Workspace | Place::Scratch
    )
}

/// `chattr +i` (immutable) or `+a` (append only), set or taken off, on a
/// file beyond the workspace: a planted key or a tampered system file then
/// stays as it is whoever tries to undo it, or a protected one is opened to
/// change.
fn file_attributes(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    // chattr's own options are -R, -V, -f, -v and -p; any other word led
    // by `+`, `-` or `=` is a change of attributes.
    let locking = |a: &&String| {
        a.strip_prefix(['+', '-', '=']).is_some_and(|letters| {
            letters.contains(['i', 'a']) && !letters.contains(['R', 'V', 'f', 'v', 'p'])
        })
    };
    let Some(change) = i.args.iter().find(locking) else {
        return;
    };
    for target in i
        .arg_words
        .iter()
        .filter(|w| !w.text.starts_with(['+', '-', '=']))
    {
        let path = resolve(target, ctx).path;
        if beyond_work(&path, ctx) {
            out.push(risk(
                RiskKind::PermissionChange,
                format!("chattr {change} on {path}"),
            ));
        }
    }
}

fn permissions(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    if i.program == "setfacl" {
        return access_lists(i, ctx, out);
    }
    if i.program == "chattr" {
        return file_attributes(i, ctx, out);
    }
    if !matches!(i.program.as_str(), "chmod" | "chown" | "chgrp") {
        return;
    }
    let mode = i.args.iter().find(|a| !a.starts_with('-'));
    let world_writable = i.program == "chmod" && mode.is_some_and(|m| grants_everyone_write(m));
    let recursive = has_flag(&i.args, 'R', "--recursive");
    let setuid = i.program == "chmod"
        && i.args.iter().any(|a| {
            a.contains("+s")
                || (a.len() == 4
                    && a.starts_with(['2', '4', '6'])
                    && a.chars().all(|c| c.is_ascii_digit()))
        });
    for target in i
        .operand_words()
        .skip(usize::from(i.program != "chmod" || !setuid).min(1))
    {
        let path = resolve(target, ctx).path;
        // Below the workspace and scratch space, a recursive change is
        // ordinary work; on the system or a home directory it is not.
        let broad = matches!(
            sondera_catalogue::places::place(&path, ctx.workspace_root, ctx.home),
            Place::System | Place::Home
        ) || sondera_catalogue::places::holds_home(&path, ctx.home);
        if setuid
            || (recursive && broad)
            || path == "/"
            || (world_writable && beyond_work(&path, ctx))
        {
            out.push(risk(
                RiskKind::PermissionChange,
                format!("{} {} on {path}", i.program, i.args.join(" ")),
            ));
        }
    }
}

/// Whether a `chmod` mode lets everyone write: octal with the others'
/// digit 2, 3, 6 or 7, or a symbolic `o+w`, `a+w`, `o=rwx`.
fn grants_everyone_write(mode: &str) -> bool {
    if mode.len() >= 3 && mode.bytes().all(|b| b.is_ascii_digit()) {
        return matches!(mode.as_bytes()[mode.len() - 1], b'2' | b'3' | b'6' | b'7');
    }
    mode.split(',').any(|clause| {
        let (who, rest) = clause.split_at(clause.find(['+', '=']).unwrap_or(clause.len()));
        (who.contains('o') || who.contains('a')) && rest.contains('w')
    })
}

/// `setfacl` changing who may use files beyond the workspace and scratch
/// space (`setfacl -R -m u:nobody:rwx /etc`).
fn access_lists(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    const CHANGES: &[&str] = &[
        "-m",
        "-M",
        "-s",
        "--modify",
        "--set",
        "--modify-file",
        "--set-file",
    ];
    let changes = i.args.iter().any(|a| {
        CHANGES
            .iter()
            .any(|c| a == c || a.starts_with(&format!("{c}=")))
            || (a.starts_with('-') && !a.starts_with("--") && a.contains(['m', 's']))
    });
    if !changes {
        return;
    }
    // The operand after the change's entries is the first file.
    let files = i
        .arg_words
        .iter()
        .skip_while(|w| !w.text.starts_with('-'))
        .filter(|w| !w.text.starts_with('-'))
        .skip(1);
    for file in files {
        let path = resolve(file, ctx).path;
        if beyond_work(&path, ctx) {
            out.push(risk(
                RiskKind::PermissionChange,
                format!("setfacl {} on {path}", i.args.join(" ")),
            ));
        }
    }
}

/// Options after which a shell runs nothing (`bash --version`).
const SHELL_INFO_OPTIONS: &[&str] = &["--version", "--help", "-h", "-V", "--rcfile"];

/// A shell given no command, script, stream or here-document: interactive.
fn interactive_shell(i: &Invocation, out: &mut Vec<Risk>) {
    let program = i.program.as_str();
    if !Role::Shell.includes(program) {
        return;
    }
    let runs_something = i.args.iter().any(|a| {
        !a.starts_with('-')
            || a.starts_with("-c")
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
    }) || i
        .args
        .iter()
        .any(|a| SHELL_INFO_OPTIONS.contains(&a.as_str()))
        || !matches!(i.stdin, Stdin::Inherited)
        || !i.process_substitutions.is_empty();
    if !runs_something {
        let how = match i.wrappers.first() {
            Some(wrapper) => format!(" through {wrapper}"),
            None => String::new(),
        };
        out.push(risk(
            RiskKind::InteractiveShell,
            format!(
                "{} {} starts an interactive shell{how}",
                i.path,
                i.args.join(" ")
            ),
        ));
    }
}

fn shells(i: &Invocation, out: &mut Vec<Risk>) {
    interactive_shell(i, out);
    let program = i.program.as_str();
    let sources_script = matches!(program, "source" | ".");
    let interpreter = crate::interpreters::runs_script(i);
    if !Role::Shell.includes(program) && !interpreter && !sources_script {
        return;
    }
    let reads_script = |sources: &[String]| {
        let fetched = sources.iter().any(|s| fetches(s));
        let decoded = sources.iter().any(|s| Role::Decoder.includes(s));
        (fetched, decoded)
    };
    let runs_stdin =
        !i.args.iter().any(|a| !a.starts_with('-')) || i.args.iter().any(|a| a == "-s" || a == "-");
    if let Stdin::Pipe(sources) = &i.stdin
        && runs_stdin
    {
        out.push(risk(
            RiskKind::PipeToShell,
            format!("{} reads its script from {}", i.program, sources.join(", ")),
        ));
        let (fetched, decoded) = reads_script(sources);
        if fetched || decoded || i.piped_from_url {
            out.push(risk(
                RiskKind::RemoteScript,
                format!("{} runs what {} produced", i.program, sources.join(", ")),
            ));
        }
    }
    for sources in &i.process_substitutions {
        out.push(risk(
            RiskKind::PipeToShell,
            format!(
                "{} runs a process substitution of {}",
                i.program,
                sources.join(", ")
            ),
        ));
        let (fetched, decoded) = reads_script(sources);
        if fetched || decoded || i.piped_from_url {
            out.push(risk(
                RiskKind::RemoteScript,
                format!("{} runs what {} produced", i.program, sources.join(", ")),
            ));
        }
    }
}

/// Commands that grant privileges without `sudo`: setuid capabilities,
/// joining an administrative group, changing passwords or sudoers, and
/// containers with the host's root or full privileges.
fn privilege(i: &Invocation, out: &mut Vec<Risk>) {
    let args: Vec<&str> = i.args.iter().map(String::as_str).collect();
    let admin_group = |a: &&str| {
        a.split(',').any(|g| {
            matches!(
                g,
                "sudo" | "wheel" | "admin" | "root" | "docker" | "disk" | "adm"
            )
        })
    };
    let grants = match i.program.as_str() {
        "setcap" => args.iter().any(|a| a.contains("cap_")),
        "usermod" => {
            args.iter()
                .any(|a| a.starts_with("-G") || a.starts_with("-aG") || *a == "-a")
                && args.iter().any(admin_group)
        }
        "gpasswd" | "adduser" | "addgroup" => args.len() >= 2 && args.iter().any(admin_group),
        "visudo" | "passwd" | "chpasswd" | "useradd" => true,
        "docker" | "podman" => {
            args.first() == Some(&"run")
                && (args.contains(&"--privileged")
                    || args
                        .windows(2)
                        .any(|w| matches!(w[0], "-v" | "--volume") && w[1].starts_with("/:"))
                    || args
                        .iter()
                        .any(|a| a.starts_with("--volume=/:") || a.starts_with("-v=/:"))
                    || args.contains(&"--pid=host")
                    || args.iter().any(|a| {
                        a.contains(".sock:")
                            && sondera_catalogue::places::names_root_daemon_socket(a)
                    }))
        }
        // Speaking to the container daemon's socket (`curl --unix-socket
        // /var/run/docker.sock`, a container given it) is root; listing
        // or testing the file is not.
        program => {
            args.iter()
                .any(|a| sondera_catalogue::places::names_root_daemon_socket(a))
                && !Role::FileNamer.includes(program)
        }
    };
    if grants {
        out.push(risk(
            RiskKind::PrivilegeEscalation,
            format!("{} {}", i.program, i.args.join(" ")),
        ));
    }
}

fn git(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    if let Some(("add" | "commit", rest)) = i.git_subcommand() {
        // Staging a credential file puts it in history, and on every remote.
        let staged = i
            .arg_words
            .iter()
            .filter(|w| !w.text.starts_with('-') && rest.contains(&w.text));
        for word in staged {
            let path = resolve(word, ctx).path;
            if let Some(kind) = sondera_catalogue::secrets::sensitive_path(&path) {
                out.push(risk(
                    RiskKind::SecretRead,
                    format!("git stages the credential file {path} ({kind})"),
                ));
            }
        }
    }
    match i.git_subcommand() {
        Some(("push", rest)) => remote_history(rest, out),
        Some(("config", rest)) => git_config_runs(rest, ctx, out),
        _ => {}
    }
}

/// `git config KEY VALUE` setting what git runs later: judged as the same
/// line in the configuration file is (a command key, an `!` alias or
/// helper), and hooks taken from beyond the workspace persist.
fn git_config_runs(rest: &[String], ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    let global = rest.iter().any(|a| a == "--global" || a == "--system");
    let operands: Vec<&String> = rest.iter().filter(|a| !a.starts_with('-')).collect();
    let [key, value, ..] = operands.as_slice() else {
        return;
    };
    let key = key.to_ascii_lowercase();
    if key == "core.hookspath" {
        let path = resolve(&crate::word::Word::path(value.as_str()), ctx).path;
        // The workspace's own hooks, or the user's in home, are set-up.
        let own = matches!(
            sondera_catalogue::places::place(&path, ctx.workspace_root, ctx.home),
            Place::Workspace | Place::Home
        );
        if !own {
            out.push(risk(
                RiskKind::Persistence,
                format!("git takes its hooks from {path}, beyond the workspace and home"),
            ));
        }
        return;
    }
    if let Some(helper) = value.strip_prefix('!').filter(|_| credential_helper(&key))
        && keeps_its_input(helper, ctx)
    {
        out.push(risk(
            RiskKind::Persistence,
            format!("git config {key}: the helper keeps the credentials git hands it"),
        ));
    }
    let file = if global {
        format!("{}/.gitconfig", ctx.home.trim_end_matches('/'))
    } else {
        format!("{}/.git/config", ctx.workspace_root.trim_end_matches('/'))
    };
    let name = key.rsplit('.').next().unwrap_or(&key);
    let line = format!("{name} = {value}");
    if let Some(later) = crate::later::runs_later(&file, &line, ctx) {
        for r in later.risks {
            out.push(risk(r.kind, format!("git config {key}: {}", r.evidence)));
        }
    }
}

/// Whether a git key names a credential helper (`credential.helper`,
/// `credential.https://host.helper`), which git hands usernames and
/// passwords on its standard input.
fn credential_helper(key: &str) -> bool {
    key.starts_with("credential.") && key.ends_with(".helper")
}

/// Whether the shell command `helper` keeps what it reads on its standard
/// input: a command reading it writes a file (`cat >> /tmp/.c`, `tee
/// F`) or sends it over the network. A helper that prints a credential
/// (`echo password=$TOKEN`) or asks a store reads nothing it keeps.
fn keeps_its_input(helper: &str, ctx: &ShellContext<'_>) -> bool {
    let analysis = crate::analyze(helper, ctx);
    let keeps = analysis.invocations.iter().any(|i| {
        let reads_input = matches!(i.stdin, Stdin::Inherited) && !i.phantom;
        let writes = i.writes.iter().any(|w| !is_null_device(&w.text))
            || i.program == "tee" && i.operand_words().next().is_some();
        reads_input && writes
    });
    keeps || analysis.has(RiskKind::NetworkUpload)
}

/// What a `git push` with arguments `rest` does to the remote's history:
/// forcing, mirroring, pruning or deleting refs rewrites or removes what
/// others share; deleting a protected branch or mirroring every ref is
/// denied.
fn remote_history(rest: &[String], out: &mut Vec<Risk>) {
    let forced = rest.iter().any(|a| {
        a.as_str() == "--force"
            || a.as_str() == "-f"
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('f'))
            || (a.starts_with('+') && a.len() > 1)
    });
    let deletes = rest
        .iter()
        .any(|a| matches!(a.as_str(), "--delete" | "-d" | "--prune"))
        || rest.iter().any(|a| a.starts_with(':') && a.len() > 1);
    let mirrors = rest.iter().any(|a| a == "--mirror");
    let evidence = || format!("git push {}", rest.join(" "));
    if !(forced || deletes || mirrors) {
        return;
    }
    out.push(risk(RiskKind::ForcePush, evidence()));
    if !(deletes || mirrors) {
        // A force push to any branch is asked about; one that removes a
        // protected branch or replaces every ref is denied.
        return;
    }
    // Operands after the remote are refspecs; their destination is after `:`.
    let protected = rest
        .iter()
        .filter(|a| !a.starts_with('-'))
        .skip(1)
        .map(|spec| {
            let spec = spec.trim_start_matches('+');
            spec.rsplit_once(':').map_or(spec, |(_, dest)| dest)
        })
        .any(sondera_catalogue::grammar::protected_branch);
    if mirrors || protected {
        out.push(risk(
            RiskKind::ProtectedTarget,
            format!("{}: a protected branch or every ref", evidence()),
        ));
    }
}

/// `git push` to a remote the same command added (`git remote add x URL &&
/// git push x`) or to a URL given in place of a remote: code leaves for a
/// destination nobody configured beforehand.
fn pushes_to_new_remotes(invocations: &[Invocation], out: &mut Vec<Risk>) {
    let mut added: Vec<&str> = Vec::new();
    for i in invocations {
        match i.git_subcommand() {
            Some(("remote", args)) => {
                let mut operands = args.iter().filter(|a| !a.starts_with('-'));
                if matches!(operands.next().map(String::as_str), Some("add" | "set-url"))
                    && let Some(name) = operands.next()
                {
                    added.push(name);
                }
            }
            Some(("push", args)) => {
                let Some(remote) = args.iter().find(|a| !a.starts_with('-')) else {
                    continue;
                };
                let url = remote.contains("://") || crate::egress::is_remote_path(remote);
                if url || added.contains(&remote.as_str()) {
                    out.push(risk(
                        RiskKind::PushToNewRemote,
                        format!("git push {}", args.join(" ")),
                    ));
                }
            }
            _ => {}
        }
    }
}

/// Destroying infrastructure or data: what the catalogue knows of the
/// tools it names, what the grammar says of the others, and what SQL
/// handed to a database client does.
fn infra(i: &Invocation, out: &mut Vec<Risk>) {
    let evidence = match known_infra(i) {
        Some(true) => Some(format!("{} {}", i.program, i.args.join(" "))),
        Some(false) => None,
        None if judged_elsewhere(&i.program) => None,
        None => database_statements(i).or_else(|| crate::effects::destructive(i)),
    }
    .or_else(|| crate::effects::http_delete(i));
    let Some(evidence) = evidence else { return };
    if crate::effects::names_production(i) {
        out.push(risk(
            RiskKind::ProtectedTarget,
            format!("{evidence}, in production"),
        ));
    }
    out.push(risk(RiskKind::InfraDestroy, evidence));
}

/// Whether what `program` removes is judged by another analysis: files by
/// the paths they reach, packages by the package analysis, shells and
/// printers by what they run or print.
fn judged_elsewhere(program: &str) -> bool {
    names_files(program)
        || Role::PackageManager.includes(program)
        || Role::Printer.includes(program)
        || Role::Shell.includes(program)
        || Role::HttpClient.includes(program)
        || matches!(program, "find" | "truncate" | "shred" | "xargs")
}

/// What SQL (or a document store's script) given to a database client in
/// its arguments or input destroys.
fn database_statements(i: &Invocation) -> Option<String> {
    if !Role::DatabaseClient.includes(&i.program) {
        return None;
    }
    let stdin = match &i.stdin {
        Stdin::Text(text) => Some(text.as_str()),
        _ => None,
    };
    let scripts = i.scripts.iter().map(String::as_str);
    let texts = i
        .args
        .iter()
        .map(String::as_str)
        .chain(stdin)
        .chain(scripts);
    let mut why = None;
    for text in texts {
        let script = text.to_ascii_lowercase();
        let document_store = [".dropdatabase(", ".drop(", "deletemany({})", ".remove({})"]
            .iter()
            .any(|k| script.contains(k));
        why = crate::sql::destroys(text)
            .or_else(|| document_store.then(|| "a collection or database dropped".to_string()));
        if why.is_some() {
            break;
        }
    }
    why.map(|why| format!("{} runs {why}", i.program))
}

/// The catalogue's reading of a tool it names: `Some(destroys)` for the
/// tools it knows, `None` for the rest.
fn known_infra(i: &Invocation) -> Option<bool> {
    let args: Vec<&str> = i.args.iter().map(String::as_str).collect();
    let sub = |name: &str| args.contains(&name);
    Some(match i.program.as_str() {
        "terraform" | "tofu" | "terragrunt" => sub("destroy") || (sub("apply") && sub("-destroy")),
        "kubectl" | "oc" => sub("drain") || sub("delete") && !restarts_ephemeral(&args),
        "helm" => sub("uninstall") || sub("delete"),
        "aws" => args.iter().any(|a| {
            a.starts_with("delete") || a.starts_with("terminate") || *a == "rb" || *a == "rm"
        }),
        "gcloud" | "az" | "doctl" => sub("delete") && !withdraws_a_grant(&args),
        "dropdb" | "dropuser" => true,
        "redis-cli" => sub("FLUSHALL") || sub("FLUSHDB") || sub("flushall") || sub("flushdb"),
        // Mass removal of containers and volumes; removing one named
        // container is ordinary.
        "docker" | "podman" => {
            (sub("system") && sub("prune"))
                || (sub("volume") && (sub("rm") || sub("prune")))
                || (sub("compose") && sub("down") && (sub("-v") || sub("--volumes")))
                || (matches!(args.first(), Some(&"rm" | &"rmi"))
                    && i.arg_words.iter().any(|w| !w.substitutions.is_empty()))
        }
        _ => return None,
    })
}

/// `kubectl delete KIND ...` of kinds a controller makes again (`pod`,
/// `job/x`, `pod,job`), not widened to every object of them.
fn restarts_ephemeral(args: &[&str]) -> bool {
    let widened = args
        .iter()
        .any(|a| matches!(*a, "--all" | "-A" | "--all-namespaces"));
    // Options of `delete` that take the next word as their value.
    const VALUED: &[&str] = &["-n", "--namespace", "-l", "--selector", "--context", "-o"];
    let mut after = args.iter().skip_while(|a| **a != "delete").skip(1);
    let mut kind = None;
    while let Some(arg) = after.next() {
        if VALUED.contains(arg) {
            after.next();
        } else if !arg.starts_with('-') {
            kind = Some(*arg);
            break;
        }
    }
    !widened
        && kind.is_some_and(|kind| {
            let kinds = kind.split('/').next().unwrap_or(kind);
            kinds
                .split(',')
                .all(|k| EPHEMERAL_KINDS.contains(&k.to_ascii_lowercase().as_str()))
        })
}

/// A cloud command whose words before its options name a grant of access
/// (`az role assignment delete`): withdrawing access destroys nothing.
fn withdraws_a_grant(args: &[&str]) -> bool {
    args.iter()
        .take_while(|a| !a.starts_with('-'))
        .flat_map(|a| sondera_catalogue::grammar::tokens(a))
        .any(|t| sondera_catalogue::grammar::GRANT_NOUNS.contains(&t.as_str()))
}

/// `journalctl --vacuum-*` that keeps next to nothing: less than an hour,
/// less than a mebibyte or fewer than two files (`--vacuum-time=1s`).
/// Keeping two weeks (`--vacuum-time=14d`) is retention, not erasure; a
/// value that cannot be read keeps nothing.
fn empties_the_journal(args: &[String]) -> bool {
    const HOUR: f64 = 3600.0;
    const MEBIBYTE: f64 = 1024.0 * 1024.0;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let Some(setting) = arg.strip_prefix("--vacuum-") else {
            continue;
        };
        let (what, value) = match setting.split_once('=') {
            Some((what, value)) => (what, value.to_string()),
            None => (setting, args.next().cloned().unwrap_or_default()),
        };
        let kept = match what {
            "time" => time_span_seconds(&value).map(|s| s < HOUR),
            "size" => byte_size(&value).map(|b| b < MEBIBYTE),
            "files" => value.parse::<u64>().ok().map(|n| n < 2),
            _ => None,
        };
        if kept.unwrap_or(true) {
            return true;
        }
    }
    false
}

/// A systemd time span in seconds (`14d`, `2weeks`, `90min`, `1h 30min`).
fn time_span_seconds(value: &str) -> Option<f64> {
    sum_of_units(value, |unit| {
        Some(match unit {
            "" | "s" | "sec" | "second" | "seconds" => 1.0,
            "m" | "min" | "minute" | "minutes" => 60.0,
            "h" | "hr" | "hour" | "hours" => 3600.0,
            "d" | "day" | "days" => 86_400.0,
            "w" | "week" | "weeks" => 604_800.0,
            "M" | "month" | "months" => 2_629_800.0,
            "y" | "year" | "years" => 31_557_600.0,
            _ => return None,
        })
    })
}

/// A size in bytes with systemd's base-1024 suffixes (`500M`, `2G`).
fn byte_size(value: &str) -> Option<f64> {
    sum_of_units(value, |unit| {
        Some(match unit {
            "" | "B" => 1.0,
            "K" => 1024.0,
            "M" => 1024.0 * 1024.0,
            "G" => 1024.0 * 1024.0 * 1024.0,
            "T" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
            _ => return None,
        })
    })
}

/// Numbers followed by units, summed by what each unit is worth; `None`
/// when a unit is unknown or there is no number.
fn sum_of_units(value: &str, worth: impl Fn(&str) -> Option<f64>) -> Option<f64> {
    let mut total = 0.0;
    let mut rest = value.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = rest[digits..].trim_start();
        let unit_end = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        total += number * worth(&rest[..unit_end])?;
        rest = rest[unit_end..].trim_start();
    }
    Some(total)
}

fn history(i: &Invocation, ctx: &ShellContext<'_>, out: &mut Vec<Risk>) {
    let touches_history = |w: &crate::word::Word| {
        let path = resolve(w, ctx).path;
        path.ends_with("_history") || path.ends_with(".histfile") || path.starts_with("/var/log")
    };
    let p = i.program.as_str();
    let clears = (p == "history" && has_flag(&i.args, 'c', "--clear"))
        || (matches!(p, "rm" | "shred" | "truncate" | "unlink")
            && i.operand_words().any(touches_history))
        || (p == "unset" && i.args.iter().any(|a| a == "HISTFILE"))
        || (matches!(p, "export" | "declare" | "typeset" | "set")
            && i.args.iter().any(|a| {
                a.starts_with("HISTFILE=")
                    || a == "HISTSIZE=0"
                    || a == "HISTFILESIZE=0"
                    || a == "+o" && i.args.iter().any(|b| b == "history")
            }))
        || i.assignments.iter().any(|a| a == "HISTFILE")
        || (p == "ln" && i.operand_words().last().is_some_and(touches_history))
        || (p == "journalctl" && empties_the_journal(&i.args))
        || i.writes.iter().any(touches_history);
    if clears {
        out.push(risk(
            RiskKind::HistoryTampering,
            format!("{p} {}", i.args.join(" ")),
        ));
    }
}
