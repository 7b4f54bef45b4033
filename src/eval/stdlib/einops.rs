//! einops `rearrange`, `repeat` and `reduce` on traced tensors (`einsum`, `pack` and
//! `unpack` in `functions`, the layers `Rearrange` / `Reduce` in `layers`, `EinMix` in
//! `einmix`). With torch ≥ 2.8 einops no
//! longer registers them with `allow_in_graph` (`einops._torch_specific`): Dynamo traces
//! einops' own Python, which parses the pattern, works out every length from the input's
//! shape (specialised to ints) and calls its torch backend: `reshape`, `permute`, the
//! reduction, `torch.unsqueeze` + `expand` for new axes, `reshape`. This module follows
//! einops 0.8's recipe (`_prepare_transformation_recipe`, `_reconstruct_from_shape`,
//! `_apply_recipe`) step for step, so the graph holds the nodes Dynamo records, with shapes.
//! torch.fx cannot trace einops at all (its backend does not know a Proxy).
//!
//! Errors are einops' own (`EinopsError` with its message). A pattern that does not fit the
//! input raises whenever the call runs: the call is recorded with the error beside it (FX301,
//! `Interp::mark_raising`) and the trace goes on. A length that is not a known int (a
//! symbolic input size) leaves the call to the caller's handling: one opaque node.

use crate::eval::types::proxy;
use indexmap::IndexMap;

use super::super::call::Kwargs;
use super::super::value::Value;
use super::super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::shapes::{Dim, Meta, Scalar};
use crate::syntax::Span;

mod einmix;
mod functions;
mod layers;
pub(in crate::eval) use layers::layer_name as einops_layer_name;

/// `…`: einops' name for the ellipsis once parsed (one symbol, so it is not a list).
const ELLIPSIS: &str = "\u{2026}";
const REDUCTIONS: &[&str] = &["min", "max", "sum", "mean", "prod", "any", "all"];

#[derive(Clone, Debug, PartialEq)]
enum Group {
    Ellipsis,
    Axes(Vec<String>),
}

