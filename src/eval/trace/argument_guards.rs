//! The guards Dynamo installs on the Python values passed to `forward` (`breaks::argument_guard`,
//! FX202): a call with another value fails the guard and recompiles.
//!
//! Dynamo treats a Python value argument (a bool, int, float, str, None, list, tuple or dict)
//! as a constant of the graph, but only guards on it where the frame uses it: a branch on a
//! flag (`normalize == False`), a number meeting a tensor (`scale == 1.0`), `range(steps)`
//! (`steps == 2`), a list iterated or measured (`len(xs) == 1`), an item read and used
//! (`opts['mode'] == 'plain'`, `sizes[0] == 2`), `is None` (`mask is None`). An argument only
//! passed along, stored in a container, or never read installs nothing.
//!
//! The evaluator's Python scalars carry no identity, so the tracker follows names instead: the
//! root forward's parameters that hold such values, and each function parameter a call binds
//! from one of them (`self.block(x, scale)` marks `scale` of the block's forward), and names
//! assigned from one (`k = opts['mode']`). A mark also remembers the value, and only counts
//! while the name still holds it, so a rebinding the tracker did not see cannot misattribute.
//! The first use of each argument that Dynamo guards on is kept (`ArgumentGuardLog`).

use std::collections::HashSet;
use std::rc::Rc;

use tree_sitter::Node;

use crate::eval::value::{Scope, Value};
use crate::eval::{Frame, Interp};
use crate::semantic::FileId;
use crate::syntax::{text, FieldExt, KindExt, Span};
use crate::traced::ArgumentGuard;

/// Where a value came from: a forward argument, or an item of one (`opts['mode']`).
#[derive(Clone, Debug)]
pub struct ArgSource {
    /// forward's parameter (`opts`)
    pub argument: String,
    /// the expression Dynamo names in its guard (`opts['mode']`)
    pub text: String,
    /// the value it held when it was marked
    pub value: Value,
}

/// How a call's argument reaches the callee's parameters.
#[derive(Clone, Debug)]
pub enum ArgSlot {
    /// forward's own parameter, by name (the trace root's call)
    Param(String),
    /// the i-th positional argument of the call, as written (before any receiver)
    Position(usize),
    Keyword(String),
}

struct Mark {
    scope: Rc<Scope>,
    name: String,
    source: ArgSource,
    /// How many calls deep the scope's function runs (the trace's call chain then).
    depth: usize,
}

/// The forward arguments' values the trace follows, and the guards their uses install.
#[derive(Default)]
pub struct ArgumentGuardLog {
    marks: Vec<Mark>,
    /// The names marked in any scope: most names a trace reads are none of them, and this
    /// answers first.
    names: HashSet<String>,
    /// The sources of the call being made, for the parameters it is about to bind.
    pending: Option<Vec<(ArgSlot, ArgSource)>>,
    /// Followed values a function took into its `*args`/`**kwargs` by name (a decorator's
    /// `wrapper(self, *args, **kwargs)`), passed on where it spreads them into another call.
    carriers: Vec<Carrier>,
    guards: Vec<ArgumentGuard>,
}

/// The followed values a scope holds in its `*args`/`**kwargs`, each with the parameter name
/// the call gave it (`return_dict`).
struct Carrier {
    scope: Rc<Scope>,
    /// the scope's `*args` and `**kwargs` names
    names: Vec<String>,
    sources: Vec<(String, ArgSource)>,
}

/// Whether `a` is still the value `b` (lists and dicts by identity, the rest by value and
/// kind, so `True` is not `1`).
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::None, Value::None) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Tuple(x), Value::Tuple(y)) => Rc::ptr_eq(x, y),
        (Value::List(x), Value::List(y)) => Rc::ptr_eq(x, y),
        (Value::Dict(x), Value::Dict(y)) => Rc::ptr_eq(x, y),
        _ => false,
    }
}

fn is_container(v: &Value) -> bool {
    matches!(v, Value::Tuple(_) | Value::List(_) | Value::Dict(_))
}

/// A value Dynamo passes into a frame as a constant it guards on.
pub fn is_python_value(v: &Value) -> bool {
    matches!(
        v,
        Value::None
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Str(_)
            | Value::Tuple(_)
            | Value::List(_)
            | Value::Dict(_)
    )
}

