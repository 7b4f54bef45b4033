//! What tracing one forward produces, as plain data every stage above reads: the graph with its
//! graph-break regions and events, the constructed module tree, the user's input shapes, and
//! the graph-break findings the `breaks` pass attaches. Below every stage that consumes a
//! trace (breaks, fixes, passes, exec, render) and the driver that produces one (`analysis`).
//!
//! What tracing produces and every stage above reads: `GraphResult` (graph, regions, events, module
//! tree, findings), `FileAnalysis`, `Finding` (`site_key()` is the one de-duplication key),
//! `InputSpec`.

use std::sync::Arc;

use serde::Serialize;

use crate::diagnostics::{Diagnostic, Rule, Severity};
use crate::graph::{Graph, NodeId};
use crate::passes::PassRecord;
use crate::semantic::{FileId, Project};
use crate::shapes::DType;
use crate::syntax::Span;

/// A forward input given by the user: `NAME=VALUE`, where VALUE is the shape shorthand of a
/// tensor (`1x3x224x224`, `2x16:i64`, empty for a 0-d tensor) or a Python expression (`False`,
/// `3`, `'mode'`, `[(1, 4, 4)]`, `{'text_embeds': torch.randn(2, 8)}`, `torch.zeros(2, 3,
/// dtype=torch.long)`).
///
/// Some VALUEs read both ways: `5` is a 1-D tensor of 5 elements or the int 5, `2,3` a 2×3
/// tensor or the tuple `(2, 3)`. Forward's signature decides when the trace binds the input
/// (`eval::trace::inputs`): a parameter annotated as a Python value (`int`, `float`, `bool`,
/// `str`, a fixed tuple of them, or one of them `| None`), or whose default is a Python
/// number, bool or str, takes the Python value; any other takes the tensor, as `--input` did
/// before it read Python.
///
/// A Python expression is evaluated by the analyser's evaluator in the namespace of the module
/// that defines forward (its imports: `torch` is usually one). Every tensor it makes is an input
/// of the graph, a placeholder of that shape and dtype, never a constant: the one tensor of
/// `x=torch.randn(2, 4)` is the placeholder `x`, as `x=2x4` is, and the tensors nested in a
/// list, tuple or dict are placeholders `NAME_1`, `NAME_2`, ... numbered as torch.fx numbers
/// the leaves of a `concrete_args` structure (every leaf counts, None is no leaf). A Python
/// value without tensors reaches forward as a caller's argument would; its parameter keeps its
/// placeholder with the value as its default, as a defaulted parameter's does.
#[derive(Clone, Debug, PartialEq)]
pub struct InputSpec {
    pub name: String,
    /// VALUE as the shape shorthand, when it reads as one.
    pub tensor: Option<TensorSpec>,
    /// VALUE as the text of a Python expression, when it parses as one.
    pub python: Option<String>,
}

/// A tensor of the shape shorthand: its shape and dtype.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorSpec {
    pub shape: Vec<i64>,
    pub dtype: DType,
}

impl InputSpec {
    /// A tensor input of this shape and dtype (what the shape shorthand gives).
    pub fn tensor(name: impl Into<String>, shape: Vec<i64>, dtype: DType) -> InputSpec {
        InputSpec {
            name: name.into(),
            tensor: Some(TensorSpec { shape, dtype }),
            python: None,
        }
    }

    /// A Python expression input; its text must already be a valid expression
    /// ([`InputSpec::parse_value`] checks).
    fn python(name: &str, text: &str) -> InputSpec {
        InputSpec {
            name: name.to_string(),
            tensor: None,
            python: Some(text.to_string()),
        }
    }

    /// Reads VALUE for the argument `name`: the shape shorthand, a Python expression, or both
    /// when it reads both ways. The error names the argument and says what is wrong.
    pub fn parse_value(name: &str, value: &str) -> Result<InputSpec, String> {
        if !is_identifier(name) {
            return Err(if name.is_empty() {
                format!("expected NAME=VALUE with an argument name before `=`, got `={value}`")
            } else {
                format!("`{name}` is not a Python argument name")
            });
        }
        let tensor = shape_shorthand(value);
        // The empty VALUE is the 0-d tensor; as Python it would be no expression at all.
        let python = if value.trim().is_empty() {
            Err(String::new())
        } else {
            python_expression(value)
        };
        match (tensor, python) {
            (Ok(tensor), Ok(())) => Ok(InputSpec {
                tensor: Some(tensor),
                ..InputSpec::python(name, value)
            }),
            (Ok(tensor), Err(_)) => Ok(InputSpec {
                name: name.to_string(),
                tensor: Some(tensor),
                python: None,
            }),
            (Err(_), Ok(())) => Ok(InputSpec::python(name, value)),
            // Say what the user most likely meant to write: a VALUE made of digits, `x`s and
            // a `:dtype` was meant as a shape.
            (Err(shape), Err(_)) if looks_like_shorthand(value) => {
                Err(format!("input `{name}`: {shape}"))
            }
            (Err(_), Err(python)) => Err(format!(
                "input `{name}`: `{value}` is neither a shape (e.g. 1x3x224x224 or 2x16:i64) \
                 nor a Python expression: {python}"
            )),
        }
    }