/// One side of a pattern. Anonymous axes (`2` in `(h 2)`) are distinct from each other, as
/// einops' `AnonymousAxis` objects are: each gets its own key `#n`.
struct Parsed {
    composition: Vec<Group>,
    identifiers: Vec<String>,
    has_ellipsis: bool,
    ellipsis_parenthesized: Option<bool>,
    has_non_unitary_anonymous: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Length {
    Unknown,
    Expected,
    Known(i64),
}

struct Recipe {
    elementary_lengths: Vec<Length>,
    kwarg_axis: IndexMap<String, usize>,
    input_known_unknown: Vec<(Vec<usize>, Vec<usize>)>,
    axes_permutation: Vec<usize>,
    first_reduced_axis: usize,
    added_axes: Vec<(usize, usize)>,
    output_groups: Vec<Vec<usize>>,
}

struct Anonymous {
    lengths: IndexMap<String, i64>,
}

impl Anonymous {
    fn add(&mut self, value: i64) -> String {
        let key = format!("#{}", self.lengths.len());
        self.lengths.insert(key.clone(), value);
        key
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

fn axis_name_error(name: &str) -> Option<&'static str> {
    if !is_identifier(name) {
        Some("not a valid python identifier")
    } else if name.starts_with('_') || name.ends_with('_') {
        Some("axis name should should not start or end with underscore")
    } else {
        None
    }
}

fn parse(expression: &str, anonymous: &mut Anonymous) -> Result<Parsed, String> {
    let mut p = Parsed {
        composition: vec![],
        identifiers: vec![],
        has_ellipsis: false,
        ellipsis_parenthesized: None,
        has_non_unitary_anonymous: false,
    };
    let mut expression = expression.to_string();
    if expression.contains('.') {
        if !expression.contains("...") {
            return Err("Expression may contain dots only inside ellipsis (...)".into());
        }
        if expression.matches("...").count() != 1 || expression.matches('.').count() != 3 {
            return Err(
                "Expression may contain dots only inside ellipsis (...); only one ellipsis for tensor "
                    .into(),
            );
        }
        expression = expression.replace("...", ELLIPSIS);
        p.has_ellipsis = true;
    }
    let mut bracket: Option<Vec<String>> = None;
    let mut add = |x: &str, p: &mut Parsed, bracket: &mut Option<Vec<String>>| {
        if p.identifiers.iter().any(|i| i == x) {
            return Err(format!(
                "Indexing expression contains duplicate dimension \"{x}\""
            ));
        }
        if x == ELLIPSIS {
            p.identifiers.push(x.to_string());
            match bracket {
                None => {
                    p.composition.push(Group::Ellipsis);
                    p.ellipsis_parenthesized = Some(false);
                }
                Some(b) => {
                    b.push(x.to_string());
                    p.ellipsis_parenthesized = Some(true);
                }
            }
            return Ok(());
        }
        let is_number = x.chars().all(|c| c.is_ascii_digit());
        if is_number && x.parse::<i64>() == Ok(1) {
            if bracket.is_none() {
                p.composition.push(Group::Axes(vec![]));
            }
            return Ok(());
        }
        let name = if is_number {
            let value: i64 = x
                .parse()
                .map_err(|_| format!("Invalid axis identifier: {x}"))?;
            if value <= 0 {
                return Err(format!(
                    "Anonymous axis should have positive length, not {value}"
                ));
            }
            p.has_non_unitary_anonymous = true;
            anonymous.add(value)
        } else {
            if let Some(reason) = axis_name_error(x) {
                return Err(format!("Invalid axis identifier: {x}\n{reason}"));
            }
            x.to_string()
        };
        p.identifiers.push(name.clone());
        match bracket {
            None => p.composition.push(Group::Axes(vec![name])),
            Some(b) => b.push(name),
        }
        Ok(())
    };
    let mut current = String::new();
    for c in expression.chars() {
        if matches!(c, '(' | ')' | ' ') {
            if !current.is_empty() {
                add(&std::mem::take(&mut current), &mut p, &mut bracket)?;
            }
            if c == '(' {
                if bracket.is_some() {
                    return Err(
                        "Axis composition is one-level (brackets inside brackets not allowed)"
                            .into(),
                    );
                }
                bracket = Some(vec![]);
            } else if c == ')' {
                match bracket.take() {
                    Some(b) => p.composition.push(Group::Axes(b)),
                    None => return Err("Brackets are not balanced".into()),
                }
            }
        } else if c.is_alphanumeric() || c == '_' || c.to_string() == ELLIPSIS {
            current.push(c);
        } else {
            return Err(format!("Unknown character '{c}'"));
        }
    }
    if bracket.is_some() {
        return Err(format!(
            "Imbalanced parentheses in expression: \"{expression}\""
        ));
    }
    if !current.is_empty() {
        add(&current, &mut p, &mut bracket)?;
    }
    Ok(p)
}

fn set_text(names: &[&String]) -> String {
    let inner: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    format!("{{{}}}", inner.join(", "))
}

/// `_prepare_transformation_recipe`: the pattern read against the input's rank.
fn prepare(
    pattern: &str,
    operation: &str,
    axes_names: &[String],
    ndim: usize,
) -> Result<(Recipe, Anonymous), String> {
    let mut anonymous = Anonymous {
        lengths: IndexMap::new(),
    };
    let sides: Vec<&str> = pattern.split("->").collect();
    if sides.len() != 2 {
        return Err(format!("pattern `{pattern}` must have exactly one `->`"));
    }
    let mut left = parse(sides[0], &mut anonymous)?;
    let mut right = parse(sides[1], &mut anonymous)?;
    if !left.has_ellipsis && right.has_ellipsis {
        return Err(format!(
            "Ellipsis found in right side, but not left side of a pattern {pattern}"
        ));
    }
    if left.has_ellipsis && left.ellipsis_parenthesized == Some(true) {
        return Err(format!(
            "Ellipsis inside parenthesis in the left side is not allowed: {pattern}"
        ));
    }
    check_operation(operation, &left, &right, axes_names)?;
    let (left_composition, right_composition) = compositions(&mut left, &mut right, ndim)?;

    let known_or_unknown = |a: &str| match anonymous.lengths.get(a) {
        Some(&v) => Length::Known(v),
        None => Length::Unknown,
    };
    let mut lengths: IndexMap<String, Length> = IndexMap::new();
    for a in left_composition.iter().flatten() {
        lengths.insert(a.clone(), known_or_unknown(a));
    }
    for a in right_composition.iter().flatten() {
        if !lengths.contains_key(a) {
            lengths.insert(a.clone(), known_or_unknown(a));
        }
    }
    for a in axes_names {
        if axis_name_error(a).is_some() {
            return Err(format!("('Invalid name for an axis', '{a}')"));
        }
        match lengths.get_mut(a) {
            Some(l) => *l = Length::Expected,
            None => return Err(format!("Axis {a} is not used in transform")),
        }
    }
    let position = |a: &str| lengths.get_index_of(a).expect("every axis has a length");

    let mut input_known_unknown = vec![];
    for group in &left_composition {
        let (known, unknown): (Vec<&String>, Vec<&String>) = group
            .iter()
            .partition(|a| lengths[a.as_str()] != Length::Unknown);
        if unknown.len() > 1 {
            return Err(format!("Could not infer sizes for {}", set_text(&unknown)));
        }
        input_known_unknown.push((
            known.iter().map(|a| position(a)).collect(),
            unknown.iter().map(|a| position(a)).collect(),
        ));
    }
    let ordered_left: Vec<&String> = left_composition.iter().flatten().collect();
    let ordered_right: Vec<&String> = right_composition.iter().flatten().collect();
    let reduced: Vec<&String> = ordered_left
        .iter()
        .copied()
        .filter(|a| !right.identifiers.contains(a))
        .collect();
    let mut after_transposition: Vec<&String> = ordered_right
        .iter()
        .copied()
        .filter(|a| left.identifiers.contains(a))
        .collect();
    after_transposition.extend(reduced.iter().copied());
    let axes_permutation = after_transposition
        .iter()
        .map(|a| ordered_left.iter().position(|b| b == a).unwrap_or(0))
        .collect();
    let added_axes = ordered_right
        .iter()
        .enumerate()
        .filter(|(_, a)| !left.identifiers.contains(a))
        .map(|(i, a)| (i, position(a)))
        .collect();
    let recipe = Recipe {
        elementary_lengths: lengths.values().copied().collect(),
        kwarg_axis: axes_names
            .iter()
            .map(|a| (a.clone(), position(a)))
            .collect(),
        input_known_unknown,
        axes_permutation,
        first_reduced_axis: after_transposition.len() - reduced.len(),
        added_axes,
        output_groups: right_composition
            .iter()
            .map(|g| g.iter().map(|a| position(a)).collect())
            .collect(),
    };
    Ok((recipe, anonymous))
}

/// The identifiers of `a` not in `b`.
fn only_in(a: &Parsed, b: &Parsed) -> Vec<String> {
    a.identifiers
        .iter()
        .filter(|i| !b.identifiers.contains(i))
        .cloned()
        .collect()
}

/// The checks einops makes of a pattern's sides for the operation (`rearrange`, `repeat` or a
/// reduction), with its messages.
fn check_operation(
    operation: &str,
    left: &Parsed,
    right: &Parsed,
    axes_names: &[String],
) -> Result<(), String> {
    match operation {
        "rearrange" => {
            if left.has_non_unitary_anonymous || right.has_non_unitary_anonymous {
                return Err(
                    "Non-unitary anonymous axes are not supported in rearrange (exception is length 1)"
                        .into(),
                );
            }
            let mut difference = only_in(left, right);
            difference.extend(only_in(right, left));
            if !difference.is_empty() {
                return Err(format!(
                    "Identifiers only on one side of expression (should be on both): {}",
                    set_text(&difference.iter().collect::<Vec<_>>())
                ));
            }
        }
        "repeat" => {
            let difference = only_in(left, right);
            if !difference.is_empty() {
                return Err(format!(
                    "Unexpected identifiers on the left side of repeat: {}",
                    set_text(&difference.iter().collect::<Vec<_>>())
                ));
            }
            let without_size: Vec<&String> = right
                .identifiers
                .iter()
                .filter(|a| !a.starts_with('#'))
                .filter(|a| !left.identifiers.contains(a) && !axes_names.contains(a))
                .collect();
            if !without_size.is_empty() {
                return Err(format!(
                    "Specify sizes for new axes in repeat: {}",
                    set_text(&without_size)
                ));
            }
        }
        op if REDUCTIONS.contains(&op) || op == "<callable>" => {
            let difference = only_in(right, left);
            if !difference.is_empty() {
                return Err(format!(
                    "Unexpected identifiers on the right side of reduce {op}: {}",
                    set_text(&difference.iter().collect::<Vec<_>>())
                ));
            }
        }
        op => {
            return Err(format!(
                "Unknown reduction {op}. Expect one of ('min', 'max', 'sum', 'mean', 'prod', 'any', 'all')."
            ))
        }
    }
    Ok(())
}

/// A side's axis groups, an ellipsis expanded: `(b h) w` is `[["b", "h"], ["w"]]`.
type Groups = Vec<Vec<String>>;

/// Both sides' axis groups for an input of rank `ndim`, an ellipsis expanded to the axes it
/// stands for (which join the sides' identifiers).
fn compositions(
    left: &mut Parsed,
    right: &mut Parsed,
    ndim: usize,
) -> Result<(Groups, Groups), String> {
    Ok(if left.has_ellipsis {
        let others = left.composition.len() - 1;
        if ndim < others {
            return Err(format!(
                "Wrong shape: expected >={others} dims. Received {ndim}-dim tensor."
            ));
        }
        let ell: Vec<String> = (0..ndim - others)
            .map(|i| format!("{ELLIPSIS}{i}"))
            .collect();
        let mut lc = vec![];
        for g in &left.composition {
            match g {
                Group::Ellipsis => lc.extend(ell.iter().map(|a| vec![a.clone()])),
                Group::Axes(a) => lc.push(a.clone()),
            }
        }
        let mut rc = vec![];
        for g in &right.composition {
            match g {
                Group::Ellipsis => rc.extend(ell.iter().map(|a| vec![a.clone()])),
                Group::Axes(axes) => {
                    let mut group = vec![];
                    for a in axes {
                        if a == ELLIPSIS {
                            group.extend(ell.iter().cloned());
                        } else {
                            group.push(a.clone());
                        }
                    }
                    rc.push(group);
                }
            }
        }
        left.identifiers.retain(|i| i != ELLIPSIS);
        left.identifiers.extend(ell.iter().cloned());
        if right.has_ellipsis {
            right.identifiers.retain(|i| i != ELLIPSIS);
            right.identifiers.extend(ell.iter().cloned());
        }
        (lc, rc)
    } else {
        if ndim != left.composition.len() {
            return Err(format!(
                "Wrong shape: expected {} dims. Received {ndim}-dim tensor.",
                left.composition.len()
            ));
        }
        let axes = |c: &[Group]| -> Vec<Vec<String>> {
            c.iter()
                .map(|g| match g {
                    Group::Axes(a) => a.clone(),
                    Group::Ellipsis => vec![],
                })
                .collect()
        };
        (axes(&left.composition), axes(&right.composition))
    })
}

/// `_reconstruct_from_shape`: what `_apply_recipe` does for this input shape.
struct Steps {
    init_shape: Option<Vec<i64>>,
    permutation: Option<Vec<usize>>,
    reduced_axes: Vec<usize>,
    added_axes: Vec<(usize, i64)>,
    final_shape: Option<Vec<i64>>,
    n_axes_with_added: usize,
}

fn reconstruct(recipe: &Recipe, shape: &[i64], axes: &[(String, i64)]) -> Result<Steps, String> {
    let mut lengths: Vec<Option<i64>> = recipe
        .elementary_lengths
        .iter()
        .map(|l| match l {
            Length::Known(v) => Some(*v),
            _ => None,
        })
        .collect();
    for (name, dim) in axes {
        lengths[recipe.kwarg_axis[name.as_str()]] = Some(*dim);
    }
    let mut need_init_reshape = false;
    for (i, (known, unknown)) in recipe.input_known_unknown.iter().enumerate() {
        let length = shape[i];
        if known.is_empty() && unknown.len() == 1 {
            lengths[unknown[0]] = Some(length);
            continue;
        }
        let known_product: i64 = known.iter().map(|&k| lengths[k].unwrap_or(1)).product();
        match unknown.first() {
            None if length != known_product => {
                return Err(format!("Shape mismatch, {length} != {known_product}"))
            }
            None => {}
            Some(&u) => {
                if known_product == 0 || length % known_product != 0 {
                    return Err(format!(
                        "Shape mismatch, can't divide axis of length {length} in chunks of {known_product}"
                    ));
                }
                lengths[u] = Some(length / known_product);
            }
        }
        if known.len() + unknown.len() != 1 {
            need_init_reshape = true;
        }
    }
    let n = recipe.axes_permutation.len();
    let length = |i: usize| lengths[i].ok_or_else(|| "an axis length is not known".to_string());
    let init_shape = if need_init_reshape {
        Some((0..n).map(length).collect::<Result<Vec<_>, _>>()?)
    } else {
        None
    };
    let mut need_final_reshape = false;
    let mut final_shape = vec![];
    for group in &recipe.output_groups {
        final_shape.push(
            group
                .iter()
                .map(|&i| length(i))
                .product::<Result<i64, _>>()?,
        );
        if group.len() != 1 {
            need_final_reshape = true;
        }
    }
    let added_axes = recipe
        .added_axes
        .iter()
        .map(|&(pos, i)| Ok((pos, length(i)?)))
        .collect::<Result<Vec<_>, String>>()?;
    let identity = recipe.axes_permutation.iter().copied().eq(0..n);
    Ok(Steps {
        init_shape,
        permutation: (!identity).then(|| recipe.axes_permutation.clone()),
        reduced_axes: (recipe.first_reduced_axis..n).collect(),
        n_axes_with_added: added_axes.len() + n,
        added_axes,
        final_shape: need_final_reshape.then_some(final_shape),
    })
}

fn ints(v: &[i64]) -> Value {
    Value::list(v.iter().map(|&d| Value::Int(d)).collect())
}

impl Interp {
    /// einops' `rearrange`, `repeat`, `reduce` called on a traced tensor (or a list of them);
    /// None for anything else.
    pub(super) fn call_einops(
        &mut self,
        frame: &Frame,
        name: &str,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        let op = name.strip_prefix("einops.").unwrap_or(name);
        let positional = kwargs.is_empty() && proxy::records_call(self, args, kwargs);
        match op {
            "einsum" if positional => return self.einops_einsum(frame, args, span),
            "pack" if positional => return self.einops_pack(frame, args, span),
            "unpack" if positional => return self.einops_unpack(frame, args, span),
            _ => {}
        }
        if !matches!(op, "rearrange" | "repeat" | "reduce")
            || !proxy::records_call(self, args, kwargs)
        {
            return None;
        }
        let tensor = args.first()?;
        let traced = |v: &Value| matches!(v, Value::Proxy(_));
        let stacked = match tensor {
            Value::Proxy(_) => false,
            Value::List(items)
                if !items.borrow().is_empty() && items.borrow().iter().all(traced) =>
            {
                true
            }
            _ => return None,
        };
        let Some(Value::Str(pattern)) = args.get(1) else {
            return None;
        };
        let mut reduction = match op {
            "reduce" => args.get(2).cloned(),
            other => Some(Value::Str(other.into())),
        };
        let mut axes = vec![];
        for (k, v) in kwargs {
            if op == "reduce" && k == "reduction" {
                reduction = Some(v.clone());
                continue;
            }
            axes.push((k.clone(), self.specialised_int(v)?));
        }
        let operation = match &reduction {
            Some(Value::Str(s)) => s.to_string(),
            Some(Value::Function(_) | Value::BoundMethod(..) | Value::Partial(_)) => {
                "<callable>".to_string()
            }
            Some(Value::External(_) | Value::Builtin(_)) => "<callable>".to_string(),
            _ => return None,
        };
        let mut t = tensor.clone();
        if stacked {
            t = match self.trace_function(frame, "torch.stack", vec![t], vec![], span) {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            };
        }
        let shape = self.known_shape(&t)?;
        let names: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
        let steps = prepare(pattern, &operation, &names, shape.len())
            .and_then(|(recipe, _)| reconstruct(&recipe, &shape, &axes));
        let steps = match steps {
            Ok(s) => s,
            Err(message) => {
                // einops raises on this input whenever it runs: the user's bug (FX301), on a
                // node of its own, and the trace goes on
                let mut call_args = vec![t];
                call_args.extend(args.iter().skip(1).cloned());
                let call = self.trace_function(
                    frame,
                    &format!("einops.{op}"),
                    call_args,
                    kwargs.clone(),
                    span,
                );
                return Some(call.map(|call| {
                    self.mark_raising(&call, format!("raises EinopsError: {message}"));
                    call
                }));
            }
        };
        Some(self.apply_einops_steps(frame, t, steps, reduction, false, span))
    }

