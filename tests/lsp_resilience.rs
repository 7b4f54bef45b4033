//! The real `staticfx lsp` binary over stdio cannot be knocked over: malformed JSON-RPC bytes,
//! requests for documents never opened, positions past the end or inside a surrogate pair,
//! edits racing with requests, floods of changes, and a panic inside a request handler. After
//! each, the server answers the next valid request.

mod lsp_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

const SIMPLE: &str = include_str!("fixtures/lsp/simple_net.py");
const TIMEOUT: Duration = Duration::from_secs(60);

/// A client of the real binary, speaking Content-Length framed JSON-RPC over its stdio.
struct Stdio_ {
    child: Child,
    stdin: ChildStdin,
    rx: mpsc::Receiver<Value>,
    backlog: Vec<Value>,
    /// Responses that arrived while waiting for another.
    answered: std::collections::HashMap<i64, Value>,
    next_id: i64,
    _dir: tempfile::TempDir,
    uri: String,
}

impl Stdio_ {
    fn start() -> Self {
        Self::start_with(json!({"debounceMs": 0, "testHooks": true}))
    }

    fn start_with(options: Value) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_staticfx"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = Some(v.parse::<usize>().expect("server sends a valid length"));
                    }
                }
                let mut body = vec![0; len.expect("server sends Content-Length")];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let msg: Value = serde_json::from_slice(&body).expect("server sends JSON");
                if tx.send(msg).is_err() {
                    return;
                }
            }
        });
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("simple_net.py");
        std::fs::write(&path, SIMPLE).unwrap();
        let uri = lsp_support::file_uri(&path);
        let mut c = Stdio_ {
            child,
            stdin,
            rx,
            backlog: Vec::new(),
            answered: Default::default(),
            next_id: 0,
            _dir: dir,
            uri,
        };
        let root = lsp_support::file_uri(c._dir.path());
        c.result(
            "initialize",
            json!({
                "processId": null,
                "capabilities": {"general": {"positionEncodings": ["utf-16"]}},
                "workspaceFolders": [{"uri": root, "name": "ws"}],
                "initializationOptions": options,
            }),
        );
        c.notify("initialized", json!({}));
        c
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, msg: &Value) {
        let body = serde_json::to_vec(msg).unwrap();
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend(body);
        self.raw(&frame);
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn recv(&mut self, what: &str) -> Value {
        let msg = self
            .rx
            .recv_timeout(TIMEOUT)
            .unwrap_or_else(|_| panic!("no {what} in time (server dead or stuck)"));
        // Server-to-client requests (configuration, progress) get an empty answer.
        if let (Some(id), Some(m)) = (msg.get("id"), msg.get("method").and_then(Value::as_str)) {
            let result = if m == "workspace/configuration" {
                json!([{}])
            } else {
                Value::Null
            };
            let id = id.clone();
            self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
        }
        msg
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id, method)
    }

    fn response(&mut self, id: i64, what: &str) -> Value {
        if let Some(r) = self.answered.remove(&id) {
            return r;
        }
        loop {
            let msg = self.recv(what);
            if msg.get("method").is_some() {
                self.backlog.push(msg);
                continue;
            }
            match msg.get("id").and_then(Value::as_i64) {
                Some(i) if i == id => return msg,
                Some(i) => {
                    self.answered.insert(i, msg);
                }
                None => {}
            }
        }
    }

    /// Sends `staticfx/documentText` until one is answered (a request swallowed by a broken
    /// frame before it is resent); returns the answer.
    fn probe(&mut self, what: &str) -> Value {
        let uri = self.uri.clone();
        let mut sent = Vec::new();
        for _ in 0..40 {
            self.next_id += 1;
            let id = self.next_id;
            sent.push(json!(id));
            self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "staticfx/documentText", "params": {"uri": uri}}));
            let deadline = std::time::Instant::now() + Duration::from_secs(2);
            while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
                let Ok(msg) = self.rx.recv_timeout(left) else {
                    break;
                };
                if msg.get("method").is_none() && msg.get("id").is_some_and(|i| sent.contains(i)) {
                    return msg;
                }
                if msg.get("method").is_some() {
                    self.backlog.push(msg);
                }
            }
            assert!(
                self.child.try_wait().unwrap().is_none(),
                "the server exited after {what}"
            );
        }
        panic!("no answer after {what}");
    }

    fn result(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params);
        assert!(r.get("error").is_none(), "{method}: {r}");
        r["result"].clone()
    }

    fn wait_for(&mut self, method: &str, mut pred: impl FnMut(&Value) -> bool) -> Value {
        if let Some(i) = self
            .backlog
            .iter()
            .position(|m| m["method"] == method && pred(&m["params"]))
        {
            return self.backlog.remove(i)["params"].clone();
        }
        loop {
            let m = self.recv(method);
            if m["method"] == method && pred(&m["params"]) {
                return m["params"].clone();
            }
        }
    }

    fn open(&mut self, text: &str) {
        let uri = self.uri.clone();
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
        );
    }

    /// The server is alive and its document is `expected`.
    fn assert_alive(&mut self, expected: Option<&str>) {
        let uri = self.uri.clone();
        let r = self.request("staticfx/documentText", json!({"uri": uri}));
        match expected {
            Some(t) => assert_eq!(r["result"]["text"].as_str(), Some(t), "{r}"),
            None => assert!(r.get("result").is_some() || r.get("error").is_some(), "{r}"),
        }
    }

    fn hover(&mut self, uri: &str, line: u32, character: u32) -> Value {
        self.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
    }
}

