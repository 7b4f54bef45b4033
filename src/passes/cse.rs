//! Common subexpression elimination: two pure nodes with the same op, target, inputs and
//! constant arguments compute the same value, so the later one's users read the earlier one.

use std::collections::HashMap;

use super::{frozen, is_pure, Pass, PassContext};
use crate::graph::{Arg, Graph, Op};

pub struct Cse;

/// The identity of a computation. Node inputs are compared by id (after earlier merges), and
/// floats by their bits so `1` and `1.0` stay distinct, as Python's `1 is 1.0` would not.
fn key(g: &Graph, id: crate::graph::NodeId) -> String {
    let n = g.node(id);
    let mut k = format!("{}|{}|", n.op.as_str(), n.target);
    fn arg(a: &Arg, out: &mut String) {
        match a {
            Arg::Node(n) => out.push_str(&format!("%{}", n.index())),
            Arg::Float(f) => out.push_str(&format!("f{:x}", f.to_bits())),
            Arg::Tuple(v) | Arg::List(v) => {
                out.push(if matches!(a, Arg::Tuple(_)) { '(' } else { '[' });
                v.iter().for_each(|x| {
                    arg(x, out);
                    out.push(',');
                });
                out.push(')');
            }
            Arg::Slice(s) => {
                out.push_str("slice(");
                s.iter().for_each(|x| {
                    arg(x, out);
                    out.push(',');
                });
                out.push(')');
            }
            other => out.push_str(&format!("{other:?}")),
        }
    }
    for a in &n.args {
        arg(a, &mut k);
        k.push(',');
    }
    for (name, a) in &n.kwargs {
        k.push_str(name);
        k.push('=');
        arg(a, &mut k);
        k.push(',');
    }
    k
}

impl Pass for Cse {
    fn name(&self) -> &'static str {
        "cse"
    }

    fn run(&self, g: &mut Graph, cx: &PassContext) -> usize {
        let mut seen: HashMap<String, crate::graph::NodeId> = HashMap::new();
        let mut merged = 0;
        for id in g.order.clone() {
            let n = g.node(id);
            if frozen(n) || !is_pure(n, cx.inference) || n.op == Op::Placeholder {
                continue;
            }
            let k = key(g, id);
            match seen.get(&k) {
                Some(&first) => {
                    let dup_origins: Vec<_> = if n.fused_from.is_empty() {
                        n.origin.clone().into_iter().collect()
                    } else {
                        n.fused_from.clone()
                    };
                    if g.users(id)
                        .iter()
                        .any(|&u| frozen(g.node(u)) && g.node(u).op != crate::graph::Op::Output)
                    {
                        continue;
                    }
                    g.replace_uses(id, &Arg::Node(first));
                    g.remove(id);
                    let keep = g.node_mut(first);
                    if keep.fused_from.is_empty() {
                        keep.fused_from.extend(keep.origin.clone());
                    }
                    keep.fused_from.extend(dup_origins);
                    merged += 1;
                }
                None => {
                    seen.insert(k, id);
                }
            }
        }
        merged
    }
}
