//! Each node's children, read from tree-sitter once per node and kept for the thread.
//!
//! The evaluator runs the same statements again and again (every layer of a 32-layer model,
//! every class that builds it), and every run asked tree-sitter for the same children: a
//! cursor's step to the next sibling cost about 640 instructions and `child_by_field_id`
//! about 460 (hidden grammar nodes are walked through each time), together about a fifth
//! of a `check` of modeling_llama.py. Here a node's children, with their field ids, are
//! read once into a table; later reads are a hash lookup.
//!
//! Only trees handed out as `Arc<Tree>` and announced with [`hold`] are cached. A table keeps
//! a `Weak` of its tree, never the tree: a released tree is freed as before, and a table
//! whose tree is gone is dropped when next looked at, so a new tree that happens to reuse
//! the address is never read through an old table. A held tree must not be edited in place
//! (`Tree::edit` needs it unshared; the `Arc`s this is used with never are).

use std::cell::RefCell;
use std::collections::HashMap;
use std::num::NonZeroU16;
use std::rc::Rc;
use std::sync::{Arc, Weak};

use tree_sitter::ffi::TSNode;
use tree_sitter::{Node, Tree};

type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// Children kept in all, past which every table is emptied (about 40 bytes each).
const MAX_CACHED_CHILDREN: usize = 1 << 18;

#[derive(Clone, Copy)]
struct Child {
    raw: TSNode,
    field: Option<NonZeroU16>,
    named: bool,
    extra: bool,
}

struct TreeTable {
    tree: Weak<Tree>,
    children: FastMap<usize, Rc<[Child]>>,
    /// `definition_at` by span: found once by a descent from the root.
    definitions: FastMap<(usize, usize), TSNode>,
}

#[derive(Default)]
struct Cache {
    /// By the address of the tree-sitter tree (`TSNode::tree`).
    trees: FastMap<usize, TreeTable>,
    cached_children: usize,
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
}

fn tree_address(node: Node<'_>) -> usize {
    node.into_raw().tree as usize
}

/// Lets this thread cache the children of `tree`'s nodes while the tree lives.
pub fn hold(tree: &Arc<Tree>) {
    let address = tree_address(tree.root_node());
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(table) = cache.trees.get(&address) {
            if table.tree.as_ptr() == Arc::as_ptr(tree) {
                return;
            }
        }
        // Tables of freed trees go whenever a tree is added, so they do not pile up.
        let mut freed = 0;
        cache.trees.retain(|_, table| {
            let alive = table.tree.strong_count() > 0;
            if !alive {
                freed += table.children.values().map(|c| c.len()).sum::<usize>();
            }
            alive
        });
        cache.cached_children -= freed;
        let table = TreeTable {
            tree: Arc::downgrade(tree),
            children: FastMap::default(),
            definitions: FastMap::default(),
        };
        if let Some(old) = cache.trees.insert(address, table) {
            let dropped: usize = old.children.values().map(|c| c.len()).sum();
            cache.cached_children -= dropped;
        }
    });
}

fn read_children(node: Node<'_>) -> Rc<[Child]> {
    let mut cursor = node.walk();
    let mut children = Vec::with_capacity(node.child_count() as usize);
    if cursor.goto_first_child() {
        loop {
            let child = cursor.node();
            children.push(Child {
                raw: child.into_raw(),
                field: cursor.field_id(),
                named: child.is_named(),
                extra: child.is_extra(),
            });
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    children.into()
}

/// `node`'s children, from the table when its tree is held.
fn children_of(node: Node<'_>) -> Rc<[Child]> {
    let address = tree_address(node);
    let cached = CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        let table = cache.trees.get_mut(&address)?;
        if table.tree.strong_count() == 0 {
            let dropped: usize = table.children.values().map(|c| c.len()).sum();
            cache.trees.remove(&address);
            cache.cached_children -= dropped;
            return None;
        }
        if let Some(children) = table.children.get(&node.id()) {
            return Some(Ok(children.clone()));
        }
        Some(Err(()))
    });
    match cached {
        Some(Ok(children)) => children,
        None => read_children(node),
        Some(Err(())) => {
            let children = read_children(node);
            CACHE.with(|cache| {
                let mut cache = cache.borrow_mut();
                if cache.cached_children + children.len() > MAX_CACHED_CHILDREN {
                    for table in cache.trees.values_mut() {
                        table.children.clear();
                        table.definitions.clear();
                    }
                    cache.cached_children = 0;
                }
                let len = children.len();
                if let Some(table) = cache.trees.get_mut(&address) {
                    table.children.insert(node.id(), children.clone());
                    cache.cached_children += len;
                }
            });
            children
        }
    }
}

