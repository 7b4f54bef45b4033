//! `--output-format github`: one GitHub Actions workflow command per finding
//! (`::warning file=…,line=…,col=…,endLine=…,endColumn=…,title=FX101::…`), which GitHub turns
//! into an annotation on the pull request's diff. The message repeats `path:line:col: CODE`, as
//! ruff's does, so the raw log stays readable.

use super::super::check::Message;
use crate::diagnostics::Severity;

pub fn render(ms: &[Message]) -> String {
    let mut out = String::new();
    for m in ms {
        let level = match m.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info | Severity::Hint => "notice",
        };
        let path = super::display_path(&m.filename);
        let props = [
            ("file", path.clone()),
            ("line", m.row.to_string()),
            ("col", m.column.to_string()),
            ("endLine", m.end_row.to_string()),
            ("endColumn", m.end_column.to_string()),
            ("title", m.code.clone()),
        ];
        let props: Vec<String> = props
            .iter()
            .map(|(k, v)| format!("{k}={}", escape_property(v)))
            .collect();
        let body = format!("{path}:{}:{}: {} {}", m.row, m.column, m.code, m.message);
        out.push_str(&format!(
            "::{level} {}::{}\n",
            props.join(","),
            escape_data(&body)
        ));
    }
    out
}

/// The escaping of a command's message, as `@actions/core` does it (`escapeData`).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// The escaping of a property value (`escapeProperty`): the message's, plus `:` and `,`,
/// which would otherwise end the value.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}
