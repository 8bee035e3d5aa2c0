//! `sondera serve --config FILE`: a TOML file whose keys are the flags of
//! `sondera serve` without their leading dashes.
//!
//! The file is a layer under the command line: a key is used only when its
//! flag was given neither on the command line nor in the environment, so
//! the precedence is flag > environment > file > default. Each value goes
//! through the flag's own parser before anything starts, so a bad value is
//! reported at its line in the file with what the flag expects; an unknown
//! key is reported with the closest real one. The file's values are then
//! handed to clap as if they had been typed, which keeps one definition of
//! every setting: the flag.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};

/// The subcommand whose flags a configuration file sets.
const SUBCOMMAND: &str = "serve";
/// Flags that are about the file itself, never set by it.
const NOT_IN_FILE: &[&str] = &["config", "print-config", "help"];

/// Where one setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    Flag,
    Environment(String),
    File { path: PathBuf, line: usize },
    Default,
    Unset,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Flag => f.write_str("command line"),
            Origin::Environment(name) => write!(f, "environment {name}"),
            Origin::File { path, line } => write!(f, "file {}:{line}", path.display()),
            Origin::Default => f.write_str("default"),
            Origin::Unset => f.write_str("unset"),
        }
    }
}

/// A problem in a configuration file, with where it is and how to fix it,
/// rendered with the line it is on.
#[derive(Debug)]
pub(crate) struct ConfigError {
    rendered: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rendered.trim_end())
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    fn at(
        path: &Path,
        text: &str,
        span: std::ops::Range<usize>,
        what: String,
        help: String,
    ) -> Self {
        let (line, column) = line_and_column(text, span.start);
        let headline = format!("{}:{line}:{column}: {what}", path.display());
        let diagnostic = miette::MietteDiagnostic::new(headline)
            .with_label(miette::LabeledSpan::underline(span))
            .with_help(help);
        let report = miette::Report::new(diagnostic).with_source_code(text.to_string());
        // Without colours: it is printed at start and logged on SIGHUP.
        let handler =
            miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
                .with_links(false)
                .with_context_lines(1);
        let mut rendered = String::new();
        let _ = handler.render_report(&mut rendered, report.as_ref());
        Self { rendered }
    }

    fn whole(path: &Path, what: String) -> Self {
        Self {
            rendered: format!("{}: {what}", path.display()),
        }
    }
}

/// 1-based line and column of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// The command line of a run, with a configuration file's settings merged
/// in: what was typed, and which flags the file supplied.
#[derive(Debug, Clone, Default)]
pub(crate) struct Layered {
    typed: Vec<OsString>,
    from_file: BTreeMap<String, usize>,
    file: Option<PathBuf>,
}

/// The parsed command line and how it was put together.
pub(crate) struct Parsed {
    pub matches: ArgMatches,
    pub layered: Layered,
}

/// Parses `argv` with `command`, adding the settings of the configuration
/// file that `serve --config` (or `SONDERA_CONFIG`) names. Clap's own
/// errors (a bad flag) are returned as they are, for clap to print.
pub(crate) fn parse(command: &Command, argv: Vec<OsString>) -> Result<Parsed, ParseError> {
    let matches = command
        .clone()
        .try_get_matches_from(&argv)
        .map_err(ParseError::Clap)?;
    let Some(serve) = matches.subcommand_matches(SUBCOMMAND) else {
        return Ok(Parsed {
            matches,
            layered: Layered {
                typed: argv,
                ..Layered::default()
            },
        });
    };
    let Some(file) = serve.get_one::<PathBuf>("config").cloned() else {
        return Ok(Parsed {
            matches,
            layered: Layered {
                typed: argv,
                ..Layered::default()
            },
        });
    };
    let subcommand = subcommand(command);
    let settings = read_settings(&file, subcommand)?;
    let mut merged = argv.clone();
    let mut from_file = BTreeMap::new();
    for setting in settings {
        let id = setting.arg.get_id().as_str();
        if matches!(
            serve.value_source(id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        ) {
            continue;
        }
        merged.extend(setting.words);
        from_file.insert(id.to_string(), setting.line);
    }
    let matches = command
        .clone()
        .try_get_matches_from(&merged)
        .map_err(|e| ParseError::Merged(file.clone(), e))?;
    Ok(Parsed {
        matches,
        layered: Layered {
            typed: argv,
            from_file,
            file: Some(file),
        },
    })
}

/// Why a command line could not be parsed.
#[derive(Debug)]
pub(crate) enum ParseError {
    /// The command line itself: clap prints it (and handles --help).
    Clap(clap::Error),
    /// The configuration file.
    Config(ConfigError),
    /// The file's settings together with the command line's.
    Merged(PathBuf, clap::Error),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Clap(e) => f.write_str(&first_line(e)),
            ParseError::Config(e) => e.fmt(f),
            ParseError::Merged(file, e) => {
                write!(
                    f,
                    "with the settings of {}: {}",
                    file.display(),
                    first_line(e)
                )
            }
        }
    }
}

