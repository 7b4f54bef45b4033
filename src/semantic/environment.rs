//! The user's Python environment: which interpreter the project runs with and where its
//! installed packages live, found the way Pyright and ty find it. Imports that are not in the
//! project root resolve through this search path as read-only library files.
//!
//! The interpreter is asked for its `sys.path` once (isolated mode, so nothing from the
//! project directory is imported); the analysed code is never imported or run. Editable
//! installs whose `.pth` only installs a meta-path finder are read from the finder's
//! `MAPPING` literal as text.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

/// How the interpreter was found, in the order discovery tries them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Origin {
    /// `--python`, `[tool.staticfx] python` or the editor's `staticfx.python`.
    Setting,
    /// `$VIRTUAL_ENV`.
    VirtualEnv,
    /// A `.venv` or `venv` directory in or above the project root.
    ProjectVenv,
    /// `python3` (or `python`) on `PATH`.
    Path,
}

impl Origin {
    pub fn describe(self) -> &'static str {
        match self {
            Origin::Setting => "the `python` setting",
            Origin::VirtualEnv => "$VIRTUAL_ENV",
            Origin::ProjectVenv => "a .venv/venv directory of the project",
            Origin::Path => "python3 on PATH",
        }
    }
}

/// A discovered environment, as plain data (other stages and front ends read it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PythonEnvironment {
    /// The interpreter as found (a venv's `bin/python`, not the base interpreter it links to).
    pub interpreter: PathBuf,
    pub origin: Origin,
    /// `sys.prefix`: the venv directory for a venv.
    pub prefix: PathBuf,
    /// `major.minor.micro`.
    pub version: String,
    /// `sys.path` as the interpreter reports it (isolated mode: no current directory).
    pub sys_path: Vec<PathBuf>,
    /// `site.getsitepackages()` plus the user site when Python would use it.
    pub site_packages: Vec<PathBuf>,
    /// What imports resolve through, in order: `sys.path` without the standard library
    /// (which stays the catalogue's and the evaluator's built-in knowledge) and without
    /// entries that do not exist.
    pub library_paths: Vec<PathBuf>,
    /// Editable installs served by a setuptools finder: top-level module → its directory or file.
    pub editable: Vec<(String, PathBuf)>,
    /// `sys.stdlib_module_names` (Python 3.10+; empty before).
    pub stdlib_modules: Vec<String>,
    /// `importlib.machinery.EXTENSION_SUFFIXES` (`.cpython-311-x86_64-linux-gnu.so`, `.abi3.so`,
    /// `.so`); empty means any `.so`/`.pyd` suffix.
    pub extension_suffixes: Vec<String>,
}

impl PythonEnvironment {
    /// The installed version of a distribution (`torch`, `timm`), read from its
    /// `*.dist-info/METADATA` in site-packages; None when it is not installed.
    pub fn package_version(&self, distribution: &str) -> Option<String> {
        let want = normalize_dist(distribution);
        for dir in self.site_packages.iter().chain(&self.library_paths) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(stem) = name.strip_suffix(".dist-info") else {
                    continue;
                };
                let Some((dist, version)) = stem.rsplit_once('-') else {
                    continue;
                };
                if normalize_dist(dist) == want {
                    return Some(version.to_string());
                }
            }
        }
        None
    }

    /// One line for logs and `:checkhealth`.
    pub fn summary(&self) -> String {
        format!(
            "Python {} at {} (found by {}); {} library path(s){}",
            self.version,
            self.interpreter.display(),
            self.origin.describe(),
            self.library_paths.len(),
            if self.editable.is_empty() {
                String::new()
            } else {
                format!(", {} editable install(s)", self.editable.len())
            }
        )
    }
}

fn normalize_dist(name: &str) -> String {
    name.to_ascii_lowercase().replace(['-', '.'], "_")
}

