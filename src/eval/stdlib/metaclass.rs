//! Class creation as `type` does it, and metaclasses written in Python: a class statement
//! whose metaclass is a Python class (`metaclass=Meta`, or inherited from a base) calls it
//! with `(name, bases, namespace)` after `Meta.__prepare__`; `type.__call__` runs its
//! `__new__` and `__init__`, and `super().__new__(mcs, …)` reaches `type.__new__`, which makes
//! the class. A metaclass's `__call__` runs when its classes are instantiated, and its methods
//! are attributes of its classes. `type(name, bases, dict)` makes a class the same way.
//! Metaclasses outside the project (`abc.ABCMeta`) leave classes as `type` makes them.

use std::cell::RefCell;
use std::rc::Rc;

use super::super::call::Kwargs;
use super::super::value::{str_keyed, Class, Value};
use super::super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::syntax::Span;

/// Bases that make a Python class a metaclass.
fn is_metaclass_base(v: &Value) -> bool {
    match v {
        Value::Builtin(b) => &**b == "type",
        Value::External(p) => matches!(&**p, "abc.ABCMeta" | "enum.EnumMeta" | "enum.EnumType"),
        _ => false,
    }
}

/// Whether `class` derives from `type`.
pub fn is_metaclass(class: &Class) -> bool {
    class.mro.borrow().iter().skip(1).any(is_metaclass_base)
}

impl Interp {
    /// The Python metaclass of a class statement: the explicit `metaclass=` when it is one,
    /// else the first base's. None for `type` and for metaclasses outside the project.
    pub(in crate::eval) fn metaclass_of(
        &self,
        explicit: Option<Value>,
        bases: &[Value],
    ) -> Option<Value> {
        match explicit {
            Some(Value::Class(m)) if is_metaclass(&m) => Some(Value::Class(m)),
            Some(_) => None,
            None => bases.iter().find_map(|b| match b {
                Value::Class(c) => c.metaclass.clone(),
                _ => None,
            }),
        }
    }

    /// `Meta.__prepare__(name, bases, **kwds)`: the names the class body starts with.
    pub(in crate::eval) fn prepare_namespace(
        &mut self,
        frame: &Frame,
        meta: &Value,
        class: &Rc<Class>,
        keywords: &Kwargs,
        span: Span,
    ) -> EResult<Vec<(String, Value)>> {
        let Some(Value::Function(prepare)) = self.class_lookup(meta, "__prepare__") else {
            return Ok(vec![]);
        };
        let args = vec![Value::str(&class.name), Value::tuple(class.bases.clone())];
        let recv = Some(meta.clone());
        let ns = self.call_function(frame, &prepare, recv, args, keywords.clone(), span)?;
        Ok(match ns {
            Value::Dict(d) => str_keyed(&d.borrow()),
            _ => vec![],
        })
    }

    /// The end of a class statement with a Python metaclass: `Meta(name, bases, namespace,
    /// **kwds)`, the namespace holding the body's names (and `__module__`, `__qualname__`).
    pub(in crate::eval) fn call_metaclass(
        &mut self,
        frame: &Frame,
        meta: &Value,
        statement: &Rc<Class>,
        keywords: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let module = self.project.file(statement.file_id).module.clone();
        let mut entries = vec![
            (Value::str("__module__"), Value::str(&module)),
            (Value::str("__qualname__"), Value::str(&statement.qualname)),
        ];
        entries.extend(
            statement
                .ns
                .borrow()
                .iter()
                .map(|(k, v)| (Value::str(k), v.clone())),
        );
        let namespace = Value::Dict(Rc::new(RefCell::new(entries)));
        let args = vec![
            Value::str(&statement.name),
            Value::tuple(statement.bases.clone()),
            namespace,
        ];
        self.class_statements.push(statement.clone());
        let made = self.call_value(frame, meta, args, keywords, span);
        self.class_statements.pop();
        made
    }

