//! One settings model for every front end: `[tool.staticfx]` in the nearest pyproject.toml,
//! then the editor's `initializationOptions` and `workspace/configuration` (section
//! `staticfx`), then command-line flags. Keys are accepted in client spelling
//! (`exampleInputs`, `debounceMs`) and pyproject spelling (`example-inputs`); a key absent
//! from a layer keeps the value below it. Adding a setting is one field, its default, and one
//! `merge` arm.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value as Json;

use crate::breaks::version::{find_torch, Target, TorchInfo, TorchVersion};
use crate::semantic::environment::{DiscoveryRequest, EnvironmentHandle};
use crate::shapes::DType;
use crate::traced::InputSpec;

#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Codes or code prefixes to report; None means all (`FX`).
    pub select: Option<Vec<String>>,
    /// Codes or code prefixes to leave out.
    pub ignore: Vec<String>,
    /// Project root for imports (default: the workspace folder, else the nearest ancestor
    /// without `__init__.py`).
    pub root: Option<PathBuf>,
    /// Forward inputs per class name, for concrete shapes in hover and diagnostics.
    pub example_inputs: HashMap<String, Vec<InputSpec>>,
    /// Opt-in quiet time after an edit before analysing. The default, 0, analyses at once:
    /// edits made during an analysis coalesce, and a superseded version is dropped before it
    /// starts and never published.
    pub debounce_ms: u64,
    pub test_hooks: bool,
    /// `python` / `staticfx.python` / `--python`: the interpreter or venv directory imports
    /// outside the root resolve through; None discovers it (`$VIRTUAL_ENV`, `.venv`, PATH).
    pub python: Option<PathBuf>,
    /// `target-version = "torch==2.8"`: the torch whose graph breaks to report (None: the
    /// installed one once environment discovery finds it, else the default).
    pub target_version: Option<TorchVersion>,
    /// Gitignore-style globs to leave out, replacing `exclude::DEFAULT_EXCLUDE`.
    pub exclude: Option<Vec<String>>,
    /// Globs to leave out on top of `exclude`.
    pub extend_exclude: Vec<String>,
    /// A baseline of accepted findings (see `cli::baseline`).
    pub baseline: Option<PathBuf>,
    /// `strict = true`: analysis limits (what staticfx could not follow) fail `check` like
    /// findings do; by default they are information and leave the exit code alone.
    pub strict: bool,
    /// The directory of the pyproject.toml that set `[tool.staticfx]`: excludes are relative
    /// to it.
    pub config_dir: Option<PathBuf>,
    /// `inlayHints.shapes` (`inlay-hints.shapes`): the editor's shape hints on assignments.
    pub inlay_hint_shapes: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            select: None,
            ignore: Vec::new(),
            root: None,
            example_inputs: HashMap::new(),
            debounce_ms: 0,
            test_hooks: false,
            python: None,
            target_version: None,
            exclude: None,
            extend_exclude: Vec::new(),
            baseline: None,
            strict: false,
            config_dir: None,
            inlay_hint_shapes: true,
        }
    }
}

/// The environment of `python` (a setting or flag), else discovered from `root` and this
/// process's `VIRTUAL_ENV` and `PATH`; one handle per (root, setting) for the process.
pub fn environment_for(python: Option<PathBuf>, root: &Path) -> Arc<EnvironmentHandle> {
    EnvironmentHandle::shared(DiscoveryRequest::from_process(root, python))
}

/// The configured torch, else the one installed in `environment` (read once per interpreter:
/// its version and graph-break registry), else the default.
pub fn torch_target(
    configured: Option<TorchVersion>,
    environment: Option<&EnvironmentHandle>,
) -> Target {
    if configured.is_some() {
        return Target::resolve(configured, None);
    }
    let Some(env) = environment.and_then(EnvironmentHandle::get) else {
        return Target::resolve(None, None);
    };
    static INSTALLED: OnceLock<Mutex<HashMap<PathBuf, Option<Arc<TorchInfo>>>>> = OnceLock::new();
    let installed = INSTALLED
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(env.interpreter.clone())
        .or_insert_with(|| find_torch(&env.site_packages).map(Arc::new))
        .clone();
    Target::resolve(None, installed.as_deref())
}

/// Which codes are reported: `select` (prefixes, or `ALL`) minus `ignore`.
#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    pub select: Vec<String>,
    pub ignore: Vec<String>,
}

impl Default for Filter {
    fn default() -> Self {
        Filter::all()
    }
}

impl Filter {
    pub fn all() -> Self {
        Filter {
            select: vec!["FX".into()],
            ignore: vec![],
        }
    }

