//! FX202: Dynamo guards on a Python value passed to forward, so a call with another value
//! recompiles.
//!
//! Dynamo compiles forward for the Python values it is called with (bools, ints, floats,
//! strings, None, lists, tuples, dicts) and guards on each where forward uses it: a branch on
//! a flag (`normalize == False`), a number meeting a tensor (`scale == 1.0`), `range(steps)`
//! (`steps == 2`), a list iterated or measured (`len(xs) == 1`), an item read
//! (`opts['mode'] == 'plain'`), an `is None` test (`mask is None`). Calls with the same values
//! reuse the graph; each call with another value fails the guard and compiles again, until
//! `recompile_limit` (8) makes Dynamo run the frame eagerly. An argument only passed along,
//! or never read, installs no guard, and a tensor argument is never guarded by value.
//!
//! The tracer follows the values forward is called with (`eval::trace::argument_guards`)
//! and logs the first use of each argument Dynamo guards on: one finding per argument, on the
//! line that installs the guard. Checked against the generated programs labelled by
//! torch.compile (`tests/recompiles_generated.rs`).
//!
//! Severity information: unlike FX201, nothing fails while callers keep passing the same
//! value, and most arguments are flags callers never vary (`use_cache`, `return_dict`). An
//! `is None` guard is a hint: it splits callers into two cases, None or a value, each compiled
//! once, and it is what per-class analysis finds on every optional tensor argument
//! (`attention_mask=None`), where a recompile storm cannot come from it.

use super::{Ctx, Finding};
use crate::diagnostics::{Rule, Severity};

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for g in &cx.result.argument_guards {
        let mut f = cx.finding(Rule::ArgumentGuard, "", g.file, g.span, &g.call_chain);
        f.severity = severity(&g.guard);
        f.message = format!(
            "Dynamo guards on forward's argument `{}`: `{}`, so calls with another value \
             recompile, once per distinct value",
            g.argument, g.guard
        );
        f.hint = hint(&g.guard);
        out.push(f);
    }
}

/// A hint for the two-case `is None` guard, information for guards on values callers may
/// vary without bound (numbers, strings, lengths, flags and items).
fn severity(guard: &str) -> Severity {
    if guard.ends_with(" is None") {
        Severity::Hint
    } else {
        Severity::Info
    }
}

/// What to do instead, by the kind of guard.
fn hint(guard: &str) -> String {
    if guard.starts_with("len(") || guard.starts_with("not ") {
        "pass a fixed number of items, or stack them into one tensor".into()
    } else if guard.ends_with(" is None") {
        "expected when callers switch between None and a tensor: one compile per case".into()
    } else if guard.contains(" == ") && guard.rsplit(" == ").next().is_some_and(is_number) {
        "pass the number as a tensor (`torch.tensor(value)`) if callers vary it, or mark it \
         dynamic"
            .into()
    } else {
        "expected when callers switch modes: one compile per value; keep the set of values small"
            .into()
    }
}

fn is_number(shown: &str) -> bool {
    shown.parse::<f64>().is_ok()
}

#[cfg(test)]
mod tests {
    use crate::analysis::{analyze_file, GraphOptions};

