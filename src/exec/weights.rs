//! Parameters and buffers for the executor: safetensors files (memory-mapped) keyed by
//! `state_dict` names, checked against the module tree, or PyTorch-style default
//! initialisation from a seed.

use std::collections::HashMap;
use std::path::Path;

use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};
use safetensors::{Dtype, SafeTensors};

use super::kernels::init::{self, Rng};
use super::kernels::Tensor;
use super::value::HostTensor;
use crate::shapes::DType;
use crate::traced::{HyperValue, ModuleSummary};

#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    #[error("cannot read {path}: {message}")]
    Io { path: String, message: String },
    #[error("{path} is not a valid safetensors file: {message}")]
    Format { path: String, message: String },
    #[error("tensor `{name}` in {path} has dtype {dtype}, which the executor does not read (f32, f16, bf16, f64, i64, i32, i16, i8, u8, bool)")]
    Dtype {
        path: String,
        name: String,
        dtype: String,
    },
    #[error("{0}")]
    Mismatch(String),
    #[error("cannot initialise `{name}`: {reason}")]
    Init { name: String, reason: String },
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
}

/// Reads every tensor of a safetensors file, converting f16/bf16/f64 to f32 and smaller
/// integer types to i64. Names keep the file's order (sorted by offset).
pub fn read_safetensors(path: &Path) -> Result<Vec<(String, HostTensor)>, WeightsError> {
    let p = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| WeightsError::Io {
        path: p.clone(),
        message: e.to_string(),
    })?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len < 8 {
        return Err(WeightsError::Format {
            path: p,
            message: format!("the file is {len} bytes long, shorter than the 8-byte header length"),
        });
    }
    // SAFETY: the map is read-only and lives only while this function converts the data;
    // a concurrent truncation by another process is the usual caveat of memory maps.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| WeightsError::Io {
        path: p.clone(),
        message: e.to_string(),
    })?;
    parse_safetensors(&map, &p)
}

/// Parses safetensors bytes (`what` names the source in errors).
pub fn parse_safetensors(
    bytes: &[u8],
    what: &str,
) -> Result<Vec<(String, HostTensor)>, WeightsError> {
    let st = SafeTensors::deserialize(bytes).map_err(|e| WeightsError::Format {
        path: what.to_string(),
        message: describe_format_error(&e, bytes),
    })?;
    let mut out = Vec::new();
    let mut tensors = st.tensors();
    tensors.sort_by_key(|(_, v)| v.data().as_ptr() as usize);
    for (name, view) in tensors {
        let shape = view.shape().to_vec();
        let data = view.data();
        let t = match view.dtype() {
            Dtype::F32 => HostTensor::F32(arr(
                &shape,
                data.chunks_exact(4)
                    .map(|c| f32::from_le_bytes(c.try_into().unwrap())),
            )),
            Dtype::F64 => HostTensor::F32(arr(
                &shape,
                data.chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().unwrap()) as f32),
            )),
            Dtype::F16 => HostTensor::F32(arr(
                &shape,
                data.chunks_exact(2)
                    .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32()),
            )),
            Dtype::BF16 => HostTensor::F32(arr(
                &shape,
                data.chunks_exact(2)
                    .map(|c| bf16::from_le_bytes([c[0], c[1]]).to_f32()),
            )),
            Dtype::I64 => HostTensor::I64(arr(
                &shape,
                data.chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap())),
            )),
            Dtype::I32 => HostTensor::I64(arr(
                &shape,
                data.chunks_exact(4)
                    .map(|c| i32::from_le_bytes(c.try_into().unwrap()) as i64),
            )),
            Dtype::I16 => HostTensor::I64(arr(
                &shape,
                data.chunks_exact(2)
                    .map(|c| i16::from_le_bytes([c[0], c[1]]) as i64),
            )),
            Dtype::I8 => HostTensor::I64(arr(&shape, data.iter().map(|&b| b as i8 as i64))),
            Dtype::U8 => HostTensor::I64(arr(&shape, data.iter().map(|&b| b as i64))),
            Dtype::BOOL => {
                HostTensor::Bool(arr(&shape, data.iter().map(|&b| (b != 0) as u8 as f32)))
            }
            other => {
                return Err(WeightsError::Dtype {
                    path: what.to_string(),
                    name,
                    dtype: format!("{other:?}"),
                })
            }
        };
        out.push((name, t));
    }
    Ok(out)
}

fn describe_format_error(e: &safetensors::SafeTensorError, bytes: &[u8]) -> String {
    use safetensors::SafeTensorError as E;
    let declared = bytes
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .unwrap_or(0);
    match e {
        E::InvalidHeaderLength => format!(
            "the header claims {declared} bytes but the file has {} after the length (truncated or not safetensors)",
            bytes.len().saturating_sub(8)
        ),
        E::HeaderTooLarge => format!(
            "the header claims {declared} bytes, more than safetensors allows (100 MB)"
        ),
        E::MetadataIncompleteBuffer => {
            "the tensor data ends before the header says it does (truncated file)".into()
        }
        other => other.to_string(),
    }
}

