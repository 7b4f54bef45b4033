//! Test support: PyTorch reference fixtures and a tolerance check.
//!
//! Fixtures are written by `scripts/kernels/gen_kernel_refs.py`. Inputs are
//! f32 values stored exactly; expected outputs were computed by PyTorch in
//! float64 from those inputs, so the comparison measures this crate's f32
//! error rather than the sum of two f32 errors.

use ndarray::{ArrayD, IxDyn};
use serde_json::Value;

use super::Tensor;

pub(crate) fn t(shape: &[usize], data: &[f32]) -> Tensor {
    ArrayD::from_shape_vec(IxDyn(shape), data.to_vec()).expect("test tensor shape")
}

/// Tensor of the given shape holding 0, 1, 2, ... in row-major order.
pub(crate) fn arange(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    t(shape, &(0..n).map(|v| v as f32).collect::<Vec<_>>())
}

pub(crate) struct Fixture {
    cases: Vec<Value>,
}

pub(crate) struct Case<'a> {
    pub name: String,
    v: &'a Value,
}

impl Fixture {
    pub fn load(text: &str) -> Fixture {
        let v: Value = serde_json::from_str(text).expect("fixture is JSON");
        let cases = v["cases"].as_array().expect("fixture has cases").clone();
        Fixture { cases }
    }

    pub fn case(&self, name: &str) -> Case<'_> {
        self.cases
            .iter()
            .find(|c| c["name"] == name)
            .map(|v| Case {
                name: name.to_string(),
                v,
            })
            .unwrap_or_else(|| panic!("fixture has no case {name}"))
    }

    pub fn cases_with_prefix(&self, prefix: &str) -> Vec<Case<'_>> {
        let out: Vec<_> = self
            .cases
            .iter()
            .filter(|c| c["name"].as_str().is_some_and(|n| n.starts_with(prefix)))
            .map(|v| Case {
                name: v["name"].as_str().unwrap_or_default().to_string(),
                v,
            })
            .collect();
        assert!(
            !out.is_empty(),
            "fixture has no cases starting with {prefix}"
        );
        out
    }
}

fn shape_of(v: &Value) -> Vec<usize> {
    v["shape"]
        .as_array()
        .expect("tensor has shape")
        .iter()
        .map(|d| d.as_u64().expect("dim") as usize)
        .collect()
}

fn number(d: &Value) -> f64 {
    match d {
        Value::Number(n) => n.as_f64().expect("number"),
        // JSON has no NaN/Infinity, so the generator spells them as strings.
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("bad number {other}"),
        },
        other => panic!("bad number {other}"),
    }
}

fn f64_tensor(v: &Value) -> ArrayD<f64> {
    let data: Vec<f64> = v["data"]
        .as_array()
        .expect("tensor has data")
        .iter()
        .map(number)
        .collect();
    ArrayD::from_shape_vec(IxDyn(&shape_of(v)), data).expect("fixture tensor shape")
}

