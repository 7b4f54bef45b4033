//! Data-dependent `if`/`elif`/`else` and `a if c else b` → `torch.where`.
//!
//! Shapes handled: both branches assign the same names (one `where` per name); a name
//! assigned in only some branches keeps its prior value (`torch.where(c, a, y)`); all
//! branches return (also `if c: return a` followed by `return b`); `elif` chains become nested
//! `where`s (from the first tensor condition on, earlier Python conditions stay an `if`);
//! conditional expressions. `.item()` inside the condition is dropped, `and`/`or`/`not`
//! become `torch.logical_*`, and a condition that is not already boolean gets `.bool()`
//! (Python's truth value of a one-element tensor).
//!
//! Refused, with the reason: branches with side effects (mutating or in-place calls, I/O,
//! logging, clocks, randomness), differing control flow (one returns, the other assigns, or
//! anything but plain assignments), statements that read what an earlier statement of the
//! branch computed, operands that are not tensors or numbers, conditions not known to be
//! tensors, and `while` loops. The rewrite evaluates both branches, so it is an unsafe fix.

use tree_sitter::{Node, Tree};

use super::text::{
    bound_before, comments, enclosing_function, impurity, indent_of, indent_unit, node_at,
    operand_problem, own_impurity, reads, short, text, torch_name,
};
use super::{Applicability, Facts, Fix, FixKind, Site};

type Refusal = Option<String>;

/// The rewrite for an FX101 site (the span of a tensor condition).
pub fn for_condition(
    src: &str,
    tree: &Tree,
    site: &Site,
    facts: &Facts,
) -> Result<Vec<Fix>, Refusal> {
    let node = node_at(tree, site.span).ok_or(None)?;
    let owner = owner_of(node).ok_or(None)?;
    rewrite(src, tree, owner, facts)
        .map(|f| vec![f])
        .map_err(Some)
}

/// The rewrite for an FX102 `.item()` site that sits in a branch condition (`if
/// t.sum().item() > 0:`): the condition becomes a tensor again by dropping `.item()`. None
/// when the site is not in a condition.
pub fn for_item_in_condition(
    src: &str,
    tree: &Tree,
    site: &Site,
    facts: &Facts,
) -> Option<Result<Fix, String>> {
    let node = node_at(tree, site.span)?;
    let owner = owner_of(node)?;
    Some(rewrite(src, tree, owner, facts))
}

/// The `if`/`elif`/conditional expression/`while` whose condition contains `n`.
fn owner_of(n: Node) -> Option<Node> {
    let mut child = n;
    let mut cur = Some(n);
    while let Some(p) = cur {
        match p.kind() {
            "if_statement" | "elif_clause" | "while_statement" => {
                let cond = p.child_by_field_name("condition")?;
                return contains(cond, child).then_some(p);
            }
            "conditional_expression" => {
                let cond = parts(p).get(1).copied()?;
                if contains(cond, child) {
                    return Some(p);
                }
            }
            "function_definition" | "class_definition" | "lambda" | "block" => return None,
            _ => {}
        }
        child = p;
        cur = p.parent();
    }
    None
}

fn contains(outer: Node, inner: Node) -> bool {
    outer.start_byte() <= inner.start_byte() && inner.end_byte() <= outer.end_byte()
}

/// Named children without comments.
fn parts(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|x| x.kind() != "comment")
        .collect()
}

fn rewrite(src: &str, tree: &Tree, owner: Node, facts: &Facts) -> Result<Fix, String> {
    let (torch, import) = torch_name(tree, src);
    let mut fix = match owner.kind() {
        "conditional_expression" => ternary(src, owner, facts, &torch)?,
        "if_statement" | "elif_clause" => if_chain(src, owner, facts, &torch)?,
        "while_statement" => return Err("a data-dependent `while` loop has no torch.where form: bound the loop by a Python or shape value, or use torch._higher_order_ops.while_loop".into()),
        _ => return Err("not a branch".into()),
    };
    fix.edits.extend(import);
    fix.edits.sort_by_key(|e| (e.span.start, e.span.end));
    Ok(fix)
}

