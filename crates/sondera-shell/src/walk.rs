//! From a parsed command to the simple commands it runs.

use std::borrow::Cow;

use brush_parser::ast::{
    Assignment, AssignmentName, AssignmentValue, Command, CommandPrefixOrSuffixItem,
    CompoundCommand, CompoundList, ExtendedTestExpr, IoFileRedirectKind, IoFileRedirectTarget,
    IoRedirect, Pipeline, Program, RedirectList, SimpleCommand,
};
use brush_parser::{Parser, ParserOptions};

use sondera_catalogue::Role;
use sondera_catalogue::grammar;
use sondera_catalogue::programs::{
    GIT_DATA_SUBCOMMANDS, basename, names_files, passes_input_through, prints_own_setup,
    runs_no_arguments,
};

use crate::interpreters::{self, InlineCode, InlineRun};
use crate::make;
use crate::statics::StaticValues;
use crate::types::{Invocation, ShellAnalysis, Stdin};
use crate::word::{self, Word};
use crate::written::{Runner, WrittenFiles, printed_text};
use crate::{embedded, wrappers};

/// Deepest nesting of shells, `eval`, substitutions and here-documents
/// analysed; deeper input is not judged benign, it is flagged unparsable.
pub const MAX_DEPTH: usize = 8;
/// Longest command analysed, in bytes; longer input is flagged unparsable.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Most simple commands collected from one input.
pub const MAX_INVOCATIONS: usize = 4096;
/// Deepest nesting of brackets parsed; the parser recurses on them, so deeper
/// input is refused before parsing rather than risking the stack.
pub(crate) const MAX_BRACKET_DEPTH: usize = 64;
/// Bytes parsed in one analysis beyond twice the command's own length: the
/// command, the nested shells, `eval` texts and substitutions it runs, and
/// the commands found in its arguments are all charged against
/// [`parse_budget`]. Each parse is linear in its length, so this bounds the
/// cost of any command however it nests; past it the command is unparsable.
pub const PARSE_ALLOWANCE_BYTES: usize = 8 * 1024;

/// How many bytes may be parsed in analysing a command of `len` bytes.
pub fn parse_budget(len: usize) -> usize {
    2 * len + PARSE_ALLOWANCE_BYTES
}

/// Most commands found inside arguments of one command.
const MAX_EMBEDDED: usize = 4 * MAX_INVOCATIONS;

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
    /// Bytes that may still be parsed (see [`parse_budget`]).
    budget: usize,
    pub(super) analysis: ShellAnalysis,
    /// Commands that may run inside others' arguments, each group with who
    /// runs it; while one is being read, `group` is its index.
    pub(super) embedded: Vec<Embedded>,
    group: Option<usize>,
    embedded_count: usize,
    /// Inline code interpreters run, for the facts layer to read.
    pub(super) inline: Vec<InlineRun>,
    /// A command substitution is being walked: what runs prints into a
    /// word, not to the caller.
    capturing: bool,
    /// Variables assigned statically so far.
    statics: StaticValues,
    /// Files written so far with text the command spells out.
    written: WrittenFiles,
}

/// Most values of a `for` loop over static words whose body is walked once
/// per value; past this the variable is taken as unknown.
const MAX_LOOP_VALUES: usize = 8;

/// The assignments in a simple command's prefix: the words, for the
/// commands they may carry, and each variable with its static value.
#[derive(Default)]
struct Assignments {
    words: Vec<Word>,
    values: Vec<(String, Option<Vec<Word>>)>,
}

/// Commands found inside another command's arguments (see [`embedded`]),
/// analysed together as possible commands.
#[derive(Debug, Default)]
pub(super) struct Embedded {
    /// Who runs them, as evidence: "`tmux` argument `rm -rf ~` runs as a command".
    pub origin: String,
    pub invocations: Vec<Invocation>,
}

/// Why text was not analysed.
enum ParseFailure {
    /// It is not a command: bad syntax.
    Syntax(String),
    /// It was not read: a bound of the analysis was reached.
    Bound(String),
}

