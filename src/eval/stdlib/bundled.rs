//! Standard-library classes whose behaviour is plain Python over other protocols (the
//! `Mapping` and `Sequence` mixins over `__getitem__`, `__iter__` and `__len__`), written in Python that ships with
//! staticfx and evaluated like any library source. A class statement naming one of these as
//! a base inherits the Python version's methods.

use super::super::value::Value;
use super::super::{EResult, Frame, Interp};
use crate::syntax::Span;

struct Bundled {
    /// The module name the source is loaded under.
    module: &'static str,
    text: &'static str,
    /// The dotted names libraries import each class by, and the class's name in `text`.
    classes: &'static [(&'static str, &'static str)],
}

/// `typing.X[params]` for the forms of `TYPING_GENERICS`: `_subscript("X", params)`.
const TYPING_SUBSCRIPT: &str = "staticfx.typing._subscript";
/// `A | B` of two types: `_union((A, B))`.
const TYPING_UNION: &str = "staticfx.typing._union";

/// The subscripted `typing` forms that are aliases at runtime (`Generic[T]`, `Protocol[T]`
/// and `ClassVar[T]` stay the bare name, which is all a class statement or a dataclass reads).
const TYPING_GENERICS: &[&str] = &[
    "Optional",
    "Union",
    "List",
    "Dict",
    "Tuple",
    "Set",
    "FrozenSet",
    "Type",
    "Literal",
    "Callable",
    "Annotated",
    "Sequence",
    "MutableSequence",
    "Iterable",
    "Iterator",
    "Mapping",
    "MutableMapping",
];

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
        module: "staticfx._function_ctx",
        text: include_str!("python/function_ctx.py"),
        classes: &[("torch.autograd.function.FunctionCtx", "FunctionCtx")],
    },
    Bundled {
        module: "staticfx._namedtuple",
        text: include_str!("python/namedtuple.py"),
        classes: &[
            ("collections.namedtuple", "namedtuple"),
            ("typing.NamedTuple", "NamedTuple"),
            ("typing_extensions.NamedTuple", "NamedTuple"),
        ],
    },
    Bundled {
        module: "staticfx._typing",
        text: include_str!("python/typing.py"),
        classes: &[
            ("typing.get_origin", "get_origin"),
            ("typing.get_args", "get_args"),
            ("typing_extensions.get_origin", "get_origin"),
            ("typing_extensions.get_args", "get_args"),
            (TYPING_SUBSCRIPT, "_subscript"),
            (TYPING_UNION, "_union"),
        ],
    },
    Bundled {
        module: "staticfx._contextlib",
        text: include_str!("python/contextlib.py"),
        classes: &[
            ("contextlib.ExitStack", "ExitStack"),
            (
                "contextlib.AbstractContextManager",
                "AbstractContextManager",
            ),
            (super::contextlib::DECORATE_WITH, "_decorate_with"),
        ],
    },
    Bundled {
        module: "staticfx._packaging_version",
        text: include_str!("python/packaging_version.py"),
        classes: &[
            ("packaging.version.Version", "Version"),
            ("packaging.version.parse", "parse"),
            ("packaging.version.InvalidVersion", "InvalidVersion"),
        ],
    },
    Bundled {
        module: "staticfx._dataclasses",
        text: include_str!("python/dataclasses.py"),
        classes: &[
            ("dataclasses.FrozenInstanceError", "FrozenInstanceError"),
            (super::dataclasses::EQ, "__eq__"),
            (super::dataclasses::FROZEN_SETATTR, "_frozen_setattr"),
            (super::dataclasses::FROZEN_DELATTR, "_frozen_delattr"),
        ],
    },
    Bundled {
        module: "staticfx._builtins",
        text: include_str!("python/builtins.py"),
        classes: &[("builtins.property", "property")],
    },
];

/// The forwards of torch.nn leaf modules, for subclasses torch.fx traces through.
const NN_FORWARDS: (&str, &str) = (
    "staticfx._nn_forwards",
    include_str!("python/nn_forwards.py"),
);

impl Interp {
    /// The forward of the torch.nn leaf class `class` (`Embedding`) as a function of
    /// `(self, *inputs)`, if staticfx ships one.
    pub(in crate::eval) fn leaf_forward(&mut self, class: &str) -> Option<Value> {
        let id = self.project.load_bundled(NN_FORWARDS.0, NN_FORWARDS.1);
        let ns = self.load_module(id).ok()?;
        let v = ns.vars.borrow().get(class).cloned();
        v.filter(|f| matches!(f, Value::Function(_)))
    }

    /// The bundled Python class standing for a base class value, if any (`Mapping`, a
    /// builtin `property`).
    pub(in crate::eval) fn bundled_base(&mut self, base: &Value) -> Option<Value> {
        match base {
            Value::External(path) => self.bundled_class(path),
            Value::Builtin(name) => self.bundled_class(&format!("builtins.{name}")),
            _ => None,
        }
    }

    /// `typing.Optional[int]` and the other runtime aliases; None for other subscripts.
    pub(in crate::eval) fn typing_subscript(
        &mut self,
        frame: &Frame,
        path: &str,
        params: &Value,
        span: Span,
    ) -> Option<EResult<Value>> {
        let name = path
            .strip_prefix("typing.")
            .or_else(|| path.strip_prefix("typing_extensions."))
            .filter(|n| TYPING_GENERICS.contains(n))?;
        let subscript = self.bundled_class(TYPING_SUBSCRIPT)?;
        let args = vec![Value::str(name), params.clone()];
        Some(self.call_value(frame, &subscript, args, vec![], span))
    }

    /// `A | B` of two types (`int | None`): their union.
    pub(in crate::eval) fn type_union(
        &mut self,
        frame: &Frame,
        a: &Value,
        b: &Value,
        span: Span,
    ) -> Option<EResult<Value>> {
        let is_type = |v: &Value| match v {
            Value::Class(_) | Value::None => true,
            Value::Builtin(b) => matches!(
                &**b,
                "int"
                    | "float"
                    | "str"
                    | "bool"
                    | "bytes"
                    | "list"
                    | "dict"
                    | "tuple"
                    | "set"
                    | "frozenset"
                    | "type"
                    | "object"
                    | "complex"
                    | "NoneType"
            ),
            _ => false,
        };
        if !(is_type(a) && is_type(b)) || matches!((a, b), (Value::None, Value::None)) {
            return None;
        }
        let union = self.bundled_class(TYPING_UNION)?;
        let members = Value::tuple(vec![a.clone(), b.clone()]);
        Some(self.call_value(frame, &union, vec![members], vec![], span))
    }

    /// What a class statement's base stands for (`__mro_entries__`): a runtime alias
    /// (`Mapping[str, int]`) is its origin.
    pub(in crate::eval) fn mro_entry(&mut self, base: Value) -> Value {
        match &base {
            Value::Object(o) if !o.is_module() && o.attrs.borrow().contains_key("__origin__") => {
                let origin = o.get("__origin__").unwrap_or(Value::None);
                self.bundled_base(&origin).unwrap_or(origin)
            }
            _ => base,
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
