//! Broadcasting binary ops, `where`, unary activations and eval-mode dropout.
//!
//! Comparisons return f32 tensors holding 0.0 or 1.0, because the executor
//! has a single value type; `where_` treats any non-zero condition as true.
//!
//! Composite activations (gelu, silu, softplus, mish, ...) are evaluated in
//! f64 and rounded once, so that they agree with PyTorch's double-precision
//! results to f32 rounding instead of inheriting the cancellation that
//! `1 + erf(x)` or `1 + tanh(x)` suffer for large negative `x` in f32.

use ndarray::{IxDyn, Zip};
use rayon::prelude::*;

use super::{KernelError, Result, Tensor};

/// Binary elementwise ops, all with PyTorch broadcasting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    /// `torch.floor_divide` / Python `//`: rounds the quotient towards -inf.
    FloorDivide,
    /// `torch.remainder` / Python `%`: the result takes the divisor's sign.
    Remainder,
    Pow,
    /// `torch.maximum`: NaN in either operand gives NaN.
    Maximum,
    /// `torch.minimum`: NaN in either operand gives NaN.
    Minimum,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Non-zero is true; result is 0.0 or 1.0.
    LogicalAnd,
    /// Non-zero is true; result is 0.0 or 1.0.
    LogicalOr,
}

impl BinaryOp {
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::FloorDivide => "floor_divide",
            BinaryOp::Remainder => "remainder",
            BinaryOp::Pow => "pow",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::LogicalAnd => "logical_and",
            BinaryOp::LogicalOr => "logical_or",
        }
    }
}

fn bool_f32(b: bool) -> f32 {
    if b {
        1.0
    } else {
        0.0
    }
}

// torch.remainder's algorithm: the exact fmod, shifted into the divisor's
// sign. `a - b * floor(a / b)` is not the same when a / b rounds up: for
// 1 % 0.1 it gives 0 where torch gives 0.0999….
fn py_remainder(a: f32, b: f32) -> f32 {
    let m = a % b;
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        m + b
    } else {
        m
    }
}

// Python's float `//`, which torch.floor_divide follows: derived from the
// exact fmod so that e.g. 1 // 0.1 is 9, not the 10 that floor(1/0.1) gives.
fn py_floor_divide(a: f32, b: f32) -> f32 {
    if b == 0.0 {
        return a / b;
    }
    let m = a % b;
    let mut div = (a - m) / b;
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    if div == 0.0 {
        return 0.0f32.copysign(a / b);
    }
    let mut fl = div.floor();
    if div - fl > 0.5 {
        fl += 1.0;
    }
    fl
}

fn nan_max(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a >= b {
        a
    } else {
        b
    }
}

fn nan_min(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a <= b {
        a
    } else {
        b
    }
}

/// Shape of broadcasting `a` against `b` under PyTorch (NumPy) rules.
pub fn broadcast_shapes(op: &'static str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        let d = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(KernelError::shapes(
                op,
                a,
                b,
                format!(
                    "size {da} does not broadcast against size {db} at dimension {i} of the result"
                ),
            ));
        };
        out.push(d);
    }
    Ok(out)
}

fn zip_map(
    op: &'static str,
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(f32, f32) -> f32,
) -> Result<Tensor> {
    if a.shape() == b.shape() {
        return Ok(Zip::from(a).and(b).map_collect(|&x, &y| f(x, y)));
    }
    let shape = broadcast_shapes(op, a.shape(), b.shape())?;
    let dim = IxDyn(&shape);
    let mismatch = || KernelError::shapes(op, a.shape(), b.shape(), "broadcast failed");
    let av = a.broadcast(dim.clone()).ok_or_else(mismatch)?;
    let bv = b.broadcast(dim).ok_or_else(mismatch)?;
    Ok(Zip::from(&av).and(&bv).map_collect(|&x, &y| f(x, y)))
}

/// `a <op> b` with broadcasting.
pub fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let name = op.name();
    // One monomorphised loop per op: a per-element match would block
    // vectorisation of the common add/mul cases.
    match op {
        BinaryOp::Add => zip_map(name, a, b, |x, y| x + y),
        BinaryOp::Sub => zip_map(name, a, b, |x, y| x - y),
        BinaryOp::Mul => zip_map(name, a, b, |x, y| x * y),
        BinaryOp::Div => zip_map(name, a, b, |x, y| x / y),
        BinaryOp::FloorDivide => zip_map(name, a, b, py_floor_divide),
        BinaryOp::Remainder => zip_map(name, a, b, py_remainder),
        BinaryOp::Pow => zip_map(name, a, b, f32::powf),
        BinaryOp::Maximum => zip_map(name, a, b, nan_max),
        BinaryOp::Minimum => zip_map(name, a, b, nan_min),
        BinaryOp::Eq => zip_map(name, a, b, |x, y| bool_f32(x == y)),
        BinaryOp::Ne => zip_map(name, a, b, |x, y| bool_f32(x != y)),
        BinaryOp::Lt => zip_map(name, a, b, |x, y| bool_f32(x < y)),
        BinaryOp::Le => zip_map(name, a, b, |x, y| bool_f32(x <= y)),
        BinaryOp::Gt => zip_map(name, a, b, |x, y| bool_f32(x > y)),
        BinaryOp::Ge => zip_map(name, a, b, |x, y| bool_f32(x >= y)),
        BinaryOp::LogicalAnd => zip_map(name, a, b, |x, y| bool_f32(x != 0.0 && y != 0.0)),
        BinaryOp::LogicalOr => zip_map(name, a, b, |x, y| bool_f32(x != 0.0 || y != 0.0)),
    }
}

/// `x <op> s` for a Python scalar on the right. For a scalar on the left
/// (`2 - x`), pass a 0-d tensor to [`binary`].
pub fn binary_scalar(op: BinaryOp, x: &Tensor, s: f32) -> Result<Tensor> {
    binary(op, x, &Tensor::from_elem(IxDyn(&[]), s))
}

