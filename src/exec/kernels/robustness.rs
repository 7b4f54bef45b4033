//! Sweeps every kernel over awkward shapes and arguments (empty tensors,
//! mismatched ranks, zero strides and groups, out-of-range dims) and
//! checks that each call returns instead of panicking. Which calls succeed
//! is covered by the per-family tests; this only guards the "errors, never
//! panics" contract the interpreter relies on.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ndarray::{Dimension, IxDyn};

use super::conv::*;
use super::elementwise::*;
use super::embedding::*;
use super::linear::*;
use super::norm::*;
use super::pool::*;
use super::reduce::*;
use super::shape_ops::*;
use super::softmax::*;
use super::testutil::arange;
use super::{IndexTensor, Tensor};

fn shapes() -> Vec<Vec<usize>> {
    vec![
        vec![],
        vec![0],
        vec![1],
        vec![3],
        vec![2, 3],
        vec![3, 2],
        vec![0, 3],
        vec![3, 0],
        vec![1, 3, 4],
        vec![2, 3, 4],
        vec![2, 1, 3],
        vec![1, 3, 5, 5],
        vec![2, 4, 3, 3],
        vec![2, 0, 3, 3],
        vec![1, 3, 0, 4],
        vec![4, 3, 3, 3],
        vec![3, 1, 2, 2],
        vec![4, 1, 3, 3],
        vec![1, 1, 1, 1],
        vec![2, 2, 2, 2, 2],
    ]
}

fn tensor(shape: &[usize]) -> Tensor {
    arange(shape).mapv(|v| (v * 0.37).sin())
}

/// Runs `f`, recording a description of the call if it panicked.
fn guard(failures: &mut Vec<String>, desc: impl FnOnce() -> String, f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        failures.push(desc());
    }
}

