//! Expressions.

use crate::eval::types::proxy;
use crate::syntax::KindExt;
use std::cell::RefCell;
use std::rc::Rc;

use tree_sitter::Node;

use super::dict_builder::DictBuilder;
use super::stmt::Truth;
use super::value::{FnKind, Scope, Value};
use super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::syntax::{first_operand, operands, text, FieldExt, Span};

/// A float literal's value (`1_000.5`); complex literals are not modelled.
fn eval_float(t: &str) -> Value {
    let t = t.replace('_', "");
    if t.ends_with(['j', 'J']) {
        return Value::unknown("complex literal");
    }
    t.parse::<f64>()
        .map(Value::Float)
        .unwrap_or_else(|_| Value::unknown("float literal"))
}

/// A binary or boolean operator's left operand, right operand and operator.
fn binary_parts(node: Node) -> Option<(Node, Node, Node)> {
    Some((
        node.field("left")?,
        node.field("right")?,
        node.field("operator")?,
    ))
}

/// Python's binary operators: the symbol, and the name of its function in `operator` (the
/// torch.fx target `operator.<name>`).
const BINARY_OPERATORS: &[(&str, &str)] = &[
    ("+", "add"),
    ("-", "sub"),
    ("*", "mul"),
    ("/", "truediv"),
    ("//", "floordiv"),
    ("%", "mod"),
    ("**", "pow"),
    ("@", "matmul"),
    ("&", "and_"),
    ("|", "or_"),
    ("^", "xor"),
    ("<<", "lshift"),
    (">>", "rshift"),
    ("<", "lt"),
    ("<=", "le"),
    (">", "gt"),
    (">=", "ge"),
    ("==", "eq"),
    ("!=", "ne"),
];

/// The `operator` function of a binary operator's symbol (`+` is `add`).
pub fn binop_name(sym: &str) -> Option<&'static str> {
    BINARY_OPERATORS
        .iter()
        .find(|(s, _)| *s == sym)
        .map(|(_, n)| *n)
}

/// The symbol of a binary operator's `operator` function (`add` is `+`).
pub fn binop_sym(name: &str) -> Option<&'static str> {
    BINARY_OPERATORS
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(s, _)| *s)
}

impl Interp {
    pub fn eval_expr(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        match self.eval_expr_live(frame, node) {
            Ok(Value::InstanceDict(o, namespace)) => Ok(o.snapshot(namespace)),
            other => other,
        }
    }

    /// `eval_expr` for the receiver of an attribute, the target of an item assignment and a
    /// returned value: an instance's `__dict__` stays the instance's (`obj.__dict__.pop(k)`
    /// removes the attribute, `obj.__dict__[k] = v` sets it), as Python's is.
    pub fn eval_expr_live(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        self.expr_depth += 1;
        if self.expr_depth > self.limits.max_expr_depth {
            self.expr_depth -= 1;
            return Err(self.error(
                frame,
                Span::of(node),
                codes::UNSUPPORTED,
                "expression nested too deeply to analyse",
            ));
        }
        let r = self.eval_expr_inner(frame, node);
        self.expr_depth -= 1;
        r
    }

