//! Stages 3–5 of the pipeline run through one small Python evaluator, as torch.fx itself does:
//! - `module` evaluates a file's top level lazily (imports across the root and the user's
//!   environment, classes, constants);
//! - constructors run on concrete values to build the module tree (`objects` holds torch.nn's
//!   side: leaf modules from the catalogue, containers, parameters);
//! - `trace` runs `forward` on `Proxy` values, recording each operation as a graph node and
//!   inlining user code exactly where torch.fx would (policy in `crate::graph::inline`);
//!   `trace::root` instantiates a class, makes the placeholders and retraces with symbolic
//!   input shapes.
//!
//! Anything it cannot evaluate becomes `Value::Unknown` with its reason and a diagnostic; every
//! loop and call is bounded (`Limits`); it never panics on input.
//!
//! Where things live:
//! - `value`: the values. `types/` holds the behaviour of each kind of builtin value (list,
//!   dict, tuple, str, numbers, tensors, proxies, a module's `globals()`, unknowns): its
//!   methods, items, iteration and operators; `Interp::call_method`, `get_item`, `iterate`
//!   and `binary_op` only dispatch on the receiver's kind. `builtins` holds Python's builtin functions, one function each.
//! - `stmt`, `expr`, `call` (calling functions, argument binding), `attr` (attribute access
//!   through the object model: descriptors, properties, `__getattr__`/`__getattribute__`/
//!   `__setattr__` overrides, metaclasses in `stdlib/metaclass.rs`), `instance_dict` (an
//!   instance's `__dict__` used in place), `free_vars` (a function's free variables, for
//!   `__closure__`).
//! - `stdlib/`: the standard library as libraries run it at import and construction time
//!   (`dataclasses`, `functools`, `contextlib`, `copy`, `itertools`, `re`, `enum`, `importlib`,
//!   `operator`, the names `math` binds, `os.environ` as unset, einops' pattern functions and
//!   its torch layers `Rearrange` / `Reduce` / `EinMix` as Dynamo traces them);
//!   `stdlib/python/` holds standard-library classes written in Python and evaluated like
//!   library source (`Mapping` mixins, `property`, `namedtuple`, `ExitStack`,
//!   `packaging.version`, what `@dataclass` generates). `stdlib/tests.rs` checks snippets
//!   against CPython values (`scripts/expect/gen_stdlib_expectations.py`), and
//!   `differential_tests` 2,000 generated programs against CPython's output.
//! - `overrides`: the one table of library functions not evaluated, each with its reason;
//!   `native_methods`: the one table of library methods run natively, each only where its
//!   source is the text it was written against (a SHA-256 of the definition).
//! - `release`: breaks the values' reference cycles when an interpreter drops.
//!
//! State about a value lives on the value (a function's `__dict__` and what the wrapper
//! `lru_cache` or `contextmanager` made of it; an exception on the error that raised it);
//! `Interp` keeps frames, limits, loaded modules and diagnostics.

mod attr;
mod builtin_subclass;
mod builtins;
mod call;
mod dict_builder;
#[cfg(test)]
mod differential_tests;
mod eager_comprehension;
mod expr;
mod free_vars;
mod instance_dict;
#[cfg(test)]
mod layout_tests;
mod module;
pub mod native_methods;
pub use module::DYNAMO_THIRDPARTY_SKIPLIST;
pub(crate) use stdlib::functools::{CACHED_PROPERTY_LOCK, CACHED_PROPERTY_LOCK_UNKNOWN_PYTHON};
pub use stdlib::importlib::MODELLED_TORCH_VERSION;
mod objects;
mod overrides;
mod release;
mod stdlib;
mod stmt;
mod types;
pub(crate) use call::find_node;
pub(crate) use stmt::contains_yield;
pub mod trace;
pub mod value;

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use crate::diagnostics::{codes, Diagnostic, Severity};
use crate::semantic::{FileId, Project, SourceFile};
use crate::syntax::Span;
pub use trace::Tracer;
pub use value::Value;
use value::{ModuleNs, Scope};

