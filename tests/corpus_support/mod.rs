//! Where the tests find real libraries' source (unzipped wheels): one environment variable per
//! library. Without it a test skips with a note, except under CI, where `scripts/test-all.sh`
//! sets every one, so a missing root there is a broken setup, not a skip.

use std::path::PathBuf;

/// The directory holding `package/`, from `var`; `None` (after the skip note) when unset.
pub fn corpus_root(var: &str, package: &str) -> Option<PathBuf> {
    let root = std::env::var_os(var).map(PathBuf::from);
    if root.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must set {var} (see scripts/test-all.sh)"
        );
        eprintln!("skipped: set {var} to a directory containing {package}/ to run");
    }
    root
}

pub mod diffusers;
pub mod hf;
pub mod replay;
