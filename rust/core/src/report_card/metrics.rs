//! The report card's metrics: what a scenario's play came to ([`judge`]) and the card over
//! every scenario ([`metrics`]). Computed from what was said and decided, without a human or a
//! judge model.
//!
//! # Per question
//!
//! The **answer** to a question of the player's is the asked agent's next line addressed to
//! the player after the question. It **holds** the expected words when, for every expected
//! word or phrase, the phrase's [normal form](crate::eval::lines::normal_form) appears in the
//! answer's normal form as whole words. It is **answered** as
//! [`crate::eval::lines::answered_questions`] judges it (it names a content word of the question).
//! A tool question's tool is **used** when the decision that said the answer called it.
//!
//! # Formulas
//!
//! Over every scenario of the run:
//!
//! - **memory** = memory questions whose answer holds the fact / memory questions asked with
//!   no restart before them; **memory after a restart** the same over those asked after one.
//! - **persona** = persona questions whose answer holds what was expected / persona questions.
//! - **responsiveness** = the player's questions answered / the player's questions (every
//!   line of the player's to an agent ending with `?`), summed over agents
//!   ([`crate::eval::lines::LineReport`]).
//! - **repeated lines** = Σ repeated / Σ lines; **echo** = Σ echoes / Σ lines; **quotes of
//!   quotes** = Σ quotes of quotes; **distinct-2** = Σ (distinct-2 × lines) / Σ lines — over
//!   the agents' own lines ([`crate::eval::lines`]).
//! - **tasks completed** = tasks completed / tasks the agents had (the suite's and those
//!   other agents gave them), read at the end.
//! - **help answered** = the suite's help requests after which the asked agent said a line
//!   to the asker / help requests.
//! - **grounding** = grounded names / names in the agents' lines. A **name** is a word of a
//!   line that starts with a capital letter and does not start a sentence (the line's first
//!   word, or a word after `.`, `!`, `?`, `:`, or an opening quotation mark), other than `I`
//!   and its contractions, a possessive `'s` dropped. It is **grounded** when, lower-cased, it
//!   is a word of the world (the agents' names, roles and keys, the places), of the agent's
//!   persona (its prompt, its tasks, its tools' descriptions and answers) or of its memories
//!   (every line said in the scenario before it, and its tools' answers).
//! - **calls naming what does not exist** = calls the contract check refused for naming a
//!   tool the agent does not have (`tool_not_allowed`) or an agent, someone to address or a
//!   task that does not exist, plus calls the runtime refused for naming an agent or a task
//!   that does not exist, from the decision journal.
//! - **tool use** = tool questions whose answering decision called the tool / tool
//!   questions.
//! - **contract** (game-master scenarios): **valid first time** = `turn` steps whose answer
//!   needed no repair and had no failed or dropped call / turns; **valid after repair** = turns
//!   with no failed or dropped call once repaired / turns; **replays identically** = turns
//!   that, taken again from the campaign as it was before them with the same game master, turn
//!   number (so brain seed) and dice rolled again from their seed, give the same dice,
//!   narration, calls, effects and state ([`super::replay`]) / turns; **applying the expected
//!   tools** = turns with an `expect` list whose applied calls include every tool of it / turns
//!   with an `expect` list (valid is not apt: a move answered to "where can I go?" is valid).
//! - **latency per decision** = the mean of the decisions' brain latency, with its median
//!   and 95th percentile in the detail; **tokens per decision** = (prompt + answer tokens) /
//!   decisions.

use std::collections::HashSet;

use super::played::Played;
use super::results::{
    AgentResult, DecisionCost, HelpResult, Metric, QuestionResult, ScenarioResult, Target,
};
use super::suite::{Counts, Scenario, World};
use crate::contract::{CallOutcome, DecidedCall, FailureReason};
use crate::eval::lines::{Line, LineReport, normal_form, words};
use crate::runtime::Decision;

