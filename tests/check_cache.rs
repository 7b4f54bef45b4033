//! `staticfx check`'s result cache: a hit returns what the analysis returned, editing the file
//! or a file it imports invalidates it, `--no-cache` writes nothing, a corrupt entry is
//! recovered, and concurrent checks of one tree leave it whole.

use std::path::{Path, PathBuf};
use std::process::Command;

mod lazy_package;

const MODEL: &str = "import torch\nfrom torch import nn\nfrom helpers import scale\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        h = scale(self.fc(x))\n        if h.sum() > 0:\n            h = torch.relu(h)\n        print(h.shape)\n        return h\n";
const HELPERS: &str = "def scale(h):\n    return h * 2\n";

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("model.py"), MODEL).unwrap();
    std::fs::write(dir.path().join("helpers.py"), HELPERS).unwrap();
    dir
}

/// `staticfx check model.py --output-format json` in `dir`; returns (exit code, stdout).
fn check(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .current_dir(dir)
        .env_remove("STATICFX_CACHE_DIR")
        .args(["check", "model.py", "--output-format", "json"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(cache) else {
        return vec![];
    };
    dir.map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect()
}

/// Replaces the cached message text in every entry, so a run that prints it read the cache.
fn tamper(cache: &Path) {
    for e in entries(cache) {
        let text = std::fs::read_to_string(&e).unwrap();
        assert!(
            text.contains("print"),
            "the entry holds the findings: {text}"
        );
        std::fs::write(&e, text.replace("print", "TAMPERED")).unwrap();
    }
}

/// Checks `model.py` in `dir` with the cache in `dir/c`, then tampers with the entry; returns
/// that first check's output and the `--cache-dir` arguments.
fn checked_then_tampered(dir: &Path) -> ((i32, String), [String; 2]) {
    let cache = dir.join("c");
    let args = ["--cache-dir".to_string(), cache.display().to_string()];
    let fresh = check(dir, &[&args[0], &args[1]]);
    assert!(fresh.1.contains("print"), "{}", fresh.1);
    tamper(&cache);
    (fresh, args)
}

#[test]
fn a_hit_returns_the_same_messages_without_analysing() {
    let dir = tree();
    let fresh = check(dir.path(), &["--no-cache"]);
    assert!(fresh.1.contains("print"), "{}", fresh.1);
    let cold = check(dir.path(), &[]);
    assert_eq!(cold, fresh);
    let cache = dir.path().join(".staticfx-cache");
    assert_eq!(
        entries(&cache).len(),
        1,
        "the default directory is in the current one"
    );
    assert!(cache.join(".gitignore").exists());
    let warm = check(dir.path(), &[]);
    assert_eq!(warm, fresh);
    tamper(&cache);
    let (_, tampered) = check(dir.path(), &[]);
    assert!(
        tampered.contains("TAMPERED"),
        "a hit is read, not recomputed: {tampered}"
    );
}

/// A file whose analysis runs the evaluator's bundled standard-library sources
/// (`namedtuple`, `contextmanager`) is a hit too: those sources are not files on disk.
#[test]
fn a_file_reaching_bundled_sources_is_a_hit() {
    let dir = tree();
    let model = format!(
        "from collections import namedtuple\nfrom contextlib import contextmanager\n\nPair = namedtuple('Pair', 'a b')\n\n\n@contextmanager\ndef nothing():\n    yield\n\n\n{MODEL}"
    );
    std::fs::write(dir.path().join("model.py"), model).unwrap();
    let (_, args) = checked_then_tampered(dir.path());
    let (_, warm) = check(dir.path(), &[&args[0], &args[1]]);
    assert!(
        warm.contains("TAMPERED"),
        "a hit is read, not recomputed: {warm}"
    );
}

#[test]
fn editing_the_file_or_an_import_invalidates_its_entry() {
    let dir = tree();
    let cache = dir.path().join("c");
    let c = cache.to_str().unwrap();
    let fresh = check(dir.path(), &["--cache-dir", c]);
    tamper(&cache);
    // A comment in the imported module changes no finding, but its text, so the entry goes.
    std::fs::write(
        dir.path().join("helpers.py"),
        format!("# edited\n{HELPERS}"),
    )
    .unwrap();
    assert_eq!(check(dir.path(), &["--cache-dir", c]), fresh);
    tamper(&cache);
    let edited = MODEL.replace("        print(h.shape)\n", "");
    std::fs::write(dir.path().join("model.py"), edited).unwrap();
    let (_, out) = check(dir.path(), &["--cache-dir", c]);
    assert!(!out.contains("TAMPERED") && !out.contains("print"), "{out}");
    assert_eq!(out, check(dir.path(), &["--no-cache"]).1);
}

/// A name looked up through a lazy package's star imports: the sources whose text could not
/// bind it are searched, not loaded, and the entry depends on them too. Once one of them
/// binds the name, the entry goes.
#[test]
fn a_star_source_searched_for_a_name_invalidates_its_entry_when_it_binds_it() {
    let dir = tree();
    let pkg = lazy_package::write(
        dir.path(),
        &[
            ("early", "def other(h):\n    return h\n"),
            ("late", HELPERS),
        ],
    );
    let model = MODEL.replace("from helpers import scale", "from pkg import scale");
    std::fs::write(dir.path().join("model.py"), model).unwrap();
    let (fresh, args) = checked_then_tampered(dir.path());
    // `early` now binds `scale` first, to something a fresh analysis cannot call.
    std::fs::write(pkg.join("early.py"), "scale = 3\n").unwrap();
    let (_, out) = check(dir.path(), &[&args[0], &args[1]]);
    assert!(!out.contains("TAMPERED"), "{out}");
    assert_eq!(out, check(dir.path(), &["--no-cache"]).1);
    assert_ne!(out, fresh.1, "the edited source is the one found");
}

#[test]
fn no_cache_writes_nothing() {
    let dir = tree();
    let cache = dir.path().join("c");
    check(
        dir.path(),
        &["--no-cache", "--cache-dir", cache.to_str().unwrap()],
    );
    check(dir.path(), &["--no-cache"]);
    assert!(!cache.exists());
    assert!(!dir.path().join(".staticfx-cache").exists());
}

#[test]
fn the_environment_names_the_directory() {
    let dir = tree();
    let cache = dir.path().join("from-env");
    let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .current_dir(dir.path())
        .env("STATICFX_CACHE_DIR", &cache)
        .args(["check", "model.py"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(entries(&cache).len(), 1);
    assert!(!dir.path().join(".staticfx-cache").exists());
}

#[test]
fn a_corrupt_entry_is_recovered() {
    let dir = tree();
    let cache = dir.path().join("c");
    let c = cache.to_str().unwrap();
    let fresh = check(dir.path(), &["--cache-dir", c]);
    for (i, e) in entries(&cache).iter().enumerate() {
        let garbage: &[u8] = if i % 2 == 0 {
            b"{\"format\": 1, \"val"
        } else {
            b"\xff\x00"
        };
        std::fs::write(e, garbage).unwrap();
    }
    assert_eq!(check(dir.path(), &["--cache-dir", c]), fresh);
    for e in entries(&cache) {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&e).unwrap()).unwrap();
        assert!(v["value"]["report"].is_array(), "rewritten whole: {v}");
        assert!(v["value"]["shown"].is_array(), "rewritten whole: {v}");
    }
    tamper(&cache);
    assert!(check(dir.path(), &["--cache-dir", c])
        .1
        .contains("TAMPERED"));
}

#[test]
fn concurrent_checks_leave_the_cache_whole() {
    let dir = tree();
    for i in 0..6 {
        std::fs::write(
            dir.path().join(format!("copy_{i}.py")),
            MODEL.replace("M(", &format!("M{i}(")),
        )
        .unwrap();
    }
    let cache = dir.path().join("c");
    let run = |extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_staticfx"));
        c.current_dir(dir.path())
            .args(["check", ".", "--output-format", "json", "--cache-dir"])
            .arg(&cache)
            .args(extra);
        c
    };
    let fresh = run(&["--no-cache"]).output().unwrap().stdout;
    let children: Vec<_> = (0..4)
        .map(|_| {
            run(&[])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&fresh)
        );
    }
    let names: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains(".tmp")), "{names:?}");
    assert_eq!(entries(&cache).len(), 8, "{names:?}");
    assert_eq!(run(&[]).output().unwrap().stdout, fresh);
}
