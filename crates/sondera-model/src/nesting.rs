//! How deep free-form JSON (tool arguments, outputs) may nest.
//!
//! Serialising, cloning and dropping a `serde_json::Value` recurse once per
//! level, so a value nested thousands deep exhausts the stack wherever it is
//! touched. Integrations check values against [`MAX_JSON_DEPTH`] with
//! [`json_depth_exceeds`], which does not recurse, before anything else
//! touches them.

use serde_json::Value;

/// How deep free-form JSON in an event may nest: below what every reader of
/// events accepts. The tightest is gRPC, whose decoder stops at 100 nested
/// messages; a JSON object level takes three of them (value, object,
/// field) and the envelope around an event's JSON up to about ten (a
/// listing of stored events, the event, its payload, an agent card's tool),
/// so 24 levels leave room. Every way in refuses an event nested deeper, so
/// nothing accepted is ever unreadable.
pub const MAX_JSON_DEPTH: usize = 24;

/// Whether `value` nests more than `limit` arrays and objects deep.
pub fn json_depth_exceeds(value: &Value, limit: usize) -> bool {
    // Every event's JSON passes through here, so no allocation per node:
    // one stack of (value, depth) for the whole walk.
    let mut stack = vec![(value, 0usize)];
    while let Some((item, depth)) = stack.pop() {
        match item {
            Value::Array(items) if !items.is_empty() => {
                if depth >= limit {
                    return true;
                }
                stack.extend(items.iter().map(|child| (child, depth + 1)));
            }
            Value::Object(fields) if !fields.is_empty() => {
                if depth >= limit {
                    return true;
                }
                stack.extend(fields.values().map(|child| (child, depth + 1)));
            }
            Value::Array(_) | Value::Object(_) if depth >= limit => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `levels` objects, each holding an array holding the next (by moves:
    /// `json!` would copy the inner value, recursively).
    fn nested(levels: usize) -> Value {
        let mut value = Value::from("leaf");
        for _ in 0..levels / 2 {
            let mut object = serde_json::Map::new();
            object.insert("a".into(), Value::Array(vec![value]));
            value = Value::Object(object);
        }
        value
    }

    #[test]
    fn counts_arrays_and_objects() {
        assert!(!json_depth_exceeds(&json!("text"), 0));
        assert!(!json_depth_exceeds(&json!({"a": 1}), 1));
        assert!(json_depth_exceeds(&json!({"a": [1]}), 1));
        assert!(!json_depth_exceeds(&nested(24), 24));
        assert!(json_depth_exceeds(&nested(26), 24));
    }

    #[test]
    fn deep_values_are_measured_without_recursing() {
        let deep = nested(50_000);
        assert!(json_depth_exceeds(&deep, MAX_JSON_DEPTH));
        // Dropping it recursively would overflow the stack; take it apart.
        let mut value = deep;
        while let Value::Object(mut fields) = value {
            let Some(Value::Array(mut items)) = fields.remove("a") else {
                break;
            };
            value = items.pop().unwrap_or(Value::Null);
        }
    }
}
