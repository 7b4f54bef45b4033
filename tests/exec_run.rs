//! `staticfx run` and the executor's error paths: malformed safetensors, weights that do
//! not fit the model, unsupported ops and shape mismatches (errors naming the node and
//! line, never panics), output files, inputs files, seeded default initialisation.

use std::path::{Path, PathBuf};
use std::process::Command;

use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};
use staticfx::exec::{self, weights, ExecError, HostTensor, RunOptions};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_staticfx"))
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = bin().arg("run").args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn mlp_graph(inputs: &[&str]) -> staticfx::analysis::FileAnalysis {
    let opts = GraphOptions {
        entry: Some("SimpleNet()".into()),
        inputs: inputs
            .iter()
            .map(|s| s.parse::<InputSpec>().unwrap())
            .collect(),
        ..Default::default()
    };
    analyze_file(&fixture("models/mlp.py"), &opts).unwrap()
}

fn weights_error(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("w.safetensors");
    std::fs::write(&p, bytes).unwrap();
    let a = mlp_graph(&["x=2,784"]);
    let opts = RunOptions {
        weights: Some(p),
        ..Default::default()
    };
    match exec::run_graph(&a.graphs[0], &opts) {
        Err(ExecError::Weights(e)) => e.to_string(),
        other => panic!("expected a weights error, got {other:?}"),
    }
}

fn valid_mlp_weights() -> Vec<u8> {
    std::fs::read(fixture("exec/mlp.weights.safetensors")).unwrap()
}

#[test]
fn malformed_safetensors_are_errors() {
    let good = valid_mlp_weights();
    // Shorter than the length prefix.
    assert!(weights_error(b"abc").contains("shorter than the 8-byte header length"));
    // Truncated inside the tensor data.
    let e = weights_error(&good[..good.len() - 100]);
    assert!(e.contains("not a valid safetensors file"), "{e}");
    // Truncated inside the header.
    let e = weights_error(&good[..60]);
    assert!(e.contains("truncated"), "{e}");
    // A header length beyond safetensors' limit.
    let mut huge = (200u64 << 20).to_le_bytes().to_vec();
    huge.extend_from_slice(b"{}");
    let e = weights_error(&huge);
    assert!(e.contains("more than safetensors allows"), "{e}");
    // A header that is not JSON.
    let mut bad = 8u64.to_le_bytes().to_vec();
    bad.extend_from_slice(b"not json");
    let e = weights_error(&bad);
    assert!(e.contains("JSON"), "{e}");
    // Random bytes never panic.
    let mut state = 0x1234_5678_u64;
    for len in [8usize, 9, 16, 64, 300] {
        let noise: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let _ = weights_error(&noise);
    }
}

#[test]
fn weights_that_do_not_fit_are_listed_together() {
    let mut tensors = weights::parse_safetensors(&valid_mlp_weights(), "mlp").unwrap();
    // Drop fc2.bias, add an extra tensor, and give fc1.weight the wrong shape.
    tensors.retain(|(n, _)| n != "fc2.bias");
    tensors.push((
        "fc3.weight".into(),
        HostTensor::F32(ndarray::ArrayD::zeros(vec![2, 2])),
    ));
    for (n, t) in tensors.iter_mut() {
        if n == "fc1.weight" {
            *t = HostTensor::F32(ndarray::ArrayD::zeros(vec![128, 783]));
        }
    }
    let bytes = weights::serialize_safetensors(&tensors).unwrap();
    let e = weights_error(&bytes);
    assert!(e.contains("missing (1): fc2.bias"), "{e}");
    assert!(e.contains("unexpected (1): fc3.weight"), "{e}");
    assert!(
        e.contains("fc1.weight (file [128, 783], model [128, 784])"),
        "{e}"
    );
}

