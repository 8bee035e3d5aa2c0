//! Structural analysis of shell commands, for Sondera Harness's detectors.
//!
//! A command string is parsed as bash (with `brush-parser`), never matched
//! as text: every simple command across `;`, `&&`, `||`, pipes, subshells,
//! groups, loops, functions, substitutions and here-documents is found, its
//! words are taken after quote removal (`r''m`, `"r""m"`, `\rm` and
//! `$'\x72\x6d'` are all `rm`), wrappers are unwrapped to the program they
//! run, and nested shells (`sh -c`, `eval`, a here-document or pipe into a
//! shell) are analysed in turn. What cannot be known statically (a variable
//! or substitution in command position) is flagged as dynamic; what cannot
//! be parsed, or nests or sprawls past fixed bounds, is flagged unparsable.
//! Both are facts for policies to fail closed on, never a silent pass.
//!
//! Nothing here reads a file or resolves a name: paths are resolved lexically
//! against the working directory and home given in [`ShellContext`].

//!
//! The analysis is built in layers, each reading only those below it:
//!
//! 1. the catalogue of programs by role (`sondera-catalogue`), and
//!    the shared types (context, invocations, risks), [`word`] and paths;
//! 2. the walk, with the wrappers, embedded commands and interpreters it
//!    unwraps, which only describes what runs: programs, arguments,
//!    redirections, inline code;
//! 3. the facts read from that description: risks, egress, what inline
//!    code does;
//! 4. [`analyze`], which runs the walk, then the facts.

mod code;
mod defences;
mod effects;
mod egress;
mod embedded;
mod interpreters;
mod later;
mod make;
mod paths;
mod risks;
mod simple;
mod sources;
mod spawns;
mod sql;
mod statics;
mod types;
mod walk;
pub mod word;
mod wrappers;
mod written;

pub use later::{LaterRun, is_script, runs_later, script_risks};
pub use paths::{ResolvedPath, pattern, resolve};
pub use sondera_catalogue::hosts::url_host;
pub use types::{Invocation, MAX_PREFIX_WORDS, Risk, RiskKind, ShellAnalysis, ShellContext, Stdin};
pub use walk::{
    MAX_COMMAND_BYTES, MAX_DEPTH, MAX_INVOCATIONS, PARSE_ALLOWANCE_BYTES, parse_budget,
};

/// Analyses `command` as run in `context`.
pub fn analyze(command: &str, context: &ShellContext<'_>) -> ShellAnalysis {
    let read = as_bash_reads(command);
    let mut walker = walk::Walker::new(read.len());
    if within_bound(&mut walker, "command", read.len()) {
        walker.source(&read, 0);
    }
    finish(walker, command, context)
}

/// Analyses `code` in the language of `interpreter` (`python3`, `node`,
/// `perl`, ...) as if that interpreter ran it in `context`: the commands
/// it spawns, the files it deletes, the connections it opens.
pub fn analyze_code(interpreter: &str, code: &str, context: &ShellContext<'_>) -> ShellAnalysis {
    let mut walker = walk::Walker::new(code.len());
    if within_bound(&mut walker, "code", code.len()) {
        walker.inline_code(
            interpreter,
            interpreters::InlineCode::Text(code.to_string()),
            0,
        );
    }
    finish(walker, code, context)
}

/// The files `analysis`'s commands run as scripts (`bash setup.sh`,
/// `./x.sh`, `python3 tools/x.py`, `psql -f q.sql`), resolved in `context`:
/// where a script written earlier in the trajectory is run.
pub fn scripts_run(analysis: &ShellAnalysis, context: &ShellContext<'_>) -> Vec<String> {
    analysis
        .invocations
        .iter()
        .filter(|i| !i.phantom && !i.dynamic_program)
        .filter_map(written::script_of)
        .map(|(_, path)| resolve(&word::Word::path(path), context).path)
        .collect()
}

