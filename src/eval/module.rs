//! Module-level evaluation: a file's top level runs once, lazily, when something imports it.
//! A failing top-level statement is recorded and its targets become unknown; the rest of the
//! file still loads, so one unsupported line does not hide every class below it.

use crate::syntax::KindExt;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::value::{LoadState, ModuleNs, ObjKind, Unknown, Value};
use super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::semantic::FileId;
use crate::syntax::{FieldExt, Span};

/// Packages whose semantics come from the catalogue, never from reading their source, even
/// when they sit under the project root (a `site-packages` root holds torch itself).
const ALWAYS_EXTERNAL: &[&str] = &[
    "torch",
    "numpy",
    "typing",
    "typing_extensions",
    "functools",
    "collections",
    "math",
    "copy",
    "warnings",
    "logging",
    "time",
    "dataclasses",
    "enum",
    // Version comparisons (`version.parse(v) >= version.parse("2.5")`) run the bundled
    // `packaging.version`, not the package's regular-expression parser.
    "packaging",
    "abc",
    "itertools",
    "os",
    "sys",
    "inspect",
    "re",
    "operator",
    "builtins",
    "types",
    "contextlib",
    "importlib",
    "weakref",
    "__future__",
    "PIL",
    "scipy",
    // A drop-in for `re` implemented in C: its Python layer only parses patterns, and running
    // that parser for every docstring transformers' decorators rewrite cost seconds per file.
    "regex",
    // Network clients (huggingface_hub's downloads): no bearing on any graph, and evaluating
    // their module level for every analysed file doubled the cost of checking transformers.
    "httpx",
    "httpx2",
    "httpcore",
    "h11",
    "anyio",
    "requests",
    "urllib3",
    "aiohttp",
    "certifi",
    // Dynamo traces einops' Python (einops 0.8 stops registering `allow_in_graph` from torch
    // 2.8 on); `stdlib::einops` follows its recipe natively, without evaluating its parser,
    // and builds its torch layers `Rearrange` / `Reduce` (`stdlib/einops/layers.rs`) and
    // `EinMix` (`stdlib/einops/einmix.rs`, its parameters and rearrange children). Another
    // einops class is an unknown value: called, an opaque module call (FX903).
    "einops",
];

/// Dynamo's THIRDPARTY_SKIPLIST (`torch/_dynamo/trace_rules.py`, torch 2.15): it never traces
/// into these, so neither does the evaluator (they stay external values), and `breaks` reports
/// a call on traced values into them as a possible break (FX190). `numpy` is left out: Dynamo
/// models it (the numpy rule says where it does not).
pub const DYNAMO_THIRDPARTY_SKIPLIST: &[&str] = &[
    "fx2trt_oss",
    "hypothesis",
    "networkx",
    "onnx",
    "onnxruntime",
    "onnx_tf",
    "pandas",
    "sklearn",
    "tabulate",
    "tensorflow",
    "tensorrt",
    "torch2trt",
    "tqdm",
    "tree",
    "tvm",
    "xarray",
];

/// What a reusing interpreter knows about the modules it evaluated (see
/// `Interp::enable_module_reuse`).
#[derive(Default)]
pub(crate) struct Reuse {
    costs: std::collections::HashMap<FileId, LoadCost>,
    /// The modules the current analysis has reached.
    pub(crate) reached: std::collections::HashSet<FileId>,
    /// The evaluations under way, innermost last.
    loading: Vec<Loading>,
}

/// One module's evaluation: the steps its own statements took, and the modules it
/// evaluated along the way (a fresh analysis reaching it evaluates those too).
struct LoadCost {
    own_steps: u64,
    nested: Vec<FileId>,
}

struct Loading {
    file: FileId,
    started_at: u64,
    nested_steps: u64,
    nested: Vec<FileId>,
}

