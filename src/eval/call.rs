//! Calls: user functions (inlined when tracing), classes, Python builtins, and external
//! (torch) callables, plus the operators and protocols (`iter`, `[]`) they rely on.

use crate::syntax::KindExt;
use std::cell::RefCell;
use std::rc::Rc;

use tree_sitter::Node;

use super::dict_builder::DictBuilder;
use super::expr::binop_name;
use super::stmt::Truth;
use super::value::{FnKind, Function, ObjKind, Partial, Scope, Value};
use super::{EResult, Flow, Frame, Interp};
use crate::catalog::ParamKind;
use crate::diagnostics::codes;
use crate::graph::inline::MAX_INLINE_DEPTH;
use crate::shapes::{Meta, Scalar, ScalarOrigin};
use crate::syntax::{operands, text, FieldExt, Span};

pub type Kwargs = Vec<(String, Value)>;

/// Whether a value (or anything inside it) is a graph value.
pub fn has_proxy(v: &Value) -> bool {
    match v {
        Value::Proxy(_) => true,
        Value::Tuple(t) => t.iter().any(has_proxy),
        Value::List(l) => l.borrow().iter().any(has_proxy),
        Value::Dict(d) => d.borrow().iter().any(|(_, v)| has_proxy(v)),
        Value::Slice(s) => s.iter().any(has_proxy),
        _ => false,
    }
}

/// Whether any argument of a call is (or holds) a graph value.
pub(in crate::eval) fn any_proxy(args: &[Value], kwargs: &Kwargs) -> bool {
    args.iter().any(has_proxy) || kwargs.iter().any(|(_, v)| has_proxy(v))
}

impl Interp {
    pub fn lookup(&mut self, frame: &Frame, name: &str, span: Span) -> EResult<Value> {
        let mut scope = frame.locals.clone();
        while let Some(s) = scope {
            if let Some(v) = s.vars.borrow().get(name) {
                match super::stmt::scope_mark(v) {
                    None => return Ok(v.clone()),
                    Some(super::stmt::GLOBAL_MARK) => break,
                    Some(_) => {}
                }
            }
            scope = s.parent.clone();
        }
        if let Some(v) = frame.globals.vars.borrow().get(name) {
            return Ok(v.clone());
        }
        if let Some(v) = self.force_pending(&frame.globals, name) {
            return Ok(v);
        }
        if let Some(b) = builtin_value(name) {
            return Ok(b);
        }
        if let Some(v) = self.from_star_sources(&frame.globals, name) {
            return Ok(v);
        }
        Err(self.error(
            frame,
            span,
            codes::UNRESOLVED_NAME,
            format!("name `{name}` is not defined"),
        ))
    }

    pub fn eval_call(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let span = Span::of(node);
        let Some(fnode) = node.field("function") else {
            return Err(self.error(frame, span, codes::SYNTAX_ERROR, "incomplete call"));
        };
        let func = self.eval_expr(frame, fnode)?;
        let mut args = Vec::new();
        let mut kwargs: Kwargs = Vec::new();
        if let Some(alist) = node.field("arguments") {
            if alist.kind_name() == "generator_expression" {
                args.push(self.eval_expr(frame, alist)?);
            } else {
                for a in operands(alist) {
                    match a.kind_name() {
                        "keyword_argument" => {
                            let (Some(n), Some(v)) = (a.field("name"), a.field("value")) else {
                                continue;
                            };
                            let val = self.eval_expr(frame, v)?;
                            kwargs.push((text(n, &frame.file.text).to_string(), val));
                        }
                        "list_splat" => {
                            let v = self.eval_expr(frame, a)?;
                            match self.iterate(frame, &v, Span::of(a)) {
                                Ok(items) => args.extend(items),
                                Err(_) => args.push(Value::unknown("*args of unknown length")),
                            }
                        }
                        "dictionary_splat" => {
                            let v = self.eval_expr(frame, a)?;
                            match self.mapping_entries(frame, &v, Span::of(a))? {
                                Some(entries) => {
                                    for (k, v) in entries {
                                        if let Value::Str(k) = k {
                                            kwargs.push((k.to_string(), v));
                                        }
                                    }
                                }
                                None if matches!(v, Value::Unknown(_)) => {}
                                None => {
                                    return Err(self.error(
                                        frame,
                                        Span::of(a),
                                        codes::UNSUPPORTED,
                                        "`**` of a non-dict",
                                    ))
                                }
                            }
                        }
                        _ => args.push(self.eval_expr(frame, a)?),
                    }
                }
            }
        }
        if self.tracing() && any_proxy(&args, &kwargs) {
            if let Some(function) = self.autograd_function_apply(frame, fnode, &args, span) {
                // torch.fx records the ops of the Function's forward in place, and so does
                // Dynamo when no input needs a gradient (with one, it wraps the same forward
                // and the backward in one `autograd_function_apply` op). A forward that cannot
                // be read stays one opaque node.
                if let Some(out) =
                    self.run_function_forward(frame, &function, args.clone(), kwargs.clone(), span)
                {
                    return out;
                }
                let target = format!("{}.apply", function.qualname);
                return self.trace_function(frame, &target, args, kwargs, span);
            }
        }
        self.call_value(frame, &func, args, kwargs, span)
    }

    pub fn call_value(
        &mut self,
        frame: &Frame,
        func: &Value,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        self.step(frame, span)?;
        match func {
            Value::Function(f) => self.call_function(frame, f, None, args, kwargs, span),
            Value::BoundMethod(recv, f) => {
                self.call_function(frame, f, Some((**recv).clone()), args, kwargs, span)
            }
            Value::Class(_) => self.instantiate(frame, func, args, kwargs, span),
            Value::Builtin(name) => self.call_builtin(frame, name, args, kwargs, span),
            Value::Method(recv, name) => self.call_method(frame, recv, name, args, kwargs, span),
            Value::External(path) => match self.bundled_class(path) {
                // A standard-library class or function written in Python here
                // (`contextvars.ContextVar`, `collections.namedtuple`).
                Some(class @ Value::Class(_)) => {
                    self.instantiate(frame, &class, args, kwargs, span)
                }
                Some(function) => self.call_value(frame, &function, args, kwargs, span),
                None => self.call_external(frame, path, args, kwargs, span),
            },
            Value::Partial(p) => {
                let mut all = p.args.clone();
                all.extend(args);
                let mut kw = p.kwargs.clone();
                for (k, v) in kwargs {
                    kw.retain(|(kk, _)| kk != &k);
                    kw.push((k, v));
                }
                let f = p.func.clone();
                self.call_value(frame, &f, all, kw, span)
            }
            Value::Object(o) => {
                if o.is_module() {
                    return self.call_module_object(frame, o, args, kwargs, span);
                }
                if kwargs.is_empty() {
                    if let Some(r) = self.call_context_decorator(frame, o, &args, span) {
                        return r;
                    }
                }
                match self.class_lookup(&o.class, "__call__") {
                    Some(Value::Function(f)) => {
                        self.call_function(frame, &f, Some(func.clone()), args, kwargs, span)
                    }
                    _ => Err(self.error(
                        frame,
                        span,
                        codes::UNSUPPORTED,
                        format!("`{}` object is not callable", o.class_name()),
                    )),
                }
            }
            Value::Unknown(u) => {
                if self.tracing() && u.path.is_some() {
                    return self.trace_module(frame, func, args, kwargs, span);
                }
                if self.tracing() && any_proxy(&args, &kwargs) {
                    let target = format!("<unknown: {}>", super::stmt::truncate(&u.reason, 60));
                    if let Some(t) = self.tracer.as_mut() {
                        t.event(
                            crate::traced::EventKind::UnknownCall,
                            frame.file_id,
                            span,
                            u.reason.clone(),
                        );
                    }
                    return self.trace_function(frame, &target, args, kwargs, span);
                }
                Ok(Value::unknown(format!(
                    "result of calling an unknown value ({})",
                    u.reason
                )))
            }
            Value::Super(..) => {
                Err(self.error(frame, span, codes::UNSUPPORTED, "calling super object"))
            }
            Value::Proxy(_) => {
                Err(self.error(frame, span, codes::UNSUPPORTED, "calling a traced value"))
            }
            other => Err(self.error(
                frame,
                span,
                codes::RAISED,
                format!("`{}` object is not callable", other.type_name()),
            )),
        }
    }

    /// `F.apply(*args)` as its forward runs: `forward(ctx, *args)` with a fresh context, or,
    /// for a Function that defines `setup_context`, `forward(*args)`. `None` when forward is
    /// not Python staticfx reads.
    fn run_function_forward(
        &mut self,
        frame: &Frame,
        function: &Rc<super::value::Class>,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        let class = Value::Class(function.clone());
        let Some(Value::Function(forward)) = self.class_lookup(&class, "forward") else {
            return None;
        };
        let separate_setup = matches!(
            self.class_lookup(&class, "setup_context"),
            Some(Value::Function(_))
        );
        let mut all = Vec::with_capacity(args.len() + 1);
        if !separate_setup {
            let ctx_class = self.bundled_class("torch.autograd.function.FunctionCtx")?;
            let ctx = match self.instantiate(frame, &ctx_class, vec![], vec![], span) {
                Ok(ctx) => ctx,
                Err(e) => return Some(Err(e)),
            };
            all.push(ctx);
        }
        all.extend(args);
        Some(self.call_function(frame, &forward, None, all, kwargs, span))
    }

