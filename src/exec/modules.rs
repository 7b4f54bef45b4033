//! `call_module` on torch.nn leaves: each class maps its hyperparameters (from the module
//! tree) and parameters onto the functional op it wraps.

use std::collections::HashMap;
use std::sync::Arc;

use super::call::{Call, OpResult};
use super::kernels::{self as k, Tensor};
use super::ops::table;
use super::value::RValue;
use crate::traced::{HyperValue, ModuleSummary};

pub fn hyper_value(h: &HyperValue) -> RValue {
    match h {
        HyperValue::None => RValue::None,
        HyperValue::Bool(b) => RValue::PyBool(*b),
        HyperValue::Int(i) => RValue::Int(*i),
        HyperValue::Float(x) => RValue::Float(*x),
        HyperValue::Str(s) => RValue::Str(s.clone()),
        HyperValue::Seq(v) => RValue::Seq(v.iter().map(hyper_value).collect()),
        HyperValue::Other(t) => RValue::Str(format!("<{t}>")),
    }
}

/// Linear weights copied to `(in, out)` by `state_dict` name, made on first use (see
/// `kernels::prefers_in_out_weight`): weights do not change between runs of one program.
#[derive(Default)]
pub struct InOutWeights(std::sync::Mutex<HashMap<String, Arc<Tensor>>>);

impl InOutWeights {
    /// The `(in, out)` copy of the parameter `key` (= `weight`), when a product with `x`
    /// prefers it.
    pub fn get(&self, key: &str, weight: &Tensor, x: &Tensor) -> Option<Arc<Tensor>> {
        if !k::prefers_in_out_weight(x) || weight.ndim() != 2 {
            return None;
        }
        let mut map = self.0.lock().ok()?;
        if let Some(t) = map.get(key) {
            return Some(t.clone());
        }
        let t = Arc::new(k::in_out_weight(weight).ok()?);
        map.insert(key.to_string(), t.clone());
        Some(t)
    }
}

pub struct ModCall<'a> {
    pub module: &'a ModuleSummary,
    /// All parameters by `state_dict` name.
    pub params: &'a HashMap<String, RValue>,
    pub in_out_weights: &'a InOutWeights,
    pub args: std::cell::RefCell<Vec<RValue>>,
    pub kwargs: Vec<(String, RValue)>,
}

impl ModCall<'_> {
    fn h(&self, name: &str) -> RValue {
        self.module
            .hyper
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| hyper_value(v))
            .unwrap_or(RValue::None)
    }

    fn key(&self, name: &str) -> String {
        if self.module.path.is_empty() {
            name.to_string()
        } else {
            format!("{}.{}", self.module.path, name)
        }
    }

    fn p(&self, name: &str) -> RValue {
        self.params
            .get(&self.key(name))
            .cloned()
            .unwrap_or(RValue::None)
    }

    /// The module's input, moved out (so an op can reuse its buffer when nothing else
    /// holds it); a module reads its input once.
    fn input(&self) -> Result<RValue, String> {
        let mut args = self.args.borrow_mut();
        if let Some(first) = args.first_mut() {
            return Ok(std::mem::replace(first, RValue::None));
        }
        self.kwargs
            .first()
            .map(|(_, v)| v.clone())
            .ok_or_else(|| "the module was called without an input".to_string())
    }

    /// Calls the functional op `target` with the input followed by `rest`.
    fn functional(&self, target: &str, rest: Vec<RValue>, kwargs: Vec<(&str, RValue)>) -> OpResult {
        let f = table()
            .get(target)
            .ok_or_else(|| format!("internal: no op `{target}`"))?;
        let mut args = vec![self.input()?];
        args.extend(rest);
        f(&mut Call {
            args,
            kwargs: kwargs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        })
    }
}

/// `nn.Linear` on the kernel directly, so the product can read the program's `(in, out)`
/// copy of the weight.
fn linear(m: &ModCall) -> OpResult {
    let (RValue::F32(w), bias) = (m.p("weight"), m.p("bias")) else {
        return m.functional(
            "torch.nn.functional.linear",
            vec![m.p("weight"), m.p("bias")],
            vec![],
        );
    };
    let bias = match bias {
        RValue::F32(b) => Some(b),
        RValue::None => None,
        other => return Err(format!("Linear bias is {}", other.describe())),
    };
    let x = m.input()?;
    let RValue::F32(x) = x else {
        return Err(format!("Linear input is {}", x.describe()));
    };
    let in_out = m.in_out_weights.get(&m.key("weight"), &w, &x);
    let y = k::linear_act(
        &x,
        &w,
        in_out.as_deref(),
        bias.as_deref(),
        k::Unary::Identity,
    )
    .map_err(|e| e.to_string())?;
    Ok(RValue::f32(y))
}

