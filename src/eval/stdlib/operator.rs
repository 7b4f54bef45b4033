//! `operator`: the functional forms of Python's operators (`operator.mul` handed to
//! `functools.reduce`, `getattr(operator, name)(a, b)`). Each is evaluated as the operator
//! it names, through the same slots, so a traced argument records the node the operator
//! would (`operator.add` on a traced tensor is torch.fx's `operator.add`).

use super::super::call::{has_proxy, Kwargs};
use super::super::expr::binop_sym;
use super::super::stmt::Truth;
use super::super::value::Value;
use super::super::{EResult, Frame, Interp};
use crate::syntax::Span;

/// The names `operator` binds (CPython 3.11's `dir(operator)`, less dunders): an attribute
/// outside them is an AttributeError, as `getattr(operator, name, default)` relies on.
pub(in crate::eval) const NAMES: &[&str] = &[
    "abs",
    "add",
    "and_",
    "attrgetter",
    "call",
    "concat",
    "contains",
    "countOf",
    "delitem",
    "eq",
    "floordiv",
    "ge",
    "getitem",
    "gt",
    "iadd",
    "iand",
    "iconcat",
    "ifloordiv",
    "ilshift",
    "imatmul",
    "imod",
    "imul",
    "index",
    "indexOf",
    "inv",
    "invert",
    "ior",
    "ipow",
    "irshift",
    "is_",
    "is_not",
    "isub",
    "itemgetter",
    "itruediv",
    "ixor",
    "le",
    "length_hint",
    "lshift",
    "lt",
    "matmul",
    "methodcaller",
    "mod",
    "mul",
    "ne",
    "neg",
    "not_",
    "or_",
    "pos",
    "pow",
    "rshift",
    "setitem",
    "sub",
    "truediv",
    "truth",
    "xor",
];

impl Interp {
    /// `operator.<name>(*args)`; None for a function not modelled here (the in-place forms,
    /// the getter factories), which the caller's handling of external calls answers.
    pub(in crate::eval) fn call_operator(
        &mut self,
        frame: &Frame,
        name: &str,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        if !kwargs.is_empty() {
            return None;
        }
        // `concat(a, b)` is `a + b` on sequences
        let binary = if name == "concat" {
            Some("+")
        } else {
            binop_sym(name)
        };
        if let Some(sym) = binary {
            let [a, b] = args else { return None };
            return Some(self.binary_op(frame, sym, a.clone(), b.clone(), span));
        }
        Some(match (name, args) {
            ("neg", [v]) => self.unary_op(frame, "-", v.clone(), span),
            ("pos", [v]) => self.unary_op(frame, "+", v.clone(), span),
            ("invert" | "inv", [v]) => self.unary_op(frame, "~", v.clone(), span),
            ("getitem", [obj, key]) => self.get_item(frame, obj, key.clone(), span),
            // `contains(a, b)` is `b in a`
            ("contains", [container, item]) => {
                self.compare(frame, "in", item.clone(), container.clone(), span)
            }
            ("is_", [a, b]) => self.compare(frame, "is", a.clone(), b.clone(), span),
            ("is_not", [a, b]) => self.compare(frame, "is not", a.clone(), b.clone(), span),
            ("abs", [_]) => self.call_builtin(frame, "abs", args.to_vec(), vec![], span),
            ("truth" | "not_", [v]) if !has_proxy(v) => Ok(match self.truth(frame, v, span) {
                Ok(Truth::Known(b)) => Value::Bool(b == (name == "truth")),
                Ok(_) => Value::unknown(format!(
                    "`operator.{name}` of a value whose truth is unknown"
                )),
                Err(e) => return Some(Err(e)),
            }),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use crate::analysis::{analyze_in_project, GraphOptions};
    use crate::semantic::Project;

    /// `operator.add` and `operator.mul` on traced tensors are torch.fx's nodes for `+` and
    /// `*`, and on plain numbers (a reduce over a shape) their values.
    #[test]
    fn operator_functions_are_their_operators() {
        let text = "import functools\nimport operator\nimport torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, functools.reduce(operator.mul, (2, 3)))\n\n    def forward(self, x):\n        y = self.fc(x)\n        return getattr(operator, 'add')(y, operator.mul(y, 2))\n";
        let mut project = Project::new("/virtual");
        project.add_overlay("/virtual/m.py", Arc::from(text), None);
        let opts = GraphOptions {
            entry: Some("M()".into()),
            ..Default::default()
        };
        let analysis = analyze_in_project(project, Path::new("/virtual/m.py"), &opts)
            .expect("the entry is built");
        let g = &analysis.graphs[0].graph;
        let calls: Vec<String> = g
            .nodes()
            .filter(|(_, n)| {
                n.op != crate::graph::Op::Placeholder && n.op != crate::graph::Op::Output
            })
            .map(|(_, n)| format!("{:?} {}", n.op, n.target))
            .collect();
        assert_eq!(
            calls,
            [
                "CallModule fc",
                "CallFunction operator.mul",
                "CallFunction operator.add"
            ]
        );
        let fc_width = g
            .nodes()
            .find(|(_, n)| n.target == "fc")
            .and_then(|(_, n)| match &n.meta {
                crate::shapes::Meta::Tensor(t) => t.shape.as_ref()?.last().map(|d| d.to_string()),
                _ => None,
            });
        assert_eq!(fc_width.as_deref(), Some("6"));
    }
}
