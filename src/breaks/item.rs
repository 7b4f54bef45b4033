//! FX102 / GB0124: a tensor turned into a Python number — `.item()`, `int(t)`, `float(t)`,
//! `bool(t)`, `math.*(t)`, a slice bound (`h[:, :n]`), a size given to a factory or to `F.pad`,
//! `view`, `reshape`, `repeat`, `expand` (`torch.zeros((b, n))`) — and with it anything
//! derived from it, such as a data-dependent `range(...)` bound. Dynamo 2.15 reports these as
//! the `Tensor.item()` break, except `math.*(t)` and sizes, which it reports as a
//! data-dependent operator (GB0033).

use super::version::Behaviour;
use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::graph::Op;
use crate::traced::{EventKind, TraceEvent, SLICE_BOUND};

/// The ids `cx.target` may pick here besides the literal ones (see `version.rs`).
#[allow(dead_code)]
const VERSIONED_IDS: &[&str] = &["GB0059", "GB0038"];

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    tensor_sizes(cx, out);
    for e in cx.result.events.iter().filter(|e| {
        (e.kind == EventKind::Method && e.detail == "item") || e.kind == EventKind::Convert
    }) {
        if e.kind == EventKind::Convert && e.detail == SLICE_BOUND {
            out.push(slice_bound(cx, e));
            continue;
        }
        let nodes = cx.nodes_at(e.file, e.span);
        // `int(n)` of a number that an earlier `.item()` produced is plain Python by then:
        // only a conversion whose input is still a tensor breaks.
        // `.item()` exists on tensors only: a traced receiver whose shape staticfx lost (a
        // comparison of an input it has no shape for) is still one.
        let is_method = e.kind == EventKind::Method;
        let Some(&node) = nodes.iter().find(|&&n| {
            super::receiver(cx, n).is_some_and(|r| {
                super::is_tensor(cx, r)
                    || is_method && cx.result.graph.node(r).meta == crate::shapes::Meta::Unknown
            })
        }) else {
            continue;
        };
        let call = cx.source(e.file, e.span);
        if e.kind == EventKind::Convert && e.detail.starts_with("torch._check_tensor_all") {
            out.push(tensor_check(cx, e, node, &call));
            continue;
        }
        let what = if e.kind == EventKind::Method {
            ".item()".to_string()
        } else {
            format!("{}()", e.detail)
        };
        // `math.sqrt(t)` reaches the data through `aten._local_scalar_dense`, which Dynamo
        // words as a data-dependent operator rather than the `.item()` break.
        let via_math =
            e.kind == EventKind::Convert && !matches!(e.detail.as_str(), "int" | "float" | "bool");
        let id = if via_math {
            "GB0033"
        } else if e.kind == EventKind::Convert && e.detail == "bool" {
            cx.target.gb_id(Behaviour::BoolOfTensor)
        } else {
            "GB0124"
        };
        let mut f = cx.finding_at_event(Rule::ScalarConversion, id, e);
        f.node = Some(node);
        f.fix_available = e.kind == EventKind::Method && feeds_only_tensors(cx, node);
        f.message = format!("Tensor converted to a Python scalar with {what} (`{}`): the value is data, which Dynamo cannot trace", super::snippet(&call));
        f.hint = match e.detail.as_str() {
            "bool" => "keep the condition a tensor and select with torch.where(...) instead of converting it to a Python bool".into(),
            _ => format!(
                "keep `{}` a 0-d tensor and use it in tensor operations; if a Python number is needed, set torch._dynamo.config.capture_scalar_outputs = True",
                super::snippet(&receiver_text(&call))
            ),
        };
        out.push(f);
    }
}

/// The factories whose sizes (or range bounds) are their positional arguments after the
/// first `skip` ones.
const SIZED: &[(&str, usize)] = &[
    ("torch.zeros", 0),
    ("torch.ones", 0),
    ("torch.empty", 0),
    ("torch.rand", 0),
    ("torch.randn", 0),
    ("torch.arange", 0),
    ("new_zeros", 1),
    ("new_ones", 1),
    ("new_empty", 1),
    // a method's receiver is its first argument; `pad`'s sizes follow its input
    ("torch.nn.functional.pad", 1),
    ("view", 1),
    ("reshape", 1),
    ("repeat", 1),
    ("expand", 1),
];