impl Interp {
    pub fn load_module(&mut self, file_id: FileId) -> EResult<Rc<ModuleNs>> {
        if let Some(ns) = self.modules.get(&file_id) {
            let ns = ns.clone();
            if let Some(parent) = self.reuse.as_mut().and_then(|r| r.loading.last_mut()) {
                parent.nested.push(file_id);
            }
            self.reach_reused(file_id);
            return Ok(ns);
        }
        if let Some(r) = &mut self.reuse {
            r.reached.insert(file_id);
            r.loading.push(Loading {
                file: file_id,
                started_at: self.steps,
                nested_steps: 0,
                nested: vec![],
            });
        }
        let result = {
            let _clock = crate::phase_clock::enter(crate::phase_clock::Phase::Imports);
            self.evaluate_module(file_id)
        };
        if let Some(r) = &mut self.reuse {
            if let Some(done) = r.loading.pop() {
                debug_assert_eq!(done.file, file_id);
                let inclusive = self.steps.saturating_sub(done.started_at);
                r.costs.insert(
                    file_id,
                    LoadCost {
                        own_steps: inclusive.saturating_sub(done.nested_steps),
                        nested: done.nested,
                    },
                );
                if let Some(parent) = r.loading.last_mut() {
                    parent.nested_steps += inclusive;
                    parent.nested.push(file_id);
                }
            }
        }
        result
    }

    /// The first time an analysis reaches a module an earlier analysis evaluated: the
    /// steps that evaluation took, and the modules it evaluated, count as this analysis's.
    fn reach_reused(&mut self, file_id: FileId) {
        let Some(r) = &mut self.reuse else { return };
        let mut todo = vec![file_id];
        while let Some(id) = todo.pop() {
            if !r.reached.insert(id) {
                continue;
            }
            if let Some(cost) = r.costs.get(&id) {
                self.steps += cost.own_steps;
                todo.extend(cost.nested.iter().copied());
            }
        }
    }

    fn evaluate_module(&mut self, file_id: FileId) -> EResult<Rc<ModuleNs>> {
        let file = self.project.file(file_id);
        let ns = Rc::new(ModuleNs {
            name: file.module.clone(),
            file_id,
            file: file.clone(),
            vars: RefCell::new(Default::default()),
            pending: RefCell::new(Default::default()),
            star_sources: RefCell::new(Vec::new()),
            state: Cell::new(LoadState::Loading),
        });
        ns.vars
            .borrow_mut()
            .insert("__name__".into(), Value::str(&file.module));
        self.modules.insert(file_id, ns.clone());
        for (span, msg) in &file.syntax_errors {
            self.note(file_id, *span, codes::SYNTAX_ERROR, msg.clone());
        }
        let frame = Frame {
            file: file.clone(),
            file_id,
            globals: ns.clone(),
            locals: None,
            class: None,
            receiver: None,
        };
        // A deferred import forced while tracing a forward runs a module's top level, which
        // is not part of the traced program: its statements must not reach the graph. Nor is
        // it part of a constructor that imported it: what its top level could not follow
        // (and bound as unknown) leaves that instance complete.
        let tracer = self.tracer.take();
        let init_skips = std::mem::replace(&mut self.init_skips, super::InitSkips::outside());
        let tree = file.tree();
        let root = tree.root_node();
        let stmts: Vec<_> = crate::syntax::named_children(root).collect();
        for stmt in stmts {
            if !self.exec_module_stmt(&frame, stmt) {
                break;
            }
        }
        self.tracer = tracer;
        // a module's top level set its globals: a replay must not rely on what it read before
        self.note_replay_write(0);
        self.init_skips = init_skips;
        ns.state.set(LoadState::Loaded);
        Ok(ns)
    }

    /// Runs one top-level statement of the module `frame` is at, as its evaluation does: a
    /// failing statement is recorded and its targets become unknown. False when the budget
    /// ran out (the module stops there).
    pub fn exec_module_stmt(&mut self, frame: &Frame, stmt: tree_sitter::Node) -> bool {
        if stmt.kind_name() == "ERROR" || stmt.is_missing() {
            return true;
        }
        let Err(e) = self.exec_stmt(frame, stmt) else {
            return true;
        };
        self.note_error(&e);
        if e.code == codes::BUDGET {
            return false;
        }
        self.bind_unknown_targets(frame, stmt, &e.message);
        true
    }

