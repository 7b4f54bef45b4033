//! What library code relies on that the evaluator follows as Python and torch do: a
//! `collections.abc.Sequence` subclass iterates through its `__getitem__` until IndexError,
//! a tensor's device is a constant (`x.device.type` is `"cpu"`, no node), and a custom op
//! (`torch.library.custom_op`) is one node shaped by its registered fake.

use serde_json::Value;
use staticfx::analysis::{analyze_file, FileAnalysis, GraphOptions, InputSpec};

mod lazy_package;

const MODEL: &str = r#"from collections.abc import Sequence

import torch
from torch import nn


class Layers(Sequence["int"]):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError("list index out of range")
        return i * 10


def _pair(a, b):
    return torch.zeros(a.size(0), b.size(1))


def _pair_fake(a, b):
    return torch.empty(a.size(0), b.size(1), dtype=a.dtype)


torch.library.custom_op("demo::pair", _pair, mutates_args=(), schema="(Tensor a, Tensor b) -> Tensor")
torch.library.register_fake("demo::pair", _pair_fake)


class M(nn.Module):
    def forward(self, x):
        layers = Layers(3)
        seen = [v for v in layers]
        h = x * 2 if x.device.type == "cpu" else x * 3
        y = torch.ops.demo.pair(h, x.t())
        return y, seen, 20 in layers, layers.index(20), list(reversed(layers))
"#;

/// `M()` of `source` (a file of its own) traced on `input` (`x=2x4`): the analysis and its
/// JSON rendering.
fn trace_m(source: &str, input: &str) -> (FileAnalysis, Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("model.py");
    std::fs::write(&file, source).unwrap();
    let opts = GraphOptions {
        root: Some(dir.path().to_path_buf()),
        entry: Some("M()".into()),
        inputs: vec![input.parse::<InputSpec>().unwrap()],
        ..Default::default()
    };
    let a = analyze_file(&file, &opts).unwrap();
    let json =
        serde_json::from_str(&staticfx::render::json::render(&a.project, &a.graphs)).unwrap();
    (a, json)
}

#[test]
fn sequences_devices_and_custom_ops_follow_python_and_torch() {
    let (a, json) = trace_m(MODEL, "x=4x6");
    assert!(a.graphs[0].error.is_none(), "{:?}", a.graphs[0].error);
    let nodes = json["graphs"][0]["nodes"].as_array().unwrap();
    let calls: Vec<(&str, &Value)> = nodes
        .iter()
        .filter(|n| matches!(n["op"].as_str(), Some("call_function" | "call_method")))
        .map(|n| (n["target"].as_str().unwrap(), &n["shape"]))
        .collect();
    // Only the CPU side of the branch (reading the device leaves no node), and the custom op
    // once, shaped [4, 4] by its fake (`_pair`'s own body is never traced: no `zeros`).
    let targets: Vec<&str> = calls.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        targets,
        ["operator.mul", "t", "torch.ops.demo.pair"],
        "{calls:?}"
    );
    assert_eq!(calls[2].1, &serde_json::json!([4, 4]));
    let output = nodes.iter().find(|n| n["op"] == "output").unwrap();
    let shown = output["args"].to_string();
    for want in ["[0,10,20]", "true", "2", "[20,10,0]"] {
        assert!(shown.contains(want), "{want} not in {shown}");
    }
}

