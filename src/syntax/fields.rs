//! A node's child by field name, without tree-sitter's lookup of the name on every call.
//!
//! `Node::child_by_field_name` finds the field's id by comparing the name with each of the
//! grammar's field names (`ts_language_field_id_for_name`), and the evaluator asks for
//! `body`, `left`, `condition`… on every statement and expression it runs: that search was
//! about a tenth of a `check`. The ids are read from the grammar once, into a map hashed
//! with foldhash (SipHash of the name was most of what the lookup still cost).

use std::collections::HashMap;
use std::num::NonZeroU16;
use std::sync::LazyLock;

use tree_sitter::Node;

static FIELD_IDS: LazyLock<HashMap<String, NonZeroU16, foldhash::fast::FixedState>> =
    LazyLock::new(|| {
        let language = super::python_language();
        (1..=language.field_count() as u16)
            .filter_map(|id| {
                let name = language.field_name_for_id(id)?;
                Some((name.to_string(), NonZeroU16::new(id)?))
            })
            .collect()
    });

pub trait FieldExt<'tree> {
    /// The child in field `name`, as `child_by_field_name(name)` gives it (None for a name the
    /// grammar does not have); read through `node_cache`, so a held tree's node is asked once.
    fn field(&self, name: &str) -> Option<Node<'tree>>;
}

impl<'tree> FieldExt<'tree> for Node<'tree> {
    fn field(&self, name: &str) -> Option<Node<'tree>> {
        let id = FIELD_IDS.get(name)?;
        super::node_cache::child_by_field(*self, *id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_children_as_the_lookup_by_name() {
        let text =
            "def f(a, b=1):\n    if a > b:\n        return a.x[b]\n    return [i for i in b]\n";
        let tree = super::super::parse(text, None);
        let language = super::super::python_language();
        let names: Vec<&str> = (1..=language.field_count() as u16)
            .filter_map(|id| language.field_name_for_id(id))
            .chain(["no_such_field"])
            .collect();
        let mut todo = vec![tree.root_node()];
        let mut compared = 0;
        while let Some(node) = todo.pop() {
            for name in &names {
                let expected = node.child_by_field_name(name);
                assert_eq!(node.field(name), expected, "{} of {}", name, node.kind());
                compared += usize::from(expected.is_some());
            }
            let mut cursor = node.walk();
            todo.extend(node.children(&mut cursor));
        }
        assert!(compared > 10, "only {compared} fields present");
    }
}
