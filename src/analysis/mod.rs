//! The analysis API the front ends call: plain data in (paths, options), plain data out
//! (graphs, diagnostics with byte spans). No CLI or LSP types here.
//!
//! `analyze_file` / `analyze_in_project` → `FileAnalysis`; `parse_only` for files that cannot
//! define a module; `optimize`. `incremental.rs` is the keystroke path: a `Session` keeps the
//! interpreter; an edit that changes no token (whitespace, comments, a function's docstring) only
//! moves spans (early cutoff); an edit inside one function body re-traces only the classes whose
//! last analysis called it; a changed, added or removed top-level import or constant assignment, or
//! a changed top-level `def` signature (its defaults), runs again in the kept module (the new
//! function keeps its unit, redirected to the live text), and only the classes whose functions name
//! a name it bound differently are traced again (`top_level.rs` decides from the syntax what a
//! statement binds, mutates and reads; anything it cannot decide is a full analysis). Flagged
//! retraces a superseded version left pending run after the next update, on its text, and stop as
//! they run when the document changes again (`Interp::cancel`). `shared.rs` is the server's: a
//! `Library` is one module-reusing interpreter that the sessions of many documents run in one after
//! another (`Session::start_shared`, parked between analyses), retired after 32 documents or when a
//! file it read (or searched for a name) changed; after a session's start, and when its thread's
//! queue has been empty for 300 ms (not after each keystroke: freeing them held up its
//! diagnostics), it drops the trees of the files none of the process's last 4 analyses read
//! (`TREE_KEEPING_ANALYSES`: most modules are read only while imported). `warm.rs` is the batch
//! path: a `Warm` analyses file after file of one root in one interpreter, so the modules they all
//! import are evaluated once per thread (a reused module's steps are charged to each analysis that
//! reaches it; `tests/module_reuse.rs` compares with fresh analyses).

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub mod incremental;
pub mod shared;
pub mod top_level;
pub mod warm;

use crate::diagnostics::{codes, Diagnostic, Severity};
use crate::eval::trace::default_config::{convention_inputs, is_built_from_config};
use crate::eval::trace::root::{
    instantiate_per_class, is_traceable_module_class, trace_flagged, trace_root, trace_root_seeded,
    unannotated_required_params, Flag,
};
use crate::eval::value::{ModuleNs, Value};
use crate::eval::Interp;
use crate::graph::Graph;
use crate::passes::{cache, PassError, PassOptions, PassRecord, Pipeline};
use crate::phase_clock::{self, Phase};
use crate::semantic::{FileId, Project};
// The traced-result types live below the stages; re-exported for the front ends' convenience.
pub use crate::traced::{
    FileAnalysis, GraphResult, HyperValue, InputSpec, ModuleSummary, ParamSummary,
};

#[derive(Clone, Debug, Default)]
pub struct GraphOptions {
    pub root: Option<PathBuf>,
    pub class: Option<String>,
    pub entry: Option<String>,
    pub inputs: Vec<InputSpec>,
    /// Share parsed files with other analyses of the same run (batch checks).
    pub parse_cache: Option<crate::semantic::project::ParseCache>,
    /// Per-class forward inputs (the editor's `exampleInputs`), preferred over `inputs`.
    pub class_inputs: std::collections::HashMap<String, Vec<InputSpec>>,
    /// Wall-clock limit for the whole analysis of the file (batch runs over a corpus).
    pub time_limit: Option<std::time::Duration>,
    /// The Python environment imports outside the root resolve through (discovered the
    /// first time an import needs it); None resolves inside the root only.
    pub environment: Option<Arc<crate::semantic::EnvironmentHandle>>,
    /// The torch whose Dynamo the graph-break findings describe (ids and behaviours).
    pub torch_target: crate::breaks::version::Target,
    /// Evaluate every library method from its source, the ones `eval::native_methods` runs
    /// natively included: the fast paths must give the same graphs as the source, and tests
    /// compare the two.
    pub without_native_methods: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Entry(String),
    #[error("no class named `{0}` in the file")]
    NoSuchClass(String),
}

/// Analyses one file: one graph per module class (or the `--class` one), or the instantiated
/// `--entry` model.
pub fn analyze_file(path: &Path, opts: &GraphOptions) -> Result<FileAnalysis, AnalysisError> {
    let root = opts
        .root
        .clone()
        .unwrap_or_else(|| Project::default_root(path));
    let project = project_at(root, opts.parse_cache.as_ref(), opts.environment.as_ref());
    analyze_in_project(project, path, opts)
}

