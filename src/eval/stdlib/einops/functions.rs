//! einops' `einsum`, `pack` and `unpack` on traced tensors, as Dynamo traces einops 0.8's
//! Python (`einops.einsum`, `einops.packing`): the pattern is worked out in Python, with every
//! length specialised to an int, and the torch backend's calls land in the graph:
//! - `einsum(*tensors, pattern)`: each axis name becomes one letter (`a`, `b`, … in order of
//!   first use, `_compactify_pattern_for_einsum`), then `torch.einsum(compact, *tensors)`;
//! - `pack(tensors, "b * d")`: each tensor `reshape`d to `(*before, -1, *after)`, then one
//!   `torch.cat` on the `*` axis; it returns the packed tensor and the `*` part of each shape;
//! - `unpack(tensor, shapes, "b * d")`: a slice of the `*` axis per shape (`getitem`), each
//!   `reshape`d to `(*before, *shape, *after)`.
//!
//! A pattern einops rejects on this input raises `EinopsError` whenever it runs: the call is
//! recorded with the error beside it (FX301). A length that is not a known int leaves the
//! call to the caller: one opaque node.

use super::super::super::value::Value;
use super::super::super::{EResult, Frame, Interp};
use crate::syntax::Span;

/// `(axes before *, axes after *)` of a pack/unpack pattern, or einops' complaint.
fn analyze_pattern(pattern: &str, opname: &str) -> Result<(usize, usize), String> {
    let axes: Vec<&str> = pattern.split_whitespace().collect();
    let unique: std::collections::BTreeSet<&&str> = axes.iter().collect();
    if unique.len() != axes.len() {
        return Err(format!(
            "Duplicates in axes names in {opname}(..., \"{pattern}\")"
        ));
    }
    let Some(star) = axes.iter().position(|a| *a == "*") else {
        return Err(format!("No *-axis in {opname}(..., \"{pattern}\")"));
    };
    if let Some(bad) = axes.iter().find(|a| **a != "*" && !super::is_identifier(a)) {
        return Err(format!(
            "Invalid axis name {bad} in {opname}(..., \"{pattern}\")"
        ));
    }
    Ok((star, axes.len() - star - 1))
}

/// einops' einsum pattern in torch's letters, or einops' complaint. None for a pattern this
/// does not follow (parenthesised axes), which the caller leaves opaque.
fn compact_einsum(pattern: &str) -> Option<Result<String, String>> {
    let Some((lefts, right)) = pattern.split_once("->") else {
        return Some(Err("ValueError: Einsum pattern must contain '->'.".into()));
    };
    if pattern.contains(['(', ')']) {
        return None;
    }
    let letters: Vec<char> = ('a'..='z').chain('A'..='Z').collect();
    let mut mapping: Vec<(String, char)> = vec![];
    let mut term = |names: &str, new: bool| -> Result<String, String> {
        let mut out = String::new();
        for name in names.split_whitespace() {
            if name == "..." {
                out.push_str("...");
                continue;
            }
            if !super::is_identifier(name) && name.parse::<u64>().is_err() {
                return Err(format!("EinopsError: Invalid axis name {name} in einsum"));
            }
            let letter = match mapping.iter().find(|(n, _)| n == name) {
                Some((_, c)) => *c,
                None if new => {
                    let c = *letters
                        .get(mapping.len())
                        .ok_or("RuntimeError: Too many axes in einsum.")?;
                    mapping.push((name.to_string(), c));
                    c
                }
                None => {
                    return Err(format!(
                        "EinopsError: Unknown axis {name} on right side of einsum {pattern}."
                    ))
                }
            };
            out.push(letter);
        }
        Ok(out)
    };
    let mut compact = vec![];
    for left in lefts.split(',') {
        match term(left, true) {
            Ok(t) => compact.push(t),
            Err(e) => return Some(Err(e)),
        }
    }
    Some(term(right, false).map(|r| format!("{}->{r}", compact.join(","))))
}

fn ints(v: &[i64]) -> Value {
    Value::tuple(v.iter().map(|&d| Value::Int(d)).collect())
}

impl Interp {
    /// `einops.einsum(*tensors, pattern)`.
    pub(super) fn einops_einsum(
        &mut self,
        frame: &Frame,
        args: &[Value],
        span: Span,
    ) -> Option<EResult<Value>> {
        let (Value::Str(pattern), tensors) = args.split_last()? else {
            return None;
        };
        if tensors.is_empty() || !tensors.iter().all(|t| matches!(t, Value::Proxy(_))) {
            return None;
        }
        match compact_einsum(pattern)? {
            Ok(compact) => {
                let mut call = vec![Value::str(&compact)];
                call.extend(tensors.iter().cloned());
                Some(self.trace_function(frame, "torch.einsum", call, vec![], span))
            }
            Err(message) => Some(self.raising_einops_call(frame, "einsum", args, message, span)),
        }
    }

