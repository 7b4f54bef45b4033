//! einops' `einops.layers.torch.EinMix(pattern, weight_shape, bias_shape=None,
//! **axes_lengths)` as einops 0.8 builds it and Dynamo traces it.
//!
//! `__init__` (`_EinmixMixin.initialize_einmix`) checks the pattern against the weight's and
//! the bias' axes (its `EinopsError`s, in its order), makes a `Rearrange` child
//! `pre_rearrange` that splits the input's composed axes (`b (h w) c -> b h w c`) and one
//! `post_rearrange` that composes the output's, the parameters `weight` (the weight axes'
//! lengths) and `bias` (the output's flattened axes, 1 for an axis the bias does not span),
//! and the einsum pattern in one letter per axis name (the names sorted, `a`, `b`, …).
//!
//! `forward` is inlined by Dynamo: the pre-rearrange's recipe, `torch.einsum(pattern, x,
//! weight)`, `result += bias` (an `operator.iadd` node) and the post-rearrange's recipe. An
//! input the layer cannot take raises whenever it runs: the layer's call is recorded with the
//! error (FX301) before any of its nodes, and the trace goes on with an unknown shape.

use std::rc::Rc;

use super::super::super::call::Kwargs;
use super::super::super::value::{ObjKind, Object, Param, Value};
use super::super::super::{EResult, Frame, Interp};
use super::{parse, Anonymous, Group, Parsed, Steps, ELLIPSIS};
use crate::diagnostics::codes;
use crate::shapes::rules::{self, Inputs};
use crate::shapes::{shape_of, DType, Meta};
use crate::syntax::Span;

/// The pattern read against the weight's axes: what `__init__` works out before it builds
/// the rearrange layers.
struct Sides {
    left: Parsed,
    right: Parsed,
    weight: Parsed,
    anonymous: Anonymous,
    /// `Rearrange(pattern, **lengths)` splitting the input's composed axes, if any.
    pre: Option<(String, Vec<String>)>,
    /// `Rearrange(pattern)` composing the output's axes, if any.
    post: Option<String>,
}

/// The parameters' shapes and the einsum pattern.
#[derive(Debug, PartialEq)]
struct Params {
    weight: Vec<i64>,
    bias: Option<Vec<i64>>,
    einsum: String,
}

/// A set of axes as Python prints it, `{'a', 'b'}` (an anonymous axis as `3-axis`).
fn set_text(axes: &[&String], anonymous: &Anonymous) -> String {
    let shown: Vec<String> = axes
        .iter()
        .map(|a| match anonymous.lengths.get(a.as_str()) {
            Some(v) => format!("{v}-axis"),
            None if a.as_str() == ELLIPSIS => format!("'{ELLIPSIS}'"),
            None => format!("'{a}'"),
        })
        .collect();
    format!("{{{}}}", shown.join(", "))
}

/// `_report_axes(a - (b ∪ c), message)`: einops' complaint when the difference is not empty.
fn report(
    a: &[String],
    others: &[&[String]],
    message: &str,
    anon: &Anonymous,
) -> Result<(), String> {
    let extra: Vec<&String> = a
        .iter()
        .filter(|x| !others.iter().any(|o| o.contains(x)))
        .collect();
    if extra.is_empty() {
        return Ok(());
    }
    Err(format!(
        "EinopsError: {}",
        message.replace("{}", &set_text(&extra, anon))
    ))
}

/// A side's axes in order, each group's flattened, the ellipsis written `...`.
fn flat_names(p: &Parsed) -> Vec<String> {
    let mut names = vec![];
    for g in &p.composition {
        match g {
            Group::Ellipsis => names.push("...".to_string()),
            Group::Axes(axes) => names.extend(axes.iter().map(|a| {
                if a == ELLIPSIS {
                    "...".into()
                } else {
                    a.clone()
                }
            })),
        }
    }
    names
}

fn composed(p: &Parsed) -> bool {
    p.composition
        .iter()
        .any(|g| matches!(g, Group::Axes(a) if a.len() != 1))
}

