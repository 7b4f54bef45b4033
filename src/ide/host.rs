//! The editor's analyses: an [`AnalysisHost`] runs one analysis of a text snapshot, keeping
//! incremental sessions for the documents it analysed last, and turns the result into plain,
//! `Send` data: the [`diagnostics`](super::diagnostics) of the document (byte spans, as for
//! `check`), per-graph node views for hover, the traced graph for the graph view.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tree_sitter::Tree;

use super::diagnostics::Diagnostic;
use crate::analysis::incremental::Session;
use crate::analysis::shared::Library;
use crate::analysis::{
    self, AnalysisError, FileAnalysis, GraphOptions, GraphResult, InputSpec, ModuleSummary,
};
use crate::graph::RegionRole;
use crate::semantic::{FileId, Project};
use crate::syntax::Span;

/// Everything one analysis needs, owned, so it can move to the analysis thread.
pub struct Snapshot {
    pub path: PathBuf,
    pub root: PathBuf,
    pub text: Arc<str>,
    /// None when the document has no tree at hand: it is parsed when the analysis runs, so
    /// queued analyses do not hold a tree each.
    pub tree: Option<Tree>,
    pub version: i32,
    /// The document was opened and not edited since: of such documents' sessions the host
    /// keeps only the newest (see [`AnalysisHost`]).
    pub only_opened: bool,
    pub class_inputs: HashMap<String, Vec<InputSpec>>,
    /// The codes the settings select.
    pub filter: super::Filter,
    /// Other open buffers: imports read the editor's text, not the disk's.
    pub overlays: Vec<(PathBuf, Arc<str>)>,
    /// Which settings the snapshot was taken under; results of older settings are not reused.
    pub config_gen: u64,
    /// Test hook: a marker comment makes analysis panic, to prove the server survives it.
    pub test_hooks: bool,
    pub parse_cache: crate::semantic::project::ParseCache,
    /// The workspace's Python environment (imports outside the root resolve through it).
    pub environment: Option<Arc<crate::semantic::EnvironmentHandle>>,
    /// The torch whose graph breaks the diagnostics describe.
    pub target_version: Option<crate::breaks::version::TorchVersion>,
}

impl Snapshot {
    /// A snapshot of `text` as the file `path` of the project at `root`, with no other open
    /// buffers, all codes selected and no example inputs.
    pub fn new(path: PathBuf, root: PathBuf, text: &str) -> Snapshot {
        Snapshot {
            path,
            root,
            tree: Some(crate::syntax::parse(text, None)),
            text: Arc::from(text),
            version: 1,
            only_opened: false,
            class_inputs: HashMap::new(),
            filter: super::Filter::all(),
            overlays: vec![],
            config_gen: 0,
            test_hooks: false,
            target_version: None,
            parse_cache: Default::default(),
            environment: None,
        }
    }
}

/// One graph node as hover shows it.
#[derive(Clone, Debug)]
pub struct NodeView {
    pub name: String,
    pub op: &'static str,
    pub target: String,
    pub shape: Option<String>,
    pub dtype: Option<String>,
    pub region: Option<String>,
    /// The node's origin in the analysed document, if it lies there.
    pub span: Option<Span>,
    /// Call sites in the analysed document that inlined the node.
    pub chain: Vec<Span>,
    /// Why the shape (or part of it) is unknown, for a tensor result whose shape is not fully
    /// known: hover says so rather than guessing.
    pub unknown_reason: Option<String>,
}

pub struct GraphView {
    pub name: String,
    pub class: String,
    pub class_span: Span,
    /// Made on the first request (a hover): a keystroke's analysis is mostly only published,
    /// and a transformers file's graphs hold tens of thousands of nodes.
    nodes: std::sync::OnceLock<Vec<NodeView>>,
    /// The traced graph itself, for on-demand work (the optimized graph).
    pub traced: Arc<GraphResult>,
    file: FileId,
}

impl GraphView {
    /// The graph's nodes as hover shows them.
    pub fn nodes(&self) -> &[NodeView] {
        self.nodes
            .get_or_init(|| node_views(&self.traced, self.file))
    }

