//! What a moment becomes in an agent's memory: its text, as the agent would tell it, and how
//! much it matters.
//!
//! Texts are written here once, so that what reads them back (recall deciding which lines a
//! decision already shows, the scripted brain quoting what it was told) parses the same shape:
//! a line is `<speaker> said to me: "<line>"` or `I said to <listeners>: "<line>"`.
//!
//! Importance, without a model, is a deterministic heuristic ([`importance`]): a base per kind
//! (a planted fact matters more than small talk), raised by signs that a line carries
//! information worth keeping (where something is, numbers, names of things, warnings, promises),
//! lowered for a courtesy of a few words.

use crate::memory::{MAX_MEMORY_TEXT_CHARS, MemoryKind};

/// Characters of a quoted line kept in a memory's text (the rest of the text is the frame).
const QUOTE_CHARS: usize = MAX_MEMORY_TEXT_CHARS - 200;

/// `speaker` said `line` to the agent.
pub fn heard(speaker: &str, line: &str) -> String {
    format!("{speaker} said to me: {}", quote(line))
}

/// The agent said `line` to `listeners` (names, or empty: to whoever was near).
pub fn said(listeners: &[String], line: &str) -> String {
    if listeners.is_empty() {
        format!("I said: {}", quote(line))
    } else {
        format!("I said to {}: {}", listeners.join(", "), quote(line))
    }
}

/// The agent called `tool` and it answered `result` (cut to a readable length).
pub fn used(tool: &str, result: &str) -> String {
    format!("I used {tool}: {}", clip(result, 300))
}

/// The agent tried `what` (a tool, an action) and it did not work, for `why`.
pub fn failed(what: &str, why: &str) -> String {
    format!("I tried {what}, but it failed: {}", clip(why, 300))
}

/// The agent was given a task, by someone (`None`: the game).
pub fn given_task(task: &str, by: Option<&str>) -> String {
    match by {
        Some(by) => format!("{by} asked me to take on the task {}", quote(task)),
        None => format!("I was given the task {}", quote(task)),
    }
}

/// The agent finished a task.
pub fn finished_task(task: &str) -> String {
    format!("I finished the task {}", quote(task))
}

/// The agent asked `helper` to help with `task`.
pub fn asked_help(helper: &str, task: &str) -> String {
    format!("I asked {helper} to help me with the task {}", quote(task))
}

/// A walk the game carried out: it got to `to`, or it was blocked (and why).
pub fn walked(to: &str, blocked: Option<&str>) -> String {
    match blocked {
        None => format!("I walked to {to} and got there"),
        Some(why) => format!(
            "I tried to walk to {to}, but I was blocked: {}",
            clip(why, 300)
        ),
    }
}

/// Who a [`heard`] memory says spoke.
pub fn speaker_of(text: &str) -> Option<&str> {
    let (frame, _) = text.split_once(": \"")?;
    frame.strip_suffix(" said to me")
}

/// What a [`failed`] or blocked [`walked`] memory says went wrong: what the agent tried
/// (`walking` for a blocked walk) and why it did not work.
pub fn setback(text: &str) -> Option<(String, String)> {
    if let Some(rest) = text.strip_prefix("I tried to walk to ")
        && let Some((_, why)) = rest.split_once(", but I was blocked: ")
    {
        return Some(("walking".to_string(), why.to_string()));
    }
    let rest = text.strip_prefix("I tried ")?;
    let (what, why) = rest.split_once(", but it failed: ")?;
    Some((what.to_string(), why.to_string()))
}

/// Something happened in app `app_id` the agent plays: the app's event (`what`, its system
/// message), or an action of the human there.
pub fn in_app(app_id: &str, what: &str) -> String {
    format!("In {app_id}: {}", clip(what, 400))
}

/// The human's action `name` with `params` in an app, and how it turned out.
pub fn human_action(name: &str, params: &str, error: Option<&str>) -> String {
    match error {
        None => format!("the human did {name} {}", clip(params, 200)),
        Some(why) => format!(
            "the human tried {name} {}, but it failed: {}",
            clip(params, 200),
            clip(why, 200)
        ),
    }
}

/// A campaign turn the agent ran as its game master: what the player said, what it narrated,
/// and what its calls did (each effect in words).
pub fn campaign_turn(
    campaign_id: &str,
    player_said: &str,
    narrated: &str,
    effects: &[String],
) -> String {
    let mut text = format!(
        "In {campaign_id} the player said {} and I narrated {}",
        quote(&clip(player_said, 300)),
        quote(&clip(narrated, 600))
    );
    if !effects.is_empty() {
        text.push_str(&format!("; {}", clip(&effects.join("; "), 400)));
    }
    text
}

/// `text` cut to `max` characters, with an ellipsis when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The line a [`heard`] or [`said`] memory quotes, as it was said.
pub fn quoted_line(text: &str) -> Option<String> {
    let (frame, quoted) = text.split_once(": \"")?;
    if !(frame.ends_with(" said to me") || frame.starts_with("I said")) {
        return None;
    }
    serde_json::from_str(&format!("\"{quoted}")).ok()
}

