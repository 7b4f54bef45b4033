//! Inlay hints: the shape of the tensor each assignment of a traced `forward` (or of a function
//! it inlines) binds, at the end of the statement: `# [s0, 197, 192]`, with the dtype when it
//! is not float32 (`# [2, 16] int64`).
//!
//! The hints read the bindings the tracer noted (`traced::Binding`: one per name and run of the
//! statement), in the graphs hover reads for the same place: a statement inside a class with a
//! graph of its own reads that class's graphs, so the symbolic dims are the ones hover and the
//! graph view show; any other statement (a helper at module level) reads every graph. A name
//! bound with several shapes (a helper called from two places, a layer in a loop) shows them
//! joined, `[1, 64] | [1, 128]`; one that is not a tensor of fully known shape on every run
//! shows nothing. A hint is never a guess.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::host::{GraphView, NodeView, Output};
use crate::syntax::Span;

/// The editor's inlay hint settings (`staticfx.inlayHints.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InlayConfig {
    /// `staticfx.inlayHints.shapes`: shape hints on assignments.
    pub shapes: bool,
}

impl Default for InlayConfig {
    fn default() -> Self {
        InlayConfig { shapes: true }
    }
}

/// One hint, placed after the byte at `offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlayHint {
    /// The end of the assignment statement.
    pub offset: usize,
    /// `# [1, 128]`, `# q: [1, 8, 64], k: [1, 8, 64]`.
    pub label: String,
    /// The statement, for [`tooltip`].
    pub statement: Span,
}

/// The shape hints of the statements that end within `range` (the part of the document the
/// editor shows).
pub fn inlay_hints(out: &Output, range: Span, config: &InlayConfig) -> Vec<InlayHint> {
    if !config.shapes {
        return vec![];
    }
    let statements = bound_in(out, |s| range.start <= s.end && s.end <= range.end);
    statements
        .into_iter()
        .filter_map(|(statement, targets)| {
            let label = label(&targets)?;
            Some(InlayHint {
                offset: statement.end,
                label,
                statement,
            })
        })
        .collect()
}

/// Markdown for the hint at `offset` (resolved lazily): per name, the graph nodes it was
/// bound to, with their op, shape, dtype and why a shape is unknown.
pub fn tooltip(out: &Output, offset: usize) -> Option<String> {
    let statements = bound_in(out, |s| s.end == offset);
    let (_, targets) = statements.into_iter().next()?;
    let mut s = String::new();
    for (name, runs) in &targets {
        let nodes: Vec<&NodeView> = runs.iter().filter_map(|r| r.node.as_ref()).collect();
        if !s.is_empty() {
            s.push_str("\n\n---\n\n");
        }
        let _ = write!(s, "`{name}` =");
        let not_traced = runs.len() - nodes.len();
        if !nodes.is_empty() {
            let _ = write!(s, "\n\n{}", super::hover::describe(&nodes));
        }
        if not_traced > 0 {
            let _ = write!(
                s,
                "\n\n{not_traced} of {} runs bound no traced value (a Python value, or one \
                 staticfx could not compute)",
                runs.len()
            );
        }
    }
    Some(s)
}

/// A statement's names, in source order, each with its runs.
type Targets = Vec<(String, Vec<Run>)>;
/// The runs of each name of a statement, by the name's (start, end).
type ByTarget = BTreeMap<(usize, usize), Vec<Run>>;

/// One run of a statement for one name: the node it bound, if any.
struct Run {
    node: Option<NodeView>,
}

/// The statements whose span `wanted` admits, in source order, each with its names (in
/// source order, by name) and every run of each.
fn bound_in(out: &Output, wanted: impl Fn(Span) -> bool) -> Vec<(Span, Targets)> {
    // statement → target → runs, by (start, end)
    let mut found: BTreeMap<(usize, usize), ByTarget> = BTreeMap::new();
    for g in &out.graphs {
        for b in (g.traced.bindings.iter()).filter(|b| b.file == g.file() && wanted(b.statement)) {
            if !reads(out, g, b.statement) {
                continue;
            }
            let node = b.node.and_then(|id| g.node(id));
            found
                .entry((b.statement.start, b.statement.end))
                .or_default()
                .entry((b.target.start, b.target.end))
                .or_default()
                .push(Run { node });
        }
    }
    found
        .into_iter()
        .map(|((start, end), targets)| {
            let named = targets
                .into_iter()
                .map(|((ts, te), runs)| (out.text.get(ts..te).unwrap_or("?").to_string(), runs))
                .collect();
            (Span::new(start, end), named)
        })
        .collect()
}

/// Whether graph `g` speaks for a statement at `at`: the graphs of the innermost class (with a
/// graph) holding the statement, else every graph.
fn reads(out: &Output, g: &GraphView, at: Span) -> bool {
    let holds = |c: &GraphView| c.class_span.start <= at.start && at.end <= c.class_span.end;
    let innermost = out
        .graphs
        .iter()
        .filter(|c| holds(c))
        .min_by_key(|c| c.class_span.end - c.class_span.start);
    match innermost {
        Some(c) => c.class == g.class && c.class_span == g.class_span,
        None => true,
    }
}

/// `# [1, 128]` for one name, `# q: [..], k: [..]` for several; None when no name has a shape
/// to show.
fn label(targets: &[(String, Vec<Run>)]) -> Option<String> {
    let shown: Vec<(&str, String)> = targets
        .iter()
        .filter_map(|(name, runs)| Some((name.as_str(), shapes(runs)?)))
        .collect();
    match shown.as_slice() {
        [] => None,
        [(_, one)] if targets.len() == 1 => Some(format!("# {one}")),
        many => Some(format!(
            "# {}",
            many.iter()
                .map(|(name, shape)| format!("{name}: {shape}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The distinct shapes (with dtypes other than float32) of every run, joined with ` | `; None
/// when a run bound anything but a tensor of fully known shape.
fn shapes(runs: &[Run]) -> Option<String> {
    let mut distinct: Vec<String> = Vec::new();
    for r in runs {
        let n = r.node.as_ref()?;
        if n.unknown_reason.is_some() {
            return None;
        }
        let (Some(shape), Some(dtype)) = (&n.shape, &n.dtype) else {
            return None;
        };
        if !shape.starts_with('[') || shape.contains('?') {
            return None;
        }
        let one = if dtype == "float32" {
            shape.clone()
        } else {
            format!("{shape} {dtype}")
        };
        if !distinct.contains(&one) {
            distinct.push(one);
        }
    }
    (!distinct.is_empty()).then(|| distinct.join(" | "))
}
