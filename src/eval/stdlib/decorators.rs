//! Decorators, applied as Python applies them: innermost first, each one's result bound in
//! place of the definition. A registry decorator (timm's `@register_model`) runs at import
//! time and fills its registry; `@dataclass` builds the class's `__init__`.
//!
//! Decorators from outside the project that do not change what the function computes
//! (`torch.jit.ignore`, `torch.no_grad()`, `functools.lru_cache`, …) return the definition
//! itself, which is what torch.fx and Dynamo trace through.

use tree_sitter::Node;

use super::super::value::{FnKind, Value};
use super::super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::syntax::Span;

/// Decorators that change how the definition is bound rather than what it is; `make_function`
/// already gives the function its kind.
pub fn is_binding_decorator(text: &str) -> bool {
    matches!(
        text,
        "staticmethod"
            | "classmethod"
            | "property"
            | "functools.cached_property"
            | "cached_property"
            | "abstractmethod"
            | "abc.abstractmethod"
    ) || text.ends_with(".setter")
        || text.ends_with(".deleter")
}

/// The binding a `@staticmethod` or `@classmethod` gives the value below it.
fn method_kind_of(text: &str) -> Option<FnKind> {
    match text {
        "staticmethod" => Some(FnKind::StaticMethod),
        "classmethod" => Some(FnKind::ClassMethod),
        _ => None,
    }
}

impl Interp {
    /// Applies the decorators of a definition, in Python's order, to its value.
    pub(in crate::eval) fn apply_decorators(
        &mut self,
        frame: &Frame,
        decorators: &[Node],
        mut value: Value,
    ) -> EResult<Value> {
        // Methods are decorated as Python decorates them: a forward wrapped by a library
        // decorator (transformers' `@can_return_tuple`) runs through its wrapper, and the
        // root's placeholders come from the innermost wrapped function (`__wrapped__`, which
        // `functools.wraps` records), as torch.fx reads a signature.
        let src = &*frame.file.text;
        for d in decorators.iter().rev() {
            let t = crate::syntax::text(*d, &src).trim_start_matches('@').trim();
            if is_binding_decorator(t) {
                // `make_function` gave the definition its kind; a `@staticmethod` above a
                // wrapping decorator binds the wrapper instead, which must not take `self`.
                if let (Some(kind), Value::Function(f)) = (method_kind_of(t), &value) {
                    if f.kind != kind {
                        value = Value::Function(std::rc::Rc::new(f.with_kind(kind)));
                    }
                }
                continue;
            }
            let Some(expr) = d.named_child(0) else {
                continue;
            };
            let deco = match self.eval_expr(frame, expr) {
                Ok(v) => v,
                Err(e) if e.code == codes::BUDGET => return Err(e),
                Err(e) => {
                    self.note_error(&e);
                    continue;
                }
            };

            value = self.apply_decorator(frame, &deco, value, Span::of(*d))?;
        }
        Ok(value)
    }

    fn apply_decorator(
        &mut self,
        frame: &Frame,
        deco: &Value,
        target: Value,
        span: Span,
    ) -> EResult<Value> {
        let user_code = match deco {
            Value::Function(_) | Value::BoundMethod(..) | Value::Class(_) => true,
            Value::Object(o) => !o.is_module(),
            Value::Partial(p) => match &p.func {
                Value::External(path) => {
                    matches!(
                        &**path,
                        "dataclasses.dataclass"
                            | "functools.update_wrapper"
                            | "functools._lru_cache_of"
                    )
                }
                _ => true,
            },
            Value::External(path) => matches!(
                &**path,
                "dataclasses.dataclass"
                    | "functools.lru_cache"
                    | "functools.cache"
                    | "contextlib.contextmanager"
            ),
            _ => false,
        };
        if let Value::External(path) = deco {
            if crate::eval::trace::is_allow_in_graph(path) {
                return Ok(self.allow_in_graph(&target));
            }
        }
        if !user_code {
            return Ok(target);
        }
        match self.call_value(frame, deco, vec![target.clone()], vec![], span) {
            Ok(Value::Unknown(u)) => {
                self.note(
                    frame.file_id,
                    span,
                    codes::UNSUPPORTED,
                    format!("decorator result could not be evaluated ({}); the definition is used undecorated", u.reason),
                );
                Ok(target)
            }
            Ok(v) => Ok(v),
            Err(e) if e.code == codes::UNSUPPORTED || e.code == codes::UNRESOLVED_NAME => {
                self.note_error(&e);
                Ok(target)
            }
            Err(e) => Err(e),
        }
    }
}
