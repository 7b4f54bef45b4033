//! timm's entry points, built from timm's own source (`$STATICFX_TIMM_ROOT`, the directory
//! holding `timm/`; `scripts/test-all.sh` unzips the wheel there; skipped with a note when
//! unset): a registered function with keyword overrides, and `timm.create_model` through the
//! registry from a user's file next to timm.
mod corpus_support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};

fn timm_root() -> Option<PathBuf> {
    corpus_support::corpus_root("STATICFX_TIMM_ROOT", "timm")
}

fn input(s: &str) -> InputSpec {
    s.parse().unwrap()
}

/// (name, op, target, shape) of every node of the graph of `entry` in `file`.
fn graph(root: &Path, file: &Path, entry: &str, inputs: Vec<InputSpec>) -> Vec<[String; 4]> {
    let (root, file, entry) = (root.to_path_buf(), file.to_path_buf(), entry.to_string());
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let opts = GraphOptions {
                root: Some(root),
                entry: Some(entry.clone()),
                inputs,
                ..Default::default()
            };
            let a = analyze_file(&file, &opts).unwrap_or_else(|e| panic!("{entry}: {e}"));
            assert!(
                a.graphs[0].error.is_none(),
                "{entry}: {:?}",
                a.graphs[0].error
            );
            let json: Value =
                serde_json::from_str(&staticfx::render::json::render(&a.project, &a.graphs))
                    .unwrap();
            json["graphs"][0]["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| {
                    [
                        n["name"].as_str().unwrap_or("").to_string(),
                        n["op"].as_str().unwrap_or("").to_string(),
                        n["target"].as_str().unwrap_or("").to_string(),
                        n["shape"].to_string(),
                    ]
                })
                .collect()
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn registered_function_honours_keyword_overrides() {
    let Some(root) = timm_root() else { return };
    let file = root.join("timm/models/vision_transformer.py");
    let nodes = graph(
        &root,
        &file,
        "vit_tiny_patch16_224(num_classes=10)",
        vec![input("x=1x3x224x224")],
    );
    let head = nodes.iter().find(|n| n[2] == "head").expect("a head node");
    assert_eq!(head[1], "call_module");
    assert_eq!(head[3], "[1,10]");
    let default = graph(
        &root,
        &file,
        "vit_tiny_patch16_224()",
        vec![input("x=1x3x224x224")],
    );
    let head = default.iter().find(|n| n[2] == "head").unwrap();
    assert_eq!(head[3], "[1,1000]");
}

#[test]
fn create_model_from_a_users_file_goes_through_the_registry() {
    let Some(timm) = timm_root() else { return };
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&timm.join("timm"), &dir.path().join("timm"));
    let user = dir.path().join("user_model.py");
    std::fs::write(
        &user,
        "import timm\nimport torch.nn as nn\n\n\nclass Classifier(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.backbone = timm.create_model(\"resnet18\", num_classes=10)\n\n    def forward(self, x):\n        return self.backbone(x).softmax(-1)\n",
    )
    .unwrap();
    let nodes = graph(
        dir.path(),
        &user,
        "Classifier()",
        vec![input("x=1x3x224x224")],
    );
    // The backbone is timm's resnet18 node for node (torch.fx's, from the committed
    // expectation), under `backbone.`, then the user's softmax.
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/fx/timm_resnet18.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let want: Vec<(String, String)> = expected["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["op"] != "placeholder" && n["op"] != "output")
        .map(|n| {
            let target = n["target"].as_str().unwrap();
            let target = match n["op"].as_str().unwrap() {
                "call_module" | "get_attr" => format!("backbone.{target}"),
                _ => target.to_string(),
            };
            (target, n["shape"].to_string().replace("1000", "10"))
        })
        .collect();
    let got: Vec<(String, String)> = nodes
        .iter()
        .filter(|n| n[1] != "placeholder" && n[1] != "output")
        .map(|n| (n[2].clone(), n[3].clone()))
        .collect();
    assert_eq!(got.len(), want.len() + 1, "{got:?}");
    assert_eq!(got[..want.len()], want[..]);
    assert_eq!(
        got[want.len()],
        ("softmax".to_string(), "[1,10]".to_string())
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else if p.extension().is_some_and(|x| x == "py") {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}
