//! The memories a decision recalled, as a section of its context (`memories`): lines of the
//! situation for the model brains ("You remember: …"), an answer from memory for the scripted
//! brain when it is asked about something it was told, a count for the journal.

use std::any::Any;

use serde_json::{Value, json};

use super::forming::quoted_line;
use super::recall::Recalled;
use crate::brain::{BrainContext, IncomingMessage, Section};
use crate::memory::{MemoryKind, search_terms, stem};

/// The memories recalled for one decision, best first.
#[derive(Clone, Debug, PartialEq)]
pub struct Recollection {
    /// What was recalled, best first.
    pub recalled: Vec<Recalled>,
    /// The game time of the decision, in seconds.
    pub now: f64,
}

impl Recollection {
    /// The memories shown to the brain (not those of lines it already shows), best first.
    pub fn shown(&self) -> impl Iterator<Item = &Recalled> {
        self.recalled.iter().filter(|r| !r.in_view)
    }
}

impl Section for Recollection {
    fn key(&self) -> &'static str {
        "memories"
    }

    fn to_json(&self) -> Value {
        Value::Array(
            self.shown()
                .map(|r| {
                    let mut entry = json!({
                        "id": r.memory.id,
                        "kind": r.memory.kind,
                        "text": r.memory.text,
                        "importance": r.memory.importance,
                        "age_seconds": (self.now - r.memory.game_time).max(0.0).round(),
                        "score": round3(r.score),
                    });
                    if let Some(newer) = r.memory.superseded_by {
                        entry["superseded_by"] = json!(newer);
                    }
                    entry
                })
                .collect(),
        )
    }

    fn situation_lines(&self, _context: &BrainContext) -> Option<String> {
        let lines: Vec<String> = self
            .shown()
            .map(|r| {
                let age = age(self.now - r.memory.game_time);
                match r.memory.superseded_by {
                    Some(_) => format!(
                        "- {} ({age}; no longer true: a newer memory replaced it)",
                        r.memory.text
                    ),
                    None => format!("- {} ({age})", r.memory.text),
                }
            })
            .collect();
        if lines.is_empty() {
            return None;
        }
        Some(format!(
            "You remember (most relevant first):\n{}",
            lines.join("\n")
        ))
    }

    /// A question about something the agent was told or knows is answered from the memory
    /// that matches it best (the most relevant; of those, the best scored): a line it heard,
    /// a fact, something it noticed, an event, an insight or a summary — not a question, not
    /// one replaced by a newer one — that holds most of the question's words besides the
    /// agent's own name ([`ANSWER_COVERAGE`]): "You told me: "…"", "Ivy told me: "…"", "I
    /// remember: …". "Is the bread ready?" is not answered by "I was given the task "bake
    /// bread"", nor a question by a line that itself quotes one (a quote of a quote).
    fn scripted_answer(&self, context: &BrainContext, message: &IncomingMessage) -> Option<String> {
        if !asks_for_information(&message.content) {
            return None;
        }
        let own_name = stem(&context.name.to_lowercase());
        let asked: Vec<String> = search_terms(&message.content)
            .iter()
            .map(|t| stem(t))
            .filter(|t| *t != own_name)
            .collect();
        if asked.is_empty() {
            return None;
        }
        let best = self
            .recalled
            .iter()
            .filter(|r| {
                let m = &r.memory;
                r.relevance > 0.0
                    && m.superseded_by.is_none()
                    && ANSWERING_KINDS.contains(&m.kind)
                    && !quoted_line(&m.text)
                        .is_some_and(|line| is_question(&line) || quotes_something(&line))
                    && coverage(&asked, &m.text) >= ANSWER_COVERAGE
            })
            .max_by(|a, b| {
                a.relevance
                    .total_cmp(&b.relevance)
                    .then(a.score.total_cmp(&b.score))
            })?;
        let m = &best.memory;
        match (m.kind, quoted_line(&m.text)) {
            (MemoryKind::Heard, Some(line)) if m.about.as_deref() == Some(&message.sender) => {
                Some(format!("You told me: {}", quoted(&line)))
            }
            (MemoryKind::Heard, Some(line)) => {
                let speaker = m.text.split(" said to me: ").next().unwrap_or("someone");
                Some(format!("{speaker} told me: {}", quoted(&line)))
            }
            _ => Some(format!("I remember: {}", m.text)),
        }
    }

    fn summary(&self) -> Option<String> {
        let shown = self.shown().count();
        (shown > 0).then(|| format!("{shown} memory(ies) recalled"))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The kinds of memory a question may be answered from: what the agent was told or knows,
/// not what it said or did itself.
const ANSWERING_KINDS: [MemoryKind; 6] = [
    MemoryKind::Heard,
    MemoryKind::Fact,
    MemoryKind::Observed,
    MemoryKind::Event,
    MemoryKind::Insight,
    MemoryKind::Summary,
];

/// The share of a question's words a memory must hold to answer it.
pub const ANSWER_COVERAGE: f64 = 0.6;

/// The share of `asked` (stemmed words) found among the words of `text`.
fn coverage(asked: &[String], text: &str) -> f64 {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| stem(&w.to_lowercase()))
        .collect();
    let found = asked.iter().filter(|a| words.contains(a)).count();
    found as f64 / asked.len() as f64
}

