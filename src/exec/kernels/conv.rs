//! Convolutions: conv1d, conv2d (stride, padding incl. "same"/"valid",
//! dilation, groups), and their transposed forms.
//!
//! conv2d lowers each (image, group) pair to one GEMM over an im2col buffer,
//! `out[g] (O/g × OH·OW) = W[g] (O/g × C/g·KH·KW) · cols (C/g·KH·KW × OH·OW)`;
//! bias and an optional activation (the fused `conv_bn_act`) are applied per
//! output block right after its GEMM, while it is still in cache, instead of
//! as separate passes over the whole output. The im2col buffer is kept per
//! thread between calls: allocating megabytes per convolution costs page
//! faults on every forward.
//!
//! With batch 1 there is one product per group, and on more than one thread
//! it is split into parts that each do their own im2col, GEMM and epilogue on
//! one thread (`split_product`): one fork and join per convolution instead of
//! one for the copy, several inside the GEMM and one for the epilogue, which
//! on a shared machine cost more in wake-ups than they saved.
//!
//! Three shapes skip that route: 1×1 stride-1 unpadded convolutions use the
//! input planes as the column matrix directly, depthwise convolutions
//! (one input channel per group) run a direct sliding-window loop, because
//! their per-group GEMMs are too small to amortise any GEMM's packing, and
//! 3×3 stride-1 convolutions whose kernel was transformed once per program
//! ([`WinogradWeights`], the fused conv + batch norm) run Winograd's F(2×2, 3×3)
//! with 2.25× fewer multiply-adds (`winograd`).
//!
//! conv1d and the transposed convolutions reuse the 2-D code with a unit
//! height.

use std::cell::Cell;

use ndarray::{ArrayView2, ArrayViewMut2, Axis};
use rayon::prelude::*;

use super::elementwise::{unary_slice, Unary};
use super::linear::{gemm_into, gemm_into_with};
use super::util::{contiguous_data, from_vec};
use super::{KernelError, Result, Tensor};

mod winograd;
pub use winograd::WinogradWeights;

/// Scratch buffers larger than this many elements are freed after use rather
/// than kept for the next call.
const SCRATCH_KEEP_MAX: usize = 1 << 24;

thread_local! {
    static SCRATCH: Cell<Vec<f32>> = const { Cell::new(Vec::new()) };
}

/// Runs `f` on this thread's scratch buffer, grown to `len`. Its contents are
/// left over from earlier calls: `f` must write every element it reads.
///
/// The buffer is taken out of the thread-local rather than borrowed, because
/// a rayon worker waiting inside a parallel GEMM may start another
/// convolution task on the same thread; that task then just gets a fresh
/// buffer.
fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [f32]) -> R) -> R {
    let mut buf = SCRATCH.with(Cell::take);
    if buf.len() < len {
        buf.resize(len, 0.0);
    }
    let r = f(&mut buf[..len]);
    if buf.len() <= SCRATCH_KEEP_MAX {
        SCRATCH.with(|s| s.set(buf));
    }
    r
}

/// Adds the bias of output channels `c0..` and applies `act` to a block of
/// consecutive `l`-element channel planes.
fn epilogue(
    block: &mut [f32],
    l: usize,
    c0: usize,
    bias: Option<&[f32]>,
    act: Unary,
    parallel: bool,
) {
    if bias.is_none() && act == Unary::Identity {
        return;
    }
    let plane = |(i, p): (usize, &mut [f32])| {
        if let Some(b) = bias {
            let bv = b[c0 + i];
            p.iter_mut().for_each(|v| *v += bv);
        }
        unary_slice(act, p);
    };
    if parallel && block.len() >= 1 << 15 {
        block.par_chunks_mut(l).enumerate().for_each(plane);
    } else {
        block.chunks_mut(l).enumerate().for_each(plane);
    }
}

/// The `padding=` argument of a convolution with `N` spatial dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConvPadding<const N: usize> {
    /// Zero padding of this many elements on both sides of each dimension.
    Explicit([usize; N]),
    /// `padding="same"`: output as large as the input (stride must be 1).
    /// When the total padding is odd, the extra element goes at the end, as
    /// in PyTorch.
    Same,
    /// `padding="valid"`: no padding.
    Valid,
}

impl<const N: usize> Default for ConvPadding<N> {
    fn default() -> Self {
        ConvPadding::Explicit([0; N])
    }
}

/// Arguments of `F.conv2d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Conv2dParams {
    pub stride: [usize; 2],
    pub padding: ConvPadding<2>,
    pub dilation: [usize; 2],
    pub groups: usize,
}

impl Default for Conv2dParams {
    fn default() -> Self {
        Conv2dParams {
            stride: [1, 1],
            padding: ConvPadding::default(),
            dilation: [1, 1],
            groups: 1,
        }
    }
}

/// Arguments of `F.conv1d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Conv1dParams {
    pub stride: usize,
    pub padding: ConvPadding<1>,
    pub dilation: usize,
    pub groups: usize,
}

impl Default for Conv1dParams {
    fn default() -> Self {
        Conv1dParams {
            stride: 1,
            padding: ConvPadding::default(),
            dilation: 1,
            groups: 1,
        }
    }
}

/// Arguments of `F.conv_transpose2d` (and, with a unit first entry, 1d).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConvTranspose2dParams {
    pub stride: [usize; 2],
    pub padding: [usize; 2],
    pub output_padding: [usize; 2],
    pub dilation: [usize; 2],
    pub groups: usize,
}

impl Default for ConvTranspose2dParams {
    fn default() -> Self {
        ConvTranspose2dParams {
            stride: [1, 1],
            padding: [0, 0],
            output_padding: [0, 0],
            dilation: [1, 1],
            groups: 1,
        }
    }
}

/// Fully resolved geometry of a 2-D convolution.
#[derive(Debug, Clone, Copy)]
struct Geom {
    n: usize,
    c_in: usize,
    h: usize,
    w: usize,
    c_out: usize,
    kh: usize,
    kw: usize,
    stride: [usize; 2],
    dilation: [usize; 2],
    /// Leading (top, left) padding; trailing padding only affects the
    /// output size, which is already folded into `oh`/`ow`.
    pad: [usize; 2],
    groups: usize,
    oh: usize,
    ow: usize,
}

impl Geom {
    fn cg(&self) -> usize {
        self.c_in / self.groups
    }
    fn og(&self) -> usize {
        self.c_out / self.groups
    }
}

/// Range of output positions `o` for which `o * stride + offset` falls in
/// `0..len`, clipped to `0..out`.
pub(super) fn valid_range(out: usize, stride: usize, offset: isize, len: usize) -> (usize, usize) {
    let s = stride as isize;
    let lo = if offset < 0 {
        ((-offset) + s - 1) / s
    } else {
        0
    };
    let last = len as isize - 1 - offset;
    let hi = if last < 0 { 0 } else { last / s + 1 };
    let lo = (lo as usize).min(out);
    let hi = (hi as usize).clamp(lo, out);
    (lo, hi)
}

