//! Hover text from an analysis of the same text version: which graph nodes a cursor stands
//! for, or which submodule a `self.x = ...` line builds.

use std::fmt::Write;

use tree_sitter::{Node, Tree};

use super::host::{GraphView, NodeView, Output};
use crate::syntax::{text, Span};

/// Markdown for the cursor at `offset`: a rule's documentation on a code of a `# noqa:` list,
/// else the traced nodes the cursor stands for; None when it stands for neither.
pub fn hover(out: &Output, tree: &Tree, offset: usize) -> Option<(String, Span)> {
    let src: &str = &out.text;
    if let Some(found) = super::noqa_hover::hover(src, offset) {
        return Some(found);
    }
    let leaf = tree.root_node().descendant_for_byte_range(offset, offset)?;
    let class = enclosing(leaf, "class_definition")
        .and_then(|c| c.child_by_field_name("name"))
        .map(|n| text(n, src).to_string());
    let graphs: Vec<&GraphView> = match &class {
        Some(c) => out.graphs.iter().filter(|g| &g.class == c).collect(),
        None => out.graphs.iter().collect(),
    };
    if graphs.is_empty() {
        return None;
    }
    if let Some(found) = submodule_hover(leaf, src, &graphs) {
        return Some(found);
    }
    if let Some(found) = forward_hover(leaf, src, &graphs) {
        return Some(found);
    }
    if let Some(found) = variable_hover(leaf, src, &graphs) {
        return Some(found);
    }
    // Otherwise the innermost expression with nodes: its own, or those of a call it inlined.
    let mut best: Option<(Span, Vec<&NodeView>)> = None;
    for g in &graphs {
        for n in g.nodes() {
            for s in n.span.iter().chain(n.chain.iter()) {
                if !s.contains(offset) || n.op == "output" || n.op == "placeholder" {
                    continue;
                }
                match &mut best {
                    Some((b, list)) if *b == *s => {
                        if !list.iter().any(|x| x.name == n.name) {
                            list.push(n)
                        }
                    }
                    Some((b, _)) if b.end - b.start <= s.end - s.start => {}
                    _ => best = Some((*s, vec![n])),
                }
            }
        }
    }
    let (span, nodes) = best?;
    Some((describe(&nodes), span))
}

fn enclosing<'t>(mut node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    loop {
        if node.kind() == kind {
            return Some(node);
        }
        node = node.parent()?;
    }
}

