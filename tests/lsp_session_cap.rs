//! With more documents open than the analysis threads keep sessions for
//! (`STATICFX_KEPT_SESSIONS`), the threads keep at most that many each, and every document
//! keeps working: its diagnostics stay published, hover and the graph answer for its text, and
//! an edit is analysed again (a new session for an evicted document). The analysis threads
//! read the variable once, so this file holds one test.

mod lsp_support;

use lsp_support::{lines_of, TestClient};
use serde_json::{json, Value};

const SIMPLE: &str = include_str!("fixtures/lsp/simple_net.py");
/// The server's analysis threads (`lsp::workers`).
const THREADS: u64 = 2;
const DOCUMENTS: usize = 5;

fn uri(i: usize) -> String {
    format!("file:///tmp/staticfx-session-cap/simple_net_{i}.py")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_beyond_the_session_cap_still_answer() {
    // Before the analysis threads start (the first analysis starts them).
    std::env::set_var("STATICFX_KEPT_SESSIONS", "1");
    let mut c = TestClient::start(Value::Null);
    c.initialize(None, json!({}), false).await;
    for i in 0..DOCUMENTS {
        c.open(&uri(i), SIMPLE).await;
    }
    // They are published in any order.
    let mut first: Vec<Option<Vec<Value>>> = vec![None; DOCUMENTS];
    while first.iter().any(Option::is_none) {
        let m = c.next_message().await;
        if m["method"] != "textDocument/publishDiagnostics" || m["params"]["version"] != 1 {
            continue;
        }
        if let Some(i) = (0..DOCUMENTS).find(|&i| m["params"]["uri"] == uri(i)) {
            first[i] = m["params"]["diagnostics"].as_array().cloned();
        }
    }
    for (i, first) in first.iter().enumerate() {
        let first = first.as_deref().unwrap_or_default();
        // `if h.sum() > 0:` on line 17 (0-based 16)
        assert_eq!(lines_of(first, "FX101"), [16], "{i}: {first:?}");
    }
    let sessions = c.kept_analyses().await.0;
    assert!(
        (1..=THREADS).contains(&sessions),
        "{sessions} sessions kept for {DOCUMENTS} documents, at most one per thread"
    );

    // Every document answers, most of them without a session: hover, the graph, an edit.
    for i in 0..DOCUMENTS {
        let hover = c.hover(&uri(i), (14, 17)).await;
        let markdown = hover["contents"]["value"].as_str().unwrap_or_default();
        assert!(markdown.contains("128"), "{i}: {hover}");
        let graph = c
            .result(
                "workspace/executeCommand",
                json!({"command": "staticfx.showGraph", "arguments": [{"uri": uri(i), "class": "SimpleNet"}]}),
            )
            .await;
        assert!(graph.to_string().contains("digraph"), "{i}: {graph}");
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri(i), "version": 2}, "contentChanges": [
                {"range": {"start": {"line": 15, "character": 0}, "end": {"line": 15, "character": 0}},
                 "text": "        h = h + 1\n"}
            ]}),
        )
        .await;
        let second = c.diagnostics(&uri(i), 2).await;
        assert_eq!(lines_of(&second, "FX101"), [17], "{i}: {second:?}");
        let hover = c.hover(&uri(i), (16, 17)).await;
        assert!(hover.to_string().contains("128"), "{i}: {hover}");
        assert!(c.kept_analyses().await.0 <= THREADS, "after {i}");
    }
}
