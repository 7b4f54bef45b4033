//! The values Dynamo guards on that forward itself changes: the next call fails the guard and
//! recompiles (`breaks::recompile_state`, FX201).
//!
//! Dynamo specialises a frame on the Python values it reads from outside the frame: an
//! attribute of the module (`self.step`, `self.block.step`) or a global (`G['SEEN']`) holding
//! an int, bool, str, tuple, list or dict becomes a constant of the graph, and a guard checks
//! it on every call. Torch 2.15 does not specialise floats read from a module (it traces them
//! as symbolic floats), so they are left out. A read counts only when forward has not written
//! the value earlier in the same call: a value set before it is read is no input of the frame.
//!
//! The tracer logs the first such read of each value (`GuardLog`); when the trace ends,
//! `changes` compares each with what the value holds then.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::rc::Rc;

use crate::eval::value::{ModuleNs, Object, Value};
use crate::semantic::FileId;
use crate::syntax::Span;
use crate::traced::{GuardChange, StateGuard};

/// A Python value Dynamo compares by value, copied when it is read.
#[derive(Clone, Debug, PartialEq)]
pub enum Plain {
    None,
    Bool(bool),
    Int(i64),
    Str(Rc<str>),
    Tuple(Vec<Plain>),
    List(Vec<Plain>),
    Dict(Vec<(Plain, Plain)>),
}

impl Plain {
    /// The value, when it is plain data all the way down.
    pub fn of(v: &Value) -> Option<Plain> {
        Some(match v {
            Value::None => Plain::None,
            Value::Bool(b) => Plain::Bool(*b),
            Value::Int(i) => Plain::Int(*i),
            Value::Str(s) => Plain::Str(s.clone()),
            Value::Tuple(t) => Plain::Tuple(t.iter().map(Plain::of).collect::<Option<_>>()?),
            Value::List(l) => Plain::List(l.borrow().iter().map(Plain::of).collect::<Option<_>>()?),
            Value::Dict(d) => Plain::Dict(
                d.borrow()
                    .iter()
                    .map(|(k, v)| Some((Plain::of(k)?, Plain::of(v)?)))
                    .collect::<Option<_>>()?,
            ),
            _ => return None,
        })
    }
}

/// Python's `repr`.
impl fmt::Display for Plain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seq = |items: &[Plain]| {
            items
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Plain::None => write!(f, "None"),
            Plain::Bool(true) => write!(f, "True"),
            Plain::Bool(false) => write!(f, "False"),
            Plain::Int(i) => write!(f, "{i}"),
            Plain::Str(s) if s.contains('\'') && !s.contains('"') => write!(f, "\"{s}\""),
            Plain::Str(s) => write!(f, "'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            Plain::Tuple(t) if t.len() == 1 => write!(f, "({},)", t[0]),
            Plain::Tuple(t) => write!(f, "({})", seq(t)),
            Plain::List(l) => write!(f, "[{}]", seq(l)),
            Plain::Dict(d) => {
                let items: Vec<String> = d.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                write!(f, "{{{}}}", items.join(", "))
            }
        }
    }
}

/// Where a guarded value lives.
#[derive(Clone)]
enum Owner {
    Module(Rc<Object>),
    Global(Rc<ModuleNs>),
}

impl Owner {
    fn key(&self) -> usize {
        match self {
            Owner::Module(o) => o.id,
            // a namespace's address: never an object id's range in practice, and only
            // compared with itself
            Owner::Global(ns) => Rc::as_ptr(ns) as usize,
        }
    }

    fn current(&self, name: &str) -> Option<Value> {
        match self {
            Owner::Module(o) => o.attrs.borrow().get(name).cloned(),
            Owner::Global(ns) => ns.vars.borrow().get(name).cloned(),
        }
    }
}

struct Read {
    owner: Owner,
    name: String,
    value: Plain,
    file: FileId,
    span: Span,
    call_chain: Vec<(FileId, Span)>,
}

/// The reads a trace made of values outside forward, first read of each value only.
#[derive(Default)]
pub struct GuardLog {
    reads: Vec<Read>,
    /// Names each owner has had read or written in this call (by `Owner::key`).
    touched: HashMap<usize, HashSet<String>>,
    /// Each global forward read or wrote, as it was before.
    globals_before: GlobalsBefore,
    /// Every module read as it was attempted, first or not, while a replay may repeat it
    /// (`replay`): a copied call logs what its own reads would have. None: not kept.
    pub journal: Option<Vec<Attempt>>,
}

/// A module attribute read as forward attempted it (`GuardLog::journal`).
pub struct Attempt {
    pub module: Rc<Object>,
    pub name: String,
    pub file: FileId,
    pub span: Span,
    pub call_chain: Vec<(FileId, Span)>,
}

