//! Stage 4: the static FX graph — torch.fx's six opcodes, its node names, and the users of
//! every node (petgraph edges from producer to consumer). The graph is built by the tracer
//! (`eval::trace`), which is where inlining happens (see `inline`).
//!
//! `Graph` = petgraph `StableDiGraph` plus program `order`, torch.fx's six opcodes and naming
//! (`names.rs`); `OpKey` is the one way ops are named: the executor's tables by `key()`
//! (`torch.nn.functional.relu`, `method:view`, `module:Conv2d`, `staticfx.fused.linear_act`), shape
//! rules and passes by `name()` (`relu`).

pub mod inline;
pub mod names;

use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

use crate::semantic::FileId;
use crate::shapes::Meta;
use crate::syntax::Span;
use names::Namespace;

/// Prefix of every fused op's target (`staticfx.fused.conv_bn_relu`): the pass pipeline makes
/// them, `passes::validate` and the executor's `fused` table read them.
pub const FUSED_PREFIX: &str = "staticfx.fused.";

/// How every stage names an operation. The executor's tables are keyed by [`OpKey::key`]: a
/// function by its canonical target (`torch.nn.functional.relu`, `operator.add`), a Tensor
/// method as `method:view`, a leaf module as `module:Conv2d`, a fused node by its target
/// (`staticfx.fused.linear_act`). Shape rules and the pass pipeline match on
/// [`OpKey::name`], the bare name (`relu` for `torch.relu`, `F.relu` and `x.relu()` alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKey<'a> {
    Function(&'a str),
    Method(&'a str),
    /// A leaf module, by class.
    Module(&'a str),
    /// A node of the pass pipeline, by kind (`linear_act`).
    Fused(&'a str),
}

impl<'a> OpKey<'a> {
    /// The key of a `call_function` or `call_method` node; None for other opcodes (a
    /// `call_module` node's target is a module path, its key comes from the module's class).
    pub fn of(op: Op, target: &'a str) -> Option<OpKey<'a>> {
        match op {
            Op::CallFunction => Some(match target.strip_prefix(FUSED_PREFIX) {
                Some(kind) => OpKey::Fused(kind),
                None => OpKey::Function(target),
            }),
            Op::CallMethod => Some(OpKey::Method(target)),
            _ => None,
        }
    }

    /// The dispatch key (`torch.nn.functional.relu`, `method:view`, `module:Conv2d`,
    /// `staticfx.fused.linear_act`).
    pub fn key(self) -> std::borrow::Cow<'a, str> {
        match self {
            OpKey::Function(t) => t.into(),
            OpKey::Method(m) => format!("method:{m}").into(),
            OpKey::Module(c) => format!("module:{c}").into(),
            OpKey::Fused(k) => format!("{FUSED_PREFIX}{k}").into(),
        }
    }

    /// The key a dispatch key was made from (the inverse of [`OpKey::key`]).
    pub fn parse(key: &'a str) -> OpKey<'a> {
        if let Some(m) = key.strip_prefix("method:") {
            OpKey::Method(m)
        } else if let Some(c) = key.strip_prefix("module:") {
            OpKey::Module(c)
        } else if let Some(k) = key.strip_prefix(FUSED_PREFIX) {
            OpKey::Fused(k)
        } else {
            OpKey::Function(key)
        }
    }

    /// The bare name shape rules and passes match on.
    pub fn name(self) -> &'a str {
        match self {
            OpKey::Function(t) => t.rsplit('.').next().unwrap_or(t),
            OpKey::Method(n) | OpKey::Module(n) | OpKey::Fused(n) => n,
        }
    }
}

pub type NodeId = NodeIndex<u32>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Placeholder,
    GetAttr,
    CallFunction,
    CallMethod,
    CallModule,
    Output,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Placeholder => "placeholder",
            Op::GetAttr => "get_attr",
            Op::CallFunction => "call_function",
            Op::CallMethod => "call_method",
            Op::CallModule => "call_module",
            Op::Output => "output",
        }
    }
}

/// A node argument: another node or a constant, in torch.fx's argument language.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Node(NodeId),
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Tuple(Vec<Arg>),
    List(Vec<Arg>),
    Slice(Box<[Arg; 3]>),
    Ellipsis,
    Dtype(String),
    Device(String),
    /// A value we keep for display only (e.g. a Python object torch.fx would embed).
    Repr(String),
}

impl Arg {
    pub fn nodes(&self, out: &mut Vec<NodeId>) {
        match self {
            Arg::Node(n) => out.push(*n),
            Arg::Tuple(v) | Arg::List(v) => v.iter().for_each(|a| a.nodes(out)),
            Arg::Slice(s) => s.iter().for_each(|a| a.nodes(out)),
            _ => {}
        }
    }