    /// VALUE as the user would write it again (`2x16:int64`, `False`).
    pub fn value_text(&self) -> String {
        match (&self.python, &self.tensor) {
            (Some(p), _) => p.clone(),
            (None, Some(t)) => format!(
                "{}:{}",
                t.shape
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("x"),
                t.dtype.as_str()
            ),
            (None, None) => String::new(),
        }
    }
}

impl std::fmt::Display for InputSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.name, self.value_text())
    }
}

impl std::str::FromStr for InputSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, value) = s
            .split_once('=')
            .ok_or_else(|| format!("expected NAME=VALUE (a shape or a Python value), got `{s}`"))?;
        InputSpec::parse_value(name.trim(), value.trim())
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// `1x3x224x224`, `2,16`, `2x16:i64`, or empty (a 0-d tensor). A negative size is never a
/// shape (`-1` is the int).
fn shape_shorthand(value: &str) -> Result<TensorSpec, String> {
    let (shape, dtype) = match value.split_once(':') {
        Some((sh, dt)) => (
            sh,
            DType::parse(dt.trim()).ok_or_else(|| format!("unknown dtype `{}`", dt.trim()))?,
        ),
        None => (value, DType::Float32),
    };
    let shape = shape.trim();
    let dims: Result<Vec<i64>, _> = if shape.is_empty() {
        Ok(vec![])
    } else {
        shape
            .split(['x', 'X', ','])
            .map(|d| d.trim().parse::<u32>().map(i64::from))
            .collect()
    };
    let shape = dims.map_err(|_| format!("bad shape `{shape}` (expected e.g. 1x3x224x224)"))?;
    Ok(TensorSpec { shape, dtype })
}

/// Whether VALUE was meant as the shape shorthand: sizes and separators, then maybe a dtype.
fn looks_like_shorthand(value: &str) -> bool {
    let shape = value.split_once(':').map_or(value, |(s, _)| s);
    value.contains(':') && !shape.contains(['(', '[', '{', '\'', '"'])
        || shape
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, 'x' | 'X' | ',' | ' '))
}

/// Whether `text` is one Python expression (`1, 2` is the tuple, as after `x = `): Ok, or the
/// syntax error.
fn python_expression(text: &str) -> Result<(), String> {
    use crate::syntax::KindExt;
    // On lines of its own, so a trailing comment cannot swallow the parenthesis.
    let wrapped = format!("(\n{text}\n)");
    let tree = crate::syntax::parse(&wrapped, None);
    if let Some((span, message)) = crate::syntax::first_error(&tree) {
        // where in the user's text (the wrapper adds two bytes before it)
        let at = span.start.saturating_sub(2);
        let mut message = match text.get(at..).filter(|rest| !rest.trim().is_empty()) {
            Some(rest) if at > 0 || span.end < 2 + text.len() => {
                let rest: String = rest.chars().take(24).collect();
                format!("{message} at `{rest}`")
            }
            Some(_) => message,
            None => format!("{message} at the end"),
        };
        let count = |set: &[char]| text.chars().filter(|c| set.contains(c)).count();
        if count(&['(', '[', '{']) > count(&[')', ']', '}']) {
            message.push_str(" (an unclosed bracket?)");
        }
        return Err(message);
    }
    let root = tree.root_node();
    let statement = root
        .named_child(0)
        .filter(|_| root.named_child_count() == 1);
    let expression = statement
        .filter(|s| s.kind_name() == "expression_statement" && s.named_child_count() == 1)
        .and_then(|s| s.named_child(0));
    match expression {
        Some(e) if matches!(e.kind_name(), "parenthesized_expression" | "tuple") => Ok(()),
        _ => Err("not a single expression".to_string()),
    }
}

