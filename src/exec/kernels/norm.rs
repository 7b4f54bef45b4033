//! Normalisation layers in inference form: batch_norm with running
//! statistics, layer_norm, group_norm, instance_norm and rms_norm.
//!
//! Statistics are accumulated in f64 (two passes for the variance): layer
//! and group norms reduce over thousands of elements, where an f32 running
//! sum drifts well past the 1e-5 relative error the executor aims for.

use std::borrow::Cow;

use rayon::prelude::*;

use super::util::{check_vector, contiguous_data, from_vec};
use super::{KernelError, Result, Tensor};

/// `F.batch_norm(x, running_mean, running_var, weight, bias, training=False, eps=eps)`.
///
/// `x` is `(N, C, *)` (or `(N, C)`); only inference mode exists here, so
/// the running statistics are used and never updated.
pub fn batch_norm(
    x: &Tensor,
    running_mean: &Tensor,
    running_var: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f32,
) -> Result<Tensor> {
    batch_norm_impl(
        Cow::Borrowed(x),
        running_mean,
        running_var,
        weight,
        bias,
        eps,
    )
}

/// [`batch_norm`] that normalises `x` in its own buffer (no allocation when `x` is in
/// standard layout).
pub fn batch_norm_owned(
    x: Tensor,
    running_mean: &Tensor,
    running_var: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f32,
) -> Result<Tensor> {
    batch_norm_impl(Cow::Owned(x), running_mean, running_var, weight, bias, eps)
}

fn batch_norm_impl(
    x: Cow<'_, Tensor>,
    running_mean: &Tensor,
    running_var: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f32,
) -> Result<Tensor> {
    const OP: &str = "batch_norm";
    if x.ndim() < 2 {
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            "input must have at least 2 dimensions (N, C, *)",
        ));
    }
    let c = x.shape()[1];
    check_vector(OP, "running_mean", Some(running_mean), c, x.shape())?;
    check_vector(OP, "running_var", Some(running_var), c, x.shape())?;
    check_vector(OP, "weight", weight, c, x.shape())?;
    check_vector(OP, "bias", bias, c, x.shape())?;
    // Fold the four per-channel vectors into one scale and shift.
    let mean = contiguous_data(running_mean);
    let var = contiguous_data(running_var);
    let w = weight.map(contiguous_data);
    let b = bias.map(contiguous_data);
    let (scale, shift): (Vec<f32>, Vec<f32>) = (0..c)
        .map(|i| {
            let s = w.as_ref().map_or(1.0, |w| w[i] as f64) / (var[i] as f64 + eps as f64).sqrt();
            let sh = b.as_ref().map_or(0.0, |b| b[i] as f64) - mean[i] as f64 * s;
            (s as f32, sh as f32)
        })
        .unzip();
    let inner: usize = x.shape()[2..].iter().product();
    let shape = x.shape().to_vec();
    let mut out = match x {
        Cow::Owned(t) if t.is_standard_layout() => t,
        other => other.as_standard_layout().into_owned(),
    };
    debug_assert_eq!(out.shape(), &shape[..]);
    let data = out
        .as_slice_mut()
        .expect("standard layout tensors are contiguous");
    if inner > 0 {
        let apply = |(plane_idx, plane): (usize, &mut [f32])| {
            let ch = plane_idx % c;
            let (s, sh) = (scale[ch], shift[ch]);
            plane.iter_mut().for_each(|v| *v = *v * s + sh);
        };
        if data.len() >= PARALLEL_MIN_ELEMENTS && data.len() > inner {
            data.par_chunks_mut(inner).enumerate().for_each(apply);
        } else {
            data.chunks_exact_mut(inner).enumerate().for_each(apply);
        }
    }
    Ok(out)
}

/// Below this many elements the rows are not worth handing to rayon.
const PARALLEL_MIN_ELEMENTS: usize = 1 << 15;

/// Applies `f` to each `len`-element row, across rayon's threads when the
/// tensor is large (a transformer's activations are thousands of rows).
fn for_each_row(data: &mut [f32], len: usize, f: impl Fn(&mut [f32]) + Sync + Send) {
    if len == 0 {
        return;
    }
    if data.len() >= PARALLEL_MIN_ELEMENTS && data.len() > len {
        data.par_chunks_mut(len).for_each(f);
    } else {
        data.chunks_exact_mut(len).for_each(f);
    }
}

