//! What the replay suites share (`tests/diffusers_compile_tests.rs` on diffusers' compile tests,
//! `tests/open_clip_models.rs` on open_clip models): each builds a model from a recorded entry
//! expression and `--input` text and holds it to the recording of eager PyTorch's leaf-module
//! calls and output shapes and of `torch._dynamo.explain`'s breaks. Here: the build, reading a
//! recording, and comparing the two (calls aligned by name and class, shape verdicts, what
//! differs in a few words, the table's cells and the printed report).

// Each test binary that includes `corpus_support` compiles this module; only the replay suites
// call it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;
use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};

/// A leaf-module call: qualified name, class, output shape (JSON: a list of dims, or null).
pub type Call = (String, String, Value);
/// A break site: file relative to the library's package (`?` outside it), line.
pub type Site = (String, usize);

/// What staticfx built for one model.
pub struct Built {
    pub calls: Vec<Call>,
    pub output: Vec<Value>,
    pub breaks: Vec<Site>,
    /// Analysis limits (FX9xx) in any file: shown, not compared.
    pub limits: Vec<String>,
    /// FX3xx findings (code that raises): shown, not compared.
    pub raises: Vec<String>,
}

/// Where a built node's shape is read from.
#[derive(Clone, Copy)]
pub enum Shapes {
    /// The `shape` of the node in `--format json` output: a tensor's dims, null otherwise.
    Rendered,
    /// The node's meta through [`meta_shape`]: a tuple output (`nn.MultiheadAttention`'s) as
    /// the list of its items' shapes, as a recording has it.
    Meta,
}

/// A library whose models are replayed: the directory holding its package, the package's name
/// (the directory break sites and messages are relative to), the user venv its imports resolve
/// through, and where built shapes are read from.
pub struct Library<'a> {
    pub root: &'a Path,
    pub package: &'a str,
    pub venv: &'a Path,
    pub shapes: Shapes,
}

