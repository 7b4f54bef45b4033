//! Analysis limits of per-class analysis, one mechanism per test: a limit is shown where a
//! value really is unknown, and not where Python or torch tell what it is.

use staticfx::analysis::{analyze_file, FileAnalysis, GraphOptions};
use staticfx::graph::{Arg, Graph, Op};
use staticfx::ide::{diagnostics, Filter};

fn analyse(text: &'static str) -> FileAnalysis {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.py");
    std::fs::write(&file, text).unwrap();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let a = analyze_file(&file, &GraphOptions::default()).unwrap();
            drop(dir);
            a
        })
        .unwrap()
        .join()
        .expect("no panic")
}

fn limits(a: &FileAnalysis) -> Vec<String> {
    a.diagnostics
        .iter()
        .filter(|d| d.code.starts_with("FX9"))
        .map(|d| format!("{} {}", d.code, d.message))
        .collect()
}

/// The limits a user sees (`check`, the editor): after the policy folds and drops.
fn shown(a: &FileAnalysis, text: &str) -> Vec<String> {
    diagnostics(a, text, &Filter::all())
        .into_iter()
        .filter(|d| d.code.starts_with("FX9"))
        .map(|d| format!("{} {}", d.code, d.message))
        .collect()
}

fn graph_of<'a>(a: &'a FileAnalysis, class: &str) -> &'a Graph {
    &a.graphs
        .iter()
        .find(|g| g.class == class)
        .unwrap_or_else(|| panic!("no graph of {class}"))
        .graph
}

fn output_of(graph: &Graph) -> String {
    let out = graph
        .order
        .iter()
        .map(|&n| graph.node(n))
        .find(|n| n.op == Op::Output)
        .expect("an output node");
    // the nodes the output depends on are shown by their targets: an opaque
    // `<unknown: ...>` node among them names why the value is not known
    let mut shown = format!("{:?}", out.args);
    let mut stack: Vec<_> = out
        .args
        .iter()
        .filter_map(|a| match a {
            Arg::Node(id) => Some(*id),
            _ => None,
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    while let Some(id) = stack.pop() {
        if seen.insert(id) {
            shown.push_str(&format!(" {}", graph.node(id).target));
            stack.extend(graph.inputs(id));
        }
    }
    shown
}

fn calls_of(graph: &Graph) -> Vec<String> {
    graph
        .order
        .iter()
        .map(|&n| graph.node(n))
        .filter(|n| n.op == Op::CallModule)
        .map(|n| n.target.clone())
        .collect()
}

/// A loop over a forward input of unknown length (`zip(xs, ys)`, `range(n)` of a run-time
/// `n`) traces its body once and says so; what the body appends to or assigns is unknown
/// after it. Before, the loop was skipped: the graph lost its `lin` calls and returned the
/// list's initial value, `[]`, or `x` unchanged, as if known (diffusers' ZImage gave output
/// `[]` where eager gives one tensor).
#[test]
fn a_loop_of_unknown_length_leaves_what_it_builds_unknown() {
    let text = r#"import torch
from torch import nn


class Pairs(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, xs, ys):
        out = []
        for a, b in zip(xs, ys):
            out.append(self.lin(a) + b)
        return out


class Steps(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, n: int):
        for i in range(n):
            x = self.lin(x)
        return x
"#;
    let a = analyse(text);
    for class in ["Pairs", "Steps"] {
        let graph = graph_of(&a, class);
        assert_eq!(calls_of(graph), ["lin"], "{class}");
        let output = output_of(graph);
        assert!(
            output.contains("runs an unknown number of times"),
            "{class}: {output}"
        );
    }
    let shown = shown(&a, text);
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(shown[0].contains("iterating `zip(xs, ys)`"), "{shown:?}");
}

/// A constructor loop over an argument nobody supplies leaves the container it fills
/// unknown, not empty: before, `self.blocks` stayed an empty ModuleList, forward's loop over
/// it ran no times and the graph read `x * 0 + 0`, every block dropped. The limits this one
/// cause leads to (three loops over `range(depth)`, forward's loop and call over the
/// unknown blocks) are one limit naming it, with the other lines.
#[test]
fn a_constructor_loop_of_unknown_bound_is_one_limit_and_no_wrong_graph() {
    let text = r#"import torch
from torch import nn


class Stack(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.blocks = nn.ModuleList()
        for i in range(depth):
            self.blocks.append(nn.Linear(4, 4))
        self.extra = []
        for i in range(depth):
            self.extra.append(i)
        n = 0
        for i in range(depth):
            n += 1
        self.n = n

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x * self.n + len(self.extra)
"#;
    let a = analyse(text);
    let graph = graph_of(&a, "Stack");
    assert_eq!(calls_of(graph), ["blocks.?"]);
    let output = output_of(graph);
    assert!(output.contains("constructor argument `depth`"), "{output}");
    let shown = shown(&a, text);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0]
            .contains("(constructor argument `depth`); lines 12, 15, 20, 21 follow from it too"),
        "{shown:?}"
    );
}

/// A block built with arguments only its parent supplies is followed inside the parent's
/// graph: its own per-class analysis (with `dim` and `depth` unknown) adds no limit of its own,
/// and its own graph shows its output as unknown, not as a wrong value.
#[test]
fn a_class_its_parent_builds_adds_no_limit_of_its_own() {
    let text = r#"import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(depth):
            self.layers.append(nn.Linear(dim, dim))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block(8, 2)

    def forward(self, x):
        return self.block(x)
"#;
    let a = analyse(text);
    assert_eq!(shown(&a, text), Vec::<String>::new());
    assert_eq!(
        calls_of(graph_of(&a, "Model")),
        ["block.layers.0", "block.layers.1"]
    );
    let output = output_of(graph_of(&a, "Block"));
    assert!(output.contains("constructor argument `depth`"), "{output}");
}

/// A block whose forward needs an optional input its parent always passes: alone, per-class
/// mode calls it with None there and its trace stops (`timestep.reshape` on None). The
/// parent's trace runs that line with a tensor, so the file shows no limit; the block's own
/// graph still says where it stopped.
#[test]
fn a_block_stopped_by_an_input_its_parent_passes_adds_no_limit() {
    let block = r#"import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, timestep=None):
        shift = timestep.reshape(-1, 1, 8)
        return self.fc(x) + shift
"#;
    let text = format!(
        "{block}

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.t = nn.Linear(8, 8)

    def forward(self, x, t):
        return self.block(x, self.t(t))
"
    );
    let text: &'static str = Box::leak(text.into_boxed_str());
    let a = analyse(text);
    assert_eq!(shown(&a, text), Vec::<String>::new());
    let graph = a.graphs.iter().find(|g| g.class == "Block").unwrap();
    let error = graph.error.as_ref().expect("Block alone stops");
    assert!(
        error
            .message
            .contains("'NoneType' object has no attribute 'reshape'"),
        "{}",
        error.message
    );
    assert!(graph.error_followed_elsewhere);
    assert_eq!(calls_of(graph_of(&a, "Model")), ["t", "block.fc"]);

    // with no class that runs the line with a tensor, the stop is the file's limit
    let a = analyse(block);
    let shown = shown(&a, block);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].contains("'NoneType' object has no attribute 'reshape'"),
        "{shown:?}"
    );
}

