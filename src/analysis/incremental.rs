//! Re-analysis after a keystroke, for the language server.
//!
//! A module's top level only *defines* its functions; their bodies run later, when a class
//! is built or traced. So after an edit inside one function body every value the top level
//! built is still right, except that the function must now run its new text. A [`Session`]
//! keeps the interpreter with every evaluated module (the file's own and all it imports),
//! points the edited function at its new text (`Interp::redirects`) and traces again only
//! the classes whose last analysis called that function. The other classes keep their
//! graphs, with spans moved past the edit.
//!
//! Two versions of the file live in the project: the *base*, which the module was evaluated
//! from (functions never edited run from it), and the *live* slot, which always holds the
//! newest text: edited functions run from it and every kept span is in its coordinates, so
//! a class the edit does not reach is handed out again as it was.
//!
//! An edit that leaves the syntax trees around it the same (whitespace, comments, the text
//! of a function's docstring) changes no value: only spans move (early cutoff). One
//! top-level import or constant assignment changed, added or removed, or one top-level
//! `def` whose signature changed, runs again in the kept module; the classes whose functions
//! name a name it bound differently are traced again (see `top_level`).
//!
//! Whatever else changes — other top-level statements, a method's signature, a decorator, a `yield`
//! appearing, a function the top level itself calls, a syntax error that spills out of the
//! body — gets a full analysis, as does every [`MAX_EDITS`]th edit (spans of the base are
//! carried through every edit since).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use tree_sitter::{Node, Tree};

use super::top_level;
use super::{
    caller_seeds, flagged_findings, trace_again_for_callers, trace_class, AnalysisError,
    FileAnalysis, GraphOptions, GraphResult, Retrace,
};
use crate::diagnostics::{codes, Diagnostic};
use crate::eval::value::{ModuleNs, PendingImport};
use crate::eval::{contains_yield, find_node, Frame, Interp, Value};
use crate::semantic::{FileId, Project, SourceFile};
use crate::syntax::queries::{top_level_class_sites, ClassSite};
use crate::syntax::Span;

/// Edits served incrementally before the session starts over.
pub const MAX_EDITS: usize = 256;

/// A function's identity: the file version and span of its definition when its value was
/// made.
type FnKey = (FileId, Span);

/// One text change between two versions, as byte offsets.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Edit {
    start: usize,
    old_end: usize,
    new_end: usize,
}

impl Edit {
    /// The smallest change turning `old` into `new`; None when they are equal.
    fn between(old: &str, new: &str) -> Option<Edit> {
        let (a, b) = (old.as_bytes(), new.as_bytes());
        let mut start = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        if start == a.len() && start == b.len() {
            return None;
        }
        let max_suffix = a.len().min(b.len()) - start;
        let suffix = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take(max_suffix)
            .take_while(|(x, y)| x == y)
            .count();
        // Byte offsets become spans of nodes: keep them on character boundaries.
        while start > 0 && !(old.is_char_boundary(start) && new.is_char_boundary(start)) {
            start -= 1;
        }
        let (mut old_end, mut new_end) = (a.len() - suffix, b.len() - suffix);
        while !(old.is_char_boundary(old_end) && new.is_char_boundary(new_end)) {
            old_end += 1;
            new_end += 1;
        }
        Some(Edit {
            start,
            old_end,
            new_end,
        })
    }

    /// The same insertion or deletion moved as far left as the text allows: a line added
    /// after `import a` is found by the smallest change as `…a\nimport b` inserted inside
    /// the next statement's `import`, which would move that statement's spans wrongly; moved
    /// left, it is `\nimport b` inserted after the line, where statements end.
    fn slid_left(self, old: &str, new: &str) -> Edit {
        let (moved, text) = if self.old_end == self.start {
            (self.new_end, new)
        } else if self.new_end == self.start {
            (self.old_end, old)
        } else {
            return self;
        };
        let (bytes, before) = (text.as_bytes(), old.as_bytes());
        let (mut start, mut end) = (self.start, moved);
        while start > 0 && before[start - 1] == bytes[end - 1] {
            start -= 1;
            end -= 1;
        }
        while !(old.is_char_boundary(start) && text.is_char_boundary(end)) {
            start += 1;
            end += 1;
        }
        let len = moved - self.start;
        if self.old_end == self.start {
            Edit {
                start,
                old_end: start,
                new_end: start + len,
            }
        } else {
            Edit {
                start,
                old_end: start + len,
                new_end: start,
            }
        }
    }

    /// Where the end of a span at `p` lies after the edit: text inserted right after it is
    /// not part of it.
    fn pos(&self, p: usize) -> usize {
        if p <= self.start {
            p
        } else if p >= self.old_end {
            p - self.old_end + self.new_end
        } else {
            p.min(self.new_end)
        }
    }

    /// Where the start of a span at `p` lies after the edit: text inserted right before it
    /// pushes it on.
    fn start_pos(&self, p: usize) -> usize {
        if p >= self.old_end {
            p - self.old_end + self.new_end
        } else {
            self.pos(p)
        }
    }

    fn span(&self, s: Span) -> Span {
        let start = self.start_pos(s.start);
        Span {
            start,
            end: self.pos(s.end).max(start),
        }
    }
}

/// A function the module's top level defines (at module level or in a class body, not inside
/// another function): the unit an edit may replace.
#[derive(Clone, Debug)]
struct Unit {
    key: FnKey,
    /// Its definition's span in the newest version.
    now: Span,
    /// Whether an edit redirected it to the live text.
    redirected: bool,
}

/// What one run of a trace left (`Session::finish_run`): the functions it called, its steps,
/// its diagnostics, how far into the live file they reach, and the sites it ran.
type RunOutcome = (
    HashSet<(FileId, Span)>,
    u64,
    Vec<Diagnostic>,
    usize,
    crate::eval::Sites,
);

struct ClassEntry {
    /// In the live file's coordinates; shared with the analyses handed out.
    graph: Option<Arc<GraphResult>>,
    diagnostics: Vec<Diagnostic>,
    /// Every function the class's construction and trace called.
    touched: HashSet<FnKey>,
    /// Evaluation steps the class took (the budget is shared by the whole file).
    steps: u64,
    /// The furthest live-file offset the entry refers to: an edit after it moves nothing.
    reach: usize,
    /// The statements of the live file the class's analysis ran and the limits it met there,
    /// in the live file's coordinates (`super::followed_elsewhere`).
    sites: crate::eval::Sites,
}

