//! FX110 / GB0123: `.backward()` inside forward.

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx
        .events(EventKind::Method)
        .filter(|e| e.detail == "backward")
    {
        let mut f = cx.finding_at_event(Rule::Backward, "GB0123", e);
        f.node = cx.nodes_at(e.file, e.span).first().copied();
        f.message = "Tensor.backward() inside forward".into();
        f.hint = "compute gradients with torch.autograd.grad(...) (traceable), or move the backward pass out of forward".into();
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, HEAD};

    #[test]
    fn backward() {
        let src =
            format!("{HEAD}        s = self.fc(x).sum()\n        s.backward()\n        return s\n");
        assert_eq!(codes(&src), vec![(11, "GB0123")]);
    }
}
