use std::fmt::Write;

use super::arg_text;
use crate::graph::{Op, RegionRole};
use crate::traced::GraphResult;

/// The text layout of the design notes: `name: op[target](args)` per node, then a summary of
/// graph breaks. Known shapes follow as `  # [1, 128] float32`.
pub fn render(r: &GraphResult) -> String {
    let g = &r.graph;
    let mut out = String::new();
    let _ = writeln!(out, "Graph: {}", r.name);
    let _ = writeln!(out, "{}", "=".repeat(50));
    for (id, n) in g.nodes() {
        let mut args: Vec<String> = n.args.iter().map(|a| arg_text(g, a)).collect();
        args.extend(
            n.kwargs
                .iter()
                .map(|(k, v)| format!("{k}={}", arg_text(g, v))),
        );
        let args = if n.op == Op::Placeholder && !n.args.is_empty() {
            String::new()
        } else {
            args.join(", ")
        };
        let _ = write!(out, "{}: {}[{}]({})", n.name, n.op.as_str(), n.target, args);
        let (raises, caused): (Vec<&crate::breaks::Finding>, Vec<_>) = r
            .breaks
            .iter()
            .filter(|f| f.node == Some(id))
            .partition(|f| f.rule.raises());
        // Regions the pass did not report (e.g. a branch on a Python bool that an earlier
        // `bool(t)` produced, which is where Dynamo broke) carry no marker.
        let tag = n
            .region
            .filter(|t| r.breaks.iter().any(|f| f.region == Some(t.region)));
        if !raises.is_empty() {
            out.push_str(" [WILL_RAISE]");
        }
        if !caused.is_empty() {
            out.push_str(" [GRAPH_BREAK]");
        } else if let Some(tag) = tag {
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
        for f in caused {
            let _ = writeln!(
                out,
                "  └─ Break Reason: {} ({}): {}",
                f.gb_type, f.gb_id, f.message
            );
            let _ = writeln!(out, "  └─ Workaround: {}", f.hint);
        }
        for f in raises {
            let _ = writeln!(out, "  └─ Will raise ({}): {}", f.code, f.message);
        }
    }
    out.push('\n');
    let _ = writeln!(out, "Graph Break Summary:");
    let _ = writeln!(out, "{}", "-".repeat(50));
    let proven: Vec<&crate::breaks::Finding> =
        r.breaks.iter().filter(|f| !f.gb_id.is_empty()).collect();
    if proven.is_empty() {
        let _ = writeln!(out, "No graph breaks detected!");
    }
    for (i, f) in proven.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}. {} {} {} (line {})",
            i + 1,
            f.code,
            f.gb_id,
            f.gb_type,
            f.line
        );
        let _ = writeln!(out, "   {}", f.message);
        for (_, _, via) in &f.related {
            let _ = writeln!(out, "   {via}");
        }
        let severity = format!("{:?}", f.severity).to_lowercase();
        let _ = writeln!(
            out,
            "   Severity: {severity}; impact: {} nodes after the break",
            f.impact_nodes
        );
        let _ = writeln!(out, "   Fix: {}", f.hint);
    }
    let possible = r
        .breaks
        .iter()
        .filter(|f| f.gb_id.is_empty() && f.rule.breaks_graph())
        .count();
    if possible > 0 {
        let _ = writeln!(out, "({possible} possible break(s) at calls staticfx cannot see into; see `staticfx check`)");
    }
    let recompiling: Vec<&crate::breaks::Finding> =
        r.breaks.iter().filter(|f| f.rule.recompiles()).collect();
    if !recompiling.is_empty() {
        let _ = writeln!(out, "\nRecompile Risks:");
        let _ = writeln!(out, "{}", "-".repeat(50));
        for f in recompiling {
            let _ = writeln!(out, "{} (line {}): {}", f.code, f.line, f.message);
        }
    }
    let raising: Vec<&crate::breaks::Finding> =
        r.breaks.iter().filter(|f| f.rule.raises()).collect();
    if !raising.is_empty() {
        let _ = writeln!(out, "\nWill Raise at Run Time (eager too):");
        let _ = writeln!(out, "{}", "-".repeat(50));
        for f in raising {
            let _ = writeln!(out, "{} (line {}): {}", f.code, f.line, f.message);
        }
    }
    if let Some(log) = &r.passes {
        let _ = writeln!(
            out,
            "\nPass Log{}:",
            if r.from_cache { " (from cache)" } else { "" }
        );
        let _ = writeln!(out, "{}", "-".repeat(50));
        if log.is_empty() {
            let _ = writeln!(out, "(no passes run)");
        }
        for p in log {
            let _ = writeln!(
                out,
                "round {} {:<14} {} node(s) modified",
                p.round, p.name, p.nodes_modified
            );
        }
    }
    if let Some(e) = &r.error {
        let _ = writeln!(out, "\nTracing stopped early: {} ({})", e.message, e.code);
    }
    out
}
