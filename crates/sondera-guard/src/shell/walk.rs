//! From a parsed command to the simple commands it runs.

use brush_parser::ast::{
    Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, ExtendedTestExpr,
    IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, Pipeline, Program, RedirectList,
    SimpleCommand,
};
use brush_parser::{Parser, ParserOptions};

use super::word::{self, Word};
use super::{Invocation, ShellAnalysis, Stdin, wrappers};

/// Deepest nesting of shells, `eval`, substitutions and here-documents
/// analysed; deeper input is not judged benign, it is flagged unparsable.
pub const MAX_DEPTH: usize = 8;
/// Longest command analysed, in bytes; longer input is flagged unparsable.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Most simple commands collected from one input.
pub const MAX_INVOCATIONS: usize = 4096;
/// Deepest nesting of brackets parsed; the parser recurses on them, so deeper
/// input is refused before parsing rather than risking the stack.
pub const MAX_BRACKET_DEPTH: usize = 64;

/// An upper bound of the bracket nesting of `source` (quotes are ignored, so
/// brackets inside strings count too: refusing those errs on the safe side).
fn bracket_depth(source: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in source.bytes() {
        match b {
            b'(' | b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

pub(super) struct Walker {
    options: ParserOptions,
    pub(super) analysis: ShellAnalysis,
}

pub(super) const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "busybox"];

impl Walker {
    pub(super) fn new() -> Self {
        Self {
            options: ParserOptions::default(),
            analysis: ShellAnalysis::default(),
        }
    }

    fn fail(&mut self, why: String) {
        if self.analysis.unparsable.is_none() {
            self.analysis.unparsable = Some(why);
        }
    }

    /// Parses and walks `source`, run at nesting `depth`.
    pub(super) fn source(&mut self, source: &str, depth: usize) {
        if depth > MAX_DEPTH {
            return self.fail(format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        if depth > 0 {
            self.analysis.nested = true;
        }
        match self.parse(source) {
            Ok(program) => self.program(&program, depth),
            Err(why) => self.fail(why),
        }
    }

    fn parse(&self, source: &str) -> Result<Program, String> {
        if bracket_depth(source) > MAX_BRACKET_DEPTH {
            return Err(format!(
                "brackets nest deeper than {MAX_BRACKET_DEPTH} levels"
            ));
        }
        // The parser is not ours: a panic in it must fail closed, not take
        // the harness down.
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Parser::new(std::io::Cursor::new(source), &self.options).parse_program()
        }));
        match parsed {
            Ok(Ok(program)) => Ok(program),
            Ok(Err(e)) => Err(format!("cannot parse `{}`: {e}", excerpt(source))),
            Err(_) => Err(format!("the shell parser failed on `{}`", excerpt(source))),
        }
    }

    /// An arithmetic command `(( expr ))`. The parser also reads nested
    /// subshells written `( ( cmd ) )` this way, which bash runs as commands,
    /// so the text is walked as commands when it parses as such; either way
    /// the substitutions in it run.
    fn arithmetic(&mut self, expr: &str, depth: usize) {
        match self.parse(expr) {
            Ok(program) => self.program(&program, depth),
            Err(_) => self.substitutions_in(expr, depth),
        }
    }

    /// Walks the command substitutions of an expression that is not itself
    /// a command (arithmetic), by reading it as a double-quoted word.
    fn substitutions_in(&mut self, expr: &str, depth: usize) {
        if expr.contains(['$', '`']) {
            self.word(&format!("\"{}\"", expr.replace('"', "\\\"")), depth);
        }
    }

    fn extended_test(&mut self, expr: &ExtendedTestExpr, depth: usize) {
        match expr {
            ExtendedTestExpr::And(a, b) | ExtendedTestExpr::Or(a, b) => {
                self.extended_test(a, depth);
                self.extended_test(b, depth);
            }
            ExtendedTestExpr::Not(e) | ExtendedTestExpr::Parenthesized(e) => {
                self.extended_test(e, depth)
            }
            ExtendedTestExpr::UnaryTest(_, w) => {
                self.word(&w.value, depth);
            }
            ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.word(&a.value, depth);
                self.word(&b.value, depth);
            }
        }
    }

    fn program(&mut self, program: &Program, depth: usize) {
        for list in &program.complete_commands {
            self.list(list, depth);
        }
    }

    fn list(&mut self, list: &CompoundList, depth: usize) {
        for item in &list.0 {
            let and_or = &item.0;
            self.pipeline(&and_or.first, depth);
            for next in &and_or.additional {
                let (brush_parser::ast::AndOr::And(p) | brush_parser::ast::AndOr::Or(p)) = next;
                self.pipeline(p, depth);
            }
        }
    }

    fn pipeline(&mut self, pipeline: &Pipeline, depth: usize) {
        let mut upstream: Option<(Vec<String>, Vec<Word>)> = None;
        let mut printed: Option<String> = None;
        for command in &pipeline.seq {
            let before = self.analysis.invocations.len();
            let (stdin, piped) = match upstream.take() {
                Some((programs, operands)) => (Some(Stdin::Pipe(programs)), operands),
                None => (None, Vec::new()),
            };
            self.command(command, depth, stdin);
            for i in &mut self.analysis.invocations[before..] {
                if i.args_from_stdin {
                    i.piped_operands = piped.clone();
                }
            }
            let here: Vec<&Invocation> = self.analysis.invocations[before..]
                .iter()
                .filter(|i| i.depth == depth)
                .collect();
            let programs = here.iter().map(|i| i.program.clone()).collect();
            let listed = listed_paths(&here);
            // `echo 'cmd' | sh`: the shell runs the text printed before it.
            let runs_printed = here.iter().any(|i| reads_script_from_stdin(i));
            let next_printed = printed_text(&here);
            upstream = Some((programs, listed));
            if runs_printed && let Some(text) = printed.take() {
                self.source(&text, depth + 1);
            }
            printed = next_printed;
        }
    }

    fn command(&mut self, command: &Command, depth: usize, stdin: Option<Stdin>) {
        match command {
            Command::Simple(simple) => self.simple(simple, depth, stdin),
            Command::Compound(compound, redirects) => {
                self.compound(compound, depth);
                self.redirects(redirects.as_ref(), depth);
            }
            Command::Function(def) => {
                self.analysis.functions.push(def.fname.value.clone());
                self.compound(&def.body.0, depth);
            }
            Command::ExtendedTest(test, redirects) => {
                self.extended_test(&test.expr, depth);
                self.redirects(redirects.as_ref(), depth);
            }
        }
    }

    /// Redirections of a compound command (`while ..; done < FILE`),
    /// recorded as an invocation without a program so the files they read
    /// and write are judged like any other.
    fn redirects(&mut self, redirects: Option<&RedirectList>, depth: usize) {
        let mut holder = Invocation {
            depth,
            ..Invocation::default()
        };
        for r in redirects.iter().flat_map(|r| &r.0) {
            self.redirect(r, depth, &mut holder);
        }
        let redirected = !holder.writes.is_empty() || matches!(holder.stdin, Stdin::File(_));
        if redirected && self.analysis.invocations.len() < MAX_INVOCATIONS {
            self.analysis.invocations.push(holder);
        }
    }

    fn compound(&mut self, compound: &CompoundCommand, depth: usize) {
        match compound {
            CompoundCommand::BraceGroup(g) => self.list(&g.list, depth),
            CompoundCommand::Subshell(s) => self.list(&s.list, depth),
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(&w.value, depth);
                }
                self.list(&f.body.list, depth);
            }
            CompoundCommand::ArithmeticForClause(f) => {
                for expr in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.substitutions_in(&expr.value, depth);
                }
                self.list(&f.body.list, depth)
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value, depth);
                for item in &c.cases {
                    if let Some(cmd) = &item.cmd {
                        self.list(cmd, depth);
                    }
                }
            }
            CompoundCommand::IfClause(i) => {
                self.list(&i.condition, depth);
                self.list(&i.then, depth);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c, depth);
                    }
                    self.list(&e.body, depth);
                }
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.list(&w.0, depth);
                self.list(&w.1.list, depth);
            }
            CompoundCommand::Coprocess(c) => self.command(&c.body, depth, None),
            CompoundCommand::Arithmetic(a) => self.arithmetic(&a.expr.value, depth),
        }
    }

    /// Decodes a word, analysing the commands its substitutions run.
    fn word(&mut self, raw: &str, depth: usize) -> Word {
        match word::decode(raw, &self.options) {
            Ok(w) => {
                for sub in &w.substitutions {
                    self.source(sub, depth + 1);
                }
                w
            }
            Err(e) => {
                self.fail(format!("cannot read word `{}`: {e}", excerpt(raw)));
                Word {
                    text: raw.to_string(),
                    dynamic: true,
                    ..Word::default()
                }
            }
        }
    }

    fn simple(&mut self, simple: &SimpleCommand, depth: usize, stdin: Option<Stdin>) {
        let mut invocation = Invocation {
            depth,
            stdin: stdin.unwrap_or_default(),
            ..Invocation::default()
        };
        let mut words: Vec<Word> = Vec::new();
        let items = simple.prefix.iter().flat_map(|p| &p.0);
        let head = simple.word_or_name.iter();
        let suffix = simple.suffix.iter().flat_map(|s| &s.0);
        for item in items {
            self.item(item, depth, &mut invocation, &mut words, true);
        }
        for w in head {
            words.push(self.word(&w.value, depth));
        }
        for item in suffix {
            self.item(item, depth, &mut invocation, &mut words, false);
        }
        if words.is_empty() {
            if invocation.writes.is_empty() && !matches!(invocation.stdin, Stdin::File(_)) {
                return;
            }
            // A bare redirection (`> FILE`) runs the null command.
            words.push(Word {
                text: ":".into(),
                ..Word::default()
            });
        }
        self.record(invocation, words);
    }

    fn item(
        &mut self,
        item: &CommandPrefixOrSuffixItem,
        depth: usize,
        invocation: &mut Invocation,
        words: &mut Vec<Word>,
        in_prefix: bool,
    ) {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(r) => self.redirect(r, depth, invocation),
            CommandPrefixOrSuffixItem::Word(w) => words.push(self.word(&w.value, depth)),
            CommandPrefixOrSuffixItem::AssignmentWord(assignment, raw) => {
                // `X=y cmd` sets a variable; after the program it is just an argument.
                let w = self.word(&raw.value, depth);
                if in_prefix {
                    invocation
                        .assignments
                        .push(format!("{:?}", assignment.name));
                } else {
                    words.push(w);
                }
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                let before = self.analysis.invocations.len();
                self.list(&sub.list, depth + 1);
                self.analysis.nested = true;
                let programs = self.programs_since(before);
                invocation.process_substitutions.push(programs);
                words.push(Word {
                    text: "<(...)".into(),
                    dynamic: true,
                    ..Word::default()
                });
            }
        }
    }

    fn programs_since(&self, start: usize) -> Vec<String> {
        self.analysis.invocations[start..]
            .iter()
            .map(|i| i.program.clone())
            .collect()
    }

    fn redirect(&mut self, redirect: &IoRedirect, depth: usize, invocation: &mut Invocation) {
        match redirect {
            IoRedirect::File(_, kind, target) => match target {
                IoFileRedirectTarget::Filename(w) => {
                    let path = self.word(&w.value, depth);
                    match kind {
                        IoFileRedirectKind::Read => invocation.stdin = Stdin::File(path.text),
                        // `>&2`, `<&-` duplicate descriptors; `>& FILE` writes FILE.
                        IoFileRedirectKind::DuplicateInput
                        | IoFileRedirectKind::DuplicateOutput
                            if path.text == "-"
                                || path.text.bytes().all(|b| b.is_ascii_digit()) => {}
                        IoFileRedirectKind::DuplicateInput => {
                            invocation.stdin = Stdin::File(path.text)
                        }
                        _ => invocation.writes.push(path),
                    }
                }
                IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                    let before = self.analysis.invocations.len();
                    self.list(&sub.list, depth + 1);
                    self.analysis.nested = true;
                    if matches!(kind, IoFileRedirectKind::Read) {
                        invocation.stdin = Stdin::Pipe(self.programs_since(before));
                    }
                }
                // `>&2` duplicates a descriptor; `>& FILE` writes FILE.
                IoFileRedirectTarget::Duplicate(w) => {
                    let target = self.word(&w.value, depth);
                    let descriptor = target.text.trim_end_matches('-');
                    if !descriptor.bytes().all(|b| b.is_ascii_digit()) {
                        match kind {
                            IoFileRedirectKind::DuplicateInput => {
                                invocation.stdin = Stdin::File(target.text)
                            }
                            _ => invocation.writes.push(target),
                        }
                    }
                }
                IoFileRedirectTarget::Fd(_) => {}
            },
            IoRedirect::HereDocument(_, doc) => {
                invocation.stdin = Stdin::Text(strip_heredoc(&doc.doc.value));
            }
            IoRedirect::HereString(_, w) => {
                let value = self.word(&w.value, depth);
                invocation.stdin = Stdin::Text(value.text);
            }
            IoRedirect::OutputAndError(w, _) => {
                let path = self.word(&w.value, depth);
                invocation.writes.push(path);
            }
        }
    }

    /// Records a simple command (and the commands its wrappers or nested
    /// shells run).
    fn record(&mut self, mut invocation: Invocation, words: Vec<Word>) {
        if self.analysis.invocations.len() >= MAX_INVOCATIONS {
            return self.fail(format!("more than {MAX_INVOCATIONS} commands"));
        }
        let unwrapped = wrappers::unwrap(&words);
        invocation.wrappers = unwrapped.wrappers;
        invocation.privileged = unwrapped.privileged;
        let Some(program) = unwrapped.argv.first() else {
            // A wrapper with nothing to run (`sudo -v`, `env`): keep the wrapper itself.
            invocation.program = basename(&words[0].text).to_string();
            invocation.args = words[1..].iter().map(|w| w.text.clone()).collect();
            self.analysis.invocations.push(invocation);
            return;
        };
        invocation.dynamic_program = program.dynamic;
        invocation.args_from_stdin = invocation.wrappers.iter().any(|w| w == "xargs");
        invocation.path = program.text.clone();
        invocation.program = basename(&program.text).to_string();
        invocation.args = unwrapped.argv[1..].iter().map(|w| w.text.clone()).collect();
        invocation.arg_words = unwrapped.argv[1..].to_vec();
        let depth = invocation.depth;
        let nested = self.nested_source(&invocation);
        // `{}` in `find -exec` stands for what find finds under its starting points.
        let found = listed_paths(&[&invocation]);
        for mut extra in unwrapped.also_runs {
            extra = extra
                .into_iter()
                .flat_map(|w| {
                    if w.text == "{}" {
                        found.clone()
                    } else {
                        vec![w]
                    }
                })
                .collect();
            if extra.is_empty() {
                continue;
            }
            let mut child = Invocation {
                depth,
                privileged: invocation.privileged,
                ..Invocation::default()
            };
            child.wrappers = vec![invocation.program.clone()];
            child.program = basename(&extra[0].text).to_string();
            child.path = extra[0].text.clone();
            child.dynamic_program = extra[0].dynamic;
            child.args = extra[1..].iter().map(|w| w.text.clone()).collect();
            child.arg_words = extra[1..].to_vec();
            child.args_from_stdin = invocation.program == "xargs";
            child.stdin = invocation.stdin.clone();
            self.analysis.invocations.push(child);
        }
        self.analysis.invocations.push(invocation);
        if let Some(source) = nested {
            self.source(&source, depth + 1);
        }
    }

    /// The command text a shell, `eval` or a here-document runs, if any.
    fn nested_source(&self, invocation: &Invocation) -> Option<String> {
        let program = invocation.program.as_str();
        if program == "eval" {
            return Some(invocation.args.join(" "));
        }
        if !SHELLS.contains(&program) {
            return None;
        }
        let args = &invocation.args;
        let c_flag = args
            .iter()
            .position(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains('c'));
        if let Some(i) = c_flag {
            return args.get(i + 1).cloned();
        }
        match &invocation.stdin {
            Stdin::Text(body) if !args.iter().any(|a| !a.starts_with('-')) => Some(body.clone()),
            _ => None,
        }
    }
}

