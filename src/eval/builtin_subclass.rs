//! Subclasses of builtin scalars and sequences (`class Tag(str)`, `class Size(int)`,
//! `class Shape(tuple)`, `class Layers(list)`), as CPython has them: an instance *is* the
//! builtin value plus a `__dict__`. The value lives on the instance (`Object::base`), made by
//! the builtin's `__new__` (reached by construction, `super().__new__(cls, v)` or
//! `str.__new__(cls, v)`); whatever the class does not override (methods, operators, items,
//! iteration, conversions) is the builtin's slot applied to that value.

use std::rc::Rc;

use super::call::Kwargs;
use super::value::{ObjKind, Object, Value};
use super::{EResult, Frame, Interp};
use crate::syntax::Span;

/// The builtins whose subclasses keep their value on the instance.
const BASES: &[&str] = &["str", "int", "float", "tuple", "list"];

pub(in crate::eval) fn is_value_base(name: &str) -> bool {
    BASES.contains(&name)
}

/// The builtin a class derives its value from (`Tag(str)` → `str`; an `IntEnum` → `int`).
pub(in crate::eval) fn value_base_of(class: &Value) -> Option<Rc<str>> {
    let Value::Class(c) = class else {
        return None;
    };
    let mro = c.mro.borrow();
    mro.iter().find_map(|m| match m {
        Value::Builtin(b) if is_value_base(b) => Some(b.clone()),
        Value::External(p) => match &**p {
            "enum.IntEnum" | "enum.IntFlag" => Some(Rc::from("int")),
            "enum.StrEnum" => Some(Rc::from("str")),
            _ => None,
        },
        _ => None,
    })
}

impl Interp {
    /// The builtin value `v` stands for where the builtin's slot `dunder` is used: that of an
    /// instance of a builtin's subclass that does not define `dunder` in Python.
    pub(in crate::eval) fn builtin_view(&self, v: &Value, dunder: &str) -> Option<Value> {
        match v {
            Value::Object(o) if o.base.is_some() => {
                if self.user_method(&o.class, dunder).is_some() {
                    return None;
                }
                o.base.clone()
            }
            _ => None,
        }
    }

    /// `v` itself, or the builtin value it is when its class leaves `dunder` to the builtin.
    pub(in crate::eval) fn as_builtin(&self, v: &Value, dunder: &str) -> Value {
        self.builtin_view(v, dunder).unwrap_or_else(|| v.clone())
    }

    /// The arguments of the builtin function `name` (`len`, `int`, `str`, `sorted`, …) with
    /// each instance of a builtin's subclass replaced by its value where the class leaves the
    /// slot the function uses to the builtin (`str(tag)` without a `__str__` of `Tag`'s). An
    /// enum member's `str`/`repr` is the enum's, not its value's.
    pub(in crate::eval) fn builtin_args(&self, name: &str, args: Vec<Value>) -> Vec<Value> {
        if !args
            .iter()
            .any(|a| matches!(a, Value::Object(o) if o.base.is_some()))
        {
            return args;
        }
        let slot = match name {
            "len" => "__len__",
            "int" => "__int__",
            "float" => "__float__",
            "bool" => "__bool__",
            "str" => "__str__",
            "repr" => "__repr__",
            "abs" => "__abs__",
            "round" => "__round__",
            "divmod" => "__divmod__",
            "list" | "tuple" | "set" | "frozenset" | "sorted" | "sum" | "min" | "max" | "any"
            | "all" | "enumerate" | "zip" | "reversed" | "iter" | "map" | "filter" | "dict" => {
                "__iter__"
            }
            _ => return args,
        };
        let shown_by_class = |o: &Object| {
            matches!(name, "str" | "repr")
                && (matches!(&o.class, Value::Class(c) if super::stdlib::enums::is_enum_class(c))
                    || !matches!(&o.base, Some(Value::Str(_)))
                        && self.user_method(&o.class, "__repr__").is_some())
        };
        args.into_iter()
            .map(|a| match &a {
                Value::Object(o) if o.base.is_some() && !shown_by_class(o) => {
                    self.as_builtin(&a, slot)
                }
                _ => a,
            })
            .collect()
    }

