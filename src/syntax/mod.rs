//! Stage 1: source text → tree-sitter syntax tree, plus the position bookkeeping every later
//! stage shares. Everything downstream speaks byte offsets; conversion to lines and columns
//! happens only at the edges (CLI output, JSON, the language server).
//!
//! `parse(text, old_tree)`; `Span` is the byte range every stage uses; `LineIndex` counts `\n`,
//! `\r\n` and lone `\r` as line breaks, as the LSP does, and every row (positions, `# noqa`) comes
//! from it; `recover` blanks lines that hold syntax errors, so an unclosed paren does not hide the
//! rest of the file. `KindExt::kind_name` and `FieldExt::field` read kinds and field ids from
//! tables made once from the grammar (the evaluator asks for them on every node it runs);
//! `node_cache` keeps each node's children and their fields per thread for the trees
//! `SourceFile::tree` hands out (a `Weak` of the tree, never the tree), since a cursor's step
//! through hidden grammar nodes cost hundreds of instructions each time a statement ran again.

mod fields;
mod kinds;
mod line_index;
mod node_cache;
pub mod queries;

pub use fields::FieldExt;
pub use kinds::KindExt;
pub use line_index::{LineCol, LineIndex};
pub use node_cache::{
    children, definition_at, hold as cache_children_of, named_children, Children,
};

use tree_sitter::{Node, Parser, Tree};