/// Everything the analysis of one file found: its graphs and the analysis limits it hit.
#[derive(Debug)]
pub struct FileAnalysis {
    pub project: Arc<Project>,
    pub file: FileId,
    /// Shared: the language server's session keeps the graphs of classes an edit did not
    /// touch, and hands the same ones out again.
    pub graphs: Vec<Arc<GraphResult>>,
    pub diagnostics: Vec<Diagnostic>,
}

/// One traced forward.
#[derive(Clone, Debug)]
pub struct GraphResult {
    /// `SimpleNet.forward`
    pub name: String,
    pub class: String,
    pub entry: Option<String>,
    pub file: FileId,
    /// The class definition's span (per-class mode) in `file`.
    pub class_span: Span,
    pub graph: Graph,
    pub regions: Vec<Region>,
    pub events: Vec<TraceEvent>,
    /// Where Dynamo would break this graph (GraphBreakAnnotationPass), in source order.
    pub breaks: Vec<Finding>,
    /// Set when tracing stopped early; the graph holds what was traced until then.
    pub error: Option<Diagnostic>,
    /// Per-class mode: `error`'s statement ran without stopping in another class's trace of
    /// the file, which called this class with the values it really gets
    /// (`analysis::followed_elsewhere`). The stop comes from the values per-class mode chose
    /// for this class alone (an optional input left None), so it is no limit of the file's;
    /// the graph still says where it stopped.
    pub error_followed_elsewhere: bool,
    /// Per-class mode: the class could not be built (or only partly), reported on its name in
    /// `file` with the cause, which often lies in a library (`FX908`).
    pub build_failure: Option<Diagnostic>,
    /// The constructed module tree, root first (hover on `self.x = nn.Linear(...)` reads it).
    pub modules: Vec<ModuleSummary>,
    /// The pass log once `optimize` ran (empty with `--no-passes`); None for the traced graph.
    pub passes: Option<Vec<PassRecord>>,
    /// Whether the optimized graph came from the cache.
    pub from_cache: bool,
    /// Breaks met only when forward runs under a flag (gradient checkpointing in training,
    /// `output_attentions`): found on a retrace with it set, their messages name it, and
    /// `breaks::annotate` adds the ones the default trace does not have. They refer to no node
    /// of `graph`.
    pub flagged_breaks: Vec<Finding>,
    /// The forward arguments whose shape and dtype the user gave (`--input`, example-inputs):
    /// their dtypes are the user's word, not a default the analyser picked.
    pub given_inputs: Vec<String>,
    /// The names assignments bound while tracing, in the file of the traced class only (the
    /// editor's inlay hints): one per name and execution, in execution order.
    pub bindings: Vec<Binding>,
    /// Values Dynamo guards on that forward changes: the next call recompiles.
    pub guard_changes: Vec<GuardChange>,
    /// The guards forward's Python value arguments get: a call with another value
    /// recompiles.
    pub argument_guards: Vec<ArgumentGuard>,
    /// Every value from outside forward that Dynamo guards on (module attributes, globals),
    /// at its first read, whether or not forward changes it: hover on `def forward` lists them.
    pub state_guards: Vec<StateGuard>,
}

/// A value forward reads from outside itself (an int, bool, str, None, tuple, list or dict
/// attribute of a module of the tree, or a global) before writing it: Dynamo makes it a
/// constant of the graph and guards on it.
#[derive(Clone, Debug, PartialEq)]
pub struct StateGuard {
    /// The guard in Dynamo's words: `self.num_heads == 8`, `self._modules['drop'].training ==
    /// False`, `len(self.history) == 0`, `G['SCALE'] == 2`.
    pub guard: String,
    /// Where forward first read it.
    pub file: FileId,
    pub span: Span,
    pub call_chain: Vec<(FileId, Span)>,
}

/// One name bound by an assignment statement while tracing (`x = self.fc(h)`, `x += y`,
/// `q, k = t.chunk(2)`), each time it ran: a statement in a loop or in a function called twice
/// has one per run.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub file: FileId,
    /// The whole assignment statement.
    pub statement: Span,
    /// The name bound.
    pub target: Span,
    /// The node of the value bound; None when it is no traced value (a constant, a list, an
    /// unknown value).
    pub node: Option<NodeId>,
}

