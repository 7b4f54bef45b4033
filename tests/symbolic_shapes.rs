//! Without `--input`, inputs get symbolic sizes where the first layer reading them fixes their
//! rank, and shapes propagate as expressions; with `--input` nothing changes.

use std::path::PathBuf;

use staticfx::analysis::{analyze_file, GraphOptions};

fn shapes(file: &str, entry: &str) -> Vec<(String, String)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/models")
        .join(file);
    let a = analyze_file(
        &path,
        &GraphOptions {
            entry: Some(entry.into()),
            ..Default::default()
        },
    )
    .unwrap();
    a.graphs[0]
        .graph
        .nodes()
        .filter(|(_, n)| n.meta.is_tensor())
        .map(|(_, n)| (n.name.clone(), n.meta.describe()))
        .collect()
}

fn shape_of(s: &[(String, String)], name: &str) -> String {
    s.iter()
        .find(|(n, _)| n == name)
        .map(|(_, d)| d.clone())
        .unwrap_or_else(|| panic!("no tensor node {name}: {s:?}"))
}

#[test]
fn linear_inputs_get_a_symbolic_batch() {
    let s = shapes("mlp.py", "SimpleNet()");
    assert_eq!(shape_of(&s, "x"), "[s0, 784]");
    assert_eq!(shape_of(&s, "fc1"), "[s0, 128]");
    assert_eq!(shape_of(&s, "fc2"), "[s0, 10]");
}

#[test]
fn conv_and_pool_arithmetic_stays_symbolic() {
    let s = shapes("cnn.py", "SmallCNN()");
    assert_eq!(shape_of(&s, "x"), "[s0, 3, s1, s2]");
    assert_eq!(shape_of(&s, "conv1"), "[s0, 16, s1, s2]");
    assert_eq!(shape_of(&s, "pool"), "[s0, 16, s1//2, s2//2]");
    assert_eq!(shape_of(&s, "pool_1"), "[s0, 32, s1//4, s2//4]");
    assert_eq!(shape_of(&s, "flatten"), "[s0, 32*(s1//4)*(s2//4)]");
}

#[test]
fn given_inputs_stay_concrete() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models/mlp.py");
    let a = analyze_file(
        &path,
        &GraphOptions {
            entry: Some("SimpleNet()".into()),
            inputs: vec!["x=2x784".parse().unwrap()],
            ..Default::default()
        },
    )
    .unwrap();
    let fc1 = a.graphs[0].graph.by_name("fc1").unwrap();
    assert_eq!(a.graphs[0].graph.node(fc1).meta.describe(), "[2, 128]");
}

/// Rotary embeddings through complex numbers (diffusers' Qwen-Image, Z-Image, AnyFlow): the
/// constructor's `torch.polar` table, `view_as_complex`/`view_as_real`, `.real`, `abs`, a
/// `[1] * x.ndim` broadcast shape, `torch.pi` and `pad_sequence`, each as eager torch 2.15 gives
/// them for these inputs.
#[test]
fn complex_rotary_embeddings_keep_their_shapes() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models/complex_rope.py");
    let a = analyze_file(
        &path,
        &GraphOptions {
            entry: Some("ComplexRope()".into()),
            inputs: vec!["x=2x5x3x8".parse().unwrap(), "y=4x6".parse().unwrap()],
            ..Default::default()
        },
    )
    .unwrap();
    let g = &a.graphs[0].graph;
    let meta = |name: &str| {
        let m = &g.node(g.by_name(name).unwrap()).meta;
        format!("{} {}", m.describe(), m.as_tensor().unwrap().dtype.as_str())
    };
    for (name, want) in [
        ("_tensor_constant0", "[64, 4] complex64"),
        ("view_as_complex", "[2, 5, 3, 4] complex64"),
        ("mul", "[2, 5, 3, 4] complex64"),
        ("view_as_real", "[2, 5, 3, 4, 2] float32"),
        ("view", "[1, 5, 1, 1] float32"),
        ("mul_1", "[1, 5, 1, 1] float32"),
        ("pad_sequence", "[2, 4, 6] float32"),
        ("proj", "[2, 5, 3, 8] float32"),
        ("getattr_5", "[2, 5, 3, 4] float32"),
        ("abs_1", "[2, 5, 3, 4] float32"),
    ] {
        assert_eq!(meta(name), want, "{name}");
    }
}
