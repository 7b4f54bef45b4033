//! A file whose classes are built from a config is published in two stages: the default
//! traces' findings, then the breaks only a config flag reaches. The second stage must reach
//! the client (in the live document's coordinates), and the first stage, when it was sent,
//! never comes after it.

mod lsp_support;

use lsp_support::TestClient;
use serde_json::Value;

// Not a file under tests/fixtures: `tests/surfaces_agree` compares the first publication,
// which for this file lacks the flagged break by design.
const FLAG_ONLY_BREAK: &str = r#"# A break only `output_attentions=True` reaches, in a module built from a config (a local
# `PreTrainedConfig` base stands for transformers' own).
import torch
from torch import nn


class PreTrainedConfig:
    pass


class TinyConfig(PreTrainedConfig):
    def __init__(self, hidden_size=8, output_attentions=False):
        self.hidden_size = hidden_size
        self.output_attentions = output_attentions


class Block(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.config = config
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        out = self.proj(hidden_states)
        if self.config.output_attentions:
            print("attention weights", out)
        return out
"#;

const URI: &str = "file:///tmp/staticfx-staged/flag_only_break.py";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breaks_only_a_config_flag_reaches_are_published() {
    let text = FLAG_ONLY_BREAK;
    let mut c = TestClient::start(Value::Null);
    c.initialize(None, serde_json::json!({}), false).await;
    c.open(URI, text).await;
    let print_line = text
        .lines()
        .position(|l| l.trim_start().starts_with("print("))
        .unwrap() as u64;
    let flagged = |d: &Value| {
        d["code"] == "FX105"
            && d["range"]["start"]["line"] == print_line
            && d["message"]
                .as_str()
                .is_some_and(|m| m.contains("(only with `output_attentions=True`)"))
    };
    let published = c
        .wait_for("textDocument/publishDiagnostics", |p| {
            p["uri"] == URI
                && p["version"] == 1
                && p["diagnostics"]
                    .as_array()
                    .is_some_and(|ds| ds.iter().any(flagged))
        })
        .await;
    assert_eq!(
        published["diagnostics"].as_array().unwrap().len(),
        1,
        "{published}"
    );
    // Nothing older lands after it: ask for a request's answer, which comes after every
    // publication already queued, and look at what came in between.
    c.request("shutdown", Value::Null).await;
    while let Ok(m) =
        tokio::time::timeout(std::time::Duration::from_millis(200), c.next_message()).await
    {
        if m["method"] == "textDocument/publishDiagnostics" {
            let ds = m["params"]["diagnostics"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert!(ds.iter().any(flagged), "a stale publication came last: {m}");
        }
    }
}
