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

use serde_json::Value;
use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};
use staticfx::semantic::environment::{DiscoveryRequest, EnvironmentHandle};

/// The recorded models whose replay differs from the recording, each with what differs. Held
/// exactly both ways. Before any change for open_clip all six differed in their output shapes
/// only (a numpy constant, `F.multi_head_attention_forward`, a dict output); none does now.
const KNOWN_DIFFERENT: &[(&str, &str)] = &[];

/// A leaf-module call: qualified name, class, output shape (JSON: a list of dims, or null).
type Call = (String, String, Value);
/// A break site: file relative to the open_clip package (`?` outside it), line.
type Site = (String, usize);

struct Built {
    calls: Vec<Call>,
    output: Vec<Value>,
    breaks: Vec<Site>,
    /// Analysis limits (FX9xx): shown, not compared.
    limits: Vec<String>,
}

fn open_clip_root() -> Option<PathBuf> {
    let root = corpus_support::corpus_root("STATICFX_OPEN_CLIP_ROOT", "open_clip")?;
    let ok = root.join("open_clip/model.py").is_file();
    if !ok {
        eprintln!("skipped: STATICFX_OPEN_CLIP_ROOT holds no open_clip/model.py");
    }
    ok.then_some(root)
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
    let package = root.join("open_clip");
    let file = file.to_path_buf();
    staticfx::ide::on_large_stack("open-clip-models", move || {
        let a = analyze_file(&file, &opts).map_err(|e| e.to_string())?;
        let line_of = |file: staticfx::semantic::FileId, at: usize| {
            let f = a.project.file(file);
            let line = f.text[..at.min(f.text.len())].matches('\n').count() + 1;
            let name = f.path.strip_prefix(&package).unwrap_or(&f.path);
            format!("{}:{line}", name.display())
        };
        let g = a.graphs.first().ok_or("no graph")?;
        if let Some(e) = &g.error {
            return Err(format!(
                "stopped at {}: {} {}",
                line_of(e.file, e.span.start),
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
        // each node's shape from its meta: a tuple output (`nn.MultiheadAttention`'s) as the
        // list of its items' shapes, as the recording has it
        let shapes: std::collections::HashMap<&str, Value> = g
            .graph
            .nodes()
            .map(|(_, n)| (n.name.as_str(), meta_shape(&n.meta)))
            .collect();
        let mut calls = Vec::new();
        let mut output = Vec::new();
        for n in nodes {
            let target = n["target"].as_str().unwrap_or("");
            let name = n["name"].as_str().unwrap_or("");
            match n["op"].as_str().unwrap_or("") {
                "call_module" => calls.push((
                    target.to_string(),
                    classes.get(target).copied().unwrap_or("?").to_string(),
                    shapes.get(name).cloned().unwrap_or(Value::Null),
                )),
                "output" => {
                    let mut refs = Vec::new();
                    collect_refs(&n["args"], &mut refs);
                    output = refs
                        .iter()
                        .filter_map(|r| shapes.get(r.as_str()))
                        .cloned()
                        .collect();
                }
                _ => {}
            }
        }
        let mut breaks: Vec<Site> = g
            .breaks
            .iter()
            .filter(|f| f.code.starts_with("FX1"))
            .map(|f| {
                let path = &a.project.file(f.file).path;
                let rel = path
                    .strip_prefix(&package)
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_else(|_| "?".to_string());
                (rel, f.line)
            })
            .collect();
        breaks.sort();
        breaks.dedup();
        let limits = a
            .diagnostics
            .iter()
            .filter(|d| d.code.starts_with("FX9"))
            .map(|d| format!("{} {} {}", line_of(d.file, d.span.start), d.code, d.message))
            .collect();
        Ok(Built {
            calls,
            output,
            breaks,
            limits,
        })
    })?
}

/// A node's shape as the recording writes one: a tensor's dims (a symbolic dim as its text), a
/// tuple's items (a tensor's dims, `null` for None, `"?"` for anything else), null when unknown.
fn meta_shape(m: &staticfx::shapes::Meta) -> Value {
    use staticfx::shapes::Meta;
    let dims = |t: &staticfx::shapes::TensorMeta| match &t.shape {
        Some(s) => Value::from(
            s.iter()
                .map(|d| {
                    d.known()
                        .map_or_else(|| Value::from(d.to_string()), Value::from)
                })
                .collect::<Vec<_>>(),
        ),
        None => Value::Null,
    };
    match m {
        Meta::Tensor(t) => dims(t),
        Meta::Seq(items) => Value::from(
            items
                .iter()
                .map(|i| match i {
                    Meta::Tensor(t) => dims(t),
                    Meta::None => Value::Null,
                    _ => Value::from("?"),
                })
                .collect::<Vec<_>>(),
        ),
        _ => Value::Null,
    }
}

/// The shapes of a recorded output field: a shape (a list of dims, `[]` for a 0-d tensor), or a
/// list of them.
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

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Equal,
    /// None shown, or a dim symbolic where eager has a number.
    Unknown,
    /// Both known and different: a shape staticfx shows must never be this.
    Wrong,
}

/// A shape staticfx shows against eager's; a tuple's items compared one by one.
fn shape_verdict(got: &Value, want: &Value) -> Shape {
    match (got, want) {
        _ if got == want => Shape::Equal,
        (Value::Null, _) | (Value::String(_), _) => Shape::Unknown,
        (Value::Number(_), _) => Shape::Wrong,
        (Value::Array(g), Value::Array(w)) if g.len() == w.len() => {
            let verdicts: Vec<Shape> = g.iter().zip(w).map(|(a, b)| shape_verdict(a, b)).collect();
            if verdicts.contains(&Shape::Wrong) {
                Shape::Wrong
            } else {
                Shape::Unknown
            }
        }
        _ => Shape::Wrong,
    }
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

/// The calls of `got` paired with the recorded ones of the same name and class, in order (a
/// longest common subsequence).
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

fn short(sites: &[Site]) -> String {
    if sites.is_empty() {
        return "none".into();
    }
    sites
        .iter()
        .map(|(f, l)| format!("{f}:{l}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What differs, in a few words: the first call that differs (by name and class, else by
/// shape), the output, the breaks.
fn describe(want: &[Call], got: &Built, want_output: &[Value], want_breaks: &[Site]) -> String {
    let mut parts = Vec::new();
    let same_names = want.len() == got.calls.len()
        && want
            .iter()
            .zip(&got.calls)
            .all(|(w, g)| w.0 == g.0 && w.1 == g.1);
    if !same_names {
        let i = (0..want.len().max(got.calls.len()))
            .find(|&i| want.get(i).map(|c| (&c.0, &c.1)) != got.calls.get(i).map(|c| (&c.0, &c.1)))
            .unwrap_or(0);
        let name =
            |c: Option<&Call>| c.map_or("nothing".to_string(), |c| format!("{} ({})", c.0, c.1));
        parts.push(format!(
            "calls differ from #{i}: recorded {}, built {} ({} recorded, {} built)",
            name(want.get(i)),
            name(got.calls.get(i)),
            want.len(),
            got.calls.len()
        ));
    } else if let Some(i) = (0..want.len()).find(|&i| want[i].2 != got.calls[i].2) {
        let unknown = (0..want.len())
            .filter(|&j| shape_verdict(&got.calls[j].2, &want[j].2) == Shape::Unknown)
            .count();
        parts.push(format!(
            "calls equal by name and class; shapes unknown from #{i} {} ({}): {unknown} of {} \
             calls unknown",
            want[i].0,
            want[i].1,
            want.len()
        ));
    }
    if got.output != want_output {
        parts.push(format!(
            "output {} (recorded {})",
            Value::from(got.output.to_vec()),
            Value::from(want_output.to_vec())
        ));
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

#[test]
fn open_clip_models_replay_their_recordings() {
    let Some(root) = open_clip_root() else {
        return;
    };
    let Some(venv) = corpus_support::diffusers::user_venv() else {
        return;
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/open_clip/models.json");
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let models = recorded["models"].as_array().unwrap();
    for (name, _) in KNOWN_DIFFERENT {
        assert!(
            models
                .iter()
                .any(|m| m["model"] == *name && m["status"] == "ok"),
            "{name} is listed but has no recording"
        );
    }
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
        let want_calls: Vec<Call> = model["eager"]["leaves"]
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
            .collect();
        let mut want_output = Vec::new();
        for field in model["eager"]["output"].as_object().unwrap().values() {
            flatten_shapes(field, &mut want_output);
        }
        let mut want_breaks: Vec<Site> = model["dynamo"]["breaks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| match (b["file"].as_str(), b["line"].as_u64()) {
                (Some(f), Some(l)) => (f.to_string(), l as usize),
                _ => ("?".to_string(), 0),
            })
            .collect();
        want_breaks.sort();
        want_breaks.dedup();
        let inputs: Vec<InputSpec> = model["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_str().unwrap().parse().unwrap())
            .collect();
        let file = root.join("open_clip").join(model["file"].as_str().unwrap());
        let entry = model["entry"].as_str().unwrap();
        let started = std::time::Instant::now();
        let got = build(&root, &venv, &file, entry, inputs);
        let secs = started.elapsed().as_secs_f64();
        let got = match got {
            Ok(got) => got,
            Err(e) => {
                rows.push(format!(
                    "| {label} | not built ({secs:.1}s): {e} | | {} Dynamo |",
                    short(&want_breaks)
                ));
                let why = format!("not built: {e}");
                observed.push(format!(
                    "    (\n        {name:?},\n        {why:?},\n    ),"
                ));
                if listed.is_none() {
                    failures.push(format!("{name}: {why}"));
                }
                continue;
            }
        };
        let pairs = lcs_pairs(&want_calls, &got.calls);
        let equal = pairs
            .iter()
            .filter(|(i, j)| want_calls[*i].2 == got.calls[*j].2)
            .count();
        let agrees =
            got.calls == want_calls && got.output == want_output && got.breaks == want_breaks;
        rows.push(format!(
            "| {label} | {equal}/{}{} | {} | {} / {} | {secs:.1}s{} |",
            want_calls.len(),
            if got.calls.len() == want_calls.len() {
                String::new()
            } else {
                format!(" ({} built)", got.calls.len())
            },
            if got.output == want_output {
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
            let n = want_calls.len().max(got.calls.len());
            if let Some(i) = (0..n).find(|&i| want_calls.get(i) != got.calls.get(i)) {
                eprintln!("  {name}: leaf calls differ from #{i}:");
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
        let wrong: Vec<String> = pairs
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
        if !wrong.is_empty() || wrong_output {
            failures.push(format!(
                "{name}: wrong shapes shown: calls {wrong:?}, output {} (eager {})",
                Value::from(got.output.clone()),
                Value::from(want_output.clone())
            ));
        }
        let why = describe(&want_calls, &got, &want_output, &want_breaks);
        if !agrees {
            observed.push(format!(
                "    (\n        {name:?},\n        {why:?},\n    ),"
            ));
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
    eprintln!(
        "open_clip {} / torch {}\n| model (class) | calls equal/total | output shape | breaks staticfx / Dynamo | notes |\n|---|---|---|---|---|",
        recorded["open_clip"].as_str().unwrap_or("?"),
        recorded["torch"].as_str().unwrap_or("?"),
    );
    for r in &rows {
        eprintln!("{r}");
    }
    eprintln!("{agreeing} of {replayed} replayed models agree");
    if std::env::var_os("STATICFX_OPEN_CLIP_LIST").is_some() {
        eprintln!(
            "the models that differ, as KNOWN_DIFFERENT entries:\n{}",
            observed.join("\n")
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
