//! The evaluator's values: enough of Python's object model to run model constructors, plus
//! `Proxy` (a graph node standing for a runtime value) and `Unknown` (what static evaluation
//! could not determine, with the reason).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

use indexmap::IndexMap;

/// What names map to in a namespace, an instance or a scope. Every name and attribute the
/// evaluator reads hashes its string here, so with foldhash rather than std's SipHash; the
/// keys are identifiers of the analysed code, and the order of the ordered ones is insertion.
pub type Names = IndexMap<String, Value, foldhash::fast::RandomState>;
/// A function's local variables (unordered).
pub type Locals = HashMap<String, Value, foldhash::fast::RandomState>;

use crate::graph::NodeId;
use crate::semantic::{FileId, SourceFile};
use crate::shapes::DType;
use crate::syntax::Span;

#[derive(Clone)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    Tuple(Rc<Vec<Value>>),
    List(Rc<RefCell<Vec<Value>>>),
    Dict(Rc<RefCell<Vec<(Value, Value)>>>),
    Slice(Rc<[Value; 3]>),
    Ellipsis,
    Function(Rc<Function>),
    /// A method bound to its receiver (`self._helper`, `Base.__init__` bound through `super()`).
    BoundMethod(Rc<Value>, Rc<Function>),
    Class(Rc<Class>),
    Object(Rc<Object>),
    /// A Python module of the project (a file under the root).
    Module(Rc<ModuleNs>),
    /// Something outside the project root, by canonical dotted path: `torch.nn.Linear`, `math.sqrt`.
    External(Rc<str>),
    /// A builtin function of Python (`len`, `range`, `isinstance`, …).
    Builtin(Rc<str>),
    /// A builtin method bound to a value: `layers.append`, `x.view` on a proxy, `d.items`.
    Method(Rc<Value>, Rc<str>),
    Partial(Rc<Partial>),
    Proxy(NodeId),
    Param(Rc<Param>),
    /// A tensor created while evaluating a constructor (`torch.zeros(1, 1, d)`): its shape only.
    TensorConst(Rc<TensorConst>),
    Dtype(DType),
    /// `super()` inside a method of `class_`, bound to `obj`.
    Super(Rc<Value>, Rc<Class>),
    /// An instance's `__dict__` where it is used at once: as the receiver of a method
    /// (`obj.__dict__.pop(k)`), the target of an item assignment or deletion, or what a
    /// `__getattribute__` override returns for it; those read and write the instance's
    /// attributes (`eval/instance_dict.rs`). Anywhere else (bound to a name, passed as an
    /// argument, returned by another function) `Interp::eval_expr` and `call_function` turn it
    /// into a snapshot `Dict` (`Object::snapshot`). A module's `_modules` is the same kind of
    /// live dict over its child modules ([`Namespace::Modules`]).
    InstanceDict(Rc<Object>, Namespace),
    /// A module's namespace as a dict (`globals()`): reads and writes its names
    /// (`eval/types/module_globals.rs`).
    ModuleGlobals(Rc<ModuleNs>),
    Unknown(Rc<Unknown>),
}

#[derive(Debug)]
pub struct Unknown {
    pub reason: String,
    /// Attribute path from the traced module (`layers.0`), when the unknown value is a submodule.
    pub path: Option<String>,
    /// A `*args` of unknown length among a call's arguments: it stands for any number of
    /// them, so the positions of the arguments after it (`x.view(*lead, -1)`) are unknown.
    pub spread: bool,
    /// The external callable whose call returned this value (`torch.device`, `threading.Lock`),
    /// when that is all that is known of it: what a `with` statement asks of its manager.
    pub made_by: Option<Rc<str>>,
}

pub struct Param {
    pub shape: Option<Vec<i64>>,
    pub dtype: DType,
    pub is_buffer: bool,
    /// Made by `nn.Buffer(...)`: the tensor itself carries `_is_buffer`, so
    /// `isinstance(t, nn.Buffer)` holds for it and for what returns it unchanged (`.to()` to
    /// its own dtype); `register_buffer` of a plain tensor leaves it unset.
    pub nn_buffer: bool,
}

pub struct TensorConst {
    pub shape: Option<Vec<i64>>,
    pub dtype: DType,
    /// The elements, row-major, when the tensor is made from constants (`torch.linspace(0,
    /// rate, depth)`): constructors read them back with `.item()` / `.tolist()`.
    pub data: Option<Rc<[f64]>>,
}

