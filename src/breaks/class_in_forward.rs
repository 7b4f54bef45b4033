//! FX112 / GB8977: a `class` statement executed inside forward (`__build_class__` is not
//! traceable).

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx.events(EventKind::ClassDef) {
        let header = cx
            .source(e.file, e.span)
            .find('\n')
            .map(|n| e.span.start + n)
            .unwrap_or(e.span.end);
        let mut f = cx.finding(
            Rule::ClassInForward,
            "GB8977",
            e.file,
            crate::syntax::Span::new(e.span.start, header),
            &e.call_chain,
        );
        f.impact_nodes = cx.impact_from(e.nodes_before);
        f.message = "class statement inside forward: Dynamo cannot trace building a class".into();
        f.hint =
            "define the class at module level (or use a dict / namedtuple defined outside forward)"
                .into();
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, HEAD};

    #[test]
    fn local_class() {
        let src =
            format!("{HEAD}        class Out:\n            pass\n        return self.fc(x)\n");
        assert_eq!(codes(&src), vec![(10, "GB8977")]);
    }
}