pub fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Add, a, b)
}
pub fn sub(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Sub, a, b)
}
pub fn mul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Mul, a, b)
}
pub fn div(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Div, a, b)
}
pub fn pow(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Pow, a, b)
}
pub fn maximum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Maximum, a, b)
}
pub fn minimum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Minimum, a, b)
}
pub fn eq(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Eq, a, b)
}
pub fn ne(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Ne, a, b)
}
pub fn lt(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Lt, a, b)
}
pub fn le(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Le, a, b)
}
pub fn gt(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Gt, a, b)
}
pub fn ge(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Ge, a, b)
}

/// `torch.where(cond, a, b)`: picks `a` where `cond` is non-zero, with all
/// three operands broadcast together.
pub fn where_(cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    const OP: &str = "where";
    let ab = broadcast_shapes(OP, a.shape(), b.shape())?;
    let shape = broadcast_shapes(OP, cond.shape(), &ab)?;
    let dim = IxDyn(&shape);
    let cv = cond.broadcast(dim.clone()).ok_or_else(|| {
        KernelError::shapes(OP, cond.shape(), &shape, "condition does not broadcast")
    })?;
    let av = a.broadcast(dim.clone()).ok_or_else(|| {
        KernelError::shapes(OP, a.shape(), &shape, "first value does not broadcast")
    })?;
    let bv = b.broadcast(dim).ok_or_else(|| {
        KernelError::shapes(OP, b.shape(), &shape, "second value does not broadcast")
    })?;
    Ok(Zip::from(&cv)
        .and(&av)
        .and(&bv)
        .map_collect(|&c, &x, &y| if c != 0.0 { x } else { y }))
}

/// `approximate=` argument of `torch.nn.functional.gelu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GeluApproximate {
    /// `approximate="none"`: `x * Φ(x)` with the exact normal CDF.
    #[default]
    None,
    /// `approximate="tanh"`.
    Tanh,
}

/// Unary elementwise ops. Parameterised variants carry PyTorch's arguments;
/// `Default`-like PyTorch values are given by the constructors below.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unary {
    Identity,
    Relu,
    Relu6,
    LeakyRelu {
        negative_slope: f32,
    },
    Gelu(GeluApproximate),
    Silu,
    Sigmoid,
    LogSigmoid,
    Tanh,
    Hardswish,
    Hardsigmoid,
    Hardtanh {
        min: f32,
        max: f32,
    },
    Elu {
        alpha: f32,
    },
    Selu,
    Celu {
        alpha: f32,
    },
    Softplus {
        beta: f32,
        threshold: f32,
    },
    Mish,
    Exp,
    Expm1,
    Log,
    Log1p,
    Log2,
    Sqrt,
    Rsqrt,
    Neg,
    Abs,
    Sign,
    Reciprocal,
    Square,
    Sin,
    Cos,
    Floor,
    Ceil,
    /// Rounds half to even, like `torch.round`.
    Round,
    Trunc,
    Erf,
    /// `torch.clamp`; with `min > max` every element becomes `max`, as in torch.
    Clamp {
        min: Option<f32>,
        max: Option<f32>,
    },
}

impl Unary {
    /// `F.leaky_relu` with PyTorch's default slope 0.01.
    pub const LEAKY_RELU: Unary = Unary::LeakyRelu {
        negative_slope: 0.01,
    };
    /// `F.elu` with PyTorch's default alpha 1.0.
    pub const ELU: Unary = Unary::Elu { alpha: 1.0 };
    /// `F.softplus` with PyTorch's defaults beta=1, threshold=20.
    pub const SOFTPLUS: Unary = Unary::Softplus {
        beta: 1.0,
        threshold: 20.0,
    };