fn check_positive(op: &'static str, shape: &[usize], what: &str, v: &[usize]) -> Result<()> {
    if v.contains(&0) {
        return Err(KernelError::invalid(
            op,
            shape,
            format!("{what} must be positive, got {v:?}"),
        ));
    }
    Ok(())
}

/// `F.conv2d(x, weight, bias, stride, padding, dilation, groups)` for
/// `x` of shape `(N, C, H, W)` or unbatched `(C, H, W)` and `weight` of
/// shape `(O, C/groups, KH, KW)`.
pub fn conv2d(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    p: &Conv2dParams,
) -> Result<Tensor> {
    conv2d_impl("conv2d", x, weight, None, bias, p, Unary::Identity)
}

/// `act(F.conv2d(...))` in one pass over the output.
pub fn conv2d_act(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    p: &Conv2dParams,
    act: Unary,
) -> Result<Tensor> {
    conv2d_impl("conv2d", x, weight, None, bias, p, act)
}

/// [`conv2d_act`] with `prepared`, `weight`'s Winograd transforms, which a 3×3 stride-1
/// convolution with enough outputs runs on (see `winograd`); other shapes ignore it.
pub fn conv2d_act_winograd(
    x: &Tensor,
    weight: &Tensor,
    prepared: &WinogradWeights,
    bias: Option<&Tensor>,
    p: &Conv2dParams,
    act: Unary,
) -> Result<Tensor> {
    conv2d_impl("conv2d", x, weight, Some(prepared), bias, p, act)
}

fn conv2d_impl(
    op: &'static str,
    x: &Tensor,
    weight: &Tensor,
    prepared: Option<&WinogradWeights>,
    bias: Option<&Tensor>,
    p: &Conv2dParams,
    act: Unary,
) -> Result<Tensor> {
    let unbatched = x.ndim() == 3;
    if x.ndim() != 4 && !unbatched {
        return Err(KernelError::shapes(
            op,
            x.shape(),
            weight.shape(),
            "input must be 3-D (C, H, W) or 4-D (N, C, H, W)",
        ));
    }
    if weight.ndim() != 4 {
        return Err(KernelError::shapes(
            op,
            x.shape(),
            weight.shape(),
            "weight must be 4-D (O, C/groups, KH, KW)",
        ));
    }
    let xs: Vec<usize> = if unbatched {
        [&[1], x.shape()].concat()
    } else {
        x.shape().to_vec()
    };
    let ws = weight.shape();
    check_positive(op, x.shape(), "stride", &p.stride)?;
    check_positive(op, x.shape(), "dilation", &p.dilation)?;
    if p.groups == 0 {
        return Err(KernelError::invalid(
            op,
            x.shape(),
            "groups must be positive",
        ));
    }
    let (c_in, h, w) = (xs[1], xs[2], xs[3]);
    let (c_out, wc, kh, kw) = (ws[0], ws[1], ws[2], ws[3]);
    if c_in % p.groups != 0 || c_out % p.groups != 0 {
        return Err(KernelError::shapes(
            op,
            x.shape(),
            ws,
            format!("input channels {c_in} and output channels {c_out} must both be divisible by groups={}", p.groups),
        ));
    }
    if wc != c_in / p.groups {
        return Err(KernelError::shapes(
            op,
            x.shape(),
            ws,
            format!("weight expects {} input channels per group but input has {c_in} channels for groups={}", wc, p.groups),
        ));
    }
    if let Some(b) = bias {
        if b.ndim() != 1 || b.len() != c_out {
            return Err(KernelError::shapes(
                op,
                ws,
                b.shape(),
                format!("bias must be 1-D with {c_out} elements"),
            ));
        }
    }
    let eff = [
        p.dilation[0] * (kh.max(1) - 1) + 1,
        p.dilation[1] * (kw.max(1) - 1) + 1,
    ];
    let (before, after) = match p.padding {
        ConvPadding::Explicit(pd) => (pd, pd),
        ConvPadding::Valid => ([0, 0], [0, 0]),
        ConvPadding::Same => {
            if p.stride != [1, 1] {
                return Err(KernelError::invalid(
                    op,
                    x.shape(),
                    "padding='same' is not supported for strided convolutions",
                ));
            }
            let total = [eff[0] - 1, eff[1] - 1];
            let before = [total[0] / 2, total[1] / 2];
            (before, [total[0] - before[0], total[1] - before[1]])
        }
    };
    let padded = [h + before[0] + after[0], w + before[1] + after[1]];
    if kh == 0 || kw == 0 || padded[0] < eff[0] || padded[1] < eff[1] {
        return Err(KernelError::shapes(
            op,
            x.shape(),
            ws,
            format!("padded input size {padded:?} is smaller than the dilated kernel size {eff:?}"),
        ));
    }
    let g = Geom {
        n: xs[0],
        c_in,
        h,
        w,
        c_out,
        kh,
        kw,
        stride: p.stride,
        dilation: p.dilation,
        pad: before,
        groups: p.groups,
        oh: (padded[0] - eff[0]) / p.stride[0] + 1,
        ow: (padded[1] - eff[1]) / p.stride[1] + 1,
    };
    let x_data = contiguous_data(x);
    let w_data = contiguous_data(weight);
    let b_data = bias.map(contiguous_data);
    let winograd = prepared.filter(|w| winograd::applies(&g, w));
    let out = if let Some(w) = winograd {
        winograd::conv(&g, &x_data, w, b_data.as_deref(), act)
    } else if g.cg() == 1 && g.groups > 1 {
        depthwise(&g, &x_data, &w_data, b_data.as_deref(), act)
    } else {
        im2col_conv(op, &g, &x_data, &w_data, b_data.as_deref(), act)?
    };
    let shape: Vec<usize> = if unbatched {
        vec![g.c_out, g.oh, g.ow]
    } else {
        vec![g.n, g.c_out, g.oh, g.ow]
    };
    from_vec(op, &shape, out)
}

/// Fills `cols` (`C/g·KH·KW` rows of `OH·OW`) with the receptive fields of
/// one image's group; rows are independent, so large buffers fill in
/// parallel, one input channel per task.
fn im2col(g: &Geom, planes: &[f32], cols: &mut [f32], parallel: bool) {
    let l = g.oh * g.ow;
    let rows_per_channel = g.kh * g.kw * l;
    let fill_channel = |(c, chunk): (usize, &mut [f32])| {
        im2col_channel(g, &planes[c * g.h * g.w..(c + 1) * g.h * g.w], chunk, 0, l);
    };
    if parallel && cols.len() >= 1 << 16 && g.cg() > 1 {
        cols.par_chunks_mut(rows_per_channel)
            .enumerate()
            .for_each(fill_channel);
    } else {
        cols.chunks_mut(rows_per_channel)
            .enumerate()
            .for_each(fill_channel);
    }
}