/// The function, lambda or class definition spanning exactly `start..end`, as a descent from
/// the root finds it; remembered for a held tree (the evaluator finds a function's definition
/// again on every call of it).
pub fn definition_at(tree: &Tree, start: usize, end: usize) -> Option<Node<'_>> {
    let root = tree.root_node();
    let address = tree_address(root);
    let known = CACHE.with(|cache| {
        let cache = cache.borrow();
        let table = cache.trees.get(&address)?;
        if table.tree.strong_count() == 0 {
            return None;
        }
        table.definitions.get(&(start, end)).copied()
    });
    if let Some(raw) = known {
        // SAFETY: found in the table of the tree at `tree`'s address while that tree lives,
        // so of `tree`, borrowed for the node's lifetime.
        return Some(unsafe { Node::from_raw(raw) });
    }
    let found = find_definition(root, start, end)?;
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(table) = cache.trees.get_mut(&address) {
            if table.tree.strong_count() > 0 {
                table.definitions.insert((start, end), found.into_raw());
            }
        }
    });
    Some(found)
}

fn find_definition(root: Node<'_>, start: usize, end: usize) -> Option<Node<'_>> {
    let mut n = root.descendant_for_byte_range(start, end)?;
    loop {
        if n.start_byte() == start
            && n.end_byte() == end
            && matches!(
                super::KindExt::kind_name(&n),
                "function_definition" | "lambda" | "class_definition"
            )
        {
            return Some(n);
        }
        n = n.parent()?;
    }
}

/// Children of a node, in order, as a filter keeps them.
pub struct Children<'tree> {
    list: Rc<[Child]>,
    next: usize,
    back: usize,
    keep: fn(&Child) -> bool,
    tree: std::marker::PhantomData<Node<'tree>>,
}

impl<'tree> Children<'tree> {
    fn new(node: Node<'tree>, keep: fn(&Child) -> bool) -> Children<'tree> {
        let list = children_of(node);
        let back = list.len();
        Children {
            list,
            next: 0,
            back,
            keep,
            tree: std::marker::PhantomData,
        }
    }

    fn node(&self, i: usize) -> Node<'tree> {
        // SAFETY: the list was read from a node of a tree borrowed for 'tree (the node passed
        // to `Children::new`): either just now, or from the table of the tree at that node's
        // address while that tree was alive, which makes it the same tree. Its children are
        // nodes of that tree and live as long as it does.
        unsafe { Node::from_raw(self.list[i].raw) }
    }
}

impl<'tree> Iterator for Children<'tree> {
    type Item = Node<'tree>;
    fn next(&mut self) -> Option<Node<'tree>> {
        while self.next < self.back {
            self.next += 1;
            if (self.keep)(&self.list[self.next - 1]) {
                return Some(self.node(self.next - 1));
            }
        }
        None
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.back - self.next))
    }
}

impl DoubleEndedIterator for Children<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        while self.next < self.back {
            self.back -= 1;
            if (self.keep)(&self.list[self.back]) {
                return Some(self.node(self.back));
            }
        }
        None
    }
}

