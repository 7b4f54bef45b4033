//! einops' torch layers (`einops.layers.torch.Rearrange`, `Reduce`, `EinMix`) in a model, as
//! Dynamo traces them: it inlines the layer's `forward` into the `reshape` / `permute` /
//! reduction nodes of its recipe (for `EinMix`, `torch.einsum` with its weight and the bias
//! added in place). The layers come from the venv `$STATICFX_USER_VENV` (default
//! `target/test-data/user-venv`, which `scripts/test-all.sh` builds with einops 0.8); a test
//! that needs it is skipped with a note when it is absent.
//!
//! Also, without the venv: a child module the evaluator cannot build or follow stays in the
//! graph as a `call_module` of unknown shape with an analysis-limit note (FX903), inside an
//! `nn.Sequential` as well as called directly; it never vanishes or turns into its input.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};
use staticfx::semantic::environment::{DiscoveryRequest, EnvironmentHandle};

fn user_venv() -> Option<PathBuf> {
    let dir = std::env::var_os("STATICFX_USER_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-data/user-venv")
        });
    let ok = dir.join("pyvenv.cfg").is_file()
        && std::fs::read_dir(dir.join("lib")).is_ok_and(|mut d| {
            d.any(|e| {
                e.is_ok_and(|e| {
                    e.path()
                        .join("site-packages/einops/layers/torch.py")
                        .is_file()
                })
            })
        });
    if !ok {
        eprintln!(
            "note: no venv with einops at {} (scripts/test-all.sh builds it); skipping",
            dir.display()
        );
    }
    ok.then_some(dir)
}

/// The graph of `entry` built from `source`, as `staticfx graph --format json` prints it,
/// and the analysis' diagnostics as `code message`.
fn graph(source: &str, entry: &str, input: &str, venv: Option<&Path>) -> (Vec<Value>, Vec<String>) {
    let (nodes, diags, _) = analyze(source, entry, input, venv);
    (nodes, diags)
}

/// [`graph`], and each module of the built tree as `path class [param shape, …]`.
fn analyze(
    source: &str,
    entry: &str,
    input: &str,
    venv: Option<&Path>,
) -> (Vec<Value>, Vec<String>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("model.py");
    std::fs::write(&file, source).unwrap();
    let environment: Option<Arc<EnvironmentHandle>> = venv.map(|v| {
        EnvironmentHandle::lazy(DiscoveryRequest {
            python: Some(v.to_path_buf()),
            root: dir.path().to_path_buf(),
            virtual_env: None,
            path_var: None,
        })
    });
    let opts = GraphOptions {
        root: Some(dir.path().to_path_buf()),
        entry: Some(entry.to_string()),
        inputs: vec![input.parse::<InputSpec>().unwrap()],
        environment,
        ..Default::default()
    };
    let a = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || analyze_file(&file, &opts).unwrap())
        .unwrap()
        .join()
        .unwrap();
    let json: Value =
        serde_json::from_str(&staticfx::render::json::render(&a.project, &a.graphs)).unwrap();
    let nodes = json["graphs"][0]["nodes"].as_array().unwrap().clone();
    let mut diags: Vec<String> = a
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.message))
        .collect();
    for g in &a.graphs {
        let stopped = g.error.iter().chain(&g.build_failure);
        diags.extend(stopped.map(|d| format!("{} {}", d.code, d.message)));
        // what will raise when it runs (FX3xx), with its line
        diags.extend(
            g.breaks
                .iter()
                .filter(|f| f.rule.raises())
                .map(|f| format!("{} {} {}", f.rule.code(), f.line, f.message)),
        );
    }
    let modules = a
        .graphs
        .iter()
        .take(1)
        .flat_map(|g| &g.modules)
        .map(|m| {
            let params: Vec<String> = m
                .params
                .iter()
                .map(|p| format!("{} {:?}", p.name, p.shape.clone().unwrap_or_default()))
                .collect();
            format!("{} {} [{}]", m.path, m.class, params.join(", "))
        })
        .collect();
    (nodes, diags, modules)
}

fn node<'a>(nodes: &'a [Value], name: &str) -> &'a Value {
    nodes
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no node {name}: {nodes:#?}"))
}

fn output_shape(nodes: &[Value]) -> Value {
    nodes
        .iter()
        .find(|n| n["op"] == "output")
        .map(|n| n["shape"].clone())
        .unwrap()
}

