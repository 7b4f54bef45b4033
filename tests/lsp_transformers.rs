//! The editor on a real transformers modeling file (`$STATICFX_TRANSFORMERS_ROOT`, the directory
//! holding `transformers/`; skipped with a note when unset): opening modeling_llama.py in the
//! server publishes diagnostics, and hover on `self.q_proj(hidden_states)` shows the shape the
//! default `LlamaConfig` gives (hidden size 4096), per class, with no example inputs.
mod corpus_support;

mod lsp_support;

use std::path::PathBuf;

use lsp_support::{file_uri, TestClient};
use serde_json::{json, Value};

fn transformers_root() -> Option<PathBuf> {
    corpus_support::corpus_root("STATICFX_TRANSFORMERS_ROOT", "transformers")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_on_llama_attention_shows_the_default_config_shape() {
    let Some(root) = transformers_root() else {
        return;
    };
    let path = root.join("transformers/models/llama/modeling_llama.py");
    let text = std::fs::read_to_string(&path).unwrap();
    let uri = file_uri(&path);
    let mut options = json!({"targetVersion": "torch==2.15"});
    // transformers' configs import huggingface_hub: the test venv of scripts/test-all.sh
    if let Some(venv) = std::env::var_os("STATICFX_USER_VENV") {
        options["python"] = json!(PathBuf::from(venv));
    }
    let mut c = TestClient::start(Value::Null);
    c.initialize(Some(&root), options, false).await;
    c.open(&uri, &text).await;
    let diags = c.diagnostics(&uri, 1).await;
    assert!(
        diags.iter().all(|d| d["code"] != "FX901"),
        "modeling_llama.py parses: {diags:?}"
    );

    let call = "self.q_proj(hidden_states)";
    let at = text
        .find(call)
        .expect("LlamaAttention.forward calls q_proj");
    let line = text[..at].matches('\n').count() as u32;
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    // on `q_proj`, inside the call
    let column = text[line_start..at + "self.q".len()].encode_utf16().count() as u32;
    let hover = c.hover(&uri, (line, column)).await;
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        shown.contains("q_proj") && shown.contains("[s0, s1, 4096]"),
        "{shown}"
    );
}
