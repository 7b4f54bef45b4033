//! A forgiving reader in front of the JSON-RPC transport. tower-lsp's reader stops for good at
//! the first frame it cannot decode (a bad header, invalid JSON, a body that is not a JSON-RPC
//! message), which ends the server. Everything the client sends goes through [`Deframer`]
//! first: well-formed messages pass through unchanged, malformed ones are dropped (and
//! logged), and reading resumes at the next `Content-Length` header, including one swallowed
//! by a wrong length.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tower_lsp_server::jsonrpc::{Request, Response};

/// Headers longer than this are garbage.
const MAX_HEADER: usize = 8 << 10;
/// Bodies longer than this are refused (a document of this size is not a source file).
pub const MAX_BODY: usize = 256 << 20;
const LENGTH: &[u8] = b"content-length";

/// Splits the client's byte stream into well-formed message bodies.
#[derive(Default)]
pub struct Deframer {
    buf: Vec<u8>,
    /// Why each dropped piece of input was dropped, since the last `take_rejects`.
    rejects: Vec<String>,
}

fn find_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if hay.len() < needle.len() {
        return None;
    }
    (0..=hay.len() - needle.len()).find(|&i| hay[i..i + needle.len()].eq_ignore_ascii_case(needle))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if hay.len() < needle.len() {
        return None;
    }
    (0..=hay.len() - needle.len()).find(|&i| &hay[i..i + needle.len()] == needle)
}

/// What the transport decodes a body into (its own type is private): the same untagged enum,
/// decoded the same way (`from_str` after a UTF-8 check), so a body passes here exactly when
/// it would pass there. Decoding the two variants separately is not the same: the untagged
/// enum buffers the document first and accepts less (fuzzing found a body that differed).
#[derive(serde::Deserialize)]
#[serde(untagged)]
#[allow(dead_code)]
enum Message {
    Response(Response),
    Request(Request),
}

/// A body tower-lsp will accept: a JSON-RPC request, notification or response.
pub fn is_message(body: &[u8]) -> bool {
    std::str::from_utf8(body).is_ok_and(|s| serde_json::from_str::<Message>(s).is_ok())
}

impl Deframer {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    pub fn take_rejects(&mut self) -> Vec<String> {
        std::mem::take(&mut self.rejects)
    }

    /// Bytes held waiting for the rest of a message.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    fn drop_front(&mut self, n: usize, why: impl Into<String>) {
        let n = n.min(self.buf.len());
        if n > 0 {
            self.rejects.push(why.into());
        }
        self.buf.drain(..n);
    }

    /// Skips to the next `Content-Length` (keeping a tail that may be its start).
    fn resync(&mut self, from: usize, why: &str) {
        match find_ci(&self.buf[from.min(self.buf.len())..], LENGTH) {
            Some(p) => self.drop_front(from + p, why),
            None => {
                let keep = LENGTH.len() - 1;
                let n = self
                    .buf
                    .len()
                    .saturating_sub(keep)
                    .max(from.min(self.buf.len()));
                self.drop_front(n, why);
            }
        }
    }

    /// The next well-formed message body, or None until more bytes arrive.
    pub fn next_message(&mut self) -> Option<Vec<u8>> {
        loop {
            if self.buf.is_empty() {
                return None;
            }
            // A frame starts with a header; anything else is skipped.
            let starts_with_header = {
                let n = self.buf.len().min(8);
                self.buf[..n].eq_ignore_ascii_case(&b"content-"[..n])
            };
            if !starts_with_header {
                self.resync(1, "bytes outside a message");
                continue;
            }
            // Only the first MAX_HEADER bytes can hold the header's end (a body arriving in
            // chunks is not rescanned).
            let head = &self.buf[..self.buf.len().min(MAX_HEADER + 4)];
            let (headers_end, sep) = match (find(head, b"\r\n\r\n"), find(head, b"\n\n")) {
                (Some(a), Some(b)) if b + 2 < a + 4 => (b, 2),
                (Some(a), _) => (a, 4),
                (None, Some(b)) => (b, 2),
                (None, None) => {
                    if self.buf.len() > MAX_HEADER {
                        self.resync(1, "a header without an end");
                        continue;
                    }
                    return None;
                }
            };
            if headers_end > MAX_HEADER {
                self.resync(1, "a header too long");
                continue;
            }
            let body_start = headers_end + sep;
            let len = std::str::from_utf8(&self.buf[..headers_end])
                .ok()
                .and_then(|h| {
                    h.lines().find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.trim()
                            .eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())
                            .flatten()
                    })
                });
            let Some(len) = len.filter(|&l| l <= MAX_BODY) else {
                self.resync(body_start, "a header without a valid Content-Length");
                continue;
            };
            if self.buf.len() < body_start + len {
                return None;
            }
            let body = &self.buf[body_start..body_start + len];
            if is_message(body) {
                let body = body.to_vec();
                self.buf.drain(..body_start + len);
                return Some(body);
            }
            // A wrong length may have swallowed the next message: resume at a header inside.
            let why = if std::str::from_utf8(body).is_err() {
                "a body that is not UTF-8"
            } else if serde_json::from_slice::<serde_json::Value>(body).is_err() {
                "a body that is not JSON"
            } else {
                "a body that is not a JSON-RPC message"
            };
            match find_ci(body, LENGTH) {
                Some(p) => self.drop_front(body_start + p, why),
                None => self.drop_front(body_start + len, why),
            }
        }
    }
}

