//! `F.scaled_dot_product_attention` in one pass over blocks of query rows.
//!
//! The composition `softmax(q @ kᵀ · scale + mask) @ v` copied `kᵀ` and `v` into
//! row-major buffers, scaled and softmaxed the whole score tensor in separate passes, and
//! spread the products over threads one head at a time (three heads on two threads leave
//! one idle for a third of the time). Here each task takes a block of query rows of one
//! head (see [`blocks_per_head`] for their size): its scores go to a scratch block that
//! stays in cache, the scale rides on the product (`alpha`), the mask is added and the
//! rows are normalised in place, and the block's output rows are written straight into
//! the result. The products read the operands through their strides, so nothing is copied.

use ndarray::{s, ArrayView2, ArrayViewD, ArrayViewMut2, Axis, IxDyn};
use rayon::prelude::*;

use super::elementwise::broadcast_shapes;
use super::linear::gemm_into_with;
use super::softmax::softmax_rows;
use super::{KernelError, Result, Tensor};

/// What is added to the scores before the softmax.
#[derive(Clone, Copy)]
pub enum AttnMask<'a> {
    None,
    /// `is_causal=True`: query `i` sees keys `0..=i` (top-left aligned, as torch's).
    Causal,
    /// A float mask, added to the scores; broadcasts to `(..., L, S)`.
    Add(&'a Tensor),
    /// A boolean mask (as 0/1): `true` keeps a score, `false` makes it `-inf`.
    Keep(&'a Tensor),
}

/// The most scores one task keeps in its scratch block (256 KiB): well inside a core's L2,
/// so the softmax and the second product read them from cache.
const MAX_SCORES_PER_TASK: usize = 1 << 16;

/// How many blocks of query rows each head is cut into when `heads` heads of `l` queries
/// against `s_len` keys run on `threads` threads.
///
/// Every product repacks all of `kᵀ` and `v` whatever its number of rows, so blocks are as
/// large as they can be: just enough of them that every thread gets the same number
/// (ViT-tiny's 3 heads on 2 threads: 2 blocks of 99 rows each, where 32-row blocks made
/// 21 tasks of small products), more only when the scores of a block would not fit
/// [`MAX_SCORES_PER_TASK`].
fn blocks_per_head(heads: usize, l: usize, s_len: usize, threads: usize) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let threads = threads.max(1);
    let balanced = threads / gcd(heads.max(1), threads);
    let max_rows = (MAX_SCORES_PER_TASK / s_len.max(1)).max(1);
    let rows = l.div_ceil(balanced);
    let blocks = balanced * rows.div_ceil(max_rows).max(1);
    blocks.clamp(1, l.max(1))
}

/// Below this many multiply-adds the whole attention runs on the calling thread.
const PARALLEL_MIN_MACS: usize = 1 << 20;

