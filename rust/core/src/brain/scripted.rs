//! The `scripted` brain: deterministic, offline, the default brain and the runtime's test double.
//!
//! # Determinism
//!
//! Every random choice comes from the brain's own [`ChaCha8Rng`], seeded from
//! [`BrainSettings::seed`], in a fixed order, using integer sampling and IEEE arithmetic only (no
//! trigonometry, no hash-map iteration). The same seed and the same sequence of contexts give the
//! same replies on every platform. A decision that is cancelled while "thinking" changes nothing:
//! the reply is only computed after the latency has elapsed.
//!
//! # Decisions
//!
//! - **Incoming messages** are answered first (at most three lines, the player's first): the
//!   player always gets a `speak` `reply` addressed to them that quotes or picks up a word of what
//!   they said and mentions the current task; an agent's line gets a reply unless it was itself a
//!   `reply` (no endless ping-pong); a collaboration request gets an agreeing reply naming the task.
//! - **Otherwise** the brain picks, weighted at random, among: `move` (2–10 units toward a nearby
//!   agent or in a compass direction, whole-number coordinates, always inside the world bounds);
//!   `speak` a `chat` line to the nearest agent(s) (a greeting the first time, else about a recent
//!   message, the current task, its role or small talk); working on the current task (`task_update`
//!   lines, then after two or three of them a `complete_task` call with the task's id);
//!   `collaborate` with a nearby agent on the current task (at most once per task); `wait` 1–5 s.
//!   Alone, it only rarely talks to no one (`monologue`, empty recipients).
//! - Only tools listed in [`BrainContext::tools`] are called (an empty list means all world tools).
//!   A line that cannot go through `speak` becomes the reply's `assistant_text`.
//!
//! # Reply shape
//!
//! Tool call ids are `call_001`, `call_002`, … increasing per brain. When a reply speaks, its
//! `assistant_text` and `dialog_type` mirror the first `speak` call (the same line, not a second
//! one); silent decisions (`move`, `wait`, `collaborate` — whose `message` the runtime says) have
//! an empty `assistant_text`. Every reply has a tool call or a non-empty `assistant_text`, and every
//! generated call passes [`crate::tools::world::parse_action`].

mod lines;

use std::collections::VecDeque;
use std::f64::consts::SQRT_2;
use std::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

use super::{
    Brain, BrainContext, BrainReply, BrainSettings, DecideFuture, IncomingKind, IncomingMessage,
    NearbyAgent, ToolCall,
};
use crate::geometry::{Position, WorldBounds};
use crate::tools::world::{
    COLLABORATE, COMPLETE_TASK, MAX_RECIPIENTS, MAX_SPEAK_CHARS, MAX_TASK_NAME_CHARS, MOVE, SPEAK,
    WAIT,
};
use lines::{fill, keyword, quote, truncate_chars};

/// The brain's name, as [`super::create_brain`] knows it.
pub const NAME: &str = "scripted";

/// Most incoming messages answered in one reply.
const MAX_ANSWERS: usize = 3;
/// Most agents addressed by one group line.
const MAX_GROUP: usize = 4;
/// How many characters of a message a line quotes.
const QUOTE_CHARS: usize = 60;
/// How many characters of a name or task a line shows.
const SHOWN_CHARS: usize = 80;
/// How many greeted agents and collaborated tasks the brain remembers.
const MEMORY: usize = 64;
/// The `dialog_type` of a line that must not be answered again.
const REPLY: &str = "reply";

/// Compass directions for wandering (`y` grows southward, as on screen).
const DIRECTIONS: [(f64, f64, &str); 8] = [
    (0.0, -1.0, "north"),
    (1.0, -1.0, "north-east"),
    (1.0, 0.0, "east"),
    (1.0, 1.0, "south-east"),
    (0.0, 1.0, "south"),
    (-1.0, 1.0, "south-west"),
    (-1.0, 0.0, "west"),
    (-1.0, -1.0, "north-west"),
];

/// Progress on the task the brain is working on.
#[derive(Clone, Debug, PartialEq)]
struct TaskWork {
    task_id: i64,
    /// Progress lines said so far.
    done: u32,
    /// Progress lines before completing.
    needed: u32,
}

/// The `scripted` brain (see the module docs).
#[derive(Clone, Debug)]
pub struct ScriptedBrain {
    rng: ChaCha8Rng,
    thinking: Duration,
    script: VecDeque<BrainReply>,
    /// Last tool call number handed out.
    calls: u64,
    work: Option<TaskWork>,
    /// Tasks it asked for help with (most recent last).
    collaborated: VecDeque<i64>,
    /// Agents it has talked to (most recent last).
    greeted: VecDeque<String>,
}

/// Which world tools the context allows.
#[derive(Clone, Copy, Debug)]
struct Allowed {
    moving: bool,
    waiting: bool,
    speaking: bool,
    collaborating: bool,
    completing: bool,
}

impl Allowed {
    fn from_context(ctx: &BrainContext) -> Self {
        if ctx.tools.is_empty() {
            return Allowed {
                moving: true,
                waiting: true,
                speaking: true,
                collaborating: true,
                completing: true,
            };
        }
        let has = |name: &str| {
            ctx.tools.iter().any(|t| {
                t.get("name").and_then(Value::as_str) == Some(name)
                    || t.pointer("/function/name").and_then(Value::as_str) == Some(name)
            })
        };
        Allowed {
            moving: has(MOVE),
            waiting: has(WAIT),
            speaking: has(SPEAK),
            collaborating: has(COLLABORATE),
            completing: has(COMPLETE_TASK),
        }
    }
}

/// What an autonomous decision does.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Choice {
    Move,
    Chat,
    Work,
    Collaborate,
    Wait,
    Monologue,
}

