//! `textDocument/inlayHint` (with `inlayHint/resolve` for the tooltip) and
//! `textDocument/codeLens`: the `ide` shape hints of the requested range and the lenses of the
//! analysed classes, from the current analysis (the one whose diagnostics were published). While
//! a staged analysis runs its flagged retraces, the hints come from its first stage, whose
//! diagnostics were published and whose bindings are already final.

use ropey::Rope;
use serde_json::{json, Value as Json};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::{FirstStageHints, Server, REVEAL_LOCATION, RUN_GRAPH, SHOW_GRAPH};
use crate::ide::inlay;
use crate::ide::lens::{self, LensAction};
use crate::lsp::convert::{offset_of, range_of};
use crate::lsp::document::position_at;
use crate::syntax::Span;

/// How long a hint request waits for the first stage's hints once that stage's diagnostics
/// are out (they are computed right after the publication); past it, it waits for the
/// complete analysis.
const FIRST_STAGE_HINTS_WAIT: Duration = Duration::from_millis(100);

impl Server {
    pub(super) async fn on_inlay_hint(
        &self,
        params: InlayHintParams,
    ) -> Result<Option<Vec<InlayHint>>> {
        let uri = params.text_document.uri;
        let config = self.state.config.read().unwrap().inlay_hints();
        if !config.shapes {
            return Ok(Some(vec![]));
        }
        let enc = *self.state.encoding.read().unwrap();
        let (text, version, hints) = match self.first_stage_hints(&uri).await {
            Some(first) => {
                let rope = Rope::from_str(&first.text);
                let range = Span::new(
                    offset_of(&rope, params.range.start, enc),
                    offset_of(&rope, params.range.end, enc),
                );
                let within = (first.hints.iter())
                    .filter(|h| range.start <= h.statement.end && h.statement.end <= range.end)
                    .cloned()
                    .collect();
                (first.text.clone(), first.version, within)
            }
            None => {
                let (out, _) = self.current_analysis(&uri).await?;
                let rope = Rope::from_str(&out.text);
                let range = Span::new(
                    offset_of(&rope, params.range.start, enc),
                    offset_of(&rope, params.range.end, enc),
                );
                let hints = inlay::inlay_hints(&out, range, &config);
                (out.text.clone(), out.version, hints)
            }
        };
        let rope = Rope::from_str(&text);
        let hints = hints
            .into_iter()
            .map(|h| InlayHint {
                position: position_at(&rope, h.offset, enc),
                label: InlayHintLabel::String(h.label),
                kind: Some(InlayHintKind::TYPE),
                text_edits: None,
                tooltip: None,
                padding_left: Some(true),
                padding_right: None,
                data: Some(json!({
                    "uri": uri.as_str(),
                    "version": version,
                    "offset": h.offset,
                })),
            })
            .collect();
        Ok(Some(hints))
    }

    /// The hints of the current version's first stage, while its flagged retraces run and
    /// no complete analysis of it is kept (see `State::first_stage_hints`). They are kept just
    /// after the first stage's diagnostics are sent, so a request the diagnostics prompted may
    /// come first: it waits for them (up to [`FIRST_STAGE_HINTS_WAIT`]), not for the retraces.
    async fn first_stage_hints(&self, uri: &Uri) -> Option<Arc<FirstStageHints>> {
        let deadline = tokio::time::Instant::now() + FIRST_STAGE_HINTS_WAIT;
        loop {
            // Made before the check: a notification between the two is not lost.
            let kept = self.state.first_stage_hints_ready.notified();
            let version = super::current_version(&self.state, uri)?;
            let gen = self.state.config_gen.load(Ordering::SeqCst);
            let complete = (self.state.results.get(uri))
                .is_some_and(|o| o.version == version && o.config_gen == gen);
            if complete {
                return None;
            }
            if let Some(first) = self.state.first_stage_hints.get(uri) {
                if first.version == version && first.config_gen == gen {
                    return Some(first.clone());
                }
            }
            let first_stage_sent = (self.state.published.get(uri))
                .is_some_and(|p| p.0 == (version, gen, super::Stage::First));
            if !first_stage_sent {
                return None;
            }
            tokio::time::timeout_at(deadline, kept).await.ok()?;
        }
    }

    /// The tooltip of a hint of the current version; a hint of an older version comes back
    /// as it was.
    pub(super) async fn on_inlay_hint_resolve(&self, mut hint: InlayHint) -> Result<InlayHint> {
        let data = hint.data.clone().unwrap_or(Json::Null);
        let (Some(uri), Some(version), Some(offset)) = (
            data.get("uri")
                .and_then(Json::as_str)
                .and_then(|u| u.parse::<Uri>().ok()),
            data.get("version").and_then(Json::as_i64),
            data.get("offset").and_then(Json::as_u64),
        ) else {
            return Err(Error::invalid_params("an inlay hint without its data"));
        };
        if super::current_version(&self.state, &uri) != Some(version as i32) {
            return Ok(hint);
        }
        let (out, _) = self.current_analysis(&uri).await?;
        if out.version as i64 != version {
            return Ok(hint);
        }
        if let Some(markdown) = inlay::tooltip(&out, offset as usize) {
            hint.tooltip = Some(InlayHintTooltip::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value: markdown,
            }));
        }
        Ok(hint)
    }

    pub(super) async fn on_code_lens(
        &self,
        params: CodeLensParams,
    ) -> Result<Option<Vec<CodeLens>>> {
        let uri = params.text_document.uri;
        let (out, tree) = self.current_analysis(&uri).await?;
        let enc = *self.state.encoding.read().unwrap();
        let rope = Rope::from_str(&out.text);
        let lenses = lens::code_lenses(&out, &tree)
            .into_iter()
            .map(|l| {
                let target = json!({"uri": uri.as_str(), "class": l.class});
                let (command, argument) = match l.action {
                    LensAction::ShowGraph => (SHOW_GRAPH, target),
                    LensAction::Run => (RUN_GRAPH, target),
                    LensAction::Reveal(at) => (
                        REVEAL_LOCATION,
                        json!({"uri": uri.as_str(), "range": range_of(&rope, at, enc)}),
                    ),
                };
                CodeLens {
                    range: range_of(&rope, l.span, enc),
                    command: Some(Command {
                        title: l.title,
                        command: command.into(),
                        arguments: Some(vec![argument]),
                    }),
                    data: None,
                }
            })
            .collect();
        Ok(Some(lenses))
    }
}