    pub fn keeps(&self, code: &str) -> bool {
        matches_any(code, &self.select) && !matches_any(code, &self.ignore)
    }
}

pub fn matches_any(code: &str, prefixes: &[String]) -> bool {
    prefixes
        .iter()
        .any(|p| p == "ALL" || code.starts_with(p.as_str()))
}

impl Settings {
    /// The nearest `[tool.staticfx]` at or above `start` (a file or directory) over the
    /// defaults, and the problems found reading it.
    pub fn discover(start: &Path) -> (Settings, Vec<String>) {
        let mut s = Settings::default();
        let problems = s.merge_pyproject(start);
        (s, problems)
    }

    /// The Python environment for files under `root` (shared per root and setting, discovered
    /// when an import first needs it).
    pub fn environment(&self, root: &Path) -> Arc<EnvironmentHandle> {
        environment_for(self.python.clone(), root)
    }

    /// The torch the graph-break findings describe for files under `root`: the configured
    /// target version, else the torch installed in the environment of `root`, else the default.
    pub fn torch_target_for(&self, root: &Path) -> Target {
        torch_target(self.target_version, Some(&self.environment(root)))
    }

    /// The files `exclude` / `extend-exclude` leave out, relative to the configuring
    /// pyproject.toml (the current directory when none set them).
    pub fn exclusion(&self) -> Result<super::exclude::Exclusion, String> {
        super::exclude::Exclusion::new(
            self.config_dir.as_deref().unwrap_or(Path::new(".")),
            self.exclude.as_deref(),
            &self.extend_exclude,
        )
    }

    /// What the editor's inlay hints show.
    pub fn inlay_hints(&self) -> super::inlay::InlayConfig {
        super::inlay::InlayConfig {
            shapes: self.inlay_hint_shapes,
        }
    }

    pub fn filter(&self) -> Filter {
        Filter {
            select: self.select.clone().unwrap_or_else(|| vec!["FX".into()]),
            ignore: self.ignore.clone(),
        }
    }

    /// Command-line flags: `--select` replaces the configured selection, `--ignore` adds to
    /// the configured ignores, `--root` replaces the root.
    pub fn apply_flags(&mut self, select: &[String], ignore: &[String], root: Option<&Path>) {
        if !select.is_empty() {
            self.select = Some(select.to_vec());
        }
        self.ignore.extend(ignore.iter().cloned());
        if let Some(r) = root {
            self.root = Some(r.to_path_buf());
        }
    }

    /// Merges one layer of settings; relative paths are taken from `base` (the pyproject's
    /// directory, or the workspace folder for client settings). Returns what was wrong.
    pub fn merge(&mut self, v: &Json, base: Option<&Path>) -> Vec<String> {
        let mut problems = Vec::new();
        let Some(obj) = v.as_object() else {
            return problems;
        };
        let v = obj.get("staticfx").filter(|s| s.is_object()).unwrap_or(v);
        // A null (an editor's unset setting) keeps the layer below.
        let get = |a: &str, b: &str| v.get(a).or_else(|| v.get(b)).filter(|x| !x.is_null());
        if let Some(codes) = get("select", "select") {
            match code_list(codes) {
                Ok(list) => self.select = Some(list),
                Err(e) => problems.push(format!("select: {e}")),
            }
        }
        if let Some(codes) = get("ignore", "ignore") {
            match code_list(codes) {
                Ok(list) => self.ignore = list,
                Err(e) => problems.push(format!("ignore: {e}")),
            }
        }
        let path_in = |r: &str| match base {
            Some(b) => b.join(r),
            None => PathBuf::from(r),
        };
        if let Some(root) = get("root", "root") {
            match root.as_str() {
                Some(r) => self.root = Some(path_in(r)),
                None => problems.push("root: expected a path".into()),
            }
        }
        if let Some(python) = get("python", "python") {
            match python.as_str().map(str::trim) {
                // An editor's empty default means "discover".
                Some("") => self.python = None,
                Some(p) => {
                    self.python = Some(match base {
                        Some(b) => b.join(p),
                        None => PathBuf::from(p),
                    })
                }
                None => problems.push("python: expected a path to an interpreter or a venv".into()),
            }
        }
        if let Some(globs) = get("exclude", "exclude") {
            match string_list(globs) {
                Some(list) => self.exclude = Some(list),
                None => problems.push("exclude: expected a list of globs".into()),
            }
        }
        if let Some(globs) = get("extendExclude", "extend-exclude") {
            match string_list(globs) {
                Some(list) => self.extend_exclude = list,
                None => problems.push("extend-exclude: expected a list of globs".into()),
            }
        }
        if let Some(file) = get("baseline", "baseline") {
            match file.as_str() {
                Some(f) => self.baseline = Some(path_in(f)),
                None => problems.push("baseline: expected a path".into()),
            }
        }
        if let Some(inputs) = get("exampleInputs", "example-inputs").and_then(Json::as_object) {
            for (class, spec) in inputs {
                match parse_inputs(spec) {
                    Ok(list) => {
                        self.example_inputs.insert(class.clone(), list);
                    }
                    Err(e) => problems.push(format!("exampleInputs.{class}: {e}")),
                }
            }
        }
        if let Some(ms) = get("debounceMs", "debounce-ms").and_then(Json::as_u64) {
            self.debounce_ms = ms;
        }
        if let Some(strict) = get("strict", "strict") {
            match strict.as_bool() {
                Some(b) => self.strict = b,
                None => problems.push("strict: expected true or false".into()),
            }
        }
        // `{"inlayHints": {"shapes": false}}` (a client's nested settings, pyproject's
        // `inlay-hints = { shapes = false }`) or the flat `"inlayHints.shapes": false`.
        let shapes = get("inlayHints", "inlay-hints")
            .and_then(|h| h.get("shapes"))
            .or_else(|| get("inlayHints.shapes", "inlay-hints.shapes"))
            .filter(|x| !x.is_null());
        if let Some(shapes) = shapes {
            match shapes.as_bool() {
                Some(b) => self.inlay_hint_shapes = b,
                None => problems.push("inlayHints.shapes: expected true or false".into()),
            }
        }
        if let Some(t) = get("testHooks", "test-hooks").and_then(Json::as_bool) {
            self.test_hooks = t;
        }
        if let Some(v) = get("targetVersion", "target-version") {
            match v.as_str().map(str::parse::<TorchVersion>) {
                Some(Ok(version)) => self.target_version = Some(version),
                Some(Err(e)) => problems.push(format!("target-version: {e}")),
                None => {
                    problems.push("target-version: expected a string like \"torch==2.8\"".into())
                }
            }
        }
        problems
    }