/// The `KH·KW` rows of one input channel's `plane`, restricted to the output
/// positions `first..first + width` (row-major over `OH × OW`): `rows` holds
/// `KH·KW` rows of `width`.
fn im2col_channel(g: &Geom, plane: &[f32], rows: &mut [f32], first: usize, width: usize) {
    for ki in 0..g.kh {
        for kj in 0..g.kw {
            let tap = ki * g.kw + kj;
            let row = &mut rows[tap * width..(tap + 1) * width];
            let col_off = (kj * g.dilation[1]) as isize - g.pad[1] as isize;
            let (lo, hi) = valid_range(g.ow, g.stride[1], col_off, g.w);
            // The segments walk output rows in order, so the position advances instead of
            // being divided out of `first + done` for every segment.
            let (mut next_oy, mut next_ox0) = (first / g.ow, first % g.ow);
            let mut done = 0;
            while done < width {
                let (oy, ox0) = (next_oy, next_ox0);
                (next_oy, next_ox0) = (oy + 1, 0);
                let ox1 = (ox0 + width - done).min(g.ow);
                let seg = &mut row[done..done + ox1 - ox0];
                done += ox1 - ox0;
                let ih = (oy * g.stride[0] + ki * g.dilation[0]) as isize - g.pad[0] as isize;
                if ih < 0 || ih >= g.h as isize {
                    seg.fill(0.0);
                    continue;
                }
                let (a, b) = (lo.clamp(ox0, ox1), hi.clamp(ox0, ox1));
                zero_padding(&mut seg[..a - ox0]);
                zero_padding(&mut seg[b - ox0..]);
                if a < b {
                    let srow = &plane[ih as usize * g.w..(ih as usize + 1) * g.w];
                    let start = ((a * g.stride[1]) as isize + col_off) as usize;
                    let run = &srow[start..start + (b - a - 1) * g.stride[1] + 1];
                    strided_copy(&mut seg[a - ox0..b - ox0], run, g.stride[1]);
                }
            }
        }
    }
}

/// Zeroes the padded columns at one end of a segment: usually the padding width, one or
/// two floats, where a `memset` call cost more than the stores.
#[inline(always)]
fn zero_padding(cols: &mut [f32]) {
    match cols {
        [] => {}
        [a] => *a = 0.0,
        [a, b] => (*a, *b) = (0.0, 0.0),
        _ => cols.fill(0.0),
    }
}

/// `dst[i] = run[i * stride]`, where `run` ends at the last element read.
#[inline(always)]
fn strided_copy(dst: &mut [f32], run: &[f32], stride: usize) {
    match stride {
        // Segments are one output row, often 7 to 56 floats: a `memcpy` call per segment
        // cost more than the copy. Fixed-size chunks compile to plain vector moves.
        1 => {
            let mut to = dst.chunks_exact_mut(8);
            let mut from = run.chunks_exact(8);
            for (d, s) in (&mut to).zip(&mut from) {
                let d: &mut [f32; 8] = d.try_into().expect("chunks of 8");
                *d = s.try_into().expect("chunks of 8");
            }
            for (d, s) in to.into_remainder().iter_mut().zip(from.remainder()) {
                *d = *s;
            }
        }
        2 => {
            // A constant stride lets the compiler vectorise the gather with
            // shuffles (`step_by` compiles to a scalar loop); the last
            // element has no pair.
            let (body, last) = dst.split_at_mut(dst.len() - 1);
            for (d, c) in body.iter_mut().zip(run.chunks_exact(2)) {
                *d = c[0];
            }
            last[0] = run[run.len() - 1];
        }
        _ => {
            for (d, c) in dst.iter_mut().zip(run.chunks(stride)) {
                *d = c[0];
            }
        }
    }
}

fn im2col_conv(
    op: &'static str,
    g: &Geom,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    act: Unary,
) -> Result<Vec<f32>> {
    let (cg, og, l) = (g.cg(), g.og(), g.oh * g.ow);
    let kk = cg * g.kh * g.kw;
    let mut out = vec![0.0f32; g.n * g.c_out * l];
    if out.is_empty() {
        return Ok(out);
    }
    let pointwise = g.kh == 1
        && g.kw == 1
        && g.stride == [1, 1]
        && g.pad == [0, 0]
        && g.oh == g.h
        && g.ow == g.w;
    let tasks = g.n * g.groups;
    // Several (image, group) products run side by side on rayon, each on one
    // thread; a single one is split inside the GEMM instead.
    let across_tasks = tasks > 1 && og * kk * l * tasks >= 1 << 20;
    let inner_parallel = !across_tasks;
    let internal = |_| KernelError::invalid(op, &[g.n, g.c_in, g.h, g.w], "internal layout error");
    // Task t computes group t % groups of image t / groups; its output block
    // is contiguous because channels of one group are adjacent.
    let task = |(t, out_block): (usize, &mut [f32])| -> Result<()> {
        let (img, grp) = (t / g.groups, t % g.groups);
        let planes =
            &x[(img * g.c_in + grp * cg) * g.h * g.w..(img * g.c_in + (grp + 1) * cg) * g.h * g.w];
        let wg = ArrayView2::from_shape((og, kk), &w[grp * og * kk..(grp + 1) * og * kk])
            .map_err(internal)?;
        let c = ArrayViewMut2::from_shape((og, l), &mut *out_block).map_err(internal)?;
        if pointwise {
            let cols = ArrayView2::from_shape((kk, l), planes).map_err(internal)?;
            gemm_into_with(1.0, wg, cols, 0.0, c, inner_parallel);
        } else {
            with_scratch(kk * l, |buf| -> Result<()> {
                im2col(g, planes, buf, inner_parallel);
                let cols = ArrayView2::from_shape((kk, l), &*buf).map_err(internal)?;
                gemm_into_with(1.0, wg, cols, 0.0, c, inner_parallel);
                Ok(())
            })?;
        }
        epilogue(out_block, l, grp * og, bias, act, inner_parallel);
        Ok(())
    };
    let threads = rayon::current_num_threads();
    if across_tasks {
        out.par_chunks_mut(og * l).enumerate().try_for_each(task)?;
    } else if threads > 1 && og * kk * l >= 1 << 20 {
        for (t, out_block) in out.chunks_mut(og * l).enumerate() {
            split_product(op, g, t, x, w, bias, act, out_block, threads)?;
        }
    } else {
        out.chunks_mut(og * l).enumerate().try_for_each(task)?;
    }
    Ok(out)
}

/// Output positions per tile below which a product is split by output
/// channels instead.
const MIN_TILE_COLS: usize = 128;

