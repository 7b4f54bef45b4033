//! Small helpers shared by the kernel families.

use std::borrow::Cow;

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use super::{KernelError, Result, Tensor};

/// Maps a PyTorch-style dimension (negative counts from the end) into `0..rank`.
pub(crate) fn normalize_dim(op: &'static str, dim: isize, rank: usize) -> Result<usize> {
    let r = rank as isize;
    let d = if dim < 0 { dim + r } else { dim };
    if d < 0 || d >= r {
        return Err(KernelError::DimOutOfRange { op, dim, rank });
    }
    Ok(d as usize)
}

/// Like [`normalize_dim`] for a list, rejecting repeats as PyTorch does.
pub(crate) fn normalize_dims(op: &'static str, dims: &[isize], rank: usize) -> Result<Vec<usize>> {
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        let n = normalize_dim(op, d, rank)?;
        if seen[n] {
            return Err(KernelError::invalid(
                op,
                &[],
                format!("dimension {d} appears more than once"),
            ));
        }
        seen[n] = true;
        out.push(n);
    }
    Ok(out)
}

/// Row-major data of `x`, borrowed when it already is row-major.
///
/// Hot loops work on plain slices so that the compiler can vectorise them;
/// this is the one place where a strided input gets copied for that.
pub(crate) fn contiguous_data(x: &Tensor) -> Cow<'_, [f32]> {
    match x.as_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(x.iter().copied().collect()),
    }
}

/// Builds a tensor from row-major data whose length is known to match.
pub(crate) fn from_vec(op: &'static str, shape: &[usize], data: Vec<f32>) -> Result<Tensor> {
    let len = data.len();
    ArrayD::from_shape_vec(IxDyn(shape), data).map_err(|e| {
        KernelError::invalid(
            op,
            shape,
            format!("internal: {len} elements do not fill the shape ({e})"),
        )
    })
}

/// Owned row-major copy of a view, whatever its strides.
pub(crate) fn to_standard(view: ArrayViewD<'_, f32>) -> Tensor {
    view.as_standard_layout().into_owned()
}

/// Validates an optional per-channel parameter such as a norm's weight.
pub(crate) fn check_vector(
    op: &'static str,
    what: &str,
    t: Option<&Tensor>,
    len: usize,
    x_shape: &[usize],
) -> Result<()> {
    if let Some(t) = t {
        if t.ndim() != 1 || t.len() != len {
            return Err(KernelError::shapes(
                op,
                x_shape,
                t.shape(),
                format!("{what} must be 1-D with {len} elements"),
            ));
        }
    }
    Ok(())
}
