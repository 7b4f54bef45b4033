//! FX907: traced values passed to something the analyser could not resolve — an unknown
//! value, or a module that is neither in the project nor installed in the environment. That
//! is a limit of the analysis (information), not a graph break: Dynamo may well trace it.

use super::unknown_call::Verdict;
use super::{Ctx, Finding};
use crate::diagnostics::{Rule, Severity};
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx
        .result
        .events
        .iter()
        .filter(|e| e.kind == EventKind::UnknownCall || e.kind == EventKind::ExternalCall)
    {
        if e.kind == EventKind::ExternalCall {
            let module = e.detail.split('.').next().unwrap_or("");
            if super::c_extension::C_MODULES.contains(&module)
                || module == "numpy"
                || out.iter().any(|f| f.span == e.span)
                || super::unknown_call::classify(cx, &e.detail) != Verdict::Unresolved
            {
                continue;
            }
        }
        let mut f = cx.finding_at_event(Rule::UnresolvedCall, "", e);
        f.severity = Severity::Info;
        let call = super::snippet(&cx.source(e.file, e.span));
        f.message = if e.kind == EventKind::ExternalCall {
            let why = match cx.project.environment() {
                Some(_) => "is not in the project or the Python environment",
                None => "is outside the project and no Python environment was found",
            };
            format!("analysis limit: `{}` {why}, so staticfx cannot see what it does with traced values (`{call}`)", e.detail)
        } else {
            format!(
                "analysis limit: call of a value staticfx could not resolve (`{call}`): {}",
                // Why is the part users act on (which module is missing): room for a sentence.
                super::snippet_of(&e.detail, 160)
            )
        };
        out.push(f);
    }
}
