//! Matrix products: `matmul` with torch's broadcasting, `bmm`, `addmm`,
//! `linear` and a fused `linear_act`.
//!
//! All products go through `gemm_into` on 2-D views (the `gemm` crate, see
//! there), which accepts arbitrary strides, so transposed weights are never
//! copied.

use ndarray::{ArrayView2, ArrayViewMut2, Ix2, IxDyn};
use rayon::prelude::*;

use super::elementwise::{broadcast_shapes, unary_inplace, Unary};
use super::util::{contiguous_data, from_vec};
use super::{KernelError, Result, Tensor};

/// Below this many multiply-adds a batch of products is not worth spreading
/// across threads: the scheduling would dominate.
const PARALLEL_MIN_MACS: usize = 1 << 20;

/// `c = alpha * a @ b + beta * c` on 2-D views, shapes already checked; with
/// `beta == 0` the old contents of `c` are never read (NaNs in it vanish).
///
/// The default build hands the product to the `gemm` crate, which reads any
/// strides (transposed weights and column blocks need no copy) and splits
/// large products across rayon's pool itself, with a finer partition than
/// row slabs give: measured on ResNet-sized products it is about twice as
/// fast as matrixmultiply split into slabs. With the `threaded-matmul`
/// feature, matrixmultiply threads internally instead.
pub(crate) fn gemm_into(
    alpha: f32,
    a: ArrayView2<'_, f32>,
    b: ArrayView2<'_, f32>,
    beta: f32,
    c: ArrayViewMut2<'_, f32>,
) {
    gemm_into_with(alpha, a, b, beta, c, true)
}

/// [`gemm_into`] that stays on the calling thread unless `parallel`: callers
/// that already spread independent products over rayon (one per image, say)
/// would only pay for nested splitting.
pub(crate) fn gemm_into_with(
    alpha: f32,
    a: ArrayView2<'_, f32>,
    b: ArrayView2<'_, f32>,
    beta: f32,
    mut c: ArrayViewMut2<'_, f32>,
    parallel: bool,
) {
    if cfg!(feature = "threaded-matmul") {
        ndarray::linalg::general_mat_mul(alpha, &a, &b, beta, &mut c);
        return;
    }
    let (m, k) = a.dim();
    let n = b.dim().1;
    assert!(
        b.dim().0 == k && c.dim() == (m, n),
        "gemm_into: shapes {:?} @ {:?} -> {:?}",
        a.dim(),
        b.dim(),
        c.dim()
    );
    if m == 0 || n == 0 {
        return;
    }
    let threads = rayon::current_num_threads();
    let par = if threads < 2 || !parallel {
        gemm::Parallelism::None
    } else {
        gemm::Parallelism::Rayon(threads)
    };
    let (sa, sb, sc) = (a.strides(), b.strides(), c.strides());
    let (sa, sb, sc) = ([sa[0], sa[1]], [sb[0], sb[1]], [sc[0], sc[1]]);
    // SAFETY: the three views are valid for their shapes and strides (checked
    // above to agree), `c` is a unique borrow so it aliases neither operand,
    // and gemm reads `c` only when `read_dst` is set. In gemm's convention the
    // destination scale comes first and the product scale second.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            sc[1],
            sc[0],
            beta != 0.0,
            a.as_ptr(),
            sa[1],
            sa[0],
            b.as_ptr(),
            sb[1],
            sb[0],
            beta,
            alpha,
            false,
            false,
            false,
            par,
        );
    }
}

fn as_2d<'a>(op: &'static str, t: &'a Tensor) -> Result<ArrayView2<'a, f32>> {
    t.view()
        .into_dimensionality::<Ix2>()
        .map_err(|_| KernelError::invalid(op, t.shape(), "expected a 2-D tensor"))
}

/// `torch.mm`: strictly 2-D.
pub fn mm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    const OP: &str = "mm";
    let (a2, b2) = (as_2d(OP, a)?, as_2d(OP, b)?);
    if a2.dim().1 != b2.dim().0 {
        return Err(KernelError::shapes(
            OP,
            a.shape(),
            b.shape(),
            "inner dimensions differ",
        ));
    }
    let mut out = Tensor::zeros(IxDyn(&[a2.dim().0, b2.dim().1]));
    let c = out
        .view_mut()
        .into_dimensionality::<Ix2>()
        .map_err(|_| KernelError::invalid(OP, a.shape(), "internal"))?;
    gemm_into(1.0, a2, b2, 0.0, c);
    Ok(out)
}

