//! Tensors known while constructing a model: `TensorConst` (a tensor a constructor made, with
//! its shape and sometimes its data) and `Param` (a parameter or buffer of a module). In a
//! traced forward they enter the graph when used with traced values; elsewhere their methods
//! compute shapes (and values, for small constant data) the way torch would eagerly.

use crate::eval::types::proxy;
use std::rc::Rc;

use crate::diagnostics::codes;
use crate::eval::call::{any_proxy, as_int, Kwargs};
use crate::eval::value::{Param, TensorConst, Value};
use crate::eval::{EResult, Frame, Interp};
use crate::shapes::DType;
use crate::syntax::Span;

/// `t.name(*args, **kwargs)` on a constant tensor (`r` is `t` as a value).
#[allow(clippy::too_many_arguments)]
pub(in crate::eval) fn const_method(
    interp: &mut Interp,
    frame: &Frame,
    r: &Value,
    t: &TensorConst,
    name: &str,
    args: Vec<Value>,
    kwargs: Kwargs,
    span: Span,
) -> EResult<Value> {
    if proxy::records_call(interp, &args, &kwargs) {
        return interp.trace_method(frame, name, r.clone(), args, kwargs, span);
    }
    // `torch.zeros(4, 8).requires_grad_()` in forward: Dynamo traces the flag change
    // (and may break on it), so the constant enters the graph here.
    if name == "requires_grad_" && proxy::requires_grad_enters_graph(interp) {
        if let Some(tr) = interp.tracer.as_mut() {
            tr.event(
                crate::traced::EventKind::Method,
                frame.file_id,
                span,
                name.to_string(),
            );
        }
        return interp.trace_method(frame, name, r.clone(), args, kwargs, span);
    }
    if let Some(v) = crate::eval::stdlib::tensor_const::unary(name, t, &args) {
        return Ok(v);
    }
    Ok(match name {
        // In-place initialisers return the tensor itself.
        n if n.ends_with('_') => r.clone(),
        "size" | "dim" => shape_query(t.shape.as_deref(), name, &args),
        "numel" => t
            .shape
            .as_ref()
            .map(|s| Value::Int(s.iter().product()))
            .unwrap_or_else(|| Value::unknown("numel")),
        "float" | "to" | "clone" | "detach" | "contiguous" => r.clone(),
        // `torch.arange(n).expand((1, -1))` (a position-ids buffer): the shape.
        "expand" => expand(t, &args),
        "long" => Value::TensorConst(Rc::new(TensorConst::of_shape(
            t.shape.clone(),
            DType::Int64,
        ))),
        "bool" => Value::TensorConst(Rc::new(TensorConst::of_shape(t.shape.clone(), DType::Bool))),
        "item" => match (&t.data, t.shape.as_deref()) {
            (Some(d), Some(s)) if d.len() == 1 && s.iter().all(|&n| n == 1) => t.number(d[0]),
            _ => Value::unknown("value of a constant tensor"),
        },
        "split" if t.data.is_some() && matches!(t.shape.as_deref(), Some([_])) => {
            split_constant(t, args.first().unwrap_or(&Value::None))
                .unwrap_or_else(|| Value::unknown("split of a constant tensor"))
        }
        "tolist" => match (&t.data, t.shape.as_deref()) {
            (Some(d), Some([])) if d.len() == 1 => t.number(d[0]),
            (Some(d), Some([n])) if d.len() == *n as usize => {
                Value::list(d.iter().map(|&x| t.number(x)).collect())
            }
            _ => Value::unknown("value of a constant tensor"),
        },
        _ => {
            let mut operands = vec![r.clone()];
            operands.extend(args.iter().cloned());
            crate::eval::stdlib::tensor_const::shaped(name, &operands, &kwargs)
        }
    })
}

/// `t.expand(*sizes)` of a constant tensor: a tensor of the expanded shape (`-1` keeps a size).
fn expand(t: &TensorConst, args: &[Value]) -> Value {
    let sizes = match args {
        [Value::Tuple(t)] => t.to_vec(),
        [Value::List(l)] => l.borrow().clone(),
        other => other.to_vec(),
    };
    let sizes: Option<Vec<i64>> = sizes.iter().map(as_int).collect();
    let shape = match (sizes, t.shape.as_deref()) {
        (Some(sizes), Some(old)) if sizes.len() >= old.len() => {
            let lead = sizes.len() - old.len();
            Some(
                sizes
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| {
                        if s == -1 && i >= lead {
                            old[i - lead]
                        } else {
                            s
                        }
                    })
                    .collect(),
            )
        }
        _ => None,
    };
    Value::TensorConst(Rc::new(TensorConst::of_shape(shape, t.dtype)))
}