impl Case<'_> {
    pub fn input(&self, key: &str) -> Tensor {
        let v = &self.v["inputs"][key];
        assert!(!v.is_null(), "{}: no input {key}", self.name);
        f64_tensor(v).mapv(|x| x as f32)
    }

    pub fn has_input(&self, key: &str) -> bool {
        !self.v["inputs"][key].is_null()
    }

    pub fn input_opt(&self, key: &str) -> Option<Tensor> {
        self.has_input(key).then(|| self.input(key))
    }

    pub fn input_i64(&self, key: &str) -> ArrayD<i64> {
        let v = &self.v["inputs"][key];
        let data: Vec<i64> = v["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|d| d.as_i64().expect("int"))
            .collect();
        ArrayD::from_shape_vec(IxDyn(&shape_of(v)), data).expect("fixture tensor shape")
    }

    pub fn expected(&self) -> ArrayD<f64> {
        f64_tensor(&self.v["expected"])
    }

    pub fn expected_i64(&self) -> ArrayD<i64> {
        let v = &self.v["expected"];
        let data: Vec<i64> = v["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|d| d.as_i64().expect("int"))
            .collect();
        ArrayD::from_shape_vec(IxDyn(&shape_of(v)), data).expect("fixture tensor shape")
    }

    /// For ops with several outputs (split, chunk).
    pub fn expected_list(&self) -> Vec<ArrayD<f64>> {
        self.v["expected_list"]
            .as_array()
            .expect("expected_list")
            .iter()
            .map(f64_tensor)
            .collect()
    }

    pub fn param(&self, key: &str) -> &Value {
        let p = &self.v["params"][key];
        assert!(!p.is_null(), "{}: no param {key}", self.name);
        p
    }

    pub fn param_opt(&self, key: &str) -> Option<&Value> {
        let p = &self.v["params"][key];
        (!p.is_null()).then_some(p)
    }

    pub fn usize(&self, key: &str) -> usize {
        self.param(key).as_u64().expect("usize param") as usize
    }

    pub fn isize(&self, key: &str) -> isize {
        self.param(key).as_i64().expect("int param") as isize
    }

    pub fn f32(&self, key: &str) -> f32 {
        number(self.param(key)) as f32
    }

    pub fn bool(&self, key: &str) -> bool {
        self.param(key).as_bool().expect("bool param")
    }

    pub fn usizes(&self, key: &str) -> Vec<usize> {
        self.param(key)
            .as_array()
            .expect("list")
            .iter()
            .map(|d| d.as_u64().expect("usize") as usize)
            .collect()
    }

    pub fn isizes(&self, key: &str) -> Vec<isize> {
        self.param(key)
            .as_array()
            .expect("list")
            .iter()
            .map(|d| d.as_i64().expect("int") as isize)
            .collect()
    }

    pub fn pair(&self, key: &str) -> [usize; 2] {
        let v = self.usizes(key);
        assert_eq!(v.len(), 2, "{}: {key} is not a pair", self.name);
        [v[0], v[1]]
    }
}

/// Largest elementwise relative error of `actual` against `expected`, where
/// each element's error is divided by `max(|expected|, floor)`.
pub(crate) fn max_rel_error(actual: &Tensor, expected: &ArrayD<f64>, floor: f64) -> f64 {
    let floor = floor.max(f64::from(f32::MIN_POSITIVE));
    let mut worst = 0.0f64;
    for (&a, &e) in actual.iter().zip(expected.iter()) {
        let a = a as f64;
        if e.is_nan() || a.is_nan() {
            if e.is_nan() != a.is_nan() {
                return f64::INFINITY;
            }
            continue;
        }
        if e.is_infinite() || a.is_infinite() {
            if a != e {
                return f64::INFINITY;
            }
            continue;
        }
        // Equal to the reference rounded to f32 is as exact as f32 gets.
        if a == (e as f32) as f64 {
            continue;
        }
        worst = worst.max((a - e).abs() / e.abs().max(floor));
    }
    worst
}

/// With `KERNELS_REPORT_ERRORS` set, prints every comparison's error so the
/// margins under the tolerance can be reviewed (`-- --nocapture`).
fn report(name: &str, err: f64, actual: &Tensor, expected: &ArrayD<f64>) {
    if std::env::var_os("KERNELS_REPORT_ERRORS").is_some() {
        let plain = max_rel_error(actual, expected, 0.0);
        eprintln!("{name}: {err:.3e} (plain relative error {plain:.3e})");
    }
}

fn peak(expected: &ArrayD<f64>) -> f64 {
    expected
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()))
}

/// Tolerance check for kernels that accumulate (matmul, conv, norms, pools,
/// reductions, softmax).
///
/// Relative error per element, except that elements smaller than 1% of the
/// tensor's largest magnitude are measured against that 1%: such outputs
/// are small only because large terms cancelled, and their f32 error is set
/// by the size of the terms, not of the result. Where a result is all
/// cancellation, no f32 kernel (PyTorch's included) gets it to 1e-5 relative.
#[track_caller]
pub(crate) fn assert_close(name: &str, actual: &Tensor, expected: &ArrayD<f64>, tol: f64) {
    assert_eq!(actual.shape(), expected.shape(), "{name}: shape");
    let err = max_rel_error(actual, expected, 1e-2 * peak(expected));
    report(name, err, actual, expected);
    assert!(
        err <= tol,
        "{name}: max relative error {err:e} exceeds {tol:e}"
    );
}

/// Tolerance check for pointwise maps, where every output is one rounding
/// (or one libm call) away from exact: plain relative error everywhere.
#[track_caller]
pub(crate) fn assert_close_pointwise(
    name: &str,
    actual: &Tensor,
    expected: &ArrayD<f64>,
    tol: f64,
) {
    if let Err(msg) = check_pointwise(name, actual, expected, tol) {
        panic!("{msg}");
    }
}

/// [`assert_close_pointwise`] as a value, for tests that gather every
/// failing case before reporting.
pub(crate) fn check_pointwise(
    name: &str,
    actual: &Tensor,
    expected: &ArrayD<f64>,
    tol: f64,
) -> Result<(), String> {
    if actual.shape() != expected.shape() {
        return Err(format!(
            "{name}: shape {:?} vs {:?}",
            actual.shape(),
            expected.shape()
        ));
    }
    let err = max_rel_error(actual, expected, 0.0);
    report(name, err, actual, expected);
    if err <= tol {
        Ok(())
    } else {
        Err(format!(
            "{name}: max relative error {err:e} exceeds {tol:e}"
        ))
    }
}

#[track_caller]
pub(crate) fn assert_close_f32(name: &str, actual: &Tensor, expected: &Tensor, tol: f64) {
    assert_close(name, actual, &expected.mapv(|v| v as f64), tol)
}
