//! The tracer: records operations on `Proxy` values as graph nodes, the way
//! `torch.fx.Tracer` does, and runs shape inference on each node as it is created.

use crate::eval::types::proxy;
use std::collections::HashMap;
use std::rc::Rc;

mod allow_in_graph;
pub mod argument_guards;
pub mod caller_kinds;
mod custom_op;
pub mod default_config;
pub mod guards;
mod inputs;
mod layout;
pub mod replay;
pub mod root;

pub use allow_in_graph::is_allow_in_graph;

use super::stmt::Truth;
use super::value::{ObjKind, Object, Value};
use super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::graph::{Arg, Graph, NodeId, Op, OpKey, Origin, RegionRole, RegionTag};
use crate::semantic::FileId;
use crate::shapes::rules::{self, Inputs, ModuleInfo};
use crate::shapes::{DType, Meta, Scalar, ScalarOrigin};
use crate::syntax::Span;
pub use crate::traced::{Binding, EventKind, Region, TraceEvent};

/// An input's rank and the sizes a layer fixes (`Conv2d(3, …)` → rank 4, dim 1 = 3).
#[derive(Clone, Debug, PartialEq)]
pub struct RankHint {
    pub rank: usize,
    /// Whether more leading dims (a sequence after the batch) are allowed; known dims then
    /// count from the end.
    pub grow: bool,
    pub known: Vec<(usize, i64)>,
    pub dtype: Option<DType>,
}

/// The shape a leaf layer requires of its input, from its class and constructor attributes.
/// Where torch accepts several ranks (Linear takes any rank ≥ 1) the common one is chosen:
/// `[batch, features]` for Linear, `[batch, seq, features]` for LayerNorm; the caller checks
/// that tracing with it changes nothing.
pub fn rank_hint(class: &str, attr: &dyn Fn(&str) -> Meta) -> Option<RankHint> {
    let int = |n: &str| attr(n).as_int();
    Some(match class {
        "Conv1d" | "Conv2d" | "Conv3d" => {
            let rank = match class {
                "Conv1d" => 3,
                "Conv2d" => 4,
                _ => 5,
            };
            RankHint {
                rank,
                grow: false,
                known: int("in_channels").map(|c| vec![(1, c)]).unwrap_or_default(),
                dtype: None,
            }
        }
        "BatchNorm2d" => RankHint {
            rank: 4,
            grow: false,
            known: int("num_features")
                .map(|c| vec![(1, c)])
                .unwrap_or_default(),
            dtype: None,
        },
        "BatchNorm3d" => RankHint {
            rank: 5,
            grow: false,
            known: int("num_features")
                .map(|c| vec![(1, c)])
                .unwrap_or_default(),
            dtype: None,
        },
        "Linear" => RankHint {
            rank: 2,
            grow: true,
            known: int("in_features").map(|c| vec![(1, c)]).unwrap_or_default(),
            dtype: None,
        },
        "LayerNorm" => {
            let dims = attr("normalized_shape").as_int_list()?;
            // [batch, features...]: a sequence dim is tried next if tracing needs one.
            let rank = dims.len() + 1;
            RankHint {
                rank,
                grow: true,
                known: dims.iter().enumerate().map(|(i, &d)| (1 + i, d)).collect(),
                dtype: None,
            }
        }
        // ids of any rank: [batch, seq] first, then [batch, h, w] (an image of tokens) when
        // forward needs the extra dim
        "Embedding" => RankHint {
            rank: 2,
            grow: true,
            known: vec![],
            dtype: Some(DType::Int64),
        },
        _ => return None,
    })
}

/// Largest graph a single trace may record.
pub const MAX_GRAPH_NODES: usize = 50_000;

