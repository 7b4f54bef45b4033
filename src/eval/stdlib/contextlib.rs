//! `with` statements as Python runs them: each item's manager is entered in order and exited
//! in reverse, a class's `__enter__`/`__exit__` are called (a true `__exit__` swallows the
//! exception), `contextlib.nullcontext(x)` enters as `x` and `contextlib.suppress(E, …)`
//! swallows what is an `E`. A `@contextlib.contextmanager` generator runs its code before
//! `yield` at entry; the `with` body runs at the `yield` (its value bound by `as`); an
//! exception from the body is raised at the `yield`, where the generator's `try` sees it, and
//! the rest of the generator runs at exit. A generator manager called on a function
//! (`@manager()` over a `def`) wraps it to run each call inside a fresh entry, as
//! `ContextDecorator` does. Generators run to completion here (no suspension),
//! which is why the body runs inside the yield: a generator manager entered outside a `with`
//! statement (`ExitStack.enter_context`, `__enter__()` by hand) is not modelled.

use crate::syntax::KindExt;
use std::rc::Rc;

use tree_sitter::Node;

use super::super::call::Kwargs;
use super::super::stmt::Truth;
use super::super::value::{str_keyed, Function, Object, Value, Wrapper};
use super::super::{EResult, EvalError, Flow, Frame, Interp};
use crate::diagnostics::codes;
use crate::syntax::{FieldExt, Span};

/// The class of what calling a `@contextmanager` function returns.
const GENERATOR_CM: &str = "contextlib._GeneratorContextManager";
/// The bundled `_decorate_with(cm, func)`: a manager used as a decorator.
pub(super) const DECORATE_WITH: &str = "staticfx.contextlib._decorate_with";

#[derive(Default)]
pub struct ContextlibState {
    /// Generator managers entered by a `with` statement whose body has not run yet (or just
    /// has), innermost last.
    entered: Vec<Entered>,
}

struct Entered {
    /// The generator's list in `Interp::yields`.
    depth: usize,
    /// Where the `with` statement runs, and which of its items this manager is.
    frame: Frame,
    statement: Span,
    item: usize,
    /// What the body did, once it ran at the generator's `yield`.
    outcome: Option<EResult<Flow>>,
}

/// A `with` item's expression and its `as` target.
fn item_parts(item: Node) -> Option<(Node, Option<Node>)> {
    let v = item.field("value")?;
    if v.kind_name() != "as_pattern" {
        return Some((v, None));
    }
    let target = v
        .field("alias")
        .and_then(|a| a.named_child(0))
        .or_else(|| v.named_child(1));
    Some((v.named_child(0)?, target))
}

fn with_items(statement: Node) -> Vec<Node> {
    let Some(clause) = statement
        .named_child(0)
        .filter(|c| c.kind_name() == "with_clause")
    else {
        return vec![];
    };
    crate::syntax::named_children(clause)
        .filter(|n| n.kind_name() == "with_item")
        .collect()
}

/// The `with` statement at `span`.
fn find_statement(tree: &tree_sitter::Tree, span: Span) -> Option<Node<'_>> {
    let mut n = tree
        .root_node()
        .descendant_for_byte_range(span.start, span.end)?;
    loop {
        if n.start_byte() == span.start
            && n.end_byte() == span.end
            && n.kind_name() == "with_statement"
        {
            return Some(n);
        }
        n = n.parent()?;
    }
}

/// The builtin exception classes each builtin exception derives from (besides itself and
/// `BaseException`).
fn builtin_exception_bases(name: &str) -> &'static [&'static str] {
    match name {
        "KeyError" | "IndexError" => &["LookupError", "Exception"],
        "ZeroDivisionError" | "OverflowError" | "FloatingPointError" => {
            &["ArithmeticError", "Exception"]
        }
        "NotImplementedError" | "RecursionError" => &["RuntimeError", "Exception"],
        "ModuleNotFoundError" => &["ImportError", "Exception"],
        "FileNotFoundError" | "FileExistsError" | "PermissionError" | "IsADirectoryError"
        | "NotADirectoryError" | "TimeoutError" => &["OSError", "Exception"],
        "UnicodeError" | "UnicodeDecodeError" | "UnicodeEncodeError" => {
            &["ValueError", "Exception"]
        }
        "KeyboardInterrupt" | "SystemExit" | "GeneratorExit" => &[],
        _ => &["Exception"],
    }
}

