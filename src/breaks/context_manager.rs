//! FX120 / GB0142: a `with` statement on a manager Dynamo has no model of.
//!
//! Dynamo enters only the managers it models: grad mode, autocast, the profiler's ranges,
//! `warnings.catch_warnings`, `nullcontext`, `sdpa_kernel` and the like, and any Python class
//! with `__enter__`/`__exit__` (or a `@contextmanager` generator) whose code it traces. Any
//! other manager breaks the graph at the `with` (GB0142 "Unsupported context manager"), and
//! since Dynamo cannot resume inside the block, the frame holding the statement runs eagerly
//! from there (`frames.rs`). Only managers measured to break are reported (torch 2.8 and 2.15
//! alike); an external manager not listed here is assumed to be modelled.

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

/// The external callables whose results Dynamo cannot enter, with the type name its message
/// gives (`Dynamo does not know how to enter a `device` context manager`).
const UNSUPPORTED: &[(&str, &str)] = &[
    ("torch.device", "device"),
    ("threading.Lock", "lock"),
    ("threading.RLock", "RLock"),
];

/// The type name Dynamo prints for the manager a `with` enters, when Dynamo cannot enter it.
pub(super) fn unsupported(made_by: &str) -> Option<&'static str> {
    UNSUPPORTED
        .iter()
        .find(|(path, _)| *path == made_by)
        .map(|(_, name)| *name)
}

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx.events(EventKind::ExternalManager) {
        let Some(type_name) = unsupported(&e.detail) else {
            continue;
        };
        let mut f = cx.finding_at_event(Rule::UnsupportedContextManager, "GB0142", e);
        f.message = format!(
            "Dynamo does not know how to enter a `{type_name}` context manager (`{}`): the \
             graph breaks here and the rest of this function runs eagerly",
            e.detail
        );
        f.hint = match type_name {
            "device" => "pass `device=` to the factory calls inside the block instead of entering `torch.device`",
            _ => "take the lock outside the compiled call (around `model(x)`), or move the guarded code into a `torch.compiler.disable`d helper",
        }
        .into();
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, HEAD};

    #[test]
    fn a_device_manager_breaks_where_it_is_entered() {
        let src = format!(
            "{HEAD}        h = self.fc(x)\n        with torch.device(\"cpu\"):\n            t = torch.ones(8)\n        return h * t\n"
        );
        assert_eq!(codes(&src), vec![(11, "GB0142")]);
    }

    #[test]
    fn a_lock_made_at_module_level_or_in_init_breaks() {
        let src = "import threading\nimport torch\nfrom torch import nn\n\nLOCK = threading.Lock()\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n        self.lock = threading.RLock()\n\n    def forward(self, x):\n        with LOCK:\n            x = self.fc(x)\n        return x\n\nclass N(M):\n    def forward(self, x):\n        with self.lock:\n            x = self.fc(x)\n        return x\n";
        assert_eq!(codes(src), vec![(14, "GB0142"), (20, "GB0142")]);
    }

    #[test]
    fn managers_dynamo_models_do_not_break() {
        let src = format!(
            "{HEAD}        with torch.no_grad(), torch.autocast(\"cpu\", enabled=False):\n            h = self.fc(x)\n        with torch.set_grad_enabled(False):\n            h = h + 1\n        return h\n"
        );
        assert_eq!(codes(&src), vec![]);
    }
}
