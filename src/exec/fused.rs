//! Fused ops of the pass pipeline (`staticfx.fused.*`, see the `passes` branch's
//! `fusion.rs`). They read modules by path (`linear="fc1"`, `conv=…, bn=…`), so unlike the
//! plain ops they get the module tree and the parameters.
//!
//! | target                              | computes                                         |
//! |-------------------------------------|--------------------------------------------------|
//! | `staticfx.fused.linear_act`         | `act(linear(x))`, one pass (bias seeds the GEMM) |
//! | `staticfx.fused.matmul_add_act`     | `act(a @ b + bias)`                              |
//! | `staticfx.fused.add_act`            | `act(a + b)`                                     |
//! | `staticfx.fused.conv_bn_act`        | `act(bn(conv(x)))` with bn folded into the conv  |
//! | `staticfx.fused.conv_bn`            | `bn(conv(x))` folded                             |

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use ndarray::{Axis, IxDyn};

use super::call::{Call, OpResult};
use super::kernels::{self as k, GeluApproximate, Tensor, Unary};
use super::modules::{hyper_value, InOutWeights};
use super::ops::{binary_inplace, binary_values, conv2d_params, table};
use super::value::RValue;
use crate::traced::ModuleSummary;

pub use crate::graph::FUSED_PREFIX;

/// What ops that refer to modules by path can see.
pub struct Ctx<'a> {
    pub modules: &'a HashMap<&'a str, &'a ModuleSummary>,
    pub params: &'a HashMap<String, RValue>,
    /// Folded conv weights and biases by `conv|bn`, computed on first use: weights do not
    /// change between runs of one program.
    pub folded: &'a FoldCache,
    pub in_out_weights: &'a InOutWeights,
}

pub type FoldCache = std::sync::Mutex<HashMap<String, Folded>>;

/// A convolution with its batch norm folded in, and the folded 3×3 kernel's Winograd
/// transforms (`kernels::conv::WinogradWeights`) when it has that shape.
#[derive(Clone)]
pub struct Folded {
    weight: Arc<Tensor>,
    bias: Arc<Tensor>,
    winograd: Option<Arc<k::WinogradWeights>>,
}

impl Ctx<'_> {
    fn module(&self, path: &str) -> Result<&ModuleSummary, String> {
        self.modules
            .get(path)
            .copied()
            .ok_or_else(|| format!("no module at `{path}`"))
    }

    fn param(&self, module: &str, name: &str) -> Option<Arc<Tensor>> {
        let key = if module.is_empty() {
            name.to_string()
        } else {
            format!("{module}.{name}")
        };
        match self.params.get(&key) {
            Some(RValue::F32(t)) => Some(t.clone()),
            _ => None,
        }
    }

    fn hyper(&self, module: &str, name: &str) -> RValue {
        self.modules
            .get(module)
            .and_then(|m| m.hyper.iter().find(|(k, _)| k == name))
            .map(|(_, v)| hyper_value(v))
            .unwrap_or(RValue::None)
    }
}

pub type CtxOpFn = fn(&Ctx, &mut Call) -> OpResult;

pub fn table_ctx() -> &'static HashMap<&'static str, CtxOpFn> {
    static TABLE: OnceLock<HashMap<&'static str, CtxOpFn>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut m: HashMap<&'static str, CtxOpFn> = HashMap::new();
        m.insert("staticfx.fused.linear_act", linear_act);
        m.insert("staticfx.fused.matmul_add_act", matmul_add_act);
        m.insert("staticfx.fused.add_act", add_act);
        m.insert("staticfx.fused.conv_bn_act", conv_bn);
        m.insert("staticfx.fused.conv_bn", conv_bn);
        m
    })
}

fn kw<'a>(c: &'a Call, name: &str) -> Option<&'a RValue> {
    c.kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn kw_str<'a>(c: &'a Call, name: &str) -> Option<&'a str> {
    match kw(c, name) {
        Some(RValue::Str(s)) => Some(s),
        _ => None,
    }
}