    fn apply_einops_steps(
        &mut self,
        frame: &Frame,
        mut t: Value,
        steps: Steps,
        reduction: Option<Value>,
        scriptable: bool,
        span: Span,
    ) -> EResult<Value> {
        if let Some(shape) = &steps.init_shape {
            t = self.trace_method(frame, "reshape", t, vec![ints(shape)], vec![], span)?;
        }
        if let Some(axes) = &steps.permutation {
            let axes: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
            t = self.trace_method(frame, "permute", t, vec![ints(&axes)], vec![], span)?;
        }
        if !steps.reduced_axes.is_empty() {
            let reduced: Vec<Value> = steps
                .reduced_axes
                .iter()
                .map(|&a| Value::Int(a as i64))
                .collect();
            t = match reduction {
                Some(Value::Str(how)) if scriptable => {
                    self.scriptable_reduce(frame, t, &how, reduced, span)?
                }
                Some(Value::Str(how)) => self.einops_reduce(frame, t, &how, reduced, span)?,
                Some(f) => {
                    self.call_value(frame, &f, vec![t, Value::tuple(reduced)], vec![], span)?
                }
                None => t,
            };
        }
        if !steps.added_axes.is_empty() {
            let mut repeats = vec![-1; steps.n_axes_with_added];
            for &(pos, len) in &steps.added_axes {
                t = self.trace_function(
                    frame,
                    "torch.unsqueeze",
                    vec![t, Value::Int(pos as i64)],
                    vec![],
                    span,
                )?;
                repeats[pos] = len;
            }
            t = self.trace_method(frame, "expand", t, vec![ints(&repeats)], vec![], span)?;
        }
        if let Some(shape) = &steps.final_shape {
            t = self.trace_method(frame, "reshape", t, vec![ints(shape)], vec![], span)?;
        }
        Ok(t)
    }

