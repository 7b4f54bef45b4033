//! `textDocument/codeAction`: the `ide` code actions of the requested range (quick fixes, each
//! with its diagnostic, the main fix preferred, and `source.fixAll.staticfx`) in protocol
//! terms; byte-range edits become ranges through the negotiated position encoding.

use std::collections::HashMap;

use ropey::Rope;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use super::{Server, FIX_ALL};
use crate::ide::code_actions::{self, ActionKind};
use crate::ide::{Edit, Output};
use crate::lsp::convert::{offset_of, range_of};
use crate::lsp::document::Encoding;
use crate::syntax::Span;

fn text_edits(rope: &Rope, edits: &[Edit], enc: Encoding) -> Vec<TextEdit> {
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

fn actions(
    uri: &Uri,
    out: &Output,
    range: Range,
    only: Option<&[CodeActionKind]>,
    enc: Encoding,
) -> Vec<CodeActionOrCommand> {
    let rope = Rope::from_str(&out.text);
    let span = Span::new(
        offset_of(&rope, range.start, enc),
        offset_of(&rope, range.end, enc),
    );
    let quick = wanted(only, CodeActionKind::QUICKFIX.as_str());
    let diags = crate::lsp::convert::diagnostics(out, enc);
    code_actions::actions(out, span, quick, wanted(only, FIX_ALL))
        .into_iter()
        .map(|a| {
            let edit = Some(workspace_edit(uri, text_edits(&rope, &a.edits, enc)));
            CodeActionOrCommand::CodeAction(match a.kind {
                ActionKind::QuickFix {
                    diagnostic,
                    preferred,
                } => CodeAction {
                    title: a.title,
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diags[diagnostic].clone()]),
                    edit,
                    is_preferred: preferred.then_some(true),
                    ..Default::default()
                },
                ActionKind::FixAll => CodeAction {
                    title: a.title,
                    kind: Some(CodeActionKind::new(FIX_ALL)),
                    edit,
                    ..Default::default()
                },
            })
        })
        .collect()
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
