//! Which findings Dynamo actually gets to report, given how it handles each break: a pass over
//! the rules' findings in trace order, not a rule.
//!
//! Dynamo (with `nested_graph_breaks` off, the default) handles a break in an inlined helper at
//! the call site in the frame it is tracing, the root. If that position sits inside a loop of
//! the root's code, it cannot resume there: it gives up on the whole frame (GB7000 "graph break
//! in loop") and runs it eagerly. The body of a `try` statement is the same (measured with
//! torch 2.8 and 2.15 on Python 3.11, with `except` and with `finally`: the frame is skipped
//! and a later break in it is never reported; after the `try` statement Dynamo resumes as
//! usual). The frames the eager code calls are traced afresh, each as a root of its own, so
//! the same break is met again one level down, and so on to the frame that holds the site. A
//! frame run eagerly reports nothing more of its own code: a later break in it is never seen,
//! although breaks in the helpers it calls are (and a comprehension it runs is a frame of its
//! own: FX122). Where Dynamo resumes in the middle of an expression, a tensor method whose
//! arguments broke is called as a plain builtin (FX123). A break inside an
//! instruction that is not a call (a slice with a tensor bound, entering a `with` block of a
//! manager Dynamo has no model of) cannot be resumed either: the frame holding it runs eagerly
//! from there. (A `while` whose tensor condition breaks does not count: the jump is the loop's
//! last instruction, and Dynamo only looks for backward jumps after the breaking one.)

use std::collections::HashMap;

use super::{Ctx, Finding};
use crate::semantic::FileId;
use crate::syntax::{FieldExt, Span};

type Site = (FileId, Span);

/// Drops the findings in frames Dynamo runs eagerly by the time it would reach them.
pub fn drop_unreached(cx: &Ctx, findings: &mut Vec<Finding>) {
    let mut order: Vec<usize> = (0..findings.len()).collect();
    let keys: Vec<(usize, usize)> = findings.iter().map(|f| trace_order(cx, f)).collect();
    order.sort_by_key(|&i| keys[i]);
    // FX190 is a possible break, and GB0003 refuses the frame before tracing
    order.retain(|&i| !findings[i].gb_id.is_empty() && findings[i].gb_id != "GB0003");
    // frames run eagerly, by the call sites leading to them (forward: no call site)
    let mut eager: HashMap<Vec<Site>, (usize, usize)> = HashMap::new();
    let mut keep = vec![true; findings.len()];
    // where Dynamo last resumed each frame after an ordinary break
    let mut resumed: HashMap<Vec<Site>, (usize, usize)> = HashMap::new();
    // (frame, the site Dynamo resumed after in it, the finding's own site)
    let mut resumptions: Vec<(Vec<Site>, Site, Site)> = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let f = &findings[i];
        let chain = chain_of(f);
        // the frame holding the site runs eagerly: Dynamo never sees the rest of its code
        let Some(root) =
            root_level(&eager, &chain).filter(|_| !eager.contains_key(&chain[..chain.len() - 1]))
        else {
            keep[i] = false;
            continue;
        };
        // A leaked requires_grad_() is only found when the graph before the next break is
        // compiled; if that break gives up on the frame instead, nothing is compiled.
        if f.gb_id == "GB8985" {
            let next = order[k + 1..]
                .iter()
                .map(|&j| &findings[j])
                .find(|n| n.gb_id != "GB8985");
            if let Some(n) = next {
                let nchain = chain_of(n);
                let level = chain.len() - 1;
                // Giving up on a frame still compiles the graph of the code before the loop;
                // only a requires_grad_() inside the loop escapes the check.
                let same_root = root_level(&eager, &nchain) == Some(root)
                    && nchain.get(..root) == chain.get(..root)
                    && goes_eager_at(cx, n, &nchain, root)
                    && goes_eager_at(cx, f, &chain, root);
                // or, with the root resumed, in the helper's own frame
                let same_frame = nchain.len() == chain.len()
                    && nchain[..level] == chain[..level]
                    && goes_eager_at(cx, n, &nchain, level);
                if same_root || same_frame {
                    keep[i] = false;
                    continue;
                }
            }
        }
        // met in every frame from the root down: a frame that cannot resume goes eager, and
        // either way the helper called there then runs as a frame of its own
        for level in root..chain.len() {
            let frame = chain[..level].to_vec();
            if goes_eager_at(cx, f, &chain, level) {
                // eager from where Dynamo last resumed the frame (its start if it never broke)
                let since = resumed.get(&frame).copied().unwrap_or((0, 0));
                eager.entry(frame).or_insert(since);
            } else {
                if resumes_mid_expression(f, level, chain.len()) {
                    resumptions.push((frame.clone(), chain[level], (f.file, f.span)));
                }
                resumed.insert(frame, keys[i]);
            }
        }
    }
    let mut k = keep.into_iter();
    findings.retain(|_| k.next().unwrap_or(true));
    // A generator helper called from a frame that runs eagerly is a frame of its own, and
    // Dynamo refuses to trace a generator frame (GB0003), as it refuses a generator forward.
    for (idx, e) in cx.result.events.iter().enumerate() {
        if e.kind != crate::traced::EventKind::Generator || e.detail == "root" {
            continue;
        }
        let caller: Vec<Site> = e.call_chain.clone();
        if eager
            .get(&caller)
            .is_some_and(|&since| since < (e.nodes_before, 1 + idx))
        {
            findings.push(super::generator::refused_helper(cx, e));
        }
    }
    findings.extend(super::method_after_break::refused_methods(cx, &resumptions));
    // So is a comprehension run from such a frame (before Python 3.12): given a list or dict
    // iterator, Dynamo cannot trace it.
    for (idx, e) in cx.result.events.iter().enumerate() {
        if e.kind == crate::traced::EventKind::Comprehension
            && eager
                .get(&e.call_chain)
                .is_some_and(|&since| since < (e.nodes_before, 1 + idx))
        {
            findings.push(super::eager_comprehension::refused_iterator(cx, e));
        }
    }
}

