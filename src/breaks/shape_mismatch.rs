//! FX301: a call whose arguments PyTorch rejects — the shape rules proved it raises on the
//! first run, eagerly as under `torch.compile` (`Linear` given the wrong last dimension, `cat`
//! of tensors of different ranks, a `view` that changes the element count). The user's bug,
//! not a graph break: no gb id, no region, not counted with the breaks.
//!
//! The tracer keeps the rule's `ShapeError` on the call's node; this reads it. The finding
//! sits on the call where PyTorch raises and names where the offending input came from.

use super::{Ctx, Finding};
use crate::diagnostics::{Rule, Severity};
use crate::graph::{Arg, NodeId, Op};
use crate::shapes::ShapeErrorKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    let g = &cx.result.graph;
    for &id in &g.order {
        let n = g.node(id);
        let (Some(e), Some(origin)) = (n.shape_error.as_ref(), n.origin.as_ref()) else {
            continue;
        };
        // A dtype is certain only where no input of forward flows in: an input's dtype may be
        // the default the analyser gave it, not the one the caller passes.
        if e.kind == ShapeErrorKind::Dtype {
            let culprit = e.arg.and_then(|i| n.args.get(i)).and_then(|a| match a {
                Arg::Node(src) => Some(*src),
                _ => None,
            });
            if culprit.is_none_or(|src| dtype_from_input(cx, src)) {
                continue;
            }
        }
        if e.kind != ShapeErrorKind::Dtype && after_unverified_view(cx, id) {
            continue;
        }
        let mut f = cx.finding(
            Rule::ShapeMismatch,
            "",
            origin.file,
            origin.span,
            &origin.call_chain,
        );
        f.severity = Severity::Error;
        f.node = Some(id);
        let callee = callee(cx, origin.file, origin.span);
        f.message = format!("`{callee}` {}", e.message);
        if let Some(from) = e
            .arg
            .and_then(|i| n.args.get(i))
            .and_then(|a| source_of(cx, a, origin.file))
        {
            f.message.push_str(&format!("; {from}"));
        }
        f.hint = "this call raises when it runs, compiled or not: make the sizes agree (a layer's constructor arguments, or the shape this value is given)".into();
        out.push(f);
    }
}

/// The called thing as written: `self.fc2` of `self.fc2(x)`, `torch.cat` of
/// `torch.cat([a, b])`, or the whole expression for an operator (`x @ w`).
fn callee(cx: &Ctx, file: crate::semantic::FileId, span: crate::syntax::Span) -> String {
    use crate::syntax::FieldExt;
    cx.with_syntax(file, span, |node, src| {
        let call = if node.kind() == "call" {
            Some(node)
        } else {
            node.parent().filter(|p| p.kind() == "call")
        };
        match call.and_then(|c| c.field("function")) {
            Some(f) => super::snippet(&src[f.byte_range()]),
            None => super::snippet(&src[span.start.min(src.len())..span.end.min(src.len())]),
        }
    })
    .unwrap_or_default()
}

/// Where the offending argument came from, when it is a value of this graph: `the input
/// [1, 10] comes from `self.fc(...)` (line 9)`, or forward's parameter.
fn source_of(cx: &Ctx, arg: &Arg, file: crate::semantic::FileId) -> Option<String> {
    let Arg::Node(src) = arg else {
        return None;
    };
    let n = cx.result.graph.node(*src);
    let shape = n.meta.describe();
    match n.op {
        Op::Placeholder => Some(format!("`{}` {shape} is an input of forward", n.name)),
        // a constant tensor made in forward (`torch.ones(4, 2)`) is named by its source below
        Op::GetAttr if !n.target.starts_with("_tensor_constant") => {
            Some(format!("`self.{}` is {shape}", n.target))
        }
        _ => {
            let o = n.origin.as_ref().filter(|o| o.file == file)?;
            let f = cx.project.file(o.file);
            let line = f.lines.line_of(o.span.start) + 1;
            Some(format!(
                "the input is {shape}, from `{}` (line {line})",
                super::snippet(&cx.source(o.file, o.span))
            ))
        }
    }
}

