//! f32 matmul and conv2d throughput, to choose the executor's GEMM backend
//! by measurement.
//!
//! Throughput is reported as items/s with one item per floating-point
//! operation (2·M·N·K for a product), so divan's "Gitem/s" reads as GFLOP/s.
//!
//! matrixmultiply's threading is a cargo feature, fixed for the whole build,
//! so the threaded numbers need a second run:
//!
//! ```text
//! cargo bench --bench matmul                              # single-threaded matrixmultiply
//! cargo bench --bench matmul --features threaded-matmul   # matrixmultiply threading
//! ```
//!
//! The bench names say which build they come from.

use divan::counter::ItemsCount;
use divan::{black_box, Bencher};
use ndarray::{Array2, IxDyn};
use staticfx::exec::kernels::{conv2d, matmul, Conv2dParams, ConvPadding, Tensor};

const N: usize = 1024;

fn main() {
    divan::main();
}

/// Deterministic, well-scaled operands (no RNG crate needed).
fn operands() -> (Array2<f32>, Array2<f32>) {
    let a = Array2::from_shape_fn((N, N), |(i, j)| ((i * 7 + j * 13) % 31) as f32 / 31.0 - 0.5);
    let b = Array2::from_shape_fn((N, N), |(i, j)| ((i * 11 + j * 5) % 29) as f32 / 29.0 - 0.5);
    (a, b)
}

fn flops() -> ItemsCount {
    ItemsCount::new(2 * N * N * N)
}

/// `a.dot(&b)`: matrixmultiply as ndarray configures it in this build.
#[cfg(not(feature = "threaded-matmul"))]
#[divan::bench(sample_count = 20, sample_size = 1)]
fn ndarray_dot_1024_single_thread(bencher: Bencher) {
    let (a, b) = operands();
    bencher
        .counter(flops())
        .bench_local(|| black_box(&a).dot(black_box(&b)));
}

#[cfg(feature = "threaded-matmul")]
#[divan::bench(sample_count = 20, sample_size = 1)]
fn ndarray_dot_1024_matrixmultiply_threading(bencher: Bencher) {
    let (a, b) = operands();
    bencher
        .counter(flops())
        .bench_local(|| black_box(&a).dot(black_box(&b)));
}

/// The executor's own `matmul` kernel: in the default build it splits large
/// products into row slabs on rayon; with `threaded-matmul` it defers to
/// matrixmultiply's threads.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn kernels_matmul_1024(bencher: Bencher) {
    let (a, b) = operands();
    let (a, b): (Tensor, Tensor) = (a.into_dyn(), b.into_dyn());
    bencher
        .counter(flops())
        .bench_local(|| matmul(black_box(&a), black_box(&b)));
}

