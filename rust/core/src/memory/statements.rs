//! What each queued write runs, written once for both backends: its statements, in order, each
//! as SQL with numbered parameters (`?1`, `?2`, …; PostgreSQL's `$1`, `$2`, … are derived by
//! [`dollar_parameters`]) and the values to bind. A backend's writer only executes them (SQLite
//! one cached statement after another, PostgreSQL pipelined), so a new kind of write — a new
//! table — is one entry here, not one per backend.
//!
//! The SQL is the dialect both databases speak: `INSERT … ON CONFLICT (…) DO UPDATE SET … =
//! excluded.…`, `DELETE … WHERE id <= (SELECT … LIMIT 1 OFFSET ?)`. Id reservations
//! ([`Op::IdBlock`]) are SQLite's alone: PostgreSQL claims ids in `id_blocks` itself, outside the
//! writer, because several processes share the table.

use super::writer::Op;

/// A value bound to a statement's parameter.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Param<'a> {
    /// Text (PostgreSQL escapes U+0000 as it goes out: [`super`]'s `postgres::text`).
    Text(&'a str),
    /// Text or NULL.
    MaybeText(Option<&'a str>),
    /// A whole number (`INTEGER` / `BIGINT`).
    Int(i64),
    /// A floating-point number (`REAL` / `DOUBLE PRECISION`).
    Real(f64),
    /// Text made for the statement (a JSON array).
    Owned(String),
    /// Bytes (`BLOB` / `BYTEA`).
    Blob(&'a [u8]),
}

/// One statement of a write.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Statement<'a> {
    /// Its SQL, parameters numbered `?1`, `?2`, …
    pub sql: &'static str,
    /// The values of its parameters, in order.
    pub params: Vec<Param<'a>>,
}

/// An unsigned count as a signed 64-bit integer (saturating).
fn count(value: u64) -> Param<'static> {
    Param::Int(i64::try_from(value).unwrap_or(i64::MAX))
}

fn text(value: &str) -> Param<'_> {
    Param::Text(value)
}

fn maybe(value: &Option<String>) -> Param<'_> {
    Param::MaybeText(value.as_deref())
}

fn statement<'a>(sql: &'static str, params: Vec<Param<'a>>) -> Statement<'a> {
    Statement { sql, params }
}

const INSERT_CONVERSATION: &str =
    "INSERT INTO agent_conversations (agent_id, timestamp, sender, content, recipient)
     VALUES (?1, ?2, ?3, ?4, ?5)";

/// Removes an app's rows of one kind (`?1`, `?2`) older than its newest `?3`: the row `?3`
/// places back from the newest and every row before it (the index `idx_app_log` walks them).
const PRUNE_APP_LOG: &str = "DELETE FROM app_log WHERE app_id = ?1 AND kind = ?2 AND id <= (
     SELECT id FROM app_log WHERE app_id = ?1 AND kind = ?2 ORDER BY id DESC LIMIT 1 OFFSET ?3)";

