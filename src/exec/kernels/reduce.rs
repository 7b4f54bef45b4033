//! Reductions over a set of dimensions: sum, mean, prod, amax, amin, var,
//! std, and argmax/argmin over one dimension.
//!
//! An empty `dims` list reduces over every dimension, as `torch.sum(x,
//! dim=[])` and `torch.amax(x, dim=())` do. Sums are accumulated in f64 and
//! the variance uses two passes, so long reductions keep f32 accuracy.
//!
//! The reduced dimensions are moved to the end and the tensor is made
//! row-major once, so every output element reduces one contiguous run.

use ndarray::IxDyn;

use super::util::{from_vec, normalize_dim, normalize_dims};
use super::{IndexTensor, KernelError, Result, Tensor};

/// Row-major data laid out as `(kept, reduced)` plus the output shape.
struct Rows {
    data: Vec<f32>,
    reduced: usize,
    out_shape: Vec<usize>,
}

fn to_rows(op: &'static str, x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Rows> {
    let rank = x.ndim();
    let mut red = if dims.is_empty() {
        (0..rank).collect()
    } else {
        normalize_dims(op, dims, rank)?
    };
    red.sort_unstable();
    let kept: Vec<usize> = (0..rank).filter(|d| !red.contains(d)).collect();
    let reduced: usize = red.iter().map(|&d| x.shape()[d]).product();
    let out_shape: Vec<usize> = if keepdim {
        (0..rank)
            .map(|d| if red.contains(&d) { 1 } else { x.shape()[d] })
            .collect()
    } else {
        kept.iter().map(|&d| x.shape()[d]).collect()
    };
    let order: Vec<usize> = kept.iter().chain(red.iter()).copied().collect();
    let permuted = x.view().permuted_axes(IxDyn(&order));
    let data = permuted.as_standard_layout().iter().copied().collect();
    Ok(Rows {
        data,
        reduced,
        out_shape,
    })
}

fn reduce_with(
    op: &'static str,
    x: &Tensor,
    dims: &[isize],
    keepdim: bool,
    f: impl Fn(&[f32]) -> f32,
) -> Result<Tensor> {
    let rows = to_rows(op, x, dims, keepdim)?;
    let n_out: usize = rows.out_shape.iter().product();
    let out: Vec<f32> = if rows.reduced == 0 {
        vec![f(&[]); n_out]
    } else {
        rows.data.chunks_exact(rows.reduced).map(&f).collect()
    };
    from_vec(op, &rows.out_shape, out)
}

fn sum64(xs: &[f32]) -> f64 {
    xs.iter().map(|&v| v as f64).sum()
}

/// `torch.sum(x, dims, keepdim)`.
pub fn sum(x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
    reduce_with("sum", x, dims, keepdim, |r| sum64(r) as f32)
}

/// `torch.mean(x, dims, keepdim)`; NaN for an empty reduction, like torch.
pub fn mean(x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
    reduce_with("mean", x, dims, keepdim, |r| {
        (sum64(r) / r.len() as f64) as f32
    })
}

/// `torch.prod` over several dims (torch itself takes one dim at a time).
pub fn prod(x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
    reduce_with("prod", x, dims, keepdim, |r| {
        r.iter().map(|&v| v as f64).product::<f64>() as f32
    })
}

fn check_nonempty(op: &'static str, x: &Tensor, dims: &[isize]) -> Result<()> {
    let rank = x.ndim();
    let red = if dims.is_empty() {
        (0..rank).collect()
    } else {
        normalize_dims(op, dims, rank)?
    };
    if let Some(&d) = red.iter().find(|&&d| x.shape()[d] == 0) {
        return Err(KernelError::invalid(
            op,
            x.shape(),
            format!("expected reduction dim {d} to have non-zero size"),
        ));
    }
    Ok(())
}

/// `torch.amax(x, dims, keepdim)`; NaN propagates.
pub fn amax(x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
    check_nonempty("amax", x, dims)?;
    reduce_with("amax", x, dims, keepdim, |r| {
        r.iter().copied().fold(f32::NEG_INFINITY, |m, v| {
            if v.is_nan() || m.is_nan() {
                f32::NAN
            } else {
                m.max(v)
            }
        })
    })
}

