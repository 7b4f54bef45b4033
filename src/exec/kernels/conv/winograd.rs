//! 3×3 stride-1 convolutions by Winograd's minimal filtering F(2×2, 3×3) (Lavin and Gray,
//! "Fast Algorithms for Convolutional Neural Networks", 2015).
//!
//! Each 2×2 block of outputs comes from a 4×4 input tile: the tile and the kernel are
//! transformed (`Bᵀ d B`, `G g Gᵀ`), multiplied element by element and transformed back
//! (`Aᵀ m A`). Over all channels the elementwise products become 16 independent matrix
//! products, `M[ξ] (O × T) = U[ξ] (O × C) · V[ξ] (C × T)` for the T tiles: 16·C·O·T
//! multiply-adds where im2col's product takes 36·C·O·T, so ResNet's 3×3 layers do 2.25×
//! fewer. The transformed kernel `U` is made once per program ([`WinogradWeights`]), not per
//! call: for 512 channels it is 16 MB.
//!
//! The transforms add and subtract at most four values with coefficients 1 and ½, so the
//! result stays within the accuracy the kernels promise (`tests` compare with the im2col
//! route; `tests/exec_numeric.rs` runs ResNet-18 through it against PyTorch).

use ndarray::{ArrayView2, ArrayViewMut2, ShapeBuilder};
use rayon::prelude::*;

use super::{epilogue, with_scratch, Geom};
use crate::exec::kernels::elementwise::Unary;
use crate::exec::kernels::linear::gemm_into_with;
use crate::exec::kernels::Tensor;

/// Input channels below which im2col stays the faster route: the products' depth is the
/// channel count, and a few channels leave the transforms most of the work (a 3 → 16 → 32
/// channel CNN ran 3.8× slower on batches of 8). The gain was measured from 64 up.
const MIN_CHANNELS: usize = 64;

/// Output positions below which im2col stays the faster route (a 7×7 output's 16 tiles
/// still gain: measured with 512 channels).
const MIN_OUTPUTS: usize = 7 * 7;

/// Transformed tiles and products, in bytes, above which a convolution with fewer than
/// [`MIN_CHANNELS_OUT_OF_CACHE`] input channels stays on im2col: 64 channels at 56×56 hold
/// 6.4 MB, written and read back outside the cache, and ran no faster (at 28×28, 1.6 MB,
/// they ran 1.5× faster, and so did 128 channels at 56×56).
const IN_CACHE_BYTES: usize = 4 << 20;
const MIN_CHANNELS_OUT_OF_CACHE: usize = 128;

/// A 3×3 kernel's transforms `U[ξ] = (G g Gᵀ)[ξ]`, stored `[ξ][out][in]`.
#[derive(Debug)]
pub struct WinogradWeights {
    c_out: usize,
    c_in: usize,
    u: Vec<f32>,
}

impl WinogradWeights {
    /// The transforms of `weight` `(O, C, 3, 3)`; None for any other shape.
    pub fn new(weight: &Tensor) -> Option<WinogradWeights> {
        let &[c_out, c_in, 3, 3] = weight.shape() else {
            return None;
        };
        let w = weight.as_standard_layout();
        let w = w.as_slice()?;
        let mut u = vec![0.0f32; 16 * c_out * c_in];
        for o in 0..c_out {
            for c in 0..c_in {
                let g = &w[(o * c_in + c) * 9..(o * c_in + c + 1) * 9];
                // G g: rows g0, (g0+g1+g2)/2, (g0-g1+g2)/2, g2 of the kernel's rows.
                let mut t = [[0.0f32; 3]; 4];
                for j in 0..3 {
                    let (g0, g1, g2) = (g[j], g[3 + j], g[6 + j]);
                    t[0][j] = g0;
                    t[1][j] = 0.5 * (g0 + g1 + g2);
                    t[2][j] = 0.5 * (g0 - g1 + g2);
                    t[3][j] = g2;
                }
                // (G g) Gᵀ, the same on the columns.
                for (r, row) in t.iter().enumerate() {
                    let (a, b, c2) = (row[0], row[1], row[2]);
                    let cols = [a, 0.5 * (a + b + c2), 0.5 * (a - b + c2), c2];
                    for (k, v) in cols.into_iter().enumerate() {
                        u[((r * 4 + k) * c_out + o) * c_in + c] = v;
                    }
                }
            }
        }
        Some(WinogradWeights { c_out, c_in, u })
    }
}

