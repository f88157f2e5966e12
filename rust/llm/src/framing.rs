//! How a streamed answer is cut into frames before a provider reads them: Server-Sent Events
//! ([`crate::sse`], as OpenAI and Anthropic stream) or newline-delimited JSON
//! ([`crate::ndjson`], as Ollama streams). Each [`crate::api::Api`] declares its [`Framing`];
//! the client reads the bytes with that framing's [`Deframer`] and hands each [`Frame`] to the
//! API's [`crate::api::StreamDecoder`].

/// One frame of a stream: an SSE event, or one line of NDJSON.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    /// The SSE `event:` name, if one was given (Anthropic names every event; OpenAI none; an
    /// NDJSON line has none).
    pub event: Option<String>,
    /// The SSE `data:` lines joined with `\n`, or the NDJSON line (without its line end).
    pub data: String,
}

/// How an API frames its streamed answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Server-Sent Events ([`crate::sse::SseDecoder`]).
    Sse,
    /// Newline-delimited JSON, one value per line ([`crate::ndjson::NdjsonDecoder`]).
    Ndjson,
}

impl Framing {
    /// What one frame is, for error messages (`an SSE `data:` line`).
    pub fn frame_name(self) -> &'static str {
        match self {
            Framing::Sse => "an SSE `data:` line",
            Framing::Ndjson => "a line that is not blank",
        }
    }
}

/// Cuts a stream's bytes into frames as they arrive, cut anywhere (inside a line, inside a
/// UTF-8 character).
///
/// A deframer holds at most the line being read (and, for SSE, the data of the event being
/// read); it does not bound them itself. The client caps the bytes of a whole stream
/// ([`crate::client::MAX_RESPONSE_BYTES`]), which bounds both.
pub trait Deframer: Default + Send {
    /// Feeds the next bytes; returns the frames they complete, in order.
    fn feed(&mut self, bytes: &[u8]) -> Vec<Frame>;
    /// The frame left open when the stream ends without its line end, if it has data.
    fn finish(self) -> Option<Frame>;
}
