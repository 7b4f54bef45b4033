//! FX120 / GB0142: a `with` statement on a manager Dynamo has no model of.
//!
//! Dynamo enters only the managers it models: grad mode, autocast, the profiler's ranges,
//! `warnings.catch_warnings`, `nullcontext`, `sdpa_kernel` and the like, and any Python class
//! with `__enter__`/`__exit__` (or a `@contextmanager` generator) whose code it traces. Any
//! other manager breaks the graph at the `with` (GB0142 "Unsupported context manager"), and
//! since Dynamo cannot resume inside the block, the frame holding the statement runs eagerly
//! from there (`frames.rs`). Only managers measured to break are reported (torch 2.8 and 2.15
//! alike); an external manager not listed here is assumed to be modelled.
//!
//! The first read of a `functools.cached_property` in forward enters one too: before Python
//! 3.12 its `__get__` computes the value under `with self.lock:` (an `RLock`). Dynamo breaks
//! at the read, and the function holding it runs eagerly. On 3.12 and later it compiles.
use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::eval::{CACHED_PROPERTY_LOCK, CACHED_PROPERTY_LOCK_UNKNOWN_PYTHON};
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
        if let Some(f) = cached_property_read(cx, e) {
            out.push(f);
            continue;
        }
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

/// The first read of a `cached_property` in forward (the evaluator records it as the manager
/// `functools.cached_property <name>`, with `?` after the path when the Python version is not
/// known).
fn cached_property_read(cx: &Ctx, e: &crate::traced::TraceEvent) -> Option<Finding> {
    let (path, name) = e.detail.split_once(' ')?;
    let version = match path {
        CACHED_PROPERTY_LOCK => "",
        CACHED_PROPERTY_LOCK_UNKNOWN_PYTHON => {
            " (on Python 3.11 and older, where `cached_property` takes a lock; staticfx found no \
             Python environment to tell which version runs this)"
        }
        _ => return None,
    };
    let mut f = cx.finding_at_event(Rule::UnsupportedContextManager, "GB0142", e);
    f.message = format!(
        "Dynamo does not know how to enter a `RLock` context manager: the first read of the \
         `functools.cached_property` `{name}` computes it under the property's lock, so the \
         graph breaks here and the rest of this function runs eagerly{version}"
    );
    f.hint = format!(
        "read `{name}` once in `__init__` (the value is then cached on the instance before \
         forward runs), or compute it in `__init__` as a plain attribute; Python 3.12 and later \
         have no lock here"
    );
    Some(f)
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

    /// A `cached_property` read in `__init__` is cached on the instance before forward runs:
    /// forward's read finds the value and enters no lock (measured: one graph). Whether a first
    /// read in forward breaks depends on the Python version (`tests/python_env.rs`).
    #[test]
    fn a_cached_property_read_in_init_is_no_break_in_forward() {
        let src = "import functools\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n        assert self.width == 8\n\n    @functools.cached_property\n    def width(self):\n        return self.fc.in_features\n\n    def forward(self, x):\n        return self.fc(x)[..., : self.width]\n";
        assert_eq!(codes(src), vec![]);
    }
}
