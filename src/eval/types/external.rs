//! External values called: functions named by a path outside the project (torch functions,
//! `torch.utils.checkpoint`, the Dynamo and scripting predicates, and the few standard-library
//! helpers model code relies on: `functools.partial`, `copy`, `math`, `time`, `logging`).
//! torch.nn classes are constructed in `objects.rs`.

use crate::eval::types::proxy;
use std::mem::take;
use std::rc::Rc;

use crate::diagnostics::codes;
use crate::eval::call::{as_f64, as_int, has_proxy, Kwargs};
use crate::eval::value::Value;
use crate::eval::{EResult, Frame, Interp};
use crate::syntax::Span;
use crate::traced::{EventKind, COPY_OF_TENSOR, COPY_OF_VALUE};

/// A call of an external name (`path` canonical), for the helpers that each know one family
/// of externals and answer `None` for a path outside it (taking `args` and `kwargs` only when
/// they answer).
pub(in crate::eval) struct ExternalCall<'f> {
    pub(in crate::eval) frame: &'f Frame,
    /// The canonical path (`torch.functional.split` is `torch.split`).
    pub(in crate::eval) path: &'f str,
    /// Its last component.
    pub(in crate::eval) short: &'f str,
    /// The first argument, `None` when there is none.
    pub(in crate::eval) a0: Value,
    pub(in crate::eval) args: Vec<Value>,
    pub(in crate::eval) kwargs: Kwargs,
    pub(in crate::eval) span: Span,
}

impl<'f> ExternalCall<'f> {
    pub(in crate::eval) fn new(
        frame: &'f Frame,
        path: &'f str,
        args: Vec<Value>,
        kwargs: Kwargs,
        span: Span,
    ) -> Self {
        ExternalCall {
            frame,
            path,
            short: path.rsplit('.').next().unwrap_or(path),
            a0: args.first().cloned().unwrap_or(Value::None),
            args,
            kwargs,
            span,
        }
    }

    /// Records an event of the trace at the call, when tracing.
    fn event(&self, interp: &mut Interp, kind: EventKind, detail: String) {
        if let Some(t) = interp.tracer.as_mut() {
            t.event(kind, self.frame.file_id, self.span, detail);
        }
    }
}

/// The condition of `torch._check_tensor_all(cond, msg)` or
/// `torch._check_tensor_all_with(error_type, cond, msg)`.
fn tensor_check_condition<'c>(c: &'c ExternalCall) -> Option<&'c Value> {
    let position = match c.path {
        "torch._check_tensor_all" => 0,
        "torch._check_tensor_all_with" => 1,
        _ => return None,
    };
    c.args
        .get(position)
        .or_else(|| c.kwargs.iter().find(|(k, _)| *k == "cond").map(|(_, v)| v))
}

/// torch.nn.utils functions that reparametrize a module's weight in place and return the
/// module: its forward takes and returns what it did, so its call is followed as before.
const REPARAMETRIZE_IN_PLACE: &[&str] = &[
    "torch.nn.utils.weight_norm",
    "torch.nn.utils.spectral_norm",
    "torch.nn.utils.weight_norm.weight_norm",
    "torch.nn.utils.spectral_norm.spectral_norm",
    "torch.nn.utils.parametrizations.weight_norm",
    "torch.nn.utils.parametrizations.spectral_norm",
    "torch.nn.utils.parametrizations.orthogonal",
];

