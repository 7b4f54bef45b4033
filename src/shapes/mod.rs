//! Stage 6: shape inference. Every node gets a `Meta`: a tensor's shape and dtype, or the
//! Python value torch.fx would compute at trace time (a `torch.Size`, an int read off a shape).
//! The tracer calls `rules::infer` as it records each node, so a shape-derived condition such as
//! `if x.size(-1) != d:` is decided the way Dynamo specialises it, not reported as a break.
//!
//! `Meta` = tensor shape/dtype or a Python scalar tagged with its origin; shape-derived conditions
//! are decided the way Dynamo specialises them, data-derived ones become graph-break regions;
//! `sym.rs` holds symbolic dims (`s0`, `s1//4`); `checks.rs` makes PyTorch's argument checks, and a
//! certain failure is a `ShapeError` on the node (the shape stays unknown), which
//! `breaks::shape_mismatch` reports as FX301.

pub mod checks;
pub mod layout;
pub mod rules;
pub mod sym;

pub use checks::{ShapeError, ShapeErrorKind};
pub use sym::Expr;

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    Float32,
    Float64,
    Float16,
    Bfloat16,
    Int64,
    Int32,
    Int16,
    Int8,
    Uint8,
    Bool,
    /// `torch.complex64` (`cfloat`): what `view_as_complex` makes of float32 pairs.
    Complex64,
    /// `torch.complex128` (`cdouble`).
    Complex128,
}

impl DType {
    pub fn as_str(self) -> &'static str {
        match self {
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Float16 => "float16",
            DType::Bfloat16 => "bfloat16",
            DType::Int64 => "int64",
            DType::Int32 => "int32",
            DType::Int16 => "int16",
            DType::Int8 => "int8",
            DType::Uint8 => "uint8",
            DType::Bool => "bool",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
        }
    }

    pub fn parse(s: &str) -> Option<DType> {
        let s = s.strip_prefix("torch.").unwrap_or(s);
        Some(match s {
            "float32" | "float" | "f32" => DType::Float32,
            "float64" | "double" | "f64" => DType::Float64,
            "float16" | "half" | "f16" => DType::Float16,
            "bfloat16" | "bf16" => DType::Bfloat16,
            "int64" | "long" | "i64" => DType::Int64,
            "int32" | "int" | "i32" => DType::Int32,
            "int16" | "short" | "i16" => DType::Int16,
            "int8" | "i8" => DType::Int8,
            "uint8" | "u8" => DType::Uint8,
            "bool" => DType::Bool,
            "complex64" | "cfloat" => DType::Complex64,
            "complex128" | "cdouble" => DType::Complex128,
            _ => return None,
        })
    }

    pub fn is_floating(self) -> bool {
        matches!(
            self,
            DType::Float32 | DType::Float64 | DType::Float16 | DType::Bfloat16
        )
    }

    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex64 | DType::Complex128)
    }

    /// Integers and bool: what true division, `exp` or a float scalar turns into float32.
    pub fn is_integral(self) -> bool {
        !self.is_floating() && !self.is_complex()
    }

    /// The complex dtype whose real and imaginary parts are `self` (`view_as_complex`,
    /// `torch.polar`); None where this enum has none (float16's `complex32`) or torch has none.
    pub fn to_complex(self) -> Option<DType> {
        match self {
            DType::Float32 => Some(DType::Complex64),
            DType::Float64 => Some(DType::Complex128),
            _ => None,
        }
    }

    /// The dtype of a complex dtype's parts (`view_as_real`, `.real`, `abs`).
    pub fn to_real(self) -> Option<DType> {
        match self {
            DType::Complex64 => Some(DType::Float32),
            DType::Complex128 => Some(DType::Float64),
            _ => None,
        }
    }

    /// Type promotion between two tensors (a simplified torch.result_type: complex wins, then
    /// floats, then width).
    pub fn promote(a: DType, b: DType) -> DType {
        // torch keeps the wider part: complex64 with float64 is complex128
        if a.is_complex() || b.is_complex() {
            let wide = |d: DType| matches!(d, DType::Complex128 | DType::Float64);
            return if wide(a) || wide(b) {
                DType::Complex128
            } else {
                DType::Complex64
            };
        }
        fn rank(d: DType) -> u8 {
            match d {
                DType::Bool => 0,
                DType::Uint8 => 1,
                DType::Int8 => 2,
                DType::Int16 => 3,
                DType::Int32 => 4,
                DType::Int64 => 5,
                DType::Float16 => 6,
                DType::Bfloat16 => 7,
                DType::Float32 => 8,
                DType::Float64 => 9,
                DType::Complex64 | DType::Complex128 => unreachable!("handled above"),
            }
        }
        if rank(a) >= rank(b) {
            a
        } else {
            b
        }
    }
}

/// One dimension of a shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dim {
    Known(i64),
    /// A size that depends on an input's unknown size (`s0`, `(s1 + 1)//2`).
    Sym(Expr),
    Unknown,
}

impl Dim {
    pub fn known(&self) -> Option<i64> {
        match self {
            Dim::Known(v) => Some(*v),
            _ => None,
        }
    }

    /// The dim as an expression (a constant for known dims).
    pub fn expr(&self) -> Option<Expr> {
        match self {
            Dim::Known(v) => Some(Expr::constant(*v)),
            Dim::Sym(e) => Some(e.clone()),
            Dim::Unknown => None,
        }
    }

    /// An expression as a dim: a plain number when it has no symbols left.
    pub fn from_expr(e: Expr) -> Dim {
        match e.as_const() {
            Some(v) => Dim::Known(v),
            None => Dim::Sym(e),
        }
    }