    /// The guard each kind of argument gets, as Dynamo prints it (tests/expected/recompiles),
    /// from forwards whose defaults are the first call's values. `$0` marks the guarding use.
    #[test]
    fn guards_read_as_dynamo_prints_them() {
        let cases = [
            ("scale=1.0", "h = h * $0scale", "scale == 1.0"),
            (
                "eps=0.5",
                "if $0eps > 0.25:\n            h = h + 1",
                "eps == 0.5",
            ),
            (
                "steps=2",
                "for _ in range($0steps):\n            h = h + 1",
                "steps == 2",
            ),
            ("k=3", "h = h * $0k", "k == 3"),
            (
                "normalize=False",
                "if $0normalize:\n            h = h / 2",
                "normalize == False",
            ),
            (
                "act='relu'",
                "h = torch.relu(h) if $0act == 'relu' else h",
                "act == 'relu'",
            ),
            (
                "act='ReLU'",
                "h = torch.relu(h) if $0act.lower() == 'relu' else h",
                "act == 'ReLU'",
            ),
            (
                "mask=None",
                "if $0mask is not None:\n            h = h * mask",
                "mask is None",
            ),
            (
                "ws=[1.0]",
                "for w in $0ws:\n            h = h * w",
                "len(ws) == 1",
            ),
            ("dims=[1, 2]", "h = h + len($0dims)", "len(dims) == 2"),
            ("sizes=(2, 3)", "h = h * $0sizes[0]", "sizes[0] == 2"),
            (
                "opts={'mode': 'plain'}",
                "if $0opts['mode'] == 'plain':\n            h = h - 1",
                "opts['mode'] == 'plain'",
            ),
        ];
        for (param, body, guard) in cases {
            let marker = body.find("$0").unwrap();
            let body = body.replace("$0", "");
            let head = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    \
                        def __init__(self):\n        super().__init__()\n        \
                        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x, "
                .to_string();
            let before_body = format!("{head}{param}):\n        h = self.fc(x)\n        ");
            let src = format!("{before_body}{body}\n        return h\n");
            let offset = before_body.len() + marker;
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("m.py");
            std::fs::write(&path, &src).unwrap();
            let a = analyze_file(&path, &GraphOptions::default()).unwrap();
            let found: Vec<_> = a.graphs[0]
                .breaks
                .iter()
                .filter(|f| f.code == "FX202")
                .collect();
            assert_eq!(found.len(), 1, "{param}: {found:?}");
            assert!(
                found[0].message.contains(&format!("`{guard}`")),
                "{param}: {}",
                found[0].message
            );
            assert_eq!(found[0].span.start, offset, "{param}: {}", found[0].message);
            let two_cases = guard.ends_with(" is None");
            assert_eq!(
                found[0].severity == crate::diagnostics::Severity::Hint,
                two_cases,
                "{param}"
            );
        }
    }

    /// A submodule's forward behind a decorator's `wrapper(self, *args, **kwargs)`
    /// (transformers' `can_return_tuple`, diffusers' `apply_lora_scale`) gets the keyword
    /// through the spread: torch 2.15 logs `scale == 1.0` on the inner forward's use. At the
    /// root, the wrapper's `kwargs` is the frame's input, guarded as a dict: no FX202 there.
    #[test]
    fn guards_reach_a_forward_behind_a_spreading_decorator() {
        let src = "import functools\nimport torch\nfrom torch import nn\n\n\n\
                   def wrapped(fn):\n    @functools.wraps(fn)\n    \
                   def wrapper(self, *args, **kwargs):\n        \
                   return fn(self, *args, **kwargs)\n    return wrapper\n\n\n\
                   class Inner(nn.Module):\n    def __init__(self):\n        \
                   super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    \
                   @wrapped\n    def forward(self, x, scale=1.0):\n        \
                   return self.fc(x) * scale\n\n\n\
                   class M(nn.Module):\n    def __init__(self):\n        \
                   super().__init__()\n        self.inner = Inner()\n\n    \
                   def forward(self, x, scale=1.0):\n        \
                   return self.inner(x, scale=scale)\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.py");
        std::fs::write(&path, src).unwrap();
        let a = analyze_file(&path, &GraphOptions::default()).unwrap();
        let fx202 = |class: &str| -> Vec<(String, usize)> {
            let g = a.graphs.iter().find(|g| g.class == class).unwrap();
            g.breaks
                .iter()
                .filter(|f| f.code == "FX202")
                .map(|f| (f.message.clone(), f.span.start))
                .collect()
        };
        let use_at = src.find("* scale").unwrap() + 2;
        let outer = fx202("M");
        assert!(
            outer.len() == 1 && outer[0].0.contains("`scale == 1.0`") && outer[0].1 == use_at,
            "{outer:?}"
        );
        // Inner traced on its own: the root's wrapper takes `scale` into its `kwargs`
        assert!(fx202("Inner").is_empty(), "{:?}", fx202("Inner"));
    }

    /// Passed along, kept, unused or a tensor: no guard; nor a dict read through a method,
    /// whose guards (on its keys) this rule does not word.
    #[test]
    fn arguments_dynamo_does_not_guard_have_none() {
        let src = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    \
                   def __init__(self):\n        super().__init__()\n        \
                   self.fc = nn.Linear(8, 8)\n\n    \
                   def forward(self, x, t, flag=False, extra=None, opts={}):\n        \
                   h = self.fc(x) * t * opts.get('scale', 1.0)\n        return h, extra\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.py");
        std::fs::write(&path, src).unwrap();
        let a = analyze_file(&path, &GraphOptions::default()).unwrap();
        assert!(
            a.graphs[0].breaks.iter().all(|f| f.code != "FX202"),
            "{:?}",
            a.graphs[0].breaks
        );
    }
}