/// `softmax(q @ kᵀ · scale + mask) @ v` for `q (..., L, E)`, `k (..., S, E)`, `v (..., S, Ev)`,
/// the leading dimensions broadcasting as in `matmul`.
pub fn scaled_dot_product_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    scale: f32,
    mask: AttnMask<'_>,
) -> Result<Tensor> {
    const OP: &str = "scaled_dot_product_attention";
    for t in [q, k, v] {
        if t.ndim() < 2 {
            return Err(KernelError::invalid(
                OP,
                t.shape(),
                "query, key and value must be at least 2-D",
            ));
        }
    }
    let split = |t: &Tensor| {
        let n = t.ndim();
        (
            t.shape()[..n - 2].to_vec(),
            t.shape()[n - 2],
            t.shape()[n - 1],
        )
    };
    let (lead_q, l, e) = split(q);
    let (lead_k, s_len, ek) = split(k);
    let (lead_v, sv, ev) = split(v);
    if ek != e {
        return Err(KernelError::shapes(
            OP,
            q.shape(),
            k.shape(),
            "query and key have different embedding sizes",
        ));
    }
    if sv != s_len {
        return Err(KernelError::shapes(
            OP,
            k.shape(),
            v.shape(),
            "key and value have different sequence lengths",
        ));
    }
    let mut lead = broadcast_shapes(OP, &lead_q, &lead_k)?;
    lead = broadcast_shapes(OP, &lead, &lead_v)?;
    let mask_view = match mask {
        AttnMask::Add(m) | AttnMask::Keep(m) => {
            let mut full = lead.clone();
            full.extend([l, s_len]);
            Some(m.broadcast(IxDyn(&full)).ok_or_else(|| {
                KernelError::shapes(
                    OP,
                    m.shape(),
                    &full,
                    "attn_mask does not broadcast to the scores",
                )
            })?)
        }
        AttnMask::None | AttnMask::Causal => None,
    };
    let (qs, ks, vs) = (
        broadcast_matrices(q, &lead),
        broadcast_matrices(k, &lead),
        broadcast_matrices(v, &lead),
    );
    let masks = mask_view.map(matrices_of);

    let mut out_shape = lead.clone();
    out_shape.extend([l, ev]);
    let mut out = Tensor::zeros(IxDyn(&out_shape));
    if out.is_empty() {
        return Ok(out);
    }
    if s_len == 0 {
        // No keys: the weights are an empty (L, 0) matrix and the product is zeros.
        return Ok(out);
    }
    let macs = qs.len() * l * s_len * (e + ev);
    let parallel = macs >= PARALLEL_MIN_MACS;
    let threads = if parallel {
        rayon::current_num_threads()
    } else {
        1
    };
    let blocks = blocks_per_head(qs.len(), l, s_len, threads);
    let data = out.as_slice_mut().expect("fresh tensors are row-major");
    let mut tasks: Vec<(usize, usize, &mut [f32])> = Vec::new();
    for (head, mut rows) in data.chunks_mut(l * ev).enumerate() {
        // Block `b` is rows `b·l/blocks ..`, so sizes differ by at most one row.
        for b in 0..blocks {
            let (first, end) = (b * l / blocks, (b + 1) * l / blocks);
            let (block, rest) = std::mem::take(&mut rows).split_at_mut((end - first) * ev);
            tasks.push((head, first, block));
            rows = rest;
        }
    }
    let run = |scores: &mut Vec<f32>, (head, first, out_rows): (usize, usize, &mut [f32])| {
        let rows = out_rows.len() / ev;
        scores.resize(rows * s_len, 0.0);
        let mut sc = ArrayViewMut2::from_shape((rows, s_len), &mut scores[..])
            .expect("scratch sized to the block");
        let q_rows = qs[head].slice(s![first..first + rows, ..]);
        gemm_into_with(scale, q_rows, ks[head].t(), 0.0, sc.view_mut(), false);
        match (&mask, &masks) {
            (AttnMask::Causal, _) => {
                for (r, mut row) in sc.outer_iter_mut().enumerate() {
                    let visible = (first + r + 1).min(s_len);
                    row.slice_mut(s![visible..]).fill(f32::NEG_INFINITY);
                }
            }
            (AttnMask::Add(_), Some(ms)) => {
                sc += &ms[head].slice(s![first..first + rows, ..]);
            }
            (AttnMask::Keep(_), Some(ms)) => {
                sc.zip_mut_with(&ms[head].slice(s![first..first + rows, ..]), |x, &keep| {
                    if keep == 0.0 {
                        *x = f32::NEG_INFINITY;
                    }
                });
            }
            _ => {}
        }
        softmax_rows(&mut scores[..], s_len);
        let p = ArrayView2::from_shape((rows, s_len), &scores[..]).expect("scratch sized");
        let o = ArrayViewMut2::from_shape((rows, ev), out_rows).expect("block of output rows");
        gemm_into_with(1.0, p, vs[head], 0.0, o, false);
    };
    if parallel && tasks.len() > 1 {
        tasks.into_par_iter().for_each_init(Vec::new, run);
    } else {
        let mut scratch = Vec::new();
        for task in tasks {
            run(&mut scratch, task);
        }
    }
    Ok(out)
}