/// The targets of the card, by metric key.
pub const TARGETS: &[(&str, Target)] = &[
    ("memory", Target::AtLeast(0.8)),
    ("memory_after_restart", Target::AtLeast(0.7)),
    ("responsiveness", Target::AtLeast(0.8)),
    ("repeated", Target::AtMost(0.1)),
    ("nonexistent_calls", Target::AtMost(0.0)),
    ("tool_use", Target::AtLeast(0.5)),
    ("contract_replay", Target::AtLeast(1.0)),
];

/// What the runtime says when a call names an agent or a task that does not exist.
/// What the contract check and the runtime say when a call names an agent, someone to address
/// or a task that does not exist (the check of world tools grounded in what exists, and the
/// runtime's refusals at run time).
const NAMES_NOTHING: &[&str] = &[
    "unknown agent",
    "no open task",
    "no agent '",
    "no one called '",
];

/// Judges one scenario's play.
pub fn judge(scenario: &Scenario, world: &World, played: Played) -> ScenarioResult {
    let Played {
        player,
        lines,
        ids,
        decisions,
        tasks,
        asked,
        helped,
        restarts,
        turns,
    } = played;
    let id_of = |key: &str| ids.get(key).cloned().unwrap_or_default();
    let world_words: HashSet<String> = scenario
        .agents
        .iter()
        .flat_map(|a| [&a.name, &a.role, &a.key])
        .chain(&world.places)
        .flat_map(|t| words(t))
        .collect();
    let agents = scenario
        .agents
        .iter()
        .map(|spec| {
            let id = id_of(&spec.key);
            let mut persona: HashSet<String> = world_words.clone();
            let own_texts = std::iter::once(&spec.prompt).chain(&spec.tasks);
            persona.extend(own_texts.flat_map(|t| words(t)));
            for tool in &spec.tools {
                persona.extend(words(&tool.description));
                for (key, answer) in &tool.answers {
                    persona.extend(words(key));
                    persona.extend(words(&answer.to_string()));
                }
            }
            let (names, ungrounded) = grounding(&lines, &id, &persona);
            let own: &[Decision] = decisions.get(&id).map_or(&[], |d| &d[..]);
            let (had, completed) = tasks.get(&id).copied().unwrap_or((0, 0));
            AgentResult {
                key: spec.key.clone(),
                lines: LineReport::measure(&lines, &id, &player, &spec.name),
                id,
                name: spec.name.clone(),
                tasks: had,
                tasks_completed: completed,
                names,
                grounded: names - ungrounded.len(),
                ungrounded,
                decisions: own
                    .iter()
                    .map(|d| DecisionCost {
                        latency_ms: d.latency_ms,
                        tokens: d.input_tokens + d.output_tokens,
                    })
                    .collect(),
                nonexistent: own.iter().flat_map(nonexistent).collect(),
            }
        })
        .collect();
    let questions = asked
        .into_iter()
        .map(|(ask, after_restart, at)| {
            let agent = id_of(&ask.to);
            let name = scenario.agent(&ask.to).map_or("", |a| a.name.as_str());
            let asked_at = lines[at.min(lines.len())..]
                .iter()
                .position(|l| l.speaker == player && l.text == ask.text)
                .map(|i| i + at);
            let answer = asked_at.and_then(|q| next_line(&lines, q, &agent, &player));
            let held = answer.is_some_and(|a| holds(&a.text, &ask.expect));
            let answered = match (asked_at, answer) {
                (Some(q), Some(a)) => {
                    let pair = [lines[q].clone(), a.clone()];
                    crate::eval::lines::answered_questions(&pair, &agent, &player, name).1 == 1
                }
                _ => false,
            };
            let tool_used = ask.tool.as_ref().map(|tool| {
                answer.is_some_and(|a| {
                    decisions.get(&agent).is_some_and(|ds| {
                        ds.iter().any(|d| {
                            d.spoken.contains(&a.text)
                                && d.calls
                                    .iter()
                                    .any(|c| &c.tool == tool && c.outcome == CallOutcome::Done)
                        })
                    })
                })
            });
            QuestionResult {
                agent: ask.to.clone(),
                text: ask.text.clone(),
                counts_for: ask.counts_for.as_str().to_string(),
                after_restart,
                expect: ask.expect.clone(),
                answer: answer.map(|a| a.text.clone()),
                held,
                answered,
                tool: ask.tool.clone(),
                tool_used,
            }
        })
        .collect();
    let help = helped
        .into_iter()
        .map(|(say, at)| {
            let (from, to) = (id_of(&say.from), id_of(&say.to));
            let puppet = super::played::suite_speaker(&from);
            let asked_at = lines[at.min(lines.len())..]
                .iter()
                .position(|l| l.speaker == puppet && l.text == say.text)
                .map(|i| i + at);
            HelpResult {
                from: say.from.clone(),
                to: say.to.clone(),
                text: say.text.clone(),
                answer: asked_at
                    .and_then(|q| next_line(&lines, q, &to, &from))
                    .map(|l| l.text.clone()),
            }
        })
        .collect();
    ScenarioResult {
        name: scenario.name.clone(),
        restarts,
        player,
        lines,
        agents,
        questions,
        help,
        turns,
    }
}

