//! Benchmark: per-class graphs for every `modeling_*.py` of a transformers source tree.
//!
//! `STATICFX_CORPUS=/path/to/transformers cargo bench --bench transformers_graphs`
//! (the directory that holds the `transformers/` package, e.g. an unzipped wheel).
//! Reports files/second for the full analysis beside an anchor measured in the same process:
//! tree-sitter parsing alone of the same files, so the ratio is stable on a noisy machine.
//! Also counts panics (must be zero) and classes whose graph was complete. Files are analysed
//! one after another, each in a fresh project sharing parsed files (as `staticfx check` does).

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::Instant;

use staticfx::analysis::{analyze_in_project, GraphOptions};
use staticfx::semantic::Project;

mod support;

fn modeling_files(root: &Path) -> Vec<PathBuf> {
    support::files_under(&root.join("transformers/models"), support::is_modeling_file)
}

fn main() {
    let Some(root) = std::env::var_os("STATICFX_CORPUS").map(PathBuf::from) else {
        eprintln!("set STATICFX_CORPUS to a directory containing the transformers package (pip download --no-deps transformers; unzip)");
        return;
    };
    let files = modeling_files(&root);
    let limit: usize = std::env::var("STATICFX_BENCH_LIMIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX);
    let files: Vec<PathBuf> = files.into_iter().take(limit).collect();
    let bytes: usize = files
        .iter()
        .map(|f| std::fs::metadata(f).map(|m| m.len() as usize).unwrap_or(0))
        .sum();

    // Anchor: parsing alone.
    let t0 = Instant::now();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        std::hint::black_box(staticfx::syntax::parse(&text, None));
    }
    let parse_secs = t0.elapsed().as_secs_f64();

    let (mut classes, mut complete, mut panics, mut slowest) =
        (0usize, 0usize, 0usize, (0.0f64, PathBuf::new()));
    // Shared like `staticfx check` shares it: every model file imports the same package modules.
    let cache = staticfx::semantic::project::ParseCache::default();
    let t1 = Instant::now();
    for f in &files {
        let start = Instant::now();
        let path = f.clone();
        let root = root.clone();
        let cache = cache.clone();
        let r = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || {
                std::panic::catch_unwind(AssertUnwindSafe(|| {
                    let project = Project::new(root).with_parse_cache(cache);
                    analyze_in_project(project, &path, &GraphOptions::default()).map(|a| {
                        let n = a.graphs.len();
                        let ok = a.graphs.iter().filter(|g| g.error.is_none()).count();
                        (n, ok)
                    })
                }))
            })
            .unwrap()
            .join();
        match r {
            Ok(Ok(Ok((n, ok)))) => {
                classes += n;
                complete += ok;
            }
            Ok(Ok(Err(e))) => eprintln!("{}: {e}", f.display()),
            _ => {
                panics += 1;
                eprintln!("PANIC: {}", f.display());
            }
        }
        let secs = start.elapsed().as_secs_f64();
        if secs > slowest.0 {
            slowest = (secs, f.clone());
        }
    }
    let full_secs = t1.elapsed().as_secs_f64();
    println!("files: {}  ({:.1} MB)", files.len(), bytes as f64 / 1e6);
    println!(
        "anchor  tree-sitter parse only: {:.2} s  ({:.0} files/s)",
        parse_secs,
        files.len() as f64 / parse_secs
    );
    println!(
        "staticfx per-class graphs:      {:.2} s  ({:.1} files/s)  = {:.1}x the parse-only anchor",
        full_secs,
        files.len() as f64 / full_secs,
        full_secs / parse_secs
    );
    println!(
        "classes traced: {classes}, complete graphs: {complete} ({:.1}%)",
        100.0 * complete as f64 / classes.max(1) as f64
    );
    println!("slowest file: {:.2} s {}", slowest.0, slowest.1.display());
    println!("panics: {panics}");
    assert_eq!(panics, 0, "no file may panic");
}
