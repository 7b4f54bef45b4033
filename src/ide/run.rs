//! Running a traced graph with the executor, as `staticfx run` and the editor's "run graph"
//! report it.

use crate::exec::ExecError;
use crate::traced::FileAnalysis;

/// The error with `path:line:col` of the node's source when it has one.
pub fn describe_error(a: &FileAnalysis, e: &ExecError) -> String {
    match e.origin() {
        Some(o) => {
            let f = a.project.file(o.file);
            let lc = f.lines.line_col(&f.text, o.span.start);
            format!("{}:{}:{}: {e}", f.path.display(), lc.line + 1, lc.col + 1)
        }
        None => e.to_string(),
    }
}
