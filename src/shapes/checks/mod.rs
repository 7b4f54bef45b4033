//! The argument checks PyTorch makes before an op runs, on abstract values: when one fails the
//! op raises in eager PyTorch, and the rule reports a [`ShapeError`] instead of a shape.
//!
//! Only what is certain fails a check: two known sizes that differ, two symbolic sizes whose
//! difference is a nonzero constant, a known rank against a required one. A symbolic size
//! against a number (`s0` against 20) may hold at run time, so it passes; so does anything
//! unknown. Reporting code that runs is worse than missing a bug, so when in doubt a check
//! passes and the rule falls back to its usual (possibly unknown) result.

use serde::{Deserialize, Serialize};

mod layers;
mod ops;

use super::rules::{Inputs, ModuleInfo};
use super::{Dim, Meta, Scalar, Shape, TensorMeta};

/// What the failed check was about. A rank (or a dimension index out of range) depends on
/// the input's rank, which the tracer sometimes guesses from the first layer that reads an
/// input; a size mismatch between sizes the layers fix does not. The tracer drops a guess
/// that introduces rank errors (`eval::trace::root`), and a dtype error only stands for
/// tensors no input of forward flows into (an input's dtype may be a default, not the user's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShapeErrorKind {
    Rank,
    Size,
    Dtype,
}

/// Why an op will raise when it runs: PyTorch's complaint, worded to follow the callee's
/// name (`` `self.fc2` expects the last dimension 20, gets 10 ``).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShapeError {
    pub message: String,
    pub kind: ShapeErrorKind,
    /// The positional argument whose shape (or dtype) is at fault, so a report can say where
    /// that value came from.
    pub arg: Option<usize>,
}

type Check = Result<(), ShapeError>;

fn fail(kind: ShapeErrorKind, arg: Option<usize>, message: String) -> Check {
    Err(ShapeError { message, kind, arg })
}

/// Certainly unequal: two known sizes that differ, or two expressions whose difference is a
/// nonzero constant (`s0` and `s0 + 1`). `s0` against `20` may be equal at run time.
pub fn differ(a: &Dim, b: &Dim) -> bool {
    match (a.expr(), b.expr()) {
        (Some(x), Some(y)) => x.add(&y.scale(-1)).as_const().is_some_and(|c| c != 0),
        _ => false,
    }
}

/// Certainly not broadcastable: two known sizes that differ and are not 1. A symbolic size
/// might be 1, so it never clashes.
fn clash(a: &Dim, b: &Dim) -> bool {
    matches!((a, b), (Dim::Known(x), Dim::Known(y)) if x != y && *x != 1 && *y != 1)
}

