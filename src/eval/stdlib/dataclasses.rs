//! `@dataclass` and its helpers: the generated `__init__` (defaults, `field(default_factory=…)`,
//! `__post_init__`), `fields`, `asdict`, `astuple`, `replace`, `is_dataclass`.
//!
//! A dataclass keeps its fields, base fields first, in the class attribute
//! `__dataclass_fields__`, a dict from name to `dataclasses.Field` record as in CPython, and
//! its `__init__` is the builtin [`INIT`], which binds arguments to those fields. The other
//! methods it generates are Python (`python/dataclasses.py`): `__eq__` over the compared
//! fields, and for `frozen=True` a `__setattr__`/`__delattr__` that raise
//! `FrozenInstanceError` (the generated `__init__` sets fields past them, as CPython's does
//! through `object.__setattr__`).

use crate::syntax::KindExt;
use std::cell::RefCell;
use std::rc::Rc;

use tree_sitter::Node;

use super::super::call::Kwargs;
use super::super::value::{Class, FnParam, ObjKind, Object, Value};
use super::super::{EResult, Frame, Interp};
use crate::catalog::ParamKind;
use crate::diagnostics::codes;
use crate::syntax::{text, FieldExt, Span};

/// The `__init__` `@dataclass` generates.
pub const INIT: &str = "dataclasses.__init__";
const FIELDS: &str = "__dataclass_fields__";
const MISSING: &str = "dataclasses.MISSING";
const FIELD_CLASS: &str = "dataclasses.Field";
/// The bundled generated methods (`python/dataclasses.py`).
pub(super) const EQ: &str = "staticfx.dataclasses.__eq__";
pub(super) const FROZEN_SETATTR: &str = "staticfx.dataclasses._frozen_setattr";
pub(super) const FROZEN_DELATTR: &str = "staticfx.dataclasses._frozen_delattr";

fn missing() -> Value {
    Value::External(Rc::from(MISSING))
}

fn is_missing(v: &Value) -> bool {
    matches!(v, Value::External(p) if &**p == MISSING)
}

fn is_field(v: &Value) -> bool {
    matches!(v, Value::Object(o) if matches!(&o.class, Value::External(p) if &**p == FIELD_CLASS))
}

fn kwarg<'a>(kwargs: &'a Kwargs, name: &str) -> Option<&'a Value> {
    kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

impl Interp {
    fn new_field(&mut self, name: &str, default: Value, factory: Value, flags: &Kwargs) -> Value {
        let flag = |name: &str| !matches!(kwarg(flags, name), Some(Value::Bool(false)));
        let id = self.new_object_id();
        let o = Object {
            id,
            class: Value::External(Rc::from(FIELD_CLASS)),
            kind: ObjKind::Plain,
            attrs: Default::default(),
            base: None,
        };
        {
            let mut a = o.attrs.borrow_mut();
            a.insert("name".into(), Value::str(name));
            a.insert("default".into(), default);
            a.insert("default_factory".into(), factory);
            a.insert("init".into(), Value::Bool(flag("init")));
            a.insert("repr".into(), Value::Bool(flag("repr")));
            a.insert("compare".into(), Value::Bool(flag("compare")));
            a.insert("metadata".into(), Value::Dict(Default::default()));
        }
        Value::Object(Rc::new(o))
    }