impl Walker {
    pub(super) fn new(command_len: usize) -> Self {
        Self {
            options: ParserOptions::default(),
            budget: parse_budget(command_len),
            analysis: ShellAnalysis::default(),
            embedded: Vec::new(),
            group: None,
            embedded_count: 0,
            inline: Vec::new(),
            capturing: false,
            statics: StaticValues::default(),
            written: WrittenFiles::default(),
        }
    }

    /// Text that is not a command. Inside an argument that merely might be
    /// one, that only means it is not one.
    fn fail(&mut self, why: String) {
        if self.group.is_none() && self.analysis.unparsable.is_none() {
            self.analysis.unparsable = Some(why);
        }
    }

    /// A bound was reached: what lies beyond was not read, so the whole
    /// command is unparsable, wherever the bound was met.
    fn exceed(&mut self, why: String) {
        if self.analysis.unparsable.is_none() {
            self.analysis.unparsable = Some(why);
        }
    }

    /// The invocations being collected: the command's own, or those of the
    /// embedded group being read.
    fn active(&mut self) -> &mut Vec<Invocation> {
        match self.group {
            Some(g) => &mut self.embedded[g].invocations,
            None => &mut self.analysis.invocations,
        }
    }

    fn push(&mut self, mut invocation: Invocation) {
        invocation.output_handed_on |= self.capturing;
        if self.group.is_some() {
            self.embedded_count += 1;
            if self.embedded_count > MAX_EMBEDDED {
                return self.exceed(format!(
                    "more than {MAX_EMBEDDED} commands inside arguments"
                ));
            }
        }
        self.active().push(invocation);
    }

    /// Reads what `read` collects as a group of possible commands run by `origin`.
    fn in_group(&mut self, origin: String, read: impl FnOnce(&mut Self)) {
        let saved = self.group.replace(self.embedded.len());
        self.embedded.push(Embedded {
            origin,
            invocations: Vec::new(),
        });
        read(self);
        self.group = saved;
    }

