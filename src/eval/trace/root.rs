//! Tracing a root module: instantiating a class the way per-class mode does (required
//! constructor arguments unknown), making placeholders for `forward`'s inputs, and retracing
//! with symbolic input shapes where the first layers fix the ranks.

use crate::eval::types::proxy;
use std::rc::Rc;

use super::argument_guards::{is_python_value, ArgSlot, ArgSource};
use super::default_config::{annotated_with_config_class, default_config, DEFAULT_LAYER_INDEX};
use super::guards::GlobalsBefore;
use super::inputs;
use super::{default_input_meta, value_meta, RankHint};
use crate::diagnostics::{codes, Diagnostic, Severity};
use crate::eval::value::{FnKind, ObjKind, Object, Value};
use crate::eval::{EvalError, Frame, Interp, Tracer};
use crate::graph::{Arg, Graph, NodeId, Op};
use crate::semantic::FileId;
use crate::shapes::{DType, Meta};
use crate::syntax::Span;
use crate::traced::{GraphResult, HyperValue, InputSpec, ModuleSummary, ParamSummary};

/// A leaf module's attribute as a plain constant.
fn hyper_value(v: &Value) -> HyperValue {
    match v {
        Value::None => HyperValue::None,
        Value::Bool(b) => HyperValue::Bool(*b),
        Value::Int(i) => HyperValue::Int(*i),
        Value::Float(x) => HyperValue::Float(*x),
        Value::Str(s) => HyperValue::Str(s.to_string()),
        Value::Tuple(t) => HyperValue::Seq(t.iter().map(hyper_value).collect()),
        Value::List(l) => HyperValue::Seq(l.borrow().iter().map(hyper_value).collect()),
        other => HyperValue::Other(other.type_name().to_string()),
    }
}

