//! An in-process LSP client: the real server behind an in-memory duplex pipe, spoken to in
//! raw JSON-RPC with Content-Length framing, exactly as over stdio.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, WriteHalf};
use tokio::sync::{mpsc, Mutex};

pub const TIMEOUT: Duration = Duration::from_secs(60);

pub struct TestClient {
    writer: Arc<Mutex<WriteHalf<tokio::io::DuplexStream>>>,
    rx: mpsc::UnboundedReceiver<Value>,
    /// Notifications that arrived while waiting for something else.
    pub backlog: VecDeque<Value>,
    next_id: i64,
}

async fn write_msg(w: &Mutex<WriteHalf<tokio::io::DuplexStream>>, msg: &Value) {
    let body = serde_json::to_string(msg).unwrap();
    let mut w = w.lock().await;
    w.write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
        .await
        .unwrap();
    w.flush().await.unwrap();
}

impl TestClient {
    /// Starts a server; `settings` answers its `workspace/configuration` requests.
    pub fn start(settings: Value) -> Self {
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server_io);
        // Exactly what `staticfx lsp` runs, over a pipe instead of stdio.
        tokio::spawn(staticfx::lsp::serve(sr, sw));
        let (cr, cw) = tokio::io::split(client_io);
        let writer = Arc::new(Mutex::new(cw));
        let (tx, rx) = mpsc::unbounded_channel();
        let w = writer.clone();
        tokio::spawn(async move {
            let mut r = BufReader::new(cr);
            loop {
                let mut len = 0usize;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                r.read_exact(&mut body).await.unwrap();
                let msg: Value = serde_json::from_slice(&body).unwrap();
                // Server-to-client requests are answered here so tests never stall them.
                if let (Some(id), Some(method)) =
                    (msg.get("id"), msg.get("method").and_then(Value::as_str))
                {
                    let result = match method {
                        "workspace/configuration" => json!([settings.clone()]),
                        _ => Value::Null,
                    };
                    write_msg(&w, &json!({"jsonrpc": "2.0", "id": id, "result": result})).await;
                }
                if tx.send(msg).is_err() {
                    return;
                }
            }
        });
        TestClient {
            writer,
            rx,
            backlog: VecDeque::new(),
            next_id: 0,
        }
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        write_msg(
            &self.writer,
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        )
        .await;
    }

    /// Sends a request and returns the whole response (`result` or `error`).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        write_msg(
            &self.writer,
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .await;
        loop {
            let msg = tokio::time::timeout(TIMEOUT, self.rx.recv())
                .await
                .expect("response in time")
                .expect("server alive");
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return msg;
            }
            if msg.get("method").is_some() {
                self.backlog.push_back(msg);
            }
        }
    }

    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let resp = self.request(method, params).await;
        assert!(resp.get("error").is_none(), "{method} failed: {resp}");
        resp["result"].clone()
    }

    /// How many sessions and libraries the analysis threads keep (`staticfx/keptAnalyses`).
    pub async fn kept_analyses(&mut self) -> (u64, u64) {
        let r = self.result("staticfx/keptAnalyses", json!({})).await;
        (
            r["sessions"].as_u64().unwrap(),
            r["libraries"].as_u64().unwrap(),
        )
    }

    /// The sessions the analysis threads keep, once they are `expected` or after 20 s: the
    /// threads trim theirs when their queues have been empty for a moment (a `keptAnalyses`
    /// request is a job on each).
    pub async fn sessions_reaching(&mut self, expected: u64) -> u64 {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let now = self.kept_analyses().await.0;
            if now == expected || std::time::Instant::now() > deadline {
                return now;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// How many analyses the server keeps for requests (`staticfx/keptAnalyses`).
    pub async fn kept_results(&mut self) -> u64 {
        let r = self.result("staticfx/keptAnalyses", json!({})).await;
        r["results"].as_u64().unwrap()
    }

    /// The next message the server sends, whatever it is.
    pub async fn next_message(&mut self) -> Value {
        if let Some(m) = self.backlog.pop_front() {
            return m;
        }
        tokio::time::timeout(TIMEOUT, self.rx.recv())
            .await
            .unwrap_or_else(|_| panic!("no message in time"))
            .expect("server alive")
    }

    /// Next notification with `method` satisfying `pred` (earlier ones are consumed).
    pub async fn wait_for(&mut self, method: &str, mut pred: impl FnMut(&Value) -> bool) -> Value {
        while let Some(m) = self.backlog.pop_front() {
            if m["method"] == method && pred(&m["params"]) {
                return m["params"].clone();
            }
        }
        loop {
            let msg = tokio::time::timeout(TIMEOUT, self.rx.recv())
                .await
                .unwrap_or_else(|_| panic!("no {method} in time"))
                .expect("server alive");
            if msg["method"] == method && pred(&msg["params"]) {
                return msg["params"].clone();
            }
        }
    }

    pub async fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let p = self
            .wait_for("textDocument/publishDiagnostics", |p| {
                p["uri"] == uri && p["version"] == version
            })
            .await;
        p["diagnostics"].as_array().cloned().unwrap_or_default()
    }

    /// `initialize` + `initialized`; `utf8` offers UTF-8 positions first.
    pub async fn initialize(&mut self, root: Option<&Path>, options: Value, utf8: bool) -> Value {
        let encodings = if utf8 {
            json!(["utf-8", "utf-16"])
        } else {
            json!(["utf-16"])
        };
        let folders = root
            .map(|r| json!([{"uri": file_uri(r), "name": "ws"}]))
            .unwrap_or(Value::Null);
        let res = self
            .result(
                "initialize",
                json!({
                    "processId": null,
                    "capabilities": {"general": {"positionEncodings": encodings}, "workspace": {"configuration": true}},
                    "workspaceFolders": folders,
                    "initializationOptions": options,
                }),
            )
            .await;
        self.notify("initialized", json!({})).await;
        res
    }

    pub async fn open(&mut self, uri: &str, text: &str) {
        self.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})).await;
    }

    pub async fn hover(&mut self, uri: &str, pos: (u32, u32)) -> Value {
        self.result(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": pos.0, "character": pos.1}}),
        )
        .await
    }
}

