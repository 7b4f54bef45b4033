//! One interpreter for the sessions of many open documents, as the language server keeps on
//! each of its analysis threads.
//!
//! Every model file of a package imports the same modules (transformers' `modeling_utils`,
//! timm's layers); a session per document with its own interpreter evaluated them, and held
//! them, once per open document. A [`Library`] is a project and a module-reusing interpreter
//! (`Interp::enable_module_reuse`, as `warm` uses for `check`) that sessions started with
//! `Session::start_shared` run in one after another: a module one document's analysis
//! evaluated is handed to the next as it is, its steps charged to each analysis that
//! reaches it. Between analyses a session is parked (`Session::park`) and the interpreter
//! sits here.
//!
//! A library serves the documents of one root and environment while every file
//! it read is as it was read: an open buffer's text, or the disk's modification stamp. A
//! document whose own module the library loaded as an import gets a session of its own (its
//! top level is evaluated in its own analysis, as `warm` does). After
//! [`DOCUMENTS_PER_LIBRARY`] documents a library is retired: it serves its sessions until they
//! end, then it is dropped, which bounds what the documents' own modules and analyses leave
//! in it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::eval::Interp;
use crate::semantic::project::{disk_stamp, tick_tree_clock, tree_clock, ParseCache, Scanned};
use crate::semantic::{EnvironmentHandle, FileId, Project};

/// Documents whose sessions a library starts before it is retired: what their analyses
/// leave in the interpreter (instances that point at each other) is freed only with it.
/// `STATICFX_LIBRARY_DOCUMENTS` sets it (the memory bench compares).
pub const DOCUMENTS_PER_LIBRARY: usize = 32;

pub fn documents_per_library() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        std::env::var("STATICFX_LIBRARY_DOCUMENTS")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|n| *n > 0)
            .unwrap_or(DOCUMENTS_PER_LIBRARY)
    })
}

/// A file's tree is kept while one of this many of the process's latest analyses read it;
/// then it is dropped, and parsed again if a later one calls a function of the file. Most of
/// the modules a package's model files import are read only while they are imported.
pub const TREE_KEEPING_ANALYSES: u64 = 4;

/// Where a file the library read came from.
enum Source {
    /// An open buffer.
    Buffer,
    /// The disk, with its modification time and length then.
    Disk(Option<(std::time::SystemTime, u64)>),
}

pub struct Library {
    /// Tells libraries apart (the sessions that run in one name it).
    pub id: u64,
    root: PathBuf,
    environment: Option<Arc<EnvironmentHandle>>,
    /// None while a session runs in it, and for good when that session never gave it back
    /// (a panic): the library is then unusable, and so are its sessions.
    interp: Option<Interp>,
    project: Arc<Project>,
    /// How many documents' sessions started here.
    documents: usize,
    /// How many may start before it is retired.
    documents_cap: usize,
    retired: bool,
    /// The documents' own file slots: their text is the session's concern, not the library's.
    document_files: HashSet<FileId>,
    /// Where each file was read from.
    sources: HashMap<FileId, Source>,
    /// How many of the project's files `sources` has looked at.
    recorded: usize,
    /// When a session last ran here.
    used: std::time::Instant,
    /// The tree clock when the interpreter was last lent.
    lent_at: u64,
}

impl Library {
    pub fn new(
        id: u64,
        root: PathBuf,
        environment: Option<Arc<EnvironmentHandle>>,
        parse_cache: Option<ParseCache>,
        documents_cap: usize,
    ) -> Library {
        let project = Arc::new(super::project_at(
            root.clone(),
            parse_cache.as_ref(),
            environment.as_ref(),
        ));
        let mut interp = Interp::new(project.clone());
        interp.enable_module_reuse();
        Library {
            id,
            root,
            environment,
            interp: Some(interp),
            project,
            documents: 0,
            documents_cap,
            retired: false,
            document_files: HashSet::new(),
            sources: HashMap::new(),
            recorded: 0,
            used: std::time::Instant::now(),
            lent_at: tree_clock(),
        }
    }

