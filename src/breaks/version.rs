//! Which torch the findings describe. Dynamo's graph breaks move between releases: the same
//! `requires_grad_()` is GB0125 on torch 2.8 and GB8985 on 2.15, `copy.deepcopy` of a tensor is
//! GB0179 on 2.8 and GB4198 on 2.15. Rules ask the [`Target`] for the id of a [`Behaviour`]
//! instead of naming an id; the target picks it from the user's own
//! `torch/_dynamo/graph_break_registry.json` when one was found, and otherwise from what the
//! labelled corpora (`tests/expected/breaks_generated/labels-torch*.json`) showed for the
//! nearest labelled version at or below the target.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

/// A torch release, `major.minor` (patch releases do not change Dynamo's graph breaks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TorchVersion {
    pub major: u32,
    pub minor: u32,
}

impl TorchVersion {
    pub const fn new(major: u32, minor: u32) -> Self {
        TorchVersion { major, minor }
    }

    pub fn at_least(self, major: u32, minor: u32) -> bool {
        self >= TorchVersion::new(major, minor)
    }
}

/// The version the rules were first written against, assumed when none is given or found.
pub const DEFAULT_VERSION: TorchVersion = TorchVersion::new(2, 15);

/// The versions whose Dynamo labelled the generated corpus.
pub const LABELLED_VERSIONS: &[TorchVersion] = &[TorchVersion::new(2, 8), DEFAULT_VERSION];

impl fmt::Display for TorchVersion {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for TorchVersion {
    type Err = String;

    /// `2.15`, `2.15.0`, `2.15.0+cu132`, `2.8.0a0+git1234`, `torch==2.8`.
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let t = t
            .strip_prefix("torch")
            .map(|r| r.trim_start().trim_start_matches("==").trim())
            .unwrap_or(t);
        let bad = || format!("`{s}` is not a torch version (expected e.g. `torch==2.15` or `2.8`)");
        let mut parts = t.split('.');
        let major = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        let minor_part = parts.next().ok_or_else(bad)?;
        let digits: String = minor_part
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        let minor = digits.parse().map_err(|_| bad())?;
        Ok(TorchVersion { major, minor })
    }
}

/// Something Dynamo does that a rule reports, whose id (or whether it breaks at all) depends
/// on the torch version. Found by labelling the generated corpus with torch 2.8 and 2.15.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Behaviour {
    /// `copy.deepcopy(t)` of a tensor.
    DeepcopyTensor,
    /// `copy.deepcopy(v)` of a plain Python value (a dict, a list): torch 2.8 breaks on any
    /// deepcopy, 2.15 only on tensors.
    DeepcopyValue,
    /// `t.requires_grad_()` on a tensor that is not a graph input. torch 2.8 refuses the
    /// change (GB0125); 2.15 traces it and breaks only when the tensor leaks (GB8985).
    RequiresGradIntermediate,
    /// `time.time()` and the other clocks: 2.15 has its own id, 2.8 calls them skipped
    /// functions.
    TimeCall,
    /// A `class` statement in forward.
    ClassStatement,
    /// `logging.info(...)` on the root logger.
    RootLogging,
    /// `.tolist()` on an integer tensor: 2.15 breaks on `aten._local_scalar_dense`, 2.8
    /// traces it.
    IntegerTolist,
    /// `bool(t)` of a tensor: the `Tensor.item()` break on 2.15, a builtin Dynamo fails to
    /// trace on 2.8.
    BoolOfTensor,
    /// `self.b = self.b.to(x.dtype)` with `b` made by `nn.Buffer`: 2.15 fails in
    /// `nn.Module.__setattr__` on the tensor's `persistent` flag, 2.8 traces it.
    BufferReassign,
    /// `torch._check_tensor_all(cond)` on a traced tensor: the `Tensor.item()` break on 2.15,
    /// a data-dependent operator (`aten._local_scalar_dense`) on 2.8.
    TensorCheck,
    /// A tensor as a slice bound (`h[:, :n]`): the `Tensor.item()` break on 2.15, its own
    /// "dynamic slicing" id on 2.8.
    TensorSliceBound,
    /// `copy.copy(t)` of a tensor: 2.15 breaks inside it on a torch function that returns no
    /// tensor; 2.8 skips `copy.copy` whatever it copies.
    CopyOfTensor,
    /// `copy.copy(v)` of a value that is neither a tensor nor a builtin container (an int, a
    /// tuple, a config object): 2.15 traces it, 2.8 skips it.
    CopyOfValue,
    /// A call of an `nn.LSTM` / `nn.GRU` / `nn.RNN` submodule: 2.15 delays the break to the
    /// call ("Unsupported function call (delayed)"); 2.8 refuses to wrap the module and skips
    /// the frame. Neither id is distinctive: 2.15's registry still lists 2.8's.
    RecurrentModule,
    /// A comprehension's frame, met on its own, given a list or dict iterator (Python 3.11
    /// and older): 2.15 has no model of the C `__next__` (GB9493), 2.8 no method to call
    /// (GB0156).
    ComprehensionIterator,
}

