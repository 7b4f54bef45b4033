//! The pass pipeline on real traced graphs: each pass fires where it should and refuses where
//! its precondition fails; golden dumps of optimized fixture models; the graph cache.
//!
//! Differential tests (executing the traced and the optimized graph on the same inputs and
//! comparing outputs within a tolerance) need the executor and come with it; until then these
//! tests pin the structure of the optimized graphs.

use std::path::{Path, PathBuf};

use staticfx::analysis::{
    analyze_file, optimize, FileAnalysis, GraphOptions, InputSpec, OptimizeOptions,
};
use staticfx::graph::Op;
use staticfx::passes::PassOptions;

fn fixture(dir: &Path, src: &str) -> PathBuf {
    let p = dir.join("model.py");
    std::fs::write(&p, src).unwrap();
    p
}

fn analyze(
    src: &str,
    entry: &str,
    inputs: &[&str],
) -> (tempfile::TempDir, FileAnalysis, GraphOptions) {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(dir.path(), src);
    let opts = GraphOptions {
        entry: Some(entry.into()),
        inputs: inputs
            .iter()
            .map(|s| s.parse::<InputSpec>().unwrap())
            .collect(),
        ..Default::default()
    };
    let a = analyze_file(&path, &opts).unwrap();
    assert!(a.graphs[0].error.is_none(), "{:?}", a.graphs[0].error);
    (dir, a, opts)
}

fn run(src: &str, entry: &str, inputs: &[&str], passes: PassOptions) -> FileAnalysis {
    let (_dir, mut a, opts) = analyze(src, entry, inputs);
    let passes = PassOptions {
        validate: true,
        ..passes
    };
    optimize(
        &mut a,
        &opts,
        &OptimizeOptions {
            passes,
            no_passes: false,
            cache_dir: None,
        },
    )
    .unwrap();
    a
}

fn only(pass: &str) -> PassOptions {
    PassOptions {
        disabled: staticfx::passes::PASS_NAMES
            .iter()
            .filter(|p| **p != pass)
            .map(|s| s.to_string())
            .collect(),
        ..Default::default()
    }
}

fn targets(a: &FileAnalysis) -> Vec<String> {
    a.graphs[0]
        .graph
        .nodes()
        .map(|(_, n)| n.target.clone())
        .collect()
}

fn count(a: &FileAnalysis, target: &str) -> usize {
    targets(a).iter().filter(|t| *t == target).count()
}

fn modified(a: &FileAnalysis, pass: &str) -> usize {
    a.graphs[0]
        .passes
        .as_ref()
        .unwrap()
        .iter()
        .filter(|p| p.name == pass)
        .map(|p| p.nodes_modified)
        .sum()
}

const HEADER: &str =
    "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n";

fn model(body: &str) -> String {
    format!("{HEADER}class M(nn.Module):\n{body}")
}

// ---- CSE -------------------------------------------------------------------------------

#[test]
fn cse_merges_identical_pure_ops() {
    let src = model("    def forward(self, x):\n        a = torch.relu(x)\n        b = torch.relu(x)\n        c = x.view(-1)\n        d = x.view(-1)\n        return a + b, c, d\n");
    let a = run(&src, "M()", &["x=2x3"], only("cse"));
    assert_eq!(count(&a, "torch.relu"), 1);
    assert_eq!(count(&a, "view"), 1);
    assert_eq!(modified(&a, "cse"), 2);
    // The kept node remembers both source spans.
    let g = &a.graphs[0].graph;
    let relu = g.nodes().find(|(_, n)| n.target == "torch.relu").unwrap().1;
    assert_eq!(relu.fused_from.len(), 2);
}

