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
//!   player always gets a `speak` `reply` addressed to them that names what they said or asked
//!   (a question about its task is answered with how far it got; another question with what it
//!   knows, or that it does not know) and mentions the current task; an agent's line gets a
//!   reply unless it was itself a `reply` (no endless ping-pong); a collaboration request gets an
//!   agreeing reply, and the task becomes one it helps the asker with ("baking Mira's
//!   bread").
//! - **A question it can look up** — a line it answers that asks something (`?`) sharing a word
//!   with a read-only tool it has ([`BrainContext::read_only_tools`]; see [`lookup`]) — is
//!   looked up first: the brain calls that tool alone, and once its result is back in the same
//!   decision ([`BrainContext::steps`]) it answers from it ("Let me check… rye — left: 3.").
//! - **Otherwise** the brain picks, weighted at random, among: `move` (2–10 units — a hundredth of
//!   the world's shorter side times that in a world wider than 100 — toward a nearby
//!   agent or in a compass direction, whole-number coordinates, always inside the world bounds);
//!   `speak` a `chat` line to the nearest agent(s) (a greeting the first time, else about the
//!   topic of a line it heard lately, the current task, its role or small talk); working on the current task (`task_update`
//!   lines, then after two or three of them a `complete_task` call with the task's id);
//!   `collaborate` with a nearby agent on the current task (at most once per task); `wait` 1–5 s.
//!   While a move the game carries out is under way it starts no other; after one was blocked
//!   it first moves 2–10 units away from the target it could not reach.
//!   Alone, it only rarely talks to no one (`monologue`, empty recipients).
//! - **Lines are fresh**: a line that would repeat one of its last [`MEMORY`] lines (case,
//!   punctuation and whitespace aside) or quote a line it heard lately (five words in a row:
//!   [`crate::eval::lines::quotes`]) is drawn again, a few times; an autonomous decision that
//!   finds nothing fresh to say does something silent instead. Templates hold no stock phrase
//!   of more than four words and never quote another agent.
//! - **In a section that knows how** ([`BrainContext::sections`], [`super::Section::scripted`])
//!   it lets the section decide: an app it plays (the built-in AI's pick, or one of the app
//!   actions it may call now with arguments its schema accepts; `wait` when it has none) when it
//!   has no line to answer; a game master's turn before anything else.
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

mod answer;
mod autonomous;
mod lines;
mod lookup;
mod persona;
#[cfg(test)]
mod runtime_tests;
#[cfg(test)]
mod tests;

use answer::{answerable, recent_topic};

use std::collections::VecDeque;
use std::f64::consts::SQRT_2;
use std::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

use super::{
    Brain, BrainContext, BrainReply, BrainSettings, DecideFuture, IncomingKind, IncomingMessage,
    NearbyAgent, ScriptedPlay, ToolCall,
};
use crate::geometry::{Position, WorldBounds};
use crate::memory::TaskRow;
use crate::tools::world::{
    COLLABORATE, COMPLETE_TASK, MAX_RECIPIENTS, MAX_SPEAK_CHARS, MAX_TASK_NAME_CHARS, MOVE, SPEAK,
    WAIT,
};
use lines::{fill, quote, truncate_chars};

/// The brain's name, as [`super::BrainRegistry::with_builtins`] registers it.
pub const NAME: &str = "scripted";

