//! The executor against eager PyTorch. `scripts/exec/gen_run_expectations.py` ran each
//! case in torch (weights, inputs and outputs under `tests/fixtures/exec/`); here the same
//! model is traced from source, run by `staticfx::exec` on the same weights and inputs, and
//! compared.
//!
//! Error measure: `max |ours - torch| / max |torch|` over each output tensor (relative to the
//! output's scale; elementwise relative error is meaningless near zero), required to be
//! at most `REL_TOL`. The maximum absolute difference is printed too.
//!
//! Every case also runs the graph after the pass pipeline in inference mode (CSE, folding,
//! fusion incl. batch norm folded into convolutions, DCE): the differential test of the
//! passes. The optimized graph must meet the same tolerance against torch, and the largest
//! difference between the optimized and the traced graph's outputs is printed.
//!
//! torchvision cases read torchvision's source from `$STATICFX_TORCHVISION_ROOT` (as
//! `tests/fx_fidelity.rs` does); without it they are skipped with a message. Their weights
//! are not committed: `det_fill` regenerates them (the script's counter-based generator,
//! bit for bit), they are written to a temporary safetensors file and loaded through the
//! normal `--weights` path.

mod input_specs;

use input_specs::inputs_of;
use std::path::{Path, PathBuf};

use serde_json::Value;
use staticfx::analysis::{analyze_file, optimize_graph, GraphOptions};
use staticfx::exec::{self, weights, HostTensor, RunOptions};

/// Relative to each output's largest magnitude, f32 throughout.
const REL_TOL: f64 = 1e-4;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn exec_dir() -> PathBuf {
    manifest_dir().join("tests/fixtures/exec")
}

