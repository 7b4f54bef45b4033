//! The user's Python environment: discovery order, what a real interpreter's search path
//! holds (`.pth` files, setuptools' editable finders), namespace packages, compiled modules,
//! broken environments, and a user's own model importing timm, transformers and einops from
//! a real venv (built by `scripts/test-all.sh` in `target/test-data/user-venv`).

mod lsp_support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lsp_support::{cursor, file_uri, TestClient};
use serde_json::{json, Value};
use staticfx::analysis::{analyze_file, FileAnalysis, GraphOptions};
use staticfx::semantic::environment::{
    discover, environment_of, find_interpreter, DiscoveryError, DiscoveryRequest,
    EnvironmentHandle, LibraryModule, Origin, PythonEnvironment,
};

fn touch(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A directory laid out like a venv (`pyvenv.cfg`, `bin/python3`), never run.
fn fake_venv(dir: &Path) -> PathBuf {
    touch(&dir.join("pyvenv.cfg"), "home = /usr/bin\n");
    let py = dir.join("bin/python3");
    touch(&py, "");
    py
}

#[test]
fn discovery_order_setting_then_virtual_env_then_project_venv_then_path() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("proj/src");
    std::fs::create_dir_all(&root).unwrap();
    let setting = fake_venv(&t.path().join("chosen"));
    let active = fake_venv(&t.path().join("active"));
    // `.venv` one level above the root is found too.
    let project = fake_venv(&t.path().join("proj/.venv"));
    let on_path = t.path().join("pathbin/python3");
    touch(&on_path, "");
    let mut req = DiscoveryRequest {
        python: Some(t.path().join("chosen")),
        root: root.clone(),
        virtual_env: Some(t.path().join("active").into()),
        path_var: Some(t.path().join("pathbin").into()),
    };
    assert_eq!(find_interpreter(&req), Some((setting, Origin::Setting)));
    req.python = None;
    assert_eq!(find_interpreter(&req), Some((active, Origin::VirtualEnv)));
    req.virtual_env = None;
    assert_eq!(find_interpreter(&req), Some((project, Origin::ProjectVenv)));
    std::fs::remove_dir_all(t.path().join("proj/.venv")).unwrap();
    assert_eq!(find_interpreter(&req), Some((on_path, Origin::Path)));
    req.path_var = Some(t.path().join("nowhere").into());
    assert_eq!(find_interpreter(&req), None);
    assert_eq!(discover(&req).unwrap_err(), DiscoveryError::NotFound);
    // A relative setting is taken from the root.
    req.python = Some("../../chosen/bin/python3".into());
    assert_eq!(
        find_interpreter(&req).map(|(p, o)| (std::fs::canonicalize(p).unwrap(), o)),
        Some((
            std::fs::canonicalize(t.path().join("chosen/bin/python3")).unwrap(),
            Origin::Setting
        ))
    );
}

#[test]
fn broken_environment_is_one_message_naming_the_path() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("gone/bin/python");
    let e = environment_of(&missing, Origin::Setting).unwrap_err();
    assert!(matches!(e, DiscoveryError::Missing { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains(&missing.display().to_string()) && !msg.contains('\n'),
        "{msg}"
    );

    // An interpreter that starts but fails.
    let failing = t.path().join("bin/python3");
    touch(
        &failing,
        "#!/bin/sh\necho 'no such module: encodings' >&2\nexit 3\n",
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = environment_of(&failing, Origin::VirtualEnv).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, DiscoveryError::Failed { .. }), "{e:?}");
        assert!(
            msg.contains(&failing.display().to_string()) && msg.contains("no such module"),
            "{msg}"
        );
    }
}