/// Most incoming messages answered in one reply.
const MAX_ANSWERS: usize = 3;
/// Most agents addressed by one group line.
const MAX_GROUP: usize = 4;
/// How many characters of a message a line quotes.
const QUOTE_CHARS: usize = 60;
/// How many characters of a name or task a line shows.
const SHOWN_CHARS: usize = 80;
/// How many greeted agents, collaborated tasks and own lines the brain remembers.
const MEMORY: usize = 64;
/// How many tasks it helps others with it remembers (with whose they are).
const HELPING: usize = 16;
/// How many times a line that is not fresh (see the module docs) is drawn again.
const FRESH_TRIES: usize = 12;
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
    /// Its own last lines, as [`line_key`]s (most recent last).
    said: VecDeque<u64>,
    /// Tasks it agreed to help with, and whose they are (most recent last).
    helping: VecDeque<(i64, String)>,
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
            said: VecDeque::new(),
            helping: VecDeque::new(),
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
        // A request for help is heard even when a scripted reply answers it.
        for msg in &ctx.incoming {
            if let IncomingKind::Collaboration { task_id, .. } = msg.kind
                && task_id >= 1
            {
                let asker = display_name(&msg.sender_name, &msg.sender);
                self.remember_helping(task_id, &asker);
            }
        }
        if let Some(reply) = self.script.pop_front() {
            return reply;
        }
        // A section that frames the decision (a GM turn) decides it; the others (an app) only
        // when there is no line to answer.
        if let Some((section, _)) = ctx.sections.framing(ctx)
            && let Some(reply) = section.scripted(ctx, &mut self.play())
        {
            return reply;
        }
        let allowed = Allowed::from_context(ctx);
        let answerable = answerable(ctx);
        if !ctx.due_tools.is_empty() {
            // Its move is due: the app plays first; a line to answer is answered beside the
            // move (a hint asked first comes back in the next step, still with the line).
            for section in ctx.sections.iter() {
                if let Some(mut reply) = section.scripted(ctx, &mut self.play()) {
                    let moves = reply
                        .tool_calls
                        .iter()
                        .any(|c| ctx.due_tools.contains(&c.tool));
                    if moves && !answerable.is_empty() {
                        let words = self.answer(ctx, &answerable, allowed);
                        reply.assistant_text = words.assistant_text;
                        reply.dialog_type = words.dialog_type;
                    }
                    return reply;
                }
            }
        }
        if !answerable.is_empty() {
            if let Some(reply) = self.look_up(ctx, &answerable) {
                return reply;
            }
            return self.answer(ctx, &answerable, allowed);
        }
        for section in ctx.sections.iter() {
            if let Some(reply) = section.scripted(ctx, &mut self.play()) {
                return reply;
            }
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

    /// Whose task `task_id` is, when it agreed to help with it.
    fn helping_with(&self, task_id: i64) -> Option<&str> {
        self.helping
            .iter()
            .rev()
            .find(|(id, _)| *id == task_id)
            .map(|(_, owner)| owner.as_str())
    }

    fn remember_helping(&mut self, task_id: i64, owner: &str) {
        if self.helping_with(task_id).is_some() {
            return;
        }
        if self.helping.len() >= HELPING {
            self.helping.pop_front();
        }
        self.helping.push_back((task_id, owner.to_string()));
    }

    /// `task` as what it is busy doing: its own task as an activity ([`doing`]), a task it helps
    /// with as the asker's ("baking Mira's bread", [`lines::helped_activity`]).
    fn task_phrase(&self, task: &TaskRow) -> String {
        match self.helping_with(task.id) {
            Some(owner) => shown(&lines::helped_activity(&task.task_name, owner)),
            None => doing(&task.task_name),
        }
    }

    /// Whether it said `line` lately.
    fn said_lately(&self, line: &str) -> bool {
        self.said.contains(&line_key(line))
    }

    fn remember_said(&mut self, line: &str) {
        if self.said.len() >= MEMORY {
            self.said.pop_front();
        }
        self.said.push_back(line_key(line));
    }

    /// The first of up to [`FRESH_TRIES`] lines drawn by `make` that it did not say lately and
    /// that quotes no line it heard lately ([`heard_lines`]); `None` when none was.
    fn fresh(
        &mut self,
        ctx: &BrainContext,
        mut make: impl FnMut(&mut Self) -> String,
    ) -> Option<String> {
        let heard = heard_lines(ctx);
        for _ in 0..FRESH_TRIES {
            let line = line_limit(make(self));
            let echo = heard.iter().any(|h| crate::eval::lines::quotes(&line, h));
            if !echo && !self.said_lately(&line) {
                return Some(line);
            }
        }
        None
    }

    /// A fresh line from `make` ([`ScriptedBrain::fresh`]), or else its last draw: for a line
    /// that must be said (an answer).
    fn fresh_or_last(
        &mut self,
        ctx: &BrainContext,
        mut make: impl FnMut(&mut Self) -> String,
    ) -> String {
        let mut last = String::new();
        let fresh = self.fresh(ctx, |brain| {
            last = make(brain);
            last.clone()
        });
        fresh.unwrap_or_else(|| line_limit(last))
    }

    // ----- reply building -----

    /// What a section's offline decision may use: the brain's randomness and call ids.
    fn play(&mut self) -> ScriptedPlay<'_> {
        ScriptedPlay::new(&mut self.rng, &mut self.calls)
    }

    fn call(&mut self, tool: &str, args: Value, reason: Option<String>) -> ToolCall {
        self.play().call(tool, args, reason)
    }

    fn speak_call(
        &mut self,
        line: &str,
        recipients: &[String],
        dialog_type: &str,
        reason: Option<String>,
    ) -> ToolCall {
        let recipients: Vec<&String> = recipients.iter().take(MAX_RECIPIENTS).collect();
        self.remember_said(line);
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
            self.remember_said(&line);
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
        super::section::act(calls)
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

/// What it heard lately from others: the lines of its recent conversation not its own, and the
/// lines it answers now.
fn heard_lines(ctx: &BrainContext) -> Vec<&str> {
    let recent = ctx
        .recent_messages
        .iter()
        .filter(|r| r.sender != ctx.agent_id)
        .map(|r| r.content.as_str());
    let incoming = ctx
        .incoming
        .iter()
        .filter(|m| m.sender != ctx.agent_id)
        .map(|m| m.content.as_str());
    recent.chain(incoming).collect()
}

/// A line's key for remembering it: FNV-1a (64 bits) of its normal form
/// ([`crate::eval::lines::normal_form`]), the same on every platform.
fn line_key(line: &str) -> u64 {
    crate::eval::lines::normal_form(line)
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        })
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

/// A task's name as what the agent is busy doing ([`lines::activity`]), cut for use inside a
/// line: the `{task}` and `{next}` of the templates.
fn doing(task_name: &str) -> String {
    shown(&lines::activity(task_name))
}

/// A line within `speak`'s limits (never empty), its first letter upper case (a template may
/// start with a task or a word of what was said).
fn line_limit(line: String) -> String {
    let line = line.trim();
    if line.is_empty() {
        return "Hm.".to_string();
    }
    truncate_chars(&capitalized(line), MAX_SPEAK_CHARS, "…")
}

/// `text` with its first letter upper case ("bread? …" → "Bread? …").
fn capitalized(text: &str) -> String {
    capitalized_first(text, true)
}

/// `text` with its first letter upper case (`upper`) or lower case.
fn capitalized_first(text: &str, upper: bool) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) if upper => first.to_uppercase().chain(chars).collect(),
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}
