//! Per-class analysis of real diffusers models (issue 42, item 1): each class of
//! `tests/expected/diffusers/classes.json` is built from its constructor's defaults (through
//! `@register_to_config` into `self.config`, as `Cls()` builds it) and its forward is traced to
//! its return with no analysis limit. The module tree staticfx built is held to the one real
//! diffusers builds from the same defaults (`scripts/expect/gen_diffusers_recordings.py`, on
//! the meta device): every torch.nn leaf module with its class, and the parameter count.
//!
//! Needs diffusers' source (`$STATICFX_DIFFUSERS_ROOT`, a directory holding `diffusers/`,
//! fetched by `scripts/test-all.sh`) and the user venv with huggingface_hub and transformers
//! (`$STATICFX_USER_VENV`), which diffusers imports; skips with a note without them.

mod corpus_support;

use std::path::Path;

use serde_json::Value;
use staticfx::analysis::{analyze_file, GraphOptions};
use staticfx::graph::Op;

/// Classes whose per-class trace does not reach forward's return yet, each with the
/// analysis limit that stops it (a part of its message). The test fails when one of them
/// starts to work, so the list only shrinks.
const INCOMPLETE: &[(&str, &str)] = &[
    // the rotary embedding loops `range(ids.shape[-1])`: the ids, a None-defaulted input,
    // have no rank a layer fixes
    (
        "FluxTransformer2DModel",
        "range() over a value only known at run time",
    ),
    // `timestep: torch.LongTensor | None = None`, required in fact: an argument annotated
    // optional stays None (its first use is the timestep embedding's
    // `assert len(timesteps.shape) == 1`, an assert condition Dynamo evaluates too)
    (
        "DiTTransformer2DModel",
        "'NoneType' object has no attribute 'shape'",
    ),
    // `img_shapes: list[tuple[int, int, int]] | None = None`, a list forward needs
    ("QwenImageTransformer2DModel", "`NoneType` is not iterable"),
    // forward requires `added_cond_kwargs` (a dict) with the default config
    (
        "PixArtTransformer2DModel",
        "`added_cond_kwargs` cannot be None",
    ),
    // the encoder's frame loop over a traced frame count: its body is traced once (the first
    // chunk) and `out`, which it builds, is unknown after it (before, the loop was skipped
    // and `out` read as not defined)
    (
        "AutoencoderKLWan",
        "range() over a value only known at run time",
    ),
];

use corpus_support::diffusers::{diffusers_root, user_environment, user_venv};

/// What per-class analysis of one class gave.
struct Built {
    /// torch.nn leaves, `(qualified name, class)`, sorted.
    leaves: Vec<(String, String)>,
    params: u64,
    /// Analysis limits (FX9xx) and the error that stopped the trace, if any.
    limits: Vec<String>,
    returned: bool,
}

fn analyse(root: &Path, venv: &Path, file: &Path, class: &str) -> Built {
    let opts = GraphOptions {
        root: Some(root.to_path_buf()),
        class: Some(class.to_string()),
        environment: Some(user_environment(root, venv)),
        ..Default::default()
    };
    let file = file.to_path_buf();
    staticfx::ide::on_large_stack("diffusers", move || {
        let a = analyze_file(&file, &opts).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let g = a
            .graphs
            .iter()
            .find(|g| g.class == class_name(&opts))
            .unwrap_or_else(|| panic!("no graph of {:?}", opts.class));
        let mut limits: Vec<String> = a
            .diagnostics
            .iter()
            .filter(|d| d.code.starts_with("FX9") && d.file == a.file)
            .map(|d| format!("{} {}", d.code, d.message))
            .collect();
        if let Some(e) = &g.error {
            let f = a.project.file(e.file);
            let line = f.text[..e.span.start.min(f.text.len())]
                .matches('\n')
                .count()
                + 1;
            let name = f.path.file_name().unwrap_or_default().to_string_lossy();
            limits.push(format!(
                "stopped at {name}:{line}: {} {}",
                e.code, e.message
            ));
        }
        let mut leaves: Vec<(String, String)> = g
            .modules
            .iter()
            .filter(|m| m.leaf && !m.path.is_empty())
            .map(|m| (m.path.clone(), m.class.clone()))
            .collect();
        leaves.sort();
        let params = g
            .modules
            .iter()
            .flat_map(|m| m.params.iter().filter(|p| !p.buffer))
            .map(|p| {
                p.shape
                    .as_ref()
                    .map_or(0, |s| s.iter().product::<i64>() as u64)
            })
            .sum();
        let returned = g.graph.nodes().any(|(_, n)| n.op == Op::Output);
        Built {
            leaves,
            params,
            limits,
            returned,
        }
    })
    .unwrap()
}

fn class_name(opts: &GraphOptions) -> String {
    opts.class.clone().unwrap()
}

#[test]
fn diffusers_models_build_from_defaults_and_trace_to_return() {
    let (Some(root), Some(venv)) = (diffusers_root(), user_venv()) else {
        return;
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/diffusers/classes.json");
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut failures = Vec::new();
    let mut complete = 0;
    for case in recorded["classes"].as_array().unwrap() {
        let class = case["class"].as_str().unwrap();
        if case.get("error").is_some() {
            continue;
        }
        let file = root.join("diffusers").join(case["file"].as_str().unwrap());
        let started = std::time::Instant::now();
        let got = analyse(&root, &venv, &file, class);
        eprintln!(
            "{class}: {:.1}s, {} leaves, {} params, {} limits",
            started.elapsed().as_secs_f64(),
            got.leaves.len(),
            got.params,
            got.limits.len()
        );
        // the module tree: what the defaults build, traced or not
        let mut want: Vec<(String, String)> = case["leaves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l[0].as_str().unwrap().to_string(),
                    l[1].as_str().unwrap().to_string(),
                )
            })
            .collect();
        want.sort();
        if got.leaves != want {
            let missing: Vec<_> = want
                .iter()
                .filter(|l| !got.leaves.contains(l))
                .take(5)
                .collect();
            let extra: Vec<_> = got
                .leaves
                .iter()
                .filter(|l| !want.contains(l))
                .take(5)
                .collect();
            failures.push(format!(
                "{class}: leaf modules differ ({} vs {} recorded); missing {missing:?}, extra {extra:?}",
                got.leaves.len(),
                want.len()
            ));
        }
        if got.params != case["params"].as_u64().unwrap() {
            failures.push(format!(
                "{class}: {} parameters, diffusers builds {}",
                got.params, case["params"]
            ));
        }
        // the trace: to forward's return, with nothing staticfx could not follow
        let complete_trace = got.returned && got.limits.is_empty();
        match INCOMPLETE.iter().find(|(c, _)| *c == class) {
            Some((_, why)) if complete_trace => failures.push(format!(
                "{class} now traces completely: remove it from INCOMPLETE (was: {why})"
            )),
            Some((_, why)) if !got.limits.iter().any(|l| l.contains(why)) => {
                failures.push(format!(
                    "{class}: stopped otherwise than listed ({why}): {:?}",
                    got.limits
                ))
            }
            Some(_) => {}
            None if complete_trace => complete += 1,
            None => failures.push(format!(
                "{class}: the trace is not complete (returned: {}): {:?}",
                got.returned, got.limits
            )),
        }
    }
    eprintln!("{complete} classes traced completely");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