    /// The torch backend's `reduce`: one call over all axes, or one per axis, last first, for
    /// the reductions torch takes a single `dim` for.
    fn einops_reduce(
        &mut self,
        frame: &Frame,
        mut t: Value,
        how: &str,
        reduced: Vec<Value>,
        span: Span,
    ) -> EResult<Value> {
        if how == "mean" {
            let floating = match &t {
                Value::Proxy(n) => match self.tracer.as_ref().map(|tr| tr.meta(*n)) {
                    Some(Meta::Tensor(m)) => m.dtype.is_floating(),
                    _ => true,
                },
                _ => true,
            };
            if !floating {
                return Err(self.error(
                    frame,
                    span,
                    codes::RAISED,
                    "NotImplementedError: reduce_mean is not available for non-floating tensors",
                ));
            }
        }
        let method = match how {
            "min" => "amin",
            "max" => "amax",
            other => other,
        };
        if matches!(how, "any" | "all" | "prod") {
            for axis in reduced.into_iter().rev() {
                t =
                    self.trace_method(frame, method, t, vec![], vec![("dim".into(), axis)], span)?;
            }
            return Ok(t);
        }
        self.trace_method(
            frame,
            method,
            t,
            vec![],
            vec![("dim".into(), Value::tuple(reduced))],
            span,
        )
    }