/// The first half of `initialize_einmix`: the checks of the pattern and the rearrange
/// patterns (`axes` are the names of `axes_lengths`, in order).
fn sides(pattern: &str, weight_shape: &str, axes: &[String]) -> Result<Sides, String> {
    let parts: Vec<&str> = pattern.split("->").collect();
    let [left_text, right_text] = parts[..] else {
        return Err(if parts.len() < 2 {
            "ValueError: not enough values to unpack (expected 2, got 1)".into()
        } else {
            "ValueError: too many values to unpack (expected 2)".into()
        });
    };
    let mut anonymous = Anonymous {
        lengths: Default::default(),
    };
    let einops = |e: String| format!("EinopsError: {e}");
    let left = parse(left_text, &mut anonymous).map_err(einops)?;
    let right = parse(right_text, &mut anonymous).map_err(einops)?;
    let weight = parse(weight_shape, &mut anonymous).map_err(einops)?;
    let message = "Unrecognized identifiers on the right side of EinMix {}";
    report(
        &right.identifiers,
        &[&left.identifiers, &weight.identifiers],
        message,
        &anonymous,
    )?;
    if weight.has_ellipsis {
        return Err(einops(
            "Ellipsis is not supported in weight, as its shape should be fully specified".into(),
        ));
    }
    if left.has_ellipsis != right.has_ellipsis {
        return Err(einops(format!(
            "Ellipsis in EinMix should be on both sides, {pattern}"
        )));
    }
    if left.ellipsis_parenthesized == Some(true) {
        return Err(einops(format!(
            "Ellipsis on left side can't be in parenthesis, got {pattern}"
        )));
    }
    if [&left, &right, &weight]
        .iter()
        .any(|p| p.has_non_unitary_anonymous)
    {
        return Err(einops(
            "Anonymous axes (numbers) are not allowed in EinMix".into(),
        ));
    }
    if weight_shape.contains(['(', ')']) {
        return Err(einops(format!(
            "Parenthesis is not allowed in weight shape: {weight_shape}"
        )));
    }
    let pre = composed(&left).then(|| {
        let names = flat_names(&left);
        let lengths = axes.iter().filter(|a| names.contains(a)).cloned().collect();
        (format!("{left_text}-> {}", names.join(" ")), lengths)
    });
    let post = (composed(&right) || right.ellipsis_parenthesized == Some(true))
        .then(|| format!("{} ->{right_text}", flat_names(&right).join(" ")));
    Ok(Sides {
        left,
        right,
        weight,
        anonymous,
        pre,
        post,
    })
}

/// The second half of `initialize_einmix`: the weight's and bias' checks and shapes, and the
/// einsum pattern. `bias` is `Err` for a bias shape that is not a string.
fn params(
    s: &Sides,
    bias: Option<Result<&str, ()>>,
    axes: &[(String, i64)],
) -> Result<Params, String> {
    let length = |a: &String| axes.iter().find(|(k, _)| k == a).map(|(_, v)| *v);
    for a in &s.weight.identifiers {
        if length(a).is_none() {
            return Err(format!(
                "EinopsError: Dimension {a} of weight should be specified"
            ));
        }
    }
    let names: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
    let (left, right, weight) = (
        &s.left.identifiers,
        &s.right.identifiers,
        &s.weight.identifiers,
    );
    report(
        &names,
        &[left, weight],
        "Axes {} are not used in pattern",
        &s.anonymous,
    )?;
    report(
        weight,
        &[left, right],
        "Weight axes {} are redundant",
        &s.anonymous,
    )?;
    let mut weight_shape = vec![];
    for g in &s.weight.composition {
        match g {
            Group::Axes(a) if a.len() == 1 => weight_shape.push(length(&a[0]).unwrap_or(1)),
            _ => return Err("ValueError: not enough values to unpack (expected 1, got 0)".into()),
        }
    }
    let bias =
        match bias {
            None => None,
            Some(Err(())) => return Err(
                "EinopsError: bias shape should be string specifying which axes bias depends on"
                    .into(),
            ),
            Some(Ok(b)) => Some(bias_shape(s, b, axes)?),
        };
    Ok(Params {
        weight: weight_shape,
        bias,
        einsum: einsum_pattern(s)?,
    })
}

