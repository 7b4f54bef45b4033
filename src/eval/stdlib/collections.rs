//! `collections.defaultdict` and `collections.deque`.
//!
//! A defaultdict is a dict whose missing keys are filled by its factory; the factory is kept
//! beside the dict (keyed by the dict's identity) so every other dict operation applies
//! unchanged. A deque is a list that also has `appendleft` / `popleft` (see `attr.rs`).

use std::cell::RefCell;
use std::rc::Rc;

use super::super::call::Kwargs;
use super::super::dict_builder::DictBuilder;
use super::super::value::Value;
use super::super::{EResult, Frame, Interp};
use crate::syntax::Span;

pub type DictItems = RefCell<Vec<(Value, Value)>>;

impl Interp {
    pub(in crate::eval) fn make_defaultdict(&mut self, args: &[Value], kwargs: &Kwargs) -> Value {
        let factory = args.first().cloned().unwrap_or(Value::None);
        let mut items = match args.get(1) {
            Some(Value::Dict(d)) => DictBuilder::from_entries(d.borrow().clone()),
            _ => DictBuilder::default(),
        };
        for (k, v) in kwargs {
            items.insert(Value::str(k), v.clone());
        }
        let d = Rc::new(RefCell::new(items.finish()));
        if !matches!(factory, Value::None) {
            self.dict_factories
                .retain(|(weak, _)| weak.strong_count() > 0);
            self.dict_factories.push((Rc::downgrade(&d), factory));
        }
        Value::Dict(d)
    }

    /// The factory of a defaultdict, None for a plain dict.
    pub(in crate::eval) fn default_factory(&self, d: &Rc<DictItems>) -> Option<Value> {
        let is_d =
            |weak: &std::rc::Weak<DictItems>| weak.upgrade().is_some_and(|w| Rc::ptr_eq(&w, d));
        let (_, factory) = self.dict_factories.iter().find(|(weak, _)| is_d(weak))?;
        Some(factory.clone())
    }

    /// `d[key]` on a defaultdict without the key: the factory's value, stored under the key.
    pub(in crate::eval) fn fill_missing(
        &mut self,
        frame: &Frame,
        d: &Rc<DictItems>,
        key: Value,
        span: Span,
    ) -> Option<EResult<Value>> {
        let factory = self.default_factory(d)?;
        Some(
            self.call_value(frame, &factory, vec![], vec![], span)
                .map(|v| {
                    d.borrow_mut().push((key, v.clone()));
                    v
                }),
        )
    }

    pub(in crate::eval) fn make_deque(
        &mut self,
        frame: &Frame,
        args: &[Value],
        span: Span,
    ) -> EResult<Value> {
        let items = match args.first() {
            Some(v) => self.iterate(frame, v, span)?,
            None => Vec::new(),
        };
        Ok(Value::list(items))
    }
}