/// The kept state of one file's analysis. Holds `Rc` values: it lives on one thread.
pub struct Session {
    interp: Interp,
    path: PathBuf,
    opts: GraphOptions,
    ns: Rc<ModuleNs>,
    /// The version the module was evaluated from.
    base: FileId,
    /// The slot holding the newest text.
    live: FileId,
    /// The edits from the base to the newest text, in order.
    edits: Vec<Edit>,
    units: Vec<Unit>,
    /// Functions the top level called: editing one of them changes what it built.
    top_touched: HashSet<FnKey>,
    /// Evaluation steps the top level took.
    top_steps: u64,
    /// The top level's diagnostics other than syntax errors, in live coordinates.
    top_diagnostics: Vec<Diagnostic>,
    /// Class sites of the base (the module's classes were built from it).
    sites: Vec<ClassSite>,
    /// Class spans in the live file: a class ending where text was inserted may have grown,
    /// which only the tree can tell.
    live_spans: Vec<Option<Span>>,
    classes: Vec<ClassEntry>,
    /// The flagged retraces [`Session::start`] left for [`Session::finish_retraces`], by class.
    retraces: Vec<Option<Retrace>>,
    /// False when the full analysis ran out of budget: what a class saw then depended on
    /// the others, so no part of it can be reused.
    reusable: bool,
    /// What the session keeps of the interpreter while it is parked (see [`Session::park`]).
    parked: Option<Parked>,
    /// Default traces of classes run since the session started (its own included).
    traces: u64,
}

/// A parked session's own part of a shared interpreter: its functions' redirects to the live
/// text, and the modules its analysis reached (charged to its budget already).
struct Parked {
    redirects: HashMap<FnKey, (Arc<SourceFile>, FileId, Span)>,
    reached: HashSet<FileId>,
}

