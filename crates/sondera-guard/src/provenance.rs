//! Provenance of values: which addresses, accounts, links, handles, ids and
//! amounts entered the trajectory through what the agent read (tool, file,
//! shell and web results: third-party data) and which through the user's own
//! prompts; what kind of effect a tool call has; and, for a call with an
//! effect, which of its arguments hold values the user never gave.
//!
//! An injection succeeds when the agent acts on what it read instead of on
//! what it was asked: it sends to the address in the email, pays the account
//! on the page. These facts let policies see that without understanding the
//! text: the target of the call came only from content, the content was
//! flagged, the user only asked to read. They also let the ordinary case
//! through: the user asked to reply or to pay, and the value came from
//! content that carried no instructions.

use std::borrow::Cow;
use std::hash::Hasher as _;
use std::sync::{LazyLock, OnceLock};

use regex::Regex;
use serde_json::Value;
use sondera_model::provenance::{Provenance, Sighting};
use sondera_model::{AgentCard, FileOperationKind, Payload};

sondera_model::named_enum! {
    /// The kind of effect a call has outside the conversation.
    #[derive(PartialOrd, Ord)]
    pub enum Effect: "effect" {
        /// Sends, posts, forwards, replies: a message leaves.
        Send,
        /// Money moves.
        Transfer,
        /// Someone gains access: share, invite, grant.
        Share,
        /// Something is removed or cancelled.
        Delete,
        /// Something changes: update, set, reset, rename, move.
        Update,
        /// Something new exists: create, schedule, book, upload.
        Create,
    }
}

impl Effect {
    /// The effect named `name`, if it is one.
    pub fn parse(name: &str) -> Option<Self> {
        sondera_model::variant_named(name)
    }

    /// The effects of calls a user asking for `self` asks for: sending
    /// and sharing go together (a message shares, a share notifies), an
    /// invitation may create the event it invites to, and creating and
    /// changing go together.
    fn covers(self) -> &'static [Effect] {
        match self {
            Self::Send => &[Self::Send, Self::Share],
            Self::Share => &[Self::Send, Self::Share, Self::Create],
            Self::Update | Self::Create => &[Self::Update, Self::Create],
            Self::Transfer => &[Self::Transfer],
            Self::Delete => &[Self::Delete],
        }
    }
}

/// What a tool call does, as far as its declaration, name and arguments say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// It only reads (a reading verb, or `readOnlyHint`).
    Reads,
    /// It has this effect.
    Acts(Effect),
    /// Nothing says: no verb, no telling argument, no annotation. Never
    /// taken as reading: policies see `effect == "unknown"`.
    Unknown,
}

impl CallKind {
    /// As stored in the card's tool effects and shown to policies: "" for
    /// reading, "unknown", or the effect.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reads => "",
            Self::Acts(effect) => effect.as_str(),
            Self::Unknown => "unknown",
        }
    }

    fn parse(stored: &str) -> Self {
        match stored {
            "" => Self::Reads,
            other => Effect::parse(other).map_or(Self::Unknown, Self::Acts),
        }
    }

    /// What the call does, when it acts.
    pub fn effect(self) -> Option<Effect> {
        match self {
            Self::Acts(effect) => Some(effect),
            Self::Reads | Self::Unknown => None,
        }
    }
}

/// The effect a word names, as a verb of a tool name or of a request.
fn verb_effect(word: &str) -> Option<Effect> {
    use Effect::*;
    Some(match word {
        "send" | "sends" | "email" | "mail" | "message" | "reply" | "respond" | "forward"
        | "notify" | "post" | "publish" | "tweet" | "comment" | "text" | "sms" | "dm" | "chat"
        | "broadcast" | "announce" | "submit" | "write" | "tell" | "contact" | "inform"
        | "answer" | "ping" | "remind" => Send,
        "transfer" | "pay" | "wire" | "refund" | "withdraw" | "deposit" | "purchase" | "buy"
        | "order" | "tip" | "donate" | "charge" | "checkout" | "venmo" | "paypal" | "sell"
        | "trade" | "invest" | "bid" | "swap" | "stake" | "lend" | "redeem" => Transfer,
        "share" | "invite" | "grant" | "permit" | "authorize" | "authorise" | "assign" | "give"
        | "allow" | "unlock" | "admit" | "collaborate" => Share,
        "delete" | "remove" | "erase" | "cancel" | "revoke" | "drop" | "purge" | "destroy"
        | "clear" | "archive" | "unsubscribe" | "kick" | "ban" | "block" | "trash" | "wipe"
        | "unshare" | "deactivate" | "discard" | "dispose" | "scrap" | "ditch" | "gone"
        | "clean" | "close" | "kill" | "terminate" | "unfollow" | "unlike" | "unstar"
        | "dismiss" | "decommission" | "deprovision" | "uninstall" => Delete,
        "update" | "set" | "change" | "reset" | "edit" | "modify" | "rename" | "move" | "patch"
        | "replace" | "configure" | "enable" | "disable" | "toggle" | "mark" | "approve"
        | "reject" | "accept" | "decline" | "reschedule" | "postpone" | "lock" | "upgrade"
        | "downgrade" | "fix" | "correct" | "adjust" | "merge" | "rebase" | "promote"
        | "demote" | "disarm" | "arm" | "activate" | "stop" | "pause" | "resume" | "restart"
        | "reboot" | "mute" | "unmute" | "override" | "bypass" | "suspend" | "freeze"
        | "unfreeze" | "release" | "trigger" | "sign" | "dim" | "increase" | "decrease" | "pin"
        | "unpin" | "hide" | "unhide" | "silence" | "snooze" | "rollback" | "revert" | "undo"
        | "restore" | "scale" | "rotate" | "migrate" | "failover" | "redeploy" | "rerun"
        | "retry" | "downscale" | "upscale" | "shutdown" => Update,
        "create" | "add" | "schedule" | "book" | "reserve" | "make" | "new" | "insert" | "save"
        | "upload" | "append" | "register" | "open" | "start" | "launch" | "run" | "execute"
        | "deploy" | "install" | "follow" | "like" | "star" | "subscribe" | "join" | "apply"
        | "organize" | "organise" | "plan" | "arrange" | "setup" | "copy" | "duplicate"
        | "document" | "record" => Create,
        _ => return None,
    })
}