/// The statements `op` runs, in order.
// Long on purpose: one arm per write operation, the complete table of the SQL each runs (read
// side by side with the schema's migrations).
pub(crate) fn statements(op: &Op) -> Vec<Statement<'_>> {
    use Param::{Int, Real};
    match op {
        Op::Conversation {
            agent_id,
            timestamp,
            sender,
            content,
            recipient,
        } => vec![statement(
            INSERT_CONVERSATION,
            vec![
                text(agent_id),
                text(timestamp),
                text(sender),
                text(content),
                maybe(recipient),
            ],
        )],
        Op::StateChange {
            agent_id,
            old,
            new,
            timestamp,
            process,
        } => vec![statement(
            "INSERT INTO agent_state_history (agent_id, old_state, new_state, timestamp, process)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            vec![
                text(agent_id),
                text(old.as_str()),
                text(new.as_str()),
                text(timestamp),
                maybe(process),
            ],
        )],
        Op::AssignTask {
            id,
            agent_id,
            task_name,
            created_at,
        } => vec![statement(
            "INSERT INTO agent_tasks (id, agent_id, task_name, status, created_at, completed_at)
             VALUES (?1, ?2, ?3, 'assigned', ?4, NULL)",
            vec![Int(*id), text(agent_id), text(task_name), text(created_at)],
        )],
        Op::CompleteTask { id, completed_at } => vec![statement(
            "UPDATE agent_tasks SET status = 'completed', completed_at = ?2
             WHERE id = ?1 AND status = 'assigned'",
            vec![Int(*id), text(completed_at)],
        )],
        Op::SaveAgent(a) => vec![statement(
            "INSERT INTO agents (agent_id, seq, name, role, prompt, brain, config, x, y, state,
                                 created_at, updated_at, removed_at, agent_key)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
             ON CONFLICT (agent_id) DO UPDATE SET
                 name = excluded.name, role = excluded.role, prompt = excluded.prompt,
                 brain = excluded.brain, config = excluded.config, x = excluded.x,
                 y = excluded.y, state = excluded.state, updated_at = excluded.updated_at,
                 removed_at = excluded.removed_at, agent_key = excluded.agent_key",
            vec![
                text(&a.agent_id),
                Int(a.seq),
                text(&a.name),
                text(&a.role),
                text(&a.prompt),
                text(&a.brain),
                text(&a.config),
                Real(a.x),
                Real(a.y),
                text(a.state.as_str()),
                text(&a.created_at),
                text(&a.updated_at),
                maybe(&a.removed_at),
                maybe(&a.key),
            ],
        )],
        Op::AgentPosition {
            agent_id,
            x,
            y,
            state,
            updated_at,
        } => vec![statement(
            "UPDATE agents SET x = ?2, y = ?3, state = ?4, updated_at = ?5 WHERE agent_id = ?1",
            vec![
                text(agent_id),
                Real(*x),
                Real(*y),
                text(state.as_str()),
                text(updated_at),
            ],
        )],
        Op::AgentRemoved {
            agent_id,
            removed_at,
        } => vec![statement(
            "UPDATE agents SET removed_at = ?2, updated_at = ?2 WHERE agent_id = ?1",
            vec![text(agent_id), text(removed_at)],
        )],
        Op::BrainCall(call) => {
            let super::BrainCall {
                agent_id,
                provider,
                model,
                started_at,
                latency_ms,
                input_tokens,
                output_tokens,
                cached_tokens,
                outcome,
                repairs,
                error_code,
                prompt,
                reply,
            } = &**call;
            vec![statement(
                "INSERT INTO brain_calls (agent_id, provider, model, started_at, latency_ms,
                     input_tokens, output_tokens, cached_tokens, outcome, repairs, error_code,
                     prompt, reply)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                vec![
                    text(agent_id),
                    text(provider),
                    maybe(model),
                    text(started_at),
                    count(*latency_ms),
                    count(*input_tokens),
                    count(*output_tokens),
                    count(*cached_tokens),
                    text(outcome.as_str()),
                    Int(i64::from(*repairs)),
                    maybe(error_code),
                    maybe(prompt),
                    maybe(reply),
                ],
            )]
        }
        Op::App(row) => {
            let super::AppRow {
                app_id,
                agent_id,
                mode,
                control_mode,
                role_prompt,
                human_label,
                state,
                actions,
                updated_at,
            } = &**row;
            vec![statement(
                "INSERT INTO app_sessions (app_id, agent_id, mode, control_mode, role_prompt,
                     human_label, state, actions, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (app_id) DO UPDATE SET
                     agent_id = excluded.agent_id, mode = excluded.mode,
                     control_mode = excluded.control_mode, role_prompt = excluded.role_prompt,
                     human_label = excluded.human_label, state = excluded.state,
                     actions = excluded.actions, updated_at = excluded.updated_at",
                vec![
                    text(app_id),
                    maybe(agent_id),
                    text(mode),
                    text(control_mode),
                    text(role_prompt),
                    maybe(human_label),
                    text(state),
                    text(actions),
                    text(updated_at),
                ],
            )]
        }
        // Only the newest MAX_APP_LOG_ROWS of the app's rows of this kind are kept.
        Op::AppLog {
            app_id,
            kind,
            entry,
        } => vec![
            statement(
                "INSERT INTO app_log (app_id, kind, entry) VALUES (?1, ?2, ?3)",
                vec![text(app_id), text(kind.as_str()), text(entry)],
            ),
            statement(
                PRUNE_APP_LOG,
                vec![
                    text(app_id),
                    text(kind.as_str()),
                    count(crate::limits::MAX_APP_LOG_ROWS as u64),
                ],
            ),
        ],
        Op::ArenaGame {
            tournament,
            game_index,
            game,
            result,
            record,
        } => vec![statement(
            "INSERT INTO arena_games (tournament, game_index, game, result, record)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            vec![
                text(tournament),
                Int(i64::from(*game_index)),
                text(game),
                text(result),
                text(record),
            ],
        )],
        Op::CampaignTurn {
            campaign_id,
            turn_id,
            entry,
        } => vec![statement(
            "INSERT INTO campaign_turns (campaign_id, turn_id, entry) VALUES (?1, ?2, ?3)",
            vec![text(campaign_id), text(turn_id), text(entry)],
        )],
        Op::IdBlock { kind, to, release } => vec![statement(
            if *release {
                "INSERT INTO id_blocks (kind, reserved_to) VALUES (?1, ?2)
                 ON CONFLICT (kind) DO UPDATE SET reserved_to = excluded.reserved_to"
            } else {
                "INSERT INTO id_blocks (kind, reserved_to) VALUES (?1, ?2)
                 ON CONFLICT (kind) DO UPDATE SET
                     reserved_to = MAX(reserved_to, excluded.reserved_to)"
            },
            vec![text(kind.as_str()), Int(*to)],
        )],
        // A line to answer is kept in the inbox until answered, and is a line of the
        // conversation at once.
        Op::Inbox(line) => vec![
            statement(
                "INSERT INTO agent_inbox (id, agent_id, sender, content, dialog_type, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                vec![
                    Int(line.id),
                    text(&line.agent_id),
                    text(&line.sender),
                    text(&line.content),
                    text(&line.dialog_type),
                    text(&line.created_at),
                ],
            ),
            statement(
                INSERT_CONVERSATION,
                vec![
                    text(&line.agent_id),
                    text(&line.created_at),
                    text(&line.sender),
                    text(&line.content),
                    text(&line.agent_id),
                ],
            ),
        ],
        Op::InboxDone { id } => vec![statement(
            "DELETE FROM agent_inbox WHERE id = ?1",
            vec![Int(*id)],
        )],
        Op::Memories { lines, .. } => lines.iter().flat_map(memory_statements).collect(),
        Op::Compact {
            summary,
            summarised,
            ..
        } => memory_statements(summary)
            .chain(
                summarised
                    .iter()
                    .flat_map(|id| forget_statements(*id, &summary.agent_id)),
            )
            .collect(),
        // Each backend's sink indexes memories its own way (SQLite: `SqliteSink`).
        Op::IndexMemories => Vec::new(),
        Op::TouchMemories {
            agent_id,
            ids,
            game_time,
        } => ids
            .iter()
            .map(|id| {
                statement(
                    "UPDATE memories SET accessed_at = ?1 WHERE id = ?2 AND agent_id = ?3",
                    vec![Real(*game_time), Int(*id), text(agent_id)],
                )
            })
            .collect(),
        Op::Rate { agent_id, ratings } => ratings
            .iter()
            .map(|(id, importance)| {
                statement(
                    "UPDATE memories SET importance = ?1 WHERE agent_id = ?2 AND id = ?3",
                    vec![
                        Param::Int(i64::from(*importance)),
                        text(agent_id),
                        Param::Int(*id),
                    ],
                )
            })
            .collect(),
        Op::ForgetMemory { agent_id, id } => forget_statements(*id, agent_id).collect(),
        // A vector is stored only while its memory is (one forgotten or summed up while it was
        // being embedded gets none).
        Op::Vectors {
            agent_id,
            model,
            vectors,
        } => vectors
            .iter()
            .map(|(id, vector)| {
                statement(
                    "INSERT INTO memory_vectors (memory_id, agent_id, model, vector)
                     SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (
                         SELECT 1 FROM memories WHERE id = ?1 AND agent_id = ?2)
                     ON CONFLICT (memory_id) DO UPDATE SET
                         agent_id = excluded.agent_id, model = excluded.model,
                         vector = excluded.vector",
                    vec![Int(*id), text(agent_id), text(model), Param::Blob(vector)],
                )
            })
            .collect(),
    }
}