pub fn fmt_shape(s: &[Dim]) -> String {
    format!(
        "[{}]",
        s.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `2x8`, as PyTorch prints matrix sizes.
fn fmt_x(s: &[Dim]) -> String {
    s.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

fn shape_of(m: Option<&Meta>) -> Option<&Shape> {
    m.and_then(Meta::as_tensor).and_then(|t| t.shape.as_ref())
}

/// PyTorch's `maybe_wrap_dim`: a 0-d tensor takes dims -1 and 0.
fn wrap(dim: i64, rank: usize, arg: Option<usize>) -> Result<usize, ShapeError> {
    let r = rank.max(1) as i64;
    if (-r..r).contains(&dim) {
        Ok(if dim < 0 { dim + r } else { dim } as usize)
    } else {
        Err(ShapeError {
            message: format!(
                "expects a dimension in range [{}, {}], gets {dim} (Dimension out of range)",
                -r,
                r - 1
            ),
            kind: ShapeErrorKind::Rank,
            arg,
        })
    }
}

fn wrap_opt(dim: Option<i64>, rank: Option<usize>, arg: Option<usize>) -> Check {
    if let (Some(d), Some(r)) = (dim, rank) {
        wrap(d, r, arg)?;
    }
    Ok(())
}

/// Two shapes broadcast: PyTorch's "The size of tensor a (3) must match the size of tensor b
/// (4) at non-singleton dimension 1".
pub fn broadcastable(a: &Shape, b: &Shape) -> Check {
    let n = a.len().max(b.len());
    for i in 0..n {
        let (Some(da), Some(db)) = (
            (i + a.len() >= n).then(|| &a[i + a.len() - n]),
            (i + b.len() >= n).then(|| &b[i + b.len() - n]),
        ) else {
            continue;
        };
        if clash(da, db) {
            return fail(
                ShapeErrorKind::Size,
                Some(1),
                format!(
                    "expects broadcastable shapes, gets {} and {} (the size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton dimension {i})",
                    fmt_shape(a),
                    fmt_shape(b)
                ),
            );
        }
    }
    Ok(())
}

fn multiply_error(a: &Shape, b: &Shape) -> Check {
    fail(
        ShapeErrorKind::Size,
        Some(1),
        format!(
            "cannot multiply {} and {}: mat1 and mat2 shapes cannot be multiplied ({} and {})",
            fmt_shape(a),
            fmt_shape(b),
            fmt_x(a),
            fmt_x(b)
        ),
    )
}

/// `torch.matmul` / `@`: both at least 1-d, the contracted sizes equal, the batch dims
/// broadcastable.
fn matmul(a: &Shape, b: &Shape) -> Check {
    if a.is_empty() || b.is_empty() {
        return fail(
            ShapeErrorKind::Rank,
            Some(if a.is_empty() { 0 } else { 1 }),
            format!(
                "expects both arguments to be at least 1-d, gets {}-d and {}-d",
                a.len(),
                b.len()
            ),
        );
    }
    let k_a = &a[a.len() - 1];
    let k_b = if b.len() == 1 { &b[0] } else { &b[b.len() - 2] };
    if differ(k_a, k_b) {
        return multiply_error(a, b);
    }
    if a.len() > 2 && b.len() > 2 {
        let (ba, bb) = (a[..a.len() - 2].to_vec(), b[..b.len() - 2].to_vec());
        broadcastable(&ba, &bb)?;
    }
    Ok(())
}

/// `mm` (rank 2) and `bmm` (rank 3, equal batch sizes, no broadcasting).
fn mm(a: &Shape, b: &Shape, rank: usize) -> Check {
    for (i, s) in [a, b].into_iter().enumerate() {
        if s.len() != rank {
            return fail(
                ShapeErrorKind::Rank,
                Some(i),
                format!(
                    "expects {rank}-d tensors, gets a {}-d one ({})",
                    s.len(),
                    fmt_shape(s)
                ),
            );
        }
    }
    if rank == 3 && differ(&a[0], &b[0]) {
        return fail(
            ShapeErrorKind::Size,
            Some(1),
            format!(
                "expects equal batch sizes, gets {} and {}",
                fmt_shape(a),
                fmt_shape(b)
            ),
        );
    }
    if differ(&a[rank - 1], &b[rank - 2]) {
        return multiply_error(a, b);
    }
    Ok(())
}

/// `F.linear(x, weight)`: `x`'s last size is the weight's `in_features` (its dim 1; a 1-d
/// weight is one output).
fn linear(x: &Shape, w: &Shape) -> Check {
    let Some(last) = x.last() else {
        return Ok(());
    };
    let k = match w.len() {
        2 => &w[1],
        1 => &w[0],
        _ => return Ok(()),
    };
    if differ(last, k) {
        return fail(
            ShapeErrorKind::Size,
            Some(0),
            format!(
                "expects the last dimension {k}, gets {last} (input {}, weight {})",
                fmt_shape(x),
                fmt_shape(w)
            ),
        );
    }
    Ok(())
}

/// `torch.cat` / `torch.stack` over a list of tensors.
fn cat(items: &Meta, dim: Option<i64>, stack: bool) -> Check {
    let Meta::Seq(items) = items else {
        return Ok(());
    };
    if items.is_empty() {
        return fail(
            ShapeErrorKind::Size,
            Some(0),
            "expects a non-empty list of tensors, gets an empty one".into(),
        );
    }
    // Every item a tensor of known rank, or nothing is certain.
    let Some(shapes) = items
        .iter()
        .map(|m| m.as_tensor().and_then(|t| t.shape.as_ref()))
        .collect::<Option<Vec<&Shape>>>()
    else {
        return Ok(());
    };
    let dim = dim.unwrap_or(0);
    if stack {
        for (i, s) in shapes.iter().enumerate().skip(1) {
            let unequal = s.len() != shapes[0].len()
                || s.iter().zip(shapes[0].iter()).any(|(a, b)| differ(a, b));
            if unequal {
                return fail(
                    if s.len() != shapes[0].len() {
                        ShapeErrorKind::Rank
                    } else {
                        ShapeErrorKind::Size
                    },
                    Some(0),
                    format!(
                        "expects each tensor to be equal size, gets {} at entry 0 and {} at entry {i}",
                        fmt_shape(shapes[0]),
                        fmt_shape(s)
                    ),
                );
            }
        }
        wrap(dim, shapes[0].len() + 1, Some(1))?;
        return Ok(());
    }
    // A legacy rule: 1-d empty tensors are skipped whatever the others' shapes.
    let kept: Vec<(usize, &Shape)> = shapes
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, s)| !(s.len() == 1 && s[0] == Dim::Known(0)))
        .collect();
    let Some(&(first_at, first)) = kept.first() else {
        return Ok(());
    };
    for &(i, s) in &kept[1..] {
        if s.len() != first.len() {
            return fail(
                ShapeErrorKind::Rank,
                Some(0),
                format!(
                    "expects tensors with the same number of dimensions, gets {}-d {} (tensor {first_at}) and {}-d {} (tensor {i})",
                    first.len(),
                    fmt_shape(first),
                    s.len(),
                    fmt_shape(s)
                ),
            );
        }
    }
    let d = wrap(dim, first.len(), Some(1))?;
    for &(i, s) in &kept[1..] {
        for (j, (a, b)) in first.iter().zip(s.iter()).enumerate() {
            if j != d && differ(a, b) {
                return fail(
                    ShapeErrorKind::Size,
                    Some(0),
                    format!(
                        "expects sizes to match except in dimension {d}, gets {a} and {b} in dimension {j} ({} and {} for tensors {first_at} and {i})",
                        fmt_shape(first),
                        fmt_shape(s)
                    ),
                );
            }
        }
    }
    Ok(())
}

/// `view` / `reshape`: at most one -1, no other negative size, the element count kept.
fn view(t: &Shape, dims: &Shape) -> Check {
    let minus = dims.iter().filter(|d| **d == Dim::Known(-1)).count();
    if minus > 1 {
        return fail(
            ShapeErrorKind::Size,
            Some(1),
            format!(
                "expects at most one -1, gets {} (only one dimension can be inferred)",
                fmt_shape(dims)
            ),
        );
    }
    if let Some(bad) = dims.iter().find_map(|d| d.known().filter(|&v| v < -1)) {
        return fail(
            ShapeErrorKind::Size,
            Some(1),
            format!("expects sizes >= -1, gets {bad} (invalid shape dimension {bad})"),
        );
    }
    let Some(total) = Dim::product(t) else {
        return Ok(());
    };
    let rest: Vec<Dim> = dims
        .iter()
        .filter(|d| **d != Dim::Known(-1))
        .cloned()
        .collect();
    let Some(asked) = Dim::product(&rest) else {
        return Ok(());
    };
    let invalid = if minus == 0 {
        differ(&total, &asked)
    } else {
        // With a -1 the others must divide the count; only numbers can say they do not.
        matches!((&total, &asked), (Dim::Known(n), Dim::Known(k)) if *k != 0 && n % k != 0)
    };
    if invalid {
        return fail(
            ShapeErrorKind::Size,
            Some(0),
            format!(
                "cannot view {} ({total} elements) as {} (shape '{}' is invalid for input of size {total})",
                fmt_shape(t),
                fmt_shape(dims),
                fmt_shape(dims)
            ),
        );
    }
    Ok(())
}

fn permute(t: &Shape, order: &[i64]) -> Check {
    if order.len() != t.len() {
        return fail(
            ShapeErrorKind::Rank,
            Some(0),
            format!(
                "expects {} dims for a {}-d tensor {}, gets {} ({order:?})",
                t.len(),
                t.len(),
                fmt_shape(t),
                order.len()
            ),
        );
    }
    let mut seen = vec![false; t.len()];
    for &d in order {
        let i = wrap(d, t.len(), Some(1))?;
        if std::mem::replace(&mut seen[i], true) {
            return fail(
                ShapeErrorKind::Size,
                Some(1),
                format!("expects distinct dims, gets {order:?} (duplicate dims are not allowed)"),
            );
        }
    }
    Ok(())
}

/// Spatial sizes of a convolution or pooling window over the trailing `n` dims of `x`: the
/// padded input must hold the (dilated) kernel, and each output size must be positive.
fn windows(
    x: &Shape,
    n: usize,
    kernel: &Meta,
    stride: &Meta,
    padding: &Meta,
    dilation: &Meta,
    pool: bool,
) -> Check {
    let tuple = |m: &Meta| -> Option<Vec<i64>> {
        match m.as_int_list()? {
            v if v.len() == 1 => Some(vec![v[0]; n]),
            v if v.len() == n => Some(v),
            _ => None,
        }
    };
    let padding = match padding {
        Meta::Str(s) if s == "valid" => Some(vec![0; n]),
        m => tuple(m),
    };
    let (Some(k), Some(p), Some(d)) = (tuple(kernel), padding, tuple(dilation)) else {
        return Ok(());
    };
    let s = match stride {
        Meta::None => Some(k.clone()),
        Meta::Seq(v) if v.is_empty() => Some(k.clone()),
        m => tuple(m),
    };
    let base = x.len() - n;
    let sizes: Option<Vec<i64>> = x[base..].iter().map(Dim::known).collect();
    let Some(sizes) = sizes else {
        return Ok(());
    };
    let show = |v: &[i64]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(" x ")
    };
    let padded: Vec<i64> = (0..n).map(|i| sizes[i] + 2 * p[i]).collect();
    let eff: Vec<i64> = (0..n).map(|i| d[i] * (k[i] - 1) + 1).collect();
    if (0..n).any(|i| padded[i] < eff[i]) {
        let what = if pool {
            "the pooling window"
        } else {
            "the kernel"
        };
        return fail(
            ShapeErrorKind::Size,
            Some(0),
            format!(
                "expects {what} ({}) to fit the padded input ({}) of {} (Kernel size can't be greater than actual input size)",
                show(&eff),
                show(&padded),
                fmt_shape(x)
            ),
        );
    }
    if let Some(s) = s.filter(|s| s.iter().all(|&v| v > 0)) {
        let out: Vec<i64> = (0..n).map(|i| (padded[i] - eff[i]) / s[i] + 1).collect();
        if out.iter().any(|&o| o <= 0) {
            return fail(
                ShapeErrorKind::Size,
                Some(0),
                format!(
                    "computes an output of size ({}) from {}: Output size is too small",
                    show(&out),
                    fmt_shape(x)
                ),
            );
        }
    }
    Ok(())
}

