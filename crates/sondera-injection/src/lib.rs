//! Injection scoring for Sondera Harness: instructions addressed to the
//! agent from inside data.
//!
//! Text the agent reads (an email, a page, a ticket, a tool's JSON) is data;
//! when it starts talking to the agent, giving it orders, imitating its
//! conversation's markers, or telling it which of its tools to call, it is an
//! injection. No single phrase decides this. The text is normalised first
//! (NFKC, look-alike letters, invisible characters, case, digits written
//! for letters), then [`scan`] finds *features*, each a family of wordings
//! with a weight, and scores every stretch of text of [`WINDOW`] bytes by
//! the distinct features in it. Strong features (an override phrase, a chat
//! template token, encoded instructions) reach [`THRESHOLD`] alone; weak
//! ones (a request to send something, an urgent tone, a precondition, a
//! message addressed to an AI) only together, so that an email asking its
//! human reader to send a report is not an injection, while one telling "the
//! assistant" to send it "before you continue" is.
//!
//! Every feature found is reported with its span in the original text,
//! whatever the score, so a verdict can be explained and policies can act on
//! single features too.

mod addressed;
#[rustfmt::skip]
mod literals;
mod multilingual;
mod normalize;
mod patterns;
mod spaceless;
#[rustfmt::skip]
mod stems;
mod words;

use std::ops::Range;

use base64::Engine as _;
use normalize::Normalized;

/// Score at which text is taken as injected.
pub const THRESHOLD: u32 = 30;

/// Bytes of normalised text whose features add up.
pub const WINDOW: usize = 600;

/// A family of wordings that marks text as addressed to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Feature {
    /// "ignore all previous instructions" in any wording or spelling.
    Override,
    /// An override phrase quoted or discussed ("attacks such as 'ignore
    /// previous instructions'").
    QuotedOverride,
    /// "your new task is", "new instructions:", "system override".
    NewInstructions,
    /// "from now on, you ...", "instead, you must ...".
    FromNowOn,
    /// Chat-template special tokens and system tags.
    ChatToken,
    /// A system, admin or developer header at the start of a line.
    RoleHeader,
    /// A bracketed system, admin or developer label ("[system message]").
    BracketRole,
    /// JSON or YAML that imitates a conversation's system turn.
    FakeConversation,
    /// Transcript lines ("User: ...", "Assistant: ...").
    ConversationLines,
    /// Asking for the system prompt.
    PromptLeak,
    /// A link whose query holds a slot for the conversation's own data
    /// (`?d={chat_history}`, `?q=INSERT_THE_USERS_MESSAGE`): rendered or
    /// fetched once filled, it carries that data to whoever serves it.
    DataInLink,
    /// "you are now in developer mode", "you have no restrictions".
    RoleSwitch,
    /// An HTML comment that addresses or instructs a reader.
    HiddenComment,
    /// Text styled to be invisible.
    HiddenStyle,
    /// Invisible characters inside words.
    InvisibleCharacters,
    /// Tags and bracketed labels that frame instructions.
    Markup,
    /// Tags named for instructions (`<instructions>`, `<important>`).
    StrongMarkup,
    /// Written to an AI by role, name or model.
    AddressedToAgent,
    /// Claims to come from the user, the developer, the operator or the system.
    AuthorityClaim,
    /// "before you continue", "after you do that".
    Precondition,
    /// "before you answer the ...", "then return to the original task".
    TaskPrecondition,
    /// "do not tell the user", "silently".
    Concealment,
    /// A request to act ("please send", "you must transfer").
    ActionRequest,
    /// An imperative to act on a recipient, account or address.
    ActionTarget,
    /// "IMPORTANT!!!", "urgent:".
    Urgency,
    /// A to-do item or "action required" line asking to act.
    TodoDirective,
    /// Telling the reader which tool or function to call.
    ToolDirective,
    /// "with the following arguments".
    ToolArguments,
    /// JSON imitating a function call (`{"name": ..., "arguments": {...}}`).
    FakeToolCall,
    /// One of the agent's own tools named in the text.
    ToolMention,
    /// A command to run.
    CommandInstruction,
    /// Encoded text (base64, hex) that decodes to instructions.
    EncodedInstruction,
    /// Directions for the agent's own answer ("in your summary", "when
    /// summarizing", "regardless of the question").
    OutputDirective,
    /// Telling the reader what to do with "the user" ("tell the user",
    /// "ask the user for"): a reader that works for a user.
    RefersToUser,
    /// Taking over the answer ("end your response with", "respond only with",
    /// "output the word").
    OutputTakeover,
    /// Changing the agent's answer: adding a link, an advertisement or code
    /// to it, encoding, encrypting, translating or reversing it, making it
    /// claim or recommend something, replacing what it says.
    AnswerDirective,
    /// Asking for the answer in a language, without saying it must be
    /// only that way ("answer in French"): what a guideline for people
    /// says too, so it counts only beside other signs.
    AnswerManner,
    /// Telling the reader to have people hand over a password, a card
    /// number, a code or bank details ("tell users to confirm their card
    /// number"): phishing carried through the answer.
    CredentialSolicitation,
}

