//! GraphBreakAnnotationPass: turns what the tracer saw (regions, events, graph nodes) into
//! findings that say where TorchDynamo would break the graph, in Dynamo's own terms (gb id and
//! gb_type), with a hint written for the site. One rule per file; each rule only reads the
//! traced graph and the source, so rules are independent and can be tested alone.
//!
//! Precision first: a rule reports only what it can prove from the graph's metadata
//! (tensor vs. Python value, dtype, shape-derived vs. data-derived scalars). What the analyser
//! cannot see into is reported separately, at low severity: FX190 when Dynamo may really
//! refuse the call, FX907 (an analysis limit) when the analyser could not resolve it.
//!
//! `annotate`: one rule per file, each reading the traced graph and the source, emitting `Finding`s
//! for its `Rule` (code, gb id, span, hint, call chain). `fix_available` only for rules with a fix.
//! `docs/` holds one markdown page per code (FX1xx, FX190, FX9xx), the single source of `staticfx
//! rule`, noqa hover and the generated `docs/rules.md`. `version.rs`: the torch `Target`
//! (`target-version`, or the installed torch via `find_torch`) gives each version-dependent
//! `Behaviour` its gb id; `frames.rs` drops what Dynamo never reaches (the rest of a frame it runs
//! eagerly after a break in a loop). Checked against 2,000 generated programs labelled by torch 2.8
//! and 2.15 (`tests/breaks_generated.rs`).

pub mod docs;
pub mod registry;
pub mod version;

mod argument_guard;
mod autograd_apply;
mod backward;
mod buffer_reassign;
mod c_extension;
mod class_in_forward;
mod context_manager;
mod data_dependent_branch;
mod deepcopy;
mod disabled;
mod dynamic_shape_op;
mod eager_comprehension;
mod explicit_graph_break;
mod frames;
mod generator;
mod item;
mod logging;
mod method_after_break;
mod module_in_forward;
mod numpy;
mod print;
mod recompile_state;
mod requires_grad;
mod rnn_module;
mod shape_mismatch;
mod time;
mod tolist;
mod unknown_call;
mod unresolved_call;

use tree_sitter::Node as TsNode;

use crate::diagnostics::{Rule, Severity};
use crate::graph::{NodeId, Op};
use crate::semantic::{FileId, Project};
use crate::syntax::{FieldExt, Span};
pub use crate::traced::Finding;
use crate::traced::GraphResult;
use crate::traced::{EventKind, TraceEvent};

/// Every code a rule can emit, with its title (`--select` help, docs), in `Rule` order.
pub const CODES: &[(&str, &str)] = &{
    let mut out = [("", ""); Rule::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = (Rule::ALL[i].code(), Rule::ALL[i].title());
        i += 1;
    }
    out
};

/// What a rule reads: the traced forward and the source it came from.
pub struct Ctx<'a> {
    pub project: &'a Project,
    pub result: &'a GraphResult,
    /// The torch version the findings describe.
    pub target: &'a version::Target,
}

impl<'a> Ctx<'a> {
    pub fn new(project: &'a Project, result: &'a GraphResult, target: &'a version::Target) -> Self {
        Ctx {
            project,
            result,
            target,
        }
    }

    pub fn source(&self, file: FileId, span: Span) -> String {
        let f = self.project.file(file);
        f.text.get(span.start..span.end).unwrap_or("").to_string()
    }

    /// Calls `visit` with the innermost `call` expression covering `span` (the call itself
    /// when `span` is a call's); None when there is none.
    pub fn with_call<R>(
        &self,
        file: FileId,
        span: Span,
        visit: impl FnOnce(TsNode, &str) -> R,
    ) -> Option<R> {
        self.with_syntax(file, span, |node, src| {
            let mut cur = Some(node);
            while let Some(n) = cur {
                if n.kind() == "call" {
                    return Some(visit(n, src));
                }
                cur = n.parent();
            }
            None
        })
        .flatten()
    }