    pub fn project(&self) -> &Arc<Project> {
        &self.project
    }

    /// Whether a session that ran here never gave the interpreter back.
    pub fn is_poisoned(&self) -> bool {
        self.interp.is_none()
    }

    pub fn is_retired(&self) -> bool {
        self.retired
    }

    pub fn retire(&mut self) {
        self.retired = true;
    }

    /// Whether this library may start the session of `path` under `root` with `environment`,
    /// the editor's buffers being `buffers` (the document's own among them). A library that
    /// never can again is retired. (Which parse cache it reads through changes no result.)
    pub fn serves(
        &mut self,
        root: &Path,
        environment: Option<&Arc<EnvironmentHandle>>,
        path: &Path,
        buffers: &HashMap<PathBuf, Arc<str>>,
    ) -> bool {
        if self.retired || self.is_poisoned() {
            return false;
        }
        let same_environment = match (&self.environment, environment) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        if self.root != root
            || !same_environment
            || self.documents >= self.documents_cap
            || !self.unchanged(buffers)
        {
            self.retired = true;
            return false;
        }
        self.project.registered_file(path).is_none()
    }

    /// Whether every file the library read is as it was read: the text of an open buffer,
    /// else the stamp on disk. That includes the files whose text it only searched for a
    /// name (`Project::scanned_files`).
    fn unchanged(&self, buffers: &HashMap<PathBuf, Arc<str>>) -> bool {
        let scanned = self.project.scanned_files();
        let scanned_unchanged = scanned.iter().all(|(path, seen)| {
            match (buffers.get(path), seen) {
                (Some(text), Scanned::Buffer(was)) => Arc::ptr_eq(text, was) || **text == **was,
                (None, Scanned::Disk(stamp)) => *stamp == disk_stamp(path),
                // opened or closed since: the text may differ
                _ => false,
            }
        });
        if !scanned_unchanged {
            return false;
        }
        let files = self.project.files_with_ids();
        files.iter().all(|(id, f)| {
            if self.document_files.contains(id) || f.library && f.text.is_empty() {
                return true;
            }
            match (buffers.get(&f.path), self.sources.get(id)) {
                // A file with syntax errors holds its text with them blanked: no match.
                (Some(text), _) => Arc::ptr_eq(text, &f.text) || **text == *f.text,
                (None, Some(Source::Disk(seen))) => *seen == disk_stamp(&f.path),
                // a buffer closed: the disk may hold another text
                (None, Some(Source::Buffer)) => false,
                (None, None) => true,
            }
        })
    }

    /// Lends the interpreter out, with the editor's buffers as the project's overlays, to
    /// start the session of a document; [`Library::started`] takes it back.
    pub fn lend_for_start(&mut self, buffers: HashMap<PathBuf, Arc<str>>) -> Option<Interp> {
        let interp = self.lend()?;
        self.project.set_overlays(buffers);
        Some(interp)
    }

    /// Lends the interpreter to a parked session of this library.
    pub fn lend(&mut self) -> Option<Interp> {
        self.used = std::time::Instant::now();
        self.lent_at = tick_tree_clock();
        self.interp.take()
    }

    /// How long since a session last ran here.
    pub fn idle_for(&self) -> std::time::Duration {
        self.used.elapsed()
    }

    /// Takes the interpreter back after a session's start, with that document's file slots,
    /// and drops the trees the latest analyses did not read (a start is slow anyway, and a
    /// package's files opened at once must not hold every module's tree until the end).
    pub fn started(&mut self, interp: Interp, document_files: [FileId; 2]) {
        self.documents += 1;
        self.document_files.extend(document_files);
        self.give_back(interp);
        self.release_unused_trees();
    }

