//! The diffusers corpus: its unzipped wheel and the user venv its imports resolve through.

// Each test binary that includes `corpus_support` compiles this module; only the diffusers
// suites, open_clip_models (for `user_venv`) and `replay` (for `user_environment`) call it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use staticfx::semantic::environment::{DiscoveryRequest, EnvironmentHandle};

/// The directory holding `diffusers/`, from `STATICFX_DIFFUSERS_ROOT`; None (after a skip
/// note) when unset or not a diffusers wheel.
pub fn diffusers_root() -> Option<PathBuf> {
    let root = super::corpus_root("STATICFX_DIFFUSERS_ROOT", "diffusers")?;
    root.join("diffusers/models/modeling_utils.py")
        .is_file()
        .then_some(root)
}

/// The user venv diffusers' imports of transformers and huggingface_hub resolve through, from
/// `STATICFX_USER_VENV`; None (after a skip note) when absent.
pub fn user_venv() -> Option<PathBuf> {
    let dir = std::env::var_os("STATICFX_USER_VENV").map(PathBuf::from);
    let ok = dir.as_ref().is_some_and(|d| d.join("pyvenv.cfg").is_file());
    if !ok {
        eprintln!(
            "skipped: set STATICFX_USER_VENV to a venv with huggingface_hub and transformers \
             (scripts/test-all.sh builds it)"
        );
    }
    ok.then(|| dir.unwrap())
}

/// The environment an analysis rooted at `root` resolves imports outside it through: the user
/// venv `venv` (see [`user_venv`]), discovered the first time an import needs it.
pub fn user_environment(root: &Path, venv: &Path) -> Arc<EnvironmentHandle> {
    EnvironmentHandle::lazy(DiscoveryRequest {
        python: Some(venv.to_path_buf()),
        root: root.to_path_buf(),
        virtual_env: None,
        path_var: None,
    })
}