/// Whether a convolution of geometry `g` with `weights` runs here: 3×3, stride and
/// dilation 1, one group, and enough input channels and outputs to pay for the transforms.
pub(super) fn applies(g: &Geom, weights: &WinogradWeights) -> bool {
    g.kh == 3
        && g.kw == 3
        && g.stride == [1, 1]
        && g.dilation == [1, 1]
        && g.groups == 1
        && g.c_in == weights.c_in
        && g.c_out == weights.c_out
        && g.c_in >= MIN_CHANNELS
        && g.oh * g.ow >= MIN_OUTPUTS
        && ((g.c_in + g.c_out) * 16 * tiles(g) * std::mem::size_of::<f32>() <= IN_CACHE_BYTES
            || g.c_in >= MIN_CHANNELS_OUT_OF_CACHE)
}

/// The convolution of `x` (NCHW, contiguous) as [`applies`] allows, bias and `act` applied:
/// input transforms per channel, the 16 products, output transforms per channel, each step
/// split on rayon.
pub(super) fn conv(
    g: &Geom,
    x: &[f32],
    weights: &WinogradWeights,
    bias: Option<&[f32]>,
    act: Unary,
) -> Vec<f32> {
    let tw = g.ow.div_ceil(2);
    let tiles = tiles(g);
    let (c_in, c_out) = (g.c_in, g.c_out);
    let l = g.oh * g.ow;
    let mut out = vec![0.0f32; g.n * c_out * l];
    with_scratch((c_in + c_out) * 16 * tiles, |buf| {
        let (v, m) = buf.split_at_mut(c_in * 16 * tiles);
        for img in 0..g.n {
            let planes = &x[img * c_in * g.h * g.w..(img + 1) * c_in * g.h * g.w];
            // V stored [channel][ξ][tile]: each channel's transforms are one block.
            v.par_chunks_mut(16 * tiles)
                .enumerate()
                .for_each(|(c, block)| {
                    transform_input(g, &planes[c * g.h * g.w..(c + 1) * g.h * g.w], block, tw)
                });
            // M stored [ξ][out][tile]: the 16 products write disjoint blocks.
            let v = &*v;
            m.par_chunks_mut(c_out * tiles)
                .enumerate()
                .for_each(|(xi, block)| {
                    let a = ArrayView2::from_shape(
                        (c_out, c_in),
                        &weights.u[xi * c_out * c_in..(xi + 1) * c_out * c_in],
                    )
                    .expect("U block");
                    let b = ArrayView2::from_shape(
                        (c_in, tiles).strides((16 * tiles, 1)),
                        &v[xi * tiles..],
                    )
                    .expect("V rows");
                    let c = ArrayViewMut2::from_shape((c_out, tiles), block).expect("M block");
                    gemm_into_with(1.0, a, b, 0.0, c, false);
                });
            let m = &*m;
            out[img * c_out * l..(img + 1) * c_out * l]
                .par_chunks_mut(l)
                .enumerate()
                .for_each(|(o, plane)| {
                    transform_output(g, m, o, tiles, tw, plane);
                    epilogue(plane, l, o, bias, act, false);
                });
        }
    });
    out
}

fn tiles(g: &Geom) -> usize {
    g.oh.div_ceil(2) * g.ow.div_ceil(2)
}

