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

use serde_json::Value;
use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};
use staticfx::semantic::environment::{DiscoveryRequest, EnvironmentHandle};

/// The reason of a model whose recorded inputs `InputSpec` cannot parse yet.
const NEEDS_VALUES: &str = "needs non-tensor inputs (issue 42 item 3)";

/// The reason of a model with an input no Python literal spells (a flex-attention `BlockMask`),
/// recorded as `NAME=<BlockMask>`: no `--input` text can give it.
const NOT_LITERAL: &str = "an input has no Python-literal spelling";

/// The test classes (`file::class` of diffusers' tests) whose replay differs from the recording,
/// each with what differs. Held exactly both ways.
const KNOWN_DIFFERENT: &[(&str, &str)] = &[
    (
        "models/transformers/test_models_transformer_anyflow.py::TestAnyFlowTransformer3DCompile",
        "calls equal by name and class; shapes unknown from #15 blocks.0.attn1.to_out.0 (Linear): 20 of 39 calls unknown; output shape not known",
    ),
    (
        "models/transformers/test_models_transformer_anyflow_far.py::TestAnyFlowFARTransformer3DCompile",
        NOT_LITERAL,
    ),
    (
        "models/transformers/test_models_transformer_ltx2.py::TestLTX2TransformerCompile",
        "calls equal by name and class; shapes unknown from #43 transformer_blocks.0.attn1.to_out.0 (Linear): 78 of 138 calls unknown; output shape not known",
    ),
    (
        "models/transformers/test_models_transformer_nucleusmoe_image.py::TestNucleusMoEImageTransformerCompile",
        "calls equal by name and class; shapes unknown from #13 transformer_blocks.0.attn.to_out.0 (Linear): 20 of 40 calls unknown; output shape not known",
    ),
    (
        "models/transformers/test_models_transformer_qwenimage.py::TestQwenImageTransformerCompile",
        "calls equal by name and class; shapes unknown from #17 transformer_blocks.0.attn.to_out.0 (Linear): 32 of 55 calls unknown; output shape not known",
    ),
    (
        "models/transformers/test_models_transformer_wan_animate_2.py::TestWanAnimate2TransformerCompile",
        NOT_LITERAL,
    ),
    (
        "models/transformers/test_models_transformer_z_image.py::TestZImageTransformerCompile",
        "calls equal by name and class; shapes unknown from #5 noise_refiner.0.attention.to_q (Linear): 26 of 35 calls unknown; output [] (recorded [[16,1,16,16]])",
    ),

];

use corpus_support::diffusers::{diffusers_root, user_venv};

/// A leaf-module call: qualified name, class, output shape (JSON: a list of dims, or null).
type Call = (String, String, Value);
/// A break site: file relative to the diffusers package (`?` outside it), line.
type Site = (String, usize);

/// What staticfx built for one model.
struct Built {
    calls: Vec<Call>,
    output: Vec<Value>,
    breaks: Vec<Site>,
    /// Analysis limits (FX9xx) in any file, and FX3xx findings: shown, not compared.
    limits: Vec<String>,
    raises: Vec<String>,
}