impl Interp {
    /// A call of an external function; torch.nn classes are not among them.
    pub(in crate::eval) fn call_external_function(
        &mut self,
        mut c: ExternalCall,
    ) -> EResult<Value> {
        let (frame, path, span) = (c.frame, c.path, c.span);
        if let Some(r) = self.call_stdlib(frame, path, &c.args, &c.kwargs, span) {
            return r;
        }
        // The families are asked in this order because a guarded path (allow_in_graph, a custom
        // op) may also be one an earlier family knows: the earlier family answers it.
        if let Some(r) = self.python_helper(&mut c) {
            return r;
        }
        if let Some(v) = self.tracing_state(path) {
            return Ok(v);
        }
        if let Some(r) = self.torch_wrapper(&mut c) {
            return r;
        }
        if let Some(r) = self.math_time_or_break(&mut c) {
            return r;
        }
        if path.starts_with("logging.") {
            return Ok(self.logging_call(&c));
        }
        if path == "torch.nn.init._calculate_fan_in_and_fan_out" {
            return self.fan_in_and_fan_out(&c);
        }
        if path.starts_with("torch.nn.init.") {
            return Ok(c.a0);
        }
        if REPARAMETRIZE_IN_PLACE.contains(&path) {
            // `weight_norm(conv)` changes how the module computes its weight, not its shapes or
            // its forward's signature, and returns the module it was given.
            return Ok(match c.kwargs.iter().find(|(k, _)| k == "module") {
                Some((_, m)) if c.args.is_empty() => m.clone(),
                _ => c.a0,
            });
        }
        let proxied = c.args.iter().any(has_proxy) || c.kwargs.iter().any(|(_, v)| has_proxy(v));
        if path.starts_with("torch.") || path == "torch" {
            return self.torch_function(c);
        }
        if proxy::reports_numpy_calls(self) && !proxied && path.starts_with("numpy.") {
            // Dynamo sends every numpy call in traced code through torch._numpy, constant
            // arguments or not.
            c.event(self, EventKind::NumpyCall, path.to_string());
        }
        if let Some(v) = numpy_scalar_fn(path, &c.args, &c.kwargs) {
            return Ok(v);
        }
        if proxy::records_call(self, &c.args, &c.kwargs) {
            // A function the analyser cannot see into, called on traced values.
            c.event(self, EventKind::ExternalCall, path.to_string());
            return self.trace_function(frame, path, c.args, c.kwargs, span);
        }
        Ok(Value::result_of(path))
    }

    /// `functools.partial`, `OrderedDict`, `copy`, `typing.cast`.
    fn python_helper(&mut self, c: &mut ExternalCall) -> Option<EResult<Value>> {
        let (frame, span, short) = (c.frame, c.span, c.short);
        Some(match c.path {
            "functools.partial" => Ok(self.make_partial(take(&mut c.args), take(&mut c.kwargs))),
            "collections.OrderedDict" | "typing.OrderedDict" => self.call_value(
                frame,
                &Value::Builtin(Rc::from("dict")),
                take(&mut c.args),
                take(&mut c.kwargs),
                span,
            ),
            "copy.deepcopy" | "copy.copy" => {
                // Dynamo 2.15 refuses to deepcopy a tensor (GB4198), 2.8 any value (GB0179)
                if short == "deepcopy" {
                    let what = if has_proxy(&c.a0) { "tensor" } else { "value" };
                    c.event(self, EventKind::Deepcopy, what.to_string());
                }
                if short == "copy" {
                    let detail = shallow_copy_detail(&c.a0);
                    c.event(self, EventKind::SkippedCall, detail.to_string());
                }
                if has_proxy(&c.a0) {
                    return Some(Ok(c.a0.clone()));
                }
                self.copy_value(frame, &c.a0, short == "deepcopy", span)
            }
            "typing.cast" | "torch.jit.annotate" => {
                Ok(c.args.get(1).cloned().unwrap_or(Value::None))
            }
            _ => return None,
        })
    }

    /// The predicates on the tracing state, as the graph's tracer answers them.
    fn tracing_state(&self, path: &str) -> Option<Value> {
        Some(match path {
            // Dynamo folds these to constants (`tracing_state_functions` in
            // torch/_dynamo/variables/torch.py): the `is_compiling` family to True while it
            // traces, the scripting and tracing predicates to False, `is_exporting` to whether
            // torch.export runs. The graph is what torch.compile captures, so forward takes the
            // compiling side; torch.fx's symbolic_trace takes the other one (is_compiling False,
            // is_fx_tracing True). Constructors run eagerly, outside Dynamo.
            "torch.compiler.is_compiling"
            | "torch._dynamo.is_compiling"
            | "torch.compiler.is_dynamo_compiling"
            | "torch._dynamo.external_utils.is_compiling"
            | "torch._utils.is_compiling" => Value::Bool(proxy::is_compiling(self)),
            "torch.jit.is_scripting"
            | "torch.jit.is_tracing"
            | "torch._C._is_tracing"
            | "torch.cuda.is_current_stream_capturing"
            | "torch.xpu.is_current_stream_capturing"
            // The graph is the one PyTorch runs on the CPU: no accelerator is present.
            | "torch.xpu.is_available"
            | "torch.backends.mps.is_available"
            | "torch.fx._symbolic_trace.is_fx_tracing"
            | "torch.fx._symbolic_trace.is_fx_symbolic_tracing"
            | "torch.compiler.is_exporting"
            | "torch.onnx.is_in_onnx_export"
            | "torch.is_grad_enabled" => Value::Bool(false),
            "torch._C._get_tracing_state" => Value::None,
            _ => return None,
        })
    }

