//! Graph breaks on real transformers modeling files, against TorchDynamo's own answer.
//!
//! `tests/expected/hf_breaks.json` (written by `scripts/breaks/label_hf.py` with torch and
//! transformers installed) says, per architecture, where `torch._dynamo.explain` breaks the
//! base model built from a tiny config, in eval mode and under two flags (`output_attentions`,
//! gradient checkpointing in training). Here `check` runs per class, through the `ide` layer as
//! the command line and the editor do, on each labelled modeling file of transformers' source
//! (`$STATICFX_TRANSFORMERS_ROOT`, the directory holding `transformers/`; skipped with a note
//! when unset), and the test asserts:
//!
//! * every line where Dynamo breaks is reported, with Dynamo's gb id where staticfx has a rule
//!   for it;
//! * on the classes Dynamo ran (a finding belongs to the classes whose traced forward reaches
//!   it, as `check` names them), no FX1xx line Dynamo does not break at, unless Dynamo breaks
//!   there under a flag and the message names that flag.
//!
//! What does not hold yet is listed by file in `KNOWN_MISSED` and `KNOWN_FALSE_ALARMS`; the
//! test fails when a listed case starts to pass too, so the lists stay exact.
//!
//! `STATICFX_HF_MODELS=ctrl,led` checks only those model types (and their entries of the two
//! lists), for iterating on one file.
mod corpus_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use corpus_support::hf::{
    check, class_of_lines, env_list, expected_json, join, known_ids, reached_from, reported,
    settings, transformers_root, Found,
};
use rayon::prelude::*;
use serde_json::Value;
use staticfx::ide::Settings;

/// (model type, line) where Dynamo breaks and `check` does not report it.
const KNOWN_MISSED: &[(&str, usize)] = &[];

/// (model type, line) of an FX1xx finding Dynamo does not confirm.
const KNOWN_FALSE_ALARMS: &[(&str, usize)] = &[
    // `logger.warning_once` under `if padding_len > 0:`, a condition on the sequence length:
    // per class the length is symbolic and both sides are traced; 0 for the labelled 8 tokens
    // and window 4, and no label pads the input yet
    ("longformer", 1348),
    ("led", 1328),
    // the generator over `all_attentions` under `output_attentions` (led: also under
    // `padding_len > 0`): FX111 says Dynamo meets it in a frame run eagerly after a break in
    // the layer loop; Dynamo's `output_attentions` run compiles it
    ("led", 1500),
    ("longformer", 1214),
    // FX102 GB0033 on `torch.arange(max_num_global_attn_indices)`, the first use of
    // `num_global_attn_indices.max()` as a size (later uses trace once Dynamo resumed with its
    // value): the finding says "only when `is_global_attn` is true", and the labelled run gives
    // no global-attention tokens (a one-element tensor as a size breaks there on torch 2.15,
    // `tests/fixtures/breaks/size_from_tensor.py`)
    ("led", 505),
    ("longformer", 862),
    // `np.random.permutation` in `_bigbird_block_rand_mask_with_head`, reached through a loop
    // over a run-time count whose body was skipped before (it is traced once now): the finding
    // is a possible break, only when `from_seq_len in [1024, 3072, 4096]` holds, under gradient
    // checkpointing, and the labelled run takes neither
    ("big_bird", 1021),
];

/// The words a finding's message uses for each flag of the labels.
const CONDITION_WORDS: &[(&str, &str)] = &[
    ("output_attentions", "output_attentions"),
    ("gradient_checkpointing", "gradient checkpointing"),
    // a `global_attention_mask` makes Longformer's and LED's `is_global_attn` true
    ("global_attention", "`is_global_attn` is true"),
];

#[derive(Default)]
struct Tally {
    break_lines: usize,
    found_lines: usize,
    clean_files: usize,
    clean_files_with_fx1: usize,
    missed: BTreeSet<(String, usize)>,
    false_alarms: BTreeSet<(String, usize)>,
    rows: Vec<String>,
}