/// A lazy package (transformers' `models/__init__`) stars its submodules under
/// `TYPE_CHECKING`; a name looked up through it is found in the one that binds it, and the
/// submodules whose text cannot bind it are not parsed into the project (with every model
/// package starred, parsing them all kept thousands of trees in the server).
#[test]
fn a_name_found_through_lazy_star_imports_reads_only_the_sources_that_may_bind_it() {
    let dir = tempfile::tempdir().unwrap();
    lazy_package::write(
        dir.path(),
        &[
            ("alpha", "def unrelated():\n    return 1\n"),
            // Its text names the layer only in a comment: read, but it binds nothing of that name.
            ("beta", "# see make_layer in gamma\nVALUE = 2\n"),
            // A star import across a line continuation may bring any name in.
            ("stars", "from .delta import \\\n    *\n"),
            (
                "gamma",
                "from torch import nn\n\n\ndef make_layer(n):\n    return nn.Linear(n, n)\n",
            ),
            ("delta", "X = 1\n"),
        ],
    );
    let file = dir.path().join("model.py");
    std::fs::write(
        &file,
        "from torch import nn\n\nimport pkg\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = pkg.make_layer(4)\n\n    def forward(self, x):\n        return self.fc(x)\n",
    )
    .unwrap();
    let opts = GraphOptions {
        root: Some(dir.path().to_path_buf()),
        entry: Some("M()".into()),
        inputs: vec!["x=2x4".parse::<InputSpec>().unwrap()],
        ..Default::default()
    };
    let a = analyze_file(&file, &opts).unwrap();
    let g = &a.graphs[0];
    let targets: Vec<String> = g.graph.nodes().map(|(_, n)| n.target.clone()).collect();
    assert!(targets.iter().any(|t| t == "fc"), "{targets:?}");
    assert!(g.error.is_none(), "{:?}", g.error);
    let parsed: Vec<String> = (a.project.files().iter())
        .filter_map(|f| f.path.strip_prefix(dir.path()).ok())
        .map(|p| p.display().to_string())
        .collect();
    for read in ["pkg/beta.py", "pkg/stars.py", "pkg/gamma.py"] {
        assert!(parsed.iter().any(|p| p == read), "{read} not in {parsed:?}");
    }
    assert!(!parsed.iter().any(|p| p == "pkg/alpha.py"), "{parsed:?}");
}

/// diffusers' lazy `__init__`: the names it serves are imported under `if TYPE_CHECKING or
/// SLOW_IMPORT:`, some nested in availability checks, while the runtime branch installs a
/// lazy module. As type checkers read it, the names that block imports are the package's.
#[test]
fn names_imported_under_type_checking_or_a_flag_are_the_packages() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    let init = r#"import os
import sys
from typing import TYPE_CHECKING

SLOW_IMPORT = os.environ.get("STATICFX_SURELY_UNSET_SLOW_IMPORT", "0") == "1"


def is_torch_available():
    return True


class _LazyModule:
    def __init__(self, name, structure):
        self.structure = structure


_import_structure = {"layers": ["make_layer"], "mixins": ["WidthMixin"]}

if TYPE_CHECKING or (SLOW_IMPORT):
    if is_torch_available():
        from .layers import make_layer
    from .mixins import WidthMixin
else:
    sys.modules[__name__] = _LazyModule(__name__, _import_structure)
"#;
    std::fs::write(pkg.join("__init__.py"), init).unwrap();
    std::fs::write(
        pkg.join("layers.py"),
        "from torch import nn\n\n\ndef make_layer(n):\n    return nn.Linear(n, n)\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("mixins.py"),
        "class WidthMixin:\n    def width(self):\n        return 4\n",
    )
    .unwrap();
    let file = dir.path().join("model.py");
    std::fs::write(
        &file,
        "from torch import nn\n\nfrom pkg import WidthMixin, make_layer\n\n\nclass M(nn.Module, WidthMixin):\n    def __init__(self):\n        super().__init__()\n        self.fc = make_layer(self.width())\n\n    def forward(self, x):\n        return self.fc(x)\n",
    )
    .unwrap();
    let opts = GraphOptions {
        root: Some(dir.path().to_path_buf()),
        entry: Some("M()".into()),
        inputs: vec!["x=2x4".parse::<InputSpec>().unwrap()],
        ..Default::default()
    };
    let a = analyze_file(&file, &opts).unwrap();
    let g = &a.graphs[0];
    assert!(g.error.is_none(), "{:?}", g.error);
    let targets: Vec<String> = g.graph.nodes().map(|(_, n)| n.target.clone()).collect();
    assert!(targets.iter().any(|t| t == "fc"), "{targets:?}");
}

