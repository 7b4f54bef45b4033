//! FX116 / GB0098 or GB0099: a call to a `torch.compiler.disable`d function. Dynamo breaks the
//! graph at the call and runs the function eagerly: GB0098 for a function, GB0099 when it is a
//! method (Dynamo words it as refusing to inline it). Nothing inside it is traced, so other
//! findings under such a call are dropped (see `mod.rs`).

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx.events(EventKind::DisabledCall) {
        let id = if e.detail == "method" {
            "GB0099"
        } else {
            "GB0098"
        };
        let mut f = cx.finding_at_event(Rule::DisabledCall, id, e);
        f.message = format!(
            "call to a torch.compiler.disable()d {} (`{}`): Dynamo breaks the graph and runs it eagerly",
            e.detail,
            super::snippet(&cx.source(e.file, e.span))
        );
        f.hint = "if the function is traceable, drop the decorator; otherwise move the call out of the compiled forward, or accept the split".into();
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::codes;

    #[test]
    fn disabled_function_and_method() {
        let src = "import torch\nfrom torch import nn\n\n@torch.compiler.disable\ndef eager(t):\n    print(t)\n    return t * 2\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    @torch.compiler.disable(recursive=True)\n    def side(self, t):\n        return t + 1\n\n    def forward(self, x):\n        h = eager(self.fc(x))\n        return self.side(h)\n";
        // the print inside the disabled function is never traced
        assert_eq!(codes(src), vec![(19, "GB0098"), (20, "GB0099")]);
    }

    /// Disabled calls before any operation (the first, a second right after it, one after a
    /// shape read) are breaks whose graph is empty: torch 2.15's explain then reports one graph
    /// and no break, which the message says. One after an operation has no such note.
    #[test]
    fn disabled_calls_before_any_operation() {
        let head = "import torch\nfrom torch import nn\n\n@torch.compiler.disable\ndef eager(t):\n    return t * 2\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n";
        let first = format!("{head}        n = x.shape[0]\n        h = eager(x)\n        h = eager(h)\n        h = self.fc(h)\n        return eager(h)\n");
        let f = crate::breaks::testing::messages(&first);
        let lines: Vec<(usize, bool)> = f
            .iter()
            .map(|(l, _, m)| (*l, m.contains("before any operation")))
            .collect();
        assert_eq!(lines, vec![(15, true), (16, true), (18, false)]);
    }
}