impl TensorConst {
    pub fn of_shape(shape: Option<Vec<i64>>, dtype: DType) -> Self {
        TensorConst {
            shape,
            dtype,
            data: None,
        }
    }

    /// `t.T`: the dims reversed (a matrix transposed; a vector or a number unchanged), with
    /// its elements moved to match.
    pub fn reversed_dims(&self) -> TensorConst {
        let Some(shape) = &self.shape else {
            return TensorConst::of_shape(None, self.dtype);
        };
        let rev: Vec<i64> = shape.iter().rev().copied().collect();
        let data = self.data.as_ref().map(|d| {
            let n = d.len();
            // element at index (i0..ik) of the result is the source's (ik..i0)
            let mut out = vec![0.0; n];
            let mut src_strides = vec![1usize; shape.len()];
            for k in (0..shape.len().saturating_sub(1)).rev() {
                src_strides[k] = src_strides[k + 1] * shape[k + 1] as usize;
            }
            let mut index = vec![0usize; rev.len()];
            for slot in out.iter_mut() {
                let src: usize = index
                    .iter()
                    .enumerate()
                    .map(|(k, &i)| i * src_strides[rev.len() - 1 - k])
                    .sum();
                *slot = d[src];
                for k in (0..rev.len()).rev() {
                    index[k] += 1;
                    if index[k] < rev[k] as usize {
                        break;
                    }
                    index[k] = 0;
                }
            }
            Rc::from(out)
        });
        TensorConst {
            shape: Some(rev),
            dtype: self.dtype,
            data,
        }
    }

    /// A Python number for one element, as `.item()` returns it.
    pub fn number(&self, x: f64) -> Value {
        if self.dtype.is_floating() {
            Value::Float(x)
        } else if self.dtype == DType::Bool {
            Value::Bool(x != 0.0)
        } else {
            Value::Int(x as i64)
        }
    }
}

pub struct Partial {
    pub func: Value,
    pub args: Vec<Value>,
    pub kwargs: Vec<(String, Value)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    Plain,
    StaticMethod,
    ClassMethod,
    Property,
}

#[derive(Clone)]
pub struct Function {
    pub name: String,
    pub qualname: String,
    pub file: Arc<SourceFile>,
    pub file_id: FileId,
    /// The `function_definition` or `lambda` node, re-found by its span when called.
    pub span: Span,
    pub params: Vec<FnParam>,
    pub closure: Option<Rc<Scope>>,
    pub globals: Rc<ModuleNs>,
    pub kind: FnKind,
    pub is_lambda: bool,
    pub is_generator: bool,
    /// Whether the definition is decorated with `torch.compiler.disable`: found on the first
    /// traced call, as climbing to the decorators on every call was a percent of a `check`.
    pub compiler_disabled: std::cell::OnceCell<bool>,
    /// Which library method the evaluator runs natively in its place, if any
    /// (`native_methods`): found on the first call, as it hashes the definition's text.
    pub native: std::cell::OnceCell<Option<super::native_methods::Recognised>>,
    /// The function's `__dict__`: attributes assigned to it (`f.x = 1`), among them what
    /// `functools.update_wrapper` sets (`__wrapped__`, and `__name__` once reassigned). Shared
    /// with the same function bound another way (`classmethod(f)` is still `f`); a new
    /// function object made from it (a wrapper) gets a copy.
    pub attrs: Rc<RefCell<Names>>,
    /// What a wrapper the standard library made does besides calling its code.
    pub(crate) wrapper: Option<Wrapper>,
}

/// The behaviour of a function object the standard library made around another one.
#[derive(Clone)]
pub(crate) enum Wrapper {
    /// An `lru_cache`/`cache` wrapper: its cache, shared by every binding of the wrapper.
    LruCache(Rc<RefCell<super::stdlib::functools::LruCache>>),
    /// A `@contextmanager` wrapper: calling it makes a manager around this generator function.
    ContextManager(Rc<Function>),
}