impl Drop for Stdio_ {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut f = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    f.extend_from_slice(body);
    f
}

#[test]
fn malformed_messages_leave_the_server_answering() {
    let mut c = Stdio_::start();
    c.open(SIMPLE);
    c.assert_alive(Some(SIMPLE));
    let bad: Vec<(&str, Vec<u8>)> = vec![
        ("invalid JSON", frame(b"{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": ")),
        ("not an object", frame(b"[1, 2, 3]")),
        ("a number", frame(b"42")),
        ("no jsonrpc fields", frame(b"{\"foo\": 1}")),
        ("non-UTF-8 body", frame(b"{\"jsonrpc\": \"2.0\", \"method\": \"\xff\xfe\"}")),
        (
            "wrong jsonrpc version",
            frame(b"{\"jsonrpc\": \"1.0\", \"id\": 98, \"method\": \"shutdown\"}"),
        ),
        ("empty body", frame(b"")),
        (
            "an unknown notification",
            frame(b"{\"jsonrpc\": \"2.0\", \"method\": \"$/made/up\", \"params\": {}}"),
        ),
        (
            "a notification with wrong params",
            frame(b"{\"jsonrpc\": \"2.0\", \"method\": \"textDocument/didChange\", \"params\": {\"x\": 1}}"),
        ),
        (
            "didOpen with params of the wrong type",
            frame(b"{\"jsonrpc\": \"2.0\", \"method\": \"textDocument/didOpen\", \"params\": [1]}"),
        ),
        ("a header without a length", b"Content-Type: application/json\r\n\r\n".to_vec()),
        ("a non-numeric length", b"Content-Length: lots\r\n\r\n".to_vec()),
        ("a garbage line", b"hello there\r\n\r\n".to_vec()),
        ("a negative length", b"Content-Length: -5\r\n\r\n".to_vec()),
        (
            "a length shorter than the body",
            b"Content-Length: 10\r\n\r\n{\"jsonrpc\": \"2.0\", \"method\": \"initialized\", \"params\": {}}"
                .to_vec(),
        ),
        ("LF-only header", b"Content-Length: 2\n\n{}".to_vec()),
    ];
    for (what, bytes) in bad {
        c.raw(&bytes);
        let r = c.probe(what);
        assert_eq!(
            r["result"]["text"].as_str(),
            Some(SIMPLE),
            "after {what}: {r}"
        );
    }
    // A length longer than the body swallows what follows until it is complete; the messages
    // inside are recovered once it is.
    c.raw(b"Content-Length: 700\r\n\r\n{\"jsonrpc\": \"2.0\", ");
    let r = c.probe("a length longer than the body");
    assert_eq!(r["result"]["text"].as_str(), Some(SIMPLE), "{r}");
    // An absurd length is refused instead of waited for.
    c.raw(b"Content-Length: 99999999999999999999\r\n\r\n");
    let r = c.probe("an absurd length");
    assert_eq!(r["result"]["text"].as_str(), Some(SIMPLE), "{r}");
    // Unknown methods and wrong parameters get JSON-RPC errors, not silence.
    let r = c.request("textDocument/noSuchRequest", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = c.request("textDocument/hover", json!({"nonsense": true}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c.request("textDocument/hover", json!("a string"));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    c.assert_alive(Some(SIMPLE));
}

#[test]
fn requests_for_unopened_documents_are_answered() {
    let mut c = Stdio_::start();
    let ghost = "file:///nowhere/ghost.py";
    let r = c.hover(ghost, 0, 0);
    assert!(r.get("result").is_some() || r.get("error").is_some(), "{r}");
    let r = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": ghost}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}, "context": {"diagnostics": []}}),
    );
    assert!(r.get("result").is_some() || r.get("error").is_some(), "{r}");
    let r = c.request(
        "workspace/executeCommand",
        json!({"command": "staticfx.showGraph", "arguments": [{"uri": ghost, "class": "SimpleNet"}]}),
    );
    assert!(r.get("error").is_some(), "{r}");
    let r = c.request("staticfx/documentText", json!({"uri": ghost}));
    assert!(r.get("result").is_some() || r.get("error").is_some(), "{r}");
    // Changing and closing a document never opened is ignored.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": ghost, "version": 7}, "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}]}),
    );
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": ghost}}),
    );
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": ghost}}),
    );
    // Commands with missing or malformed arguments.
    for args in [json!([]), json!([1]), json!([{"uri": 5}]), json!(null)] {
        let r = c.request(
            "workspace/executeCommand",
            json!({"command": "staticfx.showGraph", "arguments": args}),
        );
        assert!(r.get("error").is_some(), "{args}: {r}");
    }
    let r = c.request(
        "workspace/executeCommand",
        json!({"command": "staticfx.noSuchCommand", "arguments": []}),
    );
    assert!(r.get("error").is_some(), "{r}");
    c.open(SIMPLE);
    c.assert_alive(Some(SIMPLE));
}

#[test]
fn out_of_range_and_mid_surrogate_positions() {
    let mut c = Stdio_::start();
    let text = format!("# 😀😀 中\r\n{SIMPLE}\rz = 1");
    c.open(&text);
    let uri = c.uri.clone();
    let lines = text.lines().count() as u32 + 2;
    let positions = [
        (0, 3),             // inside the first emoji's surrogate pair
        (0, 5),             // inside the second
        (0, 1000),          // past the line's end
        (lines, 0),         // past the last line
        (lines + 50, 9999), // far past everything
        (u32::MAX, u32::MAX),
        (1, u32::MAX),
    ];
    for (line, character) in positions {
        let r = c.hover(&uri, line, character);
        assert!(
            r.get("result").is_some(),
            "hover at {line}:{character}: {r}"
        );
        let r = c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": {"line": line, "character": character}, "end": {"line": u32::MAX, "character": 0}}, "context": {"diagnostics": []}}),
        );
        assert!(
            r.get("result").is_some(),
            "codeAction at {line}:{character}: {r}"
        );
        let r = c.request(
            "workspace/executeCommand",
            json!({"command": "staticfx.showGraph", "arguments": [{"uri": uri, "position": {"line": line, "character": character}}]}),
        );
        assert!(r.get("result").is_some() || r.get("error").is_some(), "{r}");
    }
    // A hover inside the model still works afterwards.
    let line = text
        .lines()
        .position(|l| l.contains("self.fc2(h)"))
        .unwrap();
    let col = text.lines().nth(line).unwrap().find("fc2").unwrap();
    let r = c.hover(&uri, line as u32, col as u32 + 1);
    assert!(
        r["result"]["contents"]["value"]
            .as_str()
            .is_some_and(|v| v.contains("fc2")),
        "{r}"
    );
    // Edits at out-of-range and mid-surrogate positions clamp; the text stays valid UTF-8.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 5}}, "text": "ab"}]}),
    );
    let r = c.request("staticfx/documentText", json!({"uri": uri}));
    let t = r["result"]["text"].as_str().unwrap();
    assert!(
        t.starts_with("# ab😀 中") || t.starts_with("# ab 中") || t.starts_with("# ab😀"),
        "{t:?}"
    );
}

