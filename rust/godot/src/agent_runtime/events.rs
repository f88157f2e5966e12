//! [AgentRuntime]'s events: the bus drained each frame, within its limits, and each message
//! emitted as its signal (speech deltas merged per agent when asked).

use std::time::Instant;

use agents_core::bus::{AgentErrorCode, BusMessage, Received};
use godot::prelude::*;

use super::AgentRuntime;
use super::agents::reply_to_dictionary;
use crate::convert;

/// One agent's speech pieces of a frame, merged ([member AgentRuntime.merge_speech_deltas]).
#[derive(Debug, PartialEq)]
struct MergedDelta {
    agent_id: String,
    text: String,
    seq: u64,
}

/// The merged speech pieces of one drain, in the order their agents first streamed.
#[derive(Default)]
struct MergedDeltas {
    /// `None` once taken.
    pieces: Vec<Option<MergedDelta>>,
    /// Agent id → its entry in `pieces`, while not taken.
    index: std::collections::HashMap<String, usize>,
}

impl MergedDeltas {
    /// Appends a piece to the agent's merged text (a new entry if it has none waiting).
    pub(super) fn push(&mut self, agent_id: &str, delta: &str, seq: u64) {
        if let Some(&i) = self.index.get(agent_id)
            && let Some(piece) = &mut self.pieces[i]
        {
            piece.text.push_str(delta);
            piece.seq = seq;
            return;
        }
        self.index.insert(agent_id.to_string(), self.pieces.len());
        self.pieces.push(Some(MergedDelta {
            agent_id: agent_id.to_string(),
            text: delta.to_string(),
            seq,
        }));
    }

    /// The agent's waiting text, if any; its next piece starts a new entry.
    pub(super) fn take(&mut self, agent_id: &str) -> Option<MergedDelta> {
        let i = self.index.remove(agent_id)?;
        self.pieces[i].take()
    }

    /// Every waiting text, in order.
    pub(super) fn take_all(&mut self) -> impl Iterator<Item = MergedDelta> + use<> {
        self.index.clear();
        std::mem::take(&mut self.pieces).into_iter().flatten()
    }
}

impl AgentRuntime {
    /// Emits up to `limit` queued events, stopping at `deadline` (the frame's drain budget);
    /// returns how many were taken from the queue. Re-checks
    /// the subscription before every event: a handler may stop the runtime. With
    /// [member merge_speech_deltas], an agent's speech pieces wait in [`MergedDeltas`] until its
    /// next event of another kind, or the end of the drain.
    pub(super) fn drain(&mut self, limit: usize, deadline: Option<Instant>) -> i64 {
        let mut count = 0i64;
        let mut done = 0usize;
        let mut merged = MergedDeltas::default();
        // At least one event a frame, however small the budget: the queue always moves.
        while done < limit && (done == 0 || deadline.is_none_or(|d| Instant::now() < d)) {
            let Some(subscription) = self.subscription.as_mut() else {
                break;
            };
            let Some(received) = subscription.try_recv() else {
                break;
            };
            done += 1;
            count += 1;
            if self.merge_speech_deltas {
                match &received {
                    Received::Message(envelope) => {
                        if let BusMessage::AgentSpeechDelta {
                            agent_id,
                            delta,
                            seq,
                        } = &envelope.message
                        {
                            merged.push(agent_id, delta, *seq);
                            continue;
                        }
                        if let Some(piece) =
                            envelope.message.agent_id().and_then(|id| merged.take(id))
                        {
                            self.emit_delta(&piece.agent_id, &piece.text, piece.seq);
                        }
                    }
                    Received::Lagged { .. } => {
                        for piece in merged.take_all() {
                            self.emit_delta(&piece.agent_id, &piece.text, piece.seq);
                        }
                    }
                }
            }
            self.emit(received);
        }
        for piece in merged.take_all() {
            self.emit_delta(&piece.agent_id, &piece.text, piece.seq);
        }
        count
    }