/// A call the class alone cannot resolve (a method of `torch.cat` over a list its loop of
/// unknown length built) that the class building it with its real arguments records as a
/// node is no FX907 of the file.
#[test]
fn a_call_its_parent_resolves_is_no_unresolved_call() {
    let block = r#"import torch
from torch import nn


class PosEmbed(nn.Module):
    def __init__(self, axes_dim):
        super().__init__()
        self.axes_dim = axes_dim

    def forward(self, ids):
        out = []
        for i in range(len(self.axes_dim)):
            out.append(ids[..., i : i + 1].float() * self.axes_dim[i])
        return torch.cat(out, dim=-1).to(ids.device)
"#;
    let text = format!(
        "{block}

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = PosEmbed([2, 4])

    def forward(self, ids):
        return self.pos(ids)
"
    );
    let text: &'static str = Box::leak(text.into_boxed_str());
    let a = analyse(text);
    assert_eq!(shown(&a, text), Vec::<String>::new());
    let model = graph_of(&a, "Model");
    let targets: Vec<&str> = (model.order.iter())
        .map(|&n| model.node(n).target.as_str())
        .filter(|t| matches!(*t, "torch.cat" | "to"))
        .collect();
    assert_eq!(targets, ["torch.cat", "to"]);

    // alone, the class's own limits are the file's
    let a = analyse(block);
    let shown = shown(&a, block);
    assert!(shown.iter().any(|l| l.starts_with("FX907")), "{shown:?}");
}