    /// Functions that wrap others: `allow_in_graph`, custom ops and their fakes, checkpoints.
    fn torch_wrapper(&mut self, c: &mut ExternalCall) -> Option<EResult<Value>> {
        let (frame, span) = (c.frame, c.span);
        Some(match c.path {
            p if crate::eval::trace::is_allow_in_graph(p) => Ok(self.allow_in_graph(&c.a0)),
            "torch.library.register_fake" | "torch.library.impl_abstract" => {
                Ok(self.register_fake(&c.args))
            }
            p if proxy::records_custom_ops(self) && self.custom_op_fake(p).is_some() => {
                let fake = self.custom_op_fake(p).expect("checked");
                let (args, kwargs) = (take(&mut c.args), take(&mut c.kwargs));
                self.call_custom_op(frame, p, &fake, args, kwargs, span)
            }
            // Dynamo captures a checkpointed call as the higher-order op
            // `tag_activation_checkpoint` over a subgraph of the function; torch.fx, which never
            // sees the wrapper, records the function's own nodes in place. The graph shows
            // torch.fx's form: the same computation, node for node, with shapes.
            "torch.utils.checkpoint.checkpoint" => {
                let rest: Vec<Value> = c.args.iter().skip(1).cloned().collect();
                let forwarded = c
                    .kwargs
                    .iter()
                    .filter(|(k, _)| !CHECKPOINT_OPTIONS.contains(&k.as_str()))
                    .cloned()
                    .collect();
                self.call_value(frame, &c.a0, rest, forwarded, span)
            }
            // `checkpoint_sequential(functions, segments, input)` runs the functions in order.
            "torch.utils.checkpoint.checkpoint_sequential" => {
                let mut h = c.args.get(2).cloned().unwrap_or(Value::None);
                let functions = match self.iterate(frame, &c.a0, span) {
                    Ok(f) => f,
                    Err(e) => return Some(Err(e)),
                };
                for f in functions {
                    h = match self.call_value(frame, &f, vec![h], vec![], span) {
                        Ok(h) => h,
                        Err(e) => return Some(Err(e)),
                    };
                }
                Ok(h)
            }
            _ => return None,
        })
    }

    /// `math` functions, `torch.finfo`/`iinfo`, `warnings.warn`, the clocks and
    /// `torch._dynamo.graph_break`.
    fn math_time_or_break(&mut self, c: &mut ExternalCall) -> Option<EResult<Value>> {
        let short = c.short;
        if let Some(cond) = tensor_check_condition(c) {
            // `torch._check_tensor_all(cond)` asks whether every element of a traced tensor is
            // true, a Python bool of its data: Dynamo stops there as at `.item()` (in
            // transformers, behind `torch_compilable_check`)
            if has_proxy(cond) {
                c.event(self, EventKind::Convert, c.path.to_string());
            }
            return None;
        }
        Some(match c.path {
            "math.sqrt" | "math.log" | "math.exp" | "math.ceil" | "math.floor" | "math.log2"
            | "math.log10" | "math.cos" | "math.sin" | "math.tanh" | "math.fabs" | "math.pow"
            | "math.gcd" | "math.prod" | "math.isqrt" | "math.trunc" => {
                if has_proxy(&c.a0) {
                    c.event(self, EventKind::Convert, short.to_string());
                    let (args, kwargs) = (take(&mut c.args), take(&mut c.kwargs));
                    return Some(self.trace_function(c.frame, c.path, args, kwargs, c.span));
                }
                if short == "prod" {
                    // `start` is keyword-only
                    let start = c.kwargs.iter().find(|(k, _)| *k == "start");
                    let mut args = c.args.clone();
                    args.extend(start.map(|(_, v)| v.clone()));
                    return Some(Ok(math_prod(&args)));
                }
                Ok(math_fn(short, &c.args))
            }
            "torch.finfo" | "torch.iinfo" => Ok(self.type_info(short, c.args.first())?),
            "warnings.warn" | "torch._assert_async" => Ok(Value::None),
            "time.time"
            | "time.perf_counter"
            | "time.monotonic"
            | "time.process_time"
            | "time.time_ns"
            | "time.perf_counter_ns" => {
                c.event(self, EventKind::Time, short.to_string());
                Ok(Value::unknown("current time"))
            }
            "torch._dynamo.graph_break" => {
                c.event(self, EventKind::GraphBreak, String::new());
                Ok(Value::None)
            }
            _ => return None,
        })
    }

