//! `softmax` and `log_softmax` over any dimension.
//!
//! Both subtract the maximum along the dimension before exponentiating, so
//! large logits cannot overflow, and accumulate the normaliser in f64. The
//! tensor is walked as `(outer, dim, inner)` blocks of its row-major data:
//! for inner dimensions of size > 1 the reduction runs across whole rows of
//! `inner` elements at a time, which keeps the loops contiguous instead of
//! gathering a strided lane per output position.

use rayon::prelude::*;

use super::util::{contiguous_data, from_vec, normalize_dim};
use super::{Result, Tensor};

#[derive(Clone, Copy)]
enum Kind {
    Softmax,
    LogSoftmax,
}

/// `torch.softmax(x, dim)`.
pub fn softmax(x: &Tensor, dim: isize) -> Result<Tensor> {
    run("softmax", x, dim, Kind::Softmax)
}

/// `torch.log_softmax(x, dim)`.
pub fn log_softmax(x: &Tensor, dim: isize) -> Result<Tensor> {
    run("log_softmax", x, dim, Kind::LogSoftmax)
}

// NaN anywhere in a lane must make the whole lane NaN, as in torch.
fn nan_max(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if b > a {
        b
    } else {
        a
    }
}

/// Below this many elements the work is not worth handing to rayon.
const PARALLEL_MIN_ELEMENTS: usize = 1 << 15;

/// `exp(x)` in f32 within 2 ulp, written so that a loop of it vectorises (the libm call
/// does not): `2^n · e^r` with `n = x / ln 2` rounded to nearest and a degree-7 Taylor
/// polynomial for `|r| ≤ ln 2 / 2`. Ties go to even because that is one vector
/// instruction; `f32::round` (ties away from zero) is a libm call per element, which kept
/// the whole loop scalar. `2^n` is applied as two halves so that results in the subnormal range
/// and overflow to infinity come out as libm's do.
#[inline(always)]
fn exp_f32(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let x = x.clamp(-104.0, 89.0);
    let n = (x * std::f32::consts::LOG2_E).round_ties_even();
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let mut p = 1.0 / 5040.0;
    for c in [
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ] {
        p = p * r + c;
    }
    // The halves stay floats: `as i32` saturates, which x86 has no vector instruction for.
    let n1 = (n * 0.5).trunc();
    let n2 = n - n1;
    p * pow2_f32(n1) * pow2_f32(n2)
}

/// `2^k` for an integral `k` in [-126, 127], built in the float domain: adding `1.5 · 2^23`
/// leaves `k + 127` in the low mantissa bits, and the shift moves them to the exponent
/// field (the bits above it fall off the top).
#[inline(always)]
fn pow2_f32(k: f32) -> f32 {
    const SHIFTER: f32 = 12_582_912.0 + 127.0;
    f32::from_bits((k + SHIFTER).to_bits() << 23)
}

/// Softmax of each contiguous row of `len` elements (the last dimension, as in attention
/// scores), all rows in one call so that short rows do not each pay for the dispatch.
pub(crate) fn softmax_rows(data: &mut [f32], len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has just been checked to support AVX-512F.
            unsafe { softmax_rows_avx512(data, len) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has just been checked to support AVX2 and FMA.
            unsafe { softmax_rows_avx2(data, len) };
            return;
        }
    }
    softmax_rows_body(data, len);
}

/// [`softmax_rows`] sixteen exponentials at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn softmax_rows_avx512(data: &mut [f32], len: usize) {
    softmax_rows_body(data, len);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn softmax_rows_avx2(data: &mut [f32], len: usize) {
    softmax_rows_body(data, len);
}

// Plain `for` loops here and below: `Iterator::for_each` compiles to a `fold` that LLVM
// may leave out of line, and then it is built without AVX2 (rounding became a libm
// call per element).
#[inline(always)]
fn softmax_rows_body(data: &mut [f32], len: usize) {
    for row in data.chunks_exact_mut(len) {
        softmax_row_body(row);
    }
}

/// The maximum of a row, NaN if any element is (as [`nan_max`] folds it), taken over
/// independent lanes rather than one compare chain.
#[inline(always)]
fn row_max(row: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let mut nan = false;
    let blocks = row.chunks_exact(LANES);
    let rest = blocks.remainder();
    for block in blocks {
        for (m, &v) in lanes.iter_mut().zip(block) {
            nan |= v.is_nan();
            *m = if v > *m { v } else { *m };
        }
    }
    if nan {
        return f32::NAN;
    }
    lanes
        .iter()
        .chain(rest)
        .copied()
        .fold(f32::NEG_INFINITY, nan_max)
}