#[test]
fn cse_refuses_in_place_random_and_different_args() {
    let src = model(
        "    def forward(self, x):\n        x.add_(1)\n        x.add_(1)\n        a = F.dropout(x, 0.5)\n        b = F.dropout(x, 0.5)\n        c = x.view(2, 3)\n        d = x.view(3, 2)\n        e = x * 1\n        f = x * 1.0\n        return a, b, c, d, e, f\n",
    );
    let a = run(&src, "M()", &["x=2x3"], only("cse"));
    assert_eq!(count(&a, "add_"), 2);
    assert_eq!(count(&a, "torch.nn.functional.dropout"), 2);
    assert_eq!(count(&a, "view"), 2);
    assert_eq!(
        count(&a, "operator.mul"),
        2,
        "1 and 1.0 are different constants"
    );
    assert_eq!(modified(&a, "cse"), 0);
}

#[test]
fn cse_never_merges_placeholders_and_dropout_modules_only_in_inference() {
    let src = model("    def __init__(self):\n        super().__init__()\n        self.drop = nn.Dropout(0.1)\n    def forward(self, x, y):\n        return self.drop(x) + self.drop(x), y\n");
    let a = run(&src, "M()", &["x=2x3", "y=2x3"], only("cse"));
    assert_eq!(
        a.graphs[0]
            .graph
            .nodes()
            .filter(|(_, n)| n.op == Op::Placeholder)
            .count(),
        2
    );
    assert_eq!(
        count(&a, "drop"),
        2,
        "training-mode dropout draws a fresh mask per call"
    );
    let a = run(
        &src,
        "M()",
        &["x=2x3", "y=2x3"],
        PassOptions {
            inference: true,
            ..only("cse")
        },
    );
    assert_eq!(count(&a, "drop"), 1);
}

// ---- constant folding -------------------------------------------------------------------

const SHAPES: &str = "    def forward(self, x):\n        n = x.shape[0] * 2\n        d = x.size(-1)\n        r = x.dim()\n        return x.view(n, d // 2, r), math.sqrt(d)\n";

#[test]
fn constant_fold_turns_shape_arithmetic_into_literals() {
    let a = run(&model(SHAPES), "M()", &["x=4x6"], PassOptions::default());
    let g = &a.graphs[0].graph;
    let view = g.nodes().find(|(_, n)| n.target == "view").unwrap().1;
    let args: Vec<String> = view
        .args
        .iter()
        .map(|x| staticfx::render::arg_text(g, x))
        .collect();
    assert_eq!(args[1..], ["8", "3", "2"]);
    assert!(
        !targets(&a).iter().any(|t| t == "getattr"
            || t == "size"
            || t == "dim"
            || t.starts_with("operator.")
            || t == "math.sqrt"),
        "{:?}",
        targets(&a)
    );
    let out = g.nodes().last().unwrap().1;
    assert!(
        staticfx::render::arg_text(g, &out.args[0]).contains("2.449"),
        "sqrt(6) folded into the output"
    );
}

#[test]
fn constant_fold_refuses_unknown_shapes_and_data() {
    let a = run(&model(SHAPES), "M()", &[], only("constant_fold"));
    assert_eq!(
        modified(&a, "constant_fold"),
        0,
        "without --input no shape is known"
    );
    let src =
        model("    def forward(self, x):\n        k = x.sum().item()\n        return x * k\n");
    let a = run(&src, "M()", &["x=4x6"], only("constant_fold"));
    assert_eq!(count(&a, "item"), 1);
}

// ---- fusion ------------------------------------------------------------------------------

const LINEAR_RELU: &str = "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 4)\n        self.act = nn.ReLU()\n";

#[test]
fn fusion_linear_act_module_and_functional() {
    let src = model(&format!("{LINEAR_RELU}    def forward(self, x):\n        return F.gelu(self.fc(x)) + self.act(self.fc(x))\n"));
    let a = run(&src, "M()", &["x=2x8"], only("fusion"));
    assert_eq!(count(&a, "staticfx.fused.linear_act"), 2);
    let g = &a.graphs[0].graph;
    let fused = g
        .nodes()
        .find(|(_, n)| n.target == "staticfx.fused.linear_act")
        .unwrap()
        .1;
    assert_eq!(
        fused.fused_from.len(),
        2,
        "spans of the linear and the activation"
    );
    assert_eq!(fused.meta.describe(), "[2, 4]");
}

