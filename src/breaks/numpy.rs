//! FX114 / GB0294 or GB0158: numpy on tensor data that `torch._numpy` does not model. Dynamo
//! traces numpy code through `torch._numpy` (ufuncs, reductions, `clip`, ... compile fine), so
//! only functions and ndarray methods known to be outside that model are proven breaks; other
//! numpy functions are left to FX190 as possible breaks.
//!
//! A scalar draw of `numpy.random` (`np.random.uniform(0, 1)`, as transformers' layer drop
//! does, with no `size`) breaks too: `torch._numpy` draws a 0-d tensor and returns its value
//! through `aten._local_scalar_dense`, a data-dependent operator (GB0033; torch 2.8 and 2.15).
//! With a `size` it returns an array and traces.

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

/// `numpy.random` draws measured to break when they return a scalar, with the position of
/// their `size` argument (None: they take sizes as `*dims`, a scalar without arguments).
const SCALAR_DRAWS: &[(&str, Option<usize>)] = &[
    ("random.uniform", Some(2)),
    ("random.normal", Some(2)),
    ("random.randint", Some(2)),
    ("random.random", Some(0)),
    ("random.rand", None),
    ("random.randn", None),
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
    for e in cx
        .result
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ExternalCall | EventKind::NumpyCall))
    {
        let Some(func) = e.detail.strip_prefix("numpy.") else {
            continue;
        };
        if e.kind == EventKind::NumpyCall && draws_a_scalar(cx, e, func) {
            let mut f = cx.finding_at_event(Rule::Numpy, "GB0033", e);
            f.message = format!(
                "numpy.{func} without a `size` draws one number: torch._numpy draws a 0-d \
                 tensor and reads its value with `aten._local_scalar_dense`, a data-dependent \
                 operator Dynamo cannot trace"
            );
            f.hint = "draw with torch instead (`torch.rand(())` keeps the value a tensor), or \
                      draw outside forward"
                .into();
            out.push(f);
            continue;
        }
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

/// Whether the `numpy.random` call at event `e` returns one number: a measured draw given no
/// `size` (nor as many positional arguments as reach it).
fn draws_a_scalar(cx: &Ctx, e: &crate::traced::TraceEvent, func: &str) -> bool {
    let Some(&(_, size_at)) = SCALAR_DRAWS.iter().find(|(f, _)| *f == func) else {
        return false;
    };
    cx.with_call(e.file, e.span, |call, src| {
        use crate::syntax::{FieldExt, KindExt};
        let Some(args) = call.field("arguments") else {
            return false;
        };
        let mut positional = 0;
        for a in crate::syntax::named_children(args) {
            match a.kind_name() {
                "keyword_argument" => {
                    let name = a.field("name").map(|n| crate::syntax::text(n, src));
                    let value = a.field("value").map(|v| crate::syntax::text(v, src));
                    if name == Some("size") && value != Some("None") {
                        return false;
                    }
                }
                "comment" => {}
                // `*dims` or `**kw`: what they hold is not known here
                "list_splat" | "dictionary_splat" => return false,
                _ => positional += 1,
            }
        }
        match size_at {
            Some(at) => positional <= at,
            None => positional == 0,
        }
    })
    .unwrap_or(false)
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

    /// One number drawn with numpy breaks (torch 2.8 and 2.15: GB0033 at the call); an array
    /// (`size=`, or `rand(2)`) does not.
    #[test]
    fn a_scalar_numpy_draw_is_data_dependent() {
        let head = "import numpy as np\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n";
        for (draw, breaks) in [
            ("np.random.uniform(0, 1)", true),
            ("np.random.randint(0, 10)", true),
            ("np.random.rand()", true),
            ("np.random.uniform(0, 1, size=(2,))", false),
            ("np.random.uniform(0, 1, (2,))", false),
            ("np.random.rand(2)", false),
        ] {
            let src =
                format!("{head}        p = {draw}\n        return self.fc(x) + len(str(p))\n");
            let want = if breaks { vec![(11, "GB0033")] } else { vec![] };
            assert_eq!(codes(&src), want, "{draw}");
        }
    }
}
