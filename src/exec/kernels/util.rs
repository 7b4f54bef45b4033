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
        None => Cow::Owned(strided_copy(x.view())),
    }
}

/// The elements of `view` in row-major order. ndarray's own iterator over a dynamic-rank
/// view steps a multi-index per element, which costs more than the copy itself on the
/// transposed heads of attention; this walks the last axis as a plain strided loop and
/// steps the outer index once per row.
fn strided_copy(view: ArrayViewD<'_, f32>) -> Vec<f32> {
    let len = view.len();
    let mut out = Vec::with_capacity(len);
    if len == 0 {
        return out;
    }
    if view.ndim() == 0 {
        out.push(view[IxDyn(&[])]);
        return out;
    }
    let shape = view.shape();
    let strides = view.strides();
    let last = shape.len() - 1;
    let (row_len, row_stride) = (shape[last], strides[last]);
    let base = view.as_ptr();
    let mut index = vec![0usize; last];
    let mut offset = 0isize;
    loop {
        // SAFETY: `offset` is the element offset of `index` (kept in step below), and every
        // element of the row it starts lies inside the view, so each pointer is in bounds.
        unsafe {
            let row = base.offset(offset);
            if row_stride == 1 {
                out.extend_from_slice(std::slice::from_raw_parts(row, row_len));
            } else {
                out.extend((0..row_len as isize).map(|j| *row.offset(j * row_stride)));
            }
        }
        let mut d = last;
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            index[d] += 1;
            offset += strides[d];
            if index[d] < shape[d] {
                break;
            }
            offset -= strides[d] * shape[d] as isize;
            index[d] = 0;
        }
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
    if view.is_standard_layout() {
        return view.to_owned();
    }
    let shape = view.shape().to_vec();
    ArrayD::from_shape_vec(IxDyn(&shape), strided_copy(view))
        .expect("a row-major copy fills its shape")
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
