//! The OpenAPI document's request schemas are the wire types' own, so a
//! request the document calls valid is one the service accepts.

use serde_json::{Value, json};

const DOCUMENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/openapi.json");

/// `schema` with its definitions moved into `components`, refs rewritten.
fn merge(schemas: &mut serde_json::Map<String, Value>, name: &str, mut schema: Value) {
    let object = schema.as_object_mut().expect("a schema is an object");
    object.remove("$schema");
    object.remove("title");
    if let Some(Value::Object(defs)) = object.remove("$defs") {
        for (def, body) in defs {
            schemas.insert(def, body);
        }
    }
    schemas.insert(name.to_string(), schema);
}

fn rewrite_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                if key == "$ref"
                    && let Value::String(target) = inner
                {
                    *target = target.replace("#/$defs/", "#/components/schemas/");
                }
                rewrite_refs(inner);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

fn with_wire_schemas(mut document: Value) -> Value {
    let schemas = document["components"]["schemas"]
        .as_object_mut()
        .expect("components.schemas");
    merge(schemas, "Event", sondera_model::event_json_schema());
    let grant = serde_json::to_value(schemars::schema_for!(sondera_model::Grant)).unwrap();
    merge(schemas, "Grant", grant);
    let approval = serde_json::to_value(schemars::schema_for!(sondera_model::Approval)).unwrap();
    merge(schemas, "Approval", approval);
    // The server keeps standing approvals only.
    schemas.insert(
        "StandingGrant".into(),
        json!({
            "allOf": [
                {"$ref": "#/components/schemas/Grant"},
                {"type": "object", "properties": {"scope": {"const": "always"}}}
            ]
        }),
    );
    let mut document = document;
    rewrite_refs(&mut document);
    document["paths"]["/v1/agents/{id}/grants"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"] = json!({"$ref": "#/components/schemas/StandingGrant"});
    document
}

/// Regenerate with `SONDERA_UPDATE_SCHEMA=1 cargo test -p sondera-server --test openapi`.
#[test]
fn the_request_schemas_are_the_wire_types() {
    let served: Value = serde_json::from_str(sondera_server::OPENAPI).unwrap();
    let generated = with_wire_schemas(served.clone());
    if std::env::var_os("SONDERA_UPDATE_SCHEMA").is_some() {
        let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
        std::fs::write(DOCUMENT, text).unwrap();
        return;
    }
    let checked_in = served;
    assert!(
        checked_in == generated,
        "src/openapi.json is stale: run SONDERA_UPDATE_SCHEMA=1 cargo test -p sondera-server --test openapi"
    );
}
