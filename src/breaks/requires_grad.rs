//! FX109 / GB0125 or GB8985: `requires_grad_()` inside forward.
//!
//! Dynamo only objects when the call changes the flag: `requires_grad_(True)` on a parameter or
//! on a tensor computed from parameters is a no-op and traces fine. A change on a graph input
//! (a tensor with a source) is refused outright (GB0125). A change on a tensor made inside
//! forward (`torch.zeros(4, 8).requires_grad_()`, `h.detach().requires_grad_()`) is traced; torch
//! 2.15 then breaks at the call only when the tensor, or something computed from it, leaves the
//! compiled region (GB8985 "requires_grad_() intermediate leaked as output"): an unused one is
//! fine. Older torch refuses the change outright, as for an input (GB0125; see
//! [`Behaviour::RequiresGradIntermediate`]).

use std::collections::HashMap;

use super::version::Behaviour;
use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::graph::{Arg, NodeId, Op};
use crate::shapes::Meta;
use crate::traced::EventKind;

/// The ids `cx.target` may pick here besides the literal ones (see `version.rs`).
#[allow(dead_code)]
const VERSIONED_IDS: &[&str] = &["GB8985"];

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    let grads = RequiresGrad::new(cx);
    for e in cx
        .events(EventKind::Method)
        .filter(|e| e.detail == "requires_grad_")
    {
        let nodes = cx.nodes_at(e.file, e.span);
        let call = nodes
            .iter()
            .find_map(|&n| super::receiver(cx, n).map(|r| (n, r)));
        let wanted = call
            .map(|(n, _)| flag_argument(cx, n))
            .unwrap_or(Some(true));
        // A receiver with no graph node is a tensor built from constants inside forward.
        let (on_input, already) = match call {
            Some((_, recv)) => (
                cx.result.graph.node(recv).op == Op::Placeholder,
                grads.of(recv),
            ),
            None => (false, false),
        };
        if wanted == Some(already) {
            continue;
        }
        let old_rule = cx.target.gb_id(Behaviour::RequiresGradIntermediate) == "GB0125";
        if !on_input && !old_rule && !call.is_some_and(|(n, r)| leaks(cx, n, r)) {
            continue;
        }
        let id = if on_input {
            "GB0125"
        } else {
            cx.target.gb_id(Behaviour::RequiresGradIntermediate)
        };
        let mut f = cx.finding_at_event(Rule::RequiresGrad, id, e);
        f.node = call.map(|(n, _)| n);
        f.message = if on_input {
            "requires_grad_() on a forward input".into()
        } else if old_rule {
            "requires_grad_() on a tensor made inside forward".into()
        } else {
            "requires_grad_() on an intermediate tensor, which then leaks out of the graph".into()
        };
        f.hint = "set requires_grad on the input before calling the compiled module, or run this part outside torch.compile".into();
        out.push(f);
    }
}

/// `requires_grad_(False)` → Some(false); no argument or `True` → Some(true); anything else
/// (a variable) → None.
fn flag_argument(cx: &Ctx, call: NodeId) -> Option<bool> {
    let n = cx.result.graph.node(call);
    let arg = n.args.get(1).or_else(|| {
        n.kwargs
            .iter()
            .find(|(k, _)| k == "requires_grad")
            .map(|(_, v)| v)
    });
    match arg {
        None => Some(true),
        Some(Arg::Bool(b)) => Some(*b),
        Some(_) => None,
    }
}

/// Whether the tensor whose flag `call` changed leaves forward: the call's result, or, for a
/// tensor made in forward (a `_tensor_constant` target torch.fx reads again at each use), the
/// tensor itself where it is used after the call (`w.requires_grad_(True)` then `return w`):
/// the change is in place.
fn leaks(cx: &Ctx, call: NodeId, recv: NodeId) -> bool {
    if reaches_output(cx, call) {
        return true;
    }
    let g = &cx.result.graph;
    let r = g.node(recv);
    if r.op != Op::GetAttr || !r.target.starts_with("_tensor_constant") {
        return false;
    }
    g.order
        .iter()
        .skip_while(|&&n| n != call)
        .filter(|&&n| {
            let node = g.node(n);
            node.op == Op::GetAttr && node.target == r.target
        })
        .any(|&n| reaches_output(cx, n))
}

/// Whether the value, or anything computed from it, is returned by forward.
fn reaches_output(cx: &Ctx, from: NodeId) -> bool {
    let g = &cx.result.graph;
    let mut stack = vec![from];
    let mut seen = std::collections::HashSet::new();
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        if g.node(n).op == Op::Output {
            return true;
        }
        stack.extend(g.users(n));
    }
    false
}

/// Which traced tensors carry `requires_grad`: parameters, what leaf modules with parameters
/// compute, and anything computed from those; not inputs (the model is analysed as called,
/// with plain tensors), not `detach()`ed values or fresh tensors.
pub(super) struct RequiresGrad {
    flags: HashMap<NodeId, bool>,
}

