//! The parts of Python's standard library that libraries run in their constructors and at
//! import time (timm's model registry, its dataclass configs), evaluated with Python's
//! semantics: `dataclasses`, `collections`, `itertools`, `re`, decorators; `copy` (called from
//! `call_external`, which first records a deepcopy of a traced tensor as Dynamo's break).
//! Each entry point returns `None` for a name it does not model, so the caller's own
//! handling (the catalogue, or an unknown value) applies.

mod bundled;
mod collections;
mod copy;
mod dataclasses;
mod decorators;
pub mod enums;
mod inspect;
mod itertools;
pub mod os;
mod re;
pub mod tensor_const;
#[cfg(test)]
mod tests;

use super::call::{has_proxy, Kwargs};
use super::value::Value;
use super::{EResult, Frame, Interp};
use crate::syntax::Span;
pub use collections::DictItems;
pub use dataclasses::INIT as DATACLASS_INIT;

impl Interp {
    /// Calls of standard-library functions modelled here; None for anything else.
    pub(super) fn call_stdlib(
        &mut self,
        frame: &Frame,
        path: &str,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        if let Some(name) = path.strip_prefix("dataclasses.") {
            return self.call_dataclasses(frame, name, args, kwargs, span);
        }
        if let Some(name) = path.strip_prefix("inspect.") {
            return self.call_inspect(name, args).map(Ok);
        }
        if let Some(name) = path.strip_prefix("itertools.") {
            return self.call_itertools(frame, name, args, kwargs, span);
        }
        if path.starts_with("os.") {
            if let Some(v) = self.call_os(path, args, kwargs) {
                return Some(Ok(v));
            }
        }
        if let Some(name) = path.strip_prefix("re.") {
            // Dynamo skips `re` (its BUILTIN_SKIPLIST): called on traced values it breaks the
            // graph, which the caller's handling of external calls records.
            if args
                .iter()
                .chain(kwargs.iter().map(|(_, v)| v))
                .any(has_proxy)
            {
                return None;
            }
            return self.call_re(name, args, kwargs).map(Ok);
        }
        match path {
            "functools.reduce" => Some(self.reduce(frame, args, span)),
            "collections.defaultdict" => Some(Ok(self.make_defaultdict(args, kwargs))),
            "collections.deque" => Some(self.make_deque(frame, args, span)),
            _ => None,
        }
    }
}