/// Every child of `node`, named or not, extras included: `node.children(&mut cursor)`.
pub fn children(node: Node<'_>) -> Children<'_> {
    Children::new(node, |_| true)
}

/// The named children of `node`, extras (comments) included: `node.named_children(&mut cursor)`.
pub fn named_children(node: Node<'_>) -> Children<'_> {
    Children::new(node, |c| c.named)
}

/// Named children that are not extras (comments, line continuations).
pub fn operands(node: Node<'_>) -> Children<'_> {
    Children::new(node, |c| c.named && !c.extra)
}

/// The first child in field `field`, as `Node::child_by_field_id` finds it.
pub fn child_by_field(node: Node<'_>, field: NonZeroU16) -> Option<Node<'_>> {
    let list = children_of(node);
    let i = list.iter().position(|c| c.field == Some(field))?;
    // SAFETY: as in `Children::node`.
    Some(unsafe { Node::from_raw(list[i].raw) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tree_sitter::TreeCursor;

    const SAMPLE: &str = "import os  # why\nfrom a import (b,  # c\n    d)\n\n@dec(1)\nclass A(B, metaclass=M):\n    x: int = 1\n    def f(self, a, *args, b=2, **kw) -> int:\n        if a > b and not (a  # keep\n                          < 3):\n            return a.x[b, 1:2]\n        elif a:\n            pass\n        else:\n            y = [i for i in b if i] \\\n                or {k: v for k, v in kw.items()}\n        try:\n            z = f\"é{a!r:>{b}}\" 'x' \"\"\"ü\"\"\"\n        except (E, F) as e:\n            raise\n        finally:\n            del z\n        with g() as (p, q), h():\n            lambda u, /, v: u if v else -u\n        return (yield from a)\n";

    /// Every way the evaluator reads a node's children, through the cache and through
    /// tree-sitter, for every node of `tree`; how many nodes were compared.
    fn compare_all(tree: &Tree) -> usize {
        let language = super::super::python_language();
        let fields: Vec<NonZeroU16> = (1..=language.field_count() as u16)
            .filter_map(NonZeroU16::new)
            .collect();
        let mut todo = vec![tree.root_node()];
        let mut compared = 0;
        while let Some(node) = todo.pop() {
            let mut cursor: TreeCursor = node.walk();
            let expected: Vec<Node> = node.children(&mut cursor).collect();
            assert_eq!(
                children(node).collect::<Vec<_>>(),
                expected,
                "{}",
                node.kind()
            );
            let expected_rev: Vec<Node> = expected.iter().rev().copied().collect();
            assert_eq!(children(node).rev().collect::<Vec<_>>(), expected_rev);
            let named: Vec<Node> = node.named_children(&mut cursor).collect();
            assert_eq!(named_children(node).collect::<Vec<_>>(), named);
            let operands: Vec<Node> = named.iter().copied().filter(|n| !n.is_extra()).collect();
            assert_eq!(super::operands(node).collect::<Vec<_>>(), operands);
            for field in &fields {
                // tree-sitter also answers a `match` statement's `alternative` with its first
                // case clause, a child of the statement's aliased `block` body, which is where
                // the cache has it; the evaluator never asks (a match statement is an
                // unsupported statement).
                let field_name = language.field_name_for_id(field.get());
                if node.kind() == "match_statement" && field_name == Some("alternative") {
                    continue;
                }
                assert_eq!(
                    child_by_field(node, *field),
                    node.child_by_field_id(field.get()),
                    "field {:?} of {}",
                    language.field_name_for_id(field.get()),
                    node.kind()
                );
            }
            if matches!(
                node.kind(),
                "function_definition" | "lambda" | "class_definition"
            ) {
                let (start, end) = (node.start_byte(), node.end_byte());
                assert_eq!(definition_at(tree, start, end), Some(node));
                assert_eq!(definition_at(tree, start, end), Some(node));
            }
            compared += 1;
            todo.extend(expected);
        }
        compared
    }

    #[test]
    fn cached_children_and_fields_are_tree_sitters() {
        let tree = Arc::new(super::super::parse(SAMPLE, None));
        // Not held: read from tree-sitter each time.
        let unheld = compare_all(&tree);
        hold(&tree);
        // The first read of each node fills the table, the second reads it.
        for _ in 0..2 {
            assert_eq!(compare_all(&tree), unheld);
        }
        assert!(unheld > 200, "only {unheld} nodes");
        let cached = CACHE.with(|c| c.borrow().cached_children);
        assert!(cached > unheld / 2, "{cached} children cached");
    }

    #[test]
    fn the_repository_python_reads_the_same_through_the_cache() {
        for (_, text) in super::super::repository_python() {
            let tree = Arc::new(super::super::parse(&text, None));
            hold(&tree);
            compare_all(&tree);
            compare_all(&tree);
        }
    }

    #[test]
    fn a_freed_trees_table_is_never_read_for_another_tree() {
        let first = Arc::new(super::super::parse("def f(a):\n    return a + 1\n", None));
        hold(&first);
        compare_all(&first);
        let address = tree_address(first.root_node());
        drop(first);
        // Trees of another text until one lands at the freed address (the allocator tends
        // to reuse it at once); its nodes must read as tree-sitter reads them.
        let mut reused = false;
        let mut kept = vec![];
        for _ in 0..64 {
            let other = Arc::new(super::super::parse(
                "x = [1, (2, 3)]\nif x:\n    y = x\n",
                None,
            ));
            if tree_address(other.root_node()) == address {
                compare_all(&other);
                reused = true;
                break;
            }
            kept.push(other);
        }
        if reused {
            let table_left = CACHE.with(|c| c.borrow().trees.contains_key(&address));
            assert!(!table_left, "the freed tree's table is still kept");
        }
        // A tree held after another was freed at its address gets a table of its own.
        let held = Arc::new(super::super::parse("class C:\n    z: int = 2\n", None));
        hold(&held);
        compare_all(&held);
    }
}
