//! How an agent decides: the context it is shown, the brain asked (read-only tool calls
//! answered and the brain asked again), and the decision's outcome.

use super::*;
use crate::tools::world::ground::MAX_LISTED_AGENTS;

/// What [`Agent::decide`] comes to: the plan (or why there is none), the journal entry so
/// far, and what the decision was shown (observations, the move's status), to mark as seen.
struct Decided {
    result: Result<(BrainReply, Plan), (AgentErrorCode, String)>,
    entry: Decision,
    seen_observations: u64,
    seen_move: Option<MoveStatus>,
}

impl Agent {
    /// Thinking: the decision loop, then the answer's execution.
    ///
    /// The brain answers; the answer is checked ([`decision::check`]). A refused answer goes
    /// back with its failure feedback to be repaired (at most `max_repairs` times, then the
    /// decision fails with `brain_invalid_reply` and nothing of it runs). An answer that only
    /// asks read-only tools something gets their results and continues (at most `max_steps`
    /// answers in all; the last is offered no read-only tools, so it acts). The final answer is
    /// executed. A message arriving while the brain thinks
    /// interrupts it: the brain call in flight is dropped, and the decision starts over with
    /// the message in context.
    pub(super) async fn think(&mut self) -> Outcome {
        let started = Instant::now();
        let Some(Decided {
            result,
            mut entry,
            seen_observations,
            seen_move,
        }) = self.decide().await
        else {
            return Outcome::Stopped;
        };
        self.decisions += 1;
        entry.latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (answering, inbox): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.pending).into_iter().unzip();
        self.acknowledged = 0;
        // Heard: remembered once the decision that answers them is made (before their inbox
        // rows are done, so a crash in between hears them again at resume, never loses them).
        // A request for help is remembered as the task it assigned.
        for message in &answering {
            if matches!(message.kind, IncomingKind::Speech) {
                let speaker = display_name(message);
                let text = forming::heard(&speaker, &message.content);
                let about = Some(message.sender.as_str());
                self.inner
                    .form(&self.shared, MemoryKind::Heard, text, about);
            }
        }
        self.remember_app_events();
        let mut failure = None;
        let outcome = match result {
            Ok((reply, plan)) => {
                self.failures = 0;
                self.last_failure = None;
                self.execute(reply, plan, &answering, &mut entry).await
            }
            Err((code, message)) => {
                entry.failure = Some(format!("{}: {message}", code.as_str()));
                failure = Some(ReplyFailure {
                    code,
                    message: message.clone(),
                });
                self.failures = self.failures.saturating_add(1);
                let message = format!("{} could not decide: {message}", self.shared.id);
                if code == AgentErrorCode::BudgetExhausted && self.last_failure == Some(code) {
                    // Reported when it was spent; quiet until it is raised.
                    tracing::debug!(agent = %self.shared.id, "{message}");
                } else {
                    self.error(code, message);
                }
                self.last_failure = Some(code);
                let _ = self.transition(AgentState::Idle);
                Outcome::Idle(error_backoff(self.failures, self.shared.idle_think))
            }
        };
        // Shown to this decision's brain (a failed one's too): not shown again.
        self.shared.forget_observations(seen_observations);
        if let Some(seen) = &seen_move {
            self.shared.move_seen(seen);
        }
        let in_reply_to: Vec<i64> = inbox.into_iter().flatten().collect();
        if !in_reply_to.is_empty() {
            self.inner.bus.publish(BusMessage::AgentReplied {
                agent_id: self.shared.id.clone(),
                in_reply_to: in_reply_to.clone(),
                text: entry.spoken.join("\n"),
                actions: entry.calls.clone(),
                error: failure,
            });
        }
        self.shared.journal.record(entry);
        // Answered (or failed with an error event): not delivered again after a restart.
        for id in in_reply_to {
            self.inner.memory.inbox_done(id);
        }
        outcome
    }

    /// Asks the brain until its answer is a plan to carry out: an answer that breaks the
    /// contract is repaired (up to `max_repairs`), one that only reads (read-only tools) is
    /// answered and the brain asked again (up to `max_steps`), a line heard meanwhile restarts
    /// the decision with it. `None`: the agent was stopped.
    async fn decide(&mut self) -> Option<Decided> {
        let mut entry;
        let mut seen_observations;
        let mut seen_move;
        let result = 'decision: loop {
            seen_observations = self.shared.last_observation();
            seen_move = self.shared.move_status();
            let (mut context, tools) = self.context_base();
            context.movement = seen_move.clone();
            let trigger = if context.incoming.is_empty() {
                Trigger::Autonomous
            } else {
                Trigger::Message
            };
            // Its context is summed up once the first question read the memory into it.
            entry = Decision::start(self.decisions + 1, trigger, String::new());
            let mut repairs = 0;
            let mut answers = 0;
            let mut first = true;
            loop {
                if answers + 1 >= self.inner.options.max_steps {
                    context.withhold_reads();
                }
                let (reply, returned) = match self.ask(context, first).await {
                    Asked::Stopped => return None,
                    Asked::Interrupted => {
                        // Listen, acknowledge, then decide again with the message in context.
                        if self.transition(AgentState::Listening).is_ok() {
                            self.acknowledge();
                            let _ = self.transition(AgentState::Thinking);
                        }
                        continue 'decision;
                    }
                    Asked::Answered(reply, context) => (reply, context),
                };
                context = *returned;
                if first {
                    entry.context = context_summary(&context);
                    if let Some(recollection) = context.sections.get::<Recollection>() {
                        entry.recalled = recollection.recalled.clone();
                    }
                }
                first = false;
                if let Some(mut call) = self.brain.take_call_report() {
                    call.agent_id = self.shared.id.clone();
                    call.repairs = repairs;
                    entry.count_model_call(&call);
                    self.inner.memory.record_brain_call(call);
                }
                entry.repairs = repairs;
                let reply = match reply {
                    Ok(reply) => reply,
                    Err(e) => {
                        let brain = &self.shared.brain;
                        self.shared
                            .warn("brain_failed", format_args!("brain {brain}: {e}"));
                        break 'decision Err((e.agent_error_code(), e.public_message()));
                    }
                };
                let checked = decision::check(&reply, &tools, &self.tool_context())
                    .and_then(|plan| self.acts(&reply, plan, answers, &context.due_tools));
                if let Err(feedback) = &checked {
                    entry.push_rejected(&reply, &feedback.failed_calls);
                }
                match checked {
                    Err(feedback) if repairs < self.inner.options.max_repairs => {
                        repairs += 1;
                        tracing::debug!(
                            agent = %self.shared.id,
                            repairs,
                            "repairing an answer: {}",
                            decision::summary(&feedback)
                        );
                        context.steps.push(*feedback);
                    }
                    Err(feedback) => {
                        break 'decision Err((
                            AgentErrorCode::BrainInvalidReply,
                            format!(
                                "the answer still breaks the contract after {repairs} repairs: {}",
                                decision::summary(&feedback)
                            ),
                        ));
                    }
                    Ok(plan) => {
                        answers += 1;
                        if plan.only_reads() && answers < self.inner.options.max_steps {
                            let step = self.answer_reads(reply, &plan, &mut entry).await;
                            context.steps.push(step);
                            continue;
                        }
                        break 'decision Ok((reply, plan));
                    }
                }
            }
        };
        Some(Decided {
            result,
            entry,
            seen_observations,
            seen_move,
        })
    }

    /// What a checked answer must do beyond the contract, else it is sent back for repair:
    ///
    /// - the decision's last answer (the `max_steps`-th) is offered no read-only tools
    ///   ([`BrainContext::withhold_reads`]); one that still only asks them something is refused
    ///   like any call of a tool not offered: its look-ups are over, it must act;
    /// - while an app action is due (`due`: the agent's move), an answer that is not only
    ///   look-ups must call one of them.
    fn acts(
        &self,
        reply: &BrainReply,
        plan: Plan,
        answers: u32,
        due: &[String],
    ) -> Result<Plan, Box<DecisionStep>> {
        let steps = self.inner.options.max_steps;
        let last = answers + 1 >= steps;
        let refuse = |calls: Vec<FailedCall>, problem: Option<String>| {
            Err(Box::new(DecisionStep {
                reply: reply.clone(),
                results: Vec::new(),
                failed_calls: calls,
                problem,
            }))
        };
        if plan.only_reads() {
            if !last {
                return Ok(plan);
            }
            let why = format!(
                "no more look-ups in this decision ({steps} answers at most): act now with what \
                 you found (a move, a line, an action)"
            );
            return refuse(
                plan.calls
                    .iter()
                    .map(|(call, _)| FailedCall::new(call, FailureReason::ToolNotAllowed, &why))
                    .collect(),
                None,
            );
        }
        if due.is_empty() || plan.calls.iter().any(|(call, _)| due.contains(&call.tool)) {
            return Ok(plan);
        }
        refuse(
            Vec::new(),
            Some(format!(
                "it is your move: the answer must call {} (it may say something too)",
                due.join(" or ")
            )),
        )
    }

    /// Runs the read-only calls of `plan` (all it asks), journals them, and gives the step the
    /// brain is shown next: its answer and their results.
    async fn answer_reads(
        &mut self,
        reply: BrainReply,
        plan: &Plan,
        entry: &mut Decision,
    ) -> DecisionStep {
        let results = Agent::run_reads(plan, self.tool_context()).await;
        let reads = plan
            .calls
            .iter()
            .filter(|(_, planned)| matches!(planned, Planned::Tool { .. }));
        for ((call, _), result) in reads.zip(&results) {
            let outcome = if result.is_error {
                CallOutcome::Failed
            } else {
                CallOutcome::Done
            };
            entry.push_call(call, outcome, Some(clip(&result.result.to_string())));
        }
        DecisionStep {
            reply,
            results,
            ..DecisionStep::default()
        }
    }

    /// Asks the brain, interruptibly. The first question of a decision also reads the
    /// conversation memory (committed rows only) into the context, and recalls memories
    /// ([`crate::mind::recall`]): a recall that fails is logged, and the decision goes on
    /// without it.
    pub(super) async fn ask(&mut self, mut context: BrainContext, read_memory: bool) -> Asked {
        let memory = self.inner.memory.clone();
        let settings = self.shared.memory.clone();
        let now = self.inner.game_time();
        let embedder = self.inner.embedder.clone();
        let brain = &mut self.brain;
        let decide = async move {
            if read_memory {
                let id = context.agent_id.clone();
                let query = recall::query_of(&context);
                let people = recall::people_of(&context);
                let shown = recall::shown_of(&context);
                let lines = recall::lines_of(&context);
                let recalls = settings.enabled && settings.recall_limit > 0;
                // By meaning too, when an endpoint answers in time.
                let queries = match &embedder {
                    Some(e) if recalls && settings.semantic_weight > 0.0 => {
                        e.query(&crate::runtime::embedder::recall_texts(&query, &lines))
                            .await
                    }
                    _ => None,
                };
                let read = tokio::task::spawn_blocking(move || {
                    let rows = memory.recent_conversation_committed(&id, CONTEXT_MESSAGES)?;
                    // Nothing to recall into (memory off, or a recall limit of 0): no read.
                    if !recalls {
                        return Ok((rows, None));
                    }
                    let meaning = embedder
                        .zip(queries)
                        .and_then(|(e, queries)| e.meaning(&memory, &id, queries));
                    let cue = Cue {
                        query,
                        now,
                        wait_for_writes: false,
                        people,
                        shown,
                        lines,
                        meaning,
                        in_view: rows
                            .iter()
                            .map(|r| (r.sender.clone(), r.content.clone()))
                            .collect(),
                    };
                    let recalled = recall::recall(&memory, &id, &cue, &settings).inspect(|list| {
                        let shown: Vec<i64> = list
                            .iter()
                            .filter(|r| !r.in_view)
                            .map(|r| r.memory.id)
                            .collect();
                        if !shown.is_empty() {
                            memory.touch_memories(&id, shown, now);
                        }
                    });
                    Ok::<_, crate::memory::MemoryError>((rows, Some(recalled)))
                })
                .await;
                match read {
                    Ok(Ok((rows, recalled))) => {
                        context.recent_messages = rows;
                        match recalled {
                            Some(Ok(recalled)) => {
                                context.sections.put(Recollection { recalled, now })
                            }
                            Some(Err(e)) => {
                                tracing::warn!(agent = %context.agent_id, "recalling memories: {e}")
                            }
                            None => {}
                        }
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(agent = %context.agent_id, "reading conversation memory: {e}")
                    }
                    Err(e) => {
                        tracing::warn!(agent = %context.agent_id, "reading conversation memory: {e}")
                    }
                }
            }
            // A brain is code of its own (a registered one may be the game's): its panic is this
            // decision's failure, never the end of the agent's task.
            let reply = match AssertUnwindSafe(brain.decide(&context))
                .catch_unwind()
                .await
            {
                Ok(reply) => reply,
                Err(panic) => {
                    tracing::error!(
                        agent = %context.agent_id,
                        "the brain panicked: {}",
                        crate::tools::panic_message(&*panic)
                    );
                    Err(BrainError::Backend(
                        "the brain panicked (the server's log has its message)".into(),
                    ))
                }
            };
            (reply, context)
        };
        tokio::pin!(decide);
        loop {
            tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return Asked::Stopped,
                received = self.sub.recv() => match received {
                    None => return Asked::Stopped,
                    Some(r) => if take(&self.inner, &self.shared, &mut self.pending, r) {
                        return Asked::Interrupted;
                    },
                },
                (reply, context) = &mut decide => return Asked::Answered(reply, Box::new(context)),
            }
        }
    }

    /// Runs the read-only calls of `plan` and collects their results for the brain.
    ///
    /// A free function of the plan and the context: `&Agent` is not `Sync` (its brain is not).
    pub(super) async fn run_reads(plan: &Plan, ctx: ToolContext) -> Vec<CallResult> {
        let mut results = Vec::with_capacity(plan.calls.len());
        for (call, planned) in &plan.calls {
            let Planned::Tool { registry, .. } = planned else {
                continue;
            };
            let output = registry
                .call_async(&call.tool, call.args.clone(), ctx.clone())
                .await
                .unwrap_or_else(|e| e.to_output());
            results.push(CallResult {
                id: call.id.clone(),
                tool: call.tool.clone(),
                result: output.structured,
                is_error: output.is_error,
            });
        }
        results
    }

    pub(super) fn tool_context(&self) -> ToolContext {
        ToolContext::for_agent(self.shared.id.clone(), self.cancel.child_token())
    }

    /// The context of a decision starting now, and the tools it offers: the agent's tools
    /// ([`AgentShared::decision_tools`], its app's set read with the app's view the context
    /// shows) with the world tools grounded in what the context shows ([`Agent::grounded`]).
    pub(super) fn context_base(&self) -> (BrainContext, Arc<AgentTools>) {
        let app = self.shared.app().map(|app| app.view_with_tools());
        let tools = self
            .shared
            .decision_tools(app.as_ref().map(|(_, offered)| offered));
        let (_, position) = self.shared.state_and_position();
        let mut open = self.inner.memory.open_tasks(&self.shared.id).into_iter();
        let current_task = open.next();
        let nearby = self
            .inner
            .world
            .nearby(
                &self.shared.id,
                position,
                self.shared.hearing_radius,
                NEARBY_LIMIT,
            )
            .into_iter()
            .map(|(agent_id, placed, distance)| NearbyAgent {
                agent_id,
                name: placed.name,
                role: placed.role,
                position: placed.position,
                distance,
            })
            .collect();
        let mut context = BrainContext {
            agent_id: self.shared.id.clone(),
            name: self.shared.name.clone(),
            role: self.shared.role.clone(),
            prompt: self.shared.prompt.clone(),
            instruction: INSTRUCTION.into(),
            position,
            bounds: self.inner.options.bounds,
            current_task,
            other_tasks: open.collect(),
            recent_messages: Vec::new(),
            observations: self.shared.observations(),
            // Set by `think`, which remembers what it showed.
            movement: None,
            incoming: self.pending.iter().map(|(m, _)| m.clone()).collect(),
            nearby,
            player_id: self.inner.options.player_id.clone(),
            decisions: self.decisions,
            // Grounded below.
            tools: Vec::new(),
            read_only_tools: tools.read_only_names().to_vec(),
            final_tools: Vec::new(),
            due_tools: Vec::new(),
            steps: Vec::new(),
            sections: Default::default(),
        };
        if let Some((view, _)) = app {
            context.due_tools = view.due.clone();
            context.sections.put(view);
        }
        let tools = self.grounded(tools, &context);
        context.tools = tools.definitions().to_vec();
        context.final_tools = decision::final_tools(&tools);
        (context, tools)
    }

    /// `tools` with the world set (when attached) grounded in what exists for the decision
    /// `context` is for ([`Ground`]): it can address whoever it answers, the player and the
    /// agents it can ask; it can ask the running agents, those it answers and those near it
    /// first, then the others by id; its open tasks, the current first; the world bounds. The
    /// last decision's grounded set is reused while what it is grounded in is the same.
    fn grounded(&self, tools: Arc<AgentTools>, context: &BrainContext) -> Arc<AgentTools> {
        if tools.set(WORLD_TOOLS).is_none() {
            return tools;
        }
        let answering: Vec<String> = context.incoming.iter().map(|m| m.sender.clone()).collect();
        let near: Vec<String> = answering
            .iter()
            .cloned()
            .chain(context.nearby.iter().map(|n| n.agent_id.clone()))
            .filter(|id| self.inner.is_running(id))
            .collect();
        // The first ids that can still make the list (some repeat `near`, one is its own): in
        // a world of thousands, only those are sorted.
        let wanted = MAX_LISTED_AGENTS + near.len() + 1;
        let mut others: Vec<String> = self.inner.agents.read().keys().cloned().collect();
        if others.len() > wanted {
            others.select_nth_unstable(wanted);
            others.truncate(wanted);
        }
        others.sort_unstable();
        let tasks = context
            .current_task
            .iter()
            .chain(&context.other_tasks)
            .map(|t| t.id);
        let ground = Ground::new(
            &self.shared.id,
            &answering,
            &context.player_id,
            near.into_iter().chain(others),
            tasks,
            context.bounds,
        );
        let registry = {
            let mut last = self.grounded.borrow_mut();
            match last.as_ref() {
                Some((before, registry)) if *before == ground => registry.clone(),
                _ => {
                    let registry = Arc::new(ground.registry());
                    *last = Some((ground, registry.clone()));
                    registry
                }
            }
        };
        match tools.replaced(WORLD_TOOLS, &registry) {
            Ok(grounded) => Arc::new(grounded),
            // The grounded set has the world tools' names (or fewer): it cannot clash.
            Err(_) => tools,
        }
    }
}
