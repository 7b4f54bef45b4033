//! Python's builtin functions (`len`, `range`, `isinstance`, `getattr`, `str`, `min`, …):
//! `Interp::call_builtin` dispatches by name to one function per builtin or family of
//! builtins.

use std::cell::RefCell;
use std::rc::Rc;

use super::call::{as_f64, as_int, has_proxy, same_class, Kwargs, TORCH_NN_MODULE};
use super::dict_builder::DictBuilder;
use super::stmt::Truth;
use super::value::{FnKind, ObjKind, Object, Value};
use super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::shapes::{Meta, Scalar, ScalarOrigin};
use crate::syntax::Span;

/// One call of a builtin: what each builtin's function reads its arguments from.
struct BuiltinCall<'a> {
    frame: &'a Frame,
    name: &'a str,
    /// The first positional argument (None when there is none).
    a0: Value,
    args: Vec<Value>,
    kwargs: Kwargs,
    span: Span,
}

impl Interp {
    pub(super) fn call_builtin(
        &mut self,
        frame: &Frame,
        name: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let args = self.builtin_args(name, args);
        let c = BuiltinCall {
            frame,
            name,
            a0: args.first().cloned().unwrap_or(Value::None),
            args,
            kwargs,
            span,
        };
        match name {
            "object.__setattr__"
            | "object.__getattribute__"
            | "object.__init__"
            | "object.__repr__" => self.call_object_method(frame, name, &c.args, span),
            "len" => len(self, c),
            "range" => range(self, c),
            "enumerate" => enumerate(self, c),
            "zip" => zip(self, c),
            "reversed" => {
                let mut items = self.iterate(frame, &c.a0, span)?;
                items.reverse();
                Ok(Value::list(items))
            }
            "sorted" => sorted(self, c),
            "list" | "tuple" | "set" | "frozenset" => collection(self, c),
            "dict" => dict(self, c),
            "isinstance" => {
                let cls = c.args.get(1).cloned().unwrap_or(Value::None);
                Ok(self.isinstance(&c.a0, &cls))
            }
            "issubclass" => issubclass(c),
            "hasattr" => hasattr(self, c),
            "getattr" => getattr(self, c),
            "setattr" => setattr(self, c),
            "delattr" => delattr(self, c),
            "int" | "float" | "bool" => self.convert(frame, name, &c.a0, c.args.len(), span),
            "str" | "repr" => str_or_repr(self, c),
            "abs" => abs(self, c),
            "round" => round(c),
            "sum" if c.args.len() == 2 || c.kwargs.iter().any(|(k, _)| k == "start") => {
                sum_from(self, c)
            }
            "min" | "max" | "sum" | "any" | "all" => aggregate(self, c),
            "divmod" => match (as_int(&c.a0), c.args.get(1).and_then(as_int)) {
                (Some(a), Some(b)) if b != 0 => Ok(Value::tuple(vec![
                    Value::Int(a.div_euclid(b)),
                    Value::Int(a.rem_euclid(b)),
                ])),
                _ => Ok(Value::unknown("divmod")),
            },
            "pow" => self.binary_op(
                frame,
                "**",
                c.a0,
                c.args.get(1).cloned().unwrap_or(Value::None),
                span,
            ),
            "print" => print(self, c),
            "super" => super_(self, c),
            // `type(name, bases, dict)`: a new class.
            "type" if c.args.len() == 3 => self.type_of_three(frame, c.args, c.kwargs, span),
            "type" => type_of(c),
            "callable" => Ok(Value::Bool(matches!(
                c.a0,
                Value::Function(_)
                    | Value::BoundMethod(..)
                    | Value::Class(_)
                    | Value::Builtin(_)
                    | Value::External(_)
                    | Value::Partial(_)
            ))),
            "iter" => Ok(Value::list(self.iterate(frame, &c.a0, span)?)),
            "next" => next(self, c),
            "map" => map(self, c),
            "filter" => filter(self, c),
            "_single" | "_pair" | "_triple" | "_quadruple" | "_ntuple" | "_tuple" | "_is_tuple"
            | "_prod" | "_map_float" | "_is_module" | "_shape" | "_uninitialized" => {
                Ok(catalog_helper(name, &c.args))
            }
            "dir" if matches!(c.a0, Value::Class(_) | Value::Object(_)) => Ok(self.dir(&c.a0)),
            "classmethod" | "staticmethod" if matches!(c.a0, Value::Function(_)) => method_kind(c),
            "vars" if c.args.len() == 1 => vars(self, c),
            "globals" if c.args.is_empty() => Ok(Value::ModuleGlobals(c.frame.globals.clone())),
            "property" if matches!(c.a0, Value::Function(_)) => property(self, c),
            "id" | "hash" | "vars" | "dir" | "globals" | "locals" | "format" | "ord" | "chr"
            | "open" | "input" | "object" | "slice" | "property" | "staticmethod"
            | "classmethod" => unmodelled(c),
            // Exception constructors: the value only matters to `raise`.
            exc if exc.ends_with("Error")
                || exc.ends_with("Exception")
                || exc.ends_with("Warning")
                || exc == "StopIteration" =>
            {
                Ok(self.exception_object(Value::Builtin(Rc::from(exc)), c.args.clone()))
            }
            _ => Ok(Value::unknown(format!("{name}()"))),
        }
    }

