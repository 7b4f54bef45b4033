/// Maps byte offsets to lines and columns. Lines end at `\n`, `\r\n` or a lone `\r`, the same
/// breaks the LSP counts, so CRLF and old-Mac files agree between the CLI and the editor.
#[derive(Clone, Debug)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    len: usize,
}

/// 0-based line, and a 0-based column counted in Unicode scalar values (what ruff reports, +1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LineCol {
    pub line: usize,
    pub col: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut line_starts = vec![0];
        for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            // The `\n` of a `\r\n` is found next and ends the line alone.
            if bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n') {
                line_starts.push(i + 1);
            }
        }
        LineIndex {
            line_starts,
            len: text.len(),
        }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Line of a byte offset (0-based); offsets past the end clamp to the last line.
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.len);
        match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        }
    }

    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts.get(line).copied().unwrap_or(self.len)
    }

    pub fn line_col(&self, text: &str, offset: usize) -> LineCol {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_of(offset);
        let start = self.line_starts[line];
        LineCol {
            line,
            col: text[start..offset].chars().count(),
        }
    }

    /// Byte offset of a 0-based line and character column; clamps past the line's end.
    pub fn offset(&self, text: &str, line: usize, col: usize) -> usize {
        if line >= self.line_starts.len() {
            return text.len();
        }
        let start = self.line_starts[line];
        let end = self
            .line_starts
            .get(line + 1)
            .copied()
            .unwrap_or(text.len());
        let line_text = &text[start..end];
        let content = line_text.trim_end_matches(['\n', '\r']);
        match content.char_indices().nth(col) {
            Some((b, _)) => start + b,
            None => start + content.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_and_lone_cr_are_line_breaks() {
        let text = "a\r\nbé\rc\nd";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_count(), 4);
        assert_eq!(
            idx.line_col(text, text.find('c').unwrap()),
            LineCol { line: 2, col: 0 }
        );
        let d = text.find('d').unwrap();
        assert_eq!(idx.line_col(text, d), LineCol { line: 3, col: 0 });
        // 'é' is two bytes but one column.
        let cr = text.find('\r').unwrap();
        let second_cr = text[cr + 1..].find('\r').unwrap() + cr + 1;
        assert_eq!(idx.line_col(text, second_cr), LineCol { line: 1, col: 2 });
        assert_eq!(idx.offset(text, 1, 2), second_cr);
        assert_eq!(
            idx.offset(text, 1, 99),
            second_cr,
            "columns past the end clamp"
        );
        assert_eq!(idx.offset(text, 9, 0), text.len());
    }

    #[test]
    fn line_starts_follow_every_kind_of_break_in_any_order() {
        // (text, where its lines start): runs of `\r`, `\r\r\n`, `\n\r`, breaks first and last.
        let cases: [(&str, &[usize]); 7] = [
            ("", &[0]),
            ("\r", &[0, 1]),
            ("\r\r\n", &[0, 1, 3]),
            ("\n\r", &[0, 1, 2]),
            ("a\r\n\r\nb", &[0, 3, 5]),
            ("x\r\ry\n", &[0, 2, 3, 5]),
            ("\u{e9}\r\u{1F600}\n\r\n", &[0, 3, 8, 10]),
        ];
        for (text, starts) in cases {
            let idx = LineIndex::new(text);
            let got: Vec<usize> = (0..idx.line_count()).map(|l| idx.line_start(l)).collect();
            assert_eq!(got, starts, "{text:?}");
        }
    }
}
