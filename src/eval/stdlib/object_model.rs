//! Python's attribute protocol where classes customise it: `__init_subclass__` (run when a
//! subclass is defined, with the class statement's keywords), property setters, and the
//! `__getattr__` / `__setattr__` overrides (configuration classes route attributes through
//! them). `object.__setattr__` and `super().__setattr__` set the attribute itself.

use std::rc::Rc;

use tree_sitter::Node;

use super::super::value::{Class, FnKind, Object, Value};
use super::super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::syntax::{text, Span};

/// The class-namespace key under which `@name.setter`'s function is kept: not an identifier,
/// so no attribute lookup finds it by accident.
pub fn setter_key(name: &str) -> String {
    format!("{name}.setter")
}

impl Interp {
    /// After `class C(Base, kw=...)`: the nearest base's `__init_subclass__(C, kw=...)`.
    pub(in crate::eval) fn init_subclass(
        &mut self,
        frame: &Frame,
        class: &Rc<Class>,
        node: Node,
    ) -> EResult<()> {
        let hook = class.mro.borrow().iter().skip(1).find_map(|m| match m {
            Value::Class(k) => match k.ns.borrow().get("__init_subclass__") {
                Some(Value::Function(f)) => Some(f.clone()),
                _ => None,
            },
            _ => None,
        });
        let Some(hook) = hook else { return Ok(()) };
        let mut kwargs = vec![];
        if let Some(args) = node.child_by_field_name("superclasses") {
            let mut c = args.walk();
            let keywords: Vec<Node> = args
                .named_children(&mut c)
                .filter(|k| k.kind() == "keyword_argument")
                .collect();
            for k in keywords {
                let (Some(n), Some(v)) = (
                    k.child_by_field_name("name"),
                    k.child_by_field_name("value"),
                ) else {
                    continue;
                };
                let name = text(n, &frame.file.text).to_string();
                if name != "metaclass" {
                    kwargs.push((name, self.eval_expr(frame, v)?));
                }
            }
        }
        // Implicitly a classmethod: the new class is its first argument.
        let cls = Value::Class(class.clone());
        let recv = match hook.kind {
            FnKind::StaticMethod => None,
            _ => Some(cls),
        };
        self.call_function(frame, &hook, recv, vec![], kwargs, Span::of(node))?;
        Ok(())
    }

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
