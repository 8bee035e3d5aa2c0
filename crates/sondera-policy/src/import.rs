//! Converting other agents' permission rules into Cedar policies over the
//! structural facts: Claude Code's `permissions` (allow / ask / deny with
//! `Tool(specifier)` rules) and Gemini CLI's policy rules (`toolName`,
//! `commandPrefix`, `decision`, `priority`).
//!
//! Shell rules match per simple command, never on the command string: a
//! prefix rule `Bash(rm:*)` matches `ls && rm -rf /` through its second
//! segment, and an allow rule only ever excuses a command that is a single
//! segment matching it, so `ls && rm -rf /` is not allowed by `Bash(ls:*)`.
//! Deny becomes a `forbid`, ask an escalating `forbid`, allow a `permit`.
//! Claude Code's order (deny, then ask, then allow) is Cedar's own; Gemini
//! CLI's priorities are kept by excusing each forbid wherever a rule of
//! higher priority with another decision matches. Rules that cannot be
//! expressed over the facts (regular expressions over arguments, wildcards
//! inside commands) are reported, not approximated.

use std::fmt::Write as _;

/// What a rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RuleDecision {
    /// The step goes ahead.
    Allow,
    /// A person decides.
    Ask,
    /// The step is refused.
    Deny,
}

/// A rule that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The rule as written.
    pub rule: String,
    /// Why it has no Cedar counterpart.
    pub reason: String,
}

/// The result of an import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// Cedar policies, ready to save next to the built-in packs.
    pub policies: String,
    /// How many rules were imported.
    pub rules: usize,
    /// The rules left out, each with the reason.
    pub unsupported: Vec<Unsupported>,
}

/// Why a file could not be read as rules at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The file is not JSON.
    #[error("not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The file is not TOML.
    #[error("not valid TOML: {0}")]
    Toml(#[from] toml::de::Error),
    /// The file parses but is not a permission configuration.
    #[error("{0}")]
    Shape(String),
}

/// What a rule matches, in terms of the facts Cedar sees.
#[derive(Debug, Clone, PartialEq)]
enum Matcher {
    /// Any shell command.
    AnyShell,
    /// A simple command starting with these words, in any segment.
    ShellPrefix(String),
    /// A simple command that is exactly this, in any segment.
    ShellExact(String),
    /// A file operation of `action` on paths `like` any of the patterns.
    File {
        action: &'static str,
        patterns: Vec<String>,
    },
    /// A web fetch, to this host when given.
    Web(Option<String>),
    /// A generic tool by name, or by name prefix ending in `*`.
    Tool(String),
}

impl Matcher {
    fn action_scope(&self) -> String {
        let action = match self {
            Self::AnyShell | Self::ShellPrefix(_) | Self::ShellExact(_) => {
                "== Sondera::Action::\"ShellCommand\""
            }
            Self::File { action, .. } => action,
            Self::Web(_) => "== Sondera::Action::\"WebFetch\"",
            Self::Tool(_) => "== Sondera::Action::\"PreToolUse\"",
        };
        format!("action {action}")
    }

    /// The condition for matching anywhere (for forbids).
    fn condition(&self) -> String {
        match self {
            Self::AnyShell | Self::Web(None) => "true".into(),
            Self::ShellPrefix(p) => {
                format!("context.shell.command_prefixes.contains({})", quote(p))
            }
            Self::ShellExact(c) => format!("context.shell.commands.contains({})", quote(c)),
            Self::File { patterns, .. } => patterns
                .iter()
                .map(|p| format!("context.path like {}", quote_like(p)))
                .collect::<Vec<_>>()
                .join(" || "),
            Self::Web(Some(host)) => format!("context.egress.hosts.contains({})", quote(host)),
            Self::Tool(name) => match name.strip_suffix('*') {
                Some(prefix) => format!("context.tool like {}", quote_like(&format!("{prefix}*"))),
                None => format!("context.tool == {}", quote(name)),
            },
        }
    }

    /// The condition for excusing a step (an allow): a shell command must
    /// be one segment, so an allowed prefix never carries a chain.
    fn excuse(&self) -> String {
        match self {
            Self::ShellPrefix(_) | Self::ShellExact(_) => {
                format!("(context.shell.segments == 1 && {})", self.condition())
            }
            _ => format!("({})", self.condition()),
        }
    }

