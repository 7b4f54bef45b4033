//! Per-class analysis traces forward first with inputs of unknown shape, then again with the
//! rank the first layer applied to each fixes (a Conv2d: 4). A forward that reads the
//! input's shape before that layer (diffusers' UNet: `for dim in sample.shape[-2:]`) cannot
//! follow it in the first trace; the second trace can, and it is the one shown, with no
//! analysis limit left from the first.

use staticfx::analysis::{analyze_file, GraphOptions};
use staticfx::graph::Op;

const MODEL: &str = r#"import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(4, 8, 3, padding=1)

    def forward(self, sample):
        upsample = False
        for dim in sample.shape[-2:]:
            if dim % 8 != 0:
                upsample = True
                break
        h = self.conv_in(sample)
        if upsample:
            h = h * 2
        return h
"#;

#[test]
fn shape_reads_before_the_first_layer_follow_its_rank() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("net.py");
    std::fs::write(&file, MODEL).unwrap();
    let a = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || analyze_file(&file, &GraphOptions::default()).unwrap())
        .unwrap()
        .join()
        .expect("no panic");
    let g = &a.graphs[0];
    assert!(g.error.is_none(), "{:?}", g.error);
    let limits: Vec<_> = a
        .diagnostics
        .iter()
        .filter(|d| d.code.starts_with("FX9"))
        .map(|d| d.message.clone())
        .collect();
    assert!(limits.is_empty(), "{limits:?}");
    let graph = &g.graph;
    let placeholder = graph
        .order
        .iter()
        .map(|&n| graph.node(n))
        .find(|n| n.op == Op::Placeholder)
        .unwrap();
    let shape = format!("{:?}", placeholder.meta);
    // [s0, 4, s1, s2]: rank 4, the channels the convolution takes
    assert!(shape.contains("Known(4)"), "{shape}");
    assert_eq!(
        graph
            .order
            .iter()
            .filter(|&&n| graph.node(n).op == Op::CallModule)
            .count(),
        1
    );
}
