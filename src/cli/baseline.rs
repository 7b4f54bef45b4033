//! Gradual adoption. `--write-baseline FILE` records every current finding by a fingerprint;
//! `--baseline FILE` (or `baseline = "…"` in `[tool.staticfx]`) then reports only findings whose
//! fingerprint is not recorded.
//!
//! The fingerprint must survive edits elsewhere in the file, so it holds no line number: it
//! hashes the code, the file's path relative to the baseline, the names of the enclosing
//! `class`/`def` headers and the text of the flagged line without its whitespace, plus the index
//! of that combination among the file's findings (two identical `if x.sum() > 0:` lines in one
//! method stay two entries). Editing the flagged line itself, renaming its method or moving the
//! file makes the finding new, which is the point: it is new code.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::check::Message;
use crate::syntax::LineIndex;

const VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
pub struct BaselineFile {
    pub version: u32,
    pub findings: Vec<Entry>,
}

/// One recorded finding. Only `fingerprint` is matched; the rest is for the reader of a diff.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub fingerprint: String,
    pub code: String,
    pub path: String,
    pub line: usize,
    pub message: String,
}

/// The fingerprint of each message, paths taken relative to `base` (the baseline's directory).
/// `ms` must be sorted by file and position, as `check` sorts them.
pub fn fingerprints(ms: &[Message], base: &Path) -> Vec<String> {
    let base = std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf());
    let mut texts: HashMap<&str, Option<(String, LineIndex)>> = HashMap::new();
    let mut seen: HashMap<[u8; 32], usize> = HashMap::new();
    ms.iter()
        .map(|m| {
            let source = texts.entry(m.filename.as_str()).or_insert_with(|| {
                let text = crate::semantic::project::read_lossy(Path::new(&m.filename)).ok()?;
                let lines = LineIndex::new(&text);
                Some((text, lines))
            });
            let (line, scope) = match source {
                Some((text, lines)) => (
                    normalized_line(text, lines, m.row),
                    enclosing_scope(text, lines, m.row),
                ),
                None => (String::new(), String::new()),
            };
            let mut h = Sha256::new();
            for part in [
                m.code.as_str(),
                &relative_path(&m.filename, &base),
                &scope,
                &line,
            ] {
                h.update(part.as_bytes());
                h.update([0]);
            }
            let key: [u8; 32] = h.finalize().into();
            let index = seen.entry(key).or_insert(0);
            let mut h = Sha256::new();
            h.update(key);
            h.update(index.to_le_bytes());
            *index += 1;
            hex(&h.finalize()[..16])
        })
        .collect()
}

pub fn relative_path(filename: &str, base: &Path) -> String {
    let abs = std::path::absolute(filename).unwrap_or_else(|_| PathBuf::from(filename));
    match abs.strip_prefix(base) {
        Ok(rel) => super::output::display_path(&rel.to_string_lossy()),
        Err(_) => super::output::display_path(&abs.to_string_lossy()),
    }
}

/// Line `row` (1-based, the way `LineIndex` counts `\n`, `\r\n` and lone `\r`) without its
/// whitespace, so re-indenting or re-spacing it (a formatter run) does not make it new.
fn normalized_line(text: &str, lines: &LineIndex, row: usize) -> String {
    line_text(text, lines, row)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

fn line_text<'t>(text: &'t str, lines: &LineIndex, row: usize) -> &'t str {
    if row == 0 || row > lines.line_count() {
        return "";
    }
    let start = lines.line_start(row - 1);
    let end = if row < lines.line_count() {
        lines.line_start(row)
    } else {
        text.len()
    };
    text.get(start..end)
        .unwrap_or("")
        .trim_end_matches(['\n', '\r'])
}

/// `M.forward`: the `class` and `def` headers above `row` whose indentation is smaller than
/// that of every line between them and the row (the scopes the line is in).
fn enclosing_scope(text: &str, lines: &LineIndex, row: usize) -> String {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut limit = indent(line_text(text, lines, row));
    let mut names = Vec::new();
    for r in (1..row).rev() {
        if limit == 0 {
            break;
        }
        let l = line_text(text, lines, r);
        if l.trim().is_empty() || l.trim_start().starts_with('#') || indent(l) >= limit {
            continue;
        }
        limit = indent(l);
        let head = l.trim_start();
        let head = head.strip_prefix("async ").unwrap_or(head);
        if let Some(rest) = head
            .strip_prefix("def ")
            .or_else(|| head.strip_prefix("class "))
        {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.push(name);
        }
    }
    names.reverse();
    names.join(".")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn write(path: &Path, ms: &[Message]) -> Result<usize, String> {
    let base = base_dir(path);
    let findings: Vec<Entry> = ms
        .iter()
        .zip(fingerprints(ms, &base))
        .map(|(m, fingerprint)| Entry {
            fingerprint,
            code: m.code.clone(),
            path: relative_path(&m.filename, &base),
            line: m.row,
            message: m.message.clone(),
        })
        .collect();
    let n = findings.len();
    let file = BaselineFile {
        version: VERSION,
        findings,
    };
    let text = serde_json::to_string_pretty(&file).expect("json") + "\n";
    std::fs::write(path, text)
        .map_err(|e| format!("{}: cannot write baseline: {e}", path.display()))?;
    Ok(n)
}

pub fn load(path: &Path) -> Result<HashSet<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "{}: cannot read baseline: {e} (create it with `staticfx check --write-baseline {}`)",
            path.display(),
            path.display()
        )
    })?;
    let file: BaselineFile = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a staticfx baseline: {e}", path.display()))?;
    if file.version != VERSION {
        return Err(format!(
            "{}: baseline version {} (this staticfx reads version {VERSION}); rewrite it with --write-baseline",
            path.display(),
            file.version
        ));
    }
    Ok(file.findings.into_iter().map(|e| e.fingerprint).collect())
}

/// Drops the messages the baseline records; returns how many were dropped.
pub fn filter(ms: &mut Vec<Message>, path: &Path, recorded: &HashSet<String>) -> usize {
    let prints = fingerprints(ms, &base_dir(path));
    let before = ms.len();
    let mut keep = prints.iter().map(|p| !recorded.contains(p));
    ms.retain(|_| keep.next().unwrap_or(true));
    before - ms.len()
}

fn base_dir(baseline: &Path) -> PathBuf {
    let abs = std::path::absolute(baseline).unwrap_or_else(|_| baseline.to_path_buf());
    abs.parent().map(Path::to_path_buf).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_is_the_chain_of_enclosing_headers() {
        let src = "class M(nn.Module):\n    def __init__(self):\n        pass\n\n    async def forward(self, x):\n        # comment\n        if x.sum() > 0:\n            return x\n        return x\n";
        let li = LineIndex::new(src);
        assert_eq!(enclosing_scope(src, &li, 7), "M.forward");
        assert_eq!(enclosing_scope(src, &li, 8), "M.forward");
        assert_eq!(enclosing_scope(src, &li, 3), "M.__init__");
        assert_eq!(enclosing_scope(src, &li, 1), "");
    }

    #[test]
    fn lines_count_crlf_and_lone_cr_like_the_line_index() {
        let src = "a = 1\r\nb  =   2\rc = 3";
        let li = LineIndex::new(src);
        assert_eq!(normalized_line(src, &li, 1), "a=1");
        assert_eq!(normalized_line(src, &li, 2), "b=2");
        assert_eq!(normalized_line(src, &li, 3), "c=3");
        assert_eq!(normalized_line(src, &li, 4), "");
    }
}