impl ArgumentGuardLog {
    /// Whether nothing is followed: the common case, checked first on every name read.
    pub fn is_idle(&self) -> bool {
        self.marks.is_empty() && self.pending.is_none() && self.carriers.is_empty()
    }

    /// What `scope`'s `*args`/`**kwargs` named `splat` carries, as slots of the call that
    /// spreads it.
    fn carried(&self, scope: &Rc<Scope>, splat: &str) -> Vec<(ArgSlot, ArgSource)> {
        self.carriers
            .iter()
            .filter(|c| Rc::ptr_eq(&c.scope, scope) && c.names.iter().any(|n| n == splat))
            .flat_map(|c| c.sources.iter())
            .map(|(name, source)| (ArgSlot::Keyword(name.clone()), source.clone()))
            .collect()
    }

    /// The sources the next call binds (set right before it, taken by the callee's binding).
    pub fn set_pending(&mut self, sources: Vec<(ArgSlot, ArgSource)>) {
        self.pending = (!sources.is_empty()).then_some(sources);
    }

    pub fn take_pending(&mut self) -> Option<Vec<(ArgSlot, ArgSource)>> {
        self.pending.take()
    }

    /// The sources the next call binds, as text (part of a replay's key: a call that binds
    /// others may guard on other arguments).
    pub fn pending_text(&self) -> String {
        match &self.pending {
            None => String::new(),
            Some(p) => format!("{p:?}"),
        }
    }

    /// How many guards the log holds.
    pub fn guard_count(&self) -> usize {
        self.guards.len()
    }

    /// `name` in `scope`, whose function runs `depth` calls deep, holds `source`'s value from
    /// now on.
    pub fn mark(&mut self, scope: &Rc<Scope>, name: &str, source: ArgSource, depth: usize) {
        self.marks
            .retain(|m| !(Rc::ptr_eq(&m.scope, scope) && m.name == name));
        self.names.insert(name.to_string());
        self.marks.push(Mark {
            scope: scope.clone(),
            name: name.to_string(),
            source,
            depth,
        });
    }

    /// Whether `name` is marked in some scope.
    pub fn may_hold(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The source `name` in `scope` holds, if it was marked and still holds that value, and
    /// the depth of the scope's function.
    pub fn source_of(
        &self,
        scope: &Rc<Scope>,
        name: &str,
        now: &Value,
    ) -> Option<(&ArgSource, usize)> {
        self.marks
            .iter()
            .rev()
            .find(|m| Rc::ptr_eq(&m.scope, scope) && m.name == name)
            .filter(|m| same_value(&m.source.value, now))
            .map(|m| (&m.source, m.depth))
    }

    /// A use Dynamo guards on; only the first of each argument is kept.
    pub fn used(&mut self, source: &ArgSource, at: (FileId, Span, &[(FileId, Span)])) {
        if self.guards.iter().any(|g| g.argument == source.argument) {
            return;
        }
        let Some(guard) = guard_text(&source.text, &source.value) else {
            return;
        };
        self.guards.push(ArgumentGuard {
            argument: source.argument.clone(),
            guard,
            file: at.0,
            span: at.1,
            call_chain: at.2.to_vec(),
        });
    }

    /// The guards, their call chains without the trace root's own call (as node origins).
    pub fn guards(&self) -> Vec<ArgumentGuard> {
        let mut out = self.guards.clone();
        for g in &mut out {
            if !g.call_chain.is_empty() {
                g.call_chain.remove(0);
            }
        }
        out
    }
}

/// The guard Dynamo prints for a use of `value` (named `source`): a scalar by equality, None
/// by identity, and a sequence or dict used as a whole (iterated, measured, handed to a
/// builtin) by its length (an empty list by its truth, `not xs`). Anything else (an object,
/// a tensor) is no guard of this kind.
pub fn guard_text(source: &str, value: &Value) -> Option<String> {
    Some(match value {
        Value::None => format!("{source} is None"),
        Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => {
            format!("{source} == {}", scalar_repr(value))
        }
        Value::List(l) if l.borrow().is_empty() => format!("not {source}"),
        Value::List(l) => format!("len({source}) == {}", l.borrow().len()),
        Value::Tuple(t) => format!("len({source}) == {}", t.len()),
        Value::Dict(d) => format!("len({source}) == {}", d.borrow().len()),
        _ => return None,
    })
}

/// The key of `base[key]` as Dynamo's source prints it (`opts['mode']`, `sizes[0]`), and the
/// item, when the key is a literal int or str and the item is there.
pub fn item_of(base: &Value, key: &Value) -> Option<(String, Value)> {
    let shown = scalar_repr(key);
    let item = match (base, key) {
        (Value::Tuple(t), Value::Int(i)) => index(t, *i)?,
        (Value::List(l), Value::Int(i)) => index(&l.borrow(), *i)?,
        (Value::Dict(d), Value::Str(_) | Value::Int(_)) => d
            .borrow()
            .iter()
            .find(|(k, _)| same_value(k, key))
            .map(|(_, v)| v.clone())?,
        _ => return None,
    };
    Some((shown, item))
}

fn index(items: &[Value], i: i64) -> Option<Value> {
    let n = items.len() as i64;
    let at = if i < 0 { i + n } else { i };
    (0..n).contains(&at).then(|| items[at as usize].clone())
}

/// Python's `repr` of a scalar (`1.0`, `'relu'`, `False`).
fn scalar_repr(v: &Value) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => crate::eval::types::number::float_repr(*f),
        Value::Str(s) => crate::eval::types::string::repr(s),
        other => other.type_name().to_string(),
    }
}