impl ScriptedBrain {
    /// A brain that plays `settings.script` first, then generates every decision.
    ///
    /// `settings.thinking_seconds` is the latency of each [`Brain::decide`] (0, negative or NaN:
    /// none; too large for a [`Duration`]: the longest one).
    pub fn new(settings: &BrainSettings) -> Self {
        let s = settings.thinking_seconds;
        let thinking = if s.is_nan() || s <= 0.0 {
            Duration::ZERO
        } else {
            Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX)
        };
        ScriptedBrain {
            rng: ChaCha8Rng::seed_from_u64(settings.seed),
            thinking,
            script: settings.script.iter().cloned().collect(),
            calls: 0,
            work: None,
            collaborated: VecDeque::new(),
            greeted: VecDeque::new(),
        }
    }

    /// A brain that first returns `script` (instead of `settings.script`), one reply per decision
    /// and in order (as given: ids and contents are not checked or rewritten, and they do not
    /// consume generated call ids), then generates decisions as [`ScriptedBrain::new`] does. Each scripted decision takes the
    /// thinking latency too.
    pub fn with_script(settings: &BrainSettings, script: Vec<BrainReply>) -> Self {
        let mut brain = ScriptedBrain::new(settings);
        brain.script = script.into();
        brain
    }

    /// Scripted replies not yet returned.
    pub fn remaining_script(&self) -> usize {
        self.script.len()
    }

    /// The thinking latency of each decision.
    pub fn thinking(&self) -> Duration {
        self.thinking
    }

    /// The next reply, without latency.
    fn next_reply(&mut self, ctx: &BrainContext) -> BrainReply {
        if let Some(reply) = self.script.pop_front() {
            return reply;
        }
        let allowed = Allowed::from_context(ctx);
        let answerable = answerable(ctx);
        if !answerable.is_empty() {
            return self.answer(ctx, &answerable, allowed);
        }
        self.autonomous(ctx, allowed)
    }

    // ----- randomness -----

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        if n <= 1 {
            return 0;
        }
        self.rng.random_range(0..n) as usize
    }

    /// One template of `set`.
    fn template(&mut self, set: &[&'static str]) -> &'static str {
        let i = self.below(set.len());
        set.get(i).copied().unwrap_or("")
    }

    /// An index chosen with the given weights, if any weight is positive.
    fn weighted(&mut self, weights: &[u32]) -> Option<usize> {
        let total: u32 = weights.iter().sum();
        if total == 0 {
            return None;
        }
        let mut r = self.rng.random_range(0..total);
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return Some(i);
            }
            r -= w;
        }
        None
    }

    /// One of the first `n` nearby agents, favouring the nearest.
    fn near_index(&mut self, n: usize) -> usize {
        match n {
            0 | 1 => 0,
            2 => self.weighted(&[7, 3]).unwrap_or(0),
            _ => self.weighted(&[6, 3, 1]).unwrap_or(0),
        }
    }

    // ----- memory -----

    fn greeted(&self, agent_id: &str) -> bool {
        self.greeted.iter().any(|g| g == agent_id)
    }

    fn remember_greeted(&mut self, agent_id: &str) {
        if !self.greeted(agent_id) {
            if self.greeted.len() >= MEMORY {
                self.greeted.pop_front();
            }
            self.greeted.push_back(agent_id.to_string());
        }
    }

    fn collaborated_on(&self, task_id: i64) -> bool {
        self.collaborated.contains(&task_id)
    }

    fn remember_collaboration(&mut self, task_id: i64) {
        if self.collaborated.len() >= MEMORY {
            self.collaborated.pop_front();
        }
        self.collaborated.push_back(task_id);
    }

    // ----- reply building -----

    fn call(&mut self, tool: &str, args: Value, reason: Option<String>) -> ToolCall {
        self.calls += 1;
        ToolCall {
            id: format!("call_{:03}", self.calls),
            tool: tool.to_string(),
            args,
            reason,
        }
    }

    fn speak_call(
        &mut self,
        line: &str,
        recipients: &[String],
        dialog_type: &str,
        reason: Option<String>,
    ) -> ToolCall {
        let recipients: Vec<&String> = recipients.iter().take(MAX_RECIPIENTS).collect();
        self.call(
            SPEAK,
            json!({"content": line, "recipients": recipients, "dialog_type": dialog_type}),
            reason,
        )
    }

    /// A reply that says `line` to `recipients` (through `speak` when allowed, else as text).
    fn say(
        &mut self,
        line: String,
        recipients: &[String],
        dialog_type: &str,
        allowed: Allowed,
    ) -> BrainReply {
        let tool_calls = if allowed.speaking {
            vec![self.speak_call(&line, recipients, dialog_type, None)]
        } else {
            Vec::new()
        };
        BrainReply {
            assistant_text: line,
            dialog_type: dialog_type.to_string(),
            tool_calls,
        }
    }

    /// A reply with silent tool calls only.
    fn act(calls: Vec<ToolCall>) -> BrainReply {
        BrainReply {
            assistant_text: String::new(),
            dialog_type: String::new(),
            tool_calls: calls,
        }
    }

    // ----- answering -----

    fn answer(
        &mut self,
        ctx: &BrainContext,
        messages: &[&IncomingMessage],
        allowed: Allowed,
    ) -> BrainReply {
        let task = ctx.current_task.as_ref().map(|t| shown(&t.task_name));
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
        let word = keyword(&msg.content);
        let line = match &msg.kind {
            IncomingKind::Collaboration { task_name, .. } => {
                let asked = if task_name.trim().is_empty() {
                    "that task".to_string()
                } else {
                    shown(task_name)
                };
                let t = self.template(lines::COLLABORATION_AGREE);
                fill(t, &[("sender", &sender), ("task", &asked)])
            }
            IncomingKind::Speech if said.is_empty() => format!("Yes, {sender}? I'm listening."),
            IncomingKind::Speech if from_player => {
                let head = match &word {
                    Some(word) if self.rng.random_ratio(1, 2) => {
                        let t = self.template(lines::PLAYER_WORD);
                        fill(t, &[("sender", &sender), ("word", word)])
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
                head + &tail
            }
            IncomingKind::Speech => {
                // Templates that pick a word need one; the others quote.
                let word = word.unwrap_or_else(|| said.clone());
                let t = self.template(lines::AGENT_ANSWER);
                let head = fill(t, &[("sender", &sender), ("quote", &said), ("word", &word)]);
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

    // ----- autonomous decisions -----

    fn autonomous(&mut self, ctx: &BrainContext, allowed: Allowed) -> BrainReply {
        let nearby: Vec<&NearbyAgent> = ctx
            .nearby
            .iter()
            .filter(|a| !a.agent_id.trim().is_empty() && a.agent_id != ctx.agent_id)
            .collect();
        let task = ctx.current_task.as_ref();
        let can_move = allowed.moving && ctx.bounds.validate().is_ok();
        let can_collaborate = allowed.collaborating
            && !nearby.is_empty()
            && task.is_some_and(|t| !self.collaborated_on(t.id));
        let choices = [
            (Choice::Move, if can_move { 30 } else { 0 }),
            (
                Choice::Chat,
                if allowed.speaking && !nearby.is_empty() {
                    30
                } else {
                    0
                },
            ),
            (Choice::Work, if task.is_some() { 40 } else { 0 }),
            (Choice::Collaborate, if can_collaborate { 15 } else { 0 }),
            (Choice::Wait, if allowed.waiting { 15 } else { 0 }),
            (Choice::Monologue, if nearby.is_empty() { 4 } else { 0 }),
        ];
        let weights: Vec<u32> = choices.iter().map(|(_, w)| *w).collect();
        let choice = self
            .weighted(&weights)
            .map_or(Choice::Monologue, |i| choices[i].0);
        let reply = match choice {
            Choice::Move => self.wander(ctx, &nearby),
            Choice::Chat => Some(self.chat(ctx, &nearby, allowed)),
            Choice::Work => task.map(|t| self.work(ctx, t.id, &t.task_name, &nearby, allowed)),
            Choice::Collaborate => task.and_then(|t| self.collaborate(t.id, &t.task_name, &nearby)),
            Choice::Wait => Some(self.wait(ctx)),
            Choice::Monologue => Some(self.monologue(ctx, allowed)),
        };
        // A move with nowhere to go (or nothing allowed at all): wait, else think aloud.
        match reply {
            Some(reply) => reply,
            None if allowed.waiting => self.wait(ctx),
            None => self.monologue(ctx, allowed),
        }
    }

    fn wait(&mut self, ctx: &BrainContext) -> BrainReply {
        let seconds = self.rng.random_range(1u32..=5);
        let reason = match &ctx.current_task {
            Some(t) if self.rng.random_ratio(1, 2) => {
                format!("thinking over {}", shown(&t.task_name))
            }
            _ => self.template(lines::WAIT_REASON).to_string(),
        };
        let call = self.call(WAIT, json!({ "seconds": seconds }), Some(reason));
        Self::act(vec![call])
    }

    fn monologue(&mut self, ctx: &BrainContext, allowed: Allowed) -> BrainReply {
        let me = display_name(&ctx.name, &ctx.agent_id);
        let role = shown(&ctx.role);
        let line = match &ctx.current_task {
            Some(t) => {
                let task = shown(&t.task_name);
                fill(
                    self.template(lines::MONOLOGUE_TASK),
                    &[("task", &task), ("me", &me), ("role", &role)],
                )
            }
            None => fill(
                self.template(lines::MONOLOGUE),
                &[("me", &me), ("role", &role)],
            ),
        };
        self.say(line_limit(line), &[], "monologue", allowed)
    }

    /// A move of 2–10 units, or `None` when the agent cannot get anywhere else.
    fn wander(&mut self, ctx: &BrainContext, nearby: &[&NearbyAgent]) -> Option<BrainReply> {
        let bounds = ctx.bounds;
        bounds.validate().ok()?;
        let origin = if ctx.position.is_finite() {
            ctx.position
        } else {
            midpoint(bounds)
        };
        let step = f64::from(self.rng.random_range(2u32..=10));
        let mut planned = None;
        if !nearby.is_empty() && self.rng.random_ratio(3, 5) {
            let other = nearby[self.near_index(nearby.len().min(3))];
            let (dx, dy) = (other.position.x - origin.x, other.position.y - origin.y);
            let dist = (dx * dx + dy * dy).sqrt();
            if dist.is_finite() && dist >= 4.0 {
                // Stop two units short of them.
                let s = step.min(dist - 2.0);
                let reason = fill(
                    self.template(lines::MOVE_TOWARD_REASON),
                    &[("other", &display_name(&other.name, &other.agent_id))],
                );
                planned = Some((dx / dist * s, dy / dist * s, reason));
            }
        }
        let (dx, dy, reason) = match planned {
            Some(p) => p,
            None => {
                let (ux, uy, direction) = DIRECTIONS[self.below(DIRECTIONS.len())];
                let k = if ux != 0.0 && uy != 0.0 {
                    (step / SQRT_2).round().max(1.0)
                } else {
                    step
                };
                let reason = fill(
                    self.template(lines::MOVE_WANDER_REASON),
                    &[("direction", direction)],
                );
                (ux * k, uy * k, reason)
            }
        };
        let mut target = snap(Position::new(origin.x + dx, origin.y + dy), bounds);
        let mut reason = reason;
        if target == ctx.position {
            // Against a wall: try the other way.
            target = snap(Position::new(origin.x - dx, origin.y - dy), bounds);
            reason = "making some room".to_string();
            if target == ctx.position {
                return None;
            }
        }
        let call = self.call(
            MOVE,
            json!({"x": number(target.x), "y": number(target.y)}),
            Some(reason),
        );
        Some(Self::act(vec![call]))
    }

    fn chat(
        &mut self,
        ctx: &BrainContext,
        nearby: &[&NearbyAgent],
        allowed: Allowed,
    ) -> BrainReply {
        let me = display_name(&ctx.name, &ctx.agent_id);
        let task = ctx.current_task.as_ref().map(|t| shown(&t.task_name));
        if nearby.len() >= 2 && self.rng.random_ratio(1, 5) {
            let recipients: Vec<String> = nearby
                .iter()
                .take(MAX_GROUP)
                .map(|a| a.agent_id.clone())
                .collect();
            let line = match &task {
                Some(task) => fill(
                    self.template(lines::CHAT_GROUP_TASK),
                    &[("me", &me), ("task", task)],
                ),
                None => fill(self.template(lines::CHAT_GROUP), &[("me", &me)]),
            };
            for r in &recipients {
                self.remember_greeted(r);
            }
            return self.say(line_limit(line), &recipients, "chat", allowed);
        }
        let target = nearby[self.near_index(nearby.len().min(3))];
        let other = display_name(&target.name, &target.agent_id);
        let role = shown(&ctx.role);
        let line = if !self.greeted(&target.agent_id) {
            if role.is_empty() {
                fill(
                    self.template(lines::GREETING),
                    &[("other", &other), ("me", &me)],
                )
            } else {
                fill(
                    self.template(lines::GREETING_ROLE),
                    &[("other", &other), ("me", &me), ("role", &role)],
                )
            }
        } else {
            let recent = recent_line(ctx, target);
            let weights = [
                if recent.is_some() { 3 } else { 0 },
                if task.is_some() { 3 } else { 0 },
                if role.is_empty() { 0 } else { 2 },
                1,
            ];
            match (self.weighted(&weights), recent, &task) {
                (Some(0), Some((speaker, said)), _) => fill(
                    self.template(lines::CHAT_RECENT),
                    &[("other", &other), ("speaker", &speaker), ("quote", &said)],
                ),
                (Some(1), _, Some(task)) => fill(
                    self.template(lines::CHAT_TASK),
                    &[("other", &other), ("task", task)],
                ),
                (Some(2), _, _) => fill(
                    self.template(lines::CHAT_ROLE),
                    &[("other", &other), ("role", &role)],
                ),
                _ => fill(self.template(lines::CHAT_SMALL), &[("other", &other)]),
            }
        };
        self.remember_greeted(&target.agent_id);
        self.say(
            line_limit(line),
            std::slice::from_ref(&target.agent_id),
            "chat",
            allowed,
        )
    }

    fn work(
        &mut self,
        ctx: &BrainContext,
        task_id: i64,
        task_name: &str,
        nearby: &[&NearbyAgent],
        allowed: Allowed,
    ) -> BrainReply {
        let task = shown(task_name);
        if self.work.as_ref().is_none_or(|w| w.task_id != task_id) {
            let needed = self.rng.random_range(2u32..=3);
            self.work = Some(TaskWork {
                task_id,
                done: 0,
                needed,
            });
        }
        let (done, needed) = self.work.as_ref().map_or((0, 1), |w| (w.done, w.needed));
        let audience: Vec<String> = nearby
            .iter()
            .take(MAX_GROUP)
            .map(|a| a.agent_id.clone())
            .collect();

        if done >= needed && allowed.completing {
            // Keep `done` as is: should the task still be open next time, it is completed again.
            let args = if task_id >= 1 {
                json!({ "task_id": task_id })
            } else {
                Value::Object(Map::new())
            };
            let done_call = self.call(COMPLETE_TASK, args, Some(format!("finished {task}")));
            let mut line = fill(self.template(lines::TASK_DONE), &[("task", &task)]);
            if let Some(next) = ctx.other_tasks.iter().find(|t| t.id != task_id) {
                line.push_str(&fill(
                    self.template(lines::TASK_DONE_NEXT),
                    &[("next", &shown(&next.task_name))],
                ));
            }
            let line = line_limit(line);
            if allowed.speaking && !audience.is_empty() {
                let speak = self.speak_call(&line, &audience, "task_update", None);
                return BrainReply {
                    assistant_text: line,
                    dialog_type: "task_update".into(),
                    tool_calls: vec![done_call, speak],
                };
            }
            return Self::act(vec![done_call]);
        }

        let step = (done + 1).min(needed);
        if let Some(w) = self.work.as_mut() {
            w.done = w.done.saturating_add(1);
        }
        let (step, total) = (step.to_string(), needed.to_string());
        let values = [("task", task.as_str()), ("step", &step), ("total", &total)];
        if allowed.speaking && !audience.is_empty() {
            // Tell the nearest one (or everyone near, now and then).
            let recipients = if self.rng.random_ratio(1, 4) {
                audience
            } else {
                audience.into_iter().take(1).collect()
            };
            let line = line_limit(fill(self.template(lines::TASK_UPDATE), &values));
            return self.say(line, &recipients, "task_update", allowed);
        }
        if allowed.waiting && !self.rng.random_ratio(1, 6) {
            let seconds = self.rng.random_range(2u32..=5);
            let reason = fill(self.template(lines::WORK_REASON), &values);
            let call = self.call(WAIT, json!({ "seconds": seconds }), Some(reason));
            return Self::act(vec![call]);
        }
        let line = line_limit(fill(self.template(lines::TASK_UPDATE), &values));
        self.say(line, &[], "task_update", allowed)
    }

    fn collaborate(
        &mut self,
        task_id: i64,
        task_name: &str,
        nearby: &[&NearbyAgent],
    ) -> Option<BrainReply> {
        if nearby.is_empty() || self.collaborated_on(task_id) {
            return None;
        }
        let helper = nearby[self.near_index(nearby.len().min(3))];
        let other = display_name(&helper.name, &helper.agent_id);
        let task = shown(task_name);
        let shown_task = if task.is_empty() {
            "my task".to_string()
        } else {
            task
        };
        let message = line_limit(fill(
            self.template(lines::COLLABORATE_ASK),
            &[("other", &other), ("task", &shown_task)],
        ));
        let mut args = Map::new();
        args.insert("agent_id".into(), Value::String(helper.agent_id.clone()));
        let full_name = task_name.trim();
        if !full_name.is_empty() {
            args.insert(
                "task_name".into(),
                Value::String(truncate_chars(full_name, MAX_TASK_NAME_CHARS, "")),
            );
        }
        args.insert("message".into(), Value::String(message));
        self.remember_collaboration(task_id);
        self.remember_greeted(&helper.agent_id);
        let call = self.call(
            COLLABORATE,
            Value::Object(args),
            Some(format!("asking {other} for help")),
        );
        let mut reply = Self::act(vec![call]);
        reply.dialog_type = "collaboration".into();
        Some(reply)
    }
}

impl Brain for ScriptedBrain {
    fn name(&self) -> &str {
        NAME
    }

    /// Waits the thinking latency ([`tokio::time::sleep`], so it needs a tokio runtime with time
    /// enabled, honours a paused clock and is cancellable), then returns the next scripted reply
    /// or a generated one. Dropping the future before it completes leaves the brain unchanged.
    fn decide<'a>(&'a mut self, context: &'a BrainContext) -> DecideFuture<'a> {
        Box::pin(async move {
            if !self.thinking.is_zero() {
                tokio::time::sleep(self.thinking).await;
            }
            Ok(self.next_reply(context))
        })
    }
}

/// The incoming messages to answer: not from itself or no one, not an agent's `reply` line; the
/// latest one per sender and kind; the player's first; at most [`MAX_ANSWERS`].
fn answerable(ctx: &BrainContext) -> Vec<&IncomingMessage> {
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
fn recent_line(ctx: &BrainContext, listener: &NearbyAgent) -> Option<(String, String)> {
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

/// A name for lines: the display name, else the id.
fn display_name(name: &str, id: &str) -> String {
    let name = name.trim();
    if name.is_empty() {
        shown(id)
    } else {
        shown(name)
    }
}

/// `text` on one line, cut for use inside a line.
fn shown(text: &str) -> String {
    quote(text, SHOWN_CHARS)
}

/// A line within `speak`'s limits (never empty).
fn line_limit(line: String) -> String {
    let line = line.trim();
    if line.is_empty() {
        return "Hm.".to_string();
    }
    truncate_chars(line, MAX_SPEAK_CHARS, "…")
}

/// The bounds' centre, computed without overflow.
fn midpoint(b: WorldBounds) -> Position {
    Position::new(b.min_x / 2.0 + b.max_x / 2.0, b.min_y / 2.0 + b.max_y / 2.0)
}

/// `p` rounded to whole numbers and moved inside `bounds` (valid); an axis with no whole number
/// inside is only clamped.
fn snap(p: Position, bounds: WorldBounds) -> Position {
    let centre = midpoint(bounds);
    Position::new(
        snap_axis(p.x, centre.x, bounds.min_x, bounds.max_x),
        snap_axis(p.y, centre.y, bounds.min_y, bounds.max_y),
    )
}

fn snap_axis(v: f64, fallback: f64, lo: f64, hi: f64) -> f64 {
    let v = if v.is_finite() { v } else { fallback };
    let (whole_lo, whole_hi) = (lo.ceil(), hi.floor());
    if whole_lo <= whole_hi {
        v.round().clamp(whole_lo, whole_hi)
    } else {
        v.clamp(lo, hi)
    }
}

/// A coordinate as JSON: an integer when whole, else a float.
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

#[cfg(test)]
mod tests {
    use rand::RngExt;

    use super::*;
    use crate::brain::{BRAINS, BrainError, create_brain};
    use crate::memory::{ConversationRow, TaskRow, TaskStatus};
    use crate::tools::world::{Action, parse_action, world_tool_definitions};

    const PLAYER: &str = "player_0";

    fn settings(seed: u64) -> BrainSettings {
        BrainSettings {
            seed,
            thinking_seconds: 0.0,
            script: Vec::new(),
        }
    }

    fn ctx() -> BrainContext {
        BrainContext {
            agent_id: "agent_001".into(),
            name: "Mira".into(),
            role: "baker".into(),
            prompt: "You bake bread for the town.".into(),
            instruction: "Analyze situation and decide next action".into(),
            position: Position::new(50.0, 50.0),
            bounds: WorldBounds::default(),
            current_task: None,
            other_tasks: Vec::new(),
            recent_messages: Vec::new(),
            incoming: Vec::new(),
            nearby: Vec::new(),
            player_id: PLAYER.into(),
            decisions: 0,
            tools: world_tool_definitions(),
        }
    }

    fn agent(id: &str, name: &str, x: f64, y: f64) -> NearbyAgent {
        NearbyAgent {
            agent_id: id.into(),
            name: name.into(),
            role: "smith".into(),
            position: Position::new(x, y),
            distance: Position::new(50.0, 50.0).distance(Position::new(x, y)),
        }
    }

    fn task(id: i64, name: &str) -> TaskRow {
        TaskRow {
            id,
            agent_id: "agent_001".into(),
            task_name: name.into(),
            status: TaskStatus::Assigned,
            created_at: "2025-01-01T00:00:00.000Z".into(),
            completed_at: None,
        }
    }

    fn row(id: i64, sender: &str, content: &str) -> ConversationRow {
        ConversationRow {
            id,
            agent_id: "agent_001".into(),
            timestamp: "2025-01-01T00:00:00.000Z".into(),
            sender: sender.into(),
            content: content.into(),
            recipient: Some("agent_001".into()),
        }
    }

    fn speech(sender: &str, name: &str, content: &str, dialog_type: &str) -> IncomingMessage {
        IncomingMessage {
            sender: sender.into(),
            sender_name: name.into(),
            content: content.into(),
            kind: IncomingKind::Speech,
            dialog_type: dialog_type.into(),
        }
    }

    /// A varied context drawn from `rng` (bounds down to size 0 and 1, positions outside, odd
    /// names, messages of every kind).
    fn random_context(rng: &mut ChaCha8Rng) -> BrainContext {
        let mut c = ctx();
        c.decisions = rng.random_range(0u64..50);
        c.bounds = match rng.random_range(0u32..6) {
            0 => WorldBounds::default(),
            1 => WorldBounds::from_rect(3.0, 3.0, 0.0, 0.0).unwrap(),
            2 => WorldBounds::from_rect(-1.0, 7.0, 1.0, 1.0).unwrap(),
            3 => WorldBounds::from_rect(0.25, 0.5, 0.5, 0.25).unwrap(),
            4 => WorldBounds::from_rect(-500.0, -20.0, 1000.0, 40.0).unwrap(),
            _ => WorldBounds::from_rect(10.5, 10.5, 3.0, 12.0).unwrap(),
        };
        c.position = match rng.random_range(0u32..5) {
            0 => Position::new(f64::NAN, 1.0),
            1 => Position::new(
                rng.random_range(-50.0..150.0),
                rng.random_range(-50.0..150.0),
            ),
            _ => {
                let b = c.bounds;
                Position::new(
                    rng.random_range(b.min_x..=b.max_x)
                        .round()
                        .clamp(b.min_x, b.max_x),
                    rng.random_range(b.min_y..=b.max_y),
                )
            }
        };
        let n = rng.random_range(0usize..5);
        c.nearby = (0..n)
            .map(|i| {
                let id = format!("agent_{:03}", i + 2);
                let name = ["Bram", "", "Cleo", "Dov \"the\" Smith", "Eun-ji"][i];
                let dx = rng.random_range(-15.0..15.0);
                agent(&id, name, c.position.x + dx, c.position.y - dx / 2.0)
            })
            .collect();
        if rng.random_ratio(1, 2) {
            let names = ["Bake bread", "Fix the fence {task}", "", &"x".repeat(300)];
            c.current_task = Some(task(
                rng.random_range(0i64..6),
                names[rng.random_range(0..4)],
            ));
            if rng.random_ratio(1, 2) {
                c.other_tasks = vec![task(9, "Sweep the square")];
            }
        }
        for i in 0..rng.random_range(0i64..6) {
            let sender = ["agent_002", PLAYER, "agent_001", "agent_009"][rng.random_range(0..4)];
            c.recent_messages.push(row(
                i,
                sender,
                ["Fresh rolls today!", "", "  ", "Where is the well?"][rng.random_range(0..4)],
            ));
        }
        for _ in 0..rng.random_range(0u32..4) {
            let contents = [
                "Hello there!",
                "",
                "hi",
                &"long ".repeat(400),
                "Can you bring bread to the market?",
            ];
            let content = contents[rng.random_range(0..contents.len())];
            let msg = match rng.random_range(0u32..5) {
                0 => speech(PLAYER, PLAYER, content, ""),
                1 => speech("agent_002", "Bram", content, "chat"),
                2 => speech("agent_003", "Cleo", content, "reply"),
                3 => IncomingMessage {
                    sender: "agent_004".into(),
                    sender_name: "".into(),
                    content: content.into(),
                    kind: IncomingKind::Collaboration {
                        task_id: 3,
                        task_name: ["Paint the mill", ""][rng.random_range(0..2)].into(),
                    },
                    dialog_type: "collaboration".into(),
                },
                _ => speech("", "", content, "chat"),
            };
            c.incoming.push(msg);
        }
        if rng.random_ratio(1, 6) {
            // Only some tools allowed now.
            let keep = ["move", "wait", "speak", "collaborate", "complete_task"];
            let k = keep[rng.random_range(0..keep.len())];
            c.tools.retain(|t| t["name"] != k);
        }
        c
    }

    /// Checks the contract on one reply and returns its parsed actions.
    fn check(reply: &BrainReply, c: &BrainContext) -> Vec<Action> {
        assert!(
            !reply.tool_calls.is_empty() || !reply.assistant_text.trim().is_empty(),
            "silent reply {reply:?}"
        );
        let allowed: Vec<&str> = c.tools.iter().filter_map(|t| t["name"].as_str()).collect();
        reply
            .tool_calls
            .iter()
            .map(|call| {
                assert!(
                    allowed.contains(&call.tool.as_str()),
                    "{call:?} not allowed"
                );
                let action = parse_action(call).unwrap_or_else(|e| panic!("{call:?}: {e}"));
                if let Action::Move { x, y } = action {
                    let target = Position::new(x, y);
                    assert!(c.bounds.contains(target), "{target} outside {:?}", c.bounds);
                    assert_ne!(target, c.position, "a move that goes nowhere");
                    if c.bounds.min_x.ceil() <= c.bounds.max_x.floor() {
                        assert_eq!(x.fract(), 0.0, "{x}");
                    }
                    if c.bounds.min_y.ceil() <= c.bounds.max_y.floor() {
                        assert_eq!(y.fract(), 0.0, "{y}");
                    }
                }
                action
            })
            .collect()
    }

    fn decide(brain: &mut ScriptedBrain, c: &BrainContext) -> BrainReply {
        let reply = brain.next_reply(c);
        check(&reply, c);
        reply
    }

    fn speaks(reply: &BrainReply) -> Vec<(String, Vec<String>, String)> {
        reply
            .tool_calls
            .iter()
            .filter_map(|call| match parse_action(call) {
                Ok(Action::Speak {
                    content,
                    recipients,
                    dialog_type,
                }) => Some((
                    content,
                    recipients.unwrap_or_default(),
                    dialog_type.unwrap_or_default(),
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn create_brain_knows_scripted_only() {
        let brain = create_brain("scripted", &settings(1)).unwrap();
        assert_eq!(brain.name(), "scripted");
        assert_eq!(BRAINS, ["scripted"]);
        match create_brain("gpt-9", &settings(1)) {
            Err(BrainError::Unknown { name, available }) => {
                assert_eq!(name, "gpt-9");
                assert_eq!(available, "scripted");
            }
            Err(other) => panic!("unexpected {other:?}"),
            Ok(_) => panic!("gpt-9 is not a brain"),
        }
        assert!(create_brain("Scripted", &settings(1)).is_err());
    }

    #[test]
    fn same_seed_same_replies_different_seed_differs() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let contexts: Vec<BrainContext> = (0..200).map(|_| random_context(&mut rng)).collect();
        let run = |seed: u64| {
            let mut brain = ScriptedBrain::new(&settings(seed));
            contexts
                .iter()
                .map(|c| decide(&mut brain, c))
                .collect::<Vec<_>>()
        };
        let a = run(42);
        assert_eq!(a, run(42));
        let b = run(43);
        assert_ne!(a, b);
        // Serialized, too (what crosses process boundaries).
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&run(42)).unwrap()
        );
    }

    #[test]
    fn replies_are_portable_for_a_fixed_seed() {
        // Pins the generator's output: a platform- or version-dependent choice changes it.
        let mut c = ctx();
        c.nearby = vec![agent("agent_002", "Bram", 58.0, 47.0)];
        c.current_task = Some(task(4, "Bake bread"));
        let mut brain = ScriptedBrain::new(&settings(2024));
        let got: Vec<String> = (0..8)
            .map(|_| {
                let reply = decide(&mut brain, &c);
                let calls: Vec<String> = reply
                    .tool_calls
                    .iter()
                    .map(|call| format!("{} {}", call.tool, call.args))
                    .collect();
                calls.join(" | ")
            })
            .collect();
        let speak = |line: &str| {
            format!(
                r#"speak {{"content":"{line}","dialog_type":"task_update","recipients":["agent_002"]}}"#
            )
        };
        let complete = |line: &str| format!(r#"complete_task {{"task_id":4}} | {}"#, speak(line));
        let expected = vec![
            speak("Getting there with Bake bread. That's 1 of 2."),
            speak("Bake bread: step 2 of 2 done."),
            complete("Bake bread is finished!"),
            complete("That's Bake bread taken care of."),
            r#"move {"x":54,"y":54}"#.to_string(),
            r#"collaborate {"agent_id":"agent_002","message":"Bram, could you give me a hand with Bake bread?","task_name":"Bake bread"}"#.to_string(),
            r#"wait {"seconds":4}"#.to_string(),
            complete("That's Bake bread taken care of."),
        ];
        assert_eq!(got, expected);
    }

    #[test]
    fn every_generated_call_parses_and_moves_stay_in_bounds() {
        let mut rng = ChaCha8Rng::seed_from_u64(99);
        let mut moves = 0;
        let mut tiny_moves = 0;
        for seed in 0..40u64 {
            let mut brain = ScriptedBrain::new(&settings(seed));
            for _ in 0..100 {
                let c = random_context(&mut rng);
                let actions = check(&brain.next_reply(&c), &c);
                for a in actions {
                    if matches!(a, Action::Move { .. }) {
                        moves += 1;
                        if c.bounds.width() <= 1.0 {
                            tiny_moves += 1;
                        }
                    }
                }
            }
        }
        assert!(moves > 200, "{moves}");
        assert!(tiny_moves > 20, "{tiny_moves}");
    }

    #[test]
    fn moves_are_steps_of_two_to_ten_units() {
        let mut c = ctx();
        c.nearby = vec![agent("agent_002", "Bram", 80.0, 20.0)];
        let mut brain = ScriptedBrain::new(&settings(5));
        let mut seen = 0;
        for _ in 0..300 {
            for a in check(&brain.next_reply(&c), &c) {
                if let Action::Move { x, y } = a {
                    let d = c.position.distance(Position::new(x, y));
                    assert!((1.4..=10.5).contains(&d), "step {d}");
                    seen += 1;
                }
            }
        }
        assert!(seen > 30, "{seen}");
    }

    #[test]
    fn player_message_gets_a_reply_to_the_player_about_it() {
        for seed in 0..30 {
            let mut brain = ScriptedBrain::new(&settings(seed));
            let mut c = ctx();
            c.nearby = vec![agent("agent_002", "Bram", 52.0, 50.0)];
            c.current_task = Some(task(3, "Bake bread"));
            c.incoming = vec![speech(
                PLAYER,
                PLAYER,
                "Can you bring bread to the market?",
                "",
            )];
            let reply = decide(&mut brain, &c);
            assert_eq!(reply.dialog_type, "reply");
            let said = speaks(&reply);
            assert_eq!(said.len(), 1, "{reply:?}");
            let (content, recipients, dialog_type) = &said[0];
            assert_eq!(recipients, &vec![PLAYER.to_string()]);
            assert_eq!(dialog_type, "reply");
            assert!(content.contains("market"), "{content}");
            assert!(content.contains("Bake bread"), "{content}");
            assert_eq!(&reply.assistant_text, content);
        }
    }

    #[test]
    fn player_is_answered_first_even_among_many() {
        let mut brain = ScriptedBrain::new(&settings(3));
        let mut c = ctx();
        c.incoming = vec![
            speech("agent_002", "Bram", "The oven is hot.", "chat"),
            speech("agent_003", "Cleo", "Agreed.", "reply"),
            speech(PLAYER, PLAYER, "Hello Mira, how are the pastries?", "reply"),
            speech("agent_002", "Bram", "Shall we open the shop?", "chat"),
        ];
        let reply = decide(&mut brain, &c);
        // One `speak` answers everyone (a second one would be refused while speaking): the
        // player first, then Bram, whose latest line is the one answered.
        let said = speaks(&reply);
        assert_eq!(said.len(), 1, "{reply:?}");
        let (content, to, _) = &said[0];
        assert_eq!(to, &vec![PLAYER.to_string(), "agent_002".to_string()]);
        let player_at = content
            .find("pastries")
            .or_else(|| content.find("Hello Mira"));
        let bram_at = content.find("shop").or_else(|| content.find("Shall"));
        assert!(player_at.is_some() && bram_at.is_some(), "{content}");
        assert!(player_at < bram_at, "{content}");
        assert!(
            !content.contains("oven"),
            "Bram's earlier line is not answered: {content}"
        );
    }

    #[test]
    fn agent_speech_is_answered_but_reply_lines_are_not() {
        for seed in 0..30 {
            let mut c = ctx();
            c.nearby = vec![agent("agent_002", "Bram", 52.0, 50.0)];
            c.incoming = vec![speech(
                "agent_002",
                "Bram",
                "The river is rising fast.",
                "chat",
            )];
            let mut brain = ScriptedBrain::new(&settings(seed));
            let reply = decide(&mut brain, &c);
            let said = speaks(&reply);
            assert_eq!(said.len(), 1);
            assert_eq!(said[0].1, vec!["agent_002".to_string()]);
            assert_eq!(said[0].2, "reply");
            assert!(
                said[0].0.contains("river") || said[0].0.contains("rising"),
                "{}",
                said[0].0
            );

            c.incoming = vec![speech("agent_002", "Bram", "Thanks, Mira!", "reply")];
            let reply = decide(&mut brain, &c);
            assert_ne!(reply.dialog_type, "reply", "{reply:?}");
            assert!(speaks(&reply).iter().all(|s| s.2 != "reply"), "{reply:?}");
        }
    }

    #[test]
    fn collaboration_request_gets_an_agreeing_reply() {
        for seed in 0..20 {
            let mut brain = ScriptedBrain::new(&settings(seed));
            let mut c = ctx();
            c.incoming = vec![IncomingMessage {
                sender: "agent_004".into(),
                sender_name: "Dov".into(),
                content: "Could you help me fix the fence?".into(),
                kind: IncomingKind::Collaboration {
                    task_id: 12,
                    task_name: "Fix the fence".into(),
                },
                dialog_type: "collaboration".into(),
            }];
            let reply = decide(&mut brain, &c);
            let said = speaks(&reply);
            assert_eq!(said.len(), 1);
            assert_eq!(said[0].1, vec!["agent_004".to_string()]);
            assert_eq!(said[0].2, "reply");
            assert!(said[0].0.contains("Fix the fence"), "{}", said[0].0);
            assert!(said[0].0.contains("Dov"), "{}", said[0].0);
        }
    }

    fn run_until_complete(c: &BrainContext, seed: u64) -> (usize, Vec<BrainReply>) {
        let mut brain = ScriptedBrain::new(&settings(seed));
        let mut replies = Vec::new();
        for i in 0..300 {
            let reply = decide(&mut brain, c);
            let done = reply
                .tool_calls
                .iter()
                .any(|call| call.tool == "complete_task");
            replies.push(reply);
            if done {
                return (i, replies);
            }
        }
        panic!("task never completed (seed {seed})");
    }

    #[test]
    fn current_task_is_worked_on_then_completed_with_its_id() {
        for seed in 0..10 {
            for with_company in [true, false] {
                let mut c = ctx();
                c.current_task = Some(task(42, "Bake bread"));
                c.other_tasks = vec![task(43, "Sweep the square")];
                if with_company {
                    c.nearby = vec![agent("agent_002", "Bram", 52.0, 50.0)];
                }
                let (_, replies) = run_until_complete(&c, seed);
                let last = replies.last().unwrap();
                let call = last
                    .tool_calls
                    .iter()
                    .find(|c| c.tool == "complete_task")
                    .unwrap();
                assert_eq!(
                    parse_action(call).unwrap(),
                    Action::CompleteTask { task_id: Some(42) }
                );
                if with_company {
                    let updates = replies
                        .iter()
                        .filter(|r| r.dialog_type == "task_update")
                        .count();
                    // Two or three progress lines, then the announcement.
                    assert!((3..=4).contains(&updates), "{updates}");
                    let announce = speaks(last);
                    assert!(announce[0].0.contains("Bake bread"), "{:?}", announce);
                    assert!(announce[0].0.contains("Sweep the square"), "{:?}", announce);
                }
            }
        }
    }

    #[test]
    fn progress_restarts_for_a_new_task() {
        let mut c = ctx();
        c.nearby = vec![agent("agent_002", "Bram", 52.0, 50.0)];
        c.current_task = Some(task(1, "Bake bread"));
        let mut brain = ScriptedBrain::new(&settings(11));
        while !decide(&mut brain, &c)
            .tool_calls
            .iter()
            .any(|t| t.tool == "complete_task")
        {}
        c.current_task = Some(task(2, "Deliver rolls"));
        let mut first_update = None;
        for _ in 0..200 {
            let reply = decide(&mut brain, &c);
            if reply.tool_calls.iter().any(|t| t.tool == "complete_task") {
                panic!("completed the new task without working on it");
            }
            if reply.dialog_type == "task_update" {
                first_update = Some(reply.assistant_text);
                break;
            }
        }
        let line = first_update.expect("worked on the new task");
        assert!(
            line.contains("Deliver rolls") && line.contains('1'),
            "{line}"
        );
    }

    #[test]
    fn collaborates_at_most_once_per_task() {
        let mut c = ctx();
        c.nearby = vec![
            agent("agent_002", "Bram", 52.0, 50.0),
            agent("agent_003", "Cleo", 40.0, 45.0),
        ];
        let mut brain = ScriptedBrain::new(&settings(8));
        let mut counts = Vec::new();
        for id in [7, 8] {
            c.current_task = Some(task(id, "Paint the mill"));
            let mut n = 0;
            for _ in 0..300 {
                let reply = brain.next_reply(&c);
                for action in check(&reply, &c) {
                    if let Action::Collaborate {
                        agent_id,
                        task_name,
                        message,
                    } = action
                    {
                        n += 1;
                        assert!(agent_id == "agent_002" || agent_id == "agent_003");
                        assert_eq!(task_name.as_deref(), Some("Paint the mill"));
                        assert!(message.unwrap().contains("Paint the mill"));
                        assert_eq!(reply.assistant_text, "");
                    }
                }
            }
            counts.push(n);
        }
        assert_eq!(counts, [1, 1]);
    }

    #[test]
    fn alone_it_rarely_talks_to_no_one() {
        let mut c = ctx();
        let mut brain = ScriptedBrain::new(&settings(21));
        let mut monologues = 0;
        let mut kinds = std::collections::BTreeSet::new();
        for i in 0..1000 {
            c.current_task = (i % 2 == 0).then(|| task(i / 200 + 1, "Bake bread"));
            let reply = decide(&mut brain, &c);
            for call in &reply.tool_calls {
                kinds.insert(call.tool.clone());
            }
            if speaks(&reply).iter().any(|s| s.1.is_empty()) {
                monologues += 1;
            }
        }
        assert!(monologues > 0 && monologues < 120, "{monologues}");
        for tool in ["move", "wait", "speak", "complete_task"] {
            assert!(kinds.contains(tool), "{tool} never used: {kinds:?}");
        }
    }

    #[test]
    fn decisions_are_varied_and_refer_to_the_context() {
        let mut c = ctx();
        c.nearby = vec![agent("agent_002", "Bram", 52.0, 50.0)];
        c.recent_messages = vec![row(1, "agent_002", "The mill wheel squeaks again.")];
        let mut brain = ScriptedBrain::new(&settings(13));
        let mut tools = std::collections::BTreeSet::new();
        let mut lines = std::collections::BTreeSet::new();
        for i in 0..300 {
            c.current_task = (i >= 150).then(|| task(i / 50, "Bake bread"));
            let reply = decide(&mut brain, &c);
            for call in &reply.tool_calls {
                tools.insert(call.tool.clone());
            }
            if !reply.assistant_text.is_empty() {
                lines.insert(reply.assistant_text.clone());
            }
        }
        assert_eq!(tools.len(), 5, "{tools:?}");
        assert!(lines.len() > 20, "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("Bram")));
        assert!(
            lines.iter().any(|l| l.contains("mill wheel squeaks")),
            "{lines:?}"
        );
        assert!(lines.iter().any(|l| l.contains("baker")), "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("Bake bread")), "{lines:?}");
        assert!(lines.iter().all(|l| !l.contains('{')), "{lines:?}");
    }

    #[test]
    fn call_ids_increase_per_brain() {
        let mut c = ctx();
        c.nearby = vec![agent("agent_002", "Bram", 52.0, 50.0)];
        let mut brain = ScriptedBrain::new(&settings(1));
        let ids: Vec<String> = (0..20)
            .flat_map(|_| decide(&mut brain, &c).tool_calls)
            .map(|call| call.id)
            .collect();
        let expected: Vec<String> = (1..=ids.len()).map(|n| format!("call_{n:03}")).collect();
        assert_eq!(ids, expected);
    }

    #[test]
    fn without_the_speak_tool_lines_become_assistant_text() {
        let mut c = ctx();
        c.tools.retain(|t| t["name"] != "speak");
        c.incoming = vec![
            speech(PLAYER, PLAYER, "Good morning, baker!", ""),
            speech("agent_002", "Bram", "Smells delicious in here.", "chat"),
        ];
        let mut brain = ScriptedBrain::new(&settings(4));
        let reply = decide(&mut brain, &c);
        assert!(reply.tool_calls.is_empty());
        assert_eq!(reply.dialog_type, "reply");
        // Both answers are in the text, the player's first.
        let text = &reply.assistant_text;
        let player_at = text.find("morning").expect(text);
        let bram_at = text.find("Bram").expect(text);
        assert!(player_at < bram_at, "{text}");
        // With no tools at all, it still never falls silent.
        c.tools = vec![serde_json::json!({"name": "inspect_shelf"})];
        c.incoming.clear();
        for _ in 0..50 {
            let reply = decide(&mut brain, &c);
            assert!(reply.tool_calls.is_empty());
        }
    }

    #[test]
    fn script_is_played_first_in_order() {
        let scripted = |text: &str| BrainReply {
            assistant_text: text.into(),
            dialog_type: "chat".into(),
            tool_calls: vec![ToolCall {
                id: "call_900".into(),
                tool: "wait".into(),
                args: serde_json::json!({"seconds": 1}),
                reason: None,
            }],
        };
        let script = vec![scripted("one"), scripted("two"), scripted("three")];
        let mut brain = ScriptedBrain::with_script(&settings(1), script.clone());
        assert_eq!(brain.remaining_script(), 3);
        let c = ctx();
        for expected in &script {
            assert_eq!(&brain.next_reply(&c), expected);
        }
        assert_eq!(brain.remaining_script(), 0);
        let generated = decide(&mut brain, &c);
        assert_eq!(generated.tool_calls[0].id, "call_001");
        // After the script, it behaves as a fresh brain with the same seed.
        let mut fresh = ScriptedBrain::new(&settings(1));
        assert_eq!(generated, fresh.next_reply(&c));
    }

    #[tokio::test(start_paused = true)]
    async fn decide_takes_the_thinking_latency() {
        let s = BrainSettings {
            seed: 1,
            thinking_seconds: 0.8,
            script: Vec::new(),
        };
        let mut brain = create_brain("scripted", &s).unwrap();
        let c = ctx();
        let start = tokio::time::Instant::now();
        let reply = brain.decide(&c).await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_millis(800));
        check(&reply, &c);

        let mut instant = ScriptedBrain::new(&settings(1));
        let start = tokio::time::Instant::now();
        instant.decide(&c).await.unwrap();
        assert_eq!(start.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_decide_midway_cancels_it_and_changes_nothing() {
        let s = BrainSettings {
            seed: 9,
            thinking_seconds: 2.0,
            script: Vec::new(),
        };
        let script = vec![BrainReply {
            assistant_text: "scripted".into(),
            ..Default::default()
        }];
        let mut brain = ScriptedBrain::with_script(&s, script);
        let mut c = ctx();
        c.nearby = vec![agent("agent_002", "Bram", 52.0, 50.0)];
        let start = tokio::time::Instant::now();
        let interrupted = tokio::time::timeout(Duration::from_millis(500), brain.decide(&c)).await;
        assert!(interrupted.is_err(), "decide finished early");
        assert_eq!(start.elapsed(), Duration::from_millis(500));
        assert_eq!(brain.remaining_script(), 1);
        // The next decision is the one that was interrupted, after the full latency.
        let start = tokio::time::Instant::now();
        let reply = brain.decide(&c).await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(2));
        assert_eq!(reply.assistant_text, "scripted");
        // And the generated ones match an uninterrupted brain's.
        let mut twin = ScriptedBrain::new(&s);
        for _ in 0..5 {
            let _ = tokio::time::timeout(Duration::from_secs(1), brain.decide(&c)).await;
            assert_eq!(
                brain.decide(&c).await.unwrap(),
                twin.decide(&c).await.unwrap()
            );
        }
    }

    #[test]
    fn a_brain_is_small() {
        // 10,000 idle agents must fit in 16 KiB each; the brain is a small part of that.
        let size = std::mem::size_of::<ScriptedBrain>();
        eprintln!("ScriptedBrain: {size} bytes");
        assert!(size <= 1024, "{size}");
    }

    #[test]
    fn odd_latencies_do_not_panic() {
        for s in [f64::NAN, -1.0, 0.0, f64::INFINITY, 1e300] {
            let brain = ScriptedBrain::new(&BrainSettings {
                seed: 0,
                thinking_seconds: s,
                script: Vec::new(),
            });
            let positive = s > 0.0;
            assert_eq!(brain.thinking().is_zero(), !positive, "{s}");
        }
    }

    #[test]
    fn zero_size_world_never_moves_in_place() {
        let mut c = ctx();
        c.bounds = WorldBounds::from_rect(5.0, 5.0, 0.0, 0.0).unwrap();
        c.position = Position::new(5.0, 5.0);
        let mut brain = ScriptedBrain::new(&settings(2));
        for _ in 0..200 {
            let reply = decide(&mut brain, &c);
            assert!(
                reply.tool_calls.iter().all(|t| t.tool != "move"),
                "{reply:?}"
            );
        }
        // From outside, it walks back in.
        c.position = Position::new(40.0, -3.0);
        let mut moved = false;
        for _ in 0..100 {
            for a in check(&brain.next_reply(&c), &c) {
                if let Action::Move { x, y } = a {
                    assert_eq!((x, y), (5.0, 5.0));
                    moved = true;
                }
            }
        }
        assert!(moved);
    }
}
