//! Running agents as an application steers them: pausing, placing and observing them, finishing
//! the moves the game carries out, stopping them, and their snapshots.

use super::*;

impl Runtime {
    /// Pauses (`true`) or resumes a running agent's autonomous loop. A paused agent makes no
    /// decision of its own — its idle time passes, its app's news waits — but still listens
    /// and answers when spoken to. Resuming makes it decide at once. Not stored: a restarted
    /// agent runs.
    pub fn set_paused(&self, agent_id: &str, paused: bool) -> Result<(), RuntimeError> {
        self.check_open()?;
        self.running(agent_id)?.set_paused(paused);
        Ok(())
    }

    /// Sets where a running agent is, as the game sees it: a game that moves its characters
    /// itself (physics, navigation) reports their positions, and "who is near me" (hearing,
    /// the brain's `nearby`) uses them. Nothing is published (a game may report every frame);
    /// the position is stored when the agent stops. Any finite position is accepted: the
    /// runtime's world bounds limit its own moves, not the game's.
    pub fn set_position(&self, agent_id: &str, position: Position) -> Result<(), RuntimeError> {
        self.check_open()?;
        if !position.is_finite() {
            return Err(RuntimeError::InvalidConfig(format!(
                "position must have finite x and y, got {position}"
            )));
        }
        let shared = self.running(agent_id)?;
        shared.set_position(position);
        self.inner.world.update_position(agent_id, position);
        Ok(())
    }

    /// Finishes a move the game carried out for a running agent (one it was asked for with
    /// `agent_move_requested`): it arrived, or it is blocked and why. Publishes
    /// `agent_move_finished`; the agent's next decision is told how the move ended. Errors:
    /// `unknown_agent`; `unknown_move` when the agent never asked for that move, or it was
    /// replaced by a newer one or finished already.
    pub fn finish_move(
        &self,
        agent_id: &str,
        move_id: u64,
        outcome: crate::moves::MoveOutcome,
    ) -> Result<(), RuntimeError> {
        self.check_open()?;
        let outcome = crate::moves::MoveOutcome::from_parts(outcome.end(), outcome.reason())
            .map_err(RuntimeError::InvalidMessage)?;
        let shared = self.running(agent_id)?;
        let request = shared.end_move(move_id, outcome.clone())?;
        let text = crate::mind::forming::walked(&request.to.to_string(), outcome.reason());
        self.inner
            .form(&shared, crate::memory::MemoryKind::Did, text, None);
        self.inner.bus.publish(BusMessage::AgentMoveFinished {
            agent_id: agent_id.to_string(),
            move_id,
            to: request.to,
            outcome: outcome.end(),
            reason: outcome.reason().map(str::to_string),
        });
        Ok(())
    }

    /// Tells a running agent what it perceives ("The cellar door is locked.", "Smoke rises
    /// from the bakery."): the line is shown to its next decision (not a message: it does not
    /// make the agent decide, nor is it answered). At most 32 wait;
    /// the oldest goes first. It becomes a memory as it is, so it is at most
    /// [`crate::limits::MAX_OBSERVATION_CHARS`] (a memory's length); a longer one is refused
    /// with `invalid_message` naming the limit, and nothing is kept.
    pub fn observe(&self, agent_id: &str, text: &str) -> Result<(), RuntimeError> {
        self.check_open()?;
        check_text("observation", text, crate::limits::MAX_OBSERVATION_CHARS)?;
        let shared = self.running(agent_id)?;
        shared.observe(text.trim().to_string());
        self.inner.form(
            &shared,
            crate::memory::MemoryKind::Observed,
            text.trim().to_string(),
            None,
        );
        Ok(())
    }