/// The statements an `__init__` skipped as analysis limits.
struct InitSkips {
    /// The call depth of the `__init__`; statements deeper than it count.
    depth: usize,
    count: u64,
    /// Why the first one was skipped: what a construction that fails reports.
    first: Option<EvalError>,
}

impl InitSkips {
    fn outside() -> InitSkips {
        InitSkips::at(usize::MAX)
    }

    fn at(depth: usize) -> InitSkips {
        InitSkips {
            depth,
            count: 0,
            first: None,
        }
    }
}

/// Why evaluation of a statement or expression stopped.
#[derive(Clone, Debug)]
pub struct EvalError {
    pub code: &'static str,
    pub message: String,
    pub file: FileId,
    pub span: Span,
    /// The Python exception a `raise` statement raised (`RAISED`): what a handler's
    /// `except E as e` binds, what decides whether `E` catches it, and what a bare `raise`
    /// re-raises. None for the errors the evaluator raises itself, known by their message.
    pub exception: Option<Value>,
}

pub type EResult<T> = Result<T, EvalError>;

pub enum Flow {
    Normal,
    Return(Value),
    Break,
    Continue,
}

/// Limits that keep evaluation bounded on hostile or enormous input.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_steps: u64,
    pub max_call_depth: usize,
    pub max_expr_depth: usize,
    pub max_collection: usize,
    /// Wall-clock limit for a batch run (a corpus sweep): a file that takes longer stops with
    /// the budget diagnostic instead of holding up the run. The step budget is the primary,
    /// deterministic bound; this one also covers whatever a step does not count.
    pub deadline: Option<std::time::Instant>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 3_000_000,
            max_call_depth: 150,
            max_expr_depth: 400,
            max_collection: 1_000_000,
            deadline: None,
        }
    }
}

/// The frame being executed: which file, which scope, which function.
#[derive(Clone)]
pub struct Frame {
    pub file: Arc<SourceFile>,
    pub file_id: FileId,
    pub globals: Rc<ModuleNs>,
    /// None at module level.
    pub locals: Option<Rc<Scope>>,
    /// The class whose body or method this is (for zero-argument `super()`).
    pub class: Option<Rc<value::Class>>,
    /// The first argument of the current method (`self`).
    pub receiver: Option<Value>,
}