/// The CLI keeps analysing with the root only and says once why imports did not resolve.
#[test]
fn cli_with_a_broken_python_setting_warns_and_analyses() {
    let t = tempfile::tempdir().unwrap();
    let model = t.path().join("m.py");
    touch(
        &model,
        "import torch\nfrom torch import nn\nfrom somelib import magic\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n        return magic(self.fc(x))\n",
    );
    let missing = t.path().join("no-venv");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_staticfx"))
        .args(["check", "--output-format", "json", "--python"])
        .arg(&missing)
        .arg(&model)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains(&missing.display().to_string()),
        "{stderr}"
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, vec!["FX907"], "{json}");
}

fn python3() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("python3"))
        .find(|p| p.is_file())
}

/// A real venv (no pip) with a `.pth` file and an editable finder in its site-packages.
#[test]
fn real_interpreter_search_path_with_pth_and_editable_finder() {
    let Some(python) = python3() else {
        eprintln!("note: no python3 on PATH; skipping the real-interpreter discovery test");
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let venv = t.path().join("venv");
    let ok = std::process::Command::new(&python)
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("note: python3 -m venv failed; skipping the real-interpreter discovery test");
        return;
    }
    let req = DiscoveryRequest {
        python: None,
        root: t.path().to_path_buf(),
        virtual_env: Some(venv.clone().into()),
        path_var: None,
    };
    let first = discover(&req).unwrap();
    let site = first.site_packages[0].clone();
    assert!(site.ends_with("site-packages"), "{site:?}");
    assert!(!first.stdlib_modules.is_empty() || first.version.starts_with("3.9"));
    // The standard library is not a library path; site-packages is.
    assert!(first.library_paths.contains(&site), "{first:?}");
    assert!(
        first
            .library_paths
            .iter()
            .all(|p| !p.ends_with("lib-dynload")),
        "{first:?}"
    );

    let extra = t.path().join("extra");
    touch(&extra.join("pthmod.py"), "X = 1\n");
    touch(&site.join("extra.pth"), &format!("{}\n", extra.display()));
    let editable_src = t.path().join("checkout/src/demo");
    touch(&editable_src.join("__init__.py"), "");
    touch(&editable_src.join("layers.py"), "Y = 2\n");
    touch(
        &site.join("__editable___demo_0_1_finder.py"),
        &format!(
            "import sys\nMAPPING: dict[str, str] = {{'demo': {:?}}}\nNAMESPACES: dict[str, list[str]] = {{}}\n",
            editable_src.display().to_string()
        ),
    );
    touch(
        &site.join("__editable__.demo-0.1.pth"),
        "import __editable___demo_0_1_finder; __editable___demo_0_1_finder.install()\n",
    );
    #[cfg(unix)]
    touch(&site.join("fastx.so"), "\x7fELF");
    // Adding files to site-packages invalidates the cached search path.
    let env = discover(&req).unwrap();
    assert!(!Arc::ptr_eq(&first, &env));
    assert!(env.library_paths.contains(&extra), "{env:?}");
    assert_eq!(
        env.find_module("pthmod"),
        Some(LibraryModule::Source(extra.join("pthmod.py")))
    );
    assert_eq!(
        env.find_module("demo.layers"),
        Some(LibraryModule::Source(editable_src.join("layers.py")))
    );
    // Found through the interpreter's own extension suffixes.
    #[cfg(unix)]
    assert_eq!(
        env.find_module("fastx"),
        Some(LibraryModule::Compiled {
            file: site.join("fastx.so"),
            stub: None
        })
    );
    // What the dynamo rules read: the installed torch, from its dist-info.
    std::fs::create_dir_all(site.join("torch-2.15.0.dist-info")).unwrap();
    let env = discover(&req).unwrap();
    assert_eq!(env.package_version("torch").as_deref(), Some("2.15.0"));
    assert_eq!(env.package_version("timm"), None);
    // Same interpreter, unchanged site-packages: the cached value.
    assert!(Arc::ptr_eq(&env, &discover(&req).unwrap()));
}

