//! `Proxy`: a graph node standing for a runtime value in a traced forward. Operations on it
//! are recorded as graph nodes.
//!
//! This is also the one place that decides what tracing a forward changes. The evaluator runs
//! the same Python both in a constructor (eagerly, no graph) and in a traced forward (where
//! torch.fx and Dynamo record operations, inline calls and fold some predicates); every such
//! difference is asked here, by a function that names what it decides, rather than by asking
//! elsewhere whether a tracer is present. Code that has a tracer to record into
//! (`interp.tracer.as_mut()`) uses it directly.

use crate::diagnostics::codes;
use crate::eval::call::{any_proxy, Kwargs};
use crate::eval::value::Value;
use crate::eval::{EResult, Frame, Interp};
use crate::graph::NodeId;
use crate::syntax::Span;

/// Whether a forward is being traced. Private: the rest of the evaluator asks one of the
/// decisions below, which say what tracing changes.
fn tracing(interp: &Interp) -> bool {
    interp.tracer.is_some()
}

/// A traced forward's calls of the analysed file's module classes tell what their unannotated
/// arguments are (`trace::caller_kinds`); a constructor's calls (a probe on constant tensors)
/// pass what `__init__` made up.
pub(in crate::eval) fn records_caller_kinds(interp: &Interp) -> bool {
    tracing(interp)
}

/// A call with a traced argument (anywhere in `args` or `kwargs`) while tracing is recorded
/// as one node rather than evaluated: its result is only known when the graph runs. Outside a
/// trace a traced value can only be a leftover of an earlier one, and is not recorded.
pub(in crate::eval) fn records_call(
    interp: &Interp,
    args: &[Value],
    kwargs: &[(String, Value)],
) -> bool {
    tracing(interp) && any_proxy(args, kwargs)
}

/// A binary operator with a traced operand (`a` or `b` itself, not something holding one)
/// while tracing is recorded as an `operator.*` node, as torch.fx's proxy records it.
pub(in crate::eval) fn records_operator(interp: &Interp, a: &Value, b: &Value) -> bool {
    tracing(interp) && matches!((a, b), (Value::Proxy(_), _) | (_, Value::Proxy(_)))
}

/// What `torch.compiler.is_compiling()` (and its aliases) answers. Dynamo folds it to True
/// while it traces, and the graph is what torch.compile captures; constructors run eagerly,
/// outside Dynamo, where it is False.
pub(in crate::eval) fn is_compiling(interp: &Interp) -> bool {
    tracing(interp)
}

/// What a module's `training` flag reads when no attribute of the module sets it. A module is
/// in training mode from construction (torch.nn's default), so a constructor reads True; the
/// traced forward is the eval-mode one the reference graphs are recorded from (a trace variant
/// that wants training mode sets the attribute on each module).
pub(in crate::eval) fn module_is_training(interp: &Interp) -> bool {
    !tracing(interp)
}

/// Whether a call of a user-defined function is inlined into the graph (Dynamo and torch.fx
/// trace through the Python they can see, with the limits of Dynamo: `torch.compiler.disable`,
/// `allow_in_graph`, the inlining depth). Outside a trace it is simply run.
pub(in crate::eval) fn inlines_user_functions(interp: &Interp) -> bool {
    tracing(interp)
}

/// A parameter or buffer read in a traced forward is a `get_attr` node (its value is the
/// module's state when the graph runs); outside a trace it is the parameter itself, of known
/// shape, whose methods answer from that shape.
pub(in crate::eval) fn param_is_traced(interp: &Interp) -> bool {
    tracing(interp)
}

/// Whether calling a module the analyser does not inline is recorded as a `call_module` node
/// at the module's path: a torch.nn leaf (or a subclass of one running the leaf's forward), or
/// a submodule it could not construct, whose attribute reads therefore carry their path.
/// Outside a trace such a call has an unknown output.
pub(in crate::eval) fn records_module_calls(interp: &Interp) -> bool {
    tracing(interp)
}

/// A registered custom op (`torch.library.custom_op`) called while tracing is one node shaped
/// by its fake implementation, as Dynamo records it whatever its arguments.
pub(in crate::eval) fn records_custom_ops(interp: &Interp) -> bool {
    tracing(interp)
}

/// Whether a numpy call on constant arguments is reported as an event: Dynamo sends every
/// numpy call in traced code through torch._numpy, constant arguments or not.
pub(in crate::eval) fn reports_numpy_calls(interp: &Interp) -> bool {
    tracing(interp)
}

/// Whether the first read of a `functools.cached_property` is reported as an event: the lock
/// it takes (Python 3.11 and older) is a break only for the code Dynamo traces.
pub(in crate::eval) fn reports_cached_property_reads(interp: &Interp) -> bool {
    tracing(interp)
}

/// Whether a comprehension that would be a frame of its own is reported as an event: only
/// traced code has frames Dynamo may run eagerly.
pub(in crate::eval) fn reports_comprehension_frames(interp: &Interp) -> bool {
    tracing(interp)
}

/// Whether `torch._assert` on untraced arguments is skipped in a traced forward: it is neither
/// a node nor a check there (torch.fx evaluates it eagerly; Dynamo does not break on it).
pub(in crate::eval) fn skips_asserts(interp: &Interp) -> bool {
    tracing(interp)
}

