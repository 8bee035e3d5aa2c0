//! Every input the fuzz targets kept (`fuzz/corpus/`: seeds from the policy
//! corpora and what fuzzing found, crashes fixed since included) runs
//! through the same code here, so a fixed finding stays fixed without a
//! nightly toolchain.

mod exercise;

use std::path::PathBuf;

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut inputs: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .filter(|(_, bytes)| bytes.len() <= exercise::MAX_EVENT_BYTES)
        .collect();
    inputs.sort();
    inputs
}

/// Runs every kept input of `target` through `exercise`, naming the input
/// that panics.
fn replay(target: &str, exercise: fn(&[u8])) {
    let inputs = inputs(target);
    assert!(inputs.len() > 100, "{} inputs", inputs.len());
    for (path, bytes) in inputs {
        let outcome = std::panic::catch_unwind(|| exercise(&bytes));
        assert!(outcome.is_ok(), "{}", path.display());
    }
}

#[test]
fn the_shell_corpus_is_analysed_without_a_panic() {
    replay("shell", exercise::shell);
}

#[test]
fn the_classification_corpus_is_judged_without_a_panic() {
    replay("classify", exercise::classify);
}