/// A value forward reads from outside itself (a module attribute, a global) before it writes
/// it, and that holds another value when forward returns: Dynamo made the first value a
/// constant of the graph and guards on it, so the next call fails the guard and recompiles.
#[derive(Clone, Debug, PartialEq)]
pub struct GuardChange {
    /// The guard in Dynamo's words: `self.step == 0`, `G['SEEN'] == 0`, `not self.history`.
    pub guard: String,
    /// Python's repr of the value when forward first read it, and when forward returned.
    pub before: String,
    pub after: String,
    /// Where forward first read it (the guard's line in Dynamo's log).
    pub file: FileId,
    pub span: Span,
    pub call_chain: Vec<(FileId, Span)>,
    /// Whether the second call changes it again to a value not seen before (a counter:
    /// every call recompiles) or not (a flag set once: one recompile); None when the second
    /// call was not traced.
    pub every_call: Option<bool>,
}

/// The first guard Dynamo installs on one of forward's Python value arguments (a flag, a
/// number, a string, None, a list, tuple or dict), where forward first uses it in a way
/// Dynamo specialises on: a caller passing another value fails it and recompiles.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgumentGuard {
    /// forward's parameter
    pub argument: String,
    /// The guard in Dynamo's words: `scale == 1.0`, `len(xs) == 1`, `opts['mode'] == 'plain'`.
    pub guard: String,
    /// The use that installs it (the guard's line in Dynamo's log).
    pub file: FileId,
    pub span: Span,
    pub call_chain: Vec<(FileId, Span)>,
}

/// One module of the constructed tree, by qualified path (`""` is the root, `layer1.0.conv1`).
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleSummary {
    pub path: String,
    pub class: String,
    /// Direct parameters and buffers, in registration order.
    pub params: Vec<ParamSummary>,
    /// Names of direct child modules.
    pub children: Vec<String>,
    /// A leaf module's constructor arguments and catalogue attributes (`kernel_size`,
    /// `stride`, `eps`, …) as plain constants; empty for user modules and containers.
    pub hyper: Vec<(String, HyperValue)>,
    /// A torch.nn leaf (`call_module` target) rather than a user module or container.
    pub leaf: bool,
}