fn ternary(src: &str, owner: Node, facts: &Facts, torch: &str) -> Result<Fix, String> {
    let p = parts(owner);
    let [a, c, b] = p[..] else {
        return Err("unexpected conditional expression".into());
    };
    let cond = condition(c, src, facts, torch)?;
    for x in [a, b] {
        check_operand(x, src)?;
    }
    same_shapes(&[a, b], src, facts)?;
    let new_text = format!("{torch}.where({cond}, {}, {})", text(a, src), text(b, src));
    Ok(Fix {
        title: format!(
            "Rewrite `{}` with {torch}.where (evaluates both sides)",
            short(text(owner, src))
        ),
        applicability: Applicability::Unsafe,
        kind: FixKind::TorchWhere,
        edits: vec![super::Edit {
            span: crate::syntax::Span::of(owner),
            new_text,
        }],
    })
}

fn check_operand(x: Node, src: &str) -> Result<(), String> {
    if let Some(p) = operand_problem(x, src) {
        return Err(p);
    }
    if let Some(p) = impurity(x, src) {
        return Err(format!("a branch is not side-effect free: {p}"));
    }
    Ok(())
}

/// Whether the analysis saw `n` evaluate to a tensor (directly, or through a comparison or
/// arithmetic with one, or as the receiver of a dropped `.item()`).
fn is_tensor(n: Node, src: &str, facts: &Facts) -> bool {
    let span = crate::syntax::Span::of(n);
    if facts.tensor_conditions.contains(&span) || facts.tensor_values.contains(&span) {
        return true;
    }
    match n.kind() {
        "parenthesized_expression" => parts(n).first().is_some_and(|i| is_tensor(*i, src, facts)),
        "comparison_operator" | "binary_operator" => {
            parts(n).iter().any(|x| is_tensor(*x, src, facts))
        }
        "unary_operator" | "not_operator" => {
            parts(n).last().is_some_and(|x| is_tensor(*x, src, facts))
        }
        "call" => item_receiver(n, src).is_some_and(|r| is_tensor(r, src, facts)),
        _ => false,
    }
}

/// `x.item()` → `x`.
fn item_receiver<'t>(n: Node<'t>, src: &str) -> Option<Node<'t>> {
    if n.kind() != "call" {
        return None;
    }
    let f = n.child_by_field_name("function")?;
    let args = n.child_by_field_name("arguments")?;
    (f.kind() == "attribute"
        && f.child_by_field_name("attribute").map(|a| text(a, src)) == Some("item")
        && args.named_child_count() == 0)
        .then(|| f.child_by_field_name("object"))
        .flatten()
}

/// The source of `n` with every `.item()` call replaced by its receiver.
fn without_item(n: Node, src: &str) -> String {
    if let Some(r) = item_receiver(n, src) {
        return without_item(r, src);
    }
    let mut out = String::new();
    let mut at = n.start_byte();
    let mut c = n.walk();
    for ch in n.children(&mut c) {
        if ch.named_child_count() == 0 && item_receiver(ch, src).is_none() {
            continue;
        }
        out.push_str(&src[at..ch.start_byte()]);
        out.push_str(&without_item(ch, src));
        at = ch.end_byte();
    }
    out.push_str(&src[at..n.end_byte()]);
    out
}

fn has_item(n: Node, src: &str) -> bool {
    let mut found = false;
    super::text::visit(n, &mut |m| {
        if item_receiver(m, src).is_some() {
            found = true;
        }
        !found
    });
    found
}

/// The condition as a boolean tensor expression.
fn condition(c: Node, src: &str, facts: &Facts, torch: &str) -> Result<String, String> {
    if let Some(p) = impurity_outside_item(c, src) {
        return Err(format!("the condition is not side-effect free: {p}"));
    }
    bool_tensor(c, src, facts, torch, true)
}

fn impurity_outside_item(n: Node, src: &str) -> Option<String> {
    if let Some(r) = item_receiver(n, src) {
        return impurity_outside_item(r, src);
    }
    if let Some(p) = own_impurity(n, src) {
        return Some(p);
    }
    let mut c = n.walk();
    let kids: Vec<Node> = n.named_children(&mut c).collect();
    kids.into_iter().find_map(|k| impurity_outside_item(k, src))
}

