//! Shared helpers: line structure (indentation, the file's line ending), the name `torch` is
//! bound to, and what an expression reads or may do.

use tree_sitter::{Node, Tree};

use super::Edit;
use crate::syntax::Span;

pub fn text<'s>(n: Node, src: &'s str) -> &'s str {
    src.get(n.byte_range()).unwrap_or("")
}

/// The file's line ending, from its first line break (`\n` when it has none).
pub fn eol(src: &str) -> &'static str {
    match src.find(['\n', '\r']) {
        Some(i) if src[i..].starts_with("\r\n") => "\r\n",
        Some(i) if src[i..].starts_with('\r') => "\r",
        _ => "\n",
    }
}

pub fn line_start(src: &str, offset: usize) -> usize {
    src[..offset]
        .rfind(['\n', '\r'])
        .map(|p| p + 1)
        .unwrap_or(0)
}

/// End of the line's content (before its line break).
pub fn line_end(src: &str, offset: usize) -> usize {
    src[offset..]
        .find(['\n', '\r'])
        .map(|p| p + offset)
        .unwrap_or(src.len())
}

/// Start of the next line (after the line break), or the end of the text.
pub fn next_line_start(src: &str, offset: usize) -> usize {
    let end = line_end(src, offset);
    if src[end..].starts_with("\r\n") {
        end + 2
    } else if end < src.len() {
        end + 1
    } else {
        end
    }
}

/// The indentation of a statement that starts its line; None when something precedes it on
/// the line (e.g. `if c: y = a` on one line).
pub fn indent_of(src: &str, n: Node) -> Option<String> {
    let s = line_start(src, n.start_byte());
    let prefix = &src[s..n.start_byte()];
    prefix
        .chars()
        .all(|c| c == ' ' || c == '\t')
        .then(|| prefix.to_string())
}

/// One level of indentation as the file writes it: the difference between a statement in a
/// block and the statement that owns the block, else four spaces (a tab in tab-indented code).
pub fn indent_unit(src: &str, stmt: Node) -> String {
    let inner = indent_of(src, stmt);
    let outer = stmt
        .parent()
        .filter(|b| b.kind() == "block")
        .and_then(|b| b.parent())
        .and_then(|owner| {
            // `else`/`elif` clauses sit at the indentation of their `if`.
            let owner = if matches!(owner.kind(), "else_clause" | "elif_clause") {
                owner.parent().unwrap_or(owner)
            } else {
                owner
            };
            indent_of(src, owner)
        });
    if let (Some(i), Some(o)) = (&inner, &outer) {
        if i.len() > o.len() && i.starts_with(o.as_str()) {
            return i[o.len()..].to_string();
        }
    }
    if inner.as_deref().is_some_and(|i| i.starts_with('\t')) {
        "\t".into()
    } else {
        "    ".into()
    }
}

/// The name the module binds `torch` to at top level (`import torch`, `import torch as th`),
/// or `torch` plus the edit that adds `import torch`.
pub fn torch_name(tree: &Tree, src: &str) -> (String, Option<Edit>) {
    let root = tree.root_node();
    let mut c = root.walk();
    let mut last_import: Option<Node> = None;
    let mut docstring_end: Option<usize> = None;
    for (i, stmt) in root.named_children(&mut c).enumerate() {
        match stmt.kind() {
            "import_statement" => {
                let mut cc = stmt.walk();
                for name in stmt.children_by_field_name("name", &mut cc) {
                    match name.kind() {
                        "dotted_name" if text(name, src) == "torch" => {
                            return ("torch".into(), None)
                        }
                        "aliased_import" => {
                            let (Some(n), Some(a)) = (
                                name.child_by_field_name("name"),
                                name.child_by_field_name("alias"),
                            ) else {
                                continue;
                            };
                            if text(n, src) == "torch" {
                                return (text(a, src).to_string(), None);
                            }
                        }
                        _ => {}
                    }
                }
                last_import = Some(stmt);
            }
            "import_from_statement" | "future_import_statement" => last_import = Some(stmt),
            "expression_statement"
                if i == 0 && stmt.named_child(0).is_some_and(|s| s.kind() == "string") =>
            {
                docstring_end = Some(stmt.end_byte());
            }
            "comment" => {}
            _ => {}
        }
    }
    let nl = eol(src);
    let edit = match (last_import, docstring_end) {
        (Some(imp), _) => {
            let at = next_line_start(src, imp.end_byte());
            // A file that ends right after the import has no line break to stand on.
            let text = if at == src.len() && !src[..at].ends_with(['\n', '\r']) {
                format!("{nl}import torch{nl}")
            } else {
                format!("import torch{nl}")
            };
            Edit {
                span: Span::new(at, at),
                new_text: text,
            }
        }
        (None, Some(end)) => {
            let at = next_line_start(src, end);
            let text = if at == src.len() && !src[..at].ends_with(['\n', '\r']) {
                format!("{nl}import torch{nl}")
            } else {
                format!("import torch{nl}")
            };
            Edit {
                span: Span::new(at, at),
                new_text: text,
            }
        }
        (None, None) => Edit {
            span: Span::new(0, 0),
            new_text: format!("import torch{nl}"),
        },
    };
    ("torch".into(), Some(edit))
}