/// ConvNd and poolNd take `[C, *spatial]` (unbatched) or `[N, C, *spatial]`.
fn spatial_rank(x: &Shape, n: usize, what: &str) -> Check {
    if x.len() != n + 1 && x.len() != n + 2 {
        return fail(
            ShapeErrorKind::Rank,
            Some(0),
            format!(
                "expects {}-d (unbatched) or {}-d (batched) input to {what}, gets {}-d {}",
                n + 1,
                n + 2,
                x.len(),
                fmt_shape(x)
            ),
        );
    }
    Ok(())
}

fn channels(x: &Shape, n: usize, expected: &Dim, why: &str) -> Check {
    let c = &x[x.len() - n - 1];
    if differ(c, expected) {
        return fail(
            ShapeErrorKind::Size,
            Some(0),
            format!(
                "expects {expected} input channels{why}, gets {c} (input {})",
                fmt_shape(x)
            ),
        );
    }
    Ok(())
}

fn norm_trailing(x: &Shape, normalized: &[i64]) -> Check {
    let fits = x.len() >= normalized.len()
        && !x[x.len() - normalized.len()..]
            .iter()
            .zip(normalized)
            .any(|(a, &b)| differ(a, &Dim::Known(b)));
    let certain_rank = x.len() < normalized.len();
    if !fits {
        return fail(
            if certain_rank {
                ShapeErrorKind::Rank
            } else {
                ShapeErrorKind::Size
            },
            Some(0),
            format!(
                "expects input of shape [*, {}], gets {} (normalized_shape={normalized:?})",
                normalized
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                fmt_shape(x)
            ),
        );
    }
    Ok(())
}

fn group_norm(x: &Shape, groups: i64, num_channels: Option<i64>) -> Check {
    if x.len() < 2 {
        return fail(
            ShapeErrorKind::Rank,
            Some(0),
            format!(
                "expects at least 2 dimensions, gets {}-d {}",
                x.len(),
                fmt_shape(x)
            ),
        );
    }
    if let (Dim::Known(c), true) = (&x[1], groups > 0) {
        if c % groups != 0 {
            return fail(
                ShapeErrorKind::Size,
                Some(0),
                format!(
                    "expects the number of channels to be divisible by num_groups={groups}, gets {c} (input {})",
                    fmt_shape(x)
                ),
            );
        }
    }
    if let Some(n) = num_channels {
        if differ(&x[1], &Dim::Known(n)) {
            return fail(
                ShapeErrorKind::Size,
                Some(0),
                format!(
                    "expects {n} channels (num_channels), gets {} (input {})",
                    x[1],
                    fmt_shape(x)
                ),
            );
        }
    }
    Ok(())
}

fn integer_indices(ix: &TensorMeta) -> Check {
    if ix.dtype.is_floating() || ix.dtype == super::DType::Bool {
        return fail(
            ShapeErrorKind::Dtype,
            Some(0),
            format!(
                "expects integer (int64 or int32) indices, gets {}",
                ix.dtype.as_str()
            ),
        );
    }
    Ok(())
}

fn is_true(m: &Meta) -> bool {
    matches!(m, Meta::Scalar(Scalar::Bool(Some(true)), _))
}

