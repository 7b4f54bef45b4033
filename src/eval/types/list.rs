//! `list`, and the containers modelled as lists: sets (lists of distinct items) and deques.

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
                return Err(interp.error(frame, span, codes::RAISED, "pop from empty list"));
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
        _ => Ok(Value::unknown(format!("list.{name}"))),
    }
}