/// Why no environment could be used: one clear line naming the path.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DiscoveryError {
    #[error("Python interpreter {path} (from {}) does not exist; imports outside the project root are not resolved", origin.describe())]
    Missing { path: PathBuf, origin: Origin },
    #[error("Python interpreter {path} (from {}) failed: {reason}; imports outside the project root are not resolved", origin.describe())]
    Failed {
        path: PathBuf,
        origin: Origin,
        reason: String,
    },
    #[error("no Python interpreter found (no --python, $VIRTUAL_ENV, .venv or python3 on PATH); imports outside the project root are not resolved")]
    NotFound,
}

/// What discovery reads besides the file system: the setting and the process environment,
/// passed in so tests can pin them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DiscoveryRequest {
    /// `--python` / `[tool.staticfx] python`: an interpreter or an environment directory;
    /// relative paths are taken from `root`.
    pub python: Option<PathBuf>,
    pub root: PathBuf,
    pub virtual_env: Option<OsString>,
    pub path_var: Option<OsString>,
}

impl DiscoveryRequest {
    /// A request reading `VIRTUAL_ENV` and `PATH` from this process.
    pub fn from_process(root: &Path, python: Option<PathBuf>) -> Self {
        DiscoveryRequest {
            python,
            root: root.to_path_buf(),
            virtual_env: std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()),
            path_var: std::env::var_os("PATH"),
        }
    }
}

/// The interpreter discovery picks, without running it: the setting, then `VIRTUAL_ENV`, then
/// `.venv`/`venv` in or above the root, then `python3` on `PATH`.
pub fn find_interpreter(req: &DiscoveryRequest) -> Option<(PathBuf, Origin)> {
    if let Some(p) = &req.python {
        let p = if p.is_relative() {
            req.root.join(p)
        } else {
            p.clone()
        };
        let p = if p.is_dir() {
            interpreter_in(&p).unwrap_or_else(|| p.join(VENV_PYTHON))
        } else {
            p
        };
        return Some((p, Origin::Setting));
    }
    if let Some(v) = &req.virtual_env {
        let dir = PathBuf::from(v);
        let p = interpreter_in(&dir).unwrap_or_else(|| dir.join(VENV_PYTHON));
        return Some((p, Origin::VirtualEnv));
    }
    let root = std::path::absolute(&req.root).unwrap_or_else(|_| req.root.clone());
    for dir in root.ancestors() {
        for name in [".venv", "venv"] {
            let venv = dir.join(name);
            if venv.join("pyvenv.cfg").is_file() {
                if let Some(p) = interpreter_in(&venv) {
                    return Some((p, Origin::ProjectVenv));
                }
            }
        }
    }
    let path_var = req.path_var.as_ref()?;
    for dir in std::env::split_paths(path_var) {
        for name in PATH_NAMES {
            let p = dir.join(name);
            if p.is_file() {
                return Some((p, Origin::Path));
            }
        }
    }
    None
}

#[cfg(windows)]
const VENV_PYTHON: &str = "Scripts/python.exe";
#[cfg(not(windows))]
const VENV_PYTHON: &str = "bin/python";
#[cfg(windows)]
const PATH_NAMES: &[&str] = &["python3.exe", "python.exe"];
#[cfg(not(windows))]
const PATH_NAMES: &[&str] = &["python3", "python"];

/// The interpreter of an environment directory (`bin/python3`, `Scripts/python.exe`).
fn interpreter_in(dir: &Path) -> Option<PathBuf> {
    [
        "bin/python3",
        "bin/python",
        "Scripts/python.exe",
        "python.exe",
    ]
    .iter()
    .map(|n| dir.join(n))
    .find(|p| p.is_file())
}

/// Finds the environment for `req` and reads its search path (cached per interpreter).
pub fn discover(req: &DiscoveryRequest) -> Result<Arc<PythonEnvironment>, DiscoveryError> {
    let (interpreter, origin) = find_interpreter(req).ok_or(DiscoveryError::NotFound)?;
    environment_of(&interpreter, origin)
}

type MemoryCache = Mutex<HashMap<(PathBuf, Origin), (Stamps, Arc<PythonEnvironment>)>>;