#[test]
fn unsupported_ops_and_shape_mismatches_name_the_node_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("m.py");
    std::fs::write(
        &src,
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        y = self.fc(x)\n        return torch.fft.rfft(y)\n",
    )
    .unwrap();
    let (code, _, err) = run(&[src.to_str().unwrap(), "--class", "M", "--input", "x=2,8"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("m.py:12:"), "{err}");
    assert!(err.contains("node `rfft`"), "{err}");
    assert!(err.contains("does not support `torch.fft.rfft`"), "{err}");

    let (code, _, err) = run(&[
        fixture("models/mlp.py").to_str().unwrap(),
        "--entry",
        "SimpleNet()",
        "--input",
        "x=2,100",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("mlp.py:14:"), "{err}");
    // The optimized graph runs by default: fc1 and its relu are one fused node.
    assert!(err.contains("node `fused_linear_act`"), "{err}");
    assert!(
        err.contains("[2, 100]") && err.contains("[128, 784]"),
        "{err}"
    );
    let (code, _, err) = run(&[
        fixture("models/mlp.py").to_str().unwrap(),
        "--entry",
        "SimpleNet()",
        "--input",
        "x=2,100",
        "--no-optimize",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("mlp.py:14:"), "{err}");
    assert!(err.contains("node `fc1`"), "{err}");
}

fn read_outputs(p: &Path) -> Vec<(String, HostTensor)> {
    weights::read_safetensors(p).unwrap()
}

#[test]
fn run_writes_outputs_and_reads_inputs_and_weights() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    let (code, stdout, err) = run(&[
        fixture("models/cnn.py").to_str().unwrap(),
        "--entry",
        "SmallCNN()",
        "--weights",
        fixture("exec/cnn.weights.safetensors").to_str().unwrap(),
        "--inputs",
        fixture("exec/cnn.inputs.safetensors").to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
        "--repeat",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains("output.0: shape [2, 10] float32"),
        "{stdout}"
    );
    assert!(
        stdout.contains("output.1: shape [2, 2048] float32"),
        "{stdout}"
    );
    assert!(stdout.contains("ms per run over 2 run(s)"), "{stdout}");
    let got = read_outputs(&out);
    let want = read_outputs(&fixture("exec/cnn.expected.safetensors"));
    assert_eq!(
        got.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["output.0", "output.1"]
    );
    for ((n, a), (_, b)) in got.iter().zip(&want) {
        let (a, b) = (a.to_f64_vec(), b.to_f64_vec());
        let scale = b.iter().fold(0f64, |m, v| m.max(v.abs()));
        let diff = a
            .iter()
            .zip(&b)
            .fold(0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(diff <= 1e-4 * scale, "{n}: {diff}");
    }
    // An inputs file with a name forward does not take.
    let bad_inputs = dir.path().join("in.safetensors");
    weights::write_safetensors(
        &bad_inputs,
        &[(
            "y".into(),
            HostTensor::F32(ndarray::ArrayD::zeros(vec![2, 3, 32, 32])),
        )],
    )
    .unwrap();
    let (code, _, err) = run(&[
        fixture("models/cnn.py").to_str().unwrap(),
        "--entry",
        "SmallCNN()",
        "--inputs",
        bad_inputs.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("not inputs of forward (x): y"), "{err}");
}

#[test]
fn default_init_is_seeded_and_pytorch_like() {
    let a = mlp_graph(&["x=2,784"]);
    let g = &a.graphs[0];
    let p1 = exec::prepare_params(g, None, 3).unwrap();
    let p2 = exec::prepare_params(g, None, 3).unwrap();
    let p3 = exec::prepare_params(g, None, 4).unwrap();
    let get = |p: &std::collections::HashMap<String, exec::RValue>, k: &str| match &p[k] {
        exec::RValue::F32(t) => (**t).clone(),
        _ => panic!(),
    };
    assert_eq!(get(&p1, "fc1.weight"), get(&p2, "fc1.weight"));
    assert_ne!(get(&p1, "fc1.weight"), get(&p3, "fc1.weight"));
    // kaiming_uniform(a=sqrt(5)) on fan_in 784: U(-1/28, 1/28), std 1/(28*sqrt(3)).
    let w = get(&p1, "fc1.weight");
    let bound = 1.0f64 / 28.0;
    assert!(w.iter().all(|v| (v.abs() as f64) <= bound));
    let n = w.len() as f64;
    let std = (w.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / n).sqrt();
    assert!((std - bound / 3f64.sqrt()).abs() < 0.02 * bound, "{std}");
    // Norms: ones / zeros, running statistics zeros / ones.
    let opts = GraphOptions {
        entry: Some("SmallCNN()".into()),
        inputs: vec!["x=2,3,32,32".parse().unwrap()],
        ..Default::default()
    };
    let a = analyze_file(&fixture("models/cnn.py"), &opts).unwrap();
    let p = exec::prepare_params(&a.graphs[0], None, 0).unwrap();
    assert!(get(&p, "bn1.weight").iter().all(|&v| v == 1.0));
    assert!(get(&p, "bn1.bias").iter().all(|&v| v == 0.0));
    assert!(get(&p, "bn1.running_var").iter().all(|&v| v == 1.0));
    assert!(matches!(
        &p["bn1.num_batches_tracked"],
        exec::RValue::I64(_)
    ));
}

/// The pass pipeline's fused targets (not on this branch yet) run and agree with the
/// unfused graph: the test rewrites nodes by hand the way `fusion.rs` does.
#[test]
fn fused_targets_match_the_unfused_graph() {
    use staticfx::graph::{Arg, Op};
    let opts = GraphOptions {
        entry: Some("SmallCNN()".into()),
        inputs: vec!["x=2,3,32,32".parse().unwrap()],
        ..Default::default()
    };
    let mut a = analyze_file(&fixture("models/cnn.py"), &opts).unwrap();
    let run_opts = RunOptions {
        weights: Some(fixture("exec/cnn.weights.safetensors")),
        inputs_file: Some(fixture("exec/cnn.inputs.safetensors")),
        ..Default::default()
    };
    let plain = exec::run_graph(&a.graphs[0], &run_opts).unwrap();
    let g = &mut std::sync::Arc::make_mut(&mut a.graphs[0]).graph;
    let id = |g: &staticfx::graph::Graph, n: &str| g.by_name(n).unwrap();
    let fuse = |g: &mut staticfx::graph::Graph,
                at: &str,
                target: &str,
                args: Vec<Arg>,
                kwargs: Vec<(&str, Arg)>| {
        let n = id(g, at);
        g.node_mut(n).op = Op::CallFunction;
        g.node_mut(n).target = target.into();
        g.set_inputs(
            n,
            args,
            kwargs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        );
    };
    // conv1 → bn1 → relu  ⇒  conv_bn_act;  conv2 → bn2  ⇒  conv_bn (relu_1 stays).
    let x = id(g, "x");
    fuse(
        g,
        "relu",
        "staticfx.fused.conv_bn_act",
        vec![Arg::Node(x)],
        vec![
            ("conv", Arg::Str("conv1".into())),
            ("bn", Arg::Str("bn1".into())),
            ("act", Arg::Str("relu".into())),
            ("folded", Arg::Bool(true)),
        ],
    );
    let pool = id(g, "pool");
    fuse(
        g,
        "bn2",
        "staticfx.fused.conv_bn",
        vec![Arg::Node(pool)],
        vec![
            ("conv", Arg::Str("conv2".into())),
            ("bn", Arg::Str("bn2".into())),
            ("folded", Arg::Bool(true)),
        ],
    );
    // head.1 (Linear) → head.2 (ReLU)  ⇒  linear_act.
    let h0 = id(g, "head_0");
    fuse(
        g,
        "head_2",
        "staticfx.fused.linear_act",
        vec![Arg::Node(h0)],
        vec![
            ("linear", Arg::Str("head.1".into())),
            ("act", Arg::Str("relu".into())),
        ],
    );
    let fused = exec::run_graph(&a.graphs[0], &run_opts).unwrap();
    for ((n, p), (_, f)) in plain.outputs.iter().zip(&fused.outputs) {
        let (p, f) = (p.to_f64_vec(), f.to_f64_vec());
        let scale = p.iter().fold(0f64, |m, v| m.max(v.abs()));
        let diff = p
            .iter()
            .zip(&f)
            .fold(0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(
            diff <= 1e-5 * scale,
            "{n}: fused differs by {diff} (scale {scale})"
        );
    }
    // An unknown fused activation is an error naming the node.
    fuse(
        &mut std::sync::Arc::make_mut(&mut a.graphs[0]).graph,
        "head_2",
        "staticfx.fused.linear_act",
        vec![Arg::Node(h0)],
        vec![
            ("linear", Arg::Str("head.1".into())),
            ("act", Arg::Str("swish2".into())),
        ],
    );
    let e = exec::run_graph(&a.graphs[0], &run_opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("head_2") && e.contains("swish2"), "{e}");
}

/// Values are moved into their last user and reused in place (ReLU, batch norm, `+`): the
/// caller's inputs and the weights must never change, so runs repeat exactly.
#[test]
fn runs_repeat_exactly_and_leave_inputs_and_weights_alone() {
    let opts = GraphOptions {
        entry: Some("ResidualNet()".into()),
        inputs: vec!["x=2,3,16,16".parse().unwrap()],
        ..Default::default()
    };
    let a = analyze_file(&fixture("models/residual.py"), &opts).unwrap();
    let g = &a.graphs[0];
    let run_opts = RunOptions {
        inputs: opts.inputs.clone(),
        seed: 5,
        ..Default::default()
    };
    let params = exec::prepare_params(g, None, 5).unwrap();
    let params_before: Vec<_> = {
        let mut v: Vec<_> = params
            .iter()
            .map(|(k, v)| (k.clone(), v.to_host()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    let xs = exec::prepare_inputs(g, &run_opts).unwrap();
    let x_before = xs["x"].to_host();
    let program = exec::Program::new(g, params).unwrap();
    let first = program.run(&xs).unwrap().to_host().unwrap();
    let second = program.run(&xs).unwrap().to_host().unwrap();
    assert_eq!(first, second);
    assert_eq!(xs["x"].to_host(), x_before);
    let mut after: Vec<_> = program
        .params()
        .iter()
        .map(|(k, v)| (k.clone(), v.to_host()))
        .collect();
    after.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(after, params_before);
}
