use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use tree_sitter::Tree;

use super::environment::{EnvironmentHandle, LibraryModule, PythonEnvironment};
use crate::syntax::{self, LineIndex};

/// One parsed Python file.
#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    /// Dotted module name relative to the project root (`torchvision.models.resnet`).
    pub module: String,
    /// The text the evaluator reads: the file's text, except that lines holding syntax errors
    /// are blanked (same byte offsets) so a half-typed line does not hide the rest of the file.
    pub text: Arc<str>,
    /// The tree of `text`; [`SourceFile::tree`] parses it again after a release.
    tree: std::sync::Mutex<Option<Arc<Tree>>>,
    /// The [`tree_clock`] at the tree's last use.
    tree_used: std::sync::atomic::AtomicU64,
    pub lines: LineIndex,
    /// Syntax errors of the original text.
    pub syntax_errors: Vec<(syntax::Span, String)>,
    /// Read from the Python environment (site-packages, an editable install), not the root.
    pub library: bool,
    /// Python that ships inside staticfx (`Project::load_bundled`): no file on disk, so it is
    /// not among the files an analysis read.
    pub bundled: bool,
}

impl Clone for SourceFile {
    fn clone(&self) -> Self {
        use std::sync::atomic::Ordering;
        SourceFile {
            path: self.path.clone(),
            module: self.module.clone(),
            text: self.text.clone(),
            tree: std::sync::Mutex::new(
                self.tree.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            ),
            tree_used: self.tree_used.load(Ordering::Relaxed).into(),
            lines: self.lines.clone(),
            syntax_errors: self.syntax_errors.clone(),
            library: self.library,
            bundled: self.bundled,
        }
    }
}

impl SourceFile {
    pub fn new(path: PathBuf, module: String, text: Arc<str>, tree: Option<Tree>) -> Self {
        let tree = tree.unwrap_or_else(|| syntax::parse(&text, None));
        let lines = LineIndex::new(&text);
        let (text, tree, syntax_errors) = syntax::recover(text, tree);
        SourceFile {
            path,
            module,
            text,
            tree: std::sync::Mutex::new(Some(Arc::new(tree))),
            tree_used: std::sync::atomic::AtomicU64::new(tree_clock()),
            lines,
            syntax_errors,
            library: false,
            bundled: false,
        }
    }

    /// The tree of the text the evaluator reads. A released tree is parsed again: `text` is
    /// the recovered text, so the new tree is the one `new` made.
    pub fn tree(&self) -> Arc<Tree> {
        use std::sync::atomic::Ordering;
        self.tree_used.store(tree_clock(), Ordering::Relaxed);
        let mut held = self.tree.lock().unwrap_or_else(|e| e.into_inner());
        let tree = held
            .get_or_insert_with(|| Arc::new(syntax::parse(&self.text, None)))
            .clone();
        syntax::cache_children_of(&tree);
        tree
    }

    /// Drops the tree if it was last used before `clock` (a [`tree_clock`] reading); whoever
    /// still holds it keeps it. Whether it did.
    pub fn release_tree_unused_since(&self, clock: u64) -> bool {
        use std::sync::atomic::Ordering;
        if self.tree_used.load(Ordering::Relaxed) >= clock {
            return false;
        }
        let mut held = self.tree.lock().unwrap_or_else(|e| e.into_inner());
        held.take().is_some()
    }