    /// `int(x)`, `float(x)`, `bool(x)`: on traced tensors these read data (a graph break).
    /// `min(a, b)` / `max(sizes)` with traced items, as Python computes it: each item compared
    /// with the best so far (`item < best` for min, `>` for max), the first best kept. Sizes
    /// read off shapes are specialised, so the comparisons are decided; one that is not (a
    /// tensor's data) leaves the result unknown.
    fn min_max_traced(
        &mut self,
        frame: &Frame,
        name: &str,
        items: Vec<Value>,
        span: Span,
    ) -> EResult<Value> {
        let op = if name == "min" { "<" } else { ">" };
        let mut items = items.into_iter();
        let mut best = items.next().expect("min/max of at least one item");
        for item in items {
            let better = self.compare(frame, op, item.clone(), best.clone(), span)?;
            match self.truth(frame, &better, span)? {
                Truth::Known(true) => best = item,
                Truth::Known(false) => {}
                _ => return Ok(Value::unknown(format!("{name}() over traced values"))),
            }
        }
        Ok(best)
    }

    fn convert(
        &mut self,
        frame: &Frame,
        name: &str,
        v: &Value,
        nargs: usize,
        span: Span,
    ) -> EResult<Value> {
        if nargs == 0 {
            return Ok(match name {
                "int" => Value::Int(0),
                "float" => Value::Float(0.0),
                _ => Value::Bool(false),
            });
        }
        match v {
            Value::Proxy(_) => {
                if let Some(t) = self.tracer.as_mut() {
                    t.event(
                        crate::traced::EventKind::Convert,
                        frame.file_id,
                        span,
                        name.to_string(),
                    );
                }
                let out = self.trace_function(
                    frame,
                    &format!("builtins.{name}"),
                    vec![v.clone()],
                    vec![],
                    span,
                )?;
                // The result is a Python number read from the data, not a tensor: branching on it
                // later is plain Python (the break already happened here).
                if let (Value::Proxy(n), Some(t)) = (&out, self.tracer.as_mut()) {
                    let s = match name {
                        "int" => Scalar::Int(None),
                        "float" => Scalar::Float(None),
                        _ => Scalar::Bool(None),
                    };
                    t.graph.node_mut(*n).meta = Meta::Scalar(s, ScalarOrigin::Data);
                }
                Ok(out)
            }
            // `int("x1")`: not a decimal literal at all, which Python refuses.
            Value::Str(s)
                if name == "int"
                    && nargs == 1
                    && !s.trim().is_empty()
                    && !s
                        .trim()
                        .chars()
                        .all(|c| c.is_ascii_digit() || "+-_".contains(c)) =>
            {
                Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!("ValueError: invalid literal for int() with base 10: {s:?}"),
                ))
            }
            _ => Ok(match (name, v) {
                ("int", Value::Int(i)) => Value::Int(*i),
                ("int", Value::Float(f)) => Value::Int(f.trunc() as i64),
                ("int", Value::Bool(b)) => Value::Int(*b as i64),
                ("int", Value::Str(s)) => s
                    .trim()
                    .parse()
                    .map(Value::Int)
                    .unwrap_or_else(|_| Value::unknown("int()")),
                ("float", Value::Int(i)) => Value::Float(*i as f64),
                ("float", Value::Float(f)) => Value::Float(*f),
                ("float", Value::Bool(b)) => Value::Float(*b as i64 as f64),
                ("float", Value::Str(s)) => match s.trim() {
                    "inf" => Value::Float(f64::INFINITY),
                    "-inf" => Value::Float(f64::NEG_INFINITY),
                    "nan" => Value::Float(f64::NAN),
                    t => t
                        .parse()
                        .map(Value::Float)
                        .unwrap_or_else(|_| Value::unknown("float()")),
                },
                ("bool", other) => match self.truth(frame, other, span)? {
                    Truth::Known(b) => Value::Bool(b),
                    _ => Value::unknown("bool()"),
                },
                _ => Value::unknown(format!("{name}()")),
            }),
        }
    }

    /// `dir(x)` of a class or instance: the names of its attributes and its classes', sorted.
    fn dir(&self, v: &Value) -> Value {
        let mut names: Vec<String> = Vec::new();
        let class = match v {
            Value::Object(o) => {
                if o.is_module() {
                    super::trace::replay::note_module_read(
                        o.id,
                        super::trace::replay::ALL_ATTRIBUTES,
                    );
                }
                names.extend(o.attrs.borrow().keys().cloned());
                o.class.clone()
            }
            other => other.clone(),
        };
        if let Value::Class(c) = &class {
            for m in c.mro.borrow().iter() {
                if let Value::Class(k) = m {
                    names.extend(k.ns.borrow().keys().cloned());
                }
            }
        }
        names.sort();
        names.dedup();
        Value::list(names.iter().map(|n| Value::str(n)).collect())
    }

    pub fn isinstance(&mut self, v: &Value, cls: &Value) -> Value {
        let targets: Vec<Value> = match cls {
            Value::Tuple(t) => t.to_vec(),
            other => vec![other.clone()],
        };
        let mut unknown = false;
        for t in &targets {
            let r = match (v, t) {
                (Value::Unknown(_), _) | (_, Value::Unknown(_)) => None,
                (Value::Int(_), Value::Builtin(b)) => Some(&**b == "int"),
                (Value::Bool(_), Value::Builtin(b)) => Some(&**b == "bool" || &**b == "int"),
                (Value::Float(_), Value::Builtin(b)) => Some(&**b == "float"),
                (Value::Str(_), Value::Builtin(b)) => Some(&**b == "str"),
                (Value::Tuple(_), Value::Builtin(b)) => Some(&**b == "tuple"),
                (Value::List(_), Value::Builtin(b)) => Some(&**b == "list"),
                (Value::Dict(_), Value::Builtin(b)) => Some(&**b == "dict"),
                (Value::None, Value::Builtin(b)) => Some(matches!(&**b, "NoneType" | "object")),
                (Value::None, _) => Some(false),
                (
                    Value::Tuple(_) | Value::List(_) | Value::Dict(_) | Value::Str(_),
                    Value::External(p),
                ) if p.starts_with("collections.abc.") || p.starts_with("typing.") => {
                    Some(abc_instance(v, p))
                }
                (Value::Int(_) | Value::Float(_) | Value::Bool(_), Value::External(p))
                    if p.starts_with("collections.abc.") =>
                {
                    Some(false)
                }
                (Value::Partial(_), Value::External(p)) => Some(&**p == "functools.partial"),
                // An external class (`nn.BatchNorm2d`) is neither a function nor a partial.
                (Value::External(c), Value::External(p))
                    if matches!(
                        &**p,
                        "types.FunctionType"
                            | "types.LambdaType"
                            | "types.MethodType"
                            | "functools.partial"
                    ) && c
                        .rsplit('.')
                        .next()
                        .and_then(|s| s.chars().next())
                        .is_some_and(char::is_uppercase) =>
                {
                    Some(false)
                }
                (Value::Function(_), Value::External(p)) => {
                    Some(matches!(&**p, "types.FunctionType" | "types.LambdaType"))
                }
                (Value::BoundMethod(..), Value::External(p)) => Some(&**p == "types.MethodType"),
                // A class is an instance of `type` (and `object`), never of a value type.
                (Value::Class(_), Value::Builtin(b)) => Some(matches!(&**b, "type" | "object")),
                // ... and of its metaclass and the metaclass's bases.
                (Value::Class(c), Value::Class(_)) if c.metaclass.is_some() => {
                    let meta = c.metaclass.clone().expect("checked");
                    Some(
                        matches!(&meta, Value::Class(m) if m.mro.borrow().iter().any(|k| same_class(k, t))),
                    )
                }
                (Value::External(c), Value::Builtin(b)) if &**b == "type" => {
                    // torch.nn classes and other external classes are types; their functions are not.
                    Some(
                        c.rsplit('.')
                            .next()
                            .and_then(|s| s.chars().next())
                            .is_some_and(char::is_uppercase),
                    )
                }
                // Names outside the project (classes, functions, modules) are not builtin values.
                (Value::External(_), Value::Builtin(b))
                    if matches!(
                        &**b,
                        "str"
                            | "int"
                            | "float"
                            | "bool"
                            | "list"
                            | "tuple"
                            | "dict"
                            | "set"
                            | "frozenset"
                    ) =>
                {
                    Some(false)
                }
                // A property read from its class is its getter, marked as one.
                (Value::Function(f), Value::Builtin(b)) if &**b == "property" => {
                    Some(f.kind == FnKind::Property)
                }
                (
                    Value::Function(_)
                    | Value::BoundMethod(..)
                    | Value::Partial(_)
                    | Value::Builtin(_)
                    | Value::Class(_),
                    Value::Builtin(_) | Value::External(_) | Value::Class(_),
                ) => Some(false),
                (Value::Proxy(_) | Value::TensorConst(_), Value::External(p)) => {
                    Some(matches!(&**p, "torch.Tensor" | "torch.nn.Parameter"))
                }
                (Value::Param(_), Value::External(p)) => Some(matches!(
                    &**p,
                    "torch.Tensor" | "torch.nn.Parameter" | "torch.nn.parameter.Parameter"
                )),
                (Value::Object(o), t) => Some(object_instance(o, t)),
                (
                    Value::Int(_)
                    | Value::Float(_)
                    | Value::Str(_)
                    | Value::Tuple(_)
                    | Value::List(_)
                    | Value::Dict(_)
                    | Value::Bool(_),
                    _,
                ) => Some(false),
                (Value::Proxy(_), _) => Some(false),
                _ => None,
            };
            match r {
                Some(true) => return Value::Bool(true),
                Some(false) => {}
                None => unknown = true,
            }
        }
        if unknown {
            Value::unknown("isinstance")
        } else {
            Value::Bool(false)
        }
    }
}