/// Names an expression reads (identifiers that are not attribute names or keyword names).
pub fn reads(n: Node, src: &str, out: &mut Vec<String>) {
    match n.kind() {
        "identifier" => {
            let parent = n.parent();
            let is_attr_name = parent.is_some_and(|p| {
                p.kind() == "attribute"
                    && p.child_by_field_name("attribute").map(|a| a.id()) == Some(n.id())
            });
            let is_kw_name = parent.is_some_and(|p| {
                p.kind() == "keyword_argument"
                    && p.child_by_field_name("name").map(|a| a.id()) == Some(n.id())
            });
            if !is_attr_name && !is_kw_name {
                out.push(text(n, src).to_string());
            }
        }
        _ => {
            let mut c = n.walk();
            for ch in n.named_children(&mut c) {
                reads(ch, src, out);
            }
        }
    }
}

const IMPURE_FUNCTIONS: &[&str] = &[
    "print",
    "input",
    "open",
    "exec",
    "eval",
    "setattr",
    "delattr",
    "breakpoint",
    "next",
];
const IMPURE_METHODS: &[&str] = &[
    "item",
    "tolist",
    "numpy",
    "backward",
    "write",
    "register_buffer",
    "register_parameter",
    "requires_grad_",
    "copy_",
    "fill_",
    "zero_",
];
const RANDOM: &[&str] = &[
    "rand",
    "randn",
    "randint",
    "randperm",
    "rand_like",
    "randn_like",
    "randint_like",
    "bernoulli",
    "multinomial",
    "normal",
    "poisson",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
    "rrelu",
    "gumbel_softmax",
];
const LOG_METHODS: &[&str] = &[
    "debug",
    "info",
    "warning",
    "warn",
    "error",
    "exception",
    "critical",
    "fatal",
    "log",
];

/// Why evaluating `n` unconditionally could change what the program does, if it could: calls
/// that mutate (in-place `op_` methods, container methods), I/O, logging, clocks, randomness,
/// assignments inside expressions, `.item()`-style conversions, `yield`/`await`, lambdas and
/// comprehensions (scope the rewrite does not model).
pub fn impurity(n: Node, src: &str) -> Option<String> {
    if let Some(p) = own_impurity(n, src) {
        return Some(p);
    }
    let mut c = n.walk();
    let children: Vec<Node> = n.named_children(&mut c).collect();
    children.into_iter().find_map(|ch| impurity(ch, src))
}

/// `impurity` of the node itself, not looking into its children.
pub fn own_impurity(n: Node, src: &str) -> Option<String> {
    match n.kind() {
        "named_expression" => Some(format!("`{}` assigns inside an expression", text(n, src))),
        "yield" | "await" => Some(format!("`{}` suspends the function", text(n, src))),
        "lambda"
        | "list_comprehension"
        | "set_comprehension"
        | "dictionary_comprehension"
        | "generator_expression" => Some(format!("`{}` has its own scope", short(text(n, src)))),
        "call" => {
            let func = n.child_by_field_name("function");
            let name = func
                .map(|f| match f.kind() {
                    "attribute" => f
                        .child_by_field_name("attribute")
                        .map(|a| text(a, src))
                        .unwrap_or(""),
                    _ => text(f, src),
                })
                .unwrap_or("");
            let full = func.map(|f| text(f, src)).unwrap_or("");
            let is_method = func.is_some_and(|f| f.kind() == "attribute");
            let inplace = name.ends_with('_') && !name.ends_with("__") && name.len() > 1;
            let bad = inplace
                || (!is_method && IMPURE_FUNCTIONS.contains(&name))
                || (is_method
                    && (IMPURE_METHODS.contains(&name)
                        // a tensor's `sort` returns new tensors
                        || crate::syntax::CONTAINER_MUTATORS.contains(&name)
                            && !matches!(name, "sort" | "reverse")))
                || RANDOM.contains(&name)
                || full.starts_with("time.")
                || full.starts_with("logging.")
                || full.starts_with("random.")
                || full.starts_with("np.random.")
                || (is_method
                    && LOG_METHODS.contains(&name)
                    && func
                        .and_then(|f| f.child_by_field_name("object"))
                        .is_some_and(|o| text(o, src).to_ascii_lowercase().contains("log")))
                || (!is_method && matches!(name, "int" | "float" | "bool"));
            bad.then(|| {
                format!(
                    "`{}` has a side effect or leaves the tensor world",
                    short(text(n, src))
                )
            })
        }
        _ => None,
    }
}