/// The exponentials, their sum and the scaling run as three separate loops: fused into one,
/// the f64 partial sums set the vector width, so the exponentials ran four lanes at a time
/// and the loop was most of an attention's time (ViT-tiny: half of it). Apart, the
/// exponential loop runs at the full f32 width, and the sums are the same partial sums in
/// the same order as before.
#[inline(always)]
fn softmax_row_body(row: &mut [f32]) {
    const LANES: usize = 8;
    let m = row_max(row);
    if m.is_nan() {
        row.fill(f32::NAN);
        return;
    }
    for v in row.iter_mut() {
        *v = exp_f32(*v - m);
    }
    // Independent partial sums (in f64, as the blocked path accumulates) per lane.
    let mut sums = [0f64; LANES];
    let blocks = row.chunks_exact(LANES);
    let rest = blocks.remainder();
    for block in blocks {
        for (s, &v) in sums.iter_mut().zip(block) {
            *s += v as f64;
        }
    }
    let mut sum: f64 = sums.iter().sum();
    for &v in rest {
        sum += v as f64;
    }
    let r = 1.0 / sum;
    for v in row.iter_mut() {
        *v = (*v as f64 * r) as f32;
    }
}

/// Softmax of one `(len, inner)` block along its first axis.
fn normalize_block(
    chunk: &mut [f32],
    inner: usize,
    kind: Kind,
    maxes: &mut [f32],
    sums: &mut [f64],
) {
    if inner == 1 && matches!(kind, Kind::Softmax) {
        softmax_rows(chunk, chunk.len());
        return;
    }
    maxes.copy_from_slice(&chunk[..inner]);
    for row in chunk.chunks_exact(inner).skip(1) {
        for (m, &v) in maxes.iter_mut().zip(row) {
            *m = nan_max(*m, v);
        }
    }
    sums.iter_mut().for_each(|s| *s = 0.0);
    match kind {
        Kind::Softmax => {
            for row in chunk.chunks_exact_mut(inner) {
                for ((v, &m), s) in row.iter_mut().zip(maxes.iter()).zip(sums.iter_mut()) {
                    *v = (*v - m).exp();
                    *s += *v as f64;
                }
            }
            sums.iter_mut().for_each(|s| *s = 1.0 / *s);
            for row in chunk.chunks_exact_mut(inner) {
                for (v, &r) in row.iter_mut().zip(sums.iter()) {
                    *v = (*v as f64 * r) as f32;
                }
            }
        }
        Kind::LogSoftmax => {
            for row in chunk.chunks_exact(inner) {
                for ((&v, &m), s) in row.iter().zip(maxes.iter()).zip(sums.iter_mut()) {
                    *s += ((v - m) as f64).exp();
                }
            }
            // sums now becomes the per-lane shift max + log(sum).
            for (s, &m) in sums.iter_mut().zip(maxes.iter()) {
                *s = m as f64 + s.ln();
            }
            for row in chunk.chunks_exact_mut(inner) {
                for (v, &sh) in row.iter_mut().zip(sums.iter()) {
                    *v = (*v as f64 - sh) as f32;
                }
            }
        }
    }
}

