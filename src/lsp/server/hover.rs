//! `textDocument/hover`: the `ide` hover of the current analysis, at the cursor.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use super::{convert, host, Server};

impl Server {
    pub(super) async fn on_hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let pos = params.text_document_position_params;
        let uri = pos.text_document.uri;
        let (out, tree) = self.current_analysis(&uri).await?;
        if self.state.config.read().unwrap().test_hooks
            && out.text.contains(host::HOVER_PANIC_MARKER)
        {
            panic!("test hook: a panic in the hover handler");
        }
        let enc = *self.state.encoding.read().unwrap();
        let rope = ropey::Rope::from_str(&out.text);
        let offset = convert::offset_of(&rope, pos.position, enc);
        let Some((markdown, span)) = crate::ide::hover::hover(&out, &tree, offset) else {
            return Ok(None);
        };
        let range = convert::range_of(&rope, span, enc);
        Ok(Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: markdown,
            }),
            range: Some(range),
        }))
    }
}
