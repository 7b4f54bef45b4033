//! What top-level statements bind, mutate and read, from their syntax alone: whether the
//! incremental session may run one changed top-level statement again by itself
//! (`incremental::Session::update`), and which code may see the names it binds. Every answer
//! errs on the side of "it may": a wrong "no" would make the session disagree with a full
//! analysis, a wrong "yes" only costs a re-trace or a full analysis.

use std::collections::HashSet;

use tree_sitter::Node;

use crate::syntax::text;

/// A statement the session can run again by itself: the names it binds and the names its
/// value is computed from.
pub struct Simple {
    pub binds: Vec<String>,
    pub reads: Vec<String>,
}

/// An import binding names (no star import, no `__future__`), an assignment to plain names of
/// an expression that calls nothing (a constant, a name, an attribute of one, arithmetic on
/// those), or an undecorated `def` whose defaults call nothing (the evaluator reads no
/// annotation): running it again changes nothing but its names.
pub fn simple_statement(stmt: Node, src: &str) -> Option<Simple> {
    if stmt.has_error() {
        return None;
    }
    match stmt.kind() {
        "import_statement" | "import_from_statement" => {
            let mut w = stmt.walk();
            if stmt.children(&mut w).any(|c| c.kind() == "wildcard_import") {
                return None;
            }
            let mut binds = Vec::new();
            import_names(stmt, src, &mut binds);
            (!binds.is_empty()).then_some(Simple {
                binds,
                reads: vec![],
            })
        }
        "expression_statement" => {
            let mut w = stmt.walk();
            let kids: Vec<Node> = stmt.named_children(&mut w).collect();
            let [assignment] = kids.as_slice() else {
                return None;
            };
            if assignment.kind() != "assignment" || assignment.child_by_field_name("type").is_some()
            {
                return None;
            }
            let left = assignment.child_by_field_name("left")?;
            let right = assignment.child_by_field_name("right")?;
            let mut binds = Vec::new();
            plain_targets(left, src, &mut binds)?;
            let mut reads = Vec::new();
            pure_reads(right, src, &mut reads)?;
            Some(Simple { binds, reads })
        }
        "function_definition" => {
            let name = text(stmt.child_by_field_name("name")?, src).to_string();
            let mut reads = Vec::new();
            let parameters = stmt.child_by_field_name("parameters")?;
            let mut w = parameters.walk();
            for p in parameters.named_children(&mut w) {
                if let Some(default) = p.child_by_field_name("value") {
                    pure_reads(default, src, &mut reads)?;
                }
            }
            Some(Simple {
                binds: vec![name],
                reads,
            })
        }
        _ => None,
    }
}

fn import_names(stmt: Node, src: &str, out: &mut Vec<String>) {
    let mut w = stmt.walk();
    for n in stmt.children_by_field_name("name", &mut w) {
        let name = match n.kind() {
            "aliased_import" => n.child_by_field_name("alias").map(|a| text(a, src)),
            _ => text(n, src).split('.').next(),
        };
        out.extend(name.map(str::to_string));
    }
}

/// Plain names (and tuples of them) as assignment targets; None for anything else.
fn plain_targets(n: Node, src: &str, out: &mut Vec<String>) -> Option<()> {
    match n.kind() {
        "identifier" => out.push(text(n, src).to_string()),
        "pattern_list" | "tuple_pattern" | "list_pattern" => {
            let mut w = n.walk();
            for c in n.named_children(&mut w) {
                plain_targets(c, src, out)?;
            }
        }
        _ => return None,
    }
    Some(())
}

/// The names an expression reads, when evaluating it runs no code of the program: no call,
/// subscript (`__getitem__`), lambda, comprehension or assignment expression.
fn pure_reads(n: Node, src: &str, out: &mut Vec<String>) -> Option<()> {
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "call"
            | "subscript"
            | "lambda"
            | "list_comprehension"
            | "set_comprehension"
            | "dictionary_comprehension"
            | "generator_expression"
            | "named_expression"
            | "await"
            | "yield"
            | "assignment"
            | "ERROR" => return None,
            "identifier" => out.push(text(n, src).to_string()),
            "attribute" => {
                // `a.b` reads `a`; `b` is not a name
                stack.extend(n.child_by_field_name("object"));
                continue;
            }
            _ => {}
        }
        let mut w = n.walk();
        stack.extend(n.named_children(&mut w));
    }
    Some(())
}