/// `op target` of each node that computes something.
fn ops(nodes: &[Value]) -> Vec<String> {
    nodes
        .iter()
        .filter(|n| !matches!(n["op"].as_str(), Some("placeholder" | "output")))
        .map(|n| {
            format!(
                "{} {}",
                n["op"].as_str().unwrap(),
                n["target"].as_str().unwrap()
            )
        })
        .collect()
}

const PATCHES: &str = r#"import torch
from torch import nn
from einops import einsum, pack, rearrange, unpack
from einops.layers.torch import Rearrange, Reduce


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=8, p2=8),
                                 nn.LayerNorm(192), nn.Linear(192, 64))

    def forward(self, x):
        return self.seq(x)


class D(nn.Module):
    def __init__(self):
        super().__init__()
        self.r = Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=8, p2=8)

    def forward(self, x):
        return self.r(x)


class P(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = Reduce("b c h w -> b c", "mean")
        self.prod = Reduce("b c (h 2) (w 2) -> b c h w", "prod")
        self.flat = Rearrange("b ... -> b (...)")

    def forward(self, x):
        return self.mean(x), self.prod(x), self.flat(x)


class WrongRank(nn.Module):
    def __init__(self):
        super().__init__()
        self.r = Rearrange("b c h -> b h c")

    def forward(self, x):
        return self.r(x).relu()


class Packs(nn.Module):
    def forward(self, x):
        cls = x[:, 0]
        packed, ps = pack([cls, x], "b * d")
        y = einsum(packed, packed, "b i d, b j d -> b i j")
        c, rest = unpack(packed, ps, "b * d")
        return y, c, rest


class BadUnpack(nn.Module):
    def forward(self, x):
        a, b = unpack(x, [(2,), (4,)], "b * d")
        return a + 1


class NotDivisible(nn.Module):
    def forward(self, x):
        y = rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=5, p2=5)
        return y.relu()
"#;

#[test]
fn rearrange_layer_in_a_sequential_is_traced_into_its_recipe() {
    let Some(venv) = user_venv() else { return };
    let (nodes, diags) = graph(PATCHES, "M()", "x=1x3x32x32", Some(&venv));
    assert_eq!(
        output_shape(&nodes),
        serde_json::json!([1, 16, 64]),
        "{nodes:#?}"
    );
    assert_eq!(
        ops(&nodes),
        [
            "call_method reshape",
            "call_method permute",
            "call_method reshape",
            "call_module seq.1",
            "call_module seq.2",
        ],
        "{nodes:#?}"
    );
    let reshape = node(&nodes, "reshape_1");
    assert_eq!(reshape["shape"], serde_json::json!([1, 16, 192]));
    // the LayerNorm takes the layer's output, not the model's input
    assert_eq!(
        node(&nodes, "seq_1")["args"],
        serde_json::json!([{"node": "reshape_1"}])
    );
    assert!(!diags.iter().any(|d| d.starts_with("FX9")), "{diags:#?}");
}

#[test]
fn rearrange_layer_called_directly_is_traced_into_its_recipe() {
    let Some(venv) = user_venv() else { return };
    let (nodes, _) = graph(PATCHES, "D()", "x=1x3x32x32", Some(&venv));
    assert_eq!(
        output_shape(&nodes),
        serde_json::json!([1, 16, 192]),
        "{nodes:#?}"
    );
    assert_eq!(
        ops(&nodes),
        [
            "call_method reshape",
            "call_method permute",
            "call_method reshape"
        ],
        "{nodes:#?}"
    );
    assert_eq!(
        node(&nodes, "reshape")["args"],
        serde_json::json!([{"node": "x"}, [1, 3, 4, 8, 4, 8]])
    );
    assert_eq!(
        node(&nodes, "permute")["args"],
        serde_json::json!([{"node": "reshape"}, [0, 2, 4, 3, 5, 1]])
    );
}

#[test]
fn reduce_layers_and_ellipsis_follow_the_scriptable_backend() {
    let Some(venv) = user_venv() else { return };
    let (nodes, _) = graph(PATCHES, "P()", "x=1x3x32x32", Some(&venv));
    assert_eq!(
        ops(&nodes),
        [
            "call_method mean",
            "call_method reshape",
            "call_method permute",
            "call_method prod",
            "call_method prod",
            "call_method reshape",
        ],
        "{nodes:#?}"
    );
    // TorchJitBackend.reduce passes the axes as a list; prod goes one axis at a time
    assert_eq!(
        node(&nodes, "mean")["kwargs"]["dim"],
        serde_json::json!([2, 3])
    );
    assert_eq!(
        node(&nodes, "prod_1")["shape"],
        serde_json::json!([1, 3, 16, 16])
    );
    assert_eq!(
        node(&nodes, "reshape_1")["shape"],
        serde_json::json!([1, 3072])
    );
}