/// `Bᵀ d B` of every 4×4 tile of one input `plane` (zero outside it), into `block`
/// `[ξ][tile]`; tiles start every 2 rows and columns, `pad` before the plane.
fn transform_input(g: &Geom, plane: &[f32], block: &mut [f32], tw: usize) {
    let n = block.len() / 16;
    let (h, w) = (g.h as isize, g.w as isize);
    for i in 0..n {
        let (ty, tx) = (i / tw, i % tw);
        let y0 = (2 * ty) as isize - g.pad[0] as isize;
        let x0 = (2 * tx) as isize - g.pad[1] as isize;
        let mut d = [[0.0f32; 4]; 4];
        let inside = y0 >= 0 && x0 >= 0 && y0 + 4 <= h && x0 + 4 <= w;
        for (r, row) in d.iter_mut().enumerate() {
            let y = y0 + r as isize;
            if inside {
                let at = (y * w + x0) as usize;
                row.copy_from_slice(&plane[at..at + 4]);
            } else if (0..h).contains(&y) {
                for (k, v) in row.iter_mut().enumerate() {
                    let x = x0 + k as isize;
                    if (0..w).contains(&x) {
                        *v = plane[(y * w + x) as usize];
                    }
                }
            }
        }
        // Bᵀ d: rows d0-d2, d1+d2, d2-d1, d1-d3; then the same on the columns.
        let mut rows = [[0.0f32; 4]; 4];
        for k in 0..4 {
            rows[0][k] = d[0][k] - d[2][k];
            rows[1][k] = d[1][k] + d[2][k];
            rows[2][k] = d[2][k] - d[1][k];
            rows[3][k] = d[1][k] - d[3][k];
        }
        for (r, row) in rows.iter().enumerate() {
            let cols = [
                row[0] - row[2],
                row[1] + row[2],
                row[2] - row[1],
                row[1] - row[3],
            ];
            for (k, v) in cols.into_iter().enumerate() {
                block[(r * 4 + k) * n + i] = v;
            }
        }
    }
}

