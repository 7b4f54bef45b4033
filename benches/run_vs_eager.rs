//! Latency per forward of the bundled executor next to eager PyTorch, same machine, same
//! run, same thread count (2 by default), same models and input shapes.
//!
//! ```text
//! scripts/bench/run_vs_eager.sh            # or:
//! STATICFX_TORCHVISION_ROOT=DIR PYTHON=VENV/bin/python \
//!     cargo bench --bench run_vs_eager
//! ```
//!
//! The executor side traces each model from source, initialises weights from a seed and
//! times `Program::run` (inputs and weights prepared once, as PyTorch's are). The eager side
//! is `scripts/bench/eager_latency.py` under `torch.inference_mode()`. Both report the
//! median of the timed runs after a warm-up; the ratio is ours / eager (below 1 = faster).
//! `BENCH_THREADS` sets both sides' threads; `BENCH_ONLY=id,id` picks cases.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use serde_json::{json, Value};
use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};
use staticfx::exec::{self, Program, RunOptions};

// The allocator of the `staticfx` binary (src/main.rs), so the timings are what `run` gets.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Case {
    id: &'static str,
    /// `fixture` (tests/fixtures/models) or `torchvision`.
    source: &'static str,
    file: &'static str,
    entry: &'static str,
    inputs: &'static [&'static str],
    runs: usize,
}

const CASES: &[Case] = &[
    Case {
        id: "mlp",
        source: "fixture",
        file: "mlp.py",
        entry: "SimpleNet()",
        inputs: &["x=8,784"],
        runs: 2000,
    },
    Case {
        id: "small_cnn",
        source: "fixture",
        file: "cnn.py",
        entry: "SmallCNN()",
        inputs: &["x=8,3,32,32"],
        runs: 300,
    },
    Case {
        id: "attention",
        source: "fixture",
        file: "attention.py",
        entry: "SelfAttention(n_embd=32, n_head=4)",
        inputs: &["x=4,16,32"],
        runs: 2000,
    },
    Case {
        id: "transformer",
        source: "fixture",
        file: "transformer_block.py",
        entry: "TinyTransformer()",
        inputs: &["x=4,16,32"],
        runs: 1000,
    },
    Case {
        id: "resnet18",
        source: "torchvision",
        file: "models/resnet.py",
        entry: "ResNet(BasicBlock, [2, 2, 2, 2])",
        inputs: &["x=1,3,224,224"],
        runs: 20,
    },
    Case {
        id: "mobilenet_v2",
        source: "torchvision",
        file: "models/mobilenetv2.py",
        entry: "MobileNetV2()",
        inputs: &["x=1,3,224,224"],
        runs: 20,
    },
    Case {
        id: "squeezenet1_1",
        source: "torchvision",
        file: "models/squeezenet.py",
        entry: "SqueezeNet(\"1_1\")",
        inputs: &["x=1,3,224,224"],
        runs: 20,
    },
    Case {
        id: "shufflenet_v2",
        source: "torchvision",
        file: "models/shufflenetv2.py",
        entry: "ShuffleNetV2([4, 8, 4], [24, 116, 232, 464, 1024])",
        inputs: &["x=1,3,224,224"],
        runs: 20,
    },
];

