//! The graph must equal what torch.fx records. Expectations in `tests/expected/fx/` were
//! generated with real torch by `scripts/expect/gen_fx_expectations.py`; this test needs no torch.
//! torchvision cases read torchvision's source from `$STATICFX_TORCHVISION_ROOT` (a directory
//! holding the `torchvision/` package; `.ci/run` unzips the wheel there). Under CI they are
//! mandatory; locally they are skipped with a message when the variable is unset.

mod corpus_support;
mod input_specs;
mod shape_tally;

use input_specs::inputs_of;
use shape_tally::Tally;
use std::path::{Path, PathBuf};

use serde_json::Value;
use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};

struct Case {
    id: String,
    file: PathBuf,
    root: Option<PathBuf>,
    entry: String,
    inputs: Vec<InputSpec>,
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

/// The fields compared: torch.fx's name, opcode, target, and the shape/dtype ShapeProp records.
fn key(n: &Value) -> String {
    format!(
        "{} {} {} {} {}",
        n["name"], n["op"], n["target"], n["shape"], n["dtype"]
    )
}

/// Python-level torch.nn.functional wrappers re-pass their defaults as keywords through
/// `handle_torch_function` (`F.relu(x)` is recorded as `relu(x, inplace=False)`); we record the
/// call as written, so arguments of those targets are compared only for node references.
fn args_key(n: &Value) -> String {
    let target = n["target"].as_str().unwrap_or("");
    if target.starts_with("torch.nn.functional.") {
        let mut refs = Vec::new();
        collect_refs(&n["args"], &mut refs);
        collect_refs(&n["kwargs"], &mut refs);
        return refs.join(",");
    }
    let kwargs: std::collections::BTreeMap<String, Value> = n["kwargs"]
        .as_object()
        .map(|m| m.clone().into_iter().collect())
        .unwrap_or_default();
    format!("{} {}", n["args"], serde_json::to_string(&kwargs).unwrap())
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if m.contains_key("node") => out.push(m["node"].to_string()),
        Value::Object(m) => m.values().for_each(|x| collect_refs(x, out)),
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

/// One case built: whether it is identical to torch.fx (its node count, or the first
/// difference), and the tally of its node shapes.
struct CaseRun {
    result: Result<(usize, usize), String>,
    shapes: Tally,
}

fn run_case(case: &Case) -> CaseRun {
    let expected = read_json(&manifest_dir().join(format!("tests/expected/fx/{}.json", case.id)));
    let opts = GraphOptions {
        root: case.root.clone(),
        entry: Some(case.entry.clone()),
        inputs: case.inputs.clone(),
        ..Default::default()
    };
    let analysis = match analyze_file(&case.file, &opts) {
        Ok(a) => a,
        Err(e) => {
            return CaseRun {
                result: Err(format!("{}: {e}", case.id)),
                shapes: Tally::default(),
            }
        }
    };
    let json: Value = serde_json::from_str(&staticfx::render::json::render(
        &analysis.project,
        &analysis.graphs,
    ))
    .unwrap();
    let got = json["graphs"][0]["nodes"].as_array().unwrap().clone();
    let want = &without_specialization_guards(expected["nodes"].as_array().unwrap());
    // torch.fx traced and ran the model: a call staticfx says will raise (FX3xx) is ours
    let raises = json["graphs"][0]["will_raise"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !raises.is_empty() {
        return CaseRun {
            result: Err(format!(
                "{}: FX3xx in a model that runs: {raises:?}",
                case.id
            )),
            shapes: tally_shapes(&case.id, &got, want),
        };
    }
    CaseRun {
        result: compare_nodes(&case.id, &got, want),
        shapes: tally_shapes(&case.id, &got, want),
    }
}

fn compare_nodes(id: &str, got: &[Value], want: &[Value]) -> Result<(usize, usize), String> {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if key(g) != key(w) {
            return Err(format!(
                "{id}: node {i} differs:\n  got      {}\n  expected {}",
                key(g),
                key(w)
            ));
        }
        if args_key(g) != args_key(w) {
            return Err(format!(
                "{id}: arguments of node {i} ({}) differ:\n  got      {}\n  expected {}",
                g["name"],
                args_key(g),
                args_key(w)
            ));
        }
    }
    if got.len() != want.len() {
        return Err(format!(
            "{id}: {} nodes, torch.fx has {}",
            got.len(),
            want.len()
        ));
    }
    Ok((got.len(), want.len()))
}

/// The node shapes of one case against torch.fx's. After a first difference the names of
/// the two graphs can drift apart (one extra `add` and every later `add_k` is another node), so
/// only pairs that clearly are the same node are compared: the same name, opcode and target,
/// taking the same nodes as arguments.
fn tally_shapes(id: &str, got: &[Value], want: &[Value]) -> Tally {
    let by_name: std::collections::HashMap<&str, &Value> = want
        .iter()
        .map(|n| (n["name"].as_str().unwrap_or(""), n))
        .collect();
    let refs = |n: &Value| {
        let mut r = Vec::new();
        collect_refs(&n["args"], &mut r);
        collect_refs(&n["kwargs"], &mut r);
        r
    };
    let mut tally = Tally::default();
    for g in got {
        let Some(w) = by_name.get(g["name"].as_str().unwrap_or("")) else {
            continue;
        };
        if g["op"] != w["op"] || g["target"] != w["target"] || refs(g) != refs(w) {
            continue;
        }
        tally.add(
            id,
            g["name"].as_str().unwrap_or(""),
            &w["shape"],
            &w["dtype"],
            &g["shape"],
            &g["dtype"],
        );
    }
    tally
}

/// The generator passes the forward parameters a case gives no input for as `concrete_args`
/// at their defaults (the graph of `model(x)`). torch.fx then names such a placeholder
/// `attn_mask_1` and guards it in the graph (`_assert_is_none(attn_mask_1, …)`, or
/// `eq(is_causal_1, False)` and `_assert(eq, "… has been specialized …")`). staticfx keeps the
/// parameter's own placeholder with its default and puts no guard in the graph (Dynamo keeps
/// its guards outside the graph too). So the guards are taken out, the placeholder gets its
/// parameter's name back, and the nodes torch.fx numbered after a removed guard of the same
/// base name (`eq_1`, `_assert_1`, …) are renumbered as torch.fx numbers them without it.
fn without_specialization_guards(nodes: &[Value]) -> Vec<Value> {
    let is_guard_message = |v: &Value| {
        v.as_str()
            .is_some_and(|m| m.contains("has been specialized to have value"))
    };
    let refs_of = |n: &Value| {
        let mut refs = Vec::new();
        collect_refs(&n["args"], &mut refs);
        refs
    };
    let mut removed: Vec<String> = Vec::new();
    let mut specialized: Vec<String> = Vec::new();
    for n in nodes {
        let target = n["target"].as_str().unwrap_or("");
        let args = n["args"].as_array().cloned().unwrap_or_default();
        let guard = target == "torch.fx._symbolic_trace._assert_is_none"
            || (target == "torch._assert" && args.get(1).is_some_and(is_guard_message));
        if !guard {
            continue;
        }
        removed.push(n["name"].as_str().unwrap().to_string());
        for r in refs_of(n) {
            let r = r.trim_matches('"').to_string();
            let producer = nodes.iter().find(|m| m["name"] == r.as_str()).unwrap();
            match producer["op"].as_str() {
                Some("placeholder") => specialized.push(r),
                // `eq(is_causal_1, False)`, the comparison the `_assert` guards.
                _ => {
                    removed.push(r);
                    specialized.extend(
                        refs_of(producer)
                            .iter()
                            .map(|p| p.trim_matches('"').to_string()),
                    );
                }
            }
        }
    }
    if removed.is_empty() {
        return nodes.to_vec();
    }
    let split = |name: &str| -> (String, usize) {
        match name.rsplit_once('_') {
            Some((base, k)) if !base.is_empty() && k.parse::<usize>().is_ok() => {
                (base.to_string(), k.parse().unwrap())
            }
            _ => (name.to_string(), 0),
        }
    };
    let mut shift: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for r in &removed {
        *shift.entry(split(r).0).or_default() += 1;
    }
    let mut renamed: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for n in nodes {
        let name = n["name"].as_str().unwrap();
        if specialized.iter().any(|s| s == name) {
            renamed.insert(name.to_string(), split(name).0);
        } else if !removed.iter().any(|r| r == name) {
            let (base, k) = split(name);
            if let Some(&by) = shift.get(&base) {
                if k >= by && k > 0 {
                    let k = k - by;
                    let new = if k == 0 {
                        base.clone()
                    } else {
                        format!("{base}_{k}")
                    };
                    renamed.insert(name.to_string(), new);
                }
            }
        }
    }
    fn rename_refs(v: &mut Value, renamed: &std::collections::HashMap<String, String>) {
        match v {
            Value::Object(m) if m.contains_key("node") => {
                if let Some(new) = m["node"].as_str().and_then(|r| renamed.get(r)) {
                    m.insert("node".into(), Value::String(new.clone()));
                }
            }
            Value::Object(m) => m.values_mut().for_each(|x| rename_refs(x, renamed)),
            Value::Array(a) => a.iter_mut().for_each(|x| rename_refs(x, renamed)),
            _ => {}
        }
    }
    nodes
        .iter()
        .filter(|n| !removed.iter().any(|r| n["name"] == r.as_str()))
        .map(|n| {
            let mut n = n.clone();
            if let Some(new) = n["name"].as_str().and_then(|x| renamed.get(x)).cloned() {
                if n["op"] == "placeholder" {
                    n["target"] = Value::String(new.clone());
                }
                n["name"] = Value::String(new);
            }
            rename_refs(&mut n["args"], &renamed);
            rename_refs(&mut n["kwargs"], &renamed);
            n
        })
        .collect()
}

#[test]
fn specialization_guards_are_taken_out_and_the_names_after_them_renumbered() {
    let node = |name: &str, op: &str, target: &str, args: Value| serde_json::json!({"name": name, "op": op, "target": target, "args": args, "kwargs": {}});
    let r = |name: &str| serde_json::json!({"node": name});
    let msg = "is_causal has been specialized to have value False but got another value";
    let traced = [
        node("x", "placeholder", "x", serde_json::json!([])),
        node("mask_1", "placeholder", "mask_1", serde_json::json!([null])),
        node(
            "_assert_is_none",
            "call_function",
            "torch.fx._symbolic_trace._assert_is_none",
            serde_json::json!([
                r("mask_1"),
                "mask has been specialized to have value None but got another value"
            ]),
        ),
        node(
            "causal_1",
            "placeholder",
            "causal_1",
            serde_json::json!([false]),
        ),
        node(
            "eq",
            "call_function",
            "operator.eq",
            serde_json::json!([r("causal_1"), false]),
        ),
        node(
            "_assert",
            "call_function",
            "torch._assert",
            serde_json::json!([r("eq"), msg]),
        ),
        node(
            "eq_1",
            "call_function",
            "operator.eq",
            serde_json::json!([r("x"), 224]),
        ),
        node(
            "_assert_1",
            "call_function",
            "torch._assert",
            serde_json::json!([r("eq_1"), "Input height doesn't match"]),
        ),
        node(
            "eq_2",
            "call_function",
            "operator.eq",
            serde_json::json!([r("x"), 3]),
        ),
    ];
    let names: Vec<(String, String)> = without_specialization_guards(&traced)
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap().to_string(),
                n["args"].to_string(),
            )
        })
        .collect();
    let want = [
        ("x", "[]"),
        ("mask", "[null]"),
        ("causal", "[false]"),
        ("eq", r#"[{"node":"x"},224]"#),
        ("_assert", r#"[{"node":"eq"},"Input height doesn't match"]"#),
        ("eq_1", r#"[{"node":"x"},3]"#),
    ];
    assert_eq!(
        names,
        want.map(|(n, a)| (n.to_string(), a.to_string())).to_vec()
    );
    // A graph without guards is left as it is.
    assert_eq!(
        without_specialization_guards(&traced[6..]),
        traced[6..].to_vec()
    );
}

/// Builds `cases`, which must be identical to torch.fx, and tallies their node shapes into
/// `shapes`; the cases that differ, as failures.
fn check_all(cases: Vec<Case>, shapes: &mut Tally) -> Vec<String> {
    let mut failures = Vec::new();
    for case in &cases {
        // Deep models need a deep stack; the CLI runs on a big thread for the same reason.
        let c = Case {
            id: case.id.clone(),
            file: case.file.clone(),
            root: case.root.clone(),
            entry: case.entry.clone(),
            inputs: case.inputs.clone(),
        };
        let r = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || run_case(&c))
            .unwrap()
            .join()
            .unwrap();
        shapes.merge(r.shapes);
        match r.result {
            Ok((n, _)) => eprintln!("{:<24} {n:>4} nodes  identical to torch.fx", case.id),
            Err(e) => failures.push(e),
        }
    }
    failures
        .iter()
        .map(|f| format!("{f} ({} cases)", cases.len()))
        .collect()
}

/// Node shapes staticfx shows that differ from torch.fx's, as (case, node name). Each is a bug
/// to fix and then to take out of this list: the tests hold it exactly, so it cannot grow.
const KNOWN_WRONG: &[(&str, &str)] = &[];

/// Prints the shape tally of `suite` (the cases `ids`) and asserts that no case differs from
/// torch.fx and that the wrong shapes are exactly those [`KNOWN_WRONG`] lists for these cases.
fn finish(suite: &str, ids: &[String], failures: Vec<String>, shapes: Tally) {
    let known: Vec<(&str, &str)> = KNOWN_WRONG
        .iter()
        .filter(|(case, _)| ids.iter().any(|id| id == case))
        .copied()
        .collect();
    shapes.report_and_check(suite, &known);
    assert!(
        failures.is_empty(),
        "{} cases differ from torch.fx:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn own_fixtures_match_torch_fx() {
    let dir = manifest_dir().join("tests/fixtures/models");
    let manifest = read_json(&dir.join("manifest.json"));
    let cases = manifest
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            id: c["id"].as_str().unwrap().into(),
            file: dir.join(c["file"].as_str().unwrap()),
            root: None,
            entry: c["entry"].as_str().unwrap().into(),
            inputs: inputs_of(&c["inputs"]),
        })
        .collect::<Vec<_>>();
    assert!(cases.len() >= 12);
    let mut shapes = Tally::default();
    let ids: Vec<String> = cases.iter().map(|c| c.id.clone()).collect();
    let failures = check_all(cases, &mut shapes);
    finish("own fixtures", &ids, failures, shapes);
}

