//! Corpus sweep: per-class graphs and graph-break checks over every Python file of real
//! packages, with a per-file time limit. No file may panic or exceed the limit unnoticed; the
//! summary counts complete graphs and, for the rest, what stopped them, by construct: the
//! list of what to support next.
//!
//! `STATICFX_SWEEP=DIR/transformers:DIR/timm:DIR/torchvision cargo bench --bench corpus_sweep`
//! Each entry is a project root (an unzipped wheel: the directory holding the package).
//! `STATICFX_SWEEP_LIMIT_SECS` sets the per-file limit (default 10); with
//! `STATICFX_SWEEP_LIST=1` each incomplete class is printed with the message that stopped it.
//! `STATICFX_SWEEP_ONLY=diffusers/models` sweeps only the files under that path, relative to
//! each root (the rest of the root is still there for imports), e.g.
//! `STATICFX_SWEEP=$STATICFX_DIFFUSERS_ROOT STATICFX_SWEEP_ONLY=diffusers/models cargo bench
//! --bench corpus_sweep`. `scripts/limits_per_file.py` counts the analysis limits `check` shows
//! per file over the same folder.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use staticfx::analysis::{analyze_in_project, GraphOptions};
use staticfx::semantic::project::ParseCache;
use staticfx::semantic::Project;

mod support;

/// What stopped a graph, with the names of the user's code taken out so that equal causes
/// count together: "unsupported statement `match_statement`" keeps its construct, while
/// "`Foo` object is not callable" becomes "`_` object is not callable".
fn construct(code: &str, message: &str) -> String {
    if let Some(rest) = message.strip_prefix("raises ") {
        let exc: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
            .collect();
        return format!("{code} raises {exc}");
    }
    let keep = message.starts_with("unsupported") || message.starts_with("operator");
    let mut out = String::new();
    let mut inside = false;
    let mut kept_one = false;
    for ch in message.chars() {
        if ch == '`' {
            if !inside {
                out.push('`');
                if !(keep && !kept_one) {
                    out.push('_');
                }
            } else {
                kept_one = true;
                out.push('`');
            }
            inside = !inside;
            continue;
        }
        if !inside || (keep && !kept_one) {
            out.push(ch);
        }
    }
    // Reasons in parentheses or after a colon name specific values.
    let cut = out
        .find(" (")
        .or_else(|| out.find(": "))
        .unwrap_or(out.len());
    format!("{code} {}", &out[..cut])
}

#[derive(Default)]
struct Tally {
    files: usize,
    classes: usize,
    complete: usize,
    findings: usize,
    panics: Vec<PathBuf>,
    timeouts: Vec<PathBuf>,
    read_errors: usize,
    stopped_by: BTreeMap<String, usize>,
    slowest: (f64, PathBuf),
}

fn main() {
    let Some(roots) = std::env::var_os("STATICFX_SWEEP") else {
        eprintln!("set STATICFX_SWEEP to ':'-separated project roots (unzipped wheels)");
        return;
    };
    let limit = Duration::from_secs(
        std::env::var("STATICFX_SWEEP_LIMIT_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10),
    );
    let list = std::env::var_os("STATICFX_SWEEP_LIST").is_some();
    let only = std::env::var_os("STATICFX_SWEEP_ONLY").map(PathBuf::from);
    let mut total = Tally::default();
    for root in std::env::split_paths(&roots) {
        let mut files = support::files_under(&root, |n| n.ends_with(".py"));
        if let Some(only) = &only {
            let under = root.join(only);
            files.retain(|f| f.starts_with(&under));
        }
        let cache = ParseCache::default();
        let mut t = Tally::default();
        let started = Instant::now();
        for f in &files {
            t.files += 1;
            let start = Instant::now();
            let (path, root2, cache) = (f.clone(), root.clone(), cache.clone());
            let r = std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn(move || {
                    std::panic::catch_unwind(AssertUnwindSafe(|| {
                        let project = Project::new(root2).with_parse_cache(cache);
                        let opts = GraphOptions {
                            time_limit: Some(limit),
                            ..Default::default()
                        };
                        analyze_in_project(project, &path, &opts).map(|a| {
                            let mut out = (0, 0, 0, Vec::new(), false);
                            for g in &a.graphs {
                                out.0 += 1;
                                out.2 += g.breaks.len();
                                match &g.error {
                                    None => out.1 += 1,
                                    Some(e) => {
                                        out.4 |= e.message.starts_with("time limit");
                                        out.3.push(construct(e.code, &e.message));
                                        if list {
                                            println!(
                                                "INCOMPLETE {}: {}: {} {}",
                                                path.display(),
                                                g.class,
                                                e.code,
                                                e.message
                                            );
                                        }
                                    }
                                }
                            }
                            out.4 |= a
                                .diagnostics
                                .iter()
                                .any(|d| d.message.starts_with("time limit"));
                            out
                        })
                    }))
                })
                .expect("spawn")
                .join();
            match r {
                Ok(Ok(Ok((n, ok, findings, stopped, timed_out)))) => {
                    t.classes += n;
                    t.complete += ok;
                    t.findings += findings;
                    for s in stopped {
                        *t.stopped_by.entry(s).or_default() += 1;
                    }
                    if timed_out {
                        t.timeouts.push(f.clone());
                    }
                }
                Ok(Ok(Err(_))) => t.read_errors += 1,
                _ => t.panics.push(f.clone()),
            }
            let secs = start.elapsed().as_secs_f64();
            if secs > t.slowest.0 {
                t.slowest = (secs, f.clone());
            }
        }
        println!(
            "{}: {} files in {:.1} s; {} classes, {} complete graphs ({:.1}%), {} graph-break findings; slowest {:.2} s ({}); panics {}, over the time limit {}, unreadable {}",
            root.display(),
            t.files,
            started.elapsed().as_secs_f64(),
            t.classes,
            t.complete,
            100.0 * t.complete as f64 / t.classes.max(1) as f64,
            t.findings,
            t.slowest.0,
            t.slowest.1.strip_prefix(&root).unwrap_or(&t.slowest.1).display(),
            t.panics.len(),
            t.timeouts.len(),
            t.read_errors,
        );
        total.files += t.files;
        total.classes += t.classes;
        total.complete += t.complete;
        total.findings += t.findings;
        total.read_errors += t.read_errors;
        total.panics.extend(t.panics);
        total.timeouts.extend(t.timeouts);
        for (k, v) in t.stopped_by {
            *total.stopped_by.entry(k).or_default() += v;
        }
    }
    println!(
        "\ntotal: {} files, {} classes, {} complete ({:.1}%), {} incomplete",
        total.files,
        total.classes,
        total.complete,
        100.0 * total.complete as f64 / total.classes.max(1) as f64,
        total.classes - total.complete
    );
    let mut by: Vec<_> = total.stopped_by.into_iter().collect();
    by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!("\n| classes | what stopped the graph |\n|---:|---|");
    for (k, v) in by.iter().take(40) {
        println!("| {v} | {} |", k.replace('|', "\\|"));
    }
    for p in &total.panics {
        println!("PANIC: {}", p.display());
    }
    for p in &total.timeouts {
        println!("TIME LIMIT: {}", p.display());
    }
    assert!(total.panics.is_empty(), "no file may panic");
}
