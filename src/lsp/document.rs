//! An open document: its text, a rope for cheap edits, the tree-sitter tree kept in step with
//! it for incremental reparses, and the conversions between LSP positions and byte offsets.

use std::sync::Arc;

use ropey::{Rope, RopeSlice};
use tower_lsp_server::ls_types::{Position, TextDocumentContentChangeEvent};
use tree_sitter::{InputEdit, Point, Tree};

/// The unit of `Position.character`, negotiated at initialize.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Encoding {
    Utf8,
    #[default]
    Utf16,
}

pub struct Document {
    /// None until the document is edited, and again while it is idle
    /// ([`Document::forget_derived`]): a second copy of the text, for hundreds of open files.
    rope: Option<Rope>,
    /// None until the document is edited or analysed, and again while it is idle: a tree
    /// takes about 20 bytes per byte of text, which with hundreds of files open was most of
    /// the server's memory.
    tree: Option<Tree>,
    pub version: i32,
    /// Whether the document changed since it was opened (the analysis host keeps sessions
    /// for edited documents first).
    pub edited: bool,
    /// The rope's text at `version`, shared with analysis tasks without copying again.
    pub text: Arc<str>,
}

impl Document {
    pub fn new(text: &str, version: i32) -> Self {
        let text: Arc<str> = Arc::from(text);
        Document {
            rope: None,
            tree: None,
            version,
            edited: false,
            text,
        }
    }

    /// Applies changes in order; each range refers to the text after the previous change, as
    /// the protocol says. The tree is edited per change and reparsed once at the end.
    pub fn apply_changes(
        &mut self,
        changes: &[TextDocumentContentChangeEvent],
        version: i32,
        enc: Encoding,
    ) {
        let mut incremental = self.tree.is_some();
        let mut rope = (self.rope.take()).unwrap_or_else(|| Rope::from_str(&self.text));
        for change in changes {
            match change.range {
                None => {
                    rope = Rope::from_str(&change.text);
                    incremental = false;
                }
                Some(range) => {
                    let mut start = offset_at(&rope, range.start, enc);
                    let mut end = offset_at(&rope, range.end, enc);
                    if end < start {
                        std::mem::swap(&mut start, &mut end);
                    }
                    // The parser reads a lone `\r` as `\n` (`syntax::parse`); whether the byte
                    // before the edit is lone can change with the edit, so the tree's edit
                    // starts there.
                    let tree_start = if start > 0 && rope.byte(start - 1) == b'\r' {
                        start - 1
                    } else {
                        start
                    };
                    let start_point = point_at(&rope, tree_start);
                    let old_end_point = point_at(&rope, end);
                    let start_char = rope.byte_to_char(start);
                    let end_char = rope.byte_to_char(end);
                    rope.remove(start_char..end_char);
                    rope.insert(start_char, &change.text);
                    let new_end = start + change.text.len();
                    if let (true, Some(tree)) = (incremental, &mut self.tree) {
                        tree.edit(&InputEdit {
                            start_byte: tree_start,
                            old_end_byte: end,
                            new_end_byte: new_end,
                            start_position: start_point,
                            old_end_position: old_end_point,
                            new_end_position: point_at(&rope, new_end),
                        });
                    }
                }
            }
        }
        self.text = Arc::from(rope.to_string());
        self.rope = Some(rope);
        let old = self.tree.take().filter(|_| incremental);
        self.tree = Some(crate::syntax::parse(&self.text, old.as_ref()));
        self.version = version;
        self.edited = true;
    }

    /// The tree of the current text, parsed again if it was forgotten.
    pub fn tree(&mut self) -> Tree {
        self.tree
            .get_or_insert_with(|| crate::syntax::parse(&self.text, None))
            .clone()
    }

    /// The tree if the document has one now (an analysis parses a missing one when it runs).
    pub fn parsed_tree(&self) -> Option<Tree> {
        self.tree.clone()
    }

    /// Takes the tree an analysis parsed of `text`, when that is still the document's text
    /// and the document has none: its first edit then reparses incrementally, where it would
    /// parse the whole file on the edit's path.
    pub fn adopt_tree(&mut self, text: &Arc<str>, tree: &Tree) {
        if self.tree.is_none() && Arc::ptr_eq(&self.text, text) {
            self.tree = Some(tree.clone());
        }
    }

    /// Drops what an idle document keeps beside its text: the tree and the rope (see the
    /// fields). Its next edit builds them again.
    pub fn forget_derived(&mut self) {
        self.tree = None;
        self.rope = None;
    }
}

/// Line content without its line break (`\n`, `\r\n` or a lone `\r`).
fn content(line: RopeSlice<'_>) -> RopeSlice<'_> {
    let mut n = line.len_chars();
    if n > 0 && line.char(n - 1) == '\n' {
        n -= 1;
    }
    if n > 0 && line.char(n - 1) == '\r' {
        n -= 1;
    }
    line.slice(..n)
}

/// Byte offset of an LSP position. Positions past a line's end or the document's end clamp to
/// it, and a column inside a character (mid UTF-8 sequence or mid surrogate pair) moves to the
/// character's start: clients do send such positions, and dropping the change would leave the
/// server's text out of step with the editor's for good.
pub fn offset_at(rope: &Rope, pos: Position, enc: Encoding) -> usize {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return rope.len_bytes();
    }
    let start = rope.line_to_byte(line);
    let text = content(rope.line(line));
    let col = pos.character as usize;
    let char_idx = match enc {
        Encoding::Utf8 => text.byte_to_char(col.min(text.len_bytes())),
        Encoding::Utf16 => text.utf16_cu_to_char(col.min(text.len_utf16_cu())),
    };
    start + text.char_to_byte(char_idx)
}

