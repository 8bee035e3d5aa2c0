//! The Grafana dashboard in deploy/ queries only metrics the server
//! exports, with the suffixes their types give them.

use std::collections::BTreeMap;

const DASHBOARD: &str = include_str!("../../../deploy/grafana/sondera-dashboard.json");

/// Each exported metric family's type, from the `# TYPE` lines.
fn exported() -> BTreeMap<String, String> {
    let metrics = sondera_server::Metrics::default();
    // A family with labels shows once it has a series.
    metrics.adjudicated(
        sondera_model::Decision::Deny,
        "shell_command",
        std::time::Duration::from_millis(1),
    );
    metrics
        .render()
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .map(|(name, kind)| (name.to_string(), kind.to_string()))
        .collect()
}

/// Every `sondera_...` name in the dashboard's queries.
fn queried() -> Vec<String> {
    let dashboard: serde_json::Value = serde_json::from_str(DASHBOARD).unwrap();
    let mut names = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            let mut rest = expr;
            while let Some(at) = rest.find("sondera_") {
                let name: String = rest[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                rest = &rest[at + name.len()..];
                names.push(name);
            }
        }
    }
    names
}

#[test]
fn every_metric_the_dashboard_queries_is_exported() {
    let exported = exported();
    let queried = queried();
    assert!(queried.len() >= 10, "{queried:?}");
    for name in &queried {
        let (family, suffix) = ["_total", "_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s).map(|f| (f, *s)))
            .unwrap_or((name.as_str(), ""));
        let kind = exported
            .get(family)
            .unwrap_or_else(|| panic!("{name}: no metric family {family} in {exported:?}"));
        let fits = match kind.as_str() {
            "counter" => suffix == "_total",
            "histogram" => ["_bucket", "_sum", "_count"].contains(&suffix),
            "gauge" => suffix.is_empty(),
            other => panic!("{family}: unexpected type {other}"),
        };
        assert!(fits, "{name}: a {kind} is not queried as {suffix:?}");
    }
    for family in exported.keys() {
        assert!(
            queried.iter().any(|q| q.starts_with(family.as_str())),
            "{family} is exported but not on the dashboard"
        );
    }
}
