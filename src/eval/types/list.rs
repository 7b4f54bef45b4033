//! `list`, and the containers modelled as lists: sets (lists of distinct items) and deques.
//! Also the sequence behaviour `list` shares with `tuple` and `str`: indexing, slicing, and
//! the operators of lists and tuples.

use std::cell::RefCell;
use std::rc::Rc;

use crate::diagnostics::codes;
use crate::eval::call::as_int;
use crate::eval::value::Value;
use crate::eval::{EResult, Frame, Interp};
use crate::syntax::Span;

/// `l.name(*args)`: list's methods, and those of the sets and deques modelled as lists.
pub(in crate::eval) fn call_method(
    interp: &mut Interp,
    frame: &Frame,
    l: &Rc<RefCell<Vec<Value>>>,
    name: &str,
    args: &[Value],
    span: Span,
) -> EResult<Value> {
    let a0 = args.first().cloned().unwrap_or(Value::None);
    match name {
        "append" => {
            l.borrow_mut().push(a0);
            Ok(Value::None)
        }
        // Sets and deques are lists here; these are their own methods.
        "add" => {
            if !l.borrow().iter().any(|v| v.py_eq(&a0) == Some(true)) {
                l.borrow_mut().push(a0);
            }
            Ok(Value::None)
        }
        "discard" => {
            l.borrow_mut().retain(|v| v.py_eq(&a0) != Some(true));
            Ok(Value::None)
        }
        "appendleft" => {
            l.borrow_mut().insert(0, a0);
            Ok(Value::None)
        }
        "popleft" => {
            if l.borrow().is_empty() {
                return Err(interp.error(
                    frame,
                    span,
                    codes::RAISED,
                    "IndexError: pop from an empty deque",
                ));
            }
            Ok(l.borrow_mut().remove(0))
        }
        "extend" => {
            let items = interp.iterate(frame, &a0, span)?;
            l.borrow_mut().extend(items);
            Ok(Value::None)
        }
        "insert" => {
            let len = l.borrow().len() as i64;
            let i = as_int(&a0).unwrap_or(len);
            let i = if i < 0 { (i + len).max(0) } else { i.min(len) } as usize;
            l.borrow_mut()
                .insert(i, args.get(1).cloned().unwrap_or(Value::None));
            Ok(Value::None)
        }
        "pop" => {
            let len = l.borrow().len() as i64;
            let i = args.first().and_then(as_int).unwrap_or(-1);
            let i = if i < 0 { i + len } else { i };
            if i < 0 || i >= len {
                let why = if len == 0 {
                    "IndexError: pop from empty list"
                } else {
                    "IndexError: pop index out of range"
                };
                return Err(interp.error(frame, span, codes::RAISED, why));
            }
            Ok(l.borrow_mut().remove(i as usize))
        }
        "copy" => Ok(Value::list(l.borrow().clone())),
        "reverse" => {
            l.borrow_mut().reverse();
            Ok(Value::None)
        }
        "clear" => {
            l.borrow_mut().clear();
            Ok(Value::None)
        }
        "index" | "count" => {
            let items = l.borrow().clone();
            let hits: Vec<usize> = items
                .iter()
                .enumerate()
                .filter(|(_, v)| v.py_eq(&a0) == Some(true))
                .map(|(i, _)| i)
                .collect();
            Ok(if name == "count" {
                Value::Int(hits.len() as i64)
            } else {
                hits.first()
                    .map(|&i| Value::Int(i as i64))
                    .unwrap_or_else(|| Value::unknown("index"))
            })
        }
        "remove" => {
            let pos = l.borrow().iter().position(|v| v.py_eq(&a0) == Some(true));
            if let Some(p) = pos {
                l.borrow_mut().remove(p);
            }
            Ok(Value::None)
        }
        "sort" => Ok(Value::None),
        "update" | "union" | "intersection" | "difference" | "issubset" | "issuperset"
        | "isdisjoint" => set_method(interp, frame, l, name, args, span),
        _ => Ok(Value::unknown(format!("list.{name}"))),
    }
}

