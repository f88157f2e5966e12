//! Speech out of a decision's JSON while it streams: the characters of `assistant_text`, as
//! `agent_speech_delta`.

/// Reads `assistant_text` out of a decision's JSON as it streams: the string's characters as
/// they arrive, escapes decoded, nothing before or after it.
#[derive(Default)]
pub(super) struct SpeechStream {
    /// The JSON so far.
    seen: String,
    /// Bytes of `seen` already read.
    read: usize,
    state: Speech,
}

#[derive(Default, PartialEq)]
enum Speech {
    /// Looking for `"assistant_text":"`.
    #[default]
    Before,
    /// Inside the string.
    Inside,
    /// Inside, just after a backslash.
    Escape,
    /// Done.
    After,
}

impl SpeechStream {
    const KEY: &'static str = "\"assistant_text\":\"";

    /// Takes more of the answer; returns the speech it adds.
    pub(super) fn feed(&mut self, text: &str) -> Option<String> {
        self.seen.push_str(text);
        let mut out = String::new();
        if self.state == Speech::Before {
            let start = self.seen.find(Self::KEY)?;
            self.read = start + Self::KEY.len();
            self.state = Speech::Inside;
        }
        let rest = &self.seen[self.read..];
        let mut consumed = 0;
        let mut chars = rest.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match self.state {
                Speech::Inside => match c {
                    '\\' => self.state = Speech::Escape,
                    '"' => {
                        self.state = Speech::After;
                        consumed = i + 1;
                        break;
                    }
                    c => out.push(c),
                },
                Speech::Escape => {
                    if c == 'u' {
                        // \uXXXX: wait until all four digits arrived.
                        let hex = rest.get(i + 1..i + 5);
                        match hex.and_then(|h| u32::from_str_radix(h, 16).ok()) {
                            Some(n) => {
                                out.push(char::from_u32(n).unwrap_or('\u{FFFD}'));
                                for _ in 0..4 {
                                    chars.next();
                                }
                                self.state = Speech::Inside;
                                consumed = i + 5;
                                continue;
                            }
                            None => {
                                // Not all here yet: read the backslash again next time.
                                self.state = Speech::Inside;
                                consumed = i - 1;
                                self.read += consumed;
                                return (!out.is_empty()).then_some(out);
                            }
                        }
                    } else {
                        out.push(match c {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            'b' => '\u{8}',
                            'f' => '\u{c}',
                            other => other,
                        });
                    }
                    self.state = Speech::Inside;
                }
                Speech::Before | Speech::After => break,
            }
            consumed = i + c.len_utf8();
        }
        self.read += consumed;
        (!out.is_empty()).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speech_is_read_out_of_the_streamed_json() {
        let mut s = SpeechStream::default();
        let mut said = String::new();
        for piece in [
            "{\"assis",
            "tant_text\":\"Hel",
            "lo, \\\"fri",
            "end\\\"\\n",
            "\\u00e9",
            "!\",\"dia",
            "log_type\":\"reply\"}",
        ] {
            if let Some(delta) = s.feed(piece) {
                said.push_str(&delta);
            }
        }
        assert_eq!(said, "Hello, \"friend\"\né!");
        // A \u escape split between pieces waits for its digits.
        let mut s = SpeechStream::default();
        let mut said = String::new();
        for piece in ["{\"assistant_text\":\"a\\u00", "e9b\"}"] {
            if let Some(delta) = s.feed(piece) {
                said.push_str(&delta);
            }
        }
        assert_eq!(said, "aéb");
    }
}