fn memory_cache() -> &'static MemoryCache {
    static CACHE: OnceLock<MemoryCache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The environment of one interpreter. Cached in memory and on disk, keyed by the
/// interpreter's path and checked against the modification times of the interpreter, its
/// `pyvenv.cfg` and its site-packages directories (installing a package changes the latter).
pub fn environment_of(
    interpreter: &Path,
    origin: Origin,
) -> Result<Arc<PythonEnvironment>, DiscoveryError> {
    if !interpreter.is_file() {
        return Err(DiscoveryError::Missing {
            path: interpreter.to_path_buf(),
            origin,
        });
    }
    let key = (interpreter.to_path_buf(), origin);
    if let Some((stamps, env)) = memory_cache().lock().unwrap().get(&key) {
        if stamps.still_valid(env) {
            return Ok(env.clone());
        }
    }
    let disk = disk_cache_file(interpreter);
    if let Some(env) = disk
        .as_ref()
        .and_then(|f| read_disk_cache(f, interpreter, origin))
    {
        let env = Arc::new(env);
        let stamps = Stamps::of(&env);
        memory_cache()
            .lock()
            .unwrap()
            .insert(key, (stamps, env.clone()));
        return Ok(env);
    }
    let env = Arc::new(query_interpreter(interpreter, origin)?);
    let stamps = Stamps::of(&env);
    // A launcher (pyenv's shim) picks its interpreter per directory and environment: only a
    // real interpreter (or a venv's link to one) may be remembered across runs.
    if let Some(file) = disk.filter(|_| is_real_interpreter(&env)) {
        write_disk_cache(&file, &env, &stamps);
    }
    memory_cache()
        .lock()
        .unwrap()
        .insert(key, (stamps, env.clone()));
    Ok(env)
}

fn is_real_interpreter(env: &PythonEnvironment) -> bool {
    // The isolated query reports `sys.executable` as `prefix/bin/pythonX`: a found path under
    // the prefix is the interpreter itself or the venv's own link.
    let found = std::path::absolute(&env.interpreter).unwrap_or_else(|_| env.interpreter.clone());
    found.starts_with(&env.prefix)
}

/// Modification times an environment's cached search path depends on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Stamps(Vec<(PathBuf, Option<SystemTime>)>);

impl Stamps {
    fn of(env: &PythonEnvironment) -> Stamps {
        let mut paths = vec![
            env.interpreter.clone(),
            std::fs::canonicalize(&env.interpreter).unwrap_or_else(|_| env.interpreter.clone()),
            env.prefix.join("pyvenv.cfg"),
        ];
        paths.extend(env.site_packages.iter().cloned());
        Stamps(
            paths
                .into_iter()
                .map(|p| {
                    let t = std::fs::metadata(&p).and_then(|m| m.modified()).ok();
                    (p, t)
                })
                .collect(),
        )
    }

    fn still_valid(&self, env: &PythonEnvironment) -> bool {
        *self == Stamps::of(env)
    }
}

#[derive(Serialize, Deserialize)]
struct DiskEntry {
    format: u32,
    stamps: Stamps,
    env: PythonEnvironment,
}

const DISK_FORMAT: u32 = 2;

fn disk_cache_file(interpreter: &Path) -> Option<PathBuf> {
    use sha2::Digest;
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .or_else(|| std::env::var_os("LOCALAPPDATA"))
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    let digest = sha2::Sha256::digest(interpreter.as_os_str().as_encoded_bytes());
    let name: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    Some(
        base.join("staticfx")
            .join("python-env")
            .join(format!("{name}.json")),
    )
}

fn read_disk_cache(file: &Path, interpreter: &Path, origin: Origin) -> Option<PythonEnvironment> {
    let text = std::fs::read_to_string(file).ok()?;
    let entry: DiskEntry = serde_json::from_str(&text).ok()?;
    let mut env = entry.env;
    if entry.format != DISK_FORMAT || env.interpreter != interpreter {
        return None;
    }
    env.origin = origin;
    entry.stamps.still_valid(&env).then_some(env)
}

