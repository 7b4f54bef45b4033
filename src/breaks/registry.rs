//! The Dynamo graph-break ids staticfx maps its findings to, with their `gb_type` as worded in
//! `torch/_dynamo/graph_break_registry.json` (torch 2.15). Only the ids a rule can emit.

pub const GB_TYPES: &[(&str, &str)] = &[
    ("GB0003", "Attempt to trace generator"),
    ("GB0007", "Attempted to call function marked as skipped"),
    ("GB0025", "Call to `torch._dynamo.graph_break()`"),
    ("GB0033", "Data dependent operator"),
    ("GB0036", "Dynamic shape operator"),
    ("GB0038", "Dynamic slicing with Tensor arguments"),
    ("GB0075", "LOAD_BUILD_CLASS bytecode not supported"),
    ("GB0156", "Unsupported method call"),
    ("GB0179", "copy.deepcopy()"),
    (
        "GB0098",
        "Skip calling `torch.compiler.disable()`d function",
    ),
    (
        "GB0099",
        "Skip inlining `torch.compiler.disable()`d function",
    ),
    ("GB0059", "Failed to trace builtin operator"),
    ("GB0109", "Tensor.tolist() with non-integer tensor"),
    ("GB0123", "Unsupported Tensor.backward() call"),
    (
        "GB0124",
        "Unsupported Tensor.item() call with capture_scalar_outputs=False",
    ),
    ("GB0119", "Uninitialized nn.Module"),
    ("GB0142", "Unsupported context manager"),
    ("GB0148", "Unsupported function call (delayed)"),
    ("GB0014", "Attempted to wrap RNN, GRU, or LSTM"),
    ("GB0125", "Unsupported Tensor.requires_grad_() call"),
    ("GB0158", "Unsupported ndarray method call"),
    ("GB0170", "Data-dependent branching"),
    ("GB0208", "torch.* op returned non-Tensor"),
    (
        "GB0264",
        "Attempted to use `torch.nn.Parameter()` constructor with Dynamo",
    ),
    (
        "GB0291",
        "logging.Logger method not supported for non-export cases",
    ),
    (
        "GB0294",
        "attempted to trace numpy function unsupported by PyTorch",
    ),
    ("GB4198", "Attempted to copy.deepcopy a tensor"),
    ("GB4841", "Unsupported python_type() call"),
    ("GB6297", "autograd.Function.apply: duplicate tensor input"),
    ("GB7000", "graph break in loop"),
    ("GB8977", "Invalid call to __build_class__"),
    ("GB8985", "requires_grad_() intermediate leaked as output"),
    ("GB9193", "Call to a time function"),
    (
        "GB9493",
        "C-implemented special method without VariableTracker model",
    ),
];

pub fn gb_type(id: &str) -> &'static str {
    GB_TYPES
        .iter()
        .find(|(i, _)| *i == id)
        .map(|(_, t)| *t)
        .unwrap_or("Possible graph break")
}

pub use crate::diagnostics::gb_url as url;

#[cfg(test)]
mod tests {
    /// The table must say exactly what the labelled registry subset says.
    #[test]
    fn matches_registry_subset() {
        let v: serde_json::Value = serde_json::from_str(include_str!(
            "../../tests/expected/breaks/registry_subset.json"
        ))
        .unwrap();
        for (id, ty) in super::GB_TYPES {
            assert_eq!(v["ids"][id]["gb_type"].as_str(), Some(*ty), "{id}");
        }
        for rule in crate::diagnostics::Rule::ALL {
            for id in rule.gb_ids() {
                // an id only an older torch uses is worded by the version table
                assert!(
                    super::GB_TYPES.iter().any(|(i, _)| i == id)
                        || crate::breaks::version::older_gb_type(id).is_some(),
                    "{rule:?}: {id}"
                );
            }
        }
        assert_eq!(
            super::url("GB0170").unwrap(),
            "https://meta-pytorch.org/compile-graph-break-site/gb/gb0170.html"
        );
    }
}
