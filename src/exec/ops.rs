//! The dispatch table: one entry per torch.fx target. Functions are keyed by their
//! canonical target (`torch.nn.functional.relu`, `operator.add`), methods by
//! `method:NAME`, leaf modules by `module:CLASS`. A new op (for example a fused node of
//! the pass pipeline, `staticfx.fused_linear_act`) is one more `reg` line.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use ndarray::{ArrayD, IxDyn};

use super::call::{pair, single, usize_of, Call, OpResult};
use super::kernels::{
    self as k, BinaryOp, Conv1dParams, Conv2dParams, ConvPadding, GeluApproximate, SliceSpec,
    Tensor, Unary,
};
use super::value::RValue;
use crate::shapes::DType;

pub type OpFn = fn(&mut Call) -> OpResult;

pub fn table() -> &'static HashMap<&'static str, OpFn> {
    static TABLE: OnceLock<HashMap<&'static str, OpFn>> = OnceLock::new();
    TABLE.get_or_init(build)
}

fn kerr(e: k::KernelError) -> String {
    e.to_string()
}

fn t(x: Tensor) -> OpResult {
    Ok(RValue::f32(x))
}

// ---------------------------------------------------------------------------------------
// elementwise

/// Takes argument `i` out of the call as an owned f32 tensor when nothing else holds it
/// (the interpreter moves a value into its last user), so the op can work in place.
fn take_unique(c: &mut Call, i: usize) -> Option<Tensor> {
    let slot = c.args.get_mut(i)?;
    if !matches!(slot, RValue::F32(_)) {
        return None;
    }
    let RValue::F32(a) = std::mem::replace(slot, RValue::None) else {
        unreachable!("checked above")
    };
    match Arc::try_unwrap(a) {
        Ok(t) => Some(t),
        Err(a) => {
            *slot = RValue::F32(a);
            None
        }
    }
}

/// Whether a tensor of shape `b` broadcasts to exactly shape `a`.
fn broadcasts_into(b: &[usize], a: &[usize]) -> bool {
    b.len() <= a.len()
        && b.iter()
            .rev()
            .zip(a.iter().rev())
            .all(|(&x, &y)| x == y || x == 1)
}

/// `a <op> b` written into `a`'s buffer when `a` is owned by this call alone and the result
/// has `a`'s shape (the common residual `x + y` and scalar arithmetic).
pub(crate) fn binary_inplace(c: &mut Call, op: BinaryOp) -> Option<OpResult> {
    if !matches!(
        op,
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div
    ) || c.args.len() != 2
    {
        return None;
    }
    let lhs_shape = match &c.args[0] {
        RValue::F32(a) => a.shape().to_vec(),
        _ => return None,
    };
    let fits = match &c.args[1] {
        RValue::F32(b) => broadcasts_into(b.shape(), &lhs_shape),
        v => !v.is_tensor() && v.as_f64().is_some(),
    };
    if !fits {
        return None;
    }
    let mut a = take_unique(c, 0)?;
    let rhs = &c.args[1];
    // One monomorphised loop per op: through a function pointer every element was an
    // indirect call, and the residual adds of a ViT cost more than its layer norms.
    match op {
        BinaryOp::Add => combine_into(&mut a, rhs, |x, y| x + y)?,
        BinaryOp::Sub => combine_into(&mut a, rhs, |x, y| x - y)?,
        BinaryOp::Mul => combine_into(&mut a, rhs, |x, y| x * y)?,
        BinaryOp::Div => combine_into(&mut a, rhs, |x, y| x / y)?,
        _ => unreachable!("checked above"),
    }
    Some(Ok(RValue::f32(a)))
}

/// `a = f(a, rhs)` for a tensor `rhs` that broadcasts into `a`, or a Python number.
fn combine_into(a: &mut Tensor, rhs: &RValue, f: impl Fn(f32, f32) -> f32) -> Option<()> {
    match rhs {
        RValue::F32(b) => match (a.as_slice_mut(), b.as_slice()) {
            (Some(xs), Some(ys)) if xs.len() == ys.len() => {
                for (x, &y) in xs.iter_mut().zip(ys) {
                    *x = f(*x, y);
                }
            }
            _ => ndarray::Zip::from(a)
                .and_broadcast(&**b)
                .for_each(|x, &y| *x = f(*x, y)),
        },
        v => {
            let s = v.as_f64()? as f32;
            a.mapv_inplace(|x| f(x, s));
        }
    }
    Some(())
}

fn unary_op(c: &mut Call, op: Unary) -> OpResult {
    if let Some(mut x) = take_unique(c, 0) {
        k::unary_inplace(op, &mut x);
        return t(x);
    }
    match c.req(0, "input")? {
        RValue::F32(x) => t(k::unary(op, x)),
        RValue::Bool(x) => t(k::unary(op, x)),
        RValue::I64(x) => t(k::unary(op, &x.mapv(|v| v as f32))),
        v => {
            let x = v
                .as_f64()
                .ok_or_else(|| format!("{} of {}", op.name(), v.describe()))?;
            Ok(RValue::Float(op.apply(x as f32) as f64))
        }
    }
}

macro_rules! unary_fns {
    ($($name:ident => $op:expr),* $(,)?) => {
        $(fn $name(c: &mut Call) -> OpResult { unary_op(c, $op) })*
    };
}

unary_fns! {
    op_relu => Unary::Relu, op_relu6 => Unary::Relu6, op_silu => Unary::Silu,
    op_sigmoid => Unary::Sigmoid, op_tanh => Unary::Tanh, op_hardswish => Unary::Hardswish,
    op_hardsigmoid => Unary::Hardsigmoid, op_mish => Unary::Mish, op_exp => Unary::Exp,
    op_log => Unary::Log, op_sqrt => Unary::Sqrt, op_rsqrt => Unary::Rsqrt, op_neg => Unary::Neg,
    op_abs => Unary::Abs, op_sin => Unary::Sin, op_cos => Unary::Cos, op_erf => Unary::Erf,
    op_floor => Unary::Floor, op_ceil => Unary::Ceil, op_logsigmoid => Unary::LogSigmoid,
    op_reciprocal => Unary::Reciprocal, op_square => Unary::Square, op_selu => Unary::Selu,
    op_log1p => Unary::Log1p, op_expm1 => Unary::Expm1, op_sign => Unary::Sign,
}

fn op_gelu(c: &mut Call) -> OpResult {
    let a = match c.str(1, "approximate")? {
        None | Some("none") => GeluApproximate::None,
        Some("tanh") => GeluApproximate::Tanh,
        Some(o) => return Err(format!("unknown approximate={o:?}")),
    };
    unary_op(c, Unary::Gelu(a))
}

fn op_leaky_relu(c: &mut Call) -> OpResult {
    let s = c.float(1, "negative_slope", 0.01)? as f32;
    unary_op(c, Unary::LeakyRelu { negative_slope: s })
}

fn op_elu(c: &mut Call) -> OpResult {
    let a = c.float(1, "alpha", 1.0)? as f32;
    unary_op(c, Unary::Elu { alpha: a })
}

fn op_softplus(c: &mut Call) -> OpResult {
    let beta = c.float(1, "beta", 1.0)? as f32;
    let threshold = c.float(2, "threshold", 20.0)? as f32;
    unary_op(c, Unary::Softplus { beta, threshold })
}

fn op_hardtanh(c: &mut Call) -> OpResult {
    let min = c.float(1, "min_val", -1.0)? as f32;
    let max = c.float(2, "max_val", 1.0)? as f32;
    unary_op(c, Unary::Hardtanh { min, max })
}

fn op_clamp(c: &mut Call) -> OpResult {
    let min = c.opt_float(1, "min")?.map(|v| v as f32);
    let max = c.opt_float(2, "max")?.map(|v| v as f32);
    unary_op(c, Unary::Clamp { min, max })
}

fn op_identity(c: &mut Call) -> OpResult {
    Ok(c.req(0, "input")?.clone())
}

/// A tensor operand as f32 (bool and int64 tensors are widened).
fn as_f32(v: &RValue) -> Option<Arc<Tensor>> {
    match v {
        RValue::F32(t) | RValue::Bool(t) => Some(t.clone()),
        RValue::I64(t) => Some(Arc::new(t.mapv(|x| x as f32))),
        _ => None,
    }
}

