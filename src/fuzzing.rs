//! Fuzz entry points. The cargo-fuzz targets in `fuzz/` and `tests/fuzz_regressions.rs` call
//! these with arbitrary bytes; each panics only when a property is violated (or on a bug that
//! panics by itself). Not part of the analysis API.
//!
//! - [`graph_breaks`]: source → per-class and instantiated graphs, findings, renderings.
//! - [`fixes`]: source → every offered fix applied re-parses; `staticfx fix` is idempotent.
//! - [`cache_load`]: cache file bytes → a graph the pass pipeline can run on, or nothing; cache
//!   keys from outside never name a file outside the cache directory.
//! - [`lsp_dispatch`]: bytes from a client → the server answers the next request, ends at EOF.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::analysis::{analyze_in_project, FileAnalysis, GraphOptions};
use crate::semantic::Project;

/// Larger inputs are cut (the pathological tests cover size; fuzzing covers shape).
const MAX_SOURCE: usize = 64 << 10;

fn big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    // A panic must reach libFuzzer as a panic, so it is re-raised rather than reported.
    std::thread::scope(|s| {
        let h = crate::ide::stack::thread("staticfx-fuzz")
            .spawn_scoped(s, f)
            .expect("spawn the analysis thread");
        match h.join() {
            Ok(v) => v,
            Err(p) => std::panic::resume_unwind(p),
        }
    })
}

fn source(data: &[u8]) -> String {
    let cut = &data[..data.len().min(MAX_SOURCE)];
    String::from_utf8_lossy(cut).into_owned()
}

fn root() -> PathBuf {
    PathBuf::from("/staticfx-fuzz-root")
}

fn project_with(text: &str) -> (Project, PathBuf) {
    let root = root();
    let path = root.join("model.py");
    let mut project = Project::new(&root);
    project.add_overlay(&path, Arc::from(text), None);
    (project, path)
}

/// Names of classes defined at the start of a line (candidates for `--entry Name()`).
fn class_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("class ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

fn has_error(text: &str) -> bool {
    crate::syntax::parse(text, None).root_node().has_error()
}

fn check(a: &FileAnalysis, len: usize) {
    for d in a.diagnostics.iter().filter(|d| d.file == a.file) {
        assert!(
            d.span.start <= d.span.end && d.span.end <= len,
            "diagnostic {} at {:?} outside the file ({len} bytes)",
            d.code,
            d.span
        );
    }
    for g in &a.graphs {
        assert!(
            g.graph.len() <= crate::eval::trace::MAX_GRAPH_NODES + 1,
            "{} has {} nodes",
            g.name,
            g.graph.len()
        );
        for f in g.breaks.iter().filter(|f| f.file == a.file) {
            assert!(
                f.span.start <= f.span.end && f.span.end <= len,
                "{:?}",
                f.span
            );
        }
        crate::render::text::render(g);
        crate::render::dot::render(g);
    }
    crate::render::json::render(&a.project, &a.graphs);
}

/// Source text → per-class graphs and findings, then each class instantiated (`--entry`).
pub fn graph_breaks(data: &[u8]) {
    let text = source(data);
    big_stack(|| {
        let (project, path) = project_with(&text);
        let opts = GraphOptions {
            root: Some(root()),
            ..Default::default()
        };
        if let Ok(a) = analyze_in_project(project, &path, &opts) {
            check(&a, text.len());
            // The facts and fixes the editor computes from the same analysis.
            let _ = crate::fixes::for_analysis(&a, &text);
        }
        for name in class_names(&text).into_iter().take(2) {
            let (project, path) = project_with(&text);
            let opts = GraphOptions {
                root: Some(root()),
                entry: Some(format!("{name}()")),
                ..Default::default()
            };
            if let Ok(a) = analyze_in_project(project, &path, &opts) {
                check(&a, text.len());
            }
        }
    })
}

/// Source text → every fix offered applies cleanly and re-parses (when the source parsed), and
/// `staticfx fix` reaches a fixed point that fixing again leaves alone.
pub fn fixes(data: &[u8]) {
    let text = source(data);
    big_stack(|| {
        let parsed = !has_error(&text);
        let (project, path) = project_with(&text);
        let opts = GraphOptions {
            root: Some(root()),
            ..Default::default()
        };
        if let Ok(a) = analyze_in_project(project, &path, &opts) {
            for (f, site) in crate::fixes::for_analysis(&a, &text) {
                for fix in &site.fixes {
                    let fixed = crate::fixes::apply(&text, &fix.edits).unwrap_or_else(|e| {
                        panic!("fix `{}` for {} does not apply: {e}", fix.title, f.code)
                    });
                    if parsed {
                        assert!(
                            !has_error(&fixed),
                            "fix `{}` for {} broke the syntax:\n{fixed}",
                            fix.title,
                            f.code
                        );
                    }
                }
            }
        }
        let filter = crate::cli::fix::Filter::all();
        let once = match crate::cli::fix::fix_text(&path, &text, Some(root()), &filter, true) {
            Ok(o) => o.text,
            Err(e) => {
                assert!(!e.contains("invalid syntax"), "{e}");
                return;
            }
        };
        if parsed {
            assert!(!has_error(&once), "staticfx fix broke the syntax:\n{once}");
        }
        if once != text {
            let twice = crate::cli::fix::fix_text(&path, &once, Some(root()), &filter, true)
                .expect("fixing a fixed file");
            assert_eq!(twice.text, once, "staticfx fix is not idempotent");
        }
    })
}

/// Cache file bytes → `cache::decode` returns a graph the pass pipeline runs on, or None. The
/// first line is also tried as a cache key: only hex digests may name a file, inside the dir.
pub fn cache_load(data: &[u8]) {
    use crate::passes::{cache, PassOptions, Pipeline};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let key = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("key").and_then(|k| k.as_str()).map(str::to_string))
        .unwrap_or_default();
    big_stack(|| {
        if let Some((g, _log)) = cache::decode(&key, text) {
            for (id, n) in g.nodes() {
                for a in &n.args {
                    crate::render::arg_text(&g, a);
                }
                g.users(id);
            }
            for opts in [
                PassOptions::default(),
                PassOptions {
                    inference: true,
                    ..Default::default()
                },
            ] {
                let mut copy = g.clone();
                if Pipeline::new(&opts).run(&mut copy).is_ok() {
                    crate::passes::validate(&copy)
                        .unwrap_or_else(|e| panic!("passes left an invalid graph: {e}"));
                }
            }
        }
    });
    let first = text.lines().next().unwrap_or("");
    let dir = std::env::temp_dir().join(format!("staticfx-fuzz-cache-{}", std::process::id()));
    let c = cache::GraphCache::new(&dir);
    let is_digest = first.len() == 64 && first.bytes().all(|b| b.is_ascii_hexdigit());
    let stored = c.store(first, &crate::graph::Graph::new(), &[]);
    assert_eq!(
        stored.is_ok(),
        is_digest,
        "store under key {first:?}: {stored:?}"
    );
    if is_digest {
        assert!(dir.join(format!("{first}.json")).is_file());
        let _ = std::fs::remove_file(dir.join(format!("{first}.json")));
    }
    assert!(c.load(first).is_none() || is_digest);
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
    })
}

