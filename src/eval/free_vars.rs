//! The free variables of a function: the names its body (nested functions, lambdas and
//! comprehensions included) reads without binding them, as CPython's symbol table finds them
//! for `co_freevars`. A function's `__closure__` holds one cell for each of them that an
//! enclosing function binds, in sorted order, as CPython lays them out.

use std::collections::BTreeSet;

use tree_sitter::Node;

use crate::syntax::{named_children, text, FieldExt, KindExt};

/// The names `def_node` (a `function_definition` or `lambda`) reads and does not bind itself,
/// its parameters `params` being bound; sorted.
pub(super) fn free_names(def_node: Node, src: &str, params: &[String]) -> BTreeSet<String> {
    let Some(body) = def_node.field("body") else {
        return BTreeSet::new();
    };
    scope_free_names(&[body], src, params.iter().cloned().collect())
}

/// The names a comprehension's own frame reads from outside it (its free variables and the
/// globals it names), as CPython compiles it before 3.12: every part but the first iterable,
/// which the enclosing code evaluates and passes in as `.0`.
pub(super) fn comprehension_free_names(node: Node, src: &str) -> BTreeSet<String> {
    let mut names = ScopeNames::default();
    let mut first_iterable = true;
    for part in named_children(node) {
        if first_iterable && part.kind_name() == "for_in_clause" {
            first_iterable = false;
            names.bind_targets(part.field("left"), src);
        } else {
            names.visit(part, src);
        }
    }
    let ScopeNames {
        used,
        bound,
        global,
        ..
    } = names;
    used.into_iter()
        .filter(|n| !bound.contains(n) && !global.contains(n))
        .collect()
}

/// The free names of a scope whose parts are `nodes` and whose parameters are `bound`.
fn scope_free_names(nodes: &[Node], src: &str, mut bound: BTreeSet<String>) -> BTreeSet<String> {
    let mut names = ScopeNames::default();
    for n in nodes {
        names.visit(*n, src);
    }
    bound.extend(names.bound);
    let mut free: BTreeSet<String> = names
        .used
        .into_iter()
        .filter(|n| !bound.contains(n) && !names.global.contains(n))
        .collect();
    free.extend(names.nonlocal);
    free
}

/// What one scope's own code reads, binds and declares; nested scopes contribute their free
/// names to `used`.
#[derive(Default)]
struct ScopeNames {
    used: BTreeSet<String>,
    bound: BTreeSet<String>,
    global: BTreeSet<String>,
    nonlocal: BTreeSet<String>,
}

impl ScopeNames {
    fn visit(&mut self, node: Node, src: &str) {
        match node.kind_name() {
            "identifier" => {
                self.used.insert(text(node, src).to_string());
            }
            // `obj.name` reads `obj` only
            "attribute" => {
                if let Some(o) = node.field("object") {
                    self.visit(o, src);
                }
            }
            // `f(name=v)` reads `v` only
            "keyword_argument" => {
                if let Some(v) = node.field("value") {
                    self.visit(v, src);
                }
            }
            "function_definition" | "class_definition" => {
                if let Some(n) = node.field("name") {
                    self.bound.insert(text(n, src).to_string());
                }
                self.visit_nested_definition(node, src);
            }
            "lambda" => self.visit_nested_definition(node, src),
            "list_comprehension"
            | "set_comprehension"
            | "dictionary_comprehension"
            | "generator_expression" => self.visit_comprehension(node, src),
            "global_statement" | "nonlocal_statement" => {
                let declared = named_children(node)
                    .filter(|n| n.kind_name() == "identifier")
                    .map(|n| text(n, src).to_string());
                if node.kind_name() == "global_statement" {
                    self.global.extend(declared);
                } else {
                    self.nonlocal.extend(declared);
                }
            }
            "import_statement" | "import_from_statement" => {
                let mut c = node.walk();
                for name in node.children_by_field_name("name", &mut c) {
                    let bound = match name.kind_name() {
                        "aliased_import" => name.field("alias").map(|a| text(a, src)),
                        // `import a.b` binds `a`
                        _ => text(name, src).split('.').next(),
                    };
                    self.bound.extend(bound.map(str::to_string));
                }
            }
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                self.bind_targets(node.field("left"), src);
                for ch in named_children(node) {
                    self.visit(ch, src);
                }
            }
            "named_expression" => {
                self.bind_targets(node.field("name"), src);
                for ch in named_children(node) {
                    self.visit(ch, src);
                }
            }
            "as_pattern" => {
                self.bind_targets(node.field("alias"), src);
                for ch in named_children(node) {
                    self.visit(ch, src);
                }
            }
            _ => {
                for ch in named_children(node) {
                    self.visit(ch, src);
                }
            }
        }
    }

    /// A nested `def`, `class` or `lambda`: its decorators, defaults and annotations are read
    /// here; its body's free names are read here too.
    fn visit_nested_definition(&mut self, node: Node, src: &str) {
        let mut params = BTreeSet::new();
        if let Some(ps) = node.field("parameters") {
            for p in named_children(ps) {
                match p.kind_name() {
                    "identifier" => {
                        params.insert(text(p, src).to_string());
                    }
                    _ => {
                        let name = p
                            .field("name")
                            .or_else(|| named_children(p).find(|c| c.kind_name() == "identifier"));
                        if let Some(n) = name {
                            params.insert(text(n, src).to_string());
                        }
                        for field in ["value", "type"] {
                            if let Some(v) = p.field(field) {
                                self.visit(v, src);
                            }
                        }
                    }
                }
            }
        }
        if let Some(sc) = node.field("superclasses") {
            self.visit(sc, src);
        }
        if let Some(body) = node.field("body") {
            self.used.extend(scope_free_names(&[body], src, params));
        }
    }

    /// A comprehension is a scope of its own binding its `for` targets; its first iterable
    /// is read in the enclosing scope, which makes no difference to the names read.
    fn visit_comprehension(&mut self, node: Node, src: &str) {
        let parts: Vec<Node> = named_children(node).collect();
        self.used
            .extend(scope_free_names(&parts, src, BTreeSet::new()));
    }

    fn bind_targets(&mut self, target: Option<Node>, src: &str) {
        let Some(t) = target else { return };
        match t.kind_name() {
            "identifier" => {
                self.bound.insert(text(t, src).to_string());
            }
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "tuple"
            | "list"
            | "list_splat_pattern"
            | "parenthesized_expression"
            | "as_pattern_target" => {
                for ch in named_children(t) {
                    self.bind_targets(Some(ch), src);
                }
            }
            _ => {}
        }
    }
}