fn py_binary(op: BinaryOp, a: &RValue, b: &RValue) -> Option<RValue> {
    use RValue::*;
    let ints: Option<(i64, i64)> = match (a, b) {
        (Int(_) | PyBool(_), Int(_) | PyBool(_)) => Some((a.as_int()?, b.as_int()?)),
        _ => Option::None,
    };
    if let Some((x, y)) = ints {
        let r: RValue = match op {
            BinaryOp::Add => Int(x.checked_add(y)?),
            BinaryOp::Sub => Int(x.checked_sub(y)?),
            BinaryOp::Mul => Int(x.checked_mul(y)?),
            BinaryOp::Div => Float(x as f64 / y as f64),
            BinaryOp::FloorDivide if y != 0 => {
                Int(x.div_euclid(y) - i64::from(x.rem_euclid(y) != 0 && y < 0))
            }
            BinaryOp::Remainder if y != 0 => Int(((x % y) + y) % y),
            BinaryOp::Pow if y >= 0 => Int(x.checked_pow(u32::try_from(y).ok()?)?),
            BinaryOp::Pow => Float((x as f64).powf(y as f64)),
            BinaryOp::Maximum => Int(x.max(y)),
            BinaryOp::Minimum => Int(x.min(y)),
            BinaryOp::Eq => PyBool(x == y),
            BinaryOp::Ne => PyBool(x != y),
            BinaryOp::Lt => PyBool(x < y),
            BinaryOp::Le => PyBool(x <= y),
            BinaryOp::Gt => PyBool(x > y),
            BinaryOp::Ge => PyBool(x >= y),
            BinaryOp::LogicalAnd => PyBool(x != 0 && y != 0),
            BinaryOp::LogicalOr => PyBool(x != 0 || y != 0),
            _ => return Option::None,
        };
        return Some(r);
    }
    let (x, y) = (a.as_f64()?, b.as_f64()?);
    Some(match op {
        BinaryOp::Add => Float(x + y),
        BinaryOp::Sub => Float(x - y),
        BinaryOp::Mul => Float(x * y),
        BinaryOp::Div => Float(x / y),
        BinaryOp::FloorDivide => Float((x / y).floor()),
        BinaryOp::Remainder => Float(x - (x / y).floor() * y),
        BinaryOp::Pow => Float(x.powf(y)),
        BinaryOp::Maximum => Float(x.max(y)),
        BinaryOp::Minimum => Float(x.min(y)),
        BinaryOp::Eq => PyBool(x == y),
        BinaryOp::Ne => PyBool(x != y),
        BinaryOp::Lt => PyBool(x < y),
        BinaryOp::Le => PyBool(x <= y),
        BinaryOp::Gt => PyBool(x > y),
        BinaryOp::Ge => PyBool(x >= y),
        _ => return Option::None,
    })
}

fn is_compare(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
    )
}

pub fn binary_values(op: BinaryOp, a: &RValue, b: &RValue) -> OpResult {
    if !a.is_tensor() && !b.is_tensor() {
        // Tuple concatenation (`size[:2] + (h, w)`) and repetition.
        if let (RValue::Seq(x), RValue::Seq(y), BinaryOp::Add) = (a, b, op) {
            return Ok(RValue::Seq(x.iter().chain(y.iter()).cloned().collect()));
        }
        return py_binary(op, a, b).ok_or_else(|| {
            format!(
                "{} is not defined for {} and {}",
                op.name(),
                a.describe(),
                b.describe()
            )
        });
    }
    let wrap = |r: Tensor| {
        if is_compare(op) || matches!(op, BinaryOp::LogicalAnd | BinaryOp::LogicalOr) {
            RValue::Bool(Arc::new(r))
        } else {
            RValue::f32(r)
        }
    };
    match (as_f32(a), as_f32(b)) {
        (Some(x), Some(y)) => {
            // Same-shape fast path is inside the kernel.
            k::binary(op, &x, &y).map(wrap).map_err(kerr)
        }
        (Some(x), None) => {
            let s = b
                .as_f64()
                .ok_or_else(|| format!("{} of a tensor and {}", op.name(), b.describe()))?;
            k::binary_scalar(op, &x, s as f32).map(wrap).map_err(kerr)
        }
        (None, Some(y)) => {
            let s = a
                .as_f64()
                .ok_or_else(|| format!("{} of {} and a tensor", op.name(), a.describe()))?;
            k::binary(op, &Tensor::from_elem(IxDyn(&[]), s as f32), &y)
                .map(wrap)
                .map_err(kerr)
        }
        (None, None) => unreachable!("one side is a tensor"),
    }
}

fn binop(c: &mut Call, op: BinaryOp) -> OpResult {
    if let Some(r) = binary_inplace(c, op) {
        return r;
    }
    let a = c.req(0, "input")?;
    let b = c.req(1, "other")?;
    binary_values(op, a, b)
}

macro_rules! binary_fns {
    ($($name:ident => $op:expr),* $(,)?) => {
        $(fn $name(c: &mut Call) -> OpResult { binop(c, $op) })*
    };
}

binary_fns! {
    op_mul => BinaryOp::Mul, op_pow => BinaryOp::Pow, op_maximum => BinaryOp::Maximum,
    op_minimum => BinaryOp::Minimum, op_eq => BinaryOp::Eq, op_ne => BinaryOp::Ne,
    op_lt => BinaryOp::Lt, op_le => BinaryOp::Le, op_gt => BinaryOp::Gt, op_ge => BinaryOp::Ge,
    op_floordiv => BinaryOp::FloorDivide, op_mod => BinaryOp::Remainder,
    op_and => BinaryOp::LogicalAnd, op_or => BinaryOp::LogicalOr,
}

/// `torch.add(x, y, alpha=a)` / `x + y`.
fn op_add(c: &mut Call) -> OpResult {
    add_sub(c, BinaryOp::Add)
}

fn op_sub(c: &mut Call) -> OpResult {
    add_sub(c, BinaryOp::Sub)
}

fn add_sub(c: &mut Call, op: BinaryOp) -> OpResult {
    if c.opt(2, "alpha").is_none() {
        if let Some(r) = binary_inplace(c, op) {
            return r;
        }
    }
    let a = c.req(0, "input")?;
    let b = c.req(1, "other")?;
    match c.opt_float(2, "alpha")? {
        None => binary_values(op, a, b),
        Some(alpha) => {
            let scaled = binary_values(BinaryOp::Mul, b, &RValue::Float(alpha))?;
            binary_values(op, a, &scaled)
        }
    }
}

fn op_div(c: &mut Call) -> OpResult {
    let op = match c.str(2, "rounding_mode")? {
        None => BinaryOp::Div,
        Some("floor") => BinaryOp::FloorDivide,
        Some(m) => return Err(format!("rounding_mode={m:?} is not supported")),
    };
    binop(c, op)
}

/// `2 - x` is recorded as `operator.sub(2, x)`; `operator.rsub`-like targets are not
/// produced by torch.fx, but `torch.rsub(x, y)` is `y - x`.
fn op_rsub(c: &mut Call) -> OpResult {
    binary_values(BinaryOp::Sub, c.req(1, "other")?, c.req(0, "input")?)
}

fn op_not(c: &mut Call) -> OpResult {
    match c.req(0, "input")? {
        RValue::Bool(x) => Ok(RValue::Bool(Arc::new(x.mapv(|v| (v == 0.0) as u8 as f32)))),
        v => Ok(RValue::PyBool(
            v.as_f64().ok_or("`not` of a non-scalar")? == 0.0,
        )),
    }
}

fn op_where(c: &mut Call) -> OpResult {
    let cond = as_f32(c.req(0, "condition")?).ok_or("condition must be a tensor")?;
    let side = |i: usize, n: &str| -> Result<Arc<Tensor>, String> {
        let v = c.req(i, n)?;
        as_f32(v).map_or_else(
            || {
                v.as_f64()
                    .map(|s| Arc::new(Tensor::from_elem(IxDyn(&[]), s as f32)))
                    .ok_or_else(|| format!("`{n}` should be a tensor or a number"))
            },
            Ok,
        )
    };
    let (a, b) = (side(1, "input")?, side(2, "other")?);
    t(k::where_(&cond, &a, &b).map_err(kerr)?)
}

fn op_masked_fill(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let mask = as_f32(c.req(1, "mask")?).ok_or("mask must be a tensor")?;
    let v = c.float(2, "value", 0.0)? as f32;
    t(k::where_(&mask, &Tensor::from_elem(IxDyn(&[]), v), x).map_err(kerr)?)
}

