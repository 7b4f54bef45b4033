//! Argument access for op implementations: torch's positional-or-keyword binding, with
//! conversions that explain what they expected.

use std::sync::Arc;

use super::kernels::{IndexTensor, Tensor};
use super::value::RValue;

pub type OpResult = Result<RValue, String>;

/// The evaluated arguments of one node. For methods, `args[0]` is the receiver, so a
/// method and the torch function of the same name share one implementation.
pub struct Call {
    pub args: Vec<RValue>,
    pub kwargs: Vec<(String, RValue)>,
}

impl Call {
    /// Argument `i` (positional) or `name` (keyword), bound as Python binds it
    /// (`catalog::bind`); `None` when absent or given both ways.
    pub fn get(&self, i: usize, name: &str) -> Option<&RValue> {
        self.bound(i, name).ok().flatten()
    }

    /// Like [`get`](Self::get), but a Python `None` counts as absent.
    pub fn opt(&self, i: usize, name: &str) -> Option<&RValue> {
        match self.get(i, name) {
            Some(RValue::None) | None => None,
            v => v,
        }
    }

    /// The argument, or an error when it is given both by position and by keyword.
    fn bound(&self, i: usize, name: &str) -> Result<Option<&RValue>, String> {
        crate::catalog::bind::bind(&self.args, &self.kwargs, i, name)
    }

    /// Like [`opt`](Self::opt), but an argument given twice is an error.
    fn checked_opt(&self, i: usize, name: &str) -> Result<Option<&RValue>, String> {
        Ok(self.bound(i, name)?.filter(|v| !matches!(v, RValue::None)))
    }

    pub fn req(&self, i: usize, name: &str) -> Result<&RValue, String> {
        self.bound(i, name)?
            .ok_or_else(|| format!("missing argument `{name}` (position {i})"))
    }

    pub fn tensor(&self, i: usize, name: &str) -> Result<&Arc<Tensor>, String> {
        match self.req(i, name)? {
            RValue::F32(t) | RValue::Bool(t) => Ok(t),
            other => Err(format!(
                "argument `{name}` should be a float tensor, got {}",
                other.describe()
            )),
        }
    }

    pub fn opt_tensor(&self, i: usize, name: &str) -> Result<Option<&Arc<Tensor>>, String> {
        match self.checked_opt(i, name)? {
            None => Ok(None),
            Some(RValue::F32(t)) | Some(RValue::Bool(t)) => Ok(Some(t)),
            Some(other) => Err(format!(
                "argument `{name}` should be a float tensor, got {}",
                other.describe()
            )),
        }
    }

    pub fn index_tensor(&self, i: usize, name: &str) -> Result<&Arc<IndexTensor>, String> {
        match self.req(i, name)? {
            RValue::I64(t) => Ok(t),
            other => Err(format!(
                "argument `{name}` should be an int64 tensor, got {}",
                other.describe()
            )),
        }
    }

    pub fn int(&self, i: usize, name: &str, default: i64) -> Result<i64, String> {
        match self.checked_opt(i, name)? {
            None => Ok(default),
            Some(v) => v
                .as_int()
                .ok_or_else(|| format!("argument `{name}` should be an int, got {}", v.describe())),
        }
    }

    pub fn req_int(&self, i: usize, name: &str) -> Result<i64, String> {
        let v = self.req(i, name)?;
        v.as_int()
            .ok_or_else(|| format!("argument `{name}` should be an int, got {}", v.describe()))
    }

    pub fn opt_int(&self, i: usize, name: &str) -> Result<Option<i64>, String> {
        match self.checked_opt(i, name)? {
            None => Ok(None),
            Some(v) => v
                .as_int()
                .map(Some)
                .ok_or_else(|| format!("argument `{name}` should be an int, got {}", v.describe())),
        }
    }

    pub fn float(&self, i: usize, name: &str, default: f64) -> Result<f64, String> {
        match self.checked_opt(i, name)? {
            None => Ok(default),
            Some(v) => v.as_f64().ok_or_else(|| {
                format!("argument `{name}` should be a number, got {}", v.describe())
            }),
        }
    }

    pub fn opt_float(&self, i: usize, name: &str) -> Result<Option<f64>, String> {
        match self.checked_opt(i, name)? {
            None => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| {
                format!("argument `{name}` should be a number, got {}", v.describe())
            }),
        }
    }

    pub fn bool(&self, i: usize, name: &str, default: bool) -> Result<bool, String> {
        match self.checked_opt(i, name)? {
            None => Ok(default),
            Some(RValue::PyBool(b)) => Ok(*b),
            Some(RValue::Int(v)) => Ok(*v != 0),
            Some(v) => Err(format!(
                "argument `{name}` should be a bool, got {}",
                v.describe()
            )),
        }
    }

    pub fn str(&self, i: usize, name: &str) -> Result<Option<&str>, String> {
        match self.checked_opt(i, name)? {
            None => Ok(None),
            Some(RValue::Str(s)) => Ok(Some(s)),
            Some(v) => Err(format!(
                "argument `{name}` should be a string, got {}",
                v.describe()
            )),
        }
    }

    pub fn ints(&self, i: usize, name: &str) -> Result<Option<Vec<i64>>, String> {
        match self.checked_opt(i, name)? {
            None => Ok(None),
            Some(v) => v.as_int_list().map(Some).ok_or_else(|| {
                format!(
                    "argument `{name}` should be an int or a tuple of ints, got {}",
                    v.describe()
                )
            }),
        }
    }

    /// `x.view(2, 3)` and `x.view((2, 3))` alike: the ints from position `from` on, or the
    /// keyword `name`.
    pub fn var_ints(&self, from: usize, name: &str) -> Result<Vec<i64>, String> {
        if self.args.len() == from + 1 {
            if let RValue::Seq(_) = &self.args[from] {
                return self.args[from].as_int_list().ok_or_else(|| {
                    format!(
                        "`{name}` should be ints, got {}",
                        self.args[from].describe()
                    )
                });
            }
        }
        if self.args.len() > from {
            return self.args[from..]
                .iter()
                .map(|v| {
                    v.as_int()
                        .ok_or_else(|| format!("`{name}` should be ints, got {}", v.describe()))
                })
                .collect();
        }
        self.ints(usize::MAX, name)?
            .ok_or_else(|| format!("missing argument `{name}`"))
    }

    /// Dimensions for a reduction: absent → `[]` (all), an int or a tuple.
    pub fn dims(&self, i: usize, name: &str) -> Result<Option<Vec<isize>>, String> {
        Ok(self
            .ints(i, name)?
            .map(|v| v.into_iter().map(|d| d as isize).collect()))
    }
}

pub fn usize_of(v: i64, what: &str) -> Result<usize, String> {
    usize::try_from(v).map_err(|_| format!("`{what}` must not be negative, got {v}"))
}

/// An int or a pair of ints as a pair.
pub fn pair(v: &[i64], what: &str) -> Result<[usize; 2], String> {
    match v {
        [a] => Ok([usize_of(*a, what)?, usize_of(*a, what)?]),
        [a, b] => Ok([usize_of(*a, what)?, usize_of(*b, what)?]),
        _ => Err(format!("`{what}` should have 1 or 2 entries, got {v:?}")),
    }
}

pub fn single(v: &[i64], what: &str) -> Result<usize, String> {
    match v {
        [a] => usize_of(*a, what),
        _ => Err(format!("`{what}` should have 1 entry, got {v:?}")),
    }
}
