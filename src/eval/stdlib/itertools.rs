//! `itertools` and `functools.reduce` over finite iterables. An infinite iterator
//! (`cycle(items)`, `count(start, step)`) is an object that knows its i-th item: `zip` pairs
//! it with finite iterables (transformers ties weights with `zip(targets, cycle(sources))`);
//! anything that would run it to the end stops with an analysis limit.

use std::rc::Rc;

use super::super::call::{as_int, Kwargs};
use super::super::value::{ObjKind, Object, Value};
use super::super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::syntax::Span;

impl Interp {
    pub(in crate::eval) fn call_itertools(
        &mut self,
        frame: &Frame,
        name: &str,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        let a0 = args.first().cloned().unwrap_or(Value::None);
        let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let result = (|| -> EResult<Option<Value>> {
            Ok(Some(match name {
                "repeat" => match args.get(1).cloned().or_else(|| kw("times")) {
                    Some(n) => match as_int(&n) {
                        Some(n) => {
                            let n = n.max(0) as usize;
                            if n > self.limits.max_collection {
                                return Err(self.error(
                                    frame,
                                    span,
                                    codes::BUDGET,
                                    "repeat() too long",
                                ));
                            }
                            Value::list(vec![a0; n])
                        }
                        None => Value::unknown("repeat() with a count that could not be evaluated"),
                    },
                    None => Value::unknown("itertools.repeat() without a count is infinite"),
                },
                "chain" => {
                    let mut out = Vec::new();
                    for a in args {
                        out.extend(self.iterate(frame, a, span)?);
                    }
                    Value::list(out)
                }
                "chain.from_iterable" => {
                    let mut out = Vec::new();
                    for a in self.iterate(frame, &a0, span)? {
                        out.extend(self.iterate(frame, &a, span)?);
                    }
                    Value::list(out)
                }
                "accumulate" => {
                    let items = self.iterate(frame, &a0, span)?;
                    let func = args.get(1).cloned().or_else(|| kw("func"));
                    let mut out: Vec<Value> = Vec::with_capacity(items.len() + 1);
                    let mut acc = kw("initial").filter(|v| !matches!(v, Value::None));
                    if let Some(a) = &acc {
                        out.push(a.clone());
                    }
                    for it in items {
                        let next = match (&acc, &func) {
                            (None, _) => it,
                            (Some(a), Some(f)) if !matches!(f, Value::None) => {
                                self.call_value(frame, f, vec![a.clone(), it], vec![], span)?
                            }
                            (Some(a), _) => self.binary_op(frame, "+", a.clone(), it, span)?,
                        };
                        out.push(next.clone());
                        acc = Some(next);
                    }
                    Value::list(out)
                }
                "islice" => {
                    let items = self.iterate(frame, &a0, span)?;
                    let (start, stop, step) = match args.len() {
                        2 => (Value::None, args[1].clone(), Value::None),
                        3 => (args[1].clone(), args[2].clone(), Value::None),
                        _ => (
                            args.get(1).cloned().unwrap_or(Value::None),
                            args.get(2).cloned().unwrap_or(Value::None),
                            args.get(3).cloned().unwrap_or(Value::None),
                        ),
                    };
                    let slice = Value::Slice(std::rc::Rc::new([start, stop, step]));
                    return self
                        .get_item(frame, &Value::list(items), slice, span)
                        .map(Some);
                }
                "product" => {
                    let repeat = kw("repeat").and_then(|v| as_int(&v)).unwrap_or(1).max(0) as usize;
                    let mut pools = Vec::new();
                    for a in args {
                        pools.push(self.iterate(frame, a, span)?);
                    }
                    let pools: Vec<Vec<Value>> = (0..repeat).flat_map(|_| pools.clone()).collect();
                    let mut out: Vec<Vec<Value>> = vec![vec![]];
                    for pool in &pools {
                        let mut next = Vec::new();
                        for prefix in &out {
                            for item in pool {
                                let mut p = prefix.clone();
                                p.push(item.clone());
                                next.push(p);
                            }
                        }
                        if next.len() > self.limits.max_collection {
                            return Err(self.error(
                                frame,
                                span,
                                codes::BUDGET,
                                "product() too large",
                            ));
                        }
                        out = next;
                    }
                    Value::list(out.into_iter().map(Value::tuple).collect())
                }
                "zip_longest" => {
                    let fill = kw("fillvalue").unwrap_or(Value::None);
                    let mut lists = Vec::new();
                    for a in args {
                        lists.push(self.iterate(frame, a, span)?);
                    }
                    let n = lists.iter().map(Vec::len).max().unwrap_or(0);
                    Value::list(
                        (0..n)
                            .map(|i| {
                                Value::tuple(
                                    lists
                                        .iter()
                                        .map(|l| l.get(i).cloned().unwrap_or_else(|| fill.clone()))
                                        .collect(),
                                )
                            })
                            .collect(),
                    )
                }
                "pairwise" => {
                    let items = self.iterate(frame, &a0, span)?;
                    Value::list(items.windows(2).map(|w| Value::tuple(w.to_vec())).collect())
                }
                "cycle" | "count" => self.infinite_iterator(frame, name, args, kwargs, span)?,
                _ => return Ok(None),
            }))
        })();
        result.transpose()
    }

