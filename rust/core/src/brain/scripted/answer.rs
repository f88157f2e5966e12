//! Answering what the agent heard: the player first, agents' lines, collaboration requests.

use super::*;

impl ScriptedBrain {
    pub(super) fn answer(
        &mut self,
        ctx: &BrainContext,
        messages: &[&IncomingMessage],
        allowed: Allowed,
    ) -> BrainReply {
        let task = ctx.current_task.as_ref().map(|t| doing(&t.task_name));
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
        let said = quote(&msg.content, QUOTE_CHARS);
        // What was said besides an opening courtesy and the listener's name.
        let topic = match lines::courtesy(&msg.content) {
            Some(_) => after_opening(&msg.content),
            None => msg.content.as_str(),
        };
        let word = lines::topic(topic, &ctx.name);
        // A section that knows what to say to the line (a memory it asks about) answers it.
        if matches!(msg.kind, IncomingKind::Speech)
            && let Some(line) = ctx
                .sections
                .iter()
                .find_map(|section| section.scripted_answer(ctx, msg))
        {
            return line_limit(line);
        }
        let line = match &msg.kind {
            IncomingKind::Collaboration { task_name, .. } => {
                let asked = if task_name.trim().is_empty() {
                    "that task".to_string()
                } else {
                    doing(task_name)
                };
                let t = self.template(lines::COLLABORATION_AGREE);
                fill(t, &[("sender", &sender), ("task", &asked)])
            }
            IncomingKind::Speech if said.is_empty() => format!("Yes, {sender}? I'm listening."),
            IncomingKind::Speech if from_player => {
                let welcome = lines::greeting(&msg.content).map(|greeting| {
                    let t = self.template(lines::GREETING_BACK);
                    fill(t, &[("greeting", greeting), ("sender", &sender)])
                });
                // A courtesy alone ("Good luck, Ivy!", "Thanks!") is answered in kind.
                if let Some(answers) = lines::courtesy(&msg.content)
                    && word.is_none()
                {
                    let t = self.template(answers);
                    return line_limit(fill(t, &[("sender", &sender)]));
                }
                // A greeting alone is answered with a greeting and an offer of help.
                if let Some(welcome) = &welcome
                    && word.is_none()
                {
                    let tail = match task {
                        Some(task) => {
                            fill(self.template(lines::ANSWER_TASK_TAIL), &[("task", task)])
                        }
                        None => self.template(lines::PLAYER_IDLE_TAIL).to_string(),
                    };
                    return line_limit(format!("{welcome}{tail}"));
                }
                let head = match &word {
                    // After a greeting, the rest is answered by its topic (a quote would repeat
                    // the greeting, and the greeting named the player already).
                    Some(word) if welcome.is_some() => {
                        let t = self.template(lines::PLAYER_TOPIC_AFTER_GREETING);
                        capitalized(&fill(t, &[("topic", word)]))
                    }
                    Some(word) if self.rng.random_ratio(1, 2) => {
                        let t = self.template(lines::PLAYER_TOPIC);
                        capitalized(&fill(t, &[("sender", &sender), ("topic", word)]))
                    }
                    _ => {
                        let t = self.template(lines::PLAYER_QUOTE);
                        fill(t, &[("sender", &sender), ("quote", &said)])
                    }
                };
                let tail = match task {
                    Some(task) => fill(self.template(lines::ANSWER_TASK_TAIL), &[("task", task)]),
                    None => self.template(lines::PLAYER_IDLE_TAIL).to_string(),
                };
                match welcome {
                    Some(welcome) => format!("{welcome} {head}{tail}"),
                    None => head + &tail,
                }
            }
            IncomingKind::Speech => {
                let head = match &word {
                    Some(word) => {
                        let t = self.template(lines::AGENT_TOPIC);
                        capitalized(&fill(t, &[("sender", &sender), ("topic", word)]))
                    }
                    None => fill(self.template(lines::AGENT_PLAIN), &[("sender", &sender)]),
                };
                match task {
                    Some(task) if self.rng.random_ratio(1, 3) => {
                        head + &fill(self.template(lines::ANSWER_TASK_TAIL), &[("task", task)])
                    }
                    _ => head,
                }
            }
        };
        line_limit(line)
    }
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

/// The latest line in memory said by someone else, as `(speaker, quote)`; the speaker is "you"
/// when it is `listener`.
pub(super) fn recent_line(ctx: &BrainContext, listener: &NearbyAgent) -> Option<(String, String)> {
    let row = ctx
        .recent_messages
        .iter()
        .rev()
        .find(|r| r.sender != ctx.agent_id && !r.content.trim().is_empty())?;
    let speaker = if row.sender == listener.agent_id {
        "you".to_string()
    } else if row.sender == ctx.player_id {
        "our visitor".to_string()
    } else {
        ctx.nearby
            .iter()
            .find(|a| a.agent_id == row.sender)
            .map_or_else(
                || shown(&row.sender),
                |a| display_name(&a.name, &a.agent_id),
            )
    };
    Some((speaker, quote(&row.content, QUOTE_CHARS)))
}

/// `text` after its first sentence piece ("Good luck, Ivy! Is it your move?" → "Ivy! Is it your
/// move?"): what follows an opening courtesy.
fn after_opening(text: &str) -> &str {
    match text.find([',', '!', '.', '?']) {
        Some(at) => &text[at + 1..],
        None => "",
    }
}
