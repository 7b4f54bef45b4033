//! `print(...)`, logger calls and `time.*` reads in forward: wrap the statement in
//! `if not torch.compiler.is_compiling():` (it still runs in eager mode, Dynamo skips it), or,
//! as the alternative, remove it.
//!
//! A statement that binds names (`t0 = time.perf_counter()`) is guarded together with every
//! later statement of the function that reads those names, so compiled code never reads a
//! name the guard skipped; when such a reader itself binds names or returns, the guard is
//! refused.

use tree_sitter::{Node, Tree};

use super::text::{
    bound_names, enclosing_function, eol, in_string, indent_of, indent_unit, line_end, line_start,
    next_line_start, node_at, reads, short, text, torch_name, visit,
};
use super::{Applicability, Edit, Fix, FixKind, Site};
use crate::syntax::Span;

use crate::diagnostics::Rule;

type Refusal = Option<String>;

/// The statement (child of a block or the module) that contains `n`.
fn statement_of(n: Node) -> Option<Node> {
    let mut cur = Some(n);
    while let Some(x) = cur {
        if x.parent()
            .is_some_and(|p| matches!(p.kind(), "block" | "module"))
        {
            return Some(x);
        }
        cur = x.parent();
    }
    None
}

pub fn fixes(src: &str, tree: &Tree, site: &Site) -> Result<Vec<Fix>, Refusal> {
    let node = node_at(tree, site.span).ok_or(None)?;
    let stmt = statement_of(node).ok_or(None)?;
    let what = match site.rule {
        Rule::Print => "print()",
        Rule::Logging => "logging call",
        _ => "clock read",
    };
    if stmt.kind() != "expression_statement" {
        return Err(Some(format!(
            "the {what} sits inside a `{}`; move it to a statement of its own to guard it",
            stmt.kind().replace('_', " ")
        )));
    }
    let expr = stmt.named_child(0).ok_or(None)?;
    let mut bound = Vec::new();
    if expr.kind() == "assignment" {
        if site.rule != Rule::WallClockTime {
            return Err(Some(format!(
                "the {what}'s result is assigned; guarding it would leave the name unset when compiling"
            )));
        }
        if let Some(l) = expr.child_by_field_name("left") {
            bound_names(l, src, &mut bound);
        }
    } else if expr.kind() != "call" {
        return Err(Some(format!(
            "the {what} is part of a larger expression (`{}`)",
            short(text(stmt, src))
        )));
    }
    // The statements to guard: this one and whatever reads the names it binds.
    let mut stmts = vec![stmt];
    if !bound.is_empty() {
        let func = enclosing_function(stmt).ok_or(None)?;
        let body = func.child_by_field_name("body").ok_or(None)?;
        let mut readers: Vec<Node> = Vec::new();
        let mut problem: Option<String> = None;
        visit(body, &mut |n| {
            if n.id() == stmt.id() || n.end_byte() <= stmt.start_byte() {
                return false;
            }
            if n.start_byte() < stmt.end_byte() {
                return true; // an ancestor of the statement
            }
            if n.kind() == "identifier" {
                let mut r = Vec::new();
                reads(n, src, &mut r);
                if r.iter().any(|x| bound.contains(x)) {
                    match statement_of(n) {
                        Some(s) if guardable_reader(s, src) => readers.push(s),
                        // Already guarded readers need nothing more.
                        Some(s) if already_guarded(s, src) => {}
                        Some(s) => {
                            problem.get_or_insert(format!(
                                "`{}` uses the clock value; guard or remove it by hand",
                                short(text(s, src))
                            ));
                        }
                        None => {}
                    }
                }
            }
            true
        });
        if let Some(p) = problem {
            return Err(Some(p));
        }
        // A statement that reads the value twice was found twice (in source order).
        readers.dedup_by_key(|r| r.id());
        stmts.extend(readers);
    }
    let (torch, import) = torch_name(tree, src);
    let nl = eol(src);
    let mut edits = Vec::new();
    for s in &stmts {
        if already_guarded(*s, src) {
            continue;
        }
        let shared = || {
            Some(
                "the statement shares its line with other code; put it on its own line first"
                    .to_string(),
            )
        };
        let indent = indent_of(src, *s).ok_or_else(shared)?;
        let after = src[s.end_byte()..line_end(src, s.end_byte())].trim_start();
        if !(after.is_empty() || after.starts_with('#')) {
            return Err(shared());
        }
        // Inside a one-line compound statement (`if x: print(y)`) the body is not on its own
        // line: indent_of catches that through the `if` before it.
        let unit = indent_unit(src, *s);
        let body = reindent(src, tree, *s, &unit, nl)?;
        edits.push(Edit {
            span: Span::of(*s),
            new_text: format!("if not {torch}.compiler.is_compiling():{nl}{indent}{unit}{body}"),
        });
    }
    let mut out = Vec::new();
    if !edits.is_empty() {
        let mut e = edits;
        e.extend(import.clone());
        e.sort_by_key(|e| (e.span.start, e.span.end));
        let extra = if stmts.len() > 1 {
            format!(" (and {} statement(s) that use its value)", stmts.len() - 1)
        } else {
            String::new()
        };
        out.push(Fix {
            title: format!(
                "Guard `{}` with `if not {torch}.compiler.is_compiling():`{extra}",
                short(text(stmt, src))
            ),
            applicability: Applicability::Safe,
            kind: FixKind::Guard,
            edits: e,
        });
    }
    if bound.is_empty() {
        if let Some(r) = removal(src, stmt) {
            out.push(r);
        }
    }
    if out.is_empty() {
        return Err(None);
    }
    Ok(out)
}

