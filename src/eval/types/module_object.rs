//! Module objects (instances of torch.nn.Module and its subclasses, containers included): the
//! methods torch.nn gives every module (`modules()`, `named_parameters()`, `register_buffer`,
//! `append`, `get_submodule`, …) where the class does not define them itself.

use std::rc::Rc;

use crate::diagnostics::codes;
use crate::eval::call::{as_int, Kwargs};
use crate::eval::value::{Object, Param, Value};
use crate::eval::{EResult, Frame, Interp};
use crate::shapes::DType;
use crate::syntax::Span;

impl Interp {
    pub fn module_method(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        name: &str,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let a0 = args.first().cloned().unwrap_or(Value::None);
        match name {
            "modules" | "named_modules" => Ok(Value::list(modules(obj, name == "modules"))),
            "children" => Ok(Value::list(
                obj.children()
                    .into_iter()
                    .map(|(_, c)| Value::Object(c))
                    .collect(),
            )),
            "named_children" => Ok(Value::list(
                obj.children()
                    .into_iter()
                    .map(|(n, c)| Value::tuple(vec![Value::str(&n), Value::Object(c)]))
                    .collect(),
            )),
            "parameters" | "named_parameters" | "buffers" | "named_buffers" => {
                Ok(Value::list(tensors(obj, name)))
            }
            "add_module" | "register_module" => {
                if let Value::Str(n) = &a0 {
                    obj.attrs.borrow_mut().insert(
                        n.to_string(),
                        arg(&args, &kwargs, 1, "module").unwrap_or(Value::None),
                    );
                }
                Ok(Value::None)
            }
            "register_buffer" | "register_parameter" => {
                register_tensor(obj, name, &args, &kwargs);
                Ok(Value::None)
            }
            "apply" => {
                let mods = self.module_method(frame, obj, "modules", vec![], vec![], span)?;
                let mut items = self.iterate(frame, &mods, span)?;
                items.reverse();
                for m in items {
                    self.call_value(frame, &a0, vec![m], vec![], span)?;
                }
                Ok(Value::Object(obj.clone()))
            }
            "append" => {
                let n = obj.children().len()
                    + obj
                        .attrs
                        .borrow()
                        .iter()
                        .filter(|(k, v)| {
                            k.parse::<usize>().is_ok() && !matches!(v, Value::Object(_))
                        })
                        .count();
                obj.attrs.borrow_mut().insert(n.to_string(), a0);
                Ok(Value::Object(obj.clone()))
            }
            "extend" => {
                for m in self.iterate(frame, &a0, span)? {
                    self.module_method(frame, obj, "append", vec![m], vec![], span)?;
                }
                Ok(Value::Object(obj.clone()))
            }
            "insert" => {
                insert(obj, &a0, args.get(1).cloned().unwrap_or(Value::None));
                Ok(Value::None)
            }
            "items" => Ok(Value::list(
                obj.children()
                    .into_iter()
                    .map(|(n, c)| Value::tuple(vec![Value::str(&n), Value::Object(c)]))
                    .collect(),
            )),
            "keys" => Ok(Value::list(
                obj.children()
                    .into_iter()
                    .map(|(n, _)| Value::str(&n))
                    .collect(),
            )),
            "values" => Ok(Value::list(
                obj.children()
                    .into_iter()
                    .map(|(_, c)| Value::Object(c))
                    .collect(),
            )),
            "get_submodule" => {
                let Value::Str(path) = &a0 else {
                    return Ok(Value::unknown("submodule"));
                };
                let mut cur = Value::Object(obj.clone());
                for part in path.split('.').filter(|p| !p.is_empty()) {
                    cur = self.get_attr(frame, &cur, part, span)?;
                }
                Ok(cur)
            }
            "get_parameter" | "get_buffer" => self.get_tensor(frame, obj, name, &a0, span),
            "eval" | "train" | "to" | "cuda" | "cpu" | "float" | "half" | "double" | "bfloat16"
            | "requires_grad_" | "type" | "share_memory" => Ok(Value::Object(obj.clone())),
            "forward" => self.call_module_object(frame, obj, args, kwargs, span),
            // draws the parameters again: their shapes stay
            "__init__" | "reset_parameters" => Ok(Value::None),
            _ => Ok(Value::unknown(format!("Module.{name}()"))),
        }
    }

