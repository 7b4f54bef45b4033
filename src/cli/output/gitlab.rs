//! `--output-format gitlab`: a GitLab Code Quality report, in ruff's shape. The fingerprint is
//! the baseline's (`cli::baseline`): code, path and the flagged line's text, so GitLab keeps
//! matching a finding across commits that move it.

use std::path::Path;

use serde_json::{json, Value};

use super::super::check::Message;
use crate::diagnostics::Severity;

/// `fingerprints[i]` belongs to `ms[i]`. Paths are relative to `project_dir` (GitLab's
/// `CI_PROJECT_DIR`) when given and the file lies under it.
pub fn render(ms: &[Message], fingerprints: &[String], project_dir: Option<&Path>) -> Value {
    Value::Array(
        ms.iter()
            .zip(fingerprints)
            .map(|(m, fp)| {
                let path = relative_to(&m.filename, project_dir);
                json!({
                    "check_name": m.code,
                    // GitLab's widget shows only the description: it carries the code too.
                    "description": format!("{}: {}", m.code, m.message),
                    "severity": match m.severity {
                        Severity::Error => "critical",
                        Severity::Warning => "major",
                        Severity::Info => "minor",
                        Severity::Hint => "info",
                    },
                    "fingerprint": fp,
                    "location": {
                        "path": path,
                        "positions": {
                            "begin": { "line": m.row, "column": m.column },
                            "end": { "line": m.end_row, "column": m.end_column },
                        },
                    },
                })
            })
            .collect(),
    )
}

fn relative_to(filename: &str, project_dir: Option<&Path>) -> String {
    if let Some(dir) = project_dir {
        let abs = std::path::absolute(filename).unwrap_or_else(|_| filename.into());
        if let Ok(rel) = abs.strip_prefix(dir) {
            return super::display_path(&rel.to_string_lossy());
        }
    }
    super::display_path(filename)
}
