//! torch.nn's side of the object model: leaf modules built from the catalogue (attributes,
//! parameters and buffers with their shapes), containers, `nn.Parameter`. Module objects'
//! methods (`modules()`, `register_buffer`, …) are in `types::module_object`, calls of other
//! external functions in `types::external`.

use crate::eval::types::proxy;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use super::call::{as_f64, as_int, Kwargs};
use super::stmt::Truth;
use super::trace::value_meta;
use super::types::external::ExternalCall;
use super::value::{FnParam, ObjKind, Object, Param, TensorConst, Value};
use super::{EResult, Frame, Interp};
use crate::catalog::{self, ModuleSpec, ParamKind, ShapeExpr};
use crate::diagnostics::codes;
use crate::semantic::SourceFile;
use crate::shapes::rules::{self, Inputs};
use crate::shapes::{concrete, shape_of, DType, Meta};
use crate::syntax::Span;
use crate::traced::EventKind;

const CONTAINERS: &[&str] = &[
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
];

fn json_value(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::None,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => n
            .as_i64()
            .map(Value::Int)
            .or_else(|| n.as_f64().map(Value::Float))
            .unwrap_or(Value::None),
        serde_json::Value::String(s) => Value::str(s),
        serde_json::Value::Array(a) => Value::tuple(a.iter().map(json_value).collect()),
        serde_json::Value::Object(_) => Value::unknown("default value"),
    }
}

fn spec_params(spec: &ModuleSpec) -> Vec<FnParam> {
    spec.signature
        .iter()
        .map(|p| FnParam {
            name: p.name.clone(),
            kind: p.kind,
            default: p.has_default.then(|| json_value(&p.default)),
        })
        .collect()
}

impl Interp {
    pub(in crate::eval) fn new_object(&mut self, class: Value, kind: ObjKind) -> Rc<Object> {
        let id = self.new_object_id();
        let o = Rc::new(Object {
            id,
            class,
            kind,
            attrs: RefCell::new(Default::default()),
            base: None,
        });
        self.created.object(&o);
        o
    }

    /// An instance of an exception class with its `args`.
    pub(in crate::eval) fn exception_object(&mut self, class: Value, args: Vec<Value>) -> Value {
        let o = self.new_object(class, ObjKind::Plain);
        o.attrs
            .borrow_mut()
            .insert("args".into(), Value::tuple(args));
        Value::Object(o)
    }

    /// `SomeClass(...)` for a user class.
    pub fn instantiate(
        &mut self,
        frame: &Frame,
        class: &Value,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let Value::Class(c) = class else {
            return Ok(Value::unknown("instance"));
        };
        if let Some(made) = self.call_through_metaclass(frame, c, &args, &kwargs, span) {
            return made;
        }
        self.construct(frame, class, args, kwargs, span)
    }

    /// An instance of `class` that no `__init__` has run on (`object.__new__(cls)`): a module
    /// when a torch.nn class is among its bases, or when an unresolved base leaves it open and
    /// it defines forward.
    pub(in crate::eval) fn blank_instance(&mut self, class: &Value) -> Rc<Object> {
        let mro = match class {
            Value::Class(c) => c.mro.borrow().clone(),
            _ => vec![],
        };
        let mut kind = ObjKind::Plain;
        for m in &mro {
            match m {
                Value::External(p) => {
                    let short = p.rsplit('.').next().unwrap_or(p);
                    if CONTAINERS.contains(&short) && p.starts_with("torch.nn") {
                        kind = ObjKind::Container(short.to_string());
                        break;
                    }
                    if p.starts_with("torch.nn") || p.starts_with("torch.ao.nn") {
                        kind = ObjKind::Module;
                        break;
                    }
                }
                Value::Unknown(_) => {}
                _ => {}
            }
        }
        if kind == ObjKind::Plain && mro.iter().any(|m| matches!(m, Value::Unknown(_))) {
            // A base we could not resolve: assume a module if the class defines forward.
            if self.class_lookup(class, "forward").is_some() {
                kind = ObjKind::Module;
            }
        }
        self.new_object(class.clone(), kind)
    }

