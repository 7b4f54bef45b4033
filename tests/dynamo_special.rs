//! What Dynamo special-cases (tracing-state predicates, `allow_in_graph`,
//! `torch.compiler.disable`, `torch.utils.checkpoint`, einops), against what real torch 2.15
//! recorded for `tests/fixtures/dynamo/*.py` (`tests/expected/dynamo/`, written by
//! `scripts/expect/gen_dynamo_expectations.py`):
//! - the graph breaks, as (line, gb id), equal `torch._dynamo.explain`'s, and no call is left
//!   as a possible break;
//! - the graph equals the one the case's `compare` names: with `dynamo`, the nodes Dynamo
//!   captured (op, target, arguments, shape; names differ, so arguments refer to nodes by
//!   position); with `fx`, torch.fx's graph node for node.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A node as compared: its opcode, target, arguments with node references replaced by the
/// position of the node among the computed ones (`in` for graph inputs), shape and dtype.
fn computed(nodes: &[Value]) -> Vec<String> {
    let skip = |n: &Value| {
        matches!(
            n["op"].as_str(),
            Some("placeholder" | "output" | "get_attr")
        )
    };
    let kept: Vec<&Value> = nodes.iter().filter(|n| !skip(n)).collect();
    let position = |name: &str| {
        let mut i = 0;
        for n in nodes {
            if skip(n) {
                if n["name"].as_str() == Some(name) {
                    return "in".to_string();
                }
                continue;
            }
            if n["name"].as_str() == Some(name) {
                return i.to_string();
            }
            i += 1;
        }
        "in".to_string()
    };
    kept.iter()
        .map(|n| {
            format!(
                "{} {} {} {} {} {}",
                n["op"],
                n["target"],
                renumber(&n["args"], &position),
                renumber(&n["kwargs"], &position),
                n["shape"],
                n["dtype"]
            )
        })
        .collect()
}

fn renumber(v: &Value, position: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::Object(m) if m.contains_key("node") => {
            serde_json::json!({"node": position(m["node"].as_str().unwrap_or(""))})
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), renumber(x, position)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| renumber(x, position)).collect()),
        other => other.clone(),
    }
}

/// Each of Dynamo's graphs (one per break) numbered on its own, its inputs being `in`.
fn dynamo_nodes(graphs: &[Value]) -> Vec<String> {
    graphs
        .iter()
        .flat_map(|g| computed(g.as_array().unwrap()))
        .collect()
}

fn fx_key(n: &Value) -> String {
    format!(
        "{} {} {} {} {} {} {}",
        n["name"], n["op"], n["target"], n["args"], n["shape"], n["dtype"], n["kwargs"]
    )
}

fn analyse(file: &Path, inputs: Vec<InputSpec>) -> (Vec<Value>, BTreeSet<(usize, String)>, usize) {
    let file = file.to_path_buf();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let a = analyze_file(
                &file,
                &GraphOptions {
                    inputs,
                    class: Some("Model".into()),
                    ..Default::default()
                },
            )
            .unwrap();
            let json: Value =
                serde_json::from_str(&staticfx::render::json::render(&a.project, &a.graphs))
                    .unwrap();
            let nodes = json["graphs"][0]["nodes"].as_array().unwrap().clone();
            let mut breaks = BTreeSet::new();
            let mut possible = 0;
            for g in &a.graphs {
                for f in &g.breaks {
                    if f.gb_id.is_empty() {
                        possible += 1;
                    } else {
                        breaks.insert((f.line, f.gb_id.to_string()));
                    }
                }
            }
            (nodes, breaks, possible)
        })
        .unwrap()
        .join()
        .unwrap()
}

fn check(case: &str) -> Result<(), String> {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join(format!("tests/expected/dynamo/{case}.json")))
            .unwrap(),
    )
    .unwrap();
    let inputs: Vec<InputSpec> = expected["inputs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, dims)| {
            let dims: Vec<String> = dims
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.to_string())
                .collect();
            format!("{name}={}", dims.join("x")).parse().unwrap()
        })
        .collect();
    let file = root().join(format!("tests/fixtures/dynamo/{case}.py"));
    let (nodes, breaks, possible) = analyse(&file, inputs);

    let want_breaks: BTreeSet<(usize, String)> = expected["breaks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["line"].as_u64().unwrap() as usize,
                b["gb_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    if breaks != want_breaks {
        return Err(format!(
            "{case}: breaks {breaks:?}, Dynamo reported {want_breaks:?}"
        ));
    }
    if possible != 0 {
        return Err(format!("{case}: {possible} possible break(s) reported"));
    }

    let (got, want): (Vec<String>, Vec<String>) = match expected["compare"].as_str() {
        Some("dynamo") => (
            computed(&nodes),
            dynamo_nodes(expected["dynamo_graphs"].as_array().unwrap()),
        ),
        Some("fx") => (
            nodes.iter().map(fx_key).collect(),
            expected["fx"]["nodes"]
                .as_array()
                .ok_or_else(|| format!("{case}: torch.fx has no graph"))?
                .iter()
                .map(fx_key)
                .collect(),
        ),
        other => return Err(format!("{case}: unknown comparison {other:?}")),
    };
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if g != w {
            return Err(format!(
                "{case}: node {i} differs:\n  got      {g}\n  expected {w}"
            ));
        }
    }
    if got.len() != want.len() {
        return Err(format!(
            "{case}: {} nodes, expected {}",
            got.len(),
            want.len()
        ));
    }
    Ok(())
}

#[test]
fn dynamo_special_cases_match_torch() {
    let mut cases: Vec<String> = std::fs::read_dir(root().join("tests/expected/dynamo"))
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "json").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    cases.sort();
    assert!(cases.len() >= 6, "{cases:?}");
    let failures: Vec<String> = cases.iter().filter_map(|c| check(c).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
