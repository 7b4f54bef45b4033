//! Edit → publishDiagnostics latency of `staticfx lsp` over stdio, as an editor sees it.
//!
//! Opens a large real file (default: the biggest transformers `modeling_*.py` under
//! `$STATICFX_CORPUS/transformers`), then sends single-character edits inside a forward one at a
//! time and times each until the diagnostics for that version arrive.
//!
//! cargo bench --bench lsp_latency -- [FILE] [--edits N] [--root DIR] [--debounce MS] [--open-all DIR]
//!
//! Then one keystroke (and its undo) in every forward of the file, and the same keystrokes on
//! a top-level line (an import), which the server cannot follow
//! incrementally: that full re-analysis is the anchor the body-edit latency is compared with.
//!
//! `--open-all DIR` then opens every `modeling_*.py` under DIR, waits until each has been
//! analysed, and reports the server's resident memory.
//!
//! `--root` is the workspace folder (default: the file's own directory, so sibling imports
//! resolve but the package above does not; pass the package root to measure whole-project
//! analysis).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod support;

struct Lsp {
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    rx: Receiver<Value>,
    next_id: i64,
}

fn send(stdin: &Mutex<ChildStdin>, msg: &Value) {
    let body = msg.to_string();
    let mut w = stdin.lock().unwrap();
    write!(w, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    w.flush().unwrap();
}

impl Lsp {
    fn start(bin: &Path) -> Lsp {
        let mut child = Command::new(bin)
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start staticfx lsp");
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

    fn notify(&self, method: &str, params: Value) {
        send(
            &self.stdin,
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        );
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
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
    fn diagnostics(&self, version: i64) -> usize {
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
}

fn modeling_files(dir: &Path) -> Vec<PathBuf> {
    support::files_under(dir, support::is_modeling_file)
}

/// Resident memory of a process, from /proc (Linux): (current, peak) in MB.
fn rss_mb(pid: u32) -> Option<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<f64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb / 1024.0)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn largest_modeling_file(dir: &Path) -> Option<PathBuf> {
    let mut best: Option<(u64, PathBuf)> = None;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().and_then(|n| n.to_str()).map(|n| n.starts_with("modeling_") && n.ends_with(".py")).unwrap_or(false)
                // modeling_utils.py is the largest but holds no forward to edit in.
                && std::fs::read_to_string(&p).map(|t| t.contains("def forward(")).unwrap_or(false)
            {
                let len = e.metadata().map(|m| m.len()).unwrap_or(0);
                if best.as_ref().map(|(l, _)| len > *l).unwrap_or(true) {
                    best = Some((len, p));
                }
            }
        }
    }
    best.map(|(_, p)| p)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mut file = None;
    let mut open_all = None;
    let mut edits = 40usize;
    let mut root = None;
    // The server's default unless `--debounce` asks for one.
    let mut debounce: Option<u64> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--edits" => edits = args.next().unwrap().parse().unwrap(),
            "--root" => root = args.next().map(PathBuf::from),
            "--debounce" => debounce = Some(args.next().unwrap().parse().unwrap()),
            "--open-all" => open_all = args.next().map(PathBuf::from),
            _ => file = Some(PathBuf::from(a)),
        }
    }
    let corpus = std::env::var_os("STATICFX_CORPUS").map(PathBuf::from);
    let Some(file) = file.or_else(|| {
        corpus
            .as_deref()
            .and_then(|c| largest_modeling_file(&c.join("transformers")))
    }) else {
        // `cargo test --all-targets` runs this binary too, on machines without the corpus.
        println!(
            "lsp_latency: skipped, no file given and STATICFX_CORPUS (the directory holding the \
             transformers package) is not set or holds no modeling file"
        );
        return;
    };
    let file = std::fs::canonicalize(&file).unwrap();
    let root = root.unwrap_or_else(|| file.parent().unwrap().to_path_buf());
    let text = std::fs::read_to_string(&file).unwrap();
    // An edit point inside a forward: the end of the first statement line of a forward in
    // the middle of the file.
    let lines: Vec<&str> = text.lines().collect();
    let forwards: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("def forward("))
        .map(|(i, _)| i)
        .collect();
    let first_statement = |def: usize| {
        (def + 1..lines.len()).find(|&i| {
            let l = lines[i].trim();
            !l.is_empty()
                && !l.starts_with('#')
                && !l.starts_with(')')
                && !l.ends_with(':')
                && !l.ends_with(',')
                && !l.starts_with('"')
                && !l.ends_with('(')
                && lines[i].starts_with("        ")
        })
    };
    let def = forwards[forwards.len() / 2];
    let body = first_statement(def).expect("a statement in forward");
    let col = lines[body].encode_utf16().count() as u32;
    // Every forward of the file, for the second phase: the cost depends on how many classes
    // inline the edited one.
    let spread: Vec<(usize, u32)> = forwards
        .iter()
        .filter_map(|&d| first_statement(d))
        .map(|b| (b, lines[b].encode_utf16().count() as u32))
        .collect();

    let bin = PathBuf::from(env!("CARGO_BIN_EXE_staticfx"));
    let mut lsp = Lsp::start(&bin);
    let uri = format!("file://{}", file.display());
    let root_uri = format!("file://{}", root.display());
    let options = match debounce {
        Some(ms) => json!({"debounceMs": ms}),
        None => json!({}),
    };
    lsp.request("initialize", json!({"processId": null, "capabilities": {}, "workspaceFolders": [{"uri": root_uri, "name": "bench"}], "initializationOptions": options}));
    lsp.notify("initialized", json!({}));
    let t = Instant::now();
    lsp.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
    );
    let n = lsp.diagnostics(1);
    let open_ms = t.elapsed().as_secs_f64() * 1e3;

    let mut samples = Vec::new();
    for i in 0..edits {
        let version = i as i64 + 2;
        // Type a space at the end of the line, then delete it: every edit changes the text.
        let change = if i % 2 == 0 {
            json!({"range": {"start": {"line": body, "character": col}, "end": {"line": body, "character": col}}, "text": " "})
        } else {
            json!({"range": {"start": {"line": body, "character": col}, "end": {"line": body, "character": col + 1}}, "text": ""})
        };
        let t = Instant::now();
        lsp.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
        );
        lsp.diagnostics(version);
        samples.push(t.elapsed().as_secs_f64() * 1e3);
    }
    // The same keystroke once in every forward of the file.
    let mut across = Vec::new();
    for (k, &(line, c)) in spread.iter().enumerate() {
        for (j, text) in [" ", ""].into_iter().enumerate() {
            let version = 100_000 + (2 * k + j) as i64;
            let end = if text.is_empty() { c + 1 } else { c };
            let change = json!({"range": {"start": {"line": line, "character": c}, "end": {"line": line, "character": end}}, "text": text});
            let t = Instant::now();
            lsp.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
            );
            lsp.diagnostics(version);
            across.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    // The anchor, in the same run: the same kind of keystroke on a top-level line (the
    // first import), which no session can follow, so every edit is analysed in full.
    let top = lines
        .iter()
        .position(|l| l.starts_with("import ") || l.starts_with("from "))
        .expect("an import line");
    let top_col = lines[top].encode_utf16().count() as u32;
    let mut full = Vec::new();
    for i in 0..(edits / 4).max(4) {
        let version = 200_000 + i as i64;
        let change = if i % 2 == 0 {
            json!({"range": {"start": {"line": top, "character": top_col}, "end": {"line": top, "character": top_col}}, "text": " "})
        } else {
            json!({"range": {"start": {"line": top, "character": top_col}, "end": {"line": top, "character": top_col + 1}}, "text": ""})
        };
        let t = Instant::now();
        lsp.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
        );
        lsp.diagnostics(version);
        full.push(t.elapsed().as_secs_f64() * 1e3);
    }
    // Memory with every modeling file of a package open, as when a user opens them all.
    let memory = open_all.map(|dir| {
        let files = modeling_files(&dir);
        let t = Instant::now();
        let mut waiting = std::collections::HashSet::new();
        for f in &files {
            let uri = format!("file://{}", f.display());
            let text = std::fs::read_to_string(f).unwrap_or_default();
            lsp.notify(
                "textDocument/didOpen",
                json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
            );
            waiting.insert(uri);
        }
        while !waiting.is_empty() {
            let m = lsp
                .rx
                .recv_timeout(Duration::from_secs(600))
                .expect("diagnostics for every opened file");
            if m["method"] == "textDocument/publishDiagnostics" {
                waiting.remove(m["params"]["uri"].as_str().unwrap_or(""));
            }
        }
        (files.len(), t.elapsed().as_secs_f64(), rss_mb(lsp.child.id()))
    });
    lsp.request("shutdown", Value::Null);
    lsp.notify("exit", Value::Null);
    let _ = lsp.child.wait();
    let mut sorted = samples.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "file: {} ({} lines, {} bytes)",
        file.display(),
        lines.len(),
        text.len()
    );
    println!("workspace root: {}", root.display());
    println!(
        "edit point: line {} (forward at line {}), debounce {}",
        body + 1,
        def + 1,
        debounce.map_or("server default".to_string(), |ms| format!("{ms} ms"))
    );
    println!("open → first diagnostics: {open_ms:.1} ms ({n} diagnostics)");
    println!(
        "edit → publishDiagnostics over {} edits: p50 {:.1} ms, p95 {:.1} ms, min {:.1} ms, max {:.1} ms",
        sorted.len(),
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.95),
        sorted[0],
        sorted[sorted.len() - 1]
    );
    let mut across_sorted = across.clone();
    across_sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "the same keystroke in each of the {} forwards ({} edits): p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        spread.len(),
        across_sorted.len(),
        percentile(&across_sorted, 0.5),
        percentile(&across_sorted, 0.95),
        across_sorted[across_sorted.len() - 1]
    );
    let mut full_sorted = full.clone();
    full_sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "anchor, edits on a top-level line (full analysis each) over {} edits: p50 {:.1} ms, p95 {:.1} ms; body edits p50 / full p50 = {:.3}",
        full_sorted.len(),
        percentile(&full_sorted, 0.5),
        percentile(&full_sorted, 0.95),
        percentile(&sorted, 0.5) / percentile(&full_sorted, 0.5)
    );
    if let Some((n, secs, rss)) = memory {
        match rss {
            Some((now, peak)) => println!(
                "opened {n} more files, all analysed in {secs:.1} s: server memory {now:.0} MB resident ({peak:.0} MB peak)"
            ),
            None => println!("opened {n} more files in {secs:.1} s (memory not readable here)"),
        }
    }
}
