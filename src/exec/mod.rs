//! The bundled CPU executor: runs a traced graph ([`crate::traced::GraphResult`]) on
//! sample inputs with real or default-initialised weights.
//!
//! - [`weights`]: safetensors in and out, checking against the module tree, default init;
//! - [`interpreter`]: node-by-node evaluation;
//! - [`ops`] / [`modules`]: the dispatch table by target and by leaf class;
//! - [`fused`]: the pass pipeline's `staticfx.fused.*` targets (`staticfx run` optimizes for
//!   inference first unless `--no-optimize`);
//! - [`kernels`]: the ndarray kernels.
//!
//! `interpreter::Program` walks the graph, dropping each value after its last use; `ops` dispatches
//! by `OpKey::key`, `modules` by leaf class, `fused` the `staticfx.fused.*` targets; `weights`
//! reads/writes safetensors; matrix products go through `kernels::linear::gemm_into` (the `gemm`
//! crate); 3×3 stride-1 convolutions with a folded batch norm run Winograd's F(2×2, 3×3) on kernels
//! transformed once per program (`kernels/conv/winograd.rs`). Errors are values, never panics.

pub mod call;
pub mod fused;
pub mod interpreter;
pub mod kernels;
pub mod modules;
pub mod ops;
pub mod value;
pub mod weights;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ndarray::{ArrayD, IxDyn};

use crate::graph::Op;
use crate::shapes::{concrete, DType, Meta};
use crate::traced::{GraphResult, HyperValue, InputSpec};
pub use interpreter::{ExecError, Program};
use kernels::init::Rng;
pub use value::{HostTensor, RValue};

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub weights: Option<PathBuf>,
    /// A safetensors file of inputs keyed by forward parameter name.
    pub inputs_file: Option<PathBuf>,
    /// Random inputs of these shapes (placeholders without a spec use their traced shape).
    pub inputs: Vec<InputSpec>,
    pub seed: u64,
    pub repeat: usize,
}

/// One output tensor with its statistics.
#[derive(Clone, Debug)]
pub struct OutputStats {
    pub name: String,
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub min: f64,
    pub mean: f64,
    pub max: f64,
    pub first: Vec<f64>,
}

#[derive(Debug)]
pub struct RunResult {
    /// `output`, or `output.0`, `output.1`, … for tuples (nested: `output.0.1`).
    pub outputs: Vec<(String, HostTensor)>,
    /// Python values in the output (an int read off a shape, `None`), described.
    pub other: Vec<(String, String)>,
    pub stats: Vec<OutputStats>,
    /// Mean wall time of one forward over the timed runs.
    pub per_run: Duration,
    pub runs: usize,
    /// Whether parameters came from a file (`false`: seeded default init).
    pub loaded_weights: bool,
}

/// Parameters for a graph: from a safetensors file (checked against the module tree) or
/// initialised from `seed` like PyTorch's defaults.
pub fn prepare_params(
    result: &GraphResult,
    weights_path: Option<&std::path::Path>,
    seed: u64,
) -> Result<HashMap<String, RValue>, ExecError> {
    let expected = weights::expected(&result.modules);
    let host = match weights_path {
        Some(p) => {
            let loaded = weights::read_safetensors(p)?;
            weights::check(&expected, loaded, &p.display().to_string())?
        }
        None => weights::initialise(&result.modules, &expected, seed)?,
    };
    Ok(host
        .into_iter()
        .map(|(k, v)| (k, RValue::from_host(v)))
        .collect())
}

/// Smallest `num_embeddings` of the model's Embedding modules: random integer inputs stay
/// below it, so they are valid token ids.
fn int_input_bound(result: &GraphResult) -> i64 {
    result
        .modules
        .iter()
        .filter(|m| m.class == "Embedding")
        .filter_map(|m| {
            m.hyper
                .iter()
                .find(|(k, _)| k == "num_embeddings")
                .and_then(|(_, v)| match v {
                    HyperValue::Int(i) => Some(*i),
                    _ => None,
                })
        })
        .min()
        .unwrap_or(10)
        .max(1)
}

