//! Inlay hints (with `inlayHint/resolve`) and code lenses over the protocol: capabilities,
//! positions in both encodings with non-ASCII text before a hint and CRLF line ends, the
//! lens's commands and its agreement with the diagnostics of the same version, and the
//! `inlayHints.shapes` setting.

mod lsp_support;

use lsp_support::{file_uri, TestClient};
use serde_json::{json, Value};

const SIMPLE: &str = include_str!("fixtures/lsp/simple_net.py");

/// A clean model whose hinted line has a two-byte letter and an emoji before its hint.
const MODEL: &str = r#"import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        größe = self.fc1(x) * len("😀☕")
        ids = torch.argmax(größe, dim=-1)
        out = self.fc2(größe)
        return out, ids
"#;

fn workspace(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let uri = file_uri(&path);
    (dir, uri)
}

const INPUTS: &str = r#"{"exampleInputs": {"Net": {"x": [1, 784]}, "SimpleNet": {"x": [1, 784]}}}"#;

/// The end of the line holding `needle`, as (line, character) in the encoding.
fn end_of_line_with(text: &str, needle: &str, utf8: bool) -> (u64, u64) {
    let (line, content) = text
        .split('\n')
        .enumerate()
        .find(|(_, l)| l.contains(needle))
        .unwrap();
    let content = content.trim_end_matches('\r');
    let col = if utf8 {
        content.len()
    } else {
        content.encode_utf16().count()
    };
    (line as u64, col as u64)
}

fn range_all() -> Value {
    json!({"start": {"line": 0, "character": 0}, "end": {"line": 1000, "character": 0}})
}

async fn hints(c: &mut TestClient, uri: &str, range: Value) -> Vec<Value> {
    c.result(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": range}),
    )
    .await
    .as_array()
    .cloned()
    .unwrap_or_default()
}