fn build(
    root: &Path,
    venv: &Path,
    file: &Path,
    entry: &str,
    inputs: Vec<InputSpec>,
) -> Result<Built, String> {
    let env = EnvironmentHandle::lazy(DiscoveryRequest {
        python: Some(venv.to_path_buf()),
        root: root.to_path_buf(),
        virtual_env: None,
        path_var: None,
    });
    let opts = GraphOptions {
        root: Some(root.to_path_buf()),
        entry: Some(entry.to_string()),
        inputs,
        environment: Some(env),
        time_limit: Some(std::time::Duration::from_secs(300)),
        ..Default::default()
    };
    let package = root.join("diffusers");
    let file = file.to_path_buf();
    staticfx::ide::on_large_stack("diffusers-compile", move || {
        let a = analyze_file(&file, &opts).map_err(|e| e.to_string())?;
        let g = a.graphs.first().ok_or("no graph")?;
        if let Some(e) = &g.error {
            let f = a.project.file(e.file);
            let line = f.text[..e.span.start.min(f.text.len())]
                .matches('\n')
                .count()
                + 1;
            let name = f.path.strip_prefix(&package).unwrap_or(&f.path);
            return Err(format!(
                "stopped at {}:{line}: {} {}",
                name.display(),
                e.code,
                e.message
            ));
        }
        let classes: std::collections::HashMap<&str, &str> = g
            .modules
            .iter()
            .map(|m| (m.path.as_str(), m.class.as_str()))
            .collect();
        let json: Value =
            serde_json::from_str(&staticfx::render::json::render(&a.project, &a.graphs)).unwrap();
        let nodes = json["graphs"][0]["nodes"].as_array().unwrap();
        let shapes: std::collections::HashMap<&str, &Value> = nodes
            .iter()
            .map(|n| (n["name"].as_str().unwrap(), &n["shape"]))
            .collect();
        let mut calls = Vec::new();
        let mut output = Vec::new();
        for n in nodes {
            let target = n["target"].as_str().unwrap_or("");
            match n["op"].as_str().unwrap_or("") {
                "call_module" => calls.push((
                    target.to_string(),
                    classes.get(target).copied().unwrap_or("?").to_string(),
                    n["shape"].clone(),
                )),
                "output" => {
                    let mut refs = Vec::new();
                    collect_refs(&n["args"], &mut refs);
                    // a node's shape, null where staticfx does not know it
                    output = refs
                        .iter()
                        .filter_map(|r| shapes.get(r.as_str()).copied())
                        .cloned()
                        .collect();
                }
                _ => {}
            }
        }
        let site = |f: &staticfx::traced::Finding| {
            let path = &a.project.file(f.file).path;
            let rel = path
                .strip_prefix(&package)
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_else(|_| "?".to_string());
            (rel, f.line)
        };
        let mut breaks: Vec<Site> = g
            .breaks
            .iter()
            .filter(|f| f.code.starts_with("FX1"))
            .map(&site)
            .collect();
        breaks.sort();
        breaks.dedup();
        let raises = g
            .breaks
            .iter()
            .filter(|f| f.rule.raises())
            .map(|f| {
                let (file, line) = site(f);
                format!("{file}:{line} {} {}", f.code, f.message)
            })
            .collect();
        let limits: Vec<String> = a
            .diagnostics
            .iter()
            .filter(|d| d.code.starts_with("FX9"))
            .map(|d| {
                let f = a.project.file(d.file);
                let line = f.text[..d.span.start.min(f.text.len())]
                    .matches('\n')
                    .count()
                    + 1;
                let name = f.path.strip_prefix(&package).unwrap_or(&f.path);
                format!("{}:{line} {} {}", name.display(), d.code, d.message)
            })
            .collect();
        Ok(Built {
            calls,
            output,
            breaks,
            limits,
            raises,
        })
    })?
}