    /// Calls `visit` with the smallest syntax node covering `span`.
    pub fn with_syntax<R>(
        &self,
        file: FileId,
        span: Span,
        visit: impl FnOnce(TsNode, &str) -> R,
    ) -> Option<R> {
        let f = self.project.file(file);
        let tree = f.tree();
        let node = tree
            .root_node()
            .descendant_for_byte_range(span.start, span.end)?;
        Some(visit(node, &f.text))
    }

    pub fn events(&self, kind: EventKind) -> impl Iterator<Item = &'a TraceEvent> + '_ {
        self.result.events.iter().filter(move |e| e.kind == kind)
    }

    /// Graph nodes recorded for exactly this source span (a call site).
    pub fn nodes_at(&self, file: FileId, span: Span) -> Vec<NodeId> {
        self.result
            .graph
            .nodes()
            .filter(|(_, n)| {
                n.origin
                    .as_ref()
                    .is_some_and(|o| o.file == file && o.span == span)
            })
            .map(|(id, _)| id)
            .collect()
    }

    /// Operation nodes (not placeholders, parameters or the output) from position `from` on.
    pub fn impact_from(&self, from: usize) -> usize {
        let g = &self.result.graph;
        g.order
            .iter()
            .skip(from)
            .filter(|&&id| !matches!(g.node(id).op, Op::Placeholder | Op::Output | Op::GetAttr))
            .count()
    }

    pub fn impact_after(&self, node: NodeId) -> usize {
        let pos = self
            .result
            .graph
            .order
            .iter()
            .position(|&n| n == node)
            .map(|p| p + 1)
            .unwrap_or(usize::MAX);
        self.impact_from(pos)
    }

    pub fn related(&self, chain: &[(FileId, Span)]) -> Vec<(FileId, Span, String)> {
        chain
            .iter()
            .map(|&(file, span)| (file, span, called_from(self.project, file, span)))
            .collect()
    }

    /// A finding with Dynamo's wording for `gb_id`; rules fill in message details and the hint.
    pub fn finding(
        &self,
        rule: Rule,
        gb_id: &'static str,
        file: FileId,
        span: Span,
        chain: &[(FileId, Span)],
    ) -> Finding {
        debug_assert!(
            rule.gb_ids().contains(&gb_id) || (gb_id.is_empty() && rule.gb_ids().is_empty()),
            "{gb_id} is not registered for {rule:?}"
        );
        Finding {
            code: rule.code(),
            rule,
            gb_id,
            gb_type: version::older_gb_type(gb_id).unwrap_or_else(|| registry::gb_type(gb_id)),
            message: String::new(),
            hint: String::new(),
            severity: Severity::Warning,
            file,
            span,
            line: 0,
            column: 0,
            end_line: 0,
            end_column: 0,
            related: self.related(chain),
            fix_available: rule.has_fix(),
            impact_nodes: 0,
            region: None,
            node: None,
            nodes_before: None,
        }
    }

    pub fn finding_at_event(&self, rule: Rule, gb_id: &'static str, e: &TraceEvent) -> Finding {
        let mut f = self.finding(rule, gb_id, e.file, e.span, &e.call_chain);
        f.impact_nodes = self.impact_from(e.nodes_before);
        f.nodes_before = Some(e.nodes_before);
        f
    }
}

type Check = fn(&Ctx, &mut Vec<Finding>);

/// Each rule's check, in the order they run: one per `Rule` (a test keeps it so).
const CHECKS: &[(Rule, Check)] = &[
    (Rule::DataDependentBranch, data_dependent_branch::check),
    (Rule::ScalarConversion, item::check),
    (Rule::Tolist, tolist::check),
    (Rule::DynamicShapeOp, dynamic_shape_op::check),
    (Rule::Print, print::check),
    (Rule::Logging, logging::check),
    (Rule::WallClockTime, time::check),
    (Rule::ExplicitGraphBreak, explicit_graph_break::check),
    (Rule::RequiresGrad, requires_grad::check),
    (Rule::Backward, backward::check),
    (Rule::Generator, generator::check),
    (Rule::ClassInForward, class_in_forward::check),
    (Rule::Deepcopy, deepcopy::check),
    (Rule::Numpy, numpy::check),
    (Rule::CExtension, c_extension::check),
    (Rule::DisabledCall, disabled::check),
    (Rule::AutogradApplyDuplicate, autograd_apply::check),
    (Rule::BufferReassign, buffer_reassign::check),
    (Rule::ModuleInForward, module_in_forward::check),
    (Rule::UnsupportedContextManager, context_manager::check),
    (Rule::RecurrentModule, rnn_module::check),
    (Rule::EagerComprehension, eager_comprehension::check),
    (Rule::MethodAfterBreak, method_after_break::check),
    (Rule::RecompileState, recompile_state::check),
    (Rule::ArgumentGuard, argument_guard::check),
    (Rule::UnknownCall, unknown_call::check),
    (Rule::ShapeMismatch, shape_mismatch::check),
    (Rule::UnresolvedCall, unresolved_call::check),
];

