//! `textDocument/codeAction`: the fixes of `crate::fixes` as quick fixes (only for findings
//! in the requested range, each with its diagnostic; the main fix preferred), the noqa
//! suppression, and `source.fixAll.staticfx` (every safe fix at once). Byte-range edits
//! become LSP ranges through the negotiated position encoding.

use std::collections::HashMap;

use ropey::Rope;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use super::{Server, FIX_ALL};
use crate::fixes::{self, FixKind};
use crate::ide::Output;
use crate::lsp::convert::range_of;
use crate::lsp::document::Encoding;

fn text_edits(rope: &Rope, edits: &[fixes::Edit], enc: Encoding) -> Vec<TextEdit> {
    edits
        .iter()
        .map(|e| TextEdit {
            range: range_of(rope, e.span, enc),
            new_text: e.new_text.clone(),
        })
        .collect()
}

fn workspace_edit(uri: &Uri, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..Default::default()
    }
}

/// Whether a client's `only` filter admits `kind` (a listed kind admits its sub-kinds).
fn wanted(only: Option<&[CodeActionKind]>, kind: &str) -> bool {
    only.is_none_or(|o| {
        o.iter().any(|w| {
            let w = w.as_str();
            kind == w || kind.starts_with(&format!("{w}."))
        })
    })
}

fn before_or_at(a: Position, b: Position) -> bool {
    (a.line, a.character) <= (b.line, b.character)
}

fn actions(
    uri: &Uri,
    out: &Output,
    range: Range,
    only: Option<&[CodeActionKind]>,
    enc: Encoding,
) -> Vec<CodeActionOrCommand> {
    let rope = Rope::from_str(&out.text);
    let mut actions = Vec::new();
    if wanted(only, CodeActionKind::QUICKFIX.as_str()) {
        let diags = crate::lsp::convert::diagnostics(out, enc);
        for (f, diag) in out.diagnostics.iter().zip(diags) {
            // Findings that touch the requested range (a cursor is an empty range).
            let r = diag.range;
            if !(before_or_at(r.start, range.end) && before_or_at(range.start, r.end)) {
                continue;
            }
            let main = f.fixes.main().map(|m| m as *const fixes::Fix);
            for fix in &f.fixes.fixes {
                let preferred = main == Some(fix as *const fixes::Fix);
                let mut title = fix.title.clone();
                if fix.applicability == fixes::Applicability::Unsafe && fix.kind != FixKind::Noqa {
                    title.push_str(" [unsafe]");
                }
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title,
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diag.clone()]),
                    edit: Some(workspace_edit(uri, text_edits(&rope, &fix.edits, enc))),
                    is_preferred: preferred.then_some(true),
                    ..Default::default()
                }));
            }
        }
    }
    if wanted(only, FIX_ALL) {
        let (edits, n, _) = fixes::pick(out.diagnostics.iter().map(|f| &f.fixes), false);
        if !edits.is_empty() {
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Fix all safe staticfx findings ({n})"),
                kind: Some(CodeActionKind::new(FIX_ALL)),
                edit: Some(workspace_edit(uri, text_edits(&rope, &edits, enc))),
                ..Default::default()
            }));
        }
    }
    actions
}

impl Server {
    pub(super) async fn on_code_action(
        &self,
        params: CodeActionParams,
    ) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let (out, _) = self.current_analysis(&uri).await?;
        let enc = *self.state.encoding.read().unwrap();
        let actions = actions(
            &uri,
            &out,
            params.range,
            params.context.only.as_deref(),
            enc,
        );
        Ok(Some(actions))
    }
}
