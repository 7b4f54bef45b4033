//! Constant folding: a node whose value the shape rules already know — a scalar read off a
//! known shape (`x.size(-1)`, `x.shape[0] * 2`, `x.dim()`, `math.sqrt(d)`), a fully known
//! `torch.Size`, a dtype — is replaced by that value as a literal argument of its users, the
//! way torch.fx bakes in Python values when shapes are static.
//!
//! Only values that are functions of shapes and constants fold. Values read out of tensor
//! data (`.item()`) never do, and without `--input` shapes are unknown, so nothing folds.
//! Folding specialises the graph to the given input shapes; the cache key includes them.

use super::{frozen, is_pure, Pass, PassContext};
use crate::graph::{Arg, Graph, Op};
use crate::shapes::{concrete, Meta, Scalar, ScalarOrigin};

pub struct ConstantFold;

/// The literal a node's abstract value stands for, if it is fully known and not data.
pub fn literal(m: &Meta) -> Option<Arg> {
    match m {
        Meta::Scalar(_, ScalarOrigin::Data) => None,
        Meta::Scalar(Scalar::Int(Some(v)), _) => Some(Arg::Int(*v)),
        Meta::Scalar(Scalar::Float(Some(v)), _) if v.is_finite() => Some(Arg::Float(*v)),
        Meta::Scalar(Scalar::Bool(Some(v)), _) => Some(Arg::Bool(*v)),
        Meta::Size(s) => concrete(s).map(|v| Arg::Tuple(v.into_iter().map(Arg::Int).collect())),
        Meta::Dtype(d) => Some(Arg::Dtype(d.as_str().to_string())),
        _ => None,
    }
}

/// Python scalar functions of literal arguments that tracing recorded because an argument was
/// a proxy at the time (`math.sqrt(k.size(-1))` once the size is folded).
fn evaluate(target: &str, args: &[Arg]) -> Option<Arg> {
    let num = |a: &Arg| match a {
        Arg::Int(i) => Some(*i as f64),
        Arg::Float(f) => Some(*f),
        Arg::Bool(b) => Some(*b as i64 as f64),
        _ => None,
    };
    let ints = |a: &Arg| match a {
        Arg::Int(i) => Some(*i),
        Arg::Bool(b) => Some(*b as i64),
        _ => None,
    };
    let float = |v: f64| v.is_finite().then_some(Arg::Float(v));
    match (target, args) {
        ("math.sqrt", [a]) => num(a).filter(|v| *v >= 0.0).and_then(|v| float(v.sqrt())),
        ("math.exp", [a]) => num(a).and_then(|v| float(v.exp())),
        ("math.log", [a]) => num(a).filter(|v| *v > 0.0).and_then(|v| float(v.ln())),
        ("math.floor" | "math.ceil", [a]) => match a {
            Arg::Int(i) => Some(Arg::Int(*i)),
            _ => num(a)
                .map(|v| {
                    if target == "math.floor" {
                        v.floor()
                    } else {
                        v.ceil()
                    }
                })
                .filter(|v| v.abs() < 9e15)
                .map(|v| Arg::Int(v as i64)),
        },
        ("operator.neg", [a]) => match a {
            Arg::Int(i) => i.checked_neg().map(Arg::Int),
            _ => num(a).and_then(|v| float(-v)),
        },
        (t, [a, b]) if t.starts_with("operator.") => {
            let op = &t["operator.".len()..];
            if let (Some(x), Some(y)) = (ints(a), ints(b)) {
                if !matches!(op, "truediv") {
                    return match op {
                        "add" => x.checked_add(y),
                        "sub" => x.checked_sub(y),
                        "mul" => x.checked_mul(y),
                        "floordiv" => (y != 0).then(|| {
                            x.div_euclid(y) - if x.rem_euclid(y) != 0 && y < 0 { 1 } else { 0 }
                        }),
                        "mod" => (y != 0).then(|| ((x % y) + y) % y),
                        _ => None,
                    }
                    .map(Arg::Int);
                }
            }
            let (x, y) = (num(a)?, num(b)?);
            match op {
                "add" => float(x + y),
                "sub" => float(x - y),
                "mul" => float(x * y),
                "truediv" if y != 0.0 => float(x / y),
                _ => None,
            }
        }
        _ => None,
    }
}

impl Pass for ConstantFold {
    fn name(&self) -> &'static str {
        "constant_fold"
    }

    fn run(&self, g: &mut Graph, cx: &PassContext) -> usize {
        let mut folded = 0;
        for id in g.order.clone() {
            let n = g.node(id);
            if frozen(n) || n.op == Op::GetAttr || !is_pure(n, cx.inference) {
                continue;
            }
            let computed = || {
                if n.op == Op::CallFunction && n.kwargs.is_empty() {
                    evaluate(&n.target, &n.args)
                } else {
                    None
                }
            };
            let Some(lit) = literal(&n.meta).or_else(computed) else {
                continue;
            };
            let users = g.users(id);
            // A graph-break cause keeps reading the node it was reported against.
            if users.iter().any(|&u| g.node(u).region.is_some()) {
                continue;
            }
            g.replace_uses(id, &lit);
            g.remove(id);
            folded += 1;
        }
        folded
    }
}