/// The check of a function or method, by the short name the shape rules use.
pub fn call(name: &str, inp: &Inputs) -> Check {
    let a0 = inp.args.first();
    let t0 = shape_of(a0);
    let rank0 = t0.map(Vec::len);
    let int = |pos: usize, name: &str| inp.get(pos, name).and_then(Meta::as_int);
    match name {
        "add" | "sub" | "mul" | "truediv" | "div" | "floordiv" | "mod" | "pow" | "eq" | "ne"
        | "lt" | "le" | "gt" | "ge" | "and_" | "or_" | "maximum" | "minimum" | "logical_and"
        | "logical_or" | "floor_divide" | "remainder" | "iadd" | "imul" | "isub" | "itruediv"
        | "atan2" | "fmod" | "xor" | "bitwise_and" | "bitwise_or" | "bitwise_xor"
        | "logical_xor" => match (t0, shape_of(inp.get(1, "other"))) {
            (Some(a), Some(b)) => broadcastable(a, b),
            _ => Ok(()),
        },
        "matmul" => match (t0, shape_of(inp.get(1, "other"))) {
            (Some(a), Some(b)) => matmul(a, b),
            _ => Ok(()),
        },
        "mm" | "bmm" => match (t0, shape_of(inp.get(1, "mat2"))) {
            (Some(a), Some(b)) => mm(a, b, if name == "mm" { 2 } else { 3 }),
            _ => Ok(()),
        },
        "addmm" | "baddbmm" => {
            let (p, q) = if name == "addmm" {
                ("mat1", "mat2")
            } else {
                ("batch1", "batch2")
            };
            match (shape_of(inp.get(1, p)), shape_of(inp.get(2, q))) {
                (Some(a), Some(b)) => {
                    mm(a, b, if name == "addmm" { 2 } else { 3 }).map_err(|mut e| {
                        e.arg = e.arg.map(|a| a + 1);
                        e
                    })
                }
                _ => Ok(()),
            }
        }
        "linear" => match (t0, shape_of(inp.get(1, "weight"))) {
            (Some(x), Some(w)) => linear(x, w),
            _ => Ok(()),
        },
        "cat" | "concat" | "concatenate" | "stack" => match a0 {
            Some(items) => cat(items, int(1, "dim"), name == "stack"),
            None => Ok(()),
        },
        "view" | "reshape" => {
            let dims = super::rules::varargs_dims(inp, 1, "shape");
            match (t0, dims) {
                (Some(t), Some(d)) => view(t, &d),
                _ => Ok(()),
            }
        }
        "permute" => {
            let order =
                super::rules::varargs_dims(inp, 1, "dims").and_then(|d| super::concrete(&d));
            match (t0, order) {
                (Some(t), Some(o)) => permute(t, &o),
                _ => Ok(()),
            }
        }
        // torch's own messages; `view_as_complex`'s stride checks are the layout's, not made
        "view_as_complex" => match t0 {
            Some(t) if t.last().is_some_and(|last| differ(last, &Dim::Known(2))) => fail(
                ShapeErrorKind::Size,
                Some(0),
                format!(
                    "Tensor must have a last dimension of size 2, gets {}",
                    fmt_shape(t)
                ),
            ),
            _ => Ok(()),
        },
        "view_as_real" => match a0.and_then(Meta::as_tensor) {
            Some(t) if !t.dtype.is_complex() => fail(
                ShapeErrorKind::Dtype,
                Some(0),
                format!(
                    "view_as_real is only supported for complex tensors, gets {}",
                    t.dtype.as_str()
                ),
            ),
            _ => Ok(()),
        },
        "polar" | "complex" => {
            let second = if name == "polar" { "angle" } else { "imag" };
            match (
                a0.and_then(Meta::as_tensor),
                inp.get(1, second).and_then(Meta::as_tensor),
            ) {
                (Some(a), Some(b)) if a.dtype != b.dtype => fail(
                    ShapeErrorKind::Dtype,
                    Some(1),
                    format!(
                        "expects both parts of one dtype, gets {} and {}",
                        a.dtype.as_str(),
                        b.dtype.as_str()
                    ),
                ),
                (Some(a), Some(b)) => match (&a.shape, &b.shape) {
                    (Some(p), Some(q)) => broadcastable(p, q),
                    _ => Ok(()),
                },
                _ => Ok(()),
            }
        }
        "unsqueeze" => wrap_opt(int(1, "dim"), rank0.map(|r| r + 1), Some(1)),
        "squeeze" => match (rank0, inp.get(1, "dim").and_then(Meta::as_int_list)) {
            (Some(r), Some(dims)) => dims.iter().try_for_each(|&d| wrap(d, r, Some(1)).map(drop)),
            _ => Ok(()),
        },
        "flatten" => {
            let Some(r) = rank0 else { return Ok(()) };
            let s = wrap(int(1, "start_dim").unwrap_or(0), r, Some(1))?;
            let e = wrap(int(2, "end_dim").unwrap_or(-1), r, Some(2))?;
            if s > e {
                return fail(
                    ShapeErrorKind::Size,
                    Some(1),
                    format!("expects start_dim <= end_dim, gets {s} and {e} (start_dim cannot come after end_dim)"),
                );
            }
            Ok(())
        }
        "transpose" | "swapaxes" => {
            wrap_opt(int(1, "dim0"), rank0, Some(1))?;
            wrap_opt(int(2, "dim1"), rank0, Some(2))
        }
        "chunk" => {
            if let Some(c) = int(1, "chunks").filter(|&c| c <= 0) {
                return fail(
                    ShapeErrorKind::Size,
                    Some(1),
                    format!("expects `chunks` greater than 0, gets {c}"),
                );
            }
            wrap_opt(Some(int(2, "dim").unwrap_or(0)), rank0, Some(2))
        }
        "split" | "split_with_sizes" => {
            let Some(t) = t0 else { return Ok(()) };
            let d = wrap(int(2, "dim").unwrap_or(0), t.len(), Some(2))?;
            let sizes = inp
                .get(1, "split_size_or_sections")
                .or(inp.get(1, "split_size"))
                .or(inp.get(1, "split_sizes"));
            if let (Some(Meta::Seq(v)), Some(n)) = (sizes, t.get(d).and_then(Dim::known)) {
                if let Some(v) = v.iter().map(Meta::as_int).collect::<Option<Vec<i64>>>() {
                    if v.iter().sum::<i64>() != n {
                        return fail(
                            ShapeErrorKind::Size,
                            Some(1),
                            format!(
                                "expects split sizes {v:?} to sum to {n}, the size of dimension {d} of {}",
                                fmt_shape(t)
                            ),
                        );
                    }
                }
            }
            Ok(())
        }
        "narrow" => {
            let Some(t) = t0 else { return Ok(()) };
            let Some(dim) = int(1, "dim") else {
                return Ok(());
            };
            let d = wrap(dim, t.len(), Some(1))?;
            if let (Some(n), Some(start), Some(len)) = (
                t.get(d).and_then(Dim::known),
                int(2, "start"),
                int(3, "length"),
            ) {
                let start = if start < 0 { start + n } else { start };
                if len < 0 || start < 0 || start + len > n {
                    return fail(
                        ShapeErrorKind::Size,
                        Some(2),
                        format!(
                            "expects start + length within {n}, the size of dimension {d}, gets start {start} and length {len}"
                        ),
                    );
                }
            }
            Ok(())
        }
        "conv1d" | "conv2d" | "conv3d" => {
            let n = (name.as_bytes()[4] - b'0') as usize;
            let (Some(x), Some(w)) = (t0, shape_of(inp.get(1, "weight"))) else {
                return Ok(());
            };
            spatial_rank(x, n, name)?;
            if w.len() != n + 2 {
                return Ok(());
            }
            let groups = int(6, "groups").unwrap_or(1);
            if let Some(per_group) = w[1].expr() {
                channels(
                    x,
                    n,
                    &Dim::from_expr(per_group.scale(groups)),
                    &format!(" (weight {} with groups={groups})", fmt_shape(w)),
                )?;
            }
            let k = Meta::Seq(
                w[2..]
                    .iter()
                    .map(|d| d.known().map(Meta::int).unwrap_or(Meta::Unknown))
                    .collect(),
            );
            windows(
                x,
                n,
                &k,
                inp.get(3, "stride").unwrap_or(&Meta::int(1)),
                inp.get(4, "padding").unwrap_or(&Meta::int(0)),
                inp.get(5, "dilation").unwrap_or(&Meta::int(1)),
                false,
            )
        }
        "max_pool1d" | "max_pool2d" | "avg_pool1d" | "avg_pool2d" => {
            let n = if name.ends_with("2d") { 2 } else { 1 };
            let Some(x) = t0 else { return Ok(()) };
            spatial_rank(x, n, name)?;
            // ceil_mode can add a window; without it the floor is what runs.
            let ceil_pos = if name.starts_with("max") { 5 } else { 4 };
            if inp.get(ceil_pos, "ceil_mode").is_some_and(is_true) {
                return Ok(());
            }
            let dil = if name.starts_with("max") {
                inp.get(4, "dilation").cloned().unwrap_or(Meta::int(1))
            } else {
                Meta::int(1)
            };
            windows(
                x,
                n,
                inp.get(1, "kernel_size").unwrap_or(&Meta::Unknown),
                inp.get(2, "stride").unwrap_or(&Meta::None),
                inp.get(3, "padding").unwrap_or(&Meta::int(0)),
                &dil,
                true,
            )
        }
        "layer_norm" | "rms_norm" => match (
            t0,
            inp.get(1, "normalized_shape").and_then(Meta::as_int_list),
        ) {
            (Some(x), Some(ns)) => norm_trailing(x, &ns),
            _ => Ok(()),
        },
        "group_norm" => match (t0, int(1, "num_groups")) {
            (Some(x), Some(g)) => group_norm(x, g, None),
            _ => Ok(()),
        },
        "batch_norm" => {
            // Only the running statistics and the affine weights fix the channel count.
            let stats = ["running_mean", "running_var", "weight", "bias"]
                .iter()
                .enumerate()
                .find_map(|(i, n)| shape_of(inp.get(i + 1, n)).filter(|s| s.len() == 1));
            match (t0, stats) {
                (Some(x), Some(s)) if x.len() >= 2 => {
                    if differ(&x[1], &s[0]) {
                        return fail(
                            ShapeErrorKind::Size,
                            Some(0),
                            format!(
                                "expects {} channels, gets {} (input {})",
                                s[0],
                                x[1],
                                fmt_shape(x)
                            ),
                        );
                    }
                    Ok(())
                }
                _ => Ok(()),
            }
        }
        "embedding" => match a0.and_then(Meta::as_tensor) {
            Some(ix) => integer_indices(ix),
            None => Ok(()),
        },
        _ => ops::call(name, inp),
    }
}

