//! Stage 8: the pass pipeline that turns the traced graph into an optimized one.
//!
//! # Order
//! `cse` → `constant_fold` → `fusion` → `dce`, repeated until a whole round changes nothing
//! (at most [`MAX_ROUNDS`] rounds, like ONNX Runtime's cap of 10).
//!
//! * **CSE runs before constant folding.** Traced models re-derive the same shape value many
//!   times (`C // n_head` once per head in every block, `x.size()` per call site). Merging those
//!   first means folding evaluates and rewrites one node instead of N, and without concrete
//!   input shapes — where folding can do nothing — the duplicates are still merged. The
//!   opposite dependency (folding turning two `view(x, a, b)` into identical
//!   `view(x, 2, 6)`) is real too; the fixed-point loop picks it up in the next round, which
//!   is why the pipeline iterates instead of running once.
//! * **Fusion runs after both**, because its preconditions ("the matmul has a single user")
//!   only hold once duplicates are merged, and hand-written layer norms are only recognisable
//!   once `x - mean`, written twice in the source, is one node.
//! * **DCE runs last** to drop what the others orphaned (a `size()` whose `getitem`s were
//!   folded away).
//!
//! Nodes tagged with a graph-break region are never rewritten: they are what the user is
//! shown as the reason for a break, and Dynamo splits the graph there anyway.
//!
//! After every pass, [`validate`] checks the graph's invariants in debug builds and tests
//! (release builds skip it unless asked).
//!
//! `Pipeline`: CSE → constant folding → fusion → DCE to a fixed point (cap 10), validated after
//! each pass in debug builds; `cache.rs` stores optimized graphs keyed by every input that shaped
//! them.

pub mod cache;
pub mod constant_fold;
pub mod cse;
pub mod dce;
pub mod fusion;

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::graph::{Arg, Graph, Node, NodeId, Op};
use crate::shapes::Meta;

/// Bump whenever a pass changes what it produces: it is part of every cache key.
pub const PIPELINE_VERSION: u32 = 1;
pub const MAX_ROUNDS: usize = 10;

pub use crate::graph::FUSED_PREFIX;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PassOptions {
    /// Parameters and buffers are frozen and the model is in eval mode: batch norm may be
    /// folded into convolutions, dropout and batch norm are pure.
    pub inference: bool,
    /// Pass names to skip (`--disable-pass`).
    pub disabled: Vec<String>,
    /// Validate after every pass even in release builds.
    pub validate: bool,
}

/// One line of the pass log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassRecord {
    pub round: usize,
    pub name: String,
    pub nodes_modified: usize,
}

pub struct PassContext {
    pub inference: bool,
}

pub trait Pass {
    fn name(&self) -> &'static str;
    /// Rewrites the graph in place; returns how many nodes it removed, replaced or rewrote.
    fn run(&self, g: &mut Graph, cx: &PassContext) -> usize;
}

#[derive(Debug, thiserror::Error)]
#[error("pass `{pass}` (round {round}) broke the graph: {problem}")]
pub struct PassError {
    pub pass: String,
    pub round: usize,
    pub problem: String,
}

pub const PASS_NAMES: [&str; 4] = ["cse", "constant_fold", "fusion", "dce"];

pub struct Pipeline {
    passes: Vec<Box<dyn Pass>>,
    disabled: HashSet<String>,
    cx: PassContext,
    validate: bool,
    pub max_rounds: usize,
}

impl Pipeline {
    pub fn new(opts: &PassOptions) -> Self {
        Pipeline {
            passes: vec![
                Box::new(cse::Cse),
                Box::new(constant_fold::ConstantFold),
                Box::new(fusion::Fusion),
                Box::new(dce::Dce),
            ],
            disabled: opts.disabled.iter().cloned().collect(),
            cx: PassContext {
                inference: opts.inference,
            },
            validate: opts.validate || cfg!(debug_assertions),
            max_rounds: MAX_ROUNDS,
        }
    }

