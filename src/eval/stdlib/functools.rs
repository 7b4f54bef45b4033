//! `functools.lru_cache` / `cache` and `cached_property` with their caching: a cached
//! function called again with equal arguments returns the object its first call returned
//! (libraries memoise config lookups and layer factories this way), `cache_clear()` empties
//! it, and unhashable arguments raise `TypeError` as the real wrapper does. A
//! `cached_property` computes once per instance and keeps the value in the instance's
//! `__dict__`.
//!
//! While a forward is traced the cache is not consulted: Dynamo ignores the wrapper and
//! traces the wrapped function, and a traced value kept across traces would name a node of
//! another graph.
//!
//! A `cached_property` first read while forward is traced is an event for the graph-break
//! rules: before Python 3.12 its `__get__` computes the value inside `with self.lock:`, an
//! `RLock` Dynamo cannot enter (measured with torch 2.8 and 2.15 on 3.11; 3.12 dropped the lock
//! and compiles in one graph).

use crate::eval::types::proxy;
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use super::super::call::{has_proxy, Kwargs};
use super::super::value::{Function, Partial, Value, Wrapper};
use super::super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::semantic::FileId;
use crate::syntax::Span;

/// `lru_cache`'s default `maxsize`.
const DEFAULT_MAXSIZE: usize = 128;

#[derive(Default)]
pub struct FunctoolsState {
    /// The wrapper being called past its cache (a miss, computing the value once).
    bypass: Option<Rc<Function>>,
    /// Getters decorated with `cached_property`, by identity.
    cached_properties: HashSet<(FileId, Span)>,
}

/// What [`Interp::cached_property_read`] records as the manager an uncached read enters.
pub(crate) const CACHED_PROPERTY_LOCK: &str = "functools.cached_property";
/// The same, where no Python environment tells whether its `cached_property` takes a lock.
pub(crate) const CACHED_PROPERTY_LOCK_UNKNOWN_PYTHON: &str = "functools.cached_property?";

/// An `lru_cache` wrapper's cache, kept on the wrapper (`Wrapper::LruCache`).
pub(crate) struct LruCache {
    /// None: unbounded (`maxsize=None`, `functools.cache`).
    maxsize: Option<usize>,
    typed: bool,
    /// Least recently used first.
    entries: Vec<(Vec<Value>, Kwargs, Value)>,
}

impl LruCache {
    /// `cache_clear()`.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }
}

/// Whether a value can be a dict key; None when that depends on what is not known.
fn hashable(v: &Value) -> Option<bool> {
    match v {
        Value::List(_) | Value::Dict(_) | Value::Slice(_) => Some(false),
        Value::Tuple(items) => items
            .iter()
            .try_fold(true, |all, i| Some(all && hashable(i)?)),
        Value::Unknown(_) => None,
        _ => Some(true),
    }
}

/// Whether two argument values are the same cache key; None when undecidable.
fn same_key(a: &Value, b: &Value, typed: bool) -> Option<bool> {
    if typed && a.type_name() != b.type_name() {
        return Some(false);
    }
    if a.py_is(b) == Some(true) {
        return Some(true);
    }
    a.py_eq(b)
}

fn unhashable_name(args: &[Value], kwargs: &Kwargs) -> Option<String> {
    let mut all = args.iter().chain(kwargs.iter().map(|(_, v)| v));
    all.find(|v| hashable(v) == Some(false)).map(|v| match v {
        Value::Tuple(items) => items
            .iter()
            .find(|i| hashable(i) == Some(false))
            .map(Value::type_name)
            .unwrap_or_else(|| "tuple".into()),
        other => other.type_name(),
    })
}

impl Interp {
    /// `functools.lru_cache(...)`, `functools.cache(f)`; None for other names.
    pub(in crate::eval) fn call_functools(
        &mut self,
        name: &str,
        args: &[Value],
        kwargs: &Kwargs,
    ) -> Option<Value> {
        let kw = |k: &str| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        match (name, args.first()) {
            ("cache", Some(Value::Function(f))) => Some(self.lru_wrapper(f, None, false)),
            ("lru_cache", Some(Value::Function(f))) => {
                Some(self.lru_wrapper(f, Some(DEFAULT_MAXSIZE), false))
            }
            // `lru_cache(maxsize=…, typed=…)`: the decorator.
            ("lru_cache", first) => {
                let maxsize = first.cloned().or_else(|| kw("maxsize"));
                let mut keywords = vec![];
                if let Some(m) = maxsize {
                    keywords.push(("maxsize".to_string(), m));
                }
                if let Some(t) = kw("typed") {
                    keywords.push(("typed".to_string(), t));
                }
                Some(Value::Partial(Rc::new(Partial {
                    func: Value::External(Rc::from("functools._lru_cache_of")),
                    args: vec![],
                    kwargs: keywords,
                })))
            }
            ("_lru_cache_of", Some(Value::Function(f))) => {
                let maxsize = match kw("maxsize") {
                    Some(Value::None) => None,
                    Some(Value::Int(n)) => Some(n.max(0) as usize),
                    Some(_) => return Some(Value::unknown("`lru_cache` with a computed maxsize")),
                    None => Some(DEFAULT_MAXSIZE),
                };
                let typed = matches!(kw("typed"), Some(Value::Bool(true)));
                Some(self.lru_wrapper(f, maxsize, typed))
            }
            _ => None,
        }
    }

