//! Imports across a project's files: deferred until a name is used, and the `TYPE_CHECKING`
//! lazy-module pattern of transformers-style packages.

use std::path::PathBuf;

use staticfx::analysis::{analyze_file, GraphOptions};

fn project(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/projects")
        .join(rel)
}

#[test]
fn lazy_module_package_serves_type_checking_imports() {
    let root = project("lazy_pkg");
    let opts = GraphOptions {
        root: Some(root.clone()),
        ..Default::default()
    };
    let a = analyze_file(&root.join("model.py"), &opts).expect("analysis runs");
    let net = a
        .graphs
        .iter()
        .find(|g| g.class == "Net")
        .expect("Net traced");
    assert!(net.error.is_none(), "{:?}", net.error);
    let rendered = staticfx::render::text::render(net);
    // GatedBlock (imported inside try/else under TYPE_CHECKING) and Head (through a star
    // import under TYPE_CHECKING) are user modules, so both are inlined.
    for node in ["block_proj", "relu", "mul", "head_out"] {
        assert!(
            rendered.contains(&format!("{node}: ")),
            "missing {node} in\n{rendered}"
        );
    }
    let diags: Vec<String> = a.diagnostics.iter().map(|d| d.message.clone()).collect();
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn imports_read_only_the_files_a_model_uses() {
    let root = project("lazy_pkg");
    let opts = GraphOptions {
        root: Some(root.clone()),
        ..Default::default()
    };
    let a = analyze_file(&root.join("model.py"), &opts).expect("analysis runs");
    let loaded: Vec<String> = a
        .project
        .loaded_paths()
        .iter()
        .map(|p| {
            p.strip_prefix(&root)
                .unwrap_or(p)
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    // `pkg/broken.py` is star-imported by the package and imported by `pkg/blocks.py`, but no
    // name of it is ever used: its syntax may be read (to see it does not define `Head`) but it
    // is never evaluated, so its syntax error is not reported.
    assert!(
        !a.diagnostics
            .iter()
            .any(|d| a.project.file(d.file).path.ends_with("broken.py")),
        "{:?}",
        a.diagnostics
    );
    for needed in [
        "model.py",
        "pkg/__init__.py",
        "pkg/blocks.py",
        "pkg/everything.py",
    ] {
        assert!(
            loaded.iter().any(|p| p == needed),
            "{needed} not in {loaded:?}"
        );
    }
}

#[test]
fn parse_cache_follows_the_file_on_disk() {
    use staticfx::semantic::project::ParseCache;
    use staticfx::semantic::Project;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.py");
    std::fs::write(&path, "x = 1\n").unwrap();
    let cache = ParseCache::default();
    let first = Project::new(dir.path()).with_parse_cache(cache.clone());
    let id = first.load_path(&path).unwrap();
    assert_eq!(&*first.file(id).text, "x = 1\n");
    // Same file, unchanged: the cached parse is shared.
    let again = Project::new(dir.path()).with_parse_cache(cache.clone());
    let id2 = again.load_path(&path).unwrap();
    assert!(std::sync::Arc::ptr_eq(&first.file(id), &again.file(id2)));
    // Changed on disk (say, by `git checkout`): read again.
    std::fs::write(&path, "x = 22\n").unwrap();
    let after = Project::new(dir.path()).with_parse_cache(cache);
    let id3 = after.load_path(&path).unwrap();
    assert_eq!(&*after.file(id3).text, "x = 22\n");
}
