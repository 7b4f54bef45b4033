//! Calls: user functions (inlined when tracing), classes and external (torch) callables,
//! plus the operators and protocols (`iter`, `[]`) they rely on, which dispatch by kind of
//! value to `types` (Python's builtin functions are in `builtins`).

use crate::eval::types::proxy;
use crate::syntax::KindExt;
use std::cell::RefCell;
use std::rc::Rc;

use tree_sitter::Node;

use super::expr::binop_name;
use super::value::{FnKind, Function, ObjKind, Partial, Scope, Value};
use super::{EResult, Flow, Frame, Interp};
use crate::catalog::ParamKind;
use crate::diagnostics::codes;
use crate::graph::inline::MAX_INLINE_DEPTH;
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
pub(in crate::eval) fn any_proxy(args: &[Value], kwargs: &[(String, Value)]) -> bool {
    args.iter().any(has_proxy) || kwargs.iter().any(|(_, v)| has_proxy(v))
}

/// What `name` is bound to in `frame`'s function scopes (its own, then the enclosing ones);
/// None when it is not bound there or is declared `global`.
pub(in crate::eval) fn local_value(frame: &Frame, name: &str) -> Option<Value> {
    let mut scope = frame.locals.clone();
    while let Some(s) = scope {
        if let Some(v) = s.vars.borrow().get(name) {
            match super::stmt::scope_mark(v) {
                None => return Some(v.clone()),
                Some(super::stmt::GLOBAL_MARK) => return None,
                Some(_) => {}
            }
        }
        scope = s.parent.clone();
    }
    None
}

