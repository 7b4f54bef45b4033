//! The label files of the generated corpora: one `labels-torch<major>.<minor>.json` per torch
//! version a labeller ran under (`scripts/*/label_*.py`).

use std::path::{Path, PathBuf};

/// The label files under `dir` (relative to the crate), oldest torch first.
pub fn label_files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let version = |p: &Path| -> Vec<u32> {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        name.trim_start_matches("labels-torch")
            .split('.')
            .map(|n| n.parse().unwrap_or(0))
            .collect()
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("labels-torch")
        })
        .collect();
    files.sort_by_key(|p| version(p));
    files
}