/// A class analysed on its own gets its required constructor arguments as unknowns, read
/// from the signature `inspect.signature` gives: through a `functools.wraps` wrapper
/// (diffusers' `@register_to_config` on `__init__`), the wrapped `__init__`'s.
#[test]
fn a_class_whose_init_is_wrapped_is_built_with_the_wrapped_signature() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("model.py");
    let model = r#"import functools

from torch import nn


def register_to_config(init):
    @functools.wraps(init)
    def inner_init(self, *args, **kwargs):
        init(self, *args, **kwargs)

    return inner_init


class M(nn.Module):
    @register_to_config
    def __init__(self, in_features, depth=2):
        super().__init__()
        self.fc = nn.Linear(in_features, 4)

    def forward(self, x):
        return self.fc(x)
"#;
    std::fs::write(&file, model).unwrap();
    let opts = GraphOptions {
        root: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let a = analyze_file(&file, &opts).unwrap();
    let g = a
        .graphs
        .iter()
        .find(|g| g.class == "M")
        .expect("M analysed");
    assert!(g.build_failure.is_none(), "{:?}", g.build_failure);
    let targets: Vec<String> = g.graph.nodes().map(|(_, n)| n.target.clone()).collect();
    assert!(targets.iter().any(|t| t == "fc"), "{targets:?}");
}

/// An unknown value kept in a field of a plain object (a model output holding what the
/// analyser could not follow) is no submodule: a method called on it records no
/// `call_module` (ZImage's `Transformer2DModelOutput(sample=x)` gave `call_module[sample.items]`).
#[test]
fn an_unknown_field_of_an_output_object_is_no_submodule() {
    let (_, json) = trace_m(
        "import torch\nfrom torch import nn\n\n\nclass Output:\n    def __init__(self, sample):\n        self.sample = sample\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n        h = self.fc(x)\n        rows = list(torch.nonzero(h).unbind(0))\n        out = Output(rows)\n        return out.sample.count(0)\n",
        "x=2x4",
    );
    let modules: Vec<&str> = json["graphs"][0]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["op"] == "call_module")
        .map(|n| n["target"].as_str().unwrap())
        .collect();
    assert_eq!(modules, ["fc"]);
}

/// A forward returning a plain dict (open_clip's CoCa) has an output of its `(key, value)`
/// pairs in order, as a dict-like output object has: the values are the graph's nodes, not a
/// text that names them.
#[test]
fn a_dict_returned_by_forward_is_its_items() {
    let (_, json) = trace_m(
        "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 3)\n\n    def forward(self, x):\n        return {\"logits\": self.fc(x), \"total\": x.sum()}\n",
        "x=2x4",
    );
    let nodes = json["graphs"][0]["nodes"].as_array().unwrap();
    let output = nodes.iter().find(|n| n["op"] == "output").unwrap();
    let shape = |name: &str| nodes.iter().find(|n| n["name"] == name).unwrap()["shape"].clone();
    let pairs: Vec<(String, Value)> = output["args"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let name = p[1]["node"].as_str().expect("a node");
            (p[0].as_str().unwrap().to_string(), shape(name))
        })
        .collect();
    assert_eq!(
        pairs,
        [
            ("logits".to_string(), serde_json::json!([2, 3])),
            ("total".to_string(), serde_json::json!([])),
        ]
    );
}