/// The bias' shape: the output's flattened axes, the bias' own at their lengths and 1 for
/// the others, none before an ellipsis once a bias axis was placed.
fn bias_shape(s: &Sides, bias: &str, axes: &[(String, i64)]) -> Result<Vec<i64>, String> {
    let mut anonymous = Anonymous {
        lengths: Default::default(),
    };
    let b = parse(bias, &mut anonymous).map_err(|e| format!("EinopsError: {e}"))?;
    let right = &s.right.identifiers;
    report(
        &b.identifiers,
        &[right],
        "Bias axes {} not present in output",
        &anonymous,
    )?;
    let names: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
    report(
        &b.identifiers,
        &[&names],
        "Sizes not provided for bias axes {}",
        &anonymous,
    )?;
    let after_ellipsis =
        "EinopsError: all bias dimensions should go after ellipsis in the output".to_string();
    let mut shape = vec![];
    let mut used = false;
    for g in &s.right.composition {
        let group = match g {
            Group::Ellipsis if used => return Err(after_ellipsis),
            Group::Ellipsis => continue,
            Group::Axes(a) => a,
        };
        for a in group {
            if a == ELLIPSIS {
                if used {
                    return Err(after_ellipsis);
                }
            } else if b.identifiers.contains(a) {
                shape.push(axes.iter().find(|(k, _)| k == a).map_or(1, |(_, v)| *v));
                used = true;
            } else {
                shape.push(1);
            }
        }
    }
    Ok(shape)
}

/// `left,weight->right` with every axis name a letter, `a` for the first in sorted order.
fn einsum_pattern(s: &Sides) -> Result<String, String> {
    let mut names: Vec<&String> = [&s.left, &s.right, &s.weight]
        .iter()
        .flat_map(|p| p.identifiers.iter())
        .filter(|a| a.as_str() != ELLIPSIS)
        .collect();
    names.sort();
    names.dedup();
    if names.len() > 26 {
        return Err("KeyError: more than 26 axes in EinMix".into());
    }
    let letter = |a: &str| -> String {
        match names.iter().position(|n| n.as_str() == a) {
            Some(i) => char::from(b'a' + i as u8).to_string(),
            None => "...".into(),
        }
    };
    let write = |p: &Parsed| -> String {
        let mut out = String::new();
        for g in &p.composition {
            match g {
                Group::Ellipsis => out.push_str("..."),
                Group::Axes(axes) => axes.iter().for_each(|a| out.push_str(&letter(a))),
            }
        }
        out
    };
    Ok(format!(
        "{},{}->{}",
        write(&s.left),
        write(&s.weight),
        write(&s.right)
    ))
}

/// The shape a rearrange recipe's steps make of `shape` (no reduction, no new axes).
fn rearranged(steps: &Steps, shape: &[i64]) -> Vec<i64> {
    if let Some(f) = &steps.final_shape {
        return f.clone();
    }
    let shape = steps.init_shape.clone().unwrap_or_else(|| shape.to_vec());
    match &steps.permutation {
        Some(p) => p.iter().map(|&i| shape[i]).collect(),
        None => shape,
    }
}

fn param(shape: Vec<i64>) -> Value {
    Value::Param(Rc::new(Param {
        shape: Some(shape),
        dtype: DType::Float32,
        is_buffer: false,
        nn_buffer: false,
    }))
}

/// What `forward` does with an input of known shape, when it does not raise.
struct Run {
    pre: Option<Steps>,
    post: Option<Steps>,
}

/// A child `pre_rearrange` / `post_rearrange`: `Some(None)` when unset.
fn child(obj: &Object, name: &str) -> Option<Option<Rc<Object>>> {
    match obj.get(name) {
        Some(Value::None) => Some(None),
        Some(Value::Object(o)) => Some(Some(o)),
        _ => None,
    }
}

fn tensor(shape: &[i64]) -> Meta {
    Meta::tensor(Some(shape_of(shape)), DType::Float32)
}

/// The shape of a rule's answer, when every size is a known int.
fn known(meta: &Meta) -> Option<Vec<i64>> {
    meta.as_tensor()?
        .shape
        .as_ref()?
        .iter()
        .map(|d| d.known())
        .collect()
}

