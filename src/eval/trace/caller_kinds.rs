//! What a file's own callers pass to a module class's forward, for the parameters it leaves
//! unannotated and without a default. Per-class analysis must invent an argument for each of
//! them, and a tensor is its guess; but `forward(self, hidden_states, input_dimensions)` is
//! called by the file's encoder with `(height, width)`, a tuple of ints, and a branch on those
//! sizes is no data-dependent branch. So, while the file's classes are traced, each call of
//! one of its module classes records the kind of Python value given for such a parameter (a
//! bool, an int, a float, a tuple of them: what an annotation could have said); a parameter
//! every recorded call gives the same kind is traced with it, as an annotation would be. Any
//! other value (a tensor, None, a list, an object), or two kinds, leaves the guess alone.
//!
//! Only calls made while the file's own classes are traced count (the scope), so what another
//! file's analysis saw never changes this one's. A class traced again replaces what its
//! earlier trace recorded: a class traced before its callers gave it their arguments passed
//! its own guesses on, and those must not outvote the callers.

use std::collections::HashMap;
use std::rc::Rc;

use crate::eval::value::{FnKind, Function, Object, Value};
use crate::eval::Interp;
use crate::semantic::FileId;
use crate::shapes::{Meta, Scalar, ScalarOrigin};

/// A module class, by its file and qualified name.
type ClassKey = (FileId, String);

/// The recorded kinds, by class, parameter, then the traced class whose trace made the call.
/// None: that trace's calls disagree, or gave something that is not a Python scalar or a
/// tuple of them.
#[derive(Default)]
pub struct CallerKinds {
    /// The class of the analysed file being traced, while one is.
    scope: Option<ClassKey>,
    by_class: HashMap<ClassKey, HashMap<String, HashMap<ClassKey, Option<Meta>>>>,
}

impl CallerKinds {
    /// Forgets what earlier analyses of `file` recorded.
    pub fn begin_file(&mut self, file: FileId) {
        self.by_class.retain(|(f, _), _| *f != file);
        self.scope = None;
    }

    /// Records the calls the trace of `root` (a class of the analysed file) makes, in place of
    /// what its earlier traces recorded; `None` stops recording.
    pub fn set_scope(&mut self, root: Option<(FileId, String)>) {
        if let Some(root) = &root {
            for params in self.by_class.values_mut() {
                for by_root in params.values_mut() {
                    by_root.remove(root);
                }
            }
        }
        self.scope = root;
    }

    fn note(&mut self, class: ClassKey, param: &str, kind: Option<Meta>) {
        let Some(root) = self.scope.clone() else {
            return;
        };
        let by_root = self
            .by_class
            .entry(class)
            .or_default()
            .entry(param.to_string())
            .or_default();
        match by_root.get_mut(&root) {
            Some(seen) => {
                if *seen != kind {
                    *seen = None;
                }
            }
            None => {
                by_root.insert(root, kind);
            }
        }
    }

    /// The kind every recorded call gave `param` of `class`'s forward, if they agree.
    fn kind_of(&self, class: &ClassKey, param: &str) -> Option<Meta> {
        let mut kinds = self.by_class.get(class)?.get(param)?.values();
        let first = kinds.next()?.clone()?;
        kinds.all(|k| k.as_ref() == Some(&first)).then_some(first)
    }
}

/// The kind of Python value `v` is, with its value forgotten (a caller's `(56, 56)` stands for
/// any pair of ints): a bool, an int (a size, as Dynamo specialises it), a float, or a tuple of
/// them. None for anything else.
fn python_kind(interp: &Interp, v: &Value) -> Option<Meta> {
    let scalar = |s: Scalar| meta_kind(&Meta::Scalar(s, ScalarOrigin::Const));
    match v {
        Value::Bool(b) => scalar(Scalar::Bool(Some(*b))),
        Value::Int(i) => scalar(Scalar::Int(Some(*i))),
        Value::Float(x) => scalar(Scalar::Float(Some(*x))),
        Value::Tuple(items) => items
            .iter()
            .map(|i| python_kind(interp, i))
            .collect::<Option<Vec<_>>>()
            .map(Meta::Seq),
        Value::Proxy(n) => meta_kind(&interp.tracer.as_ref()?.graph.node(*n).meta),
        _ => None,
    }
}

