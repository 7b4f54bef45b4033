//! The server stays alive and consistent: panics in analysis, rapid edits (no stale
//! diagnostics land last), and the show-graph / run-graph commands.

mod lsp_support;

use std::io::Write;
use std::process::{Command, Stdio};

use lsp_support::{cursor, file_uri, TestClient};
use serde_json::{json, Value};

const SIMPLE: &str = include_str!("fixtures/lsp/simple_net.py");

fn workspace(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("simple_net.py");
    std::fs::write(&path, text).unwrap();
    let uri = file_uri(&path);
    (dir, uri)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_analysis_leaves_the_server_answering() {
    let panicking = format!("{SIMPLE}\n{}\n", staticfx::ide::host::PANIC_MARKER);
    let (dir, uri) = workspace(&panicking);
    let mut c = TestClient::start(Value::Null);
    c.initialize(
        Some(dir.path()),
        json!({"testHooks": true, "debounceMs": 0}),
        false,
    )
    .await;
    c.open(&uri, &panicking).await;
    let log = c
        .wait_for("window/logMessage", |p| {
            p["message"].as_str().unwrap_or("").contains("panicked")
        })
        .await;
    assert_eq!(log["type"], 1, "logged as an error");
    // A request that needs the analysis fails cleanly instead of hanging or killing the server.
    let resp = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 14, "character": 9}}),
        )
        .await;
    assert!(resp.get("error").is_some(), "{resp}");
    // Fixing the document brings diagnostics back.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": SIMPLE}]}),
    )
    .await;
    let diags = c.diagnostics(&uri, 2).await;
    assert!(diags.iter().any(|d| d["code"] == "FX902"), "{diags:?}");
    let (_, pos) =
        cursor(&SIMPLE.replace("        out = self.fc2(h)", "        out = self.f$0c2(h)"));
    let h = c.hover(&uri, (pos.0, pos.1)).await;
    assert!(h["contents"]["value"].as_str().unwrap().contains("fc2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rapid_edits_publish_only_newer_versions_and_end_on_the_last() {
    let (dir, uri) = workspace(SIMPLE);
    let mut c = TestClient::start(Value::Null);
    c.initialize(Some(dir.path()), json!({"debounceMs": 0}), false)
        .await;
    c.open(&uri, SIMPLE).await;
    let line = SIMPLE
        .lines()
        .position(|l| l.contains("h = h * 2"))
        .unwrap() as u32;
    let last = 120;
    for v in 2..=last {
        // Alternate between the branch multiplying by 2 and by 3.
        let digit = if v % 2 == 0 { "3" } else { "2" };
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"range": {"start": {"line": line, "character": 20}, "end": {"line": line, "character": 21}}, "text": digit}]}),
        )
        .await;
    }
    let mut seen = Vec::new();
    loop {
        let p = c
            .wait_for("textDocument/publishDiagnostics", |p| p["uri"] == uri)
            .await;
        let v = p["version"].as_i64().unwrap();
        seen.push(v);
        if v == last {
            break;
        }
    }
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "published versions go back in time: {seen:?}"
    );
    assert!(
        seen.len() < 60,
        "edits during an analysis coalesce: {} analyses for {} versions",
        seen.len(),
        last
    );
    let text = c.result("staticfx/documentText", json!({"uri": uri})).await;
    assert!(text["text"].as_str().unwrap().contains("h = h * 3"));
}

