//! Code actions on a range of a document: each fix of every finding that touches the range
//! (a cursor is an empty range), the preferred one marked, and "fix all" (every safe fix that
//! does not overlap another).

use super::host::Output;
use crate::fixes::{self, Applicability, Edit, FixKind};
use crate::syntax::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// One fix of the finding `Output::diagnostics[index]`.
    QuickFix { diagnostic: usize, preferred: bool },
    /// Every safe fix of the document at once.
    FixAll,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub title: String,
    pub kind: ActionKind,
    /// Byte edits of `Output::text`.
    pub edits: Vec<Edit>,
}

pub fn actions(out: &Output, range: Span, quick_fixes: bool, fix_all: bool) -> Vec<Action> {
    let mut actions = Vec::new();
    if quick_fixes {
        for (i, d) in out.diagnostics.iter().enumerate() {
            if !(d.span.start <= range.end && range.start <= d.span.end) {
                continue;
            }
            let main = d.fixes.main().map(|m| m as *const fixes::Fix);
            for fix in &d.fixes.fixes {
                let mut title = fix.title.clone();
                if fix.applicability == Applicability::Unsafe && fix.kind != FixKind::Noqa {
                    title.push_str(" [unsafe]");
                }
                actions.push(Action {
                    title,
                    kind: ActionKind::QuickFix {
                        diagnostic: i,
                        preferred: main == Some(fix as *const fixes::Fix),
                    },
                    edits: fix.edits.clone(),
                });
            }
        }
    }
    if fix_all {
        let (edits, n, _) = fixes::pick(out.diagnostics.iter().map(|d| &d.fixes), false);
        if !edits.is_empty() {
            actions.push(Action {
                title: format!("Fix all safe staticfx findings ({n})"),
                kind: ActionKind::FixAll,
                edits,
            });
        }
    }
    actions
}
