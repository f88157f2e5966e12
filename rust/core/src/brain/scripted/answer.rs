//! Answering what the agent heard: the player first, agents' lines, collaboration requests;
//! looking questions up with read-only tools first.

use super::lookup::{Lookup, describe, failure, lookup};
use super::persona;
use super::*;
use crate::contract::CallResult;

impl ScriptedBrain {
    /// The read-only calls that look up the questions among `messages` ([`lookup`]), as a
    /// reply of those calls alone; `None` when none matches a tool, or when this decision has
    /// had a round already (results to answer from, or an answer to repair).
    pub(super) fn look_up(
        &mut self,
        ctx: &BrainContext,
        messages: &[&IncomingMessage],
    ) -> Option<BrainReply> {
        if !ctx.steps.is_empty() {
            return None;
        }
        let mut wanted: Vec<Lookup> = Vec::new();
        for msg in messages {
            if !matches!(msg.kind, IncomingKind::Speech) {
                continue;
            }
            if let Some(found) = lookup(ctx, &msg.content)
                && !wanted.contains(&found)
            {
                wanted.push(found);
            }
        }
        if wanted.is_empty() {
            return None;
        }
        let calls = wanted
            .into_iter()
            .map(|w| {
                let reason = Some(format!("looking up {}", shown(&w.subject)));
                self.call(&w.tool, w.args, reason)
            })
            .collect();
        Some(BrainReply {
            assistant_text: String::new(),
            dialog_type: REPLY.to_string(),
            tool_calls: calls,
        })
    }

    pub(super) fn answer(
        &mut self,
        ctx: &BrainContext,
        messages: &[&IncomingMessage],
        allowed: Allowed,
    ) -> BrainReply {
        let task = ctx.current_task.as_ref().map(|t| self.task_phrase(t));
        let mut reply = BrainReply {
            assistant_text: String::new(),
            dialog_type: REPLY.to_string(),
            tool_calls: Vec::new(),
        };
        // One line answers everyone: a second `speak` in the same answer would be refused (the
        // agent is already speaking).
        let mut senders: Vec<String> = Vec::new();
        for msg in messages {
            let line = self.answer_line(ctx, msg, task.as_deref());
            if reply.assistant_text.is_empty() {
                reply.assistant_text = line;
            } else {
                reply.assistant_text = line_limit(format!("{} {line}", reply.assistant_text));
            }
            if !senders.contains(&msg.sender) {
                senders.push(msg.sender.clone());
            }
            self.remember_greeted(&msg.sender);
        }
        if allowed.speaking && !reply.assistant_text.is_empty() {
            let reason = Some(format!("answering {}", senders.join(", ")));
            let text = reply.assistant_text.clone();
            let call = self.speak_call(&text, &senders, REPLY, reason);
            reply.tool_calls.push(call);
        } else if !reply.assistant_text.is_empty() {
            let text = reply.assistant_text.clone();
            self.remember_said(&text);
        }
        reply
    }

