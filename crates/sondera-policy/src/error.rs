use std::fmt;

/// One problem found while loading policies or schema fragments, located in
/// its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    /// The file (or embedded source) the problem is in.
    pub file: String,
    /// 1-based line and column; 0 when the problem concerns the file as a whole.
    pub line: usize,
    /// See `line`.
    pub column: usize,
    /// How many bytes from `line:column` Cedar marked; 0 for a point.
    pub span_len: u32,
    /// The policy's `@id`, when the problem is in one policy.
    pub policy_id: Option<String>,
    /// What is wrong, and how to fix it.
    pub message: String,
    /// How to fix it, when known.
    pub help: Option<String>,
}

impl PolicyError {
    /// A problem with the file `file` as a whole.
    pub(crate) fn in_file(file: &str, message: String) -> Self {
        Self {
            file: file.into(),
            line: 0,
            column: 0,
            span_len: 0,
            policy_id: None,
            message,
            help: None,
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        write!(f, ": ")?;
        if let Some(id) = &self.policy_id {
            write!(f, "policy `{id}`: ")?;
        }
        write!(f, "{}", self.message)?;
        if let Some(help) = &self.help {
            write!(f, " (help: {help})")?;
        }
        Ok(())
    }
}

/// Every problem that stopped a policy set from loading. Nothing loads
/// partially: one error anywhere rejects the whole set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct PolicyLoadErrors(pub Vec<PolicyError>);

impl fmt::Display for PolicyLoadErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        writeln!(
            f,
            "{n} problem{} in the policy set:",
            if n == 1 { "" } else { "s" }
        )?;
        for error in &self.0 {
            writeln!(f, "  {error}")?;
        }
        Ok(())
    }
}

impl PolicyLoadErrors {
    /// Every problem found, in file order.
    pub fn errors(&self) -> &[PolicyError] {
        &self.0
    }
}

/// 1-based line and column of byte `offset` in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Turns a Cedar diagnostic into located errors: one per labelled span, or
/// one for the whole file when the diagnostic has no span.
pub(crate) fn from_diagnostic(
    file: &str,
    text: &str,
    policy_id: Option<&str>,
    diagnostic: &dyn miette::Diagnostic,
) -> PolicyError {
    let span = diagnostic
        .labels()
        .and_then(|mut labels| labels.next())
        .map(|label| (label.offset(), label.len()));
    let (line, column) = span.map_or((0, 0), |(o, _)| line_column(text, o));
    PolicyError {
        span_len: span.map_or(0, |(_, len)| u32::try_from(len).unwrap_or(u32::MAX)),
        file: file.to_string(),
        line,
        column,
        policy_id: policy_id.map(str::to_string),
        message: diagnostic.to_string(),
        help: diagnostic.help().map(|h| h.to_string()),
    }
}

/// Why an event could not be adjudicated. Every one of these fails the step
/// closed: the harness turns it into a deny naming the cause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EvaluationError {
    /// A tool's arguments do not have the types its declaration gives.
    #[error(transparent)]
    Arguments(#[from] crate::args::ArgumentTypeError),
    /// Cedar refused the request built for an action.
    #[error("could not build the Cedar request for `{action}`: {message}")]
    Request {
        /// The action's name.
        action: String,
        /// Cedar's reason.
        message: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based() {
        let text = "ab\ncdé\nf";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 4), (2, 2));
        assert_eq!(line_column(text, 8), (3, 1));
        assert_eq!(line_column(text, 99), (3, 2));
    }

    #[test]
    fn display_names_file_position_and_policy() {
        let error = PolicyError {
            span_len: 0,
            file: "packs/x.cedar".into(),
            line: 3,
            column: 7,
            policy_id: Some("p1".into()),
            message: "bad".into(),
            help: Some("fix it".into()),
        };
        assert_eq!(
            error.to_string(),
            "packs/x.cedar:3:7: policy `p1`: bad (help: fix it)"
        );
    }
}
