//! `staticfx check` as users run it: exit codes, noqa, select/ignore, pyproject config, and
//! snapshots of the text/JSON outputs for a few corpus cases.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_staticfx"))
}

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/breaks")
        .join(name)
}

/// Runs `staticfx check` in `dir` with `args`; returns (exit code, stdout).
fn check(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = bin()
        .current_dir(dir)
        .arg("check")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

const BREAKING: &str = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        h = self.fc(x)\n        if h.sum() > 0:\n            h = torch.relu(h)\n        print(h.shape)\n        return h\n";

const CLEAN: &str = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        h = self.fc(x)\n        if self.training:\n            h = h * 2\n        return torch.where(h > 0, h, -h)\n";

#[test]
fn exit_codes_and_ruff_style_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("clean.py"), CLEAN).unwrap();
    std::fs::write(dir.path().join("bad.py"), BREAKING).unwrap();
    assert_eq!(check(dir.path(), &["clean.py"]).0, 0);
    let (code, out) = check(dir.path(), &["."]);
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("./bad.py:12:12: FX101 Data-dependent branching"),
        "{out}"
    );
    assert!(lines[1].starts_with("./bad.py:14:9: FX105 "), "{out}");
    assert_eq!(check(dir.path(), &["missing.py"]).0, 2);
}

/// A guard on an argument's value (FX202) is printed but, like an analysis limit, fails the
/// run only under `--strict`; a recompile on every call (FX201) fails it.
#[test]
fn recompile_notes_fail_only_under_strict() {
    let dir = tempfile::tempdir().unwrap();
    let guarded = CLEAN
        .replace("def forward(self, x):", "def forward(self, x, scale=1.0):")
        .replace("h = self.fc(x)\n", "h = self.fc(x) * scale\n");
    std::fs::write(dir.path().join("guarded.py"), &guarded).unwrap();
    let (code, out) = check(dir.path(), &["--no-cache", "guarded.py"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("FX202") && out.contains("`scale == 1.0`"),
        "{out}"
    );
    assert_eq!(
        check(dir.path(), &["--no-cache", "--strict", "guarded.py"]).0,
        1
    );
    let counter = CLEAN
        .replace(
            "h = self.fc(x)\n",
            "h = self.fc(x)\n        self.calls = self.calls + 1\n",
        )
        .replace(
            "self.fc = nn.Linear(8, 8)\n",
            "self.fc = nn.Linear(8, 8)\n        self.calls = 0\n",
        );
    std::fs::write(dir.path().join("counter.py"), &counter).unwrap();
    let (code, out) = check(dir.path(), &["--no-cache", "counter.py"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FX201"), "{out}");
}

#[test]
fn noqa_select_ignore_and_pyproject() {
    let dir = tempfile::tempdir().unwrap();
    let src = BREAKING
        .replace("print(h.shape)", "print(h.shape)  # noqa: FX105")
        .replace("if h.sum() > 0:", "if h.sum() > 0:  # noqa");
    std::fs::write(dir.path().join("bad.py"), &src).unwrap();
    assert_eq!(check(dir.path(), &["bad.py"]).0, 0);

    std::fs::write(dir.path().join("bad.py"), BREAKING).unwrap();
    let (code, out) = check(dir.path(), &["bad.py", "--select", "FX105"]);
    assert_eq!((code, out.lines().count()), (1, 1), "{out}");
    let (code, _) = check(dir.path(), &["bad.py", "--ignore", "FX101,FX105"]);
    assert_eq!(code, 0);

    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.staticfx]\nignore = [\"FX105\"]\n",
    )
    .unwrap();
    let (code, out) = check(dir.path(), &["bad.py"]);
    assert_eq!((code, out.lines().count()), (1, 1), "{out}");
    assert!(out.contains("FX101"));
}

#[test]
fn gitignored_files_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir(dir.path().join("build")).unwrap();
    std::fs::write(dir.path().join("build/bad.py"), BREAKING).unwrap();
    std::fs::write(dir.path().join("ok.py"), CLEAN).unwrap();
    assert_eq!(check(dir.path(), &["."]).0, 0);
}

#[test]
fn json_and_sarif_shapes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.py"), BREAKING).unwrap();
    let (_, out) = check(dir.path(), &["bad.py", "--output-format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let first = &v[0];
    for key in [
        "code",
        "message",
        "filename",
        "location",
        "end_location",
        "fix",
        "url",
        "noqa_row",
    ] {
        assert!(first.get(key).is_some(), "missing {key}: {first}");
    }
    assert_eq!(
        first["url"],
        "https://meta-pytorch.org/compile-graph-break-site/gb/gb0170.html"
    );
    assert_eq!(
        first["location"],
        serde_json::json!({"row": 12, "column": 12})
    );
    let (_, out) = check(dir.path(), &["bad.py", "--output-format", "sarif"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], "2.1.0");
    assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), 2);
}

