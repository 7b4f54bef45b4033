//! Golden graphs (text format) for our fixtures, per class and instantiated, and the analysis
//! limits reported on broken input. Review snapshot changes by eye: they are the product.

use std::path::PathBuf;

use staticfx::analysis::{analyze_file, FileAnalysis, GraphOptions, InputSpec};

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn analyze(rel: &str, opts: GraphOptions) -> FileAnalysis {
    let path = fixture(rel);
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || analyze_file(&path, &opts).expect("analysis runs"))
        .unwrap()
        .join()
        .expect("no panic")
}

fn text(a: &FileAnalysis) -> String {
    let mut out: String = a
        .graphs
        .iter()
        .map(|g| staticfx::render::text::render(g))
        .collect::<Vec<_>>()
        .join("\n");
    let mut diags: Vec<String> = a
        .diagnostics
        .iter()
        .filter(|d| d.file == a.file)
        .map(|d| {
            let f = a.project.file(d.file);
            let lc = f.lines.line_col(&f.text, d.span.start);
            format!("{}:{}: {} {}", lc.line + 1, lc.col + 1, d.code, d.message)
        })
        .collect();
    diags.sort();
    if !diags.is_empty() {
        out.push_str("\nDiagnostics:\n");
        out.push_str(&diags.join("\n"));
        out.push('\n');
    }
    out
}

macro_rules! per_class {
    ($name:ident, $file:literal) => {
        #[test]
        fn $name() {
            let a = analyze($file, GraphOptions::default());
            insta::assert_snapshot!(text(&a));
        }
    };
}

per_class!(per_class_mlp, "models/mlp.py");
per_class!(per_class_cnn, "models/cnn.py");
per_class!(per_class_residual, "models/residual.py");
per_class!(per_class_attention, "models/attention.py");
per_class!(per_class_transformer_block, "models/transformer_block.py");
per_class!(per_class_sequential, "models/sequential.py");
per_class!(per_class_flags, "models/flags.py");
per_class!(per_class_inheritance, "models/inheritance.py");

#[test]
fn instantiated_resnet_style_block_with_shapes() {
    let opts = GraphOptions {
        entry: Some("ResidualNet()".into()),
        inputs: vec!["x=2x3x32x32".parse::<InputSpec>().unwrap()],
        ..Default::default()
    };
    let a = analyze("models/residual.py", opts);
    assert_eq!(a.graphs.len(), 1, "exactly one graph with --entry");
    insta::assert_snapshot!(text(&a));
}

