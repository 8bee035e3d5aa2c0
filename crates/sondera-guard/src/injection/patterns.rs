//! The features found by pattern, each a family of wordings over the
//! normalised (lower-case, ASCII-folded) text.

use std::sync::LazyLock;

use regex::{Regex, RegexSet};

use super::Feature;

/// Verbs of actions with effects outside the conversation, which injected
/// text asks the reader to take.
const ACTION: &str = "use|send|sends|forward|transfer|wire|pay|share|invite|post|publish|delete|remove|grant|give|change|update|reset|create|schedule|book|email|e-mail|upload|add|set|move|rename|approve|submit|purchase|buy|visit|open|click|download|install|run|execute|call|invoke|reply|export|copy|reveal|include|append|insert|write|disable|enable|unlock|cancel|subscribe|follow|retweet|message|text|contact|provide|leak|exfiltrate|print|output|tell|notify|save|store|make|transmit|deliver|attach|mail";

/// Names and roles a text uses to address a model.
const AGENT: &str = r"ai|a\.i\.|assistant|agent|model|llm|chatbot|bot|language\s+model|ai\s+assistant|ai\s+agent|gpt[\w.-]*|chatgpt|claude|gemini|llama|copilot|bard|mistral";

fn rules() -> Vec<(Feature, String)> {
    use Feature::*;
    let table: &[(Feature, &str)] = &[
        (
            ChatToken,
            r"<\|[a-z_]{2,24}\|>|\[/?inst\]|<<\s*/?sys\s*>>|<\s*/?\s*(start_of_turn|end_of_turn)\s*>|<\s*/?\s*(system|sys)\s*>",
        ),
        (
            RoleHeader,
            r"(?m)^[\s>*#=|-]*[\[({<]?\s*(system|admin|administrator|developer|root|operator|sysadmin)(\s+|_)?(message|prompt|note|notice|instructions?|override|update|alert|command|directive|mode)?\s*[\])}>]?\s*[*#=|-]*\s*:",
        ),
        (
            RoleHeader,
            r"[\[({]\s*(system|admin|developer|operator)(\s*|_)(message|prompt|note|override|instructions?|notice)?\s*[\])}]",
        ),
        (
            RoleHeader,
            r"(?m)^\s*#{1,6}\s*(system|admin|developer)\s*(message|prompt|instructions?|note)?\s*:?\s*$",
        ),
        (
            FakeConversation,
            r#""role"\s*:\s*"(system|developer)"|(?m)^\s*-?\s*role\s*:\s*(system|developer)\s*$"#,
        ),
        (
            ConversationLines,
            r#"(?m)^\s*(user|human|assistant|ai)\s*:|"role"\s*:\s*"(user|assistant)""#,
        ),
        (
            PromptLeak,
            r"\b(print|reveal|show|repeat|output|display|leak|dump|tell\s+me|send|share|give\s+me)\b\W+(?:\w+\W+){0,5}?(system\s+prompt|(hidden|initial|original|secret|system)\s+(instructions|prompt))",
        ),
        (
            RoleSwitch,
            r"\b(disable|turn\s+off|deactivate|bypass|remove|suspend)\s+(all\s+|any\s+|your\s+|the\s+)*(safety|security|content|ethical|moderation)\s+(checks?|filters?|guardrails|restrictions|protocols|measures|policies|guidelines)\b",
        ),
        (
            RoleSwitch,
            r"\byou\s+are\s+now\s+(in\s+)?(an?\s+)?(developer|dan|jailbr\w*|unrestricted|god|admin|root|evil|uncensored|unfiltered|maintenance|debug|sudo|test|safe)\b|\b(jailbreak|dan|god)\s+mode\b|\b(developer|admin|debug|maintenance|unrestricted)\s+mode\s+(is\s+)?(enabled|activated|engaged|on)\b",
        ),
        (
            RoleSwitch,
            r"\byou\b[^.\n]{0,40}\b(no|without)\s+(any\s+)?(rules|restrictions|limitations|filters|guardrails|censorship)\b",
        ),
        (
            NewInstructions,
            r"\b(ignore|disregard|forget|override)\s+(what\s+)?(the|your)\s+user('s|s)?\s+(said|says|asked|wants|request\w*|instructions?|task|question|prompt)\b",
        ),
        (
            NewInstructions,
            r"\b(your|the)\s+(new|real|actual|true|updated|revised|only|primary)\s+(task|instructions?|goal|objective|job|mission|role|purpose|priority)\s+(is|are|will\s+be|now)\b|\bnew\s+(instructions?|task|rules|directive)\s*:|\b(system|admin|developer|security)\s+override\b|\b(updated|revised|corrected|real)\s+instructions?\s*(:|from|follow)",
        ),
        (
            FromNowOn,
            r"\bfrom\s+now\s+on\s*,?\s+(you|your|the\s+assistant|ignore|act|respond|always|only|never)\b|\binstead\s*,?\s+(you\s+(should|must|will|need\s+to)|do\s+the\s+following|perform|execute|please)\b",
        ),
        (HiddenComment, r"(?s)<!--.{0,600}?-->"),
        (
            HiddenStyle,
            r#"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(\.0+)?(px|pt|em|rem)?\s*[;"']|opacity\s*:\s*0(\.0+)?\s*[;"']|color\s*:\s*(white|#fff\b|#ffffff|transparent)"#,
        ),
        (
            Markup,
            r"<\s*/?\s*(instructions?|important|information|task|command|directive|prompt|override|assistant|user|secret|hidden|admin|urgent|todo|action|rules?|ai|agent|llm|priority|note_to_ai|system_prompt|ai_instructions?|hidden_instructions?|assistant_instructions?|agent_instructions?)(\s[^>]{0,60})?>",
        ),
        (
            Markup,
            r"\[\s*(important|instructions?|attention|urgent|note\s+to\s+(the\s+)?(ai|assistant|agent|model|llm)|ai\s+instructions?|assistant\s+note|system\s+note|hidden\s+instructions?)\s*\]",
        ),
        (
            AddressedToAgent,
            &format!(
                r"\b(dear|hey|hi|hello|attention|attn|note|message|instructions?|reminder|notice|memo|important)\b[\s,:!-]{{0,3}}(to|for)?\s*(the\s+|any\s+|all\s+|our\s+|my\s+)?({AGENT})s?\b"
            ),
        ),
        (
            AddressedToAgent,
            &format!(
                r"\b(if|when|whenever)\s+(you\s+are|you're)\s+(an?\s+|the\s+)?({AGENT}|automated|large\s+language)\b"
            ),
        ),
        (
            AddressedToAgent,
            &format!(
                r"\b({AGENT})s?\s+(that\s+is\s+|who\s+is\s+)?(reading|processing|summari[sz]ing|parsing|analy[sz]ing|handling|scanning|viewing)\s+(this|these|the\s+following)\b"
            ),
        ),
        (
            AddressedToAgent,
            &format!(r"\b(to|for)\s+you,?\s+(the\s+|my\s+)?({AGENT})\b"),
        ),
        (
            AddressedToAgent,
            &format!(
                r"(^|[.!?\n>(\[-]\s*)({AGENT})\s*[,:]\s*(please|you|ignore|disregard|forget|do|now|immediately|first|before|your|{ACTION})\b"
            ),
        ),
        (
            AddressedToAgent,
            &format!(
                r"\b(the|an?|any|this|dear)\s+({AGENT})s?\s+(must|should|shall|needs\s+to|has\s+to|is\s+(required|instructed|expected|asked)\s+to|will\s+now|reading\s+this)\b"
            ),
        ),
        (
            AddressedToAgent,
            r"\b(as|being)\s+(an?\s+|the\s+)?(ai|assistant|agent|language\s+model|llm)\s*,?\s+you\s+(must|should|need|have|are|will)\b",
        ),
        (
            AuthorityClaim,
            r"\b(this\s+is\s+(a\s+message\s+from|an?\s+(important|urgent|official)\s+(message|notice|instruction)s?\s+from)|message\s+from|on\s+behalf\s+of|a\s+note\s+from|instructions?\s+from)\s+(me,?\s+)?(the\s+|your\s+)?(user|developer|administrator|admin|operator|system|owner|creator|principal|supervisor|it\s+department|security\s+team|openai|anthropic|google|boss)\b",
        ),
        (
            AuthorityClaim,
            r"\b(i\s+am|i'm|this\s+is)\s+(your|the)\s+(user|developer|administrator|admin|operator|owner|creator|master|principal)\b",
        ),
        (
            AuthorityClaim,
            r"\b(the|your)\s+(user|owner|developer|administrator|operator|principal)\s+(has\s+)?(asked|wants|requested|instructed|authori[sz]ed|approved|needs|requires|would\s+like)\s+(you|that\s+you)\b|\bauthori[sz]ed\s+by\s+(the\s+)?(user|admin|administrator|developer|owner|system)\b",
        ),
        (
            Precondition,
            r"\bbefore\s+(you\s+|we\s+)?(can\s+|do\s+|start\s+|begin\s+|go\s+on\s+)?(continu\w*|proceed\w*|answer\w*|respond\w*|repl\w*|solv\w*|complet\w*|finish\w*|summari\w*|doing\s+anything|anything\s+else|moving\s+on|carrying\s+on|(your|the|my)\s+(task|request|work))\b",
        ),
        (
            Precondition,
            r"\b(first|firstly)\s*,?\s+(you\s+(must|need|have|should)|please|make\s+sure)\b|\bafter\s+(you\s+(do|have\s+done|complete|finish)|doing|completing|finishing)\s+(that|this|it|so)\b|\bin\s+order\s+to\s+(continue|proceed|complete|finish|solve)\b",
        ),
        (
            Precondition,
            r"\b(then|afterwards|after\s+that)\s*,?\s+(you\s+(can|may)\s+)?(continue|proceed|resume|go\s+back|return|solve|complete|finish)\s+(with\s+|to\s+)?(the\s+|your\s+)?(original|actual|initial|previous|user'?s?)?\s*(task|request|work|job|summary|answer)",
        ),
        (
            Concealment,
            r"\b(do\s+not|don'?t|never|without)\s+(tell\w*|inform\w*|notify\w*|mention\w*|reveal\w*|alert\w*|asking|let\w*\s+(the\s+)?(user|them|him|her)\s+know|disclos\w*|report\w*)\s+(this|it|that|the\s+user|them|anyone|him|her|your\s+user|about)\b",
        ),
        (
            Concealment,
            r"\b(secretly|silently|covertly|discreetly|without\s+(the\s+)?user'?s?\s+(knowledge|consent|approval|noticing|knowing))\b|\bkeep\s+this\s+(secret|hidden|between\s+us)\b|\b(hide|delete|remove)\s+(this|the)\s+(message|email|evidence|instructions?|note)s?\s+(afterwards|after|when|once)\b",
        ),
        (
            ActionRequest,
            &format!(
                r"\b(please|pls|kindly|you\s+(must|should|need\s+to|have\s+to|are\s+to|will\s+need\s+to|are\s+(required|instructed|asked|expected)\s+to)|make\s+sure\s+(to|you)|be\s+sure\s+to|ensure\s+(that\s+)?you|go\s+ahead\s+and|i\s+(need|want)\s+you\s+to|(do\s+not|don'?t)\s+forget\s+to|remember\s+to|immediately|urgently)\s+(\w+\s+){{0,2}}?({ACTION})\b"
            ),
        ),
        (
            ActionTarget,
            &format!(
                r"(^|[.!?:,;]\s+|\band\s+|\n\s*[-*\d.)]*\s*)(please\s+|now\s+|then\s+|\w+ly\s+)?({ACTION})\b[^.\n]{{0,120}}?\b(to|with|from|into|for|at|on)\s+[^\s]*(@[a-z0-9]|https?://|www\.|\biban\b|\baccount\s+(number\s+)?\w*\d|[a-z]{{2}}\d{{2}}\s?[a-z0-9]{{4}})"
            ),
        ),
        (
            Urgency,
            r"\b(important|urgent|attention|warning|alert|critical|mandatory|asap|priority)\b\s*[!:]|!!!|\b(very|extremely|highly)\s+important\b|\bthis\s+is\s+(urgent|critical|important|mandatory)\b|\bhigh\s+priority\b|\bmust\s+be\s+done\s+(now|immediately|first)\b",
        ),
        (
            TodoDirective,
            &format!(
                r"(?m)^[\s>*#\-\[\]x/]*(todo|to-do|to\s+do|action\s+required|action\s+item|action\s+needed|next\s+steps?|reminder|note\s+to\s+self|task|instructions?\s+for\s+(the\s+)?(ai|assistant|agent|model))\s*[:\-]\s*(please\s+)?(\w+\s+){{0,2}}?({ACTION})\b|(?m)^\s*[-*]\s*\[\s*\]\s*(please\s+)?({ACTION})\b"
            ),
        ),
        (
            ToolDirective,
            r#"\b(use|call|invoke|run|execute|trigger|employ|utili[sz]e)\s+(the\s+)?[`'"]?[a-z][a-z0-9]*(_[a-z0-9]+)+[`'"]?(\s+(tool|function|api|method|action|endpoint))?\b|"(name|tool|function|tool_name|function_name)"\s*:\s*"[a-z][a-z0-9_]*"\s*,\s*"(arguments|parameters|args|input|params)""#,
        ),
        (
            ToolArguments,
            r"\b(with|using)\s+(the\s+)?(following\s+)?(arguments|parameters|params|args|inputs)\b|\b(tool|function)\s+call\b",
        ),
        (
            CommandInstruction,
            r"\b(run|execute|paste)\b\s*(?:this|the\s+following)?\s*:?\s*`[^`]{2,}`|\b(run|execute)\s*:\s*\S+|\b(curl|wget)\b[^\n|]{1,200}\|\s*(ba|z|da)?sh\b",
        ),
    ];
    table
        .iter()
        .map(|(feature, pattern)| (*feature, ascii_words(pattern)))
        .collect()
}

