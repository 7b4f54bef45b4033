//! FX201 on an integer counter of the module (`self.calls = 0` in `__init__`, `self.calls += 1`
//! in forward): keep the count in a registered buffer, updated in place. Dynamo guards on an
//! int attribute's value and recompiles when forward changes it; a buffer is a tensor input of
//! the graph, and an in-place add on it is part of the graph, so identical calls reuse it
//! (measured: tests/expected/recompiles' `buffer_counter` programs never recompile, and
//! scripts/recompiles/check_fixes.py runs each fixed program under torch.compile).
//!
//! The edits: `self.calls = 0` becomes `self.register_buffer("calls", torch.tensor(0),
//! persistent=False)` (not in the state dict, as the int was not), and `self.calls =
//! self.calls + k` becomes `self.calls += k`. Refused unless every other use of the attribute
//! in the class is an in-place `+=`/`-=` or an operand of arithmetic with a value the trace
//! saw as a tensor: a count compared, branched on or passed as an int would turn into a
//! data-dependent branch or a tensor where an int was. Unsafe: code outside the module that
//! reads the attribute gets a 0-d tensor.

use tree_sitter::{Node, Tree};

use super::text::{node_at, short, text, torch_name, visit};
use super::{Applicability, Edit, Facts, Fix, FixKind, Site};
use crate::syntax::Span;

type Refusal = Option<String>;

pub fn fixes(src: &str, tree: &Tree, site: &Site, facts: &Facts) -> Result<Vec<Fix>, Refusal> {
    let at = node_at(tree, site.span).ok_or(None)?;
    let Some(attr) = self_attribute_at(at, src) else {
        return Err(Some(
            "only a counter on `self` is moved to a buffer automatically".into(),
        ));
    };
    let name = text(attr.child_by_field_name("attribute").ok_or(None)?, src).to_string();
    let class = ancestor(attr, "class_definition").ok_or(None)?;
    let body = class.child_by_field_name("body").ok_or(None)?;
    let mut init: Option<(Node, Node)> = None;
    let mut edits = vec![];
    let mut problem: Option<String> = None;
    visit(body, &mut |n| {
        if problem.is_some() {
            return false;
        }
        // a nested class's `self` is another object
        if n.kind() == "class_definition" {
            return false;
        }
        if n.kind() != "attribute" || self_attribute_named(n, src).as_deref() != Some(&name) {
            return true;
        }
        match use_of(n, src, &name, facts) {
            Use::Init(stmt, value) if init.is_none() => init = Some((stmt, value)),
            Use::InPlace => {}
            Use::Rewrite(edit) => edits.push(edit),
            // the right-hand side of a rewritten `self.n = self.n + k`
            Use::Covered => {}
            Use::Init(stmt, _) | Use::Other(stmt) => {
                problem = Some(format!(
                    "`self.{name}` is used as a Python value (`{}`); as a tensor that use \
                     would change",
                    short(text(stmt, src))
                ))
            }
        }
        false
    });
    if let Some(p) = problem {
        return Err(Some(p));
    }
    let Some((init_stmt, value)) = init else {
        return Err(Some(format!(
            "`self.{name}` gets no integer in the class's own code (`self.{name} = 0`)"
        )));
    };
    let (torch, import) = torch_name(tree, src);
    edits.push(Edit {
        span: Span::of(init_stmt),
        new_text: format!(
            "self.register_buffer(\"{name}\", {torch}.tensor({}), persistent=False)",
            text(value, src)
        ),
    });
    edits.extend(import);
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    Ok(vec![Fix {
        title: format!("Keep `self.{name}` in a buffer updated in place"),
        applicability: Applicability::Unsafe,
        kind: FixKind::Buffer,
        edits,
    }])
}

/// How one `self.<name>` occurrence is used.
enum Use<'t> {
    /// `self.n = <int literal>` (the assignment statement, the literal)
    Init(Node<'t>, Node<'t>),
    /// `self.n += k`, `self.n -= k`
    InPlace,
    /// `self.n = self.n + k`: the edit making it `self.n += k`
    Rewrite(Edit),
    /// the read inside a rewritten assignment
    Covered,
    /// anything else (the statement holding it)
    Other(Node<'t>),
}

