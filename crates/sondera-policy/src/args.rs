//! Tool arguments as typed Cedar attributes.
//!
//! A generic tool call reaches Cedar with its arguments as JSON text, which a
//! policy can only match as a string. For tools whose argument types the
//! schema declares, the arguments are also given as a typed record, so a policy
//! can write `context.args.transfer_funds.amount > 10000`. The declaration is
//! the common type `Sondera::ToolArgs`: a record with one optional attribute
//! per tool name. It comes from a `.cedarschema` fragment written by hand, or
//! is generated from the parameter JSON Schemas of an agent card
//! ([`tool_args_fragment`]). Conversion is directed by the declared type:
//! attributes the type does not declare are dropped, and arguments that do not
//! fit it are an error, which fails the step closed.

use std::collections::BTreeMap;

use cedar_policy::RestrictedExpression;
use serde_json::Value;
use sondera_model::Tool;

/// A Cedar type that tool arguments can be converted to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ArgType {
    Long,
    String,
    Bool,
    Decimal,
    Set(Box<ArgType>),
    Record(BTreeMap<String, (ArgType, bool)>),
}

/// Why a tool's arguments do not fit the declared type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "arguments of tool `{tool}` do not match the declared Sondera::ToolArgs type at `{path}`: {problem}"
)]
pub struct ArgumentTypeError {
    /// The tool whose declaration types the argument.
    pub tool: String,
    /// The argument's key path.
    pub path: String,
    /// What is wrong with its value.
    pub problem: String,
}

impl ArgType {
    /// Reads a type in the JSON schema format, resolving common types of
    /// `common` (the `commonTypes` of the fragment that declared it).
    pub(crate) fn from_schema_json(value: &Value, common: &Value) -> Result<Self, String> {
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "Long" => Ok(Self::Long),
            "String" => Ok(Self::String),
            "Boolean" | "Bool" => Ok(Self::Bool),
            "Set" => Ok(Self::Set(Box::new(Self::from_schema_json(
                &value["element"],
                common,
            )?))),
            "Record" => {
                let mut attrs = BTreeMap::new();
                if let Some(map) = value.get("attributes").and_then(Value::as_object) {
                    for (name, attr) in map {
                        let required = attr.get("required").and_then(Value::as_bool) != Some(false);
                        attrs.insert(
                            name.clone(),
                            (Self::from_schema_json(attr, common)?, required),
                        );
                    }
                }
                Ok(Self::Record(attrs))
            }
            "Extension" | "EntityOrCommon" => {
                let name = value.get("name").and_then(Value::as_str).unwrap_or("");
                match name {
                    "Long" => Ok(Self::Long),
                    "String" => Ok(Self::String),
                    "Bool" | "Boolean" => Ok(Self::Bool),
                    "decimal" => Ok(Self::Decimal),
                    other => {
                        let local = other.rsplit("::").next().unwrap_or(other);
                        match common.get(local) {
                            Some(def) => Self::from_schema_json(def, common),
                            None => Err(format!(
                                "type `{other}` cannot hold tool arguments (use Long, String, Bool, decimal, sets and records)"
                            )),
                        }
                    }
                }
            }
            other => Err(format!(
                "type `{other}` cannot hold tool arguments (use Long, String, Bool, decimal, sets and records)"
            )),
        }
    }

    /// Converts `value` to this type; `path` names the value in errors.
    pub(crate) fn convert(
        &self,
        value: &Value,
        path: &str,
    ) -> Result<RestrictedExpression, (String, String)> {
        let mismatch = |expected: &str| {
            (
                path.to_string(),
                format!("expected {expected}, found {}", json_kind(value)),
            )
        };
        match (self, value) {
            (Self::Long, Value::Number(n)) => n
                .as_i64()
                .map(RestrictedExpression::new_long)
                .ok_or_else(|| mismatch("an integer")),
            (Self::String, Value::String(s)) => Ok(RestrictedExpression::new_string(s.clone())),
            (Self::Bool, Value::Bool(b)) => Ok(RestrictedExpression::new_bool(*b)),
            (Self::Decimal, Value::Number(n)) => decimal_literal(n)
                .map(RestrictedExpression::new_decimal)
                .ok_or_else(|| mismatch("a number with at most 4 decimal places")),
            (Self::Set(element), Value::Array(items)) => {
                let converted = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| element.convert(item, &format!("{path}[{i}]")))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(RestrictedExpression::new_set(converted))
            }
            (Self::Record(attrs), Value::Object(map)) => {
                let mut fields = Vec::with_capacity(attrs.len());
                for (name, (ty, required)) in attrs {
                    match map.get(name) {
                        Some(Value::Null) | None if !required => {}
                        Some(v) => {
                            fields.push((name.clone(), ty.convert(v, &format!("{path}.{name}"))?))
                        }
                        None => {
                            return Err((
                                format!("{path}.{name}"),
                                "required argument is missing".into(),
                            ));
                        }
                    }
                }
                RestrictedExpression::new_record(fields)
                    .map_err(|e| (path.to_string(), e.to_string()))
            }
            (Self::Long, _) => Err(mismatch("an integer")),
            (Self::String, _) => Err(mismatch("a string")),
            (Self::Bool, _) => Err(mismatch("a boolean")),
            (Self::Decimal, _) => Err(mismatch("a number")),
            (Self::Set(_), _) => Err(mismatch("an array")),
            (Self::Record(_), _) => Err(mismatch("an object")),
        }
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A Cedar `decimal` literal for `n`, if it has at most four decimal places.
fn decimal_literal(n: &serde_json::Number) -> Option<String> {
    if let Some(i) = n.as_i64() {
        return Some(format!("{i}.0"));
    }
    let text = n.to_string();
    let (int, frac) = text.split_once('.')?;
    (frac.len() <= 4 && !frac.contains(['e', 'E']) && !int.contains(['e', 'E'])).then_some(text)
}