    /// A class's own `__new__`, as `type.__call__` runs it first: an instance of the class
    /// (`super().__new__(cls)`, a cached singleton) is what `__init__` then runs on; anything
    /// else is the call's value, and `__init__` does not run (a deprecated name's `__new__`
    /// returning the class that replaced it). An analysis limit inside it is noted, and the
    /// instance built as without a `__new__`.
    fn call_user_new(
        &mut self,
        frame: &Frame,
        class: &Value,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> EResult<UserNew> {
        let Some(new) = self.user_method(class, "__new__") else {
            return Ok(UserNew::Absent);
        };
        let mut all = vec![class.clone()];
        all.extend(args.iter().cloned());
        let made = match self.call_function(frame, &new, None, all, kwargs.clone(), span) {
            Ok(made) => made,
            Err(e) if e.code == codes::BUDGET || e.code == codes::RAISED => return Err(e),
            Err(e) => {
                self.note_error(&e);
                return Ok(UserNew::Absent);
            }
        };
        match &made {
            Value::Unknown(_) => Ok(UserNew::Absent),
            Value::Object(o) if matches!(self.isinstance(&made, class), Value::Bool(true)) => {
                Ok(UserNew::Instance(o.clone()))
            }
            _ => Ok(UserNew::Other(made)),
        }
    }

    /// `type.__call__` for a class: a new instance, set up by `__init__`.
    pub(in crate::eval) fn construct(
        &mut self,
        frame: &Frame,
        class: &Value,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let Value::Class(c) = class else {
            return Ok(Value::unknown("instance"));
        };
        if super::stdlib::enums::is_enum_class(c) {
            let v = args.first().cloned().unwrap_or(Value::None);
            return self.enum_lookup(frame, c, &v, span);
        }
        if let Some(base) = super::builtin_subclass::value_base_of(class) {
            return self.construct_builtin_subclass(frame, class, &base, args, kwargs, span);
        }
        let made = match self.call_user_new(frame, class, &args, &kwargs, span)? {
            UserNew::Other(v) => return Ok(v),
            UserNew::Instance(o) => Some(o),
            UserNew::Absent => None,
        };
        // Enum-like and typing bases (NamedTuple, dataclasses) behave as plain records here.
        let obj = match made {
            Some(o) => o,
            None => self.blank_instance(class),
        };
        // `__init__` is the instance's class's: a `__new__` may make a subclass's instance
        let class = &obj.class.clone();
        let mro = match class {
            Value::Class(c) => c.mro.borrow().clone(),
            _ => vec![],
        };
        let kind = obj.kind.clone();
        let value = Value::Object(obj.clone());
        // `BaseException.__new__` keeps the arguments as `args`.
        let is_exception = mro.iter().any(|m| {
            matches!(m, Value::Builtin(b) if super::stdlib::contextlib::exception_bases(b).is_some() || &**b == "BaseException")
        });
        if is_exception {
            obj.attrs
                .borrow_mut()
                .insert("args".into(), Value::tuple(args.clone()));
        }
        let init = self.class_lookup(class, "__init__");
        let watch = std::mem::replace(
            &mut self.init_skips,
            super::InitSkips::at(self.call_depth + 1),
        );
        let result = match init {
            Some(Value::Builtin(b)) if &*b == super::stdlib::DATACLASS_INIT => {
                self.dataclass_init(frame, &value, args, kwargs, span)
            }
            Some(Value::Function(f)) => self
                .call_function(frame, &f, Some(value.clone()), args, kwargs, span)
                .map(|_| ()),
            _ => match &kind {
                ObjKind::Container(k) => self.init_container(frame, &obj, k, args, kwargs, span),
                _ if mro.iter().any(is_dict_base) => {
                    self.init_dict_base(frame, &obj, args, kwargs, span)
                }
                // A subclass of a torch.nn layer without an `__init__` of its own (timm's
                // `Linear(nn.Linear)`) is built by the layer's.
                _ => match torch_nn_base(&mro) {
                    Some(base) => self
                        .call_super_external(
                            frame,
                            &Rc::new(value.clone()),
                            &base,
                            "__init__",
                            args,
                            kwargs,
                            span,
                        )
                        .map(|_| ()),
                    None => Ok(()),
                },
            },
        };
        let skipped = std::mem::replace(&mut self.init_skips, watch);
        // `__incomplete__` holds why, for an entry whose construction fails to report.
        if let Err(e) = result {
            // A Python exception leaves the constructor, as in Python (`except InvalidVersion`
            // around `Version(text)`, a `TypeError` for a wrong argument count); an analysis
            // limit leaves a partly built instance.
            if e.code == codes::BUDGET || e.code == codes::RAISED {
                return Err(e);
            }
            self.note_error(&e);
            let why = Value::str(&self.describe_error(&e));
            obj.attrs.borrow_mut().insert("__incomplete__".into(), why);
        } else if let (Some(first), true) = (&skipped.first, obj.is_module()) {
            // `__init__` skipped a statement it could not evaluate: an attribute that
            // statement would have set is unknown, not missing. Only for modules, whose
            // layers then become opaque calls: a config's `hasattr(self, "decoder")` must stay
            // False (transformers' `get_text_config` raises when it finds several).
            let why = Value::str(&self.describe_error(first));
            obj.attrs.borrow_mut().insert("__incomplete__".into(), why);
        }
        Ok(value)
    }

    /// `nn.Linear(784, 128)`: a leaf module with the catalogue's attributes and parameters.
    pub fn make_leaf(
        &mut self,
        frame: &Frame,
        name: &str,
        spec: &ModuleSpec,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let obj = self.new_object(
            Value::External(Rc::from(spec.path.as_str())),
            ObjKind::Leaf(name.to_string()),
        );
        self.init_leaf(frame, &obj, spec, args, kwargs, span)?;
        self.note_parameters_made(frame, &obj, span);
        Ok(Value::Object(obj))
    }

    /// A torch.nn module built while forward is traced that made parameters (Dynamo refuses
    /// the `nn.Parameter` constructor).
    pub(in crate::eval) fn note_parameters_made(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        span: Span,
    ) {
        let made = obj
            .attrs
            .borrow()
            .values()
            .any(|v| matches!(v, Value::Param(p) if !p.is_buffer));
        if let (true, Some(t)) = (made, self.tracer.as_mut()) {
            let class = obj.class_name();
            t.event(EventKind::ParameterCreated, frame.file_id, span, class);
        }
    }

    fn init_leaf(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        spec: &ModuleSpec,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<()> {
        let bound = self.bind(frame, &spec_params(spec), args, kwargs, &spec.path, span)?;
        let env: Vec<(String, Value)> = bound.clone();
        {
            let mut attrs = obj.attrs.borrow_mut();
            for (k, v) in &bound {
                if k != "device" && k != "dtype" {
                    attrs.insert(k.clone(), v.clone());
                }
            }
        }
        for (attr, expr) in &spec.attributes {
            let v = self
                .eval_catalog_expr(frame, expr, &env)
                .unwrap_or_else(|_| Value::unknown(format!("`{attr}`")));
            obj.attrs.borrow_mut().insert(attr.clone(), v);
        }
        let dtype = bound
            .iter()
            .find(|(k, _)| k == "dtype")
            .and_then(|(_, v)| {
                if let Value::Dtype(d) = v {
                    Some(*d)
                } else {
                    None
                }
            })
            .unwrap_or(DType::Float32);
        for (specs, is_buffer) in [(&spec.parameters, false), (&spec.buffers, true)] {
            for t in specs {
                let present = match &t.when {
                    None => Truth::Known(true),
                    Some(w) => {
                        let v = self
                            .eval_catalog_expr(frame, w, &env)
                            .unwrap_or_else(|e| Value::unknown(e.message));
                        self.truth(frame, &v, span)?
                    }
                };
                let value = match present {
                    Truth::Known(false) => Value::None,
                    _ => {
                        let shape = self.eval_shape(frame, &t.shape, &env);
                        let dt = t.dtype.as_deref().and_then(DType::parse).unwrap_or(dtype);
                        Value::Param(Rc::new(Param {
                            shape,
                            dtype: dt,
                            is_buffer,
                            nn_buffer: false,
                        }))
                    }
                };
                obj.attrs.borrow_mut().insert(t.name.clone(), value);
            }
        }
        for sub in &spec.submodules {
            if let Some(w) = &sub.when {
                let v = self
                    .eval_catalog_expr(frame, w, &env)
                    .unwrap_or_else(|e| Value::unknown(e.message));
                if let Truth::Known(false) = self.truth(frame, &v, span)? {
                    continue;
                }
            }
            let mut kw = Vec::new();
            for (k, e) in &sub.args {
                kw.push((
                    k.clone(),
                    self.eval_catalog_expr(frame, e, &env)
                        .unwrap_or_else(|e| Value::unknown(e.message)),
                ));
            }
            let cat = catalog::get();
            let child = match cat.modules.get(&sub.module) {
                Some(s) => self.make_leaf(frame, &sub.module, s, vec![], kw, span)?,
                None => Value::unknown(format!("submodule `{}`", sub.module)),
            };
            obj.attrs.borrow_mut().insert(sub.name.clone(), child);
        }
        Ok(())
    }

    fn eval_shape(
        &mut self,
        frame: &Frame,
        shape: &ShapeExpr,
        env: &[(String, Value)],
    ) -> Option<Vec<i64>> {
        let mut out = Vec::new();
        match shape {
            ShapeExpr::Whole(e) => {
                let v = self.eval_catalog_expr(frame, e, env).ok()?;
                for d in self.iterate(frame, &v, Span::default()).ok()? {
                    out.push(as_int(&d)?);
                }
            }
            ShapeExpr::Dims(dims) => {
                for d in dims {
                    if let Some(rest) = d.strip_prefix('*') {
                        let v = self.eval_catalog_expr(frame, rest, env).ok()?;
                        for x in self.iterate(frame, &v, Span::default()).ok()? {
                            out.push(as_int(&x)?);
                        }
                    } else {
                        out.push(as_int(&self.eval_catalog_expr(frame, d, env).ok()?)?);
                    }
                }
            }
        }
        Some(out)
    }

    /// Evaluates one of the catalogue's Python expressions over a module's constructor arguments.
    fn eval_catalog_expr(
        &mut self,
        frame: &Frame,
        expr: &str,
        env: &[(String, Value)],
    ) -> EResult<Value> {
        let file = match self.expr_cache.get(expr) {
            Some(f) => f.clone(),
            None => {
                let f = Arc::new(SourceFile::new(
                    Default::default(),
                    "<catalog>".into(),
                    Arc::from(expr),
                    None,
                ));
                self.expr_cache.insert(expr.to_string(), f.clone());
                f
            }
        };
        let scope = Rc::new(super::value::Scope {
            vars: RefCell::new(env.iter().cloned().collect()),
            parent: None,
            class_body: false,
        });
        let inner = Frame {
            file: file.clone(),
            locals: Some(scope),
            class: None,
            receiver: None,
            ..frame.clone()
        };
        let saved = self.tracer.take();
        let tree = file.tree();
        let root = tree.root_node();
        let result = match root.named_child(0).and_then(|s| s.named_child(0)) {
            Some(e) => self.eval_expr(&inner, e),
            None => Ok(Value::None),
        };
        self.tracer = saved;
        result.map_err(|mut e| {
            e.file = frame.file_id;
            e
        })
    }

    fn init_container(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        kind: &str,
        args: Vec<Value>,
        _kwargs: Kwargs,
        span: Span,
    ) -> EResult<()> {
        match kind {
            "Sequential" => {
                if let [Value::Dict(d)] = args.as_slice() {
                    for (k, v) in d.borrow().iter() {
                        if let Value::Str(k) = k {
                            obj.attrs.borrow_mut().insert(k.to_string(), v.clone());
                        }
                    }
                } else {
                    for (i, a) in args.into_iter().enumerate() {
                        obj.attrs.borrow_mut().insert(i.to_string(), a);
                    }
                }
            }
            "ModuleList" | "ParameterList" => {
                if let Some(a) = args.first() {
                    let items = self.iterate(frame, a, span)?;
                    for (i, m) in items.into_iter().enumerate() {
                        obj.attrs.borrow_mut().insert(i.to_string(), m);
                    }
                }
            }
            "ModuleDict" | "ParameterDict" => {
                if let Some(a) = args.first() {
                    let pairs: Vec<(Value, Value)> = match a {
                        Value::Dict(d) => d.borrow().clone(),
                        other => {
                            let mut out = vec![];
                            for it in self.iterate(frame, other, span)? {
                                let kv = self.unpack(frame, &it, 2, false, span)?;
                                out.push((kv[0].clone(), kv[1].clone()));
                            }
                            out
                        }
                    };
                    for (k, v) in pairs {
                        if let Value::Str(k) = k {
                            obj.attrs.borrow_mut().insert(k.to_string(), v);
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// `super().__init__(...)` / `super().forward(x)` reaching a torch.nn base class.
    pub fn call_super_external(
        &mut self,
        frame: &Frame,
        recv: &Rc<Value>,
        path: &str,
        method: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        // `BaseException.__init__(self, *args)` sets `args`, which `str(e)` shows.
        let is_exception =
            super::stdlib::contextlib::exception_bases(path).is_some() || path == "BaseException";
        if let (true, "__init__", Value::Object(o)) = (is_exception, method, &**recv) {
            o.attrs
                .borrow_mut()
                .insert("args".into(), Value::tuple(args));
            return Ok(Value::None);
        }
        if let Some(r) = self.call_type_method(frame, recv, path, method, &args, &kwargs, span) {
            return r;
        }
        // `super().__new__(cls)` in a class's `__new__`, reaching `object` or a torch.nn base
        if method == "__new__" && !super::builtin_subclass::is_value_base(path) {
            return Ok(match args.first() {
                Some(cls @ Value::Class(_)) => Value::Object(self.blank_instance(cls)),
                _ => Value::unknown("`__new__` without a class"),
            });
        }
        if super::builtin_subclass::is_value_base(path) {
            return self.builtin_super_method(frame, recv, path, method, args, kwargs, span);
        }
        if matches!(method, "__setattr__" | "__delattr__" | "__getattribute__") && path == "object"
        {
            let mut all = vec![(**recv).clone()];
            all.extend(args);
            return self.call_object_method(frame, method, &all, span);
        }
        let Value::Object(obj) = &**recv else {
            return Ok(Value::None);
        };
        let short = path.rsplit('.').next().unwrap_or(path);
        // No external base of ours overrides how attributes are set: `object`'s stores them
        // on the instance (diffusers' `FrozenDict(OrderedDict)` sets each item as one).
        if matches!(method, "__setattr__" | "__delattr__") {
            let mut all = vec![(**recv).clone()];
            all.extend(args);
            return self.call_object_method(frame, method, &all, span);
        }
        if DICT_BASES.contains(&path) {
            return self.dict_base_method(frame, obj, method, args, kwargs, span);
        }
        match method {
            "__getattr__" => Err(self.error(
                frame,
                span,
                codes::RAISED,
                match args.first() {
                    Some(Value::Str(name)) => format!(
                        "AttributeError: `{}` object has no attribute `{name}`",
                        obj.class_name()
                    ),
                    _ => format!(
                        "AttributeError: `{}` object has no attribute",
                        obj.class_name()
                    ),
                },
            )),
            "__init__" => {
                let leaf = CONTAINERS.contains(&short).then_some(false).or_else(|| {
                    catalog::get()
                        .module(path)
                        .filter(|(_, s)| !s.container)
                        .map(|_| true)
                });
                if let Some(t) = self.tracer.as_mut() {
                    if short == "Module" || leaf.is_some() {
                        let class = obj.class_name();
                        t.event(EventKind::ModuleInit, frame.file_id, span, class);
                    }
                }
                if CONTAINERS.contains(&short) {
                    self.init_container(frame, obj, short, args, kwargs, span)?;
                } else if let Some((_, spec)) =
                    catalog::get().module(path).filter(|(_, s)| !s.container)
                {
                    let spec = spec.clone();
                    self.init_leaf(frame, obj, &spec, args, kwargs, span)?;
                    self.note_parameters_made(frame, obj, span);
                }
                Ok(Value::None)
            }
            "forward" if short == "Sequential" => self.run_sequential(frame, obj, args, span),
            "forward" => self.run_leaf_forward(frame, obj, path, args, kwargs, span),
            _ => self.module_method(frame, obj, method, args, kwargs, span),
        }
    }

    /// The forward of the torch.nn leaf class `base` run on `obj`, an instance of a subclass
    /// defined outside torch.nn: torch.fx traces such a module rather than keeping it as a leaf,
    /// so the leaf's functional call is recorded with the parameters read as attributes. A
    /// leaf whose forward staticfx does not ship stays one `call_module`.
    fn run_leaf_forward(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        base: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let class = catalog::get()
            .module(base)
            .map(|(_, spec)| spec.path.rsplit('.').next().unwrap_or("").to_string());
        let value = Value::Object(obj.clone());
        let own_leaf = matches!(obj.kind, ObjKind::Leaf(_));
        match class
            .and_then(|c| self.leaf_forward(&c))
            .filter(|_| !own_leaf)
        {
            Some(forward) => {
                let mut all = vec![value];
                all.extend(args);
                self.call_value(frame, &forward, all, kwargs, span)
            }
            None => self.trace_module(frame, &value, args, kwargs, span),
        }
    }

    /// A subclass of `dict` / `OrderedDict` keeps its items in a dict of its own, which the
    /// base class's methods reached through `super()` read and write (transformers'
    /// `ClassInstantier(OrderedDict)` overrides `__getitem__` and calls the base's).
    fn init_dict_base(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<()> {
        let data = self.call_value(frame, &Value::Builtin(Rc::from("dict")), args, kwargs, span)?;
        obj.attrs.borrow_mut().insert(DICT_DATA.into(), data);
        Ok(())
    }

    pub(in crate::eval) fn dict_base_method(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        method: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        if method == "__init__" {
            self.init_dict_base(frame, obj, args, kwargs, span)?;
            return Ok(Value::None);
        }
        // `dict.__new__` makes the storage: a subclass whose `__init__` never reaches the
        // dict's (a dataclass such as `ModelOutput`) still has its items.
        let data = obj
            .attrs
            .borrow_mut()
            .entry(DICT_DATA.into())
            .or_insert_with(|| Value::Dict(Default::default()))
            .clone();
        let mut args = args.into_iter();
        match method {
            "__getitem__" => {
                let key = args.next().unwrap_or(Value::None);
                self.get_item(frame, &data, key, span)
            }
            "__setitem__" => {
                let key = args.next().unwrap_or(Value::None);
                let v = args.next().unwrap_or(Value::None);
                self.set_item(frame, &data, key, v, span)?;
                Ok(Value::None)
            }
            _ => {
                let m = self.get_attr(frame, &data, method, span)?;
                self.call_value(frame, &m, args.collect(), kwargs, span)
            }
        }
    }

    /// The entries of a value read as a mapping (`dict(m)`, `f(**m)`, `{**m}`), or None for a
    /// value that is not one. A dict subclass gives the items it keeps unless it redefines
    /// `keys` or `__getitem__`; then, as for any object with `keys`, Python calls `keys()` and
    /// looks each key up.
    pub(in crate::eval) fn mapping_entries(
        &mut self,
        frame: &Frame,
        v: &Value,
        span: Span,
    ) -> EResult<Option<Vec<(Value, Value)>>> {
        let o = match v {
            Value::Dict(d) => return Ok(Some(d.borrow().clone())),
            Value::InstanceDict(o, namespace) => {
                return self.mapping_entries(frame, &o.snapshot(*namespace), span)
            }
            Value::Object(o) => o,
            _ => return Ok(None),
        };
        let redefined = |this: &Self, name| this.user_method(&o.class, name).is_some();
        if !redefined(self, "keys") && !redefined(self, "__getitem__") {
            if let Some(items) = dict_subclass_items(o) {
                return Ok(Some(items));
            }
        }
        let Some(keys_method) = self.user_method(&o.class, "keys") else {
            return Ok(None);
        };
        let keys =
            self.call_function(frame, &keys_method, Some(v.clone()), vec![], vec![], span)?;
        let mut entries = Vec::new();
        for key in self.iterate(frame, &keys, span)? {
            let value = self.get_item(frame, v, key.clone(), span)?;
            entries.push((key, value));
        }
        Ok(Some(entries))
    }

    fn run_sequential(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        args: Vec<Value>,
        span: Span,
    ) -> EResult<Value> {
        let mut x = args.into_iter().next().unwrap_or(Value::None);
        // `self._modules` in order: a child the evaluator could not build (an unknown value)
        // is still called, as an opaque module, never skipped.
        for (_, child) in self.module_entry_values(frame, obj, span)? {
            x = match child {
                Value::Object(child) => {
                    self.call_module_object(frame, &child, vec![x], vec![], span)?
                }
                child => self.call_value(frame, &child, vec![x], vec![], span)?,
            };
        }
        Ok(x)
    }

    /// `Object::module_entries` with each unknown child read as an attribute, so it carries
    /// its path: a call of it is an opaque call of that submodule.
    pub(in crate::eval) fn module_entry_values(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        span: Span,
    ) -> EResult<Vec<(String, Value)>> {
        let container = Value::Object(obj.clone());
        let mut out = vec![];
        for (k, c) in obj.module_entries() {
            let c = match c {
                Value::Unknown(_) => self.get_attr(frame, &container, &k, span)?,
                c => c,
            };
            out.push((k, c));
        }
        Ok(out)
    }

    /// A call of a module whose forward the evaluator cannot follow (`why`): a `call_module`
    /// node of unknown output shape with an analysis-limit note while tracing, an unknown
    /// value otherwise; never the input passed through.
    pub(in crate::eval) fn opaque_module_call(
        &mut self,
        frame: &Frame,
        module: &Value,
        args: Vec<Value>,
        kwargs: Kwargs,
        why: &str,
        span: Span,
    ) -> EResult<Value> {
        if !proxy::records_module_calls(self) {
            return Ok(Value::unknown(format!("output of {why}")));
        }
        self.note(
            frame.file_id,
            span,
            codes::UNSUPPORTED,
            format!("cannot follow the forward of {why}; its output shape is unknown"),
        );
        self.trace_module(frame, module, args, kwargs, span)
    }

    /// Calling a module: leaves become `call_module`, user modules are inlined.
    pub fn call_module_object(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let value = Value::Object(obj.clone());
        if let Some(out) = self.forward_on_constants(obj, &args, &kwargs) {
            return Ok(out);
        }
        if crate::eval::stdlib::einops_layer_name(&obj.class).is_some() {
            if let Some(out) = self.call_einops_layer(frame, obj, &args, &kwargs, span) {
                return out;
            }
            let why = format!("`{}` on this input", obj.class_name());
            return self.opaque_module_call(frame, &value, args, kwargs, &why, span);
        }
        if let ObjKind::Leaf(_) = obj.kind {
            if proxy::records_module_calls(self) {
                return self.trace_module(frame, &value, args, kwargs, span);
            }
            return Ok(Value::unknown("module output"));
        }
        if let Some(Value::Function(f)) = self.class_lookup(&obj.class, "forward") {
            return self.call_forward_watched(frame, obj, &f, args, kwargs, span);
        }
        match &obj.kind {
            ObjKind::Container(k) if k == "Sequential" => {
                self.run_sequential(frame, obj, args, span)
            }
            ObjKind::Container(k) => {
                Err(self.error(frame, span, codes::RAISED, format!("`{k}` is not callable")))
            }
            _ => {
                // A subclass of a torch.nn leaf without its own forward runs the leaf's forward.
                let leaf_base = match &obj.class {
                    Value::Class(c) => c.mro.borrow().iter().find_map(|m| match m {
                        Value::External(p)
                            if catalog::get().module(p).is_some() && !p.ends_with(".Module") =>
                        {
                            Some(p.clone())
                        }
                        _ => None,
                    }),
                    _ => None,
                };
                if let Some(base) = leaf_base.filter(|_| proxy::records_module_calls(self)) {
                    return self.run_leaf_forward(frame, obj, &base, args, kwargs, span);
                }
                Err(self.error(
                    frame,
                    span,
                    codes::UNSUPPORTED,
                    format!("`{}` has no forward method", obj.class_name()),
                ))
            }
        }
    }

    pub fn module_item(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        key: &Value,
        span: Span,
    ) -> EResult<Value> {
        let children = self.module_entry_values(frame, obj, span)?;
        match key {
            Value::Str(k) => obj
                .get(k)
                .ok_or_else(|| self.error(frame, span, codes::RAISED, format!("KeyError: {k:?}"))),
            Value::Slice(_) => {
                let items: Vec<Value> = children.iter().map(|(_, c)| c.clone()).collect();
                let picked = self.get_item(frame, &Value::list(items), key.clone(), span)?;
                let kind = match &obj.kind {
                    ObjKind::Container(k) => k.clone(),
                    _ => "Sequential".into(),
                };
                let new = self.new_object(
                    Value::External(Rc::from(format!("torch.nn.{kind}").as_str())),
                    ObjKind::Container(kind),
                );
                for (i, m) in self.iterate(frame, &picked, span)?.into_iter().enumerate() {
                    new.attrs.borrow_mut().insert(i.to_string(), m);
                }
                Ok(Value::Object(new))
            }
            k => match as_int(k) {
                Some(i) => {
                    let idx = if i < 0 { i + children.len() as i64 } else { i };
                    children
                        .get(idx as usize)
                        .map(|(_, c)| c.clone())
                        .ok_or_else(|| {
                            self.error(
                                frame,
                                span,
                                codes::RAISED,
                                format!("index {i} is out of range"),
                            )
                        })
                }
                None => Ok(Value::unknown("module index")),
            },
        }
    }

    /// A user module called outside tracing on constant tensors of known shapes (a
    /// constructor probing its backbone with `torch.zeros(...)`): tensors of the shapes its
    /// forward gives them, without data. None for anything else, or when forward cannot be
    /// traced from such inputs.
    fn forward_on_constants(
        &mut self,
        obj: &Rc<Object>,
        args: &[Value],
        kwargs: &Kwargs,
    ) -> Option<Value> {
        if !proxy::runs_forward_on_constants(self) || args.is_empty() || !kwargs.is_empty() {
            return None;
        }
        // forward's parameters as the trace binds them (nn.Sequential's is `input`)
        let names: Vec<String> = match self.class_lookup(&obj.class, "forward") {
            Some(Value::Function(forward)) if self.wrapped_of(&forward).is_none() => {
                let params: Vec<_> = forward.params.iter().skip(1).take(args.len()).collect();
                let positional = params.iter().all(|p| {
                    !matches!(
                        p.kind,
                        ParamKind::VarPositional | ParamKind::VarKeyword | ParamKind::KeywordOnly
                    )
                });
                if !positional {
                    return None;
                }
                params.iter().map(|p| p.name.clone()).collect()
            }
            None if matches!(&obj.kind, ObjKind::Container(k) if k == "Sequential") => {
                vec!["input".into()]
            }
            _ => return None,
        };
        let mut inputs = Vec::with_capacity(args.len());
        let mut dtype = DType::Float32;
        for (name, arg) in names.into_iter().zip(args) {
            let Value::TensorConst(t) = arg else {
                return None;
            };
            let shape = t.shape.as_ref()?;
            dtype = t.dtype;
            inputs.push((name, Meta::tensor(Some(shape_of(shape)), t.dtype)));
        }
        if inputs.len() != args.len() {
            return None;
        }
        let module = Value::Object(obj.clone());
        let meta = super::trace::root::forward_output_meta(self, &module, &inputs)?;
        Some(super::stdlib::tensor_const::from_meta(meta, dtype))
    }

    /// Calls of names outside the project: torch.nn classes are constructed here, other
    /// external functions called in `types::external`.
    pub fn call_external(
        &mut self,
        frame: &Frame,
        path: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let cat = catalog::get();
        let canon = cat.canonical(path).to_string();
        let c = ExternalCall::new(frame, &canon, args, kwargs, span);
        // `nn.LayerNorm.forward(self, x)`, `nn.LayerNorm.__init__(self, ...)`: a torch.nn
        // layer's method called unbound on an instance of a subclass, as `super()` reaches it.
        if let (Some((class, method)), Value::Object(o)) = (c.path.rsplit_once('.'), &c.a0) {
            if class.starts_with("torch.nn.")
                && o.is_module()
                && !method.starts_with(char::is_uppercase)
                && cat.module(class).is_some()
            {
                let recv = Rc::new(c.a0.clone());
                let rest = c.args[1..].to_vec();
                return self.call_super_external(frame, &recv, class, method, rest, c.kwargs, span);
            }
        }
        // torch.nn module classes; a capitalised torch.nn name the catalogue lacks is called
        // as the other external functions are.
        if c.path.starts_with("torch.nn.")
            && c.short
                .chars()
                .next()
                .map(char::is_uppercase)
                .unwrap_or(false)
            && (matches!(c.short, "Parameter" | "Buffer" | "Module")
                || cat.module(c.path).is_some())
        {
            return self.construct_nn_class(c);
        }
        if let Some(layer) = self.construct_einops_layer(frame, c.path, &c.args, &c.kwargs, span) {
            return layer;
        }
        self.call_external_function(c)
    }

    /// `torch.nn.Parameter(t)`, `torch.nn.Buffer(t)`, `torch.nn.Module()`, and the torch.nn
    /// classes of the catalogue (containers and leaves).
    fn construct_nn_class(&mut self, c: ExternalCall) -> EResult<Value> {
        let ExternalCall {
            frame,
            path,
            short,
            a0,
            args,
            kwargs,
            span,
        } = c;
        if matches!(short, "Parameter" | "Buffer") {
            if let (true, Some(t)) = (short == "Parameter", self.tracer.as_mut()) {
                t.event(
                    EventKind::ParameterCreated,
                    frame.file_id,
                    span,
                    "Parameter".into(),
                );
            }
            let v = match &a0 {
                Value::TensorConst(t) => Value::Param(Rc::new(Param {
                    shape: t.shape.clone(),
                    dtype: t.dtype,
                    is_buffer: short == "Buffer",
                    nn_buffer: short == "Buffer",
                })),
                Value::Param(p) => Value::Param(Rc::new(Param {
                    shape: p.shape.clone(),
                    dtype: p.dtype,
                    is_buffer: short == "Buffer",
                    nn_buffer: short == "Buffer",
                })),
                Value::Proxy(_) => a0.clone(),
                _ => Value::Param(Rc::new(Param {
                    shape: None,
                    dtype: DType::Float32,
                    is_buffer: short == "Buffer",
                    nn_buffer: short == "Buffer",
                })),
            };
            return Ok(v);
        }
        if short == "Module" {
            return Ok(Value::Object(
                self.new_object(Value::External(Rc::from(path)), ObjKind::Module),
            ));
        }
        let (name, spec) = catalog::get()
            .module(path)
            .expect("call_external checked it is in the catalogue");
        if spec.container {
            let obj = self.new_object(
                Value::External(Rc::from(spec.path.as_str())),
                ObjKind::Container(name.to_string()),
            );
            self.init_container(frame, &obj, name, args, kwargs, span)?;
            return Ok(Value::Object(obj));
        }
        let name = name.to_string();
        self.make_leaf(frame, &name, spec, args, kwargs, span)
    }

    /// `torch.zeros(1, 1, d)` and friends evaluated in a constructor: a tensor of known shape.
    pub(in crate::eval) fn tensor_factory(
        &mut self,
        short: &str,
        args: &[Value],
        kwargs: &Kwargs,
    ) -> Option<Value> {
        // The legacy typed constructors (`torch.IntTensor([4])`) on a sequence are
        // `torch.tensor(data, dtype=...)`; on sizes they make an uninitialised tensor.
        if let Some(dtype) = legacy_tensor_dtype(short) {
            if !matches!(args, [Value::List(_) | Value::Tuple(_)]) || !kwargs.is_empty() {
                return None;
            }
            let dtype = vec![("dtype".to_string(), Value::Dtype(dtype))];
            return self.tensor_factory("tensor", args, &dtype);
        }
        let dtype = kwargs
            .iter()
            .find(|(k, _)| k == "dtype")
            .and_then(|(_, v)| {
                if let Value::Dtype(d) = v {
                    Some(*d)
                } else {
                    None
                }
            });
        let metas: Vec<Meta> = args.iter().map(value_meta).collect();
        let kmetas: Vec<(String, Meta)> = kwargs
            .iter()
            .map(|(k, v)| (k.clone(), value_meta(v)))
            .collect();
        let shape = match short {
            "zeros" | "ones" | "empty" | "randn" | "rand" | "full" | "arange" => {
                let meta = rules::call(
                    short,
                    &Inputs {
                        args: if short == "full" {
                            &metas[..metas.len().min(1)]
                        } else {
                            &metas
                        },
                        kwargs: &kmetas,
                    },
                );
                match meta {
                    Meta::Tensor(t) => t.shape.as_ref().and_then(concrete),
                    _ => None,
                }
            }
            "tensor" | "as_tensor" => args.first().and_then(literal_shape),
            "linspace" | "logspace" => args.get(2).and_then(as_int).map(|n| vec![n]),
            "eye" => args
                .first()
                .and_then(as_int)
                .map(|n| vec![n, args.get(1).and_then(as_int).unwrap_or(n)]),
            _ => return None,
        };
        let default = match (short, args.first()) {
            ("arange", _) => DType::Int64,
            ("tensor" | "as_tensor", Some(data)) => literal_dtype(data),
            _ => DType::Float32,
        };
        let dtype = dtype.unwrap_or(default);
        let data = constant_data(short, args, &shape, dtype)
            .map(|d| Rc::from(super::stdlib::tensor_const::stored(dtype, d.to_vec())));
        Some(Value::TensorConst(Rc::new(TensorConst {
            shape,
            dtype,
            data,
        })))
    }
}

/// What a class's own `__new__` gave `type.__call__`.
enum UserNew {
    /// The class has none (or it could not be followed).
    Absent,
    /// An instance of the class, for `__init__`.
    Instance(Rc<Object>),
    /// Anything else: the call's value.
    Other(Value),
}

/// The shape of `torch.tensor(data)`: the nesting of the data, `[[1, 3, 3, 1]]` is `[1, 4]`,
/// `[]` is `[0]`, a number `[]`. None where torch would raise (ragged rows) or an item's
/// nesting is not known (an unknown value may be a list).
fn literal_shape(data: &Value) -> Option<Vec<i64>> {
    match data {
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => Some(vec![]),
        Value::TensorConst(t) if t.shape.as_deref() == Some(&[]) => Some(vec![]),
        Value::List(_) | Value::Tuple(_) => {
            let items = literal_items(data);
            let mut row: Option<Vec<i64>> = None;
            for item in &items {
                let shape = literal_shape(item)?;
                match &row {
                    Some(r) if *r != shape => return None,
                    Some(_) => {}
                    None => row = Some(shape),
                }
            }
            let mut shape = vec![items.len() as i64];
            shape.extend(row.unwrap_or_default());
            Some(shape)
        }
        _ => None,
    }
}

/// The dtype `torch.tensor(data)` infers: float32 where a number is a float, bool where all
/// are bools, int64 otherwise (an empty list is float32).
fn literal_dtype(data: &Value) -> DType {
    fn scan(v: &Value, floats: &mut bool, ints: &mut bool, bools: &mut bool) {
        match v {
            Value::Float(_) => *floats = true,
            Value::Int(_) => *ints = true,
            Value::Bool(_) => *bools = true,
            Value::List(_) | Value::Tuple(_) => {
                for item in literal_items(v) {
                    scan(&item, floats, ints, bools);
                }
            }
            Value::TensorConst(t) if t.dtype == DType::Bool => *bools = true,
            Value::TensorConst(t) if !t.dtype.is_floating() => *ints = true,
            // a float tensor or a value not known: float, the default
            _ => *floats = true,
        }
    }
    let (mut floats, mut ints, mut bools) = (false, false, false);
    scan(data, &mut floats, &mut ints, &mut bools);
    if floats || !(ints || bools) {
        DType::Float32
    } else if ints {
        DType::Int64
    } else {
        DType::Bool
    }
}

fn literal_items(data: &Value) -> Vec<Value> {
    match data {
        Value::List(l) => l.borrow().clone(),
        Value::Tuple(t) => t.to_vec(),
        _ => vec![],
    }
}

/// The numbers of nested data, row-major; None when one is not a known number.
fn literal_leaves(data: &Value, out: &mut Vec<f64>) -> Option<()> {
    match data {
        Value::List(_) | Value::Tuple(_) => {
            for item in literal_items(data) {
                literal_leaves(&item, out)?;
            }
        }
        v => out.push(as_f64(v)?),
    }
    Some(())
}

/// The dtype of a legacy typed tensor class (`torch.IntTensor`).
fn legacy_tensor_dtype(short: &str) -> Option<DType> {
    Some(match short {
        "FloatTensor" => DType::Float32,
        "DoubleTensor" => DType::Float64,
        "HalfTensor" => DType::Float16,
        "BFloat16Tensor" => DType::Bfloat16,
        "LongTensor" => DType::Int64,
        "IntTensor" => DType::Int32,
        "ShortTensor" => DType::Int16,
        "CharTensor" => DType::Int8,
        "ByteTensor" => DType::Uint8,
        "BoolTensor" => DType::Bool,
        _ => return None,
    })
}

/// The elements of a 1-D tensor made from constants, as torch computes them.
fn constant_data(
    short: &str,
    args: &[Value],
    shape: &Option<Vec<i64>>,
    dtype: DType,
) -> Option<Rc<[f64]>> {
    let n = match (short, shape.as_deref()) {
        (_, Some([n])) => *n as usize,
        (_, Some([])) => 1,
        // nested data (`[[1, 3, 3, 1]]`) is stored row-major like any other
        ("tensor" | "as_tensor", Some(dims)) => dims.iter().product::<i64>() as usize,
        _ => return None,
    };
    let nums: Option<Vec<f64>> = args.iter().map(as_f64).collect();
    let data: Vec<f64> = match short {
        "linspace" => {
            let (start, end) = (as_f64(args.first()?)?, as_f64(args.get(1)?)?);
            // torch fills the first half from the start and the second half from the end, in
            // the tensor's own precision.
            if dtype == DType::Float32 {
                let (start, end) = (start as f32, end as f32);
                let step = if n > 1 {
                    (end - start) / (n - 1) as f32
                } else {
                    0.0
                };
                (0..n)
                    .map(|i| {
                        f64::from(if i < n / 2 {
                            start + step * i as f32
                        } else {
                            end - step * (n - 1 - i) as f32
                        })
                    })
                    .collect()
            } else {
                let step = if n > 1 {
                    (end - start) / (n - 1) as f64
                } else {
                    0.0
                };
                (0..n)
                    .map(|i| {
                        if i < n / 2 {
                            start + step * i as f64
                        } else {
                            end - step * (n - 1 - i) as f64
                        }
                    })
                    .collect()
            }
        }
        "arange" => {
            let nums = nums?;
            let (start, step) = match nums.as_slice() {
                [_] => (0.0, 1.0),
                [s, _] => (*s, 1.0),
                [s, _, st] => (*s, *st),
                _ => return None,
            };
            (0..n).map(|i| start + step * i as f64).collect()
        }
        "tensor" | "as_tensor" => {
            let mut leaves = Vec::with_capacity(n);
            literal_leaves(args.first()?, &mut leaves)?;
            leaves
        }
        "zeros" => vec![0.0; n],
        "ones" => vec![1.0; n],
        _ => return None,
    };
    (data.len() == n).then(|| Rc::from(data))
}

/// Base classes whose instances are dicts (`class Registry(OrderedDict)`).
const DICT_BASES: &[&str] = &[
    "collections.OrderedDict",
    "typing.OrderedDict",
    "dict",
    "builtins.dict",
];

/// Where a dict subclass's instance keeps its items.
const DICT_DATA: &str = "__dict_items__";

/// The dict base of a class (`OrderedDict` for `class ModelOutput(OrderedDict)`), by the
/// path `call_super_external` knows it by.
/// The first torch.nn class in an MRO (`torch.nn.LayerNorm` for timm's `LayerNorm2d`).
pub(in crate::eval) fn torch_nn_base(mro: &[Value]) -> Option<Rc<str>> {
    mro.iter().find_map(|m| match m {
        Value::External(p) if p.starts_with("torch.nn.") => Some(p.clone()),
        _ => None,
    })
}

pub(in crate::eval) fn dict_base_of(class: &Value) -> Option<String> {
    let Value::Class(c) = class else { return None };
    let mro = c.mro.borrow();
    mro.iter().find(|m| is_dict_base(m)).map(|m| match m {
        Value::External(p) => p.to_string(),
        _ => "dict".to_string(),
    })
}

/// The items of an instance of a dict subclass (transformers' `ModelOutput`), in order.
pub(in crate::eval) fn dict_base_items(obj: &Object) -> Option<Vec<(Value, Value)>> {
    match obj.get(DICT_DATA)? {
        Value::Dict(d) => Some(d.borrow().clone()),
        _ => None,
    }
}

/// The items of an instance of a dict subclass, `None` for any other object: a subclass whose
/// `__init__` never reached the dict's has none yet (`dict.__new__` made them empty).
pub(in crate::eval) fn dict_subclass_items(obj: &Object) -> Option<Vec<(Value, Value)>> {
    dict_base_of(&obj.class)?;
    Some(dict_base_items(obj).unwrap_or_default())
}

fn is_dict_base(v: &Value) -> bool {
    match v {
        Value::External(p) => DICT_BASES.contains(&&**p),
        Value::Builtin(b) => &**b == "dict",
        _ => false,
    }
}