/// Runs every rule over one traced forward. Findings are sorted by position and de-duplicated
/// per (line, gb id), the way Dynamo reports one break per site however often it is hit.
pub fn annotate(project: &Project, result: &GraphResult, target: &version::Target) -> Vec<Finding> {
    let _clock = crate::phase_clock::enter(crate::phase_clock::Phase::Annotation);
    let cx = Ctx::new(project, result, target);
    let mut out = Vec::new();
    for (rule, check) in CHECKS {
        let from = out.len();
        check(&cx, &mut out);
        debug_assert!(out[from..].iter().all(|f| f.rule == *rule), "{rule:?}");
    }
    // What raises at run time (FX3xx) raises in eager code too: the filters below are about
    // what Dynamo sees, so those findings skip them and rejoin after.
    let (mut raises, breaks): (Vec<Finding>, Vec<Finding>) =
        out.into_iter().partition(|f| f.rule.raises());
    // A guard is installed wherever Dynamo traces the read, breaks or not; a disabled
    // function it never traces installs none.
    let (mut recompiles, breaks): (Vec<Finding>, Vec<Finding>) =
        breaks.into_iter().partition(|f| f.rule.recompiles());
    recompiles.retain(|f| !under_disabled_call(&cx, f));
    // The first call that raises (in the order the graph runs) ends the forward: what comes
    // after it never runs, so PyTorch reports only that one, and so does this.
    raises.truncate(1);
    out = breaks;
    out.retain(|f| !eager_only(&cx, f) && !under_disabled_call(&cx, f));
    note_before_any_operation(&cx, &mut out);
    // A generator forward is refused before tracing: nothing else in it is ever seen.
    if out.iter().any(|f| f.gb_id == "GB0003") {
        out.retain(|f| f.gb_id == "GB0003");
    }
    frames::drop_unreached(&cx, &mut out);
    for f in out.iter_mut() {
        note_loop(&cx, f);
        note_data_branch(&cx, f);
        note_unknown_condition(&cx, f);
    }
    out.append(&mut raises);
    out.append(&mut recompiles);
    locate(project, &mut out);
    out.sort_by_key(|f| (f.file, f.span.start, f.code));
    let mut seen = std::collections::HashSet::new();
    out.retain(|f| seen.insert(f.site_key()));
    // after the default trace's filters, which are about its own frames
    add_flagged(&mut out, &result.flagged_breaks);
    out
}

/// Adds to a graph's breaks those only a flag reaches (their own trace annotated them), at
/// sites the default trace does not report.
pub fn add_flagged(breaks: &mut Vec<Finding>, flagged: &[Finding]) {
    let mut seen: std::collections::HashSet<_> = breaks.iter().map(Finding::site_key).collect();
    let before = breaks.len();
    breaks.extend(
        flagged
            .iter()
            .filter(|f| seen.insert(f.site_key()))
            .cloned(),
    );
    if breaks.len() > before {
        breaks.sort_by_key(|f| (f.file, f.span.start, f.code));
    }
}

