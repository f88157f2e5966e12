//! What client input may add to a model's prompt: a token budget for each part of a decision's
//! context a client can grow (what the agent notices, the lines it answers, its recent
//! conversation, its app's state and log) and for what a reflection or a rating reads. However
//! many observations, lines or memories a client sends, and however long each is, a prompt
//! stays within these budgets (`docs/brains.md`, "What a prompt holds", has the table).
//!
//! Tokens are counted as recall counts them ([`crate::mind::recall::tokens_of`]): a quarter of
//! the characters, rounded up. Where a part keeps a list, the newest entries are kept, a text
//! longer than the whole budget is cut to it (marked [`crate::limits::CUT_MARK`]), and a line
//! says how many earlier entries were left out. What is left out of a prompt stays in the
//! agent's memory, where recall may bring it back.
//!
//! The memories recalled for a decision have their budget in the agent's settings
//! (`memory.recall_budget_tokens`, at most [`crate::mind::MAX_RECALL_BUDGET_TOKENS`]).

use crate::limits::cut_copy;

/// What the agent notices (`observe`): about 4,000 characters.
pub const OBSERVATIONS_TOKENS: usize = 1_000;
/// The lines a decision answers: about 8,000 characters.
pub const INCOMING_TOKENS: usize = 2_000;
/// The recent conversation (its last lines, as the decision shows them): about 4,000
/// characters.
pub const RECENT_TOKENS: usize = 1_000;
/// An app's state, as compact JSON.
pub const APP_STATE_TOKENS: usize = 2_000;
/// An app's last actions and events, together.
pub const APP_LOG_TOKENS: usize = 1_000;
/// One action or event line of an app's log, in characters.
pub const APP_LOG_LINE_CHARS: usize = 400;
/// The memories a reflection reads (the most important first, then the newest).
pub const REFLECTION_TOKENS: usize = 3_000;
/// One memory as a reflection reads it, in characters.
pub const REFLECTION_MEMORY_CHARS: usize = 500;
/// One memory as a rating reads it, in characters.
pub const RATING_MEMORY_CHARS: usize = 500;

/// The tokens `text` costs in a prompt: a quarter of its characters, rounded up.
pub fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// `text` cut to at most `budget` tokens.
pub fn cut_to(text: &str, budget: usize) -> String {
    cut_copy(text, budget.saturating_mul(4))
}

/// The newest of `items` (oldest first) that fit in `budget` tokens together, each as
/// `render` writes it, oldest first; and how many earlier ones were left out. The newest is
/// cut to the budget when it alone is over it, so there is always one when there are any.
pub fn newest_within<T>(
    items: &[T],
    budget: usize,
    render: impl Fn(&T) -> String,
) -> (Vec<String>, usize) {
    let mut kept: Vec<String> = Vec::new();
    let mut spent = 0;
    for item in items.iter().rev() {
        let line = render(item);
        let cost = tokens(&line);
        if spent + cost > budget {
            if kept.is_empty() {
                kept.push(cut_to(&line, budget));
            }
            break;
        }
        spent += cost;
        kept.push(line);
    }
    let left_out = items.len() - kept.len();
    kept.reverse();
    (kept, left_out)
}

/// The line that says `n` earlier `what` (a plural: "observations") were left out, or `None`.
pub fn left_out(n: usize, what: &str) -> Option<String> {
    (n > 0).then(|| format!("(… and {n} earlier {what}, not shown)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_are_kept_within_the_budget_and_the_rest_counted() {
        let items: Vec<String> = (0..40)
            .map(|i| format!("{i:02}{}", "x".repeat(38)))
            .collect();
        // 10 tokens each: the newest 5 fit in 50.
        let (kept, out) = newest_within(&items, 50, |s| s.clone());
        assert_eq!(out, 35);
        assert_eq!(kept.len(), 5);
        assert!(kept[0].starts_with("35") && kept[4].starts_with("39"));
        assert_eq!(
            left_out(out, "observations").as_deref(),
            Some("(… and 35 earlier observations, not shown)")
        );
        assert_eq!(left_out(0, "observations"), None);
        // One longer than the whole budget is cut to it.
        let long = vec!["y".repeat(4_000)];
        let (kept, out) = newest_within(&long, 100, |s| s.clone());
        assert_eq!(out, 0);
        assert_eq!(kept[0].chars().count(), 400);
        assert!(kept[0].ends_with(crate::limits::CUT_MARK));
        assert_eq!(newest_within::<String>(&[], 10, |s| s.clone()), (vec![], 0));
    }
}
