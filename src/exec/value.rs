//! Run-time values of the interpreter: tensors (f32, bool kept as 0/1 f32, i64) and the
//! Python values a torch.fx graph passes between nodes (ints read off shapes, tuples, slices).

use std::sync::Arc;

use super::kernels::{IndexTensor, Tensor};
use crate::shapes::DType;

/// A tensor that crosses the executor's boundary (weights, inputs, outputs).
#[derive(Clone, Debug, PartialEq)]
pub enum HostTensor {
    F32(Tensor),
    I64(IndexTensor),
    /// Booleans stored as 0.0 / 1.0.
    Bool(Tensor),
}

impl HostTensor {
    pub fn shape(&self) -> &[usize] {
        match self {
            HostTensor::F32(t) | HostTensor::Bool(t) => t.shape(),
            HostTensor::I64(t) => t.shape(),
        }
    }

    pub fn dtype(&self) -> DType {
        match self {
            HostTensor::F32(_) => DType::Float32,
            HostTensor::I64(_) => DType::Int64,
            HostTensor::Bool(_) => DType::Bool,
        }
    }

    /// The values as f64, in row-major order (for summaries and comparisons).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        match self {
            HostTensor::F32(t) | HostTensor::Bool(t) => t.iter().map(|&v| v as f64).collect(),
            HostTensor::I64(t) => t.iter().map(|&v| v as f64).collect(),
        }
    }
}

#[derive(Clone, Debug)]
pub enum RValue {
    F32(Arc<Tensor>),
    I64(Arc<IndexTensor>),
    Bool(Arc<Tensor>),
    Int(i64),
    Float(f64),
    PyBool(bool),
    None,
    Str(String),
    /// Tuples, lists and `torch.Size`.
    Seq(Vec<RValue>),
    Dtype(DType),
    Slice(Box<[RValue; 3]>),
    Ellipsis,
    Device(String),
}

impl RValue {
    pub fn f32(t: Tensor) -> RValue {
        RValue::F32(Arc::new(t))
    }

    pub fn from_host(t: HostTensor) -> RValue {
        match t {
            HostTensor::F32(t) => RValue::F32(Arc::new(t)),
            HostTensor::I64(t) => RValue::I64(Arc::new(t)),
            HostTensor::Bool(t) => RValue::Bool(Arc::new(t)),
        }
    }

    pub fn to_host(&self) -> Option<HostTensor> {
        Some(match self {
            RValue::F32(t) => HostTensor::F32((**t).clone()),
            RValue::I64(t) => HostTensor::I64((**t).clone()),
            RValue::Bool(t) => HostTensor::Bool((**t).clone()),
            _ => return None,
        })
    }

    pub fn is_tensor(&self) -> bool {
        matches!(self, RValue::F32(_) | RValue::I64(_) | RValue::Bool(_))
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            RValue::F32(_) => "float32 tensor",
            RValue::I64(_) => "int64 tensor",
            RValue::Bool(_) => "bool tensor",
            RValue::Int(_) => "int",
            RValue::Float(_) => "float",
            RValue::PyBool(_) => "bool",
            RValue::None => "None",
            RValue::Str(_) => "str",
            RValue::Seq(_) => "tuple",
            RValue::Dtype(_) => "dtype",
            RValue::Slice(_) => "slice",
            RValue::Ellipsis => "Ellipsis",
            RValue::Device(_) => "device",
        }
    }

    pub fn shape(&self) -> Option<Vec<usize>> {
        match self {
            RValue::F32(t) | RValue::Bool(t) => Some(t.shape().to_vec()),
            RValue::I64(t) => Some(t.shape().to_vec()),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            RValue::Int(i) => Some(*i),
            RValue::PyBool(b) => Some(*b as i64),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            RValue::Int(i) => Some(*i as f64),
            RValue::Float(x) => Some(*x),
            RValue::PyBool(b) => Some(*b as i64 as f64),
            _ => None,
        }
    }

    /// An int list from an int, a tuple/list of ints, or a Size.
    pub fn as_int_list(&self) -> Option<Vec<i64>> {
        match self {
            RValue::Seq(v) => v.iter().map(RValue::as_int).collect(),
            v => v.as_int().map(|i| vec![i]),
        }
    }

    /// Short description for error messages.
    pub fn describe(&self) -> String {
        match self.shape() {
            Some(s) if std::env::var_os("STATICFX_EXEC_TRACE").is_some() => {
                let v = self.to_host().map(|h| h.to_f64_vec()).unwrap_or_default();
                format!(
                    "{} of shape {:?} {:?}",
                    self.type_name(),
                    s,
                    &v[..v.len().min(4)]
                )
            }
            Some(s) => format!("{} of shape {:?}", self.type_name(), s),
            None => match self {
                RValue::Int(i) => format!("int {i}"),
                RValue::Float(x) => format!("float {x}"),
                RValue::Seq(v) => format!(
                    "({})",
                    v.iter()
                        .map(RValue::describe)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                other => other.type_name().to_string(),
            },
        }
    }
}