fn bool_tensor(
    c: Node,
    src: &str,
    facts: &Facts,
    torch: &str,
    top: bool,
) -> Result<String, String> {
    match c.kind() {
        "parenthesized_expression" if parts(c).len() == 1 => {
            bool_tensor(parts(c)[0], src, facts, torch, top)
        }
        "boolean_operator" => {
            let (Some(l), Some(r), Some(op)) = (
                c.child_by_field_name("left"),
                c.child_by_field_name("right"),
                c.child_by_field_name("operator"),
            ) else {
                return Err("unexpected boolean operator".into());
            };
            let f = if text(op, src) == "and" {
                "logical_and"
            } else {
                "logical_or"
            };
            Ok(format!(
                "{torch}.{f}({}, {})",
                bool_tensor(l, src, facts, torch, false)?,
                bool_tensor(r, src, facts, torch, false)?
            ))
        }
        "not_operator" => {
            let a = c
                .child_by_field_name("argument")
                .ok_or("unexpected `not`")?;
            Ok(format!(
                "{torch}.logical_not({})",
                bool_tensor(a, src, facts, torch, false)?
            ))
        }
        _ => {
            if !(is_tensor(c, src, facts) || (top && has_item(c, src))) {
                return Err(format!(
                    "`{}` is not known to be a tensor, so torch.where cannot take it as a condition",
                    short(text(c, src))
                ));
            }
            if c.kind() == "comparison_operator" {
                let mut cur = c.walk();
                let ops: Vec<&str> = c
                    .children_by_field_name("operators", &mut cur)
                    .map(|o| text(o, src))
                    .collect();
                if ops.len() != 1 {
                    return Err(format!(
                        "the chained comparison `{}` converts a tensor to a Python bool in the middle",
                        short(text(c, src))
                    ));
                }
                if !matches!(ops[0], "<" | ">" | "<=" | ">=" | "==" | "!=") {
                    return Err(format!(
                        "`{}` is an identity or membership test, not a tensor comparison",
                        short(text(c, src))
                    ));
                }
                return Ok(without_item(c, src));
            }
            let t = without_item(c, src);
            if is_boolean_call(c, src) {
                return Ok(t);
            }
            Ok(match c.kind() {
                "identifier" | "attribute" | "call" | "subscript" => format!("{t}.bool()"),
                _ => format!("({t}).bool()"),
            })
        }
    }
}

/// Calls whose result is already a boolean tensor.
fn is_boolean_call(c: Node, src: &str) -> bool {
    let Some(f) = c
        .kind()
        .eq("call")
        .then(|| c.child_by_field_name("function"))
        .flatten()
    else {
        return false;
    };
    let name = match f.kind() {
        "attribute" => f
            .child_by_field_name("attribute")
            .map(|a| text(a, src))
            .unwrap_or(""),
        _ => text(f, src),
    };
    matches!(
        name,
        "any"
            | "all"
            | "isnan"
            | "isinf"
            | "isfinite"
            | "isneginf"
            | "isposinf"
            | "isclose"
            | "eq"
            | "ne"
            | "gt"
            | "ge"
            | "lt"
            | "le"
            | "logical_and"
            | "logical_or"
            | "logical_not"
            | "logical_xor"
            | "signbit"
    )
}

/// What one branch does.
enum Body<'t> {
    /// `name = expr` statements (possibly none, for `pass`).
    Assign(Vec<(String, Node<'t>)>),
    Return(Node<'t>),
}

fn body<'t>(block: Node<'t>, src: &str) -> Result<Body<'t>, String> {
    let stmts = parts(block);
    if let [r] = stmts[..] {
        if r.kind() == "return_statement" {
            let v = parts(r)
                .first()
                .copied()
                .ok_or("a branch returns None, which torch.where cannot select")?;
            return Ok(Body::Return(v));
        }
    }
    let mut out = Vec::new();
    for s in stmts {
        match s.kind() {
            "pass_statement" => {}
            "expression_statement" => {
                let p = parts(s);
                let a = match p[..] {
                    [a] if a.kind() == "assignment" => a,
                    [a] if a.kind() == "augmented_assignment" => {
                        return Err(format!(
                            "`{}` updates a value in place inside the branch",
                            short(text(a, src))
                        ))
                    }
                    _ => {
                        return Err(format!(
                            "the branch does more than assign names: `{}`",
                            short(text(s, src))
                        ))
                    }
                };
                let (Some(l), Some(r)) = (
                    a.child_by_field_name("left"),
                    a.child_by_field_name("right"),
                ) else {
                    return Err(format!("`{}` has no value", short(text(a, src))));
                };
                if l.kind() != "identifier" || a.child_by_field_name("type").is_some() {
                    return Err(format!(
                        "`{}` assigns to something other than a plain name",
                        short(text(a, src))
                    ));
                }
                if matches!(r.kind(), "assignment" | "augmented_assignment" | "yield") {
                    return Err(format!("`{}` is a chained assignment", short(text(a, src))));
                }
                out.push((text(l, src).to_string(), r));
            }
            "return_statement" => {
                return Err(
                    "one branch returns after other statements (differing control flow)".into(),
                )
            }
            _ => {
                return Err(format!(
                    "the branch has control flow or statements torch.where cannot express: `{}`",
                    short(text(s, src))
                ))
            }
        }
    }
    Ok(Body::Assign(out))
}