fn main() {
    // `cargo test --all-targets` runs this binary without `--bench`: then it only checks that
    // every fixture case runs, a few times each, without timing or Python.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let threads: usize = std::env::var("BENCH_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .expect("rayon pool");
    let only: Option<Vec<String>> = std::env::var("BENCH_ONLY")
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect());
    let python = std::env::var("PYTHON").ok();
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tv_root = std::env::var_os("STATICFX_TORCHVISION_ROOT").map(PathBuf::from);

    // (traced, optimized) median ms per forward.
    let mut ours: HashMap<&str, (f64, f64)> = HashMap::new();
    let mut eager_cases = Vec::new();
    for c in CASES {
        if only.as_ref().is_some_and(|o| !o.iter().any(|x| x == c.id)) {
            continue;
        }
        if smoke && c.source != "fixture" {
            continue;
        }
        let runs = if smoke { 2 } else { c.runs };
        let (path, root) = match c.source {
            "fixture" => (manifest.join("tests/fixtures/models").join(c.file), None),
            _ => match &tv_root {
                Some(r) => (r.join("torchvision").join(c.file), Some(r.clone())),
                None => {
                    eprintln!("{}: skipped (set STATICFX_TORCHVISION_ROOT)", c.id);
                    continue;
                }
            },
        };
        let inputs: Vec<InputSpec> = c.inputs.iter().map(|s| s.parse().unwrap()).collect();
        let opts = GraphOptions {
            root: root.clone(),
            entry: Some(c.entry.into()),
            inputs: inputs.clone(),
            ..Default::default()
        };
        let a = analyze_file(&path, &opts).expect("analysis");
        let g = &a.graphs[0];
        let run_opts = RunOptions {
            inputs: inputs.clone(),
            seed: 0,
            ..Default::default()
        };
        let xs = exec::prepare_inputs(g, &run_opts).expect("inputs");
        // The traced graph and the graph after the pass pipeline (inference mode), each timed
        // the same way: the ratio between them is what fusion buys.
        let mut optimized = staticfx::analysis::GraphResult::clone(g);
        let passes = staticfx::passes::PassOptions {
            inference: true,
            ..Default::default()
        };
        staticfx::analysis::optimize_graph(&mut optimized, &passes).expect("passes");
        let mut medians = [0f64; 2];
        for (slot, graph) in [g, &optimized].into_iter().enumerate() {
            let params = exec::prepare_params(graph, None, 0).expect("params");
            let program = Program::new(graph, params).expect("program");
            for _ in 0..(runs / 10).max(1) {
                program.run(&xs).expect("run");
            }
            let mut times = Vec::with_capacity(runs);
            for _ in 0..runs {
                let t0 = Instant::now();
                std::hint::black_box(program.run(&xs).expect("run"));
                times.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(|a, b| a.partial_cmp(b).unwrap());
            medians[slot] = times[times.len() / 2];
        }
        ours.insert(c.id, (medians[0], medians[1]));
        let input_json: serde_json::Map<String, Value> = inputs
            .iter()
            .map(|i| {
                (
                    i.name.clone(),
                    json!({"shape": i.shape, "dtype": i.dtype.as_str()}),
                )
            })
            .collect();
        eager_cases.push(json!({
            "id": c.id,
            "source": c.source,
            "path": path,
            "module": c.file.trim_end_matches(".py").replace('/', "."),
            "entry": c.entry,
            "inputs": input_json,
            "runs": runs,
        }));
    }
    if smoke {
        println!(
            "run_vs_eager (smoke mode, without --bench): {} cases ran",
            ours.len()
        );
        return;
    }
    let Some(python) = python else {
        println!("run_vs_eager: eager side skipped, set PYTHON to an interpreter that has torch");
        return;
    };
    let tmp = std::env::temp_dir().join(format!("staticfx-bench-{}.json", std::process::id()));
    std::fs::write(&tmp, serde_json::to_string(&eager_cases).unwrap()).unwrap();
    let mut cmd = std::process::Command::new(&python);
    cmd.arg(manifest.join("scripts/bench/eager_latency.py"))
        .arg(&tmp)
        .arg(threads.to_string());
    if let Some(r) = &tv_root {
        let pp = std::env::var("PYTHONPATH").unwrap_or_default();
        // Eager runs torchvision from the same source tree the executor traced.
        cmd.env("PYTHONPATH", format!("{}:{pp}", r.display()));
    }
    let out = cmd.output().expect("run the eager side");
    let _ = std::fs::remove_file(&tmp);
    if !out.status.success() {
        eprintln!(
            "eager side failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let eager: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    println!("threads: {threads} (rayon for staticfx, torch.set_num_threads for eager)");
    println!(
        "{:<16} {:>12} {:>12} {:>10} {:>13} {:>13} {:>15}",
        "model", "traced ms", "fused ms", "eager ms", "traced/eager", "fused/eager", "fused/traced"
    );
    for c in CASES {
        let Some(&(traced, fused)) = ours.get(c.id) else {
            continue;
        };
        match eager[c.id]["median_ms"].as_f64() {
            Some(e) => println!(
                "{:<16} {:>12.3} {:>12.3} {:>10.3} {:>12.2}x {:>12.2}x {:>14.2}x",
                c.id,
                traced,
                fused,
                e,
                traced / e,
                fused / e,
                fused / traced
            ),
            None => println!(
                "{:<16} {:>12.3} {:>12.3} {:>10} {:>13} {:>13} {:>14.2}x",
                c.id,
                traced,
                fused,
                "-",
                "-",
                "-",
                fused / traced
            ),
        }
    }
}