// ---------------------------------------------------------------------------------------
// linear algebra

fn op_matmul(c: &mut Call) -> OpResult {
    t(k::matmul(c.tensor(0, "input")?, c.tensor(1, "other")?).map_err(kerr)?)
}

fn op_bmm(c: &mut Call) -> OpResult {
    t(k::bmm(c.tensor(0, "input")?, c.tensor(1, "mat2")?).map_err(kerr)?)
}

fn op_mm(c: &mut Call) -> OpResult {
    t(k::mm(c.tensor(0, "input")?, c.tensor(1, "mat2")?).map_err(kerr)?)
}

fn op_linear(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let w = c.tensor(1, "weight")?;
    let b = c.opt_tensor(2, "bias")?;
    t(k::linear(x, w, b.map(|b| &**b)).map_err(kerr)?)
}

// ---------------------------------------------------------------------------------------
// convolution, normalisation, pooling

fn conv_padding<const N: usize>(c: &Call, i: usize) -> Result<ConvPadding<N>, String> {
    match c.opt(i, "padding") {
        None => Ok(ConvPadding::Explicit([0; N])),
        Some(RValue::Str(s)) if s == "same" => Ok(ConvPadding::Same),
        Some(RValue::Str(s)) if s == "valid" => Ok(ConvPadding::Valid),
        Some(v) => {
            let l = v
                .as_int_list()
                .ok_or_else(|| format!("bad padding {}", v.describe()))?;
            let mut out = [0usize; N];
            for (j, o) in out.iter_mut().enumerate() {
                *o = usize_of(*l.get(j).or(l.first()).ok_or("empty padding")?, "padding")?;
            }
            Ok(ConvPadding::Explicit(out))
        }
    }
}

/// The stride, padding, dilation and groups of a `conv2d` call.
pub(crate) fn conv2d_params(c: &Call) -> Result<Conv2dParams, String> {
    Ok(Conv2dParams {
        stride: pair(&c.ints(3, "stride")?.unwrap_or(vec![1]), "stride")?,
        padding: conv_padding::<2>(c, 4)?,
        dilation: pair(&c.ints(5, "dilation")?.unwrap_or(vec![1]), "dilation")?,
        groups: usize_of(c.int(6, "groups", 1)?, "groups")?,
    })
}

fn op_conv2d(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let w = c.tensor(1, "weight")?;
    let b = c.opt_tensor(2, "bias")?;
    let p = conv2d_params(c)?;
    t(k::conv2d(x, w, b.map(|b| &**b), &p).map_err(kerr)?)
}

fn op_conv1d(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let w = c.tensor(1, "weight")?;
    let b = c.opt_tensor(2, "bias")?;
    let p = Conv1dParams {
        stride: single(&c.ints(3, "stride")?.unwrap_or(vec![1]), "stride")?,
        padding: conv_padding::<1>(c, 4)?,
        dilation: single(&c.ints(5, "dilation")?.unwrap_or(vec![1]), "dilation")?,
        groups: usize_of(c.int(6, "groups", 1)?, "groups")?,
    };
    t(k::conv1d(x, w, b.map(|b| &**b), &p).map_err(kerr)?)
}

/// `F.conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups, dilation)`.
fn op_conv_transpose2d(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let w = c.tensor(1, "weight")?;
    let b = c.opt_tensor(2, "bias")?;
    let p = k::ConvTranspose2dParams {
        stride: pair(&c.ints(3, "stride")?.unwrap_or(vec![1]), "stride")?,
        padding: pair(&c.ints(4, "padding")?.unwrap_or(vec![0]), "padding")?,
        output_padding: pair(
            &c.ints(5, "output_padding")?.unwrap_or(vec![0]),
            "output_padding",
        )?,
        groups: usize_of(c.int(6, "groups", 1)?, "groups")?,
        dilation: pair(&c.ints(7, "dilation")?.unwrap_or(vec![1]), "dilation")?,
    };
    t(k::conv_transpose2d(x, w, b.map(|b| &**b), &p).map_err(kerr)?)
}

fn op_conv_transpose1d(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let w = c.tensor(1, "weight")?;
    let b = c.opt_tensor(2, "bias")?;
    let one = |i: usize, n: &str, d: i64| -> Result<usize, String> {
        single(&c.ints(i, n)?.unwrap_or(vec![d]), n)
    };
    t(k::conv_transpose1d(
        x,
        w,
        b.map(|b| &**b),
        one(3, "stride", 1)?,
        one(4, "padding", 0)?,
        one(5, "output_padding", 0)?,
        usize_of(c.int(6, "groups", 1)?, "groups")?,
        one(7, "dilation", 1)?,
    )
    .map_err(kerr)?)
}

/// `F.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)`.
fn op_batch_norm(c: &mut Call) -> OpResult {
    let owned = take_unique(c, 0);
    let borrowed = match &owned {
        Some(_) => None,
        None => Some(c.tensor(0, "input")?.clone()),
    };
    let (Some(m), Some(v)) = (
        c.opt_tensor(1, "running_mean")?,
        c.opt_tensor(2, "running_var")?,
    ) else {
        return Err("batch norm without running statistics (track_running_stats=False) uses batch statistics, which inference mode does not support".into());
    };
    let w = c.opt_tensor(3, "weight")?;
    let b = c.opt_tensor(4, "bias")?;
    let eps = c.float(7, "eps", 1e-5)? as f32;
    let (w, b) = (w.map(|a| &**a), b.map(|a| &**a));
    t(match (owned, borrowed) {
        (Some(x), _) => k::batch_norm_owned(x, m, v, w, b, eps),
        (None, Some(x)) => k::batch_norm(&x, m, v, w, b, eps),
        (None, None) => unreachable!("one of the two is set"),
    }
    .map_err(kerr)?)
}

fn op_layer_norm(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let shape: Vec<usize> = c
        .ints(1, "normalized_shape")?
        .ok_or("missing normalized_shape")?
        .into_iter()
        .map(|d| usize_of(d, "normalized_shape"))
        .collect::<Result<_, _>>()?;
    let w = c.opt_tensor(2, "weight")?;
    let b = c.opt_tensor(3, "bias")?;
    let eps = c.float(4, "eps", 1e-5)? as f32;
    t(k::layer_norm(x, &shape, w.map(|a| &**a), b.map(|a| &**a), eps).map_err(kerr)?)
}

fn op_group_norm(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let g = usize_of(c.req_int(1, "num_groups")?, "num_groups")?;
    let w = c.opt_tensor(2, "weight")?;
    let b = c.opt_tensor(3, "bias")?;
    let eps = c.float(4, "eps", 1e-5)? as f32;
    t(k::group_norm(x, g, w.map(|a| &**a), b.map(|a| &**a), eps).map_err(kerr)?)
}

/// The window arguments the 2-D pools share: `kernel_size`, `stride` (None when absent or
/// empty: the pool's default, the kernel) and `padding`.
type Window2d = ([usize; 2], Option<[usize; 2]>, [usize; 2]);

fn pool2d_window(c: &Call) -> Result<Window2d, String> {
    let kernel = pair(
        &c.ints(1, "kernel_size")?.ok_or("missing kernel_size")?,
        "kernel_size",
    )?;
    let stride = match c.ints(2, "stride")? {
        Some(s) if !s.is_empty() => Some(pair(&s, "stride")?),
        _ => None,
    };
    let padding = pair(&c.ints(3, "padding")?.unwrap_or(vec![0]), "padding")?;
    Ok((kernel, stride, padding))
}

fn op_max_pool2d(c: &mut Call) -> OpResult {
    if c.bool(6, "return_indices", false)? {
        return Err("max_pool2d with return_indices=True is not supported".into());
    }
    let x = c.tensor(0, "input")?;
    let (kernel, stride, padding) = pool2d_window(c)?;
    let mut p = k::MaxPool2dParams::new(kernel);
    p.stride = stride.unwrap_or(p.stride);
    p.padding = padding;
    p.dilation = pair(&c.ints(4, "dilation")?.unwrap_or(vec![1]), "dilation")?;
    p.ceil_mode = c.bool(5, "ceil_mode", false)?;
    t(k::max_pool2d(x, &p).map_err(kerr)?)
}