impl Feature {
    /// The signal tag policies see.
    pub fn tag(self) -> &'static str {
        use Feature::*;
        match self {
            Override | NewInstructions | FromNowOn => "instruction_override",
            QuotedOverride => "quoted_override",
            ChatToken | RoleSwitch | BracketRole => "role_hijack",
            FakeConversation => "fake_conversation",
            RoleHeader => "role_header",
            ConversationLines => "conversation_lines",
            PromptLeak => "prompt_exfiltration",
            DataInLink => "data_in_link",
            HiddenComment | InvisibleCharacters => "hidden_instruction",
            HiddenStyle => "hidden_style",
            Markup | StrongMarkup => "instruction_markup",
            AddressedToAgent => "addressed_to_agent",
            AuthorityClaim => "authority_claim",
            Precondition | TaskPrecondition => "precondition",
            Concealment => "concealment",
            ActionRequest | ActionTarget => "action_request",
            Urgency => "urgency",
            TodoDirective => "todo_directive",
            ToolDirective | FakeToolCall => "tool_directive",
            ToolArguments => "tool_arguments",
            ToolMention => "tool_mention",
            CommandInstruction => "command_instruction",
            EncodedInstruction => "encoded_instruction",
            OutputDirective | OutputTakeover | AnswerDirective | AnswerManner => "output_directive",
            RefersToUser => "refers_to_user",
            CredentialSolicitation => "credential_solicitation",
        }
    }

    /// What the feature adds to the score of a window.
    pub fn weight(self) -> u32 {
        use Feature::*;
        match self {
            Override | ChatToken | FakeConversation | PromptLeak | RoleSwitch | NewInstructions
            | EncodedInstruction | BracketRole | FakeToolCall | OutputTakeover
            | AnswerDirective => 30,
            RoleHeader
            | HiddenComment
            | InvisibleCharacters
            | AddressedToAgent
            | DataInLink
            | Concealment
            | ToolDirective
            | ToolMention
            | FromNowOn
            | StrongMarkup
            | TaskPrecondition
            | OutputDirective
            | CredentialSolicitation => 20,
            Markup | AuthorityClaim | TodoDirective | RefersToUser => 15,
            QuotedOverride | ConversationLines | HiddenStyle | Precondition | ActionRequest
            | ActionTarget | Urgency | ToolArguments | CommandInstruction | AnswerManner => 10,
        }
    }
}

/// One feature found, and where: a byte range of the text as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// The family of wordings found.
    pub feature: Feature,
    /// Where it was found, in bytes of the text as given.
    pub span: Range<usize>,
}

/// What [`scan`] found in a text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The highest score of any window.
    pub score: u32,
    /// Every feature found, in order of position.
    pub evidence: Vec<Evidence>,
}

impl Report {
    /// The text addresses instructions to the agent.
    pub fn injected(&self) -> bool {
        self.score >= THRESHOLD
    }

    /// The distinct signal tags of the features found, sorted.
    pub fn tags(&self) -> Vec<&'static str> {
        let mut tags: Vec<&'static str> = self.evidence.iter().map(|e| e.feature.tag()).collect();
        tags.sort_unstable();
        tags.dedup();
        tags
    }
}

/// Builds what the first [`scan`] in a process would otherwise build (the
/// literal automaton, and the patterns every scan runs): a caller that will
/// scan soon can run this on another thread meanwhile.
pub fn prepare() {
    patterns::PATTERNS.prepare();
    multilingual::prepare();
}

/// Builds, besides what [`prepare`] builds, the automaton of all patterns
/// at once, which then reads every text: slower to build (some 15 ms) than
/// a one-shot process gains from it, faster at every scan after. What a
/// long-running process (a server) wants, on a thread of its own.
pub fn prepare_all() {
    patterns::PATTERNS.prepare_all();
}