    /// Runs the passes to a fixed point. A graph that tracing cut short (no `output` node) is
    /// left alone: every node in it would look dead.
    pub fn run(&self, g: &mut Graph) -> Result<Vec<PassRecord>, PassError> {
        let mut log = Vec::new();
        if !g.nodes().any(|(_, n)| n.op == Op::Output) {
            return Ok(log);
        }
        if self.validate {
            validate(g).map_err(|problem| PassError {
                pass: "(input)".into(),
                round: 0,
                problem,
            })?;
        }
        for round in 1..=self.max_rounds {
            let mut changed = false;
            for pass in self
                .passes
                .iter()
                .filter(|p| !self.disabled.contains(p.name()))
            {
                let n = pass.run(g, &self.cx);
                if self.validate {
                    validate(g).map_err(|problem| PassError {
                        pass: pass.name().into(),
                        round,
                        problem,
                    })?;
                }
                log.push(PassRecord {
                    round,
                    name: pass.name().to_string(),
                    nodes_modified: n,
                });
                changed |= n > 0;
            }
            if !changed {
                break;
            }
        }
        Ok(log)
    }
}

/// Graph invariants every pass must keep.
pub fn validate(g: &Graph) -> Result<(), String> {
    let mut pos: HashMap<NodeId, usize> = HashMap::new();
    for (i, &id) in g.order.iter().enumerate() {
        if !g.contains(id) {
            return Err(format!("order lists a removed node (index {})", id.index()));
        }
        if pos.insert(id, i).is_some() {
            return Err(format!("`{}` appears twice in order", g.node(id).name));
        }
    }
    if pos.len() != g.g.node_count() {
        return Err(format!(
            "order lists {} nodes but the graph holds {}",
            pos.len(),
            g.g.node_count()
        ));
    }
    let outputs: Vec<usize> = g
        .order
        .iter()
        .enumerate()
        .filter(|(_, &id)| g.node(id).op == Op::Output)
        .map(|(i, _)| i)
        .collect();
    if outputs.len() > 1 {
        return Err("more than one output node".into());
    }
    if let Some(&i) = outputs.first() {
        if i + 1 != g.order.len() {
            return Err("the output node is not last".into());
        }
    }
    for (i, &id) in g.order.iter().enumerate() {
        let n = g.node(id);
        let mut inputs = g.inputs(id);
        for src in &inputs {
            match pos.get(src) {
                None => {
                    return Err(format!(
                        "`{}` reads a node that is not in the graph",
                        n.name
                    ))
                }
                // Inputs strictly before users: with a total order this also rules out cycles.
                Some(&j) if j >= i => {
                    return Err(format!(
                        "`{}` reads `{}`, which comes after it (cycle or bad order)",
                        n.name,
                        g.node(*src).name
                    ))
                }
                _ => {}
            }
        }
        let mut edges: Vec<NodeId> =
            g.g.neighbors_directed(id, petgraph::Direction::Incoming)
                .collect();
        inputs.sort();
        edges.sort();
        if inputs != edges {
            return Err(format!(
                "edges into `{}` disagree with its arguments",
                n.name
            ));
        }
        if n.op == Op::Placeholder && i > 0 && g.node(g.order[i - 1]).op != Op::Placeholder {
            return Err(format!("placeholder `{}` after a non-placeholder", n.name));
        }
        if n.target.starts_with(FUSED_PREFIX) {
            check_fused(g, id)?;
        }
    }
    Ok(())
}

/// A fused op must still describe a tensor of the shape its last source op produced: same rank
/// as its main input for the element-wise tails we fuse.
fn check_fused(g: &Graph, id: NodeId) -> Result<(), String> {
    let n = g.node(id);
    if n.fused_from.len() < 2 {
        return Err(format!(
            "fused node `{}` lost the source spans it came from",
            n.name
        ));
    }
    let Meta::Tensor(out) = &n.meta else {
        return Err(format!("fused node `{}` does not produce a tensor", n.name));
    };
    let input = n
        .args
        .first()
        .and_then(|a| if let Arg::Node(x) = a { Some(*x) } else { None });
    let in_rank = input.and_then(|x| {
        g.node(x)
            .meta
            .as_tensor()
            .and_then(|t| t.shape.as_ref().map(Vec::len))
    });
    let out_rank = out.shape.as_ref().map(Vec::len);
    if let (Some(a), Some(b)) = (in_rank, out_rank) {
        let Some(crate::graph::OpKey::Fused(kind)) = crate::graph::OpKey::of(n.op, &n.target)
        else {
            return Ok(());
        };
        let same_rank = matches!(kind, "linear_act" | "conv_bn" | "conv_bn_act" | "add_act");
        if same_rank && a != b {
            return Err(format!(
                "fused node `{}` ({kind}) maps rank {a} to rank {b}",
                n.name
            ));
        }
    }
    Ok(())
}

