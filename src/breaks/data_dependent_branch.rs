//! FX101 / GB0170: a tensor used as a jump condition (`if`, `elif`, `while`, `a if c else b`,
//! `and`/`or`/`not` feeding one of those). Dynamo cannot know which way to go without the data.
//!
//! Only a *tensor* condition is this break. A data-derived Python scalar (`bool(t)`,
//! `t.item() > 0`) already broke the graph where it was converted (GB0124), and Dynamo reports
//! nothing more at the branch; shape-derived and constant conditions are specialised.

use tree_sitter::Node;

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::syntax::FieldExt;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for region in &cx.result.regions {
        if !super::is_tensor(cx, region.cause) {
            continue;
        }
        let mut f = cx.finding(
            Rule::DataDependentBranch,
            "GB0170",
            region.file,
            region.span,
            &region.call_chain,
        );
        let cond = cx.source(region.file, region.span);
        f.message = format!(
            "the `{}` condition `{}` is a tensor, so its value is only known at run time",
            region.kind,
            super::snippet(&cond)
        );
        f.region = Some(region.id);
        f.node = Some(region.cause);
        f.impact_nodes = cx.impact_after(region.cause);
        let (hint, fixable) = cx
            .with_syntax(region.file, region.span, |n, src| {
                hint_for(n, src, &region.kind)
            })
            .unwrap_or_else(|| (generic(&region.kind), false));
        f.hint = hint;
        f.fix_available = fixable;
        out.push(f);
    }
}

fn text<'s>(n: Node, src: &'s str) -> &'s str {
    &src[n.byte_range()]
}

/// The condition as a tensor expression: `and`/`or`/`not` become `&`/`|`/`~`, which is what
/// `torch.where` needs.
pub fn tensor_condition(n: Node, src: &str) -> String {
    match n.kind() {
        "boolean_operator" => {
            let (Some(l), Some(r), Some(op)) =
                (n.field("left"), n.field("right"), n.field("operator"))
            else {
                return text(n, src).to_string();
            };
            let sym = if text(op, src) == "and" { "&" } else { "|" };
            format!(
                "({}) {sym} ({})",
                tensor_condition(l, src),
                tensor_condition(r, src)
            )
        }
        "not_operator" => match n.field("argument") {
            Some(a) => format!("~({})", tensor_condition(a, src)),
            None => text(n, src).to_string(),
        },
        "parenthesized_expression" => match n.named_child(0) {
            Some(inner) if n.named_child_count() == 1 => tensor_condition(inner, src),
            _ => text(n, src).to_string(),
        },
        _ => text(n, src).to_string(),
    }
}

fn generic(kind: &str) -> String {
    if kind == "while" {
        "bound the loop by a Python or shape value and keep the test as a tensor mask, or use torch._higher_order_ops.while_loop".into()
    } else {
        "compute both sides and select with torch.where(cond, a, b), or use torch.cond(cond, true_fn, false_fn, operands)".into()
    }
}

