//! Deciding on its own: wandering, chatting, working on the current task, asking for help,
//! waiting.

use super::*;
use crate::geometry::number;

impl ScriptedBrain {
    pub(super) fn autonomous(&mut self, ctx: &BrainContext, allowed: Allowed) -> BrainReply {
        let nearby: Vec<&NearbyAgent> = ctx
            .nearby
            .iter()
            .filter(|a| !a.agent_id.trim().is_empty() && a.agent_id != ctx.agent_id)
            .collect();
        let task = ctx.current_task.as_ref();
        // Walking already (the game carries the move out): no new move until it ends.
        let walking = ctx.movement.as_ref().is_some_and(|m| m.outcome.is_none());
        let can_move = allowed.moving && ctx.bounds.validate().is_ok() && !walking;
        if can_move
            && let Some(m) = &ctx.movement
            && let Some(crate::moves::MoveOutcome::Blocked(reason)) = &m.outcome
            && let Some(reply) = self.detour(ctx, m.to, reason)
        {
            return reply;
        }
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
            Choice::Chat => self.chat(ctx, &nearby, allowed),
            Choice::Work => task.map(|t| self.work(ctx, t, &nearby, allowed)),
            Choice::Collaborate => task.and_then(|t| self.collaborate(t, &nearby)),
            Choice::Wait => Some(self.wait(ctx)),
            Choice::Monologue => self.monologue(ctx, allowed, false),
        };
        // A move with nowhere to go, nothing fresh to say (or nothing allowed at all): wait,
        // else think aloud.
        match reply {
            Some(reply) => reply,
            None if allowed.waiting => self.wait(ctx),
            None => self
                .monologue(ctx, allowed, true)
                .unwrap_or_else(|| Self::act(Vec::new())),
        }
    }

    fn wait(&mut self, ctx: &BrainContext) -> BrainReply {
        let seconds = self.rng.random_range(1u32..=5);
        let reason = match &ctx.current_task {
            Some(t) if self.rng.random_ratio(1, 2) => {
                format!("thinking about {}", self.task_phrase(t))
            }
            _ => self.template(lines::WAIT_REASON).to_string(),
        };
        let call = self.call(WAIT, json!({ "seconds": seconds }), Some(reason));
        Self::act(vec![call])
    }

    /// A line to no one in particular: a fresh one, or `None` (with `must`: its last draw).
    fn monologue(
        &mut self,
        ctx: &BrainContext,
        allowed: Allowed,
        must: bool,
    ) -> Option<BrainReply> {
        let me = display_name(&ctx.name, &ctx.agent_id);
        let role = shown(&ctx.role);
        let task = ctx.current_task.as_ref().map(|t| self.task_phrase(t));
        let make = |brain: &mut Self| {
            let set = if task.is_some() {
                lines::MONOLOGUE_TASK
            } else {
                lines::MONOLOGUE
            };
            let values = [
                ("task", task.as_deref().unwrap_or("")),
                ("me", me.as_str()),
                ("role", role.as_str()),
            ];
            fill(brain.template(set), &values)
        };
        let line = if must {
            self.fresh_or_last(ctx, make)
        } else {
            self.fresh(ctx, make)?
        };
        Some(self.say(line, &[], "monologue", allowed))
    }

    /// A move of 2–10 units (longer in a large world: [`step_scale`]), or `None` when the agent
    /// cannot get anywhere else.
    fn wander(&mut self, ctx: &BrainContext, nearby: &[&NearbyAgent]) -> Option<BrainReply> {
        let bounds = ctx.bounds;
        bounds.validate().ok()?;
        let origin = if ctx.position.is_finite() {
            ctx.position
        } else {
            midpoint(bounds)
        };
        let step = f64::from(self.rng.random_range(2u32..=10)) * step_scale(bounds);
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

    /// After a blocked move: 2–10 units away from the target that could not be reached, so the
    /// next try comes from somewhere else (`None` when that is where it stands).
    fn detour(
        &mut self,
        ctx: &BrainContext,
        blocked: Position,
        reason: &str,
    ) -> Option<BrainReply> {
        let bounds = ctx.bounds;
        let origin = ctx.position;
        let (dx, dy) = (origin.x - blocked.x, origin.y - blocked.y);
        let dist = (dx * dx + dy * dy).sqrt();
        if !origin.is_finite() || !dist.is_finite() || dist < f64::EPSILON {
            return None;
        }
        let step = f64::from(self.rng.random_range(2u32..=10)) * step_scale(bounds);
        let target = snap(
            Position::new(origin.x + dx / dist * step, origin.y + dy / dist * step),
            bounds,
        );
        if target == origin {
            return None;
        }
        let call = self.call(
            MOVE,
            json!({"x": number(target.x), "y": number(target.y)}),
            Some(format!(
                "could not get to {blocked} ({reason}): trying another way"
            )),
        );
        Some(Self::act(vec![call]))
    }

    /// A line to the nearest agent(s) (see the module docs), or `None` when it finds nothing
    /// fresh to say.
    fn chat(
        &mut self,
        ctx: &BrainContext,
        nearby: &[&NearbyAgent],
        allowed: Allowed,
    ) -> Option<BrainReply> {
        let me = display_name(&ctx.name, &ctx.agent_id);
        let role = shown(&ctx.role);
        let task = ctx.current_task.as_ref().map(|t| self.task_phrase(t));
        if nearby.len() >= 2 && self.rng.random_ratio(1, 5) {
            let recipients: Vec<String> = nearby
                .iter()
                .take(MAX_GROUP)
                .map(|a| a.agent_id.clone())
                .collect();
            let line = self.fresh(ctx, |brain| match &task {
                Some(task) => fill(
                    brain.template(lines::CHAT_GROUP_TASK),
                    &[("me", &me), ("task", task)],
                ),
                None => fill(
                    brain.template(lines::CHAT_GROUP),
                    &[("me", &me), ("role", &role)],
                ),
            })?;
            for r in &recipients {
                self.remember_greeted(r);
            }
            return Some(self.say(line, &recipients, "chat", allowed));
        }
        let target = nearby[self.near_index(nearby.len().min(3))];
        let other = display_name(&target.name, &target.agent_id);
        let line = if !self.greeted(&target.agent_id) {
            self.fresh(ctx, |brain| {
                let values = [("other", other.as_str()), ("me", &me), ("role", &role)];
                if role.is_empty() {
                    fill(brain.template(lines::GREETING), &values)
                } else {
                    fill(brain.template(lines::GREETING_ROLE), &values)
                }
            })?
        } else {
            let recent = recent_topic(ctx, target);
            self.fresh(ctx, |brain| {
                let weights = [
                    if recent.is_some() { 3 } else { 0 },
                    if task.is_some() { 3 } else { 0 },
                    if role.is_empty() { 0 } else { 2 },
                    1,
                ];
                match (brain.weighted(&weights), &recent, &task) {
                    (Some(0), Some((speaker, topic)), _) => fill(
                        brain.template(lines::CHAT_TOPIC),
                        &[
                            ("other", &other),
                            ("speaker", speaker),
                            ("topic", topic),
                            ("role", &role),
                        ],
                    ),
                    (Some(1), _, Some(task)) => fill(
                        brain.template(lines::CHAT_TASK),
                        &[("other", &other), ("task", task)],
                    ),
                    (Some(2), _, _) => fill(
                        brain.template(lines::CHAT_ROLE),
                        &[("other", &other), ("role", &role)],
                    ),
                    _ => fill(
                        brain.template(lines::CHAT_SMALL),
                        &[("other", &other), ("role", &role)],
                    ),
                }
            })?
        };
        self.remember_greeted(&target.agent_id);
        Some(self.say(
            line,
            std::slice::from_ref(&target.agent_id),
            "chat",
            allowed,
        ))
    }

    fn work(
        &mut self,
        ctx: &BrainContext,
        task: &TaskRow,
        nearby: &[&NearbyAgent],
        allowed: Allowed,
    ) -> BrainReply {
        let task_id = task.id;
        let phrase = self.task_phrase(task);
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
            let done_call = self.call(COMPLETE_TASK, args, Some(format!("finished {phrase}")));
            let next = ctx
                .other_tasks
                .iter()
                .find(|t| t.id != task_id)
                .map(|t| self.task_phrase(t));
            let line = self.fresh_or_last(ctx, |brain| match &next {
                Some(next) => fill(
                    brain.template(lines::TASK_DONE_NEXT),
                    &[("task", &phrase), ("next", next)],
                ),
                None => fill(brain.template(lines::TASK_DONE), &[("task", &phrase)]),
            });
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
        let values = [
            ("task", phrase.as_str()),
            ("step", &step),
            ("total", &total),
        ];
        let update = |brain: &mut Self| fill(brain.template(lines::TASK_UPDATE), &values);
        if allowed.speaking && !audience.is_empty() {
            // Tell the nearest one (or everyone near, now and then).
            let recipients = if self.rng.random_ratio(1, 4) {
                audience
            } else {
                audience.into_iter().take(1).collect()
            };
            if let Some(line) = self.fresh(ctx, update) {
                return self.say(line, &recipients, "task_update", allowed);
            }
        } else if (!allowed.waiting || self.rng.random_ratio(1, 6))
            && let Some(line) = self.fresh(ctx, update)
        {
            return self.say(line, &[], "task_update", allowed);
        }
        if allowed.waiting {
            let seconds = self.rng.random_range(2u32..=5);
            let reason = fill(self.template(lines::WORK_REASON), &values);
            let call = self.call(WAIT, json!({ "seconds": seconds }), Some(reason));
            return Self::act(vec![call]);
        }
        let line = self.fresh_or_last(ctx, update);
        self.say(line, &[], "task_update", allowed)
    }

    fn collaborate(&mut self, task: &TaskRow, nearby: &[&NearbyAgent]) -> Option<BrainReply> {
        let (task_id, task_name) = (task.id, task.task_name.as_str());
        // A task it helps with is someone else's to share out.
        if nearby.is_empty()
            || self.collaborated_on(task_id)
            || self.helping_with(task_id).is_some()
        {
            return None;
        }
        let helper = nearby[self.near_index(nearby.len().min(3))];
        let other = display_name(&helper.name, &helper.agent_id);
        let task = doing(task_name);
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

/// How much longer than 2–10 units a step is in a world larger than 100 units across: a
/// game's level in pixels (1280 × 720) gets steps of 14–72, still a short walk there.
fn step_scale(b: WorldBounds) -> f64 {
    let side = (b.max_x - b.min_x).min(b.max_y - b.min_y);
    if side.is_finite() {
        (side / 100.0).max(1.0)
    } else {
        1.0
    }
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