impl From<ConfigError> for ParseError {
    fn from(error: ConfigError) -> Self {
        ParseError::Config(error)
    }
}

impl Layered {
    /// Parses the same command line again with the file as it is now (for
    /// SIGHUP): environment variables are read again too.
    pub(crate) fn reparse(&self, command: &Command) -> Result<Parsed, ParseError> {
        parse(command, self.typed.clone())
    }

    /// Where `arg`'s value came from in `matches` (the serve subcommand's).
    pub(crate) fn origin(&self, matches: &ArgMatches, arg: &Arg) -> Origin {
        let id = arg.get_id().as_str();
        match matches.value_source(id) {
            Some(ValueSource::CommandLine) => match (self.from_file.get(id), &self.file) {
                (Some(&line), Some(path)) => Origin::File {
                    path: path.clone(),
                    line,
                },
                _ => Origin::Flag,
            },
            Some(ValueSource::EnvVariable) => Origin::Environment(
                arg.get_env()
                    .map(|e| e.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            ),
            Some(ValueSource::DefaultValue) => Origin::Default,
            _ => Origin::Unset,
        }
    }
}

/// The `serve` subcommand of `command`.
pub(crate) fn subcommand(command: &Command) -> &Command {
    command
        .find_subcommand(SUBCOMMAND)
        .expect("the command line has a serve subcommand")
}

/// The flags a configuration file may set, by key.
pub(crate) fn settable(subcommand: &Command) -> impl Iterator<Item = (&str, &Arg)> {
    subcommand.get_arguments().filter_map(|arg| {
        let key = arg.get_long()?;
        (!NOT_IN_FILE.contains(&key)).then_some((key, arg))
    })
}

/// One key of the file, checked: the words that set it on a command line.
struct Setting<'c> {
    arg: &'c Arg,
    line: usize,
    words: Vec<OsString>,
}

type Spanned<T> = toml::Spanned<T>;

fn read_settings<'c>(
    path: &Path,
    subcommand: &'c Command,
) -> Result<Vec<Setting<'c>>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConfigError::whole(path, format!("cannot read the configuration file: {e}"))
    })?;
    let table: BTreeMap<Spanned<String>, Spanned<toml::Value>> =
        toml::from_str(&text).map_err(|e| match e.span() {
            Some(span) => ConfigError::at(
                path,
                &text,
                span,
                format!("not valid TOML: {}", e.message()),
                "write one `key = value` per line; strings in double quotes".into(),
            ),
            None => ConfigError::whole(path, format!("not valid TOML: {}", e.message())),
        })?;
    let settable: BTreeMap<&str, &Arg> = settable(subcommand).collect();
    let mut settings = Vec::with_capacity(table.len());
    for (key, value) in &table {
        let Some(&arg) = settable.get(key.get_ref().as_str()) else {
            let section = matches!(value.get_ref(), toml::Value::Table(_));
            return Err(unknown_key(path, &text, key, section, &settable));
        };
        let words = words(subcommand, arg, key.get_ref(), value)
            .map_err(|(what, help)| ConfigError::at(path, &text, value.span(), what, help))?;
        settings.push(Setting {
            arg,
            line: line_and_column(&text, key.span().start).0,
            words,
        });
    }
    Ok(settings)
}