fn use_of<'t>(n: Node<'t>, src: &str, name: &str, facts: &Facts) -> Use<'t> {
    let parent = match n.parent() {
        Some(p) => p,
        None => return Use::Other(n),
    };
    let is_left = |p: Node| {
        p.child_by_field_name("left")
            .is_some_and(|l| l.id() == n.id())
    };
    match parent.kind() {
        "augmented_assignment" if is_left(parent) => {
            let op = parent
                .child_by_field_name("operator")
                .map(|o| text(o, src))
                .unwrap_or("");
            if matches!(op, "+=" | "-=") {
                Use::InPlace
            } else {
                Use::Other(parent)
            }
        }
        "assignment" if is_left(parent) => {
            let Some(right) = parent.child_by_field_name("right") else {
                return Use::Other(parent);
            };
            if is_int_literal(right, src) {
                let in_init = ancestor(parent, "function_definition")
                    .and_then(|f| f.child_by_field_name("name"))
                    .is_some_and(|f| text(f, src) == "__init__");
                return if in_init {
                    Use::Init(parent, right)
                } else {
                    Use::Other(parent)
                };
            }
            // `self.n = self.n + k` / `- k`
            let grows = right.kind() == "binary_operator"
                && right
                    .child_by_field_name("left")
                    .is_some_and(|l| self_attribute_named(l, src).as_deref() == Some(name))
                && right
                    .child_by_field_name("operator")
                    .is_some_and(|o| matches!(text(o, src), "+" | "-"));
            match (grows, right.child_by_field_name("right")) {
                (true, Some(k)) if !mentions(k, src, name) => {
                    let op = text(right.child_by_field_name("operator").unwrap(), src);
                    Use::Rewrite(Edit {
                        span: Span::new(n.end_byte(), parent.end_byte()),
                        new_text: format!(" {op}= {}", text(k, src)),
                    })
                }
                _ => Use::Other(parent),
            }
        }
        "binary_operator" => {
            // the read of a rewritten `self.n = self.n + k`
            if parent
                .parent()
                .filter(|a| a.kind() == "assignment")
                .and_then(|a| a.child_by_field_name("left"))
                .is_some_and(|l| self_attribute_named(l, src).as_deref() == Some(name))
            {
                return Use::Covered;
            }
            // arithmetic the trace recorded as a tensor op: the other operand is a tensor
            // (numbers alone make no node), and a 0-d tensor of the same value gives the same
            // result
            let op = parent
                .child_by_field_name("operator")
                .map(|o| text(o, src))
                .unwrap_or("");
            let with_tensor = facts.tensor_values.contains(&Span::of(parent));
            if matches!(op, "+" | "-" | "*") && with_tensor {
                Use::InPlace
            } else {
                Use::Other(statement_of(parent))
            }
        }
        _ => Use::Other(statement_of(parent)),
    }
}

fn is_int_literal(n: Node, src: &str) -> bool {
    match n.kind() {
        "integer" => true,
        "unary_operator" => {
            n.child_by_field_name("argument")
                .is_some_and(|a| a.kind() == "integer")
                && text(n, src).starts_with('-')
        }
        _ => false,
    }
}

fn mentions(n: Node, src: &str, name: &str) -> bool {
    let mut found = false;
    visit(n, &mut |m| {
        if self_attribute_named(m, src).as_deref() == Some(name) {
            found = true;
        }
        !found
    });
    found
}

/// `self.<name>` → name.
fn self_attribute_named(n: Node, src: &str) -> Option<String> {
    if n.kind() != "attribute" {
        return None;
    }
    let obj = n.child_by_field_name("object")?;
    if obj.kind() != "identifier" || text(obj, src) != "self" {
        return None;
    }
    Some(text(n.child_by_field_name("attribute")?, src).to_string())
}

/// The `self.x` the finding's span stands on, inside it or around it.
fn self_attribute_at<'t>(at: Node<'t>, src: &str) -> Option<Node<'t>> {
    let mut n = Some(at);
    while let Some(x) = n {
        if self_attribute_named(x, src).is_some() {
            return Some(x);
        }
        if x.kind().ends_with("statement") || x.kind() == "assignment" {
            break;
        }
        n = x.parent();
    }
    let mut found = None;
    visit(at, &mut |m| {
        if found.is_none() && self_attribute_named(m, src).is_some() {
            found = Some(m);
        }
        found.is_none()
    });
    found
}

fn ancestor<'t>(mut n: Node<'t>, kind: &str) -> Option<Node<'t>> {
    loop {
        n = n.parent()?;
        if n.kind() == kind {
            return Some(n);
        }
    }
}

