//! The editor's inlay hints on real model code against the shapes real PyTorch binds there:
//! transformers 5.24's modeling_llama.py and timm 1.0.31's vision_transformer.py, recorded by
//! `scripts/inlay/record_shapes.py` (tests/expected/inlay/). A hint shown must equal torch's
//! shapes for every name it shows; a name torch bound a tensor to and staticfx shows nothing for
//! is counted and printed, not a failure (a hint is never a guess).
//!
//! Each file is analysed as the editor does it (per-class, `ide::AnalysisHost`), with the
//! recording's `example` inputs as `exampleInputs`. The classes whose recording says
//! `convention` get no example inputs: staticfx seeds them with symbolic sizes
//! (`hidden_states: [s0, s1, 4096]`), and the test binds each symbol to the size torch ran with,
//! read from the same input's recorded shape. Which graph's recording speaks for a statement
//! follows `ide::inlay`: the innermost analysed class holding it, else every class.
//!
//! Skipped with a note when `$STATICFX_TRANSFORMERS_ROOT` / `$STATICFX_TIMM_ROOT` is unset, or
//! when the file there is not the one recorded.

mod corpus_support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};
use staticfx::analysis::InputSpec;
use staticfx::ide::host::{AnalysisHost, GraphView, Output, Snapshot};
use staticfx::ide::inlay::{inlay_hints, InlayConfig};
use staticfx::semantic::environment::{DiscoveryRequest, EnvironmentHandle};
use staticfx::syntax::Span;

const NOT_A_TENSOR: &str = "not a tensor";

/// Symbol (`s0`) → the size torch ran with.
type Sizes = HashMap<String, i64>;

/// What torch bound at one statement (by its first line), per name: the distinct values.
type Bound = BTreeMap<String, BTreeSet<String>>;

struct Recorded {
    inputs_kind: String,
    inputs: Value,
    lines: HashMap<usize, Bound>,
}

fn recording(case: &str) -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/expected/inlay/{case}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn classes(rec: &Value) -> BTreeMap<String, Recorded> {
    let obj = rec["classes"].as_object().unwrap();
    obj.iter()
        .map(|(name, c)| {
            let lines = c["lines"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(line, names)| {
                    let bound = names
                        .as_object()
                        .unwrap()
                        .iter()
                        .map(|(n, vals)| {
                            let set = vals
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|v| v.as_str().unwrap().to_string());
                            (n.clone(), set.collect())
                        })
                        .collect();
                    (line.parse().unwrap(), bound)
                })
                .collect();
            let recorded = Recorded {
                inputs_kind: c["inputs_kind"].as_str().unwrap().to_string(),
                inputs: c["inputs"].clone(),
                lines,
            };
            (name.clone(), recorded)
        })
        .collect()
}

/// The example inputs staticfx is given: the plain tensors of the `example` classes.
fn example_inputs(classes: &BTreeMap<String, Recorded>) -> HashMap<String, Vec<InputSpec>> {
    classes
        .iter()
        .filter(|(_, c)| c.inputs_kind == "example")
        .map(|(name, c)| {
            let specs = c
                .inputs
                .as_object()
                .unwrap()
                .iter()
                .map(|(arg, t)| {
                    let dims: Vec<String> = t["shape"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|d| d.to_string())
                        .collect();
                    format!("{arg}={}:{}", dims.join("x"), t["dtype"].as_str().unwrap())
                        .parse()
                        .unwrap()
                })
                .collect();
            (name.clone(), specs)
        })
        .collect()
}

