//! FX121: a call of an `nn.LSTM`, `nn.GRU` or `nn.RNN` submodule. Dynamo does not trace the
//! recurrent layers unless `torch._dynamo.config.allow_rnn` is set: the call breaks the graph
//! (torch 2.15: GB0148 "Unsupported function call (delayed)", a break Dynamo decides when it
//! wraps the submodule), runs eagerly, and the graph resumes after it.

use super::version::Behaviour;
use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::graph::Op;

/// The ids `cx.target` may pick here besides the literal ones (see `version.rs`).
#[allow(dead_code)]
const VERSIONED_IDS: &[&str] = &["GB0148", "GB0014"];

/// The recurrent layers of torch.nn (the leaf class names the catalogue gives them).
const RECURRENT: &[&str] = &["LSTM", "GRU", "RNN"];

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    // (path, class) of each recurrent leaf of the module tree
    let recurrent: Vec<(&str, &str)> = (cx.result.modules.iter())
        .filter(|m| m.leaf && RECURRENT.contains(&m.class.as_str()))
        .map(|m| (m.path.as_str(), m.class.as_str()))
        .collect();
    if recurrent.is_empty() {
        return;
    }
    let gb_id = cx.target.gb_id(Behaviour::RecurrentModule);
    let g = &cx.result.graph;
    for &id in &g.order {
        let n = g.node(id);
        if n.op != Op::CallModule {
            continue;
        }
        let Some(&(_, class)) = recurrent.iter().find(|(path, _)| *path == n.target) else {
            continue;
        };
        let Some(origin) = &n.origin else { continue };
        let mut f = cx.finding(
            Rule::RecurrentModule,
            gb_id,
            origin.file,
            origin.span,
            &origin.call_chain,
        );
        f.node = Some(id);
        f.impact_nodes = cx.impact_after(id);
        f.message = format!(
            "call of `nn.{class}` submodule `{}`: Dynamo does not trace RNN, GRU or LSTM layers, the call runs eagerly between two graphs",
            n.target
        );
        f.hint = "set `torch._dynamo.config.allow_rnn = True` before compiling (experimental support), or keep the recurrent layer outside the compiled region".into();
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::codes;

    #[test]
    fn each_call_of_a_recurrent_layer() {
        let src = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n        self.rnn = nn.LSTM(8, 16, batch_first=True)\n        self.gru = nn.GRU(16, 16)\n\n    def forward(self, x):\n        h = self.fc(x)\n        out, _ = self.rnn(h)\n        out, _ = self.gru(out)\n        return out.relu()\n";
        assert_eq!(codes(src), vec![(13, "GB0148"), (14, "GB0148")]);
    }

    #[test]
    fn a_linear_layer_is_no_recurrent_one() {
        let src = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        return self.fc(x)\n";
        assert_eq!(codes(src), vec![]);
    }
}
