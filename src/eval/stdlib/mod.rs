//! The parts of Python's standard library that libraries run in their constructors and at
//! import time (timm's model registry, its dataclass configs), evaluated with Python's
//! semantics: `dataclasses`, `collections`, `itertools`, `re`, decorators; einops' three
//! pattern functions on traced tensors and its torch layers, as Dynamo traces them; `copy` (called from
//! `call_external`, which first records a deepcopy of a traced tensor as Dynamo's break).
//! Each entry point returns `None` for a name it does not model, so the caller's own
//! handling (the catalogue, or an unknown value) applies.

mod bundled;
pub(super) mod collections;
pub(super) mod contextlib;
mod copy;
mod dataclasses;
mod decorators;
mod einops;
pub mod enums;
pub(super) mod functools;
pub mod importlib;
mod inspect;
pub(in crate::eval) mod itertools;
mod math;
mod metaclass;
mod operator;
pub mod os;
pub(in crate::eval) mod re;
pub mod tensor_const;
#[cfg(test)]
mod tests;
mod type_info;

use super::call::{has_proxy, Kwargs};
use super::value::Value;
use super::{EResult, Frame, Interp};
use crate::syntax::Span;
pub use collections::DictItems;
pub use dataclasses::INIT as DATACLASS_INIT;
pub(super) use einops::einops_layer_name;

/// Whether the standard-library module `module` binds `name`, for the modules whose names
/// are known in full (C modules, the same on every Python users run); None for any other.
pub(super) fn module_binds(module: &str, name: &str) -> Option<bool> {
    let names = match module {
        "math" => math::NAMES,
        "operator" => operator::NAMES,
        _ => return None,
    };
    Some(name.starts_with("__") || names.contains(&name))
}

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
        if let Some(name) = path.strip_prefix("contextlib.") {
            if let Some(v) = self.call_contextlib(name, args, kwargs) {
                return Some(Ok(v));
            }
        }
        if let Some(name) = path.strip_prefix("functools.") {
            if let Some(v) = self.call_functools(name, args, kwargs) {
                return Some(Ok(v));
            }
        }
        if let Some(name) = path.strip_prefix("operator.") {
            if let Some(r) = self.call_operator(frame, name, args, kwargs, span) {
                return Some(r);
            }
        }
        if let Some(name) = path.strip_prefix("einops.") {
            return self.call_einops(frame, name, args, kwargs, span);
        }
        match path {
            "enum.auto" => Some(Ok(Value::External(std::rc::Rc::from(enums::AUTO)))),
            "importlib.import_module" => Some(Ok(import_by_name(self, args, kwargs))),
            "importlib.util.find_spec" => Some(Ok(self.find_spec(args, kwargs))),
            "importlib.metadata.version" => {
                Some(self.distribution_version(frame, args, kwargs, span))
            }
            "functools.reduce" => Some(self.reduce(frame, args, span)),
            // `@wraps(f)` on a wrapper: the wrapper records what it wraps.
            "functools.wraps" => Some(Ok(Value::Partial(std::rc::Rc::new(
                super::value::Partial {
                    func: Value::External(std::rc::Rc::from("functools.update_wrapper")),
                    args: vec![],
                    kwargs: vec![(
                        "wrapped".into(),
                        args.first().cloned().unwrap_or(Value::None),
                    )],
                },
            )))),
            // `types.FunctionType(f.__code__, f.__globals__, …)`: a copy of `f` (transformers'
            // `copy_func`), an ordinary function whatever `f` was bound as.
            "types.FunctionType" => {
                let code = args.first()?;
                let Value::Object(o) = code else { return None };
                let Value::Function(f) = o.get(super::attr::CODE_OF)? else {
                    return None;
                };
                Some(Ok(Value::Function(std::rc::Rc::new(
                    super::value::Function {
                        attrs: Default::default(),
                        wrapper: None,
                        ..f.with_kind(super::value::FnKind::Plain)
                    },
                ))))
            }
            "functools.update_wrapper" => {
                let wrapper = args.first().cloned().unwrap_or(Value::None);
                let wrapped = args
                    .get(1)
                    .or_else(|| kwargs.iter().find(|(k, _)| k == "wrapped").map(|(_, v)| v))
                    .cloned()
                    .unwrap_or(Value::None);
                if let Value::Function(f) = &wrapper {
                    let mut attrs = f.attrs.borrow_mut();
                    if let Value::Function(inner) = &wrapped {
                        // WRAPPER_UPDATES: the wrapper's `__dict__` takes the wrapped one's.
                        for (k, v) in inner.attrs.borrow().iter() {
                            attrs.insert(k.clone(), v.clone());
                        }
                    }
                    attrs.insert("__wrapped__".into(), wrapped);
                }
                Some(Ok(wrapper))
            }
            "collections.defaultdict" => Some(Ok(self.make_defaultdict(args, kwargs))),
            "collections.deque" => Some(self.make_deque(frame, args, span)),
            _ => None,
        }
    }
}

/// `importlib.import_module(name, package=None)` with constant names: what `import name`
/// binds to its last component (a relative name is resolved against `package`).
fn import_by_name(interp: &mut Interp, args: &[Value], kwargs: &Kwargs) -> Value {
    let package = args
        .get(1)
        .or_else(|| kwargs.iter().find(|(k, _)| k == "package").map(|(_, v)| v));
    let Some(Value::Str(name)) = args.first() else {
        return Value::unknown("`importlib.import_module` of a name that is not a constant");
    };
    let dotted = match (name.strip_prefix('.'), package) {
        (None, _) => name.to_string(),
        (Some(rest), Some(Value::Str(pkg))) => {
            // Each further leading dot goes one package up.
            let ups = rest.len() - rest.trim_start_matches('.').len();
            let mut parts: Vec<&str> = pkg.split('.').collect();
            parts.truncate(parts.len().saturating_sub(ups));
            let rest = rest.trim_start_matches('.');
            if rest.is_empty() {
                parts.join(".")
            } else {
                format!("{}.{rest}", parts.join("."))
            }
        }
        (Some(_), _) => {
            return Value::unknown("relative `importlib.import_module` without a package")
        }
    };
    interp.import_module(&dotted)
}
