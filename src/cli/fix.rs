//! `staticfx fix PATH... [--diff] [--unsafe-fixes]`: applies fixes the way `ruff check --fix`
//! does. Safe fixes by default (side-effect guards, dropping `.item()`), the torch.where
//! rewrite only with `--unsafe-fixes` (it evaluates both branches). Each file is analysed,
//! fixed and analysed again until nothing changes (at most `MAX_PASSES` times); a pass whose
//! result would not parse is never written. `--diff` prints a unified diff and writes nothing.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use rayon::prelude::*;

use super::check::{collect_files, find_config, matches_any, noqa_allows};
use crate::analysis::{self, GraphOptions};
use crate::fixes;
use crate::semantic::Project;

/// ruff's cap on fix passes per file.
pub const MAX_PASSES: usize = 100;

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
    /// The torch whose graph breaks to fix, e.g. `torch==2.8` (default: `target-version` in
    /// [tool.staticfx], else 2.15).
    #[arg(long, value_name = "torch==2.x")]
    pub target_version: Option<crate::breaks::version::TorchVersion>,
}

/// What fixing one file's text came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub text: String,
    /// Findings fixed, over all passes.
    pub fixed: usize,
    /// Graph-break findings left after the last pass (selected, not suppressed).
    pub remaining: usize,
    /// Unsafe fixes not applied because `--unsafe-fixes` was off.
    pub hidden_unsafe: usize,
    pub passes: usize,
}

pub struct Filter {
    pub select: Vec<String>,
    pub ignore: Vec<String>,
}

impl Filter {
    pub fn all() -> Self {
        Filter {
            select: vec!["FX".into()],
            ignore: vec![],
        }
    }
    fn keeps(&self, code: &str) -> bool {
        matches_any(code, &self.select) && !matches_any(code, &self.ignore)
    }
}

/// Fixes `text` (the content of `path`) to a fixed point. Runs the analysis, so call it on a
/// thread with a large stack.
pub fn fix_text(
    path: &Path,
    text: &str,
    root: Option<PathBuf>,
    filter: &Filter,
    unsafe_fixes: bool,
) -> Result<Outcome, String> {
    fix_text_for(
        path,
        text,
        root,
        filter,
        unsafe_fixes,
        &crate::breaks::version::Target::default(),
    )
}

/// [`fix_text`] for the graph breaks of one torch version.
pub fn fix_text_for(
    path: &Path,
    text: &str,
    root: Option<PathBuf>,
    filter: &Filter,
    unsafe_fixes: bool,
    target: &crate::breaks::version::Target,
) -> Result<Outcome, String> {
    let root = root.unwrap_or_else(|| Project::default_root(path));
    let mut current = text.to_string();
    let mut out = Outcome {
        text: String::new(),
        fixed: 0,
        remaining: 0,
        hidden_unsafe: 0,
        passes: 0,
    };
    loop {
        let mut project = Project::new(&root);
        project.add_overlay(path, Arc::from(current.as_str()), None);
        let opts = GraphOptions {
            root: Some(root.clone()),
            torch_target: target.clone(),
            ..Default::default()
        };
        let a = analysis::analyze_in_project(project, path, &opts).map_err(|e| e.to_string())?;
        let lines: Vec<&str> = current.lines().collect();
        let sites: Vec<fixes::SiteFixes> = fixes::for_analysis(&a, &current)
            .into_iter()
            .filter(|(f, _)| filter.keeps(f.code))
            .filter(|(f, _)| {
                !lines
                    .get(f.line.saturating_sub(1))
                    .is_some_and(|l| noqa_allows(l, f.code))
            })
            .map(|(_, fx)| fx)
            .collect();
        out.remaining = sites.len();
        let (edits, n, hidden) = fixes::pick(&sites, unsafe_fixes);
        out.hidden_unsafe = hidden;
        if edits.is_empty() || out.passes >= MAX_PASSES {
            break;
        }
        let next = fixes::apply(&current, &edits)?;
        if crate::syntax::parse(&next, None).root_node().has_error()
            && !crate::syntax::parse(&current, None).root_node().has_error()
        {
            return Err("a fix would have produced invalid syntax; nothing was written (this is a bug in staticfx, please report it with the file)".into());
        }
        if next == current {
            break;
        }
        current = next;
        out.fixed += n;
        out.passes += 1;
    }
    out.text = current;
    Ok(out)
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
    let config = match find_config(
        args.paths
            .first()
            .map(|p| p.as_path())
            .unwrap_or(Path::new(".")),
    ) {
        Ok(c) => c.unwrap_or_default(),
        Err(e) => {
            eprintln!("staticfx: {e}");
            return ExitCode::from(2);
        }
    };
    let filter = Filter {
        select: if !args.select.is_empty() {
            args.select.clone()
        } else {
            config.select.clone().unwrap_or_else(|| vec!["FX".into()])
        },
        ignore: config
            .ignore
            .iter()
            .chain(args.ignore.iter())
            .cloned()
            .collect(),
    };
    let root = args.root.clone().or(config.root.clone());
    let target = match super::torch_target(args.target_version, &config) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("staticfx: {e}");
            return ExitCode::from(2);
        }
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
                    let path = p.clone();
                    let root = root.clone();
                    let filter = Filter {
                        select: filter.select.clone(),
                        ignore: filter.ignore.clone(),
                    };
                    let unsafe_fixes = args.unsafe_fixes;
                    let t = text.clone();
                    let target = target.clone();
                    std::thread::Builder::new()
                        .stack_size(256 << 20)
                        .spawn(move || {
                            fix_text_for(&path, &t, root, &filter, unsafe_fixes, &target)
                        })
                        .map_err(|e| e.to_string())?
                        .join()
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