fn unknown_key(
    path: &Path,
    text: &str,
    key: &Spanned<String>,
    section: bool,
    settable: &BTreeMap<&str, &Arg>,
) -> ConfigError {
    let name = key.get_ref();
    let wanted = name.replace('_', "-");
    let closest = settable
        .keys()
        .map(|k| (strsim::jaro_winkler(&wanted, k), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let help = match closest {
        _ if section => "sections are not used: every key goes at the top level".into(),
        Some((_, k)) => format!("did you mean `{k}`? keys are the flags of `sondera serve --help` without their dashes"),
        None if NOT_IN_FILE.contains(&name.as_str()) => format!("`{name}` is given on the command line only"),
        None => "keys are the flags of `sondera serve --help` without their dashes; `sondera serve --print-config` lists them".into(),
    };
    ConfigError::at(
        path,
        text,
        key.span(),
        format!("unknown key `{name}`"),
        help,
    )
}

/// The command-line words that set `arg` to `value`, each checked by the
/// flag's parser; or what is wrong and the fix.
fn words(
    subcommand: &Command,
    arg: &Arg,
    key: &str,
    value: &Spanned<toml::Value>,
) -> Result<Vec<OsString>, (String, String)> {
    let flag = matches!(arg.get_action(), ArgAction::SetTrue);
    if flag {
        return match value.get_ref() {
            toml::Value::Boolean(true) => Ok(vec![OsString::from(format!("--{key}"))]),
            toml::Value::Boolean(false) => Ok(Vec::new()),
            other => Err((
                format!("`{key}` is a switch, not {}", kind(other)),
                format!("write `{key} = true` or `{key} = false`"),
            )),
        };
    }
    let many = matches!(arg.get_action(), ArgAction::Append);
    let values = match value.get_ref() {
        toml::Value::Array(items) if many => {
            items.iter().map(scalar).collect::<Result<Vec<_>, _>>()
        }
        toml::Value::Array(_) => Err(format!("`{key}` takes one value, not a list")),
        other => scalar(other).map(|v| vec![v]),
    }
    .map_err(|what| (what, expected(arg, key, many)))?;
    let mut words = Vec::with_capacity(values.len());
    for v in values {
        let word = OsString::from(format!("--{key}={v}"));
        if let Some(e) = value_error(subcommand, &word) {
            return Err((first_line(&e), expected(arg, key, many)));
        }
        words.push(word);
    }
    Ok(words)
}

/// Clap's complaint about the value in `word` (`--key=value`), parsed
/// alone; what it says of other flags (one this one requires) is left to
/// the parse of the whole command line.
fn value_error(subcommand: &Command, word: &OsStr) -> Option<clap::Error> {
    use clap::error::ErrorKind;
    let alone = subcommand
        .clone()
        .try_get_matches_from([OsStr::new(SUBCOMMAND), word]);
    alone.err().filter(|e| {
        matches!(
            e.kind(),
            ErrorKind::InvalidValue | ErrorKind::ValueValidation | ErrorKind::InvalidUtf8
        )
    })
}

fn scalar(value: &toml::Value) -> Result<String, String> {
    match value {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Datetime(d) => Ok(d.to_string()),
        other => Err(format!("expected a value, found {}", kind(other))),
    }
}

fn kind(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "a number",
        toml::Value::Float(_) => "a number",
        toml::Value::Boolean(_) => "true or false",
        toml::Value::Datetime(_) => "a date",
        toml::Value::Array(_) => "a list",
        toml::Value::Table(_) => "a table (sections are not used: keys go at the top level)",
    }
}

/// What `arg` takes, as the help of an error.
fn expected(arg: &Arg, key: &str, many: bool) -> String {
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    let name = arg
        .get_value_names()
        .and_then(|n| n.first())
        .map_or_else(|| "VALUE".to_string(), |n| n.to_string());
    let one = if possible.is_empty() {
        format!("{name} (see `sondera serve --help` for --{key})")
    } else {
        format!("one of {}", possible.join(", "))
    };
    if many {
        format!("`{key}` takes {one}, or a list of them")
    } else {
        format!("`{key}` takes {one}")
    }
}

/// Clap's message without its `error:` prefix and usage.
fn first_line(error: &clap::Error) -> String {
    let text = error.to_string();
    let line = text.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

/// One setting as it is in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Effective {
    pub key: String,
    /// The value as TOML, secrets redacted; `None` when unset.
    pub value: Option<String>,
    pub origin: Origin,
}

/// Every setting of `serve` (its matches) with its value and origin.
pub(crate) fn effective(
    command: &Command,
    serve: &ArgMatches,
    layered: &Layered,
) -> Vec<Effective> {
    settable(subcommand(command))
        .map(|(key, arg)| Effective {
            key: key.to_string(),
            value: rendered(serve, arg),
            origin: layered.origin(serve, arg),
        })
        .collect()
}

fn rendered(serve: &ArgMatches, arg: &Arg) -> Option<String> {
    let id = arg.get_id().as_str();
    if matches!(arg.get_action(), ArgAction::SetTrue) {
        return Some(serve.get_flag(id).to_string());
    }
    let raw: Vec<String> = serve
        .get_raw(id)?
        .map(|v| redacted(arg, &v.to_string_lossy()))
        .collect();
    let quoted: Vec<String> = raw.iter().map(|v| toml_value(v)).collect();
    Some(match arg.get_action() {
        ArgAction::Append => format!("[{}]", quoted.join(", ")),
        _ => quoted.join(" "),
    })
}

/// A value as TOML: whole numbers bare, everything else a string.
fn toml_value(value: &str) -> String {
    if !value.is_empty() && value.len() < 19 && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.to_string();
    }
    // A JSON string is a TOML basic string: the same quotes and escapes.
    serde_json::Value::String(value.to_string()).to_string()
}

