//! Protocol tests: the server in-process, driven with raw JSON-RPC.

mod lsp_support;

use lsp_support::{cursor, file_uri, TestClient};
use serde_json::{json, Value};

const SIMPLE: &str = include_str!("fixtures/lsp/simple_net.py");

/// A workspace holding one file with `text`; returns (dir guard, uri).
fn workspace(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let uri = file_uri(&path);
    (dir, uri)
}

fn codes(diags: &[Value]) -> Vec<String> {
    diags
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("").to_string())
        .collect()
}

fn hover_text(h: &Value) -> String {
    h["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_negotiates_position_encoding() {
    let mut c = TestClient::start(Value::Null);
    let res = c.initialize(None, json!({}), true).await;
    assert_eq!(res["capabilities"]["positionEncoding"], "utf-8");
    assert_eq!(
        res["capabilities"]["textDocumentSync"], 2,
        "incremental sync"
    );
    let cmds = res["capabilities"]["executeCommandProvider"]["commands"]
        .as_array()
        .unwrap();
    assert!(cmds.contains(&json!("staticfx.showGraph")));
    let mut c = TestClient::start(Value::Null);
    let res = c.initialize(None, json!({}), false).await;
    assert_eq!(res["capabilities"]["positionEncoding"], "utf-16");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_on_open_and_on_change() {
    let (dir, uri) = workspace("simple_net.py", SIMPLE);
    let mut c = TestClient::start(Value::Null);
    c.initialize(Some(dir.path()), json!({"debounceMs": 0}), false)
        .await;
    c.open(&uri, SIMPLE).await;
    let diags = c.diagnostics(&uri, 1).await;
    let limit = diags
        .iter()
        .find(|d| d["code"] == "FX902")
        .unwrap_or_else(|| panic!("analysis limit in {diags:?}"));
    assert_eq!(
        limit["severity"], 3,
        "analysis limits are Information, not warnings"
    );
    assert_eq!(limit["source"], "staticfx");
    let line = SIMPLE
        .lines()
        .position(|l| l.contains("not_defined_anywhere"))
        .unwrap();
    assert_eq!(limit["range"]["start"]["line"], line);
    let brk = diags
        .iter()
        .find(|d| d["code"] == "FX101")
        .expect("data-dependent branch");
    assert_eq!(brk["severity"], 2);
    assert_eq!(
        brk["codeDescription"]["href"],
        "https://meta-pytorch.org/compile-graph-break-site/gb/gb0170.html",
        "the break links Dynamo's page for its gb id"
    );
    assert_eq!(
        brk["range"]["start"]["line"],
        SIMPLE
            .lines()
            .position(|l| l.contains("if h.sum()"))
            .unwrap()
    );

    // Defining the missing name removes the limit, on the new version only.
    let def = "def not_defined_anywhere(t):\n    return t\n\n\n";
    let at = SIMPLE
        .lines()
        .position(|l| l.starts_with("class SimpleNet"))
        .unwrap();
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {"start": {"line": at, "character": 0}, "end": {"line": at, "character": 0}}, "text": def}]}),
    )
    .await;
    let diags = c.diagnostics(&uri, 2).await;
    assert!(!codes(&diags).contains(&"FX902".to_string()), "{diags:?}");
    assert!(codes(&diags).contains(&"FX101".to_string()));

    // A syntax error is an Error.
    c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": "class Broken(:\n"}]})).await;
    let diags = c.diagnostics(&uri, 3).await;
    assert!(
        diags
            .iter()
            .any(|d| d["code"] == "FX901" && d["severity"] == 1),
        "{diags:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_shows_node_shapes_with_example_inputs() {
    let fixture = SIMPLE.replace("        out = self.fc2(h)", "        out = self.fc2($0h)");
    let (text, pos) = cursor(&fixture);
    let (dir, uri) = workspace("simple_net.py", &text);
    let mut c = TestClient::start(Value::Null);
    c.initialize(
        Some(dir.path()),
        json!({"exampleInputs": {"SimpleNet": {"x": [1, 784]}}}),
        false,
    )
    .await;
    c.open(&uri, &text).await;
    let h = c.hover(&uri, pos).await;
    let s = hover_text(&h);
    // `h` here is the then-branch's `h * 2`.
    assert!(
        s.contains("`mul`") && s.contains("[1, 128]") && s.contains("float32"),
        "{s}"
    );
    assert!(
        s.contains("graph-break region #0") && s.contains("then branch"),
        "{s}"
    );

    // An expression: the call under the cursor.
    let (text2, pos2) =
        cursor(&SIMPLE.replace("        out = self.fc2(h)", "        out = self.f$0c2(h)"));
    assert_eq!(text2, text);
    let s = hover_text(&c.hover(&uri, pos2).await);
    assert!(
        s.contains("`fc2`") && s.contains("call_module") && s.contains("[1, 10]"),
        "{s}"
    );

    // The forward argument.
    let (_, pos3) = cursor(&SIMPLE.replace("        h = self.fc1(x)", "        h = self.fc1($0x)"));
    let s = hover_text(&c.hover(&uri, pos3).await);
    assert!(s.contains("placeholder") && s.contains("[1, 784]"), "{s}");

    // Without example inputs for a class, the batch dim is a symbol and known dims stay numbers.
    let (_, pos4) =
        cursor(&SIMPLE.replace("        y = self.proj(x)", "        y = self.proj(x)$0"));
    let s = hover_text(&c.hover(&uri, pos4).await);
    assert!(s.contains("`proj`") && s.contains("[s0, 16]"), "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_on_submodule_assignment_shows_parameters() {
    let (text, pos) = cursor(&SIMPLE.replace(
        "        self.fc1 = nn.Linear(784, 128)",
        "        self.fc1 = nn.Lin$0ear(784, 128)",
    ));
    let (dir, uri) = workspace("simple_net.py", &text);
    let mut c = TestClient::start(Value::Null);
    c.initialize(Some(dir.path()), json!({}), true).await;
    c.open(&uri, &text).await;
    let s = hover_text(&c.hover(&uri, pos).await);
    assert!(s.contains("`Linear`"), "{s}");
    assert!(
        s.contains("`weight`")
            && s.contains("[128, 784]")
            && s.contains("`bias`")
            && s.contains("[128]"),
        "{s}"
    );
    // Outside any forward or module line there is nothing to show.
    let h = c.hover(&uri, (0, 2)).await;
    assert!(h.is_null(), "{h}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_inputs_from_pyproject() {
    let (dir, uri) = workspace("simple_net.py", SIMPLE);
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.staticfx]\nexample-inputs = { \"Mysterious\" = { x = [4, 16] } }\n",
    )
    .unwrap();
    let mut c = TestClient::start(Value::Null);
    c.initialize(Some(dir.path()), json!({}), false).await;
    c.open(&uri, SIMPLE).await;
    let (_, pos) =
        cursor(&SIMPLE.replace("        y = self.proj(x)", "        $0y = self.proj(x)"));
    let s = hover_text(&c.hover(&uri, pos).await);
    assert!(s.contains("[4, 16]"), "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_configuration_overrides_example_inputs() {
    let (dir, uri) = workspace("simple_net.py", SIMPLE);
    let mut c = TestClient::start(json!({"exampleInputs": {"SimpleNet": {"x": [8, 784]}}}));
    c.initialize(
        Some(dir.path()),
        json!({"debounceMs": 0, "exampleInputs": {"SimpleNet": {"x": [2, 784]}}}),
        false,
    )
    .await;
    c.open(&uri, SIMPLE).await;
    let (_, pos) =
        cursor(&SIMPLE.replace("        out = self.fc2(h)", "        $0out = self.fc2(h)"));
    // The server asks for its settings beside the message loop, after `initialized`.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let s = hover_text(&c.hover(&uri, pos).await);
        if s.contains("[8, 10]") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "workspace/configuration not applied: {s}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_check_publishes_unopened_files_with_progress() {
    let (dir, open_uri) = workspace("simple_net.py", SIMPLE);
    // A second file nobody opened, with a print in forward, and a clean one.
    let printing = "import torch.nn as nn\n\n\nclass Loud(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n        print(x)\n        return self.fc(x)\n";
    std::fs::write(dir.path().join("loud.py"), printing).unwrap();
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    std::fs::write(dir.path().join("pkg/quiet.py"), "X = 1\n").unwrap();
    let loud = file_uri(&dir.path().join("loud.py"));
    let quiet = file_uri(&dir.path().join("pkg/quiet.py"));

    let mut c = TestClient::start(Value::Null);
    c.result(
        "initialize",
        json!({
            "processId": null,
            "capabilities": {"window": {"workDoneProgress": true}},
            "workspaceFolders": [{"uri": file_uri(dir.path()), "name": "ws"}],
            "initializationOptions": {},
        }),
    )
    .await;
    c.notify("initialized", json!({})).await;
    c.open(&open_uri, SIMPLE).await;
    c.diagnostics(&open_uri, 1).await;

    let r = c
        .result(
            "workspace/executeCommand",
            json!({"command": "staticfx.checkWorkspace", "arguments": [{}]}),
        )
        .await;
    assert_eq!(r["files"], 3, "{r}");
    let begin = c
        .wait_for("$/progress", |p| p["value"]["kind"] == "begin")
        .await;
    let token = begin["token"].clone();
    // Files in path order: loud.py, pkg/quiet.py, simple_net.py (open: left to its own analysis).
    let diags = c
        .wait_for("textDocument/publishDiagnostics", |p| p["uri"] == loud)
        .await;
    let codes: Vec<&str> = diags["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(codes, vec!["FX105"], "{diags}");
    assert_eq!(diags["diagnostics"][0]["range"]["start"]["line"], 9);
    let quiet_diags = c
        .wait_for("textDocument/publishDiagnostics", |p| p["uri"] == quiet)
        .await;
    assert_eq!(quiet_diags["diagnostics"], json!([]));
    let end = c
        .wait_for("$/progress", |p| p["value"]["kind"] == "end")
        .await;
    assert_eq!(end["token"], token);
    assert_eq!(
        end["value"]["message"], "3 files checked, 1 diagnostics",
        "{end}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_on_a_noqa_code_shows_the_rule() {
    let (text, pos) = cursor(&SIMPLE.replace(
        "        if h.sum() > 0:",
        "        if h.sum() > 0:  # noqa: FX105, FX1$001",
    ));
    let (dir, uri) = workspace("simple_net.py", &text);
    let mut c = TestClient::start(Value::Null);
    c.initialize(Some(dir.path()), json!({}), false).await;
    c.open(&uri, &text).await;
    let h = c.hover(&uri, pos).await;
    let s = hover_text(&h);
    assert!(s.starts_with("### FX101: data-dependent branch"), "{s}");
    assert!(
        s.contains("gb0170.html") && s.contains("torch.where"),
        "{s}"
    );
    // The range is the code itself: `FX101` after `# noqa: FX105, ` (UTF-16 columns).
    let line = text.lines().nth(pos.0 as usize).unwrap();
    let start = line.find("FX101").unwrap() as u64;
    assert_eq!(h["range"]["start"]["character"], start, "{h}");
    assert_eq!(h["range"]["end"]["character"], start + 5, "{h}");
}
