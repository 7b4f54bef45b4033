//! Shape manipulation with PyTorch's argument conventions: negative
//! dimensions count from the end, `-1` infers a size, slices clamp like
//! Python's.
//!
//! Every op returns a fresh row-major tensor. PyTorch's views share storage
//! with their base; the executor has no aliasing, so `view`, `permute`,
//! `expand`, `select` etc. are copies and in-place writes through a view are
//! for the interpreter to model if it needs them.

use ndarray::{Axis, IxDyn, Slice};

use super::util::{contiguous_data, from_vec, normalize_dim, normalize_dims, to_standard};
use super::{KernelError, Result, Tensor};

/// Resolves a shape with at most one `-1` against `numel` elements.
fn infer_shape(op: &'static str, x: &Tensor, shape: &[isize]) -> Result<Vec<usize>> {
    let bad = |reason: String| KernelError::invalid(op, x.shape(), reason);
    let mut infer = None;
    let mut known = 1usize;
    for (i, &s) in shape.iter().enumerate() {
        if s == -1 {
            if infer.replace(i).is_some() {
                return Err(bad(format!(
                    "only one dimension can be inferred in {shape:?}"
                )));
            }
        } else if s < 0 {
            return Err(bad(format!("invalid size {s} in shape {shape:?}")));
        } else {
            known = known
                .checked_mul(s as usize)
                .ok_or_else(|| bad(format!("shape {shape:?} overflows")))?;
        }
    }
    let numel = x.len();
    let mut out: Vec<usize> = shape.iter().map(|&s| s.max(0) as usize).collect();
    match infer {
        Some(i) => {
            if known == 0 || numel % known != 0 {
                return Err(bad(format!(
                    "shape {shape:?} is invalid for input of size {numel}"
                )));
            }
            out[i] = numel / known;
        }
        None if known != numel => {
            return Err(bad(format!(
                "shape {shape:?} is invalid for input of size {numel}"
            )))
        }
        None => {}
    }
    Ok(out)
}

/// Refuses outputs whose element count overflows `usize` (ndarray would
/// panic on such a shape; absurd sizes come from bad user arguments).
fn check_numel(op: &'static str, x: &Tensor, shape: &[usize]) -> Result<()> {
    let mut n = 1usize;
    for &d in shape {
        n = n
            .checked_mul(d)
            .filter(|&n| n <= isize::MAX as usize / std::mem::size_of::<f32>())
            .ok_or_else(|| {
                KernelError::invalid(
                    op,
                    x.shape(),
                    format!("output shape {shape:?} is too large"),
                )
            })?;
    }
    Ok(())
}

/// `x.reshape(shape)`, with at most one `-1`.
pub fn reshape(x: &Tensor, shape: &[isize]) -> Result<Tensor> {
    let out = infer_shape("reshape", x, shape)?;
    from_vec("reshape", &out, contiguous_data(x).into_owned())
}

/// [`reshape`] of a tensor the caller owns: a row-major buffer is kept and only the shape
/// changes, where [`reshape`] of a shared tensor has to copy.
pub fn reshape_owned(x: Tensor, shape: &[isize]) -> Result<Tensor> {
    let out = infer_shape("reshape", &x, shape)?;
    if x.is_standard_layout() {
        return x
            .into_shape_with_order(IxDyn(&out))
            .map_err(|e| KernelError::invalid("reshape", &out, format!("internal: {e}")));
    }
    from_vec("reshape", &out, contiguous_data(&x).into_owned())
}

/// `x.view(shape)`: the same as [`reshape`] here (see the module docs on
/// aliasing), but reported under its own name.
pub fn view(x: &Tensor, shape: &[isize]) -> Result<Tensor> {
    let out = infer_shape("view", x, shape)?;
    from_vec("view", &out, contiguous_data(x).into_owned())
}

/// `x.contiguous()`: a row-major copy.
pub fn contiguous(x: &Tensor) -> Tensor {
    to_standard(x.view())
}

