//! Questions about the agent itself, answered from its persona: its name, its role, and its
//! role prompt read in the first person ("You farm wheat outside town." → "I farm wheat outside
//! town.").
//!
//! A question is about the agent when it says `you`, `your` or `yourself` and asks
//!
//! - its **name** (`name`, or "who are you"): "My name is Bram; I'm the smith here.";
//! - its **job** (`job`, `work`, `trade`, `role`, `profession`, or "what do you do"): "My job?
//!   I'm the guard here. I guard the town square…" — the role, then the prompt's first sentence;
//! - anything its **prompt** speaks of: the prompt's sentence sharing the most words (stemmed,
//!   common words aside) with the question ("What do you grow on your farm?" → "I farm wheat
//!   outside town and sell it to the baker."). A question about one of its open tasks is left
//!   to the task's answer (how far it got), and one the prompt does not speak of to the others.

use super::lines;
use crate::brain::BrainContext;
use crate::eval::lines::words;
use crate::memory::{is_stopword, stem};

/// Words that ask for the agent's job.
const JOB_WORDS: [&str; 5] = ["job", "work", "trade", "role", "profession"];

/// The answer to `question` when it asks about the agent itself; `None` otherwise.
pub(super) fn answer(ctx: &BrainContext, question: &str) -> Option<String> {
    if !lines::is_question(question) {
        return None;
    }
    let said = words(question);
    let has = |w: &str| said.iter().any(|s| s == w);
    if !(has("you") || has("your") || has("yourself")) {
        return None;
    }
    let name = ctx.name.trim();
    let role = ctx.role.trim();
    let sentences = sentences(&ctx.prompt);
    if has("name") || (has("who") && has("are")) {
        if name.is_empty() {
            return None;
        }
        return Some(if role.is_empty() {
            format!("My name is {name}.")
        } else {
            format!("My name is {name}; I'm the {role} here.")
        });
    }
    let job = JOB_WORDS.iter().find(|w| has(w));
    let what_do_you_do = has("what") && said.iter().filter(|w| *w == "do").count() >= 2;
    if (job.is_some() || what_do_you_do) && !role.is_empty() {
        let head = match job {
            Some(word) => format!("My {word}? I'm the {role} here."),
            None => format!("I'm the {role} here."),
        };
        return Some(match sentences.first() {
            Some(first) => format!("{head} {}", first_person(first)),
            None => head,
        });
    }
    let asked: Vec<String> = said
        .iter()
        .filter(|w| !is_stopword(w) && !is_pronoun(w))
        .map(|w| stem(w))
        .collect();
    if asked.is_empty() {
        return None;
    }
    // A question about its own task is answered with how the task goes.
    let tasks = ctx.current_task.iter().chain(&ctx.other_tasks);
    if tasks
        .flat_map(|t| words(&t.task_name))
        .any(|w| asked.contains(&stem(&w)))
    {
        return None;
    }
    let shared = |sentence: &str| {
        words(sentence)
            .iter()
            .filter(|w| asked.contains(&stem(w)))
            .count()
    };
    let best = sentences
        .iter()
        .map(|s| (shared(s), s))
        .filter(|(n, _)| *n > 0)
        // The first of the best: `max_by_key` keeps the last of equals.
        .fold(None::<(usize, &String)>, |best, (n, s)| match best {
            Some((m, _)) if m >= n => best,
            _ => Some((n, s)),
        })?;
    Some(first_person(best.1))
}

/// `you` and its forms: the question's subject, not what it is about.
fn is_pronoun(word: &str) -> bool {
    matches!(word, "you" | "your" | "yours" | "yourself")
}

/// The sentences of `text`, each with its closing mark.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if matches!(c, '.' | '!' | '?') {
            let s = current.trim();
            if !s.is_empty() {
                out.push(s.to_string());
            }
            current.clear();
        }
    }
    let rest = current.trim();
    if !rest.is_empty() {
        out.push(format!("{rest}."));
    }
    out
}

