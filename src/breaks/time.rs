//! FX107 / GB9193: wall-clock reads (`time.time()`, `time.perf_counter()`, ...) in forward.
//! Dynamo breaks at every call.

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx.events(EventKind::Time) {
        let mut f = cx.finding_at_event(Rule::WallClockTime, "GB9193", e);
        f.message = format!("call to a time function (`time.{}()`) in forward", e.detail);
        f.hint = "time the compiled module from outside forward, or use torch.profiler / CUDA events around the call".into();
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::codes;

    #[test]
    fn every_clock_read() {
        let src = "import time\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        t0 = time.perf_counter()\n        h = self.fc(x)\n        self.dt = time.perf_counter() - t0\n        return h\n";
        assert_eq!(codes(src), vec![(11, "GB9193"), (13, "GB9193")]);
    }
}
