//! Plain-data diagnostics shared by every stage and front end. Positions are byte spans in a
//! file; the CLI and the language server convert them to their own line/column conventions.
//! The codes live here too: the analysis limits (`codes`) and the graph-break rules (`Rule`).

use serde::Serialize;

mod rule;
pub use rule::{gb_url, Rule};

use crate::semantic::FileId;
use crate::syntax::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

/// Codes for analysis limits (what the analyser could not see), as opposed to the FX1xx graph
/// breaks it found: users must be able to tell "proven break" from "could not tell".
pub mod codes {
    pub const SYNTAX_ERROR: &str = "FX901";
    pub const UNRESOLVED_NAME: &str = "FX902";
    pub const UNSUPPORTED: &str = "FX903";
    pub const BUDGET: &str = "FX904";
    pub const RAISED: &str = "FX905";
    pub const ENTRY: &str = "FX906";
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnostic {
    pub code: &'static str,
    pub message: String,
    pub severity: Severity,
    #[serde(skip)]
    pub file: FileId,
    pub span: Span,
}