    fn eval_expr_inner(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let src = &*frame.file.text;
        let span = Span::of(node);
        match node.kind_name() {
            "identifier" => {
                let v = self.lookup(frame, text(node, &src), span)?;
                self.note_argument_read(frame, node, &v);
                Ok(v)
            }
            "integer" => Ok(parse_int(text(node, &src))
                .map(Value::Int)
                .unwrap_or_else(|| Value::unknown("integer literal out of range"))),
            "float" => Ok(eval_float(text(node, &src))),
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            "none" => Ok(Value::None),
            "ellipsis" => Ok(Value::Ellipsis),
            "string" => self.eval_string(frame, node),
            "concatenated_string" => self.eval_concatenated_string(frame, node),
            "parenthesized_expression" => match first_operand(node) {
                Some(inner) => self.eval_expr(frame, inner),
                None => Ok(Value::tuple(vec![])),
            },
            "tuple" | "expression_list" | "pattern_list" => {
                Ok(Value::tuple(self.eval_items(frame, node)?))
            }
            "list" => Ok(Value::list(self.eval_items(frame, node)?)),
            "set" => Ok(Value::list(self.eval_items(frame, node)?)),
            "dictionary" => self.eval_dictionary(frame, node),
            "attribute" => self.eval_attribute(frame, node),
            "subscript" => {
                let Some(obj) = node.field("value") else {
                    return Ok(Value::unknown("subscript"));
                };
                let o = self.eval_expr(frame, obj)?;
                let key = self.eval_subscript_key(frame, node)?;
                let item = self.get_item(frame, &o, key, span)?;
                self.note_argument_read(frame, node, &item);
                Ok(item)
            }
            "call" => self.eval_call(frame, node),
            "binary_operator" => self.eval_binary_operator(frame, node),
            "unary_operator" => self.eval_unary_operator(frame, node),
            "not_operator" => self.eval_not_operator(frame, node),
            "boolean_operator" => self.eval_boolean_operator(frame, node),
            "comparison_operator" => self.eval_comparison(frame, node),
            "conditional_expression" => self.eval_conditional(frame, node),
            "lambda" => {
                let f = self.make_function(frame, node, FnKind::Plain)?;
                Ok(Value::Function(Rc::new(f)))
            }
            "list_comprehension" | "set_comprehension" | "generator_expression" => {
                self.eval_sequence_comprehension(frame, node)
            }
            "dictionary_comprehension" => self.eval_dictionary_comprehension(frame, node),
            "named_expression" => {
                let (Some(n), Some(v)) = (node.field("name"), node.field("value")) else {
                    return Ok(Value::unknown(":="));
                };
                let val = self.eval_expr(frame, v)?;
                self.set_var(frame, text(n, &src), val.clone());
                Ok(val)
            }
            "list_splat" | "dictionary_splat" => match first_operand(node) {
                Some(inner) => self.eval_expr(frame, inner),
                None => Ok(Value::unknown("splat")),
            },
            "await" => Err(self.error(frame, span, codes::UNSUPPORTED, "`await` in model code")),
            "yield" => self.eval_yield(frame, node),
            "type" => Ok(Value::unknown("type annotation")),
            "slice" => self.eval_slice(frame, node),
            "ERROR" => Err(self.error(frame, span, codes::SYNTAX_ERROR, "syntax error")),
            kind => Err(self.error(
                frame,
                span,
                codes::UNSUPPORTED,
                format!("unsupported expression `{kind}`"),
            )),
        }
    }

    /// The `SYNTAX_ERROR` of an operator or access missing one of its parts.
    fn incomplete(&self, frame: &Frame, node: Node, what: &str) -> super::EvalError {
        self.error(frame, Span::of(node), codes::SYNTAX_ERROR, what)
    }

    /// `"a" "b"`: adjacent literals joined; a part that is not a known string makes the
    /// whole that part.
    fn eval_concatenated_string(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let mut out = String::new();
        let parts = operands(node);
        for s in parts {
            match self.eval_string(frame, s)? {
                Value::Str(p) => out.push_str(&p),
                other => return Ok(other),
            }
        }
        Ok(Value::str(&out))
    }

