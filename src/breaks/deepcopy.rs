//! FX113 / GB4198: `copy.deepcopy` of a tensor. (torch 2.15 breaks here; `x.clone()` does not.)

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx.events(EventKind::Deepcopy) {
        let mut f = cx.finding_at_event(Rule::Deepcopy, "GB4198", e);
        let call = cx.source(e.file, e.span);
        f.message = format!("copy.deepcopy of a tensor (`{}`)", super::snippet(&call));
        let arg = call
            .find('(')
            .zip(call.rfind(')'))
            .map(|(a, b)| call[a + 1..b].trim().to_string())
            .unwrap_or_else(|| "x".into());
        f.hint =
            format!("use `{arg}.clone()` (add `.detach()` if the copy must not carry gradients)");
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::findings;

    #[test]
    fn deepcopy_tensor() {
        let src = "import copy\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        r = copy.deepcopy(x)\n        cfg = copy.deepcopy({'a': 1})\n        return self.fc(x) + r\n";
        let f = findings(src);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].0, f[0].2, f[0].3.as_str()),
            (
                11,
                "GB4198",
                "use `x.clone()` (add `.detach()` if the copy must not carry gradients)"
            )
        );
    }
}