#[test]
fn edits_racing_with_requests() {
    let mut c = Stdio_::start();
    c.open(SIMPLE);
    let uri = c.uri.clone();
    let mut text = SIMPLE.to_string();
    let mut ids = Vec::new();
    for v in 2..=300 {
        // Append a line, then immediately ask about the document, without waiting.
        let lines = text.matches('\n').count();
        let add = format!("y{v} = {v}\n");
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"range": {"start": {"line": lines, "character": 0}, "end": {"line": lines, "character": 0}}, "text": add}]}),
        );
        text.push_str(&add);
        c.next_id += 1;
        let id = c.next_id;
        let method = [
            "textDocument/hover",
            "textDocument/codeAction",
            "staticfx/documentText",
        ][v as usize % 3];
        let params = match method {
            "textDocument/hover" => {
                json!({"textDocument": {"uri": uri}, "position": {"line": 14, "character": 9}})
            }
            "textDocument/codeAction" => {
                json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}}, "context": {"diagnostics": []}})
            }
            _ => json!({"uri": uri}),
        };
        c.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        ids.push((id, method, v, text.clone()));
    }
    for (id, method, v, expected) in ids {
        let r = c.response(id, method);
        if method == "staticfx/documentText" {
            // Requests are answered against the text as of when they arrived.
            assert_eq!(r["result"]["version"], v, "{r}");
            assert_eq!(r["result"]["text"].as_str(), Some(expected.as_str()));
        } else {
            // Analysis-backed requests may be cancelled by a newer edit, but never hang.
            assert!(r.get("result").is_some() || r.get("error").is_some(), "{r}");
        }
    }
    c.assert_alive(Some(&text));
}

