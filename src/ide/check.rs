//! Checking one file from disk, as `staticfx check` does: the file is evaluated when it can
//! define a module, else only parsed, and reported through the one diagnostics policy;
//! optionally through the result cache (`check_cache`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::check_cache::CheckCache;
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
    let (text, found, _) = analyse(path, settings, cache)?;
    Ok((text, found))
}

/// `check_file` through the result cache: `report` turns the text and findings into the
/// value that is cached, and a hit returns that value without analysing. Without a cache
/// this is `report(check_file(..))`.
pub fn check_file_cached<T: Serialize + DeserializeOwned>(
    path: &Path,
    settings: &Settings,
    cache: Option<ParseCache>,
    results: Option<&CheckCache>,
    report: impl FnOnce(&str, Vec<Diagnostic>) -> T,
) -> Result<T, String> {
    let Some(results) = results else {
        let (text, found) = check_file(path, settings, cache)?;
        return Ok(report(&text, found));
    };
    let text = read_lossy(path).map_err(|e| format!("cannot read: {e}"))?;
    let key = results.key(path, &text, settings);
    if let Some(hit) = results.get(&key) {
        return Ok(hit);
    }
    let (analysed, found, read) = analyse(path, settings, cache)?;
    let value = report(&analysed, found);
    // Edited between the two reads: the entry would not describe its key's text.
    if analysed == text {
        let read: Vec<(PathBuf, &str)> = read.iter().map(|(p, t)| (p.clone(), &**t)).collect();
        if let Err(e) = results.put(&key, path, &read, &value) {
            eprintln!(
                "staticfx: cannot write the cache in {}: {e}",
                results.dir().display()
            );
        }
    }
    Ok(value)
}

/// The text, the diagnostics, and the path and text of every file the analysis read.
type Analysed = (String, Vec<Diagnostic>, Vec<(PathBuf, Arc<str>)>);

fn analyse(
    path: &Path,
    settings: &Settings,
    cache: Option<ParseCache>,
) -> Result<Analysed, String> {
    let text = read_lossy(path).map_err(|e| format!("cannot read: {e}"))?;
    let root = settings
        .root
        .clone()
        .unwrap_or_else(|| Project::default_root(path));
    let opts = GraphOptions {
        root: settings.root.clone(),
        parse_cache: cache,
        class_inputs: settings.example_inputs.clone(),
        environment: Some(settings.environment(&root)),
        torch_target: settings.torch_target_for(&root),
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
    let read = a
        .project
        .files()
        .iter()
        .map(|f| (f.path.clone(), f.text.clone()))
        .collect();
    Ok((text, found, read))
}
