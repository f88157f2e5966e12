//! An incremental decoder of newline-delimited JSON (one JSON value per line, as Ollama
//! streams): the [`Deframer`] of [`crate::framing::Framing::Ndjson`].
//!
//! Bytes go in as they arrive, cut anywhere — inside a line, inside a UTF-8 character —, and
//! whole lines come out, each a [`Frame`] without an event name. A line ends with `\n` (a `\r`
//! before it, and blanks around the value, are not part of it); blank lines are skipped. The
//! lines are not parsed here: the provider module reads each as JSON, so a line that is not is
//! its error to name.

use crate::framing::{Deframer, Frame};

/// The decoder's state between chunks.
#[derive(Debug, Default)]
pub struct NdjsonDecoder {
    /// Bytes of the line being read (kept as bytes: a chunk may end inside a character).
    line: Vec<u8>,
}

impl NdjsonDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        NdjsonDecoder::default()
    }

    fn end_line(&mut self, frames: &mut Vec<Frame>) {
        let line = String::from_utf8_lossy(&self.line);
        let value = line.trim();
        if !value.is_empty() {
            frames.push(Frame {
                event: None,
                data: value.to_string(),
            });
        }
        self.line.clear();
    }
}

impl Deframer for NdjsonDecoder {
    fn feed(&mut self, bytes: &[u8]) -> Vec<Frame> {
        let mut frames = Vec::new();
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&rest[..end]);
            self.end_line(&mut frames);
            rest = &rest[end + 1..];
        }
        self.line.extend_from_slice(rest);
        frames
    }

    fn finish(mut self) -> Option<Frame> {
        let mut frames = Vec::new();
        self.end_line(&mut frames);
        frames.pop()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<String> {
        let mut decoder = NdjsonDecoder::new();
        let mut frames: Vec<Frame> = chunks.iter().flat_map(|c| decoder.feed(c)).collect();
        frames.extend(decoder.finish());
        assert!(frames.iter().all(|f| f.event.is_none()));
        frames.into_iter().map(|f| f.data).collect()
    }

    const STREAM: &str = "{\"message\":{\"content\":\"Hé\"},\"done\":false}\r\n\n  \n\
        {\"message\":{\"content\":\" là\"},\"done\":false}\n{\"done\":true}";

    #[test]
    fn lines_blank_lines_crlf_and_a_last_line_without_its_end() {
        assert_eq!(
            decode(&[STREAM.as_bytes()]),
            [
                "{\"message\":{\"content\":\"Hé\"},\"done\":false}",
                "{\"message\":{\"content\":\" là\"},\"done\":false}",
                "{\"done\":true}",
            ]
        );
        assert_eq!(decode(&[b"\n\n \r\n"]), Vec::<String>::new());
        assert_eq!(decode(&[b"<html>502</html>"]), ["<html>502</html>"]);
    }

    proptest! {
        /// Cutting the stream anywhere — inside a line, a CRLF, a UTF-8 character — changes
        /// nothing.
        #[test]
        fn any_chunking_gives_the_same_lines(cuts in proptest::collection::vec(0usize..200, 0..12)) {
            let stream = STREAM.as_bytes();
            let whole = decode(&[stream]);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (stream.len() + 1)).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut start = 0;
            for cut in cuts {
                chunks.push(&stream[start..cut]);
                start = cut;
            }
            chunks.push(&stream[start..]);
            prop_assert_eq!(decode(&chunks), whole);
        }
    }
}