const ALL: &[Behaviour] = &[
    Behaviour::DeepcopyTensor,
    Behaviour::DeepcopyValue,
    Behaviour::RequiresGradIntermediate,
    Behaviour::TimeCall,
    Behaviour::ClassStatement,
    Behaviour::RootLogging,
    Behaviour::IntegerTolist,
    Behaviour::BoolOfTensor,
    Behaviour::BufferReassign,
    Behaviour::TensorCheck,
    Behaviour::TensorSliceBound,
    Behaviour::CopyOfTensor,
    Behaviour::CopyOfValue,
    Behaviour::RecurrentModule,
    Behaviour::ComprehensionIterator,
];

/// One id a behaviour has had: its `gb_type` wording and the first labelled version that
/// reports it. An empty id: no graph break.
struct Candidate {
    since: TorchVersion,
    gb_id: &'static str,
    gb_type: &'static str,
    /// Whether finding this gb_type in a registry proves the behaviour: true for an id of its
    /// own, false for a generic one (GB0007 "function marked as skipped") that every registry
    /// has.
    distinctive: bool,
}

const fn c(
    since: (u32, u32),
    gb_id: &'static str,
    gb_type: &'static str,
    distinctive: bool,
) -> Candidate {
    Candidate {
        since: TorchVersion::new(since.0, since.1),
        gb_id,
        gb_type,
        distinctive,
    }
}

const NO_BREAK: &str = "";

const DEEPCOPY_TENSOR: &[Candidate] = &[
    c(
        (2, 15),
        "GB4198",
        "Attempted to copy.deepcopy a tensor",
        true,
    ),
    c((2, 0), "GB0179", "copy.deepcopy()", true),
];
const DEEPCOPY_VALUE: &[Candidate] = &[
    c((2, 15), NO_BREAK, "", false),
    c((2, 0), "GB0179", "copy.deepcopy()", false),
];
const REQUIRES_GRAD_INTERMEDIATE: &[Candidate] = &[
    c(
        (2, 15),
        "GB8985",
        "requires_grad_() intermediate leaked as output",
        true,
    ),
    c(
        (2, 0),
        "GB0125",
        "Unsupported Tensor.requires_grad_() call",
        false,
    ),
];
const TIME_CALL: &[Candidate] = &[
    c((2, 15), "GB9193", "Call to a time function", true),
    c(
        (2, 0),
        "GB0007",
        "Attempted to call function marked as skipped",
        false,
    ),
];
const CLASS_STATEMENT: &[Candidate] = &[
    c((2, 15), "GB8977", "Invalid call to __build_class__", true),
    c(
        (2, 0),
        "GB0075",
        "LOAD_BUILD_CLASS bytecode not supported",
        true,
    ),
];
const ROOT_LOGGING: &[Candidate] = &[
    c((2, 15), "GB4841", "Unsupported python_type() call", false),
    c((2, 0), "GB0156", "Unsupported method call", false),
];
const INTEGER_TOLIST: &[Candidate] = &[
    c((2, 15), "GB0033", "Data dependent operator", false),
    c((2, 0), NO_BREAK, "", false),
];

const BOOL_OF_TENSOR: &[Candidate] = &[
    c(
        (2, 15),
        "GB0124",
        "Unsupported Tensor.item() call with capture_scalar_outputs=False",
        false,
    ),
    c((2, 0), "GB0059", "Failed to trace builtin operator", false),
];

const BUFFER_REASSIGN: &[Candidate] = &[
    c((2, 15), "GB4841", "Unsupported python_type() call", false),
    c((2, 0), NO_BREAK, "", false),
];

const TENSOR_CHECK: &[Candidate] = &[
    c(
        (2, 15),
        "GB0124",
        "Unsupported Tensor.item() call with capture_scalar_outputs=False",
        false,
    ),
    c((2, 0), "GB0033", "Data dependent operator", false),
];