    /// `[tool.staticfx]` of the nearest pyproject.toml at or above `start` that has one.
    pub fn merge_pyproject(&mut self, start: &Path) -> Vec<String> {
        let start = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
        let mut dir = if start.is_dir() {
            Some(start.as_path())
        } else {
            start.parent()
        };
        while let Some(d) = dir {
            let candidate = d.join("pyproject.toml");
            if candidate.is_file() {
                let shown = candidate.display();
                let text = match std::fs::read_to_string(&candidate) {
                    Ok(t) => t,
                    Err(e) => return vec![format!("{shown}: {e}")],
                };
                let parsed: toml::Value = match toml::from_str(&text) {
                    Ok(v) => v,
                    Err(e) => return vec![format!("{shown}: {e}")],
                };
                if let Some(section) = parsed.get("tool").and_then(|t| t.get("staticfx")) {
                    self.config_dir = Some(d.to_path_buf());
                    return match serde_json::to_value(section) {
                        Ok(json) => self
                            .merge(&json, Some(d))
                            .into_iter()
                            .map(|p| format!("{shown}: [tool.staticfx]: {p}"))
                            .collect(),
                        Err(e) => vec![format!("{shown}: [tool.staticfx]: {e}")],
                    };
                }
            }
            dir = d.parent();
        }
        vec![]
    }
}

fn code_list(v: &Json) -> Result<Vec<String>, String> {
    string_list(v).ok_or_else(|| "expected a list of codes or code prefixes".to_string())
}

fn string_list(v: &Json) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|c| c.as_str().map(str::to_string))
        .collect()
}