/// A site-specific rewrite when both branches are a single assignment to the same name, or a
/// single `return`; otherwise the generic advice.
fn hint_for(cond_node: Node, src: &str, kind: &str) -> (String, bool) {
    // The region span is the condition; climb to the statement/expression that owns it.
    let mut owner = cond_node;
    let owner_kinds = [
        "if_statement",
        "elif_clause",
        "while_statement",
        "conditional_expression",
    ];
    while !owner_kinds.contains(&owner.kind()) {
        match owner.parent() {
            Some(p) => owner = p,
            None => return (generic(kind), false),
        }
    }
    let cond = match owner.kind() {
        "conditional_expression" => owner.named_child(1),
        _ => owner.field("condition"),
    };
    let Some(cond) = cond else {
        return (generic(kind), false);
    };
    let c = tensor_condition(cond, src);
    match owner.kind() {
        "conditional_expression" => {
            let (Some(a), Some(b)) = (owner.named_child(0), owner.named_child(2)) else {
                return (generic(kind), false);
            };
            (
                format!("use torch.where({c}, {}, {})", text(a, src), text(b, src)),
                true,
            )
        }
        "if_statement" | "elif_clause" => {
            let then = owner.field("consequence").and_then(|b| single(b, src));
            let other = else_single(owner, src);
            match (then, other) {
                (Some(Simple::Assign(t1, a)), Some(Simple::Assign(t2, b))) if t1 == t2 => (format!("use `{t1} = torch.where({c}, {a}, {b})`"), true),
                (Some(Simple::Assign(t1, a)), None) if owner.kind() == "if_statement" && no_else(owner) => {
                    (format!("use `{t1} = torch.where({c}, {a}, {t1})`"), true)
                }
                (Some(Simple::Return(a)), Some(Simple::Return(b))) => (format!("use `return torch.where({c}, {a}, {b})`"), true),
                _ => (format!("compute both branches and select with torch.where({c}, …), or use torch.cond({c}, true_fn, false_fn, operands)"), false),
            }
        }
        _ => (generic(kind), false),
    }
}

enum Simple {
    Assign(String, String),
    Return(String),
}

fn single(block: Node, src: &str) -> Option<Simple> {
    if block.named_child_count() != 1 {
        return None;
    }
    let stmt = block.named_child(0)?;
    match stmt.kind() {
        "expression_statement" => {
            let a = stmt.named_child(0)?;
            if a.kind() != "assignment" {
                return None;
            }
            let (l, r) = (a.field("left")?, a.field("right")?);
            (l.kind() == "identifier")
                .then(|| Simple::Assign(text(l, src).to_string(), text(r, src).to_string()))
        }
        "return_statement" => stmt
            .named_child(0)
            .map(|v| Simple::Return(text(v, src).to_string())),
        _ => None,
    }
}

fn no_else(ifs: Node) -> bool {
    let mut c = ifs.walk();
    let none = ifs
        .children_by_field_name("alternative", &mut c)
        .next()
        .is_none();
    none
}

