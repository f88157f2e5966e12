//! The reads of the memory, written once for both backends: each query is SQL with `?N`
//! parameters ([`super::statements`]'s convention) and one mapping of its rows to a row type,
//! read through [`StoredRow`]. A backend provides [`Database`] — run one query, hand each row to
//! the mapping — and gets every read of [`Queries`] from [`Reader`]. A stored string that does
//! not parse (an unknown state or task status, invalid JSON config) is an error, never a panic.

use super::migrations::Dialect;
use super::statements::Param;
use super::store::{self, Queries, limit_of, newest_first_page, oldest_first_page};
use super::stream::{FoundMemory, MemoryKind, StoredMemory};
use super::{
    AgentRecord, BrainCall, BrainCallRow, ConversationRow, InboxRow, MemoryError, Page,
    StateChangeRow, StoredApp, TaskRow,
};
use crate::geometry::Position;

/// The columns of one stored row, by index, as either backend reads them.
pub(crate) trait StoredRow {
    /// An integer column.
    fn int(&self, index: usize) -> Result<i64, MemoryError>;
    /// An integer column that may be NULL.
    fn maybe_int(&self, index: usize) -> Result<Option<i64>, MemoryError>;
    /// A floating-point column that may be NULL.
    fn real(&self, index: usize) -> Result<Option<f64>, MemoryError>;
    /// A text column.
    fn text(&self, index: usize) -> Result<String, MemoryError>;
    /// A bytes column.
    fn bytes(&self, index: usize) -> Result<Vec<u8>, MemoryError>;
    /// A text column that may be NULL.
    fn maybe_text(&self, index: usize) -> Result<Option<String>, MemoryError>;
}

/// A reading connection of a backend.
pub(crate) trait Database {
    /// Its SQL dialect (for the few queries the databases spell differently: full-text search).
    fn dialect(&self) -> Dialect;