    /// The value of `import a.b.c` for the dotted path: a project module or an external name.
    pub fn import_module(&mut self, dotted: &str) -> Value {
        let top = dotted.split('.').next().unwrap_or(dotted);
        if ALWAYS_EXTERNAL.contains(&top) || DYNAMO_THIRDPARTY_SKIPLIST.contains(&top) {
            return Value::External(Rc::from(dotted));
        }
        match self.project.resolve_module(dotted) {
            Some(id) => match self.load_module(id) {
                Ok(ns) => Value::Module(ns),
                Err(e) => Value::unknown(e.message),
            },
            None => Value::External(Rc::from(dotted)),
        }
    }

    /// `ModuleNotFoundError` for `import dotted` when its top-level package is nowhere the
    /// import system would look: not under the root, not installed in the environment (as
    /// source or compiled), not in the standard library, and not a package the evaluator
    /// models. None whenever that cannot be told (no environment, or one that does not list
    /// its standard library): the import then stays an external name. `try: from apex...
    /// import X / except ImportError:` takes its fallback, as in the user's environment.
    pub(super) fn module_not_found(&self, dotted: &str) -> Option<String> {
        let top = dotted.split('.').next().unwrap_or(dotted);
        if top.is_empty()
            || ALWAYS_EXTERNAL.contains(&top)
            || DYNAMO_THIRDPARTY_SKIPLIST.contains(&top)
            || crate::semantic::environment::CATALOGUE_PACKAGES.contains(&top)
        {
            return None;
        }
        let env = self.project.environment()?;
        if env.stdlib_modules.is_empty() || env.stdlib_modules.iter().any(|m| m == top) {
            return None;
        }
        if self.project.module_exists(top) || self.project.library_module(top).is_some() {
            return None;
        }
        Some(format!("ModuleNotFoundError: No module named '{top}'"))
    }

    /// Whether the evaluator stands in for the package `dotted` belongs to (torch, the
    /// standard library's modelled modules), whether or not the environment has its source.
    pub(super) fn is_modelled_package(&self, dotted: &str) -> bool {
        let top = dotted.split('.').next().unwrap_or(dotted);
        ALWAYS_EXTERNAL.contains(&top)
    }

    /// Whether `import dotted` would evaluate a project file not loaded yet: only then is
    /// deferring it worth anything.
    pub(super) fn import_is_deferrable(&self, dotted: &str) -> bool {
        let top = dotted.split('.').next().unwrap_or(dotted);
        if ALWAYS_EXTERNAL.contains(&top) || DYNAMO_THIRDPARTY_SKIPLIST.contains(&top) {
            return false;
        }
        match self.project.is_loaded(dotted) {
            Some(id) => !self.module_reached(id),
            None => self.project.module_exists(dotted),
        }
    }

    /// Evaluates a deferred import of `ns` bound to `name`, if there is one, and binds the result.
    pub(super) fn force_pending(&mut self, ns: &Rc<ModuleNs>, name: &str) -> Option<Value> {
        let p = ns.pending.borrow_mut().remove(name)?;
        let v = match &p.attr {
            None => {
                if let Some(sub) = &p.also_load {
                    let _ = self.import_module(sub);
                }
                self.import_module(&p.module)
            }
            Some(attr) => match self.import_module(&p.module) {
                Value::Module(m) => match self.module_attr(&m, attr) {
                    Some(v) => v,
                    None => {
                        let msg = format!("`{attr}` not found in `{}`", p.module);
                        self.note(ns.file_id, p.span, codes::UNRESOLVED_NAME, msg.clone());
                        Value::unknown(msg)
                    }
                },
                Value::Unknown(u) => Value::Unknown(u),
                _ => super::attr::external_attr(&p.module, attr),
            },
        };
        ns.vars.borrow_mut().insert(name.to_string(), v.clone());
        Some(v)
    }