/// The ids of the memories of agent `?1` beyond its ceiling `?2`, when it has more than that:
/// its memories in the order they are kept, all but the first `?2`. Kept first: the ones the
/// agent's newest write of the batch stores (id `?3` and above) — the write being made always
/// lands; then
/// what the agent made of its memories (insights, relationships, summaries: the kinds
/// [`super::MemoryKind::is_derived`] names), the most important first, then the newest; last,
/// what happened to it, in the importance bands compaction sums it up by
/// ([`crate::mind::compaction::IMPORTANCE_BARS`]: above 6, 5 and 6, up to 4), the newest first
/// within a band. So what goes first is what a compaction would sum up first (the oldest and
/// least important of what happened to it), then the least important and oldest of the rest.
macro_rules! beyond_ceiling {
    () => {
        "SELECT id FROM memories
     WHERE agent_id = ?1 AND (SELECT COUNT(*) FROM memories WHERE agent_id = ?1) > ?2
     ORDER BY
         CASE WHEN id >= ?3 THEN 0
              WHEN kind IN ('insight', 'relationship', 'summary') THEN 1
              ELSE 2 END,
         CASE WHEN id >= ?3 THEN 0
              WHEN kind IN ('insight', 'relationship', 'summary') THEN importance
              WHEN importance > 6 THEN 2
              WHEN importance > 4 THEN 1
              ELSE 0 END DESC,
         id DESC
     LIMIT 9223372036854775807 OFFSET ?2"
    };
}