/// Whether Dynamo, handling the break at `level` of a chain of `len` sites, resumes right after
/// that site, in the middle of the expression holding it: after a call that broke in the frame
/// it called (measured with a user graph break and a data-dependent branch), or after a
/// dynamic-shape operator of the frame itself. (A `.item()` or `.tolist()` of the frame itself
/// does not: measured, no later break in the expression.)
fn resumes_mid_expression(f: &Finding, level: usize, len: usize) -> bool {
    level + 1 < len || f.gb_id == "GB0036"
}

/// The call sites from forward to the finding, then its own site.
fn chain_of(f: &Finding) -> Vec<Site> {
    let mut chain: Vec<Site> = f
        .related
        .iter()
        .map(|(file, span, _)| (*file, *span))
        .collect();
    chain.push((f.file, f.span));
    chain
}

/// The outermost frame on the chain that Dynamo still traces, or None when the finding's own
/// frame already runs eagerly.
fn root_level(eager: &HashMap<Vec<Site>, (usize, usize)>, chain: &[Site]) -> Option<usize> {
    (0..chain.len()).find(|&level| !eager.contains_key(&chain[..level]))
}

/// Whether the break, handled in the frame at `level` of its chain, makes that frame eager.
fn goes_eager_at(cx: &Ctx, f: &Finding, chain: &[Site], level: usize) -> bool {
    let (file, span) = chain[level];
    in_block_without_resume(cx, file, span)
        || level + 1 == chain.len() && breaks_mid_instruction(cx, f)
}

/// A break Dynamo meets inside an instruction it cannot resume after (building a slice from a
/// tensor bound, not a call; entering a `with` block of a manager it has no model of): it
/// compiles what came before and runs the rest of the frame holding the site eagerly, so that
/// frame reports nothing more.
fn breaks_mid_instruction(cx: &Ctx, f: &Finding) -> bool {
    f.rule == crate::diagnostics::Rule::UnsupportedContextManager
        || cx.result.events.iter().any(|e| {
            e.kind == crate::traced::EventKind::Convert
                && e.detail == crate::traced::SLICE_BOUND
                && e.file == f.file
                && e.span == f.span
        })
}

/// Where the finding happened in the trace: its event's position, or its node's.
fn trace_order(cx: &Ctx, f: &Finding) -> (usize, usize) {
    if let Some(n) = f.node {
        if let Some(p) = cx.result.graph.order.iter().position(|&o| o == n) {
            return (p + 1, 0);
        }
    }
    cx.result
        .events
        .iter()
        .enumerate()
        .find(|(_, e)| e.file == f.file && e.span.start == f.span.start)
        .map(|(i, e)| (e.nodes_before, 1 + i))
        .unwrap_or((usize::MAX, 0))
}

/// Whether `span` sits in the body of a `for` or `while` loop, or of a `try` statement, of its
/// own function: a break there cannot be resumed.
fn in_block_without_resume(cx: &Ctx, file: FileId, span: Span) -> bool {
    cx.with_syntax(file, span, |node, _| {
        let mut child = node;
        let mut cur = node.parent();
        while let Some(n) = cur {
            match n.kind() {
                "for_statement" | "while_statement" | "try_statement" => {
                    if n.field("body").is_some_and(|b| b.id() == child.id()) {
                        return true;
                    }
                }
                "function_definition" | "lambda" | "class_definition" => return false,
                _ => {}
            }
            child = n;
            cur = n.parent();
        }
        false
    })
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, HEAD};

    #[test]
    fn a_break_in_a_loop_hides_the_rest_of_its_frame_but_not_of_helpers() {
        let src = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def _later(self, h):\n        print(h)\n        return h\n\n    def forward(self, x):\n        h = self.fc(x)\n        for _ in range(2):\n            n = int(h.argmax())\n        if h.sum() > 0:\n            h = h * 2\n        return self._later(h)\n";
        assert_eq!(codes(src), vec![(10, "GB0059"), (16, "GB0124")]);
    }

    #[test]
    fn breaks_before_the_loop_and_outside_loops_are_kept() {
        let src = format!("{HEAD}        h = self.fc(x)\n        print(h)\n        for _ in range(2):\n            h = h + 1\n        s = h.sum().item()\n        return h * s\n");
        assert_eq!(codes(&src), vec![(11, "GB0059"), (14, "GB0124")]);
    }

    /// Dynamo cannot resume inside a `try` body either (torch 2.8 and 2.15): forward runs
    /// eagerly, the helper is traced as a frame of its own, and forward's `print` after the
    /// statement is never reached by Dynamo. After a `try` statement it resumes as usual.
    #[test]
    fn a_break_in_a_try_body_hides_the_rest_of_its_frame() {
        let helper = "import torch\nfrom torch import nn\n\ndef run(fc, x):\n    h = fc(x)\n    torch._dynamo.graph_break()\n    return h\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n";
        let inside = format!("{helper}        try:\n            h = run(self.fc, x)\n        except ValueError:\n            h = x\n        print(h)\n        return h + 1\n");
        assert_eq!(codes(&inside), vec![(6, "GB0025")]);
        let after = format!("{helper}        try:\n            y = x + 1\n        finally:\n            pass\n        h = run(self.fc, y)\n        print(h)\n        return h + 1\n");
        assert_eq!(codes(&after), vec![(6, "GB0025"), (20, "GB0059")]);
    }
}
