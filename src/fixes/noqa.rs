//! "Suppress with `# noqa: FXnnn`": on the line where the finding starts (where `staticfx
//! check` looks), append the code to an existing `# noqa:` list or add the comment.

use tree_sitter::Tree;

use super::text::{in_string, line_end, line_start};
use super::{Applicability, Edit, Fix, FixKind, Site};
use crate::syntax::Span;

pub fn fix(src: &str, tree: &Tree, site: &Site) -> Option<Fix> {
    let code = site.rule.code();
    let start = line_start(src, site.span.start.min(src.len()));
    let end = line_end(src, start);
    let line = &src[start..end];
    let lower = line.to_ascii_lowercase();
    let title = format!("Suppress {code} with `# noqa: {code}`");
    if let Some(pos) = lower.find("# noqa") {
        let after = pos + "# noqa".len();
        let rest = &line[after..];
        let Some(colon) = rest
            .find(|c: char| !c.is_whitespace())
            .filter(|&i| rest[i..].starts_with(':'))
        else {
            // A bare `# noqa` already silences the line.
            return None;
        };
        // The list: codes separated by commas or spaces, up to the first non-code word.
        let list_start = after + colon + 1;
        let mut list_end = list_start;
        let bytes = line.as_bytes();
        let mut i = list_start;
        while i < line.len() {
            let c = bytes[i];
            if c == b',' || c == b' ' || c == b'\t' {
                i += 1;
                continue;
            }
            let w_end = line[i..]
                .find(|ch: char| !ch.is_ascii_alphanumeric())
                .map(|p| p + i)
                .unwrap_or(line.len());
            if w_end == i {
                break;
            }
            if line[i..w_end].eq_ignore_ascii_case(code) {
                return None;
            }
            list_end = w_end;
            i = w_end;
        }
        let (at, text) = if list_end == list_start {
            (list_start, format!(" {code}"))
        } else {
            (list_end, format!(", {code}"))
        };
        return Some(Fix {
            title,
            applicability: Applicability::Safe,
            kind: FixKind::Noqa,
            edits: vec![Edit {
                span: Span::new(start + at, start + at),
                new_text: text,
            }],
        });
    }
    // A comment cannot follow a line continuation or sit inside a multi-line string.
    if line.trim_end().ends_with('\\') || in_string(tree, end) {
        return None;
    }
    let content_end = start + line.trim_end().len();
    Some(Fix {
        title,
        applicability: Applicability::Safe,
        kind: FixKind::Noqa,
        edits: vec![Edit {
            span: Span::new(content_end, end),
            new_text: format!("  # noqa: {code}"),
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::apply_kind;
    use super::super::FixKind;

    fn apply_site(src: &str, code: &str, needle: &str) -> Option<String> {
        apply_kind(src, code, needle, FixKind::Noqa)
    }

    #[test]
    fn adds_a_comment_or_extends_the_list() {
        let src = "x = f(y)\nz = g(y)  # noqa: FX105\nw = 1  # NOQA:FX102,FX101 because\n";
        let out = apply_site(src, "FX101", "f(y)");
        assert_eq!(out.as_deref(), Some("x = f(y)  # noqa: FX101\nz = g(y)  # noqa: FX105\nw = 1  # NOQA:FX102,FX101 because\n"));
        let out = apply_site(src, "FX101", "g(y)");
        assert_eq!(
            out.as_deref(),
            Some("x = f(y)\nz = g(y)  # noqa: FX105, FX101\nw = 1  # NOQA:FX102,FX101 because\n")
        );
        // Already listed: nothing to do.
        assert_eq!(apply_site(src, "FX101", "w = 1"), None);
    }

    #[test]
    fn keeps_crlf_and_trailing_spaces_out() {
        let src = "x = f(y)   \r\ny = 2\r\n";
        assert_eq!(
            apply_site(src, "FX105", "f(y)").as_deref(),
            Some("x = f(y)  # noqa: FX105\r\ny = 2\r\n")
        );
    }

    #[test]
    fn never_after_a_continuation_or_inside_a_string() {
        assert_eq!(apply_site("x = f(y) + \\\n    2\n", "FX105", "f(y)"), None);
        assert_eq!(apply_site("x = f('''a\nb''')\n", "FX105", "f("), None);
    }
}