/// The activation of a fused node: `act=relu|relu6|gelu|silu`, GELU's `approximate` from the
/// node or from the absorbed module (`act_module`).
fn activation(ctx: &Ctx, c: &Call) -> Result<Option<Unary>, String> {
    let Some(act) = kw_str(c, "act") else {
        return Ok(None);
    };
    Ok(Some(match act {
        "relu" => Unary::Relu,
        "relu6" => Unary::Relu6,
        "silu" => Unary::Silu,
        "gelu" => {
            let approx = match kw(c, "approximate") {
                Some(v) => v.clone(),
                None => match kw_str(c, "act_module") {
                    Some(m) => ctx.hyper(m, "approximate"),
                    None => RValue::None,
                },
            };
            match approx {
                RValue::Str(s) if s == "tanh" => Unary::Gelu(GeluApproximate::Tanh),
                RValue::None => Unary::Gelu(GeluApproximate::None),
                RValue::Str(s) if s == "none" => Unary::Gelu(GeluApproximate::None),
                other => return Err(format!("gelu approximate={}", other.describe())),
            }
        }
        other => return Err(format!("unknown fused activation `{other}`")),
    }))
}

fn apply(act: Option<Unary>, v: RValue) -> OpResult {
    match (act, v) {
        (None, v) => Ok(v),
        (Some(a), RValue::F32(t)) => {
            let mut t = Arc::try_unwrap(t).unwrap_or_else(|t| (*t).clone());
            k::unary_inplace(a, &mut t);
            Ok(RValue::f32(t))
        }
        (Some(_), v) => Err(format!("activation of {}", v.describe())),
    }
}

fn linear_act(ctx: &Ctx, c: &mut Call) -> OpResult {
    let x = c.tensor(0, "input")?;
    let (w, b, in_out) = match kw_str(c, "linear") {
        Some(m) => {
            let w = ctx
                .param(m, "weight")
                .ok_or_else(|| format!("`{m}` has no weight"))?;
            let key = if m.is_empty() {
                "weight".to_string()
            } else {
                format!("{m}.weight")
            };
            let in_out = ctx.in_out_weights.get(&key, &w, x);
            (w, ctx.param(m, "bias"), in_out)
        }
        None => (
            c.tensor(1, "weight")?.clone(),
            c.opt_tensor(2, "bias")?.cloned(),
            None,
        ),
    };
    let act = activation(ctx, c)?.unwrap_or(Unary::Identity);
    Ok(RValue::f32(
        k::linear_act(x, &w, in_out.as_deref(), b.as_deref(), act).map_err(|e| e.to_string())?,
    ))
}

fn matmul_add_act(ctx: &Ctx, c: &mut Call) -> OpResult {
    let a = c.tensor(0, "input")?;
    let b = c.tensor(1, "other")?;
    let y = RValue::f32(k::matmul(a, b).map_err(|e| e.to_string())?);
    let y = binary_values(k::BinaryOp::Add, &y, c.req(2, "bias")?)?;
    apply(activation(ctx, c)?, y)
}

fn add_act(ctx: &Ctx, c: &mut Call) -> OpResult {
    let act = activation(ctx, c)?;
    // In place when the input is not used elsewhere, as the plain `add` does: the residual
    // sums of ResNets otherwise allocate (and page-fault) a fresh tensor per block.
    let y = match binary_inplace(c, k::BinaryOp::Add) {
        Some(r) => r?,
        None => binary_values(k::BinaryOp::Add, c.req(0, "input")?, c.req(1, "other")?)?,
    };
    apply(act, y)
}

/// BatchNorm (inference statistics) folded into the preceding convolution's weight and
/// bias: `w' = w·γ/√(σ²+ε)` per output channel, `b' = (b − μ)·γ/√(σ²+ε) + β`.
pub fn fold_bn(
    w: &Tensor,
    b: Option<&Tensor>,
    mean: &Tensor,
    var: &Tensor,
    gamma: Option<&Tensor>,
    beta: Option<&Tensor>,
    eps: f64,
) -> Result<(Tensor, Tensor), String> {
    let c = w.shape()[0];
    for (n, t) in [
        ("running_mean", Some(mean)),
        ("running_var", Some(var)),
        ("weight", gamma),
        ("bias", beta),
    ] {
        if let Some(t) = t {
            if t.len() != c {
                return Err(format!(
                    "batch norm {n} has {} entries, the conv {c} output channels",
                    t.len()
                ));
            }
        }
    }
    let at = |t: Option<&Tensor>, i: usize, d: f64| {
        t.map_or(d, |t| {
            t.as_slice_memory_order().map_or_else(
                || t.iter().nth(i).copied().unwrap_or(0.0) as f64,
                |s| s[i] as f64,
            )
        })
    };
    let mut w2 = w.as_standard_layout().into_owned();
    let mut b2 = Tensor::zeros(IxDyn(&[c]));
    for o in 0..c {
        let scale = at(gamma, o, 1.0) / (at(Some(var), o, 1.0) + eps).sqrt();
        w2.index_axis_mut(Axis(0), o)
            .mapv_inplace(|v| (v as f64 * scale) as f32);
        b2[[o]] = ((at(b, o, 0.0) - at(Some(mean), o, 0.0)) * scale + at(beta, o, 0.0)) as f32;
    }
    Ok((w2, b2))
}

