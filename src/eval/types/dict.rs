//! `dict` (and `OrderedDict`, which is a dict here): an ordered list of key/value pairs.

use std::cell::RefCell;
use std::rc::Rc;

use crate::eval::call::Kwargs;
use crate::eval::value::Value;

/// The entries of a dict, in insertion order.
pub(in crate::eval) type Entries = Rc<RefCell<Vec<(Value, Value)>>>;

/// `d.name(*args, **kwargs)`: dict's methods.
pub(in crate::eval) fn call_method(
    d: &Entries,
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
