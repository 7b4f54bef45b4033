//! An instance's `__dict__` used in place (`Value::InstanceDict`): the dict methods and item
//! writes that read or change the instance's attributes directly, as Python's `__dict__` is
//! the instance's own namespace. A module's `_modules` works the same way over its child
//! modules: transformers' detection models swap each `BatchNorm2d` for a frozen one with
//! `model._modules[name] = new_module`, timm's fusing code reads `self._modules.values()`. transformers relies on it: a per-layer config is a
//! `copy.copy` of the model's with `__dict__.pop("_heterogeneity_spec")`, and every config
//! attribute read asks `super().__getattribute__("__dict__").get(...)`. Writes bypass
//! `__setattr__`, as they do in Python.

use std::rc::Rc;

use super::call::Kwargs;
use super::value::{Namespace, Object, Value};
use super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::syntax::Span;

/// The names `get_attr` binds to the live dict; any other attribute is the snapshot's.
pub(super) fn is_live_method(name: &str) -> bool {
    matches!(
        name,
        "get"
            | "pop"
            | "setdefault"
            | "update"
            | "clear"
            | "__contains__"
            | "__getitem__"
            | "__setitem__"
            | "__delitem__"
    )
}

impl Interp {
    /// `obj.__dict__.<name>(*args, **kwargs)` on the instance's attributes (or
    /// `obj._modules.<name>(...)` on its child modules). A key that is not a string is no
    /// attribute: reads answer from a snapshot, writes of it change nothing and give an unknown
    /// result.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_instance_dict_method(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        namespace: Namespace,
        name: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let key = match args.first() {
            Some(Value::Str(k)) => Some(k.clone()),
            _ => None,
        };
        // what the dict shows of the attributes (not the evaluator's dunder bookkeeping, nor,
        // for `_modules`, what is not a child module)
        let present = |k: &str| obj.has_entry(namespace, k);
        let visible = |k: &str| obj.get(k).filter(|_| present(k));
        let missing = |interp: &mut Interp, k: &str| {
            interp.error(frame, span, codes::RAISED, format!("KeyError: '{k}'"))
        };
        match (name, key) {
            ("get", Some(k)) => {
                Ok(visible(&k).unwrap_or_else(|| super::types::dict::default(&args, &kwargs)))
            }
            ("__getitem__", Some(k)) => match visible(&k) {
                Some(v) => Ok(v),
                None => Err(missing(self, &k)),
            },
            ("__contains__", Some(k)) => Ok(Value::Bool(present(&k))),
            ("pop" | "__delitem__", Some(k)) => {
                if present(&k) {
                    let v = obj.attrs.borrow_mut().shift_remove(&*k);
                    return Ok(match name {
                        "pop" => v.unwrap_or(Value::None),
                        _ => Value::None,
                    });
                }
                match (name, args.get(1)) {
                    ("pop", Some(default)) => Ok(default.clone()),
                    _ => Err(missing(self, &k)),
                }
            }
            ("setdefault", Some(k)) => {
                if let Some(v) = visible(&k) {
                    return Ok(v);
                }
                let v = super::types::dict::default(&args, &kwargs);
                obj.attrs.borrow_mut().insert(k.to_string(), v.clone());
                Ok(v)
            }
            ("__setitem__", Some(k)) => {
                let v = args.get(1).cloned().unwrap_or(Value::None);
                obj.attrs.borrow_mut().insert(k.to_string(), v);
                Ok(Value::None)
            }
            ("__setitem__" | "__delitem__" | "setdefault" | "pop", None) => Ok(Value::unknown(
                format!("`__dict__.{name}` with a key that is not a string"),
            )),
            ("update", _) => {
                let mut items = match args.first() {
                    None | Some(Value::None) => vec![],
                    Some(Value::Dict(d)) => d.borrow().clone(),
                    Some(_) => return Ok(Value::unknown("`__dict__.update` from a non-dict")),
                };
                items.extend(kwargs.into_iter().map(|(k, v)| (Value::str(&k), v)));
                let mut attrs = obj.attrs.borrow_mut();
                for (k, v) in items {
                    if let Value::Str(k) = k {
                        attrs.insert(k.to_string(), v);
                    }
                }
                Ok(Value::None)
            }
            ("clear", _) => {
                let keys: Vec<String> = obj.attrs.borrow().keys().cloned().collect();
                let gone: Vec<String> = keys.into_iter().filter(|k| present(k)).collect();
                obj.attrs.borrow_mut().retain(|k, _| !gone.contains(k));
                Ok(Value::None)
            }
            _ => {
                let snapshot = Rc::new(obj.snapshot(namespace));
                self.call_method(frame, &snapshot, name, args, kwargs, span)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use crate::analysis::{analyze_in_project, GraphOptions};
    use crate::semantic::Project;

    /// The output widths of `M()`'s linear layers, in order, for a constructor `body` that
    /// sets `a`, `b`, `c` (each 4 or 8) from what it observes of an instance's `__dict__`
    /// (of a plain `C`, or of a `Cfg` whose `__getattribute__` reads its own `__dict__`).
    fn widths(body: &str) -> Vec<String> {
        let text = format!(
            "import copy\nimport torch\nfrom torch import nn\n\n\nclass C:\n    def __init__(self):\n        self.x = 1\n        self.y = 2\n\n\nclass Mixin:\n    def __getattribute__(self, key):\n        spec = super().__getattribute__(\"__dict__\").get(\"_spec\")\n        return super().__getattribute__(key)\n\n\nclass Cfg(Mixin):\n    def __init__(self):\n        self._spec = 1\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n{body}\n        self.fa = nn.Linear(4, a)\n        self.fb = nn.Linear(4, b)\n        self.fc = nn.Linear(4, c)\n\n    def forward(self, x):\n        return self.fa(x), self.fb(x), self.fc(x)\n"
        );
        let mut project = Project::new("/virtual");
        project.add_overlay("/virtual/m.py", Arc::from(text.as_str()), None);
        let opts = GraphOptions {
            entry: Some("M()".into()),
            ..Default::default()
        };
        let analysis = analyze_in_project(project, Path::new("/virtual/m.py"), &opts)
            .expect("the entry is built");
        let g = &analysis.graphs[0].graph;
        g.nodes()
            .filter(|(_, n)| n.op == crate::graph::Op::CallModule)
            .map(|(_, n)| match &n.meta {
                crate::shapes::Meta::Tensor(t) => t
                    .shape
                    .as_ref()
                    .and_then(|s| s.last())
                    .map(|d| d.to_string())
                    .unwrap_or_default(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn pop_and_item_writes_change_the_instance() {
        let body = "        c = C()\n        d = copy.copy(c)\n        d.__dict__.pop(\"x\", None)\n        c.__dict__[\"z\"] = 5\n        del c.__dict__[\"y\"]\n        a = 4 if hasattr(d, \"x\") else 8\n        b = 8 if hasattr(c, \"z\") and c.z == 5 else 4\n        c = 8 if not hasattr(c, \"y\") and hasattr(d, \"y\") else 4";
        assert_eq!(widths(body), ["8", "8", "8"]);
    }

    #[test]
    fn setdefault_update_and_get_read_and_write_attributes() {
        let body = "        o = C()\n        o.__dict__.update({\"w\": 3}, v=4)\n        seen = o.__dict__.setdefault(\"x\", 9)\n        o.__dict__.setdefault(\"u\", 8)\n        a = 8 if (o.w, o.v, seen, o.u) == (3, 4, 1, 8) else 4\n        b = 8 if o.__dict__.get(\"missing\", 7) == 7 and \"w\" in o.__dict__ else 4\n        snapshot = o.__dict__\n        o.t = 1\n        c = 8 if \"t\" not in snapshot and o.__dict__.get(\"t\") == 1 else 4";
        assert_eq!(widths(body), ["8", "8", "8"]);
    }

    /// transformers' per-layer configs: a copy of a config whose `__getattribute__` reads
    /// `super().__getattribute__("__dict__")` on every access, with one key popped from the
    /// copy's `__dict__` (through the override) and the original left as it was.
    #[test]
    fn through_a_getattribute_override_the_dict_is_the_instances() {
        let body = "        c = Cfg()\n        layer = copy.copy(c)\n        layer.__dict__.pop(\"_spec\", None)\n        a = 8 if not hasattr(layer, \"_spec\") else 4\n        b = 8 if hasattr(c, \"_spec\") else 4\n        c = 8";
        assert_eq!(widths(body), ["8", "8", "8"]);
    }

    #[test]
    fn a_missing_key_raises_key_error() {
        let body = "        o = C()\n        try:\n            o.__dict__.pop(\"nope\")\n            a = 4\n        except KeyError:\n            a = 8\n        try:\n            o.__dict__[\"nope\"]\n            b = 4\n        except KeyError:\n            b = 8\n        c = 8";
        assert_eq!(widths(body), ["8", "8", "8"]);
    }
}