    pub(super) fn from_star_sources(&mut self, ns: &Rc<ModuleNs>, name: &str) -> Option<Value> {
        if name.starts_with('_') {
            return None;
        }
        let sources = ns.star_sources.borrow().clone();
        for module in sources {
            // Read the source's text, then its syntax, before running it: evaluating every
            // star source of a package (hundreds in transformers' `models/__init__`) to find
            // one name is the cost deferral exists to avoid, and parsing each would keep its
            // tree in the project.
            if let Some(text) = self.project.unloaded_text(&module) {
                if !text_may_bind(&text, name) {
                    continue;
                }
            }
            if let Some(id) = self.project.resolve_module(&module) {
                let file = self.project.file(id);
                if !self.module_reached(id)
                    && !may_bind_at_top_level(file.tree().root_node(), &file.text, name)
                {
                    continue;
                }
            }
            if let Value::Module(m) = self.import_module(&module) {
                if m.vars.borrow().contains_key(name) || m.pending.borrow().contains_key(name) {
                    let v = self.module_attr(&m, name)?;
                    ns.vars.borrow_mut().insert(name.to_string(), v.clone());
                    return Some(v);
                }
                // A star source re-exporting its own star sources (transformers'
                // `models/__init__` → `models/auto/__init__` → `configuration_auto`); a cycle of
                // star imports is searched once.
                let key = (m.file_id, name.to_string());
                if !m.star_sources.borrow().is_empty() && !self.star_lookups.contains(&key) {
                    self.star_lookups.push(key);
                    let found = self.from_star_sources(&m, name);
                    self.star_lookups.pop();
                    if let Some(v) = found {
                        ns.vars.borrow_mut().insert(name.to_string(), v.clone());
                        return Some(v);
                    }
                }
            }
        }
        None
    }

    /// Attribute of a project module, importing a submodule (`pkg.sub`) when not yet bound.
    pub fn module_attr(&mut self, ns: &Rc<ModuleNs>, name: &str) -> Option<Value> {
        if let Some(v) = ns.vars.borrow().get(name) {
            return Some(v.clone());
        }
        if let Some(v) = self.force_pending(ns, name) {
            return Some(v);
        }
        let sub = if ns.name.is_empty() {
            name.to_string()
        } else {
            format!("{}.{}", ns.name, name)
        };
        let Some(id) = self.project.resolve_module(&sub) else {
            return self
                .from_star_sources(ns, name)
                .or_else(|| self.module_getattr(ns, name));
        };
        let v = match self.load_module(id) {
            Ok(m) => Value::Module(m),
            Err(e) => Value::unknown(e.message),
        };
        ns.vars.borrow_mut().insert(name.to_string(), v.clone());
        Some(v)
    }

    /// A lazy module's `def __getattr__(name)` (PEP 562), asked for a name the module does
    /// not bind: how packages defer importing their submodules until first use.
    fn module_getattr(&mut self, ns: &Rc<ModuleNs>, name: &str) -> Option<Value> {
        if name.starts_with("__") {
            return None;
        }
        let Some(Value::Function(getattr)) = ns.vars.borrow().get("__getattr__").cloned() else {
            return None;
        };
        let frame = Frame {
            file: ns.file.clone(),
            file_id: ns.file_id,
            globals: ns.clone(),
            locals: None,
            class: None,
            receiver: None,
        };
        let span = self.definition_of(&getattr).2;
        match self.call_function(&frame, &getattr, None, vec![Value::str(name)], vec![], span) {
            Ok(v) => Some(v),
            // `raise AttributeError(...)`: the name does not exist.
            Err(e) if e.code == codes::RAISED => None,
            Err(e) => {
                self.note_error(&e);
                Some(Value::unknown(e.message))
            }
        }
    }

    /// After a failed statement, its assignment targets and definitions become unknown, so
    /// later code sees "unknown" rather than "undefined".
    pub(super) fn bind_unknown_targets(
        &mut self,
        frame: &Frame,
        stmt: tree_sitter::Node,
        reason: &str,
    ) {
        let src = &*frame.file.text;
        let mut names = Vec::new();
        if frame.locals.is_some() {
            // In a function, a statement that did not run may have bound names in its blocks
            // and grown containers (`for i in range(depth): self.blocks.append(...)`): each of
            // those is unknown now, not the value it had before (an empty list would drop
            // every call a later loop over it makes).
            let mut receivers = Vec::new();
            collect_effects(stmt, &src, &mut names, &mut receivers);
            self.forget_receivers(frame, &receivers, reason);
        } else {
            collect_bound_names(stmt, &src, &mut names);
        }
        self.forget_names(frame, names, reason, None);
    }

