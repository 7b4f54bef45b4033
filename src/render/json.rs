use serde_json::{json, Map, Value};

use crate::graph::{Arg, Graph};
use crate::semantic::Project;
use crate::shapes::Meta;
use crate::traced::GraphResult;

pub fn arg_json(g: &Graph, a: &Arg) -> Value {
    match a {
        Arg::Node(n) => json!({ "node": g.node(*n).name }),
        Arg::None => Value::Null,
        Arg::Bool(b) => json!(b),
        Arg::Int(i) => json!(i),
        Arg::Float(f) if f.is_finite() => json!(f),
        Arg::Float(f) => json!({ "repr": format!("{f}") }),
        Arg::Str(s) => json!(s),
        Arg::Tuple(v) | Arg::List(v) => Value::Array(v.iter().map(|x| arg_json(g, x)).collect()),
        Arg::Slice(s) => {
            json!({ "slice": [arg_json(g, &s[0]), arg_json(g, &s[1]), arg_json(g, &s[2])] })
        }
        Arg::Ellipsis => json!({ "ellipsis": true }),
        Arg::Dtype(d) => json!({ "dtype": d }),
        Arg::Device(d) => json!({ "device": d }),
        Arg::Repr(r) => json!({ "repr": r }),
    }
}

fn shape_json(m: &Meta) -> (Value, Value) {
    match m {
        Meta::Tensor(t) => {
            let shape = match &t.shape {
                Some(s) if s.iter().all(|d| d.known().is_some()) => {
                    json!(s.iter().map(|d| d.known()).collect::<Vec<_>>())
                }
                Some(s) => json!(s.iter().map(|d| d.to_string()).collect::<Vec<_>>()),
                None => Value::Null,
            };
            (shape, json!(t.dtype.as_str()))
        }
        _ => (Value::Null, Value::Null),
    }
}

fn position(project: &Project, file: usize, offset: usize) -> Value {
    let f = project.file(file);
    let lc = f.lines.line_col(&f.text, offset);
    json!({ "line": lc.line + 1, "column": lc.col + 1 })
}

pub fn graph_json(project: &Project, r: &GraphResult) -> Value {
    let g = &r.graph;
    let nodes: Vec<Value> = g
        .nodes()
        .map(|(_, n)| {
            let (shape, dtype) = shape_json(&n.meta);
            let mut kwargs = Map::new();
            for (k, v) in &n.kwargs {
                kwargs.insert(k.clone(), arg_json(g, v));
            }
            let span = n.origin.as_ref().map(|o| {
                json!({
                    "file": project.file(o.file).path.display().to_string(),
                    "start": position(project, o.file, o.span.start),
                    "end": position(project, o.file, o.span.end),
                })
            });
            let region = n
                .region
                .map(|t| json!({ "region": t.region, "role": t.role }));
            let span_of = |o: &crate::graph::Origin| {
                json!({
                    "file": project.file(o.file).path.display().to_string(),
                    "start": position(project, o.file, o.span.start),
                    "end": position(project, o.file, o.span.end),
                })
            };
            let fused_from: Vec<Value> = n.fused_from.iter().map(span_of).collect();
            json!({
                "name": n.name,
                "op": n.op.as_str(),
                "target": n.target,
                "args": n.args.iter().map(|a| arg_json(g, a)).collect::<Vec<_>>(),
                "kwargs": kwargs,
                "shape": shape,
                "dtype": dtype,
                "span": span,
                "region": region,
                "fused_from": fused_from,
            })
        })
        .collect();
    let finding = |f: &crate::breaks::Finding| {
        let related: Vec<Value> = f
                .related
                .iter()
                .map(|(file, span, msg)| json!({ "file": project.file(*file).path.display().to_string(), "start": position(project, *file, span.start), "message": msg }))
                .collect();
        json!({
            "code": f.code,
            "gb_id": f.gb_id,
            "gb_type": f.gb_type,
            "reason": f.message,
            "hint": f.hint,
            "severity": f.severity,
            "file": project.file(f.file).path.display().to_string(),
            "line": f.line,
            "column": f.column,
            "end": { "line": f.end_line, "column": f.end_column },
            "node": f.node.map(|n| g.node(n).name.clone()),
            "region": f.region,
            "impact": f.impact_nodes,
            "fix_available": f.fix_available,
            "url": f.url(),
            "related": related,
        })
    };
    // A call that will raise (FX3xx) is the user's bug, not a graph break.
    let breaks: Vec<Value> = r
        .breaks
        .iter()
        .filter(|f| f.rule.breaks_graph())
        .map(finding)
        .collect();
    // A guard that forward itself makes fail (FX2xx): one graph, compiled again later.
    let recompiles: Vec<Value> = r
        .breaks
        .iter()
        .filter(|f| f.rule.recompiles())
        .map(finding)
        .collect();
    let raises: Vec<Value> = r
        .breaks
        .iter()
        .filter(|f| f.rule.raises())
        .map(finding)
        .collect();
    let regions: Vec<Value> = r
        .regions
        .iter()
        .map(|reg| {
            json!({
                "region": reg.id,
                "kind": reg.kind,
                "node": g.node(reg.cause).name,
                "start": position(project, reg.file, reg.span.start),
                "end": position(project, reg.file, reg.span.end),
            })
        })
        .collect();
    json!({
        "name": r.name,
        "entry": r.entry,
        "nodes": nodes,
        "graph_breaks": breaks,
        "will_raise": raises,
        "recompile_risks": recompiles,
        "regions": regions,
        "optimized": r.passes.is_some(),
        "passes": r.passes.iter().flatten().map(|p| json!({"round": p.round, "name": p.name, "nodes_modified": p.nodes_modified})).collect::<Vec<_>>(),
        "error": r.error.as_ref().map(|e| json!({"code": e.code, "message": e.message})),
    })
}

pub fn render(project: &Project, results: &[std::sync::Arc<GraphResult>]) -> String {
    let v = json!({ "graphs": results.iter().map(|r| graph_json(project, r)).collect::<Vec<_>>() });
    serde_json::to_string_pretty(&v).expect("json")
}
