//! Forward inputs that are not tensors (issue 42 item 3): `--input NAME=VALUE` with a Python
//! expression on `graph` and `run`, and the same values from `[tool.staticfx] example-inputs`
//! on `check`. A Python value must reach forward as a caller's argument does (a flag picks the
//! return path, an int unrolls a loop, a list iterates), a tensor an expression makes must be
//! an input of the graph, and a VALUE that reads both ways is settled by forward's signature.
//! The fixtures are `tests/fixtures/inputs/python_inputs.py`.

mod corpus_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/inputs/python_inputs.py")
}

/// Runs the binary with `args`: (exit code, stdout, stderr).
fn staticfx(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The JSON graph of `class` of the fixture with these inputs.
fn graph(class: &str, inputs: &[&str]) -> Value {
    let file = fixture();
    let mut args = vec![
        "graph",
        file.to_str().unwrap(),
        "--class",
        class,
        "--format",
        "json",
    ];
    for i in inputs {
        args.extend(["--input", i]);
    }
    let (code, out, err) = staticfx(&args);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["graphs"][0].clone()
}

fn nodes(g: &Value) -> Vec<&Value> {
    g["nodes"].as_array().unwrap().iter().collect()
}

/// `name op target` of every node.
fn listing(g: &Value) -> Vec<String> {
    nodes(g)
        .iter()
        .map(|n| {
            format!(
                "{} {} {}",
                n["name"].as_str().unwrap(),
                n["op"].as_str().unwrap(),
                n["target"].as_str().unwrap()
            )
        })
        .collect()
}

fn node<'a>(g: &'a Value, name: &str) -> &'a Value {
    nodes(g)
        .into_iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no node `{name}` in {:?}", listing(g)))
}

#[test]
fn a_flag_picks_the_return_path_it_names() {
    let default = graph("ReturnPaths", &["x=2x8"]);
    assert_eq!(
        listing(&default),
        [
            "x placeholder x",
            "return_dict placeholder return_dict",
            "proj call_module proj",
            "relu call_function torch.relu",
            "output output output"
        ]
    );
    let tuple = graph("ReturnPaths", &["x=2x8", "return_dict=False"]);
    assert_eq!(
        listing(&tuple),
        [
            "x placeholder x",
            "return_dict placeholder return_dict",
            "proj call_module proj",
            "output output output"
        ]
    );
    // the parameter keeps its placeholder, with the value given as a default's would be
    assert_eq!(
        node(&tuple, "return_dict")["args"],
        serde_json::json!([false])
    );
    assert_eq!(
        node(&default, "return_dict")["args"],
        serde_json::json!([true])
    );
    // decided while tracing: no data-dependent branch
    assert_eq!(tuple["graph_breaks"], serde_json::json!([]), "{tuple:#}");
    assert_eq!(tuple["error"], Value::Null, "{tuple:#}");
    // passing the default explicitly is the default's graph
    let explicit = graph("ReturnPaths", &["x=2x8", "return_dict=True"]);
    assert_eq!(listing(&explicit), listing(&default));
}