fn gemm_crate(a: &Array2<f32>, b: &Array2<f32>, par: gemm::Parallelism) -> Array2<f32> {
    let mut c = Array2::<f32>::zeros((N, N));
    // SAFETY: all three matrices are N×N row-major and live for the call;
    // with read_dst = false the destination is only written.
    unsafe {
        gemm::gemm(
            N,
            N,
            N,
            c.as_mut_ptr(),
            1,
            N as isize,
            false,
            a.as_ptr(),
            1,
            N as isize,
            b.as_ptr(),
            1,
            N as isize,
            0.0f32,
            1.0f32,
            false,
            false,
            false,
            par,
        );
    }
    c
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn gemm_crate_1024_single_thread(bencher: Bencher) {
    let (a, b) = operands();
    bencher
        .counter(flops())
        .bench_local(|| gemm_crate(black_box(&a), black_box(&b), gemm::Parallelism::None));
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn gemm_crate_1024_rayon(bencher: Bencher) {
    let (a, b) = operands();
    let threads = rayon::current_num_threads();
    bencher.counter(flops()).bench_local(|| {
        gemm_crate(
            black_box(&a),
            black_box(&b),
            gemm::Parallelism::Rayon(threads),
        )
    });
}

/// conv2d on a ResNet-stage-1 shape: 1×64×56×56, 64 filters of 3×3,
/// padding 1, through the im2col + GEMM path.
#[divan::bench(sample_count = 30, sample_size = 1)]
fn conv2d_im2col_1x64x56x56_k3(bencher: Bencher) {
    let x = Tensor::from_shape_fn(IxDyn(&[1, 64, 56, 56]), |d| {
        ((d[1] * 3 + d[2] * 7 + d[3]) % 17) as f32 / 17.0 - 0.5
    });
    let w = Tensor::from_shape_fn(IxDyn(&[64, 64, 3, 3]), |d| {
        ((d[0] + d[1] * 5 + d[2] * 3 + d[3]) % 13) as f32 / 13.0 - 0.5
    });
    let b = Tensor::zeros(IxDyn(&[64]));
    let p = Conv2dParams {
        padding: ConvPadding::Explicit([1, 1]),
        ..Default::default()
    };
    let flops: usize = 2 * 64 * 64 * 9 * 56 * 56;
    // Check the sanity of the output shape once, outside the timed loop.
    assert_eq!(
        conv2d(&x, &w, Some(&b), &p)
            .map(|y| y.shape().to_vec())
            .ok(),
        Some(vec![1, 64, 56, 56])
    );
    bencher
        .counter(ItemsCount::new(flops))
        .bench_local(|| conv2d(black_box(&x), black_box(&w), Some(&b), &p));
}

/// Activations run after every matmul, so their cost per element matters
/// too; gelu (exact) is the most expensive of them.
#[divan::bench(args = ["gelu", "gelu_tanh", "silu", "relu"], sample_count = 20, sample_size = 1)]
fn unary_1m_elements(bencher: Bencher, op: &str) {
    use staticfx::exec::kernels::{unary, GeluApproximate, Unary};
    let op = match op {
        "gelu" => Unary::Gelu(GeluApproximate::None),
        "gelu_tanh" => Unary::Gelu(GeluApproximate::Tanh),
        "silu" => Unary::Silu,
        _ => Unary::Relu,
    };
    let x = Tensor::from_shape_fn(IxDyn(&[1 << 20]), |d| (d[0] % 2000) as f32 / 250.0 - 4.0);
    bencher
        .counter(ItemsCount::new(1usize << 20))
        .bench_local(|| unary(op, black_box(&x)));
}

/// Linear-layer products `(m, k) @ (k, n)` with the right operand row-major
/// (a weight stored `(in, out)`) or column-major (torch's `(out, in)` weight,
/// transposed): the layout `kernels::prefers_in_out_weight` chooses by.
/// Classifier heads on small batches, a conv's im2col product, a ViT block.
const LINEAR_SHAPES: &[(usize, usize, usize)] = &[
    (1, 2048, 64),
    (1, 2048, 1000),
    (2, 2048, 64),
    (8, 2048, 64),
    (32, 2048, 64),
    (128, 2048, 64),
    (64, 32, 96),
    (197, 192, 576),
];

/// `c = a @ b` through the gemm crate on one thread, `b` row-major or
/// column-major.
fn gemm_layout(
    a: &Array2<f32>,
    b_row_major: &Array2<f32>,
    b_col_major: &Array2<f32>,
    row: bool,
) -> Array2<f32> {
    let (m, k) = a.dim();
    let n = b_row_major.dim().1;
    let mut c = Array2::<f32>::zeros((m, n));
    // Row-major b is `b_row_major` (k × n); column-major b reads `b_col_major`
    // (n × k, row-major) with its strides swapped.
    let (bp, bcs, brs) = if row {
        (b_row_major.as_ptr(), 1, n as isize)
    } else {
        (b_col_major.as_ptr(), k as isize, 1)
    };
    // SAFETY: `a` is m×k and `c` m×n, both row-major; `b` is k×n read through
    // the strides of the array it points into; read_dst = false, so `c` is
    // only written.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            1,
            k as isize,
            bp,
            bcs,
            brs,
            0.0f32,
            1.0f32,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
    c
}

fn linear_operands(i: usize) -> (Array2<f32>, Array2<f32>, Array2<f32>, ItemsCount) {
    let (m, k, n) = LINEAR_SHAPES[i];
    let a = Array2::from_shape_fn((m, k), |(i, j)| ((i * 7 + j * 13) % 31) as f32 / 31.0 - 0.5);
    let b = Array2::from_shape_fn((k, n), |(i, j)| ((i * 11 + j * 5) % 29) as f32 / 29.0 - 0.5);
    let bt = b.t().as_standard_layout().into_owned();
    (a, b, bt, ItemsCount::new(2 * m * n * k))
}

#[divan::bench(args = 0..LINEAR_SHAPES.len(), sample_count = 100, sample_size = 5)]
fn gemm_weight_in_out(bencher: Bencher, i: usize) {
    let (a, b, bt, flops) = linear_operands(i);
    bencher
        .counter(flops)
        .bench_local(|| gemm_layout(black_box(&a), &b, &bt, true));
}

#[divan::bench(args = 0..LINEAR_SHAPES.len(), sample_count = 100, sample_size = 5)]
fn gemm_weight_out_in(bencher: Bencher, i: usize) {
    let (a, b, bt, flops) = linear_operands(i);
    bencher
        .counter(flops)
        .bench_local(|| gemm_layout(black_box(&a), &b, &bt, false));
}