impl RequiresGrad {
    pub(super) fn new(cx: &Ctx) -> Self {
        let g = &cx.result.graph;
        let parameters: std::collections::HashSet<String> = cx
            .result
            .modules
            .iter()
            .flat_map(|m| {
                m.params.iter().filter(|p| !p.buffer).map(move |p| {
                    if m.path.is_empty() {
                        p.name.clone()
                    } else {
                        format!("{}.{}", m.path, p.name)
                    }
                })
            })
            .collect();
        // a scan of every module per call_module node was quadratic in the model's size
        let with_parameters: std::collections::HashSet<&str> = cx
            .result
            .modules
            .iter()
            .filter(|m| m.params.iter().any(|p| !p.buffer))
            .map(|m| m.path.as_str())
            .collect();
        let mut flags = HashMap::new();
        for (id, n) in g.nodes() {
            let mut inputs = Vec::new();
            for a in &n.args {
                a.nodes(&mut inputs);
            }
            for (_, a) in &n.kwargs {
                a.nodes(&mut inputs);
            }
            let from_inputs = inputs
                .iter()
                .any(|i| flags.get(i).copied().unwrap_or(false));
            let value = match n.op {
                Op::Placeholder | Op::Output => false,
                // parameters, not buffers or the constants forward made (`_tensor_constant0`)
                Op::GetAttr => parameters.contains(&n.target),
                Op::CallModule => from_inputs || with_parameters.contains(n.target.as_str()),
                Op::CallMethod if n.target == "detach" => false,
                // a fresh tensor of the input's shape: no autograd history
                Op::CallFunction if is_fresh_like(&n.target) => false,
                Op::CallMethod if n.target == "requires_grad_" => {
                    flag_argument(cx, id).unwrap_or(from_inputs)
                }
                _ => from_inputs,
            };
            // only floating-point tensors can require grad (comparisons, indices, casts to
            // integers cannot)
            let floating = matches!(&n.meta, Meta::Tensor(t) if t.dtype.is_floating());
            flags.insert(id, value && floating);
        }
        RequiresGrad { flags }
    }

    pub(super) fn of(&self, n: NodeId) -> bool {
        self.flags.get(&n).copied().unwrap_or(false)
    }
}

/// `torch.zeros_like(t)` and its kin: a new tensor that only borrows `t`'s shape and dtype.
fn is_fresh_like(target: &str) -> bool {
    matches!(
        target.rsplit('.').next(),
        Some(
            "zeros_like"
                | "ones_like"
                | "empty_like"
                | "full_like"
                | "rand_like"
                | "randn_like"
                | "randint_like"
        )
    )
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, HEAD};

    #[test]
    fn input_and_intermediate() {
        let src = format!("{HEAD}        x.requires_grad_()\n        y = x.detach().clone().requires_grad_(True)\n        return self.fc(y)\n");
        assert_eq!(codes(&src), vec![(10, "GB0125"), (11, "GB8985")]);
    }

    #[test]
    fn created_tensor_breaks_only_when_it_leaves_forward() {
        let src = format!("{HEAD}        z = torch.zeros(4, 8).requires_grad_()\n        u = torch.ones(4, 8).requires_grad_(True)\n        return self.fc(x) + z\n");
        assert_eq!(codes(&src), vec![(10, "GB8985")]);
    }

    /// torch 2.15: "requires_grad_() intermediate leaked as output" when the tensor itself
    /// (changed in place) is returned, or used in what is returned; not when it stays inside.
    #[test]
    fn created_tensor_changed_in_place_then_returned() {
        let src = format!("{HEAD}        w = torch.ones(3)\n        w.requires_grad_(True)\n        return self.fc(x), w\n");
        assert_eq!(codes(&src), vec![(11, "GB8985")]);
        let src = format!("{HEAD}        w = torch.ones(8)\n        w.requires_grad_(True)\n        return self.fc(x) * w\n");
        assert_eq!(codes(&src), vec![(11, "GB8985")]);
        let src = format!("{HEAD}        w = torch.ones(8)\n        w.requires_grad_(True)\n        return self.fc(x)\n");
        assert_eq!(codes(&src), vec![]);
    }

    /// `torch.zeros_like(q)` of a tensor computed from parameters is fresh: the flag changes
    /// (transformers' mra attention without its kernel, GB8985 in torch 2.15's sweep).
    #[test]
    fn fresh_like_tensor_of_a_computed_one() {
        let src = format!("{HEAD}        q = self.fc(x)\n        z = torch.zeros_like(q).requires_grad_()\n        return z\n");
        assert_eq!(codes(&src), vec![(11, "GB8985")]);
    }

    #[test]
    fn no_op_on_parameters_and_on_what_they_compute() {
        let src = format!("{HEAD}        self.fc.weight.requires_grad_(True)\n        h = self.fc(x).requires_grad_()\n        return h\n");
        assert_eq!(codes(&src), vec![]);
    }
}