/// Forgets the vectors of the memories `beyond_ceiling!` selects.
const FORGET_VECTORS_BEYOND_CEILING: &str = concat!(
    "DELETE FROM memory_vectors WHERE agent_id = ?1 AND memory_id IN (",
    beyond_ceiling!(),
    ")"
);

/// Forgets the memories `beyond_ceiling!` selects.
const FORGET_BEYOND_CEILING: &str = concat!(
    "DELETE FROM memories WHERE agent_id = ?1 AND id IN (",
    beyond_ceiling!(),
    ")"
);

/// One agent a batch wrote memories of, and the ceiling its newest write there asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ceiling<'a> {
    /// The agent.
    pub agent_id: &'a str,
    /// Its `max_memories` (the newest write's in the batch; 0: no ceiling).
    pub max_memories: usize,
    /// The first memory id of its newest write (kept whatever the ceiling).
    pub first_id: i64,
    /// Memories the batch adds to it, in all (an upper bound on how much it grew).
    pub added: usize,
}

impl<'a> Ceiling<'a> {
    /// The statements that forget what is beyond the ceiling (`beyond_ceiling!`), as
    /// [`Op::ForgetMemory`] forgets: the memory's vector, then its row (and with it its place
    /// in the keyword index). They count the agent's memories first, and do nothing when it
    /// is within its ceiling.
    pub(crate) fn statements(self) -> [Statement<'a>; 2] {
        let params = vec![
            text(self.agent_id),
            count(self.max_memories as u64),
            Param::Int(self.first_id),
        ];
        [
            statement(FORGET_VECTORS_BEYOND_CEILING, params.clone()),
            statement(FORGET_BEYOND_CEILING, params),
        ]
    }
}

/// The agents a batch wrote memories of that have a ceiling, in the order first written: run
/// each one's [`Ceiling::statements`] after the batch's writes, in the same transaction, and a
/// committed batch never leaves an agent above its ceiling (the `max_memories` of its newest
/// write there). The batch's earlier writes of the agent rank as any older memory does.
pub(crate) fn ceilings(batch: &[super::writer::Queued]) -> Vec<Ceiling<'_>> {
    let mut agents: Vec<Ceiling<'_>> = Vec::new();
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for queued in batch {
        let (lines, max_memories) = match &queued.op {
            Op::Memories {
                lines,
                max_memories,
            } => (lines.as_slice(), *max_memories),
            Op::Compact {
                summary,
                max_memories,
                ..
            } => (std::slice::from_ref(summary), *max_memories),
            _ => continue,
        };
        // An op's memories are one agent's, their ids handed out together.
        let (Some(line), Some(first_id)) = (lines.first(), lines.iter().map(|l| l.id).min()) else {
            continue;
        };
        let agent_id = line.agent_id.as_str();
        let added = match at.get(agent_id) {
            Some(&index) => agents[index].added,
            None => {
                at.insert(agent_id, agents.len());
                agents.push(Ceiling {
                    agent_id,
                    max_memories,
                    first_id,
                    added: 0,
                });
                0
            }
        };
        agents[at[agent_id]] = Ceiling {
            agent_id,
            max_memories,
            first_id,
            added: added + lines.len(),
        };
    }
    agents.retain(|c| c.max_memories > 0);
    agents
}