    /// One node as hover shows it, made on request (inlay hints read a few nodes of a large
    /// graph); None for a node the graph does not hold.
    pub fn node(&self, id: crate::graph::NodeId) -> Option<NodeView> {
        self.traced
            .graph
            .contains(id)
            .then(|| node_view(&self.traced, id, self.file))
    }

    /// The analysed document, as the graph's spans name it.
    pub fn file(&self) -> FileId {
        self.file
    }

    /// The submodules the graph's class builds.
    pub fn modules(&self) -> &[ModuleSummary] {
        &self.traced.modules
    }

    /// DOT of the traced graph, node classes carrying source lines of `text` (the analysed
    /// document's). Rendered on request: most analyses are never shown as a graph.
    pub fn dot(&self, text: &str) -> String {
        let lines = LineStarts::new(text);
        crate::render::dot::render_with_lines(&self.traced, |n| node_line(n, self.file, &lines))
    }

    /// DOT of the graph after the pass pipeline (`text` is the analysed document's), and how
    /// many nodes the passes removed.
    pub fn optimized_dot(&self, text: &str) -> Result<(String, usize), String> {
        let mut r = GraphResult::clone(&self.traced);
        let before = r.graph.len();
        analysis::optimize_graph(&mut r, &Default::default()).map_err(|e| e.to_string())?;
        let lines = LineStarts::new(text);
        let dot = crate::render::dot::render_with_lines(&r, |n| node_line(n, self.file, &lines));
        Ok((dot, before.saturating_sub(r.graph.len())))
    }
}

pub struct Output {
    pub version: i32,
    pub config_gen: u64,
    pub text: Arc<str>,
    /// What the user sees, in the document (`text`); call chains may point into `files`.
    pub diagnostics: Vec<Diagnostic>,
    /// Path and text of every file a diagnostic's call chain points into.
    pub files: HashMap<FileId, (PathBuf, Arc<str>)>,
    pub graphs: Vec<GraphView>,
    /// Set when the file could not be analysed at all.
    pub failure: Option<String>,
    /// False for the first stage of a staged analysis: the breaks only a config flag reaches
    /// (gradient checkpointing, `output_attentions`) are still to come.
    pub complete: bool,
}

impl Output {
    /// What a client is shown of this output (diagnostics and the files their chains point
    /// into), without the graphs.
    pub fn diagnostics_only(&self) -> Output {
        Output {
            version: self.version,
            config_gen: self.config_gen,
            text: self.text.clone(),
            diagnostics: self.diagnostics.clone(),
            files: self.files.clone(),
            graphs: vec![],
            failure: self.failure.clone(),
            complete: self.complete,
        }
    }

    /// The diagnostics as an editor shows them (`shown`).
    pub fn shown(&self) -> Vec<super::shown::ShownDiagnostic> {
        super::shown::shown(&self.diagnostics, |id| self.files.get(&id).cloned())
    }
}

pub const PANIC_MARKER: &str = "# staticfx-test: panic";
/// Test hook: with `testHooks`, a hover in a document holding this line panics in the handler
/// itself (not in analysis), to check that one request's panic leaves the server serving.
pub const HOVER_PANIC_MARKER: &str = "# staticfx-test: hover panics";

/// The project a snapshot is analysed in: the workspace root, the editor's open buffers over
/// the disk, and the parsed files shared across analyses.
fn project_of(snap: &Snapshot) -> Project {
    let mut project = Project::new(&snap.root).with_parse_cache(snap.parse_cache.clone());
    if let Some(env) = &snap.environment {
        project = project.with_environment(env.clone());
    }
    for (path, text) in &snap.overlays {
        project.add_overlay(path, text.clone(), None);
    }
    project.add_overlay(&snap.path, snap.text.clone(), snap.tree.clone());
    project
}

