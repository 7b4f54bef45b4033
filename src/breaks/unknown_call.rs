//! FX190: a *possible* graph break — traced values passed to a call Dynamo may really refuse:
//! code in a compiled extension module (Dynamo cannot trace machine code), a module Dynamo's
//! trace rules skip (`BUILTIN_SKIPLIST` / `THIRDPARTY_SKIPLIST` in `torch/_dynamo/trace_rules.py`),
//! or a standard-library function (Dynamo inlines the Python ones and breaks on those written
//! in C). Kept apart from the proven FX1xx breaks, at low severity, with no Dynamo id.
//!
//! A call the analyser could not resolve at all is not a possible break but a limit of the
//! analysis: `unresolved_call` reports it.

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::diagnostics::Severity;
use crate::semantic::environment::LibraryModule;
use crate::traced::EventKind;

/// `torch/_dynamo/trace_rules.py` (torch 2.15): standard-library modules whose functions Dynamo
/// wraps as `SkipFunctionVariable` (a graph break when called), less those modelled elsewhere
/// (`copy.deepcopy` by the deepcopy rule); the third-party ones are
/// `eval::DYNAMO_THIRDPARTY_SKIPLIST`.
pub const DYNAMO_SKIPPED: &[&str] = &[
    // BUILTIN_SKIPLIST
    "abc",
    "copy",
    "importlib",
    "random",
    "re",
    "linecache",
];

/// Functions of skipped modules Dynamo models itself (`variables/builder.py` routes the
/// module-level `random` helpers to `RandomVariable` / `RandomValueSource`).
const DYNAMO_MODELLED: &[&str] = &[
    "random.random",
    "random.randint",
    "random.randrange",
    "random.uniform",
    "random.shuffle",
    "random.sample",
    "random.seed",
];

/// What Dynamo does with a call on traced values into `path`, a dotted name outside the
/// analysed code.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Traced or modelled by Dynamo: nothing to report.
    Traced,
    /// Dynamo may refuse it, for this reason (FX190).
    PossibleBreak(String),
    /// Neither in the project nor installed: the analyser cannot tell (FX907).
    Unresolved,
}

pub fn classify(cx: &Ctx, path: &str) -> Verdict {
    let top = path.split('.').next().unwrap_or("");
    if let Some((module, file)) = cx.project.compiled_module_of(path) {
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        return Verdict::PossibleBreak(format!(
            "`{path}` is in the compiled extension module `{module}` ({name}); Dynamo cannot trace compiled code"
        ));
    }
    if top == "numpy" {
        return Verdict::PossibleBreak(format!(
            "`{path}` is a numpy function staticfx does not model; Dynamo traces numpy through torch._numpy only where torch implements it"
        ));
    }
    if DYNAMO_MODELLED.contains(&path) || is_known_traceable(top) {
        return Verdict::Traced;
    }
    if DYNAMO_SKIPPED.contains(&top) || crate::eval::DYNAMO_THIRDPARTY_SKIPLIST.contains(&top) {
        return Verdict::PossibleBreak(format!(
            "Dynamo's trace rules skip the module `{top}`, so calling `{path}` on traced values breaks the graph unless Dynamo special-cases it"
        ));
    }
    if is_stdlib(cx, top) {
        return Verdict::PossibleBreak(format!(
            "`{path}` is in the standard library: Dynamo inlines its Python functions and breaks on those implemented in C"
        ));
    }
    // Installed but never read (the evaluator keeps some libraries opaque): Dynamo inlines it
    // and may meet code it refuses.
    match cx.project.library_module(path_module(cx, path).as_str()) {
        Some(LibraryModule::Source(_) | LibraryModule::Namespace(_)) => Verdict::PossibleBreak(format!(
            "`{path}` is installed but outside what staticfx analyses; staticfx cannot tell whether Dynamo traces it"
        )),
        _ => Verdict::Unresolved,
    }
}

/// The longest prefix of `path` that names a module of the environment.
fn path_module(cx: &Ctx, path: &str) -> String {
    let parts: Vec<&str> = path.split('.').collect();
    (1..=parts.len())
        .rev()
        .map(|n| parts[..n].join("."))
        .find(|m| cx.project.library_module(m).is_some())
        .unwrap_or_else(|| parts[0].to_string())
}

fn is_stdlib(cx: &Ctx, top: &str) -> bool {
    match cx.project.environment() {
        Some(env) if !env.stdlib_modules.is_empty() => env.stdlib_modules.iter().any(|m| m == top),
        _ => COMMON_STDLIB.contains(&top),
    }
}

/// Standard-library modules model code calls, for when no interpreter says which they are.
const COMMON_STDLIB: &[&str] = &[
    "os",
    "sys",
    "io",
    "json",
    "pathlib",
    "subprocess",
    "threading",
    "multiprocessing",
    "socket",
    "shutil",
    "glob",
    "tempfile",
    "string",
    "textwrap",
    "datetime",
    "statistics",
    "bisect",
    "heapq",
    "array",
    "decimal",
    "fractions",
    "numbers",
    "uuid",
    "base64",
    "inspect",
    "types",
    "weakref",
    "contextlib",
    "enum",
    "time",
    "logging",
    "pickle",
    "gc",
    "traceback",
    "pprint",
    "reprlib",
    "csv",
    "zipfile",
    "gzip",
    "sqlite3",
];

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx.events(EventKind::ExternalCall) {
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
        let Verdict::PossibleBreak(why) = classify(cx, &e.detail) else {
            continue;
        };
        let mut f = cx.finding_at_event(Rule::UnknownCall, "", e);
        f.severity = Severity::Info;
        let call = super::snippet(&cx.source(e.file, e.span));
        f.message = format!("possible graph break: {why} (`{call}`)");
        f.hint = "if Dynamo cannot trace it, wrap it as a custom op (torch.library.custom_op) or allow it with torch.compiler.allow_in_graph".into();
        out.push(f);
    }
}

/// Pure-Python helpers Dynamo inlines (or models) without trouble.
pub(super) fn is_known_traceable(module: &str) -> bool {
    matches!(
        module,
        "operator"
            | "functools"
            | "itertools"
            | "math"
            | "einops"
            | "typing"
            | "typing_extensions"
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
    fn skipped_module_is_a_possible_break() {
        let src = "import re\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        return re.sub('a', 'b', self.fc(x))\n";
        let f = findings(src);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].0, f[0].1, f[0].2), (11, "FX190", ""));
    }

    #[test]
    fn random_helpers_dynamo_models_are_not_breaks() {
        // The same traced size reaches both calls: only the skipped `re` is reported.
        let src = "import random\nimport re\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n        n = random.randint(0, x.size(0))\n        m = re.escape(x.size(0))\n        return x\n";
        let f = findings(src);
        let got: Vec<(usize, &str)> = f.iter().map(|f| (f.0, f.1)).collect();
        assert_eq!(got, vec![(9, "FX190")], "{f:?}");
    }

    #[test]
    fn unresolved_call_is_not_a_possible_break() {
        let src = "import torch\nfrom torch import nn\nfrom somewhere_else import magic\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        return magic(self.fc(x))\n";
        let f = findings(src);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].0, f[0].1, f[0].2), (11, "FX907", ""));
    }
}
