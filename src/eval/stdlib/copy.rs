//! `copy.copy` and `copy.deepcopy`: new containers and instances; a deep copy copies what they
//! hold too, once per object (shared references stay shared, as with deepcopy's memo).
//! Immutable values (numbers, strings, functions, classes, tensors' shapes) are themselves.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::super::value::{Object, Value};
use super::super::{EResult, Frame, Interp};
use crate::syntax::Span;

impl Interp {
    pub(in crate::eval) fn copy_value(
        &mut self,
        frame: &Frame,
        v: &Value,
        deep: bool,
        span: Span,
    ) -> EResult<Value> {
        let mut memo = HashMap::new();
        self.copy_rec(frame, v, deep, &mut memo, span)
    }

    fn copy_rec(
        &mut self,
        frame: &Frame,
        v: &Value,
        deep: bool,
        memo: &mut HashMap<usize, Value>,
        span: Span,
    ) -> EResult<Value> {
        self.step(frame, span)?;
        let key = match v {
            Value::List(l) => Some(Rc::as_ptr(l) as usize),
            Value::Dict(d) => Some(Rc::as_ptr(d) as usize),
            Value::Object(o) => Some(Rc::as_ptr(o) as usize),
            _ => None,
        };
        if let Some(done) = key.and_then(|k| memo.get(&k)) {
            return Ok(done.clone());
        }
        let out = match v {
            Value::Tuple(t) if deep => {
                let mut items = Vec::with_capacity(t.len());
                for i in t.iter() {
                    items.push(self.copy_rec(frame, i, deep, memo, span)?);
                }
                Value::tuple(items)
            }
            Value::List(l) => {
                let copy = Rc::new(RefCell::new(Vec::new()));
                memo.insert(Rc::as_ptr(l) as usize, Value::List(copy.clone()));
                let items = l.borrow().clone();
                for i in items {
                    let c = if deep {
                        self.copy_rec(frame, &i, deep, memo, span)?
                    } else {
                        i
                    };
                    copy.borrow_mut().push(c);
                }
                Value::List(copy)
            }
            Value::Dict(d) => {
                let factory = self.default_factory(d);
                let copy = match factory {
                    Some(f) => match self.make_defaultdict(&[f], &vec![]) {
                        Value::Dict(c) => c,
                        _ => unreachable!("make_defaultdict returns a dict"),
                    },
                    None => Rc::new(RefCell::new(Vec::new())),
                };
                memo.insert(Rc::as_ptr(d) as usize, Value::Dict(copy.clone()));
                let items = d.borrow().clone();
                for (k, i) in items {
                    let c = if deep {
                        self.copy_rec(frame, &i, deep, memo, span)?
                    } else {
                        i
                    };
                    copy.borrow_mut().push((k, c));
                }
                Value::Dict(copy)
            }
            Value::Object(o) => {
                let id = self.new_object_id();
                let copy = Rc::new(Object {
                    id,
                    class: o.class.clone(),
                    kind: o.kind.clone(),
                    attrs: Default::default(),
                    base: o.base.clone(),
                });
                self.created.object(&copy);
                memo.insert(Rc::as_ptr(o) as usize, Value::Object(copy.clone()));
                let attrs: Vec<(String, Value)> = o
                    .attrs
                    .borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                for (k, a) in attrs {
                    let c = if deep {
                        self.copy_rec(frame, &a, deep, memo, span)?
                    } else {
                        a
                    };
                    copy.attrs.borrow_mut().insert(k, c);
                }
                Value::Object(copy)
            }
            other => other.clone(),
        };
        Ok(out)
    }
}