#[test]
fn breaks_on_real_modeling_files() {
    let Some(root) = transformers_root() else {
        return;
    };
    let labels = expected_json("hf_breaks.json");
    let settings = settings(&root);
    let ids = known_ids();
    let mut tally = Tally::default();
    let only = env_list("STATICFX_HF_MODELS");
    let checked = check_labelled_files(&root, &labels, &settings, only.as_ref());
    for model in labels["models"].as_array().unwrap() {
        let Some(breaks) = model["breaks"].as_array() else {
            continue;
        };
        let name = model["model_type"].as_str().unwrap().to_string();
        if only.as_ref().is_some_and(|o| !o.contains(&name)) {
            continue;
        }
        let file = model["file"].as_str().unwrap().to_string();
        let path = root.join("transformers").join(&file);
        let found = &checked[&file];
        let text = std::fs::read_to_string(&path).unwrap();
        let classes = class_of_lines(&text);
        let ran: BTreeSet<&str> = model["classes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();

        // every default-config break line, with its id where a rule has it
        let mut dynamo_lines = BTreeSet::new();
        for b in breaks {
            let Some(line) = b["line"].as_u64().map(|l| l as usize) else {
                continue;
            };
            if !dynamo_lines.insert(line) {
                continue;
            }
            let id = b["gb_id"].as_str().unwrap_or("");
            tally.break_lines += 1;
            if reported(found, line, id, &ids) {
                tally.found_lines += 1;
            } else {
                tally.missed.insert((name.clone(), line));
            }
        }

        // a finding Dynamo does not confirm: in a class it ran (or module level), not a break
        // line, and not a flagged break whose message names the flag
        let mut flagged: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
        for (cond, res) in model["flags"].as_object().unwrap() {
            for b in res["breaks"].as_array().into_iter().flatten() {
                if let Some(line) = b["line"].as_u64() {
                    flagged.entry(line as usize).or_default().push(cond);
                }
            }
        }
        let mut ours = BTreeSet::new();
        let mut extra = BTreeSet::new();
        for f in found {
            let (line, _, _, message, _, _) = f;
            ours.insert(*line);
            if dynamo_lines.contains(line) {
                continue;
            }
            if !reached_from(&classes, f, &ran) {
                continue;
            }
            let named = flagged.get(line).is_some_and(|conds| {
                conds.iter().any(|c| {
                    CONDITION_WORDS
                        .iter()
                        .any(|(k, w)| k == c && message.contains(w))
                })
            });
            if !named {
                extra.insert(*line);
            }
        }
        if dynamo_lines.is_empty() {
            tally.clean_files += 1;
            if !extra.is_empty() {
                tally.clean_files_with_fx1 += 1;
            }
        }
        for line in &extra {
            tally.false_alarms.insert((name.clone(), *line));
        }
        let agree = extra.is_empty() && dynamo_lines.iter().all(|l| ours.contains(l));
        tally.rows.push(format!(
            "| {name} | {file} | {} | {} | {} |",
            join(&dynamo_lines),
            join(&ours),
            if agree { "yes" } else { "no" }
        ));
    }

    eprintln!("| model | file | Dynamo break lines | staticfx FX1xx lines | agree |");
    eprintln!("| --- | --- | --- | --- | --- |");
    for r in &tally.rows {
        eprintln!("{r}");
    }
    eprintln!(
        "break lines found: {} of {}; clean files with an unconfirmed FX1xx: {} of {}",
        tally.found_lines, tally.break_lines, tally.clean_files_with_fx1, tally.clean_files
    );

    let listed = |list: &[(&str, usize)]| -> BTreeSet<(String, usize)> {
        list.iter()
            .filter(|(m, _)| only.as_ref().is_none_or(|o| o.contains(*m)))
            .map(|(m, l)| (m.to_string(), *l))
            .collect()
    };
    let (missed, false_alarms) = (listed(KNOWN_MISSED), listed(KNOWN_FALSE_ALARMS));
    assert_eq!(
        tally.missed, missed,
        "break lines not reported (left) vs KNOWN_MISSED (right)"
    );
    assert_eq!(
        tally.false_alarms, false_alarms,
        "unconfirmed FX1xx lines (left) vs KNOWN_FALSE_ALARMS (right)"
    );
}

/// `check` of every labelled file (of the model types `only` keeps), by file. The files are
/// independent, so they are checked on rayon's pool: one after another they take most of
/// this suite's time.
fn check_labelled_files(
    root: &Path,
    labels: &Value,
    settings: &Settings,
    only: Option<&BTreeSet<String>>,
) -> BTreeMap<String, Vec<Found>> {
    let files: BTreeSet<String> = labels["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["breaks"].is_array())
        .filter(|m| only.is_none_or(|o| o.contains(m["model_type"].as_str().unwrap())))
        .map(|m| m["file"].as_str().unwrap().to_string())
        .collect();
    files
        .into_par_iter()
        .map(|file| {
            let found = check(&root.join("transformers").join(&file), settings);
            (file, found)
        })
        .collect()
}

/// Per-class mode on a file of its own: a `config` parameter gets the config class's defaults
/// (from the annotation, a class-body `config:` annotation, or the module's one config class),
/// `layer_idx` the first layer; a class that is not a configuration stays unknown.
#[test]
fn per_class_mode_builds_a_default_config() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf/default_config.py");
    let shapes = staticfx::ide::on_large_stack("analysis", move || {
        let a = staticfx::analysis::analyze_file(&path, &Default::default()).unwrap();
        let json: Value =
            serde_json::from_str(&staticfx::render::json::render(&a.project, &a.graphs)).unwrap();
        let mut out: BTreeMap<(String, String), String> = BTreeMap::new();
        for g in json["graphs"].as_array().unwrap() {
            for n in g["nodes"].as_array().unwrap() {
                out.insert(
                    (
                        g["name"].as_str().unwrap().to_string(),
                        n["name"].as_str().unwrap().to_string(),
                    ),
                    n["shape"].to_string(),
                );
            }
        }
        out
    })
    .unwrap();
    let shape = |g: &str, n: &str| {
        shapes
            .get(&(g.to_string(), n.to_string()))
            .cloned()
            .unwrap_or_else(|| panic!("no node {n} in {g}: {shapes:?}"))
    };
    // no annotation: the module's one config class
    assert_eq!(shape("TinyMLP.forward", "up"), r#"["s0","11008"]"#);
    // `config: TinyConfig`; `layer_idx` 0 takes the first layer's branch; the layer keeps no
    // `self.config`, and its `hidden_states` is still the convention's `[batch, seq, hidden]`
    assert_eq!(
        shape("TinyLayer.forward", "q_proj"),
        r#"["s0","s1","4096"]"#
    );
    assert_eq!(shape("TinyLayer.forward", "mul"), r#"["s0","s1","4096"]"#);
    // the class-body annotation of the base, and num_hidden_layers=2 from the defaults
    assert_eq!(
        shape("TinyModel.forward", "layers_1_mlp_down"),
        r#"["s0","s1","4096"]"#
    );
    // an annotation naming a plain class: the argument stays unknown (not the module's
    // config, which has no `width`), so `in_features` is unknown and the output width is not
    assert_eq!(shape("NotAConfig.forward", "fc"), r#"["s0","2"]"#);
}

/// A layer built on its own sees the experts implementation its module's model would pick:
/// transformers' default (`grouped_mm`), unless a class of the module overrides
/// `get_correct_experts_implementation` (openai_privacy_filter's model defaults to `eager`, and
/// Dynamo then meets the eager loop's `nonzero`).
#[test]
fn a_layer_sees_the_experts_implementation_its_model_picks() {
    let module = |chooser: &str| {
        format!(
            "import torch\nimport torch.nn as nn\n\n\nclass PreTrainedConfig:\n    pass\n\n\nclass TinyConfig(PreTrainedConfig):\n    def __init__(self, hidden_size=8):\n        self.hidden_size = hidden_size\n\n\nclass TinyExperts(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n        self.config = config\n        self.proj = nn.Linear(config.hidden_size, config.hidden_size)\n\n    def forward(self, hidden_states):\n        if self.config._experts_implementation_internal == \"eager\":\n            return torch.tanh(self.proj(hidden_states))\n        return torch.relu(self.proj(hidden_states))\n\n\nclass TinyPreTrainedModel(nn.Module):\n    config: TinyConfig\n{chooser}"
        )
    };
    let eager_chooser = "\n    def get_correct_experts_implementation(self, requested_experts):\n        return \"eager\" if requested_experts is None else requested_experts\n";
    let targets = |src: String| -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("modeling_tiny.py");
        std::fs::write(&path, src).unwrap();
        staticfx::ide::on_large_stack("analysis", move || {
            let a = staticfx::analysis::analyze_file(&path, &Default::default()).unwrap();
            let g = a
                .graphs
                .iter()
                .find(|g| g.name == "TinyExperts.forward")
                .expect("TinyExperts is analysed");
            g.graph
                .order
                .iter()
                .map(|&n| g.graph.node(n).target.clone())
                .collect()
        })
        .unwrap()
    };
    let with_override = targets(module(eager_chooser));
    assert!(
        with_override.iter().any(|t| t == "torch.tanh"),
        "{with_override:?}"
    );
    let default = targets(module(""));
    assert!(default.iter().any(|t| t == "torch.relu"), "{default:?}");
}