    pub fn name(self) -> &'static str {
        match self {
            Unary::Identity => "identity",
            Unary::Relu => "relu",
            Unary::Relu6 => "relu6",
            Unary::LeakyRelu { .. } => "leaky_relu",
            Unary::Gelu(_) => "gelu",
            Unary::Silu => "silu",
            Unary::Sigmoid => "sigmoid",
            Unary::LogSigmoid => "logsigmoid",
            Unary::Tanh => "tanh",
            Unary::Hardswish => "hardswish",
            Unary::Hardsigmoid => "hardsigmoid",
            Unary::Hardtanh { .. } => "hardtanh",
            Unary::Elu { .. } => "elu",
            Unary::Selu => "selu",
            Unary::Celu { .. } => "celu",
            Unary::Softplus { .. } => "softplus",
            Unary::Mish => "mish",
            Unary::Exp => "exp",
            Unary::Expm1 => "expm1",
            Unary::Log => "log",
            Unary::Log1p => "log1p",
            Unary::Log2 => "log2",
            Unary::Sqrt => "sqrt",
            Unary::Rsqrt => "rsqrt",
            Unary::Neg => "neg",
            Unary::Abs => "abs",
            Unary::Sign => "sign",
            Unary::Reciprocal => "reciprocal",
            Unary::Square => "square",
            Unary::Sin => "sin",
            Unary::Cos => "cos",
            Unary::Floor => "floor",
            Unary::Ceil => "ceil",
            Unary::Round => "round",
            Unary::Trunc => "trunc",
            Unary::Erf => "erf",
            Unary::Clamp { .. } => "clamp",
        }
    }

    /// Applies the op to one value.
    pub fn apply(self, x: f32) -> f32 {
        match self {
            Unary::Identity => x,
            Unary::Relu => relu_scalar(x),
            Unary::Relu6 => clamp_scalar(x, Some(0.0), Some(6.0)),
            Unary::LeakyRelu { negative_slope } => {
                if x > 0.0 {
                    x
                } else {
                    x * negative_slope
                }
            }
            Unary::Gelu(GeluApproximate::None) => gelu_erf(x),
            Unary::Gelu(GeluApproximate::Tanh) => gelu_tanh(x),
            Unary::Silu => {
                let v = x as f64;
                (v * sigmoid64(v)) as f32
            }
            Unary::Sigmoid => sigmoid64(x as f64) as f32,
            Unary::LogSigmoid => (-softplus64(-(x as f64))) as f32,
            Unary::Tanh => x.tanh(),
            Unary::Hardswish => {
                let v = x as f64;
                (v * (v + 3.0).clamp(0.0, 6.0) / 6.0) as f32
            }
            Unary::Hardsigmoid => ((x as f64 + 3.0).clamp(0.0, 6.0) / 6.0) as f32,
            Unary::Hardtanh { min, max } => clamp_scalar(x, Some(min), Some(max)),
            Unary::Elu { alpha } => {
                if x > 0.0 {
                    x
                } else {
                    (alpha as f64 * (x as f64).exp_m1()) as f32
                }
            }
            Unary::Selu => {
                // Constants from the SELU paper, as PyTorch hard-codes them.
                const ALPHA: f64 = 1.673_263_242_354_377_3;
                const SCALE: f64 = 1.050_700_987_355_480_5;
                let v = x as f64;
                (SCALE * if v > 0.0 { v } else { ALPHA * v.exp_m1() }) as f32
            }
            Unary::Celu { alpha } => {
                let (v, a) = (x as f64, alpha as f64);
                (v.max(0.0) + (a * (v / a).exp_m1()).min(0.0)) as f32
            }
            Unary::Softplus { beta, threshold } => {
                let (v, b) = (x as f64, beta as f64);
                // PyTorch switches to the identity above the threshold.
                if v * b > threshold as f64 {
                    x
                } else {
                    (softplus64(v * b) / b) as f32
                }
            }
            Unary::Mish => {
                let v = x as f64;
                (v * softplus64(v).tanh()) as f32
            }
            Unary::Exp => x.exp(),
            Unary::Expm1 => x.exp_m1(),
            Unary::Log => x.ln(),
            Unary::Log1p => x.ln_1p(),
            Unary::Log2 => x.log2(),
            Unary::Sqrt => x.sqrt(),
            Unary::Rsqrt => (1.0 / (x as f64).sqrt()) as f32,
            Unary::Neg => -x,
            Unary::Abs => x.abs(),
            Unary::Sign => {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    x // keeps 0.0, -0.0 and NaN, as torch.sign does
                }
            }
            Unary::Reciprocal => 1.0 / x,
            Unary::Square => x * x,
            Unary::Sin => x.sin(),
            Unary::Cos => x.cos(),
            Unary::Floor => x.floor(),
            Unary::Ceil => x.ceil(),
            Unary::Round => x.round_ties_even(),
            Unary::Trunc => x.trunc(),
            Unary::Erf => erf_f64(x as f64) as f32,
            Unary::Clamp { min, max } => clamp_scalar(x, min, max),
        }
    }
}

fn relu_scalar(x: f32) -> f32 {
    // `x.max(0.0)` would turn NaN into 0; torch.relu propagates it.
    if x < 0.0 {
        0.0
    } else {
        x
    }
}

fn clamp_scalar(x: f32, min: Option<f32>, max: Option<f32>) -> f32 {
    let mut v = x;
    if let Some(lo) = min {
        if v < lo {
            v = lo;
        }
    }
    if let Some(hi) = max {
        if v > hi {
            v = hi;
        }
    }
    v
}

fn sigmoid64(v: f64) -> f64 {
    // Split by sign so that exp never overflows before the division.
    if v >= 0.0 {
        1.0 / (1.0 + (-v).exp())
    } else {
        let e = v.exp();
        e / (1.0 + e)
    }
}

/// `log(1 + exp(v))` without overflow for large `v`.
fn softplus64(v: f64) -> f64 {
    if v > 0.0 {
        v + (-v).exp().ln_1p()
    } else {
        v.exp().ln_1p()
    }
}

/// GELU (erf form) over a slice. Most activations have |x| ≤ √2, where
/// [`gelu_erf_central`] needs no more than f32 arithmetic; blocks of 8 values are evaluated
/// lane by lane so that the compiler turns each block into a few vector instructions.
/// Blocks with lanes outside that range are redone for those lanes by [`gelu_erf_tail`]
/// (vectorised too), non-finite lanes by the scalar path.
fn gelu_erf_slice(s: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has just been checked to support AVX2 and FMA.
        unsafe { gelu_erf_slice_avx2(s) };
        return;
    }
    gelu_erf_slice_body(s);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gelu_erf_slice_avx2(s: &mut [f32]) {
    gelu_erf_slice_body(s);
}

#[inline(always)]
fn gelu_erf_slice_body(s: &mut [f32]) {
    const LANES: usize = 8;
    let mut blocks = s.chunks_exact_mut(LANES);
    for block in &mut blocks {
        let input: [f32; LANES] = std::array::from_fn(|i| block[i]);
        // NaN fails the comparison too, and goes to the scalar path below.
        let central = |x: f32| x.abs() <= std::f32::consts::SQRT_2;
        let mut all_central = true;
        for &x in &input {
            all_central &= central(x);
        }
        for (y, &x) in block.iter_mut().zip(&input) {
            *y = gelu_erf_central(x);
        }
        if all_central {
            continue;
        }
        let tail: [f32; LANES] = std::array::from_fn(|i| gelu_erf_tail(input[i]));
        for i in 0..LANES {
            if !central(input[i]) {
                block[i] = if input[i].is_finite() {
                    tail[i]
                } else {
                    gelu_erf(input[i])
                };
            }
        }
    }
    blocks
        .into_remainder()
        .iter_mut()
        .for_each(|v| *v = gelu_erf(*v));
}

/// GELU for |x| ≤ √2 in f32: `x · (1/2 + x · Q(x²))` with `Q(u) = erf(x/√2) / 2x` a
/// polynomial in u on [0, 2] ([`PHI_ODD`]). The fit is good to 1.2e-9, so the error is
/// f32 rounding: within 1e-6 of the f64 path even at x = -√2, where Φ(x) = 0.079 is the
/// difference of 1/2 and 0.42 and so amplifies the error of the product fivefold.
#[inline(always)]
fn gelu_erf_central(x: f32) -> f32 {
    let u = x * x;
    let mut q = PHI_ODD[PHI_ODD.len() - 1];
    for &c in PHI_ODD[..PHI_ODD.len() - 1].iter().rev() {
        q = q * u + c;
    }
    x * (x * q + 0.5)
}