fn finish(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} kernel calls panicked:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn pairwise_kernels_never_panic() {
    let mut fails = Vec::new();
    let shapes = shapes();
    let conv_params = [
        Conv2dParams::default(),
        Conv2dParams {
            stride: [2, 1],
            padding: ConvPadding::Explicit([1, 1]),
            dilation: [2, 2],
            groups: 1,
        },
        Conv2dParams {
            padding: ConvPadding::Same,
            ..Default::default()
        },
        Conv2dParams {
            stride: [2, 2],
            padding: ConvPadding::Same,
            ..Default::default()
        },
        Conv2dParams {
            padding: ConvPadding::Valid,
            groups: 3,
            ..Default::default()
        },
        Conv2dParams {
            groups: 4,
            padding: ConvPadding::Explicit([1, 0]),
            ..Default::default()
        },
        Conv2dParams {
            groups: 0,
            ..Default::default()
        },
        Conv2dParams {
            stride: [0, 1],
            ..Default::default()
        },
        Conv2dParams {
            dilation: [1, 0],
            ..Default::default()
        },
    ];
    let tconv_params = [
        ConvTranspose2dParams::default(),
        ConvTranspose2dParams {
            stride: [2, 2],
            padding: [1, 1],
            output_padding: [1, 1],
            ..Default::default()
        },
        ConvTranspose2dParams {
            groups: 2,
            dilation: [2, 1],
            padding: [5, 5],
            ..Default::default()
        },
        ConvTranspose2dParams {
            stride: [0, 1],
            ..Default::default()
        },
        ConvTranspose2dParams {
            groups: 0,
            ..Default::default()
        },
    ];
    for sa in &shapes {
        for sb in &shapes {
            let (a, b) = (tensor(sa), tensor(sb));
            let d = || format!("a {sa:?}, b {sb:?}");
            for op in [
                BinaryOp::Add,
                BinaryOp::Div,
                BinaryOp::Eq,
                BinaryOp::Remainder,
                BinaryOp::FloorDivide,
            ] {
                guard(
                    &mut fails,
                    || format!("{op:?} {}", d()),
                    || drop(binary(op, &a, &b)),
                );
            }
            guard(
                &mut fails,
                || format!("where {}", d()),
                || drop(where_(&a, &b, &a)),
            );
            guard(
                &mut fails,
                || format!("matmul {}", d()),
                || drop(matmul(&a, &b)),
            );
            guard(&mut fails, || format!("bmm {}", d()), || drop(bmm(&a, &b)));
            guard(&mut fails, || format!("mm {}", d()), || drop(mm(&a, &b)));
            guard(
                &mut fails,
                || format!("addmm {}", d()),
                || drop(addmm(&a, &a, &b, 1.0, 1.0)),
            );
            guard(
                &mut fails,
                || format!("linear {}", d()),
                || drop(linear(&a, &b, None)),
            );
            guard(
                &mut fails,
                || format!("linear+bias {}", d()),
                || drop(linear(&a, &b, Some(&a))),
            );
            guard(
                &mut fails,
                || format!("linear_act {}", d()),
                || drop(linear_act(&a, &b, None, None, Unary::Relu)),
            );
            guard(
                &mut fails,
                || format!("linear_act, (in, out) weight {}", d()),
                || drop(linear_act(&a, &b, Some(&a), None, Unary::Relu)),
            );
            for p in &conv_params {
                guard(
                    &mut fails,
                    || format!("conv2d {p:?} {}", d()),
                    || drop(conv2d(&a, &b, None, p)),
                );
            }
            guard(
                &mut fails,
                || format!("conv2d+bias {}", d()),
                || drop(conv2d(&a, &b, Some(&a), &conv_params[0])),
            );
            for p in &tconv_params {
                guard(
                    &mut fails,
                    || format!("conv_transpose2d {p:?} {}", d()),
                    || drop(conv_transpose2d(&a, &b, None, p)),
                );
            }
            for (stride, padding, groups) in [(1, 0, 1), (2, 1, 2), (0, 0, 1), (1, 0, 0)] {
                let p = Conv1dParams {
                    stride,
                    padding: ConvPadding::Explicit([padding]),
                    dilation: 1,
                    groups,
                };
                guard(
                    &mut fails,
                    || format!("conv1d {p:?} {}", d()),
                    || drop(conv1d(&a, &b, None, &p)),
                );
                guard(
                    &mut fails,
                    || format!("conv_transpose1d {p:?} {}", d()),
                    || {
                        drop(conv_transpose1d(
                            &a, &b, None, stride, padding, 0, groups, 1,
                        ))
                    },
                );
            }
            guard(
                &mut fails,
                || format!("cat {}", d()),
                || drop(cat(&[&a, &b], 0)),
            );
            guard(
                &mut fails,
                || format!("cat -1 {}", d()),
                || drop(cat(&[&a, &b], -1)),
            );
            guard(
                &mut fails,
                || format!("stack {}", d()),
                || drop(stack(&[&a, &b], 0)),
            );
            guard(
                &mut fails,
                || format!("batch_norm {}", d()),
                || drop(batch_norm(&a, &b, &b, Some(&b), Some(&b), 1e-5)),
            );
            guard(
                &mut fails,
                || format!("layer_norm {}", d()),
                || drop(layer_norm(&a, sb, Some(&b), Some(&b), 1e-5)),
            );
            guard(
                &mut fails,
                || format!("rms_norm {}", d()),
                || drop(rms_norm(&a, sb, Some(&b), None)),
            );
            guard(
                &mut fails,
                || format!("group_norm {}", d()),
                || drop(group_norm(&a, b.len(), Some(&b), None, 1e-5)),
            );
            guard(
                &mut fails,
                || format!("instance_norm {}", d()),
                || drop(instance_norm(&a, Some(&b), Some(&b), 1e-5)),
            );
            let idx = IndexTensor::from_shape_fn(IxDyn(sa), |i| {
                i.as_array_view().iter().sum::<usize>() as i64 - 1
            });
            guard(
                &mut fails,
                || format!("embedding {}", d()),
                || drop(embedding(&idx, &b)),
            );
            guard(
                &mut fails,
                || format!("embedding_from_f32 {}", d()),
                || drop(embedding_from_f32(&a, &b)),
            );
        }
    }
    finish(fails);
}