/// LSP position of a byte offset (clamped to the text, rounded down to a character start).
pub fn position_at(rope: &Rope, offset: usize, enc: Encoding) -> Position {
    let offset = offset.min(rope.len_bytes());
    let char_idx = rope.byte_to_char(offset);
    let line = rope.char_to_line(char_idx);
    let line_char = rope.line_to_char(line);
    let col = match enc {
        Encoding::Utf8 => rope.char_to_byte(char_idx) - rope.line_to_byte(line),
        Encoding::Utf16 => rope.char_to_utf16_cu(char_idx) - rope.char_to_utf16_cu(line_char),
    };
    Position {
        line: line as u32,
        character: col as u32,
    }
}

/// tree-sitter's point for a byte offset. tree-sitter counts rows at `\n` only, the rope also
/// at a lone `\r`; the two agree except in old-Mac line endings, where only row numbers of
/// the tree's points drift (byte offsets, which reparsing and analysis use, stay exact).
fn point_at(rope: &Rope, offset: usize) -> Point {
    let row = rope.byte_to_line(offset);
    Point {
        row,
        column: offset - rope.line_to_byte(row),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::Range;

    fn change(sl: u32, sc: u32, el: u32, ec: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(sl, sc), Position::new(el, ec))),
            range_length: None,
            text: text.into(),
        }
    }

    #[test]
    fn utf16_and_utf8_columns_after_multibyte_characters() {
        let rope = Rope::from_str("é😀x\n");
        // é is 1 UTF-16 unit / 2 bytes, 😀 is 2 units / 4 bytes.
        assert_eq!(offset_at(&rope, Position::new(0, 3), Encoding::Utf16), 6);
        assert_eq!(offset_at(&rope, Position::new(0, 6), Encoding::Utf8), 6);
        // Mid-surrogate and mid-sequence columns round down to the character start.
        assert_eq!(offset_at(&rope, Position::new(0, 2), Encoding::Utf16), 2);
        assert_eq!(offset_at(&rope, Position::new(0, 4), Encoding::Utf8), 2);
        // Past the line end: the end of the content, never the next line.
        assert_eq!(offset_at(&rope, Position::new(0, 99), Encoding::Utf16), 7);
        assert_eq!(offset_at(&rope, Position::new(9, 0), Encoding::Utf16), 8);
        assert_eq!(position_at(&rope, 6, Encoding::Utf16), Position::new(0, 3));
        assert_eq!(position_at(&rope, 6, Encoding::Utf8), Position::new(0, 6));
    }

    #[test]
    fn crlf_and_lone_cr_are_line_breaks() {
        let rope = Rope::from_str("a\r\nb\rc");
        assert_eq!(offset_at(&rope, Position::new(1, 0), Encoding::Utf16), 3);
        assert_eq!(offset_at(&rope, Position::new(2, 0), Encoding::Utf16), 5);
        assert_eq!(
            offset_at(&rope, Position::new(0, 5), Encoding::Utf16),
            1,
            "clamps before the CRLF"
        );
    }

    #[test]
    fn incremental_edits_keep_tree_and_text_in_step() {
        let mut d = Document::new("def f(x):\n    return x\n", 1);
        d.apply_changes(
            &[change(1, 11, 1, 12, "x + 1"), change(0, 4, 0, 5, "gé")],
            2,
            Encoding::Utf16,
        );
        assert_eq!(&*d.text, "def gé(x):\n    return x + 1\n");
        let fresh = crate::syntax::parse(&d.text, None);
        assert_eq!(d.tree().root_node().to_sexp(), fresh.root_node().to_sexp());
        assert_eq!(d.version, 2);
    }

    #[test]
    fn an_edit_after_the_tree_and_rope_were_forgotten_applies_to_the_text_and_parses_it_whole() {
        let mut d = Document::new("def f(x):\n    return x\n", 1);
        d.forget_derived();
        d.apply_changes(&[change(1, 11, 1, 12, "x + 1")], 2, Encoding::Utf16);
        assert_eq!(&*d.text, "def f(x):\n    return x + 1\n");
        let fresh = crate::syntax::parse(&d.text, None);
        assert_eq!(d.tree().root_node().to_sexp(), fresh.root_node().to_sexp());
        d.forget_derived();
        assert_eq!(d.tree().root_node().to_sexp(), fresh.root_node().to_sexp());
        // the rope is built again from the edited text, not the opened one
        d.forget_derived();
        d.apply_changes(&[change(1, 15, 1, 16, "2")], 3, Encoding::Utf16);
        assert_eq!(
            &*d.text,
            "def f(x):
    return x + 2
"
        );
    }
}
