//! Custom operators (`torch.library.custom_op("ns::name", fn, ...)`): Dynamo does not trace
//! into one; each call of `torch.ops.ns.name` is one `call_function` node, its output's shape
//! found by running the fake (meta) implementation registered with
//! `torch.library.register_fake("ns::name", fake)` on fake tensors. Here the fake runs on a
//! scratch tracer (as an `allow_in_graph` body does), and only its output's shape is kept.

use crate::eval::value::Value;
use crate::eval::{EResult, Frame, Interp};
use crate::graph::Op;
use crate::syntax::Span;

/// `ns::name` for `torch.ops.ns.name` (or its overload `torch.ops.ns.name.default`).
fn qualified_op(path: &str) -> Option<String> {
    let rest = path.strip_prefix("torch.ops.")?;
    let mut parts = rest.split('.');
    let (ns, name) = (parts.next()?, parts.next()?);
    Some(format!("{ns}::{name}"))
}

impl Interp {
    /// `torch.library.register_fake(name, fake)`: remembers `fake` for calls of `name`.
    pub(in crate::eval) fn register_fake(&mut self, args: &[Value]) -> Value {
        match (args.first(), args.get(1)) {
            (Some(Value::Str(name)), Some(fake)) => {
                self.custom_op_fakes.insert(name.to_string(), fake.clone());
                fake.clone()
            }
            _ => Value::unknown("`torch.library.register_fake` used as a decorator"),
        }
    }

    /// The registered fake implementation of the custom op `path` names, if any.
    pub(in crate::eval) fn custom_op_fake(&self, path: &str) -> Option<Value> {
        self.custom_op_fakes.get(&qualified_op(path)?).cloned()
    }

    /// A call of a custom op while tracing: one node, shaped by the op's fake.
    pub(in crate::eval) fn call_custom_op(
        &mut self,
        frame: &Frame,
        path: &str,
        fake: &Value,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        span: Span,
    ) -> EResult<Value> {
        let meta = self.scratch_output_meta(frame, fake, &args, &kwargs, span)?;
        let (a, _) = self.to_args(frame, &args, span)?;
        let (k, _) = self.kw_args(frame, &kwargs, span)?;
        self.check_graph_size(frame, span)?;
        let name = path.rsplit('.').next().unwrap_or(path);
        let n = self.tracer_mut().add_node(
            name,
            Op::CallFunction,
            path.to_string(),
            a,
            k,
            meta,
            frame.file_id,
            span,
        );
        Ok(Value::Proxy(n))
    }
}