impl Interp {
    pub fn lookup(&mut self, frame: &Frame, name: &str, span: Span) -> EResult<Value> {
        if let Some(v) = local_value(frame, name) {
            return Ok(v);
        }
        if let Some(v) = frame.globals.vars.borrow().get(name) {
            if let Some(t) = self.tracer.as_mut() {
                let at = (frame.file_id, span, t.call_chain.as_slice());
                t.guards.global_read(&frame.globals, name, v, at);
            }
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
        // the argument expressions as written, while every position is known
        let mut positional_nodes = Some(Vec::new());
        let mut keyword_nodes = Vec::new();
        // the names spread into the call (`*args`, `**kwargs`)
        let mut splat_names = Vec::new();
        if let Some(alist) = node.field("arguments") {
            if alist.kind_name() == "generator_expression" {
                args.push(self.eval_expr(frame, alist)?);
                positional_nodes = None;
            } else {
                for a in operands(alist) {
                    match a.kind_name() {
                        "keyword_argument" => {
                            let (Some(n), Some(v)) = (a.field("name"), a.field("value")) else {
                                continue;
                            };
                            let val = self.eval_expr(frame, v)?;
                            let name = text(n, &frame.file.text).to_string();
                            keyword_nodes.push((name.clone(), v));
                            kwargs.push((name, val));
                        }
                        "list_splat" => {
                            splat_names.extend(splat_name(a, &frame.file.text));
                            let v = self.eval_expr(frame, a)?;
                            match self.iterate(frame, &v, Span::of(a)) {
                                Ok(items) => args.extend(items),
                                Err(_) => {
                                    args.push(Value::unknown_spread("`*args` of unknown length"))
                                }
                            }
                        }
                        "dictionary_splat" => {
                            splat_names.extend(splat_name(a, &frame.file.text));
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
                        _ => {
                            if let Some(nodes) = positional_nodes.as_mut() {
                                nodes.push(a);
                            }
                            args.push(self.eval_expr(frame, a)?)
                        }
                    }
                    if a.kind_name() == "list_splat" {
                        // positions after a `*args` are unknown
                        positional_nodes = None;
                    }
                }
            }
        }
        self.note_call_arguments(
            frame,
            &func,
            positional_nodes.as_deref().unwrap_or(&[]),
            &keyword_nodes,
            &splat_names,
        );
        if proxy::records_call(self, &args, &kwargs) {
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
        let out = self.call_value(frame, &func, args, kwargs, span);
        // a callee that bound no Python function's parameters leaves them for no other call
        let _ = self.take_argument_sources();
        out
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
                if let (true, Some(path)) = (proxy::records_module_calls(self), &u.path) {
                    let why = format!("`{path}`, a module not built ({})", u.reason);
                    return self.opaque_module_call(frame, func, args, kwargs, &why, span);
                }
                if proxy::records_call(self, &args, &kwargs) {
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
        let argument_sources = self.take_argument_sources();
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
        let inline = proxy::inlines_user_functions(self);
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
        let receivers = all.len();
        all.extend(args);
        let bound = self.bind(frame, &f.params, all, kwargs, &f.name, span)?;
        let scope = Rc::new(Scope {
            vars: RefCell::new(bound.into_iter().collect()),
            parent: f.closure.clone(),
            class_body: false,
        });
        self.created.scope(&scope);
        if let Some(sources) = argument_sources {
            self.follow_parameters(f, &scope, receivers, sources);
        }
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
            self.note_generator_call(f, file_id, def_span);
        }
        self.call_depth += 1;
        if inline {
            let t = self.tracer.as_mut().expect("tracing");
            t.call_chain.push((frame.file_id, span));
            t.inline_depth += 1;
        }
        let result = self.run_body(&callee, f, def);
        if inline {
            let t = self.tracer.as_mut().expect("tracing");
            t.call_chain.pop();
            t.inline_depth -= 1;
        }
        self.call_depth -= 1;
        let result = match result {
            // `obj.__dict__` through a `__getattribute__` override stays the instance's own,
            // for the attribute access that asked for it; any other function returns a copy
            Ok(Value::InstanceDict(o, namespace)) if f.name != "__getattribute__" => {
                Ok(o.snapshot(namespace))
            }
            other => other,
        };
        self.helper_result(&f.name, result)
    }

    /// A generator function inlined in the trace, for the breaks pass.
    fn note_generator_call(
        &mut self,
        f: &Function,
        file_id: crate::semantic::FileId,
        def_span: Span,
    ) {
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

    /// Runs a function's body in its frame: a lambda's expression, a generator to its end
    /// (its items a list), any other function to its `return`.
    fn run_body(&mut self, callee: &Frame, f: &Function, def: Node) -> EResult<Value> {
        if f.is_lambda {
            match def.field("body") {
                Some(b) => self.eval_expr(callee, b),
                None => Ok(Value::None),
            }
        } else if f.is_generator {
            self.yields.push(Vec::new());
            let run = match def.field("body") {
                Some(b) => self.exec_block(callee, b).map(|_| ()),
                None => Ok(()),
            };
            let values = self.yields.pop().unwrap_or_default();
            run.map(|()| Value::list(values))
        } else {
            match def.field("body") {
                Some(b) => self.exec_block(callee, b).map(|flow| match flow {
                    Flow::Return(v) => v,
                    _ => Value::None,
                }),
                None => Ok(Value::None),
            }
        }
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
                            format!(
                                "TypeError: {fname}() missing required argument `{}`",
                                p.name
                            ),
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
                            format!("TypeError: {fname}() missing keyword argument `{}`", p.name),
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
                format!(
                    "TypeError: {fname}() got {} extra positional argument(s)",
                    extra.len()
                ),
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
                        "TypeError: {fname}() got an unexpected keyword argument `{}`",
                        kwargs[0].0
                    ),
                ));
            }
            None => {}
        }
        Ok(out)
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
        // `[1] * x.ndim`: a list or tuple repeated by an int read off a traced shape is a
        // Python sequence, as Dynamo specialises on the size (`range(x.ndim)` unrolls alike)
        let repeat = |v: &Value| match v {
            Value::List(_) | Value::Tuple(_) if name == "mul" => true,
            _ => false,
        };
        let a = match self.known_int(&a) {
            Some(n) if repeat(&b) => Value::Int(n),
            _ => a,
        };
        let b = match self.known_int(&b) {
            Some(n) if repeat(&a) => Value::Int(n),
            _ => b,
        };
        if proxy::records_operator(self, &a, &b) {
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
        // Neither side overrides the operator: a builtin's subclass takes part as its value.
        if let (Value::Object(o), _) | (_, Value::Object(o)) = (&a, &b) {
            if o.base.is_some() {
                let unwrap = |v: Value| match v {
                    Value::Object(o) if o.base.is_some() => o.base.clone().unwrap_or(Value::None),
                    v => v,
                };
                return self.binary_op(frame, sym, unwrap(a), unwrap(b), span);
            }
        }
        if name == "or_" {
            if let Some(r) = self.type_union(frame, &a, &b, span) {
                return r;
            }
        }
        use super::types;
        use Value::*;
        match (name, &a, &b) {
            (_, Unknown(u), _) | (_, _, Unknown(u)) => {
                // the operand's reason goes on, so a limit it leads to names the root cause
                // (`constructor argument `depth``) and not only the arithmetic
                return Ok(Value::unknown(derived_reason(
                    "arithmetic on an unknown value",
                    &u.reason,
                )));
            }
            ("eq", _, _) | ("ne", _, _) => {
                return Ok(match a.py_eq(&b) {
                    Some(e) => Bool(e == (name == "eq")),
                    Option::None => Value::unknown("comparison"),
                })
            }
            _ => {}
        }
        if let Some(message) = types::string::operand_type_error(name, sym, &a, &b) {
            return Err(self.error(frame, span, codes::RAISED, message));
        }
        let by_kind = match (&a, &b) {
            (Str(x), _) => types::string::binary_op(name, x, &b),
            (Tuple(_) | List(_), _) | (Int(_), Tuple(_) | List(_)) => {
                types::list::binary_op(self, frame, name, &a, &b, span)?
            }
            (Dict(x), Dict(y)) if name == "or_" => Some(types::dict::union(x, y)),
            _ => Option::None,
        };
        if let Some(v) = by_kind {
            return Ok(v);
        }
        if let Some(v) = types::number::binary_op(self, frame, sym, name, &a, &b, span) {
            return v;
        }
        Ok(match (&a, &b) {
            (TensorConst(_) | Param(_), _) | (_, TensorConst(_) | Param(_)) => {
                types::tensor::binary_op(name, &a, &b)
            }
            _ => Value::unknown(format!(
                "`{sym}` between {} and {}",
                a.type_name(),
                b.type_name()
            )),
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
        let slot = match sym {
            "-" => "__neg__",
            "+" => "__pos__",
            _ => "__invert__",
        };
        let v = self.as_builtin(&v, slot);
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
        if let Some(base) = self.builtin_view(v, "__iter__") {
            return self.iterate(frame, &base, span);
        }
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
            Value::Object(_) if super::stdlib::itertools::infinite_kind(v).is_some() => {
                let kind = super::stdlib::itertools::infinite_kind(v).unwrap_or_default();
                Err(self.error(
                    frame,
                    span,
                    codes::UNSUPPORTED,
                    format!("itertools.{kind}() is infinite: only zip() with a finite iterable is followed"),
                ))
            }
            Value::Object(o) => match &o.kind {
                ObjKind::Container(kind) if kind == "ModuleDict" => Ok(o
                    .module_entries()
                    .into_iter()
                    .map(|(k, _)| Value::str(&k))
                    .collect()),
                // an unknown child (one the evaluator could not build) is read as an
                // attribute, so a call of it is an opaque call of that submodule
                ObjKind::Container(_) => Ok(self
                    .module_entry_values(frame, o, span)?
                    .into_iter()
                    .map(|(_, c)| c)
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
            Value::Proxy(n) => super::types::proxy::iterate(self, frame, v, *n, span),
            // A constant tensor iterates over its first dimension.
            Value::TensorConst(t) if t.shape.as_ref().is_some_and(|s| !s.is_empty()) => {
                super::types::tensor::iterate(self, frame, v, t, span)
            }
            Value::Unknown(u) => Err(self.error(
                frame,
                span,
                codes::UNSUPPORTED,
                format!("cannot iterate over an unknown value ({})", u.reason),
            )),
            Value::ModuleGlobals(_) => Err(self.error(
                frame,
                span,
                codes::UNSUPPORTED,
                super::types::module_globals::whole_namespace("iterating over `globals()`"),
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
        if let Value::InstanceDict(o, namespace) = obj {
            // an augmented item assignment reads its target first: `obj.__dict__[k] += 1`
            return self.call_instance_dict_method(
                frame,
                o,
                *namespace,
                "__getitem__",
                vec![key],
                vec![],
                span,
            );
        }
        if let Value::ModuleGlobals(ns) = obj {
            use super::types::module_globals;
            return module_globals::call_method(
                self,
                frame,
                ns,
                "__getitem__",
                &[key],
                &Kwargs::new(),
                span,
            );
        }
        if let Some(base) = self.builtin_view(obj, "__getitem__") {
            return self.get_item(frame, &base, key, span);
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
        if let (Value::Param(p), true) = (obj, proxy::param_is_traced(self)) {
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
        if proxy::records_call(self, std::slice::from_ref(&key), &[]) {
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
        use super::types;
        match (obj, &key) {
            (Value::Str(text), Value::Slice(s)) => {
                types::string::get_slice(self, frame, text, s, span)
            }
            (Value::Tuple(_) | Value::List(_) | Value::Str(_), k) => {
                types::list::get_item(self, frame, obj, k, span)
            }
            (Value::Dict(d), k) => types::dict::get_item(self, frame, d, k, span),
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
            (Value::Param(p), Value::Int(i)) => types::tensor::param_item(self, frame, p, *i, span),
            (Value::TensorConst(t), _) => {
                types::tensor::const_item(self, frame, obj, t, &key, span)
            }
            (Value::Unknown(u), _) => Ok(types::unknown::get_item(u, &key)),
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
        if !matches!(obj, Value::Proxy(_)) {
            self.note_replay_container_write();
        }
        match (obj, &key) {
            (Value::ModuleGlobals(ns), _) => {
                let args = [key, v];
                super::types::module_globals::call_method(
                    self,
                    frame,
                    ns,
                    "__setitem__",
                    &args,
                    &Kwargs::new(),
                    span,
                )?;
                Ok(())
            }
            (Value::InstanceDict(o, namespace), _) => {
                self.call_instance_dict_method(
                    frame,
                    o,
                    *namespace,
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
        if !matches!(obj, Value::Proxy(_)) {
            self.note_replay_container_write();
        }
        match obj {
            Value::InstanceDict(o, namespace) => {
                let ns = *namespace;
                self.call_instance_dict_method(
                    frame,
                    o,
                    ns,
                    "__delitem__",
                    vec![key],
                    vec![],
                    span,
                )?;
                Ok(())
            }
            Value::ModuleGlobals(ns) => {
                use super::types::module_globals;
                module_globals::call_method(
                    self,
                    frame,
                    ns,
                    "__delitem__",
                    &[key],
                    &Kwargs::new(),
                    span,
                )?;
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
        _ => module_record(name),
    }
}

/// The names the import system binds in every module besides `__name__` (diffusers' lazy
/// `__init__` passes `module_spec=__spec__`, transformers' `globals()["__file__"]`): unknown,
/// saying what they are, as what they hold is not modelled.
pub(super) fn module_record(name: &str) -> Option<Value> {
    match name {
        "__file__" => Some(Value::unknown("__file__")),
        "__spec__" | "__loader__" | "__package__" | "__builtins__" => Some(Value::unknown(
            format!("`{name}`, the import system's record of the module"),
        )),
        _ => None,
    }
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

/// The name a `*name` or `**name` argument spreads, when it is a plain name.
fn splat_name<'s>(splat: Node, src: &'s str) -> Option<&'s str> {
    let inner = crate::syntax::first_operand(splat)?;
    (inner.kind_name() == "identifier").then(|| text(inner, src))
}

/// The reason of a value computed from an unknown one: `what (why)`, where `why` is the
/// unknown's own reason with any such prefix of its own dropped, so chained arithmetic reads
/// `arithmetic on an unknown value (constructor argument `depth`)` and not nested.
pub(super) fn derived_reason(what: &str, reason: &str) -> String {
    let mut why = reason;
    for prefix in ["arithmetic on an unknown value (", "len of unknown ("] {
        if let Some(inner) = why.strip_prefix(prefix).and_then(|r| r.strip_suffix(')')) {
            why = inner;
        }
    }
    format!("{what} ({why})")
}