/// `x.permute(dims)`.
pub fn permute(x: &Tensor, dims: &[isize]) -> Result<Tensor> {
    const OP: &str = "permute";
    if dims.len() != x.ndim() {
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            format!(
                "number of dims in {dims:?} does not match the input rank {}",
                x.ndim()
            ),
        ));
    }
    let order = normalize_dims(OP, dims, x.ndim())?;
    Ok(to_standard(x.view().permuted_axes(IxDyn(&order))))
}

/// `x.transpose(d0, d1)`.
pub fn transpose(x: &Tensor, d0: isize, d1: isize) -> Result<Tensor> {
    const OP: &str = "transpose";
    if x.ndim() == 0 {
        normalize_dim(OP, d0, 1)?;
        normalize_dim(OP, d1, 1)?;
        return Ok(x.clone());
    }
    let (a, b) = (
        normalize_dim(OP, d0, x.ndim())?,
        normalize_dim(OP, d1, x.ndim())?,
    );
    let mut v = x.view();
    v.swap_axes(a, b);
    Ok(to_standard(v))
}

/// `x.flatten(start_dim, end_dim)`; a 0-d tensor becomes shape `[1]`.
pub fn flatten(x: &Tensor, start_dim: isize, end_dim: isize) -> Result<Tensor> {
    const OP: &str = "flatten";
    if x.ndim() == 0 {
        normalize_dim(OP, start_dim, 1)?;
        normalize_dim(OP, end_dim, 1)?;
        return from_vec(OP, &[1], contiguous_data(x).into_owned());
    }
    let (s, e) = (
        normalize_dim(OP, start_dim, x.ndim())?,
        normalize_dim(OP, end_dim, x.ndim())?,
    );
    if s > e {
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            format!("start_dim {start_dim} comes after end_dim {end_dim}"),
        ));
    }
    let sh = x.shape();
    let mut out: Vec<usize> = sh[..s].to_vec();
    out.push(sh[s..=e].iter().product());
    out.extend_from_slice(&sh[e + 1..]);
    from_vec(OP, &out, contiguous_data(x).into_owned())
}

/// `x.unsqueeze(dim)`, `dim` in `[-rank-1, rank]`.
pub fn unsqueeze(x: &Tensor, dim: isize) -> Result<Tensor> {
    const OP: &str = "unsqueeze";
    let d = normalize_dim(OP, dim, x.ndim() + 1)?;
    let mut out = x.shape().to_vec();
    out.insert(d, 1);
    from_vec(OP, &out, contiguous_data(x).into_owned())
}

/// `x.squeeze()` (`dims = None`) or `x.squeeze(dims)`: removes the listed
/// dimensions that have size 1 and silently keeps the others, as torch does.
pub fn squeeze(x: &Tensor, dims: Option<&[isize]>) -> Result<Tensor> {
    const OP: &str = "squeeze";
    let rank = x.ndim();
    let chosen: Vec<usize> = match dims {
        None => (0..rank).collect(),
        Some(ds) if rank == 0 => {
            normalize_dims(OP, ds, 1)?;
            vec![]
        }
        Some(ds) => normalize_dims(OP, ds, rank)?,
    };
    let out: Vec<usize> = (0..rank)
        .filter(|d| !(chosen.contains(d) && x.shape()[*d] == 1))
        .map(|d| x.shape()[d])
        .collect();
    from_vec(OP, &out, contiguous_data(x).into_owned())
}

