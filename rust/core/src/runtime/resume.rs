//! Resuming the stored agents, one by one: an agent that cannot start now (its brain object's
//! own key is not stored, the brain it names is not configured any more, its model file is
//! gone, …) waits, stored, with the reason, and the others run.
//!
//! [`Runtime::resume_all`] returns what it resumed and what waits ([`Resumed`]); the waiting
//! agents stay listed ([`Runtime::waiting_agents`], [`Runtime::waiting_for`], the protocol's
//! `list_stored_agents` as [`StoredAgent::waiting_for`], `/readyz` as counts) until one of them
//! is spawned with its id again and starts — given what it lacked, such as its brain object
//! with its key — or is terminated.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Runtime, RuntimeError, RuntimeErrorCode};
use crate::brain::BrainError;
use crate::bus::BusMessage;
use crate::memory::AgentRecord;

crate::wire_enum! {
    /// Why a stored agent did not resume: what it waits for.
    #[derive(PartialOrd, Ord)]
    pub enum WaitReason: "wait reason" {
        /// `api_key`: its brain object brought its own key, which is never stored; spawning its
        /// id with the brain object and its `api_key` again starts it.
        ApiKey = "api_key",
        /// `brain`: the brain it names (a profile of `--brains`, a registered brain) is not
        /// configured any more.
        Brain = "brain",
        /// `model_file`: its `local` brain's model file is not there.
        ModelFile = "model_file",
        /// `other`: anything else its start failed with (the message says what).
        Other = "other",
    }
}

impl WaitReason {
    /// The reason a start that failed with `error` waits for.
    pub fn of(error: &RuntimeError) -> WaitReason {
        match error {
            RuntimeError::Brain(BrainError::KeyNotStored) => WaitReason::ApiKey,
            RuntimeError::Brain(BrainError::Unknown { .. }) => WaitReason::Brain,
            RuntimeError::Brain(BrainError::ModelFileMissing(_)) => WaitReason::ModelFile,
            _ => WaitReason::Other,
        }
    }
}

/// What a stored agent that did not resume waits for: the reason and the error its start
/// failed with (the text a spawn of its id answers; it names fields and paths, never a key).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Waiting {
    /// What it waits for.
    pub reason: WaitReason,
    /// Why its start failed, in words.
    pub message: String,
}

/// A stored agent that did not resume.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitingAgent {
    /// Its id.
    pub agent_id: String,
    /// The code of the error its start failed with.
    pub code: RuntimeErrorCode,
    /// What it waits for.
    pub waiting: Waiting,
}

/// What [`Runtime::resume_all`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resumed {
    /// The agents that run again, by id.
    pub running: Vec<String>,
    /// The agents that could not start, by id, each with what it waits for.
    pub waiting: Vec<WaitingAgent>,
}

/// A stored agent as `list_stored_agents` shows it: the stored record and, when its resume
/// could not start it, what it waits for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StoredAgent {
    /// The stored record.
    #[serde(flatten)]
    pub record: AgentRecord,
    /// Set when a resume could not start it: what it waits for. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<Waiting>,
}

impl Runtime {
    /// Resumes every stored agent that was not terminated and is not running, each on its own:
    /// one that cannot start stays stored and waits ([`Runtime::waiting_agents`]), logged at
    /// WARN with its reason, and the others run. An error only when the runtime is shut down
    /// or the stored agents cannot be read.
    pub fn resume_all(&self) -> Result<Resumed, RuntimeError> {
        self.check_open()?;
        let mut resumed = Resumed::default();
        for record in self.inner.memory.agents()? {
            if record.removed_at.is_some() || self.is_running(&record.agent_id) {
                continue;
            }
            let config = super::AgentConfig {
                agent_id: Some(record.agent_id.clone()),
                ..Default::default()
            };
            match self.spawn(config) {
                Ok(id) => resumed.running.push(id),
                Err(RuntimeError::ShutDown) => return Err(RuntimeError::ShutDown),
                // Started by someone else in between.
                Err(RuntimeError::AlreadyRunning(_)) => {}
                Err(error) => {
                    let waiting = Waiting {
                        reason: WaitReason::of(&error),
                        message: error.to_string(),
                    };
                    tracing::warn!(
                        agent = %record.agent_id,
                        reason = %waiting.reason,
                        "not resumed; it stays stored and waits: {}",
                        waiting.message
                    );
                    self.inner
                        .waiting
                        .write()
                        .insert(record.agent_id.clone(), waiting.clone());
                    resumed.waiting.push(WaitingAgent {
                        agent_id: record.agent_id,
                        code: error.code(),
                        waiting,
                    });
                }
            }
        }
        Ok(resumed)
    }

    /// The stored agents a resume could not start, by id, with what each waits for.
    pub fn waiting_agents(&self) -> Vec<(String, Waiting)> {
        let mut waiting: Vec<(String, Waiting)> = self
            .inner
            .waiting
            .read()
            .iter()
            .map(|(id, w)| (id.clone(), w.clone()))
            .collect();
        waiting.sort_by(|a, b| super::id_order(&a.0, &b.0));
        waiting
    }

    /// What a stored agent waits for, when a resume could not start it.
    pub fn waiting_for(&self, agent_id: &str) -> Option<Waiting> {
        self.inner.waiting.read().get(agent_id).cloned()
    }

    /// A page of the stored agents by agent number (see [`crate::memory::Memory::agents_page`]),
    /// each with what it waits for when a resume could not start it.
    pub fn stored_agents_page(
        &self,
        after: Option<i64>,
        limit: usize,
    ) -> Result<crate::memory::Page<StoredAgent>, RuntimeError> {
        let page = self.inner.memory.agents_page(after, limit)?;
        let waiting = self.inner.waiting.read();
        Ok(crate::memory::Page {
            rows: page
                .rows
                .into_iter()
                .map(|record| StoredAgent {
                    waiting_for: waiting.get(&record.agent_id).cloned(),
                    record,
                })
                .collect(),
            next: page.next,
        })
    }

    /// Terminates a waiting agent: it is marked terminated in the database (a resume skips it)
    /// and subscribers get `AgentRemoved` with reason `terminated`. `false` when it does not
    /// wait.
    pub(super) fn terminate_waiting(&self, agent_id: &str) -> bool {
        if self.inner.waiting.write().remove(agent_id).is_none() {
            return false;
        }
        self.inner.memory.mark_agent_removed(agent_id);
        self.inner.bus.publish(BusMessage::AgentRemoved {
            agent_id: agent_id.to_string(),
            reason: super::Removal::Terminated.as_str().into(),
        });
        true
    }
}
