//! Pooling: max/avg pools with PyTorch's output-size and window rules
//! (ceil_mode, count_include_pad, divisor_override, dilation for max), and
//! adaptive pools with PyTorch's `floor(i·in/out) .. ceil((i+1)·in/out)`
//! windows.
//!
//! All 2-D pools accept `(N, C, H, W)` or `(C, H, W)`; the 1-D variants run
//! through the same code with a unit height.

use rayon::prelude::*;

use super::util::{contiguous_data, from_vec};
use super::{KernelError, Result, Tensor};

/// Arguments of `F.max_pool2d`. PyTorch's `stride=None` means "equal to the
/// kernel", which [`MaxPool2dParams::new`] sets up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MaxPool2dParams {
    pub kernel: [usize; 2],
    pub stride: [usize; 2],
    pub padding: [usize; 2],
    pub dilation: [usize; 2],
    pub ceil_mode: bool,
}

impl MaxPool2dParams {
    pub fn new(kernel: [usize; 2]) -> Self {
        MaxPool2dParams {
            kernel,
            stride: kernel,
            padding: [0, 0],
            dilation: [1, 1],
            ceil_mode: false,
        }
    }
}

/// Arguments of `F.avg_pool2d`; [`AvgPool2dParams::new`] gives PyTorch's
/// defaults (`stride = kernel`, `count_include_pad = True`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AvgPool2dParams {
    pub kernel: [usize; 2],
    pub stride: [usize; 2],
    pub padding: [usize; 2],
    pub ceil_mode: bool,
    pub count_include_pad: bool,
    pub divisor_override: Option<usize>,
}

impl AvgPool2dParams {
    pub fn new(kernel: [usize; 2]) -> Self {
        AvgPool2dParams {
            kernel,
            stride: kernel,
            padding: [0, 0],
            ceil_mode: false,
            count_include_pad: true,
            divisor_override: None,
        }
    }
}

/// PyTorch's `pooling_output_shape`: with `ceil_mode` the last window may
/// hang over the end, but must start inside the input or left padding.
fn pool_out_size(
    len: usize,
    k: usize,
    pad: usize,
    stride: usize,
    dilation: usize,
    ceil_mode: bool,
) -> Option<usize> {
    let (len, k, pad, stride, dilation) = (
        len as i64,
        k as i64,
        pad as i64,
        stride as i64,
        dilation as i64,
    );
    let num = len + 2 * pad - dilation * (k - 1) - 1 + if ceil_mode { stride - 1 } else { 0 };
    if num < 0 {
        return None;
    }
    let mut out = num / stride + 1;
    if ceil_mode && (out - 1) * stride >= len + pad {
        out -= 1;
    }
    (out >= 1).then_some(out as usize)
}

/// Splits `x` into `(planes, H, W)`, remembering the leading shape.
fn planes_of(op: &'static str, x: &Tensor) -> Result<(Vec<usize>, usize, usize)> {
    if x.ndim() != 3 && x.ndim() != 4 {
        return Err(KernelError::invalid(
            op,
            x.shape(),
            "expected a 3-D (C, H, W) or 4-D (N, C, H, W) input",
        ));
    }
    let r = x.ndim();
    let (h, w) = (x.shape()[r - 2], x.shape()[r - 1]);
    if h == 0 || w == 0 {
        return Err(KernelError::invalid(
            op,
            x.shape(),
            "expected non-empty spatial dimensions",
        ));
    }
    Ok((x.shape()[..r - 2].to_vec(), h, w))
}

/// Evaluates `f(plane, oy, ox)` for every output position of every plane.
fn map_planes(
    op: &'static str,
    x: &Tensor,
    lead: &[usize],
    (h, w): (usize, usize),
    (oh, ow): (usize, usize),
    f: impl Fn(&[f32], usize, usize) -> f32 + Sync,
) -> Result<Tensor> {
    let data = contiguous_data(x);
    let planes: usize = lead.iter().product();
    let mut out = vec![0.0f32; planes * oh * ow];
    let per_plane = |(i, dst): (usize, &mut [f32])| {
        let src = &data[i * h * w..(i + 1) * h * w];
        for (oy, row) in dst.chunks_exact_mut(ow).enumerate() {
            for (ox, v) in row.iter_mut().enumerate() {
                *v = f(src, oy, ox);
            }
        }
    };
    if oh * ow > 0 {
        if out.len() >= 1 << 16 && planes > 1 {
            out.par_chunks_mut(oh * ow).enumerate().for_each(per_plane);
        } else {
            out.chunks_mut(oh * ow).enumerate().for_each(per_plane);
        }
    }
    let mut shape = lead.to_vec();
    shape.extend([oh, ow]);
    from_vec(op, &shape, out)
}