impl Session {
    /// A full per-class analysis of `path` that keeps what later edits can reuse.
    pub fn start(
        project: Project,
        path: &Path,
        opts: &GraphOptions,
    ) -> Result<(Session, FileAnalysis), AnalysisError> {
        let project = Arc::new(project);
        let base = project
            .load_path(path)
            .map_err(|source| AnalysisError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Session::begin(Interp::new(project), base, path, opts)
    }

    /// Like [`Session::start`], for `text` as the file at `path`, in an interpreter that
    /// reuses modules and serves other documents' sessions as well
    /// (`Interp::enable_module_reuse`): the modules they share are evaluated once and charged
    /// to each analysis that reaches them. Imports of the document's own module resolve to
    /// the project's copy of it, not to this text. The session holds the interpreter until
    /// it is parked.
    pub fn start_shared(
        interp: Interp,
        path: &Path,
        text: Arc<str>,
        tree: Option<Tree>,
        opts: &GraphOptions,
    ) -> Result<(Session, FileAnalysis), AnalysisError> {
        let base = interp.project.load_unregistered(path, text, tree);
        Session::begin(interp, base, path, opts)
    }

    fn begin(
        mut interp: Interp,
        base: FileId,
        path: &Path,
        opts: &GraphOptions,
    ) -> Result<(Session, FileAnalysis), AnalysisError> {
        let project = interp.project.clone();
        interp.start_next_analysis(deadline(opts));
        interp.touched = Some(HashSet::new());
        let ns = interp
            .load_module(base)
            .map_err(|e| AnalysisError::Entry(e.message))?;
        let top_touched = interp.touched.take().unwrap_or_default();
        let top_steps = interp.steps_used();
        let source = project.file(base);
        let live = project.add_alias(base);
        // The file's own syntax errors are reported from each version's text; the ones the
        // evaluator met in top-level statements stay with the top level.
        let mut top_diagnostics: Vec<Diagnostic> = std::mem::take(&mut interp.diagnostics)
            .into_iter()
            .filter(|d| {
                !(d.file == base
                    && d.code == codes::SYNTAX_ERROR
                    && source
                        .syntax_errors
                        .iter()
                        .any(|(span, msg)| *span == d.span && *msg == d.message))
            })
            .collect();
        for d in &mut top_diagnostics {
            if d.file == base {
                d.file = live;
            }
        }
        let sites = top_level_class_sites(&source.tree(), &source.text);
        let units = units_of(&source.tree())
            .into_iter()
            .map(|span| Unit {
                key: (base, span),
                now: span,
                redirected: false,
            })
            .collect();
        let mut session = Session {
            interp,
            path: path.to_path_buf(),
            opts: opts.clone(),
            ns,
            base,
            live,
            edits: vec![],
            units,
            top_touched,
            top_steps,
            top_diagnostics,
            live_spans: sites.iter().map(|s| Some(s.span)).collect(),
            sites,
            classes: vec![],
            retraces: vec![],
            reusable: true,
            parked: None,
            traces: 0,
        };
        session.interp.caller_kinds.begin_file(base);
        let mut seeded = Vec::new();
        for i in 0..session.sites.len() {
            seeded.push(caller_seeds(
                &session.interp,
                &session.ns,
                &session.sites[i],
            ));
            let spent = session.interp.steps_used();
            let (entry, retrace) = session.trace_default(i, spent);
            session.classes.push(entry);
            session.retraces.push(retrace);
        }
        trace_again_for_callers(
            &mut session,
            &mut seeded,
            |s, i| caller_seeds(&s.interp, &s.ns, &s.sites[i]),
            |s, i| {
                let spent = s.interp.steps_used();
                let (entry, retrace) = s.trace_default(i, spent);
                s.classes[i] = entry;
                s.retraces[i] = retrace;
            },
        );
        session.note_budget();
        let analysis = session.analysis();
        Ok((session, analysis))
    }

    /// Whether [`Session::finish_retraces`] has work left: the analysis [`Session::start`]
    /// returned lacks the breaks only a config flag reaches.
    pub fn has_pending_retraces(&self) -> bool {
        self.retraces.iter().any(Option::is_some)
    }

    /// Runs the flagged retraces `start` left (as a full analysis runs them, after every
    /// default trace) and returns the complete analysis; None when none were left.
    pub fn finish_retraces(&mut self) -> Option<FileAnalysis> {
        self.finish_retraces_while(|| true)
    }

    /// Like [`Session::finish_retraces`], while `go_on` says the work is still wanted (the
    /// text has not changed meanwhile): asked before each class's retraces and, through the
    /// interpreter, as they run. When it says no, the retrace under way is dropped as if it
    /// never ran, the rest stay pending and None is returned. Left pending across
    /// [`Session::update`]s, a retrace runs on the newest text, with the newest text of
    /// every edited function, as a full analysis of that text would.
    pub fn finish_retraces_while(
        &mut self,
        go_on: impl Fn() -> bool + 'static,
    ) -> Option<FileAnalysis> {
        if !self.has_pending_retraces() {
            return None;
        }
        self.interp.limits.deadline = deadline(&self.opts);
        let go_on: Rc<dyn Fn() -> bool> = Rc::new(go_on);
        for i in 0..self.retraces.len() {
            if self.retraces[i].is_none() {
                continue;
            }
            if !go_on() {
                return None;
            }
            let Some(retrace) = self.retraces[i].take() else {
                continue;
            };
            // A full analysis runs the retraces after every default trace and the retraces
            // before: all but the ones still pending.
            let spent = self.top_steps + self.classes.iter().map(|c| c.steps).sum::<u64>();
            self.interp.cancel = Some(go_on.clone());
            let ran = self.retrace(i, &retrace, spent);
            self.interp.cancel = None;
            if !ran {
                self.retraces[i] = Some(retrace);
                return None;
            }
        }
        self.note_budget();
        Some(self.analysis())
    }

    /// A full analysis that ran out of budget cannot be reused in part.
    fn note_budget(&mut self) {
        self.reusable = !self
            .top_diagnostics
            .iter()
            .chain(self.classes.iter().flat_map(|c| &c.diagnostics))
            .any(|d| d.code == codes::BUDGET);
    }

    /// How many times a class was traced since the session started: what an edit cost, for
    /// tests of early cutoff.
    pub fn traces_run(&self) -> u64 {
        self.traces
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The project the session evaluates in (its overlays and root are fixed).
    pub fn project(&self) -> &Arc<Project> {
        &self.interp.project
    }

    /// Hands out the interpreter of a session started with [`Session::start_shared`], for
    /// other sessions to run in, keeping what is the session's own; [`Session::resume`]
    /// gives it back before the session's next update.
    pub fn park(&mut self) -> Interp {
        let placeholder = Interp::new(self.interp.project.clone());
        let mut interp = std::mem::replace(&mut self.interp, placeholder);
        self.parked = Some(Parked {
            redirects: std::mem::take(&mut interp.redirects),
            reached: interp.take_reached(),
        });
        interp.diagnostics.clear();
        interp
    }

    /// Gives a parked session its interpreter back (the one [`Session::park`] handed out).
    pub fn resume(&mut self, mut interp: Interp) {
        debug_assert!(Arc::ptr_eq(&interp.project, &self.interp.project));
        if let Some(p) = self.parked.take() {
            interp.redirects = p.redirects;
            interp.restore_reached(p.reached);
        }
        self.interp = interp;
    }

    /// The slots of the document's text in the project: the base and the live version.
    pub fn document_files(&self) -> [FileId; 2] {
        [self.base, self.live]
    }

    /// Whether the session's interpreter is handed out (see [`Session::park`]).
    pub fn is_parked(&self) -> bool {
        self.parked.is_some()
    }

    /// Analyses the file's new text by reusing the last analysis, or None when the edit is
    /// not one a session can follow: the session is then spent, and the caller starts a
    /// new one. While [`Session::has_pending_retraces`], the analysis lacks the breaks only
    /// the flagged retraces find, as the first stage of [`Session::start`]'s does.
    pub fn update(&mut self, text: Arc<str>, tree: Option<Tree>) -> Option<FileAnalysis> {
        // Retraces still pending (the last version was superseded before they ran) stay so:
        // they run after this update, on its text (`finish_retraces_while`).
        if !self.reusable || self.edits.len() >= MAX_EDITS {
            return None;
        }
        self.interp.limits.deadline = deadline(&self.opts);
        let project = self.interp.project.clone();
        let old = project.file(self.live);
        let new = Arc::new(SourceFile::new(
            old.path.clone(),
            old.module.clone(),
            text,
            tree,
        ));
        let Some(edit) = Edit::between(&old.text, &new.text) else {
            // The same text to evaluate (an edit inside a line blanked for a syntax error):
            // only the syntax errors may differ.
            project.replace_file(self.live, new);
            return Some(self.analysis());
        };
        if same_syntax(&old, &new, edit) {
            // Early cutoff: whitespace or a comment changed, and the evaluator reads neither.
            // Every value stays right; only the spans move.
            self.shift(edit, &new);
            return Some(self.analysis());
        }
        let Some((unit, def_now)) = self.edited_unit(&old.tree(), &new.tree(), edit) else {
            return self.update_top_level(&old, &new, edit);
        };
        let key = self.units[unit].key;
        if self.top_touched.contains(&key) {
            return None;
        }
        project.replace_file(self.live, new.clone());
        self.edits.push(edit);
        for u in &mut self.units {
            u.now = edit.span(u.now);
        }
        // Typing at the end of the body's last line grows the definition; a span ending
        // exactly where text was inserted cannot tell, the new tree can.
        self.units[unit].now = def_now;
        self.units[unit].redirected = true;
        for u in self.units.iter().filter(|u| u.redirected) {
            self.interp
                .redirects
                .insert(u.key, (new.clone(), self.live, u.now));
        }
        self.move_kept(edit, &new);
        for i in 0..self.classes.len() {
            if self.classes[i].touched.contains(&key) && !self.trace_again_within_budget(i) {
                return None;
            }
        }
        Some(self.analysis())
    }

    /// An edit of one top-level statement: an import or an assignment of a constant (see
    /// `top_level::simple_statement`), changed, added or removed, or a `def` changed. The statement runs again in
    /// the kept module; when every name it binds keeps its value (the same object, an equal
    /// constant) nothing else runs, otherwise the classes whose construction or trace ran a
    /// function naming one of them are traced again. None (a full analysis) when that cannot
    /// be decided: another statement binds or mutates one of the names, the top level itself
    /// reads one, the statement reads a name bound after it, or an import is left deferred.
    fn update_top_level(
        &mut self,
        old: &Arc<SourceFile>,
        new: &Arc<SourceFile>,
        edit: Edit,
    ) -> Option<FileAnalysis> {
        let edit = edit.slid_left(&old.text, &new.text);
        let (old_tree, new_tree) = (old.tree(), new.tree());
        let (old_stmts, new_stmts) = (
            code_children(old_tree.root_node()),
            code_children(new_tree.root_node()),
        );
        let before = |stmts: &[Node], start: usize| {
            stmts.iter().take_while(|n| n.end_byte() < start).count()
        };
        let after = |stmts: &[Node], end: usize| {
            stmts
                .iter()
                .rev()
                .take_while(|n| n.start_byte() > end)
                .count()
        };
        let (lead, trail) = (
            before(&old_stmts, edit.start),
            after(&old_stmts, edit.old_end),
        );
        if lead != before(&new_stmts, edit.start)
            || trail != after(&new_stmts, edit.new_end)
            || lead + trail > old_stmts.len().min(new_stmts.len())
        {
            return None;
        }
        let mut changed_old = &old_stmts[lead..old_stmts.len() - trail];
        let mut changed_new = &new_stmts[lead..new_stmts.len() - trail];
        // A statement added or removed next to one the edit touches without changing it.
        let mut lead = lead;
        while let ([a, rest_old @ ..], [b, rest_new @ ..]) = (changed_old, changed_new) {
            if !same_tokens(*a, &old.text, *b, &new.text) {
                break;
            }
            (changed_old, changed_new, lead) = (rest_old, rest_new, lead + 1);
        }
        while let ([rest_old @ .., a], [rest_new @ .., b]) = (changed_old, changed_new) {
            if !same_tokens(*a, &old.text, *b, &new.text) {
                break;
            }
            (changed_old, changed_new) = (rest_old, rest_new);
        }
        if changed_old.len() > 1 || changed_new.len() > 1 {
            return None;
        }
        let simple_old = match changed_old.first() {
            Some(&n) => Some(top_level::simple_statement(n, &old.text)?),
            None => None,
        };
        let simple_new = match changed_new.first() {
            Some(&n) => Some(top_level::simple_statement(n, &new.text)?),
            None => None,
        };
        let names: HashSet<String> = (simple_old.iter().chain(&simple_new))
            .flat_map(|s| s.binds.iter().cloned())
            .collect();
        let reads: HashSet<String> = simple_new
            .iter()
            .flat_map(|s| s.reads.iter().cloned())
            .collect();
        if names.is_empty() || reads.iter().any(|r| names.contains(r)) {
            return None;
        }
        // A `def` run again stays the unit it was, so that a later edit of its body is
        // followed as any other; one added or removed would change the units.
        let defs = (changed_old.first(), changed_new.first());
        let redefined = match defs {
            (Some(a), Some(b))
                if a.kind() == "function_definition" && b.kind() == "function_definition" =>
            {
                Some(self.units.iter().position(|u| u.now == Span::of(*a))?)
            }
            (a, b)
                if [a, b]
                    .into_iter()
                    .flatten()
                    .any(|n| n.kind() == "function_definition") =>
            {
                return None
            }
            _ => None,
        };
        if redefined.is_some() && names.len() != 1 {
            return None;
        }
        // No other statement may bind or mutate those names, or those the statement reads
        // after it (it now runs after the whole top level, not in its place), and the top
        // level itself must not read them: what it built from them would change too.
        for (k, &stmt) in new_stmts.iter().enumerate() {
            if k >= lead && k < lead + changed_new.len() {
                continue;
            }
            let mut bound = HashSet::new();
            top_level::names_bound(stmt, &new.text, &mut bound);
            if bound.contains("*")
                || bound.iter().any(|b| names.contains(b))
                || (k >= lead && bound.iter().any(|b| reads.contains(b)))
                || top_level::top_level_mentions(stmt, &new.text, &names)
            {
                return None;
            }
        }
        let base_file = self.interp.project.file(self.base);
        let base = self.base;
        let body_of = move |key: &FnKey| -> Option<String> {
            (key.0 == base).then(|| {
                base_file
                    .text
                    .get(key.1.start..key.1.end)
                    .unwrap_or("")
                    .to_string()
            })
        };
        if (self.top_touched.iter())
            .filter_map(|k| body_of(k))
            .any(|body| top_level::mentions_word(&body, &names))
        {
            return None;
        }

        // Run the new statement in place of the old one.
        let saved: Vec<(String, Option<Value>, Option<PendingImport>)> = (names.iter())
            .map(|n| {
                (
                    n.clone(),
                    self.ns.vars.borrow_mut().shift_remove(n),
                    self.ns.pending.borrow_mut().remove(n),
                )
            })
            .collect();
        let deadline = self.interp.limits.deadline;
        self.interp.reset_for_analysis(deadline);
        self.interp.set_steps_used(self.top_steps);
        if let Some(&stmt) = changed_new.first() {
            let frame = Frame {
                file: new.clone(),
                file_id: self.live,
                globals: self.ns.clone(),
                locals: None,
                class: None,
                receiver: None,
            };
            if !self.interp.exec_module_stmt(&frame, stmt) {
                return None;
            }
        }
        if let Some(unit) = redefined {
            // The new function keeps the unit's key, redirected to the live text as a body
            // edit is: its calls then follow later edits (`shift` moves the redirect), and
            // what the classes recorded as touched still names it.
            let name = names.iter().next()?;
            let Some(Value::Function(f)) = self.ns.vars.borrow().get(name).cloned() else {
                return None;
            };
            let (file_id, span) = self.units[unit].key;
            let rebased = crate::eval::value::Function {
                file: self.interp.project.file(file_id),
                file_id,
                span,
                ..(*f).clone()
            };
            self.ns
                .vars
                .borrow_mut()
                .insert(name.clone(), Value::Function(Rc::new(rebased)));
            self.units[unit].redirected = true;
        }
        let diagnostics = std::mem::take(&mut self.interp.diagnostics);
        let mut changed = HashSet::new();
        for (name, old_value, old_pending) in saved {
            let new_pending = self.ns.pending.borrow().get(&name).cloned();
            match (old_pending, new_pending) {
                // Deferred both times, from the same module: keep the old entry, whose span
                // is in the base's coordinates as the module's others are.
                (Some(a), Some(b))
                    if a.module == b.module && a.attr == b.attr && a.also_load == b.also_load =>
                {
                    self.ns.pending.borrow_mut().insert(name.clone(), a);
                    continue;
                }
                // A deferred import's span would be the live text's under the base's id.
                (_, Some(_)) => return None,
                (Some(_), None) => {}
                (None, None) => {
                    let now = self.ns.vars.borrow().get(&name).cloned();
                    if let (Some(a), Some(b)) = (&old_value, &now) {
                        if same_value(a, b) {
                            continue;
                        }
                    } else if old_value.is_none() && now.is_none() {
                        continue;
                    }
                }
            }
            changed.insert(name);
        }
        self.top_steps = self.interp.steps_used();

        // The old statement's diagnostics go, the new one's come (already in live text).
        if let Some(&stmt) = changed_old.first() {
            let (start, end) = (stmt.start_byte(), stmt.end_byte());
            self.top_diagnostics
                .retain(|d| !(d.file == self.live && d.span.start >= start && d.span.end <= end));
        }
        self.shift(edit, new);
        self.top_diagnostics.extend(diagnostics);
        if changed.is_empty() {
            return Some(self.analysis());
        }
        // `globals()` and the like read any name.
        changed.extend(["globals", "vars", "__dict__"].map(String::from));
        let live_text = new.text.clone();
        let redirected: Vec<(FnKey, Span)> = (self.units.iter())
            .filter(|u| u.redirected)
            .map(|u| (u.key, u.now))
            .collect();
        let reads_changed = |key: &FnKey| {
            let body = match redirected.iter().find(|(k, _)| k == key) {
                Some((_, now)) => live_text.get(now.start..now.end).map(str::to_string),
                None => body_of(key),
            };
            body.is_some_and(|b| top_level::mentions_word(&b, &changed))
        };
        let readers: Vec<usize> = (self.classes.iter().enumerate())
            .filter(|(_, c)| c.touched.iter().any(&reads_changed))
            .map(|(i, _)| i)
            .collect();
        for i in readers {
            if !self.trace_again_within_budget(i) {
                return None;
            }
        }
        Some(self.analysis())
    }

    /// Traces class `i` again after the steps every other part of the analysis took; false
    /// when that ran out of the file's budget, which would have starved the classes after it
    /// in a full analysis too.
    fn trace_again_within_budget(&mut self, i: usize) -> bool {
        let others: u64 = self.top_steps
            + (self.classes.iter().enumerate())
                .filter(|(j, _)| *j != i)
                .map(|(_, c)| c.steps)
                .sum::<u64>();
        self.trace_again(i, others);
        !self.classes[i]
            .diagnostics
            .iter()
            .any(|d| d.code == codes::BUDGET)
    }

    /// Follows an edit that changed no value: the live file becomes `new`, and the units, the
    /// redirected functions and what the classes keep move with the text.
    fn shift(&mut self, edit: Edit, new: &Arc<SourceFile>) {
        self.interp.project.replace_file(self.live, new.clone());
        self.edits.push(edit);
        // The trees hold the same definitions in the same order: the new one says where each
        // now ends (text typed at the end of a body's last line is not part of it).
        for (u, now) in self.units.iter_mut().zip(units_of(&new.tree())) {
            u.now = now;
        }
        for u in self.units.iter().filter(|u| u.redirected) {
            self.interp
                .redirects
                .insert(u.key, (new.clone(), self.live, u.now));
        }
        self.move_kept(edit, new);
    }

    /// The unit whose body holds the whole edit, in the old tree and the new one alike, and
    /// its definition's span in the new tree. The edit may run past the last statement into
    /// trailing blanks and comments, as long as no new statement appears there.
    fn edited_unit(&self, old: &Tree, new: &Tree, edit: Edit) -> Option<(usize, Span)> {
        let i = self
            .units
            .iter()
            .position(|u| u.now.start < edit.start && edit.start <= u.now.end)?;
        let start = self.units[i].now.start;
        let old_def = find_node(old, self.units[i].now)?;
        let new_def = definition_at(new, start)?;
        let after_header = |def: Node| {
            let mut w = def.walk();
            let colon = def.children(&mut w).find(|c| c.kind() == ":");
            colon.is_some_and(|c| c.end_byte() <= edit.start)
        };
        let (old_next, new_next) = (next_code(old_def), next_code(new_def));
        let old_eof = old_next == old.root_node().end_byte().max(old_def.end_byte());
        let fits = after_header(old_def)
            && after_header(new_def)
            && (edit.old_end < old_next || (old_eof && edit.old_end <= old_next))
            && edit.new_end <= new_next
            && new_next == edit.pos(old_next)
            && contains_yield(old_def) == contains_yield(new_def);
        fits.then(|| (i, Span::of(new_def)))
    }

    /// Moves what the session keeps past `edit`; `new` is the live file after it. Classes
    /// that end before the edit are left alone, so their graphs stay shared.
    fn move_kept(&mut self, edit: Edit, new: &SourceFile) {
        let live = self.live;
        let shift = |file: &mut FileId, span: &mut Span| {
            if *file == live {
                *span = edit.span(*span);
            }
        };
        for d in &mut self.top_diagnostics {
            shift(&mut d.file, &mut d.span);
        }
        let sites = top_level_class_sites(&new.tree(), &new.text);
        self.live_spans = (self.sites.iter().enumerate())
            .map(|(i, base)| sites.get(i).filter(|s| s.name == base.name).map(|s| s.span))
            .collect();
        for (i, c) in self.classes.iter_mut().enumerate() {
            for d in &mut c.diagnostics {
                shift(&mut d.file, &mut d.span);
            }
            if c.sites.ran.iter().any(|(_, s)| s.end > edit.start) {
                let moved = |(mut f, mut s): (FileId, Span)| {
                    shift(&mut f, &mut s);
                    (f, s)
                };
                c.sites.ran = std::mem::take(&mut c.sites.ran)
                    .into_iter()
                    .map(moved)
                    .collect();
                c.sites.noted = std::mem::take(&mut c.sites.noted)
                    .into_iter()
                    .map(|(f, s, code)| {
                        let (f, s) = moved((f, s));
                        (f, s, code)
                    })
                    .collect();
            }
            let Some(g) = &mut c.graph else { continue };
            let class_span = self.live_spans[i];
            if c.reach <= edit.start && class_span.is_none_or(|s| s == g.class_span) {
                continue;
            }
            let g = Arc::make_mut(g);
            c.reach = for_each_span(g, live, |f, s| shift(f, s));
            if let Some(span) = class_span {
                g.class_span = span;
            }
            // The rules read only what the class ran, which did not change; the line
            // numbers follow the text.
            crate::breaks::locate(&self.interp.project, &mut g.breaks);
            crate::breaks::locate(&self.interp.project, &mut g.flagged_breaks);
        }
    }

    /// Builds and traces class `i` again with the newest text of every edited function,
    /// after `spent` steps of the file's budget, flagged retraces included.
    fn trace_again(&mut self, i: usize, spent: u64) {
        let (entry, retrace) = self.trace_default(i, spent);
        self.classes[i] = entry;
        self.retraces[i] = None;
        if let Some(retrace) = retrace {
            let spent = self.interp.steps_used();
            self.retrace(i, &retrace, spent);
        }
    }

    /// Starts one trace of the file's budget after `spent` steps, recording the functions it
    /// calls.
    fn start_run(&mut self, spent: u64) {
        let deadline = self.interp.limits.deadline;
        self.interp.reset_for_analysis(deadline);
        self.interp.set_steps_used(spent);
        self.interp.touched = Some(HashSet::new());
        self.interp.sites = Some(Default::default());
    }

    /// What the trace begun by `start_run(spent)` left: the functions it called, its steps,
    /// its diagnostics moved to the live text, and how far into the live file they reach.
    fn finish_run(&mut self, spent: u64) -> RunOutcome {
        let touched = self.interp.touched.take().unwrap_or_default();
        let ran = self.interp.sites.take().unwrap_or_default();
        let steps = self.interp.steps_used().saturating_sub(spent);
        let mut diagnostics = std::mem::take(&mut self.interp.diagnostics);
        let to_live = live_mover(self.base, self.live, &self.edits);
        let mut reach = 0;
        for d in &mut diagnostics {
            to_live(&mut d.file, &mut d.span);
            if d.file == self.live {
                reach = reach.max(d.span.end);
            }
        }
        // only the live file's limits are shown, so only its statements are compared
        let live = self.live;
        let mut sites = crate::eval::Sites::default();
        for (mut f, mut span) in ran.ran {
            to_live(&mut f, &mut span);
            if f == live {
                sites.ran.insert((f, span));
            }
        }
        for (mut f, mut span, code) in ran.noted {
            to_live(&mut f, &mut span);
            if f == live {
                sites.noted.insert((f, span, code));
            }
        }
        (touched, steps, diagnostics, reach, sites)
    }

    /// Class `i`'s default trace (with the newest text of every edited function, after
    /// `spent` steps of the file's budget), and what its flagged retraces need.
    fn trace_default(&mut self, i: usize, spent: u64) -> (ClassEntry, Option<Retrace>) {
        self.traces += 1;
        self.start_run(spent);
        let traced = trace_class(
            &mut self.interp,
            self.base,
            &self.ns,
            &self.sites[i],
            &self.opts,
        );
        let (graph, retrace) = match traced {
            Some((g, r)) => (Some(g), r),
            None => (None, None),
        };
        let (touched, steps, diagnostics, mut reach, sites) = self.finish_run(spent);
        let edits = self.edits.clone();
        let to_live = live_mover(self.base, self.live, &edits);
        let live = self.live;
        let class_span = self.live_spans[i];
        let graph = graph.map(|mut g| {
            reach = reach.max(for_each_span(&mut g, live, &to_live));
            if let Some(span) = class_span {
                g.class_span = span;
            }
            g.breaks = crate::breaks::annotate(&self.interp.project, &g, &self.opts.torch_target);
            Arc::new(g)
        });
        let entry = ClassEntry {
            graph,
            diagnostics,
            touched,
            steps,
            reach,
            sites,
        };
        (entry, retrace)
    }

    /// Runs class `i`'s flagged retraces after `spent` steps and adds what they found to its
    /// entry: the breaks, the functions they called, their steps and diagnostics. False when
    /// the interpreter's `cancel` stopped them: then nothing is added.
    fn retrace(&mut self, i: usize, retrace: &Retrace, spent: u64) -> bool {
        self.start_run(spent);
        let mut flagged = flagged_findings(&mut self.interp, retrace, &self.opts);
        let (touched, steps, diagnostics, reach, sites) = self.finish_run(spent);
        if self.interp.take_cancelled() {
            return false;
        }
        let edits = self.edits.clone();
        let to_live = live_mover(self.base, self.live, &edits);
        let live = self.live;
        let entry = &mut self.classes[i];
        entry.reach = entry.reach.max(reach);
        for f in &mut flagged {
            to_live(&mut f.file, &mut f.span);
            for (rf, rs, _) in &mut f.related {
                to_live(rf, rs);
            }
            if f.file == live {
                entry.reach = entry.reach.max(f.span.end);
            }
        }
        crate::breaks::locate(&self.interp.project, &mut flagged);
        entry.touched.extend(touched);
        entry.sites.ran.extend(sites.ran);
        entry.sites.noted.extend(sites.noted);
        entry.steps += steps;
        entry.diagnostics.extend(diagnostics);
        if let Some(g) = &mut entry.graph {
            let g = Arc::make_mut(g);
            // spans already in live coordinates, as the merged breaks are
            g.flagged_breaks = flagged.clone();
            crate::breaks::add_flagged(&mut g.breaks, &flagged);
        }
        true
    }

    /// The analysis of the newest text, as `analyze_in_project` reports it.
    fn analysis(&mut self) -> FileAnalysis {
        let live = self.live;
        let source = self.interp.project.file(live);
        self.interp.diagnostics.clear();
        for (span, msg) in &source.syntax_errors {
            self.interp
                .note(live, *span, codes::SYNTAX_ERROR, msg.clone());
        }
        let mut diagnostics = std::mem::take(&mut self.interp.diagnostics);
        diagnostics.extend(self.top_diagnostics.iter().cloned());
        let mut graphs = Vec::new();
        for c in &self.classes {
            diagnostics.extend(c.diagnostics.iter().cloned());
            graphs.extend(c.graph.clone());
        }
        let runs: Vec<crate::eval::Sites> = self.classes.iter().map(|c| c.sites.clone()).collect();
        diagnostics.retain(|d| !super::followed_elsewhere(d, &runs));
        for g in graphs.iter_mut() {
            let followed = super::error_followed_elsewhere(g, &runs);
            if followed != g.error_followed_elsewhere {
                // rare: a class whose trace stopped where another class's did not
                std::sync::Arc::make_mut(g).error_followed_elsewhere = followed;
            }
        }
        FileAnalysis {
            project: self.interp.project.clone(),
            file: live,
            graphs,
            diagnostics,
        }
    }
}

/// Whether a name bound again keeps its value: the same object, or an equal constant.
fn same_value(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (None, None) | (Ellipsis, Ellipsis) => true,
        (Bool(x), Bool(y)) => x == y,
        (Int(x), Int(y)) => x == y,
        (Float(x), Float(y)) => x.to_bits() == y.to_bits(),
        (Str(x), Str(y)) | (External(x), External(y)) | (Builtin(x), Builtin(y)) => x == y,
        (Dtype(x), Dtype(y)) => x == y,
        (Tuple(x), Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| same_value(a, b))
        }
        (Function(x), Function(y)) => Rc::ptr_eq(x, y),
        (Class(x), Class(y)) => Rc::ptr_eq(x, y),
        (Object(x), Object(y)) => Rc::ptr_eq(x, y),
        (Module(x), Module(y)) => Rc::ptr_eq(x, y),
        (List(x), List(y)) => Rc::ptr_eq(x, y),
        (Dict(x), Dict(y)) => Rc::ptr_eq(x, y),
        (Unknown(x), Unknown(y)) => x.reason == y.reason && x.path == y.path,
        _ => false,
    }
}

