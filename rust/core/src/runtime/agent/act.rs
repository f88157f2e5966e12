//! How an agent carries out a decision: its calls executed in order (moves, lines, help asked,
//! tasks completed), each state transition, and the errors it reports.

use super::*;

impl Agent {
    /// Executes a checked answer in order. Actions need the agent to be Thinking: once it
    /// speaks, later actions of the same answer are refused (logged and published as
    /// `action_refused`).
    pub(super) async fn execute(
        &mut self,
        reply: BrainReply,
        plan: Plan,
        answering: &[IncomingMessage],
        entry: &mut Decision,
    ) -> Outcome {
        let mut next_idle = self.shared.idle_think;
        let mut spoke = false;
        self.errors.borrow_mut().clear();
        for (call, planned) in plan.calls {
            let state = self.shared.state();
            if state != AgentState::Thinking {
                let why = format!(
                    "{} cannot {} while {state}: blocked until it is idle again ({})",
                    self.shared.id, call.tool, call.id
                );
                entry.push_call(&call, CallOutcome::Refused, Some(why.clone()));
                self.error(AgentErrorCode::ActionRefused, why);
                continue;
            }
            let action = match planned {
                Planned::World(action) => action,
                Planned::Tool { registry, .. } => {
                    let output = registry
                        .call_async(&call.tool, call.args.clone(), self.tool_context())
                        .await
                        .unwrap_or_else(|e| e.to_output());
                    if output.is_error {
                        let why = output.structured["error"]
                            .as_str()
                            .map_or_else(|| output.structured.to_string(), str::to_string);
                        let text = forming::failed(&call.tool, &why);
                        self.inner.form(&self.shared, MemoryKind::Did, text, None);
                        entry.push_call(&call, CallOutcome::Failed, Some(why.clone()));
                        self.error(
                            AgentErrorCode::InvalidAction,
                            format!("{} ({}): {why}", call.id, call.tool),
                        );
                    } else {
                        let result = clip(&output.structured.to_string());
                        let text = forming::used(&call.tool, &result);
                        self.inner.form(&self.shared, MemoryKind::Did, text, None);
                        entry.push_call(&call, CallOutcome::Done, Some(result));
                    }
                    continue;
                }
            };
            self.errors.borrow_mut().clear();
            let mut said = None;
            match action {
                Action::Move { x, y } => self.do_move(Position::new(x, y), &call.id),
                Action::Wait { seconds: s } => {
                    next_idle = s.map(seconds).unwrap_or(self.shared.idle_think)
                }
                Action::Speak {
                    content,
                    recipients,
                    dialog_type,
                } => {
                    let dialog_type =
                        dialog_type.unwrap_or_else(|| dialog_type_or(&reply.dialog_type));
                    said = Some(content.clone());
                    let now = self.speak(content, recipients, dialog_type, answering);
                    spoke |= now;
                    if !now {
                        said = None;
                    }
                }
                Action::Collaborate {
                    agent_id,
                    task_name,
                    message,
                } => self.collaborate(&agent_id, task_name, message, &call.id),
                Action::CompleteTask { task_id } => self.complete(task_id, &call.id),
            }
            let failed = std::mem::take(&mut *self.errors.borrow_mut());
            if failed.is_empty() {
                entry.push_call(&call, CallOutcome::Done, None);
            } else {
                let text = forming::failed(&call.tool, &failed.join("; "));
                self.inner.form(&self.shared, MemoryKind::Did, text, None);
                entry.push_call(&call, CallOutcome::Failed, Some(failed.join("; ")));
            }
            entry.spoken.extend(said);
        }
        if !spoke
            && !reply.assistant_text.trim().is_empty()
            && self.shared.state() == AgentState::Thinking
            && self.speak(
                reply.assistant_text.clone(),
                None,
                dialog_type_or(&reply.dialog_type),
                answering,
            )
        {
            entry.spoken.push(reply.assistant_text.clone());
        }
        if self.shared.state() == AgentState::Speaking {
            tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return Outcome::Stopped,
                _ = tokio::time::sleep(self.shared.speaking) => {}
            }
        }
        let _ = self.transition(AgentState::Idle);
        Outcome::Idle(next_idle)
    }

    pub(super) fn do_move(&mut self, to: Position, call_id: &str) {
        let bounds = self.inner.options.bounds;
        if !bounds.contains(to) {
            self.error(
                AgentErrorCode::InvalidAction,
                format!(
                    "{} cannot move to {to}: outside the world bounds ({}, {})..({}, {}) ({call_id})",
                    self.shared.id, bounds.min_x, bounds.min_y, bounds.max_x, bounds.max_y
                ),
            );
            return;
        }
        if self.shared.movement == Movement::Requested {
            let from = self.shared.state_and_position().1;
            let request = self.shared.walk.lock().begin(from, to);
            self.inner.bus.publish(BusMessage::AgentMoveRequested {
                agent_id: self.shared.id.clone(),
                move_id: request.move_id,
                from: request.from,
                to: request.to,
            });
            return;
        }
        let (from, state) = {
            let mut status = self.shared.status.lock();
            let from = status.position;
            status.position = to;
            (from, status.state)
        };
        self.inner.world.update_position(&self.shared.id, to);
        self.inner
            .memory
            .save_agent_position(&self.shared.id, to, state);
        self.inner.bus.publish(BusMessage::AgentMoved {
            agent_id: self.shared.id.clone(),
            from,
            to,
        });
    }

    /// Thinking → Speaking, then records and publishes the line. Returns whether it spoke.
    pub(super) fn speak(
        &mut self,
        content: String,
        recipients: Option<Vec<String>>,
        dialog_type: String,
        answering: &[IncomingMessage],
    ) -> bool {
        let id = &self.shared.id;
        let mut to: Vec<String> = match recipients {
            Some(list) => list,
            None if !answering.is_empty() => answering.iter().map(|m| m.sender.clone()).collect(),
            None => {
                let (_, position) = self.shared.state_and_position();
                self.inner
                    .world
                    .nearby(id, position, self.shared.hearing_radius, NEARBY_LIMIT)
                    .into_iter()
                    .map(|(agent_id, _, _)| agent_id)
                    .collect()
            }
        };
        let mut seen = std::collections::HashSet::new();
        to.retain(|r| r != id && !r.trim().is_empty() && seen.insert(r.clone()));
        if self.transition(AgentState::Speaking).is_err() {
            return false;
        }
        self.inner.memory.record_conversation(NewConversation {
            agent_id: id.clone(),
            sender: id.clone(),
            content: content.clone(),
            recipient: if to.is_empty() {
                None
            } else {
                Some(to.join(","))
            },
        });
        let listeners: Vec<String> = to.iter().map(|r| self.inner.display_name(r)).collect();
        let about = match to.as_slice() {
            [one] => Some(one.as_str()),
            _ => None,
        };
        let text = forming::said(&listeners, &content);
        self.inner.form(&self.shared, MemoryKind::Said, text, about);
        if let Some(app) = self.shared.app() {
            app.say(ChatRole::Agent, content.clone());
        }
        self.inner.bus.publish(BusMessage::AgentSpoke {
            agent_id: id.clone(),
            content,
            recipients: to,
            dialog_type,
            inbox_id: None,
        });
        true
    }

    pub(super) fn collaborate(
        &mut self,
        helper: &str,
        task_name: Option<String>,
        message: Option<String>,
        call_id: &str,
    ) {
        let id = self.shared.id.clone();
        if helper == id {
            self.error(
                AgentErrorCode::InvalidAction,
                format!("{id} cannot collaborate with itself ({call_id})"),
            );
            return;
        }
        if !self.inner.is_running(helper) {
            self.error(
                AgentErrorCode::InvalidAction,
                format!("{id} cannot collaborate with unknown agent '{helper}' ({call_id})"),
            );
            return;
        }
        let task_name = match task_name.filter(|t| !t.trim().is_empty()) {
            Some(t) => t,
            None => match self.inner.memory.open_tasks(&id).into_iter().next() {
                Some(task) => task.task_name,
                None => {
                    self.error(
                        AgentErrorCode::InvalidAction,
                        format!("{id} has no task to collaborate on: give task_name or assign a task ({call_id})"),
                    );
                    return;
                }
            },
        };
        let message = message
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| format!("Could you help me with {task_name}?"));
        let task = match self.inner.assign_task(helper, &task_name, &id) {
            Ok(task) => task,
            Err(e) => {
                self.error(
                    e.agent_error_code(),
                    format!("{id} could not assign '{task_name}' to {helper} ({call_id}): {e}"),
                );
                return;
            }
        };
        self.inner.memory.record_conversation(NewConversation {
            agent_id: id.clone(),
            sender: id.clone(),
            content: message.clone(),
            recipient: Some(helper.to_string()),
        });
        let text = forming::asked_help(&self.inner.display_name(helper), &task.task_name);
        self.inner
            .form(&self.shared, MemoryKind::Did, text, Some(helper));
        self.inner.bus.publish(BusMessage::CollaborationRequested {
            agent_id: id,
            helper_id: helper.to_string(),
            task_id: task.id,
            task_name: task.task_name,
            message,
        });
    }

    pub(super) fn complete(&mut self, task_id: Option<i64>, call_id: &str) {
        let id = self.shared.id.clone();
        let task = match task_id {
            Some(t) => self.inner.memory.open_task(t),
            None => self.inner.memory.open_tasks(&id).into_iter().next(),
        };
        let Some(task) = task else {
            let what = task_id.map_or("no open task".to_string(), |t| format!("no open task {t}"));
            self.error(
                AgentErrorCode::InvalidAction,
                format!("{id} cannot complete a task: {what} ({call_id})"),
            );
            return;
        };
        if task.agent_id != id {
            self.error(
                AgentErrorCode::InvalidAction,
                format!(
                    "{id} cannot complete task {} : it belongs to {} ({call_id})",
                    task.id, task.agent_id
                ),
            );
            return;
        }
        if let Err(e) = self.inner.complete_task(task.id) {
            self.error(
                AgentErrorCode::InvalidAction,
                format!("{id} cannot complete task {}: {e} ({call_id})", task.id),
            );
        }
    }

    /// Moves to `to` if the state machine allows it: records the transition, publishes it.
    /// A refusal leaves the state as it is, is logged, and is published as `invalid_transition`.
    pub(super) fn transition(&self, to: AgentState) -> Result<(), crate::runtime::TransitionError> {
        let (from, position) = {
            let mut status = self.shared.status.lock();
            let from = status.state;
            if let Err(e) = from.transition_to(to) {
                drop(status);
                self.error(
                    AgentErrorCode::InvalidTransition,
                    format!("{}: {e}", self.shared.id),
                );
                return Err(e);
            }
            status.state = to;
            (from, status.position)
        };
        let id = &self.shared.id;
        self.inner.memory.record_state_change(id, from, to);
        self.inner.bus.publish(BusMessage::AgentStateChanged {
            agent_id: id.clone(),
            old_state: from,
            new_state: to,
            position,
            current_task: self
                .inner
                .memory
                .open_tasks(id)
                .into_iter()
                .next()
                .map(|t| t.task_name),
        });
        Ok(())
    }

    pub(super) fn error(&self, code: AgentErrorCode, message: String) {
        self.shared.warn(code.as_str(), &message);
        self.errors.borrow_mut().push(message.clone());
        self.inner.bus.publish(BusMessage::AgentError {
            agent_id: Some(self.shared.id.clone()),
            code,
            message,
        });
    }
}
