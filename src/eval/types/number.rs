//! `int`, `float` and `bool`.

use crate::diagnostics::codes;
use crate::eval::call::{as_f64, as_int};
use crate::eval::value::Value;
use crate::eval::{EResult, Frame, Interp};
use crate::shapes::{Meta, Scalar};
use crate::syntax::Span;

/// `x.name()` on an int or a float.
pub(in crate::eval) fn call_method(x: &Value, name: &str) -> Value {
    match name {
        "is_integer" => as_f64(x)
            .map(|f| Value::Bool(f.fract() == 0.0))
            .unwrap_or_else(|| Value::unknown("is_integer")),
        _ => Value::unknown(format!("number.{name}")),
    }
}

/// `a OP b` where `OP` is bitwise (on bools, else on ints) or both operands are numbers;
/// None otherwise.
pub(in crate::eval) fn binary_op(
    interp: &mut Interp,
    frame: &Frame,
    sym: &str,
    name: &str,
    a: &Value,
    b: &Value,
    span: Span,
) -> Option<EResult<Value>> {
    use Value::{Bool, Float, Int};
    Some(Ok(match (name, a, b) {
        ("and_" | "or_" | "xor", Bool(x), Bool(y)) => Bool(match name {
            "and_" => x & y,
            "or_" => x | y,
            _ => x ^ y,
        }),
        ("and_" | "or_" | "xor" | "lshift" | "rshift", _, _) => match (as_int(a), as_int(b)) {
            (Some(x), Some(y)) => Int(match name {
                "and_" => x & y,
                "or_" => x | y,
                "xor" => x ^ y,
                "lshift" => x.checked_shl(y as u32).unwrap_or(0),
                _ => x.checked_shr(y as u32).unwrap_or(0),
            }),
            _ => Value::unknown("bitwise operation"),
        },
        _ => {
            let (x, y) = (num(a)?, num(b)?);
            let origin = crate::shapes::ScalarOrigin::Const;
            match crate::shapes::rules::scalar_binary(name, &x, &y, origin) {
                Meta::Scalar(Scalar::Int(Some(i)), _) => Int(i),
                Meta::Scalar(Scalar::Float(Some(f)), _) => Float(f),
                Meta::Scalar(Scalar::Bool(Some(v)), _) => Bool(v),
                _ => {
                    if matches!(name, "truediv" | "floordiv" | "mod") && as_f64(b) == Some(0.0) {
                        return Some(Err(interp.error(
                            frame,
                            span,
                            codes::RAISED,
                            "ZeroDivisionError: division by zero",
                        )));
                    }
                    Value::unknown(format!("`{sym}` on these values"))
                }
            }
        }
    }))
}

/// A number as the shape rules take it (a bool counts as an int).
fn num(v: &Value) -> Option<Scalar> {
    match v {
        Value::Int(i) => Some(Scalar::Int(Some(*i))),
        Value::Float(f) => Some(Scalar::Float(Some(*f))),
        Value::Bool(b) => Some(Scalar::Int(Some(*b as i64))),
        _ => None,
    }
}

/// `repr(f)`: the shortest digits that read back as `f` (Rust finds the same ones), in
/// fixed notation for decimal exponents -4..16 and `1.5e+16` style outside it.
pub(in crate::eval) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("an integer exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        let body = if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        };
        format!("{sign}{body}")
    } else {
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{esign}{:02}", exp.abs())
    }
}