    /// `logging.getLogger()`, and what loggers do: nothing the graph sees.
    fn logging_call(&mut self, c: &ExternalCall) -> Value {
        if !matches!(c.short, "getLogger" | "basicConfig") {
            // The full path tells a root-logger call (`logging.info`) from a logger
            // method (`logging.Logger.info`): Dynamo breaks differently on them.
            c.event(self, EventKind::Log, c.path.to_string());
        }
        if c.short == "getLogger" {
            return Value::External(Rc::from("logging.Logger"));
        }
        Value::unknown("logger")
    }

    /// `torch.nn.init._calculate_fan_in_and_fan_out(t)`.
    fn fan_in_and_fan_out(&mut self, c: &ExternalCall) -> EResult<Value> {
        // Initialisers compute their bounds from these; the values never reach the graph,
        // but a tuple must come back for the caller to unpack.
        let shape = match &c.a0 {
            Value::Param(p) => p.shape.clone(),
            Value::TensorConst(t) => t.shape.clone(),
            _ => None,
        };
        Ok(match shape {
            Some(s) if s.len() >= 2 => {
                let receptive: i64 = s[2..].iter().product();
                Value::tuple(vec![Value::Int(s[1] * receptive), Value::Int(s[0] * receptive)])
            }
            Some(_) => {
                return Err(self.error(
                    c.frame,
                    c.span,
                    codes::RAISED,
                    "ValueError: Fan in and fan out can not be computed for tensor with fewer than 2 dimensions",
                ))
            }
            None => Value::tuple(vec![
                Value::unknown("fan_in of a tensor of unknown shape"),
                Value::unknown("fan_out of a tensor of unknown shape"),
            ]),
        })
    }

    /// Other `torch.*` functions: traced on traced values, evaluated on constants.
    fn torch_function(&mut self, c: ExternalCall) -> EResult<Value> {
        let ExternalCall {
            frame,
            path,
            short,
            mut args,
            mut kwargs,
            span,
            ..
        } = c;
        if proxy::records_call(self, &args, &kwargs) && path == "torch.split" {
            // `torch.functional.split` re-dispatches as `split(tensor, size, dim=dim)`,
            // which is what torch.fx records.
            let dim = if args.len() > 2 {
                args.remove(2)
            } else {
                match kwargs.iter().position(|(k, _)| k == "dim") {
                    Some(i) => kwargs.remove(i).1,
                    None => Value::Int(0),
                }
            };
            kwargs.push(("dim".into(), dim));
            return self.trace_function(frame, path, args, kwargs, span);
        }
        if proxy::records_call(self, &args, &kwargs) {
            return self.trace_function(frame, path, args, kwargs, span);
        }
        if proxy::skips_asserts(self) && path == "torch._assert" {
            return Ok(Value::None);
        }
        if let Some(v) = self.torch_on_constants(short, &args, &kwargs) {
            return Ok(v);
        }
        if let Some(v) = self.tensor_factory(short, &args, &kwargs) {
            return Ok(v);
        }
        if args
            .iter()
            .any(crate::eval::stdlib::tensor_const::holds_constant)
        {
            return Ok(crate::eval::stdlib::tensor_const::shaped(
                short, &args, &kwargs,
            ));
        }
        Ok(Value::result_of(path))
    }
}

/// Keywords `torch.utils.checkpoint.checkpoint` takes for itself; the others go to the function.
const CHECKPOINT_OPTIONS: &[&str] = &[
    "use_reentrant",
    "context_fn",
    "determinism_check",
    "debug",
    "preserve_rng_state",
    "early_stop",
];

