//! diffusers' own compile tests, replayed statically (issue 42, item 2).
//!
//! diffusers tests `torch.compile` on its models with `TorchCompileTesterMixin`: each test class
//! builds `model_class(**get_init_dict())` in eval mode and compiles `model(**get_dummy_inputs())`
//! with `fullgraph=True`. `scripts/expect/gen_diffusers_compile_tests.py` recorded, for every such
//! test class, the init dict as an entry expression, the dummy inputs as `--input` text, eager
//! PyTorch's leaf-module calls and output shapes, and `torch._dynamo.explain`'s breaks
//! (`tests/expected/diffusers/compile_tests.json`). Here staticfx builds each model from its entry
//! in its diffusers file with those inputs and is held to the recording three ways:
//!
//! - the torch.nn leaf-module calls (`call_module` nodes), in order: qualified name and class,
//!   then output shape;
//! - the model output's tensor shapes, in order;
//! - the graph breaks: the lines of staticfx's FX1xx findings against the innermost frame inside
//!   diffusers of each break Dynamo reported, as (file, line) sets (none for a model Dynamo
//!   compiles in one graph, which every `fullgraph=True` test needs).
//!
//! A shape staticfx shows must be eager's or unknown (`"?"`, or none): a wrong one fails the test
//! whatever the lists say. It prints a table (model, calls equal/total, output shape equal, breaks
//! staticfx vs Dynamo) and holds [`KNOWN_DIFFERENT`] exactly: a model not listed must agree on all
//! three counts, and a listed model that now agrees fails the test too, so the list only shrinks.
//! An input whose text `InputSpec` does not parse yet (a Python value such as `fps=25.0` or
//! `img_shapes=[(1, 4, 4)]`, issue 42 item 3) makes its model different with [`NEEDS_VALUES`]; once
//! the parser takes it the test says so, and the entry gets what differs then. An input with no
//! literal spelling at all (a `BlockMask`) is [`NOT_LITERAL`].
//!
//! Needs diffusers' source (`$STATICFX_DIFFUSERS_ROOT`, the directory holding `diffusers/`) and the
//! user venv with huggingface_hub and transformers (`$STATICFX_USER_VENV`); skips with a note
//! without them. `STATICFX_DIFFUSERS_ONLY=Flux,Wan` builds only the models whose class name
//! contains one of those words, `STATICFX_DIFFUSERS_DIFF=1` prints where the leaf calls first
//! differ, `STATICFX_DIFFUSERS_RECORDINGS=FILE` reads another run of the script, and
//! `STATICFX_DIFFUSERS_LIST=1` prints the models that differ as `KNOWN_DIFFERENT` entries.

mod corpus_support;

use std::path::{Path, PathBuf};
use std::str::FromStr;

use corpus_support::replay::{
    assert_recorded, calls_cell, describe, dynamo_sites, equal_shapes, known_entry, lcs_pairs,
    output_cell, print_call_diff, recorded_calls, recorded_output, recording, report, short,
    wrong_shapes, Library, Shapes,
};
use serde_json::Value;
use staticfx::analysis::InputSpec;

/// The reason of a model whose recorded inputs `InputSpec` cannot parse yet.
const NEEDS_VALUES: &str = "needs non-tensor inputs (issue 42 item 3)";

/// The reason of a model with an input no Python literal spells (a flex-attention `BlockMask`),
/// recorded as `NAME=<BlockMask>`: no `--input` text can give it.
const NOT_LITERAL: &str = "an input has no Python-literal spelling";

/// The test classes (`file::class` of diffusers' tests) whose replay differs from the recording,
/// each with what differs. Held exactly both ways.
const KNOWN_DIFFERENT: &[(&str, &str)] = &[
    (
        "models/transformers/test_models_transformer_anyflow_far.py::TestAnyFlowFARTransformer3DCompile",
        NOT_LITERAL,
    ),
    (
        "models/transformers/test_models_transformer_wan_animate_2.py::TestWanAnimate2TransformerCompile",
        NOT_LITERAL,
    ),
];

use corpus_support::diffusers::{diffusers_root, user_venv};

