//! `staticfx fix PATH... [--diff] [--unsafe-fixes]`: applies fixes the way `ruff check --fix`
//! does. Safe fixes by default (side-effect guards, dropping `.item()`), the torch.where
//! rewrite only with `--unsafe-fixes` (it evaluates both branches). Each file is analysed,
//! fixed and analysed again until nothing changes (at most `MAX_PASSES` times); a pass whose
//! result would not parse is never written. `--diff` prints a unified diff and writes nothing.

use std::path::PathBuf;
use std::process::ExitCode;

use rayon::prelude::*;

pub use crate::ide::fix::{fix_text, fix_with_settings, Outcome, MAX_PASSES};
pub use crate::ide::settings::Filter;
use crate::ide::{collect_files, on_large_stack};

#[derive(clap::Args, Debug, Clone)]
pub struct FixArgs {
    /// Files or directories (directories are walked, honouring .gitignore).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Print a unified diff of the fixes instead of writing them.
    #[arg(long)]
    pub diff: bool,
    /// Also apply unsafe fixes (the torch.where rewrite evaluates both branches).
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Codes or code prefixes to fix (default: all). Comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub select: Vec<String>,
    /// Codes or code prefixes to leave alone. Comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// Project root for imports.
    #[arg(long)]
    pub root: Option<PathBuf>,
}

/// A unified diff of `before` → `after` for `path`, as `ruff --diff` prints it.
pub fn unified_diff(path: &str, before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(path, path)
        .to_string()
}

pub fn run(args: FixArgs) -> ExitCode {
    let Some(settings) = super::settings_for(
        &args.paths,
        &args.select,
        &args.ignore,
        args.root.as_deref(),
    ) else {
        return ExitCode::from(2);
    };
    let files = match collect_files(&args.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("staticfx: {e}");
            return ExitCode::from(2);
        }
    };
    type FileResult = (PathBuf, Result<(String, Outcome), String>);
    let results: Vec<FileResult> = files
        .par_iter()
        .map(|p| {
            let r = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read: {e}"))
                .and_then(|text| {
                    on_large_stack("staticfx-fix", || {
                        fix_with_settings(p, &text, &settings, args.unsafe_fixes)
                    })
                    .unwrap_or_else(|_| {
                        Err("internal error while fixing this file (a bug in staticfx)".into())
                    })
                    .map(|o| (text, o))
                });
            (p.clone(), r)
        })
        .collect();
    let (mut fixed, mut remaining, mut hidden, mut errors, mut changed) = (0, 0, 0, 0, 0);
    for (path, r) in results {
        match r {
            Ok((before, o)) => {
                fixed += o.fixed;
                remaining += o.remaining;
                hidden += o.hidden_unsafe;
                if o.text != before {
                    changed += 1;
                    if args.diff {
                        print!(
                            "{}",
                            unified_diff(&path.display().to_string(), &before, &o.text)
                        );
                    } else if let Err(e) = std::fs::write(&path, &o.text) {
                        errors += 1;
                        eprintln!("staticfx: {}: cannot write: {e}", path.display());
                    }
                }
            }
            Err(e) => {
                errors += 1;
                eprintln!("staticfx: {}: {e}", path.display());
            }
        }
    }
    let verb = if args.diff { "would fix" } else { "fixed" };
    eprintln!(
        "{} file(s): {fixed} finding(s) {verb}, {remaining} remaining{}.",
        files.len(),
        if hidden > 0 {
            format!(" ({hidden} more fixable with `--unsafe-fixes`)")
        } else {
            String::new()
        }
    );
    if errors > 0 {
        ExitCode::from(2)
    } else if args.diff {
        if changed > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    } else if remaining > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