    /// The wrapper `lru_cache` returns: a function of its own (so the wrapped one stays
    /// uncached) with an empty cache, whose `__wrapped__` is `f`.
    fn lru_wrapper(&mut self, f: &Rc<Function>, maxsize: Option<usize>, typed: bool) -> Value {
        let cache = LruCache {
            maxsize,
            typed,
            entries: vec![],
        };
        let wrapper = f.new_wrapper(Wrapper::LruCache(Rc::new(RefCell::new(cache))));
        Value::Function(Rc::new(wrapper))
    }

    /// A call of an `lru_cache` wrapper outside tracing: the cached result for equal
    /// arguments, else the call's, remembered. None when `f` is no wrapper (or is being
    /// called past its cache), so the call proceeds as usual.
    pub(in crate::eval) fn call_lru_cached(
        &mut self,
        frame: &Frame,
        f: &Rc<Function>,
        recv: &Option<Value>,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        let Some(Wrapper::LruCache(cache)) = &f.wrapper else {
            return None;
        };
        if self
            .functools
            .bypass
            .as_ref()
            .is_some_and(|b| Rc::ptr_eq(b, f))
        {
            self.functools.bypass = None;
            return None;
        }
        if !proxy::consults_lru_cache(self) {
            return None;
        }
        let cache = cache.clone();
        let typed = cache.borrow().typed;
        let mut key: Vec<Value> = recv.iter().cloned().collect();
        key.extend(args.iter().cloned());
        if let Some(type_name) = unhashable_name(&key, kwargs) {
            return Some(Err(self.error(
                frame,
                span,
                codes::RAISED,
                format!("TypeError: unhashable type: '{type_name}'"),
            )));
        }
        let decidable = key
            .iter()
            .chain(kwargs.iter().map(|(_, v)| v))
            .all(|v| hashable(v).is_some());
        let mut undecided = !decidable;
        let hit = decidable
            .then(|| {
                cache.borrow().entries.iter().position(|(a, k, _)| {
                    if a.len() != key.len() || k.len() != kwargs.len() {
                        return false;
                    }
                    let same = a
                        .iter()
                        .zip(&key)
                        .map(|(x, y)| same_key(x, y, typed))
                        .chain(k.iter().zip(kwargs).map(|((n, x), (m, y))| match n == m {
                            true => same_key(x, y, typed),
                            false => Some(false),
                        }))
                        .try_fold(true, |all, s| Some(all && s?));
                    undecided |= same.is_none();
                    same == Some(true)
                })
            })
            .flatten();
        if let Some(i) = hit {
            let mut cache = cache.borrow_mut();
            let entry = cache.entries.remove(i);
            let result = entry.2.clone();
            cache.entries.push(entry);
            return Some(Ok(result));
        }
        self.functools.bypass = Some(f.clone());
        let result =
            self.call_function(frame, f, recv.clone(), args.to_vec(), kwargs.clone(), span);
        self.functools.bypass = None;
        if let (Ok(v), false) = (&result, undecided) {
            if !has_proxy(v) && !v.is_unknown() {
                let mut cache = cache.borrow_mut();
                if cache.maxsize != Some(0) {
                    cache.entries.push((key, kwargs.clone(), v.clone()));
                    if cache.maxsize.is_some_and(|m| cache.entries.len() > m) {
                        cache.entries.remove(0);
                    }
                }
            }
        }
        Some(result)
    }

    /// Marks a getter as a `cached_property`'s.
    pub(in crate::eval) fn mark_cached_property(&mut self, f: &Function) {
        self.functools.cached_properties.insert((f.file_id, f.span));
    }

    /// Before a property's getter runs on `obj` in a traced forward: a `cached_property` read
    /// that finds no cached value enters the getter's lock on Python 3.11 and older, which
    /// the graph-break rules report as a manager Dynamo cannot enter.
    pub(in crate::eval) fn cached_property_read(
        &mut self,
        f: &Function,
        obj: &Value,
        file: FileId,
        span: Span,
    ) {
        if !matches!(obj, Value::Object(_))
            || !proxy::reports_cached_property_reads(self)
            || !self
                .functools
                .cached_properties
                .contains(&(f.file_id, f.span))
        {
            return;
        }
        let detail = match self.python_before(3, 12) {
            Some(false) => return,
            Some(true) => CACHED_PROPERTY_LOCK,
            None => CACHED_PROPERTY_LOCK_UNKNOWN_PYTHON,
        };
        if let Some(t) = self.tracer.as_mut() {
            // A value the cache cannot keep (a traced tensor) is computed again at each read;
            // one event per site.
            let kind = crate::traced::EventKind::ExternalManager;
            if t.events
                .iter()
                .any(|e| e.kind == kind && e.file == file && e.span == span)
            {
                return;
            }
            t.event(kind, file, span, format!("{detail} {}", f.name));
        }
    }

    /// After a property's getter ran on `obj`: a `cached_property` keeps the value in the
    /// instance's `__dict__`, where the next lookup finds it first.
    pub(in crate::eval) fn keep_cached_property(&mut self, f: &Function, obj: &Value, v: &Value) {
        let Value::Object(o) = obj else { return };
        if self
            .functools
            .cached_properties
            .contains(&(f.file_id, f.span))
            && !has_proxy(v)
        {
            o.attrs.borrow_mut().insert(f.name.clone(), v.clone());
        }
    }
}
