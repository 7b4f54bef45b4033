//! Attribute access, and method calls on non-user values (lists, dicts, strings, proxies,
//! external names): `Interp::call_method` dispatches by the receiver's kind to `types`.

use crate::eval::types::proxy;
use std::rc::Rc;

use super::call::Kwargs;
use super::trace::is_tensor_attribute;
use super::value::{FnKind, Namespace, ObjKind, Unknown, Value, Wrapper};
use super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::shapes::{DType, Meta};
use crate::syntax::Span;

/// The attribute of a `__code__` record holding the function it is the code of.
pub(in crate::eval) const CODE_OF: &str = "__code_of__";

/// The methods of `object` a library reads off a class to wrap them (`original_setattr =
/// cls.__setattr__`), as builtins `object.NAME`.
const OBJECT_METHODS: &[&str] = &[
    "__setattr__",
    "__delattr__",
    "__getattribute__",
    "__init__",
    "__repr__",
];

impl Interp {
    /// The position of `name` in the named tuple an op returns (`torch.return_types.max`:
    /// `values`, `indices`), when the traced value is such a pair.
    fn return_type_field(&self, n: crate::graph::NodeId, name: &str) -> Option<i64> {
        let i = match name {
            "values" => 0,
            "indices" => 1,
            _ => return None,
        };
        let t = self.tracer.as_ref()?;
        let node = t.graph.node(n);
        let short = crate::graph::OpKey::Function(&node.target).name();
        let pair = matches!(
            short,
            "max" | "min" | "median" | "mode" | "kthvalue" | "sort" | "topk" | "cummax" | "cummin"
        );
        let fits = match t.meta(n) {
            Meta::Seq(items) => items.len() == 2,
            // a rule that does not know the result (kthvalue, mode): the op still returns
            // the pair whenever it is called with a dim, which `max(x)` alone is not
            Meta::Unknown => !matches!(short, "max" | "min" | "median") || node.args.len() > 1,
            _ => false,
        };
        (pair && fits).then_some(i)
    }

    pub fn get_attr(
        &mut self,
        frame: &Frame,
        obj: &Value,
        name: &str,
        span: Span,
    ) -> EResult<Value> {
        match obj {
            Value::Proxy(n) => {
                let device = match self.tracer.as_ref().map(|t| t.meta(*n)) {
                    Some(Meta::Device(d)) => Some(d.to_string()),
                    _ => None,
                };
                if let Some(device) = device.filter(|_| matches!(name, "type" | "index")) {
                    // A device's fields are constants, as Dynamo reads them: no node.
                    Ok(match name {
                        "type" => Value::str(&device),
                        _ => Value::None,
                    })
                } else if is_tensor_attribute(name) {
                    self.trace_attribute(frame, obj, name, span)
                } else if let Some(i) = self.return_type_field(*n, name) {
                    // `x.max(0).values`: a field of torch's named `(values, indices)` result
                    let key = Value::Int(i);
                    self.trace_function(
                        frame,
                        "operator.getitem",
                        vec![obj.clone(), key],
                        vec![],
                        span,
                    )
                } else {
                    Ok(Value::Method(Rc::new(obj.clone()), Rc::from(name)))
                }
            }
            Value::Object(o) => {
                if let Some(f) = self.user_method(&o.class, "__getattribute__") {
                    if let Some(read) = self.native_getattribute(frame, obj, o, &f, name, span) {
                        return read;
                    }
                    let args = vec![Value::str(name)];
                    return self.call_function(frame, &f, Some(obj.clone()), args, vec![], span);
                }
                self.object_getattribute(frame, obj, o, name, span)
            }
            Value::Class(c) => {
                if let Some(v) = self.class_special_attr(c, name) {
                    return Ok(v);
                }
                match self.class_lookup(obj, name) {
                    Some(Value::Function(f)) if f.kind == FnKind::ClassMethod => {
                        Ok(Value::BoundMethod(Rc::new(obj.clone()), f))
                    }
                    Some(Value::Object(d)) if self.user_method(&d.class, "__get__").is_some() => {
                        let get = self.user_method(&d.class, "__get__").expect("checked");
                        let args = vec![Value::None, obj.clone()];
                        self.call_function(frame, &get, Some(Value::Object(d)), args, vec![], span)
                    }
                    Some(v) => Ok(v),
                    // An attribute of the class's metaclass (its methods bind to the class).
                    None if c
                        .metaclass
                        .as_ref()
                        .is_some_and(|m| self.class_lookup(m, name).is_some()) =>
                    {
                        let meta = c.metaclass.clone().expect("checked");
                        match self.class_lookup(&meta, name).expect("checked") {
                            Value::Function(f) if f.kind == FnKind::Property => self.call_function(
                                frame,
                                &f,
                                Some(obj.clone()),
                                vec![],
                                vec![],
                                span,
                            ),
                            Value::Function(f) if f.kind != FnKind::StaticMethod => {
                                Ok(Value::BoundMethod(Rc::new(obj.clone()), f))
                            }
                            v => Ok(v),
                        }
                    }
                    // What every class inherits from `object`.
                    None if OBJECT_METHODS.contains(&name) => {
                        Ok(Value::Builtin(Rc::from(format!("object.{name}").as_str())))
                    }
                    None => {
                        // Attributes inherited from external bases (e.g. enum members) are unknown.
                        let external = c
                            .mro
                            .borrow()
                            .iter()
                            .any(|m| matches!(m, Value::External(_) | Value::Unknown(_)));
                        if external {
                            Ok(Value::unknown(format!("`{}.{name}`", c.name)))
                        } else {
                            Err(self.error(
                                frame,
                                span,
                                codes::RAISED,
                                format!("class `{}` has no attribute `{name}`", c.name),
                            ))
                        }
                    }
                }
            }
            _ => self.get_attr_value(frame, obj, name, span),
        }
    }