    /// Whether the tree is held now (not released).
    pub fn holds_tree(&self) -> bool {
        self.tree
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Whether this file is a package's `__init__.py` (relative imports resolve from itself).
    pub fn is_package(&self) -> bool {
        self.path
            .file_name()
            .map(|n| n == "__init__.py")
            .unwrap_or(false)
    }
}

/// Counts the analyses begun in this process (`tick_tree_clock`); a tree's uses are stamped
/// with it, so a language server can drop the trees of the files its recent analyses did
/// not read: a tree takes about 20 bytes per byte of text, and a library holds every module
/// its documents imported, most of them read only while they were imported.
static TREE_CLOCK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub fn tree_clock() -> u64 {
    TREE_CLOCK.load(std::sync::atomic::Ordering::Relaxed)
}

/// Notes that an analysis begins; the new reading.
pub fn tick_tree_clock() -> u64 {
    TREE_CLOCK.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
}

pub type FileId = usize;

/// The set of files an analysis may read: everything under `root`, with optional in-memory
/// overlays (an editor's unsaved buffers) taking precedence over the disk.
#[derive(Debug)]
pub struct Project {
    pub root: PathBuf,
    /// Behind a lock so a project shared by many documents' analyses (the language server's
    /// `analysis::shared::Library`) can follow the editor's buffers.
    overlays: RwLock<HashMap<PathBuf, (Arc<str>, Option<Tree>)>>,
    files: RwLock<Vec<Arc<SourceFile>>>,
    by_module: RwLock<HashMap<String, Option<FileId>>>,
    parse_cache: Option<ParseCache>,
    environment: Option<Arc<EnvironmentHandle>>,
    /// Where environment modules were found (or not), by dotted name.
    library: RwLock<HashMap<String, Option<LibraryModule>>>,
    /// Files whose text was read without loading them ([`Project::unloaded_text`]), with
    /// where it came from: what an analysis found there (that a name is not bound) depends
    /// on them too.
    scanned: RwLock<HashMap<PathBuf, Scanned>>,
}

/// Where the text of a file read without loading it came from.
#[derive(Clone, Debug)]
pub enum Scanned {
    /// An overlay (an editor's buffer), this text.
    Buffer(Arc<str>),
    /// The disk, with its modification time and length then.
    Disk(Option<(std::time::SystemTime, u64)>),
}

/// Parsed files shared by the projects of one batch run (`staticfx check` over many files) or
/// by the language server's analyses: every model file imports the same package modules, and
/// parsing them again for each file (each keystroke) dominated the run time. Keyed by path and
/// module name (the name depends on the root); an entry is used only while the file's
/// modification time and length are those it was read with.
pub type ParseCache = Arc<std::sync::Mutex<ParsedFiles>>;

/// Text the parse cache holds trees for, at most: a tree takes about 20 bytes per byte of
/// text, and a server with a package open would otherwise keep every file it ever imported.
/// The least recently used leave first (a project that loaded one keeps its own reference).
pub const PARSE_CACHE_BYTES: usize = 4 << 20;

#[derive(Debug, Default)]
pub struct ParsedFiles {
    entries: HashMap<(PathBuf, String), CachedFile>,
    /// Text bytes of the entries.
    bytes: usize,
    /// Counts uses, to tell the least recently used.
    clock: u64,
    /// The parses that left `entries`, held weakly: while some project still holds one, the
    /// next project to load the file shares it instead of parsing a second copy (the two
    /// analysis threads' libraries import the same package modules).
    evicted: HashMap<
        (PathBuf, String),
        (
            std::sync::Weak<SourceFile>,
            Option<(std::time::SystemTime, u64)>,
        ),
    >,
    /// How many of `evicted` were alive when it was last pruned.
    evicted_live: usize,
}

#[derive(Clone, Debug)]
struct CachedFile {
    file: Arc<SourceFile>,
    stamp: Option<(std::time::SystemTime, u64)>,
    used: u64,
}

impl ParsedFiles {
    /// The parse of `key` read at `stamp`, if it is here.
    fn get(
        &mut self,
        key: &(PathBuf, String),
        stamp: Option<(std::time::SystemTime, u64)>,
    ) -> Option<Arc<SourceFile>> {
        self.clock += 1;
        match self.entries.get_mut(key) {
            Some(e) => {
                if e.stamp.is_none() || e.stamp != stamp {
                    return None;
                }
                e.used = self.clock;
                Some(e.file.clone())
            }
            None => {
                let (held, held_stamp) = self.evicted.get(key)?;
                if held_stamp.is_none() || *held_stamp != stamp {
                    return None;
                }
                let file = held.upgrade()?;
                self.evicted.remove(key);
                self.insert(key.clone(), file.clone(), stamp);
                Some(file)
            }
        }
    }

