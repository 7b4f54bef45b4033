//! Where a cold `staticfx check` spends its time, phase by phase, beside the anchors' time on
//! the same files in the same run.
//!
//! ```sh
//! STATICFX_CORPUS=DIR STATICFX_RUFF=ruff [STATICFX_TY=ty] [VIRTUAL_ENV=venv] \
//!     cargo bench --bench check_phases [-- FILE_OR_DIR ...]
//! ```
//!
//! Without arguments the files are every `modeling_*.py` under `$STATICFX_CORPUS/transformers`
//! (an unzipped transformers wheel, as the other benches take it). The release binary runs
//! `check --no-cache` as a user runs it, default settings, the environment in `VIRTUAL_ENV`,
//! with `STATICFX_PHASE_CLOCK` set so that it prints its thread-seconds per phase
//! (`staticfx::phase_clock`). The anchors check the same files without a cache: `ruff check
//! --no-cache --select E,F` and, when `STATICFX_TY` names it, `ty check`. Wall time and peak
//! memory come from each child's resource usage. Skips with a note when the corpus is absent.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use staticfx::phase_clock::{Phase, PhaseTimes};

mod support;

struct Run {
    wall: Duration,
    peak_mb: f64,
    stderr: String,
}

/// Runs `cmd` to the end, with its wall time and its peak resident memory.
fn measure(mut cmd: Command) -> std::io::Result<Run> {
    let start = Instant::now();
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()?;
    let pid = child.id() as libc::pid_t;
    let mut stderr = child.stderr.expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; both pointers are to live locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = start.elapsed();
    if waited != pid {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Run {
        wall,
        peak_mb: usage.ru_maxrss as f64 / 1024.0,
        stderr: reader.join().unwrap_or_default(),
    })
}

fn files_from_args(args: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for a in args {
        let p = PathBuf::from(a);
        if p.is_dir() {
            out.extend(support::files_under(&p, |n| n.ends_with(".py")));
        } else {
            out.push(p);
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let files = if args.is_empty() {
        let Some(corpus) = std::env::var_os("STATICFX_CORPUS").map(PathBuf::from) else {
            eprintln!(
                "check_phases: skipped: set STATICFX_CORPUS to an unzipped transformers wheel \
                 (or name files or directories after `--`)"
            );
            return;
        };
        support::files_under(&corpus.join("transformers"), support::is_modeling_file)
    } else {
        files_from_args(&args)
    };
    if files.is_empty() {
        eprintln!("check_phases: skipped: no files to check");
        return;
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_staticfx"));
    println!("load: {}", load_average());
    println!(
        "{} files, VIRTUAL_ENV={}",
        files.len(),
        std::env::var("VIRTUAL_ENV").unwrap_or_else(|_| "(none)".into())
    );

    let mut ours = Command::new(bin);
    ours.args([
        "check",
        "--no-cache",
        "--exit-zero",
        "--output-format",
        "json",
    ])
    .args(&files)
    .env("STATICFX_PHASE_CLOCK", "1");
    let ours = match measure(ours) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("check_phases: cannot run {}: {e}", bin.display());
            std::process::exit(1);
        }
    };
    let Some(phases) = PhaseTimes::parse_report(&ours.stderr) else {
        eprintln!(
            "check_phases: staticfx printed no phase times:\n{}",
            ours.stderr
        );
        std::process::exit(1);
    };

    let mut anchors: Vec<(&str, Run)> = Vec::new();
    let ruff = std::env::var("STATICFX_RUFF").unwrap_or_else(|_| "ruff".into());
    let mut cmd = Command::new(&ruff);
    cmd.args([
        "check",
        "--no-cache",
        "--select",
        "E,F",
        "--exit-zero",
        "--output-format",
        "json",
    ])
    .args(&files);
    match measure(cmd) {
        Ok(r) => anchors.push(("ruff check --no-cache", r)),
        Err(e) => println!("anchor ruff ({ruff}) not run: {e}"),
    }
    if let Some(ty) = std::env::var_os("STATICFX_TY") {
        let mut cmd = Command::new(&ty);
        cmd.args(["check", "--exit-zero"]).args(&files);
        match measure(cmd) {
            Ok(r) => anchors.push(("ty check", r)),
            Err(e) => println!("anchor ty not run: {e}"),
        }
    }

    println!();
    println!("| phase | thread-seconds | share |");
    println!("|---|---:|---:|");
    let total = phases.total().as_secs_f64();
    for p in Phase::ALL {
        let s = phases.get(p).as_secs_f64();
        println!(
            "| {} | {s:.2} | {:.1}% |",
            p.name(),
            100.0 * s / total.max(1e-9)
        );
    }
    println!("| all phases | {total:.2} | |");
    println!();
    println!("| tool | wall | peak memory | staticfx / tool |");
    println!("|---|---:|---:|---:|");
    println!(
        "| staticfx check --no-cache | {:.2} s | {:.0} MB | |",
        ours.wall.as_secs_f64(),
        ours.peak_mb
    );
    for (name, r) in &anchors {
        println!(
            "| {name} | {:.2} s | {:.0} MB | {:.1}x |",
            r.wall.as_secs_f64(),
            r.peak_mb,
            ours.wall.as_secs_f64() / r.wall.as_secs_f64().max(1e-9)
        );
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