/// `line` as a JSON string (quotes and newlines escaped), cut to [`QUOTE_CHARS`].
fn quote(line: &str) -> String {
    let line = line.trim();
    let kept = match line.char_indices().nth(QUOTE_CHARS) {
        Some((at, _)) => &line[..at],
        None => line,
    };
    serde_json::to_string(kept).unwrap_or_default()
}

/// How much a memory of `kind` with `text` matters, 1 to 10, without a model.
///
/// The base per kind: a planted fact 6, an insight 7, a relationship 6, a summary 5, a task 5,
/// an event 4, what
/// the agent did or perceived 3, a line it heard 3, a line it said 2. Then +2 when the text
/// says where something is or gives a number ("under the mat", "at noon", "3 coins"), +2 for
/// a warning, a promise, a secret or a loss ("danger", "promise", "secret", "lost", "stolen",
/// "died", …), +1 for a failure ("failed", "blocked", "refused"), −1 for a line of four words
/// or fewer.
pub fn importance(kind: MemoryKind, text: &str) -> u8 {
    let base: i32 = match kind {
        MemoryKind::Fact | MemoryKind::Relationship => 6,
        MemoryKind::Insight => 7,
        MemoryKind::Summary | MemoryKind::Task => 5,
        MemoryKind::Event => 4,
        MemoryKind::Did | MemoryKind::Observed | MemoryKind::Heard => 3,
        MemoryKind::Said => 2,
    };
    let line = quoted_line(text).unwrap_or_else(|| text.to_string());
    let words: Vec<String> = line
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    let mut score = base;
    if has(PLACES) || words.iter().any(|w| w.chars().any(|c| c.is_ascii_digit())) {
        score += 2;
    }
    if has(STAKES) {
        score += 2;
    }
    if has(FAILURES) {
        score += 1;
    }
    if words.len() <= 4 {
        score -= 1;
    }
    score.clamp(1, 10) as u8
}

/// Words that say where something is or when.
const PLACES: &[&str] = &[
    "under", "behind", "beneath", "inside", "beside", "above", "below", "near", "hidden", "buried",
    "left", "right", "north", "south", "east", "west", "noon", "midnight", "dawn", "dusk",
    "tomorrow", "tonight", "key", "keys", "map", "door", "gate", "cellar",
];

/// Words of warnings, promises, secrets and losses.
const STAKES: &[&str] = &[
    "danger",
    "dangerous",
    "beware",
    "careful",
    "warn",
    "warning",
    "promise",
    "promised",
    "secret",
    "never",
    "must",
    "lost",
    "stolen",
    "stole",
    "thief",
    "died",
    "dead",
    "kill",
    "attack",
    "attacked",
    "fire",
    "help",
    "love",
    "hate",
    "owe",
    "owes",
    "debt",
    "important",
];

/// Words of things that went wrong.
const FAILURES: &[&str] = &[
    "failed", "fail", "blocked", "refused", "cannot", "can't", "couldn't", "stuck",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_from_its_memory_whatever_it_holds() {
        for line in [
            "The key is under the mat.",
            "She said: \"no\"\nthen left",
            "é ✓",
        ] {
            assert_eq!(quoted_line(&heard("Ivy", line)).as_deref(), Some(line));
            assert_eq!(
                quoted_line(&said(&["Ivy".into(), "Tom".into()], line)).as_deref(),
                Some(line)
            );
            assert_eq!(quoted_line(&said(&[], line)).as_deref(), Some(line));
        }
        assert_eq!(
            heard("Ivy", "The key is under the mat."),
            "Ivy said to me: \"The key is under the mat.\""
        );
        assert_eq!(quoted_line("The well is dry: \"really\""), None);
        let long = "x".repeat(5_000);
        assert!(heard("Ivy", &long).chars().count() <= MAX_MEMORY_TEXT_CHARS);
    }

    #[test]
    fn information_matters_more_than_small_talk() {
        let told = importance(
            MemoryKind::Heard,
            &heard("Ivy", "The cellar key is under the mat."),
        );
        let chat = importance(
            MemoryKind::Heard,
            &heard("Ivy", "Lovely weather we are having today."),
        );
        let hello = importance(MemoryKind::Heard, &heard("Ivy", "Hello there!"));
        assert_eq!((told, chat, hello), (5, 3, 2));
        assert_eq!(
            importance(
                MemoryKind::Fact,
                "Beware: the bridge is broken, 3 planks gone."
            ),
            10
        );
        assert_eq!(importance(MemoryKind::Said, "I said: \"Hi.\""), 1);
        assert_eq!(
            importance(
                MemoryKind::Did,
                "I tried to walk to the well: blocked by a cart."
            ),
            4
        );
        for kind in MemoryKind::ALL {
            assert!((1..=10).contains(&importance(kind, "")));
        }
    }
}
