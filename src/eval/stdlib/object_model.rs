//! Python's attribute protocol where classes customise it: property setters and the
//! `__getattr__` / `__setattr__` overrides (configuration classes route attributes through
//! them). `object.__setattr__` and `super().__setattr__` set the attribute itself.

use std::rc::Rc;

use super::super::value::{Object, Value};
use super::super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::syntax::Span;

/// The class-namespace key under which `@name.setter`'s function is kept: not an identifier,
/// so no attribute lookup finds it by accident.
pub fn setter_key(name: &str) -> String {
    format!("{name}.setter")
}

impl Interp {
    /// `obj.name = v` through the class: a property's setter, or a `__setattr__` override of a
    /// plain object. None when the attribute is simply stored.
    pub(in crate::eval) fn custom_setattr(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        name: &str,
        v: &Value,
        span: Span,
    ) -> Option<EResult<()>> {
        let recv = Value::Object(obj.clone());
        if let Some(Value::Function(setter)) = self.class_lookup(&obj.class, &setter_key(name)) {
            return Some(
                self.call_function(frame, &setter, Some(recv), vec![v.clone()], vec![], span)
                    .map(|_| ()),
            );
        }
        if obj.is_module() {
            return None;
        }
        match self.class_lookup(&obj.class, "__setattr__") {
            Some(Value::Function(f)) => Some(
                self.call_function(
                    frame,
                    &f,
                    Some(recv),
                    vec![Value::str(name), v.clone()],
                    vec![],
                    span,
                )
                .map(|_| ()),
            ),
            _ => None,
        }
    }

    /// `obj.name` that the object and its class do not have: the class's `__getattr__`.
    pub(in crate::eval) fn custom_getattr(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        name: &str,
        span: Span,
    ) -> Option<EResult<Value>> {
        match self.class_lookup(&obj.class, "__getattr__") {
            Some(Value::Function(f)) => Some(self.call_function(
                frame,
                &f,
                Some(Value::Object(obj.clone())),
                vec![Value::str(name)],
                vec![],
                span,
            )),
            _ => None,
        }
    }

    /// `object.__setattr__(obj, name, v)` and `super().__setattr__(name, v)`: the attribute
    /// itself, past any override.
    pub(in crate::eval) fn raw_setattr(
        &mut self,
        frame: &Frame,
        obj: &Value,
        args: &[Value],
        span: Span,
    ) -> EResult<Value> {
        match (obj, args) {
            (Value::Object(o), [Value::Str(name), v]) => {
                o.attrs.borrow_mut().insert(name.to_string(), v.clone());
                Ok(Value::None)
            }
            (_, [_, Value::Str(_), _]) | (_, [Value::Str(_), _]) => Ok(Value::None),
            _ => Err(self.error(
                frame,
                span,
                codes::UNSUPPORTED,
                "`__setattr__` with an attribute name that is not a constant",
            )),
        }
    }
}