/// `torch.amin(x, dims, keepdim)`; NaN propagates.
pub fn amin(x: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
    check_nonempty("amin", x, dims)?;
    reduce_with("amin", x, dims, keepdim, |r| {
        r.iter().copied().fold(f32::INFINITY, |m, v| {
            if v.is_nan() || m.is_nan() {
                f32::NAN
            } else {
                m.min(v)
            }
        })
    })
}

/// `torch.var(x, dims, correction=, keepdim)`: divides by `N - correction`
/// (clamped at 0, which yields NaN or inf as in torch).
pub fn var_correction(
    x: &Tensor,
    dims: &[isize],
    correction: f64,
    keepdim: bool,
) -> Result<Tensor> {
    reduce_with("var", x, dims, keepdim, |r| var64(r, correction) as f32)
}

fn var64(r: &[f32], correction: f64) -> f64 {
    let n = r.len() as f64;
    let mean = sum64(r) / n;
    let ss: f64 = r.iter().map(|&v| (v as f64 - mean).powi(2)).sum();
    ss / (n - correction).max(0.0)
}

/// `torch.var(x, dims, unbiased=, keepdim)`.
pub fn var(x: &Tensor, dims: &[isize], unbiased: bool, keepdim: bool) -> Result<Tensor> {
    var_correction(x, dims, if unbiased { 1.0 } else { 0.0 }, keepdim)
}

/// `torch.std(x, dims, unbiased=, keepdim)`.
pub fn std(x: &Tensor, dims: &[isize], unbiased: bool, keepdim: bool) -> Result<Tensor> {
    let c = if unbiased { 1.0 } else { 0.0 };
    reduce_with("std", x, dims, keepdim, |r| var64(r, c).sqrt() as f32)
}

#[derive(Clone, Copy)]
enum Arg {
    Max,
    Min,
}

fn arg_reduce(
    op: &'static str,
    x: &Tensor,
    dim: Option<isize>,
    keepdim: bool,
    which: Arg,
) -> Result<IndexTensor> {
    let (rows, out_shape) = match dim {
        None => {
            if x.is_empty() {
                return Err(KernelError::invalid(
                    op,
                    x.shape(),
                    "expected a non-empty tensor when no dim is given",
                ));
            }
            let shape = if keepdim { vec![1; x.ndim()] } else { vec![] };
            let data: Vec<f32> = x.iter().copied().collect();
            let n = data.len();
            (
                Rows {
                    data,
                    reduced: n,
                    out_shape: shape.clone(),
                },
                shape,
            )
        }
        Some(d) => {
            let dn = normalize_dim(op, d, x.ndim().max(1))?;
            if x.ndim() > 0 && x.shape()[dn] == 0 {
                return Err(KernelError::invalid(
                    op,
                    x.shape(),
                    format!("expected reduction dim {dn} to have non-zero size"),
                ));
            }
            let dims: Vec<isize> = if x.ndim() == 0 {
                vec![]
            } else {
                vec![dn as isize]
            };
            let rows = to_rows(op, x, &dims, keepdim)?;
            let shape = rows.out_shape.clone();
            (rows, shape)
        }
    };
    let n_out: usize = out_shape.iter().product();
    let out: Vec<i64> = if rows.reduced == 0 {
        vec![0; n_out]
    } else {
        rows.data
            .chunks_exact(rows.reduced)
            .map(|r| {
                // First extreme wins ties; the first NaN beats everything.
                let mut best = 0usize;
                for (i, &v) in r.iter().enumerate() {
                    let b = r[best];
                    if b.is_nan() {
                        break;
                    }
                    let better = match which {
                        Arg::Max => v > b,
                        Arg::Min => v < b,
                    };
                    if v.is_nan() || better {
                        best = i;
                    }
                }
                best as i64
            })
            .collect()
    };
    IndexTensor::from_shape_vec(IxDyn(&out_shape), out)
        .map_err(|e| KernelError::invalid(op, x.shape(), format!("internal: {e}")))
}

/// `torch.argmax(x, dim, keepdim)`; `dim = None` searches the flattened
/// tensor. Ties go to the first index and NaN counts as the maximum.
pub fn argmax(x: &Tensor, dim: Option<isize>, keepdim: bool) -> Result<IndexTensor> {
    arg_reduce("argmax", x, dim, keepdim, Arg::Max)
}