/// The methods of `set` that take other iterables (sets are lists here, their items
/// unique): `update` adds in place, the others build a new set or compare. An item whose
/// equality cannot be told makes the answer unknown rather than a guess.
fn set_method(
    interp: &mut Interp,
    frame: &Frame,
    l: &Rc<RefCell<Vec<Value>>>,
    name: &str,
    args: &[Value],
    span: Span,
) -> EResult<Value> {
    let mut others = Vec::with_capacity(args.len());
    for a in args {
        // An iterable that cannot be followed leaves the answer unknown, as before.
        match interp.iterate(frame, a, span) {
            Ok(items) => others.push(items),
            Err(_) => return Ok(Value::unknown(format!("set.{name} of an unknown iterable"))),
        }
    }
    if others.is_empty() && name.starts_with("is") {
        return Ok(Value::unknown(format!("set.{name} without an argument")));
    }
    let mine = l.borrow().clone();
    let contains = |items: &[Value], v: &Value| -> Option<bool> {
        let mut out = Some(false);
        for i in items {
            match i.py_eq(v) {
                Some(true) => return Some(true),
                Some(false) => {}
                None => out = None,
            }
        }
        out
    };
    let mut acc = match name {
        "update" | "union" | "difference" | "intersection" => mine.clone(),
        _ => vec![],
    };
    for other in &others {
        match name {
            "update" | "union" => {
                for v in other {
                    match contains(&acc, v) {
                        Some(true) => {}
                        Some(false) => acc.push(v.clone()),
                        None => return Ok(Value::unknown(format!("set.{name}"))),
                    }
                }
            }
            "difference" | "intersection" => {
                let mut kept = vec![];
                for v in acc {
                    match contains(other, &v) {
                        Some(found) if found == (name == "intersection") => kept.push(v),
                        Some(_) => {}
                        None => return Ok(Value::unknown(format!("set.{name}"))),
                    }
                }
                acc = kept;
            }
            _ => {
                let (small, big) = match name {
                    "issubset" => (&mine, other),
                    "issuperset" => (other, &mine),
                    _ => (&mine, other),
                };
                let mut all = true;
                let mut any = false;
                for v in small {
                    match contains(big, v) {
                        Some(true) => any = true,
                        Some(false) => all = false,
                        None => return Ok(Value::unknown(format!("set.{name}"))),
                    }
                }
                return Ok(Value::Bool(if name == "isdisjoint" { !any } else { all }));
            }
        }
    }
    if name == "update" {
        *l.borrow_mut() = acc;
        return Ok(Value::None);
    }
    Ok(Value::list(acc))
}