/// `self.fc = nn.Linear(...)`: the submodule the constructor built, from the module tree.
fn submodule_hover(leaf: Node, src: &str, graphs: &[&GraphView]) -> Option<(String, Span)> {
    let assign = enclosing(leaf, "assignment")?;
    let left = assign.child_by_field_name("left")?;
    if left.kind() != "attribute" {
        return None;
    }
    let obj = left.child_by_field_name("object")?;
    let attr = left.child_by_field_name("attribute")?;
    if text(obj, src) != "self" {
        return None;
    }
    let name = text(attr, src);
    let m = graphs
        .iter()
        .flat_map(|g| g.modules().iter())
        .find(|m| m.path == name)?;
    let mut s = format!("**`self.{name}`**: `{}`", m.class);
    if !m.params.is_empty() {
        s.push_str("\n\n| parameter | shape | dtype |\n|---|---|---|");
        for p in &m.params {
            let shape = p
                .shape
                .as_ref()
                .map(|v| format!("{v:?}"))
                .unwrap_or_else(|| "?".into());
            let kind = if p.buffer { " (buffer)" } else { "" };
            let _ = write!(
                s,
                "\n| `{}`{kind} | `{shape}` | `{}` |",
                p.name,
                p.dtype.as_str()
            );
        }
    }
    if !m.children.is_empty() {
        let _ = write!(
            s,
            "\n\nsubmodules: {}",
            m.children
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Some((s, Span::of(left)))
}

/// The name of `def forward`: every guard Dynamo installs on the traced forward.
fn forward_hover(leaf: Node, src: &str, graphs: &[&GraphView]) -> Option<(String, Span)> {
    let def = leaf
        .parent()
        .filter(|p| p.kind() == "function_definition")?;
    let name = def.child_by_field_name("name")?;
    if name.id() != leaf.id() || text(name, src) != "forward" {
        return None;
    }
    let g = graphs.first()?;
    Some((super::guards_hover::forward_guards(g, src), Span::of(leaf)))
}

/// A variable: the forward parameter's placeholder, or the value of its latest assignment
/// above the cursor in the same function.
fn variable_hover(leaf: Node, src: &str, graphs: &[&GraphView]) -> Option<(String, Span)> {
    if leaf.kind() != "identifier" {
        return None;
    }
    if let Some(p) = leaf.parent() {
        let is_field = |f: &str| {
            p.child_by_field_name(f)
                .map(|c| c.id() == leaf.id())
                .unwrap_or(false)
        };
        if (p.kind() == "attribute" && is_field("attribute"))
            || (p.kind() == "keyword_argument" && is_field("name"))
            || (p.kind() == "call" && is_field("function"))
        {
            return None;
        }
    }
    let name = text(leaf, src);
    let func = enclosing(leaf, "function_definition")?;
    let fname = func
        .child_by_field_name("name")
        .map(|n| text(n, src))
        .unwrap_or("");
    // The value bound last before the cursor; an assignment's own target counts as bound.
    let mut value: Option<Span> = None;
    let mut stack = vec![func.child_by_field_name("body")?];
    while let Some(n) = stack.pop() {
        if n.start_byte() > leaf.end_byte() {
            continue;
        }
        if n.kind() == "assignment" || n.kind() == "augmented_assignment" {
            let target_is_name = n
                .child_by_field_name("left")
                .map(|l| l.kind() == "identifier" && text(l, src) == name)
                .unwrap_or(false);
            let inside_own_rhs = n
                .child_by_field_name("right")
                .map(|r| {
                    Span::of(r).contains(leaf.start_byte()) && r.start_byte() <= leaf.start_byte()
                })
                .unwrap_or(false);
            if target_is_name && !inside_own_rhs {
                if let Some(r) = n.child_by_field_name("right") {
                    let span = if n.kind() == "augmented_assignment" {
                        Span::of(n)
                    } else {
                        Span::of(r)
                    };
                    if value.map(|v| v.start < span.start).unwrap_or(true) {
                        value = Some(span);
                    }
                }
            }
        }
        let mut c = n.walk();
        // Nested functions and classes bind their own names.
        stack.extend(n.named_children(&mut c).filter(|k| {
            k.kind() != "function_definition"
                && k.kind() != "class_definition"
                && k.kind() != "lambda"
        }));
    }
    let mut nodes: Vec<&NodeView> = Vec::new();
    match value {
        Some(v) => {
            // The outermost node produced inside the assigned expression is the value.
            let mut best: Option<Span> = None;
            for g in graphs {
                for n in g.nodes() {
                    if let Some(s) = n.span.filter(|s| v.start <= s.start && s.end <= v.end) {
                        if best
                            .map(|b| s.end - s.start > b.end - b.start)
                            .unwrap_or(true)
                        {
                            best = Some(s);
                        }
                    }
                }
            }
            let best = best?;
            for g in graphs {
                nodes.extend(
                    g.nodes()
                        .iter()
                        .filter(|n| n.span == Some(best) && n.op != "output"),
                );
            }
        }
        None if fname == "forward" => {
            for g in graphs {
                nodes.extend(
                    g.nodes()
                        .iter()
                        .filter(|n| n.op == "placeholder" && n.name == name),
                );
            }
        }
        None => return None,
    }
    // a parameter of forward: the guards Dynamo puts on it, with or without a node
    let guards = (value.is_none() && fname == "forward")
        .then(|| {
            graphs
                .iter()
                .find_map(|g| super::guards_hover::parameter_guards(g, name, src))
        })
        .flatten();
    let mut markdown = match (nodes.is_empty(), &guards) {
        (true, None) => return None,
        (true, Some(_)) => format!("`{name}`"),
        (false, _) => format!("`{name}` =\n\n{}", describe(&nodes)),
    };
    if let Some(g) = guards {
        markdown.push_str("\n\n");
        markdown.push_str(&g);
    }
    Some((markdown, Span::of(leaf)))
}

pub(super) fn describe(nodes: &[&NodeView]) -> String {
    const SHOWN: usize = 8;
    let mut s = String::new();
    if nodes.len() > 1 {
        let _ = writeln!(
            s,
            "{} graph nodes (one per traced iteration or call):\n",
            nodes.len()
        );
    }
    for n in nodes.iter().take(SHOWN) {
        let _ = write!(s, "**`{}`** · `{}` `{}`", n.name, n.op, n.target);
        match (&n.shape, &n.dtype) {
            (Some(sh), Some(dt)) => {
                let _ = write!(s, "  \nshape `{sh}` · dtype `{dt}`");
            }
            (Some(v), None) => {
                let _ = write!(s, "  \nvalue `{v}`");
            }
            _ => s.push_str("  \nshape unknown"),
        }
        if let Some(why) = &n.unknown_reason {
            let _ = write!(s, "  \nunknown: {why}");
        }
        if let Some(r) = &n.region {
            let _ = write!(s, "  \n{r}");
        }
        s.push_str("\n\n");
    }
    if nodes.len() > SHOWN {
        let _ = writeln!(s, "… and {} more", nodes.len() - SHOWN);
    }
    s.trim_end().to_string()
}