/// One (image, group) product spread over `threads`, every part an
/// im2col + GEMM + epilogue on one thread, so that a convolution is one
/// fork and join rather than one each for the copy, the GEMM and the
/// epilogue, and each part's columns are still in its cache for its GEMM.
///
/// Wide outputs (early layers) split their output positions into tiles, each
/// with its own column block; narrow ones (late layers, where the weights are
/// the larger operand) share one column matrix and split the output channels.
/// Twice as many parts as threads let a thread that is preempted on a shared
/// machine hand work to the other.
#[allow(clippy::too_many_arguments)]
fn split_product(
    op: &'static str,
    g: &Geom,
    t: usize,
    x: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    act: Unary,
    out_block: &mut [f32],
    threads: usize,
) -> Result<()> {
    let (cg, og, l) = (g.cg(), g.og(), g.oh * g.ow);
    let taps = g.kh * g.kw;
    let kk = cg * taps;
    let (img, grp) = (t / g.groups, t % g.groups);
    let plane = g.h * g.w;
    let planes = &x[(img * g.c_in + grp * cg) * plane..(img * g.c_in + (grp + 1) * cg) * plane];
    let internal = |_| KernelError::invalid(op, &[g.n, g.c_in, g.h, g.w], "internal layout error");
    let wg = ArrayView2::from_shape((og, kk), &w[grp * og * kk..(grp + 1) * og * kk])
        .map_err(internal)?;
    let parts = 2 * threads;
    let pointwise = g.kh == 1 && g.kw == 1 && g.stride == [1, 1] && g.pad == [0, 0];
    if l >= parts * MIN_TILE_COLS {
        let width = l.div_ceil(parts);
        let mut c = ArrayViewMut2::from_shape((og, l), out_block).map_err(internal)?;
        let tiles: Vec<_> = c.axis_chunks_iter_mut(Axis(1), width).enumerate().collect();
        return tiles.into_par_iter().try_for_each(|(i, mut tile)| {
            let (first, n) = (i * width, tile.dim().1);
            if pointwise {
                let cols = ArrayView2::from_shape((kk, l), planes).map_err(internal)?;
                let cols = cols.slice(ndarray::s![.., first..first + n]);
                gemm_into_with(1.0, wg, cols, 0.0, tile.view_mut(), false);
            } else {
                with_scratch(kk * n, |buf| -> Result<()> {
                    for (c, rows) in buf.chunks_exact_mut(taps * n).enumerate() {
                        im2col_channel(g, &planes[c * plane..(c + 1) * plane], rows, first, n);
                    }
                    let cols = ArrayView2::from_shape((kk, n), &*buf).map_err(internal)?;
                    gemm_into_with(1.0, wg, cols, 0.0, tile.view_mut(), false);
                    Ok(())
                })?;
            }
            for (o, mut row) in tile.rows_mut().into_iter().enumerate() {
                if let Some(row) = row.as_slice_mut() {
                    epilogue(row, n, grp * og + o, bias, act, false);
                }
            }
            Ok(())
        });
    }
    let slab = og.div_ceil(parts).max(1);
    let by_channels = |cols: ArrayView2<'_, f32>, out_block: &mut [f32]| -> Result<()> {
        out_block
            .par_chunks_mut(slab * l)
            .enumerate()
            .try_for_each(|(i, block)| {
                let rows = block.len() / l;
                let a = wg.slice(ndarray::s![i * slab..i * slab + rows, ..]);
                let c = ArrayViewMut2::from_shape((rows, l), &mut *block).map_err(internal)?;
                gemm_into_with(1.0, a, cols, 0.0, c, false);
                epilogue(block, l, grp * og + i * slab, bias, act, false);
                Ok(())
            })
    };
    if pointwise {
        by_channels(
            ArrayView2::from_shape((kk, l), planes).map_err(internal)?,
            out_block,
        )
    } else {
        with_scratch(kk * l, |buf| {
            im2col(g, planes, buf, true);
            by_channels(
                ArrayView2::from_shape((kk, l), &*buf).map_err(internal)?,
                out_block,
            )
        })
    }
}

/// Direct convolution for one input channel per group, `O/g` outputs each.
fn depthwise(g: &Geom, x: &[f32], w: &[f32], bias: Option<&[f32]>, act: Unary) -> Vec<f32> {
    let (og, l) = (g.og(), g.oh * g.ow);
    let mut out = vec![0.0f32; g.n * g.c_out * l];
    if out.is_empty() {
        return out;
    }
    let [s0, s1] = g.stride;
    let [d0, d1] = g.dilation;
    let dims = PadDims {
        hp: (g.oh - 1) * s0 + (g.kh - 1) * d0 + 1,
        pw: g.ow + (g.kw - 1) * d1 / s1,
    };
    let plane_len = g.h * g.w;
    let per_plane = |(t, dst): (usize, &mut [f32])| {
        let (img, oc) = (t / g.c_out, t % g.c_out);
        let ic = oc / og;
        let src = &x[(img * g.c_in + ic) * plane_len..(img * g.c_in + ic + 1) * plane_len];
        let taps = &w[oc * g.kh * g.kw..(oc + 1) * g.kh * g.kw];
        let b = bias.map_or(0.0, |b| b[oc]);
        with_scratch(dims.hp * s1 * dims.pw, |pad| {
            depthwise_plane(g, dims, src, taps, b, pad, dst);
        });
        unary_slice(act, dst);
    };
    if out.len() * g.kh * g.kw >= 1 << 18 {
        out.par_chunks_mut(l).enumerate().for_each(per_plane);
    } else {
        out.chunks_mut(l).enumerate().for_each(per_plane);
    }
    out
}

/// Rows (`hp`) and columns per stride phase (`pw`) of the padded plane that
/// the output positions of a depthwise convolution reach.
#[derive(Clone, Copy)]
struct PadDims {
    hp: usize,
    pw: usize,
}

/// One output plane of a depthwise convolution, with the widest vectors the
/// CPU has: the baseline x86-64 target only allows 4-lane SSE, and this loop
/// is bound by arithmetic, not memory.
fn depthwise_plane(
    g: &Geom,
    dims: PadDims,
    src: &[f32],
    taps: &[f32],
    b: f32,
    pad: &mut [f32],
    dst: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has just been checked to support AVX2.
        unsafe { depthwise_plane_avx2(g, dims, src, taps, b, pad, dst) };
        return;
    }
    depthwise_plane_body(g, dims, src, taps, b, pad, dst);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn depthwise_plane_avx2(
    g: &Geom,
    dims: PadDims,
    src: &[f32],
    taps: &[f32],
    b: f32,
    pad: &mut [f32],
    dst: &mut [f32],
) {
    depthwise_plane_body(g, dims, src, taps, b, pad, dst);
}