/// Sessions kept for the documents analysed last: a keystroke inside a function body then
/// costs the classes that call it, not the whole file and its imports. Each analysis thread
/// has its own host, and a document is always analysed on the same thread. The sessions run
/// in the host's libraries (`analysis::shared`), so the modules open documents import are
/// evaluated once per thread, not once per document.
pub struct AnalysisHost {
    /// Least recently used first.
    sessions: Vec<Kept>,
    /// At most this many sessions are kept; the least recently used leaves first.
    session_cap: usize,
    /// Documents a library starts sessions for before it is retired.
    documents_per_library: usize,
    /// The libraries the kept sessions run in; new sessions start in the last one.
    libraries: Vec<Library>,
    libraries_made: u64,
    /// Shared with the other hosts of the server.
    opened_order: OpenedOrder,
}

/// How many documents' sessions a host keeps by default. A session holds its document's
/// graphs (a transformers file's reach tens of megabytes) and the interpreter state of its
/// classes; a document whose session was dropped keeps its published diagnostics, and its
/// next edit or request starts one again (a full analysis of the file, once). The editor's
/// user edits one or two files at a time; with every file of a package open the sessions of
/// the others only cost memory. Of the documents only opened, not edited, a host keeps the
/// session of the newest alone (the file the user opened last, and may type in next): with a
/// package open the threads kept two sessions each of files nobody edited (lsp_memory, idle:
/// 378 MB with four such sessions, 321 MB with two).
pub const KEPT_SESSIONS: usize = 2;

/// Numbers the sessions started for documents only opened, across the hosts of one server
/// (one per analysis thread): while it works, each host keeps its own newest such session,
/// and once idle only the newest of all ([`AnalysisHost::trim_only_opened`]). With a package
/// opened at once, the other thread's newest was a file nobody edited and, for the user, no
/// newer than the hundreds of others, kept with its graphs.
#[derive(Clone, Debug, Default)]
pub struct OpenedOrder(Arc<std::sync::atomic::AtomicU64>);

impl OpenedOrder {
    fn next(&self) -> u64 {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
    }

