//! Which files are analysed, decided once for `check`, `fix` and the editor's workspace check.

use std::path::PathBuf;

/// The Python files under `paths`; an explicitly named file is always included. Directories
/// are walked honouring .gitignore.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() {
            out.push(p.clone());
            continue;
        }
        if !p.exists() {
            return Err(format!("{}: no such file or directory", p.display()));
        }
        for entry in ignore::WalkBuilder::new(p).build() {
            let entry = entry.map_err(|e| e.to_string())?;
            if entry.file_type().is_some_and(|t| t.is_file())
                && entry.path().extension().is_some_and(|e| e == "py")
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