/// `agent`'s next line to `to` after line `after`.
fn next_line<'l>(lines: &'l [Line], after: usize, agent: &str, to: &str) -> Option<&'l Line> {
    lines
        .iter()
        .skip(after + 1)
        .find(|l| l.speaker == agent && l.to.iter().any(|t| t == to))
}

/// Whether `text` holds every one of `expected`, as whole words (see the module docs).
pub fn holds(text: &str, expected: &[String]) -> bool {
    let said = format!(" {} ", normal_form(text));
    expected
        .iter()
        .all(|e| said.contains(&format!(" {} ", normal_form(e))))
}

/// The names in `agent`'s lines, and those not grounded (each with its line): see the module
/// docs. `known` holds the world's and the agent's persona's words; the lines said before
/// each line are its memories.
pub fn grounding(lines: &[Line], agent: &str, known: &HashSet<String>) -> (usize, Vec<String>) {
    let mut heard: HashSet<String> = HashSet::new();
    let mut names = 0;
    let mut ungrounded = Vec::new();
    for line in lines {
        if line.speaker == agent {
            for name in names_in(&line.text) {
                names += 1;
                let word = name.to_lowercase();
                if !known.contains(&word) && !heard.contains(&word) {
                    ungrounded.push(format!("{name} (in {:?})", line.text));
                }
            }
        }
        heard.extend(words(&line.text));
    }
    (names, ungrounded)
}

/// The names in `text` (see the module docs).
pub fn names_in(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut word = String::new();
    let mut starts_sentence = true;
    let mut word_starts_sentence = true;
    let chars: Vec<char> = text.chars().collect();
    let flush = |word: &mut String, at_start: bool, names: &mut Vec<String>| {
        if word.is_empty() {
            return;
        }
        let w = std::mem::take(word);
        let w = w
            .strip_suffix("'s")
            .or_else(|| w.strip_suffix("\u{2019}s"))
            .unwrap_or(&w)
            .to_string();
        let pronoun = w == "I" || w.starts_with("I'") || w.starts_with("I\u{2019}");
        if !at_start && !pronoun && w.chars().next().is_some_and(char::is_uppercase) {
            names.push(w);
        }
    };
    for (i, &c) in chars.iter().enumerate() {
        let apostrophe = matches!(c, '\'' | '\u{2019}')
            && !word.is_empty()
            && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        if c.is_alphanumeric() || apostrophe {
            if word.is_empty() {
                word_starts_sentence = starts_sentence;
                starts_sentence = false;
            }
            word.push(c);
            continue;
        }
        flush(&mut word, word_starts_sentence, &mut names);
        if matches!(c, '.' | '!' | '?' | ':' | '"' | '“' | '«' | '„') {
            starts_sentence = true;
        }
    }
    flush(&mut word, word_starts_sentence, &mut names);
    names
}