#[test]
fn fusion_absorbs_relu6_modules_and_functions() {
    // MobileNet's activation: `nn.ReLU6` after conv+bn, `F.relu6` after a linear.
    let src = model("    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 4)\n        self.act = nn.ReLU6()\n    def forward(self, x):\n        return self.act(self.fc(x)) + F.relu6(self.fc(x))\n");
    let a = run(&src, "M()", &["x=2x8"], only("fusion"));
    assert_eq!(count(&a, "staticfx.fused.linear_act"), 2);
    let acts: Vec<String> = a.graphs[0]
        .graph
        .nodes()
        .filter(|(_, n)| n.target == "staticfx.fused.linear_act")
        .flat_map(|(_, n)| n.kwargs.iter().filter(|(k, _)| k == "act"))
        .map(|(_, v)| format!("{v:?}"))
        .collect();
    assert!(acts.iter().all(|a| a.contains("relu6")), "{acts:?}");
}

#[test]
fn fusion_refuses_shared_or_output_intermediates() {
    // The linear's output is also returned: fusing would lose it.
    let src = model(&format!("{LINEAR_RELU}    def forward(self, x):\n        h = self.fc(x)\n        return self.act(h), h\n"));
    let a = run(&src, "M()", &["x=2x8"], only("fusion"));
    assert_eq!(count(&a, "staticfx.fused.linear_act"), 0);
    // Two users of the linear.
    let src = model(&format!("{LINEAR_RELU}    def forward(self, x):\n        h = self.fc(x)\n        return self.act(h) + h.sum()\n"));
    let a = run(&src, "M()", &["x=2x8"], only("fusion"));
    assert_eq!(count(&a, "staticfx.fused.linear_act"), 0);
    // Sigmoid is not a fused activation.
    let src = model(&format!(
        "{LINEAR_RELU}    def forward(self, x):\n        return torch.sigmoid(self.fc(x))\n"
    ));
    assert_eq!(
        count(
            &run(&src, "M()", &["x=2x8"], only("fusion")),
            "staticfx.fused.linear_act"
        ),
        0
    );
}

#[test]
fn fusion_matmul_add_act_and_add_act() {
    let src = model("    def __init__(self):\n        super().__init__()\n        self.w = nn.Parameter(torch.randn(8, 4))\n        self.b = nn.Parameter(torch.randn(4))\n    def forward(self, x, y):\n        h = F.silu(torch.matmul(x, self.w) + self.b)\n        return torch.relu(h + y)\n");
    let a = run(&src, "M()", &["x=2x8", "y=2x4"], only("fusion"));
    assert_eq!(count(&a, "staticfx.fused.matmul_add_act"), 1);
    assert_eq!(count(&a, "staticfx.fused.add_act"), 1);
    // A scalar add is not a tensor add.
    let src = model("    def forward(self, x):\n        return torch.relu(x + 1)\n");
    assert_eq!(
        count(
            &run(&src, "M()", &["x=2x8"], only("fusion")),
            "staticfx.fused.add_act"
        ),
        0
    );
}

const CONV_BN: &str = "    def __init__(self):\n        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3, padding=1)\n        self.bn = nn.BatchNorm2d(8)\n        self.conv2 = nn.Conv2d(8, 8, 1)\n        self.bn2 = nn.BatchNorm2d(8)\n        self.relu = nn.ReLU(inplace=True)\n    def forward(self, x):\n        x = self.relu(self.bn(self.conv(x)))\n        return self.bn2(self.conv2(x))\n";

