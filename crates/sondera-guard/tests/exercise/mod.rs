//! What the fuzz targets (`fuzz/`) do with one input, shared with the test
//! that replays their corpora (`tests/fuzz_corpus.rs`), so both run the same
//! code on the same bytes.

use serde_json::Value;
use sondera_guard::content::{scanned_text, signals};
use sondera_guard::shell::{ShellContext, analyze};
use sondera_guard::{ToolOutcome, classify_tool_call, observation_for, reclassify};

/// The default event size limit of the harness (`--max-event-bytes`):
/// nothing larger reaches the detectors.
pub(crate) const MAX_EVENT_BYTES: usize = 1024 * 1024;

const CONTEXT: ShellContext<'static> = ShellContext {
    working_dir: "/workspace/project",
    workspace_root: "/workspace/project",
    home: "/home/dev",
};

/// The shell analyser on any text; whatever it could not read is said to be so.
pub(crate) fn shell(data: &[u8]) {
    let command = String::from_utf8_lossy(data);
    let analysis = analyze(&command, &CONTEXT);
    if analysis.unparsable.is_some() {
        assert!(
            analysis
                .risks
                .iter()
                .any(|r| r.kind.as_str() == "unparsable"),
            "an unparsable command carries the risk"
        );
    }
}

/// Tool-call classification, the observation of its result (returned or
/// raised) and content scanning: the first line is the tool's name, the rest
/// its arguments (JSON when it parses, else a string), also its result.
pub(crate) fn classify(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (tool, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let arguments: Value =
        serde_json::from_str(rest).unwrap_or_else(|_| Value::String(rest.into()));
    let action = classify_tool_call("c1", tool, &arguments);
    let _ = reclassify(&action, None);
    if let Some(sent) = scanned_text(&action) {
        let _ = signals(&sent, &[]);
    }
    for outcome in [ToolOutcome::Returned(&arguments), ToolOutcome::Raised(rest)] {
        let observation = observation_for(&action, outcome);
        if let Some(observed) = scanned_text(&observation) {
            let _ = signals(&observed, &[]);
        }
    }
}