fn frame(v: &serde_json::Value) -> Vec<u8> {
    crate::lsp::framing::frame(&serde_json::to_vec(v).unwrap())
}

/// Client bytes → the server: after `initialize` and a document, `data` as the client's next
/// bytes, then a request. The server must answer it (when `data` ends on a message boundary
/// and holds no `exit`), and must end once its input does.
pub fn lsp_dispatch(data: &[u8]) {
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const PROBE: i64 = 4_242_424;
    let mut d = crate::lsp::framing::Deframer::default();
    d.push(data);
    while d.next_message().is_some() {}
    let must_answer = d.pending() == 0 && !data.windows(4).any(|w| w == b"exit");
    let data = data.to_vec();
    runtime().block_on(async move {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server);
        let served = tokio::spawn(crate::lsp::serve(sr, sw));
        let (mut cr, mut cw) = tokio::io::split(client);
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            let mut buf = vec![0u8; 1 << 16];
            let probe = format!("\"id\":{PROBE}");
            loop {
                match cr.read(&mut buf).await {
                    Ok(0) | Err(_) => return (all, false),
                    Ok(n) => all.extend_from_slice(&buf[..n]),
                }
                if all.windows(probe.len()).any(|w| w == probe.as_bytes()) {
                    return (all, true);
                }
            }
        });
        let uri = "file:///staticfx-fuzz-root/model.py";
        let mut input = frame(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "initializationOptions": {"debounceMs": 0}}}));
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        ));
        input.extend(frame(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n        return x.relu()\n"}}})));
        input.extend_from_slice(&data);
        input.extend(frame(&json!({"jsonrpc": "2.0", "id": PROBE, "method": "staticfx/documentText", "params": {"uri": uri}})));
        let _ = cw.write_all(&input).await;
        let _ = cw.flush().await;
        let (out, answered) = if must_answer {
            tokio::time::timeout(Duration::from_secs(60), reader)
                .await
                .expect("the server stopped answering")
                .expect("reader")
        } else {
            (Vec::new(), true)
        };
        assert!(
            answered,
            "the server ended without answering: {}",
            String::from_utf8_lossy(&out[out.len().saturating_sub(2000)..])
        );
        // End of input ends the server.
        let _ = cw.shutdown().await;
        drop(cw);
        tokio::time::timeout(Duration::from_secs(60), served)
            .await
            .expect("the server did not stop at the end of its input")
            .expect("the server task panicked");
    });
}
