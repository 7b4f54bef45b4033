//! A thread that went idle first trims its sessions of documents only opened while its own
//! is the newest; a document opened after that on the other thread makes it old, and the
//! idle thread is woken to drop it (`lsp::workers`). The analysis threads are the process's,
//! so this file holds one test.

mod lsp_support;

use std::time::Duration;

use lsp_support::TestClient;
use serde_json::{json, Value};

const SIMPLE: &str = include_str!("fixtures/lsp/simple_net.py");

fn uri(i: usize) -> String {
    format!("file:///tmp/staticfx-idle-trim/simple_net_{i}.py")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_idle_before_the_newest_opened_document_drops_its_session() {
    let mut c = TestClient::start(Value::Null);
    c.initialize(None, json!({}), false).await;
    let thread = |i: usize| staticfx::lsp::analysis_thread_of(&uri(i)).unwrap();
    let other = (1..64)
        .find(|&i| thread(i) != thread(0))
        .expect("a uri on the other thread");
    c.open(&uri(0), SIMPLE).await;
    c.diagnostics(&uri(0), 1).await;
    // Its thread trims while it is the newest: kept.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(c.kept_analyses().await.0, 1, "the first document's session");
    // That request was a job on its thread too: let the thread trim after it, and go idle.
    tokio::time::sleep(Duration::from_millis(800)).await;
    c.open(&uri(other), SIMPLE).await;
    c.diagnostics(&uri(other), 1).await;
    // No request meanwhile: a `keptAnalyses` request is a job on every thread, and would wake
    // the idle one itself. It counts before that thread trims again.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        c.kept_analyses().await.0,
        1,
        "sessions once both threads are idle"
    );
}
