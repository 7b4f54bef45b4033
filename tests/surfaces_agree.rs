//! The command line and the editor report the same findings: every fixture, run through
//! `staticfx check --output-format json` and through the language server (in process), gives
//! the same code, range, severity and message. Settings (`select`/`ignore` in pyproject.toml)
//! and `# noqa` comments on lone-CR files are honoured on both surfaces.

mod lsp_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use lsp_support::{file_uri, TestClient};
use serde_json::{json, Value};
use staticfx::semantic::Project;
use staticfx::syntax::LineIndex;

/// (code, start (line, UTF-16 character), end, LSP severity, message) in the editor's terms.
type Finding = (String, (u64, u64), (u64, u64), u64, String);

fn check_json(paths: &[PathBuf], cwd: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .arg("check")
        .arg("--output-format")
        .arg("json")
        .args(paths)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "check failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The CLI's 1-based row and character column as an LSP position (0-based, UTF-16).
fn lsp_position(text: &str, lines: &LineIndex, loc: &Value) -> (u64, u64) {
    let row = loc["row"].as_u64().unwrap() as usize - 1;
    let col = loc["column"].as_u64().unwrap() as usize - 1;
    let start = lines.line_start(row);
    let at = lines.offset(text, row, col);
    (row as u64, text[start..at].encode_utf16().count() as u64)
}

fn cli_findings(messages: &[&Value], text: &str) -> Vec<Finding> {
    let lines = LineIndex::new(text);
    let mut out: Vec<Finding> = messages
        .iter()
        .map(|m| {
            let severity = match m["severity"].as_str().unwrap() {
                "error" => 1,
                "warning" => 2,
                "info" => 3,
                "hint" => 4,
                other => panic!("severity {other}"),
            };
            let mut message = m["message"].as_str().unwrap().to_string();
            if let Some(h) = m["hint"].as_str() {
                message.push_str(&format!("\nHint: {h}"));
            }
            (
                m["code"].as_str().unwrap().to_string(),
                lsp_position(text, &lines, &m["location"]),
                lsp_position(text, &lines, &m["end_location"]),
                severity,
                message,
            )
        })
        .collect();
    out.sort();
    out
}

fn lsp_findings(diags: &[Value]) -> Vec<Finding> {
    let pos = |p: &Value| {
        (
            p["line"].as_u64().unwrap(),
            p["character"].as_u64().unwrap(),
        )
    };
    let mut out: Vec<Finding> = diags
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                pos(&d["range"]["start"]),
                pos(&d["range"]["end"]),
                d["severity"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The server's diagnostics for `path` as it is on disk, in a workspace rooted at `root`.
async fn server_findings(root: &Path, path: &Path, options: Value) -> Vec<Finding> {
    let bytes = std::fs::read(path).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let mut c = TestClient::start(Value::Null);
    c.initialize(Some(root), options, false).await;
    let uri = file_uri(path);
    c.open(&uri, &text).await;
    lsp_findings(&c.diagnostics(&uri, 1).await)
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![fixture_dir()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "py") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fixture_gives_the_same_findings_on_both_surfaces() {
    let files = fixtures();
    assert!(files.len() > 50, "fixture corpus not found: {files:?}");
    let report = check_json(&files, &fixture_dir());
    let report = report.as_array().unwrap();
    let mut compared = 0;
    let mut with_findings = 0;
    for path in &files {
        let shown = path.display().to_string();
        let messages: Vec<&Value> = report.iter().filter(|m| m["filename"] == shown).collect();
        let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
        let cli = cli_findings(&messages, &text);
        let root = Project::default_root(path);
        let lsp = server_findings(&root, path, json!({"debounceMs": 0})).await;
        assert_eq!(
            cli, lsp,
            "{shown}: check (left) and the server (right) disagree"
        );
        compared += 1;
        with_findings += usize::from(!cli.is_empty());
    }
    println!("{compared} fixtures compared, {with_findings} with findings");
    // The comparison must have had something to compare.
    assert!(
        with_findings > 40,
        "only {with_findings} of {compared} fixtures have findings"
    );
}

const MODEL: &str = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        h = self.fc(x)\n        print(h.shape)\n        if h.sum() > 0:\n            h = torch.relu(h)\n        return h\n";

fn codes(findings: &[Finding]) -> Vec<&str> {
    findings.iter().map(|f| f.0.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editor_honours_pyproject_select_and_ignore() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.py");
    std::fs::write(&path, MODEL).unwrap();
    let plain = server_findings(dir.path(), &path, json!({"debounceMs": 0})).await;
    assert_eq!(codes(&plain), ["FX101", "FX105"], "{plain:#?}");

    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.staticfx]\nignore = [\"FX105\"]\n",
    )
    .unwrap();
    let ignored = server_findings(dir.path(), &path, json!({"debounceMs": 0})).await;
    assert_eq!(codes(&ignored), ["FX101"], "{ignored:#?}");
    let cli = check_json(std::slice::from_ref(&path), dir.path());
    assert_eq!(
        cli_findings(&cli.as_array().unwrap().iter().collect::<Vec<_>>(), MODEL),
        ignored
    );

    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.staticfx]\nselect = [\"FX105\"]\n",
    )
    .unwrap();
    let selected = server_findings(dir.path(), &path, json!({"debounceMs": 0})).await;
    assert_eq!(codes(&selected), ["FX105"], "{selected:#?}");

    // The client's settings sit on top of pyproject.toml.
    let overridden = server_findings(
        dir.path(),
        &path,
        json!({"debounceMs": 0, "select": ["FX1"], "ignore": ["FX101"]}),
    )
    .await;
    assert_eq!(codes(&overridden), ["FX105"], "{overridden:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noqa_works_on_lone_cr_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.py");
    let cr = MODEL
        .replace("print(h.shape)", "print(h.shape)  # noqa: FX105")
        .replace('\n', "\r");
    std::fs::write(&path, &cr).unwrap();
    let lsp = server_findings(dir.path(), &path, json!({"debounceMs": 0})).await;
    let cli = check_json(std::slice::from_ref(&path), dir.path());
    let cli = cli_findings(&cli.as_array().unwrap().iter().collect::<Vec<_>>(), &cr);
    assert_eq!(codes(&lsp), ["FX101"], "{lsp:#?}");
    assert_eq!(cli, lsp);
    // Line 12 (0-based 11) is the `if`: rows are counted at lone CRs.
    assert_eq!(lsp[0].1 .0, 11);

    // Without the comment the print is reported, on its own row.
    std::fs::write(&path, MODEL.replace('\n', "\r")).unwrap();
    let lsp = server_findings(dir.path(), &path, json!({"debounceMs": 0})).await;
    assert_eq!(codes(&lsp), ["FX101", "FX105"], "{lsp:#?}");
    assert_eq!(lsp[1].1 .0, 10);
}