/// The check of a torch.nn leaf module's forward.
pub fn module(m: &ModuleInfo, inp: &Inputs) -> Check {
    let attr = |n: &str| (m.attr)(n);
    let Some(t) = inp.args.first().and_then(Meta::as_tensor) else {
        return Ok(());
    };
    let Some(x) = &t.shape else {
        // The dtype is all there is to check.
        return match m.class {
            "Embedding" => integer_indices(t),
            _ => Ok(()),
        };
    };
    match m.class {
        "Linear" | "NonDynamicallyQuantizableLinear" => match attr("in_features").as_int() {
            Some(k) if !x.is_empty() => {
                if differ(x.last().unwrap(), &Dim::Known(k)) {
                    return fail(
                        ShapeErrorKind::Size,
                        Some(0),
                        format!(
                            "expects the last dimension {k}, gets {} (mat1 and mat2 shapes cannot be multiplied)",
                            x.last().unwrap(),
                        ),
                    );
                }
                Ok(())
            }
            _ => Ok(()),
        },
        "Conv1d" | "Conv2d" | "Conv3d" => {
            let n = (m.class.as_bytes()[4] - b'0') as usize;
            spatial_rank(x, n, &m.class.to_ascii_lowercase())?;
            if let Some(c) = attr("in_channels").as_int() {
                let groups = attr("groups").as_int().unwrap_or(1);
                let why = if groups == 1 {
                    String::new()
                } else {
                    format!(" (groups={groups})")
                };
                channels(x, n, &Dim::Known(c), &why)?;
            }
            // `padding="same"` keeps the size; reflect/replicate/circular pad as zeros do.
            if matches!(attr("padding"), Meta::Str(ref s) if s == "same") {
                return Ok(());
            }
            windows(
                x,
                n,
                &attr("kernel_size"),
                &attr("stride"),
                &attr("padding"),
                &attr("dilation"),
                false,
            )
        }
        "MaxPool1d" | "MaxPool2d" | "MaxPool3d" | "AvgPool1d" | "AvgPool2d" | "AvgPool3d" => {
            let n = (m.class.as_bytes()[m.class.len() - 2] - b'0') as usize;
            spatial_rank(x, n, &m.class.to_ascii_lowercase())?;
            if is_true(&attr("ceil_mode")) {
                return Ok(());
            }
            let dil = if m.class.starts_with("Max") {
                attr("dilation")
            } else {
                Meta::int(1)
            };
            windows(
                x,
                n,
                &attr("kernel_size"),
                &attr("stride"),
                &attr("padding"),
                &dil,
                true,
            )
        }
        "BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d" => {
            let ranks: &[usize] = match m.class {
                "BatchNorm1d" => &[2, 3],
                "BatchNorm2d" => &[4],
                _ => &[5],
            };
            if !ranks.contains(&x.len()) {
                return fail(
                    ShapeErrorKind::Rank,
                    Some(0),
                    format!(
                        "expects {} input, gets {}-d {}",
                        ranks
                            .iter()
                            .map(|r| format!("{r}-d"))
                            .collect::<Vec<_>>()
                            .join(" or "),
                        x.len(),
                        fmt_shape(x)
                    ),
                );
            }
            // Without affine weights or running statistics nothing has the channel count.
            let sized = is_true(&attr("affine")) || is_true(&attr("track_running_stats"));
            match attr("num_features").as_int() {
                Some(c) if sized && differ(&x[1], &Dim::Known(c)) => fail(
                    ShapeErrorKind::Size,
                    Some(0),
                    format!(
                        "expects {c} channels (num_features), gets {} (input {})",
                        x[1],
                        fmt_shape(x)
                    ),
                ),
                _ => Ok(()),
            }
        }
        "GroupNorm" => match attr("num_groups").as_int() {
            Some(g) => group_norm(
                x,
                g,
                is_true(&attr("affine"))
                    .then(|| attr("num_channels").as_int())
                    .flatten(),
            ),
            None => Ok(()),
        },
        "LayerNorm" | "RMSNorm" => match attr("normalized_shape").as_int_list() {
            Some(ns) => norm_trailing(x, &ns),
            None => Ok(()),
        },
        "Embedding" => integer_indices(t),
        _ => layers::module(m, x),
    }
}

#[cfg(test)]
mod tests {
    use super::super::rules::{infer, infer_module, Inputs, ModuleInfo};
    use super::super::{shape_of, DType, Dim, Expr, Meta};
    use super::ShapeErrorKind;

