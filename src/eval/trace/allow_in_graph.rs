//! `torch.compiler.allow_in_graph` / `torch._dynamo.allow_in_graph`: Dynamo does not trace
//! into such a function; each call is one `call_function` node whose target is the function
//! itself (`module.qualname`), its output's shape found by running the function on fake
//! tensors. Here the body runs on a scratch tracer whose placeholders stand for the traced
//! arguments; only the output's shape is kept, so nothing inside (nodes, break events)
//! reaches the graph.

use std::rc::Rc;

use super::Tracer;
use crate::diagnostics::codes;
use crate::eval::value::{Function, Value};
use crate::eval::{EResult, Frame, Interp};
use crate::graph::Op;
use crate::shapes::Meta;
use crate::syntax::Span;

/// The two spellings of the registration (as a decorator or called on a function).
pub fn is_allow_in_graph(path: &str) -> bool {
    matches!(
        path,
        "torch.compiler.allow_in_graph" | "torch._dynamo.allow_in_graph"
    )
}

impl Tracer {
    /// A tracer for a body whose nodes are thrown away: same module paths, same call chain.
    fn scratch(&self) -> Tracer {
        Tracer {
            module_paths: self.module_paths.clone(),
            buffer_paths: self.buffer_paths.clone(),
            call_chain: self.call_chain.clone(),
            inline_depth: self.inline_depth,
            ..Default::default()
        }
    }
}

impl Interp {
    /// `allow_in_graph(f)`: registers `f` (or each function of a list) and returns it.
    pub(in crate::eval) fn allow_in_graph(&mut self, v: &Value) -> Value {
        match v {
            Value::Function(f) => {
                self.allowed_in_graph.insert((f.file_id, f.span));
            }
            Value::List(items) => {
                for item in items.borrow().iter() {
                    self.allow_in_graph(item);
                }
            }
            Value::Tuple(items) => {
                for item in items.iter() {
                    self.allow_in_graph(item);
                }
            }
            _ => {}
        }
        v.clone()
    }

    pub(in crate::eval) fn is_allowed_in_graph(&self, f: &Function) -> bool {
        self.allowed_in_graph.contains(&(f.file_id, f.span))
    }

    /// A call of an allowed function while tracing: one node, the body only for its shape.
    pub(in crate::eval) fn call_allowed_in_graph(
        &mut self,
        frame: &Frame,
        f: &Rc<Function>,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        span: Span,
    ) -> EResult<Value> {
        let meta = self.allowed_output_meta(frame, f, &args, &kwargs, span)?;
        let (a, _) = self.to_args(frame, &args, span)?;
        let (k, _) = self.kw_args(frame, &kwargs, span)?;
        let target = format!("{}.{}", f.globals.name, f.qualname);
        let n = self.tracer_mut().add_node(
            &f.name,
            Op::CallFunction,
            target,
            a,
            k,
            meta,
            frame.file_id,
            span,
        );
        Ok(Value::Proxy(n))
    }

    fn allowed_output_meta(
        &mut self,
        frame: &Frame,
        f: &Rc<Function>,
        args: &[Value],
        kwargs: &[(String, Value)],
        span: Span,
    ) -> EResult<Meta> {
        // The registration is lifted while the body runs, or the call would find itself.
        let identity = (f.file_id, f.span);
        self.allowed_in_graph.remove(&identity);
        let meta = self.scratch_output_meta(frame, &Value::Function(f.clone()), args, kwargs, span);
        self.allowed_in_graph.insert(identity);
        meta
    }

    /// What `callee(*args, **kwargs)` returns, run on a scratch tracer whose placeholders stand
    /// for the traced arguments: only the output's abstract value is kept, no node or event.
    pub(in crate::eval) fn scratch_output_meta(
        &mut self,
        frame: &Frame,
        callee: &Value,
        args: &[Value],
        kwargs: &[(String, Value)],
        span: Span,
    ) -> EResult<Meta> {
        let Some(main) = self.tracer.take() else {
            return Ok(Meta::Unknown);
        };
        let mut scratch = main.scratch();
        let mut count = 0;
        let args: Vec<Value> = args
            .iter()
            .map(|v| stand_in(&main, &mut scratch, v, &mut count, frame, span))
            .collect();
        let kwargs: Vec<(String, Value)> = kwargs
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    stand_in(&main, &mut scratch, v, &mut count, frame, span),
                )
            })
            .collect();
        self.tracer = Some(scratch);
        let result = self.call_value(frame, callee, args, kwargs, span);
        let scratch = self.tracer.replace(main).expect("scratch tracer");
        // what the body wrote went to the scratch tracer: a replay must not rely on any of it
        self.note_replay_write(0);
        match result {
            Ok(v) => Ok(output_meta(&scratch, &v)),
            Err(e) if e.code == codes::BUDGET => Err(e),
            Err(e) => {
                self.note_error(&e);
                Ok(Meta::Unknown)
            }
        }
    }
}

/// The scratch tracer's placeholder for each traced value in `v` (nested in tuples and lists).
fn stand_in(
    main: &Tracer,
    scratch: &mut Tracer,
    v: &Value,
    count: &mut usize,
    frame: &Frame,
    span: Span,
) -> Value {
    match v {
        Value::Proxy(n) => {
            *count += 1;
            let name = format!("arg{count}");
            let meta = main.meta(*n).clone();
            Value::Proxy(scratch.placeholder(&name, None, meta, frame.file_id, span))
        }
        Value::Tuple(items) => Value::Tuple(Rc::new(
            items
                .iter()
                .map(|x| stand_in(main, scratch, x, count, frame, span))
                .collect(),
        )),
        Value::List(items) => {
            let items: Vec<Value> = items
                .borrow()
                .iter()
                .map(|x| stand_in(main, scratch, x, count, frame, span))
                .collect();
            Value::list(items)
        }
        other => other.clone(),
    }
}

fn output_meta(scratch: &Tracer, v: &Value) -> Meta {
    match v {
        Value::Proxy(n) => scratch.meta(*n).clone(),
        Value::Tuple(items) => Meta::Seq(items.iter().map(|x| output_meta(scratch, x)).collect()),
        other => super::value_meta(other),
    }
}