/// A later statement that reads the clock value: guardable when it binds no names (an
/// expression or an assignment to attributes or items) — skipping it then skips nothing
/// anything else reads.
fn guardable_reader(s: Node, src: &str) -> bool {
    if s.kind() != "expression_statement" {
        return false;
    }
    let Some(e) = s.named_child(0) else {
        return false;
    };
    match e.kind() {
        "assignment" | "augmented_assignment" => e.child_by_field_name("left").is_some_and(|l| {
            let mut b = Vec::new();
            bound_names(l, src, &mut b);
            b.is_empty() && matches!(l.kind(), "attribute" | "subscript")
        }),
        "call" => true,
        _ => false,
    }
}

/// Inside `if not torch.compiler.is_compiling():` already (the body of that `if`).
fn already_guarded(s: Node, src: &str) -> bool {
    let Some(block) = s.parent() else {
        return false;
    };
    let Some(ifs) = block.parent().filter(|p| p.kind() == "if_statement") else {
        return false;
    };
    ifs.child_by_field_name("consequence")
        .is_some_and(|c| c.id() == block.id())
        && ifs.child_by_field_name("condition").is_some_and(|c| {
            text(c, src)
                .replace(' ', "")
                .ends_with("compiler.is_compiling()")
                && text(c, src).trim_start().starts_with("not")
        })
}

/// The statement's text with its continuation lines indented one more level. A line break
/// inside a string literal cannot move: then the guard is refused.
fn reindent(src: &str, tree: &Tree, s: Node, unit: &str, nl: &str) -> Result<String, Refusal> {
    let body = text(s, src);
    let mut out = String::new();
    let mut at = 0;
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\n' || b == b'\r' {
            if in_string(tree, s.start_byte() + i) {
                return Err(Some(
                    "the statement has a multi-line string that re-indenting would change".into(),
                ));
            }
            let brk = if body[i..].starts_with("\r\n") { 2 } else { 1 };
            out.push_str(&body[at..i]);
            out.push_str(&body[i..i + brk]);
            i += brk;
            at = i;
            // Blank continuation lines stay blank.
            if i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                out.push_str(unit);
            }
            continue;
        }
        i += 1;
    }
    out.push_str(&body[at..]);
    let _ = nl;
    Ok(out)
}