    /// `functools.reduce(f, iterable[, initial])`.
    pub(in crate::eval) fn reduce(
        &mut self,
        frame: &Frame,
        args: &[Value],
        span: Span,
    ) -> EResult<Value> {
        let f = args.first().cloned().unwrap_or(Value::None);
        let items = self.iterate(frame, args.get(1).unwrap_or(&Value::None), span)?;
        let mut it = items.into_iter();
        let mut acc = match args.get(2).cloned().or_else(|| it.next()) {
            Some(v) => v,
            None => {
                return Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    "TypeError: reduce() of empty iterable with no initial value",
                ))
            }
        };
        for x in it {
            acc = self.call_value(frame, &f, vec![acc, x], vec![], span)?;
        }
        Ok(acc)
    }
}

impl Interp {
    /// `cycle(items)` (its items listed now, as CPython saves them on the first pass) or
    /// `count(start, step)`.
    fn infinite_iterator(
        &mut self,
        frame: &Frame,
        name: &str,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let arg = |i: usize, k: &str| {
            args.get(i)
                .cloned()
                .or_else(|| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
        };
        let attrs = if name == "cycle" {
            let items = self.iterate(frame, &arg(0, "iterable").unwrap_or(Value::None), span)?;
            vec![("items", Value::list(items))]
        } else {
            let int = |v: Option<Value>, default| v.map_or(Some(default), |v| as_int(&v));
            match (int(arg(0, "start"), 0), int(arg(1, "step"), 1)) {
                (Some(start), Some(step)) => {
                    vec![("start", Value::Int(start)), ("step", Value::Int(step))]
                }
                _ => {
                    return Ok(Value::unknown(
                        "itertools.count() of values that could not be evaluated",
                    ))
                }
            }
        };
        let id = self.new_object_id();
        Ok(Value::Object(Rc::new(Object {
            id,
            class: Value::External(Rc::from(format!("itertools.{name}"))),
            kind: ObjKind::Plain,
            attrs: std::cell::RefCell::new(
                attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            ),
            base: None,
        })))
    }
}

/// The name of the infinite iterator `v` is (`cycle`, `count`), if it is one.
pub(in crate::eval) fn infinite_kind(v: &Value) -> Option<&str> {
    match v {
        Value::Object(o) => match &o.class {
            Value::External(c) => match &**c {
                "itertools.cycle" => Some("cycle"),
                "itertools.count" => Some("count"),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// The `i`-th item an infinite iterator yields (None for an empty `cycle`, which yields
/// nothing).
pub(in crate::eval) fn infinite_item(v: &Value, i: usize) -> Option<Value> {
    let Value::Object(o) = v else {
        return None;
    };
    match infinite_kind(v)? {
        "cycle" => match o.get("items")? {
            Value::List(items) => {
                let items = items.borrow();
                (!items.is_empty()).then(|| items[i % items.len()].clone())
            }
            _ => None,
        },
        _ => match (o.get("start")?, o.get("step")?) {
            (Value::Int(start), Value::Int(step)) => Some(Value::Int(start + step * i as i64)),
            _ => None,
        },
    }
}