/// A memory deleted, with its vector.
fn forget_statements(id: i64, agent_id: &str) -> impl Iterator<Item = Statement<'_>> {
    [
        statement(
            "DELETE FROM memory_vectors WHERE memory_id = ?1 AND agent_id = ?2",
            vec![Param::Int(id), text(agent_id)],
        ),
        statement(
            "DELETE FROM memories WHERE id = ?1 AND agent_id = ?2",
            vec![Param::Int(id), text(agent_id)],
        ),
    ]
    .into_iter()
}

/// A memory's row, and the rows it supersedes marked.
fn memory_statements(line: &super::writer::MemoryLine) -> impl Iterator<Item = Statement<'_>> {
    use Param::{Int, Real};
    let memory = &line.memory;
    let insert = Statement {
        sql: "INSERT INTO memories (id, agent_id, kind, text, importance, about, sources,
                  game_time, created_at)
              VALUES (?9, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params: vec![
            text(&line.agent_id),
            text(memory.kind.as_str()),
            text(&memory.text),
            Int(i64::from(memory.importance)),
            Param::MaybeText(memory.about.as_deref()),
            Param::Owned(sources_json(&memory.sources)),
            Real(memory.game_time),
            text(&line.created_at),
            Int(line.id),
        ],
    };
    std::iter::once(insert).chain(memory.supersedes.iter().map(|old| {
        statement(
            "UPDATE memories SET superseded_by = ?1 WHERE agent_id = ?2 AND id = ?3",
            vec![Int(line.id), text(&line.agent_id), Int(*old)],
        )
    }))
}

/// A memory's sources as stored: a JSON array of ids (`[]` for none).
fn sources_json(sources: &[i64]) -> String {
    serde_json::to_string(sources).unwrap_or_else(|_| "[]".into())
}

/// `sql` with its `?N` parameters written `$N` (PostgreSQL's spelling). The statements here
/// hold no `?` elsewhere (no string literal has one).
#[cfg(any(feature = "postgres", test))]
pub(crate) fn dollar_parameters(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_state::AgentState;

    #[test]
    fn parameters_are_renumbered_for_postgres() {
        assert_eq!(
            dollar_parameters("UPDATE t SET a = ?2, b = ?10 WHERE id = ?1"),
            "UPDATE t SET a = $2, b = $10 WHERE id = $1"
        );
    }

    /// Every statement binds as many values as its highest parameter number, and no SQL keeps
    /// a `?` that is not a parameter.
    #[test]
    fn every_statement_binds_each_of_its_parameters() {
        let agent = super::super::writer::SaveAgent {
            agent_id: "agent_001".into(),
            seq: 1,
            name: "Mira".into(),
            role: "baker".into(),
            prompt: String::new(),
            brain: "scripted".into(),
            config: "{}".into(),
            x: 1.0,
            y: 2.0,
            state: AgentState::Idle,
            created_at: "t".into(),
            updated_at: "t".into(),
            removed_at: None,
            key: None,
        };
        let ops = [
            Op::Conversation {
                agent_id: "a".into(),
                timestamp: "t".into(),
                sender: "s".into(),
                content: "c".into(),
                recipient: None,
            },
            Op::SaveAgent(Box::new(agent)),
            Op::CompleteTask {
                id: 1,
                completed_at: "t".into(),
            },
            Op::InboxDone { id: 3 },
        ];
        for op in &ops {
            for s in statements(op) {
                let highest = (1..=20)
                    .rev()
                    .find(|n| s.sql.contains(&format!("?{n}")))
                    .unwrap_or(0);
                assert_eq!(s.params.len(), highest, "{}", s.sql);
                assert!(!dollar_parameters(s.sql).contains('?'), "{}", s.sql);
            }
        }
    }
}