/// The bases of a builtin exception class below `BaseException`, nearest first; None for a
/// name that is not one.
pub(in crate::eval) fn exception_bases(name: &str) -> Option<&'static [&'static str]> {
    let is_exception = name.ends_with("Error")
        || name.ends_with("Exception")
        || name.ends_with("Warning")
        || matches!(
            name,
            "StopIteration" | "KeyboardInterrupt" | "SystemExit" | "GeneratorExit"
        );
    if !is_exception || name == "BaseException" {
        return None;
    }
    if name == "Exception" {
        return Some(&[]);
    }
    Some(builtin_exception_bases(name))
}

impl Interp {
    /// `contextlib.contextmanager(f)`, `nullcontext(x)`, `suppress(*exceptions)`; None for
    /// other names.
    pub(in crate::eval) fn call_contextlib(
        &mut self,
        name: &str,
        args: &[Value],
        kwargs: &Kwargs,
    ) -> Option<Value> {
        match (name, args.first()) {
            ("contextmanager", Some(Value::Function(f))) => {
                let wrapper = f.new_wrapper(Wrapper::ContextManager(f.clone()));
                Some(Value::Function(Rc::new(wrapper)))
            }
            ("nullcontext", first) => {
                let enter = first
                    .cloned()
                    .or_else(|| {
                        kwargs
                            .iter()
                            .find(|(k, _)| k == "enter_result")
                            .map(|(_, v)| v.clone())
                    })
                    .unwrap_or(Value::None);
                Some(self.record("contextlib.nullcontext", vec![("enter_result", enter)]))
            }
            ("suppress", _) => Some(self.record(
                "contextlib.suppress",
                vec![("_exceptions", Value::tuple(args.to_vec()))],
            )),
            _ => None,
        }
    }

    /// Calling a `@contextmanager` function: the manager, holding the call (the generator
    /// runs when a `with` statement enters it). None for other functions.
    pub(in crate::eval) fn call_contextmanager_wrapper(
        &mut self,
        f: &Rc<Function>,
        recv: &Option<Value>,
        args: &[Value],
        kwargs: &Kwargs,
    ) -> Option<Value> {
        let Some(Wrapper::ContextManager(generator)) = &f.wrapper else {
            return None;
        };
        let generator = generator.clone();
        let mut all: Vec<Value> = recv.iter().cloned().collect();
        all.extend(args.iter().cloned());
        let keywords = kwargs
            .iter()
            .map(|(k, v)| (Value::str(k), v.clone()))
            .collect();
        Some(self.record(
            GENERATOR_CM,
            vec![
                ("func", Value::Function(generator)),
                ("args", Value::tuple(all)),
                (
                    "kwds",
                    Value::Dict(Rc::new(std::cell::RefCell::new(keywords))),
                ),
            ],
        ))
    }

    /// A generator manager called on a function (`@manager()` over a `def`): the function
    /// wrapped to run inside it, as `ContextDecorator` does. None for other calls.
    pub(in crate::eval) fn call_context_decorator(
        &mut self,
        frame: &Frame,
        manager: &Rc<Object>,
        args: &[Value],
        span: Span,
    ) -> Option<EResult<Value>> {
        if !matches!(&manager.class, Value::External(p) if &**p == GENERATOR_CM) {
            return None;
        }
        let [func] = args else { return None };
        let decorate = self.bundled_class(DECORATE_WITH)?;
        let args = vec![Value::Object(manager.clone()), func.clone()];
        Some(self.call_value(frame, &decorate, args, vec![], span))
    }

    /// A `with` statement.
    pub(in crate::eval) fn exec_with(&mut self, frame: &Frame, statement: Node) -> EResult<Flow> {
        self.enter_items(frame, statement, 0)
    }

