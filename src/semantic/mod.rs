//! Stage 2: the semantic model — which files make up the project, how dotted module names map to
//! them, and what each file defines. Name resolution itself (imports, aliases, classes deriving
//! from `nn.Module` across files) happens as the evaluator runs a module's top level, because
//! Python's own rules are evaluation order; this module provides the files it reads.
//!
//! `Project` = root plus loaded files plus in-memory overlays (editor buffers); the `ParseCache`
//! shared by a batch run's or the server's projects keeps 4 MB of text's parses and hands out
//! evicted ones while some project still holds them; a `SourceFile` keeps its text and can drop its
//! tree (`release_tree_unused_since`, stamped by a process-wide count of analyses begun), parsed
//! again from that text when next read; `unloaded_text` reads a module's text without parsing it (a
//! name looked up through star imports searches each source's text first: transformers'
//! `models/__init__` stars every model package), and those files are recorded (`scanned_files`) for
//! the check cache and the server's libraries to depend on. Module names come from the root, which
//! defaults to the nearest ancestor without `__init__.py`. `environment.rs`: the user's Python
//! environment (`PythonEnvironment`, plain data; `discover` finds it: setting, `VIRTUAL_ENV`,
//! `.venv`, `python3` on PATH; `sys.path` from one isolated interpreter run, cached per interpreter
//! in memory and on disk); a module not under the root resolves through its library paths (editable
//! finders, namespace packages) as a read-only library file; compiled modules and `torch` are never
//! read. `EnvironmentHandle` discovers lazily, on the first import that needs it, one per (root,
//! setting) for the process.

pub mod environment;
pub mod project;

pub use environment::{EnvironmentHandle, PythonEnvironment};
pub use project::{FileId, Project, SourceFile};