    /// After a loop whose body ran once in place of an unknown number of times: what the body
    /// binds or grows is unknown after it, with `reason` naming the loop.
    pub(super) fn forget_loop_effects(
        &mut self,
        frame: &Frame,
        stmt: tree_sitter::Node,
        reason: &str,
    ) {
        let src = &*frame.file.text;
        let (mut names, mut receivers) = (Vec::new(), Vec::new());
        collect_effects(stmt, &src, &mut names, &mut receivers);
        self.forget_receivers(frame, &receivers, reason);
        self.forget_names(frame, names, reason, Some(Span::of(stmt)));
    }

    /// The containers named `x` or `self.x` whose contents a statement that did not run as
    /// written changed become unknown; a module container keeps its path, so a loop over it
    /// still names the calls it makes. `self` itself and values that are no container stay.
    fn forget_receivers(&mut self, frame: &Frame, receivers: &[String], reason: &str) {
        let is_container = |v: &Value| match v {
            Value::List(_) | Value::Dict(_) => true,
            Value::Object(o) => !o.is_module() || matches!(o.kind, ObjKind::Container(_)),
            _ => false,
        };
        for r in receivers {
            let unknown = |path: Option<String>| {
                Value::Unknown(Rc::new(Unknown {
                    reason: format!("`{r}` could not be evaluated: {reason}"),
                    path,
                    spread: false,
                    made_by: None,
                }))
            };
            match r.strip_prefix("self.") {
                Some(attr) => {
                    let Some(Value::Object(o)) = &frame.receiver else {
                        continue;
                    };
                    let Some(v) = o.attrs.borrow().get(attr).cloned() else {
                        continue;
                    };
                    if is_container(&v) {
                        let path = matches!(&v, Value::Object(c) if c.is_module())
                            .then(|| attr.to_string());
                        o.attrs.borrow_mut().insert(attr.to_string(), unknown(path));
                    }
                }
                None => {
                    let Some(scope) = &frame.locals else {
                        continue;
                    };
                    let v = scope.vars.borrow().get(r.as_str()).cloned();
                    if r != "self" && v.as_ref().is_some_and(is_container) {
                        self.set_var(frame, r, unknown(None));
                    }
                }
            }
        }
    }

    /// The names a statement that did not run as written binds become unknown. After a loop
    /// traced once in a forward (`loop_at`), a name holding a tensor of the graph becomes an
    /// opaque node reading it instead: still a tensor (a branch on it is data-dependent,
    /// `.item()` on it a break), but neither its value nor its shape is the once-traced one.
    fn forget_names(
        &mut self,
        frame: &Frame,
        names: Vec<String>,
        reason: &str,
        loop_at: Option<Span>,
    ) {
        for n in names {
            let opaque = loop_at.and_then(|span| self.opaque_after_loop(frame, &n, reason, span));
            let v = opaque.unwrap_or_else(|| {
                Value::unknown(format!("`{n}` could not be evaluated: {reason}"))
            });
            match n.strip_prefix("self.") {
                // `self.layers = <unsupported>`: the attribute exists, its value is unknown.
                Some(attr) => {
                    if let Some(Value::Object(o)) = &frame.receiver {
                        o.attrs.borrow_mut().insert(attr.to_string(), v);
                    }
                }
                None => self.set_var(frame, &n, v),
            }
        }
    }

    /// The opaque node standing for `name` after a loop traced once, when `name` holds a
    /// tensor of the graph; None otherwise.
    fn opaque_after_loop(
        &mut self,
        frame: &Frame,
        name: &str,
        reason: &str,
        span: Span,
    ) -> Option<Value> {
        let current = match name.strip_prefix("self.") {
            Some(attr) => match &frame.receiver {
                Some(Value::Object(o)) => o.attrs.borrow().get(attr).cloned(),
                _ => None,
            },
            None => frame
                .locals
                .as_ref()
                .and_then(|s| s.vars.borrow().get(name).cloned()),
        };
        let Some(Value::Proxy(id)) = current else {
            return None;
        };
        let tensor = self
            .tracer
            .as_ref()
            .is_some_and(|t| t.graph.contains(id) && t.graph.node(id).meta.as_tensor().is_some());
        if !tensor {
            return None;
        }
        let target = format!("<unknown: `{name}` after {reason}>");
        self.trace_function(frame, &target, vec![Value::Proxy(id)], vec![], span)
            .ok()
    }
}

