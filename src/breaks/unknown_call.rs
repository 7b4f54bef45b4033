//! FX190: a *possible* graph break — traced values passed to something the analyser cannot
//! see into (an unresolved name, a third-party function outside the project root). Kept apart
//! from the proven FX1xx breaks, at low severity, and with no Dynamo id: Dynamo may well inline
//! it.

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::diagnostics::Severity;
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
            if super::c_extension::C_MODULES.contains(&module) {
                continue;
            }
            if let Some(func) = e.detail.strip_prefix("numpy.") {
                // Proven either way by the numpy rule: modelled (fine) or not (FX114).
                if super::numpy::MODELLED_FUNCS.contains(&func)
                    || func.starts_with("linalg.")
                    || out.iter().any(|f| f.span == e.span)
                {
                    continue;
                }
            }
            if is_known_traceable(&e.detail) {
                continue;
            }
        }
        let mut f = cx.finding_at_event(Rule::UnknownCall, "", e);
        f.severity = Severity::Info;
        let call = super::snippet(&cx.source(e.file, e.span));
        f.message = if e.kind == EventKind::ExternalCall {
            format!("possible graph break: `{}` is outside the analysed code; staticfx cannot tell whether Dynamo traces it (`{call}`)", e.detail)
        } else {
            format!("possible graph break: call of a value staticfx could not resolve (`{call}`)")
        };
        f.hint = "if Dynamo cannot trace it, wrap it as a custom op (torch.library.custom_op) or allow it with torch.compiler.allow_in_graph".into();
        out.push(f);
    }
}

/// Pure-Python helpers Dynamo inlines without trouble.
fn is_known_traceable(path: &str) -> bool {
    let module = path.split('.').next().unwrap_or("");
    matches!(
        module,
        "operator"
            | "functools"
            | "itertools"
            | "math"
            | "einops"
            | "typing"
            | "collections"
            | "dataclasses"
            | "builtins"
            | "warnings"
    )
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::findings;

    #[test]
    fn unresolved_call_is_a_possible_break() {
        let src = "import torch\nfrom torch import nn\nfrom somewhere_else import magic\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        return magic(self.fc(x))\n";
        let f = findings(src);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].0, f[0].1, f[0].2), (11, "FX190", ""));
    }
}
