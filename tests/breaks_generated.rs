//! The generated graph-break corpus: 2,000 seeded programs
//! (`tests/fixtures/breaks_generated/programs.jsonl`, `scripts/breaks/gen_programs.py`), each
//! labelled by real `torch._dynamo.explain` under two torch versions
//! (`tests/expected/breaks_generated/labels-torch*.json`, `scripts/breaks/label_generated.py`).
//! Replays without torch: every program is analysed statically for each labelled version and
//! the reported (line, rule) pairs are compared with Dynamo's. Prints precision and recall per
//! rule and per version (`cargo test --test breaks_generated -- --nocapture`) and holds torch
//! 2.15, the version the rules are written against, to >= 0.99 per rule.

mod torch_labels;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};
use staticfx::breaks::version::{Target, TorchVersion};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

struct Program {
    id: String,
    inputs: Vec<InputSpec>,
    constructs: Vec<String>,
    source: String,
}

fn programs() -> Vec<Program> {
    let text =
        std::fs::read_to_string(root().join("tests/fixtures/breaks_generated/programs.jsonl"))
            .unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            Program {
                id: v["id"].as_str().unwrap().to_string(),
                inputs: v["inputs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().replace(['[', ']'], "").parse().unwrap())
                    .collect(),
                constructs: v["constructs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect(),
                source: v["source"].as_str().unwrap().to_string(),
            }
        })
        .collect()
}

/// The staticfx rule a Dynamo break belongs to, from its gb id (ids are stable across torch
/// versions; a version only adds new ones) or, where a version's registry has no gb_type for
/// it, from Dynamo's reason text. `None`: a break no rule models.
fn rule_of(gb_id: Option<&str>, reason: &str) -> Option<&'static str> {
    let by_id = match gb_id.unwrap_or("") {
        "GB0170" => "FX101",
        "GB0124" => "FX102",
        "GB0109" | "GB0033" => "FX103",
        "GB0036" => "FX104",
        "GB0059" => "FX105",
        "GB0075" => "FX112",
        "GB0156" => "FX106",
        "GB0291" | "GB4841" => "FX106",
        "GB9193" => "FX107",
        "GB0025" => "FX108",
        "GB0125" | "GB8985" => "FX109",
        "GB0123" => "FX110",
        "GB0003" => "FX111",
        "GB8977" => "FX112",
        "GB4198" | "GB0179" => "FX113",
        "GB0294" | "GB0158" => "FX114",
        "GB0007" => "FX115",
        "GB0098" | "GB0099" => "FX116",
        _ => "",
    };
    if !by_id.is_empty() {
        return Some(by_id);
    }
    // torch 2.8 reports these with no gb_type of its registry; its reason text says which
    if gb_id.is_none() {
        for (prefix, rule) in [
            ("Data-dependent branching", "FX101"),
            ("generic_jump", "FX101"),
            ("Logger not supported for non-export cases", "FX106"),
            ("Can't find numpy function", "FX114"),
        ] {
            if reason.starts_with(prefix) {
                return Some(rule);
            }
        }
    }
    None
}

/// (line, rule) → gb ids Dynamo gave there.
type Sites = BTreeMap<(usize, String), BTreeSet<String>>;

struct Labelled {
    version: String,
    /// program id → Dynamo's breaks; programs that raised or timed out are left out.
    programs: BTreeMap<String, Sites>,
    /// breaks no rule models, as "id:line gb_id reason".
    unmodelled: Vec<String>,
}

fn labels() -> Vec<Labelled> {
    let files = torch_labels::label_files("tests/expected/breaks_generated");
    files
        .iter()
        .map(|f| {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            let mut programs = BTreeMap::new();
            let mut unmodelled = Vec::new();
            for p in v["programs"].as_array().unwrap() {
                let id = p["id"].as_str().unwrap().to_string();
                let Some(breaks) = p["breaks"].as_array() else {
                    continue;
                };
                let mut sites = Sites::new();
                for b in breaks {
                    let Some(line) = b["line"].as_u64() else {
                        continue;
                    };
                    let gb = b["gb_id"].as_str();
                    let reason = b["reason"].as_str().unwrap_or("");
                    match rule_of(gb, reason) {
                        Some(rule) => {
                            sites
                                .entry((line as usize, rule.to_string()))
                                .or_default()
                                .insert(gb.unwrap_or("").to_string());
                        }
                        None => unmodelled.push(format!(
                            "{id}:{line} {} {}",
                            gb.unwrap_or("-"),
                            b["gb_type"].as_str().unwrap_or(reason)
                        )),
                    }
                }
                programs.insert(id, sites);
            }
            Labelled {
                version: v["torch_version"].as_str().unwrap().to_string(),
                programs,
                unmodelled,
            }
        })
        .collect()
}

/// staticfx's findings for every program, told to target `version`: program id → sites.
fn analyse_all(progs: &[Program], version: TorchVersion) -> BTreeMap<String, Sites> {
    let dir = tempfile::tempdir().unwrap();
    let jobs: Vec<(String, PathBuf, Vec<InputSpec>)> = progs
        .iter()
        .map(|p| {
            let path = dir.path().join(format!("{}.py", p.id));
            std::fs::write(&path, &p.source).unwrap();
            (p.id.clone(), path, p.inputs.clone())
        })
        .collect();
    let out = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut out = BTreeMap::new();
            for (id, path, inputs) in jobs {
                let a = analyze_file(
                    &path,
                    &GraphOptions {
                        inputs,
                        class: Some("Model".into()),
                        torch_target: Target::configured(version),
                        ..Default::default()
                    },
                )
                .unwrap();
                let mut sites = Sites::new();
                for g in &a.graphs {
                    for f in g.breaks.iter().filter(|f| f.file == a.file) {
                        // both sides are grouped by gb id the same way (`rule_of`), so a rule
                        // reporting an id another rule owns counts under that id's rule
                        if let Some(rule) = rule_of(Some(f.gb_id), "") {
                            sites
                                .entry((f.line, rule.to_string()))
                                .or_default()
                                .insert(f.gb_id.to_string());
                        }
                    }
                }
                out.insert(id, sites);
            }
            out
        })
        .unwrap()
        .join()
        .unwrap();
    drop(dir);
    out
}

