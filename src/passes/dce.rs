//! Dead code elimination: pure nodes nothing reads. Placeholders stay (they are the forward's
//! signature), and so does anything with an effect: in-place writes, random draws, prints,
//! asserts, training-mode batch norm, and modules we know nothing about.
//!
//! It also drops nodes that compute nothing: `nn.Identity`, and in inference mode dropout
//! (eval-mode dropout returns its input), so their users read the input directly.

use super::{frozen, is_pure, Pass, PassContext};
use crate::graph::{Graph, Op};

pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run(&self, g: &mut Graph, cx: &PassContext) -> usize {
        let mut removed = 0;
        for id in g.order.clone() {
            let n = g.node(id);
            let identity = n.op == Op::CallModule
                && n.args.len() == 1
                && n.kwargs.is_empty()
                && match n.module_class.as_deref() {
                    Some("Identity") => true,
                    Some("Dropout" | "Dropout1d" | "Dropout2d" | "Dropout3d" | "AlphaDropout") => {
                        cx.inference
                    }
                    _ => false,
                };
            if !identity
                || frozen(n)
                || g.users(id)
                    .iter()
                    .any(|&u| frozen(g.node(u)) && g.node(u).op != Op::Output)
            {
                continue;
            }
            let input = n.args[0].clone();
            g.replace_uses(id, &input);
            g.remove(id);
            removed += 1;
        }
        // `torch._assert(True, msg)`: once folding has decided the condition, the assert is
        // known to pass and has no other effect.
        for id in g.order.clone() {
            let n = g.node(id);
            if n.op == Op::CallFunction
                && n.target == "torch._assert"
                && n.args.first() == Some(&crate::graph::Arg::Bool(true))
                && !frozen(n)
                && g.users(id).is_empty()
            {
                g.remove(id);
                removed += 1;
            }
        }
        // Reverse order: removing a user can make its inputs dead in the same sweep.
        for id in g.order.clone().into_iter().rev() {
            let n = g.node(id);
            if frozen(n) || !is_pure(n, cx.inference) || !g.users(id).is_empty() {
                continue;
            }
            g.remove(id);
            removed += 1;
        }
        removed
    }
}