#[test]
fn rearrange_layer_on_a_rank_its_pattern_does_not_take_raises_key_error() {
    let Some(venv) = user_venv() else { return };
    let (nodes, diags) = graph(PATCHES, "WrongRank()", "x=1x3x32x32", Some(&venv));
    let line = PATCHES
        .lines()
        .position(|l| l.contains("return self.r(x).relu()"))
        .unwrap()
        + 1;
    // the user's bug on the layer's call, and the trace goes on with an unknown shape
    assert_eq!(
        diags,
        vec![format!(
            "FX301 {line} `self.r` raises KeyError: 4 (the pattern `b c h -> b h c` takes no input of rank 4); `x` [1, 3, 32, 32] is an input of forward"
        )],
    );
    assert_eq!(ops(&nodes), vec!["call_module r", "call_method relu"]);
    assert!(node(&nodes, "r")["shape"].is_null(), "{nodes:#?}");
    assert!(output_shape(&nodes).is_null(), "{nodes:#?}");
}

/// torch 2.15 with einops 0.8.2, `torch.compile(Packs(), backend=…)` on x [2, 5, 8]: its
/// FX graph's nodes and their example values' shapes.
#[test]
fn pack_einsum_and_unpack_are_the_backend_calls_dynamo_records() {
    let Some(venv) = user_venv() else { return };
    let (nodes, diags) = graph(PATCHES, "Packs()", "x=2x5x8", Some(&venv));
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(
        ops(&nodes),
        vec![
            "call_function operator.getitem",
            "call_method reshape",
            "call_method reshape",
            "call_function torch.cat",
            "call_function torch.einsum",
            "call_function operator.getitem",
            "call_method reshape",
            "call_function operator.getitem",
            "call_method reshape",
        ]
    );
    let shapes: Vec<Value> = nodes
        .iter()
        .filter(|n| !matches!(n["op"].as_str(), Some("placeholder" | "output")))
        .map(|n| n["shape"].clone())
        .collect();
    assert_eq!(
        shapes,
        serde_json::json!([
            [2, 8],
            [2, 1, 8],
            [2, 5, 8],
            [2, 6, 8],
            [2, 6, 6],
            [2, 1, 8],
            [2, 8],
            [2, 5, 8],
            [2, 5, 8]
        ])
        .as_array()
        .unwrap()
        .clone()
    );
    // 2 + 4 is not the 5 packed elements: einops raises, on the unpack line
    let line = PATCHES
        .lines()
        .position(|l| l.contains("unpack(x, [(2,), (4,)]"))
        .unwrap()
        + 1;
    let (nodes, diags) = graph(PATCHES, "BadUnpack()", "x=2x5x8", Some(&venv));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].starts_with(&format!(
            "FX301 {line} `unpack` raises EinopsError: Error during unpack(..., \"b * d\"): could not split axis of size 5"
        )),
        "{diags:#?}"
    );
    assert!(output_shape(&nodes).is_null(), "{nodes:#?}");
}

#[test]
fn rearrange_whose_pattern_does_not_fit_the_input_is_an_fx301_on_its_line() {
    let Some(venv) = user_venv() else { return };
    let line = PATCHES
        .lines()
        .position(|l| l.contains("p1=5, p2=5"))
        .unwrap()
        + 1;
    // 32 is no multiple of 5
    let (nodes, diags) = graph(PATCHES, "NotDivisible()", "x=1x3x32x32", Some(&venv));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].starts_with(&format!("FX301 {line} `rearrange` raises EinopsError: ")),
        "{diags:#?}"
    );
    assert!(output_shape(&nodes).is_null(), "{nodes:#?}");
    // 30 is: the same call is its recipe, with shapes
    let (nodes, diags) = graph(PATCHES, "NotDivisible()", "x=1x3x30x30", Some(&venv));
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(output_shape(&nodes), serde_json::json!([1, 36, 75]));
}

const MIXES: &str = r#"import torch
from torch import nn
from einops.layers.torch import EinMix