/// What one analysis ran and met: the statements it executed (by file and span) and the
/// limits it noted, each even where an earlier analysis had noted it already.
#[derive(Clone, Debug, Default)]
pub struct Sites {
    pub ran: HashSet<(FileId, Span)>,
    pub noted: HashSet<(FileId, Span, &'static str)>,
}

pub struct Interp {
    pub project: Arc<Project>,
    modules: std::collections::HashMap<FileId, Rc<ModuleNs>>,
    pub limits: Limits,
    steps: u64,
    call_depth: usize,
    expr_depth: usize,
    next_object_id: usize,
    pub diagnostics: Vec<Diagnostic>,
    /// Present while tracing a forward: operations on proxies are recorded here.
    pub tracer: Option<Tracer>,
    /// Parsed catalogue expressions (parameter-shape formulas), by their text.
    expr_cache: std::collections::HashMap<String, Arc<SourceFile>>,
    /// One list per generator being run, innermost last: the values its `yield`s produced. A
    /// generator runs to completion when called, and its values are handed out as a list (the
    /// helpers models write are finite; constructors consume them whole, as in
    /// `for n, m in named_modules(model)`).
    pub(crate) yields: Vec<Vec<Value>>,
    /// The exceptions whose `except` clauses are running, innermost last: what a bare
    /// `raise` re-raises, and the `__context__` of one raised meanwhile.
    handling: Vec<EvalError>,
    /// Functions whose body now lives in a newer version of their file: an edit inside a
    /// function body leaves every value the module's top level built intact, so the language
    /// server points the old function at its new text instead of evaluating the module again.
    /// Keyed by the function's identity (file and span of its definition when it was created).
    pub redirects: HashMap<(FileId, Span), (Arc<SourceFile>, FileId, Span)>,
    /// While set, the identity of every user function called: what an analysis depended on.
    pub touched: Option<HashSet<(FileId, Span)>>,
    /// While set, the places one per-class analysis ran and the limits it met there
    /// (`analysis::followed_elsewhere` compares the classes of a file by them).
    pub sites: Option<Sites>,
    /// The factory of each live `collections.defaultdict`, with the dict (`stdlib::collections`):
    /// a dict value is its items alone, so this list says which dicts are defaultdicts; those
    /// dropped since leave it as new ones come.
    dict_factories: Vec<(std::rc::Weak<stdlib::DictItems>, Value)>,
    /// The setter of each property that has one (`@x.setter`), by the identity of its getter.
    pub(crate) property_setters: HashMap<(FileId, Span), Rc<value::Function>>,
    /// The star-import searches under way (module, name), so a cycle of star imports ends.
    star_lookups: Vec<(FileId, String)>,
    /// Functions registered with `allow_in_graph`, by identity: Dynamo records their calls as
    /// one node each (`trace::allow_in_graph`).
    allowed_in_graph: HashSet<(FileId, Span)>,
    /// The fake implementation registered for each custom op (`ns::name`), which gives a
    /// call's output shape (`trace::custom_op`).
    custom_op_fakes: HashMap<String, Value>,
    /// Attributes assigned at run time to classes outside the project, by the class's
    /// canonical path: `torch.nn.Module.smart_apply = smart_apply` (transformers 4.x) is seen
    /// by every later lookup on the class, its subclasses and their instances, as in CPython.
    pub(crate) external_class_attrs: HashMap<Rc<str>, HashMap<String, Value>>,
    /// Set when the interpreter serves one analysis after another (`analysis::warm`).
    reuse: Option<module::Reuse>,
    /// Class statements whose Python metaclass is being called, innermost last: where the
    /// class `type.__new__` makes for one is defined.
    class_statements: Vec<Rc<value::Class>>,
    /// The `__init__` being run by an instantiation: what it and the helpers it calls
    /// skipped as analysis limits (the instance is then partly constructed); an
    /// instantiation inside counts its own.
    init_skips: InitSkips,
    /// `lru_cache` wrappers' caches and `cached_property` getters.
    functools: stdlib::functools::FunctoolsState,
    /// `@contextmanager` wrappers and the generator managers `with` statements entered.
    contextlib: stdlib::contextlib::ContextlibState,
    /// Instances and call scopes, to break their cycles when the interpreter is dropped.
    pub(crate) created: release::Created,
    /// Asked with the deadline: whether the work under way is still wanted (the language
    /// server's document has not changed meanwhile). Once it says no, every step fails
    /// until [`Interp::take_cancelled`], so the evaluation unwinds as from the budget.
    pub cancel: Option<Rc<dyn Fn() -> bool>>,
    cancelled: bool,
    /// The library methods run natively where their source is the text they were written
    /// against (`native_methods`); tests add their own or clear them to compare.
    pub native_methods: std::borrow::Cow<'static, [native_methods::KnownMethod]>,
    /// What the analysed file's own callers pass its module classes' unannotated forward
    /// parameters (`trace::caller_kinds`).
    pub caller_kinds: trace::caller_kinds::CallerKinds,
}

impl Drop for Interp {
    fn drop(&mut self) {
        let mut s = release::Scrubber::default();
        for ns in self.modules.values() {
            s.module(ns);
        }
        s.created(&self.created);
        s.drain();
    }
}

impl Interp {
    pub fn new(project: Arc<Project>) -> Self {
        Interp {
            project,
            modules: Default::default(),
            limits: Limits::default(),
            steps: 0,
            call_depth: 0,
            expr_depth: 0,
            next_object_id: 0,
            diagnostics: Vec::new(),
            tracer: None,
            expr_cache: Default::default(),
            yields: Vec::new(),
            handling: Vec::new(),
            redirects: HashMap::new(),
            touched: None,
            sites: None,
            dict_factories: Vec::new(),
            property_setters: HashMap::new(),
            star_lookups: Vec::new(),
            allowed_in_graph: HashSet::new(),
            custom_op_fakes: HashMap::new(),
            external_class_attrs: HashMap::new(),
            reuse: None,
            class_statements: Vec::new(),
            init_skips: InitSkips::outside(),
            functools: Default::default(),
            contextlib: Default::default(),
            created: Default::default(),
            cancel: None,
            cancelled: false,
            native_methods: std::borrow::Cow::Borrowed(native_methods::KNOWN_METHODS),
            caller_kinds: Default::default(),
        }
    }