const TENSOR_SLICE_BOUND: &[Candidate] = &[
    c(
        (2, 15),
        "GB0124",
        "Unsupported Tensor.item() call with capture_scalar_outputs=False",
        false,
    ),
    c(
        (2, 0),
        "GB0038",
        "Dynamic slicing with Tensor arguments",
        true,
    ),
];

const COPY_OF_TENSOR: &[Candidate] = &[
    c((2, 15), "GB0208", "torch.* op returned non-Tensor", false),
    c(
        (2, 0),
        "GB0007",
        "Attempted to call function marked as skipped",
        false,
    ),
];
const COPY_OF_VALUE: &[Candidate] = &[
    c((2, 15), NO_BREAK, "", false),
    c(
        (2, 0),
        "GB0007",
        "Attempted to call function marked as skipped",
        false,
    ),
];

const RECURRENT_MODULE: &[Candidate] = &[
    c(
        (2, 15),
        "GB0148",
        "Unsupported function call (delayed)",
        false,
    ),
    c(
        (2, 0),
        "GB0014",
        "Attempted to wrap RNN, GRU, or LSTM",
        false,
    ),
];

const COMPREHENSION_ITERATOR: &[Candidate] = &[
    c(
        (2, 15),
        "GB9493",
        "C-implemented special method without VariableTracker model",
        true,
    ),
    c((2, 0), "GB0156", "Unsupported method call", false),
];

/// Newest first.
fn candidates(b: Behaviour) -> &'static [Candidate] {
    match b {
        Behaviour::DeepcopyTensor => DEEPCOPY_TENSOR,
        Behaviour::DeepcopyValue => DEEPCOPY_VALUE,
        Behaviour::RequiresGradIntermediate => REQUIRES_GRAD_INTERMEDIATE,
        Behaviour::TimeCall => TIME_CALL,
        Behaviour::ClassStatement => CLASS_STATEMENT,
        Behaviour::RootLogging => ROOT_LOGGING,
        Behaviour::IntegerTolist => INTEGER_TOLIST,
        Behaviour::BoolOfTensor => BOOL_OF_TENSOR,
        Behaviour::BufferReassign => BUFFER_REASSIGN,
        Behaviour::TensorCheck => TENSOR_CHECK,
        Behaviour::TensorSliceBound => TENSOR_SLICE_BOUND,
        Behaviour::CopyOfTensor => COPY_OF_TENSOR,
        Behaviour::CopyOfValue => COPY_OF_VALUE,
        Behaviour::RecurrentModule => RECURRENT_MODULE,
        Behaviour::ComprehensionIterator => COMPREHENSION_ITERATOR,
    }
}

/// Older ids' `gb_type`s, for findings on a version that still uses them.
pub fn older_gb_type(id: &str) -> Option<&'static str> {
    ALL.iter()
        .flat_map(|&b| candidates(b))
        .find(|c| !c.gb_id.is_empty() && c.gb_id == id)
        .map(|c| c.gb_type)
}

/// A `graph_break_registry.json`: gb id → its gb_types, current one first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Registry {
    pub ids: HashMap<String, Vec<String>>,
}

impl Registry {
    pub fn parse(json: &str) -> Result<Registry, String> {
        let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let obj = v
            .as_object()
            .ok_or("the registry is not a JSON object of gb ids")?;
        let ids = obj
            .iter()
            .map(|(id, entries)| {
                let types = entries
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|e| e["Gb_type"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                (id.clone(), types)
            })
            .collect();
        Ok(Registry { ids })
    }

    fn has(&self, id: &str, gb_type: &str) -> bool {
        self.ids
            .get(id)
            .is_some_and(|types| types.iter().any(|t| t == gb_type))
    }
}

/// The torch installed in the user's environment.
#[derive(Clone, Debug, PartialEq)]
pub struct TorchInfo {
    /// As the package says it (`2.15.0+cu132`).
    pub version_text: String,
    pub version: TorchVersion,
    /// None when the installed torch has no `torch/_dynamo/graph_break_registry.json` (it
    /// appeared in torch 2.8) or it cannot be read.
    pub registry: Option<Registry>,
    pub location: PathBuf,
}

/// Finds torch in the first of `site_packages` that has it: its version from
/// `torch/version.py` (or, for an install without it, the `torch-*.dist-info/METADATA`), and its
/// graph-break registry.
pub fn find_torch(site_packages: &[PathBuf]) -> Option<TorchInfo> {
    site_packages.iter().find_map(|dir| torch_in(dir))
}

fn torch_in(dir: &Path) -> Option<TorchInfo> {
    let pkg = dir.join("torch");
    let version_text = std::fs::read_to_string(pkg.join("version.py"))
        .ok()
        .and_then(|t| version_py(&t))
        .or_else(|| dist_info_version(dir))?;
    let version = version_text.parse().ok()?;
    let registry = std::fs::read_to_string(pkg.join("_dynamo/graph_break_registry.json"))
        .ok()
        .and_then(|t| Registry::parse(&t).ok());
    Some(TorchInfo {
        version_text,
        version,
        registry,
        location: pkg,
    })
}

/// `__version__ = '2.15.0+cu132'` in torch/version.py.
fn version_py(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("__version__")?;
        let rest = rest.trim_start().strip_prefix('=')?.trim();
        let q = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
        let inner = &rest[1..];
        Some(inner[..inner.find(q)?].to_string())
    })
}

