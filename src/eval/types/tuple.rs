//! `tuple`: an immutable sequence (its operators are with `list`'s, in `list::binary_op`).

use crate::eval::value::Value;

/// `t.index(x)` / `t.count(x)`, tuple's methods.
pub(in crate::eval) fn call_method(t: &[Value], name: &str, args: &[Value]) -> Value {
    match name {
        "index" => t
            .iter()
            .position(|v| v.py_eq(args.first().unwrap_or(&Value::None)) == Some(true))
            .map(|i| Value::Int(i as i64))
            .unwrap_or_else(|| Value::unknown("index")),
        "count" => Value::Int(
            t.iter()
                .filter(|v| v.py_eq(args.first().unwrap_or(&Value::None)) == Some(true))
                .count() as i64,
        ),
        _ => Value::unknown(format!("tuple.{name}")),
    }
}
