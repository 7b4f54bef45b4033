//! FX117 / GB6297: `F.apply(a, a)` on a `torch.autograd.Function` subclass. Dynamo traces
//! `apply` into one graph with its backward, and refuses one tensor passed to two of
//! forward's inputs ("autograd.Function.apply: duplicate tensor input"). It only traces the
//! function that way when an argument requires grad and grad mode is on (parameters, what they
//! compute); otherwise `apply` runs forward as a plain function and nothing breaks.

use super::requires_grad::RequiresGrad;
use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::graph::NodeId;
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    let grads = RequiresGrad::new(cx);
    for e in cx.events(EventKind::AutogradApplyDuplicate) {
        // `i,j;n0 n1 …`: the duplicated positions, then the nodes of the tensor inputs.
        let (positions, nodes) = e.detail.split_once(';').unwrap_or((&e.detail, ""));
        let inputs: Vec<NodeId> = nodes
            .split_whitespace()
            .filter_map(|n| n.parse::<usize>().ok())
            .map(NodeId::new)
            .filter(|&n| cx.result.graph.contains(n))
            .collect();
        if !inputs.iter().any(|&n| grads.of(n)) {
            continue;
        }
        let mut f = cx.finding_at_event(Rule::AutogradApplyDuplicate, "GB6297", e);
        f.node = cx.nodes_at(e.file, e.span).into_iter().last();
        let positions: Vec<&str> = positions.split(',').collect();
        let source = cx.source(e.file, e.span);
        f.message = format!(
            "autograd.Function.apply given the same tensor as arguments {} (`{}`)",
            positions.join(" and "),
            super::snippet(&source)
        );
        f.hint = "pass a distinct tensor to each input (`t, t.clone()`), or let forward take the tensor once and use it twice".into();
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::codes;

    const FUNCTION: &str = "import torch\nfrom torch import nn\n\nclass Mul(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a, b):\n        return a * b\n\n    @staticmethod\n    def backward(ctx, g):\n        return g, g\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n";

    #[test]
    fn duplicated_tensor_that_requires_grad() {
        let src = format!("{FUNCTION}        h = self.fc(x)\n        y = Mul.apply(h, h)\n        z = Mul.apply(h, x)\n        return y + z\n");
        assert_eq!(codes(&src), vec![(20, "GB6297")]);
    }

    #[test]
    fn duplicated_input_without_grad_is_a_plain_call() {
        let src = format!("{FUNCTION}        y = Mul.apply(x, x)\n        return self.fc(y)\n");
        assert_eq!(codes(&src), vec![]);
    }

    #[test]
    fn apply_on_a_class_that_is_not_an_autograd_function() {
        let src = format!("{FUNCTION}        h = self.fc(x)\n        return Other.apply(h, h)\n\nclass Other:\n    @staticmethod\n    def apply(a, b):\n        return a + b\n");
        assert_eq!(codes(&src), vec![]);
    }
}