/// Whether a module's text may bind `name` at its top level, as far as its characters tell:
/// a name bound there appears in the text, unless a star import brings it in. Over-approximates
/// [`may_bind_at_top_level`], which reads the parsed file.
fn text_may_bind(text: &str, name: &str) -> bool {
    text.contains(name) || has_wildcard_import(text)
}

/// Whether `import` is followed by `*` anywhere, across spaces, parentheses and line
/// continuations.
fn has_wildcard_import(text: &str) -> bool {
    text.match_indices("import").any(|(at, word)| {
        let rest = &text[at + word.len()..];
        rest.trim_start_matches([' ', '\t', '\\', '\r', '\n', '('])
            .starts_with('*')
    })
}

/// Whether the statements of a block may bind `name` at module level: a definition,
/// assignment or import of it, or a star import (which may bind anything).
fn may_bind_at_top_level(block: tree_sitter::Node, src: &str, name: &str) -> bool {
    let stmts: Vec<_> = crate::syntax::named_children(block).collect();
    stmts.into_iter().any(|stmt| {
        let mut names = Vec::new();
        collect_bound_names(stmt, src, &mut names);
        if names.iter().any(|n| n == name) {
            return true;
        }
        match stmt.kind_name() {
            "import_from_statement" => {
                let star =
                    crate::syntax::named_children(stmt).any(|n| n.kind_name() == "wildcard_import");
                star
            }
            "function_definition" | "class_definition" | "decorated_definition" => false,
            _ => {
                let blocks: Vec<_> = crate::syntax::named_children(stmt).collect();
                blocks
                    .into_iter()
                    .any(|b| may_bind_at_top_level(b, src, name))
            }
        }
    })
}

fn collect_bound_names(node: tree_sitter::Node, src: &str, out: &mut Vec<String>) {
    match node.kind_name() {
        "function_definition" | "class_definition" => {
            if let Some(n) = node.field("name") {
                out.push(crate::syntax::text(n, src).to_string());
            }
        }
        "decorated_definition" => {
            if let Some(d) = node.field("definition") {
                collect_bound_names(d, src, out);
            }
        }
        "expression_statement" => {
            for ch in crate::syntax::named_children(node) {
                if ch.kind_name() == "assignment" || ch.kind_name() == "augmented_assignment" {
                    if let Some(l) = ch.field("left") {
                        collect_target_names(l, src, out);
                    }
                }
            }
        }
        "import_statement" | "import_from_statement" => {
            let mut c = node.walk();
            for ch in node.children_by_field_name("name", &mut c) {
                let n = match ch.kind_name() {
                    "aliased_import" => ch
                        .field("alias")
                        .map(|a| crate::syntax::text(a, src).to_string()),
                    _ => Some(
                        crate::syntax::text(ch, src)
                            .split('.')
                            .next()
                            .unwrap_or("")
                            .to_string(),
                    ),
                };
                out.extend(n);
            }
        }
        _ => {}
    }
}

/// What a statement may bind or change when it runs, at any depth of its blocks: the names
/// and `self.` attributes it assigns (`names`), and the containers named `x` or `self.x` it
/// changes in place (`receivers`: `out.append(y)`, `self.blocks.append(b)`, `d[k] = v`).
/// Nested functions, classes and lambdas run later, if at all, and are not entered.
fn collect_effects(
    node: tree_sitter::Node,
    src: &str,
    names: &mut Vec<String>,
    receivers: &mut Vec<String>,
) {
    let receiver_of = |n: tree_sitter::Node| -> Option<String> {
        let t = crate::syntax::text(n, src);
        let simple = match n.kind_name() {
            "identifier" => true,
            "attribute" => {
                t.starts_with("self.")
                    && n.field("object")
                        .is_some_and(|o| o.kind_name() == "identifier")
            }
            _ => false,
        };
        simple.then(|| t.to_string())
    };
    match node.kind_name() {
        "function_definition" | "class_definition" | "decorated_definition" => {
            collect_bound_names(node, src, names);
            return;
        }
        "lambda" => return,
        "import_statement" | "import_from_statement" => collect_bound_names(node, src, names),
        "assignment" | "augmented_assignment" | "for_statement" => {
            if let Some(l) = node.field("left") {
                collect_target_names(l, src, names);
                let mut targets = vec![l];
                while let Some(t) = targets.pop() {
                    match t.kind_name() {
                        "subscript" => receivers.extend(t.field("value").and_then(receiver_of)),
                        "attribute" => {
                            let obj = t.field("object");
                            if obj.is_some_and(|o| crate::syntax::text(o, src) != "self") {
                                receivers.extend(obj.and_then(receiver_of));
                            }
                        }
                        "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" => {
                            targets.extend(crate::syntax::named_children(t))
                        }
                        _ => {}
                    }
                }
            }
        }
        "named_expression" => {
            if let Some(n) = node.field("name") {
                names.push(crate::syntax::text(n, src).to_string());
            }
        }
        "delete_statement" => {
            for t in crate::syntax::named_children(node) {
                if t.kind_name() == "subscript" {
                    receivers.extend(t.field("value").and_then(receiver_of));
                }
            }
        }
        "call" => {
            if let Some(f) = node
                .field("function")
                .filter(|f| f.kind_name() == "attribute")
            {
                let method = f.field("attribute").map(|a| crate::syntax::text(a, src));
                if method.is_some_and(|m| {
                    crate::syntax::CONTAINER_MUTATORS.contains(&m) || m == "__setitem__"
                }) {
                    receivers.extend(f.field("object").and_then(receiver_of));
                }
            }
        }
        _ => {}
    }
    for ch in crate::syntax::named_children(node) {
        collect_effects(ch, src, names, receivers);
    }
}