    pub(super) fn emit_delta(&mut self, agent_id: &str, delta: &str, seq: u64) {
        self.signals().agent_speech_delta().emit(
            agent_id,
            delta,
            i64::try_from(seq).unwrap_or(i64::MAX),
        );
        if self.nodes.contains_key(agent_id) {
            self.deliver_to_node(&BusMessage::AgentSpeechDelta {
                agent_id: agent_id.to_string(),
                delta: delta.to_string(),
                seq,
            });
        }
    }

    // Long on purpose: one arm per bus message, the exhaustive list of which signal each
    // becomes (a new message does not compile until it has its signal).
    pub(super) fn emit(&mut self, received: Received) {
        let envelope = match received {
            Received::Lagged { missed } => {
                let message = format!(
                    "the AgentRuntime's event queue overflowed: missed {missed} events (let the \
                     node process more often, or raise event_queue_capacity)"
                );
                self.signals()
                    .agent_error()
                    .emit("", AgentErrorCode::Lagged.as_str(), &message);
                return;
            }
            Received::Message(envelope) => envelope,
        };
        let v2 = convert::position_to_vector2;
        match &envelope.message {
            BusMessage::AgentSpawned {
                agent_id,
                name,
                role,
                position,
                ..
            } => self.signals().agent_spawned().emit(
                agent_id.as_str(),
                name.as_str(),
                role.as_str(),
                v2(*position),
            ),
            BusMessage::AgentRemoved { agent_id, reason } => self
                .signals()
                .agent_removed()
                .emit(agent_id.as_str(), reason.as_str()),
            BusMessage::AgentStateChanged {
                agent_id,
                old_state,
                new_state,
                ..
            } => self.signals().agent_state_changed().emit(
                agent_id.as_str(),
                old_state.as_str(),
                new_state.as_str(),
            ),
            BusMessage::AgentMoved { agent_id, from, to } => {
                self.signals()
                    .agent_moved()
                    .emit(agent_id.as_str(), v2(*from), v2(*to))
            }
            BusMessage::AgentMoveRequested {
                agent_id,
                move_id,
                from,
                to,
            } => self.signals().agent_move_requested().emit(
                agent_id.as_str(),
                i64::try_from(*move_id).unwrap_or(i64::MAX),
                v2(*from),
                v2(*to),
            ),
            BusMessage::AgentMoveFinished {
                agent_id,
                move_id,
                outcome,
                reason,
                ..
            } => self.signals().agent_move_finished().emit(
                agent_id.as_str(),
                i64::try_from(*move_id).unwrap_or(i64::MAX),
                outcome.as_str(),
                reason.as_deref().unwrap_or(""),
            ),
            BusMessage::AgentSpoke {
                agent_id,
                content,
                recipients,
                dialog_type,
                ..
            } => {
                let recipients = convert::strings_to_packed(recipients);
                self.signals().agent_said().emit(
                    agent_id.as_str(),
                    content.as_str(),
                    &recipients,
                    dialog_type.as_str(),
                );
                self.signals()
                    .agent_spoke()
                    .emit(agent_id.as_str(), content.as_str(), &recipients);
            }
            BusMessage::TaskAssigned {
                agent_id,
                task_id,
                task_name,
                ..
            } => {
                self.signals()
                    .task_assigned()
                    .emit(agent_id.as_str(), *task_id, task_name.as_str())
            }
            BusMessage::TaskCompleted {
                agent_id,
                task_id,
                task_name,
                ..
            } => self.signals().task_completed().emit(
                agent_id.as_str(),
                *task_id,
                task_name.as_str(),
            ),
            BusMessage::CollaborationRequested {
                agent_id,
                helper_id,
                task_name,
                ..
            } => self.signals().collaboration_requested().emit(
                agent_id.as_str(),
                helper_id.as_str(),
                task_name.as_str(),
            ),
            BusMessage::AgentError {
                agent_id,
                code,
                message,
            } => self.signals().agent_error().emit(
                agent_id.as_deref().unwrap_or(""),
                code.as_str(),
                message.as_str(),
            ),
            BusMessage::AgentSpeechDelta {
                agent_id,
                delta,
                seq,
            } => self.emit_delta(agent_id, delta, *seq),
            BusMessage::AgentToolCall {
                agent_id,
                tool,
                call_id,
            } => self.signals().agent_tool_call().emit(
                agent_id.as_str(),
                tool.as_str(),
                call_id.as_str(),
            ),
            BusMessage::ModelDownloadProgress {
                agent_id,
                url,
                received_bytes,
                total_bytes,
            } => self.signals().model_download_progress().emit(
                agent_id.as_str(),
                url.as_str(),
                *received_bytes as i64,
                total_bytes.map_or(-1, |t| t as i64),
            ),
            BusMessage::AgentReplied {
                agent_id,
                in_reply_to,
                ..
            } => {
                let ids: PackedInt64Array = in_reply_to.iter().copied().collect();
                let reply = reply_to_dictionary(&envelope.message);
                self.signals()
                    .agent_replied()
                    .emit(agent_id.as_str(), &ids, &reply);
            }
            BusMessage::AgentRemembered { agent_id, .. } => {
                let mut memory = convert::serialize_to_dictionary(&envelope.message);
                memory.remove("type");
                memory.remove("agent_id");
                self.signals()
                    .agent_remembered()
                    .emit(agent_id.as_str(), &memory);
            }
            BusMessage::AgentReflected {
                agent_id,
                memories,
                drawn_by,
            } => {
                let memories: Array<VarDictionary> = memories
                    .iter()
                    .map(convert::serialize_to_dictionary)
                    .collect();
                self.signals().agent_reflected().emit(
                    agent_id.as_str(),
                    &memories,
                    drawn_by.as_str(),
                );
            }
            BusMessage::CampaignChanged {
                campaign_id,
                turn_id,
                applied_actions,
                ..
            } => {
                let actions: VarArray = applied_actions
                    .iter()
                    .map(|a| convert::serialize_to_dictionary(a).to_variant())
                    .collect();
                self.signals().campaign_changed().emit(
                    campaign_id.as_str(),
                    turn_id.as_deref().unwrap_or(""),
                    &actions,
                );
            }
        }
        // Speech pieces reach the node through `emit_delta`.
        if !matches!(envelope.message, BusMessage::AgentSpeechDelta { .. }) {
            self.deliver_to_node(&envelope.message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(agent_id: &str, text: &str, seq: u64) -> MergedDelta {
        MergedDelta {
            agent_id: agent_id.into(),
            text: text.into(),
            seq,
        }
    }

    #[test]
    fn speech_pieces_merge_per_agent_in_first_streamed_order() {
        let mut merged = MergedDeltas::default();
        merged.push("agent_002", "Fre", 0);
        merged.push("agent_001", "Hel", 4);
        merged.push("agent_002", "sh ", 1);
        merged.push("agent_001", "lo", 5);
        merged.push("agent_002", "bread", 2);
        let all: Vec<MergedDelta> = merged.take_all().collect();
        assert_eq!(
            all,
            vec![
                piece("agent_002", "Fresh bread", 2),
                piece("agent_001", "Hello", 5)
            ]
        );
        assert_eq!(merged.take_all().count(), 0);
    }

    #[test]
    fn a_taken_agent_starts_a_new_piece_after_the_others() {
        let mut merged = MergedDeltas::default();
        merged.push("agent_001", "One", 0);
        merged.push("agent_002", "Two", 0);
        // agent_001's line is said: its text goes out first.
        assert_eq!(merged.take("agent_001"), Some(piece("agent_001", "One", 0)));
        assert_eq!(merged.take("agent_001"), None);
        merged.push("agent_001", "Next", 1);
        merged.push("agent_002", "!", 1);
        let all: Vec<MergedDelta> = merged.take_all().collect();
        assert_eq!(
            all,
            vec![piece("agent_002", "Two!", 1), piece("agent_001", "Next", 1)]
        );
    }
}