    /// For `F.apply(...)` on a `torch.autograd.Function` subclass, F's class; notes
    /// one tensor passed to two of forward's inputs, which Dynamo refuses (it cannot route two
    /// gradients back to one input).
    fn autograd_function_apply(
        &mut self,
        frame: &Frame,
        fnode: Node,
        args: &[Value],
        span: Span,
    ) -> Option<Rc<super::value::Class>> {
        if fnode.kind_name() != "attribute" {
            return None;
        }
        let object = fnode.field("object")?;
        let attr = fnode.field("attribute")?;
        if text(attr, &frame.file.text) != "apply"
            || !matches!(object.kind_name(), "identifier" | "attribute")
        {
            return None;
        }
        let Ok(Value::Class(class)) = self.eval_expr(frame, object) else {
            return None;
        };
        let is_function = class.mro.borrow().iter().any(|m| {
            matches!(m, Value::External(p) if matches!(&**p, "torch.autograd.Function" | "torch.autograd.function.Function"))
        });
        if !is_function
            || self
                .class_lookup(&Value::Class(class.clone()), "apply")
                .is_some_and(|a| !matches!(a, Value::Unknown(_) | Value::External(_)))
        {
            return None;
        }
        let proxies: Vec<(usize, crate::graph::NodeId)> = args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match a {
                Value::Proxy(n) => Some((i, *n)),
                _ => None,
            })
            .collect();
        let duplicate = proxies.iter().enumerate().find_map(|(k, (i, n))| {
            proxies[k + 1..]
                .iter()
                .find(|(_, m)| m == n)
                .map(|(j, _)| (*i, *j))
        });
        if let (Some((i, j)), Some(t)) = (duplicate, self.tracer.as_mut()) {
            // The positions, then the tensor inputs' nodes: forward's own nodes are recorded
            // in place of the call, so the rule reads whether an input needs grad from these.
            let inputs: Vec<String> = proxies.iter().map(|(_, n)| n.index().to_string()).collect();
            t.event(
                crate::traced::EventKind::AutogradApplyDuplicate,
                frame.file_id,
                span,
                format!("{i},{j};{}", inputs.join(" ")),
            );
        }
        Some(class)
    }

    /// `dir(x)` of a class or instance: the names of its attributes and its classes', sorted.
    fn dir(&self, v: &Value) -> Value {
        let mut names: Vec<String> = Vec::new();
        let class = match v {
            Value::Object(o) => {
                names.extend(o.attrs.borrow().keys().cloned());
                o.class.clone()
            }
            other => other.clone(),
        };
        if let Value::Class(c) = &class {
            for m in c.mro.borrow().iter() {
                if let Value::Class(k) = m {
                    names.extend(k.ns.borrow().keys().cloned());
                }
            }
        }
        names.sort();
        names.dedup();
        Value::list(names.iter().map(|n| Value::str(n)).collect())
    }

    /// `object`'s own `__setattr__`, `__getattribute__`, `__init__`, `__repr__`, called on an
    /// instance (`object.__setattr__(self, k, v)`, or through `super()` from an override).
    pub(in crate::eval) fn call_object_method(
        &mut self,
        frame: &Frame,
        name: &str,
        args: &[Value],
        span: Span,
    ) -> EResult<Value> {
        let method = name.strip_prefix("object.").unwrap_or(name);
        let obj = args.first().cloned().unwrap_or(Value::None);
        match (method, &obj, args.get(1)) {
            ("__setattr__", Value::Object(o), Some(Value::Str(k))) => {
                let v = args.get(2).cloned().unwrap_or(Value::None);
                self.object_setattr(frame, &obj, o, k, v, span)?;
                Ok(Value::None)
            }
            ("__getattribute__", Value::Object(o), Some(Value::Str(k))) => {
                self.object_getattribute(frame, &obj, o, k, span)
            }
            ("__delattr__", Value::Object(o), Some(Value::Str(k))) => {
                self.object_delattr(frame, o, k, span)?;
                Ok(Value::None)
            }
            ("__setattr__" | "__getattribute__" | "__delattr__", Value::Object(_), _) => Ok(
                Value::unknown(format!("`object.{method}` with a computed name")),
            ),
            ("__setattr__", _, _) => self
                .set_attr(
                    frame,
                    &obj,
                    &as_str(args.get(1)),
                    args.get(2).cloned().unwrap_or(Value::None),
                    span,
                )
                .map(|()| Value::None),
            ("__getattribute__", _, _) => self.get_attr(frame, &obj, &as_str(args.get(1)), span),
            ("__delattr__", _, _) => self
                .del_attr(frame, &obj, &as_str(args.get(1)), span)
                .map(|()| Value::None),
            ("__init__", _, _) => Ok(Value::None),
            _ => Ok(Value::unknown(format!("`object.{method}`"))),
        }
    }

    /// Calls a user function; during tracing this is the inlining step.
    pub fn call_function(
        &mut self,
        frame: &Frame,
        f: &Rc<Function>,
        recv: Option<Value>,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        if self.call_depth >= self.limits.max_call_depth {
            return Err(self.error(
                frame,
                span,
                codes::UNSUPPORTED,
                "call depth limit reached (recursive helpers?)",
            ));
        }
        if let Some(cached) = self.call_lru_cached(frame, f, &recv, &args, &kwargs, span) {
            return cached;
        }
        if let Some(manager) = self.call_contextmanager_wrapper(f, &recv, &args, &kwargs) {
            return Ok(manager);
        }
        if let Some(o) = super::overrides::lookup(&f.globals.name, &f.qualname) {
            return Ok(super::overrides::apply(
                o,
                Value::Function(f.clone()),
                &args,
                kwargs,
            ));
        }
        let inline = self.tracing();
        if inline {
            let depth = self.tracer.as_ref().map(|t| t.inline_depth).unwrap_or(0);
            if depth >= MAX_INLINE_DEPTH {
                return Err(self.error(frame, span, codes::UNSUPPORTED, format!("inlining stopped at depth {MAX_INLINE_DEPTH} (mutually recursive helpers?)")));
            }
        }
        if inline && recv.is_none() && self.is_allowed_in_graph(f) {
            return self.call_allowed_in_graph(frame, f, args, kwargs, span);
        }
        let (file, file_id, def_span) = self.definition_of(f);
        let tree = file.tree();
        let tree_node = find_node(&tree, def_span);
        if inline && *f.compiler_disabled.get_or_init(|| compiler_disabled(f)) {
            let how = if recv.is_some() { "method" } else { "function" };
            if let Some(t) = self.tracer.as_mut() {
                t.event(
                    crate::traced::EventKind::DisabledCall,
                    frame.file_id,
                    span,
                    how.to_string(),
                );
            }
        }
        let mut all = Vec::with_capacity(args.len() + 1);
        match (recv, f.kind) {
            (Some(r), FnKind::Plain | FnKind::Property) => all.push(r),
            (Some(r), FnKind::ClassMethod) => all.push(match &r {
                Value::Object(o) => o.class.clone(),
                _ => r,
            }),
            _ => {}
        }
        all.extend(args);
        let bound = self.bind(frame, &f.params, all, kwargs, &f.name, span)?;
        let scope = Rc::new(Scope {
            vars: RefCell::new(bound.into_iter().collect()),
            parent: f.closure.clone(),
            class_body: false,
        });
        self.created.scope(&scope);
        let class = self.defining_class(f);
        let receiver = f
            .params
            .first()
            .and_then(|p| scope.vars.borrow().get(&p.name).cloned());
        let identity = (f.file_id, f.span);
        if let Some(t) = self.touched.as_mut() {
            t.insert(identity);
        }
        let callee = Frame {
            file: file.clone(),
            file_id,
            globals: f.globals.clone(),
            locals: Some(scope),
            class,
            receiver,
        };
        let Some(def) = tree_node else {
            return Err(self.error(
                frame,
                span,
                codes::UNSUPPORTED,
                format!("source of `{}` not found", f.name),
            ));
        };
        if f.is_generator && inline {
            if let Some(t) = self.tracer.as_mut() {
                // Only a generator *root* is refused by Dynamo; inlined generator helpers are fine.
                let detail = if t.inline_depth == 0 {
                    "root".to_string()
                } else {
                    f.name.clone()
                };
                t.event(
                    crate::traced::EventKind::Generator,
                    file_id,
                    def_span,
                    detail,
                );
            }
        }
        self.call_depth += 1;
        if inline {
            let t = self.tracer.as_mut().expect("tracing");
            t.call_chain.push((frame.file_id, span));
            t.inline_depth += 1;
        }
        let result = if f.is_lambda {
            match def.field("body") {
                Some(b) => self.eval_expr(&callee, b),
                None => Ok(Value::None),
            }
        } else if f.is_generator {
            self.yields.push(Vec::new());
            let run = match def.field("body") {
                Some(b) => self.exec_block(&callee, b).map(|_| ()),
                None => Ok(()),
            };
            let values = self.yields.pop().unwrap_or_default();
            run.map(|()| Value::list(values))
        } else {
            match def.field("body") {
                Some(b) => self.exec_block(&callee, b).map(|flow| match flow {
                    Flow::Return(v) => v,
                    _ => Value::None,
                }),
                None => Ok(Value::None),
            }
        };
        if inline {
            let t = self.tracer.as_mut().expect("tracing");
            t.call_chain.pop();
            t.inline_depth -= 1;
        }
        self.call_depth -= 1;
        let result = match result {
            // `obj.__dict__` through a `__getattribute__` override stays the instance's own,
            // for the attribute access that asked for it; any other function returns a copy
            Ok(Value::InstanceDict(o)) if f.name != "__getattribute__" => Ok(o.dict_snapshot()),
            other => other,
        };
        self.helper_result(&f.name, result)
    }

    /// What a call of the function `name` gives its caller: what the evaluator cannot follow
    /// inside a helper makes the helper's result unknown (noted as an analysis limit), and the
    /// caller goes on; errors the model itself raises still propagate.
    pub(in crate::eval) fn helper_result(
        &mut self,
        name: &str,
        result: EResult<Value>,
    ) -> EResult<Value> {
        match result {
            Err(e) if e.code == codes::UNSUPPORTED || e.code == codes::UNRESOLVED_NAME => {
                self.note_error(&e);
                Ok(Value::unknown(format!("result of `{name}`: {}", e.message)))
            }
            other => other,
        }
    }

    /// The class a method was defined in, for zero-argument `super()`.
    fn defining_class(&self, f: &Function) -> Option<Rc<super::value::Class>> {
        let qual = f.qualname.rsplit_once('.')?.0.to_string();
        let ns = f.globals.vars.borrow();
        let mut parts = qual.split('.');
        let mut cur = match ns.get(parts.next()?)? {
            Value::Class(c) => c.clone(),
            _ => return None,
        };
        for p in parts {
            let next = match cur.ns.borrow().get(p) {
                Some(Value::Class(c)) => c.clone(),
                _ => return None,
            };
            cur = next;
        }
        Some(cur)
    }

    /// Binds call arguments to parameters with Python's rules.
    pub fn bind(
        &mut self,
        frame: &Frame,
        params: &[super::value::FnParam],
        args: Vec<Value>,
        mut kwargs: Kwargs,
        fname: &str,
        span: Span,
    ) -> EResult<Vec<(String, Value)>> {
        let mut out: Vec<(String, Value)> = Vec::with_capacity(params.len());
        let mut args = args.into_iter();
        let mut var_kw: Option<String> = None;
        for p in params {
            match p.kind {
                ParamKind::PositionalOnly | ParamKind::PositionalOrKeyword => {
                    if let Some(a) = args.next() {
                        out.push((p.name.clone(), a));
                    } else if let Some(i) = kwargs.iter().position(|(k, _)| k == &p.name) {
                        out.push((p.name.clone(), kwargs.remove(i).1));
                    } else if let Some(d) = &p.default {
                        out.push((p.name.clone(), d.clone()));
                    } else {
                        return Err(self.error(
                            frame,
                            span,
                            codes::RAISED,
                            format!("{fname}() missing required argument `{}`", p.name),
                        ));
                    }
                }
                ParamKind::VarPositional => {
                    out.push((p.name.clone(), Value::tuple(args.by_ref().collect())))
                }
                ParamKind::KeywordOnly => {
                    if let Some(i) = kwargs.iter().position(|(k, _)| k == &p.name) {
                        out.push((p.name.clone(), kwargs.remove(i).1));
                    } else if let Some(d) = &p.default {
                        out.push((p.name.clone(), d.clone()));
                    } else {
                        return Err(self.error(
                            frame,
                            span,
                            codes::RAISED,
                            format!("{fname}() missing keyword argument `{}`", p.name),
                        ));
                    }
                }
                ParamKind::VarKeyword => var_kw = Some(p.name.clone()),
            }
        }
        let extra: Vec<Value> = args.collect();
        if !extra.is_empty() && !extra.iter().all(Value::is_unknown) {
            return Err(self.error(
                frame,
                span,
                codes::RAISED,
                format!("{fname}() got {} extra positional argument(s)", extra.len()),
            ));
        }
        match var_kw {
            Some(name) => {
                let d = kwargs
                    .into_iter()
                    .map(|(k, v)| (Value::str(&k), v))
                    .collect();
                out.push((name, Value::Dict(Rc::new(RefCell::new(d)))));
            }
            None if !kwargs.is_empty() => {
                return Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!(
                        "{fname}() got an unexpected keyword argument `{}`",
                        kwargs[0].0
                    ),
                ));
            }
            None => {}
        }
        Ok(out)
    }

    fn call_builtin(
        &mut self,
        frame: &Frame,
        name: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let a0 = args.first().cloned().unwrap_or(Value::None);
        match name {
            "object.__setattr__"
            | "object.__getattribute__"
            | "object.__init__"
            | "object.__repr__" => self.call_object_method(frame, name, &args, span),
            "len" => match &a0 {
                Value::Proxy(_) => self.trace_function(frame, "builtins.len", args, kwargs, span),
                Value::Object(o) if o.is_module() => Ok(Value::Int(o.children().len() as i64)),
                Value::Object(o) if self.user_method(&o.class, "__len__").is_some() => {
                    let f = self.user_method(&o.class, "__len__").expect("checked");
                    self.call_function(frame, &f, Some(a0.clone()), vec![], vec![], span)
                }
                Value::Str(s) => Ok(Value::Int(s.chars().count() as i64)),
                Value::Dict(d) => Ok(Value::Int(d.borrow().len() as i64)),
                Value::Unknown(_) => Ok(Value::unknown("len of unknown")),
                v => Ok(Value::Int(self.iterate(frame, v, span)?.len() as i64)),
            },
            "range" => {
                let ints: Vec<Option<i64>> = args.iter().map(as_int).collect();
                if ints.iter().any(Option::is_none) {
                    if args.iter().any(has_proxy) {
                        return Err(self.error(
                            frame,
                            span,
                            codes::UNSUPPORTED,
                            "range() over a value only known at run time",
                        ));
                    }
                    return Err(self.error(
                        frame,
                        span,
                        codes::UNSUPPORTED,
                        format!(
                            "range() with a bound that could not be evaluated statically{}",
                            why_not_known(&args)
                        ),
                    ));
                }
                let ints: Vec<i64> = ints.into_iter().flatten().collect();
                let (start, stop, step) = match ints.as_slice() {
                    [e] => (0, *e, 1),
                    [s, e] => (*s, *e, 1),
                    [s, e, st] => (*s, *e, *st),
                    _ => {
                        return Err(self.error(
                            frame,
                            span,
                            codes::RAISED,
                            "range() takes 1 to 3 arguments",
                        ))
                    }
                };
                if step == 0 {
                    return Err(self.error(
                        frame,
                        span,
                        codes::RAISED,
                        "range() arg 3 must not be zero",
                    ));
                }
                let n = if step > 0 {
                    (stop - start + step - 1).max(0) / step
                } else {
                    (start - stop - step - 1).max(0) / -step
                };
                if n as u64 > self.limits.max_collection as u64 {
                    return Err(self.error(
                        frame,
                        span,
                        codes::BUDGET,
                        format!("range of {n} elements exceeds the evaluation budget"),
                    ));
                }
                Ok(Value::list(
                    (0..n).map(|i| Value::Int(start + i * step)).collect(),
                ))
            }
            "enumerate" => {
                let start = args.get(1).and_then(as_int).unwrap_or(0);
                let items = self.iterate(frame, &a0, span)?;
                Ok(Value::list(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| Value::tuple(vec![Value::Int(start + i as i64), v]))
                        .collect(),
                ))
            }
            "zip" => {
                let mut lists = Vec::new();
                for a in &args {
                    lists.push(self.iterate(frame, a, span)?);
                }
                let n = lists.iter().map(Vec::len).min().unwrap_or(0);
                Ok(Value::list(
                    (0..n)
                        .map(|i| Value::tuple(lists.iter().map(|l| l[i].clone()).collect()))
                        .collect(),
                ))
            }
            "reversed" => {
                let mut items = self.iterate(frame, &a0, span)?;
                items.reverse();
                Ok(Value::list(items))
            }
            "sorted" => {
                let mut items = self.iterate(frame, &a0, span)?;
                if items.iter().all(|v| matches!(v, Value::Int(_))) {
                    items.sort_by_key(|v| as_int(v).unwrap_or(0));
                    if kwargs
                        .iter()
                        .any(|(k, v)| k == "reverse" && matches!(v, Value::Bool(true)))
                    {
                        items.reverse();
                    }
                    Ok(Value::list(items))
                } else if items.iter().all(|v| matches!(v, Value::Str(_))) {
                    items.sort_by(|a, b| match (a, b) {
                        (Value::Str(x), Value::Str(y)) => x.cmp(y),
                        _ => std::cmp::Ordering::Equal,
                    });
                    Ok(Value::list(items))
                } else {
                    Ok(Value::list(items))
                }
            }
            "list" | "tuple" | "set" | "frozenset" => {
                let items = if args.is_empty() {
                    vec![]
                } else {
                    self.iterate(frame, &a0, span)?
                };
                Ok(match name {
                    "tuple" => Value::tuple(items),
                    "set" | "frozenset" => Value::list(set_of(items)),
                    _ => Value::list(items),
                })
            }
            "dict" => {
                let mut items = DictBuilder::default();
                if let Some(a) = args.first() {
                    match self.mapping_entries(frame, a, span)? {
                        Some(entries) => items = DictBuilder::from_entries(entries),
                        None => {
                            let other = a;
                            for pair in self.iterate(frame, other, span)? {
                                let kv = self.unpack(frame, &pair, 2, false, span)?;
                                items.insert(kv[0].clone(), kv[1].clone());
                            }
                        }
                    }
                }
                for (k, v) in kwargs {
                    items.insert(Value::str(&k), v);
                }
                Ok(Value::Dict(Rc::new(RefCell::new(items.finish()))))
            }
            "isinstance" => {
                let cls = args.get(1).cloned().unwrap_or(Value::None);
                Ok(self.isinstance(&a0, &cls))
            }
            "issubclass" => {
                let cls = args.get(1).cloned().unwrap_or(Value::None);
                Ok(match &a0 {
                    Value::Class(c) => {
                        let targets = match &cls {
                            Value::Tuple(t) => t.to_vec(),
                            other => vec![other.clone()],
                        };
                        let mro = c.mro.borrow().clone();
                        Value::Bool(targets.iter().any(|t| mro.iter().any(|m| same_class(m, t))))
                    }
                    _ => Value::unknown("issubclass"),
                })
            }
            "hasattr" => {
                let Some(Value::Str(n)) = args.get(1) else {
                    return Ok(Value::unknown("hasattr"));
                };
                // A tensor has the attributes and methods of `torch.Tensor` (the catalogue's).
                if matches!(
                    a0,
                    Value::Proxy(_) | Value::Param(_) | Value::TensorConst(_)
                ) {
                    let known = super::trace::is_tensor_attribute(n)
                        || crate::catalog::get()
                            .function(&format!("torch.Tensor.{n}"))
                            .is_some();
                    return Ok(Value::Bool(known));
                }
                // `hasattr(torch.nn.Module, "smart_apply")`: torch.nn's classes have the
                // attributes of nn.Module's API and what the program assigned to them.
                if let Value::External(path) = &a0 {
                    if self.external_class_attr(path, n).is_some() {
                        return Ok(Value::Bool(true));
                    }
                    if &**path == TORCH_NN_MODULE || crate::catalog::get().module(path).is_some() {
                        return Ok(match super::attr::nn_module_class_has(n) {
                            Some(has) => Value::Bool(has),
                            None => Value::unknown(format!("hasattr(`{path}`, `{n}`)")),
                        });
                    }
                }
                Ok(match self.get_attr(frame, &a0, n, span) {
                    Ok(Value::Unknown(_)) => Value::unknown("hasattr"),
                    Ok(_) => Value::Bool(true),
                    Err(_) => Value::Bool(false),
                })
            }
            "getattr" => {
                let Some(Value::Str(n)) = args.get(1) else {
                    return Ok(Value::unknown("getattr with a computed name"));
                };
                match self.get_attr(frame, &a0, n, span) {
                    Ok(v) => Ok(v),
                    Err(e) => match args.get(2) {
                        Some(d) => Ok(d.clone()),
                        None => Err(e),
                    },
                }
            }
            "setattr" => {
                let Some(Value::Str(n)) = args.get(1) else {
                    return Ok(Value::None);
                };
                let v = args.get(2).cloned().unwrap_or(Value::None);
                self.set_attr(frame, &a0, n, v, span)?;
                Ok(Value::None)
            }
            "delattr" => {
                let Some(Value::Str(n)) = args.get(1) else {
                    return Ok(Value::None);
                };
                self.del_attr(frame, &a0, n, span)?;
                Ok(Value::None)
            }
            "int" | "float" | "bool" => self.convert(frame, name, &a0, args.len(), span),
            "str" | "repr" => Ok(match &a0 {
                // `str(err)`: its one argument as text (a KeyError's is its repr), else the
                // arguments' tuple.
                Value::Object(o)
                    if name == "str"
                        && is_exception_object(o)
                        && !matches!(
                            self.class_lookup(&o.class, "__str__"),
                            Some(Value::Function(_))
                        ) =>
                {
                    let args = match o.get("args") {
                        Some(Value::Tuple(t)) => t.to_vec(),
                        _ => vec![],
                    };
                    match args.as_slice() {
                        [] => Value::str(""),
                        [Value::Str(s)] if o.class_name() != "KeyError" => Value::Str(s.clone()),
                        [one @ (Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::None)] => {
                            return self.call_builtin(frame, "str", vec![one.clone()], vec![], span)
                        }
                        _ => Value::unknown("str() of an exception"),
                    }
                }
                Value::Object(o) if !o.is_module() => {
                    // `str` falls back to `__repr__`, as `object.__str__` does.
                    let slots: &[&str] = if name == "str" {
                        &["__str__", "__repr__"]
                    } else {
                        &["__repr__"]
                    };
                    let method =
                        slots
                            .iter()
                            .find_map(|slot| match self.class_lookup(&o.class, slot) {
                                Some(Value::Function(f)) => Some(f),
                                _ => None,
                            });
                    match method {
                        Some(f) => {
                            return self.call_function(
                                frame,
                                &f,
                                Some(a0.clone()),
                                vec![],
                                vec![],
                                span,
                            )
                        }
                        None => {
                            Value::unknown(format!("{name}() of a `{}` object", o.class_name()))
                        }
                    }
                }
                Value::Str(s) if name == "repr" => Value::str(&super::types::string::repr(s)),
                Value::Str(s) => Value::Str(s.clone()),
                Value::Int(i) => Value::str(&i.to_string()),
                Value::Float(f) => Value::str(&format!("{f:?}")),
                Value::Bool(b) => Value::str(if *b { "True" } else { "False" }),
                Value::None => Value::str("None"),
                // torch.fx's Proxy formats as its node: `str(x.device)` is "Proxy(getattr_2)".
                Value::Proxy(n) => match self.tracer.as_mut() {
                    // Formatting reads the proxy's node: an attribute's node exists from here.
                    Some(t) => {
                        t.use_node(*n);
                        Value::str(&format!("Proxy({})", t.graph.node(*n).name))
                    }
                    None => Value::unknown("str() of a traced value"),
                },
                Value::Class(c) => Value::str(&format!(
                    "<class '{}.{}'>",
                    self.project.file(c.file_id).module,
                    c.qualname
                )),
                // `inspect._ParameterKind.__str__` is the member's name.
                Value::External(p) if name == "str" => match p.strip_prefix("inspect.Parameter.") {
                    Some(
                        kind @ ("POSITIONAL_ONLY"
                        | "POSITIONAL_OR_KEYWORD"
                        | "VAR_POSITIONAL"
                        | "KEYWORD_ONLY"
                        | "VAR_KEYWORD"),
                    ) => Value::str(kind),
                    _ => Value::unknown("str() of a complex value"),
                },
                _ => Value::unknown("str() of a complex value"),
            }),
            "abs" => match &a0 {
                Value::Int(i) => Ok(Value::Int(i.abs())),
                Value::Float(f) => Ok(Value::Float(f.abs())),
                Value::Proxy(_) => self.trace_function(frame, "operator.abs", args, kwargs, span),
                _ => Ok(Value::unknown("abs")),
            },
            "round" => match (&a0, args.get(1)) {
                (Value::Float(f), None) => Ok(Value::Int(round_half_even(*f) as i64)),
                (Value::Int(i), None) => Ok(Value::Int(*i)),
                (Value::Float(f), Some(Value::Int(n))) => {
                    let m = 10f64.powi(*n as i32);
                    Ok(Value::Float(round_half_even(f * m) / m))
                }
                _ => Ok(Value::unknown("round")),
            },
            // `sum(lists, [])`: a start value makes it a fold of `+` over any values.
            "sum" if args.len() == 2 || kwargs.iter().any(|(k, _)| k == "start") => {
                let start = args
                    .get(1)
                    .cloned()
                    .or_else(|| {
                        kwargs
                            .iter()
                            .find(|(k, _)| k == "start")
                            .map(|(_, v)| v.clone())
                    })
                    .unwrap_or(Value::Int(0));
                let mut acc = start;
                for it in self.iterate(frame, &a0, span)? {
                    acc = self.binary_op(frame, "+", acc, it, span)?;
                }
                Ok(acc)
            }
            "min" | "max" | "sum" | "any" | "all" => {
                let items = if args.len() == 1 {
                    self.iterate(frame, &a0, span)?
                } else {
                    args.clone()
                };
                if name == "sum" && args.len() == 1 && items.iter().any(has_proxy) {
                    // `sum(tensors)` is `0 + t0 + t1 + ...`, which traces like the additions
                    let mut acc = kwargs
                        .iter()
                        .find(|(k, _)| k == "start")
                        .map(|(_, v)| v.clone())
                        .unwrap_or(Value::Int(0));
                    for it in items {
                        acc = self.binary_op(frame, "+", acc, it, span)?;
                    }
                    return Ok(acc);
                }
                let keyed = kwargs.iter().any(|(k, _)| k == "key");
                if matches!(name, "min" | "max") && !keyed && !items.is_empty() {
                    if items.iter().any(has_proxy) {
                        return self.min_max_traced(frame, name, items, span);
                    }
                } else if items.iter().any(has_proxy) {
                    return Ok(Value::unknown(format!("{name}() over traced values")));
                }
                fold_numbers(
                    name,
                    &items,
                    kwargs
                        .iter()
                        .find(|(k, _)| k == "default")
                        .map(|(_, v)| v.clone()),
                )
                .ok_or_else(|| {
                    self.error(
                        frame,
                        span,
                        codes::UNSUPPORTED,
                        format!(
                            "{name}() over values that could not be evaluated{}",
                            why_not_known(&items)
                        ),
                    )
                })
            }
            "divmod" => match (as_int(&a0), args.get(1).and_then(as_int)) {
                (Some(a), Some(b)) if b != 0 => Ok(Value::tuple(vec![
                    Value::Int(a.div_euclid(b)),
                    Value::Int(a.rem_euclid(b)),
                ])),
                _ => Ok(Value::unknown("divmod")),
            },
            "pow" => self.binary_op(
                frame,
                "**",
                a0,
                args.get(1).cloned().unwrap_or(Value::None),
                span,
            ),
            "print" => {
                if let Some(t) = self.tracer.as_mut() {
                    t.event(
                        crate::traced::EventKind::Print,
                        frame.file_id,
                        span,
                        String::new(),
                    );
                }
                Ok(Value::None)
            }
            "super" => {
                let class = frame.class.clone();
                let recv = frame.receiver.clone();
                match (class, recv, args.len()) {
                    (_, _, 2) => match (&args[0], &args[1]) {
                        (Value::Class(c), r) => Ok(Value::Super(Rc::new(r.clone()), c.clone())),
                        _ => Ok(Value::unknown("super() with unknown arguments")),
                    },
                    (Some(c), Some(r), 0) => Ok(Value::Super(Rc::new(r), c)),
                    _ => {
                        Err(self.error(frame, span, codes::UNSUPPORTED, "super() outside a method"))
                    }
                }
            }
            // `type(name, bases, dict)`: a new class.
            "type" if args.len() == 3 => self.type_of_three(frame, args, kwargs, span),
            "type" => Ok(match &a0 {
                Value::Object(o) => o.class.clone(),
                Value::Int(_) => Value::Builtin(Rc::from("int")),
                Value::Float(_) => Value::Builtin(Rc::from("float")),
                Value::Str(_) => Value::Builtin(Rc::from("str")),
                Value::Bool(_) => Value::Builtin(Rc::from("bool")),
                Value::List(_) => Value::Builtin(Rc::from("list")),
                Value::Tuple(_) => Value::Builtin(Rc::from("tuple")),
                Value::Dict(_) => Value::Builtin(Rc::from("dict")),
                Value::None => Value::Builtin(Rc::from("NoneType")),
                Value::Class(c) if args.len() == 1 => c
                    .metaclass
                    .clone()
                    .unwrap_or_else(|| Value::Builtin(Rc::from("type"))),
                _ => Value::unknown("type()"),
            }),
            "callable" => Ok(Value::Bool(matches!(
                a0,
                Value::Function(_)
                    | Value::BoundMethod(..)
                    | Value::Class(_)
                    | Value::Builtin(_)
                    | Value::External(_)
                    | Value::Partial(_)
            ))),
            "iter" => Ok(Value::list(self.iterate(frame, &a0, span)?)),
            "next" => {
                let items = self.iterate(frame, &a0, span)?;
                match items.into_iter().next() {
                    Some(v) => Ok(v),
                    None => args
                        .get(1)
                        .cloned()
                        .ok_or_else(|| self.error(frame, span, codes::RAISED, "StopIteration")),
                }
            }
            "map" => {
                let f = a0.clone();
                let mut lists = Vec::new();
                for a in &args[1..] {
                    lists.push(self.iterate(frame, a, span)?);
                }
                let n = lists.iter().map(Vec::len).min().unwrap_or(0);
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    out.push(self.call_value(
                        frame,
                        &f,
                        lists.iter().map(|l| l[i].clone()).collect(),
                        vec![],
                        span,
                    )?);
                }
                Ok(Value::list(out))
            }
            "filter" => {
                let items = self.iterate(frame, args.get(1).unwrap_or(&Value::None), span)?;
                let mut out = Vec::new();
                for it in items {
                    let keep = if matches!(a0, Value::None) {
                        it.clone()
                    } else {
                        self.call_value(frame, &a0, vec![it.clone()], vec![], span)?
                    };
                    if let Truth::Known(true) = self.truth(frame, &keep, span)? {
                        out.push(it);
                    }
                }
                Ok(Value::list(out))
            }
            "_single" | "_pair" | "_triple" | "_quadruple" | "_ntuple" | "_tuple" | "_is_tuple"
            | "_prod" | "_map_float" | "_is_module" | "_shape" | "_uninitialized" => {
                Ok(catalog_helper(name, &args))
            }
            "dir" if matches!(a0, Value::Class(_) | Value::Object(_)) => Ok(self.dir(&a0)),
            // `cls.from_config = classmethod(from_config)`: the function, bound the other way.
            "classmethod" | "staticmethod" if matches!(a0, Value::Function(_)) => {
                let Value::Function(f) = &a0 else {
                    unreachable!()
                };
                let kind = if name == "classmethod" {
                    FnKind::ClassMethod
                } else {
                    FnKind::StaticMethod
                };
                Ok(Value::Function(Rc::new(f.with_kind(kind))))
            }
            // `vars(obj)`: the instance's attributes, as a dict of them now.
            "vars" if args.len() == 1 => match &a0 {
                Value::Object(o) if !o.is_module() => Ok(o.dict_snapshot()),
                Value::Class(_) => self.get_attr(frame, &a0, "__dict__", span),
                _ => Ok(Value::unknown("vars()")),
            },
            // `label = property(get_label, set_label)`: the getter marked as a property, its
            // setter recorded as `@label.setter` records it.
            "property" if matches!(a0, Value::Function(_)) => {
                let Value::Function(getter) = &a0 else {
                    unreachable!()
                };
                let getter = Rc::new(getter.with_kind(FnKind::Property));
                let setter = args
                    .get(1)
                    .or_else(|| kwargs.iter().find(|(k, _)| k == "fset").map(|(_, v)| v));
                if let Some(Value::Function(set)) = setter {
                    self.property_setters
                        .insert((getter.file_id, getter.span), set.clone());
                }
                Ok(Value::Function(getter))
            }
            "id" | "hash" | "vars" | "dir" | "globals" | "locals" | "format" | "ord" | "chr"
            | "open" | "input" | "object" | "slice" | "property" | "staticmethod"
            | "classmethod" => {
                if name == "slice" {
                    let mut parts = [Value::None, Value::None, Value::None];
                    match args.len() {
                        1 => parts[1] = a0,
                        n => {
                            for (i, a) in args.into_iter().take(3.min(n)).enumerate() {
                                parts[i] = a;
                            }
                        }
                    }
                    return Ok(Value::Slice(Rc::new(parts)));
                }
                Ok(Value::unknown(format!("{name}()")))
            }
            // Exception constructors: the value only matters to `raise`.
            exc if exc.ends_with("Error")
                || exc.ends_with("Exception")
                || exc.ends_with("Warning")
                || exc == "StopIteration" =>
            {
                Ok(self.exception_object(Value::Builtin(Rc::from(exc)), args.clone()))
            }
            _ => Ok(Value::unknown(format!("{name}()"))),
        }
    }

    /// `int(x)`, `float(x)`, `bool(x)`: on traced tensors these read data (a graph break).
    /// `min(a, b)` / `max(sizes)` with traced items, as Python computes it: each item compared
    /// with the best so far (`item < best` for min, `>` for max), the first best kept. Sizes
    /// read off shapes are specialised, so the comparisons are decided; one that is not (a
    /// tensor's data) leaves the result unknown.
    fn min_max_traced(
        &mut self,
        frame: &Frame,
        name: &str,
        items: Vec<Value>,
        span: Span,
    ) -> EResult<Value> {
        let op = if name == "min" { "<" } else { ">" };
        let mut items = items.into_iter();
        let mut best = items.next().expect("min/max of at least one item");
        for item in items {
            let better = self.compare(frame, op, item.clone(), best.clone(), span)?;
            match self.truth(frame, &better, span)? {
                Truth::Known(true) => best = item,
                Truth::Known(false) => {}
                _ => return Ok(Value::unknown(format!("{name}() over traced values"))),
            }
        }
        Ok(best)
    }

    fn convert(
        &mut self,
        frame: &Frame,
        name: &str,
        v: &Value,
        nargs: usize,
        span: Span,
    ) -> EResult<Value> {
        if nargs == 0 {
            return Ok(match name {
                "int" => Value::Int(0),
                "float" => Value::Float(0.0),
                _ => Value::Bool(false),
            });
        }
        match v {
            Value::Proxy(_) => {
                if let Some(t) = self.tracer.as_mut() {
                    t.event(
                        crate::traced::EventKind::Convert,
                        frame.file_id,
                        span,
                        name.to_string(),
                    );
                }
                let out = self.trace_function(
                    frame,
                    &format!("builtins.{name}"),
                    vec![v.clone()],
                    vec![],
                    span,
                )?;
                // The result is a Python number read from the data, not a tensor: branching on it
                // later is plain Python (the break already happened here).
                if let (Value::Proxy(n), Some(t)) = (&out, self.tracer.as_mut()) {
                    let s = match name {
                        "int" => Scalar::Int(None),
                        "float" => Scalar::Float(None),
                        _ => Scalar::Bool(None),
                    };
                    t.graph.node_mut(*n).meta = Meta::Scalar(s, ScalarOrigin::Data);
                }
                Ok(out)
            }
            // `int("x1")`: not a decimal literal at all, which Python refuses.
            Value::Str(s)
                if name == "int"
                    && nargs == 1
                    && !s.trim().is_empty()
                    && !s
                        .trim()
                        .chars()
                        .all(|c| c.is_ascii_digit() || "+-_".contains(c)) =>
            {
                Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!("ValueError: invalid literal for int() with base 10: {s:?}"),
                ))
            }
            _ => Ok(match (name, v) {
                ("int", Value::Int(i)) => Value::Int(*i),
                ("int", Value::Float(f)) => Value::Int(f.trunc() as i64),
                ("int", Value::Bool(b)) => Value::Int(*b as i64),
                ("int", Value::Str(s)) => s
                    .trim()
                    .parse()
                    .map(Value::Int)
                    .unwrap_or_else(|_| Value::unknown("int()")),
                ("float", Value::Int(i)) => Value::Float(*i as f64),
                ("float", Value::Float(f)) => Value::Float(*f),
                ("float", Value::Bool(b)) => Value::Float(*b as i64 as f64),
                ("float", Value::Str(s)) => match s.trim() {
                    "inf" => Value::Float(f64::INFINITY),
                    "-inf" => Value::Float(f64::NEG_INFINITY),
                    "nan" => Value::Float(f64::NAN),
                    t => t
                        .parse()
                        .map(Value::Float)
                        .unwrap_or_else(|_| Value::unknown("float()")),
                },
                ("bool", other) => match self.truth(frame, other, span)? {
                    Truth::Known(b) => Value::Bool(b),
                    _ => Value::unknown("bool()"),
                },
                _ => Value::unknown(format!("{name}()")),
            }),
        }
    }

    pub fn isinstance(&mut self, v: &Value, cls: &Value) -> Value {
        let targets: Vec<Value> = match cls {
            Value::Tuple(t) => t.to_vec(),
            other => vec![other.clone()],
        };
        let mut unknown = false;
        for t in &targets {
            let r = match (v, t) {
                (Value::Unknown(_), _) | (_, Value::Unknown(_)) => None,
                (Value::Int(_), Value::Builtin(b)) => Some(&**b == "int"),
                (Value::Bool(_), Value::Builtin(b)) => Some(&**b == "bool" || &**b == "int"),
                (Value::Float(_), Value::Builtin(b)) => Some(&**b == "float"),
                (Value::Str(_), Value::Builtin(b)) => Some(&**b == "str"),
                (Value::Tuple(_), Value::Builtin(b)) => Some(&**b == "tuple"),
                (Value::List(_), Value::Builtin(b)) => Some(&**b == "list"),
                (Value::Dict(_), Value::Builtin(b)) => Some(&**b == "dict"),
                (Value::None, Value::Builtin(b)) => Some(matches!(&**b, "NoneType" | "object")),
                (Value::None, _) => Some(false),
                (
                    Value::Tuple(_) | Value::List(_) | Value::Dict(_) | Value::Str(_),
                    Value::External(p),
                ) if p.starts_with("collections.abc.") || p.starts_with("typing.") => {
                    let abc = p.rsplit('.').next().unwrap_or("");
                    Some(match v {
                        Value::Dict(_) => matches!(
                            abc,
                            "Iterable"
                                | "Mapping"
                                | "MutableMapping"
                                | "Collection"
                                | "Container"
                                | "Sized"
                                | "Dict"
                        ),
                        Value::Str(_) | Value::Tuple(_) => matches!(
                            abc,
                            "Iterable"
                                | "Sequence"
                                | "Collection"
                                | "Container"
                                | "Sized"
                                | "Reversible"
                        ),
                        _ => matches!(
                            abc,
                            "Iterable"
                                | "Sequence"
                                | "MutableSequence"
                                | "Collection"
                                | "Container"
                                | "Sized"
                                | "Reversible"
                                | "List"
                        ),
                    })
                }
                (Value::Int(_) | Value::Float(_) | Value::Bool(_), Value::External(p))
                    if p.starts_with("collections.abc.") =>
                {
                    Some(false)
                }
                (Value::Partial(_), Value::External(p)) => Some(&**p == "functools.partial"),
                // An external class (`nn.BatchNorm2d`) is neither a function nor a partial.
                (Value::External(c), Value::External(p))
                    if matches!(
                        &**p,
                        "types.FunctionType"
                            | "types.LambdaType"
                            | "types.MethodType"
                            | "functools.partial"
                    ) && c
                        .rsplit('.')
                        .next()
                        .and_then(|s| s.chars().next())
                        .is_some_and(char::is_uppercase) =>
                {
                    Some(false)
                }
                (Value::Function(_), Value::External(p)) => {
                    Some(matches!(&**p, "types.FunctionType" | "types.LambdaType"))
                }
                (Value::BoundMethod(..), Value::External(p)) => Some(&**p == "types.MethodType"),
                // A class is an instance of `type` (and `object`), never of a value type.
                (Value::Class(_), Value::Builtin(b)) => Some(matches!(&**b, "type" | "object")),
                // ... and of its metaclass and the metaclass's bases.
                (Value::Class(c), Value::Class(_)) if c.metaclass.is_some() => {
                    let meta = c.metaclass.clone().expect("checked");
                    Some(
                        matches!(&meta, Value::Class(m) if m.mro.borrow().iter().any(|k| same_class(k, t))),
                    )
                }
                (Value::External(c), Value::Builtin(b)) if &**b == "type" => {
                    // torch.nn classes and other external classes are types; their functions are not.
                    Some(
                        c.rsplit('.')
                            .next()
                            .and_then(|s| s.chars().next())
                            .is_some_and(char::is_uppercase),
                    )
                }
                // Names outside the project (classes, functions, modules) are not builtin values.
                (Value::External(_), Value::Builtin(b))
                    if matches!(
                        &**b,
                        "str"
                            | "int"
                            | "float"
                            | "bool"
                            | "list"
                            | "tuple"
                            | "dict"
                            | "set"
                            | "frozenset"
                    ) =>
                {
                    Some(false)
                }
                // A property read from its class is its getter, marked as one.
                (Value::Function(f), Value::Builtin(b)) if &**b == "property" => {
                    Some(f.kind == FnKind::Property)
                }
                (
                    Value::Function(_)
                    | Value::BoundMethod(..)
                    | Value::Partial(_)
                    | Value::Builtin(_)
                    | Value::Class(_),
                    Value::Builtin(_) | Value::External(_) | Value::Class(_),
                ) => Some(false),
                (Value::Proxy(_) | Value::TensorConst(_), Value::External(p)) => {
                    Some(matches!(&**p, "torch.Tensor" | "torch.nn.Parameter"))
                }
                (Value::Param(_), Value::External(p)) => Some(matches!(
                    &**p,
                    "torch.Tensor" | "torch.nn.Parameter" | "torch.nn.parameter.Parameter"
                )),
                (Value::Object(o), t) => {
                    let mro = match &o.class {
                        Value::Class(c) => super::attr::full_mro(&c.mro.borrow()),
                        // a builtin exception's instance is one of its bases' too
                        b @ Value::Builtin(_) => super::attr::full_mro(std::slice::from_ref(b)),
                        other => vec![other.clone()],
                    };
                    let leaf_hit = match (&o.kind, t) {
                        (ObjKind::Leaf(name) | ObjKind::Container(name), Value::External(p)) => {
                            p.rsplit('.').next() == Some(name.as_str()) || &**p == "torch.nn.Module"
                        }
                        (ObjKind::Module, Value::External(p)) => &**p == "torch.nn.Module",
                        _ => false,
                    };
                    // an `OrderedDict` (subclass) is a dict
                    let builtin_base = |m: &Value| match (m, t) {
                        (Value::Builtin(x), Value::Builtin(y)) => x == y,
                        (Value::External(p), Value::Builtin(y)) => {
                            &**y == "dict"
                                && matches!(&**p, "collections.OrderedDict" | "typing.OrderedDict")
                        }
                        _ => false,
                    };
                    Some(leaf_hit || mro.iter().any(|m| same_class(m, t) || builtin_base(m)))
                }
                (
                    Value::Int(_)
                    | Value::Float(_)
                    | Value::Str(_)
                    | Value::Tuple(_)
                    | Value::List(_)
                    | Value::Dict(_)
                    | Value::Bool(_),
                    _,
                ) => Some(false),
                (Value::Proxy(_), _) => Some(false),
                _ => None,
            };
            match r {
                Some(true) => return Value::Bool(true),
                Some(false) => {}
                None => unknown = true,
            }
        }
        if unknown {
            Value::unknown("isinstance")
        } else {
            Value::Bool(false)
        }
    }

    pub fn binary_op(
        &mut self,
        frame: &Frame,
        sym: &str,
        a: Value,
        b: Value,
        span: Span,
    ) -> EResult<Value> {
        let Some(name) = binop_name(sym) else {
            return Err(self.error(frame, span, codes::UNSUPPORTED, format!("operator `{sym}`")));
        };
        if self.tracing()
            && (has_proxy(&a) || has_proxy(&b))
            && matches!((&a, &b), (Value::Proxy(_), _) | (_, Value::Proxy(_)))
        {
            return self.trace_function(
                frame,
                &format!("operator.{name}"),
                vec![a, b],
                vec![],
                span,
            );
        }
        if let Some(r) = self.binary_dunder(frame, name, &a, &b, span) {
            return r;
        }
        if name == "or_" {
            if let Some(r) = self.type_union(frame, &a, &b, span) {
                return r;
            }
        }
        use Value::*;
        Ok(match (name, &a, &b) {
            (_, Unknown(_), _) | (_, _, Unknown(_)) => {
                Value::unknown("arithmetic on an unknown value")
            }
            ("add", Str(x), Str(y)) => Value::str(&format!("{x}{y}")),
            ("add", Tuple(x), Tuple(y)) => {
                Value::tuple(x.iter().chain(y.iter()).cloned().collect())
            }
            ("add", List(x), List(y)) => Value::list(
                x.borrow()
                    .iter()
                    .chain(y.borrow().iter())
                    .cloned()
                    .collect(),
            ),
            ("mul", List(x), Int(n)) | ("mul", Int(n), List(x)) => {
                let v = x.borrow();
                let n = (*n).max(0) as usize;
                if n.saturating_mul(v.len()) > self.limits.max_collection {
                    return Err(self.error(frame, span, codes::BUDGET, "list too large"));
                }
                Value::list((0..n).flat_map(|_| v.iter().cloned()).collect())
            }
            ("mul", Tuple(x), Int(n)) | ("mul", Int(n), Tuple(x)) => {
                let n = (*n).max(0) as usize;
                if n.saturating_mul(x.len()) > self.limits.max_collection {
                    return Err(self.error(frame, span, codes::BUDGET, "tuple too large"));
                }
                Value::tuple((0..n).flat_map(|_| x.iter().cloned()).collect())
            }
            ("mod", Str(fmt), _) => percent_format(fmt, &b)
                .map(|s| Value::str(&s))
                .unwrap_or_else(|| Value::unknown("string formatting")),
            ("eq", _, _) | ("ne", _, _) => match a.py_eq(&b) {
                Some(e) => Bool(e == (name == "eq")),
                Option::None => Value::unknown("comparison"),
            },
            ("lt" | "le" | "gt" | "ge", Str(x), Str(y)) => Bool(match name {
                "lt" => x < y,
                "le" => x <= y,
                "gt" => x > y,
                _ => x >= y,
            }),
            ("lt" | "le" | "gt" | "ge", Tuple(_), Tuple(_))
            | ("lt" | "le" | "gt" | "ge", List(_), List(_)) => match a.py_order(&b) {
                Some(order) => Bool(match name {
                    "lt" => order.is_lt(),
                    "le" => order.is_le(),
                    "gt" => order.is_gt(),
                    _ => order.is_ge(),
                }),
                Option::None => Value::unknown("comparison"),
            },
            ("and_" | "or_" | "xor", Bool(x), Bool(y)) => Bool(match name {
                "and_" => x & y,
                "or_" => x | y,
                _ => x ^ y,
            }),
            ("or_", Dict(x), Dict(y)) => {
                let mut items = DictBuilder::from_entries(x.borrow().clone());
                for (k, v) in y.borrow().iter() {
                    items.insert(k.clone(), v.clone());
                }
                Value::Dict(Rc::new(RefCell::new(items.finish())))
            }
            // Sets are lists of distinct items here (lists themselves have no `|`, `&`, `-`).
            ("and_" | "or_" | "xor" | "sub", List(x), List(y)) => {
                let (x, y) = (x.borrow().clone(), y.borrow().clone());
                let has = |v: &[Value], k: &Value| v.iter().any(|i| i.py_eq(k) == Some(true));
                let items: Vec<Value> = match name {
                    "or_" => x.into_iter().chain(y).collect(),
                    "and_" => x.into_iter().filter(|k| has(&y, k)).collect(),
                    "sub" => x.into_iter().filter(|k| !has(&y, k)).collect(),
                    _ => {
                        let only_x = x.iter().filter(|k| !has(&y, k)).cloned();
                        let only_y = y.iter().filter(|k| !has(&x, k)).cloned();
                        only_x.chain(only_y).collect()
                    }
                };
                Value::list(set_of(items))
            }
            ("and_" | "or_" | "xor" | "lshift" | "rshift", _, _) => {
                match (as_int(&a), as_int(&b)) {
                    (Some(x), Some(y)) => Int(match name {
                        "and_" => x & y,
                        "or_" => x | y,
                        "xor" => x ^ y,
                        "lshift" => x.checked_shl(y as u32).unwrap_or(0),
                        _ => x.checked_shr(y as u32).unwrap_or(0),
                    }),
                    _ => Value::unknown("bitwise operation"),
                }
            }
            _ => match (num(&a), num(&b)) {
                (Some(x), Some(y)) => {
                    let origin = crate::shapes::ScalarOrigin::Const;
                    match crate::shapes::rules::scalar_binary(name, &x, &y, origin) {
                        crate::shapes::Meta::Scalar(crate::shapes::Scalar::Int(Some(i)), _) => {
                            Int(i)
                        }
                        crate::shapes::Meta::Scalar(crate::shapes::Scalar::Float(Some(f)), _) => {
                            Float(f)
                        }
                        crate::shapes::Meta::Scalar(crate::shapes::Scalar::Bool(Some(v)), _) => {
                            Bool(v)
                        }
                        _ => {
                            if matches!(name, "truediv" | "floordiv" | "mod")
                                && as_f64(&b) == Some(0.0)
                            {
                                return Err(self.error(
                                    frame,
                                    span,
                                    codes::RAISED,
                                    "ZeroDivisionError: division by zero",
                                ));
                            }
                            Value::unknown(format!("`{sym}` on these values"))
                        }
                    }
                }
                _ => match (&a, &b) {
                    (TensorConst(_) | Param(_), _) | (_, TensorConst(_) | Param(_)) => {
                        if let Some(v) = super::stdlib::tensor_const::binary(name, &a, &b) {
                            return Ok(v);
                        }
                        let t = if matches!(a, TensorConst(_) | Param(_)) {
                            &a
                        } else {
                            &b
                        };
                        // Values not computed: the shape and dtype torch broadcasts to.
                        match t {
                            TensorConst(_) => {
                                let target = format!("operator.{name}");
                                let op = crate::graph::OpKey::Function(&target).name();
                                super::stdlib::tensor_const::shaped(
                                    op,
                                    &[a.clone(), b.clone()],
                                    &[],
                                )
                            }
                            _ => t.clone(),
                        }
                    }
                    _ => Value::unknown(format!(
                        "`{sym}` between {} and {}",
                        a.type_name(),
                        b.type_name()
                    )),
                },
            },
        })
    }

    pub fn unary_op(&mut self, frame: &Frame, sym: &str, v: Value, span: Span) -> EResult<Value> {
        if let Value::Proxy(_) = v {
            let target = match sym {
                "-" => "operator.neg",
                "+" => "operator.pos",
                _ => "operator.invert",
            };
            return self.trace_function(frame, target, vec![v], vec![], span);
        }
        Ok(match (sym, &v) {
            ("-", Value::Int(i)) => Value::Int(-i),
            ("-", Value::Float(f)) => Value::Float(-f),
            ("+", Value::Int(_) | Value::Float(_)) => v,
            ("~", Value::Int(i)) => Value::Int(!i),
            ("-", Value::Bool(b)) => Value::Int(-(*b as i64)),
            _ => Value::unknown("unary operation"),
        })
    }

    /// The elements `for x in v` visits.
    pub fn iterate(&mut self, frame: &Frame, v: &Value, span: Span) -> EResult<Vec<Value>> {
        match v {
            Value::Tuple(t) => Ok(t.to_vec()),
            Value::List(l) => Ok(l.borrow().clone()),
            Value::Dict(d) => Ok(d.borrow().iter().map(|(k, _)| k.clone()).collect()),
            Value::Str(s) => Ok(s.chars().map(|c| Value::str(&c.to_string())).collect()),
            // An enum class iterates over its members, aliases left out.
            Value::Class(c) if super::stdlib::enums::is_enum_class(c) => {
                Ok(super::stdlib::enums::members(c)
                    .into_iter()
                    .map(|(_, m)| m)
                    .collect())
            }
            Value::Object(o)
                if o.kind == ObjKind::Plain
                    && self.class_lookup(&o.class, "__iter__").is_none()
                    && super::objects::dict_base_of(&o.class).is_some() =>
            {
                let keys = super::objects::dict_base_items(o).unwrap_or_default();
                Ok(keys.into_iter().map(|(k, _)| k).collect())
            }
            Value::Object(o) => match &o.kind {
                ObjKind::Container(kind) if kind == "ModuleDict" => Ok(o
                    .children()
                    .into_iter()
                    .map(|(k, _)| Value::str(&k))
                    .collect()),
                ObjKind::Container(_) => Ok(o
                    .children()
                    .into_iter()
                    .map(|(_, c)| Value::Object(c))
                    .collect()),
                _ => match self.class_lookup(&o.class, "__iter__") {
                    Some(Value::Function(f)) => {
                        let r =
                            self.call_function(frame, &f, Some(v.clone()), vec![], vec![], span)?;
                        self.iterate(frame, &r, span)
                    }
                    // A dict subclass without an `__iter__` of its own (diffusers'
                    // `FrozenDict(OrderedDict)`) iterates over its keys, as dict's does.
                    _ => match super::objects::dict_subclass_items(o) {
                        Some(items) => Ok(items.into_iter().map(|(k, _)| k).collect()),
                        None => Err(self.error(
                            frame,
                            span,
                            codes::UNSUPPORTED,
                            format!("cannot iterate over `{}`", o.class_name()),
                        )),
                    },
                },
            },
            Value::Proxy(n) => {
                // torch.fx unpacks a traced value by indexing it: one getitem per element.
                let len = self.tracer.as_ref().and_then(|t| match t.meta(*n) {
                    crate::shapes::Meta::Seq(s) => Some(s.len()),
                    crate::shapes::Meta::Size(s) => Some(s.len()),
                    crate::shapes::Meta::Tensor(t) => t
                        .shape
                        .as_ref()
                        .and_then(|s| s.first())
                        .and_then(|d| d.known())
                        .map(|d| d as usize),
                    _ => None,
                });
                match len {
                    Some(n) => (0..n)
                        .map(|i| self.get_item(frame, v, Value::Int(i as i64), span))
                        .collect(),
                    None => Err(self.error(
                        frame,
                        span,
                        codes::UNSUPPORTED,
                        "iterating a traced value of unknown length",
                    )),
                }
            }
            // A constant tensor iterates over its first dimension.
            Value::TensorConst(t) if t.shape.as_ref().is_some_and(|s| !s.is_empty()) => {
                let n = t.shape.as_ref().map(|s| s[0]).unwrap_or(0).max(0);
                if n as usize > self.limits.max_collection {
                    return Err(self.error(
                        frame,
                        span,
                        codes::BUDGET,
                        "tensor too long to iterate",
                    ));
                }
                (0..n)
                    .map(|i| match t.shape.as_deref() {
                        Some([_]) if t.data.is_some() => {
                            self.get_item(frame, v, Value::Int(i), span)
                        }
                        shape => Ok(Value::TensorConst(Rc::new(
                            super::value::TensorConst::of_shape(
                                shape.map(|s| s[1..].to_vec()),
                                t.dtype,
                            ),
                        ))),
                    })
                    .collect()
            }
            Value::Unknown(u) => Err(self.error(
                frame,
                span,
                codes::UNSUPPORTED,
                format!("cannot iterate over an unknown value ({})", u.reason),
            )),
            other => Err(self.error(
                frame,
                span,
                codes::RAISED,
                format!("`{}` is not iterable", other.type_name()),
            )),
        }
    }

    /// Unpacking for `a, b = v`: a traced value of unknown length unpacks to exactly `n`.
    pub fn unpack(
        &mut self,
        frame: &Frame,
        v: &Value,
        n: usize,
        starred: bool,
        span: Span,
    ) -> EResult<Vec<Value>> {
        if let Value::Proxy(_) = v {
            let known = self.iterate(frame, v, span);
            return match known {
                Ok(items) if items.len() == n || starred => Ok(items),
                Ok(items) => Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!("cannot unpack {} values into {n}", items.len()),
                )),
                Err(_) if !starred => (0..n)
                    .map(|i| self.get_item(frame, v, Value::Int(i as i64), span))
                    .collect(),
                Err(e) => Err(e),
            };
        }
        if let Value::Unknown(u) = v {
            return Ok((0..n).map(|_| Value::unknown(u.reason.clone())).collect());
        }
        let items = self.iterate(frame, v, span)?;
        if !starred && items.len() != n {
            return Err(self.error(
                frame,
                span,
                codes::RAISED,
                format!("cannot unpack {} values into {n}", items.len()),
            ));
        }
        Ok(items)
    }

    pub fn get_item(
        &mut self,
        frame: &Frame,
        obj: &Value,
        key: Value,
        span: Span,
    ) -> EResult<Value> {
        if let Value::InstanceDict(o) = obj {
            // an augmented item assignment reads its target first: `obj.__dict__[k] += 1`
            return self.call_instance_dict_method(
                frame,
                o,
                "__getitem__",
                vec![key],
                vec![],
                span,
            );
        }
        if let Value::Proxy(_) = obj {
            return self.trace_function(
                frame,
                "operator.getitem",
                vec![obj.clone(), key],
                vec![],
                span,
            );
        }
        if let (Value::Param(p), true) = (obj, self.tracing()) {
            if let Some(n) = self
                .tracer
                .as_mut()
                .and_then(|t| t.buffer_use(p, frame.file_id, span))
            {
                return self.trace_function(
                    frame,
                    "operator.getitem",
                    vec![Value::Proxy(n), key],
                    vec![],
                    span,
                );
            }
        }
        if has_proxy(&key) && self.tracing() {
            if let Value::TensorConst(_) | Value::Param(_) = obj {
                return self.trace_function(
                    frame,
                    "operator.getitem",
                    vec![obj.clone(), key],
                    vec![],
                    span,
                );
            }
        }
        match (obj, &key) {
            (Value::Tuple(_) | Value::List(_), Value::Slice(s)) => {
                let items = self.iterate(frame, obj, span)?;
                let picked = slice_items(&items, s).ok_or_else(|| {
                    self.error(frame, span, codes::UNSUPPORTED, "slice with unknown bounds")
                })?;
                Ok(if matches!(obj, Value::Tuple(_)) {
                    Value::tuple(picked)
                } else {
                    Value::list(picked)
                })
            }
            (Value::Str(text), Value::Slice(s)) => {
                let chars: Vec<Value> = text.chars().map(|c| Value::str(&c.to_string())).collect();
                let picked = slice_items(&chars, s).ok_or_else(|| {
                    self.error(frame, span, codes::UNSUPPORTED, "slice with unknown bounds")
                })?;
                let joined: String = picked
                    .iter()
                    .filter_map(|c| match c {
                        Value::Str(c) => Some(&**c),
                        _ => None,
                    })
                    .collect();
                Ok(Value::str(&joined))
            }
            (Value::Tuple(_) | Value::List(_) | Value::Str(_), k) => {
                let items = self.iterate(frame, obj, span)?;
                let Some(i) = as_int(k) else {
                    return Ok(Value::unknown("index could not be evaluated"));
                };
                let idx = if i < 0 { i + items.len() as i64 } else { i };
                items.get(idx as usize).cloned().ok_or_else(|| {
                    self.error(
                        frame,
                        span,
                        codes::RAISED,
                        format!("index {i} out of range"),
                    )
                })
            }
            (Value::Dict(d), k) => {
                let found = d
                    .borrow()
                    .iter()
                    .find(|(kk, _)| kk.py_eq(k) == Some(true))
                    .map(|(_, v)| v.clone());
                match found {
                    Some(v) => Ok(v),
                    None if d.borrow().iter().any(|(kk, _)| kk.py_eq(k).is_none())
                        || k.is_unknown() =>
                    {
                        Ok(Value::unknown("dict lookup"))
                    }
                    None => match self.fill_missing(frame, d, k.clone(), span) {
                        Some(r) => r,
                        None => {
                            Err(self.error(frame, span, codes::RAISED, format!("KeyError: {k:?}")))
                        }
                    },
                }
            }
            (Value::Object(o), k) if o.is_module() => self.module_item(frame, o, k, span),
            (Value::Object(o), k) => match self.class_lookup(&o.class, "__getitem__") {
                Some(Value::Function(f)) => {
                    self.call_function(frame, &f, Some(obj.clone()), vec![k.clone()], vec![], span)
                }
                // A dict subclass that does not override `__getitem__` has dict's.
                _ if super::objects::dict_base_of(&o.class).is_some() => {
                    let o = o.clone();
                    self.dict_base_method(frame, &o, "__getitem__", vec![k.clone()], vec![], span)
                }
                _ => Ok(Value::unknown("subscript")),
            },
            // The modules already imported, by name (a registry decorator reads its caller's).
            (Value::External(p), Value::Str(name)) if &**p == "sys.modules" => {
                Ok(self.import_module(name))
            }
            // `List[int]`, `Optional[Tensor]`: typing subscripts in annotations and casts.
            (Value::External(p), k) => match self.typing_subscript(frame, p, k, span) {
                Some(alias) => alias,
                None => Ok(Value::External(p.clone())),
            },
            // `Color["RED"]`: an enum's member by name.
            (Value::Class(c), Value::Str(name)) if super::stdlib::enums::is_enum_class(c) => {
                match super::stdlib::enums::members(c)
                    .into_iter()
                    .find(|(n, _)| n == &**name)
                {
                    Some((_, m)) => Ok(m),
                    None => {
                        Err(self.error(frame, span, codes::RAISED, format!("KeyError: {name:?}")))
                    }
                }
            }
            // `Box[int]` calls the class's `__class_getitem__` (an implicit classmethod).
            (Value::Class(_), k) => match self.class_lookup(obj, "__class_getitem__") {
                Some(Value::Function(f)) => {
                    self.call_function(frame, &f, Some(obj.clone()), vec![k.clone()], vec![], span)
                }
                _ => Ok(obj.clone()),
            },
            // `self.weight[0]` in a constructor: a tensor of the remaining dimensions.
            (Value::Param(p), Value::Int(i)) => match p.shape.as_deref() {
                Some([n, rest @ ..]) if (-n..*n).contains(i) => Ok(Value::TensorConst(Rc::new(
                    super::value::TensorConst::of_shape(Some(rest.to_vec()), p.dtype),
                ))),
                Some([n, ..]) => Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!("IndexError: index {i} is out of bounds for dimension 0 with size {n}"),
                )),
                _ => Ok(Value::TensorConst(Rc::new(
                    super::value::TensorConst::of_shape(None, p.dtype),
                ))),
            },
            (Value::TensorConst(t), _) => match (as_int(&key), &t.data, t.shape.as_deref()) {
                (Some(i), Some(d), Some([n])) if d.len() == *n as usize => {
                    let idx = if i < 0 { i + n } else { i };
                    match d.get(idx as usize).filter(|_| idx >= 0) {
                        Some(&x) => Ok(Value::TensorConst(Rc::new(super::value::TensorConst {
                            shape: Some(vec![]),
                            dtype: t.dtype,
                            data: Some(Rc::from([x])),
                        }))),
                        None => Err(self.error(
                            frame,
                            span,
                            codes::RAISED,
                            format!("IndexError: index {i} is out of bounds for dimension 0 with size {n}"),
                        )),
                    }
                }
                _ => Ok(super::stdlib::tensor_const::shaped(
                    "getitem",
                    &[obj.clone(), key.clone()],
                    &[],
                )),
            },
            (Value::Unknown(u), _) => {
                let path = u
                    .path
                    .as_ref()
                    .and_then(|p| as_int(&key).map(|i| format!("{p}.{i}")));
                Ok(Value::Unknown(Rc::new(super::value::Unknown {
                    reason: u.reason.clone(),
                    path,
                })))
            }
            _ => Ok(Value::unknown(format!("subscript of {}", obj.type_name()))),
        }
    }

    pub fn set_item(
        &mut self,
        frame: &Frame,
        obj: &Value,
        key: Value,
        v: Value,
        span: Span,
    ) -> EResult<()> {
        match (obj, &key) {
            (Value::InstanceDict(o), _) => {
                self.call_instance_dict_method(
                    frame,
                    o,
                    "__setitem__",
                    vec![key, v],
                    vec![],
                    span,
                )?;
                Ok(())
            }
            (Value::Proxy(_), _) => {
                self.trace_function(
                    frame,
                    "operator.setitem",
                    vec![obj.clone(), key, v],
                    vec![],
                    span,
                )?;
                Ok(())
            }
            (Value::List(l), k) => {
                let len = l.borrow().len() as i64;
                match as_int(k) {
                    Some(i) => {
                        let idx = if i < 0 { i + len } else { i };
                        if idx < 0 || idx >= len {
                            return Err(self.error(
                                frame,
                                span,
                                codes::RAISED,
                                "list assignment index out of range",
                            ));
                        }
                        l.borrow_mut()[idx as usize] = v;
                        Ok(())
                    }
                    None => Ok(()),
                }
            }
            (Value::Dict(d), _) => {
                super::expr::dict_insert(&mut d.borrow_mut(), key, v);
                Ok(())
            }
            (Value::Object(o), Value::Str(k)) if o.is_module() => {
                o.attrs.borrow_mut().insert(k.to_string(), v);
                Ok(())
            }
            (Value::Object(o), _) => {
                if let Some(f) = self.user_method(&o.class, "__setitem__") {
                    let args = vec![key, v];
                    self.call_function(frame, &f, Some(obj.clone()), args, vec![], span)?;
                } else if let Some(base) = super::objects::dict_base_of(&o.class) {
                    let recv = Rc::new(obj.clone());
                    let args = vec![key, v];
                    self.call_super_external(
                        frame,
                        &recv,
                        &base,
                        "__setitem__",
                        args,
                        vec![],
                        span,
                    )?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// `del obj[key]`: a list's or dict's entry (as its `pop` removes it, raising where that
    /// raises), or a class's `__delitem__`.
    pub fn del_item(&mut self, frame: &Frame, obj: &Value, key: Value, span: Span) -> EResult<()> {
        match obj {
            Value::InstanceDict(o) => {
                self.call_instance_dict_method(frame, o, "__delitem__", vec![key], vec![], span)?;
                Ok(())
            }
            Value::List(_) | Value::Dict(_) => {
                let recv = Rc::new(obj.clone());
                self.call_method(frame, &recv, "pop", vec![key], vec![], span)?;
                Ok(())
            }
            Value::Object(o) => {
                if let Some(f) = self.user_method(&o.class, "__delitem__") {
                    self.call_function(frame, &f, Some(obj.clone()), vec![key], vec![], span)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// An operator a Python class defines (`__eq__`, `__add__`, or the right operand's
    /// `__radd__`), on plain instances; None when neither operand's class defines it.
    fn binary_dunder(
        &mut self,
        frame: &Frame,
        name: &str,
        a: &Value,
        b: &Value,
        span: Span,
    ) -> Option<EResult<Value>> {
        let plain = |v: &Value| matches!(v, Value::Object(o) if !o.is_module());
        let own = format!("__{}__", name.trim_end_matches('_'));
        if plain(a) {
            if let Value::Object(o) = a {
                if let Some(f) = self.user_method(&o.class, &own) {
                    let args = vec![b.clone()];
                    return Some(self.call_function(
                        frame,
                        &f,
                        Some(a.clone()),
                        args,
                        vec![],
                        span,
                    ));
                }
                // `object.__ne__` inverts `__eq__`.
                if let (Some(eq), "ne") = (self.user_method(&o.class, "__eq__"), name) {
                    let args = vec![b.clone()];
                    return Some(
                        self.call_function(frame, &eq, Some(a.clone()), args, vec![], span)
                            .map(|v| match v {
                                Value::Bool(x) => Value::Bool(!x),
                                _ => Value::unknown("comparison"),
                            }),
                    );
                }
            }
        }
        if plain(b) {
            let reflected = match name {
                "eq" | "ne" => own.clone(),
                "lt" => "__gt__".into(),
                "gt" => "__lt__".into(),
                "le" => "__ge__".into(),
                "ge" => "__le__".into(),
                _ => format!("__r{}__", name.trim_end_matches('_')),
            };
            if let Value::Object(o) = b {
                if let Some(f) = self.user_method(&o.class, &reflected) {
                    let args = vec![a.clone()];
                    return Some(self.call_function(
                        frame,
                        &f,
                        Some(b.clone()),
                        args,
                        vec![],
                        span,
                    ));
                }
            }
        }
        None
    }

    /// Attribute lookup along a class's MRO (user classes only).
    pub fn class_lookup(&self, class: &Value, name: &str) -> Option<Value> {
        match class {
            Value::Class(c) => {
                for m in c.mro.borrow().iter() {
                    match m {
                        Value::Class(k) => {
                            if let Some(v) = k.ns.borrow().get(name) {
                                return Some(v.clone());
                            }
                        }
                        Value::External(path) => {
                            if let Some(v) = self.external_class_attr(path, name) {
                                return Some(v);
                            }
                        }
                        _ => {}
                    }
                }
                None
            }
            Value::External(path) => self.external_class_attr(path, name),
            _ => None,
        }
    }

    /// What the program assigned to `name` on the external class `path` or, for a torch.nn
    /// layer, on `torch.nn.Module` (the one base of theirs programs patch).
    pub(crate) fn external_class_attr(&self, path: &str, name: &str) -> Option<Value> {
        if self.external_class_attrs.is_empty() {
            return None;
        }
        let on = |p: &str| {
            self.external_class_attrs
                .get(p)
                .and_then(|attrs| attrs.get(name).cloned())
        };
        on(path).or_else(|| {
            (path != TORCH_NN_MODULE && crate::catalog::get().module(path).is_some())
                .then(|| on(TORCH_NN_MODULE))
                .flatten()
        })
    }

    pub fn make_partial(&self, args: Vec<Value>, kwargs: Kwargs) -> Value {
        let mut it = args.into_iter();
        let func = it.next().unwrap_or(Value::None);
        // `partial(partial(f, a=1), b=2)` is `partial(f, a=1, b=2)`, as functools flattens it.
        if let Value::Partial(inner) = &func {
            let mut all_args = inner.args.clone();
            all_args.extend(it);
            let mut all_kwargs = inner.kwargs.clone();
            for (k, v) in kwargs {
                all_kwargs.retain(|(kk, _)| *kk != k);
                all_kwargs.push((k, v));
            }
            return Value::Partial(Rc::new(Partial {
                func: inner.func.clone(),
                args: all_args,
                kwargs: all_kwargs,
            }));
        }
        Value::Partial(Rc::new(Partial {
            func,
            args: it.collect(),
            kwargs,
        }))
    }
}

/// Whether `f` is decorated with `torch.compiler.disable` / `torch._dynamo.disable` (with or
/// without arguments).
fn compiler_disabled(f: &Function) -> bool {
    let tree = f.file.tree();
    let root = tree.root_node();
    match root.descendant_for_byte_range(f.span.start, f.span.end) {
        Some(node) => compiler_disabled_at(node, &f.file.text),
        None => false,
    }
}

/// Whether the function definition at or around `node` is decorated with
/// `torch.compiler.disable`.
fn compiler_disabled_at(node: Node<'_>, text: &str) -> bool {
    let mut def = node;
    while def.kind_name() != "function_definition" {
        match def.parent() {
            Some(p) => def = p,
            None => return false,
        }
    }
    let Some(decorated) = def
        .parent()
        .filter(|p| p.kind_name() == "decorated_definition")
    else {
        return false;
    };
    let found = crate::syntax::named_children(decorated)
        .filter(|n| n.kind_name() == "decorator")
        .any(|d| {
            let t = crate::syntax::text(d, text).trim_start_matches('@').trim();
            let name = t.split('(').next().unwrap_or("").trim();
            matches!(
                name,
                "torch.compiler.disable" | "torch._dynamo.disable" | "compiler.disable"
            )
        });
    found
}

pub fn same_class(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Class(x), Value::Class(y)) => Rc::ptr_eq(x, y),
        (Value::External(x), Value::External(y)) => {
            x == y
                || x.rsplit('.').next() == y.rsplit('.').next()
                    && x.starts_with("torch.nn")
                    && y.starts_with("torch.nn")
        }
        _ => false,
    }
}

/// A list or tuple (nested or not) of Python ints: what `torch.tensor` makes an int64 tensor of.
pub fn has_only_ints(v: &Value) -> bool {
    let items = match v {
        Value::List(l) => l.borrow().clone(),
        Value::Tuple(t) => t.to_vec(),
        Value::Int(_) => return true,
        _ => return false,
    };
    !items.is_empty() && items.iter().all(has_only_ints)
}

pub fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Bool(b) => Some(*b as i64),
        _ => None,
    }
}

pub fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        Value::Bool(b) => Some(*b as i64 as f64),
        _ => None,
    }
}

fn num(v: &Value) -> Option<crate::shapes::Scalar> {
    use crate::shapes::Scalar;
    match v {
        Value::Int(i) => Some(Scalar::Int(Some(*i))),
        Value::Float(f) => Some(Scalar::Float(Some(*f))),
        Value::Bool(b) => Some(Scalar::Int(Some(*b as i64))),
        _ => None,
    }
}

/// printf-style `"denselayer%d" % (i + 1)` for the simple conversions module names use.
fn percent_format(fmt: &str, args: &Value) -> Option<String> {
    let items: Vec<Value> = match args {
        Value::Tuple(t) => t.to_vec(),
        v => vec![v.clone()],
    };
    let mut it = items.into_iter();
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '%' => out.push('%'),
            'd' | 'i' => out.push_str(&as_int(&it.next()?)?.to_string()),
            's' | 'r' => match it.next()? {
                Value::Str(s) => out.push_str(&s),
                Value::Int(i) => out.push_str(&i.to_string()),
                Value::Float(f) => out.push_str(&format!("{f:?}")),
                _ => return None,
            },
            _ => return None,
        }
    }
    Some(out)
}

