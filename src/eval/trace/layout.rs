//! The memory layout of a traced tensor, where the graph shows it for certain, for `view`'s
//! stride check (`shapes::layout`). Layouts are followed only through ops whose result layout
//! is fixed: inputs, parameters, the results of products, normalisations and layers that
//! allocate their output, and `contiguous()` are row-major; `transpose` / `permute` / `t`
//! reorder strides; `view`, `reshape`, `unsqueeze` and indexing by an int derive theirs;
//! elementwise ops follow PyTorch's TensorIterator (`Layout::elementwise`); pooling,
//! convolutions and resampling keep a row-major input row-major. Anything else is unknown,
//! and an unknown layout never fails the check.
use std::collections::HashMap;

use crate::graph::{Arg, Graph, NodeId, Op, OpKey};
use crate::shapes::layout::Layout;
use crate::shapes::{Meta, Scalar};

/// How far back a layout is followed.
const MAX_DEPTH: usize = 48;

/// The node's sizes when every one is a known int.
fn sizes(g: &Graph, id: NodeId) -> Option<Vec<i64>> {
    let t = g.node(id).meta.as_tensor()?;
    t.shape.as_ref()?.iter().map(|d| d.known()).collect()
}

fn node_arg(a: Option<&Arg>) -> Option<NodeId> {
    match a? {
        Arg::Node(n) => Some(*n),
        _ => None,
    }
}

/// An int argument: a literal, or a node that holds a known int.
fn int_arg(g: &Graph, a: Option<&Arg>) -> Option<i64> {
    match a? {
        Arg::Int(v) => Some(*v),
        Arg::Node(n) => match &g.node(*n).meta {
            Meta::Scalar(Scalar::Int(Some(v)), _) => Some(*v),
            _ => None,
        },
        _ => None,
    }
}

fn wrap(d: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let d = if d < 0 { d + r } else { d };
    (0..r).contains(&d).then_some(d as usize)
}

/// Positional argument `pos`, or keyword `name`.
fn arg<'g>(g: &'g Graph, id: NodeId, pos: usize, name: &str) -> Option<&'g Arg> {
    let n = g.node(id);
    n.args
        .get(pos)
        .or_else(|| n.kwargs.iter().find(|(k, _)| k == name).map(|(_, a)| a))
}

/// Layers whose output is a freshly allocated, row-major tensor.
const ALLOCATING_LAYERS: &[&str] = &[
    "Linear",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "Embedding",
    "Bilinear",
    "LayerNorm",
];

/// Ops whose result is a freshly allocated, row-major tensor.
const ALLOCATING_OPS: &[&str] = &[
    "matmul",
    "mm",
    "bmm",
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "contiguous",
    "zeros",
    "ones",
    "randn",
    "rand",
    "empty",
    "full",
    "arange",
    "tensor",
    "einsum",
    "scaled_dot_product_attention",
    "softmax",
    "log_softmax",
    "layer_norm",
];

/// Ops and layers whose result has its input's strides (`empty_like` with the preserve
/// format: one-input elementwise ops), or that return their input as it is.
const LAYOUT_PRESERVING: &[&str] = &[
    "relu",
    "gelu",
    "silu",
    "sigmoid",
    "tanh",
    "elu",
    "leaky_relu",
    "hardtanh",
    "relu6",
    "softplus",
    "mish",
    "hardswish",
    "hardsigmoid",
    "neg",
    "abs",
    "exp",
    "dropout",
    "clone",
    "float",
    "ReLU",
    "GELU",
    "SiLU",
    "Sigmoid",
    "Tanh",
    "ELU",
    "LeakyReLU",
    "Hardtanh",
    "ReLU6",
    "Softplus",
    "Mish",
    "Hardswish",
    "Hardsigmoid",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "Identity",
];

/// Ops and layers whose result is row-major when their input is (they follow the input's
/// memory format, so a channels-last input gives a channels-last result).
const FORMAT_FOLLOWING: &[&str] = &[
    "conv1d",
    "conv2d",
    "conv3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool2d",
    "batch_norm",
    "group_norm",
    "pixel_shuffle",
    "interpolate",
    "upsample",
    "GroupNorm",
    "Upsample",
    "UpsamplingNearest2d",
    "UpsamplingBilinear2d",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "PixelShuffle",
];

/// Elementwise ops of two operands, with a new result.
const ELEMENTWISE_BINARY: &[&str] = &["add", "sub", "mul", "truediv", "div"];

/// Elementwise ops that write into their first operand and return it.
const ELEMENTWISE_IN_PLACE: &[&str] = &["iadd", "isub", "imul", "itruediv"];

/// A dense layout is what a one-input elementwise op, `clone` and the layers returning
/// their input all keep; they differ over a tensor with gaps, so that stays unknown.
fn dense(l: Layout) -> Option<Layout> {
    l.is_non_overlapping_and_dense().then_some(l)
}

pub(super) fn layout_of(g: &Graph, id: NodeId) -> Option<Layout> {
    layout_at(g, id, 0, &mut HashMap::new())
}

/// Layouts found so far in one walk: a residual stream reaches the same node along many
/// paths, and each is followed once.
type Memo = HashMap<NodeId, Option<Layout>>;

