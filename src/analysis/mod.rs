//! The analysis API the front ends call: plain data in (paths, options), plain data out
//! (graphs, diagnostics with byte spans). No CLI or LSP types here.

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

pub mod incremental;

use crate::diagnostics::{codes, Diagnostic, Severity};
use crate::eval::trace::{default_input_meta, Region, TraceEvent};
use crate::eval::value::{FnKind, ModuleNs, ObjKind, Value};
use crate::eval::{EvalError, Frame, Interp, Tracer};
use crate::graph::{Arg, Graph, Op};
use crate::passes::{cache, PassError, PassOptions, PassRecord, Pipeline};
use crate::semantic::{FileId, Project};
use crate::shapes::{shape_of, DType, Meta};
use crate::syntax::Span;

/// A forward input given by the user: `x=1x3x224x224[:i64]`.
#[derive(Clone, Debug, PartialEq)]
pub struct InputSpec {
    pub name: String,
    pub shape: Vec<i64>,
    pub dtype: DType,
}

impl std::str::FromStr for InputSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, rest) = s
            .split_once('=')
            .ok_or_else(|| format!("expected NAME=SHAPE[:DTYPE], got `{s}`"))?;
        let (shape, dtype) = match rest.split_once(':') {
            Some((sh, dt)) => (
                sh,
                DType::parse(dt).ok_or_else(|| format!("unknown dtype `{dt}`"))?,
            ),
            None => (rest, DType::Float32),
        };
        let dims: Result<Vec<i64>, _> = if shape.is_empty() {
            Ok(vec![])
        } else {
            shape
                .split(['x', 'X', ','])
                .map(|d| d.trim().parse::<i64>())
                .collect()
        };
        let dims = dims.map_err(|_| format!("bad shape `{shape}` (expected e.g. 1x3x224x224)"))?;
        if name.is_empty() {
            return Err("empty input name".into());
        }
        Ok(InputSpec {
            name: name.to_string(),
            shape: dims,
            dtype,
        })
    }
}

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
}

/// One traced forward.
#[derive(Clone, Debug)]
pub struct GraphResult {
    /// `SimpleNet.forward`
    pub name: String,
    pub class: String,
    pub entry: Option<String>,
    pub file: FileId,
    /// The class definition's span (per-class mode) in `file`.
    pub class_span: Span,
    pub graph: Graph,
    pub regions: Vec<Region>,
    pub events: Vec<TraceEvent>,
    /// Where Dynamo would break this graph (GraphBreakAnnotationPass), in source order.
    pub breaks: Vec<crate::breaks::Finding>,
    /// Set when tracing stopped early; the graph holds what was traced until then.
    pub error: Option<Diagnostic>,
    /// The constructed module tree, root first (hover on `self.x = nn.Linear(...)` reads it).
    pub modules: Vec<ModuleSummary>,
    /// The pass log once `optimize` ran (empty with `--no-passes`); None for the traced graph.
    pub passes: Option<Vec<PassRecord>>,
    /// Whether the optimized graph came from the cache.
    pub from_cache: bool,
}

/// One module of the constructed tree, by qualified path (`""` is the root, `layer1.0.conv1`).
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleSummary {
    pub path: String,
    pub class: String,
    /// Direct parameters and buffers, in registration order.
    pub params: Vec<ParamSummary>,
    /// Names of direct child modules.
    pub children: Vec<String>,
    /// A leaf module's constructor arguments and catalogue attributes (`kernel_size`,
    /// `stride`, `eps`, …) as plain constants; empty for user modules and containers.
    pub hyper: Vec<(String, HyperValue)>,
    /// A torch.nn leaf (`call_module` target) rather than a user module or container.
    pub leaf: bool,
}

/// A hyperparameter of a leaf module, as far as constructor evaluation determined it.
#[derive(Clone, Debug, PartialEq)]
pub enum HyperValue {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<HyperValue>),
    /// Not a plain constant (or not known statically).
    Other(String),
}