    /// Enters the items from `first` on, then runs the body.
    fn enter_items(&mut self, frame: &Frame, statement: Node, first: usize) -> EResult<Flow> {
        let items = with_items(statement);
        let Some(&item) = items.get(first) else {
            return match statement.field("body") {
                Some(b) => self.exec_block(frame, b),
                None => Ok(Flow::Normal),
            };
        };
        let Some((expr, target)) = item_parts(item) else {
            return self.enter_items(frame, statement, first + 1);
        };
        let manager = self.eval_expr(frame, expr)?;
        let span = Span::of(item);
        let Value::Object(o) = &manager else {
            if let (Value::Unknown(u), Some(t)) = (&manager, self.tracer.as_mut()) {
                if let Some(path) = &u.made_by {
                    t.event(
                        crate::traced::EventKind::ExternalManager,
                        frame.file_id,
                        span,
                        path.to_string(),
                    );
                }
            }
            // `torch.no_grad()` and other managers outside the project do not change the
            // graph's ops; `as` binds the manager.
            if let Some(t) = target {
                self.assign(frame, t, manager.clone())?;
            }
            return self.enter_items(frame, statement, first + 1);
        };
        let class_path = match &o.class {
            Value::External(p) => Some(p.to_string()),
            _ => None,
        };
        match class_path.as_deref() {
            Some(GENERATOR_CM) => self.enter_generator(frame, statement, first, o, span),
            Some("contextlib.nullcontext") => {
                if let Some(t) = target {
                    let v = o.get("enter_result").unwrap_or(Value::None);
                    self.assign(frame, t, v)?;
                }
                self.enter_items(frame, statement, first + 1)
            }
            Some("contextlib.suppress") => {
                let exceptions = match o.get("_exceptions") {
                    Some(Value::Tuple(t)) => t.to_vec(),
                    _ => vec![],
                };
                if let Some(t) = target {
                    self.assign(frame, t, manager.clone())?;
                }
                match self.enter_items(frame, statement, first + 1) {
                    Err(e) if e.code == codes::RAISED => match self.catches(&e, &exceptions) {
                        Some(true) => Ok(Flow::Normal),
                        Some(false) => Err(e),
                        None => Err(EvalError {
                            code: codes::UNSUPPORTED,
                            message: format!(
                                "whether `contextlib.suppress` catches this is not known: {}",
                                e.message
                            ),
                            ..e
                        }),
                    },
                    other => other,
                }
            }
            _ => match self.user_method(&o.class, "__enter__") {
                Some(enter) => self.enter_object(frame, statement, first, &manager, &enter, span),
                None => {
                    if let Some(t) = target {
                        self.assign(frame, t, manager.clone())?;
                    }
                    self.enter_items(frame, statement, first + 1)
                }
            },
        }
    }

    /// A manager with `__enter__`/`__exit__` written in Python.
    fn enter_object(
        &mut self,
        frame: &Frame,
        statement: Node,
        item: usize,
        manager: &Value,
        enter: &Rc<Function>,
        span: Span,
    ) -> EResult<Flow> {
        let exit = self.user_method(
            match manager {
                Value::Object(o) => &o.class,
                _ => manager,
            },
            "__exit__",
        );
        let entered =
            self.call_function(frame, enter, Some(manager.clone()), vec![], vec![], span)?;
        if let Some(t) = with_items(statement)
            .get(item)
            .and_then(|i| item_parts(*i))
            .and_then(|(_, t)| t)
        {
            self.assign(frame, t, entered)?;
        }
        let outcome = self.enter_items(frame, statement, item + 1);
        let Some(exit) = exit else { return outcome };
        match outcome {
            Err(e) if e.code == codes::BUDGET => Err(e),
            Ok(flow) => {
                let none = vec![Value::None, Value::None, Value::None];
                self.call_function(frame, &exit, Some(manager.clone()), none, vec![], span)?;
                Ok(flow)
            }
            Err(e) => {
                let exc = match &e.exception {
                    Some(v @ Value::Object(o)) => vec![o.class.clone(), v.clone(), Value::None],
                    _ => vec![
                        Value::unknown("exception type"),
                        Value::unknown("exception"),
                        Value::unknown("traceback"),
                    ],
                };
                let swallow =
                    self.call_function(frame, &exit, Some(manager.clone()), exc, vec![], span)?;
                match self.truth(frame, &swallow, span)? {
                    Truth::Known(true) if e.code == codes::RAISED => Ok(Flow::Normal),
                    _ => Err(e),
                }
            }
        }
    }

