//! The inputs a user gives forward (`--input`, example-inputs: `traced::InputSpec`), bound to
//! forward's parameters as a caller's arguments would be.
//!
//! - Which reading a VALUE that reads two ways (`steps=5`: a 1-D tensor of 5 elements, or the
//!   int 5) gives a parameter: the Python value when the parameter is annotated as one (`int`,
//!   `float`, `bool`, `str`, a fixed tuple of them, any of them `| None`) or defaults to a
//!   Python number, bool or str; the tensor otherwise, as before `--input` read Python.
//! - A Python expression is evaluated outside the trace (so `torch.randn(2, 8)` records no
//!   node) in the namespace of forward's module, once per trace: forward may change a list it
//!   is given, and each trace starts from the value the user wrote.
//! - Each tensor the expression makes is an input: a placeholder of its shape and dtype, never
//!   a constant. A top-level tensor is the parameter's own placeholder (`x=torch.randn(2, 4)`
//!   traces as `x=2x4` does); tensors nested in tuples, lists and dicts are `NAME_1`,
//!   `NAME_2`, ..., numbered over the structure's leaves in order, as torch.fx numbers the
//!   placeholders of a `concrete_args` structure (None is no leaf there).
//! - A value without tensors keeps its parameter's placeholder with the value as the default,
//!   as a defaulted parameter does (`tests/fx_fidelity.rs` holds that convention to
//!   torch.fx), and reaches forward as the Python value: `if return_dict:` is decided at
//!   trace time, `range(steps)` unrolls.

use std::cell::RefCell;
use std::rc::Rc;

use super::root::annotation_meta;
use super::value_meta;
use crate::diagnostics::codes;
use crate::eval::value::Value;
use crate::eval::{EvalError, Interp};
use crate::graph::Arg;
use crate::semantic::FileId;
use crate::shapes::{shape_of, Meta};
use crate::syntax::Span;
use crate::traced::InputSpec;

/// The Python expression `spec` gives a parameter of this annotation and default, when the
/// parameter takes the Python reading of its VALUE.
pub(crate) fn python_reading<'a>(
    spec: &'a InputSpec,
    annotation: Option<&str>,
    default: Option<&Value>,
) -> Option<&'a str> {
    let text = spec.python.as_deref()?;
    if spec.tensor.is_none() || takes_python(annotation, default) {
        Some(text)
    } else {
        None
    }
}

/// The tensor the shape shorthand of `spec` gives, when it is the reading the parameter takes.
pub(crate) fn tensor_reading(
    spec: &InputSpec,
    annotation: Option<&str>,
    default: Option<&Value>,
) -> Option<Meta> {
    if python_reading(spec, annotation, default).is_some() {
        return None;
    }
    let t = spec.tensor.as_ref()?;
    Some(Meta::tensor(Some(shape_of(&t.shape)), t.dtype))
}

/// Whether a parameter of this annotation and default is one a caller passes a Python value:
/// the rule that settles a VALUE that reads both as a shape and as Python.
fn takes_python(annotation: Option<&str>, default: Option<&Value>) -> bool {
    let annotated = annotation.is_some_and(|a| annotation_meta(a).is_some() || names_str(a));
    let defaulted = matches!(
        default,
        Some(Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_))
    );
    annotated || defaulted
}

/// `str`, `str | None`, `Optional[str]`.
fn names_str(annotation: &str) -> bool {
    let a = annotation
        .trim()
        .trim_matches(|c| c == '"' || c == '\'')
        .trim();
    let a = a
        .strip_suffix("| None")
        .or_else(|| a.strip_suffix("|None"))
        .or_else(|| {
            a.strip_prefix("Optional[")
                .or_else(|| a.strip_prefix("typing.Optional["))
                .and_then(|r| r.strip_suffix(']'))
        })
        .unwrap_or(a);
    a.trim() == "str"
}

