//! Opening a file that `staticfx check` has checked publishes the check cache's diagnostics
//! before the analysis runs, and they are exactly the analysed ones (ranges, codes, messages,
//! severities, links and the call chain into an imported file); opened with another text
//! than the disk's, the first publication is the analysis's own.
//!
//! The check runs in this process, through the command line's own function, so the cache's
//! key names the same binary as the server's lookup.

mod lsp_support;

use std::path::{Path, PathBuf};

use lsp_support::{file_uri, TestClient};
use serde_json::{json, Value};
use staticfx::cli::check::check_file_cached;
use staticfx::ide::check::Shared;
use staticfx::ide::check_cache::{self, CheckCache};
use staticfx::ide::{on_large_stack, Settings};

// A break in an imported helper (published at the call, with the chain into helpers.py, after
// a non-ASCII comment so UTF-16 columns differ from bytes), a data-dependent branch, and an
// import the analysis cannot follow.
const MODEL: &str = "import torch\nfrom torch import nn\nfrom helpers import noisy\nfrom some_private_lib import mystery  # café ☕\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        h = self.fc(x)\n        h = noisy(h)  # ☕ noisy\n        if h.sum() > 0:\n            h = torch.relu(h)\n        return mystery(h)\n";
const HELPERS: &str =
    "# helpers: größe ☕\ndef noisy(h):\n    print(\"ß\", h.shape)\n    return h * 2\n";

/// A project configured by a pyproject.toml, so `check` and the server find its cache in the
/// same place; returns the directory and the model's path.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("pyproject.toml"), "[tool.staticfx]\n").unwrap();
    std::fs::write(root.join("helpers.py"), HELPERS).unwrap();
    std::fs::write(root.join("model.py"), MODEL).unwrap();
    (dir, root.join("model.py"))
}

/// `staticfx check model.py` with its cache, as the command line runs it; returns how many
/// findings it reported.
fn check(model: &Path) -> usize {
    let model = model.to_path_buf();
    on_large_stack("check", move || {
        let (settings, problems) = Settings::discover(&model);
        assert!(problems.is_empty(), "{problems:?}");
        let cache = CheckCache::new(check_cache::default_dir(&settings));
        let messages =
            check_file_cached(&model, &settings, &Shared::batch(), Some(&cache)).unwrap();
        let entries = std::fs::read_dir(cache.dir()).unwrap().count();
        assert!(entries > 0, "check wrote no cache entry");
        messages.len()
    })
    .unwrap()
}

/// A server on `root`, initialized, once it has its `workspace/configuration` answer: it then
/// analyses the documents open at that moment beside their own scheduled analysis, and one
/// opened before would race the cache's publication against that analysis (which wins it
/// fairly: nothing is published over a newer result).
async fn server(root: &Path) -> TestClient {
    let mut c = TestClient::start(Value::Null);
    c.initialize(Some(root), json!({}), false).await;
    c.wait_for("workspace/configuration", |_| true).await;
    // A round trip through the analysis threads after the answer went out.
    c.kept_analyses().await;
    c
}

async fn next_publication(c: &mut TestClient, uri: &str) -> Vec<Value> {
    let p = c
        .wait_for("textDocument/publishDiagnostics", |p| p["uri"] == uri)
        .await;
    assert_eq!(p["version"], 1, "{p}");
    p["diagnostics"].as_array().cloned().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checked_file_opened_as_on_disk_gets_the_cached_diagnostics_first() {
    let (dir, model) = project();
    let found = check(&model);
    assert!(found >= 3, "the fixture should have findings, got {found}");
    let uri = file_uri(&model);
    let mut c = server(model.parent().unwrap()).await;
    c.open(&uri, MODEL).await;
    // The cache's publication, then the analysis's, which replaces it (sent even when the
    // same). Without the cache the second never comes.
    let cached = next_publication(&mut c, &uri).await;
    let analysed = next_publication(&mut c, &uri).await;
    assert_eq!(cached.len(), found);
    assert_eq!(cached, analysed);
    let chained = analysed
        .iter()
        .find(|d| d["relatedInformation"].is_array())
        .unwrap_or_else(|| panic!("no diagnostic with a call chain: {analysed:?}"));
    let related = &chained["relatedInformation"][0]["location"];
    assert_eq!(
        related["uri"],
        file_uri(&model.with_file_name("helpers.py"))
    );
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_opened_with_other_text_than_the_disk_gets_no_cached_diagnostics() {
    let (dir, model) = project();
    let uri = file_uri(&model);
    // The analysed diagnostics of the disk's text, before anything is cached.
    let mut disk = server(model.parent().unwrap()).await;
    disk.open(&uri, MODEL).await;
    let on_disk = next_publication(&mut disk, &uri).await;
    assert_eq!(on_disk.len(), check(&model));
    // One more line at the top: every finding moves down one line; the cached ones, of the
    // disk's text, would not.
    let edited = format!("# edited in the editor\n{MODEL}");
    let mut c = server(model.parent().unwrap()).await;
    c.open(&uri, &edited).await;
    let first = next_publication(&mut c, &uri).await;
    let moved: Vec<Value> = on_disk
        .iter()
        .map(|d| {
            let mut d = d.clone();
            for end in ["start", "end"] {
                let line = d["range"][end]["line"].as_u64().unwrap();
                d["range"][end]["line"] = json!(line + 1);
            }
            d
        })
        .collect();
    assert!(!first.is_empty());
    assert_eq!(first, moved);
    drop(dir);
}