    pub(in crate::eval) fn call_dataclasses(
        &mut self,
        frame: &Frame,
        name: &str,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        let a0 = args.first().cloned().unwrap_or(Value::None);
        Some(match name {
            // `field(...)` in a class body: a record the decorator reads.
            "field" => {
                let default = kwarg(kwargs, "default").cloned().unwrap_or_else(missing);
                let factory = kwarg(kwargs, "default_factory")
                    .cloned()
                    .unwrap_or_else(missing);
                let field = self.new_field("", default, factory, kwargs);
                if let (Value::Object(o), Some(m @ Value::Dict(_))) =
                    (&field, kwarg(kwargs, "metadata"))
                {
                    o.attrs.borrow_mut().insert("metadata".into(), m.clone());
                }
                Ok(field)
            }
            "fields" => match dataclass_fields(&class_of(&a0)) {
                Some(f) => Ok(Value::tuple(f)),
                None => Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    "TypeError: must be called with a dataclass type or instance",
                )),
            },
            "is_dataclass" => Ok(Value::Bool(dataclass_fields(&class_of(&a0)).is_some())),
            "asdict" | "astuple" => {
                if dataclass_fields(&class_of(&a0)).is_none() || matches!(a0, Value::Class(_)) {
                    return Some(Err(self.error(
                        frame,
                        span,
                        codes::RAISED,
                        format!("TypeError: {name}() should be called on dataclass instances"),
                    )));
                }
                self.as_plain(frame, &a0, name == "asdict", span)
            }
            "replace" => self.dataclass_replace(frame, &a0, kwargs, span),
            "dataclass" => {
                // `@dataclass` and `@dataclass(...)`: the latter returns the decorator itself.
                match &a0 {
                    Value::Class(c) => self.make_dataclass(c, kwargs).map(|_| a0.clone()),
                    _ => Ok(Value::Partial(Rc::new(super::super::value::Partial {
                        func: Value::External(Rc::from("dataclasses.dataclass")),
                        args: vec![],
                        kwargs: kwargs.clone(),
                    }))),
                }
            }
            _ => return None,
        })
    }

    /// What `@dataclass` does to a class: collect its fields (annotated class attributes in
    /// source order, after the fields of dataclass bases), turn `field(...)` defaults into
    /// class attributes, and give it the generated `__init__` unless it defines its own.
    pub(in crate::eval) fn make_dataclass(
        &mut self,
        class: &Rc<Class>,
        kwargs: &Kwargs,
    ) -> EResult<()> {
        let mut fields: Vec<Value> = Vec::new();
        let mro = class.mro.borrow().clone();
        for base in mro.iter().skip(1).rev() {
            for f in dataclass_fields(base).unwrap_or_default() {
                let n = field_name(&f);
                fields.retain(|g| field_name(g) != n);
                fields.push(f);
            }
        }
        for name in self.annotated_names(class) {
            let declared = class.ns.borrow().get(&name).cloned();
            let field = match declared {
                Some(f) if is_field(&f) => {
                    if let Value::Object(o) = &f {
                        o.attrs
                            .borrow_mut()
                            .insert("name".into(), Value::str(&name));
                        let default = o.get("default").unwrap_or_else(missing);
                        if is_missing(&default) {
                            class.ns.borrow_mut().shift_remove(&name);
                        } else {
                            class.ns.borrow_mut().insert(name.clone(), default);
                        }
                    }
                    f
                }
                Some(default) => self.new_field(&name, default, missing(), &vec![]),
                None => self.new_field(&name, missing(), missing(), &vec![]),
            };
            if let Value::Object(o) = &field {
                // The annotation as an object is typing's business; nothing here reads it.
                let ty = Value::unknown(format!("the annotation of field `{name}`"));
                o.attrs.borrow_mut().insert("type".into(), ty);
            }
            fields.retain(|g| field_name(g) != name);
            fields.push(field);
        }
        let by_name = fields
            .into_iter()
            .map(|f| (Value::str(&field_name(&f)), f))
            .collect();
        class
            .ns
            .borrow_mut()
            .insert(FIELDS.into(), Value::Dict(Rc::new(RefCell::new(by_name))));
        let params = self.dataclass_params(kwargs);
        class
            .ns
            .borrow_mut()
            .insert("__dataclass_params__".into(), params);
        let wants_init = !matches!(kwarg(kwargs, "init"), Some(Value::Bool(false)));
        if wants_init && !class.ns.borrow().contains_key("__init__") {
            class
                .ns
                .borrow_mut()
                .insert("__init__".into(), Value::Builtin(Rc::from(INIT)));
        }
        let flag = |name: &str, default: bool| match kwarg(kwargs, name) {
            Some(Value::Bool(b)) => *b,
            _ => default,
        };
        let mut generated = vec![];
        if flag("eq", true) {
            generated.push(("__eq__", EQ));
        }
        if flag("frozen", false) {
            generated.push(("__setattr__", FROZEN_SETATTR));
            generated.push(("__delattr__", FROZEN_DELATTR));
        }
        for (name, path) in generated {
            if class.ns.borrow().contains_key(name) {
                continue;
            }
            if let Some(method) = self.bundled_class(path) {
                class.ns.borrow_mut().insert(name.into(), method);
            }
        }
        Ok(())
    }

    /// The `__dataclass_params__` record: the decorator's flags with Python's defaults.
    fn dataclass_params(&mut self, kwargs: &Kwargs) -> Value {
        let id = self.new_object_id();
        let o = Object {
            id,
            class: Value::External(Rc::from("dataclasses._DataclassParams")),
            kind: ObjKind::Plain,
            attrs: Default::default(),
            base: None,
        };
        for (flag, default) in [
            ("init", true),
            ("repr", true),
            ("eq", true),
            ("order", false),
            ("unsafe_hash", false),
            ("frozen", false),
            ("kw_only", false),
        ] {
            let v = kwarg(kwargs, flag).cloned().unwrap_or(Value::Bool(default));
            o.attrs.borrow_mut().insert(flag.into(), v);
        }
        Value::Object(Rc::new(o))
    }

    /// Names with an annotation in the class body (`x: int = 1`, `y: list`), in source order;
    /// `ClassVar` annotations are not fields.
    pub(in crate::eval) fn annotated_names(&self, class: &Class) -> Vec<String> {
        let file = self.project.file(class.file_id);
        let tree = file.tree();
        let Some(node) = super::super::call::find_node(&tree, class.span) else {
            return vec![];
        };
        let Some(body) = node.field("body") else {
            return vec![];
        };
        let mut out = Vec::new();
        let stmts: Vec<Node> = crate::syntax::named_children(body).collect();
        for s in stmts {
            if s.kind_name() != "expression_statement" {
                continue;
            }
            let Some(a) = s.named_child(0).filter(|a| a.kind_name() == "assignment") else {
                continue;
            };
            let (Some(left), Some(ty)) = (a.field("left"), a.field("type")) else {
                continue;
            };
            let t = text(ty, &file.text);
            if left.kind_name() != "identifier" || t.contains("ClassVar") {
                continue;
            }
            out.push(text(left, &file.text).to_string());
        }
        out
    }

    /// The generated `__init__(self, <fields>)`: binds like a Python signature with the
    /// fields' defaults, calls each `default_factory` per instance, then `__post_init__`.
    pub(in crate::eval) fn dataclass_init(
        &mut self,
        frame: &Frame,
        obj: &Value,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<()> {
        let Value::Object(o) = obj else {
            return Ok(());
        };
        let fields = dataclass_fields(&o.class).unwrap_or_default();
        let params: Vec<FnParam> = fields
            .iter()
            .filter(|f| !matches!(field_attr(f, "init"), Value::Bool(false)))
            .map(|f| {
                let default = field_attr(f, "default");
                let factory = field_attr(f, "default_factory");
                FnParam {
                    name: field_name(f),
                    kind: ParamKind::PositionalOrKeyword,
                    default: if !is_missing(&default) {
                        Some(default)
                    } else if !is_missing(&factory) {
                        Some(Value::External(Rc::from(
                            "dataclasses._HAS_DEFAULT_FACTORY",
                        )))
                    } else {
                        None
                    },
                }
            })
            .collect();
        let bound = self.bind(frame, &params, args, kwargs, "__init__", span)?;
        for (name, v) in bound {
            let v = match &v {
                Value::External(p) if &**p == "dataclasses._HAS_DEFAULT_FACTORY" => {
                    let factory = fields
                        .iter()
                        .find(|f| field_name(f) == name)
                        .map(|f| field_attr(f, "default_factory"))
                        .unwrap_or(Value::None);
                    self.call_value(frame, &factory, vec![], vec![], span)?
                }
                _ => v,
            };
            o.attrs.borrow_mut().insert(name, v);
        }
        // Fields excluded from `__init__` still get their default.
        for f in &fields {
            if matches!(field_attr(f, "init"), Value::Bool(false)) {
                let factory = field_attr(f, "default_factory");
                let default = field_attr(f, "default");
                let v = if !is_missing(&factory) {
                    self.call_value(frame, &factory, vec![], vec![], span)?
                } else if !is_missing(&default) {
                    default
                } else {
                    continue;
                };
                o.attrs.borrow_mut().insert(field_name(f), v);
            }
        }
        if let Some(Value::Function(post)) = self.class_lookup(&o.class, "__post_init__") {
            self.call_function(frame, &post, Some(obj.clone()), vec![], vec![], span)?;
        }
        Ok(())
    }

    fn dataclass_replace(
        &mut self,
        frame: &Frame,
        obj: &Value,
        changes: &Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let Value::Object(o) = obj else {
            return Err(self.error(
                frame,
                span,
                codes::RAISED,
                "TypeError: replace() should be called on dataclass instances",
            ));
        };
        let Some(fields) = dataclass_fields(&o.class) else {
            return Err(self.error(
                frame,
                span,
                codes::RAISED,
                "TypeError: replace() should be called on dataclass instances",
            ));
        };
        let mut kw: Kwargs = Vec::new();
        for f in &fields {
            let n = field_name(f);
            if matches!(field_attr(f, "init"), Value::Bool(false)) {
                continue;
            }
            match changes.iter().find(|(k, _)| *k == n) {
                Some((_, v)) => kw.push((n, v.clone())),
                None => kw.push((n.clone(), o.get(&n).unwrap_or(Value::None))),
            }
        }
        for (k, _) in changes {
            if !fields.iter().any(|f| &field_name(f) == k) {
                return Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!("TypeError: __init__() got an unexpected keyword argument `{k}`"),
                ));
            }
        }
        let class = o.class.clone();
        self.instantiate(frame, &class, vec![], kw, span)
    }

    /// `asdict` / `astuple`: dataclass instances become dicts (tuples), recursively through
    /// lists, tuples and dicts; other values are deep-copied as `copy.deepcopy` would.
    fn as_plain(&mut self, frame: &Frame, v: &Value, as_dict: bool, span: Span) -> EResult<Value> {
        match v {
            Value::Object(o) if !o.is_module() => match dataclass_fields(&o.class) {
                Some(fields) => {
                    let mut items = Vec::new();
                    for f in &fields {
                        let n = field_name(f);
                        let inner = o.get(&n).unwrap_or(Value::None);
                        items.push((Value::str(&n), self.as_plain(frame, &inner, as_dict, span)?));
                    }
                    Ok(if as_dict {
                        Value::Dict(Rc::new(std::cell::RefCell::new(items)))
                    } else {
                        Value::tuple(items.into_iter().map(|(_, v)| v).collect())
                    })
                }
                None => self.copy_value(frame, v, true, span),
            },
            Value::List(l) => {
                let items = l.borrow().clone();
                let mut out = Vec::with_capacity(items.len());
                for i in &items {
                    out.push(self.as_plain(frame, i, as_dict, span)?);
                }
                Ok(Value::list(out))
            }
            Value::Tuple(t) => {
                let mut out = Vec::with_capacity(t.len());
                for i in t.iter() {
                    out.push(self.as_plain(frame, i, as_dict, span)?);
                }
                Ok(Value::tuple(out))
            }
            Value::Dict(d) => {
                let items = d.borrow().clone();
                let mut out = Vec::with_capacity(items.len());
                for (k, i) in &items {
                    out.push((
                        self.as_plain(frame, k, as_dict, span)?,
                        self.as_plain(frame, i, as_dict, span)?,
                    ));
                }
                Ok(Value::Dict(Rc::new(std::cell::RefCell::new(out))))
            }
            other => self.copy_value(frame, other, true, span),
        }
    }
}

/// The class of an instance, or the class itself.
fn class_of(v: &Value) -> Value {
    match v {
        Value::Object(o) => o.class.clone(),
        other => other.clone(),
    }
}

/// The fields of a dataclass (instance or class), None if it is not one.
pub fn dataclass_fields(class: &Value) -> Option<Vec<Value>> {
    let Value::Class(c) = class else {
        return None;
    };
    for m in c.mro.borrow().iter() {
        if let Value::Class(k) = m {
            if let Some(Value::Dict(d)) = k.ns.borrow().get(FIELDS) {
                return Some(d.borrow().iter().map(|(_, f)| f.clone()).collect());
            }
        }
    }
    None
}

fn field_attr(f: &Value, name: &str) -> Value {
    match f {
        Value::Object(o) => o.get(name).unwrap_or(Value::None),
        _ => Value::None,
    }
}

fn field_name(f: &Value) -> String {
    match field_attr(f, "name") {
        Value::Str(s) => s.to_string(),
        _ => String::new(),
    }
}