// (Φ(x) - 1/2) / x = erf(x/√2) / 2x as a polynomial in u = x² on [0, 2], from
// scripts/kernels/fit_erf.py (minimax in relative error, degree 6, max 1.2e-9).
const PHI_ODD: [f32; 7] = [
    0.398_942_3,
    -0.066_490_36,
    0.009_973_374,
    -0.001_186_782,
    0.000_114_646_91,
    -8.850_087e-6,
    4.338_670_3e-7,
];

/// GELU of a finite value outside the central range, branch-free so that a block of them
/// vectorises: `Φ(x) = erfc(-x/√2) / 2` with erfc from the Chebyshev fit of Numerical
/// Recipes (`erfcc`, relative error below 1.2e-7 for z ≥ 0, mirrored as `2 - erfc(|z|)`
/// for z < 0), in f64. Relative to its value, like the scalar path, so the left tail keeps
/// its digits. The scalar erfc per tail value cost more than all the rest of a transformer
/// MLP's activation.
#[inline(always)]
fn gelu_erf_tail(x: f32) -> f32 {
    const ERFCC: [f64; 10] = [
        -1.265_512_23,
        1.000_023_68,
        0.374_091_96,
        0.096_784_18,
        -0.186_288_06,
        0.278_868_07,
        -1.135_203_98,
        1.488_515_87,
        -0.822_152_23,
        0.170_872_77,
    ];
    let v = x as f64;
    let w = -v * std::f64::consts::FRAC_1_SQRT_2;
    let a = w.abs();
    let t = 1.0 / (1.0 + 0.5 * a);
    let mut p = ERFCC[9];
    for &c in ERFCC[..9].iter().rev() {
        p = p * t + c;
    }
    let e = t * exp_f64(-a * a + p);
    let erfc = if w >= 0.0 { e } else { 2.0 - e };
    (0.5 * v * erfc) as f32
}

/// `exp(x)` in f64 to about 1e-14 relative, written so that a loop of it vectorises:
/// `2^n · e^r` with `|r| ≤ ln 2 / 2` and a degree-11 Taylor polynomial. Arguments below
/// -708 give about 1e-308 (callers only need the result to underflow in f32).
#[inline(always)]
fn exp_f64(x: f64) -> f64 {
    let x = x.clamp(-708.0, 709.0);
    let n = (x * std::f64::consts::LOG2_E + 0.5).floor();
    let r = x - n * std::f64::consts::LN_2;
    let mut p = 1.0 / 39_916_800.0;
    for k in (1..=10).rev() {
        p = p * r + 1.0 / FACTORIALS[k];
    }
    p = p * r + 1.0;
    p * f64::from_bits(((n as i64 + 1023) as u64) << 52)
}

const FACTORIALS: [f64; 11] = [
    1.0,
    1.0,
    2.0,
    6.0,
    24.0,
    120.0,
    720.0,
    5040.0,
    40320.0,
    362_880.0,
    3_628_800.0,
];

fn gelu_erf(x: f32) -> f32 {
    let v = x as f64;
    // Φ(v) via erfc keeps full relative accuracy in the left tail, where
    // 1 + erf(v/√2) would cancel.
    (0.5 * v * erfc_f64(-v * std::f64::consts::FRAC_1_SQRT_2)) as f32
}

fn gelu_tanh(x: f32) -> f32 {
    let v = x as f64;
    let k = (2.0 / std::f64::consts::PI).sqrt();
    let u = k * (v + 0.044715 * v * v * v);
    // 0.5 * (1 + tanh(u)) == sigmoid(2u), which does not cancel for u << 0.
    (v * sigmoid64(2.0 * u)) as f32
}

// Chebyshev coefficients from scripts/kernels/fit_erf.py (least-squares fits
// to 40-digit mpmath values). A fixed short series per range keeps erf at a
// few dozen flops, which matters because exact gelu calls it per element.
// Fitted on [0.0, 1.0], degree 10, max relative error 1.1e-15.
const ERF_SMALL: [f64; 11] = [
    0.9754769393826543,
    -0.14226120510371368,
    0.010035582187599843,
    -0.0005768764699767451,
    2.741993125224892e-05,
    -1.1043175506420189e-06,
    3.8488755479356525e-08,
    -1.180858235286458e-09,
    3.2334203140938053e-11,
    -7.99093441673639e-13,
    1.8056247617197475e-14,
];
// Fitted on [0.5, 1.0], degree 16, max relative error 2.6e-15.
const ERFC_MID: [f64; 17] = [
    0.4687089566349609,
    -0.041775068132475744,
    0.0005040623963319162,
    0.00016888702949547583,
    -2.5430051898300238e-05,
    2.294932915989681e-06,
    -1.2625248721571492e-07,
    -1.788768483865375e-09,
    1.63029007937495e-09,
    -2.711524642001084e-10,
    3.109332432802042e-11,
    -2.62668689097151e-12,
    1.227778321662606e-13,
    9.357441089426679e-15,
    -3.4562604570956743e-15,
    6.357154733713577e-16,
    -2.434979570497352e-17,
];
// Fitted on [0.0, 0.5], degree 20, max relative error 1.4e-15.
const ERFC_TAIL: [f64; 21] = [
    0.5427416308736761,
    -0.027456541627010316,
    -0.005256099448393941,
    0.0007739396325011633,
    2.6092086814647687e-06,
    -1.6601192411744312e-05,
    2.417979469542215e-06,
    7.310761649169372e-08,
    -9.093948868692727e-08,
    1.5307873074316328e-08,
    2.6706451006102736e-10,
    -6.890191465578946e-10,
    1.4963134199797942e-10,
    -4.7255153825625985e-12,
    -6.096236404007937e-12,
    1.858825969362389e-12,
    -1.8495663782549757e-13,
    -5.0757589667879374e-14,
    2.5502087684881157e-14,
    -4.591135678117578e-15,
    -1.2388404608078573e-16,
];

