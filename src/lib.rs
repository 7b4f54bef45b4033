//! staticfx: what `torch.compile` will make of PyTorch model code, read statically.
//!
//! The pipeline runs in one direction (see ARCHITECTURE.md):
//! `syntax` → `semantic` + `catalog` → `eval` (module tree, then tracing with inlining) →
//! `graph` → `shapes` → `render`, driven by `analysis`; `cli` is a thin front end.

pub mod analysis;
pub mod catalog;
pub mod cli;
pub mod diagnostics;
pub mod eval;
pub mod graph;
pub mod render;
pub mod semantic;
pub mod shapes;
pub mod syntax;
pub mod passes;