#[test]
fn an_int_annotated_argument_unrolls_its_loop() {
    let g = graph("Steps", &["x=2x8", "steps=3"]);
    assert_eq!(
        listing(&g),
        [
            "x placeholder x",
            "steps placeholder steps",
            "block call_module block",
            "block_1 call_module block",
            "block_2 call_module block",
            "output output output"
        ]
    );
    assert_eq!(node(&g, "steps")["args"], serde_json::json!([3]));
    assert_eq!(node(&g, "block_2")["shape"], serde_json::json!([2, 8]));
    // through --entry as well, where an input's failure is fatal
    let file = fixture();
    let (code, out, err) = staticfx(&[
        "graph",
        file.to_str().unwrap(),
        "--entry",
        "Steps()",
        "--input",
        "x=2x8",
        "--input",
        "steps=2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("block_1: call_module[block]"), "{out}");
    assert!(!out.contains("block_2"), "{out}");
}

#[test]
fn an_unannotated_argument_keeps_the_shape_reading() {
    let g = graph("Untyped", &["x=2x5", "steps=5"]);
    let steps = node(&g, "steps");
    assert_eq!(steps["shape"], serde_json::json!([5]));
    assert_eq!(steps["args"], serde_json::json!([]));
    assert!(
        listing(&g).contains(&"sum_1 call_method sum".to_string()),
        "{:?}",
        listing(&g)
    );
}

/// `4,2` reads as a 4×2 tensor or the tuple `(4, 2)`: the tuple for `size: tuple[int, int]`,
/// the tensor for the unannotated `x`; a str-defaulted `mode` takes a Python str.
#[test]
fn a_pair_annotated_argument_takes_the_tuple() {
    let grid = graph("Resized", &["x=4,2", "size=4,2", "mode='grid'"]);
    assert_eq!(node(&grid, "x")["shape"], serde_json::json!([4, 2]));
    assert_eq!(node(&grid, "size")["args"], serde_json::json!([[4, 2]]));
    assert_eq!(node(&grid, "mode")["args"], serde_json::json!(["grid"]));
    let reshape = node(&grid, "reshape");
    assert_eq!(reshape["args"], serde_json::json!([{"node": "x"}, [4, 2]]));
    assert_eq!(reshape["shape"], serde_json::json!([4, 2]));
    let flat = graph("Resized", &["x=4,2", "size=4,2"]);
    assert_eq!(node(&flat, "reshape")["shape"], serde_json::json!([8]));
}

#[test]
fn a_list_of_tuples_iterates() {
    let g = graph("Shapes", &["x=2x8", "img_shapes=[(1, 4, 4), (2, 2, 2)]"]);
    let muls: Vec<&Value> = nodes(&g)
        .into_iter()
        .filter(|n| n["target"] == "operator.mul")
        .collect();
    assert_eq!(muls.len(), 2, "{:?}", listing(&g));
    assert_eq!(muls[0]["args"][1], 16);
    assert_eq!(muls[1]["args"][1], 8);
    assert_eq!(
        node(&g, "img_shapes")["args"],
        serde_json::json!([[[1, 4, 4], [2, 2, 2]]])
    );
}

#[test]
fn a_tensor_in_a_dict_is_a_placeholder_numbered_as_torch_fx_numbers_leaves() {
    // the tensor is the dict's second leaf: `added_cond_kwargs_2`
    let g = graph(
        "Conditioned",
        &[
            "sample=2x16",
            "added_cond_kwargs={'scale': 0.5, 'text_embeds': torch.randn(2, 8)}",
        ],
    );
    assert_eq!(
        listing(&g),
        [
            "sample placeholder sample",
            "added_cond_kwargs_2 placeholder added_cond_kwargs_2",
            "text call_module text",
            "mul call_function operator.mul",
            "add call_function operator.add",
            "output output output"
        ]
    );
    let leaf = node(&g, "added_cond_kwargs_2");
    assert_eq!(leaf["shape"], serde_json::json!([2, 8]));
    assert_eq!(
        leaf["args"],
        serde_json::json!([]),
        "an input, not a constant"
    );
    assert_eq!(
        node(&g, "text")["args"],
        serde_json::json!([{"node": "added_cond_kwargs_2"}])
    );
    assert_eq!(node(&g, "mul")["args"][1], 0.5);
    assert_eq!(node(&g, "output")["shape"], serde_json::json!([2, 16]));
}

#[test]
fn a_tensor_expression_is_the_input_the_shape_shorthand_gives() {
    let shorthand = graph("Steps", &["x=3x8", "steps=1"]);
    let expression = graph("Steps", &["x=torch.randn(3, 8)", "steps=1"]);
    assert_eq!(listing(&expression), listing(&shorthand));
    assert_eq!(node(&expression, "x")["shape"], serde_json::json!([3, 8]));
    let long = graph(
        "Untyped",
        &["x=torch.zeros(2, 3, dtype=torch.long)", "steps=3"],
    );
    assert_eq!(node(&long, "x")["dtype"], "int64");
    assert_eq!(node(&long, "x")["shape"], serde_json::json!([2, 3]));
}

#[test]
fn a_bad_expression_is_an_error_naming_the_argument() {
    let file = fixture();
    let file = file.to_str().unwrap();
    // does not parse: a usage error before anything runs
    let (code, _, err) = staticfx(&["graph", file, "--input", "x=torch.randn(2, 8"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("input `x`: `torch.randn(2, 8` is neither a shape"),
        "{err}"
    );
    // parses but cannot be evaluated: fatal with --entry ...
    let (code, _, err) = staticfx(&[
        "graph",
        file,
        "--entry",
        "Steps()",
        "--input",
        "x=2x8",
        "--input",
        "steps=undefined_count(3)",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("input `steps`: `undefined_count(3)` cannot be evaluated: name `undefined_count` is not defined"),
        "{err}"
    );
    // ... and per class the class's FX906, at forward, never a silent constant
    let (code, _, err) = staticfx(&[
        "graph",
        file,
        "--class",
        "Conditioned",
        "--input",
        "added_cond_kwargs={'text_embeds': torch.not_a_factory(2, 8)}",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("python_inputs.py:58:5: FX906 input `added_cond_kwargs`: `{'text_embeds': torch.not_a_factory(2, 8)}` has a value the analyser does not know"),
        "{err}"
    );
}

#[test]
fn run_passes_python_values_and_draws_tensor_inputs_from_the_seed() {
    let file = fixture();
    let run = |seed: &str| {
        let (code, out, err) = staticfx(&[
            "run",
            file.to_str().unwrap(),
            "--class",
            "Conditioned",
            "--input",
            "sample=2x16",
            "--input",
            "added_cond_kwargs={'text_embeds': torch.randn(2, 8), 'scale': 0.5}",
            "--seed",
            seed,
        ]);
        assert_eq!(code, 0, "{err}");
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with("output:"))
            .unwrap_or_else(|| panic!("{out}"))
            .to_string();
        assert!(line.contains("shape [2, 16] float32"), "{line}");
        line
    };
    assert_eq!(run("1"), run("1"));
    assert_ne!(run("1"), run("2"));
    let (code, out, err) = staticfx(&[
        "run",
        file.to_str().unwrap(),
        "--class",
        "Steps",
        "--input",
        "x=2x8",
        "--input",
        "steps=4",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("shape [2, 8] float32"), "{out}");
}

/// `[tool.staticfx] example-inputs` reads its strings as `--input` does and TOML's own values
/// as the Python values: `check` shows the guard each one gets.
#[test]
fn example_inputs_from_pyproject_take_python_values() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(), dir.path().join("m.py")).unwrap();
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[tool.staticfx]\nexample-inputs = { \"ReturnPaths\" = { x = \"2x8\", return_dict = false }, \
         \"Steps\" = { x = [2, 8], steps = 3 }, \"Shapes\" = { x = \"2x8\", img_shapes = [[1, 4, 4]] } }\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .current_dir(dir.path())
        .args(["check", "m.py"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(text.contains("`return_dict == False`"), "{text}{err}");
    assert!(text.contains("`steps == 3`"), "{text}{err}");
    assert!(!text.contains("FX101"), "{text}");
    assert!(!text.contains("FX906"), "{text}");
}

/// diffusers' own compile tests call forward with `return_dict=False`, a timestep tensor made
/// by an expression and, for QwenImage, a list of tuples: from their test configs (diffusers'
/// tests/models/transformers), both models trace to their return with no graph break, as
/// Dynamo compiles them with `fullgraph=True`. Needs `$STATICFX_DIFFUSERS_ROOT` and
/// `$STATICFX_USER_VENV`; skips with a note without them.
#[test]
fn diffusers_models_take_their_compile_tests_inputs() {
    let Some(root) = corpus_support::corpus_root("STATICFX_DIFFUSERS_ROOT", "diffusers") else {
        return;
    };
    let Some(venv) = std::env::var_os("STATICFX_USER_VENV") else {
        eprintln!(
            "skipped: set STATICFX_USER_VENV to a venv with huggingface_hub and transformers"
        );
        return;
    };
    let models = root.join("diffusers/models/transformers");
    let trace = |file: &str, entry: &str, inputs: &[&str]| -> Value {
        let file = models.join(file);
        let mut args = vec![
            "graph",
            file.to_str().unwrap(),
            "--root",
            root.to_str().unwrap(),
            "--python",
            venv.to_str().unwrap(),
            "--entry",
            entry,
            "--format",
            "json",
        ];
        for i in inputs {
            args.extend(["--input", i]);
        }
        let (code, out, err) = staticfx(&args);
        assert_eq!(code, 0, "{err}");
        let g = serde_json::from_str::<Value>(&out).unwrap()["graphs"][0].clone();
        assert_eq!(g["error"], Value::Null, "{entry}: {err}");
        assert_eq!(g["graph_breaks"], serde_json::json!([]), "{entry}");
        g
    };
    let output = |g: &Value| nodes(g).last().unwrap()["args"].clone();

    let flux = "FluxTransformer2DModel(patch_size=1, in_channels=4, num_layers=1, \
                num_single_layers=1, attention_head_dim=16, num_attention_heads=2, \
                joint_attention_dim=32, pooled_projection_dim=32, axes_dims_rope=[4, 4, 8])";
    let flux_inputs = [
        "hidden_states=1x16x4",
        "encoder_hidden_states=1x48x32",
        "pooled_projections=1x32",
        "timestep=torch.tensor([1.0]).expand(1)",
        "img_ids=16x3",
        "txt_ids=48x3",
    ];
    let as_dict = trace("transformer_flux.py", flux, &flux_inputs);
    let as_tuple = trace(
        "transformer_flux.py",
        flux,
        &[&flux_inputs[..], &["return_dict=False"]].concat(),
    );
    // `Transformer2DModelOutput(sample=output)` against `(output,)`, from the same nodes
    assert_eq!(
        output(&as_dict),
        serde_json::json!([[["sample", {"node": "proj_out"}]]])
    );
    assert_eq!(
        output(&as_tuple),
        serde_json::json!([[{"node": "proj_out"}]])
    );
    assert_eq!(nodes(&as_dict).len(), nodes(&as_tuple).len());
    assert_eq!(node(&as_tuple, "timestep")["shape"], serde_json::json!([1]));

    let qwen = trace(
        "transformer_qwenimage.py",
        "QwenImageTransformer2DModel(patch_size=2, in_channels=16, out_channels=4, num_layers=2, \
         attention_head_dim=16, num_attention_heads=3, joint_attention_dim=16, \
         guidance_embeds=False, axes_dims_rope=(8, 4, 4))",
        &[
            "hidden_states=1x16x16",
            "encoder_hidden_states=1x8x16",
            "encoder_hidden_states_mask=torch.ones((1, 8))",
            "timestep=torch.tensor([1.0]).expand(1)",
            "img_shapes=[(1, 4, 4)]",
            "return_dict=False",
        ],
    );
    assert_eq!(output(&qwen), serde_json::json!([[{"node": "proj_out"}]]));
    // both blocks of `num_layers=2` ran, and only they
    let blocks = |prefix: &str| {
        nodes(&qwen)
            .iter()
            .any(|n| n["target"].as_str().unwrap().starts_with(prefix))
    };
    assert!(blocks("transformer_blocks.1."));
    assert!(!blocks("transformer_blocks.2."));
    assert_eq!(
        node(&qwen, "img_shapes")["args"],
        serde_json::json!([[[1, 4, 4]]])
    );
}
