//! A list, set or dict comprehension that iterates a list or a dict, recorded while forward is
//! traced for the graph-break pass over frames (`breaks/frames.rs`).
//!
//! Before Python 3.12 a comprehension is a function of its own, called with the iterator of
//! its first iterable (`.0`). Dynamo inlines it while it traces the enclosing frame. When that
//! frame runs eagerly instead (a break in a loop or a `try` body gave up on it), Dynamo meets
//! the comprehension as a frame of its own, and compiles it if the frame holds torch state:
//! a tensor or a module among its free variables, or a torch module among the globals it names
//! (`has_tensor_in_frame` in Dynamo's `convert_frame.py`). A `list_iterator` or a dict's
//! iterator as a frame input has no model in Dynamo: GB9493 on torch 2.15, GB0156 on 2.8
//! (measured on Python 3.11); tuple and range iterators trace. Python 3.12 inlines
//! comprehensions (PEP 709), so there is no such frame.

use std::collections::HashSet;

use tree_sitter::Node;

use super::types::proxy;
use super::value::Value;
use super::{Frame, Interp};
use crate::syntax::{text, FieldExt, KindExt, Span};

/// Torch modules a global name may hold that make Dynamo compile the frame naming it.
const TORCH_MODULES: &[&str] = &[
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.fft",
    "torch.linalg",
    "torch.special",
    "torch.distributed",
    "torch.utils.checkpoint",
];

impl Interp {
    /// Records the comprehension `node` whose first iterable `iterable` gave `it`, when its own
    /// frame would iterate an iterator Dynamo has no model of and holds torch state. The
    /// event's detail is the iterator's type, with `?` appended when no Python environment
    /// tells whether comprehensions are frames of their own.
    pub(super) fn note_comprehension(
        &mut self,
        frame: &Frame,
        node: Node,
        iterable: Node,
        it: &Value,
    ) {
        if !proxy::reports_comprehension_frames(self) || node.kind_name() == "generator_expression"
        {
            return;
        }
        let src = &*frame.file.text;
        let Some(iterator) = iterator_type(iterable, it, src) else {
            return;
        };
        let version = match self.python_before(3, 12) {
            Some(false) => return,
            Some(true) => "",
            None => "?",
        };
        let names = super::free_vars::comprehension_free_names(node, src);
        if !names.iter().any(|n| holds_torch_state(frame, n)) {
            return;
        }
        if let Some(t) = self.tracer.as_mut() {
            t.event(
                crate::traced::EventKind::Comprehension,
                frame.file_id,
                Span::of(node),
                format!("{iterator}{version}"),
            );
        }
    }
}

/// Whether the name, read by a comprehension's frame, makes Dynamo compile that frame: a
/// local of the enclosing code (a free variable) holding a tensor or a module, or a global
/// holding a torch module.
fn holds_torch_state(frame: &Frame, name: &str) -> bool {
    if let Some(v) = super::call::local_value(frame, name) {
        return has_tensor(&v, &mut HashSet::new());
    }
    matches!(
        frame.globals.vars.borrow().get(name),
        Some(Value::External(path)) if TORCH_MODULES.contains(&&**path)
    )
}

/// The iterator a comprehension's frame gets for its first iterable, when Dynamo has no model
/// of it; None for the ones it traces (tuples, ranges) and for what was not measured.
fn iterator_type(iterable: Node, it: &Value, src: &str) -> Option<&'static str> {
    // `d.items()` and the other views are lists here; the syntax tells which iterator it is
    let view = (iterable.kind_name() == "call")
        .then(|| iterable.field("function"))
        .flatten()
        .filter(|f| f.kind_name() == "attribute")
        .and_then(|f| f.field("attribute"))
        .map(|a| text(a, src));
    match (it, view) {
        (Value::List(_), Some("items")) => Some("dict_itemiterator"),
        (Value::List(_), Some("keys")) => Some("dict_keyiterator"),
        (Value::List(_), Some("values")) => Some("dict_valueiterator"),
        (Value::List(_), _) => Some("list_iterator"),
        (Value::Dict(_) | Value::InstanceDict(..) | Value::ModuleGlobals(_), _) => {
            Some("dict_keyiterator")
        }
        _ => None,
    }
}

/// `has_tensor` of Dynamo's frame check: a tensor or a module, or a list, tuple or dict
/// holding one.
fn has_tensor(v: &Value, seen: &mut HashSet<usize>) -> bool {
    match v {
        Value::Proxy(_) | Value::TensorConst(_) | Value::Param(_) => true,
        Value::Object(o) => o.is_module(),
        Value::List(items) => {
            seen.insert(std::rc::Rc::as_ptr(items) as *const () as usize)
                && items.borrow().iter().any(|i| has_tensor(i, seen))
        }
        Value::Tuple(items) => items.iter().any(|i| has_tensor(i, seen)),
        Value::Dict(items) => {
            seen.insert(std::rc::Rc::as_ptr(items) as *const () as usize)
                && items.borrow().iter().any(|(_, i)| has_tensor(i, seen))
        }
        _ => false,
    }
}
