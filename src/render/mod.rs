//! Output formats for graphs: the design notes' text layout, Graphviz DOT, and JSON.

pub mod dot;
pub mod json;
pub mod text;

pub use crate::graph::arg_text;