/// Words that make a tool (or a request) one that only reads.
fn is_read_verb(word: &str) -> bool {
    matches!(
        word,
        "get"
            | "list"
            | "read"
            | "search"
            | "find"
            | "fetch"
            | "query"
            | "view"
            | "show"
            | "lookup"
            | "look"
            | "check"
            | "retrieve"
            | "browse"
            | "count"
            | "describe"
            | "summarize"
            | "summarise"
            | "inspect"
            | "download"
            | "load"
            | "scan"
            | "peek"
            | "preview"
            | "is"
            | "has"
            | "can"
            | "verify"
            | "validate"
            | "explain"
            | "analyze"
            | "analyse"
            | "compare"
            | "calculate"
            | "convert"
            | "translate"
    )
}

/// Nouns that make a sending verb move money (`send_money`, `pay`).
fn is_money_word(word: &str) -> bool {
    matches!(
        word,
        "money" | "payment" | "payments" | "funds" | "transaction" | "cash" | "crypto" | "btc"
    )
}

/// `name` split into lower-case words: `sendEmail`, `send_email`,
/// `send-email` and `Send Email` all give `send`, `email`. A word already
/// in lower case is borrowed, not copied (prompts run to a megabyte).
fn words(name: &str) -> Vec<Cow<'_, str>> {
    let mut words = Vec::new();
    let mut start = None;
    let mut previous_lower = false;
    for (at, c) in name.char_indices() {
        if !c.is_alphanumeric() {
            if let Some(from) = start.take() {
                words.push(lowered(&name[from..at]));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase()
            && previous_lower
            && let Some(from) = start.replace(at)
        {
            words.push(lowered(&name[from..at]));
        }
        start.get_or_insert(at);
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    if let Some(from) = start {
        words.push(lowered(&name[from..]));
    }
    words
}

fn lowered(word: &str) -> Cow<'_, str> {
    if word.chars().any(char::is_uppercase) {
        Cow::Owned(word.to_lowercase())
    } else {
        Cow::Borrowed(word)
    }
}

/// The effect words give, read as a tool's name or description: the first
/// verb decides, a reading verb meaning none; money words make a send a
/// transfer.
fn effect_of_words(words: &[Cow<'_, str>]) -> Option<CallKind> {
    let money = words.iter().any(|w| is_money_word(w));
    for (n, word) in words.iter().enumerate() {
        if is_read_verb(word) {
            return Some(CallKind::Reads);
        }
        if phrasal_change(word, words.get(n + 1).map(|w| &**w)) {
            return Some(CallKind::Acts(Effect::Update));
        }
        if let Some(effect) = verb_effect(word) {
            return Some(CallKind::Acts(if money && effect == Effect::Send {
                Effect::Transfer
            } else {
                effect
            }));
        }
    }
    None
}

/// Argument names that say a call reaches someone, from which an effect is
/// inferred for a tool whose name and description name no verb.
fn effect_of_arguments(arguments: &Value) -> Option<Effect> {
    let keys: Vec<String> = arguments
        .as_object()?
        .keys()
        .map(|k| k.to_ascii_lowercase())
        .collect();
    let has = |names: &[&str]| keys.iter().any(|k| names.contains(&k.as_str()));
    if has(&["iban", "amount", "recipient_account", "account_number"]) {
        Some(Effect::Transfer)
    } else if has(&["to", "recipient", "recipients", "cc", "bcc", "channel"]) {
        Some(Effect::Send)
    } else if has(&[
        "attendees",
        "participants",
        "invitees",
        "collaborators",
        "members",
    ]) {
        Some(Effect::Share)
    } else {
        None
    }
}

/// What calling `tool` with `arguments` does; `declared` is what the
/// agent's card said of the tool ([`CallKind::as_str`]), when it listed it.
pub fn call_effect(tool: &str, arguments: &Value, declared: Option<&str>) -> CallKind {
    if let Some(declared) = declared {
        return CallKind::parse(declared);
    }
    effect_of_words(&words(tool)).unwrap_or_else(|| kind_of_arguments(arguments))
}

fn kind_of_arguments(arguments: &Value) -> CallKind {
    effect_of_arguments(arguments).map_or(CallKind::Unknown, CallKind::Acts)
}

/// The effect a tool's declaration gives it: none when its annotations say
/// it only reads; else from its name, its description's first verb or its
/// parameters' names; and when its annotations say it destroys or changes
/// things but nothing names how, a change.
pub fn declared_effect(tool: &sondera_model::Tool) -> CallKind {
    let hint = |name: &str| {
        tool.annotations
            .as_ref()
            .and_then(|a| a.get(name))
            .and_then(Value::as_bool)
    };
    if hint("readOnlyHint") == Some(true) {
        return CallKind::Reads;
    }
    let destructive = hint("destructiveHint") == Some(true);
    match named_effect(tool) {
        CallKind::Unknown if destructive => CallKind::Acts(Effect::Delete),
        CallKind::Unknown if hint("readOnlyHint") == Some(false) => CallKind::Acts(Effect::Update),
        named => named,
    }
}

fn named_effect(tool: &sondera_model::Tool) -> CallKind {
    effect_of_words(&words(&tool.name))
        .or_else(|| effect_of_words(&words(&tool.description)))
        .unwrap_or_else(|| {
            let parameters = tool
                .parameters_json_schema
                .as_ref()
                .unwrap_or(&tool.parameters);
            kind_of_arguments(parameters.get("properties").unwrap_or(&Value::Null))
        })
}

/// Verbs with an effect in a tool's name that, in a request, mostly do not
/// ask for one ("give me a summary", "tell me", "make a list", "open the
/// file", "check the order").
/// Auxiliaries of a question or statement about what happened ("did",
/// "has", "was"); "can", "could" and "will" ask for something instead.
fn is_auxiliary_of_fact(word: &str) -> bool {
    matches!(
        word,
        "did" | "does" | "do" | "has" | "have" | "had" | "was" | "were" | "didn" | "hasn" | "wasn"
    )
}

/// Words that start a new clause of a request ("and then send it"), or
/// turn one back into asking ("I was hoping you could send it").
fn is_clause_start(word: &str) -> bool {
    matches!(
        word,
        "and"
            | "then"
            | "also"
            | "please"
            | "but"
            | "if"
            | "so"
            | "could"
            | "can"
            | "would"
            | "will"
    )
}

fn is_loose_in_requests(word: &str) -> bool {
    matches!(
        word,
        "clean"
            | "give"
            | "tell"
            | "make"
            | "open"
            | "start"
            | "run"
            | "set"
            | "like"
            | "follow"
            | "answer"
            | "write"
            | "text"
            | "chat"
            | "order"
            | "new"
            | "clear"
            | "mark"
            | "correct"
            | "fix"
            | "plan"
            | "block"
            | "drop"
            | "lock"
            | "save"
            | "apply"
            | "join"
            | "star"
            | "remind"
            | "execute"
            | "copy"
            | "document"
            | "record"
            | "release"
            | "sign"
            | "trigger"
            | "pin"
            | "stop"
            | "trade"
    )
}

/// Whether a word makes the one after it a noun: a determiner, a
/// possessive, or an adjective that picks which item is meant.
fn names_a_thing(word: &str) -> bool {
    matches!(
        word,
        "my" | "your"
            | "our"
            | "his"
            | "her"
            | "their"
            | "its"
            | "the"
            | "a"
            | "an"
            | "this"
            | "that"
            | "these"
            | "those"
            | "latest"
            | "last"
            | "recent"
            | "new"
            | "unread"
            | "first"
            | "next"
            | "previous"
            | "incoming"
            | "outgoing"
            | "old"
            | "newest"
            | "oldest"
            | "pending"
            | "every"
            | "each"
            | "any"
            | "some"
            | "all"
            // A possessive's tail, once words are split at the apostrophe.
            | "s"
    )
}

/// Whether `words[n]` ends a compound noun its determiner opened ("this
/// blog post", "the status update", "the wire transfer"): a word that is
/// a noun as often as a verb, right after a noun that follows a
/// determiner. A verb there would need a clause of its own.
fn ends_a_compound(words: &[Cow<'_, str>], n: usize) -> bool {
    n >= 2
        && names_a_thing(&words[n - 2])
        && matches!(
            &*words[n],
            "post"
                | "posts"
                | "update"
                | "updates"
                | "transfer"
                | "transfers"
                | "share"
                | "order"
                | "orders"
                | "message"
                | "messages"
                | "email"
                | "emails"
                | "mail"
                | "text"
                | "call"
                | "calls"
                | "reply"
                | "replies"
                | "payment"
                | "invite"
                | "invites"
                | "upload"
                | "uploads"
                | "change"
                | "changes"
                | "request"
                | "requests"
                | "booking"
                | "report"
        )
}

/// Phrases with which a user hands the agent whatever the data asks for.
static DELEGATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(handle|take\s+care\s+of|deal\s+with|do\s+what\s+(it|they|the\s+\w+)\s+(says?|asks?)|follow\s+(the|its|their)\s+(instructions|steps|requests)|complete\s+(the|all|any)\s+(tasks?|to-?dos?|action\s+items)|act\s+on)\b")
        .expect("delegation pattern compiles")
});

/// Effects a user's prompt asks for: the verbs of its requests, or every
/// effect when it hands the agent whatever the data asks for ("handle my
/// inbox", "do what the ticket says"). Such data is still judged: a target
/// taken from content carrying injected instructions stays denied.
pub fn requested_effects(prompt: &str) -> Vec<Effect> {
    if DELEGATION.is_match(prompt) {
        return <Effect as strum::VariantArray>::VARIANTS.to_vec();
    }
    let mut effects = Vec::new();
    for sentence in prompt.split(['.', '!', '?', '\n', ';']) {
        sentence_requests(&words(sentence), &mut effects);
    }
    effects.sort_unstable();
    effects.dedup();
    effects
}

/// Effects content asks its reader for: the requests of its sentences and
/// of what follows a colon (`Bot: close every ticket`) that ask, read as a
/// prompt's are. A sentence asks when a verb with an effect opens it, or
/// it says "please" or "kindly", or asks "can you" or tells "you should".
/// Descriptions ("we will cancel unpaid orders", "the team posted it")
/// ask for nothing, and a hand-over ("follow the steps below") asks for
/// what its verbs name, never for every effect as a user's does.
pub fn content_requests(text: &str) -> Vec<Effect> {
    let mut effects = Vec::new();
    for sentence in text.split(['.', '!', '?', '\n', ';', ':']) {
        if !may_ask(sentence) {
            continue;
        }
        let words = words(sentence);
        if asks(&words) {
            sentence_requests(&words, &mut effects);
        }
    }
    effects.sort_unstable();
    effects.dedup();
    effects
}

/// Whether a sentence may ask anything, decided before its words are
/// read: most of a long text is read at this cost alone. One that asks
/// says "please", "kindly" or "you", or opens with a verb with an effect.
fn may_ask(sentence: &str) -> bool {
    let bytes = sentence.as_bytes();
    let marked = (0..bytes.len()).any(|at| {
        let word: &[u8] = match bytes[at] | 0x20 {
            b'p' => b"please",
            b'k' => b"kindly",
            b'y' => b"you",
            _ => return false,
        };
        bytes[at..]
            .get(..word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word))
    });
    let mut opening = sentence
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .filter(|w| !FILLERS.iter().any(|f| w.eq_ignore_ascii_case(f)));
    marked
        || opening
            .next()
            .is_some_and(|w| w.len() <= 12 && verb_effect(&w.to_ascii_lowercase()).is_some())
}