/// `len(v)`: a traced value's is recorded; a module's is its number of children; an object's
/// is its `__len__`.
fn len(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    match &c.a0 {
        Value::Proxy(_) => interp.trace_function(c.frame, "builtins.len", c.args, c.kwargs, c.span),
        Value::Object(o) if o.is_module() => Ok(Value::Int(o.module_entries().len() as i64)),
        Value::Object(o) if interp.user_method(&o.class, "__len__").is_some() => {
            let f = interp.user_method(&o.class, "__len__").expect("checked");
            interp.call_function(c.frame, &f, Some(c.a0.clone()), vec![], vec![], c.span)
        }
        Value::Str(s) => Ok(Value::Int(s.chars().count() as i64)),
        Value::Dict(d) => Ok(Value::Int(d.borrow().len() as i64)),
        Value::Unknown(u) => Ok(Value::unknown(super::call::derived_reason(
            "len of unknown",
            &u.reason,
        ))),
        v => Ok(Value::Int(interp.iterate(c.frame, v, c.span)?.len() as i64)),
    }
}

/// `range(...)`: the list of its ints, within the collection budget.
fn range(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    // a size read off a traced shape is an int Dynamo specialises on (`range(x.shape[1])`
    // unrolls over the example input's size)
    let ints: Vec<Option<i64>> = c
        .args
        .iter()
        .map(|v| as_int(v).or_else(|| interp.known_int(v)))
        .collect();
    if ints.iter().any(Option::is_none) {
        if c.args.iter().any(has_proxy) {
            return Err(interp.error(
                c.frame,
                c.span,
                codes::UNSUPPORTED,
                "range() over a value only known at run time",
            ));
        }
        return Err(interp.error(
            c.frame,
            c.span,
            codes::UNSUPPORTED,
            format!(
                "range() with a bound that could not be evaluated statically{}",
                why_not_known(&c.args)
            ),
        ));
    }
    let ints: Vec<i64> = ints.into_iter().flatten().collect();
    let (start, stop, step) = match ints.as_slice() {
        [e] => (0, *e, 1),
        [s, e] => (*s, *e, 1),
        [s, e, st] => (*s, *e, *st),
        _ => {
            return Err(interp.error(
                c.frame,
                c.span,
                codes::RAISED,
                "range() takes 1 to 3 arguments",
            ))
        }
    };
    if step == 0 {
        return Err(interp.error(
            c.frame,
            c.span,
            codes::RAISED,
            "range() arg 3 must not be zero",
        ));
    }
    let n = if step > 0 {
        (stop - start + step - 1).max(0) / step
    } else {
        (start - stop - step - 1).max(0) / -step
    };
    if n as u64 > interp.limits.max_collection as u64 {
        return Err(interp.error(
            c.frame,
            c.span,
            codes::BUDGET,
            format!("range of {n} elements exceeds the evaluation budget"),
        ));
    }
    Ok(Value::list(
        (0..n).map(|i| Value::Int(start + i * step)).collect(),
    ))
}

