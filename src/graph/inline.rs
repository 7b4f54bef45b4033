//! FunctionInlinePass policy: which calls the tracer steps into and which stay single nodes.
//! It mirrors `torch.fx.Tracer.is_leaf_module` and torch.fx's handling of Python functions:
//! - modules defined by torch.nn (except `Sequential`, whose forward is a plain loop) are leaves
//!   and become one `call_module` node;
//! - user modules, their methods (`self._helper(x)`) and module-level functions of the project are
//!   inlined at the call site, so their operations appear in the caller's graph;
//! - torch functions and Tensor methods are recorded as `call_function` / `call_method`.

/// Depth beyond which inlining stops: mutually recursive helpers would otherwise never end.
pub const MAX_INLINE_DEPTH: usize = 64;
