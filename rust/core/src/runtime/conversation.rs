//! What is said to agents and what they were asked to do, and what can be read of it: lines
//! from the player or an application, tasks, conversations, state histories, decisions and the
//! stored agents.

use super::*;

impl Runtime {
    /// Sends a line from the player (`options.player_id`) to an agent; returns its message id
    /// (see [`Runtime::send_message_from`]).
    pub fn send_message(&self, agent_id: &str, content: &str) -> Result<i64, RuntimeError> {
        self.send_message_from(&self.inner.options.player_id, agent_id, content)
    }

    /// Sends a line from `sender` (the player, an agent, any id) to a running agent. It is
    /// published as `AgentSpoke` addressed to the agent (dialog type `player` when the sender is the
    /// player, else `message`); the agent listens, acknowledges (records it) and answers.
    ///
    /// Returns the line's message id: the [`BusMessage::AgentReplied`] of the decision that
    /// answers it lists the id in `in_reply_to`.
    pub fn send_message_from(
        &self,
        sender: &str,
        agent_id: &str,
        content: &str,
    ) -> Result<i64, RuntimeError> {
        self.check_open()?;
        if sender.trim().is_empty() {
            return Err(RuntimeError::InvalidMessage(
                "sender must not be empty".into(),
            ));
        }
        check_text("message", content, MAX_MESSAGE_CHARS)?;
        crate::limits::check_chars("sender", sender, crate::limits::MAX_SENDER_CHARS)
            .map_err(RuntimeError::InvalidMessage)?;
        if !self.inner.agents.read().contains_key(agent_id) {
            return Err(RuntimeError::UnknownAgent(agent_id.to_string()));
        }
        let dialog_type = if sender == self.inner.options.player_id {
            "player"
        } else {
            "message"
        };
        let (inbox_id, _) =
            self.inner
                .memory
                .send_to_inbox(agent_id, sender, content, dialog_type)?;
        self.inner.bus.publish(BusMessage::AgentSpoke {
            agent_id: sender.to_string(),
            content: content.to_string(),
            recipients: vec![agent_id.to_string()],
            dialog_type: dialog_type.into(),
            inbox_id: Some(inbox_id),
        });
        Ok(inbox_id)
    }

    /// Assigns a task to a running agent (row `assigned`; `TaskAssigned` from the player id).
    /// The agent works on its oldest open task.
    pub fn assign_task(&self, agent_id: &str, task_name: &str) -> Result<TaskRow, RuntimeError> {
        self.check_open()?;
        check_text("task_name", task_name, MAX_TASK_NAME_CHARS)?;
        if !self.inner.agents.read().contains_key(agent_id) {
            return Err(RuntimeError::UnknownAgent(agent_id.to_string()));
        }
        Ok(self
            .inner
            .assign_task(agent_id, task_name.trim(), &self.inner.options.player_id)?)
    }

    /// Completes an open task (row `completed` with its completion time; `TaskCompleted`).
    pub fn complete_task(&self, task_id: i64) -> Result<TaskRow, RuntimeError> {
        self.check_open()?;
        Ok(self.inner.complete_task(task_id)?)
    }

    /// An agent's conversation memory (last `limit` lines, oldest first); works for stored agents
    /// that are not running too.
    pub fn conversation(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<ConversationRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self.inner.memory.recent_conversation(agent_id, limit)?)
    }

    /// An agent's tasks, open and completed, oldest first.
    pub fn tasks(&self, agent_id: &str) -> Result<Vec<TaskRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self.inner.memory.tasks(agent_id)?)
    }

    /// An agent's state history (last `limit`, oldest first).
    pub fn state_history(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<StateChangeRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self.inner.memory.state_history(agent_id, limit)?)
    }

    /// A page of an agent's conversation (see [`Memory::conversation_page`]).
    pub fn conversation_page(
        &self,
        agent_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Page<ConversationRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self
            .inner
            .memory
            .conversation_page(agent_id, before, limit)?)
    }

    /// A page of an agent's state history (see [`Memory::state_history_page`]).
    pub fn state_history_page(
        &self,
        agent_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Page<StateChangeRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self
            .inner
            .memory
            .state_history_page(agent_id, before, limit)?)
    }

    /// A page of an agent's tasks (see [`Memory::tasks_page`]).
    pub fn tasks_page(
        &self,
        agent_id: &str,
        after: Option<i64>,
        limit: usize,
    ) -> Result<Page<TaskRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self.inner.memory.tasks_page(agent_id, after, limit)?)
    }

    pub(super) fn known(&self, agent_id: &str) -> Result<(), RuntimeError> {
        if self.inner.agents.read().contains_key(agent_id)
            || self.inner.memory.agent(agent_id)?.is_some()
        {
            Ok(())
        } else {
            Err(RuntimeError::UnknownAgent(agent_id.to_string()))
        }
    }

    /// Every agent stored in the database (running or not), by id.
    pub fn stored_agents(&self) -> Result<Vec<AgentRecord>, RuntimeError> {
        let mut agents = self.inner.memory.agents()?;
        agents.sort_by(|a, b| id_order(&a.agent_id, &b.agent_id));
        Ok(agents)
    }

    /// The last `limit` model calls of an agent (running or stored), oldest first: the
    /// `brain_calls` trace (timings, tokens, outcome, repairs, error code; prompts only when its
    /// brain keeps them). Read-your-writes, like every read.
    pub fn agent_trace(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<crate::memory::BrainCallRow>, RuntimeError> {
        Ok(self.agent_trace_page(agent_id, None, limit)?.rows)
    }

    /// A page of an agent's model calls, as [`Runtime::state_history_page`].
    pub fn agent_trace_page(
        &self,
        agent_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Page<crate::memory::BrainCallRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self
            .inner
            .memory
            .brain_calls_page(agent_id, before, limit)?)
    }

    /// A running agent's last decisions (at most [`JOURNAL_LENGTH`]), oldest first: the context
    /// it decided on, its calls and what came of each, what it said, its brain's latency and
    /// tokens. Kept in memory only (see [`journal`]).
    pub fn recent_decisions(&self, agent_id: &str) -> Result<Vec<Decision>, RuntimeError> {
        Ok(self.running(agent_id)?.journal.recent())
    }
}
