//! FX108 / GB0025: `torch._dynamo.graph_break()` asks for the break explicitly.

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx.events(EventKind::GraphBreak) {
        let mut f = cx.finding_at_event(Rule::ExplicitGraphBreak, "GB0025", e);
        f.message = "explicit call to torch._dynamo.graph_break()".into();
        f.hint = "remove the call if the split is no longer needed (it is often left over from debugging)".into();
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, HEAD};

    #[test]
    fn explicit() {
        let src = format!(
            "{HEAD}        h = self.fc(x)\n        torch._dynamo.graph_break()\n        return h\n"
        );
        assert_eq!(codes(&src), vec![(11, "GB0025")]);
    }
}