/// `Aᵀ m A` of output channel `o`'s `n` tiles, each a 2×2 block of `plane` (clipped at its
/// edges).
fn transform_output(g: &Geom, m: &[f32], o: usize, n: usize, tw: usize, plane: &mut [f32]) {
    let c_out = g.c_out;
    let at = |xi: usize, i: usize| m[(xi * c_out + o) * n + i];
    for i in 0..n {
        let (ty, tx) = (i / tw, i % tw);
        // Aᵀ m: rows m0+m1+m2 and m1-m2-m3; then the same on the columns.
        let mut rows = [[0.0f32; 4]; 2];
        for k in 0..4 {
            let (m0, m1, m2, m3) = (at(k, i), at(4 + k, i), at(8 + k, i), at(12 + k, i));
            rows[0][k] = m0 + m1 + m2;
            rows[1][k] = m1 - m2 - m3;
        }
        for (r, row) in rows.iter().enumerate() {
            let y = 2 * ty + r;
            if y >= g.oh {
                continue;
            }
            let pair = [row[0] + row[1] + row[2], row[1] - row[2] - row[3]];
            for (k, v) in pair.into_iter().enumerate() {
                let x = 2 * tx + k;
                if x < g.ow {
                    plane[y * g.ow + x] = v;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::conv::{conv2d_act, conv2d_act_winograd, Conv2dParams, ConvPadding};
    use crate::exec::kernels::init::{uniform, Rng};

    fn seeded(shape: &[usize], seed: u64) -> Tensor {
        uniform(shape, -1.0, 1.0, &mut Rng::new(seed))
    }

    /// Against the im2col route: odd and even sizes (tiles clipped at the edges), padding 0, 1
    /// and 2, a batch of two, bias and an activation.
    #[test]
    fn agrees_with_im2col() {
        let cases: &[(usize, usize, usize, usize, usize, usize)] = &[
            // (n, c_in, c_out, h, w, pad)
            (1, 64, 5, 16, 16, 1),
            (2, 64, 4, 15, 17, 1),
            (1, 80, 16, 20, 14, 0),
            (1, 64, 6, 14, 19, 2),
            (1, 64, 64, 28, 28, 1),
            (1, 128, 96, 9, 8, 1),
        ];
        for (i, &(n, c_in, c_out, h, w, pad)) in cases.iter().enumerate() {
            let x = seeded(&[n, c_in, h, w], i as u64);
            let weight = seeded(&[c_out, c_in, 3, 3], 100 + i as u64);
            let bias = seeded(&[c_out], 200 + i as u64);
            let p = Conv2dParams {
                padding: ConvPadding::Explicit([pad, pad]),
                ..Default::default()
            };
            let prepared = WinogradWeights::new(&weight).expect("a 3x3 kernel");
            let p4 = [n, c_in, h, w];
            assert!(
                takes_winograd(&p4, &weight, &p),
                "case {i} takes the Winograd route"
            );
            for act in [Unary::Identity, Unary::Relu] {
                let direct = conv2d_act(&x, &weight, Some(&bias), &p, act).unwrap();
                let fast =
                    conv2d_act_winograd(&x, &weight, &prepared, Some(&bias), &p, act).unwrap();
                assert_eq!(direct.shape(), fast.shape(), "case {i}");
                let scale = (c_in * 9) as f32;
                let worst = direct
                    .iter()
                    .zip(fast.iter())
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0f32, f32::max);
                // Inputs and weights in [-1, 1]: outputs up to c_in·9; both routes round a few
                // ulps of that (seen: at most 5.3e-8 of it).
                assert!(worst <= 4e-7 * scale, "case {i} {act:?}: {worst}");
            }
        }
    }

    /// Whether a convolution of `x_shape` with `weight` and `p` runs on its transforms.
    fn takes_winograd(x_shape: &[usize; 4], weight: &Tensor, p: &Conv2dParams) -> bool {
        let prepared = WinogradWeights::new(weight).unwrap();
        let ws = weight.shape();
        let pad = match p.padding {
            ConvPadding::Explicit(pd) => pd,
            _ => unreachable!("explicit padding in these tests"),
        };
        let out = |len: usize, i: usize| (len + 2 * pad[i] - 3) / p.stride[i] + 1;
        let g = Geom {
            n: x_shape[0],
            c_in: x_shape[1],
            h: x_shape[2],
            w: x_shape[3],
            c_out: ws[0],
            kh: ws[2],
            kw: ws[3],
            stride: p.stride,
            dilation: p.dilation,
            pad,
            groups: p.groups,
            oh: out(x_shape[2], 0),
            ow: out(x_shape[3], 1),
        };
        applies(&g, &prepared)
    }

    #[test]
    fn only_3x3_stride_1_kernels_on_enough_channels_and_outputs_take_it() {
        assert!(WinogradWeights::new(&seeded(&[4, 4, 5, 5], 1)).is_none());
        let padded = Conv2dParams {
            padding: ConvPadding::Explicit([1, 1]),
            ..Default::default()
        };
        let strided = Conv2dParams {
            stride: [2, 2],
            ..padded
        };
        let w64 = seeded(&[64, 64, 3, 3], 1);
        assert!(takes_winograd(&[1, 64, 28, 28], &w64, &padded));
        // 6×6 outputs: below MIN_OUTPUTS.
        assert!(!takes_winograd(&[1, 64, 6, 6], &w64, &padded));
        assert!(!takes_winograd(&[1, 64, 40, 40], &w64, &strided));
        // 64 channels at 56×56: their transforms outgrow the cache; 128 channels pay for it.
        assert!(!takes_winograd(&[1, 64, 56, 56], &w64, &padded));
        let w128 = seeded(&[128, 128, 3, 3], 2);
        assert!(takes_winograd(&[1, 128, 56, 56], &w128, &padded));
        // Few input channels.
        let w16 = seeded(&[32, 16, 3, 3], 3);
        assert!(!takes_winograd(&[8, 16, 32, 32], &w16, &padded));
        // Where it does not apply, the transforms are ignored: the same numbers as im2col.
        let x = seeded(&[8, 16, 32, 32], 4);
        let prepared = WinogradWeights::new(&w16).unwrap();
        let a = conv2d_act(&x, &w16, None, &padded, Unary::Identity).unwrap();
        let b = conv2d_act_winograd(&x, &w16, &prepared, None, &padded, Unary::Identity).unwrap();
        assert_eq!(a, b);
    }
}
