//! FX102 `.item()`: in a branch condition, the torch.where rewrite with `.item()` dropped;
//! elsewhere, when the Python number only feeds tensor arithmetic, keep it a 0-d tensor by
//! dropping `.item()` (the analysis proves the "only tensor arithmetic" part from the graph;
//! this file checks the syntax agrees: the value flows only through arithmetic, directly or
//! through one plain name).

use tree_sitter::{Node, Tree};

use super::text::{enclosing_function, node_at, reads, short, text, visit};
use super::{where_rewrite, Applicability, Edit, Facts, Fix, FixKind, Site};
use crate::syntax::Span;

type Refusal = Option<String>;

pub fn fixes(src: &str, tree: &Tree, site: &Site, facts: &Facts) -> Result<Vec<Fix>, Refusal> {
    let node = node_at(tree, site.span).ok_or(None)?;
    let Some(call) = item_call(node, src) else {
        return Err(Some(
            "only `.item()` is rewritten automatically; keep the value a tensor by hand".into(),
        ));
    };
    if let Some(r) = where_rewrite::for_item_in_condition(src, tree, site, facts) {
        return r.map(|f| vec![f]).map_err(Some);
    }
    if !site.scalar_feeds_tensors {
        return Err(Some(
            "the Python number is used outside tensor arithmetic, so it cannot simply stay a tensor".into(),
        ));
    }
    match context(call, src) {
        Ctx::Arith => {}
        Ctx::Assigned(name, stmt, _) => {
            let func = enclosing_function(call).ok_or(None)?;
            let body = func.child_by_field_name("body").ok_or(None)?;
            let mut bad: Option<String> = None;
            visit(body, &mut |n| {
                if n.end_byte() <= stmt.end_byte() {
                    return n.start_byte() <= stmt.start_byte() && n.end_byte() >= stmt.end_byte();
                }
                if n.kind() == "identifier" && n.start_byte() >= stmt.end_byte() {
                    let mut r = Vec::new();
                    reads(n, src, &mut r);
                    if r.contains(&name)
                        && !matches!(context(n, src), Ctx::Arith | Ctx::Assigned(_, _, true))
                    {
                        bad.get_or_insert_with(|| {
                            let parent = n.parent().unwrap_or(n);
                            format!(
                                "`{name}` is used outside arithmetic (`{}`)",
                                short(text(parent, src))
                            )
                        });
                    }
                }
                true
            });
            if let Some(b) = bad {
                return Err(Some(b));
            }
        }
        Ctx::Other => return Err(Some("the `.item()` value is not used in arithmetic".into())),
    }
    let recv = call
        .child_by_field_name("function")
        .and_then(|f| f.child_by_field_name("object"))
        .ok_or(None)?;
    Ok(vec![Fix {
        title: format!(
            "Keep `{}` a tensor (drop `.item()`)",
            short(text(recv, src))
        ),
        applicability: Applicability::Safe,
        kind: FixKind::DropItem,
        edits: vec![Edit {
            span: Span::new(recv.end_byte(), call.end_byte()),
            new_text: String::new(),
        }],
    }])
}

/// The `x.item()` call at or around the site.
fn item_call<'t>(n: Node<'t>, src: &str) -> Option<Node<'t>> {
    let mut cur = Some(n);
    for _ in 0..3 {
        let x = cur?;
        if x.kind() == "call" {
            let f = x.child_by_field_name("function")?;
            let args = x.child_by_field_name("arguments")?;
            let is_item = f.kind() == "attribute"
                && f.child_by_field_name("attribute").map(|a| text(a, src)) == Some("item")
                && args.named_child_count() == 0;
            return is_item.then_some(x);
        }
        cur = x.parent();
    }
    None
}

enum Ctx<'t> {
    /// An operand of arithmetic.
    Arith,
    /// The whole right-hand side (possibly inside arithmetic) of `name = ...`.
    Assigned(String, Node<'t>, bool),
    Other,
}

const ARITH: &[&str] = &["+", "-", "*", "/", "//", "%", "**"];

fn context<'t>(n: Node<'t>, src: &str) -> Ctx<'t> {
    let mut child = n;
    let mut in_arith = false;
    let mut cur = n.parent();
    while let Some(p) = cur {
        match p.kind() {
            "parenthesized_expression" => {}
            "binary_operator" => {
                let op = p
                    .child_by_field_name("operator")
                    .map(|o| text(o, src))
                    .unwrap_or("");
                if !ARITH.contains(&op) {
                    return Ctx::Other;
                }
                in_arith = true;
            }
            "unary_operator" => {
                let op = p
                    .child_by_field_name("operator")
                    .map(|o| text(o, src))
                    .unwrap_or("");
                if op != "-" && op != "+" {
                    return Ctx::Other;
                }
                in_arith = true;
            }
            "assignment" => {
                let right = p.child_by_field_name("right");
                let left = p.child_by_field_name("left");
                return match (left, right) {
                    (Some(l), Some(r)) if r.id() == child.id() && l.kind() == "identifier" => {
                        match p.parent().filter(|s| s.kind() == "expression_statement") {
                            Some(stmt) => Ctx::Assigned(text(l, src).to_string(), stmt, in_arith),
                            None => Ctx::Other,
                        }
                    }
                    _ if in_arith => Ctx::Arith,
                    _ => Ctx::Other,
                };
            }
            _ => return if in_arith { Ctx::Arith } else { Ctx::Other },
        }
        child = p;
        cur = p.parent();
    }
    Ctx::Other
}

#[cfg(test)]
mod tests {
    use super::super::testing::{apply_kind, fixes};
    use super::super::{Applicability, FixKind};

    const H: &str = "import torch\n\n\ndef forward(self, x):\n    h = self.fc(x)\n";

    #[test]
    fn drops_item_when_the_number_feeds_arithmetic() {
        let src = format!("{H}    peak = h.abs().max().item()\n    return h / (peak + 1e-6)\n");
        assert_eq!(
            apply_kind(&src, "FX102", "h.abs().max().item()", FixKind::DropItem).unwrap(),
            format!("{H}    peak = h.abs().max()\n    return h / (peak + 1e-6)\n")
        );
        assert_eq!(
            fixes(&src, "FX102", "h.abs().max().item()").fixes[0].applicability,
            Applicability::Safe
        );
        let src = format!("{H}    return h * h.std().item()\n");
        assert_eq!(
            apply_kind(&src, "FX102", "h.std().item()", FixKind::DropItem).unwrap(),
            format!("{H}    return h * h.std()\n")
        );
    }

    #[test]
    fn refused_when_the_number_leaves_arithmetic() {
        let src = format!(
            "{H}    n = h.sum().item()\n    for _ in range(n):\n        h = h * 2\n    return h\n"
        );
        let f = fixes(&src, "FX102", "h.sum().item()");
        assert!(f.fixes.iter().all(|f| f.kind == FixKind::Noqa));
        assert!(f.refusal.unwrap().contains("used outside arithmetic"));
        let src = format!("{H}    n = int(h.sum())\n    return h * n\n");
        let f = fixes(&src, "FX102", "int(h.sum())");
        assert!(f.refusal.unwrap().contains("only `.item()`"));
    }
}
