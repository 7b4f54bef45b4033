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
//!   [`inlay`]: shape hints on assignments; [`lens`]: a code lens per `forward`;
//! - [`shown`]: diagnostics as an editor shows them, stored by `check` and published by the
//!   server (live or from the cache, [`check::cached_shown`]);
//! - [`run`]: running a graph; [`stack`]: the large-stack threads analysis runs on.
//!
//! The only API of the front ends, plain data and byte offsets. `settings`: one `Settings` for
//! `[tool.staticfx]` (nearest pyproject.toml), `initializationOptions`, `workspace/configuration`
//! and flags (select, ignore, root, example inputs, debounce); adding one is a field, a default and
//! a `merge` arm. `diagnostics`: the one policy for what users see (wording `gb_type: message
//! (gb_id)` / `analysis limit: …`, FX901 an error and other limits at most info, one report per
//! code and line, select/ignore, `# noqa` on `LineIndex` rows). `check`: one file from disk through
//! the policy (in a batch, `Shared` with each thread's `analysis::warm::Warm`), and through
//! `check_cache` (ruff-style persistent results: keyed by the file's text, the settings and the
//! build, hit only while every file the analysis read still hashes the same; atomic writes). `fix`:
//! fix-all to a fixed point. `code_actions`: quick fixes and fix-all for a byte range. `graph`: the
//! `graph` command's rendering. `run`: the `run` command. `files` and `exclude`: which files are
//! collected (`exclude`/`extend-exclude`, `--force-exclude`) and which are evaluated
//! (`may_define_module`; the others are only parsed). `host`: `AnalysisHost` keeps the incremental
//! sessions of the documents analysed last, of the documents only opened (not edited) the newest
//! alone, and once its thread is idle only if no host of the server (sharing an `OpenedOrder`)
//! started a newer one (a thread that starts one wakes the others, `lsp::workers`) (dropped when a
//! document closes or idles, 5 minutes) in its libraries (`analysis::shared`: the modules the
//! documents import are evaluated once per analysis thread) and turns an analysis of a text
//! snapshot into `Send` data (diagnostics, node views, the traced graph, DOT with source lines);
//! `hover`: markdown for a byte offset. `inlay`: the shape each assignment of a traced forward
//! bound (`traced::Binding`), joined across runs or nothing, for a byte range. `lens`: graphs,
//! nodes and breaks per analysed class, above its `def forward`. `stack`: the 256 MiB threads analysis runs on.

pub use crate::breaks::version::{Source as TargetSource, TorchVersion};

pub mod check;
pub mod check_cache;
pub mod code_actions;
pub mod diagnostics;
pub mod exclude;
pub mod files;
pub mod fix;
pub mod graph;
mod guards_hover;
pub mod host;
pub mod hover;
pub mod inlay;
pub mod lens;
mod memory;
mod noqa_hover;
pub mod run;
pub mod settings;
pub mod shown;
pub mod stack;

#[cfg(test)]
mod tests;

pub use diagnostics::{diagnostics, noqa_allows, Diagnostic};
pub use files::{collect_files, collect_files_excluding, collect_for, may_define_module};
pub use host::{AnalysisHost, OpenedOrder, Output, Snapshot};
pub use memory::{hold_freed_pages, return_freed_promptly};
pub use run::describe_error;
pub use settings::{Filter, Settings};
// The plain types of fixes the front ends show.
pub use crate::fixes::{Applicability, Edit, Fix, FixKind};
pub use stack::on_large_stack;
// Each code's documentation, for `staticfx rule` and the CI formats' rule titles.
pub use crate::breaks::docs as rule_docs;