/// The `else` side: an `else:` block with one statement, or, for an `if` whose body returns,
/// the single `return` right after the `if` statement.
fn else_single(owner: Node, src: &str) -> Option<Simple> {
    let ifs = if owner.kind() == "elif_clause" {
        owner.parent()?
    } else {
        owner
    };
    let mut c = ifs.walk();
    let alts: Vec<Node> = ifs.children_by_field_name("alternative", &mut c).collect();
    if owner.kind() == "if_statement" {
        match alts.first() {
            Some(a) if a.kind() == "else_clause" => return single(a.field("body")?, src),
            Some(_) => return None,
            None => {}
        }
    } else {
        let pos = alts.iter().position(|a| a.id() == owner.id())?;
        let next = alts.get(pos + 1)?;
        return if next.kind() == "else_clause" {
            single(next.field("body")?, src)
        } else {
            None
        };
    }
    let next = ifs.next_named_sibling()?;
    (next.kind() == "return_statement")
        .then(|| {
            next.named_child(0)
                .map(|v| Simple::Return(text(v, src).to_string()))
        })
        .flatten()
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::{codes, findings, HEAD};

    /// transformers' `output_attentions` as a required argument is a Python bool its caller
    /// passes, not a tensor; an ordinary required argument is still a tensor.
    #[test]
    fn required_output_switch_is_a_bool() {
        let src = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x, output_attentions, mask):\n        out = {\"h\": self.fc(x)}\n        if output_attentions:\n            out[\"a\"] = x\n        if mask:\n            out[\"m\"] = x\n        return out\n";
        assert_eq!(codes(src), vec![(13, "GB0170")]);
    }

    /// Arguments annotated as Python values are not tensors, nor is what is computed from
    /// them (swin's `if (height % 2 == 1) or (width % 2 == 1):` on `input_dimensions:
    /// tuple[int, int]`, SAM's `multimask_output: bool`); torch 2.15 compiles such a module in
    /// one graph. An unannotated argument is still a tensor.
    #[test]
    fn typed_python_arguments_are_not_tensors() {
        let src = "import torch\nfrom torch import nn\nfrom typing import Optional\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def pad(self, x, height: int, width: int):\n        if (height % 2 == 1) or (width % 2 == 1):\n            x = x + 1\n        return x\n\n    def forward(self, x, dims: tuple[int, int], flag: bool, k: Optional[int], r: 'float', mask):\n        height, width = dims\n        x = self.pad(x, height, width)\n        if flag:\n            x = x * 2\n        if k > 2 and r < 0.5:\n            x = x - 1\n        if mask:\n            x = x / 2\n        return self.fc(x)\n";
        assert_eq!(codes(src), vec![(22, "GB0170")]);
    }

    /// layoutlmv2's `(images if torch.is_tensor(images) else images.tensor)`: a Python bool.
    #[test]
    fn is_tensor_is_a_python_bool() {
        let src = format!(
            "{HEAD}        h = x if torch.is_tensor(x) else x.tensor\n        return self.fc(h)\n"
        );
        assert_eq!(codes(&src), vec![]);
    }

    #[test]
    fn if_on_reduction_with_where_hint() {
        let src = format!("{HEAD}        h = self.fc(x)\n        if h.sum() > 0:\n            h = torch.relu(h)\n        else:\n            h = torch.tanh(h)\n        return h\n");
        let f = findings(&src);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].0, f[0].2), (11, "GB0170"));
        assert_eq!(
            f[0].3,
            "use `h = torch.where(h.sum() > 0, torch.relu(h), torch.tanh(h))`"
        );
    }

    #[test]
    fn early_return_and_boolean_operators() {
        let src = format!("{HEAD}        h = self.fc(x)\n        if not (h > 0).any() and h.min() < 1:\n            return h\n        return h * 2\n");
        let f = findings(&src);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            f[0].3,
            "use `return torch.where((~((h > 0).any())) & (h.min() < 1), h, h * 2)`"
        );
    }

    #[test]
    fn ternary_and_while() {
        let src = format!("{HEAD}        h = self.fc(x)\n        h = h if h.mean() > 0 else -h\n        while h.norm() > 1:\n            h = h / 2\n        return h\n");
        assert_eq!(codes(&src), vec![(11, "GB0170"), (12, "GB0170")]);
    }

    #[test]
    fn python_conditions_are_not_breaks() {
        let src = format!(
            "{HEAD}        h = self.fc(x)\n        if self.training:\n            h = h * 2\n        if x.shape[0] > 2 and x.dim() == 2:\n            h = h + 1\n        if isinstance(x, torch.Tensor) and x is not None:\n            h = h - 1\n        if torch.compiler.is_compiling():\n            h = h / 2\n        return h if x.size(-1) == 8 else h\n"
        );
        assert_eq!(codes(&src), vec![]);
    }

    #[test]
    fn helper_branch_is_reported_in_the_helper_with_the_call_chain() {
        let src = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def _gate(self, h):\n        if h.mean() > 0:\n            return h\n        return -h\n\n    def forward(self, x):\n        return self._gate(self.fc(x))\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.py");
        std::fs::write(&path, src).unwrap();
        let a = crate::ide::on_large_stack("test", move || {
            let a = crate::analysis::analyze_file(&path, &Default::default()).unwrap();
            let f = &a.graphs[0].breaks[0];
            let f_line = a.project.file(f.file).lines.line_of(f.span.start) + 1;
            let rel: Vec<usize> = f
                .related
                .iter()
                .map(|(file, span, _)| a.project.file(*file).lines.line_of(span.start) + 1)
                .collect();
            (f_line, rel)
        });
        assert_eq!(a.unwrap(), (10, vec![15]));
    }
}