    /// `einops.pack(tensors, pattern)`: `(packed, packed_shapes)`.
    pub(super) fn einops_pack(
        &mut self,
        frame: &Frame,
        args: &[Value],
        span: Span,
    ) -> Option<EResult<Value>> {
        let [tensors, Value::Str(pattern)] = args else {
            return None;
        };
        let items: Vec<Value> = match tensors {
            Value::List(l) => l.borrow().clone(),
            Value::Tuple(t) => t.to_vec(),
            _ => return None,
        };
        if items.is_empty() || !items.iter().all(|t| matches!(t, Value::Proxy(_))) {
            return None;
        }
        let shapes: Vec<Vec<i64>> = items
            .iter()
            .map(|t| self.known_shape(t))
            .collect::<Option<_>>()?;
        let checked = analyze_pattern(pattern, "pack").and_then(|(before, after)| {
            match shapes.iter().position(|s| s.len() < before + after) {
                Some(i) => Err(format!(
                    "packed tensor #{i} (enumeration starts with 0) has shape {:?}, while pattern {pattern} assumes at least {} axes",
                    shapes[i],
                    before + after
                )),
                None => Ok((before, after)),
            }
        });
        let (before, after) = match checked {
            Ok(b) => b,
            Err(m) => {
                let message = format!("EinopsError: {m}");
                return Some(self.raising_einops_call(frame, "pack", args, message, span));
            }
        };
        let run = |me: &mut Interp| -> EResult<Value> {
            let mut reshaped = vec![];
            let mut packed_shapes = vec![];
            for (t, shape) in items.iter().zip(&shapes) {
                let end = shape.len() - after;
                packed_shapes.push(ints(&shape[before..end]));
                let mut target = shape[..before].to_vec();
                target.push(-1);
                target.extend(&shape[end..]);
                let r = me.trace_method(
                    frame,
                    "reshape",
                    t.clone(),
                    vec![ints(&target)],
                    vec![],
                    span,
                )?;
                reshaped.push(r);
            }
            let packed = me.trace_function(
                frame,
                "torch.cat",
                vec![Value::list(reshaped)],
                vec![("dim".into(), Value::Int(before as i64))],
                span,
            )?;
            Ok(Value::tuple(vec![packed, Value::list(packed_shapes)]))
        };
        Some(run(self))
    }

    /// `einops.unpack(tensor, packed_shapes, pattern)`: a list of tensors.
    pub(super) fn einops_unpack(
        &mut self,
        frame: &Frame,
        args: &[Value],
        span: Span,
    ) -> Option<EResult<Value>> {
        let [tensor @ Value::Proxy(_), packed, Value::Str(pattern)] = args else {
            return None;
        };
        let input = self.known_shape(tensor)?;
        let packed: Vec<Vec<i64>> = match packed {
            Value::List(l) => l.borrow().clone(),
            Value::Tuple(t) => t.to_vec(),
            _ => return None,
        }
        .iter()
        .map(|s| match s {
            Value::Tuple(d) => d.iter().map(|v| self.specialised_int(v)).collect(),
            Value::List(d) => d.borrow().iter().map(|v| self.specialised_int(v)).collect(),
            _ => None,
        })
        .collect::<Option<_>>()?;
        let plan = analyze_pattern(pattern, "unpack").and_then(|(before, after)| {
            if input.len() != before + 1 + after {
                return Err(format!(
                    "unpack(..., {pattern}) received input of wrong dim with shape {input:?}"
                ));
            }
            split_positions(&packed, input[before], pattern).map(|p| (before, p))
        });
        let (axis, positions) = match plan {
            Ok(p) => p,
            Err(m) => {
                // one node holds the error; the caller still gets one value per shape
                let message = format!("EinopsError: {m}");
                let call = self.raising_einops_call(frame, "unpack", args, message, span);
                return Some(call.map(|c| Value::list(vec![c; packed.len()])));
            }
        };
        let run = |me: &mut Interp| -> EResult<Value> {
            let mut out = vec![];
            for (i, element) in packed.iter().enumerate() {
                let mut key: Vec<Value> = (0..axis).map(|_| full_slice()).collect();
                key.push(Value::Slice(std::rc::Rc::new([
                    Value::Int(positions[i]),
                    Value::Int(positions[i + 1]),
                    Value::None,
                ])));
                let piece = me.trace_function(
                    frame,
                    "operator.getitem",
                    vec![tensor.clone(), Value::tuple(key)],
                    vec![],
                    span,
                )?;
                let mut shape = input[..axis].to_vec();
                shape.extend(element);
                shape.extend(&input[axis + 1..]);
                out.push(me.trace_method(
                    frame,
                    "reshape",
                    piece,
                    vec![ints(&shape)],
                    vec![],
                    span,
                )?);
            }
            Ok(Value::list(out))
        };
        Some(run(self))
    }

