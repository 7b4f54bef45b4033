//! `staticfx check`'s progress bar: drawn on a terminal for the formats people read, and
//! absent when stderr is not a terminal or the output is for machines. The terminal is a
//! pseudo-terminal from util-linux `script`; without it those tests skip with a note.

use std::path::Path;
use std::process::Command;

const MODEL: &str = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n";

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), MODEL).unwrap();
    std::fs::write(dir.path().join("b.py"), MODEL).unwrap();
    dir
}

const ARGS: &[&str] = &[
    "check",
    "a.py",
    "b.py",
    "--no-cache",
    "--target-version",
    "torch==2.15",
];

/// The bar's text, as the template draws it.
fn has_bar(out: &str) -> bool {
    out.contains("Checking ") && out.contains("2/2 files")
}

#[test]
fn no_bar_when_stderr_is_not_a_terminal() {
    let dir = tree();
    let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .current_dir(dir.path())
        .args(ARGS)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Checked 2 file(s): 2 finding(s)"),
        "the summary is there: {stderr}"
    );
    assert!(!has_bar(&stderr), "{stderr}");
    assert!(
        !stderr.contains('\x1b'),
        "no terminal control sequences: {stderr:?}"
    );
}

/// Runs `staticfx` with ARGS and `extra` under a pseudo-terminal; None without `script`.
fn on_terminal(dir: &Path, extra: &[&str]) -> Option<String> {
    let has_script = Command::new("script").arg("--version").output().is_ok();
    if !has_script {
        eprintln!("skipped: no `script` (util-linux) for a pseudo-terminal");
        return None;
    }
    let mut cmd = format!("'{}'", env!("CARGO_BIN_EXE_staticfx"));
    for a in ARGS.iter().chain(extra) {
        cmd.push(' ');
        cmd.push_str(a);
    }
    // A terminal has a TERM; without one (`env -i`, some CI runners) the bar's library
    // takes the terminal for one that cannot draw.
    let out = Command::new("script")
        .current_dir(dir)
        .env("TERM", "xterm")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_bar_on_a_terminal_then_the_findings() {
    let dir = tree();
    let Some(out) = on_terminal(dir.path(), &[]) else {
        return;
    };
    assert!(has_bar(&out), "{out:?}");
    assert!(
        out.contains("0/2 files"),
        "drawn before the first file ends: {out:?}"
    );
    // Cleared at the end: the summary follows the bar's last frame.
    let last_bar = out.rfind("2/2 files").unwrap();
    assert!(
        out[last_bar..].contains("Checked 2 file(s): 2 finding(s)"),
        "{out:?}"
    );
}

#[test]
fn no_bar_on_a_terminal_for_machine_formats() {
    let dir = tree();
    for format in ["json", "sarif", "github", "json-lines"] {
        let Some(out) = on_terminal(dir.path(), &["--output-format", format]) else {
            return;
        };
        assert!(!has_bar(&out), "{format}: {out:?}");
        assert!(
            out.contains("FX105"),
            "{format}: the findings are printed: {out:?}"
        );
    }
}
