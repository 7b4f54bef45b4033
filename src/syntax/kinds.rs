//! A node's kind name without tree-sitter's per-call `strlen` and UTF-8 check.
//!
//! `Node::kind` turns the grammar's C string into `&str` on every call (`CStr::to_str`), and
//! the evaluator matches on the kind of every statement and expression it runs: that
//! conversion was a few percent of a `check`. The names are read from the grammar once and
//! indexed by `kind_id`, whose symbol has the same name as the one `kind` reads (tree-sitter
//! maps a symbol to the first symbol of its name).

use std::sync::LazyLock;

use tree_sitter::Node;

static KIND_NAMES: LazyLock<Vec<Box<str>>> = LazyLock::new(|| {
    let language = super::python_language();
    (0..language.node_kind_count() as u16)
        .map(|id| Box::from(language.node_kind_for_id(id).unwrap_or("")))
        .collect()
});

pub trait KindExt<'tree> {
    /// `kind()`, from a table.
    fn kind_name(&self) -> &'tree str;
}

impl<'tree> KindExt<'tree> for Node<'tree> {
    fn kind_name(&self) -> &'tree str {
        match KIND_NAMES.get(usize::from(self.kind_id())) {
            Some(name) if !name.is_empty() => name,
            // `ERROR`: the builtin error symbol is not in the table.
            _ => self.kind(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_names_as_kind() {
        let text = "import a.b as c\nfrom . import (d, e)\n\n@dec\nclass C(B, metaclass=M):\n    x: int = 1\n    def f(self, *a, k=2, **kw) -> None:\n        '''doc'''\n        if a and not k: return [i async for i in a if i]\n        elif k: raise E from None\n        else: yield from {1: 2, **kw}\n        with open(f'{x!r:>4}') as (g, h): pass\n        try: del a[1:2, ...]\n        except* (E, F) as e: global z\n        finally: lambda q=1: q ** -2\n        match k:\n            case [1, *r] | {\"k\": _} if r: pass\n\nx = (1 +\ndef broken(:\n";
        let tree = super::super::parse(text, None);
        let mut todo = vec![tree.root_node()];
        let mut compared = 0;
        let mut errors = 0;
        while let Some(node) = todo.pop() {
            assert_eq!(node.kind_name(), node.kind(), "at {:?}", node.byte_range());
            compared += 1;
            errors += usize::from(node.is_error() || node.is_missing());
            let mut cursor = node.walk();
            todo.extend(node.children(&mut cursor));
        }
        assert!(compared > 200, "only {compared} nodes");
        assert!(errors > 0, "the text has no error node to compare");
    }
}
