//! open_clip models, replayed statically against eager PyTorch and Dynamo (issue 42, item 4: a
//! held-out library, measured before anything was changed for it).
//!
//! `scripts/expect/gen_open_clip_recordings.py` built a few open_clip models from their configs
//! (`model_configs/NAME.json`, the class `create_model` picks, random weights) and recorded the
//! constructor call as an entry expression, the inputs as `--input` text, eager PyTorch's
//! leaf-module calls and output shapes, and `torch._dynamo.explain`'s breaks
//! (`tests/expected/open_clip/models.json`). Here staticfx builds each model from its entry in its
//! open_clip file with those inputs and is held to the recording three ways:
//!
//! - the torch.nn leaf-module calls (`call_module` nodes), in order: qualified name and class,
//!   then output shape;
//! - the output's tensor shapes, in order;
//! - the graph breaks: the lines of staticfx's FX1xx findings against the innermost frame inside
//!   open_clip of each break Dynamo reported, as (file, line) sets.
//!
//! A shape staticfx shows must be eager's or unknown: a wrong one fails the test whatever the
//! list says. It prints a table (model, calls equal/total, output shape equal, breaks staticfx vs
//! Dynamo) and holds [`KNOWN_DIFFERENT`] exactly: a model not listed must agree on all three, and
//! a listed model that now agrees fails the test too, so the list only shrinks.
//!
//! Needs open_clip's source (`$STATICFX_OPEN_CLIP_ROOT`, the directory holding `open_clip/`: its
//! unzipped wheel) and the user venv with timm (`$STATICFX_USER_VENV`), which open_clip's timm
//! towers import; skips with a note without them. `STATICFX_OPEN_CLIP_DIFF=1` prints where the
//! leaf calls first differ and the analysis limits, `STATICFX_OPEN_CLIP_LIST=1` prints the models
//! that differ as `KNOWN_DIFFERENT` entries.

mod corpus_support;

use std::path::{Path, PathBuf};

use corpus_support::replay::{
    assert_recorded, calls_cell, describe, dynamo_sites, equal_shapes, known_entry, lcs_pairs,
    output_cell, print_call_diff, recorded_calls, recorded_output, recording, report,
    shape_verdict, short, wrong_shapes, Library, Shape, Shapes,
};
use serde_json::Value;
use staticfx::analysis::InputSpec;

/// The recorded models whose replay differs from the recording, each with what differs. Held
/// exactly both ways. Before any change for open_clip all six differed in their output shapes
/// only (a numpy constant, `F.multi_head_attention_forward`, a dict output); none does now.
const KNOWN_DIFFERENT: &[(&str, &str)] = &[];

fn open_clip_root() -> Option<PathBuf> {
    let root = corpus_support::corpus_root("STATICFX_OPEN_CLIP_ROOT", "open_clip")?;
    let ok = root.join("open_clip/model.py").is_file();
    if !ok {
        eprintln!("skipped: STATICFX_OPEN_CLIP_ROOT holds no open_clip/model.py");
    }
    ok.then_some(root)
}

#[test]
fn shape_verdicts() {
    let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
    assert_eq!(shape_verdict(&v("[1,2]"), &v("[1,2]")), Shape::Equal);
    assert_eq!(shape_verdict(&v("null"), &v("[1,2]")), Shape::Unknown);
    assert_eq!(shape_verdict(&v("[1,\"s0\"]"), &v("[1,2]")), Shape::Unknown);
    assert_eq!(shape_verdict(&v("[1,3]"), &v("[1,2]")), Shape::Wrong);
    assert_eq!(shape_verdict(&v("[]"), &v("[1]")), Shape::Wrong);
    // a tuple output: items one by one
    assert_eq!(
        shape_verdict(&v("[[1,2],null]"), &v("[[1,2],null]")),
        Shape::Equal
    );
    assert_eq!(
        shape_verdict(&v("[[1,2],\"?\"]"), &v("[[1,2],null]")),
        Shape::Unknown
    );
    assert_eq!(
        shape_verdict(&v("[[1,3],null]"), &v("[[1,2],null]")),
        Shape::Wrong
    );
    assert_eq!(
        shape_verdict(&v("[[1,2],[4]]"), &v("[[1,2],null]")),
        Shape::Wrong
    );
}