/// Globals as they were before traced calls changed them. The module's own attributes are
/// put back by the trace root's snapshot; globals outlive it, and a retrace (or the next
/// class of the file) must find them as the file left them.
#[derive(Default)]
pub struct GlobalsBefore(Vec<(Rc<ModuleNs>, String, Option<Value>)>);

impl GlobalsBefore {
    /// Adds what `log` saw, keeping the earliest value of each global.
    pub fn absorb(&mut self, log: &mut GuardLog) {
        for (ns, name, v) in std::mem::take(&mut log.globals_before.0) {
            if !self
                .0
                .iter()
                .any(|(n, k, _)| Rc::ptr_eq(n, &ns) && *k == name)
            {
                self.0.push((ns, name, v));
            }
        }
    }

    pub fn restore(&self) {
        for (ns, name, v) in &self.0 {
            let mut vars = ns.vars.borrow_mut();
            match v {
                Some(v) => {
                    vars.insert(name.clone(), v.clone());
                }
                None => {
                    vars.shift_remove(name);
                }
            }
        }
    }
}

impl GuardLog {
    fn first_touch(&mut self, key: usize, name: &str) -> bool {
        let names = self.touched.entry(key).or_default();
        !names.contains(name) && names.insert(name.to_string())
    }

    fn read(&mut self, owner: Owner, name: &str, v: &Value, at: (FileId, Span, &[(FileId, Span)])) {
        if !self.first_touch(owner.key(), name) {
            return;
        }
        if let Some(value) = Plain::of(v) {
            self.reads.push(Read {
                owner,
                name: name.to_string(),
                value,
                file: at.0,
                span: at.1,
                call_chain: at.2.to_vec(),
            });
        }
    }

    /// `obj.name` read from a module in the traced tree.
    pub fn module_read(
        &mut self,
        obj: &Rc<Object>,
        name: &str,
        v: &Value,
        at: (FileId, Span, &[(FileId, Span)]),
    ) {
        if matches!(v, Value::Float(_)) || !may_guard(v) {
            return;
        }
        if let Some(journal) = self.journal.as_mut() {
            journal.push(Attempt {
                module: obj.clone(),
                name: name.to_string(),
                file: at.0,
                span: at.1,
                call_chain: at.2.to_vec(),
            });
        }
        self.read(Owner::Module(obj.clone()), name, v, at);
    }

    /// How many reads the journal holds (0 when it is not kept).
    pub fn journal_len(&self) -> usize {
        self.journal.as_ref().map_or(0, Vec::len)
    }

    /// The journal's `i`-th read.
    pub fn attempt(&self, i: usize) -> &Attempt {
        &self.journal.as_ref().expect("the journal is kept")[i]
    }

    /// A global read by name.
    pub fn global_read(
        &mut self,
        ns: &Rc<ModuleNs>,
        name: &str,
        v: &Value,
        at: (FileId, Span, &[(FileId, Span)]),
    ) {
        if matches!(v, Value::Float(_)) || !may_guard(v) {
            return;
        }
        if !self.touched_already(Rc::as_ptr(ns) as usize, name) {
            let before = (ns.clone(), name.to_string(), Some(v.clone()));
            self.globals_before.0.push(before);
        }
        self.read(Owner::Global(ns.clone()), name, v, at);
    }

    fn touched_already(&self, key: usize, name: &str) -> bool {
        self.touched
            .get(&key)
            .is_some_and(|names| names.contains(name))
    }

    /// `obj.name = ...` on a module: later reads in this call see forward's own value.
    pub fn module_write(&mut self, obj: &Rc<Object>, name: &str) {
        self.first_touch(obj.id, name);
    }

    /// A global assigned under `global name`; `old` is what it holds until then.
    pub fn global_write(&mut self, ns: &Rc<ModuleNs>, name: &str, old: Option<Value>) {
        if self.first_touch(Rc::as_ptr(ns) as usize, name) {
            self.globals_before
                .0
                .push((ns.clone(), name.to_string(), old));
        }
    }

    /// The guarded values that hold something else now, each with its guard in Dynamo's
    /// words. `module_paths` names the traced tree's modules (`layers.0`).
    pub fn changes(&self, module_paths: &HashMap<usize, String>) -> Vec<GuardChange> {
        let mut out = vec![];
        for r in &self.reads {
            let Some(now) = r.owner.current(&r.name).as_ref().and_then(Plain::of) else {
                continue;
            };
            if now == r.value {
                continue;
            }
            let source = match &r.owner {
                Owner::Module(o) => {
                    let Some(path) = module_paths.get(&o.id) else {
                        continue;
                    };
                    format!("{}.{}", module_source(path), r.name)
                }
                Owner::Global(_) => format!("G['{}']", r.name),
            };
            out.push(GuardChange {
                guard: guard_text(&source, &r.value, &now),
                before: r.value.to_string(),
                after: now.to_string(),
                file: r.file,
                span: r.span,
                call_chain: r.call_chain.clone(),
                every_call: None,
            });
        }
        out
    }
}

