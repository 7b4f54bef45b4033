//! `torch.finfo(dtype)` and `torch.iinfo(dtype)`: the limits of a dtype, which masking code
//! reads (`torch.finfo(x.dtype).min`). A traced tensor's dtype is known, so the limits are
//! constants, as they are when Dynamo traces the call.

use std::rc::Rc;

use super::super::value::{ObjKind, Object, Value};
use super::super::Interp;
use crate::shapes::{DType, Meta};

/// `(bits, eps, max, tiny, resolution)` of a floating dtype, as torch 2.15 reports them; `min`
/// is `-max`.
fn float_limits(d: DType) -> Option<(i64, f64, f64, f64, f64)> {
    Some(match d {
        DType::Float32 => (
            32,
            1.1920928955078125e-07,
            3.4028234663852886e+38,
            1.1754943508222875e-38,
            1e-06,
        ),
        DType::Float64 => (
            64,
            2.220446049250313e-16,
            1.7976931348623157e+308,
            2.2250738585072014e-308,
            1e-15,
        ),
        DType::Float16 => (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001),
        DType::Bfloat16 => (
            16,
            0.0078125,
            3.3895313892515355e+38,
            1.1754943508222875e-38,
            0.01,
        ),
        _ => return None,
    })
}

/// `(bits, min, max)` of an integer dtype.
fn int_limits(d: DType) -> Option<(i64, i64, i64)> {
    Some(match d {
        DType::Int64 => (64, i64::MIN, i64::MAX),
        DType::Int32 => (32, i32::MIN.into(), i32::MAX.into()),
        DType::Int16 => (16, i16::MIN.into(), i16::MAX.into()),
        DType::Int8 => (8, i8::MIN.into(), i8::MAX.into()),
        DType::Uint8 => (8, 0, 255),
        _ => return None,
    })
}

impl Interp {
    /// `torch.finfo(dtype)` / `torch.iinfo(dtype)` (`short` is `finfo` or `iinfo`) as an object
    /// with the limits as attributes, or `None` when the dtype is not known or has no such
    /// limits (torch raises then).
    pub(in crate::eval) fn type_info(&mut self, short: &str, arg: Option<&Value>) -> Option<Value> {
        let dtype = match arg {
            // `torch.finfo()` is the default dtype's.
            None | Some(Value::None) if short == "finfo" => DType::Float32,
            Some(Value::Dtype(d)) => *d,
            Some(Value::Proxy(n)) => match self.tracer.as_ref()?.meta(*n) {
                Meta::Dtype(d) => *d,
                _ => return None,
            },
            _ => return None,
        };
        let attrs: Vec<(&str, Value)> = if short == "finfo" {
            let (bits, eps, max, tiny, resolution) = float_limits(dtype)?;
            vec![
                ("bits", Value::Int(bits)),
                ("eps", Value::Float(eps)),
                ("max", Value::Float(max)),
                ("min", Value::Float(-max)),
                ("tiny", Value::Float(tiny)),
                ("smallest_normal", Value::Float(tiny)),
                ("resolution", Value::Float(resolution)),
            ]
        } else {
            let (bits, min, max) = int_limits(dtype)?;
            vec![
                ("bits", Value::Int(bits)),
                ("min", Value::Int(min)),
                ("max", Value::Int(max)),
            ]
        };
        let info = Object {
            id: self.new_object_id(),
            class: Value::External(Rc::from(format!("torch.{short}").as_str())),
            kind: ObjKind::Plain,
            attrs: Default::default(),
            base: None,
        };
        {
            let mut map = info.attrs.borrow_mut();
            for (k, v) in attrs {
                map.insert(k.to_string(), v);
            }
            // `finfo.dtype` is the dtype's name, a string.
            map.insert("dtype".into(), Value::str(dtype.as_str()));
        }
        Some(Value::Object(Rc::new(info)))
    }
}