fn check_window_args(
    op: &'static str,
    x: &Tensor,
    kernel: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
) -> Result<()> {
    if kernel.contains(&0) || stride.contains(&0) || dilation.contains(&0) {
        return Err(KernelError::invalid(
            op,
            x.shape(),
            format!(
                "kernel {kernel:?}, stride {stride:?} and dilation {dilation:?} must be positive"
            ),
        ));
    }
    if padding[0] > kernel[0] / 2 || padding[1] > kernel[1] / 2 {
        return Err(KernelError::invalid(
            op,
            x.shape(),
            format!("padding {padding:?} should be at most half of kernel size {kernel:?}"),
        ));
    }
    Ok(())
}

fn output_hw(
    op: &'static str,
    x: &Tensor,
    (h, w): (usize, usize),
    p: &MaxPool2dParams,
) -> Result<(usize, usize)> {
    let size = |i: usize, len: usize| {
        pool_out_size(
            len,
            p.kernel[i],
            p.padding[i],
            p.stride[i],
            p.dilation[i],
            p.ceil_mode,
        )
    };
    match (size(0, h), size(1, w)) {
        (Some(oh), Some(ow)) => Ok((oh, ow)),
        _ => Err(KernelError::invalid(
            op,
            x.shape(),
            format!(
                "output size is too small for kernel {:?}, stride {:?}, padding {:?}, dilation {:?}",
                p.kernel, p.stride, p.padding, p.dilation
            ),
        )),
    }
}

/// `F.max_pool2d`. Padding never wins (it acts as -inf) and NaN wins over
/// any number, as in PyTorch.
pub fn max_pool2d(x: &Tensor, p: &MaxPool2dParams) -> Result<Tensor> {
    max_pool2d_impl("max_pool2d", x, p)
}

fn max_pool2d_impl(op: &'static str, x: &Tensor, p: &MaxPool2dParams) -> Result<Tensor> {
    let (lead, h, w) = planes_of(op, x)?;
    check_window_args(op, x, p.kernel, p.stride, p.padding, p.dilation)?;
    let (oh, ow) = output_hw(op, x, (h, w), p)?;
    let [kh, kw] = p.kernel;
    let [sh, sw] = p.stride;
    let [dh, dw] = p.dilation;
    let [ph, pw] = p.padding;
    let data = contiguous_data(x);
    let planes: usize = lead.iter().product();
    let mut out = vec![f32::NEG_INFINITY; planes * oh * ow];
    // Output columns whose whole window row lies inside the input: there one
    // loop over the columns folds all column taps (unrolled for the common
    // 2- and 3-wide windows), with no bounds tests, so it vectorises; the
    // few edge columns take the checked path. The per-output closure over
    // filtered tap iterators this replaces cost more than the arithmetic.
    let g = MaxGeom {
        h,
        w,
        ow,
        kh,
        kw,
        sh,
        sw,
        dh,
        dw,
        ph,
        pw,
        interior: (0, 0),
    };
    let interior = {
        let lo = (0..ow).find(|&ox| g.col(ox, 0) >= 0).unwrap_or(ow);
        let hi = (lo..ow)
            .rev()
            .find(|&ox| g.col(ox, kw - 1) < w as isize)
            .map_or(lo, |ox| ox + 1);
        (lo, hi)
    };
    let g = MaxGeom { interior, ..g };
    let per_plane = |(i, dst): (usize, &mut [f32])| {
        max_plane(&g, &data[i * h * w..(i + 1) * h * w], dst);
    };
    if oh * ow > 0 {
        if out.len() >= 1 << 16 && planes > 1 {
            out.par_chunks_mut(oh * ow).enumerate().for_each(per_plane);
        } else {
            out.chunks_mut(oh * ow).enumerate().for_each(per_plane);
        }
    }
    let mut shape = lead.to_vec();
    shape.extend([oh, ow]);
    from_vec(op, &shape, out)
}