fn op_avg_pool2d(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let (kernel, stride, padding) = pool2d_window(c)?;
    let mut p = k::AvgPool2dParams::new(kernel);
    p.stride = stride.unwrap_or(p.stride);
    p.padding = padding;
    p.ceil_mode = c.bool(4, "ceil_mode", false)?;
    p.count_include_pad = c.bool(5, "count_include_pad", true)?;
    p.divisor_override = c
        .opt_int(6, "divisor_override")?
        .map(|d| usize_of(d, "divisor_override"))
        .transpose()?;
    t(k::avg_pool2d(x, &p).map_err(kerr)?)
}

fn op_max_pool1d(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let kernel = single(
        &c.ints(1, "kernel_size")?.ok_or("missing kernel_size")?,
        "kernel_size",
    )?;
    let stride = match c.ints(2, "stride")? {
        Some(s) if !s.is_empty() => single(&s, "stride")?,
        _ => kernel,
    };
    let padding = single(&c.ints(3, "padding")?.unwrap_or(vec![0]), "padding")?;
    let dilation = single(&c.ints(4, "dilation")?.unwrap_or(vec![1]), "dilation")?;
    let ceil = c.bool(5, "ceil_mode", false)?;
    t(k::max_pool1d(x, kernel, stride, padding, dilation, ceil).map_err(kerr)?)
}

fn op_avg_pool1d(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let kernel = single(
        &c.ints(1, "kernel_size")?.ok_or("missing kernel_size")?,
        "kernel_size",
    )?;
    let stride = match c.ints(2, "stride")? {
        Some(s) if !s.is_empty() => single(&s, "stride")?,
        _ => kernel,
    };
    let padding = single(&c.ints(3, "padding")?.unwrap_or(vec![0]), "padding")?;
    let ceil = c.bool(4, "ceil_mode", false)?;
    let cip = c.bool(5, "count_include_pad", true)?;
    t(k::avg_pool1d(x, kernel, stride, padding, ceil, cip).map_err(kerr)?)
}

/// Adaptive output sizes: an int, or a tuple whose `None` entries keep the input size.
fn adaptive_size(c: &Call, x: &Tensor, n: usize) -> Result<Vec<usize>, String> {
    let v = c.req(1, "output_size")?;
    let spatial = &x.shape()[x.ndim().saturating_sub(n)..];
    let entries: Vec<RValue> = match v {
        RValue::Seq(s) => s.clone(),
        other => vec![other.clone(); n],
    };
    if entries.len() != n {
        return Err(format!(
            "output_size should have {n} entries, got {}",
            v.describe()
        ));
    }
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| match e {
            RValue::None => Ok(spatial.get(i).copied().unwrap_or(1)),
            e => usize_of(e.as_int().ok_or("output_size must be ints")?, "output_size"),
        })
        .collect()
}

fn op_adaptive_avg_pool2d(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let s = adaptive_size(c, x, 2)?;
    t(k::adaptive_avg_pool2d(x, [s[0], s[1]]).map_err(kerr)?)
}

fn op_adaptive_max_pool2d(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let s = adaptive_size(c, x, 2)?;
    t(k::adaptive_max_pool2d(x, [s[0], s[1]]).map_err(kerr)?)
}

fn op_adaptive_avg_pool1d(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let s = adaptive_size(c, x, 1)?;
    t(k::adaptive_avg_pool1d(x, s[0]).map_err(kerr)?)
}

fn op_embedding(c: &mut Call) -> OpResult {
    let w = c.tensor(1, "weight")?;
    match c.req(0, "input")? {
        RValue::I64(ids) => t(k::embedding(ids, w).map_err(kerr)?),
        RValue::F32(ids) => t(k::embedding_from_f32(ids, w).map_err(kerr)?),
        v => Err(format!(
            "embedding indices should be a tensor, got {}",
            v.describe()
        )),
    }
}

fn dim_arg(c: &Call, i: usize, default: Option<i64>) -> Result<isize, String> {
    match (c.opt_int(i, "dim")?, default) {
        (Some(d), _) | (None, Some(d)) => Ok(d as isize),
        (None, None) => {
            Err("softmax without `dim` is deprecated in torch and not supported".into())
        }
    }
}

fn op_softmax(c: &mut Call) -> OpResult {
    t(k::softmax(c.tensor(0, "input")?, dim_arg(c, 1, None)?).map_err(kerr)?)
}

fn op_log_softmax(c: &mut Call) -> OpResult {
    t(k::log_softmax(c.tensor(0, "input")?, dim_arg(c, 1, None)?).map_err(kerr)?)
}

/// Inference mode: every dropout is the identity.
fn op_dropout(c: &mut Call) -> OpResult {
    Ok(c.req(0, "input")?.clone())
}

/// `F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale)`
/// (dropout is off in inference).
fn op_sdpa(c: &mut Call) -> OpResult {
    let q = c.tensor(0, "query")?;
    let kk = c.tensor(1, "key")?;
    let v = c.tensor(2, "value")?;
    let e = q.shape().last().copied().unwrap_or(1);
    let scale = c.float(6, "scale", 1.0 / (e as f64).sqrt())? as f32;
    let causal = c.bool(5, "is_causal", false)?;
    let mask = match c.opt(3, "attn_mask") {
        None => None,
        Some(RValue::Bool(m)) => Some(k::AttnMask::Keep(m)),
        Some(RValue::F32(m)) => Some(k::AttnMask::Add(m)),
        Some(o) => {
            return Err(format!(
                "attn_mask should be a tensor, got {}",
                o.describe()
            ))
        }
    };
    let mask = match (mask, causal) {
        (Some(_), true) => {
            return Err("an explicit attn_mask cannot be combined with is_causal=True".into())
        }
        (Some(m), false) => m,
        (None, true) => k::AttnMask::Causal,
        (None, false) => k::AttnMask::None,
    };
    t(k::scaled_dot_product_attention(q, kk, v, scale, mask).map_err(kerr)?)
}

// ---------------------------------------------------------------------------------------
// reductions

fn reduce(c: &Call, f: fn(&Tensor, &[isize], bool) -> k::Result<Tensor>) -> OpResult {
    let x = as_f32(c.req(0, "input")?).ok_or("reduction of a non-tensor")?;
    let dims = c.dims(1, "dim")?.unwrap_or_default();
    let keep = c.bool(2, "keepdim", false)?;
    t(f(&x, &dims, keep).map_err(kerr)?)
}

fn op_sum(c: &mut Call) -> OpResult {
    reduce(c, k::sum)
}
fn op_mean(c: &mut Call) -> OpResult {
    reduce(c, k::mean)
}
fn op_amax(c: &mut Call) -> OpResult {
    reduce(c, k::amax)
}
fn op_amin(c: &mut Call) -> OpResult {
    reduce(c, k::amin)
}
fn op_prod(c: &mut Call) -> OpResult {
    reduce(c, k::prod)
}

fn var_like(c: &Call, std: bool) -> OpResult {
    let x = c.tensor(0, "input")?;
    let dims = c.dims(1, "dim")?.unwrap_or_default();
    let correction = match (c.opt(2, "unbiased"), c.opt(usize::MAX, "correction")) {
        (_, Some(v)) => v.as_f64().ok_or("correction must be a number")?,
        (Some(RValue::PyBool(false)), None) => 0.0,
        _ => 1.0,
    };
    let keep = c.bool(3, "keepdim", false)?;
    let v = k::var_correction(x, &dims, correction, keep).map_err(kerr)?;
    t(if std { v.mapv(f32::sqrt) } else { v })
}

fn op_var(c: &mut Call) -> OpResult {
    var_like(c, false)
}
fn op_std(c: &mut Call) -> OpResult {
    var_like(c, true)
}

/// `torch.max(x)`, `torch.max(x, dim)` → (values, indices), `torch.max(x, y)`.
fn max_min(c: &mut Call, max: bool) -> OpResult {
    let x = c.tensor(0, "input")?;
    match c.opt(1, "dim") {
        None => t(if max {
            k::amax(x, &[], false)
        } else {
            k::amin(x, &[], false)
        }
        .map_err(kerr)?),
        Some(RValue::F32(_)) | Some(RValue::Bool(_)) => binop(
            c,
            if max {
                BinaryOp::Maximum
            } else {
                BinaryOp::Minimum
            },
        ),
        Some(d) => {
            let d = d.as_int().ok_or("dim must be an int")? as isize;
            let keep = c.bool(2, "keepdim", false)?;
            let vals = if max {
                k::amax(x, &[d], keep)
            } else {
                k::amin(x, &[d], keep)
            }
            .map_err(kerr)?;
            let idx = if max {
                k::argmax(x, Some(d), keep)
            } else {
                k::argmin(x, Some(d), keep)
            }
            .map_err(kerr)?;
            Ok(RValue::Seq(vec![
                RValue::f32(vals),
                RValue::I64(Arc::new(idx)),
            ]))
        }
    }
}

