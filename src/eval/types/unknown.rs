//! `Unknown`: a value static evaluation could not determine, with the reason. Operations on
//! it give unknown values, except where a traced value is involved: those are recorded, so
//! the graph keeps the data flow.

use crate::eval::types::proxy;
use std::rc::Rc;

use crate::eval::call::{as_int, Kwargs};
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
    if proxy::records_call(interp, &args, &kwargs) {
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

/// `u[key]`: unknown too; an unknown submodule's path extends by an integer index
/// (`layers.0`).
pub(in crate::eval) fn get_item(u: &Unknown, key: &Value) -> Value {
    let path = u
        .path
        .as_ref()
        .and_then(|p| as_int(key).map(|i| format!("{p}.{i}")));
    Value::Unknown(Rc::new(Unknown {
        reason: u.reason.clone(),
        path,
        spread: false,
        made_by: None,
    }))
}