#[test]
fn fusion_conv_bn_only_in_inference() {
    let a = run(&model(CONV_BN), "M()", &["x=1x3x8x8"], only("fusion"));
    assert_eq!(
        modified(&a, "fusion"),
        0,
        "training-mode batch norm uses batch statistics"
    );
    let a = run(
        &model(CONV_BN),
        "M()",
        &["x=1x3x8x8"],
        PassOptions {
            inference: true,
            ..only("fusion")
        },
    );
    assert_eq!(count(&a, "staticfx.fused.conv_bn_act"), 1);
    assert_eq!(count(&a, "staticfx.fused.conv_bn"), 1);
    assert_eq!(a.graphs[0].graph.len(), 4);
}

#[test]
fn fusion_recognises_hand_written_softmax_and_layer_norm() {
    let src = model(
        "    def forward(self, x):\n        m = x.max(dim=-1, keepdim=True)[0]\n        e = torch.exp(x - m)\n        p = e / e.sum(dim=-1, keepdim=True)\n        mu = x.mean(-1, keepdim=True)\n        var = ((x - mu) ** 2).mean(-1, keepdim=True)\n        y = (x - mu) / torch.sqrt(var + 1e-5)\n        return p, y\n",
    );
    let a = run(&src, "M()", &["x=2x5"], PassOptions::default());
    let t = targets(&a);
    assert!(t.contains(&"torch.softmax".to_string()), "{t:?}");
    assert!(
        t.contains(&"torch.nn.functional.layer_norm".to_string()),
        "{t:?}"
    );
    assert_eq!(a.graphs[0].graph.len(), 4, "{t:?}");
    // Without CSE the two `x - mu` stay apart and the layer norm is not recognised.
    let a = run(
        &src,
        "M()",
        &["x=2x5"],
        PassOptions {
            disabled: vec!["cse".into()],
            ..Default::default()
        },
    );
    assert!(!targets(&a).contains(&"torch.nn.functional.layer_norm".to_string()));
    // A softmax whose exp is also used elsewhere stays written out.
    let src = model("    def forward(self, x):\n        e = torch.exp(x)\n        return e / e.sum(dim=-1, keepdim=True), e\n");
    assert!(
        !targets(&run(&src, "M()", &["x=2x5"], PassOptions::default()))
            .contains(&"torch.softmax".to_string())
    );
}

// ---- DCE ---------------------------------------------------------------------------------

#[test]
fn dce_removes_unused_pure_nodes_and_keeps_effects() {
    let src = model("    def forward(self, x):\n        unused = torch.relu(x) * 2\n        x.add_(1)\n        noise = torch.rand_like(x)\n        return x\n");
    let a = run(&src, "M()", &["x=2x3"], only("dce"));
    let t = targets(&a);
    assert!(
        !t.contains(&"torch.relu".to_string()) && !t.contains(&"operator.mul".to_string()),
        "{t:?}"
    );
    assert!(t.contains(&"add_".to_string()), "{t:?}");
    assert!(
        t.contains(&"torch.rand_like".to_string()),
        "an unused random draw still advances the generator: {t:?}"
    );
    assert_eq!(modified(&a, "dce"), 2);
}

#[test]
fn dce_drops_identity_and_eval_dropout() {
    let src = model("    def __init__(self):\n        super().__init__()\n        self.id = nn.Identity()\n        self.drop = nn.Dropout(0.1)\n    def forward(self, x):\n        return self.drop(self.id(x))\n");
    let a = run(&src, "M()", &["x=2x3"], only("dce"));
    assert_eq!(targets(&a), ["x", "drop", "output"]);
    let a = run(
        &src,
        "M()",
        &["x=2x3"],
        PassOptions {
            inference: true,
            ..only("dce")
        },
    );
    assert_eq!(targets(&a), ["x", "output"]);
}