/// Moves a (file, span) of the base into the live file's coordinates: spans of functions
/// never edited are in the base's, the others in the live file's already.
fn live_mover(base: FileId, live: FileId, edits: &[Edit]) -> impl Fn(&mut FileId, &mut Span) + '_ {
    move |file: &mut FileId, span: &mut Span| {
        if *file == base {
            for e in edits {
                *span = e.span(*span);
            }
            *file = live;
        }
    }
}

fn deadline(opts: &GraphOptions) -> Option<std::time::Instant> {
    opts.time_limit.map(|d| std::time::Instant::now() + d)
}

/// Whether `new` holds the same program as `old`, which differ by `edit`: the top-level
/// statements around the edit have the same syntax trees (node kinds, token texts, whole
/// string literals), comments and the whitespace between tokens aside. Text outside the edit
/// is byte-for-byte the same, and so is its parse when the statements around the edit are.
fn same_syntax(old: &SourceFile, new: &SourceFile, edit: Edit) -> bool {
    let (old_tree, new_tree) = (old.tree(), new.tree());
    let (old_root, new_root) = (old_tree.root_node(), new_tree.root_node());
    let (old_stmts, new_stmts) = (code_children(old_root), code_children(new_root));
    if old_stmts.len() != new_stmts.len() {
        return false;
    }
    let touches =
        |n: &Node, start: usize, end: usize| n.start_byte() <= end && start <= n.end_byte();
    old_stmts.iter().zip(&new_stmts).all(|(a, b)| {
        let (in_old, in_new) = (
            touches(a, edit.start, edit.old_end),
            touches(b, edit.start, edit.new_end),
        );
        in_old == in_new && (!in_old || same_tokens(*a, &old.text, *b, &new.text))
    })
}