fn run(op: &'static str, x: &Tensor, dim: isize, kind: Kind) -> Result<Tensor> {
    // PyTorch accepts dim 0 / -1 on a 0-d tensor, treating it as one element.
    let d = normalize_dim(op, dim, x.ndim().max(1))?;
    let shape = x.shape();
    let (len, inner) = if x.ndim() == 0 {
        (1, 1)
    } else {
        (shape[d], shape[d + 1..].iter().product::<usize>())
    };
    let mut data = contiguous_data(x).into_owned();
    let block = len * inner;
    if block == 0 {
        return from_vec(op, shape, data);
    }
    // Blocks are independent; large tensors (attention scores) split them
    // across rayon's threads, each with its own scratch rows.
    let scratch = || (vec![0.0f32; inner], vec![0.0f64; inner]);
    if data.len() >= PARALLEL_MIN_ELEMENTS && data.len() > block {
        data.par_chunks_mut(block)
            .for_each_init(scratch, |(maxes, sums), chunk| {
                normalize_block(chunk, inner, kind, maxes, sums)
            });
    } else if inner == 1 && matches!(kind, Kind::Softmax) {
        softmax_rows(&mut data, block);
    } else {
        let (mut maxes, mut sums) = scratch();
        for chunk in data.chunks_exact_mut(block) {
            normalize_block(chunk, inner, kind, &mut maxes, &mut sums);
        }
    }
    from_vec(op, shape, data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testutil::{arange, assert_close, t, Fixture};
    use crate::exec::kernels::KernelError;

    #[test]
    fn hand_checked_and_stable_for_huge_logits() {
        // exp(1000) overflows f32; the max shift makes it exp(0) and exp(1).
        let x = t(&[2, 2], &[0.0, 0.0, 1000.0, 1001.0]);
        let y = softmax(&x, 1).unwrap();
        let e = std::f32::consts::E;
        assert!((y[[0, 0]] - 0.5).abs() < 1e-7);
        assert!(
            (y[[1, 0]] - 1.0 / (1.0 + e)).abs() < 1e-7 && (y[[1, 1]] - e / (1.0 + e)).abs() < 1e-7
        );
        let l = log_softmax(&x, -1).unwrap();
        assert!((l[[0, 1]] + 2f32.ln()).abs() < 1e-7);
        assert!((l[[1, 0]] + (1.0 + e).ln()).abs() < 1e-6);
        assert!(l.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn rows_sum_to_one_along_any_dim() {
        let x = arange(&[2, 3, 4, 5]).mapv(|v| (v * 0.37).sin() * 4.0);
        for d in -4..4 {
            let y = softmax(&x, d).unwrap();
            let sums = y.sum_axis(ndarray::Axis(((d + 4) % 4) as usize));
            assert!(sums.iter().all(|s| (s - 1.0).abs() < 1e-6), "dim {d}");
        }
        assert!(matches!(
            softmax(&x, 4),
            Err(KernelError::DimOutOfRange {
                op: "softmax",
                dim: 4,
                rank: 4
            })
        ));
    }

    #[test]
    fn parallel_blocks_match_serial() {
        // 40960 elements takes the rayon path; each batch alone stays serial.
        let x = arange(&[4, 64, 160]).mapv(|v| (v * 0.013).sin() * 6.0);
        for dim in [1, -1] {
            let whole = softmax(&x, dim).unwrap();
            let whole_log = log_softmax(&x, dim).unwrap();
            // The same axis of a batch slice, which has one dimension less.
            let slice_dim = if dim > 0 { dim - 1 } else { dim };
            for b in 0..4 {
                let xb = x.index_axis(ndarray::Axis(0), b).to_owned();
                assert_eq!(
                    whole.index_axis(ndarray::Axis(0), b),
                    softmax(&xb, slice_dim).unwrap()
                );
                assert_eq!(
                    whole_log.index_axis(ndarray::Axis(0), b),
                    log_softmax(&xb, slice_dim).unwrap()
                );
            }
        }
    }

    #[test]
    fn vectorised_exp_agrees_with_libm() {
        let mut worst = 0f64;
        for i in 0..=200_000 {
            let x = -104.0 + i as f32 * (193.0 / 200_000.0);
            let (got, want) = (exp_f32(x) as f64, (x as f64).exp());
            if want < f32::MIN_POSITIVE as f64 {
                // Subnormal results: judged absolutely, at their own spacing.
                assert!((got - want).abs() <= 2e-45, "exp({x}) = {got}, want {want}");
            } else if want <= f32::MAX as f64 {
                worst = worst.max(((got - want) / want).abs());
            } else {
                assert_eq!(got, f64::INFINITY, "exp({x})");
            }
        }
        assert!(worst < 3e-7, "worst relative error {worst}");
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(0.0), 1.0);
    }

    #[test]
    fn last_dim_rows_match_the_blocked_path() {
        // Rows of odd lengths (remainders of the 8-lane blocks), with -inf entries as a
        // causal mask leaves them; the reference is the strided path of the same data.
        let x = arange(&[3, 37]).mapv(|v| (v * 0.21).cos() * 9.0);
        let mut masked = x.clone();
        masked[[1, 36]] = f32::NEG_INFINITY;
        masked[[2, 0]] = f32::NEG_INFINITY;
        for x in [x, masked] {
            let rows = softmax(&x, 1).unwrap();
            let blocked = softmax(&x.t().to_owned(), 0).unwrap().t().to_owned();
            for (a, b) in rows.iter().zip(blocked.iter()) {
                assert!((a - b).abs() <= 1e-6 * b.abs().max(1e-30), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn zero_d_and_nan_rows() {
        assert_eq!(softmax(&t(&[], &[3.0]), 0).unwrap()[[]], 1.0);
        let y = softmax(&t(&[1, 2], &[f32::NAN, 1.0]), 1).unwrap();
        assert!(y.iter().all(|v| v.is_nan()));
    }

    #[test]
    fn against_torch() {
        let fx = Fixture::load(include_str!("../../../tests/fixtures/kernels/softmax.json"));
        for case in fx.cases_with_prefix("softmax/") {
            let y = softmax(&case.input("x"), case.isize("dim")).unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
        for case in fx.cases_with_prefix("log_softmax/") {
            let y = log_softmax(&case.input("x"), case.isize("dim")).unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
    }
}
