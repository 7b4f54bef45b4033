//! `staticfx check` in CI and in gradual adoption: the github workflow commands against their
//! grammar, the other CI formats and `--statistics` as snapshots, `--exit-zero`, excludes with
//! `--force-exclude`, and the baseline round trip.

use std::path::Path;
use std::process::Command;

const BREAKING: &str = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        h = self.fc(x)\n        if h.sum() > 0:\n            h = torch.relu(h)\n        print(h.shape)\n        return h\n";

/// Runs `staticfx check ARGS` in `dir` without CI variables; returns (exit code, stdout, stderr).
fn check(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .current_dir(dir)
        .env_remove("CI_PROJECT_DIR")
        .arg("check")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

// ---------------------------------------------------------------------------------------------
// GitHub workflow commands

/// One parsed `::command key=value,...::message` line.
struct WorkflowCommand {
    command: String,
    properties: Vec<(String, String)>,
    message: String,
}

/// Reverses the toolkit's escaping; fails on a `%` that starts no escape, on a raw character
/// that must have been escaped, and on an escape that is not allowed where it stands.
fn unescape(s: &str, property: bool) -> Result<String, String> {
    let mut forbidden = vec!['\r', '\n'];
    if property {
        forbidden.extend([':', ',']);
    }
    if let Some(c) = s.chars().find(|c| forbidden.contains(c)) {
        return Err(format!("unescaped {c:?} in {s:?}"));
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let code = rest
            .get(i + 1..i + 3)
            .ok_or(format!("dangling % in {s:?}"))?;
        out.push(match (code, property) {
            ("25", _) => '%',
            ("0D", _) => '\r',
            ("0A", _) => '\n',
            ("3A", true) => ':',
            ("2C", true) => ',',
            _ => return Err(format!("bad escape %{code} in {s:?}")),
        });
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The grammar of GitHub's workflow commands:
/// `::` name [` ` key `=` value (`,` key `=` value)*] `::` message.
fn parse_workflow_command(line: &str) -> Result<WorkflowCommand, String> {
    let body = line.strip_prefix("::").ok_or("no leading ::")?;
    let end = body.find("::").ok_or("no :: before the message")?;
    let (head, message) = (&body[..end], &body[end + 2..]);
    let (command, props) = match head.split_once(' ') {
        Some((c, p)) => (c, Some(p)),
        None => (head, None),
    };
    if command.is_empty()
        || !command
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        return Err(format!("bad command name {command:?}"));
    }
    let mut properties = Vec::new();
    for pair in props.map(|p| p.split(',').collect()).unwrap_or(Vec::new()) {
        let (k, v) = pair.split_once('=').ok_or(format!("no = in {pair:?}"))?;
        if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(format!("bad key {k:?}"));
        }
        properties.push((k.to_string(), unescape(v, true)?));
    }
    Ok(WorkflowCommand {
        command: command.to_string(),
        properties,
        message: unescape(message, false)?,
    })
}

#[test]
fn the_grammar_checker_rejects_what_github_would_misread() {
    assert!(parse_workflow_command("::warning file=a.py,line=1::m").is_ok());
    assert!(parse_workflow_command("::warning file=a:b.py::m").is_err());
    assert!(parse_workflow_command("::warning file=a,b.py::m").is_err());
    assert!(parse_workflow_command("::warning file=a.py::50% off").is_err());
    assert!(parse_workflow_command("::warning file=a.py::m %3A").is_err());
    assert!(parse_workflow_command("warning file=a.py::m").is_err());
    let c = parse_workflow_command("::notice title=x%2Cy%3Az::a%25b%0Ac").unwrap();
    assert_eq!(c.properties, vec![("title".into(), "x,y:z".into())]);
    assert_eq!(c.message, "a%b\nc");
}

#[test]
fn github_output_is_valid_workflow_commands() {
    let dir = tempfile::tempdir().unwrap();
    // A file name with both property separators, and a condition whose text holds `%` and a
    // line break: every escape of the grammar is needed.
    let name = "odd,name:v2.py";
    let src = BREAKING.replace(
        "        if h.sum() > 0:",
        "        if (h % 3\n                ).sum() > 0:",
    );
    std::fs::write(dir.path().join(name), src).unwrap();
    let (code, out, err) = check(dir.path(), &[name, "--output-format", "github"]);
    assert_eq!(code, 1, "{err}");
    let (_, json, _) = check(dir.path(), &[name, "--output-format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let json = json.as_array().unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), json.len(), "{out}");
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        out.contains("%25"),
        "the `%` of the condition is escaped: {out}"
    );
    for (line, m) in lines.iter().zip(json) {
        let c = parse_workflow_command(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(c.command, "warning", "{line}");
        let keys: Vec<&str> = c.properties.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            ["file", "line", "col", "endLine", "endColumn", "title"],
            "{line}"
        );
        let prop = |k: &str| {
            c.properties
                .iter()
                .find(|(key, _)| key == k)
                .unwrap()
                .1
                .clone()
        };
        assert_eq!(prop("file"), name);
        assert_eq!(prop("title"), m["code"].as_str().unwrap());
        assert_eq!(prop("line"), m["location"]["row"].to_string());
        assert_eq!(prop("col"), m["location"]["column"].to_string());
        assert_eq!(prop("endLine"), m["end_location"]["row"].to_string());
        assert_eq!(prop("endColumn"), m["end_location"]["column"].to_string());
        assert_eq!(
            c.message,
            format!(
                "{name}:{}:{}: {} {}",
                m["location"]["row"],
                m["location"]["column"],
                m["code"].as_str().unwrap(),
                m["message"].as_str().unwrap()
            )
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The other formats, --statistics, --exit-zero

#[test]
fn ci_format_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    std::fs::write(dir.path().join("pkg/bad.py"), BREAKING).unwrap();
    std::fs::write(
        dir.path().join("pkg/worse.py"),
        BREAKING.replace("        return h\n", "        print(h)\n        return h\n"),
    )
    .unwrap();
    for format in ["gitlab", "junit", "json-lines", "concise"] {
        let (code, out, err) = check(dir.path(), &["pkg", "--output-format", format]);
        assert_eq!(code, 1, "{format}: {err}");
        insta::assert_snapshot!(format!("format_{format}"), out);
    }
    let (code, out, _) = check(dir.path(), &["pkg", "--statistics"]);
    assert_eq!(code, 1);
    insta::assert_snapshot!("statistics_text", out);
    let (_, out, _) = check(
        dir.path(),
        &["pkg", "--statistics", "--output-format", "json"],
    );
    insta::assert_snapshot!("statistics_json", out);
    let (code, _, err) = check(
        dir.path(),
        &["pkg", "--statistics", "--output-format", "junit"],
    );
    assert_eq!(code, 2, "{err}");

    // A clean run: ruff's "All checks passed!" and JUnit's single passing case.
    std::fs::write(dir.path().join("clean.py"), "x = 1\n").unwrap();
    let (code, out, _) = check(dir.path(), &["clean.py", "--output-format", "concise"]);
    assert_eq!((code, out.as_str()), (0, "All checks passed!\n"));
    let (_, out, _) = check(dir.path(), &["clean.py", "--output-format", "junit"]);
    assert!(
        out.contains("<testcase name=\"No errors found\" classname=\"staticfx\""),
        "{out}"
    );
    let (_, out, _) = check(dir.path(), &["clean.py", "--output-format", "gitlab"]);
    assert_eq!(out.trim(), "[]");
}

#[test]
fn gitlab_paths_are_relative_to_the_ci_project_dir() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    std::fs::write(dir.path().join("pkg/bad.py"), BREAKING).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .current_dir(dir.path().join("pkg"))
        .env("CI_PROJECT_DIR", dir.path())
        .args(["check", "bad.py", "--output-format", "gitlab"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["location"]["path"], "pkg/bad.py");
    // The same fingerprint as when run from the project directory itself.
    let (_, here, _) = check(dir.path(), &["pkg/bad.py", "--output-format", "gitlab"]);
    let here: serde_json::Value = serde_json::from_str(&here).unwrap();
    assert_eq!(v[0]["fingerprint"], here[0]["fingerprint"]);
    assert_ne!(v[0]["fingerprint"], v[1]["fingerprint"]);
}

/// A class whose constructor stops in another file of the project (a KeyError CPython raises
/// too): the analysed file has no finding, only the limit on the class.
const UNBUILT: &str = "from torch import nn\nfrom helpers import width\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(width(), 8)\n\n    def forward(self, x):\n        return self.fc(x)\n";
const HELPERS: &str = "def width():\n    table = {}\n    return table[\"width\"]\n";

#[test]
fn analysis_limits_are_counted_apart_and_fail_only_when_strict() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("model.py"), UNBUILT).unwrap();
    std::fs::write(dir.path().join("helpers.py"), HELPERS).unwrap();
    let (code, out, err) = check(
        dir.path(),
        &["model.py", "--output-format", "concise", "--no-cache"],
    );
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    // on the class's name, with the cause and where it lies
    assert!(
        lines[0].starts_with("model.py:5:7: FX908 analysis limit: could not build `M`: "),
        "{out}"
    );
    assert!(lines[0].contains("helpers.py:3)"), "{out}");
    assert_eq!(lines[1], "No findings.");
    assert!(
        lines[2].starts_with("1 place staticfx could not follow"),
        "{out}"
    );
    assert!(
        err.contains("0 finding(s), 1 place staticfx could not follow"),
        "{err}"
    );

    let (code, _, _) = check(dir.path(), &["model.py", "--strict", "--no-cache"]);
    assert_eq!(code, 1);
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.staticfx]\nstrict = true\n",
    )
    .unwrap();
    let (code, _, _) = check(dir.path(), &["model.py", "--no-cache"]);
    assert_eq!(code, 1);

    // findings still fail, and the limits are counted on their own line
    std::fs::remove_file(dir.path().join("pyproject.toml")).unwrap();
    std::fs::write(dir.path().join("breaking.py"), BREAKING).unwrap();
    let (code, out, _) = check(
        dir.path(),
        &[
            "model.py",
            "breaking.py",
            "--output-format",
            "concise",
            "--no-cache",
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("\nFound 2 errors.\n1 place staticfx could not follow"),
        "{out}"
    );
}

#[test]
fn exit_zero_keeps_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.py"), BREAKING).unwrap();
    let (code, out, _) = check(dir.path(), &["bad.py", "--exit-zero"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 2, "findings are still printed: {out}");
    assert_eq!(check(dir.path(), &["missing.py", "--exit-zero"]).0, 2);
}

// ---------------------------------------------------------------------------------------------
// exclude / extend-exclude / --force-exclude

#[test]
fn excludes_prune_walks_and_force_exclude_applies_them_to_named_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in [
        "pkg/bad.py",
        "generated/bad.py",
        "pkg/legacy_bad.py",
        "venv/bad.py",
        "pkg/stub.pyi",
    ] {
        std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
        std::fs::write(d.join(f), BREAKING).unwrap();
    }
    let files = |out: &str| {
        let mut v: Vec<String> = out
            .lines()
            .map(|l| l.split(':').next().unwrap().to_string())
            .collect();
        v.dedup();
        v
    };
    std::fs::write(
        d.join("pyproject.toml"),
        "[tool.staticfx]\nextend-exclude = [\"generated/\", \"legacy_*.py\"]\n",
    )
    .unwrap();
    // The defaults (venv) and the extension; .pyi files are checked like .py.
    let (_, out, _) = check(d, &["."]);
    assert_eq!(files(&out), ["./pkg/bad.py", "./pkg/stub.pyi"], "{out}");
    // Named explicitly, an excluded file is checked, unless --force-exclude.
    let (code, out, _) = check(d, &["generated/bad.py", "pkg/legacy_bad.py"]);
    assert_eq!(
        (code, files(&out)),
        (
            1,
            vec!["generated/bad.py".to_string(), "pkg/legacy_bad.py".into()]
        )
    );
    let (code, out, err) = check(
        d,
        &[
            "--force-exclude",
            "generated/bad.py",
            "pkg/legacy_bad.py",
            "pkg/bad.py",
        ],
    );
    assert_eq!(
        (code, files(&out)),
        (1, vec!["pkg/bad.py".to_string()]),
        "{err}"
    );
    // Run from a subdirectory: the patterns stay relative to the pyproject.toml.
    let (code, _, _) = check(&d.join("generated"), &["--force-exclude", "bad.py"]);
    assert_eq!(code, 0);

    // `exclude` replaces the defaults.
    std::fs::write(
        d.join("pyproject.toml"),
        "[tool.staticfx]\nexclude = [\"generated\"]\n",
    )
    .unwrap();
    let (_, out, _) = check(d, &["."]);
    assert_eq!(
        files(&out),
        [
            "./pkg/bad.py",
            "./pkg/legacy_bad.py",
            "./pkg/stub.pyi",
            "./venv/bad.py"
        ],
        "{out}"
    );
    std::fs::write(
        d.join("pyproject.toml"),
        "[tool.staticfx]\nexclude = [\"a{b\"]\n",
    )
    .unwrap();
    let (code, _, err) = check(d, &["."]);
    assert_eq!(code, 2);
    assert!(err.contains("exclude") && err.contains("`a{b`"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Baselines

#[test]
fn baseline_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bad = d.join("bad.py");
    std::fs::write(&bad, BREAKING).unwrap();
    let (code, _, err) = check(d, &["bad.py", "--write-baseline", "staticfx-baseline.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("recorded 2 finding(s)"), "{err}");
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("staticfx-baseline.json")).unwrap())
            .unwrap();
    assert_eq!(recorded["findings"].as_array().unwrap().len(), 2);
    let with_baseline =
        |dir: &Path, file: &str| check(dir, &[file, "--baseline", "staticfx-baseline.json"]);
    let (code, out, err) = with_baseline(d, "bad.py");
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("2 more in the baseline"), "{err}");

    // A new break between the old ones: only it is reported, though both old ones moved.
    let edited = BREAKING.replace(
        "        h = self.fc(x)\n",
        "        h = self.fc(x)\n        torch._dynamo.graph_break()\n",
    );
    std::fs::write(&bad, &edited).unwrap();
    let (code, out, _) = with_baseline(d, "bad.py");
    assert_eq!(code, 1);
    assert_eq!(out.lines().collect::<Vec<_>>().len(), 1, "{out}");
    assert!(out.starts_with("bad.py:12:9: FX108 "), "{out}");

    // Edits above the old breaks (a docstring, an import, a helper) move every line: the old
    // breaks still match, and so does a re-indented or re-spaced flagged line.
    let edited = format!(
        "\"\"\"A model.\"\"\"\nimport math\n\n\ndef helper(v):\n    return math.sqrt(v)\n\n\n{}",
        edited.replace("print(h.shape)", "print( h.shape )")
    );
    std::fs::write(&bad, &edited).unwrap();
    let (code, out, _) = with_baseline(d, "bad.py");
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("bad.py:20:9: FX108 "), "{out}");

    // The same in CRLF.
    std::fs::write(&bad, edited.replace('\n', "\r\n")).unwrap();
    let (_, out, _) = with_baseline(d, "bad.py");
    assert_eq!(out.lines().count(), 1, "{out}");

    // A second identical `print(h.shape)` in the same method is a new finding.
    let doubled = edited.replace(
        "        return h\n",
        "        print(h.shape)\n        return h\n",
    );
    std::fs::write(&bad, &doubled).unwrap();
    let (_, out, _) = with_baseline(d, "bad.py");
    let codes: Vec<&str> = out.lines().map(|l| l.split(' ').nth(1).unwrap()).collect();
    assert_eq!(codes, ["FX108", "FX105"], "{out}");

    // Changing the flagged line itself makes it new.
    std::fs::write(&bad, BREAKING.replace("h.sum() > 0", "h.mean() > 0")).unwrap();
    let (_, out, _) = with_baseline(d, "bad.py");
    assert!(
        out.starts_with("bad.py:12:12: FX101 ") && out.lines().count() == 1,
        "{out}"
    );

    // The baseline from [tool.staticfx], relative to the pyproject.toml, run from elsewhere.
    std::fs::write(&bad, &edited).unwrap();
    std::fs::write(
        d.join("pyproject.toml"),
        "[tool.staticfx]\nbaseline = \"staticfx-baseline.json\"\n",
    )
    .unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    let (code, out, _) = check(&d.join("sub"), &["../bad.py"]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("../bad.py:20:9: FX108 ") && out.lines().count() == 1,
        "{out}"
    );

    // A missing or foreign baseline is an error that says what to do.
    let (code, _, err) = check(d, &["bad.py", "--baseline", "nope.json"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("nope.json") && err.contains("--write-baseline"),
        "{err}"
    );
    std::fs::write(d.join("other.json"), "{\"version\": 7, \"findings\": []}").unwrap();
    let (code, _, err) = check(d, &["bad.py", "--baseline", "other.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("version 7"), "{err}");
}