impl Interp {
    /// `EinMix(pattern, weight_shape, bias_shape=None, **axes_lengths)`: the layer with its
    /// parameters and rearrange children, or the error `__init__` raises; None for arguments
    /// not followed here (an axis length that is not an int).
    pub(super) fn construct_einmix(
        &mut self,
        frame: &Frame,
        path: &str,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        let mut kwargs = kwargs.clone();
        let mut positional = args.iter().cloned();
        let mut take = |name: &str, kwargs: &mut Kwargs| match positional.next() {
            Some(v) => Some(v),
            None => {
                let i = kwargs.iter().position(|(k, _)| k == name)?;
                Some(kwargs.remove(i).1)
            }
        };
        let Some(Value::Str(pattern)) = take("pattern", &mut kwargs) else {
            return None;
        };
        let Some(Value::Str(weight_shape)) = take("weight_shape", &mut kwargs) else {
            return None;
        };
        let bias_shape = take("bias_shape", &mut kwargs).unwrap_or(Value::None);
        if positional.next().is_some() {
            return None;
        }
        let mut axes = vec![];
        for (k, v) in &kwargs {
            axes.push((k.clone(), self.specialised_int(v)?));
        }
        let obj = match self.build_einmix(
            frame,
            path,
            &pattern,
            &weight_shape,
            &bias_shape,
            &axes,
            span,
        )? {
            Ok(obj) => obj,
            Err(e) => return Some(Err(e)),
        };
        {
            let mut attrs = obj.attrs.borrow_mut();
            attrs.insert("pattern".into(), Value::Str(pattern));
            attrs.insert("weight_shape".into(), Value::Str(weight_shape));
            attrs.insert("bias_shape".into(), bias_shape);
            let items = kwargs
                .iter()
                .map(|(k, v)| (Value::str(k), v.clone()))
                .collect();
            attrs.insert(
                "axes_lengths".into(),
                Value::Dict(Rc::new(std::cell::RefCell::new(items))),
            );
        }
        self.note_parameters_made(frame, &obj, span);
        Some(Ok(Value::Object(obj)))
    }

    /// `initialize_einmix`: the module with its children and parameters, or its error.
    #[allow(clippy::too_many_arguments)]
    fn build_einmix(
        &mut self,
        frame: &Frame,
        path: &str,
        pattern: &str,
        weight_shape: &str,
        bias_shape: &Value,
        axes: &[(String, i64)],
        span: Span,
    ) -> Option<EResult<Rc<Object>>> {
        let names: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
        let s = match sides(pattern, weight_shape, &names) {
            Ok(s) => s,
            Err(m) => return Some(Err(self.error(frame, span, codes::RAISED, m))),
        };
        let rearrange = "einops.layers.torch.Rearrange";
        let layer = |this: &mut Self, p: &str, lengths: &[String]| {
            let kw: Kwargs = axes
                .iter()
                .filter(|(k, _)| lengths.contains(k))
                .map(|(k, v)| (k.clone(), Value::Int(*v)))
                .collect();
            this.construct_einops_layer(frame, rearrange, &[Value::str(p)], &kw, span)
        };
        let pre = match &s.pre {
            Some((p, lengths)) => match layer(self, p, lengths)? {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            },
            None => Value::None,
        };
        let post = match &s.post {
            Some(p) => match layer(self, p, &[])? {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            },
            None => Value::None,
        };
        let bias = match bias_shape {
            Value::None => None,
            Value::Str(b) => Some(Ok(b.as_ref())),
            _ => Some(Err(())),
        };
        let p = match params(&s, bias, axes) {
            Ok(p) => p,
            Err(m) => return Some(Err(self.error(frame, span, codes::RAISED, m))),
        };
        let obj = self.new_object(Value::External(Rc::from(path)), ObjKind::Module);
        {
            let mut attrs = obj.attrs.borrow_mut();
            attrs.insert("pre_rearrange".into(), pre);
            attrs.insert("post_rearrange".into(), post);
            attrs.insert("weight".into(), param(p.weight));
            attrs.insert("bias".into(), p.bias.map_or(Value::None, param));
            attrs.insert("einsum_pattern".into(), Value::str(&p.einsum));
        }
        Some(Ok(obj))
    }