    /// Calling a class made by a Python metaclass, or the metaclass itself: the metaclass's
    /// own `__call__` if it defines one, else `type.__call__`. None for other classes.
    pub(in crate::eval) fn call_through_metaclass(
        &mut self,
        frame: &Frame,
        class: &Rc<Class>,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        if is_metaclass(class) {
            return Some(self.type_call(frame, class, args.to_vec(), kwargs.clone(), span));
        }
        let meta = class.metaclass.as_ref()?;
        let Some(Value::Function(call)) = self.class_lookup(meta, "__call__") else {
            return None;
        };
        let recv = Some(Value::Class(class.clone()));
        Some(self.call_function(frame, &call, recv, args.to_vec(), kwargs.clone(), span))
    }

    /// `type(name, bases, dict)`: the bases' Python metaclass makes the class if they have
    /// one, as `type.__new__` hands it over.
    pub(in crate::eval) fn type_of_three(
        &mut self,
        frame: &Frame,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let bases = match args.get(1) {
            Some(Value::Tuple(t)) => t.to_vec(),
            _ => vec![],
        };
        if let Some(Value::Class(meta)) = self.metaclass_of(None, &bases) {
            return self.type_call(frame, &meta, args, kwargs, span);
        }
        let mut all = vec![Value::Builtin(Rc::from("type"))];
        all.extend(args);
        self.type_new(frame, &all, kwargs, span)
    }

    /// `type.__call__(meta, name, bases, namespace)`: `meta.__new__`, then `meta.__init__` on
    /// the class it made when that is an instance of `meta`.
    fn type_call(
        &mut self,
        frame: &Frame,
        meta: &Rc<Class>,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let meta_value = Value::Class(meta.clone());
        let made = match self.class_lookup(&meta_value, "__new__") {
            // `__new__` is a static method: the metaclass is its first argument.
            Some(Value::Function(new)) => {
                let mut all = vec![meta_value.clone()];
                all.extend(args.iter().cloned());
                self.call_function(frame, &new, None, all, kwargs.clone(), span)?
            }
            _ => {
                let mut all = vec![meta_value.clone()];
                all.extend(args.iter().cloned());
                self.type_new(frame, &all, kwargs.clone(), span)?
            }
        };
        let is_instance = matches!(&made, Value::Class(c)
            if c.metaclass.as_ref().is_some_and(|m| self.class_derives(m, meta)));
        if is_instance {
            if let Some(Value::Function(init)) = self.class_lookup(&meta_value, "__init__") {
                self.call_function(frame, &init, Some(made.clone()), args, kwargs, span)?;
            }
        }
        Ok(made)
    }

    fn class_derives(&self, class: &Value, base: &Rc<Class>) -> bool {
        match class {
            Value::Class(c) => c
                .mro
                .borrow()
                .iter()
                .any(|m| matches!(m, Value::Class(k) if Rc::ptr_eq(k, base))),
            _ => false,
        }
    }

