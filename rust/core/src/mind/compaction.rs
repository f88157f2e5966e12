//! Compaction: an agent's stream kept under [`MemorySettings::max_memories`] for a long game.
//!
//! Every [`CHECK_EVERY`] memories an agent forms, the runtime counts its memories; at the
//! cap, the oldest memories that happened to it are summed up, [`PER_SUMMARY`] to a summary
//! ([`MemoryKind::Summary`], citing their ids), and deleted in the same write — the
//! least important first: those of importance up to 4, then up to 6, then any
//! ([`IMPORTANCE_BARS`]). Insights, relationships and summaries are never summed up. It goes
//! down to a tenth below the cap (in whole summaries), so it does not run again at the next
//! check.
//!
//! A summary keeps what it sums up in its own words, within a memory's 2,000 characters: the
//! most important lines first, each cut to [`LINE_CHARS`], in the order they happened. Its
//! importance is the highest of them, its game time the last of them, and it is about someone
//! when all of them were about that one.
//!
//! [`MemorySettings::max_memories`]: super::MemorySettings::max_memories

use super::forming::clip;
use crate::memory::{
    MAX_MEMORY_SOURCES, MAX_MEMORY_TEXT_CHARS, MemoryKind, NewMemory, StoredMemory,
};

/// Memories an agent forms between two counts of its stream.
pub const CHECK_EVERY: u32 = 128;
/// Memories one summary sums up, at most.
pub const PER_SUMMARY: usize = MAX_MEMORY_SOURCES;
/// The importance bars, in the order memories are summed up.
pub const IMPORTANCE_BARS: [u8; 3] = [4, 6, 10];
/// Characters of one memory's text kept in a summary.
pub const LINE_CHARS: usize = 160;

/// How many memories a compaction of a stream of `count` under `cap` sums up (0: none):
/// once the stream has reached the cap (the ceiling every write keeps, see
/// [`crate::memory::Memory::remember_all`], stops it there), down to a tenth below it,
/// counting the summaries it adds.
pub fn excess(count: u64, cap: usize) -> usize {
    let cap = cap as u64;
    if cap == 0 || count < cap {
        return 0;
    }
    let target = cap - cap / 10;
    let over = count - target;
    // Each summary of PER_SUMMARY memories adds one back.
    let per = PER_SUMMARY as u64;
    usize::try_from(over + over.div_ceil(per - 1)).unwrap_or(usize::MAX)
}

/// The summary of `memories` (oldest first, at most [`PER_SUMMARY`]).
pub fn summary(memories: &[StoredMemory]) -> NewMemory {
    let (first, last) = match (memories.first(), memories.last()) {
        (Some(f), Some(l)) => (f.game_time, l.game_time),
        _ => (0.0, 0.0),
    };
    let head = match memories.len() {
        1 => format!("Earlier (game time {} s):", first.round()),
        n => format!(
            "Earlier ({n} memories, game time {} to {} s):",
            first.round(),
            last.round()
        ),
    };
    // The most important first, while they fit; then shown in the order they happened.
    let mut by_importance: Vec<(usize, &StoredMemory)> = memories.iter().enumerate().collect();
    by_importance.sort_by(|a, b| b.1.importance.cmp(&a.1.importance).then(a.0.cmp(&b.0)));
    let budget = MAX_MEMORY_TEXT_CHARS - head.chars().count() - 40;
    let mut kept: Vec<(usize, String)> = Vec::new();
    let mut used = 0;
    for (at, m) in by_importance {
        let line = clip(m.text.trim(), LINE_CHARS);
        let cost = line.chars().count() + 2;
        if used + cost > budget {
            continue;
        }
        used += cost;
        kept.push((at, line));
    }
    kept.sort_by_key(|(at, _)| *at);
    let mut text = head;
    for (_, line) in &kept {
        text.push(' ');
        text.push_str(line);
        if !line.ends_with(['.', '!', '?', '…', '"']) {
            text.push(';');
        }
    }
    let left = memories.len() - kept.len();
    if left > 0 {
        text.push_str(&format!(" … and {left} more."));
    }
    let about = memories
        .first()
        .and_then(|m| m.about.clone())
        .filter(|a| memories.iter().all(|m| m.about.as_deref() == Some(a)));
    NewMemory {
        importance: memories.iter().map(|m| m.importance).max().unwrap_or(1),
        about,
        sources: memories.iter().map(|m| m.id).collect(),
        game_time: last,
        ..NewMemory::new(MemoryKind::Summary, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(id: i64, importance: u8, text: &str, about: Option<&str>) -> StoredMemory {
        StoredMemory {
            id,
            agent_id: "agent_001".into(),
            kind: MemoryKind::Heard,
            text: text.into(),
            importance,
            about: about.map(str::to_string),
            sources: vec![],
            game_time: id as f64 * 10.0,
            created_at: String::new(),
            accessed_at: None,
            superseded_by: None,
        }
    }

    #[test]
    fn the_excess_goes_a_tenth_below_the_cap_and_counts_the_summaries() {
        assert_eq!(excess(100, 0), 0, "no cap");
        assert_eq!(excess(999, 1_000), 0);
        // At the cap (where the ceiling of every write holds it): down to 900 as well.
        assert_eq!(excess(1_000, 1_000), 100 + 2);
        // 1,001 over a cap of 1,000: down to 900, and the 2 summaries added come off too.
        let n = excess(1_001, 1_000);
        assert_eq!(n, 101 + 2);
        let summaries = n.div_ceil(PER_SUMMARY) as u64;
        assert!(1_001 - n as u64 + summaries <= 900, "{n}");
    }

    #[test]
    fn a_summary_keeps_the_most_important_lines_in_order_within_a_memory() {
        let memories = vec![
            memory(1, 2, "Ivy said to me: \"Nice weather.\"", Some("agent_002")),
            memory(
                2,
                8,
                "Ivy said to me: \"The key is under the mat.\"",
                Some("agent_002"),
            ),
            memory(3, 3, "Ivy said to me: \"See you.\"", Some("agent_002")),
        ];
        let s = summary(&memories);
        assert_eq!(s.kind, MemoryKind::Summary);
        assert_eq!(
            s.text,
            "Earlier (3 memories, game time 10 to 30 s): Ivy said to me: \"Nice weather.\" Ivy \
             said to me: \"The key is under the mat.\" Ivy said to me: \"See you.\""
        );
        assert_eq!(s.importance, 8);
        assert_eq!(s.sources, vec![1, 2, 3]);
        assert_eq!(s.about.as_deref(), Some("agent_002"));
        assert_eq!(s.game_time, 30.0);
        assert!(s.clone().checked().is_ok());

        // Too many to keep whole: the important ones stay, the rest are counted.
        let many: Vec<StoredMemory> = (1..=64)
            .map(|i| {
                let importance = if i == 40 { 9 } else { 2 };
                memory(i, importance, &format!("{i} {}", "blah ".repeat(60)), None)
            })
            .collect();
        let s = summary(&many);
        assert!(
            s.text.chars().count() <= MAX_MEMORY_TEXT_CHARS,
            "{}",
            s.text.len()
        );
        assert!(s.text.contains("40 blah"), "the most important is kept");
        assert!(s.text.ends_with("more."), "{}", s.text);
        assert_eq!(s.about, None);
        assert_eq!(s.sources.len(), 64);
        assert!(s.checked().is_ok());
    }
}