/// A node's children, comments left out. Read through `syntax::children`: the new tree of
/// one keystroke is the old tree of the next, whose top level is then read from the table.
fn code_children(n: Node) -> Vec<Node> {
    crate::syntax::children(n)
        .filter(|c| c.kind() != "comment")
        .collect()
}

/// Whether two subtrees have the same shape, kinds and token texts. A string literal is
/// compared whole: inside an f-string's `{x = }` the spaces are part of the value.
fn same_tokens(a: Node, a_text: &str, b: Node, b_text: &str) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((x, y)) = stack.pop() {
        if x.kind_id() != y.kind_id() || x.is_missing() != y.is_missing() {
            return false;
        }
        if is_unread_string(x) && is_unread_string(y) {
            continue;
        }
        if x.child_count() == 0 || x.kind() == "string" {
            if a_text.get(x.byte_range()) != b_text.get(y.byte_range()) {
                return false;
            }
            continue;
        }
        let (xs, ys) = (code_children(x), code_children(y));
        if xs.len() != ys.len() {
            return false;
        }
        stack.extend(xs.into_iter().zip(ys));
    }
    true
}

/// Whether `n` is a statement the evaluator runs without effect and reads nothing of: a
/// string literal without interpolations standing alone in a function's body. A function's
/// docstring is one (`f.__doc__` is unknown to the evaluator; a class's is read, so only
/// functions'), and so is text parked in a string in the middle of a body.
fn is_unread_string(n: Node) -> bool {
    if n.kind() != "expression_statement" {
        return false;
    }
    let code = code_children(n);
    let [string] = code.as_slice() else {
        return false;
    };
    string.kind() == "string"
        && !code_children(*string)
            .iter()
            .any(|part| part.kind() == "interpolation")
        && n.parent().is_some_and(|block| {
            block.kind() == "block"
                && block
                    .parent()
                    .is_some_and(|def| def.kind() == "function_definition")
        })
}