/// An environment as plain data over temporary library directories.
fn env_over(paths: &[PathBuf]) -> PythonEnvironment {
    PythonEnvironment {
        interpreter: PathBuf::from("python3"),
        origin: Origin::Setting,
        prefix: PathBuf::new(),
        version: "3.11.0".into(),
        sys_path: paths.to_vec(),
        site_packages: paths.to_vec(),
        library_paths: paths.to_vec(),
        editable: vec![],
        stdlib_modules: vec!["os".into(), "re".into(), "json".into()],
        extension_suffixes: vec![],
    }
}

fn analyse(model: &Path, env: PythonEnvironment) -> FileAnalysis {
    let opts = GraphOptions {
        environment: Some(EnvironmentHandle::ready(Ok(Arc::new(env)))),
        ..Default::default()
    };
    let model = model.to_path_buf();
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || analyze_file(&model, &opts).unwrap())
        .unwrap()
        .join()
        .unwrap()
}

fn findings(a: &FileAnalysis) -> Vec<(&'static str, String)> {
    a.graphs
        .iter()
        .flat_map(|g| g.breaks.iter().map(|f| (f.code, f.message.clone())))
        .collect()
}

#[test]
fn namespace_package_portions_and_init_reexports_resolve() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("site_a"), t.path().join("site_b"));
    // `nsp` has no __init__.py: a namespace package in two portions.
    touch(
        &a.join("nsp/blocks.py"),
        "from torch import nn\n\nclass Wide(nn.Module):\n    def __init__(self, d=8):\n        super().__init__()\n        self.fc = nn.Linear(d, 2 * d)\n\n    def forward(self, x):\n        return self.fc(x)\n",
    );
    // A regular package re-exporting from a submodule, in the second portion.
    touch(
        &b.join("nsp/extra/__init__.py"),
        "from .impl import Wide2\n",
    );
    touch(
        &b.join("nsp/extra/impl.py"),
        "from nsp.blocks import Wide\n\nclass Wide2(Wide):\n    pass\n",
    );
    let env = env_over(&[a.clone(), b.clone()]);
    assert_eq!(
        env.find_module("nsp"),
        Some(LibraryModule::Namespace(vec![a.join("nsp"), b.join("nsp")]))
    );
    assert_eq!(
        env.find_module("nsp.extra.impl"),
        Some(LibraryModule::Source(b.join("nsp/extra/impl.py")))
    );
    let proj = t.path().join("proj");
    let model = proj.join("model.py");
    touch(
        &model,
        "from torch import nn\nimport nsp.blocks\nfrom nsp.extra import Wide2\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.a = nsp.blocks.Wide(4)\n        self.b = Wide2(8)\n\n    def forward(self, x):\n        return self.b(self.a(x))\n",
    );
    let an = analyse(&model, env);
    let g = &an.graphs[0];
    let nodes: Vec<String> = g
        .graph
        .nodes()
        .map(|(_, n)| format!("{}:{}", n.op.as_str(), n.target))
        .collect();
    assert_eq!(
        nodes,
        vec![
            "placeholder:x",
            "call_module:a.fc",
            "call_module:b.fc",
            "output:output"
        ]
    );
    let fc = g.modules.iter().find(|m| m.path == "b.fc").unwrap();
    let weight = fc.params.iter().find(|p| p.name == "weight").unwrap();
    assert_eq!(weight.shape, Some(vec![16, 8]));
    assert!(findings(&an).is_empty(), "{:?}", findings(&an));
    // Library files are read-only inputs, named by module.
    let lib = an
        .project
        .files()
        .into_iter()
        .find(|f| f.path.ends_with("impl.py"))
        .unwrap();
    assert!(lib.library);
    assert_eq!(lib.module, "nsp.extra.impl");
}

