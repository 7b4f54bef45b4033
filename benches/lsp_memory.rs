//! Resident memory of `staticfx lsp` with every transformers modeling file open, beside
//! `ruff server` with the same files open, in the same run.
//!
//! STATICFX_CORPUS=<dir holding the transformers package> cargo bench --bench lsp_memory -- [--timeout SECS] [--limit N]
//!
//! Each server starts with its default settings, the corpus directory as its workspace root
//! (so `from ...modeling_utils import` resolves; `VIRTUAL_ENV` is passed on, so do the
//! imports of other packages), and every `modeling_*.py` under it is opened at once. The bench
//! waits until every file has had its diagnostics published (at most `--timeout`, 1800 s by
//! default, then it reports how many answered), then until the server has used no CPU for a
//! second. It reports the time until every file answered and the resident memory from
//! /proc/PID/status: the peak (VmHWM) and at the end (VmRSS), and what the server keeps then
//! (`staticfx/keptAnalyses`: sessions, libraries, results). The anchor is `ruff server`
//! (`$STATICFX_RUFF`, else `ruff` on PATH); without it the anchor column says so. `--limit N`
//! opens only the first N files (in path order), for a quicker look.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

mod support;
use support::lsp::{file_uri, memory, ruff_command, staticfx_command, Lsp, Memory};

struct Outcome {
    answered: usize,
    /// Until the last file's first diagnostics.
    all_answered: Option<Duration>,
    /// Until the server went quiet after that.
    settled: Duration,
    memory: Option<Memory>,
    /// What the server keeps at the end (staticfx only): sessions, libraries, sessions with
    /// an interpreter of their own, and analyses kept for requests.
    kept: Option<(u64, u64, u64, u64)>,
}

fn open_all(
    command: Command,
    root: &Path,
    files: &[(String, String)],
    timeout: Duration,
    kept_analyses: bool,
) -> Outcome {
    let mut lsp = Lsp::start(command);
    lsp.initialize(root, json!({}));
    let pid = lsp.child.id();
    let t = Instant::now();
    for (uri, text) in files {
        lsp.open(uri, text);
    }
    let mut waiting: HashSet<&str> = files.iter().map(|(u, _)| u.as_str()).collect();
    let deadline = t + timeout;
    while !waiting.is_empty() {
        let Some(m) = lsp.next_before(deadline) else {
            break;
        };
        if m["method"] == "textDocument/publishDiagnostics" {
            waiting.remove(m["params"]["uri"].as_str().unwrap_or(""));
        }
    }
    let all_answered = waiting.is_empty().then(|| t.elapsed());
    // What is still under way (a file's second stage of diagnostics, freeing memory) counts
    // too: wait until a second passes without CPU time, at most the time left.
    lsp.wait_idle(Duration::from_secs(1), deadline);
    let settled = t.elapsed();
    let memory = memory(pid);
    let kept = kept_analyses.then(|| {
        let r = &lsp.request("staticfx/keptAnalyses", json!({}))["result"];
        let n = |k: &str| r[k].as_u64().unwrap_or(0);
        (
            n("sessions"),
            n("libraries"),
            n("ownInterpreters"),
            n("results"),
        )
    });
    lsp.stop();
    Outcome {
        answered: files.len() - waiting.len(),
        all_answered,
        settled,
        memory,
        kept,
    }
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mut timeout = Duration::from_secs(1800);
    let mut limit = usize::MAX;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--timeout" => {
                timeout =
                    Duration::from_secs(args.next().and_then(|s| s.parse().ok()).unwrap_or(1800))
            }
            "--limit" => limit = args.next().and_then(|s| s.parse().ok()).unwrap_or(limit),
            other => eprintln!("lsp_memory: unknown argument {other}"),
        }
    }
    let corpus = std::env::var_os("STATICFX_CORPUS").map(PathBuf::from);
    let files = corpus
        .as_deref()
        .map(|c| support::files_under(c, support::is_modeling_file))
        .unwrap_or_default();
    let Some(root) = corpus.filter(|_| !files.is_empty()) else {
        // `cargo test --all-targets` runs this binary too, on machines without the corpus.
        println!(
            "lsp_memory: skipped, STATICFX_CORPUS (the directory holding the transformers \
             package) is not set or holds no modeling_*.py file"
        );
        return;
    };
    let root = std::fs::canonicalize(&root).unwrap();
    let files: Vec<(String, String)> = (files.iter().take(limit))
        .map(|f| {
            let f = std::fs::canonicalize(f).unwrap();
            (
                file_uri(&f),
                std::fs::read_to_string(&f).unwrap_or_default(),
            )
        })
        .collect();
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    println!(
        "{} modeling files ({:.1} MB) under {}, workspace root the same; VIRTUAL_ENV {}",
        files.len(),
        bytes as f64 / 1e6,
        root.display(),
        std::env::var("VIRTUAL_ENV").unwrap_or_else(|_| "unset".into())
    );
    let ours = open_all(staticfx_command(), &root, &files, timeout, true);
    let ruff = ruff_command().map(|c| open_all(c, &root, &files, timeout, false));
    if ruff.is_none() {
        println!(
            "ruff server: not found (set STATICFX_RUFF or put ruff on PATH); no anchor column"
        );
    }
    let n = files.len();
    let answered = |o: &Outcome| format!("{}/{n}", o.answered);
    let secs = |o: &Outcome| match o.all_answered {
        Some(d) => format!("{:.1} s", d.as_secs_f64()),
        None => format!("not all in {:.0} s", timeout.as_secs_f64()),
    };
    let mb = |m: Option<f64>| m.map_or("unreadable".to_string(), |v| format!("{v:.0} MB"));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.1}×", a / b),
        _ => String::new(),
    };
    let peak = |o: &Outcome| o.memory.map(|m| m.peak);
    let resident = |o: &Outcome| o.memory.map(|m| m.resident);
    let time = |o: &Outcome| o.all_answered.map(|d| d.as_secs_f64());
    println!("| | staticfx lsp | ruff server | ratio |");
    println!("|---|---|---|---|");
    let row = |name: &str, a: String, b: Option<String>, r: String| {
        println!("| {name} | {a} | {} | {r} |", b.unwrap_or_default());
    };
    row(
        "files answered",
        answered(&ours),
        ruff.as_ref().map(answered),
        String::new(),
    );
    row(
        "time until every file answered",
        secs(&ours),
        ruff.as_ref().map(secs),
        ratio(time(&ours), ruff.as_ref().and_then(time)),
    );
    row(
        "peak resident (VmHWM)",
        mb(peak(&ours)),
        ruff.as_ref().map(|r| mb(peak(r))),
        ratio(peak(&ours), ruff.as_ref().and_then(peak)),
    );
    row(
        "resident when idle (VmRSS)",
        mb(resident(&ours)),
        ruff.as_ref().map(|r| mb(resident(r))),
        ratio(resident(&ours), ruff.as_ref().and_then(resident)),
    );
    if let Some((sessions, libraries, own, results)) = ours.kept {
        println!(
            "kept when idle: {sessions} sessions ({own} with an interpreter of their own), \
             {libraries} libraries, {results} results"
        );
    }
    println!(
        "idle after: staticfx {:.1} s{}",
        ours.settled.as_secs_f64(),
        ruff.as_ref().map_or(String::new(), |r| format!(
            ", ruff server {:.1} s",
            r.settled.as_secs_f64()
        ))
    );
}
