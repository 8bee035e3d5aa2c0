//! Structural analysis of shell commands.
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

mod code;
mod egress;
mod embedded;
mod paths;
mod risks;
mod walk;
pub mod word;
mod wrappers;

pub use crate::net::url_host;
pub use paths::{ResolvedPath, pattern, resolve};
pub use risks::{Risk, RiskKind};
pub use walk::{
    MAX_COMMAND_BYTES, MAX_DEPTH, MAX_INVOCATIONS, PARSE_ALLOWANCE_BYTES, parse_budget,
};

use word::Word;

/// How many leading words of a command [`ShellAnalysis::command_prefixes`] gives.
pub const MAX_PREFIX_WORDS: usize = 6;

/// Where a command runs.
#[derive(Debug, Clone, Copy)]
pub struct ShellContext<'a> {
    pub working_dir: &'a str,
    /// The agent's workspace; paths outside it are reported.
    pub workspace_root: &'a str,
    /// What `~` and `$HOME` stand for.
    pub home: &'a str,
}

/// What a simple command reads on its standard input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Stdin {
    #[default]
    Inherited,
    /// The output of these programs (a pipe or a process substitution).
    Pipe(Vec<String>),
    /// A here-document or here-string.
    Text(String),
    /// A file redirected in.
    File(String),
}

/// One simple command as it runs.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    /// The program's name, without directories (`/bin/rm` is `rm`).
    pub program: String,
    /// The program as written (after quote removal).
    pub path: String,
    pub args: Vec<String>,
    pub(crate) arg_words: Vec<Word>,
    /// Wrappers it was run through, outermost first.
    pub wrappers: Vec<String>,
    pub privileged: bool,
    /// The program comes from an expansion or substitution.
    pub dynamic_program: bool,
    /// Its arguments also come from standard input (`xargs`).
    pub args_from_stdin: bool,
    /// For `args_from_stdin`: the paths the upstream stage prints, when they
    /// are known (`find DIR | xargs rm`); empty when they are not.
    pub(crate) piped_operands: Vec<Word>,
    pub stdin: Stdin,
    /// Files it writes through redirections.
    pub writes: Vec<Word>,
    /// Programs of process substitutions among its arguments.
    pub process_substitutions: Vec<Vec<String>>,
    /// Names of the variables assigned for it (`X=1 cmd`, `env X=1 cmd`).
    pub assignments: Vec<String>,
    /// 0 at top level, +1 inside each nested shell, `eval` or substitution.
    pub depth: usize,
    /// Found inside another command's arguments: it may not be a command at
    /// all, so only what a known program certainly does counts.
    pub phantom: bool,
    /// A redirection duplicates a descriptor beyond 0, 1 and 2 (`<&196`,
    /// `>&$REPLY`): one opened elsewhere in the command, often a socket.
    pub extra_descriptors: bool,
}

/// Everything the analysis found.
#[derive(Debug, Clone, Default)]
pub struct ShellAnalysis {
    pub invocations: Vec<Invocation>,
    /// Functions the command defines.
    pub functions: Vec<String>,
    /// Some part ran through a nested shell, `eval` or substitution.
    pub nested: bool,
    /// Why the command could not be fully analysed, if it could not.
    pub unparsable: Option<String>,
    pub risks: Vec<Risk>,
    /// Paths the command deletes that resolve outside the workspace.
    pub paths_outside_workspace: Vec<String>,
    /// Hosts network programs in the command talk to.
    pub hosts: Vec<String>,
}

impl ShellAnalysis {
    /// Some program could not be known statically.
    pub fn dynamic(&self) -> bool {
        self.invocations.iter().any(|i| i.dynamic_program)
    }

    pub fn privileged(&self) -> bool {
        self.invocations.iter().any(|i| i.privileged)
    }

    /// Every program run, in order, without repeats.
    pub fn programs(&self) -> Vec<&str> {
        distinct(self.commands_run().map(|i| i.program.as_str()))
    }

    /// Invocations that run a program (not the redirections of a compound
    /// command recorded on their own).
    fn commands_run(&self) -> impl Iterator<Item = &Invocation> {
        self.invocations.iter().filter(|i| !i.program.is_empty())
    }

    /// A simple command's words: the program, then its arguments.
    fn argv(i: &Invocation) -> impl Iterator<Item = &str> {
        std::iter::once(i.program.as_str()).chain(i.args.iter().map(String::as_str))
    }

    /// Each simple command as run (program after unwrapping, then its
    /// arguments after quote removal), one space between words, without
    /// repeats: `ls && r''m -rf /` is `ls` and `rm -rf /`.
    pub fn commands(&self) -> Vec<String> {
        distinct(
            self.commands_run()
                .map(|i| Self::argv(i).collect::<Vec<_>>().join(" ")),
        )
    }

    /// The leading words of each simple command, one to
    /// [`MAX_PREFIX_WORDS`] of them (`git`, `git push`, `git push origin`),
    /// so a policy can match a command by its start in any segment of a
    /// chain.
    pub fn command_prefixes(&self) -> Vec<String> {
        distinct(self.commands_run().flat_map(|i| {
            let words: Vec<&str> = Self::argv(i).take(MAX_PREFIX_WORDS).collect();
            (1..=words.len()).map(move |n| words[..n].join(" "))
        }))
    }

    /// How many simple commands run (redirections of a compound command
    /// alone are not one).
    pub fn segments(&self) -> usize {
        self.commands_run().count()
    }

    pub fn has(&self, kind: RiskKind) -> bool {
        self.risks.iter().any(|r| r.kind == kind)
    }
}

/// `items` in their first order, without repeats, in linear time: a
/// command may run thousands of simple commands.
fn distinct<T: Eq + std::hash::Hash + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut seen = std::collections::HashSet::new();
    items.filter(|item| seen.insert(item.clone())).collect()
}

/// Analyses `command` as run in `context`.
pub fn analyze(command: &str, context: &ShellContext<'_>) -> ShellAnalysis {
    let read = as_bash_reads(command);
    let mut walker = walk::Walker::new(*context, read.len());
    if read.len() > MAX_COMMAND_BYTES {
        walker.analysis.unparsable = Some(format!(
            "command is {} bytes, longer than the {MAX_COMMAND_BYTES}-byte limit",
            read.len()
        ));
    } else {
        walker.source(&read, 0);
    }
    let mut analysis = std::mem::take(&mut walker.analysis);
    risks::assess(&mut analysis, context);
    if let Some(control) = control_bytes(command) {
        analysis.risks.push(Risk {
            kind: RiskKind::Obfuscated,
            evidence: format!("the command contains {control}"),
        });
    }
    for group in walker.embedded.drain(..) {
        embedded_risks(&mut analysis, group, context);
    }
    analysis.risks.append(&mut walker.code_risks);
    analysis.hosts.append(&mut walker.code_hosts);
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
