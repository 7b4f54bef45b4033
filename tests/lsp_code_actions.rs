//! Code actions end to end through the in-process client: the server's quick fixes and
//! "fix all" are applied to the client's text the way an editor applies a WorkspaceEdit
//! (positions in the negotiated encoding), and the result is checked.

mod lsp_support;

use lsp_support::{file_uri, TestClient};
use serde_json::{json, Value};

/// A data-dependent if/else whose last branch line has multi-byte characters before the
/// edit's end (UTF-8 and UTF-16 columns differ there), plus a print.
const MODEL: &str = "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        h = self.fc(x)\n        print(\"größe\", h.shape)\n        if h.sum() > 0:\n            h = torch.relu(h)\n        else:\n            h = torch.tanh(h) * len(\"é😀\")\n        return h\n";

const FIXED_WHERE: &str = "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        h = self.fc(x)\n        print(\"größe\", h.shape)\n        h = torch.where(h.sum() > 0, torch.relu(h), torch.tanh(h) * len(\"é😀\"))\n        return h\n";

fn workspace(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("net.py");
    std::fs::write(&path, text).unwrap();
    let uri = file_uri(&path);
    (dir, uri)
}

/// The client's byte offset of an LSP position (lines break at `\n`, `\r\n`, lone `\r`).
fn offset(text: &str, pos: &Value, utf8: bool) -> usize {
    let line = pos["line"].as_u64().unwrap() as usize;
    let col = pos["character"].as_u64().unwrap() as usize;
    let b = text.as_bytes();
    let mut start = 0;
    let mut l = 0;
    let mut i = 0;
    while l < line && i < b.len() {
        match b[i] {
            b'\n' => {
                l += 1;
                start = i + 1;
            }
            b'\r' if b.get(i + 1) != Some(&b'\n') => {
                l += 1;
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let rest = &text[start..];
    let mut units = 0;
    for (bi, ch) in rest.char_indices() {
        if units >= col || ch == '\n' || ch == '\r' {
            return start + bi;
        }
        units += if utf8 { ch.len_utf8() } else { ch.len_utf16() };
    }
    text.len()
}

/// Applies a WorkspaceEdit's `changes` for `uri` to `text`.
fn apply(text: &str, edit: &Value, uri: &str, utf8: bool) -> String {
    let edits = edit["changes"][uri]
        .as_array()
        .expect("edits for the document");
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            (
                offset(text, &e["range"]["start"], utf8),
                offset(text, &e["range"]["end"], utf8),
                e["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (s, e, t) in spans {
        out.replace_range(s..e, &t);
    }
    out
}

async fn start(text: &str, utf8: bool) -> (TestClient, tempfile::TempDir, String, Vec<Value>) {
    let (dir, uri) = workspace(text);
    let mut c = TestClient::start(Value::Null);
    let init = c
        .initialize(Some(dir.path()), json!({"debounceMs": 0}), utf8)
        .await;
    let kinds = init["capabilities"]["codeActionProvider"]["codeActionKinds"]
        .as_array()
        .expect("codeActionProvider with kinds")
        .clone();
    assert!(kinds.contains(&json!("quickfix")), "{kinds:?}");
    assert!(
        kinds.contains(&json!("source.fixAll.staticfx")),
        "{kinds:?}"
    );
    c.open(&uri, text).await;
    let diags = c.diagnostics(&uri, 1).await;
    (c, dir, uri, diags)
}

async fn code_actions(
    c: &mut TestClient,
    uri: &str,
    range: Value,
    only: Option<Value>,
) -> Vec<Value> {
    let mut context = json!({"diagnostics": []});
    if let Some(o) = only {
        context["only"] = o;
    }
    c.result(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range, "context": context}),
    )
    .await
    .as_array()
    .cloned()
    .unwrap_or_default()
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn torch_where_quick_fix_under_both_encodings_and_crlf() {
    for (utf8, crlf) in [(false, false), (true, false), (false, true)] {
        let nl = if crlf { "\r\n" } else { "\n" };
        let model = MODEL.replace('\n', nl);
        let model = model.as_str();
        let expected = FIXED_WHERE.replace('\n', nl);
        let (mut c, _dir, uri, diags) = start(model, utf8).await;
        let brk = diags
            .iter()
            .find(|d| d["code"] == "FX101")
            .unwrap_or_else(|| panic!("FX101 in {diags:?}"));
        let actions = code_actions(&mut c, &uri, brk["range"].clone(), None).await;
        // Only the branch's actions: the print on another line is out of range, and fix-all
        // (the print guard is safe) is a source action.
        let quick: Vec<&Value> = actions.iter().filter(|a| a["kind"] == "quickfix").collect();
        assert!(
            quick.iter().all(|a| a["diagnostics"][0]["code"] == "FX101"),
            "{actions:#?}"
        );
        let preferred: Vec<&&Value> = quick.iter().filter(|a| a["isPreferred"] == true).collect();
        assert_eq!(preferred.len(), 1, "{quick:#?}");
        assert!(
            preferred[0]["title"]
                .as_str()
                .unwrap()
                .contains("torch.where"),
            "{preferred:?}"
        );
        let fixed = apply(model, &preferred[0]["edit"], &uri, utf8);
        assert_eq!(fixed, expected, "utf8={utf8} crlf={crlf}");
        assert!(!staticfx::syntax::parse(&fixed, None)
            .root_node()
            .has_error());

        // The suppression: the server stops reporting the branch once the client applies it.
        let noqa = quick
            .iter()
            .find(|a| a["title"].as_str().unwrap().contains("noqa"))
            .expect("noqa action");
        let suppressed = apply(model, &noqa["edit"], &uri, utf8);
        let if_line = line_of(model, "if h.sum() > 0:");
        assert_eq!(
            suppressed.lines().nth(if_line).unwrap(),
            "        if h.sum() > 0:  # noqa: FX101"
        );
        assert!(suppressed.contains(&format!("# noqa: FX101{nl}")));
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": suppressed}]}),
        )
        .await;
        let after = c.diagnostics(&uri, 2).await;
        assert!(after.iter().all(|d| d["code"] != "FX101"), "{after:?}");
        assert!(after.iter().any(|d| d["code"] == "FX105"), "{after:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_only_for_the_requested_range_and_fix_all() {
    let (mut c, _dir, uri, diags) = start(MODEL, false).await;
    let print = diags
        .iter()
        .find(|d| d["code"] == "FX105")
        .unwrap_or_else(|| panic!("FX105 in {diags:?}"));
    // A cursor (empty range) inside the print call.
    let at = json!({"line": print["range"]["start"]["line"], "character": 12});
    let actions = code_actions(
        &mut c,
        &uri,
        json!({"start": at, "end": at}),
        Some(json!(["quickfix"])),
    )
    .await;
    assert!(!actions.is_empty());
    assert!(actions.iter().all(|a| a["kind"] == "quickfix"));
    assert!(
        actions
            .iter()
            .all(|a| a["diagnostics"][0]["code"] == "FX105"),
        "{actions:#?}"
    );
    let titles: Vec<&str> = actions
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(titles[0].starts_with("Guard"), "{titles:?}");
    assert_eq!(actions[0]["isPreferred"], true);
    assert!(titles.iter().any(|t| t.starts_with("Remove")), "{titles:?}");
    let guarded = apply(MODEL, &actions[0]["edit"], &uri, false);
    assert!(guarded.contains("        if not torch.compiler.is_compiling():\n            print(\"größe\", h.shape)\n"), "{guarded}");

    // A range on a line without findings: nothing.
    let empty = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}});
    assert!(code_actions(&mut c, &uri, empty, Some(json!(["quickfix"])))
        .await
        .is_empty());

    // Fix all: safe fixes only (the guard, not the unsafe torch.where rewrite).
    let all = code_actions(
        &mut c,
        &uri,
        json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}),
        Some(json!(["source.fixAll"])),
    )
    .await;
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(all[0]["kind"], "source.fixAll.staticfx");
    let fixed = apply(MODEL, &all[0]["edit"], &uri, false);
    assert_eq!(fixed, guarded, "fix-all applies exactly the safe guard");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_fix_says_why_and_offers_only_the_suppression() {
    let text = MODEL.replace(
        "        if h.sum() > 0:\n            h = torch.relu(h)\n        else:\n            h = torch.tanh(h) * len(\"é😀\")\n",
        "        while h.norm() > 1:\n            h = h / 2\n",
    );
    let (mut c, _dir, uri, diags) = start(&text, false).await;
    let brk = diags
        .iter()
        .find(|d| d["code"] == "FX101")
        .unwrap_or_else(|| panic!("FX101 in {diags:?}"));
    let msg = brk["message"].as_str().unwrap();
    assert!(msg.contains("\nHint: "), "{msg}");
    assert!(
        msg.contains("no automatic fix: a data-dependent `while` loop has no torch.where form"),
        "{msg}"
    );
    let actions = code_actions(
        &mut c,
        &uri,
        brk["range"].clone(),
        Some(json!(["quickfix"])),
    )
    .await;
    assert_eq!(actions.len(), 1, "{actions:#?}");
    assert!(actions[0]["title"]
        .as_str()
        .unwrap()
        .contains("# noqa: FX101"));
    assert!(
        actions[0].get("isPreferred").is_none_or(|p| p.is_null()),
        "{actions:#?}"
    );
}
