//! Checking one file from disk, as `staticfx check` does: the file is evaluated when it can
//! define a module, else only parsed, and reported through the one diagnostics policy;
//! optionally through the result cache (`check_cache`). In a batch run each thread keeps
//! the modules it evaluated for the next files (`analysis::warm`).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::check_cache::CheckCache;
use super::shown::ShownDiagnostic;
use super::{diagnostics, may_define_module, Diagnostic, Settings};
use crate::analysis::warm::Warm;
use crate::analysis::{self, GraphOptions};
use crate::semantic::project::{read_lossy, ParseCache};
use crate::semantic::Project;

/// What the files of one run share.
#[derive(Clone, Debug, Default)]
pub struct Shared {
    pub parse_cache: ParseCache,
    /// Whether each thread keeps the modules it evaluated for its next files; without, every
    /// file is analysed in a fresh interpreter.
    pub reuse_modules: bool,
}

impl Shared {
    /// Parsed files and evaluated modules shared, as `staticfx check` runs.
    pub fn batch() -> Shared {
        Shared {
            parse_cache: ParseCache::default(),
            reuse_modules: true,
        }
    }
}

thread_local! {
    /// The modules this thread evaluated for earlier files of the run.
    static WARM: RefCell<Option<Warm>> = const { RefCell::new(None) };
}

/// Drops the modules this thread kept for later files (an analysis that panicked may have
/// left its own half-evaluated ones).
pub fn forget_kept_modules() {
    WARM.with(|w| w.borrow_mut().take());
}

/// The file's text (as read, invalid UTF-8 replaced) and its diagnostics.
pub fn check_file(
    path: &Path,
    settings: &Settings,
    cache: Option<ParseCache>,
) -> Result<(String, Vec<Diagnostic>), String> {
    let shared = Shared {
        parse_cache: cache.unwrap_or_default(),
        reuse_modules: false,
    };
    let (text, found, _) = analyse(path, settings, &shared, false)?;
    Ok((text, found))
}

/// `check_file` through the result cache: `report` turns the text and findings into the
/// value that is cached, and a hit returns that value without analysing. Without a cache
/// this is `report(check_file(..))`.
pub fn check_file_cached<T: Serialize + DeserializeOwned>(
    path: &Path,
    settings: &Settings,
    shared: &Shared,
    results: Option<&CheckCache>,
    report: impl FnOnce(&str, Vec<Diagnostic>) -> T,
) -> Result<T, String> {
    let Some(results) = results else {
        let (text, found, _) = analyse(path, settings, shared, false)?;
        return Ok(report(&text, found));
    };
    let text = read_lossy(path).map_err(|e| format!("cannot read: {e}"))?;
    let key = results.key(path, &text, settings);
    if let Some(hit) = results.get::<Stored<T>>(&key) {
        return Ok(hit.report);
    }
    let started = std::time::Instant::now();
    let (analysed, found, (read, shown)) = analyse(path, settings, shared, true)?;
    let analysis_ms = started.elapsed().as_millis() as u64;
    let value = report(&analysed, found);
    // Edited between the two reads: the entry would not describe its key's text.
    if analysed == text {
        let (read, scanned) = read;
        let read: Vec<(PathBuf, &str)> = read.iter().map(|(p, t)| (p.clone(), &**t)).collect();
        let stored = Stored {
            report: &value,
            shown,
            analysis_ms,
        };
        if let Err(e) = results.put(&key, path, &read, &scanned, &stored) {
            eprintln!(
                "staticfx: cannot write the cache in {}: {e}",
                results.dir().display()
            );
        }
    }
    Ok(value)
}

/// The text, the diagnostics, the path and text of every file the analysis read and the
/// files whose text it only searched (`Project::scanned_files`), and the diagnostics as an
/// editor shows them (when asked for).
type Analysed = (
    String,
    Vec<Diagnostic>,
    (
        (Vec<(PathBuf, Arc<str>)>, Vec<PathBuf>),
        Vec<ShownDiagnostic>,
    ),
);