/// The trailing matrices of `t` with its leading dimensions broadcast to `lead` (checked
/// by the caller to broadcast).
fn broadcast_matrices<'a>(t: &'a Tensor, lead: &[usize]) -> Vec<ArrayView2<'a, f32>> {
    let n = t.ndim();
    let mut full = lead.to_vec();
    full.extend_from_slice(&t.shape()[n - 2..]);
    matrices_of(
        t.broadcast(IxDyn(&full))
            .expect("leading dimensions broadcast"),
    )
}

/// The trailing 2-D matrices of `t`, in row-major order of its leading indices.
fn matrices_of(t: ArrayViewD<'_, f32>) -> Vec<ArrayView2<'_, f32>> {
    if t.ndim() == 2 {
        return vec![t.into_dimensionality().expect("2-D")];
    }
    let n = t.shape()[0];
    (0..n)
        .flat_map(|i| matrices_of(t.clone().index_axis_move(Axis(0), i)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testutil::{arange, assert_close, Fixture};
    use crate::exec::kernels::{matmul, softmax};
    use ndarray::ArrayD;

    #[test]
    fn against_torch() {
        let fx = Fixture::load(include_str!(
            "../../../tests/fixtures/kernels/attention.json"
        ));
        for name in [
            "plain",
            "causal",
            "scale",
            "broadcast_batch",
            "float_mask",
            "bool_mask",
        ] {
            let case = fx.case(name);
            let (q, k, v) = (case.input("q"), case.input("k"), case.input("v"));
            let e = *q.shape().last().unwrap();
            let scale = case
                .param_opt("scale")
                .map_or(1.0 / (e as f32).sqrt(), |_| case.f32("scale"));
            let (add, keep) = (case.input_opt("mask"), case.input_opt("keep"));
            let mask = match (&add, &keep) {
                (Some(m), _) => AttnMask::Add(m),
                (_, Some(m)) => AttnMask::Keep(m),
                _ if case.param_opt("is_causal").is_some() => AttnMask::Causal,
                _ => AttnMask::None,
            };
            let y = scaled_dot_product_attention(&q, &k, &v, scale, mask).unwrap();
            assert_close(name, &y, &case.expected(), 1e-5);
        }
    }

    /// Attention by its definition, in f64, one output at a time.
    fn naive(q: &Tensor, k: &Tensor, v: &Tensor, scale: f64, causal: bool) -> ArrayD<f64> {
        let [b, h, l, e] = q.shape().try_into().unwrap();
        let (s, ev) = (k.shape()[2], v.shape()[3]);
        let mut out = ArrayD::zeros(IxDyn(&[b, h, l, ev]));
        for (bi, hi, i) in
            (0..b).flat_map(|bi| (0..h).flat_map(move |hi| (0..l).map(move |i| (bi, hi, i))))
        {
            let visible = if causal { i + 1 } else { s };
            let scores: Vec<f64> = (0..visible)
                .map(|j| {
                    (0..e)
                        .map(|d| q[[bi, hi, i, d]] as f64 * k[[bi, hi, j, d]] as f64)
                        .sum::<f64>()
                        * scale
                })
                .collect();
            let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let w: Vec<f64> = scores.iter().map(|x| (x - m).exp()).collect();
            let z: f64 = w.iter().sum();
            for c in 0..ev {
                out[[bi, hi, i, c]] = (0..visible)
                    .map(|j| w[j] / z * v[[bi, hi, j, c]] as f64)
                    .sum();
            }
        }
        out
    }

    #[test]
    fn vit_sized_heads_split_over_threads_match_the_definition() {
        // ViT-tiny's attention: 3 heads of 197 tokens and 64 channels, large enough for the
        // parallel path.
        let qkv = arange(&[1, 197, 3, 3, 64]).mapv(|x| (x * 0.37).sin());
        let qkv = qkv.permuted_axes(IxDyn(&[2, 0, 3, 1, 4]));
        let part = |i: usize| qkv.index_axis(Axis(0), i).to_owned();
        // A key stored transposed (channels outer), read through its strides.
        let transposed = |i: usize| {
            let swap = IxDyn(&[0, 1, 3, 2]);
            let t = part(i)
                .permuted_axes(swap.clone())
                .as_standard_layout()
                .into_owned();
            t.permuted_axes(swap)
        };
        let (q, k, v) = (part(0), transposed(1), part(2));
        assert!(k.as_slice().is_none());
        let scale = 0.125;
        for causal in [false, true] {
            let mask = if causal {
                AttnMask::Causal
            } else {
                AttnMask::None
            };
            let y = scaled_dot_product_attention(&q, &k, &v, scale, mask).unwrap();
            // The f32 products of 197 terms against exact sums: the fixtures' 1e-5 is for
            // 37 keys.
            let name = format!("vit causal={causal}");
            assert_close(&name, &y, &naive(&q, &k, &v, scale as f64, causal), 5e-5);
            // Against the unfused composition in f32 (all heads at once, no row blocks):
            // the same roundings, so far closer.
            let mut scores = matmul(&q, &k.view().permuted_axes(IxDyn(&[0, 1, 3, 2])).to_owned())
                .unwrap()
                .mapv(|x| x * scale);
            if causal {
                for ((.., i, j), x) in scores
                    .view_mut()
                    .into_dimensionality::<ndarray::Ix4>()
                    .unwrap()
                    .indexed_iter_mut()
                {
                    if j > i {
                        *x = f32::NEG_INFINITY;
                    }
                }
            }
            let composed = matmul(&softmax(&scores, -1).unwrap(), &v).unwrap();
            assert_close(&name, &y, &composed.mapv(|x| x as f64), 1e-6);
        }
    }

    #[test]
    fn row_blocks_give_every_thread_the_same_number_and_fit_the_scratch() {
        // ViT-tiny: 3 heads on 2 threads make 6 blocks of 99 and 98 rows.
        assert_eq!(blocks_per_head(3, 197, 197, 2), 2);
        assert_eq!(blocks_per_head(12, 197, 197, 2), 1);
        assert_eq!(blocks_per_head(3, 197, 197, 4), 4);
        assert_eq!(blocks_per_head(3, 197, 197, 1), 1);
        for (heads, l, s_len, threads) in [(3, 4096, 4096, 2), (1, 1000, 300, 3), (5, 7, 9, 8)] {
            let blocks = blocks_per_head(heads, l, s_len, threads);
            assert!(blocks <= l, "{blocks} blocks of {l} rows");
            let rows = l.div_ceil(blocks);
            assert!(
                rows * s_len <= MAX_SCORES_PER_TASK || rows == 1,
                "{rows} rows"
            );
            if blocks < l {
                assert_eq!(heads * blocks % threads, 0, "{heads} heads x {blocks}");
            }
        }
        // Blocks of one row each when there are more threads than rows.
        assert_eq!(blocks_per_head(1, 3, 5, 8), 3);
    }

    #[test]
    fn shape_errors_name_the_operands() {
        let q = arange(&[2, 4, 8]);
        let e = scaled_dot_product_attention(&q, &arange(&[2, 4, 7]), &q, 1.0, AttnMask::None)
            .unwrap_err();
        assert!(matches!(e, KernelError::ShapeMismatch { .. }), "{e}");
        let e = scaled_dot_product_attention(&q, &q, &arange(&[2, 5, 8]), 1.0, AttnMask::None)
            .unwrap_err();
        assert!(e.to_string().contains("sequence lengths"), "{e}");
        let bad_mask = arange(&[3, 3]);
        let e =
            scaled_dot_product_attention(&q, &q, &q, 1.0, AttnMask::Add(&bad_mask)).unwrap_err();
        assert!(e.to_string().contains("attn_mask"), "{e}");
        assert!(scaled_dot_product_attention(&arange(&[4]), &q, &q, 1.0, AttnMask::None).is_err());
    }

    #[test]
    fn no_keys_give_zeros() {
        let q = arange(&[1, 3, 4]);
        let kv = Tensor::zeros(IxDyn(&[1, 0, 4]));
        let y = scaled_dot_product_attention(&q, &kv, &kv, 1.0, AttnMask::None).unwrap();
        assert_eq!(y, Tensor::zeros(IxDyn(&[1, 3, 4])));
    }
}