impl GuardLog {
    /// Every value read, each with the guard Dynamo installs on it as read: equality for a
    /// scalar, string or tuple, `is None`, and the length of a list or dict (Dynamo's
    /// LIST_LENGTH and DICT_LENGTH; the items forward reads get guards of their own, not
    /// listed). A module outside the traced tree has no source Dynamo would name: left out.
    pub fn held(&self, module_paths: &HashMap<usize, String>) -> Vec<StateGuard> {
        let mut out = vec![];
        for r in &self.reads {
            let source = match &r.owner {
                Owner::Module(o) => match module_paths.get(&o.id) {
                    Some(path) => format!("{}.{}", module_source(path), r.name),
                    None => continue,
                },
                Owner::Global(_) => format!("G['{}']", r.name),
            };
            let guard = match &r.value {
                Plain::None => format!("{source} is None"),
                Plain::List(items) => format!("len({source}) == {}", items.len()),
                Plain::Dict(items) => format!("len({source}) == {}", items.len()),
                value => format!("{source} == {value}"),
            };
            out.push(StateGuard {
                guard,
                file: r.file,
                span: r.span,
                call_chain: r.call_chain.clone(),
            });
        }
        out
    }
}

/// Cheap first test, before a value is copied: plain data at the top.
fn may_guard(v: &Value) -> bool {
    matches!(
        v,
        Value::None
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Str(_)
            | Value::Tuple(_)
            | Value::List(_)
            | Value::Dict(_)
    )
}

/// Dynamo's source for a module of the tree: `self`, `self._modules['block']`,
/// `self._modules['layers']._modules['0']`.
fn module_source(path: &str) -> String {
    let mut out = String::from("self");
    for part in path.split('.').filter(|p| !p.is_empty()) {
        out.push_str(&format!("._modules['{part}']"));
    }
    out
}

/// The guard that fails, as Dynamo prints it: a list by its length (`not self.history` while
/// empty), a dict by the entry that changed, anything else by equality.
fn guard_text(source: &str, before: &Plain, after: &Plain) -> String {
    match (before, after) {
        (Plain::List(b), Plain::List(_)) if b.is_empty() => format!("not {source}"),
        (Plain::List(b), Plain::List(a)) if b.len() != a.len() => {
            format!("len({source}) == {}", b.len())
        }
        (Plain::Dict(b), Plain::Dict(a)) => {
            let changed = b
                .iter()
                .find(|(k, v)| a.iter().find(|(ka, _)| ka == k).map(|(_, va)| va) != Some(v));
            match changed {
                Some((k, v)) => format!("{source}[{k}] == {v}"),
                None => format!("len({source}) == {}", b.len()),
            }
        }
        _ => format!("{source} == {before}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guard texts torch 2.15 prints for these changes (tests/expected/recompiles).
    #[test]
    fn guards_read_as_dynamo_prints_them() {
        assert_eq!(module_source(""), "self");
        assert_eq!(
            module_source("layers.0"),
            "self._modules['layers']._modules['0']"
        );
        let int = |i| Plain::Int(i);
        assert_eq!(guard_text("self.step", &int(0), &int(1)), "self.step == 0");
        assert_eq!(
            guard_text(
                "self.seen",
                &Plain::Tuple(vec![int(1)]),
                &Plain::Tuple(vec![int(1), int(1)])
            ),
            "self.seen == (1,)"
        );
        assert_eq!(
            guard_text(
                "self.seen",
                &Plain::Tuple(vec![]),
                &Plain::Tuple(vec![int(1)])
            ),
            "self.seen == ()"
        );
        assert_eq!(
            guard_text("self.h", &Plain::List(vec![]), &Plain::List(vec![int(1)])),
            "not self.h"
        );
        assert_eq!(
            guard_text(
                "self.h",
                &Plain::List(vec![int(1)]),
                &Plain::List(vec![int(1), int(1)])
            ),
            "len(self.h) == 1"
        );
        let n = |v| Plain::Dict(vec![(Plain::Str("n".into()), int(v))]);
        assert_eq!(
            guard_text("self.stats", &n(0), &n(1)),
            "self.stats['n'] == 0"
        );
        assert_eq!(
            guard_text(
                "self.phase",
                &Plain::Str("first".into()),
                &Plain::Str("rest".into())
            ),
            "self.phase == 'first'"
        );
        assert_eq!(
            guard_text("self.warm", &Plain::Bool(false), &Plain::Bool(true)),
            "self.warm == False"
        );
    }
}