/// Copies the input plane into a zero-padded scratch plane whose rows are
/// split into `stride` phases (phase `r` holds padded columns `r, r + s,
/// r + 2s, …`), so that every kernel tap then reads a contiguous,
/// always-valid run of one phase row: the accumulation loops have no bounds
/// juggling or strided loads, for any stride, padding and dilation.
#[inline(always)]
fn depthwise_plane_body(
    g: &Geom,
    dims: PadDims,
    src: &[f32],
    taps: &[f32],
    b: f32,
    pad: &mut [f32],
    dst: &mut [f32],
) {
    let [s0, s1] = g.stride;
    let [d0, d1] = g.dilation;
    let pw = dims.pw;
    for (rp, prow) in pad.chunks_exact_mut(s1 * pw).enumerate() {
        let ih = rp as isize - g.pad[0] as isize;
        if ih < 0 || ih >= g.h as isize {
            prow.fill(0.0);
            continue;
        }
        let srow = &src[ih as usize * g.w..(ih as usize + 1) * g.w];
        for (r, phase) in prow.chunks_exact_mut(pw).enumerate() {
            // Padded column j·s1 + r is input column j·s1 + r − pad.
            let off = r as isize - g.pad[1] as isize;
            let (lo, hi) = valid_range(pw, s1, off, g.w);
            phase[..lo].fill(0.0);
            phase[hi..].fill(0.0);
            if lo < hi {
                let start = ((lo * s1) as isize + off) as usize;
                let run = &srow[start..start + (hi - lo - 1) * s1 + 1];
                strided_copy(&mut phase[lo..hi], run, s1);
            }
        }
    }
    let pad: &[f32] = pad;
    // Tap (ki, kj) of output row `oy` reads this run of a phase row.
    let tap_row = move |oy: usize, ki: usize, kj: usize| {
        let c = kj * d1;
        let base = ((oy * s0 + ki * d0) * s1 + c % s1) * pw + c / s1;
        &pad[base..base + g.ow]
    };
    for (oy, drow) in dst.chunks_exact_mut(g.ow).enumerate() {
        drow.fill(b);
        for ki in 0..g.kh {
            let wr = &taps[ki * g.kw..(ki + 1) * g.kw];
            if g.kw == 3 {
                let (a0, a1, a2) = (tap_row(oy, ki, 0), tap_row(oy, ki, 1), tap_row(oy, ki, 2));
                let (w0, w1, w2) = (wr[0], wr[1], wr[2]);
                for (((d, &v0), &v1), &v2) in drow.iter_mut().zip(a0).zip(a1).zip(a2) {
                    *d += w0 * v0 + w1 * v1 + w2 * v2;
                }
            } else {
                for (kj, &wv) in wr.iter().enumerate() {
                    for (d, &v) in drow.iter_mut().zip(tap_row(oy, ki, kj)) {
                        *d += wv * v;
                    }
                }
            }
        }
    }
}

/// Inserts a unit height so that 1-D inputs can run through the 2-D code.
fn add_unit_height(op: &'static str, t: &Tensor, rank_ok: &[usize]) -> Result<Tensor> {
    if !rank_ok.contains(&t.ndim()) {
        return Err(KernelError::invalid(
            op,
            t.shape(),
            format!("expected a tensor of rank {rank_ok:?}"),
        ));
    }
    let mut shape = t.shape().to_vec();
    shape.insert(t.ndim() - 1, 1);
    let data = contiguous_data(t).into_owned();
    from_vec(op, &shape, data)
}

fn drop_unit_height(op: &'static str, t: Tensor) -> Result<Tensor> {
    let mut shape = t.shape().to_vec();
    shape.remove(t.ndim() - 2);
    let data = t.into_raw_vec_and_offset().0;
    from_vec(op, &shape, data)
}

/// `F.conv1d` for `x` of shape `(N, C, L)` or `(C, L)` and `weight` of
/// shape `(O, C/groups, K)`.
pub fn conv1d(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    p: &Conv1dParams,
) -> Result<Tensor> {
    const OP: &str = "conv1d";
    if weight.ndim() != 3 {
        return Err(KernelError::shapes(
            OP,
            x.shape(),
            weight.shape(),
            "weight must be 3-D (O, C/groups, K)",
        ));
    }
    let x4 = add_unit_height(OP, x, &[2, 3]).map_err(|_| {
        KernelError::shapes(
            OP,
            x.shape(),
            weight.shape(),
            "input must be 2-D (C, L) or 3-D (N, C, L)",
        )
    })?;
    let w4 = add_unit_height(OP, weight, &[3])?;
    let p2 = Conv2dParams {
        stride: [1, p.stride],
        padding: match p.padding {
            ConvPadding::Explicit([pd]) => ConvPadding::Explicit([0, pd]),
            ConvPadding::Same => ConvPadding::Same,
            ConvPadding::Valid => ConvPadding::Valid,
        },
        dilation: [1, p.dilation],
        groups: p.groups,
    };
    let y = conv2d_impl(OP, &x4, &w4, None, bias, &p2, Unary::Identity)
        .map_err(|e| rename_shapes(e, x.shape(), weight.shape()))?;
    drop_unit_height(OP, y)
}

/// Reports errors raised on the internal 4-D tensors with the caller's shapes.
fn rename_shapes(e: KernelError, x: &[usize], w: &[usize]) -> KernelError {
    match e {
        KernelError::ShapeMismatch { op, reason, .. } => KernelError::ShapeMismatch {
            op,
            lhs: x.to_vec(),
            rhs: w.to_vec(),
            reason,
        },
        KernelError::InvalidArgument { op, reason, .. } => KernelError::InvalidArgument {
            op,
            shape: x.to_vec(),
            reason,
        },
        other => other,
    }
}

/// `F.conv_transpose2d` for `x` of shape `(N, C, H, W)` or `(C, H, W)` and
/// `weight` of shape `(C, O/groups, KH, KW)`.
///
/// Computed as the adjoint of conv2d: one GEMM per (image, group) gives
/// every input pixel's contribution to each kernel tap, and col2im adds
/// them into the strided output positions.
pub fn conv_transpose2d(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    p: &ConvTranspose2dParams,
) -> Result<Tensor> {
    conv_transpose2d_impl("conv_transpose2d", x, weight, bias, p)
}