/// A method of a buffer read in the traced forward (other than its size and rank, which are
/// constants, as torch.fx computes them eagerly): recorded on its `get_attr`.
#[allow(clippy::too_many_arguments)]
pub(in crate::eval) fn traced_param_method(
    interp: &mut Interp,
    frame: &Frame,
    r: &Value,
    p: &Rc<Param>,
    name: &str,
    args: Vec<Value>,
    kwargs: Kwargs,
    span: Span,
) -> EResult<Value> {
    // torch.fx runs a buffer's method eagerly when no traced value is involved:
    // the result is a tensor constant (a `_tensor_constant` where it is used).
    if !any_proxy(&args, &kwargs) {
        let mut metas = vec![crate::eval::trace::value_meta(r)];
        metas.extend(args.iter().map(crate::eval::trace::value_meta));
        let kmetas: Vec<(String, crate::shapes::Meta)> = kwargs
            .iter()
            .map(|(k, v)| (k.clone(), crate::eval::trace::value_meta(v)))
            .collect();
        let meta = crate::shapes::rules::call(
            name,
            &crate::shapes::rules::Inputs {
                args: &metas,
                kwargs: &kmetas,
            },
        );
        if let crate::shapes::Meta::Tensor(t) = meta {
            return Ok(Value::TensorConst(Rc::new(TensorConst::of_shape(
                t.shape.as_ref().and_then(crate::shapes::concrete),
                t.dtype,
            ))));
        }
    }
    match interp
        .tracer
        .as_mut()
        .and_then(|t| t.buffer_use(p, frame.file_id, span))
    {
        Some(n) => interp.trace_method(frame, name, Value::Proxy(n), args, kwargs, span),
        None => Ok(Value::unknown(format!("parameter.{name}"))),
    }
}

/// `p.name(*args)` on a parameter or buffer while constructing (`r` is `p` as a value).
pub(in crate::eval) fn param_method(r: &Value, p: &Param, name: &str, args: &[Value]) -> Value {
    match name {
        n if n.ends_with('_') => r.clone(),
        "size" | "dim" => shape_query(p.shape.as_deref(), name, args),
        "numel" => p
            .shape
            .as_ref()
            .map(|s| Value::Int(s.iter().product()))
            .unwrap_or_else(|| Value::unknown("numel")),
        _ => Value::unknown(format!("parameter.{name}")),
    }
}

/// `a OP b` where either operand is a constant tensor or a parameter: the values where they
/// are known, else the shape and dtype torch broadcasts to.
pub(in crate::eval) fn binary_op(name: &str, a: &Value, b: &Value) -> Value {
    if let Some(v) = crate::eval::stdlib::tensor_const::binary(name, a, b) {
        return v;
    }
    let t = if matches!(a, Value::TensorConst(_) | Value::Param(_)) {
        a
    } else {
        b
    };
    // Values not computed: the shape and dtype torch broadcasts to.
    match t {
        Value::TensorConst(_) => {
            let target = format!("operator.{name}");
            let op = crate::graph::OpKey::Function(&target).name();
            crate::eval::stdlib::tensor_const::shaped(op, &[a.clone(), b.clone()], &[])
        }
        _ => t.clone(),
    }
}

/// `self.weight[i]` in a constructor: a tensor of the remaining dimensions.
pub(in crate::eval) fn param_item(
    interp: &Interp,
    frame: &Frame,
    p: &Param,
    i: i64,
    span: Span,
) -> EResult<Value> {
    match p.shape.as_deref() {
        Some([n, rest @ ..]) if (-n..*n).contains(&i) => Ok(Value::TensorConst(Rc::new(
            TensorConst::of_shape(Some(rest.to_vec()), p.dtype),
        ))),
        Some([n, ..]) => Err(interp.error(
            frame,
            span,
            codes::RAISED,
            format!("IndexError: index {i} is out of bounds for dimension 0 with size {n}"),
        )),
        _ => Ok(Value::TensorConst(Rc::new(TensorConst::of_shape(
            None, p.dtype,
        )))),
    }
}