    /// `type.__new__(mcs, name, bases, namespace, **kwds)` (and `type(name, bases, dict)`):
    /// a new class whose metaclass is `mcs`, with `__set_name__` and the bases'
    /// `__init_subclass__(**kwds)` run on it.
    pub(in crate::eval) fn type_new(
        &mut self,
        frame: &Frame,
        args: &[Value],
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let (Some(mcs), Some(Value::Str(name)), Some(bases), Some(Value::Dict(namespace))) =
            (args.first(), args.get(1), args.get(2), args.get(3))
        else {
            return Err(self.error(
                frame,
                span,
                codes::RAISED,
                "TypeError: type.__new__() takes exactly 3 arguments (name, bases, dict)",
            ));
        };
        let bases = match bases {
            Value::Tuple(t) => t.to_vec(),
            Value::Unknown(_) => vec![bases.clone()],
            _ => {
                return Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    "TypeError: type.__new__() argument 2 must be tuple",
                ))
            }
        };
        let mut ns: crate::eval::value::Names =
            str_keyed(&namespace.borrow()).into_iter().collect();
        let qualname = match ns.shift_remove("__qualname__") {
            Some(Value::Str(q)) => q.to_string(),
            _ => name.to_string(),
        };
        // The class statement being completed, if this call completes one: where it is.
        let statement = self
            .class_statements
            .last()
            .filter(|s| s.name == **name && s.qualname == qualname)
            .cloned();
        let (file_id, class_span) = match &statement {
            Some(s) => (s.file_id, s.span),
            None => (frame.file_id, span),
        };
        let metaclass = match mcs {
            Value::Class(m) if is_metaclass(m) => Some(mcs.clone()),
            _ => self.metaclass_of(None, &bases),
        };
        let class = Rc::new(Class {
            name: name.to_string(),
            qualname,
            file_id,
            span: class_span,
            bases,
            ns: RefCell::new(ns),
            mro: Default::default(),
            metaclass,
        });
        self.created.class(&class);
        let mro = self.compute_mro(&class);
        *class.mro.borrow_mut() = mro;
        self.make_enum_members(&class);
        self.finish_class(frame, &class, kwargs, span)?;
        Ok(Value::Class(class))
    }

    /// What `type.__new__` does after making a class: each attribute's `__set_name__(owner,
    /// name)`, then the nearest base's `__init_subclass__` (an implicit classmethod) with the
    /// class statement's keywords, which `object.__init_subclass__` refuses.
    pub(in crate::eval) fn finish_class(
        &mut self,
        frame: &Frame,
        class: &Rc<Class>,
        keywords: Kwargs,
        span: Span,
    ) -> EResult<()> {
        let owner = Value::Class(class.clone());
        let attrs: Vec<(String, Value)> = class
            .ns
            .borrow()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (name, v) in attrs {
            let Value::Object(o) = &v else { continue };
            if let Some(set_name) = self.user_method(&o.class, "__set_name__") {
                let args = vec![owner.clone(), Value::str(&name)];
                self.call_function(frame, &set_name, Some(v.clone()), args, vec![], span)?;
            }
        }
        let hook = class.mro.borrow().iter().skip(1).find_map(|m| match m {
            Value::Class(k) => match k.ns.borrow().get("__init_subclass__") {
                Some(Value::Function(f)) => Some(f.clone()),
                _ => None,
            },
            _ => None,
        });
        match hook {
            Some(f) => {
                self.call_function(frame, &f, None, vec![owner], keywords, span)?;
            }
            None if !keywords.is_empty() && class.mro.borrow().iter().all(plain_base) => {
                return Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!(
                        "TypeError: {}.__init_subclass__() takes no keyword arguments",
                        class.name
                    ),
                ));
            }
            None => {}
        }
        Ok(())
    }
}

/// A base whose `__init_subclass__` is known to be `object`'s.
fn plain_base(m: &Value) -> bool {
    matches!(m, Value::Class(_)) || matches!(m, Value::Builtin(b) if &**b == "object")
}

impl Interp {
    /// `super().__new__(mcs, …)`, `super().__call__(…)` and `super().__init__(…)` in a
    /// metaclass, reaching `type`'s. None for other methods.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::eval) fn call_type_method(
        &mut self,
        frame: &Frame,
        recv: &Rc<Value>,
        base: &str,
        method: &str,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        if !is_metaclass_base(&Value::Builtin(Rc::from(base)))
            && !is_metaclass_base(&Value::External(Rc::from(base)))
        {
            return None;
        }
        match method {
            "__new__" => Some(self.type_new(frame, args, kwargs.clone(), span)),
            "__call__" => Some(self.construct(frame, recv, args.to_vec(), kwargs.clone(), span)),
            "__init__" => Some(Ok(Value::None)),
            _ => None,
        }
    }
}