#[test]
fn graph_break_nodes_are_left_alone() {
    let src = model("    def forward(self, x):\n        if x.sum() > 0:\n            return torch.relu(x)\n        return torch.relu(x)\n");
    let (_d, a0, _) = analyze(&src, "M()", &["x=2x3"]);
    let before = a0.graphs[0].graph.len();
    let a = run(&src, "M()", &["x=2x3"], PassOptions::default());
    assert_eq!(a.graphs[0].regions.len(), 1);
    assert_eq!(
        a.graphs[0].graph.len(),
        before,
        "both branches and the cause are region nodes"
    );
    let out = staticfx::render::text::render(&a.graphs[0]);
    assert!(out.contains("[GRAPH_BREAK]"));
}

#[test]
fn no_passes_keeps_the_traced_graph() {
    let (_dir, mut a, opts) = analyze(&model(SHAPES), "M()", &["x=4x6"]);
    let before = staticfx::render::text::render(&a.graphs[0]);
    optimize(
        &mut a,
        &opts,
        &OptimizeOptions {
            no_passes: true,
            ..Default::default()
        },
    )
    .unwrap();
    let after = staticfx::render::text::render(&a.graphs[0]);
    assert!(after.starts_with(before.trim_end()));
    assert!(after.contains("(no passes run)"));
}

// ---- golden dumps ------------------------------------------------------------------------

fn manifest_case(id: &str) -> (PathBuf, GraphOptions) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let c = m
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap();
    let inputs = c["inputs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, spec)| {
            let shape: Vec<String> = spec["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.to_string())
                .collect();
            format!(
                "{name}={}:{}",
                shape.join("x"),
                spec["dtype"].as_str().unwrap()
            )
            .parse::<InputSpec>()
            .unwrap()
        })
        .collect();
    (
        dir.join(c["file"].as_str().unwrap()),
        GraphOptions {
            entry: Some(c["entry"].as_str().unwrap().into()),
            inputs,
            ..Default::default()
        },
    )
}

fn golden(path: &Path, opts: &GraphOptions, inference: bool) -> String {
    let mut a = analyze_file(path, opts).unwrap();
    let passes = PassOptions {
        inference,
        validate: true,
        ..Default::default()
    };
    optimize(
        &mut a,
        opts,
        &OptimizeOptions {
            passes,
            ..Default::default()
        },
    )
    .unwrap();
    staticfx::render::text::render(&a.graphs[0])
}

#[test]
fn golden_optimized_fixture_models() {
    for id in ["mlp", "cnn", "attention", "transformer_block"] {
        let (path, opts) = manifest_case(id);
        insta::assert_snapshot!(format!("optimized_{id}"), golden(&path, &opts, false));
    }
    let (path, opts) = manifest_case("cnn");
    insta::assert_snapshot!("optimized_cnn_inference", golden(&path, &opts, true));
}

fn torchvision_root() -> Option<PathBuf> {
    std::env::var_os("STATICFX_TORCHVISION")
        .or_else(|| std::env::var_os("STATICFX_TORCHVISION_ROOT"))
        .map(PathBuf::from)
}

#[test]
fn golden_optimized_torchvision_resnet18() {
    let Some(root) = torchvision_root() else {
        eprintln!(
            "skipped: set STATICFX_TORCHVISION to a directory containing torchvision/ to run"
        );
        return;
    };
    let path = root.join("torchvision/models/resnet.py");
    let opts = GraphOptions {
        root: Some(root.clone()),
        entry: Some("ResNet(BasicBlock, [2, 2, 2, 2])".into()),
        inputs: vec!["x=1x3x224x224".parse().unwrap()],
        ..Default::default()
    };
    insta::assert_snapshot!("optimized_tv_resnet18", golden(&path, &opts, false));
    insta::assert_snapshot!(
        "optimized_tv_resnet18_inference",
        golden(&path, &opts, true)
    );
}

// ---- cache -------------------------------------------------------------------------------

