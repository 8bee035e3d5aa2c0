//! Walking the strings inside a tool's JSON arguments, within fixed bounds.

use serde_json::Value;

/// Deepest nesting of arguments walked; deeper values are not visited.
const MAX_DEPTH: usize = 32;
/// Most strings visited in one value.
const MAX_STRINGS: usize = 4096;

/// Calls `visit(key, text)` for every string in `value` (object keys are not
/// visited as text), with the key of the object member holding it, if any.
/// Stops after [`MAX_STRINGS`] strings or below [`MAX_DEPTH`] levels, so the
/// cost is bounded whatever the agent sends.
pub(crate) fn visit_strings<'a>(
    value: &'a Value,
    visit: &mut impl FnMut(Option<&'a str>, &'a str),
) {
    let mut budget = MAX_STRINGS;
    walk(value, None, 0, &mut budget, visit);
}

fn walk<'a>(
    value: &'a Value,
    key: Option<&'a str>,
    depth: usize,
    budget: &mut usize,
    visit: &mut impl FnMut(Option<&'a str>, &'a str),
) {
    if depth > MAX_DEPTH || *budget == 0 {
        return;
    }
    match value {
        Value::String(text) => {
            *budget -= 1;
            visit(key, text);
        }
        Value::Array(items) => {
            for item in items {
                walk(item, key, depth + 1, budget, visit);
            }
        }
        Value::Object(members) => {
            for (k, v) in members {
                walk(v, Some(k), depth + 1, budget, visit);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// The strings in `value` written like file paths (`/x`, `./x`, `../x`,
/// `~/x`, `$HOME/x`, or a relative path with a directory), for checking
/// against path catalogues.
pub fn path_arguments(value: &Value) -> Vec<&str> {
    let mut paths = Vec::new();
    visit_strings(value, &mut |_, text| {
        if looks_like_path(text) {
            paths.push(text);
        }
    });
    paths
}

fn looks_like_path(text: &str) -> bool {
    text.len() < 4096
        && !text.contains(['\n', ' '])
        && !text.contains("://")
        && (text.starts_with(['/', '~', '.']) || text.starts_with("$HOME") || text.contains('/'))
}

/// Argument keys that hold what a search tool looks for.
const PATTERN_KEYS: &[&str] = &["pattern", "regex", "query", "search", "q", "needle", "text"];

/// The search patterns among a tool's arguments (the values of keys such as
/// `pattern`, `regex` and `query`).
pub fn search_patterns(value: &Value) -> impl Iterator<Item = &str> {
    let mut patterns = Vec::new();
    visit_strings(value, &mut |key, text| {
        if key.is_some_and(|k| PATTERN_KEYS.iter().any(|p| k.eq_ignore_ascii_case(p))) {
            patterns.push(text);
        }
    });
    patterns.into_iter()
}

/// Every string in `value`, one per line.
pub(crate) fn joined_strings(value: &Value) -> String {
    let mut text = String::new();
    visit_strings(value, &mut |_, s| {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(s);
    });
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_visited_with_their_keys() {
        let mut seen = Vec::new();
        visit_strings(
            &json!({"a": "x", "b": [1, "y", {"c": "z"}], "d": null}),
            &mut |k, s| seen.push((k.map(str::to_string), s.to_string())),
        );
        seen.sort();
        let expected =
            [("a", "x"), ("b", "y"), ("c", "z")].map(|(k, s)| (Some(k.to_string()), s.to_string()));
        assert_eq!(seen, expected);
        assert_eq!(joined_strings(&json!("only")), "only");
    }

    #[test]
    fn deep_and_wide_values_are_cut_off() {
        let mut deep = json!("bottom");
        for _ in 0..100 {
            deep = json!([deep]);
        }
        assert_eq!(joined_strings(&deep), "", "below the depth bound");
        let wide = Value::Array(vec![json!("s"); MAX_STRINGS * 2]);
        let mut count = 0;
        visit_strings(&wide, &mut |_, _| count += 1);
        assert_eq!(count, MAX_STRINGS);
    }
}