#[test]
fn compiled_module_is_opaque_with_a_reason_and_a_possible_break() {
    let t = tempfile::tempdir().unwrap();
    let site = t.path().join("site");
    touch(
        &site.join("fastops.cpython-311-x86_64-linux-gnu.so"),
        "\x7fELF",
    );
    touch(&site.join("fastops.pyi"), "def fused(x): ...\n");
    touch(&site.join("pkg/__init__.py"), "from ._C import kernel\n");
    touch(&site.join("pkg/_C.abi3.so"), "\x7fELF");
    // Installed Python that Dynamo's trace rules skip: not inlined, as Dynamo does not.
    touch(
        &site.join("tqdm/__init__.py"),
        "def tqdm(x):\n    return x\n",
    );
    let env = env_over(&[site.clone()]);
    assert_eq!(
        env.find_module("fastops"),
        Some(LibraryModule::Compiled {
            file: site.join("fastops.cpython-311-x86_64-linux-gnu.so"),
            stub: Some(site.join("fastops.pyi")),
        })
    );
    let model = t.path().join("proj/model.py");
    touch(
        &model,
        "import re\nimport tqdm\nfrom torch import nn\nimport fastops\nfrom pkg import kernel\nfrom not_installed import helper\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n        x = fastops.fused(self.fc(x))\n        x = kernel(x)\n        x = helper(x)\n        x = tqdm.tqdm(x)\n        return re.escape(x)\n",
    );
    let an = analyse(&model, env);
    let f = findings(&an);
    let codes: Vec<&str> = f.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        codes,
        vec!["FX190", "FX190", "FX907", "FX190", "FX190"],
        "{f:?}"
    );
    assert!(
        f[0].1.contains("compiled extension module `fastops`"),
        "{f:?}"
    );
    assert!(
        f[1].1.contains("`pkg._C`") && f[1].1.contains("_C.abi3.so"),
        "{f:?}"
    );
    // The import raises, as in Python with this environment; the limit names the module.
    assert!(f[2].1.contains("No module named 'not_installed'"), "{f:?}");
    assert!(f[3].1.contains("skip the module `tqdm`"), "{f:?}");
    assert!(f[4].1.contains("skip the module `re`"), "{f:?}");
    for g in &an.graphs {
        for b in &g.breaks {
            assert_eq!(b.severity, staticfx::diagnostics::Severity::Info);
        }
    }
}

/// What `scripts/test-all.sh` builds: a venv with timm, transformers, huggingface_hub and
/// einops installed from their wheels (no torch).
fn user_venv() -> Option<PathBuf> {
    let dir = std::env::var_os("STATICFX_USER_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-data/user-venv")
        });
    let ok = dir.join("pyvenv.cfg").is_file();
    if !ok {
        eprintln!(
            "note: no venv at {} (scripts/test-all.sh builds it); skipping the user-file test",
            dir.display()
        );
    }
    ok.then_some(dir)
}

const USER_MODEL: &str = r#"import torch
from torch import nn
from timm.layers import Mlp
from transformers.activations import ACT2FN
from einops import rearrange


class Block(nn.Module):
    def __init__(self, dim=64, hidden=128):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, hidden)
        self.act = ACT2FN["gelu"]
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        x = $1self.mlp(self.norm(x))
        x = self.proj(x)
        x = self.act(x)
        return rearrange(x, "b n d -> b d n")
"#;