fn check_padding_mode(m: &ModCall) -> Result<(), String> {
    match m.h("padding_mode") {
        RValue::Str(s) if s != "zeros" => {
            Err(format!("padding_mode={s:?} is not supported (only zeros)"))
        }
        _ => Ok(()),
    }
}

/// Runs a leaf module by class; `Err` names what is unsupported.
pub fn call_module(class: &str, m: &ModCall) -> OpResult {
    let f = |t: &str| m.functional(t, vec![], vec![]);
    match class {
        "Linear" | "NonDynamicallyQuantizableLinear" | "LazyLinear" => linear(m),
        "Conv2d" | "Conv1d" => {
            check_padding_mode(m)?;
            let target = if class == "Conv2d" {
                "torch.nn.functional.conv2d"
            } else {
                "torch.nn.functional.conv1d"
            };
            m.functional(
                target,
                vec![
                    m.p("weight"),
                    m.p("bias"),
                    m.h("stride"),
                    m.h("padding"),
                    m.h("dilation"),
                    m.h("groups"),
                ],
                vec![],
            )
        }
        "ConvTranspose2d" | "ConvTranspose1d" => {
            check_padding_mode(m)?;
            if !matches!(m.args.borrow().get(1), None | Some(RValue::None))
                || m.kwargs.iter().any(|(k, _)| k == "output_size")
            {
                return Err("ConvTranspose with an explicit output_size is not supported".into());
            }
            let target = if class == "ConvTranspose2d" {
                "torch.nn.functional.conv_transpose2d"
            } else {
                "torch.nn.functional.conv_transpose1d"
            };
            m.functional(
                target,
                vec![
                    m.p("weight"),
                    m.p("bias"),
                    m.h("stride"),
                    m.h("padding"),
                    m.h("output_padding"),
                    m.h("groups"),
                    m.h("dilation"),
                ],
                vec![],
            )
        }
        "BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d" => m.functional(
            "torch.nn.functional.batch_norm",
            vec![
                m.p("running_mean"),
                m.p("running_var"),
                m.p("weight"),
                m.p("bias"),
                RValue::PyBool(false),
                RValue::Float(0.0),
                m.h("eps"),
            ],
            vec![],
        ),
        "LayerNorm" => m.functional(
            "torch.nn.functional.layer_norm",
            vec![
                m.h("normalized_shape"),
                m.p("weight"),
                m.p("bias"),
                m.h("eps"),
            ],
            vec![],
        ),
        "GroupNorm" => m.functional(
            "torch.nn.functional.group_norm",
            vec![m.h("num_groups"), m.p("weight"), m.p("bias"), m.h("eps")],
            vec![],
        ),
        "Embedding" => {
            if !matches!(m.h("max_norm"), RValue::None) {
                return Err(
                    "Embedding(max_norm=...) renormalises weights in place; not supported".into(),
                );
            }
            m.functional("torch.nn.functional.embedding", vec![m.p("weight")], vec![])
        }
        "ReLU" => f("torch.nn.functional.relu"),
        "ReLU6" => f("torch.nn.functional.relu6"),
        "SiLU" => f("torch.nn.functional.silu"),
        "Sigmoid" => f("torch.sigmoid"),
        "Tanh" => f("torch.tanh"),
        "Hardswish" => f("torch.nn.functional.hardswish"),
        "Hardsigmoid" => f("torch.nn.functional.hardsigmoid"),
        "Mish" => f("torch.nn.functional.mish"),
        "SELU" => f("torch.nn.functional.selu"),
        "LogSigmoid" => f("torch.nn.functional.logsigmoid"),
        "GELU" => m.functional(
            "torch.nn.functional.gelu",
            vec![],
            vec![("approximate", m.h("approximate"))],
        ),
        "LeakyReLU" => m.functional(
            "torch.nn.functional.leaky_relu",
            vec![m.h("negative_slope")],
            vec![],
        ),
        "ELU" => m.functional("torch.nn.functional.elu", vec![m.h("alpha")], vec![]),
        "Softplus" => m.functional(
            "torch.nn.functional.softplus",
            vec![m.h("beta"), m.h("threshold")],
            vec![],
        ),
        "Hardtanh" => m.functional(
            "torch.nn.functional.hardtanh",
            vec![m.h("min_val"), m.h("max_val")],
            vec![],
        ),
        "Softmax" => m.functional("torch.nn.functional.softmax", vec![m.h("dim")], vec![]),
        "LogSoftmax" => m.functional("torch.nn.functional.log_softmax", vec![m.h("dim")], vec![]),
        "Dropout" | "Dropout1d" | "Dropout2d" | "Dropout3d" | "AlphaDropout" | "Identity" => {
            m.input()
        }
        "Flatten" => m.functional(
            "torch.flatten",
            vec![m.h("start_dim"), m.h("end_dim")],
            vec![],
        ),
        "MaxPool2d" => m.functional(
            "torch.nn.functional.max_pool2d",
            vec![
                m.h("kernel_size"),
                m.h("stride"),
                m.h("padding"),
                m.h("dilation"),
                m.h("ceil_mode"),
                m.h("return_indices"),
            ],
            vec![],
        ),
        "MaxPool1d" => m.functional(
            "torch.nn.functional.max_pool1d",
            vec![
                m.h("kernel_size"),
                m.h("stride"),
                m.h("padding"),
                m.h("dilation"),
                m.h("ceil_mode"),
            ],
            vec![],
        ),
        "AvgPool2d" => m.functional(
            "torch.nn.functional.avg_pool2d",
            vec![
                m.h("kernel_size"),
                m.h("stride"),
                m.h("padding"),
                m.h("ceil_mode"),
                m.h("count_include_pad"),
                m.h("divisor_override"),
            ],
            vec![],
        ),
        "AvgPool1d" => m.functional(
            "torch.nn.functional.avg_pool1d",
            vec![
                m.h("kernel_size"),
                m.h("stride"),
                m.h("padding"),
                m.h("ceil_mode"),
                m.h("count_include_pad"),
            ],
            vec![],
        ),
        "AdaptiveAvgPool2d" => m.functional(
            "torch.nn.functional.adaptive_avg_pool2d",
            vec![m.h("output_size")],
            vec![],
        ),
        "AdaptiveMaxPool2d" => {
            if matches!(m.h("return_indices"), RValue::PyBool(true)) {
                return Err("AdaptiveMaxPool2d(return_indices=True) is not supported".into());
            }
            m.functional(
                "torch.nn.functional.adaptive_max_pool2d",
                vec![m.h("output_size")],
                vec![],
            )
        }
        "AdaptiveAvgPool1d" => m.functional(
            "torch.nn.functional.adaptive_avg_pool1d",
            vec![m.h("output_size")],
            vec![],
        ),
        "MultiheadAttention" => multihead_attention(m),
        other => Err(format!(
            "the executor has no implementation of the torch.nn.{other} module"
        )),
    }
}

