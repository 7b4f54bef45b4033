//! Evaluates a traced graph node by node: placeholders from the inputs, `get_attr` from the
//! parameters, `call_module` through [`super::modules`], `call_function` / `call_method`
//! through the dispatch table in [`super::ops`]. Values are dropped after their last use.

use std::collections::HashMap;

use super::call::Call;
use super::fused;
use super::modules::{call_module, InOutWeights, ModCall};
use super::ops::table;
use super::value::RValue;
use crate::graph::{Arg, NodeId, Op, OpKey, Origin};
use crate::traced::{GraphResult, ModuleSummary};

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("{0}")]
    Graph(String),
    #[error("{0}")]
    Input(String),
    #[error(transparent)]
    Weights(#[from] super::weights::WeightsError),
    /// A node failed: an unsupported op, a shape mismatch, a failed assertion.
    #[error("node `{node}` ({op} {target}): {message}")]
    Node {
        node: String,
        op: &'static str,
        target: String,
        message: String,
        origin: Option<Origin>,
    },
}

impl ExecError {
    pub fn origin(&self) -> Option<&Origin> {
        match self {
            ExecError::Node { origin, .. } => origin.as_ref(),
            _ => None,
        }
    }
}

/// How a `call_*` node is run.
#[derive(Clone, Copy)]
enum Dispatch<'a> {
    /// Placeholders, attributes and the output, handled inline.
    Inline,
    Fused(fused::CtxOpFn),
    Op(super::ops::OpFn),
    Module(&'a ModuleSummary),
    /// No implementation: the node fails when it is reached, with this message.
    Missing,
}

/// A graph ready to run: node order, last uses, and parameters bound by name.
pub struct Program<'a> {
    result: &'a GraphResult,
    modules: HashMap<&'a str, &'a ModuleSummary>,
    params: HashMap<String, RValue>,
    /// For each position in the order, the nodes whose last use it is.
    frees: Vec<Vec<NodeId>>,
    /// For each position, how its node is run, resolved once here rather than by a string
    /// lookup on every run (small models spend a good part of a forward in dispatch).
    dispatch: Vec<Dispatch<'a>>,
    /// For each position, which top-level arguments may be moved out of the environment:
    /// their last use is here and they appear once among the node's inputs.
    moves: Vec<Vec<bool>>,
    /// Size of the environment: one slot per node index of the graph.
    slots: usize,
    folded: fused::FoldCache,
    in_out_weights: InOutWeights,
    /// Print time per op kind to stderr after each run (`STATICFX_EXEC_PROFILE=1`), and
    /// every node's time and output with `STATICFX_EXEC_PROFILE=nodes`.
    profile: bool,
    profile_nodes: bool,
    /// Print each node's value to stderr (`STATICFX_EXEC_TRACE=1`).
    trace: bool,
}

impl<'a> Program<'a> {
    pub fn new(
        result: &'a GraphResult,
        params: HashMap<String, RValue>,
    ) -> Result<Self, ExecError> {
        if let Some(e) = &result.error {
            return Err(ExecError::Graph(format!(
                "the graph of {} is incomplete (tracing stopped: {}); it cannot be run",
                result.name, e.message
            )));
        }
        if let Some(r) = result.regions.first() {
            return Err(ExecError::Graph(format!(
                "the graph of {} has {} data-dependent region(s) (graph breaks), the first a data-dependent `{}` on `{}`; the executor runs whole graphs only",
                result.name,
                result.regions.len(),
                r.kind,
                result.graph.node(r.cause).name
            )));
        }
        let graph = &result.graph;
        if !graph.nodes().any(|(_, n)| n.op == Op::Output) {
            return Err(ExecError::Graph(format!(
                "the graph of {} has no output",
                result.name
            )));
        }
        let mut last: HashMap<NodeId, usize> = HashMap::new();
        for (pos, (_, n)) in graph.nodes().enumerate() {
            let mut ins = Vec::new();
            n.args.iter().for_each(|a| a.nodes(&mut ins));
            n.kwargs.iter().for_each(|(_, a)| a.nodes(&mut ins));
            for i in ins {
                last.insert(i, pos);
            }
        }
        let mut frees = vec![Vec::new(); graph.len()];
        for (id, pos) in last {
            frees[pos].push(id);
        }
        let modules: HashMap<&'a str, &'a ModuleSummary> = result
            .modules
            .iter()
            .map(|m| (m.path.as_str(), m))
            .collect();
        let mut dispatch = Vec::with_capacity(graph.len());
        let mut moves = Vec::with_capacity(graph.len());
        let mut slots = 0;
        for (pos, (id, n)) in graph.nodes().enumerate() {
            slots = slots.max(id.index() + 1);
            dispatch.push(match n.op {
                Op::Placeholder | Op::GetAttr | Op::Output => Dispatch::Inline,
                Op::CallFunction | Op::CallMethod => {
                    let key = OpKey::of(n.op, &n.target).expect("a call").key();
                    if let Some(f) = fused::table_ctx().get(&*key) {
                        Dispatch::Fused(*f)
                    } else if let Some(f) = table().get(&*key) {
                        Dispatch::Op(*f)
                    } else {
                        Dispatch::Missing
                    }
                }
                Op::CallModule => match modules.get(n.target.as_str()) {
                    Some(m) => Dispatch::Module(m),
                    None => Dispatch::Missing,
                },
            });
            let mut uses = Vec::new();
            n.args.iter().for_each(|a| a.nodes(&mut uses));
            n.kwargs.iter().for_each(|(_, a)| a.nodes(&mut uses));
            moves.push(
                n.args
                    .iter()
                    .map(|a| match a {
                        Arg::Node(id) => {
                            frees[pos].contains(id) && uses.iter().filter(|u| *u == id).count() == 1
                        }
                        _ => false,
                    })
                    .collect(),
            );
        }
        for f in &frees {
            for id in f {
                slots = slots.max(id.index() + 1);
            }
        }
        Ok(Program {
            result,
            modules,
            params,
            frees,
            dispatch,
            moves,
            slots,
            folded: Default::default(),
            in_out_weights: Default::default(),
            profile: std::env::var_os("STATICFX_EXEC_PROFILE").is_some(),
            profile_nodes: std::env::var_os("STATICFX_EXEC_PROFILE").is_some_and(|v| v == "nodes"),
            trace: std::env::var_os("STATICFX_EXEC_TRACE").is_some(),
        })
    }