impl Function {
    /// A new function object with `self`'s code and a copy of its `__dict__` plus
    /// `__wrapped__ = wrapped`, doing what `wrapper` says: the wrapper `lru_cache` and
    /// `contextmanager` return (they are `functools.update_wrapper`ed around their argument).
    pub(crate) fn new_wrapper(self: &Rc<Function>, wrapper: Wrapper) -> Function {
        let mut attrs = self.attrs.borrow().clone();
        attrs.insert("__wrapped__".into(), Value::Function(self.clone()));
        Function {
            attrs: Rc::new(RefCell::new(attrs)),
            wrapper: Some(wrapper),
            ..(**self).clone()
        }
    }

    /// An attribute assigned to the function (`__wrapped__`, `f.x = 1`).
    pub fn attr(&self, name: &str) -> Option<Value> {
        self.attrs.borrow().get(name).cloned()
    }

    /// The same function bound another way (`classmethod(f)`, `types.FunctionType(f.__code__, …)`).
    pub fn with_kind(&self, kind: FnKind) -> Function {
        Function {
            kind,
            ..self.clone()
        }
    }
}

#[derive(Clone)]
pub struct FnParam {
    pub name: String,
    pub kind: crate::catalog::ParamKind,
    pub default: Option<Value>,
}

pub struct Class {
    pub name: String,
    pub qualname: String,
    pub file_id: FileId,
    pub span: Span,
    pub bases: Vec<Value>,
    pub ns: RefCell<Names>,
    /// Method resolution order, starting with this class; external bases (`torch.nn.Module`)
    /// are represented by their `Value::External`.
    pub mro: RefCell<Vec<Value>>,
    /// The class's metaclass when it is a Python class (`class C(metaclass=Meta)`, or
    /// inherited from a base); None for `type` and for metaclasses outside the project.
    pub metaclass: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjKind {
    Plain,
    /// An `nn.Module` whose forward is Python we can read (a user module).
    Module,
    /// A torch.nn module kept as a leaf (`call_module`), by class name (`Conv2d`).
    Leaf(String),
    /// torch.nn containers (`Sequential`, `ModuleList`, `ModuleDict`), possibly subclassed.
    Container(String),
}

pub struct Object {
    pub id: usize,
    pub class: Value,
    pub kind: ObjKind,
    pub attrs: RefCell<Names>,
    /// For an instance of a subclass of a builtin (`class Tag(str)`, `class Shape(tuple)`,
    /// `class Layers(list)`, a member of `class Mode(str, Enum)`): the builtin value it is, as
    /// CPython's instance is that value plus a `__dict__`. What the class does not override
    /// (methods, operators, items, iteration, conversions) works on this value.
    pub base: Option<Value>,
}

/// Which namespace of an instance a live dict (`Value::InstanceDict`) shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Namespace {
    /// `obj.__dict__`: its attributes.
    Attributes,
    /// `module._modules`: a module's child modules, which torch keeps apart from its other
    /// attributes (the evaluator keeps them among the attributes, and filters).
    Modules,
}

impl Object {
    /// Whether `name` is an attribute `__dict__` shows: the evaluator keeps its own
    /// bookkeeping under dunder names (`__incomplete__`), which Python's `__dict__` would not hold.
    pub fn in_dict(name: &str) -> bool {
        !name.starts_with("__") || !name.ends_with("__")
    }

    /// One of the instance's namespaces as a dict of its entries now (what a `__dict__` or
    /// `_modules` bound to a name or passed on becomes: later writes to either side are not
    /// seen by the other).
    pub fn snapshot(&self, namespace: Namespace) -> Value {
        match namespace {
            Namespace::Attributes => self.dict_snapshot(),
            Namespace::Modules => {
                let items = self
                    .module_entries()
                    .into_iter()
                    .map(|(k, v)| (Value::str(&k), v))
                    .collect();
                Value::Dict(Rc::new(RefCell::new(items)))
            }
        }
    }

    /// Whether `name` is an entry of the namespace now.
    pub fn has_entry(&self, namespace: Namespace, name: &str) -> bool {
        match namespace {
            Namespace::Attributes => {
                Object::in_dict(name) && self.attrs.borrow().contains_key(name)
            }
            Namespace::Modules => self.module_entries().iter().any(|(k, _)| k == name),
        }
    }

    /// `__dict__` as a dict of its entries now.
    pub fn dict_snapshot(&self) -> Value {
        if self.is_module() {
            crate::eval::trace::replay::note_module_read(
                self.id,
                crate::eval::trace::replay::ALL_ATTRIBUTES,
            );
        }
        let items = self
            .attrs
            .borrow()
            .iter()
            .filter(|(k, _)| Object::in_dict(k))
            .map(|(k, v)| (Value::str(k), v.clone()))
            .collect();
        Value::Dict(Rc::new(RefCell::new(items)))
    }