/// Sets the findings' line and column numbers from their spans.
pub fn locate(project: &Project, findings: &mut [Finding]) {
    for f in findings {
        let file = project.file(f.file);
        let (a, b) = (
            file.lines.line_col(&file.text, f.span.start),
            file.lines.line_col(&file.text, f.span.end),
        );
        (f.line, f.column, f.end_line, f.end_column) =
            (a.line + 1, a.col + 1, b.line + 1, b.col + 1);
        for (file, span, message) in &mut f.related {
            *message = called_from(project, *file, *span);
        }
    }
}

/// The message of one call site of a finding's chain: the file's name, the line and the
/// call's first line of text.
fn called_from(project: &Project, file: FileId, span: Span) -> String {
    let f = project.file(file);
    let call = f.text.get(span.start..span.end).unwrap_or("");
    let call = call.lines().next().unwrap_or("").trim();
    let line = f.lines.line_of(span.start) + 1;
    let name = f
        .path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    format!("called from {name}:{line}: `{call}`")
}

/// Whether a finding sits in code Dynamo never traces: the body of
/// `if not torch.compiler.is_compiling():` or the `else` of `if torch.compiler.is_compiling():`.
/// The tracer already takes Dynamo's side of such a branch (`is_compiling()` is True while it
/// traces); this catches, from the syntax, what reaches a rule another way: a predicate under
/// a name the evaluator could not resolve, a rule that reads the source.
fn eager_only(cx: &Ctx, f: &Finding) -> bool {
    cx.with_syntax(f.file, f.span, |node, src| {
        let mut child = node;
        let mut cur = node.parent();
        while let Some(n) = cur {
            match n.kind() {
                "function_definition" | "lambda" | "class_definition" => return false,
                "if_statement" => {
                    if let Some(cond) = n.field("condition") {
                        let in_body = n.field("consequence").is_some_and(|b| b.id() == child.id());
                        let in_else = child.kind() == "else_clause";
                        match compiling_test(cond, src) {
                            Some(false) if in_body => return true,
                            Some(true) if in_else => return true,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            child = n;
            cur = n.parent();
        }
        false
    })
    .unwrap_or(false)
}

/// Whether the call chain to `f` passes through a `torch.compiler.disable`d call, which Dynamo
/// runs eagerly without looking inside.
fn under_disabled_call(cx: &Ctx, f: &Finding) -> bool {
    cx.events(EventKind::DisabledCall).any(|d| {
        f.related
            .iter()
            .any(|(file, span, _)| *file == d.file && *span == d.span)
    })
}

/// Says so on a break met before forward has put any operation in a graph. Dynamo breaks
/// there all the same (its graph-break log has it, and the corpus labels count it), but the
/// graph the break ends is empty, and Dynamo compiles a graph only when it holds a call: a
/// `torch.compiler.disable`d helper, a `print` or a `copy.deepcopy` of an input as the first
/// thing forward does leaves one compiled graph, and `torch._dynamo.explain` lists no break
/// (torch 2.8 and 2.15 alike). An operation is a call that makes a tensor, or a tensor made in
/// forward (a `_tensor_constant`, which Dynamo records as its constructor call); not a shape
/// read, which Dynamo specialises, nor what a disabled call runs eagerly. Only breaks found at a
/// trace event have a known position.
fn note_before_any_operation(cx: &Ctx, out: &mut [Finding]) {
    let g = &cx.result.graph;
    let disabled: Vec<(crate::semantic::FileId, Span)> = cx
        .events(EventKind::DisabledCall)
        .map(|e| (e.file, e.span))
        .collect();
    // what a disabled call records, at the call or inside it
    let eager = |n: &crate::graph::Node| {
        n.origin.as_ref().is_some_and(|o| {
            disabled.contains(&(o.file, o.span))
                || o.call_chain.iter().any(|c| disabled.contains(c))
        })
    };
    let first_op = g.order.iter().position(|&id| {
        let n = g.node(id);
        let op = match n.op {
            Op::CallFunction | Op::CallMethod | Op::CallModule => true,
            Op::GetAttr => n.target.starts_with("_tensor_constant"),
            _ => false,
        };
        op && n.meta.is_tensor() && !eager(n)
    });
    for f in out.iter_mut() {
        let Some(before) = f.nodes_before else {
            continue;
        };
        // the call's own node, when it has one, comes after its receiver and arguments,
        // which the event does not count yet (`torch.ones(3).requires_grad_()`)
        let at = f
            .node
            .and_then(|n| g.order.iter().position(|&id| id == n))
            .unwrap_or(before);
        if f.gb_id != "GB0003" && first_op.is_none_or(|first| first >= at) {
            f.message.push_str(
                " (before any operation of forward: the graph this break ends is empty, so Dynamo compiles no graph for it and `torch._dynamo.explain` lists no break here)",
            );
        }
    }
}

/// `is_compiling()` → Some(true), `not is_compiling()` → Some(false), anything else → None.
fn compiling_test(cond: TsNode, src: &str) -> Option<bool> {
    match cond.kind() {
        "not_operator" => compiling_test(cond.field("argument")?, src).map(|b| !b),
        "parenthesized_expression" => compiling_test(cond.named_child(0)?, src),
        "call" => {
            let func = &src[cond.field("function")?.byte_range()];
            matches!(
                func.rsplit('.').next(),
                Some("is_compiling" | "is_dynamo_compiling")
            )
            .then_some(true)
        }
        _ => None,
    }
}

/// A break inside a `for` loop makes Dynamo give up on the whole frame (GB7000, "graph break in
/// loop"): nothing of forward is compiled. Worth saying, since it is far worse than a split.
fn note_loop(cx: &Ctx, f: &mut Finding) {
    if f.gb_id.is_empty() || f.gb_id == "GB0003" {
        return;
    }
    let in_loop = cx
        .with_syntax(f.file, f.span, |node, _| {
            let mut cur = node.parent();
            while let Some(n) = cur {
                match n.kind() {
                    "for_statement" => return true,
                    "function_definition" | "lambda" | "class_definition" => return false,
                    _ => cur = n.parent(),
                }
            }
            false
        })
        .unwrap_or(false);
    if in_loop {
        f.message.push_str(" (inside a `for` loop: Dynamo then runs the whole frame eagerly, GB7000 \"graph break in loop\")");
        f.impact_nodes = f.impact_nodes.max(cx.impact_from(0));
    }
}

/// A break inside a branch on a Python value read from the data (Longformer's
/// `is_global_attn = mask.flatten().any().item()`, then `if is_global_attn:`): the conversion
/// broke the graph already, and Dynamo, resumed with the value, reaches this break only when the
/// data takes that side. The message names the condition.
fn note_data_branch(cx: &Ctx, f: &mut Finding) {
    let Some(tag) = f.node.and_then(|n| cx.result.graph.node(n).region) else {
        return;
    };
    if f.region == Some(tag.region) {
        return;
    }
    let Some(region) = cx.result.regions.iter().find(|r| r.id == tag.region) else {
        return;
    };
    if is_tensor(cx, region.cause) {
        return;
    }
    let side = match tag.role {
        crate::graph::RegionRole::ThenBranch => "true",
        crate::graph::RegionRole::ElseBranch => "false",
        crate::graph::RegionRole::Cause => return,
    };
    let cond = snippet(&cx.source(region.file, region.span));
    f.message.push_str(&format!(
        " (only when `{cond}` is {side}: a value of the data, known once its conversion broke the graph)"
    ));
}

/// A finding whose events all happened under an `if` whose condition staticfx could not
/// evaluate (an input's rank, a config field it does not know) is only a possibility: the
/// message names the condition.
fn note_unknown_condition(cx: &Ctx, f: &mut Finding) {
    if f.node.is_some() {
        return;
    }
    let chain: Vec<(FileId, Span)> = f
        .related
        .iter()
        .map(|(file, span, _)| (*file, *span))
        .collect();
    let mut conditions = cx
        .result
        .events
        .iter()
        .filter(|e| e.file == f.file && e.span == f.span && e.call_chain == chain)
        .map(|e| e.unknown_condition);
    let Some(Some((file, span))) = conditions.next() else {
        return;
    };
    if conditions.any(|c| c.is_none()) {
        return;
    }
    let cond = snippet(&cx.source(file, span));
    f.message.push_str(&format!(
        " (only when `{cond}` holds, which staticfx could not evaluate for the inputs it traced)"
    ));
}

/// Tensor-valued node (as opposed to a Python number the tracer also records).
pub fn is_tensor(cx: &Ctx, n: NodeId) -> bool {
    cx.result.graph.node(n).meta.is_tensor()
}

/// The receiver (first argument) of a call node.
pub fn receiver(cx: &Ctx, n: NodeId) -> Option<NodeId> {
    match cx.result.graph.node(n).args.first() {
        Some(crate::graph::Arg::Node(r)) => Some(*r),
        _ => None,
    }
}

/// Compact source text for a message: first line, trimmed, at most 60 characters.
pub fn snippet(s: &str) -> String {
    snippet_of(s, 60)
}

/// The first line of `s`, cut at `max` characters.
pub fn snippet_of(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max || s.lines().count() > 1 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod registry_tests {
    use super::{Rule, CHECKS};

    #[test]
    fn every_rule_has_exactly_one_check() {
        for &rule in Rule::ALL {
            let n = CHECKS.iter().filter(|(r, _)| *r == rule).count();
            assert_eq!(n, 1, "{rule:?}");
        }
        assert_eq!(CHECKS.len(), Rule::ALL.len());
    }
}

#[cfg(test)]
mod unknown_condition_tests {
    use super::testing::messages;

    const FLAGGED: &str = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self, verbose, quiet=False):\n        super().__init__()\n        self.verbose = verbose\n        self.quiet = quiet\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        if self.verbose:\n            print(\"verbose\")\n        if not self.quiet:\n            print(\"loud\")\n        return self.fc(x)\n";

    /// Per-class analysis does not know a required constructor argument: a print under it is
    /// a break only when it holds, and the message says so; under a known default it is not.
    #[test]
    fn a_finding_under_an_unknown_condition_names_it() {
        let found = messages(FLAGGED);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].0, found[0].1), (13, "GB0059"));
        assert!(
            found[0].2.contains("only when `self.verbose` holds"),
            "{}",
            found[0].2
        );
        assert_eq!((found[1].0, found[1].1), (15, "GB0059"));
        assert!(!found[1].2.contains("only when"), "{}", found[1].2);
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Rule tests analyse a small source file written to a temporary directory.
    use super::Finding;
    use crate::analysis::{analyze_file, GraphOptions};
    use crate::diagnostics::Rule;

    /// `each(line, finding)` of every finding of `src`, analysed on the stack the CLI gives the
    /// evaluator (it is recursive).
    fn map_findings<T: Send + 'static>(
        src: &str,
        each: impl Fn(usize, &Finding) -> T + Send + 'static,
    ) -> Vec<T> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.py");
        std::fs::write(&path, src).unwrap();
        let src = src.to_string();
        crate::ide::on_large_stack("test", move || {
            let a = analyze_file(&path, &GraphOptions::default()).unwrap();
            let mut out = Vec::new();
            for g in &a.graphs {
                for f in &g.breaks {
                    let line = src[..f.span.start].matches('\n').count() + 1;
                    out.push(each(line, f));
                }
            }
            out
        })
        .unwrap()
    }

    pub fn findings(src: &str) -> Vec<(usize, &'static str, &'static str, String)> {
        map_findings(src, |line, f| (line, f.code, f.gb_id, f.hint.clone()))
    }

    /// (line, gb id, message) of each finding.
    pub fn messages(src: &str) -> Vec<(usize, &'static str, String)> {
        map_findings(src, |line, f| (line, f.gb_id, f.message.clone()))
    }

    /// (line, gb id) of each finding but the recompile risks (FX2xx): the break rules' tests
    /// hold the breaks, and a forward's flag arguments get argument guards (FX202) besides.
    pub fn codes(src: &str) -> Vec<(usize, &'static str)> {
        findings(src)
            .into_iter()
            .filter(|(_, code, _, _)| !Rule::from_code(code).is_some_and(Rule::recompiles))
            .map(|(l, _, g, _)| (l, g))
            .collect()
    }

    pub const HEAD: &str = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n";
}