    /// This argument with every reference to `old` replaced by `with`.
    pub fn substitute(&self, old: NodeId, with: &Arg) -> Arg {
        match self {
            Arg::Node(n) if *n == old => with.clone(),
            Arg::Tuple(v) => Arg::Tuple(v.iter().map(|a| a.substitute(old, with)).collect()),
            Arg::List(v) => Arg::List(v.iter().map(|a| a.substitute(old, with)).collect()),
            Arg::Slice(s) => Arg::Slice(Box::new([
                s[0].substitute(old, with),
                s[1].substitute(old, with),
                s[2].substitute(old, with),
            ])),
            a => a.clone(),
        }
    }
}

/// Where a node came from: the file and byte span of the expression that produced it, plus
/// the call sites that inlined it (outermost first), for "called from forward at …" messages.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Origin {
    pub file: FileId,
    pub span: Span,
    pub call_chain: Vec<(FileId, Span)>,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub op: Op,
    pub target: String,
    pub args: Vec<Arg>,
    pub kwargs: Vec<(String, Arg)>,
    pub origin: Option<Origin>,
    pub meta: Meta,
    /// Graph-break region this node belongs to, and which side of it.
    pub region: Option<RegionTag>,
    /// The torch.nn class of a `call_module` target (`Linear`), so passes can tell a pure
    /// layer from a stateful or random one without the module tree.
    pub module_class: Option<String>,
    /// Every source expression a rewritten node stands for (a fused node keeps the spans of
    /// all the nodes it replaced, so editors can still point at the code).
    pub fused_from: Vec<Origin>,
    /// A `call_module` of a module built with `inplace=True`: it writes into its input, so it
    /// is neither deduplicated nor dropped when unused.
    pub mutates_input: bool,
    /// Set when the shape rules proved the call raises in eager PyTorch (its `meta` is then
    /// unknown): the FX3xx findings read it.
    pub shape_error: Option<crate::shapes::ShapeError>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegionRole {
    /// The node whose value forces the break (e.g. the comparison in `if x.sum() > 0`).
    Cause,
    ThenBranch,
    ElseBranch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionTag {
    pub region: usize,
    pub role: RegionRole,
}

#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub g: StableDiGraph<Node, u32>,
    /// Nodes in program (topological) order, as torch.fx lists them.
    pub order: Vec<NodeId>,
    namespace: Namespace,
    /// Nodes recorded but not yet part of the program (`add_unplaced`).
    unplaced: HashSet<NodeId>,
}

impl Graph {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a node named after `candidate` with torch.fx's naming rules.
    pub fn add(
        &mut self,
        candidate: &str,
        op: Op,
        target: String,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) -> NodeId {
        let name = self.namespace.create_name(candidate);
        let node = Node {
            name,
            op,
            target,
            args,
            kwargs,
            origin: None,
            meta: Meta::Unknown,
            region: None,
            module_class: None,
            fused_from: vec![],
            mutates_input: false,
            shape_error: None,
        };
        let id = self.g.add_node(node);
        self.order.push(id);
        self.connect(id);
        id
    }

    /// A node with no name and no place in the program yet: torch.fx creates the node of a
    /// tensor attribute (`x.device`) only when something first uses it, and never one that
    /// nothing uses. `place` gives it its name and position; `drop_unplaced` forgets the rest.
    pub fn add_unplaced(
        &mut self,
        op: Op,
        target: String,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) -> NodeId {
        let node = Node {
            name: String::new(),
            op,
            target,
            args,
            kwargs,
            origin: None,
            meta: Meta::Unknown,
            region: None,
            module_class: None,
            fused_from: vec![],
            mutates_input: false,
            shape_error: None,
        };
        let id = self.g.add_node(node);
        self.unplaced.insert(id);
        id
    }

    pub fn is_unplaced(&self, id: NodeId) -> bool {
        self.unplaced.contains(&id)
    }

    /// Names an unplaced node after `candidate` and appends it to the program.
    pub fn place(&mut self, id: NodeId, candidate: &str) {
        if self.unplaced.remove(&id) {
            self.g[id].name = self.namespace.create_name(candidate);
            self.order.push(id);
            self.connect(id);
        }
    }

    pub fn drop_unplaced(&mut self) {
        for id in std::mem::take(&mut self.unplaced) {
            self.g.remove_node(id);
        }
    }

    fn connect(&mut self, id: NodeId) {
        let mut inputs = Vec::new();
        let n = &self.g[id];
        n.args.iter().for_each(|a| a.nodes(&mut inputs));
        n.kwargs.iter().for_each(|(_, a)| a.nodes(&mut inputs));
        for (pos, src) in inputs.into_iter().enumerate() {
            self.g.add_edge(src, id, pos as u32);
        }
    }

