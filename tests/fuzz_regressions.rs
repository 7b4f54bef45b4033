//! Every input the fuzz targets ever crashed on (tests/fuzz/<target>/), run through the same
//! entry points in the normal `cargo test`, plus the seed corpus (the test fixtures) so the
//! properties the targets check hold on real models too.

use std::path::{Path, PathBuf};

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.retain(|p| p.is_file() && p.extension().is_none_or(|e| e != "md"));
    out.sort();
    out
}

fn regressions(target: &str) -> Vec<PathBuf> {
    inputs(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fuzz")
            .join(target),
    )
}

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for sub in ["breaks", "fixes", "models", "errors", "lsp"] {
        out.extend(
            inputs(&root.join(sub))
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "py")),
        );
    }
    out
}

fn run(target: &str, f: fn(&[u8]), paths: &[PathBuf]) {
    for p in paths {
        let data = std::fs::read(p).unwrap();
        if let Err(e) = std::panic::catch_unwind(|| f(&data)) {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("{target} on {}: {msg}", p.display());
        }
    }
}

#[test]
fn graph_breaks_regressions_and_seeds() {
    run(
        "graph_breaks",
        staticfx::fuzzing::graph_breaks,
        &regressions("graph_breaks"),
    );
    run("graph_breaks", staticfx::fuzzing::graph_breaks, &fixtures());
}

#[test]
fn fixes_regressions_and_seeds() {
    run("fixes", staticfx::fuzzing::fixes, &regressions("fixes"));
    let fix_fixtures: Vec<PathBuf> = fixtures()
        .into_iter()
        .filter(|p| {
            p.components()
                .any(|c| c.as_os_str() == "breaks" || c.as_os_str() == "fixes")
        })
        .collect();
    run("fixes", staticfx::fuzzing::fixes, &fix_fixtures);
}

#[test]
fn cache_load_regressions() {
    run(
        "cache_load",
        staticfx::fuzzing::cache_load,
        &regressions("cache_load"),
    );
    // A stored graph loads back; a flipped reference or a foreign key does not load.
    let dir = tempfile::tempdir().unwrap();
    let key = "ab".repeat(32);
    let mut g = staticfx::graph::Graph::new();
    g.add(
        "x",
        staticfx::graph::Op::Placeholder,
        "x".into(),
        vec![],
        vec![],
    );
    staticfx::passes::cache::GraphCache::new(dir.path())
        .store(&key, &g, &[])
        .unwrap();
    let text = std::fs::read_to_string(dir.path().join(format!("{key}.json"))).unwrap();
    staticfx::fuzzing::cache_load(text.as_bytes());
    assert!(staticfx::passes::cache::decode(&key, &text).is_some());
    assert!(staticfx::passes::cache::decode(&"cd".repeat(32), &text).is_none());
    for bad in [
        "../../etc/passwd",
        "",
        "x.json",
        &"g".repeat(64),
        "/tmp/abs",
    ] {
        staticfx::fuzzing::cache_load(format!("{bad}\n{{}}").as_bytes());
    }
}

#[test]
fn lsp_dispatch_regressions_and_seeds() {
    run(
        "lsp_dispatch",
        staticfx::fuzzing::lsp_dispatch,
        &regressions("lsp_dispatch"),
    );
    let seeds: &[&[u8]] = &[
        b"",
        b"Content-Length: 5\r\n\r\n{oops",
        b"Content-Length: 2\r\n\r\n[]",
        b"garbage without a header",
        b"Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"nope\"}",
        b"Content-Length: 33\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}",
    ];
    for s in seeds {
        staticfx::fuzzing::lsp_dispatch(s);
    }
}