fn arr<T>(shape: &[usize], it: impl Iterator<Item = T>) -> ArrayD<T> {
    let v: Vec<T> = it.collect();
    // safetensors has already checked that the byte length matches the shape.
    ArrayD::from_shape_vec(IxDyn(shape), v).expect("safetensors validated the length")
}

/// Writes tensors (f32, i64, bool) to a safetensors file.
pub fn write_safetensors(
    path: &Path,
    tensors: &[(String, HostTensor)],
) -> Result<(), WeightsError> {
    let bytes = serialize_safetensors(tensors).map_err(|message| WeightsError::Write {
        path: path.display().to_string(),
        message,
    })?;
    std::fs::write(path, bytes).map_err(|e| WeightsError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

pub fn serialize_safetensors(tensors: &[(String, HostTensor)]) -> Result<Vec<u8>, String> {
    let mut owned: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::new();
    for (name, t) in tensors {
        let (dtype, bytes) = match t {
            HostTensor::F32(a) => (Dtype::F32, a.iter().flat_map(|v| v.to_le_bytes()).collect()),
            HostTensor::I64(a) => (Dtype::I64, a.iter().flat_map(|v| v.to_le_bytes()).collect()),
            HostTensor::Bool(a) => (Dtype::BOOL, a.iter().map(|&v| (v != 0.0) as u8).collect()),
        };
        owned.push((name.clone(), dtype, t.shape().to_vec(), bytes));
    }
    let views = owned
        .iter()
        .map(|(n, d, s, b)| {
            safetensors::tensor::TensorView::new(*d, s.clone(), b)
                .map(|v| (n.clone(), v))
                .map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    safetensors::serialize(views, None).map_err(|e| e.to_string())
}

/// A parameter or buffer the module tree declares.
#[derive(Clone, Debug)]
pub struct Expected {
    /// `state_dict` key: `layer1.0.bn1.running_mean`.
    pub name: String,
    pub shape: Option<Vec<usize>>,
    pub dtype: DType,
    pub buffer: bool,
    /// Leaf class of the owning module (`BatchNorm2d`), or its user class.
    pub class: String,
    pub module: String,
    pub local: String,
    /// Owned by a torch.nn leaf module (whose initialiser we know).
    pub leaf: bool,
}

pub fn expected(modules: &[ModuleSummary]) -> Vec<Expected> {
    let mut out = Vec::new();
    for m in modules {
        for p in &m.params {
            let name = if m.path.is_empty() {
                p.name.clone()
            } else {
                format!("{}.{}", m.path, p.name)
            };
            out.push(Expected {
                name,
                shape: p
                    .shape
                    .as_ref()
                    .and_then(|s| s.iter().map(|&d| usize::try_from(d).ok()).collect()),
                dtype: p.dtype,
                buffer: p.buffer,
                class: m.class.clone(),
                module: m.path.clone(),
                local: p.name.clone(),
                leaf: m.leaf,
            });
        }
    }
    out
}

/// Buffers PyTorch saves but inference never reads; a file may leave them out.
fn optional(e: &Expected) -> bool {
    e.buffer && e.local == "num_batches_tracked"
}

/// Checks loaded tensors against the module tree and returns them keyed by name, as the
/// interpreter wants them. Every missing, unexpected, mis-shaped or mis-typed tensor is
/// reported in one error.
pub fn check(
    expected: &[Expected],
    loaded: Vec<(String, HostTensor)>,
    what: &str,
) -> Result<HashMap<String, HostTensor>, WeightsError> {
    let mut loaded: indexmap::IndexMap<String, HostTensor> = loaded.into_iter().collect();
    let mut out = HashMap::new();
    let mut missing = Vec::new();
    let mut misshaped = Vec::new();
    for e in expected {
        let Some(t) = loaded.shift_remove(&e.name) else {
            if !optional(e) {
                missing.push(e.name.clone());
            }
            continue;
        };
        if let Some(shape) = &e.shape {
            if t.shape() != shape.as_slice() {
                misshaped.push(format!(
                    "{} (file {:?}, model {:?})",
                    e.name,
                    t.shape(),
                    shape
                ));
                continue;
            }
        }
        let t = match (e.dtype.is_floating(), t) {
            (true, t @ HostTensor::F32(_)) => t,
            (false, t @ HostTensor::I64(_)) if e.dtype != DType::Bool => t,
            (false, t @ HostTensor::Bool(_)) if e.dtype == DType::Bool => t,
            (_, t) => {
                misshaped.push(format!(
                    "{} (file dtype {}, model {})",
                    e.name,
                    t.dtype().as_str(),
                    e.dtype.as_str()
                ));
                continue;
            }
        };
        out.insert(e.name.clone(), t);
    }
    let unexpected: Vec<String> = loaded.keys().cloned().collect();
    if missing.is_empty() && unexpected.is_empty() && misshaped.is_empty() {
        return Ok(out);
    }
    let mut msg = format!("the weights in {what} do not fit the model:");
    for (label, list) in [
        ("missing", &missing),
        ("unexpected", &unexpected),
        ("mismatched", &misshaped),
    ] {
        if !list.is_empty() {
            msg.push_str(&format!(
                "\n  {label} ({}): {}",
                list.len(),
                list.join(", ")
            ));
        }
    }
    Err(WeightsError::Mismatch(msg))
}

fn hyper<'a>(modules: &'a [ModuleSummary], path: &str, name: &str) -> Option<&'a HyperValue> {
    modules
        .iter()
        .find(|m| m.path == path)
        .and_then(|m| m.hyper.iter().find(|(k, _)| k == name).map(|(_, v)| v))
}

/// PyTorch's default initialisation, from `seed`: kaiming-uniform weights and uniform
/// biases for Linear/Conv (`reset_parameters`), ones/zeros for norms and their running
/// statistics, N(0, 1) for Embedding (padding row zero), 0.25 for PReLU, xavier-uniform
/// for MultiheadAttention's packed projection. Parameters of user modules
/// (`nn.Parameter(...)` in Python the executor does not run) get N(0, 0.02²).
pub fn initialise(
    modules: &[ModuleSummary],
    expected: &[Expected],
    seed: u64,
) -> Result<HashMap<String, HostTensor>, WeightsError> {
    let mut rng = Rng::new(seed);
    let mut out = HashMap::new();
    let mut done = std::collections::HashSet::new();
    for e in expected {
        if done.contains(&e.name) {
            continue;
        }
        let shape = e.shape.clone().ok_or_else(|| WeightsError::Init {
            name: e.name.clone(),
            reason: "its shape is not known statically (per-class mode leaves required constructor arguments unknown: use --entry 'Class(...)', or pass --weights)".into(),
        })?;
        let err = |k: super::kernels::KernelError| WeightsError::Init {
            name: e.name.clone(),
            reason: k.to_string(),
        };
        if !e.dtype.is_floating() {
            out.insert(
                e.name.clone(),
                HostTensor::I64(ArrayD::zeros(IxDyn(&shape))),
            );
            done.insert(e.name.clone());
            continue;
        }
        let class = if e.leaf { e.class.as_str() } else { "" };
        let is_affine = matches!(
            class,
            "Linear" | "LazyLinear" | "Bilinear" | "NonDynamicallyQuantizableLinear"
        ) || class.starts_with("Conv")
            || class.starts_with("LazyConv");
        let t: Tensor = if is_affine && e.local == "weight" {
            // Weight and bias come from one reset_parameters call, in that order.
            let bias = expected
                .iter()
                .find(|b| b.module == e.module && b.local == "bias");
            let bias_len = match bias.and_then(|b| b.shape.clone()) {
                Some(s) => Some(s.iter().product()),
                None => None,
            };
            let (w, b) = init::default_weight_and_bias(&shape, bias_len, &mut rng).map_err(err)?;
            if let (Some(b), Some(bt)) = (bias, b) {
                out.insert(b.name.clone(), HostTensor::F32(bt));
                done.insert(b.name.clone());
            }
            w
        } else if class.contains("Norm") {
            match e.local.as_str() {
                "weight" | "running_var" => Tensor::ones(IxDyn(&shape)),
                _ => Tensor::zeros(IxDyn(&shape)),
            }
        } else if class == "Embedding" && e.local == "weight" {
            let mut w = init::normal(&shape, 0.0, 1.0, &mut rng);
            if let Some(HyperValue::Int(p)) = hyper(modules, &e.module, "padding_idx") {
                let rows = shape.first().copied().unwrap_or(0) as i64;
                let p = if *p < 0 { p + rows } else { *p };
                if (0..rows).contains(&p) {
                    w.index_axis_mut(ndarray::Axis(0), p as usize).fill(0.0);
                }
            }
            w
        } else if class == "PReLU" {
            let v = match hyper(modules, &e.module, "init") {
                Some(HyperValue::Float(x)) => *x as f32,
                _ => 0.25,
            };
            Tensor::from_elem(IxDyn(&shape), v)
        } else if class == "MultiheadAttention" {
            if e.local.ends_with("_weight") {
                init::xavier_uniform(&shape, 1.0, &mut rng).map_err(err)?
            } else {
                Tensor::zeros(IxDyn(&shape))
            }
        } else {
            init::normal(&shape, 0.0, 0.02, &mut rng)
        };
        out.insert(e.name.clone(), HostTensor::F32(t));
        done.insert(e.name.clone());
    }
    Ok(out)
}