/// `sentence`, said to the agent, as the agent says it of itself: `you are` → `I am`,
/// `you're` → `I'm`, `your` → `my`, `yours` → `mine`, `yourself` → `myself`, and `you` → `I`
/// at the start of a sentence or a clause (after `and`, `but`, `or`, `then`, a comma), `me`
/// elsewhere.
pub(super) fn first_person(sentence: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut tokens = sentence.split_whitespace().peekable();
    let mut clause_start = true;
    while let Some(token) = tokens.next() {
        let (core, tail) = split_tail(token);
        let lower = core.to_lowercase();
        let capital = core.chars().next().is_some_and(char::is_uppercase);
        let case = |w: &str| -> String {
            if capital {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect())
                    .unwrap_or_default()
            } else {
                w.to_string()
            }
        };
        let word = match lower.as_str() {
            "you"
                if tail.is_empty()
                    && tokens
                        .peek()
                        .is_some_and(|n| split_tail(n).0.eq_ignore_ascii_case("are")) =>
            {
                // "you are" → "I am": the verb is taken here.
                let (_, verb_tail) = split_tail(tokens.next().unwrap_or_default());
                out.push(format!("I am{verb_tail}"));
                clause_start = !verb_tail.is_empty();
                continue;
            }
            "you" if clause_start => "I".to_string(),
            "you" => case("me"),
            "you're" | "you’re" => "I'm".to_string(),
            "your" => case("my"),
            "yours" => case("mine"),
            "yourself" => case("myself"),
            _ => core.to_string(),
        };
        out.push(format!("{word}{tail}"));
        clause_start = !tail.is_empty() || matches!(lower.as_str(), "and" | "but" | "or" | "then");
    }
    out.join(" ")
}

/// A token split into its word and the punctuation after it (`"bakery."` → `("bakery", ".")`).
fn split_tail(token: &str) -> (&str, &str) {
    let end = token
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_alphanumeric() || *c == '\'' || *c == '’')
        .map_or(0, |(i, c)| i + c.len_utf8());
    token.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brain::BrainContext;

    fn agent(name: &str, role: &str, prompt: &str) -> BrainContext {
        let mut ctx = BrainContext::detached("agent_001", name);
        ctx.role = role.into();
        ctx.prompt = prompt.into();
        ctx
    }

    #[test]
    fn the_prompt_reads_in_the_first_person() {
        assert_eq!(
            first_person("You farm wheat outside town and sell it to the baker."),
            "I farm wheat outside town and sell it to the baker."
        );
        assert_eq!(
            first_person("You are the blacksmith. Gruff, but helpful."),
            "I am the blacksmith. Gruff, but helpful."
        );
        assert_eq!(
            first_person("People trust you, and you keep your word."),
            "People trust me, and I keep my word."
        );
        assert_eq!(
            first_person("You're proud of yourself."),
            "I'm proud of myself."
        );
    }

    #[test]
    fn name_job_and_what_the_prompt_says_are_answered_from_the_persona() {
        let smith = agent(
            "Bram",
            "smith",
            "You are the blacksmith. Gruff, but helpful.",
        );
        assert_eq!(
            answer(&smith, "Hello there, what is your name?").as_deref(),
            Some("My name is Bram; I'm the smith here.")
        );
        let guard = agent(
            "Tess",
            "guard",
            "You guard the town square and keep an eye on strangers.",
        );
        assert_eq!(
            answer(&guard, "Tess, what is your job here?").as_deref(),
            Some(
                "My job? I'm the guard here. I guard the town square and keep an eye on \
                 strangers."
            )
        );
        let farmer = agent(
            "Olek",
            "farmer",
            "You like quiet mornings. You farm wheat outside town and sell it to the baker.",
        );
        assert_eq!(
            answer(&farmer, "What do you grow on your farm?").as_deref(),
            Some("I farm wheat outside town and sell it to the baker.")
        );
        // Not about itself, not a question, or nothing its prompt says: left to the others.
        assert_eq!(answer(&farmer, "Where is the mayor?"), None);
        assert_eq!(answer(&farmer, "Your farm is lovely."), None);
        assert_eq!(answer(&farmer, "Have you seen my cat?"), None);
    }

    #[test]
    fn a_question_about_its_task_is_left_to_the_task() {
        let mut farmer = agent("Olek", "farmer", "You farm wheat outside town.");
        farmer.current_task = Some(crate::memory::TaskRow {
            id: 1,
            agent_id: "agent_001".into(),
            task_name: "deliver wheat to the bakery".into(),
            status: crate::memory::TaskStatus::Assigned,
            created_at: "2025-01-01T00:00:00.000Z".into(),
            completed_at: None,
        });
        assert_eq!(answer(&farmer, "Olek, did you deliver the wheat?"), None);
    }
}
