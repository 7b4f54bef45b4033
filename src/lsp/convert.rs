//! The one place byte spans become LSP ranges and back, in the negotiated position encoding,
//! and `ide` diagnostics become protocol diagnostics.

use std::collections::HashMap;

use ropey::Rope;
use tower_lsp_server::ls_types::*;

use super::document::{offset_at, position_at, Encoding};
use crate::diagnostics::Severity;
use crate::ide::Output;
use crate::semantic::FileId;
use crate::syntax::{LineIndex, Span};

pub fn range_of(rope: &Rope, span: Span, enc: Encoding) -> Range {
    Range {
        start: position_at(rope, span.start, enc),
        end: position_at(rope, span.end, enc),
    }
}

pub fn offset_of(rope: &Rope, pos: Position, enc: Encoding) -> usize {
    offset_at(rope, pos, enc)
}

/// Positions in a text that has no rope: what is published goes out after every keystroke,
/// and a rope of a large file costs more to build than the lines of the text to index.
/// Agrees with [`position_at`] on a rope of the same text (a test checks).
struct Positions<'t> {
    text: &'t str,
    lines: LineIndex,
}

impl<'t> Positions<'t> {
    fn new(text: &'t str) -> Self {
        Positions {
            text,
            lines: LineIndex::new(text),
        }
    }

    fn position(&self, offset: usize, enc: Encoding) -> Position {
        let mut offset = offset.min(self.text.len());
        // Inside a character: the position of the character, as the rope gives it.
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.lines.line_of(offset);
        let before = &self.text[self.lines.line_start(line)..offset];
        let col = match enc {
            Encoding::Utf8 => before.len(),
            Encoding::Utf16 => before.encode_utf16().count(),
        };
        Position {
            line: line as u32,
            character: col as u32,
        }
    }

    fn range(&self, span: Span, enc: Encoding) -> Range {
        Range {
            start: self.position(span.start, enc),
            end: self.position(span.end, enc),
        }
    }
}

/// The protocol diagnostics of an analysis, in the order the policy gave them.
pub fn diagnostics(out: &Output, enc: Encoding) -> Vec<Diagnostic> {
    let doc = Positions::new(&out.text);
    let mut files: HashMap<FileId, Positions> = HashMap::new();
    out.diagnostics
        .iter()
        .map(|d| {
            let related: Vec<DiagnosticRelatedInformation> = d
                .chain
                .iter()
                .filter_map(|&(file, span)| {
                    let (path, text) = out.files.get(&file)?;
                    let positions = files.entry(file).or_insert_with(|| Positions::new(text));
                    Some(DiagnosticRelatedInformation {
                        location: Location {
                            uri: Uri::from_file_path(path)?,
                            range: positions.range(span, enc),
                        },
                        message: "called from here".into(),
                    })
                })
                .collect();
            diagnostic(d, doc.range(d.span, enc), related)
        })
        .collect()
}

fn diagnostic(
    d: &crate::ide::Diagnostic,
    range: Range,
    related: Vec<DiagnosticRelatedInformation>,
) -> Diagnostic {
    let severity = match d.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
        Severity::Hint => DiagnosticSeverity::HINT,
    };
    Diagnostic {
        range,
        severity: Some(severity),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: d
            .url
            .as_ref()
            .and_then(|h| h.parse().ok())
            .map(|href| CodeDescription { href }),
        source: Some("staticfx".into()),
        message: d.full_message(),
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_without_a_rope_are_the_ropes() {
        let text = "é = 1\r\nx = \"😀\"\rfor i in y:\n\tz\r\r\n\n# größe 幅\r";
        let rope = Rope::from_str(text);
        let positions = Positions::new(text);
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            for offset in 0..=text.len() + 2 {
                assert_eq!(
                    positions.position(offset, enc),
                    position_at(&rope, offset, enc),
                    "offset {offset}, {enc:?}"
                );
            }
        }
    }
}
