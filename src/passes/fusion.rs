//! Fusion: named patterns rewritten into one op each. Every pattern has preconditions — each
//! absorbed node has no user outside the pattern and is not a graph output, shapes line up —
//! and refuses (changes nothing) when one fails. The fused node takes the place of the
//! pattern's last node and keeps the source spans of every node it replaced.
//!
//! | name              | pattern (act: relu, relu6, gelu or silu)         | when            |
//! |-------------------|--------------------------------------------------|-----------------|
//! | `linear_act`      | `Linear` / `F.linear` → act                      | always          |
//! | `matmul_add_act`  | `matmul` → `+ bias` → act                        | always          |
//! | `conv_bn_act`     | `Conv` → `BatchNorm` → act                       | `--inference`   |
//! | `conv_bn`         | `Conv` → `BatchNorm`, folded into the conv       | `--inference`   |
//! | `add_act`         | tensor `+` tensor → act                          | always          |
//! | softmax           | `exp(x - max) / sum(exp(x - max))` → `torch.softmax` | always      |
//! | layer norm        | `(x - mean) / sqrt(var + eps)` → `F.layer_norm`  | always          |
//!
//! Batch norm folds into a convolution only with frozen statistics: in training mode it
//! normalises with the batch's own mean and variance, which the conv cannot know.

use super::{absorbable, frozen, replace_with, short, Pass, PassContext, FUSED_PREFIX};
use crate::graph::{Arg, Graph, NodeId, Op};
use crate::shapes::Meta;

pub struct Fusion;

fn call_named(g: &Graph, id: NodeId, names: &[&str]) -> bool {
    let n = g.node(id);
    matches!(n.op, Op::CallFunction | Op::CallMethod)
        && names.contains(&short(&n.target))
        && !n.target.starts_with(FUSED_PREFIX)
}

fn module_of(g: &Graph, id: NodeId, classes: &[&str]) -> bool {
    let n = g.node(id);
    n.op == Op::CallModule
        && n.module_class
            .as_deref()
            .is_some_and(|c| classes.contains(&c))
}

fn arg_node(a: Option<&Arg>) -> Option<NodeId> {
    match a {
        Some(Arg::Node(n)) => Some(*n),
        _ => None,
    }
}

fn arg0(g: &Graph, id: NodeId) -> Option<NodeId> {
    arg_node(g.node(id).args.first())
}

fn kwarg<'a>(g: &'a Graph, id: NodeId, name: &str) -> Option<&'a Arg> {
    g.node(id)
        .kwargs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

/// `pos`-th positional argument or keyword `name` (a call's argument as Python binds it).
fn param<'a>(g: &'a Graph, id: NodeId, pos: usize, name: &str) -> Option<&'a Arg> {
    kwarg(g, id, name).or_else(|| g.node(id).args.get(pos))
}

/// The activation a node applies to its single tensor input, with what a fused kernel needs
/// to reproduce it.
fn activation(g: &Graph, id: NodeId) -> Option<(&'static str, Vec<(String, Arg)>)> {
    let n = g.node(id);
    let kind = match n.op {
        Op::CallModule => match n.module_class.as_deref()? {
            "ReLU" => "relu",
            "ReLU6" => "relu6",
            "GELU" => "gelu",
            "SiLU" => "silu",
            _ => return None,
        },
        Op::CallFunction | Op::CallMethod if !n.target.starts_with(FUSED_PREFIX) => {
            match short(&n.target) {
                "relu" => "relu",
                "relu6" => "relu6",
                "gelu" => "gelu",
                "silu" => "silu",
                _ => return None,
            }
        }
        _ => return None,
    };
    if n.args.len() != 1 || n.region.is_some() {
        return None;
    }
    let mut extra = vec![("act".to_string(), Arg::Str(kind.into()))];
    if n.op == Op::CallModule {
        // The module's own attributes (GELU's `approximate`) live on the module.
        extra.push(("act_module".into(), Arg::Str(n.target.clone())));
    }
    for (k, v) in &n.kwargs {
        match k.as_str() {
            "inplace" => {}
            "approximate" => extra.push(("approximate".into(), v.clone())),
            _ => return None,
        }
    }
    Some((kind, extra))
}