/// `torch.cat(tensors, dim)`. As in torch, 1-D empty tensors (shape `[0]`)
/// are skipped when concatenating higher-rank tensors.
pub fn cat(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
    const OP: &str = "cat";
    let Some(reference) = tensors
        .iter()
        .find(|t| !(t.ndim() == 1 && t.is_empty()))
        .or(tensors.first())
    else {
        return Err(KernelError::invalid(
            OP,
            &[],
            "expected a non-empty list of tensors",
        ));
    };
    if reference.ndim() == 0 {
        return Err(KernelError::invalid(
            OP,
            reference.shape(),
            "zero-dimensional tensors cannot be concatenated",
        ));
    }
    let d = normalize_dim(OP, dim, reference.ndim())?;
    let parts: Vec<&Tensor> = tensors
        .iter()
        .copied()
        .filter(|t| !(t.ndim() == 1 && t.is_empty() && reference.ndim() != 1))
        .collect();
    for t in &parts {
        let same_rank = t.ndim() == reference.ndim();
        let same_other =
            same_rank && (0..t.ndim()).all(|i| i == d || t.shape()[i] == reference.shape()[i]);
        if !same_other {
            return Err(KernelError::shapes(
                OP,
                reference.shape(),
                t.shape(),
                format!("sizes must match except in dimension {d}"),
            ));
        }
    }
    let views: Vec<_> = parts.iter().map(|t| t.view()).collect();
    let out = ndarray::concatenate(Axis(d), &views)
        .map_err(|e| KernelError::invalid(OP, reference.shape(), format!("internal: {e}")))?;
    Ok(to_standard(out.view()))
}

/// `torch.stack(tensors, dim)`: all inputs must share one shape.
pub fn stack(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
    const OP: &str = "stack";
    let Some(first) = tensors.first() else {
        return Err(KernelError::invalid(
            OP,
            &[],
            "expected a non-empty list of tensors",
        ));
    };
    let d = normalize_dim(OP, dim, first.ndim() + 1)?;
    if let Some(t) = tensors.iter().find(|t| t.shape() != first.shape()) {
        return Err(KernelError::shapes(
            OP,
            first.shape(),
            t.shape(),
            "stack expects each tensor to be equal size",
        ));
    }
    let views: Vec<_> = tensors.iter().map(|t| t.view()).collect();
    let out = ndarray::stack(Axis(d), &views)
        .map_err(|e| KernelError::invalid(OP, first.shape(), format!("internal: {e}")))?;
    Ok(to_standard(out.view()))
}

fn pieces(x: &Tensor, d: usize, sizes: &[usize]) -> Vec<Tensor> {
    let mut start = 0usize;
    sizes
        .iter()
        .map(|&len| {
            let v = x.slice_axis(Axis(d), Slice::from(start..start + len));
            start += len;
            to_standard(v)
        })
        .collect()
}

/// `torch.split(x, split_size, dim)`: pieces of `split_size`, the last one
/// possibly smaller.
pub fn split(x: &Tensor, split_size: usize, dim: isize) -> Result<Vec<Tensor>> {
    const OP: &str = "split";
    let d = normalize_dim(OP, dim, x.ndim())?;
    let len = x.shape()[d];
    if split_size == 0 {
        if len == 0 {
            return Ok(vec![x.clone()]);
        }
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            format!(
                "split_size can only be 0 if dimension size is 0, but got dimension size of {len}"
            ),
        ));
    }
    let n = len.div_ceil(split_size).max(1);
    let sizes: Vec<usize> = (0..n)
        .map(|i| split_size.min(len - (i * split_size).min(len)))
        .collect();
    Ok(pieces(x, d, &sizes))
}

/// `torch.split(x, [s0, s1, ...], dim)`: the sizes must add up to the
/// dimension's length.
pub fn split_sizes(x: &Tensor, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
    const OP: &str = "split_with_sizes";
    let d = normalize_dim(OP, dim, x.ndim())?;
    let total = sizes.iter().try_fold(0usize, |acc, &s| acc.checked_add(s));
    if total != Some(x.shape()[d]) {
        let total = total.map_or_else(|| "more than usize::MAX".to_string(), |t| t.to_string());
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            format!(
                "split sizes {sizes:?} sum to {total}, expected {} (the size of dimension {d})",
                x.shape()[d]
            ),
        ));
    }
    Ok(pieces(x, d, sizes))
}

