//! Stage 3 data: the catalogue of the torch API the analyser knows, generated from the real torch
//! package by `scripts/catalog/gen_catalog.py` (which verifies every parameter-shape formula
//! against instantiated modules) and embedded at build time.
//!
//! Generated from real torch: leaf `torch.nn` modules (signature, attributes, parameter/buffer
//! shape formulas), functions, aliases. `bind` is the one argument binder (positionals first, then
//! keywords, both is an error) for shape rules and the executor.

pub mod bind;

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct Catalog {
    pub torch_version: String,
    pub modules: HashMap<String, ModuleSpec>,
    #[serde(default)]
    pub functions: HashMap<String, FunctionSpec>,
    #[serde(default)]
    pub aliases: HashMap<String, String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ParamSpec {
    pub name: String,
    pub kind: ParamKind,
    #[serde(default)]
    pub default: serde_json::Value,
    #[serde(default)]
    pub has_default: bool,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    PositionalOnly,
    PositionalOrKeyword,
    VarPositional,
    KeywordOnly,
    VarKeyword,
}

#[derive(Clone, Debug, Deserialize)]
pub struct TensorSpec {
    pub name: String,
    /// Python expressions over the constructor arguments: one per dimension (a leading `*`
    /// splices a tuple), or a single string evaluating to the whole shape.
    pub shape: ShapeExpr,
    #[serde(default)]
    pub when: Option<String>,
    #[serde(default)]
    pub dtype: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum ShapeExpr {
    Dims(Vec<String>),
    Whole(String),
}

#[derive(Clone, Debug, Deserialize)]
pub struct SubmoduleSpec {
    pub name: String,
    pub module: String,
    #[serde(default)]
    pub args: indexmap::IndexMap<String, String>,
    #[serde(default)]
    pub when: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ModuleSpec {
    pub path: String,
    pub signature: Vec<ParamSpec>,
    #[serde(default)]
    pub container: bool,
    #[serde(default)]
    pub attributes: indexmap::IndexMap<String, String>,
    #[serde(default)]
    pub parameters: Vec<TensorSpec>,
    #[serde(default)]
    pub buffers: Vec<TensorSpec>,
    #[serde(default)]
    pub submodules: Vec<SubmoduleSpec>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct FunctionSpec {
    #[serde(default)]
    pub signature: Vec<ParamSpec>,
    #[serde(default)]
    pub returns: Option<String>,
    #[serde(default)]
    pub signature_unknown: bool,
}

static CATALOG_JSON: &str = include_str!("../../catalog/torch_catalog.json");

pub fn get() -> &'static Catalog {
    static C: OnceLock<Catalog> = OnceLock::new();
    C.get_or_init(|| serde_json::from_str(CATALOG_JSON).expect("bundled catalogue is valid JSON"))
}

impl Catalog {
    /// A torch.nn class by its canonical path (`torch.nn.Linear`) or bare name.
    pub fn module(&self, path: &str) -> Option<(&str, &ModuleSpec)> {
        let name = path.rsplit('.').next().unwrap_or(path);
        let (k, spec) = self.modules.get_key_value(name)?;
        (path == name
            || path == spec.path
            || path.starts_with("torch.nn.")
            || path.starts_with("torch.ao.nn."))
        .then_some((k.as_str(), spec))
    }

    /// The canonical path of a function, following aliases.
    pub fn canonical<'a>(&'a self, path: &'a str) -> &'a str {
        self.aliases.get(path).map(String::as_str).unwrap_or(path)
    }

    pub fn function(&self, path: &str) -> Option<&FunctionSpec> {
        self.functions.get(self.canonical(path))
    }

    /// A version string for cache keys: changes whenever the catalogue changes.
    pub fn fingerprint() -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        CATALOG_JSON.hash(&mut h);
        h.finish()
    }
}
