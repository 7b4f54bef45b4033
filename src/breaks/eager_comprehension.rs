//! FX122 / GB9493 (torch 2.15) or GB0156 (2.8): a list, set or dict comprehension over a list
//! or a dict, in code Dynamo runs eagerly.
//!
//! Before Python 3.12 a comprehension is a function of its own. Dynamo inlines it while it
//! traces the frame around it, and nothing breaks. But when that frame runs eagerly (a break in
//! a loop or in a `try` body gave up on it, `frames.rs`), the comprehension is called as a
//! frame Dynamo compiles on its own, whenever that frame holds torch state (a module or tensor
//! among its free variables, `torch` among its globals). Its input is then the iterator of the
//! list or dict, which Dynamo has no model of: it skips the frame and reports the break.
//! transformers meets this in its output-capturing wrapper, whose forward call sits in a `try`
//! body. Only `frames.rs` knows which frames run eagerly, so it makes these findings; the
//! evaluator records the comprehensions that qualify (`eval/eager_comprehension.rs`).

use super::version::Behaviour;
use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::TraceEvent;

/// The ids `cx.target` may pick here (see `version.rs`).
#[allow(dead_code)]
const VERSIONED_IDS: &[&str] = &["GB9493", "GB0156"];

/// Nothing to do per rule: a comprehension breaks only in a frame Dynamo runs eagerly, which
/// the pass over frames decides after every rule ran (`refused_iterator`).
pub fn check(_: &Ctx, _: &mut Vec<Finding>) {}

/// The finding for a comprehension (event `e`) called from a frame that runs eagerly.
pub fn refused_iterator(cx: &Ctx, e: &TraceEvent) -> Finding {
    let (iterator, known_python) = match e.detail.strip_suffix('?') {
        Some(it) => (it, false),
        None => (e.detail.as_str(), true),
    };
    let mut f = cx.finding_at_event(
        Rule::EagerComprehension,
        cx.target.gb_id(Behaviour::ComprehensionIterator),
        e,
    );
    let python = if known_python {
        ""
    } else {
        " (on Python 3.11 and older, where a comprehension is a function of its own; staticfx \
         found no Python environment to tell which version runs this)"
    };
    f.message = format!(
        "'{iterator}' implements '__next__' in C and Dynamo has no model for it: an earlier \
         break made Dynamo run the code around this comprehension eagerly, so it compiles the \
         comprehension as a frame of its own, whose input is that iterator; Dynamo skips the \
         frame{python}"
    );
    f.hint = "fix the break that makes the enclosing code run eagerly (in a loop or a `try` \
              body); the comprehension then traces inline"
        .into();
    f
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::codes;

    /// What torch 2.15 on Python 3.11 reports (`tests/fixtures/breaks/eager_comprehension.py`
    /// is the labelled case): the helper's break inside the `try` body makes forward eager, and
    /// forward's comprehension over a dict, which reads `self`, is then a frame of its own.
    /// Over a tuple, or with no torch state in its frame, it is not.
    #[test]
    fn a_comprehension_in_an_eager_frame_breaks_on_list_and_dict_iterators() {
        let case = |iterable: &str, value: &str| {
            format!("import torch\nfrom torch import nn\n\nFLAGS = {{\"a\": 1, \"b\": 2}}\nNAMES = (\"a\", \"b\")\n\ndef run(fc, x):\n    h = fc(x)\n    torch._dynamo.graph_break()\n    return h\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        keys = [{value} for k in {iterable}]\n        try:\n            h = run(self.fc, x)\n        finally:\n            pass\n        return h.relu() + len(keys)\n")
        };
        let with_self = "getattr(self, \"flag\", k)";
        let on_dict = codes(&case("FLAGS", with_self));
        assert!(
            on_dict.contains(&(18, "GB9493")) || on_dict.contains(&(18, "GB0156")),
            "{on_dict:?}"
        );
        let on_tuple = codes(&case("NAMES", with_self));
        assert!(!on_tuple.iter().any(|(l, _)| *l == 18), "{on_tuple:?}");
        let no_torch_state = codes(&case("FLAGS", "k"));
        assert!(
            !no_torch_state.iter().any(|(l, _)| *l == 18),
            "{no_torch_state:?}"
        );
    }

    /// The same comprehension in a frame Dynamo traces is inlined: no break.
    #[test]
    fn a_comprehension_in_a_traced_frame_is_inlined() {
        let src = "import torch\nfrom torch import nn\n\nFLAGS = {\"a\": 1, \"b\": 2}\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        keys = [getattr(self, \"flag\", k) for k in FLAGS]\n        return self.fc(x) + len(keys)\n";
        assert_eq!(codes(src), vec![]);
    }
}
