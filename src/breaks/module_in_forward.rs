//! FX119 / GB0264 and GB0119: a module with parameters constructed while forward runs
//! (BigBird's `set_attention_type` builds new attention layers on a short input).
//!
//! Dynamo refuses the `nn.Parameter` constructor (GB0264, `graph_break_on_nn_param_ctor`): the
//! graph breaks where `nn.Linear(...)` (or `nn.Parameter(...)`) is called. When that call sits
//! in the `__init__` of a user module built in forward, the constructor then runs as a frame of
//! its own, which Dynamo cannot start on a module whose `__dict__` is still empty (GB0119
//! "Uninitialized nn.Module" at its `super().__init__()`): that frame runs eagerly, so only its
//! first parameter is reported. A module without parameters (`nn.ReLU()`, a user module of
//! such) is traced and does not break.

use std::collections::HashSet;

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    let events = &cx.result.events;
    let made: Vec<usize> = (0..events.len())
        .filter(|&i| events[i].kind == EventKind::ParameterCreated)
        .collect();
    if made.is_empty() {
        return;
    }
    let inits: Vec<usize> = (0..events.len())
        .filter(|&i| events[i].kind == EventKind::ModuleInit)
        .collect();
    const HINT: &str = "build the module in __init__ (or once, outside the compiled call) and only call it in forward";

    for &i in &inits {
        let init = &events[i];
        // a parameter made later inside this constructor (or a constructor it calls)
        let breaks = made
            .iter()
            .any(|&p| p > i && events[p].call_chain.starts_with(&init.call_chain));
        if !breaks {
            continue;
        }
        let mut f = cx.finding_at_event(Rule::ModuleInForward, "GB0119", init);
        f.message = format!(
            "`{}` is constructed in forward and makes parameters: after that break Dynamo runs \
             its __init__ as a frame of its own and cannot trace the uninitialized module",
            init.detail
        );
        f.hint = HINT.into();
        out.push(f);
    }

    // in forward's own frame Dynamo resumes after each break; a constructor's frame runs
    // eagerly after its first
    let constructor_frames: HashSet<&[(_, _)]> = inits
        .iter()
        .map(|&i| events[i].call_chain.as_slice())
        .collect();
    let mut reported = HashSet::new();
    for &p in &made {
        let e = &events[p];
        let chain = e.call_chain.as_slice();
        if constructor_frames.contains(chain) && !reported.insert(chain) {
            continue;
        }
        let mut f = cx.finding_at_event(Rule::ModuleInForward, "GB0264", e);
        f.message = format!(
            "`{}` makes an nn.Parameter while forward runs; Dynamo does not trace the \
             nn.Parameter constructor",
            super::snippet(&cx.source(e.file, e.span))
        );
        f.hint = HINT.into();
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::codes;

    const SUB: &str = "import torch\nfrom torch import nn\n\nclass Sub(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.act = nn.ReLU()\n        self.a = nn.Linear(4, 4)\n        self.b = nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.b(self.a(x))\n\nclass Plain(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.act = nn.ReLU()\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n";

    fn model(body: &str) -> String {
        format!("{SUB}{body}        return self.fc(x)\n")
    }

    /// As torch 2.15 labels them (scripts/breaks/label_breaks.py on the same modules).
    #[test]
    fn user_module_with_parameters_built_in_forward() {
        assert_eq!(
            codes(&model("        self.sub = Sub()\n")),
            vec![(6, "GB0119"), (8, "GB0264")]
        );
    }

    #[test]
    fn leaf_with_parameters_built_in_forward() {
        assert_eq!(
            codes(&model("        self.l = nn.Linear(4, 4)\n")),
            vec![(25, "GB0264")]
        );
    }

    #[test]
    fn modules_without_parameters_are_traced() {
        let body = "        self.p = Plain()\n        x = nn.ReLU()(x)\n";
        assert_eq!(codes(&model(body)), vec![]);
    }
}