#[test]
fn torchvision_models_match_torch_fx() {
    let Some(root) = corpus_support::corpus_root("STATICFX_TORCHVISION_ROOT", "torchvision") else {
        return;
    };
    let cases_json = read_json(&manifest_dir().join("scripts/expect/torchvision_cases.json"));
    let cases = cases_json
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            id: c["id"].as_str().unwrap().into(),
            file: root.join("torchvision").join(c["file"].as_str().unwrap()),
            root: Some(root.clone()),
            entry: c["entry"].as_str().unwrap().into(),
            inputs: inputs_of(&c["inputs"]),
        })
        .collect::<Vec<_>>();
    assert!(cases.len() >= 12);
    let mut shapes = Tally::default();
    let ids: Vec<String> = cases.iter().map(|c| c.id.clone()).collect();
    let failures = check_all(cases, &mut shapes);
    finish("torchvision", &ids, failures, shapes);
}

/// timm models that agree node for node with torch.fx today, asserted; every other timm case
/// with an expectation is run too and its first divergence printed (the list to work down).
const TIMM_AGREE: &[&str] = &[
    "timm_vit_tiny_patch16_224",
    "timm_deit_tiny_patch16_224",
    "timm_levit_128s",
    "timm_rexnet_100",
    "timm_resnet18",
    "timm_resnet50d",
    "timm_resnet10t",
    "timm_convnext_atto",
    "timm_efficientnet_b0",
    "timm_mnasnet_050",
    "timm_tinynet_e",
    "timm_mobilenetv3_small_050",
    "timm_mobilenetv4_conv_small",
    "timm_regnetx_002",
    "timm_mixer_s16_224",
    "timm_ghostnet_100",
    "timm_poolformer_s12",
    "timm_cspdarknet53",
    "timm_cspresnet50",
    "timm_dla34",
    "timm_fastvit_t8",
    "timm_densenet121",
    "timm_dpn68",
    "timm_resnest14d",
    "timm_xception41",
    "timm_repvgg_a0",
    "timm_selecsls42",
    "timm_starnet_s1",
    "timm_hgnetv2_b0",
    "timm_convmixer_768_32",
    "timm_inception_v3",
    "timm_res2net50_14w_8s",
    "timm_sebotnet33ts_256",
    "timm_pit_ti_224",
    "timm_beit_base_patch16_224",
    "timm_cait_xxs24_224",
    "timm_twins_pcpvt_small",
    "timm_visformer_tiny",
    "timm_gernet_s",
    "timm_lcnet_050",
    "timm_hardcorenas_a",
    "timm_fbnetv3_b",
    "timm_ese_vovnet19b_dw",
    "timm_tresnet_m",
    "timm_nf_resnet26",
    "timm_mambaout_femto",
    "timm_repvit_m0_9",
    "timm_pvt_v2_b0",
    "timm_rdnet_tiny",
    "timm_shvit_s1",
    "timm_vovnet39a",
    "timm_skresnet18",
    "timm_legacy_seresnet18",
    "timm_inception_next_atto",
    "timm_swin_tiny_patch4_window7_224",
    "timm_efficientformer_l1",
    "timm_tnt_s_legacy_patch16_224",
    "timm_hrnet_w18_small",
    "timm_coat_tiny",
    "timm_gcvit_xxtiny",
    "timm_volo_d1_224",
    "timm_sequencer2d_s",
    "timm_maxvit_tiny_rw_224",
    "timm_edgenext_xx_small",
    "timm_xcit_nano_12_p16_224",
];

