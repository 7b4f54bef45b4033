//! What an editor is shown of a file's diagnostics, as plain data that can be stored: the
//! live analysis (`host::Output::shown`) and the `check` result cache (`check::cached_shown`)
//! both produce it, and the server turns it into protocol diagnostics in one place, so a
//! cached publication is the analysed one by construction.
//!
//! Positions in the document stay byte spans (the server converts them in the document it
//! has, whose text is the one analysed); positions in the other files a call chain points
//! into are kept as line and column in both encodings an editor may ask for, since the
//! server has no text of those files at hand when the result comes from the cache.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Diagnostic;
use crate::diagnostics::Severity;
use crate::semantic::FileId;
use crate::syntax::{LineIndex, Span};

/// One diagnostic as an editor shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShownDiagnostic {
    pub code: String,
    pub severity: Severity,
    /// The message with its hint (`Diagnostic::full_message`).
    pub message: String,
    pub url: Option<String>,
    /// In the analysed document.
    pub span: Span,
    /// The call sites from forward down to the finding, outermost first, each in its file.
    pub related: Vec<Location>,
}

/// A range in a file other than the document, as line and column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Location {
    pub path: PathBuf,
    pub start: TextPosition,
    pub end: TextPosition,
}

/// A 0-based line and the column on it in UTF-8 bytes and in UTF-16 code units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextPosition {
    pub line: u32,
    pub utf8: u32,
    pub utf16: u32,
}

/// Positions in a text without a rope (what is published goes out after every keystroke, and
/// a rope of a large file costs more to build than the lines of the text to index). Agrees
/// with the server's rope positions on the same text (a test in `lsp::convert` checks).
pub struct Positions<'t> {
    text: &'t str,
    lines: LineIndex,
}

impl<'t> Positions<'t> {
    pub fn new(text: &'t str) -> Self {
        Positions {
            text,
            lines: LineIndex::new(text),
        }
    }

    /// The line and column of `offset`; inside a character, of the character, as a rope
    /// gives it; past the end, of the end.
    pub fn at(&self, offset: usize) -> TextPosition {
        let (line, before) = self.line_and_prefix(offset);
        TextPosition {
            line: line as u32,
            utf8: before.len() as u32,
            utf16: before.encode_utf16().count() as u32,
        }
    }

    /// The line of `offset` and the text on it before it.
    pub fn line_and_prefix(&self, offset: usize) -> (usize, &'t str) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.lines.line_of(offset);
        (line, &self.text[self.lines.line_start(line)..offset])
    }
}

/// `diagnostics` as an editor shows them, in their order; `file` gives the path and text of a
/// file a call chain points into (a chain step into a file it does not know is left out).
pub fn shown(
    diagnostics: &[Diagnostic],
    mut file: impl FnMut(FileId) -> Option<(PathBuf, Arc<str>)>,
) -> Vec<ShownDiagnostic> {
    let mut texts: HashMap<FileId, (PathBuf, Arc<str>)> = HashMap::new();
    for &(id, _) in diagnostics.iter().flat_map(|d| &d.chain) {
        if !texts.contains_key(&id) {
            if let Some(f) = file(id) {
                texts.insert(id, f);
            }
        }
    }
    let mut positions: HashMap<FileId, (&Path, Positions)> = HashMap::new();
    diagnostics
        .iter()
        .map(|d| {
            let related = d
                .chain
                .iter()
                .filter_map(|&(id, span)| {
                    if !positions.contains_key(&id) {
                        let (path, text) = texts.get(&id)?;
                        positions.insert(id, (path.as_path(), Positions::new(text)));
                    }
                    let (path, p) = &positions[&id];
                    Some(Location {
                        path: path.to_path_buf(),
                        start: p.at(span.start),
                        end: p.at(span.end),
                    })
                })
                .collect();
            ShownDiagnostic {
                code: d.code.to_string(),
                severity: d.severity,
                message: d.full_message(),
                url: d.url.clone(),
                span: d.span,
                related,
            }
        })
        .collect()
}