/// `torch.chunk(x, chunks, dim)`: pieces of `ceil(len / chunks)`, so fewer
/// than `chunks` pieces may come back (e.g. 6 into 4 gives 3 of size 2).
pub fn chunk(x: &Tensor, chunks: usize, dim: isize) -> Result<Vec<Tensor>> {
    const OP: &str = "chunk";
    if chunks == 0 {
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            "chunk expects `chunks` to be greater than 0",
        ));
    }
    let d = normalize_dim(OP, dim, x.ndim())?;
    let len = x.shape()[d];
    if len == 0 {
        // torch returns `chunks` empty pieces here rather than one; an
        // absurd count must fail as an error, not as an allocation abort.
        let mut out = Vec::new();
        out.try_reserve_exact(chunks).map_err(|_| {
            KernelError::invalid(OP, x.shape(), format!("cannot return {chunks} chunks"))
        })?;
        out.resize(chunks, x.clone());
        return Ok(out);
    }
    split(x, len.div_ceil(chunks), dim)
}

/// `x.expand(sizes)`: `-1` keeps a size, size-1 dimensions stretch, and new
/// leading dimensions may be added. The result is materialised.
pub fn expand(x: &Tensor, sizes: &[isize]) -> Result<Tensor> {
    const OP: &str = "expand";
    let rank = x.ndim();
    if sizes.len() < rank {
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            format!("the number of sizes provided ({}) must be at least the number of dimensions ({rank})", sizes.len()),
        ));
    }
    let lead = sizes.len() - rank;
    let mut out = Vec::with_capacity(sizes.len());
    for (i, &s) in sizes.iter().enumerate() {
        let target = if i < lead {
            if s < 0 {
                return Err(KernelError::invalid(
                    OP,
                    x.shape(),
                    format!("size {s} is not allowed for a new leading dimension"),
                ));
            }
            s as usize
        } else {
            let cur = x.shape()[i - lead];
            match s {
                -1 => cur,
                s if s < 0 => {
                    return Err(KernelError::invalid(
                        OP,
                        x.shape(),
                        format!("invalid size {s}"),
                    ))
                }
                s if s as usize == cur || cur == 1 => s as usize,
                s => {
                    return Err(KernelError::invalid(
                        OP,
                        x.shape(),
                        format!("size {cur} of dimension {} cannot expand to {s}", i - lead),
                    ))
                }
            }
        };
        out.push(target);
    }
    check_numel(OP, x, &out)?;
    let v = x
        .broadcast(IxDyn(&out))
        .ok_or_else(|| KernelError::invalid(OP, x.shape(), format!("cannot expand to {out:?}")))?;
    Ok(to_standard(v))
}

/// One dimension of a Python slice `start:stop:step`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SliceSpec {
    pub start: Option<isize>,
    pub stop: Option<isize>,
    pub step: isize,
}

impl SliceSpec {
    /// `start:stop:step`.
    pub fn new(start: Option<isize>, stop: Option<isize>, step: isize) -> Self {
        SliceSpec { start, stop, step }
    }
    /// `:`.
    pub fn full() -> Self {
        SliceSpec {
            start: None,
            stop: None,
            step: 1,
        }
    }

    /// Python's clamping of negative and out-of-range bounds against `len`;
    /// an empty range comes back as `start == end`.
    fn resolve(&self, len: usize) -> (usize, usize) {
        let l = len as isize;
        let clamp = |v: isize| if v < 0 { (v + l).max(0) } else { v.min(l) };
        let start = self.start.map_or(0, clamp);
        let end = self.stop.map_or(l, clamp);
        (start as usize, end.max(start) as usize)
    }
}

/// `x[s0, s1, ...]` for slices on the leading dimensions; the remaining
/// dimensions are kept whole. Negative steps are refused, as in torch.
pub fn slice(x: &Tensor, specs: &[SliceSpec]) -> Result<Tensor> {
    const OP: &str = "slice";
    if specs.len() > x.ndim() {
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            format!("too many indices ({}) for the tensor", specs.len()),
        ));
    }
    if let Some(s) = specs.iter().find(|s| s.step <= 0) {
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            format!("slice step must be positive, got {}", s.step),
        ));
    }
    let v = x.slice_each_axis(|ad| {
        let i = ad.axis.index();
        match specs.get(i) {
            Some(s) => {
                let (start, end) = s.resolve(ad.len);
                Slice::new(start as isize, Some(end as isize), s.step)
            }
            None => Slice::from(..),
        }
    });
    Ok(to_standard(v))
}