#[test]
fn lcs_pairs_align_calls_by_name_and_class() {
    let call = |n: &str, c: &str| (n.to_string(), c.to_string(), Value::Null);
    let a = vec![call("a", "Linear"), call("b", "SiLU"), call("c", "Linear")];
    let b = vec![call("a", "Linear"), call("c", "Linear")];
    assert_eq!(lcs_pairs(&a, &b), vec![(0, 0), (2, 1)]);
    // the class counts: the same name with another class is not the same call
    let b = vec![call("a", "Conv2d")];
    assert!(lcs_pairs(&a, &b).is_empty());
}

#[test]
fn diffusers_compile_tests_replay_their_recordings() {
    let (Some(root), Some(venv)) = (diffusers_root(), user_venv()) else {
        return;
    };
    let library = Library {
        root: &root,
        package: "diffusers",
        venv: &venv,
        shapes: Shapes::Rendered,
    };
    // `STATICFX_DIFFUSERS_RECORDINGS` reads other recordings (a new run of the script)
    let path = std::env::var_os("STATICFX_DIFFUSERS_RECORDINGS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/expected/diffusers/compile_tests.json")
        });
    let recorded = recording(&path);
    let only: Option<Vec<String>> = std::env::var("STATICFX_DIFFUSERS_ONLY")
        .ok()
        .filter(|o| !o.is_empty())
        .map(|o| o.split(',').map(String::from).collect());
    let diff = std::env::var_os("STATICFX_DIFFUSERS_DIFF").is_some();
    let models = recorded["models"].as_array().unwrap();
    assert_recorded(models, "test", KNOWN_DIFFERENT);
    // whether `--input` takes Python values (issue 42 item 3) in this build
    let python_values = InputSpec::from_str("probe=False").is_ok();
    let mut failures = Vec::new();
    let mut rows = Vec::new();
    let mut agreeing = 0;
    let mut seen = Vec::new();
    // each differing model with what differs, as a KNOWN_DIFFERENT entry
    let mut observed: Vec<String> = Vec::new();
    for model in models {
        let test = model["test"].as_str().unwrap();
        let class = model["model"].as_str().unwrap_or("?");
        // the test class, and how diffusers runs its compile test
        let how = if model.get("skip").is_some() {
            ", test skipped"
        } else if model.get("xfail").is_some() {
            ", test xfail"
        } else if model["fullgraph"] == true {
            ", fullgraph"
        } else {
            ""
        };
        let label = format!(
            "{class} ({}{how})",
            test.rsplit("::").next().unwrap_or(test)
        );
        if model["status"] != "ok" {
            rows.push(format!(
                "| {label} | not recorded: {} | | | |",
                model["status"].as_str().unwrap()
            ));
            continue;
        }
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|w| class.contains(w.as_str())))
        {
            continue;
        }
        seen.push(test);
        let listed = KNOWN_DIFFERENT
            .iter()
            .find(|(t, _)| *t == test)
            .map(|(_, r)| *r);
        let want_calls = recorded_calls(model);
        let want_output = recorded_output(model);
        let want_breaks = dynamo_sites(model);
        let opaque: Vec<&str> = model["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["literal"] == false)
            .map(|i| i["text"].as_str().unwrap())
            .collect();
        if !opaque.is_empty() {
            rows.push(format!(
                "| {label} | not replayable: {opaque:?} | | {} Dynamo | |",
                short(&want_breaks)
            ));
            observed.push(known_entry(&format!("\"{test}\""), "NOT_LITERAL"));
            if listed != Some(NOT_LITERAL) {
                failures.push(format!("{test}: {opaque:?}; list it as `{NOT_LITERAL}`"));
            }
            continue;
        }
        // `num_frames=2` parses as a shape too: a parser that takes no Python value would give
        // a 1-D tensor of 2 elements where the test passes the int 2
        let parsed: Result<Vec<InputSpec>, String> = model["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                let t = i["text"].as_str().unwrap();
                if i["tensor"] == false && !python_values {
                    return Err(format!("`{t}`: `--input` takes shapes only"));
                }
                InputSpec::from_str(t).map_err(|e| format!("`{t}`: {e}"))
            })
            .collect();
        let inputs = match parsed {
            Ok(inputs) => inputs,
            Err(e) => {
                rows.push(format!(
                    "| {label} | inputs do not parse: {e} | | {} Dynamo | |",
                    short(&want_breaks)
                ));
                observed.push(known_entry(&format!("\"{test}\""), "NEEDS_VALUES"));
                match listed {
                    Some(NEEDS_VALUES) => {}
                    Some(r) => failures.push(format!(
                        "{test}: listed as `{r}`, but its inputs do not parse: {e}"
                    )),
                    None => failures.push(format!(
                        "{test}: its inputs do not parse ({e}); list it as `{NEEDS_VALUES}`"
                    )),
                }
                continue;
            }
        };
        let file = root.join("diffusers").join(model["file"].as_str().unwrap());
        let entry = model["entry"].as_str().unwrap();
        let started = std::time::Instant::now();
        let got = library.build(&file, entry, inputs);
        let secs = started.elapsed().as_secs_f64();
        let got = match got {
            Ok(got) => got,
            Err(e) => {
                rows.push(format!(
                    "| {label} | not built ({secs:.1}s): {e} | | {} Dynamo | |",
                    short(&want_breaks)
                ));
                observed.push(known_entry(
                    &format!("\"{test}\""),
                    &format!("{:?}", format!("not built: {e}")),
                ));
                match listed {
                    None => failures.push(format!("{test}: not built: {e}")),
                    Some(NEEDS_VALUES) => failures.push(format!(
                        "{test}: its inputs parse now, and it is not built: {e}"
                    )),
                    Some(_) => {}
                }
                continue;
            }
        };
        let pairs = lcs_pairs(&want_calls, &got.calls);
        let equal = equal_shapes(&pairs, &want_calls, &got);
        let calls_agree = got.calls == want_calls;
        let output_agrees = got.output == want_output;
        let breaks_agree = got.breaks == want_breaks;
        let agrees = calls_agree && output_agrees && breaks_agree;
        let mut notes = Vec::new();
        if !got.limits.is_empty() {
            notes.push(format!("{} FX9xx", got.limits.len()));
        }
        if !got.raises.is_empty() {
            notes.push(format!("FX3xx {:?}", got.raises));
        }
        rows.push(format!(
            "| {label} | {} | {} | {} / {} | {secs:.1}s {} |",
            calls_cell(equal, &want_calls, &got),
            output_cell(&got, &want_output),
            short(&got.breaks),
            short(&want_breaks),
            notes.join(", ")
        ));
        if diff {
            for l in &got.limits {
                eprintln!("  {class}: {l}");
            }
        }
        if diff && !calls_agree {
            print_call_diff(class, &want_calls, &got);
        }
        // a shape shown must be eager's or unknown, listed or not
        if let Some(wrong) = wrong_shapes(&pairs, &want_calls, &got, &want_output) {
            failures.push(format!("{test}: {wrong}"));
        }
        let why = describe(&want_calls, &got, &want_output, &want_breaks);
        if !agrees {
            observed.push(known_entry(&format!("\"{test}\""), &format!("{why:?}")));
        }
        match (agrees, listed) {
            (true, None) => agreeing += 1,
            (true, Some(r)) => failures.push(format!(
                "{test} now agrees: remove it from KNOWN_DIFFERENT (was: {r})"
            )),
            (false, None) => failures.push(format!(
                "{test}: calls equal {equal}/{} (in order: {calls_agree}), output equal \
                 {output_agrees}, breaks {} vs Dynamo {}",
                want_calls.len(),
                short(&got.breaks),
                short(&want_breaks)
            )),
            (false, Some(NEEDS_VALUES)) => failures.push(format!(
                "{test}: its inputs parse now; list it with what differs: {why:?}"
            )),
            (false, Some(_)) => {}
        }
    }
    report(
        &format!(
            "diffusers {} / torch {} compile tests (diffusers' tests at {})\n| model (test class, how it compiles) | calls equal/total | output shape | breaks staticfx / Dynamo | notes |",
            recorded["diffusers"].as_str().unwrap_or("?"),
            recorded["torch"].as_str().unwrap_or("?"),
            recorded["tests_rev"].as_str().unwrap_or("?")
        ),
        &rows,
        agreeing,
        seen.len(),
        std::env::var_os("STATICFX_DIFFUSERS_LIST").is_some(),
        &observed,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