/// Mean and biased variance of a slice, in f64. Each sum runs as 8 independent partial
/// sums: one chain of dependent f64 adds per row was most of a layer norm's time on the
/// short rows of small transformers.
fn moments(xs: &[f32]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = lanes_sum(xs, |v| v as f64) / n;
    let var = lanes_sum(xs, |v| (v as f64 - mean).powi(2)) / n;
    (mean, var)
}

#[inline(always)]
fn lanes_sum(xs: &[f32], f: impl Fn(f32) -> f64) -> f64 {
    const LANES: usize = 8;
    let mut sums = [0f64; LANES];
    let blocks = xs.chunks_exact(LANES);
    let rest: f64 = blocks.remainder().iter().map(|&v| f(v)).sum();
    for block in blocks {
        for (s, &v) in sums.iter_mut().zip(block) {
            *s += f(v);
        }
    }
    sums.iter().sum::<f64>() + rest
}

fn check_normalized_shape(
    op: &'static str,
    x: &Tensor,
    normalized_shape: &[usize],
) -> Result<usize> {
    let k = normalized_shape.len();
    if k == 0 || k > x.ndim() || x.shape()[x.ndim() - k..] != *normalized_shape {
        return Err(KernelError::shapes(
            op,
            x.shape(),
            normalized_shape,
            "normalized_shape must be non-empty and equal the input's trailing dimensions",
        ));
    }
    Ok(normalized_shape.iter().product())
}

fn check_affine(
    op: &'static str,
    what: &str,
    t: Option<&Tensor>,
    normalized_shape: &[usize],
) -> Result<()> {
    match t {
        Some(t) if t.shape() != normalized_shape => Err(KernelError::shapes(
            op,
            normalized_shape,
            t.shape(),
            format!("{what} must have the normalized shape"),
        )),
        _ => Ok(()),
    }
}

/// `F.layer_norm(x, normalized_shape, weight, bias, eps)`: normalises over
/// the trailing `normalized_shape` dimensions with the biased variance.
pub fn layer_norm(
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f32,
) -> Result<Tensor> {
    const OP: &str = "layer_norm";
    let inner = check_normalized_shape(OP, x, normalized_shape)?;
    check_affine(OP, "weight", weight, normalized_shape)?;
    check_affine(OP, "bias", bias, normalized_shape)?;
    let w = weight.map(contiguous_data);
    let b = bias.map(contiguous_data);
    let mut out = contiguous_data(x).into_owned();
    let (w, b) = (w.as_deref(), b.as_deref());
    for_each_row(&mut out, inner, |row| layer_norm_row(row, w, b, eps as f64));
    from_vec(OP, x.shape(), out)
}

/// One row of [`layer_norm`], compiled for AVX2 where the CPU has it.
fn layer_norm_row(row: &mut [f32], w: Option<&[f32]>, b: Option<&[f32]>, eps: f64) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has just been checked to support AVX2 and FMA.
        unsafe { layer_norm_row_avx2(row, w, b, eps) };
        return;
    }
    layer_norm_row_body(row, w, b, eps);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn layer_norm_row_avx2(row: &mut [f32], w: Option<&[f32]>, b: Option<&[f32]>, eps: f64) {
    layer_norm_row_body(row, w, b, eps);
}

#[inline(always)]
fn layer_norm_row_body(row: &mut [f32], w: Option<&[f32]>, b: Option<&[f32]>, eps: f64) {
    let (mean, var) = moments(row);
    let rstd = 1.0 / (var + eps).sqrt();
    let norm = |v: f32| (v as f64 - mean) * rstd;
    // One loop per affine case, so that none tests an Option per element.
    match (w, b) {
        (Some(w), Some(b)) => row
            .iter_mut()
            .zip(w.iter().zip(b))
            .for_each(|(v, (&w, &b))| *v = (norm(*v) * w as f64 + b as f64) as f32),
        (Some(w), None) => row
            .iter_mut()
            .zip(w)
            .for_each(|(v, &w)| *v = (norm(*v) * w as f64) as f32),
        (None, Some(b)) => row
            .iter_mut()
            .zip(b)
            .for_each(|(v, &b)| *v = (norm(*v) + b as f64) as f32),
        (None, None) => row.iter_mut().for_each(|v| *v = norm(*v) as f32),
    }
}