    pub fn params(&self) -> &HashMap<String, RValue> {
        &self.params
    }

    /// Runs the graph once. `inputs` are keyed by placeholder (forward parameter) name.
    ///
    /// The nodes run on a thread of rayon's pool: the kernels split their work there, and a
    /// caller outside the pool would hand each split to the pool's threads and sleep until
    /// they finish, two thread switches per node (ViT-tiny at 2 threads: 19.4 → 17.6 ms).
    pub fn run(&self, inputs: &HashMap<String, RValue>) -> Result<RValue, ExecError> {
        rayon::scope(|_| self.run_nodes(inputs))
    }

    fn run_nodes(&self, inputs: &HashMap<String, RValue>) -> Result<RValue, ExecError> {
        let graph = &self.result.graph;
        let mut env = Env(vec![None; self.slots]);
        let mut profile: Vec<(String, std::time::Duration)> = Vec::new();
        for (pos, (id, n)) in graph.nodes().enumerate() {
            let started = self.profile.then(std::time::Instant::now);
            let fail = |message: String| ExecError::Node {
                node: n.name.clone(),
                op: n.op.as_str(),
                target: n.target.clone(),
                message,
                origin: n.origin.clone(),
            };
            let value = match n.op {
                Op::Placeholder => match inputs.get(&n.target) {
                    Some(v) => v.clone(),
                    None => match n.args.first() {
                        // A Python value the graph shows only as text (a dict, an object): the
                        // trace specialised on it, so no node reads this placeholder.
                        Some(Arg::Repr(_)) => RValue::None,
                        Some(default) => self.arg(&env, default).map_err(fail)?,
                        None => {
                            return Err(ExecError::Input(format!(
                                "no value for the forward input `{}`",
                                n.target
                            )))
                        }
                    },
                },
                Op::GetAttr => {
                    self.params.get(&n.target).cloned().ok_or_else(|| {
                        fail(format!("no parameter or buffer named `{}`", n.target))
                    })?
                }
                Op::Output => {
                    let out = match n.args.first() {
                        Some(a) => self.arg(&env, a).map_err(fail)?,
                        None => RValue::None,
                    };
                    if self.profile {
                        print_profile(profile);
                    }
                    return Ok(out);
                }
                Op::CallFunction | Op::CallMethod | Op::CallModule => {
                    let mut call = self.call(&mut env, pos, &n.args, &n.kwargs).map_err(fail)?;
                    match self.dispatch[pos] {
                        Dispatch::Fused(f) => {
                            let ctx = fused::Ctx {
                                modules: &self.modules,
                                params: &self.params,
                                folded: &self.folded,
                                in_out_weights: &self.in_out_weights,
                            };
                            f(&ctx, &mut call).map_err(fail)?
                        }
                        Dispatch::Op(f) => f(&mut call).map_err(fail)?,
                        Dispatch::Module(m) => {
                            let mc = ModCall {
                                module: m,
                                params: &self.params,
                                in_out_weights: &self.in_out_weights,
                                args: call.args.into(),
                                kwargs: call.kwargs,
                            };
                            call_module(&m.class, &mc).map_err(fail)?
                        }
                        Dispatch::Missing if n.op == Op::CallModule => {
                            return Err(fail(format!(
                                "no module at `{}` in the module tree",
                                n.target
                            )))
                        }
                        Dispatch::Missing | Dispatch::Inline => {
                            return Err(fail(format!(
                                "the executor does not support `{}`",
                                if n.op == Op::CallMethod {
                                    format!("Tensor.{}", n.target)
                                } else {
                                    n.target.clone()
                                }
                            )))
                        }
                    }
                }
            };
            if let Some(t0) = started {
                let kind = match n.op {
                    Op::CallModule => self
                        .modules
                        .get(n.target.as_str())
                        .map_or("?".to_string(), |m| OpKey::Module(&m.class).key().into()),
                    op => OpKey::of(op, &n.target)
                        .map_or_else(|| n.target.clone(), |k| k.key().into()),
                };
                let elapsed = t0.elapsed();
                if self.profile_nodes {
                    eprintln!(
                        "{:>9.3} ms {} {kind} -> {}",
                        elapsed.as_secs_f64() * 1e3,
                        n.name,
                        value.describe()
                    );
                }
                profile.push((kind, elapsed));
            }
            if self.trace {
                eprintln!("{} = {}", n.name, value.describe());
            }
            env.insert(id, value);
            for dead in &self.frees[pos] {
                env.remove(*dead);
            }
        }
        Err(ExecError::Graph(
            "the graph ended without an output node".into(),
        ))
    }

