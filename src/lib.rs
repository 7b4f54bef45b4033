//! staticfx: what `torch.compile` will make of PyTorch model code, read statically.
//!
//! The pipeline runs in one direction (see ARCHITECTURE.md):
//! `syntax` → `semantic` + `catalog` → `eval` (module tree, then tracing with inlining) →
//! `graph` → `shapes` → `render`, driven by `analysis`; `cli` is a thin front end.

pub mod analysis;
pub mod breaks;
pub mod catalog;
pub mod cli;
pub mod diagnostics;
pub mod eval;
/// Stage 8 (in progress): the bundled CPU executor; today its numeric kernels.
pub mod exec;
pub mod fixes;
/// Fuzz entry points shared by `fuzz/` and the regression tests.
#[doc(hidden)]
pub mod fuzzing;
pub mod graph;
pub mod ide;
pub mod lsp;
pub mod passes;
pub mod render;
pub mod semantic;
pub mod shapes;
pub mod syntax;
pub mod traced;
