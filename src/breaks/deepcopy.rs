//! FX113 / GB4198 (GB0179 before): `copy.deepcopy` of a tensor. torch 2.15 breaks here and
//! `x.clone()` does not; torch 2.8 breaks on a deepcopy of anything, a config dict included.

use super::version::Behaviour;
use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

/// The ids `cx.target` may pick here besides the literal ones (see `version.rs`).
#[allow(dead_code)]
const VERSIONED_IDS: &[&str] = &["GB4198", "GB0179"];

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx.events(EventKind::Deepcopy) {
        let tensor = e.detail == "tensor";
        let id = cx.target.gb_id(if tensor {
            Behaviour::DeepcopyTensor
        } else {
            Behaviour::DeepcopyValue
        });
        if id.is_empty() {
            continue;
        }
        let mut f = cx.finding_at_event(Rule::Deepcopy, id, e);
        let call = cx.source(e.file, e.span);
        let what = if tensor { "a tensor" } else { "a Python value" };
        f.message = format!("copy.deepcopy of {what} (`{}`)", super::snippet(&call));
        let arg = call
            .find('(')
            .zip(call.rfind(')'))
            .map(|(a, b)| call[a + 1..b].trim().to_string())
            .unwrap_or_else(|| "x".into());
        f.hint = if tensor {
            format!("use `{arg}.clone()` (add `.detach()` if the copy must not carry gradients)")
        } else {
            format!("copy `{arg}` once outside forward (e.g. in __init__), or build the copy without copy.deepcopy")
        };
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::findings;

    #[test]
    fn deepcopy_tensor() {
        let src = "import copy\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        h = self.fc(x)\n        r = copy.deepcopy(x)\n        cfg = copy.deepcopy({'a': 1})\n        return h + r\n";
        let f = findings(src);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].0, f[0].2, f[0].3.as_str()),
            (
                12,
                "GB4198",
                "use `x.clone()` (add `.detach()` if the copy must not carry gradients)"
            )
        );
    }

    /// A deepcopy of the input before any operation is still a break (Dynamo's graph-break
    /// log has it, at GB4198), but the graph it ends is empty: torch 2.15's explain reports one
    /// graph and no break, and the message says why.
    #[test]
    fn deepcopy_of_the_input_first_says_the_graph_before_is_empty() {
        let src = "import copy\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        r = copy.deepcopy(x)\n        return self.fc(x) + r\n";
        let f = crate::breaks::testing::messages(src);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].0, f[0].1), (11, "GB4198"));
        assert!(f[0].2.contains("before any operation"), "{}", f[0].2);
        // after an operation, no such note
        let later = src.replace(
            "        r = copy.deepcopy(x)\n        return self.fc(x) + r\n",
            "        h = self.fc(x)\n        r = copy.deepcopy(x)\n        return h + r\n",
        );
        let f = crate::breaks::testing::messages(&later);
        assert_eq!((f[0].0, f[0].1), (12, "GB4198"));
        assert!(!f[0].2.contains("before any operation"), "{}", f[0].2);
    }
}