/// One class's inputs by argument name, the same in `[tool.staticfx] example-inputs` and the
/// editor's `exampleInputs`:
/// - a string is read as `--input NAME=VALUE` reads VALUE: the shape shorthand (`"2x16:i64"`)
///   or a Python expression (`"False"`, `"[(1, 4, 4)]"`, `"torch.randn(2, 8)"`; a Python str
///   is quoted inside: `"'mode'"`);
/// - a list of integers (`[1, 784]`) is a shape, or the Python list for a parameter that
///   takes a Python value (the rule of `traced::InputSpec`); an integer is likewise a 1-D
///   shape or the int;
/// - a boolean, a float, null and any other list are the Python value;
/// - `{shape = [2, 16], dtype = "int64"}` is a tensor; any other table is a Python dict.
fn parse_inputs(spec: &Json) -> Result<Vec<InputSpec>, String> {
    let obj = spec
        .as_object()
        .ok_or("expected a table of argument name to input")?;
    let mut out = Vec::new();
    for (name, v) in obj {
        let input = match v {
            Json::String(s) => InputSpec::parse_value(name, s.trim())?,
            Json::Object(o) if o.contains_key("shape") => {
                let dims = o
                    .get("shape")
                    .and_then(Json::as_array)
                    .and_then(|a| integers(a))
                    .ok_or_else(|| format!("input `{name}`: `shape` must be a list of integers"))?;
                let dtype = match o.get("dtype").and_then(Json::as_str) {
                    Some(d) => DType::parse(d)
                        .ok_or_else(|| format!("input `{name}`: unknown dtype `{d}`"))?,
                    None => DType::Float32,
                };
                InputSpec::tensor(name.clone(), dims, dtype)
            }
            other => {
                let python = python_literal(other)
                    .ok_or_else(|| format!("input `{name}`: a number that Python cannot spell"))?;
                let mut input = InputSpec::parse_value(name, &python)?;
                // A list of sizes has always been a shape; it reads both ways.
                input.tensor = match other {
                    Json::Array(a) => {
                        integers(a)
                            .filter(|d| d.iter().all(|&d| d >= 0))
                            .map(|shape| crate::traced::TensorSpec {
                                shape,
                                dtype: DType::Float32,
                            })
                    }
                    _ => input.tensor,
                };
                input
            }
        };
        out.push(input);
    }
    Ok(out)
}

fn integers(a: &[Json]) -> Option<Vec<i64>> {
    a.iter().map(Json::as_i64).collect()
}