fn conv_transpose2d_impl(
    op: &'static str,
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    p: &ConvTranspose2dParams,
) -> Result<Tensor> {
    let unbatched = x.ndim() == 3;
    if x.ndim() != 4 && !unbatched {
        return Err(KernelError::shapes(
            op,
            x.shape(),
            weight.shape(),
            "input must be 3-D (C, H, W) or 4-D (N, C, H, W)",
        ));
    }
    if weight.ndim() != 4 {
        return Err(KernelError::shapes(
            op,
            x.shape(),
            weight.shape(),
            "weight must be 4-D (C, O/groups, KH, KW)",
        ));
    }
    check_positive(op, x.shape(), "stride", &p.stride)?;
    check_positive(op, x.shape(), "dilation", &p.dilation)?;
    if p.groups == 0 {
        return Err(KernelError::invalid(
            op,
            x.shape(),
            "groups must be positive",
        ));
    }
    for i in 0..2 {
        if p.output_padding[i] >= p.stride[i] && p.output_padding[i] >= p.dilation[i] {
            return Err(KernelError::invalid(
                op,
                x.shape(),
                "output padding must be smaller than either stride or dilation",
            ));
        }
    }
    let xs: Vec<usize> = if unbatched {
        [&[1], x.shape()].concat()
    } else {
        x.shape().to_vec()
    };
    let ws = weight.shape();
    let (n, c_in, h, w) = (xs[0], xs[1], xs[2], xs[3]);
    let (wc, og, kh, kw) = (ws[0], ws[1], ws[2], ws[3]);
    if wc != c_in {
        return Err(KernelError::shapes(
            op,
            x.shape(),
            ws,
            format!("weight expects {wc} input channels, input has {c_in}"),
        ));
    }
    if c_in % p.groups != 0 {
        return Err(KernelError::shapes(
            op,
            x.shape(),
            ws,
            format!("input channels {c_in} not divisible by groups={}", p.groups),
        ));
    }
    let c_out = og * p.groups;
    if let Some(b) = bias {
        if b.ndim() != 1 || b.len() != c_out {
            return Err(KernelError::shapes(
                op,
                ws,
                b.shape(),
                format!("bias must be 1-D with {c_out} elements"),
            ));
        }
    }
    let size = |i: usize, len: usize, k: usize| -> Option<usize> {
        let full = (len.checked_sub(1)?) * p.stride[i]
            + p.dilation[i] * (k.checked_sub(1)?)
            + p.output_padding[i]
            + 1;
        full.checked_sub(2 * p.padding[i]).filter(|&s| s > 0)
    };
    let (oh, ow) = match (size(0, h, kh), size(1, w, kw)) {
        (Some(a), Some(b)) => (a, b),
        _ => {
            return Err(KernelError::shapes(
                op,
                x.shape(),
                ws,
                "the output would have no elements",
            ));
        }
    };
    let cg = c_in / p.groups;
    let (l_in, l_out) = (h * w, oh * ow);
    let rows = og * kh * kw;
    let x_data = contiguous_data(x);
    let w_data = contiguous_data(weight);
    let b_data = bias.map(contiguous_data);
    let internal = |_| KernelError::invalid(op, x.shape(), "internal layout error");
    let mut out = vec![0.0f32; n * c_out * l_out];
    let task = |(t, out_block): (usize, &mut [f32])| -> Result<()> {
        let (img, grp) = (t / p.groups, t % p.groups);
        let xg = ArrayView2::from_shape(
            (cg, l_in),
            &x_data[(img * c_in + grp * cg) * l_in..][..cg * l_in],
        )
        .map_err(internal)?;
        let wg = ArrayView2::from_shape((cg, rows), &w_data[grp * cg * rows..][..cg * rows])
            .map_err(internal)?;
        let mut cols = vec![0.0f32; rows * l_in];
        let cv = ArrayViewMut2::from_shape((rows, l_in), &mut cols[..]).map_err(internal)?;
        gemm_into(1.0, wg.t(), xg, 0.0, cv);
        // col2im: scatter-add each tap's plane into the output.
        for oc in 0..og {
            let dst = &mut out_block[oc * l_out..(oc + 1) * l_out];
            if let Some(b) = &b_data {
                dst.fill(b[grp * og + oc]);
            }
            for ki in 0..kh {
                for kj in 0..kw {
                    let src = &cols[((oc * kh + ki) * kw + kj) * l_in..][..l_in];
                    let col_off = (kj * p.dilation[1]) as isize - p.padding[1] as isize;
                    // Input columns whose output column lands inside 0..ow.
                    let (lo, hi) = valid_range(w, p.stride[1], col_off, ow);
                    if lo == hi {
                        continue;
                    }
                    for iy in 0..h {
                        let oy = (iy * p.stride[0] + ki * p.dilation[0]) as isize
                            - p.padding[0] as isize;
                        if oy < 0 || oy >= oh as isize {
                            continue;
                        }
                        let drow = &mut dst[oy as usize * ow..(oy as usize + 1) * ow];
                        let srow = &src[iy * w + lo..iy * w + hi];
                        let start = ((lo * p.stride[1]) as isize + col_off) as usize;
                        for (d, s) in drow[start..].iter_mut().step_by(p.stride[1]).zip(srow) {
                            *d += s;
                        }
                    }
                }
            }
        }
        Ok(())
    };
    if !out.is_empty() {
        let tasks = n * p.groups;
        if tasks > 1 && rows * cg * l_in * tasks >= 1 << 20 {
            out.par_chunks_mut(og * l_out)
                .enumerate()
                .try_for_each(task)?;
        } else {
            out.chunks_mut(og * l_out).enumerate().try_for_each(task)?;
        }
    }
    let shape: Vec<usize> = if unbatched {
        vec![c_out, oh, ow]
    } else {
        vec![n, c_out, oh, ow]
    };
    from_vec(op, &shape, out)
}

