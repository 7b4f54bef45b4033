//! Latency per forward of the bundled executor next to eager PyTorch, same machine, same
//! run, same thread count (2 by default), same models and input shapes.
//!
//! ```text
//! scripts/bench/run_vs_eager.sh            # or:
//! STATICFX_TORCHVISION_ROOT=DIR STATICFX_TIMM_ROOT=DIR PYTHON=VENV/bin/python \
//!     cargo bench --bench run_vs_eager
//! ```
//!
//! The executor side traces each model from source, initialises weights from a seed and
//! times `Program::run` (inputs and weights prepared once, as PyTorch's are). The eager side
//! is `scripts/bench/eager_latency.py` under `torch.inference_mode()`, one process that keeps
//! every model loaded and times a case when asked. The two sides take turns: each round runs
//! every case on ours (traced, then optimized) and then on eager, so both see the same load
//! on a shared machine. A round reports the median of its timed runs (after a warm-up); the
//! table shows the median over rounds of each side, the median of the per-round ratios
//! ours / eager (below 1 = faster) with their range, and the 1-minute load average while
//! the case ran. `BENCH_THREADS` sets both sides' threads, `BENCH_ROUNDS` the rounds (5),
//! `BENCH_ONLY=id,id` picks cases.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};
use staticfx::analysis::{analyze_file, GraphOptions, GraphResult, InputSpec};
use staticfx::exec::{self, Program, RunOptions};

// The allocator of the `staticfx` binary (src/main.rs), so the timings are what `run` gets.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Case {
    id: &'static str,
    /// `fixture` (tests/fixtures/models), `torchvision` or `timm` (under their source root).
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
    Case {
        id: "vit_tiny",
        source: "timm",
        file: "models/vision_transformer.py",
        entry: "vit_tiny_patch16_224()",
        inputs: &["x=1,3,224,224"],
        runs: 20,
    },
];

/// A traced case with both of its graphs, ready to build programs from.
struct Prepared {
    case: &'static Case,
    traced: GraphResult,
    optimized: GraphResult,
    inputs: HashMap<String, exec::RValue>,
    runs: usize,
}