/// `torch.matmul` with its full semantics:
/// 1-D @ 1-D is a dot product (0-d result); a 1-D left operand is treated as
/// a row and a 1-D right operand as a column, the added dimension being
/// removed from the result; all dimensions before the last two broadcast.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    const OP: &str = "matmul";
    let (ra, rb) = (a.ndim(), b.ndim());
    if ra == 0 || rb == 0 {
        return Err(KernelError::shapes(
            OP,
            a.shape(),
            b.shape(),
            "both arguments need to be at least 1-D",
        ));
    }
    let mut a_shape = a.shape().to_vec();
    let mut b_shape = b.shape().to_vec();
    if ra == 1 {
        a_shape.insert(0, 1);
    }
    if rb == 1 {
        b_shape.push(1);
    }
    let (m, k) = (a_shape[a_shape.len() - 2], a_shape[a_shape.len() - 1]);
    let (k2, p) = (b_shape[b_shape.len() - 2], b_shape[b_shape.len() - 1]);
    if k != k2 {
        return Err(KernelError::shapes(
            OP,
            a.shape(),
            b.shape(),
            format!("contracted dimensions differ ({k} vs {k2})"),
        ));
    }
    let batch_a = &a_shape[..a_shape.len() - 2];
    let batch_b = &b_shape[..b_shape.len() - 2];
    let batch = broadcast_shapes(OP, batch_a, batch_b).map_err(|_| {
        KernelError::shapes(
            OP,
            a.shape(),
            b.shape(),
            "batch dimensions do not broadcast",
        )
    })?;
    let nbatch: usize = batch.iter().product();

    let mut out_shape = batch.clone();
    if ra > 1 {
        out_shape.push(m);
    }
    if rb > 1 {
        out_shape.push(p);
    }

    let a_data = contiguous_data(a);
    let b_data = contiguous_data(b);
    let internal = |_| KernelError::shapes(OP, a.shape(), b.shape(), "internal layout error");

    // A batch-free right operand (the `x @ W` of every linear layer) lets all
    // of a's batches fold into the rows of one big product.
    if batch_b.is_empty() && batch_a.len() == batch.len() {
        let rows = nbatch * m;
        let a2 = ArrayView2::from_shape((rows, k), &a_data).map_err(internal)?;
        let b2 = ArrayView2::from_shape((k, p), &b_data).map_err(internal)?;
        let mut out = vec![0.0f32; rows * p];
        let c = ArrayViewMut2::from_shape((rows, p), &mut out).map_err(internal)?;
        gemm_into(1.0, a2, b2, 0.0, c);
        return from_vec(OP, &out_shape, out);
    }

    // Row-major strides of each operand's batch, zero where it broadcasts.
    let batch_strides = |own: &[usize]| -> Vec<usize> {
        let pad = batch.len() - own.len();
        let mut strides = vec![0usize; batch.len()];
        let mut acc = 1usize;
        for i in (0..own.len()).rev() {
            strides[pad + i] = if own[i] == 1 { 0 } else { acc };
            acc *= own[i];
        }
        strides
    };
    let sa = batch_strides(batch_a);
    let sb = batch_strides(batch_b);
    let offsets: Vec<(usize, usize)> = (0..nbatch)
        .map(|flat| {
            let (mut rem, mut oa, mut ob) = (flat, 0usize, 0usize);
            for d in (0..batch.len()).rev() {
                let i = rem % batch[d];
                rem /= batch[d];
                oa += i * sa[d];
                ob += i * sb[d];
            }
            (oa * m * k, ob * k * p)
        })
        .collect();

    let mut out = vec![0.0f32; nbatch * m * p];
    let run = |(c_chunk, &(oa, ob)): (&mut [f32], &(usize, usize))| -> Result<()> {
        let a2 = ArrayView2::from_shape((m, k), &a_data[oa..oa + m * k]).map_err(internal)?;
        let b2 = ArrayView2::from_shape((k, p), &b_data[ob..ob + k * p]).map_err(internal)?;
        let c = ArrayViewMut2::from_shape((m, p), c_chunk).map_err(internal)?;
        // Batches are already spread over the pool: each product stays on its thread.
        gemm_into_with(1.0, a2, b2, 0.0, c, false);
        Ok(())
    };
    if m * p > 0 {
        let total_macs = nbatch.saturating_mul(m).saturating_mul(k).saturating_mul(p);
        if nbatch > 1 && total_macs >= PARALLEL_MIN_MACS && !cfg!(feature = "threaded-matmul") {
            out.par_chunks_mut(m * p)
                .zip(offsets.par_iter())
                .try_for_each(run)?;
        } else if nbatch == 1 {
            // A single large product still gets split by gemm_into.
            let a2 = ArrayView2::from_shape((m, k), &a_data[offsets[0].0..offsets[0].0 + m * k])
                .map_err(internal)?;
            let b2 = ArrayView2::from_shape((k, p), &b_data[offsets[0].1..offsets[0].1 + k * p])
                .map_err(internal)?;
            let c = ArrayViewMut2::from_shape((m, p), &mut out[..]).map_err(internal)?;
            gemm_into(1.0, a2, b2, 0.0, c);
        } else {
            out.chunks_mut(m * p)
                .zip(offsets.iter())
                .try_for_each(&run)?;
        }
    }
    from_vec(OP, &out_shape, out)
}

