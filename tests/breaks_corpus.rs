//! The graph-break corpus: every `tests/fixtures/breaks/*.py` analysed statically and compared,
//! as a set of (line, gb id), with what real `torch._dynamo` 2.15 reported for it
//! (`tests/expected/breaks/labels.json`, produced by `scripts/breaks/label_breaks.py`).
//! Prints a per-rule precision/recall table (`cargo test --test breaks_corpus -- --nocapture`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};

/// Labelled breaks staticfx does not find yet, as (file, line, gb id). Empty: every labelled
/// break is found. Adding an entry here must come with a reason.
const KNOWN_MISSES: &[(&str, usize, &str)] = &[];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/breaks")
}

/// `# staticfx-case: inputs x=[4,8] labels=[4]:i64 expect=break` → the forward inputs.
fn case_inputs(src: &str) -> Vec<InputSpec> {
    let Some(line) = src.lines().find(|l| l.starts_with("# staticfx-case:")) else {
        return vec![];
    };
    let Some(rest) = line.split("inputs").nth(1) else {
        return vec![];
    };
    rest.split_whitespace()
        .take_while(|t| !t.starts_with("expect="))
        .filter_map(|t| {
            let spec = t.replace(['[', ']'], "");
            spec.parse().ok()
        })
        .collect()
}

type Found = BTreeSet<(usize, String)>;

fn analyse(path: &Path) -> (Found, usize) {
    let src = std::fs::read_to_string(path).unwrap();
    let inputs = case_inputs(&src);
    let path = path.to_path_buf();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let a = analyze_file(
                &path,
                &GraphOptions {
                    inputs,
                    class: Some("Model".into()),
                    ..Default::default()
                },
            )
            .unwrap();
            let mut found = BTreeSet::new();
            let mut possible = 0;
            for g in &a.graphs {
                // recompile risks (FX2xx, e.g. the `mask is None` guard) are no breaks
                let breaks = g.breaks.iter().filter(|f| !f.rule.recompiles());
                for f in breaks.filter(|f| f.file == a.file) {
                    // a diagnostic reads `gb_type: message (gb_id)`
                    assert!(
                        f.gb_type.is_empty() || !f.message.starts_with(&*f.gb_type),
                        "the message repeats its gb_type: {}",
                        f.message
                    );
                    if f.gb_id.is_empty() {
                        possible += 1;
                    } else {
                        found.insert((f.line, f.gb_id.to_string()));
                    }
                }
            }
            (found, possible)
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn corpus_matches_dynamo_labels() {
    let labels: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/breaks/labels.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let cases = labels["cases"].as_array().unwrap();
    assert!(cases.len() >= 40);
    // gb id → (true positives, false positives, false negatives)
    let mut per_id: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut false_pos = Vec::new();
    let mut misses = Vec::new();
    let mut possible_on_clean = Vec::new();
    for case in cases {
        let file = case["file"].as_str().unwrap();
        let want: Found = case["breaks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["line"].as_u64().unwrap() as usize,
                    b["gb_id"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let (got, possible) = analyse(&corpus_dir().join(file));
        if want.is_empty() && possible > 0 {
            possible_on_clean.push(file.to_string());
        }
        for hit in got.intersection(&want) {
            per_id.entry(hit.1.clone()).or_default().0 += 1;
        }
        for fp in got.difference(&want) {
            per_id.entry(fp.1.clone()).or_default().1 += 1;
            false_pos.push(format!("{file}:{} {}", fp.0, fp.1));
        }
        for fnn in want.difference(&got) {
            per_id.entry(fnn.1.clone()).or_default().2 += 1;
            misses.push((file.to_string(), fnn.0, fnn.1.clone()));
        }
    }
    println!(
        "\n{:<8} {:<8} {:>4} {:>4} {:>4} {:>10} {:>8}",
        "gb id", "code", "tp", "fp", "fn", "precision", "recall"
    );
    let code_of = |id: &str| -> &str {
        match id {
            "GB0170" => "FX101",
            "GB0124" => "FX102",
            "GB0109" | "GB0033" => "FX103",
            "GB0036" => "FX104",
            "GB0059" => "FX105",
            "GB0291" => "FX106",
            "GB4841" => "FX106/FX118",
            "GB0264" | "GB0119" => "FX119",
            "GB9193" => "FX107",
            "GB0025" => "FX108",
            "GB0125" | "GB8985" => "FX109",
            "GB0123" => "FX110",
            "GB0003" => "FX111",
            "GB8977" => "FX112",
            "GB4198" => "FX113",
            "GB0294" | "GB0158" => "FX114",
            "GB0007" => "FX115",
            _ => "?",
        }
    };
    let (mut tp, mut fp, mut fnn) = (0, 0, 0);
    for (id, (t, f, n)) in &per_id {
        let p = if t + f == 0 {
            1.0
        } else {
            *t as f64 / (t + f) as f64
        };
        let r = if t + n == 0 {
            1.0
        } else {
            *t as f64 / (t + n) as f64
        };
        println!(
            "{id:<8} {:<8} {t:>4} {f:>4} {n:>4} {p:>10.2} {r:>8.2}",
            code_of(id)
        );
        tp += t;
        fp += f;
        fnn += n;
    }
    println!(
        "{:<17} {tp:>4} {fp:>4} {fnn:>4} {:>10.2} {:>8.2}",
        "all",
        tp as f64 / (tp + fp).max(1) as f64,
        tp as f64 / (tp + fnn).max(1) as f64
    );
    println!("FX190 possible breaks on non-breaking cases: {possible_on_clean:?}");
    assert!(false_pos.is_empty(), "false positives: {false_pos:?}");
    let known: Vec<(String, usize, String)> = KNOWN_MISSES
        .iter()
        .map(|(f, l, g)| (f.to_string(), *l, g.to_string()))
        .collect();
    assert_eq!(
        misses, known,
        "missed labelled breaks (update KNOWN_MISSES only with a reason)"
    );
    assert!(
        possible_on_clean.is_empty(),
        "possible-break notes on non-breaking cases: {possible_on_clean:?}"
    );
}
