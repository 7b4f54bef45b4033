//! FX123 / GB0007: a tensor method call whose arguments broke the graph.
//!
//! Python evaluates `h.masked_scatter(mask, src)` by loading the bound method first, then the
//! arguments, then calling. When an argument breaks the graph and Dynamo resumes right after
//! the breaking instruction (`frames.rs`), the bound method already on the stack comes back as
//! an ordinary Python object. Dynamo no longer sees a tensor method in it, only a builtin of
//! no module, and refuses the call: GB0007 "Attempted to call function marked as skipped"
//! ("Dynamo does not know how to trace the builtin `<unknown module>.Tensor.masked_scatter`").
//! Measured with torch 2.8 and 2.15 on Python 3.11 and 3.12
//! (`tests/fixtures/breaks/tensor_method_after_break.py`); the function form
//! (`torch.add(h, ...)`) does not break again. transformers' higgs_audio_v2 meets this with
//! `hidden_states.masked_scatter(mask, layer_norm(hidden_states[mask]))`. Only `frames.rs`
//! knows where Dynamo resumes, so it asks for these findings (`refused_methods`).

use std::collections::HashSet;

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::graph::Op;
use crate::syntax::{FieldExt, KindExt, Span};

type Site = (crate::semantic::FileId, Span);

/// The id Dynamo gives the refused call.
const GB_ID: &str = "GB0007";

/// Nothing to do per rule: the call breaks only where Dynamo resumed inside its arguments,
/// which the pass over frames decides after every rule ran (`refused_methods`).
pub fn check(_: &Ctx, _: &mut Vec<Finding>) {}

/// A finding for each tensor method call (a `call_method` node) of a frame in `resumptions`
/// whose argument list holds the site Dynamo resumed after. Each entry is (the frame, by the
/// call sites leading to it; the site in it; the break's own site).
pub fn refused_methods(cx: &Ctx, resumptions: &[(Vec<Site>, Site, Site)]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (frame, (file, site), (break_file, break_span)) in resumptions {
        for &id in &cx.result.graph.order {
            let n = &cx.result.graph.g[id];
            let Some(o) = n.origin.as_ref().filter(|_| n.op == Op::CallMethod) else {
                continue;
            };
            if o.file != *file
                || o.call_chain != *frame
                || !(o.span.start <= site.start && site.end <= o.span.end)
                || !arguments_hold(cx, o.file, o.span, *site)
                || !seen.insert((o.file, o.span))
            {
                continue;
            }
            let mut f = cx.finding(Rule::MethodAfterBreak, GB_ID, o.file, o.span, frame);
            let source = cx.project.file(*break_file);
            let line = source.lines.line_col(&source.text, break_span.start).line + 1;
            f.message = format!(
                "Dynamo does not know how to trace the builtin `<unknown module>.Tensor.{}`: \
                 the graph broke while this call's arguments were evaluated (line {line}), and \
                 Dynamo resumed with the bound method as a plain Python object",
                n.target
            );
            f.hint = format!(
                "compute the arguments into variables before the call, or call the function \
                 form (`torch.{}(tensor, ...)`); better, fix the break in the arguments",
                n.target
            );
            out.push(f);
        }
    }
    out
}

/// Whether the call expression at `call` has `site` inside its argument list.
fn arguments_hold(cx: &Ctx, file: crate::semantic::FileId, call: Span, site: Span) -> bool {
    cx.with_call(file, call, |call_node, _| {
        let method_call = call_node
            .field("function")
            .is_some_and(|f| f.kind_name() == "attribute");
        Span::of(call_node) == call
            && method_call
            && call_node.field("arguments").is_some_and(|a| {
                let a = Span::of(a);
                a.start <= site.start && site.end <= a.end
            })
    })
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::codes;

    /// torch 2.8 and 2.15 alike (`tests/fixtures/breaks/tensor_method_after_break.py`): a
    /// dynamic-shape index in a method's arguments, and a helper that breaks, each make the
    /// method call break again; the function form and a method on the index's own result do not.
    #[test]
    fn a_method_whose_arguments_broke_breaks_at_the_call() {
        let src = "import torch\nfrom torch import nn\n\ndef halve(h):\n    torch._dynamo.graph_break()\n    return h * 0.5\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        h = self.fc(x)\n        m = h.sum(-1) > 0\n        h = h.masked_scatter(\n            m.unsqueeze(-1),\n            self.fc(h[m]),\n        )\n        h = torch.add(h, h[m].sum())\n        h = h.add(halve(h))\n        return self.fc(h[m]).sum() + h.relu()\n";
        assert_eq!(
            codes(src),
            vec![
                (5, "GB0025"),
                (16, "GB0007"),
                (18, "GB0036"),
                (20, "GB0036"),
                (21, "GB0007"),
                (22, "GB0036"),
            ]
        );
    }
}
