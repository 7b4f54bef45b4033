//! Per-class analysis passes forward's defaulted arguments their defaults, but an argument
//! that defaults to None and that forward uses as a tensor (diffusers' `timestep:
//! torch.LongTensor = None`, which every caller passes) is an input: the trace that fails on
//! its None is traced again with a placeholder for it, whether forward itself uses it
//! (`timestep.to(...)`) or passes it to a module that does. Only an argument annotated as a
//! tensor, without `| None`, is taken so: one only tested against None stays None, and so does
//! one annotated `torch.Tensor | None` or not at all, whatever forward does with it.

use staticfx::analysis::{analyze_file, GraphOptions};
use staticfx::graph::Op;
use staticfx::traced::FileAnalysis;

const MODEL: &str = r#"import torch
from torch import nn


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.ctx = nn.Linear(8, 8)

    def forward(self, t, context):
        return self.lin(t) + self.ctx(context.to(t.dtype))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.embed = Embed()
        self.guide = nn.Linear(8, 8)

    def forward(self, x, timestep: torch.Tensor = None, guidance: torch.Tensor = None, context: torch.Tensor = None, mask=None):
        h = self.proj(x)
        t = timestep.to(h.dtype) * 1000
        emb = self.embed(t, context)
        if guidance is not None:
            emb = emb + self.guide(guidance)
        if mask is not None:
            h = h * mask
        return h + emb
"#;

fn analyse(text: &str, class: &str) -> FileAnalysis {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("model.py");
    std::fs::write(&file, text).unwrap();
    let opts = GraphOptions {
        class: Some(class.into()),
        ..Default::default()
    };
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || analyze_file(&file, &opts).unwrap())
        .unwrap()
        .join()
        .expect("no panic")
}

#[test]
fn optional_or_unannotated_arguments_stay_none() {
    for signature in [
        "x, timestep: torch.Tensor | None = None",
        "x, timestep: Optional[torch.Tensor] = None",
        "x, timestep=None",
    ] {
        let text = format!(
            "from typing import Optional\nimport torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(8, 8)\n\n    def forward(self, {signature}):\n        return self.proj(x) * timestep.to(x.dtype)\n"
        );
        let a = analyse(&text, "M");
        let error = a.graphs[0].error.as_ref().map(|e| e.message.clone());
        assert!(
            error.as_deref().is_some_and(|m| m.contains("NoneType")),
            "{signature}: {error:?}"
        );
    }
}

#[test]
fn none_defaulted_arguments_used_as_tensors_become_inputs() {
    let a = analyse(MODEL, "Model");
    let g = &a.graphs[0];
    assert!(g.error.is_none(), "{:?}", g.error);
    let graph = &g.graph;
    let modules: Vec<&str> = graph
        .order
        .iter()
        .map(|&n| graph.node(n))
        .filter(|n| n.op == Op::CallModule)
        .map(|n| n.target.as_str())
        .collect();
    assert_eq!(modules, ["proj", "embed.lin", "embed.ctx"]);
    // which placeholders the graph reads
    let used = |name: &str| {
        let id = graph
            .order
            .iter()
            .copied()
            .find(|&n| graph.node(n).op == Op::Placeholder && graph.node(n).name == name)
            .unwrap_or_else(|| panic!("no placeholder {name}"));
        graph.order.iter().any(|&n| graph.inputs(n).contains(&id))
    };
    assert!(used("x") && used("timestep") && used("context"));
    assert!(!used("guidance") && !used("mask"));
    let limits: Vec<_> = a
        .diagnostics
        .iter()
        .filter(|d| d.code.starts_with("FX9"))
        .collect();
    assert!(limits.is_empty(), "{limits:?}");
}