#[test]
fn open_clip_models_replay_their_recordings() {
    let Some(root) = open_clip_root() else {
        return;
    };
    let Some(venv) = corpus_support::diffusers::user_venv() else {
        return;
    };
    let library = Library {
        root: &root,
        package: "open_clip",
        venv: &venv,
        shapes: Shapes::Meta,
    };
    let recorded = recording(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/open_clip/models.json"),
    );
    let models = recorded["models"].as_array().unwrap();
    assert_recorded(models, "model", KNOWN_DIFFERENT);
    let diff = std::env::var_os("STATICFX_OPEN_CLIP_DIFF").is_some();
    let mut failures = Vec::new();
    let mut rows = Vec::new();
    let mut observed = Vec::new();
    let mut agreeing = 0;
    let mut replayed = 0;
    for model in models {
        let name = model["model"].as_str().unwrap();
        let class = model["class"].as_str().unwrap_or("?");
        let label = format!("{name} ({class})");
        if model["status"] != "ok" {
            rows.push(format!(
                "| {label} | not recorded: {} | | |",
                model["status"].as_str().unwrap()
            ));
            continue;
        }
        replayed += 1;
        let listed = KNOWN_DIFFERENT
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, r)| *r);
        let want_calls = recorded_calls(model);
        let want_output = recorded_output(model);
        let want_breaks = dynamo_sites(model);
        let inputs: Vec<InputSpec> = model["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_str().unwrap().parse().unwrap())
            .collect();
        let file = root.join("open_clip").join(model["file"].as_str().unwrap());
        let entry = model["entry"].as_str().unwrap();
        let started = std::time::Instant::now();
        let got = library.build(&file, entry, inputs);
        let secs = started.elapsed().as_secs_f64();
        let got = match got {
            Ok(got) => got,
            Err(e) => {
                rows.push(format!(
                    "| {label} | not built ({secs:.1}s): {e} | | {} Dynamo |",
                    short(&want_breaks)
                ));
                let why = format!("not built: {e}");
                observed.push(known_entry(&format!("{name:?}"), &format!("{why:?}")));
                if listed.is_none() {
                    failures.push(format!("{name}: {why}"));
                }
                continue;
            }
        };
        let pairs = lcs_pairs(&want_calls, &got.calls);
        let equal = equal_shapes(&pairs, &want_calls, &got);
        let agrees =
            got.calls == want_calls && got.output == want_output && got.breaks == want_breaks;
        rows.push(format!(
            "| {label} | {} | {} | {} / {} | {secs:.1}s{} |",
            calls_cell(equal, &want_calls, &got),
            output_cell(&got, &want_output),
            short(&got.breaks),
            short(&want_breaks),
            if got.limits.is_empty() {
                String::new()
            } else {
                format!(", {} FX9xx", got.limits.len())
            }
        ));
        if diff {
            for l in &got.limits {
                eprintln!("  {name}: {l}");
            }
            print_call_diff(name, &want_calls, &got);
        }
        // a shape shown must be eager's or unknown, listed or not
        if let Some(wrong) = wrong_shapes(&pairs, &want_calls, &got, &want_output) {
            failures.push(format!("{name}: {wrong}"));
        }
        let why = describe(&want_calls, &got, &want_output, &want_breaks);
        if !agrees {
            observed.push(known_entry(&format!("{name:?}"), &format!("{why:?}")));
        }
        match (agrees, listed) {
            (true, None) => agreeing += 1,
            (true, Some(r)) => failures.push(format!(
                "{name} now agrees: remove it from KNOWN_DIFFERENT (was: {r})"
            )),
            (false, None) => failures.push(format!("{name}: {why}")),
            (false, Some(_)) => {}
        }
    }
    report(
        &format!(
            "open_clip {} / torch {}\n| model (class) | calls equal/total | output shape | breaks staticfx / Dynamo | notes |",
            recorded["open_clip"].as_str().unwrap_or("?"),
            recorded["torch"].as_str().unwrap_or("?"),
        ),
        &rows,
        agreeing,
        replayed,
        std::env::var_os("STATICFX_OPEN_CLIP_LIST").is_some(),
        &observed,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