/// `a + b`, `a * n` and comparisons of lists and of tuples, and `|`, `&`, `^`, `-` of the sets
/// modelled as lists; None for the operators sequences do not have.
pub(in crate::eval) fn binary_op(
    interp: &mut Interp,
    frame: &Frame,
    name: &str,
    a: &Value,
    b: &Value,
    span: Span,
) -> EResult<Option<Value>> {
    use Value::{Int, List, Tuple};
    Ok(Some(match (name, a, b) {
        ("add", Tuple(x), Tuple(y)) => Value::tuple(x.iter().chain(y.iter()).cloned().collect()),
        ("add", List(x), List(y)) => Value::list(
            x.borrow()
                .iter()
                .chain(y.borrow().iter())
                .cloned()
                .collect(),
        ),
        ("mul", List(x), Int(n)) | ("mul", Int(n), List(x)) => {
            let v = x.borrow();
            let n = (*n).max(0) as usize;
            if n.saturating_mul(v.len()) > interp.limits.max_collection {
                return Err(interp.error(frame, span, codes::BUDGET, "list too large"));
            }
            Value::list((0..n).flat_map(|_| v.iter().cloned()).collect())
        }
        ("mul", Tuple(x), Int(n)) | ("mul", Int(n), Tuple(x)) => {
            let n = (*n).max(0) as usize;
            if n.saturating_mul(x.len()) > interp.limits.max_collection {
                return Err(interp.error(frame, span, codes::BUDGET, "tuple too large"));
            }
            Value::tuple((0..n).flat_map(|_| x.iter().cloned()).collect())
        }
        ("lt" | "le" | "gt" | "ge", Tuple(_), Tuple(_))
        | ("lt" | "le" | "gt" | "ge", List(_), List(_)) => match a.py_order(b) {
            Some(order) => Value::Bool(match name {
                "lt" => order.is_lt(),
                "le" => order.is_le(),
                "gt" => order.is_gt(),
                _ => order.is_ge(),
            }),
            None => Value::unknown("comparison"),
        },
        // Sets are lists of distinct items here (lists themselves have no `|`, `&`, `-`).
        ("and_" | "or_" | "xor" | "sub", List(x), List(y)) => {
            let (x, y) = (x.borrow().clone(), y.borrow().clone());
            let has = |v: &[Value], k: &Value| v.iter().any(|i| i.py_eq(k) == Some(true));
            let items: Vec<Value> = match name {
                "or_" => x.into_iter().chain(y).collect(),
                "and_" => x.into_iter().filter(|k| has(&y, k)).collect(),
                "sub" => x.into_iter().filter(|k| !has(&y, k)).collect(),
                _ => {
                    let only_x = x.iter().filter(|k| !has(&y, k)).cloned();
                    let only_y = y.iter().filter(|k| !has(&x, k)).cloned();
                    only_x.chain(only_y).collect()
                }
            };
            Value::list(set_of(items))
        }
        _ => return Ok(None),
    }))
}

/// `seq[key]` of a tuple, list or string: one item by index, or a tuple or list of the items a
/// slice picks.
pub(in crate::eval) fn get_item(
    interp: &mut Interp,
    frame: &Frame,
    seq: &Value,
    key: &Value,
    span: Span,
) -> EResult<Value> {
    let items = interp.iterate(frame, seq, span)?;
    if let Value::Slice(s) = key {
        let picked = slice_items(&items, s).ok_or_else(|| {
            interp.error(frame, span, codes::UNSUPPORTED, "slice with unknown bounds")
        })?;
        return Ok(if matches!(seq, Value::Tuple(_)) {
            Value::tuple(picked)
        } else {
            Value::list(picked)
        });
    }
    let Some(i) = as_int(key) else {
        return Ok(Value::unknown("index could not be evaluated"));
    };
    let idx = if i < 0 { i + items.len() as i64 } else { i };
    items.get(idx as usize).cloned().ok_or_else(|| {
        interp.error(
            frame,
            span,
            codes::RAISED,
            format!("index {i} out of range"),
        )
    })
}

/// `items[a:b:c]`: the items a slice picks (None when a bound is not a known int).
pub(in crate::eval) fn slice_items(items: &[Value], s: &[Value; 3]) -> Option<Vec<Value>> {
    let n = items.len() as i64;
    let step = match &s[2] {
        Value::None => 1,
        v => as_int(v)?,
    };
    if step == 0 {
        return None;
    }
    let norm = |v: &Value, dflt: i64| -> Option<i64> {
        match v {
            Value::None => Some(dflt),
            v => {
                let i = as_int(v)?;
                Some(if i < 0 {
                    (i + n).max(if step > 0 { 0 } else { -1 })
                } else {
                    i.min(if step > 0 { n } else { n - 1 })
                })
            }
        }
    };
    let (start, stop) = if step > 0 {
        (norm(&s[0], 0)?, norm(&s[1], n)?)
    } else {
        (norm(&s[0], n - 1)?, norm(&s[1], -1)?)
    };
    let mut out = Vec::new();
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        if i >= 0 && i < n {
            out.push(items[i as usize].clone());
        }
        i += step;
    }
    Some(out)
}

/// Distinct items, first occurrence first (a set, as the evaluator keeps one).
pub(in crate::eval) fn set_of(items: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    for i in items {
        if !out.iter().any(|o| o.py_eq(&i) == Some(true)) {
            out.push(i);
        }
    }
    out
}
