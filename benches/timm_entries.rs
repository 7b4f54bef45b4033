//! timm's registered models, built and traced from their own source: for each
//! `@register_model` function in `timm/models/*.py`, `staticfx graph FILE --entry 'NAME()'`,
//! with the first thing that stopped it. The table at the end is the list of what to support
//! next, most frequent first.
//!
//! `STATICFX_TIMM_ROOT=DIR/timm-1.0.31 cargo bench --bench timm_entries`
//! (the directory holding the `timm/` package: its unzipped wheel).
//! `STATICFX_TIMM_ALL=1` sweeps every registered function instead of the first of each file;
//! `STATICFX_TIMM_ONLY=name,name` sweeps only those; `STATICFX_TIMM_INPUT` sets the input
//! (default `x=1x3x224x224`); `STATICFX_SWEEP_LIMIT_SECS` the per-model time limit (default 20).

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use staticfx::analysis::{analyze_file, GraphOptions, InputSpec};

mod support;

/// The names of the `@register_model` functions of a file, in source order.
fn registered(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut decorated = false;
    for line in text.lines() {
        let t = line.trim_end();
        if t == "@register_model" || t.starts_with("@register_model(") {
            decorated = true;
        } else if decorated {
            if let Some(rest) = t.strip_prefix("def ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push(name);
                decorated = false;
            } else if !t.starts_with('@') {
                decorated = false;
            }
        }
    }
    out
}

/// The message with quoted names and numbers blanked, so equal causes count together.
fn cause(message: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for ch in message.chars() {
        if ch == '`' {
            out.push('`');
            if !inside {
                out.push('_');
            }
            inside = !inside;
            continue;
        }
        if !inside {
            out.push(if ch.is_ascii_digit() { '#' } else { ch });
        }
    }
    out.chars().take(110).collect()
}

enum Outcome {
    Graph { tensor_nodes: usize, breaks: usize },
    Stopped(String),
    Panic,
}

fn sweep_one(root: &Path, file: &Path, name: &str, input: &InputSpec, limit: Duration) -> Outcome {
    let (root, file, entry, input) = (
        root.to_path_buf(),
        file.to_path_buf(),
        format!("{name}()"),
        input.clone(),
    );
    let r = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                let opts = GraphOptions {
                    root: Some(root),
                    entry: Some(entry),
                    inputs: vec![input],
                    time_limit: Some(limit),
                    ..Default::default()
                };
                match analyze_file(&file, &opts) {
                    Err(e) => Outcome::Stopped(e.to_string()),
                    Ok(a) => {
                        let g = &a.graphs[0];
                        match &g.error {
                            Some(e) => Outcome::Stopped(format!("{} {}", e.code, e.message)),
                            None => Outcome::Graph {
                                tensor_nodes: g
                                    .graph
                                    .order
                                    .iter()
                                    .filter(|&&n| {
                                        !matches!(
                                            g.graph.node(n).op,
                                            staticfx::graph::Op::Placeholder
                                                | staticfx::graph::Op::Output
                                        )
                                    })
                                    .count(),
                                breaks: g.breaks.len(),
                            },
                        }
                    }
                }
            }))
        })
        .expect("spawn")
        .join();
    match r {
        Ok(Ok(o)) => o,
        _ => Outcome::Panic,
    }
}

fn main() {
    let Some(root) = std::env::var_os("STATICFX_TIMM_ROOT").map(PathBuf::from) else {
        eprintln!(
            "skipped: set STATICFX_TIMM_ROOT to a directory holding timm/ (its unzipped wheel)"
        );
        return;
    };
    let all = std::env::var_os("STATICFX_TIMM_ALL").is_some();
    let only: Option<Vec<String>> = std::env::var("STATICFX_TIMM_ONLY")
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect());
    let input: InputSpec = std::env::var("STATICFX_TIMM_INPUT")
        .unwrap_or_else(|_| "x=1x3x224x224".into())
        .parse()
        .expect("STATICFX_TIMM_INPUT: NAME=SHAPE");
    let limit = Duration::from_secs(
        std::env::var("STATICFX_SWEEP_LIMIT_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20),
    );
    let files = support::files_under(&root.join("timm/models"), |n| n.ends_with(".py"));
    let mut stopped_by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let (mut swept, mut built, mut panics) = (0, 0, Vec::new());
    let started = Instant::now();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let mut names = registered(&text);
        if let Some(only) = &only {
            names.retain(|n| only.contains(n));
        } else if !all {
            names.truncate(1);
        }
        for name in names {
            swept += 1;
            let t = Instant::now();
            let outcome = sweep_one(&root, file, &name, &input, limit);
            let secs = t.elapsed().as_secs_f64();
            match outcome {
                Outcome::Graph {
                    tensor_nodes,
                    breaks,
                } => {
                    built += 1;
                    println!(
                        "ok    {name:<40} {tensor_nodes:>5} nodes {breaks:>3} breaks {secs:>6.2} s"
                    );
                }
                Outcome::Stopped(msg) => {
                    let first = msg.lines().next().unwrap_or("").to_string();
                    println!("STOP  {name:<40} {secs:>6.2} s  {first}");
                    stopped_by.entry(cause(&first)).or_default().push(name);
                }
                Outcome::Panic => {
                    println!("PANIC {name}");
                    panics.push(name);
                }
            }
        }
    }
    println!(
        "\n{swept} registered models in {:.1} s: {built} traced to the end, {} stopped, {} panics",
        started.elapsed().as_secs_f64(),
        swept - built - panics.len(),
        panics.len()
    );
    let mut by: Vec<_> = stopped_by.into_iter().collect();
    by.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    println!("\n| models | what stopped them | e.g. |\n|---:|---|---|");
    for (k, v) in &by {
        println!(
            "| {} | {} | {} |",
            v.len(),
            k.replace('|', "\\|"),
            v[..v.len().min(3)].join(", ")
        );
    }
    assert!(panics.is_empty(), "no model may panic: {panics:?}");
}