/// The calls of `decision` that named something that does not exist, as `tool: why`.
fn nonexistent(decision: &Decision) -> Vec<String> {
    let names_nothing = |c: &&DecidedCall| {
        c.detail
            .as_deref()
            .is_some_and(|d| NAMES_NOTHING.iter().any(|n| d.contains(n)))
    };
    let refused = decision.rejected.iter().filter(|c| {
        names_nothing(c)
            || c.detail.as_deref().is_some_and(|d| {
                d.strip_prefix(FailureReason::ToolNotAllowed.as_str())
                    .is_some_and(|rest| rest.starts_with(':'))
            })
    });
    let failed = decision
        .calls
        .iter()
        .filter(|c| c.outcome == CallOutcome::Failed && names_nothing(c));
    refused
        .chain(failed)
        .map(|c: &DecidedCall| format!("{}: {}", c.tool, c.detail.as_deref().unwrap_or("")))
        .collect()
}

/// A share metric: `n` of `of`.
fn share(key: &str, label: &str, n: usize, of: usize, what: &str) -> Metric {
    metric(
        key,
        label,
        (of > 0).then(|| n as f64 / of as f64),
        "share",
        format!("{n} of {of} {what}"),
    )
}

fn metric(key: &str, label: &str, value: Option<f64>, unit: &str, detail: String) -> Metric {
    let target = TARGETS.iter().find(|(k, _)| *k == key).map(|(_, t)| *t);
    Metric {
        key: key.into(),
        label: label.into(),
        value,
        unit: unit.into(),
        detail,
        target,
        passed: target.zip(value).map(|(t, v)| t.met_by(v)),
    }
}