    fn answer_line(
        &mut self,
        ctx: &BrainContext,
        msg: &IncomingMessage,
        task: Option<&str>,
    ) -> String {
        let from_player = msg.sender == ctx.player_id;
        let sender = if from_player
            && (msg.sender_name.trim().is_empty() || msg.sender_name == msg.sender)
        {
            "friend".to_string()
        } else {
            display_name(&msg.sender_name, &msg.sender)
        };
        // What was said besides an opening courtesy and the listener's name.
        let about = match lines::courtesy(&msg.content) {
            Some(_) => after_opening(&msg.content),
            None => msg.content.as_str(),
        };
        // Never the listener's own name or role ("Good morning, baker!" is not about bakers),
        // nor the speaker's (a line about the speaker's trade is small talk, not a topic).
        let sender_role = ctx
            .nearby
            .iter()
            .find(|a| a.agent_id == msg.sender)
            .map_or("", |a| a.role.as_str());
        let word = lines::topic(
            about,
            &[&ctx.name, &ctx.role, &msg.sender_name, sender_role],
        );
        if matches!(msg.kind, IncomingKind::Speech) {
            // A question looked up in this decision is answered from the tool's result.
            if let Some(line) = self.looked_up(ctx, msg, &sender) {
                return line;
            }
            // A section that knows what to say to the line (a memory it asks about) answers it.
            if let Some(line) = ctx
                .sections
                .iter()
                .find_map(|section| section.scripted_answer(ctx, msg))
            {
                return line_limit(line);
            }
            // A question about itself is answered from its persona.
            if let Some(line) = persona::answer(ctx, &msg.content) {
                return self.fresh_or_last(ctx, |_| line.clone());
            }
        }
        match &msg.kind {
            IncomingKind::Collaboration { task_name, .. } => {
                let object = shown(&lines::task_object(task_name));
                self.fresh_or_last(ctx, |brain| {
                    let t = brain.template(lines::COLLABORATION_AGREE);
                    fill(t, &[("sender", &sender), ("object", &object)])
                })
            }
            IncomingKind::Speech if msg.content.trim().is_empty() => {
                line_limit(format!("Yes, {sender}? I'm listening."))
            }
            IncomingKind::Speech if from_player => {
                self.player_line(ctx, msg, &sender, word.as_deref(), task)
            }
            IncomingKind::Speech => self.agent_line(ctx, msg, &sender, word.as_deref(), task),
        }
    }

    /// The answer to the player's line: a greeting back, a courtesy in kind, what it knows of
    /// what they asked, or that it heard what they told.
    fn player_line(
        &mut self,
        ctx: &BrainContext,
        msg: &IncomingMessage,
        sender: &str,
        word: Option<&str>,
        task: Option<&str>,
    ) -> String {
        let greeting = lines::greeting(&msg.content);
        let role = shown(&ctx.role);
        let me = display_name(&ctx.name, &ctx.agent_id);
        let asked = lines::is_question(&msg.content);
        // A courtesy alone ("Good luck, Ivy!", "Thanks!") is answered in kind.
        if let Some(answers) = lines::courtesy(&msg.content)
            && word.is_none()
        {
            return self.fresh_or_last(ctx, |brain| {
                fill(brain.template(answers), &[("sender", sender)])
            });
        }
        // Its own task, when the question is about a word of it ("Is the bread ready?").
        let own_task = ctx
            .current_task
            .as_ref()
            .filter(|t| self.helping_with(t.id).is_none())
            .map(|t| t.task_name.as_str());
        let about_task = asked
            && word
                .zip(own_task)
                .is_some_and(|(w, t)| lines::mentions(t, w));
        let quoted = quote(&msg.content, QUOTE_CHARS);
        let has_quotes = msg
            .content
            .contains(['"', '\u{201c}', '\u{201d}', '\u{ab}', '\u{bb}']);
        self.fresh_or_last(ctx, |brain| {
            let welcome = greeting.map(|greeting| {
                let t = brain.template(lines::GREETING_BACK);
                fill(t, &[("greeting", greeting), ("sender", sender)])
            });
            let values = |topic: &str| -> Vec<(&'static str, String)> {
                vec![
                    ("sender", sender.to_string()),
                    ("topic", topic.to_string()),
                    ("task", task.unwrap_or("").to_string()),
                ]
            };
            let head = match word {
                // A greeting alone is answered with a greeting and an offer of help.
                None if welcome.is_some() => None,
                None if asked => Some(fill(lines::PLAYER_UNCLEAR, &[("sender", sender)])),
                None => Some(fill_pairs(
                    brain.template(lines::PLAYER_QUOTE),
                    &[("sender", sender.to_string()), ("quote", quoted.clone())],
                )),
                Some(topic) if about_task => {
                    let set = if welcome.is_some() {
                        lines::PLAYER_QUESTION_TASK_AFTER_GREETING
                    } else {
                        lines::PLAYER_QUESTION_TASK
                    };
                    Some(fill_pairs(brain.template(set), &values(topic)))
                }
                Some(topic) if asked => {
                    let set = if welcome.is_some() {
                        lines::PLAYER_QUESTION_AFTER_GREETING
                    } else {
                        lines::PLAYER_QUESTION
                    };
                    Some(fill_pairs(brain.template(set), &values(topic)))
                }
                // After a greeting, the rest is answered by its topic (a quote would repeat
                // the greeting, and the greeting named the player already).
                Some(topic) if welcome.is_some() => Some(fill_pairs(
                    brain.template(lines::PLAYER_TOPIC_AFTER_GREETING),
                    &values(topic),
                )),
                Some(topic) if has_quotes || brain.rng.random_ratio(1, 2) => Some(fill_pairs(
                    brain.template(lines::PLAYER_TOPIC),
                    &values(topic),
                )),
                Some(_) => Some(fill_pairs(
                    brain.template(lines::PLAYER_QUOTE),
                    &[("sender", sender.to_string()), ("quote", quoted.clone())],
                )),
            };
            // A question about the task says how far it got; another answer adds the task, or
            // else (not to a question) an offer of help.
            let tail = if about_task || (asked && head.is_some() && task.is_none()) {
                String::new()
            } else {
                match task {
                    Some(task) => tail(&fill(
                        brain.template(lines::ANSWER_TASK_TAIL),
                        &[("task", task)],
                    )),
                    None => fill(
                        brain.template(lines::PLAYER_IDLE_TAIL),
                        &[("role", &role), ("me", &me)],
                    ),
                }
            };
            let head = head.map(|h| capitalized(&h));
            match (welcome, head) {
                (Some(welcome), Some(head)) => format!("{welcome} {head}{tail}"),
                (Some(welcome), None) => format!("{welcome}{tail}"),
                (None, Some(head)) => head + &tail,
                (None, None) => tail,
            }
        })
    }

