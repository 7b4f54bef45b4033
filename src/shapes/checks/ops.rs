//! The argument checks of tensor functions and methods beyond the products, joins, views and
//! layer functions in the parent module: `expand`, reductions and other ops with a `dim`,
//! `einsum`, `scaled_dot_product_attention`, `interpolate`, `repeat`, `unflatten`,
//! `pixel_shuffle`. Messages follow PyTorch's (torch 2.15, measured in eager mode).

use super::super::rules::Inputs;
use super::super::{Dim, Meta, Scalar, Shape};
use super::{broadcastable, differ, fail, fmt_shape, shape_of, wrap, Check, ShapeErrorKind};

/// Ops whose `dim` (positional 1 or keyword) must name a dimension of the input.
const DIM_OPS: &[&str] = &[
    "softmax",
    "log_softmax",
    "sum",
    "mean",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "cumsum",
    "cumprod",
    "prod",
    "logsumexp",
    "std",
    "var",
    "index_select",
    "select",
    "unbind",
    "glu",
    "max",
    "min",
    "all",
    "any",
    "nansum",
    "median",
];

pub(super) fn call(name: &str, inp: &Inputs) -> Check {
    let t0 = shape_of(inp.args.first());
    match name {
        n if DIM_OPS.contains(&n) => match (t0, inp.get(1, "dim")) {
            (Some(t), Some(Meta::Scalar(..))) => match inp.get(1, "dim").and_then(Meta::as_int) {
                Some(d) => wrap(d, t.len(), Some(1)).map(drop),
                None => Ok(()),
            },
            (Some(t), Some(dims @ Meta::Seq(_))) => match dims.as_int_list() {
                Some(ds) => ds.iter().try_for_each(|&d| wrap(d, t.len(), Some(1)).map(drop)),
                None => Ok(()),
            },
            _ => Ok(()),
        },
        "expand" => match (t0, super::super::rules::varargs_dims(inp, 1, "size")) {
            (Some(t), Some(sizes)) => expand(t, &sizes),
            _ => Ok(()),
        },
        "expand_as" => match (t0, shape_of(inp.get(1, "other"))) {
            (Some(t), Some(other)) => expand(t, other),
            _ => Ok(()),
        },
        "einsum" => einsum(inp),
        "scaled_dot_product_attention" => sdpa(inp),
        "interpolate" | "upsample" => match t0 {
            Some(t) => interpolate(t, inp),
            None => Ok(()),
        },
        "repeat" => match (t0, super::super::rules::varargs_dims(inp, 1, "repeats")) {
            (Some(t), Some(r)) if r.len() < t.len() => fail(
                ShapeErrorKind::Rank,
                Some(1),
                format!(
                    "expects at least as many repeat dims as the tensor has dimensions ({}), gets {}",
                    t.len(),
                    r.len()
                ),
            ),
            _ => Ok(()),
        },
        "unflatten" => unflatten(t0, inp),
        "pixel_shuffle" => match (t0, inp.get(1, "upscale_factor").and_then(Meta::as_int)) {
            (Some(t), Some(r)) if r > 0 => super::layers::pixel_shuffle(t, r),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// `x.expand(*sizes)`: at least the tensor's rank; each existing size kept (-1), equal, or
/// expanded from 1; a new leading size not -1.
fn expand(t: &Shape, sizes: &Shape) -> Check {
    if sizes.len() < t.len() {
        return fail(
            ShapeErrorKind::Rank,
            Some(1),
            format!(
                "expects at least {} sizes, the number of dimensions of {}, gets {}",
                t.len(),
                fmt_shape(t),
                sizes.len()
            ),
        );
    }
    let lead = sizes.len() - t.len();
    for (i, s) in sizes.iter().enumerate() {
        if i < lead {
            if *s == Dim::Known(-1) {
                return fail(
                    ShapeErrorKind::Size,
                    Some(1),
                    format!("The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"),
                );
            }
            continue;
        }
        let have = &t[i - lead];
        if *s == Dim::Known(-1) || *have == Dim::Known(1) {
            continue;
        }
        if differ(have, s) {
            return fail(
                ShapeErrorKind::Size,
                Some(1),
                format!(
                    "The expanded size of the tensor ({s}) must match the existing size ({have}) at non-singleton dimension {i}. Target sizes: {}. Tensor sizes: {}",
                    fmt_shape(sizes),
                    fmt_shape(t)
                ),
            );
        }
    }
    Ok(())
}

/// `torch.einsum(equation, *operands)`: as many subscripts as each operand has dimensions
/// (without an ellipsis), and one size per subscript letter (or 1, which broadcasts).
fn einsum(inp: &Inputs) -> Check {
    let Some(Meta::Str(eq)) = inp.args.first() else {
        return Ok(());
    };
    let ops: Vec<&Meta> = match inp.args.get(1..) {
        Some([Meta::Seq(items)]) => items.iter().collect(),
        Some(rest) => rest.iter().collect(),
        None => return Ok(()),
    };
    let eq: String = eq.chars().filter(|c| !c.is_whitespace()).collect();
    let lhs = eq.split_once("->").map_or(eq.as_str(), |(l, _)| l);
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ops.len() {
        return Ok(());
    }
    let mut seen: Vec<(char, Dim, usize)> = vec![];
    for (i, (term, op)) in terms.iter().zip(&ops).enumerate() {
        let Some(shape) = shape_of(Some(op)) else {
            continue;
        };
        let has_ellipsis = term.contains("...");
        let letters: Vec<char> = term.chars().filter(|c| c.is_ascii_alphabetic()).collect();
        if !has_ellipsis && letters.len() != shape.len() {
            return fail(
                ShapeErrorKind::Rank,
                Some(i + 1),
                format!(
                    "einsum(): the number of subscripts in the equation ({}) does not match the number of dimensions ({}) for operand {i} and no ellipsis was given",
                    letters.len(),
                    shape.len()
                ),
            );
        }
        if has_ellipsis && letters.len() > shape.len() {
            return Ok(());
        }
        let (before, after) = term.split_once("...").unwrap_or((term, ""));
        let n_before = before.chars().count();
        let n_after = after.chars().count();
        let dims = before
            .chars()
            .zip(&shape[..n_before])
            .chain(after.chars().zip(&shape[shape.len() - n_after..]));
        for (c, d) in dims {
            match seen.iter_mut().find(|(k, _, _)| *k == c) {
                None => seen.push((c, d.clone(), i)),
                Some((_, prev, _)) if *prev == Dim::Known(1) => *prev = d.clone(),
                Some((_, prev, _)) => {
                    if *d != Dim::Known(1) && differ(prev, d) {
                        return fail(
                            ShapeErrorKind::Size,
                            Some(i + 1),
                            format!(
                                "einsum(): subscript {c} has size {d} for operand {i} which does not broadcast with previously seen size {prev}"
                            ),
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

/// `scaled_dot_product_attention(q, k, v)`: `q @ k.transpose(-2, -1)` needs the same last
/// size, and the batch dimensions broadcast.
fn sdpa(inp: &Inputs) -> Check {
    let (Some(q), Some(k)) = (shape_of(inp.get(0, "query")), shape_of(inp.get(1, "key"))) else {
        return Ok(());
    };
    if q.len() < 2 || k.len() < 2 {
        return Ok(());
    }
    let (eq, ek) = (&q[q.len() - 1], &k[k.len() - 1]);
    if differ(eq, ek) {
        return fail(
            ShapeErrorKind::Size,
            Some(1),
            format!(
                "expects query and key with the same last dimension, gets {eq} and {ek} (query {}, key {})",
                fmt_shape(q),
                fmt_shape(k)
            ),
        );
    }
    // With `enable_gqa` (or a flag not known to be False) key and value may have fewer heads
    // than the query: the head dim is not broadcast.
    let gqa = match inp.get(7, "enable_gqa") {
        None => false,
        Some(Meta::Scalar(Scalar::Bool(b), _)) => *b != Some(false),
        Some(_) => true,
    };
    let lead = if gqa { 3 } else { 2 };
    if q.len() < lead || k.len() < lead {
        return Ok(());
    }
    let batch = |s: &Shape| s[..s.len() - lead].to_vec();
    broadcastable(&batch(q), &batch(k)).map_err(|mut e| {
        e.arg = Some(1);
        e
    })
}

/// `F.interpolate(x, size=…, scale_factor=…, mode=…)`: a 3-, 4- or 5-d input, a `size` with
/// one entry per spatial dimension, and the mode's own rank.
fn interpolate(t: &Shape, inp: &Inputs) -> Check {
    if !(3..=5).contains(&t.len()) {
        return fail(
            ShapeErrorKind::Rank,
            Some(0),
            format!(
                "Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D {})",
                t.len(),
                fmt_shape(t)
            ),
        );
    }
    let spatial = t.len() - 2;
    let entries = match inp.get(1, "size") {
        Some(Meta::Seq(size)) => Some(size.len()),
        Some(Meta::Size(size)) => Some(size.len()),
        _ => None,
    };
    if let Some(n) = entries {
        if n != spatial {
            return fail(
                ShapeErrorKind::Size,
                Some(1),
                format!(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of {} and output size of {} entries",
                    fmt_shape(&t[2..]),
                    n
                ),
            );
        }
    }
    if let Some(Meta::Seq(scale)) = inp.get(2, "scale_factor") {
        if scale.len() != spatial {
            return fail(
                ShapeErrorKind::Size,
                Some(2),
                format!(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with spatial dimensions of {} and scale_factor of {} entries",
                    fmt_shape(&t[2..]),
                    scale.len()
                ),
            );
        }
    }
    let needs = match inp.get(3, "mode") {
        Some(Meta::Str(m)) => match m.as_str() {
            "linear" => Some(3),
            "bilinear" | "bicubic" => Some(4),
            "trilinear" => Some(5),
            _ => None,
        },
        _ => None,
    };
    match needs {
        Some(r) if r != t.len() => fail(
            ShapeErrorKind::Rank,
            Some(0),
            format!(
                "Got {}D input, but the mode needs {r}D input ({})",
                t.len(),
                fmt_shape(t)
            ),
        ),
        _ => Ok(()),
    }
}

/// `x.unflatten(dim, sizes)`: the sizes multiply up to the size of `dim` (one may be -1).
fn unflatten(t0: Option<&Shape>, inp: &Inputs) -> Check {
    let (Some(t), Some(dim), Some(sizes)) = (
        t0,
        inp.get(1, "dim").and_then(Meta::as_int),
        inp.get(2, "sizes").and_then(Meta::as_int_list),
    ) else {
        return Ok(());
    };
    let d = wrap(dim, t.len(), Some(1))?;
    let Dim::Known(n) = t[d] else { return Ok(()) };
    let known: i64 = sizes.iter().filter(|&&s| s != -1).product();
    let fits = if sizes.contains(&-1) {
        known != 0 && n % known == 0
    } else {
        known == n
    };
    if !fits {
        return fail(
            ShapeErrorKind::Size,
            Some(2),
            format!(
                "unflatten: Provided sizes {sizes:?} don't multiply up to the size of dim {d} ({n}) in the input tensor"
            ),
        );
    }
    Ok(())
}