/// What the code around a read of an argument does with it.
enum Use {
    /// handed to a call: the call decides (`Interp::note_call_arguments`)
    Passed,
    /// the base of an item read (`opts` in `opts['mode']`): the item is followed instead
    Derived,
    /// bound to another name, which is followed from here
    Alias(String),
    /// returned, or put in a container or on an object: nothing guarded yet
    Kept,
    /// a branch, an operator, a loop, an item lookup by it: Dynamo guards here
    Guarded,
    /// the receiver of a method (`act.lower()`, `opts.get('mode')`): a scalar's is a use
    /// Dynamo guards by value; a container's guards its keys or items, in words this log does
    /// not model, so none is reported
    Receiver,
}

/// The literal key of `base[key]` (`0`, `'mode'`), when the subscript has one such key.
fn literal_key(subscript: Node, src: &str) -> Option<Value> {
    let mut c = subscript.walk();
    let keys: Vec<Node> = subscript
        .children_by_field_name("subscript", &mut c)
        .collect();
    let [key] = keys.as_slice() else { return None };
    let t = text(*key, src);
    match key.kind_name() {
        "integer" => t.parse().ok().map(Value::Int),
        "unary_operator" => t
            .strip_prefix('-')
            .and_then(|d| d.trim().parse::<i64>().ok())
            .map(|i| Value::Int(-i)),
        "string" => {
            let b = t.as_bytes();
            let quoted = b.len() >= 2 && matches!(b[0], b'\'' | b'"') && b[b.len() - 1] == b[0];
            (quoted && !t.contains('\\') && !t[1..t.len() - 1].contains(['\'', '"']))
                .then(|| Value::str(&t[1..t.len() - 1]))
        }
        _ => None,
    }
}

/// The syntactic context of `node`, a read of a followed value.
fn use_of(node: Node, src: &str) -> Use {
    let mut child = node;
    let Some(mut parent) = node.parent() else {
        return Use::Kept;
    };
    while parent.kind_name() == "parenthesized_expression" {
        child = parent;
        match parent.parent() {
            Some(p) => parent = p,
            None => return Use::Kept,
        }
    }
    let is_field = |name: &str| parent.field(name).is_some_and(|f| f.id() == child.id());
    match parent.kind_name() {
        "argument_list" => Use::Passed,
        "keyword_argument" if is_field("value") => Use::Passed,
        "subscript" if is_field("value") && literal_key(parent, src).is_some() => Use::Derived,
        "assignment" if is_field("right") => match parent.field("left") {
            Some(l) if l.kind_name() == "identifier" => Use::Alias(text(l, src).to_string()),
            Some(l) if matches!(l.kind_name(), "pattern_list" | "tuple_pattern") => Use::Guarded,
            _ => Use::Kept,
        },
        "attribute" if is_field("object") => Use::Receiver,
        "return_statement" | "expression_list" | "tuple" | "list" | "set" | "pair"
        | "dictionary" | "yield" | "list_splat" | "dictionary_splat" | "lambda" => Use::Kept,
        _ => Use::Guarded,
    }
}