fn hover_text(h: &Value) -> String {
    h["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_file_resolves_timm_transformers_and_einops_from_the_venv() {
    let Some(venv) = user_venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (text, mlp_pos) = cursor(&USER_MODEL.replace("$1", "$0"));
    let path = dir.path().join("model.py");
    std::fs::write(&path, &text).unwrap();
    let uri = file_uri(&path);
    let mut c = TestClient::start(Value::Null);
    c.initialize(
        Some(dir.path()),
        json!({"python": venv, "debounceMs": 0, "exampleInputs": {"Block": {"x": [2, 16, 64]}}}),
        false,
    )
    .await;
    let log = c
        .wait_for("window/logMessage", |p| {
            p["message"].as_str().is_some_and(|m| m.contains("Python "))
        })
        .await;
    assert!(
        log["message"]
            .as_str()
            .unwrap()
            .contains(&venv.display().to_string()),
        "{log}"
    );
    c.open(&uri, &text).await;
    let diags = c.diagnostics(&uri, 1).await;
    let codes: Vec<&str> = diags.iter().filter_map(|d| d["code"].as_str()).collect();
    assert!(!codes.contains(&"FX190"), "{diags:#?}");
    assert!(
        !codes.iter().any(|c| c.starts_with("FX9")),
        "every import resolves: {diags:#?}"
    );
    // timm's Mlp is inlined: its last layer's output shape shows on the call.
    let h = hover_text(&c.hover(&uri, mlp_pos).await);
    assert!(h.contains("[2, 16, 64]"), "{h}");
    let env = c
        .result(
            "workspace/executeCommand",
            json!({"command": "staticfx.environment", "arguments": [{"uri": uri}]}),
        )
        .await;
    assert_eq!(
        env["torch"],
        Value::Null,
        "the test venv has no torch: {env}"
    );

    // The same file from the CLI: ACT2FN["gelu"] is transformers' GELUActivation, traced
    // into torch.nn.functional.gelu as torch.fx traces it.
    let a = analyse_in_venv(&path, &venv);
    let g = &a.graphs[0];
    let targets: Vec<String> = g.graph.nodes().map(|(_, n)| n.target.clone()).collect();
    assert!(
        targets.iter().any(|t| t == "torch.nn.functional.gelu"),
        "{targets:?}"
    );
    assert!(targets.iter().any(|t| t == "mlp.fc2"), "{targets:?}");
    assert!(findings(&a).iter().all(|(c, _)| *c != "FX190"));
}

fn analyse_in_venv(model: &Path, venv: &Path) -> FileAnalysis {
    let env = environment_of(&venv.join("bin/python"), Origin::Setting)
        .or_else(|_| environment_of(&venv.join("Scripts/python.exe"), Origin::Setting))
        .unwrap();
    analyse(model, PythonEnvironment::clone(&env))
}

#[test]
fn lazy_module_getattr_serves_names_on_first_use() {
    let t = tempfile::tempdir().unwrap();
    let site = t.path().join("site");
    touch(
        &site.join("lazypkg/__init__.py"),
        "def __getattr__(name):\n    if name == \"Wide\":\n        from .blocks import Wide\n        return Wide\n    raise AttributeError(name)\n",
    );
    touch(
        &site.join("lazypkg/blocks.py"),
        "from torch import nn\n\nclass Wide(nn.Module):\n    def __init__(self, d=8):\n        super().__init__()\n        self.fc = nn.Linear(d, 3 * d)\n\n    def forward(self, x):\n        return self.fc(x)\n",
    );
    let model = t.path().join("proj/model.py");
    touch(
        &model,
        "from torch import nn\nimport lazypkg\nfrom lazypkg import Wide\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.a = Wide(2)\n        self.b = lazypkg.Wide(6)\n\n    def forward(self, x):\n        return self.b(self.a(x))\n",
    );
    let an = analyse(&model, env_over(&[site]));
    let g = &an.graphs[0];
    let weights: Vec<Option<Vec<i64>>> = ["a.fc", "b.fc"]
        .iter()
        .map(|p| {
            let m = g.modules.iter().find(|m| m.path == *p).unwrap();
            m.params
                .iter()
                .find(|p| p.name == "weight")
                .unwrap()
                .shape
                .clone()
        })
        .collect();
    assert_eq!(weights, vec![Some(vec![6, 2]), Some(vec![18, 6])]);
    assert!(an.diagnostics.is_empty(), "{:?}", an.diagnostics);
}

/// A registry in transformers' style (a `MutableMapping` whose lookups go through the
/// mixin's `get`), read per class: present keys give their function, absent ones the default.
#[test]
fn mapping_registry_lookup_through_the_mixin_get() {
    let t = tempfile::tempdir().unwrap();
    let site = t.path().join("site");
    touch(
        &site.join("reglib/__init__.py"),
        "from collections.abc import MutableMapping\nimport torch.nn.functional as F\n\nclass Registry(MutableMapping):\n    _global = {\"gelu\": F.gelu}\n\n    def __getitem__(self, key):\n        return self._global[key]\n\n    def __setitem__(self, key, value):\n        self._global[key] = value\n\n    def __delitem__(self, key):\n        del self._global[key]\n\n    def __iter__(self):\n        return iter(self._global)\n\n    def __len__(self):\n        return len(self._global)\n\n    def pick(self, name, default):\n        return super().get(name, default)\n\nREGISTRY = Registry()\n",
    );
    let model = t.path().join("proj/model.py");
    touch(
        &model,
        "import torch.nn.functional as F\nfrom torch import nn\nfrom reglib import REGISTRY\n\ndef eager(x):\n    return F.relu(x)\n\nclass M(nn.Module):\n    def forward(self, x):\n        return REGISTRY.pick(\"gelu\", eager)(x) + REGISTRY.pick(\"sdpa\", eager)(x)\n",
    );
    let an = analyse(&model, env_over(&[site]));
    let targets: Vec<String> = an.graphs[0]
        .graph
        .nodes()
        .map(|(_, n)| n.target.clone())
        .collect();
    assert_eq!(
        targets,
        vec![
            "x",
            "torch.nn.functional.gelu",
            "torch.nn.functional.relu",
            "operator.add",
            "output"
        ]
    );
}

/// `sys.version_info` is the environment's Python version, compared as a tuple: a library
/// that picks an import by it (`if sys.version_info < (3, 8): import importlib_metadata`)
/// takes the branch the environment takes. It had been taken as true, silently.
#[test]
fn sys_version_info_is_the_environments() {
    let t = tempfile::tempdir().unwrap();
    let model = t.path().join("proj/model.py");
    touch(
        &model,
        "import sys\nfrom torch import nn\n\nif sys.version_info < (3, 8):\n    N = 3\nelse:\n    N = 5\nMINOR = 7 if sys.version_info[:2] >= (3, 11) else 9\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, N + MINOR)\n\n    def forward(self, x):\n        return self.fc(x)\n",
    );
    let an = analyse(&model, env_over(&[t.path().join("site")]));
    let fc = an.graphs[0]
        .modules
        .iter()
        .find(|m| m.path == "fc")
        .unwrap();
    let weight = fc.params.iter().find(|p| p.name == "weight").unwrap();
    // 3.11.0: not below 3.8 (5), at least 3.11 (7)
    assert_eq!(weight.shape, Some(vec![12, 4]));
}

/// The first read of a `functools.cached_property` in forward breaks the graph only where
/// `cached_property` takes a lock (Python 3.11 and older; measured with torch 2.8 and 2.15 on
/// 3.11, and one graph with torch 2.15 on 3.12): the environment's version decides, and
/// without one the finding says on which versions it holds.
#[test]
fn a_cached_property_read_breaks_only_where_python_locks_it() {
    let t = tempfile::tempdir().unwrap();
    let model = t.path().join("proj/model.py");
    touch(
        &model,
        "import functools\n\nfrom torch import nn\n\n\nclass M(nn.Conv1d):\n    @functools.cached_property\n    def left_pad(self):\n        return self.kernel_size[0] - 1\n\n    def forward(self, x):\n        x = nn.functional.pad(x, (self.left_pad, 0))\n        return super().forward(x)\n",
    );
    let mut env = env_over(&[t.path().join("site")]);
    let on_311 = findings(&analyse(&model, env.clone()));
    assert_eq!(on_311.len(), 1, "{on_311:?}");
    assert_eq!(on_311[0].0, "FX120");
    assert!(on_311[0].1.contains("`left_pad`"), "{}", on_311[0].1);
    assert!(!on_311[0].1.contains("3.11 and older"), "{}", on_311[0].1);
    env.version = "3.12.1".into();
    assert_eq!(findings(&analyse(&model, env)), vec![]);
}