fn dist_info_version(dir: &Path) -> Option<String> {
    let mut metas: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("torch-") && n.ends_with(".dist-info"))
        })
        .collect();
    metas.sort();
    metas.iter().find_map(|m| {
        let text = std::fs::read_to_string(m.join("METADATA")).ok()?;
        text.lines()
            .take_while(|l| !l.is_empty())
            .find_map(|l| l.strip_prefix("Version:").map(|v| v.trim().to_string()))
    })
}

/// Where the target version came from, for the note that says which one was assumed.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// `--target-version` or `target-version` in `[tool.staticfx]`.
    Configured,
    /// The torch installed in the environment (its location).
    Installed(PathBuf),
    /// Nothing given or found: [`DEFAULT_VERSION`].
    Assumed,
}

/// The Dynamo the findings describe.
#[derive(Clone, Debug)]
pub struct Target {
    pub version: TorchVersion,
    pub registry: Option<Arc<Registry>>,
    pub source: Source,
}

impl Default for Target {
    fn default() -> Self {
        Target {
            version: DEFAULT_VERSION,
            registry: None,
            source: Source::Assumed,
        }
    }
}

impl Target {
    pub fn configured(version: TorchVersion) -> Self {
        Target {
            version,
            registry: None,
            source: Source::Configured,
        }
    }

    pub fn installed(info: &TorchInfo) -> Self {
        Target {
            version: info.version,
            registry: info.registry.clone().map(Arc::new),
            source: Source::Installed(info.location.clone()),
        }
    }

    /// A configured version wins over the installed torch; with neither, the default.
    pub fn resolve(configured: Option<TorchVersion>, installed: Option<&TorchInfo>) -> Self {
        match (configured, installed) {
            (Some(v), Some(info)) if info.version == v => Target {
                source: Source::Configured,
                ..Target::installed(info)
            },
            (Some(v), _) => Target::configured(v),
            (None, Some(info)) => Target::installed(info),
            (None, None) => Target::default(),
        }
    }

    /// One line for stderr / the server log saying which torch the findings describe.
    pub fn note(&self) -> String {
        match &self.source {
            Source::Configured => format!("graph breaks as torch {} reports them (configured target version)", self.version),
            Source::Installed(p) => format!("graph breaks as torch {} reports them (installed at {})", self.version, p.display()),
            Source::Assumed => format!("no torch version given or found; assuming torch {} (set --target-version torch==2.x or `target-version` in [tool.staticfx])", self.version),
        }
    }