/// `F.rms_norm(x, normalized_shape, weight, eps)`. With `eps = None` it uses
/// `torch.finfo(float32).eps`, PyTorch's default.
pub fn rms_norm(
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    eps: Option<f32>,
) -> Result<Tensor> {
    const OP: &str = "rms_norm";
    let inner = check_normalized_shape(OP, x, normalized_shape)?;
    check_affine(OP, "weight", weight, normalized_shape)?;
    let eps = eps.unwrap_or(f32::EPSILON) as f64;
    let w = weight.map(contiguous_data);
    let mut out = contiguous_data(x).into_owned();
    for_each_row(&mut out, inner, |row| {
        let ms = row.iter().map(|&v| (v as f64) * (v as f64)).sum::<f64>() / inner as f64;
        let r = 1.0 / (ms + eps).sqrt();
        for (i, v) in row.iter_mut().enumerate() {
            let y = *v as f64 * r * w.as_ref().map_or(1.0, |w| w[i] as f64);
            *v = y as f32;
        }
    });
    from_vec(OP, x.shape(), out)
}

/// `F.group_norm(x, num_groups, weight, bias, eps)` for `x` of shape
/// `(N, C, *)`; statistics over each group of `C / num_groups` channels.
pub fn group_norm(
    x: &Tensor,
    num_groups: usize,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f32,
) -> Result<Tensor> {
    group_norm_impl("group_norm", x, num_groups, weight, bias, eps)
}

fn group_norm_impl(
    op: &'static str,
    x: &Tensor,
    num_groups: usize,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f32,
) -> Result<Tensor> {
    if x.ndim() < 2 {
        return Err(KernelError::invalid(
            op,
            x.shape(),
            "input must have at least 2 dimensions (N, C, *)",
        ));
    }
    let c = x.shape()[1];
    if num_groups == 0 || c % num_groups != 0 {
        return Err(KernelError::invalid(
            op,
            x.shape(),
            format!(
                "number of channels {c} must be divisible by the number of groups {num_groups}"
            ),
        ));
    }
    check_vector(op, "weight", weight, c, x.shape())?;
    check_vector(op, "bias", bias, c, x.shape())?;
    let w = weight.map(contiguous_data);
    let b = bias.map(contiguous_data);
    let inner: usize = x.shape()[2..].iter().product();
    let cpg = c / num_groups;
    let block = cpg * inner;
    let mut out = contiguous_data(x).into_owned();
    if block > 0 {
        for (bi, chunk) in out.chunks_exact_mut(block).enumerate() {
            let grp = bi % num_groups;
            let (mean, var) = moments(chunk);
            let rstd = 1.0 / (var + eps as f64).sqrt();
            for (ci, plane) in chunk.chunks_exact_mut(inner).enumerate() {
                let ch = grp * cpg + ci;
                let s = rstd * w.as_ref().map_or(1.0, |w| w[ch] as f64);
                let sh = b.as_ref().map_or(0.0, |b| b[ch] as f64) - mean * s;
                plane
                    .iter_mut()
                    .for_each(|v| *v = (*v as f64 * s + sh) as f32);
            }
        }
    }
    from_vec(op, x.shape(), out)
}