fn conv_bn(ctx: &Ctx, c: &mut Call) -> OpResult {
    let conv = kw_str(c, "conv").ok_or("missing `conv`")?;
    let bn = kw_str(c, "bn").ok_or("missing `bn`")?;
    let cm = ctx.module(conv)?;
    let w = ctx
        .param(conv, "weight")
        .ok_or_else(|| format!("`{conv}` has no weight"))?;
    let b = ctx.param(conv, "bias");
    let (Some(mean), Some(var)) = (ctx.param(bn, "running_mean"), ctx.param(bn, "running_var"))
    else {
        return Err(format!("`{bn}` has no running statistics to fold"));
    };
    let eps = ctx.hyper(bn, "eps").as_f64().unwrap_or(1e-5);
    let key = format!("{conv}|{bn}");
    let cached = ctx.folded.lock().ok().and_then(|m| m.get(&key).cloned());
    let folded = match cached {
        Some(folded) => folded,
        None => {
            let (w2, b2) = fold_bn(
                &w,
                b.as_deref(),
                &mean,
                &var,
                ctx.param(bn, "weight").as_deref(),
                ctx.param(bn, "bias").as_deref(),
                eps,
            )?;
            let one_group = ctx.hyper(conv, "groups").as_int().unwrap_or(1) == 1;
            let winograd = (cm.class == "Conv2d" && one_group)
                .then(|| k::WinogradWeights::new(&w2).map(Arc::new))
                .flatten();
            let folded = Folded {
                weight: Arc::new(w2),
                bias: Arc::new(b2),
                winograd,
            };
            if let Ok(mut m) = ctx.folded.lock() {
                m.insert(key, folded.clone());
            }
            folded
        }
    };
    let (w2, b2) = (folded.weight, folded.bias);
    let target = match cm.class.as_str() {
        "Conv2d" => "torch.nn.functional.conv2d",
        "Conv1d" => "torch.nn.functional.conv1d",
        other => return Err(format!("folding batch norm into {other} is not supported")),
    };
    if let RValue::Str(m) = ctx.hyper(conv, "padding_mode") {
        if m != "zeros" {
            return Err(format!("padding_mode={m:?} is not supported (only zeros)"));
        }
    }
    let act = activation(ctx, c)?;
    let mut call = Call {
        args: vec![
            c.req(0, "input")?.clone(),
            RValue::F32(w2),
            RValue::F32(b2),
            ctx.hyper(conv, "stride"),
            ctx.hyper(conv, "padding"),
            ctx.hyper(conv, "dilation"),
            ctx.hyper(conv, "groups"),
        ],
        kwargs: vec![],
    };
    if cm.class == "Conv2d" {
        // The activation rides along in the convolution's output pass.
        let p = conv2d_params(&call)?;
        let (x, w, b) = (
            call.tensor(0, "input")?,
            call.tensor(1, "weight")?,
            Some(&**call.tensor(2, "bias")?),
        );
        let act = act.unwrap_or(Unary::Identity);
        let y = match &folded.winograd {
            Some(prepared) => k::conv2d_act_winograd(x, w, prepared, b, &p, act),
            None => k::conv2d_act(x, w, b, &p, act),
        }
        .map_err(|e| e.to_string())?;
        return Ok(RValue::f32(y));
    }
    let f = table().get(target).expect("conv op");
    let y = f(&mut call)?;
    apply(act, y)
}

#[cfg(test)]
mod tests {
    use crate::graph::OpKey;

    /// Every executor entry is keyed the way `OpKey::key` names ops, and the fused table
    /// holds exactly the fused ones.
    #[test]
    fn tables_are_keyed_by_op_key() {
        for &key in super::super::ops::table().keys() {
            let k = OpKey::parse(key);
            assert_eq!(k.key(), key);
            assert!(
                !matches!(k, OpKey::Fused(_)),
                "{key} belongs in the fused table"
            );
        }
        for &key in super::table_ctx().keys() {
            assert!(matches!(OpKey::parse(key), OpKey::Fused(_)), "{key}");
        }
    }
}
