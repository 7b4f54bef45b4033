//! A language-server client over stdio for the server benchmarks: `staticfx lsp` and the
//! `ruff server` they are measured beside.
#![allow(dead_code)] // not every bench drives a server

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub struct Lsp {
    pub child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    /// Everything the server sends but the requests it makes of the client (answered here).
    pub rx: Receiver<Value>,
    next_id: i64,
}

fn send(stdin: &Mutex<ChildStdin>, msg: &Value) {
    let body = msg.to_string();
    let mut w = stdin.lock().unwrap();
    write!(w, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    w.flush().unwrap();
}

impl Lsp {
    pub fn start(mut command: Command) -> Lsp {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the language server");
        let stdin = Arc::new(Mutex::new(child.stdin.take().unwrap()));
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = channel();
        let answer = stdin.clone();
        std::thread::spawn(move || loop {
            let mut len = 0;
            loop {
                let mut line = String::new();
                if out.read_line(&mut line).unwrap_or(0) == 0 {
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
            if out.read_exact(&mut body).is_err() {
                return;
            }
            let msg: Value = serde_json::from_slice(&body).unwrap();
            // workspace/configuration and the like: "no settings", so defaults hold.
            if let (Some(id), Some(_)) = (msg.get("id"), msg.get("method")) {
                send(
                    &answer,
                    &json!({"jsonrpc": "2.0", "id": id, "result": [null]}),
                );
                continue;
            }
            if tx.send(msg).is_err() {
                return;
            }
        });
        Lsp {
            child,
            stdin,
            rx,
            next_id: 0,
        }
    }

    /// `initialize` and `initialized` with `root` as the one workspace folder.
    pub fn initialize(&mut self, root: &Path, initialization: Value) {
        let root_uri = file_uri(root);
        self.request(
            "initialize",
            json!({"processId": null, "rootUri": root_uri, "capabilities": {}, "workspaceFolders": [{"uri": root_uri, "name": "bench"}], "initializationOptions": initialization}),
        );
        self.notify("initialized", json!({}));
    }

    pub fn notify(&self, method: &str, params: Value) {
        send(
            &self.stdin,
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        );
    }

    pub fn open(&self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
        );
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        send(
            &self.stdin,
            &json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}),
        );
        loop {
            let m = self
                .rx
                .recv_timeout(Duration::from_secs(600))
                .expect("response");
            if m.get("id") == Some(&json!(self.next_id)) {
                return m;
            }
        }
    }

    /// Waits for the diagnostics of `version`; returns how many there were.
    pub fn diagnostics(&self, version: i64) -> usize {
        loop {
            let m = self
                .rx
                .recv_timeout(Duration::from_secs(600))
                .expect("publishDiagnostics in time");
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version
            {
                return m["params"]["diagnostics"]
                    .as_array()
                    .map(Vec::len)
                    .unwrap_or(0);
            }
        }
    }

    /// The next message until `deadline`, None once it has passed (or the server is gone).
    pub fn next_before(&self, deadline: Instant) -> Option<Value> {
        let left = deadline.checked_duration_since(Instant::now())?;
        match self.rx.recv_timeout(left) {
            Ok(m) => Some(m),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Waits until the server has used no CPU for `quiet` (what it does on its own after a
    /// publication: a second stage, freeing memory), at most until `deadline`; what it sends
    /// meanwhile is dropped.
    pub fn wait_idle(&self, quiet: Duration, deadline: Instant) {
        let pid = self.child.id();
        let mut last = cpu_ticks(pid);
        while Instant::now() < deadline {
            std::thread::sleep(quiet);
            while self.rx.try_recv().is_ok() {}
            let now = cpu_ticks(pid);
            if now == last {
                return;
            }
            last = now;
        }
    }

    /// `shutdown`, `exit`, and waits for the process to end.
    pub fn stop(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let _ = self.child.wait();
    }
}

pub fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Resident memory of a process from /proc (Linux), in MB.
#[derive(Clone, Copy, Debug)]
pub struct Memory {
    /// VmRSS: resident now.
    pub resident: f64,
    /// VmHWM: the most it was ever resident.
    pub peak: f64,
}

pub fn memory(pid: u32) -> Option<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<f64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb / 1024.0)
    };
    Some(Memory {
        resident: field("VmRSS:")?,
        peak: field("VmHWM:")?,
    })
}

/// CPU time a process has used (user + system), in clock ticks, from /proc (Linux).
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields count from the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// `ruff server` (`$STATICFX_RUFF`, else `ruff` on PATH), if it runs.
pub fn ruff_command() -> Option<Command> {
    let bin = std::env::var_os("STATICFX_RUFF").unwrap_or_else(|| "ruff".into());
    let found = Command::new(&bin)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    found.then(|| {
        let mut c = Command::new(bin);
        c.arg("server");
        c
    })
}

/// `staticfx lsp`, the binary of this build; with `STATICFX_LSP_WRAPPER` set, that program is
/// started instead with the binary and `lsp` as its arguments (a profiler such as heaptrack;
/// the memory figures are then the wrapper's process).
pub fn staticfx_command() -> Command {
    let bin = env!("CARGO_BIN_EXE_staticfx");
    let mut c = match std::env::var_os("STATICFX_LSP_WRAPPER") {
        Some(wrapper) => {
            let mut c = Command::new(wrapper);
            c.arg(bin);
            c
        }
        None => Command::new(bin),
    };
    c.arg("lsp");
    c
}