/// Nodes no pass may touch (see the module docs).
pub fn frozen(n: &Node) -> bool {
    n.region.is_some() || n.op == Op::Placeholder || n.op == Op::Output
}

fn short(target: &str) -> &str {
    crate::graph::OpKey::Function(target).name()
}

/// torch.nn layers whose forward is a deterministic function of its input and parameters,
/// in training mode as well as in eval.
const PURE_MODULES: &[&str] = &[
    "Linear",
    "Bilinear",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "ReLU",
    "ReLU6",
    "GELU",
    "SiLU",
    "Sigmoid",
    "Tanh",
    "Hardswish",
    "Hardsigmoid",
    "LeakyReLU",
    "ELU",
    "SELU",
    "CELU",
    "Mish",
    "Softplus",
    "Softmax",
    "LogSoftmax",
    "Softmax2d",
    "Identity",
    "Flatten",
    "Unflatten",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "LayerNorm",
    "GroupNorm",
    "RMSNorm",
    "Embedding",
    "LocalResponseNorm",
    "PReLU",
    "Hardtanh",
    "Softsign",
    "Tanhshrink",
    "LogSigmoid",
    "Hardshrink",
    "Softshrink",
    "Upsample",
    "PixelShuffle",
    "GLU",
];

/// Pure only in eval mode: dropout draws random numbers and batch norm updates running
/// statistics while training.
const EVAL_PURE_MODULES: &[&str] = &[
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
];

/// Functions and methods that draw random numbers or write somewhere.
fn impure_name(name: &str) -> bool {
    (name.ends_with('_') && !name.starts_with("__"))
        || matches!(
            name,
            "setitem"
                | "__setitem__"
                | "iadd"
                | "isub"
                | "imul"
                | "itruediv"
                | "ifloordiv"
                | "imod"
                | "ipow"
                | "iand"
                | "ior"
                | "print"
                | "_assert"
                | "_assert_async"
                | "rand"
                | "randn"
                | "randint"
                | "rand_like"
                | "randn_like"
                | "randint_like"
                | "randperm"
                | "bernoulli"
                | "multinomial"
                | "normal"
                | "poisson"
                | "manual_seed"
                | "seed"
                | "empty"
                | "empty_like"
                | "dropout"
                | "dropout1d"
                | "dropout2d"
                | "dropout3d"
                | "alpha_dropout"
                | "feature_alpha_dropout"
                | "rrelu"
                | "copy"
                | "backward"
                | "register_hook"
                | "record_stream"
                | "set_"
                | "resize_"
                | "warn"
                | "info"
                | "debug"
                | "log"
                | "append"
                | "extend"
                | "update"
        )
}

/// Whether evaluating the node twice, or not at all, is unobservable.
pub fn is_pure(n: &Node, inference: bool) -> bool {
    let inplace_kw = n
        .kwargs
        .iter()
        .any(|(k, v)| k == "inplace" && *v == Arg::Bool(true));
    match n.op {
        Op::Placeholder | Op::Output => false,
        Op::GetAttr => true,
        Op::CallModule => {
            let Some(class) = n.module_class.as_deref() else {
                return false;
            };
            !n.mutates_input
                && (PURE_MODULES.contains(&class)
                    || (inference && EVAL_PURE_MODULES.contains(&class)))
        }
        Op::CallFunction | Op::CallMethod => {
            let name = short(&n.target);
            // `math.log` is pure; only logger methods are not.
            let name_impure = impure_name(name)
                && !(name == "log"
                    && (n.target.starts_with("torch.")
                        || n.target.starts_with("math.")
                        || n.op == Op::CallMethod));
            // F.dropout(training=False) and eval-mode dropout are the identity.
            let dropout_ok = inference && short(&n.target).contains("dropout");
            // F.batch_norm defaults to eval mode; with training=True it updates running stats.
            let training = n
                .kwargs
                .iter()
                .any(|(k, v)| k == "training" && *v != Arg::Bool(false))
                || (name == "batch_norm" && n.args.get(5).is_some_and(|a| *a != Arg::Bool(false)));
            let bn_training = name == "batch_norm" && training;
            !inplace_kw
                && !bn_training
                && (!name_impure || dropout_ok)
                && !n.args.iter().any(has_repr)
        }
    }
}