/// `enumerate(items, start)`: the list of its pairs.
fn enumerate(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let start = c.args.get(1).and_then(as_int).unwrap_or(0);
    let items = interp.iterate(c.frame, &c.a0, c.span)?;
    Ok(Value::list(
        items
            .into_iter()
            .enumerate()
            .map(|(i, v)| Value::tuple(vec![Value::Int(start + i as i64), v]))
            .collect(),
    ))
}

/// `zip(*iterables)`: the list of its tuples, as long as the shortest.
/// `zip(*iterables)`, as long as the shortest; an infinite iterator (`cycle`, `count`) beside
/// finite ones gives as many items as they do.
fn zip(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    use super::stdlib::itertools::{infinite_item, infinite_kind};
    let mut lists = Vec::new();
    for a in &c.args {
        lists.push(match infinite_kind(a) {
            Some(_) => None,
            None => Some(interp.iterate(c.frame, a, c.span)?),
        });
    }
    let n = lists.iter().flatten().map(Vec::len).min();
    let Some(n) = n.or((lists.is_empty()).then_some(0)) else {
        return Ok(Value::unknown("zip() of infinite iterators only"));
    };
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut row = Vec::with_capacity(lists.len());
        for (list, arg) in lists.iter().zip(&c.args) {
            match list {
                Some(l) => row.push(l[i].clone()),
                // an empty cycle ends the zip at once
                None => match infinite_item(arg, i) {
                    Some(v) => row.push(v),
                    None => return Ok(Value::list(out)),
                },
            }
        }
        out.push(Value::tuple(row));
    }
    Ok(Value::list(out))
}

/// `sorted(items)`: ints and strings in order; other items as they come.
fn sorted(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let mut items = interp.iterate(c.frame, &c.a0, c.span)?;
    if items.iter().all(|v| matches!(v, Value::Int(_))) {
        items.sort_by_key(|v| as_int(v).unwrap_or(0));
        if c.kwargs
            .iter()
            .any(|(k, v)| k == "reverse" && matches!(v, Value::Bool(true)))
        {
            items.reverse();
        }
        Ok(Value::list(items))
    } else if items.iter().all(|v| matches!(v, Value::Str(_))) {
        items.sort_by(|a, b| match (a, b) {
            (Value::Str(x), Value::Str(y)) => x.cmp(y),
            _ => std::cmp::Ordering::Equal,
        });
        Ok(Value::list(items))
    } else {
        Ok(Value::list(items))
    }
}

/// `list(items)`, `tuple(items)`, `set(items)`, `frozenset(items)` (sets are lists of distinct
/// items).
fn collection(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let items = if c.args.is_empty() {
        vec![]
    } else {
        interp.iterate(c.frame, &c.a0, c.span)?
    };
    Ok(match c.name {
        "tuple" => Value::tuple(items),
        "set" | "frozenset" => Value::list(super::types::list::set_of(items)),
        _ => Value::list(items),
    })
}

/// `dict(mapping_or_pairs, **kwargs)`.
fn dict(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let mut items = DictBuilder::default();
    if let Some(a) = c.args.first() {
        match interp.mapping_entries(c.frame, a, c.span)? {
            Some(entries) => items = DictBuilder::from_entries(entries),
            None => {
                let other = a;
                for pair in interp.iterate(c.frame, other, c.span)? {
                    let kv = interp.unpack(c.frame, &pair, 2, false, c.span)?;
                    items.insert(kv[0].clone(), kv[1].clone());
                }
            }
        }
    }
    for (k, v) in c.kwargs {
        items.insert(Value::str(&k), v);
    }
    Ok(Value::Dict(Rc::new(RefCell::new(items.finish()))))
}

/// `issubclass(cls, classinfo)` of a user class, by its MRO.
fn issubclass(c: BuiltinCall) -> EResult<Value> {
    let cls = c.args.get(1).cloned().unwrap_or(Value::None);
    Ok(match &c.a0 {
        Value::Class(c) => {
            let targets = match &cls {
                Value::Tuple(t) => t.to_vec(),
                other => vec![other.clone()],
            };
            let mro = c.mro.borrow().clone();
            Value::Bool(targets.iter().any(|t| mro.iter().any(|m| same_class(m, t))))
        }
        _ => Value::unknown("issubclass"),
    })
}

