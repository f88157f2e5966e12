//! Bus messages as protocol events, and per-connection event filters.

use std::collections::HashSet;

use super::{EVENT_TYPES, ServerMessage};
use crate::bus::BusMessage;

/// The protocol event for a bus message (`agent_state_changed` becomes the spec's
/// `agent_state_update`, `agent_spoke` becomes `agent_speech`).
pub fn event_message(message: &BusMessage) -> ServerMessage {
    match message.clone() {
        BusMessage::AgentSpawned {
            agent_id,
            name,
            role,
            position,
            state,
            resumed,
        } => ServerMessage::AgentSpawned {
            agent_id,
            name,
            role,
            position,
            state,
            resumed,
        },
        BusMessage::AgentRemoved { agent_id, reason } => {
            ServerMessage::AgentRemoved { agent_id, reason }
        }
        BusMessage::AgentStateChanged {
            agent_id,
            old_state,
            new_state,
            position,
            current_task,
        } => ServerMessage::AgentStateUpdate {
            agent_id,
            state: new_state,
            old_state,
            position,
            current_task,
        },
        BusMessage::AgentMoved { agent_id, from, to } => {
            ServerMessage::AgentMoved { agent_id, from, to }
        }
        BusMessage::AgentSpoke {
            agent_id,
            content,
            recipients,
            dialog_type,
            inbox_id: _,
        } => ServerMessage::AgentSpeech {
            agent_id,
            content,
            recipients,
            dialog_type,
        },
        BusMessage::TaskAssigned {
            agent_id,
            task_id,
            task_name,
            assigned_by,
        } => ServerMessage::TaskAssigned {
            agent_id,
            task_id,
            task_name,
            assigned_by,
        },
        BusMessage::TaskCompleted {
            agent_id,
            task_id,
            task_name,
            completed_at,
        } => ServerMessage::TaskCompleted {
            agent_id,
            task_id,
            task_name,
            completed_at,
        },
        BusMessage::CollaborationRequested {
            agent_id,
            helper_id,
            task_id,
            task_name,
            message,
        } => ServerMessage::CollaborationRequested {
            agent_id,
            helper_id,
            task_id,
            task_name,
            message,
        },
        BusMessage::AgentError {
            agent_id,
            code,
            message,
        } => ServerMessage::AgentError {
            agent_id,
            code,
            message,
        },
        BusMessage::AgentSpeechDelta {
            agent_id,
            delta,
            seq,
        } => ServerMessage::AgentSpeechDelta {
            agent_id,
            delta,
            seq,
        },
        BusMessage::AgentToolCall {
            agent_id,
            tool,
            call_id,
        } => ServerMessage::AgentToolCall {
            agent_id,
            tool,
            call_id,
        },
        BusMessage::CampaignChanged {
            campaign_id,
            turn_id,
            applied_actions,
            effects,
        } => ServerMessage::CampaignChanged {
            campaign_id,
            turn_id,
            applied_actions,
            effects,
        },
    }
}

/// The event type name a bus message becomes.
pub fn event_type(message: &BusMessage) -> &'static str {
    match message {
        BusMessage::AgentSpawned { .. } => "agent_spawned",
        BusMessage::AgentRemoved { .. } => "agent_removed",
        BusMessage::AgentStateChanged { .. } => "agent_state_update",
        BusMessage::AgentMoved { .. } => "agent_moved",
        BusMessage::AgentSpoke { .. } => "agent_speech",
        BusMessage::TaskAssigned { .. } => "task_assigned",
        BusMessage::TaskCompleted { .. } => "task_completed",
        BusMessage::CollaborationRequested { .. } => "collaboration_requested",
        BusMessage::AgentError { .. } => "agent_error",
        BusMessage::AgentSpeechDelta { .. } => "agent_speech_delta",
        BusMessage::AgentToolCall { .. } => "agent_tool_call",
        BusMessage::CampaignChanged { .. } => "campaign_changed",
    }
}

/// Which events one connection receives (`subscribe`). The default receives everything.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventFilter {
    /// Event types; `None` = all.
    pub events: Option<HashSet<String>>,
    /// Agents; `None` = all. An event matches when it is about one of them, or addressed to one.
    pub agents: Option<HashSet<String>>,
}

impl EventFilter {
    /// Builds a filter from a `subscribe` request; an unknown event type is an error naming it.
    pub fn new(events: Option<Vec<String>>, agents: Option<Vec<String>>) -> Result<Self, String> {
        if let Some(list) = &events {
            for e in list {
                if !EVENT_TYPES.contains(&e.as_str()) {
                    return Err(format!(
                        "unknown event type '{e}' (events: {})",
                        EVENT_TYPES.join(", ")
                    ));
                }
            }
        }
        Ok(EventFilter {
            events: events.map(|v| v.into_iter().collect()),
            agents: agents.map(|v| v.into_iter().collect()),
        })
    }

    /// Whether the connection receives this bus message.
    pub fn matches(&self, message: &BusMessage) -> bool {
        if let Some(events) = &self.events
            && !events.contains(event_type(message))
        {
            return false;
        }
        match &self.agents {
            None => true,
            // A campaign's change is about no agent: an agents filter does not hold it back.
            Some(_) if matches!(message, BusMessage::CampaignChanged { .. }) => true,
            Some(agents) => {
                message.agent_id().is_some_and(|a| agents.contains(a))
                    || message.recipients().iter().any(|r| agents.contains(r))
                    || matches!(message, BusMessage::CollaborationRequested { helper_id, .. } if agents.contains(helper_id))
            }
        }
    }

    /// The filter as sorted lists, for `subscribe_response`.
    pub fn describe(&self) -> (Option<Vec<String>>, Option<Vec<String>>) {
        let sorted = |s: &HashSet<String>| {
            let mut v: Vec<String> = s.iter().cloned().collect();
            v.sort();
            v
        };
        (
            self.events.as_ref().map(sorted),
            self.agents.as_ref().map(sorted),
        )
    }
}
