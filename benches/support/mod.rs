//! Shared by the benchmarks that read real packages.

use std::path::{Path, PathBuf};

/// Every file under `root` whose name satisfies `keep`, sorted.
#[allow(dead_code)] // not every bench reads a package
pub fn files_under(root: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().and_then(|n| n.to_str()).is_some_and(&keep) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[allow(dead_code)] // not every bench reads transformers
pub fn is_modeling_file(name: &str) -> bool {
    name.starts_with("modeling_") && name.ends_with(".py")
}

pub mod lsp;