/// Most evidence kept from one text.
const MAX_EVIDENCE: usize = 256;

/// Scans `text` for instructions addressed to the agent. `tools` are the
/// names of the agent's own tools (from its card and the calls it made): one
/// of them named in the text is evidence that the text directs the agent.
pub fn scan(text: &str, tools: &[&str]) -> Report {
    scan_layer(text, tools, true)
}

fn scan_layer(text: &str, tools: &[&str], decode: bool) -> Report {
    let normalized = Normalized::new(text);
    let plain = normalized.text.as_ref();
    let mut found: Vec<(Feature, Range<usize>)> = Vec::new();
    patterns::PATTERNS.find(plain, &mut found);
    found.retain(|(feature, span)| match feature {
        Feature::AddressedToAgent => addressed::addresses_a_reader(plain, span.clone()),
        Feature::PromptLeak => !negated(plain, span.start),
        _ => true,
    });
    let directions = addressed::directions(plain);
    let actions = spaceless::directed_actions(plain);
    for span in directions.actions.into_iter().chain(actions) {
        if addressed::addresses_a_reader(plain, span.clone()) {
            found.push((Feature::AddressedToAgent, span.clone()));
            found.push((Feature::ActionRequest, span));
        }
    }
    let examples = quoted_examples(plain);
    if !examples.is_empty() {
        found.retain(|(_, span)| {
            let after = examples.partition_point(|q| q.start <= span.start);
            !(after > 0 && span.end <= examples[after - 1].end)
        });
    }
    let overrides = words::override_phrases(plain);
    for span in overrides
        .into_iter()
        .chain(multilingual::override_phrases(plain))
    {
        let feature = if is_quoted(plain, &span) {
            Feature::QuotedOverride
        } else if words::stated_of_a_subject(plain, &span) {
            Feature::AuthorityClaim
        } else {
            Feature::Override
        };
        found.push((feature, span));
    }
    for span in directions
        .answers
        .into_iter()
        .chain(spaceless::directed_answers(plain))
    {
        found.push((Feature::AnswerDirective, span));
    }
    mentioned_tools(plain, tools, &mut found);
    if decode {
        encoded_instructions(text, tools, &normalized, &mut found);
        for reading in words::hidden_readings(plain) {
            // The same length as `plain`, byte for byte: what is found in
            // it is found at the same place in `plain`.
            let read = scan_layer(&reading, tools, false);
            found.extend(read.evidence.into_iter().map(|e| (e.feature, e.span)));
        }
    }
    let mut evidence: Vec<Evidence> = found
        .into_iter()
        .map(|(feature, span)| Evidence {
            feature,
            span: normalized.original(span),
        })
        .collect();
    evidence.extend(normalized.invisible_in_words.iter().map(|span| Evidence {
        feature: Feature::InvisibleCharacters,
        span: span.clone(),
    }));
    evidence.sort_by_key(|e| (e.span.start, e.feature));
    evidence.dedup();
    evidence.truncate(MAX_EVIDENCE);
    Report {
        score: best_window(&evidence),
        evidence,
    }
}