    /// Product of dims, symbolic when needed; None when one is unknown.
    pub fn product<'a>(dims: impl IntoIterator<Item = &'a Dim>) -> Option<Dim> {
        let mut acc = Expr::constant(1);
        for d in dims {
            acc = acc.mul(&d.expr()?);
        }
        Some(Dim::from_expr(acc))
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Known(v) => write!(f, "{v}"),
            Dim::Sym(e) => write!(f, "{e}"),
            Dim::Unknown => f.write_str("?"),
        }
    }
}

pub type Shape = Vec<Dim>;

pub fn shape_of(dims: &[i64]) -> Shape {
    dims.iter().map(|&d| Dim::Known(d)).collect()
}

pub fn concrete(shape: &Shape) -> Option<Vec<i64>> {
    shape.iter().map(Dim::known).collect()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TensorMeta {
    pub shape: Option<Shape>,
    pub dtype: DType,
}

/// Where a Python scalar came from: this decides whether branching on it breaks the graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScalarOrigin {
    /// A literal or constructor constant.
    Const,
    /// Read off a shape (`x.shape[0]`, `x.size(-1)`, `x.dim()`): Dynamo specialises on it.
    Shape,
    /// Read out of tensor data (`.item()`, a comparison of tensors): Dynamo cannot know it.
    Data,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Scalar {
    Int(Option<i64>),
    Float(Option<f64>),
    Bool(Option<bool>),
}

/// The abstract value of a node (or of a constant argument, when rules read their inputs).
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub enum Meta {
    #[default]
    Unknown,
    None,
    Tensor(TensorMeta),
    Scalar(Scalar, ScalarOrigin),
    /// A `torch.Size`.
    Size(Shape),
    Str(String),
    Dtype(DType),
    /// A `torch.device`, by its type (`cpu`).
    Device(String),
    Slice(Box<[Meta; 3]>),
    Ellipsis,
    Seq(Vec<Meta>),
}

impl Meta {
    pub fn tensor(shape: Option<Shape>, dtype: DType) -> Meta {
        Meta::Tensor(TensorMeta { shape, dtype })
    }

    pub fn int(v: i64) -> Meta {
        Meta::Scalar(Scalar::Int(Some(v)), ScalarOrigin::Const)
    }

    pub fn as_tensor(&self) -> Option<&TensorMeta> {
        match self {
            Meta::Tensor(t) => Some(t),
            _ => None,
        }
    }

    pub fn is_tensor(&self) -> bool {
        matches!(self, Meta::Tensor(_))
    }

    /// A concrete integer, from a constant or a known shape-derived scalar.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Meta::Scalar(Scalar::Int(v), _) => *v,
            Meta::Scalar(Scalar::Bool(Some(b)), _) => Some(*b as i64),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Meta::Scalar(Scalar::Int(Some(v)), _) => Some(*v as f64),
            Meta::Scalar(Scalar::Float(Some(v)), _) => Some(*v),
            Meta::Scalar(Scalar::Bool(Some(b)), _) => Some(*b as i64 as f64),
            _ => None,
        }
    }

    pub fn origin(&self) -> Option<ScalarOrigin> {
        match self {
            Meta::Scalar(_, o) => Some(*o),
            Meta::Size(_) => Some(ScalarOrigin::Shape),
            _ => None,
        }
    }

    /// A list of ints from an int, a sequence of ints, or a Size.
    pub fn as_int_list(&self) -> Option<Vec<i64>> {
        match self {
            Meta::Seq(v) => v.iter().map(Meta::as_int).collect(),
            Meta::Size(s) => concrete(s),
            m => m.as_int().map(|v| vec![v]),
        }
    }

    /// A list of dims (unknown allowed) from ints, Size, or sequences of scalars.
    pub fn as_dims(&self) -> Option<Shape> {
        match self {
            Meta::Seq(v) => v
                .iter()
                .map(|m| match m {
                    Meta::Scalar(Scalar::Int(Some(x)), _) => Some(Dim::Known(*x)),
                    Meta::Scalar(Scalar::Int(None), _) | Meta::Unknown => Some(Dim::Unknown),
                    _ => None,
                })
                .collect(),
            Meta::Size(s) => Some(s.clone()),
            Meta::Scalar(Scalar::Int(v), _) => {
                Some(vec![v.map(Dim::Known).unwrap_or(Dim::Unknown)])
            }
            _ => None,
        }
    }

    /// Short display: `[1, 64, 56, 56]` for tensors, the value for scalars.
    pub fn describe(&self) -> String {
        match self {
            Meta::Tensor(t) => match &t.shape {
                Some(s) => format!(
                    "[{}]",
                    s.iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => "[?]".into(),
            },
            Meta::Size(s) => format!(
                "torch.Size([{}])",
                s.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Meta::Scalar(Scalar::Int(Some(v)), _) => v.to_string(),
            Meta::Scalar(Scalar::Float(Some(v)), _) => v.to_string(),
            Meta::Scalar(Scalar::Bool(Some(v)), _) => {
                if *v {
                    "True".into()
                } else {
                    "False".into()
                }
            }
            Meta::Scalar(_, _) => "?".into(),
            Meta::Seq(v) => format!(
                "({})",
                v.iter().map(Meta::describe).collect::<Vec<_>>().join(", ")
            ),
            Meta::None => "None".into(),
            Meta::Str(s) => format!("{s:?}"),
            Meta::Dtype(d) => format!("torch.{}", d.as_str()),
            Meta::Device(d) => format!("device(type='{d}')"),
            Meta::Slice(_) => "slice".into(),
            Meta::Ellipsis => "...".into(),
            Meta::Unknown => "?".into(),
        }
    }
}