/// The function definition starting at `start`.
fn definition_at(tree: &Tree, start: usize) -> Option<Node<'_>> {
    let mut n = tree.root_node().descendant_for_byte_range(start, start)?;
    loop {
        if n.kind() == "function_definition" && n.start_byte() == start {
            return Some(n);
        }
        n = n.parent()?;
    }
}

/// Where the next code after a definition starts: its next sibling that is not a comment,
/// or its parent's, up to the end of the file.
fn next_code(def: Node) -> usize {
    let mut n = match def.parent() {
        Some(p) if p.kind() == "decorated_definition" => p,
        _ => def,
    };
    loop {
        let mut s = n.next_named_sibling();
        while let Some(sib) = s {
            if sib.kind() != "comment" {
                return sib.start_byte();
            }
            s = sib.next_named_sibling();
        }
        match n.parent() {
            Some(p) => n = p,
            None => return n.end_byte(),
        }
    }
}

/// Spans of the functions a module's top level defines: not inside another function or a
/// lambda.
fn units_of(tree: &Tree) -> Vec<Span> {
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "function_definition" => {
                out.push(Span::of(n));
                continue;
            }
            // A `def` is a statement: none stands inside an expression or a decorator, and
            // these hold most of a module's nodes outside functions (every keystroke walks
            // the new tree).
            "lambda"
            | "expression_statement"
            | "decorator"
            | "return_statement"
            | "import_statement"
            | "import_from_statement" => continue,
            _ => {}
        }
        let mut w = n.walk();
        stack.extend(n.named_children(&mut w));
    }
    out.sort_by_key(|s| s.start);
    out
}