    /// The attributes `type` gives every class.
    fn class_special_attr(&mut self, c: &Rc<super::value::Class>, name: &str) -> Option<Value> {
        Some(match name {
            "__name__" => Value::str(&c.name),
            "__qualname__" => Value::str(&c.qualname),
            "__module__" => Value::str(&self.project.file(c.file_id).module),
            // Not inherited: each class has its own, None without a docstring.
            "__doc__" => c.ns.borrow().get("__doc__").cloned().unwrap_or(Value::None),
            "__dict__" => Value::Dict(Rc::new(std::cell::RefCell::new(
                c.ns.borrow()
                    .iter()
                    .map(|(k, v)| (Value::str(k), v.clone()))
                    .collect(),
            ))),
            "__mro__" => Value::tuple(full_mro(&c.mro.borrow())),
            "__bases__" => Value::tuple(c.bases.clone()),
            "__members__" if super::stdlib::enums::is_enum_class(c) => {
                super::stdlib::enums::members_mapping(c)
            }
            // The names the class body annotates (their types are not evaluated).
            "__annotations__" => Value::Dict(Rc::new(std::cell::RefCell::new(
                self.annotated_names(c)
                    .iter()
                    .map(|n| (Value::str(n), Value::unknown("annotation")))
                    .collect(),
            ))),
            _ => return None,
        })
    }

    /// A method a class defines in Python (not one of an external base).
    pub(in crate::eval) fn user_method(
        &self,
        class: &Value,
        name: &str,
    ) -> Option<Rc<super::value::Function>> {
        match self.class_lookup(class, name) {
            Some(Value::Function(f)) => Some(f),
            _ => None,
        }
    }