fn op_max(c: &mut Call) -> OpResult {
    max_min(c, true)
}
fn op_min(c: &mut Call) -> OpResult {
    max_min(c, false)
}

fn op_argmax(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let d = c.opt_int(1, "dim")?.map(|d| d as isize);
    Ok(RValue::I64(Arc::new(
        k::argmax(x, d, c.bool(2, "keepdim", false)?).map_err(kerr)?,
    )))
}

fn op_argmin(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let d = c.opt_int(1, "dim")?.map(|d| d as isize);
    Ok(RValue::I64(Arc::new(
        k::argmin(x, d, c.bool(2, "keepdim", false)?).map_err(kerr)?,
    )))
}

// ---------------------------------------------------------------------------------------
// shapes

fn isizes(v: Vec<i64>) -> Vec<isize> {
    v.into_iter().map(|d| d as isize).collect()
}

/// Shape ops on int64 tensors go through f32 when the values fit exactly.
fn shape_op(c: &Call, f: impl Fn(&Tensor) -> k::Result<Tensor>) -> OpResult {
    match c.req(0, "input")? {
        RValue::F32(x) => t(f(x).map_err(kerr)?),
        RValue::Bool(x) => Ok(RValue::Bool(Arc::new(f(x).map_err(kerr)?))),
        RValue::I64(x) => {
            if x.iter().any(|v| v.unsigned_abs() > (1 << 24)) {
                return Err("shape op on an int64 tensor with values beyond 2^24".into());
            }
            let r = f(&x.mapv(|v| v as f32)).map_err(kerr)?;
            Ok(RValue::I64(Arc::new(r.mapv(|v| v as i64))))
        }
        v => Err(format!("expected a tensor, got {}", v.describe())),
    }
}

fn op_view(c: &mut Call) -> OpResult {
    let s = isizes(c.var_ints(1, "shape")?);
    if let Some(x) = take_unique(c, 0) {
        return t(k::reshape_owned(x, &s).map_err(kerr)?);
    }
    shape_op(c, |x| k::reshape(x, &s))
}

fn op_permute(c: &mut Call) -> OpResult {
    let d = isizes(c.var_ints(1, "dims")?);
    shape_op(c, |x| k::permute(x, &d))
}

fn op_transpose(c: &mut Call) -> OpResult {
    let d0 = c.req_int(1, "dim0")? as isize;
    let d1 = c.req_int(2, "dim1")? as isize;
    shape_op(c, |x| k::transpose(x, d0, d1))
}

fn op_t(c: &mut Call) -> OpResult {
    shape_op(c, |x| {
        if x.ndim() < 2 {
            Ok(x.clone())
        } else {
            k::transpose(x, 0, 1)
        }
    })
}

fn op_flatten(c: &mut Call) -> OpResult {
    let s = c.int(1, "start_dim", 0)? as isize;
    let e = c.int(2, "end_dim", -1)? as isize;
    shape_op(c, |x| k::flatten(x, s, e))
}

fn op_unsqueeze(c: &mut Call) -> OpResult {
    let d = c.req_int(1, "dim")? as isize;
    shape_op(c, |x| k::unsqueeze(x, d))
}

fn op_squeeze(c: &mut Call) -> OpResult {
    let d = c.dims(1, "dim")?;
    shape_op(c, |x| k::squeeze(x, d.as_deref()))
}

fn op_contiguous(c: &mut Call) -> OpResult {
    Ok(c.req(0, "input")?.clone())
}

fn op_expand(c: &mut Call) -> OpResult {
    let s = isizes(c.var_ints(1, "size")?);
    shape_op(c, |x| k::expand(x, &s))
}

fn op_expand_as(c: &mut Call) -> OpResult {
    let other = c
        .req(1, "other")?
        .shape()
        .ok_or("expand_as needs a tensor")?;
    let s: Vec<isize> = other.iter().map(|&d| d as isize).collect();
    shape_op(c, |x| k::expand(x, &s))
}

fn op_view_as(c: &mut Call) -> OpResult {
    let other = c.req(1, "other")?.shape().ok_or("view_as needs a tensor")?;
    let s: Vec<isize> = other.iter().map(|&d| d as isize).collect();
    shape_op(c, |x| k::reshape(x, &s))
}

fn op_repeat(c: &mut Call) -> OpResult {
    let r: Vec<usize> = c
        .var_ints(1, "repeats")?
        .into_iter()
        .map(|v| usize_of(v, "repeats"))
        .collect::<Result<_, _>>()?;
    shape_op(c, |x| k::repeat(x, &r))
}

fn op_narrow(c: &mut Call) -> OpResult {
    let d = c.req_int(1, "dim")? as isize;
    let s = c.req_int(2, "start")? as isize;
    let l = usize_of(c.req_int(3, "length")?, "length")?;
    shape_op(c, |x| k::narrow(x, d, s, l))
}

fn op_select(c: &mut Call) -> OpResult {
    let d = c.req_int(1, "dim")? as isize;
    let i = c.req_int(2, "index")? as isize;
    shape_op(c, |x| k::select(x, d, i))
}

fn tensor_list(c: &Call) -> Result<Vec<Arc<Tensor>>, String> {
    match c.req(0, "tensors")? {
        RValue::Seq(v) => v
            .iter()
            .map(|x| as_f32(x).ok_or_else(|| format!("expected tensors, got {}", x.describe())))
            .collect(),
        v => Err(format!(
            "expected a sequence of tensors, got {}",
            v.describe()
        )),
    }
}

fn op_cat(c: &mut Call) -> OpResult {
    let ts = tensor_list(c)?;
    let refs: Vec<&Tensor> = ts.iter().map(|a| &**a).collect();
    t(k::cat(&refs, c.int(1, "dim", 0)? as isize).map_err(kerr)?)
}

fn op_stack(c: &mut Call) -> OpResult {
    let ts = tensor_list(c)?;
    let refs: Vec<&Tensor> = ts.iter().map(|a| &**a).collect();
    t(k::stack(&refs, c.int(1, "dim", 0)? as isize).map_err(kerr)?)
}

fn seq(v: Vec<Tensor>) -> OpResult {
    Ok(RValue::Seq(v.into_iter().map(RValue::f32).collect()))
}

fn op_split(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let dim = c.int(2, "dim", 0)? as isize;
    match c.req(1, "split_size_or_sections")? {
        RValue::Seq(_) => {
            let sizes: Vec<usize> = c
                .ints(1, "split_size_or_sections")?
                .unwrap_or_default()
                .into_iter()
                .map(|v| usize_of(v, "split sizes"))
                .collect::<Result<_, _>>()?;
            seq(k::split_sizes(x, &sizes, dim).map_err(kerr)?)
        }
        v => {
            let s = usize_of(v.as_int().ok_or("split size must be an int")?, "split_size")?;
            seq(k::split(x, s, dim).map_err(kerr)?)
        }
    }
}

fn op_chunk(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let n = usize_of(c.req_int(1, "chunks")?, "chunks")?;
    seq(k::chunk(x, n, c.int(2, "dim", 0)? as isize).map_err(kerr)?)
}

fn op_unbind(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let d = c.int(1, "dim", 0)? as isize;
    let r = x.ndim() as isize;
    let dn = if d < 0 { d + r } else { d };
    if dn < 0 || dn >= r {
        return Err(format!("unbind: dim {d} out of range for rank {r}"));
    }
    let n = x.shape()[dn as usize];
    seq((0..n)
        .map(|i| k::select(x, d, i as isize))
        .collect::<k::Result<Vec<_>>>()
        .map_err(kerr)?)
}

fn op_pad(c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let pads = isizes(c.ints(1, "pad")?.ok_or("missing pad")?);
    match c.str(2, "mode")? {
        None | Some("constant") => {}
        Some(m) => return Err(format!("F.pad mode={m:?} is not supported (only constant)")),
    }
    let v = c.float(3, "value", 0.0)? as f32;
    t(k::pad(x, &pads, v).map_err(kerr)?)
}

