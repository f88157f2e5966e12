//! Paginated list replies: cursors and the size of a page.
//!
//! `list_agents`, `list_stored_agents`, `get_tasks` (oldest first), `get_conversation` and
//! `get_state_history` (the newest first, each page in time order) take `limit` (at most
//! [`MAX_PAGE`](crate::limits::MAX_PAGE) rows) and `cursor`, and answer with `next_cursor`:
//! pass it as `cursor` for the next page; `null` means there is none. A page also stops before
//! it would exceed [`MAX_PAGE_BYTES`] of JSON (at least one row), so no reply outgrows what a
//! client's WebSocket buffer takes (Godot's `WebSocketPeer` reads 64 KiB by default).
//!
//! A cursor is opaque: a letter naming the list and the key of the last row sent (`t42`,
//! `c1031`, `ragent_007`). One from another list, or made up, is refused with
//! `invalid_request`.

use serde::Serialize;

pub use crate::limits::MAX_PAGE_BYTES;

/// Which list a cursor belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum List {
    /// `list_agents` (keyed by agent id).
    RunningAgents,
    /// `list_stored_agents` (keyed by agent number).
    StoredAgents,
    /// `get_tasks` (keyed by task id).
    Tasks,
    /// `get_conversation` (keyed by line id).
    Conversation,
    /// `get_state_history` (keyed by transition id).
    StateHistory,
    /// `get_agent_trace` (keyed by call id).
    Trace,
    /// `list_memories` (keyed by memory id).
    Memories,
}

impl List {
    fn letter(self) -> char {
        match self {
            List::RunningAgents => 'r',
            List::StoredAgents => 's',
            List::Tasks => 't',
            List::Conversation => 'c',
            List::StateHistory => 'h',
            List::Trace => 'b',
            List::Memories => 'm',
        }
    }

    /// The cursor for a page that ends at `key`.
    pub fn cursor(self, key: impl std::fmt::Display) -> String {
        format!("{}{key}", self.letter())
    }

    /// The key of a cursor this list could have given out: after the list's letter, an id of
    /// at most [`MAX_AGENT_ID_CHARS`](crate::limits::MAX_AGENT_ID_CHARS) characters.
    pub fn key(self, cursor: &str) -> Result<String, String> {
        match cursor.strip_prefix(self.letter()) {
            Some(key)
                if !key.is_empty() && key.chars().count() <= crate::limits::MAX_AGENT_ID_CHARS =>
            {
                Ok(key.to_owned())
            }
            _ => Err(not_a_cursor(cursor)),
        }
    }

    /// The key of an optional cursor (`None`: the first page).
    pub fn key_of(self, cursor: Option<&str>) -> Result<Option<String>, String> {
        cursor.map(|c| self.key(c)).transpose()
    }

    /// The numeric key of a cursor this list could have given out: rows are numbered from 1, so
    /// a key is a positive number written as the list writes it (`c0`, `c-5`, `c007`, `c+1`
    /// are refused).
    pub fn number(self, cursor: &str) -> Result<i64, String> {
        let key = self.key(cursor)?;
        match key.parse::<i64>() {
            Ok(n) if n > 0 && n.to_string() == key => Ok(n),
            _ => Err(not_a_cursor(cursor)),
        }
    }
}

/// The refusal of a cursor no page gave out.
fn not_a_cursor(cursor: &str) -> String {
    format!(
        "cursor '{}' is not a cursor of this list: pass the next_cursor of the previous page",
        cursor.chars().take(80).collect::<String>()
    )
}

/// The size of a row as compact JSON.
fn size<T: Serialize>(row: &T) -> usize {
    serde_json::to_vec(row).map_or(0, |v| v.len())
}

/// Keeps the first rows that fit in [`MAX_PAGE_BYTES`] (at least one); true when some were cut.
pub fn fit_from_start<T: Serialize>(rows: &mut Vec<T>) -> bool {
    let mut total = 0;
    let keep = rows
        .iter()
        .position(|r| {
            total += size(r) + 1;
            total > MAX_PAGE_BYTES
        })
        .map_or(rows.len(), |i| i.max(1));
    let cut = keep < rows.len();
    rows.truncate(keep);
    cut
}

/// Keeps the last rows that fit in [`MAX_PAGE_BYTES`] (at least one); true when some were cut.
pub fn fit_from_end<T: Serialize>(rows: &mut Vec<T>) -> bool {
    rows.reverse();
    let cut = fit_from_start(rows);
    rows.reverse();
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_other_lists() {
        let c = List::Tasks.cursor(42);
        assert_eq!(List::Tasks.number(&c), Ok(42));
        assert!(List::Conversation.number(&c).is_err());
        assert!(List::Tasks.number("t").is_err());
        assert!(List::Tasks.number("tx").is_err());
        for made_up in ["t0", "t-5", "t007", "t+1", "t 1", "t99999999999999999999"] {
            assert!(List::Tasks.number(made_up).is_err(), "{made_up}");
        }
        assert!(
            List::RunningAgents
                .key(&format!("r{}", "a".repeat(65)))
                .is_err()
        );
        assert_eq!(
            List::RunningAgents.key(&List::RunningAgents.cursor("agent_007")),
            Ok("agent_007".into())
        );
    }

    #[test]
    fn pages_stop_at_the_byte_budget_keeping_at_least_one_row() {
        let row = "x".repeat(10_000);
        let mut rows = vec![row.clone(); 10];
        assert!(fit_from_start(&mut rows));
        assert_eq!(rows.len(), 6);
        let mut rows: Vec<String> = (0..10).map(|i| format!("{i}{row}")).collect();
        assert!(fit_from_end(&mut rows));
        assert_eq!(rows.len(), 6);
        assert!(rows[5].starts_with('9'), "the newest rows are kept");
        let mut huge = vec!["y".repeat(MAX_PAGE_BYTES * 2), "z".into()];
        assert!(fit_from_start(&mut huge));
        assert_eq!(huge.len(), 1);
        let mut small = vec!["a", "b"];
        assert!(!fit_from_start(&mut small));
        assert_eq!(small.len(), 2);
    }
}