    /// `object.__getattribute__` (what an override reaches through `super()`): the instance's
    /// attributes, then the class's (through the descriptor protocol), then `__getattr__`.
    pub(in crate::eval) fn object_getattribute(
        &mut self,
        frame: &Frame,
        obj: &Value,
        o: &Rc<super::value::Object>,
        name: &str,
        span: Span,
    ) -> EResult<Value> {
        {
            {
                if let Some(v) = o.get(name) {
                    if let Some(t) = self.tracer.as_mut() {
                        if o.is_module() {
                            let at = (frame.file_id, span, t.call_chain.as_slice());
                            t.guards.module_read(o, name, &v, at);
                        }
                    }
                    return Ok(match v {
                        Value::Param(p) if proxy::param_is_traced(self) => {
                            self.trace_param(frame, o, name, &p, span)
                        }
                        // an unknown attribute of a module may be a submodule that was not
                        // built, whose call torch.fx records as `call_module` by its path; an
                        // unknown field of any other object (a model output) is no submodule
                        Value::Unknown(u)
                            if proxy::records_module_calls(self)
                                && u.path.is_none()
                                && o.is_module() =>
                        {
                            let base = self
                                .tracer
                                .as_ref()
                                .and_then(|t| t.module_paths.get(&o.id).cloned())
                                .unwrap_or_default();
                            let path = if base.is_empty() {
                                name.to_string()
                            } else {
                                format!("{base}.{name}")
                            };
                            Value::Unknown(Rc::new(Unknown {
                                reason: u.reason.clone(),
                                path: Some(path),
                                spread: false,
                                made_by: u.made_by.clone(),
                            }))
                        }
                        v => v,
                    });
                }
                if let Some(v) = self.class_lookup(&o.class, name) {
                    return self.bind_class_attr(frame, obj, v, span);
                }
                if name == "__class__" {
                    return Ok(o.class.clone());
                }
                if name == "__dict__" {
                    return Ok(Value::InstanceDict(o.clone(), Namespace::Attributes));
                }
                if name == "_modules" && o.is_module() {
                    return Ok(Value::InstanceDict(o.clone(), Namespace::Modules));
                }
                // What a builtin's subclass inherits from the builtin works on its value.
                if let Some(base) = &o.base {
                    if !name.starts_with("__") {
                        return self.get_attr(frame, base, name, span);
                    }
                }
                // What an external base class defines is found by the ordinary lookup, before
                // `__getattr__` is asked: the methods a dict subclass inherits (`self.keys()` in
                // `ModelOutput`), and torch.nn.Module's (`self.register_buffer` in diffusers'
                // `ModelMixin`, whose `__getattr__` serves config names).
                if let Some(base) = super::objects::dict_base_of(&o.class) {
                    if is_dict_method(name) {
                        let m = format!("super:{base}:{name}");
                        return Ok(Value::Method(Rc::new(obj.clone()), Rc::from(m.as_str())));
                    }
                }
                if o.is_module() {
                    if name == "training" {
                        let v = Value::Bool(proxy::module_is_training(self));
                        // Dynamo guards the flag it read (`self.training == False`): one
                        // compile per mode
                        if let Some(t) = self.tracer.as_mut() {
                            let at = (frame.file_id, span, t.call_chain.as_slice());
                            t.guards.module_read(o, name, &v, at);
                        }
                        return Ok(v);
                    }
                    if is_module_method(name)
                        || matches!(o.kind, ObjKind::Container(_)) && is_container_method(name)
                        || name == "reset_parameters"
                            && torch_layer_of(o).is_some_and(|l| resets_parameters(&l))
                    {
                        return Ok(Value::Method(Rc::new(obj.clone()), Rc::from(name)));
                    }
                    if name == "__class__" {
                        return Ok(o.class.clone());
                    }
                }
                if let Some(f) = self.user_method(&o.class, "__getattr__") {
                    let args = vec![Value::str(name)];
                    return self.call_function(frame, &f, Some(obj.clone()), args, vec![], span);
                }
                if name == "__module__" {
                    if let Value::Class(c) = &o.class {
                        let module = self.project.file(c.file_id).module.clone();
                        return Ok(Value::str(&module));
                    }
                    return Ok(Value::str("torch.nn"));
                }
                if name.starts_with("__") && name.ends_with("__") {
                    return Ok(Value::unknown(format!("`{name}`")));
                }
                if o.get("__incomplete__").is_some() {
                    // Most likely a submodule whose construction failed (already reported
                    // where it failed): called on tensors it is an opaque `call_module` at its
                    // path, as torch.fx would record it, not a call into unknown code.
                    let path = self.tracer.as_ref().filter(|_| o.is_module()).map(|t| {
                        match t.module_paths.get(&o.id) {
                            Some(base) if !base.is_empty() => format!("{base}.{name}"),
                            _ => name.to_string(),
                        }
                    });
                    return Ok(Value::Unknown(Rc::new(Unknown {
                        reason: format!("`{name}` of a partly constructed `{}`", o.class_name()),
                        path,
                        spread: false,
                        made_by: None,
                    })));
                }
                if super::stdlib::re::is_compiled_pattern(o)
                    && super::stdlib::re::is_pattern_method(name)
                {
                    return Ok(Value::Method(Rc::new(obj.clone()), Rc::from(name)));
                }
                // An object a library outside the project made (a `re.Match`) has more than
                // the evaluator models of it.
                if matches!(o.class, Value::External(_)) && !o.is_module() {
                    return Ok(Value::unknown(format!("`{}.{name}`", o.class_name())));
                }
                Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!("`{}` object has no attribute `{name}`", o.class_name()),
                ))
            }
        }
    }

    fn get_attr_value(
        &mut self,
        frame: &Frame,
        obj: &Value,
        name: &str,
        span: Span,
    ) -> EResult<Value> {
        match obj {
            Value::Module(ns) => match self.module_attr(ns, name) {
                Some(v) => Ok(v),
                None => Err(self.error(
                    frame,
                    span,
                    codes::UNRESOLVED_NAME,
                    format!("module `{}` has no attribute `{name}`", ns.name),
                )),
            },
            Value::External(path) if super::stdlib::module_binds(path, name) == Some(false) => {
                Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!("AttributeError: module '{path}' has no attribute '{name}'"),
                ))
            }
            Value::External(path) if &**path == "sys" && name == "version_info" => {
                Ok(self.python_version_info())
            }
            Value::External(path) => Ok(self
                .external_class_attr(path, name)
                .unwrap_or_else(|| external_attr(path, name))),
            Value::Super(recv, class) => self.super_attr(frame, recv, class, name, span),
            Value::ModuleGlobals(_) => Ok(super::types::module_globals::get_attr(obj, name)),
            Value::InstanceDict(o, namespace) => {
                if super::instance_dict::is_live_method(name) {
                    Ok(Value::Method(Rc::new(obj.clone()), Rc::from(name)))
                } else {
                    let snapshot = o.snapshot(*namespace);
                    self.get_attr(frame, &snapshot, name, span)
                }
            }
            Value::TensorConst(t) => Ok(match name {
                "shape" => t
                    .shape
                    .as_ref()
                    .map(|s| Value::tuple(s.iter().map(|&d| Value::Int(d)).collect()))
                    .unwrap_or_else(|| Value::unknown("shape")),
                "dtype" => Value::Dtype(t.dtype),
                "ndim" => t
                    .shape
                    .as_ref()
                    .map(|s| Value::Int(s.len() as i64))
                    .unwrap_or_else(|| Value::unknown("ndim")),
                "data" => obj.clone(),
                "T" => Value::TensorConst(Rc::new(t.reversed_dims())),
                _ => Value::Method(Rc::new(obj.clone()), Rc::from(name)),
            }),
            Value::Param(p) => Ok(match name {
                "shape" => p
                    .shape
                    .as_ref()
                    .map(|s| Value::tuple(s.iter().map(|&d| Value::Int(d)).collect()))
                    .unwrap_or_else(|| Value::unknown("shape")),
                "dtype" => Value::Dtype(p.dtype),
                "data" => obj.clone(),
                "requires_grad" => Value::Bool(!p.is_buffer),
                _ => Value::Method(Rc::new(obj.clone()), Rc::from(name)),
            }),
            Value::Unknown(u) => Ok(Value::Unknown(Rc::new(Unknown {
                reason: u.reason.clone(),
                path: u.path.as_ref().map(|p| format!("{p}.{name}")),
                spread: false,
                made_by: None,
            }))),
            Value::Dtype(d) => Ok(match name {
                "is_floating_point" => Value::Bool(d.is_floating()),
                "is_complex" => Value::Bool(d.is_complex()),
                _ => Value::unknown(format!("dtype.{name}")),
            }),
            Value::Function(f) => self.function_attr(frame, obj, f, name, span),
            // A bound method reads as its function, plus what binds it.
            Value::BoundMethod(recv, f) => match name {
                "__self__" => Ok((**recv).clone()),
                "__func__" => Ok(Value::Function(f.clone())),
                _ => self.get_attr_value(frame, &Value::Function(f.clone()), name, span),
            },
            Value::Partial(p) => match name {
                "func" => Ok(p.func.clone()),
                "args" => Ok(Value::tuple(p.args.clone())),
                "keywords" => Ok(Value::Dict(Rc::new(std::cell::RefCell::new(
                    p.kwargs
                        .iter()
                        .map(|(k, v)| (Value::str(k), v.clone()))
                        .collect(),
                )))),
                _ => Ok(Value::unknown(format!("partial.{name}"))),
            },
            Value::Int(_) | Value::Float(_) if name == "real" => Ok(obj.clone()),
            // `None` and tuples have no attributes besides their few methods and dunders.
            Value::None | Value::Tuple(_)
                if !(name.starts_with("__") && name.ends_with("__"))
                    && !(matches!(obj, Value::Tuple(_)) && matches!(name, "count" | "index")) =>
            {
                Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!(
                        "AttributeError: '{}' object has no attribute '{name}'",
                        obj.type_name()
                    ),
                ))
            }
            // A builtin class or function is named by its last dotted part (`object`,
            // `ValueError`, `dict`), as `k.__name__` over an `__mro__` reads it.
            Value::Builtin(b) if name == "__name__" || name == "__qualname__" => {
                Ok(Value::str(b.rsplit('.').next().unwrap_or(b)))
            }
            _ => Ok(Value::Method(Rc::new(obj.clone()), Rc::from(name))),
        }
    }

    /// An attribute of a function: what was assigned to it (its `__dict__`), else what a
    /// function object has of its own (`__name__`, `__wrapped__`, `__code__`, …).
    fn function_attr(
        &mut self,
        frame: &Frame,
        obj: &Value,
        f: &Rc<super::value::Function>,
        name: &str,
        span: Span,
    ) -> EResult<Value> {
        if let Some(v) = f.attr(name) {
            return Ok(v);
        }
        match name {
            // `functools.wraps` copied these from the function the wrapper wraps.
            "__name__" | "__qualname__" | "__module__" | "__doc__"
                if self.wrapped_of(f).is_some() =>
            {
                let wrapped = self.wrapped_of(f).expect("checked");
                self.get_attr(frame, &wrapped, name, span)
            }
            "__name__" => Ok(Value::str(&f.name)),
            "__qualname__" => Ok(Value::str(&f.qualname)),
            "__module__" => Ok(Value::str(&f.globals.name)),
            // A docstring the definition has is not read: libraries that rewrite docstrings
            // at import (transformers' `replace_list_option_in_docstrings`) would then run,
            // at a cost and through `re` match objects the evaluator does not model.
            "__doc__" => Ok(Value::unknown("a function's docstring")),
            "__closure__" => Ok(self.closure_cells(f)),
            "cache_clear" if matches!(f.wrapper, Some(Wrapper::LruCache(_))) => {
                Ok(Value::Method(Rc::new(obj.clone()), Rc::from(name)))
            }
            "__wrapped__" => match self.wrapped_of(f) {
                Some(w) => Ok(w),
                None => Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!("function `{}` has no attribute `__wrapped__`", f.name),
                )),
            },
            // What libraries read of a code object: the parameter names come first in
            // `co_varnames`.
            "__code__" => {
                let names = f.params.iter().map(|p| Value::str(&p.name)).collect();
                let code = super::value::Object {
                    id: self.new_object_id(),
                    class: Value::External(Rc::from("types.CodeType")),
                    kind: ObjKind::Plain,
                    attrs: Default::default(),
                    base: None,
                };
                code.attrs
                    .borrow_mut()
                    .insert("co_varnames".into(), Value::tuple(names));
                // `types.FunctionType(f.__code__, …)` copies the function it came from.
                code.attrs
                    .borrow_mut()
                    .insert(CODE_OF.into(), Value::Function(f.clone()));
                Ok(Value::Object(Rc::new(code)))
            }
            _ => Ok(Value::unknown(format!("function attribute `{name}`"))),
        }
    }

    fn bind_class_attr(
        &mut self,
        frame: &Frame,
        obj: &Value,
        v: Value,
        span: Span,
    ) -> EResult<Value> {
        Ok(match v {
            Value::Function(f) => match f.kind {
                FnKind::Plain | FnKind::ClassMethod => Value::BoundMethod(Rc::new(obj.clone()), f),
                FnKind::StaticMethod => Value::Function(f),
                FnKind::Property => {
                    self.cached_property_read(&f, obj, frame.file_id, span);
                    let v =
                        self.call_function(frame, &f, Some(obj.clone()), vec![], vec![], span)?;
                    self.keep_cached_property(&f, obj, &v);
                    v
                }
            },
            Value::Object(d) if !d.is_module() => match self.user_method(&d.class, "__get__") {
                Some(get) => {
                    let owner = match obj {
                        Value::Object(o) => o.class.clone(),
                        other => other.clone(),
                    };
                    let args = vec![obj.clone(), owner];
                    self.call_function(frame, &get, Some(Value::Object(d)), args, vec![], span)?
                }
                None => Value::Object(d),
            },
            other => other,
        })
    }

    fn super_attr(
        &mut self,
        frame: &Frame,
        recv: &Rc<Value>,
        class: &Rc<super::value::Class>,
        name: &str,
        span: Span,
    ) -> EResult<Value> {
        let mro = match &**recv {
            Value::Object(o) => match &o.class {
                Value::Class(c) => c.mro.borrow().clone(),
                _ => vec![],
            },
            // In a metaclass's method the receiver is a class, an instance of the metaclass.
            Value::Class(c) => match &c.metaclass {
                Some(Value::Class(m))
                    if !c
                        .mro
                        .borrow()
                        .iter()
                        .any(|k| matches!(k, Value::Class(k) if Rc::ptr_eq(k, class))) =>
                {
                    m.mro.borrow().clone()
                }
                _ => c.mro.borrow().clone(),
            },
            _ => vec![],
        };
        let start = mro
            .iter()
            .position(|m| matches!(m, Value::Class(c) if Rc::ptr_eq(c, class)))
            .map(|i| i + 1)
            .unwrap_or(mro.len());
        for m in &mro[start..] {
            match m {
                Value::Class(k) => {
                    if let Some(v) = k.ns.borrow().get(name).cloned() {
                        return self.bind_class_attr(frame, recv, v, span);
                    }
                }
                Value::External(path) => {
                    return Ok(Value::Method(
                        recv.clone(),
                        Rc::from(format!("super:{path}:{name}").as_str()),
                    ));
                }
                // A builtin base (`class Registry(dict)`).
                Value::Builtin(b) if &**b != "object" => {
                    return Ok(Value::Method(
                        recv.clone(),
                        Rc::from(format!("super:{b}:{name}").as_str()),
                    ));
                }
                _ => {}
            }
        }
        Ok(Value::Method(
            recv.clone(),
            Rc::from(format!("super:object:{name}").as_str()),
        ))
    }

    pub fn set_attr(
        &mut self,
        frame: &Frame,
        obj: &Value,
        name: &str,
        v: Value,
        span: Span,
    ) -> EResult<()> {
        if !matches!(obj, Value::Object(_)) {
            // a class, a module namespace, a function: state a later call reads
            self.note_replay_write(0);
        }
        match obj {
            Value::Object(o) => {
                if let Some(f) = self.user_method(&o.class, "__setattr__") {
                    let args = vec![Value::str(name), v];
                    self.call_function(frame, &f, Some(obj.clone()), args, vec![], span)?;
                    return Ok(());
                }
                self.object_setattr(frame, obj, o, name, v, span)
            }
            Value::Class(c) => {
                c.ns.borrow_mut().insert(name.to_string(), v);
                Ok(())
            }
            Value::Module(ns) => {
                ns.vars.borrow_mut().insert(name.to_string(), v);
                Ok(())
            }
            Value::Function(f) => {
                f.attrs.borrow_mut().insert(name.to_string(), v);
                Ok(())
            }
            // Monkeypatching torch.nn's classes (`torch.nn.Module.smart_apply = f`): later
            // lookups on them, their subclasses and instances see it (`class_lookup`). Other
            // external classes are left as they were: transformers patches `warning_once`
            // onto `logging.Logger`, and the logging rule recognises that call by its path
            // only while the patch is not followed into transformers' source.
            Value::External(path)
                if &**path != super::call::TORCH_NN_MODULE
                    && crate::catalog::get().module(path).is_none() =>
            {
                Ok(())
            }
            Value::External(path) => {
                self.external_class_attrs
                    .entry(path.clone())
                    .or_default()
                    .insert(name.to_string(), v);
                Ok(())
            }
            Value::Proxy(_) => {
                if let Some(t) = self.tracer.as_mut() {
                    t.event(
                        crate::traced::EventKind::SetAttr,
                        frame.file_id,
                        span,
                        name.to_string(),
                    );
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// `delattr(obj, name)` and `del obj.name`: a class's `__delattr__` when it defines one,
    /// else the instance's own attribute goes, and deleting one it does not have raises
    /// `AttributeError` as `object.__delattr__` does (a class attribute is not the instance's).
    pub fn del_attr(&mut self, frame: &Frame, obj: &Value, name: &str, span: Span) -> EResult<()> {
        match obj {
            Value::Object(o) => {
                if let Some(f) = self.user_method(&o.class, "__delattr__") {
                    let args = vec![Value::str(name)];
                    self.call_function(frame, &f, Some(obj.clone()), args, vec![], span)?;
                    return Ok(());
                }
                self.object_delattr(frame, o, name, span)
            }
            Value::Class(c) => {
                c.ns.borrow_mut().shift_remove(name);
                Ok(())
            }
            Value::Module(ns) => {
                ns.vars.borrow_mut().shift_remove(name);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// `object.__delattr__`: the instance's own attribute.
    pub(in crate::eval) fn object_delattr(
        &mut self,
        frame: &Frame,
        o: &Rc<super::value::Object>,
        name: &str,
        span: Span,
    ) -> EResult<()> {
        if o.attrs.borrow_mut().shift_remove(name).is_none() {
            return Err(self.error(
                frame,
                span,
                codes::RAISED,
                format!(
                    "AttributeError: '{}' object has no attribute '{name}'",
                    o.class_name()
                ),
            ));
        }
        Ok(())
    }

    /// `object.__setattr__`: a property's setter or a descriptor's `__set__` when the class
    /// has one for `name`, else the instance's own attribute.
    pub(in crate::eval) fn object_setattr(
        &mut self,
        frame: &Frame,
        obj: &Value,
        o: &Rc<super::value::Object>,
        name: &str,
        v: Value,
        span: Span,
    ) -> EResult<()> {
        match self.class_lookup(&o.class, name) {
            Some(Value::Function(getter)) if getter.kind == FnKind::Property => {
                if let Some(setter) = self.property_setters.get(&(getter.file_id, getter.span)) {
                    let setter = setter.clone();
                    self.call_function(frame, &setter, Some(obj.clone()), vec![v], vec![], span)?;
                    return Ok(());
                }
                // A property without a setter is read-only: assigning raises, the instance
                // keeps no attribute of that name.
                return Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!(
                        "AttributeError: property '{name}' of '{}' object has no setter",
                        o.class_name()
                    ),
                ));
            }
            Some(Value::Object(d)) if !d.is_module() => {
                if let Some(set) = self.user_method(&d.class, "__set__") {
                    let args = vec![obj.clone(), v];
                    self.call_function(frame, &set, Some(Value::Object(d)), args, vec![], span)?;
                    return Ok(());
                }
            }
            _ => {}
        }
        self.note_replay_write(o.id);
        if let (true, Some(t)) = (o.is_module(), self.tracer.as_mut()) {
            t.guards.module_write(o, name);
        }
        if let (Value::Proxy(n), Some(t)) = (&v, self.tracer.as_mut()) {
            if o.is_module() {
                let node = t.graph.node(*n).name.clone();
                t.event(
                    crate::traced::EventKind::ModuleTensorAttr,
                    frame.file_id,
                    span,
                    node,
                );
            }
        }
        o.attrs.borrow_mut().insert(name.to_string(), v);
        Ok(())
    }

    pub fn call_method(
        &mut self,
        frame: &Frame,
        recv: &Rc<Value>,
        name: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        if let Some(rest) = name.strip_prefix("super:") {
            let (path, method) = rest.rsplit_once(':').unwrap_or((rest, ""));
            return self.call_super_external(frame, recv, path, method, args, kwargs, span);
        }
        let r: &Value = recv;
        if let Value::Object(o) = r {
            if super::stdlib::re::is_compiled_pattern(o) {
                if let Some(v) = self.call_compiled_pattern(o, name, &args, &kwargs) {
                    return Ok(v);
                }
            }
        }
        if let (Value::Function(f), "cache_clear") = (r, name) {
            if let Some(Wrapper::LruCache(cache)) = &f.wrapper {
                cache.borrow_mut().clear();
            }
            return Ok(Value::None);
        }
        if matches!(r, Value::Builtin(b) if &**b == "object")
            && matches!(name, "__setattr__" | "__delattr__")
        {
            return self.call_object_method(frame, name, &args, span);
        }
        use super::types;
        match r {
            Value::Builtin(b) if name == "__new__" && super::builtin_subclass::is_value_base(b) => {
                self.builtin_super_method(frame, r, b, name, args, kwargs, span)
            }
            Value::InstanceDict(o, namespace) => {
                if o.is_module() {
                    super::trace::replay::note_module_read(
                        o.id,
                        super::trace::replay::ALL_ATTRIBUTES,
                    );
                }
                if !super::trace::replay::reads_only(name) {
                    self.note_replay_write(o.id);
                }
                self.call_instance_dict_method(frame, o, *namespace, name, args, kwargs, span)
            }
            Value::ModuleGlobals(ns) => {
                if !super::trace::replay::reads_only(name) {
                    self.note_replay_write(0);
                }
                types::module_globals::call_method(self, frame, ns, name, &args, &kwargs, span)
            }
            Value::Proxy(_) => types::proxy::call_method(self, frame, r, name, args, kwargs, span),
            Value::List(l) => {
                if !super::trace::replay::reads_only(name) {
                    self.note_replay_container_write();
                }
                types::list::call_method(self, frame, l, name, &args, span)
            }
            Value::Dict(d) => {
                if !super::trace::replay::reads_only(name) {
                    self.note_replay_container_write();
                }
                Ok(types::dict::call_method(d, name, &args, kwargs))
            }
            Value::Str(s) => types::string::call_method(self, frame, s, name, &args, &kwargs, span),
            Value::Tuple(t) => Ok(types::tuple::call_method(t, name, &args)),
            Value::Object(o) if o.is_module() => {
                self.module_method(frame, o, name, args, kwargs, span)
            }
            Value::TensorConst(t) => {
                types::tensor::const_method(self, frame, r, t, name, args, kwargs, span)
            }
            Value::Param(p)
                if proxy::param_is_traced(self) && !matches!(name, "size" | "dim" | "numel") =>
            {
                types::tensor::traced_param_method(self, frame, r, p, name, args, kwargs, span)
            }
            Value::Param(p) => Ok(types::tensor::param_method(r, p, name, &args)),
            Value::Int(_) | Value::Float(_) => Ok(types::number::call_method(r, name)),
            Value::Unknown(u) => {
                types::unknown::call_method(self, frame, u, name, args, kwargs, span)
            }
            other => Ok(Value::unknown(format!("{}.{name}", other.type_name()))),
        }
    }
}

impl Interp {
    /// `sys.version_info` of the user's environment, as a tuple compares it
    /// (`(3, 11, 9, "final", 0)`): libraries choose their imports with it
    /// (`if sys.version_info < (3, 8): import importlib_metadata`). Unknown without an
    /// environment.
    /// Whether the user's Python is older than `major.minor`; None without an environment.
    pub(in crate::eval) fn python_before(&self, major: i64, minor: i64) -> Option<bool> {
        let [have_major, have_minor, _] = self.python_version()?;
        Some((have_major, have_minor) < (major, minor))
    }

    /// The environment's `major.minor.micro`; None without one.
    fn python_version(&self) -> Option<[i64; 3]> {
        let e = self.project.environment()?;
        let mut parts = e.version.split('.').map(|p| p.parse::<i64>().ok());
        Some([parts.next()??, parts.next()??, parts.next()??])
    }

    fn python_version_info(&self) -> Value {
        match self.python_version() {
            Some(p) => Value::tuple(
                p.into_iter()
                    .map(Value::Int)
                    .chain([Value::str("final"), Value::Int(0)])
                    .collect(),
            ),
            _ => Value::unknown("`sys.version_info` (no Python environment was found)"),
        }
    }
}

/// `torch.float32` and friends, `math.pi`, or a longer external path.
pub fn external_attr(path: &str, name: &str) -> Value {
    match name {
        "__name__" | "__qualname__" => {
            return Value::str(path.rsplit('.').next().unwrap_or(path));
        }
        "__module__" => return Value::str(path.rsplit_once('.').map_or("builtins", |(m, _)| m)),
        _ => {}
    }
    let full = format!("{path}.{name}");
    // `torch.float`, `torch.long`, … are dtype aliases just as `torch.float32` is.
    if path == "torch" {
        if let Some(d) = DType::parse(name).filter(|_| {
            !matches!(
                name,
                "f32" | "f64" | "f16" | "bf16" | "i64" | "i32" | "i16" | "i8" | "u8"
            )
        }) {
            return Value::Dtype(d);
        }
    }
    match full.as_str() {
        // torch's and numpy's constants are Python floats too
        "math.pi" | "torch.pi" | "numpy.pi" => Value::Float(std::f64::consts::PI),
        "math.e" | "torch.e" | "numpy.e" => Value::Float(std::f64::consts::E),
        "math.inf" | "torch.inf" | "numpy.inf" => Value::Float(f64::INFINITY),
        "math.nan" | "torch.nan" | "numpy.nan" => Value::Float(f64::NAN),
        "sys.maxsize" => Value::Int(i64::MAX),
        // The evaluator keeps no logger state (`addFilter` and `addHandler` do nothing, and
        // what a logger prints never reaches a graph), so a logger's lists read back empty, as
        // they are for a logger nothing was added to. A library that adds its filter once
        // (`if not any(isinstance(f, F) for f in logger.filters)`) then calls on as before.
        "logging.Logger.filters" | "logging.Logger.handlers" => Value::list(vec![]),
        // False at runtime, which is what tracing sees; treating it as unknown would run the
        // type-checking-only imports (transformers' `__init__` imports the whole package there).
        "typing.TYPE_CHECKING" | "typing_extensions.TYPE_CHECKING" => Value::Bool(false),
        _ => {
            let canon = crate::catalog::get().canonical(&full).to_string();
            Value::External(Rc::from(canon.as_str()))
        }
    }
}

fn is_module_method(name: &str) -> bool {
    matches!(
        name,
        "modules"
            | "named_modules"
            | "children"
            | "named_children"
            | "parameters"
            | "named_parameters"
            | "buffers"
            | "named_buffers"
            | "add_module"
            | "register_module"
            | "register_buffer"
            | "register_parameter"
            | "apply"
            | "eval"
            | "train"
            | "to"
            | "cuda"
            | "cpu"
            | "float"
            | "half"
            | "double"
            | "requires_grad_"
            | "type"
            | "zero_grad"
            | "state_dict"
            | "load_state_dict"
            | "register_forward_hook"
            | "register_forward_pre_hook"
            | "get_submodule"
            | "get_parameter"
            | "extra_repr"
            | "forward"
            | "__init__"
            | "share_memory"
            | "bfloat16"
    )
}

/// Whether `torch.nn.Module` (and so every torch.nn layer class) has the class attribute
/// `name` before a program assigns any: its public API as of torch 2.x. None for a private or
/// special name outside that list, which a class may have without the list knowing.
pub(in crate::eval) fn nn_module_class_has(name: &str) -> Option<bool> {
    const API: &[&str] = &[
        "T_destination",
        "add_module",
        "apply",
        "bfloat16",
        "buffers",
        "call_super_init",
        "children",
        "compile",
        "cpu",
        "cuda",
        "double",
        "dump_patches",
        "eval",
        "extra_repr",
        "float",
        "forward",
        "get_buffer",
        "get_extra_state",
        "get_parameter",
        "get_submodule",
        "half",
        "ipu",
        "load_state_dict",
        "modules",
        "mtia",
        "named_buffers",
        "named_children",
        "named_modules",
        "named_parameters",
        "parameters",
        "register_backward_hook",
        "register_buffer",
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_full_backward_hook",
        "register_full_backward_pre_hook",
        "register_load_state_dict_post_hook",
        "register_load_state_dict_pre_hook",
        "register_module",
        "register_parameter",
        "register_state_dict_post_hook",
        "register_state_dict_pre_hook",
        "requires_grad_",
        "set_extra_state",
        "set_submodule",
        "share_memory",
        "state_dict",
        "to",
        "to_empty",
        "train",
        "type",
        "xpu",
        "zero_grad",
        "__call__",
        "__init__",
        "__getattr__",
        "__setattr__",
        "__delattr__",
        "__dir__",
        "__repr__",
        "__setstate__",
        "__getstate__",
        "_apply",
        "_call_impl",
        "_wrapped_call_impl",
        "_load_from_state_dict",
        "_save_to_state_dict",
        "_named_members",
        "_get_name",
        "_version",
    ];
    if API.contains(&name) || is_module_method(name) {
        Some(true)
    } else if name.starts_with('_') {
        None
    } else {
        Some(false)
    }
}

/// The torch.nn class an instance is or derives from (`LayerNorm` for timm's `LayerNorm2d`).
fn torch_layer_of(o: &super::value::Object) -> Option<String> {
    if let ObjKind::Leaf(layer) = &o.kind {
        return Some(layer.clone());
    }
    let Value::Class(class) = &o.class else {
        return None;
    };
    let base = super::objects::torch_nn_base(&class.mro.borrow())?;
    Some(base.rsplit('.').next().unwrap_or(&base).to_string())
}

/// Whether torch.nn's `layer` has `reset_parameters` (in torch 2.15 these do; `nn.Module`
/// itself and parameterless layers do not, so `hasattr(m, "reset_parameters")` tells them
/// apart, as timm's weight init asks).
fn resets_parameters(layer: &str) -> bool {
    let layer = layer.strip_prefix("Lazy").unwrap_or(layer);
    matches!(
        layer,
        "AdaptiveLogSoftmaxWithLoss"
            | "BatchNorm1d"
            | "BatchNorm2d"
            | "BatchNorm3d"
            | "SyncBatchNorm"
            | "InstanceNorm1d"
            | "InstanceNorm2d"
            | "InstanceNorm3d"
            | "LayerNorm"
            | "GroupNorm"
            | "RMSNorm"
            | "Linear"
            | "Bilinear"
            | "Conv1d"
            | "Conv2d"
            | "Conv3d"
            | "ConvTranspose1d"
            | "ConvTranspose2d"
            | "ConvTranspose3d"
            | "Embedding"
            | "EmbeddingBag"
            | "PReLU"
            | "RNN"
            | "LSTM"
            | "GRU"
            | "RNNBase"
            | "RNNCell"
            | "LSTMCell"
            | "GRUCell"
            | "RNNCellBase"
    )
}

fn is_container_method(name: &str) -> bool {
    matches!(
        name,
        "append" | "extend" | "insert" | "items" | "keys" | "values" | "pop" | "update"
    )
}

fn is_dict_method(name: &str) -> bool {
    matches!(
        name,
        "keys"
            | "values"
            | "items"
            | "get"
            | "__getitem__"
            | "__setitem__"
            | "__contains__"
            | "__len__"
            | "__iter__"
            | "pop"
            | "setdefault"
            | "update"
            | "copy"
    )
}

#[cfg(test)]
mod tests {
    use crate::eval::test_support::{interp_over, notes};

    /// `set.update` and the set methods that take iterables (transformers 4.x's `post_init`
    /// collects module names with `set().update(...)`). Expected: what CPython prints for `r`.
    #[test]
    fn set_methods_taking_iterables() {
        let text = r#"
s = set()
s.update(["b", "a"], ("c", "a"))
u = {"x"}.union(["y", "x"])
d = {"a", "b"}.difference(["a"])
i = {"a", "b"}.intersection(("b", "c"))
r = (sorted(s), sorted(u), sorted(d), sorted(i), {"a"}.issubset(["a", "b"]),
     {"a", "b"}.issuperset(["c"]), {"a"}.isdisjoint(["b"]))
"#;
        let (mut interp, file) = interp_over("m", text);
        let ns = interp.load_module(file).unwrap();
        assert!(notes(&interp).is_empty(), "{:?}", notes(&interp));
        let r = ns.vars.borrow().get("r").cloned().expect("r is bound");
        assert_eq!(
            format!("{r:?}"),
            r#"([["a", "b", "c"], ["x", "y"], ["b"], ["b"], True, False, True],)"#
        );
    }

    /// transformers 4.x's `initialize_weights` adds `smart_apply` to `torch.nn.Module` at run
    /// time unless `hasattr` finds it, then calls it on the model and, through `children()`,
    /// on every layer. Expected: what CPython prints for `r` (torch 2.x).
    #[test]
    fn attributes_assigned_to_torch_nn_module_are_seen_by_layers_and_subclasses() {
        let text = r#"
import torch
from torch import nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

def visit(self, fn):
    for m in self.children():
        m.visit(fn)
    fn(self)
    return self

before = hasattr(torch.nn.Module, "visit")
if not hasattr(torch.nn.Module, "visit"):
    torch.nn.Module.visit = visit
seen = []
b = Block()
back = b.visit(lambda m: seen.append(type(m).__name__))
r = (before, hasattr(nn.Module, "visit"), hasattr(nn.Linear, "visit"), seen, back is b,
     hasattr(nn.Module, "apply"), hasattr(nn.Module, "no_such_method"), nn.Module.visit is visit)
"#;
        let (mut interp, file) = interp_over("m", text);
        let ns = interp.load_module(file).unwrap();
        assert!(notes(&interp).is_empty(), "{:?}", notes(&interp));
        let r = ns.vars.borrow().get("r").cloned().expect("r is bound");
        assert_eq!(
            format!("{r:?}"),
            r#"([False, True, True, ["Linear", "Block"], True, True, False, True],)"#
        );
    }

    /// diffusers' `ModelMixin(nn.Module)` defines `__getattr__` for config names; Python asks
    /// it only after the ordinary lookup, which finds nn.Module's and dict's methods first.
    /// Expected: what CPython prints for `r` (torch 2.x).
    #[test]
    fn base_class_methods_are_found_before_getattr() {
        let text = r#"
from collections import OrderedDict
import torch
from torch import nn

class Model(nn.Module):
    def __getattr__(self, name):
        if name == "width":
            return 4
        return super().__getattr__(name)

    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(self.width))
        self.fc = nn.Linear(self.width, 2)

class Output(OrderedDict):
    def __getattr__(self, name):
        return "missing " + name

m = Model()
out = Output(a=1)
r = (m.width, tuple(m.scale.shape), [n for n, _ in m.named_children()], list(out.keys()), out.other)
"#;
        let (mut interp, file) = interp_over("m", text);
        let ns = interp.load_module(file).unwrap();
        assert!(notes(&interp).is_empty(), "{:?}", notes(&interp));
        let r = ns.vars.borrow().get("r").cloned().expect("r is bound");
        assert_eq!(
            format!("{r:?}"),
            r#"([4, ([4],), ["fc"], ["a"], "missing other"],)"#
        );
    }
}

/// `__mro__` as CPython shows it: the evaluator's MRO ends at the first builtin base (or has
/// none), and Python's goes on through that builtin's own bases to `object`.
pub(in crate::eval) fn full_mro(mro: &[Value]) -> Vec<Value> {
    let mut out = mro.to_vec();
    if out
        .iter()
        .any(|m| matches!(m, Value::External(_) | Value::Unknown(_)))
    {
        return out;
    }
    let has = |out: &[Value], name: &str| {
        out.iter()
            .any(|m| matches!(m, Value::Builtin(b) if &**b == name))
    };
    let builtin_bases: Vec<Rc<str>> = out
        .iter()
        .filter_map(|m| match m {
            Value::Builtin(b) => Some(b.clone()),
            _ => None,
        })
        .collect();
    for b in builtin_bases {
        if let Some(chain) = super::stdlib::contextlib::exception_bases(&b) {
            for base in chain.iter().chain(["BaseException"].iter()) {
                if !has(&out, base) {
                    out.push(Value::Builtin(Rc::from(*base)));
                }
            }
        }
    }
    if !has(&out, "object") {
        out.push(Value::Builtin(Rc::from("object")));
    }
    out
}