fn round_half_even(f: f64) -> f64 {
    let r = f.round();
    if (f - f.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - f.signum()
    } else {
        r
    }
}

fn fold_numbers(name: &str, items: &[Value], default: Option<Value>) -> Option<Value> {
    match name {
        "any" | "all" => {
            let mut acc = name == "all";
            for it in items {
                let b = match it {
                    Value::Bool(b) => *b,
                    Value::Int(i) => *i != 0,
                    Value::None => false,
                    Value::Unknown(_) => return Some(Value::unknown(name)),
                    _ => true,
                };
                acc = if name == "all" { acc && b } else { acc || b };
            }
            Some(Value::Bool(acc))
        }
        "sum" => {
            let mut int_acc: i64 = 0;
            let mut float_acc: Option<f64> = None;
            for it in items {
                match it {
                    Value::Int(i) => int_acc += i,
                    Value::Bool(b) => int_acc += *b as i64,
                    Value::Float(f) => float_acc = Some(float_acc.unwrap_or(0.0) + f),
                    _ => return None,
                }
            }
            Some(match float_acc {
                Some(f) => Value::Float(f + int_acc as f64),
                None => Value::Int(int_acc),
            })
        }
        _ => {
            if items.is_empty() {
                return default;
            }
            let mut best = items[0].clone();
            for it in &items[1..] {
                let (a, b) = (as_f64(&best)?, as_f64(it)?);
                if (name == "max" && b > a) || (name == "min" && b < a) {
                    best = it.clone();
                }
            }
            as_f64(&best)?;
            Some(best)
        }
    }
}

