use std::fmt::Write;

use crate::graph::{Node, Op, RegionRole};
use crate::traced::GraphResult;

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// Graphviz DOT: one box per node (name, op[target], shape), edges from producers to users;
/// graph-break causes in red, their branches in orange.
pub fn render(r: &GraphResult) -> String {
    render_with_lines(r, |_| None)
}

/// [`render`], with each node's source line (1-based) from `line_of` carried in its `class`
/// as `fx-line-N`, next to `fx-break` (causes) or `fx-break-branch` (their branches), so an
/// SVG viewer can highlight breaks and jump to source. Graphviz copies `class` into the SVG.
pub fn render_with_lines(r: &GraphResult, line_of: impl Fn(&Node) -> Option<usize>) -> String {
    let g = &r.graph;
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", escape(&r.name));
    let _ = writeln!(out, "  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\", fontsize=10];");
    for (id, n) in g.nodes() {
        let mut label = format!(
            "{}\\n{}[{}]",
            escape(&n.name),
            n.op.as_str(),
            escape(&n.target)
        );
        if n.meta.is_tensor() {
            let _ = write!(label, "\\n{}", escape(&n.meta.describe()));
        }
        let breaks_here = r
            .breaks
            .iter()
            .any(|f| f.node == Some(id) && !f.gb_id.is_empty());
        let role = n
            .region
            .filter(|t| r.breaks.iter().any(|f| f.region == Some(t.region)))
            .map(|t| t.role);
        let color = match (role, n.op) {
            _ if breaks_here => "#f4a6a6",
            (Some(RegionRole::Cause), _) => "#f4a6a6",
            (Some(_), _) => "#fbd38d",
            (None, Op::Placeholder | Op::Output) => "#c3dafe",
            (None, Op::GetAttr) => "#e2e8f0",
            (None, Op::CallModule) => "#c6f6d5",
            _ => "#ffffff",
        };
        // The same marking as the colours: reported breaks and their regions only.
        let mut classes = Vec::new();
        match role {
            _ if breaks_here => classes.push("fx-break".to_string()),
            Some(RegionRole::Cause) => classes.push("fx-break".to_string()),
            Some(_) => classes.push("fx-break-branch".to_string()),
            None => {}
        }
        if let Some(line) = line_of(n) {
            classes.push(format!("fx-line-{line}"));
        }
        let class = if classes.is_empty() {
            String::new()
        } else {
            format!(", class=\"{}\"", classes.join(" "))
        };
        let _ = writeln!(
            out,
            "  n{} [label=\"{}\", fillcolor=\"{}\", tooltip=\"{}\"{}];",
            id.index(),
            label,
            color,
            escape(&n.name),
            class
        );
    }
    for (id, n) in g.nodes() {
        let mut inputs = Vec::new();
        n.args.iter().for_each(|a| a.nodes(&mut inputs));
        n.kwargs.iter().for_each(|(_, a)| a.nodes(&mut inputs));
        inputs.dedup();
        for src in inputs {
            let _ = writeln!(out, "  n{} -> n{};", src.index(), id.index());
        }
    }
    out.push_str("}\n");
    out
}