#[derive(Default)]
pub struct Tracer {
    pub graph: Graph,
    /// Qualified path of every module object reachable from the traced root (`layer1.0.conv1`);
    /// shared with the scratch tracers of allowed-in-graph calls, which read it per call.
    pub module_paths: Rc<HashMap<usize, String>>,
    param_nodes: HashMap<String, NodeId>,
    /// Buffers read from a module during the trace, each with its path: torch.fx hands a
    /// buffer attribute back as the tensor itself and records a `get_attr` each time the
    /// tensor (this very value, `Rc::ptr_eq`) becomes an argument of a traced call
    /// (parameters get theirs on first read).
    buffer_paths: Vec<(Rc<super::value::Param>, String)>,
    /// How many times a buffer was noted (a replay copies no call that notes one).
    buffer_notes: usize,
    pub call_chain: Vec<(FileId, Span)>,
    /// The conditions of the `if` statements being run whose value is unknown, innermost
    /// last: both sides run, and what happens in them may not happen at all.
    pub unknown_conditions: Vec<(FileId, Span)>,
    branch: Vec<RegionTag>,
    pub regions: Vec<Region>,
    pub events: Vec<TraceEvent>,
    tensor_constants: usize,
    /// The tensors made in forward that became `get_attr` targets, each with its target:
    /// torch.fx keeps one attribute per tensor object (`tensor_attrs`), so a tensor used twice
    /// is read twice from the same target (and an in-place change to it, `w.requires_grad_()`,
    /// is seen where `w` is used next).
    tensor_attrs: Vec<(Rc<super::value::TensorConst>, String)>,
    /// What the first layer applied to an input of unknown shape says about that shape.
    pub rank_hints: Vec<(NodeId, RankHint)>,
    /// Depth of inlined calls (bounded by `graph::inline::MAX_INLINE_DEPTH`).
    pub inline_depth: usize,
    /// The name candidates of nodes not placed yet (`Graph::add_unplaced`).
    unplaced: HashMap<NodeId, String>,
    /// The path of the file whose assignments are recorded as [`Binding`]s (the traced class's;
    /// an editor session runs an edited function from another slot of the same path). None
    /// records nothing (scratch tracers).
    pub bindings_home: Option<std::path::PathBuf>,
    /// Whether each file seen so far is the home file.
    home_files: Vec<(FileId, bool)>,
    pub bindings: Vec<Binding>,
    /// Values read from outside forward that Dynamo would guard on.
    pub guards: guards::GuardLog,
    /// The replay or its shadow check (`replay::REPLAY_ENV`, `replay::SHADOW_ENV`); None when
    /// both are off.
    pub replay: Option<Box<replay::Shadow>>,
    /// forward's Python value arguments as the trace passes them on, and their guards.
    pub arguments: argument_guards::ArgumentGuardLog,
}

impl Tracer {
    pub fn new(root: &Rc<Object>) -> Self {
        let mut module_paths = HashMap::new();
        let mut modules = HashMap::new();
        let mut stack = vec![(root.clone(), String::new())];
        while let Some((obj, path)) = stack.pop() {
            if module_paths.contains_key(&obj.id) {
                continue;
            }
            module_paths.insert(obj.id, path.clone());
            modules.insert(path.clone(), obj.clone());
            for (name, child) in obj.children().into_iter().rev() {
                let p = if path.is_empty() {
                    name
                } else {
                    format!("{path}.{name}")
                };
                stack.push((child, p));
            }
        }
        let replay = replay::requested().map(|mode| Box::new(replay::Shadow::new(mode, modules)));
        let mut guards = guards::GuardLog::default();
        if replay.is_some() {
            guards.journal = Some(vec![]);
        }
        Tracer {
            module_paths: Rc::new(module_paths),
            replay,
            guards,
            ..Tracer::default()
        }
    }

    fn origin(&self, file: FileId, span: Span) -> Origin {
        Origin {
            file,
            span,
            call_chain: self.call_chain.clone(),
        }
    }

    pub fn add_node(
        &mut self,
        candidate: &str,
        op: Op,
        target: String,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
        meta: Meta,
        file: FileId,
        span: Span,
    ) -> NodeId {
        // torch.fx snake-cases every generated name; placeholders keep the argument's name.
        let id = match op {
            Op::Placeholder | Op::Output => self.graph.add(candidate, op, target, args, kwargs),
            _ => self.graph.add(
                &crate::graph::names::snake_case(candidate),
                op,
                target,
                args,
                kwargs,
            ),
        };
        if let Some(shadow) = self.replay.as_mut() {
            shadow.note_candidate(id, candidate);
        }
        let origin = self.origin(file, span);
        let tag = self.branch.last().copied();
        let n = self.graph.node_mut(id);
        n.meta = meta;
        n.origin = Some(origin);
        n.region = tag;
        id
    }

    /// A node placed in the program only when first used (`use_node`).
    #[allow(clippy::too_many_arguments)]
    pub fn add_unplaced_node(
        &mut self,
        candidate: &str,
        op: Op,
        target: String,
        args: Vec<Arg>,
        meta: Meta,
        file: FileId,
        span: Span,
    ) -> NodeId {
        let id = self.graph.add_unplaced(op, target, args, vec![]);
        let origin = self.origin(file, span);
        let n = self.graph.node_mut(id);
        n.meta = meta;
        n.origin = Some(origin);
        self.unplaced
            .insert(id, crate::graph::names::snake_case(candidate));
        id
    }

    /// Marks `id` used: an unplaced node takes its name and place now.
    pub fn use_node(&mut self, id: NodeId) {
        if let Some(candidate) = self.unplaced.remove(&id) {
            self.graph.place(id, &candidate);
            if let Some(shadow) = self.replay.as_mut() {
                shadow.note_candidate(id, &candidate);
            }
            let tag = self.branch.last().copied();
            self.graph.node_mut(id).region = tag;
        }
    }

    /// torch.fx's text of a proxy, `Proxy(getattr_2)` (`str(x)`, an f-string). Formatting
    /// reads the proxy's node: an attribute's node exists from here. The text holds a node's
    /// name, which a replayed call would not rename.
    pub fn proxy_text(&mut self, n: NodeId) -> String {
        self.use_node(n);
        if let Some(shadow) = self.replay.as_mut() {
            shadow.note_name_read();
        }
        format!("Proxy({})", self.graph.node(n).name)
    }