fn has_repr(a: &Arg) -> bool {
    match a {
        Arg::Repr(_) => true,
        Arg::Tuple(v) | Arg::List(v) => v.iter().any(has_repr),
        Arg::Slice(s) => s.iter().any(has_repr),
        _ => false,
    }
}

/// Removes `inner` (nodes a rewrite absorbed) if nothing outside the rewrite still reads them;
/// `root` is the node that now stands for all of them. Returns false, changing nothing, when
/// one of them is still needed elsewhere.
pub(crate) fn absorbable(g: &Graph, root: NodeId, inner: &[NodeId]) -> bool {
    let set: HashSet<NodeId> = inner.iter().copied().chain([root]).collect();
    inner.iter().all(|&id| {
        let n = g.node(id);
        !frozen(n) && !n.mutates_input && g.users(id).iter().all(|u| set.contains(u))
    })
}

/// Rewrites `root` into a new op that replaces it and `inner`, keeping every source span.
pub(crate) fn replace_with(
    g: &mut Graph,
    root: NodeId,
    inner: &[NodeId],
    name: &str,
    op: Op,
    target: String,
    args: Vec<Arg>,
    kwargs: Vec<(String, Arg)>,
) {
    let mut origins = Vec::new();
    for &id in inner.iter().chain([&root]) {
        let n = g.node(id);
        if n.fused_from.is_empty() {
            origins.extend(n.origin.clone());
        } else {
            origins.extend(n.fused_from.iter().cloned());
        }
    }
    let fresh = g.fresh_name(name);
    g.set_inputs(root, args, kwargs);
    let n = g.node_mut(root);
    n.name = fresh;
    n.op = op;
    n.target = target;
    n.module_class = None;
    n.mutates_input = false;
    n.fused_from = origins;
    // Inner nodes in reverse graph order so each is unused by the time it goes.
    let mut inner: Vec<NodeId> = inner.to_vec();
    inner.sort_by_key(|id| std::cmp::Reverse(g.order.iter().position(|o| o == id)));
    inner.dedup();
    for id in inner {
        if g.users(id).is_empty() {
            g.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Graph;

    fn tiny() -> Graph {
        let mut g = Graph::new();
        let x = g.add("x", Op::Placeholder, "x".into(), vec![], vec![]);
        let r = g.add(
            "relu",
            Op::CallFunction,
            "torch.relu".into(),
            vec![Arg::Node(x)],
            vec![],
        );
        g.add(
            "output",
            Op::Output,
            "output".into(),
            vec![Arg::Node(r)],
            vec![],
        );
        g
    }

    #[test]
    fn validation_accepts_a_traced_graph_and_catches_corruption() {
        let g = tiny();
        validate(&g).unwrap();

        let mut bad = tiny();
        bad.order.swap(1, 2);
        assert!(validate(&bad)
            .unwrap_err()
            .contains("output node is not last"));

        let mut bad = tiny();
        let relu = bad.by_name("relu").unwrap();
        let x = bad.by_name("x").unwrap();
        // An argument without its edge: what a pass that forgot `set_inputs` would leave.
        bad.node_mut(relu).args.push(Arg::Node(x));
        assert!(validate(&bad).unwrap_err().contains("disagree"));

        let mut bad = tiny();
        let relu = bad.by_name("relu").unwrap();
        bad.order.retain(|&o| o != relu);
        assert!(validate(&bad).is_err());

        let mut bad = tiny();
        let out = bad.by_name("output").unwrap();
        let relu = bad.by_name("relu").unwrap();
        // relu reading output: a cycle through the graph's end.
        bad.set_inputs(relu, vec![Arg::Node(out)], vec![]);
        assert!(validate(&bad).unwrap_err().contains("comes after"));
    }

    #[test]
    fn disabled_passes_do_not_run() {
        let mut g = tiny();
        let opts = PassOptions {
            disabled: PASS_NAMES.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        let log = Pipeline::new(&opts).run(&mut g).unwrap();
        assert!(log.is_empty());
    }

    #[test]
    fn pipeline_stops_at_a_fixed_point() {
        let mut g = tiny();
        let log = Pipeline::new(&PassOptions::default()).run(&mut g).unwrap();
        assert_eq!(log.len(), PASS_NAMES.len());
        assert!(log.iter().all(|r| r.round == 1 && r.nodes_modified == 0));
    }
}
