//! Many files analysed in one interpreter, as `staticfx check` does on each of its threads.
//!
//! Every model file of a package imports the same modules (transformers' `modeling_utils`,
//! `modeling_layers`, its `utils` and `integrations`), and evaluating them again for each file
//! was most of a `check`. A [`Warm`] keeps one project and one interpreter for a root and
//! analyses file after file in them: a module an earlier analysis evaluated is handed out as
//! it is, and its evaluation's steps are charged to the budget the first time the analysis
//! reaches it (`Interp::enable_module_reuse`), so a file runs out of budget where a fresh
//! analysis would.
//!
//! What a fresh analysis would not see: what an earlier analysis changed in a shared module
//! (a registry a constructor appended to), and names bound in a module by an earlier
//! analysis's deferred import. `tests/module_reuse.rs` checks that findings are the same with
//! and without reuse. A file already evaluated as someone's import starts a new `Warm`, so
//! its own top level is evaluated in its own analysis; so does every [`RESTART_AFTER`]th
//! file, which bounds what the interpreter holds.
//!
//! Files are read once: a file that changes on disk while a `Warm` lives is not seen. It is
//! made for one batch run over files that do not change.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{run, AnalysisError, FileAnalysis, GraphOptions};
use crate::eval::Interp;
use crate::semantic::project::ParseCache;
use crate::semantic::{EnvironmentHandle, FileId, Project};

/// Files one `Warm` analyses before it is replaced: every analysed file's own values stay
/// in the interpreter until then.
pub const RESTART_AFTER: usize = 48;

pub struct Warm {
    root: PathBuf,
    environment: Option<Arc<EnvironmentHandle>>,
    parse_cache: Option<ParseCache>,
    project: Arc<Project>,
    interp: Interp,
    /// The files analysed here so far.
    entries: HashSet<FileId>,
}

impl Warm {
    fn new(root: PathBuf, opts: &GraphOptions) -> Warm {
        let project = Arc::new(super::project_at(
            root.clone(),
            opts.parse_cache.as_ref(),
            opts.environment.as_ref(),
        ));
        let mut interp = Interp::new(project.clone());
        interp.enable_module_reuse();
        Warm {
            root,
            environment: opts.environment.clone(),
            parse_cache: opts.parse_cache.clone(),
            project,
            interp,
            entries: HashSet::new(),
        }
    }

    /// How many files this `Warm` has analysed.
    pub fn analysed(&self) -> usize {
        self.entries.len()
    }

    /// Whether this `Warm` may analyse `path` (canonical) under `opts` with `root`.
    fn serves(&self, root: &Path, path: &Path, opts: &GraphOptions) -> bool {
        let same_environment = match (&self.environment, &opts.environment) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        let same_parse_cache = match (&self.parse_cache, &opts.parse_cache) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        self.root == root
            && same_environment
            && same_parse_cache
            && self.entries.len() < RESTART_AFTER
            && !self.project.loaded_paths().iter().any(|p| p == path)
    }
}

/// An analysis of `path` and the files it depends on, as `analyze_file` would give it, in
/// the `Warm` of `slot` (replaced by a new one when it cannot serve the file).
pub fn analyze_file(
    slot: &mut Option<Warm>,
    path: &Path,
    opts: &GraphOptions,
) -> Result<(FileAnalysis, Vec<FileId>), AnalysisError> {
    let root = opts
        .root
        .clone()
        .unwrap_or_else(|| Project::default_root(path));
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    // Taken out while it runs: an analysis that panics leaves no half-updated `Warm` behind.
    let mut warm = match slot.take() {
        Some(w) if w.serves(&root, &canonical, opts) => w,
        _ => Warm::new(root, opts),
    };
    let file = warm
        .project
        .load_entry(path)
        .map_err(|source| AnalysisError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    warm.entries.insert(file);
    let interp = &mut warm.interp;
    interp.start_next_analysis(opts.time_limit.map(|d| std::time::Instant::now() + d));
    let result = run(interp, file, opts);
    let diagnostics = std::mem::take(&mut interp.diagnostics);
    let read = files_read(&warm, file);
    let mut graphs = match result {
        Ok(graphs) => graphs,
        Err(e) => {
            *slot = Some(warm);
            return Err(e);
        }
    };
    for g in graphs.iter_mut() {
        g.breaks = crate::breaks::annotate(&warm.project, g, &opts.torch_target);
    }
    let analysis = FileAnalysis {
        project: warm.project.clone(),
        file,
        graphs: graphs.into_iter().map(Arc::new).collect(),
        diagnostics,
    };
    *slot = Some(warm);
    Ok((analysis, read))
}

/// What the analysis of `entry` may have read: every file of the project but the other
/// analysed files it did not reach (a superset: a file an earlier analysis read is counted
/// even when this one did not need it).
fn files_read(warm: &Warm, entry: FileId) -> Vec<FileId> {
    let reached: HashSet<FileId> = warm.interp.modules_reached().into_iter().collect();
    (0..warm.project.files().len())
        .filter(|id| *id == entry || !warm.entries.contains(id) || reached.contains(id))
        .collect()
}