/// Inputs for every placeholder without a default: from `opts.inputs_file`, or random from
/// the seed (N(0, 1) floats, uniform ints below the smallest embedding table).
pub fn prepare_inputs(
    result: &GraphResult,
    opts: &RunOptions,
) -> Result<HashMap<String, RValue>, ExecError> {
    let placeholders: Vec<_> = result
        .graph
        .nodes()
        .filter(|(_, n)| n.op == Op::Placeholder)
        .map(|(_, n)| n)
        .collect();
    let mut out = HashMap::new();
    if let Some(p) = &opts.inputs_file {
        let loaded = weights::read_safetensors(p)?;
        let names: Vec<&str> = placeholders.iter().map(|n| n.target.as_str()).collect();
        let unknown: Vec<&str> = loaded
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| !names.contains(k))
            .collect();
        if !unknown.is_empty() {
            return Err(ExecError::Input(format!(
                "{} has tensors that are not inputs of forward ({}): {}",
                p.display(),
                names.join(", "),
                unknown.join(", ")
            )));
        }
        for (k, v) in loaded {
            out.insert(k, RValue::from_host(v));
        }
    }
    let mut rng = Rng::new(opts.seed ^ 0x9e37_79b9_7f4a_7c15);
    let high = int_input_bound(result);
    for n in &placeholders {
        if out.contains_key(&n.target) {
            continue;
        }
        // A placeholder with a value (a default, or a Python value the user gave) is no
        // tensor input: the graph hands that value over.
        if !n.args.is_empty() {
            continue;
        }
        // The shape shorthand of `--input`, else the traced shape (a tensor a Python input
        // expression made, `torch.randn(2, 8)`, is random data of its shape like any other).
        let spec = opts
            .inputs
            .iter()
            .find(|s| s.name == n.target)
            .and_then(|s| s.tensor.as_ref());
        let (shape, dtype) = match (spec, &n.meta) {
            (Some(s), _) => (Some(s.shape.clone()), s.dtype),
            (None, Meta::Tensor(t)) => (t.shape.as_ref().and_then(concrete), t.dtype),
            _ => (None, DType::Float32),
        };
        let Some(shape) = shape else {
            return Err(ExecError::Input(format!(
                "the shape of input `{}` is unknown: pass --input {}=SHAPE or --inputs FILE",
                n.target, n.target
            )));
        };
        let shape: Vec<usize> = shape
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                ExecError::Input(format!("negative dimension in the shape of `{}`", n.target))
            })?;
        // the executor holds no complex numbers
        if dtype.is_complex() {
            return Err(ExecError::Input(format!(
                "`{}` is {}, which the executor does not run",
                n.target,
                dtype.as_str()
            )));
        }
        let v = if dtype.is_floating() {
            RValue::f32(kernels::init::normal(&shape, 0.0, 1.0, &mut rng))
        } else if dtype == DType::Bool {
            RValue::Bool(std::sync::Arc::new(ArrayD::from_shape_fn(
                IxDyn(&shape),
                |_| (rng.next_u64() & 1) as f32,
            )))
        } else {
            RValue::I64(std::sync::Arc::new(ArrayD::from_shape_fn(
                IxDyn(&shape),
                |_| (rng.next_u64() % high as u64) as i64,
            )))
        };
        out.insert(n.target.clone(), v);
    }
    Ok(out)
}

/// Names and tensors of an output value: `output` or `output.0`, `output.1`, ….
pub fn flatten_output(v: &RValue) -> (Vec<(String, HostTensor)>, Vec<(String, String)>) {
    fn walk(
        v: &RValue,
        name: String,
        t: &mut Vec<(String, HostTensor)>,
        o: &mut Vec<(String, String)>,
    ) {
        match v {
            RValue::Seq(items) => {
                for (i, x) in items.iter().enumerate() {
                    walk(x, format!("{name}.{i}"), t, o);
                }
            }
            v => match v.to_host() {
                Some(h) => t.push((name, h)),
                None => o.push((name, v.describe())),
            },
        }
    }
    let (mut t, mut o) = (Vec::new(), Vec::new());
    walk(v, "output".into(), &mut t, &mut o);
    (t, o)
}

pub fn stats(name: &str, t: &HostTensor) -> OutputStats {
    let v = t.to_f64_vec();
    let (mut min, mut max, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
    for &x in &v {
        min = min.min(x);
        max = max.max(x);
        sum += x;
    }
    let n = v.len();
    OutputStats {
        name: name.to_string(),
        shape: t.shape().to_vec(),
        dtype: t.dtype(),
        min: if n == 0 { f64::NAN } else { min },
        mean: if n == 0 { f64::NAN } else { sum / n as f64 },
        max: if n == 0 { f64::NAN } else { max },
        first: v.iter().take(5).copied().collect(),
    }
}

/// Prepares weights and inputs, runs the graph once untimed (warm-up), then
/// `max(repeat, 1)` timed runs; `per_run` is their mean.
pub fn run_graph(result: &GraphResult, opts: &RunOptions) -> Result<RunResult, ExecError> {
    let params = prepare_params(result, opts.weights.as_deref(), opts.seed)?;
    let inputs = prepare_inputs(result, opts)?;
    let program = Program::new(result, params)?;
    let repeat = opts.repeat.max(1);
    let mut out = program.run(&inputs)?;
    let start = Instant::now();
    for _ in 0..repeat {
        out = program.run(&inputs)?;
    }
    let per_run = start.elapsed() / repeat as u32;
    let (outputs, other) = flatten_output(&out);
    let stats = outputs.iter().map(|(n, t)| stats(n, t)).collect();
    Ok(RunResult {
        outputs,
        other,
        stats,
        per_run,
        runs: repeat,
        loaded_weights: opts.weights.is_some(),
    })
}

fn fmt_num(x: f64) -> String {
    if x == 0.0 || (1e-3..1e5).contains(&x.abs()) {
        format!("{x:.6}")
    } else {
        format!("{x:.4e}")
    }
}

/// The summary `staticfx run` prints and the LSP command returns.
pub fn summary(graph: &GraphResult, r: &RunResult) -> String {
    let which = match &graph.passes {
        Some(_) => format!("optimized graph, {} nodes", graph.graph.len()),
        None => format!("traced graph, {} nodes", graph.graph.len()),
    };
    let mut s = format!(
        "{}: {} output tensor(s), {} ({which}), {:.3} ms per run over {} run(s)\n",
        graph.name,
        r.outputs.len(),
        if r.loaded_weights {
            "weights from file"
        } else {
            "seeded default init"
        },
        r.per_run.as_secs_f64() * 1e3,
        r.runs
    );
    for st in &r.stats {
        s.push_str(&format!(
            "  {}: shape {:?} {}  min {}  mean {}  max {}  first [{}]\n",
            st.name,
            st.shape,
            st.dtype.as_str(),
            fmt_num(st.min),
            fmt_num(st.mean),
            fmt_num(st.max),
            st.first
                .iter()
                .map(|&x| fmt_num(x))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for (n, d) in &r.other {
        s.push_str(&format!("  {n}: {d}\n"));
    }
    s
}