fn slice_items(items: &[Value], s: &[Value; 3]) -> Option<Vec<Value>> {
    let n = items.len() as i64;
    let step = match &s[2] {
        Value::None => 1,
        v => as_int(v)?,
    };
    if step == 0 {
        return None;
    }
    let norm = |v: &Value, dflt: i64| -> Option<i64> {
        match v {
            Value::None => Some(dflt),
            v => {
                let i = as_int(v)?;
                Some(if i < 0 {
                    (i + n).max(if step > 0 { 0 } else { -1 })
                } else {
                    i.min(if step > 0 { n } else { n - 1 })
                })
            }
        }
    };
    let (start, stop) = if step > 0 {
        (norm(&s[0], 0)?, norm(&s[1], n)?)
    } else {
        (norm(&s[0], n - 1)?, norm(&s[1], -1)?)
    };
    let mut out = Vec::new();
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        if i >= 0 && i < n {
            out.push(items[i as usize].clone());
        }
        i += step;
    }
    Some(out)
}

/// Helpers the catalogue's shape formulas use (see `scripts/catalog/README.md`).
/// The canonical path of `nn.Module`, the base every torch.nn layer shares.
pub(in crate::eval) const TORCH_NN_MODULE: &str = "torch.nn.Module";

const CATALOG_HELPERS: &[&str] = &[
    "_single",
    "_pair",
    "_triple",
    "_quadruple",
    "_ntuple",
    "_tuple",
    "_is_tuple",
    "_prod",
    "_map_float",
    "_is_module",
    "_shape",
    "_uninitialized",
];