/// A schema fragment, in Cedar's JSON form, declaring `Sondera::ToolArgs`
/// from the parameter JSON Schemas of `tools`. Tools without a usable schema
/// are left out; so are properties whose JSON Schema type has no Cedar
/// counterpart. (The JSON form because reading it costs a fraction of what
/// parsing a `.cedarschema` text does, at every start.)
pub fn tool_args_fragment(tools: &[Tool]) -> Value {
    let mut attributes = serde_json::Map::new();
    for tool in tools {
        let Some(schema) = tool.parameters_json_schema.as_ref() else {
            continue;
        };
        if let Some(ty) = json_schema_type(schema) {
            attributes.insert(tool.name.clone(), attribute(ty, false));
        }
    }
    serde_json::json!({
        "Sondera": {
            "entityTypes": {},
            "actions": {},
            "commonTypes": {
                "ToolArgs": { "type": "Record", "attributes": attributes }
            }
        }
    })
}

fn attribute(mut ty: Value, required: bool) -> Value {
    ty["required"] = Value::Bool(required);
    ty
}

fn json_schema_type(schema: &Value) -> Option<Value> {
    use serde_json::json;
    match schema.get("type")?.as_str()? {
        "integer" => Some(json!({ "type": "Long" })),
        "number" => Some(json!({ "type": "Extension", "name": "decimal" })),
        "string" => Some(json!({ "type": "String" })),
        "boolean" => Some(json!({ "type": "Boolean" })),
        "array" => Some(json!({
            "type": "Set",
            "element": json_schema_type(schema.get("items")?)?,
        })),
        "object" => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut fields = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (name, prop) in props {
                    if let Some(ty) = json_schema_type(prop) {
                        let required = required.contains(&name.as_str());
                        fields.insert(name.clone(), attribute(ty, required));
                    }
                }
            }
            Some(json!({ "type": "Record", "attributes": fields }))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn card_schemas_become_a_cedar_fragment() {
        let tool = Tool {
            name: "transfer_funds".into(),
            description: String::new(),
            parameters: Value::Null,
            parameters_json_schema: Some(json!({
                "type": "object",
                "properties": {
                    "amount": {"type": "integer"},
                    "fee": {"type": "number"},
                    "to": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "meta": {"type": "null"}
                },
                "required": ["amount", "to"]
            })),
            response: None,
            response_json_schema: None,
            source: None,
            annotations: None,
        };
        let fragment = tool_args_fragment(&[tool]);
        let parsed = cedar_policy::SchemaFragment::from_json_value(fragment.clone())
            .unwrap_or_else(|e| panic!("generated fragment must read: {e}: {fragment}"));
        let text = parsed.to_cedarschema().unwrap();
        for field in [
            "amount: __cedar::Long",
            "fee?: __cedar::decimal",
            "tags?: Set<__cedar::String>",
            "to: __cedar::String",
        ] {
            assert!(text.contains(field), "{field} missing from {text}");
        }
        assert!(text.contains("transfer_funds?: {"), "{text}");
        assert!(!text.contains("meta"), "{text}");
        let common = &fragment["Sondera"]["commonTypes"];
        let ty = ArgType::from_schema_json(&common["ToolArgs"], common).unwrap();
        let ArgType::Record(tools) = ty else {
            panic!("{ty:?}")
        };
        let ArgType::Record(args) = &tools["transfer_funds"].0 else {
            panic!("{tools:?}")
        };
        assert_eq!(args["amount"], (ArgType::Long, true));
        assert_eq!(args["fee"], (ArgType::Decimal, false));
    }

    #[test]
    fn conversion_follows_the_declared_type() {
        let ty = ArgType::Record(BTreeMap::from([
            ("amount".to_string(), (ArgType::Long, true)),
            ("fee".to_string(), (ArgType::Decimal, false)),
        ]));
        assert!(
            ty.convert(
                &json!({"amount": 5, "fee": 1.25, "extra": "dropped"}),
                "args"
            )
            .is_ok()
        );
        assert!(ty.convert(&json!({"amount": 5}), "args").is_ok());
        let (path, problem) = ty.convert(&json!({"amount": "5"}), "args").unwrap_err();
        assert_eq!(
            (path.as_str(), problem.as_str()),
            ("args.amount", "expected an integer, found a string")
        );
        let (path, problem) = ty.convert(&json!({"fee": 1}), "args").unwrap_err();
        assert_eq!(
            (path.as_str(), problem.as_str()),
            ("args.amount", "required argument is missing")
        );
        assert!(
            ty.convert(&json!({"amount": 1, "fee": 0.12345}), "args")
                .is_err()
        );
    }
}
