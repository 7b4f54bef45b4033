//! Tree-sitter queries from `queries/*.scm`, compiled once per process.

use super::FieldExt;
use std::sync::OnceLock;
use tree_sitter::{Query, QueryCursor, StreamingIterator, Tree};

use super::{python_language, Span};

fn compiled(cell: &'static OnceLock<Query>, source: &str) -> &'static Query {
    cell.get_or_init(|| Query::new(&python_language(), source).expect("bundled query compiles"))
}

pub fn classes() -> &'static Query {
    static Q: OnceLock<Query> = OnceLock::new();
    compiled(&Q, include_str!("../../queries/classes.scm"))
}

pub fn imports() -> &'static Query {
    static Q: OnceLock<Query> = OnceLock::new();
    compiled(&Q, include_str!("../../queries/imports.scm"))
}

/// A class definition found in a file: its name, the span of the whole definition, and the
/// source text of its base-class expressions.
#[derive(Clone, Debug)]
pub struct ClassSite {
    pub name: String,
    pub span: Span,
    pub name_span: Span,
    pub bases: Vec<String>,
    /// Nesting: true for classes defined at module level.
    pub top_level: bool,
}

pub fn class_sites(tree: &Tree, src: &str) -> Vec<ClassSite> {
    let q = classes();
    let idx_name = q.capture_index_for_name("class.name").unwrap();
    let idx_bases = q.capture_index_for_name("class.bases").unwrap();
    let idx_class = q.capture_index_for_name("class").unwrap();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(q, tree.root_node(), src.as_bytes());
    let mut out = Vec::new();
    while let Some(m) = matches.next() {
        let mut site = ClassSite {
            name: String::new(),
            span: Span::default(),
            name_span: Span::default(),
            bases: vec![],
            top_level: false,
        };
        for c in m.captures() {
            if c.index == idx_name {
                site.name = super::text(c.node, src).to_string();
                site.name_span = Span::of(c.node);
            } else if c.index == idx_class {
                site.span = Span::of(c.node);
                let mut parent = c.node.parent();
                if parent
                    .map(|p| p.kind() == "decorated_definition")
                    .unwrap_or(false)
                {
                    parent = parent.and_then(|p| p.parent());
                }
                site.top_level = parent.map(|p| p.kind() == "module").unwrap_or(false);
            } else if c.index == idx_bases {
                let mut w = c.node.walk();
                for arg in c.node.named_children(&mut w) {
                    if arg.kind() != "keyword_argument" && arg.kind() != "comment" {
                        site.bases.push(super::text(arg, src).to_string());
                    }
                }
            }
        }
        out.push(site);
    }
    out.sort_by_key(|s| s.span.start);
    out
}

/// The module-level classes only, read off the root's children: the same sites as
/// `class_sites(..).filter(top_level)` without a query over every node of the file, which
/// dominated re-analysis time on large files in the language server.
pub fn top_level_class_sites(tree: &Tree, src: &str) -> Vec<ClassSite> {
    let root = tree.root_node();
    let mut w = root.walk();
    let mut out = Vec::new();
    for node in root.named_children(&mut w) {
        let class = match node.kind() {
            "class_definition" => node,
            "decorated_definition" => match node.field("definition") {
                Some(d) if d.kind() == "class_definition" => d,
                _ => continue,
            },
            _ => continue,
        };
        let (Some(name), Some(_body)) = (class.field("name"), class.field("body")) else {
            continue;
        };
        if name.kind() != "identifier" {
            continue;
        }
        let mut bases = Vec::new();
        if let Some(args) = class.field("superclasses") {
            let mut aw = args.walk();
            for arg in args.named_children(&mut aw) {
                if arg.kind() != "keyword_argument" && arg.kind() != "comment" {
                    bases.push(super::text(arg, src).to_string());
                }
            }
        }
        out.push(ClassSite {
            name: super::text(name, src).to_string(),
            span: Span::of(class),
            name_span: Span::of(name),
            bases,
            top_level: true,
        });
    }
    out
}

/// Spans of every import statement, in source order.
pub fn import_spans(tree: &Tree, src: &str) -> Vec<Span> {
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(imports(), tree.root_node(), src.as_bytes());
    let mut out = Vec::new();
    while let Some(m) = matches.next() {
        for c in m.captures() {
            out.push(Span::of(c.node));
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_level_sites_match_the_query() {
        let src = "import torch\nclass A(nn.Module, metaclass=M):\n    class Inner:\n        pass\n@dataclass\nclass B(A):  # c\n    x = 1\ndef f():\n    class Local: pass\n";
        let tree = crate::syntax::parse(src, None);
        let want: Vec<_> = class_sites(&tree, src)
            .into_iter()
            .filter(|s| s.top_level)
            .map(|s| (s.name, s.span, s.name_span, s.bases))
            .collect();
        let got: Vec<_> = top_level_class_sites(&tree, src)
            .into_iter()
            .map(|s| (s.name, s.span, s.name_span, s.bases))
            .collect();
        assert_eq!(got, want);
        assert_eq!(got.len(), 2);
    }
}
