//! The editor on a real transformers modeling file (`$STATICFX_TRANSFORMERS_ROOT`, the directory
//! holding `transformers/`; skipped with a note when unset): opening modeling_llama.py in the
//! server publishes diagnostics, and hover on `self.q_proj(hidden_states)` shows the shape the
//! default `LlamaConfig` gives (hidden size 4096), per class, with no example inputs.
mod corpus_support;

mod lsp_support;

use std::path::PathBuf;

use lsp_support::{corpus_client, file_uri};
use serde_json::json;

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
    let mut c = corpus_client(&root).await;
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

    // Inlay hints for the whole file: the same symbolic dims, one per assignment traced.
    let started = std::time::Instant::now();
    let hints = c
        .result(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100000, "character": 0}}}),
        )
        .await;
    let took = started.elapsed();
    let hints = hints.as_array().cloned().unwrap_or_default();
    let lines: Vec<&str> = text.split('\n').collect();
    for h in &hints {
        let l = h["position"]["line"].as_u64().unwrap() as usize;
        eprintln!(
            "{:>5}: {}  {}",
            l + 1,
            lines[l].trim(),
            h["label"].as_str().unwrap()
        );
    }
    eprintln!("{} inlay hints in {took:?}", hints.len());
    let label_on = |needle: &str| {
        hints
            .iter()
            .find(|h| lines[h["position"]["line"].as_u64().unwrap() as usize].contains(needle))
            .map(|h| h["label"].as_str().unwrap().to_string())
    };
    assert_eq!(
        label_on("hidden_states = self.norm(hidden_states)").as_deref(),
        Some("# [s0, s1, 4096]")
    );
    assert_eq!(
        label_on("cos, sin = position_embeddings").as_deref(),
        Some("# cos: [s0, s1, 128], sin: [s0, s1, 128]")
    );
    // Every hint on a one-line `name = ...` says what hover on the name says (where hover shows
    // one); where hover says
    // the shape is unknown (`view` of symbolic sizes with a -1, today), there is no hint.
    let mut compared = 0;
    for (l, line) in lines.iter().enumerate() {
        let Some((target, _)) = line.split_once(" = ") else {
            continue;
        };
        let name = target.trim();
        if !name.chars().all(|ch| ch.is_alphanumeric() || ch == '_') || name.is_empty() {
            continue;
        }
        let column = line.find(name).unwrap() as u32;
        let hover = c.hover(&uri, (l as u32, column)).await;
        let shown = hover["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let hint = hints
            .iter()
            .find(|h| h["position"]["line"].as_u64() == Some(l as u64))
            .map(|h| h["label"].as_str().unwrap().to_string());
        match hint {
            // Hover has nothing to say on an alias (`residual = hidden_states`).
            Some(_) if !shown.contains("shape `") => {}
            Some(label) => {
                let shape = label.trim_start_matches("# ");
                assert!(
                    shown.contains(&format!("shape `{shape}`")),
                    "line {}: {label} vs {shown}",
                    l + 1
                );
                compared += 1;
            }
            None => assert!(
                !shown.contains("shape `[") || shown.contains("unknown") || shown.contains("?"),
                "line {}: no hint, but hover knows the shape: {shown}",
                l + 1
            ),
        }
    }
    eprintln!("{compared} hints equal to hover");
    assert!(compared >= 3, "{compared}");
    let lenses = c
        .result(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri}}),
        )
        .await;
    for l in lenses.as_array().unwrap() {
        eprintln!(
            "lens line {}: {}",
            l["range"]["start"]["line"].as_u64().unwrap() + 1,
            l["command"]["title"]
        );
    }
}