/// Whether an expression can be a `torch.where` operand: not a container, string or `None`.
pub fn operand_problem(n: Node, src: &str) -> Option<String> {
    match n.kind() {
        "tuple"
        | "list"
        | "dictionary"
        | "set"
        | "string"
        | "concatenated_string"
        | "none"
        | "expression_list"
        | "pattern_list" => Some(format!(
            "`{}` is not a tensor or number, so torch.where cannot select it",
            short(text(n, src))
        )),
        "parenthesized_expression" => n.named_child(0).and_then(|i| operand_problem(i, src)),
        _ => None,
    }
}

pub fn short(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    let mut out: String = line.chars().take(50).collect();
    if line.chars().count() > 50 || s.lines().count() > 1 {
        out.push('…');
    }
    out
}

/// The innermost function definition containing `n`.
pub fn enclosing_function(n: Node) -> Option<Node> {
    let mut cur = n.parent();
    while let Some(p) = cur {
        if p.kind() == "function_definition" {
            return Some(p);
        }
        cur = p.parent();
    }
    None
}

/// Whether `name` has a value before `before` in `func`: a parameter, or the target of an
/// assignment (or `for`/`with` binding) that ends before that offset.
pub fn bound_before(func: Node, src: &str, name: &str, before: usize) -> bool {
    if let Some(params) = func.child_by_field_name("parameters") {
        let mut ids = Vec::new();
        reads(params, src, &mut ids);
        if ids.iter().any(|i| i == name) {
            return true;
        }
    }
    let Some(body) = func.child_by_field_name("body") else {
        return false;
    };
    let mut found = false;
    visit(body, &mut |n| {
        if found || n.start_byte() >= before {
            return false;
        }
        let target = match n.kind() {
            "assignment" | "augmented_assignment" => n.child_by_field_name("left"),
            "for_statement" => n.child_by_field_name("left"),
            "as_pattern" => n.child_by_field_name("alias"),
            "function_definition" | "class_definition" | "lambda" => return false,
            _ => None,
        };
        if let Some(t) = target {
            if n.end_byte() <= before || n.kind() == "for_statement" {
                let mut ids = Vec::new();
                bound_names(t, src, &mut ids);
                if ids.iter().any(|i| i == name) {
                    found = true;
                }
            }
        }
        true
    });
    found
}

/// Names bound by an assignment target (`a`, `a, b`, `(a, [b, c])`; not `a.x` or `a[i]`).
pub fn bound_names(t: Node, src: &str, out: &mut Vec<String>) {
    match t.kind() {
        "identifier" => out.push(text(t, src).to_string()),
        "pattern_list"
        | "tuple_pattern"
        | "list_pattern"
        | "tuple"
        | "list"
        | "parenthesized_expression"
        | "list_splat_pattern" => {
            let mut c = t.walk();
            for ch in t.named_children(&mut c) {
                bound_names(ch, src, out);
            }
        }
        _ => {}
    }
}

/// Pre-order walk; `f` returns whether to descend.
pub fn visit<'t>(n: Node<'t>, f: &mut impl FnMut(Node<'t>) -> bool) {
    if !f(n) {
        return;
    }
    let mut c = n.walk();
    let children: Vec<Node<'t>> = n.named_children(&mut c).collect();
    for ch in children {
        visit(ch, f);
    }
}

/// Comments inside `n` (tree-sitter keeps them as extra nodes), in order.
pub fn comments<'s>(n: Node, src: &'s str) -> Vec<&'s str> {
    let mut out = Vec::new();
    visit(n, &mut |m| {
        if m.kind() == "comment" {
            out.push(text(m, src));
        }
        true
    });
    out
}

/// The smallest named node covering `span` exactly or, failing that, the smallest around it.
pub fn node_at<'t>(tree: &'t Tree, span: Span) -> Option<Node<'t>> {
    tree.root_node()
        .named_descendant_for_byte_range(span.start, span.end)
}

/// Whether a string literal (whose content may span lines) covers `offset`.
pub fn in_string(tree: &Tree, offset: usize) -> bool {
    let mut n = tree.root_node().descendant_for_byte_range(offset, offset);
    while let Some(x) = n {
        if matches!(x.kind(), "string" | "concatenated_string") {
            return x.start_byte() < offset && offset < x.end_byte();
        }
        n = x.parent();
    }
    false
}