    /// The answer to another agent's line: to a question, what it is busy with; else about its
    /// topic, now and then with its task.
    fn agent_line(
        &mut self,
        ctx: &BrainContext,
        msg: &IncomingMessage,
        sender: &str,
        word: Option<&str>,
        task: Option<&str>,
    ) -> String {
        let role = shown(&ctx.role);
        let asked = lines::is_question(&msg.content);
        self.fresh_or_last(ctx, |brain| {
            let values = [
                ("sender", sender),
                ("role", role.as_str()),
                ("task", task.unwrap_or("")),
                ("topic", word.unwrap_or("")),
            ];
            // A question about something is answered about it; one about nothing in particular
            // ("Up to anything?") with what keeps the agent busy; another line is taken up by
            // its topic, now and then saying what keeps it busy. When one kind is said already,
            // another.
            let (about, plain) = (word.is_some(), word.is_none());
            let weight = |yes: bool, w: u32| if yes { w } else { 0 };
            let sets: [(&[&str], u32); 6] = [
                (lines::AGENT_QUESTION_TOPIC, weight(asked && about, 4)),
                (
                    lines::AGENT_QUESTION_TASK,
                    weight(asked && plain && task.is_some(), 8),
                ),
                (
                    lines::AGENT_QUESTION,
                    weight(asked && plain && task.is_none() && !role.is_empty(), 8),
                ),
                (lines::AGENT_TOPIC_BUSY, weight(about && task.is_some(), 1)),
                (lines::AGENT_TOPIC, weight(about, 2)),
                (lines::AGENT_PLAIN, weight(plain, 1)),
            ];
            let weights: Vec<u32> = sets.iter().map(|(_, w)| *w).collect();
            let set = brain
                .weighted(&weights)
                .map_or(lines::AGENT_PLAIN, |i| sets[i].0);
            capitalized(&fill(brain.template(set), &values))
        })
    }

    /// The answer to `msg` from the result of the read-only call that looked it up in this
    /// decision, if there is one.
    fn looked_up(
        &mut self,
        ctx: &BrainContext,
        msg: &IncomingMessage,
        sender: &str,
    ) -> Option<String> {
        let wanted = lookup(ctx, &msg.content)?;
        let result = looked_up_result(ctx, &wanted)?;
        let subject = shown(&wanted.subject);
        Some(self.fresh_or_last(ctx, |brain| {
            if result.is_error {
                let t = brain.template(lines::TOOL_FAILED);
                let reason = failure(&result.result);
                fill(
                    t,
                    &[
                        ("sender", sender),
                        ("subject", &subject),
                        ("reason", &reason),
                    ],
                )
            } else {
                let t = brain.template(lines::TOOL_ANSWER);
                let described = describe(&result.result, &wanted.args);
                fill(
                    t,
                    &[
                        ("sender", sender),
                        ("subject", &subject),
                        ("result", &described),
                    ],
                )
            }
        }))
    }
}