    /// The number of the newest session started in this order (0 before the first).
    pub fn newest(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Default for AnalysisHost {
    fn default() -> Self {
        AnalysisHost::with_session_cap(KEPT_SESSIONS)
    }
}

impl AnalysisHost {
    pub fn new() -> Self {
        AnalysisHost::default()
    }

    /// A host keeping at most `cap` sessions (at least one: the document analysed last).
    pub fn with_session_cap(cap: usize) -> Self {
        AnalysisHost::with_caps(cap, crate::analysis::shared::documents_per_library())
    }

    /// Like [`AnalysisHost::with_session_cap`], its libraries retired after
    /// `documents_per_library` documents (at least one).
    pub fn with_caps(session_cap: usize, documents_per_library: usize) -> Self {
        AnalysisHost {
            sessions: vec![],
            session_cap: session_cap.max(1),
            documents_per_library: documents_per_library.max(1),
            libraries: vec![],
            libraries_made: 0,
            opened_order: OpenedOrder::default(),
        }
    }

    /// This host, numbering its sessions of documents only opened in `order`, which the
    /// server's other hosts share.
    pub fn in_opened_order(mut self, order: OpenedOrder) -> Self {
        self.opened_order = order;
        self
    }

    /// Runs the analysis of an open document; call it on a thread with a large stack (the
    /// evaluator recurses). The host keeps a session for the document, so the next version's
    /// analysis can reuse this one.
    pub fn analyze(&mut self, snap: &Snapshot) -> Output {
        self.analyze_staged(snap, |_| true, || true)
    }

    /// Like [`AnalysisHost::analyze`], in two stages when the session has flagged retraces
    /// to run (a module built from a config): `first` gets the output of the default traces
    /// (not `complete`) and says whether to go on, and `still_current` is asked again before
    /// each class's retraces. When either says no (the document changed meanwhile), the
    /// first stage's output is returned and the session runs the rest after its next update.
    pub fn analyze_staged(
        &mut self,
        snap: &Snapshot,
        first: impl FnOnce(&Output) -> bool,
        still_current: impl Fn() -> bool + 'static,
    ) -> Output {
        if snap.test_hooks && snap.text.contains(PANIC_MARKER) {
            panic!("test hook: panic requested by the document");
        }
        let opts = options(snap);
        if !super::may_define_module(&snap.text) {
            return output(snap, analysis::parse_only(project_of(snap), &snap.path));
        }
        let mut out = output(snap, self.kept_analysis(snap, &opts));
        let pending = self
            .sessions
            .last()
            .is_some_and(|k| k.session.path() == snap.path && k.session.has_pending_retraces());
        if !pending {
            return out;
        }
        out.complete = false;
        if !first(&out) {
            return out;
        }
        // The first stage's graphs go before the retraces add to them: held here, every
        // graph the retraces touch would be copied (`Arc::make_mut`), the largest transient
        // with a transformers file. An incomplete output is not shown (its diagnostics were).
        out.graphs.clear();
        // Taken out while it runs, as for an update.
        let mut kept = self.sessions.pop().expect("the session just analysed");
        if !self.resume(&mut kept) {
            return output(snap, self.kept_analysis(snap, &opts));
        }
        let finished = kept.session.finish_retraces_while(still_current);
        let left_pending = kept.session.has_pending_retraces();
        self.park(&mut kept);
        self.sessions.push(kept);
        match finished {
            Some(a) => output(snap, Ok(a)),
            None if left_pending => out,
            // Nothing was left to run: the session's analysis is complete as it stands.
            None => output(snap, self.kept_analysis(snap, &opts)),
        }
    }

    /// Drops the session of a document (closed), and the libraries no session needs.
    pub fn forget(&mut self, path: &Path) {
        self.sessions.retain(|k| k.session.path() != path);
        self.drop_unused_libraries(None);
        super::memory::return_freed();
    }

    /// Drops the sessions not used for `idle`, and the libraries no session needs that
    /// have not served one for as long. The documents' diagnostics stay published; their
    /// next edit or request starts a session again.
    pub fn evict_idle(&mut self, idle: std::time::Duration) {
        self.sessions.retain(|k| k.used.elapsed() < idle);
        self.drop_unused_libraries(Some(idle));
        super::memory::return_freed();
    }

    /// Drops the sessions of documents only opened but the newest that any host sharing its
    /// [`OpenedOrder`] started; an analysis thread calls it when it has nothing queued. The
    /// library stays (the next document's imports are evaluated there), so such a document's
    /// next analysis costs the file alone.
    pub fn trim_only_opened(&mut self) {
        let newest = self.opened_order.newest();
        let before = self.sessions.len();
        (self.sessions).retain(|k| !k.only_opened || k.opened_number == newest);
        if self.sessions.len() < before {
            self.drop_unused_libraries(None);
            super::memory::return_freed();
        }
    }

    /// Drops the trees its libraries' latest analyses did not read; an analysis thread calls
    /// it when its queue has stayed empty a while (a session's start does it at once).
    pub fn release_unused_trees(&mut self) {
        for library in &self.libraries {
            library.release_unused_trees();
        }
    }

    /// How many sessions and libraries the host keeps (for tests and the memory bench).
    pub fn kept(&self) -> (usize, usize) {
        (self.sessions.len(), self.libraries.len())
    }

    /// The documents whose sessions the host keeps, least recently used first (for tests).
    pub fn kept_documents(&self) -> Vec<&Path> {
        self.sessions.iter().map(|k| k.session.path()).collect()
    }

    /// How many of the kept sessions run in an interpreter of their own, outside the
    /// libraries (each holds its imports evaluated once more; for the memory bench).
    pub fn kept_own_interpreters(&self) -> usize {
        self.sessions.iter().filter(|k| k.library.is_none()).count()
    }

    /// Analyses a file once (a workspace check of unopened files), keeping nothing.
    pub fn analyze_once(snap: &Snapshot) -> Output {
        if snap.test_hooks && snap.text.contains(PANIC_MARKER) {
            panic!("test hook: panic requested by the document");
        }
        let analysis = if super::may_define_module(&snap.text) {
            analysis::analyze_in_project(project_of(snap), &snap.path, &options(snap))
        } else {
            analysis::parse_only(project_of(snap), &snap.path)
        };
        output(snap, analysis)
    }
}

/// How long one analysis of the editor may run: the analysis threads are shared, and one
/// pathological file must not hold one for long.
pub const TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

fn options(snap: &Snapshot) -> GraphOptions {
    GraphOptions {
        root: Some(snap.root.clone()),
        class_inputs: snap.class_inputs.clone(),
        time_limit: Some(TIME_LIMIT),
        torch_target: super::settings::torch_target(
            snap.target_version,
            snap.environment.as_deref(),
        ),
        ..Default::default()
    }
}

/// The plain data of an analysis of `snap`.
fn output(snap: &Snapshot, analysis: Result<FileAnalysis, AnalysisError>) -> Output {
    let mut out = Output {
        version: snap.version,
        config_gen: snap.config_gen,
        text: snap.text.clone(),
        diagnostics: vec![],
        files: HashMap::new(),
        graphs: vec![],
        failure: None,
        complete: true,
    };
    match analysis {
        Ok(a) => {
            out.diagnostics = super::diagnostics(&a, &snap.text, &snap.filter);
            for &(file, _) in out.diagnostics.iter().flat_map(|d| &d.chain) {
                let f = a.project.file(file);
                out.files
                    .entry(file)
                    .or_insert_with(|| (f.path.clone(), f.text.clone()));
            }
            let file = a.file;
            out.graphs = a.graphs.into_iter().map(|g| graph_view(g, file)).collect();
        }
        Err(e) => out.failure = Some(e.to_string()),
    }
    out
}

struct Kept {
    session: Session,
    /// The library the session runs in, None for a session with its own interpreter.
    library: Option<u64>,
    used: std::time::Instant,
    /// Every version analysed here was the document as opened.
    only_opened: bool,
    /// The session's number in the host's [`OpenedOrder`]; 0 for a document edited when its
    /// session started.
    opened_number: u64,
    root: PathBuf,
    config_gen: u64,
    class_inputs: HashMap<String, Vec<analysis::InputSpec>>,
    /// The other open buffers the session was evaluated with (held, so pointers stay unique).
    overlays: Vec<(PathBuf, Arc<str>)>,
    /// Modification stamps of the files read from disk, as first seen.
    stamps: HashMap<PathBuf, Option<(std::time::SystemTime, u64)>>,
}

impl Kept {
    fn serves(&self, snap: &Snapshot) -> bool {
        self.session.path() == snap.path
            && self.root == snap.root
            && self.config_gen == snap.config_gen
            && self.class_inputs == snap.class_inputs
            && self.overlays.len() == snap.overlays.len()
            && self
                .overlays
                .iter()
                .zip(&snap.overlays)
                .all(|(a, b)| a.0 == b.0 && Arc::ptr_eq(&a.1, &b.1))
    }

    /// Whether every file the session read from disk is as it was; records new ones.
    fn disk_unchanged(&mut self) -> bool {
        let overlaid: Vec<&PathBuf> = self.overlays.iter().map(|(p, _)| p).collect();
        for path in self.session.project().loaded_paths() {
            if path == self.session.path() || overlaid.contains(&&path) {
                continue;
            }
            let now = crate::semantic::project::disk_stamp(&path);
            match self.stamps.get(&path) {
                Some(seen) if *seen != now => return false,
                Some(_) => {}
                None => {
                    self.stamps.insert(path, now);
                }
            }
        }
        true
    }
}

/// The analysis of the snapshot, continuing the host's session for the document when the
/// edit allows it, else a full analysis that starts a new session.
impl AnalysisHost {
    fn kept_analysis(
        &mut self,
        snap: &Snapshot,
        opts: &GraphOptions,
    ) -> Result<FileAnalysis, AnalysisError> {
        self.drop_unused_libraries(None);
        if let Some(i) = self.sessions.iter().position(|k| k.serves(snap)) {
            // Taken out first: a panic while updating drops it rather than keep it half-done
            // (and leaves its library without an interpreter, which drops the library).
            let mut kept = self.sessions.remove(i);
            if kept.disk_unchanged() && self.resume(&mut kept) {
                let updated = kept.session.update(snap.text.clone(), snap.tree.clone());
                self.park(&mut kept);
                if let Some(a) = updated {
                    kept.used = std::time::Instant::now();
                    kept.only_opened &= snap.only_opened;
                    self.sessions.push(kept);
                    return Ok(a);
                }
            }
        }
        self.sessions.retain(|k| k.session.path() != snap.path);
        let (session, a, library) = self.start_session(snap, opts)?;
        let mut kept = Kept {
            session,
            library,
            used: std::time::Instant::now(),
            only_opened: snap.only_opened,
            opened_number: if snap.only_opened {
                self.opened_order.next()
            } else {
                0
            },
            root: snap.root.clone(),
            config_gen: snap.config_gen,
            class_inputs: snap.class_inputs.clone(),
            overlays: snap.overlays.clone(),
            stamps: HashMap::new(),
        };
        kept.disk_unchanged();
        self.sessions.push(kept);
        // Of the documents only opened, the newest keeps its session; before the cap, so
        // that opening files does not push out an edited document's session.
        let mut newer_opened = false;
        for i in (0..self.sessions.len()).rev() {
            if self.sessions[i].only_opened {
                if newer_opened {
                    self.sessions.remove(i);
                }
                newer_opened = true;
            }
        }
        let over = self.sessions.len().saturating_sub(self.session_cap);
        self.sessions.drain(..over);
        self.drop_unused_libraries(None);
        Ok(a)
    }

    /// A new session for the snapshot: in the newest library when it serves the document,
    /// in a new one when that library is retired, else (the library holds the document's
    /// module as an import) with an interpreter of its own.
    fn start_session(
        &mut self,
        snap: &Snapshot,
        opts: &GraphOptions,
    ) -> Result<(Session, FileAnalysis, Option<u64>), AnalysisError> {
        let buffers: HashMap<PathBuf, Arc<str>> = (snap.overlays.iter().cloned())
            .chain([(snap.path.clone(), snap.text.clone())])
            .collect();
        let environment = snap.environment.as_ref();
        let serves = |l: &mut Library| l.serves(&snap.root, environment, &snap.path, &buffers);
        if !self.libraries.last_mut().is_some_and(serves) {
            if self.libraries.last().is_some_and(|l| !l.is_retired()) {
                let (session, a) = Session::start(project_of(snap), &snap.path, opts)?;
                return Ok((session, a, None));
            }
            // The retired libraries go with their sessions before the new one evaluates the
            // package's modules again: two of them alive at once were the server's peak.
            self.drop_sessions_in(Library::is_retired);
            self.drop_unused_libraries(None);
            super::memory::return_freed();
            self.libraries_made += 1;
            self.libraries.push(Library::new(
                self.libraries_made,
                snap.root.clone(),
                snap.environment.clone(),
                Some(snap.parse_cache.clone()),
                self.documents_per_library,
            ));
        }
        let library = self.libraries.last_mut().expect("a library that serves");
        let interp = library
            .lend_for_start(buffers)
            .expect("a library that serves has its interpreter");
        let started = Session::start_shared(
            interp,
            &snap.path,
            snap.text.clone(),
            snap.tree.clone(),
            opts,
        );
        // On an error the interpreter is gone with the session: the library is dropped.
        let (mut session, a) = started?;
        let files = session.document_files();
        library.started(session.park(), files);
        Ok((session, a, Some(library.id)))
    }

    /// Gives a kept session its library's interpreter; false when that library is gone.
    fn resume(&mut self, kept: &mut Kept) -> bool {
        let Some(id) = kept.library else {
            return true;
        };
        let lent = (self.libraries.iter_mut())
            .find(|l| l.id == id)
            .and_then(Library::lend);
        match lent {
            Some(interp) => {
                kept.session.resume(interp);
                true
            }
            None => false,
        }
    }

    /// Hands a session's interpreter back to its library.
    fn park(&mut self, kept: &mut Kept) {
        let Some(id) = kept.library else { return };
        let interp = kept.session.park();
        if let Some(l) = self.libraries.iter_mut().find(|l| l.id == id) {
            l.give_back(interp);
        }
    }

    /// Drops the sessions that run in a library `which` picks.
    fn drop_sessions_in(&mut self, which: impl Fn(&Library) -> bool) {
        let picked: Vec<u64> = (self.libraries.iter())
            .filter(|l| which(l))
            .map(|l| l.id)
            .collect();
        self.sessions
            .retain(|k| k.library.is_none_or(|id| !picked.contains(&id)));
    }

    /// Drops the libraries that lost their interpreter (a panic) with their sessions, and
    /// the ones no session needs: retired, or idle for `idle`.
    fn drop_unused_libraries(&mut self, idle: Option<std::time::Duration>) {
        self.drop_sessions_in(Library::is_poisoned);
        let sessions = &self.sessions;
        let newest = self.libraries.last().map(|l| l.id);
        self.libraries.retain(|l| {
            let used = sessions.iter().any(|k| k.library == Some(l.id));
            let idle = idle.is_some_and(|d| l.idle_for() >= d);
            !l.is_poisoned() && (used || (Some(l.id) == newest && !l.is_retired() && !idle))
        });
    }
}

/// The 1-based line in `file` a node comes from: its own site, else the outermost call in
/// `file` that inlined it.
/// 1-based source line of a node in the analysed document: its own span there, else the call
/// site there that inlined it.
fn node_line(n: &crate::graph::Node, file: FileId, lines: &LineStarts) -> Option<usize> {
    let o = n.origin.as_ref()?;
    let at = if o.file == file {
        o.span.start
    } else {
        o.call_chain.iter().find(|(f, _)| *f == file)?.1.start
    };
    Some(
        lines
            .index
            .line_col(lines.text, at.min(lines.text.len()))
            .line
            + 1,
    )
}

struct LineStarts<'t> {
    text: &'t str,
    index: crate::syntax::LineIndex,
}

impl<'t> LineStarts<'t> {
    fn new(text: &'t str) -> Self {
        LineStarts {
            text,
            index: crate::syntax::LineIndex::new(text),
        }
    }
}

fn graph_view(g: Arc<GraphResult>, file: FileId) -> GraphView {
    GraphView {
        name: g.name.clone(),
        class: g.class.clone(),
        class_span: g.class_span,
        nodes: Default::default(),
        traced: g,
        file,
    }
}

fn node_views(g: &GraphResult, file: FileId) -> Vec<NodeView> {
    g.graph
        .nodes()
        .map(|(id, _)| node_view(g, id, file))
        .collect()
}

/// One node of `g` as hover shows it; `file` is the analysed document.
fn node_view(g: &GraphResult, id: crate::graph::NodeId, file: FileId) -> NodeView {
    let n = g.graph.node(id);
    {
        {
            let (shape, dtype) = match n.meta.as_tensor() {
                Some(t) => (Some(n.meta.describe()), Some(t.dtype.as_str().to_string())),
                None if matches!(n.meta, crate::shapes::Meta::Unknown) => (None, None),
                None => (Some(n.meta.describe()), None),
            };
            let region = n.region.map(|t| {
                let kind = g
                    .regions
                    .get(t.region)
                    .map(|r| r.kind.as_str())
                    .unwrap_or("branch");
                let role = match t.role {
                    RegionRole::Cause => "decides the branch",
                    RegionRole::ThenBranch => "then branch",
                    RegionRole::ElseBranch => "else branch",
                };
                format!(
                    "graph-break region #{} (data-dependent {kind}; {role})",
                    t.region
                )
            });
            let (span, chain) = match &n.origin {
                Some(o) => (
                    (o.file == file).then_some(o.span),
                    o.call_chain
                        .iter()
                        .filter(|(f, _)| *f == file)
                        .map(|&(_, s)| s)
                        .collect(),
                ),
                None => (None, vec![]),
            };
            NodeView {
                name: n.name.clone(),
                op: n.op.as_str(),
                target: n.target.clone(),
                shape,
                dtype,
                region,
                span,
                chain,
                unknown_reason: unknown_reason(&g.graph, id),
            }
        }
    }
}

/// Whether a value's shape is not fully known: a tensor without a shape or with an unknown
/// size, or nothing known at all.
fn shape_unknown(meta: &crate::shapes::Meta) -> bool {
    use crate::shapes::{Dim, Meta};
    match meta {
        Meta::Unknown => true,
        Meta::Tensor(t) => t
            .shape
            .as_ref()
            .is_none_or(|s| s.iter().any(|d| matches!(d, Dim::Unknown))),
        _ => false,
    }
}

/// Why a call's result shape is unknown, in the order that explains it best: the call raises
/// (its shape check failed), an input is already unknown, the call is one staticfx could not
/// follow, or no shape rule covers it.
fn unknown_reason(graph: &crate::graph::Graph, id: crate::graph::NodeId) -> Option<String> {
    use crate::graph::Op;
    let n = graph.node(id);
    if !shape_unknown(&n.meta) || matches!(n.op, Op::Output) {
        return None;
    }
    if let Some(e) = &n.shape_error {
        return Some(format!("this call raises when it runs: {}", e.message));
    }
    if n.op == Op::Placeholder {
        return Some("an input of forward whose shape was not given".into());
    }
    if let Some(input) = graph
        .inputs(id)
        .into_iter()
        .find(|&i| shape_unknown(&graph.node(i).meta) && graph.node(i).meta.as_tensor().is_some())
    {
        return Some(format!(
            "its input `{}` has an unknown shape",
            graph.node(input).name
        ));
    }
    if n.target.starts_with('<') {
        return Some("staticfx could not follow this call".into());
    }
    if n.op == Op::CallModule {
        return Some(format!("no shape rule covers the module `{}`", n.target));
    }
    Some(format!(
        "no shape rule covers `{}` with these arguments",
        n.target
    ))
}

/// The project root for a file: the workspace folder containing it, else the nearest
/// non-package ancestor.
pub fn root_for(path: &Path, workspace: &[PathBuf], settings: &super::Settings) -> PathBuf {
    if let Some(root) = &settings.root {
        return root.clone();
    }
    workspace
        .iter()
        .filter(|w| path.starts_with(w))
        .max_by_key(|w| w.as_os_str().len())
        .cloned()
        .unwrap_or_else(|| Project::default_root(path))
}

/// One output of `staticfx.runGraph`, as plain data.
#[derive(Clone, Debug)]
pub struct RunOutputView {
    pub name: String,
    pub shape: Vec<usize>,
    pub dtype: &'static str,
    pub min: f64,
    pub mean: f64,
    pub max: f64,
}

/// Traces `class` of the snapshot (per-class mode, default constructor arguments) and runs
/// its graph with the executor: seeded default weights unless `weights` names a
/// safetensors file. Call it on a thread with a large stack, like [`AnalysisHost::analyze`].
pub fn run_graph(
    snap: &Snapshot,
    class: &str,
    inputs: Vec<InputSpec>,
    weights: Option<PathBuf>,
    seed: u64,
) -> Result<(String, Vec<RunOutputView>), String> {
    let project = project_of(snap);
    let inputs = if inputs.is_empty() {
        snap.class_inputs.get(class).cloned().unwrap_or_default()
    } else {
        inputs
    };
    let opts = GraphOptions {
        root: Some(snap.root.clone()),
        class: Some(class.to_string()),
        inputs: inputs.clone(),
        ..Default::default()
    };
    let a = analysis::analyze_in_project(project, &snap.path, &opts).map_err(|e| e.to_string())?;
    let g = a
        .graphs
        .iter()
        .find(|g| g.class == class)
        .ok_or_else(|| format!("no traced nn.Module class `{class}` in the document"))?;
    let run = crate::exec::RunOptions {
        weights,
        inputs_file: None,
        inputs,
        seed,
        repeat: 1,
    };
    // The same graph `staticfx run` executes: optimized for inference.
    let mut g = GraphResult::clone(g);
    let passes = crate::passes::PassOptions {
        inference: true,
        ..Default::default()
    };
    analysis::optimize_graph(&mut g, &passes)
        .map_err(|e| format!("the pass pipeline failed: {e}"))?;
    let g = &g;
    let r = crate::exec::run_graph(g, &run).map_err(|e| super::describe_error(&a, &e))?;
    let outputs = r
        .stats
        .iter()
        .map(|s| RunOutputView {
            name: s.name.clone(),
            shape: s.shape.clone(),
            dtype: s.dtype.as_str(),
            min: s.min,
            mean: s.mean,
            max: s.max,
        })
        .collect();
    Ok((crate::exec::summary(g, &r), outputs))
}