/// Whether `line` asks for something the agent may know — where, what, who, when, which, how,
/// why, or whether it knows or remembers — rather than about a plan ("Will there be bread?")
/// or a yes-or-no matter the agent decides for itself.
fn asks_for_information(line: &str) -> bool {
    const ASKING: &[&str] = &[
        "where", "what", "who", "whom", "whose", "when", "which", "how", "why", "know", "remember",
    ];
    is_question(line)
        && line
            .split(|c: char| !c.is_alphabetic())
            .any(|w| ASKING.contains(&w.to_lowercase().as_str()))
}

/// Whether `line` asks something: a question mark, or a first word that opens a question.
fn is_question(line: &str) -> bool {
    const OPENERS: &[&str] = &[
        "who", "what", "where", "when", "why", "how", "which", "do", "does", "did", "is", "are",
        "was", "were", "can", "could", "have", "has", "remember", "tell",
    ];
    line.contains('?')
        || line
            .split_whitespace()
            .next()
            .map(|w| w.trim_matches(|c: char| !c.is_alphabetic()).to_lowercase())
            .is_some_and(|w| OPENERS.contains(&w.as_str()))
}

/// Whether `line` holds a quotation (double quotation marks of any kind): answering with it
/// would quote a quote.
fn quotes_something(line: &str) -> bool {
    line.contains(['"', '\u{201c}', '\u{201d}', '\u{201e}', '\u{ab}', '\u{bb}'])
}

/// `line` in typographic quotes.
fn quoted(line: &str) -> String {
    format!("\u{201c}{}\u{201d}", line.trim())
}

