//! A forward that fills a cache on its module in place (timm's LeViT:
//! `self.attention_bias_cache[str(device)] = …`) is traced twice by per-class analysis (the
//! second time with symbolic shapes): the second trace must start from the constructed state,
//! and never read a value recorded in the first trace's graph.

use staticfx::analysis::{analyze_file, GraphOptions};

#[test]
fn a_cache_filled_by_one_trace_is_empty_in_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cache.py");
    std::fs::write(
        &file,
        "import torch\nfrom torch import nn\n\n\nclass Cached(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(8, 8)\n        self.cache = {}\n\n    def forward(self, x):\n        key = str(x.device)\n        if key not in self.cache:\n            self.cache[key] = self.proj(self.proj(self.proj(x)))\n        return self.cache[key] + 1\n",
    )
    .unwrap();
    let a = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || analyze_file(&file, &GraphOptions::default()).unwrap())
        .unwrap()
        .join()
        .expect("no panic");
    let g = &a.graphs[0];
    assert!(g.error.is_none(), "{:?}", g.error);
    let targets: Vec<String> = g
        .graph
        .order
        .iter()
        .map(|&n| g.graph.node(n).target.clone())
        .collect();
    // What torch.fx records on a freshly built module (torch 2.15): the branch that fills
    // the cache, then the add.
    assert_eq!(
        targets,
        [
            "x",
            "builtins.getattr",
            "proj",
            "proj",
            "proj",
            "operator.add",
            "output"
        ]
    );
}