/// A hyperparameter of a leaf module, as far as constructor evaluation determined it.
#[derive(Clone, Debug, PartialEq)]
pub enum HyperValue {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<HyperValue>),
    /// Not a plain constant (or not known statically).
    Other(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParamSummary {
    pub name: String,
    pub shape: Option<Vec<i64>>,
    pub dtype: DType,
    pub buffer: bool,
    /// Made by `nn.Buffer(...)` (see `eval::value::Param::nn_buffer`).
    pub nn_buffer: bool,
}
/// A region of the graph that Dynamo would split: where control flow depends on tensor data.
#[derive(Clone, Debug)]
pub struct Region {
    pub id: usize,
    /// `if`, `elif`, `while`, `conditional expression`, `bool()`, …
    pub kind: String,
    pub cause: NodeId,
    pub file: FileId,
    pub span: Span,
    pub call_chain: Vec<(FileId, Span)>,
}

/// The `detail` of a `Convert` event for a tensor used as a slice bound (`__index__`).
pub const SLICE_BOUND: &str = "slice bound";

/// The `detail` of a `SkippedCall` event for `copy.copy` of a tensor
/// (`Behaviour::CopyOfTensor`).
pub const COPY_OF_TENSOR: &str = "copy.copy of a tensor";

/// The `detail` of a `SkippedCall` event for `copy.copy` of a value neither a tensor nor a
/// builtin container (an int, a tuple, a config object): a break on torch 2.8 only
/// (`Behaviour::CopyOfValue`).
pub const COPY_OF_VALUE: &str = "copy.copy of a value";

/// What the tracer saw that a graph-break rule may classify; `detail` says more (the method
/// name, the called path, why a call is unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// `obj.attr = value` on a module during forward.
    SetAttr,
    /// A Tensor method call (`detail`: its name).
    Method,
    /// A call the evaluator could not follow (`detail`: why).
    UnknownCall,
    /// `copy.deepcopy` of a tensor.
    Deepcopy,
    /// `int(t)`, `float(t)`, `bool(t)` and the like on a tensor (`detail`: the conversion).
    Convert,
    /// A wall-clock read (`time.time()`, `perf_counter()`).
    Time,
    /// `torch._dynamo.graph_break()`.
    GraphBreak,
    /// A `logging` call.
    Log,
    /// A call into a module outside the project and torch (`detail`: its path).
    ExternalCall,
    /// A generator function was called (`detail`: `root` when forward itself is one).
    Generator,
    /// A `yield` evaluated while tracing.
    Yield,
    /// `print(...)`.
    Print,
    /// A `class` statement executed in forward.
    ClassDef,
    /// A call of a function Dynamo keeps on its skip list (`copy.copy` of a container;
    /// `detail`: its path, [`COPY_OF_TENSOR`] or [`COPY_OF_VALUE`]).
    SkippedCall,
    /// A numpy call on constant arguments (`detail`: its path): Dynamo still routes it
    /// through `torch._numpy`.
    NumpyCall,
    /// A call of a `torch.compiler.disable`d function (`detail`: `function` or `method`).
    DisabledCall,
    /// `F.apply(...)` of a `torch.autograd.Function` subclass given one tensor twice (`detail`:
    /// the two argument positions, `0,1`).
    AutogradApplyDuplicate,
    /// `self.name = t` on a module during forward with a traced tensor `t` (`detail`: the
    /// node's name).
    ModuleTensorAttr,
    /// `nn.Module.__init__` (or a torch.nn base's) run by a module built during forward
    /// (`detail`: its class).
    ModuleInit,
    /// A parameter made during forward: `nn.Parameter(...)`, or a torch.nn module whose
    /// construction makes one (`detail`: the class).
    ParameterCreated,
    /// A `with` statement entering a manager made by an external callable (`detail`: that
    /// callable's path, `torch.device`).
    ExternalManager,
    /// A list, set or dict comprehension over a list or a dict whose frame holds torch state
    /// (`detail`: the iterator's type, `?` appended when the Python version is not known).
    Comprehension,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::SetAttr => "setattr",
            EventKind::Method => "method",
            EventKind::UnknownCall => "unknown_call",
            EventKind::Deepcopy => "deepcopy",
            EventKind::Convert => "convert",
            EventKind::Time => "time",
            EventKind::GraphBreak => "graph_break",
            EventKind::Log => "log",
            EventKind::ExternalCall => "external_call",
            EventKind::Generator => "generator",
            EventKind::Yield => "yield",
            EventKind::Print => "print",
            EventKind::ClassDef => "class_def",
            EventKind::SkippedCall => "skipped_call",
            EventKind::NumpyCall => "numpy_call",
            EventKind::DisabledCall => "disabled_call",
            EventKind::AutogradApplyDuplicate => "autograd_apply_duplicate",
            EventKind::ModuleTensorAttr => "module_tensor_attr",
            EventKind::ModuleInit => "module_init",
            EventKind::ParameterCreated => "parameter_created",
            EventKind::ExternalManager => "external_manager",
            EventKind::Comprehension => "comprehension",
        }
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something that happened during tracing that later stages classify (e.g. a `yield`).
#[derive(Clone, Debug)]
pub struct TraceEvent {
    pub kind: EventKind,
    pub file: FileId,
    pub span: Span,
    pub call_chain: Vec<(FileId, Span)>,
    pub detail: String,
    /// Graph nodes recorded before the event: what a break here would separate from the rest.
    pub nodes_before: usize,
    /// The condition of the innermost `if` the event happened in whose value staticfx could
    /// not evaluate (a rank or a config field it does not know): whether the event happens at
    /// all depends on it.
    pub unknown_condition: Option<(FileId, Span)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// `rule.code()`, kept as a field for the renderers.
    pub code: &'static str,
    #[serde(skip)]
    pub rule: Rule,
    /// Dynamo's graph-break id (`GB0170`); empty for a possible break (FX190).
    pub gb_id: &'static str,
    pub gb_type: &'static str,
    pub message: String,
    pub hint: String,
    pub severity: Severity,
    #[serde(skip)]
    pub file: FileId,
    pub span: Span,
    /// 1-based line and character column of `span.start` (and of `span.end`).
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    /// The call chain from `forward` to the site, outermost first.
    #[serde(skip)]
    pub related: Vec<(FileId, Span, String)>,
    /// Whether the `fixes` stage may fix it: the rule has a fix and the rule found the site
    /// fits it (a `.item()` whose number only feeds tensors, a branch on a tensor condition).
    pub fix_available: bool,
    /// Graph nodes traced after the break: what Dynamo would put in another graph (or run eagerly).
    pub impact_nodes: usize,
    pub region: Option<usize>,
    /// The graph node that causes the break, when there is one.
    #[serde(skip)]
    pub node: Option<NodeId>,
    /// For a break found at a trace event: how many graph nodes were recorded before it.
    #[serde(skip)]
    pub nodes_before: Option<usize>,
}