/// Sum of `c[k]·T_k(x)` for `x` in [-1, 1], by Clenshaw's recurrence (stable,
/// unlike expanding the Chebyshev series into monomials).
fn clenshaw(c: &[f64], x: f64) -> f64 {
    let (mut b1, mut b2) = (0.0f64, 0.0f64);
    for &ck in c[1..].iter().rev() {
        let b0 = 2.0 * x * b1 - b2 + ck;
        b2 = b1;
        b1 = b0;
    }
    x * b1 - b2 + c[0]
}

/// erf for |z| <= 1.
fn erf_small(z: f64) -> f64 {
    z * clenshaw(&ERF_SMALL, 2.0 * z * z - 1.0)
}

/// erfc for z >= 1, as `exp(-z²)/z` times a slowly varying factor of 1/z.
fn erfc_large(z: f64) -> f64 {
    let s = 1.0 / z;
    let h = if s >= 0.5 {
        clenshaw(&ERFC_MID, 4.0 * s - 3.0)
    } else {
        clenshaw(&ERFC_TAIL, 4.0 * s - 1.0)
    };
    (-z * z).exp() * s * h
}

/// Error function in double precision (relative error about 1e-14).
pub fn erf_f64(z: f64) -> f64 {
    if z.is_nan() {
        z
    } else if z.abs() <= 1.0 {
        erf_small(z)
    } else {
        (1.0 - erfc_large(z.abs())).copysign(z)
    }
}

/// Complementary error function in double precision, accurate relative to
/// its value in the right tail (where `1 - erf` would cancel).
pub fn erfc_f64(z: f64) -> f64 {
    if z.is_nan() {
        z
    } else if z.abs() <= 1.0 {
        1.0 - erf_small(z)
    } else if z > 0.0 {
        erfc_large(z)
    } else {
        2.0 - erfc_large(-z)
    }
}

/// Applies a unary op to every element.
pub fn unary(op: Unary, x: &Tensor) -> Tensor {
    let mut out = x.clone();
    unary_inplace(op, &mut out);
    out
}

/// Applies a unary op in place, used by fused kernels to avoid a copy.
pub fn unary_inplace(op: Unary, x: &mut Tensor) {
    match op {
        Unary::Identity => {}
        // Monomorphised loops for the activations that sit after every
        // matmul; the generic path re-dispatches per element.
        Unary::Relu => map_inplace(x, relu_scalar),
        Unary::Gelu(GeluApproximate::None) => map_slices_inplace(x, gelu_erf_slice, gelu_erf),
        Unary::Gelu(GeluApproximate::Tanh) => map_inplace(x, gelu_tanh),
        Unary::Silu => map_inplace(x, |v| Unary::Silu.apply(v)),
        Unary::Neg => map_inplace(x, |v| -v),
        Unary::Relu6 => map_inplace(x, |v| clamp_scalar(v, Some(0.0), Some(6.0))),
        Unary::Hardswish => map_inplace(x, |v| Unary::Hardswish.apply(v)),
        Unary::Hardsigmoid => map_inplace(x, |v| Unary::Hardsigmoid.apply(v)),
        Unary::Sigmoid => map_inplace(x, |v| Unary::Sigmoid.apply(v)),
        Unary::Tanh => map_inplace(x, |v| Unary::Tanh.apply(v)),
        Unary::Clamp { min, max } => map_inplace(x, move |v| clamp_scalar(v, min, max)),
        other => map_inplace(x, |v| other.apply(v)),
    }
}

/// Applies a unary op to a slice on the calling thread: the epilogue of
/// kernels that already split their output across threads and want the
/// activation while each block is still in cache.
pub(crate) fn unary_slice(op: Unary, s: &mut [f32]) {
    fn map(s: &mut [f32], f: impl Fn(f32) -> f32) {
        s.iter_mut().for_each(|v| *v = f(*v));
    }
    match op {
        Unary::Identity => {}
        Unary::Relu => map(s, relu_scalar),
        Unary::Relu6 => map(s, |v| clamp_scalar(v, Some(0.0), Some(6.0))),
        Unary::Gelu(GeluApproximate::None) => gelu_erf_slice(s),
        Unary::Gelu(GeluApproximate::Tanh) => map(s, gelu_tanh),
        Unary::Clamp { min, max } => map(s, move |v| clamp_scalar(v, min, max)),
        other => map(s, |v| other.apply(v)),
    }
}

/// Below this many elements a map is not worth handing to rayon.
const PARALLEL_MIN_ELEMENTS: usize = 1 << 15;

/// `mapv_inplace`, split across rayon's threads for large tensors: the
/// transcendental activations cost tens of nanoseconds per element, enough
/// to rival the matmul they follow when run on one core.
fn map_inplace(x: &mut Tensor, f: impl Fn(f32) -> f32 + Sync + Send) {
    if x.len() >= PARALLEL_MIN_ELEMENTS {
        if let Some(data) = x.as_slice_memory_order_mut() {
            data.par_chunks_mut(PARALLEL_MIN_ELEMENTS / 4)
                .for_each(|c| c.iter_mut().for_each(|v| *v = f(*v)));
            return;
        }
    }
    x.mapv_inplace(f);
}

/// [`map_inplace`] for ops with a slice kernel: `f` runs on contiguous chunks, `scalar`
/// on tensors that are not contiguous.
fn map_slices_inplace(
    x: &mut Tensor,
    f: impl Fn(&mut [f32]) + Sync + Send,
    scalar: impl Fn(f32) -> f32,
) {
    match x.as_slice_memory_order_mut() {
        Some(data) if data.len() >= PARALLEL_MIN_ELEMENTS => {
            data.par_chunks_mut(PARALLEL_MIN_ELEMENTS / 4).for_each(f)
        }
        Some(data) => f(data),
        None => x.mapv_inplace(scalar),
    }
}

