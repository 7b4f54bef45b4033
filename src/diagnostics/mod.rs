//! Plain-data diagnostics shared by every stage and front end. Positions are byte spans in a
//! file; the CLI and the language server convert them to their own line/column conventions.
//! The codes live here too: the analysis limits (`codes`) and the graph-break rules (`Rule`).
//!
//! `Severity`, `Diagnostic` (byte span), the analysis-limit codes (`codes::FX90x`) and `Rule`, the
//! registry of graph-break rules: code, Dynamo gb ids, title, whether a fix exists. Rules, fixes
//! and front ends name a rule by its variant; a mistyped one does not compile (a `compile_fail`
//! doc-test).

use serde::Serialize;

mod rule;
pub use rule::{gb_url, Rule};

use crate::semantic::FileId;
use crate::syntax::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
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
    /// A module class of the analysed file could not be built, so its forward was not traced
    /// (or only partly): reported on the class, wherever the cause lies.
    pub const BUILD: &str = "FX908";

    /// Whether `code` is an analysis limit (what staticfx could not follow) rather than a
    /// finding about the code. A syntax error is the code's own error, so it is a finding.
    /// Limits are information: they change `check`'s exit code only under `--strict`.
    pub fn is_limit(code: &str) -> bool {
        code.starts_with("FX9") && code != SYNTAX_ERROR
    }
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
