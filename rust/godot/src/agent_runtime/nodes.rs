//! [AgentRuntime]'s bound [AgentNode]s: their agents' events handed to them, and their bodies'
//! positions reported to their agents, a share of them each frame.

use super::AgentRuntime;
use agents_core::bus::BusMessage;
use agents_core::runtime::Position;
use godot::prelude::*;

impl AgentRuntime {
    /// Hands an event about an agent to its [AgentNode], if one spawned it; the node is gone
    /// from the table once its agent stopped.
    pub(super) fn deliver_to_node(&mut self, message: &BusMessage) {
        let Some(agent_id) = message.agent_id() else {
            return;
        };
        let Some(deliver) = self.nodes.get(agent_id).map(|b| b.deliver.clone()) else {
            return;
        };
        if matches!(message, BusMessage::AgentRemoved { .. }) {
            self.unbind_node(agent_id);
        }
        // The node's handlers may call back into this runtime.
        let reentrant = self.base_mut();
        let delivered = deliver(message);
        drop(reentrant);
        if !delivered {
            self.unbind_node(agent_id);
        }
    }

    /// Registers the [AgentNode] that spawned `agent_id`: its events go to it, and its body's
    /// position to the agent.
    pub(crate) fn bind_node(&mut self, agent_id: &str, node: crate::body::BoundNode) {
        if self.nodes.insert(agent_id.to_string(), node).is_none() {
            self.node_order.push(agent_id.to_string());
        }
    }

    /// Reports where the bodies of the [AgentNode]s' agents are (those that sync it) to their
    /// agents, when they moved: this frame's share of them, so that every body is read once
    /// per [member position_sync_interval].
    pub(super) fn sync_positions(&mut self, delta: f64) {
        let Some(runtime) = &self.runtime else {
            return;
        };
        let count = self.node_order.len();
        if count == 0 {
            return;
        }
        let share = if self.position_sync_interval > 0.0 && delta > 0.0 {
            let frames = (self.position_sync_interval / delta).max(1.0);
            ((count as f64 / frames).ceil() as usize).clamp(1, count)
        } else {
            count
        };
        let start = self.sync_cursor % count;
        self.sync_cursor = (start + share) % count;
        let (order, nodes) = (&self.node_order, &mut self.nodes);
        let mut moved: Vec<(&str, Position)> = Vec::with_capacity(share);
        for i in start..start + share {
            let agent_id = order[i % count].as_str();
            let Some(bound) = nodes.get_mut(agent_id) else {
                continue;
            };
            let Some(position) = bound.body_position() else {
                continue;
            };
            if bound.reported != Some(position) {
                bound.reported = Some(position);
                moved.push((agent_id, position));
            }
        }
        if !moved.is_empty() {
            runtime.set_positions(&moved);
            let (agent_id, at) = (moved[0].0.to_string(), moved[0].1);
            self.warn_outside_world(&agent_id, at);
        }
    }

    /// Warns, once per start, of a bound body outside [member world_bounds]: the world is
    /// likely in other units than the level (the default 100 × 100 in a level of pixels), and
    /// who hears whom follows the world.
    pub(super) fn warn_outside_world(&mut self, agent_id: &str, at: Position) {
        if self.warned_outside_world {
            return;
        }
        let r = self.world_bounds;
        let (x0, y0) = (f64::from(r.position.x), f64::from(r.position.y));
        let (x1, y1) = (x0 + f64::from(r.size.x), y0 + f64::from(r.size.y));
        if at.x >= x0 && at.x <= x1 && at.y >= y0 && at.y <= y1 {
            return;
        }
        self.warned_outside_world = true;
        godot_warn!(
            "the body of agent {agent_id}'s AgentNode is at ({}, {}), outside \
             AgentRuntime.world_bounds ({x0}, {y0}, {}, {}): set world_bounds to your level's \
             rectangle (in the bodies' units). Who hears whom (hearing_radius: {} now) and the \
             map agents are shown follow it.",
            at.x,
            at.y,
            r.size.x,
            r.size.y,
            self.hearing_radius()
        );
    }

    /// Forgets the node of `agent_id` (it left the tree, its agent stopped).
    pub(crate) fn unbind_node(&mut self, agent_id: &str) {
        if self.nodes.remove(agent_id).is_some() {
            self.node_order.retain(|id| id != agent_id);
        }
    }
}
