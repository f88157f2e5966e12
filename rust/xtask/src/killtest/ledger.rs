//! Every write the server acknowledged, over all rounds of a run, and the ids it reused.
//!
//! An id is *reused* when a reply hands out an agent id or a task id that an earlier reply
//! (this round or any earlier one) already handed out — whether or not the first row survived.
//! A completion that comes back naming a different agent or task name than the task id was
//! acknowledged with is a reuse too: the client completed someone else's task.

use std::collections::{BTreeMap, HashSet};

use agents_core::memory::TaskRow;

/// An acknowledged spawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentAck {
    /// The name the client gave it (unique in a run).
    pub name: String,
    /// The round it was acknowledged in.
    pub round: u32,
}

/// An acknowledged task assignment (and whether its completion was acknowledged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskAck {
    /// The agent it was assigned to.
    pub agent_id: String,
    /// Its name (unique in a run).
    pub task_name: String,
    /// The round it was acknowledged in.
    pub round: u32,
    /// True once a `complete_task_response` for it arrived.
    pub completed: bool,
    /// True when the server said it was completed already (a completion whose reply was cut off
    /// by a kill): not an acknowledgement, but it must not be completed again.
    pub closed: bool,
}

/// An acknowledged `send_message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageAck {
    /// The agent spoken to.
    pub agent_id: String,
    /// The line (unique in a run).
    pub content: String,
    /// The round it was acknowledged in.
    pub round: u32,
}

/// Counts of acknowledged writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// `agent_spawn_response`s.
    pub agents: u64,
    /// `assign_task_response`s.
    pub tasks: u64,
    /// `complete_task_response`s.
    pub completions: u64,
    /// `send_message_response`s.
    pub messages: u64,
}

impl Counts {
    /// Every acknowledged row.
    pub fn rows(&self) -> u64 {
        self.agents + self.tasks + self.completions + self.messages
    }
}

/// The run's record of acknowledged writes.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Acknowledged agents by id (the first acknowledgement of an id).
    pub agents: BTreeMap<String, AgentAck>,
    /// Acknowledged tasks by id (the first acknowledgement of an id).
    pub tasks: BTreeMap<i64, TaskAck>,
    /// Acknowledged messages.
    pub messages: Vec<MessageAck>,
    /// Every acknowledgement, reused ids included.
    pub counts: Counts,
    /// One line per reuse found.
    pub reused: Vec<String>,
    /// Tasks the verifier found missing (never offered for completion again).
    pub lost_tasks: HashSet<i64>,
    /// Agents the verifier found missing (never addressed again).
    pub lost_agents: HashSet<String>,
}

impl Ledger {
    /// Records a spawn reply; false when the id was handed out before (a reuse, recorded).
    pub fn ack_spawn(&mut self, agent_id: &str, name: &str, round: u32) -> bool {
        self.counts.agents += 1;
        if let Some(first) = self.agents.get(agent_id) {
            self.reused.push(format!(
                "agent id {agent_id} handed out again in round {round} (for {name}); first for {} in round {}",
                first.name, first.round
            ));
            return false;
        }
        self.agents.insert(
            agent_id.to_string(),
            AgentAck {
                name: name.to_string(),
                round,
            },
        );
        true
    }

    /// Records an assignment reply; false when the task id was handed out before (a reuse,
    /// recorded).
    pub fn ack_assign(&mut self, task: &TaskRow, round: u32) -> bool {
        self.counts.tasks += 1;
        if let Some(first) = self.tasks.get(&task.id) {
            self.reused.push(format!(
                "task id {} handed out again in round {round} ({} for {}); first {} for {} in round {}",
                task.id, task.task_name, task.agent_id, first.task_name, first.agent_id, first.round
            ));
            return false;
        }
        self.tasks.insert(
            task.id,
            TaskAck {
                agent_id: task.agent_id.clone(),
                task_name: task.task_name.clone(),
                round,
                completed: false,
                closed: false,
            },
        );
        true
    }