fn write_disk_cache(file: &Path, env: &PythonEnvironment, stamps: &Stamps) {
    let entry = DiskEntry {
        format: DISK_FORMAT,
        stamps: stamps.clone(),
        env: env.clone(),
    };
    let (Some(dir), Ok(text)) = (file.parent(), serde_json::to_string(&entry)) else {
        return;
    };
    // A cache that cannot be written only costs the next run one interpreter start.
    if std::fs::create_dir_all(dir).is_ok() {
        let tmp = file.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, file).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// Asks the interpreter for its search path. `-I` keeps the current directory and
/// `PYTHON*` variables out, so no file of the analysed project can be imported; the user
/// site is added when Python itself would use it (outside a venv).
const QUERY: &str = r#"
import importlib.machinery, json, os, site, sys, sysconfig
paths = sysconfig.get_paths()
user = None
if sys.prefix == sys.base_prefix and hasattr(site, "getusersitepackages"):
    user = site.getusersitepackages()
    if os.path.isdir(user):
        site.addsitedir(user)
    else:
        user = None
sites = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
if user:
    sites.append(user)
print(json.dumps({
    "prefix": sys.prefix,
    "version": "%d.%d.%d" % sys.version_info[:3],
    "sys_path": sys.path,
    "stdlib": [paths.get("stdlib"), paths.get("platstdlib")],
    "site_packages": sites,
    "stdlib_modules": sorted(getattr(sys, "stdlib_module_names", ())),
    "extension_suffixes": importlib.machinery.EXTENSION_SUFFIXES,
}))
"#;

#[derive(Deserialize)]
struct QueryOutput {
    prefix: PathBuf,
    version: String,
    sys_path: Vec<PathBuf>,
    stdlib: Vec<Option<PathBuf>>,
    site_packages: Vec<PathBuf>,
    #[serde(default)]
    stdlib_modules: Vec<String>,
    #[serde(default)]
    extension_suffixes: Vec<String>,
}

const QUERY_TIMEOUT: Duration = Duration::from_secs(20);

fn query_interpreter(
    interpreter: &Path,
    origin: Origin,
) -> Result<PythonEnvironment, DiscoveryError> {
    let failed = |reason: String| DiscoveryError::Failed {
        path: interpreter.to_path_buf(),
        origin,
        reason,
    };
    let mut child = std::process::Command::new(interpreter)
        .args(["-I", "-c", QUERY])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("cannot start it: {e}")))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > QUERY_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(failed(format!(
                    "no answer within {}s",
                    QUERY_TIMEOUT.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(failed(e.to_string())),
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| failed(e.to_string()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(failed(format!("{} ({})", out.status, last.trim())));
    }
    let q: QueryOutput = serde_json::from_slice(&out.stdout)
        .map_err(|e| failed(format!("unexpected answer to the sys.path query: {e}")))?;
    Ok(environment_from(interpreter, origin, q))
}

fn environment_from(interpreter: &Path, origin: Origin, q: QueryOutput) -> PythonEnvironment {
    let stdlib: Vec<PathBuf> = q.stdlib.into_iter().flatten().collect();
    let is_site = |p: &Path| {
        q.site_packages.iter().any(|s| p.starts_with(s))
            || p.components().any(|c| {
                let c = c.as_os_str();
                c == "site-packages" || c == "dist-packages"
            })
    };
    let mut library_paths: Vec<PathBuf> = Vec::new();
    for p in &q.sys_path {
        if p.as_os_str().is_empty() || !p.is_dir() {
            continue;
        }
        // The standard library (and lib-dynload under it) is the evaluator's built-in
        // knowledge, not source to run.
        if stdlib.iter().any(|s| p.starts_with(s)) && !is_site(p) {
            continue;
        }
        if !library_paths.contains(p) {
            library_paths.push(p.clone());
        }
    }
    let site_packages: Vec<PathBuf> = q.site_packages.into_iter().filter(|p| p.is_dir()).collect();
    let editable = site_packages
        .iter()
        .flat_map(|s| editable_mappings(s))
        .collect();
    PythonEnvironment {
        interpreter: interpreter.to_path_buf(),
        origin,
        prefix: q.prefix,
        version: q.version,
        sys_path: q.sys_path,
        site_packages,
        library_paths,
        editable,
        stdlib_modules: q.stdlib_modules,
        extension_suffixes: q.extension_suffixes,
    }
}

/// The `MAPPING` of every setuptools editable finder (`__editable___NAME_finder.py`) in a
/// site-packages directory, read as a literal: top-level name → path.
pub fn editable_mappings(site_packages: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(site_packages) else {
        return vec![];
    };
    let mut finders: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("__editable__") && n.ends_with("_finder.py"))
        })
        .collect();
    finders.sort();
    let mut out = Vec::new();
    for f in finders {
        if let Ok(text) = std::fs::read_to_string(&f) {
            out.extend(mapping_literal(&text));
        }
    }
    out
}

