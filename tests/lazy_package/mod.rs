//! A package on transformers' lazy pattern: its `__init__` star-imports its submodules under
//! `TYPE_CHECKING`, so a name looked up on it is searched for in each, in order.

use std::path::{Path, PathBuf};

/// Writes `root/pkg/` with an `__init__` starring `submodules` (name, text) in the order given.
pub fn write(root: &Path, submodules: &[(&str, &str)]) -> PathBuf {
    let pkg = root.join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    let mut init = String::from("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n");
    for (name, text) in submodules {
        init.push_str(&format!("    from .{name} import *\n"));
        std::fs::write(pkg.join(format!("{name}.py")), text).unwrap();
    }
    std::fs::write(pkg.join("__init__.py"), init).unwrap();
    pkg
}