    pub fn is_module(&self) -> bool {
        !matches!(self.kind, ObjKind::Plain)
    }

    pub fn get(&self, name: &str) -> Option<Value> {
        if self.is_module() {
            crate::eval::trace::replay::note_module_read(self.id, name);
        }
        self.attrs.borrow().get(name).cloned()
    }

    /// Child modules in registration order, as `named_children()` yields them.
    pub fn children(&self) -> Vec<(String, Rc<Object>)> {
        self.attrs
            .borrow()
            .iter()
            .filter_map(|(k, v)| match v {
                Value::Object(o) if o.is_module() => Some((k.clone(), o.clone())),
                _ => None,
            })
            .collect()
    }

    /// A container's entries as `self._modules` holds them, in order: its child modules and
    /// the children the evaluator could not build (unknown values) under an index key, or
    /// under any key of a container that is not subclassed (those hold children only). An
    /// unknown child is still a module a call or a loop reaches, never skipped.
    pub fn module_entries(&self) -> Vec<(String, Value)> {
        let plain_container =
            matches!(self.kind, ObjKind::Container(_)) && matches!(self.class, Value::External(_));
        self.attrs
            .borrow()
            .iter()
            .filter(|(k, v)| match v {
                Value::Object(o) => o.is_module(),
                Value::Unknown(_) => plain_container || k.parse::<usize>().is_ok(),
                _ => false,
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    pub fn class_name(&self) -> String {
        match &self.class {
            Value::Class(c) => c.name.clone(),
            Value::External(p) => p.rsplit('.').next().unwrap_or(p).to_string(),
            _ => "object".into(),
        }
    }
}

/// Lexicographic order of two sequences, as Python compares tuples and lists.
fn order_items(a: &[Value], b: &[Value]) -> Option<std::cmp::Ordering> {
    for (x, y) in a.iter().zip(b) {
        if x.py_eq(y)? {
            continue;
        }
        return x.py_order(y);
    }
    Some(a.len().cmp(&b.len()))
}

/// A function's local scope; closures keep their defining scope alive.
pub struct Scope {
    pub vars: RefCell<Locals>,
    pub parent: Option<Rc<Scope>>,
    /// A class body's namespace: functions and classes defined in it do not see its names
    /// (a method's `f` is the module's `f`, not the method of the same name), as in Python.
    pub class_body: bool,
}

impl Scope {
    /// The scope that a function or class defined where `locals` is the innermost scope
    /// closes over: the innermost enclosing function scope, skipping a class body.
    pub fn enclosing_for_definitions(locals: &Option<Rc<Scope>>) -> Option<Rc<Scope>> {
        match locals {
            Some(s) if s.class_body => s.parent.clone(),
            other => other.clone(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadState {
    NotLoaded,
    Loading,
    Loaded,
}

pub struct ModuleNs {
    pub name: String,
    pub file_id: FileId,
    pub file: Arc<SourceFile>,
    pub vars: RefCell<Names>,
    /// Top-level imports of project modules not yet needed: resolved on first use, so a file
    /// pulls in only the modules it actually touches (a package `__init__` that imports every
    /// model would otherwise load thousands of files).
    pub pending: RefCell<HashMap<String, PendingImport>>,
    /// Modules of `from m import *` under `if TYPE_CHECKING:`: searched, in order, for a name
    /// the module does not bind itself.
    pub star_sources: RefCell<Vec<String>>,
    pub state: Cell<LoadState>,
}

/// `from module import attr` (attr = Some) or `import module` (attr = None) bound to a name
/// but not evaluated yet.
#[derive(Clone, Debug)]
pub struct PendingImport {
    pub module: String,
    pub attr: Option<String>,
    /// For `import a.b` (which binds `a`): the submodule to load along with it.
    pub also_load: Option<String>,
    pub span: Span,
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::Str(Rc::from(s))
    }

    pub fn unknown(reason: impl Into<String>) -> Value {
        Value::Unknown(Rc::new(Unknown {
            reason: reason.into(),
            path: None,
            spread: false,
            made_by: None,
        }))
    }

    /// What calling the external `path` returned, when the analyser knows nothing more of it.
    pub fn result_of(path: &str) -> Value {
        Value::Unknown(Rc::new(Unknown {
            reason: format!("result of `{path}`"),
            path: None,
            spread: false,
            made_by: Some(Rc::from(path)),
        }))
    }

    /// A `*args` of unknown length, in place of the arguments it stands for.
    pub fn unknown_spread(reason: impl Into<String>) -> Value {
        Value::Unknown(Rc::new(Unknown {
            reason: reason.into(),
            path: None,
            spread: true,
            made_by: None,
        }))
    }

    /// Whether this is a `*args` of unknown length (`unknown_spread`).
    pub fn is_unknown_spread(&self) -> bool {
        matches!(self, Value::Unknown(u) if u.spread)
    }

    pub fn tuple(v: Vec<Value>) -> Value {
        Value::Tuple(Rc::new(v))
    }

    pub fn list(v: Vec<Value>) -> Value {
        Value::List(Rc::new(RefCell::new(v)))
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, Value::Unknown(_))
    }

    pub fn type_name(&self) -> String {
        match self {
            Value::None => "NoneType".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Float(_) => "float".into(),
            Value::Str(_) => "str".into(),
            Value::Tuple(_) => "tuple".into(),
            Value::List(_) => "list".into(),
            Value::Dict(_) | Value::InstanceDict(..) | Value::ModuleGlobals(_) => "dict".into(),
            Value::Slice(_) => "slice".into(),
            Value::Ellipsis => "ellipsis".into(),
            Value::Function(_)
            | Value::BoundMethod(..)
            | Value::Builtin(_)
            | Value::Method(..)
            | Value::Partial(_) => "function".into(),
            Value::Class(_) => "type".into(),
            Value::Object(o) => o.class_name(),
            Value::Module(_) => "module".into(),
            Value::External(p) => p.to_string(),
            Value::Proxy(_) => "Proxy".into(),
            Value::Param(_) => "Parameter".into(),
            Value::TensorConst(_) => "Tensor".into(),
            Value::Dtype(_) => "dtype".into(),
            Value::Super(..) => "super".into(),
            Value::Unknown(_) => "unknown".into(),
        }
    }

    /// Python equality for constants; None when it cannot be decided statically.
    /// How Python's `<` orders two plain values: numbers by value, strings by code point,
    /// tuples and lists item by item (the first unequal pair decides, then the length).
    /// None when Python would raise (`1 < "a"`) or a value is not known.
    pub fn py_order(&self, other: &Value) -> Option<std::cmp::Ordering> {
        use Value::*;
        let number = |v: &Value| match v {
            Bool(b) => Some(*b as i64 as f64),
            Int(i) => Some(*i as f64),
            Float(f) => Some(*f),
            _ => Option::None,
        };
        match (self, other) {
            (Object(o), _) if o.base.is_some() => o.base.as_ref()?.py_order(other),
            (_, Object(o)) if o.base.is_some() => self.py_order(o.base.as_ref()?),
            (Int(a), Int(b)) => Some(a.cmp(b)),
            (Str(a), Str(b)) => Some(a.cmp(b)),
            (Tuple(a), Tuple(b)) => order_items(a, b),
            (List(a), List(b)) => order_items(&a.borrow(), &b.borrow()),
            _ => number(self)?.partial_cmp(&number(other)?),
        }
    }

    pub fn py_eq(&self, other: &Value) -> Option<bool> {
        use Value::*;
        Some(match (self, other) {
            (None, None) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => a == b,
            (Int(a), Float(b)) | (Float(b), Int(a)) => (*a as f64) == *b,
            (Bool(a), Int(b)) | (Int(b), Bool(a)) => (*a as i64) == *b,
            (Str(a), Str(b)) => a == b,
            (Tuple(a), Tuple(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|(x, y)| x.py_eq(y) == Some(true))
            }
            (List(a), List(b)) => {
                let (a, b) = (a.borrow(), b.borrow());
                a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|(x, y)| x.py_eq(y) == Some(true))
            }
            (External(a), External(b)) => a == b,
            (Dtype(a), Dtype(b)) => a == b,
            (Class(a), Class(b)) => Rc::ptr_eq(a, b),
            // An instance of a builtin's subclass compares as its builtin value.
            (Object(o), v) | (v, Object(o)) if o.base.is_some() => {
                return o.base.as_ref()?.py_eq(v)
            }
            (Object(a), Object(b)) => Rc::ptr_eq(a, b),
            (Unknown(_), _) | (_, Unknown(_)) | (Proxy(_), _) | (_, Proxy(_)) => {
                return Option::None
            }
            (Function(a), Function(b)) => Rc::ptr_eq(a, b),
            (Builtin(a), Builtin(b)) => a == b,
            // Callables and classes of different kinds are different objects.
            (
                Function(_) | Class(_) | External(_) | Module(_) | Builtin(_) | Partial(_),
                Function(_) | Class(_) | External(_) | Module(_) | Builtin(_) | Partial(_),
            ) if std::mem::discriminant(self) != std::mem::discriminant(other) => false,
            (Module(a), Module(b)) => Rc::ptr_eq(a, b),
            (None, _) | (_, None) => false,
            (Str(_), Int(_) | Float(_) | Bool(_)) | (Int(_) | Float(_) | Bool(_), Str(_)) => false,
            // A number or string never equals a container, callable, class or module.
            (
                Str(_) | Int(_) | Float(_) | Bool(_),
                Tuple(_) | List(_) | Dict(_) | Function(_) | Class(_) | Module(_) | External(_),
            )
            | (
                Tuple(_) | List(_) | Dict(_) | Function(_) | Class(_) | Module(_) | External(_),
                Str(_) | Int(_) | Float(_) | Bool(_),
            ) => false,
            _ => return Option::None,
        })
    }

    /// Python identity (`is`), decidable for singletons and shared objects.
    pub fn py_is(&self, other: &Value) -> Option<bool> {
        use Value::*;
        match (self, other) {
            (Unknown(_), _) | (_, Unknown(_)) => Option::None,
            (None, None) => Some(true),
            (None, _) | (_, None) => Some(false),
            (Bool(a), Bool(b)) => Some(a == b),
            (Object(a), Object(b)) => Some(Rc::ptr_eq(a, b)),
            (Class(a), Class(b)) => Some(Rc::ptr_eq(a, b)),
            (External(a), External(b)) => Some(a == b),
            (List(a), List(b)) => Some(Rc::ptr_eq(a, b)),
            _ => self.py_eq(other),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::None => f.write_str("None"),
            Value::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Tuple(v) => f.debug_tuple("").field(&v).finish(),
            Value::List(v) => write!(f, "{:?}", v.borrow()),
            Value::Dict(_) => f.write_str("{...}"),
            Value::Proxy(n) => write!(f, "Proxy({})", n.index()),
            Value::External(p) => write!(f, "<{p}>"),
            Value::Unknown(u) => write!(f, "<unknown: {}>", u.reason),
            other => write!(f, "<{}>", other.type_name()),
        }
    }
}

/// A dict's string-keyed entries as keyword arguments (`**kwds`, a class namespace); other
/// keys are left out.
pub fn str_keyed(items: &[(Value, Value)]) -> Vec<(String, Value)> {
    items
        .iter()
        .filter_map(|(k, v)| match k {
            Value::Str(k) => Some((k.to_string(), v.clone())),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tensor_const_tests {
    use super::*;

    #[test]
    fn reversed_dims_transposes_shape_and_elements() {
        let row = TensorConst {
            shape: Some(vec![2, 3]),
            dtype: DType::Float32,
            data: Some(Rc::from(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])),
        };
        let t = row.reversed_dims();
        assert_eq!(t.shape, Some(vec![3, 2]));
        assert_eq!(&*t.data.unwrap(), &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        let cube = TensorConst {
            shape: Some(vec![2, 1, 2]),
            dtype: DType::Int64,
            data: Some(Rc::from(vec![1.0, 2.0, 3.0, 4.0])),
        };
        let t = cube.reversed_dims();
        assert_eq!(t.shape, Some(vec![2, 1, 2]));
        // t[i][0][k] = cube[k][0][i]
        assert_eq!(&*t.data.unwrap(), &[1.0, 3.0, 2.0, 4.0]);
        let scalar = TensorConst {
            shape: Some(vec![]),
            dtype: DType::Float32,
            data: Some(Rc::from(vec![7.0])),
        };
        assert_eq!(&*scalar.reversed_dims().data.unwrap(), &[7.0]);
    }
}