/// The sizes of the symbols in `g`'s input shapes, from the shapes torch ran the same inputs
/// with.
fn sizes_of_inputs(g: &GraphView, recorded: &Recorded) -> Sizes {
    let mut sizes = Sizes::new();
    for n in g.nodes().iter().filter(|n| n.op == "placeholder") {
        let (Some(shape), Some(torch)) = (&n.shape, recorded.inputs.get(&n.name)) else {
            continue;
        };
        let Some(torch_dims) = torch.get("shape").and_then(Value::as_array) else {
            continue;
        };
        let dims = split_dims(shape);
        assert_eq!(
            dims.len(),
            torch_dims.len(),
            "{}: input {} is {shape}, torch's {torch}",
            g.class,
            n.name
        );
        for (d, t) in dims.iter().zip(torch_dims) {
            let t = t.as_i64().unwrap();
            if d.parse::<i64>().is_ok() {
                assert_eq!(
                    d.parse::<i64>().unwrap(),
                    t,
                    "{}: input {} is {shape}, torch's {torch}",
                    g.class,
                    n.name
                );
            } else {
                let old = sizes.insert(d.clone(), t);
                assert!(
                    old.is_none_or(|o| o == t),
                    "{}: {d} is {t} and {old:?}",
                    g.class
                );
            }
        }
    }
    sizes
}

/// `[s0, 7, s1 + 1]` → its dims.
fn split_dims(shape: &str) -> Vec<String> {
    let inner = shape.trim().trim_start_matches('[').trim_end_matches(']');
    if inner.trim().is_empty() {
        return vec![];
    }
    split_top(inner, ',')
        .into_iter()
        .map(|d| d.trim().to_string())
        .collect()
}