#[test]
fn a_flood_of_changes_publishes_the_newest_last() {
    let mut c = Stdio_::start();
    c.open(SIMPLE);
    let uri = c.uri.clone();
    let last = 2000;
    for v in 2..=last {
        // Whole-document changes alternating between a clean file and one with a break.
        let text = if v % 2 == 0 {
            SIMPLE.replace("h = h * 2", "h = h * 3")
        } else {
            SIMPLE.to_string()
        };
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"text": text}]}),
        );
    }
    let mut seen = Vec::new();
    loop {
        let p = c.wait_for("textDocument/publishDiagnostics", |p| p["uri"] == uri);
        let v = p["version"].as_i64().unwrap_or(-1);
        seen.push(v);
        if v == last {
            break;
        }
    }
    // The client answers workspace/configuration only once it reads, mid-flood; the new
    // settings re-publish the current version, so a version may repeat, but never go back.
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]),
        "an older version's diagnostics were published after a newer one: {seen:?}"
    );
    assert!(
        seen.len() < 200,
        "a flood of {last} changes coalesces: {} analyses",
        seen.len()
    );
    // Nothing older arrives after the newest.
    let r = c.request("staticfx/documentText", json!({"uri": uri}));
    assert_eq!(r["result"]["version"], last);
    assert!(c
        .backlog
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .all(|m| m["params"]["version"].as_i64().unwrap_or(i64::MAX) >= last));
}

/// What a client shows of a publishDiagnostics: ranges, codes and messages.
fn findings(p: &Value) -> Vec<(String, String, String)> {
    p["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["range"].to_string(),
                d["code"].to_string(),
                d["message"].to_string(),
            )
        })
        .collect()
}

/// With no settings at all (no debounce: every edit is analysed at once), a flood of edits
/// alternating between texts with different findings ends with the newest text's findings,
/// and the versions published never go back.
#[test]
fn a_flood_of_edits_with_default_settings_ends_with_the_newest_findings() {
    let mut c = Stdio_::start_with(json!({}));
    let breaking = SIMPLE.to_string();
    let clean = SIMPLE.replace("if h.sum() > 0:", "if self.training:");
    let mut reference = Vec::new();
    for (i, text) in [&breaking, &clean].into_iter().enumerate() {
        let uri = c.uri.replace(".py", &format!("_reference_{i}.py"));
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
        );
        let p = c.wait_for("textDocument/publishDiagnostics", |p| p["uri"] == uri);
        reference.push(findings(&p));
    }
    assert_ne!(
        reference[0], reference[1],
        "the two texts must differ in findings"
    );

    c.open(&breaking);
    let uri = c.uri.clone();
    let last = 1001;
    for v in 2..=last {
        let text = if v % 2 == 0 { &breaking } else { &clean };
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"text": text}]}),
        );
    }
    let mut seen = Vec::new();
    let newest = loop {
        let p = c.wait_for("textDocument/publishDiagnostics", |p| p["uri"] == uri);
        let v = p["version"].as_i64().unwrap_or(-1);
        seen.push(v);
        if v == last {
            break p;
        }
    };
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]),
        "an older version's diagnostics were published after a newer one: {seen:?}"
    );
    assert_eq!(
        findings(&newest),
        reference[1],
        "the newest text is the clean one"
    );
    let r = c.request("staticfx/documentText", json!({"uri": uri}));
    assert_eq!(r["result"]["version"], last);
    assert!(c
        .backlog
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri)
        .all(|m| m["params"]["version"].as_i64().unwrap_or(i64::MAX) >= last));
}