/// Every module-level name `stmt` may bind, delete or mutate when the top level runs it:
/// definitions, assignment and loop targets, imports, the object a top-level call or an
/// attribute or item assignment starts from. `*` stands for a star import, which may bind
/// anything. Bodies of functions are left out (they run later, and bind locals); class
/// bodies bind class attributes, but their calls may mutate module objects.
pub fn names_bound(stmt: Node, src: &str, out: &mut HashSet<String>) {
    let mut stack = vec![(stmt, true)];
    while let Some((n, module_level)) = stack.pop() {
        match n.kind() {
            "function_definition" | "class_definition" => {
                if let Some(name) = n.child_by_field_name("name").filter(|_| module_level) {
                    out.insert(text(name, src).to_string());
                }
                let in_class = n.kind() == "class_definition";
                let mut w = n.walk();
                for c in n.named_children(&mut w) {
                    let body = n
                        .child_by_field_name("body")
                        .is_some_and(|b| b.id() == c.id());
                    match (body, in_class) {
                        (false, _) => stack.push((c, module_level)),
                        (true, true) => stack.push((c, false)),
                        (true, false) => {}
                    }
                }
                continue;
            }
            "import_statement" | "import_from_statement" => {
                let mut w = n.walk();
                if n.children(&mut w).any(|c| c.kind() == "wildcard_import") {
                    out.insert("*".into());
                }
                let mut names = Vec::new();
                import_names(n, src, &mut names);
                if module_level {
                    out.extend(names);
                }
                continue;
            }
            "assignment" | "augmented_assignment" => {
                if let Some(left) = n.child_by_field_name("left") {
                    target_roots(left, src, module_level, out);
                }
                stack.extend(n.child_by_field_name("right").map(|r| (r, module_level)));
                continue;
            }
            "for_statement" | "for_in_clause" => {
                if let Some(left) = n.child_by_field_name("left") {
                    target_roots(left, src, module_level, out);
                }
            }
            "as_pattern" | "as_pattern_target" | "named_expression" | "delete_statement"
            | "except_clause" | "global_statement" => {
                let mut w = n.walk();
                for c in n.named_children(&mut w) {
                    target_roots(c, src, module_level, out);
                }
            }
            "call" => {
                if let Some(f) = n.child_by_field_name("function") {
                    out.extend(root_name(f, src));
                }
            }
            "lambda" => continue,
            _ => {}
        }
        let mut w = n.walk();
        stack.extend(n.named_children(&mut w).map(|c| (c, module_level)));
    }
}

/// The names an assignment target binds (at module level) or mutates (`a.b = …`, `a[i] = …`
/// mutate what `a` names, anywhere).
fn target_roots(n: Node, src: &str, module_level: bool, out: &mut HashSet<String>) {
    match n.kind() {
        "identifier" if module_level => {
            out.insert(text(n, src).to_string());
        }
        "attribute" | "subscript" => out.extend(root_name(n, src)),
        _ => {
            let mut w = n.walk();
            for c in n.named_children(&mut w) {
                target_roots(c, src, module_level, out);
            }
        }
    }
}

/// The name an attribute or item chain starts from: `a` of `a.b[0].c`.
fn root_name(mut n: Node, src: &str) -> Option<String> {
    loop {
        match n.kind() {
            "identifier" => return Some(text(n, src).to_string()),
            "attribute" => n = n.child_by_field_name("object")?,
            "subscript" => n = n.child_by_field_name("value")?,
            "call" => n = n.child_by_field_name("function")?,
            "parenthesized_expression" => n = n.named_child(0)?,
            _ => return None,
        }
    }
}