    pub fn placeholder(
        &mut self,
        name: &str,
        default: Option<Arg>,
        meta: Meta,
        file: FileId,
        span: Span,
    ) -> NodeId {
        let args = default.into_iter().collect();
        self.add_node(
            name,
            Op::Placeholder,
            name.to_string(),
            args,
            vec![],
            meta,
            file,
            span,
        )
    }

    /// One `get_attr` per parameter, reused by later reads (torch.fx's parameter proxy cache).
    pub fn get_attr(&mut self, path: &str, meta: Meta, file: FileId, span: Span) -> NodeId {
        if let Some(&n) = self.param_nodes.get(path) {
            return n;
        }
        let n = self.add_node(
            path,
            Op::GetAttr,
            path.to_string(),
            vec![],
            vec![],
            meta,
            file,
            span,
        );
        self.param_nodes.insert(path.to_string(), n);
        n
    }

    /// Remembers where a buffer read from a module lives, for the `get_attr` of each later use.
    pub fn note_buffer(&mut self, p: &Rc<super::value::Param>, path: String) {
        self.buffer_notes += 1;
        match self.buffer_paths.iter_mut().find(|(b, _)| Rc::ptr_eq(b, p)) {
            Some((_, known)) => *known = path,
            None => self.buffer_paths.push((p.clone(), path)),
        }
    }

    /// A fresh `get_attr` for a buffer read during this trace; None for any other tensor.
    pub fn buffer_use(
        &mut self,
        p: &Rc<super::value::Param>,
        file: FileId,
        span: Span,
    ) -> Option<NodeId> {
        let (_, path) = self.buffer_paths.iter().find(|(b, _)| Rc::ptr_eq(b, p))?;
        let path = path.clone();
        let meta = Meta::tensor(
            p.shape.as_ref().map(|s| crate::shapes::shape_of(s)),
            p.dtype,
        );
        Some(self.add_node(
            &path,
            Op::GetAttr,
            path.clone(),
            vec![],
            vec![],
            meta,
            file,
            span,
        ))
    }

    pub fn tensor_constant(
        &mut self,
        tensor: &Rc<super::value::TensorConst>,
        meta: Meta,
        file: FileId,
        span: Span,
    ) -> NodeId {
        let known = self
            .tensor_attrs
            .iter()
            .find(|(t, _)| Rc::ptr_eq(t, tensor))
            .map(|(_, name)| name.clone());
        let name = match known {
            Some(name) => name,
            None => {
                let name = format!("_tensor_constant{}", self.tensor_constants);
                self.tensor_constants += 1;
                self.tensor_attrs.push((tensor.clone(), name.clone()));
                name
            }
        };
        self.add_node(
            &name,
            Op::GetAttr,
            name.clone(),
            vec![],
            vec![],
            meta,
            file,
            span,
        )
    }

    pub fn meta(&self, n: NodeId) -> &Meta {
        // A proxy that outlived its trace (stored somewhere the trace did not restore) may
        // name a node this graph does not have: its value is simply unknown here.
        static UNKNOWN: Meta = Meta::Unknown;
        match self.graph.contains(n) {
            true => &self.graph.node(n).meta,
            false => &UNKNOWN,
        }
    }

    pub fn open_region(&mut self, cause: NodeId, kind: &str, file: FileId, span: Span) -> usize {
        let id = self.regions.len();
        self.regions.push(Region {
            id,
            kind: kind.to_string(),
            cause,
            file,
            span,
            call_chain: self.call_chain.clone(),
        });
        let node = self.graph.node_mut(cause);
        if node.region.is_none() {
            node.region = Some(RegionTag {
                region: id,
                role: RegionRole::Cause,
            });
        }
        id
    }

    pub fn set_branch(&mut self, region: usize, role: Option<RegionRole>) {
        self.branch.retain(|t| t.region != region);
        if let Some(role) = role {
            self.branch.push(RegionTag { region, role });
        }
    }

    pub fn note_generator(&mut self, file: FileId, span: Span) {
        let nodes_before = self.graph.order.len();
        self.events.push(TraceEvent {
            kind: EventKind::Yield,
            file,
            span,
            call_chain: self.call_chain.clone(),
            detail: String::new(),
            nodes_before,
            unknown_condition: self.unknown_conditions.last().copied(),
        });
    }

    pub fn event(&mut self, kind: EventKind, file: FileId, span: Span, detail: String) {
        let nodes_before = self.graph.order.len();
        self.events.push(TraceEvent {
            kind,
            file,
            span,
            call_chain: self.call_chain.clone(),
            detail,
            nodes_before,
            unknown_condition: self.unknown_conditions.last().copied(),
        });
    }

    /// Whether assignments in `file` are recorded (it is the home file).
    pub fn records_bindings_in(&mut self, file: FileId, path: &std::path::Path) -> bool {
        let Some(home) = &self.bindings_home else {
            return false;
        };
        if let Some(&(_, yes)) = self.home_files.iter().find(|(f, _)| *f == file) {
            return yes;
        }
        let yes = path == home;
        self.home_files.push((file, yes));
        yes
    }

