//! Which files are analysed, decided once for `check`, `fix` and the editor's workspace check.

use std::path::PathBuf;
use std::sync::Arc;

use super::exclude::Exclusion;
use super::Settings;

/// The Python files under `paths`; an explicitly named file is always included. Directories
/// are walked honouring .gitignore.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    collect_files_excluding(paths, None, false)
}

/// The files `check`, `fix` and the editor's workspace check analyse under `paths`: walked
/// directories leave out what the settings' `exclude` / `extend-exclude` match, and with
/// `force_exclude` so do the named paths.
pub fn collect_for(
    settings: &Settings,
    paths: &[PathBuf],
    force_exclude: bool,
) -> Result<Vec<PathBuf>, String> {
    let exclusion = Arc::new(settings.exclusion()?);
    collect_files_excluding(paths, Some(exclusion), force_exclude)
}

/// Like `collect_files`, leaving out what `exclusion` matches below each directory, and with
/// `force` the named paths that match too (pre-commit names every staged file).
pub fn collect_files_excluding(
    paths: &[PathBuf],
    exclusion: Option<Arc<Exclusion>>,
    force: bool,
) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if force
            && exclusion
                .as_ref()
                .is_some_and(|e| e.matches_with_parents(p))
        {
            continue;
        }
        if p.is_file() {
            out.push(p.clone());
            continue;
        }
        if !p.exists() {
            return Err(format!("{}: no such file or directory", p.display()));
        }
        let mut walk = ignore::WalkBuilder::new(p);
        if let Some(ex) = exclusion.clone() {
            walk.filter_entry(move |e| {
                e.depth() == 0 || !ex.matches(e.path(), e.file_type().is_some_and(|t| t.is_dir()))
            });
        }
        for entry in walk.build() {
            let entry = entry.map_err(|e| e.to_string())?;
            if entry.file_type().is_some_and(|t| t.is_file())
                && entry
                    .path()
                    .extension()
                    .is_some_and(|e| e == "py" || e == "pyi")
            {
                out.push(entry.into_path());
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Whether a file can define something to trace. Only module classes with a `forward` (or
/// Sequential subclasses) are traced, and a break is reported in the file that contains it;
/// evaluating a tokenizer's or config's imports just to find no class would cost as much as
/// a model file. A file that fails this test is only parsed (`analysis::parse_only`): it
/// gets its syntax errors and nothing else, on every surface.
pub fn may_define_module(text: &str) -> bool {
    text.contains("def forward") || text.contains("Sequential")
}