class Channels(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = EinMix("b t c -> b t c_out", weight_shape="c c_out", bias_shape="c_out", c=32, c_out=64)

    def forward(self, x):
        return self.mix(x)


class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = EinMix("b hw c -> b hw_out c", weight_shape="hw hw_out", bias_shape="hw_out", hw=16, hw_out=16)

    def forward(self, x):
        return self.mix(x).relu()


class Composed(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = EinMix("b (h w) c -> b (h w) c2", weight_shape="c c2", bias_shape="c2", h=4, c=8, c2=12)

    def forward(self, x):
        return self.mix(x)


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = EinMix("t b (head cin) -> t b (head cout)", weight_shape="head cin cout", head=2, cin=4, cout=3)

    def forward(self, x):
        return self.mix(x)

"#;

/// `op target shape` of each node that computes something, without the parameters' `get_attr`
/// nodes (Dynamo lifts parameters to placeholders).
fn dynamo_ops(nodes: &[Value]) -> Vec<String> {
    nodes
        .iter()
        .filter(|n| {
            !matches!(
                n["op"].as_str(),
                Some("placeholder" | "output" | "get_attr")
            )
        })
        .map(|n| {
            format!(
                "{} {} {}",
                n["op"].as_str().unwrap(),
                n["target"].as_str().unwrap(),
                n["shape"]
            )
        })
        .collect()
}

/// torch 2.15 with einops 0.8.2, `torch.compile(m, backend=…, fullgraph=True)`: the nodes of
/// its FX graph and their example values' shapes (`torch.einsum` and the in-place bias add
/// `operator.iadd`, the pre/post `Rearrange` recipes as `reshape`), and `named_parameters()`.
#[test]
fn einmix_is_the_einsum_and_bias_add_dynamo_records() {
    let Some(venv) = user_venv() else { return };
    let (nodes, diags, modules) = analyze(MIXES, "Channels()", "x=2x10x32", Some(&venv));
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(
        dynamo_ops(&nodes),
        [
            "call_function torch.einsum [2,10,64]",
            "call_function operator.iadd [2,10,64]"
        ],
        "{nodes:#?}"
    );
    assert_eq!(
        node(&nodes, "einsum")["args"],
        serde_json::json!(["adb,bc->adc", {"node": "x"}, {"node": "mix_weight"}])
    );
    assert_eq!(
        node(&nodes, "mix_bias")["shape"],
        serde_json::json!([1, 1, 64])
    );
    assert!(
        modules.contains(&"mix EinMix [weight [32, 64], bias [1, 1, 64]]".to_string()),
        "{modules:#?}"
    );
    // MLP-Mixer's token mixing: the bias spans the mixed axis only
    let (nodes, diags) = graph(MIXES, "Tokens()", "x=2x16x8", Some(&venv));
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(
        dynamo_ops(&nodes),
        [
            "call_function torch.einsum [2,16,8]",
            "call_function operator.iadd [2,16,8]",
            "call_method relu [2,16,8]"
        ],
        "{nodes:#?}"
    );
    assert_eq!(node(&nodes, "einsum")["args"][0], "acb,cd->adb");
    assert_eq!(
        node(&nodes, "mix_bias")["shape"],
        serde_json::json!([1, 16, 1])
    );
}

#[test]
fn einmix_with_composed_axes_runs_its_rearrange_children() {
    let Some(venv) = user_venv() else { return };
    let (nodes, diags, modules) = analyze(MIXES, "Composed()", "x=2x16x8", Some(&venv));
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(
        dynamo_ops(&nodes),
        [
            "call_method reshape [2,4,4,8]",
            "call_function torch.einsum [2,4,4,12]",
            "call_function operator.iadd [2,4,4,12]",
            "call_method reshape [2,16,12]"
        ],
        "{nodes:#?}"
    );
    assert_eq!(node(&nodes, "einsum")["args"][0], "adeb,bc->adec");
    assert!(
        modules.contains(&"mix.pre_rearrange Rearrange []".to_string()),
        "{modules:#?}"
    );
    let (nodes, diags) = graph(MIXES, "Heads()", "x=5x2x8", Some(&venv));
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(
        dynamo_ops(&nodes),
        [
            "call_method reshape [5,2,2,4]",
            "call_function torch.einsum [5,2,2,3]",
            "call_method reshape [5,2,6]"
        ],
        "{nodes:#?}"
    );
    assert_eq!(node(&nodes, "einsum")["args"][0], "eadb,dbc->eadc");
}

#[test]
fn einmix_on_an_input_it_cannot_take_is_an_fx301_on_its_call() {
    let Some(venv) = user_venv() else { return };
    let line = |text: &str| MIXES.lines().position(|l| l.contains(text)).unwrap() + 1;
    // the weight mixes 32 channels: torch's einsum raises (Dynamo: on its fake tensors)
    let (nodes, diags) = graph(MIXES, "Channels()", "x=2x10x31", Some(&venv));
    let at = line("return self.mix(x)");
    assert_eq!(
        diags,
        vec![format!(
            "FX301 {at} `self.mix` raises RuntimeError: einsum(): subscript b has size 32 for operand 1 which does not broadcast with previously seen size 31; `x` [2, 10, 31] is an input of forward"
        )]
    );
    assert_eq!(ops(&nodes), ["call_module mix"], "{nodes:#?}");
    assert!(output_shape(&nodes).is_null(), "{nodes:#?}");
    // the token mixing weight takes 16 tokens, not 15; the trace goes on after the call
    let (nodes, diags) = graph(MIXES, "Tokens()", "x=2x15x8", Some(&venv));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].contains("`self.mix` raises RuntimeError: einsum(): subscript c has size 16"),
        "{diags:#?}"
    );
    assert_eq!(
        ops(&nodes),
        ["call_module mix", "call_method relu"],
        "{nodes:#?}"
    );
    // 15 tokens do not split into h=4 rows: the pre-rearrange raises
    let (_, diags) = graph(MIXES, "Composed()", "x=2x15x8", Some(&venv));
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0].contains("`self.mix` raises EinopsError: Shape mismatch, can't divide axis of length 15 in chunks of 4"),
        "{diags:#?}"
    );
}

