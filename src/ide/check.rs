//! Checking one file from disk, as `staticfx check` does: the file is evaluated when it can
//! define a module, else only parsed, and reported through the one diagnostics policy.

use std::path::Path;

use super::{diagnostics, may_define_module, Diagnostic, Settings};
use crate::analysis::{self, GraphOptions};
use crate::semantic::project::{read_lossy, ParseCache};
use crate::semantic::Project;

/// The file's text (as read, invalid UTF-8 replaced) and its diagnostics.
pub fn check_file(
    path: &Path,
    settings: &Settings,
    cache: Option<ParseCache>,
) -> Result<(String, Vec<Diagnostic>), String> {
    let text = read_lossy(path).map_err(|e| format!("cannot read: {e}"))?;
    let opts = GraphOptions {
        root: settings.root.clone(),
        parse_cache: cache,
        class_inputs: settings.example_inputs.clone(),
        ..Default::default()
    };
    let a = if may_define_module(&text) {
        analysis::analyze_file(path, &opts)
    } else {
        let root = opts.root.unwrap_or_else(|| Project::default_root(path));
        let project = Project::new(root).with_parse_cache(opts.parse_cache.unwrap_or_default());
        analysis::parse_only(project, path)
    }
    .map_err(|e| e.to_string())?;
    let found = diagnostics(&a, &text, &settings.filter());
    Ok((text, found))
}