#[derive(Default)]
struct Score {
    tp: usize,
    fp: usize,
    fnn: usize,
    /// found at the right line under the right rule, but with another gb id than Dynamo's
    wrong_id: usize,
    examples_fp: Vec<String>,
    examples_fn: Vec<String>,
}

impl Score {
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }
    fn recall(&self) -> f64 {
        if self.tp + self.fnn == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fnn) as f64
        }
    }
}

fn score(
    labelled: &Labelled,
    found: &BTreeMap<String, Sites>,
    progs: &[Program],
) -> BTreeMap<String, Score> {
    let constructs: BTreeMap<&str, &Vec<String>> = progs
        .iter()
        .map(|p| (p.id.as_str(), &p.constructs))
        .collect();
    let mut per_rule: BTreeMap<String, Score> = BTreeMap::new();
    for (id, want) in &labelled.programs {
        let got = &found[id];
        let what = constructs[id.as_str()].join(" ");
        for (site, ids) in got {
            let s = per_rule.entry(site.1.clone()).or_default();
            match want.get(site) {
                Some(dynamo_ids) => {
                    s.tp += 1;
                    let labelled_ids: BTreeSet<&String> =
                        dynamo_ids.iter().filter(|i| !i.is_empty()).collect();
                    if !labelled_ids.is_empty() && !ids.iter().all(|i| labelled_ids.contains(i)) {
                        s.wrong_id += 1;
                        s.examples_fp.push(format!(
                            "{id}:{} gb id {ids:?}, Dynamo {dynamo_ids:?} [{what}]",
                            site.0
                        ));
                    }
                }
                None => {
                    s.fp += 1;
                    s.examples_fp.push(format!("{id}:{} [{what}]", site.0));
                }
            }
        }
        for (site, ids) in want {
            if !got.contains_key(site) {
                let s = per_rule.entry(site.1.clone()).or_default();
                s.fnn += 1;
                s.examples_fn
                    .push(format!("{id}:{} {ids:?} [{what}]", site.0));
            }
        }
    }
    per_rule
}

fn print_table(version: &str, per_rule: &BTreeMap<String, Score>, programs: usize) {
    println!("\ntorch {version}: {programs} labelled programs");
    println!(
        "{:<6} {:>5} {:>4} {:>4} {:>6} {:>10} {:>8}",
        "rule", "tp", "fp", "fn", "gb id≠", "precision", "recall"
    );
    for (rule, s) in per_rule {
        println!(
            "{rule:<6} {:>5} {:>4} {:>4} {:>6} {:>10.3} {:>8.3}",
            s.tp,
            s.fp,
            s.fnn,
            s.wrong_id,
            s.precision(),
            s.recall()
        );
    }
}

#[test]
fn generated_corpus_matches_dynamo_per_version() {
    let progs = programs();
    assert!(progs.len() >= 2000, "{} programs", progs.len());
    let all = labels();
    let mut failures = Vec::new();
    for labelled in &all {
        let version: TorchVersion = labelled.version.parse().unwrap();
        assert!(
            labelled.programs.len() >= 1900,
            "torch {}: only {} programs labelled",
            labelled.version,
            labelled.programs.len()
        );
        let found = analyse_all(&progs, version);
        // for reading failures: STATICFX_GENERATED_DUMP=DIR writes staticfx's sites per version
        if let Ok(dir) = std::env::var("STATICFX_GENERATED_DUMP") {
            let dump: BTreeMap<&String, Vec<String>> = found
                .iter()
                .map(|(id, sites)| {
                    let v = sites
                        .iter()
                        .map(|((line, rule), ids)| format!("{line} {rule} {ids:?}"))
                        .collect();
                    (id, v)
                })
                .collect();
            let path = Path::new(&dir).join(format!("staticfx-{version}.json"));
            std::fs::write(path, serde_json::to_string_pretty(&dump).unwrap()).unwrap();
        }
        let per_rule = score(labelled, &found, &progs);
        print_table(&labelled.version, &per_rule, labelled.programs.len());
        for (rule, s) in &per_rule {
            for e in s.examples_fp.iter().take(6) {
                println!("  {rule} false alarm / wrong id: {e}");
            }
            for e in s.examples_fn.iter().take(6) {
                println!("  {rule} missed: {e}");
            }
        }
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        for u in &labelled.unmodelled {
            let kind = u.split_once(' ').map(|(_, k)| k).unwrap_or(u);
            *kinds.entry(kind.to_string()).or_default() += 1;
        }
        println!("  breaks no rule models: {kinds:?}");
        if version.at_least(2, 15) {
            for (rule, s) in &per_rule {
                if s.precision() < 0.99 || s.recall() < 0.99 || s.wrong_id > 0 {
                    failures.push(format!(
                        "torch {}: {rule} precision {:.3} recall {:.3}, {} wrong gb ids",
                        labelled.version,
                        s.precision(),
                        s.recall(),
                        s.wrong_id
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(all.len() >= 2, "labels for two torch versions");
}