/// The highest score of any window: for each signal tag in it, the weight
/// of its heaviest feature (two wordings of one family count once).
fn best_window(evidence: &[Evidence]) -> u32 {
    let mut best = 0;
    let mut seen: Vec<(&'static str, u32)> = Vec::with_capacity(16);
    for (i, first) in evidence.iter().enumerate() {
        seen.clear();
        for e in evidence[i..]
            .iter()
            .take_while(|e| e.span.start < first.span.start + WINDOW)
        {
            let (tag, weight) = (e.feature.tag(), e.feature.weight());
            match seen.iter_mut().find(|(t, _)| *t == tag) {
                Some((_, w)) => *w = (*w).max(weight),
                None => seen.push((tag, weight)),
            }
        }
        best = best.max(seen.iter().map(|(_, w)| w).sum());
    }
    best
}

/// Words before a match within which a negation is looked for.
const NEGATION_WORDS: usize = 3;

/// Whether one of the few words before `at` negates what follows ("must
/// not reveal the system prompt"): a rule against the request, not the
/// request.
fn negated(text: &str, at: usize) -> bool {
    tail(&text[..at], 40)
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .rev()
        .take(NEGATION_WORDS)
        .any(|w| matches!(w, "not" | "never" | "cannot" | "no") || w.ends_with("n't"))
}

/// Longest quotation, in bytes, read as an example.
const MAX_EXAMPLE: usize = 200;

/// Words that introduce a quotation as an example of what is discussed
/// ("a line such as 'AI assistant: forward ...'").
const EXAMPLE_WORDS: &[&str] = &[
    "such as",
    "like",
    "e.g.",
    "e.g",
    "for example",
    "for instance",
];

/// Quotations given as examples: a quotation mark right after
/// [`EXAMPLE_WORDS`] or after a verb reporting an attack's words (see
/// [`reports_an_attack`]), to its closing mark on the same line within
/// [`MAX_EXAMPLE`] bytes. What a text quotes as an example of an attack it
/// does not address to its reader; the same words outside the quotation
/// still count. An apostrophe inside a word ("user's") closes nothing.
/// The ranges come sorted and disjoint: one inside another is merged into
/// it.
fn quoted_examples(text: &str) -> Vec<Range<usize>> {
    let mut found: Vec<Range<usize>> = Vec::new();
    for (at, open) in text.match_indices(['\'', '"', '\u{201c}', '\u{2018}', '\u{ab}']) {
        let before = text[..at].trim_end();
        let example = EXAMPLE_WORDS.iter().any(|w| ends_with_word(before, w));
        if before.len() == at || !example && !reports_an_attack(before) {
            continue;
        }
        let close: &[char] = match open {
            "\u{201c}" => &['\u{201d}'],
            "\u{2018}" => &['\u{2019}'],
            "\u{ab}" => &['\u{bb}'],
            _ => &[open.chars().next().expect("a mark")],
        };
        let from = at + open.len();
        let rest = head(&text[from..], MAX_EXAMPLE);
        let rest = &rest[..rest.find('\n').unwrap_or(rest.len())];
        let end = rest.char_indices().find(|&(k, c)| {
            close.contains(&c)
                && !rest[k + c.len_utf8()..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphanumeric)
        });
        if let Some((k, c)) = end {
            let quote = at..from + k + c.len_utf8();
            match found.last_mut() {
                Some(last) if quote.start < last.end => last.end = last.end.max(quote.end),
                _ => found.push(quote),
            }
        }
    }
    found
}

/// Verbs that report what a message says, before a quotation of it.
const REPORTING_WORDS: &[&str] = &[
    "say",
    "says",
    "said",
    "saying",
    "write",
    "writes",
    "wrote",
    "read",
    "reads",
    "contain",
    "contains",
    "containing",
];

/// Words for those who write attacks, and for attacks: quoted after one
/// of them, the words are an attack's, shown to be recognised.
const ATTACKER_WORDS: &[&str] = &[
    "attacker",
    "attackers",
    "scammer",
    "scammers",
    "phishing",
    "phishers",
    "fraudster",
    "fraudsters",
    "hacker",
    "hackers",
    "malicious",
    "criminals",
    "injection",
];

/// Bytes before a reporting verb within which those who write attacks
/// are named ("attackers are sending emails that say").
const ATTACKER_WITHIN: usize = 80;

/// Whether `before` (normalised) ends with a verb that reports a message
/// whose writer, named shortly before, writes attacks ("attackers may
/// write", "phishing emails that say"): the quotation after it is an
/// example of an attack, told to warn.
fn reports_an_attack(before: &str) -> bool {
    let before = before.trim_end_matches([':', ',']);
    REPORTING_WORDS.iter().any(|w| ends_with_word(before, w))
        && tail(before, ATTACKER_WITHIN)
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| ATTACKER_WORDS.contains(&word))
}

/// Whether `text` ends with the word or words `w`.
fn ends_with_word(text: &str, w: &str) -> bool {
    text.ends_with(w)
        && !text[..text.len() - w.len()]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
}