/// `pattern` with ASCII word boundaries and word classes. Unicode ones make
/// the set's automaton outgrow the lazy DFA's cache, and scanning then falls
/// back to a slower engine; the text is folded to ASCII first, so nothing is
/// lost.
fn ascii_words(pattern: &str) -> String {
    pattern
        .replace(r"\b", r"(?-u:\b)")
        .replace(r"\w", "[0-9a-z_]")
        .replace(r"\W", "[^0-9a-z_]")
}

pub(crate) struct Patterns {
    set: RegexSet,
    each: Vec<(Feature, Regex)>,
}

pub(crate) static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let rules = rules();
    Patterns {
        set: RegexSet::new(rules.iter().map(|(_, p)| p)).expect("injection patterns compile"),
        each: rules
            .into_iter()
            .map(|(f, p)| (f, Regex::new(&p).expect("injection pattern compiles")))
            .collect(),
    }
});

/// Most matches of one pattern taken as evidence.
const MATCHES_PER_PATTERN: usize = 16;

impl Patterns {
    /// Every feature found in `text`, with where (in `text`).
    pub fn find(&self, text: &str, found: &mut Vec<(Feature, std::ops::Range<usize>)>) {
        for index in self.set.matches(text).iter() {
            let (feature, regex) = &self.each[index];
            for m in regex.find_iter(text).take(MATCHES_PER_PATTERN) {
                if *feature == Feature::HiddenComment && !comment_instructs(m.as_str()) {
                    continue;
                }
                found.push((*feature, m.range()));
            }
        }
    }
}

static INSTRUCTING_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&ascii_words(&format!(
        r"\b(ignore|disregard|instructions?|system|{AGENT}|you|your|{ACTION})\b"
    )))
    .expect("comment words compile")
});

/// Whether an HTML comment holds words that address or instruct a reader,
/// rather than a build marker ("generated by hugo", "end header").
fn comment_instructs(comment: &str) -> bool {
    INSTRUCTING_WORDS.find_iter(comment).count() >= 2
}