fn layout_at(g: &Graph, id: NodeId, depth: usize, memo: &mut Memo) -> Option<Layout> {
    if depth > MAX_DEPTH {
        return None;
    }
    if let Some(known) = memo.get(&id) {
        return known.clone();
    }
    let found = layout_uncached(g, id, depth, memo);
    memo.insert(id, found.clone());
    found
}

fn layout_uncached(g: &Graph, id: NodeId, depth: usize, memo: &mut Memo) -> Option<Layout> {
    let out = sizes(g, id)?;
    let n = g.node(id);
    let first = node_arg(n.args.first());
    let input = |memo: &mut Memo| first.and_then(|i| layout_at(g, i, depth + 1, memo));
    match n.op {
        Op::Placeholder | Op::GetAttr => Some(Layout::contiguous(&out)),
        Op::CallModule => {
            let class = n.module_class.as_deref()?;
            let l = if LAYOUT_PRESERVING.contains(&class) {
                dense(input(memo)?)?
            } else if FORMAT_FOLLOWING.contains(&class) {
                input(memo)?
                    .is_contiguous()
                    .then(|| Layout::contiguous(&out))?
            } else if ALLOCATING_LAYERS.contains(&class) {
                Layout::contiguous(&out)
            } else {
                return None;
            };
            (l.sizes == out).then_some(l)
        }
        Op::CallFunction | Op::CallMethod => {
            let short = OpKey::Function(&n.target).name();
            let l = match short {
                s if LAYOUT_PRESERVING.contains(&s) => dense(input(memo)?)?,
                s if FORMAT_FOLLOWING.contains(&s) => input(memo)?
                    .is_contiguous()
                    .then(|| Layout::contiguous(&out))?,
                s if ALLOCATING_OPS.contains(&s) => Layout::contiguous(&out),
                // scalars aside, the operands' layouts decide the result's (TensorIterator)
                s if ELEMENTWISE_BINARY.contains(&s) => {
                    let layouts: Vec<Layout> = n
                        .args
                        .iter()
                        .filter_map(|a| node_arg(Some(a)))
                        .filter(|&i| g.node(i).meta.as_tensor().is_some())
                        .map(|i| layout_at(g, i, depth + 1, memo))
                        .collect::<Option<_>>()?;
                    if layouts.is_empty() {
                        return None;
                    }
                    Layout::elementwise(&out, &layouts)?
                }
                s if ELEMENTWISE_IN_PLACE.contains(&s) => input(memo)?,
                "transpose" | "swapaxes" | "swapdims" => {
                    let l = input(memo)?;
                    let rank = l.sizes.len();
                    let a = wrap(int_arg(g, arg(g, id, 1, "dim0"))?, rank)?;
                    let b = wrap(int_arg(g, arg(g, id, 2, "dim1"))?, rank)?;
                    let mut order: Vec<usize> = (0..rank).collect();
                    order.swap(a, b);
                    l.permuted(&order)?
                }
                "t" => {
                    let l = input(memo)?;
                    match l.sizes.len() {
                        2 => l.permuted(&[1, 0])?,
                        _ => l,
                    }
                }
                "permute" => {
                    let l = input(memo)?;
                    let rank = l.sizes.len();
                    let order: Vec<usize> = match n.args.get(1..)? {
                        [Arg::List(items)] | [Arg::Tuple(items)] => items
                            .iter()
                            .map(|a| wrap(int_arg(g, Some(a))?, rank))
                            .collect::<Option<_>>()?,
                        items => items
                            .iter()
                            .map(|a| wrap(int_arg(g, Some(a))?, rank))
                            .collect::<Option<_>>()?,
                    };
                    l.permuted(&order)?
                }
                "view" | "view_as" => input(memo)?.viewed(&out)?,
                "reshape" | "flatten" => {
                    let l = input(memo)?;
                    l.viewed(&out).unwrap_or_else(|| Layout::contiguous(&out))
                }
                "unsqueeze" => {
                    let l = input(memo)?;
                    let d = wrap(int_arg(g, arg(g, id, 1, "dim"))?, l.sizes.len() + 1)?;
                    let stride = match (l.sizes.get(d), l.strides.get(d)) {
                        (Some(&s), Some(&st)) => s * st,
                        _ => 1,
                    };
                    let mut l = l;
                    l.sizes.insert(d, 1);
                    l.strides.insert(d, stride);
                    l
                }
                // `t[i]` (and unpacking a tensor): the first dimension selected away
                "getitem" => {
                    let src = node_arg(n.args.first())?;
                    int_arg(g, n.args.get(1))?;
                    let from = g.node(src);
                    let base = if OpKey::Function(&from.target).name() == "unbind" {
                        let l = node_arg(from.args.first())
                            .and_then(|i| layout_at(g, i, depth + 1, memo))?;
                        let d = match arg(g, src, 1, "dim") {
                            Some(a) => wrap(int_arg(g, Some(a))?, l.sizes.len())?,
                            None => 0,
                        };
                        (l, d)
                    } else if from.meta.as_tensor().is_some() {
                        (layout_at(g, src, depth + 1, memo)?, 0)
                    } else {
                        return None;
                    };
                    let (mut l, d) = base;
                    if d >= l.sizes.len() {
                        return None;
                    }
                    l.sizes.remove(d);
                    l.strides.remove(d);
                    l
                }
                _ => return None,
            };
            (l.sizes == out).then_some(l)
        }
        _ => None,
    }
}