/// `math.prod(iterable, start=1)` over a tuple or list of numbers: an int when every factor
/// is one, else a float.
fn math_prod(args: &[Value]) -> Value {
    let items = match args.first() {
        Some(Value::Tuple(t)) => t.to_vec(),
        Some(Value::List(l)) => l.borrow().clone(),
        _ => return Value::unknown("math.prod"),
    };
    let start = args.get(1).cloned().unwrap_or(Value::Int(1));
    let mut acc = start;
    for v in items {
        acc = match (&acc, &v) {
            (Value::Int(a), Value::Int(b)) => match a.checked_mul(*b) {
                Some(p) => Value::Int(p),
                None => return Value::unknown("math.prod"),
            },
            (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
                match (as_f64(&acc), as_f64(&v)) {
                    (Some(a), Some(b)) => Value::Float(a * b),
                    _ => return Value::unknown("math.prod"),
                }
            }
            _ => return Value::unknown("math.prod"),
        };
    }
    acc
}

/// A numpy ufunc that returns a float on one Python number (`np.log(1 / 0.07)`, open_clip's
/// default logit scale): its `np.float64` result is a subclass of `float` with the value
/// `math`'s function gives, except that numpy answers a domain error with nan or -inf (and a
/// warning) where `math` raises, as `f64` does. Anything else (an array, a list, `out=`, a
/// function that keeps an int's type) is not one.
fn numpy_scalar_fn(path: &str, args: &[Value], kwargs: &Kwargs) -> Option<Value> {
    let name = path.strip_prefix("numpy.")?;
    let [x] = args else {
        return None;
    };
    if !kwargs.is_empty() || as_f64(x).is_none() {
        return None;
    }
    let x = as_f64(x)?;
    Some(Value::Float(match name {
        "sqrt" => x.sqrt(),
        "log" => x.ln(),
        "log2" => x.log2(),
        "log10" => x.log10(),
        "log1p" => x.ln_1p(),
        "exp" => x.exp(),
        "expm1" => x.exp_m1(),
        "cos" => x.cos(),
        "sin" => x.sin(),
        "tan" => x.tan(),
        "tanh" => x.tanh(),
        _ => return None,
    }))
}

/// `math.<name>(x[, y])` on constant numbers.
fn math_fn(name: &str, args: &[Value]) -> Value {
    let x = args.first().and_then(as_f64);
    let y = args.get(1).and_then(as_f64);
    let Some(x) = x else {
        return Value::unknown(format!("math.{name}"));
    };
    match name {
        "sqrt" => Value::Float(x.sqrt()),
        "log" => Value::Float(match y {
            Some(b) => x.ln() / b.ln(),
            None => x.ln(),
        }),
        "log2" => Value::Float(x.log2()),
        "log10" => Value::Float(x.log10()),
        "exp" => Value::Float(x.exp()),
        "cos" => Value::Float(x.cos()),
        "sin" => Value::Float(x.sin()),
        "tanh" => Value::Float(x.tanh()),
        "fabs" => Value::Float(x.abs()),
        "pow" => Value::Float(x.powf(y.unwrap_or(1.0))),
        "ceil" => Value::Int(x.ceil() as i64),
        "floor" => Value::Int(x.floor() as i64),
        "trunc" => Value::Int(x.trunc() as i64),
        "isqrt" => Value::Int(x.sqrt().floor() as i64),
        "gcd" => match (args.first().and_then(as_int), args.get(1).and_then(as_int)) {
            (Some(mut a), Some(mut b)) => {
                while b != 0 {
                    (a, b) = (b, a % b);
                }
                Value::Int(a.abs())
            }
            _ => Value::unknown("gcd"),
        },
        _ => Value::unknown(format!("math.{name}")),
    }
}

/// The `SkippedCall` detail `copy.copy(v)` records, by what `v` is. CPython copies a builtin
/// container through its own `.copy` method, which Dynamo skips (torch 2.8 and 2.15 alike); a
/// tensor goes through `__reduce_ex__`, where 2.15 breaks on a torch function returning no
/// tensor; anything else (an int, a tuple, a config object) 2.15 traces. torch 2.8 skips
/// `copy.copy` whatever it copies. Measured with `torch._dynamo.explain` on both versions.
fn shallow_copy_detail(v: &Value) -> &'static str {
    match v {
        Value::List(_) | Value::Dict(_) | Value::InstanceDict(..) | Value::ModuleGlobals(_) => {
            "copy.copy"
        }
        Value::Proxy(_) | Value::Param(_) | Value::TensorConst(_) => COPY_OF_TENSOR,
        _ => COPY_OF_VALUE,
    }
}