/// `aten::slice(x, dim, start, end, step)`: a slice on one dimension.
pub fn slice_dim(
    x: &Tensor,
    dim: isize,
    start: Option<isize>,
    stop: Option<isize>,
    step: isize,
) -> Result<Tensor> {
    const OP: &str = "slice";
    let d = normalize_dim(OP, dim, x.ndim())?;
    let mut specs = vec![SliceSpec::full(); d + 1];
    specs[d] = SliceSpec::new(start, stop, step);
    slice(x, &specs)
}

/// `x.select(dim, index)` / `x[..., index, ...]`: removes the dimension.
pub fn select(x: &Tensor, dim: isize, index: isize) -> Result<Tensor> {
    const OP: &str = "select";
    let d = normalize_dim(OP, dim, x.ndim())?;
    let len = x.shape()[d];
    let i = if index < 0 {
        index + len as isize
    } else {
        index
    };
    if i < 0 || i >= len as isize {
        return Err(KernelError::IndexOutOfRange {
            op: OP,
            index: index as i64,
            size: len,
        });
    }
    Ok(to_standard(x.index_axis(Axis(d), i as usize)))
}

/// `x.narrow(dim, start, length)`; `start` may be negative.
pub fn narrow(x: &Tensor, dim: isize, start: isize, length: usize) -> Result<Tensor> {
    const OP: &str = "narrow";
    let d = normalize_dim(OP, dim, x.ndim())?;
    let len = x.shape()[d];
    let s = if start < 0 {
        start + len as isize
    } else {
        start
    };
    if s < 0 || s > len as isize {
        return Err(KernelError::IndexOutOfRange {
            op: OP,
            index: start as i64,
            size: len,
        });
    }
    let s = s as usize;
    if s.checked_add(length).is_none_or(|end| end > len) {
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            format!("start ({s}) + length ({length}) exceeds dimension size ({len})"),
        ));
    }
    Ok(to_standard(
        x.slice_axis(Axis(d), Slice::from(s..s + length)),
    ))
}

/// `x.repeat(repeats)`: tiles the tensor; extra leading repeats add
/// dimensions.
pub fn repeat(x: &Tensor, repeats: &[usize]) -> Result<Tensor> {
    const OP: &str = "repeat";
    if repeats.len() < x.ndim() {
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            format!(
                "number of repeat dims ({}) can not be smaller than the number of tensor dims ({})",
                repeats.len(),
                x.ndim()
            ),
        ));
    }
    let lead = repeats.len() - x.ndim();
    let padded: Vec<usize> = std::iter::repeat_n(1, lead)
        .chain(x.shape().iter().copied())
        .collect();
    // View x as (1, s0, 1, s1, ...), broadcast to (r0, s0, r1, s1, ...),
    // and merge each pair: one bulk copy instead of per-element indexing.
    let interleaved: Vec<usize> = padded.iter().flat_map(|&s| [1, s]).collect();
    let target: Vec<usize> = padded
        .iter()
        .zip(repeats)
        .flat_map(|(&s, &r)| [r, s])
        .collect();
    let base = from_vec(OP, &interleaved, contiguous_data(x).into_owned())?;
    let b = base
        .broadcast(IxDyn(&target))
        .ok_or_else(|| KernelError::invalid(OP, x.shape(), "internal broadcast failure"))?;
    let out_shape: Vec<usize> = padded
        .iter()
        .zip(repeats)
        .map(|(&s, &r)| s.saturating_mul(r))
        .collect();
    check_numel(OP, x, &out_shape)?;
    let data: Vec<f32> = b.iter().copied().collect();
    from_vec(OP, &out_shape, data)
}