/// Whether `inner` feeds only `user` and is not itself something the caller sees.
fn only_feeds(g: &Graph, inner: NodeId, user: NodeId) -> bool {
    let n = g.node(inner);
    !frozen(n) && !n.mutates_input && g.users(inner) == [user]
}

fn same_rank(g: &Graph, a: NodeId, b: NodeId) -> bool {
    let rank = |id| {
        g.node(id)
            .meta
            .as_tensor()
            .and_then(|t| t.shape.as_ref().map(Vec::len))
    };
    match (rank(a), rank(b)) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

fn is_tensor(g: &Graph, a: &Arg) -> bool {
    matches!(a, Arg::Node(n) if g.node(*n).meta.is_tensor())
}

const CONV: &[&str] = &["Conv1d", "Conv2d", "Conv3d"];
const BN: &[&str] = &["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"];

fn fuse(
    g: &mut Graph,
    root: NodeId,
    inner: &[NodeId],
    kind: &str,
    args: Vec<Arg>,
    kwargs: Vec<(String, Arg)>,
) {
    replace_with(
        g,
        root,
        inner,
        &format!("fused_{kind}"),
        Op::CallFunction,
        crate::graph::OpKey::Fused(kind).key().into_owned(),
        args,
        kwargs,
    );
}

/// Tries every pattern that ends at an activation node.
fn at_activation(g: &mut Graph, act: NodeId, cx: &PassContext) -> bool {
    let Some((_, act_kw)) = activation(g, act) else {
        return false;
    };
    let Some(p) = arg0(g, act) else { return false };
    if !only_feeds(g, p, act) || !same_rank(g, p, act) {
        return false;
    }
    if cx.inference && module_of(g, p, BN) {
        if let Some(conv) = arg0(g, p).filter(|&c| module_of(g, c, CONV) && only_feeds(g, c, p)) {
            let mut kw = vec![
                ("conv".to_string(), Arg::Str(g.node(conv).target.clone())),
                ("bn".to_string(), Arg::Str(g.node(p).target.clone())),
            ];
            kw.extend(act_kw);
            kw.push(("folded".into(), Arg::Bool(true)));
            let args = g.node(conv).args.clone();
            fuse(g, act, &[conv, p], "conv_bn_act", args, kw);
            return true;
        }
    }
    if module_of(g, p, &["Linear"]) {
        let mut kw = vec![("linear".to_string(), Arg::Str(g.node(p).target.clone()))];
        kw.extend(act_kw);
        let args = g.node(p).args.clone();
        fuse(g, act, &[p], "linear_act", args, kw);
        return true;
    }
    if call_named(g, p, &["linear"])
        && g.node(p).kwargs.is_empty()
        && g.node(p).op == Op::CallFunction
    {
        let args = g.node(p).args.clone();
        fuse(g, act, &[p], "linear_act", args, act_kw);
        return true;
    }
    if call_named(g, p, &["add"]) && g.node(p).args.len() == 2 && g.node(p).kwargs.is_empty() {
        let (l, r) = (g.node(p).args[0].clone(), g.node(p).args[1].clone());
        let mm = [(&l, &r), (&r, &l)].into_iter().find_map(|(m, b)| {
            let m = arg_node(Some(m))?;
            (call_named(g, m, &["matmul"]) && g.node(m).args.len() == 2 && only_feeds(g, m, p))
                .then(|| (m, b.clone()))
        });
        if let Some((m, bias)) = mm {
            let mut args = g.node(m).args.clone();
            args.push(bias);
            fuse(g, act, &[m, p], "matmul_add_act", args, act_kw);
            return true;
        }
        if is_tensor(g, &l) && is_tensor(g, &r) {
            fuse(g, act, &[p], "add_act", vec![l, r], act_kw);
            return true;
        }
    }
    false
}

/// Conv → BatchNorm with nothing after it to fuse (inference only).
fn at_batch_norm(g: &mut Graph, bn: NodeId, cx: &PassContext) -> bool {
    if !cx.inference || !module_of(g, bn, BN) || frozen(g.node(bn)) {
        return false;
    }
    // Leave it to the longer pattern when an activation follows.
    if let [u] = g.users(bn).as_slice() {
        if activation(g, *u).is_some() && !g.is_output_input(bn) {
            return false;
        }
    }
    let Some(conv) = arg0(g, bn).filter(|&c| module_of(g, c, CONV) && only_feeds(g, c, bn)) else {
        return false;
    };
    let kw = vec![
        ("conv".to_string(), Arg::Str(g.node(conv).target.clone())),
        ("bn".to_string(), Arg::Str(g.node(bn).target.clone())),
        ("folded".into(), Arg::Bool(true)),
    ];
    let args = g.node(conv).args.clone();
    fuse(g, bn, &[conv], "conv_bn", args, kw);
    true
}

fn reduce_dim(g: &Graph, id: NodeId) -> Option<i64> {
    let keep = param(g, id, 2, "keepdim") == Some(&Arg::Bool(true));
    if !keep {
        return None;
    }
    match param(g, id, 1, "dim")? {
        Arg::Int(d) => Some(*d),
        Arg::List(v) | Arg::Tuple(v) if v.len() == 1 => match v[0] {
            Arg::Int(d) => Some(d),
            _ => None,
        },
        _ => None,
    }
}

/// `exp(y) / exp(y).sum(d, keepdim=True)`, with `y = x - x.max(d, keepdim=True)[0]` (or
/// `amax`) optionally: the numerically stable and the naive spelling are both softmax.
fn at_softmax(g: &mut Graph, div: NodeId) -> bool {
    if !call_named(g, div, &["truediv", "div"])
        || g.node(div).args.len() != 2
        || frozen(g.node(div))
    {
        return false;
    }
    let (Some(e), Some(s)) = (
        arg_node(g.node(div).args.first()),
        arg_node(g.node(div).args.get(1)),
    ) else {
        return false;
    };
    if !call_named(g, e, &["exp"]) || !call_named(g, s, &["sum"]) || arg0(g, s) != Some(e) {
        return false;
    }
    let Some(dim) = reduce_dim(g, s) else {
        return false;
    };
    let Some(y) = arg0(g, e) else { return false };
    let mut inner = vec![e, s];
    let mut x = y;
    if call_named(g, y, &["sub"]) && g.node(y).args.len() == 2 {
        if let (Some(a), Some(m)) = (
            arg_node(g.node(y).args.first()),
            arg_node(g.node(y).args.get(1)),
        ) {
            let max_of_a = if call_named(g, m, &["amax"]) {
                arg0(g, m) == Some(a) && reduce_dim(g, m).map(|d| d == dim).unwrap_or(false)
            } else if call_named(g, m, &["getitem"]) && g.node(m).args.get(1) == Some(&Arg::Int(0))
            {
                arg0(g, m).is_some_and(|mx| {
                    call_named(g, mx, &["max"])
                        && arg0(g, mx) == Some(a)
                        && reduce_dim(g, mx) == Some(dim)
                })
            } else {
                false
            };
            if max_of_a {
                let mut cand = inner.clone();
                cand.extend([y, m]);
                if let Some(mx) = arg0(g, m).filter(|&mx| call_named(g, mx, &["max"])) {
                    cand.push(mx);
                }
                if absorbable(g, div, &cand) {
                    inner = cand;
                    x = a;
                }
            }
        }
    }
    if !absorbable(g, div, &inner) {
        return false;
    }
    replace_with(
        g,
        div,
        &inner,
        "softmax",
        Op::CallFunction,
        "torch.softmax".into(),
        vec![Arg::Node(x)],
        vec![("dim".into(), Arg::Int(dim))],
    );
    true
}

/// `(x - mean(x)) / sqrt(var(x) + eps)` over the last dim (var as `x.var(unbiased=False)` or
/// as the mean of squared deviations) is `F.layer_norm(x, (D,), eps=eps)` without affine.
fn at_layer_norm(g: &mut Graph, div: NodeId) -> bool {
    if !call_named(g, div, &["truediv", "div"])
        || g.node(div).args.len() != 2
        || frozen(g.node(div))
    {
        return false;
    }
    let (Some(d), Some(sq)) = (
        arg_node(g.node(div).args.first()),
        arg_node(g.node(div).args.get(1)),
    ) else {
        return false;
    };
    if !call_named(g, d, &["sub"]) || !call_named(g, sq, &["sqrt"]) {
        return false;
    }
    let (Some(x), Some(mu)) = (
        arg_node(g.node(d).args.first()),
        arg_node(g.node(d).args.get(1)),
    ) else {
        return false;
    };
    if !call_named(g, mu, &["mean"]) || arg0(g, mu) != Some(x) || reduce_dim(g, mu) != Some(-1) {
        return false;
    }
    let Some(ve) = arg0(g, sq) else { return false };
    if !call_named(g, ve, &["add"]) {
        return false;
    }
    let (Some(v), Some(Arg::Float(eps))) = (
        arg_node(g.node(ve).args.first()),
        g.node(ve).args.get(1).cloned(),
    ) else {
        return false;
    };
    let mut inner = vec![d, mu, sq, ve, v];
    let biased_var = call_named(g, v, &["var"])
        && arg0(g, v) == Some(x)
        && reduce_dim(g, v) == Some(-1)
        && (kwarg(g, v, "unbiased") == Some(&Arg::Bool(false))
            || kwarg(g, v, "correction") == Some(&Arg::Int(0)));
    let mean_sq = call_named(g, v, &["mean"]) && reduce_dim(g, v) == Some(-1) && {
        match arg0(g, v) {
            Some(p)
                if call_named(g, p, &["pow"]) && g.node(p).args.get(1) == Some(&Arg::Int(2)) =>
            {
                let dev = arg0(g, p);
                // The deviation is the same node as the numerator once CSE merged the two `x - mean`.
                let ok = dev == Some(d);
                if ok {
                    inner.push(p);
                }
                ok
            }
            _ => false,
        }
    };
    if !(biased_var || mean_sq) {
        return false;
    }
    let Some(Meta::Tensor(t)) = Some(&g.node(x).meta) else {
        return false;
    };
    let Some(last) = t
        .shape
        .as_ref()
        .and_then(|s| s.last())
        .and_then(|d| d.known())
    else {
        return false;
    };
    if !absorbable(g, div, &inner) {
        return false;
    }
    replace_with(
        g,
        div,
        &inner,
        "layer_norm",
        Op::CallFunction,
        "torch.nn.functional.layer_norm".into(),
        vec![Arg::Node(x), Arg::Tuple(vec![Arg::Int(last)])],
        vec![("eps".into(), Arg::Float(eps))],
    );
    true
}

impl Pass for Fusion {
    fn name(&self) -> &'static str {
        "fusion"
    }

    fn run(&self, g: &mut Graph, cx: &PassContext) -> usize {
        let mut fused = 0;
        for id in g.order.clone() {
            if !g.contains(id) || frozen(g.node(id)) {
                continue;
            }
            if at_activation(g, id, cx)
                || at_batch_norm(g, id, cx)
                || at_softmax(g, id)
                || at_layer_norm(g, id)
            {
                fused += 1;
            }
        }
        fused
    }
}