/// `hasattr(v, name)`: whether reading the attribute succeeds (unknown where the read gives an
/// unknown value).
fn hasattr(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let Some(Value::Str(n)) = c.args.get(1) else {
        return Ok(Value::unknown("hasattr"));
    };
    // A tensor has the attributes and methods of `torch.Tensor` (the catalogue's).
    if matches!(
        c.a0,
        Value::Proxy(_) | Value::Param(_) | Value::TensorConst(_)
    ) {
        let known = super::trace::is_tensor_attribute(n)
            || crate::catalog::get()
                .function(&format!("torch.Tensor.{n}"))
                .is_some();
        return Ok(Value::Bool(known));
    }
    // `hasattr(torch.nn.Module, "smart_apply")`: torch.nn's classes have the
    // attributes of nn.Module's API and what the program assigned to them.
    if let Value::External(path) = &c.a0 {
        if interp.external_class_attr(path, n).is_some() {
            return Ok(Value::Bool(true));
        }
        if &**path == TORCH_NN_MODULE || crate::catalog::get().module(path).is_some() {
            return Ok(match super::attr::nn_module_class_has(n) {
                Some(has) => Value::Bool(has),
                None => Value::unknown(format!("hasattr(`{path}`, `{n}`)")),
            });
        }
    }
    Ok(match interp.get_attr(c.frame, &c.a0, n, c.span) {
        Ok(Value::Unknown(_)) => Value::unknown("hasattr"),
        Ok(_) => Value::Bool(true),
        Err(_) => Value::Bool(false),
    })
}

/// `getattr(v, name[, default])`.
fn getattr(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let Some(Value::Str(n)) = c.args.get(1) else {
        return Ok(Value::unknown("getattr with a computed name"));
    };
    match interp.get_attr(c.frame, &c.a0, n, c.span) {
        Ok(v) => Ok(v),
        Err(e) => match c.args.get(2) {
            Some(d) => Ok(d.clone()),
            None => Err(e),
        },
    }
}

/// `setattr(v, name, value)`.
fn setattr(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let Some(Value::Str(n)) = c.args.get(1) else {
        return Ok(Value::None);
    };
    let v = c.args.get(2).cloned().unwrap_or(Value::None);
    interp.set_attr(c.frame, &c.a0, n, v, c.span)?;
    Ok(Value::None)
}

/// `delattr(v, name)`.
fn delattr(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let Some(Value::Str(n)) = c.args.get(1) else {
        return Ok(Value::None);
    };
    interp.del_attr(c.frame, &c.a0, n, c.span)?;
    Ok(Value::None)
}

/// `str(v)` / `repr(v)`: a user object's `__str__`/`__repr__`, else the text of a plain value.
fn str_or_repr(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    Ok(match &c.a0 {
        // `str(err)`: its one argument as text (a KeyError's is its repr), else the
        // arguments' tuple.
        Value::Object(o)
            if c.name == "str"
                && is_exception_object(o)
                && !matches!(
                    interp.class_lookup(&o.class, "__str__"),
                    Some(Value::Function(_))
                ) =>
        {
            let args = match o.get("args") {
                Some(Value::Tuple(t)) => t.to_vec(),
                _ => vec![],
            };
            match args.as_slice() {
                [] => Value::str(""),
                [Value::Str(s)] if o.class_name() != "KeyError" => Value::Str(s.clone()),
                [one @ (Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::None)] => {
                    return interp.call_builtin(c.frame, "str", vec![one.clone()], vec![], c.span)
                }
                _ => Value::unknown("str() of an exception"),
            }
        }
        Value::Object(o) if !o.is_module() => {
            // `str` falls back to `__repr__`, as `object.__str__` does.
            let slots: &[&str] = if c.name == "str" {
                &["__str__", "__repr__"]
            } else {
                &["__repr__"]
            };
            let method = slots
                .iter()
                .find_map(|slot| match interp.class_lookup(&o.class, slot) {
                    Some(Value::Function(f)) => Some(f),
                    _ => None,
                });
            match method {
                Some(f) => {
                    return interp.call_function(
                        c.frame,
                        &f,
                        Some(c.a0.clone()),
                        vec![],
                        vec![],
                        c.span,
                    )
                }
                None => Value::unknown(format!("{}() of a `{}` object", c.name, o.class_name())),
            }
        }
        Value::Tuple(_) | Value::List(_) | Value::Dict(_) => {
            return container_repr(interp, c.frame, &c.a0, c.span)
        }
        Value::Str(s) if c.name == "repr" => Value::str(&super::types::string::repr(s)),
        Value::Str(s) => Value::Str(s.clone()),
        Value::Int(i) => Value::str(&i.to_string()),
        // `str` of a float is its `repr` (`nan`, `inf`, `1e+20`), not Rust's `Debug`
        Value::Float(f) => Value::str(&super::types::number::float_repr(*f)),
        Value::Bool(b) => Value::str(if *b { "True" } else { "False" }),
        Value::None => Value::str("None"),
        // torch.fx's Proxy formats as its node: `str(x.device)` is "Proxy(getattr_2)".
        Value::Proxy(n) => match interp.tracer.as_mut() {
            Some(t) => Value::str(&t.proxy_text(*n)),
            None => Value::unknown("str() of a traced value"),
        },
        Value::Class(c) => Value::str(&format!(
            "<class '{}.{}'>",
            interp.project.file(c.file_id).module,
            c.qualname
        )),
        // `inspect._ParameterKind.__str__` is the member's c.name.
        Value::External(p) if c.name == "str" => match p.strip_prefix("inspect.Parameter.") {
            Some(
                kind @ ("POSITIONAL_ONLY"
                | "POSITIONAL_OR_KEYWORD"
                | "VAR_POSITIONAL"
                | "KEYWORD_ONLY"
                | "VAR_KEYWORD"),
            ) => Value::str(kind),
            _ => Value::unknown("str() of a complex value"),
        },
        _ => Value::unknown("str() of a complex value"),
    })
}

