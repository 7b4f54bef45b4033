//! The one place byte spans become LSP ranges and back, in the negotiated position encoding,
//! and `ide` diagnostics become protocol diagnostics.

use ropey::Rope;
use tower_lsp_server::ls_types::*;

use super::document::{offset_at, position_at, Encoding};
use crate::diagnostics::Severity;
use crate::ide::shown::{Positions, ShownDiagnostic, TextPosition};
use crate::ide::Output;
use crate::syntax::Span;

pub fn range_of(rope: &Rope, span: Span, enc: Encoding) -> Range {
    Range {
        start: position_at(rope, span.start, enc),
        end: position_at(rope, span.end, enc),
    }
}

pub fn offset_of(rope: &Rope, pos: Position, enc: Encoding) -> usize {
    offset_at(rope, pos, enc)
}

/// A position of `ide::shown` in the negotiated encoding.
fn position(p: TextPosition, enc: Encoding) -> Position {
    Position {
        line: p.line,
        character: match enc {
            Encoding::Utf8 => p.utf8,
            Encoding::Utf16 => p.utf16,
        },
    }
}

/// The protocol diagnostics of an analysis, in the order the policy gave them.
pub fn diagnostics(out: &Output, enc: Encoding) -> Vec<Diagnostic> {
    shown_diagnostics(&out.text, &out.shown(), enc)
}

/// The protocol diagnostics of `shown` in a document whose text is `text` (the text they
/// were found in): of a live analysis, or from the `check` cache.
pub fn shown_diagnostics(text: &str, shown: &[ShownDiagnostic], enc: Encoding) -> Vec<Diagnostic> {
    let doc = Positions::new(text);
    let in_doc = |offset: usize| {
        let (line, before) = doc.line_and_prefix(offset);
        Position {
            line: line as u32,
            character: match enc {
                Encoding::Utf8 => before.len(),
                Encoding::Utf16 => before.encode_utf16().count(),
            } as u32,
        }
    };
    shown
        .iter()
        .map(|d| {
            let related: Vec<DiagnosticRelatedInformation> = d
                .related
                .iter()
                .filter_map(|l| {
                    Some(DiagnosticRelatedInformation {
                        location: Location {
                            uri: Uri::from_file_path(&l.path)?,
                            range: Range {
                                start: position(l.start, enc),
                                end: position(l.end, enc),
                            },
                        },
                        message: "called from here".into(),
                    })
                })
                .collect();
            let range = Range {
                start: in_doc(d.span.start),
                end: in_doc(d.span.end),
            };
            diagnostic(d, range, related)
        })
        .collect()
}

fn diagnostic(
    d: &ShownDiagnostic,
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
        code: Some(NumberOrString::String(d.code.clone())),
        code_description: d
            .url
            .as_ref()
            .and_then(|h| h.parse().ok())
            .map(|href| CodeDescription { href }),
        source: Some("staticfx".into()),
        message: d.message.clone(),
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
                    position(positions.at(offset), enc),
                    position_at(&rope, offset, enc),
                    "offset {offset}, {enc:?}"
                );
            }
        }
    }
}
