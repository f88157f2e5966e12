//! Bus messages as protocol events, and per-connection event filters.

use std::collections::HashSet;

use super::{EVENT_TYPES, ServerMessage};
use crate::bus::BusMessage;

/// The protocol event for a bus message: the message itself (its `type` is its wire name).
pub fn event_message(message: &BusMessage) -> ServerMessage {
    ServerMessage::Event(message.clone())
}

/// The event type name of a bus message ([`crate::bus::MessageKind::as_str`]).
pub fn event_type(message: &BusMessage) -> &'static str {
    message.kind().as_str()
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