/// A tensor given to a factory as a size or a range bound (`torch.zeros((b, lengths.max(),
/// d))`, `torch.arange(lengths.max())`), or to `F.pad`, `view`, `reshape`, `repeat` or `expand`
/// as a size (mimi's `F.pad(x, (padding_total, extra_padding))` with 0-d tensor paddings):
/// torch reads its value as a Python int through `aten._local_scalar_dense`, which Dynamo
/// reports as a data-dependent operator (GB0033, on torch 2.8 and 2.15 alike; measured for each
/// of these).
///
/// Only the first use of a tensor as a size breaks: Dynamo resumes after it with the value
/// read, and a later `torch.zeros(n, ...)` or `view(n, ...)` of the same tensor traces
/// (measured with torch 2.15: pad then view, zeros twice then view).
fn tensor_sizes(cx: &Ctx, out: &mut Vec<Finding>) {
    let g = &cx.result.graph;
    let mut read = std::collections::HashSet::new();
    for (id, n) in g.nodes() {
        if !matches!(n.op, Op::CallFunction | Op::CallMethod) {
            continue;
        }
        let Some(&(_, skip)) = SIZED.iter().find(|(t, _)| *t == n.target) else {
            continue;
        };
        if n.op == Op::CallMethod
            && !super::receiver(cx, id).is_some_and(|r| super::is_tensor(cx, r))
        {
            continue;
        }
        let mut used = Vec::new();
        n.args.iter().skip(skip).for_each(|a| a.nodes(&mut used));
        let Some(size) = used.into_iter().find(|&u| is_one_element_tensor(cx, u)) else {
            continue;
        };
        if !read.insert(size) {
            continue;
        }
        let Some(origin) = n.origin.as_ref() else {
            continue;
        };
        let mut f = cx.finding(
            Rule::ScalarConversion,
            "GB0033",
            origin.file,
            origin.span,
            &origin.call_chain,
        );
        f.node = Some(id);
        f.impact_nodes = cx.impact_after(id);
        // FX102's fixes rewrite `.item()` and conversions, not a size
        f.fix_available = false;
        let call = cx.source(origin.file, origin.span);
        let size_name = &g.node(size).name;
        f.message = format!(
            "Tensor converted to a Python scalar as a size (`{}` is given the tensor `{size_name}`): torch reads its value with `aten._local_scalar_dense`, which Dynamo cannot trace",
            super::snippet(&call)
        );
        f.hint = "make the size a Python int (from a shape or a module attribute), or allocate at the largest size and mask; with torch._dynamo.config.capture_scalar_outputs = True the value becomes a symbolic size".into();
        out.push(f);
    }
}

/// A tensor known to hold one element (`lengths.max()`), the only kind torch takes as a size.
/// A traced value of unknown shape may be no tensor at all: per-class analysis makes a
/// placeholder of every argument it has no type for (a `torch.Size` argument, unpacked into
/// sizes), so it says nothing.
fn is_one_element_tensor(cx: &Ctx, n: crate::graph::NodeId) -> bool {
    match &cx.result.graph.node(n).meta {
        crate::shapes::Meta::Tensor(t) => t
            .shape
            .as_ref()
            .is_some_and(|s| s.iter().all(|d| d.known() == Some(1))),
        _ => false,
    }
}

/// A tensor as a slice bound: Python reads its value through `__index__` (the tracer notes it
/// only for a tensor bound).
fn slice_bound(cx: &Ctx, e: &TraceEvent) -> Finding {
    let id = cx.target.gb_id(Behaviour::TensorSliceBound);
    let mut f = cx.finding_at_event(Rule::ScalarConversion, id, e);
    let bound = cx.source(e.file, e.span);
    f.fix_available = false;
    f.message = format!(
        "Tensor converted to a Python scalar as a slice bound (`{}`): slicing reads the tensor's value as a Python int, which Dynamo cannot trace",
        super::snippet(&bound)
    );
    f.hint = format!(
        "slice with a Python int: keep `{}` an int where it is made (a size from a module attribute or a shape), not a tensor",
        super::snippet(&bound)
    );
    f
}

/// `torch._check_tensor_all(cond)` on a traced condition: torch turns `cond.all()` into a
/// Python bool to decide whether to raise, which Dynamo cannot trace.
fn tensor_check(cx: &Ctx, e: &TraceEvent, node: crate::graph::NodeId, call: &str) -> Finding {
    let mut f = cx.finding_at_event(
        Rule::ScalarConversion,
        cx.target.gb_id(Behaviour::TensorCheck),
        e,
    );
    f.node = Some(node);
    // no rewrite keeps the check: the fixes of FX102 replace a conversion by tensor ops
    f.fix_available = false;
    f.message = format!(
        "`{}` checks a tensor condition (`{}`): torch reads the tensor's values as a Python bool to decide whether to raise, which Dynamo cannot trace",
        e.detail,
        super::snippet(call)
    );
    f.hint = "check sizes with torch._check on Python or symbolic ints instead, or set torch._dynamo.config.capture_scalar_outputs = True".into();
    f
}