/// The 0-based start lines of the diagnostics with `code`.
/// A server started on a corpus root (an unzipped wheel) as a user opens it: torch 2.15, and
/// the test venv of scripts/test-all.sh (`$STATICFX_USER_VENV`, whose huggingface_hub the
/// libraries' configs import) when it is set.
pub async fn corpus_client(root: &Path) -> TestClient {
    let mut options = json!({"targetVersion": "torch==2.15"});
    if let Some(venv) = std::env::var_os("STATICFX_USER_VENV") {
        options["python"] = json!(std::path::PathBuf::from(venv));
    }
    let mut c = TestClient::start(Value::Null);
    c.initialize(Some(root), options, false).await;
    c
}

pub fn lines_of(diagnostics: &[Value], code: &str) -> Vec<u64> {
    diagnostics
        .iter()
        .filter(|d| d["code"] == code)
        .map(|d| d["range"]["start"]["line"].as_u64().unwrap())
        .collect()
}

pub fn file_uri(path: &Path) -> String {
    tower_lsp_server::ls_types::Uri::from_file_path(path)
        .unwrap()
        .as_str()
        .to_string()
}

/// Removes the `$0` cursor marker; returns the text and the marker's (line, UTF-16 column).
pub fn cursor(fixture: &str) -> (String, (u32, u32)) {
    let at = fixture.find("$0").expect("fixture has a $0 marker");
    let text = format!("{}{}", &fixture[..at], &fixture[at + 2..]);
    let before = &fixture[..at];
    let line = before.matches('\n').count() as u32;
    let col = before.rsplit('\n').next().unwrap().encode_utf16().count() as u32;
    (text, (line, col))
}

pub fn fixture_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp")
}