fn analyse(
    path: &Path,
    settings: &Settings,
    shared: &Shared,
    with_shown: bool,
) -> Result<Analysed, String> {
    let text = read_lossy(path).map_err(|e| format!("cannot read: {e}"))?;
    let root = settings
        .root
        .clone()
        .unwrap_or_else(|| Project::default_root(path));
    let opts = GraphOptions {
        root: settings.root.clone(),
        parse_cache: Some(shared.parse_cache.clone()),
        class_inputs: settings.example_inputs.clone(),
        environment: Some(settings.environment(&root)),
        torch_target: settings.torch_target_for(&root),
        ..Default::default()
    };
    let (a, read) = if !may_define_module(&text) {
        let project = Project::new(root).with_parse_cache(shared.parse_cache.clone());
        let a = analysis::parse_only(project, path).map_err(|e| e.to_string())?;
        (a, None)
    } else if shared.reuse_modules {
        let (a, read) = WARM
            .with(|slot| analysis::warm::analyze_file(&mut slot.borrow_mut(), path, &opts))
            .map_err(|e| e.to_string())?;
        (a, Some(read))
    } else {
        (
            analysis::analyze_file(path, &opts).map_err(|e| e.to_string())?,
            None,
        )
    };
    let found = diagnostics(&a, &text, &settings.filter());
    let shown = if with_shown {
        super::shown::shown(&found, |id| {
            let f = a.project.file(id);
            Some((f.path.clone(), f.text.clone()))
        })
    } else {
        vec![]
    };
    let read = match read {
        // Bundled sources are part of the binary, which every cache key names; they have no
        // file on disk to hash again, so an entry depending on one would never be hit.
        Some(ids) => ids
            .into_iter()
            .map(|id| a.project.file(id))
            .filter(|f| !f.bundled)
            .collect(),
        None => a.project.files(),
    };
    let read = read
        .iter()
        .map(|f| (f.path.clone(), f.text.clone()))
        .collect();
    let scanned = a.project.scanned_files().into_iter().map(|(p, _)| p);
    Ok((text, found, ((read, scanned.collect()), shown)))
}

/// What `check` caches for a file: the front end's report, what an editor is shown of the
/// same diagnostics, and how long the analysis took.
#[derive(Serialize, Deserialize)]
struct Stored<T> {
    report: T,
    shown: Vec<ShownDiagnostic>,
    analysis_ms: u64,
}

/// The diagnostics `check` cached for the file `path` with the text `text`, as an editor
/// shows them, for the editor's first publication before its own analysis (which replaces
/// them) finishes. Only when they are what that analysis will find: `text` is the file on
/// disk; `root`, the root the editor analyses in, is the one `check` takes; every file the
/// cached analysis read still has its text, in `overlays` (the editor's other open buffers)
/// where one is open, else on disk; no open buffer is a file `check` could not have read; and
/// the analysis took well under the editor's time limit (`host::TIME_LIMIT`). `settings` are
/// the editor's: the cache is looked up where `check` looks with them, under their key.
pub fn cached_shown(
    path: &Path,
    text: &str,
    settings: &Settings,
    root: &Path,
    overlays: &[(PathBuf, Arc<str>)],
) -> Option<Vec<ShownDiagnostic>> {
    let check_root = settings
        .root
        .clone()
        .unwrap_or_else(|| Project::default_root(path));
    if check_root != root || overlays.iter().any(|(p, _)| !p.is_file()) {
        return None;
    }
    if *read_lossy(path).ok()? != *text {
        return None;
    }
    let cache = CheckCache::new(super::check_cache::default_dir(settings));
    let key = cache.key(path, text, settings);
    let stored: Stored<serde::de::IgnoredAny> = cache.get_over(&key, overlays)?;
    let limit = super::host::TIME_LIMIT.as_millis() as u64;
    (stored.analysis_ms < limit / 2).then_some(stored.shown)
}