/// `value` with what must not be printed taken out: every value of a flag
/// whose environment values are hidden, and the password of a URL.
fn redacted(arg: &Arg, value: &str) -> String {
    if arg.is_hide_env_values_set() {
        return "<redacted>".into();
    }
    match url_password(value) {
        Some(range) => format!("{}<redacted>{}", &value[..range.start], &value[range.end..]),
        None => value.to_string(),
    }
}

/// Where the password of `scheme://user:password@host` is.
fn url_password(value: &str) -> Option<std::ops::Range<usize>> {
    let authority_start = value.find("://")? + 3;
    let rest = &value[authority_start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..authority_end].rfind('@')?;
    let colon = rest[..at].find(':')?;
    Some(authority_start + colon + 1..authority_start + at)
}

/// The effective configuration as a TOML file that sets it again, each
/// line saying where its value came from.
pub(crate) fn print(settings: &[Effective]) -> String {
    let mut out = String::from(
        "# sondera serve: the configuration in force (flag > environment > file > default)\n",
    );
    for setting in settings {
        match &setting.value {
            Some(value) => out.push_str(&format!(
                "{} = {value}  # {}\n",
                setting.key, setting.origin
            )),
            None => out.push_str(&format!("# {} is unset\n", setting.key)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_from_one() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_and_column(text, 0), (1, 1));
        assert_eq!(line_and_column(text, 6), (2, 1));
        assert_eq!(line_and_column(text, 10), (2, 4));
    }

    #[test]
    fn passwords_in_urls_are_found() {
        let url = "postgres://sondera:s3cret@db:5432/sondera";
        let range = url_password(url).expect("a password");
        assert_eq!(&url[range], "s3cret");
        assert_eq!(url_password("postgres://db/sondera"), None);
        assert_eq!(url_password("postgres://user@db/x"), None);
        assert_eq!(url_password("/var/lib/sondera"), None);
    }
}
