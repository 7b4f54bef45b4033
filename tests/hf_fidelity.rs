//! transformers models built by staticfx from transformers' own source against eager PyTorch.
//!
//! torch.fx cannot trace these models, so the reference is an eager recording of
//! `model(**inputs)` in eval mode with the config's defaults (sdpa attention), made by
//! `scripts/expect/gen_hf_recordings.py` (the cases are `scripts/expect/hf_cases.json`, the
//! recordings `tests/expected/hf/<id>.json`). Each case is built with staticfx's entry,
//! `XForCausalLM(XConfig(...))` evaluated in its modeling file, with the recording's concrete
//! input shapes as example inputs (so every dim is a number, as in the recording), and must
//! agree three ways:
//! - the torch.nn leaf-module calls (`call_module` nodes), in order, by qualified name and
//!   output shape, are equal;
//! - the model output's tensor fields, in order, have the recorded shapes;
//! - the tensor operations outside leaf modules agree by longest common subsequence of their
//!   names, at least 95% of the longer sequence. A node counts as a tensor operation when it
//!   has a tensor shape (shape arithmetic on Python ints is not one in eager), its name is the
//!   last part of its target (`torch.rsqrt` and the method `rsqrt` are `rsqrt`); attribute
//!   reads (`getattr`) are not operations; an op returning several tensors (`chunk`) is one,
//!   and the `getitem`s torch.fx unpacks its tuple with are not.
//!
//! Where model code branches on `torch.compiler.is_compiling()`, staticfx takes Dynamo's side,
//! and so does the recording: it runs the forward with that predicate patched to True (see the
//! script's docstring), so the attention-mask helpers build the 4-d mask instead of taking
//! their data-dependent `torch.all(mask == 1)` exits, and 5.x's mixture-of-experts dispatch
//! calls the custom op `transformers::grouped_mm_fallback` (float32 weights), as under Dynamo.
//! `STATICFX_HF_DIFF=mixtral,olmoe` (or `all`) prints those cases' op sequences aligned.
//!
//! The transformers source is read from `$STATICFX_TRANSFORMERS_ROOT` (the directory holding
//! `transformers/`; `scripts/test-all.sh` unzips the wheel there), and for the 4.x line from
//! `$STATICFX_TRANSFORMERS4_ROOT` against its own recordings (`tests/expected/hf-4.57.1`);
//! huggingface_hub (which the configs import) from the venv `$STATICFX_USER_VENV` (default
//! `target/test-data/user-venv`). A test is skipped with a note when either is absent. The
//! cases in [`HF_AGREE`] and [`HF4_AGREE`] are asserted; the others print their status. `STATICFX_HF_ONLY=gpt2,opt` builds only those
//! cases, and `STATICFX_HF_DIFF=gpt2` (or `all`) prints where their leaf calls first differ
//! and the two op sequences as a diff.
//!
//! Op names are compared by `op_family`: a node's target names a Python operator where eager
//! sees the tensor method it dispatches to (`a / b` is `div`), and torch.fx records `a += b`
//! as `add` where eager runs the in-place `add_`.

mod corpus_support;
mod input_specs;
mod shape_tally;

use input_specs::inputs_of;
use shape_tally::Tally;
use std::path::{Path, PathBuf};

use serde_json::Value;
use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};
use staticfx::semantic::environment::{DiscoveryRequest, EnvironmentHandle};

/// The architectures that agree on all three counts.
const HF_AGREE: &[&str] = &[
    "llama",
    "qwen2",
    "qwen3",
    "phi",
    "phi3",
    "starcoder2",
    "olmo",
    "gpt_neox",
    "falcon",
    "bert",
    "roberta",
    "distilbert",
    "electra",
    "albert",
    "vit",
    "deit",
    // dense decoders
    "gpt2",
    "opt",
    "gemma",
    "gemma2",
    "gpt_neo",
    "bloom",
    "gptj",
    "codegen",
    "gpt_bigcode",
    "olmo2",
    "granite",
    "cohere",
    "stablelm",
    "helium",
    "glm",
    "glm4",
    "smollm3",
    "nemotron",
    "persimmon",
    "xglm",
    // encoders
    "xlm_roberta",
    "camembert",
    "ernie",
    "mpnet",
    "deberta",
    "deberta_v2",
    "mobilebert",
    "layoutlm",
    // encoder-decoder
    "t5",
    "t5_seq2seq",
    "bart",
    "mbart",
    "pegasus",
    "marian",
    "blenderbot_small",
    // vision
    "convnext",
    "swin",
    "dinov2",
    "beit",
    "vit_msn",
    "yolos",
    "convnextv2",
    "resnet",
    "regnet",
    "poolformer",
    "segformer",
    // sliding-window cache layers, and mixture of experts (grouped_mm dispatch)
    "mistral",
    "mixtral",
    "qwen2_moe",
    "olmoe",
    "qwen3_moe",
    "granitemoe",
    // agree since the recordings take Dynamo's side of `is_compiling()`
    "biogpt",
    "megatron_bert",
    "roformer",
    "phimoe",
    "convbert",
    "squeezebert",
];