/// `t[key]` of a constant tensor (`obj` is `t` as a value): an element of a 1-D tensor with
/// data, else a tensor of the indexed shape.
pub(in crate::eval) fn const_item(
    interp: &Interp,
    frame: &Frame,
    obj: &Value,
    t: &TensorConst,
    key: &Value,
    span: Span,
) -> EResult<Value> {
    match (as_int(key), &t.data, t.shape.as_deref()) {
        (Some(i), Some(d), Some([n])) if d.len() == *n as usize => {
            let idx = if i < 0 { i + n } else { i };
            match d.get(idx as usize).filter(|_| idx >= 0) {
                Some(&x) => Ok(Value::TensorConst(Rc::new(TensorConst {
                    shape: Some(vec![]),
                    dtype: t.dtype,
                    data: Some(Rc::from([x])),
                }))),
                None => Err(interp.error(
                    frame,
                    span,
                    codes::RAISED,
                    format!("IndexError: index {i} is out of bounds for dimension 0 with size {n}"),
                )),
            }
        }
        _ => Ok(crate::eval::stdlib::tensor_const::shaped(
            "getitem",
            &[obj.clone(), key.clone()],
            &[],
        )),
    }
}

/// `for x in t` over a constant tensor of rank one or more (`v` is `t` as a value): its
/// first dimension.
pub(in crate::eval) fn iterate(
    interp: &mut Interp,
    frame: &Frame,
    v: &Value,
    t: &TensorConst,
    span: Span,
) -> EResult<Vec<Value>> {
    let n = t.shape.as_ref().map(|s| s[0]).unwrap_or(0).max(0);
    if n as usize > interp.limits.max_collection {
        return Err(interp.error(frame, span, codes::BUDGET, "tensor too long to iterate"));
    }
    (0..n)
        .map(|i| match t.shape.as_deref() {
            Some([_]) if t.data.is_some() => interp.get_item(frame, v, Value::Int(i), span),
            shape => Ok(Value::TensorConst(Rc::new(TensorConst::of_shape(
                shape.map(|s| s[1..].to_vec()),
                t.dtype,
            )))),
        })
        .collect()
}

/// `t.split(n)` / `t.split([a, b, …])` of a 1-D constant tensor: its pieces, data included.
fn split_constant(t: &TensorConst, sizes: &Value) -> Option<Value> {
    let data = t.data.as_ref()?;
    let n = data.len();
    let sizes: Vec<usize> = match sizes {
        Value::Int(k) if *k > 0 => {
            let k = *k as usize;
            (0..n.div_ceil(k)).map(|i| k.min(n - i * k)).collect()
        }
        Value::List(_) | Value::Tuple(_) => {
            let items = match sizes {
                Value::List(l) => l.borrow().clone(),
                Value::Tuple(t) => t.to_vec(),
                _ => unreachable!(),
            };
            let s: Option<Vec<usize>> = items
                .iter()
                .map(|v| as_int(v).map(|i| i as usize))
                .collect();
            let s = s?;
            if s.iter().sum::<usize>() != n {
                return None;
            }
            s
        }
        _ => return None,
    };
    let mut start = 0;
    let mut out = Vec::new();
    for k in sizes {
        out.push(Value::TensorConst(Rc::new(TensorConst {
            shape: Some(vec![k as i64]),
            dtype: t.dtype,
            data: Some(Rc::from(&data[start..start + k])),
        })));
        start += k;
    }
    Some(Value::tuple(out))
}

/// `t.size()`, `t.size(d)` and `t.dim()` on a tensor whose shape is known at construction.
fn shape_query(shape: Option<&[i64]>, name: &str, args: &[Value]) -> Value {
    let Some(s) = shape else {
        return Value::unknown(name);
    };
    match (name, args.first().and_then(as_int)) {
        ("dim", _) => Value::Int(s.len() as i64),
        (_, Some(d)) => {
            let i = if d < 0 { d + s.len() as i64 } else { d };
            s.get(i as usize)
                .map(|&v| Value::Int(v))
                .unwrap_or_else(|| Value::unknown("size"))
        }
        (_, None) => Value::tuple(s.iter().map(|&d| Value::Int(d)).collect()),
    }
}