    /// `{k: v, **m}`.
    fn eval_dictionary(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let kids: Vec<Node> = crate::syntax::named_children(node).collect();
        let mut items = DictBuilder::default();
        for k in kids {
            match k.kind_name() {
                "pair" => {
                    let (Some(kn), Some(vn)) = (k.field("key"), k.field("value")) else {
                        continue;
                    };
                    let key = self.eval_expr(frame, kn)?;
                    let val = self.eval_expr(frame, vn)?;
                    items.insert(key, val);
                }
                "dictionary_splat" => {
                    if let Some(inner) = first_operand(k) {
                        let v = self.eval_expr(frame, inner)?;
                        match self.mapping_entries(frame, &v, Span::of(inner))? {
                            Some(entries) => {
                                for (kk, vv) in entries {
                                    items.insert(kk, vv);
                                }
                            }
                            // Python raises TypeError; an unknown value spread
                            // makes the whole display unknown rather than smaller.
                            None => {
                                let why = match &v {
                                    Value::Unknown(u) => {
                                        format!("`**` of an unknown value ({})", u.reason)
                                    }
                                    other => {
                                        format!("`**` of a non-mapping ({})", other.type_name())
                                    }
                                };
                                return Ok(Value::unknown(why));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(Value::Dict(Rc::new(RefCell::new(items.finish()))))
    }

    fn eval_attribute(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let (Some(obj), Some(attr)) = (node.field("object"), node.field("attribute")) else {
            return Err(self.incomplete(frame, node, "incomplete attribute access"));
        };
        let o = self.eval_expr_live(frame, obj)?;
        self.get_attr(frame, &o, text(attr, &frame.file.text), Span::of(node))
    }

    fn eval_binary_operator(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let Some((l, r, op)) = binary_parts(node) else {
            return Err(self.incomplete(frame, node, "incomplete expression"));
        };
        let a = self.eval_expr(frame, l)?;
        let b = self.eval_expr(frame, r)?;
        self.binary_op(frame, text(op, &frame.file.text), a, b, Span::of(node))
    }

    fn eval_unary_operator(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let (Some(arg), Some(op)) = (node.field("argument"), node.field("operator")) else {
            return Err(self.incomplete(frame, node, "incomplete expression"));
        };
        let v = self.eval_expr(frame, arg)?;
        self.unary_op(frame, text(op, &frame.file.text), v, Span::of(node))
    }

    fn eval_not_operator(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let span = Span::of(node);
        let Some(arg) = node.field("argument") else {
            return Ok(Value::unknown("not"));
        };
        let v = self.eval_expr(frame, arg)?;
        Ok(match self.truth(frame, &v, span)? {
            Truth::Known(b) => Value::Bool(!b),
            Truth::Data(_) => self.data_bool(frame, &v, span),
            Truth::Unknown => Value::unknown("condition"),
        })
    }

    /// `a and b`, `a or b`: short-circuits where the left operand's truth is known.
    fn eval_boolean_operator(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let Some((l, r, op)) = binary_parts(node) else {
            return Err(self.incomplete(frame, node, "incomplete expression"));
        };
        let is_and = text(op, &frame.file.text) == "and";
        let a = self.eval_expr(frame, l)?;
        match self.truth(frame, &a, Span::of(l))? {
            Truth::Known(t) => {
                if t == is_and {
                    self.eval_expr(frame, r)
                } else {
                    Ok(a)
                }
            }
            Truth::Data(_) => {
                let _ = self.eval_expr(frame, r)?;
                Ok(self.data_bool(frame, &a, Span::of(l)))
            }
            Truth::Unknown => {
                let b = self.eval_expr(frame, r)?;
                Ok(match self.truth(frame, &b, Span::of(r))? {
                    Truth::Known(t) if t != is_and => b,
                    _ => Value::unknown("condition"),
                })
            }
        }
    }

    /// `a if cond else b`: a condition on traced data runs both arms inside a region.
    fn eval_conditional(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let kids = operands(node);
        if kids.len() < 3 {
            return Err(self.incomplete(frame, node, "incomplete conditional expression"));
        }
        let cond = self.eval_expr(frame, kids[1])?;
        match self.truth(frame, &cond, Span::of(kids[1]))? {
            Truth::Known(true) => self.eval_expr(frame, kids[0]),
            Truth::Known(false) => self.eval_expr(frame, kids[2]),
            Truth::Data(cause) => {
                let region = self.tracer.as_mut().map(|t| {
                    t.open_region(
                        cause,
                        "conditional expression",
                        frame.file_id,
                        Span::of(kids[1]),
                    )
                });
                if let (Some(t), Some(r)) = (self.tracer.as_mut(), region) {
                    t.set_branch(r, Some(crate::graph::RegionRole::ThenBranch));
                }
                let a = self.eval_expr(frame, kids[0]);
                if let (Some(t), Some(r)) = (self.tracer.as_mut(), region) {
                    t.set_branch(r, Some(crate::graph::RegionRole::ElseBranch));
                }
                let b = self.eval_expr(frame, kids[2]);
                if let (Some(t), Some(r)) = (self.tracer.as_mut(), region) {
                    t.set_branch(r, None);
                }
                let _ = b?;
                a
            }
            Truth::Unknown => {
                let a = self.eval_expr(frame, kids[0])?;
                if proxy::runs_both_unknown_branches(self) {
                    let _ = self.eval_expr(frame, kids[2])?;
                }
                Ok(a)
            }
        }
    }

    /// List and set comprehensions and generator expressions (a generator is run to its
    /// end, its items a tuple).
    fn eval_sequence_comprehension(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        if node.kind_name() == "generator_expression" {
            // a generator frame of its own when the code around it runs eagerly
            if let Some(t) = self.tracer.as_mut() {
                t.event(
                    crate::traced::EventKind::Generator,
                    frame.file_id,
                    Span::of(node),
                    "<genexpr>".into(),
                );
            }
        }
        let mut out = Vec::new();
        self.comprehension(frame, node, &mut |this, f| {
            let body = node.field("body").expect("comprehension body");
            out.push(this.eval_expr(f, body)?);
            Ok(())
        })?;
        Ok(if node.kind_name() == "generator_expression" {
            Value::tuple(out)
        } else {
            Value::list(out)
        })
    }

    fn eval_dictionary_comprehension(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let mut items = DictBuilder::default();
        self.comprehension(frame, node, &mut |this, f| {
            let body = node.field("body").expect("comprehension body");
            let (Some(k), Some(v)) = (body.field("key"), body.field("value")) else {
                return Ok(());
            };
            let key = this.eval_expr(f, k)?;
            let val = this.eval_expr(f, v)?;
            items.insert(key, val);
            Ok(())
        })?;
        Ok(Value::Dict(Rc::new(RefCell::new(items.finish()))))
    }

    /// `yield e` / `yield from it`: the items go to the innermost running generator.
    fn eval_yield(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let span = Span::of(node);
        if let Some(t) = self.tracer.as_mut() {
            t.note_generator(frame.file_id, span);
        }
        // A generator runs to completion when called (`Interp::yields`); a `yield`
        // outside one (a module's top level) yields to nobody.
        if self.yields.is_empty() {
            return Ok(Value::None);
        }
        let from = text(node, &frame.file.text).trim_start()["yield".len()..]
            .trim_start()
            .starts_with("from");
        let v = match first_operand(node) {
            Some(e) => self.eval_expr(frame, e)?,
            None => Value::None,
        };
        let items = if from {
            self.iterate(frame, &v, span)?
        } else {
            vec![v]
        };
        if let Some(r) = self.yield_to_with_body(frame, &items, span) {
            return r;
        }
        if let Some(sink) = self.yields.last_mut() {
            sink.extend(items);
        }
        // what `send()` would pass in: nothing, as when iterated
        Ok(Value::None)
    }

    /// Elements of a tuple/list display, expanding `*iterable`.
    fn eval_items(&mut self, frame: &Frame, node: Node) -> EResult<Vec<Value>> {
        let kids = operands(node);
        let mut out = Vec::with_capacity(kids.len());
        for k in kids {
            if k.kind_name() == "list_splat" {
                let v = self.eval_expr(frame, k)?;
                out.extend(self.iterate(frame, &v, Span::of(k))?);
            } else {
                out.push(self.eval_expr(frame, k)?);
            }
        }
        Ok(out)
    }

    fn comprehension(
        &mut self,
        frame: &Frame,
        node: Node,
        emit: &mut dyn FnMut(&mut Self, &Frame) -> EResult<()>,
    ) -> EResult<()> {
        // Comprehensions get their own scope, as in Python 3.
        let scope = Rc::new(Scope {
            vars: RefCell::new(
                frame
                    .locals
                    .as_ref()
                    .map(|l| l.vars.borrow().clone())
                    .unwrap_or_default(),
            ),
            parent: frame.locals.clone(),
            class_body: false,
        });
        self.created.scope(&scope);
        let inner = Frame {
            locals: Some(scope),
            ..frame.clone()
        };
        let clauses: Vec<Node> = crate::syntax::named_children(node)
            .filter(|k| k.kind_name() == "for_in_clause" || k.kind_name() == "if_clause")
            .collect();
        self.comprehension_level(&inner, &clauses, Some(node), emit)
    }

    fn comprehension_level(
        &mut self,
        frame: &Frame,
        clauses: &[Node],
        // the comprehension, at its first `for` clause
        outermost: Option<Node>,
        emit: &mut dyn FnMut(&mut Self, &Frame) -> EResult<()>,
    ) -> EResult<()> {
        let Some((first, rest)) = clauses.split_first() else {
            return emit(self, frame);
        };
        match first.kind_name() {
            "for_in_clause" => {
                let (Some(left), Some(right)) = (first.field("left"), first.field("right")) else {
                    return Ok(());
                };
                let it = self.eval_expr(frame, right)?;
                if let Some(node) = outermost {
                    self.note_comprehension(frame, node, right, &it);
                }
                for item in self.iterate(frame, &it, Span::of(right))? {
                    self.step(frame, Span::of(*first))?;
                    self.assign(frame, left, item)?;
                    self.comprehension_level(frame, rest, None, emit)?;
                }
                Ok(())
            }
            _ => {
                let Some(cond) = first.named_child(0) else {
                    return Ok(());
                };
                let v = self.eval_expr(frame, cond)?;
                match self.truth(frame, &v, Span::of(cond))? {
                    Truth::Known(false) => Ok(()),
                    _ => self.comprehension_level(frame, rest, None, emit),
                }
            }
        }
    }

    fn eval_comparison(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let src = &*frame.file.text;
        let mut operands = Vec::new();
        let mut ops: Vec<String> = Vec::new();
        let mut pending = String::new();
        for ch in crate::syntax::children(node) {
            if ch.is_named() && !ch.is_extra() {
                if !pending.is_empty() {
                    ops.push(std::mem::take(&mut pending));
                }
                operands.push(ch);
            } else if !ch.is_named() {
                if !pending.is_empty() {
                    pending.push(' ');
                }
                pending.push_str(text(ch, &src));
            }
        }
        if operands.len() < 2 || ops.len() != operands.len() - 1 {
            return Err(self.error(
                frame,
                Span::of(node),
                codes::SYNTAX_ERROR,
                "incomplete comparison",
            ));
        }
        let mut left = self.eval_expr(frame, operands[0])?;
        let mut result = Value::Bool(true);
        for (i, op) in ops.iter().enumerate() {
            let right = self.eval_expr(frame, operands[i + 1])?;
            let span = Span::of(operands[i]).cover(Span::of(operands[i + 1]));
            let r = self.compare(frame, op, left.clone(), right.clone(), span)?;
            if i == 0 {
                result = r;
            } else {
                // Chains are `a < b and b < c`.
                result = match (
                    self.truth(frame, &result, span)?,
                    self.truth(frame, &r, span)?,
                ) {
                    (Truth::Known(false), _) => Value::Bool(false),
                    (Truth::Known(true), _) => r,
                    _ => Value::unknown("chained comparison"),
                };
            }
            left = right;
        }
        Ok(result)
    }

    pub fn compare(
        &mut self,
        frame: &Frame,
        op: &str,
        a: Value,
        b: Value,
        span: Span,
    ) -> EResult<Value> {
        match op {
            "is" | "is not" => {
                let r = match (&a, &b) {
                    (Value::Proxy(_), Value::None) | (Value::None, Value::Proxy(_)) => Some(false),
                    _ => a.py_is(&b),
                };
                Ok(match r {
                    Some(v) => Value::Bool(v == (op == "is")),
                    None => Value::unknown("identity test on an unknown value"),
                })
            }
            "in" | "not in" => {
                if let Some(found) = super::stdlib::os::environ_contains(&b) {
                    return Ok(Value::Bool(found == (op == "in")));
                }
                // Python asks `__contains__` before iterating: transformers' lazy auto mappings
                // answer it from names, while iterating them imports every model.
                let contains = match &b {
                    Value::Object(o) => match self.class_lookup(&o.class, "__contains__") {
                        Some(Value::Function(f)) => Some(f),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(f) = contains {
                    let r = self.call_function(frame, &f, Some(b), vec![a], vec![], span)?;
                    return Ok(match self.truth(frame, &r, span)? {
                        Truth::Known(v) => Value::Bool(v == (op == "in")),
                        _ => Value::unknown("membership test on an unknown value"),
                    });
                }
                let b = self.as_builtin(&b, "__contains__");
                let r = match &b {
                    Value::Proxy(_) => {
                        return self.trace_function(
                            frame,
                            "operator.contains",
                            vec![b, a],
                            vec![],
                            span,
                        )
                    }
                    Value::Dict(d) => d
                        .borrow()
                        .iter()
                        .map(|(k, _)| k.py_eq(&a))
                        .try_fold(false, |acc, e| e.map(|e| acc || e)),
                    Value::Str(s) => match &a {
                        Value::Str(n) => Some(s.contains(&**n)),
                        _ => None,
                    },
                    Value::ModuleGlobals(ns) => match &a {
                        Value::Str(n) => Some(super::types::module_globals::contains(ns, n)),
                        _ => None,
                    },
                    Value::Object(o) if o.is_module() => match &a {
                        Value::Str(n) => {
                            super::trace::replay::note_module_read(o.id, n);
                            Some(o.attrs.borrow().contains_key(&**n))
                        }
                        _ => None,
                    },
                    Value::Unknown(_) => None,
                    other => match self.iterate(frame, other, span) {
                        Ok(items) => self.any_equal(frame, &items, &a, span)?,
                        Err(_) => None,
                    },
                };
                Ok(match r {
                    Some(v) => Value::Bool(v == (op == "in")),
                    None => Value::unknown("membership test on an unknown value"),
                })
            }
            _ => {
                let sym = if binop_name(op).is_some() { op } else { "==" };
                self.binary_op(frame, sym, a, b, span)
            }
        }
    }

    /// Whether `needle` equals one of `items`, as `in` decides it: item by item, with `==`
    /// where a side is traced (`x.dtype in [torch.float16, torch.bfloat16]` compares the
    /// traced dtype); `None` when one comparison cannot be decided.
    fn any_equal(
        &mut self,
        frame: &Frame,
        items: &[Value],
        needle: &Value,
        span: Span,
    ) -> EResult<Option<bool>> {
        for item in items {
            let equal = match item.py_eq(needle) {
                Some(e) => Some(e),
                None if matches!(item, Value::Proxy(_)) || matches!(needle, Value::Proxy(_)) => {
                    let r = self.compare(frame, "==", needle.clone(), item.clone(), span)?;
                    match self.truth(frame, &r, span)? {
                        Truth::Known(b) => Some(b),
                        _ => None,
                    }
                }
                None => None,
            };
            match equal {
                Some(true) => return Ok(Some(true)),
                Some(false) => {}
                None => return Ok(None),
            }
        }
        Ok(Some(false))
    }

    pub fn eval_subscript_key(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let mut c = node.walk();
        let subs: Vec<Node> = node.children_by_field_name("subscript", &mut c).collect();
        let mut vals = Vec::with_capacity(subs.len());
        for s in &subs {
            vals.push(self.eval_expr(frame, *s)?);
        }
        // `x[a, b]` indexes with a tuple; a trailing comma also makes a tuple.
        let trailing_comma = {
            let kids: Vec<Node> = crate::syntax::children(node).collect();
            kids.len() >= 2 && kids[kids.len() - 2].kind_name() == ","
        };
        Ok(if vals.len() == 1 && !trailing_comma {
            vals.pop().unwrap()
        } else {
            Value::tuple(vals)
        })
    }

    fn eval_slice(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let mut parts: [Option<Node>; 3] = [None, None, None];
        let mut idx = 0;
        for ch in crate::syntax::children(node) {
            if ch.kind_name() == ":" {
                idx += 1;
            } else if ch.is_named() && idx < 3 {
                parts[idx] = Some(ch);
            }
        }
        let mut vals = [Value::None, Value::None, Value::None];
        for (i, p) in parts.iter().enumerate() {
            if let Some(p) = p {
                vals[i] = self.eval_expr(frame, *p)?;
                self.note_tensor_slice_bound(frame, &vals[i], Span::of(*p));
            }
        }
        Ok(Value::Slice(Rc::new(vals)))
    }

    /// A tensor as a slice bound (`h[:, :n]` with `n` a one-element tensor): Python asks it for
    /// `__index__`, which reads its value; in a traced forward that is a conversion Dynamo
    /// breaks on, as on `.item()`.
    fn note_tensor_slice_bound(&mut self, frame: &Frame, bound: &Value, span: Span) {
        let Some(t) = self.tracer.as_mut() else {
            return;
        };
        let is_tensor = match bound {
            Value::Proxy(n) => t.meta(*n).is_tensor(),
            Value::TensorConst(_) => true,
            _ => false,
        };
        if is_tensor {
            t.event(
                crate::traced::EventKind::Convert,
                frame.file_id,
                span,
                crate::traced::SLICE_BOUND.to_string(),
            );
        }
    }

    /// Truthiness, deciding statically where Python values allow and classifying the rest.
    pub fn truth(&mut self, frame: &Frame, v: &Value, span: Span) -> EResult<Truth> {
        Ok(match v {
            Value::None => Truth::Known(false),
            Value::Bool(b) => Truth::Known(*b),
            Value::Int(i) => Truth::Known(*i != 0),
            Value::Float(f) => Truth::Known(*f != 0.0),
            Value::Str(s) => Truth::Known(!s.is_empty()),
            Value::Tuple(t) => Truth::Known(!t.is_empty()),
            Value::List(l) => Truth::Known(!l.borrow().is_empty()),
            Value::Dict(d) => Truth::Known(!d.borrow().is_empty()),
            // a namespace always binds `__name__`
            Value::ModuleGlobals(_) => Truth::Known(true),
            Value::Object(o)
                if o.base.is_some()
                    && self.user_method(&o.class, "__bool__").is_none()
                    && self.user_method(&o.class, "__len__").is_none() =>
            {
                let base = o.base.clone().unwrap_or(Value::None);
                return self.truth(frame, &base, span);
            }
            Value::Object(o) => match &o.kind {
                super::value::ObjKind::Container(_) => Truth::Known(!o.children().is_empty()),
                _ => Truth::Known(true),
            },
            Value::Unknown(_) => Truth::Unknown,
            Value::Proxy(n) => match self.tracer.as_ref() {
                Some(t) => t.truth_of(*n),
                None => Truth::Unknown,
            },
            Value::TensorConst(_) | Value::Param(_) => {
                let _ = (frame, span);
                Truth::Unknown
            }
            _ => Truth::Known(true),
        })
    }

    /// The value of a data-dependent boolean expression: stays a proxy so later uses still flow.
    fn data_bool(&mut self, _frame: &Frame, v: &Value, _span: Span) -> Value {
        v.clone()
    }
}

pub fn dict_insert(items: &mut Vec<(Value, Value)>, key: Value, val: Value) {
    if let Some(slot) = items.iter_mut().find(|(k, _)| k.py_eq(&key) == Some(true)) {
        slot.1 = val;
    } else {
        items.push((key, val));
    }
}

fn parse_int(t: &str) -> Option<i64> {
    let t = t.replace('_', "");
    let lower = t.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else {
        lower.trim_end_matches('l').parse().ok()
    }
}

impl Interp {
    /// A string literal's value, with f-string interpolations of simple values (module names
    /// like `f"stage{i}"` are built this way); byte strings are unknown.
    fn eval_string(&mut self, frame: &Frame, node: Node) -> EResult<Value> {
        let src = &*frame.file.text;
        if let Some(plain) = src
            .get(node.start_byte()..node.end_byte())
            .and_then(plain_string_content)
        {
            return Ok(Value::str(plain));
        }
        let mut out = String::new();
        let mut prefix = String::new();
        let kids: Vec<Node> = crate::syntax::children(node).collect();
        for ch in kids {
            match ch.kind_name() {
                "string_start" => {
                    prefix = text(ch, &src)
                        .trim_end_matches(['"', '\''])
                        .to_ascii_lowercase()
                }
                "string_content" => {
                    // Escapes inside string_content are separate nodes; copy the text between.
                    let mut pos = ch.start_byte();
                    for esc in crate::syntax::named_children(ch) {
                        out.push_str(src.get(pos..esc.start_byte()).unwrap_or(""));
                        out.push_str(&if prefix.contains('r') {
                            text(esc, &src).to_string()
                        } else {
                            unescape(text(esc, &src))
                        });
                        pos = esc.end_byte();
                    }
                    out.push_str(src.get(pos..ch.end_byte()).unwrap_or(""));
                }
                "escape_sequence" => out.push_str(&unescape(text(ch, &src))),
                "interpolation" => {
                    let Some(e) = ch.field("expression") else {
                        return Ok(Value::unknown("f-string"));
                    };
                    if ch.field("format_specifier").is_some() {
                        return Ok(Value::unknown("formatted f-string"));
                    }
                    match self.eval_expr(frame, e)? {
                        Value::Str(s) => out.push_str(&s),
                        Value::Int(i) => out.push_str(&i.to_string()),
                        Value::Bool(b) => out.push_str(if b { "True" } else { "False" }),
                        Value::None => out.push_str("None"),
                        // torch.fx formats a traced value as its proxy's repr.
                        // Formatting reads the proxy's node: an attribute's node exists from here.
                        Value::Proxy(n) => match self.tracer.as_mut() {
                            Some(t) => out.push_str(&t.proxy_text(n)),
                            None => return Ok(Value::unknown("f-string")),
                        },
                        _ => return Ok(Value::unknown("f-string")),
                    }
                }
                _ => {}
            }
        }
        if prefix.contains('b') {
            return Ok(Value::unknown("bytes literal"));
        }
        Ok(Value::str(&out))
    }
}

fn unescape(s: &str) -> String {
    match s {
        "\\n" => "\n".into(),
        "\\t" => "\t".into(),
        "\\\\" => "\\".into(),
        "\\'" => "'".into(),
        "\\\"" => "\"".into(),
        other => other.to_string(),
    }
}

/// The value of a string literal without prefix or escapes (`"abc"`, `'''doc'''`): its text
/// between the quotes. Most literals a model's code evaluates are such, and reading them off
/// the text spares the walk over the literal's parts.
fn plain_string_content(literal: &str) -> Option<&str> {
    let bytes = literal.as_bytes();
    let quote = *bytes.first().filter(|b| matches!(b, b'"' | b'\''))?;
    if bytes.contains(&b'\\') {
        return None;
    }
    let delimiter = if bytes.len() >= 6 && bytes[..3] == [quote; 3] {
        3
    } else {
        1
    };
    let closed = bytes.len() >= 2 * delimiter
        && bytes[bytes.len() - delimiter..].iter().all(|&b| b == quote);
    // the delimiters are ASCII, so the cuts fall between characters
    closed.then(|| &literal[delimiter..bytes.len() - delimiter])
}

#[cfg(test)]
mod tests {
    use super::plain_string_content;
    use crate::eval::test_support::{interp_over, notes};
    use crate::eval::value::Value;

    /// timm's csatv2 builds a stage's layers as a parenthesized sum with a comment above each
    /// part (the comment is the parenthesis's first named child); byobnet continues a
    /// conditional expression with a backslash. Expected: what CPython prints for `r`.
    #[test]
    fn comments_and_line_continuations_inside_expressions_are_skipped() {
        let text = "def parts():\n    yield (  # the first\n        1\n    )\n\n\nlayers = (\n    # head\n    [1] +\n    # body\n    [2, 3]\n)\nmore = [\n    *  # spread\n    layers,\n]\nkw = {\n    **  # merged\n    {\"a\": 4},\n}\npick = max(1, \\\n    5) \\\n    if len(layers) == 3 else None\nr = (len(layers), len(more), kw[\"a\"], list(parts()), pick)\n";
        let (mut interp, file) = interp_over("m", text);
        let ns = interp.load_module(file).unwrap();
        assert!(notes(&interp).is_empty(), "{:?}", notes(&interp));
        let Some(Value::Tuple(r)) = ns.vars.borrow().get("r").cloned() else {
            panic!("r is not a tuple");
        };
        let shown: Vec<String> = r.iter().map(|v| format!("{v:?}")).collect();
        assert_eq!(shown, ["3", "3", "4", "[1]", "5"]);
    }

    #[test]
    fn plain_literals_are_read_off_their_text() {
        let cases = [
            (r#""abc""#, Some("abc")),
            (r#"'a"b'"#, Some("a\"b")),
            ("''", Some("")),
            (r#""""""""#, Some("")),
            (r#""""doc "q" """"#, Some("doc \"q\" ")),
            ("'''two\nlines'''", Some("two\nlines")),
            (r#""é—ü""#, Some("é—ü")),
            (r#""{x}""#, Some("{x}")),
            // escapes, prefixes and broken literals take the walk over the parts
            (r#""a\nb""#, None),
            (r#"f"x""#, None),
            (r#"b"x""#, None),
            (r#"r"x""#, None),
            (r#""open"#, None),
            (r#"""#, None),
        ];
        for (literal, want) in cases {
            assert_eq!(plain_string_content(literal), want, "{literal}");
        }
    }
}