/// `repr` (and `str`) of a tuple, list or dict: its items' `repr`s (an instance's own
/// `__repr__` among them), unknown when one is.
fn container_repr(interp: &mut Interp, frame: &Frame, v: &Value, span: Span) -> EResult<Value> {
    let mut item = |x: &Value| -> EResult<Option<String>> {
        let r = interp.call_builtin(frame, "repr", vec![x.clone()], vec![], span)?;
        Ok(match r {
            Value::Str(s) => Some(s.to_string()),
            _ => None,
        })
    };
    let mut parts = Vec::new();
    let (open, close) = match v {
        Value::Tuple(t) => {
            for x in t.iter() {
                parts.push(item(x)?);
            }
            ("(", if t.len() == 1 { ",)" } else { ")" })
        }
        Value::List(l) => {
            for x in l.borrow().clone().iter() {
                parts.push(item(x)?);
            }
            ("[", "]")
        }
        Value::Dict(d) => {
            for (k, x) in d.borrow().clone().iter() {
                match (item(k)?, item(x)?) {
                    (Some(k), Some(x)) => parts.push(Some(format!("{k}: {x}"))),
                    _ => parts.push(None),
                }
            }
            ("{", "}")
        }
        _ => return Ok(Value::unknown("repr() of a complex value")),
    };
    let parts: Option<Vec<String>> = parts.into_iter().collect();
    Ok(match parts {
        Some(p) => Value::str(&format!("{open}{}{close}", p.join(", "))),
        None => Value::unknown("repr() of an item"),
    })
}

/// `abs(x)`: a traced value's is recorded.
fn abs(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    match &c.a0 {
        Value::Int(i) => Ok(Value::Int(i.abs())),
        Value::Float(f) => Ok(Value::Float(f.abs())),
        Value::Proxy(_) => interp.trace_function(c.frame, "operator.abs", c.args, c.kwargs, c.span),
        _ => Ok(Value::unknown("abs")),
    }
}

/// `round(x[, n])`: half to even, as Python rounds.
fn round(c: BuiltinCall) -> EResult<Value> {
    match (&c.a0, c.args.get(1)) {
        (Value::Float(f), None) => Ok(Value::Int(round_half_even(*f) as i64)),
        (Value::Int(i), None) => Ok(Value::Int(*i)),
        (Value::Float(f), Some(Value::Int(n))) => {
            let m = 10f64.powi(*n as i32);
            Ok(Value::Float(round_half_even(f * m) / m))
        }
        _ => Ok(Value::unknown("round")),
    }
}

/// `sum(items, start)`: with a start value, a fold of `+` over any values (`sum(lists, [])`).
fn sum_from(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let start = c
        .args
        .get(1)
        .cloned()
        .or_else(|| {
            c.kwargs
                .iter()
                .find(|(k, _)| k == "start")
                .map(|(_, v)| v.clone())
        })
        .unwrap_or(Value::Int(0));
    let mut acc = start;
    for it in interp.iterate(c.frame, &c.a0, c.span)? {
        acc = interp.binary_op(c.frame, "+", acc, it, c.span)?;
    }
    Ok(acc)
}

/// `min`, `max`, `sum`, `any` and `all` of numbers or booleans; over traced values `sum` adds
/// and `min`/`max` are recorded.
fn aggregate(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let items = if c.args.len() == 1 {
        interp.iterate(c.frame, &c.a0, c.span)?
    } else {
        c.args.clone()
    };
    if c.name == "sum" && c.args.len() == 1 && items.iter().any(has_proxy) {
        // `sum(tensors)` is `0 + t0 + t1 + ...`, which traces like the additions
        let mut acc = c
            .kwargs
            .iter()
            .find(|(k, _)| k == "start")
            .map(|(_, v)| v.clone())
            .unwrap_or(Value::Int(0));
        for it in items {
            acc = interp.binary_op(c.frame, "+", acc, it, c.span)?;
        }
        return Ok(acc);
    }
    let keyed = c.kwargs.iter().any(|(k, _)| k == "key");
    if matches!(c.name, "min" | "max") && !keyed && !items.is_empty() {
        if items.iter().any(has_proxy) {
            return interp.min_max_traced(c.frame, c.name, items, c.span);
        }
    } else if items.iter().any(has_proxy) {
        return Ok(Value::unknown(format!("{}() over traced values", c.name)));
    }
    fold_numbers(
        c.name,
        &items,
        c.kwargs
            .iter()
            .find(|(k, _)| k == "default")
            .map(|(_, v)| v.clone()),
    )
    .ok_or_else(|| {
        interp.error(
            c.frame,
            c.span,
            codes::UNSUPPORTED,
            format!(
                "{}() over values that could not be evaluated{}",
                c.name,
                why_not_known(&items)
            ),
        )
    })
}

/// `print(...)`: nothing, besides an event in a traced forward (Dynamo breaks the graph on it).
fn print(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    if let Some(t) = interp.tracer.as_mut() {
        t.event(
            crate::traced::EventKind::Print,
            c.frame.file_id,
            c.span,
            String::new(),
        );
    }
    Ok(Value::None)
}

/// `super()` in a method, or `super(cls, obj)`.
fn super_(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let class = c.frame.class.clone();
    let recv = c.frame.receiver.clone();
    match (class, recv, c.args.len()) {
        (_, _, 2) => match (&c.args[0], &c.args[1]) {
            (Value::Class(c), r) => Ok(Value::Super(Rc::new(r.clone()), c.clone())),
            _ => Ok(Value::unknown("super() with unknown arguments")),
        },
        (Some(c), Some(r), 0) => Ok(Value::Super(Rc::new(r), c)),
        _ => Err(interp.error(
            c.frame,
            c.span,
            codes::UNSUPPORTED,
            "super() outside a method",
        )),
    }
}