impl Library<'_> {
    /// Builds `entry` of `file` with `inputs` (300 s at most) and reads off what the recording
    /// has; Err with the place and message of the error that stopped the trace.
    pub fn build(&self, file: &Path, entry: &str, inputs: Vec<InputSpec>) -> Result<Built, String> {
        let opts = GraphOptions {
            root: Some(self.root.to_path_buf()),
            entry: Some(entry.to_string()),
            inputs,
            environment: Some(super::diffusers::user_environment(self.root, self.venv)),
            time_limit: Some(std::time::Duration::from_secs(300)),
            ..Default::default()
        };
        let package = self.root.join(self.package);
        let file = file.to_path_buf();
        let shape_source = self.shapes;
        let thread = format!("{}-replay", self.package);
        staticfx::ide::on_large_stack(&thread, move || {
            let a = analyze_file(&file, &opts).map_err(|e| e.to_string())?;
            // `file:line` of an offset, the file relative to the package
            let place = |file: staticfx::semantic::FileId, at: usize| {
                let f = a.project.file(file);
                let line = f.text[..at.min(f.text.len())].matches('\n').count() + 1;
                let name = f.path.strip_prefix(&package).unwrap_or(&f.path);
                format!("{}:{line}", name.display())
            };
            let g = a.graphs.first().ok_or("no graph")?;
            if let Some(e) = &g.error {
                return Err(format!(
                    "stopped at {}: {} {}",
                    place(e.file, e.span.start),
                    e.code,
                    e.message
                ));
            }
            let classes: HashMap<&str, &str> = g
                .modules
                .iter()
                .map(|m| (m.path.as_str(), m.class.as_str()))
                .collect();
            let json: Value =
                serde_json::from_str(&staticfx::render::json::render(&a.project, &a.graphs))
                    .unwrap();
            let nodes = json["graphs"][0]["nodes"].as_array().unwrap();
            let shapes: HashMap<&str, Value> = match shape_source {
                Shapes::Rendered => nodes
                    .iter()
                    .map(|n| (n["name"].as_str().unwrap(), n["shape"].clone()))
                    .collect(),
                Shapes::Meta => g
                    .graph
                    .nodes()
                    .map(|(_, n)| (n.name.as_str(), meta_shape(&n.meta)))
                    .collect(),
            };
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
                        // a node's shape, null where staticfx does not know it
                        output = refs
                            .iter()
                            .filter_map(|r| shapes.get(r.as_str()))
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
            let limits = a
                .diagnostics
                .iter()
                .filter(|d| d.code.starts_with("FX9"))
                .map(|d| format!("{} {} {}", place(d.file, d.span.start), d.code, d.message))
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
}

/// A node's shape as the recording writes one: a tensor's dims (a symbolic dim as its text), a
/// tuple's items (a tensor's dims, `null` for None, `"?"` for anything else), null when unknown.
pub fn meta_shape(m: &staticfx::shapes::Meta) -> Value {
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

/// A recording (the JSON a `scripts/expect/gen_*` script wrote).
pub fn recording(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every entry of `known` names a model recorded with status `ok`, by its field `key`.
pub fn assert_recorded(models: &[Value], key: &str, known: &[(&str, &str)]) {
    for (name, _) in known {
        assert!(
            models
                .iter()
                .any(|m| m[key] == *name && m["status"] == "ok"),
            "{name} is listed but has no recording"
        );
    }
}

/// The recorded calls, `[name, class, shape]` each.
pub fn recorded_calls(model: &Value) -> Vec<Call> {
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

/// The tensor shapes of the recorded output, field by field in order.
pub fn recorded_output(model: &Value) -> Vec<Value> {
    let mut shapes = Vec::new();
    for field in model["eager"]["output"].as_object().unwrap().values() {
        flatten_shapes(field, &mut shapes);
    }
    shapes
}

/// The tensor shapes of a recorded output field, in order: a shape (a list of dims, `[]` for a
/// 0-d tensor), or a list of them (a field holding a list of tensors); null items left out.
fn flatten_shapes(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(items) if items.iter().any(|x| x.is_array() || x.is_null()) => {
            items.iter().for_each(|x| flatten_shapes(x, out))
        }
        Value::Array(_) => out.push(v.clone()),
        _ => {}
    }
}

/// Dynamo's breaks as sites: the innermost frame inside the package (`?` without one).
pub fn dynamo_sites(model: &Value) -> Vec<Site> {
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

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    Equal,
    /// None shown, or a dim symbolic (`"?"`, `"s0"`) where eager has a number.
    Unknown,
    /// Both known and different: a shape staticfx shows must never be this.
    Wrong,
}

/// A shape staticfx shows (JSON: dims as numbers, or strings where symbolic; null when unknown)
/// against eager's; a tuple's items compared one by one.
pub fn shape_verdict(got: &Value, want: &Value) -> Shape {
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

/// The pairs of a longest common subsequence of `a` and `b` by name and class: the built calls
/// paired with the recorded ones, in order.
pub fn lcs_pairs(a: &[Call], b: &[Call]) -> Vec<(usize, usize)> {
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

/// How many of the paired calls (`lcs_pairs(want, &got.calls)`) have eager's shape.
pub fn equal_shapes(pairs: &[(usize, usize)], want: &[Call], got: &Built) -> usize {
    pairs
        .iter()
        .filter(|(i, j)| want[*i].2 == got.calls[*j].2)
        .count()
}

/// The table's calls cell: `equal/recorded`, and how many were built when that differs.
pub fn calls_cell(equal: usize, want: &[Call], got: &Built) -> String {
    let built = if got.calls.len() == want.len() {
        String::new()
    } else {
        format!(" ({} built)", got.calls.len())
    };
    format!("{equal}/{}{built}", want.len())
}

/// The table's output cell: `equal`, or both shapes.
pub fn output_cell(got: &Built, want_output: &[Value]) -> String {
    if got.output == want_output {
        "equal".to_string()
    } else {
        format!(
            "{} vs {}",
            Value::from(got.output.clone()),
            Value::from(want_output.to_vec())
        )
    }
}

/// The sites, `file:line` (the file's name only), or `none`.
pub fn short(sites: &[Site]) -> String {
    if sites.is_empty() {
        return "none".into();
    }
    sites
        .iter()
        .map(|(f, l)| format!("{}:{l}", f.rsplit('/').next().unwrap_or(f)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints where the calls of `label` first differ from the recording, with a few around it.
pub fn print_call_diff(label: &str, want: &[Call], got: &Built) {
    let n = want.len().max(got.calls.len());
    if let Some(i) = (0..n).find(|&i| want.get(i) != got.calls.get(i)) {
        eprintln!("  {label}: leaf calls differ from #{i}:");
        for k in i.saturating_sub(2)..(i + 6).min(n) {
            eprintln!(
                "    #{k}: recorded {:<60} built {:?}",
                want.get(k)
                    .map(|c| format!("{} {} {}", c.0, c.1, c.2))
                    .unwrap_or_default(),
                got.calls.get(k)
            );
        }
    }
}

/// The shapes shown that are neither eager's nor unknown, in words; None when there are none.
pub fn wrong_shapes(
    pairs: &[(usize, usize)],
    want: &[Call],
    got: &Built,
    want_output: &[Value],
) -> Option<String> {
    let wrong_calls: Vec<String> = pairs
        .iter()
        .filter(|(i, j)| shape_verdict(&got.calls[*j].2, &want[*i].2) == Shape::Wrong)
        .map(|(i, j)| format!("{} {} (eager {})", want[*i].0, got.calls[*j].2, want[*i].2))
        .collect();
    let wrong_output = got.output.len() == want_output.len()
        && got
            .output
            .iter()
            .zip(want_output)
            .any(|(g, w)| shape_verdict(g, w) == Shape::Wrong);
    (!wrong_calls.is_empty() || wrong_output).then(|| {
        format!(
            "wrong shapes shown: calls {wrong_calls:?}, output {} (eager {})",
            Value::from(got.output.clone()),
            Value::from(want_output.to_vec())
        )
    })
}

/// What differs between a built model and its recording, in a few words: the first call that
/// differs (by name and class, else by shape: unknown or wrong), the output, the breaks.
pub fn describe(want: &[Call], got: &Built, want_output: &[Value], want_breaks: &[Site]) -> String {
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

/// A `KNOWN_DIFFERENT` entry, as source text: `name` and `reason` are Rust expressions.
pub fn known_entry(name: &str, reason: &str) -> String {
    format!("    (\n        {name},\n        {reason},\n    ),")
}

/// Prints the table (`header` and its rows), how many models agree, and with `list` the
/// `KNOWN_DIFFERENT` entries of those that differ.
pub fn report(
    header: &str,
    rows: &[String],
    agreeing: usize,
    replayed: usize,
    list: bool,
    observed: &[String],
) {
    eprintln!("{header}\n|---|---|---|---|---|");
    for r in rows {
        eprintln!("{r}");
    }
    eprintln!("{agreeing} of {replayed} replayed models agree");
    if list {
        eprintln!(
            "the models that differ, as KNOWN_DIFFERENT entries:\n{}",
            observed.join("\n")
        );
    }
}
