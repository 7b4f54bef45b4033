//! Arithmetic on tensors a constructor builds from constants (`torch.arange(depth) * slope +
//! init`, `torch.round(torch.log(w / w0) / math.log(m))`, `.max().item()`): computed
//! elementwise, in float64, with torch's result dtype rules for these cases. Anything else on a
//! constant tensor keeps its shape and forgets its data, so a value read back is never a guess.

use std::rc::Rc;

use super::super::call::as_f64;
use super::super::value::{TensorConst, Value};
use super::super::Interp;
use crate::shapes::rules::{self, Inputs};
use crate::shapes::{concrete, shape_of, DType, Meta};

fn data_of(v: &Value) -> Option<(Rc<[f64]>, Option<Vec<i64>>, DType)> {
    match v {
        Value::TensorConst(t) => Some((t.data.clone()?, t.shape.clone(), t.dtype)),
        _ => None,
    }
}

fn make(shape: Option<Vec<i64>>, dtype: DType, data: Vec<f64>) -> Value {
    Value::TensorConst(Rc::new(TensorConst {
        shape,
        dtype,
        data: Some(Rc::from(stored(dtype, data))),
    }))
}

/// The values as the dtype stores them: float32 tensors hold float32 numbers, so what
/// `.item()` reads back is what torch's would.
pub fn stored(dtype: DType, data: Vec<f64>) -> Vec<f64> {
    match dtype {
        DType::Float32 => data.into_iter().map(|x| x as f32 as f64).collect(),
        _ => data,
    }
}

/// torch's result dtype for a tensor and a Python number: a float number makes an integer
/// tensor float32; true division always gives a float.
fn result_dtype(t: DType, other_is_float: bool, op: &str) -> DType {
    if t.is_floating() {
        t
    } else if other_is_float || op == "truediv" {
        DType::Float32
    } else {
        t
    }
}

fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

/// `a <op> b` where one side is a constant tensor; None when it is not computable.
pub fn binary(op: &str, a: &Value, b: &Value) -> Option<Value> {
    let f = |x: f64, y: f64| -> Option<f64> {
        Some(match op {
            "add" => x + y,
            "sub" => x - y,
            "mul" => x * y,
            "truediv" => x / y,
            "floordiv" => (x / y).floor(),
            "pow" => x.powf(y),
            _ => return None,
        })
    };
    match (data_of(a), data_of(b)) {
        (Some((d, shape, dt)), None) => {
            let y = as_f64(b)?;
            let dtype = result_dtype(dt, matches!(b, Value::Float(_)), op);
            let out: Option<Vec<f64>> = d.iter().map(|&x| f(x, y)).collect();
            Some(make(shape, dtype, truncate(dtype, out?)))
        }
        (None, Some((d, shape, dt))) => {
            let x = as_f64(a)?;
            let dtype = result_dtype(dt, matches!(a, Value::Float(_)), op);
            let out: Option<Vec<f64>> = d.iter().map(|&y| f(x, y)).collect();
            Some(make(shape, dtype, truncate(dtype, out?)))
        }
        (Some((d1, s1, t1)), Some((d2, s2, t2))) if s1 == s2 && d1.len() == d2.len() => {
            let dtype = if t1.is_floating() {
                t1
            } else if t2.is_floating() {
                t2
            } else {
                result_dtype(t1, false, op)
            };
            let out: Option<Vec<f64>> = d1.iter().zip(d2.iter()).map(|(&x, &y)| f(x, y)).collect();
            Some(make(s1, dtype, truncate(dtype, out?)))
        }
        _ => None,
    }
}

/// Integer tensors hold integers (floor division and the like already are).
fn truncate(dtype: DType, v: Vec<f64>) -> Vec<f64> {
    if dtype.is_floating() {
        v
    } else {
        v.into_iter().map(f64::trunc).collect()
    }
}

/// `torch.<name>(t, …)` or `t.<name>(…)` on a constant tensor with data.
pub fn unary(name: &str, t: &TensorConst, args: &[Value]) -> Option<Value> {
    let d = t.data.as_ref()?;
    let map = |g: &dyn Fn(f64) -> f64| -> Value {
        let dtype = if t.dtype.is_floating() {
            t.dtype
        } else {
            DType::Float32
        };
        make(t.shape.clone(), dtype, d.iter().map(|&x| g(x)).collect())
    };
    Some(match name {
        "log" => map(&f64::ln),
        "exp" => map(&f64::exp),
        "sqrt" => map(&f64::sqrt),
        "round" => make(
            t.shape.clone(),
            t.dtype,
            d.iter().map(|&x| round_half_even(x)).collect(),
        ),
        "floor" => make(
            t.shape.clone(),
            t.dtype,
            d.iter().map(|x| x.floor()).collect(),
        ),
        "ceil" => make(
            t.shape.clone(),
            t.dtype,
            d.iter().map(|x| x.ceil()).collect(),
        ),
        "abs" => make(
            t.shape.clone(),
            t.dtype,
            d.iter().map(|x| x.abs()).collect(),
        ),
        "int" | "long" | "float" | "double" => {
            let dtype = match name {
                "int" => DType::Int32,
                "long" => DType::Int64,
                "float" => DType::Float32,
                _ => DType::Float64,
            };
            make(t.shape.clone(), dtype, truncate(dtype, d.to_vec()))
        }
        "max" | "min" | "sum" if args.is_empty() && !d.is_empty() => {
            let v = match name {
                "max" => d.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
                "min" => d.iter().cloned().fold(f64::INFINITY, f64::min),
                _ => d.iter().sum(),
            };
            make(Some(vec![]), t.dtype, vec![v])
        }
        // nest's block counts: `(4 ** torch.arange(n)).flip(0)`
        "flip" if t.shape.as_ref().is_some_and(|s| s.len() == 1) && flips_first_dim(args) => {
            make(t.shape.clone(), t.dtype, d.iter().rev().copied().collect())
        }
        // `torch.unique` sorts by default.
        "unique" if args.is_empty() => {
            let mut v = d.to_vec();
            v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
            v.dedup();
            let n = v.len() as i64;
            make(Some(vec![n]), t.dtype, v)
        }
        _ => return None,
    })
}

