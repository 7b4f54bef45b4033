//! The one place byte spans become LSP ranges and back, in the negotiated position encoding,
//! and `ide` diagnostics become protocol diagnostics.

use std::collections::HashMap;

use ropey::Rope;
use tower_lsp_server::ls_types::*;

use super::document::{offset_at, position_at, Encoding};
use crate::diagnostics::Severity;
use crate::ide::Output;
use crate::semantic::FileId;
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

/// The protocol diagnostics of an analysis, in the order the policy gave them.
pub fn diagnostics(out: &Output, enc: Encoding) -> Vec<Diagnostic> {
    let doc = Rope::from_str(&out.text);
    let mut ropes: HashMap<FileId, Rope> = HashMap::new();
    out.diagnostics
        .iter()
        .map(|d| {
            let related: Vec<DiagnosticRelatedInformation> = d
                .chain
                .iter()
                .filter_map(|&(file, span)| {
                    let (path, text) = out.files.get(&file)?;
                    let rope = ropes.entry(file).or_insert_with(|| Rope::from_str(text));
                    Some(DiagnosticRelatedInformation {
                        location: Location {
                            uri: Uri::from_file_path(path)?,
                            range: range_of(rope, span, enc),
                        },
                        message: "called from here".into(),
                    })
                })
                .collect();
            diagnostic(d, range_of(&doc, d.span, enc), related)
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
