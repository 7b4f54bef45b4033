//! `--target-version` / `target-version`: where torch 2.8 and 2.15 disagree (found by labelling
//! the generated corpus with both, `tests/expected/breaks_generated/`), staticfx reports what
//! the version it is told would report, and says which version it assumed when told none.

use std::path::Path;
use std::process::Command;

const MODEL: &str = "import copy\nimport time\n\nimport torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n        self.cfg = {\"scale\": 2.0}\n\n    def forward(self, x):\n        h = self.fc(x)\n        t0 = time.time()\n        cfg = copy.deepcopy(self.cfg)\n        ids = h.argmax(-1).tolist()\n        r = copy.deepcopy(x)\n        z = torch.zeros(4, 8).requires_grad_()\n        class Out:\n            pass\n        return h * cfg[\"scale\"] + len(ids) + r + z\n";

fn check(dir: &Path, extra: &[&str]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .arg("check")
        .arg(dir.join("m.py"))
        .args(["--output-format", "json"])
        .args(extra)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
        out.status.code().unwrap_or(-1),
    )
}

/// (row, gb id) of every graph-break finding.
fn sites(json: &str) -> Vec<(u64, String)> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let mut out: Vec<(u64, String)> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["code"].as_str().is_some_and(|c| c.starts_with("FX1")))
        .map(|m| {
            let id = m["url"]
                .as_str()
                .and_then(|u| u.rsplit('/').next())
                .map(|p| p.trim_end_matches(".html").to_ascii_uppercase())
                .unwrap_or_default();
            (m["location"]["row"].as_u64().unwrap(), id)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn findings_follow_the_target_version() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.py"), MODEL).unwrap();

    let (new, note, code) = check(dir.path(), &[]);
    assert_eq!(code, 1, "{note}");
    assert!(note.contains("assuming torch 2.15"), "{note}");
    let want_new: Vec<(u64, String)> = [
        (16, "GB9193"),
        (18, "GB0033"),
        (19, "GB4198"),
        (20, "GB8985"),
        (21, "GB8977"),
    ]
    .iter()
    .map(|(l, g)| (*l, g.to_string()))
    .collect();
    assert_eq!(sites(&new), want_new);

    let (old, note, _) = check(dir.path(), &["--target-version", "torch==2.8"]);
    assert!(!note.contains("assuming"), "{note}");
    let want_old: Vec<(u64, String)> = [
        (16, "GB0007"),
        (17, "GB0179"),
        (19, "GB0179"),
        (20, "GB0125"),
        (21, "GB0075"),
    ]
    .iter()
    .map(|(l, g)| (*l, g.to_string()))
    .collect();
    assert_eq!(sites(&old), want_old);

    // the same from pyproject.toml, and the flag wins over it
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.staticfx]\ntarget-version = \"torch==2.8\"\n",
    )
    .unwrap();
    assert_eq!(sites(&check(dir.path(), &[]).0), want_old);
    assert_eq!(
        sites(&check(dir.path(), &["--target-version", "2.15"]).0),
        want_new
    );

    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.staticfx]\ntarget-version = \"numpy==2\"\n",
    )
    .unwrap();
    let (_, err, code) = check(dir.path(), &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("target-version") && err.contains("numpy==2"),
        "{err}"
    );
}

/// `copy.copy` by what it copies, as `torch._dynamo.explain` reports it on each version: a dict
/// breaks on both (CPython calls its `.copy`, which Dynamo skips); 2.15 breaks on a tensor with
/// its own id and traces a tuple and an object of a Python class (a model config); 2.8 skips
/// `copy.copy` whatever it copies.
#[test]
fn shallow_copies_follow_the_target_version() {
    const COPIES: &str = "import copy\n\nimport torch\nfrom torch import nn\n\n\nclass Config:\n    def __init__(self):\n        self.scale = 2.0\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n        self.opts = {\"scale\": 2.0}\n        self.sizes = (8, 8)\n        self.config = Config()\n\n    def forward(self, x):\n        h = self.fc(x)\n        opts = copy.copy(self.opts)\n        h = h * 2\n        sizes = copy.copy(self.sizes)\n        h = h * 2\n        config = copy.copy(self.config)\n        h = h * 2\n        y = copy.copy(h)\n        return y * opts[\"scale\"] * config.scale + sizes[0]\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.py"), COPIES).unwrap();
    let at = |rows: &[(u64, &str)]| -> Vec<(u64, String)> {
        rows.iter().map(|(r, id)| (*r, id.to_string())).collect()
    };
    let (new, note, _) = check(dir.path(), &[]);
    assert_eq!(sites(&new), at(&[(22, "GB0007"), (28, "GB0208")]), "{note}");
    let (old, note, _) = check(dir.path(), &["--target-version", "torch==2.8"]);
    let skipped = [
        (22, "GB0007"),
        (24, "GB0007"),
        (26, "GB0007"),
        (28, "GB0007"),
    ];
    assert_eq!(sites(&old), at(&skipped), "{note}");
}

/// A venv of `python3` (no pip), and its site-packages; None when this machine cannot make one.
fn venv(at: &Path) -> Option<std::path::PathBuf> {
    let ok = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(at)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("note: skipped, `python3 -m venv` failed");
        return None;
    }
    std::fs::read_dir(at.join("lib"))
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.is_dir())
}

/// With no version configured, the findings follow the torch installed in the environment
/// imports resolve through (its `torch/version.py`), and no version is said to be assumed.
#[test]
fn the_installed_torch_is_the_default_target() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.py"), MODEL).unwrap();
    let env = dir.path().join("env");
    let Some(site) = venv(&env) else { return };
    let python = env.to_string_lossy().to_string();

    // Without torch in the environment: the default, said on stderr.
    let (json, note, _) = check(dir.path(), &["--python", &python]);
    assert!(note.contains("assuming torch 2.15"), "{note}");
    assert!(sites(&json).contains(&(21, "GB8977".to_string())));

    // torch 2.8 installed (only what staticfx reads of it: its version file).
    std::fs::create_dir_all(site.join("torch")).unwrap();
    std::fs::write(
        site.join("torch/version.py"),
        "__version__ = '2.8.0+cpu'\ngit_version = 'unknown'\n",
    )
    .unwrap();
    let (json, note, _) = check(dir.path(), &["--python", &python, "--no-cache"]);
    assert!(!note.contains("assuming"), "{note}");
    // `graph` reads the same environment before it says anything about the target.
    let graph = Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .arg("graph")
        .arg(dir.path().join("m.py"))
        .args(["--python", &python])
        .output()
        .unwrap();
    let graph_note = String::from_utf8_lossy(&graph.stderr);
    assert!(!graph_note.contains("assuming"), "{graph_note}");
    let found = sites(&json);
    for site in [
        (16, "GB0007"),
        (19, "GB0179"),
        (20, "GB0125"),
        (21, "GB0075"),
    ] {
        assert!(
            found.contains(&(site.0, site.1.to_string())),
            "{site:?} not in {found:?}"
        );
    }
    // A configured version still wins over the installed one.
    let (json, _, _) = check(
        dir.path(),
        &[
            "--python",
            &python,
            "--no-cache",
            "--target-version",
            "2.15",
        ],
    );
    assert!(sites(&json).contains(&(21, "GB8977".to_string())));
}
