//! `call_module` on torch.nn leaves: each class maps its hyperparameters (from the module
//! tree) and parameters onto the functional op it wraps.

use std::collections::HashMap;

use super::call::{Call, OpResult};
use super::ops::table;
use super::value::RValue;
use crate::analysis::{HyperValue, ModuleSummary};

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

pub struct ModCall<'a> {
    pub module: &'a ModuleSummary,
    /// All parameters by `state_dict` name.
    pub params: &'a HashMap<String, RValue>,
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

    fn p(&self, name: &str) -> RValue {
        let key = if self.module.path.is_empty() {
            name.to_string()
        } else {
            format!("{}.{}", self.module.path, name)
        };
        self.params.get(&key).cloned().unwrap_or(RValue::None)
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
        "Linear" | "NonDynamicallyQuantizableLinear" | "LazyLinear" => m.functional(
            "torch.nn.functional.linear",
            vec![m.p("weight"), m.p("bias")],
            vec![],
        ),
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
        other => Err(format!(
            "the executor has no implementation of the torch.nn.{other} module"
        )),
    }
}
