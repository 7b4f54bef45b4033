//! Of the documents only opened, not edited, the newest alone keeps its analysis: its result
//! for requests and, once the analysis threads are idle, its session (each thread kept its
//! own newest before). Edited documents keep theirs, and every document still answers.

mod lsp_support;

use lsp_support::{lines_of, TestClient};
use serde_json::{json, Value};

const SIMPLE: &str = include_str!("fixtures/lsp/simple_net.py");
const DOCUMENTS: usize = 6;

fn uri(i: usize) -> String {
    format!("file:///tmp/staticfx-only-opened/simple_net_{i}.py")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_documents_only_opened_the_newest_alone_keeps_its_analysis() {
    let mut c = TestClient::start(Value::Null);
    c.initialize(None, json!({}), false).await;
    for i in 0..DOCUMENTS {
        c.open(&uri(i), SIMPLE).await;
    }
    let mut answered = [false; DOCUMENTS];
    while answered.contains(&false) {
        let m = c.next_message().await;
        if m["method"] != "textDocument/publishDiagnostics" || m["params"]["version"] != 1 {
            continue;
        }
        if let Some(i) = (0..DOCUMENTS).find(|&i| m["params"]["uri"] == uri(i)) {
            let diagnostics = m["params"]["diagnostics"].as_array().unwrap();
            // `if h.sum() > 0:` on line 17 (0-based 16)
            assert_eq!(lines_of(diagnostics, "FX101"), [16], "{i}");
            answered[i] = true;
        }
    }
    assert_eq!(c.kept_results().await, 1, "results kept after opening");
    // The documents went to both threads (hashed by uri); each kept its newest until idle.
    assert_eq!(c.sessions_reaching(1).await, 1, "sessions kept once idle");

    // Whichever finished last, the last document becomes the newest analysed.
    let last = DOCUMENTS - 1;
    let hover = c.hover(&uri(last), (14, 17)).await;
    assert!(hover.to_string().contains("128"), "{hover}");
    assert_eq!(
        c.kept_results().await,
        1,
        "results kept after hovering {last}"
    );

    // An edited document keeps its analysis beside the newest opened one.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(0), "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 15, "character": 0}, "end": {"line": 15, "character": 0}},
             "text": "        h = h + 1\n"}
        ]}),
    )
    .await;
    let edited = c.diagnostics(&uri(0), 2).await;
    assert_eq!(lines_of(&edited, "FX101"), [17], "{edited:?}");
    assert_eq!(c.kept_results().await, 2, "results kept after an edit");

    // Every other document still answers, each becoming the newest analysed in turn.
    for i in 1..last {
        let hover = c.hover(&uri(i), (14, 17)).await;
        let markdown = hover["contents"]["value"].as_str().unwrap_or_default();
        assert!(markdown.contains("128"), "{i}: {hover}");
        assert_eq!(c.kept_results().await, 2, "results kept after hovering {i}");
    }
    // The edited document's session and the newest opened one's.
    assert_eq!(c.sessions_reaching(2).await, 2, "sessions kept at the end");
    let hover = c.hover(&uri(0), (16, 17)).await;
    assert!(hover.to_string().contains("128"), "{hover}");
}