/// Whether a `view` or `reshape` the value flows from took sizes whose element count could not
/// be checked against its input's (an unknown size, or symbolic counts not provably equal):
/// its result's sizes are the code's claim, and an error that hangs on them is not certain.
/// The view itself raises when the claim is wrong, and that is where PyTorch would stop.
fn after_unverified_view(cx: &Ctx, id: NodeId) -> bool {
    let g = &cx.result.graph;
    let numel = |n: NodeId| -> Option<crate::shapes::Expr> {
        let shape = g.node(n).meta.as_tensor()?.shape.as_ref()?;
        shape
            .iter()
            .try_fold(crate::shapes::Expr::constant(1), |acc, d| {
                Some(acc.mul(&d.expr()?))
            })
    };
    let mut stack = g.inputs(id);
    let mut seen = std::collections::HashSet::new();
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        let node = g.node(n);
        let short = crate::graph::OpKey::Function(&node.target).name();
        if matches!(node.op, Op::CallFunction | Op::CallMethod)
            && matches!(short, "view" | "reshape")
        {
            let source = node.args.first().and_then(|a| match a {
                Arg::Node(s) => Some(*s),
                _ => None,
            });
            let verified = match (source.and_then(numel), numel(n)) {
                (Some(a), Some(b)) => a.add(&b.scale(-1)).as_const() == Some(0),
                _ => false,
            };
            if !verified {
                return true;
            }
        }
        stack.extend(g.inputs(n));
    }
    false
}

/// Ops whose result is floating whatever the dtype of their input (or that raise on integer
/// input): a float result of one is the op's doing, not the input's.
const FLOAT_RESULT: &[&str] = &[
    "truediv",
    "div",
    "sigmoid",
    "tanh",
    "exp",
    "log",
    "log2",
    "log1p",
    "sqrt",
    "rsqrt",
    "softmax",
    "log_softmax",
    "mean",
    "sin",
    "cos",
    "erf",
    "rand",
    "randn",
    "rand_like",
    "randn_like",
    "linspace",
];

/// Whether the value's dtype may be the one an input of forward was given by default (the
/// user's real input might differ): it flows unchanged from a placeholder the user gave no
/// shape and dtype for (`--input x=4x7` is the user's word: float32), through ops that
/// keep their input's dtype. An op that fixes the dtype itself (`argmax`, `.float()`, an
/// `arange(dtype=...)`, `* 1.0` on an int) breaks the chain: the dtype is certain.
fn dtype_from_input(cx: &Ctx, id: NodeId) -> bool {
    let g = &cx.result.graph;
    let mut stack = vec![id];
    let mut seen = std::collections::HashSet::new();
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        let node = g.node(n);
        if node.op == Op::Placeholder {
            if cx.result.given_inputs.contains(&node.target) {
                continue;
            }
            return true;
        }
        let Some(dtype) = node.meta.as_tensor().map(|t| t.dtype) else {
            // a value of unknown kind: its dtype cannot be traced back
            return true;
        };
        let short = crate::graph::OpKey::Function(&node.target).name();
        if matches!(node.op, Op::CallFunction | Op::CallMethod) && FLOAT_RESULT.contains(&short) {
            continue;
        }
        stack.extend(
            g.inputs(n)
                .into_iter()
                .filter(|&i| match g.node(i).meta.as_tensor() {
                    Some(t) => t.dtype == dtype,
                    None => matches!(g.node(i).meta, crate::shapes::Meta::Unknown),
                }),
        );
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::findings;

    fn fx301(src: &str) -> Vec<(usize, String)> {
        findings(src)
            .into_iter()
            .filter(|f| f.1 == "FX301")
            .map(|f| (f.0, f.3))
            .collect()
    }

    const HEAD: &str = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n";

    #[test]
    fn linear_chain_mismatch_is_certain_whatever_the_input() {
        // 128 != 64 whatever the input's shape: no input is given, it is symbolic.
        let src = format!("{HEAD}        self.a = nn.Linear(32, 128)\n        self.b = nn.Linear(64, 32)\n\n    def forward(self, x):\n        return self.b(self.a(x))\n");
        assert_eq!(
            fx301(&src).iter().map(|f| f.0).collect::<Vec<_>>(),
            vec![11]
        );
        let ok = src.replace("Linear(64, 32)", "Linear(128, 32)");
        assert!(fx301(&ok).is_empty());
    }

    #[test]
    fn symbolic_sizes_are_no_finding() {
        // `x` is [s0, 20] (its rank guessed from `self.a`): `x.t() @ ones(20, 4)` runs when the
        // batch is 20, so s0 against 20 is no finding; ones(21, 4) is [20, s0] @ [21, 4] too.
        let src = format!("{HEAD}        self.a = nn.Linear(20, 20)\n\n    def forward(self, x):\n        y = x.t() @ torch.ones(20, 4)\n        return self.a(x), y\n");
        assert!(fx301(&src).is_empty());
        // but the contraction of `x @ ones(21, 4)` is 20 against 21 whatever the batch
        let bad = src.replace("x.t() @ torch.ones(20, 4)", "x @ torch.ones(21, 4)");
        let found = fx301(&bad);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, 10);
    }
}