fn statement_of(mut n: Node) -> Node {
    while let Some(p) = n.parent() {
        if p.kind() == "block" || p.kind() == "module" {
            return n;
        }
        n = p;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::super::testing::{apply_fix, fixes_with, site};
    use super::super::{for_site, Facts, FixKind};
    use crate::syntax::{parse, Span};

    const PLAIN: &str = "import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n    \
        def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n        \
        self.calls = 0\n\n    def forward(self, x):\n        h = self.fc(x)\n        \
        self.calls = self.calls + 1\n        return h\n";

    fn buffer_fix(src: &str, needle: &str, tensors: &[&str]) -> Result<String, String> {
        let mut facts = Facts::default();
        for t in tensors {
            let at = src.find(t).unwrap();
            facts.tensor_values.insert(Span::new(at, at + t.len()));
        }
        let s = site(src, "FX201", needle);
        let tree = parse(src, None);
        let fs = for_site(src, &tree, &s, &facts);
        match fs.fixes.iter().find(|f| f.kind == FixKind::Buffer) {
            Some(f) => Ok(apply_fix(src, f)),
            None => Err(fs.refusal.unwrap_or_default()),
        }
    }

    #[test]
    fn a_counter_moves_to_a_buffer_added_in_place() {
        let out = buffer_fix(PLAIN, "self.calls = self.calls", &[]).unwrap();
        assert!(
            out.contains(
                "        self.register_buffer(\"calls\", torch.tensor(0), persistent=False)\n"
            ),
            "{out}"
        );
        assert!(out.contains("        self.calls += 1\n"), "{out}");
        // unsafe: `fix` applies it only with --unsafe-fixes
        let fs = fixes_with(PLAIN, "FX201", "self.calls = self.calls", &[]);
        let f = fs.fixes.iter().find(|f| f.kind == FixKind::Buffer).unwrap();
        assert_eq!(f.applicability, super::super::Applicability::Unsafe);
    }

    #[test]
    fn a_count_used_with_a_tensor_stays_a_valid_operand() {
        let src = PLAIN.replace(
            "        return h\n",
            "        h = h * self.calls\n        return h\n",
        );
        // without the trace's word, the product may be of numbers
        let why = buffer_fix(&src, "self.calls = self.calls", &[]).unwrap_err();
        assert!(why.contains("h = h * self.calls"), "{why}");
        // with the trace's word that the product is a tensor op, the count is a 0-d tensor
        // operand of the same value
        let mut facts = Facts::default();
        let product = src.find("h * self.calls").unwrap();
        facts
            .tensor_values
            .insert(Span::new(product, product + "h * self.calls".len()));
        let tree = parse(&src, None);
        let fs = for_site(
            &src,
            &tree,
            &site(&src, "FX201", "self.calls = self.calls"),
            &facts,
        );
        let f = fs.fixes.iter().find(|f| f.kind == FixKind::Buffer).unwrap();
        let out = apply_fix(&src, f);
        assert!(
            out.contains("h = h * self.calls") && out.contains("self.calls += 1"),
            "{out}"
        );
    }

    #[test]
    fn a_count_branched_on_or_not_an_int_is_refused() {
        let branch = PLAIN.replace(
            "        return h\n",
            "        if self.calls % 2 == 0:\n            h = h * 2\n        return h\n",
        );
        let why = buffer_fix(&branch, "self.calls = self.calls", &[]).unwrap_err();
        assert!(why.contains("self.calls % 2"), "{why}");
        let flag = PLAIN.replace("self.calls = 0", "self.calls = False");
        let why = buffer_fix(&flag, "self.calls = self.calls", &[]).unwrap_err();
        assert!(why.contains("`self.calls = False`"), "{why}");
        let elsewhere = PLAIN.replace("        self.calls = 0\n", "");
        let why = buffer_fix(&elsewhere, "self.calls = self.calls", &[]).unwrap_err();
        assert!(why.contains("gets no integer"), "{why}");
        let global = "import torch\nN = 0\n\n\nclass M(torch.nn.Module):\n    \
                      def forward(self, x):\n        global N\n        N += 1\n        return x\n";
        assert!(buffer_fix(global, "N += 1", &[]).is_err());
    }

    #[test]
    fn torch_imported_under_another_name_or_not_at_all() {
        let aliased = PLAIN.replace("import torch\n", "import torch as th\n");
        let out = buffer_fix(&aliased, "self.calls = self.calls", &[]).unwrap();
        assert!(out.contains("th.tensor(0)"), "{out}");
        let without = PLAIN.replace("import torch\n", "");
        let out = buffer_fix(&without, "self.calls = self.calls", &[]).unwrap();
        assert!(
            out.contains("from torch import nn\nimport torch\n") && out.contains("torch.tensor(0)"),
            "{out}"
        );
    }
}
