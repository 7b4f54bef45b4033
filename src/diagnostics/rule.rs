//! The graph-break rules, one variant each: the code users select and suppress, the Dynamo
//! graph-break ids the rule maps its findings to, a title, and whether `fixes` has an
//! automatic fix for it. Rules, fixes and front ends name a rule by its variant, so a mistyped
//! code does not compile:
//!
//! ```compile_fail
//! let _ = staticfx::diagnostics::Rule::Prnt;
//! ```
//!
//! ```
//! use staticfx::diagnostics::Rule;
//! assert_eq!(Rule::Print.code(), "FX105");
//! assert_eq!(Rule::from_code("FX105"), Some(Rule::Print));
//! ```

use serde::Serialize;

macro_rules! rules {
    ($($variant:ident = $code:literal, [$($gb:literal),*], fix: $fix:literal, $title:literal;)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub enum Rule {
            $($variant,)*
        }

        impl Rule {
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

            /// `FX101`: what `--select`, `--ignore` and `# noqa:` name.
            pub const fn code(self) -> &'static str {
                match self {
                    $(Rule::$variant => $code,)*
                }
            }

            /// The Dynamo graph-break ids (`GB0170`) a finding of this rule may carry; empty
            /// for a possible break the analyser could not see into.
            pub const fn gb_ids(self) -> &'static [&'static str] {
                match self {
                    $(Rule::$variant => &[$($gb),*],)*
                }
            }

            /// Whether the `fixes` stage computes an automatic fix for this rule's findings (the
            /// noqa suppression, offered for every rule, does not count).
            pub const fn has_fix(self) -> bool {
                match self {
                    $(Rule::$variant => $fix,)*
                }
            }

            /// One line, for `--select` help, SARIF rule descriptions and docs.
            pub const fn title(self) -> &'static str {
                match self {
                    $(Rule::$variant => $title,)*
                }
            }
        }
    };
}

rules! {
    DataDependentBranch = "FX101", ["GB0170"], fix: true, "data-dependent branch";
    ScalarConversion = "FX102", ["GB0124", "GB0033", "GB0059", "GB0038"], fix: true, "tensor converted to a Python scalar";
    Tolist = "FX103", ["GB0109", "GB0033"], fix: false, "Tensor.tolist()";
    DynamicShapeOp = "FX104", ["GB0036"], fix: false, "dynamic-shape operator";
    Print = "FX105", ["GB0059"], fix: true, "print() in forward";
    Logging = "FX106", ["GB0291", "GB4841", "GB0156"], fix: true, "logging in forward";
    WallClockTime = "FX107", ["GB9193", "GB0007"], fix: true, "wall-clock time in forward";
    ExplicitGraphBreak = "FX108", ["GB0025"], fix: false, "explicit graph break";
    RequiresGrad = "FX109", ["GB0125", "GB8985"], fix: false, "requires_grad_() in forward";
    Backward = "FX110", ["GB0123"], fix: false, "backward() in forward";
    Generator = "FX111", ["GB0003"], fix: false, "generator forward";
    ClassInForward = "FX112", ["GB8977", "GB0075"], fix: false, "class statement in forward";
    Deepcopy = "FX113", ["GB4198", "GB0179"], fix: false, "copy.deepcopy of a tensor";
    Numpy = "FX114", ["GB0294", "GB0158", "GB0033"], fix: false, "numpy operation Dynamo does not model";
    CExtension = "FX115", ["GB0007", "GB0208"], fix: false, "call into a C extension";
    DisabledCall = "FX116", ["GB0098", "GB0099"], fix: false, "call to a torch.compiler.disable()d function";
    AutogradApplyDuplicate = "FX117", ["GB6297"], fix: false, "autograd.Function.apply given one tensor twice";
    BufferReassign = "FX118", ["GB4841"], fix: false, "nn.Buffer returned unchanged and assigned back to the module in forward";
    ModuleInForward = "FX119", ["GB0264", "GB0119"], fix: false, "module with parameters constructed in forward";
    UnsupportedContextManager = "FX120", ["GB0142"], fix: false, "context manager Dynamo cannot enter";
    RecurrentModule = "FX121", ["GB0148", "GB0014"], fix: false, "RNN, GRU or LSTM layer Dynamo does not trace";
    MethodAfterBreak = "FX123", ["GB0007"], fix: false, "tensor method call whose arguments broke the graph";
    EagerComprehension = "FX122", ["GB9493", "GB0156"], fix: false, "comprehension over a list or dict in code Dynamo runs eagerly";
    RecompileState = "FX201", [], fix: true, "recompile risk: forward changes a value Dynamo guards on";
    ArgumentGuard = "FX202", [], fix: false, "recompile risk: Dynamo guards on a Python value passed to forward";
    UnknownCall = "FX190", [], fix: false, "possible graph break: a call Dynamo may refuse (compiled code, a skipped module)";
    ShapeMismatch = "FX301", [], fix: false, "will raise at run time: shape mismatch";
    UnresolvedCall = "FX907", [], fix: false, "analysis limit: traced values passed to something the analyser could not resolve";
}

impl Rule {
    /// A rule of the FX3xx family: the code raises when it runs, in eager PyTorch as under
    /// Dynamo. Not a graph break: such findings have no gb id, count in no break total and
    /// no break region, and are not "possible breaks" either.
    pub const fn raises(self) -> bool {
        matches!(self, Rule::ShapeMismatch)
    }

    /// A rule of the FX2xx family: the graph compiles, but a guard Dynamo installs fails on a
    /// later call and the frame compiles again. Not a graph break either: no gb id, and no
    /// count in a break total.
    pub const fn recompiles(self) -> bool {
        matches!(self, Rule::RecompileState | Rule::ArgumentGuard)
    }

    /// A (possible) graph break or an analysis limit: what the break summaries list.
    pub const fn breaks_graph(self) -> bool {
        !self.raises() && !self.recompiles()
    }

    /// The rule with this code (`FX105`), for codes read from the user (settings, noqa).
    pub fn from_code(code: &str) -> Option<Rule> {
        Rule::ALL
            .iter()
            .copied()
            .find(|r| r.code().eq_ignore_ascii_case(code))
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

/// Dynamo's documentation page for a graph-break id.
pub fn gb_url(id: &str) -> Option<String> {
    (!id.is_empty()).then(|| {
        format!(
            "https://meta-pytorch.org/compile-graph-break-site/gb/{}.html",
            id.to_ascii_lowercase()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::Rule;

    #[test]
    fn codes_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &r in Rule::ALL {
            assert!(seen.insert(r.code()), "{r:?}");
            assert_eq!(Rule::from_code(r.code()), Some(r));
        }
        assert_eq!(Rule::from_code("FX999"), None);
    }
}