    /// An einops call that raises on these inputs: its node, with the error (FX301).
    fn raising_einops_call(
        &mut self,
        frame: &Frame,
        name: &str,
        args: &[Value],
        message: String,
        span: Span,
    ) -> EResult<Value> {
        let call = self.trace_function(
            frame,
            &format!("einops.{name}"),
            args.to_vec(),
            vec![],
            span,
        )?;
        self.mark_raising(&call, format!("raises {message}"));
        Ok(call)
    }
}

fn full_slice() -> Value {
    Value::Slice(std::rc::Rc::new([Value::None, Value::None, Value::None]))
}

/// Where unpack cuts the packed axis of `total` elements: one more position than shapes.
fn split_positions(packed: &[Vec<i64>], total: i64, pattern: &str) -> Result<Vec<i64>, String> {
    let lengths: Vec<i64> = packed
        .iter()
        .map(|s| {
            if s.contains(&-1) {
                -1
            } else {
                s.iter().product()
            }
        })
        .collect();
    let unknown: Vec<usize> = (0..lengths.len()).filter(|&i| lengths[i] == -1).collect();
    if unknown.len() > 1 {
        return Err(format!(
            "unpack(..., {pattern}) received more than one -1 in {packed:?} and can't infer dimensions"
        ));
    }
    let mut pos = vec![0; lengths.len() + 1];
    pos[lengths.len()] = total;
    match unknown.first() {
        None => {
            for i in 0..lengths.len().saturating_sub(1) {
                pos[i + 1] = pos[i] + lengths[i];
            }
        }
        Some(&u) => {
            for i in 0..u {
                pos[i + 1] = pos[i] + lengths[i];
            }
            for j in (u + 1..lengths.len()).rev() {
                pos[j] = pos[j + 1] - lengths[j];
            }
        }
    }
    // the reshape of each piece fails when a piece is not the size its shape asks for
    let fits = (0..lengths.len()).all(|i| {
        let size = pos[i + 1] - pos[i];
        size >= 0 && (lengths[i] == -1 || size == lengths[i])
    });
    if !fits {
        return Err(format!(
            "Error during unpack(..., \"{pattern}\"): could not split axis of size {total} into requested {packed:?}"
        ));
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn einsum_patterns_become_letters_in_order_of_first_use() {
        assert_eq!(
            compact_einsum("batch head q d, batch head k d -> batch head q k"),
            Some(Ok("abcd,abed->abce".to_string()))
        );
        assert_eq!(
            compact_einsum("... i, j i -> ... j"),
            Some(Ok("...a,ba->...b".to_string()))
        );
        assert!(matches!(compact_einsum("i j -> k"), Some(Err(e)) if e.contains("Unknown axis k")));
        assert!(matches!(compact_einsum("i j"), Some(Err(e)) if e.contains("must contain '->'")));
        assert_eq!(compact_einsum("(i j) -> i"), None);
    }

    #[test]
    fn pack_patterns_need_one_star() {
        assert_eq!(analyze_pattern("b * d", "pack"), Ok((1, 1)));
        assert_eq!(analyze_pattern("*", "pack"), Ok((0, 0)));
        assert!(analyze_pattern("b d", "pack")
            .unwrap_err()
            .contains("No *-axis"));
        assert!(analyze_pattern("b * b", "pack")
            .unwrap_err()
            .contains("Duplicates"));
    }

    #[test]
    fn unpack_splits_at_the_shapes_lengths() {
        assert_eq!(
            split_positions(&[vec![], vec![7], vec![7, 9]], 71, "p"),
            Ok(vec![0, 1, 8, 71])
        );
        assert_eq!(
            split_positions(&[vec![1], vec![-1]], 10, "p"),
            Ok(vec![0, 1, 10])
        );
        assert!(split_positions(&[vec![2], vec![3]], 10, "p").is_err());
        assert!(split_positions(&[vec![-1], vec![-1]], 10, "p").is_err());
    }
}