/// The one iteration traced for a loop of unknown length is the first: `enumerate` counts
/// from 0 there, so `if i == 0:` takes its branch and the `else` side does not read `acc`
/// before any iteration bound it (an FX902 "name `acc` is not defined" before).
#[test]
fn the_iteration_traced_once_is_the_first() {
    let text = r#"from torch import nn


class Sum(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, xs):
        for i, x in enumerate(xs):
            if i == 0:
                acc = self.lin(x)
            else:
                acc = acc + self.lin(x)
        return acc
"#;
    let a = analyse(text);
    let shown = shown(&a, text);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].contains("iterating `enumerate(xs)`"), "{shown:?}");
    assert_eq!(calls_of(graph_of(&a, "Sum")), ["lin"]);
}

/// `weight_norm(conv)` (and spectral_norm, and their parametrizations forms) returns the
/// module it was given: its forward is followed, with the convolution's output shape.
#[test]
fn weight_norm_returns_the_module_it_was_given() {
    let a = analyse(
        r#"import torch
from torch import nn
from torch.nn.utils import weight_norm


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = weight_norm(nn.Conv1d(4, 8, 3))
        self.c2 = torch.nn.utils.parametrizations.weight_norm(nn.Conv1d(8, 8, 3), name="weight")
        self.c3 = nn.utils.spectral_norm(module=nn.Linear(8, 5))

    def forward(self, x):
        return self.c3(self.c2(self.c1(x)).transpose(1, 2))
"#,
    );
    assert_eq!(limits(&a), Vec::<String>::new());
    let g = &a.graphs[0];
    assert!(g.error.is_none(), "{:?}", g.error);
    let graph = &g.graph;
    let modules: Vec<_> = graph
        .order
        .iter()
        .map(|&n| graph.node(n))
        .filter(|n| n.op == Op::CallModule)
        .map(|n| (n.target.clone(), format!("{:?}", n.meta)))
        .collect();
    assert_eq!(modules.len(), 3, "{modules:?}");
    assert_eq!(modules[2].0, "c3");
    // [s0, L, 5]: the Linear's output features
    assert!(modules[2].1.contains("Known(5)"), "{modules:?}");
}

/// A library that keeps one filter on its logger reads `logger.filters` before it logs. The
/// evaluator keeps no logger state, so the list reads back empty; before, iterating it was an
/// analysis limit, which the `except ImportError` around the log call took for the import
/// failing: the package then read as missing and its version as "N/A".
#[test]
fn a_loggers_filters_read_back_empty() {
    let a = analyse(
        r#"import logging
from torch import nn

logger = logging.getLogger(__name__)


class OnlyOnce(logging.Filter):
    def filter(self, record):
        return True


def available():
    try:
        if not any(isinstance(f, OnlyOnce) for f in logger.filters):
            logger.addFilter(OnlyOnce())
        logger.debug("found")
        return 6
    except ImportError:
        return 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, available())

    def forward(self, x):
        return self.fc(x)
"#,
    );
    assert_eq!(limits(&a), Vec::<String>::new());
    let graph = &a.graphs[0].graph;
    let fc = graph
        .order
        .iter()
        .map(|&n| graph.node(n))
        .find(|n| n.op == Op::CallModule)
        .expect("fc is called");
    let meta = format!("{:?}", fc.meta);
    assert!(meta.contains("Known(6)"), "{meta}");
}

/// An embedding takes ids of any rank. Token ids laid out as an image (`[batch, h, w]`, then
/// `permute(0, 3, 1, 2)` before a convolution) had been traced as `[batch, seq]` only, and the
/// permute reported as a shape error that no input of that forward raises.
#[test]
fn embedding_ids_may_have_more_than_two_dims() {
    let a = analyse(
        r#"from torch import nn


class TokenImage(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.Embedding(16, 8)
        self.conv = nn.Conv2d(8, 4, kernel_size=1)

    def forward(self, input_ids):
        h = self.embeddings(input_ids)
        h = h.permute(0, 3, 1, 2)
        return self.conv(h)
"#,
    );
    let g = &a.graphs[0];
    assert!(g.error.is_none(), "{:?}", g.error);
    let errors: Vec<_> = g
        .graph
        .nodes()
        .filter_map(|(_, n)| n.shape_error.as_ref().map(|e| e.message.clone()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let graph = &g.graph;
    let conv = graph
        .order
        .iter()
        .map(|&n| graph.node(n))
        .find(|n| n.op == Op::CallModule && n.target == "conv")
        .expect("conv is called");
    // [s0, 4, s1, s2]
    let meta = format!("{:?}", conv.meta);
    assert!(meta.contains("Known(4)"), "{meta}");
}