/// The card over every scenario (see the module docs for each formula).
pub fn metrics(scenarios: &[ScenarioResult]) -> Vec<Metric> {
    let questions: Vec<&QuestionResult> = scenarios.iter().flat_map(|s| &s.questions).collect();
    let agents: Vec<&AgentResult> = scenarios.iter().flat_map(|s| &s.agents).collect();
    let of = |counts: Counts, restart: Option<bool>| {
        let asked: Vec<_> = questions
            .iter()
            .filter(|q| q.counts_for == counts.as_str())
            .filter(|q| restart.is_none_or(|r| q.after_restart == r))
            .collect();
        (asked.iter().filter(|q| q.held).count(), asked.len())
    };
    let sum = |f: &dyn Fn(&AgentResult) -> usize| agents.iter().map(|a| f(a)).sum::<usize>();
    let lines = sum(&|a| a.lines.lines);
    let mut card = Vec::new();
    let (held, asked) = of(Counts::Memory, Some(false));
    card.push(share(
        "memory",
        "memory (same run)",
        held,
        asked,
        "answers held the fact",
    ));
    let (held, asked) = of(Counts::Memory, Some(true));
    card.push(share(
        "memory_after_restart",
        "memory after a restart",
        held,
        asked,
        "answers held the fact",
    ));
    let (held, asked) = of(Counts::Persona, None);
    card.push(share(
        "persona",
        "persona",
        held,
        asked,
        "answers consistent with the persona",
    ));
    card.push(share(
        "responsiveness",
        "responsiveness",
        sum(&|a| a.lines.answered),
        sum(&|a| a.lines.questions),
        "questions answered in the next line, naming what was asked",
    ));
    card.push(share(
        "repeated",
        "repeated lines",
        sum(&|a| a.lines.repeated),
        lines,
        "lines repeat an earlier line of their speaker",
    ));
    card.push(share(
        "echo",
        "echo",
        sum(&|a| a.lines.echoes),
        lines,
        "lines quote another agent",
    ));
    let qq = sum(&|a| a.lines.quotes_of_quotes);
    card.push(metric(
        "quotes_of_quotes",
        "quotes of quotes",
        Some(qq as f64),
        "count",
        format!("{qq} lines quote a quote"),
    ));
    let weighted: f64 = agents
        .iter()
        .map(|a| a.lines.distinct_2 * a.lines.lines as f64)
        .sum();
    card.push(metric(
        "distinct_2",
        "distinct-2",
        (lines > 0).then(|| weighted / lines as f64),
        "share",
        format!("over {lines} lines"),
    ));
    card.push(share(
        "tasks_completed",
        "tasks completed",
        sum(&|a| a.tasks_completed),
        sum(&|a| a.tasks),
        "tasks completed",
    ));
    let help: Vec<_> = scenarios.iter().flat_map(|s| &s.help).collect();
    card.push(share(
        "help_answered",
        "help requests answered",
        help.iter().filter(|h| h.answer.is_some()).count(),
        help.len(),
        "help requests answered",
    ));
    card.push(share(
        "grounding",
        "grounding",
        sum(&|a| a.grounded),
        sum(&|a| a.names),
        "names exist in the world, the persona or the memories",
    ));
    let nonexistent = sum(&|a| a.nonexistent.len());
    card.push(metric(
        "nonexistent_calls",
        "calls naming what does not exist",
        Some(nonexistent as f64),
        "count",
        format!("{nonexistent} calls refused for naming what does not exist"),
    ));
    let tool: Vec<_> = questions.iter().filter_map(|q| q.tool_used).collect();
    card.push(share(
        "tool_use",
        "read-only tool use",
        tool.iter().filter(|u| **u).count(),
        tool.len(),
        "questions matching a tool answered through it",
    ));
    let turns: Vec<_> = scenarios.iter().flat_map(|s| &s.turns).collect();
    card.push(share(
        "contract_first_pass",
        "GM answers valid first time",
        turns.iter().filter(|t| t.first_pass).count(),
        turns.len(),
        "game-master turns valid without a repair",
    ));
    card.push(share(
        "contract_after_repair",
        "GM answers valid after repair",
        turns.iter().filter(|t| t.after_repair).count(),
        turns.len(),
        "game-master turns valid after their repairs",
    ));
    card.push(share(
        "contract_replay",
        "GM turns that replay identically",
        turns.iter().filter(|t| t.replays).count(),
        turns.len(),
        "game-master turns taken again from the same state, seed and dice with the same answer",
    ));
    let expecting: Vec<bool> = turns.iter().filter_map(|t| t.applied_expected()).collect();
    card.push(share(
        "contract_expected",
        "GM turns applying the expected tools",
        expecting.iter().filter(|ok| **ok).count(),
        expecting.len(),
        "game-master turns with expected tools that applied every one of them",
    ));
    let costs: Vec<DecisionCost> = agents
        .iter()
        .flat_map(|a| a.decisions.iter().copied())
        .collect();
    let mut latencies: Vec<f64> = costs.iter().map(|c| c.latency_ms as f64).collect();
    latencies.sort_by(f64::total_cmp);
    let n = latencies.len();
    let mean = |total: f64| (n > 0).then(|| total / n as f64);
    card.push(metric(
        "latency_ms",
        "latency per decision",
        mean(latencies.iter().sum()),
        "ms",
        format!(
            "mean over {n} decisions; median {:.0} ms, 95th percentile {:.0} ms",
            percentile(&latencies, 0.5),
            percentile(&latencies, 0.95)
        ),
    ));
    let tokens: u64 = costs.iter().map(|c| c.tokens).sum();
    card.push(metric(
        "tokens_per_decision",
        "tokens per decision",
        mean(tokens as f64),
        "tokens",
        format!("{tokens} tokens over {n} decisions"),
    ));
    card
}