/// Game seconds as a short age: "just now", "5 min ago", "3 h ago", "2 days ago".
fn age(seconds: f64) -> String {
    let s = seconds.max(0.0);
    if s < 60.0 {
        "just now".into()
    } else if s < 3_600.0 {
        format!("{} min ago", (s / 60.0).floor())
    } else if s < 86_400.0 {
        format!("{} h ago", (s / 3_600.0).floor())
    } else {
        format!("{} days ago", (s / 86_400.0).floor())
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brain::IncomingKind;
    use crate::memory::StoredMemory;
    use crate::mind::forming::heard;

    fn recalled(
        id: i64,
        kind: MemoryKind,
        text: &str,
        about: Option<&str>,
        relevance: f64,
    ) -> Recalled {
        Recalled {
            memory: StoredMemory {
                id,
                agent_id: "agent_001".into(),
                kind,
                text: text.into(),
                importance: 5,
                about: about.map(str::to_string),
                sources: Vec::new(),
                game_time: 0.0,
                created_at: String::new(),
                accessed_at: None,
                superseded_by: None,
            },
            score: 1.0,
            recency: 1.0,
            importance: 0.5,
            relevance,
            semantic: None,
            in_view: false,
        }
    }

    fn asked(sender: &str, content: &str) -> IncomingMessage {
        IncomingMessage {
            sender: sender.into(),
            sender_name: sender.into(),
            content: content.into(),
            kind: IncomingKind::Speech,
            dialog_type: "player".into(),
        }
    }

    #[test]
    fn a_question_is_answered_from_the_best_matching_memory() {
        let context = BrainContext::detached("agent_001", "Mira");
        let told = recalled(
            2,
            MemoryKind::Heard,
            &heard("player_0", "The cellar key is under the mat."),
            Some("player_0"),
            1.0,
        );
        let asked_before = recalled(
            1,
            MemoryKind::Heard,
            &heard("player_0", "Where is the cellar key?"),
            Some("player_0"),
            1.0,
        );
        let memories = Recollection {
            recalled: vec![asked_before, told.clone()],
            now: 90.0,
        };
        let answer = |m: &Recollection, from: &str, line: &str| {
            m.scripted_answer(&context, &asked(from, line))
        };
        assert_eq!(
            answer(&memories, "player_0", "Where is the cellar key?").as_deref(),
            Some("You told me: \u{201c}The cellar key is under the mat.\u{201d}")
        );
        assert_eq!(
            answer(&memories, "agent_002", "do you know where the key is").as_deref(),
            Some("player_0 told me: \u{201c}The cellar key is under the mat.\u{201d}")
        );
        // Not a question, or not one asking for something it may know: answered as usual.
        assert_eq!(answer(&memories, "player_0", "The key is lost."), None);
        assert_eq!(answer(&memories, "player_0", "Will the key be lost?"), None);
        // A memory that shares a word is not an answer: it must hold most of the question.
        let task = recalled(
            6,
            MemoryKind::Task,
            "I was given the task \"bake bread for the festival\"",
            None,
            1.0,
        );
        let chat = recalled(
            7,
            MemoryKind::Heard,
            &heard("Ivy", "Bread again today."),
            None,
            1.0,
        );
        let memories = Recollection {
            recalled: vec![task, chat],
            now: 0.0,
        };
        assert_eq!(
            answer(
                &memories,
                "player_0",
                "Good morning, Mira! Is the bread ready?"
            ),
            None
        );
        assert_eq!(
            answer(&memories, "player_0", "Mira, what about bread today?").as_deref(),
            Some("Ivy told me: \u{201c}Bread again today.\u{201d}")
        );
        // A fact is told as remembered; a replaced one, or one that does not match, is not.
        let fact = recalled(3, MemoryKind::Fact, "The well is dry.", None, 0.7);
        let mut replaced = recalled(4, MemoryKind::Fact, "The well is full.", None, 1.0);
        replaced.memory.superseded_by = Some(3);
        let unrelated = recalled(5, MemoryKind::Fact, "Bread at dawn.", None, 0.0);
        let memories = Recollection {
            recalled: vec![replaced, unrelated, fact],
            now: 0.0,
        };
        assert_eq!(
            answer(&memories, "player_0", "Do you know if the well is dry?").as_deref(),
            Some("I remember: The well is dry.")
        );
    }

    #[test]
    fn the_situation_lists_what_is_shown_with_its_age() {
        let context = BrainContext::detached("agent_001", "Mira");
        let mut old = recalled(1, MemoryKind::Fact, "The key is under the mat.", None, 1.0);
        old.memory.superseded_by = Some(2);
        let mut seen = recalled(3, MemoryKind::Heard, "x said to me: \"hi\"", None, 1.0);
        seen.in_view = true;
        let memories = Recollection {
            recalled: vec![
                recalled(
                    2,
                    MemoryKind::Fact,
                    "Ivy moved the key to the shelf.",
                    None,
                    1.0,
                ),
                old,
                seen,
            ],
            now: 7_200.0,
        };
        assert_eq!(
            memories.situation_lines(&context).unwrap(),
            "You remember (most relevant first):\n\
             - Ivy moved the key to the shelf. (2 h ago)\n\
             - The key is under the mat. (2 h ago; no longer true: a newer memory replaced it)"
        );
        assert_eq!(memories.to_json().as_array().unwrap().len(), 2);
        assert_eq!(
            memories.summary().as_deref(),
            Some("2 memory(ies) recalled")
        );
        let empty = Recollection {
            recalled: Vec::new(),
            now: 0.0,
        };
        assert_eq!(empty.situation_lines(&context), None);
        assert_eq!(empty.summary(), None);
    }
}