    /// Whether `cancel` stopped the evaluation (until [`Interp::take_cancelled`]).
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    /// Whether `cancel` stopped the evaluation since the last call; clears it.
    pub fn take_cancelled(&mut self) -> bool {
        std::mem::take(&mut self.cancelled)
    }

    /// Keeps evaluated modules for later analyses in this interpreter: each analysis then
    /// starts with [`Interp::start_next_analysis`], and a module an earlier one evaluated is
    /// handed out as it is, its evaluation's steps charged to the budget the first time the
    /// analysis reaches it, as if it had evaluated it itself.
    pub fn enable_module_reuse(&mut self) {
        self.reuse.get_or_insert_with(Default::default);
    }

    /// Readies a reusing interpreter for the next file's analysis: a fresh budget, and no
    /// module counted as reached yet.
    pub fn start_next_analysis(&mut self, deadline: Option<std::time::Instant>) {
        self.reset_for_analysis(deadline);
        if let Some(r) = &mut self.reuse {
            r.reached.clear();
        }
    }

    /// The modules the current analysis has reached, taken out, when another analysis is to
    /// run in this reusing interpreter before this one goes on (the language server's
    /// documents share one); [`Interp::restore_reached`] puts them back.
    pub fn take_reached(&mut self) -> HashSet<FileId> {
        self.reuse
            .as_mut()
            .map(|r| std::mem::take(&mut r.reached))
            .unwrap_or_default()
    }

    pub fn restore_reached(&mut self, reached: HashSet<FileId>) {
        if let Some(r) = &mut self.reuse {
            r.reached = reached;
        }
    }

    /// Readies a kept interpreter for another analysis: a fresh budget and deadline, no
    /// diagnostics or trace left from the last one.
    pub fn reset_for_analysis(&mut self, deadline: Option<std::time::Instant>) {
        self.steps = 0;
        self.call_depth = 0;
        self.expr_depth = 0;
        self.tracer = None;
        self.diagnostics.clear();
        self.limits.deadline = deadline;
    }

    /// Evaluation steps taken since the last reset, out of `limits.max_steps`.
    pub fn steps_used(&self) -> u64 {
        self.steps
    }

    /// Charges `n` steps to the budget before an evaluation (an incremental re-analysis
    /// charges what the parts it reuses cost, so the budget runs out where a full one would).
    pub fn set_steps_used(&mut self, n: u64) {
        self.steps = n;
    }

    /// What `functools.wraps` says a function wraps, if anything.
    pub fn wrapped_of(&self, f: &Rc<value::Function>) -> Option<Value> {
        f.attr("__wrapped__")
    }

    /// The function whose signature `f` has: the innermost one a chain of `functools.wraps`
    /// wrappers wraps, as `inspect.signature` and torch.fx follow `__wrapped__` (diffusers'
    /// `@register_to_config` wraps `__init__` in `inner_init(self, *args, **kwargs)`).
    pub fn signature_function(&self, f: &Rc<value::Function>) -> Rc<value::Function> {
        let mut innermost = f.clone();
        // `inspect.unwrap` stops a cycle of `__wrapped__` (a ValueError there); a chain this
        // long is one.
        for _ in 0..100 {
            match self.wrapped_of(&innermost) {
                Some(Value::Function(wrapped)) => innermost = wrapped,
                _ => break,
            }
        }
        innermost
    }