    /// The gb id `b` has on this target, empty when it does not break: the newest candidate
    /// labelled at or below the version, unless the target's registry holds a distinctive
    /// candidate's gb_type: then the newest such (a registry keeps old ids, so only the newest
    /// one present says what the release reports; this places a release between two labelled
    /// ones).
    pub fn gb_id(&self, b: Behaviour) -> &'static str {
        let cands = candidates(b);
        let Some(chosen) = cands
            .iter()
            .find(|c| self.version >= c.since)
            .or(cands.last())
        else {
            return NO_BREAK;
        };
        if let Some(reg) = &self.registry {
            let has = |c: &Candidate| !c.gb_id.is_empty() && reg.has(c.gb_id, c.gb_type);
            if let Some(c) = cands.iter().find(|c| c.distinctive && has(c)) {
                return c.gb_id;
            }
        }
        chosen.gb_id
    }

    pub fn at_least(&self, major: u32, minor: u32) -> bool {
        self.version.at_least(major, minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions() {
        for (s, v) in [
            ("2.15", (2, 15)),
            ("2.15.0+cu132", (2, 15)),
            ("torch==2.8", (2, 8)),
            ("torch == 2.8.0", (2, 8)),
            ("2.9.0a0+git12ab", (2, 9)),
        ] {
            assert_eq!(
                s.parse::<TorchVersion>(),
                Ok(TorchVersion::new(v.0, v.1)),
                "{s}"
            );
        }
        for s in ["", "torch", "2", "torch==x.y", "numpy==2.1"] {
            assert!(s.parse::<TorchVersion>().is_err(), "{s}");
        }
    }

    #[test]
    fn ids_follow_the_version_and_the_registry() {
        let old = Target::configured(TorchVersion::new(2, 8));
        let new = Target::configured(TorchVersion::new(2, 15));
        assert_eq!(old.gb_id(Behaviour::DeepcopyTensor), "GB0179");
        assert_eq!(new.gb_id(Behaviour::DeepcopyTensor), "GB4198");
        assert_eq!(old.gb_id(Behaviour::RequiresGradIntermediate), "GB0125");
        assert_eq!(new.gb_id(Behaviour::RequiresGradIntermediate), "GB8985");
        // a 2.12 whose registry already has GB4198 uses it; without a registry it cannot know
        let reg = Registry::parse(
            r#"{"GB4198": [{"Gb_type": "Attempted to copy.deepcopy a tensor"}], "GB0179": [{"Gb_type": "copy.deepcopy()"}]}"#,
        )
        .unwrap();
        let mid = Target {
            registry: Some(Arc::new(reg)),
            ..Target::configured(TorchVersion::new(2, 12))
        };
        assert_eq!(mid.gb_id(Behaviour::DeepcopyTensor), "GB4198");
        assert_eq!(mid.gb_id(Behaviour::RequiresGradIntermediate), "GB0125");
    }

    #[test]
    fn finds_torch_from_version_py_or_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::create_dir_all(&empty).unwrap();
        std::fs::create_dir_all(a.join("torch/_dynamo")).unwrap();
        std::fs::write(
            a.join("torch/version.py"),
            "from typing import Optional\n__version__ = '2.8.0+cu128'\ndebug = False\n",
        )
        .unwrap();
        std::fs::write(
            a.join("torch/_dynamo/graph_break_registry.json"),
            r#"{"GB0179": [{"Gb_type": "copy.deepcopy()", "Context": ""}]}"#,
        )
        .unwrap();
        std::fs::create_dir_all(b.join("torch")).unwrap();
        std::fs::create_dir_all(b.join("torch-2.15.0.dist-info")).unwrap();
        std::fs::write(
            b.join("torch-2.15.0.dist-info/METADATA"),
            "Metadata-Version: 2.1\nName: torch\nVersion: 2.15.0\n\nVersion: 9.9\n",
        )
        .unwrap();

        assert_eq!(find_torch(std::slice::from_ref(&empty)), None);
        let info = find_torch(&[empty.clone(), a.clone(), b.clone()]).unwrap();
        assert_eq!(info.version_text, "2.8.0+cu128");
        assert_eq!(info.version, TorchVersion::new(2, 8));
        let reg = info.registry.as_ref().unwrap();
        assert_eq!(reg.ids["GB0179"], vec!["copy.deepcopy()".to_string()]);
        let t = Target::resolve(None, Some(&info));
        assert_eq!(t.gb_id(Behaviour::DeepcopyTensor), "GB0179");
        assert!(t.note().contains("torch 2.8"), "{}", t.note());

        let info = find_torch(&[b]).unwrap();
        assert_eq!(
            (info.version_text.as_str(), &info.registry),
            ("2.15.0", &None)
        );
        let t = Target::resolve(Some(TorchVersion::new(2, 8)), Some(&info));
        assert_eq!(
            (t.version, t.source),
            (TorchVersion::new(2, 8), Source::Configured)
        );
        let t = Target::resolve(None, None);
        assert!(t.note().contains("assuming torch 2.15"), "{}", t.note());
    }

    /// The release findings assume without a target is the one the evaluator models
    /// (`importlib.metadata.version("torch")` in library code answers with it).
    #[test]
    fn the_default_target_is_the_modelled_torch() {
        let modelled: TorchVersion = crate::eval::MODELLED_TORCH_VERSION
            .rsplit_once('.')
            .unwrap()
            .0
            .parse()
            .unwrap();
        assert_eq!(modelled, DEFAULT_VERSION);
    }
}