fn tensor_of(v: &RValue, what: &str) -> Result<std::sync::Arc<Tensor>, String> {
    match v {
        RValue::F32(t) => Ok(t.clone()),
        other => Err(format!(
            "{what} should be a float tensor, got {}",
            other.describe()
        )),
    }
}

/// `nn.MultiheadAttention(query, key, value, key_padding_mask=None, need_weights=True,
/// attn_mask=None, average_attn_weights=True, is_causal=False)` in inference mode, with the
/// packed input projection (`kdim == vdim == embed_dim`, no `bias_k` / `add_zero_attn`).
/// Returns `(output, weights averaged over heads | per head | None)`.
fn multihead_attention(m: &ModCall) -> OpResult {
    let arg = |i: usize, name: &str| -> RValue {
        let args = m.args.borrow();
        args.get(i)
            .cloned()
            .or_else(|| {
                m.kwargs
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            })
            .unwrap_or(RValue::None)
    };
    let flag = |i: usize, name: &str, default: bool| match arg(i, name) {
        RValue::PyBool(b) => b,
        _ => default,
    };
    if !matches!(m.h("_qkv_same_embed_dim"), RValue::PyBool(true)) {
        return Err(
            "MultiheadAttention with kdim/vdim different from embed_dim is not supported".into(),
        );
    }
    if !matches!(m.p("bias_k"), RValue::None)
        || matches!(m.h("add_zero_attn"), RValue::PyBool(true))
    {
        return Err("MultiheadAttention with add_bias_kv or add_zero_attn is not supported".into());
    }
    for (i, name) in [(3, "key_padding_mask"), (5, "attn_mask")] {
        if !matches!(arg(i, name), RValue::None) {
            return Err(format!(
                "MultiheadAttention with `{name}` is not supported yet"
            ));
        }
    }
    let need_weights = flag(4, "need_weights", true);
    let average = flag(6, "average_attn_weights", true);
    let causal = flag(7, "is_causal", false);
    let batch_first = matches!(m.h("batch_first"), RValue::PyBool(true));
    let heads = m.h("num_heads").as_int().ok_or("num_heads unknown")? as usize;
    let e = m.h("embed_dim").as_int().ok_or("embed_dim unknown")? as usize;
    let (q, kx, v) = (
        tensor_of(&arg(0, "query"), "query")?,
        tensor_of(&arg(1, "key"), "key")?,
        tensor_of(&arg(2, "value"), "value")?,
    );
    let kerr = |e: k::KernelError| e.to_string();
    // To (N, L, E).
    let to_batch_first = |t: &Tensor| -> Result<Tensor, String> {
        match (t.ndim(), batch_first) {
            (3, true) => Ok(t.clone()),
            (3, false) => k::transpose(t, 0, 1).map_err(kerr),
            (2, _) => k::unsqueeze(t, 0).map_err(kerr),
            _ => Err(format!("MultiheadAttention input of shape {:?}", t.shape())),
        }
    };
    let unbatched = q.ndim() == 2;
    let (qb, kb, vb) = (
        to_batch_first(&q)?,
        to_batch_first(&kx)?,
        to_batch_first(&v)?,
    );
    let w = tensor_of(&m.p("in_proj_weight"), "in_proj_weight")?;
    let b = match m.p("in_proj_bias") {
        RValue::F32(b) => Some(b),
        _ => None,
    };
    if w.shape() != [3 * e, e] {
        return Err(format!(
            "in_proj_weight of shape {:?}, expected [{}, {e}]",
            w.shape(),
            3 * e
        ));
    }
    if heads == 0 || e % heads != 0 {
        return Err(format!(
            "embed_dim {e} is not divisible by num_heads {heads}"
        ));
    }
    let d = e / heads;
    let ws = k::chunk(&w, 3, 0).map_err(kerr)?;
    let bs = match &b {
        Some(b) => k::chunk(b, 3, 0)
            .map_err(kerr)?
            .into_iter()
            .map(Some)
            .collect(),
        None => vec![None, None, None],
    };
    let project = |x: &Tensor, i: usize| -> Result<Tensor, String> {
        let y = k::linear(x, &ws[i], bs[i].as_ref()).map_err(kerr)?;
        let (n, l) = (y.shape()[0], y.shape()[1]);
        let y =
            k::reshape(&y, &[n as isize, l as isize, heads as isize, d as isize]).map_err(kerr)?;
        k::transpose(&y, 1, 2).map_err(kerr)
    };
    let (qh, kh, vh) = (project(&qb, 0)?, project(&kb, 1)?, project(&vb, 2)?);
    let kt = k::transpose(&kh, -2, -1).map_err(kerr)?;
    let mut scores = k::matmul(&qh, &kt).map_err(kerr)?;
    let scale = 1.0 / (d as f64).sqrt();
    scores.mapv_inplace(|x| (x as f64 * scale) as f32);
    if causal {
        let (l, s) = (scores.shape()[2], scores.shape()[3]);
        let mask = Tensor::from_shape_fn(ndarray::IxDyn(&[l, s]), |ix| {
            if ix[1] > ix[0] {
                f32::NEG_INFINITY
            } else {
                0.0
            }
        });
        scores = k::add(&scores, &mask).map_err(kerr)?;
    }
    let p = k::softmax(&scores, -1).map_err(kerr)?;
    let o = k::matmul(&p, &vh).map_err(kerr)?;
    let (n, l) = (o.shape()[0], o.shape()[2]);
    let o = k::transpose(&o, 1, 2).map_err(kerr)?;
    let o = k::reshape(&o, &[n as isize, l as isize, e as isize]).map_err(kerr)?;
    let ow = tensor_of(&m.p("out_proj.weight"), "out_proj.weight")?;
    let ob = match m.p("out_proj.bias") {
        RValue::F32(b) => Some(b),
        _ => None,
    };
    let mut out = k::linear(&o, &ow, ob.as_deref()).map_err(kerr)?;
    if unbatched {
        out = k::squeeze(&out, Some(&[0])).map_err(kerr)?;
    } else if !batch_first {
        out = k::transpose(&out, 0, 1).map_err(kerr)?;
    }
    let weights = if !need_weights {
        RValue::None
    } else {
        let mut wts = if average {
            k::mean(&p, &[1], false).map_err(kerr)?
        } else {
            p
        };
        if unbatched {
            wts = k::squeeze(&wts, Some(&[0])).map_err(kerr)?;
        }
        RValue::f32(wts)
    };
    Ok(RValue::Seq(vec![RValue::f32(out), weights]))
}