/// `type(v)`: an object's class, a builtin's type, a class's metaclass.
fn type_of(c: BuiltinCall) -> EResult<Value> {
    Ok(match &c.a0 {
        Value::Object(o) => o.class.clone(),
        Value::Int(_) => Value::Builtin(Rc::from("int")),
        Value::Float(_) => Value::Builtin(Rc::from("float")),
        Value::Str(_) => Value::Builtin(Rc::from("str")),
        Value::Bool(_) => Value::Builtin(Rc::from("bool")),
        Value::List(_) => Value::Builtin(Rc::from("list")),
        Value::Tuple(_) => Value::Builtin(Rc::from("tuple")),
        Value::Dict(_) => Value::Builtin(Rc::from("dict")),
        Value::None => Value::Builtin(Rc::from("NoneType")),
        Value::Class(cls) if c.args.len() == 1 => cls
            .metaclass
            .clone()
            .unwrap_or_else(|| Value::Builtin(Rc::from("type"))),
        _ => Value::unknown("type()"),
    })
}

/// `next(iterator[, default])`.
fn next(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let items = interp.iterate(c.frame, &c.a0, c.span)?;
    match items.into_iter().next() {
        Some(v) => Ok(v),
        None => c
            .args
            .get(1)
            .cloned()
            .ok_or_else(|| interp.error(c.frame, c.span, codes::RAISED, "StopIteration")),
    }
}

/// `map(f, *iterables)`: the list of the calls' results.
fn map(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let f = c.a0.clone();
    let mut lists = Vec::new();
    for a in &c.args[1..] {
        lists.push(interp.iterate(c.frame, a, c.span)?);
    }
    let n = lists.iter().map(Vec::len).min().unwrap_or(0);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(interp.call_value(
            c.frame,
            &f,
            lists.iter().map(|l| l[i].clone()).collect(),
            vec![],
            c.span,
        )?);
    }
    Ok(Value::list(out))
}

/// `filter(f, items)`: the items `f` keeps, or the truthy ones when `f` is None.
fn filter(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let items = interp.iterate(c.frame, c.args.get(1).unwrap_or(&Value::None), c.span)?;
    let mut out = Vec::new();
    for it in items {
        let keep = if matches!(c.a0, Value::None) {
            it.clone()
        } else {
            interp.call_value(c.frame, &c.a0, vec![it.clone()], vec![], c.span)?
        };
        if let Truth::Known(true) = interp.truth(c.frame, &keep, c.span)? {
            out.push(it);
        }
    }
    Ok(Value::list(out))
}

/// `cls.from_config = classmethod(from_config)`: the function, bound the other way.
fn method_kind(c: BuiltinCall) -> EResult<Value> {
    let Value::Function(f) = &c.a0 else {
        unreachable!()
    };
    let kind = if c.name == "classmethod" {
        FnKind::ClassMethod
    } else {
        FnKind::StaticMethod
    };
    Ok(Value::Function(Rc::new(f.with_kind(kind))))
}

/// `vars(obj)`: the instance's attributes, as a dict of them now.
fn vars(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    match &c.a0 {
        Value::Object(o) if !o.is_module() => Ok(o.dict_snapshot()),
        Value::Class(_) => interp.get_attr(c.frame, &c.a0, "__dict__", c.span),
        _ => Ok(Value::unknown("vars()")),
    }
}

/// `label = property(get_label, set_label)`: the getter marked as a property, its setter
/// recorded as `@label.setter` records it.
fn property(interp: &mut Interp, c: BuiltinCall) -> EResult<Value> {
    let Value::Function(getter) = &c.a0 else {
        unreachable!()
    };
    let getter = Rc::new(getter.with_kind(FnKind::Property));
    let setter = c
        .args
        .get(1)
        .or_else(|| c.kwargs.iter().find(|(k, _)| k == "fset").map(|(_, v)| v));
    if let Some(Value::Function(set)) = setter {
        interp
            .property_setters
            .insert((getter.file_id, getter.span), set.clone());
    }
    Ok(Value::Function(getter))
}

/// `slice(...)`, and the builtins whose results are not modelled (`id`, `hash`, `open`, …).
fn unmodelled(c: BuiltinCall) -> EResult<Value> {
    if c.name == "slice" {
        let mut parts = [Value::None, Value::None, Value::None];
        match c.args.len() {
            1 => parts[1] = c.a0,
            n => {
                for (i, a) in c.args.into_iter().take(3.min(n)).enumerate() {
                    parts[i] = a;
                }
            }
        }
        return Ok(Value::Slice(Rc::new(parts)));
    }
    Ok(Value::unknown(format!("{}()", c.name)))
}

/// Why one of `values` is not known, as ` (reason)` after a message: the first unknown's
/// reason (`constructor argument \`num_layers\``), else nothing.
fn why_not_known(values: &[Value]) -> String {
    values
        .iter()
        .find_map(|v| match v {
            Value::Unknown(u) => Some(format!(" ({})", u.reason)),
            _ => None,
        })
        .unwrap_or_default()
}

fn round_half_even(f: f64) -> f64 {
    let r = f.round();
    if (f - f.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - f.signum()
    } else {
        r
    }
}

