//! The shell analyser is built in layers (see the `shell` module's docs):
//! its files import one another one way only, and the walk, which
//! describes what runs, reads nothing of the facts computed from it.

use std::collections::{BTreeMap, BTreeSet};

const SHELL_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
/// The files that compute facts from the walk's description.
const FACTS: &[&str] = &[
    "code", "defences", "effects", "egress", "later", "risks", "sources", "sql",
];
/// The files that describe what a command runs.
const DESCRIPTION: &[&str] = &[
    "walk",
    "statics",
    "wrappers",
    "embedded",
    "interpreters",
    "make",
    "spawns",
    "written",
];

/// Each file of the shell module and the sibling modules its code (not its
/// comments, not its tests) names through `super::` or `crate::`.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(SHELL_DIR).expect("the shell module's directory") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file");
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let mut named = BTreeSet::new();
        for line in code.lines() {
            let line = line.split("//").next().unwrap_or_default();
            let paths = line
                .match_indices("super::")
                .chain(line.match_indices("crate::"));
            for (at, prefix) in paths {
                let rest = &line[at + prefix.len()..];
                let names = match rest.strip_prefix('{') {
                    Some(list) => list.split('}').next().unwrap_or_default().to_string(),
                    None => rest.to_string(),
                };
                for item in names.split(',') {
                    let module: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if module
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_lowercase())
                    {
                        named.insert(module);
                    }
                }
            }
        }
        named.remove(&name);
        graph.insert(name, named);
    }
    graph
}

fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(module) = todo.pop() {
        for next in graph.get(&module).into_iter().flatten() {
            if seen.insert(next.clone()) {
                todo.push(next.clone());
            }
        }
    }
    seen
}

#[test]
fn the_shell_files_import_one_another_one_way() {
    let graph = imports();
    assert!(graph.len() >= 10, "found only {:?}", graph.keys());
    for module in graph.keys() {
        assert!(
            !reaches(&graph, module).contains(module),
            "`{module}` imports itself through {:?}: the shell files form a cycle",
            graph[module]
        );
    }
}

#[test]
fn the_walk_computes_no_facts() {
    let graph = imports();
    for module in DESCRIPTION {
        let reached = reaches(&graph, module);
        for facts in FACTS {
            assert!(
                !reached.contains(*facts),
                "`{module}` describes what runs but reaches `{facts}`, which computes facts"
            );
        }
    }
}