    /// A `@contextmanager` generator entered by the `with` statement's item `item`: the
    /// generator runs, and the rest of the statement runs at its `yield`.
    fn enter_generator(
        &mut self,
        frame: &Frame,
        statement: Node,
        item: usize,
        manager: &Rc<Object>,
        span: Span,
    ) -> EResult<Flow> {
        let Some(Value::Function(generator)) = manager.get("func") else {
            return Ok(Flow::Normal);
        };
        let args = match manager.get("args") {
            Some(Value::Tuple(t)) => t.to_vec(),
            _ => vec![],
        };
        let kwargs: Kwargs = match manager.get("kwds") {
            Some(Value::Dict(d)) => str_keyed(&d.borrow()),
            _ => vec![],
        };
        self.contextlib.entered.push(Entered {
            depth: self.yields.len(),
            frame: frame.clone(),
            statement: Span::of(statement),
            item,
            outcome: None,
        });
        let run = self.call_function(frame, &generator, None, args, kwargs, span);
        let entered = self.contextlib.entered.pop().expect("pushed above");
        match (entered.outcome, run) {
            (_, Err(e)) => Err(e),
            (None, Ok(_)) => Err(self.error(
                frame,
                span,
                codes::RAISED,
                "RuntimeError: generator didn't yield",
            )),
            (Some(Ok(flow)), Ok(_)) => Ok(flow),
            // The generator caught what the body raised: the exception is swallowed. An
            // analysis limit is never a Python exception to swallow.
            (Some(Err(e)), Ok(_)) if e.code != codes::RAISED => Err(e),
            (Some(Err(_)), Ok(_)) => Ok(Flow::Normal),
        }
    }

    /// A `yield` of a generator a `with` statement entered: the rest of the statement runs
    /// here, and what its body raised is raised here. None for other generators.
    pub(in crate::eval) fn yield_to_with_body(
        &mut self,
        frame: &Frame,
        yielded: &[Value],
        span: Span,
    ) -> Option<EResult<Value>> {
        let depth = self.yields.len().checked_sub(1)?;
        if self.contextlib.entered.last()?.depth != depth {
            return None;
        }
        if self.contextlib.entered.last()?.outcome.is_some() {
            return Some(Err(self.error(
                frame,
                span,
                codes::RAISED,
                "RuntimeError: generator didn't stop",
            )));
        }
        // The body runs as the `with` statement's frame: its own `yield`s and managers are
        // not this generator's.
        let mut entered = self.contextlib.entered.pop()?;
        let own_yields = self.yields.pop()?;
        let outcome = self.run_with_body(&entered, yielded.first().cloned().unwrap_or(Value::None));
        self.yields.push(own_yields);
        let raised = match &outcome {
            Err(e) => Some(e.clone()),
            Ok(_) => None,
        };
        entered.outcome = Some(outcome);
        self.contextlib.entered.push(entered);
        Some(match raised {
            Some(e) => Err(e),
            None => Ok(Value::None),
        })
    }

    fn run_with_body(&mut self, entered: &Entered, value: Value) -> EResult<Flow> {
        let frame = entered.frame.clone();
        let file = frame.file.clone();
        let tree = file.tree();
        let Some(statement) = find_statement(&tree, entered.statement) else {
            return Err(self.error(
                &frame,
                entered.statement,
                codes::UNSUPPORTED,
                "`with` statement not found",
            ));
        };
        let items = with_items(statement);
        if let Some(t) = items
            .get(entered.item)
            .and_then(|i| item_parts(*i))
            .and_then(|(_, t)| t)
        {
            self.assign(&frame, t, value)?;
        }
        self.enter_items(&frame, statement, entered.item + 1)
    }

