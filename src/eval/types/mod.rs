//! The behaviour of the evaluator's values, by kind of value, in the style of RustPython's and
//! ty's object models: each module holds one kind's slots (its methods, items, iteration and
//! operators), and the generic entry points on `Interp` (`call_method`, `get_item`, `iterate`,
//! `binary_op`) only dispatch on the receiver's kind.

pub(super) mod dict;
pub(super) mod external;
pub(super) mod list;
pub(super) mod module_globals;
pub(super) mod module_object;
pub(super) mod number;
pub(super) mod proxy;
pub(super) mod string;
pub(super) mod tensor;
pub(super) mod tuple;
pub(super) mod unknown;
