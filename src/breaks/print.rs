//! FX105 / GB0059: `print(...)` in forward. Dynamo does not trace the builtin's side effect.

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx.events(EventKind::Print) {
        let mut f = cx.finding_at_event(Rule::Print, "GB0059", e);
        f.message = format!(
            "print() in forward (`{}`) cannot be traced",
            super::snippet(&cx.source(e.file, e.span))
        );
        f.hint = "remove the print, guard it with `if not torch.compiler.is_compiling():`, or log from a forward hook outside the compiled region".into();
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, HEAD};

    #[test]
    fn print_breaks_unless_guarded() {
        let src = format!("{HEAD}        h = self.fc(x)\n        print(h.shape)\n        if not torch.compiler.is_compiling():\n            pass\n        return h\n");
        assert_eq!(codes(&src), vec![(11, "GB0059")]);
    }
}