    fn insert(
        &mut self,
        key: (PathBuf, String),
        file: Arc<SourceFile>,
        stamp: Option<(std::time::SystemTime, u64)>,
    ) {
        self.clock += 1;
        self.bytes += file.text.len();
        self.evicted.remove(&key);
        let entry = CachedFile {
            file,
            stamp,
            used: self.clock,
        };
        if let Some(old) = self.entries.insert(key, entry) {
            self.bytes -= old.file.text.len();
        }
        while self.bytes > PARSE_CACHE_BYTES && self.entries.len() > 1 {
            let oldest = (self.entries.iter())
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
                .expect("entries");
            if let Some(e) = self.entries.remove(&oldest) {
                self.bytes -= e.file.text.len();
                self.evicted
                    .insert(oldest, (Arc::downgrade(&e.file), e.stamp));
            }
        }
        // A weak handle keeps its allocation's header: drop the dead ones once they doubled.
        if self.evicted.len() > (2 * self.evicted_live).max(256) {
            self.evicted.retain(|_, (w, _)| w.strong_count() > 0);
            self.evicted_live = self.evicted.len();
        }
    }

    /// Text bytes of the parses held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// A file's modification time and length: what a cached parse or evaluation of it is
/// checked against.
pub fn disk_stamp(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

impl Project {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Project {
            root: root.into(),
            overlays: RwLock::new(HashMap::new()),
            files: RwLock::new(Vec::new()),
            by_module: RwLock::new(HashMap::new()),
            parse_cache: None,
            environment: None,
            library: RwLock::new(HashMap::new()),
            scanned: RwLock::default(),
        }
    }

    /// Imports not found under the root resolve through this environment's search path.
    pub fn with_environment(mut self, environment: Arc<EnvironmentHandle>) -> Self {
        self.environment = Some(environment);
        self
    }

    pub fn environment_handle(&self) -> Option<&Arc<EnvironmentHandle>> {
        self.environment.as_ref()
    }

    /// The environment, if one was configured and discovered.
    pub fn environment(&self) -> Option<&Arc<PythonEnvironment>> {
        self.environment.as_ref()?.get()
    }

    /// Where `module` lives in the environment (memoized): None when it is under the root,
    /// a catalogue package, or not installed.
    pub fn library_module(&self, module: &str) -> Option<LibraryModule> {
        if let Some(hit) = self.library.read().unwrap().get(module) {
            return hit.clone();
        }
        let top = module.split('.').next().unwrap_or(module);
        let found = if super::environment::CATALOGUE_PACKAGES.contains(&top) {
            None
        } else {
            self.environment
                .as_ref()
                .and_then(|h| h.find_module(module))
        };
        self.library
            .write()
            .unwrap()
            .insert(module.to_string(), found.clone());
        found
    }

    /// The compiled extension module (`.so`/`.pyd`) that `dotted` (a module or a name in
    /// one) comes from, if any: the longest prefix the environment finds as compiled.
    pub fn compiled_module_of(&self, dotted: &str) -> Option<(String, PathBuf)> {
        let parts: Vec<&str> = dotted.split('.').collect();
        (1..=parts.len()).rev().find_map(|n| {
            let module = parts[..n].join(".");
            if self.module_path(&module).is_some() {
                return None;
            }
            match self.library_module(&module)? {
                LibraryModule::Compiled { file, .. } => Some((module, file)),
                _ => None,
            }
        })
    }

    pub fn with_parse_cache(mut self, cache: ParseCache) -> Self {
        self.parse_cache = Some(cache);
        self
    }

    /// The default root for a file: the nearest ancestor directory that is not a package
    /// (has no `__init__.py`), so `pkg/models/resnet.py` resolves `pkg.ops` absolutely.
    pub fn default_root(file: &Path) -> PathBuf {
        let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        let mut dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        while dir.join("__init__.py").exists() {
            match dir.parent() {
                Some(p) => dir = p.to_path_buf(),
                None => break,
            }
        }
        dir
    }

    /// Registers an in-memory version of a file (used by the language server).
    pub fn add_overlay(&mut self, path: impl Into<PathBuf>, text: Arc<str>, tree: Option<Tree>) {
        let path = normalize(&path.into());
        self.overlays.get_mut().unwrap().insert(path, (text, tree));
    }

    /// Replaces every overlay: the files loaded from now on read these buffers (the ones
    /// loaded already keep the text they were read with).
    pub fn set_overlays(&self, overlays: HashMap<PathBuf, Arc<str>>) {
        let overlays = overlays
            .into_iter()
            .map(|(path, text)| (normalize(&path), (text, None)))
            .collect();
        *self.overlays.write().unwrap() = overlays;
    }

    /// Loads `text` as the file at `path` in a slot of its own that imports never resolve
    /// to: a document analysed in a project shared with other documents' analyses, whose
    /// imports of its module get the module as the others see it.
    pub fn load_unregistered(&self, path: &Path, text: Arc<str>, tree: Option<Tree>) -> FileId {
        let path = normalize(path);
        let module = self.module_name(&path);
        let mut files = self.files.write().unwrap();
        files.push(Arc::new(SourceFile::new(path, module, text, tree)));
        files.len() - 1
    }

    /// The file imports of `path`'s module resolve to, if it is loaded and is that file.
    pub fn registered_file(&self, path: &Path) -> Option<FileId> {
        let path = normalize(path);
        let id = self.is_loaded(&self.module_name(&path))?;
        (self.files.read().unwrap()[id].path == path).then_some(id)
    }

    /// Every file read so far (what an analysis depended on).
    pub fn files(&self) -> Vec<Arc<SourceFile>> {
        let files = self.files.read().unwrap();
        files.iter().filter(|f| !f.bundled).cloned().collect()
    }

    /// Drops the trees of the files loaded here, and of the parse cache's files, last used
    /// before `clock` (see [`tick_tree_clock`]); how many it dropped.
    pub fn release_trees_unused_since(&self, clock: u64) -> usize {
        let files = self.files.read().unwrap();
        let mut released = files
            .iter()
            .filter(|f| f.release_tree_unused_since(clock))
            .count();
        drop(files);
        if let Some(cache) = &self.parse_cache {
            let cache = cache.lock().unwrap();
            released += (cache.entries.values())
                .filter(|e| e.file.release_tree_unused_since(clock))
                .count();
        }
        released
    }

    /// Every file read so far with its id, as [`Project::files`].
    pub fn files_with_ids(&self) -> Vec<(FileId, Arc<SourceFile>)> {
        let files = self.files.read().unwrap();
        (files.iter().enumerate())
            .filter(|(_, f)| !f.bundled)
            .map(|(id, f)| (id, f.clone()))
            .collect()
    }

    /// Whether `path` (normalized, as a loaded file's) is read from an overlay.
    pub fn has_overlay(&self, path: &Path) -> bool {
        self.overlays.read().unwrap().contains_key(path)
    }

    /// Loads (once) Python source that ships with staticfx under the module name `module`
    /// (the evaluator's models of standard-library classes written in Python).
    pub fn load_bundled(&self, module: &str, text: &'static str) -> FileId {
        let path = PathBuf::from(format!("<staticfx>/{module}.py"));
        if let Some(id) = self
            .files
            .read()
            .unwrap()
            .iter()
            .position(|f| f.path == path)
        {
            return id;
        }
        let mut file = SourceFile::new(path, module.to_string(), Arc::from(text), None);
        file.library = true;
        file.bundled = true;
        let mut files = self.files.write().unwrap();
        files.push(Arc::new(file));
        files.len() - 1
    }

    pub fn file(&self, id: FileId) -> Arc<SourceFile> {
        self.files.read().unwrap()[id].clone()
    }

    /// Paths of the files read so far, in load order.
    pub fn loaded_paths(&self) -> Vec<PathBuf> {
        self.files
            .read()
            .unwrap()
            .iter()
            .filter(|f| !f.bundled)
            .map(|f| f.path.clone())
            .collect()
    }

    /// Module name of a path under the root (or, outside it, under a library path of the
    /// environment), else the file stem.
    pub fn module_name(&self, path: &Path) -> String {
        let path = normalize(path);
        let root = normalize(&self.root);
        let library = || {
            let env = self.environment_handle()?.outcome()?.as_ref().ok()?;
            env.library_paths
                .iter()
                .map(|p| normalize(p))
                .find_map(|p| path.strip_prefix(&p).ok().map(Path::to_path_buf))
        };
        let rel = match path.strip_prefix(&root) {
            Ok(rel) => rel.to_path_buf(),
            Err(_) => {
                library().unwrap_or_else(|| PathBuf::from(path.file_name().unwrap_or_default()))
            }
        };
        let mut parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if let Some(last) = parts.last_mut() {
            if let Some(stem) = last.strip_suffix(".py") {
                *last = stem.to_string();
            }
        }
        if parts.last().map(|p| p == "__init__").unwrap_or(false) {
            parts.pop();
        }
        parts.join(".")
    }

    /// Loads (once) the file at `path`.
    pub fn load_path(&self, path: &Path) -> std::io::Result<FileId> {
        let path = normalize(path);
        let module = self.module_name(&path);
        self.load_as(path, module, false, true)
    }

    /// Loads the file a batch run analyses, without keeping its parse in the shared cache:
    /// each is analysed once, and the cache would hold the parse of every file of the run
    /// (an import of it still finds it in this project).
    pub fn load_entry(&self, path: &Path) -> std::io::Result<FileId> {
        let path = normalize(path);
        let module = self.module_name(&path);
        self.load_as(path, module, false, false)
    }

    fn load_as(
        &self,
        path: PathBuf,
        module: String,
        library: bool,
        keep_parse: bool,
    ) -> std::io::Result<FileId> {
        if let Some(Some(id)) = self.by_module.read().unwrap().get(&module) {
            if self.files.read().unwrap()[*id].path == path {
                return Ok(*id);
            }
        }
        if let Some(id) = self
            .files
            .read()
            .unwrap()
            .iter()
            .position(|f| f.path == path)
        {
            return Ok(id);
        }
        let overlay = self.overlays.read().unwrap().get(&path).cloned();
        let file = match overlay {
            Some((t, tree)) => Arc::new(SourceFile::new(path, module.clone(), t, tree)),
            None => match &self.parse_cache {
                Some(cache) => {
                    let key = (path.clone(), module.clone());
                    let stamp = disk_stamp(&path);
                    let hit = cache.lock().unwrap().get(&key, stamp);
                    match hit {
                        Some(f) => f,
                        None => {
                            let f = Arc::new(SourceFile::new(
                                path,
                                module.clone(),
                                Arc::from(read_lossy(&key.0)?),
                                None,
                            ));
                            if keep_parse {
                                cache.lock().unwrap().insert(key, f.clone(), stamp);
                            }
                            f
                        }
                    }
                }
                None => {
                    let text = Arc::from(read_lossy(&path)?);
                    Arc::new(SourceFile::new(path, module.clone(), text, None))
                }
            },
        };
        let file = if library && !file.library {
            let mut f = SourceFile::clone(&file);
            f.library = true;
            Arc::new(f)
        } else {
            file
        };
        let mut files = self.files.write().unwrap();
        files.push(file);
        let id = files.len() - 1;
        self.by_module
            .write()
            .unwrap()
            .entry(module)
            .or_insert(Some(id));
        Ok(id)
    }

    /// A second id for a loaded file, to be moved to newer versions with `replace_file` while
    /// the first keeps the version the module was evaluated from (the language server's
    /// incremental session, `analysis::incremental`).
    pub fn add_alias(&self, of: FileId) -> FileId {
        let file = self.file(of);
        let mut files = self.files.write().unwrap();
        files.push(file);
        files.len() - 1
    }

    /// Puts a newer version of a file in the slot `id` (the incremental session's live copy;
    /// values built from the old version hold their own reference to it).
    pub fn replace_file(&self, id: FileId, file: Arc<SourceFile>) {
        self.files.write().unwrap()[id] = file;
    }

    /// Finds the file of a dotted module name: inside the root (`a/b.py` or
    /// `a/b/__init__.py`), else through the environment's search path. A namespace package
    /// becomes an empty module; a compiled module has no file (see `compiled_module_of`).
    pub fn resolve_module(&self, module: &str) -> Option<FileId> {
        if let Some(hit) = self.by_module.read().unwrap().get(module) {
            return *hit;
        }
        let found = match self.module_path(module) {
            Some(c) => self.load_path(&c).ok(),
            None => match self.library_module(module) {
                Some(LibraryModule::Source(path)) => self
                    .load_as(normalize(&path), module.to_string(), true, true)
                    .ok(),
                Some(LibraryModule::Namespace(dirs)) => Some(self.load_namespace(module, &dirs)),
                _ => None,
            },
        };
        self.by_module
            .write()
            .unwrap()
            .insert(module.to_string(), found);
        found
    }

    /// The text `module`'s file would be loaded with (an overlay, else the disk), without
    /// parsing or loading it; `None` when it is loaded already, or has no source file.
    /// Looking a name up through a package's star imports reads every source this way first:
    /// transformers' `models/__init__` stars hundreds of packages, and parsing each of their
    /// files to look for one name kept thousands of trees in the project.
    pub fn unloaded_text(&self, module: &str) -> Option<Arc<str>> {
        if self.by_module.read().unwrap().contains_key(module) {
            return None;
        }
        let path = match self.module_path(module) {
            Some(p) => normalize(&p),
            None => match self.library_module(module)? {
                LibraryModule::Source(p) => normalize(&p),
                _ => return None,
            },
        };
        let buffer = self
            .overlays
            .read()
            .unwrap()
            .get(&path)
            .map(|(t, _)| t.clone());
        let (text, source) = match buffer {
            Some(text) => (Some(text.clone()), Scanned::Buffer(text)),
            None => {
                let stamp = disk_stamp(&path);
                (read_lossy(&path).ok().map(Arc::from), Scanned::Disk(stamp))
            }
        };
        self.scanned.write().unwrap().insert(path, source);
        text
    }

    /// The files read by [`Project::unloaded_text`], with where from, in no order.
    pub fn scanned_files(&self) -> Vec<(PathBuf, Scanned)> {
        let scanned = self.scanned.read().unwrap();
        scanned
            .iter()
            .map(|(p, s)| (p.clone(), s.clone()))
            .collect()
    }

    /// Whether `module` names a file of the project or the environment, without reading
    /// or parsing it.
    pub fn module_exists(&self, module: &str) -> bool {
        match self.by_module.read().unwrap().get(module) {
            Some(hit) => hit.is_some(),
            None => {
                self.module_path(module).is_some()
                    || matches!(
                        self.library_module(module),
                        Some(LibraryModule::Source(_) | LibraryModule::Namespace(_))
                    )
            }
        }
    }

    /// A namespace package: no file of its own, its submodules found through the search path.
    fn load_namespace(&self, module: &str, portions: &[PathBuf]) -> FileId {
        let dir = portions.first().cloned().unwrap_or_default();
        let mut file = SourceFile::new(dir, module.to_string(), Arc::from(""), None);
        file.library = true;
        let mut files = self.files.write().unwrap();
        files.push(Arc::new(file));
        let id = files.len() - 1;
        self.by_module
            .write()
            .unwrap()
            .insert(module.to_string(), Some(id));
        id
    }

    /// Whether the file of `module` has been read already.
    pub fn is_loaded(&self, module: &str) -> Option<FileId> {
        self.by_module
            .read()
            .unwrap()
            .get(module)
            .copied()
            .flatten()
    }

    fn module_path(&self, module: &str) -> Option<PathBuf> {
        if module.is_empty()
            || module
                .split('.')
                .any(|p| p.is_empty() || p.contains(['/', '\\']))
        {
            return None;
        }
        let mut base = self.root.clone();
        for part in module.split('.') {
            base.push(part);
        }
        let candidates = [base.with_extension("py"), base.join("__init__.py")];
        candidates
            .into_iter()
            .find(|c| self.overlays.read().unwrap().contains_key(&normalize(c)) || c.is_file())
    }

    /// Resolves a relative import (`from ..ops import x` is level 2, module "ops") seen in `from`.
    pub fn absolute_module(&self, from: &SourceFile, level: usize, module: &str) -> Option<String> {
        if level == 0 {
            return Some(module.to_string());
        }
        let mut parts: Vec<&str> = if from.module.is_empty() {
            vec![]
        } else {
            from.module.split('.').collect()
        };
        let drop = if from.is_package() { level - 1 } else { level };
        if drop > parts.len() {
            return None;
        }
        parts.truncate(parts.len() - drop);
        if !module.is_empty() {
            parts.push(module);
        }
        Some(parts.join("."))
    }
}

fn normalize(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Reads a file as text; invalid UTF-8 is replaced rather than refused, so a stray Latin-1
/// comment does not hide a whole file from analysis.
pub fn read_lossy(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(name: &str, bytes: usize) -> Arc<SourceFile> {
        let text: Arc<str> = Arc::from("x = 1\n".repeat(bytes / 6).as_str());
        Arc::new(SourceFile::new(
            PathBuf::from(name),
            name.into(),
            text,
            None,
        ))
    }

    #[test]
    fn the_parse_cache_keeps_the_recently_used_within_its_bound() {
        let mut cache = ParsedFiles::default();
        let stamp = Some((std::time::SystemTime::UNIX_EPOCH, 1));
        let key = |n: &str| (PathBuf::from(n), n.to_string());
        let third = PARSE_CACHE_BYTES / 3;
        cache.insert(key("a"), parsed("a", third), stamp);
        cache.insert(key("b"), parsed("b", third), stamp);
        assert!(cache.get(&key("a"), stamp).is_some());
        // c makes it too big: b, used least recently, leaves
        cache.insert(key("c"), parsed("c", third + 600), stamp);
        assert!(cache.bytes() <= PARSE_CACHE_BYTES, "{}", cache.bytes());
        assert!(cache.get(&key("b"), stamp).is_none());
        assert!(cache.get(&key("a"), stamp).is_some());
        assert!(cache.get(&key("c"), stamp).is_some());
        // another stamp is another file
        assert!(cache
            .get(&key("a"), Some((std::time::SystemTime::UNIX_EPOCH, 2)))
            .is_none());
    }

    #[test]
    fn a_parse_evicted_while_a_project_holds_it_is_shared_not_parsed_again() {
        let mut cache = ParsedFiles::default();
        let stamp = Some((std::time::SystemTime::UNIX_EPOCH, 1));
        let key = |n: &str| (PathBuf::from(n), n.to_string());
        let half = PARSE_CACHE_BYTES / 2 + 600;
        let held = parsed("held", half);
        cache.insert(key("held"), held.clone(), stamp);
        cache.insert(key("dropped"), parsed("dropped", half), stamp);
        cache.insert(key("newest"), parsed("newest", half), stamp);
        assert!(cache.bytes() <= PARSE_CACHE_BYTES, "{}", cache.bytes());
        let again = cache
            .get(&key("held"), stamp)
            .expect("held elsewhere, so still shared");
        assert!(Arc::ptr_eq(&again, &held));
        // Nobody held it: gone, to be parsed again.
        assert!(cache.get(&key("dropped"), stamp).is_none());
        // Another stamp is another file, held or not.
        cache.insert(key("other"), parsed("other", half), stamp);
        cache.insert(key("another"), parsed("another", half), stamp);
        let changed = Some((std::time::SystemTime::UNIX_EPOCH, 2));
        assert!(cache.get(&key("held"), changed).is_none());
    }
}