#[test]
fn timm_models_match_torch_fx() {
    let Some(root) = corpus_support::corpus_root("STATICFX_TIMM_ROOT", "timm") else {
        return;
    };
    let cases_json = read_json(&manifest_dir().join("scripts/expect/timm_cases.json"));
    let cases: Vec<Case> = cases_json
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            let id = c["id"].as_str().unwrap();
            manifest_dir()
                .join(format!("tests/expected/fx/{id}.json"))
                .exists()
        })
        .map(|c| Case {
            id: c["id"].as_str().unwrap().into(),
            file: root.join("timm").join(c["file"].as_str().unwrap()),
            root: Some(root.clone()),
            entry: c["entry"].as_str().unwrap().into(),
            inputs: inputs_of(&c["inputs"]),
        })
        .collect();
    for id in TIMM_AGREE {
        assert!(
            cases.iter().any(|c| c.id == *id),
            "{id} is asserted but has no expectation"
        );
    }
    let ids: Vec<String> = cases.iter().map(|c| c.id.clone()).collect();
    let (asserted, rest): (Vec<Case>, Vec<Case>) = cases
        .into_iter()
        .partition(|c| TIMM_AGREE.contains(&c.id.as_str()));
    // The shapes of every case are tallied, asserted or not.
    let mut shapes = Tally::default();
    for case in rest {
        let id = case.id.clone();
        let r = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || run_case(&case))
            .unwrap()
            .join();
        let r = match r {
            Ok(run) => {
                shapes.merge(run.shapes);
                run.result
                    .map_err(|e| e.lines().take(3).collect::<Vec<_>>().join(" | "))
            }
            Err(_) => Err("panicked".into()),
        };
        match r {
            Ok((n, _)) => eprintln!("{id:<40} {n:>4} nodes  identical, not yet asserted"),
            Err(e) => eprintln!("{id:<40} differs: {e}"),
        }
    }
    let failures = check_all(asserted, &mut shapes);
    finish("timm", &ids, failures, shapes);
}