/// `F.conv_transpose1d` for `x` of shape `(N, C, L)` or `(C, L)` and
/// `weight` of shape `(C, O/groups, K)`; scalar parameters as in PyTorch.
#[allow(clippy::too_many_arguments)]
pub fn conv_transpose1d(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: usize,
    padding: usize,
    output_padding: usize,
    groups: usize,
    dilation: usize,
) -> Result<Tensor> {
    const OP: &str = "conv_transpose1d";
    if weight.ndim() != 3 {
        return Err(KernelError::shapes(
            OP,
            x.shape(),
            weight.shape(),
            "weight must be 3-D (C, O/groups, K)",
        ));
    }
    let x4 = add_unit_height(OP, x, &[2, 3]).map_err(|_| {
        KernelError::shapes(
            OP,
            x.shape(),
            weight.shape(),
            "input must be 2-D (C, L) or 3-D (N, C, L)",
        )
    })?;
    let w4 = add_unit_height(OP, weight, &[3])?;
    let p2 = ConvTranspose2dParams {
        stride: [1, stride],
        padding: [0, padding],
        output_padding: [0, output_padding],
        dilation: [1, dilation],
        groups,
    };
    let y = conv_transpose2d_impl(OP, &x4, &w4, bias, &p2)
        .map_err(|e| rename_shapes(e, x.shape(), weight.shape()))?;
    drop_unit_height(OP, y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testutil::{arange, assert_close, assert_close_f32, t, Fixture};

    fn fixture() -> Fixture {
        Fixture::load(include_str!("../../../tests/fixtures/kernels/conv.json"))
    }

    /// Straightforward seven-loop convolution used as an in-crate oracle.
    fn naive_conv2d(
        x: &Tensor,
        w: &Tensor,
        b: Option<&Tensor>,
        s: [usize; 2],
        pd: [usize; 2],
        d: [usize; 2],
        groups: usize,
    ) -> Tensor {
        let (n, c, h, wd) = (x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]);
        let (o, cg, kh, kw) = (w.shape()[0], w.shape()[1], w.shape()[2], w.shape()[3]);
        let oh = (h + 2 * pd[0] - d[0] * (kh - 1) - 1) / s[0] + 1;
        let ow = (wd + 2 * pd[1] - d[1] * (kw - 1) - 1) / s[1] + 1;
        let og = o / groups;
        let _ = c;
        let mut y = Tensor::zeros(ndarray::IxDyn(&[n, o, oh, ow]));
        for ni in 0..n {
            for oc in 0..o {
                let grp = oc / og;
                for oy in 0..oh {
                    for ox in 0..ow {
                        let mut acc = b.map_or(0.0, |b| b[[oc]] as f64);
                        for ci in 0..cg {
                            for ki in 0..kh {
                                for kj in 0..kw {
                                    let iy = (oy * s[0] + ki * d[0]) as isize - pd[0] as isize;
                                    let ix = (ox * s[1] + kj * d[1]) as isize - pd[1] as isize;
                                    if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < wd
                                    {
                                        acc += x[[ni, grp * cg + ci, iy as usize, ix as usize]]
                                            as f64
                                            * w[[oc, ci, ki, kj]] as f64;
                                    }
                                }
                            }
                        }
                        y[[ni, oc, oy, ox]] = acc as f32;
                    }
                }
            }
        }
        y
    }

    #[test]
    fn hand_checked_3x3_sum_kernel() {
        // All-ones 3x3 kernel with padding 1 counts each pixel's neighbourhood.
        let x = Tensor::ones(ndarray::IxDyn(&[1, 1, 3, 3]));
        let w = Tensor::ones(ndarray::IxDyn(&[1, 1, 3, 3]));
        let p = Conv2dParams {
            padding: ConvPadding::Explicit([1, 1]),
            ..Default::default()
        };
        let y = conv2d(&x, &w, Some(&t(&[1], &[0.5])), &p).unwrap();
        assert_eq!(
            y,
            t(
                &[1, 1, 3, 3],
                &[4.5, 6.5, 4.5, 6.5, 9.5, 6.5, 4.5, 6.5, 4.5]
            )
        );
    }

    #[test]
    fn matches_naive_loops_across_configurations() {
        // stride, padding, dilation, groups, c_in, c_out
        type Config = ([usize; 2], [usize; 2], [usize; 2], usize, usize, usize);
        let configs: &[Config] = &[
            ([1, 1], [0, 0], [1, 1], 1, 3, 4),
            ([2, 1], [1, 2], [1, 1], 1, 3, 5),
            ([1, 2], [2, 1], [2, 1], 3, 6, 9),
            ([3, 3], [0, 1], [1, 3], 2, 4, 2),
            ([1, 1], [1, 1], [1, 1], 4, 4, 8), // depthwise with multiplier 2
            ([2, 3], [1, 0], [2, 2], 5, 5, 5), // strided dilated depthwise
        ];
        for &(s, pd, d, groups, c, o) in configs {
            let x = arange(&[2, c, 9, 11]).mapv(|v| (v * 0.731).sin());
            let w = arange(&[o, c / groups, 3, 2]).mapv(|v| (v * 0.377).cos());
            let b = arange(&[o]).mapv(|v| v * 0.1 - 0.2);
            let p = Conv2dParams {
                stride: s,
                padding: ConvPadding::Explicit(pd),
                dilation: d,
                groups,
            };
            let got = conv2d(&x, &w, Some(&b), &p).unwrap();
            let want = naive_conv2d(&x, &w, Some(&b), s, pd, d, groups);
            assert_close_f32(&format!("{p:?}"), &got, &want, 1e-5);
        }
    }

    #[test]
    fn depthwise_and_fused_activation_match_naive_loops() {
        // The depthwise kernel has its own path for 3-wide kernels and for
        // stride 2; each is checked with odd and even padding, a second
        // image and a channel multiplier. The tolerance is above the 1e-5
        // of the test above because these inputs cancel more: the third
        // config reaches 2.4e-5 here, and 2.5e-5 with the taps summed one by
        // one in f32 as the previous kernel did, so it is f32 rounding of a
        // 9-term sum, not a kernel error (which would show as O(1)).
        // stride, padding, dilation, kernel (h, w), c, o
        type Config = ([usize; 2], [usize; 2], [usize; 2], [usize; 2], usize, usize);
        let configs: &[Config] = &[
            ([1, 1], [1, 1], [1, 1], [3, 3], 4, 4),
            ([2, 2], [1, 1], [1, 1], [3, 3], 4, 4),
            ([2, 2], [0, 2], [1, 1], [3, 3], 3, 6),
            ([1, 2], [2, 2], [2, 1], [5, 5], 3, 3),
            ([3, 3], [1, 2], [1, 2], [3, 3], 2, 4),
            ([2, 1], [0, 0], [1, 1], [1, 4], 2, 2),
        ];
        for &(s, pd, d, [kh, kw], c, o) in configs {
            let x = arange(&[2, c, 10, 13]).mapv(|v| (v * 0.731).sin());
            let w = arange(&[o, 1, kh, kw]).mapv(|v| (v * 0.377).cos());
            let b = arange(&[o]).mapv(|v| v * 0.1 - 0.2);
            let p = Conv2dParams {
                stride: s,
                padding: ConvPadding::Explicit(pd),
                dilation: d,
                groups: c,
            };
            let want = naive_conv2d(&x, &w, Some(&b), s, pd, d, c);
            let got = conv2d(&x, &w, Some(&b), &p).unwrap();
            assert_close_f32(&format!("{p:?} {kh}x{kw}"), &got, &want, 5e-5);
            let got = conv2d_act(&x, &w, Some(&b), &p, Unary::Relu6).unwrap();
            let want6 = want.mapv(|v| v.clamp(0.0, 6.0));
            assert_close_f32(&format!("relu6 {p:?} {kh}x{kw}"), &got, &want6, 5e-5);
        }
        // The GEMM route applies bias and activation after its product.
        let x = arange(&[2, 3, 9, 8]).mapv(|v| (v * 0.531).sin());
        let w = arange(&[5, 3, 3, 3]).mapv(|v| (v * 0.277).cos());
        let b = arange(&[5]).mapv(|v| v * 0.3 - 0.5);
        let p = Conv2dParams {
            padding: ConvPadding::Explicit([1, 1]),
            ..Default::default()
        };
        let want = naive_conv2d(&x, &w, Some(&b), [1, 1], [1, 1], [1, 1], 1).mapv(|v| v.max(0.0));
        let got = conv2d_act(&x, &w, Some(&b), &p, Unary::Relu).unwrap();
        assert_close_f32("conv2d_act relu", &got, &want, 5e-5);
    }

    #[test]
    fn products_split_over_threads_match_naive_loops() {
        // Large enough (≥ 2^20 multiply-adds per product) for `split_product`, on a pool of
        // two threads: wide outputs split into tiles of output positions (tiles end
        // mid-row), narrow ones by output channels; 3×3 with stride, padding, dilation and
        // non-square inputs, and 1×1 without im2col. Batched and grouped inputs, which
        // spread whole products over the threads instead, are checked alongside, and every
        // case also on one thread.
        // (input shape, output channels, kernel, stride, padding, dilation, groups)
        type Config = (
            [usize; 4],
            usize,
            [usize; 2],
            [usize; 2],
            [usize; 2],
            [usize; 2],
            usize,
        );
        let configs: [Config; 7] = [
            ([1, 16, 27, 25], 24, [3, 3], [1, 1], [1, 1], [1, 1], 1),
            ([2, 16, 29, 23], 24, [3, 3], [1, 1], [1, 1], [1, 1], 1),
            ([1, 16, 31, 27], 40, [3, 5], [2, 1], [2, 1], [1, 2], 1),
            ([1, 16, 15, 13], 48, [3, 3], [1, 1], [1, 0], [1, 1], 1),
            ([1, 32, 9, 11], 96, [3, 3], [1, 1], [2, 2], [2, 2], 1),
            ([1, 64, 24, 30], 48, [1, 1], [1, 1], [0, 0], [1, 1], 1),
            ([1, 128, 13, 11], 72, [1, 1], [1, 1], [0, 0], [1, 1], 2),
        ];
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        for (xs, o, k, s, pd, d, groups) in configs {
            let x = arange(&xs).mapv(|v| (v * 0.377).sin());
            let w = arange(&[o, xs[1] / groups, k[0], k[1]]).mapv(|v| (v * 0.191).cos() * 0.2);
            let b = arange(&[o]).mapv(|v| v * 0.05 - 1.0);
            let p = Conv2dParams {
                stride: s,
                padding: ConvPadding::Explicit(pd),
                dilation: d,
                groups,
            };
            let want = naive_conv2d(&x, &w, Some(&b), s, pd, d, groups).mapv(|v| v.max(0.0));
            let name = format!("{xs:?} -> {o} {k:?} s{s:?} p{pd:?} d{d:?} g{groups}");
            let split = two
                .install(|| conv2d_act(&x, &w, Some(&b), &p, Unary::Relu))
                .unwrap();
            assert_close_f32(&name, &split, &want, 5e-5);
            let serial = one
                .install(|| conv2d_act(&x, &w, Some(&b), &p, Unary::Relu))
                .unwrap();
            assert_close_f32(&format!("serial {name}"), &serial, &want, 5e-5);
        }
    }

    #[test]
    fn pointwise_and_unbatched() {
        let x = arange(&[3, 4, 5]).mapv(|v| v * 0.1);
        let w = arange(&[2, 3, 1, 1]);
        let y = conv2d(&x, &w, None, &Conv2dParams::default()).unwrap();
        assert_eq!(y.shape(), &[2, 4, 5]);
        let x4 = x
            .clone()
            .into_shape_with_order(ndarray::IxDyn(&[1, 3, 4, 5]))
            .unwrap();
        let want = naive_conv2d(&x4, &w, None, [1, 1], [0, 0], [1, 1], 1);
        assert_close_f32(
            "pointwise",
            &y,
            &want
                .into_shape_with_order(ndarray::IxDyn(&[2, 4, 5]))
                .unwrap(),
            1e-6,
        );
    }

    #[test]
    fn same_padding_with_even_kernel_pads_the_end() {
        let x = arange(&[1, 1, 4, 4]);
        let w = Tensor::ones(ndarray::IxDyn(&[1, 1, 2, 2]));
        let p = Conv2dParams {
            padding: ConvPadding::Same,
            ..Default::default()
        };
        let y = conv2d(&x, &w, None, &p).unwrap();
        assert_eq!(y.shape(), &[1, 1, 4, 4]);
        // Top-left output sums x[0..2, 0..2] = 0 + 1 + 4 + 5.
        assert_eq!(y[[0, 0, 0, 0]], 10.0);
        // Bottom-right output only sees x[3,3] = 15 plus padding.
        assert_eq!(y[[0, 0, 3, 3]], 15.0);
        let strided = Conv2dParams {
            stride: [2, 2],
            padding: ConvPadding::Same,
            ..Default::default()
        };
        assert!(conv2d(&x, &w, None, &strided).is_err());
    }

    #[test]
    fn bad_shapes_are_errors_not_panics() {
        let x = arange(&[1, 4, 5, 5]);
        let p = Conv2dParams::default();
        assert!(conv2d(&x, &arange(&[2, 3, 3, 3]), None, &p).is_err());
        assert!(conv2d(&x, &arange(&[2, 4, 7, 3]), None, &p).is_err());
        assert!(conv2d(
            &x,
            &arange(&[3, 2, 3, 3]),
            None,
            &Conv2dParams { groups: 2, ..p }
        )
        .is_err());
        assert!(conv2d(&x, &arange(&[2, 4, 3, 3]), Some(&arange(&[3])), &p).is_err());
        assert!(conv2d(&arange(&[4, 5]), &arange(&[2, 4, 3, 3]), None, &p).is_err());
        assert!(conv2d(
            &x,
            &arange(&[2, 4, 3, 3]),
            None,
            &Conv2dParams {
                stride: [0, 1],
                ..p
            }
        )
        .is_err());
        assert!(conv1d(
            &arange(&[1, 4, 5]),
            &arange(&[2, 3, 3]),
            None,
            &Conv1dParams::default()
        )
        .is_err());
        let e = conv2d(&x, &arange(&[2, 3, 3, 3]), None, &p).unwrap_err();
        assert!(
            e.to_string().contains("[1, 4, 5, 5]") && e.to_string().contains("[2, 3, 3, 3]"),
            "{e}"
        );
        let tp = ConvTranspose2dParams {
            output_padding: [2, 0],
            stride: [2, 2],
            ..Default::default()
        };
        assert!(conv_transpose2d(&x, &arange(&[4, 2, 3, 3]), None, &tp).is_err());
    }

    fn conv2d_case(case: &crate::exec::kernels::testutil::Case<'_>) -> Tensor {
        let padding = match case.param("padding") {
            serde_json::Value::String(s) if s == "same" => ConvPadding::Same,
            serde_json::Value::String(s) if s == "valid" => ConvPadding::Valid,
            _ => ConvPadding::Explicit(case.pair("padding")),
        };
        let p = Conv2dParams {
            stride: case.pair("stride"),
            padding,
            dilation: case.pair("dilation"),
            groups: case.usize("groups"),
        };
        conv2d(
            &case.input("x"),
            &case.input("weight"),
            case.input_opt("bias").as_ref(),
            &p,
        )
        .unwrap()
    }

    #[test]
    fn conv2d_against_torch() {
        let fx = fixture();
        for case in fx.cases_with_prefix("conv2d/") {
            assert_close(&case.name, &conv2d_case(&case), &case.expected(), 1e-5);
        }
    }

    #[test]
    fn conv1d_against_torch() {
        let fx = fixture();
        for case in fx.cases_with_prefix("conv1d/") {
            let padding = match case.param("padding") {
                serde_json::Value::String(s) if s == "same" => ConvPadding::Same,
                _ => ConvPadding::Explicit([case.usize("padding")]),
            };
            let p = Conv1dParams {
                stride: case.usize("stride"),
                padding,
                dilation: case.usize("dilation"),
                groups: case.usize("groups"),
            };
            let y = conv1d(
                &case.input("x"),
                &case.input("weight"),
                case.input_opt("bias").as_ref(),
                &p,
            )
            .unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
    }

    #[test]
    fn conv_transpose_against_torch() {
        let fx = fixture();
        for case in fx.cases_with_prefix("conv_transpose2d/") {
            let p = ConvTranspose2dParams {
                stride: case.pair("stride"),
                padding: case.pair("padding"),
                output_padding: case.pair("output_padding"),
                dilation: case.pair("dilation"),
                groups: case.usize("groups"),
            };
            let y = conv_transpose2d(
                &case.input("x"),
                &case.input("weight"),
                case.input_opt("bias").as_ref(),
                &p,
            )
            .unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
        let case = fx.case("conv_transpose1d");
        let y = conv_transpose1d(
            &case.input("x"),
            &case.input("weight"),
            case.input_opt("bias").as_ref(),
            case.usize("stride"),
            case.usize("padding"),
            case.usize("output_padding"),
            case.usize("groups"),
            case.usize("dilation"),
        )
        .unwrap();
        assert_close("conv_transpose1d", &y, &case.expected(), 1e-5);
    }
}
