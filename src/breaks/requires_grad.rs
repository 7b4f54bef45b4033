//! FX109 / GB0125 or GB8985: `requires_grad_()` inside forward. On a graph input Dynamo refuses
//! it outright (GB0125); on an intermediate it traces it but cannot return the leaked leaf
//! (GB8985).

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::graph::Op;
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx
        .events(EventKind::Method)
        .filter(|e| e.detail == "requires_grad_")
    {
        let nodes = cx.nodes_at(e.file, e.span);
        let Some((node, recv)) = nodes
            .iter()
            .find_map(|&n| super::receiver(cx, n).map(|r| (n, r)))
        else {
            continue;
        };
        let on_input = cx.result.graph.node(recv).op == Op::Placeholder;
        let mut f = cx.finding_at_event(
            Rule::RequiresGrad,
            if on_input { "GB0125" } else { "GB8985" },
            e,
        );
        f.node = Some(node);
        f.message = if on_input {
            "requires_grad_() on a forward input".into()
        } else {
            "requires_grad_() on an intermediate tensor, which then leaks out of the graph".into()
        };
        f.hint = "set requires_grad on the input before calling the compiled module, or run this part outside torch.compile".into();
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, HEAD};

    #[test]
    fn input_and_intermediate() {
        let src = format!("{HEAD}        x.requires_grad_()\n        y = x.detach().clone().requires_grad_(True)\n        return self.fc(y)\n");
        assert_eq!(codes(&src), vec![(10, "GB0125"), (11, "GB8985")]);
    }
}
