//! Library functions the evaluator does not run, each for a stated reason: plumbing that never
//! shapes a graph (docstrings, value validation) and that would cost evaluation time or need
//! runtime machinery (typing introspection) the evaluator does not model. Everything else in
//! a library is evaluated from its source, or, for the methods `native_methods` lists, run
//! natively with the same result where the source is the text they were written against.

use super::value::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Override {
    /// The call returns `None` and does nothing else.
    ReturnNone,
    /// A decorator (bare or called with options) that returns what it decorates.
    IdentityDecorator,
}

struct Entry {
    module: &'static str,
    qualname: &'static str,
    behaviour: Override,
    #[allow(dead_code)]
    reason: &'static str,
}

const OVERRIDES: &[Entry] = &[
    Entry {
        module: "huggingface_hub.dataclasses",
        qualname: "type_validator",
        behaviour: Override::ReturnNone,
        reason: "checks a strict dataclass field's value against its annotation and raises on a \
                 mismatch; it never changes a value, and it needs typing's runtime introspection \
                 (`get_origin`/`get_args`) of annotations",
    },
    Entry {
        module: "transformers.modeling_utils",
        qualname: "PreTrainedModel.initialize_weights",
        behaviour: Override::ReturnNone,
        reason: "fills every parameter and buffer with initial values (`_init_weights` on each \
                 submodule, through `smart_apply`, which it adds to `torch.nn.Module`); values \
                 are not tracked and it never changes a shape, while running it costs more \
                 than the rest of a model's construction (4.57 and 5.x alike)",
    },
    Entry {
        module: "transformers.utils.auto_docstring",
        qualname: "auto_docstring",
        behaviour: Override::IdentityDecorator,
        reason: "rewrites the docstrings of model classes and forwards, nothing else; parsing \
                 every docstring costs most of a modeling file's evaluation",
    },
];

/// The override of the function `qualname` defined in `module`, if it has one.
pub fn lookup(module: &str, qualname: &str) -> Option<Override> {
    OVERRIDES
        .iter()
        .find(|e| e.qualname == qualname && e.module == module)
        .map(|e| e.behaviour)
}

/// What an overridden call returns; `again` is the overridden function itself, for a decorator
/// called with its options (`@auto_docstring(checkpoint=…)`).
pub fn apply(
    behaviour: Override,
    again: Value,
    args: &[Value],
    kwargs: Vec<(String, Value)>,
) -> Value {
    match behaviour {
        Override::ReturnNone => Value::None,
        Override::IdentityDecorator => match args {
            [target @ (Value::Class(_) | Value::Function(_) | Value::BoundMethod(..))] => {
                target.clone()
            }
            _ => Value::Partial(std::rc::Rc::new(super::value::Partial {
                func: again,
                args: args.to_vec(),
                kwargs,
            })),
        },
    }
}