    /// The input's shape when every size is a known int (Dynamo specialises on them).
    fn known_shape(&self, t: &Value) -> Option<Vec<i64>> {
        let Value::Proxy(n) = t else { return None };
        match self.tracer.as_ref()?.meta(*n) {
            Meta::Tensor(m) => m.shape.as_ref()?.iter().map(Dim::known).collect(),
            _ => None,
        }
    }

    /// An axis length given as a keyword: an int, or a size read off a traced shape.
    fn specialised_int(&self, v: &Value) -> Option<i64> {
        match v {
            Value::Int(i) => Some(*i),
            Value::Proxy(n) => match self.tracer.as_ref()?.meta(*n) {
                Meta::Scalar(Scalar::Int(Some(i)), _) => Some(*i),
                _ => None,
            },
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(pattern: &str, op: &str, shape: &[i64], axes: &[(&str, i64)]) -> Steps {
        let axes: Vec<(String, i64)> = axes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let names: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
        let (recipe, _) = prepare(pattern, op, &names, shape.len()).unwrap();
        reconstruct(&recipe, shape, &axes).unwrap()
    }

    #[test]
    fn merge_and_move_axes() {
        let s = steps("b c h w -> b (h w) c", "rearrange", &[2, 6, 4, 5], &[]);
        assert_eq!(s.init_shape, None);
        assert_eq!(s.permutation, Some(vec![0, 2, 3, 1]));
        assert_eq!(s.final_shape, Some(vec![2, 20, 6]));
    }

    #[test]
    fn anonymous_axes_are_reduced() {
        let s = steps("b c (h 2) (w 5) -> b c h w", "max", &[2, 6, 4, 5], &[]);
        assert_eq!(s.init_shape, Some(vec![2, 6, 2, 2, 1, 5]));
        assert_eq!(s.permutation, Some(vec![0, 1, 2, 4, 3, 5]));
        assert_eq!(s.reduced_axes, vec![4, 5]);
        assert_eq!(s.final_shape, None);
    }

    #[test]
    fn repeat_adds_axes_in_front() {
        let s = steps("b c -> (r b) c", "repeat", &[2, 6], &[("r", 2)]);
        assert_eq!(s.added_axes, vec![(0, 2)]);
        assert_eq!(s.n_axes_with_added, 3);
        assert_eq!(s.final_shape, Some(vec![4, 6]));
    }

    #[test]
    fn errors_are_einops_messages() {
        let err = |p: &str, op: &str, shape: &[i64]| {
            prepare(p, op, &[], shape.len())
                .and_then(|(r, _)| reconstruct(&r, shape, &[]))
                .err()
                .unwrap()
        };
        assert_eq!(
            err("b c -> b c d", "rearrange", &[2, 3]),
            "Identifiers only on one side of expression (should be on both): {'d'}"
        );
        assert_eq!(
            err("b (c 4) -> b c", "sum", &[2, 6]),
            "Shape mismatch, can't divide axis of length 6 in chunks of 4"
        );
        assert_eq!(
            err("b c h -> b c", "mean", &[2, 3]),
            "Wrong shape: expected 3 dims. Received 2-dim tensor."
        );
    }
}
