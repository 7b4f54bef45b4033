//! `Proxy`: a graph node standing for a runtime value in a traced forward. Operations on it
//! are recorded as graph nodes.

use crate::diagnostics::codes;
use crate::eval::call::Kwargs;
use crate::eval::value::Value;
use crate::eval::{EResult, Frame, Interp};
use crate::graph::NodeId;
use crate::syntax::Span;

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
        None => Err(interp.error(
            frame,
            span,
            codes::UNSUPPORTED,
            "iterating a traced value of unknown length",
        )),
    }
}
