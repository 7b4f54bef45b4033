//! Output formats for graphs: the design notes' text layout, Graphviz DOT, and JSON.

pub mod dot;
pub mod json;
pub mod text;

use crate::graph::{Arg, Graph};

/// An argument as torch.fx prints it (`x`, `(1, 2)`, `slice(None, 2, None)`).
pub fn arg_text(g: &Graph, a: &Arg) -> String {
    match a {
        Arg::Node(n) => g.node(*n).name.clone(),
        Arg::None => "None".into(),
        Arg::Bool(b) => {
            if *b {
                "True".into()
            } else {
                "False".into()
            }
        }
        Arg::Int(i) => i.to_string(),
        Arg::Float(f) => format!("{f:?}"),
        Arg::Str(s) => format!("{s:?}"),
        Arg::Tuple(v) => {
            let inner: Vec<String> = v.iter().map(|x| arg_text(g, x)).collect();
            if inner.len() == 1 {
                format!("({},)", inner[0])
            } else {
                format!("({})", inner.join(", "))
            }
        }
        Arg::List(v) => format!(
            "[{}]",
            v.iter()
                .map(|x| arg_text(g, x))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Arg::Slice(s) => format!(
            "slice({}, {}, {})",
            arg_text(g, &s[0]),
            arg_text(g, &s[1]),
            arg_text(g, &s[2])
        ),
        Arg::Ellipsis => "...".into(),
        Arg::Dtype(d) => format!("torch.{d}"),
        Arg::Device(d) => format!("device({d:?})"),
        Arg::Repr(r) => r.clone(),
    }
}