/// `F.pad(x, pads, mode="constant", value)`: `pads` lists (before, after)
/// pairs starting from the last dimension. Negative pads crop.
pub fn pad(x: &Tensor, pads: &[isize], value: f32) -> Result<Tensor> {
    const OP: &str = "pad";
    if pads.len() % 2 != 0 || pads.len() / 2 > x.ndim() {
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            format!(
                "padding length {} must be even and at most twice the rank",
                pads.len()
            ),
        ));
    }
    let rank = x.ndim();
    let mut before = vec![0isize; rank];
    let mut after = vec![0isize; rank];
    for (i, pair) in pads.chunks_exact(2).enumerate() {
        before[rank - 1 - i] = pair[0];
        after[rank - 1 - i] = pair[1];
    }
    let mut out_shape = Vec::with_capacity(rank);
    for d in 0..rank {
        let n = x.shape()[d] as isize + before[d] + after[d];
        if n < 0 {
            return Err(KernelError::invalid(
                OP,
                x.shape(),
                format!(
                    "padding ({}, {}) of dimension {d} gives a negative size {n}",
                    before[d], after[d]
                ),
            ));
        }
        out_shape.push(n as usize);
    }
    check_numel(OP, x, &out_shape)?;
    let mut out = Tensor::from_elem(IxDyn(&out_shape), value);
    // Input index i lands at output index i + before; copy the indices for
    // which both are in range (crops can remove more than the input holds).
    let src: Vec<(isize, isize)> = (0..rank)
        .map(|d| {
            (
                (-before[d]).max(0),
                (x.shape()[d] as isize).min(out_shape[d] as isize - before[d]),
            )
        })
        .collect();
    if src.iter().all(|(lo, hi)| lo < hi) {
        let from = x.slice_each_axis(|ad| {
            let (lo, hi) = src[ad.axis.index()];
            Slice::new(lo, Some(hi), 1)
        });
        out.slice_each_axis_mut(|ad| {
            let d = ad.axis.index();
            let (lo, hi) = src[d];
            Slice::new(lo + before[d], Some(hi + before[d]), 1)
        })
        .assign(&from);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testutil::{
        arange, assert_close_pointwise as assert_close, t, Fixture,
    };

    fn vals(x: &Tensor) -> Vec<f32> {
        x.iter().copied().collect()
    }

    #[test]
    fn reshape_view_and_inference() {
        let x = arange(&[2, 3, 4]);
        assert_eq!(reshape(&x, &[4, -1]).unwrap().shape(), &[4, 6]);
        assert_eq!(view(&x, &[-1]).unwrap().shape(), &[24]);
        assert!(reshape(&x, &[-1, -1]).is_err());
        assert!(reshape(&x, &[5, -1]).is_err());
        assert!(reshape(&x, &[7]).is_err());
        assert!(reshape(&x, &[-2, 12]).is_err());
        assert!(reshape(&Tensor::zeros(IxDyn(&[0, 3])), &[-1, 0]).is_err());
        assert_eq!(
            reshape(&t(&[1], &[5.0]), &[]).unwrap().shape(),
            &[] as &[usize]
        );
        // A transposed input reshapes in its logical (row-major) order.
        let xt = transpose(&arange(&[2, 3]), 0, 1).unwrap();
        assert_eq!(
            vals(&reshape(&xt, &[-1]).unwrap()),
            vec![0., 3., 1., 4., 2., 5.]
        );
    }

    #[test]
    fn permute_transpose_flatten_squeeze() {
        let x = arange(&[2, 3, 4]);
        let p = permute(&x, &[2, 0, 1]).unwrap();
        assert_eq!(p.shape(), &[4, 2, 3]);
        assert_eq!(p[[3, 1, 2]], x[[1, 2, 3]]);
        assert!(p.is_standard_layout());
        assert!(permute(&x, &[0, 0, 1]).is_err());
        assert!(permute(&x, &[0, 1]).is_err());
        assert_eq!(transpose(&x, -1, 0).unwrap().shape(), &[4, 3, 2]);
        assert_eq!(flatten(&x, 1, -1).unwrap().shape(), &[2, 12]);
        assert_eq!(flatten(&t(&[], &[1.0]), 0, -1).unwrap().shape(), &[1]);
        assert!(flatten(&x, 2, 1).is_err());
        let u = unsqueeze(&x, -1).unwrap();
        assert_eq!(u.shape(), &[2, 3, 4, 1]);
        assert_eq!(unsqueeze(&x, 0).unwrap().shape(), &[1, 2, 3, 4]);
        assert!(unsqueeze(&x, 3).is_ok() && unsqueeze(&x, -4).is_ok());
        assert!(unsqueeze(&x, 4).is_err() && unsqueeze(&x, -5).is_err());
        let s = arange(&[1, 3, 1]);
        assert_eq!(squeeze(&s, None).unwrap().shape(), &[3]);
        assert_eq!(squeeze(&s, Some(&[1])).unwrap().shape(), &[1, 3, 1]);
        assert_eq!(squeeze(&s, Some(&[-1, 0])).unwrap().shape(), &[3]);
    }

    #[test]
    fn cat_stack_and_errors() {
        let a = arange(&[2, 3]);
        let b = arange(&[1, 3]);
        let c = cat(&[&a, &b], 0).unwrap();
        assert_eq!(c.shape(), &[3, 3]);
        assert_eq!(vals(&c)[6..], [0., 1., 2.]);
        let skipped = cat(&[&Tensor::zeros(IxDyn(&[0])), &a], 0).unwrap();
        assert_eq!(skipped, a);
        let e = cat(&[&a, &arange(&[2, 4])], 0).unwrap_err();
        assert_eq!(
            e,
            KernelError::shapes(
                "cat",
                &[2, 3],
                &[2, 4],
                "sizes must match except in dimension 0"
            )
        );
        assert!(cat(&[], 0).is_err());
        let s = stack(&[&a, &a], -1).unwrap();
        assert_eq!(s.shape(), &[2, 3, 2]);
        assert!(stack(&[&a, &b], 0).is_err());
    }

    #[test]
    fn split_chunk_follow_torch_counts() {
        let x = arange(&[6, 2]);
        let c = chunk(&x, 4, 0).unwrap();
        assert_eq!(
            c.iter().map(|p| p.shape()[0]).collect::<Vec<_>>(),
            vec![2, 2, 2]
        );
        let c = chunk(&arange(&[5]), 4, 0).unwrap();
        assert_eq!(c.iter().map(|p| p.len()).collect::<Vec<_>>(), vec![2, 2, 1]);
        assert_eq!(chunk(&Tensor::zeros(IxDyn(&[0])), 3, 0).unwrap().len(), 3);
        let s = split(&arange(&[7]), 3, 0).unwrap();
        assert_eq!(s.iter().map(|p| p.len()).collect::<Vec<_>>(), vec![3, 3, 1]);
        assert!(split(&arange(&[3]), 0, 0).is_err());
        let s = split_sizes(&x, &[1, 5], 0).unwrap();
        assert_eq!(s[1].shape(), &[5, 2]);
        assert!(split_sizes(&x, &[1, 4], 0).is_err());
        assert!(chunk(&x, 0, 0).is_err());
    }

    #[test]
    fn slicing_clamps_like_python() {
        let x = arange(&[10]);
        let s = |a, b, c| vals(&slice(&x, &[SliceSpec::new(a, b, c)]).unwrap());
        assert_eq!(s(Some(-3), None, 1), vec![7., 8., 9.]);
        assert_eq!(s(Some(2), Some(100), 3), vec![2., 5., 8.]);
        assert_eq!(s(Some(-100), Some(2), 1), vec![0., 1.]);
        assert_eq!(s(Some(5), Some(1), 1), Vec::<f32>::new());
        assert_eq!(s(None, Some(-8), 1), vec![0., 1.]);
        assert!(slice(&x, &[SliceSpec::new(None, None, -1)]).is_err());
        assert!(slice(&x, &[SliceSpec::full(), SliceSpec::full()]).is_err());
        let m = arange(&[3, 4]);
        assert_eq!(
            vals(&slice_dim(&m, 1, Some(1), None, 2).unwrap()),
            vec![1., 3., 5., 7., 9., 11.]
        );
    }

    #[test]
    fn select_narrow_expand_repeat_pad() {
        let x = arange(&[2, 3]);
        assert_eq!(vals(&select(&x, 1, -1).unwrap()), vec![2., 5.]);
        assert_eq!(
            select(&x, 0, 2).unwrap_err(),
            KernelError::IndexOutOfRange {
                op: "select",
                index: 2,
                size: 2
            }
        );
        assert_eq!(vals(&narrow(&x, 1, -2, 2).unwrap()), vec![1., 2., 4., 5.]);
        assert!(narrow(&x, 1, 2, 2).is_err());
        let e = expand(&t(&[3, 1], &[1., 2., 3.]), &[2, -1, 4]).unwrap();
        assert_eq!(e.shape(), &[2, 3, 4]);
        assert_eq!(e[[1, 2, 3]], 3.0);
        assert!(expand(&x, &[2, 4]).is_err());
        assert!(expand(&x, &[-1, 2, 3]).is_err());
        let r = repeat(&t(&[2], &[1., 2.]), &[2, 3]).unwrap();
        assert_eq!(r.shape(), &[2, 6]);
        assert_eq!(
            vals(&r),
            vec![1., 2., 1., 2., 1., 2., 1., 2., 1., 2., 1., 2.]
        );
        assert!(repeat(&x, &[2]).is_err());
        let p = pad(&t(&[1, 2], &[1., 2.]), &[1, 2], 9.0).unwrap();
        assert_eq!(vals(&p), vec![9., 1., 2., 9., 9.]);
        let c = pad(&x, &[-1, 0, 0, 1], 0.0).unwrap();
        assert_eq!(c.shape(), &[3, 2]);
        assert_eq!(vals(&c), vec![1., 2., 4., 5., 0., 0.]);
        assert!(pad(&x, &[1], 0.0).is_err());
        assert!(pad(&x, &[-2, -2], 0.0).is_err());
    }

    #[test]
    fn against_torch() {
        let fx = Fixture::load(include_str!(
            "../../../tests/fixtures/kernels/shape_ops.json"
        ));
        let c = fx.case("permute");
        assert_close(
            "permute",
            &permute(&c.input("x"), &c.isizes("dims")).unwrap(),
            &c.expected(),
            0.0,
        );
        let c = fx.case("slice");
        let specs: Vec<SliceSpec> = c
            .param("specs")
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                SliceSpec::new(
                    s[0].as_i64().map(|v| v as isize),
                    s[1].as_i64().map(|v| v as isize),
                    s[2].as_i64().unwrap_or(1) as isize,
                )
            })
            .collect();
        assert_close(
            "slice",
            &slice(&c.input("x"), &specs).unwrap(),
            &c.expected(),
            0.0,
        );
        let c = fx.case("pad");
        assert_close(
            "pad",
            &pad(&c.input("x"), &c.isizes("pads"), c.f32("value")).unwrap(),
            &c.expected(),
            0.0,
        );
        let c = fx.case("repeat");
        assert_close(
            "repeat",
            &repeat(&c.input("x"), &c.usizes("repeats")).unwrap(),
            &c.expected(),
            0.0,
        );
        let c = fx.case("expand");
        assert_close(
            "expand",
            &expand(&c.input("x"), &c.isizes("sizes")).unwrap(),
            &c.expected(),
            0.0,
        );
        let c = fx.case("chunk");
        let got = chunk(&c.input("x"), c.usize("chunks"), c.isize("dim")).unwrap();
        let want = c.expected_list();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_close("chunk", g, w, 0.0);
        }
        let c = fx.case("cat");
        let y = cat(&[&c.input("a"), &c.input("b")], c.isize("dim")).unwrap();
        assert_close("cat", &y, &c.expected(), 0.0);
    }
}