/// A project of `root` reading through `parse_cache` and resolving outside imports in
/// `environment`, when given.
pub(crate) fn project_at(
    root: PathBuf,
    parse_cache: Option<&crate::semantic::project::ParseCache>,
    environment: Option<&Arc<crate::semantic::EnvironmentHandle>>,
) -> Project {
    let mut project = Project::new(root);
    if let Some(cache) = parse_cache {
        project = project.with_parse_cache(cache.clone());
    }
    if let Some(env) = environment {
        project = project.with_environment(env.clone());
    }
    project
}

/// A file that is parsed but not evaluated (see `ide::may_define_module`): its syntax errors,
/// as a full analysis would note them, and no graphs.
pub fn parse_only(project: Project, path: &Path) -> Result<FileAnalysis, AnalysisError> {
    let file = project
        .load_path(path)
        .map_err(|source| AnalysisError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let diagnostics = project
        .file(file)
        .syntax_errors
        .iter()
        .map(|(span, message)| Diagnostic {
            code: codes::SYNTAX_ERROR,
            message: message.clone(),
            severity: Severity::Error,
            file,
            span: *span,
        })
        .collect();
    Ok(FileAnalysis {
        project: Arc::new(project),
        file,
        graphs: vec![],
        diagnostics,
    })
}

pub fn analyze_in_project(
    project: Project,
    path: &Path,
    opts: &GraphOptions,
) -> Result<FileAnalysis, AnalysisError> {
    let file = project
        .load_path(path)
        .map_err(|source| AnalysisError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let project = Arc::new(project);
    let (graphs, diagnostics) = {
        let mut interp = Interp::new(project.clone());
        interp.limits.deadline = opts.time_limit.map(|d| std::time::Instant::now() + d);
        if opts.without_native_methods {
            interp.native_methods = std::borrow::Cow::Borrowed(&[]);
        }
        let mut graphs = run(&mut interp, file, opts)?;
        for g in graphs.iter_mut() {
            g.breaks = crate::breaks::annotate(&project, g, &opts.torch_target);
        }
        (graphs, std::mem::take(&mut interp.diagnostics))
    };
    Ok(FileAnalysis {
        project,
        file,
        graphs: graphs.into_iter().map(Arc::new).collect(),
        diagnostics,
    })
}

fn run(
    interp: &mut Interp,
    file: FileId,
    opts: &GraphOptions,
) -> Result<Vec<GraphResult>, AnalysisError> {
    let ns = match interp.load_module(file) {
        Ok(ns) => ns,
        Err(e) => return Err(AnalysisError::Entry(e.message)),
    };
    if let Some(entry) = &opts.entry {
        let value = interp.eval_in_module(file, entry).map_err(|e| {
            AnalysisError::Entry(format!("cannot evaluate `{entry}`: {}", e.message))
        })?;
        let Value::Object(obj) = &value else {
            let got = match &value {
                Value::Unknown(u) => format!("an unknown value: {}", u.reason),
                v @ (Value::None
                | Value::Bool(_)
                | Value::Int(_)
                | Value::Float(_)
                | Value::Str(_)
                | Value::Tuple(_)
                | Value::List(_)) => format!("{} {v:?}", v.type_name()),
                v => v.type_name(),
            };
            if std::env::var_os("STATICFX_DEBUG_DIAGNOSTICS").is_some() {
                dump_diagnostics(interp);
            }
            return Err(AnalysisError::Entry(format!(
                "`{entry}` does not evaluate to a module (got {got})"
            )));
        };
        if !obj.is_module() {
            return Err(AnalysisError::Entry(format!(
                "`{entry}` is a `{}`, not an nn.Module",
                obj.class_name()
            )));
        }
        if let Some(incomplete) = obj.get("__incomplete__") {
            if std::env::var_os("STATICFX_DEBUG_DIAGNOSTICS").is_some() {
                dump_diagnostics(interp);
            }
            let why = match incomplete {
                Value::Str(why) => why.to_string(),
                _ => String::new(),
            };
            return Err(AnalysisError::Entry(format!(
                "constructing `{entry}` failed: {why}"
            )));
        }
        let class = obj.class_name();
        let mut g = trace_root(interp, &value, &opts.inputs);
        // A Python input that cannot be evaluated is the user's mistake, as a bad entry is,
        // not something the analyser could not follow.
        if let Some(e) = g.error.as_ref().filter(|e| e.code == codes::ENTRY) {
            return Err(AnalysisError::Entry(e.message.clone()));
        }
        g.entry = Some(entry.clone());
        g.name = format!("{class}.forward");
        g.file = file;
        own_unplaced_error(&mut g, file);
        return Ok(vec![g]);
    }
    let file_ref = interp.project.file(file);
    let sites = crate::syntax::queries::top_level_class_sites(&file_ref.tree(), &file_ref.text);
    let mut out = Vec::new();
    let mut retraces = Vec::new();
    let mut traced_sites = Vec::new();
    let mut seeded = Vec::new();
    let mut found_requested = false;
    interp.caller_kinds.begin_file(file);
    // what each class's analysis ran and met, to tell the limits met only without its callers
    let mut sites_of: Vec<crate::eval::Sites> = Vec::new();
    for site in &sites {
        if let Some(want) = &opts.class {
            if &site.name != want {
                continue;
            }
            found_requested = true;
        }
        let seeds = caller_seeds(interp, &ns, site);
        interp.sites = Some(Default::default());
        let traced = trace_class(interp, file, &ns, site, opts);
        let ran = interp.sites.take().unwrap_or_default();
        if let Some((g, retrace)) = traced {
            out.push(g);
            retraces.push(retrace);
            traced_sites.push(site);
            seeded.push(seeds);
            sites_of.push(ran);
        }
    }
    if let (Some(want), false) = (&opts.class, found_requested) {
        return Err(AnalysisError::NoSuchClass(want.clone()));
    }
    trace_again_for_callers(
        interp,
        &mut seeded,
        |interp, i| caller_seeds(interp, &ns, traced_sites[i]),
        |interp, i| {
            interp.sites = Some(Default::default());
            let traced = trace_class(interp, file, &ns, traced_sites[i], opts);
            let ran = interp.sites.take().unwrap_or_default();
            if let Some((g, retrace)) = traced {
                out[i] = g;
                retraces[i] = retrace;
                sites_of[i] = ran;
            }
        },
    );
    // Every default trace first, then the flagged retraces, in the order the editor's
    // session runs them (it publishes the default traces' findings before the retraces).
    for ((g, retrace), sites) in out.iter_mut().zip(&retraces).zip(sites_of.iter_mut()) {
        if let Some(retrace) = retrace {
            interp.sites = Some(std::mem::take(sites));
            g.flagged_breaks = flagged_findings(interp, retrace, opts);
            *sites = interp.sites.take().unwrap_or_default();
        }
    }
    interp
        .diagnostics
        .retain(|d| !followed_elsewhere(d, &sites_of));
    for g in out.iter_mut() {
        g.error_followed_elsewhere = error_followed_elsewhere(g, &sites_of);
    }
    Ok(out)
}

/// Whether the statement `g`'s trace stopped on ran without stopping in another class's
/// analysis of the file (`followed_elsewhere`): `Block.forward` alone gets None for its
/// optional `timestep` and stops at `timestep.reshape(...)`, while `Model`, which calls every
/// block with a tensor there, runs that line.
pub(crate) fn error_followed_elsewhere(g: &GraphResult, runs: &[crate::eval::Sites]) -> bool {
    g.error
        .as_ref()
        .is_some_and(|e| followed_elsewhere(e, runs))
}

/// Whether limit `d` is met only by the per-class analyses that build its class on their own
/// (with unknown constructor arguments and inputs), while another class of the file, which
/// builds or calls that code with the values it really gets, ran the same statement and met
/// no limit there: `Block(dim, depth)` looping `range(depth)` is followed inside `Model`,
/// which builds `Block(64, 2)`. The limit then says only that `Block` alone is unknown, which
/// its graph already shows (its output and shapes unknown, never wrong); the code itself was
/// followed, in the graph that matters. `runs` holds what each class's analysis ran and
/// noted; the statement compared is the innermost one any of them ran around `d`.
pub(crate) fn followed_elsewhere(d: &Diagnostic, runs: &[crate::eval::Sites]) -> bool {
    if !d.code.starts_with("FX9") || d.code == codes::SYNTAX_ERROR || d.code == codes::BUDGET {
        return false;
    }
    let key = (d.file, d.span, d.code);
    let statement = runs
        .iter()
        .flat_map(|r| r.ran.iter())
        .filter(|(f, s)| *f == d.file && s.start <= d.span.start && d.span.end <= s.end)
        .min_by_key(|(_, s)| s.end - s.start);
    let Some(statement) = statement else {
        return false;
    };
    runs.iter()
        .any(|r| r.ran.contains(statement) && !r.noted.contains(&key))
}

/// What the flagged retraces of one class need: the instance its default trace built.
pub(crate) struct Retrace {
    root: Value,
    inputs: Vec<InputSpec>,
    seeds: Vec<(String, crate::shapes::Meta)>,
}

/// Per-class mode for one class of the module `ns` of `file`: its default trace, and for a
/// module built from a config what [`flagged_findings`] retraces. None when the name is not a
/// module class with something to trace.
pub(crate) fn trace_class(
    interp: &mut Interp,
    file: FileId,
    ns: &ModuleNs,
    site: &crate::syntax::queries::ClassSite,
    opts: &GraphOptions,
) -> Option<(GraphResult, Option<Retrace>)> {
    let class = ns.vars.borrow().get(&site.name).cloned();
    let Some(class @ Value::Class(_)) = class else {
        return None;
    };
    if !is_traceable_module_class(interp, &class) {
        return None;
    }
    let noted_before = interp.diagnostics.len();
    let (value, given_config) = {
        let _clock = phase_clock::enter(Phase::Construction);
        instantiate_per_class(interp, file, &class, site.span)
    };
    let build_failure = build_failure(interp, noted_before, &value, file, site);
    let inputs = opts.class_inputs.get(&site.name).unwrap_or(&opts.inputs);
    let mut seeds: Vec<_> = convention_inputs(&value, given_config.as_ref())
        .into_iter()
        .filter(|(name, _)| inputs.iter().all(|i| &i.name != name))
        .collect();
    for (name, meta) in caller_seeds(interp, ns, site) {
        if inputs.iter().all(|i| i.name != name) && seeds.iter().all(|(n, _)| *n != name) {
            seeds.push((name, meta));
        }
    }
    interp
        .caller_kinds
        .set_scope(Some((file, qualname_of(&class))));
    let mut g = {
        let _clock = phase_clock::enter(Phase::Tracing);
        trace_root_seeded(interp, &value, inputs, &seeds)
    };
    interp.caller_kinds.set_scope(None);
    g.name = format!("{}.forward", site.name);
    g.class = site.name.clone();
    g.file = file;
    g.class_span = site.span;
    g.build_failure = build_failure;
    // A constructor that raised leaves no instance whose forward could be traced; the build
    // failure, or the limit noted where it raised in this file, already says why.
    let own_path = format!("({}:", interp.project.file(file).path.display());
    let said_why = g.build_failure.is_some()
        || matches!(&value, Value::Unknown(u) if u.reason.contains(&own_path))
        || interp.diagnostics[noted_before.min(interp.diagnostics.len())..]
            .iter()
            .any(|d| d.file == file);
    if !matches!(value, Value::Object(_)) && said_why {
        g.error = None;
    }
    own_unplaced_error(&mut g, file);
    let retrace = is_built_from_config(&value).then(|| Retrace {
        root: value,
        inputs: inputs.clone(),
        seeds,
    });
    Some((g, retrace))
}

/// Traces class `i` again (`trace`) when what the file's callers say of its arguments
/// (`seeds_now`) is no longer what its last trace had (`seeded[i]`): a class traced before its
/// callers is traced again with their arguments, which may tell the classes it calls more in
/// turn, for at most [`MAX_CALLER_ROUNDS`] rounds.
pub(crate) fn trace_again_for_callers<S: ?Sized>(
    state: &mut S,
    seeded: &mut [Vec<(String, crate::shapes::Meta)>],
    seeds_now: impl Fn(&S, usize) -> Vec<(String, crate::shapes::Meta)>,
    mut trace: impl FnMut(&mut S, usize),
) {
    for _ in 0..MAX_CALLER_ROUNDS {
        let mut again = false;
        for i in 0..seeded.len() {
            let now = seeds_now(state, i);
            if now == seeded[i] {
                continue;
            }
            seeded[i] = now;
            again = true;
            trace(state, i);
        }
        if !again {
            break;
        }
    }
}

/// How many times the classes whose callers told more about their arguments are traced
/// again (a chain of classes each passing its arguments on needs one round per link it
/// was traced before; three covers model → encoder → stage → layer).
pub(crate) const MAX_CALLER_ROUNDS: usize = 3;

fn qualname_of(class: &Value) -> String {
    match class {
        Value::Class(c) => c.qualname.clone(),
        _ => String::new(),
    }
}

/// What the file's own callers say `site`'s class's unannotated forward arguments are
/// (`eval::trace::caller_kinds`), by name.
pub(crate) fn caller_seeds(
    interp: &Interp,
    ns: &ModuleNs,
    site: &crate::syntax::queries::ClassSite,
) -> Vec<(String, crate::shapes::Meta)> {
    let Some(class @ Value::Class(_)) = ns.vars.borrow().get(&site.name).cloned() else {
        return vec![];
    };
    unannotated_required_params(interp, &class)
        .into_iter()
        .filter_map(|name| interp.caller_kind(&class, &name).map(|m| (name, m)))
        .collect()
}

/// Why `site`'s class was not (fully) built, as a limit on its name: what `__init__` raised or
/// could not follow, with the place, which is often in a library the user never opened (a
/// transformers 4.x `PreTrainedModel` stopping in modeling_utils.py). Without it a file
/// whose every class failed to build would read as clean.
fn build_failure(
    interp: &Interp,
    noted_before: usize,
    value: &Value,
    file: FileId,
    site: &crate::syntax::queries::ClassSite,
) -> Option<Diagnostic> {
    // A cause in the analysed file is reported where it lies, as every limit is; the class's
    // own report is for causes the user would otherwise not see.
    let own_path = format!("({}:", interp.project.file(file).path.display());
    if interp.diagnostics[noted_before.min(interp.diagnostics.len())..]
        .iter()
        .any(|d| d.file == file)
    {
        return None;
    }
    let why = match value {
        Value::Object(o) => match o.get("__incomplete__")? {
            Value::Str(why) if why.contains(&own_path) => return None,
            Value::Str(why) => why.to_string(),
            _ => "its constructor did not finish".to_string(),
        },
        // What a constructor raised, with its place (`instantiate_per_class`); by path, as an
        // editor session runs an edited function from the document's newer text (another id).
        Value::Unknown(u) if u.reason.contains(&own_path) => return None,
        Value::Unknown(u) => match interp.diagnostics.get(noted_before) {
            Some(first) => interp.describe_at(&first.message, first.file, first.span),
            None => u.reason.clone(),
        },
        _ => return None,
    };
    Some(Diagnostic {
        code: codes::BUILD,
        message: format!("could not build `{}`: {why}", site.name),
        severity: Severity::Info,
        file,
        span: site.name_span,
    })
}

/// The breaks a class's forward reaches only under a config flag (gradient checkpointing in
/// training, `output_attentions=True`), each message naming its condition: the graph's
/// `flagged_breaks`, which `breaks::annotate` merges with the default trace's.
pub(crate) fn flagged_findings(
    interp: &mut Interp,
    retrace: &Retrace,
    opts: &GraphOptions,
) -> Vec<crate::breaks::Finding> {
    let _clock = phase_clock::enter(Phase::FlaggedRetraces);
    let mut out = Vec::new();
    for flag in Flag::ALL {
        let flagged = trace_flagged(interp, &retrace.root, &retrace.inputs, &retrace.seeds, flag);
        if interp.is_cancelled() {
            // the caller drops what a cancelled retrace found: annotating it is wasted
            break;
        }
        let Some(flagged) = flagged else {
            continue;
        };
        for mut f in crate::breaks::annotate(&interp.project, &flagged, &opts.torch_target) {
            // the retrace's nodes and regions are not the graph's
            f.node = None;
            f.region = None;
            f.impact_nodes = 0;
            f.message = format!("{} (only {})", f.message, flag.condition());
            out.push(f);
        }
    }
    out
}

/// A trace that could not start (the module was not constructed) reports its error at the
/// start of no file in particular (file 0, an empty span): it is the analysed file's. File 0
/// used to be the analysed file by accident of load order, which an interpreter that
/// analysed other files first (`warm`) does not share.
fn own_unplaced_error(g: &mut GraphResult, file: FileId) {
    if let Some(e) = &mut g.error {
        if e.file == 0 && e.span == crate::syntax::Span::default() {
            e.file = file;
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct OptimizeOptions {
    pub passes: PassOptions,
    /// `--no-passes`: keep the traced graph (with an empty pass log) for debugging.
    pub no_passes: bool,
    /// Where optimized graphs are cached; None disables the cache.
    pub cache_dir: Option<PathBuf>,
}

/// The default cache directory for a project: `.staticfx-cache` under its root.
pub fn default_cache_dir(project: &Project) -> PathBuf {
    project.root.join(".staticfx-cache")
}

/// Runs the pass pipeline over every graph of an analysis, through the cache when enabled.
pub fn optimize(
    a: &mut FileAnalysis,
    gopts: &GraphOptions,
    o: &OptimizeOptions,
) -> Result<(), PassError> {
    let files = a.project.files();
    let texts: Vec<(String, &str)> = files
        .iter()
        .map(|f| (f.path.display().to_string(), &*f.text))
        .collect();
    let inputs: Vec<String> = gopts.inputs.iter().map(|i| format!("{i:?}")).collect();
    let store = o.cache_dir.as_ref().map(cache::GraphCache::new);
    for r in a.graphs.iter_mut() {
        let r = Arc::make_mut(r);
        if o.no_passes {
            r.passes = Some(vec![]);
            continue;
        }
        let key = cache::key(&cache::KeyParts {
            files: texts.clone(),
            entry: gopts.entry.as_deref(),
            graph: &r.name,
            inputs: inputs.clone(),
            inference: o.passes.inference,
            disabled: o.passes.disabled.clone(),
        });
        let cause_names: Vec<String> = r
            .regions
            .iter()
            .map(|reg| r.graph.node(reg.cause).name.clone())
            .collect();
        let hit = store
            .as_ref()
            .and_then(|c| c.load(&key))
            .filter(|(g, _)| cause_names.iter().all(|n| g.by_name(n).is_some()));
        let (graph, log, from_cache) = match hit {
            Some((g, log)) => (g, log, true),
            None => {
                let mut g = std::mem::take(&mut r.graph);
                let log = Pipeline::new(&o.passes).run(&mut g)?;
                if let Some(c) = &store {
                    // A cache that cannot be written only costs time next run.
                    let _ = c.store(&key, &g, &log);
                }
                (g, log, false)
            }
        };
        install_optimized(r, graph, log, &cause_names);
        r.from_cache = from_cache;
    }
    Ok(())
}

/// Runs the pass pipeline over one traced graph (the editor's "show optimized graph").
pub fn optimize_graph(r: &mut GraphResult, passes: &PassOptions) -> Result<(), PassError> {
    let cause_names: Vec<String> = r
        .regions
        .iter()
        .map(|reg| r.graph.node(reg.cause).name.clone())
        .collect();
    let mut g = std::mem::take(&mut r.graph);
    let log = Pipeline::new(passes).run(&mut g)?;
    install_optimized(r, g, log, &cause_names);
    Ok(())
}

/// Regions keep pointing at their cause nodes, found again by name in the rewritten graph.
fn install_optimized(r: &mut GraphResult, graph: Graph, log: Vec<PassRecord>, causes: &[String]) {
    r.graph = graph;
    for (reg, name) in r.regions.iter_mut().zip(causes) {
        if let Some(id) = r.graph.by_name(name) {
            reg.cause = id;
        }
    }
    r.passes = Some(log);
}

/// Every analysis limit recorded so far, on stderr (`STATICFX_DEBUG_DIAGNOSTICS`): what a
/// failed entry went through before it failed.
fn dump_diagnostics(interp: &Interp) {
    for d in &interp.diagnostics {
        let f = interp.project.file(d.file);
        let line = f.lines.line_of(d.span.start) + 1;
        eprintln!("{}:{line}: {} {}", f.path.display(), d.code, d.message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry whose constructor skipped a statement names that statement, not the last
    /// warning any module it imported happened to note.
    #[test]
    fn a_failed_construction_names_the_statement_it_skipped() {
        let text = "import torch\nfrom torch import nn\n\n\ndef width(cfg):\n    w = undefined_helper(cfg)\n    return 4\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(width(1), 4)\n\n    def forward(self, x):\n        return self.fc(x)\n\n\nlater = {}[0]\n";
        let mut project = Project::new("/virtual");
        project.add_overlay("/virtual/m.py", Arc::from(text), None);
        let opts = GraphOptions {
            entry: Some("M()".into()),
            ..Default::default()
        };
        let err = analyze_in_project(project, Path::new("/virtual/m.py"), &opts)
            .err()
            .expect("a construction that skipped a statement fails");
        let message = err.to_string();
        assert!(
            message.contains("undefined_helper") && message.contains("m.py:6"),
            "{message}"
        );
    }
}