/// The string pairs of a module-level `MAPPING = {...}` (optionally annotated).
fn mapping_literal(text: &str) -> Vec<(String, PathBuf)> {
    let tree = crate::syntax::parse(text, None);
    let root = tree.root_node();
    let mut out = Vec::new();
    let mut c = root.walk();
    for stmt in root.named_children(&mut c) {
        if stmt.kind() != "expression_statement" {
            continue;
        }
        let Some(assign) = stmt.named_child(0).filter(|a| a.kind() == "assignment") else {
            continue;
        };
        let (Some(left), Some(right)) = (
            assign.child_by_field_name("left"),
            assign.child_by_field_name("right"),
        ) else {
            continue;
        };
        if crate::syntax::text(left, text) != "MAPPING" || right.kind() != "dictionary" {
            continue;
        }
        let mut c2 = right.walk();
        for pair in right.named_children(&mut c2) {
            if pair.kind() != "pair" {
                continue;
            }
            let key = pair
                .child_by_field_name("key")
                .and_then(|k| string_literal(k, text));
            let value = pair
                .child_by_field_name("value")
                .and_then(|v| string_literal(v, text));
            if let (Some(k), Some(v)) = (key, value) {
                out.push((k, PathBuf::from(v)));
            }
        }
    }
    out
}

/// A plain string literal's value (the finder writes `repr()`s of names and paths).
fn string_literal(node: tree_sitter::Node, src: &str) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let raw = crate::syntax::text(node, src);
    let quote = raw.chars().next()?;
    if !matches!(quote, '\'' | '"') {
        return None;
    }
    let inner = raw.strip_prefix(quote)?.strip_suffix(quote)?;
    // repr() escapes only backslashes and the quote in paths.
    let mut s = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(ch) = chars.next() {
        if ch == '\\' {
            match chars.next() {
                Some('\\') => s.push('\\'),
                Some(q @ ('\'' | '"')) => s.push(q),
                _ => return None,
            }
        } else {
            s.push(ch);
        }
    }
    Some(s)
}

/// The environment of a project, discovered the first time an import needs it: files that
/// import only torch and their own package never start an interpreter.
#[derive(Debug)]
pub struct EnvironmentHandle {
    request: Option<DiscoveryRequest>,
    cell: OnceLock<Result<Arc<PythonEnvironment>, DiscoveryError>>,
    /// Module lookups shared by every project of a run (or of the server's session).
    modules: Mutex<ModuleMemo>,
}

#[derive(Debug, Default)]
struct ModuleMemo {
    checked: Option<Instant>,
    stamps: Option<Stamps>,
    found: HashMap<String, Option<LibraryModule>>,
}

/// How long module lookups are trusted before site-packages is checked for installs.
const MEMO_RECHECK: Duration = Duration::from_secs(2);