/// The result of the call of this decision that made the lookup `wanted` (the same tool and
/// arguments).
fn looked_up_result<'a>(ctx: &'a BrainContext, wanted: &Lookup) -> Option<&'a CallResult> {
    ctx.steps.iter().find_map(|step| {
        let call = step
            .reply
            .tool_calls
            .iter()
            .find(|c| c.tool == wanted.tool && c.args == wanted.args)?;
        step.results.iter().find(|r| r.id == call.id)
    })
}

/// A filled tail (" baking bread keeps me busy") as it follows an answer: its first letter
/// upper case.
fn tail(text: &str) -> String {
    let text = text.trim_start();
    if text.is_empty() {
        String::new()
    } else {
        format!(" {}", capitalized(text))
    }
}

/// [`fill`] with owned values.
fn fill_pairs(template: &str, values: &[(&str, String)]) -> String {
    let borrowed: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    fill(template, &borrowed)
}

/// The incoming messages to answer: not from itself or no one, not an agent's `reply` line; the
/// latest one per sender and kind; the player's first; at most [`MAX_ANSWERS`].
pub(super) fn answerable(ctx: &BrainContext) -> Vec<&IncomingMessage> {
    let is_collab = |m: &IncomingMessage| matches!(m.kind, IncomingKind::Collaboration { .. });
    let mut picked: Vec<&IncomingMessage> = Vec::new();
    for msg in &ctx.incoming {
        if msg.sender.trim().is_empty() || msg.sender == ctx.agent_id {
            continue;
        }
        let from_player = msg.sender == ctx.player_id;
        if !from_player && !is_collab(msg) && msg.dialog_type == REPLY {
            continue;
        }
        match picked
            .iter_mut()
            .find(|m| m.sender == msg.sender && is_collab(m) == is_collab(msg))
        {
            Some(slot) => *slot = msg,
            None => picked.push(msg),
        }
    }
    picked.sort_by_key(|m| m.sender != ctx.player_id);
    picked.truncate(MAX_ANSWERS);
    picked
}

/// The topic of the latest line in memory said by someone else, as `(speaker, topic)`; the
/// speaker is "you" when it is `listener`.
pub(super) fn recent_topic(ctx: &BrainContext, listener: &NearbyAgent) -> Option<(String, String)> {
    let row = ctx
        .recent_messages
        .iter()
        .rev()
        .find(|r| r.sender != ctx.agent_id && !r.content.trim().is_empty())?;
    let (speaker, name, role) = if row.sender == listener.agent_id {
        (
            "you".to_string(),
            listener.name.as_str(),
            listener.role.as_str(),
        )
    } else if row.sender == ctx.player_id {
        ("our visitor".to_string(), "", "")
    } else {
        match ctx.nearby.iter().find(|a| a.agent_id == row.sender) {
            Some(a) => (
                display_name(&a.name, &a.agent_id),
                a.name.as_str(),
                a.role.as_str(),
            ),
            None => (shown(&row.sender), "", ""),
        }
    };
    // Not the names or trades of those talking.
    let names = [
        ctx.name.as_str(),
        ctx.role.as_str(),
        name,
        role,
        listener.name.as_str(),
        listener.role.as_str(),
    ];
    let topic = lines::topic(&row.content, &names)?;
    Some((speaker, topic))
}

/// `text` after its first sentence piece ("Good luck, Ivy! Is it your move?" → "Ivy! Is it your
/// move?"): what follows an opening courtesy.
fn after_opening(text: &str) -> &str {
    match text.find([',', '!', '.', '?']) {
        Some(at) => &text[at + 1..],
        None => "",
    }
}
