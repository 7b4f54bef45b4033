//! Code lenses: above the `def forward` of every analysed class, what torch.compile makes of
//! it, from the same analysis (and so the same version) as the diagnostics:
//!
//! - `1 graph · 312 nodes · 0 breaks`, with "show graph" and "run";
//! - `3 graphs · 2 breaks (FX101, FX106)`, which reveals the first break, and "show graph";
//! - `1 graph · 40 nodes · 0 breaks · 1 recompile risk (FX201)`, which reveals the risk.
//!
//! A break is a finding with a Dynamo gb id (one per site, as the diagnostics count them);
//! Dynamo makes one graph more per break. Possible breaks (FX190), a shape error (FX3xx) and a
//! trace that stopped early are said as such, never counted as clean.

use tree_sitter::{Node, Tree};

use super::host::{GraphView, Output};
use crate::syntax::{text, Span};

/// One lens: a title and what choosing it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lens {
    /// The `def forward` line (from its first decorator to its name); the class's name when the
    /// class has no `forward` of its own.
    pub span: Span,
    pub class: String,
    pub title: String,
    pub action: LensAction,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LensAction {
    /// The class's traced graph (the show-graph command).
    ShowGraph,
    /// The run command on the class.
    Run,
    /// Moves the cursor to a place in the document (the first break).
    Reveal(Span),
}

/// The lenses of every analysed class of the document, in source order.
pub fn code_lenses(out: &Output, tree: &Tree) -> Vec<Lens> {
    let mut graphs: Vec<&GraphView> = out.graphs.iter().collect();
    graphs.sort_by_key(|g| g.class_span.start);
    let mut lenses = Vec::new();
    for g in graphs {
        let Some(span) = forward_site(tree, &out.text, g.class_span) else {
            continue;
        };
        let summary = Summary::of(g);
        let (title, problem) = summary.title();
        let lens = |title: String, action| Lens {
            span,
            class: g.class.clone(),
            title,
            action,
        };
        match problem {
            None => {
                lenses.push(lens(title, LensAction::ShowGraph));
                lenses.push(lens("run".into(), LensAction::Run));
            }
            Some(at) => {
                let action = match at {
                    Some(at) => LensAction::Reveal(at),
                    None => LensAction::ShowGraph,
                };
                lenses.push(lens(title, action));
                lenses.push(lens("show graph".into(), LensAction::ShowGraph));
            }
        }
    }
    lenses
}

/// What one graph's lens says.
struct Summary {
    nodes: usize,
    /// Codes of the breaks, one per site, in the order the trace met them.
    breaks: Vec<&'static str>,
    possible: Vec<&'static str>,
    /// Codes of the recompile risks (FX2xx), one per site. No count is shown without one:
    /// only some kinds of risk are analysed, so "0" would claim more than is known.
    recompiles: Vec<&'static str>,
    raises: Option<&'static str>,
    /// The trace stopped (or the class was not built): its code.
    stopped: Option<&'static str>,
    /// The first problem's place in the document, if it lies there.
    first: Option<Span>,
}

impl Summary {
    fn of(g: &GraphView) -> Summary {
        let r = &g.traced;
        let file = g.file();
        let in_doc =
            |f: crate::semantic::FileId, s: Span, chain: &[(crate::semantic::FileId, Span)]| {
                if f == file {
                    Some(s)
                } else {
                    chain.iter().find(|(cf, _)| *cf == file).map(|&(_, s)| s)
                }
            };
        let mut s = Summary {
            nodes: r.graph.len(),
            breaks: vec![],
            possible: vec![],
            recompiles: vec![],
            raises: None,
            stopped: None,
            first: None,
        };
        let (mut first_break, mut first_other) = (None, None);
        let mut seen = std::collections::HashSet::new();
        for f in &r.breaks {
            if !seen.insert(f.site_key()) {
                continue;
            }
            let chain: Vec<_> = f.related.iter().map(|&(cf, cs, _)| (cf, cs)).collect();
            let at = in_doc(f.file, f.span, &chain);
            if f.rule.raises() {
                s.raises.get_or_insert(f.code);
                first_other = first_other.or(at);
            } else if f.rule.recompiles() {
                s.recompiles.push(f.code);
                first_other = first_other.or(at);
            } else if f.gb_id.is_empty() {
                s.possible.push(f.code);
                first_other = first_other.or(at);
            } else {
                s.breaks.push(f.code);
                first_break = first_break.or(at);
            }
        }
        if let Some(d) = r.build_failure.as_ref().or(r.error.as_ref()) {
            s.stopped = Some(d.code);
            let at = (d.file == file).then_some(d.span);
            first_other = first_other.or(at);
        }
        s.first = first_break.or(first_other);
        s
    }

    /// The title, and whether there is a problem to reveal (and where, if in the document).
    fn title(&self) -> (String, Option<Option<Span>>) {
        let mut t = if let Some(code) = self.stopped {
            format!(
                "trace stopped early ({code}) · {}",
                count(self.nodes, "node")
            )
        } else if self.breaks.is_empty() {
            format!("1 graph · {} · 0 breaks", count(self.nodes, "node"))
        } else {
            format!(
                "{} · {} ({})",
                count(self.breaks.len() + 1, "graph"),
                count(self.breaks.len(), "break"),
                codes(&self.breaks)
            )
        };
        if !self.possible.is_empty() {
            t.push_str(&format!(
                " · {} possible ({})",
                self.possible.len(),
                codes(&self.possible)
            ));
        }
        if !self.recompiles.is_empty() {
            t.push_str(&format!(
                " · {} ({})",
                count(self.recompiles.len(), "recompile risk"),
                codes(&self.recompiles)
            ));
        }
        if let Some(code) = self.raises {
            t.push_str(&format!(" · raises ({code})"));
        }
        let clean = self.stopped.is_none()
            && self.breaks.is_empty()
            && self.possible.is_empty()
            && self.recompiles.is_empty()
            && self.raises.is_none();
        (t, (!clean).then_some(self.first))
    }
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// The distinct codes, in order.
fn codes(list: &[&'static str]) -> String {
    let mut out: Vec<&str> = Vec::new();
    for c in list {
        if !out.contains(c) {
            out.push(c);
        }
    }
    out.join(", ")
}

/// Where a class's lens goes: its last `def forward` (with decorators), else its name.
fn forward_site(tree: &Tree, src: &str, class_span: Span) -> Option<Span> {
    let mut node = tree
        .root_node()
        .descendant_for_byte_range(class_span.start, class_span.end)?;
    while !(node.kind() == "class_definition" && Span::of(node) == class_span) {
        node = node.parent()?;
    }
    let name = node.child_by_field_name("name")?;
    let body = node.child_by_field_name("body")?;
    let mut w = body.walk();
    let forward = body
        .named_children(&mut w)
        .filter_map(|k| {
            let def: Node = match k.kind() {
                "function_definition" => k,
                "decorated_definition" => k.child_by_field_name("definition")?,
                _ => return None,
            };
            let n = def.child_by_field_name("name")?;
            (def.kind() == "function_definition" && text(n, src) == "forward")
                .then(|| Span::new(k.start_byte(), n.end_byte()))
        })
        .last();
    let site = forward.unwrap_or(Span::new(node.start_byte(), name.end_byte()));
    // One line: a decorated forward's lens sits on its first decorator.
    let line_end = src[site.start..site.end]
        .find(['\n', '\r'])
        .map_or(site.end, |i| site.start + i);
    Some(Span::new(site.start, line_end))
}