async fn lenses(c: &mut TestClient, uri: &str) -> Vec<Value> {
    c.result(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    )
    .await
    .as_array()
    .cloned()
    .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hints_and_lenses_in_both_encodings_with_lf_and_crlf() {
    for crlf in [false, true] {
        for utf8 in [false, true] {
            let text = if crlf {
                MODEL.replace('\n', "\r\n")
            } else {
                MODEL.to_string()
            };
            let (dir, uri) = workspace("net.py", &text);
            let mut c = TestClient::start(Value::Null);
            let init = c
                .initialize(
                    Some(dir.path()),
                    serde_json::from_str(INPUTS).unwrap(),
                    utf8,
                )
                .await;
            let caps = &init["capabilities"];
            assert_eq!(caps["inlayHintProvider"]["resolveProvider"], true, "{caps}");
            assert!(caps["codeLensProvider"].is_object(), "{caps}");
            c.open(&uri, &text).await;
            c.diagnostics(&uri, 1).await;

            let found = hints(&mut c, &uri, range_all()).await;
            let at = |needle: &str| end_of_line_with(&text, needle, utf8);
            let shown: Vec<((u64, u64), &str)> = found
                .iter()
                .map(|h| {
                    (
                        (
                            h["position"]["line"].as_u64().unwrap(),
                            h["position"]["character"].as_u64().unwrap(),
                        ),
                        h["label"].as_str().unwrap(),
                    )
                })
                .collect();
            assert_eq!(
                shown,
                [
                    (at("größe = self.fc1"), "# [1, 128]"),
                    (at("ids = torch.argmax"), "# [1] int64"),
                    (at("out = self.fc2"), "# [1, 10]"),
                ],
                "crlf {crlf}, utf8 {utf8}"
            );
            assert_eq!(found[0]["paddingLeft"], true);
            assert!(found[0].get("tooltip").is_none(), "resolved lazily");

            // Only the requested range: the line of `ids = ...`.
            let (line, col) = at("ids = torch.argmax");
            let one = hints(
                &mut c,
                &uri,
                json!({"start": {"line": line, "character": 0}, "end": {"line": line, "character": col}}),
            )
            .await;
            assert_eq!(one.len(), 1, "{one:?}");
            assert_eq!(one[0]["label"], "# [1] int64");

            let resolved = c.result("inlayHint/resolve", found[1].clone()).await;
            let tip = resolved["tooltip"]["value"].as_str().unwrap_or_default();
            assert!(
                tip.contains("`ids` =") && tip.contains("`argmax`") && tip.contains("int64"),
                "{resolved}"
            );
            assert_eq!(resolved["label"], found[1]["label"]);

            let found = lenses(&mut c, &uri).await;
            assert_eq!(found.len(), 2, "{found:?}");
            let def = end_of_line_with(&text, "def forward", utf8).0;
            for l in &found {
                assert_eq!(l["range"]["start"]["line"], def, "{l}");
                assert_eq!(l["range"]["start"]["character"], 4, "{l}");
                assert_eq!(l["command"]["arguments"][0]["uri"], uri);
                assert_eq!(l["command"]["arguments"][0]["class"], "Net");
            }
            assert_eq!(found[0]["command"]["title"], "1 graph · 6 nodes · 0 breaks");
            assert_eq!(found[0]["command"]["command"], "staticfx.showGraph");
            assert_eq!(found[1]["command"]["title"], "run");
            assert_eq!(found[1]["command"]["command"], "staticfx.runGraph");
            // The lens's own command, as the editor sends it, draws the graph.
            let cmd = &found[0]["command"];
            let graph = c
                .result(
                    "workspace/executeCommand",
                    json!({"command": cmd["command"], "arguments": cmd["arguments"]}),
                )
                .await;
            assert!(
                graph["dot"].as_str().unwrap().starts_with("digraph"),
                "{graph}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lens_with_breaks_reveals_the_first_and_follows_the_version() {
    let (dir, uri) = workspace("simple_net.py", SIMPLE);
    let mut c = TestClient::start(Value::Null);
    c.initialize(
        Some(dir.path()),
        serde_json::from_str(INPUTS).unwrap(),
        false,
    )
    .await;
    c.open(&uri, SIMPLE).await;
    let diags = c.diagnostics(&uri, 1).await;
    let branch = diags.iter().find(|d| d["code"] == "FX101").unwrap();
    let found = lenses(&mut c, &uri).await;
    // SimpleNet's two lenses come first (source order).
    let simple: Vec<&Value> = found.iter().take(2).collect();
    assert_eq!(simple[0]["range"]["start"]["line"], 13);
    assert_eq!(simple.len(), 2, "{found:?}");
    let first = &simple[0]["command"];
    assert_eq!(first["title"], "2 graphs · 1 break (FX101)");
    assert_eq!(first["command"], "staticfx.revealLocation");
    assert_eq!(first["arguments"][0]["uri"], uri);
    assert_eq!(first["arguments"][0]["range"], branch["range"]);
    assert_eq!(simple[1]["command"]["title"], "show graph");
    assert_eq!(simple[1]["command"]["command"], "staticfx.showGraph");

    // Two lines added above: the next version's lens and its diagnostics move together.
    c.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "# one\n# two\n"}]
        }),
    )
    .await;
    let found = lenses(&mut c, &uri).await;
    let diags = c.diagnostics(&uri, 2).await;
    let branch = diags.iter().find(|d| d["code"] == "FX101").unwrap();
    let reveal = found
        .iter()
        .find(|l| l["command"]["command"] == "staticfx.revealLocation")
        .unwrap();
    assert_eq!(reveal["command"]["arguments"][0]["range"], branch["range"]);
    assert_eq!(reveal["range"]["start"]["line"], 15);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_setting_turns_hints_off_and_asks_the_client_to_refresh() {
    let (dir, uri) = workspace("net.py", MODEL);
    let off = json!({"inlayHints": {"shapes": false}});
    // The client's configuration says off; initialization said nothing.
    let mut c = TestClient::start(off.clone());
    c.result(
        "initialize",
        json!({
            "processId": null,
            "capabilities": {"workspace": {
                "configuration": true,
                "inlayHint": {"refreshSupport": true},
                "codeLens": {"refreshSupport": true},
            }},
            "workspaceFolders": [{"uri": file_uri(dir.path()), "name": "ws"}],
            "initializationOptions": serde_json::from_str::<Value>(INPUTS).unwrap(),
        }),
    )
    .await;
    c.notify("initialized", json!({})).await;
    c.open(&uri, MODEL).await;
    c.diagnostics(&uri, 1).await;
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"staticfx": off}}),
    )
    .await;
    c.wait_for("workspace/inlayHint/refresh", |_| true).await;
    assert_eq!(hints(&mut c, &uri, range_all()).await, Vec::<Value>::new());
    // Lenses stay.
    assert_eq!(lenses(&mut c, &uri).await.len(), 2);
}