    /// The node's arguments. A value whose last use this is, passed once as a top-level
    /// argument, is moved out of `env` rather than shared, so ops may reuse its buffer.
    fn call(
        &self,
        env: &mut Env,
        pos: usize,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Result<Call, String> {
        let moves = &self.moves[pos];
        let mut out_args = Vec::with_capacity(args.len());
        for (a, &moved) in args.iter().zip(moves) {
            match a {
                Arg::Node(id) if moved => {
                    out_args.push(env.remove(*id).ok_or_else(|| {
                        format!(
                            "internal: the value of `{}` is not available",
                            self.result.graph.node(*id).name
                        )
                    })?);
                }
                a => out_args.push(self.arg(env, a)?),
            }
        }
        let env = &*env;
        Ok(Call {
            args: out_args,
            kwargs: kwargs
                .iter()
                .map(|(k, a)| Ok((k.clone(), self.arg(env, a)?)))
                .collect::<Result<_, String>>()?,
        })
    }

    fn arg(&self, env: &Env, a: &Arg) -> Result<RValue, String> {
        Ok(match a {
            Arg::Node(id) => env.get(id).cloned().ok_or_else(|| {
                format!(
                    "internal: the value of `{}` is not available",
                    self.result.graph.node(*id).name
                )
            })?,
            Arg::None => RValue::None,
            Arg::Bool(b) => RValue::PyBool(*b),
            Arg::Int(i) => RValue::Int(*i),
            Arg::Float(x) => RValue::Float(*x),
            Arg::Str(s) => RValue::Str(s.clone()),
            Arg::Tuple(v) | Arg::List(v) => RValue::Seq(
                v.iter()
                    .map(|a| self.arg(env, a))
                    .collect::<Result<_, _>>()?,
            ),
            Arg::Slice(s) => RValue::Slice(Box::new([
                self.arg(env, &s[0])?,
                self.arg(env, &s[1])?,
                self.arg(env, &s[2])?,
            ])),
            Arg::Ellipsis => RValue::Ellipsis,
            Arg::Dtype(d) => RValue::Dtype(
                crate::shapes::DType::parse(d).ok_or_else(|| format!("unknown dtype `{d}`"))?,
            ),
            Arg::Device(d) => RValue::Device(d.clone()),
            Arg::Repr(r) => return Err(format!("an argument the executor cannot evaluate: {r}")),
        })
    }
}

/// Node values by node index, `None` before a node runs and after its last use.
struct Env(Vec<Option<RValue>>);

impl Env {
    fn get(&self, id: &NodeId) -> Option<&RValue> {
        self.0.get(id.index())?.as_ref()
    }

    fn insert(&mut self, id: NodeId, value: RValue) {
        self.0[id.index()] = Some(value);
    }

    fn remove(&mut self, id: NodeId) -> Option<RValue> {
        self.0.get_mut(id.index())?.take()
    }
}

fn print_profile(entries: Vec<(String, std::time::Duration)>) {
    let mut by: HashMap<String, (usize, std::time::Duration)> = HashMap::new();
    let total: std::time::Duration = entries.iter().map(|(_, d)| *d).sum();
    for (k, d) in entries {
        let e = by.entry(k).or_default();
        e.0 += 1;
        e.1 += d;
    }
    let mut v: Vec<_> = by.into_iter().collect();
    v.sort_by(|a, b| b.1 .1.cmp(&a.1 .1));
    eprintln!("profile: {:.3} ms in nodes", total.as_secs_f64() * 1e3);
    for (k, (n, d)) in v.iter().take(15) {
        eprintln!("  {:>9.3} ms {:>4}x {k}", d.as_secs_f64() * 1e3, n);
    }
}