/// The architectures that agree on all three counts with transformers 4.57.1.
const HF4_AGREE: &[&str] = &[
    "phi",
    "gpt_neo",
    "bloom",
    "xglm",
    "electra",
    "ernie",
    "megatron_bert",
    "mpnet",
    "mobilebert",
    "layoutlm",
    "vit",
    "deit",
    "convnext",
    "swin",
    "dinov2",
    "yolos",
    "convnextv2",
    "poolformer",
    "segformer",
    "roformer",
    "deberta",
    "vit_msn",
    "resnet",
    "regnet",
    // agree since the recordings take Dynamo's side of `is_compiling()`
    "llama",
    "qwen2",
    "qwen3",
    "gemma",
    "phi3",
    "gpt2",
    "opt",
    "falcon",
    "gpt_neox",
    "starcoder2",
    "olmo",
    "olmo2",
    "granite",
    "cohere",
    "stablelm",
    "helium",
    "glm",
    "glm4",
    "smollm3",
    "nemotron",
    "persimmon",
    "biogpt",
    "bert",
    "roberta",
    "distilbert",
    "xlm_roberta",
    "camembert",
    "bart",
    "mbart",
    "pegasus",
    "marian",
    "blenderbot_small",
    // agree since: imports of missing packages raise, set.update, einsum/gather shapes,
    // nn leaves built in forward, tuple-of-int arithmetic not counted as an op, operands by
    // keyword, torch.multiply, torch.nn methods called unbound on a subclass instance
    "gptj",
    "codegen",
    "t5",
    "t5_seq2seq",
    "beit",
    "albert",
    "convbert",
    "squeezebert",
    // `@torch.jit.script` functions recorded as Dynamo runs them (inlined Python)
    "deberta_v2",
];

/// Shapes staticfx shows that differ from the recording with transformers 5.x, (case, node as
/// the tally names it). Each is a bug to fix, and then to take out of this list: the test holds
/// the list exactly, so it cannot grow.
const HF_KNOWN_WRONG: &[(&str, &str)] = &[];

/// The same for transformers 4.57.1.
const HF4_KNOWN_WRONG: &[(&str, &str)] = &[];

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn transformers_root(var: &str) -> Option<PathBuf> {
    let root = corpus_support::corpus_root(var, "transformers")?;
    root.join("transformers/modeling_utils.py")
        .is_file()
        .then_some(root)
}