fn catalog_helper(name: &str, args: &[Value]) -> Value {
    let seq = |v: &Value| -> Option<Vec<Value>> {
        match v {
            Value::Tuple(t) => Some(t.to_vec()),
            Value::List(l) => Some(l.borrow().clone()),
            _ => None,
        }
    };
    let repeat = |n: usize, v: &Value| match seq(v) {
        Some(items) => Value::tuple(items),
        None => Value::tuple(vec![v.clone(); n]),
    };
    let a0 = args.first().cloned().unwrap_or(Value::None);
    match name {
        "_single" => repeat(1, &a0),
        "_pair" => repeat(2, &a0),
        "_triple" => repeat(3, &a0),
        "_quadruple" => repeat(4, &a0),
        "_ntuple" => match as_int(&a0) {
            Some(n) => repeat(n.max(0) as usize, args.get(1).unwrap_or(&Value::None)),
            None => Value::unknown("_ntuple"),
        },
        "_tuple" => repeat(1, &a0),
        "_is_tuple" => Value::Bool(seq(&a0).is_some()),
        "_prod" => match seq(&a0) {
            Some(items) => items
                .iter()
                .map(as_int)
                .try_fold(1i64, |acc, v| v.map(|v| acc * v))
                .map(Value::Int)
                .unwrap_or_else(|| Value::unknown("_prod")),
            None => as_int(&a0)
                .map(Value::Int)
                .unwrap_or_else(|| Value::unknown("_prod")),
        },
        "_map_float" => match seq(&a0) {
            Some(items) => Value::tuple(
                items
                    .iter()
                    .map(|v| as_f64(v).map(Value::Float).unwrap_or_else(|| v.clone()))
                    .collect(),
            ),
            None => as_f64(&a0).map(Value::Float).unwrap_or(a0),
        },
        "_is_module" => Value::Bool(matches!(a0, Value::Object(_))),
        _ => Value::unknown(name.to_string()),
    }
}