    /// Runs `sql` (parameters `?1`, `?2`, …) with `params` and maps each row, in order.
    fn rows<T>(
        &mut self,
        sql: &'static str,
        params: &[Param<'_>],
        map: &mut dyn FnMut(&dyn StoredRow) -> Result<T, MemoryError>,
    ) -> Result<Vec<T>, MemoryError>;

    /// In how many memories each of `stems` (Porter stems, as the index holds words) is, in
    /// order (0: none). SQLite only (`memories_vocab`); a backend may answer from a cache, as
    /// the counts only choose which words a search looks for.
    fn term_docs(&mut self, stems: &[String]) -> Result<Vec<i64>, MemoryError>
    where
        Self: Sized,
    {
        count_terms(self, stems)
    }

    /// The first row of `sql`, mapped, if there is one.
    fn row<T>(
        &mut self,
        sql: &'static str,
        params: &[Param<'_>],
        map: &mut dyn FnMut(&dyn StoredRow) -> Result<T, MemoryError>,
    ) -> Result<Option<T>, MemoryError> {
        Ok(self.rows(sql, params, map)?.into_iter().next())
    }
}

/// A reading connection answering [`Queries`].
pub(crate) struct Reader<D>(pub D);

fn task_row(row: &dyn StoredRow) -> Result<TaskRow, MemoryError> {
    Ok(TaskRow {
        id: row.int(0)?,
        agent_id: row.text(1)?,
        task_name: row.text(2)?,
        status: store::parse_status(&row.text(3)?)?,
        created_at: row.text(4)?,
        completed_at: row.maybe_text(5)?,
    })
}

fn conversation_row(row: &dyn StoredRow) -> Result<ConversationRow, MemoryError> {
    Ok(ConversationRow {
        id: row.int(0)?,
        agent_id: row.text(1)?,
        timestamp: row.text(2)?,
        sender: row.text(3)?,
        content: row.text(4)?,
        recipient: row.maybe_text(5)?,
    })
}

fn state_change_row(row: &dyn StoredRow) -> Result<StateChangeRow, MemoryError> {
    Ok(StateChangeRow {
        id: row.int(0)?,
        agent_id: row.text(1)?,
        old_state: store::parse_state(&row.text(2)?)?,
        new_state: store::parse_state(&row.text(3)?)?,
        timestamp: row.text(4)?,
    })
}

/// Columns: `agent_id, name, role, prompt, brain, config, x, y, state, created_at, removed_at`.
fn agent_row(row: &dyn StoredRow) -> Result<AgentRecord, MemoryError> {
    // SQLite stores a NaN coordinate as NULL; it reads back as NaN.
    let x = row.real(6)?.unwrap_or(f64::NAN);
    let y = row.real(7)?.unwrap_or(f64::NAN);
    Ok(AgentRecord {
        agent_id: row.text(0)?,
        name: row.text(1)?,
        role: row.text(2)?,
        prompt: row.text(3)?,
        brain: row.text(4)?,
        config: store::parse_config(&row.text(5)?)?,
        position: Position::new(x, y),
        state: store::parse_state(&row.text(8)?)?,
        created_at: row.text(9)?,
        removed_at: row.maybe_text(10)?,
    })
}

/// A stored count (never negative) as an unsigned number.
fn count(row: &dyn StoredRow, index: usize) -> Result<u64, MemoryError> {
    Ok(u64::try_from(row.int(index)?).unwrap_or(0))
}

fn brain_call_row(row: &dyn StoredRow) -> Result<BrainCallRow, MemoryError> {
    Ok(BrainCallRow {
        id: row.int(0)?,
        call: BrainCall {
            agent_id: row.text(1)?,
            provider: row.text(2)?,
            model: row.maybe_text(3)?,
            started_at: row.text(4)?,
            latency_ms: count(row, 5)?,
            input_tokens: count(row, 6)?,
            output_tokens: count(row, 7)?,
            cached_tokens: count(row, 8)?,
            outcome: store::parse_outcome(&row.text(9)?)?,
            repairs: u32::try_from(row.int(10)?).unwrap_or(u32::MAX),
            error_code: row.maybe_text(11)?,
            prompt: row.maybe_text(12)?,
            reply: row.maybe_text(13)?,
        },
    })
}

fn inbox_row(row: &dyn StoredRow) -> Result<InboxRow, MemoryError> {
    Ok(InboxRow {
        id: row.int(0)?,
        agent_id: row.text(1)?,
        sender: row.text(2)?,
        content: row.text(3)?,
        dialog_type: row.text(4)?,
        created_at: row.text(5)?,
    })
}

/// A memory's columns, in [`memory_row`]'s order.
macro_rules! memory_columns {
    ($prefix:literal) => {
        concat!(
            $prefix,
            "id, ",
            $prefix,
            "agent_id, ",
            $prefix,
            "kind, ",
            $prefix,
            "text, ",
            $prefix,
            "importance, ",
            $prefix,
            "about, ",
            $prefix,
            "sources, ",
            $prefix,
            "game_time, ",
            $prefix,
            "created_at, ",
            $prefix,
            "accessed_at, ",
            $prefix,
            "superseded_by"
        )
    };
}

/// How many ids one read of [`Queries::memories_by_id`] asks for (its SQL has as many
/// parameters after the agent's id).
const BY_ID: usize = 32;

/// Columns: [`memory_columns`].
fn memory_row(row: &dyn StoredRow) -> Result<StoredMemory, MemoryError> {
    let kind = row.text(2)?;
    let sources = row.text(6)?;
    Ok(StoredMemory {
        id: row.int(0)?,
        agent_id: row.text(1)?,
        kind: kind
            .parse::<MemoryKind>()
            .map_err(|reason| super::rows::BadStored {
                what: "memory kind",
                text: kind.clone(),
                reason: reason.to_string(),
            })?,
        text: row.text(3)?,
        importance: u8::try_from(row.int(4)?.clamp(1, 10)).unwrap_or(1),
        about: row.maybe_text(5)?,
        sources: serde_json::from_str(&sources).map_err(|e| super::rows::BadStored {
            what: "memory sources",
            text: sources.clone(),
            reason: e.to_string(),
        })?,
        game_time: row.real(7)?.unwrap_or(0.0),
        created_at: row.text(8)?,
        accessed_at: row.real(9)?,
        superseded_by: row.maybe_int(10)?,
    })
}

fn first_text(row: &dyn StoredRow) -> Result<String, MemoryError> {
    row.text(0)
}

const TASKS_OF: &str = "SELECT id, agent_id, task_name, status, created_at, completed_at
     FROM agent_tasks WHERE agent_id = ?1 ORDER BY id ASC";

impl<D: Database> Queries for Reader<D> {
    fn recent_conversation(
        &mut self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<ConversationRow>, MemoryError> {
        self.0.rows(
            "SELECT id, agent_id, timestamp, sender, content, recipient FROM (
                 SELECT id, agent_id, timestamp, sender, content, recipient
                 FROM agent_conversations WHERE agent_id = ?1 ORDER BY id DESC LIMIT ?2
             ) AS recent ORDER BY id ASC",
            &[Param::Text(agent_id), Param::Int(limit_of(limit))],
            &mut conversation_row,
        )
    }

    fn conversation_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<ConversationRow>, MemoryError> {
        let rows = self.0.rows(
            "SELECT id, agent_id, timestamp, sender, content, recipient
             FROM agent_conversations WHERE agent_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
            &[
                Param::Text(agent_id),
                Param::Int(before),
                Param::Int(limit_of(limit.saturating_add(1))),
            ],
            &mut conversation_row,
        )?;
        Ok(newest_first_page(rows, limit, |r| r.id))
    }

    fn state_history(
        &mut self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<StateChangeRow>, MemoryError> {
        self.0.rows(
            "SELECT id, agent_id, old_state, new_state, timestamp FROM (
                 SELECT id, agent_id, old_state, new_state, timestamp
                 FROM agent_state_history WHERE agent_id = ?1 ORDER BY id DESC LIMIT ?2
             ) AS recent ORDER BY id ASC",
            &[Param::Text(agent_id), Param::Int(limit_of(limit))],
            &mut state_change_row,
        )
    }

    fn state_history_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<StateChangeRow>, MemoryError> {
        let rows = self.0.rows(
            "SELECT id, agent_id, old_state, new_state, timestamp
             FROM agent_state_history WHERE agent_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
            &[
                Param::Text(agent_id),
                Param::Int(before),
                Param::Int(limit_of(limit.saturating_add(1))),
            ],
            &mut state_change_row,
        )?;
        Ok(newest_first_page(rows, limit, |r| r.id))
    }

    fn tasks(&mut self, agent_id: &str) -> Result<Vec<TaskRow>, MemoryError> {
        self.0
            .rows(TASKS_OF, &[Param::Text(agent_id)], &mut task_row)
    }

    fn tasks_after(
        &mut self,
        agent_id: &str,
        after: i64,
        limit: usize,
    ) -> Result<Page<TaskRow>, MemoryError> {
        let rows = self.0.rows(
            "SELECT id, agent_id, task_name, status, created_at, completed_at FROM agent_tasks
             WHERE agent_id = ?1 AND id > ?2 ORDER BY id ASC LIMIT ?3",
            &[
                Param::Text(agent_id),
                Param::Int(after),
                Param::Int(limit_of(limit.saturating_add(1))),
            ],
            &mut |row| Ok((task_row(row)?, row.int(0)?)),
        )?;
        Ok(oldest_first_page(rows, limit))
    }

    fn task(&mut self, id: i64) -> Result<Option<TaskRow>, MemoryError> {
        self.0.row(
            "SELECT id, agent_id, task_name, status, created_at, completed_at FROM agent_tasks
             WHERE id = ?1",
            &[Param::Int(id)],
            &mut task_row,
        )
    }

    fn agents_after(&mut self, after: i64, limit: usize) -> Result<Page<AgentRecord>, MemoryError> {
        let rows = self.0.rows(
            "SELECT agent_id, name, role, prompt, brain, config, x, y, state, created_at,
                    removed_at, seq
             FROM agents WHERE seq > ?1 ORDER BY seq ASC LIMIT ?2",
            &[
                Param::Int(after),
                Param::Int(limit_of(limit.saturating_add(1))),
            ],
            &mut |row| Ok((agent_row(row)?, row.int(11)?)),
        )?;
        Ok(oldest_first_page(rows, limit))
    }

    fn agent(&mut self, agent_id: &str) -> Result<Option<AgentRecord>, MemoryError> {
        self.0.row(
            "SELECT agent_id, name, role, prompt, brain, config, x, y, state, created_at,
                    removed_at
             FROM agents WHERE agent_id = ?1",
            &[Param::Text(agent_id)],
            &mut agent_row,
        )
    }

    /// The newest agent, not terminated, whose config has this key (index `idx_agents_key`).
    fn agent_by_key(&mut self, key: &str) -> Result<Option<AgentRecord>, MemoryError> {
        self.0.row(
            "SELECT agent_id, name, role, prompt, brain, config, x, y, state, created_at,
                    removed_at
             FROM agents WHERE agent_key = ?1 AND removed_at IS NULL
             ORDER BY seq DESC LIMIT 1",
            &[Param::Text(key)],
            &mut agent_row,
        )
    }

    fn agents(&mut self) -> Result<Vec<AgentRecord>, MemoryError> {
        self.0.rows(
            "SELECT agent_id, name, role, prompt, brain, config, x, y, state, created_at,
                    removed_at
             FROM agents ORDER BY seq ASC, agent_id ASC",
            &[],
            &mut agent_row,
        )
    }

    fn brain_calls_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<BrainCallRow>, MemoryError> {
        let rows = self.0.rows(
            "SELECT id, agent_id, provider, model, started_at, latency_ms, input_tokens,
                    output_tokens, cached_tokens, outcome, repairs, error_code, prompt, reply
             FROM brain_calls WHERE agent_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
            &[
                Param::Text(agent_id),
                Param::Int(before),
                Param::Int(limit_of(limit.saturating_add(1))),
            ],
            &mut brain_call_row,
        )?;
        Ok(newest_first_page(rows, limit, |r| r.id))
    }

    fn inbox(&mut self, agent_id: &str) -> Result<Vec<InboxRow>, MemoryError> {
        self.0.rows(
            "SELECT id, agent_id, sender, content, dialog_type, created_at FROM agent_inbox
             WHERE agent_id = ?1 ORDER BY id ASC",
            &[Param::Text(agent_id)],
            &mut inbox_row,
        )
    }

    fn app(&mut self, app_id: &str, limit: usize) -> Result<Option<StoredApp>, MemoryError> {
        let Some((state, human_label)) = self.0.row(
            "SELECT state, human_label FROM app_sessions WHERE app_id = ?1",
            &[Param::Text(app_id)],
            &mut |row| Ok((row.text(0)?, row.maybe_text(1)?)),
        )?
        else {
            return Ok(None);
        };
        let db = &mut self.0;
        store::stored_app(&state, human_label, |kind| {
            db.rows(
                "SELECT entry FROM app_log WHERE app_id = ?1 AND kind = ?2
                 ORDER BY id DESC LIMIT ?3",
                &[
                    Param::Text(app_id),
                    Param::Text(kind.as_str()),
                    Param::Int(limit_of(limit)),
                ],
                &mut first_text,
            )
        })
        .map(Some)
    }

    fn arena_games(&mut self, tournament: &str) -> Result<Vec<String>, MemoryError> {
        self.0.rows(
            "SELECT record FROM arena_games WHERE tournament = ?1 ORDER BY game_index, id",
            &[Param::Text(tournament)],
            &mut first_text,
        )
    }

    fn campaign_turn_count(&mut self, campaign_id: &str) -> Result<u64, MemoryError> {
        let counted = self.0.row(
            "SELECT COUNT(*) FROM campaign_turns WHERE campaign_id = ?1",
            &[Param::Text(campaign_id)],
            &mut |row| count(row, 0),
        )?;
        Ok(counted.unwrap_or(0))
    }

    fn campaign_turns(&mut self, campaign_id: &str) -> Result<Vec<String>, MemoryError> {
        self.0.rows(
            "SELECT entry FROM campaign_turns WHERE campaign_id = ?1 ORDER BY id",
            &[Param::Text(campaign_id)],
            &mut first_text,
        )
    }

    fn memories_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<StoredMemory>, MemoryError> {
        let rows = self.0.rows(
            concat!(
                "SELECT ",
                memory_columns!(""),
                " FROM memories WHERE agent_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3"
            ),
            &[
                Param::Text(agent_id),
                Param::Int(before),
                Param::Int(limit_of(limit.saturating_add(1))),
            ],
            &mut memory_row,
        )?;
        Ok(newest_first_page(rows, limit, |r| r.id))
    }

    /// The full-text query is built from plain words only ([`super::search_terms`]): quoted
    /// and joined by `OR` for FTS5, joined by `|` for `to_tsquery`. On SQLite the words are
    /// first cut to the rarest ones ([`rarest_terms`]), which bounds the rows BM25 scores.
    fn search_memories(
        &mut self,
        agent_id: &str,
        terms: &[String],
        limit: usize,
    ) -> Result<Vec<FoundMemory>, MemoryError> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let kept;
        let terms = match self.0.dialect() {
            Dialect::Sqlite => {
                kept = rarest_terms(&mut self.0, terms)?;
                kept.as_slice()
            }
            Dialect::Postgres => terms,
        };
        let (sql, query) = match self.0.dialect() {
            Dialect::Sqlite => (
                concat!(
                    "SELECT ",
                    memory_columns!("m."),
                    ", -bm25(memories_fts, 1.0, 0.0) AS relevance
                     FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid
                     WHERE memories_fts MATCH ?2 AND m.agent_id = ?1
                     ORDER BY relevance DESC, m.id DESC LIMIT ?3"
                ),
                // The agent's own memories (its id is a column of the index), with any of
                // the words; the text alone counts toward the rank.
                format!(
                    "agent_id : \"{}\" AND ({})",
                    agent_id.replace('"', "\"\""),
                    terms
                        .iter()
                        .map(|t| format!("\"{t}\""))
                        .collect::<Vec<_>>()
                        .join(" OR ")
                ),
            ),
            Dialect::Postgres => (
                concat!(
                    "SELECT ",
                    memory_columns!(""),
                    ", ts_rank(search, to_tsquery('english', ?2))::DOUBLE PRECISION AS relevance
                     FROM memories WHERE agent_id = ?1 AND search @@ to_tsquery('english', ?2)
                     ORDER BY relevance DESC, id DESC LIMIT ?3"
                ),
                terms.join(" | "),
            ),
        };
        self.0.rows(
            sql,
            &[
                Param::Text(agent_id),
                Param::Text(&query),
                Param::Int(limit_of(limit)),
            ],
            &mut |row| {
                Ok(FoundMemory {
                    memory: memory_row(row)?,
                    relevance: row.real(11)?.unwrap_or(0.0),
                })
            },
        )
    }

    fn memory_count(&mut self, agent_id: &str) -> Result<u64, MemoryError> {
        Ok(self
            .0
            .row(
                "SELECT COUNT(*) FROM memories WHERE agent_id = ?1",
                &[Param::Text(agent_id)],
                &mut |row| count(row, 0),
            )?
            .unwrap_or(0))
    }

    fn oldest_memories(
        &mut self,
        agent_id: &str,
        max_importance: u8,
        limit: usize,
    ) -> Result<Vec<StoredMemory>, MemoryError> {
        self.0.rows(
            concat!(
                "SELECT ",
                memory_columns!(""),
                " FROM memories WHERE agent_id = ?1 AND importance <= ?2",
                " AND kind NOT IN ('insight', 'relationship', 'summary') ORDER BY id LIMIT ?3"
            ),
            &[
                Param::Text(agent_id),
                Param::Int(i64::from(max_importance)),
                Param::Int(limit_of(limit)),
            ],
            &mut memory_row,
        )
    }

    fn current_relationship(
        &mut self,
        agent_id: &str,
        about: &str,
    ) -> Result<Option<StoredMemory>, MemoryError> {
        self.0.row(
            concat!(
                "SELECT ",
                memory_columns!(""),
                " FROM memories WHERE agent_id = ?1 AND about = ?2 AND kind = 'relationship'",
                " AND superseded_by IS NULL ORDER BY id DESC LIMIT 1"
            ),
            &[Param::Text(agent_id), Param::Text(about)],
            &mut memory_row,
        )
    }

    fn memory_vectors(
        &mut self,
        agent_id: &str,
        model: &str,
    ) -> Result<Vec<(i64, Vec<u8>)>, MemoryError> {
        self.0.rows(
            "SELECT memory_id, vector FROM memory_vectors WHERE agent_id = ?1 AND model = ?2
             ORDER BY memory_id",
            &[Param::Text(agent_id), Param::Text(model)],
            &mut |row| Ok((row.int(0)?, row.bytes(1)?)),
        )
    }

    /// Read [`BY_ID`] ids at a time (the last read's unused places hold 0, no memory's id).
    fn memories_by_id(
        &mut self,
        agent_id: &str,
        ids: &[i64],
    ) -> Result<Vec<StoredMemory>, MemoryError> {
        let mut found = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(BY_ID) {
            let mut params = Vec::with_capacity(BY_ID + 1);
            params.push(Param::Text(agent_id));
            params.extend((0..BY_ID).map(|i| Param::Int(chunk.get(i).copied().unwrap_or(0))));
            found.extend(self.0.rows(
                concat!(
                    "SELECT ",
                    memory_columns!(""),
                    " FROM memories WHERE agent_id = ?1 AND id IN (?2, ?3, ?4, ?5, ?6, ?7,",
                    " ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,",
                    " ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33) ORDER BY id"
                ),
                &params,
                &mut memory_row,
            )?);
        }
        Ok(found)
    }

    fn unembedded(
        &mut self,
        agent_id: &str,
        model: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<(i64, String)>, MemoryError> {
        self.0.rows(
            "SELECT m.id, m.text FROM memories AS m
             LEFT JOIN memory_vectors AS v ON v.memory_id = m.id AND v.model = ?2
             WHERE m.agent_id = ?1 AND m.id > ?3 AND v.memory_id IS NULL
             ORDER BY m.id LIMIT ?4",
            &[
                Param::Text(agent_id),
                Param::Text(model),
                Param::Int(after),
                Param::Int(limit_of(limit)),
            ],
            &mut |row| Ok((row.int(0)?, row.text(1)?)),
        )
    }

    fn latest_memory_time(&mut self) -> Result<Option<f64>, MemoryError> {
        let latest = self.0.row(
            "SELECT MAX(game_time), MAX(accessed_at) FROM memories",
            &[],
            &mut |row| Ok((row.real(0)?, row.real(1)?)),
        )?;
        Ok(
            latest.and_then(|(formed, recalled)| match (formed, recalled) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            }),
        )
    }

    fn ping(&mut self) -> Result<(), MemoryError> {
        self.0.row("SELECT 1", &[], &mut |_| Ok(()))?;
        Ok(())
    }
}

/// In how many memories each of `stems` is, from `memories_vocab` ([`Database::term_docs`]).
pub(crate) fn count_terms(
    db: &mut impl Database,
    stems: &[String],
) -> Result<Vec<i64>, MemoryError> {
    let mut params: Vec<Param<'_>> = stems.iter().map(|s| Param::Text(s)).collect();
    params.resize(super::MAX_SEARCH_TERMS, Param::Text(""));
    let counts = db.rows(
        "SELECT term, doc FROM memories_vocab WHERE term IN (?1, ?2, ?3, ?4, ?5, ?6, ?7,
             ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        &params,
        &mut |row| Ok((row.text(0)?, row.int(1)?)),
    )?;
    Ok(stems
        .iter()
        .map(|stem| {
            counts
                .iter()
                .find(|(t, _)| t == stem)
                .map_or(0, |(_, n)| *n)
        })
        .collect())
}

/// Memories a search may score before it stops adding words: past it, only the rarest words
/// are looked for (BM25 costs about a microsecond per matching row).
pub(crate) const SEARCH_ROW_BUDGET: i64 = 600;

/// The words of a search worth looking for on SQLite, rarest first: each word's number of
/// memories comes from `memories_vocab` (its Porter stem, as FTS5 indexes it); words are kept
/// from the rarest while the memories they match stay within [`SEARCH_ROW_BUDGET`] (the
/// rarest word that matches anything always). A word the index does not know matches nothing
/// and costs nothing: it is kept.
fn rarest_terms(db: &mut impl Database, terms: &[String]) -> Result<Vec<String>, MemoryError> {
    let stems: Vec<String> = terms.iter().map(|t| super::stem(t)).collect();
    let counts = db.term_docs(&stems)?;
    let mut by_rarity: Vec<(i64, &String)> = counts.into_iter().zip(terms).collect();
    by_rarity.sort_by_key(|(docs, _)| *docs);
    let mut kept = Vec::new();
    let mut rows = 0;
    let mut matching = false;
    for (docs, term) in by_rarity {
        // A word in no memory costs nothing; of the others, the rarest always goes.
        if docs > 0 && matching && rows + docs > SEARCH_ROW_BUDGET {
            break;
        }
        matching |= docs > 0;
        rows += docs;
        kept.push(term.clone());
    }
    Ok(kept)
}

/// The open tasks, by id (what opening a database loads).
pub(crate) fn open_tasks(db: &mut impl Database) -> Result<Vec<TaskRow>, MemoryError> {
    db.rows(
        "SELECT id, agent_id, task_name, status, created_at, completed_at FROM agent_tasks
         WHERE status = 'assigned' ORDER BY id ASC",
        &[],
        &mut task_row,
    )
}

/// A task's row read back after a change (PostgreSQL's `RETURNING`), as a row type.
#[cfg(feature = "postgres")]
pub(crate) fn task_from(row: &dyn StoredRow) -> Result<TaskRow, MemoryError> {
    task_row(row)
}