impl Finding {
    /// What makes two findings the same report: one per rule, gb id and line of a file, the
    /// way Dynamo reports one break per site however often it is hit and `# noqa` silences
    /// a line. Every place that de-duplicates findings uses this key.
    pub fn site_key(&self) -> (FileId, usize, Rule, &'static str) {
        (self.file, self.line, self.rule, self.gb_id)
    }

    pub fn url(&self) -> Option<String> {
        crate::diagnostics::gb_url(self.gb_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> InputSpec {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn error(s: &str) -> String {
        s.parse::<InputSpec>().expect_err(s)
    }

    #[test]
    fn shape_shorthand_is_a_tensor_only() {
        let i = spec("x=1x3x224x224");
        assert_eq!(i.name, "x");
        assert_eq!(
            i.tensor,
            Some(TensorSpec {
                shape: vec![1, 3, 224, 224],
                dtype: DType::Float32
            })
        );
        assert_eq!(i.python, None);
        let ids = spec("ids=2x16:i64");
        assert_eq!(ids.tensor.as_ref().unwrap().dtype, DType::Int64);
        assert_eq!(ids.python, None);
        // the empty VALUE is a 0-d tensor, never Python's empty tuple
        let scalar = spec("t=");
        assert_eq!(scalar.tensor.unwrap().shape, Vec::<i64>::new());
        assert_eq!(scalar.python, None);
    }

    #[test]
    fn python_literals_are_python_only() {
        for (text, value) in [
            ("return_dict=False", "False"),
            ("mask=None", "None"),
            ("scale=1.5", "1.5"),
            ("mode='fast'", "'fast'"),
            ("shapes=[(1, 4, 4)]", "[(1, 4, 4)]"),
            (
                "kw={'scale': 1.0, 'ids': [1, 2]}",
                "{'scale': 1.0, 'ids': [1, 2]}",
            ),
            (
                "x=torch.zeros(2, 3, dtype=torch.long)",
                "torch.zeros(2, 3, dtype=torch.long)",
            ),
            // a negative size is no shape
            ("offset=-1", "-1"),
        ] {
            let i = spec(text);
            assert_eq!(i.python.as_deref(), Some(value), "{text}");
            assert_eq!(i.tensor, None, "{text}");
        }
    }

    #[test]
    fn values_that_read_both_ways_keep_both() {
        let steps = spec("steps=5");
        assert_eq!(steps.tensor.unwrap().shape, vec![5]);
        assert_eq!(steps.python.as_deref(), Some("5"));
        // `2,3` is the tuple (2, 3) in Python, as after `size = `
        let size = spec("size=2,3");
        assert_eq!(size.tensor.unwrap().shape, vec![2, 3]);
        assert_eq!(size.python.as_deref(), Some("2,3"));
    }

    #[test]
    fn bad_values_say_what_is_wrong_and_name_the_argument() {
        let e = error("x=torch.randn(2, 8");
        assert!(
            e.starts_with("input `x`: `torch.randn(2, 8` is neither a shape"),
            "{e}"
        );
        assert!(e.ends_with("syntax error (an unclosed bracket?)"), "{e}");
        let e = error("x=[1, 2");
        assert!(e.ends_with("at the end (an unclosed bracket?)"), "{e}");
        let e = error("kw={'a': 1,, 'b': 2}");
        assert!(e.ends_with("syntax error at `,, 'b': 2}`"), "{e}");
        let e = error("ids=2x16:i65");
        assert_eq!(e, "input `ids`: unknown dtype `i65`");
        let e = error("x=1x3x");
        assert!(e.starts_with("input `x`: bad shape `1x3x`"), "{e}");
        // a statement, not an expression
        let e = error("x=import os");
        assert!(e.starts_with("input `x`:"), "{e}");
        let e = error("x=1) + (2");
        assert!(e.contains("not a single expression"), "{e}");
        assert!(error("1x3").contains("expected NAME=VALUE"));
        assert!(error("=1x3").contains("argument name"));
        assert_eq!(error("x.y=3"), "`x.y` is not a Python argument name");
    }

    #[test]
    fn written_again_it_reads_the_same() {
        for text in [
            "x=2x16:int64",
            "flag=False",
            "steps=5",
            "x=torch.randn(1, 4)",
        ] {
            let i = spec(text);
            assert_eq!(spec(&i.to_string()), i, "{text}");
        }
    }
}