/// Geometry of one max pooling, `interior` being the output columns whose
/// window row lies wholly inside the input.
#[derive(Clone, Copy)]
struct MaxGeom {
    h: usize,
    w: usize,
    ow: usize,
    kh: usize,
    kw: usize,
    sh: usize,
    sw: usize,
    dh: usize,
    dw: usize,
    ph: usize,
    pw: usize,
    interior: (usize, usize),
}

impl MaxGeom {
    fn col(&self, ox: usize, kj: usize) -> isize {
        (ox * self.sw + kj * self.dw) as isize - self.pw as isize
    }
}

/// One plane of max pooling; on AVX2 machines with 8-lane vectors, as the
/// strided window loads only vectorise (as shuffles) with AVX2.
fn max_plane(g: &MaxGeom, src: &[f32], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has just been checked to support AVX2.
        unsafe { max_plane_avx2(g, src, dst) };
        return;
    }
    max_plane_body(g, src, dst);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn max_plane_avx2(g: &MaxGeom, src: &[f32], dst: &mut [f32]) {
    max_plane_body(g, src, dst);
}

#[inline(always)]
fn max_plane_body(g: &MaxGeom, src: &[f32], dst: &mut [f32]) {
    for (oy, acc) in dst.chunks_exact_mut(g.ow).enumerate() {
        for ki in 0..g.kh {
            let iy = (oy * g.sh + ki * g.dh) as isize - g.ph as isize;
            if iy < 0 || iy >= g.h as isize {
                continue;
            }
            let row = &src[iy as usize * g.w..(iy as usize + 1) * g.w];
            let (lo, hi) = g.interior;
            for ox in (0..lo).chain(hi..g.ow) {
                for kj in 0..g.kw {
                    let c = g.col(ox, kj);
                    if c >= 0 && (c as usize) < g.w {
                        acc[ox] = nan_max(acc[ox], row[c as usize]);
                    }
                }
            }
            if lo < hi {
                let first = g.col(lo, 0) as usize;
                let acc = &mut acc[lo..hi];
                match (g.kw, g.sw, g.dw) {
                    (2, 2, 1) => window_row::<2, 2>(acc, &row[first..]),
                    (3, 2, 1) => window_row::<3, 2>(acc, &row[first..]),
                    (3, 1, 1) => window_row::<3, 1>(acc, &row[first..]),
                    _ => {
                        for (j, a) in acc.iter_mut().enumerate() {
                            let base = first + j * g.sw;
                            for kj in 0..g.kw {
                                *a = nan_max(*a, row[base + kj * g.dw]);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Max that lets NaN win, as torch's max pooling does.
#[inline(always)]
fn nan_max(a: f32, v: f32) -> f32 {
    if v > a || v.is_nan() {
        v
    } else {
        a
    }
}

/// `acc[j] = max(acc[j], row[j·S .. j·S + K])` for windows that lie inside `row`.
#[inline(always)]
fn window_row<const K: usize, const S: usize>(acc: &mut [f32], row: &[f32]) {
    if acc.is_empty() {
        return;
    }
    // Cut to the exact extent once so the loop below needs no bounds tests.
    let row = &row[..(acc.len() - 1) * S + K];
    if K == S {
        for (a, win) in acc.iter_mut().zip(row.chunks_exact(S)) {
            *a = win.iter().fold(*a, |m, &v| nan_max(m, v));
        }
        return;
    }
    for (j, a) in acc.iter_mut().enumerate() {
        let mut m = *a;
        for k in 0..K {
            m = nan_max(m, row[j * S + k]);
        }
        *a = m;
    }
}

/// `F.avg_pool2d`, including PyTorch's treatment of windows that overhang
/// the padded input in ceil mode: with `count_include_pad` the divisor
/// counts padding but not positions beyond it.
pub fn avg_pool2d(x: &Tensor, p: &AvgPool2dParams) -> Result<Tensor> {
    avg_pool2d_impl("avg_pool2d", x, p)
}

fn avg_pool2d_impl(op: &'static str, x: &Tensor, p: &AvgPool2dParams) -> Result<Tensor> {
    let (lead, h, w) = planes_of(op, x)?;
    check_window_args(op, x, p.kernel, p.stride, p.padding, [1, 1])?;
    if p.divisor_override == Some(0) {
        return Err(KernelError::invalid(
            op,
            x.shape(),
            "divisor must be not zero",
        ));
    }
    let window = MaxPool2dParams {
        kernel: p.kernel,
        stride: p.stride,
        padding: p.padding,
        dilation: [1, 1],
        ceil_mode: p.ceil_mode,
    };
    let (oh, ow) = output_hw(op, x, (h, w), &window)?;
    let window = move |o: usize, s: usize, pad: usize, k: usize, len: usize| {
        let start = (o * s) as isize - pad as isize;
        let end = (start + k as isize).min((len + pad) as isize);
        let padded_count = end - start;
        let (start, end) = (start.max(0) as usize, end.min(len as isize).max(0) as usize);
        (start, end.max(start), padded_count.max(0) as usize)
    };
    map_planes(op, x, &lead, (h, w), (oh, ow), |src, oy, ox| {
        let (y0, y1, ny) = window(oy, p.stride[0], p.padding[0], p.kernel[0], h);
        let (x0, x1, nx) = window(ox, p.stride[1], p.padding[1], p.kernel[1], w);
        if y0 >= y1 || x0 >= x1 {
            return 0.0;
        }
        let sum: f64 = (y0..y1)
            .map(|iy| {
                src[iy * w + x0..iy * w + x1]
                    .iter()
                    .map(|&v| v as f64)
                    .sum::<f64>()
            })
            .sum();
        let divisor = match p.divisor_override {
            Some(d) => d,
            None if p.count_include_pad => ny * nx,
            None => (y1 - y0) * (x1 - x0),
        };
        (sum / divisor as f64) as f32
    })
}

/// Start and end of adaptive window `i` of `out` over `len` inputs.
fn adaptive_window(i: usize, len: usize, out: usize) -> (usize, usize) {
    let start = (i * len) / out;
    let end = ((i + 1) * len).div_ceil(out);
    (start, end)
}

/// `F.adaptive_avg_pool2d(x, (oh, ow))`. PyTorch's `None` entries (keep the
/// input size) are for the caller to resolve.
pub fn adaptive_avg_pool2d(x: &Tensor, output_size: [usize; 2]) -> Result<Tensor> {
    adaptive_avg_impl("adaptive_avg_pool2d", x, output_size)
}

fn adaptive_avg_impl(op: &'static str, x: &Tensor, [oh, ow]: [usize; 2]) -> Result<Tensor> {
    let (lead, h, w) = planes_of(op, x)?;
    map_planes(op, x, &lead, (h, w), (oh, ow), |src, oy, ox| {
        let (y0, y1) = adaptive_window(oy, h, oh);
        let (x0, x1) = adaptive_window(ox, w, ow);
        let sum: f64 = (y0..y1)
            .map(|iy| {
                src[iy * w + x0..iy * w + x1]
                    .iter()
                    .map(|&v| v as f64)
                    .sum::<f64>()
            })
            .sum();
        (sum / ((y1 - y0) * (x1 - x0)) as f64) as f32
    })
}

/// `F.adaptive_max_pool2d(x, (oh, ow))` (values only; NaN wins, as in torch).
pub fn adaptive_max_pool2d(x: &Tensor, output_size: [usize; 2]) -> Result<Tensor> {
    adaptive_max_impl("adaptive_max_pool2d", x, output_size)
}

fn adaptive_max_impl(op: &'static str, x: &Tensor, [oh, ow]: [usize; 2]) -> Result<Tensor> {
    let (lead, h, w) = planes_of(op, x)?;
    map_planes(op, x, &lead, (h, w), (oh, ow), |src, oy, ox| {
        let (y0, y1) = adaptive_window(oy, h, oh);
        let (x0, x1) = adaptive_window(ox, w, ow);
        let mut best = f32::NEG_INFINITY;
        for iy in y0..y1 {
            for &v in &src[iy * w + x0..iy * w + x1] {
                if v.is_nan() {
                    return v;
                }
                if v > best {
                    best = v;
                }
            }
        }
        best
    })
}

/// Runs a 2-D pool on a 1-D input `(N, C, L)` or `(C, L)` viewed as height 1.
fn via_2d(
    op: &'static str,
    x: &Tensor,
    f: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    if x.ndim() != 2 && x.ndim() != 3 {
        return Err(KernelError::invalid(
            op,
            x.shape(),
            "expected a 2-D (C, L) or 3-D (N, C, L) input",
        ));
    }
    let mut shape = x.shape().to_vec();
    shape.insert(x.ndim() - 1, 1);
    let x4 = from_vec(op, &shape, contiguous_data(x).into_owned())?;
    let y = f(&x4).map_err(|e| match e {
        KernelError::InvalidArgument { op, reason, .. } => KernelError::InvalidArgument {
            op,
            shape: x.shape().to_vec(),
            reason,
        },
        other => other,
    })?;
    let mut out_shape = y.shape().to_vec();
    out_shape.remove(out_shape.len() - 2);
    from_vec(op, &out_shape, y.into_raw_vec_and_offset().0)
}

/// `F.max_pool1d(x, kernel, stride, padding, dilation, ceil_mode)`.
pub fn max_pool1d(
    x: &Tensor,
    kernel: usize,
    stride: usize,
    padding: usize,
    dilation: usize,
    ceil_mode: bool,
) -> Result<Tensor> {
    const OP: &str = "max_pool1d";
    let p = MaxPool2dParams {
        kernel: [1, kernel],
        stride: [1, stride],
        padding: [0, padding],
        dilation: [1, dilation],
        ceil_mode,
    };
    via_2d(OP, x, |x4| max_pool2d_impl(OP, x4, &p))
}

/// `F.avg_pool1d(x, kernel, stride, padding, ceil_mode, count_include_pad)`.
pub fn avg_pool1d(
    x: &Tensor,
    kernel: usize,
    stride: usize,
    padding: usize,
    ceil_mode: bool,
    count_include_pad: bool,
) -> Result<Tensor> {
    const OP: &str = "avg_pool1d";
    let p = AvgPool2dParams {
        kernel: [1, kernel],
        stride: [1, stride],
        padding: [0, padding],
        ceil_mode,
        count_include_pad,
        divisor_override: None,
    };
    via_2d(OP, x, |x4| avg_pool2d_impl(OP, x4, &p))
}

/// `F.adaptive_avg_pool1d(x, output_size)`.
pub fn adaptive_avg_pool1d(x: &Tensor, output_size: usize) -> Result<Tensor> {
    const OP: &str = "adaptive_avg_pool1d";
    via_2d(OP, x, |x4| adaptive_avg_impl(OP, x4, [1, output_size]))
}

/// `F.adaptive_max_pool1d(x, output_size)` (values only).
pub fn adaptive_max_pool1d(x: &Tensor, output_size: usize) -> Result<Tensor> {
    const OP: &str = "adaptive_max_pool1d";
    via_2d(OP, x, |x4| adaptive_max_impl(OP, x4, [1, output_size]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testutil::{arange, assert_close, t, Fixture};

    fn fixture() -> Fixture {
        Fixture::load(include_str!("../../../tests/fixtures/kernels/pool.json"))
    }

    #[test]
    fn output_size_rules() {
        // 5 wide, kernel 2, stride 2: floor gives 2, ceil gives 3.
        assert_eq!(pool_out_size(5, 2, 0, 2, 1, false), Some(2));
        assert_eq!(pool_out_size(5, 2, 0, 2, 1, true), Some(3));
        // A last window starting inside the input is kept...
        assert_eq!(pool_out_size(4, 3, 1, 2, 1, true), Some(3));
        // ...but one that would start in the right padding is dropped.
        assert_eq!(pool_out_size(5, 2, 1, 3, 1, true), Some(2));
        assert_eq!(pool_out_size(2, 5, 0, 1, 1, false), None);
    }

    #[test]
    fn max_pool_hand_checked() {
        let x = arange(&[1, 1, 4, 4]);
        let y = max_pool2d(&x, &MaxPool2dParams::new([2, 2])).unwrap();
        assert_eq!(y, t(&[1, 1, 2, 2], &[5.0, 7.0, 13.0, 15.0]));
        let y = avg_pool2d(&x, &AvgPool2dParams::new([2, 2])).unwrap();
        assert_eq!(y, t(&[1, 1, 2, 2], &[2.5, 4.5, 10.5, 12.5]));
    }

    #[test]
    fn adaptive_windows_overlap_when_not_divisible() {
        // 5 -> 3: windows [0,2), [1,4), [3,5).
        assert_eq!(adaptive_window(0, 5, 3), (0, 2));
        assert_eq!(adaptive_window(1, 5, 3), (1, 4));
        assert_eq!(adaptive_window(2, 5, 3), (3, 5));
        let y = adaptive_avg_pool1d(&arange(&[1, 5]), 3).unwrap();
        assert_eq!(y, t(&[1, 3], &[0.5, 2.0, 3.5]));
    }

    #[test]
    fn nan_wins_max_pool() {
        let x = t(&[1, 2, 2], &[1.0, f32::NAN, 3.0, 4.0]);
        assert!(max_pool2d(&x, &MaxPool2dParams::new([2, 2])).unwrap()[[0, 0, 0]].is_nan());
        assert!(adaptive_max_pool2d(&x, [1, 1]).unwrap()[[0, 0, 0]].is_nan());
    }

    #[test]
    fn invalid_arguments() {
        let x = arange(&[1, 1, 4, 4]);
        let mut p = MaxPool2dParams::new([2, 2]);
        p.padding = [2, 0];
        assert!(max_pool2d(&x, &p).is_err());
        assert!(max_pool2d(&x, &MaxPool2dParams::new([5, 5])).is_err());
        assert!(max_pool2d(&arange(&[4, 4]), &MaxPool2dParams::new([2, 2])).is_err());
        assert!(max_pool2d(&x, &MaxPool2dParams::new([0, 2])).is_err());
        let mut a = AvgPool2dParams::new([2, 2]);
        a.divisor_override = Some(0);
        assert!(avg_pool2d(&x, &a).is_err());
        assert!(adaptive_avg_pool2d(&Tensor::zeros(ndarray::IxDyn(&[1, 0, 3])), [1, 1]).is_err());
    }

    #[test]
    fn against_torch() {
        let fx = fixture();
        for case in fx.cases_with_prefix("max_pool2d/") {
            let p = MaxPool2dParams {
                kernel: case.pair("kernel"),
                stride: case.pair("stride"),
                padding: case.pair("padding"),
                dilation: case.pair("dilation"),
                ceil_mode: case.bool("ceil_mode"),
            };
            assert_close(
                &case.name,
                &max_pool2d(&case.input("x"), &p).unwrap(),
                &case.expected(),
                1e-5,
            );
        }
        for case in fx.cases_with_prefix("avg_pool2d/") {
            let p = AvgPool2dParams {
                kernel: case.pair("kernel"),
                stride: case.pair("stride"),
                padding: case.pair("padding"),
                ceil_mode: case.bool("ceil_mode"),
                count_include_pad: case.bool("count_include_pad"),
                divisor_override: case
                    .param_opt("divisor_override")
                    .map(|_| case.usize("divisor_override")),
            };
            assert_close(
                &case.name,
                &avg_pool2d(&case.input("x"), &p).unwrap(),
                &case.expected(),
                1e-5,
            );
        }
        for case in fx.cases_with_prefix("adaptive_avg_pool2d/") {
            let y = adaptive_avg_pool2d(&case.input("x"), case.pair("output_size")).unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
        for case in fx.cases_with_prefix("adaptive_max_pool2d/") {
            let y = adaptive_max_pool2d(&case.input("x"), case.pair("output_size")).unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
        for case in fx.cases_with_prefix("adaptive_avg_pool1d/") {
            let y = adaptive_avg_pool1d(&case.input("x"), case.usize("output_size")).unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
        let case = fx.case("adaptive_max_pool1d");
        let y = adaptive_max_pool1d(&case.input("x"), case.usize("output_size")).unwrap();
        assert_close("adaptive_max_pool1d", &y, &case.expected(), 1e-5);
        let case = fx.case("max_pool1d");
        let y = max_pool1d(
            &case.input("x"),
            case.usize("kernel"),
            case.usize("stride"),
            case.usize("padding"),
            case.usize("dilation"),
            case.bool("ceil_mode"),
        )
        .unwrap();
        assert_close("max_pool1d", &y, &case.expected(), 1e-5);
        let case = fx.case("avg_pool1d");
        let y = avg_pool1d(
            &case.input("x"),
            case.usize("kernel"),
            case.usize("stride"),
            case.usize("padding"),
            case.bool("ceil_mode"),
            case.bool("count_include_pad"),
        )
        .unwrap();
        assert_close("avg_pool1d", &y, &case.expected(), 1e-5);
    }
}
