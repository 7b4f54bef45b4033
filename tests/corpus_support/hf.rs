//! What the transformers break suites share (`tests/hf_breaks.rs` on the hand-configured
//! labels of `scripts/breaks/label_hf.py`, `tests/hf_sweep.rs` on the sweep of every base model
//! of `scripts/breaks/sweep_hf.py`): `check` of a modeling file per class through the `ide`
//! layer, the class each line belongs to, the gb ids staticfx's rules can report.
// a suite that finds its corpus through `corpus_support` without checking transformers does
// not use these
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use staticfx::ide::check::check_file;
use staticfx::ide::Settings;
use staticfx::syntax::LineIndex;

/// The directory holding `transformers/` (`$STATICFX_TRANSFORMERS_ROOT`), None after the skip
/// note.
pub fn transformers_root() -> Option<PathBuf> {
    super::corpus_root("STATICFX_TRANSFORMERS_ROOT", "transformers")
}

/// A label file of `tests/expected/`.
pub fn expected_json(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expected")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `check`'s settings for a modeling file of `root`, as the labels' torch (2.15) runs it.
pub fn settings(root: &Path) -> Settings {
    Settings {
        root: Some(root.to_path_buf()),
        // transformers' configs import huggingface_hub: the test venv of scripts/test-all.sh
        python: std::env::var_os("STATICFX_USER_VENV").map(PathBuf::from),
        target_version: Some("torch==2.15".parse().unwrap()),
        ..Settings::default()
    }
}

/// One FX1xx finding: (1-based line, code, gb id, message, line of the outermost call site in
/// the same file, where forward calls the helper the finding is in, the classes whose traced
/// forward reaches it).
pub type Found = (usize, String, String, String, Option<usize>, Vec<String>);

/// `check` of one file (per class), its FX1xx findings.
pub fn check(path: &Path, settings: &Settings) -> Vec<Found> {
    let (path, settings) = (path.to_path_buf(), settings.clone());
    staticfx::ide::on_large_stack("check", move || {
        let (text, diags) = check_file(&path, &settings, None)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let lines = LineIndex::new(&text);
        diags
            .iter()
            .filter(|d| d.code.starts_with("FX1"))
            .map(|d| {
                let line = |offset: usize| lines.line_col(&text, offset).line + 1;
                let outer = d
                    .chain
                    .first()
                    .filter(|(f, _)| *f == d.file)
                    .map(|(_, s)| line(s.start));
                (
                    line(d.span.start),
                    d.code.to_string(),
                    d.gb_id.to_string(),
                    d.message.clone(),
                    outer,
                    d.classes.clone(),
                )
            })
            .collect()
    })
    .unwrap()
}

/// The top-level class each line belongs to (None for module level and functions).
pub fn class_of_lines(text: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let top = !line.is_empty() && !line.starts_with([' ', '\t', '#', ')', ']', '}']);
        if top {
            current = line
                .strip_prefix("class ")
                .map(|r| r.split(['(', ':']).next().unwrap_or("").trim().to_string());
        }
        out.push(current.clone());
    }
    out
}

/// Whether a finding belongs to a class Dynamo ran (`ran`): one of the classes whose traced
/// forward reaches it, as `check` names them. A finding no class reaches (never the case for
/// per-class findings) falls back to where it is written: the class its line is in, else (a
/// module-level helper) the class whose forward calls it; module level is always in scope.
pub fn reached_from(classes: &[Option<String>], found: &Found, ran: &BTreeSet<&str>) -> bool {
    let (line, _, _, _, outer, reaching) = found;
    if !reaching.is_empty() {
        return reaching.iter().any(|c| ran.contains(c.as_str()));
    }
    classes
        .get(line - 1)
        .cloned()
        .flatten()
        .or_else(|| outer.and_then(|o| classes.get(o - 1).cloned().flatten()))
        .is_none_or(|c| ran.contains(c.as_str()))
}

/// The gb ids staticfx's rules can report.
pub fn known_ids() -> BTreeSet<&'static str> {
    staticfx::diagnostics::Rule::ALL
        .iter()
        .flat_map(|r| r.gb_ids().iter().copied())
        .collect()
}

/// Whether `check` reports Dynamo's break at `line`: a finding on that line, with the same gb
/// id where a rule has that id.
pub fn reported(found: &[Found], line: usize, gb_id: &str, ids: &BTreeSet<&str>) -> bool {
    found
        .iter()
        .any(|(l, _, g, _, _, _)| *l == line && (!ids.contains(gb_id) || g == gb_id))
}

/// The names an environment variable lists (comma-separated); None when unset or empty.
pub fn env_list(var: &str) -> Option<BTreeSet<String>> {
    let v = std::env::var(var).ok()?;
    let names: BTreeSet<String> = v
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if !names.is_empty() {
        eprintln!("only the model types of {var}: {v}");
    }
    (!names.is_empty()).then_some(names)
}

pub fn join(lines: &BTreeSet<usize>) -> String {
    lines
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