    /// Records a completion reply for the task the client acknowledged as `expected`; a reply
    /// about another task is a reuse (recorded).
    pub fn ack_complete(&mut self, expected: i64, task: &TaskRow, round: u32) {
        self.counts.completions += 1;
        let Some(ack) = self.tasks.get_mut(&expected) else {
            self.reused.push(format!(
                "round {round}: completed task {expected}, which was never acknowledged"
            ));
            return;
        };
        if task.id != expected || task.agent_id != ack.agent_id || task.task_name != ack.task_name {
            self.reused.push(format!(
                "round {round}: completing task {expected} ({} for {}) completed task {} ({} for {}): someone else's task",
                ack.task_name, ack.agent_id, task.id, task.task_name, task.agent_id
            ));
            return;
        }
        ack.completed = true;
    }

    /// Marks a task the server reports as completed already (no acknowledgement of ours).
    pub fn close_task(&mut self, task_id: i64) {
        if let Some(ack) = self.tasks.get_mut(&task_id) {
            ack.closed = true;
        }
    }

    /// Records a `send_message_response`.
    pub fn ack_message(&mut self, agent_id: &str, content: &str, round: u32) {
        self.counts.messages += 1;
        self.messages.push(MessageAck {
            agent_id: agent_id.to_string(),
            content: content.to_string(),
            round,
        });
    }

    /// Acknowledged tasks of earlier rounds that are still open and present, for clients to
    /// complete after the restart (a client holding a task id from before the crash).
    pub fn open_tasks_before(&self, round: u32) -> Vec<i64> {
        self.tasks
            .iter()
            .filter(|(id, t)| {
                t.round < round && !t.completed && !t.closed && !self.lost_tasks.contains(id)
            })
            .map(|(id, _)| *id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use agents_core::memory::TaskStatus;

    use super::*;

    fn task(id: i64, agent: &str, name: &str) -> TaskRow {
        TaskRow {
            id,
            agent_id: agent.into(),
            task_name: name.into(),
            status: TaskStatus::Assigned,
            created_at: "2025-01-01T00:00:00.000Z".into(),
            completed_at: None,
        }
    }

    #[test]
    fn a_repeated_agent_id_is_a_reuse_even_across_rounds() {
        let mut l = Ledger::default();
        assert!(l.ack_spawn("agent_001", "a", 0));
        assert!(l.ack_spawn("agent_002", "b", 0));
        assert!(!l.ack_spawn("agent_001", "c", 1));
        assert_eq!(l.counts.agents, 3);
        assert_eq!(l.reused.len(), 1);
        assert!(l.reused[0].contains("agent_001"), "{}", l.reused[0]);
        assert_eq!(l.agents["agent_001"].name, "a", "the first ack is kept");
    }

    #[test]
    fn a_repeated_task_id_is_a_reuse() {
        let mut l = Ledger::default();
        assert!(l.ack_assign(&task(1, "agent_001", "t1"), 0));
        assert!(!l.ack_assign(&task(1, "agent_002", "t2"), 1));
        assert_eq!(l.reused.len(), 1);
        assert_eq!(l.counts.tasks, 2);
    }

    #[test]
    fn completing_someone_elses_task_is_a_reuse() {
        let mut l = Ledger::default();
        l.ack_assign(&task(5, "agent_001", "mine"), 0);
        l.ack_complete(5, &task(5, "agent_009", "theirs"), 1);
        assert_eq!(l.reused.len(), 1);
        assert!(!l.tasks[&5].completed);
        l.ack_complete(5, &task(5, "agent_001", "mine"), 1);
        assert!(l.tasks[&5].completed);
        assert_eq!(l.reused.len(), 1);
        assert_eq!(l.counts.completions, 2);
    }

    #[test]
    fn open_tasks_before_skip_completed_closed_lost_and_current() {
        let mut l = Ledger::default();
        for (id, round) in [(1, 0), (2, 0), (3, 0), (4, 0), (5, 1)] {
            l.ack_assign(&task(id, "agent_001", &format!("t{id}")), round);
        }
        l.ack_complete(1, &task(1, "agent_001", "t1"), 0);
        l.close_task(2);
        l.lost_tasks.insert(3);
        assert_eq!(l.open_tasks_before(1), vec![4]);
        assert_eq!(l.open_tasks_before(2), vec![4, 5]);
    }
}