/// Calls `f` on every (file, span) a graph holds, then returns the furthest offset in `live`
/// it refers to.
fn for_each_span(
    g: &mut GraphResult,
    live: FileId,
    mut f: impl FnMut(&mut FileId, &mut Span),
) -> usize {
    let mut reach = 0;
    let mut at = |file: &mut FileId, span: &mut Span| {
        f(file, span);
        if *file == live {
            reach = reach.max(span.end);
        }
    };
    let mut file = g.file;
    at(&mut file, &mut g.class_span);
    g.file = file;
    for n in g.graph.g.node_weights_mut() {
        for o in n.origin.iter_mut().chain(n.fused_from.iter_mut()) {
            at(&mut o.file, &mut o.span);
            for (cf, cs) in &mut o.call_chain {
                at(cf, cs);
            }
        }
    }
    for r in &mut g.regions {
        at(&mut r.file, &mut r.span);
        for (cf, cs) in &mut r.call_chain {
            at(cf, cs);
        }
    }
    for e in &mut g.events {
        at(&mut e.file, &mut e.span);
        for (cf, cs) in &mut e.call_chain {
            at(cf, cs);
        }
    }
    if let Some(d) = &mut g.error {
        at(&mut d.file, &mut d.span);
    }
    if let Some(d) = &mut g.build_failure {
        at(&mut d.file, &mut d.span);
    }
    for b in &mut g.bindings {
        let mut file = b.file;
        at(&mut file, &mut b.statement);
        at(&mut b.file, &mut b.target);
    }
    for c in &mut g.guard_changes {
        at(&mut c.file, &mut c.span);
        for (cf, cs) in &mut c.call_chain {
            at(cf, cs);
        }
    }
    for c in &mut g.state_guards {
        at(&mut c.file, &mut c.span);
        for (cf, cs) in &mut c.call_chain {
            at(cf, cs);
        }
    }
    for c in &mut g.argument_guards {
        at(&mut c.file, &mut c.span);
        for (cf, cs) in &mut c.call_chain {
            at(cf, cs);
        }
    }
    for b in g.breaks.iter_mut().chain(&mut g.flagged_breaks) {
        at(&mut b.file, &mut b.span);
        for (rf, rs, _) in &mut b.related {
            at(rf, rs);
        }
    }
    reach
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_every_function_outside_functions_and_lambdas() {
        // Every node walked: what `units_of` skips must hold no definition.
        fn every_unit(tree: &Tree) -> Vec<Span> {
            let mut out = Vec::new();
            let mut stack = vec![tree.root_node()];
            while let Some(n) = stack.pop() {
                match n.kind() {
                    "function_definition" => out.push(Span::of(n)),
                    "lambda" => {}
                    _ => stack.extend(n.named_children(&mut n.walk())),
                }
            }
            out.sort_by_key(|s| s.start);
            out
        }
        let mut units = 0;
        for (path, text) in crate::syntax::repository_python() {
            let tree = crate::syntax::parse(&text, None);
            let want = every_unit(&tree);
            assert_eq!(units_of(&tree), want, "{}", path.display());
            units += want.len();
        }
        assert!(units > 300, "{units} definitions");
    }

    #[test]
    fn edit_between_finds_the_changed_bytes() {
        let e = Edit::between("abcdef", "abXYef").unwrap();
        assert_eq!((e.start, e.old_end, e.new_end), (2, 4, 4));
        let e = Edit::between("abc", "abxc").unwrap();
        assert_eq!((e.start, e.old_end, e.new_end), (2, 2, 3));
        assert_eq!(e.pos(1), 1);
        assert_eq!(e.pos(2), 2);
        assert_eq!(e.pos(3), 4);
        // "c" starts where "x" was inserted: it moves, and a span ending there does not.
        let c = e.span(Span { start: 2, end: 3 });
        assert_eq!((c.start, c.end), (3, 4));
        let b = e.span(Span { start: 1, end: 2 });
        assert_eq!((b.start, b.end), (1, 2));
        assert!(Edit::between("same", "same").is_none());
    }

    #[test]
    fn edit_between_keeps_char_boundaries() {
        // "é" is two bytes that share their first byte with "è".
        let e = Edit::between("aéb", "aèb").unwrap();
        assert_eq!((e.start, e.old_end, e.new_end), (1, 3, 3));
    }

    #[test]
    fn slid_left_puts_an_added_line_after_the_one_before() {
        let (old, new) = ("import a\nimport c\n", "import a\nimport b\nimport c\n");
        let e = Edit::between(old, new).unwrap();
        assert_eq!((e.start, e.old_end, e.new_end), (16, 16, 25));
        let e = e.slid_left(old, new);
        assert_eq!((e.start, e.old_end, e.new_end), (8, 8, 17));
        assert_eq!(e.start_pos(9), 18, "`import c` starts after the new line");
        let back = Edit::between(new, old).unwrap().slid_left(new, old);
        assert_eq!((back.start, back.old_end, back.new_end), (8, 17, 8));
    }
}