impl super::Interp {
    /// `f.__closure__`: a cell per free name an enclosing function binds, holding its
    /// value now; None when there is none.
    pub(super) fn closure_cells(&mut self, f: &super::value::Function) -> super::value::Value {
        use super::value::{ObjKind, Object, Value};
        use std::rc::Rc;
        let Some(scope) = f.closure.clone() else {
            return Value::None;
        };
        let (file, _, def_span) = self.definition_of(f);
        let tree = file.tree();
        let Some(def_node) = super::find_node(&tree, def_span) else {
            return Value::unknown("`__closure__` of a function whose definition is not found");
        };
        let params: Vec<String> = f.params.iter().map(|p| p.name.clone()).collect();
        let mut cells = Vec::new();
        for name in free_names(def_node, &file.text, &params) {
            let mut s = Some(scope.clone());
            let value = loop {
                let Some(cur) = s else { break None };
                if !cur.class_body {
                    if let Some(v) = cur.vars.borrow().get(&name) {
                        break Some(v.clone());
                    }
                }
                s = cur.parent.clone();
            };
            let Some(value) = value else { continue };
            let cell = Object {
                id: self.new_object_id(),
                class: Value::External(Rc::from("types.CellType")),
                kind: ObjKind::Plain,
                attrs: Default::default(),
                base: None,
            };
            cell.attrs
                .borrow_mut()
                .insert("cell_contents".into(), value);
            cells.push(Value::Object(Rc::new(cell)));
        }
        if cells.is_empty() {
            Value::None
        } else {
            Value::tuple(cells)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::free_names;
    use crate::syntax::{named_children, KindExt};

    #[test]
    fn free_names_leave_out_what_the_function_and_its_inner_scopes_bind() {
        let text = "def outer():\n    def f(x, y=b):\n        z = x + a\n        g = lambda c: c + d\n        w = [c for c in range(3)]\n        global e\n        import os.path as p, sys\n        return z + e + obj.attr + h(k=1) + p + sys\n    return f\n";
        let tree = crate::syntax::parse(text, None);
        let outer = tree.root_node().named_child(0).unwrap();
        let body = outer.child_by_field_name("body").unwrap();
        let f = named_children(body)
            .find(|n| n.kind_name() == "function_definition")
            .unwrap();
        let params = vec!["x".to_string(), "y".to_string()];
        let free: Vec<String> = free_names(f, text, &params).into_iter().collect();
        // `b` is read by the default, in `outer`; `c` is the lambda's and the comprehension's
        assert_eq!(free, ["a", "d", "h", "obj", "range"]);
    }
}
