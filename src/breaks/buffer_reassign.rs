//! FX118 / GB4841: `self.b = self.b.to(x.dtype)` where `b` was made by `nn.Buffer(...)`.
//!
//! `nn.Buffer` marks the tensor itself (`_is_buffer`), and a tensor method that has nothing to
//! do returns its receiver: `.to()` to the dtype it has, `.float()` on a float tensor,
//! `.contiguous()`, `.cpu()`, an in-place `add_()`. `isinstance(value, nn.Buffer)` then holds
//! in `nn.Module.__setattr__`, which reads `value.persistent` to re-register the buffer. Dynamo
//! (torch 2.15) gives that tensor, computed in the graph, no source, and cannot take the truth
//! of an attribute it cannot read back ("Unsupported python_type() call" on
//! `GetAttrVariable(TensorVariable(), persistent)`): the frame runs eagerly. Torch 2.8 traced
//! it. Assigning the buffer itself back (`self.b = self.b`), a new tensor (`.to()` another
//! dtype, `.clone()`, `.view()`, arithmetic) or a buffer made by `register_buffer(...)` (which
//! leaves the tensor unmarked) does not break.
//!
//! Only calls the tracer records are seen: ones that read the input (`.to(x.device)`,
//! `.type_as(x)`), as in transformers. A call on constants alone (`self.b.float()`) is run
//! eagerly into a tensor constant, as torch.fx does, and is not reported yet.

use super::version::Behaviour;
use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::graph::{Arg, NodeId, Op};
use crate::shapes::DType;
use crate::traced::EventKind;

/// The ids `cx.target` may pick here (see `version.rs`).
#[allow(dead_code)]
const VERSIONED_IDS: &[&str] = &["GB4841"];

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    let id = cx.target.gb_id(Behaviour::BufferReassign);
    if id.is_empty() {
        return;
    }
    for e in cx.events(EventKind::ModuleTensorAttr) {
        let Some(node) = cx.result.graph.by_name(&e.detail) else {
            continue;
        };
        let Some(Marked::Computed { buffer, method }) = marked(cx, node) else {
            continue;
        };
        let mut f = cx.finding_at_event(Rule::BufferReassign, id, e);
        f.node = Some(node);
        f.message = format!(
            "`{}` is assigned the nn.Buffer `{buffer}` returned unchanged by `.{method}()`: \
             nn.Module.__setattr__ reads its `persistent` flag, which Dynamo cannot on a tensor \
             computed in the graph",
            super::snippet(&cx.source(e.file, e.span))
        );
        f.hint = format!(
            "keep the result in a local variable instead of assigning it back to the module, or \
             register `{buffer}` with `register_buffer(..., persistent=...)` instead of `nn.Buffer(...)`"
        );
        out.push(f);
    }
}

/// A traced tensor that is an `nn.Buffer`-made buffer as far as `isinstance` can tell.
enum Marked {
    /// The buffer read from the module: Dynamo has its source.
    Read,
    /// The buffer as returned by a method that did nothing (`buffer` its path).
    Computed { buffer: String, method: String },
}

fn marked(cx: &Ctx, n: NodeId) -> Option<Marked> {
    let node = cx.result.graph.node(n);
    match node.op {
        Op::GetAttr => nn_buffer(cx, &node.target).then_some(Marked::Read),
        Op::CallMethod => {
            let receiver = super::receiver(cx, n)?;
            let from = marked(cx, receiver)?;
            // `requires_grad_` hands back the variable it was called on, source and all
            if node.target == "requires_grad_" {
                return Some(from);
            }
            if !returns_receiver(cx, n, receiver) {
                return None;
            }
            let buffer = match from {
                Marked::Read => cx.result.graph.node(receiver).target.clone(),
                Marked::Computed { buffer, .. } => buffer,
            };
            Some(Marked::Computed {
                buffer,
                method: node.target.clone(),
            })
        }
        _ => None,
    }
}

/// Whether the method call returns the very tensor it was called on: an in-place method, or a
/// conversion to what the tensor already is.
fn returns_receiver(cx: &Ctx, call: NodeId, receiver: NodeId) -> bool {
    let g = &cx.result.graph;
    let node = g.node(call);
    let method = node.target.as_str();
    let same_dtype = match (dtype(cx, call), dtype(cx, receiver)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    };
    match method {
        "contiguous" | "cpu" => true,
        "to" => same_dtype && !copies(node),
        "type" | "type_as" | "float" | "double" | "half" | "bfloat16" | "int" | "long"
        | "short" | "char" | "byte" | "bool" => same_dtype,
        _ => method.ends_with('_') && !method.starts_with('_'),
    }
}

/// `.to(..., copy=True)`.
fn copies(node: &crate::graph::Node) -> bool {
    node.kwargs
        .iter()
        .any(|(k, v)| k == "copy" && matches!(v, Arg::Bool(true)))
}

fn dtype(cx: &Ctx, n: NodeId) -> Option<DType> {
    match &cx.result.graph.node(n).meta {
        crate::shapes::Meta::Tensor(t) => Some(t.dtype),
        _ => None,
    }
}

/// Whether the module path names a buffer made by `nn.Buffer(...)`.
fn nn_buffer(cx: &Ctx, path: &str) -> bool {
    let (module, name) = path.rsplit_once('.').unwrap_or(("", path));
    cx.result
        .modules
        .iter()
        .filter(|m| m.path == module)
        .flat_map(|m| &m.params)
        .any(|p| p.name == name && p.nn_buffer)
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::codes;

    fn module(init: &str, forward: &str) -> String {
        format!("import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n        {init}\n\n    def forward(self, x):\n{forward}        return self.fc(x) + self.b\n")
    }

    const NN_BUFFER: &str = "self.b = nn.Buffer(torch.ones(4), persistent=False)";
    const REGISTERED: &str = "self.register_buffer(\"b\", torch.ones(4), persistent=False)";

    #[test]
    fn nn_buffer_returned_unchanged_and_assigned_back() {
        for body in [
            "        self.b = self.b.to(device=x.device, dtype=x.dtype)\n",
            "        self.b = self.b.to(x.dtype)\n",
            "        self.b = self.b.add_(x.sum())\n",
            "        b = self.b.type_as(x)\n        self.b = b\n",
        ] {
            let line = 11 + body.matches('\n').count() - 1;
            assert_eq!(
                codes(&module(NN_BUFFER, body)),
                vec![(line, "GB4841")],
                "{body}"
            );
        }
    }

    #[test]
    fn a_new_tensor_a_local_or_a_registered_buffer() {
        for body in [
            // another dtype, a copy, a view, arithmetic: tensors nn.Buffer never marked
            "        self.b = self.b.to(device=x.device, dtype=torch.float64)\n",
            "        self.b = self.b.to(x.device).clone()\n",
            "        self.b = self.b.view(x.shape[-1])\n",
            "        self.b = self.b + x.sum()\n",
            // kept in a local
            "        b = self.b.to(x.dtype)\n",
        ] {
            assert_eq!(codes(&module(NN_BUFFER, body)), vec![], "{body}");
        }
        let body = "        self.b = self.b.to(device=x.device, dtype=x.dtype)\n";
        assert_eq!(codes(&module(REGISTERED, body)), vec![]);
    }

    #[test]
    fn torch_2_8_traces_it() {
        let target = crate::breaks::version::Target::configured("2.8".parse().unwrap());
        assert_eq!(
            target.gb_id(crate::breaks::version::Behaviour::BufferReassign),
            ""
        );
    }
}