/// The tensor shapes of a recorded output field, in order: a shape (a list of dims), or a list
/// of them (a field holding a list of tensors); null items left out.
fn flatten_shapes(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(items) if items.iter().any(|x| x.is_array() || x.is_null()) => {
            items.iter().for_each(|x| flatten_shapes(x, out))
        }
        Value::Array(_) => out.push(v.clone()),
        _ => {}
    }
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if m.contains_key("node") => {
            out.push(m["node"].as_str().unwrap_or("").to_string())
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        Value::Object(m) => m.values().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

/// The pairs of a longest common subsequence of `a` and `b` by name and class.
fn lcs_pairs(a: &[Call], b: &[Call]) -> Vec<(usize, usize)> {
    let same = |i: usize, j: usize| a[i].0 == b[j].0 && a[i].1 == b[j].1;
    let (n, m) = (a.len(), b.len());
    let mut best = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            best[i][j] = if same(i, j) {
                best[i + 1][j + 1] + 1
            } else {
                best[i + 1][j].max(best[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut pairs) = (0, 0, Vec::new());
    while i < n && j < m {
        if same(i, j) {
            pairs.push((i, j));
            (i, j) = (i + 1, j + 1);
        } else if best[i + 1][j] >= best[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

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

/// What differs between a built model and its recording, in a few words: the first call that
/// differs (by name and class, else by shape: unknown or wrong), the output, the breaks.
fn describe(want: &[Call], got: &Built, want_output: &[Value], want_breaks: &[Site]) -> String {
    let mut parts = Vec::new();
    let names = |c: &[Call]| {
        c.iter()
            .map(|(n, k, _)| (n.clone(), k.clone()))
            .collect::<Vec<_>>()
    };
    if names(want) != names(&got.calls) {
        let i = (0..want.len().max(got.calls.len()))
            .find(|&i| want.get(i).map(|c| (&c.0, &c.1)) != got.calls.get(i).map(|c| (&c.0, &c.1)))
            .unwrap_or(0);
        let name =
            |c: Option<&Call>| c.map_or("nothing".to_string(), |c| format!("{} ({})", c.0, c.1));
        parts.push(format!(
            "calls differ from #{i}: recorded {}, built {} ({} calls recorded, {} built)",
            name(want.get(i)),
            name(got.calls.get(i)),
            want.len(),
            got.calls.len()
        ));
    } else if let Some(i) = (0..want.len()).find(|&i| want[i].2 != got.calls[i].2) {
        let verdicts: Vec<Shape> = (0..want.len())
            .map(|j| shape_verdict(&got.calls[j].2, &want[j].2))
            .collect();
        let unknown = verdicts.iter().filter(|v| **v == Shape::Unknown).count();
        let wrong: Vec<usize> = (0..want.len())
            .filter(|&j| verdicts[j] == Shape::Wrong)
            .collect();
        let mut text =
            format!(
            "calls equal by name and class; shapes {} from #{i} {} ({}): {unknown} of {} calls \
             unknown",
            if verdicts[i] == Shape::Wrong { "wrong" } else { "unknown" },
            want[i].0,
            want[i].1,
            want.len(),
        );
        if let Some(&j) = wrong.first() {
            text += &format!(
                ", {} wrong (first #{j} {}: {} where eager has {})",
                wrong.len(),
                want[j].0,
                got.calls[j].2,
                want[j].2
            );
        }
        parts.push(text);
    }
    if got.output != want_output {
        let unknown = got.output.len() == want_output.len()
            && got
                .output
                .iter()
                .zip(want_output)
                .all(|(g, w)| shape_verdict(g, w) != Shape::Wrong);
        parts.push(if unknown {
            "output shape not known".to_string()
        } else {
            format!(
                "output {} (recorded {})",
                Value::from(got.output.to_vec()),
                Value::from(want_output.to_vec())
            )
        });
    }
    if got.breaks != want_breaks {
        parts.push(format!(
            "breaks {} where Dynamo has {}",
            short(&got.breaks),
            short(want_breaks)
        ));
    }
    parts.join("; ")
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Equal,
    /// None shown, or a dim symbolic (`"?"`, `"s0"`) where eager has a number.
    Unknown,
    /// Both known and different: a shape staticfx shows must never be this.
    Wrong,
}

/// A shape staticfx shows (JSON: dims as numbers, or strings where symbolic; null when unknown)
/// against eager's.
fn shape_verdict(got: &Value, want: &Value) -> Shape {
    match (got.as_array(), want.as_array()) {
        _ if got == want => Shape::Equal,
        (None, _) => Shape::Unknown,
        (Some(g), Some(w)) if g.len() == w.len() => {
            if g.iter().zip(w).any(|(a, b)| a.is_number() && a != b) {
                Shape::Wrong
            } else {
                Shape::Unknown
            }
        }
        _ => Shape::Wrong,
    }
}

/// The recorded calls, `[name, class, shape]` each.
fn recorded_calls(model: &Value) -> Vec<Call> {
    model["eager"]["leaves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l[0].as_str().unwrap().to_string(),
                l[1].as_str().unwrap().to_string(),
                l[2].clone(),
            )
        })
        .collect()
}

/// Dynamo's breaks as sites: the innermost frame inside diffusers (`?` without one).
fn dynamo_sites(model: &Value) -> Vec<Site> {
    let mut sites: Vec<Site> = model["dynamo"]["breaks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| match (b["file"].as_str(), b["line"].as_u64()) {
            (Some(f), Some(l)) => (f.to_string(), l as usize),
            _ => ("?".to_string(), 0),
        })
        .collect();
    sites.sort();
    sites.dedup();
    sites
}

fn short(sites: &[Site]) -> String {
    if sites.is_empty() {
        return "none".into();
    }
    sites
        .iter()
        .map(|(f, l)| format!("{}:{l}", f.rsplit('/').next().unwrap_or(f)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn diffusers_compile_tests_replay_their_recordings() {
    let (Some(root), Some(venv)) = (diffusers_root(), user_venv()) else {
        return;
    };
    // `STATICFX_DIFFUSERS_RECORDINGS` reads other recordings (a new run of the script)
    let path = std::env::var_os("STATICFX_DIFFUSERS_RECORDINGS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/expected/diffusers/compile_tests.json")
        });
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let only: Option<Vec<String>> = std::env::var("STATICFX_DIFFUSERS_ONLY")
        .ok()
        .filter(|o| !o.is_empty())
        .map(|o| o.split(',').map(String::from).collect());
    let diff = std::env::var_os("STATICFX_DIFFUSERS_DIFF").is_some();
    let models = recorded["models"].as_array().unwrap();
    for (test, _) in KNOWN_DIFFERENT {
        assert!(
            models
                .iter()
                .any(|m| m["test"] == *test && m["status"] == "ok"),
            "{test} is listed but has no recording"
        );
    }
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
        let mut want_output = Vec::new();
        for field in model["eager"]["output"].as_object().unwrap().values() {
            flatten_shapes(field, &mut want_output);
        }
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
            observed.push(format!(
                "    (\n        \"{test}\",\n        NOT_LITERAL,\n    ),"
            ));
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
                observed.push(format!(
                    "    (\n        \"{test}\",\n        NEEDS_VALUES,\n    ),"
                ));
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
        let got = build(&root, &venv, &file, entry, inputs);
        let secs = started.elapsed().as_secs_f64();
        let got = match got {
            Ok(got) => got,
            Err(e) => {
                rows.push(format!(
                    "| {label} | not built ({secs:.1}s): {e} | | {} Dynamo | |",
                    short(&want_breaks)
                ));
                observed.push(format!(
                    "    (\n        \"{test}\",\n        {:?},\n    ),",
                    format!("not built: {e}")
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
        let equal = pairs
            .iter()
            .filter(|(i, j)| want_calls[*i].2 == got.calls[*j].2)
            .count();
        let calls_agree = got.calls == want_calls;
        let output_agrees = got.output == want_output;
        let breaks_agree = got.breaks == want_breaks;
        let agrees = calls_agree && output_agrees && breaks_agree;
        let built_note = if got.calls.len() == want_calls.len() {
            String::new()
        } else {
            format!(" ({} built)", got.calls.len())
        };
        let mut notes = Vec::new();
        if !got.limits.is_empty() {
            notes.push(format!("{} FX9xx", got.limits.len()));
        }
        if !got.raises.is_empty() {
            notes.push(format!("FX3xx {:?}", got.raises));
        }
        rows.push(format!(
            "| {label} | {equal}/{}{built_note} | {} | {} / {} | {secs:.1}s {} |",
            want_calls.len(),
            if output_agrees {
                "equal".to_string()
            } else {
                format!(
                    "{} vs {}",
                    Value::from(got.output.clone()),
                    Value::from(want_output.clone())
                )
            },
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
            let n = want_calls.len().max(got.calls.len());
            if let Some(i) = (0..n).find(|&i| want_calls.get(i) != got.calls.get(i)) {
                eprintln!("  {class}: leaf calls differ from #{i}:");
                for k in i.saturating_sub(2)..(i + 6).min(n) {
                    eprintln!(
                        "    #{k}: recorded {:<60} built {:?}",
                        want_calls
                            .get(k)
                            .map(|c| format!("{} {} {}", c.0, c.1, c.2))
                            .unwrap_or_default(),
                        got.calls.get(k)
                    );
                }
            }
        }
        // a shape shown must be eager's or unknown, listed or not
        let wrong_calls: Vec<String> = pairs
            .iter()
            .filter(|(i, j)| shape_verdict(&got.calls[*j].2, &want_calls[*i].2) == Shape::Wrong)
            .map(|(i, j)| {
                format!(
                    "{} {} (eager {})",
                    want_calls[*i].0, got.calls[*j].2, want_calls[*i].2
                )
            })
            .collect();
        let wrong_output = got.output.len() == want_output.len()
            && got
                .output
                .iter()
                .zip(&want_output)
                .any(|(g, w)| shape_verdict(g, w) == Shape::Wrong);
        if !wrong_calls.is_empty() || wrong_output {
            failures.push(format!(
                "{test}: wrong shapes shown: calls {wrong_calls:?}, output {} (eager {})",
                Value::from(got.output.clone()),
                Value::from(want_output.clone())
            ));
        }
        let why = describe(&want_calls, &got, &want_output, &want_breaks);
        if !agrees {
            observed.push(format!(
                "    (\n        \"{test}\",\n        {why:?},\n    ),"
            ));
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
    eprintln!(
        "diffusers {} / torch {} compile tests (diffusers' tests at {})\n| model (test class, how it compiles) | calls equal/total | output shape | breaks staticfx / Dynamo | notes |\n|---|---|---|---|---|",
        recorded["diffusers"].as_str().unwrap_or("?"),
        recorded["torch"].as_str().unwrap_or("?"),
        recorded["tests_rev"].as_str().unwrap_or("?")
    );
    for r in &rows {
        eprintln!("{r}");
    }
    eprintln!("{agreeing} of {} replayed models agree", seen.len());
    if std::env::var_os("STATICFX_DIFFUSERS_LIST").is_some() {
        eprintln!(
            "the models that differ, as KNOWN_DIFFERENT entries:\n{}",
            observed.join("\n")
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