    /// [`Runtime::set_position`] for many agents at once, under one lock of each table (a game
    /// reporting all its characters every frame). Agents that do not run and positions that
    /// are not finite are skipped; returns how many were set.
    pub fn set_positions<'a>(&self, positions: &[(&'a str, Position)]) -> usize {
        if self.is_shut_down() {
            return 0;
        }
        let mut applied: Vec<(&'a str, Position)> = Vec::with_capacity(positions.len());
        {
            let agents = self.inner.agents.read();
            for &(agent_id, position) in positions {
                if let Some(entry) = agents.get(agent_id)
                    && position.is_finite()
                {
                    entry.shared.set_position(position);
                    applied.push((agent_id, position));
                }
            }
        }
        let count = applied.len();
        self.inner.world.update_positions(applied);
        count
    }

    /// Whether a running agent's autonomous loop is paused ([`Runtime::set_paused`]).
    pub fn is_paused(&self, agent_id: &str) -> Result<bool, RuntimeError> {
        Ok(self.running(agent_id)?.is_paused())
    }

    /// Terminates an agent gracefully: its task stops, its subscription closes, it is marked
    /// terminated in the database (so [`Runtime::resume_all`] skips it; spawning its id resumes
    /// it), and subscribers get `AgentRemoved` with reason `terminated`. A stored agent that
    /// waits ([`Runtime::waiting_agents`]) is terminated the same way.
    pub fn terminate(&self, agent_id: &str) -> Result<(), RuntimeError> {
        let entry = match self.remove_entry(agent_id) {
            Err(RuntimeError::UnknownAgent(_)) if self.terminate_waiting(agent_id) => {
                return Ok(());
            }
            entry => entry?,
        };
        entry.shared.set_removal(Removal::Terminated);
        self.inner.memory.mark_agent_removed(agent_id);
        entry.cancel.cancel();
        Ok(())
    }

    /// Stops an agent in this process without terminating it, as a shutdown stops it: its task
    /// stops, its position is saved, it stays resumable (by this process or another one), and
    /// subscribers get `AgentRemoved` with reason `shutdown`. For a world served by several
    /// processes, when this process no longer holds the agent's lease, or hands the agent to
    /// another process. The returned [`Stopped`] says when its task has ended.
    pub fn release(&self, agent_id: &str) -> Result<Stopped, RuntimeError> {
        let entry = self.remove_entry(agent_id)?;
        self.stop(agent_id, &entry);
        Ok(Stopped(entry.shared.stopped.clone()))
    }

    /// Takes a running agent out of the table (its task still runs until cancelled).
    pub(super) fn remove_entry(&self, agent_id: &str) -> Result<AgentEntry, RuntimeError> {
        self.check_open()?;
        self.inner
            .agents
            .write()
            .remove(agent_id)
            .ok_or_else(|| RuntimeError::UnknownAgent(agent_id.to_string()))
    }

    /// Stops a removed agent as a shutdown does: removal `shutdown`, its position saved, its
    /// task cancelled, out of the world, `AgentRemoved` published.
    pub(super) fn stop(&self, agent_id: &str, entry: &AgentEntry) {
        entry.shared.set_removal(Removal::Shutdown);
        let (state, position) = entry.shared.state_and_position();
        self.inner
            .memory
            .save_agent_position(agent_id, position, state);
        entry.cancel.cancel();
        self.inner.world.remove(agent_id);
        self.inner.bus.publish(BusMessage::AgentRemoved {
            agent_id: agent_id.to_string(),
            reason: Removal::Shutdown.as_str().into(),
        });
    }

    /// Whether an agent runs in this runtime (no snapshot taken).
    pub fn is_running(&self, agent_id: &str) -> bool {
        self.inner.is_running(agent_id)
    }

    /// A running agent's snapshot.
    pub fn state(&self, agent_id: &str) -> Option<AgentSnapshot> {
        let shared = self
            .inner
            .agents
            .read()
            .get(agent_id)
            .map(|e| e.shared.clone())?;
        Some(shared.snapshot(&self.inner.memory))
    }

    /// Every running agent, by id (`agent_002` before `agent_010` before `agent_1000`).
    pub fn list(&self) -> Vec<AgentSnapshot> {
        let shared: Vec<Arc<AgentShared>> = self
            .inner
            .agents
            .read()
            .values()
            .map(|e| e.shared.clone())
            .collect();
        let mut list: Vec<AgentSnapshot> = shared
            .iter()
            .map(|s| s.snapshot(&self.inner.memory))
            .collect();
        list.sort_by(|a, b| id_order(&a.agent_id, &b.agent_id));
        list
    }

    /// Ids of the running agents, in [`Runtime::list`] order.
    pub fn agent_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.inner.agents.read().keys().cloned().collect();
        ids.sort_by(|a, b| id_order(a, b));
        ids
    }

    /// Number of running agents.
    pub fn agent_count(&self) -> usize {
        self.inner.agents.read().len()
    }
}