#[test]
fn a_panic_in_analysis_over_stdio_leaves_the_server_answering() {
    let mut c = Stdio_::start();
    let bad = format!("{SIMPLE}\n{}\n", staticfx::ide::host::PANIC_MARKER);
    c.open(&bad);
    let uri = c.uri.clone();
    c.wait_for("window/logMessage", |p| {
        p["message"].as_str().unwrap_or("").contains("panicked")
    });
    let r = c.hover(&uri, 14, 9);
    assert!(r.get("error").is_some(), "{r}");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": SIMPLE}]}),
    );
    let p = c.wait_for("textDocument/publishDiagnostics", |p| {
        p["uri"] == uri && p["version"] == 2
    });
    assert!(!p["diagnostics"].as_array().unwrap().is_empty());
    c.assert_alive(Some(SIMPLE));
}

#[test]
fn a_panic_inside_a_request_handler_leaves_the_server_answering() {
    let mut c = Stdio_::start();
    let text = format!("{SIMPLE}\n{}\n", staticfx::ide::host::HOVER_PANIC_MARKER);
    c.open(&text);
    let uri = c.uri.clone();
    for _ in 0..3 {
        let r = c.hover(&uri, 14, 9);
        assert_eq!(r["error"]["code"], -32603, "an internal error: {r}");
        assert!(
            r["error"]["message"].as_str().unwrap().contains("panicked"),
            "{r}"
        );
        // Other requests on the same document are still served.
        c.assert_alive(Some(&text));
        let r = c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}}, "context": {"diagnostics": []}}),
        );
        assert!(r.get("result").is_some(), "{r}");
    }
    // Removing the marker brings hover back.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": SIMPLE}]}),
    );
    let line = SIMPLE
        .lines()
        .position(|l| l.contains("self.fc2(h)"))
        .unwrap();
    let col = SIMPLE.lines().nth(line).unwrap().find("fc2").unwrap();
    let r = c.hover(&uri, line as u32, col as u32 + 1);
    assert!(r["result"]["contents"]["value"]
        .as_str()
        .is_some_and(|v| v.contains("fc2")));
}

#[test]
fn exit_ends_the_process_even_with_stdin_left_open() {
    let mut c = Stdio_::start();
    c.open(SIMPLE);
    c.assert_alive(Some(SIMPLE));
    let r = c.request("shutdown", Value::Null);
    assert!(r.get("error").is_none(), "{r}");
    c.notify("exit", Value::Null);
    // stdin stays open (some clients never close it): the server must still exit.
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        if let Some(status) = c.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not exit after `exit` (waiting for stdin?)"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The server turns transparent huge pages off for itself (`main.rs`): with them, the first
/// keystroke after a pause paid for zeroing 2 MB pages. Linux reports the flag in
/// /proc/PID/status; kernels before 6.0 do not, and the test says so.
#[cfg(target_os = "linux")]
#[test]
fn the_server_runs_without_transparent_huge_pages() {
    let c = Stdio_::start();
    let status = std::fs::read_to_string(format!("/proc/{}/status", c.child.id())).unwrap();
    let Some(line) = status.lines().find(|l| l.starts_with("THP_enabled:")) else {
        eprintln!("skipped: this kernel's /proc/PID/status has no THP_enabled");
        return;
    };
    assert_eq!(line.split_whitespace().nth(1), Some("0"), "{line}");
}
