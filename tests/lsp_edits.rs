//! Incremental sync: multi-byte text under both position encodings, clamping, and thousands of
//! random edits after which the server's text (and tree) equal the client's.

mod lsp_support;
mod rng;

use lsp_support::TestClient;
use rng::Rng;
use serde_json::{json, Value};

const URI: &str = "file:///tmp/staticfx-edits/model.py";

#[derive(Clone, Copy, PartialEq)]
enum Enc {
    Utf8,
    Utf16,
}

fn units(s: &str, enc: Enc) -> usize {
    match enc {
        Enc::Utf8 => s.len(),
        Enc::Utf16 => s.encode_utf16().count(),
    }
}

/// The client's own position of a byte offset: lines break at `\n`, `\r\n` and lone `\r`.
fn position(text: &str, offset: usize, enc: Enc) -> Value {
    let b = text.as_bytes();
    let (mut line, mut start, mut i) = (0, 0, 0);
    while i < offset {
        match b[i] {
            b'\n' => {
                line += 1;
                start = i + 1;
            }
            b'\r' if b.get(i + 1) != Some(&b'\n') => {
                line += 1;
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    json!({"line": line, "character": units(&text[start..offset], enc)})
}

/// A random char-boundary offset that is not between `\r` and `\n` (no position names it).
fn offset(text: &str, rng: &mut Rng) -> usize {
    let mut o = rng.below(text.len() + 1);
    while !text.is_char_boundary(o) {
        o -= 1;
    }
    if o > 0 && text.as_bytes()[o - 1] == b'\r' && text.as_bytes().get(o) == Some(&b'\n') {
        o -= 1;
    }
    o
}

const PIECES: &[&str] = &[
    "a",
    "x",
    " ",
    "é",
    "😀",
    "中",
    "\n",
    "\r\n",
    "\r",
    "(",
    ")",
    ":",
    "    ",
    "def f(x):\n",
    "return x + 1",
    "# 日本語 ☕\n",
    "self.fc(h)",
    "",
];

async fn server_text(c: &mut TestClient) -> (String, i64, bool) {
    let r = c.result("staticfx/documentText", json!({"uri": URI})).await;
    (
        r["text"].as_str().unwrap().to_string(),
        r["version"].as_i64().unwrap(),
        r["treeMatchesFreshParse"].as_bool().unwrap(),
    )
}

async fn random_edits(enc: Enc, seed: u64, edits: usize) {
    let mut c = TestClient::start(Value::Null);
    c.initialize(None, json!({"debounceMs": 500}), enc == Enc::Utf8)
        .await;
    let mut text = String::from(include_str!("fixtures/lsp/simple_net.py"));
    c.open(URI, &text).await;
    let mut rng = Rng(seed);
    let mut version = 1;
    let mut sent = 0;
    while sent < edits {
        // Several changes in one notification apply in order, each on the previous result.
        let batch = 1 + rng.below(3).min(edits - sent - 1);
        let mut changes = Vec::new();
        for _ in 0..batch {
            let a = offset(&text, &mut rng);
            let b = if rng.below(3) == 0 {
                a
            } else {
                offset(&text, &mut rng)
            };
            let (s, e) = (a.min(b), a.max(b));
            let e = if e - s > 40 { s + (e - s) % 40 } else { e };
            let mut e = e;
            while !text.is_char_boundary(e) {
                e -= 1;
            }
            if e > 0 && text.as_bytes()[e - 1] == b'\r' && text.as_bytes().get(e) == Some(&b'\n') {
                e -= 1;
            }
            let e = e.max(s);
            let insert: String = (0..rng.below(3))
                .map(|_| PIECES[rng.below(PIECES.len())])
                .collect();
            changes.push(json!({"range": {"start": position(&text, s, enc), "end": position(&text, e, enc)}, "text": insert}));
            text.replace_range(s..e, &insert);
        }
        sent += batch;
        version += 1;
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": URI, "version": version}, "contentChanges": changes}),
        )
        .await;
    }
    let (server, v, tree_ok) = server_text(&mut c).await;
    assert_eq!(v, version);
    assert!(server == text, "server text diverged after {edits} edits");
    assert!(
        tree_ok,
        "incrementally edited tree differs from a fresh parse"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_random_edits_utf16() {
    random_edits(Enc::Utf16, 0x5eed_1234_abcd_0001, 2000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_random_edits_utf8() {
    random_edits(Enc::Utf8, 0x0bad_cafe_f00d_0002, 2000).await;
}

async fn edit(c: &mut TestClient, version: i64, range: ((u32, u32), (u32, u32)), text: &str) {
    let ((sl, sc), (el, ec)) = range;
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": version}, "contentChanges": [{"range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}, "text": text}]}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multibyte_edits_under_both_encodings() {
    let original = "# é😀x\ny = 1\n";
    // `# ` + é + 😀 ends at UTF-16 unit 5 (é is one unit, 😀 two) and at byte 8 (2 + 2 + 4).
    for (utf8, after) in [(false, 5u32), (true, 8u32)] {
        let mut c = TestClient::start(Value::Null);
        c.initialize(None, json!({"debounceMs": 500}), utf8).await;
        c.open(URI, original).await;
        edit(&mut c, 2, ((0, after), (0, after + 1)), "Z").await;
        assert_eq!(server_text(&mut c).await.0, "# é😀Z\ny = 1\n");
        // Replace the emoji itself.
        let (s, e) = if utf8 { (4, 8) } else { (3, 5) };
        edit(&mut c, 3, ((0, s), (0, e)), "中").await;
        assert_eq!(server_text(&mut c).await.0, "# é中Z\ny = 1\n");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_range_positions_clamp_instead_of_dropping_the_change() {
    let mut c = TestClient::start(Value::Null);
    c.initialize(None, json!({"debounceMs": 500}), false).await;
    c.open(URI, "ab😀\r\ncd\n").await;
    // Past the line's end: at the end of its content, before the CRLF.
    edit(&mut c, 2, ((0, 99), (0, 120)), "!").await;
    assert_eq!(server_text(&mut c).await.0, "ab😀!\r\ncd\n");
    // Inside the surrogate pair: rounds down to the emoji's start.
    edit(&mut c, 3, ((0, 3), (0, 3)), "_").await;
    assert_eq!(server_text(&mut c).await.0, "ab_😀!\r\ncd\n");
    // Past the last line: appended at the end.
    edit(&mut c, 4, ((40, 0), (41, 3)), "tail").await;
    assert_eq!(server_text(&mut c).await.0, "ab_😀!\r\ncd\ntail");
    // A reversed range is taken as the range between its ends.
    edit(&mut c, 5, ((1, 2), (1, 0)), "CD").await;
    let (text, version, tree_ok) = server_text(&mut c).await;
    assert_eq!(
        (text.as_str(), version, tree_ok),
        ("ab_😀!\r\nCD\ntail", 5, true)
    );
}

/// The robustness bar: 10,000 edits (non-ASCII, CRLF and lone CR among the pieces), each
/// notification carrying one to three changes, and the server's text still equals the client's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_random_edits_utf16() {
    random_edits(Enc::Utf16, 0x1000_0000_dead_beef, 10_000).await;
}

/// The tree the first analysis parsed becomes the document's, so the edits after it reparse
/// incrementally from that tree: they must give what a fresh parse gives, also in CRLF text
/// with non-ASCII characters and a line the analysis blanked for its syntax error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_after_the_first_analysis_reparse_from_its_tree() {
    let original = "import torch\r\nfrom torch import nn\r\n\r\n\r\n# é😀 中\r\nclass Net(nn.Module):\r\n    def forward(self, x):\r\n        y = (x +\r\n        return x * 2  # ☕\r\n";
    let mut c = TestClient::start(Value::Null);
    c.initialize(None, json!({}), false).await;
    c.open(URI, original).await;
    c.diagnostics(URI, 1).await;
    let mut client = original.to_string();
    // ((line, UTF-16 column), inserted text)
    let edits: [((u32, u32), &str); 4] = [
        ((8, 20), " "),
        ((4, 5), "x"),
        ((0, 12), "  # 日本"),
        ((6, 4), " "),
    ];
    for (i, ((line, col), text)) in edits.into_iter().enumerate() {
        let version = 2 + i as i64;
        edit(&mut c, version, ((line, col), (line, col)), text).await;
        let start = client
            .split("\r\n")
            .take(line as usize)
            .map(|l| l.len() + 2)
            .sum::<usize>();
        let in_line = client[start..]
            .char_indices()
            .scan(0u32, |units, (b, ch)| {
                let at = *units;
                *units += ch.len_utf16() as u32;
                Some((at, b))
            })
            .find(|&(at, _)| at == col)
            .map(|(_, b)| b)
            .unwrap();
        client.insert_str(start + in_line, text);
        let (server, v, tree_ok) = server_text(&mut c).await;
        assert_eq!((server.as_str(), v), (client.as_str(), version));
        assert!(
            tree_ok,
            "the tree after edit {version} differs from a fresh parse"
        );
    }
}