/// Whether the code of `stmt` the top level runs (all of it but function bodies) names one of
/// `names`.
pub fn top_level_mentions(stmt: Node, src: &str, names: &HashSet<String>) -> bool {
    let mut stack = vec![stmt];
    while let Some(n) = stack.pop() {
        if n.kind() == "identifier" && names.contains(text(n, src)) {
            return true;
        }
        let body = (n.kind() == "function_definition")
            .then(|| n.child_by_field_name("body"))
            .flatten();
        let mut w = n.walk();
        stack.extend(
            n.named_children(&mut w)
                .filter(|c| body.is_none_or(|b| b.id() != c.id())),
        );
    }
    false
}

/// Whether `code` holds one of `names` as a whole word (in code, a string or a comment alike).
pub fn mentions_word(code: &str, names: &HashSet<String>) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    names.iter().any(|name| {
        code.match_indices(name.as_str()).any(|(i, m)| {
            !code[..i].chars().next_back().is_some_and(word)
                && !code[i + m.len()..].chars().next().is_some_and(word)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_stmt(src: &str) -> tree_sitter::Tree {
        crate::syntax::parse(src, None)
    }

    #[test]
    fn simple_statements_are_imports_constant_assignments_and_plain_defs() {
        for (src, binds, reads) in [
            ("import torch.nn as nn\n", vec!["nn"], vec![]),
            ("import os.path\n", vec!["os"], vec![]),
            ("from a import b, c as d\n", vec!["b", "d"], vec![]),
            ("WIDTH = 8\n", vec!["WIDTH"], vec![]),
            ("EPS = base.eps * 2\n", vec!["EPS"], vec!["base"]),
            (
                "def f(x: list[int], n=WIDTH, *a, k=-1.5, **kw) -> dict[str, int]:\n    return g(x)\n",
                vec!["f"],
                vec!["WIDTH"],
            ),
        ] {
            let tree = first_stmt(src);
            let stmt = tree.root_node().named_child(0).unwrap();
            let s = simple_statement(stmt, src).unwrap_or_else(|| panic!("{src}"));
            assert_eq!(s.binds, binds, "{src}");
            assert_eq!(s.reads, reads, "{src}");
        }
        for src in [
            "from a import *\n",
            "WIDTH = make_width(8)\n",
            "X = table[0]\n",
            "x.y = 1\n",
            "f = lambda: 1\n",
            "a = b = 1\n",
            "def f(x=make(1)): pass\n",
            "@cache\ndef f(): pass\n",
            "print(1)\n",
        ] {
            let tree = first_stmt(src);
            let stmt = tree.root_node().named_child(0).unwrap();
            assert!(simple_statement(stmt, src).is_none(), "{src}");
        }
    }

    #[test]
    fn names_bound_covers_compound_statements_and_mutations() {
        let src = "if X:\n    import a.b\n    for i, j in y: pass\nelse:\n    C = 1\n    reg.add(f)\n    d[k] = 2\n\n\nclass K:\n    z = 1\n    table.update(z)\n    def m(self):\n        q = 1\n";
        let tree = first_stmt(src);
        let mut out = HashSet::new();
        let root = tree.root_node();
        let mut w = root.walk();
        for s in root.named_children(&mut w) {
            names_bound(s, src, &mut out);
        }
        let mut got: Vec<_> = out.into_iter().collect();
        got.sort();
        assert_eq!(got, ["C", "K", "a", "d", "i", "j", "reg", "table"]);
    }

    #[test]
    fn mentions_skip_function_bodies_but_not_defaults() {
        let src = "def f(x=WIDTH):\n    return DEPTH\n";
        let tree = first_stmt(src);
        let stmt = tree.root_node().named_child(0).unwrap();
        let names = |n: &str| HashSet::from([n.to_string()]);
        assert!(top_level_mentions(stmt, src, &names("WIDTH")));
        assert!(!top_level_mentions(stmt, src, &names("DEPTH")));
        assert!(mentions_word(src, &names("DEPTH")));
        assert!(!mentions_word("DEPTHS = 1", &names("DEPTH")));
    }
}
