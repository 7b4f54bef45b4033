//! Hover on a code in a `# noqa: FX101, FX105` comment: the rule's documentation, so a
//! suppression explains itself to the next reader.

use crate::syntax::Span;

/// The rule markdown and the code's span when `offset` is on a known code inside a noqa list.
pub fn hover(text: &str, offset: usize) -> Option<(String, Span)> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let line_end = text[offset..]
        .find(['\n', '\r'])
        .map_or(text.len(), |i| offset + i);
    let line = &text[line_start..line_end];
    let noqa = line.to_ascii_lowercase().find("# noqa")?;
    let list_start = noqa + "# noqa".len();
    let list = line[list_start..].trim_start().strip_prefix(':')?;
    let list_offset = line_start + line.len() - list.len();
    let mut pos = list_offset;
    // The codes are separated by commas and spaces; anything else ends the list, as in
    // `check::noqa_allows`.
    for token in list.split_inclusive([',', ' ']) {
        let code = token.trim_end_matches([',', ' ']);
        let span = Span::new(pos, pos + code.len());
        pos += token.len();
        if code.is_empty() {
            continue;
        }
        if !code.chars().all(|c| c.is_ascii_alphanumeric()) {
            break;
        }
        if span.start <= offset && offset <= span.end {
            let rule = crate::breaks::docs::lookup(code)?;
            return Some((rule.to_markdown("###"), span));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::hover;

    #[test]
    fn on_each_code_of_the_list_and_nowhere_else() {
        let text = "x = 1\r\nif h.sum() > 0:  # noqa: FX101, fx105 -- FX102\n";
        let at = |needle: &str| text.find(needle).unwrap();
        let (md, span) = hover(text, at("FX101") + 2).unwrap();
        assert!(md.starts_with("### FX101: data-dependent branch"), "{md}");
        assert_eq!(&text[span.start..span.end], "FX101");
        let (md, span) = hover(text, at("fx105")).unwrap();
        assert!(md.starts_with("### FX105:"), "{md}");
        assert_eq!(&text[span.start..span.end], "fx105");
        // After the list ended, and outside the comment: nothing.
        assert!(hover(text, at("FX102") + 1).is_none());
        assert!(hover(text, at("h.sum")).is_none());
        assert!(hover(text, 2).is_none());
        assert!(hover("y = 2  # noqa: FX999", 17).is_none());
    }
}