/// Frames `body` as the transport expects it.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Copies well-formed messages from `input` to `output` until `input` ends; logs what it drops
/// to stderr. Closing `output` then ends the server as the client's end of input would.
pub async fn pump(mut input: impl AsyncRead + Unpin, mut output: impl AsyncWrite + Unpin) {
    let mut d = Deframer::default();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = match input.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        d.push(&chunk[..n]);
        while let Some(body) = d.next_message() {
            if output.write_all(&frame(&body)).await.is_err() {
                return;
            }
        }
        for why in d.take_rejects() {
            eprintln!("staticfx lsp: dropped malformed input from the client: {why}");
        }
        if output.flush().await.is_err() {
            return;
        }
    }
    let _ = output.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(id: i64) -> Vec<u8> {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"shutdown"}}"#).into_bytes()
    }

    fn all(d: &mut Deframer) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| d.next_message()).collect()
    }

    #[test]
    fn good_frames_pass_split_anywhere() {
        let mut bytes = frame(&req(1));
        bytes.extend(frame(&req(2)));
        for cut in 0..bytes.len() {
            let mut d = Deframer::default();
            d.push(&bytes[..cut]);
            let mut got = all(&mut d);
            d.push(&bytes[cut..]);
            got.extend(all(&mut d));
            assert_eq!(got, vec![req(1), req(2)], "cut at {cut}");
            assert!(d.take_rejects().is_empty());
        }
    }

    #[test]
    fn malformed_input_is_dropped_and_reading_resumes() {
        let cases: Vec<Vec<u8>> = vec![
            frame(b"{not json"),
            frame(b"[1,2]"),
            frame(b"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"x\"}"),
            frame(b"\xff\xfe"),
            b"Content-Length: abc\r\n\r\n".to_vec(),
            b"Content-Type: x\r\n\r\n".to_vec(),
            b"garbage\r\n\r\n".to_vec(),
            format!("Content-Length: {}\r\n\r\n", MAX_BODY + 1).into_bytes(),
            b"Content-Length: 3\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"initialized\"}".to_vec(),
        ];
        for bad in cases {
            let mut d = Deframer::default();
            d.push(&bad);
            d.push(&frame(&req(7)));
            assert_eq!(
                all(&mut d),
                vec![req(7)],
                "{:?}",
                String::from_utf8_lossy(&bad)
            );
            assert!(!d.take_rejects().is_empty());
        }
    }

    #[test]
    fn a_length_too_long_gives_back_the_swallowed_message() {
        let mut d = Deframer::default();
        d.push(b"Content-Length: 120\r\n\r\n{\"a\":");
        d.push(&frame(&req(1)));
        assert!(all(&mut d).is_empty(), "waits for 120 bytes");
        d.push(&frame(&req(2)));
        d.push(&frame(&req(3)));
        assert_eq!(all(&mut d), vec![req(1), req(2), req(3)]);
    }
}
