//! Numeric kernels of the bundled CPU executor.
//!
//! Every kernel takes `ndarray` tensors (NCHW for images, like PyTorch) and
//! returns a fresh owned tensor. Shape problems are reported as
//! [`KernelError`] rather than panics, because the shapes come from user
//! models that the static graph builder could only partially check.
//!
//! Kernels never alias their inputs: `view`, `reshape`, `permute` and friends
//! return copies, so an interpreter that wants PyTorch's in-place-through-view
//! behaviour has to model it itself.
//!
//! Dropout: the executor runs models in inference mode, where
//! `torch.nn.functional.dropout(x, p, training=False)` is the identity; see
//! [`elementwise::dropout`].
//!
//! Accuracy: results are f32, but reductions (sums, means, variances,
//! softmax normalisers) accumulate in f64 and composite activations are
//! evaluated in f64 (or, like GELU's central range and softmax's exp, in f32
//! shown to be within 1e-6 of it), so outputs agree with PyTorch's float64
//! results to within 1e-5 relative (see `testutil` for how near-zero outputs of
//! accumulating kernels are judged).
//!
//! Threading: large products, convolutions, pools, softmax, norms and
//! unary maps split their work on rayon's global pool. Built with the
//! `threaded-matmul` feature, GEMMs are instead threaded inside
//! matrixmultiply (limit with `MATMUL_NUM_THREADS`) and the kernels stop
//! splitting products themselves.

pub mod attention;
pub mod conv;
pub mod elementwise;
pub mod embedding;
pub mod init;
pub mod linear;
pub mod norm;
pub mod pool;
pub mod reduce;
pub mod shape_ops;
pub mod softmax;

mod util;

#[cfg(test)]
mod robustness;
#[cfg(test)]
mod testutil;

use ndarray::ArrayD;

/// Dense f32 tensor, the value type of every kernel.
pub type Tensor = ArrayD<f32>;

/// Integer tensor used for indices (embedding lookups, argmax results).
pub type IndexTensor = ArrayD<i64>;

pub type Result<T, E = KernelError> = std::result::Result<T, E>;

/// Why a kernel refused its inputs.
///
/// Each variant carries the name of the op so that an interpreter can show
/// the failure next to the graph node without further bookkeeping.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KernelError {
    /// Two operands whose shapes do not fit together.
    #[error("{op}: shapes {lhs:?} and {rhs:?} are incompatible: {reason}")]
    ShapeMismatch {
        op: &'static str,
        lhs: Vec<usize>,
        rhs: Vec<usize>,
        reason: String,
    },
    /// A single operand whose shape or arguments the op cannot accept.
    #[error("{op}: invalid input of shape {shape:?}: {reason}")]
    InvalidArgument {
        op: &'static str,
        shape: Vec<usize>,
        reason: String,
    },
    /// A dimension argument outside `[-rank, rank)`.
    #[error("{op}: dimension {dim} is out of range for a tensor of rank {rank}")]
    DimOutOfRange {
        op: &'static str,
        dim: isize,
        rank: usize,
    },
    /// An index into a dimension, or an embedding row, that does not exist.
    #[error("{op}: index {index} is out of range for a dimension of size {size}")]
    IndexOutOfRange {
        op: &'static str,
        index: i64,
        size: usize,
    },
    /// Something PyTorch allows that this executor deliberately does not do.
    #[error("{op}: unsupported: {reason}")]
    Unsupported { op: &'static str, reason: String },
}

impl KernelError {
    pub(crate) fn shapes(
        op: &'static str,
        lhs: &[usize],
        rhs: &[usize],
        reason: impl Into<String>,
    ) -> Self {
        KernelError::ShapeMismatch {
            op,
            lhs: lhs.to_vec(),
            rhs: rhs.to_vec(),
            reason: reason.into(),
        }
    }

    pub(crate) fn invalid(op: &'static str, shape: &[usize], reason: impl Into<String>) -> Self {
        KernelError::InvalidArgument {
            op,
            shape: shape.to_vec(),
            reason: reason.into(),
        }
    }

    /// The op that raised the error.
    pub fn op(&self) -> &'static str {
        match self {
            KernelError::ShapeMismatch { op, .. }
            | KernelError::InvalidArgument { op, .. }
            | KernelError::DimOutOfRange { op, .. }
            | KernelError::IndexOutOfRange { op, .. }
            | KernelError::Unsupported { op, .. } => op,
        }
    }
}

pub use attention::{scaled_dot_product_attention, AttnMask};
pub use conv::{
    conv1d, conv2d, conv2d_act, conv2d_act_winograd, conv_transpose1d, conv_transpose2d,
    Conv1dParams, Conv2dParams, ConvPadding, ConvTranspose2dParams, WinogradWeights,
};
pub use elementwise::{
    abs, add, binary, binary_scalar, broadcast_shapes, clamp, div, dropout, elu, eq, erf, exp, ge,
    gelu, gt, hardsigmoid, hardswish, le, leaky_relu, log, lt, maximum, minimum, mish, mul, ne,
    neg, pow, relu, relu6, rsqrt, sigmoid, silu, softplus, sqrt, sub, tanh, unary, unary_inplace,
    where_, BinaryOp, GeluApproximate, Unary,
};
pub use embedding::{embedding, embedding_from_f32};
pub use linear::{
    addmm, bmm, in_out_weight, linear, linear_act, matmul, mm, prefers_in_out_weight,
};
pub use norm::{batch_norm, batch_norm_owned, group_norm, instance_norm, layer_norm, rms_norm};
pub use pool::{
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d, avg_pool1d,
    avg_pool2d, max_pool1d, max_pool2d, AvgPool2dParams, MaxPool2dParams,
};
pub use reduce::{amax, amin, argmax, argmin, mean, prod, std, sum, var, var_correction};
pub use shape_ops::{
    cat, chunk, contiguous, expand, flatten, narrow, pad, permute, repeat, reshape, reshape_owned,
    select, slice, slice_dim, split, split_sizes, squeeze, stack, transpose, unsqueeze, view,
    SliceSpec,
};
pub use softmax::{log_softmax, softmax};