    /// The layer's `forward(input)` on a traced tensor of known shape, as Dynamo inlines it;
    /// an input it cannot take is its call recorded with the error. None when this cannot
    /// be followed (the caller records an opaque call).
    pub(super) fn call_einmix(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> Option<EResult<Value>> {
        let input = match (args, kwargs.as_slice()) {
            ([x], []) => x.clone(),
            ([], [(k, x)]) if k == "input" => x.clone(),
            _ => return None,
        };
        if !crate::eval::types::proxy::records_call(self, std::slice::from_ref(&input), &vec![]) {
            return None;
        }
        let shape = self.known_shape(&input)?;
        let run = match self.einmix_run(obj, &shape)? {
            Ok(run) => run,
            Err(message) => {
                // the layer raises on this input whenever it runs: the user's bug (FX301) on
                // its call, and the trace goes on
                let module = Value::Object(obj.clone());
                let call = self.trace_module(frame, &module, vec![input], vec![], span);
                return Some(call.map(|call| {
                    self.mark_raising(&call, format!("raises {message}"));
                    call
                }));
            }
        };
        Some(self.einmix_forward(frame, obj, input, run, span))
    }

    /// What the layer does with an input of this shape, or the error it raises: the
    /// pre-rearrange's recipe, torch's einsum check, the bias added in place, the
    /// post-rearrange's recipe.
    fn einmix_run(&self, obj: &Rc<Object>, shape: &[i64]) -> Option<Result<Run, String>> {
        let Some(Value::Str(pattern)) = obj.get("einsum_pattern") else {
            return None;
        };
        let Some(Value::Param(weight)) = obj.get("weight") else {
            return None;
        };
        let bias = match obj.get("bias") {
            Some(Value::Param(b)) => Some(b.shape.clone()?),
            Some(Value::None) => None,
            _ => return None,
        };
        let (pre_layer, post_layer) = (child(obj, "pre_rearrange")?, child(obj, "post_rearrange")?);
        let mut current = shape.to_vec();
        let mut pre = None;
        if let Some(layer) = pre_layer {
            let steps = match self.layer_steps(&layer, &current)?.1 {
                Ok(steps) => steps,
                Err(m) => return Some(Err(m)),
            };
            current = rearranged(&steps, &current);
            pre = Some(steps);
        }
        let einsum = [
            Meta::Str(pattern.to_string()),
            tensor(&current),
            tensor(weight.shape.as_ref()?),
        ];
        let infer = |name: &str, args: &[Meta]| rules::infer(name, &Inputs { args, kwargs: &[] });
        let out = match infer("einsum", &einsum) {
            Ok(m) => known(&m)?,
            Err(e) => return Some(Err(format!("RuntimeError: {}", e.message))),
        };
        if let Some(b) = bias {
            match infer("iadd", &[tensor(&out), tensor(&b)]) {
                Ok(m) if known(&m).as_ref() == Some(&out) => {}
                Ok(m) => {
                    let m = known(&m)?;
                    return Some(Err(format!(
                        "RuntimeError: output with shape {out:?} doesn't match the broadcast shape {m:?}"
                    )));
                }
                Err(e) => return Some(Err(format!("RuntimeError: {}", e.message))),
            }
        }
        let mut post = None;
        if let Some(layer) = post_layer {
            match self.layer_steps(&layer, &out)?.1 {
                Ok(steps) => post = Some(steps),
                Err(m) => return Some(Err(m)),
            }
        }
        Some(Ok(Run { pre, post }))
    }

    /// The nodes Dynamo records for the layer's forward.
    fn einmix_forward(
        &mut self,
        frame: &Frame,
        obj: &Rc<Object>,
        input: Value,
        run: Run,
        span: Span,
    ) -> EResult<Value> {
        let module = Value::Object(obj.clone());
        let mut t = input;
        if let Some(steps) = run.pre {
            t = self.apply_einops_steps(frame, t, steps, None, true, span)?;
        }
        let pattern = obj.get("einsum_pattern").unwrap_or(Value::None);
        let weight = self.get_attr(frame, &module, "weight", span)?;
        t = self.trace_function(
            frame,
            "torch.einsum",
            vec![pattern, t, weight],
            vec![],
            span,
        )?;
        if let Some(Value::Param(_)) = obj.get("bias") {
            let bias = self.get_attr(frame, &module, "bias", span)?;
            t = self.trace_function(frame, "operator.iadd", vec![t, bias], vec![], span)?;
        }
        if let Some(steps) = run.post {
            t = self.apply_einops_steps(frame, t, steps, None, true, span)?;
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(pre pattern, post pattern, params)` as `_EinmixDebugger` (einops 0.8.2) saves them.
    fn plan(
        pattern: &str,
        weight: &str,
        bias: Option<&str>,
        axes: &[(&str, i64)],
    ) -> Result<(Option<String>, Option<String>, Params), String> {
        let axes: Vec<(String, i64)> = axes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let names: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
        let s = sides(pattern, weight, &names)?;
        let p = params(&s, bias.map(Ok), &axes)?;
        Ok((s.pre.map(|(p, _)| p), s.post, p))
    }

    #[test]
    fn composed_axes_get_rearrange_patterns_and_the_bias_the_flat_output() {
        let axes = [("h", 4), ("c", 8), ("c2", 12)];
        let (pre, post, p) = plan("b (h w) c -> b (h w) c2", "c c2", Some("c2"), &axes).unwrap();
        assert_eq!(pre.as_deref(), Some("b (h w) c -> b h w c"));
        assert_eq!(post.as_deref(), Some("b h w c2 -> b (h w) c2"));
        assert_eq!(
            p,
            Params {
                weight: vec![8, 12],
                bias: Some(vec![1, 1, 1, 12]),
                einsum: "adeb,bc->adec".into()
            }
        );
        let axes = [("hw", 16), ("hw_out", 16)];
        let (pre, post, p) =
            plan("b hw c -> b hw_out c", "hw hw_out", Some("hw_out"), &axes).unwrap();
        assert_eq!((pre, post), (None, None));
        assert_eq!(p.bias, Some(vec![1, 16, 1]));
        assert_eq!(p.einsum, "acb,cd->adb");
        let (_, _, p) = plan(
            "b ... c -> b ... c2",
            "c c2",
            Some("c2"),
            &[("c", 8), ("c2", 5)],
        )
        .unwrap();
        assert_eq!(p.bias, Some(vec![1, 5]));
        assert_eq!(p.einsum, "a...b,bc->a...c");
    }

    #[test]
    fn errors_are_einops_messages() {
        let err = |pattern: &str, weight: &str, bias: Option<&str>, axes: &[(&str, i64)]| {
            plan(pattern, weight, bias, axes).err().unwrap()
        };
        assert_eq!(
            err("b t c -> b t d", "c d", None, &[("c", 3)]),
            "EinopsError: Dimension d of weight should be specified"
        );
        assert_eq!(
            err(
                "b t c -> b t d",
                "c d",
                None,
                &[("c", 3), ("d", 4), ("e", 5)]
            ),
            "EinopsError: Axes {'e'} are not used in pattern"
        );
        assert_eq!(
            err("b t c -> b t x", "c d", None, &[("c", 3), ("d", 4)]),
            "EinopsError: Unrecognized identifiers on the right side of EinMix {'x'}"
        );
        assert_eq!(
            err(
                "b t c -> b t d",
                "c d e",
                None,
                &[("c", 3), ("d", 4), ("e", 5)]
            ),
            "EinopsError: Weight axes {'e'} are redundant"
        );
        assert_eq!(
            err("b t c -> b t d", "c d", Some("e"), &[("c", 3), ("d", 4)]),
            "EinopsError: Bias axes {'e'} not present in output"
        );
        assert_eq!(
            err("b t c -> b t d", "(c d)", None, &[("c", 3), ("d", 4)]),
            "EinopsError: Parenthesis is not allowed in weight shape: (c d)"
        );
    }
}
