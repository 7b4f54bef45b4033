//! Standard-library classes whose behaviour is plain Python over other protocols (the
//! `Mapping` and `Sequence` mixins over `__getitem__`, `__iter__` and `__len__`), written in Python that ships with
//! staticfx and evaluated like any library source. A class statement naming one of these as
//! a base inherits the Python version's methods.

use super::super::value::Value;
use super::super::Interp;

struct Bundled {
    /// The module name the source is loaded under.
    module: &'static str,
    text: &'static str,
    /// The dotted names libraries import each class by, and the class's name in `text`.
    classes: &'static [(&'static str, &'static str)],
}

const BUNDLED: &[Bundled] = &[
    Bundled {
        module: "staticfx._collections_abc",
        text: include_str!("python/collections_abc.py"),
        classes: &[
            ("collections.abc.Mapping", "Mapping"),
            ("collections.abc.MutableMapping", "MutableMapping"),
            ("typing.Mapping", "Mapping"),
            ("typing.MutableMapping", "MutableMapping"),
            ("collections.abc.Sequence", "Sequence"),
            ("typing.Sequence", "Sequence"),
        ],
    },
    Bundled {
        module: "staticfx._contextvars",
        text: include_str!("python/contextvars.py"),
        classes: &[("contextvars.ContextVar", "ContextVar")],
    },
    Bundled {
        module: "staticfx._builtins",
        text: include_str!("python/builtins.py"),
        classes: &[("builtins.property", "property")],
    },
];

impl Interp {
    /// The bundled Python class standing for a base class value, if any (`Mapping`, a
    /// builtin `property`).
    pub(in crate::eval) fn bundled_base(&mut self, base: &Value) -> Option<Value> {
        match base {
            Value::External(path) => self.bundled_class(path),
            Value::Builtin(name) => self.bundled_class(&format!("builtins.{name}")),
            _ => None,
        }
    }

    /// The bundled Python class standing for the standard-library class `path`, if any.
    pub(in crate::eval) fn bundled_class(&mut self, path: &str) -> Option<Value> {
        let (b, name) = BUNDLED.iter().find_map(|b| {
            b.classes
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, name)| (b, *name))
        })?;
        let id = self.project.load_bundled(b.module, b.text);
        let ns = self.load_module(id).ok()?;
        let v = ns.vars.borrow().get(name).cloned();
        v
    }
}