/// Whether the number only reaches tensors: every path through its users (Python arithmetic
/// on the number) ends in an operation whose result is a tensor, so a 0-d tensor in its
/// place computes the same values. A number that reaches the output, a conversion, a loop
/// bound or anything but arithmetic does not qualify.
fn feeds_only_tensors(cx: &Ctx, node: crate::graph::NodeId) -> bool {
    let g = &cx.result.graph;
    let mut stack = vec![node];
    let mut seen = std::collections::HashSet::new();
    let mut reached_tensor = false;
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        for u in g.users(n) {
            let un = g.node(u);
            if un.meta.is_tensor() {
                reached_tensor = true;
                continue;
            }
            let arithmetic = un.op == crate::graph::Op::CallFunction
                && matches!(
                    un.target.as_str(),
                    "operator.add"
                        | "operator.sub"
                        | "operator.mul"
                        | "operator.truediv"
                        | "operator.floordiv"
                        | "operator.mod"
                        | "operator.pow"
                        | "operator.neg"
                        | "operator.pos"
                );
            if !arithmetic {
                return false;
            }
            stack.push(u);
        }
    }
    reached_tensor
}

/// `h.max().item()` → `h.max()`, `int(t.sum())` → `t.sum()`.
fn receiver_text(call: &str) -> String {
    let c = call.trim();
    if let Some(r) = c.strip_suffix(".item()") {
        return r.to_string();
    }
    match (c.find('('), c.rfind(')')) {
        (Some(a), Some(b)) if b > a => c[a + 1..b].to_string(),
        _ => c.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, HEAD};

    #[test]
    fn item_and_casts() {
        let src = format!("{HEAD}        h = self.fc(x)\n        a = h.max().item()\n        b = int(h.argmax())\n        c = float(h.std())\n        d = bool((h < 0).any())\n        return h * a * b * c\n");
        assert_eq!(
            codes(&src),
            vec![
                (11, "GB0124"),
                (12, "GB0124"),
                (13, "GB0124"),
                (14, "GB0124")
            ]
        );
    }

    /// longformer's encoder: `(attention_mask > 0).flatten().any().item()` in a helper, on an
    /// optional mask whose shape per-class mode does not know.
    #[test]
    fn item_on_a_traced_value_of_unknown_shape_in_a_helper() {
        let src = "import torch\nfrom torch import nn\n\n\ndef is_global(mask):\n    return (mask > 0).flatten().any().item()\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def gate(self, mask):\n        return is_global(mask)\n\n    def forward(self, x, mask):\n        h = self.fc(x)\n        if self.gate(mask):\n            h = h * 2\n        return h\n";
        assert_eq!(codes(src), vec![(6, "GB0124")]);
    }

    #[test]
    fn conversion_of_a_converted_number_and_range_bound_are_one_break() {
        let src = format!("{HEAD}        h = self.fc(x)\n        n = int((x > 0).sum().item()) % 3 + 1\n        m = int(n)\n        for _ in range(n):\n            h = torch.tanh(h)\n        return h\n");
        assert_eq!(codes(&src), vec![(11, "GB0124")]);
    }

    #[test]
    fn casts_of_shapes_are_fine() {
        let src = format!("{HEAD}        n = int(x.shape[0]) * float(x.size(-1))\n        return self.fc(x) * int(n) + len(x)\n");
        assert_eq!(codes(&src), vec![]);
    }

    /// A 0-d integer tensor given as a size to `F.pad`, `view`, `reshape`, `repeat` or
    /// `expand` (measured with torch 2.8 and 2.15: GB0033 at each), but a Python int is fine.
    #[test]
    fn a_tensor_given_as_a_size_is_read_as_data() {
        let head = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n        self.k = nn.Buffer(torch.tensor(2, dtype=torch.int64), persistent=False)\n\n    def forward(self, x):\n        h = self.fc(x)\n        n = (h.shape[0] + self.k) // 2\n        i = (h.shape[0] + 2) // 2\n";
        for call in [
            "nn.functional.pad(h, (0, {}))",
            "h.view({}, -1)",
            "h.reshape({}, -1)",
            "h.repeat({}, 1)",
            "h.unsqueeze(0).expand({}, 2, 8)",
        ] {
            let as_tensor = format!("{head}        return {}\n", call.replace("{}", "n"));
            assert_eq!(codes(&as_tensor), vec![(14, "GB0033")], "{call}");
            let as_int = format!("{head}        return {}\n", call.replace("{}", "i"));
            assert_eq!(codes(&as_int), vec![], "{call}");
        }
        // the first use reads the value; Dynamo resumes with it, and later uses trace
        let twice = format!(
            "{head}        a = torch.zeros(n, 8)\n        return h.view(n, -1) + a.sum()\n"
        );
        assert_eq!(codes(&twice), vec![(14, "GB0033")]);
    }
}