/// Words a request may open with before its verb ("also, please cancel").
const FILLERS: &[&str] = &[
    "also", "please", "kindly", "then", "and", "so", "just", "now",
];

/// Whether `word` and the `particle` after it are a verb of switching or
/// shifting something ("turn off", "shut down", "roll back", "scale
/// out", `turn_on_heating`).
fn phrasal_change(word: &str, particle: Option<&str>) -> bool {
    matches!(
        word,
        "turn" | "switch" | "shut" | "power" | "roll" | "scale" | "spin"
    ) && matches!(
        particle,
        Some("off" | "on" | "down" | "up" | "back" | "out")
    )
}

/// Whether a sentence's words ask its reader for something.
fn asks(words: &[Cow<'_, str>]) -> bool {
    let opening = words.iter().find(|w| !FILLERS.contains(&&***w));
    let imperative = opening.is_some_and(|w| verb_effect(w).is_some());
    let polite = words.iter().any(|w| matches!(&**w, "please" | "kindly"));
    let told = words.windows(2).any(|pair| {
        matches!(
            (&*pair[0], &*pair[1]),
            ("you", "should" | "must" | "need" | "have")
                | ("can" | "could" | "would" | "will", "you")
        )
    });
    imperative || polite || told
}

/// The effects one sentence's words ask for, into `effects`.
fn sentence_requests(words: &[Cow<'_, str>], effects: &mut Vec<Effect>) {
    // After "did", "has" or "was" a verb is asked about, not asked
    // for ("what did the team post", "has Bob sent it"), until the
    // next clause starts.
    let mut asked_about = false;
    for (n, word) in words.iter().enumerate() {
        if is_clause_start(word) {
            asked_about = false;
        }
        if is_auxiliary_of_fact(word) {
            asked_about = true;
        }
        // A word after a determiner or an adjective of time is a noun:
        // "my latest SMS", "the email from Bob" name what to read.
        if asked_about || n > 0 && names_a_thing(&words[n - 1]) || ends_a_compound(words, n) {
            continue;
        }
        // A loose verb still asks when it is how the request starts
        // ("Text Maria", "please order", "can you post"), unless it
        // asks for something for the user ("give me", "tell us").
        let leads = (n == 0
            || matches!(
                &*words[n - 1],
                "please" | "you" | "and" | "then" | "also" | "just" | "kindly"
            ))
            && !matches!(words.get(n + 1).map(|w| &**w), Some("me" | "us"));
        if leads || !is_loose_in_requests(word) {
            effects.extend(verb_effect(word));
        }
        // Phrasal verbs: "turn off the cameras", "shut down the server".
        let particle = words.get(n + 1).map(|w| &**w);
        if phrasal_change(word, particle) {
            effects.push(Effect::Update);
        }
        // "get rid of the logs", "clean up the drafts".
        if matches!(
            (&**word, particle),
            ("get", Some("rid")) | ("clean" | "tidy", Some("up" | "out"))
        ) {
            effects.push(Effect::Delete);
        }
    }
    if words.iter().any(|w| is_money_word(w)) && effects.contains(&Effect::Send) {
        effects.push(Effect::Transfer);
    }
}

/// Most values taken from one text.
pub const MAX_VALUES_PER_TEXT: usize = 128;

/// The alternatives of the pattern of identifying values, in order, with
/// `DIGIT`, `SPACE` and `LINK` (a character of a link) to fill in; and for
/// the two whose domains repeat up to 253 times, most of the automaton,
/// what a text must contain (in any case) for them to match in it. A
/// text without it is read without them: an alternative that cannot match
/// anywhere changes no match of the others.
///
/// Every repetition that can run on without the match ending is bounded
/// (an address's local part at 64, its domain at 253): an earlier
/// alternative still alive forces the search to scan on past a shorter
/// match, and unbounded that scan reaches the end of the text for every
/// match found, quadratic in the text (`1.1.1.1...`). Letter classes and
/// word boundaries are ASCII: Unicode letter classes repeated to those
/// bounds made this the costliest automaton a process builds (22 million
/// instructions, 5 ms, at the first output it reads), the only letters
/// they add to `[a-z]` under `(?i)` are the Kelvin sign and the long s
/// (which [`values_in_text`] writes as `k` and `s` before it reads), and a
/// Unicode `\b` next to text beyond ASCII sends the search to a slower
/// engine than the lazy DFA, thousands of instructions a byte.
const VALUE_ALTERNATIVES: &[(Option<&str>, &str)] = &[
    (
        Some("@"),
        r"[a-z0-9._%+-]{1,64}@[a-z0-9.-]{1,253}\.[a-z]{2,63}",
    ),
    (None, r"https?://LINK+"),
    (
        None,
        r"(?-i:\b[A-Z]{2}DIGIT{2}(?:SPACE?[A-Z0-9]{4}){2,7}(?:SPACE?[A-Z0-9]{1,4})?\b)",
    ),
    (Some("www."), r"\bwww\.[a-z0-9.-]{1,253}\.[a-z]{2,63}"),
    (None, r"(?:^|SPACE|[(\[,;:])[@#][a-z0-9_][a-z0-9_.-]{1,40}"),
    (None, r"(?u:[$€£])SPACE?DIGIT(?:DIGIT|,)*(?:\.DIGIT+)?"),
    (None, r"\+?\(?DIGIT(?:DIGIT|SPACE|[().-]){5,22}DIGIT"),
    (None, r"\b[a-z]+[_-]?DIGIT+[a-z0-9_-]*\b"),
    (None, r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b"),
];

/// The value pattern for each kind of text, built the first time a text of
/// that kind comes: bit 0 set for a text beyond ASCII, and one bit for each
/// alternative of [`VALUE_ALTERNATIVES`] with a requirement the text meets.
static VALUE_REGEXES: [OnceLock<Regex>; 8] = [const { OnceLock::new() }; 8];

/// The value pattern for `text`.
fn value_regex(text: &str) -> &'static Regex {
    let mut kind = usize::from(!text.is_ascii());
    let needed = VALUE_ALTERNATIVES.iter().filter_map(|(needs, _)| *needs);
    for (bit, needle) in needed.enumerate() {
        let found = (text.as_bytes().windows(needle.len()))
            .any(|window| window.eq_ignore_ascii_case(needle.as_bytes()));
        if found {
            kind |= 2 << bit;
        }
    }
    VALUE_REGEXES[kind].get_or_init(|| build_value_regex(kind))
}

/// The value pattern for texts of `kind` (see [`VALUE_REGEXES`]). Digits
/// and spaces are Unicode in a text beyond ASCII (a page separates an
/// account number's groups with no-break spaces, and an address written in
/// full-width digits is still a value), ASCII in the others, where they
/// match the same, for a third of the automaton (Unicode digits and spaces
/// repeated 22 times, for a phone number, were half of it).
fn build_value_regex(kind: usize) -> Regex {
    let (digit, space, link) = if kind & 1 == 0 {
        ("[0-9]", r"\s", ASCII_LINK)
    } else {
        (r"(?u:\d)", r"(?u:\s)", r"(?u:[^\s<>()\[\]{}])")
    };
    let mut requirement = 0;
    let kept: Vec<&str> = (VALUE_ALTERNATIVES.iter())
        .filter(|(needs, _)| {
            needs.is_none_or(|_| {
                requirement += 1;
                kind & (1 << requirement) != 0
            })
        })
        .map(|(_, alternative)| *alternative)
        .collect();
    let pattern = format!("(?i-u){}", kept.join("|"))
        .replace("DIGIT", digit)
        .replace("SPACE", space)
        .replace("LINK", link);
    Regex::new(&pattern).expect("value pattern compiles")
}

/// What `[^\s<>()\[\]{}]` matches of ASCII.
const ASCII_LINK: &str =
    r"[\x00-\x08\x0E-\x1F\x21-\x27\x2A-\x3B\x3D\x3F-\x5A\x5C\x5E-\x7A\x7C\x7E\x7F]";

/// An identifying value in its normalised form (lower case; digits only
/// for numbers; no spaces in account numbers).
fn normalized(raw: &str) -> Option<String> {
    let raw = raw.trim_start_matches(|c: char| c.is_whitespace() || "([,;:".contains(c));
    let raw = raw.trim_end_matches(['.', ',', ';', ':', '!', '?', '\'', '"', '/']);
    if raw.is_empty() {
        return None;
    }
    let digits: String = raw.chars().filter(char::is_ascii_digit).collect();
    let is_number = raw
        .chars()
        .all(|c| c.is_ascii_digit() || " ()+-.".contains(c));
    let value = if raw.starts_with(['$', '€', '£']) {
        amount(raw.trim_start_matches(['$', '€', '£']).trim())
    } else if is_number {
        if digits.len() < 4 {
            return None;
        }
        digits
    } else if raw.len() >= 15
        && raw.as_bytes()[..2].iter().all(u8::is_ascii_uppercase)
        && raw.as_bytes()[2..4].iter().all(u8::is_ascii_digit)
    {
        raw.replace(' ', "").to_ascii_lowercase()
    } else {
        raw.to_lowercase()
    };
    (value.len() >= 3).then_some(value)
}

/// An amount without thousands separators or a zero fraction.
fn amount(raw: &str) -> String {
    let plain = raw.replace(',', "");
    match plain.split_once('.') {
        Some((whole, fraction)) if fraction.chars().all(|c| c == '0') => whole.to_string(),
        _ => plain,
    }
}

/// Distinct matches whose normalised values are remembered per text, so
/// a value repeated throughout a megabyte is normalised once.
const REMEMBERED_MATCHES: usize = 4096;

/// The identifying values in `text`, normalised, at most [`MAX_VALUES_PER_TEXT`].
pub fn values_in_text(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut seen = fnv::FnvHashSet::default();
    let text = ascii_case_letters(text);
    for m in value_regex(&text).find_iter(&text) {
        if found.len() == MAX_VALUES_PER_TEXT {
            break;
        }
        if seen.len() < REMEMBERED_MATCHES && !seen.insert(m.as_str()) {
            continue;
        }
        let Some(value) = normalized(m.as_str()) else {
            continue;
        };
        if let Some(host) = link_host(&value) {
            push_new(&mut found, host);
        }
        push_new(&mut found, value);
    }
    found
}

/// `text` with the two letters beyond ASCII that fold to ASCII ones (the
/// Kelvin sign to `k`, the long s to `s`) written as those, which
/// the value pattern's ASCII letter classes then read as the Unicode
/// classes did.
fn ascii_case_letters(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains(['\u{212a}', '\u{17f}']) {
        std::borrow::Cow::Owned(text.replace('\u{212a}', "k").replace('\u{17f}', "s"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

fn push_new(found: &mut Vec<String>, value: String) {
    if !found.contains(&value) && found.len() < MAX_VALUES_PER_TEXT {
        found.push(value);
    }
}

/// The host of a URL or of a `www.` name, without `www.`, as a value of
/// its own: a link given as `www.x.example` is fetched as `https://x.example/`.
fn link_host(value: &str) -> Option<String> {
    let host = crate::net::url_host(value).or_else(|| {
        value
            .starts_with("www.")
            .then(|| crate::net::authority_host(value))
            .flatten()
    })?;
    Some(match host.strip_prefix("www.") {
        Some(rest) => rest.to_string(),
        None => host,
    })
}

/// Keys whose value, whole, identifies someone or something: ids, the
/// recipient keys egress reads, and the other keys that name an account,
/// a handle, a link or an amount.
fn is_identifying_key(key: &str) -> bool {
    const OTHER_KEYS: &[&str] = &[
        "emails",
        "user",
        "username",
        "user_name",
        "handle",
        "channel",
        "account",
        "iban",
        "phone",
        "number",
        "url",
        "link",
        "participants",
        "attendees",
        "invitees",
        "members",
        "assignee",
        "owner",
        "amount",
        "receiver",
        "target",
        "destination",
        "contact",
        "friend",
        "guest",
    ];
    let key = key.to_ascii_lowercase();
    key == "id"
        || key.ends_with("_id")
        || key.ends_with("id") && key.len() > 2 && !key.ends_with("valid")
        || crate::net::RECIPIENT_KEYS.contains(&key.as_str())
        || OTHER_KEYS.contains(&key.as_str())
}

/// A value found in JSON, and where.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FoundValue {
    /// The key path holding it (`to`, `recipients`, `payment.iban`).
    pub path: String,
    /// The value, normalised.
    pub value: String,
    /// It names what a call acts on: it is, or is inside, a value held by an
    /// identifying key, or a short string without spaces. Values inside
    /// free text (a message body) are not targets.
    pub target: bool,
}

/// Values in a JSON value: those in every string, and every short string or
/// number held by an identifying key, each with the key path holding it.
/// With `whole_strings` (a call's arguments), every short string without
/// spaces is a value too, whatever its key.
pub fn values_in_json(value: &Value, whole_strings: bool) -> Vec<FoundValue> {
    let mut found: Vec<FoundValue> = Vec::new();
    let mut stack: Vec<(String, Option<&str>, &Value)> = vec![(String::new(), None, value)];
    while let Some((path, key, node)) = stack.pop() {
        if found.len() >= MAX_VALUES_PER_TEXT {
            break;
        }
        let identifying = key.is_some_and(is_identifying_key);
        match node {
            Value::String(text) => {
                let text = text.trim();
                let whole = text.len() <= 100 && !text.contains(char::is_whitespace);
                let target = identifying || whole;
                if (identifying || whole && whole_strings) && !text.is_empty() {
                    let value = amount_or(text.to_lowercase());
                    found.push(FoundValue {
                        path: path.clone(),
                        value,
                        target,
                    });
                }
                for value in values_in_text(text) {
                    found.push(FoundValue {
                        path: path.clone(),
                        value,
                        target,
                    });
                }
            }
            Value::Number(n) if identifying => found.push(FoundValue {
                path,
                value: amount(&n.to_string()),
                target: true,
            }),
            Value::Array(items) => {
                for item in items.iter().rev() {
                    stack.push((path.clone(), key, item));
                }
            }
            Value::Object(members) => {
                for (k, v) in members.iter().rev() {
                    let child = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    stack.push((child, Some(k.as_str()), v));
                }
            }
            _ => {}
        }
    }
    found.sort();
    found.dedup();
    found
}

/// A whole string that is a number taken as an amount, else itself.
fn amount_or(whole: String) -> String {
    if whole
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
    {
        amount(&whole)
    } else {
        whole
    }
}

/// A stable fingerprint of a normalised value (FNV-1a, 64 bits): the state
/// keeps fingerprints, not the values themselves.
pub fn fingerprint(value: &str) -> u64 {
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(value.as_bytes());
    hasher.finish()
}

/// What the content signals said of a step being folded.
#[derive(Debug, Clone, Copy, Default)]
pub struct Read<'a> {
    /// The injection detector flagged it.
    pub flagged: bool,
    /// It assigns a credential a value (`password: ...`).
    pub assigns_credentials: bool,
    /// The effects it asks its reader for ([`content_requests`]).
    pub requests: &'a [Effect],
}

/// Folds one step into the trajectory's provenance: the card's tools at the
/// start, a user prompt's values and requested effects, an observation's
/// values with whether the injection detector flagged it, the values it
/// assigns to credentials and the effects it asks its reader for. `call` is the call an observation answers, as
/// `(call_id, tool)`.
pub fn fold(
    provenance: &mut Provenance,
    payload: &Payload,
    call: Option<(&str, &str)>,
    read: Read<'_>,
) {
    let flagged = read.flagged;
    match payload {
        Payload::Started { agent, .. } => {
            if let Some(AgentCard::React { tools, .. }) = agent.card.as_deref() {
                for tool in tools {
                    provenance.declare_tool(&tool.name, declared_effect(tool).as_str());
                }
            }
        }
        Payload::Prompt {
            role: sondera_model::PromptRole::User,
            content,
        } => {
            provenance.user_prompts = provenance.user_prompts.saturating_add(1);
            for effect in requested_effects(content) {
                provenance.user_effects.insert(effect.as_str().to_string());
            }
            for value in values_in_text(content) {
                provenance.sighted(fingerprint(&value), Sighting::User);
            }
        }
        _ if payload.category() == sondera_model::PayloadCategory::Observation => {
            let mut values = observed_values(payload);
            if flagged && let Some(text) = crate::content::observed_text(payload) {
                // What an encoded instruction names is what the agent
                // would act on once it decoded it.
                for (_, decoded) in crate::injection::decoded_runs(&text) {
                    values.extend(values_in_text(&decoded));
                }
            }
            for effect in read.requests {
                if !provenance.content_effects.contains(effect.as_str()) {
                    provenance
                        .content_effects
                        .insert(effect.as_str().to_string());
                }
            }
            let (call_id, tool) = call.unwrap_or((payload.call_id().unwrap_or(""), ""));
            let source = provenance.add_source(call_id, tool, flagged);
            for value in values {
                provenance.sighted(
                    fingerprint(&value),
                    Sighting::Observation { source, flagged },
                );
            }
            if read.assigns_credentials
                && let Some(text) = crate::content::observed_text(payload)
            {
                for value in crate::content::assigned_credentials(&text) {
                    let print = fingerprint(&value.to_lowercase());
                    provenance.sighted(print, Sighting::Credential { source });
                }
            }
        }
        _ => {}
    }
}

/// The values an observation carries.
fn observed_values(payload: &Payload) -> Vec<String> {
    match payload {
        Payload::ToolOutput { output, error, .. } => {
            let mut values: Vec<String> = values_in_json(output, false)
                .into_iter()
                .map(|f| f.value)
                .collect();
            if let Some(error) = error {
                values.extend(values_in_text(error));
            }
            values
        }
        _ => crate::content::observed_text(payload)
            .map(|text| values_in_text(&text))
            .unwrap_or_default(),
    }
}

/// What policies see of a call's provenance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallProvenance {
    /// The call has an effect outside the conversation.
    pub effect: Option<Effect>,
    /// Nothing says whether the call has an effect (see [`CallKind::Unknown`]).
    pub effect_unknown: bool,
    /// Argument paths holding a value that only observations carried.
    pub untrusted_targets: Vec<String>,
    /// Argument paths holding a value a flagged observation carried.
    pub flagged_targets: Vec<String>,
    /// A flagged observation entered the trajectory before this call.
    pub follows_flagged: bool,
    /// The user's prompts so far asked for no effect (or there were none).
    pub user_read_only: bool,
    /// The user has written at least one prompt: a read-only request was
    /// made, not merely absent.
    pub user_prompted: bool,
    /// Content the agent read (a tool's output, a page, a file) entered
    /// the trajectory before this call.
    pub follows_content: bool,
    /// The user's prompts asked for this kind of effect.
    pub user_requested: bool,
    /// Content the agent read asked its reader for this kind of effect.
    pub content_requested: bool,
    /// Each argument value found in the trajectory, and where it came from.
    pub origins: Vec<ValueTrace>,
}

/// Whether asking for the effects `asked` asks for a call with `effect`.
fn asked_for(asked: &std::collections::BTreeSet<String>, effect: Effect) -> bool {
    asked
        .iter()
        .filter_map(|asked| Effect::parse(asked))
        .any(|asked| asked.covers().contains(&effect))
}

/// One argument value and its origin, for explaining a verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueTrace {
    /// The argument's key path.
    pub argument: String,
    /// The value, normalised.
    pub value: String,
    /// A user's prompt carried it.
    pub user: bool,
    /// Some observation carried it.
    pub observed: bool,
    /// It came from an observation flagged as injected.
    pub flagged: bool,
    /// The first observation that carried it: `(call_id, tool)`.
    pub source: Option<(String, String)>,
}

/// The provenance facts of calling `tool` with `arguments`.
pub fn of_call(provenance: &Provenance, tool: &str, arguments: &Value) -> CallProvenance {
    let declared = provenance.tool_effects.get(tool).map(String::as_str);
    facts(
        provenance,
        call_effect(tool, arguments, declared),
        arguments,
    )
}

/// The provenance facts of fetching `url`: a fetch that sends data sends,
/// and the URL is its target.
pub fn of_fetch(
    provenance: &Provenance,
    url: &str,
    body: Option<&str>,
    sends_data: bool,
) -> CallProvenance {
    let arguments = serde_json::json!({ "url": url, "body": body });
    let kind = match sends_data {
        true => CallKind::Acts(Effect::Send),
        false => CallKind::Reads,
    };
    facts(provenance, kind, &arguments)
}

/// Whether the user has written a prompt and every prompt so far asked
/// for no action with an effect: what an effect taken now was not asked for.
pub fn user_asked_only_to_read(provenance: &Provenance) -> bool {
    provenance.user_prompts > 0 && provenance.user_effects.is_empty()
}

/// The provenance facts of a file tool's `operation` on `path`: deleting
/// deletes, writing creates, editing updates, and a deleted path is the
/// target. A file removed or rewritten because a page asked is the same
/// injection as an email sent because one asked.
pub fn of_file_operation(
    provenance: &Provenance,
    operation: FileOperationKind,
    path: &str,
) -> CallProvenance {
    // Only a deletion is judged by where its path came from; a read has no
    // effect and a write or edit is judged by what preceded it, so neither
    // pays for tracing its path.
    match operation {
        FileOperationKind::Read => facts(provenance, CallKind::Reads, &Value::Null),
        FileOperationKind::Write => facts(provenance, CallKind::Acts(Effect::Create), &Value::Null),
        FileOperationKind::Edit => facts(provenance, CallKind::Acts(Effect::Update), &Value::Null),
        FileOperationKind::Delete => facts(
            provenance,
            CallKind::Acts(Effect::Delete),
            &serde_json::json!({ "path": path }),
        ),
    }
}

fn facts(provenance: &Provenance, kind: CallKind, arguments: &Value) -> CallProvenance {
    let effect = kind.effect();
    let mut facts = CallProvenance {
        effect,
        effect_unknown: kind == CallKind::Unknown,
        follows_flagged: provenance.flagged_seen,
        user_read_only: provenance.user_effects.is_empty(),
        user_prompted: provenance.user_prompts > 0,
        follows_content: provenance.next_source > 0,
        user_requested: effect.is_some_and(|call| asked_for(&provenance.user_effects, call)),
        content_requested: effect.is_some_and(|call| asked_for(&provenance.content_effects, call)),
        ..CallProvenance::default()
    };
    for FoundValue {
        path: argument,
        value,
        target,
    } in values_in_json(arguments, true)
    {
        if !target {
            continue;
        }
        let Some(origin) = provenance.values.get(&fingerprint(&value)) else {
            continue;
        };
        let only_observed = origin.observed && !origin.user;
        if only_observed && !facts.untrusted_targets.contains(&argument) {
            facts.untrusted_targets.push(argument.clone());
        }
        if origin.flagged && !origin.user && !facts.flagged_targets.contains(&argument) {
            facts.flagged_targets.push(argument.clone());
        }
        facts.origins.push(ValueTrace {
            argument,
            value,
            user: origin.user,
            observed: origin.observed,
            flagged: origin.flagged,
            source: origin
                .source
                .and_then(|n| provenance.source(n))
                .map(|s| (s.call_id.clone(), s.tool.clone())),
        });
    }
    facts
}

#[cfg(test)]
mod tests;
