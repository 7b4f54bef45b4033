//! FX103 / GB0109 or GB0033: `Tensor.tolist()`. On a floating-point tensor Dynamo 2.15 refuses
//! it (GB0109); on an integer tensor it tries and fails on the data-dependent
//! `aten._local_scalar_dense` (GB0033). Either way the graph breaks.

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx
        .events(EventKind::Method)
        .filter(|e| e.detail == "tolist")
    {
        let nodes = cx.nodes_at(e.file, e.span);
        let Some((node, recv)) = nodes.iter().find_map(|&n| {
            super::receiver(cx, n)
                .filter(|&r| super::is_tensor(cx, r))
                .map(|r| (n, r))
        }) else {
            continue;
        };
        let dtype = cx.result.graph.node(recv).meta.as_tensor().map(|t| t.dtype);
        let floating = dtype.is_none_or(|d| d.is_floating());
        let mut f =
            cx.finding_at_event(Rule::Tolist, if floating { "GB0109" } else { "GB0033" }, e);
        f.node = Some(node);
        let call = cx.source(e.file, e.span);
        let dt = dtype.map(|d| d.as_str()).unwrap_or("unknown");
        f.message = format!(
            "Tensor.tolist() on a {dt} tensor (`{}`) copies its data into Python values",
            super::snippet(&call)
        );
        f.hint = if floating {
            "keep the values in a tensor and use tensor operations (indexing, sum, masks) instead of a Python list".into()
        } else {
            "keep integer data in a tensor (e.g. `lengths.sum()`, a mask from `torch.arange(n) < lengths[:, None]`) instead of a Python list".into()
        };
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, HEAD};

    #[test]
    fn float_tolist() {
        let src = format!("{HEAD}        h = self.fc(x)\n        vals = h.mean(0).tolist()\n        return h * len(vals)\n");
        assert_eq!(codes(&src), vec![(11, "GB0109")]);
    }

    #[test]
    fn int_tolist() {
        let src = format!("{HEAD}        idx = x.argmax(-1)\n        ids = idx.tolist()\n        return self.fc(x)\n");
        assert_eq!(codes(&src), vec![(11, "GB0033")]);
    }
}
