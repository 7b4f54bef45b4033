//! einops' torch layers, `einops.layers.torch.Rearrange(pattern, **axes_lengths)` and
//! `Reduce(pattern, reduction, **axes_lengths)`, as Dynamo traces them (`EinMix` is built and
//! called in `einmix`, through the same entry points). einops registers only
//! its functions with `allow_in_graph` (and not at all from torch 2.8 on): Dynamo inlines the
//! layer's `forward`, which looks up the recipe its `__init__` prepared for the input's rank
//! (`self._multirecipe[input.ndim]`, a `KeyError` for a rank the pattern does not take) and
//! runs `einops._torch_specific.apply_for_scriptable_torch`: the steps of `_apply_recipe`
//! through `TorchJitBackend`, whose reduction passes the axes as a list and reduces `prod`
//! one axis at a time.
//!
//! The layer is built here as `__init__` builds it (its attributes `pattern`, `reduction`,
//! `axes_lengths`, `_axes_lengths`, the pattern checked for every rank
//! `_prepare_recipes_for_all_dims` prepares, an `EinopsError` as einops words it) and called
//! in `Interp::call_module_object`. A call this module cannot follow (an input of unknown
//! shape, an axis length that is not an int) is left to the caller: an opaque module call.

use std::cell::RefCell;
use std::rc::Rc;

use super::super::super::call::Kwargs;
use super::super::super::value::{ObjKind, Object, Value};
use super::super::super::{EResult, Frame, Interp};
use super::{parse, prepare, reconstruct, Anonymous, Group, Steps};
use crate::diagnostics::codes;
use crate::eval::types::proxy;
use crate::syntax::Span;

/// The module the layers live in, and the layers modelled.
const LAYERS_MODULE: &str = "einops.layers.torch.";
const LAYERS: &[&str] = &["Rearrange", "Reduce", "EinMix"];

/// The class of a layer modelled here (`Rearrange`, `Reduce`, `EinMix`) for the dotted path
/// of `class`.
pub(in crate::eval) fn layer_name(class: &Value) -> Option<&str> {
    let Value::External(p) = class else {
        return None;
    };
    let short = p.strip_prefix(LAYERS_MODULE)?;
    LAYERS.contains(&short).then_some(short)
}

/// The ranks `_prepare_recipes_for_all_dims` prepares a recipe for: the left side's number of
/// groups, or with an ellipsis that many minus one plus 0 to 7.
fn ranks(pattern: &str) -> Result<Vec<usize>, String> {
    let Some((left, _)) = pattern.split_once("->") else {
        return Err(format!("pattern `{pattern}` must have exactly one `->`"));
    };
    let mut anonymous = Anonymous {
        lengths: Default::default(),
    };
    let left = parse(left, &mut anonymous)?;
    let n = left.composition.len();
    if left.composition.contains(&Group::Ellipsis) || left.has_ellipsis {
        return Ok((0..8).map(|extra| n - 1 + extra).collect());
    }
    Ok(vec![n])
}

/// `repr(layer)` as einops writes it: `Rearrange('b c -> c b', c=2)`.
fn layer_repr(
    short: &str,
    pattern: &str,
    reduction: Option<&str>,
    axes: &[(String, Value)],
) -> String {
    let mut s = format!("{short}({}", crate::eval::types::string::repr(pattern));
    if let Some(r) = reduction {
        s.push_str(&format!(", {}", crate::eval::types::string::repr(r)));
    }
    for (k, v) in axes {
        let shown = match v {
            Value::Int(i) => i.to_string(),
            Value::Str(t) => t.to_string(),
            _ => "…".into(),
        };
        s.push_str(&format!(", {k}={shown}"));
    }
    s + ")"
}

impl Interp {
    /// `Rearrange(pattern, **axes_lengths)` / `Reduce(pattern, reduction, **axes_lengths)`:
    /// the layer, or einops' `EinopsError` for a pattern no rank takes; None for another
    /// class or arguments `__init__` would not take as written here (left unknown).
    pub(in crate::eval) fn construct_einops_layer(
        &mut self,
        frame: &Frame,
        path: &str,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        let short = layer_name(&Value::External(Rc::from(path)))?.to_string();
        if short == "EinMix" {
            return self.construct_einmix(frame, path, args, kwargs, span);
        }
        let mut kwargs = kwargs.clone();
        let mut positional = args.iter().cloned();
        let mut take = |name: &str, kwargs: &mut Kwargs| match positional.next() {
            Some(v) => Some(v),
            None => {
                let i = kwargs.iter().position(|(k, _)| k == name)?;
                Some(kwargs.remove(i).1)
            }
        };
        let Some(Value::Str(pattern)) = take("pattern", &mut kwargs) else {
            return None;
        };
        let reduction = match short.as_str() {
            "Reduce" => match take("reduction", &mut kwargs) {
                Some(Value::Str(r)) => Some(r),
                _ => return None,
            },
            _ => None,
        };
        if positional.next().is_some() {
            return None;
        }
        let operation = reduction.as_deref().unwrap_or("rearrange").to_string();
        let names: Vec<String> = kwargs.iter().map(|(k, _)| k.clone()).collect();
        let checked = ranks(&pattern).and_then(|ranks| {
            ranks
                .into_iter()
                .try_for_each(|ndim| prepare(&pattern, &operation, &names, ndim).map(|_| ()))
        });
        if let Err(e) = checked {
            let shown = layer_repr(&short, &pattern, reduction.as_deref(), &kwargs);
            let message = format!("EinopsError:  Error while preparing {shown}\n {e}");
            return Some(Err(self.error(frame, span, codes::RAISED, message)));
        }
        let obj = self.new_object(Value::External(Rc::from(path)), ObjKind::Module);
        let axes_dict: Vec<(Value, Value)> = kwargs
            .iter()
            .map(|(k, v)| (Value::str(k), v.clone()))
            .collect();
        let axes_items: Vec<Value> = kwargs
            .iter()
            .map(|(k, v)| Value::tuple(vec![Value::str(k), v.clone()]))
            .collect();
        {
            let mut attrs = obj.attrs.borrow_mut();
            attrs.insert("pattern".into(), Value::Str(pattern));
            if let Some(r) = reduction {
                attrs.insert("reduction".into(), Value::Str(r));
            }
            attrs.insert(
                "axes_lengths".into(),
                Value::Dict(Rc::new(RefCell::new(axes_dict))),
            );
            attrs.insert("_axes_lengths".into(), Value::tuple(axes_items));
        }
        Some(Ok(Value::Object(obj)))
    }