/// Per-class analysis of a subclass of a torch.nn layer that keeps the layer's `__init__`
/// (open_clip's `LayerNormFp32(nn.LayerNorm)`, which overrides only forward) builds it with
/// the layer's required arguments unknown, as a Python `__init__`'s are: its forward is
/// traced, and no "missing required argument" is reported for code that never raises.
#[test]
fn a_layer_subclass_keeping_the_layers_init_is_built_per_class() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("model.py");
    std::fs::write(
        &file,
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass LayerNormFp32(nn.LayerNorm):\n    def forward(self, x):\n        y = F.layer_norm(x.to(torch.float32), self.normalized_shape, self.weight, self.bias, self.eps)\n        return y.to(x.dtype)\n",
    )
    .unwrap();
    let opts = GraphOptions {
        root: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let a = analyze_file(&file, &opts).unwrap();
    let raised: Vec<&str> = a
        .diagnostics
        .iter()
        .filter(|d| d.code.starts_with("FX9"))
        .map(|d| d.message.as_str())
        .collect();
    assert!(raised.is_empty(), "{raised:?}");
    let g = a
        .graphs
        .iter()
        .find(|g| g.class == "LayerNormFp32")
        .expect("LayerNormFp32 analysed");
    assert!(g.error.is_none(), "{:?}", g.error);
    let targets: Vec<String> = g.graph.nodes().map(|(_, n)| n.target.clone()).collect();
    assert!(
        targets
            .iter()
            .any(|t| t == "torch.nn.functional.layer_norm"),
        "{targets:?}"
    );
    assert!(targets.iter().any(|t| t == "weight"), "{targets:?}");
}

/// `type.__call__` runs a class's own `__new__` first: a deprecated name whose `__new__`
/// returns the class that replaced it (diffusers' `embeddings.FluxPosEmbed`) is that class's
/// instance, with no `__init__` of its own run; a `__new__` making its instance through
/// `super().__new__(cls)` and caching it (a singleton) gets `__init__` run on that instance,
/// the same one each time; one making a subclass's instance gets that class's `__init__`.
#[test]
fn a_classs_own_new_makes_what_the_call_returns() {
    let source = r#"import torch
from torch import nn


class NewEmbed(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(x)


class OldEmbed(nn.Module):
    def __new__(cls, *args, **kwargs):
        return NewEmbed(*args, **kwargs)

    def __init__(self, dim):
        raise ValueError("never run: __new__ made no OldEmbed")


class Single(nn.Module):
    _instance = None

    def __new__(cls, *args, **kwargs):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, 2 * dim)

    def forward(self, x):
        return self.fc(x)


class Act(nn.Module):
    def __new__(cls, kind):
        return super().__new__(Gelu if kind == "gelu" else cls)

    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def forward(self, x):
        return x.relu()


class Gelu(Act):
    def __init__(self, kind):
        super().__init__(kind)
        self.kind = "tanh-" + kind

    def forward(self, x):
        return x * 2


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = OldEmbed(8)
        self.s = Single(8)
        self.same = Single(8) is self.s
        self.kind = type(self.emb).__name__
        self.act = Act("gelu")

    def forward(self, x):
        return self.act(self.s(self.emb(x))), self.same, self.kind, type(self.act).__name__, self.act.kind
"#;
    let (a, json) = trace_m(source, "x=2x8");
    assert!(a.graphs[0].error.is_none(), "{:?}", a.graphs[0].error);
    let nodes = json["graphs"][0]["nodes"].as_array().unwrap();
    let modules: Vec<(&str, &Value)> = nodes
        .iter()
        .filter(|n| n["op"] == "call_module")
        .map(|n| (n["target"].as_str().unwrap(), &n["shape"]))
        .collect();
    assert_eq!(
        modules,
        [
            ("emb.fc", &serde_json::json!([2, 8])),
            ("s.fc", &serde_json::json!([2, 16]))
        ]
    );
    let output = nodes.iter().find(|n| n["op"] == "output").unwrap();
    let shown = output["args"].to_string();
    assert!(
        shown.contains("true") && shown.contains("NewEmbed"),
        "{shown}"
    );
    // a `__new__` making a subclass's instance: that class's forward, `__init__` run on it
    assert!(
        shown.contains("Gelu") && shown.contains("tanh-gelu"),
        "{shown}"
    );
    let targets: Vec<&str> = nodes
        .iter()
        .filter(|n| n["op"] == "call_function")
        .map(|n| n["target"].as_str().unwrap())
        .collect();
    assert_eq!(targets, ["operator.mul"]);
}
