//! The output formats of `staticfx check` besides text, JSON and SARIF (which live in
//! `check.rs`). Each module is a pure function of the finished messages, in ruff's shape for
//! that format, so CI tools that read ruff's output read ours.

pub mod concise;
pub mod github;
pub mod gitlab;
pub mod json_lines;
pub mod junit;
pub mod statistics;

/// `./a/b.py` → `a/b.py`, and `\` → `/`: the path as CI systems and baselines write it.
pub fn display_path(filename: &str) -> String {
    let p = filename.replace('\\', "/");
    let mut s = p.as_str();
    while let Some(rest) = s.strip_prefix("./") {
        s = rest;
    }
    s.to_string()
}