#[test]
fn single_input_kernels_never_panic() {
    let mut fails = Vec::new();
    for s in shapes() {
        let x = tensor(&s);
        let d = |what: String| format!("{what} on {s:?}");
        for dim in -6isize..6 {
            guard(
                &mut fails,
                || d(format!("softmax {dim}")),
                || drop(softmax(&x, dim)),
            );
            guard(
                &mut fails,
                || d(format!("log_softmax {dim}")),
                || drop(log_softmax(&x, dim)),
            );
            guard(
                &mut fails,
                || d(format!("argmax {dim}")),
                || drop(argmax(&x, Some(dim), true)),
            );
            guard(
                &mut fails,
                || d(format!("argmin {dim}")),
                || drop(argmin(&x, Some(dim), false)),
            );
            for keep in [false, true] {
                guard(
                    &mut fails,
                    || d(format!("sum {dim}")),
                    || drop(sum(&x, &[dim], keep)),
                );
                guard(
                    &mut fails,
                    || d(format!("mean {dim}")),
                    || drop(mean(&x, &[dim, 0], keep)),
                );
                guard(
                    &mut fails,
                    || d(format!("amax {dim}")),
                    || drop(amax(&x, &[dim], keep)),
                );
                guard(
                    &mut fails,
                    || d(format!("amin {dim}")),
                    || drop(amin(&x, &[], keep)),
                );
                guard(
                    &mut fails,
                    || d(format!("var {dim}")),
                    || drop(var(&x, &[dim], true, keep)),
                );
                guard(
                    &mut fails,
                    || d(format!("std {dim}")),
                    || drop(std(&x, &[dim], false, keep)),
                );
                guard(
                    &mut fails,
                    || d(format!("prod {dim}")),
                    || drop(prod(&x, &[dim], keep)),
                );
            }
            guard(
                &mut fails,
                || d(format!("transpose {dim}")),
                || drop(transpose(&x, dim, 0)),
            );
            guard(
                &mut fails,
                || d(format!("flatten {dim}")),
                || drop(flatten(&x, dim, -1)),
            );
            guard(
                &mut fails,
                || d(format!("unsqueeze {dim}")),
                || drop(unsqueeze(&x, dim)),
            );
            guard(
                &mut fails,
                || d(format!("squeeze {dim}")),
                || drop(squeeze(&x, Some(&[dim]))),
            );
            guard(
                &mut fails,
                || d(format!("select {dim}")),
                || drop(select(&x, dim, dim)),
            );
            for n in [0usize, 1, 2, 5, usize::MAX] {
                guard(
                    &mut fails,
                    || d(format!("split {dim} {n}")),
                    || drop(split(&x, n, dim)),
                );
                guard(
                    &mut fails,
                    || d(format!("chunk {dim} {n}")),
                    || drop(chunk(&x, n, dim)),
                );
                guard(
                    &mut fails,
                    || d(format!("narrow {dim} {n}")),
                    || drop(narrow(&x, dim, -1, n)),
                );
                guard(
                    &mut fails,
                    || d(format!("split_sizes {dim} {n}")),
                    || drop(split_sizes(&x, &[n, 1], dim)),
                );
            }
            for (start, stop, step) in [
                (None, None, 1),
                (Some(-100), Some(100), 3),
                (Some(5), Some(1), 1),
                (None, None, 0),
                (None, None, -1),
            ] {
                guard(
                    &mut fails,
                    || d(format!("slice_dim {dim}")),
                    || drop(slice_dim(&x, dim, start, stop, step)),
                );
            }
        }
        guard(
            &mut fails,
            || d("squeeze all".into()),
            || drop(squeeze(&x, None)),
        );
        guard(
            &mut fails,
            || d("argmax None".into()),
            || drop(argmax(&x, None, true)),
        );
        guard(
            &mut fails,
            || d("contiguous".into()),
            || drop(contiguous(&x)),
        );
        for shape in [
            vec![-1],
            vec![-1, 2],
            vec![3, -1, 0],
            vec![0, -1],
            vec![-1, -1],
            vec![-3],
            vec![isize::MAX, 2],
        ] {
            guard(
                &mut fails,
                || d(format!("reshape {shape:?}")),
                || drop(reshape(&x, &shape)),
            );
        }
        for dims in [
            vec![],
            vec![0],
            vec![1, 0],
            vec![0, 0],
            vec![2, 0, 1],
            vec![-1, 0, 1, 2],
        ] {
            guard(
                &mut fails,
                || d(format!("permute {dims:?}")),
                || drop(permute(&x, &dims)),
            );
        }
        for sizes in [
            vec![],
            vec![-1],
            vec![2, -1],
            vec![2, 3, 4],
            vec![0, -1, -1],
            vec![-1, -1, -1, -1, -1],
            vec![isize::MAX, isize::MAX, 4],
        ] {
            guard(
                &mut fails,
                || d(format!("expand {sizes:?}")),
                || drop(expand(&x, &sizes)),
            );
        }
        for reps in [
            vec![],
            vec![2],
            vec![1, 2, 3],
            vec![0, 1, 1, 1, 1],
            vec![usize::MAX, 2, 2, 2, 2],
        ] {
            guard(
                &mut fails,
                || d(format!("repeat {reps:?}")),
                || drop(repeat(&x, &reps)),
            );
        }
        for pads in [
            vec![],
            vec![1],
            vec![1, 1],
            vec![-3, -3],
            vec![2, -1, 0, 1],
            vec![1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        ] {
            guard(
                &mut fails,
                || d(format!("pad {pads:?}")),
                || drop(pad(&x, &pads, 0.0)),
            );
        }
        let specs = [
            SliceSpec::new(Some(-1), None, 2),
            SliceSpec::full(),
            SliceSpec::new(Some(7), Some(-7), 1),
        ];
        for n in 0..4 {
            guard(
                &mut fails,
                || d(format!("slice {n} specs")),
                || drop(slice(&x, &specs[..n.min(3)])),
            );
        }
        for (kernel, stride, padding, dilation, ceil_mode) in [
            ([2, 2], [2, 2], [0, 0], [1, 1], false),
            ([3, 3], [2, 2], [1, 1], [1, 1], true),
            ([3, 2], [1, 3], [1, 1], [2, 1], true),
            ([1, 1], [1, 1], [1, 0], [1, 1], false),
            ([0, 2], [1, 1], [0, 0], [1, 1], false),
            ([2, 2], [0, 1], [0, 0], [0, 1], true),
            ([9, 9], [1, 1], [4, 4], [1, 1], true),
        ] {
            let mp = MaxPool2dParams {
                kernel,
                stride,
                padding,
                dilation,
                ceil_mode,
            };
            guard(
                &mut fails,
                || d(format!("max_pool2d {mp:?}")),
                || drop(max_pool2d(&x, &mp)),
            );
            for count_include_pad in [false, true] {
                let ap = AvgPool2dParams {
                    kernel,
                    stride,
                    padding,
                    ceil_mode,
                    count_include_pad,
                    divisor_override: None,
                };
                guard(
                    &mut fails,
                    || d(format!("avg_pool2d {ap:?}")),
                    || drop(avg_pool2d(&x, &ap)),
                );
            }
            guard(
                &mut fails,
                || d(format!("max_pool1d {kernel:?}")),
                || {
                    drop(max_pool1d(
                        &x,
                        kernel[0],
                        stride[0],
                        padding[0],
                        dilation[0],
                        ceil_mode,
                    ))
                },
            );
            guard(
                &mut fails,
                || d(format!("avg_pool1d {kernel:?}")),
                || {
                    drop(avg_pool1d(
                        &x, kernel[0], stride[0], padding[0], ceil_mode, true,
                    ))
                },
            );
        }
        for out in [0usize, 1, 2, 7] {
            guard(
                &mut fails,
                || d(format!("adaptive_avg_pool2d {out}")),
                || drop(adaptive_avg_pool2d(&x, [out, 2])),
            );
            guard(
                &mut fails,
                || d(format!("adaptive_max_pool2d {out}")),
                || drop(adaptive_max_pool2d(&x, [2, out])),
            );
            guard(
                &mut fails,
                || d(format!("adaptive_avg_pool1d {out}")),
                || drop(adaptive_avg_pool1d(&x, out)),
            );
            guard(
                &mut fails,
                || d(format!("adaptive_max_pool1d {out}")),
                || drop(adaptive_max_pool1d(&x, out)),
            );
        }
        for op in [
            Unary::Relu,
            Unary::Gelu(GeluApproximate::Tanh),
            Unary::Clamp {
                min: None,
                max: None,
            },
        ] {
            guard(
                &mut fails,
                || d(format!("unary {op:?}")),
                || drop(unary(op, &x)),
            );
        }
        guard(
            &mut fails,
            || d("clamp".into()),
            || drop(clamp(&x, None, None)),
        );
        guard(
            &mut fails,
            || d("dropout".into()),
            || drop(dropout(&x, f32::NAN, false)),
        );
    }
    finish(fails);
}