fn cases() -> Value {
    let p = exec_dir().join("cases.json");
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn fnv1a64(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// `det_range` of the generator script.
fn det_range(name: &str, shape: &[usize]) -> (f64, f64) {
    let local = name.rsplit('.').next().unwrap();
    if shape.len() >= 2 {
        let fan_in: usize = shape[1..].iter().product();
        let b = (6.0 / fan_in.max(1) as f64).sqrt();
        return (-b, b);
    }
    match local {
        "running_var" | "weight" => (0.5, 1.5),
        _ => (-0.1, 0.1),
    }
}

/// `det_fill` of the generator script, for every tensor the module tree declares.
fn det_fill(modules: &[staticfx::analysis::ModuleSummary], seed: u64) -> Vec<(String, HostTensor)> {
    weights::expected(modules)
        .into_iter()
        .map(|e| {
            let shape = e.shape.clone().expect("static parameter shape");
            let n: usize = shape.iter().product();
            let t = if e.dtype.is_floating() {
                let (lo, hi) = det_range(&e.name, &shape);
                let key = fnv1a64(&e.name) ^ seed;
                let v: Vec<f32> = (0..n as u64)
                    .map(|i| {
                        let u = (splitmix64(key.wrapping_add(i)) >> 11) as f64 * (2f64).powi(-53);
                        (lo + (hi - lo) * u) as f32
                    })
                    .collect();
                HostTensor::F32(ndarray::ArrayD::from_shape_vec(shape, v).unwrap())
            } else {
                HostTensor::I64(ndarray::ArrayD::zeros(shape))
            };
            (e.name, t)
        })
        .collect()
}

struct Outcome {
    id: String,
    rel: f64,
    abs: f64,
    /// The optimized graph against torch, and against the traced graph.
    rel_optimized: f64,
    optimized_vs_traced: f64,
    fused_nodes: usize,
    nodes: (usize, usize),
}

/// `max |a - b| / max |b|` over the outputs `b` names.
fn max_rel(a: &[(String, HostTensor)], b: &[(String, HostTensor)], id: &str) -> (f64, f64) {
    let (mut rel, mut abs) = (0f64, 0f64);
    for (name, exp) in b {
        let (_, ours) = a
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{id}: no output {name}"));
        assert_eq!(ours.shape(), exp.shape(), "{id} {name}: shape");
        assert_eq!(ours.dtype(), exp.dtype(), "{id} {name}: dtype");
        let (x, y) = (ours.to_f64_vec(), exp.to_f64_vec());
        let scale = y.iter().fold(0f64, |m, v| m.max(v.abs())).max(1e-12);
        let diff = x.iter().zip(&y).fold(0f64, |m, (p, q)| {
            if p.is_nan() || q.is_nan() {
                f64::INFINITY
            } else {
                m.max((p - q).abs())
            }
        });
        abs = abs.max(diff);
        rel = rel.max(diff / scale);
    }
    (rel, abs)
}

fn run_case(case: &Value, tv_root: Option<&Path>) -> Option<Outcome> {
    let id = case["id"].as_str().unwrap().to_string();
    let file = case["file"].as_str().unwrap();
    let (path, root) = match case["source"].as_str().unwrap() {
        "fixture" => (
            manifest_dir().join("tests/fixtures/models").join(file),
            None,
        ),
        "exec" => (exec_dir().join(file), None),
        _ => {
            let root = tv_root?;
            (
                root.join("torchvision").join(file),
                Some(root.to_path_buf()),
            )
        }
    };
    let opts = GraphOptions {
        root,
        entry: Some(case["entry"].as_str().unwrap().to_string()),
        inputs: inputs_of(&case["inputs"]),
        ..Default::default()
    };
    let analysis = analyze_file(&path, &opts).unwrap_or_else(|e| panic!("{id}: {e}"));
    let graph = &analysis.graphs[0];
    let tmp = tempfile::tempdir().unwrap();
    let weights_path = match case["weights"].as_str().unwrap() {
        "generate" => {
            let seed = case["weight_seed"].as_u64().unwrap();
            let p = tmp.path().join("weights.safetensors");
            weights::write_safetensors(&p, &det_fill(&graph.modules, seed)).unwrap();
            p
        }
        f => exec_dir().join(f),
    };
    let run = RunOptions {
        weights: Some(weights_path),
        inputs_file: Some(exec_dir().join(format!("{id}.inputs.safetensors"))),
        inputs: vec![],
        seed: 0,
        repeat: 1,
    };
    let result = exec::run_graph(graph, &run).unwrap_or_else(|e| panic!("{id}: {e}"));
    let expected =
        weights::read_safetensors(&exec_dir().join(format!("{id}.expected.safetensors"))).unwrap();
    let names: Vec<&str> = result.outputs.iter().map(|(n, _)| n.as_str()).collect();
    let mut want: Vec<&str> = expected.iter().map(|(n, _)| n.as_str()).collect();
    want.sort();
    let mut got = names.clone();
    got.sort();
    assert_eq!(got, want, "{id}: output names");
    let (rel, abs) = max_rel(&result.outputs, &expected, &id);

    let mut optimized = staticfx::analysis::GraphResult::clone(graph);
    let passes = staticfx::passes::PassOptions {
        inference: true,
        validate: true,
        ..Default::default()
    };
    optimize_graph(&mut optimized, &passes).unwrap_or_else(|e| panic!("{id}: passes: {e}"));
    let fused_nodes = optimized
        .graph
        .nodes()
        .filter(|(_, n)| n.target.starts_with("staticfx.fused."))
        .count();
    let opt_result =
        exec::run_graph(&optimized, &run).unwrap_or_else(|e| panic!("{id} (optimized): {e}"));
    let (rel_optimized, _) = max_rel(&opt_result.outputs, &expected, &id);
    let (optimized_vs_traced, _) = max_rel(&opt_result.outputs, &result.outputs, &id);
    Some(Outcome {
        id,
        rel,
        abs,
        rel_optimized,
        optimized_vs_traced,
        fused_nodes,
        nodes: (graph.graph.len(), optimized.graph.len()),
    })
}

fn torchvision_root() -> Option<PathBuf> {
    std::env::var_os("STATICFX_TORCHVISION_ROOT").map(PathBuf::from)
}

fn check_all(filter: impl Fn(&Value) -> bool) {
    let cases = cases();
    let tv = torchvision_root();
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut fused = 0;
    eprintln!("torch {}", cases["torch_version"]);
    for case in cases["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| filter(c))
    {
        match run_case(case, tv.as_deref()) {
            None => eprintln!(
                "{}: skipped (set STATICFX_TORCHVISION_ROOT to a directory holding torchvision/)",
                case["id"]
            ),
            Some(o) => {
                ran += 1;
                fused += o.fused_nodes;
                eprintln!(
                    "{:<24} max rel {:.2e}  max abs {:.2e} | optimized {}→{} nodes ({} fused): rel {:.2e}, vs traced {:.2e}",
                    o.id, o.rel, o.abs, o.nodes.0, o.nodes.1, o.fused_nodes, o.rel_optimized, o.optimized_vs_traced
                );
                if !(o.rel <= REL_TOL) {
                    failures.push(format!(
                        "{}: relative error {:.3e} > {REL_TOL:e}",
                        o.id, o.rel
                    ));
                }
                if !(o.rel_optimized <= REL_TOL) {
                    failures.push(format!(
                        "{} (optimized): relative error {:.3e} > {REL_TOL:e}",
                        o.id, o.rel_optimized
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The differential half is only worth something if the passes rewrote something.
    assert!(ran == 0 || fused > 0, "no case had a fused node");
    if std::env::var_os("CI").is_some() && tv.is_none() {
        let any_tv = cases["cases"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| filter(c) && c["source"] == "torchvision");
        assert!(!any_tv, "torchvision cases are mandatory under CI");
    }
    let _ = ran;
}

#[test]
fn fixtures_match_eager_pytorch() {
    check_all(|c| c["source"] != "torchvision");
}

#[test]
fn torchvision_models_match_eager_pytorch() {
    check_all(|c| c["source"] == "torchvision");
}