/// Names that resolve to Python builtins when no binding shadows them.
fn builtin_value(name: &str) -> Option<Value> {
    const FUNCS: &[&str] = &[
        "len",
        "range",
        "enumerate",
        "zip",
        "reversed",
        "sorted",
        "list",
        "tuple",
        "set",
        "frozenset",
        "dict",
        "isinstance",
        "issubclass",
        "hasattr",
        "getattr",
        "setattr",
        "delattr",
        "int",
        "float",
        "bool",
        "str",
        "repr",
        "abs",
        "round",
        "min",
        "max",
        "sum",
        "any",
        "all",
        "divmod",
        "pow",
        "print",
        "super",
        "type",
        "callable",
        "iter",
        "next",
        "map",
        "filter",
        "id",
        "hash",
        "vars",
        "dir",
        "globals",
        "locals",
        "format",
        "ord",
        "chr",
        "open",
        "input",
        "object",
        "slice",
        "property",
        "staticmethod",
        "classmethod",
    ];
    if FUNCS.contains(&name) || CATALOG_HELPERS.contains(&name) {
        return Some(Value::Builtin(Rc::from(name)));
    }
    if name.ends_with("Error")
        || name.ends_with("Exception")
        || name.ends_with("Warning")
        || name == "StopIteration"
        || name == "KeyboardInterrupt"
    {
        return Some(Value::Builtin(Rc::from(name)));
    }
    match name {
        "NotImplemented" | "Ellipsis" => Some(Value::Ellipsis),
        "__file__" => Some(Value::unknown("__file__")),
        // Every module has them (diffusers' lazy `__init__` passes `module_spec=__spec__`);
        // the import system's records are not modelled.
        "__spec__" | "__loader__" => Some(Value::unknown(format!(
            "`{name}`, the import system's record of the module"
        ))),
        _ => None,
    }
}

