//! `--output-format concise`: ruff's concise text, `path:line:col: CODE [*] message` with `[*]`
//! on findings `staticfx fix` repairs by default, and ruff's closing summary on stdout.

use super::super::check::Message;
use crate::ide::Applicability;

pub fn render(ms: &[Message]) -> String {
    let mut out = String::new();
    let safe = |m: &Message| {
        m.fix
            .as_ref()
            .is_some_and(|f| f.applicability == Applicability::Safe)
    };
    for m in ms {
        let mark = if safe(m) { "[*] " } else { "" };
        out.push_str(&format!(
            "{}:{}:{}: {} {mark}{}\n",
            m.filename, m.row, m.column, m.code, m.message
        ));
    }
    let limits = super::super::check::count_limits(ms);
    let notes = super::super::check::count_recompile_notes(ms);
    let findings = ms.len() - limits - notes;
    let limits_line = || {
        format!(
            "{} (analysis limits; `--strict` fails on them).\n",
            super::super::check::limits_line(limits)
        )
    };
    let notes_line = || {
        format!(
            "{}; `--strict` fails on them.\n",
            super::super::check::recompile_notes_line(notes)
        )
    };
    match (findings, limits + notes) {
        (0, 0) => {
            out.push_str("All checks passed!\n");
            return out;
        }
        // Never "All checks passed!" when part of the file was not checked.
        (0, _) => {
            out.push_str("No findings.\n");
            if limits > 0 {
                out.push_str(&limits_line());
            }
            if notes > 0 {
                out.push_str(&notes_line());
            }
            return out;
        }
        (n, _) => out.push_str(&format!(
            "Found {n} error{}.\n",
            if n == 1 { "" } else { "s" }
        )),
    }
    if limits > 0 {
        out.push_str(&limits_line());
    }
    if notes > 0 {
        out.push_str(&notes_line());
    }
    let fixable = ms.iter().filter(|m| safe(m)).count();
    let unsafe_only = ms
        .iter()
        .filter(|m| {
            m.fix
                .as_ref()
                .is_some_and(|f| f.applicability == Applicability::Unsafe)
        })
        .count();
    let hidden = |n: usize| {
        format!(
            "{n} hidden fix{} can be enabled with `staticfx fix --unsafe-fixes`",
            if n == 1 { "" } else { "es" }
        )
    };
    match (fixable, unsafe_only) {
        (0, 0) => {}
        (0, u) => out.push_str(&format!("No fixes available ({}).\n", hidden(u))),
        (f, 0) => out.push_str(&format!("[*] {f} fixable with `staticfx fix`.\n")),
        (f, u) => out.push_str(&format!(
            "[*] {f} fixable with `staticfx fix` ({}).\n",
            hidden(u)
        )),
    }
    out
}