#[test]
fn class_filter_and_missing_class() {
    let a = analyze(
        "models/mlp.py",
        GraphOptions {
            class: Some("SimpleNet".into()),
            ..Default::default()
        },
    );
    assert_eq!(a.graphs.len(), 1);
    assert_eq!(a.graphs[0].name, "SimpleNet.forward");
    let path = fixture("models/mlp.py");
    let err = analyze_file(
        &path,
        &GraphOptions {
            class: Some("Nope".into()),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("Nope"), "{err}");
}

#[test]
fn syntax_error_reports_location_and_keeps_other_classes() {
    let a = analyze("errors/syntax_error.py", GraphOptions::default());
    let syntax: Vec<_> = a.diagnostics.iter().filter(|d| d.code == "FX901").collect();
    assert!(!syntax.is_empty(), "a syntax error diagnostic");
    let f = a.project.file(a.file);
    let line = f.lines.line_col(&f.text, syntax[0].span.start).line + 1;
    assert!(
        (11..=12).contains(&line),
        "reported near the broken call, got line {line}"
    );
    assert!(
        a.graphs
            .iter()
            .any(|g| g.name == "StillFine.forward" && g.error.is_none()),
        "the intact class still gets its graph"
    );
}

#[test]
fn unknown_names_give_diagnostics_and_opaque_nodes() {
    let a = analyze("errors/unknown_names.py", GraphOptions::default());
    insta::assert_snapshot!(text(&a));
    let g = &a.graphs[0];
    let targets: Vec<&str> = g.graph.nodes().map(|(_, n)| n.target.as_str()).collect();
    assert!(
        targets.contains(&"fc"),
        "known submodule still a call_module: {targets:?}"
    );
    assert!(
        targets.contains(&"block"),
        "unknown submodule stays an opaque call_module: {targets:?}"
    );
}

#[test]
fn unsupported_constructs_and_budgets_do_not_panic() {
    let a = analyze("errors/unsupported.py", GraphOptions::default());
    let mut diags: Vec<String> = a
        .diagnostics
        .iter()
        .filter(|d| d.file == a.file)
        .map(|d| {
            let f = a.project.file(d.file);
            format!(
                "{}: {} {}",
                f.lines.line_col(&f.text, d.span.start).line + 1,
                d.code,
                d.message
            )
        })
        .collect();
    diags.sort();
    insta::assert_snapshot!(diags.join("\n"));
    let looping = a
        .graphs
        .iter()
        .find(|g| g.name == "Looping.forward")
        .unwrap();
    assert!(
        looping.graph.len() <= staticfx::eval::trace::MAX_GRAPH_NODES + 1,
        "the node cap holds"
    );
    assert_eq!(
        looping.graph.node(looping.graph.order[1]).target,
        "layers.?",
        "unknown container items stay opaque submodules"
    );
    let codes: Vec<&str> = a.diagnostics.iter().map(|d| d.code).collect();
    assert!(
        codes.contains(&"FX904"),
        "evaluation budget reported: {codes:?}"
    );
    let rec = a
        .graphs
        .iter()
        .find(|g| g.name == "Recursive.forward")
        .expect("graph for Recursive");
    assert!(
        rec.error.is_some()
            || a.diagnostics
                .iter()
                .any(|d| d.message.contains("inlining stopped") || d.message.contains("depth")),
        "recursion stopped with a message"
    );
}

#[test]
fn corpus_regressions_trace_without_panicking() {
    let a = analyze("errors/corpus_regressions.py", GraphOptions::default());
    assert!(
        a.graphs.iter().all(|g| g.error.is_none()),
        "complete graphs"
    );
    // A constructor that raises builds nothing, as in PyTorch, and says why where it raised.
    let abstract_build = a
        .graphs
        .iter()
        .find(|g| g.class == "AbstractBuild")
        .expect("AbstractBuild analysed");
    assert_eq!(abstract_build.graph.nodes().count(), 0);
    assert!(
        a.diagnostics
            .iter()
            .any(|d| d.code == "FX905" && d.message.contains("NotImplementedError")),
        "{:?}",
        a.diagnostics
    );
    let concrete = analyze(
        "errors/corpus_regressions.py",
        GraphOptions {
            class: Some("CachesOnSelf".into()),
            inputs: vec!["x=2x5x8".parse::<InputSpec>().unwrap()],
            ..Default::default()
        },
    );
    let expand = concrete.graphs[0]
        .graph
        .nodes()
        .find(|(_, n)| n.target == "expand")
        .map(|(_, n)| n.meta.describe())
        .expect("expand node");
    // The buffer replaced in forward has the sequence length in it; eager torch gives
    // [2, 5, 5, 3] for this input.
    assert_eq!(expand, "[2, 5, 5, 3]");
    let partly = a
        .graphs
        .iter()
        .find(|g| g.class == "PartlyBuilt")
        .expect("PartlyBuilt traced");
    let calls: Vec<String> = partly
        .graph
        .nodes()
        .map(|(_, n)| format!("{}:{}", n.op.as_str(), n.target))
        .collect();
    assert_eq!(
        calls,
        vec![
            "placeholder:x",
            "call_module:fc",
            "call_module:head",
            "output:output"
        ],
        "a submodule missing from a partly constructed module is an opaque call_module"
    );
    assert!(
        partly.breaks.iter().all(|b| b.code != "FX190"),
        "our own blind spot is not a possible graph break: {:?}",
        partly.breaks
    );
    let mixed = a
        .graphs
        .iter()
        .find(|g| g.class == "MixedWeights")
        .expect("MixedWeights traced");
    assert!(
        mixed
            .graph
            .nodes()
            .any(|(_, n)| n.target == "torch.conv2d" || n.target.ends_with("functional.conv2d")),
        "conv2d recorded"
    );
}

#[test]
fn first_argument_defaulting_to_none_is_the_traced_input() {
    let a = analyze("errors/optional_inputs.py", GraphOptions::default());
    let g = &a.graphs[0];
    assert!(g.error.is_none(), "{:?}", g.error);
    let ops: Vec<String> = g
        .graph
        .nodes()
        .map(|(_, n)| format!("{}:{}", n.op.as_str(), n.target))
        .collect();
    assert_eq!(
        ops,
        vec![
            "placeholder:input_ids",
            "placeholder:attention_mask",
            "placeholder:inputs_embeds",
            "call_module:embed",
            "call_module:proj",
            "output:output",
        ],
        "input_ids traced, the other inputs keep their None defaults"
    );
}

#[test]
fn bad_entry_expression_is_an_error_not_a_panic() {
    let path = fixture("models/mlp.py");
    for entry in ["SimpleNet(", "NoSuchClass()", "1 + 2"] {
        let opts = GraphOptions {
            entry: Some(entry.into()),
            ..Default::default()
        };
        let p = path.clone();
        let r = std::thread::spawn(move || analyze_file(&p, &opts).map(|_| ()))
            .join()
            .expect("no panic");
        assert!(r.is_err(), "`{entry}` must be rejected");
    }
}

/// DOT output must be valid Graphviz: every fixture's graphs go through the real `dot`.
#[test]
fn dot_output_parses_with_graphviz() {
    let has_dot = std::process::Command::new("dot")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !has_dot {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install graphviz (scripts/test-all.sh does)"
        );
        eprintln!("skipped: graphviz `dot` not installed");
        return;
    }
    let dir = fixture("models");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().map(|e| e != "py").unwrap_or(true) {
            continue;
        }
        let rel = format!("models/{}", path.file_name().unwrap().to_str().unwrap());
        let a = analyze(&rel, GraphOptions::default());
        for g in &a.graphs {
            let dot = staticfx::render::dot::render(g);
            let mut child = std::process::Command::new("dot")
                .arg("-Tsvg")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(dot.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}: dot rejected the graph: {}",
                g.name,
                String::from_utf8_lossy(&out.stderr)
            );
            checked += 1;
        }
    }
    assert!(checked >= 12, "checked {checked} graphs");
}

/// The README's first command (`cargo run --release -- graph examples/…`) runs on the bundled
/// example, read from the README itself so the two cannot drift apart.
#[test]
fn readme_main_command_runs_on_the_bundled_example() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("cargo run --release -- "))
        .expect("the README's main command");
    let args: Vec<&str> = line["cargo run --release -- ".len()..]
        .split_whitespace()
        .collect();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .current_dir(&root)
        .args(&args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "`{line}` failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Graph: SimpleNet.forward"), "{stdout}");
    assert!(
        stdout.contains("fc2: call_module[fc2](relu)  # [1, 10] float32"),
        "{stdout}"
    );
}