/// Deleting the statement: its whole lines, or `pass` when it is its block's only statement.
fn removal(src: &str, stmt: Node) -> Option<Fix> {
    indent_of(src, stmt)?;
    let after = &src[stmt.end_byte()..line_end(src, stmt.end_byte())];
    let trailing_ok = after.trim().is_empty() || after.trim_start().starts_with('#');
    if !trailing_ok {
        return None;
    }
    let block = stmt.parent()?;
    let mut c = block.walk();
    let siblings = block
        .named_children(&mut c)
        .filter(|n| n.kind() != "comment")
        .count();
    let edit = if siblings == 1 && block.kind() == "block" {
        Edit {
            span: Span::of(stmt),
            new_text: "pass".into(),
        }
    } else {
        Edit {
            span: Span::new(
                line_start(src, stmt.start_byte()),
                next_line_start(src, stmt.end_byte()),
            ),
            new_text: String::new(),
        }
    };
    Some(Fix {
        title: format!("Remove `{}`", short(text(stmt, src))),
        applicability: Applicability::Unsafe,
        kind: FixKind::Remove,
        edits: vec![edit],
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{apply_kind, fixes};
    use super::super::{Applicability, FixKind};

    const H: &str = "import logging\nimport time\nimport torch\nlogger = logging.getLogger(__name__)\n\n\ndef forward(self, x):\n";

    #[test]
    fn guards_print_and_logger_and_offers_removal() {
        let src = format!("{H}    print(\"shape:\", x.shape)\n    logger.warning(\n        \"dim=%d\", x.shape[-1]\n    )\n    return x\n");
        let out = apply_kind(&src, "FX105", "print(\"shape:\", x.shape)", FixKind::Guard).unwrap();
        assert_eq!(out, format!("{H}    if not torch.compiler.is_compiling():\n        print(\"shape:\", x.shape)\n    logger.warning(\n        \"dim=%d\", x.shape[-1]\n    )\n    return x\n"));
        let out = apply_kind(&src, "FX106", "logger.warning(", FixKind::Guard).unwrap();
        assert!(out.contains("    if not torch.compiler.is_compiling():\n        logger.warning(\n            \"dim=%d\", x.shape[-1]\n        )\n"), "{out}");
        let f = fixes(&src, "FX105", "print(\"shape:\", x.shape)");
        assert_eq!(f.fixes[0].applicability, Applicability::Safe);
        assert_eq!(f.fixes[1].kind, FixKind::Remove);
        assert_eq!(f.fixes[1].applicability, Applicability::Unsafe);
        let out = apply_kind(&src, "FX105", "print(\"shape:\", x.shape)", FixKind::Remove).unwrap();
        assert_eq!(
            out,
            format!(
                "{H}    logger.warning(\n        \"dim=%d\", x.shape[-1]\n    )\n    return x\n"
            )
        );
    }

    #[test]
    fn only_statement_of_a_block_is_replaced_by_pass() {
        let src = format!("{H}    for i in range(2):\n        print(i)\n    return x\n");
        let out = apply_kind(&src, "FX105", "print(i)", FixKind::Remove).unwrap();
        assert_eq!(
            out,
            format!("{H}    for i in range(2):\n        pass\n    return x\n")
        );
    }

    #[test]
    fn clock_value_readers_are_guarded_together() {
        let src = format!("{H}    t0 = time.perf_counter()\n    y = x * 2\n    self.dt = time.perf_counter() - t0\n    return y\n");
        let out = apply_kind(&src, "FX107", "time.perf_counter()", FixKind::Guard).unwrap();
        assert_eq!(out, format!("{H}    if not torch.compiler.is_compiling():\n        t0 = time.perf_counter()\n    y = x * 2\n    if not torch.compiler.is_compiling():\n        self.dt = time.perf_counter() - t0\n    return y\n"));
        // No removal for a statement whose value is read later.
        assert!(fixes(&src, "FX107", "time.perf_counter()")
            .fixes
            .iter()
            .all(|f| f.kind != FixKind::Remove));
        // A reader already under the guard needs nothing, even when it binds a name.
        let src = format!("{H}    t0 = time.time()\n    if not torch.compiler.is_compiling():\n        dt = time.time() - t0\n        print(dt)\n    return x\n");
        let out = apply_kind(&src, "FX107", "time.time()", FixKind::Guard).unwrap();
        assert_eq!(out, format!("{H}    if not torch.compiler.is_compiling():\n        t0 = time.time()\n    if not torch.compiler.is_compiling():\n        dt = time.time() - t0\n        print(dt)\n    return x\n"));
        // A reader that returns the value cannot be guarded.
        let src = format!("{H}    t0 = time.time()\n    return x * t0\n");
        let f = fixes(&src, "FX107", "time.time()");
        assert!(f.fixes.iter().all(|f| f.kind == FixKind::Noqa));
        assert!(f.refusal.unwrap().contains("uses the clock value"));
    }

    #[test]
    fn statements_sharing_a_line_are_left_alone() {
        for src in [
            format!("{H}    print(x); y = 2\n    return x\n"),
            format!("{H}    y = 2; print(x)\n    return x\n"),
            format!("{H}    if x.dim() > 1: print(x)\n    return x\n"),
        ] {
            let f = fixes(&src, "FX105", "print(x)");
            assert!(
                f.fixes.iter().all(|f| f.kind == FixKind::Noqa),
                "{src}: {f:?}"
            );
            assert!(f.refusal.unwrap().contains("shares its line"));
        }
    }

    #[test]
    fn print_inside_an_expression_is_refused_with_a_reason() {
        let src = format!("{H}    y = print(x) or x\n    return y\n");
        let f = fixes(&src, "FX105", "print(x)");
        assert!(f.fixes.iter().all(|f| f.kind == FixKind::Noqa));
        assert!(f.refusal.is_some());
    }
}