    fn same_action(&self, other: &Self) -> bool {
        self.action_scope() == other.action_scope()
    }
}

/// One imported rule.
struct Rule {
    source: String,
    decision: RuleDecision,
    priority: i64,
    matcher: Matcher,
}

/// Cedar text for a list of rules, where each forbid is excused wherever a
/// rule of higher priority and another decision matches.
fn render(origin: &str, rules: &[Rule], unsupported: Vec<Unsupported>) -> Imported {
    let mut out = format!(
        "// Imported from {origin} by `sondera import`. Deny rules are forbids, ask rules\n\
         // escalating forbids, allow rules permits; shell rules match per simple command.\n"
    );
    for (n, rule) in rules.iter().enumerate() {
        let id = format!("imported-{}-{:03}", origin_slug(origin), n + 1);
        let (effect, escalate, severity) = match rule.decision {
            RuleDecision::Deny => ("forbid", "", "high"),
            RuleDecision::Ask => ("forbid", "@escalate(\"user\")\n", "medium"),
            RuleDecision::Allow => ("permit", "", "info"),
        };
        let decision = format!("{:?}", rule.decision).to_lowercase();
        let _ = write!(
            out,
            "\n@id({})\n@description({})\n@severity(\"{severity}\")\n{escalate}{effect} (principal, {}, resource)\nwhen {{ {} }}",
            quote(&id),
            quote(&format!("{origin}: {decision} {}", rule.source)),
            rule.matcher.action_scope(),
            rule.matcher.condition(),
        );
        if rule.decision != RuleDecision::Allow {
            let excuses: Vec<String> = rules
                .iter()
                .filter(|other| {
                    other.decision != rule.decision
                        && other.decision < rule.decision
                        && other.priority > rule.priority
                        && other.matcher.same_action(&rule.matcher)
                })
                .map(|other| other.matcher.excuse())
                .collect();
            if !excuses.is_empty() {
                let _ = write!(out, "\nunless {{ {} }}", excuses.join(" || "));
            }
        }
        out.push_str(";\n");
    }
    Imported {
        policies: out,
        rules: rules.len(),
        unsupported,
    }
}