    /// Records that the name at `target` of the assignment `statement` bound `value`.
    pub fn note_binding(&mut self, file: FileId, statement: Span, target: Span, value: &Value) {
        let node = match value {
            Value::Proxy(n) if self.graph.contains(*n) => Some(*n),
            _ => None,
        };
        self.bindings.push(Binding {
            file,
            statement,
            target,
            node,
        });
    }

    /// Whether branching on a node breaks the graph: tensors and data-derived scalars do;
    /// shape-derived and constant scalars are specialised (decided) when known.
    pub fn truth_of(&self, n: NodeId) -> Truth {
        match self.meta(n) {
            Meta::Scalar(s, origin) => match (s, origin) {
                (_, ScalarOrigin::Data) => Truth::Data(n),
                (Scalar::Bool(Some(b)), _) => Truth::Known(*b),
                (Scalar::Int(Some(i)), _) => Truth::Known(*i != 0),
                (Scalar::Float(Some(f)), _) => Truth::Known(*f != 0.0),
                _ => Truth::Unknown,
            },
            Meta::Size(s) => Truth::Known(!s.is_empty()),
            Meta::Seq(s) => Truth::Known(!s.is_empty()),
            Meta::None => Truth::Known(false),
            Meta::Tensor(_) => Truth::Data(n),
            _ => Truth::Unknown,
        }
    }
}

/// Tensor attributes that torch.fx records as `getattr` nodes rather than method calls.
pub fn is_tensor_attribute(name: &str) -> bool {
    matches!(
        name,
        "shape"
            | "dtype"
            | "device"
            | "ndim"
            | "T"
            | "mT"
            | "H"
            | "mH"
            | "data"
            | "grad"
            | "requires_grad"
            | "is_cuda"
            | "layout"
            | "real"
            | "imag"
            | "is_sparse"
            | "is_quantized"
            | "names"
    )
}

impl Interp {
    pub(in crate::eval) fn tracer_mut(&mut self) -> &mut Tracer {
        self.tracer.as_mut().expect("tracing")
    }

