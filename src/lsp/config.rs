//! Settings: `[tool.staticfx]` in the workspace's pyproject.toml, overridden by the client's
//! `initializationOptions` and `workspace/configuration` (section `staticfx`).

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value as Json;

use crate::analysis::InputSpec;
use crate::shapes::DType;

#[derive(Clone, Debug)]
pub struct Config {
    /// Forward inputs per class name, for concrete shapes in hover and diagnostics.
    pub example_inputs: HashMap<String, Vec<InputSpec>>,
    /// Quiet time after an edit before analysing; edits during an analysis coalesce anyway.
    pub debounce_ms: u64,
    pub test_hooks: bool,
    /// `staticfx.python` / `[tool.staticfx] python`: the interpreter or venv directory imports
    /// outside the workspace resolve through (relative to the workspace root); None discovers it.
    pub python: Option<std::path::PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            example_inputs: HashMap::new(),
            debounce_ms: 15,
            test_hooks: false,
            python: None,
        }
    }
}

impl Config {
    /// Merges settings in client spelling (`exampleInputs`, `debounceMs`) or pyproject
    /// spelling (`example-inputs`); keys absent from `v` keep their value.
    pub fn merge(&mut self, v: &Json) -> Vec<String> {
        let mut problems = Vec::new();
        let Some(obj) = v.as_object() else {
            return problems;
        };
        let v = obj.get("staticfx").filter(|s| s.is_object()).unwrap_or(v);
        let get = |a: &str, b: &str| v.get(a).or_else(|| v.get(b));
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
        if let Some(t) = get("testHooks", "test-hooks").and_then(Json::as_bool) {
            self.test_hooks = t;
        }
        match get("python", "python") {
            Some(Json::String(p)) => {
                self.python = (!p.trim().is_empty()).then(|| p.trim().into());
            }
            Some(Json::Null) | None => {}
            Some(_) => problems.push("python: expected a path to an interpreter or a venv".into()),
        }
        problems
    }

    /// `[tool.staticfx]` of `root/pyproject.toml`, if present.
    pub fn merge_pyproject(&mut self, root: &Path) -> Vec<String> {
        let Ok(text) = std::fs::read_to_string(root.join("pyproject.toml")) else {
            return vec![];
        };
        let parsed: toml::Value = match toml::from_str(&text) {
            Ok(v) => v,
            Err(e) => return vec![format!("pyproject.toml: {e}")],
        };
        let Some(section) = parsed.get("tool").and_then(|t| t.get("staticfx")) else {
            return vec![];
        };
        match serde_json::to_value(section) {
            Ok(json) => self.merge(&json),
            Err(e) => vec![format!("[tool.staticfx]: {e}")],
        }
    }
}

/// `{"x": [1, 784]}`, `{"ids": "2x16:i64"}` or `{"ids": {"shape": [2, 16], "dtype": "int64"}}`.
fn parse_inputs(spec: &Json) -> Result<Vec<InputSpec>, String> {
    let obj = spec
        .as_object()
        .ok_or("expected a table of argument name to shape")?;
    let mut out = Vec::new();
    for (name, v) in obj {
        let dims = |a: &Vec<Json>| {
            a.iter()
                .map(|d| {
                    d.as_i64()
                        .ok_or_else(|| format!("`{name}`: dimensions must be integers"))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let input = match v {
            Json::Array(a) => InputSpec {
                name: name.clone(),
                shape: dims(a)?,
                dtype: DType::Float32,
            },
            Json::String(s) => format!("{name}={s}").parse()?,
            Json::Object(o) => {
                let shape = o
                    .get("shape")
                    .and_then(Json::as_array)
                    .ok_or_else(|| format!("`{name}`: missing `shape`"))?;
                let dtype = match o.get("dtype").and_then(Json::as_str) {
                    Some(d) => {
                        DType::parse(d).ok_or_else(|| format!("`{name}`: unknown dtype `{d}`"))?
                    }
                    None => DType::Float32,
                };
                InputSpec {
                    name: name.clone(),
                    shape: dims(shape)?,
                    dtype,
                }
            }
            _ => return Err(format!("`{name}`: expected a shape list")),
        };
        out.push(input);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_and_pyproject_spellings() {
        let mut c = Config::default();
        assert!(c.merge(&serde_json::json!({"exampleInputs": {"SimpleNet": {"x": [1, 784]}}, "debounceMs": 0})).is_empty());
        assert_eq!(c.example_inputs["SimpleNet"][0].shape, vec![1, 784]);
        assert_eq!(c.debounce_ms, 0);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[tool.staticfx]\nexample-inputs = { \"Enc\" = { ids = \"2x16:i64\" } }\n",
        )
        .unwrap();
        assert!(c.merge_pyproject(dir.path()).is_empty());
        assert_eq!(c.example_inputs["Enc"][0].dtype, DType::Int64);
        assert!(c
            .merge(&serde_json::json!({"staticfx": {"python": ".venv/bin/python"}}))
            .is_empty());
        assert_eq!(c.python.as_deref(), Some(Path::new(".venv/bin/python")));
        // An empty setting (VS Code's default) means "discover".
        assert!(c.merge(&serde_json::json!({"python": ""})).is_empty());
        assert_eq!(c.python, None);
        assert_eq!(c.merge(&serde_json::json!({"python": 3})).len(), 1);
    }
}
