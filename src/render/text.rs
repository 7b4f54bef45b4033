use std::fmt::Write;

use super::arg_text;
use crate::analysis::GraphResult;
use crate::graph::{Op, RegionRole};

/// The text layout of the design notes: `name: op[target](args)` per node, then a summary of
/// graph breaks. Known shapes follow as `  # [1, 128] float32`.
pub fn render(r: &GraphResult) -> String {
    let g = &r.graph;
    let mut out = String::new();
    let _ = writeln!(out, "Graph: {}", r.name);
    let _ = writeln!(out, "{}", "=".repeat(50));
    for (_, n) in g.nodes() {
        let mut args: Vec<String> = n.args.iter().map(|a| arg_text(g, a)).collect();
        args.extend(n.kwargs.iter().map(|(k, v)| format!("{k}={}", arg_text(g, v))));
        let args = if n.op == Op::Placeholder && !n.args.is_empty() { String::new() } else { args.join(", ") };
        let _ = write!(out, "{}: {}[{}]({})", n.name, n.op.as_str(), n.target, args);
        if let Some(tag) = n.region {
            match tag.role {
                RegionRole::Cause => out.push_str(" [GRAPH_BREAK]"),
                RegionRole::ThenBranch => out.push_str(" [GRAPH_BREAK: then_branch]"),
                RegionRole::ElseBranch => out.push_str(" [GRAPH_BREAK: else_branch]"),
            }
        }
        if let Some(t) = n.meta.as_tensor() {
            if t.shape.is_some() {
                let _ = write!(out, "  # {} {}", n.meta.describe(), t.dtype.as_str());
            }
        }
        out.push('\n');
    }
    out.push('\n');
    let _ = writeln!(out, "Graph Break Summary:");
    let _ = writeln!(out, "{}", "-".repeat(50));
    if r.regions.is_empty() {
        let _ = writeln!(out, "No graph breaks detected!");
    } else {
        for (i, region) in r.regions.iter().enumerate() {
            let _ = writeln!(out, "{}. Data-dependent control flow ({}) at node {}", i + 1, region.kind, g.node(region.cause).name);
        }
    }
    if let Some(log) = &r.passes {
        let _ = writeln!(out, "\nPass Log{}:", if r.from_cache { " (from cache)" } else { "" });
        let _ = writeln!(out, "{}", "-".repeat(50));
        if log.is_empty() {
            let _ = writeln!(out, "(no passes run)");
        }
        for p in log {
            let _ = writeln!(out, "round {} {:<14} {} node(s) modified", p.round, p.name, p.nodes_modified);
        }
    }
    if let Some(e) = &r.error {
        let _ = writeln!(out, "\nTracing stopped early: {} ({})", e.message, e.code);
    }
    out
}
