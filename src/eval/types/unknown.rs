//! `Unknown`: a value static evaluation could not determine, with the reason. Operations on
//! it give unknown values, except where a traced value is involved: those are recorded, so
//! the graph keeps the data flow.

use crate::eval::call::{any_proxy, Kwargs};
use crate::eval::value::{Unknown, Value};
use crate::eval::{EResult, Frame, Interp};
use crate::syntax::Span;

/// `u.name(*args, **kwargs)` on an unknown value `u`.
pub(in crate::eval) fn call_method(
    interp: &mut Interp,
    frame: &Frame,
    u: &Unknown,
    name: &str,
    args: Vec<Value>,
    kwargs: Kwargs,
    span: Span,
) -> EResult<Value> {
    if interp.tracing() && any_proxy(&args, &kwargs) {
        if let Some(t) = interp.tracer.as_mut() {
            t.event(
                crate::traced::EventKind::UnknownCall,
                frame.file_id,
                span,
                u.reason.clone(),
            );
        }
        return interp.trace_function(frame, &format!("<unknown>.{name}"), args, kwargs, span);
    }
    Ok(Value::unknown(format!(
        "method `{name}` of an unknown value"
    )))
}
