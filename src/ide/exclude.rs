//! `exclude` / `extend-exclude` in `[tool.staticfx]`: gitignore-style globs, relative to the
//! directory of the pyproject.toml that sets them, as ruff reads its own. Directories met while
//! walking are pruned when they match; a file named on the command line is checked anyway
//! unless `--force-exclude` is given, which is what lets pre-commit (which names every staged
//! file) honour the project's excludes.

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// What ruff leaves out by default: tool caches, virtual environments, build output. Set
/// `exclude` to replace this list, `extend-exclude` to add to it.
pub const DEFAULT_EXCLUDE: &[&str] = &[
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".staticfx-cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
];

pub struct Exclusion {
    root: PathBuf,
    matcher: Gitignore,
    /// The patterns without a `/` inside (`venv`, `*.pyi`, `build/`): the ones that can apply to
    /// a path outside `root`.
    names: Gitignore,
}

impl Exclusion {
    /// `exclude` replaces the defaults when given; `extend_exclude` adds to them.
    pub fn new(
        root: &Path,
        exclude: Option<&[String]>,
        extend_exclude: &[String],
    ) -> Result<Self, String> {
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        let mut all = GitignoreBuilder::new(&root);
        let mut names = GitignoreBuilder::new(&root);
        let defaults: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| s.to_string()).collect();
        for pattern in exclude.unwrap_or(&defaults).iter().chain(extend_exclude) {
            let bad =
                |e: ignore::Error| format!("[tool.staticfx] exclude: bad pattern `{pattern}`: {e}");
            all.add_line(None, pattern).map_err(bad)?;
            if !pattern.trim_end_matches('/').contains('/') {
                names.add_line(None, pattern).map_err(bad)?;
            }
        }
        let build = |b: GitignoreBuilder| {
            b.build()
                .map_err(|e| format!("[tool.staticfx] exclude: {e}"))
        };
        Ok(Exclusion {
            root,
            matcher: build(all)?,
            names: build(names)?,
        })
    }

    /// The defaults, relative to the current directory (no pyproject.toml sets any).
    pub fn defaults() -> Self {
        Self::new(Path::new("."), None, &[]).expect("the default patterns are valid")
    }

    /// Whether `path` itself matches (a directory met while walking, a walked file).
    pub fn matches(&self, path: &Path, is_dir: bool) -> bool {
        match self.relative(path) {
            Some(rel) => self.matcher.matched(&rel, is_dir).is_ignore(),
            // Outside the configuring project only name patterns (`venv`, `*.pyi`) can apply.
            None => path
                .file_name()
                .is_some_and(|n| self.names.matched(Path::new(n), is_dir).is_ignore()),
        }
    }

    /// `--force-exclude` for a path named on the command line: it or a directory above it (up
    /// to the configuring project's root) matches.
    pub fn matches_with_parents(&self, path: &Path) -> bool {
        if self.matches(path, path.is_dir()) {
            return true;
        }
        let Some(rel) = self.relative(path) else {
            return false;
        };
        rel.ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .any(|a| self.matcher.matched(a, true).is_ignore())
    }

    fn relative(&self, path: &Path) -> Option<PathBuf> {
        let abs = std::path::absolute(path).ok()?;
        abs.strip_prefix(&self.root).ok().map(Path::to_path_buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(exclude: Option<&[&str]>, extend: &[&str]) -> Exclusion {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let exclude = exclude.map(own);
        Exclusion::new(Path::new("/proj"), exclude.as_deref(), &own(extend)).unwrap()
    }

    #[test]
    fn gitignore_globs_relative_to_the_project() {
        let e = ex(Some(&["generated/", "/legacy.py", "**/test_*.py"]), &[]);
        assert!(e.matches(Path::new("/proj/generated"), true));
        assert!(!e.matches(Path::new("/proj/generated"), false));
        assert!(e.matches(Path::new("/proj/legacy.py"), false));
        // Anchored by the leading slash: only at the root.
        assert!(!e.matches(Path::new("/proj/pkg/legacy.py"), false));
        assert!(e.matches(Path::new("/proj/pkg/test_model.py"), false));
        assert!(!e.matches(Path::new("/proj/pkg/model.py"), false));
        assert!(e.matches_with_parents(Path::new("/proj/generated/deep/m.py")));
        assert!(!e.matches_with_parents(Path::new("/proj/pkg/m.py")));
    }

    #[test]
    fn exclude_replaces_the_defaults_extend_adds() {
        let d = ex(None, &["scratch.py"]);
        assert!(d.matches(Path::new("/proj/venv"), true));
        assert!(d.matches(Path::new("/proj/scratch.py"), false));
        let own = ex(Some(&["scratch.py"]), &[]);
        assert!(!own.matches(Path::new("/proj/venv"), true));
        // A name pattern also applies outside the project; a path pattern does not.
        assert!(d.matches(Path::new("/elsewhere/venv"), true));
        assert!(!ex(Some(&["/top.py"]), &[]).matches(Path::new("/elsewhere/top.py"), false));
    }
}