/// The `q` quantile of sorted values (nearest rank; 0 without values).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(speaker: &str, to: &[&str], text: &str) -> Line {
        Line::new(speaker, to, text)
    }

    #[test]
    fn names_are_capitalised_words_inside_a_sentence() {
        assert_eq!(
            names_in(
                "Good morning! I think Mira's bread is at the Old Mill. Ask Bram: Tess knows."
            ),
            vec!["Mira", "Old", "Mill", "Bram"]
        );
        assert_eq!(names_in("\"Zed took it,\" said Ada."), vec!["Ada"]);
        assert!(names_in("I'll see. I'm sure.").is_empty());
    }

    #[test]
    fn a_name_is_grounded_in_the_world_the_persona_or_what_was_said_before() {
        let known: HashSet<String> = ["mira", "old", "mill"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let lines = [
            l("a1", &["p"], "Ask Mira at the Old Mill."),
            l("p", &["a1"], "Have you seen Zed?"),
            l("a1", &["p"], "Yes, Zed and Quill went north."),
        ];
        let (names, ungrounded) = grounding(&lines, "a1", &known);
        assert_eq!(names, 5);
        assert_eq!(ungrounded.len(), 1, "{ungrounded:?}");
        assert!(ungrounded[0].starts_with("Quill"));
    }

    #[test]
    fn an_answer_holds_phrases_as_whole_words() {
        let expect = |e: &[&str]| e.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(holds(
            "They're in the Old Mill, by the river.",
            &expect(&["old mill"])
        ));
        assert!(!holds(
            "They're in the old millhouse.",
            &expect(&["old mill"])
        ));
        assert!(holds("Three loaves: 3 rye.", &expect(&["rye", "3"])));
        assert!(!holds("No rye.", &expect(&["rye", "3"])));
    }

    #[test]
    fn refusals_for_naming_nothing_are_counted() {
        let call = |outcome, detail: &str| DecidedCall {
            id: "c".into(),
            tool: "t".into(),
            args: serde_json::Value::Null,
            outcome,
            detail: Some(detail.into()),
        };
        let mut d =
            crate::runtime::Decision::start(1, crate::runtime::Trigger::Message, String::new());
        d.rejected.push(call(
            CallOutcome::Failed,
            "tool_not_allowed: no tool named 'fly'",
        ));
        d.rejected.push(call(
            CallOutcome::Failed,
            "invalid_args: x must be a number",
        ));
        d.calls.push(call(
            CallOutcome::Failed,
            "agent_001 cannot collaborate with unknown agent 'agent_009' (c1)",
        ));
        d.calls.push(call(CallOutcome::Done, "ok"));
        assert_eq!(nonexistent(&d).len(), 2);
        // As the check grounded in what exists words them.
        d.rejected.push(call(
            CallOutcome::Failed,
            "invalid_args: Invalid arguments for collaborate: agent_id: no agent 'ghost' can be \
             asked for help now; you can ask: a2",
        ));
        d.rejected.push(call(
            CallOutcome::Failed,
            "invalid_args: Invalid arguments for speak: recipients.0: no one called 'bob' can be \
             addressed now; you can address: player_0",
        ));
        d.rejected.push(call(
            CallOutcome::Failed,
            "invalid_args: Invalid arguments for complete_task: task_id: you have no open task 5; \
             your open tasks: 1",
        ));
        d.rejected.push(call(
            CallOutcome::Failed,
            "invalid_args: Invalid arguments for move: x: x 11 is outside the world bounds",
        ));
        assert_eq!(nonexistent(&d).len(), 5);
    }

    #[test]
    fn the_card_meets_or_misses_its_targets() {
        let q = |counts: &str, after_restart, held| QuestionResult {
            agent: "baker".into(),
            text: "?".into(),
            counts_for: counts.into(),
            after_restart,
            expect: vec![],
            answer: None,
            held,
            answered: held,
            tool: None,
            tool_used: None,
        };
        let scenario = ScenarioResult {
            name: "s".into(),
            restarts: 1,
            player: "p".into(),
            lines: vec![],
            agents: vec![],
            questions: vec![
                q("memory", false, true),
                q("memory", false, true),
                q("memory", true, true),
                q("memory", true, false),
            ],
            help: vec![],
            turns: vec![],
        };
        let card = metrics(&[scenario]);
        let get = |k: &str| card.iter().find(|m| m.key == k).unwrap();
        assert_eq!(get("memory").value, Some(1.0));
        assert_eq!(get("memory").passed, Some(true));
        assert_eq!(get("memory_after_restart").value, Some(0.5));
        assert_eq!(get("memory_after_restart").passed, Some(false));
        assert_eq!(get("persona").value, None);
        assert_eq!(get("persona").passed, None);
        assert_eq!(get("nonexistent_calls").passed, Some(true));
    }
}