const OPAQUE: &str = r#"import torch
from torch import nn
from somewhere_not_installed import Mystery


class S(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(Mystery(3), nn.Linear(32, 8))

    def forward(self, x):
        return self.seq(x)


class Direct(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = Mystery(3)

    def forward(self, x):
        return self.m(x)


class Looped(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Mystery(3), nn.ReLU()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x, len(self.layers)


class Indexed(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Mystery(3), nn.ReLU()])

    def forward(self, x):
        return self.layers[1](self.layers[0](x))
"#;

#[test]
fn a_child_of_sequential_that_cannot_be_followed_stays_an_opaque_call() {
    let (nodes, diags) = graph(OPAQUE, "S()", "x=1x3x32x32", None);
    assert_eq!(
        ops(&nodes),
        ["call_module seq.0", "call_module seq.1"],
        "{nodes:#?}"
    );
    let first = node(&nodes, "seq_0");
    assert_eq!(first["args"], serde_json::json!([{"node": "x"}]));
    assert!(first["shape"].is_null(), "{first}");
    // the Linear takes the opaque child's output, not the input
    assert_eq!(
        node(&nodes, "seq_1")["args"],
        serde_json::json!([{"node": "seq_0"}])
    );
    assert!(
        diags
            .iter()
            .any(|d| d.starts_with("FX903 cannot follow the forward of `seq.0`")),
        "{diags:#?}"
    );
}

#[test]
fn a_module_that_cannot_be_followed_called_directly_notes_an_analysis_limit() {
    let (nodes, diags) = graph(OPAQUE, "Direct()", "x=1x3x32x32", None);
    assert_eq!(ops(&nodes), ["call_module m"], "{nodes:#?}");
    assert!(node(&nodes, "m")["shape"].is_null());
    assert!(
        diags
            .iter()
            .any(|d| d.starts_with("FX903 cannot follow the forward of `m`")),
        "{diags:#?}"
    );
}

#[test]
fn a_module_list_child_that_cannot_be_followed_is_iterated_counted_and_indexed() {
    for entry in ["Looped()", "Indexed()"] {
        let (nodes, diags) = graph(OPAQUE, entry, "x=1x3x32x32", None);
        assert_eq!(
            ops(&nodes),
            ["call_module layers.0", "call_module layers.1"],
            "{entry}: {nodes:#?}"
        );
        assert_eq!(
            node(&nodes, "layers_1")["args"],
            serde_json::json!([{"node": "layers_0"}])
        );
        assert!(
            diags
                .iter()
                .any(|d| d.starts_with("FX903 cannot follow the forward of `layers.0`")),
            "{entry}: {diags:#?}"
        );
    }
    // len() counts the child it could not build
    let (nodes, _) = graph(OPAQUE, "Looped()", "x=1x3x32x32", None);
    let output = nodes.iter().find(|n| n["op"] == "output").unwrap();
    assert_eq!(output["args"][0][1], serde_json::json!(2), "{output}");
}