    /// `base.__new__(cls, *args)`: an instance of `cls` that is the builtin value `base(*args)`
    /// (an empty list for `list`, whose `__init__` fills it).
    pub(in crate::eval) fn builtin_new(
        &mut self,
        frame: &Frame,
        base: &str,
        cls: &Value,
        args: Vec<Value>,
        span: Span,
    ) -> EResult<Value> {
        let value = match base {
            "list" => Value::list(vec![]),
            // `str()`, `int()`, `tuple()` of nothing are the empty values
            _ if args.is_empty() => match base {
                "str" => Value::str(""),
                "int" => Value::Int(0),
                "float" => Value::Float(0.0),
                _ => Value::tuple(vec![]),
            },
            _ => self.call_builtin(frame, base, args, vec![], span)?,
        };
        if value.is_unknown() {
            return Ok(value);
        }
        let id = self.new_object_id();
        let o = Rc::new(Object {
            id,
            class: cls.clone(),
            kind: ObjKind::Plain,
            attrs: Default::default(),
            base: Some(value),
        });
        self.created.object(&o);
        Ok(Value::Object(o))
    }

    /// `type.__call__` for a subclass of a value builtin: its `__new__` (the class's own, or
    /// the builtin's), then `__init__` on an instance of the class (the list's fills it).
    pub(in crate::eval) fn construct_builtin_subclass(
        &mut self,
        frame: &Frame,
        class: &Value,
        base: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let made = match self.user_method(class, "__new__") {
            Some(f) => {
                let mut all = vec![class.clone()];
                all.extend(args.iter().cloned());
                self.call_function(frame, &f, None, all, kwargs.clone(), span)?
            }
            None if base == "list" => self.builtin_new(frame, base, class, vec![], span)?,
            None => self.builtin_new(frame, base, class, args.clone(), span)?,
        };
        let Value::Object(o) = &made else {
            return Ok(made);
        };
        if !matches!(self.isinstance(&made, class), Value::Bool(true)) {
            return Ok(made);
        }
        match self.user_method(class, "__init__") {
            Some(f) => {
                self.call_function(frame, &f, Some(made.clone()), args, kwargs, span)?;
            }
            None => {
                if let (Some(Value::List(l)), Some(items)) = (&o.base, args.first()) {
                    let items = self.iterate(frame, items, span)?;
                    l.borrow_mut().extend(items);
                }
            }
        }
        Ok(made)
    }

    /// `super().method(...)` reaching the value builtin `base` (`super().__new__(cls, v)`,
    /// `super().append(x)`, `super().__init__(items)`): the builtin's method on the value.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::eval) fn builtin_super_method(
        &mut self,
        frame: &Frame,
        recv: &Value,
        base: &str,
        method: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        if method == "__new__" {
            let mut args = args.into_iter();
            let cls = args.next().unwrap_or_else(|| recv.clone());
            return self.builtin_new(frame, base, &cls, args.collect(), span);
        }
        let value = match recv {
            Value::Object(o) => o.base.clone(),
            _ => None,
        };
        let Some(value) = value else {
            return Ok(Value::unknown(format!("`{base}.{method}`")));
        };
        match (method, &value) {
            ("__init__", Value::List(l)) => {
                if let Some(items) = args.first() {
                    let items = self.iterate(frame, items, span)?;
                    let mut l = l.borrow_mut();
                    l.clear();
                    l.extend(items);
                }
                Ok(Value::None)
            }
            ("__init__", _) => Ok(Value::None),
            _ => {
                let m = self.get_attr(frame, &value, method, span)?;
                self.call_value(frame, &m, args, kwargs, span)
            }
        }
    }
}