/// A shell that takes its script from standard input.
fn reads_script_from_stdin(invocation: &Invocation) -> bool {
    SHELLS.contains(&invocation.program.as_str())
        && matches!(invocation.stdin, Stdin::Pipe(_))
        && !invocation
            .args
            .iter()
            .any(|a| !a.starts_with('-') || a.contains('c'))
}

/// The text a stage prints when it is a lone `echo` or `printf` of static
/// words, or a `cat` of a here-document.
fn printed_text(stage: &[&Invocation]) -> Option<String> {
    match stage {
        [only] if only.program == "cat" && only.args.is_empty() => match &only.stdin {
            Stdin::Text(text) => Some(text.clone()),
            _ => None,
        },
        [only]
            if matches!(only.program.as_str(), "echo" | "printf")
                && !only.arg_words.iter().any(|w| w.dynamic) =>
        {
            Some(
                only.arg_words
                    .iter()
                    .filter(|w| {
                        !(only.program == "echo" && matches!(w.text.as_str(), "-n" | "-e" | "-E"))
                    })
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        }
        _ => None,
    }
}

/// The paths a pipeline stage prints, when it is one that prints its
/// operands (`find DIR`, `echo PATH`); `None` stands for "unknown".
fn listed_paths(stage: &[&Invocation]) -> Vec<Word> {
    match stage {
        [only] if matches!(only.program.as_str(), "find" | "echo" | "printf" | "ls") => only
            .arg_words
            .iter()
            .take_while(|w| !(only.program == "find" && w.text.starts_with('-')))
            .filter(|w| !w.text.starts_with('-'))
            .cloned()
            .collect(),
        _ => Vec::new(),
    }
}

fn strip_heredoc(doc: &str) -> String {
    doc.to_string()
}

pub(super) fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn excerpt(text: &str) -> String {
    let mut end = text.len().min(60);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end < text.len() {
        format!("{}...", &text[..end])
    } else {
        text.to_string()
    }
}