/// `x.size()`, `x.size(d)`.
fn op_size(c: &mut Call) -> OpResult {
    let s = c.req(0, "input")?.shape().ok_or("size() of a non-tensor")?;
    match c.opt_int(1, "dim")? {
        None => Ok(RValue::Seq(
            s.iter().map(|&d| RValue::Int(d as i64)).collect(),
        )),
        Some(d) => {
            let r = s.len() as i64;
            let i = if d < 0 { d + r } else { d };
            if i < 0 || i >= r {
                return Err(format!("size({d}) of a tensor of rank {r}"));
            }
            Ok(RValue::Int(s[i as usize] as i64))
        }
    }
}

fn op_dim(c: &mut Call) -> OpResult {
    let s = c.req(0, "input")?.shape().ok_or("dim() of a non-tensor")?;
    Ok(RValue::Int(s.len() as i64))
}

fn op_numel(c: &mut Call) -> OpResult {
    let s = c
        .req(0, "input")?
        .shape()
        .ok_or("numel() of a non-tensor")?;
    Ok(RValue::Int(s.iter().product::<usize>() as i64))
}

/// `builtins.getattr(x, "shape")` and friends.
fn op_getattr(c: &mut Call) -> OpResult {
    let v = c.req(0, "obj")?;
    let name = c.str(1, "name")?.ok_or("getattr needs a name")?;
    match (name, v.shape()) {
        ("shape", Some(s)) => Ok(RValue::Seq(
            s.iter().map(|&d| RValue::Int(d as i64)).collect(),
        )),
        ("ndim", Some(s)) => Ok(RValue::Int(s.len() as i64)),
        ("dtype", Some(_)) => Ok(RValue::Dtype(match v {
            RValue::I64(_) => DType::Int64,
            RValue::Bool(_) => DType::Bool,
            _ => DType::Float32,
        })),
        ("device", Some(_)) => Ok(RValue::Device("cpu".into())),
        ("T" | "mT", Some(_)) => op_t(&mut Call {
            args: vec![v.clone()],
            kwargs: vec![],
        }),
        _ => Err(format!(
            "getattr({}, {name:?}) is not supported",
            v.describe()
        )),
    }
}

/// `.to(dtype)`, `.float()`, `.type_as(y)`: float32 and int64 are the executor's dtypes.
fn convert(v: &RValue, to: DType) -> OpResult {
    match (v, to) {
        (RValue::F32(_), DType::Float32 | DType::Float16 | DType::Bfloat16 | DType::Float64) => {
            Ok(v.clone())
        }
        (RValue::I64(x), d) if d.is_floating() => t(x.mapv(|v| v as f32)),
        (RValue::Bool(x), d) if d.is_floating() => t((**x).clone()),
        (RValue::F32(x) | RValue::Bool(x), DType::Bool) => {
            Ok(RValue::Bool(Arc::new(x.mapv(|v| (v != 0.0) as u8 as f32))))
        }
        (RValue::F32(x) | RValue::Bool(x), d) if d.is_integral() => {
            Ok(RValue::I64(Arc::new(x.mapv(|v| v.trunc() as i64))))
        }
        (RValue::I64(_), d) if d.is_integral() && d != DType::Bool => Ok(v.clone()),
        _ => Err(format!("conversion of {} to {}", v.describe(), to.as_str())),
    }
}

fn op_to(c: &mut Call) -> OpResult {
    let v = c.req(0, "input")?;
    let mut target = None;
    for a in c.args.iter().skip(1).chain(c.kwargs.iter().map(|(_, v)| v)) {
        if let RValue::Dtype(d) = a {
            target = Some(*d);
        }
        if a.is_tensor() {
            target = Some(match a {
                RValue::I64(_) => DType::Int64,
                RValue::Bool(_) => DType::Bool,
                _ => DType::Float32,
            });
        }
    }
    match target {
        None => Ok(v.clone()),
        Some(d) => convert(v, d),
    }
}

fn op_float(c: &mut Call) -> OpResult {
    convert(c.req(0, "input")?, DType::Float32)
}
fn op_long(c: &mut Call) -> OpResult {
    convert(c.req(0, "input")?, DType::Int64)
}
fn op_bool(c: &mut Call) -> OpResult {
    convert(c.req(0, "input")?, DType::Bool)
}

fn creation_dtype(c: &Call, default: DType) -> DType {
    match c.opt(usize::MAX, "dtype") {
        Some(RValue::Dtype(d)) => *d,
        _ => default,
    }
}

fn shape_from(c: &Call, from: usize) -> Result<Vec<usize>, String> {
    c.var_ints(from, "size")?
        .into_iter()
        .map(|d| usize_of(d, "size"))
        .collect()
}

fn filled(shape: &[usize], v: f64, dt: DType) -> OpResult {
    // the executor holds no complex numbers
    if dt.is_complex() {
        return Err(format!("a {} tensor", dt.as_str()));
    }
    if dt.is_floating() {
        t(Tensor::from_elem(IxDyn(shape), v as f32))
    } else if dt == DType::Bool {
        Ok(RValue::Bool(Arc::new(Tensor::from_elem(
            IxDyn(shape),
            (v != 0.0) as u8 as f32,
        ))))
    } else {
        Ok(RValue::I64(Arc::new(ArrayD::from_elem(
            IxDyn(shape),
            v as i64,
        ))))
    }
}

fn op_zeros(c: &mut Call) -> OpResult {
    filled(&shape_from(c, 0)?, 0.0, creation_dtype(c, DType::Float32))
}
fn op_ones(c: &mut Call) -> OpResult {
    filled(&shape_from(c, 0)?, 1.0, creation_dtype(c, DType::Float32))
}
fn op_full(c: &mut Call) -> OpResult {
    let s: Vec<usize> = c
        .ints(0, "size")?
        .ok_or("missing size")?
        .into_iter()
        .map(|d| usize_of(d, "size"))
        .collect::<Result<_, _>>()?;
    let v = c.req(1, "fill_value")?;
    let default = if matches!(v, RValue::Int(_)) {
        DType::Int64
    } else {
        DType::Float32
    };
    filled(
        &s,
        v.as_f64().ok_or("fill_value must be a number")?,
        creation_dtype(c, default),
    )
}

fn like_dtype(v: &RValue) -> DType {
    match v {
        RValue::I64(_) => DType::Int64,
        RValue::Bool(_) => DType::Bool,
        _ => DType::Float32,
    }
}

fn op_zeros_like(c: &mut Call) -> OpResult {
    let v = c.req(0, "input")?;
    filled(
        &v.shape().ok_or("zeros_like of a non-tensor")?,
        0.0,
        creation_dtype(c, like_dtype(v)),
    )
}
fn op_ones_like(c: &mut Call) -> OpResult {
    let v = c.req(0, "input")?;
    filled(
        &v.shape().ok_or("ones_like of a non-tensor")?,
        1.0,
        creation_dtype(c, like_dtype(v)),
    )
}

/// `torch.arange(end)`, `(start, end)`, `(start, end, step)`.
fn op_arange(c: &mut Call) -> OpResult {
    let nums: Vec<&RValue> = c.args.iter().collect();
    let all_int = nums.iter().all(|v| matches!(v, RValue::Int(_)));
    let f = |v: &RValue| {
        v.as_f64()
            .ok_or_else(|| format!("arange bound {}", v.describe()))
    };
    let (start, end, step) = match nums.as_slice() {
        [e] => (0.0, f(e)?, 1.0),
        [s, e] => (f(s)?, f(e)?, 1.0),
        [s, e, st] => (f(s)?, f(e)?, f(st)?),
        _ => {
            let e = c.req(usize::MAX, "end")?;
            (
                c.float(usize::MAX, "start", 0.0)?,
                f(e)?,
                c.float(usize::MAX, "step", 1.0)?,
            )
        }
    };
    if step == 0.0 {
        return Err("arange step must be non-zero".into());
    }
    let n = ((end - start) / step).ceil().max(0.0) as usize;
    let dt = creation_dtype(
        c,
        if all_int {
            DType::Int64
        } else {
            DType::Float32
        },
    );
    if dt.is_complex() {
        return Err(format!("a {} tensor", dt.as_str()));
    }
    if dt.is_floating() {
        t(Tensor::from_shape_fn(IxDyn(&[n]), |i| {
            (start + i[0] as f64 * step) as f32
        }))
    } else {
        Ok(RValue::I64(Arc::new(ArrayD::from_shape_fn(
            IxDyn(&[n]),
            |i| (start + i[0] as f64 * step) as i64,
        ))))
    }
}