/// Why one of `values` is not known, as ` (reason)` after a message: the first unknown's
/// reason (`constructor argument \`num_layers\``), else nothing.
fn why_not_known(values: &[Value]) -> String {
    values
        .iter()
        .find_map(|v| match v {
            Value::Unknown(u) => Some(format!(" ({})", u.reason)),
            _ => None,
        })
        .unwrap_or_default()
}

/// Re-finds a definition node from its span (tree-sitter nodes cannot outlive a borrow).
pub fn find_node(tree: &tree_sitter::Tree, span: Span) -> Option<Node<'_>> {
    crate::syntax::definition_at(tree, span.start, span.end)
}

fn as_str(v: Option<&Value>) -> String {
    match v {
        Some(Value::Str(s)) => s.to_string(),
        _ => String::new(),
    }
}

/// Distinct items, first occurrence first (a set, as the evaluator keeps one).
fn set_of(items: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    for i in items {
        if !out.iter().any(|o| o.py_eq(&i) == Some(true)) {
            out.push(i);
        }
    }
    out
}

/// Whether `o` is an instance of an exception class (builtin or derived from one).
fn is_exception_object(o: &super::value::Object) -> bool {
    let is_exc = |m: &Value| matches!(m, Value::Builtin(b) if super::stdlib::contextlib::exception_bases(b).is_some() || &**b == "BaseException");
    match &o.class {
        Value::Class(c) => c.mro.borrow().iter().any(is_exc),
        other => is_exc(other),
    }
}
