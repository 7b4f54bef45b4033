//! Stage 2: the semantic model — which files make up the project, how dotted module names map to
//! them, and what each file defines. Name resolution itself (imports, aliases, classes deriving
//! from `nn.Module` across files) happens as the evaluator runs a module's top level, because
//! Python's own rules are evaluation order; this module provides the files it reads.

pub mod environment;
pub mod project;

pub use environment::{EnvironmentHandle, PythonEnvironment};
pub use project::{FileId, Project, SourceFile};