/// Each finding names the classes whose forward reaches it: a helper's break is on every
/// class that calls it (merged into one report), a break in one head only on that head, and
/// a stopped trace on its own class.
#[test]
fn json_names_the_classes_that_reach_a_finding() {
    const SRC: &str = "import torch\nfrom torch import nn\n\n\ndef pick(h):\n    return h[h > 0]\n\n\nclass Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        return pick(self.fc(x))\n\n\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.encoder = Encoder()\n\n    def forward(self, x):\n        h = self.encoder(x)\n        print(h.shape)\n        return h\n\n\nclass Clean(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        return self.fc(x)\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("heads.py"), SRC).unwrap();
    let (_, out) = check(dir.path(), &["heads.py", "--output-format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let by_row: Vec<(u64, String, Vec<String>)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let classes = m["classes"].as_array().unwrap();
            (
                m["location"]["row"].as_u64().unwrap(),
                m["code"].as_str().unwrap().to_string(),
                classes
                    .iter()
                    .map(|c| c.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect();
    let names = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        by_row,
        vec![
            (6, "FX104".to_string(), names(&["Encoder", "Head"])),
            (25, "FX105".to_string(), names(&["Head"])),
        ],
        "{out}"
    );
}

/// Snapshots of what users read: the graph with break annotations, and check's JSON.
#[test]
fn output_snapshots() {
    for case in ["if_sum.py", "helper_gate.py", "item_in_loop.py"] {
        let dir = corpus("");
        let out = bin()
            .current_dir(&dir)
            .args(["graph", case])
            .output()
            .unwrap();
        insta::assert_snapshot!(
            format!("graph_text_{case}"),
            String::from_utf8(out.stdout).unwrap()
        );
        let (_, json) = check(&dir, &[case, "--output-format", "json"]);
        insta::assert_snapshot!(format!("check_json_{case}"), json);
    }
}

fn fix_cmd(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = bin()
        .current_dir(dir)
        .arg("fix")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn fix_diff_safe_and_unsafe() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.py");
    std::fs::write(&bad, BREAKING).unwrap();

    // --diff: a unified diff on stdout, the file untouched, exit 1 (there is something to fix).
    let (code, out, _) = fix_cmd(dir.path(), &["--diff", "bad.py"]);
    assert_eq!(code, 1);
    assert!(out.starts_with("--- bad.py\n+++ bad.py\n@@ "), "{out}");
    assert!(out.contains("-        print(h.shape)\n+        if not torch.compiler.is_compiling():\n+            print(h.shape)\n"), "{out}");
    assert!(!out.contains("torch.where"), "the rewrite is unsafe: {out}");
    assert_eq!(std::fs::read_to_string(&bad).unwrap(), BREAKING);

    // Safe fixes only: the print is guarded, the branch stays (1 finding remains, exit 1).
    let (code, _, err) = fix_cmd(dir.path(), &["bad.py"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("1 finding(s) fixed, 1 remaining (1 more fixable with `--unsafe-fixes`)"),
        "{err}"
    );
    let once = std::fs::read_to_string(&bad).unwrap();
    assert!(once.contains("if h.sum() > 0:"));
    assert_eq!(check(dir.path(), &["bad.py"]).0, 1);

    // --unsafe-fixes: the branch becomes torch.where; nothing is left to report.
    let (code, _, err) = fix_cmd(dir.path(), &["--unsafe-fixes", "bad.py"]);
    assert_eq!(code, 0, "{err}");
    let fixed = std::fs::read_to_string(&bad).unwrap();
    assert!(
        fixed.contains("        h = torch.where(h.sum() > 0, torch.relu(h), h)\n"),
        "{fixed}"
    );
    assert_eq!(check(dir.path(), &["bad.py"]).0, 0);
    // Idempotent: nothing more to do, the file is unchanged.
    let (code, out, _) = fix_cmd(dir.path(), &["--unsafe-fixes", "--diff", "bad.py"]);
    assert_eq!((code, out.as_str()), (0, ""));
}

#[test]
fn check_json_carries_ruff_fix_objects() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.py"), BREAKING).unwrap();
    let (_, out) = check(dir.path(), &["bad.py", "--output-format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let print = v
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["code"] == "FX105")
        .unwrap();
    assert_eq!(print["fix"]["applicability"], "safe");
    let edit = &print["fix"]["edits"][0];
    assert_eq!(
        edit["location"],
        serde_json::json!({"row": 14, "column": 9})
    );
    assert_eq!(
        edit["end_location"],
        serde_json::json!({"row": 14, "column": 23})
    );
    assert_eq!(
        edit["content"],
        "if not torch.compiler.is_compiling():\n            print(h.shape)"
    );
    let branch = v
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["code"] == "FX101")
        .unwrap();
    assert_eq!(branch["fix"]["applicability"], "unsafe");
}