fn dot_available() -> bool {
    Command::new("dot")
        .arg("-V")
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn assert_valid_dot(dot: &str) {
    assert!(dot.starts_with("digraph"), "{dot}");
    if !dot_available() {
        eprintln!("graphviz not installed: DOT syntax not checked (apt-get install -y graphviz)");
        return;
    }
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(dot.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "dot rejected the graph: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("<svg"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_graph_by_class_and_by_position() {
    let (dir, uri) = workspace(SIMPLE);
    let mut c = TestClient::start(Value::Null);
    c.initialize(
        Some(dir.path()),
        json!({"exampleInputs": {"SimpleNet": {"x": [1, 784]}}}),
        false,
    )
    .await;
    c.open(&uri, SIMPLE).await;
    let r = c.result("workspace/executeCommand", json!({"command": "staticfx.showGraph", "arguments": [{"uri": uri, "class": "SimpleNet"}]})).await;
    assert_eq!(r["name"], "SimpleNet.forward");
    let dot = r["dot"].as_str().unwrap();
    assert!(dot.contains("fc1") && dot.contains("[1, 128]"), "{dot}");
    assert_valid_dot(dot);
    // Editors read a node's source line and graph-break role from its class.
    let line_of = |needle: &str| SIMPLE.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let node = |name: &str| {
        dot.lines()
            .find(|l| l.contains(&format!("tooltip=\"{name}\"")))
            .unwrap_or_else(|| panic!("no node {name} in {dot}"))
    };
    let if_line = line_of("if h.sum() > 0:");
    assert!(
        node("gt").contains(&format!("class=\"fx-break fx-line-{if_line}\"")),
        "{dot}"
    );
    let mul_line = line_of("h = h * 2");
    assert!(
        node("mul").contains(&format!("class=\"fx-break-branch fx-line-{mul_line}\"")),
        "{dot}"
    );
    assert!(
        node("fc1").contains(&format!("class=\"fx-line-{}\"", line_of("h = self.fc1(x)"))),
        "{dot}"
    );

    // The optimized graph: fc1 and relu fused, the break still marked on its line.
    let r = c.result("workspace/executeCommand", json!({"command": "staticfx.showGraph", "arguments": [{"uri": uri, "class": "SimpleNet", "optimized": true}]})).await;
    assert_eq!(r["optimized"], true, "{r}");
    assert_eq!(r["nodes_removed"], 1, "{r}");
    let opt = r["dot"].as_str().unwrap();
    assert_valid_dot(opt);
    assert!(opt.contains("staticfx.fused.linear_act"), "{opt}");
    assert!(!opt.contains("tooltip=\"relu\""), "{opt}");
    assert!(
        opt.lines()
            .any(|l| l.contains("tooltip=\"gt\"") && l.contains(&format!("fx-line-{if_line}"))),
        "{opt}"
    );

    let (_, pos) =
        cursor(&SIMPLE.replace("        y = self.proj(x)", "        y = self.pr$0oj(x)"));
    let r = c.result("workspace/executeCommand", json!({"command": "staticfx.showGraph", "arguments": [{"uri": uri, "position": {"line": pos.0, "character": pos.1}}]})).await;
    assert_eq!(r["name"], "Mysterious.forward");
    assert_valid_dot(r["dot"].as_str().unwrap());

    let bad = c
        .request(
            "workspace/executeCommand",
            json!({"command": "staticfx.showGraph", "arguments": [{"uri": uri, "class": "Nope"}]}),
        )
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let outside = c.request("workspace/executeCommand", json!({"command": "staticfx.showGraph", "arguments": [{"uri": uri, "position": {"line": 0, "character": 0}}]})).await;
    assert!(outside.get("error").is_some(), "{outside}");
}

const RUNNABLE: &str = "import torch\nimport torch.nn as nn\n\n\nclass Tiny(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 3)\n\n    def forward(self, x):\n        return torch.relu(self.fc(x))\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_graph_runs_a_class_and_reports_what_it_cannot_run() {
    let text = format!(
        "{SIMPLE}\n\n{}",
        RUNNABLE.replace("import torch\nimport torch.nn as nn\n", "")
    );
    let (dir, uri) = workspace(&text);
    let mut c = TestClient::start(Value::Null);
    c.initialize(Some(dir.path()), json!({}), false).await;
    c.open(&uri, &text).await;
    let run = |seed: u64| json!({"command": "staticfx.runGraph", "arguments": [{"uri": uri, "class": "Tiny", "inputs": ["x=4,8"], "seed": seed}]});
    let r = c.request("workspace/executeCommand", run(7)).await;
    let res = &r["result"];
    let out = &res["outputs"][0];
    assert_eq!(out["name"], "output", "{r}");
    assert_eq!(out["shape"], json!([4, 3]), "{r}");
    assert_eq!(out["dtype"], "float32", "{r}");
    let (min, mean, max) = (
        out["min"].as_f64().unwrap(),
        out["mean"].as_f64().unwrap(),
        out["max"].as_f64().unwrap(),
    );
    // ReLU output: non-negative, and with 12 values from a random Linear not all zero.
    assert!(min >= 0.0 && min <= mean && mean <= max && max > 0.0, "{r}");
    assert!(res["summary"].as_str().unwrap().contains("[4, 3]"), "{r}");
    // The seed decides weights and inputs: same seed, same numbers; another seed, others.
    let again = c.request("workspace/executeCommand", run(7)).await;
    assert_eq!(again["result"]["outputs"], res["outputs"]);
    let other = c.request("workspace/executeCommand", run(8)).await;
    assert_ne!(other["result"]["outputs"], res["outputs"]);
    // A position inside the class works like its name.
    let line = text
        .lines()
        .position(|l| l.starts_with("class Tiny"))
        .unwrap();
    let at = c.request("workspace/executeCommand", json!({"command": "staticfx.runGraph", "arguments": [{"uri": uri, "position": {"line": line + 2, "character": 4}, "inputs": ["x=4,8"], "seed": 7}]})).await;
    assert_eq!(at["result"]["outputs"], res["outputs"], "{at}");
    // SimpleNet branches on data: the static graph is not one graph, and the error says why.
    let r = c.request("workspace/executeCommand", json!({"command": "staticfx.runGraph", "arguments": [{"uri": uri, "class": "SimpleNet", "inputs": ["x=2,784"]}]})).await;
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(msg.contains("data-dependent"), "{r}");
    let bad = c.request("workspace/executeCommand", json!({"command": "staticfx.runGraph", "arguments": [{"uri": uri, "class": "Tiny", "inputs": ["x=4by8"]}]})).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_clears_diagnostics_and_shutdown_answers() {
    let (dir, uri) = workspace(SIMPLE);
    let mut c = TestClient::start(Value::Null);
    c.initialize(Some(dir.path()), json!({"debounceMs": 0}), false)
        .await;
    c.open(&uri, SIMPLE).await;
    assert!(!c.diagnostics(&uri, 1).await.is_empty());
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    )
    .await;
    let p = c
        .wait_for("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri
                && p["diagnostics"]
                    .as_array()
                    .map(|d| d.is_empty())
                    .unwrap_or(false)
        })
        .await;
    assert!(p.get("version").is_none() || p["version"].is_null());
    let r = c.request("shutdown", Value::Null).await;
    assert!(r.get("error").is_none(), "{r}");
}