/// `torch.bmm`: both operands 3-D with equal batch size.
pub fn bmm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    const OP: &str = "bmm";
    if a.ndim() != 3 || b.ndim() != 3 {
        return Err(KernelError::shapes(
            OP,
            a.shape(),
            b.shape(),
            "both arguments must be 3-D",
        ));
    }
    if a.shape()[0] != b.shape()[0] {
        return Err(KernelError::shapes(
            OP,
            a.shape(),
            b.shape(),
            "batch sizes differ",
        ));
    }
    matmul(a, b).map_err(|e| match e {
        KernelError::ShapeMismatch {
            lhs, rhs, reason, ..
        } => KernelError::ShapeMismatch {
            op: OP,
            lhs,
            rhs,
            reason,
        },
        other => other,
    })
}

/// `torch.addmm(input, mat1, mat2, beta=, alpha=)`: `beta * input + alpha * mat1 @ mat2`,
/// with `input` broadcast to the product's shape.
pub fn addmm(
    input: &Tensor,
    mat1: &Tensor,
    mat2: &Tensor,
    beta: f32,
    alpha: f32,
) -> Result<Tensor> {
    const OP: &str = "addmm";
    let (a2, b2) = (as_2d(OP, mat1)?, as_2d(OP, mat2)?);
    let (m, k) = a2.dim();
    let (k2, p) = b2.dim();
    if k != k2 {
        return Err(KernelError::shapes(
            OP,
            mat1.shape(),
            mat2.shape(),
            "inner dimensions differ",
        ));
    }
    let init = input.broadcast(IxDyn(&[m, p])).ok_or_else(|| {
        KernelError::shapes(
            OP,
            input.shape(),
            &[m, p],
            "input does not broadcast to the product",
        )
    })?;
    let mut out = init.to_owned();
    if beta == 0.0 {
        // PyTorch ignores `input` entirely (NaNs included) when beta is 0.
        out.fill(0.0);
    }
    let c = out
        .view_mut()
        .into_dimensionality::<Ix2>()
        .map_err(|_| KernelError::invalid(OP, input.shape(), "internal"))?;
    gemm_into(alpha, a2, b2, if beta == 0.0 { 0.0 } else { beta }, c);
    Ok(out)
}

/// `F.linear(x, weight, bias)`: `x @ weight.T + bias` for `x` of shape
/// `(*, in)`, `weight` `(out, in)`, `bias` `(out,)`.
pub fn linear(x: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    linear_impl("linear", x, weight, None, bias)
}

/// `act(F.linear(x, weight, bias))` in one pass: the bias seeds the output
/// that the product accumulates into (addmm-style, `beta = 1`) and the
/// activation runs in place, so no intermediate tensor is allocated.
///
/// `weight_in_out` is the same weight stored `(in, out)` row-major (see
/// [`in_out_weight`]); it is used when [`prefers_in_out_weight`] says so.
pub fn linear_act(
    x: &Tensor,
    weight: &Tensor,
    weight_in_out: Option<&Tensor>,
    bias: Option<&Tensor>,
    act: Unary,
) -> Result<Tensor> {
    let mut y = linear_impl("linear_act", x, weight, weight_in_out, bias)?;
    unary_inplace(act, &mut y);
    Ok(y)
}

/// Whether a product with `x` runs faster on the weight stored `(in, out)`.
/// With torch's `(out, in)` layout the GEMM's right operand is column-major,
/// and the gemm crate is up to 25× slower on it for a few rows and a deep
/// product (a 2048 → 64 head on a batch of 8: 201 µs against 7.9 µs, see
/// `gemm_weight_*` in `benches/matmul.rs`). A single row is the exception:
/// there the column-major operand is the faster one (3.7 against 8.3 µs).
pub fn prefers_in_out_weight(x: &Tensor) -> bool {
    let rows: usize = x.shape().iter().rev().skip(1).product();
    x.ndim() > 0 && rows > 1
}