impl HyperValue {
    fn of(v: &Value) -> HyperValue {
        match v {
            Value::None => HyperValue::None,
            Value::Bool(b) => HyperValue::Bool(*b),
            Value::Int(i) => HyperValue::Int(*i),
            Value::Float(x) => HyperValue::Float(*x),
            Value::Str(s) => HyperValue::Str(s.to_string()),
            Value::Tuple(t) => HyperValue::Seq(t.iter().map(HyperValue::of).collect()),
            Value::List(l) => HyperValue::Seq(l.borrow().iter().map(HyperValue::of).collect()),
            other => HyperValue::Other(other.type_name().to_string()),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParamSummary {
    pub name: String,
    pub shape: Option<Vec<i64>>,
    pub dtype: DType,
    pub buffer: bool,
}

fn module_tree(root: &Rc<crate::eval::value::Object>) -> Vec<ModuleSummary> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![(root.clone(), String::new())];
    while let Some((obj, path)) = stack.pop() {
        // Shared submodules appear once, under their first path, as in named_modules().
        if !seen.insert(obj.id) {
            continue;
        }
        let params = obj
            .attrs
            .borrow()
            .iter()
            .filter_map(|(k, v)| match v {
                Value::Param(p) => Some(ParamSummary {
                    name: k.clone(),
                    shape: p.shape.clone(),
                    dtype: p.dtype,
                    buffer: p.is_buffer,
                }),
                _ => None,
            })
            .collect();
        let children = obj.children();
        let class = match &obj.kind {
            ObjKind::Leaf(c) => c.clone(),
            _ => obj.class_name(),
        };
        let hyper = match &obj.kind {
            ObjKind::Leaf(_) => obj
                .attrs
                .borrow()
                .iter()
                .filter(|(_, v)| !matches!(v, Value::Param(_) | Value::Object(_)))
                .map(|(k, v)| (k.clone(), HyperValue::of(v)))
                .collect(),
            _ => Vec::new(),
        };
        out.push(ModuleSummary {
            path: path.clone(),
            class,
            params,
            children: children.iter().map(|(n, _)| n.clone()).collect(),
            hyper,
            leaf: matches!(obj.kind, ObjKind::Leaf(_)),
        });
        for (name, child) in children.into_iter().rev() {
            let p = if path.is_empty() {
                name
            } else {
                format!("{path}.{name}")
            };
            stack.push((child, p));
        }
    }
    out
}

#[derive(Debug)]
pub struct FileAnalysis {
    pub project: Arc<Project>,
    pub file: FileId,
    /// Shared: the language server's session keeps the graphs of classes an edit did not
    /// touch, and hands the same ones out again.
    pub graphs: Vec<Arc<GraphResult>>,
    pub diagnostics: Vec<Diagnostic>,
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

fn diag_of(e: &EvalError) -> Diagnostic {
    let severity = if e.code == codes::SYNTAX_ERROR {
        Severity::Error
    } else {
        Severity::Warning
    };
    Diagnostic {
        code: e.code,
        message: e.message.clone(),
        severity,
        file: e.file,
        span: e.span,
    }
}

/// Analyses one file: one graph per module class (or the `--class` one), or the instantiated
/// `--entry` model.
pub fn analyze_file(path: &Path, opts: &GraphOptions) -> Result<FileAnalysis, AnalysisError> {
    let root = opts
        .root
        .clone()
        .unwrap_or_else(|| Project::default_root(path));
    let mut project = Project::new(root);
    if let Some(cache) = &opts.parse_cache {
        project = project.with_parse_cache(cache.clone());
    }
    analyze_in_project(project, path, opts)
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
        let mut graphs = run(&mut interp, file, opts)?;
        for g in graphs.iter_mut() {
            g.breaks = crate::breaks::annotate(&project, g);
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
            return Err(AnalysisError::Entry(format!(
                "`{entry}` does not evaluate to a module (got {})",
                value.type_name()
            )));
        };
        if !obj.is_module() {
            return Err(AnalysisError::Entry(format!(
                "`{entry}` is a `{}`, not an nn.Module",
                obj.class_name()
            )));
        }
        if let Some(incomplete) = obj.get("__incomplete__") {
            let _ = incomplete;
            let why = interp
                .diagnostics
                .iter()
                .rev()
                .find(|d| d.severity <= Severity::Warning)
                .map(|d| d.message.clone())
                .unwrap_or_default();
            return Err(AnalysisError::Entry(format!(
                "constructing `{entry}` failed: {why}"
            )));
        }
        let class = obj.class_name();
        let mut g = trace_root(interp, &value, &opts.inputs);
        g.entry = Some(entry.clone());
        g.name = format!("{class}.forward");
        g.file = file;
        return Ok(vec![g]);
    }
    let file_ref = interp.project.file(file);
    let sites = crate::syntax::queries::top_level_class_sites(&file_ref.tree, &file_ref.text);
    let mut out = Vec::new();
    let mut found_requested = false;
    for site in &sites {
        if let Some(want) = &opts.class {
            if &site.name != want {
                continue;
            }
            found_requested = true;
        }
        out.extend(trace_class(interp, file, &ns, site, opts));
    }
    if let (Some(want), false) = (&opts.class, found_requested) {
        return Err(AnalysisError::NoSuchClass(want.clone()));
    }
    Ok(out)
}

/// Per-class mode for one class of the module `ns` of `file`: None when the name is not a
/// module class with something to trace.
pub(crate) fn trace_class(
    interp: &mut Interp,
    file: FileId,
    ns: &ModuleNs,
    site: &crate::syntax::queries::ClassSite,
    opts: &GraphOptions,
) -> Option<GraphResult> {
    let class = ns.vars.borrow().get(&site.name).cloned();
    let Some(class @ Value::Class(_)) = class else {
        return None;
    };
    if !is_traceable_module_class(interp, &class) {
        return None;
    }
    let value = instantiate_per_class(interp, file, &class, site.span);
    let inputs = opts.class_inputs.get(&site.name).unwrap_or(&opts.inputs);
    let mut g = trace_root(interp, &value, inputs);
    g.name = format!("{}.forward", site.name);
    g.class = site.name.clone();
    g.file = file;
    g.class_span = site.span;
    Some(g)
}

/// Module classes with something to trace: an own or inherited `forward`, or Sequential.
fn is_traceable_module_class(interp: &Interp, class: &Value) -> bool {
    let Value::Class(c) = class else { return false };
    let mro = c.mro.borrow().clone();
    let is_module = mro.iter().any(|m| matches!(m, Value::External(p) if p.starts_with("torch.nn") || p.starts_with("torch.ao.nn")));
    if !is_module {
        return false;
    }
    let has_forward = interp.class_lookup(class, "forward").is_some();
    let sequential = mro
        .iter()
        .any(|m| matches!(m, Value::External(p) if p.ends_with(".Sequential")));
    has_forward || sequential
}

/// Per-class mode: required constructor arguments are unknown, defaults are used.
fn instantiate_per_class(interp: &mut Interp, file: FileId, class: &Value, span: Span) -> Value {
    let mut kwargs = Vec::new();
    if let Some(Value::Function(init)) = interp.class_lookup(class, "__init__") {
        for p in init.params.iter().skip(1) {
            use crate::catalog::ParamKind::*;
            if p.default.is_none() && matches!(p.kind, PositionalOrKeyword | KeywordOnly) {
                kwargs.push((
                    p.name.clone(),
                    Value::unknown(format!("constructor argument `{}`", p.name)),
                ));
            }
        }
    }
    let f = interp.project.file(file);
    let ns = interp.load_module(file).expect("loaded");
    let frame = Frame {
        file: f,
        file_id: file,
        globals: ns,
        locals: None,
        class: None,
        receiver: None,
    };
    match interp.instantiate(&frame, class, vec![], kwargs, span) {
        Ok(v) => v,
        Err(e) => {
            interp.note_error(&e);
            Value::unknown(e.message)
        }
    }
}

/// Traces `root.forward` with placeholders for its inputs. Inputs without a given shape get a
/// symbolic one (`[s0, 784]`) when the first layer that reads them fixes their rank, provided
/// tracing with that shape records exactly the same graph (otherwise the shape stays unknown).
pub fn trace_root(interp: &mut Interp, root: &Value, inputs: &[InputSpec]) -> GraphResult {
    // A forward may assign to its module (`self.cache = x`); the retrace with symbolic shapes
    // must start from the constructed state, not from proxies of the first trace's graph.
    let before = attribute_snapshot(root);
    let result = trace_root_twice(interp, root, inputs, &before);
    restore_attributes(&before);
    result
}

/// Every module's attributes, and the contents of the dicts and lists they hold (a forward
/// may fill a cache in place: timm's `attention_bias_cache[str(device)] = …`).
type AttributeSnapshot = (
    Vec<(
        Rc<crate::eval::value::Object>,
        indexmap::IndexMap<String, Value>,
    )>,
    Vec<(Value, Value)>,
);

fn attribute_snapshot(root: &Value) -> AttributeSnapshot {
    let Value::Object(root) = root else {
        return (vec![], vec![]);
    };
    let mut out = Vec::new();
    let mut containers = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root.clone()];
    while let Some(obj) = stack.pop() {
        if !seen.insert(obj.id) {
            continue;
        }
        let attrs = obj.attrs.borrow().clone();
        for v in attrs.values() {
            match v {
                Value::Dict(d) => containers.push((
                    v.clone(),
                    Value::Dict(Rc::new(std::cell::RefCell::new(d.borrow().clone()))),
                )),
                Value::List(l) => containers.push((v.clone(), Value::list(l.borrow().clone()))),
                _ => {}
            }
        }
        out.push((obj.clone(), attrs));
        stack.extend(obj.children().into_iter().map(|(_, c)| c));
    }
    (out, containers)
}

fn restore_attributes(snapshot: &AttributeSnapshot) {
    for (obj, attrs) in &snapshot.0 {
        *obj.attrs.borrow_mut() = attrs.clone();
    }
    for (live, saved) in &snapshot.1 {
        match (live, saved) {
            (Value::Dict(l), Value::Dict(s)) => *l.borrow_mut() = s.borrow().clone(),
            (Value::List(l), Value::List(s)) => *l.borrow_mut() = s.borrow().clone(),
            _ => {}
        }
    }
}

fn trace_root_twice(
    interp: &mut Interp,
    root: &Value,
    inputs: &[InputSpec],
    before: &AttributeSnapshot,
) -> GraphResult {
    let (first, hints) = trace_root_with(interp, root, inputs, &[]);
    if first.error.is_some() || hints.is_empty() {
        return first;
    }
    // First the smallest rank each hint allows, then one more leading (sequence) dim.
    for extra in 0..2usize {
        if extra > 0 && !hints.iter().any(|(_, h)| h.grow) {
            break;
        }
        let mut next_sym = 0u32;
        let mut sym_inputs = Vec::new();
        for (id, h) in &hints {
            let extra = if h.grow { extra } else { 0 };
            let name = first.graph.node(*id).name.clone();
            let dims = (0..h.rank + extra)
                .map(|i| {
                    let pos = if extra > 0 && i >= 1 {
                        i.checked_sub(extra).filter(|&p| p >= 1)
                    } else {
                        Some(i)
                    };
                    match pos.and_then(|p| h.known.iter().find(|(d, _)| *d == p)) {
                        Some((_, v)) => crate::shapes::Dim::Known(*v),
                        None => {
                            next_sym += 1;
                            crate::shapes::Dim::Sym(crate::shapes::Expr::sym(next_sym - 1))
                        }
                    }
                })
                .collect();
            sym_inputs.push((
                name,
                Meta::tensor(Some(dims), h.dtype.unwrap_or(DType::Float32)),
            ));
        }
        let diagnostics = interp.diagnostics.len();
        restore_attributes(before);
        let (second, _) = trace_root_with(interp, root, inputs, &sym_inputs);
        interp.diagnostics.truncate(diagnostics);
        if second.error.is_none() && same_structure(&first, &second) {
            return second;
        }
    }
    first
}

/// Same nodes, arguments and graph breaks: only the shapes may differ.
fn same_structure(a: &GraphResult, b: &GraphResult) -> bool {
    use crate::render::arg_text;
    let sig = |r: &GraphResult| -> Vec<String> {
        r.graph
            .nodes()
            .map(|(_, n)| {
                let args: Vec<String> = n.args.iter().map(|x| arg_text(&r.graph, x)).collect();
                let kwargs: Vec<String> = n
                    .kwargs
                    .iter()
                    .map(|(k, x)| format!("{k}={}", arg_text(&r.graph, x)))
                    .collect();
                format!(
                    "{}|{}|{}|{}|{}|{:?}",
                    n.name,
                    n.op.as_str(),
                    n.target,
                    args.join(","),
                    kwargs.join(","),
                    n.region
                )
            })
            .collect()
    };
    a.regions.len() == b.regions.len() && a.events.len() == b.events.len() && sig(a) == sig(b)
}

fn trace_root_with(
    interp: &mut Interp,
    root: &Value,
    inputs: &[InputSpec],
    sym_inputs: &[(String, Meta)],
) -> (
    GraphResult,
    Vec<(crate::graph::NodeId, crate::eval::trace::RankHint)>,
) {
    let mut result = GraphResult {
        name: String::new(),
        class: String::new(),
        entry: None,
        file: 0,
        class_span: Span::default(),
        graph: Graph::new(),
        regions: vec![],
        events: vec![],
        breaks: vec![],
        error: None,
        modules: vec![],
        passes: None,
        from_cache: false,
    };
    let Value::Object(obj) = root else {
        result.error = Some(Diagnostic {
            code: codes::UNSUPPORTED,
            message: "the module could not be constructed".into(),
            severity: Severity::Warning,
            file: 0,
            span: Span::default(),
        });
        return (result, vec![]);
    };
    result.class = obj.class_name();
    result.modules = module_tree(obj);
    interp.tracer = Some(Tracer::new(obj));
    let outcome = trace_forward(interp, obj, inputs, sym_inputs);
    let mut tracer = interp.tracer.take().expect("tracer");
    // The root forward is entered through a call like any method; its call site is not part
    // of the chain users see.
    for id in tracer.graph.order.clone() {
        if let Some(o) = tracer.graph.node_mut(id).origin.as_mut() {
            if !o.call_chain.is_empty() {
                o.call_chain.remove(0);
            }
        }
    }
    for r in tracer.regions.iter_mut() {
        if !r.call_chain.is_empty() {
            r.call_chain.remove(0);
        }
    }
    for e in tracer.events.iter_mut() {
        if !e.call_chain.is_empty() {
            e.call_chain.remove(0);
        }
    }
    let hints = std::mem::take(&mut tracer.rank_hints);
    result.graph = tracer.graph;
    result.regions = tracer.regions;
    result.events = tracer.events;
    if let Err(e) = outcome {
        interp.note_error(&e);
        result.error = Some(diag_of(&e));
    }
    (result, hints)
}

fn trace_forward(
    interp: &mut Interp,
    obj: &Rc<crate::eval::value::Object>,
    inputs: &[InputSpec],
    sym_inputs: &[(String, Meta)],
) -> Result<(), EvalError> {
    let forward = interp.class_lookup(&obj.class, "forward");
    let (file, ns) = match &forward {
        Some(Value::Function(f)) => (interp.definition_of(f).1, f.globals.clone()),
        _ => match &obj.class {
            Value::Class(c) => (c.file_id, interp.load_module(c.file_id)?),
            _ => {
                return Err(EvalError {
                    code: codes::UNSUPPORTED,
                    message: "nothing to trace".into(),
                    file: 0,
                    span: Span::default(),
                })
            }
        },
    };
    let frame = Frame {
        file: interp.project.file(file),
        file_id: file,
        globals: ns,
        locals: None,
        class: None,
        receiver: None,
    };
    let mut args = Vec::new();
    let mut kwargs = Vec::new();
    let input_meta = |name: &str| {
        inputs
            .iter()
            .find(|i| i.name == name)
            .map(|i| Meta::tensor(Some(shape_of(&i.shape)), i.dtype))
            .or_else(|| {
                sym_inputs
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, m)| m.clone())
            })
    };
    let span = match &forward {
        Some(Value::Function(f)) => interp.definition_of(f).2,
        _ => Span::default(),
    };
    match &forward {
        Some(Value::Function(f)) => {
            let skip = usize::from(f.kind != FnKind::StaticMethod);
            for (i, p) in f.params.iter().skip(skip).enumerate() {
                use crate::catalog::ParamKind::*;
                if matches!(p.kind, VarPositional | VarKeyword) {
                    continue;
                }
                let given = input_meta(&p.name);
                // The first argument is the input the model is called with even when it
                // defaults to None (`forward(self, input_ids=None, ..., inputs_embeds=None)`
                // raises unless one of them is given); torch.fx makes it a proxy as well.
                let primary =
                    i == 0 && p.kind != KeywordOnly && matches!(p.default, Some(Value::None));
                let default_arg = match (&p.default, &given) {
                    (Some(d), None) if !primary => Some(d.clone()),
                    _ => None,
                };
                let tracer = interp.tracer.as_mut().expect("tracing");
                let meta = given.clone().unwrap_or_else(default_input_meta);
                let recorded_default = if given.is_none() {
                    p.default.as_ref()
                } else {
                    None
                };
                let default_as_arg = recorded_default.map(|d| match d {
                    Value::None => Arg::None,
                    Value::Bool(b) => Arg::Bool(*b),
                    Value::Int(i) => Arg::Int(*i),
                    Value::Float(x) => Arg::Float(*x),
                    other => Arg::Repr(format!("{other:?}")),
                });
                let node = tracer.placeholder(
                    &p.name,
                    default_as_arg,
                    if default_arg.is_some() {
                        crate::eval::trace::value_meta(default_arg.as_ref().unwrap())
                    } else {
                        meta
                    },
                    file,
                    span,
                );
                // A defaulted argument keeps its default value (how the model is usually called);
                // its placeholder still records the input, as torch.fx does.
                let v = match default_arg {
                    Some(d) => d,
                    None => Value::Proxy(node),
                };
                if p.kind == KeywordOnly {
                    kwargs.push((p.name.clone(), v));
                } else {
                    args.push(v);
                }
            }
        }
        _ => {
            // nn.Sequential's own forward(input).
            let meta = input_meta("input").unwrap_or_else(default_input_meta);
            let node = interp
                .tracer
                .as_mut()
                .expect("tracing")
                .placeholder("input", None, meta, file, span);
            args.push(Value::Proxy(node));
        }
    }
    let out = match &forward {
        Some(Value::Function(f)) => {
            let f = f.clone();
            // The root forward is not an inlined call: it starts the call chain empty.
            interp.call_function(
                &frame,
                &f,
                Some(Value::Object(obj.clone())),
                args,
                kwargs,
                span,
            )?
        }
        _ => interp.module_method(&frame, obj, "forward", args, kwargs, span)?,
    };
    let (arg, meta) = interp.to_arg(&frame, &out, span)?;
    let tracer = interp.tracer.as_mut().expect("tracing");
    tracer.add_node(
        "output",
        Op::Output,
        "output".into(),
        vec![arg],
        vec![],
        meta,
        file,
        span,
    );
    Ok(())
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
    let inputs: Vec<String> = gopts
        .inputs
        .iter()
        .map(|i| {
            format!(
                "{}={}:{}",
                i.name,
                i.shape
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("x"),
                i.dtype.as_str()
            )
        })
        .collect();
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