    /// `get_parameter("lm_head.weight")`: the submodule's attribute, if it is a parameter (a
    /// buffer for `get_buffer`); AttributeError otherwise, as torch raises it.
    fn get_tensor(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        name: &str,
        a0: &Value,
        span: Span,
    ) -> EResult<Value> {
        let Value::Str(path) = a0 else {
            return Ok(Value::unknown(format!("Module.{name}()")));
        };
        let (parent, attr) = match path.rsplit_once('.') {
            Some((p, a)) => (
                self.module_method(
                    frame,
                    obj,
                    "get_submodule",
                    vec![Value::str(p)],
                    vec![],
                    span,
                )?,
                a.to_string(),
            ),
            None => (Value::Object(obj.clone()), path.to_string()),
        };
        let want_buffer = name == "get_buffer";
        match &parent {
            Value::Object(m) => match m.get(&attr) {
                Some(Value::Param(p)) if p.is_buffer == want_buffer => Ok(Value::Param(p)),
                _ => Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!(
                        "AttributeError: `{attr}` is not a {}",
                        if want_buffer { "buffer" } else { "parameter" }
                    ),
                )),
            },
            _ => Ok(Value::unknown(format!("Module.{name}()"))),
        }
    }
}

/// Argument `n`, or the keyword `key`.
fn arg(args: &[Value], kwargs: &Kwargs, n: usize, key: &str) -> Option<Value> {
    args.get(n).cloned().or_else(|| {
        kwargs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    })
}

/// A child's dotted name under `path` (the root's path is empty).
fn child_path(path: &str, name: String) -> String {
    if path.is_empty() {
        name
    } else {
        format!("{path}.{name}")
    }
}

/// `modules()` (`named_modules()` when not `bare`): the module and its descendants, depth
/// first, each once.
fn modules(obj: &Rc<Object>, bare: bool) -> Vec<Value> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), obj.clone())];
    let mut seen = std::collections::HashSet::new();
    while let Some((path, m)) = stack.pop() {
        if !seen.insert(m.id) {
            continue;
        }
        out.push(if bare {
            Value::Object(m.clone())
        } else {
            Value::tuple(vec![Value::str(&path), Value::Object(m.clone())])
        });
        for (n, c) in m.children().into_iter().rev() {
            stack.push((child_path(&path, n), c));
        }
    }
    out
}

/// `parameters()`, `named_parameters()`, `buffers()`, `named_buffers()` (`name` says which).
fn tensors(obj: &Rc<Object>, name: &str) -> Vec<Value> {
    let want_buffers = name.contains("buffers");
    let named = name.starts_with("named");
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), obj.clone())];
    while let Some((path, m)) = stack.pop() {
        for (k, v) in m.attrs.borrow().iter() {
            if let Value::Param(p) = v {
                if p.is_buffer == want_buffers {
                    let full = child_path(&path, k.clone());
                    out.push(if named {
                        Value::tuple(vec![Value::str(&full), v.clone()])
                    } else {
                        v.clone()
                    });
                }
            }
        }
        for (n, c) in m.children().into_iter().rev() {
            stack.push((child_path(&path, n), c));
        }
    }
    out
}

/// `register_buffer(name, tensor)` / `register_parameter(name, param)`: a parameter of the
/// tensor's shape and dtype, marked as a buffer or not.
fn register_tensor(obj: &Rc<Object>, name: &str, args: &[Value], kwargs: &Kwargs) {
    let Some(Value::Str(n)) = args.first() else {
        return;
    };
    let key = if name == "register_buffer" {
        "tensor"
    } else {
        "param"
    };
    let t = arg(args, kwargs, 1, key).unwrap_or(Value::None);
    let v = match t {
        Value::TensorConst(tc) => Value::Param(Rc::new(Param {
            shape: tc.shape.clone(),
            dtype: tc.dtype,
            is_buffer: name == "register_buffer",
            nn_buffer: false,
        })),
        Value::Param(p) => Value::Param(Rc::new(Param {
            shape: p.shape.clone(),
            dtype: p.dtype,
            is_buffer: name == "register_buffer",
            nn_buffer: p.nn_buffer,
        })),
        Value::None => Value::None,
        _ => Value::Param(Rc::new(Param {
            shape: None,
            dtype: DType::Float32,
            is_buffer: name == "register_buffer",
            nn_buffer: false,
        })),
    };
    obj.attrs.borrow_mut().insert(n.to_string(), v);
}

/// `ModuleList.insert(i, module)`: the children renumbered from 0 with `module` at `i`.
fn insert(obj: &Rc<Object>, index: &Value, module: Value) {
    let mut items: Vec<Value> = obj
        .children()
        .into_iter()
        .map(|(_, c)| Value::Object(c))
        .collect();
    let i = as_int(index).unwrap_or(items.len() as i64);
    let i = if i < 0 {
        (i + items.len() as i64).max(0)
    } else {
        i.min(items.len() as i64)
    } as usize;
    items.insert(i, module);
    let mut attrs = obj.attrs.borrow_mut();
    attrs.retain(|k, _| k.parse::<usize>().is_err());
    for (j, m) in items.into_iter().enumerate() {
        attrs.insert(j.to_string(), m);
    }
}