impl Interp {
    fn follows_arguments(&self) -> bool {
        self.tracer.as_ref().is_some_and(|t| !t.arguments.is_idle())
    }

    /// The followed value an expression reads, with the name Dynamo gives it: a name marked
    /// in its scope, an item of one by a literal key, either in parentheses. With it, the
    /// depth of the function whose scope holds the name (a closure reads its enclosing
    /// function's).
    fn argument_source(&self, frame: &Frame, node: Node) -> Option<(ArgSource, usize)> {
        let src = &*frame.file.text;
        match node.kind_name() {
            "identifier" => {
                let name = text(node, src);
                if !self.tracer.as_ref()?.arguments.may_hold(name) {
                    return None;
                }
                let mut scope = frame.locals.clone();
                while let Some(s) = scope {
                    let held = s.vars.borrow().get(name).cloned();
                    if let Some(v) = held {
                        if crate::eval::stmt::scope_mark(&v).is_some() {
                            return None;
                        }
                        let log = &self.tracer.as_ref()?.arguments;
                        return log
                            .source_of(&s, name, &v)
                            .map(|(source, depth)| (source.clone(), depth));
                    }
                    scope = s.parent.clone();
                }
                None
            }
            "subscript" => {
                let key = literal_key(node, src)?;
                let (base, depth) = self.argument_source(frame, node.field("value")?)?;
                let (shown, item) = item_of(&base.value, &key)?;
                let source = ArgSource {
                    argument: base.argument,
                    text: format!("{}[{shown}]", base.text),
                    value: item,
                };
                Some((source, depth))
            }
            "parenthesized_expression" => {
                self.argument_source(frame, crate::syntax::first_operand(node)?)
            }
            _ => None,
        }
    }

    /// After `node` (a name or an item read) evaluated to `value`: a use Dynamo guards on
    /// is logged, a name bound from it is followed.
    pub(in crate::eval) fn note_argument_read(&mut self, frame: &Frame, node: Node, value: &Value) {
        if !self.follows_arguments() {
            return;
        }
        let Some((source, depth)) = self.argument_source(frame, node) else {
            return;
        };
        if !same_value(&source.value, value) {
            return;
        }
        match use_of(node, &frame.file.text) {
            Use::Passed | Use::Derived | Use::Kept => {}
            Use::Alias(name) => {
                if let (Some(scope), Some(t)) = (frame.locals.as_ref(), self.tracer.as_mut()) {
                    let depth = t.call_chain.len();
                    t.arguments.mark(scope, &name, source, depth);
                }
            }
            Use::Guarded => self.guarded_use(frame, Span::of(node), &source, depth),
            Use::Receiver if !is_container(value) => {
                self.guarded_use(frame, Span::of(node), &source, depth)
            }
            Use::Receiver => {}
        }
    }

    /// Logs the guard a use installs. A closure reading its enclosing function's argument
    /// installs it where that function called into the closure: Dynamo's log names that line
    /// (torch 2.15), not the use inside the closure.
    fn guarded_use(&mut self, frame: &Frame, span: Span, source: &ArgSource, depth: usize) {
        let t = self.tracer.as_mut().expect("following arguments");
        let chain = t.call_chain.clone();
        let at = match chain.get(depth) {
            Some(&(file, call)) if depth > 0 && depth < chain.len() => {
                (file, call, &chain[..depth])
            }
            _ => (frame.file_id, span, chain.as_slice()),
        };
        t.arguments.used(source, at);
    }