impl EnvironmentHandle {
    pub fn lazy(request: DiscoveryRequest) -> Arc<Self> {
        Arc::new(EnvironmentHandle {
            request: Some(request),
            cell: OnceLock::new(),
            modules: Default::default(),
        })
    }

    /// The handle of `request`, shared by every analysis of the process that asks with the
    /// same request: one discovery, one module memo, for a whole `check` run or server session.
    pub fn shared(request: DiscoveryRequest) -> Arc<Self> {
        let mut handles = shared_handles().lock().unwrap();
        handles
            .entry(request.clone())
            .or_insert_with(|| EnvironmentHandle::lazy(request))
            .clone()
    }

    /// Why each shared handle discovered so far could not be used (a missing or failing
    /// interpreter; not "none found"), one line each.
    pub fn failures() -> Vec<String> {
        let handles = shared_handles().lock().unwrap();
        let mut out: Vec<String> = handles
            .values()
            .filter_map(|h| match h.outcome() {
                Some(Err(e)) if *e != DiscoveryError::NotFound => Some(e.to_string()),
                _ => None,
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// An environment found already (tests, or a front end that discovered it up front).
    pub fn ready(result: Result<Arc<PythonEnvironment>, DiscoveryError>) -> Arc<Self> {
        let cell = OnceLock::new();
        let _ = cell.set(result);
        Arc::new(EnvironmentHandle {
            request: None,
            cell,
            modules: Default::default(),
        })
    }

    /// The environment, discovering it now if nobody has yet.
    pub fn get(&self) -> Option<&Arc<PythonEnvironment>> {
        self.cell
            .get_or_init(|| match &self.request {
                Some(r) => discover(r),
                None => Err(DiscoveryError::NotFound),
            })
            .as_ref()
            .ok()
    }

    /// `PythonEnvironment::find_module`, remembered until site-packages changes.
    pub fn find_module(&self, module: &str) -> Option<LibraryModule> {
        let env = self.get()?;
        {
            let mut memo = self.modules.lock().unwrap();
            if memo.checked.is_none_or(|t| t.elapsed() > MEMO_RECHECK) {
                let now = Stamps::of(env);
                if memo.stamps.as_ref() != Some(&now) {
                    memo.found.clear();
                    memo.stamps = Some(now);
                }
                memo.checked = Some(Instant::now());
            }
            if let Some(hit) = memo.found.get(module) {
                return hit.clone();
            }
        }
        let found = env.find_module(module);
        self.modules
            .lock()
            .unwrap()
            .found
            .insert(module.to_string(), found.clone());
        found
    }

    /// The outcome, if discovery has run.
    pub fn outcome(&self) -> Option<&Result<Arc<PythonEnvironment>, DiscoveryError>> {
        self.cell.get()
    }
}

fn shared_handles() -> &'static Mutex<HashMap<DiscoveryRequest, Arc<EnvironmentHandle>>> {
    static HANDLES: OnceLock<Mutex<HashMap<DiscoveryRequest, Arc<EnvironmentHandle>>>> =
        OnceLock::new();
    HANDLES.get_or_init(Default::default)
}

/// Packages never read from the environment: the torch catalogue is the authority for torch.
pub const CATALOGUE_PACKAGES: &[&str] = &["torch"];

/// Where a module of the environment lives.
#[derive(Clone, Debug, PartialEq)]
pub enum LibraryModule {
    /// A `.py` file or a package's `__init__.py`.
    Source(PathBuf),
    /// A namespace package (directories without `__init__.py`), its portions in path order.
    Namespace(Vec<PathBuf>),
    /// An extension module with no Python source (`.so`/`.pyd`), and its `.pyi` stub if any.
    Compiled {
        file: PathBuf,
        stub: Option<PathBuf>,
    },
}

impl PythonEnvironment {
    /// Finds a dotted module the way Python's path finder does: a regular package or module
    /// in the first path entry that has one, namespace portions only when none does.
    pub fn find_module(&self, module: &str) -> Option<LibraryModule> {
        let parts: Vec<&str> = module.split('.').collect();
        if parts
            .iter()
            .any(|p| p.is_empty() || p.contains(['/', '\\']))
        {
            return None;
        }
        let top = parts[0];
        let mut search: Vec<PathBuf> = Vec::new();
        let mut found = match self.editable.iter().find(|(name, _)| name == top) {
            Some((_, path)) => {
                if path.is_dir() {
                    Some(LibraryModule::Source(path.join("__init__.py")))
                        .filter(|_| path.join("__init__.py").is_file())
                        .or(Some(LibraryModule::Namespace(vec![path.clone()])))
                } else {
                    Some(LibraryModule::Source(path.clone())).filter(|_| path.is_file())
                }
            }
            None => find_in(&self.library_paths, top, &self.extension_suffixes),
        };
        for part in &parts[1..] {
            search.clear();
            match &found {
                Some(LibraryModule::Source(init)) if is_init(init) => {
                    search.push(init.parent()?.to_path_buf());
                }
                Some(LibraryModule::Namespace(dirs)) => search.extend(dirs.iter().cloned()),
                _ => return None,
            }
            found = find_in(&search, part, &self.extension_suffixes);
        }
        found
    }
}

fn is_init(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "__init__.py")
}

fn find_in(dirs: &[PathBuf], name: &str, suffixes: &[String]) -> Option<LibraryModule> {
    let mut portions = Vec::new();
    for dir in dirs {
        let pkg = dir.join(name);
        let init = pkg.join("__init__.py");
        if init.is_file() {
            return Some(LibraryModule::Source(init));
        }
        if let Some(file) = extension_module(dir, name, suffixes) {
            let stub = Some(dir.join(format!("{name}.pyi"))).filter(|s| s.is_file());
            return Some(LibraryModule::Compiled { file, stub });
        }
        let file = dir.join(format!("{name}.py"));
        if file.is_file() {
            return Some(LibraryModule::Source(file));
        }
        if pkg.is_dir() {
            if let Some(file) = extension_module(&pkg, "__init__", suffixes) {
                return Some(LibraryModule::Compiled { file, stub: None });
            }
            portions.push(pkg);
        }
    }
    (!portions.is_empty()).then_some(LibraryModule::Namespace(portions))
}

/// `name.cpython-311-x86_64-linux-gnu.so`, `name.abi3.so`, `name.so`, `name.pyd`: the
/// interpreter's own suffixes when known (a few stats), else any such file in `dir`.
fn extension_module(dir: &Path, name: &str, suffixes: &[String]) -> Option<PathBuf> {
    if !suffixes.is_empty() {
        return suffixes
            .iter()
            .map(|s| dir.join(format!("{name}{s}")))
            .find(|p| p.is_file());
    }
    let entries = std::fs::read_dir(dir).ok()?;
    let prefix = format!("{name}.");
    let mut hits: Vec<PathBuf> = entries
        .flatten()
        .filter_map(|e| {
            let n = e.file_name();
            let n = n.to_str()?;
            let rest = n.strip_prefix(&prefix)?;
            (rest == "so"
                || rest == "pyd"
                || (rest.ends_with(".so") || rest.ends_with(".pyd")) && !rest.contains('/'))
            .then(|| e.path())
        })
        .collect();
    hits.sort();
    hits.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finder_mapping_is_read_as_text() {
        let src = "import sys\nMAPPING: dict[str, str] = {'mypkg': '/src/my pkg/mypkg', \"other\": 'C:\\\\x\\\\other.py'}\nNAMESPACES = {}\ndef install():\n    MAPPING = {'not': 'this'}\n";
        let m = mapping_literal(src);
        assert_eq!(
            m,
            vec![
                ("mypkg".to_string(), PathBuf::from("/src/my pkg/mypkg")),
                ("other".to_string(), PathBuf::from("C:\\x\\other.py")),
            ]
        );
    }

    #[test]
    fn dist_names_compare_normalized() {
        assert_eq!(normalize_dist("Typing.Extensions"), "typing_extensions");
    }
}
