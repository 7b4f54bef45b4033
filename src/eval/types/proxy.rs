//! `Proxy`: a graph node standing for a runtime value in a traced forward. Operations on it
//! are recorded as graph nodes.

use crate::eval::call::Kwargs;
use crate::eval::value::Value;
use crate::eval::{EResult, Frame, Interp};
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