/// A JSON (or TOML) value as the Python expression of the same value. None for a float
/// Python has no literal for (TOML's `inf`, `nan`).
fn python_literal(v: &Json) -> Option<String> {
    Some(match v {
        Json::Null => "None".into(),
        Json::Bool(true) => "True".into(),
        Json::Bool(false) => "False".into(),
        Json::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(x)) if x.is_finite() => format!("{x:?}"),
            _ => return None,
        },
        // Debug quoting escapes as Python's does for the characters that need it.
        Json::String(s) => format!("{s:?}"),
        Json::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(python_literal)
                .collect::<Option<Vec<_>>>()?
                .join(", ")
        ),
        Json::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| Some(format!("{k:?}: {}", python_literal(v)?)))
                .collect::<Option<Vec<_>>>()?
                .join(", ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The editor's `exampleInputs` (JSON) and pyproject's TOML map to the values `--input`
    /// reads: booleans, floats, null and tables are Python; an integer and a list of integers
    /// read both ways; a `{shape, dtype}` table is a tensor; strings go through the parser.
    #[test]
    fn example_input_values_map_to_python() {
        let inputs = parse_inputs(&serde_json::json!({
            "flag": false,
            "scale": 0.5,
            "mask": null,
            "steps": 3,
            "x": [1, 784],
            "img_shapes": [[1, 4, 4]],
            "kw": {"scale": 1.0, "mode": "fast"},
            "ids": {"shape": [2, 16], "dtype": "int64"},
            "cond": "{'text_embeds': torch.randn(2, 8)}",
        }))
        .unwrap();
        let by = |n: &str| inputs.iter().find(|i| i.name == n).unwrap().clone();
        let py = |n: &str| by(n).python;
        let shape = |n: &str| by(n).tensor.map(|t| t.shape);
        assert_eq!(py("flag").as_deref(), Some("False"));
        assert_eq!(shape("flag"), None);
        assert_eq!(py("scale").as_deref(), Some("0.5"));
        assert_eq!(py("mask").as_deref(), Some("None"));
        assert_eq!(
            (py("steps").as_deref(), shape("steps")),
            (Some("3"), Some(vec![3]))
        );
        assert_eq!(
            (py("x").as_deref(), shape("x")),
            (Some("[1, 784]"), Some(vec![1, 784]))
        );
        assert_eq!(py("img_shapes").as_deref(), Some("[[1, 4, 4]]"));
        assert_eq!(shape("img_shapes"), None);
        assert_eq!(
            py("kw").as_deref(),
            Some("{\"scale\": 1.0, \"mode\": \"fast\"}")
        );
        assert_eq!(by("ids").tensor.unwrap().dtype, DType::Int64);
        assert_eq!(by("ids").python, None);
        assert_eq!(
            py("cond").as_deref(),
            Some("{'text_embeds': torch.randn(2, 8)}")
        );
        let bad = parse_inputs(&serde_json::json!({"x": "torch.randn(2,"})).unwrap_err();
        assert!(bad.starts_with("input `x`: "), "{bad}");
        let bad = parse_inputs(&serde_json::json!({"x": {"shape": [2, "a"]}})).unwrap_err();
        assert_eq!(bad, "input `x`: `shape` must be a list of integers");
    }

    #[test]
    fn client_and_pyproject_spellings() {
        let mut c = Settings::default();
        assert!(c.merge(&serde_json::json!({"exampleInputs": {"SimpleNet": {"x": [1, 784]}}, "debounceMs": 0}), None).is_empty());
        assert_eq!(
            c.example_inputs["SimpleNet"][0]
                .tensor
                .as_ref()
                .unwrap()
                .shape,
            vec![1, 784]
        );
        assert_eq!(c.debounce_ms, 0);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[tool.staticfx]\nexample-inputs = { \"Enc\" = { ids = \"2x16:i64\" } }\n",
        )
        .unwrap();
        assert!(c.merge_pyproject(dir.path()).is_empty());
        assert_eq!(
            c.example_inputs["Enc"][0].tensor.as_ref().unwrap().dtype,
            DType::Int64
        );
    }

    #[test]
    fn select_ignore_and_root_from_pyproject_then_flags() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[tool.staticfx]\nselect = [\"FX1\"]\nignore = [\"FX105\"]\nroot = \"src\"\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("pkg")).unwrap();
        let (mut s, problems) = Settings::discover(&dir.path().join("pkg"));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            s.root,
            Some(std::path::absolute(dir.path()).unwrap().join("src"))
        );
        let f = s.filter();
        assert!(f.keeps("FX101") && !f.keeps("FX105") && !f.keeps("FX902"));
        s.apply_flags(&["ALL".into()], &["FX101".into()], None);
        let f = s.filter();
        assert!(f.keeps("FX902") && !f.keeps("FX101") && !f.keeps("FX105"));
    }

    #[test]
    fn python_setting_relative_to_its_layer_and_empty_means_discover() {
        let mut s = Settings::default();
        let base = Path::new("/ws");
        assert!(s
            .merge(
                &serde_json::json!({"staticfx": {"python": ".venv"}}),
                Some(base)
            )
            .is_empty());
        assert_eq!(s.python.as_deref(), Some(Path::new("/ws/.venv")));
        // A null keeps the layer below; VS Code's empty default means "discover".
        assert!(s
            .merge(&serde_json::json!({"python": null}), Some(base))
            .is_empty());
        assert_eq!(s.python.as_deref(), Some(Path::new("/ws/.venv")));
        assert!(s
            .merge(&serde_json::json!({"python": ""}), Some(base))
            .is_empty());
        assert_eq!(s.python, None);
        assert_eq!(s.merge(&serde_json::json!({"python": 3}), None).len(), 1);
    }

    #[test]
    fn wrong_types_are_reported() {
        let mut s = Settings::default();
        let problems = s.merge(&serde_json::json!({"select": "FX1", "ignore": [3]}), None);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(s.select, None);
        assert!(s
            .merge(&serde_json::json!({"select": ["FX1"]}), None)
            .is_empty());
        assert!(s
            .merge(&serde_json::json!({"select": null, "root": null}), None)
            .is_empty());
        assert_eq!(s.select, Some(vec!["FX1".to_string()]));
    }

    #[test]
    fn inlay_hint_shapes_nested_flat_and_pyproject() {
        let mut s = Settings::default();
        assert!(s.inlay_hints().shapes);
        assert!(s
            .merge(
                &serde_json::json!({"staticfx": {"inlayHints": {"shapes": false}}}),
                None
            )
            .is_empty());
        assert!(!s.inlay_hints().shapes);
        // An unset client value keeps the layer below.
        assert!(s
            .merge(&serde_json::json!({"inlayHints": {"shapes": null}}), None)
            .is_empty());
        assert!(!s.inlay_hints().shapes);
        assert!(s
            .merge(&serde_json::json!({"inlayHints.shapes": true}), None)
            .is_empty());
        assert!(s.inlay_hints().shapes);
        assert_eq!(
            s.merge(&serde_json::json!({"inlayHints": {"shapes": "no"}}), None)
                .len(),
            1
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[tool.staticfx]\ninlay-hints = { shapes = false }\n",
        )
        .unwrap();
        let (s, problems) = Settings::discover(dir.path());
        assert!(problems.is_empty(), "{problems:?}");
        assert!(!s.inlay_hints().shapes);
    }

    #[test]
    fn select_prefixes() {
        assert!(matches_any("FX101", &["FX1".into()]));
        assert!(matches_any("FX903", &["ALL".into()]));
        assert!(!matches_any("FX903", &["FX1".into()]));
    }
}
