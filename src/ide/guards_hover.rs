//! Hover on what Dynamo guards: on `def forward`, every guard the traced forward gets and its
//! recompile risks; on a forward parameter, the guards that parameter gets.
//!
//! Dynamo compiles forward for the inputs of its first call and checks guards before reusing
//! the compiled code: each tensor input's dtype, sizes and strides (the first compile treats
//! every size as static; a call with another size recompiles once and marks that size dynamic,
//! `automatic_dynamic_shapes`, except that sizes 0 and 1 are always specialised), each Python
//! value forward uses (`scale == 1.0`, `mask is None`, FX202), the module attributes and
//! globals it reads (`self.num_heads == 8`; FX201 when forward changes one), and the global
//! state (grad mode, autocast, default dtype). The figures come from the trace itself
//! (`GraphResult::argument_guards`, `state_guards`, `guard_changes`), so they hold for the
//! inputs staticfx traced.

use std::fmt::Write;

use super::host::GraphView;
use crate::semantic::FileId;
use crate::syntax::{LineIndex, Span};

/// How many guards of one kind a hover lists before it counts the rest.
const LISTED: usize = 12;

/// Where a guard sits in the analysed document: its own span when it lies there, else the
/// outermost call of the document that led to it.
fn home_span(home: FileId, file: FileId, span: Span, chain: &[(FileId, Span)]) -> Option<Span> {
    if file == home {
        return Some(span);
    }
    chain.iter().find(|(f, _)| *f == home).map(|&(_, s)| s)
}

fn at_line(lines: &LineIndex, span: Option<Span>) -> String {
    match span {
        Some(s) => format!(" (line {})", lines.line_of(s.start) + 1),
        None => String::new(),
    }
}

/// The guards one forward parameter gets, as markdown; None when `name` is not a parameter
/// the trace saw.
pub(super) fn parameter_guards(g: &GraphView, name: &str, src: &str) -> Option<String> {
    let lines = LineIndex::new(src);
    let traced = &g.traced;
    if let Some(a) = traced.argument_guards.iter().find(|a| a.argument == name) {
        let at = home_span(g.file(), a.file, a.span, &a.call_chain);
        return Some(format!(
            "**guard**: `{}`{}: a call with another value recompiles, once per distinct value \
             (FX202)",
            a.guard,
            at_line(&lines, at)
        ));
    }
    let placeholder = g
        .nodes()
        .iter()
        .find(|n| n.op == "placeholder" && n.name == name)?;
    Some(match (&placeholder.shape, &placeholder.dtype) {
        (Some(shape), Some(dtype)) => tensor_guard(shape, dtype),
        _ => "**guard**: none seen: forward does not use this value in a way Dynamo \
              specialises on, as far as staticfx traced it"
            .to_string(),
    })
}

fn tensor_guard(shape: &str, dtype: &str) -> String {
    format!(
        "**guard**: a tensor match on dtype `{dtype}`, sizes `{shape}` as traced, strides, \
         device and `requires_grad`. The first compile makes every size static; a call with \
         another size recompiles once and makes that size dynamic (automatic dynamic shapes), \
         and sizes 0 and 1 are always specialised"
    )
}

/// Every guard the graph's forward gets, and its recompile risks.
pub(super) fn forward_guards(g: &GraphView, src: &str) -> String {
    let lines = LineIndex::new(src);
    let traced = &g.traced;
    let home = g.file();
    let mut s = format!(
        "**Dynamo's guards on `{}.forward`** (the first compile, with the inputs staticfx \
         traced)\n",
        g.class
    );
    let tensors: Vec<_> = g
        .nodes()
        .iter()
        .filter(|n| n.op == "placeholder" && n.dtype.is_some())
        .collect();
    if !tensors.is_empty() {
        s.push_str(
            "\ntensors: dtype, sizes, strides, device, `requires_grad`; a call with another \
             size recompiles once and makes that size dynamic (sizes 0 and 1 stay specialised)\n",
        );
        for n in &tensors {
            let shape = n.shape.as_deref().unwrap_or("?");
            let _ = writeln!(
                s,
                "- `{}`: `{shape}` `{}`",
                n.name,
                n.dtype.as_deref().unwrap_or("?")
            );
        }
    }
    if !traced.argument_guards.is_empty() {
        s.push_str("\nPython values: a call with another value recompiles (FX202)\n");
        list(&mut s, traced.argument_guards.iter(), |a| {
            let at = home_span(home, a.file, a.span, &a.call_chain);
            format!("`{}`{}", a.guard, at_line(&lines, at))
        });
    }
    if !traced.state_guards.is_empty() {
        s.push_str("\nmodule attributes and globals forward reads: constants of the graph\n");
        list(&mut s, traced.state_guards.iter(), |r| {
            let at = home_span(home, r.file, r.span, &r.call_chain);
            let changed = traced
                .guard_changes
                .iter()
                .find(|c| c.file == r.file && c.span == r.span);
            let note = match changed.map(|c| c.every_call) {
                Some(Some(true)) => " — forward changes it: every call recompiles (FX201)",
                Some(Some(false)) => " — forward changes it: the next call recompiles (FX201)",
                Some(None) => " — forward changes it: a recompile (FX201)",
                None => "",
            };
            format!("`{}`{}{note}", r.guard, at_line(&lines, at))
        });
    }
    s.push_str(
        "\nalways: the global state (grad mode, autocast, default dtype), and the `training` \
         flag of each module whose code reads it (dropout, batch norm): one compile per mode\n",
    );
    let every_call = traced
        .guard_changes
        .iter()
        .filter(|c| c.every_call == Some(true))
        .count();
    let _ = write!(
        s,
        "\n**recompile risks**: {} from state forward changes (FX201{}), {} from argument \
         values (FX202)",
        traced.guard_changes.len(),
        if every_call > 0 {
            format!(", {every_call} on every call")
        } else {
            String::new()
        },
        traced.argument_guards.len()
    );
    s
}

fn list<T>(s: &mut String, items: impl ExactSizeIterator<Item = T>, line: impl Fn(T) -> String) {
    let total = items.len();
    for item in items.take(LISTED) {
        let _ = writeln!(s, "- {}", line(item));
    }
    if total > LISTED {
        let _ = writeln!(s, "- … and {} more", total - LISTED);
    }
}
