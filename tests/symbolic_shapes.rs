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