fn fold_numbers(name: &str, items: &[Value], default: Option<Value>) -> Option<Value> {
    match name {
        "any" | "all" => {
            let mut acc = name == "all";
            for it in items {
                let b = match it {
                    Value::Bool(b) => *b,
                    Value::Int(i) => *i != 0,
                    Value::None => false,
                    Value::Unknown(_) => return Some(Value::unknown(name)),
                    _ => true,
                };
                acc = if name == "all" { acc && b } else { acc || b };
            }
            Some(Value::Bool(acc))
        }
        "sum" => {
            let mut int_acc: i64 = 0;
            let mut float_acc: Option<f64> = None;
            for it in items {
                match it {
                    Value::Int(i) => int_acc += i,
                    Value::Bool(b) => int_acc += *b as i64,
                    Value::Float(f) => float_acc = Some(float_acc.unwrap_or(0.0) + f),
                    _ => return None,
                }
            }
            Some(match float_acc {
                Some(f) => Value::Float(f + int_acc as f64),
                None => Value::Int(int_acc),
            })
        }
        _ => {
            if items.is_empty() {
                return default;
            }
            let mut best = items[0].clone();
            for it in &items[1..] {
                let (a, b) = (as_f64(&best)?, as_f64(it)?);
                if (name == "max" && b > a) || (name == "min" && b < a) {
                    best = it.clone();
                }
            }
            as_f64(&best)?;
            Some(best)
        }
    }
}

fn catalog_helper(name: &str, args: &[Value]) -> Value {
    let seq = |v: &Value| -> Option<Vec<Value>> {
        match v {
            Value::Tuple(t) => Some(t.to_vec()),
            Value::List(l) => Some(l.borrow().clone()),
            _ => None,
        }
    };
    let repeat = |n: usize, v: &Value| match seq(v) {
        Some(items) => Value::tuple(items),
        None => Value::tuple(vec![v.clone(); n]),
    };
    let a0 = args.first().cloned().unwrap_or(Value::None);
    match name {
        "_single" => repeat(1, &a0),
        "_pair" => repeat(2, &a0),
        "_triple" => repeat(3, &a0),
        "_quadruple" => repeat(4, &a0),
        "_ntuple" => match as_int(&a0) {
            Some(n) => repeat(n.max(0) as usize, args.get(1).unwrap_or(&Value::None)),
            None => Value::unknown("_ntuple"),
        },
        "_tuple" => repeat(1, &a0),
        "_is_tuple" => Value::Bool(seq(&a0).is_some()),
        "_prod" => match seq(&a0) {
            Some(items) => items
                .iter()
                .map(as_int)
                .try_fold(1i64, |acc, v| v.map(|v| acc * v))
                .map(Value::Int)
                .unwrap_or_else(|| Value::unknown("_prod")),
            None => as_int(&a0)
                .map(Value::Int)
                .unwrap_or_else(|| Value::unknown("_prod")),
        },
        "_map_float" => match seq(&a0) {
            Some(items) => Value::tuple(
                items
                    .iter()
                    .map(|v| as_f64(v).map(Value::Float).unwrap_or_else(|| v.clone()))
                    .collect(),
            ),
            None => as_f64(&a0).map(Value::Float).unwrap_or(a0),
        },
        "_is_module" => Value::Bool(matches!(a0, Value::Object(_))),
        _ => Value::unknown(name.to_string()),
    }
}

/// Whether `o` is an instance of an exception class (builtin or derived from one).
fn is_exception_object(o: &super::value::Object) -> bool {
    let is_exc = |m: &Value| matches!(m, Value::Builtin(b) if super::stdlib::contextlib::exception_bases(b).is_some() || &**b == "BaseException");
    match &o.class {
        Value::Class(c) => c.mro.borrow().iter().any(is_exc),
        other => is_exc(other),
    }
}

/// `isinstance(v, collections.abc.X)` (or `typing.X`) of a tuple, list, dict or string: whether
/// its type registers as that abstract base class.
fn abc_instance(v: &Value, p: &str) -> bool {
    let abc = p.rsplit('.').next().unwrap_or("");
    match v {
        Value::Dict(_) => matches!(
            abc,
            "Iterable"
                | "Mapping"
                | "MutableMapping"
                | "Collection"
                | "Container"
                | "Sized"
                | "Dict"
        ),
        Value::Str(_) | Value::Tuple(_) => matches!(
            abc,
            "Iterable" | "Sequence" | "Collection" | "Container" | "Sized" | "Reversible"
        ),
        _ => matches!(
            abc,
            "Iterable"
                | "Sequence"
                | "MutableSequence"
                | "Collection"
                | "Container"
                | "Sized"
                | "Reversible"
                | "List"
        ),
    }
}

/// `isinstance(o, t)` of an object: by its class's MRO (builtin bases included), and for
/// torch.nn modules, by their leaf or container kind.
fn object_instance(o: &Object, t: &Value) -> bool {
    let mro = match &o.class {
        Value::Class(c) => super::attr::full_mro(&c.mro.borrow()),
        // a builtin exception's instance is one of its bases' too
        b @ Value::Builtin(_) => super::attr::full_mro(std::slice::from_ref(b)),
        other => vec![other.clone()],
    };
    let leaf_hit = match (&o.kind, t) {
        (ObjKind::Leaf(name) | ObjKind::Container(name), Value::External(p)) => {
            p.rsplit('.').next() == Some(name.as_str()) || &**p == "torch.nn.Module"
        }
        (ObjKind::Module, Value::External(p)) => &**p == "torch.nn.Module",
        _ => false,
    };
    // an `OrderedDict` (subclass) is a dict
    let builtin_base = |m: &Value| match (m, t) {
        (Value::Builtin(x), Value::Builtin(y)) => x == y,
        (Value::External(p), Value::Builtin(y)) => {
            &**y == "dict" && matches!(&**p, "collections.OrderedDict" | "typing.OrderedDict")
        }
        _ => false,
    };
    leaf_hit || mro.iter().any(|m| same_class(m, t) || builtin_base(m))
}