/// Whether the trace knows nothing of what `v` is (a trace of an input of unknown rank reads
/// its sizes as unknown values): such a call says nothing about the parameter.
fn is_unknown(interp: &Interp, v: &Value) -> bool {
    match v {
        Value::Unknown(_) => true,
        Value::Tuple(items) => items.iter().any(|i| is_unknown(interp, i)),
        Value::Proxy(n) => interp
            .tracer
            .as_ref()
            .is_some_and(|t| t.graph.node(*n).meta == Meta::Unknown),
        _ => false,
    }
}

/// [`python_kind`] of a traced value: a SymInt, or a tuple an argument placeholder stands for.
fn meta_kind(meta: &Meta) -> Option<Meta> {
    match meta {
        Meta::Scalar(s, _) => Some(match s {
            Scalar::Int(_) => Meta::Scalar(Scalar::Int(None), ScalarOrigin::Shape),
            Scalar::Float(_) => Meta::Scalar(Scalar::Float(None), ScalarOrigin::Const),
            Scalar::Bool(_) => Meta::Scalar(Scalar::Bool(None), ScalarOrigin::Const),
        }),
        Meta::Seq(items) => items
            .iter()
            .map(meta_kind)
            .collect::<Option<Vec<_>>>()
            .map(Meta::Seq),
        _ => None,
    }
}

fn class_key(obj: &Object) -> Option<ClassKey> {
    match &obj.class {
        Value::Class(c) => Some((c.file_id, c.qualname.clone())),
        _ => None,
    }
}

impl Interp {
    /// Records what a traced call of the module `obj`'s forward `f` gives its parameters, when
    /// `obj`'s class is one of the file whose classes are being traced.
    pub(in crate::eval) fn note_forward_call(
        &mut self,
        obj: &Rc<Object>,
        f: &Rc<Function>,
        args: &[Value],
        kwargs: &[(String, Value)],
    ) {
        let Some(scope) = self.caller_kinds.scope.as_ref().map(|(file, _)| *file) else {
            return;
        };
        let Some(class) = class_key(obj).filter(|(file, _)| *file == scope) else {
            return;
        };
        // the traced root's own call passes what per-class analysis invented, not a caller's
        let is_root = self
            .tracer
            .as_ref()
            .and_then(|t| t.module_paths.get(&obj.id))
            .is_none_or(|path| path.is_empty());
        if is_root {
            return;
        }
        use crate::catalog::ParamKind::*;
        let f = self.signature_function(f);
        let skip = usize::from(f.kind != FnKind::StaticMethod);
        let mut positional = args.iter();
        let mut given = Vec::new();
        let mut note = |name: &str, v: &Value| {
            if !is_unknown(self, v) {
                given.push((name.to_string(), python_kind(self, v)));
            }
        };
        for p in f.params.iter().skip(skip) {
            match p.kind {
                PositionalOnly | PositionalOrKeyword => match positional.next() {
                    Some(v) => note(&p.name, v),
                    None => {
                        if let Some((_, v)) = kwargs.iter().find(|(k, _)| *k == p.name) {
                            note(&p.name, v);
                        }
                    }
                },
                KeywordOnly => {
                    if let Some((_, v)) = kwargs.iter().find(|(k, _)| *k == p.name) {
                        note(&p.name, v);
                    }
                }
                VarPositional | VarKeyword => {}
            }
        }
        for (param, kind) in given {
            self.caller_kinds.note(class.clone(), &param, kind);
        }
    }

    /// The kind the file's callers agree `param` of the module class `class`'s forward is.
    pub fn caller_kind(&self, class: &Value, param: &str) -> Option<Meta> {
        let Value::Class(c) = class else {
            return None;
        };
        self.caller_kinds
            .kind_of(&(c.file_id, c.qualname.clone()), param)
    }
}