    /// A call's arguments that are followed values: a Python function (or module, or class)
    /// gets them as its parameters, anything else (a builtin such as `range` or `len`, a
    /// torch function, a tensor's method) uses them, and Dynamo guards there.
    pub(in crate::eval) fn note_call_arguments(
        &mut self,
        frame: &Frame,
        func: &Value,
        positional: &[Node],
        keywords: &[(String, Node)],
        splats: &[&str],
    ) {
        if !self.follows_arguments() {
            return;
        }
        let passes_on = matches!(
            func,
            Value::Function(_)
                | Value::BoundMethod(..)
                | Value::Class(_)
                | Value::Object(_)
                | Value::Partial(_)
        );
        let mut sources = vec![];
        let slots = positional
            .iter()
            .enumerate()
            .map(|(i, n)| (ArgSlot::Position(i), *n))
            .chain(
                keywords
                    .iter()
                    .map(|(k, n)| (ArgSlot::Keyword(k.clone()), *n)),
            );
        for (slot, node) in slots {
            let Some((source, depth)) = self.argument_source(frame, node) else {
                continue;
            };
            if passes_on {
                sources.push((slot, source));
            } else {
                self.guarded_use(frame, Span::of(node), &source, depth);
            }
        }
        if passes_on {
            if let (Some(scope), Some(t)) = (frame.locals.as_ref(), self.tracer.as_ref()) {
                for splat in splats {
                    for (slot, source) in t.arguments.carried(scope, splat) {
                        let taken = sources.iter().any(|(s, _)| match (s, &slot) {
                            (ArgSlot::Keyword(a), ArgSlot::Keyword(b)) => a == b,
                            _ => false,
                        });
                        if !taken {
                            sources.push((slot, source));
                        }
                    }
                }
            }
        }
        if let Some(t) = self.tracer.as_mut() {
            t.arguments.set_pending(sources);
        }
    }

    /// The followed values a call was given, taken before anything else runs in the callee.
    pub(in crate::eval) fn take_argument_sources(&mut self) -> Option<Vec<(ArgSlot, ArgSource)>> {
        self.tracer.as_mut()?.arguments.take_pending()
    }

    /// Follows the parameters of `f`'s new `scope` that were bound from followed values.
    /// `receivers` is how many arguments the call put before the written ones (`self`).
    pub(in crate::eval) fn follow_parameters(
        &mut self,
        f: &crate::eval::value::Function,
        scope: &Rc<Scope>,
        receivers: usize,
        sources: Vec<(ArgSlot, ArgSource)>,
    ) {
        use crate::catalog::ParamKind::*;
        let Some(t) = self.tracer.as_mut() else {
            return;
        };
        let positional: Vec<&str> = f
            .params
            .iter()
            .filter(|p| matches!(p.kind, PositionalOnly | PositionalOrKeyword))
            .map(|p| p.name.as_str())
            .collect();
        // the callee runs one call deeper than the call being made
        let depth = t.call_chain.len() + 1;
        // a keyword the function has no parameter for lands in its `**kwargs`: followed on to
        // where the function spreads them (a decorator's `wrapper(self, *args, **kwargs)`
        // around a submodule's forward), as Dynamo inlines it to the use. Not at the trace
        // root: there the wrapper's `kwargs` is the frame's input, and Dynamo guards the dict
        // itself (`not kwargs`, at the spread), which this rule does not word.
        let spreads: Vec<String> = f
            .params
            .iter()
            .filter(|p| matches!(p.kind, VarPositional | VarKeyword))
            .map(|p| p.name.clone())
            .collect();
        let mut carried = vec![];
        for (slot, source) in sources {
            let name = match &slot {
                ArgSlot::Param(name) | ArgSlot::Keyword(name) => Some(name.as_str()),
                ArgSlot::Position(i) => positional.get(i + receivers).copied(),
            };
            let Some(name) = name else { continue };
            let named = f
                .params
                .iter()
                .any(|p| p.name == name && !matches!(p.kind, VarPositional | VarKeyword));
            if !named && !spreads.is_empty() && matches!(slot, ArgSlot::Keyword(_)) {
                carried.push((name.to_string(), source));
                continue;
            }
            let bound = scope.vars.borrow().get(name).cloned();
            if bound.is_some_and(|v| same_value(&v, &source.value)) {
                t.arguments.mark(scope, name, source, depth);
            }
        }
        if !carried.is_empty() {
            t.arguments.carriers.push(Carrier {
                scope: scope.clone(),
                names: spreads,
                sources: carried,
            });
        }
    }
}
