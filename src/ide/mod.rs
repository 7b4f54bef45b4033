//! What the front ends call, and all they call: `cli` and `lsp` meet here and nowhere else.
//! Plain data in and out, byte offsets, no clap or LSP types (rust-analyzer's `ide` crate is
//! the model).
//!
//! - [`settings`]: one settings model for `[tool.staticfx]`, `initializationOptions` and
//!   `workspace/configuration`, and command-line flags on top;
//! - [`diagnostics`]: one policy for what the user sees of an analysis (wording, severity,
//!   de-duplication, select/ignore, `# noqa`);
//! - [`check`]: one file from disk, through [`check_cache`] (results keyed by content
//!   hashes);
//! - [`fix`]: fix-all to a fixed point; [`files`] and [`exclude`]: which files are analysed;
//! - [`host`]: the editor's analyses (incremental sessions, graph views); [`hover`];
//! - [`run`]: running a graph; [`stack`]: the large-stack threads analysis runs on.

pub use crate::breaks::version::{Source as TargetSource, TorchVersion};

pub mod check;
pub mod check_cache;
pub mod code_actions;
pub mod diagnostics;
pub mod exclude;
pub mod files;
pub mod fix;
pub mod graph;
pub mod host;
pub mod hover;
mod memory;
mod noqa_hover;
pub mod run;
pub mod settings;
pub mod stack;

#[cfg(test)]
mod tests;

pub use diagnostics::{diagnostics, noqa_allows, Diagnostic};
pub use files::{collect_files, collect_files_excluding, collect_for, may_define_module};
pub use host::{AnalysisHost, OpenedOrder, Output, Snapshot};
pub use memory::return_freed_promptly;
pub use run::describe_error;
pub use settings::{Filter, Settings};
// The plain types of fixes the front ends show.
pub use crate::fixes::{Applicability, Edit, Fix, FixKind};
pub use stack::on_large_stack;
// Each code's documentation, for `staticfx rule` and the CI formats' rule titles.
pub use crate::breaks::docs as rule_docs;
