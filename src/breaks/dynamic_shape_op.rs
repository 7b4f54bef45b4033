//! FX104 / GB0036: operators whose output shape depends on the data — `nonzero`, `unique`,
//! `masked_select`, `argwhere`, one-argument `torch.where`, and reading with a boolean mask
//! (`x[x > 0]`). A masked *write* (`x[x < 0] = 0`) keeps the shape and is fine.

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::graph::{Arg, NodeId, Op};
use crate::shapes::DType;

const DYNAMIC: &[&str] = &[
    "nonzero",
    "unique",
    "unique_consecutive",
    "masked_select",
    "argwhere",
];

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    let g = &cx.result.graph;
    for (id, n) in g.nodes() {
        let short = n.target.rsplit('.').next().unwrap_or(&n.target);
        let what = match n.op {
            Op::CallFunction if n.target.starts_with("torch.") && DYNAMIC.contains(&short) => {
                Some(format!("torch.{short}"))
            }
            Op::CallFunction
                if n.target == "torch.where" && n.args.len() == 1 && n.kwargs.is_empty() =>
            {
                Some("torch.where(cond)".into())
            }
            Op::CallMethod
                if DYNAMIC.contains(&short)
                    && super::receiver(cx, id).is_some_and(|r| super::is_tensor(cx, r)) =>
            {
                Some(format!("Tensor.{short}"))
            }
            Op::CallFunction if n.target == "operator.getitem" && has_bool_mask(cx, id) => {
                Some("boolean-mask indexing".into())
            }
            _ => None,
        };
        let (Some(what), Some(origin)) = (what, n.origin.as_ref()) else {
            continue;
        };
        let mut f = cx.finding(
            Rule::DynamicShapeOp,
            "GB0036",
            origin.file,
            origin.span,
            &origin.call_chain,
        );
        let src = cx.source(origin.file, origin.span);
        f.node = Some(id);
        f.impact_nodes = cx.impact_after(id);
        // the diagnostic puts the gb_type, "Dynamic shape operator", in front of this
        f.message = format!(
            "{what} (`{}`) has an output shape that depends on the data",
            super::snippet(&src)
        );
        f.hint = if what == "boolean-mask indexing" {
            "keep the shape static: use torch.where(mask, x, 0) or multiply by the mask, then reduce (e.g. `(x * mask).sum()`)".into()
        } else if short == "unique" || short == "unique_consecutive" {
            "avoid materialising the unique values: use a fixed-size one-hot/bincount over the known number of classes".into()
        } else {
            "keep the shape static: use a mask with torch.where(...) instead of gathering the selected elements, or set torch._dynamo.config.capture_dynamic_output_shape_ops = True".into()
        };
        out.push(f);
    }
}

/// `x[mask]` / `x[:, mask]` where `mask` is a bool tensor.
fn has_bool_mask(cx: &Ctx, id: NodeId) -> bool {
    let g = &cx.result.graph;
    let n = g.node(id);
    if !n
        .args
        .first()
        .is_some_and(|a| matches!(a, Arg::Node(r) if super::is_tensor(cx, *r)))
    {
        return false;
    }
    let mut idx = Vec::new();
    if let Some(a) = n.args.get(1) {
        a.nodes(&mut idx);
    }
    idx.iter().any(|&m| {
        g.node(m)
            .meta
            .as_tensor()
            .is_some_and(|t| t.dtype == DType::Bool)
    })
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, HEAD};

    #[test]
    fn dynamic_ops() {
        let src = format!(
            "{HEAD}        h = self.fc(x)\n        a = torch.nonzero(h)\n        b = h[h > 0]\n        c = h.masked_select(h > 1)\n        d = torch.unique(h)\n        return h\n"
        );
        assert_eq!(
            codes(&src),
            vec![
                (11, "GB0036"),
                (12, "GB0036"),
                (13, "GB0036"),
                (14, "GB0036")
            ]
        );
    }

    /// Indexing with the integer tensors of `nonzero(as_tuple=True)` is no boolean mask: only
    /// the `nonzero` breaks (Longformer's global attention, labelled by torch 2.15).
    #[test]
    fn indexing_with_nonzero_indices() {
        let src = format!("{HEAD}        h = self.fc(x)\n        idx = (h > 0).nonzero(as_tuple=True)\n        y = h[idx]\n        rows = (h > 0).nonzero()\n        return y.sum() + rows.sum()\n");
        assert_eq!(codes(&src), vec![(11, "GB0036"), (13, "GB0036")]);
    }

    #[test]
    fn static_shape_lookalikes() {
        let src = format!("{HEAD}        h = self.fc(x)\n        h[h < 0] = 0\n        y = torch.where(h > 0, h, 0.0)\n        z = h[:, 0] + h[0]\n        return y + z.sum()\n");
        assert_eq!(codes(&src), vec![]);
    }
}