/// `torch.argmin(x, dim, keepdim)`, with the same conventions as [`argmax`].
pub fn argmin(x: &Tensor, dim: Option<isize>, keepdim: bool) -> Result<IndexTensor> {
    arg_reduce("argmin", x, dim, keepdim, Arg::Min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testutil::{arange, assert_close, t, Fixture};

    #[test]
    fn hand_checked() {
        let x = arange(&[2, 3]);
        assert_eq!(sum(&x, &[1], false).unwrap(), t(&[2], &[3.0, 12.0]));
        assert_eq!(sum(&x, &[0], true).unwrap(), t(&[1, 3], &[3.0, 5.0, 7.0]));
        assert_eq!(sum(&x, &[], false).unwrap(), t(&[], &[15.0]));
        assert_eq!(mean(&x, &[-1, 0], false).unwrap(), t(&[], &[2.5]));
        assert_eq!(amax(&x, &[0], false).unwrap(), t(&[3], &[3.0, 4.0, 5.0]));
        assert_eq!(amin(&x, &[1], true).unwrap(), t(&[2, 1], &[0.0, 3.0]));
        assert_eq!(var(&x, &[1], true, false).unwrap(), t(&[2], &[1.0, 1.0]));
        assert_eq!(
            var(&x, &[1], false, false).unwrap(),
            t(&[2], &[2.0 / 3.0, 2.0 / 3.0])
        );
        assert_eq!(
            prod(&t(&[3], &[2.0, 3.0, 4.0]), &[0], false).unwrap(),
            t(&[], &[24.0])
        );
        assert_eq!(
            argmax(&x, Some(1), false)
                .unwrap()
                .into_raw_vec_and_offset()
                .0,
            vec![2, 2]
        );
        assert_eq!(argmax(&x, None, true).unwrap().shape(), &[1, 1]);
        assert_eq!(argmin(&x, None, false).unwrap()[[]], 0);
    }

    #[test]
    fn edge_cases_follow_torch() {
        let empty = Tensor::zeros(IxDyn(&[0, 3]));
        assert_eq!(sum(&empty, &[0], false).unwrap(), t(&[3], &[0.0; 3]));
        assert!(mean(&empty, &[0], false)
            .unwrap()
            .iter()
            .all(|v| v.is_nan()));
        assert!(amax(&empty, &[0], false).is_err());
        assert_eq!(amax(&empty, &[1], false).unwrap().shape(), &[0]);
        assert!(argmax(&empty, Some(0), false).is_err());
        assert!(var(&t(&[1], &[1.0]), &[0], true, false).unwrap()[[]].is_nan());
        let with_nan = t(&[1, 3], &[1.0, f32::NAN, 3.0]);
        assert_eq!(argmax(&with_nan, Some(1), false).unwrap()[[0]], 1);
        assert!(amax(&with_nan, &[1], false).unwrap()[[0]].is_nan());
        let ties = t(&[4], &[1.0, 5.0, 5.0, 0.0]);
        assert_eq!(argmax(&ties, Some(0), false).unwrap()[[]], 1);
        assert!(sum(&arange(&[2, 3]), &[0, 0], false).is_err());
        assert!(matches!(
            sum(&arange(&[2, 3]), &[2], false),
            Err(KernelError::DimOutOfRange { .. })
        ));
    }

    #[test]
    fn against_torch() {
        let fx = Fixture::load(include_str!("../../../tests/fixtures/kernels/reduce.json"));
        for case in fx.cases_with_prefix("reduce/") {
            let x = case.input("x");
            let dims = case.isizes("dims");
            let keepdim = case.bool("keepdim");
            let op = case.param("op").as_str().unwrap_or_default().to_string();
            let y = match op.as_str() {
                "sum" => sum(&x, &dims, keepdim),
                "mean" => mean(&x, &dims, keepdim),
                "amax" => amax(&x, &dims, keepdim),
                "amin" => amin(&x, &dims, keepdim),
                "var_unbiased" => var(&x, &dims, true, keepdim),
                "var_biased" => var(&x, &dims, false, keepdim),
                "std" => std(&x, &dims, true, keepdim),
                other => panic!("unknown op {other}"),
            }
            .unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
        for case in fx.cases_with_prefix("argmax/") {
            let dim = case.param_opt("dim").map(|_| case.isize("dim"));
            let y = argmax(&case.input("x"), dim, case.bool("keepdim")).unwrap();
            assert_eq!(y, case.expected_i64(), "{}", case.name);
        }
    }
}