/// `weight` `(out, in)` copied to `(in, out)` row-major, for [`linear_act`];
/// weights do not change between runs, so callers make this once.
pub fn in_out_weight(weight: &Tensor) -> Result<Tensor> {
    if weight.ndim() != 2 {
        return Err(KernelError::shapes(
            "linear",
            weight.shape(),
            weight.shape(),
            "weight must be 2-D (out_features, in_features)",
        ));
    }
    Ok(weight.t().as_standard_layout().into_owned())
}

fn linear_impl(
    op: &'static str,
    x: &Tensor,
    weight: &Tensor,
    weight_in_out: Option<&Tensor>,
    bias: Option<&Tensor>,
) -> Result<Tensor> {
    if x.ndim() == 0 {
        return Err(KernelError::shapes(
            op,
            x.shape(),
            weight.shape(),
            "input must be at least 1-D",
        ));
    }
    let w = weight.view().into_dimensionality::<Ix2>().map_err(|_| {
        KernelError::shapes(
            op,
            x.shape(),
            weight.shape(),
            "weight must be 2-D (out_features, in_features)",
        )
    })?;
    let (out_f, in_f) = w.dim();
    let k = x.shape()[x.ndim() - 1];
    if k != in_f {
        return Err(KernelError::shapes(
            op,
            x.shape(),
            weight.shape(),
            format!("input has {k} features but weight expects {in_f}"),
        ));
    }
    if let Some(b) = bias {
        if b.ndim() != 1 || b.len() != out_f {
            return Err(KernelError::shapes(
                op,
                weight.shape(),
                b.shape(),
                format!("bias must be 1-D with {out_f} elements"),
            ));
        }
    }
    let rows: usize = x.shape()[..x.ndim() - 1].iter().product();
    let mut out_shape = x.shape()[..x.ndim() - 1].to_vec();
    out_shape.push(out_f);

    let internal = |_| KernelError::shapes(op, x.shape(), weight.shape(), "internal layout error");
    let mut out = vec![0.0f32; rows * out_f];
    let beta = match bias {
        Some(b) if out_f > 0 => {
            let bd = contiguous_data(b);
            for row in out.chunks_exact_mut(out_f) {
                row.copy_from_slice(&bd);
            }
            1.0
        }
        _ => 0.0,
    };
    let x_data = contiguous_data(x);
    let x2 = ArrayView2::from_shape((rows, k), &x_data).map_err(internal)?;
    let c = ArrayViewMut2::from_shape((rows, out_f), &mut out).map_err(internal)?;
    let in_out = weight_in_out
        .filter(|_| prefers_in_out_weight(x))
        .and_then(|t| t.view().into_dimensionality::<Ix2>().ok())
        .filter(|t| t.dim() == (in_f, out_f));
    match in_out {
        Some(b) => gemm_into(1.0, x2, b, beta, c),
        None => gemm_into(1.0, x2, w.t(), beta, c),
    }
    from_vec(op, &out_shape, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::elementwise::GeluApproximate;
    use crate::exec::kernels::testutil::{arange, assert_close, t, Fixture};

    fn fixture() -> Fixture {
        Fixture::load(include_str!("../../../tests/fixtures/kernels/linear.json"))
    }

    #[test]
    fn mm_hand_checked() {
        let a = t(&[2, 3], &[1., 2., 3., 4., 5., 6.]);
        let b = t(&[3, 2], &[7., 8., 9., 10., 11., 12.]);
        let c = matmul(&a, &b).unwrap();
        assert_eq!(c, t(&[2, 2], &[58., 64., 139., 154.]));
        assert_eq!(mm(&a, &b).unwrap(), c);
    }

    #[test]
    fn one_d_cases_drop_the_added_dims() {
        let v = t(&[3], &[1., 2., 3.]);
        let m = arange(&[3, 2]);
        assert_eq!(matmul(&v, &v).unwrap().shape(), &[] as &[usize]);
        assert_eq!(matmul(&v, &v).unwrap()[[]], 14.0);
        let vm = matmul(&v, &m).unwrap();
        assert_eq!(vm, t(&[2], &[16., 22.]));
        let mv = matmul(&m.t().to_owned(), &v).unwrap();
        assert_eq!(mv, t(&[2], &[16., 22.]));
        let batched = matmul(&arange(&[4, 2, 3]), &v).unwrap();
        assert_eq!(batched.shape(), &[4, 2]);
    }

    #[test]
    fn strided_operands_are_handled() {
        let a = arange(&[3, 4]);
        let at = a.t().to_owned();
        let direct = matmul(&a, &a.t().as_standard_layout().into_owned()).unwrap();
        let via_view = matmul(&a, &at).unwrap();
        assert_eq!(direct, via_view);
    }

    #[test]
    fn errors_name_both_shapes() {
        let a = arange(&[2, 3]);
        let b = arange(&[4, 2]);
        let e = matmul(&a, &b).unwrap_err();
        assert_eq!(
            e,
            KernelError::shapes(
                "matmul",
                &[2, 3],
                &[4, 2],
                "contracted dimensions differ (3 vs 4)"
            )
        );
        let e = matmul(&arange(&[2, 2, 3]), &arange(&[3, 3, 4])).unwrap_err();
        assert!(matches!(e, KernelError::ShapeMismatch { op: "matmul", .. }));
        assert!(matmul(&t(&[], &[1.0]), &a).is_err());
        assert!(bmm(&arange(&[2, 2, 3]), &arange(&[3, 3, 4])).is_err());
        assert!(linear(&arange(&[2, 5]), &arange(&[4, 3]), None).is_err());
        assert!(linear(&arange(&[2, 3]), &arange(&[4, 3]), Some(&arange(&[3]))).is_err());
        assert!(addmm(&arange(&[3]), &a, &arange(&[3, 2]), 1.0, 1.0).is_err());
    }

    #[test]
    fn large_product_split_across_threads_matches_serial() {
        // Big enough to take the parallel slab path in gemm_into.
        let a = arange(&[130, 97]).mapv(|v| (v * 0.37).sin());
        let b = arange(&[97, 120]).mapv(|v| (v * 0.11).cos());
        let got = matmul(&a, &b).unwrap();
        let a2 = a.view().into_dimensionality::<Ix2>().unwrap();
        let b2 = b.view().into_dimensionality::<Ix2>().unwrap();
        let want = a2.dot(&b2).into_dyn();
        assert_close("split", &got, &want.mapv(|v| v as f64), 1e-6);
        // Wide rather than tall: splits along columns.
        let wide = matmul(
            &b.t().to_owned(),
            &arange(&[97, 700]).mapv(|v| (v * 0.01).sin()),
        )
        .unwrap();
        assert_eq!(wide.shape(), &[120, 700]);
    }

    #[test]
    fn zero_sized_products() {
        let a = Tensor::zeros(IxDyn(&[2, 0]));
        let b = Tensor::zeros(IxDyn(&[0, 3]));
        assert_eq!(matmul(&a, &b).unwrap(), Tensor::zeros(IxDyn(&[2, 3])));
        let y = linear(&Tensor::zeros(IxDyn(&[0, 4])), &arange(&[3, 4]), None).unwrap();
        assert_eq!(y.shape(), &[0, 3]);
    }

    #[test]
    fn matmul_against_torch() {
        let fx = fixture();
        for case in fx.cases_with_prefix("matmul/") {
            let y = matmul(&case.input("a"), &case.input("b")).unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
        }
        let case = fx.case("bmm");
        let y = bmm(&case.input("a"), &case.input("b")).unwrap();
        assert_close("bmm", &y, &case.expected(), 1e-5);
        let case = fx.case("addmm");
        let y = addmm(
            &case.input("input"),
            &case.input("a"),
            &case.input("b"),
            case.f32("beta"),
            case.f32("alpha"),
        )
        .unwrap();
        assert_close("addmm", &y, &case.expected(), 1e-5);
    }

    #[test]
    fn linear_against_torch() {
        let fx = fixture();
        let mut used_in_out = 0;
        for case in fx.cases_with_prefix("linear/") {
            let bias = case.input_opt("bias");
            let (x, w) = (case.input("x"), case.input("weight"));
            let y = linear(&x, &w, bias.as_ref()).unwrap();
            assert_close(&case.name, &y, &case.expected(), 1e-5);
            // The same product on the weight stored (in, out), as programs keep it.
            if w.ndim() == 2 {
                used_in_out += usize::from(prefers_in_out_weight(&x));
                let w_in_out = in_out_weight(&w).unwrap();
                let y =
                    linear_act(&x, &w, Some(&w_in_out), bias.as_ref(), Unary::Identity).unwrap();
                assert_close(&case.name, &y, &case.expected(), 1e-5);
            }
        }
        assert!(used_in_out > 0, "no case has more than one row");
        let case = fx.case("linear_gelu");
        let w = case.input("weight");
        let w_in_out = in_out_weight(&w).unwrap();
        for in_out in [None, Some(&w_in_out)] {
            let y = linear_act(
                &case.input("x"),
                &w,
                in_out,
                Some(&case.input("bias")),
                Unary::Gelu(GeluApproximate::None),
            )
            .unwrap();
            assert_close("linear_gelu", &y, &case.expected(), 1e-5);
        }
    }
}