fn main() {
    // `cargo test --all-targets` runs this binary without `--bench`: then it only checks that
    // every fixture case runs, a few times each, without timing or Python.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let env_num = |name: &str, default: usize| -> usize {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let threads = env_num("BENCH_THREADS", 2);
    let rounds = env_num("BENCH_ROUNDS", 5).max(1);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .expect("rayon pool");
    let only: Option<Vec<String>> = std::env::var("BENCH_ONLY")
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect());
    let python = std::env::var("PYTHON").ok();
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let roots: HashMap<&str, PathBuf> = [
        ("torchvision", "STATICFX_TORCHVISION_ROOT"),
        ("timm", "STATICFX_TIMM_ROOT"),
    ]
    .into_iter()
    .filter_map(|(source, var)| Some((source, PathBuf::from(std::env::var_os(var)?))))
    .collect();

    let mut prepared = Vec::new();
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
            source => match roots.get(source) {
                Some(r) => (r.join(source).join(c.file), Some(r.clone())),
                None => {
                    eprintln!(
                        "{}: skipped (set STATICFX_{}_ROOT)",
                        c.id,
                        source.to_uppercase()
                    );
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
        let traced = GraphResult::clone(&a.graphs[0]);
        let run_opts = RunOptions {
            inputs: inputs.clone(),
            seed: 0,
            ..Default::default()
        };
        let xs = exec::prepare_inputs(&traced, &run_opts).expect("inputs");
        // The traced graph and the graph after the pass pipeline (inference mode), each timed
        // the same way: the ratio between them is what fusion buys.
        let mut optimized = traced.clone();
        let passes = staticfx::passes::PassOptions {
            inference: true,
            ..Default::default()
        };
        staticfx::analysis::optimize_graph(&mut optimized, &passes).expect("passes");
        // the cases' inputs are all shapes (`x=1x3x224x224`), which eager PyTorch makes alike
        let input_json: serde_json::Map<String, Value> = inputs
            .iter()
            .filter_map(|i| {
                let t = i.tensor.as_ref()?;
                Some((
                    i.name.clone(),
                    json!({"shape": t.shape, "dtype": t.dtype.as_str()}),
                ))
            })
            .collect();
        let module = match c.source {
            "fixture" => String::new(),
            source => format!(
                "{source}.{}",
                c.file.trim_end_matches(".py").replace('/', ".")
            ),
        };
        eager_cases.push(json!({
            "id": c.id,
            "source": c.source,
            "path": path,
            "module": module,
            "entry": c.entry,
            "inputs": input_json,
            "runs": runs,
        }));
        prepared.push(Prepared {
            case: c,
            traced,
            optimized,
            inputs: xs,
            runs,
        });
    }
    // (traced, optimized) programs of each case, warmed up.
    let programs: Vec<[Program; 2]> = prepared
        .iter()
        .map(|p| {
            [&p.traced, &p.optimized].map(|graph| {
                let params = exec::prepare_params(graph, None, 0).expect("params");
                let program = Program::new(graph, params).expect("program");
                for _ in 0..(p.runs / 10).max(1) {
                    program.run(&p.inputs).expect("run");
                }
                program
            })
        })
        .collect();
    let time_ours = |i: usize, slot: usize| -> f64 {
        let p = &prepared[i];
        let mut times: Vec<f64> = (0..p.runs)
            .map(|_| {
                let t0 = Instant::now();
                std::hint::black_box(programs[i][slot].run(&p.inputs).expect("run"));
                t0.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        median(&mut times)
    };
    if smoke {
        for i in 0..prepared.len() {
            time_ours(i, 0);
            time_ours(i, 1);
        }
        println!(
            "run_vs_eager (smoke mode, without --bench): {} cases ran",
            prepared.len()
        );
        return;
    }
    let mut eager = python.as_deref().and_then(|python| {
        let extra_paths: Vec<String> = roots.values().map(|r| r.display().to_string()).collect();
        Eager::start(python, &manifest, &eager_cases, threads, &extra_paths)
    });
    if eager.is_none() {
        println!("run_vs_eager: eager side skipped, set PYTHON to an interpreter that has torch");
    }

    #[derive(Default)]
    struct Samples {
        traced: Vec<f64>,
        fused: Vec<f64>,
        eager: Vec<f64>,
        ratio: Vec<f64>,
        load: Vec<f64>,
    }
    let mut samples: Vec<Samples> = prepared.iter().map(|_| Samples::default()).collect();
    println!("load average at start: {}", load_average());
    for _ in 0..rounds {
        for (i, p) in prepared.iter().enumerate() {
            let s = &mut samples[i];
            s.traced.push(time_ours(i, 0));
            let fused = time_ours(i, 1);
            s.fused.push(fused);
            if let Some(e) = eager.as_mut().and_then(|e| e.time(p.case.id, p.runs)) {
                s.eager.push(e);
                s.ratio.push(fused / e);
            }
            s.load.push(load_one_minute());
        }
    }
    println!("load average at end: {}", load_average());
    println!(
        "threads: {threads} (rayon for staticfx, torch.set_num_threads for eager), {rounds} rounds, ours and eager taking turns"
    );
    println!(
        "{:<14} {:>10} {:>10} {:>10} {:>12} {:>15} {:>13} {:>6}",
        "model",
        "traced ms",
        "fused ms",
        "eager ms",
        "fused/eager",
        "(range)",
        "fused/traced",
        "load"
    );
    for (p, s) in prepared.iter().zip(&mut samples) {
        let traced = median(&mut s.traced);
        let fused = median(&mut s.fused);
        let load = s.load.iter().sum::<f64>() / s.load.len() as f64;
        if s.eager.is_empty() {
            println!(
                "{:<14} {:>10.3} {:>10.3} {:>10} {:>12} {:>15} {:>12.2}x {:>6.1}",
                p.case.id,
                traced,
                fused,
                "-",
                "-",
                "-",
                fused / traced,
                load
            );
            continue;
        }
        let (lo, hi) = s
            .ratio
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        println!(
            "{:<14} {:>10.3} {:>10.3} {:>10.3} {:>11.2}x {:>15} {:>12.2}x {:>6.1}",
            p.case.id,
            traced,
            fused,
            median(&mut s.eager),
            median(&mut s.ratio),
            format!("{lo:.2}-{hi:.2}"),
            fused / traced,
            load
        );
    }
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[xs.len() / 2]
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn load_one_minute() -> f64 {
    load_average()
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(f64::NAN)
}

/// The eager side: `eager_latency.py`, kept running with every model loaded.
struct Eager {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Eager {
    fn start(
        python: &str,
        manifest: &Path,
        cases: &[Value],
        threads: usize,
        extra_paths: &[String],
    ) -> Option<Eager> {
        let tmp = std::env::temp_dir().join(format!("staticfx-bench-{}.json", std::process::id()));
        std::fs::write(&tmp, serde_json::to_string(cases).unwrap()).unwrap();
        let mut cmd = Command::new(python);
        cmd.arg(manifest.join("scripts/bench/eager_latency.py"))
            .arg(&tmp)
            .arg(threads.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        // Eager runs the libraries from the same source trees the executor traced.
        let mut paths = extra_paths.to_vec();
        if let Ok(pp) = std::env::var("PYTHONPATH") {
            paths.push(pp);
        }
        cmd.env("PYTHONPATH", paths.join(":"));
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("eager side did not start: {e}");
                return None;
            }
        };
        let stdin = child.stdin.take()?;
        let mut stdout = BufReader::new(child.stdout.take()?);
        let mut line = String::new();
        let ready = stdout.read_line(&mut line).is_ok() && line.trim() == "ready";
        let _ = std::fs::remove_file(&tmp);
        if !ready {
            eprintln!("eager side failed to load its models (its stderr is above)");
            let _ = child.kill();
            return None;
        }
        Some(Eager {
            child,
            stdin,
            stdout,
        })
    }

    /// Median ms per forward of `runs` eager forwards of case `id`.
    fn time(&mut self, id: &str, runs: usize) -> Option<f64> {
        writeln!(self.stdin, "{id} {runs}").ok()?;
        self.stdin.flush().ok()?;
        let mut line = String::new();
        self.stdout.read_line(&mut line).ok()?;
        let v: Value = serde_json::from_str(&line).ok()?;
        v["median_ms"].as_f64()
    }
}

impl Drop for Eager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