/// At most the first `n` bytes of `text`, cut at a character's boundary.
fn head(text: &str, n: usize) -> &str {
    let mut end = n.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// At most the last `n` bytes of `text`, cut at a character's boundary.
fn tail(text: &str, n: usize) -> &str {
    let mut start = text.len().saturating_sub(n);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Whether an override phrase is discussed rather than given: it follows
/// words that talk about such phrases ("attacks such as", "phrases like").
/// Quotation marks alone do not count: injected text is often quoted.
fn is_quoted(text: &str, span: &Range<usize>) -> bool {
    let before = tail(&text[..span.start], 40)
        .trim_end_matches(|c: char| c.is_whitespace() || "\"'`\u{201c}\u{2018}\u{ab}:".contains(c));
    // Besides the words that introduce an example, words that talk about
    // phrases.
    const DISCUSSING: &[&str] = &[
        "phrases",
        "phrase",
        "attacks",
        "injection",
        "detect",
        "detects",
        "string",
        "strings",
        "pattern",
        "patterns",
        "called",
        "known as",
        "contains",
        "containing",
        "saying",
        "jailbreak",
        "payload",
        "payloads",
        "prompt",
        "catches",
        "flags",
        "blocks",
        "matches",
        "text",
    ];
    EXAMPLE_WORDS
        .iter()
        .chain(DISCUSSING)
        .any(|w| before.ends_with(w))
}

/// Names of the agent's tools that appear in `text` as words. Only names of
/// two or more words (`send_money`, `createEvent`) count: a one-word tool
/// name (`search`) is an ordinary word.
fn mentioned_tools(text: &str, tools: &[&str], found: &mut Vec<(Feature, Range<usize>)>) {
    for tool in tools {
        let name = tool.to_ascii_lowercase();
        let has_words = name.contains(['_', '-', '.']) || tool.chars().any(char::is_uppercase);
        if name.len() < 6 || !has_words {
            continue;
        }
        let mut from = 0;
        while let Some(at) = text[from..].find(&name) {
            let start = from + at;
            let end = start + name.len();
            let word = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
            let inside_a_word = word(text.as_bytes().get(end))
                || (start > 0 && word(text.as_bytes().get(start - 1)));
            if !inside_a_word {
                found.push((Feature::ToolMention, start..end));
                break;
            }
            from = end;
        }
    }
}

/// Shortest run of base64 or hex taken for encoded text.
const MIN_ENCODED: usize = 24;
/// Most encoded runs decoded per text.
const MAX_ENCODED_RUNS: usize = 32;

/// Base64 and hex runs in `original` that decode to text carrying
/// instructions of their own.
fn encoded_instructions(
    original: &str,
    tools: &[&str],
    normalized: &Normalized<'_>,
    found: &mut Vec<(Feature, Range<usize>)>,
) {
    for (run, decoded) in decoded_runs(original) {
        if scan_layer(&decoded, tools, false).injected() {
            found.push((Feature::EncodedInstruction, normalized.normalized(run)));
        }
    }
}

/// The base64 and hex runs of `text` that decode to text, with where each
/// run is: what a model that decodes them would read. At most
/// `MAX_ENCODED_RUNS` runs are tried.
pub fn decoded_runs(text: &str) -> Vec<(Range<usize>, String)> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::new();
    let mut runs = 0;
    let mut i = 0;
    while i < bytes.len() && runs < MAX_ENCODED_RUNS {
        if !is_encoded_byte(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (is_encoded_byte(bytes[i]) || bytes[i] == b'=') {
            i += 1;
        }
        if i - start < MIN_ENCODED {
            continue;
        }
        runs += 1;
        if let Some(text) = decode(&text[start..i]) {
            decoded.push((start..i, text));
        }
    }
    decoded
}

fn is_encoded_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_')
}

/// `run` decoded as hex or base64 when it decodes to text of three words
/// or more: what reads as a sentence once decoded.
fn decode(run: &str) -> Option<String> {
    decoded_text(run).filter(|text| text.split_whitespace().count() >= 3)
}

/// `run` decoded as hex or base64 (standard or URL-safe, padded or not),
/// when it decodes to mostly printable text: a value someone encoded,
/// which a detector reads as written.
pub fn decoded_text(run: &str) -> Option<String> {
    let trimmed = run.trim_end_matches('=');
    let bytes = if trimmed.len().is_multiple_of(2) && trimmed.bytes().all(|b| b.is_ascii_hexdigit())
    {
        (0..trimmed.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&trimmed[i..i + 2], 16).ok())
            .collect::<Option<Vec<u8>>>()?
    } else {
        let engines = [
            base64::engine::general_purpose::STANDARD_NO_PAD,
            base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        engines
            .iter()
            .find_map(|engine| engine.decode(trimmed).ok())?
    };
    let text = String::from_utf8(bytes).ok()?;
    let printable = text
        .chars()
        .filter(|c| !c.is_control() || c.is_whitespace())
        .count();
    (printable * 10 >= text.chars().count() * 9).then_some(text)
}

#[cfg(test)]
mod tests;