macro_rules! unary_fns {
    ($($(#[$m:meta])* $name:ident => $op:expr;)*) => {
        $( $(#[$m])* pub fn $name(x: &Tensor) -> Tensor { unary($op, x) } )*
    };
}

unary_fns! {
    relu => Unary::Relu;
    relu6 => Unary::Relu6;
    silu => Unary::Silu;
    sigmoid => Unary::Sigmoid;
    tanh => Unary::Tanh;
    hardswish => Unary::Hardswish;
    hardsigmoid => Unary::Hardsigmoid;
    mish => Unary::Mish;
    exp => Unary::Exp;
    log => Unary::Log;
    sqrt => Unary::Sqrt;
    rsqrt => Unary::Rsqrt;
    neg => Unary::Neg;
    abs => Unary::Abs;
    /// `torch.erf`, computed in f64 and rounded.
    erf => Unary::Erf;
}

pub fn leaky_relu(x: &Tensor, negative_slope: f32) -> Tensor {
    unary(Unary::LeakyRelu { negative_slope }, x)
}

pub fn gelu(x: &Tensor, approximate: GeluApproximate) -> Tensor {
    unary(Unary::Gelu(approximate), x)
}

pub fn elu(x: &Tensor, alpha: f32) -> Tensor {
    unary(Unary::Elu { alpha }, x)
}

pub fn softplus(x: &Tensor, beta: f32, threshold: f32) -> Tensor {
    unary(Unary::Softplus { beta, threshold }, x)
}

/// `torch.clamp`. Like torch, it refuses to run with neither bound.
pub fn clamp(x: &Tensor, min: Option<f32>, max: Option<f32>) -> Result<Tensor> {
    if min.is_none() && max.is_none() {
        return Err(KernelError::invalid(
            "clamp",
            x.shape(),
            "at least one of min and max must be given",
        ));
    }
    Ok(unary(Unary::Clamp { min, max }, x))
}

/// `F.dropout(x, p, training)`.
///
/// The executor only runs inference, where dropout is the identity (PyTorch
/// scales during training instead of at inference), so this returns a copy
/// of `x`. Training mode is refused rather than silently made
/// deterministic.
pub fn dropout(x: &Tensor, p: f32, training: bool) -> Result<Tensor> {
    if !(0.0..=1.0).contains(&p) {
        return Err(KernelError::invalid(
            "dropout",
            x.shape(),
            format!("probability has to be between 0 and 1, but got {p}"),
        ));
    }
    if training {
        return Err(KernelError::Unsupported {
            op: "dropout",
            reason: "training-mode dropout; the executor only evaluates in eval mode".into(),
        });
    }
    Ok(x.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testutil::{assert_close_pointwise, check_pointwise, t, Fixture};
    use ndarray::ArrayD;

    #[test]
    fn broadcast_add_hand_checked() {
        let a = t(&[2, 1], &[1.0, 2.0]);
        let b = t(&[3], &[10.0, 20.0, 30.0]);
        let c = add(&a, &b).unwrap();
        assert_eq!(c.shape(), &[2, 3]);
        assert_eq!(
            c.iter().copied().collect::<Vec<_>>(),
            vec![11.0, 21.0, 31.0, 12.0, 22.0, 32.0]
        );
    }

    #[test]
    fn broadcast_mismatch_names_op_and_shapes() {
        let a = t(&[2, 3], &[0.0; 6]);
        let b = t(&[4], &[0.0; 4]);
        let err = mul(&a, &b).unwrap_err();
        match &err {
            KernelError::ShapeMismatch { op, lhs, rhs, .. } => {
                assert_eq!(*op, "mul");
                assert_eq!(lhs, &vec![2, 3]);
                assert_eq!(rhs, &vec![4]);
            }
            other => panic!("unexpected error {other:?}"),
        }
        assert!(err.to_string().contains("[2, 3]") && err.to_string().contains("[4]"));
    }

    #[test]
    fn zero_sized_dims_broadcast_like_torch() {
        let a = ArrayD::<f32>::zeros(IxDyn(&[0, 3]));
        let b = t(&[1, 3], &[1.0, 2.0, 3.0]);
        assert_eq!(add(&a, &b).unwrap().shape(), &[0, 3]);
        let c = t(&[2, 3], &[0.0; 6]);
        assert!(add(&a, &c).is_err());
    }

    #[test]
    fn comparisons_return_zero_one() {
        let a = t(&[3], &[1.0, 2.0, 3.0]);
        let b = t(&[], &[2.0]);
        assert_eq!(
            lt(&a, &b).unwrap().into_raw_vec_and_offset().0,
            vec![1.0, 0.0, 0.0]
        );
        assert_eq!(
            eq(&a, &b).unwrap().into_raw_vec_and_offset().0,
            vec![0.0, 1.0, 0.0]
        );
        assert_eq!(
            ge(&a, &b).unwrap().into_raw_vec_and_offset().0,
            vec![0.0, 1.0, 1.0]
        );
    }

    #[test]
    fn maximum_propagates_nan_and_relu_keeps_it() {
        let a = t(&[2], &[f32::NAN, 1.0]);
        let b = t(&[2], &[0.0, f32::NAN]);
        let m = maximum(&a, &b).unwrap();
        assert!(m.iter().all(|v| v.is_nan()));
        assert!(relu(&a)[[0]].is_nan());
        assert!(clamp(&a, Some(0.0), Some(1.0)).unwrap()[[0]].is_nan());
    }

    #[test]
    fn clamp_with_min_above_max_gives_max() {
        let x = t(&[3], &[-5.0, 0.5, 5.0]);
        let y = clamp(&x, Some(2.0), Some(1.0)).unwrap();
        assert_eq!(y.into_raw_vec_and_offset().0, vec![1.0, 1.0, 1.0]);
        assert!(clamp(&x, None, None).is_err());
    }

    #[test]
    fn where_broadcasts_three_ways() {
        let c = t(&[2, 1], &[1.0, 0.0]);
        let a = t(&[3], &[1.0, 2.0, 3.0]);
        let b = t(&[], &[-1.0]);
        let y = where_(&c, &a, &b).unwrap();
        assert_eq!(y.shape(), &[2, 3]);
        assert_eq!(
            y.into_raw_vec_and_offset().0,
            vec![1.0, 2.0, 3.0, -1.0, -1.0, -1.0]
        );
        assert!(where_(&t(&[4], &[0.0; 4]), &a, &b).is_err());
    }

    #[test]
    fn python_division_semantics() {
        let a = t(&[4], &[7.0, -7.0, 7.0, -7.0]);
        let b = t(&[4], &[2.0, 2.0, -2.0, -2.0]);
        let fd = binary(BinaryOp::FloorDivide, &a, &b).unwrap();
        assert_eq!(fd.into_raw_vec_and_offset().0, vec![3.0, -4.0, -4.0, 3.0]);
        let r = binary(BinaryOp::Remainder, &a, &b).unwrap();
        assert_eq!(r.into_raw_vec_and_offset().0, vec![1.0, 1.0, -1.0, -1.0]);
        // 1 / 0.1 rounds to 10, but 0.1f32 fits only 9 times into 1.
        let (one, tenth) = (t(&[1], &[1.0]), t(&[1], &[0.1]));
        assert_eq!(
            binary(BinaryOp::FloorDivide, &one, &tenth).unwrap()[[0]],
            9.0
        );
        let r = binary(BinaryOp::Remainder, &one, &tenth).unwrap()[[0]];
        assert!((r - 0.1).abs() < 1e-6, "{r}");
    }

    #[test]
    fn dropout_is_identity_in_eval_and_refuses_training() {
        let x = t(&[3], &[1.0, 2.0, 3.0]);
        assert_eq!(dropout(&x, 0.5, false).unwrap(), x);
        assert!(matches!(
            dropout(&x, 0.5, true),
            Err(KernelError::Unsupported { .. })
        ));
        assert!(dropout(&x, 1.5, false).is_err());
    }

    // The previous series / continued-fraction implementation, kept as an
    // independent oracle for the fitted one: slow, but each branch converges
    // to double precision by construction.
    fn erf_series(z: f64) -> f64 {
        let z2 = z * z;
        let (mut term, mut sum, mut n) = (z, z, 0.0f64);
        loop {
            n += 1.0;
            term *= -z2 / n;
            let add = term / (2.0 * n + 1.0);
            sum += add;
            if add.abs() <= 1e-17 * sum.abs() || n > 80.0 {
                break;
            }
        }
        sum * std::f64::consts::FRAC_2_SQRT_PI
    }

    fn erfc_cf(z: f64) -> f64 {
        const DEPTH: usize = 40;
        let x2 = 2.0 * z * z;
        let mut t = x2 + (4 * DEPTH + 1) as f64;
        for k in (1..=DEPTH).rev() {
            let kf = k as f64;
            t = x2 + (4.0 * (kf - 1.0) + 1.0) - (2.0 * kf - 1.0) * (2.0 * kf) / t;
        }
        (-z * z).exp() / std::f64::consts::PI.sqrt() * 2.0 * z / t
    }

    #[test]
    fn fitted_erf_matches_series_oracle() {
        let mut worst = (0.0f64, 0.0f64);
        for i in -6000..=6000 {
            let z = i as f64 / 1000.0;
            let (e, c) = (erf_f64(z), erfc_f64(z));
            let (oe, oc) = if z.abs() < 2.0 {
                let v = erf_series(z);
                (v, 1.0 - v)
            } else if z > 0.0 {
                (1.0 - erfc_cf(z), erfc_cf(z))
            } else {
                (erfc_cf(-z) - 1.0, 2.0 - erfc_cf(-z))
            };
            if z != 0.0 {
                worst.0 = worst.0.max(((e - oe) / oe).abs());
            }
            worst.1 = worst.1.max(((c - oc) / oc).abs());
        }
        // erfc's oracle is 1 - erf_series below z = 2, which itself loses
        // about two digits as erfc falls to 5e-3; hence the looser bound.
        assert!(worst.0 < 1e-13 && worst.1 < 1e-12, "{worst:?}");
        assert_eq!(erfc_f64(40.0), 0.0);
        assert_eq!(erf_f64(f64::INFINITY), 1.0);
        assert_eq!(erfc_f64(f64::NEG_INFINITY), 2.0);
        assert!(erf_f64(f64::NAN).is_nan());
    }

    #[test]
    fn erf_hand_values() {
        // erf(0.5), erf(1), erf(3) to 15 digits from tables.
        assert!((erf_f64(0.5) - 0.520_499_877_813_047).abs() < 1e-14);
        assert!((erf_f64(1.0) - 0.842_700_792_949_715).abs() < 1e-14);
        assert!((erf_f64(-3.0) + 0.999_977_909_503_001).abs() < 1e-14);
        assert!((erfc_f64(5.0) - 1.537_459_794_428_035e-12).abs() < 1e-24);
        assert_eq!(erf_f64(0.0), 0.0);
    }

    #[test]
    fn gelu_slice_kernel_agrees_with_the_scalar_one() {
        // Blocks of central values, blocks mixing in a tail value or NaN, and a remainder
        // that is not a whole block.
        let mut xs: Vec<f32> = (0..203).map(|i| (i as f32 - 101.0) * 0.013).collect();
        xs[17] = -9.5;
        xs[40] = 6.0;
        xs[64] = f32::NAN;
        xs[202] = -3.0;
        let mut fast = xs.clone();
        gelu_erf_slice(&mut fast);
        for (i, (&x, &y)) in xs.iter().zip(&fast).enumerate() {
            let want = gelu_erf(x);
            if want.is_nan() {
                assert!(y.is_nan(), "element {i}");
            } else {
                let tol = 1e-6 * want.abs().max(f32::MIN_POSITIVE);
                assert!(
                    (y - want).abs() <= tol,
                    "element {i}: gelu({x}) = {y}, scalar {want}"
                );
            }
        }
    }

    #[test]
    fn gelu_central_f32_kernel_agrees_with_the_f64_one() {
        // Every 64th f32 of the central range, both ends included, where the cancellation
        // in 1/2 + x·Q(x²) is worst.
        let top = std::f32::consts::SQRT_2.to_bits();
        let mut worst = 0f64;
        for bits in (0..=top).step_by(64).chain([top]) {
            for x in [f32::from_bits(bits), -f32::from_bits(bits)] {
                let (got, want) = (gelu_erf_central(x) as f64, gelu_erf(x) as f64);
                if want != 0.0 {
                    worst = worst.max(((got - want) / want).abs());
                } else {
                    assert_eq!(got, 0.0, "gelu({x})");
                }
            }
        }
        assert!(worst < 1e-6, "worst relative error {worst}");
    }

    #[test]
    fn gelu_tail_kernel_agrees_with_the_scalar_one() {
        // Every finite tail value the vectorised fit covers, far tails and huge values
        // included, against the f64 erfc of the scalar path.
        let mut x = -40.0f32;
        while x <= 40.0 {
            if x.abs() > std::f32::consts::SQRT_2 {
                let (got, want) = (gelu_erf_tail(x), gelu_erf(x));
                let tol = 1e-6 * want.abs().max(f32::MIN_POSITIVE);
                assert!(
                    (got - want).abs() <= tol,
                    "gelu({x}) = {got}, scalar {want}"
                );
            }
            x += 0.0137;
        }
        for x in [f32::MAX, -f32::MAX, 1e30, -1e30] {
            assert_eq!(gelu_erf_tail(x), gelu_erf(x), "gelu({x})");
        }
    }

    #[test]
    fn gelu_tail_matches_erfc_not_cancellation() {
        // gelu(-10) = -10 * Φ(-10) ≈ -7.6199e-23; a naive f32 1+erf gives 0.
        let y = gelu(&t(&[1], &[-10.0]), GeluApproximate::None);
        let expected = -7.619_853_024_160_526e-23f64;
        assert!(((y[[0]] as f64 - expected) / expected).abs() < 1e-5);
    }

    #[test]
    fn unary_against_torch() {
        let fx = Fixture::load(include_str!(
            "../../../tests/fixtures/kernels/elementwise.json"
        ));
        let mut failures = Vec::new();
        for case in fx.cases_with_prefix("unary/") {
            let x = case.input("x");
            let op = match case.name.trim_start_matches("unary/") {
                "relu" => Unary::Relu,
                "relu6" => Unary::Relu6,
                "leaky_relu_0.2" => Unary::LeakyRelu {
                    negative_slope: 0.2,
                },
                "gelu" | "gelu_tail" => Unary::Gelu(GeluApproximate::None),
                "gelu_tanh" | "gelu_tanh_tail" => Unary::Gelu(GeluApproximate::Tanh),
                "silu" => Unary::Silu,
                "sigmoid" => Unary::Sigmoid,
                "logsigmoid" => Unary::LogSigmoid,
                "tanh" => Unary::Tanh,
                "hardswish" => Unary::Hardswish,
                "hardsigmoid" => Unary::Hardsigmoid,
                "hardtanh" => Unary::Hardtanh {
                    min: -1.0,
                    max: 1.0,
                },
                "elu" => Unary::ELU,
                "elu_0.5" => Unary::Elu { alpha: 0.5 },
                "selu" => Unary::Selu,
                "celu_2" => Unary::Celu { alpha: 2.0 },
                "softplus" => Unary::SOFTPLUS,
                "softplus_b2_t5" => Unary::Softplus {
                    beta: 2.0,
                    threshold: 5.0,
                },
                "mish" => Unary::Mish,
                "exp" => Unary::Exp,
                "expm1" => Unary::Expm1,
                "log" => Unary::Log,
                "log1p" => Unary::Log1p,
                "sqrt" => Unary::Sqrt,
                "rsqrt" => Unary::Rsqrt,
                "neg" => Unary::Neg,
                "abs" => Unary::Abs,
                "erf" => Unary::Erf,
                "sin" => Unary::Sin,
                "round" => Unary::Round,
                "reciprocal" => Unary::Reciprocal,
                "clamp" => Unary::Clamp {
                    min: Some(-0.5),
                    max: Some(0.75),
                },
                "clamp_min" => Unary::Clamp {
                    min: Some(0.1),
                    max: None,
                },
                other => panic!("fixture has unknown unary case {other}"),
            };
            let y = unary(op, &x);
            failures.extend(check_pointwise(&case.name, &y, &case.expected(), 1e-5).err());
        }
        assert!(failures.is_empty(), "{failures:#?}");
    }

    #[test]
    fn binary_against_torch() {
        let fx = Fixture::load(include_str!(
            "../../../tests/fixtures/kernels/elementwise.json"
        ));
        for case in fx.cases_with_prefix("binary/") {
            let a = case.input("a");
            let b = case.input("b");
            let op = match case.name.trim_start_matches("binary/") {
                "add" => BinaryOp::Add,
                "sub" => BinaryOp::Sub,
                "mul" => BinaryOp::Mul,
                "div" => BinaryOp::Div,
                "pow" => BinaryOp::Pow,
                "maximum" => BinaryOp::Maximum,
                "minimum" => BinaryOp::Minimum,
                "eq" => BinaryOp::Eq,
                "ne" => BinaryOp::Ne,
                "lt" => BinaryOp::Lt,
                "le" => BinaryOp::Le,
                "gt" => BinaryOp::Gt,
                "ge" => BinaryOp::Ge,
                "floor_divide" => BinaryOp::FloorDivide,
                "remainder" => BinaryOp::Remainder,
                other => panic!("fixture has unknown binary case {other}"),
            };
            let y = binary(op, &a, &b).unwrap();
            assert_close_pointwise(&case.name, &y, &case.expected(), 1e-5);
        }
        let case = fx.case("where");
        let y = where_(&case.input("cond"), &case.input("a"), &case.input("b")).unwrap();
        assert_close_pointwise("where", &y, &case.expected(), 0.0);
    }
}