/// `torch._assert(cond, msg)` and `torch._assert_async(cond)`, the tensor condition of an
/// `assert` statement under Dynamo: fail the run when the condition is false.
fn op_assert(c: &mut Call) -> OpResult {
    let ok = match c.req(0, "condition")? {
        RValue::PyBool(b) => *b,
        RValue::Bool(t) | RValue::F32(t) => t.iter().all(|&v| v != 0.0),
        v => v.as_f64().map(|x| x != 0.0).unwrap_or(true),
    };
    if ok {
        Ok(RValue::None)
    } else {
        Err(format!(
            "assertion failed: {}",
            c.str(1, "message").ok().flatten().unwrap_or("")
        ))
    }
}

fn math_fn(c: &Call, f: fn(f64) -> f64) -> OpResult {
    let v = c.req(0, "x")?;
    if v.is_tensor() {
        return Err("math.* of a tensor".into());
    }
    Ok(RValue::Float(f(v
        .as_f64()
        .ok_or("math.* of a non-number")?)))
}

fn op_math_sqrt(c: &mut Call) -> OpResult {
    math_fn(c, f64::sqrt)
}
fn op_math_exp(c: &mut Call) -> OpResult {
    math_fn(c, f64::exp)
}
fn op_math_log(c: &mut Call) -> OpResult {
    math_fn(c, f64::ln)
}

/// `operator.getitem`: tuples (int or slice), and tensor basic indexing (ints, slices,
/// None, Ellipsis).
fn op_getitem(c: &mut Call) -> OpResult {
    let obj = c.req(0, "obj")?;
    let idx = c.req(1, "index")?;
    match obj {
        RValue::Seq(items) => match idx {
            RValue::Slice(s) => {
                let spec = slice_spec(s)?;
                let n = items.len() as isize;
                if spec.step <= 0 {
                    return Err("tuple slices need a positive step".into());
                }
                let clamp = |v: isize| if v < 0 { (v + n).max(0) } else { v.min(n) };
                let start = spec.start.map_or(0, clamp);
                let stop = spec.stop.map_or(n, clamp);
                Ok(RValue::Seq(
                    (start..stop.max(start))
                        .step_by(spec.step as usize)
                        .map(|i| items[i as usize].clone())
                        .collect(),
                ))
            }
            _ => {
                let i = idx
                    .as_int()
                    .ok_or_else(|| format!("tuple index {}", idx.describe()))?;
                let n = items.len() as i64;
                let j = if i < 0 { i + n } else { i };
                items
                    .get(usize::try_from(j).map_err(|_| format!("index {i} out of range"))?)
                    .cloned()
                    .ok_or_else(|| format!("index {i} out of range for a tuple of {n}"))
            }
        },
        v if v.is_tensor() => {
            let parts: Vec<RValue> = match idx {
                RValue::Seq(p) => p.clone(),
                other => vec![other.clone()],
            };
            let parts = parts;
            shape_op(c, |x| {
                index_tensor(x, &parts).map_err(|m| k::KernelError::Unsupported {
                    op: "getitem",
                    reason: m,
                })
            })
        }
        v => Err(format!("indexing {} is not supported", v.describe())),
    }
}

fn slice_spec(s: &[RValue; 3]) -> Result<SliceSpec, String> {
    let part = |v: &RValue| -> Result<Option<isize>, String> {
        match v {
            RValue::None => Ok(None),
            v => v
                .as_int()
                .map(|i| Some(i as isize))
                .ok_or_else(|| format!("slice bound {}", v.describe())),
        }
    };
    Ok(SliceSpec::new(
        part(&s[0])?,
        part(&s[1])?,
        part(&s[2])?.unwrap_or(1),
    ))
}

fn index_tensor(x: &Tensor, parts: &[RValue]) -> Result<Tensor, String> {
    let consuming = parts
        .iter()
        .filter(|p| !matches!(p, RValue::None | RValue::Ellipsis))
        .count();
    if consuming > x.ndim() {
        return Err(format!(
            "too many indices ({consuming}) for a tensor of rank {}",
            x.ndim()
        ));
    }
    let mut cur = x.clone();
    let mut d: isize = 0;
    for p in parts {
        match p {
            RValue::Ellipsis => d += (x.ndim() - consuming) as isize,
            RValue::None => {
                cur = k::unsqueeze(&cur, d).map_err(kerr)?;
                d += 1;
            }
            RValue::Slice(s) => {
                let spec = slice_spec(s)?;
                if spec != SliceSpec::full() {
                    cur = k::slice_dim(&cur, d, spec.start, spec.stop, spec.step).map_err(kerr)?;
                }
                d += 1;
            }
            v => match v.as_int() {
                Some(i) => cur = k::select(&cur, d, i as isize).map_err(kerr)?,
                None => {
                    return Err(format!(
                        "indexing with {} (advanced indexing) is not supported",
                        v.describe()
                    ))
                }
            },
        }
    }
    Ok(cur)
}