/// Whether `flip`'s dims are the one dimension of a vector: `0`, `-1`, or a sequence of one.
fn flips_first_dim(args: &[Value]) -> bool {
    let first = |v: &Value| matches!(v, Value::Int(0 | -1));
    match args {
        [dim] if first(dim) => true,
        [Value::Tuple(dims)] => matches!(&dims[..], [d] if first(d)),
        [Value::List(dims)] => matches!(&dims.borrow()[..], [d] if first(d)),
        _ => false,
    }
}

impl Interp {
    /// `torch.<name>(…)` over constant tensors: elementwise functions and `torch.pow(x, t)`.
    pub(in crate::eval) fn torch_on_constants(
        &self,
        name: &str,
        args: &[Value],
        kwargs: &[(String, Value)],
    ) -> Option<Value> {
        let flag = |k: &str| {
            kwargs
                .iter()
                .any(|(n, v)| n == k && matches!(v, Value::Bool(true)))
        };
        if let ("unique", [Value::TensorConst(t)]) = (name, args) {
            if flag("return_inverse") || kwargs.iter().any(|(n, _)| n == "dim") {
                return None;
            }
            let values = unary("unique", t, &[])?;
            if !flag("return_counts") {
                return Some(values);
            }
            let d = t.data.as_ref()?;
            let counts: Vec<f64> = match &values {
                Value::TensorConst(u) => u
                    .data
                    .as_ref()?
                    .iter()
                    .map(|x| d.iter().filter(|y| *y == x).count() as f64)
                    .collect(),
                _ => return None,
            };
            let n = counts.len() as i64;
            return Some(Value::tuple(vec![
                values,
                make(Some(vec![n]), DType::Int64, counts),
            ]));
        }
        if !kwargs.is_empty() {
            return None;
        }
        match (name, args) {
            ("pow", [a, b]) => binary("pow", a, b),
            (_, [Value::TensorConst(t), rest @ ..]) => unary(name, t, rest),
            _ => None,
        }
    }
}

fn operand_meta(v: &Value) -> Meta {
    match v {
        Value::TensorConst(t) => Meta::tensor(t.shape.as_deref().map(shape_of), t.dtype),
        Value::Tuple(items) => Meta::Seq(items.iter().map(operand_meta).collect()),
        Value::List(items) => Meta::Seq(items.borrow().iter().map(operand_meta).collect()),
        Value::Slice(s) => Meta::Slice(Box::new([
            operand_meta(&s[0]),
            operand_meta(&s[1]),
            operand_meta(&s[2]),
        ])),
        Value::Ellipsis => Meta::Ellipsis,
        other => super::super::trace::value_meta(other),
    }
}

/// A constant tensor (or tuple of them) of `meta`'s shapes, without data.
pub fn from_meta(meta: Meta, dtype: DType) -> Value {
    match meta {
        Meta::Tensor(t) => Value::TensorConst(Rc::new(TensorConst::of_shape(
            t.shape.as_ref().and_then(concrete),
            t.dtype,
        ))),
        Meta::Seq(items) if items.iter().all(|m| matches!(m, Meta::Tensor(_))) => {
            Value::tuple(items.into_iter().map(|m| from_meta(m, dtype)).collect())
        }
        _ => Value::TensorConst(Rc::new(TensorConst::of_shape(None, dtype))),
    }
}

/// A result on constant tensors whose values are not computed: its shape and dtype are what
/// the graph's shape rule for `op` gives (broadcasting, views, reductions), as forward would
/// see them; without a rule, the shape is unknown.
pub fn shaped(op: &str, args: &[Value], kwargs: &[(String, Value)]) -> Value {
    let metas: Vec<Meta> = args.iter().map(operand_meta).collect();
    let kmetas: Vec<(String, Meta)> = kwargs
        .iter()
        .map(|(k, v)| (k.clone(), operand_meta(v)))
        .collect();
    let dtype = args
        .iter()
        .find_map(|a| match a {
            Value::TensorConst(t) => Some(t.dtype),
            _ => None,
        })
        .unwrap_or(DType::Float32);
    let inputs = Inputs {
        args: &metas,
        kwargs: &kmetas,
    };
    from_meta(rules::call(op, &inputs), dtype)
}

/// Whether `v` is, or holds, a constant tensor (`torch.stack([a, b])`).
pub fn holds_constant(v: &Value) -> bool {
    match v {
        Value::TensorConst(_) => true,
        Value::Tuple(items) => items.iter().any(holds_constant),
        Value::List(items) => items.borrow().iter().any(holds_constant),
        _ => false,
    }
}
