//! FX111 / GB0003: a generator `forward` (a `yield` in its body). Dynamo refuses the whole
//! frame before tracing, so nothing is compiled; it reports the `def` line. A generator
//! *helper* consumed inside forward is inlined and fine, unless forward already runs eagerly by
//! then (`frames.rs`).

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx
        .events(EventKind::Generator)
        .filter(|e| e.detail == "root")
    {
        let mut f = refused_frame(cx, e);
        f.impact_nodes = cx.impact_from(0);
        f.message =
            "forward is a generator (it contains `yield`): Dynamo refuses to trace the whole frame"
                .into();
        f.hint = "return a list or tuple of the per-step results instead of yielding them; keep the generator in a helper that forward consumes".into();
        out.push(f);
    }
}

/// GB0003 for a generator helper that Dynamo meets as a frame of its own (see `frames.rs`).
pub fn refused_helper(cx: &Ctx, e: &crate::traced::TraceEvent) -> Finding {
    let mut f = refused_frame(cx, e);
    f.message = format!("the generator `{}` is called from code Dynamo runs eagerly (a break in a loop gave up on that frame), so Dynamo meets it as a frame of its own and refuses to trace it", e.detail);
    f.hint =
        "fix the break in the loop first; or return a list from the helper instead of yielding"
            .into();
    f
}

/// GB0003 at the generator's `def` line only: Dynamo points there, not at the whole body.
fn refused_frame(cx: &Ctx, e: &crate::traced::TraceEvent) -> Finding {
    let header = cx
        .source(e.file, e.span)
        .find('\n')
        .map(|n| e.span.start + n)
        .unwrap_or(e.span.end);
    cx.finding(
        Rule::Generator,
        "GB0003",
        e.file,
        crate::syntax::Span::new(e.span.start, header),
        &e.call_chain,
    )
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, HEAD};

    #[test]
    fn generator_forward_but_not_helper() {
        let src = format!("{HEAD}        yield self.fc(x)\n");
        assert_eq!(codes(&src), vec![(9, "GB0003")]);
        let src = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def _steps(self, x):\n        yield self.fc(x)\n        yield x\n\n    def forward(self, x):\n        return sum(self._steps(x))\n";
        assert_eq!(codes(src), vec![]);
    }
}