    /// Converts a value to a node argument, plus its abstract value for shape rules.
    pub fn to_arg(&mut self, frame: &Frame, v: &Value, span: Span) -> EResult<(Arg, Meta)> {
        if let (Value::Proxy(n), Some(t)) = (v, self.tracer.as_ref()) {
            if !t.graph.contains(*n) {
                return Err(self.error(
                    frame,
                    span,
                    codes::UNSUPPORTED,
                    "a traced value kept from another trace (a cache filled by an earlier forward?)",
                ));
            }
        }
        if let (Value::Proxy(n), Some(t)) = (v, self.tracer.as_mut()) {
            t.use_node(*n);
        }
        Ok(match v {
            Value::Proxy(n) => (
                Arg::Node(*n),
                self.tracer
                    .as_ref()
                    .map(|t| t.meta(*n).clone())
                    .unwrap_or_default(),
            ),
            Value::None => (Arg::None, Meta::None),
            Value::Bool(b) => (
                Arg::Bool(*b),
                Meta::Scalar(Scalar::Bool(Some(*b)), ScalarOrigin::Const),
            ),
            Value::Int(i) => (Arg::Int(*i), Meta::int(*i)),
            Value::Float(f) => (
                Arg::Float(*f),
                Meta::Scalar(Scalar::Float(Some(*f)), ScalarOrigin::Const),
            ),
            Value::Str(s) => (Arg::Str(s.to_string()), Meta::Str(s.to_string())),
            Value::Ellipsis => (Arg::Ellipsis, Meta::Ellipsis),
            Value::Dtype(d) => (Arg::Dtype(d.as_str().to_string()), Meta::Dtype(*d)),
            Value::Tuple(items) => {
                let (args, metas) = self.to_args(frame, items, span)?;
                (Arg::Tuple(args), Meta::Seq(metas))
            }
            Value::List(items) => {
                let items = items.borrow().clone();
                let (args, metas) = self.to_args(frame, &items, span)?;
                (Arg::List(args), Meta::Seq(metas))
            }
            Value::Slice(s) => {
                let mut args = Vec::new();
                let mut metas = Vec::new();
                for part in s.iter() {
                    let (a, m) = self.to_arg(frame, part, span)?;
                    args.push(a);
                    metas.push(m);
                }
                let [a, b, c]: [Arg; 3] = args.try_into().expect("three parts");
                let [ma, mb, mc]: [Meta; 3] = metas.try_into().expect("three parts");
                (
                    Arg::Slice(Box::new([a, b, c])),
                    Meta::Slice(Box::new([ma, mb, mc])),
                )
            }
            Value::Param(p) if proxy::param_is_traced(self) => {
                let meta = Meta::tensor(
                    p.shape.as_ref().map(|s| crate::shapes::shape_of(s)),
                    p.dtype,
                );
                match self.tracer_mut().buffer_use(p, frame.file_id, span) {
                    Some(n) => (Arg::Node(n), meta),
                    None => (Arg::Repr(format!("{v:?}")), Meta::Unknown),
                }
            }
            Value::TensorConst(t) => {
                let meta = Meta::tensor(
                    t.shape.as_ref().map(|s| crate::shapes::shape_of(s)),
                    t.dtype,
                );
                let n = self
                    .tracer_mut()
                    .tensor_constant(t, meta.clone(), frame.file_id, span);
                (Arg::Node(n), meta)
            }
            Value::External(p) if p.starts_with("torch.") => match crate::shapes::DType::parse(p) {
                Some(d) => (Arg::Dtype(d.as_str().to_string()), Meta::Dtype(d)),
                None => (Arg::Repr(p.to_string()), Meta::Unknown),
            },
            Value::Dict(d) => {
                let items = d.borrow().clone();
                let text = items
                    .iter()
                    .map(|(k, v)| format!("{k:?}: {v:?}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                (Arg::Repr(format!("{{{text}}}")), Meta::Unknown)
            }
            other => (Arg::Repr(format!("{other:?}")), Meta::Unknown),
        })
    }

    pub(in crate::eval) fn to_args(
        &mut self,
        frame: &Frame,
        items: &[Value],
        span: Span,
    ) -> EResult<(Vec<Arg>, Vec<Meta>)> {
        let mut args = Vec::with_capacity(items.len());
        let mut metas = Vec::with_capacity(items.len());
        for it in items {
            let (a, m) = self.to_arg(frame, it, span)?;
            args.push(a);
            metas.push(m);
        }
        Ok((args, metas))
    }

    pub(in crate::eval) fn kw_args(
        &mut self,
        frame: &Frame,
        kwargs: &[(String, Value)],
        span: Span,
    ) -> EResult<(Vec<(String, Arg)>, Vec<(String, Meta)>)> {
        let mut args = Vec::new();
        let mut metas = Vec::new();
        for (k, v) in kwargs {
            let (a, m) = self.to_arg(frame, v, span)?;
            args.push((k.clone(), a));
            metas.push((k.clone(), m));
        }
        Ok((args, metas))
    }

    /// Records `call_function` of a canonical target (`torch.flatten`, `operator.add`).
    pub fn trace_function(
        &mut self,
        frame: &Frame,
        target: &str,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        span: Span,
    ) -> EResult<Value> {
        let (a, am) = self.to_args(frame, &args, span)?;
        let (k, km) = self.kw_args(frame, &kwargs, span)?;
        self.check_graph_size(frame, span)?;
        let short = if target.starts_with('<') {
            "unknown"
        } else {
            OpKey::Function(target).name()
        };
        let (meta, raised) = infer_call(short, &args, &am, &km);
        let meta = self.shape_scalar(meta, &am, short);
        let n = self.tracer_mut().add_node(
            short,
            Op::CallFunction,
            target.to_string(),
            a,
            k,
            meta,
            frame.file_id,
            span,
        );
        self.tracer_mut().graph.node_mut(n).shape_error = raised;
        Ok(Value::Proxy(n))
    }

    /// `x.view(sizes)` on a tensor whose layout the graph shows (`x.transpose(1, 2)` of a
    /// row-major one) that no strides can view as `sizes`: PyTorch's stride error.
    fn view_stride_error(&self, input: &Value, result: &Meta) -> Option<crate::shapes::ShapeError> {
        let Value::Proxy(id) = input else { return None };
        let graph = &self.tracer.as_ref()?.graph;
        let sizes: Vec<i64> = result
            .as_tensor()?
            .shape
            .as_ref()?
            .iter()
            .map(|d| d.known())
            .collect::<Option<_>>()?;
        let layout = layout::layout_of(graph, *id)?;
        if layout.viewed(&sizes).is_some() {
            return None;
        }
        Some(crate::shapes::ShapeError {
            message: format!(
                "view size is not compatible with input tensor's size and stride: {} with strides {:?} is not contiguous where {:?} merges or splits its dimensions; use .reshape(...) (or .contiguous() first)",
                crate::shapes::checks::fmt_shape(&layout.sizes.iter().map(|&d| crate::shapes::Dim::Known(d)).collect::<Vec<_>>()),
                layout.strides,
                sizes
            ),
            kind: crate::shapes::ShapeErrorKind::Size,
            arg: Some(0),
        })
    }

    /// A traced scalar whose value the shapes fix (`x.shape[1]` of an input of known shape).
    pub(in crate::eval) fn known_int(&self, v: &Value) -> Option<i64> {
        let Value::Proxy(n) = v else { return None };
        match self.tracer.as_ref()?.meta(*n) {
            Meta::Scalar(crate::shapes::Scalar::Int(Some(i)), _) => Some(*i),
            _ => None,
        }
    }

    /// A recorded call that certainly raises when it runs (a library's own check in forward,
    /// such as an einops pattern that does not fit its input): the node keeps the error, as a
    /// failed shape check does (FX301), and its result is a tensor of unknown shape, so the
    /// trace goes on and nothing after it is guessed.
    pub(in crate::eval) fn mark_raising(&mut self, call: &Value, message: String) {
        let (Value::Proxy(id), Some(t)) = (call, self.tracer.as_mut()) else {
            return;
        };
        let dtype = t
            .graph
            .inputs(*id)
            .into_iter()
            .find_map(|i| t.graph.node(i).meta.as_tensor().map(|m| m.dtype))
            .unwrap_or(DType::Float32);
        let node = t.graph.node_mut(*id);
        node.meta = Meta::tensor(None, dtype);
        node.shape_error = Some(crate::shapes::ShapeError {
            message,
            kind: crate::shapes::ShapeErrorKind::Size,
            arg: Some(0),
        });
    }

    /// `x.device`, `x.shape` on a traced tensor: torch.fx's `Attribute` proxy, whose
    /// `getattr` node exists from its first use on (and not at all if nothing uses it).
    pub fn trace_attribute(
        &mut self,
        frame: &Frame,
        obj: &Value,
        name: &str,
        span: Span,
    ) -> EResult<Value> {
        let (a, am) = self.to_args(frame, &[obj.clone(), Value::str(name)], span)?;
        self.check_graph_size(frame, span)?;
        let meta = rules::call(
            "getattr",
            &Inputs {
                args: &am,
                kwargs: &[],
            },
        );
        let n = self.tracer_mut().add_unplaced_node(
            "getattr",
            Op::CallFunction,
            "builtins.getattr".to_string(),
            a,
            meta,
            frame.file_id,
            span,
        );
        Ok(Value::Proxy(n))
    }

    /// Records `call_method` (`x.view(...)`, `x.size()`), receiver first.
    pub fn trace_method(
        &mut self,
        frame: &Frame,
        method: &str,
        recv: Value,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        span: Span,
    ) -> EResult<Value> {
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(recv);
        all.extend(args);
        let (a, am) = self.to_args(frame, &all, span)?;
        let (k, km) = self.kw_args(frame, &kwargs, span)?;
        self.check_graph_size(frame, span)?;
        let (mut meta, mut raised) = infer_call(method, &all, &am, &km);
        if method == "view" && raised.is_none() {
            if let Some(e) = self.view_stride_error(&all[0], &meta) {
                meta = rules::raised(&am);
                raised = Some(e);
            }
        }
        let meta = self.shape_scalar(meta, &am, method);
        let n = self.tracer_mut().add_node(
            method,
            Op::CallMethod,
            method.to_string(),
            a,
            k,
            meta,
            frame.file_id,
            span,
        );
        self.tracer_mut().graph.node_mut(n).shape_error = raised;
        Ok(Value::Proxy(n))
    }

    /// Graphs are bounded: an unbounded loop over traced values must end in a diagnostic, not
    /// in memory exhaustion.
    fn check_graph_size(&self, frame: &Frame, span: Span) -> EResult<()> {
        match self.tracer.as_ref() {
            Some(t) if t.graph.len() >= MAX_GRAPH_NODES => Err(self.error(
                frame,
                span,
                codes::BUDGET,
                format!("graph exceeds {MAX_GRAPH_NODES} nodes (an unbounded loop?)"),
            )),
            _ => Ok(()),
        }
    }

    /// Comparisons of data-derived scalars stay data-derived; `.item()` of anything is data.
    fn shape_scalar(&self, meta: Meta, inputs: &[Meta], op: &str) -> Meta {
        match meta {
            Meta::Scalar(s, ScalarOrigin::Shape)
                if inputs
                    .iter()
                    .any(|m| m.origin() == Some(ScalarOrigin::Data)) =>
            {
                Meta::Scalar(s, ScalarOrigin::Data)
            }
            Meta::Scalar(s, _) if op == "item" || op == "tolist" => {
                Meta::Scalar(s, ScalarOrigin::Data)
            }
            m => m,
        }
    }

    /// Records `call_module` for a leaf module (or an opaque submodule we could not build).
    pub fn trace_module(
        &mut self,
        frame: &Frame,
        module: &Value,
        args: Vec<Value>,
        kwargs: Vec<(String, Value)>,
        span: Span,
    ) -> EResult<Value> {
        let (path, class, obj) = match module {
            Value::Object(o) => {
                let path = self
                    .tracer
                    .as_ref()
                    .and_then(|t| t.module_paths.get(&o.id).cloned());
                let Some(path) = path else {
                    if let Some(v) = self.trace_unregistered_leaf(frame, o, &args, &kwargs, span) {
                        return v;
                    }
                    return Err(self.error(
                        frame,
                        span,
                        codes::UNSUPPORTED,
                        format!(
                            "module `{}` is not a submodule of the traced model",
                            o.class_name()
                        ),
                    ));
                };
                let class = match &o.kind {
                    ObjKind::Leaf(c) => c.clone(),
                    _ => o.class_name(),
                };
                (path, class, Some(o.clone()))
            }
            Value::Unknown(u) => match &u.path {
                Some(p) => (p.clone(), String::new(), None),
                None => {
                    return Err(self.error(
                        frame,
                        span,
                        codes::UNSUPPORTED,
                        "call of an unknown module",
                    ))
                }
            },
            _ => {
                return Err(self.error(
                    frame,
                    span,
                    codes::UNSUPPORTED,
                    "call_module on a non-module",
                ))
            }
        };
        let (a, am) = self.to_args(frame, &args, span)?;
        let (k, km) = self.kw_args(frame, &kwargs, span)?;
        self.check_graph_size(frame, span)?;
        if let (Some(o), Some(Arg::Node(input))) = (&obj, a.first()) {
            let t = self.tracer_mut();
            let unknown_input = t.graph.node(*input).op == Op::Placeholder
                && matches!(t.meta(*input), Meta::Tensor(m) if m.shape.is_none());
            if unknown_input && !t.rank_hints.iter().any(|(n, _)| n == input) {
                let attr_meta = |name: &str| -> Meta {
                    o.get(name).map(|v| value_meta(&v)).unwrap_or(Meta::Unknown)
                };
                if let Some(h) = rank_hint(&class, &attr_meta) {
                    t.rank_hints.push((*input, h));
                }
            }
        }
        let (meta, raised) = match &obj {
            // which argument is which is not known (`infer_call`)
            Some(_) if args.iter().any(Value::is_unknown_spread) => (Meta::Unknown, None),
            Some(o) => {
                let attr_meta = |name: &str| -> Meta {
                    o.get(name).map(|v| value_meta(&v)).unwrap_or(Meta::Unknown)
                };
                checked(
                    rules::infer_module(
                        &ModuleInfo {
                            class: &class,
                            attr: &attr_meta,
                        },
                        &Inputs {
                            args: &am,
                            kwargs: &km,
                        },
                    ),
                    &am,
                )
            }
            None => match am.first() {
                Some(Meta::Tensor(t)) => (Meta::tensor(None, t.dtype), None),
                _ => (Meta::Unknown, None),
            },
        };
        let n = self.tracer_mut().add_node(
            &path,
            Op::CallModule,
            path.clone(),
            a,
            k,
            meta,
            frame.file_id,
            span,
        );
        let inplace = obj
            .as_ref()
            .and_then(|o| o.get("inplace"))
            .map(|v| matches!(v, Value::Bool(true)))
            .unwrap_or(false);
        let node = self.tracer_mut().graph.node_mut(n);
        node.mutates_input = inplace;
        node.shape_error = raised;
        if !class.is_empty() {
            node.module_class = Some(class);
        }
        Ok(Value::Proxy(n))
    }

    /// A stateless torch.nn leaf built in forward (`nn.Softmax(dim=-1)(x)`): it is no
    /// submodule, so no `call_module`; Dynamo inlines its forward, which calls the functional
    /// form with the module's settings. None for other modules (and for keyword inputs).
    fn trace_unregistered_leaf(
        &mut self,
        frame: &Frame,
        o: &Rc<super::value::Object>,
        args: &[Value],
        kwargs: &[(String, Value)],
        span: Span,
    ) -> Option<EResult<Value>> {
        let ObjKind::Leaf(class) = &o.kind else {
            return None;
        };
        let [x] = args else {
            return None;
        };
        if !kwargs.is_empty() {
            return None;
        }
        let attr = |name: &str| o.get(name).unwrap_or(Value::None);
        let x = x.clone();
        let (target, args, kwargs): (&str, Vec<Value>, Vec<(String, Value)>) = match class.as_str()
        {
            "Identity" => return Some(Ok(x)),
            "Softmax" | "LogSoftmax" | "Softmin" => {
                let f = match class.as_str() {
                    "Softmax" => "torch.nn.functional.softmax",
                    "LogSoftmax" => "torch.nn.functional.log_softmax",
                    _ => "torch.nn.functional.softmin",
                };
                (
                    f,
                    vec![x, attr("dim")],
                    vec![("_stacklevel".into(), Value::Int(5))],
                )
            }
            "ReLU" | "SiLU" | "Mish" => {
                let f = match class.as_str() {
                    "ReLU" => "torch.nn.functional.relu",
                    "SiLU" => "torch.nn.functional.silu",
                    _ => "torch.nn.functional.mish",
                };
                let inplace = o.get("inplace").unwrap_or(Value::Bool(false));
                (f, vec![x], vec![("inplace".into(), inplace)])
            }
            "GELU" => {
                let approximate = o.get("approximate").unwrap_or_else(|| Value::str("none"));
                (
                    "torch.nn.functional.gelu",
                    vec![x],
                    vec![("approximate".into(), approximate)],
                )
            }
            "Tanh" => ("torch.tanh", vec![x], vec![]),
            "Sigmoid" => ("torch.sigmoid", vec![x], vec![]),
            _ => return None,
        };
        Some(self.trace_function(frame, target, args, kwargs, span))
    }

    /// A parameter or buffer read in forward becomes a `get_attr` of its qualified path.
    pub fn trace_param(
        &mut self,
        frame: &Frame,
        owner: &Rc<Object>,
        name: &str,
        p: &Rc<super::value::Param>,
        span: Span,
    ) -> Value {
        let Some(t) = self.tracer.as_mut() else {
            return Value::unknown("parameter");
        };
        let base = t.module_paths.get(&owner.id).cloned().unwrap_or_default();
        let path = if base.is_empty() {
            name.to_string()
        } else {
            format!("{base}.{name}")
        };
        if p.is_buffer {
            t.note_buffer(p, path);
            return Value::Param(p.clone());
        }
        let meta = Meta::tensor(
            p.shape.as_ref().map(|s| crate::shapes::shape_of(s)),
            p.dtype,
        );
        Value::Proxy(t.get_attr(&path, meta, frame.file_id, span))
    }
}

/// The abstract value of a constant Python value (for module attributes in shape rules).
pub fn value_meta(v: &Value) -> Meta {
    match v {
        Value::None => Meta::None,
        Value::Bool(b) => Meta::Scalar(Scalar::Bool(Some(*b)), ScalarOrigin::Const),
        Value::Int(i) => Meta::int(*i),
        Value::Float(f) => Meta::Scalar(Scalar::Float(Some(*f)), ScalarOrigin::Const),
        Value::Str(s) => Meta::Str(s.to_string()),
        Value::Tuple(t) => Meta::Seq(t.iter().map(value_meta).collect()),
        Value::List(l) => Meta::Seq(l.borrow().iter().map(value_meta).collect()),
        Value::Dtype(d) => Meta::Dtype(*d),
        Value::Param(p) => Meta::tensor(
            p.shape.as_ref().map(|s| crate::shapes::shape_of(s)),
            p.dtype,
        ),
        _ => Meta::Unknown,
    }
}

/// The shape rule's result for a call of `op` and the check that failed, if one did. Where a
/// `*args` of unknown length stands among the arguments (`x.view(*lead, -1)`), which argument
/// is which is not known: nothing is checked, and a tensor result keeps only its dtype (it is
/// still a tensor, which the break rules read), its shape unknown.
fn infer_call(
    op: &str,
    args: &[Value],
    am: &[Meta],
    km: &[(String, Meta)],
) -> (Meta, Option<crate::shapes::ShapeError>) {
    let inferred = rules::infer(
        op,
        &Inputs {
            args: am,
            kwargs: km,
        },
    );
    if !args.iter().any(Value::is_unknown_spread) {
        return checked(inferred, am);
    }
    let dtype = match (&inferred, am.first()) {
        (Ok(Meta::Tensor(t)), _) | (Err(_), Some(Meta::Tensor(t))) => Some(t.dtype),
        _ => None,
    };
    (dtype.map_or(Meta::Unknown, |d| Meta::tensor(None, d)), None)
}

/// A rule's answer as a node keeps it: a call that will raise has a tensor of unknown shape
/// (or an unknown value) as its meta, and the error beside it.
fn checked(
    r: Result<Meta, crate::shapes::ShapeError>,
    args: &[Meta],
) -> (Meta, Option<crate::shapes::ShapeError>) {
    match r {
        Ok(m) => (m, None),
        Err(e) => (rules::raised(args), Some(e)),
    }
}

pub fn default_input_meta() -> Meta {
    Meta::tensor(None, DType::Float32)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use crate::analysis::{analyze_in_project, GraphOptions};
    use crate::semantic::Project;

    /// `x.view(*lead, 4, -1)` where `lead` is a traced size of unknown length: which argument
    /// is which is unknown, so the result's shape is unknown and nothing downstream is reported
    /// as a shape error (it had been taken as a 3-d view, and the `permute` to 4 dims as one).
    #[test]
    fn a_spread_of_unknown_length_leaves_the_shape_unknown() {
        let text = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(16, 16)\n\n    def forward(self, x):\n        lead = x.shape[:-1]\n        y = self.fc(x).view(*lead, 4, -1)\n        return y.permute(0, 3, 1, 2)\n";
        let mut project = Project::new("/virtual");
        project.add_overlay("/virtual/m.py", Arc::from(text), None);
        let analysis = analyze_in_project(
            project,
            Path::new("/virtual/m.py"),
            &GraphOptions::default(),
        )
        .expect("the file is analysed");
        let g = &analysis
            .graphs
            .iter()
            .find(|g| g.class == "M")
            .expect("M traced")
            .graph;
        let view = g
            .nodes()
            .find(|(_, n)| n.target == "view")
            .map(|(_, n)| n)
            .expect("the view is in the graph");
        assert!(
            matches!(&view.meta, crate::shapes::Meta::Tensor(t) if t.shape.is_none()),
            "{:?}",
            view.meta
        );
        let errors: Vec<_> = g
            .nodes()
            .filter_map(|(_, n)| n.shape_error.as_ref().map(|e| e.message.clone()))
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        assert!(g.nodes().any(|(_, n)| n.target == "permute"));
    }
}
