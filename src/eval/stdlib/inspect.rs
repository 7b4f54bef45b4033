//! `inspect.signature` of a Python function: its `parameters` (name, kind, default) as
//! libraries read them to check a callback's arity (huggingface_hub's validators).

use std::cell::RefCell;
use std::rc::Rc;

use super::super::value::{FnKind, Function, ObjKind, Object, Value};
use super::super::Interp;
use crate::catalog::ParamKind;

impl Interp {
    pub(in crate::eval) fn call_inspect(&mut self, name: &str, args: &[Value]) -> Option<Value> {
        if name != "signature" {
            return None;
        }
        let (f, bound) = match args.first()? {
            Value::Function(f) => (f.clone(), false),
            Value::BoundMethod(_, f) => (f.clone(), true),
            _ => return None,
        };
        Some(self.signature(&self.signature_function(&f), bound))
    }

    /// A plain instance of the library class `class` with these attributes.
    pub(super) fn record(&mut self, class: &str, attrs: Vec<(&str, Value)>) -> Value {
        let o = Object {
            id: self.new_object_id(),
            class: Value::External(Rc::from(class)),
            kind: ObjKind::Plain,
            attrs: Default::default(),
            base: None,
        };
        for (k, v) in attrs {
            o.attrs.borrow_mut().insert(k.into(), v);
        }
        Value::Object(Rc::new(o))
    }

    fn signature(&mut self, f: &Function, bound: bool) -> Value {
        // A bound method's signature leaves out its receiver, as does a classmethod's.
        let skip = usize::from(bound || f.kind == FnKind::ClassMethod);
        let mut params = Vec::new();
        for p in f.params.iter().skip(skip) {
            let kind = match p.kind {
                ParamKind::PositionalOnly => "POSITIONAL_ONLY",
                ParamKind::PositionalOrKeyword => "POSITIONAL_OR_KEYWORD",
                ParamKind::VarPositional => "VAR_POSITIONAL",
                ParamKind::KeywordOnly => "KEYWORD_ONLY",
                ParamKind::VarKeyword => "VAR_KEYWORD",
            };
            let default = p
                .default
                .clone()
                .unwrap_or_else(|| Value::External(Rc::from("inspect.Parameter.empty")));
            let param = self.record(
                "inspect.Parameter",
                vec![
                    ("name", Value::str(&p.name)),
                    (
                        "kind",
                        Value::External(Rc::from(format!("inspect.Parameter.{kind}").as_str())),
                    ),
                    ("default", default),
                ],
            );
            params.push((Value::str(&p.name), param));
        }
        let parameters = Value::Dict(Rc::new(RefCell::new(params)));
        self.record("inspect.Signature", vec![("parameters", parameters)])
    }
}
