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
