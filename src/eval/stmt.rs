//! Statements.

use crate::eval::types::proxy;
use crate::syntax::KindExt;
use std::rc::Rc;

use tree_sitter::Node;

use super::call::Kwargs;
use super::value::{Class, FnKind, FnParam, Function, PendingImport, Scope, Value};
use super::{EResult, Flow, Frame, Interp};
use crate::catalog::ParamKind;
use crate::diagnostics::codes;
use crate::graph::RegionRole;
use crate::syntax::{operands, text, FieldExt, Span};

/// The truth of a condition as far as static evaluation can tell.
pub enum Truth {
    Known(bool),
    /// Depends on tensor data: Dynamo breaks the graph here; the node is the condition.
    Data(crate::graph::NodeId),
    /// A Python value we could not determine (an unknown constructor argument, say).
    Unknown,
}

/// An attribute or an item a statement assigns or deletes.
enum Place {
    Attribute(Value, String),
    Item(Value, Value),
}

impl Interp {
    pub fn exec_block(&mut self, frame: &Frame, block: Node) -> EResult<Flow> {
        let stmts: Vec<Node> = crate::syntax::named_children(block).collect();
        for s in stmts {
            let flow = match self.exec_stmt(frame, s) {
                Ok(flow) => flow,
                // What the evaluator cannot follow costs one statement, not the whole function:
                // its targets become unknown and evaluation goes on, so one unsupported line in
                // a constructor or forward still leaves a useful module tree and graph.
                Err(e) if e.code == codes::UNSUPPORTED || e.code == codes::UNRESOLVED_NAME => {
                    self.note_error(&e);
                    if self.call_depth >= self.init_skips.depth {
                        self.init_skips.count += 1;
                        self.init_skips.first.get_or_insert_with(|| e.clone());
                    }
                    if s.kind_name() == "return_statement" {
                        return Ok(Flow::Return(Value::unknown(e.message)));
                    }
                    self.bind_unknown_targets(frame, s, &e.message);
                    Flow::Normal
                }
                Err(e) => return Err(e),
            };
            match flow {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    pub fn exec_stmt(&mut self, frame: &Frame, node: Node) -> EResult<Flow> {
        self.step(frame, Span::of(node))?;
        let src = &*frame.file.text;
        match node.kind_name() {
            "expression_statement" => {
                let kids = operands(node);
                for k in kids {
                    match k.kind_name() {
                        "assignment" => self.exec_assignment(frame, k)?,
                        "augmented_assignment" => self.exec_augassign(frame, k)?,
                        _ => {
                            self.eval_expr(frame, k)?;
                        }
                    }
                }
                Ok(Flow::Normal)
            }
            "return_statement" => {
                // `call_function` settles an instance's `__dict__` into a snapshot unless a
                // `__getattribute__` override passes it on (`return super().__getattribute__(key)`)
                let v = match node.named_child(0) {
                    Some(e) => self.eval_expr_live(frame, e)?,
                    None => Value::None,
                };
                Ok(Flow::Return(v))
            }
            // The names a function declares `global` / `nonlocal` are marked in its scope:
            // assignments to them go to the module / the enclosing function that binds them.
            "global_statement" | "nonlocal_statement" => {
                self.declare_outer(frame, node);
                Ok(Flow::Normal)
            }
            "pass_statement" | "comment" | "line_continuation" | "future_import_statement" => {
                Ok(Flow::Normal)
            }
            "break_statement" => Ok(Flow::Break),
            "continue_statement" => Ok(Flow::Continue),
            "if_statement" => self.exec_if(frame, node),
            "for_statement" => self.exec_for(frame, node),
            "while_statement" => self.exec_while(frame, node),
            "function_definition" => {
                let f = self.make_function(frame, node, FnKind::Plain)?;
                let name = f.name.clone();
                self.set_var(frame, &name, Value::Function(Rc::new(f)));
                Ok(Flow::Normal)
            }
            "decorated_definition" => self.exec_decorated(frame, node),
            "class_definition" => {
                // Dynamo cannot trace a class statement (GB8977); the breaks pass needs to see it.
                if let Some(t) = self.tracer.as_mut() {
                    t.event(
                        crate::traced::EventKind::ClassDef,
                        frame.file_id,
                        Span::of(node),
                        String::new(),
                    );
                }
                let c = self.make_class(frame, node)?;
                self.set_var(frame, &class_name(node, &src), c);
                Ok(Flow::Normal)
            }
            "import_statement" => self.exec_import(frame, node),
            "import_from_statement" => self.exec_import_from(frame, node),
            "raise_statement" => Err(self.raise(frame, node)),
            "try_statement" => self.exec_try(frame, node),
            "with_statement" => self.exec_with(frame, node),
            "assert_statement" => self.exec_assert(frame, node),
            "delete_statement" => {
                if let Some(t) = node.named_child(0) {
                    self.delete(frame, t)?;
                }
                Ok(Flow::Normal)
            }
            "type_alias_statement" => Ok(Flow::Normal),
            "ERROR" => Err(self.error(frame, Span::of(node), codes::SYNTAX_ERROR, "syntax error")),
            kind => Err(self.error(
                frame,
                Span::of(node),
                codes::UNSUPPORTED,
                format!("unsupported statement `{kind}`"),
            )),
        }
    }

    /// `global x` / `nonlocal x` in a function: `x` marked in its scope.
    fn declare_outer(&mut self, frame: &Frame, node: Node) {
        let src = &*frame.file.text;
        if let Some(scope) = &frame.locals {
            let mark = if node.kind_name() == "global_statement" {
                GLOBAL_MARK
            } else {
                NONLOCAL_MARK
            };
            for n in crate::syntax::named_children(node) {
                if n.kind_name() == "identifier" {
                    let name = text(n, src).to_string();
                    scope
                        .vars
                        .borrow_mut()
                        .insert(name, Value::External(Rc::from(mark)));
                }
            }
        }
    }

    /// `import a.b`, `import a.b as c`.
    fn exec_import(&mut self, frame: &Frame, node: Node) -> EResult<Flow> {
        let src = &*frame.file.text;
        let mut c = node.walk();
        let names: Vec<Node> = node.children_by_field_name("name", &mut c).collect();
        for n in names {
            match n.kind_name() {
                "aliased_import" => {
                    let module = n.field("name").map(|m| text(m, &src)).unwrap_or("");
                    let alias = n.field("alias").map(|m| text(m, &src)).unwrap_or("");
                    let module = compact(module);
                    let deferred = PendingImport {
                        module: module.clone(),
                        attr: None,
                        also_load: None,
                        span: Span::of(n),
                    };
                    if !self.defer_import(frame, alias, deferred) {
                        if let Some(msg) = self.module_not_found(&module) {
                            return Err(self.error(frame, Span::of(n), codes::RAISED, msg));
                        }
                        let v = self.import_module(&module);
                        self.set_var(frame, alias, v);
                    }
                }
                _ => {
                    let module = compact(text(n, &src));
                    let top = module.split('.').next().unwrap_or("").to_string();
                    // `import a.b` binds `a`, and loads `a.b` so attribute access reaches it.
                    let deferred = PendingImport {
                        module: top.clone(),
                        attr: None,
                        also_load: module.contains('.').then(|| module.clone()),
                        span: Span::of(n),
                    };
                    if !self.defer_import(frame, &top, deferred) {
                        if let Some(msg) = self.module_not_found(&module) {
                            return Err(self.error(frame, Span::of(n), codes::RAISED, msg));
                        }
                        if module.contains('.') {
                            let _ = self.import_module(&module);
                        }
                        let v = self.import_module(&top);
                        self.set_var(frame, &top, v);
                    }
                }
            }
        }
        Ok(Flow::Normal)
    }

    /// `assert cond, msg`.
    fn exec_assert(&mut self, frame: &Frame, node: Node) -> EResult<Flow> {
        let src = &*frame.file.text;
        let Some(cond) = node.named_child(0) else {
            return Ok(Flow::Normal);
        };
        if proxy::traces_assert_conditions(self) {
            // Dynamo runs the condition (its operations are graph nodes, an `.item()` in it
            // breaks) and turns a tensor condition into `torch._assert_async`; the message
            // is only built when the assert fails, so it is not traced.
            let v = self.eval_expr(frame, cond)?;
            if let Value::Proxy(n) = v {
                let is_tensor = self.tracer.as_ref().is_some_and(|t| t.meta(n).is_tensor());
                if is_tensor {
                    self.trace_function(
                        frame,
                        "torch._assert_async",
                        vec![v],
                        vec![],
                        Span::of(node),
                    )?;
                }
            }
            return Ok(Flow::Normal);
        }
        // A statically false assert outside a trace is a real error in the model.
        let v = self.eval_expr(frame, cond)?;
        if let Truth::Known(false) = self.truth(frame, &v, Span::of(cond))? {
            let msg = node
                .named_child(1)
                .map(|m| text(m, &src).to_string())
                .unwrap_or_default();
            return Err(self.error(
                frame,
                Span::of(node),
                codes::RAISED,
                format!("assertion fails: {}", truncate(&msg, 120)),
            ));
        }
        Ok(Flow::Normal)
    }

    fn exec_assignment(&mut self, frame: &Frame, node: Node) -> EResult<()> {
        // `a = b = expr` nests assignments on the right.
        let mut targets = vec![];
        let mut cur = node;
        loop {
            if let Some(l) = cur.field("left") {
                targets.push(l);
            }
            match cur.field("right") {
                Some(r) if r.kind_name() == "assignment" => cur = r,
                Some(r) => {
                    let v = self.eval_expr(frame, r)?;
                    for &t in &targets {
                        self.assign(frame, t, v.clone())?;
                    }
                    self.note_bindings(frame, node, &targets);
                    return Ok(());
                }
                // An annotation without a value (`x: int`) binds nothing.
                None => return Ok(()),
            }
        }
    }

    fn exec_augassign(&mut self, frame: &Frame, node: Node) -> EResult<()> {
        let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
            return Ok(());
        };
        let op = node
            .field("operator")
            .map(|o| text(o, &frame.file.text).to_string())
            .unwrap_or_default();
        let cur = self.eval_expr(frame, left)?;
        let rhs = self.eval_expr(frame, right)?;
        let op = op.trim_end_matches('=');
        let v = match (&cur, op) {
            // list += iterable extends in place (shared references see it).
            (Value::List(l), "+") => {
                let items = self.iterate(frame, &rhs, Span::of(right))?;
                self.note_replay_container_write();
                l.borrow_mut().extend(items);
                cur.clone()
            }
            _ => self.binary_op(frame, op, cur, rhs, Span::of(node))?,
        };
        self.assign(frame, left, v)?;
        self.note_bindings(frame, node, &[left]);
        Ok(())
    }

    /// In a traced forward, notes what each name an assignment statement bound now holds
    /// (the editor's inlay hints), in the traced class's file only.
    fn note_bindings(&mut self, frame: &Frame, statement: Node, targets: &[Node]) {
        let Some(tracer) = self.tracer.as_mut() else {
            return;
        };
        if !tracer.records_bindings_in(frame.file_id, &frame.file.path) {
            return;
        }
        let mut names = vec![];
        for &t in targets {
            bound_names(t, &mut names);
        }
        let src = &*frame.file.text;
        for name in names {
            let id = text(name, src);
            if id == "_" {
                continue;
            }
            let value = bound_value(frame, id).unwrap_or(Value::None);
            tracer.note_binding(frame.file_id, Span::of(statement), Span::of(name), &value);
        }
    }

    pub fn assign(&mut self, frame: &Frame, target: Node, v: Value) -> EResult<()> {
        let src = &*frame.file.text;
        match target.kind_name() {
            "identifier" => {
                self.set_var(frame, text(target, &src), v);
                Ok(())
            }
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "tuple"
            | "list"
            | "parenthesized_expression" => {
                if target.kind_name() == "parenthesized_expression" {
                    return match target.named_child(0) {
                        Some(inner) => self.assign(frame, inner, v),
                        None => Ok(()),
                    };
                }
                let kids = operands(target);
                let star = kids.iter().position(|k| {
                    k.kind_name() == "list_splat_pattern" || k.kind_name() == "list_splat"
                });
                let items = self.unpack(frame, &v, kids.len(), star.is_some(), Span::of(target))?;
                match star {
                    None => {
                        for (k, item) in kids.into_iter().zip(items) {
                            self.assign(frame, k, item)?;
                        }
                    }
                    Some(si) => {
                        let after = kids.len() - si - 1;
                        if items.len() < kids.len() - 1 {
                            return Err(self.error(
                                frame,
                                Span::of(target),
                                codes::RAISED,
                                "not enough values to unpack",
                            ));
                        }
                        let mid_end = items.len() - after;
                        for (i, k) in kids.iter().enumerate() {
                            if i < si {
                                self.assign(frame, *k, items[i].clone())?;
                            } else if i == si {
                                if let Some(inner) = k.named_child(0) {
                                    self.assign(
                                        frame,
                                        inner,
                                        Value::list(items[si..mid_end].to_vec()),
                                    )?;
                                }
                            } else {
                                self.assign(frame, *k, items[mid_end + (i - si - 1)].clone())?;
                            }
                        }
                    }
                }
                Ok(())
            }
            "attribute" | "subscript" => match self.place(frame, target)? {
                Some(Place::Attribute(o, name)) => {
                    self.set_attr(frame, &o, &name, v, Span::of(target))
                }
                Some(Place::Item(o, key)) => self.set_item(frame, &o, key, v, Span::of(target)),
                None => Ok(()),
            },
            "list_splat_pattern" => match target.named_child(0) {
                Some(inner) => self.assign(frame, inner, v),
                None => Ok(()),
            },
            kind => Err(self.error(
                frame,
                Span::of(target),
                codes::UNSUPPORTED,
                format!("unsupported assignment target `{kind}`"),
            )),
        }
    }

    /// `del target`: a name, an attribute (`delattr`), an item, or several of them.
    fn delete(&mut self, frame: &Frame, target: Node) -> EResult<()> {
        let src = &*frame.file.text;
        match target.kind_name() {
            "identifier" => {
                let name = text(target, &src);
                match &frame.locals {
                    Some(l) => {
                        l.vars.borrow_mut().remove(name);
                    }
                    None => {
                        frame.globals.vars.borrow_mut().shift_remove(name);
                    }
                }
                Ok(())
            }
            "expression_list" | "tuple" | "list" | "parenthesized_expression" => {
                for k in operands(target) {
                    self.delete(frame, k)?;
                }
                Ok(())
            }
            "attribute" | "subscript" => match self.place(frame, target)? {
                Some(Place::Attribute(o, name)) => {
                    self.del_attr(frame, &o, &name, Span::of(target))
                }
                Some(Place::Item(o, key)) => self.del_item(frame, &o, key, Span::of(target)),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// What an attribute or subscript target (of `=` or `del`) names: its object evaluated,
    /// and the attribute's name or the item's key. None for a target missing its parts.
    fn place(&mut self, frame: &Frame, target: Node) -> EResult<Option<Place>> {
        if target.kind_name() == "attribute" {
            let (Some(obj), Some(attr)) = (target.field("object"), target.field("attribute"))
            else {
                return Ok(None);
            };
            let o = self.eval_expr(frame, obj)?;
            let name = text(attr, &frame.file.text).to_string();
            return Ok(Some(Place::Attribute(o, name)));
        }
        let Some(obj) = target.field("value") else {
            return Ok(None);
        };
        let o = self.eval_expr_live(frame, obj)?;
        let key = self.eval_subscript_key(frame, target)?;
        Ok(Some(Place::Item(o, key)))
    }

    pub fn set_var(&mut self, frame: &Frame, name: &str, v: Value) {
        match &frame.locals {
            Some(scope) => {
                let declared = scope.vars.borrow().get(name).and_then(scope_mark);
                match declared {
                    Some(GLOBAL_MARK) => {
                        if let Some(t) = self.tracer.as_mut() {
                            let old = frame.globals.vars.borrow().get(name).cloned();
                            t.guards.global_write(&frame.globals, name, old);
                            if let Some(shadow) = t.replay.as_mut() {
                                shadow.note_write(0);
                            }
                        }
                        frame.globals.pending.borrow_mut().remove(name);
                        frame.globals.vars.borrow_mut().insert(name.to_string(), v);
                    }
                    Some(_) => {
                        // a closure's variable may belong to a function outside the call
                        self.note_replay_write(0);
                        // `nonlocal`: the nearest enclosing function scope that binds it
                        let mut outer = scope.parent.clone();
                        while let Some(s) = outer {
                            let binds = s
                                .vars
                                .borrow()
                                .get(name)
                                .is_some_and(|v| scope_mark(v) != Some(NONLOCAL_MARK));
                            if binds {
                                s.vars.borrow_mut().insert(name.to_string(), v);
                                return;
                            }
                            outer = s.parent.clone();
                        }
                        scope.vars.borrow_mut().insert(name.to_string(), v);
                    }
                    None => {
                        scope.vars.borrow_mut().insert(name.to_string(), v);
                    }
                }
            }
            None => {
                frame.globals.pending.borrow_mut().remove(name);
                frame.globals.vars.borrow_mut().insert(name.to_string(), v);
            }
        }
    }

    /// The imports of a module-level `if TYPE_CHECKING:` block become deferred bindings.
    /// At runtime the block is skipped, but packages built on a lazy-module pattern
    /// (transformers' `_LazyModule`) serve exactly those names on first access; deferring
    /// reproduces that without evaluating the whole package.
    fn defer_type_checking_imports(&mut self, frame: &Frame, body: Node) {
        let src = &*frame.file.text;
        // The imports may sit in nested blocks: transformers guards them with
        // `try: if not is_torch_available(): raise … except …: pass else: from … import …`.
        let mut stmts = Vec::new();
        collect_import_froms(body, &mut stmts);
        for stmt in stmts {
            let Some(module_node) = stmt.field("module_name") else {
                continue;
            };
            let t = compact(text(module_node, &src));
            let level = t.chars().take_while(|c| *c == '.').count();
            let Some(abs) = self
                .project
                .absolute_module(&frame.file, level, &t[level..])
            else {
                continue;
            };
            if !self.project.module_exists(&abs) {
                continue;
            }
            let wildcard =
                crate::syntax::named_children(stmt).any(|n| n.kind_name() == "wildcard_import");
            if wildcard {
                frame.globals.star_sources.borrow_mut().push(abs);
                continue;
            }
            let mut c3 = stmt.walk();
            let names: Vec<Node> = stmt.children_by_field_name("name", &mut c3).collect();
            for n in names {
                let (name, alias) = import_name_alias(n, &src);
                if frame.globals.vars.borrow().contains_key(&alias) {
                    continue;
                }
                frame.globals.pending.borrow_mut().insert(
                    alias,
                    PendingImport {
                        module: abs.clone(),
                        attr: Some(name),
                        also_load: None,
                        span: Span::of(n),
                    },
                );
            }
        }
    }

    /// Binds `name` to an import evaluated on first use, when that is sound: at module level
    /// (where every later read goes through `lookup` or `module_attr`) and for a project module
    /// not loaded yet. Returns false when the caller should import now.
    fn defer_import(&mut self, frame: &Frame, name: &str, pending: PendingImport) -> bool {
        if frame.locals.is_some() || !self.import_is_deferrable(&pending.module) {
            return false;
        }
        frame.globals.vars.borrow_mut().shift_remove(name);
        frame
            .globals
            .pending
            .borrow_mut()
            .insert(name.to_string(), pending);
        true
    }

    fn exec_if(&mut self, frame: &Frame, node: Node) -> EResult<Flow> {
        let Some(cond) = node.field("condition") else {
            return Ok(Flow::Normal);
        };
        if frame.locals.is_none() && is_type_checking(cond, &frame.file.text) {
            if let Some(body) = node.field("consequence") {
                self.defer_type_checking_imports(frame, body);
            }
        }
        let v = self.eval_expr(frame, cond)?;
        let truth = self.truth(frame, &v, Span::of(cond))?;
        let body = node.field("consequence");
        let mut c = node.walk();
        let alternatives: Vec<Node> = node.children_by_field_name("alternative", &mut c).collect();
        self.branch(frame, truth, Span::of(cond), "if", body, &alternatives)
    }

    /// Runs the branch a condition selects; when it depends on tensor data or on an unknown,
    /// both sides are evaluated (tagged as a graph-break region for data) and the first side's
    /// bindings continue.
    fn branch(
        &mut self,
        frame: &Frame,
        truth: Truth,
        cond_span: Span,
        kind: &str,
        body: Option<Node>,
        alts: &[Node],
    ) -> EResult<Flow> {
        // what happens under a condition of unknown value is marked with it (`TraceEvent`)
        let unknown = matches!(truth, Truth::Unknown);
        if let Some(t) = self.tracer.as_mut().filter(|_| unknown) {
            t.unknown_conditions.push((frame.file_id, cond_span));
        }
        let flow = self.run_branch(frame, truth, cond_span, kind, body, alts);
        if let Some(t) = self.tracer.as_mut().filter(|_| unknown) {
            t.unknown_conditions.pop();
        }
        flow
    }

    fn run_branch(
        &mut self,
        frame: &Frame,
        truth: Truth,
        cond_span: Span,
        kind: &str,
        body: Option<Node>,
        alts: &[Node],
    ) -> EResult<Flow> {
        let run_alts = |this: &mut Self, alts: &[Node]| -> EResult<Flow> {
            let Some((first, rest)) = alts.split_first() else {
                return Ok(Flow::Normal);
            };
            match first.kind_name() {
                "elif_clause" => {
                    let Some(cond) = first.field("condition") else {
                        return Ok(Flow::Normal);
                    };
                    let v = this.eval_expr(frame, cond)?;
                    let truth = this.truth(frame, &v, Span::of(cond))?;
                    this.branch(
                        frame,
                        truth,
                        Span::of(cond),
                        "elif",
                        first.field("consequence"),
                        rest,
                    )
                }
                _ => match first.field("body") {
                    Some(b) => this.exec_block(frame, b),
                    None => Ok(Flow::Normal),
                },
            }
        };
        match truth {
            Truth::Known(true) => match body {
                Some(b) => self.exec_block(frame, b),
                None => Ok(Flow::Normal),
            },
            Truth::Known(false) => run_alts(self, alts),
            Truth::Data(cause) => {
                let region = self
                    .tracer
                    .as_mut()
                    .map(|t| t.open_region(cause, kind, frame.file_id, cond_span));
                let snapshot = snapshot(frame);
                self.set_branch(region, Some(RegionRole::ThenBranch));
                let then_flow = match body {
                    Some(b) => self.exec_block(frame, b),
                    None => Ok(Flow::Normal),
                };
                let after_then = snapshot_now(frame);
                restore(frame, &snapshot);
                self.set_branch(region, Some(RegionRole::ElseBranch));
                let else_flow = run_alts(self, alts);
                self.set_branch(region, None);
                let then_flow = then_flow?;
                let else_flow = else_flow?;
                // Continue with the then-branch's bindings: the graph keeps both sides' nodes,
                // annotated, and downstream uses read one of them (the break splits them at runtime).
                if matches!(then_flow, Flow::Normal) {
                    restore(frame, &after_then);
                    Ok(else_flow_if_then_normal(else_flow))
                } else {
                    Ok(then_flow)
                }
            }
            Truth::Unknown => {
                // A condition on something unknown (a constructor argument, a config field).
                // Validation branches that raise are the usual case (`if dim % heads: raise`), so
                // a side that raises is dropped in favour of the other; if both raise, so do we.
                let snapshot = snapshot(frame);
                let then_result = match body {
                    Some(b) => self.exec_block(frame, b),
                    None => Ok(Flow::Normal),
                };
                if !proxy::runs_both_unknown_branches(self) {
                    return match then_result {
                        Err(e) if e.code == codes::RAISED => {
                            restore(frame, &snapshot);
                            run_alts(self, alts).map_err(|_| e)
                        }
                        other => other,
                    };
                }
                let after_then = snapshot_now(frame);
                restore(frame, &snapshot);
                let else_result = run_alts(self, alts);
                match (then_result, else_result) {
                    (Ok(Flow::Normal), Ok(else_flow)) => {
                        restore(frame, &after_then);
                        Ok(else_flow_if_then_normal(else_flow))
                    }
                    (Ok(then_flow), Ok(_)) => Ok(then_flow),
                    (Ok(then_flow), Err(e)) if e.code == codes::RAISED => {
                        restore(frame, &after_then);
                        Ok(then_flow)
                    }
                    (Err(e), Ok(else_flow)) if e.code == codes::RAISED => Ok(else_flow),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                }
            }
        }
    }

    fn set_branch(&mut self, region: Option<usize>, role: Option<RegionRole>) {
        if let (Some(t), Some(r)) = (self.tracer.as_mut(), region) {
            t.set_branch(r, role);
        }
    }

    fn exec_for(&mut self, frame: &Frame, node: Node) -> EResult<Flow> {
        let (Some(left), Some(right), Some(body)) =
            (node.field("left"), node.field("right"), node.field("body"))
        else {
            return Ok(Flow::Normal);
        };
        let mut iterable = None;
        let listed = self.eval_expr(frame, right).and_then(|v| {
            let items = self.iterate(frame, &v, Span::of(right));
            iterable = Some(v);
            items
        });
        // Set when the loop runs an unknown number of times and its body is traced once.
        let mut ran_once = None;
        let items = match listed {
            Ok(items) => items,
            Err(e) if e.code == codes::UNSUPPORTED && proxy::runs_unknown_loop_once(self) => {
                // Loop over something we cannot enumerate (a forward input of unknown length,
                // `range(n)` of a run-time `n`, `zip` of those): trace the body once so its
                // calls still show, and say so. Skipping it would drop them from the graph.
                self.note_error(&e);
                // the loop by its text, not its line: an edit above it moves the line without
                // tracing again, and the reason is kept
                ran_once = Some(format!(
                    "the loop over `{}` runs an unknown number of times ({}), its body was \
                     traced once",
                    truncate(text(right, &frame.file.text), 60),
                    e.message
                ));
                // Items of an unknown submodule container are themselves unknown submodules.
                let path = match &iterable {
                    Some(Value::Unknown(u)) => u.path.as_ref().map(|p| format!("{p}.?")),
                    _ => None,
                };
                let item = Value::Unknown(Rc::new(super::value::Unknown {
                    reason: e.message.clone(),
                    path,
                    spread: false,
                    made_by: None,
                }));
                vec![self.first_item(frame, right, item)]
            }
            Err(e) => return Err(e),
        };
        let mut flow = Flow::Normal;
        for item in items {
            self.step(frame, Span::of(node))?;
            self.assign(frame, left, item)?;
            match self.exec_block(frame, body)? {
                Flow::Break => {
                    flow = Flow::Break;
                    break;
                }
                Flow::Return(v) => return Ok(Flow::Return(v)),
                _ => {}
            }
        }
        if let Some(reason) = &ran_once {
            // What the body bound or grew holds one iteration's values, which no run of the
            // loop need give: unknown from here on, so the output built from them (a list
            // appended to once, say) is not shown as known.
            self.forget_loop_effects(frame, node, reason);
        }
        if matches!(flow, Flow::Break) {
            return Ok(Flow::Normal);
        }
        if let Some(alt) = node.field("alternative") {
            if let Some(b) = alt.field("body") {
                return self.exec_block(frame, b);
            }
        }
        Ok(Flow::Normal)
    }

    /// The item of the one iteration traced for a loop over `iterable` of unknown length: the
    /// first one, so what Python tells of it stays known. `range(n)` starts at its start and
    /// `enumerate(xs)` counts from its start (`if i == 0:` takes its branch), the rest of an
    /// item is `unknown`.
    fn first_item(&mut self, frame: &Frame, iterable: Node, unknown: Value) -> Value {
        let (Some(f), Some(args)) = (iterable.field("function"), iterable.field("arguments"))
        else {
            return unknown;
        };
        if iterable.kind_name() != "call" || f.kind_name() != "identifier" {
            return unknown;
        }
        let src = &*frame.file.text;
        let name = text(f, src);
        let Ok(Value::Builtin(builtin)) = self.lookup(frame, name, Span::of(f)) else {
            return unknown;
        };
        let args: Vec<Node> = crate::syntax::named_children(args)
            .filter(|a| a.kind_name() != "comment")
            .collect();
        let positional = args.iter().all(|a| {
            !matches!(
                a.kind_name(),
                "keyword_argument" | "list_splat" | "dictionary_splat"
            )
        });
        let int_at = |this: &mut Self, i: usize| match args.get(i) {
            None => Some(0),
            Some(a) => match this.eval_expr(frame, *a) {
                Ok(Value::Int(n)) => Some(n),
                _ => None,
            },
        };
        match &*builtin {
            "range" if positional && args.len() == 1 => Value::Int(0),
            "range" if positional && args.len() > 1 => {
                int_at(self, 0).map(Value::Int).unwrap_or(unknown)
            }
            "enumerate" if positional && !args.is_empty() => match int_at(self, 1) {
                Some(start) => Value::Tuple(Rc::new(vec![Value::Int(start), unknown])),
                None => unknown,
            },
            _ => unknown,
        }
    }

    fn exec_while(&mut self, frame: &Frame, node: Node) -> EResult<Flow> {
        let (Some(cond), Some(body)) = (node.field("condition"), node.field("body")) else {
            return Ok(Flow::Normal);
        };
        loop {
            self.step(frame, Span::of(node))?;
            let v = self.eval_expr(frame, cond)?;
            match self.truth(frame, &v, Span::of(cond))? {
                Truth::Known(false) => return Ok(Flow::Normal),
                Truth::Known(true) => match self.exec_block(frame, body)? {
                    Flow::Break => return Ok(Flow::Normal),
                    Flow::Return(v) => return Ok(Flow::Return(v)),
                    _ => {}
                },
                Truth::Data(cause) => {
                    // One traced iteration, tagged: the loop count is data-dependent.
                    let region = self
                        .tracer
                        .as_mut()
                        .map(|t| t.open_region(cause, "while", frame.file_id, Span::of(cond)));
                    self.set_branch(region, Some(RegionRole::ThenBranch));
                    let flow = self.exec_block(frame, body);
                    self.set_branch(region, None);
                    return match flow? {
                        Flow::Return(v) => Ok(Flow::Return(v)),
                        _ => Ok(Flow::Normal),
                    };
                }
                Truth::Unknown => {
                    self.note(
                        frame.file_id,
                        Span::of(cond),
                        codes::UNSUPPORTED,
                        "loop condition could not be evaluated statically; body traced once",
                    );
                    let flow = self.exec_block(frame, body)?;
                    if let Flow::Return(v) = flow {
                        return Ok(Flow::Return(v));
                    }
                    // In a traced forward what the body bound is unknown after it, as after a
                    // `for` of unknown length. Outside one (a library parsing a version string
                    // it could not read) the once-run values stay: forgetting them there turned
                    // a readable partial value into a failed construction of the whole model.
                    if proxy::runs_unknown_loop_once(self) {
                        let reason = format!(
                            "the loop while `{}` runs an unknown number of times (its condition \
                             could not be evaluated statically), its body was traced once",
                            truncate(text(cond, &frame.file.text), 60)
                        );
                        self.forget_loop_effects(frame, node, &reason);
                    }
                    return Ok(Flow::Normal);
                }
            }
        }
    }

    /// A `raise` statement's error. `raise E(...)` carries the exception object, with its
    /// `__context__` (the exception being handled, if any), and for `raise E from C` its
    /// `__cause__` with `__suppress_context__` set; a bare `raise` re-raises the exception
    /// being handled, as it was.
    fn raise(&mut self, frame: &Frame, node: Node) -> super::EvalError {
        let src = &*frame.file.text;
        let Some(expr) = node
            .named_child(0)
            .filter(|n| Some(*n) != node.field("cause"))
        else {
            return match self.handling.last() {
                Some(handled) => handled.clone(),
                None => self.error(
                    frame,
                    Span::of(node),
                    codes::RAISED,
                    "RuntimeError: No active exception to reraise",
                ),
            };
        };
        let mut msg = text(expr, &src).to_string();
        let mut exception = None;
        if let Ok(v) = self.eval_expr(frame, expr) {
            let v = match v {
                Value::Class(_) => self
                    .instantiate(frame, &v, vec![], vec![], Span::of(expr))
                    .unwrap_or(v),
                v => v,
            };
            if let Value::Object(o) = &v {
                if !msg.contains('(') {
                    msg = format!("{}()", o.class_name());
                }
                let cause = match node.field("cause") {
                    Some(node) => Some(match self.eval_expr(frame, node) {
                        Ok(c @ Value::Class(_)) => self
                            .instantiate(frame, &c, vec![], vec![], Span::of(node))
                            .unwrap_or(c),
                        Ok(c) => c,
                        Err(_) => Value::unknown("the cause of the exception"),
                    }),
                    None => None,
                };
                let context = self.handling.last().and_then(|h| h.exception.clone());
                let mut attrs = o.attrs.borrow_mut();
                if let Some(context) = context.filter(|c| c.py_is(&v) != Some(true)) {
                    attrs.insert("__context__".into(), context);
                }
                attrs.entry("__context__".into()).or_insert(Value::None);
                attrs.insert("__suppress_context__".into(), Value::Bool(cause.is_some()));
                match cause {
                    Some(cause) => {
                        attrs.insert("__cause__".into(), cause);
                    }
                    None => {
                        attrs.entry("__cause__".into()).or_insert(Value::None);
                    }
                }
            }
            exception = Some(v);
        }
        super::EvalError {
            exception,
            ..self.error(
                frame,
                Span::of(node),
                codes::RAISED,
                format!("raises {}", truncate(&msg, 120)),
            )
        }
    }

    fn exec_try(&mut self, frame: &Frame, node: Node) -> EResult<Flow> {
        let body = node.field("body");
        let clauses: Vec<Node> = crate::syntax::named_children(node).collect();
        let result = match body {
            Some(b) => self.exec_block(frame, b),
            None => Ok(Flow::Normal),
        };
        let mut out = match result {
            Ok(flow) => {
                let else_clause = clauses.iter().find(|c| c.kind_name() == "else_clause");
                match (flow, else_clause) {
                    (Flow::Normal, Some(e)) => match e.field("body") {
                        Some(b) => self.exec_block(frame, b),
                        None => Ok(Flow::Normal),
                    },
                    (flow, _) => Ok(flow),
                }
            }
            Err(e) if e.code == codes::BUDGET => Err(e),
            Err(e) => match self.matching_handler(frame, &clauses, &e) {
                Some(handler) => {
                    let e = self.with_exception_object(frame, e);
                    self.bind_caught(frame, handler, &e);
                    let block =
                        crate::syntax::named_children(handler).find(|n| n.kind_name() == "block");
                    self.handling.push(e);
                    let handled = match block {
                        Some(b) => self.exec_block(frame, b),
                        None => Ok(Flow::Normal),
                    };
                    self.handling.pop();
                    handled
                }
                None => Err(e),
            },
        };
        if let Some(fin) = clauses.iter().find(|c| c.kind_name() == "finally_clause") {
            let block = crate::syntax::named_children(*fin).find(|n| n.kind_name() == "block");
            if let Some(b) = block {
                if let Flow::Return(v) = self.exec_block(frame, b)? {
                    out = Ok(Flow::Return(v));
                }
            }
        }
        out
    }

    /// `e` with its exception object: where the evaluator raised it itself (`KeyError`,
    /// `ZeroDivisionError`), one of the class its message names. An `except` clause binds
    /// it, and an exception raised while handling it has it as its `__context__`.
    fn with_exception_object(
        &mut self,
        frame: &Frame,
        mut e: super::EvalError,
    ) -> super::EvalError {
        if e.exception.is_some() {
            return e;
        }
        let class_name = super::stdlib::contextlib::raised_class_names(self, &e)
            .and_then(|names| names.into_iter().next());
        if let Some(n) = class_name {
            let class = match frame.globals.vars.borrow().get(&n) {
                Some(c @ Value::Class(_)) => c.clone(),
                _ => Value::Builtin(Rc::from(n.as_str())),
            };
            let detail = e.message.split_once(": ").map(|(_, d)| d).unwrap_or("");
            e.exception = Some(self.exception_object(class, vec![Value::str(detail)]));
        }
        e
    }

    /// `except E as e`: binds `e` to the exception raised (`with_exception_object`).
    fn bind_caught(&mut self, frame: &Frame, handler: Node, e: &super::EvalError) {
        let Some(pattern) =
            crate::syntax::named_children(handler).find(|n| n.kind_name() == "as_pattern")
        else {
            return;
        };
        let Some(alias) = pattern.field("alias").and_then(|a| {
            if a.kind_name() == "identifier" {
                Some(a)
            } else {
                a.named_child(0)
            }
        }) else {
            return;
        };
        let name = text(alias, &frame.file.text).to_string();
        let value = match e.exception.clone() {
            Some(v) => v,
            None => Value::unknown(format!("the exception: {}", e.message)),
        };
        self.set_var(frame, &name, value);
    }

    fn exec_import_from(&mut self, frame: &Frame, node: Node) -> EResult<Flow> {
        let src = &*frame.file.text;
        let Some(module_node) = node.field("module_name") else {
            return Ok(Flow::Normal);
        };
        let (level, module) = if module_node.kind_name() == "relative_import" {
            let t = compact(text(module_node, &src));
            let level = t.chars().take_while(|c| *c == '.').count();
            (level, t[level..].to_string())
        } else {
            (0, compact(text(module_node, &src)))
        };
        let Some(abs) = self.project.absolute_module(&frame.file, level, &module) else {
            let e = self.error(
                frame,
                Span::of(module_node),
                codes::UNRESOLVED_NAME,
                format!(
                    "relative import `{}` goes above the project root",
                    text(module_node, &src)
                ),
            );
            return Err(e);
        };
        let mut c = node.walk();
        let mut names: Vec<Node> = node.children_by_field_name("name", &mut c).collect();
        let wildcard = {
            let found =
                crate::syntax::named_children(node).any(|n| n.kind_name() == "wildcard_import");
            found
        };
        if !wildcard && frame.locals.is_none() && self.import_is_deferrable(&abs) {
            for n in names.drain(..) {
                let (name, alias) = import_name_alias(n, &src);
                let deferred = PendingImport {
                    module: abs.clone(),
                    attr: Some(name),
                    also_load: None,
                    span: Span::of(n),
                };
                self.defer_import(frame, &alias, deferred);
            }
            return Ok(Flow::Normal);
        }
        if let Some(msg) = self.module_not_found(&abs) {
            return Err(self.error(frame, Span::of(module_node), codes::RAISED, msg));
        }
        let base = self.import_module(&abs);
        if wildcard {
            if let Value::Module(ns) = &base {
                let vars: Vec<(String, Value)> = ns
                    .vars
                    .borrow()
                    .iter()
                    .filter(|(k, _)| !k.starts_with('_'))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                for (k, v) in vars {
                    self.set_var(frame, &k, v);
                }
                if frame.locals.is_none() {
                    let pending: Vec<(String, PendingImport)> = ns
                        .pending
                        .borrow()
                        .iter()
                        .filter(|(k, _)| !k.starts_with('_'))
                        .map(|(k, p)| (k.clone(), p.clone()))
                        .collect();
                    for (k, p) in pending {
                        frame.globals.vars.borrow_mut().shift_remove(&k);
                        frame.globals.pending.borrow_mut().insert(k, p);
                    }
                }
            }
            return Ok(Flow::Normal);
        }
        for n in names.drain(..) {
            let (name, alias) = import_name_alias(n, &src);
            let v = match &base {
                Value::Module(ns) => match self.module_attr(ns, &name) {
                    Some(v) => v,
                    None => {
                        self.note(
                            frame.file_id,
                            Span::of(n),
                            codes::UNRESOLVED_NAME,
                            format!("`{name}` not found in `{abs}`"),
                        );
                        Value::unknown(format!("`{name}` not found in `{abs}`"))
                    }
                },
                _ => super::attr::external_attr(&abs, &name),
            };
            self.set_var(frame, &alias, v);
        }
        Ok(Flow::Normal)
    }

    fn exec_decorated(&mut self, frame: &Frame, node: Node) -> EResult<Flow> {
        let src = &*frame.file.text;
        let Some(def) = node.field("definition") else {
            return Ok(Flow::Normal);
        };
        let mut kind = FnKind::Plain;
        let decorators: Vec<Node> = crate::syntax::named_children(node)
            .filter(|n| n.kind_name() == "decorator")
            .collect();
        for d in &decorators {
            let t = text(*d, &src).trim_start_matches('@').trim();
            kind = match t {
                "staticmethod" => FnKind::StaticMethod,
                "classmethod" => FnKind::ClassMethod,
                "property" | "functools.cached_property" | "cached_property" => FnKind::Property,
                _ => kind,
            };
        }
        match def.kind_name() {
            "function_definition" => {
                let f = self.make_function(frame, def, kind)?;
                let name = f.name.clone();
                if decorators.iter().any(|d| {
                    let t = text(*d, &src).trim_start_matches('@').trim();
                    matches!(t, "functools.cached_property" | "cached_property")
                }) {
                    self.mark_cached_property(&f);
                }
                if let Some(prop) = decorators.iter().find_map(|d| {
                    text(*d, &src)
                        .trim_start_matches('@')
                        .strip_suffix(".setter")
                }) {
                    // `@x.setter`: the name stays bound to the getter, which now has a setter.
                    let span = Span::of(def);
                    if let Ok(Value::Function(getter)) = self.lookup(frame, prop.trim(), span) {
                        if getter.kind == FnKind::Property {
                            let mut setter = f;
                            setter.kind = FnKind::Plain;
                            self.property_setters
                                .insert((getter.file_id, getter.span), Rc::new(setter));
                        }
                    }
                    return Ok(Flow::Normal);
                }
                if decorators
                    .iter()
                    .any(|d| text(*d, &src).contains(".deleter"))
                {
                    return Ok(Flow::Normal);
                }
                let v = self.apply_decorators(frame, &decorators, Value::Function(Rc::new(f)))?;
                self.set_var(frame, &name, v);
                Ok(Flow::Normal)
            }
            "class_definition" => {
                let c = self.make_class(frame, def)?;
                let v = self.apply_decorators(frame, &decorators, c)?;
                self.set_var(frame, &class_name(def, &src), v);
                Ok(Flow::Normal)
            }
            _ => Ok(Flow::Normal),
        }
    }

    pub fn make_function(&mut self, frame: &Frame, node: Node, kind: FnKind) -> EResult<Function> {
        let src = &*frame.file.text;
        let is_lambda = node.kind_name() == "lambda";
        let name = if is_lambda {
            "<lambda>".to_string()
        } else {
            node.field("name")
                .map(|n| text(n, &src).to_string())
                .unwrap_or_default()
        };
        let mut params = Vec::new();
        if let Some(plist) = node.field("parameters") {
            let mut seen_star = false;
            let kids: Vec<Node> = crate::syntax::named_children(plist).collect();
            for p in kids {
                let (pname, pkind, default) = match p.kind_name() {
                    "identifier" => (
                        text(p, &src).to_string(),
                        if seen_star {
                            ParamKind::KeywordOnly
                        } else {
                            ParamKind::PositionalOrKeyword
                        },
                        None,
                    ),
                    "typed_parameter" => {
                        let inner = p.named_child(0);
                        match inner.map(|i| i.kind_name()) {
                            Some("list_splat_pattern") => {
                                seen_star = true;
                                (
                                    inner
                                        .and_then(|i| i.named_child(0))
                                        .map(|i| text(i, &src).to_string())
                                        .unwrap_or_default(),
                                    ParamKind::VarPositional,
                                    None,
                                )
                            }
                            Some("dictionary_splat_pattern") => (
                                inner
                                    .and_then(|i| i.named_child(0))
                                    .map(|i| text(i, &src).to_string())
                                    .unwrap_or_default(),
                                ParamKind::VarKeyword,
                                None,
                            ),
                            _ => (
                                inner.map(|i| text(i, &src).to_string()).unwrap_or_default(),
                                if seen_star {
                                    ParamKind::KeywordOnly
                                } else {
                                    ParamKind::PositionalOrKeyword
                                },
                                None,
                            ),
                        }
                    }
                    "default_parameter" | "typed_default_parameter" => {
                        let n = p
                            .field("name")
                            .map(|n| text(n, &src).to_string())
                            .unwrap_or_default();
                        let d = match p.field("value") {
                            Some(v) => Some(
                                self.eval_expr(frame, v)
                                    .unwrap_or_else(|e| Value::unknown(e.message)),
                            ),
                            None => None,
                        };
                        (
                            n,
                            if seen_star {
                                ParamKind::KeywordOnly
                            } else {
                                ParamKind::PositionalOrKeyword
                            },
                            d,
                        )
                    }
                    "list_splat_pattern" => {
                        seen_star = true;
                        (
                            p.named_child(0)
                                .map(|i| text(i, &src).to_string())
                                .unwrap_or_default(),
                            ParamKind::VarPositional,
                            None,
                        )
                    }
                    "dictionary_splat_pattern" => (
                        p.named_child(0)
                            .map(|i| text(i, &src).to_string())
                            .unwrap_or_default(),
                        ParamKind::VarKeyword,
                        None,
                    ),
                    "keyword_separator" => {
                        seen_star = true;
                        continue;
                    }
                    "positional_separator" => {
                        for prev in params.iter_mut() {
                            let prev: &mut FnParam = prev;
                            if prev.kind == ParamKind::PositionalOrKeyword {
                                prev.kind = ParamKind::PositionalOnly;
                            }
                        }
                        continue;
                    }
                    _ => continue,
                };
                params.push(FnParam {
                    name: pname,
                    kind: pkind,
                    default,
                });
            }
        }
        let qualname = match &frame.class {
            Some(c) => format!("{}.{}", c.qualname, name),
            None => name.clone(),
        };
        // The substring test keeps the tree walk off the common path: every function of every
        // imported module is defined on each analysis, few of them mention `yield` at all.
        let is_generator = !is_lambda
            && node
                .field("body")
                .is_some_and(|b| text(b, &frame.file.text).contains("yield") && contains_yield(b));
        Ok(Function {
            name,
            qualname,
            file: frame.file.clone(),
            file_id: frame.file_id,
            span: Span::of(node),
            params,
            closure: Scope::enclosing_for_definitions(&frame.locals),
            globals: frame.globals.clone(),
            kind,
            is_lambda,
            is_generator,
            compiler_disabled: Default::default(),
            native: Default::default(),
            attrs: Default::default(),
            wrapper: None,
        })
    }

    /// A class statement's value: the class `type` makes, or what its metaclass's call
    /// returns.
    fn make_class(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let src = &*frame.file.text;
        let name = node
            .field("name")
            .map(|n| text(n, &src).to_string())
            .unwrap_or_default();
        let mut bases = Vec::new();
        let mut keywords: Kwargs = Vec::new();
        let mut explicit_metaclass = None;
        if let Some(args) = node.field("superclasses") {
            let kids = operands(args);
            for b in kids {
                if b.kind_name() == "keyword_argument" {
                    let (Some(n), Some(v)) = (b.field("name"), b.field("value")) else {
                        continue;
                    };
                    let v = self.eval_expr(frame, v)?;
                    match text(n, &src) {
                        "metaclass" => explicit_metaclass = Some(v),
                        key => keywords.push((key.to_string(), v)),
                    }
                    continue;
                }
                let v = self
                    .eval_expr(frame, b)
                    .unwrap_or_else(|e| Value::unknown(e.message));
                let v = self.mro_entry(v);
                let v = self.bundled_base(&v).unwrap_or(v);
                // Generic aliases like `Generic[T]` or `nn.Module` subscripted are just the base.
                bases.push(v);
            }
        }
        let metaclass = self.metaclass_of(explicit_metaclass, &bases);
        let qualname = match &frame.class {
            Some(c) => format!("{}.{}", c.qualname, name),
            None => name.clone(),
        };
        let class = Rc::new(Class {
            name,
            qualname,
            file_id: frame.file_id,
            span: Span::of(node),
            bases,
            ns: Default::default(),
            mro: Default::default(),
            metaclass: metaclass.clone(),
        });
        self.created.class(&class);
        let mro = self.compute_mro(&class);
        *class.mro.borrow_mut() = mro;
        // A class body reads the names of the function it is defined in, not those of an
        // enclosing class body.
        let body_scope = Rc::new(Scope {
            vars: Default::default(),
            parent: Scope::enclosing_for_definitions(&frame.locals),
            class_body: true,
        });
        self.created.scope(&body_scope);
        if let Some(meta) = &metaclass {
            let prepared =
                self.prepare_namespace(frame, meta, &class, &keywords, Span::of(node))?;
            body_scope.vars.borrow_mut().extend(prepared);
        }
        let body_frame = Frame {
            locals: Some(body_scope.clone()),
            class: Some(class.clone()),
            ..frame.clone()
        };
        if let Some(body) = node.field("body") {
            let stmts: Vec<Node> = crate::syntax::named_children(body).collect();
            for s in stmts {
                if let Err(e) = self.exec_stmt(&body_frame, s) {
                    if e.code == codes::BUDGET {
                        return Err(e);
                    }
                    self.note_error(&e);
                    self.bind_unknown_targets(&body_frame, s, &e.message);
                }
            }
        }
        // Class-body names become class attributes, in definition order.
        let vars: Vec<(String, Value)> = {
            let src_order = body_scope.vars.borrow();
            let mut v: Vec<(String, Value)> = src_order
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            // the scope is a hash map: where each name is first bound in the body orders them
            let mut first_bound: std::collections::HashMap<String, usize> = Default::default();
            if let Some(body) = node.field("body") {
                for stmt in crate::syntax::named_children(body) {
                    if let Some(name) = bound_name(stmt, &frame.file.text) {
                        first_bound.entry(name).or_insert(stmt.start_byte());
                    }
                }
            }
            v.sort_by_key(|(name, val)| match first_bound.get(name) {
                Some(at) => *at,
                None => match val {
                    Value::Function(f) => f.span.start,
                    _ => 0,
                },
            });
            v
        };
        class.ns.borrow_mut().extend(vars);
        if let Some(doc) = self.docstring(&body_frame, node)? {
            class.ns.borrow_mut().insert("__doc__".into(), doc);
        }
        if let Some(meta) = metaclass {
            return self.call_metaclass(frame, &meta, &class, keywords, Span::of(node));
        }
        self.make_enum_members(&class);
        self.finish_class(frame, &class, keywords, Span::of(node))?;
        Ok(Value::Class(class))
    }

    /// The string a class body starts with, evaluated (an f-string docstring is a string too).
    fn docstring(&mut self, frame: &Frame, class: Node) -> EResult<Option<Value>> {
        let first = class
            .field("body")
            .and_then(|b| b.named_child(0))
            .filter(|s| s.kind_name() == "expression_statement")
            .and_then(|s| s.named_child(0))
            .filter(|e| e.kind_name() == "string" || e.kind_name() == "concatenated_string");
        match first {
            Some(e) => Ok(Some(self.eval_expr(frame, e)?)),
            None => Ok(None),
        }
    }

    /// C3 linearisation over classes; external bases (torch.nn.Module) end the chain.
    pub(in crate::eval) fn compute_mro(&mut self, class: &Rc<Class>) -> Vec<Value> {
        let mut seqs: Vec<Vec<Value>> = Vec::new();
        for b in &class.bases {
            match b {
                Value::Class(c) => {
                    if Rc::ptr_eq(c, class) {
                        continue;
                    }
                    seqs.push(c.mro.borrow().clone())
                }
                other => seqs.push(vec![other.clone()]),
            }
        }
        seqs.push(class.bases.clone());
        let mut out = vec![Value::Class(class.clone())];
        let same = |a: &Value, b: &Value| match (a, b) {
            (Value::Class(x), Value::Class(y)) => Rc::ptr_eq(x, y),
            (Value::External(x), Value::External(y)) => x == y,
            // a builtin base (`Exception`, `dict`) reached through two bases is one class
            (Value::Builtin(x), Value::Builtin(y)) => x == y,
            (Value::Unknown(x), Value::Unknown(y)) => Rc::ptr_eq(x, y),
            _ => false,
        };
        for _ in 0..1000 {
            seqs.retain(|s| !s.is_empty());
            if seqs.is_empty() {
                break;
            }
            let head = seqs
                .iter()
                .position(|s| !seqs.iter().any(|t| t[1..].iter().any(|x| same(x, &s[0]))));
            let Some(head_seq) = head else {
                // Inconsistent hierarchy: fall back to depth-first order.
                for s in seqs.drain(..) {
                    for v in s {
                        if !out.iter().any(|o| same(o, &v)) {
                            out.push(v);
                        }
                    }
                }
                break;
            };
            // Remove the head from its own sequence unconditionally, so even values without an
            // identity (unknown bases) make progress.
            let head = seqs[head_seq].remove(0);
            for s in seqs.iter_mut() {
                if !s.is_empty() && same(&s[0], &head) {
                    s.remove(0);
                }
            }
            if !out.iter().any(|o| same(o, &head)) {
                out.push(head);
            }
        }
        out
    }
}

/// The name a class statement binds.
fn class_name(node: Node, src: &str) -> String {
    node.field("name")
        .map(|n| text(n, src).to_string())
        .unwrap_or_default()
}

fn compact(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && *c != '\\')
        .collect()
}

pub(super) fn truncate(s: &str, n: usize) -> String {
    let s = s.replace(['\n', '\r'], " ");
    if s.chars().count() <= n {
        s
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

pub(crate) fn contains_yield(node: Node) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind_name() {
            "yield" => return true,
            "function_definition" | "lambda" | "class_definition" => {
                if n.id() != node.id() {
                    continue;
                }
            }
            _ => {}
        }
        stack.extend(crate::syntax::children(n));
    }
    false
}

type Snapshot = Option<crate::eval::value::Locals>;

fn snapshot(frame: &Frame) -> Snapshot {
    frame.locals.as_ref().map(|l| l.vars.borrow().clone())
}

fn snapshot_now(frame: &Frame) -> Snapshot {
    snapshot(frame)
}

fn restore(frame: &Frame, snap: &Snapshot) {
    if let (Some(l), Some(s)) = (&frame.locals, snap) {
        *l.vars.borrow_mut() = s.clone();
    }
}

fn else_flow_if_then_normal(_else_flow: Flow) -> Flow {
    Flow::Normal
}

/// `name` and the name it is bound to in `from m import name [as alias]`.
fn import_name_alias(n: Node, src: &str) -> (String, String) {
    match n.kind_name() {
        "aliased_import" => (
            compact(n.field("name").map(|m| text(m, src)).unwrap_or_default()),
            n.field("alias")
                .map(|m| text(m, src).to_string())
                .unwrap_or_default(),
        ),
        _ => (compact(text(n, src)), text(n, src).to_string()),
    }
}

/// An `if` condition true whenever `TYPE_CHECKING` (or `typing.TYPE_CHECKING`) is: the flag
/// itself, or an `or` with it as an operand (diffusers' `TYPE_CHECKING or
/// DIFFUSERS_SLOW_IMPORT`), which type checkers read as the same block.
fn is_type_checking(cond: Node, src: &str) -> bool {
    match cond.kind_name() {
        "parenthesized_expression" => {
            crate::syntax::named_children(cond).any(|inner| is_type_checking(inner, src))
        }
        "boolean_operator" => {
            let is_or = cond
                .field("operator")
                .is_some_and(|op| text(op, src) == "or");
            is_or
                && [cond.field("left"), cond.field("right")]
                    .into_iter()
                    .flatten()
                    .any(|operand| is_type_checking(operand, src))
        }
        _ => {
            let t = text(cond, src);
            t == "TYPE_CHECKING" || t.ends_with(".TYPE_CHECKING")
        }
    }
}

fn collect_import_froms<'t>(node: Node<'t>, out: &mut Vec<Node<'t>>) {
    for child in crate::syntax::named_children(node) {
        match child.kind_name() {
            "import_from_statement" => out.push(child),
            "function_definition" | "class_definition" | "decorated_definition" => {}
            _ => collect_import_froms(child, out),
        }
    }
}

/// What a function scope binds a name it declares `global` to: lookups and assignments pass
/// it by for the module's binding.
pub(in crate::eval) const GLOBAL_MARK: &str = "<declared global>";
/// Likewise for `nonlocal`: the enclosing function's binding.
pub(in crate::eval) const NONLOCAL_MARK: &str = "<declared nonlocal>";

/// The plain names an assignment target binds: `x`, each name of `a, (b, c)`; not a starred
/// name (it binds a list), an attribute or an item.
fn bound_names<'t>(target: Node<'t>, out: &mut Vec<Node<'t>>) {
    match target.kind_name() {
        "identifier" => out.push(target),
        "pattern_list"
        | "tuple_pattern"
        | "list_pattern"
        | "tuple"
        | "list"
        | "parenthesized_expression" => {
            for k in operands(target) {
                bound_names(k, out);
            }
        }
        _ => {}
    }
}

/// What `name` holds in `frame` after an assignment to it: the innermost scope binding it
/// (past `global` and `nonlocal` declarations), else the module's.
fn bound_value(frame: &Frame, name: &str) -> Option<Value> {
    let mut scope = frame.locals.clone();
    while let Some(s) = scope {
        if let Some(v) = s.vars.borrow().get(name) {
            match scope_mark(v) {
                None => return Some(v.clone()),
                Some(GLOBAL_MARK) => break,
                Some(_) => {}
            }
        }
        scope = s.parent.clone();
    }
    frame.globals.vars.borrow().get(name).cloned()
}

/// The declaration a scope entry stands for, if it is one.
pub(in crate::eval) fn scope_mark(v: &Value) -> Option<&'static str> {
    match v {
        Value::External(p) if &**p == GLOBAL_MARK => Some(GLOBAL_MARK),
        Value::External(p) if &**p == NONLOCAL_MARK => Some(NONLOCAL_MARK),
        _ => None,
    }
}

/// The name a class-body statement binds first: `x = …`, `x: T = …`, `def x`, `class x`
/// (decorated or not).
fn bound_name(stmt: Node, src: &str) -> Option<String> {
    let target = match stmt.kind_name() {
        "expression_statement" => {
            let e = stmt.named_child(0)?;
            if e.kind_name() != "assignment" {
                return None;
            }
            e.field("left")?
        }
        "function_definition" | "class_definition" => stmt.field("name")?,
        "decorated_definition" => stmt.field("definition")?.field("name")?,
        _ => return None,
    };
    (target.kind_name() == "identifier").then(|| text(target, src).to_string())
}
