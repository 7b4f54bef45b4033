//! FX114 / GB0294 or GB0158: numpy on tensor data that `torch._numpy` does not model. Dynamo
//! traces numpy code through `torch._numpy` (ufuncs, reductions, `clip`, ... compile fine), so
//! only functions and ndarray methods known to be outside that model are proven breaks; other
//! numpy functions are left to FX190 as possible breaks.

use std::collections::HashSet;

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::graph::{Arg, NodeId, Op};
use crate::traced::EventKind;

/// numpy functions `torch._numpy` does not implement (Dynamo: GB0294).
const UNMODELLED_FUNCS: &[&str] = &[
    "unravel_index",
    "ravel_multi_index",
    "packbits",
    "unpackbits",
    "save",
    "savez",
    "savetxt",
    "load",
    "loadtxt",
    "fromfile",
    "frombuffer",
    "tofile",
];

/// ndarray methods Dynamo cannot trace (GB0158).
const UNMODELLED_METHODS: &[&str] = &[
    "tobytes", "tostring", "tofile", "dump", "dumps", "setflags", "getfield", "setfield",
    "byteswap",
];

/// numpy functions `torch._numpy` models; calling them on traced values is not reported at all.
pub const MODELLED_FUNCS: &[&str] = &[
    "abs",
    "absolute",
    "add",
    "all",
    "allclose",
    "amax",
    "amin",
    "any",
    "arange",
    "arccos",
    "arcsin",
    "arctan",
    "arctan2",
    "argmax",
    "argmin",
    "argsort",
    "around",
    "array",
    "asarray",
    "broadcast_to",
    "ceil",
    "clip",
    "concatenate",
    "cos",
    "cosh",
    "cumprod",
    "cumsum",
    "diag",
    "divide",
    "dot",
    "einsum",
    "equal",
    "exp",
    "expand_dims",
    "eye",
    "flip",
    "floor",
    "full",
    "full_like",
    "greater",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "linspace",
    "log",
    "log1p",
    "log2",
    "log10",
    "logical_and",
    "logical_not",
    "logical_or",
    "matmul",
    "max",
    "maximum",
    "mean",
    "median",
    "min",
    "minimum",
    "multiply",
    "negative",
    "ones",
    "ones_like",
    "outer",
    "power",
    "prod",
    "ravel",
    "reshape",
    "round",
    "sign",
    "sin",
    "sinh",
    "sort",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "subtract",
    "sum",
    "swapaxes",
    "take",
    "tanh",
    "tile",
    "transpose",
    "tril",
    "triu",
    "true_divide",
    "var",
    "vstack",
    "hstack",
    "where",
    "zeros",
    "zeros_like",
];

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx.events(EventKind::ExternalCall) {
        let Some(func) = e.detail.strip_prefix("numpy.") else {
            continue;
        };
        if !UNMODELLED_FUNCS.contains(&func) {
            continue;
        }
        let mut f = cx.finding_at_event(Rule::Numpy, "GB0294", e);
        f.message =
            format!("numpy.{func} is not supported by torch._numpy, so Dynamo cannot trace it");
        f.hint = format!("compute it with torch operations on the tensor (no `.numpy()` round trip), or do the numpy.{func} call outside forward");
        out.push(f);
    }
    let g = &cx.result.graph;
    let arrays = ndarray_nodes(cx);
    for (id, n) in g.nodes() {
        if n.op != Op::CallMethod || !UNMODELLED_METHODS.contains(&n.target.as_str()) {
            continue;
        }
        let (Some(Arg::Node(recv)), Some(origin)) = (n.args.first(), n.origin.as_ref()) else {
            continue;
        };
        if !arrays.contains(recv) {
            continue;
        }
        let mut f = cx.finding(
            Rule::Numpy,
            "GB0158",
            origin.file,
            origin.span,
            &origin.call_chain,
        );
        f.node = Some(id);
        f.impact_nodes = cx.impact_after(id);
        f.message = format!("ndarray.{}() is not modelled by torch._numpy", n.target);
        f.hint = "work on the tensor directly; if raw bytes are needed (e.g. a cache key), compute them outside the compiled forward".into();
        out.push(f);
    }
}

/// Nodes holding numpy arrays: results of `Tensor.numpy()` and of numpy calls or ndarray
/// methods applied to them.
fn ndarray_nodes(cx: &Ctx) -> HashSet<NodeId> {
    let g = &cx.result.graph;
    let mut set = HashSet::new();
    for (id, n) in g.nodes() {
        let from_array = match n.args.first() {
            Some(Arg::Node(r)) => set.contains(r),
            _ => false,
        };
        let is_array = match n.op {
            Op::CallMethod => {
                n.target == "numpy"
                    || (from_array && !matches!(n.target.as_str(), "item" | "tolist" | "tobytes"))
            }
            Op::CallFunction => {
                n.target.starts_with("numpy.")
                    && n.args
                        .iter()
                        .any(|a| matches!(a, Arg::Node(r) if set.contains(r)))
            }
            _ => false,
        };
        if is_array {
            set.insert(id);
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::codes;

    const HEAD: &str = "import numpy as np\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n";

    #[test]
    fn unmodelled_function_and_method() {
        let src = format!("{HEAD}        h = self.fc(x).detach()\n        i = np.unravel_index(h.numpy().argmax(), h.shape)\n        b = h.numpy().tobytes()\n        return h\n");
        assert_eq!(codes(&src), vec![(12, "GB0294"), (13, "GB0158")]);
    }

    #[test]
    fn modelled_numpy_is_fine() {
        let src = format!("{HEAD}        a = np.clip(x.numpy(), 0, 1)\n        b = np.sum(np.exp(a))\n        return self.fc(torch.from_numpy(a)) * b\n");
        assert_eq!(codes(&src), vec![]);
    }
}
