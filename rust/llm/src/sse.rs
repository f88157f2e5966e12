//! An incremental Server-Sent Events decoder (the HTML Living Standard's event stream format,
//! as both OpenAI and Anthropic stream): the [`Deframer`] of [`crate::framing::Framing::Sse`].
//!
//! Bytes go in as they arrive, cut anywhere — inside a line, inside a UTF-8 character —, and
//! whole events come out: an event ends at a blank line; `data:` lines are joined with `\n`;
//! `event:` names it; lines starting with `:` are comments (keep-alives); `id:` and `retry:`
//! are ignored (the providers do not resume streams). Lines end with `\n`, `\r\n` or `\r`. A
//! single space after the colon is not part of the value. `data: [DONE]` is ordinary data: the
//! provider modules give it its meaning.
//!
//! Each event is a [`Frame`]: its `event:` name, its `data:` lines joined with `\n`.

use crate::framing::{Deframer, Frame};

/// The decoder's state between chunks.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the line being read (kept as bytes: a chunk may end inside a character).
    line: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    event: Option<String>,
    data: Option<String>,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        SseDecoder::default()
    }

    fn end_line(&mut self, events: &mut Vec<Frame>) {
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if line.is_empty() {
            let event = self.event.take();
            if let Some(data) = self.data.take() {
                events.push(Frame { event, data });
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            _ => {}
        }
    }
}

impl Deframer for SseDecoder {
    /// Feeds the next bytes; returns the events they complete, in order.
    fn feed(&mut self, bytes: &[u8]) -> Vec<Frame> {
        let mut events = Vec::new();
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(&mut events),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut events);
                }
                _ => self.line.push(b),
            }
        }
        events
    }

    /// The event left open when the stream ends without its blank line, if it has data.
    fn finish(mut self) -> Option<Frame> {
        let mut events = Vec::new();
        if !self.line.is_empty() {
            self.end_line(&mut events);
        }
        self.end_line(&mut events);
        events.pop()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<Frame> {
        let mut decoder = SseDecoder::new();
        let mut events: Vec<Frame> = chunks.iter().flat_map(|c| decoder.feed(c)).collect();
        events.extend(decoder.finish());
        events
    }

    fn data(event: Option<&str>, data: &str) -> Frame {
        Frame {
            event: event.map(str::to_string),
            data: data.to_string(),
        }
    }

    const ANTHROPIC: &str = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n\
        event: ping\ndata: {\"type\": \"ping\"}\n\n\
        event: content_block_delta\ndata: {\"delta\":{\"text\":\"Hé\"}}\n\n";

    #[test]
    fn events_names_and_data() {
        assert_eq!(
            decode(&[ANTHROPIC.as_bytes()]),
            [
                data(Some("message_start"), "{\"type\":\"message_start\"}"),
                data(Some("ping"), "{\"type\": \"ping\"}"),
                data(Some("content_block_delta"), "{\"delta\":{\"text\":\"Hé\"}}"),
            ]
        );
    }

    #[test]
    fn comments_crlf_multiline_data_and_done() {
        let stream = b": keep-alive\r\n\r\ndata: line one\r\ndata:line two\r\nid: 7\r\nretry: 10\r\n\r\ndata: [DONE]\r\n\r\n";
        assert_eq!(
            decode(&[stream]),
            [data(None, "line one\nline two"), data(None, "[DONE]")]
        );
        // A lone CR ends lines too, and an event without a trailing blank line is kept.
        assert_eq!(
            decode(&[b"data: a\rdata: b\r\rdata: tail"]),
            [data(None, "a\nb"), data(None, "tail")]
        );
        // Events without data are dropped (only a name, only comments).
        assert_eq!(decode(&[b"event: ping\n\n:x\n\n"]), []);
    }

    proptest! {
        /// Cutting the stream anywhere — inside a line, a CRLF, a UTF-8 character — changes
        /// nothing.
        #[test]
        fn any_chunking_gives_the_same_events(cuts in proptest::collection::vec(0usize..200, 0..12)) {
            let stream = format!("{ANTHROPIC}data: ünï\r\ncodé\r\n\r\n: c\ndata: [DONE]\n\n").into_bytes();
            let whole = decode(&[&stream]);
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