fn origin_slug(origin: &str) -> String {
    origin
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

fn quote(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

/// A `like` pattern: `*` stays a wildcard, everything else is literal.
fn quote_like(pattern: &str) -> String {
    let escaped: String = pattern
        .chars()
        .map(|c| match c {
            '"' => "\\\"".to_string(),
            '\\' => "\\\\".to_string(),
            c => c.to_string(),
        })
        .collect();
    format!("\"{escaped}\"")
}

/// Words of a command, single-spaced; `None` when a word is too many for
/// prefix facts.
fn prefix_words(prefix: &str) -> Option<String> {
    let words: Vec<&str> = prefix.split_whitespace().collect();
    (!words.is_empty() && words.len() <= crate::MAX_PREFIX_WORDS).then(|| words.join(" "))
}

// ---------------------------------------------------------------- Claude Code

/// Converts a Claude Code settings file (`permissions.allow`, `.ask`,
/// `.deny`: `Bash(npm run test:*)`, `Read(./.env)`, `WebFetch(domain:x)`,
/// `mcp__server__tool`).
pub fn import_claude_code(settings: &str) -> Result<Imported, ImportError> {
    let json: serde_json::Value = serde_json::from_str(settings)?;
    let permissions = json
        .get("permissions")
        .filter(|p| p.is_object())
        .ok_or_else(|| ImportError::Shape("no `permissions` object".into()))?;
    let mut rules = Vec::new();
    let mut unsupported = Vec::new();
    for (key, decision) in [
        ("deny", RuleDecision::Deny),
        ("ask", RuleDecision::Ask),
        ("allow", RuleDecision::Allow),
    ] {
        let Some(list) = permissions.get(key) else {
            continue;
        };
        let list = list
            .as_array()
            .ok_or_else(|| ImportError::Shape(format!("`permissions.{key}` is not a list")))?;
        for entry in list {
            let Some(text) = entry.as_str() else {
                return Err(ImportError::Shape(format!(
                    "`permissions.{key}` holds a non-string: {entry}"
                )));
            };
            match claude_matcher(text) {
                Ok(matcher) => rules.push(Rule {
                    source: text.to_string(),
                    decision,
                    priority: 0,
                    matcher,
                }),
                Err(reason) => unsupported.push(Unsupported {
                    rule: format!("{key}: {text}"),
                    reason,
                }),
            }
        }
    }
    Ok(render("Claude Code", &rules, unsupported))
}

fn claude_matcher(rule: &str) -> Result<Matcher, String> {
    let (tool, specifier) = match rule.split_once('(') {
        Some((tool, rest)) => (
            tool.trim(),
            Some(
                rest.strip_suffix(')')
                    .ok_or("unbalanced parentheses")?
                    .trim(),
            ),
        ),
        None => (rule.trim(), None),
    };
    match (tool, specifier) {
        ("Bash", None | Some("") | Some("*")) => Ok(Matcher::AnyShell),
        ("Bash", Some(spec)) => claude_shell(spec),
        ("Read", Some(path)) => Ok(file(READ, path)),
        ("Edit" | "Write" | "MultiEdit" | "NotebookEdit", Some(path)) => Ok(file(MUTATE, path)),
        ("Read", None) => Ok(file(READ, "**")),
        ("Edit" | "Write" | "MultiEdit", None) => Ok(file(MUTATE, "**")),
        ("WebFetch", None) => Ok(Matcher::Web(None)),
        ("WebFetch", Some(spec)) => match spec.strip_prefix("domain:") {
            Some(host) if !host.contains('*') => Ok(Matcher::Web(Some(host.to_ascii_lowercase()))),
            _ => Err("only `domain:HOST` web rules can be expressed".into()),
        },
        (name, None) if name.starts_with("mcp__") => {
            let parts = name.split("__").count();
            Ok(Matcher::Tool(if parts >= 3 {
                name.to_string()
            } else {
                format!("{name}__*")
            }))
        }
        (name, None) => Ok(Matcher::Tool(name.to_string())),
        (_, Some(_)) => Err("only Bash, Read, Edit, Write and WebFetch take a specifier".into()),
    }
}

/// `npm run build` (exact), `npm run test:*` and `git push *` (prefix).
fn claude_shell(spec: &str) -> Result<Matcher, String> {
    let prefix = spec
        .strip_suffix(":*")
        .or_else(|| spec.strip_suffix(" *"))
        .or_else(|| spec.strip_suffix('*').filter(|p| p.ends_with(' ')));
    match prefix {
        Some(prefix) if !prefix.contains('*') => prefix_words(prefix)
            .map(Matcher::ShellPrefix)
            .ok_or_else(|| "a prefix of more than six words".into()),
        _ if spec.contains('*') => {
            Err("a wildcard inside a command cannot be matched per segment".into())
        }
        _ => Ok(Matcher::ShellExact(
            spec.split_whitespace().collect::<Vec<_>>().join(" "),
        )),
    }
}

const READ: &str = "== Sondera::Action::\"FileRead\"";
const MUTATE: &str = "in Sondera::Action::\"FileMutation\"";

/// A gitignore-style path as `like` patterns over the path a tool is given:
/// `//x` absolute, `~/x` under any home, `./x` or `x` relative to the
/// project (so the path ends with it, or is it), `**` any depth.
fn file(action: &'static str, path: &str) -> Matcher {
    let path = path.replace("**", "*");
    let patterns = if let Some(absolute) = path.strip_prefix("//") {
        vec![format!("/{absolute}")]
    } else if path.starts_with('/') {
        vec![path]
    } else if let Some(rest) = path.strip_prefix("~/") {
        ["~/", "/home/*/", "/root/", "/Users/*/"]
            .iter()
            .map(|home| format!("{home}{rest}"))
            .collect()
    } else {
        let relative = path.strip_prefix("./").unwrap_or(&path).to_string();
        vec![format!("*/{relative}"), relative]
    };
    Matcher::File { action, patterns }
}

// ----------------------------------------------------------------- Gemini CLI

#[derive(serde::Deserialize)]
struct GeminiPolicy {
    #[serde(default, rename = "rule")]
    rules: Vec<GeminiRule>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiRule {
    tool_name: Option<String>,
    command_prefix: Option<OneOrMany>,
    command_regex: Option<String>,
    args_pattern: Option<String>,
    decision: String,
    #[serde(default)]
    priority: i64,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// Converts a Gemini CLI policy file (`[[rule]]` tables with `toolName`,
/// `commandPrefix`, `commandRegex`, `argsPattern`, `decision` allow / deny /
/// ask_user and `priority`, higher first).
pub fn import_gemini_cli(policy: &str) -> Result<Imported, ImportError> {
    let parsed: GeminiPolicy = toml::from_str(policy)?;
    let mut rules = Vec::new();
    let mut unsupported = Vec::new();
    for (n, rule) in parsed.rules.iter().enumerate() {
        let label = format!(
            "rule {} ({} {})",
            n + 1,
            rule.decision,
            rule.tool_name.as_deref().unwrap_or("*")
        );
        let decision = match rule.decision.as_str() {
            "allow" => RuleDecision::Allow,
            "deny" => RuleDecision::Deny,
            "ask_user" | "ask" => RuleDecision::Ask,
            other => {
                return Err(ImportError::Shape(format!(
                    "{label}: unknown decision `{other}` (allow, deny or ask_user)"
                )));
            }
        };
        match gemini_matchers(rule) {
            Ok(matchers) => rules.extend(matchers.into_iter().map(|(source, matcher)| Rule {
                source,
                decision,
                priority: rule.priority,
                matcher,
            })),
            Err(reason) => unsupported.push(Unsupported {
                rule: label,
                reason,
            }),
        }
    }
    // Highest priority first, and at equal priority deny before ask before allow.
    rules.sort_by(|a, b| {
        b.priority
            .cmp(&a.priority)
            .then(b.decision.cmp(&a.decision))
    });
    Ok(render("Gemini CLI", &rules, unsupported))
}

fn gemini_matchers(rule: &GeminiRule) -> Result<Vec<(String, Matcher)>, String> {
    if rule.args_pattern.is_some() {
        return Err("argsPattern is a regular expression over the arguments' JSON, which policies cannot evaluate".into());
    }
    let tool = rule.tool_name.as_deref().unwrap_or("*");
    let shell = tool == "run_shell_command";
    if !shell && (rule.command_prefix.is_some() || rule.command_regex.is_some()) {
        return Err("commandPrefix and commandRegex only apply to run_shell_command".into());
    }
    if shell {
        let mut prefixes: Vec<String> = match &rule.command_prefix {
            Some(OneOrMany::One(p)) => vec![p.clone()],
            Some(OneOrMany::Many(ps)) => ps.clone(),
            None => Vec::new(),
        };
        if let Some(regex) = &rule.command_regex {
            prefixes.push(literal_prefix(regex).ok_or_else(|| {
                format!("commandRegex `{regex}` is not a plain anchored prefix, so it cannot be matched per segment")
            })?);
        }
        if prefixes.is_empty() {
            return Ok(vec![("run_shell_command".into(), Matcher::AnyShell)]);
        }
        return prefixes
            .iter()
            .map(|p| {
                prefix_words(p)
                    .map(|words| {
                        (
                            format!("run_shell_command `{words}`"),
                            Matcher::ShellPrefix(words),
                        )
                    })
                    .ok_or_else(|| format!("commandPrefix `{p}` is empty or longer than six words"))
            })
            .collect();
    }
    let matcher = match tool {
        "*" => {
            return Err(
                "a rule for every tool is what the built-in packs' default already is".into(),
            );
        }
        "read_file" => file(READ, "**"),
        "write_file" | "replace" => file(MUTATE, "**"),
        "web_fetch" => Matcher::Web(None),
        name => Matcher::Tool(name.to_string()),
    };
    Ok(vec![(tool.to_string(), matcher)])
}

/// The command prefix a regular expression of the form `^git\s+push` (plain
/// words, `\s+` or spaces between them, optionally `\b` or `(\s|$)` after)
/// stands for.
fn literal_prefix(regex: &str) -> Option<String> {
    let body = regex.strip_prefix('^')?;
    let body = body
        .trim_end_matches("(\\s|$)")
        .trim_end_matches("\\b")
        .trim_end_matches(".*");
    let words: Vec<&str> = body
        .split("\\s+")
        .flat_map(|w| w.split(' '))
        .filter(|w| !w.is_empty())
        .collect();
    // `.` and other regex syntax would not mean themselves.
    let plain = |w: &&str| {
        w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_/:=@".contains(c))
    };
    (!words.is_empty() && words.iter().all(plain)).then(|| words.join(" "))
}