fn module_tree(root: &Rc<Object>) -> Vec<ModuleSummary> {
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
                    nn_buffer: p.nn_buffer,
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
                .map(|(k, v)| (k.clone(), hyper_value(v)))
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

/// Module classes with something to trace: an own or inherited `forward`, or Sequential.
pub fn is_traceable_module_class(interp: &Interp, class: &Value) -> bool {
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

/// The catalogue's torch.nn layer whose `__init__` a class inherits: the first base in its MRO
/// that defines `__init__` is that layer (no Python class before it defines one).
fn inherited_layer_init(class: &Value) -> Option<crate::catalog::ModuleSpec> {
    let Value::Class(c) = class else { return None };
    for m in c.mro.borrow().iter() {
        match m {
            Value::Class(k) if k.ns.borrow().get("__init__").is_some() => return None,
            Value::External(path) => {
                return crate::catalog::get()
                    .module(path)
                    .filter(|(_, s)| !s.container)
                    .map(|(_, s)| s.clone())
            }
            _ => {}
        }
    }
    None
}

/// Per-class mode: required constructor arguments are unknown, defaults are used. A required
/// `config` (or an optional one typed with a configuration class) is the config class's
/// defaults (`default_config`), and with it a required `layer_idx` is the first layer's.
/// Returns the module and the config it was given, if any (a decoder layer reads its config
/// in `__init__` and keeps none of it as `self.config`).
pub fn instantiate_per_class(
    interp: &mut Interp,
    file: FileId,
    class: &Value,
    span: Span,
) -> (Value, Option<Value>) {
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
    let mut kwargs = Vec::new();
    let mut given_config = None;
    if let Some(Value::Function(init)) = interp.class_lookup(class, "__init__") {
        // The parameters a decorated `__init__` takes are those of the function it wraps.
        let init = interp.signature_function(&init);
        let mut has_config = false;
        for p in init.params.iter().skip(1) {
            use crate::catalog::ParamKind::*;
            if !matches!(p.kind, PositionalOrKeyword | KeywordOnly) {
                continue;
            }
            // An optional config typed with a configuration class is given one, as the models
            // that build the class do; other defaults are used as they are.
            let typed_optional_config = p.name == "config"
                && matches!(p.default, Some(Value::None))
                && annotated_with_config_class(interp, &init, "config");
            if p.default.is_some() && !typed_optional_config {
                continue;
            }
            let value = match p.name.as_str() {
                "config" => match default_config(interp, &frame, class, &init, span) {
                    Some(config) => {
                        has_config = true;
                        given_config = Some(config.clone());
                        config
                    }
                    None => Value::unknown("constructor argument `config`"),
                },
                "layer_idx" if has_config => Value::Int(DEFAULT_LAYER_INDEX),
                name => Value::unknown(format!("constructor argument `{name}`")),
            };
            kwargs.push((p.name.clone(), value));
        }
    } else if let Some(spec) = inherited_layer_init(class) {
        // A subclass of a torch.nn layer that keeps the layer's `__init__` (open_clip's
        // `LayerNormFp32(nn.LayerNorm)` overrides only forward) takes the layer's arguments:
        // the required ones are unknown, as a Python `__init__`'s are.
        use crate::catalog::ParamKind::*;
        for p in &spec.signature {
            if matches!(p.kind, PositionalOrKeyword | KeywordOnly) && !p.has_default {
                let value = Value::unknown(format!("constructor argument `{}`", p.name));
                kwargs.push((p.name.clone(), value));
            }
        }
    }
    let module = match interp.instantiate(&frame, class, vec![], kwargs, span) {
        Ok(v) => v,
        Err(e) => {
            interp.note_error(&e);
            Value::unknown(interp.describe_error(&e))
        }
    };
    (module, given_config)
}

/// Traces `root.forward` with placeholders for its inputs. Inputs without a given shape get a
/// symbolic one (`[s0, 784]`) when the first layer that reads them fixes their rank, provided
/// tracing with that shape records exactly the same graph (otherwise the shape stays unknown).
pub fn trace_root(interp: &mut Interp, root: &Value, inputs: &[InputSpec]) -> GraphResult {
    trace_root_seeded(interp, root, inputs, &[])
}

/// `trace_root` with symbolic shapes known beforehand for some inputs (`seeds`, by name), such
/// as the ones transformers' conventions give (`default_config::convention_inputs`).
pub fn trace_root_seeded(
    interp: &mut Interp,
    root: &Value,
    inputs: &[InputSpec],
    seeds: &[(String, Meta)],
) -> GraphResult {
    // A forward may assign to its module (`self.cache = x`); the retrace with symbolic shapes
    // must start from the constructed state, not from proxies of the first trace's graph.
    let before = attribute_snapshot(root);
    let mut globals = GlobalsBefore::default();
    // forward's arguments that default to None but that forward uses as a tensor, each
    // given a placeholder after a trace that failed on its None (see `none_argument_used`)
    let mut with_inputs: Vec<(String, Meta)> = seeds.to_vec();
    let diagnostics = interp.diagnostics.len();
    let mut result = trace_root_twice(interp, root, inputs, &with_inputs, &before, &mut globals);
    let mut retraces = 0;
    while retraces < MAX_NONE_RETRACES && failed_on_none(&result) {
        // the operand of the failing operation names the argument ...
        let named = none_argument_used(interp, root, &result, inputs, &with_inputs);
        // ... or, where the None was passed on to a callee that failed on it, the first
        // None-defaulted argument (in signature order) whose input takes the trace further
        let candidates = match named {
            Some(name) => vec![name],
            None => none_defaulted_arguments(interp, root, inputs, &with_inputs),
        };
        let mut advanced = false;
        for name in candidates {
            if retraces == MAX_NONE_RETRACES {
                break;
            }
            retraces += 1;
            interp.diagnostics.truncate(diagnostics);
            restore_attributes(&before);
            globals.restore();
            let mut trial = with_inputs.clone();
            trial.push((name, default_input_meta()));
            let next = trace_root_twice(interp, root, inputs, &trial, &before, &mut globals);
            if further(&next, &result) {
                (result, with_inputs, advanced) = (next, trial, true);
                break;
            }
        }
        if !advanced {
            // the last trial's diagnostics and state go; the best trace is traced again
            interp.diagnostics.truncate(diagnostics);
            restore_attributes(&before);
            globals.restore();
            result = trace_root_twice(interp, root, inputs, &with_inputs, &before, &mut globals);
            break;
        }
    }
    if !result.guard_changes.is_empty() {
        settle_guard_changes(
            interp,
            root,
            inputs,
            &with_inputs,
            &mut result,
            &mut globals,
        );
    }
    restore_attributes(&before);
    globals.restore();
    forget_seeded_errors(&mut result, seeds);
    result
}

/// How many retraces a root trace may spend on finding forward's None-defaulted arguments
/// that are inputs.
const MAX_NONE_RETRACES: usize = 16;

/// Whether the trace stopped on an operation on None.
fn failed_on_none(result: &GraphResult) -> bool {
    result
        .error
        .as_ref()
        .is_some_and(|e| e.message.contains("NoneType"))
}

/// Whether `next` got further than `before`: to forward's return, or more nodes before it
/// stopped.
fn further(next: &GraphResult, before: &GraphResult) -> bool {
    next.error.is_none() || next.graph.order.len() > before.graph.order.len()
}

/// forward's parameters annotated as a tensor ([`names_a_tensor`]) that default to None and
/// that no input gives, in signature order.
fn none_defaulted_arguments(
    interp: &Interp,
    root: &Value,
    inputs: &[InputSpec],
    given: &[(String, Meta)],
) -> Vec<String> {
    let Value::Object(obj) = root else {
        return vec![];
    };
    let Some(Value::Function(forward)) = interp.class_lookup(&obj.class, "forward") else {
        return vec![];
    };
    let f = interp.signature_function(&forward);
    let annotations = parameter_annotations(interp, &f);
    let tensor = |name: &str| {
        annotations
            .iter()
            .any(|(n, a)| n == name && names_a_tensor(a))
    };
    use crate::catalog::ParamKind::*;
    f.params
        .iter()
        .filter(|p| !matches!(p.kind, VarPositional | VarKeyword))
        .filter(|p| tensor(&p.name))
        .filter(|p| matches!(p.default, Some(Value::None)))
        .filter(|p| !inputs.iter().any(|i| i.name == p.name))
        .filter(|p| !given.iter().any(|(n, _)| *n == p.name))
        .map(|p| p.name.clone())
        .collect()
}

/// The forward argument a failed trace needed as an input: the trace stopped on an operation
/// on None (`timestep.to(dtype)` raising AttributeError) whose operand, in the root forward's
/// own body, is a parameter that defaults to None and that no input gives. diffusers'
/// forwards declare their inputs so (`timestep: torch.LongTensor = None`): a caller always
/// passes it, and the default only keeps the signature's order. None when the failure is
/// anything else.
fn none_argument_used(
    interp: &Interp,
    root: &Value,
    result: &GraphResult,
    inputs: &[InputSpec],
    given: &[(String, Meta)],
) -> Option<String> {
    let error = result.error.as_ref()?;
    if !error.message.contains("NoneType") {
        return None;
    }
    let Value::Object(obj) = root else {
        return None;
    };
    let Some(Value::Function(forward)) = interp.class_lookup(&obj.class, "forward") else {
        return None;
    };
    let f = interp.signature_function(&forward);
    let (file, file_id, def) = interp.definition_of(&f);
    let within =
        error.file == file_id && def.start <= error.span.start && error.span.end <= def.end;
    if !within {
        return None;
    }
    // the operand: the name the failing expression starts with (`timestep` of
    // `timestep.to(...)`, `mask` of `mask[:, None]`), followed by an access on it
    let text = file.text.get(error.span.start..error.span.end)?;
    let name: String = text
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let rest = text[name.len()..].trim_start();
    if name.is_empty() || !(rest.starts_with('.') || rest.starts_with('[') || rest.starts_with('('))
    {
        return None;
    }
    none_defaulted_arguments(interp, root, inputs, given)
        .into_iter()
        .find(|n| *n == name)
}

/// Whether a parameter annotation names a tensor and not None: `torch.Tensor`,
/// `torch.LongTensor`, `"FloatTensor"`; not `torch.Tensor | None`, `Optional[torch.Tensor]` or
/// anything else. A parameter so annotated that defaults to None is one a caller passes (the
/// default only keeps it a keyword), where `x: torch.Tensor | None = None` is optional.
fn names_a_tensor(annotation: &str) -> bool {
    let a = annotation
        .trim()
        .trim_matches(|c| c == '"' || c == '\'')
        .trim();
    let last = a.rsplit('.').next().unwrap_or(a);
    let head = a.strip_suffix(last).unwrap_or("");
    matches!(head, "" | "torch.")
        && last.ends_with("Tensor")
        && last.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Traces a second call from the state the first left, to tell a value that changes on
/// every call (a counter: each call meets a value no earlier call compiled for) from one that
/// settles (a flag set once: one recompile, then the second compile serves every call).
fn settle_guard_changes(
    interp: &mut Interp,
    root: &Value,
    inputs: &[InputSpec],
    seeds: &[(String, Meta)],
    first: &mut GraphResult,
    globals: &mut GlobalsBefore,
) {
    let diagnostics = interp.diagnostics.len();
    let (second, _) = trace_root_with(interp, root, inputs, seeds, globals);
    interp.diagnostics.truncate(diagnostics);
    if second.error.is_some() {
        return;
    }
    for c in first.guard_changes.iter_mut() {
        let again = second
            .guard_changes
            .iter()
            .find(|d| d.file == c.file && d.span == c.span);
        c.every_call = Some(again.is_some_and(|d| d.after != c.before));
    }
}

/// How many calls of the trace raise with no seeded input among their inputs' sources.
fn unseeded_errors(result: &GraphResult, seeds: &[(String, Meta)]) -> usize {
    let g = &result.graph;
    let mut tainted: std::collections::HashSet<NodeId> = g
        .nodes()
        .filter(|(_, n)| {
            n.op == crate::graph::Op::Placeholder && seeds.iter().any(|(s, _)| *s == n.name)
        })
        .map(|(id, _)| id)
        .collect();
    let mut count = 0;
    for &id in &g.order {
        if g.inputs(id).iter().any(|i| tainted.contains(i)) {
            tainted.insert(id);
        }
        if g.node(id).shape_error.is_some() && !tainted.contains(&id) {
            count += 1;
        }
    }
    count
}

/// A seed's sizes are a guess from the argument's name (`hidden_states` is taken to be
/// `[batch, seq, hidden_size]`, which BERT's output block, given the intermediate activations,
/// contradicts): a call that raises only with them is no certain error, so it keeps its
/// unknown result and loses the error.
fn forget_seeded_errors(result: &mut GraphResult, seeds: &[(String, Meta)]) {
    if seeds.is_empty() {
        return;
    }
    let g = &mut result.graph;
    let seeded: Vec<NodeId> = g
        .nodes()
        .filter(|(_, n)| {
            n.op == crate::graph::Op::Placeholder && seeds.iter().any(|(s, _)| *s == n.name)
        })
        .map(|(id, _)| id)
        .collect();
    if seeded.is_empty() {
        return;
    }
    // Program order is topological: a node depends on a seed if one of its inputs does.
    let mut tainted: std::collections::HashSet<NodeId> = seeded.into_iter().collect();
    for id in g.order.clone() {
        if g.inputs(id).iter().any(|i| tainted.contains(i)) {
            tainted.insert(id);
        }
        if tainted.contains(&id) {
            g.node_mut(id).shape_error = None;
        }
    }
}

/// What a constructor gets from running `module` on constant tensors of these metas (by
/// forward's parameter names): forward traced on its own, the module's attributes restored
/// after, and the output's meta. timm's hybrid ViTs size their patch embedding so
/// (`self.backbone(torch.zeros(1, 3, 224, 224)).shape[-2:]`). None while a trace is under way
/// or when this one fails; what it could not follow is not the file's analysis limit.
pub fn forward_output_meta(
    interp: &mut Interp,
    module: &Value,
    inputs: &[(String, Meta)],
) -> Option<Meta> {
    if !proxy::runs_forward_on_constants(interp) {
        return None;
    }
    let before = attribute_snapshot(module);
    let diagnostics = interp.diagnostics.len();
    let mut globals = GlobalsBefore::default();
    let (result, _) = trace_root_with(interp, module, &[], inputs, &mut globals);
    interp.diagnostics.truncate(diagnostics);
    restore_attributes(&before);
    globals.restore();
    if result.error.is_some() {
        return None;
    }
    let output = result.graph.nodes().find(|(_, n)| n.op == Op::Output)?;
    Some(output.1.meta.clone())
}

/// Every module's attributes, and the contents of the dicts and lists they hold (a forward
/// may fill a cache in place: timm's `attention_bias_cache[str(device)] = …`).
type AttributeSnapshot = (
    Vec<(Rc<Object>, crate::eval::value::Names)>,
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
    seeds: &[(String, Meta)],
    before: &AttributeSnapshot,
    globals: &mut GlobalsBefore,
) -> GraphResult {
    let at_start = interp.diagnostics.len();
    let (first, hints) = trace_root_with(interp, root, inputs, seeds, globals);
    let first_limits = limits(&interp.diagnostics[at_start.min(interp.diagnostics.len())..]);
    // Seeds use the first symbols; hinted inputs number theirs after them. A seed for an
    // argument forward does not take (a module built from a config is seeded with every
    // convention input) is not an input and numbers nothing.
    let taken = |name: &str| {
        first
            .graph
            .nodes()
            .any(|(_, n)| n.op == crate::graph::Op::Placeholder && n.name == name)
    };
    let seeds: Vec<(String, Meta)> = seeds.iter().filter(|(n, _)| taken(n)).cloned().collect();
    let seeded_symbols = seeds
        .iter()
        .flat_map(|(_, m)| symbols_of(m))
        .max()
        .map_or(0, |s| s + 1);
    if first.error.is_some() || hints.is_empty() {
        return first;
    }
    // First the smallest rank each hint allows, then one more leading (sequence) dim when a
    // hint allows it. A guessed rank may be wrong (`x[:, 1:]` slices another dim of a
    // [batch, seq, hidden] input taken as [batch, hidden]), so with two plausible ranks a call
    // raises for certain only where it raises under both. The larger rank is traced only
    // when the smaller one is unusable or raises.
    let grows = hints.iter().any(|(_, h)| h.grow);
    let mut traces: Vec<(GraphResult, bool)> = vec![];
    for extra in 0..if grows { 2 } else { 1 } {
        let mut next_sym = seeded_symbols;
        let mut sym_inputs = seeds.clone();
        for (id, h) in &hints {
            let extra = if h.grow { extra } else { 0 };
            let name = first.graph.node(*id).name.clone();
            // an input of unknown shape (a None-defaulted argument made one) takes the hint's
            sym_inputs
                .retain(|(n, m)| *n != name || !matches!(m, Meta::Tensor(t) if t.shape.is_none()));
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
        globals.restore();
        let (second, _) = trace_root_with(interp, root, inputs, &sym_inputs, globals);
        let noted = interp
            .diagnostics
            .split_off(diagnostics.min(interp.diagnostics.len()));
        if second.error.is_none()
            && limits(&noted) < first_limits
            && !same_structure(&first, &second)
            && !guess_raises(&first, &second)
        {
            // The rank the layers give takes forward past places the unknown rank stopped it
            // (`for d in x.shape[-2:]` before the first convolution): that trace is the one
            // shown, with what it could not follow instead of the first trace's.
            interp.diagnostics.truncate(at_start);
            interp.diagnostics.extend(noted);
            return second;
        }
        if second.error.is_none() {
            let usable = same_structure(&first, &second) && !guess_raises(&first, &second);
            // the common case costs one retrace: a usable smallest rank with nothing raising
            // (errors that hang on a seed's guessed sizes are dropped anyway)
            if usable && extra == 0 && unseeded_errors(&second, &seeds) == 0 {
                return second;
            }
            traces.push((second, usable));
        }
    }
    let usable: Vec<usize> = (0..traces.len()).filter(|&i| traces[i].1).collect();
    // the shapes shown: the usable trace with the fewest errors, the smaller rank on a tie
    let Some(&pick) = usable.iter().min_by_key(|&&i| (errors(&traces[i].0), i)) else {
        return first;
    };
    if traces.len() == 2 {
        let other = traces[1 - pick].0.graph.clone();
        forget_errors_of_one_rank(&mut traces[pick].0, &other);
    }
    traces.swap_remove(pick).0
}

/// Drops the errors of `result` at source sites where the trace under the other plausible
/// rank (`other`) has none: they hang on the guess.
fn forget_errors_of_one_rank(result: &mut GraphResult, other: &crate::graph::Graph) {
    let sites = |g: &crate::graph::Graph| -> std::collections::HashSet<(FileId, usize, usize)> {
        g.nodes()
            .filter(|(_, n)| n.shape_error.is_some())
            .filter_map(|(_, n)| n.origin.as_ref())
            .map(|o| (o.file, o.span.start, o.span.end))
            .collect()
    };
    let keep = sites(other);
    let g = &mut result.graph;
    for id in g.order.clone() {
        let n = g.node(id);
        let site = n
            .origin
            .as_ref()
            .map(|o| (o.file, o.span.start, o.span.end));
        if n.shape_error.is_some() && !site.is_some_and(|s| keep.contains(&s)) {
            g.node_mut(id).shape_error = None;
        }
    }
}

/// How many analysis limits (FX9xx) a trace noted.
fn limits(noted: &[Diagnostic]) -> usize {
    noted.iter().filter(|d| d.code.starts_with("FX9")).count()
}

/// How many calls of the trace will raise.
fn errors(r: &GraphResult) -> usize {
    r.graph
        .nodes()
        .filter(|(_, n)| n.shape_error.is_some())
        .count()
}

/// The indices of the symbols in a seed's dims (`[s0, s1, 4096]` gives 0 and 1).
fn symbols_of(meta: &Meta) -> Vec<u32> {
    match meta {
        Meta::Tensor(t) => t
            .shape
            .iter()
            .flatten()
            .filter_map(|d| match d {
                crate::shapes::Dim::Sym(e) => e.as_sym(),
                _ => None,
            })
            .collect(),
        Meta::Seq(items) => items.iter().flat_map(symbols_of).collect(),
        _ => vec![],
    }
}

/// Same nodes, arguments and graph breaks: only the shapes may differ.
/// Whether the guessed shapes make a call raise for a reason that hangs on the guess itself:
/// a rank or a dimension index (the guessed rank may be wrong: Linear takes any rank) or a
/// dtype. A size mismatch between sizes the layers fix (`Linear(32, 128)` then
/// `Linear(64, 32)`) holds whatever the input, so it does not refute the guess.
fn guess_raises(first: &GraphResult, second: &GraphResult) -> bool {
    let count = |r: &GraphResult| {
        r.graph
            .nodes()
            .filter(|(_, n)| {
                n.shape_error
                    .as_ref()
                    .is_some_and(|e| e.kind != crate::shapes::ShapeErrorKind::Size)
            })
            .count()
    };
    count(second) > count(first)
}

fn same_structure(a: &GraphResult, b: &GraphResult) -> bool {
    use crate::graph::arg_text;
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
    globals: &mut GlobalsBefore,
) -> (GraphResult, Vec<(NodeId, RankHint)>) {
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
        build_failure: None,
        modules: vec![],
        passes: None,
        from_cache: false,
        flagged_breaks: vec![],
        given_inputs: inputs.iter().map(|i| i.name.clone()).collect(),
        bindings: vec![],
        guard_changes: vec![],
        argument_guards: vec![],
        state_guards: vec![],
        error_followed_elsewhere: false,
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
    let mut tracer = Tracer::new(obj);
    if let Value::Class(c) = &obj.class {
        tracer.bindings_home = Some(interp.project.file(c.file_id).path.clone());
    }
    interp.tracer = Some(tracer);
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
    if let Some(shadow) = tracer.replay.as_mut() {
        let tally = shadow.finish(tracer.graph.order.len());
        super::replay::report(tally, &result.class);
    }
    let hints = std::mem::take(&mut tracer.rank_hints);
    // the module state as forward left it: the values it changed that Dynamo guards on
    result.guard_changes = tracer.guards.changes(&tracer.module_paths);
    result.state_guards = tracer.guards.held(&tracer.module_paths);
    result.argument_guards = tracer.arguments.guards();
    globals.absorb(&mut tracer.guards);
    result.graph = tracer.graph;
    result.regions = tracer.regions;
    result.events = tracer.events;
    result.bindings = tracer.bindings;
    if let Err(e) = outcome {
        interp.note_error(&e);
        result.error = Some(diag_of(&e));
    }
    (result, hints)
}

fn trace_forward(
    interp: &mut Interp,
    obj: &Rc<Object>,
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
                    exception: None,
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
    // an input's tensor, when the parameter takes that reading of it (`inputs`), or a seed's
    let input_meta = |name: &str, annotation: Option<&str>, default: Option<&Value>| {
        inputs
            .iter()
            .find(|i| i.name == name)
            .and_then(|i| inputs::tensor_reading(i, annotation, default))
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
    // The signature torch.fx reads: the innermost function a decorated forward wraps.
    let signature = match &forward {
        Some(Value::Function(f)) => Some(Value::Function(interp.signature_function(f))),
        other => other.clone(),
    };
    let (args, kwargs, python_values) = forward_arguments(
        interp,
        obj,
        signature.as_ref(),
        inputs,
        &input_meta,
        file,
        span,
    )?;
    let out = match &forward {
        Some(Value::Function(f)) => {
            let f = f.clone();
            // the Python values forward is called with, followed to the guards they get
            let sources = python_values
                .into_iter()
                .map(|(name, value)| {
                    let source = ArgSource {
                        argument: name.clone(),
                        text: name.clone(),
                        value,
                    };
                    (ArgSlot::Param(name), source)
                })
                .collect();
            interp
                .tracer
                .as_mut()
                .expect("tracing")
                .arguments
                .set_pending(sources);
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
    // A dict-like output object (transformers' `ModelOutput`), or a plain dict (open_clip's
    // CoCa returns one), is its items, `(key, value)` pairs in order: the values stay graph
    // nodes the output uses.
    let pairs = |items: Vec<(Value, Value)>| {
        Value::tuple(
            items
                .into_iter()
                .map(|(k, v)| Value::tuple(vec![k, v]))
                .collect(),
        )
    };
    let out = match &out {
        Value::Dict(d) => pairs(d.borrow().clone()),
        Value::Object(o) => match crate::eval::objects::dict_base_items(o) {
            Some(items) => pairs(items),
            None => out,
        },
        _ => out,
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
    tracer.graph.drop_unplaced();
    Ok(())
}

/// Values by parameter name.
type ByName = Vec<(String, Value)>;

/// A parameter's tensor input, by name, annotation and default.
type InputMeta<'a> = dyn Fn(&str, Option<&str>, Option<&Value>) -> Option<Meta> + 'a;

/// forward's arguments as the trace passes them, `(args, kwargs, python_values)`: a
/// placeholder for each parameter of its signature (of the shape `input_meta` gives it), a
/// defaulted parameter keeping its default, a parameter the user gives a Python value
/// (`inputs`) that value (`eval::trace::inputs`); the parameters given a Python value (a
/// flag, a number, None, a list, ...), by name, are the ones Dynamo guards on. Fails on a
/// Python input that cannot be evaluated.
#[allow(clippy::too_many_arguments)]
fn forward_arguments(
    interp: &mut Interp,
    obj: &Rc<Object>,
    signature: Option<&Value>,
    inputs: &[InputSpec],
    input_meta: &InputMeta,
    file: FileId,
    span: Span,
) -> Result<(Vec<Value>, ByName, ByName), EvalError> {
    let mut args = Vec::new();
    let mut kwargs = Vec::new();
    let mut python_values = Vec::new();
    match signature {
        Some(Value::Function(f)) => {
            let skip = usize::from(f.kind != FnKind::StaticMethod);
            let annotations = parameter_annotations(interp, f);
            for (i, p) in f.params.iter().skip(skip).enumerate() {
                use crate::catalog::ParamKind::*;
                if matches!(p.kind, VarPositional | VarKeyword) {
                    continue;
                }
                let annotation = annotations
                    .iter()
                    .find(|(name, _)| *name == p.name)
                    .map(|(_, a)| a.as_str());
                let python = inputs
                    .iter()
                    .find(|s| s.name == p.name)
                    .and_then(|s| inputs::python_reading(s, annotation, p.default.as_ref()));
                if let Some(text) = python {
                    let namespace = interp.definition_of(f).1;
                    let v = inputs::bind_python(interp, &p.name, text, namespace, (file, span))?;
                    pass_argument(p, v, &mut args, &mut kwargs, &mut python_values);
                    continue;
                }
                let given = input_meta(&p.name, annotation, p.default.as_ref());
                // The first argument is the input the model is called with even when it
                // defaults to None (`forward(self, input_ids=None, ..., inputs_embeds=None)`
                // raises unless one of them is given); torch.fx makes it a proxy as well.
                let primary =
                    i == 0 && p.kind != KeywordOnly && matches!(p.default, Some(Value::None));
                let default_arg = match (&p.default, &given) {
                    (Some(d), None) if !primary => Some(d.clone()),
                    (None, None) => output_switch(obj, &p.name),
                    _ => None,
                };
                let tracer = interp.tracer.as_mut().expect("tracing");
                // A required argument annotated as a Python value (`flag: bool`,
                // `input_dimensions: tuple[int, int]`) is one: the caller passes it, Dynamo
                // specialises on it, and a branch on it is no data-dependent branch.
                let typed = annotations
                    .iter()
                    .find(|(name, _)| *name == p.name)
                    .and_then(|(_, a)| annotation_meta(a));
                let meta = given.clone().or(typed).unwrap_or_else(default_input_meta);
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
                        value_meta(default_arg.as_ref().unwrap())
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
                pass_argument(p, v, &mut args, &mut kwargs, &mut python_values);
            }
        }
        _ => {
            // nn.Sequential's own forward(input).
            let python = inputs
                .iter()
                .find(|s| s.name == "input")
                .and_then(|s| inputs::python_reading(s, None, None));
            if let Some(text) = python {
                args.push(inputs::bind_python(
                    interp,
                    "input",
                    text,
                    file,
                    (file, span),
                )?);
            } else {
                let meta = input_meta("input", None, None).unwrap_or_else(default_input_meta);
                let node = interp
                    .tracer
                    .as_mut()
                    .expect("tracing")
                    .placeholder("input", None, meta, file, span);
                args.push(Value::Proxy(node));
            }
        }
    }
    Ok((args, kwargs, python_values))
}

/// Passes `v` for forward's parameter `p`, by keyword when it is keyword-only, and notes it
/// among the Python values Dynamo guards on when it is one.
fn pass_argument(
    p: &crate::eval::value::FnParam,
    v: Value,
    args: &mut Vec<Value>,
    kwargs: &mut ByName,
    python_values: &mut ByName,
) {
    if is_python_value(&v) {
        python_values.push((p.name.clone(), v.clone()));
    }
    if p.kind == crate::catalog::ParamKind::KeywordOnly {
        kwargs.push((p.name.clone(), v));
    } else {
        args.push(v);
    }
}

/// The parameters of the module class `class`'s forward that per-class analysis must invent
/// an argument for with nothing to go by: no default, no annotation (`self`, `*args` and
/// `**kwargs` aside).
pub fn unannotated_required_params(interp: &Interp, class: &Value) -> Vec<String> {
    use crate::catalog::ParamKind::*;
    let Some(Value::Function(f)) = interp.class_lookup(class, "forward") else {
        return vec![];
    };
    let f = interp.signature_function(&f);
    let annotations = parameter_annotations(interp, &f);
    let skip = usize::from(f.kind != FnKind::StaticMethod);
    f.params
        .iter()
        .skip(skip)
        .filter(|p| !matches!(p.kind, VarPositional | VarKeyword) && p.default.is_none())
        .filter(|p| annotations.iter().all(|(name, _)| *name != p.name))
        .map(|p| p.name.clone())
        .collect()
}

/// The annotation text of each parameter of `f`'s definition, by name.
fn parameter_annotations(
    interp: &Interp,
    f: &Rc<crate::eval::value::Function>,
) -> Vec<(String, String)> {
    use crate::syntax::{FieldExt, KindExt};
    let (file, _, span) = interp.definition_of(f);
    let tree = file.tree();
    let Some(mut def) = tree
        .root_node()
        .descendant_for_byte_range(span.start, span.end)
    else {
        return vec![];
    };
    while def.kind_name() != "function_definition" {
        match def.parent() {
            Some(p) => def = p,
            None => return vec![],
        }
    }
    let Some(params) = def.field("parameters") else {
        return vec![];
    };
    let text = &*file.text;
    crate::syntax::named_children(params)
        .filter_map(|p| {
            let ty = p.field("type")?;
            let name = match p.kind_name() {
                "typed_parameter" => {
                    crate::syntax::named_children(p).find(|c| c.kind_name() == "identifier")?
                }
                "typed_default_parameter" => p.field("name")?,
                _ => return None,
            };
            Some((
                crate::syntax::text(name, text).to_string(),
                crate::syntax::text(ty, text).to_string(),
            ))
        })
        .collect()
}

/// The value a Python annotation says an argument is, when it names no tensor: `bool`, `int`,
/// `float` (of unknown value), and fixed-length tuples of them; `X | None` and `Optional[X]`
/// as `X`. Anything else (a tensor, a class, `tuple[int, ...]`) is None.
pub(super) fn annotation_meta(annotation: &str) -> Option<Meta> {
    use crate::shapes::{Scalar, ScalarOrigin};
    let a = annotation
        .trim()
        .trim_matches(|c| c == '"' || c == '\'')
        .trim();
    if let Some(inner) = a.strip_suffix("| None").or_else(|| a.strip_suffix("|None")) {
        return annotation_meta(inner);
    }
    if let Some(inner) = a.strip_prefix("None |").or_else(|| a.strip_prefix("None|")) {
        return annotation_meta(inner);
    }
    let generic = |a: &str, names: &[&str]| -> Option<String> {
        let (head, rest) = a.split_once('[')?;
        let inner = rest.strip_suffix(']')?;
        names.contains(&head.trim()).then(|| inner.to_string())
    };
    if let Some(inner) = generic(a, &["Optional", "typing.Optional"]) {
        return annotation_meta(&inner);
    }
    match a {
        "bool" => return Some(Meta::Scalar(Scalar::Bool(None), ScalarOrigin::Const)),
        "int" => return Some(Meta::Scalar(Scalar::Int(None), ScalarOrigin::Shape)),
        "float" => return Some(Meta::Scalar(Scalar::Float(None), ScalarOrigin::Const)),
        _ => {}
    }
    let inner = generic(a, &["tuple", "Tuple", "typing.Tuple"])?;
    // the items, split at the commas outside brackets
    let mut items = vec![String::new()];
    let mut depth = 0i32;
    for c in inner.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                items.push(String::new());
                continue;
            }
            _ => {}
        }
        items.last_mut().expect("one item").push(c);
    }
    if items.iter().any(|i| matches!(i.trim(), "..." | "")) {
        return None;
    }
    items
        .iter()
        .map(|i| annotation_meta(i))
        .collect::<Option<Vec<_>>>()
        .map(Meta::Seq)
}

/// transformers' output switches: a module that takes one as a required argument
/// (SqueezeBERT's `forward(hidden_states, attention_mask, output_attentions)`) is called with a
/// Python bool, never a tensor: the shared config's value when the module keeps `self.config`
/// (so the `output_attentions` retrace reaches it), else the config default, False.
fn output_switch(obj: &Rc<Object>, name: &str) -> Option<Value> {
    if !matches!(name, "output_attentions" | "output_hidden_states") {
        return None;
    }
    let configured = match obj.get("config") {
        Some(Value::Object(config)) => config.attrs.borrow().get(name).cloned(),
        _ => None,
    };
    Some(match configured {
        Some(Value::Bool(b)) => Value::Bool(b),
        _ => Value::Bool(false),
    })
}

/// A flag forward may run under, for `trace_flagged`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    /// `model.gradient_checkpointing_enable()` then `model.train()`: every module's
    /// `training` and `gradient_checkpointing` are true.
    GradientCheckpointing,
    /// `output_attentions=True` in the config the modules share.
    OutputAttentions,
}

impl Flag {
    pub const ALL: [Flag; 2] = [Flag::GradientCheckpointing, Flag::OutputAttentions];

    /// How a finding's message names the condition.
    pub fn condition(self) -> &'static str {
        match self {
            Flag::GradientCheckpointing => "with gradient checkpointing in training",
            Flag::OutputAttentions => "with `output_attentions=True`",
        }
    }
}

/// Traces `root.forward` again with `flag` set on its modules (or on their config), then
/// restores every attribute it changed. None when the flag does not apply (no module has a
/// `gradient_checkpointing` attribute, no config).
pub fn trace_flagged(
    interp: &mut Interp,
    root: &Value,
    inputs: &[InputSpec],
    seeds: &[(String, Meta)],
    flag: Flag,
) -> Option<GraphResult> {
    let Value::Object(obj) = root else {
        return None;
    };
    let before = attribute_snapshot(root);
    let mut changed = false;
    // the config is no module: the snapshot does not hold it
    let mut config_before: Option<(Rc<Object>, Option<Value>)> = None;
    match flag {
        Flag::GradientCheckpointing => {
            let mut stack = vec![obj.clone()];
            let mut seen = std::collections::HashSet::new();
            let mut modules = Vec::new();
            while let Some(o) = stack.pop() {
                if !seen.insert(o.id) {
                    continue;
                }
                stack.extend(o.children().into_iter().map(|(_, c)| c));
                modules.push(o);
            }
            // instances (`self.gradient_checkpointing = False`) or classes
            // (`GradientCheckpointingLayer.gradient_checkpointing = False`) that have the flag
            let has_flag = |m: &Rc<Object>| {
                m.attrs.borrow().contains_key("gradient_checkpointing")
                    || interp
                        .class_lookup(&m.class, "gradient_checkpointing")
                        .is_some()
            };
            let flagged: Vec<bool> = modules.iter().map(has_flag).collect();
            if flagged.iter().any(|&f| f) {
                for (m, flag) in modules.iter().zip(flagged) {
                    if matches!(m.kind, ObjKind::Leaf(_)) {
                        continue;
                    }
                    let mut attrs = m.attrs.borrow_mut();
                    attrs.insert("training".into(), Value::Bool(true));
                    if flag {
                        attrs.insert("gradient_checkpointing".into(), Value::Bool(true));
                    }
                }
                changed = true;
            }
        }
        Flag::OutputAttentions => {
            if let Some(Value::Object(config)) = obj.get("config") {
                let old = config
                    .attrs
                    .borrow_mut()
                    .insert("output_attentions".into(), Value::Bool(true));
                config_before = Some((config.clone(), old));
                changed = true;
            }
        }
    }
    if !changed {
        return None;
    }
    let diagnostics = interp.diagnostics.len();
    let mut globals = GlobalsBefore::default();
    let (mut result, _) = trace_root_with(interp, root, inputs, seeds, &mut globals);
    forget_seeded_errors(&mut result, seeds);
    // what the flagged trace could not follow is not the file's analysis limit
    interp.diagnostics.truncate(diagnostics);
    restore_attributes(&before);
    globals.restore();
    if let Some((config, old)) = config_before {
        let mut attrs = config.attrs.borrow_mut();
        match old {
            Some(v) => attrs.insert("output_attentions".into(), v),
            None => attrs.shift_remove("output_attentions"),
        };
    }
    Some(result)
}
