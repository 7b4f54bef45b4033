//! `--output-format json-lines`: ruff's JSON message objects, one per line, for tools that
//! stream.

use super::super::check::{render_json, Message};

pub fn render(ms: &[Message]) -> String {
    let serde_json::Value::Array(items) = render_json(ms) else {
        unreachable!("render_json returns an array")
    };
    items
        .iter()
        .map(|v| serde_json::to_string(v).expect("json") + "\n")
        .collect()
}