    /// Takes the interpreter back after a session ran, noting where the files read
    /// since came from. Trees stay: after a keystroke's update, dropping the ones the
    /// session's start read (80 library trees, 13 ms to free) held up its diagnostics; the
    /// host drops them once its thread is idle ([`Library::release_unused_trees`]).
    pub fn give_back(&mut self, interp: Interp) {
        debug_assert!(Arc::ptr_eq(&interp.project, &self.project));
        let files = self.project.files_with_ids();
        for (id, f) in files.iter().filter(|(id, _)| *id >= self.recorded) {
            if !self.document_files.contains(id) {
                let source = if self.project.has_overlay(&f.path) {
                    Source::Buffer
                } else {
                    Source::Disk(disk_stamp(&f.path))
                };
                self.sources.insert(*id, source);
            }
        }
        self.recorded = files.last().map_or(self.recorded, |(id, _)| id + 1);
        self.interp = Some(interp);
    }

    /// Drops the trees of the files none of the process's latest [`TREE_KEEPING_ANALYSES`]
    /// analyses up to this library's last read.
    pub fn release_unused_trees(&self) {
        let oldest_kept = self.lent_at.saturating_sub(TREE_KEEPING_ANALYSES - 1);
        self.project.release_trees_unused_since(oldest_kept);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree clock is the process's: these tests count its ticks, one at a time.
    static TREE_CLOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn ran(library: &mut Library, reading: &[&Arc<crate::semantic::SourceFile>]) {
        let interp = library.lend().expect("not poisoned");
        for f in reading {
            f.tree();
        }
        library.give_back(interp);
        library.release_unused_trees();
    }

    #[test]
    fn giving_the_interpreter_back_keeps_trees_until_the_host_releases_them() {
        let _clock = TREE_CLOCK.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("helpers.py"), "def f(x):\n    return x\n").unwrap();
        std::fs::write(dir.path().join("hot.py"), "X = 1\n").unwrap();
        let mut library = Library::new(0, dir.path().to_path_buf(), None, None, 32);
        let interp = library.lend().unwrap();
        let helpers = library.project().resolve_module("helpers").unwrap();
        let hot = library.project().resolve_module("hot").unwrap();
        library.started(interp, [helpers, helpers]);
        let (helpers, hot) = (library.project().file(helpers), library.project().file(hot));
        helpers.tree();
        // Keystrokes: each update gives the interpreter back and reads only `hot`.
        for _ in 0..2 * TREE_KEEPING_ANALYSES {
            let interp = library.lend().unwrap();
            hot.tree();
            library.give_back(interp);
        }
        assert!(
            helpers.holds_tree(),
            "released while the keystrokes went on"
        );
        library.release_unused_trees();
        assert!(!helpers.holds_tree());
        assert!(hot.holds_tree());
    }

    #[test]
    fn a_tree_the_latest_analyses_did_not_read_is_released_and_parsed_again_alike() {
        let _clock = TREE_CLOCK.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let text = "def f(x):\n    return x +\n\ndef g(x):\r    return x\n";
        std::fs::write(dir.path().join("helpers.py"), text).unwrap();
        std::fs::write(dir.path().join("hot.py"), "X = 1\n").unwrap();
        let mut library = Library::new(0, dir.path().to_path_buf(), None, None, 32);
        let interp = library.lend().unwrap();
        let helpers = library.project().resolve_module("helpers").unwrap();
        let hot = library.project().resolve_module("hot").unwrap();
        library.give_back(interp);
        let (helpers, hot) = (library.project().file(helpers), library.project().file(hot));
        let before = helpers.tree().root_node().to_sexp();
        assert!(helpers.holds_tree() && hot.holds_tree());
        for _ in 1..TREE_KEEPING_ANALYSES {
            ran(&mut library, &[&hot]);
            assert!(helpers.holds_tree(), "read by one of the latest analyses");
        }
        ran(&mut library, &[&hot]);
        assert!(!helpers.holds_tree());
        assert!(hot.holds_tree());
        // The text with its syntax error blanked parses as it did when loaded.
        assert_eq!(helpers.tree().root_node().to_sexp(), before);
        assert!(!before.contains("ERROR"), "{before}");
        assert!(helpers.holds_tree());
    }
}