fn cached(path: &Path, opts: &GraphOptions, cache: &Path, passes: PassOptions) -> (bool, String) {
    let mut a = analyze_file(path, opts).unwrap();
    optimize(
        &mut a,
        opts,
        &OptimizeOptions {
            passes,
            no_passes: false,
            cache_dir: Some(cache.to_path_buf()),
        },
    )
    .unwrap();
    (
        a.graphs[0].from_cache,
        staticfx::render::text::render(&a.graphs[0]).replace(" (from cache)", ""),
    )
}

fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(all_files(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

const CACHED_MODEL: &str = "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 4)\n    def forward(self, x):\n        return torch.relu(self.fc(x)).view(x.shape[0], -1)\n";

#[test]
fn cache_hits_and_misses_on_every_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(dir.path(), &model(CACHED_MODEL));
    let cache = dir.path().join("cache");
    let opts = GraphOptions {
        entry: Some("M()".into()),
        inputs: vec!["x=2x8".parse().unwrap()],
        ..Default::default()
    };
    let (hit, first) = cached(&path, &opts, &cache, PassOptions::default());
    assert!(!hit);
    let (hit, again) = cached(&path, &opts, &cache, PassOptions::default());
    assert!(hit, "second run reads the cache");
    assert_eq!(first, again);

    // Source text (even a comment), inputs, entry, mode and disabled passes each invalidate.
    let other_inputs = GraphOptions {
        inputs: vec!["x=3x8".parse().unwrap()],
        ..opts.clone()
    };
    assert!(!cached(&path, &other_inputs, &cache, PassOptions::default()).0);
    let other_entry = GraphOptions {
        entry: Some("M( )".into()),
        ..opts.clone()
    };
    assert!(!cached(&path, &other_entry, &cache, PassOptions::default()).0);
    assert!(
        !cached(
            &path,
            &opts,
            &cache,
            PassOptions {
                inference: true,
                ..Default::default()
            }
        )
        .0
    );
    assert!(
        !cached(
            &path,
            &opts,
            &cache,
            PassOptions {
                disabled: vec!["fusion".into()],
                ..Default::default()
            }
        )
        .0
    );
    std::fs::write(&path, format!("{}# edited\n", model(CACHED_MODEL))).unwrap();
    assert!(!cached(&path, &opts, &cache, PassOptions::default()).0);
    assert!(cached(&path, &opts, &cache, PassOptions::default()).0);
}

#[test]
fn cache_ignores_and_rewrites_corrupt_entries_and_stays_in_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(dir.path(), &model(CACHED_MODEL));
    let cache = dir.path().join("cache");
    let opts = GraphOptions {
        entry: Some("M()".into()),
        inputs: vec!["x=2x8".parse().unwrap()],
        ..Default::default()
    };
    let (_, fresh) = cached(&path, &opts, &cache, PassOptions::default());
    let files = all_files(dir.path());
    let entries: Vec<&PathBuf> = files.iter().filter(|p| p.starts_with(&cache)).collect();
    assert_eq!(
        files.len(),
        2,
        "the model and one cache entry, nothing else: {files:?}"
    );
    assert_eq!(entries.len(), 1);
    let name = entries[0]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        name.len() == 69
            && name.ends_with(".json")
            && name[..64].bytes().all(|b| b.is_ascii_hexdigit()),
        "{name}"
    );

    let full = std::fs::read_to_string(entries[0]).unwrap();
    for corrupt in [
        full[..full.len() / 2].to_string(),
        String::new(),
        "{\"version\": 1}".to_string(),
        full.replacen("{\"Node\":", "{\"Node\":9", 1),
    ] {
        std::fs::write(entries[0], &corrupt).unwrap();
        let (hit, text) = cached(&path, &opts, &cache, PassOptions::default());
        assert!(!hit, "a corrupt entry is a miss");
        assert_eq!(text, fresh);
        assert_eq!(
            std::fs::read_to_string(entries[0]).unwrap(),
            full,
            "and is rewritten"
        );
    }
    assert_eq!(
        all_files(dir.path()).len(),
        2,
        "no temporary files left behind"
    );
}
