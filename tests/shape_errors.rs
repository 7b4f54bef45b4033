//! FX301 end to end: `staticfx check` on classes that raise on their first call in eager
//! PyTorch (tests/fixtures/shape_errors/bad.py, each raising line marked `# FX301`) reports
//! them on those lines, their graphs leave the failing calls' shapes unknown, and the same
//! classes with their sizes fixed (fixed.py) report nothing. FX301 is no graph break: the
//! break summary and the graph's JSON `graph_breaks` stay empty.

use std::path::Path;
use std::process::Command;

const PYPROJECT: &str = "[tool.staticfx]\nexample-inputs = { \"Net\" = { x = \"1x3x32x32\" }, \"Net2\" = { x = \"1x3x32\" }, \"Net3\" = { x = \"2x8\" }, \"Net4\" = { x = \"1x3x32\" } }\n";

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/shape_errors")
            .join(name),
    )
    .unwrap()
}

/// A project with the fixture as `m.py` and the example inputs of its classes.
fn project(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.py"), fixture(name)).unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), PYPROJECT).unwrap();
    dir
}

fn staticfx(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// (row, code, severity, message) of each finding `check --output-format json` reports.
fn check(dir: &Path) -> Vec<(usize, String, String)> {
    let (_, out) = staticfx(dir, &["check", "--output-format", "json", "m.py"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["location"]["row"].as_u64().unwrap() as usize,
                m["code"].as_str().unwrap().to_string(),
                m["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn raising_calls_are_reported_on_their_lines() {
    let dir = project("bad.py");
    let found = check(dir.path());
    let marked: Vec<usize> = fixture("bad.py")
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("# FX301"))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(marked.len(), 4);
    let rows: Vec<usize> = found
        .iter()
        .filter(|f| f.1 == "FX301")
        .map(|f| f.0)
        .collect();
    assert_eq!(rows, marked, "{found:?}");
    assert!(found.iter().all(|f| f.1 == "FX301"), "{found:?}");
    let message = |row: usize| &found.iter().find(|f| f.0 == row).unwrap().2;
    // worded as PyTorch words it, naming the callee and where the input came from
    let fc2 = message(marked[0]);
    assert!(
        fc2.contains("`self.fc2` expects the last dimension 20, gets 10")
            && fc2.contains("from `self.fc(self.conv(x).flatten(1))` (line 14)"),
        "{fc2}"
    );
    assert!(
        message(marked[1]).contains("same number of dimensions"),
        "{found:?}"
    );
    assert!(
        message(marked[2]).contains("invalid for input of size 96"),
        "{found:?}"
    );
    assert!(message(marked[3]).contains("(2x8 and 4x2)"), "{found:?}");
    // an error: `check` fails
    assert_eq!(staticfx(dir.path(), &["check", "m.py"]).0, 1);
}

#[test]
fn raising_calls_have_unknown_shapes_and_are_no_graph_break() {
    let dir = project("bad.py");
    let (code, out) = staticfx(
        dir.path(),
        &[
            "graph",
            "m.py",
            "--entry",
            "Net()",
            "--input",
            "x=1x3x32x32",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let g = &v["graphs"][0];
    let node = |name: &str| {
        g["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .unwrap_or_else(|| panic!("no node {name}: {g}"))
            .clone()
    };
    // fc's output is known; fc2, which raises, has no shape (never a made-up [1, 5])
    assert_eq!(node("fc")["shape"], serde_json::json!([1, 10]), "{g}");
    assert!(node("fc2")["shape"].is_null(), "{g}");
    assert_eq!(g["graph_breaks"].as_array().unwrap().len(), 0, "{g}");
    assert_eq!(g["will_raise"].as_array().unwrap().len(), 1, "{g}");
    assert_eq!(g["regions"].as_array().unwrap().len(), 0, "{g}");
    let (_, text) = staticfx(
        dir.path(),
        &[
            "graph",
            "m.py",
            "--entry",
            "Net()",
            "--input",
            "x=1x3x32x32",
        ],
    );
    assert!(text.contains("No graph breaks detected!"), "{text}");
    assert!(text.contains("[WILL_RAISE]"), "{text}");
}

#[test]
fn fixed_classes_report_nothing() {
    let dir = project("fixed.py");
    let found = check(dir.path());
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(staticfx(dir.path(), &["check", "m.py"]).0, 0);
}

/// The README's VS Code picture shows docs/examples/shape_error as it is: `check` there
/// reports the same FX301, on the line and with the sizes the picture shows.
#[test]
fn the_readme_example_reports_what_its_picture_shows() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples/shape_error");
    let scratch = tempfile::tempdir().unwrap();
    for f in ["model.py", "pyproject.toml"] {
        std::fs::copy(dir.join(f), scratch.path().join(f)).unwrap();
    }
    let (code, out) = staticfx(
        scratch.path(),
        &["check", "--no-cache", "--output-format", "json", "model.py"],
    );
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let found: Vec<(u64, &str, &str)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["location"]["row"].as_u64().unwrap(),
                m["code"].as_str().unwrap(),
                m["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    let (row, code, message) = found[0];
    assert_eq!((row, code), (16, "FX301"));
    assert!(
        message.contains("expects the last dimension 3136, gets 4096"),
        "{message}"
    );
}
