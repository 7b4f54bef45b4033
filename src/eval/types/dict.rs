//! `dict` (and `OrderedDict`, which is a dict here): an ordered list of key/value pairs.

use std::cell::RefCell;
use std::rc::Rc;

use crate::diagnostics::codes;
use crate::eval::call::Kwargs;
use crate::eval::dict_builder::DictBuilder;
use crate::eval::stdlib::collections::DictItems;
use crate::eval::value::Value;
use crate::eval::{EResult, Frame, Interp};
use crate::syntax::Span;

/// `d.name(*args, **kwargs)`: dict's methods.
pub(in crate::eval) fn call_method(
    d: &Rc<DictItems>,
    name: &str,
    args: &[Value],
    kwargs: Kwargs,
) -> Value {
    let a0 = args.first().cloned().unwrap_or(Value::None);
    match name {
        "items" => Value::list(
            d.borrow()
                .iter()
                .map(|(k, v)| Value::tuple(vec![k.clone(), v.clone()]))
                .collect(),
        ),
        "keys" => Value::list(d.borrow().iter().map(|(k, _)| k.clone()).collect()),
        "values" => Value::list(d.borrow().iter().map(|(_, v)| v.clone()).collect()),
        "get" | "pop" | "setdefault" => {
            let found = d
                .borrow()
                .iter()
                .position(|(k, _)| k.py_eq(&a0) == Some(true));
            let dflt = default(args, &kwargs);
            match (found, name) {
                (Some(i), "pop") => d.borrow_mut().remove(i).1,
                (Some(i), _) => d.borrow()[i].1.clone(),
                (None, "setdefault") => {
                    d.borrow_mut().push((a0, dflt.clone()));
                    dflt
                }
                (None, _) => {
                    if d.borrow().iter().any(|(k, _)| k.py_eq(&a0).is_none()) {
                        Value::unknown("dict lookup")
                    } else {
                        dflt
                    }
                }
            }
        }
        "update" => {
            if let Value::Dict(other) = &a0 {
                let items = other.borrow().clone();
                for (k, v) in items {
                    crate::eval::expr::dict_insert(&mut d.borrow_mut(), k, v);
                }
            }
            for (k, v) in kwargs {
                crate::eval::expr::dict_insert(&mut d.borrow_mut(), Value::str(&k), v);
            }
            Value::None
        }
        "copy" => Value::Dict(Rc::new(RefCell::new(d.borrow().clone()))),
        _ => Value::unknown(format!("dict.{name}")),
    }
}

/// The default of `d.get(key, default)` / `d.setdefault(key, default)`: the second argument,
/// else the first keyword's value, else None.
pub(in crate::eval) fn default(args: &[Value], kwargs: &Kwargs) -> Value {
    args.get(1)
        .cloned()
        .or_else(|| kwargs.first().map(|(_, v)| v.clone()))
        .unwrap_or(Value::None)
}

/// `d[k]`: a missing key is an unknown value where a key cannot be compared, else the
/// `defaultdict`'s factory's value, else a KeyError.
pub(in crate::eval) fn get_item(
    interp: &mut Interp,
    frame: &Frame,
    d: &Rc<DictItems>,
    k: &Value,
    span: Span,
) -> EResult<Value> {
    let found = d
        .borrow()
        .iter()
        .find(|(kk, _)| kk.py_eq(k) == Some(true))
        .map(|(_, v)| v.clone());
    match found {
        Some(v) => Ok(v),
        None if d.borrow().iter().any(|(kk, _)| kk.py_eq(k).is_none()) || k.is_unknown() => {
            Ok(Value::unknown("dict lookup"))
        }
        None => match interp.fill_missing(frame, d, k.clone(), span) {
            Some(r) => r,
            None => Err(interp.error(frame, span, codes::RAISED, format!("KeyError: {k:?}"))),
        },
    }
}

/// `x | y`: a new dict of `x`'s entries updated with `y`'s.
pub(in crate::eval) fn union(x: &DictItems, y: &DictItems) -> Value {
    let mut items = DictBuilder::from_entries(x.borrow().clone());
    for (k, v) in y.borrow().iter() {
        items.insert(k.clone(), v.clone());
    }
    Value::Dict(Rc::new(RefCell::new(items.finish())))
}