    /// Replaces a node's inputs and rewires its edges (used by rewrites).
    pub fn set_inputs(&mut self, id: NodeId, args: Vec<Arg>, kwargs: Vec<(String, Arg)>) {
        let incoming: Vec<_> = self
            .g
            .edges_directed(id, Direction::Incoming)
            .map(|e| e.id())
            .collect();
        for e in incoming {
            self.g.remove_edge(e);
        }
        self.g[id].args = args;
        self.g[id].kwargs = kwargs;
        self.connect(id);
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.g[id]
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.g[id]
    }

    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> + '_ {
        self.order.iter().map(move |&id| (id, &self.g[id]))
    }

    /// Nodes that consume `id`, in graph order, each once.
    pub fn users(&self, id: NodeId) -> Vec<NodeId> {
        let mut users: Vec<NodeId> = self.g.neighbors_directed(id, Direction::Outgoing).collect();
        users.sort_by_key(|u| self.order.iter().position(|o| o == u));
        users.dedup();
        users
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// A fresh torch.fx-style name (for nodes created by rewrites).
    pub fn fresh_name(&mut self, candidate: &str) -> String {
        self.namespace.create_name(candidate)
    }

    /// Inserts a fully formed node (cache loading): its name is reserved as given.
    pub fn push_node(&mut self, mut node: Node) -> NodeId {
        let name = self.namespace.create_name(&node.name);
        node.name = name;
        let id = self.g.add_node(node);
        self.order.push(id);
        self.connect(id);
        id
    }

    /// Points every use of `old` at `with` (a node or a literal). Returns how many users changed.
    pub fn replace_uses(&mut self, old: NodeId, with: &Arg) -> usize {
        let users = self.users(old);
        for &u in &users {
            let n = &self.g[u];
            let args = n.args.iter().map(|a| a.substitute(old, with)).collect();
            let kwargs = n
                .kwargs
                .iter()
                .map(|(k, a)| (k.clone(), a.substitute(old, with)))
                .collect();
            self.set_inputs(u, args, kwargs);
        }
        users.len()
    }

    /// Removes a node that nothing uses any more.
    pub fn remove(&mut self, id: NodeId) {
        debug_assert!(
            self.users(id).is_empty(),
            "removing a node that still has users"
        );
        self.g.remove_node(id);
        self.order.retain(|&o| o != id);
    }

    pub fn contains(&self, id: NodeId) -> bool {
        self.g.contains_node(id)
    }

    /// The node ids a node reads, in argument order (kwargs after args).
    pub fn inputs(&self, id: NodeId) -> Vec<NodeId> {
        let mut out = Vec::new();
        let n = &self.g[id];
        n.args.iter().for_each(|a| a.nodes(&mut out));
        n.kwargs.iter().for_each(|(_, a)| a.nodes(&mut out));
        out
    }

    /// Whether the graph's output reads `id` directly.
    pub fn is_output_input(&self, id: NodeId) -> bool {
        self.users(id).iter().any(|&u| self.g[u].op == Op::Output)
    }

    pub fn by_name(&self, name: &str) -> Option<NodeId> {
        self.order
            .iter()
            .copied()
            .find(|&id| self.g[id].name == name)
    }
}

/// An argument as torch.fx prints it (`x`, `(1, 2)`, `slice(None, 2, None)`).
pub fn arg_text(g: &Graph, a: &Arg) -> String {
    match a {
        Arg::Node(n) => g.node(*n).name.clone(),
        Arg::None => "None".into(),
        Arg::Bool(b) => {
            if *b {
                "True".into()
            } else {
                "False".into()
            }
        }
        Arg::Int(i) => i.to_string(),
        Arg::Float(f) => format!("{f:?}"),
        Arg::Str(s) => format!("{s:?}"),
        Arg::Tuple(v) => {
            let inner: Vec<String> = v.iter().map(|x| arg_text(g, x)).collect();
            if inner.len() == 1 {
                format!("({},)", inner[0])
            } else {
                format!("({})", inner.join(", "))
            }
        }
        Arg::List(v) => format!(
            "[{}]",
            v.iter()
                .map(|x| arg_text(g, x))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Arg::Slice(s) => format!(
            "slice({}, {}, {})",
            arg_text(g, &s[0]),
            arg_text(g, &s[1]),
            arg_text(g, &s[2])
        ),
        Arg::Ellipsis => "...".into(),
        Arg::Dtype(d) => format!("torch.{d}"),
        Arg::Device(d) => format!("device({d:?})"),
        Arg::Repr(r) => r.clone(),
    }
}

#[cfg(test)]
mod op_key_tests {
    use super::{Op, OpKey};

    #[test]
    fn one_key_per_op_and_back() {
        let relu = OpKey::of(Op::CallFunction, "torch.nn.functional.relu").unwrap();
        assert_eq!(
            (relu.key().as_ref(), relu.name()),
            ("torch.nn.functional.relu", "relu")
        );
        let view = OpKey::of(Op::CallMethod, "view").unwrap();
        assert_eq!((view.key().as_ref(), view.name()), ("method:view", "view"));
        let fused = OpKey::of(Op::CallFunction, "staticfx.fused.linear_act").unwrap();
        assert_eq!(fused, OpKey::Fused("linear_act"));
        assert_eq!(OpKey::Module("Conv2d").key(), "module:Conv2d");
        for k in [relu, view, fused, OpKey::Module("Conv2d")] {
            assert_eq!(OpKey::parse(&k.key()), k);
        }
        assert_eq!(OpKey::of(Op::CallModule, "layer1.0"), None);
    }
}
