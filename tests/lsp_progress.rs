//! `$/progress` of a workspace check (`staticfx.checkWorkspace`) end to end: the server asks
//! for a token, then sends begin, one report per file with a rising percentage, and end with
//! the summary, all on that token; a client without `window.workDoneProgress` gets no
//! progress, only the summary as a log message.

mod lsp_support;

use lsp_support::{file_uri, TestClient};
use serde_json::{json, Value};

const LOUD: &str = "import torch.nn as nn\n\n\nclass Loud(nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n";

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.py", "b.py", "c.py"] {
        std::fs::write(dir.path().join(name), LOUD).unwrap();
    }
    dir
}

async fn start(dir: &std::path::Path, progress: bool) -> TestClient {
    let mut c = TestClient::start(Value::Null);
    c.result(
        "initialize",
        json!({
            "processId": null,
            "capabilities": {"window": {"workDoneProgress": progress}},
            "workspaceFolders": [{"uri": file_uri(dir), "name": "ws"}],
            "initializationOptions": {},
        }),
    )
    .await;
    c.notify("initialized", json!({})).await;
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_check_reports_begin_each_file_and_end() {
    let dir = workspace();
    let mut c = start(dir.path(), true).await;
    let r = c
        .result(
            "workspace/executeCommand",
            json!({"command": "staticfx.checkWorkspace", "arguments": [{}]}),
        )
        .await;
    assert_eq!(r["files"], 3, "{r}");
    let created = c.wait_for("window/workDoneProgress/create", |_| true).await;
    let token = created["token"].clone();
    assert!(token.is_string(), "{created}");
    let mut seen = vec![];
    c.wait_for("$/progress", |p| {
        seen.push(p.clone());
        p["value"]["kind"] == "end"
    })
    .await;
    let kinds: Vec<&str> = seen
        .iter()
        .map(|p| p["value"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["begin", "report", "report", "report", "end"],
        "{seen:?}"
    );
    assert!(seen.iter().all(|p| p["token"] == token), "{seen:?}");
    assert_eq!(seen[0]["value"]["percentage"], 0, "{:?}", seen[0]);
    let percentages: Vec<u64> = seen[1..4]
        .iter()
        .map(|p| p["value"]["percentage"].as_u64().unwrap())
        .collect();
    assert_eq!(percentages, [33, 66, 100]);
    let messages: Vec<&str> = seen[1..4]
        .iter()
        .map(|p| p["value"]["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["1/3 a.py", "2/3 b.py", "3/3 c.py"]);
    assert_eq!(
        seen[4]["value"]["message"], "3 files checked, 3 diagnostics",
        "{:?}",
        seen[4]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_progress_for_a_client_that_does_not_show_it() {
    let dir = workspace();
    let mut c = start(dir.path(), false).await;
    c.result(
        "workspace/executeCommand",
        json!({"command": "staticfx.checkWorkspace", "arguments": [{}]}),
    )
    .await;
    loop {
        let m = c.next_message().await;
        let method = m["method"].as_str().unwrap_or("");
        assert!(
            method != "$/progress" && method != "window/workDoneProgress/create",
            "{m}"
        );
        if method == "window/logMessage"
            && m["params"]["message"]
                .as_str()
                .is_some_and(|t| t.contains("files checked"))
        {
            assert_eq!(m["params"]["message"], "3 files checked, 3 diagnostics");
            break;
        }
    }
}
