//! Sessions of idle and closed documents are evicted from the analysis threads, and the
//! documents keep working: their published diagnostics stay, and the next edit, hover or
//! graph request answers for the current text, the edit starting a session again.
//! `STATICFX_SESSION_IDLE_MS` shortens the idle time; the analysis threads read it once, so
//! this file holds one test.

mod lsp_support;

use std::time::Duration;

use lsp_support::{lines_of, TestClient};
use serde_json::{json, Value};

const SIMPLE: &str = include_str!("fixtures/lsp/simple_net.py");
const URI: &str = "file:///tmp/staticfx-eviction/simple_net.py";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evicted_sessions_come_back_on_the_next_edit() {
    // Before the analysis threads start (the first analysis starts them).
    std::env::set_var("STATICFX_SESSION_IDLE_MS", "300");
    let mut c = TestClient::start(Value::Null);
    c.initialize(None, json!({}), false).await;
    c.open(URI, SIMPLE).await;
    let first = c.diagnostics(URI, 1).await;
    // `if h.sum() > 0:` on line 17 (0-based 16)
    assert_eq!(lines_of(&first, "FX101"), [16], "{first:?}");
    assert_eq!(c.kept_analyses().await, (1, 1));

    // Idle: the session and its library go; nothing is published for the document.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(c.kept_analyses().await, (0, 0));
    assert!(
        !c.backlog
            .iter()
            .any(|m| m["method"] == "textDocument/publishDiagnostics"),
        "{:?}",
        c.backlog
    );

    // Hover and the graph still answer.
    let hover = c.hover(URI, (14, 17)).await;
    let markdown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(markdown.contains("128"), "{hover}");
    let graph = c
        .result(
            "workspace/executeCommand",
            json!({"command": "staticfx.showGraph", "arguments": [{"uri": URI, "class": "SimpleNet"}]}),
        )
        .await;
    assert!(graph.to_string().contains("digraph"), "{graph}");

    // An edit starts a session again, and the one after it continues that session.
    let insert = |line: u32, text: &str, version: i64| {
        json!({"textDocument": {"uri": URI, "version": version}, "contentChanges": [
            {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, "text": text}
        ]})
    };
    c.notify(
        "textDocument/didChange",
        insert(15, "        h = h + 1\n", 2),
    )
    .await;
    let second = c.diagnostics(URI, 2).await;
    assert_eq!(lines_of(&second, "FX101"), [17], "{second:?}");
    assert_eq!(c.kept_analyses().await.0, 1);
    c.notify(
        "textDocument/didChange",
        insert(15, "        h = h - 1\n", 3),
    )
    .await;
    let third = c.diagnostics(URI, 3).await;
    assert_eq!(lines_of(&third, "FX101"), [18], "{third:?}");
    let hover = c.hover(URI, (16, 17)).await;
    assert!(hover.to_string().contains("128"), "{hover}");

    // Closing the document drops its session at once (within a third of the idle time).
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": URI}}),
    )
    .await;
    let mut sessions = u64::MAX;
    for _ in 0..10 {
        sessions = c.kept_analyses().await.0;
        if sessions == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(sessions, 0);
}
