//! An app session cut to fit a reply (`get_app_session`): the newest actions, events and chat
//! lines that fit a byte budget, and what was left out.
//!
//! [`AppSession::fit`] keeps the session whole when it fits. Otherwise it keeps the session's
//! other fields, then shares the room left among its three logs newest first, a row of each in
//! turn: a log stops at its first row that no longer fits, so what is kept of each log is its
//! newest rows, in time order. When the other fields alone do not fit, `state` is left out
//! (`null`) too — the game that registered the app holds it. [`LeftOut`] counts what is missing.

use serde::Serialize;
use serde_json::Value;

use super::AppSession;

/// What [`AppSession::fit`] left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// Older actions left out of `history`.
    pub history: usize,
    /// Older events left out of `events`.
    pub events: usize,
    /// Older lines left out of `chat`.
    pub chat: usize,
    /// True when `state` was left out (sent as `null`).
    pub state: bool,
}

/// The size of `value` as compact JSON.
fn json_bytes<T: Serialize + ?Sized>(value: &T) -> usize {
    serde_json::to_vec(value).map_or(0, |v| v.len())
}

/// The sizes of `rows` (a comma each), newest first.
fn newest_first<T: Serialize>(rows: &[T]) -> Vec<usize> {
    rows.iter().rev().map(|r| json_bytes(r) + 1).collect()
}

impl AppSession {
    /// Cuts the session to at most `budget` bytes of JSON (see the module docs) and says what
    /// was left out.
    pub fn fit(&mut self, budget: usize) -> LeftOut {
        let mut left = LeftOut::default();
        if json_bytes(self) <= budget {
            return left;
        }
        let history = std::mem::take(&mut self.history);
        let events = std::mem::take(&mut self.events);
        let chat = std::mem::take(&mut self.chat);
        let mut used = json_bytes(self);
        if used > budget {
            used -= json_bytes(&self.state);
            self.state = Value::Null;
            used += 4;
            left.state = true;
        }
        let sizes = [
            newest_first(&history),
            newest_first(&events),
            newest_first(&chat),
        ];
        let mut kept = [0usize; 3];
        let mut open = [true; 3];
        while open.iter().any(|o| *o) {
            for (log, size) in sizes.iter().enumerate() {
                if !open[log] {
                    continue;
                }
                match size.get(kept[log]) {
                    Some(&bytes) if used + bytes <= budget => {
                        used += bytes;
                        kept[log] += 1;
                    }
                    _ => open[log] = false,
                }
            }
        }
        left.history = history.len() - kept[0];
        left.events = events.len() - kept[1];
        left.chat = chat.len() - kept[2];
        self.history = history.into_iter().skip(left.history).collect();
        self.events = events.into_iter().skip(left.events).collect();
        self.chat = chat.into_iter().skip(left.chat).collect();
        left
    }
}