    /// Parses and walks `source`, run at nesting `depth`.
    pub(super) fn source(&mut self, source: &str, depth: usize) {
        if depth > MAX_DEPTH {
            return self.exceed(format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        if depth > 0 && self.group.is_none() {
            self.analysis.nested = true;
        }
        match self.parse(source) {
            Ok(program) => self.program(&program, depth),
            Err(ParseFailure::Syntax(why)) => self.fail(why),
            Err(ParseFailure::Bound(why)) => self.exceed(why),
        }
    }

    fn parse(&mut self, source: &str) -> Result<Program, ParseFailure> {
        if source.len() > self.budget {
            return Err(ParseFailure::Bound(format!(
                "the commands nested in this one come to more than twice its length plus {PARSE_ALLOWANCE_BYTES} bytes"
            )));
        }
        self.budget -= source.len();
        if bracket_depth(source) > MAX_BRACKET_DEPTH {
            return Err(ParseFailure::Bound(format!(
                "brackets nest deeper than {MAX_BRACKET_DEPTH} levels"
            )));
        }
        if let Some(program) = crate::simple::program(source) {
            return Ok(program);
        }
        // The parser is not ours: a panic in it must fail closed, not take
        // the harness down.
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Parser::new(std::io::Cursor::new(source), &self.options).parse_program()
        }));
        match parsed {
            Ok(Ok(program)) => Ok(program),
            Ok(Err(e)) => Err(ParseFailure::Syntax(format!(
                "cannot parse `{}`: {e}",
                excerpt(source)
            ))),
            Err(_) => Err(ParseFailure::Bound(format!(
                "the shell parser failed on `{}`",
                excerpt(source)
            ))),
        }
    }

    /// An arithmetic command `(( expr ))`. The parser also reads nested
    /// subshells written `( ( cmd ) )` this way, which bash runs as commands,
    /// so the text is walked as commands when it parses as such; either way
    /// the substitutions in it run.
    fn arithmetic(&mut self, expr: &str, depth: usize) {
        match self.parse(expr) {
            Ok(program) => self.program(&program, depth),
            Err(ParseFailure::Syntax(_)) => self.substitutions_in(expr, depth),
            Err(ParseFailure::Bound(why)) => self.exceed(why),
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
        let mut upstream: Option<(Vec<String>, Vec<Word>, bool)> = None;
        let mut printed: Option<String> = None;
        let mut previous_stage = 0..0;
        for command in &pipeline.seq {
            let before = self.active().len();
            let (stdin, piped, from_url) = match upstream.take() {
                Some((programs, operands, url)) => (Some(Stdin::Pipe(programs)), operands, url),
                None => (None, Vec::new(), false),
            };
            self.command(command, depth, stdin);
            for i in &mut self.active()[before..] {
                if i.args_from_stdin {
                    i.piped_operands = piped.clone();
                }
                i.piped_from_url |= from_url && i.depth == depth;
            }
            let here: Vec<&Invocation> = match self.group {
                Some(g) => &self.embedded[g].invocations,
                None => &self.analysis.invocations,
            }[before..]
                .iter()
                .filter(|i| i.depth == depth)
                .collect();
            let programs = here.iter().map(|i| i.program.clone()).collect();
            let listed = listed_paths(&here);
            // `echo 'cmd' | sh`: the shell runs the text printed before it;
            // `echo 'code' | python3`, the interpreter runs it as code.
            let runs_printed = here.iter().any(|i| reads_script_from_stdin(i));
            let makes_printed = here.iter().any(|i| reads_makefile_from_stdin(i));
            let interpreter = here
                .iter()
                .find(|i| interpreters::runs_stdin_script(i))
                .map(|i| i.program.clone());
            // A stage that only hands on what a pipe feeds it prints what
            // it was fed (a `cat` of a here-document prints the document).
            let hands_on = !here.is_empty()
                && here.iter().all(|i| {
                    matches!(i.stdin, Stdin::Pipe(_))
                        && passes_input_through(&i.program, i.operands().map(String::as_str))
                });
            let next_printed = if hands_on {
                printed.clone()
            } else {
                printed_text(&here)
            };
            let takes_credential = here.iter().any(|i| {
                i.args
                    .iter()
                    .any(|a| grammar::reads_credential_from_stdin(a))
            });
            // Whatever the program, one given a URL most likely prints
            // what it fetched (`GET URL | sh`, `lwp-request URL | sh`).
            let mut names_url = here
                .iter()
                .any(|i| i.args.iter().any(|a| a.contains("://")));
            let mut programs: Vec<String> = programs;
            // What fed a stage that only hands it on feeds the next one
            // (`curl URL | tee f | sh`).
            if hands_on && let Stdin::Pipe(fed) = &here[0].stdin {
                programs.splice(0..0, fed.iter().cloned());
                names_url |= from_url;
            }
            upstream = Some((programs, listed, names_url));
            if takes_credential {
                for i in &mut self.active()[previous_stage.clone()] {
                    i.output_handed_on |= i.depth == depth;
                }
            }
            previous_stage = before..self.active().len();
            match (printed.take(), interpreter) {
                (Some(text), _) if runs_printed => self.source(&text, depth + 1),
                (Some(text), _) if makes_printed => {
                    self.source(&make::recipes(&text).join("\n"), depth + 1)
                }
                (Some(text), Some(program)) => {
                    self.inline_code(&program, InlineCode::Text(text), depth)
                }
                _ => {}
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
        if redirected && self.active().len() < MAX_INVOCATIONS {
            self.push(holder);
        }
    }

    fn compound(&mut self, compound: &CompoundCommand, depth: usize) {
        match compound {
            CompoundCommand::BraceGroup(g) => self.list(&g.list, depth),
            CompoundCommand::Subshell(s) => self.list(&s.list, depth),
            CompoundCommand::ForClause(f) => {
                let values: Vec<Word> = f
                    .values
                    .iter()
                    .flatten()
                    .map(|w| self.word(&w.value, depth))
                    .collect();
                let values = self.statics.resolve(values);
                let known = f.values.is_some()
                    && values.len() <= MAX_LOOP_VALUES
                    && values.iter().all(|w| !w.dynamic);
                if known {
                    // Each value is a different program or argument: the
                    // body is judged once with each.
                    for value in values {
                        self.statics.assign(&f.variable_name, Some(vec![value]));
                        self.list(&f.body.list, depth);
                    }
                } else {
                    self.statics.assign(&f.variable_name, None);
                    self.list(&f.body.list, depth);
                }
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
        // The word parser is not ours either: a panic fails the command closed.
        let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            word::decode(raw, &self.options)
        }));
        match decoded {
            Ok(Ok(mut w)) => {
                let before = self.active().len();
                let outer = std::mem::replace(&mut self.capturing, true);
                for sub in &w.substitutions {
                    self.source(sub, depth + 1);
                }
                self.capturing = outer;
                if let Some(printed) = self.static_substitution(&w, before) {
                    w = printed;
                }
                w.shell_setup = self.prints_setup(&w, before);
                return w;
            }
            Ok(Err(e)) => self.fail(format!("cannot read word `{}`: {e}", excerpt(raw))),
            Err(_) => self.exceed(format!("the word parser failed on `{}`", excerpt(raw))),
        }
        Word {
            text: raw.to_string(),
            dynamic: true,
            ..Word::default()
        }
    }

    /// A word that is one substitution of a lone `echo` or `printf` of
    /// static words (`$(echo ~/.ssh/id_rsa)`) is what they print.
    fn static_substitution(&mut self, word: &Word, before: usize) -> Option<Word> {
        if word.text != "$(...)" || word.substitutions.len() != 1 {
            return None;
        }
        let ran = &self.active()[before..];
        let [only] = ran else { return None };
        let text = printed_text(&[only])?;
        let text = text.trim().to_string();
        (!text.contains(char::is_whitespace)).then(|| Word::path(text))
    }

    /// Whether a word is the output of one tool printing its own shell
    /// set-up (`$(pyenv init -)`), the invocations from `before` being
    /// what its substitution ran.
    fn prints_setup(&mut self, word: &Word, before: usize) -> bool {
        if word.text != "$(...)" || word.substitutions.len() != 1 {
            return false;
        }
        let [only] = &self.active()[before..] else {
            return false;
        };
        !only.dynamic_program && prints_own_setup(&only.program, &only.args)
    }

    fn simple(&mut self, simple: &SimpleCommand, depth: usize, stdin: Option<Stdin>) {
        let first = self.active().len();
        let mut invocation = Invocation {
            depth,
            stdin: stdin.unwrap_or_default(),
            ..Invocation::default()
        };
        let mut words: Vec<Word> = Vec::new();
        let mut assigned = Assignments::default();
        let items = simple.prefix.iter().flat_map(|p| &p.0);
        let head = simple.word_or_name.iter();
        let suffix = simple.suffix.iter().flat_map(|s| &s.0);
        for item in items {
            self.item(
                item,
                depth,
                &mut invocation,
                &mut words,
                Some(&mut assigned),
            );
        }
        for w in head {
            words.push(self.word(&w.value, depth));
        }
        for item in suffix {
            self.item(item, depth, &mut invocation, &mut words, None);
        }
        if words.is_empty() {
            // `X=value` alone sets a variable for the rest of the command.
            for (name, value) in std::mem::take(&mut assigned.values) {
                self.statics.assign(&name, value);
            }
            // `PAGER='cmd'` alone sets a variable a later program may run.
            self.commands_in_arguments("", &[], &assigned.words, None, &[], &[], depth);
            if invocation.writes.is_empty() && !matches!(invocation.stdin, Stdin::File(_)) {
                return;
            }
            // A bare redirection (`> FILE`) runs the null command.
            words.push(Word {
                text: ":".into(),
                ..Word::default()
            });
        }
        invocation.substituted = first..self.active().len();
        let words = self.statics.resolve(program_braces_expanded(words));
        self.statics.after(&words);
        self.record(invocation, words, &assigned.words);
    }

    /// The static value of an assignment (`X=value`, `X=(a b)`); `None`
    /// when it is not known or appends to the old one.
    fn assigned_value(&self, assignment: &Assignment) -> Option<Vec<Word>> {
        if assignment.append {
            return None;
        }
        let decode = |raw: &str| word::decode(raw, &self.options).ok();
        match &assignment.value {
            AssignmentValue::Scalar(w) => StaticValues::scalar(&decode(&w.value)?),
            AssignmentValue::Array(elements) => {
                let words: Option<Vec<Word>> = elements
                    .iter()
                    .map(|(index, w)| index.is_none().then(|| decode(&w.value)).flatten())
                    .collect();
                StaticValues::array(words?)
            }
        }
    }

    /// One word, assignment, redirection or process substitution of a
    /// simple command; `assigned` collects the assignments of its prefix.
    fn item(
        &mut self,
        item: &CommandPrefixOrSuffixItem,
        depth: usize,
        invocation: &mut Invocation,
        words: &mut Vec<Word>,
        assigned: Option<&mut Assignments>,
    ) {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(r) => self.redirect(r, depth, invocation),
            CommandPrefixOrSuffixItem::Word(w) => words.push(self.word(&w.value, depth)),
            CommandPrefixOrSuffixItem::AssignmentWord(assignment, raw) => {
                // `X=y cmd` sets a variable; after the program it is just an argument.
                let w = self.word(&raw.value, depth);
                match assigned {
                    Some(assigned) => {
                        let name = match &assignment.name {
                            AssignmentName::VariableName(name)
                            | AssignmentName::ArrayElementName(name, _) => name.clone(),
                        };
                        let value = self.assigned_value(assignment);
                        assigned.values.push((name.clone(), value));
                        invocation.assignments.push(name);
                        assigned.words.push(w);
                    }
                    None => words.push(w),
                }
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                let before = self.active().len();
                self.list(&sub.list, depth + 1);
                if self.group.is_none() {
                    self.analysis.nested = true;
                }
                // `source <(echo 'CMD')` runs what the substitution prints.
                let sourced = words.first().is_some_and(|w| {
                    matches!(w.text.as_str(), "source" | ".")
                        || Role::Shell.includes(basename(&w.text))
                });
                let printed = {
                    let stage: Vec<&Invocation> = self.active()[before..].iter().collect();
                    printed_text(&stage)
                };
                if let Some(script) = printed.filter(|_| sourced) {
                    self.source(&script, depth + 1);
                }
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

    fn programs_since(&mut self, start: usize) -> Vec<String> {
        self.active()[start..]
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
                                || path.text.bytes().all(|b| b.is_ascii_digit()) =>
                        {
                            invocation.extra_descriptors |= beyond_standard(&path);
                        }
                        IoFileRedirectKind::DuplicateInput => {
                            invocation.stdin = Stdin::File(path.text)
                        }
                        _ => invocation.writes.push(path),
                    }
                }
                IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                    let before = self.active().len();
                    self.list(&sub.list, depth + 1);
                    if self.group.is_none() {
                        self.analysis.nested = true;
                    }
                    if matches!(kind, IoFileRedirectKind::Read) {
                        invocation.stdin = Stdin::Pipe(self.programs_since(before));
                    }
                }
                // `>&2` duplicates a descriptor; `>& FILE` writes FILE.
                IoFileRedirectTarget::Duplicate(w) => {
                    let target = self.word(&w.value, depth);
                    invocation.extra_descriptors |= beyond_standard(&target);
                    let descriptor = target.text.trim_end_matches('-');
                    if !descriptor.bytes().all(|b| b.is_ascii_digit()) && !target.dynamic {
                        match kind {
                            IoFileRedirectKind::DuplicateInput => {
                                invocation.stdin = Stdin::File(target.text)
                            }
                            _ => invocation.writes.push(target),
                        }
                    }
                }
                IoFileRedirectTarget::Fd(fd) => invocation.extra_descriptors |= *fd > 2,
            },
            IoRedirect::HereDocument(_, doc) => {
                invocation.stdin = Stdin::Text(strip_heredoc(&doc.doc.value));
            }
            IoRedirect::HereString(_, w) => {
                let value = self.word(&w.value, depth);
                invocation.stdin = Stdin::Text(value.text);
                invocation.stdin_variables = value.variables;
            }
            IoRedirect::OutputAndError(w, _) => {
                let path = self.word(&w.value, depth);
                invocation.writes.push(path);
            }
        }
    }

    /// Records a simple command, and walks what it runs: the commands of its
    /// wrappers (`find -exec`), its nested shell, its inline code, and the
    /// commands its arguments and `assigned` variables may carry.
    fn record(&mut self, invocation: Invocation, words: Vec<Word>, assigned: &[Word]) {
        let Some(recorded) = self.record_runs(invocation, &words) else {
            return;
        };
        // An option where the program should be means a wrapper's option
        // was read as taking the program as its value (`setsid -f rm`):
        // what it runs may start anywhere in the words.
        // Operands that are data start no command; the program alone
        // gives no place to start one.
        let argv: &[Word] = if recorded.program.starts_with('-') {
            &words
        } else if recorded.operands_are_data {
            &recorded.argv[..recorded.argv.len().min(1)]
        } else {
            &recorded.argv
        };
        self.commands_in_arguments(
            &recorded.program,
            &words,
            assigned,
            recorded.stdin.as_deref(),
            argv,
            &recorded.analysed,
            recorded.depth,
        );
    }

    /// Records one simple command and what its wrappers, nested shell and
    /// inline code run; returns what its arguments are then read with.
    fn record_runs<'w>(
        &mut self,
        mut invocation: Invocation,
        words: &'w [Word],
    ) -> Option<Recorded<'w>> {
        if self.active().len() >= MAX_INVOCATIONS {
            self.exceed(format!("more than {MAX_INVOCATIONS} commands"));
            return None;
        }
        invocation.phantom = self.group.is_some();
        let unwrapped = wrappers::unwrap(words);
        if let Some(why) = unwrapped.too_deep {
            self.exceed(why);
            return None;
        }
        invocation.wrappers = unwrapped.wrappers;
        invocation.privileged = unwrapped.privileged;
        invocation.assignments.extend(unwrapped.assignments);
        let depth = invocation.depth;
        let Some(program) = unwrapped.argv.first() else {
            // A wrapper with nothing to run (`sudo -v`, `env`): keep the wrapper itself.
            invocation.program = basename(&words[0].text).to_string();
            invocation.args = words[1..].iter().map(|w| w.text.clone()).collect();
            let program = invocation.program.clone();
            self.push(invocation);
            return Some(Recorded {
                program,
                argv: Cow::Borrowed(&[]),
                operands_are_data: false,
                analysed: Vec::new(),
                stdin: None,
                depth,
            });
        };
        invocation.dynamic_program = program.dynamic || evaluates_unknown_code(&unwrapped.argv);
        invocation.args_from_stdin = invocation.wrappers.iter().any(|w| w == "xargs");
        invocation.path = program.text.clone();
        invocation.program = basename(&program.text).to_string();
        invocation.args = unwrapped.argv[1..].iter().map(|w| w.text.clone()).collect();
        invocation.arg_words = unwrapped.argv[1..].to_vec();
        let mut analysed = Vec::new();
        let written_run = self
            .written
            .run_by(&invocation)
            .map(|(runner, text)| (runner, text.to_string()));
        if let Some((Runner::Statements, text)) = &written_run {
            invocation.scripts.push(text.clone());
        }
        self.written.record(&invocation);
        let children = self.wrapped_children(&invocation, unwrapped.also_runs);
        let nested = self.nested_source(&invocation);
        let inline = interpreters::inline_code(&invocation, None);
        let program = invocation.program.clone();
        let operands_are_data = invocation
            .git_subcommand()
            .is_some_and(|(sub, _)| GIT_DATA_SUBCOMMANDS.contains(&sub));
        let stdin = match &invocation.stdin {
            Stdin::Text(text) => Some(text.clone()),
            _ => None,
        };
        for child in children {
            let nested = self.nested_source(&child);
            self.push(child);
            if let Some(source) = nested {
                self.source(&source, depth + 1);
                analysed.push(source);
            }
        }
        self.push(invocation);
        if let Some(source) = nested {
            self.source(&source, depth + 1);
            analysed.push(source);
        }
        if let Some(inline) = inline {
            if let InlineCode::Text(code) = &inline {
                analysed.push(code.clone());
            }
            self.inline_code(&program, inline, depth);
        }
        match written_run {
            Some((Runner::Shell, text)) => {
                self.source(&text, depth + 1);
                analysed.push(text);
            }
            Some((Runner::Code(interpreter), text)) => {
                self.inline_code(&interpreter, InlineCode::Text(text.clone()), depth);
                analysed.push(text);
            }
            _ => {}
        }
        Some(Recorded {
            program,
            argv: unwrapped.argv,
            operands_are_data,
            analysed,
            stdin,
            depth,
        })
    }

    /// The commands a wrapper runs itself (`find -exec CMD`), each as an
    /// invocation of its own; `{}` stands for what find finds.
    fn wrapped_children(&self, invocation: &Invocation, runs: Vec<Vec<Word>>) -> Vec<Invocation> {
        let found = listed_paths(&[invocation]);
        let mut children = Vec::new();
        for run in runs {
            let extra: Vec<Word> = run
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
            children.push(Invocation {
                depth: invocation.depth,
                privileged: invocation.privileged,
                phantom: invocation.phantom,
                wrappers: vec![invocation.program.clone()],
                program: basename(&extra[0].text).to_string(),
                path: extra[0].text.clone(),
                dynamic_program: extra[0].dynamic,
                args: extra[1..].iter().map(|w| w.text.clone()).collect(),
                arg_words: extra[1..].to_vec(),
                args_from_stdin: invocation.program == "xargs",
                stdin: invocation.stdin.clone(),
                ..Invocation::default()
            });
        }
        children
    }

    /// Inline code an interpreter runs: recorded for the facts layer, and
    /// the commands it carries walked as what it runs.
    pub(super) fn inline_code(&mut self, program: &str, inline: InlineCode, depth: usize) {
        let origin = match self.group {
            Some(g) => format!("{}: ", self.embedded[g].origin),
            None => String::new(),
        };
        let commands = match &inline {
            InlineCode::Text(code) => interpreters::commands_in_code(program, code),
            InlineCode::Unread(_) => Vec::new(),
        };
        self.inline.push(InlineRun {
            origin,
            program: program.to_string(),
            code: inline,
        });
        for command in commands {
            let origin = format!("`{program}` code runs `{}`", excerpt(&command));
            self.in_group(origin, |w| w.source(&command, depth + 1));
        }
    }

    /// The commands a simple command's arguments may carry (see
    /// [`embedded`]): the rest of its argument vector from each place a
    /// command may start, and every candidate inside its words and the
    /// variables assigned for it. Texts in `analysed` were already walked as
    /// what the command runs.
    #[allow(clippy::too_many_arguments)]
    fn commands_in_arguments(
        &mut self,
        program: &str,
        words: &[Word],
        assigned: &[Word],
        stdin: Option<&str>,
        argv: &[Word],
        analysed: &[String],
        depth: usize,
    ) {
        let prints_only = runs_no_arguments(program);
        let starts = if prints_only {
            Vec::new()
        } else {
            embedded::command_starts(argv, names_files(program))
        };
        if !starts.is_empty() {
            // The commands its argument vector may hold from each start,
            // read as one group.
            let origin = format!("`{program}` runs part of its arguments");
            self.in_group(origin, |w| {
                for k in starts {
                    let start = Invocation {
                        depth: depth + 1,
                        ..Invocation::default()
                    };
                    w.record_runs(start, &argv[k..]);
                }
            });
        }
        let stdin = stdin.filter(|_| !prints_only);
        let texts = words
            .iter()
            .filter(|_| !prints_only)
            .chain(assigned)
            .map(|w| w.text.as_str())
            .chain(stdin);
        for text in texts {
            if analysed.iter().any(|a| a == text) {
                continue;
            }
            for candidate in embedded::candidates(text) {
                if analysed.iter().any(|a| a == candidate) {
                    continue;
                }
                let origin = format!(
                    "`{program}` argument `{}` runs as a command",
                    excerpt(candidate)
                );
                self.in_group(origin, |w| w.source(candidate, depth + 1));
            }
        }
    }

    /// The command text a shell, `eval` or a here-document runs, if any.
    fn nested_source(&self, invocation: &Invocation) -> Option<String> {
        let program = invocation.program.as_str();
        if reads_makefile_from_stdin(invocation) {
            return match &invocation.stdin {
                Stdin::Text(body) => Some(make::recipes(body).join("\n")),
                _ => None,
            };
        }
        if program == "eval" {
            // A tool's own set-up code is judged by what the tool is.
            if invocation.arg_words.iter().all(|w| w.shell_setup) {
                return None;
            }
            return Some(invocation.args.join(" "));
        }
        if !Role::Shell.includes(program) {
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

/// The words with the first one's braces expanded: bash expands them
/// before it looks for the program, so `{rm,-rf,~}` runs `rm -rf ~` (and
/// a quoted one names no program that could run). Each word the expansion
/// yields is then expanded as a word of its own (`~`).
fn program_braces_expanded(mut words: Vec<Word>) -> Vec<Word> {
    let Some(first) = words.first().filter(|w| !w.dynamic && w.text.contains('{')) else {
        return words;
    };
    let (expanded, _) = word::expand_braces(first);
    if expanded.len() < 2 {
        return words;
    }
    let rest = words.split_off(1);
    expanded
        .into_iter()
        .map(|w| Word {
            home_relative: word::starts_at_home(&w.text),
            ..w
        })
        .chain(rest)
        .collect()
}

/// What a recorded simple command's arguments are read with.
struct Recorded<'w> {
    program: String,
    /// The program and its arguments, after unwrapping.
    argv: Cow<'w, [Word]>,
    /// Its operands are data to it, never a command it runs (see
    /// [`GIT_DATA_SUBCOMMANDS`]).
    operands_are_data: bool,
    /// Texts already walked as what it runs (its nested shell's script,
    /// its inline code).
    analysed: Vec<String>,
    /// The here-document or here-string it reads.
    stdin: Option<String>,
    depth: usize,
}

/// A redirection's descriptor beyond standard input, output and error
/// (`<&196`, `>&$REPLY`): one the command opened itself, often a socket.
fn beyond_standard(target: &Word) -> bool {
    let descriptor = target.text.trim_end_matches('-');
    target.dynamic || descriptor.parse::<u32>().is_ok_and(|fd| fd > 2)
}

/// `eval` of a word whose text is only known at run time (`eval "$X"`,
/// `eval "$(curl ...)"`): the code it runs cannot be known, as a dynamic
/// program cannot. Set-up code a known tool prints is not unknown.
fn evaluates_unknown_code(argv: &[Word]) -> bool {
    let Some((program, args)) = argv.split_first() else {
        return false;
    };
    program.text == "eval"
        && args.iter().any(|w| {
            w.dynamic && !w.shell_setup && (w.text.starts_with("${") || w.text.starts_with("$("))
        })
}

/// make told to read its makefile from standard input (`make -f -`).
fn reads_makefile_from_stdin(invocation: &Invocation) -> bool {
    let args = &invocation.args;
    matches!(invocation.program.as_str(), "make" | "gmake" | "bmake")
        && args.iter().enumerate().any(|(n, a)| {
            matches!(a.as_str(), "-f-" | "--file=-" | "--makefile=-")
                || matches!(a.as_str(), "-f" | "--file" | "--makefile")
                    && args.get(n + 1).is_some_and(|v| v == "-")
        })
}

/// A shell that takes its script from standard input.
fn reads_script_from_stdin(invocation: &Invocation) -> bool {
    Role::Shell.includes(&invocation.program)
        && matches!(invocation.stdin, Stdin::Pipe(_))
        && !invocation
            .args
            .iter()
            .any(|a| !a.starts_with('-') || a.contains('c'))
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