    /// The layer's `forward(input)` on a traced tensor of known shape: the recipe for its
    /// rank applied as `apply_for_scriptable_torch` applies it. None when this cannot be
    /// followed (the caller records an opaque call).
    pub(in crate::eval) fn call_einops_layer(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        if layer_name(&obj.class)? == "EinMix" {
            return self.call_einmix(frame, obj, args, kwargs, span);
        }
        let input = match (args, kwargs.as_slice()) {
            ([x], []) => x.clone(),
            ([], [(k, x)]) if k == "input" => x.clone(),
            _ => return None,
        };
        if !proxy::records_call(self, std::slice::from_ref(&input), &vec![]) {
            return None;
        }
        let shape = self.known_shape(&input)?;
        let (operation, steps) = self.layer_steps(obj, &shape)?;
        let steps = match steps {
            Ok(s) => s,
            Err(message) => {
                // the layer raises on this input whenever it runs: the user's bug (FX301) on
                // its call, and the trace goes on
                let module = Value::Object(obj.clone());
                let call = self.trace_module(frame, &module, vec![input], vec![], span);
                return Some(call.map(|call| {
                    self.mark_raising(&call, format!("raises {message}"));
                    call
                }));
            }
        };
        let reduction = (operation != "rearrange").then(|| Value::str(&operation));
        Some(self.apply_einops_steps(frame, input, steps, reduction, true, span))
    }

    /// The recipe of a `Rearrange` / `Reduce` layer for an input of this shape, with its
    /// operation (`rearrange` or the reduction): `Err` with the error it raises (a rank its
    /// pattern does not take, a shape that does not fit). None when this cannot be followed.
    pub(super) fn layer_steps(
        &self,
        obj: &Rc<Object>,
        shape: &[i64],
    ) -> Option<(String, Result<Steps, String>)> {
        let Some(Value::Str(pattern)) = obj.get("pattern") else {
            return None;
        };
        let operation = match obj.get("reduction") {
            None => "rearrange".to_string(),
            Some(Value::Str(r)) => r.to_string(),
            Some(_) => return None,
        };
        let mut axes = vec![];
        let Some(Value::Tuple(items)) = obj.get("_axes_lengths") else {
            return None;
        };
        for item in items.iter() {
            let Value::Tuple(pair) = item else {
                return None;
            };
            let (Some(Value::Str(k)), Some(v)) = (pair.first(), pair.get(1)) else {
                return None;
            };
            axes.push((k.to_string(), self.specialised_int(v)?));
        }
        let steps = if !ranks(&pattern).ok()?.contains(&shape.len()) {
            Err(format!(
                "KeyError: {} (the pattern `{pattern}` takes no input of rank {})",
                shape.len(),
                shape.len()
            ))
        } else {
            let names: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
            prepare(&pattern, &operation, &names, shape.len())
                .and_then(|(recipe, _)| reconstruct(&recipe, shape, &axes))
                .map_err(|m| format!("EinopsError: {m}"))
        };
        Some((operation, steps))
    }

    /// `TorchJitBackend.reduce`: `amin`/`amax`/`sum`/`mean` over the list of axes, `prod`
    /// one axis at a time from the last, and `NotImplementedError` for any other reduction.
    pub(super) fn scriptable_reduce(
        &mut self,
        frame: &Frame,
        mut t: Value,
        how: &str,
        reduced: Vec<Value>,
        span: Span,
    ) -> EResult<Value> {
        let method = match how {
            "min" => "amin",
            "max" => "amax",
            "sum" | "mean" => how,
            "prod" => {
                for axis in reduced.into_iter().rev() {
                    let dim = vec![("dim".into(), axis)];
                    t = self.trace_method(frame, "prod", t, vec![], dim, span)?;
                }
                return Ok(t);
            }
            other => {
                let message = format!("NotImplementedError: ('Unknown reduction ', '{other}')");
                return Err(self.error(frame, span, codes::RAISED, message));
            }
        };
        let dim = vec![("dim".into(), Value::list(reduced))];
        self.trace_method(frame, method, t, vec![], dim, span)
    }
}