    /// Where a function's definition is now: its redirect's target, else its own.
    pub fn definition_of(&self, f: &value::Function) -> (Arc<SourceFile>, FileId, Span) {
        match self.redirects.get(&(f.file_id, f.span)) {
            Some((file, id, span)) => (file.clone(), *id, *span),
            None => (f.file.clone(), f.file_id, f.span),
        }
    }

    /// The namespace of a module already evaluated.
    pub fn loaded_module(&self, file: FileId) -> Option<Rc<ModuleNs>> {
        self.modules.get(&file).cloned()
    }

    /// Whether this analysis has evaluated (or reached a reused evaluation of) `file`:
    /// what deferring an import decides on, so a reused module is deferred where a fresh
    /// analysis would have deferred it.
    /// The modules this analysis evaluated or reached (all evaluated ones without reuse).
    pub fn modules_reached(&self) -> Vec<FileId> {
        match &self.reuse {
            Some(r) => r.reached.iter().copied().collect(),
            None => self.modules.keys().copied().collect(),
        }
    }

    pub(crate) fn module_reached(&self, file: FileId) -> bool {
        self.modules.contains_key(&file)
            && self
                .reuse
                .as_ref()
                .is_none_or(|r| r.reached.contains(&file))
    }

    fn step(&mut self, frame: &Frame, span: Span) -> EResult<()> {
        self.steps += 1;
        if let Some(sites) = self.sites.as_mut() {
            sites.ran.insert((frame.file_id, span));
        }
        if self.steps > self.limits.max_steps {
            return Err(self.error(
                frame,
                span,
                codes::BUDGET,
                "evaluation budget exceeded (a loop with a huge or unknown bound?)",
            ));
        }
        // Asked often: the next keystroke's analysis waits for the stop. The question is one
        // map lookup.
        if self.cancelled
            || (self.steps % 128 == 0 && self.cancel.as_ref().is_some_and(|still| !still()))
        {
            self.cancelled = true;
            return Err(self.error(frame, span, codes::BUDGET, "cancelled: the text changed"));
        }
        if self.steps % 1024 == 0 {
            if let Some(deadline) = self.limits.deadline {
                if std::time::Instant::now() > deadline {
                    return Err(self.error(
                        frame,
                        span,
                        codes::BUDGET,
                        "time limit exceeded (the run's per-file limit)",
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn error(
        &self,
        frame: &Frame,
        span: Span,
        code: &'static str,
        message: impl Into<String>,
    ) -> EvalError {
        EvalError {
            code,
            message: message.into(),
            file: frame.file_id,
            span,
            exception: None,
        }
    }

    /// Records an analysis limit (deduplicated by location and code).
    pub fn note(
        &mut self,
        file: FileId,
        span: Span,
        code: &'static str,
        message: impl Into<String>,
    ) {
        let message = message.into();
        if let Some(sites) = self.sites.as_mut() {
            sites.noted.insert((file, span, code));
        }
        if self
            .diagnostics
            .iter()
            .any(|d| d.file == file && d.span == span && d.code == code)
        {
            return;
        }
        let severity = match code {
            codes::SYNTAX_ERROR => Severity::Error,
            codes::UNRESOLVED_NAME | codes::UNSUPPORTED => Severity::Info,
            _ => Severity::Warning,
        };
        self.diagnostics.push(Diagnostic {
            code,
            message,
            severity,
            file,
            span,
        });
    }

    pub fn note_error(&mut self, e: &EvalError) {
        self.note(e.file, e.span, e.code, e.message.clone());
    }

    /// `message (path:line)`, as a failed construction reports its cause.
    pub fn describe_error(&self, e: &EvalError) -> String {
        self.describe_at(&e.message, e.file, e.span)
    }

    /// `message (path:line)` for a message at `span` of `file`.
    pub fn describe_at(&self, message: &str, file: FileId, span: Span) -> String {
        let f = self.project.file(file);
        let line = f.lines.line_of(span.start) + 1;
        format!("{message} ({}:{line})", f.path.display())
    }

    fn new_object_id(&mut self) -> usize {
        self.next_object_id += 1;
        self.next_object_id
    }

    /// Evaluates an expression (e.g. `ResNet(BasicBlock, [2, 2, 2, 2])`) in a file's namespace.
    pub fn eval_in_module(&mut self, file: FileId, source: &str) -> EResult<Value> {
        let ns = self.load_module(file)?;
        let tree = crate::syntax::parse(source, None);
        let parsed = Arc::new(SourceFile::new(
            Default::default(),
            ns.name.clone(),
            Arc::from(source),
            Some(tree),
        ));
        if let Some((span, msg)) = crate::syntax::first_error(&parsed.tree()) {
            return Err(EvalError {
                code: codes::ENTRY,
                message: format!("entry expression: {msg}"),
                file,
                span,
                exception: None,
            });
        }
        let tree = parsed.tree();
        let root = tree.root_node();
        let expr = root.named_child(0).and_then(|s| s.named_child(0));
        let Some(expr) = expr else {
            return Err(EvalError {
                code: codes::ENTRY,
                message: "empty entry expression".into(),
                file,
                span: Span::default(),
                exception: None,
            });
        };
        let frame = Frame {
            file: parsed.clone(),
            file_id: file,
            globals: ns,
            locals: None,
            class: None,
            receiver: None,
        };
        self.eval_expr(&frame, expr)
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use std::path::Path;
    use std::sync::Arc;

    use super::{Interp, Value};
    use crate::semantic::{FileId, Project};

    /// An interpreter over a project of one virtual file, `/virtual/<name>.py` holding `text`,
    /// and that file.
    pub fn interp_over(name: &str, text: &str) -> (Interp, FileId) {
        let path = format!("/virtual/{name}.py");
        let mut project = Project::new("/virtual");
        project.add_overlay(&path, Arc::from(text), None);
        let file = project.load_path(Path::new(&path)).unwrap();
        (Interp::new(Arc::new(project)), file)
    }

    /// The messages of the analysis limits `interp` noted.
    pub fn notes(interp: &Interp) -> Vec<String> {
        interp
            .diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect()
    }

    /// Python's `repr` of the plain data a snippet computes (numbers, strings, tuples, lists,
    /// dicts, None), so it compares with what CPython prints; anything else is shown as the
    /// evaluator's value, which never equals a CPython repr.
    pub fn py_repr(v: &Value) -> String {
        let seq = |items: &[Value]| items.iter().map(py_repr).collect::<Vec<_>>().join(", ");
        match v {
            Value::None => "None".into(),
            Value::Bool(b) => if *b { "True" } else { "False" }.into(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => super::types::number::float_repr(*f),
            Value::Str(s) => super::types::string::repr(s),
            Value::List(l) => format!("[{}]", seq(&l.borrow())),
            Value::Tuple(t) if t.len() == 1 => format!("({},)", py_repr(&t[0])),
            Value::Tuple(t) => format!("({})", seq(t)),
            // an instance of a builtin's subclass shows as its value (an enum member does not)
            Value::Object(o)
                if o.base.is_some()
                    && !matches!(&o.class, Value::Class(c) if super::stdlib::enums::is_enum_class(c)) =>
            {
                py_repr(o.base.as_ref().unwrap_or(&Value::None))
            }
            Value::Dict(d) => format!(
                "{{{}}}",
                d.borrow()
                    .iter()
                    .map(|(k, v)| format!("{}: {}", py_repr(k), py_repr(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            other => {
                let shown = format!("{other:?}");
                // an instance's Debug can be long: its head says what it is
                let head: String = shown.chars().take(120).collect();
                format!("<not plain data: {head}>")
            }
        }
    }
}
