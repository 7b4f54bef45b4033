//! staticfx: what `torch.compile` will make of PyTorch model code, read statically.
//!
//! The pipeline runs in one direction (see ARCHITECTURE.md): below the stages, `syntax`,
//! `shapes`, `catalog`, `graph`, `diagnostics` (codes, severities, the rule registry) and
//! `traced` (what a trace produces); the stages `semantic`, `eval` (module tree, then tracing
//! with inlining), `breaks`, `fixes`, `passes`, `exec`, `render`; the driver `analysis`; `ide`,
//! the one API of the front ends `cli` and `lsp`. `tests/module_deps.rs` keeps it acyclic.

pub mod analysis;
pub mod breaks;
pub mod catalog;
pub mod cli;
pub mod diagnostics;
pub mod eval;
/// The bundled CPU executor: interpreter, op table, fused targets, ndarray kernels.
pub mod exec;
pub mod fixes;
/// Fuzz entry points shared by `fuzz/` and the regression tests.
#[doc(hidden)]
pub mod fuzzing;
pub mod graph;
pub mod ide;
pub mod lsp;
pub mod passes;
/// Exclusive wall time per analysis phase, for `benches/check_phases.rs`.
pub mod phase_clock;
pub mod render;
pub mod semantic;
pub mod shapes;
pub mod syntax;
pub mod traced;