    fn t(s: &[i64]) -> Meta {
        Meta::tensor(Some(shape_of(s)), DType::Float32)
    }
    fn ints(v: &[i64]) -> Meta {
        Meta::Seq(v.iter().map(|&i| Meta::int(i)).collect())
    }
    fn sym(n: u32) -> Dim {
        Dim::Sym(Expr::sym(n))
    }
    fn run(name: &str, args: &[Meta]) -> Result<Meta, String> {
        infer(name, &Inputs { args, kwargs: &[] }).map_err(|e| e.message)
    }
    fn run_kw(name: &str, args: &[Meta], kw: &[(&str, Meta)]) -> Result<Meta, String> {
        let kwargs: Vec<(String, Meta)> =
            kw.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        infer(
            name,
            &Inputs {
                args,
                kwargs: &kwargs,
            },
        )
        .map_err(|e| e.message)
    }
    fn module(class: &str, attrs: &[(&str, Meta)], x: Meta) -> Result<Meta, String> {
        let attr = |n: &str| {
            attrs
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.clone())
                .unwrap_or(Meta::Unknown)
        };
        infer_module(
            &ModuleInfo { class, attr: &attr },
            &Inputs {
                args: &[x],
                kwargs: &[],
            },
        )
        .map_err(|e| e.message)
    }
    fn yes() -> Meta {
        Meta::Scalar(
            super::Scalar::Bool(Some(true)),
            super::super::ScalarOrigin::Const,
        )
    }

    #[test]
    fn linear_needs_in_features_as_the_last_dim() {
        // torch: nn.Linear(20, 5)(torch.zeros(1, 10)) raises "mat1 and mat2 shapes cannot be
        // multiplied (1x10 and 20x5)"; torch.zeros(1, 20) gives [1, 5].
        let lin = [
            ("in_features", Meta::int(20)),
            ("out_features", Meta::int(5)),
        ];
        let e = module("Linear", &lin, t(&[1, 10])).unwrap_err();
        assert!(e.contains("expects the last dimension 20, gets 10"), "{e}");
        assert_eq!(module("Linear", &lin, t(&[1, 20])), Ok(t(&[1, 5])));
        // F.linear(x, w) with w [5, 20]: the same check on the weight's dim 1
        assert!(run("linear", &[t(&[3, 10]), t(&[5, 20])]).is_err());
        assert_eq!(run("linear", &[t(&[3, 20]), t(&[5, 20])]), Ok(t(&[3, 5])));
        // a symbolic last dim may be 20 at run time
        let x = Meta::tensor(Some(vec![Dim::Known(1), sym(0)]), DType::Float32);
        assert!(module("Linear", &lin, x).is_ok());
    }

    #[test]
    fn matmul_mm_bmm_contract_and_broadcast() {
        // torch: torch.zeros(2, 8) @ torch.zeros(4, 2): "(2x8 and 4x2) cannot be multiplied"
        let e = run("matmul", &[t(&[2, 8]), t(&[4, 2])]).unwrap_err();
        assert!(e.contains("(2x8 and 4x2)"), "{e}");
        assert_eq!(run("matmul", &[t(&[2, 8]), t(&[8, 2])]), Ok(t(&[2, 2])));
        // batch dims broadcast: [2, 5, 4] @ [3, 4, 6] raises, [1, 5, 4] @ [3, 4, 6] is [3, 5, 6]
        assert!(run("matmul", &[t(&[2, 5, 4]), t(&[3, 4, 6])]).is_err());
        assert_eq!(
            run("matmul", &[t(&[1, 5, 4]), t(&[3, 4, 6])]),
            Ok(t(&[3, 5, 6]))
        );
        // a vector contracts with the matrix's rows: [8] @ [8, 3] is [3]; [7] @ [8, 3] raises
        assert!(run("matmul", &[t(&[7]), t(&[8, 3])]).is_err());
        assert_eq!(run("matmul", &[t(&[8]), t(&[8, 3])]), Ok(t(&[3])));
        // mm takes matrices only; bmm does not broadcast its batch
        assert!(run("mm", &[t(&[2, 3, 4]), t(&[4, 2])]).is_err());
        assert_eq!(run("mm", &[t(&[3, 4]), t(&[4, 2])]), Ok(t(&[3, 2])));
        assert!(run("bmm", &[t(&[1, 3, 4]), t(&[2, 4, 5])]).is_err());
        assert_eq!(
            run("bmm", &[t(&[2, 3, 4]), t(&[2, 4, 5])]),
            Ok(t(&[2, 3, 5]))
        );
        // s0 against s0 + 1 can never be equal; s0 against 4 can
        let a = Meta::tensor(Some(vec![Dim::Known(2), sym(0)]), DType::Float32);
        let b = Meta::tensor(
            Some(vec![Dim::Sym(Expr::sym(0).add_const(1)), Dim::Known(3)]),
            DType::Float32,
        );
        assert!(run("matmul", &[a.clone(), b]).is_err());
        assert!(run("matmul", &[a, t(&[4, 3])]).is_ok());
    }

    #[test]
    fn cat_and_stack_check_ranks_and_the_other_dims() {
        let pair = |a: Meta, b: Meta| Meta::Seq(vec![a, b]);
        // torch.cat([zeros(1, 3, 32), zeros(1, 1, 3, 32)], dim=1): "Tensors must have same
        // number of dimensions: got 3 and 4"
        let e = run(
            "cat",
            &[pair(t(&[1, 3, 32]), t(&[1, 1, 3, 32])), Meta::int(1)],
        )
        .unwrap_err();
        assert!(e.contains("same number of dimensions"), "{e}");
        assert_eq!(
            run("cat", &[pair(t(&[1, 3, 32]), t(&[1, 5, 32])), Meta::int(1)]),
            Ok(t(&[1, 8, 32]))
        );
        // sizes must match except in the cat dim
        assert!(run("cat", &[pair(t(&[1, 3, 32]), t(&[1, 3, 16])), Meta::int(1)]).is_err());
        // a 1-d empty tensor is skipped whatever its rank
        assert!(run("cat", &[pair(t(&[0]), t(&[2, 3]))]).is_ok());
        // dim out of range
        assert!(run("cat", &[pair(t(&[2, 3]), t(&[2, 3])), Meta::int(2)]).is_err());
        // stack: equal shapes only
        assert!(run("stack", &[pair(t(&[2, 3]), t(&[2, 4]))]).is_err());
        assert_eq!(
            run("stack", &[pair(t(&[2, 3]), t(&[2, 3]))]),
            Ok(t(&[2, 2, 3]))
        );
    }

    #[test]
    fn view_keeps_the_element_count() {
        // torch: zeros(1, 3, 32).view(1, 3, 7): "shape '[1, 3, 7]' is invalid for input of size 96"
        let e = run(
            "view",
            &[t(&[1, 3, 32]), Meta::int(1), Meta::int(3), Meta::int(7)],
        )
        .unwrap_err();
        assert!(e.contains("invalid for input of size 96"), "{e}");
        assert_eq!(
            run(
                "view",
                &[t(&[1, 3, 32]), Meta::int(1), Meta::int(3), Meta::int(32)]
            ),
            Ok(t(&[1, 3, 32]))
        );
        // one -1 only, and it must divide evenly
        assert!(run("reshape", &[t(&[4, 6]), ints(&[-1, -1])]).is_err());
        assert!(run("reshape", &[t(&[4, 6]), ints(&[-1, 5])]).is_err());
        assert_eq!(
            run("reshape", &[t(&[4, 6]), ints(&[-1, 8])]),
            Ok(t(&[3, 8]))
        );
        // [s0, 6] as (-1, 4) may divide (s0 even): no error; as (s0, 7) it never can
        let x = Meta::tensor(Some(vec![sym(0), Dim::Known(6)]), DType::Float32);
        assert!(run("view", &[x.clone(), ints(&[-1, 4])]).is_ok());
        let s0 = Meta::Scalar(super::Scalar::Int(None), super::super::ScalarOrigin::Shape);
        assert!(run("view", &[x, s0, Meta::int(7)]).is_ok());
    }

    #[test]
    fn elementwise_ops_broadcast() {
        // torch: zeros(2, 3) + zeros(4) raises; zeros(2, 3) + zeros(3) and zeros(2, 1) work
        let e = run("add", &[t(&[2, 3]), t(&[4])]).unwrap_err();
        assert!(e.contains("non-singleton dimension 1"), "{e}");
        assert_eq!(run("add", &[t(&[2, 3]), t(&[3])]), Ok(t(&[2, 3])));
        assert_eq!(run("mul", &[t(&[2, 3]), t(&[2, 1])]), Ok(t(&[2, 3])));
        // a symbolic size may be 1
        let x = Meta::tensor(Some(vec![sym(0), Dim::Known(3)]), DType::Float32);
        assert!(run("add", &[x, t(&[4, 3])]).is_ok());
    }

    #[test]
    fn convolutions_check_channels_groups_and_size() {
        let conv = |c_in: i64, groups: i64| {
            vec![
                ("in_channels", Meta::int(c_in)),
                ("out_channels", Meta::int(16)),
                ("kernel_size", ints(&[3, 3])),
                ("stride", ints(&[1, 1])),
                ("padding", ints(&[0, 0])),
                ("dilation", ints(&[1, 1])),
                ("groups", Meta::int(groups)),
            ]
        };
        // torch: Conv2d(3, 16, 3)(zeros(1, 4, 32, 32)) raises "expected input[1, 4, 32, 32] to
        // have 3 channels, but got 4 channels instead"
        assert!(module("Conv2d", &conv(3, 1), t(&[1, 4, 32, 32])).is_err());
        assert_eq!(
            module("Conv2d", &conv(3, 1), t(&[1, 3, 32, 32])),
            Ok(t(&[1, 16, 30, 30]))
        );
        // unbatched input is fine, a 2-d one is not
        assert!(module("Conv2d", &conv(3, 1), t(&[3, 32, 32])).is_ok());
        assert!(module("Conv2d", &conv(3, 1), t(&[3, 32])).is_err());
        // kernel larger than the input: "Kernel size can't be greater than actual input size"
        assert!(module("Conv2d", &conv(3, 1), t(&[1, 3, 2, 2])).is_err());
        // F.conv2d: the weight's dim 1 times groups is the channel count
        let w = t(&[16, 2, 3, 3]);
        let kw = [("groups", Meta::int(2))];
        assert!(run_kw("conv2d", &[t(&[1, 4, 8, 8]), w.clone()], &kw).is_ok());
        assert!(run_kw("conv2d", &[t(&[1, 3, 8, 8]), w], &kw).is_err());
    }

    #[test]
    fn pooling_output_must_be_positive() {
        let pool = [
            ("kernel_size", Meta::int(2)),
            ("stride", Meta::int(2)),
            ("padding", Meta::int(0)),
            ("dilation", Meta::int(1)),
        ];
        // torch: MaxPool2d(2)(zeros(1, 16, 1, 1)) raises "Output size is too small"
        assert!(module("MaxPool2d", &pool, t(&[1, 16, 1, 1])).is_err());
        assert_eq!(
            module("MaxPool2d", &pool, t(&[1, 16, 4, 4])),
            Ok(t(&[1, 16, 2, 2]))
        );
        assert!(run("max_pool2d", &[t(&[1, 16, 1, 1]), Meta::int(2)]).is_err());
        assert!(run("avg_pool2d", &[t(&[1, 16, 2, 2]), Meta::int(2)]).is_ok());
    }

    #[test]
    fn norms_fit_their_inputs() {
        // torch: nn.LayerNorm(64)(zeros(1, 3, 7)) raises "Given normalized_shape=[64], expected
        // input with shape [*, 64]"
        let ln = [("normalized_shape", ints(&[64]))];
        assert!(module("LayerNorm", &ln, t(&[1, 3, 7])).is_err());
        assert!(module("LayerNorm", &ln, t(&[1, 3, 64])).is_ok());
        assert!(module("RMSNorm", &ln, t(&[2, 63])).is_err());
        assert!(run("layer_norm", &[t(&[2, 64]), ints(&[64])]).is_ok());
        assert!(run("layer_norm", &[t(&[2, 32]), ints(&[64])]).is_err());
        // BatchNorm2d(16) on 8 channels raises (running_mean has 16 elements); on a 3-d input
        // it raises "expected 4D input"
        let bn = [
            ("num_features", Meta::int(16)),
            ("affine", yes()),
            ("track_running_stats", yes()),
        ];
        assert!(module("BatchNorm2d", &bn, t(&[1, 8, 4, 4])).is_err());
        assert!(module("BatchNorm2d", &bn, t(&[8, 4, 4])).is_err());
        assert!(module("BatchNorm2d", &bn, t(&[1, 16, 4, 4])).is_ok());
        // GroupNorm(4, 12) on 10 channels: not divisible by 4
        let gn = [
            ("num_groups", Meta::int(4)),
            ("num_channels", Meta::int(12)),
            ("affine", yes()),
        ];
        assert!(module("GroupNorm", &gn, t(&[1, 10, 4, 4])).is_err());
        assert!(module("GroupNorm", &gn, t(&[1, 12, 4, 4])).is_ok());
        assert!(run("group_norm", &[t(&[1, 6, 4]), Meta::int(4)]).is_err());
        assert!(run("group_norm", &[t(&[1, 8, 4]), Meta::int(4)]).is_ok());
    }

    #[test]
    fn embedding_indices_are_integers() {
        let emb = [
            ("num_embeddings", Meta::int(10)),
            ("embedding_dim", Meta::int(4)),
        ];
        let e = infer_module(
            &ModuleInfo {
                class: "Embedding",
                attr: &|n: &str| {
                    emb.iter()
                        .find(|(k, _)| *k == n)
                        .map(|(_, v)| v.clone())
                        .unwrap_or(Meta::Unknown)
                },
            },
            &Inputs {
                args: &[t(&[2, 3])],
                kwargs: &[],
            },
        )
        .unwrap_err();
        assert_eq!(e.kind, ShapeErrorKind::Dtype);
        let ids = Meta::tensor(Some(shape_of(&[2, 3])), DType::Int64);
        assert!(module("Embedding", &emb, ids).is_ok());
    }

    #[test]
    fn dimension_arguments_in_range() {
        // permute needs one dim per dimension, each once
        assert!(run("permute", &[t(&[2, 3, 4]), Meta::int(0), Meta::int(1)]).is_err());
        assert!(run("permute", &[t(&[2, 3, 4]), ints(&[0, 1, 1])]).is_err());
        assert_eq!(
            run("permute", &[t(&[2, 3, 4]), ints(&[2, 0, 1])]),
            Ok(t(&[4, 2, 3]))
        );
        // torch: zeros(2, 3).unsqueeze(3) raises (range [-3, 2]); unsqueeze(2) works
        assert!(run("unsqueeze", &[t(&[2, 3]), Meta::int(3)]).is_err());
        assert!(run("unsqueeze", &[t(&[2, 3]), Meta::int(2)]).is_ok());
        assert!(run("squeeze", &[t(&[2, 1]), Meta::int(2)]).is_err());
        assert!(run("squeeze", &[t(&[2, 1]), Meta::int(-1)]).is_ok());
        assert!(run("flatten", &[t(&[2, 3]), Meta::int(2)]).is_err());
        assert!(run("flatten", &[t(&[2, 3, 4]), Meta::int(2), Meta::int(1)]).is_err());
        assert!(run("flatten", &[t(&[2, 3, 4]), Meta::int(1)]).is_ok());
        // a 0-d tensor takes dims -1 and 0
        assert!(run("flatten", &[t(&[])]).is_ok());
        assert!(run("transpose", &[t(&[2, 3]), Meta::int(0), Meta::int(2)]).is_err());
        assert!(run("transpose", &[t(&[2, 3]), Meta::int(0), Meta::int(-1)]).is_ok());
        assert!(run("chunk", &[t(&[4, 6]), Meta::int(0)]).is_err());
        assert!(run("chunk", &[t(&[4, 6]), Meta::int(2), Meta::int(2)]).is_err());
        assert!(run("chunk", &[t(&[4, 6]), Meta::int(2), Meta::int(1)]).is_ok());
        assert!(run("split", &[t(&[10, 2]), ints(&[3, 4])]).is_err());
        assert!(run("split", &[t(&[10, 2]), ints(&[3, 7])]).is_ok());
        assert!(run("split", &[t(&[10, 2]), Meta::int(3), Meta::int(2)]).is_err());
        assert!(run(
            "narrow",
            &[t(&[6, 2]), Meta::int(0), Meta::int(2), Meta::int(5)]
        )
        .is_err());
        assert!(run(
            "narrow",
            &[t(&[6, 2]), Meta::int(0), Meta::int(2), Meta::int(4)]
        )
        .is_ok());
        assert!(run(
            "narrow",
            &[t(&[6, 2]), Meta::int(2), Meta::int(0), Meta::int(1)]
        )
        .is_err());
    }

    /// The messages and outcomes of torch 2.15 in eager mode (scripts: the shape-mistake
    /// corpus labeller; each case below was run there).
    #[test]
    fn recurrent_attention_and_transposed_layers_check_their_sizes() {
        let size = |v: i64| ("input_size", Meta::int(v));
        let e = module("LSTM", &[size(10)], t(&[2, 5, 12])).unwrap_err();
        assert!(e.contains("input_size 10, gets 12"), "{e}");
        let e = module("GRU", &[size(12)], t(&[2, 3, 4, 12])).unwrap_err();
        assert!(
            e.contains("GRU: Expected input to be 2D or 3D, got 4D"),
            "{e}"
        );
        assert!(module("RNN", &[size(12)], t(&[5, 12])).is_ok());
        let e = module("LSTMCell", &[size(10)], t(&[3, 12])).unwrap_err();
        assert!(e.contains("got 12 expected 10"), "{e}");
        let e = module(
            "MultiheadAttention",
            &[("embed_dim", Meta::int(16))],
            t(&[2, 5, 12]),
        )
        .unwrap_err();
        assert!(e.contains("embedding dimension of 16, but got 12"), "{e}");
        let e = module(
            "ConvTranspose2d",
            &[("in_channels", Meta::int(4))],
            t(&[1, 5, 8, 8]),
        )
        .unwrap_err();
        assert!(e.contains("expects 4 input channels, gets 5"), "{e}");
        // InstanceNorm only checks when something holds the channel count
        let inst = |affine: bool| {
            let flag = if affine { yes() } else { Meta::Unknown };
            module(
                "InstanceNorm2d",
                &[("num_features", Meta::int(4)), ("affine", flag)],
                t(&[1, 5, 8, 8]),
            )
        };
        assert!(inst(false).is_ok());
        assert!(inst(true).unwrap_err().contains("expects 4 channels"));
        let e = module(
            "PixelShuffle",
            &[("upscale_factor", Meta::int(2))],
            t(&[1, 6, 4, 4]),
        )
        .unwrap_err();
        assert!(
            e.contains("divisible by upscale_factor² = 4, gets 6"),
            "{e}"
        );
        // a symbolic size may be right
        assert!(module(
            "LSTM",
            &[size(10)],
            Meta::tensor(Some(vec![Dim::Known(2), sym(0)]), DType::Float32)
        )
        .is_ok());
    }

    #[test]
    fn expand_dims_einsum_sdpa_and_interpolate_check_their_arguments() {
        let e = run("expand", &[t(&[2, 3]), Meta::int(2), Meta::int(5)]).unwrap_err();
        assert!(
            e.contains("expanded size of the tensor (5) must match the existing size (3) at non-singleton dimension 1"),
            "{e}"
        );
        assert!(run("expand", &[t(&[2, 1]), Meta::int(2), Meta::int(5)]).is_ok());
        assert!(run(
            "expand",
            &[t(&[2, 3]), Meta::int(4), Meta::int(-1), Meta::int(3)]
        )
        .is_ok());
        assert!(run("expand", &[t(&[2, 3]), Meta::int(3)]).is_err());
        assert!(run("expand", &[t(&[3]), Meta::int(-1), Meta::int(3)]).is_err());
        let e = run_kw("softmax", &[t(&[2, 3])], &[("dim", Meta::int(2))]).unwrap_err();
        assert!(e.contains("range [-2, 1], gets 2"), "{e}");
        assert!(run("sum", &[t(&[2, 3]), ints(&[0, 3])]).is_err());
        assert!(run("mean", &[t(&[2, 3]), Meta::int(-2)]).is_ok());
        // torch.max(a, b) is elementwise: no dim to check
        assert!(run("max", &[t(&[2, 3]), t(&[2, 3])]).is_ok());
        let eq = |s: &str| Meta::Str(s.into());
        let e = run("einsum", &[eq("bij,bjk->bik"), t(&[2, 3]), t(&[2, 3, 4])]).unwrap_err();
        assert!(e.contains("number of subscripts in the equation (3) does not match the number of dimensions (2) for operand 0"), "{e}");
        let e = run(
            "einsum",
            &[eq("bij,bjk->bik"), t(&[2, 3, 5]), t(&[2, 4, 4])],
        )
        .unwrap_err();
        assert!(e.contains("subscript j has size 4 for operand 1 which does not broadcast with previously seen size 5"), "{e}");
        assert!(run(
            "einsum",
            &[eq("...ij,jk->...ik"), t(&[7, 2, 3, 5]), t(&[5, 4])]
        )
        .is_ok());
        assert!(run(
            "einsum",
            &[eq("bij,bjk->bik"), t(&[1, 3, 5]), t(&[2, 5, 4])]
        )
        .is_ok());
        let e = run(
            "scaled_dot_product_attention",
            &[t(&[2, 4, 5, 8]), t(&[2, 4, 5, 6]), t(&[2, 4, 5, 6])],
        )
        .unwrap_err();
        assert!(e.contains("same last dimension, gets 8 and 6"), "{e}");
        let e = run(
            "scaled_dot_product_attention",
            &[t(&[2, 4, 5, 8]), t(&[3, 4, 5, 8]), t(&[3, 4, 5, 8])],
        )
        .unwrap_err();
        assert!(
            e.contains("size of tensor a (2) must match the size of tensor b (3)"),
            "{e}"
        );
        // torch: key and value with fewer heads than the query are grouped-query attention
        // under enable_gqa=True (heads 4 against 2), an error without it.
        let (q, kv) = (t(&[2, 4, 5, 8]), t(&[2, 2, 5, 8]));
        let gqa = |on: bool| {
            run_kw(
                "scaled_dot_product_attention",
                &[q.clone(), kv.clone(), kv.clone()],
                &[(
                    "enable_gqa",
                    Meta::Scalar(
                        super::super::Scalar::Bool(Some(on)),
                        super::super::ScalarOrigin::Const,
                    ),
                )],
            )
        };
        assert_eq!(
            gqa(true).map(|m| format!("{m:?}")),
            Ok(format!("{:?}", t(&[2, 4, 5, 8])))
        );
        assert!(gqa(false).is_err());
        assert!(run_kw("interpolate", &[t(&[1, 3, 8, 8])], &[("size", ints(&[16]))]).is_err());
        assert!(run_kw(
            "interpolate",
            &[t(&[1, 3])],
            &[("scale_factor", Meta::int(2))]
        )
        .is_err());
        assert!(run_kw(
            "interpolate",
            &[t(&[1, 3, 8])],
            &[
                ("scale_factor", Meta::int(2)),
                ("mode", Meta::Str("bilinear".into()))
            ]
        )
        .is_err());
        assert!(run_kw(
            "interpolate",
            &[t(&[1, 3, 8, 8])],
            &[("size", ints(&[16, 16]))]
        )
        .is_ok());
        let e = run("unflatten", &[t(&[2, 12]), Meta::int(1), ints(&[5, 3])]).unwrap_err();
        assert!(
            e.contains("sizes [5, 3] don't multiply up to the size of dim 1 (12)"),
            "{e}"
        );
        assert!(run("unflatten", &[t(&[2, 12]), Meta::int(1), ints(&[-1, 3])]).is_ok());
        assert!(run("repeat", &[t(&[2, 3]), Meta::int(2)]).is_err());
    }
}