/// `F.instance_norm(x, weight=, bias=, eps=)` with `use_input_stats=True`
/// (the default, and what `nn.InstanceNorm2d` does without
/// `track_running_stats`): per-sample, per-channel statistics, which is
/// group norm with one channel per group.
pub fn instance_norm(
    x: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f32,
) -> Result<Tensor> {
    const OP: &str = "instance_norm";
    if x.ndim() < 2 {
        return Err(KernelError::invalid(
            OP,
            x.shape(),
            "input must have at least 2 dimensions (N, C, *)",
        ));
    }
    group_norm_impl(OP, x, x.shape()[1], weight, bias, eps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testutil::{arange, assert_close, t, Fixture};

    fn fixture() -> Fixture {
        Fixture::load(include_str!("../../../tests/fixtures/kernels/norm.json"))
    }

    #[test]
    fn layer_norm_hand_checked() {
        // Row [1, 2, 3]: mean 2, biased var 2/3.
        let x = t(&[1, 3], &[1.0, 2.0, 3.0]);
        let y = layer_norm(&x, &[3], None, None, 0.0).unwrap();
        let s = (1.5f32).sqrt();
        assert!(
            (y[[0, 0]] + s).abs() < 1e-6 && y[[0, 1]].abs() < 1e-7 && (y[[0, 2]] - s).abs() < 1e-6
        );
    }

    #[test]
    fn batch_norm_hand_checked() {
        let x = t(&[1, 2, 1, 2], &[1.0, 3.0, 10.0, 20.0]);
        let y = batch_norm(
            &x,
            &t(&[2], &[1.0, 10.0]),
            &t(&[2], &[4.0, 25.0]),
            Some(&t(&[2], &[2.0, 1.0])),
            Some(&t(&[2], &[0.5, 0.0])),
            0.0,
        )
        .unwrap();
        // Channel 0: (x - 1) / 2 * 2 + 0.5; channel 1: (x - 10) / 5.
        assert_eq!(y, t(&[1, 2, 1, 2], &[0.5, 2.5, 0.0, 2.0]));
    }

    #[test]
    fn parallel_rows_match_serial() {
        // 40960 elements takes the rayon path; one batch alone stays serial.
        let x = arange(&[4, 64, 160]).mapv(|v| (v * 0.017).cos() * 3.0 + 1.0);
        let w = arange(&[160]).mapv(|v| 1.0 + v * 0.01);
        let whole = layer_norm(&x, &[160], Some(&w), None, 1e-5).unwrap();
        let whole_rms = rms_norm(&x, &[160], Some(&w), None).unwrap();
        for b in 0..4 {
            let xb = x.index_axis(ndarray::Axis(0), b).to_owned();
            assert_eq!(
                whole.index_axis(ndarray::Axis(0), b),
                layer_norm(&xb, &[160], Some(&w), None, 1e-5).unwrap()
            );
            assert_eq!(
                whole_rms.index_axis(ndarray::Axis(0), b),
                rms_norm(&xb, &[160], Some(&w), None).unwrap()
            );
        }
    }

    #[test]
    fn shape_errors() {
        let x = arange(&[2, 3, 4]);
        assert!(layer_norm(&x, &[3], None, None, 1e-5).is_err());
        assert!(layer_norm(&x, &[4], Some(&arange(&[3])), None, 1e-5).is_err());
        assert!(group_norm(&x, 2, None, None, 1e-5).is_err());
        assert!(group_norm(&x, 3, Some(&arange(&[4])), None, 1e-5).is_err());
        assert!(batch_norm(&x, &arange(&[4]), &arange(&[3]), None, None, 1e-5).is_err());
        assert!(batch_norm(
            &arange(&[3]),
            &arange(&[3]),
            &arange(&[3]),
            None,
            None,
            1e-5
        )
        .is_err());
        let e = layer_norm(&x, &[5], None, None, 1e-5).unwrap_err();
        assert_eq!(
            e,
            KernelError::shapes(
                "layer_norm",
                &[2, 3, 4],
                &[5],
                "normalized_shape must be non-empty and equal the input's trailing dimensions"
            )
        );
    }

    #[test]
    fn against_torch() {
        let fx = fixture();
        for case in fx.cases_with_prefix("batch_norm/") {
            let y = batch_norm(
                &case.input("x"),
                &case.input("running_mean"),
                &case.input("running_var"),
                case.input_opt("weight").as_ref(),
                case.input_opt("bias").as_ref(),
                case.f32("eps"),
            )
            .unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
        for case in fx.cases_with_prefix("layer_norm/") {
            let y = layer_norm(
                &case.input("x"),
                &case.usizes("normalized_shape"),
                case.input_opt("weight").as_ref(),
                case.input_opt("bias").as_ref(),
                case.f32("eps"),
            )
            .unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
        for case in fx.cases_with_prefix("group_norm/") {
            let y = group_norm(
                &case.input("x"),
                case.usize("num_groups"),
                case.input_opt("weight").as_ref(),
                case.input_opt("bias").as_ref(),
                case.f32("eps"),
            )
            .unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
        for case in fx.cases_with_prefix("rms_norm/") {
            let eps = case.param_opt("eps").map(|_| case.f32("eps"));
            let y = rms_norm(
                &case.input("x"),
                &case.usizes("normalized_shape"),
                case.input_opt("weight").as_ref(),
                eps,
            )
            .unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
        let case = fx.case("instance_norm");
        let y = instance_norm(
            &case.input("x"),
            case.input_opt("weight").as_ref(),
            case.input_opt("bias").as_ref(),
            case.f32("eps"),
        )
        .unwrap();
        assert_close("instance_norm", &y, &case.expected(), 1e-5);
    }
}