/// The files a command prints and does nothing else with (`cat AGENTS.md`,
/// `head -n 40 CLAUDE.md`, `sed -n '1,30p' GEMINI.md`): its output is
/// their text. Empty when it runs anything else, pipes, redirects or
/// writes, or when a file is only known at run time.
pub fn files_printed(analysis: &ShellAnalysis) -> Vec<&str> {
    let [only] = analysis.invocations.as_slice() else {
        return Vec::new();
    };
    let program = only.program.as_str();
    let prints_files = matches!(
        program,
        "cat" | "head" | "tail" | "bat" | "batcat" | "less" | "more" | "nl" | "sed"
    );
    let edits_in_place = program == "sed" && only.args.iter().any(|a| a.starts_with("-i"));
    if !prints_files
        || edits_in_place
        || only.dynamic_program
        || only.privileged
        || !only.writes.is_empty()
        || !matches!(only.stdin, Stdin::Inherited)
    {
        return Vec::new();
    }
    let mut operands = only.operand_words();
    // sed's script is its first operand unless an option gives it.
    let script_given = only.args.iter().any(|a| {
        matches!(a.as_str(), "-e" | "-f")
            || a.starts_with("--expression")
            || a.starts_with("--file")
    });
    if program == "sed" && !script_given {
        operands.next();
    }
    let files: Vec<&word::Word> = operands.collect();
    if files.iter().any(|w| w.dynamic) {
        return Vec::new();
    }
    files.iter().map(|w| w.text.as_str()).collect()
}

/// Whether `len` bytes of `what` may be analysed; past the bound the
/// analysis is unparsable, which policies fail closed on.
fn within_bound(walker: &mut walk::Walker, what: &str, len: usize) -> bool {
    if len > MAX_COMMAND_BYTES {
        walker.analysis.unparsable = Some(format!(
            "{what} is {len} bytes, longer than the {MAX_COMMAND_BYTES}-byte limit"
        ));
    }
    len <= MAX_COMMAND_BYTES
}

/// The facts of what `walker` found in `text`.
fn finish(mut walker: walk::Walker, text: &str, context: &ShellContext<'_>) -> ShellAnalysis {
    let mut analysis = std::mem::take(&mut walker.analysis);
    risks::assess(&mut analysis, context);
    if let Some(control) = control_bytes(text) {
        analysis.risks.push(Risk {
            kind: RiskKind::Obfuscated,
            evidence: format!("the command contains {control}"),
        });
    }
    for group in walker.embedded.drain(..) {
        embedded_risks(&mut analysis, group, context);
    }
    let mut code = code::assess(&walker.inline, context);
    analysis.risks.append(&mut code.risks);
    analysis.hosts.append(&mut code.hosts);
    analysis.hosts.sort();
    analysis.hosts.dedup();
    analysis.paths_outside_workspace.sort();
    analysis.paths_outside_workspace.dedup();
    analysis
        .risks
        .sort_by(|a, b| (a.kind, &a.evidence).cmp(&(b.kind, &b.evidence)));
    analysis.risks.dedup();
    analysis
}

/// The command as bash reads it: bash drops NUL bytes from the text it
/// reads, so `r<NUL>m` runs `rm`.
fn as_bash_reads(command: &str) -> std::borrow::Cow<'_, str> {
    if command.contains('\0') {
        std::borrow::Cow::Owned(command.replace('\0', ""))
    } else {
        std::borrow::Cow::Borrowed(command)
    }
}

/// NUL and other control bytes (besides tab, line feed and carriage
/// return) have no place in a command a person would write.
fn control_bytes(command: &str) -> Option<String> {
    let odd = command
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))?;
    Some(match odd {
        '\0' => "NUL bytes, which bash drops".to_string(),
        other => format!("the control character U+{:04X}", u32::from(other)),
    })
}

/// The risks of commands found in arguments, as evidence of the command
/// that carries them. What such text cannot be shown to do (it is not a
/// command, or its program is only known at run time) does not count.
fn embedded_risks(analysis: &mut ShellAnalysis, group: walk::Embedded, context: &ShellContext<'_>) {
    if group.invocations.is_empty() {
        return;
    }
    let mut found = ShellAnalysis {
        invocations: group.invocations,
        ..ShellAnalysis::default()
    };
    risks::assess(&mut found, context);
    analysis.hosts.append(&mut found.hosts);
    analysis
        .paths_outside_workspace
        .append(&mut found.paths_outside_workspace);
    let counted = found
        .risks
        .into_iter()
        .filter(|r| !matches!(r.kind, RiskKind::Unparsable | RiskKind::DynamicProgram));
    analysis.risks.extend(counted.map(|r| Risk {
        evidence: format!("{}: {}", group.origin, r.evidence),
        kind: r.kind,
    }));
}