fn build() -> HashMap<&'static str, OpFn> {
    let mut m: HashMap<&'static str, OpFn> = HashMap::new();
    let mut reg = |names: &[&'static str], f: OpFn| {
        for n in names {
            m.insert(n, f);
        }
    };
    // Activations and unary maps.
    reg(
        &[
            "torch.nn.functional.relu",
            "torch.relu",
            "torch.relu_",
            "torch.nn.functional.relu_",
            "method:relu",
            "method:relu_",
        ],
        op_relu,
    );
    reg(&["torch.nn.functional.relu6", "method:relu6"], op_relu6);
    reg(&["torch.nn.functional.gelu", "method:gelu"], op_gelu);
    reg(&["torch.nn.functional.silu", "method:silu"], op_silu);
    reg(
        &[
            "torch.sigmoid",
            "torch.nn.functional.sigmoid",
            "method:sigmoid",
            "method:sigmoid_",
        ],
        op_sigmoid,
    );
    reg(
        &[
            "torch.tanh",
            "torch.nn.functional.tanh",
            "method:tanh",
            "method:tanh_",
        ],
        op_tanh,
    );
    reg(
        &["torch.nn.functional.hardswish", "method:hardswish"],
        op_hardswish,
    );
    reg(
        &["torch.nn.functional.hardsigmoid", "method:hardsigmoid"],
        op_hardsigmoid,
    );
    reg(&["torch.nn.functional.mish", "method:mish"], op_mish);
    reg(
        &["torch.nn.functional.leaky_relu", "method:leaky_relu"],
        op_leaky_relu,
    );
    reg(&["torch.nn.functional.elu", "method:elu"], op_elu);
    reg(&["torch.nn.functional.selu", "torch.selu"], op_selu);
    reg(
        &["torch.nn.functional.softplus", "method:softplus"],
        op_softplus,
    );
    reg(
        &["torch.nn.functional.hardtanh", "method:hardtanh"],
        op_hardtanh,
    );
    reg(&["torch.nn.functional.logsigmoid"], op_logsigmoid);
    reg(
        &[
            "torch.clamp",
            "torch.clip",
            "method:clamp",
            "method:clip",
            "method:clamp_",
        ],
        op_clamp,
    );
    reg(&["torch.exp", "method:exp"], op_exp);
    reg(&["torch.log", "method:log"], op_log);
    reg(&["torch.log1p", "method:log1p"], op_log1p);
    reg(&["torch.expm1", "method:expm1"], op_expm1);
    reg(&["torch.sqrt", "method:sqrt"], op_sqrt);
    reg(&["torch.rsqrt", "method:rsqrt"], op_rsqrt);
    reg(&["torch.neg", "operator.neg", "method:neg"], op_neg);
    reg(&["torch.abs", "method:abs", "builtins.abs"], op_abs);
    reg(&["torch.sin", "method:sin"], op_sin);
    reg(&["torch.cos", "method:cos"], op_cos);
    reg(&["torch.erf", "method:erf"], op_erf);
    reg(&["torch.floor", "method:floor"], op_floor);
    reg(&["torch.ceil", "method:ceil"], op_ceil);
    reg(&["torch.sign", "method:sign"], op_sign);
    reg(&["torch.reciprocal", "method:reciprocal"], op_reciprocal);
    reg(&["torch.square", "method:square"], op_square);
    reg(
        &[
            "operator.pos",
            "torch.nn.functional.dropout",
            "torch.nn.functional.dropout1d",
            "torch.nn.functional.dropout2d",
            "torch.nn.functional.dropout3d",
            "torch.nn.functional.alpha_dropout",
            "torch.dropout",
            "method:detach",
            "method:clone",
            "torch.clone",
            "method:cpu",
            "torch.nn.functional.identity",
        ],
        op_dropout,
    );
    let _ = op_identity;
    // Binary.
    reg(
        &[
            "operator.add",
            "operator.iadd",
            "torch.add",
            "method:add",
            "method:add_",
            "method:__add__",
        ],
        op_add,
    );
    reg(
        &[
            "operator.sub",
            "operator.isub",
            "torch.sub",
            "torch.subtract",
            "method:sub",
            "method:sub_",
        ],
        op_sub,
    );
    reg(&["torch.rsub"], op_rsub);
    reg(
        &[
            "operator.mul",
            "operator.imul",
            "torch.mul",
            "torch.multiply",
            "method:mul",
            "method:mul_",
        ],
        op_mul,
    );
    reg(
        &[
            "operator.truediv",
            "operator.itruediv",
            "torch.div",
            "torch.divide",
            "torch.true_divide",
            "method:div",
            "method:div_",
        ],
        op_div,
    );
    reg(
        &[
            "operator.floordiv",
            "operator.ifloordiv",
            "torch.floor_divide",
            "method:floor_divide",
        ],
        op_floordiv,
    );
    reg(
        &["operator.mod", "torch.remainder", "method:remainder"],
        op_mod,
    );
    reg(&["operator.pow", "torch.pow", "method:pow"], op_pow);
    reg(&["torch.maximum", "method:maximum"], op_maximum);
    reg(&["torch.minimum", "method:minimum"], op_minimum);
    reg(&["operator.eq", "torch.eq", "method:eq"], op_eq);
    reg(&["operator.ne", "torch.ne", "method:ne"], op_ne);
    reg(&["operator.lt", "torch.lt", "method:lt"], op_lt);
    reg(&["operator.le", "torch.le", "method:le"], op_le);
    reg(&["operator.gt", "torch.gt", "method:gt"], op_gt);
    reg(&["operator.ge", "torch.ge", "method:ge"], op_ge);
    reg(
        &["operator.and_", "torch.logical_and", "method:logical_and"],
        op_and,
    );
    reg(
        &["operator.or_", "torch.logical_or", "method:logical_or"],
        op_or,
    );
    reg(
        &[
            "operator.not_",
            "operator.invert",
            "torch.logical_not",
            "method:logical_not",
        ],
        op_not,
    );
    reg(&["torch.where", "method:where"], op_where);
    reg(&["method:masked_fill", "torch.masked_fill"], op_masked_fill);
    // Linear algebra.
    reg(
        &["torch.matmul", "operator.matmul", "method:matmul"],
        op_matmul,
    );
    reg(&["torch.bmm", "method:bmm"], op_bmm);
    reg(&["torch.mm", "method:mm"], op_mm);
    reg(&["torch.nn.functional.linear"], op_linear);
    // Convolution, normalisation, pooling, embedding.
    reg(&["torch.nn.functional.conv2d", "torch.conv2d"], op_conv2d);
    reg(&["torch.nn.functional.conv1d", "torch.conv1d"], op_conv1d);
    reg(
        &[
            "torch.nn.functional.conv_transpose2d",
            "torch.conv_transpose2d",
        ],
        op_conv_transpose2d,
    );
    reg(
        &[
            "torch.nn.functional.conv_transpose1d",
            "torch.conv_transpose1d",
        ],
        op_conv_transpose1d,
    );
    reg(&["torch.nn.functional.batch_norm"], op_batch_norm);
    reg(&["torch.nn.functional.layer_norm"], op_layer_norm);
    reg(&["torch.nn.functional.group_norm"], op_group_norm);
    reg(
        &["torch.nn.functional.max_pool2d", "torch.max_pool2d"],
        op_max_pool2d,
    );
    reg(&["torch.nn.functional.avg_pool2d"], op_avg_pool2d);
    reg(&["torch.nn.functional.max_pool1d"], op_max_pool1d);
    reg(&["torch.nn.functional.avg_pool1d"], op_avg_pool1d);
    reg(
        &["torch.nn.functional.adaptive_avg_pool2d"],
        op_adaptive_avg_pool2d,
    );
    reg(
        &["torch.nn.functional.adaptive_max_pool2d"],
        op_adaptive_max_pool2d,
    );
    reg(
        &["torch.nn.functional.adaptive_avg_pool1d"],
        op_adaptive_avg_pool1d,
    );
    reg(&["torch.nn.functional.embedding"], op_embedding);
    reg(
        &[
            "torch.nn.functional.softmax",
            "torch.softmax",
            "method:softmax",
        ],
        op_softmax,
    );
    reg(
        &[
            "torch.nn.functional.log_softmax",
            "torch.log_softmax",
            "method:log_softmax",
        ],
        op_log_softmax,
    );
    reg(
        &["torch.nn.functional.scaled_dot_product_attention"],
        op_sdpa,
    );
    // Reductions.
    reg(&["torch.sum", "method:sum"], op_sum);
    reg(&["torch.mean", "method:mean"], op_mean);
    reg(&["torch.amax", "method:amax"], op_amax);
    reg(&["torch.amin", "method:amin"], op_amin);
    reg(&["torch.prod", "method:prod"], op_prod);
    reg(&["torch.var", "method:var"], op_var);
    reg(&["torch.std", "method:std"], op_std);
    reg(&["torch.max", "method:max"], op_max);
    reg(&["torch.min", "method:min"], op_min);
    reg(&["torch.argmax", "method:argmax"], op_argmax);
    reg(&["torch.argmin", "method:argmin"], op_argmin);
    // Shapes.
    reg(&["method:view", "method:reshape", "torch.reshape"], op_view);
    reg(&["method:permute", "torch.permute"], op_permute);
    reg(
        &[
            "method:transpose",
            "torch.transpose",
            "torch.swapaxes",
            "method:swapaxes",
        ],
        op_transpose,
    );
    reg(&["method:t", "torch.t"], op_t);
    reg(&["method:flatten", "torch.flatten"], op_flatten);
    reg(&["method:unsqueeze", "torch.unsqueeze"], op_unsqueeze);
    reg(&["method:squeeze", "torch.squeeze"], op_squeeze);
    reg(&["method:contiguous"], op_contiguous);
    reg(&["method:expand"], op_expand);
    reg(&["method:expand_as"], op_expand_as);
    reg(&["method:view_as", "method:reshape_as"], op_view_as);
    reg(&["method:repeat"], op_repeat);
    reg(&["method:narrow", "torch.narrow"], op_narrow);
    reg(&["method:select", "torch.select"], op_select);
    reg(&["torch.cat", "torch.concat", "torch.concatenate"], op_cat);
    reg(&["torch.stack"], op_stack);
    reg(&["method:split", "torch.split"], op_split);
    reg(&["method:chunk", "torch.chunk"], op_chunk);
    reg(&["method:unbind", "torch.unbind"], op_unbind);
    reg(&["torch.nn.functional.pad"], op_pad);
    reg(&["method:size"], op_size);
    reg(&["method:dim"], op_dim);
    reg(&["method:numel", "torch.numel"], op_numel);
    reg(&["builtins.getattr"], op_getattr);
    reg(&["operator.getitem"], op_getitem);
    reg(&["method:to", "method:type_as"], op_to);
    reg(&["method:float"], op_float);
    reg(&["method:long"], op_long);
    reg(&["method:bool"], op_bool);
    // Creation.
    reg(&["torch.zeros"], op_zeros);
    reg(&["torch.ones"], op_ones);
    reg(&["torch.full"], op_full);
    reg(&["torch.zeros_like"], op_zeros_like);
    reg(&["torch.ones_like"], op_ones_like);
    reg(&["torch.arange"], op_arange);
    // Python scalars.
    reg(&["torch._assert", "torch._assert_async"], op_assert);
    reg(&["math.sqrt"], op_math_sqrt);
    reg(&["math.exp"], op_math_exp);
    reg(&["math.log"], op_math_log);
    m
}