    /// The `except` clause of a `try` statement that handles `e`: the first whose classes
    /// include the raised one's, or that cannot be told apart (as is every clause for an
    /// analysis limit, which is no Python exception).
    pub(in crate::eval) fn matching_handler<'t>(
        &mut self,
        frame: &Frame,
        clauses: &[Node<'t>],
        e: &EvalError,
    ) -> Option<Node<'t>> {
        let handlers = clauses
            .iter()
            .filter(|c| c.kind_name() == "except_clause" || c.kind_name() == "except_group_clause");
        for &handler in handlers {
            if e.code != codes::RAISED {
                return Some(handler);
            }
            let classes = crate::syntax::named_children(handler)
                .find(|n| n.kind_name() != "block" && n.kind_name() != "comment");
            let Some(classes) = classes else {
                return Some(handler);
            };
            let classes = match classes.kind_name() {
                "as_pattern" => classes.named_child(0).unwrap_or(classes),
                _ => classes,
            };
            let Ok(classes) = self.eval_expr(frame, classes) else {
                return Some(handler);
            };
            if self.catches(e, std::slice::from_ref(&classes)) != Some(false) {
                return Some(handler);
            }
        }
        None
    }

    /// Whether an exception the evaluator raised is an instance of one of `classes`; None
    /// when its class is not known.
    fn catches(&self, e: &EvalError, classes: &[Value]) -> Option<bool> {
        let raised = raised_class_names(self, e)?;
        let mut undecided = false;
        for c in classes {
            let hit = match c {
                Value::Builtin(b) => {
                    Some(raised.iter().any(|r| r == &**b || &**b == "BaseException"))
                }
                Value::Class(k) => Some(raised.iter().any(|r| *r == k.name)),
                Value::Tuple(t) => self.catches(e, t),
                // A class outside the project: a base of the raised one, for all we know.
                Value::External(p) => {
                    let short = p.rsplit('.').next().unwrap_or(p);
                    raised.iter().any(|r| r == short).then_some(true)
                }
                _ => None,
            };
            match hit {
                Some(true) => return Some(true),
                Some(false) => {}
                None => undecided = true,
            }
        }
        (!undecided).then_some(false)
    }
}

/// The names of the class of an exception the evaluator raised and of its bases, from its
/// message (`raises ValueError(…)`, `KeyError: 'x'`); None when it does not say.
pub(in crate::eval) fn raised_class_names(interp: &Interp, e: &EvalError) -> Option<Vec<String>> {
    // The exception object a `raise` statement raised: its class and bases.
    if let Some(Value::Object(o)) = &e.exception {
        return match &o.class {
            Value::Class(c) => class_and_bases(c),
            Value::Builtin(b) => Some(builtin_and_bases(b)),
            _ => None,
        };
    }
    let m = &e.message;
    let name: String = if let Some(rest) = m.strip_prefix("raises ") {
        let head: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
            .collect();
        head.rsplit('.').next().unwrap_or("").to_string()
    } else if m.contains("has no attribute") {
        "AttributeError".into()
    } else if m.contains("index") && m.contains("out of range") {
        "IndexError".into()
    } else if m.starts_with("assertion fails") {
        "AssertionError".into()
    } else {
        let head = m.split(':').next().unwrap_or("");
        let is_class = head.chars().all(|c| c.is_alphanumeric() || c == '_')
            && (head.ends_with("Error") || head.ends_with("Exception") || head == "StopIteration");
        if !is_class {
            return None;
        }
        head.to_string()
    };
    // `raise err` names a variable, not the class.
    if !name.chars().next().is_some_and(char::is_uppercase) {
        return None;
    }
    // A class of the raising module: its bases by name.
    let module = interp.loaded_module(e.file);
    if let Some(Value::Class(c)) = module.and_then(|ns| ns.vars.borrow().get(&name).cloned()) {
        return class_and_bases(&c);
    }
    Some(builtin_and_bases(&name))
}

/// The names of an exception class and its bases, None when one of them is not known.
fn class_and_bases(c: &super::super::value::Class) -> Option<Vec<String>> {
    let mut names = vec![];
    for m in c.mro.borrow().iter() {
        match m {
            Value::Class(k) => names.push(k.name.clone()),
            Value::Builtin(b) => names.extend(builtin_and_bases(b)),
            _ => return None,
        }
    }
    Some(names)
}

/// A builtin exception class's name and its bases' names.
fn builtin_and_bases(name: &str) -> Vec<String> {
    let mut names = vec![name.to_string()];
    names.extend(builtin_exception_bases(name).iter().map(|s| s.to_string()));
    names
}