/// The value forward is called with for the parameter `name`, from the Python expression
/// `text`: evaluated in the module `namespace` (the one defining forward's signature, not a
/// decorator's wrapper) outside the trace, its tensors made placeholders at `span` of `file`
/// (forward's definition). An expression that fails, or whose value the evaluator does not
/// know, is an error naming the argument there: never a silent constant.
pub(crate) fn bind_python(
    interp: &mut Interp,
    name: &str,
    text: &str,
    namespace: FileId,
    (file, span): (FileId, Span),
) -> Result<Value, EvalError> {
    let error = |why: String| EvalError {
        code: codes::ENTRY,
        message: format!("input `{name}`: `{text}` {why}"),
        file,
        span,
        exception: None,
    };
    // Outside the trace: a tensor factory makes a tensor constant, not a node.
    let tracer = interp.tracer.take();
    let noted = interp.diagnostics.len();
    let value = interp.eval_in_module(namespace, &format!("(\n{text}\n)"));
    interp.diagnostics.truncate(noted);
    interp.tracer = tracer;
    let value = value.map_err(|e| error(format!("cannot be evaluated: {}", e.message)))?;
    if let Some(why) = unknown_within(&value) {
        return Err(error(format!(
            "has a value the analyser does not know: {why}"
        )));
    }
    let tracer = interp.tracer.as_mut().expect("tracing");
    if !holds_tensor(&value) {
        tracer.placeholder(
            name,
            Some(python_arg(&value)),
            value_meta(&value),
            file,
            span,
        );
        return Ok(value);
    }
    let mut leaves = 0;
    Ok(with_placeholders(
        tracer,
        name,
        &value,
        true,
        &mut leaves,
        file,
        span,
    ))
}

/// The reason of the first unknown value within `v` (items of tuples, lists and dicts).
fn unknown_within(v: &Value) -> Option<String> {
    match v {
        Value::Unknown(u) => Some(u.reason.clone()),
        Value::Tuple(items) => items.iter().find_map(unknown_within),
        Value::List(items) => items.borrow().iter().find_map(unknown_within),
        Value::Dict(pairs) => pairs
            .borrow()
            .iter()
            .find_map(|(k, v)| unknown_within(k).or_else(|| unknown_within(v))),
        _ => None,
    }
}

fn holds_tensor(v: &Value) -> bool {
    match v {
        Value::TensorConst(_) => true,
        Value::Tuple(items) => items.iter().any(holds_tensor),
        Value::List(items) => items.borrow().iter().any(holds_tensor),
        Value::Dict(pairs) => pairs.borrow().iter().any(|(_, v)| holds_tensor(v)),
        _ => false,
    }
}

/// `v` rebuilt with each tensor a placeholder: `name` at the top, `name_K` for the K-th leaf
/// of a structure.
fn with_placeholders(
    tracer: &mut super::Tracer,
    name: &str,
    v: &Value,
    top: bool,
    leaves: &mut usize,
    file: FileId,
    span: Span,
) -> Value {
    let mut each = |item: &Value, leaves: &mut usize| {
        with_placeholders(tracer, name, item, false, leaves, file, span)
    };
    match v {
        Value::None => Value::None,
        Value::Tuple(items) => Value::tuple(items.iter().map(|i| each(i, leaves)).collect()),
        Value::List(items) => {
            let items = items.borrow().clone();
            Value::list(items.iter().map(|i| each(i, leaves)).collect())
        }
        Value::Dict(pairs) => {
            let pairs = pairs.borrow().clone();
            let pairs = pairs
                .iter()
                .map(|(k, v)| (k.clone(), each(v, leaves)))
                .collect();
            Value::Dict(Rc::new(RefCell::new(pairs)))
        }
        Value::TensorConst(t) => {
            *leaves += 1;
            let placeholder = if top {
                name.to_string()
            } else {
                format!("{name}_{leaves}")
            };
            let meta = Meta::tensor(t.shape.as_deref().map(shape_of), t.dtype);
            Value::Proxy(tracer.placeholder(&placeholder, None, meta, file, span))
        }
        other => {
            *leaves += 1;
            other.clone()
        }
    }
}

/// A Python value as a placeholder's default: the executor hands it back if asked, and the
/// graph shows it.
fn python_arg(v: &Value) -> Arg {
    match v {
        Value::None => Arg::None,
        Value::Bool(b) => Arg::Bool(*b),
        Value::Int(i) => Arg::Int(*i),
        Value::Float(x) => Arg::Float(*x),
        Value::Str(s) => Arg::Str(s.to_string()),
        Value::Tuple(items) => Arg::Tuple(items.iter().map(python_arg).collect()),
        Value::List(items) => Arg::List(items.borrow().iter().map(python_arg).collect()),
        Value::Dtype(d) => Arg::Dtype(d.as_str().to_string()),
        other => Arg::Repr(format!("{other:?}")),
    }
}