fn user_venv() -> Option<PathBuf> {
    let dir = std::env::var_os("STATICFX_USER_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("target/test-data/user-venv"));
    let ok = dir.join("pyvenv.cfg").is_file();
    if !ok {
        eprintln!(
            "skipped: no venv at {} with huggingface_hub (scripts/test-all.sh builds it)",
            dir.display()
        );
    }
    ok.then_some(dir)
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// What one build gave, next to the recording.
struct Outcome {
    leaves: Vec<(String, Value)>,
    output: Vec<Value>,
    ops: Vec<String>,
    /// The output shape of each of `ops`, for the diff `STATICFX_HF_DIFF` prints.
    op_shapes: Vec<Value>,
}

fn build(root: &Path, venv: &Path, case: &Value) -> Result<Outcome, String> {
    let file = root
        .join("transformers")
        .join(case["file"].as_str().unwrap());
    let entry = case["entry"].as_str().unwrap();
    build_entry(root, &file, entry, inputs_of(&case["inputs"]), venv)
}

/// The options that build `entry` in a file under `root`, with the venv's packages.
fn entry_options(root: &Path, entry: &str, inputs: Vec<InputSpec>, venv: &Path) -> GraphOptions {
    let env = EnvironmentHandle::lazy(DiscoveryRequest {
        python: Some(venv.to_path_buf()),
        root: root.to_path_buf(),
        virtual_env: None,
        path_var: None,
    });
    GraphOptions {
        root: Some(root.to_path_buf()),
        entry: Some(entry.to_string()),
        inputs,
        environment: Some(env),
        ..Default::default()
    }
}

/// The graphs `opts` build from `file`, as `staticfx graph --format json` prints them.
fn graph_json(file: &Path, opts: &GraphOptions) -> Result<Value, String> {
    let a = analyze_file(file, opts).map_err(|e| e.to_string())?;
    if let Some(e) = &a.graphs[0].error {
        return Err(e.message.clone());
    }
    // the recording ran the model eagerly: a call staticfx says will raise (FX3xx) is ours
    let raises: Vec<String> = a
        .graphs
        .iter()
        .flat_map(|g| g.breaks.iter().filter(|f| f.rule.raises()))
        .map(|f| format!("line {}: {} {}", f.line, f.rule.code(), f.message))
        .collect();
    if !raises.is_empty() {
        return Err(format!("FX3xx in a model that runs: {raises:?}"));
    }
    Ok(serde_json::from_str(&staticfx::render::json::render(&a.project, &a.graphs)).unwrap())
}

fn build_entry(
    root: &Path,
    file: &Path,
    entry: &str,
    inputs: Vec<InputSpec>,
    venv: &Path,
) -> Result<Outcome, String> {
    let json = graph_json(file, &entry_options(root, entry, inputs, venv))?;
    let nodes = json["graphs"][0]["nodes"].as_array().unwrap().clone();
    let mut leaves = Vec::new();
    let mut ops = Vec::new();
    let mut op_shapes = Vec::new();
    let mut output = Vec::new();
    let shapes: std::collections::HashMap<String, Value> = nodes
        .iter()
        .map(|n| (n["name"].as_str().unwrap().to_string(), n["shape"].clone()))
        .collect();
    // An op that returns several tensors (`chunk`, `split`) is one operation; the `getitem`s
    // that unpack its tuple are not operations in eager.
    let is_call = |n: &Value| matches!(n["op"].as_str(), Some("call_function" | "call_method"));
    let by_name: std::collections::HashMap<&str, &Value> = nodes
        .iter()
        .map(|n| (n["name"].as_str().unwrap_or(""), n))
        .collect();
    let unpacked = |n: &Value| -> Option<String> {
        if n["target"] != "operator.getitem" {
            return None;
        }
        let src = n["args"][0]["node"].as_str()?;
        let src = by_name.get(src)?;
        // Shape arithmetic (`x.shape[:-1]`, `x.size()[0]`) unpacks sizes, not tensors.
        let shape_access = matches!(
            src["target"].as_str(),
            Some("builtins.getattr" | "operator.getitem" | "size")
        );
        // A tuple of tensors is unpacked into tensors; `x.size()[:-2] + (h,)` is a tuple of
        // ints, shape arithmetic, whose items have no tensor shape.
        (is_call(src) && !shape_access && !src["shape"].is_array() && n["shape"].is_array())
            .then(|| src["name"].as_str().unwrap().to_string())
    };
    let tuple_producers: std::collections::HashSet<String> =
        nodes.iter().filter_map(unpacked).collect();
    for n in &nodes {
        let target = n["target"].as_str().unwrap_or("");
        let node_name = n["name"].as_str().unwrap_or("");
        match n["op"].as_str().unwrap_or("") {
            "call_module" => leaves.push((target.to_string(), n["shape"].clone())),
            "call_function" | "call_method"
                if tuple_producers.contains(node_name)
                    || (n["shape"].is_array() && unpacked(n).is_none()) =>
            {
                let name = eager_name(target);
                if name != "getattr" {
                    ops.push(op_family(&name).to_string());
                    op_shapes.push(n["shape"].clone());
                }
            }
            "output" => {
                // `((key, node), ...)` for a ModelOutput, a node or a tuple of nodes otherwise.
                let mut refs = Vec::new();
                collect_refs(&n["args"], &mut refs);
                output = refs
                    .iter()
                    .map(|r| shapes.get(r).cloned().unwrap_or(Value::Null))
                    .filter(|s| s.is_array())
                    .collect();
            }
            _ => {}
        }
    }
    Ok(Outcome {
        leaves,
        output,
        ops,
        op_shapes,
    })
}

/// The name eager PyTorch's `TorchFunctionMode` sees for a node's target, before
/// [`op_family`]: the last part of it, except `a % b`, which runs `Tensor.remainder`, and
/// torch.linalg's functions, builtins named `linalg_vector_norm`.
fn eager_name(target: &str) -> String {
    match target {
        "operator.mod" => "remainder".to_string(),
        _ if target.starts_with("torch.linalg.") => {
            format!("linalg_{}", &target["torch.linalg.".len()..])
        }
        _ => target.rsplit('.').next().unwrap_or(target).to_string(),
    }
}

/// One name for the spellings of one operation on the two sides. Eager reports `a / b` as
/// torch's `div` (and `2 / a` as `rdiv`), torch.fx as `operator.truediv`; an augmented
/// assignment `a += b` runs the in-place `add_` in eager, while on a torch.fx proxy, which has
/// no in-place operators, it is `operator.add`; `a & b` is `__and__` in eager and
/// `operator.and_` in torch.fx.
fn op_family(name: &str) -> &str {
    match name {
        "truediv" | "rdiv" | "div_" | "itruediv" => "div",
        "add_" | "iadd" => "add",
        "sub_" | "isub" => "sub",
        "mul_" | "imul" => "mul",
        // `operator.and_` is `a & b`, which eager reports as `__and__`.
        "and_" | "iand" => "and",
        "or_" | "ior" => "or",
        n => n,
    }
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if m.contains_key("node") => {
            out.push(m["node"].as_str().unwrap_or("").to_string())
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

fn lcs(a: &[String], b: &[String]) -> usize {
    let mut row = vec![0usize; b.len() + 1];
    for x in a {
        let mut diag = 0;
        for (j, y) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = if x == y { diag + 1 } else { up.max(row[j]) };
            diag = up;
        }
    }
    row[b.len()]
}

/// The pairs `(i, j)` of a longest common subsequence of the names `a` and `b`, in order.
/// Where several are equally long (the same op name in a loop the other side does not have),
/// the one that pairs the most equal `shapes` (`a`'s and `b`'s) is taken: the op order alone
/// does not say which of them corresponds.
fn lcs_pairs(a: &[String], b: &[String], shapes: (&[Value], &[Value])) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    // A pair is worth more than all the equal shapes together.
    let pair = (n + m + 1) as u64;
    let worth = |i: usize, j: usize| pair + u64::from(shapes.0[i] == shapes.1[j]);
    // best[i][j]: the best worth of a[i..] against b[j..].
    let mut best = vec![vec![0u64; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let skip = best[i + 1][j].max(best[i][j + 1]);
            best[i][j] = if a[i] == b[j] {
                skip.max(worth(i, j) + best[i + 1][j + 1])
            } else {
                skip
            };
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j] && best[i][j] == worth(i, j) + best[i + 1][j + 1] {
            pairs.push((i, j));
            (i, j) = (i + 1, j + 1);
        } else if best[i + 1][j] == best[i][j] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

#[test]
fn lcs_pairs_prefer_equal_shapes_among_equally_long_alignments() {
    let names = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    let shapes = |v: &[i64]| {
        v.iter()
            .map(|&d| serde_json::json!([d]))
            .collect::<Vec<_>>()
    };
    // The recording runs `reshape` in a loop staticfx's graph does not have; staticfx's one
    // reshape is the one after the loop.
    let a = names("zeros reshape silu reshape silu reshape add");
    let b = names("zeros reshape add");
    let sa = shapes(&[16, 9, 9, 6, 6, 32, 32]);
    let sb = shapes(&[16, 32, 32]);
    assert_eq!(lcs_pairs(&a, &b, (&sa, &sb)), vec![(0, 0), (5, 1), (6, 2)]);
    // The pairs are a longest common subsequence first.
    let b = names("reshape silu add");
    let sb = shapes(&[32, 1, 32]);
    assert_eq!(lcs_pairs(&a, &b, (&sa, &sb)).len(), 3);
}

/// The shapes of one case against the recording: the leaf-module calls aligned by qualified
/// name, and the ops as [`compare`] aligns them (a longest common subsequence of their names;
/// [`lcs_pairs`] says which of equally long ones), each pair compared by output shape.
fn tally_shapes(id: &str, recorded: &Value, got: &Outcome, tally: &mut Tally) {
    let none = Value::Null;
    let want_leaves = recorded["leaves"].as_array().unwrap();
    let want_names: Vec<String> = want_leaves
        .iter()
        .map(|l| l["name"].as_str().unwrap().to_string())
        .collect();
    let got_names: Vec<String> = got.leaves.iter().map(|(n, _)| n.clone()).collect();
    let want_shapes: Vec<Value> = want_leaves.iter().map(|l| l["shape"].clone()).collect();
    let got_shapes: Vec<Value> = got.leaves.iter().map(|(_, s)| s.clone()).collect();
    for (i, j) in lcs_pairs(&want_names, &got_names, (&want_shapes, &got_shapes)) {
        let node = format!("leaf #{i} {}", want_names[i]);
        tally.add(
            id,
            &node,
            &want_leaves[i]["shape"],
            &none,
            &got.leaves[j].1,
            &none,
        );
    }
    let want_ops = recorded["ops"].as_array().unwrap();
    let want_names: Vec<String> = want_ops
        .iter()
        .map(|o| op_family(o["op"].as_str().unwrap()).to_string())
        .collect();
    let want_shapes: Vec<Value> = want_ops.iter().map(|o| o["shape"].clone()).collect();
    for (i, j) in lcs_pairs(&want_names, &got.ops, (&want_shapes, &got.op_shapes)) {
        let node = format!("op #{i} {}", want_names[i]);
        tally.add(
            id,
            &node,
            &want_ops[i]["shape"],
            &none,
            &got.op_shapes[j],
            &none,
        );
    }
}

/// With `STATICFX_HF_DIFF` naming the case (or `all`): where the leaf calls first differ, the
/// outputs, and the op sequences aligned ([`op_diff`]).
fn print_diff(id: &str, recorded: &Value, got: &Outcome) {
    let wanted = std::env::var("STATICFX_HF_DIFF").unwrap_or_default();
    if !(wanted == "all" || wanted.split(',').any(|w| w == id)) {
        return;
    }
    let want_leaves = recorded["leaves"].as_array().unwrap();
    let n = want_leaves.len().max(got.leaves.len());
    let first = (0..n).find(|&i| {
        let w = want_leaves
            .get(i)
            .map(|l| (l["name"].as_str().unwrap().to_string(), l["shape"].clone()));
        w.as_ref() != got.leaves.get(i)
    });
    if let Some(i) = first {
        eprintln!("  {id}: leaf calls differ from #{i}:");
        for k in i.saturating_sub(2)..(i + 8).min(n) {
            let w = want_leaves
                .get(k)
                .map(|l| format!("{} {}", l["name"].as_str().unwrap(), l["shape"]))
                .unwrap_or_default();
            let g = got
                .leaves
                .get(k)
                .map(|(name, shape)| format!("{name} {shape}"))
                .unwrap_or_default();
            eprintln!("    #{k}: recorded {w:<50} built {g}");
        }
    }
    eprintln!(
        "  {id}: output recorded {} built {:?}",
        recorded["output"], got.output
    );
    eprintln!("{}", op_diff(recorded, got));
}

/// The op sequences aligned as the shape tally aligns them ([`lcs_pairs`]), one line per op:
/// `  ` both (with staticfx's shape where it differs), `- ` only in the recording, `+ ` only
/// in staticfx's graph, each with its output shape.
fn op_diff(recorded: &Value, got: &Outcome) -> String {
    let ops = recorded["ops"].as_array().unwrap();
    let want: Vec<String> = ops
        .iter()
        .map(|o| op_family(o["op"].as_str().unwrap()).to_string())
        .collect();
    let want_shapes: Vec<Value> = ops.iter().map(|o| o["shape"].clone()).collect();
    let pairs = lcs_pairs(&want, &got.ops, (&want_shapes, &got.op_shapes));
    let mut lines = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (pi, pj) in pairs.into_iter().chain([(want.len(), got.ops.len())]) {
        for k in i..pi {
            lines.push(format!("- {} {}", want[k], want_shapes[k]));
        }
        for k in j..pj {
            lines.push(format!("+ {} {}", got.ops[k], got.op_shapes[k]));
        }
        if pi < want.len() {
            let built = &got.op_shapes[pj];
            let note = if *built == want_shapes[pi] {
                String::new()
            } else {
                format!(" (built {built})")
            };
            lines.push(format!("  {} {}{note}", want[pi], want_shapes[pi]));
        }
        (i, j) = (pi + 1, pj + 1);
    }
    lines.join("\n")
}

/// The three comparisons of one case: leaf calls equal, output equal, op agreement in %.
fn compare(recorded: &Value, got: &Outcome) -> (bool, bool, f64) {
    let want_leaves: Vec<(String, Value)> = recorded["leaves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["name"].as_str().unwrap().to_string(), l["shape"].clone()))
        .collect();
    let want_output: Vec<Value> = recorded["output"]
        .as_object()
        .unwrap()
        .values()
        .cloned()
        .collect();
    let want_ops: Vec<String> = recorded["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| op_family(o["op"].as_str().unwrap()).to_string())
        .collect();
    let longer = want_ops.len().max(got.ops.len()).max(1);
    let agreement = 100.0 * lcs(&want_ops, &got.ops) as f64 / longer as f64;
    (
        want_leaves == got.leaves,
        want_output == got.output,
        agreement,
    )
}

#[test]
fn transformers_models_match_eager_recordings() {
    let Some(root) = transformers_root("STATICFX_TRANSFORMERS_ROOT") else {
        return;
    };
    match_recordings(&root, "tests/expected/hf", HF_AGREE, HF_KNOWN_WRONG);
}

/// The same cases on transformers 4.x, the line most projects still pin, against recordings
/// made with that version (`gen_hf_recordings.py --out tests/expected/hf-4.57.1`).
#[test]
fn transformers_4_models_match_eager_recordings() {
    let Some(root) = transformers_root("STATICFX_TRANSFORMERS4_ROOT") else {
        return;
    };
    match_recordings(
        &root,
        "tests/expected/hf-4.57.1",
        HF4_AGREE,
        HF4_KNOWN_WRONG,
    );
}

/// Builds every case from the transformers source under `root` and compares it with the
/// recordings in `recordings` (relative to the repository); the cases in `agree` must agree.
/// The shapes of every case built, asserted or not, are tallied against the recording: the
/// wrong ones must be exactly `known_wrong`.
fn match_recordings(root: &Path, recordings: &str, agree: &[&str], known_wrong: &[(&str, &str)]) {
    let Some(venv) = user_venv() else {
        return;
    };
    let cases = read_json(&manifest_dir().join("scripts/expect/hf_cases.json"));
    let cases = cases.as_array().unwrap().clone();
    for id in agree {
        assert!(
            cases.iter().any(|c| c["id"] == *id),
            "{id} is asserted but is not a case"
        );
    }
    let mut failures = Vec::new();
    let mut agreeing = Vec::new();
    let mut shapes = Tally::default();
    eprintln!("model | leaf calls equal | output equal | op LCS %");
    // `STATICFX_HF_ONLY=gpt2,opt` builds only those cases, to iterate on them.
    let only = std::env::var("STATICFX_HF_ONLY")
        .ok()
        .filter(|o| !o.is_empty());
    for case in cases {
        let id = case["id"].as_str().unwrap().to_string();
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|w| w == id))
        {
            continue;
        }
        let recorded = read_json(&manifest_dir().join(format!("{recordings}/{id}.json")));
        let asserted = agree.contains(&id.as_str());
        if let Some(e) = recorded.get("error") {
            eprintln!("{id} | not recorded: {e}");
            assert!(!asserted, "{id} has no recording");
            continue;
        }
        let (root, venv) = (root.to_path_buf(), venv.clone());
        let built = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || build(&root, &venv, &case))
            .unwrap()
            .join()
            .unwrap_or_else(|_| Err("panicked".into()));
        match built {
            Ok(got) => {
                let (leaves, output, agreement) = compare(&recorded, &got);
                tally_shapes(&id, &recorded, &got, &mut shapes);
                eprintln!("{id} | {leaves} | {output} | {agreement:.1}");
                print_diff(&id, &recorded, &got);
                let agrees = leaves && output && agreement >= 95.0;
                if agrees {
                    agreeing.push(id.clone());
                }
                if asserted && !agrees {
                    failures.push(format!(
                        "{id}: leaves equal {leaves}, output equal {output}, ops {agreement:.1}%"
                    ));
                }
            }
            Err(e) => {
                eprintln!("{id} | not built: {e}");
                if asserted {
                    failures.push(format!("{id}: {e}"));
                }
            }
        }
    }
    eprintln!(
        "{} of the cases agree; not asserted yet: {:?}",
        agreeing.len(),
        agreeing
            .iter()
            .filter(|id| !agree.contains(&id.as_str()))
            .collect::<Vec<_>>()
    );
    // With `STATICFX_HF_ONLY` some cases are left out, so the known wrong ones are not all seen.
    let known_wrong: Vec<(&str, &str)> = known_wrong
        .iter()
        .filter(|(case, _)| {
            only.as_ref()
                .is_none_or(|o| o.split(',').any(|w| w == *case))
        })
        .copied()
        .collect();
    shapes.report_and_check(recordings, &known_wrong);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const USER_FILE: &str = r#"from transformers import AutoConfig, AutoModelForCausalLM


def build():
    config = AutoConfig.for_model(
        "llama", hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, vocab_size=100, num_key_value_heads=2,
    )
    return AutoModelForCausalLM.from_config(config)
"#;

/// A user's file builds a model through transformers' lazy auto registries, with transformers
/// itself resolved from the venv: the graph is llama's, leaf for leaf and op for op.
#[test]
fn auto_model_from_config_in_a_user_file() {
    let Some(venv) = user_venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("build.py");
    std::fs::write(&file, USER_FILE).unwrap();
    let cases = read_json(&manifest_dir().join("scripts/expect/hf_cases.json"));
    let llama = cases
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "llama")
        .unwrap()
        .clone();
    let recorded = read_json(&manifest_dir().join("tests/expected/hf/llama.json"));
    let inline =
        "AutoModelForCausalLM.from_config(AutoConfig.for_model(\"llama\", hidden_size=32, \
                  num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, \
                  vocab_size=100, num_key_value_heads=2))";
    for entry in ["build()", inline] {
        let (root, file, venv, inputs) = (
            dir.path().to_path_buf(),
            file.clone(),
            venv.clone(),
            inputs_of(&llama["inputs"]),
        );
        let entry_owned = entry.to_string();
        let got = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || build_entry(&root, &file, &entry_owned, inputs, &venv))
            .unwrap()
            .join()
            .unwrap()
            .unwrap_or_else(|e| panic!("{entry}: {e}"));
        let (leaves, output, agreement) = compare(&recorded, &got);
        assert!(leaves, "{entry}: leaf calls differ: {:?}", got.leaves);
        assert!(output, "{entry}: output differs: {:?}", got.output);
        assert!(agreement >= 95.0, "{entry}: ops agree {agreement:.1}%");
    }
}

/// The fast paths are optional (issue 37): with every method `eval::native_methods` runs
/// natively evaluated from its source instead, each asserted case builds the very same graph
/// (nodes, names, targets, arguments, shapes).
#[test]
fn native_methods_off_give_the_same_graphs() {
    let Some(root) = transformers_root("STATICFX_TRANSFORMERS_ROOT") else {
        return;
    };
    let Some(venv) = user_venv() else {
        return;
    };
    let cases = read_json(&manifest_dir().join("scripts/expect/hf_cases.json"));
    let only = std::env::var("STATICFX_HF_ONLY")
        .ok()
        .filter(|o| !o.is_empty());
    let mut differing = Vec::new();
    let mut compared = 0;
    for case in cases.as_array().unwrap().iter().cloned() {
        let id = case["id"].as_str().unwrap().to_string();
        let wanted = match &only {
            Some(o) => o.split(',').any(|w| w == id),
            None => HF_AGREE.contains(&id.as_str()),
        };
        if !wanted {
            continue;
        }
        let (root, venv) = (root.clone(), venv.clone());
        let graphs = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || {
                let file = root
                    .join("transformers")
                    .join(case["file"].as_str().unwrap());
                let entry = case["entry"].as_str().unwrap();
                let opts = entry_options(&root, entry, inputs_of(&case["inputs"]), &venv);
                let native = graph_json(&file, &opts);
                let opts = GraphOptions {
                    without_native_methods: true,
                    ..opts
                };
                (native, graph_json(&file, &opts))
            })
            .unwrap()
            .join()
            .expect("the builds do not panic");
        match graphs {
            (Ok(native), Ok(source)) => {
                compared += 1;
                if native["graphs"] != source["graphs"] {
                    differing.push(id);
                }
            }
            (native, source) => differing.push(format!(
                "{id}: natively {:?}, from source {:?}",
                native.err(),
                source.err()
            )),
        }
    }
    eprintln!("{compared} cases built both ways; differing: {differing:?}");
    assert!(compared > 0, "no case was compared");
    assert!(
        differing.is_empty(),
        "graphs differ without native methods: {differing:?}"
    );
}
