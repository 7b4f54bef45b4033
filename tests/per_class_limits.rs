//! Analysis limits of per-class analysis, one mechanism per test: a limit is shown where a
//! value really is unknown, and not where Python or torch tell what it is.

use staticfx::analysis::{analyze_file, FileAnalysis, GraphOptions};
use staticfx::graph::Op;

fn analyse(text: &'static str) -> FileAnalysis {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.py");
    std::fs::write(&file, text).unwrap();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let a = analyze_file(&file, &GraphOptions::default()).unwrap();
            drop(dir);
            a
        })
        .unwrap()
        .join()
        .expect("no panic")
}

fn limits(a: &FileAnalysis) -> Vec<String> {
    a.diagnostics
        .iter()
        .filter(|d| d.code.starts_with("FX9"))
        .map(|d| format!("{} {}", d.code, d.message))
        .collect()
}

/// `weight_norm(conv)` (and spectral_norm, and their parametrizations forms) returns the
/// module it was given: its forward is followed, with the convolution's output shape.
#[test]
fn weight_norm_returns_the_module_it_was_given() {
    let a = analyse(
        r#"import torch
from torch import nn
from torch.nn.utils import weight_norm


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = weight_norm(nn.Conv1d(4, 8, 3))
        self.c2 = torch.nn.utils.parametrizations.weight_norm(nn.Conv1d(8, 8, 3), name="weight")
        self.c3 = nn.utils.spectral_norm(module=nn.Linear(8, 5))

    def forward(self, x):
        return self.c3(self.c2(self.c1(x)).transpose(1, 2))
"#,
    );
    assert_eq!(limits(&a), Vec::<String>::new());
    let g = &a.graphs[0];
    assert!(g.error.is_none(), "{:?}", g.error);
    let graph = &g.graph;
    let modules: Vec<_> = graph
        .order
        .iter()
        .map(|&n| graph.node(n))
        .filter(|n| n.op == Op::CallModule)
        .map(|n| (n.target.clone(), format!("{:?}", n.meta)))
        .collect();
    assert_eq!(modules.len(), 3, "{modules:?}");
    assert_eq!(modules[2].0, "c3");
    // [s0, L, 5]: the Linear's output features
    assert!(modules[2].1.contains("Known(5)"), "{modules:?}");
}

/// A library that keeps one filter on its logger reads `logger.filters` before it logs. The
/// evaluator keeps no logger state, so the list reads back empty; before, iterating it was an
/// analysis limit, which the `except ImportError` around the log call took for the import
/// failing: the package then read as missing and its version as "N/A".
#[test]
fn a_loggers_filters_read_back_empty() {
    let a = analyse(
        r#"import logging
from torch import nn

logger = logging.getLogger(__name__)


class OnlyOnce(logging.Filter):
    def filter(self, record):
        return True


def available():
    try:
        if not any(isinstance(f, OnlyOnce) for f in logger.filters):
            logger.addFilter(OnlyOnce())
        logger.debug("found")
        return 6
    except ImportError:
        return 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, available())

    def forward(self, x):
        return self.fc(x)
"#,
    );
    assert_eq!(limits(&a), Vec::<String>::new());
    let graph = &a.graphs[0].graph;
    let fc = graph
        .order
        .iter()
        .map(|&n| graph.node(n))
        .find(|n| n.op == Op::CallModule)
        .expect("fc is called");
    let meta = format!("{:?}", fc.meta);
    assert!(meta.contains("Known(6)"), "{meta}");
}

/// An embedding takes ids of any rank. Token ids laid out as an image (`[batch, h, w]`, then
/// `permute(0, 3, 1, 2)` before a convolution) had been traced as `[batch, seq]` only, and the
/// permute reported as a shape error that no input of that forward raises.
#[test]
fn embedding_ids_may_have_more_than_two_dims() {
    let a = analyse(
        r#"from torch import nn


class TokenImage(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.Embedding(16, 8)
        self.conv = nn.Conv2d(8, 4, kernel_size=1)

    def forward(self, input_ids):
        h = self.embeddings(input_ids)
        h = h.permute(0, 3, 1, 2)
        return self.conv(h)
"#,
    );
    let g = &a.graphs[0];
    assert!(g.error.is_none(), "{:?}", g.error);
    let errors: Vec<_> = g
        .graph
        .nodes()
        .filter_map(|(_, n)| n.shape_error.as_ref().map(|e| e.message.clone()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let graph = &g.graph;
    let conv = graph
        .order
        .iter()
        .map(|&n| graph.node(n))
        .find(|n| n.op == Op::CallModule && n.target == "conv")
        .expect("conv is called");
    // [s0, 4, s1, s2]
    let meta = format!("{:?}", conv.meta);
    assert!(meta.contains("Known(4)"), "{meta}");
}