fn if_chain(src: &str, owner: Node, facts: &Facts, torch: &str) -> Result<Fix, String> {
    let ifs = if owner.kind() == "elif_clause" {
        owner.parent().ok_or("orphan elif")?
    } else {
        owner
    };
    // (condition, block) for the `if` and each `elif`, then the `else` block.
    let mut arms: Vec<(Node, Node, Node)> = Vec::new(); // (clause, condition, block)
    let mut else_block: Option<(Node, Node)> = None; // (clause, block)
    arms.push((
        ifs,
        ifs.child_by_field_name("condition").ok_or("no condition")?,
        ifs.child_by_field_name("consequence").ok_or("no body")?,
    ));
    let mut c = ifs.walk();
    for alt in ifs.children_by_field_name("alternative", &mut c) {
        match alt.kind() {
            "elif_clause" => arms.push((
                alt,
                alt.child_by_field_name("condition").ok_or("no condition")?,
                alt.child_by_field_name("consequence").ok_or("no body")?,
            )),
            "else_clause" => {
                else_block = Some((alt, alt.child_by_field_name("body").ok_or("no body")?))
            }
            _ => {}
        }
    }
    let k = arms
        .iter()
        .position(|(clause, _, _)| clause.id() == owner.id())
        .ok_or("condition not found in its `if`")?;
    let arms = &arms[k..];
    let indent = indent_of(src, ifs)
        .ok_or("the `if` shares its line with other code; put it on its own line first")?;

    let mut conds = Vec::new();
    for (i, (_, cond, _)) in arms.iter().enumerate() {
        match condition(*cond, src, facts, torch) {
            Ok(c) => conds.push(c),
            Err(e) if i == 0 => return Err(e),
            Err(e) => {
                return Err(format!(
                    "a later branch of the chain cannot be rewritten: {e}"
                ))
            }
        }
    }
    let mut bodies = Vec::new();
    for (_, _, block) in arms {
        bodies.push(body(*block, src)?);
    }
    let else_body = match else_block {
        Some((_, b)) => Some(body(b, src)?),
        None => None,
    };

    let first_stmt = parts(arms[0].2).first().copied().ok_or("empty branch")?;
    let unit = indent_unit(src, first_stmt);
    let nl = super::text::eol(src);
    let mut end = ifs.end_byte();
    let all_return = bodies.iter().all(|b| matches!(b, Body::Return(_)));
    let any_return = bodies.iter().any(|b| matches!(b, Body::Return(_)))
        || matches!(else_body, Some(Body::Return(_)));
    let stmts: Vec<String> = if all_return {
        let other = match &else_body {
            Some(Body::Return(v)) => *v,
            Some(Body::Assign(_)) => {
                return Err(
                    "one branch returns and the other assigns (differing control flow)".into(),
                )
            }
            None => {
                // `if c: return a` followed by `return b`.
                let mut next = ifs.next_named_sibling();
                while let Some(n) = next.filter(|n| n.kind() == "comment") {
                    next = n.next_named_sibling();
                }
                let ret = next
                    .filter(|n| n.kind() == "return_statement")
                    .ok_or("the branch returns but the code after the `if` does not return right away (differing control flow)")?;
                let v = parts(ret).first().copied().ok_or(
                    "the code after the `if` returns None, which torch.where cannot select",
                )?;
                end = ret.end_byte();
                v
            }
        };
        let mut values: Vec<Node> = bodies
            .iter()
            .map(|b| match b {
                Body::Return(v) => *v,
                Body::Assign(_) => unreachable!(),
            })
            .collect();
        values.push(other);
        for v in &values {
            check_operand(*v, src)?;
        }
        same_shapes(&values, src, facts)?;
        let mut acc = text(*values.last().unwrap(), src).to_string();
        for i in (0..conds.len()).rev() {
            acc = format!(
                "{torch}.where({}, {}, {acc})",
                conds[i],
                text(values[i], src)
            );
        }
        vec![format!("return {acc}")]
    } else {
        if any_return {
            return Err("one branch returns and another assigns (differing control flow)".into());
        }
        let mut all: Vec<&Vec<(String, Node)>> = bodies
            .iter()
            .map(|b| match b {
                Body::Assign(v) => v,
                Body::Return(_) => unreachable!(),
            })
            .collect();
        let else_assigns = match &else_body {
            Some(Body::Assign(v)) => Some(v),
            _ => None,
        };
        if let Some(e) = else_assigns {
            all.push(e);
        }
        // Names in order of first assignment.
        let mut names: Vec<String> = Vec::new();
        for arm in &all {
            let mut seen: Vec<&str> = Vec::new();
            for (i, (n, rhs)) in arm.iter().enumerate() {
                if seen.contains(&n.as_str()) {
                    return Err(format!("`{n}` is assigned twice in one branch"));
                }
                let mut r = Vec::new();
                reads(*rhs, src, &mut r);
                if let Some(dep) = arm[..i].iter().find(|(m, _)| r.contains(m)) {
                    return Err(format!(
                        "`{n} = {}` uses `{}` computed earlier in the same branch",
                        short(text(*rhs, src)),
                        dep.0
                    ));
                }
                check_operand(*rhs, src)?;
                seen.push(n);
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        if names.is_empty() {
            return Err("the branches assign nothing".into());
        }
        // A `where` must not read a name an earlier `where` of this rewrite already replaced.
        for (i, n) in names.iter().enumerate() {
            for arm in &all {
                if let Some((_, rhs)) = arm.iter().find(|(m, _)| m == n) {
                    let mut r = Vec::new();
                    reads(*rhs, src, &mut r);
                    if let Some(d) = names[..i].iter().find(|d| r.contains(d)) {
                        return Err(format!(
                            "`{n} = {}` reads `{d}`, which the rewrite assigns first",
                            short(text(*rhs, src))
                        ));
                    }
                }
            }
        }
        for n in &names {
            let vals: Vec<Node> = all
                .iter()
                .filter_map(|arm| arm.iter().find(|(m, _)| m == n).map(|(_, r)| *r))
                .collect();
            same_shapes(&vals, src, facts)?;
        }
        let func = enclosing_function(ifs);
        let mut out = Vec::new();
        for n in &names {
            let value_in = |arm: Option<&Vec<(String, Node)>>| -> Option<String> {
                arm.and_then(|a| a.iter().find(|(m, _)| m == n))
                    .map(|(_, r)| text(*r, src).to_string())
            };
            let needs_prior = bodies
                .iter()
                .any(|b| matches!(b, Body::Assign(v) if !v.iter().any(|(m, _)| m == n)))
                || else_assigns.is_none_or(|e| !e.iter().any(|(m, _)| m == n));
            if needs_prior && !func.is_some_and(|f| bound_before(f, src, n, ifs.start_byte())) {
                return Err(format!(
                    "`{n}` is assigned in only some branches and has no value before the `if`"
                ));
            }
            let mut acc = value_in(else_assigns).unwrap_or_else(|| n.clone());
            for i in (0..conds.len()).rev() {
                let v = match &bodies[i] {
                    Body::Assign(a) => value_in(Some(a)).unwrap_or_else(|| n.clone()),
                    Body::Return(_) => unreachable!(),
                };
                acc = format!("{torch}.where({}, {v}, {acc})", conds[i]);
            }
            out.push(format!("{n} = {acc}"));
        }
        out
    };

    let rest = src[end..super::text::line_end(src, end)].trim_start();
    if !(rest.is_empty() || rest.starts_with('#')) {
        return Err(
            "other code follows the branch on the same line; put it on its own line first".into(),
        );
    }
    let (start, text_out) = if k == 0 {
        let mut lines: Vec<String> = comments_between(ifs, end, src);
        lines.extend(stmts);
        (ifs.start_byte(), lines.join(&format!("{nl}{indent}")))
    } else {
        let clause = arms[0].0;
        let mut lines: Vec<String> = comments_between(clause, end, src);
        lines.extend(stmts);
        let inner = format!("{indent}{unit}");
        (
            clause.start_byte(),
            format!("else:{nl}{inner}{}", lines.join(&format!("{nl}{inner}"))),
        )
    };
    let what = if k == 0 { "`if`" } else { "`elif`" };
    Ok(Fix {
        title: format!(
            "Rewrite the {what} on `{}` with {torch}.where (evaluates every branch)",
            short(text(arms[0].1, src))
        ),
        applicability: Applicability::Unsafe,
        kind: FixKind::TorchWhere,
        edits: vec![super::Edit {
            span: crate::syntax::Span::new(start, end),
            new_text: text_out,
        }],
    })
}

/// torch.where broadcasts its operands: when the analysis knows two branch values to be
/// tensors of different shapes, the rewrite would change the result's shape.
fn same_shapes(values: &[Node], src: &str, facts: &Facts) -> Result<(), String> {
    let known: Vec<(Node, &Vec<i64>)> = values
        .iter()
        .filter_map(|v| {
            facts
                .tensor_shapes
                .get(&crate::syntax::Span::of(*v))
                .map(|s| (*v, s))
        })
        .collect();
    for w in known.windows(2) {
        if w[0].1 != w[1].1 {
            return Err(format!(
                "the branches have different shapes (`{}` is {:?}, `{}` is {:?}); torch.where would broadcast them",
                short(text(w[0].0, src)),
                w[0].1,
                short(text(w[1].0, src)),
                w[1].1
            ));
        }
    }
    Ok(())
}

/// Comments from `from`'s start up to `end`, which the rewrite moves above the new code.
fn comments_between(from: Node, end: usize, src: &str) -> Vec<String> {
    let clean = |c: &str| c.trim_end().to_string();
    let mut out: Vec<String> = comments(from, src).into_iter().map(clean).collect();
    // Comments between the `if` and a following `return` are siblings, not children.
    let mut next = from.next_sibling();
    while let Some(n) = next.filter(|n| n.end_byte() <= end) {
        out.extend(comments(n, src).into_iter().map(clean));
        next = n.next_sibling();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::{apply_kind, apply_kind_with, fixes, fixes_with};
    use super::super::{Applicability, FixKind};

    const H: &str = "import torch\n\n\ndef forward(self, x):\n    h = self.fc(x)\n";

    fn w(src: &str, cond: &str) -> Option<String> {
        apply_kind(src, "FX101", cond, FixKind::TorchWhere)
    }

    fn refusal(src: &str, cond: &str) -> String {
        let f = fixes(src, "FX101", cond);
        assert!(
            f.fixes.iter().all(|x| x.kind != FixKind::TorchWhere),
            "{f:?}"
        );
        f.refusal.unwrap_or_default()
    }

    #[test]
    fn same_variable_in_both_branches() {
        let src = format!("{H}    if h.sum() > 0:\n        h = torch.relu(h)\n    else:\n        h = torch.tanh(h)\n    return h * 0.5\n");
        assert_eq!(
            w(&src, "h.sum() > 0").unwrap(),
            format!("{H}    h = torch.where(h.sum() > 0, torch.relu(h), torch.tanh(h))\n    return h * 0.5\n")
        );
        let f = fixes(&src, "FX101", "h.sum() > 0");
        assert_eq!(f.fixes[0].applicability, Applicability::Unsafe);
        assert_eq!(f.fixes[1].kind, FixKind::Noqa, "noqa comes last");
    }

    #[test]
    fn several_names_one_where_each_and_prior_value_for_one_branch_names() {
        let src = format!("{H}    s = x\n    if h.mean() > 0:\n        a = h * 2\n        s = h + 1\n    else:\n        a = 0.0\n    return a + s\n");
        assert_eq!(
            w(&src, "h.mean() > 0").unwrap(),
            format!("{H}    s = x\n    a = torch.where(h.mean() > 0, h * 2, 0.0)\n    s = torch.where(h.mean() > 0, h + 1, s)\n    return a + s\n")
        );
        // No else: the prior value.
        let src = format!("{H}    if (h < 0).any():\n        h = -h\n    return h\n");
        assert_eq!(
            w(&src, "(h < 0).any()").unwrap(),
            format!("{H}    h = torch.where((h < 0).any(), -h, h)\n    return h\n")
        );
    }

    #[test]
    fn both_branches_return_and_early_return() {
        let src = format!(
            "{H}    if h.max() > 1:\n        return h / h.max()\n    else:\n        return h\n"
        );
        assert_eq!(
            w(&src, "h.max() > 1").unwrap(),
            format!("{H}    return torch.where(h.max() > 1, h / h.max(), h)\n")
        );
        let src = format!("{H}    lo = h.min()\n    if lo > -5.0 and not (h > 9).all():\n        return h\n    # clamp the rest\n    return h.clamp(-5.0, 5.0)\n");
        assert_eq!(
            apply_kind_with(&src, "FX101", "lo > -5.0 and not (h > 9).all()", FixKind::TorchWhere, &["lo > -5.0", "(h > 9).all()"]).unwrap(),
            format!("{H}    lo = h.min()\n    # clamp the rest\n    return torch.where(torch.logical_and(lo > -5.0, torch.logical_not((h > 9).all())), h, h.clamp(-5.0, 5.0))\n")
        );
    }

    #[test]
    fn conditional_expression_with_scalar_branches() {
        let src =
            format!("{H}    scale = 0.1 if h.abs().max() > 3.0 else 1.0\n    return h * scale\n");
        assert_eq!(
            w(&src, "h.abs().max() > 3.0").unwrap(),
            format!(
                "{H}    scale = torch.where(h.abs().max() > 3.0, 0.1, 1.0)\n    return h * scale\n"
            )
        );
    }

    #[test]
    fn elif_chain_nests_and_python_prefix_stays() {
        let src = format!("{H}    if h.mean() > 1:\n        y = h\n    elif h.mean() < -1:\n        y = -h\n    else:\n        y = h * 0\n    return y\n");
        assert_eq!(
            apply_kind_with(&src, "FX101", "h.mean() > 1", FixKind::TorchWhere, &["h.mean() < -1"]).unwrap(),
            format!("{H}    y = torch.where(h.mean() > 1, h, torch.where(h.mean() < -1, -h, h * 0))\n    return y\n")
        );
        // The elif's condition is not known to be a tensor: refused, with the reason.
        let f = fixes(&src, "FX101", "h.mean() > 1");
        assert!(f.refusal.unwrap().contains("later branch"));
        // A Python `if` first, the tensor test in the `elif`: the `if` stays.
        let src = format!("{H}    if self.mode == \"fixed\":\n        scale = 1.0\n    elif h.mean() > 0.1:\n        scale = 0.5\n    else:\n        scale = 2.0\n    return h * scale\n");
        assert_eq!(
            w(&src, "h.mean() > 0.1").unwrap(),
            format!("{H}    if self.mode == \"fixed\":\n        scale = 1.0\n    else:\n        scale = torch.where(h.mean() > 0.1, 0.5, 2.0)\n    return h * scale\n")
        );
    }

    #[test]
    fn item_in_condition_is_dropped_and_non_bool_conditions_get_bool() {
        let src = format!("{H}    if h.sum().item() > 0:\n        h = h * 2\n    return h\n");
        assert_eq!(
            apply_kind(&src, "FX102", "h.sum().item()", FixKind::TorchWhere).unwrap(),
            format!("{H}    h = torch.where(h.sum() > 0, h * 2, h)\n    return h\n")
        );
        let src = format!("{H}    y = h if h.sum() else -h\n    return y\n");
        assert_eq!(
            w(&src, "h.sum()").unwrap(),
            format!("{H}    y = torch.where(h.sum().bool(), h, -h)\n    return y\n")
        );
    }

    #[test]
    fn adds_import_torch_and_keeps_crlf_tabs_and_non_ascii() {
        let src = "from torch import nn\r\n\r\nclass M(nn.Module):\r\n\tdef forward(self, x):\r\n\t\tif x.sum() > 0:  # é\r\n\t\t\tx = x * 2  # größer\r\n\t\telse:\r\n\t\t\tx = x - 1\r\n\t\treturn x\r\n";
        assert_eq!(
            w(src, "x.sum() > 0").unwrap(),
            "from torch import nn\r\nimport torch\r\n\r\nclass M(nn.Module):\r\n\tdef forward(self, x):\r\n\t\t# é\r\n\t\t# größer\r\n\t\tx = torch.where(x.sum() > 0, x * 2, x - 1)\r\n\t\treturn x\r\n"
        );
        // `import torch as th` is used as is.
        let src = "import torch as th\ndef f(x):\n    return x if x.sum() > 0 else -x\n";
        assert_eq!(
            w(src, "x.sum() > 0").unwrap(),
            "import torch as th\ndef f(x):\n    return th.where(x.sum() > 0, x, -x)\n"
        );
    }

    #[test]
    fn refusals_say_why() {
        let side = format!("{H}    if h.sum() > 0:\n        h = h.add_(1)\n    else:\n        h = h\n    return h\n");
        assert!(
            refusal(&side, "h.sum() > 0").contains("side-effect"),
            "in-place"
        );
        let io =
            format!("{H}    if h.sum() > 0:\n        print(h)\n        h = h * 2\n    return h\n");
        assert!(refusal(&io, "h.sum() > 0").contains("more than assign"));
        let flow = format!("{H}    if h.sum() > 0:\n        return h\n    else:\n        h = h * 2\n    return h\n");
        assert!(refusal(&flow, "h.sum() > 0").contains("control flow"));
        let dep = format!("{H}    if h.sum() > 0:\n        t = h * 2\n        h = t + 1\n    else:\n        t = h\n        h = h\n    return h\n");
        assert!(refusal(&dep, "h.sum() > 0").contains("computed earlier"));
        let unbound = format!("{H}    if h.sum() > 0:\n        z = h * 2\n    return z\n");
        assert!(refusal(&unbound, "h.sum() > 0").contains("no value before"));
        let tuple = format!("{H}    if h.sum() > 0:\n        return h, 1\n    return h, 2\n");
        assert!(refusal(&tuple, "h.sum() > 0").contains("not a tensor or number"));
        let mut facts_src = format!("{H}    y = h.mean(0) if h.sum() > 0 else h\n    return y\n");
        let f = {
            use super::super::{for_site, Facts};
            let site = super::super::testing::site(&facts_src, "FX101", "h.sum() > 0");
            let mut facts = Facts::default();
            facts.tensor_conditions.push(site.span);
            let at = |n: &str| {
                let s = facts_src.find(n).unwrap();
                crate::syntax::Span::new(s, s + n.len())
            };
            facts.tensor_shapes.insert(at("h.mean(0)"), vec![8]);
            let h_at = facts_src.find("else h").unwrap() + 5;
            facts
                .tensor_shapes
                .insert(crate::syntax::Span::new(h_at, h_at + 1), vec![4, 8]);
            for_site(
                &facts_src,
                &crate::syntax::parse(&facts_src, None),
                &site,
                &facts,
            )
        };
        assert!(f.refusal.unwrap().contains("different shapes"));
        facts_src.clear();
        let same_line = format!("{H}    if h.sum() > 0:\n        return h\n    return -h; x = 1\n");
        assert!(refusal(&same_line, "h.sum() > 0").contains("same line"));
        let wh = format!("{H}    while h.norm() > 1:\n        h = h / 2\n    return h\n");
        assert!(refusal(&wh, "h.norm() > 1").contains("while"));
        let rnd = format!("{H}    y = torch.rand_like(h) if h.sum() > 0 else h\n    return y\n");
        assert!(refusal(&rnd, "h.sum() > 0").contains("side effect"));
        // A leaf of `and` the analysis never saw as a tensor (a Python flag).
        let py =
            format!("{H}    if h.sum() > 0 and self.training:\n        h = h * 2\n    return h\n");
        assert!(refusal(&py, "h.sum() > 0 and self.training").contains("not known to be a tensor"));
    }

    #[test]
    fn refusal_when_the_file_has_syntax_errors_keeps_noqa() {
        let src = format!("{H}    if h.sum() > 0:\n        h = h * 2\n    return h +\n");
        let f = fixes_with(&src, "FX101", "h.sum() > 0", &[]);
        assert_eq!(f.fixes.len(), 1);
        assert_eq!(f.fixes[0].kind, FixKind::Noqa);
        assert!(f.refusal.unwrap().contains("syntax errors"));
    }
}