/// `text` split at `sep` outside brackets and parentheses.
fn split_top(text: &str, sep: char) -> Vec<&str> {
    let mut parts = vec![];
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The value of a dim the hint writes (`s0`, `2*s1`, `(s1//16) + 1`) with the symbols' sizes;
/// None when a symbol has none.
fn eval_dim(dim: &str, sizes: &Sizes) -> Option<i64> {
    let tokens = tokenize(dim);
    let mut at = 0;
    let v = sum(&tokens, &mut at, sizes)?;
    (at == tokens.len()).then_some(v)
}

fn tokenize(s: &str) -> Vec<String> {
    let mut out = vec![];
    let cs: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            out.push(cs[start..i].iter().collect());
        } else if c == '/' && cs.get(i + 1) == Some(&'/') {
            out.push("//".into());
            i += 2;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

fn sum(t: &[String], at: &mut usize, sizes: &Sizes) -> Option<i64> {
    let mut v = product(t, at, sizes)?;
    while let Some(op) = t.get(*at).filter(|o| *o == "+" || *o == "-") {
        let op = op.clone();
        *at += 1;
        let r = product(t, at, sizes)?;
        v = if op == "+" { v + r } else { v - r };
    }
    Some(v)
}

fn product(t: &[String], at: &mut usize, sizes: &Sizes) -> Option<i64> {
    let mut v = atom(t, at, sizes)?;
    while let Some(op) = t
        .get(*at)
        .filter(|o| ["*", "//", "%"].contains(&o.as_str()))
    {
        let op = op.clone();
        *at += 1;
        let r = atom(t, at, sizes)?;
        v = match op.as_str() {
            "*" => v * r,
            // Python's floor division and modulo (sizes are not negative, but be exact).
            "//" => v.div_euclid(r),
            _ => v.rem_euclid(r),
        };
    }
    Some(v)
}

fn atom(t: &[String], at: &mut usize, sizes: &Sizes) -> Option<i64> {
    let tok = t.get(*at)?.clone();
    *at += 1;
    match tok.as_str() {
        "(" => {
            let v = sum(t, at, sizes)?;
            (t.get(*at)? == ")").then(|| *at += 1)?;
            Some(v)
        }
        "-" => Some(-atom(t, at, sizes)?),
        _ => tok.parse().ok().or_else(|| sizes.get(&tok).copied()),
    }
}

/// One alternative of a hint (`[s0, 7] int64`) with the sizes put in, as torch's recording
/// writes it; None when a symbol has no size.
fn concrete(alternative: &str, sizes: &Sizes) -> Option<String> {
    let close = alternative.find(']')?;
    let dims: Option<Vec<String>> = split_dims(&alternative[..=close])
        .iter()
        .map(|d| eval_dim(d, sizes).map(|v| v.to_string()))
        .collect();
    Some(format!(
        "[{}]{}",
        dims?.join(", "),
        &alternative[close + 1..]
    ))
}

/// A hint's label as (name, its alternatives); the name of a one-name label is None.
fn parse_label(label: &str) -> Vec<(Option<String>, Vec<String>)> {
    let body = label.strip_prefix("# ").expect(label);
    let alternatives = |s: &str| {
        s.split(" | ")
            .map(|a| a.trim().to_string())
            .collect::<Vec<_>>()
    };
    if body.starts_with('[') {
        return vec![(None, alternatives(body))];
    }
    split_top(body, ',')
        .into_iter()
        .map(|part| {
            let (name, shapes) = part.trim().split_once(": ").expect(label);
            (Some(name.to_string()), alternatives(shapes))
        })
        .collect()
}

/// The graphs that speak for a statement, as `ide::inlay` reads them: the innermost class
/// holding it, else every class.
fn speaking_class(out: &Output, at: Span) -> Option<&GraphView> {
    out.graphs
        .iter()
        .filter(|g| g.class_span.start <= at.start && at.end <= g.class_span.end)
        .min_by_key(|g| g.class_span.end - g.class_span.start)
}

#[derive(Default)]
struct Tally {
    checked: usize,
    equal: usize,
    wrong: Vec<String>,
    /// Names torch bound a tensor to that staticfx shows no hint for.
    not_shown: Vec<String>,
    /// Hints of classes the recording does not hold.
    unrecorded: Vec<String>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// Whether the file was there to check.
fn check_file(case: &str, tally: &mut Tally) -> bool {
    let rec = recording(case);
    let var = rec["root_env"].as_str().unwrap();
    let package = rec["file"].as_str().unwrap().split('/').next().unwrap();
    let Some(root) = corpus_support::corpus_root(var, package) else {
        return false;
    };
    let path = root.join(rec["file"].as_str().unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    let sha = format!("{:x}", Sha256::digest(text.as_bytes()));
    if sha != rec["sha256"].as_str().unwrap() {
        eprintln!(
            "skipped {case}: {} is not the file recorded (sha256 differs)",
            path.display()
        );
        return false;
    }
    let recorded = classes(&rec);
    let mut snap = Snapshot::new(path.clone(), root.clone(), &text);
    snap.class_inputs = example_inputs(&recorded);
    let venv = std::env::var_os("STATICFX_USER_VENV").map(PathBuf::from);
    snap.environment = Some(EnvironmentHandle::lazy(DiscoveryRequest::from_process(
        &root, venv,
    )));
    let out = AnalysisHost::analyze_once(&snap);
    assert!(out.failure.is_none(), "{case}: {:?}", out.failure);

    let sizes: HashMap<&str, Sizes> = out
        .graphs
        .iter()
        .filter_map(|g| {
            Some((
                g.class.as_str(),
                sizes_of_inputs(g, recorded.get(&g.class)?),
            ))
        })
        .collect();
    // A statement no class holds reads every graph: its symbols must mean the same in each.
    let mut every_size = Sizes::new();
    for s in sizes.values() {
        for (sym, &v) in s {
            let old = every_size.insert(sym.clone(), v);
            assert!(
                old.is_none_or(|o| o == v),
                "{case}: {sym} is {v} in one class and {old:?} in another"
            );
        }
    }
    let expected_at = |statement: Span, line: usize| -> Option<(Bound, &Sizes)> {
        match speaking_class(&out, statement) {
            Some(g) => {
                let r = recorded.get(&g.class)?;
                Some((
                    r.lines.get(&line).cloned().unwrap_or_default(),
                    &sizes[g.class.as_str()],
                ))
            }
            None => {
                let mut all = Bound::new();
                for r in recorded.values() {
                    for (name, vals) in r.lines.get(&line).into_iter().flatten() {
                        all.entry(name.clone())
                            .or_default()
                            .extend(vals.iter().cloned());
                    }
                }
                Some((all, &every_size))
            }
        }
    };

    let whole = Span::new(0, text.len());
    let hints = inlay_hints(&out, whole, &InlayConfig::default());
    let mut hinted: BTreeSet<(usize, String)> = BTreeSet::new();
    for h in &hints {
        let line = line_of(&text, h.statement.start);
        let where_ = format!("{case}:{line}");
        let Some((torch, sizes)) = expected_at(h.statement, line) else {
            tally.unrecorded.push(format!("{where_} {}", h.label));
            continue;
        };
        for (name, alternatives) in parse_label(&h.label) {
            let name = match name {
                Some(n) => n,
                // A one-name label: the statement bound one name.
                None => {
                    let statement = &text[h.statement.start..h.statement.end];
                    match torch.keys().collect::<Vec<_>>().as_slice() {
                        [only] => only.to_string(),
                        // `x = ...`, `x += ...`, `x: T = ...`
                        _ => statement
                            .split(['=', ':'])
                            .next()
                            .unwrap()
                            .trim_end_matches(|c: char| {
                                c.is_whitespace() || "+-*/@%&|^<>".contains(c)
                            })
                            .to_string(),
                    }
                }
            };
            hinted.insert((line, name.clone()));
            tally.checked += 1;
            let ours: Option<BTreeSet<String>> =
                alternatives.iter().map(|a| concrete(a, sizes)).collect();
            let theirs = torch.get(&name).cloned().unwrap_or_default();
            match ours {
                Some(ours) if ours == theirs => tally.equal += 1,
                Some(ours) => tally.wrong.push(format!(
                    "{where_} `{name}`: staticfx {ours:?} ({}), torch {theirs:?}",
                    h.label
                )),
                None => tally.wrong.push(format!(
                    "{where_} `{name}`: {} has a symbol torch's inputs give no size",
                    h.label
                )),
            }
        }
    }
    // What torch bound that no hint shows: every statement of a recorded class (or of no
    // class), once per name.
    let mut seen: BTreeSet<(usize, String)> = BTreeSet::new();
    for r in recorded.values() {
        for (&line, bound) in &r.lines {
            for (name, vals) in bound {
                if vals.contains(NOT_A_TENSOR)
                    || hinted.contains(&(line, name.clone()))
                    || !seen.insert((line, name.clone()))
                {
                    continue;
                }
                tally
                    .not_shown
                    .push(format!("{case}:{line} `{name}` {vals:?}"));
            }
        }
    }
    true
}

#[test]
fn hints_equal_the_shapes_torch_binds() {
    let mut tally = Tally::default();
    let mut checked_files = 0;
    for case in ["llama", "timm_vision_transformer"] {
        checked_files += check_file(case, &mut tally) as usize;
    }
    if checked_files == 0 {
        return;
    }
    println!(
        "inlay hints against torch: checked {}, equal {}",
        tally.checked, tally.equal
    );
    println!(
        "names torch bound a tensor to with no hint: {}",
        tally.not_shown.len()
    );
    for n in &tally.not_shown {
        println!("  no hint: {n}");
    }
    for u in &tally.unrecorded {
        println!("  hint of a class not recorded: {u}");
    }
    for w in &tally.wrong {
        println!("  WRONG: {w}");
    }
    assert!(
        tally.wrong.is_empty(),
        "{} hints differ from torch's shapes",
        tally.wrong.len()
    );
    assert!(
        tally.unrecorded.is_empty(),
        "hints the recording cannot check (record their classes)"
    );
    assert!(tally.checked > 0, "no hint on real code to check");
}