/// Whether an `assert` statement's condition is traced rather than checked: in a traced
/// forward Dynamo runs the condition (an `.item()` in it breaks the graph) and asserts a tensor
/// condition with `torch._assert_async`, deciding nothing at trace time. Outside a trace an
/// `assert` is checked, a statically false one being a real error in the model.
pub(in crate::eval) fn traces_assert_conditions(interp: &Interp) -> bool {
    tracing(interp)
}

/// Whether both sides of a branch on an unknown condition run. In a traced forward both do,
/// so the graph shows the operations of either; a constructor's unknown condition is most
/// often a validation that raises, so there the side that raises gives way to the other.
pub(in crate::eval) fn runs_both_unknown_branches(interp: &Interp) -> bool {
    tracing(interp)
}

/// Whether a loop over something that cannot be enumerated runs its body once (on an unknown
/// item) rather than failing: in a traced forward the body's operations then still show.
pub(in crate::eval) fn runs_unknown_loop_once(interp: &Interp) -> bool {
    tracing(interp)
}

/// Whether an `lru_cache` wrapper answers from its cache. In a traced forward it does not:
/// Dynamo ignores the wrapper and traces the wrapped function, and a traced value kept across
/// traces would name a node of another graph. Eagerly the cache behaves as CPython's.
pub(in crate::eval) fn consults_lru_cache(interp: &Interp) -> bool {
    !tracing(interp)
}

/// Whether a module's forward can be run on constant tensors to learn its output's shape (a
/// constructor probing its backbone with `torch.zeros(...)`). That run is a trace of its own,
/// and only one trace is under way at a time; inside a forward the call is traced as usual.
pub(in crate::eval) fn runs_forward_on_constants(interp: &Interp) -> bool {
    !tracing(interp)
}

/// `requires_grad_()` on a constant tensor in a traced forward: Dynamo traces the flag change
/// (and may break on it), so the constant enters the graph; eagerly it is the tensor itself.
pub(in crate::eval) fn requires_grad_enters_graph(interp: &Interp) -> bool {
    tracing(interp)
}

/// The tensor methods Dynamo treats specially (a graph break, a data-dependent result or a
/// side effect): calling one is recorded as an event besides its node.
const EVENT_METHODS: &[&str] = &[
    "item",
    "tolist",
    "numpy",
    "backward",
    "requires_grad_",
    "nonzero",
    "unique",
    "masked_select",
    "cpu",
    "retain_grad",
    "register_hook",
];

/// `x.name(*args, **kwargs)` on a traced value (`recv`): a `call_method` node.
pub(in crate::eval) fn call_method(
    interp: &mut Interp,
    frame: &Frame,
    recv: &Value,
    name: &str,
    args: Vec<Value>,
    kwargs: Kwargs,
    span: Span,
) -> EResult<Value> {
    if let Some(t) = interp.tracer.as_mut() {
        if EVENT_METHODS.contains(&name) {
            t.event(
                crate::traced::EventKind::Method,
                frame.file_id,
                span,
                name.to_string(),
            );
        }
    }
    interp.trace_method(frame, name, recv.clone(), args, kwargs, span)
}

/// `for x in v` over a traced value `n` (`v` as a value): torch.fx unpacks a traced value by
/// indexing it, one getitem per element, so its length must be known.
pub(in crate::eval) fn iterate(
    interp: &mut Interp,
    frame: &Frame,
    v: &Value,
    n: NodeId,
    span: Span,
) -> EResult<Vec<Value>> {
    let len = interp.tracer.as_ref().and_then(|t| match t.meta(n) {
        crate::shapes::Meta::Seq(s) => Some(s.len()),
        crate::shapes::Meta::Size(s) => Some(s.len()),
        crate::shapes::Meta::Tensor(t) => t
            .shape
            .as_ref()
            .and_then(|s| s.first())
            .and_then(|d| d.known())
            .map(|d| d as usize),
        _ => None,
    });
    match len {
        Some(n) => (0..n)
            .map(|i| interp.get_item(frame, v, Value::Int(i as i64), span))
            .collect(),
        None => {
            // the value by its text, so the limits that follow from it name it as their root
            let what = frame
                .file
                .text
                .get(span.start..span.end)
                .filter(|t| t.len() <= 60 && !t.contains('\n') && !t.contains('`'));
            let message = match what {
                Some(t) => format!("iterating `{t}`, a traced value of unknown length"),
                None => "iterating a traced value of unknown length".to_string(),
            };
            Err(interp.error(frame, span, codes::UNSUPPORTED, message))
        }
    }
}

#[cfg(test)]
mod tests {
    /// What tracing changes is decided in this module only: no other file of the evaluator
    /// asks whether a tracer is present.
    #[test]
    fn only_this_module_asks_whether_tracing() {
        let eval = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/eval");
        let this = eval.join("types/proxy.rs");
        let mut found = vec![];
        let mut todo = vec![eval.clone()];
        while let Some(dir) = todo.pop() {
            for entry in std::fs::read_dir(&dir).expect("src/eval folder").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    todo.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") && path != this {
                    let text = std::fs::read_to_string(&path).expect("source file");
                    for (i, line) in text.lines().enumerate() {
                        if [".tracing()", "tracer.is_some()", "tracer.is_none()"]
                            .iter()
                            .any(|check| line.contains(check))
                        {
                            let file = path.strip_prefix(&eval).unwrap_or(&path);
                            found.push(format!("src/eval/{}:{}", file.display(), i + 1));
                        }
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "whether a forward is traced is decided in src/eval/types/proxy.rs; ask one of its \
             functions instead at: {}",
            found.join(", ")
        );
    }
}
