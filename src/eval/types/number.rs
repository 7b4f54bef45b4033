//! `int`, `float` and `bool`.

use crate::eval::call::as_f64;
use crate::eval::value::Value;

/// `x.name()` on an int or a float.
pub(in crate::eval) fn call_method(x: &Value, name: &str) -> Value {
    match name {
        "is_integer" => as_f64(x)
            .map(|f| Value::Bool(f.fract() == 0.0))
            .unwrap_or_else(|| Value::unknown("is_integer")),
        _ => Value::unknown(format!("number.{name}")),
    }
}