fn collect_target_names(node: tree_sitter::Node, src: &str, out: &mut Vec<String>) {
    match node.kind_name() {
        "identifier" => out.push(crate::syntax::text(node, src).to_string()),
        "attribute"
            if crate::syntax::text(node, src).starts_with("self.")
                && node
                    .field("object")
                    .map(|o| o.kind_name() == "identifier")
                    .unwrap_or(false) =>
        {
            out.push(crate::syntax::text(node, src).to_string())
        }
        "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" => {
            for ch in crate::syntax::named_children(node) {
                collect_target_names(ch, src, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use crate::eval::value::Value;
    use crate::eval::Interp;
    use crate::semantic::Project;

    /// A constructor that imports a module (diffusers' `deprecate` importing the package
    /// root, whose `import_utils` scans the installed distributions at import time): what
    /// that module's top level could not follow is the module's limit, not the instance's.
    #[test]
    fn a_module_imported_by_a_constructor_does_not_leave_it_incomplete() {
        let helper = "import os\n\n\ndef count_entries():\n    total = 0\n    for _ in os.scandir('.'):\n        total += 1\n    return total\n\n\nENTRIES = count_entries()\nWIDTH = 4\n";
        let model = "from torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        from helper import WIDTH\n        self.fc = nn.Linear(WIDTH, 2)\n\n\nm = M()\n";
        let mut project = Project::new("/virtual");
        project.add_overlay("/virtual/helper.py", Arc::from(helper), None);
        project.add_overlay("/virtual/model.py", Arc::from(model), None);
        let file = project.load_path(Path::new("/virtual/model.py")).unwrap();
        let mut interp = Interp::new(Arc::new(project));
        let ns = interp.load_module(file).unwrap();
        let Some(Value::Object(m)) = ns.vars.borrow().get("m").cloned() else {
            panic!("m is not an instance");
        };
        assert!(m.get("fc").is_some());
        assert!(
            m.get("__incomplete__").is_none(),
            "{:?}",
            m.get("__incomplete__")
        );
    }

    /// Every module has `__spec__` and `__loader__` (diffusers' lazy `__init__` hands
    /// `module_spec=__spec__` to its `_LazyModule`): unknown, saying what they are, never a
    /// NameError.
    #[test]
    fn module_import_records_are_defined_and_unknown() {
        let (mut interp, file) =
            crate::eval::test_support::interp_over("m", "spec = __spec__\nloader = __loader__\n");
        let ns = interp.load_module(file).unwrap();
        let notes = crate::eval::test_support::notes(&interp);
        assert!(notes.is_empty(), "{notes:?}");
        for name in ["spec", "loader"] {
            match ns.vars.borrow().get(name) {
                Some(Value::Unknown(u)) => assert!(u.reason.contains("import system"), "{u:?}"),
                other => panic!("{name}: {other:?}"),
            }
        }
    }
}
