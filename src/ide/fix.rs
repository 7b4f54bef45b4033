//! Fix-all: applies the fixes of every reported finding of a file and analyses it again,
//! until nothing changes (at most `MAX_PASSES` times), the way `ruff check --fix` does. Safe
//! fixes only unless unsafe ones are asked for; a pass whose result would not parse is an
//! error, never a result.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::diagnostics::diagnostics;
use super::files::may_define_module;
use super::settings::{Filter, Settings};
use crate::analysis::{self, GraphOptions};
use crate::fixes;
use crate::semantic::Project;

/// ruff's cap on fix passes per file.
pub const MAX_PASSES: usize = 100;

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

/// Fixes `text` (the content of `path`) to a fixed point. Runs the analysis, so call it on a
/// thread with a large stack.
pub fn fix_text(
    path: &Path,
    text: &str,
    root: Option<PathBuf>,
    filter: &Filter,
    unsafe_fixes: bool,
) -> Result<Outcome, String> {
    let settings = Settings {
        root,
        select: Some(filter.select.clone()),
        ignore: filter.ignore.clone(),
        ..Settings::default()
    };
    fix_with_settings(path, text, &settings, unsafe_fixes)
}

/// [`fix_text`] under the settings `check` reads (root, select/ignore, example inputs).
pub fn fix_with_settings(
    path: &Path,
    text: &str,
    settings: &Settings,
    unsafe_fixes: bool,
) -> Result<Outcome, String> {
    let filter = &settings.filter();
    let root = settings
        .root
        .clone()
        .unwrap_or_else(|| Project::default_root(path));
    let mut current = text.to_string();
    let mut out = Outcome {
        text: String::new(),
        fixed: 0,
        remaining: 0,
        hidden_unsafe: 0,
        passes: 0,
    };
    if !may_define_module(text) {
        // Nothing to trace, so nothing to fix.
        out.text = current;
        return Ok(out);
    }
    loop {
        let mut project = Project::new(&root).with_environment(settings.environment(&root));
        project.add_overlay(path, Arc::from(current.as_str()), None);
        let opts = GraphOptions {
            root: Some(root.clone()),
            class_inputs: settings.example_inputs.clone(),
            torch_target: settings.torch_target_for(&root),
            ..Default::default()
        };
        let a = analysis::analyze_in_project(project, path, &opts).map_err(|e| e.to_string())?;
        // The findings the user would see (selected, not suppressed), as `check` reports them.
        let sites: Vec<fixes::SiteFixes> = diagnostics(&a, &current, filter)
            .into_iter()
            .filter(|d| d.rule.is_some() && !crate::diagnostics::codes::is_limit(d.code))
            .map(|d| d.fixes)
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