/// A byte range in one source file.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }
    pub fn of(node: Node<'_>) -> Self {
        Span {
            start: node.start_byte(),
            end: node.end_byte(),
        }
    }
    pub fn contains(&self, offset: usize) -> bool {
        self.start <= offset && offset <= self.end
    }
    pub fn cover(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

pub fn python_language() -> tree_sitter::Language {
    tree_sitter_python::LANGUAGE.into()
}

/// Parses Python source. `old` is the previous tree after `Tree::edit`, for incremental reparses.
///
/// A lone `\r` is a line break to Python (and to `LineIndex`), but not to the tree-sitter
/// grammar, so it is parsed as `\n`: one byte for one byte, every span stays the same. An
/// incremental edit must then cover the byte before it when that byte is a `\r` (whether it is
/// lone depends on the byte after it); `lsp::document` does.
pub fn parse(text: &str, old: Option<&Tree>) -> Tree {
    let _clock = crate::phase_clock::enter(crate::phase_clock::Phase::Parse);
    let normalized;
    let text = if has_lone_cr(text) {
        normalized = lone_cr_as_lf(text);
        normalized.as_str()
    } else {
        text
    };
    thread_local! {
        static PARSER: std::cell::RefCell<Parser> = std::cell::RefCell::new(new_parser());
    }
    PARSER.with(|p| {
        let mut p = p.borrow_mut();
        // tree-sitter only returns None when cancelled or without a language; neither applies.
        p.parse(text, old)
            .unwrap_or_else(|| new_parser().parse(text, None).expect("python parser"))
    })
}

fn has_lone_cr(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr_iter(b'\r', b).any(|i| b.get(i + 1) != Some(&b'\n'))
}

/// `text` with every `\r` not followed by `\n` replaced by `\n` (same length, same offsets).
fn lone_cr_as_lf(text: &str) -> String {
    let mut b = text.as_bytes().to_vec();
    for i in 0..b.len() {
        if b[i] == b'\r' && b.get(i + 1) != Some(&b'\n') {
            b[i] = b'\n';
        }
    }
    // ASCII for ASCII: still valid UTF-8.
    String::from_utf8(b).unwrap_or_else(|_| text.to_string())
}

fn new_parser() -> Parser {
    let mut p = Parser::new();
    p.set_language(&python_language())
        .expect("tree-sitter-python is ABI compatible");
    p
}

/// A node's named children without the extras tree-sitter places among any node's children:
/// comments (`(  # why\n  a + b\n)`) and backslash line continuations (`f(x) \\\n if c else
/// None`). The operands of an expression or the parts of a statement are these, in order.
pub fn operands(node: Node<'_>) -> Vec<Node<'_>> {
    node_cache::operands(node).collect()
}

/// The first of [`operands`]: of a parenthesis, a splat, a `yield`.
pub fn first_operand(node: Node<'_>) -> Option<Node<'_>> {
    node_cache::operands(node).next()
}

/// The methods of Python's builtin containers (list, dict, set) that change the receiver in
/// place: what syntax-level passes count as a write to the object a method is called on.
pub const CONTAINER_MUTATORS: &[&str] = &[
    "append",
    "extend",
    "insert",
    "pop",
    "popitem",
    "remove",
    "clear",
    "update",
    "setdefault",
    "add",
    "discard",
    "sort",
    "reverse",
];

/// The source text of a node.
pub fn text<'a>(node: Node<'_>, src: &'a str) -> &'a str {
    src.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

/// Error recovery for analysis: while the tree has errors, blank the line where the first one
/// starts (spaces, so every byte offset stays valid) and reparse. An unclosed parenthesis would
/// otherwise swallow every class below it. Returns the text and tree to analyse, and the
/// errors of the original text.
pub fn recover(
    text: std::sync::Arc<str>,
    tree: Tree,
) -> (std::sync::Arc<str>, Tree, Vec<(Span, String)>) {
    let Some(first) = first_error(&tree) else {
        return (text, tree, vec![]);
    };
    let errors = vec![first];
    let mut bytes = text.as_bytes().to_vec();
    let mut current = tree;
    for _ in 0..8 {
        let Some((span, _)) = first_error(&current) else {
            break;
        };
        let start = bytes[..span.start.min(bytes.len())]
            .iter()
            .rposition(|b| *b == b'\n' || *b == b'\r')
            .map(|p| p + 1)
            .unwrap_or(0);
        let end = bytes[span.start.min(bytes.len())..]
            .iter()
            .position(|b| *b == b'\n' || *b == b'\r')
            .map(|p| p + span.start)
            .unwrap_or(bytes.len());
        if bytes[start..end].iter().all(|b| *b == b' ') {
            break;
        }
        for b in &mut bytes[start..end] {
            // Keep UTF-8 valid: every byte of the line becomes a space.
            *b = b' ';
        }
        let Ok(s) = std::str::from_utf8(&bytes) else {
            break;
        };
        current = parse(s, None);
    }
    let recovered = String::from_utf8(bytes).unwrap_or_else(|_| text.to_string());
    (std::sync::Arc::from(recovered), current, errors)
}

/// First syntax error (ERROR or MISSING node) in the tree, if any.
pub fn first_error(tree: &Tree) -> Option<(Span, String)> {
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_missing() {
            return Some((
                Span::of(node),
                format!("syntax error: missing `{}`", node.kind()),
            ));
        }
        if node.is_error() {
            return Some((Span::of(node), "syntax error".to_string()));
        }
        if node.has_error() {
            let children: Vec<_> = node.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }
    Some((Span::of(root), "syntax error".to_string()))
}

/// The Python the repository holds (the standard-library classes the evaluator runs, the test
/// fixtures): (path, text) of each readable file, for tests that check a walk of every tree.
#[cfg(test)]
pub(crate) fn repository_python() -> Vec<(std::path::PathBuf, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    for dir in ["src/eval/stdlib/python", "tests/fixtures"] {
        let mut todo = vec![root.join(dir)];
        while let Some(d) = todo.pop() {
            for entry in std::fs::read_dir(&d).expect("repository folder").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    todo.push(path);
                } else if path.extension().is_some_and(|e| e == "py") {
                    if let Ok(text) = std::fs::read_to_string(&path) {
                        files.push((path, text));
                    }
                }
            }
        }
    }
    assert!(files.len() > 50, "{} files", files.len());
    files
}
