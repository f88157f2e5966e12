//! After a restart: is every acknowledged write there? Checked twice — in the SQLite file itself
//! (read-only, the ground truth: tables `agents`, `agent_tasks`, `agent_conversations`) and
//! through the protocol of the restarted server (`list_stored_agents`, `get_tasks`).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};

use super::ledger::Ledger;
use super::ws::Conn;

/// The sender of a `send_message` without `sender` (the runtime's player id).
pub const PLAYER_ID: &str = "player_0";

/// Acknowledged writes not found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Missing {
    /// Agent ids (no `agents` row with that id and the acknowledged name).
    pub agents: BTreeSet<String>,
    /// Task ids (no `agent_tasks` row with that id, agent and name).
    pub tasks: BTreeSet<i64>,
    /// Task ids whose acknowledged completion is not stored (`status` is not `completed`).
    pub completions: BTreeSet<i64>,
    /// Message contents (no `agent_conversations` line from the player to that agent).
    pub messages: BTreeSet<String>,
}

impl Missing {
    /// How many rows are missing.
    pub fn total(&self) -> usize {
        self.agents.len() + self.tasks.len() + self.completions.len() + self.messages.len()
    }

    /// Adds `other`'s rows.
    pub fn merge(&mut self, other: &Missing) {
        self.agents.extend(other.agents.iter().cloned());
        self.tasks.extend(other.tasks.iter().copied());
        self.completions.extend(other.completions.iter().copied());
        self.messages.extend(other.messages.iter().cloned());
    }

    /// `lost A agents, T tasks, C completions, M messages (e.g. …)`.
    pub fn describe(&self) -> String {
        fn some<T: std::fmt::Display>(set: impl IntoIterator<Item = T>) -> String {
            let v: Vec<String> = set.into_iter().take(5).map(|x| x.to_string()).collect();
            v.join(", ")
        }
        let mut parts = Vec::new();
        if !self.agents.is_empty() {
            parts.push(format!(
                "{} agents ({})",
                self.agents.len(),
                some(&self.agents)
            ));
        }
        if !self.tasks.is_empty() {
            parts.push(format!(
                "{} tasks ({})",
                self.tasks.len(),
                some(&self.tasks)
            ));
        }
        if !self.completions.is_empty() {
            parts.push(format!(
                "{} completions ({})",
                self.completions.len(),
                some(&self.completions)
            ));
        }
        if !self.messages.is_empty() {
            parts.push(format!(
                "{} messages ({})",
                self.messages.len(),
                some(self.messages.iter().map(|m| format!("{m:?}")))
            ));
        }
        if parts.is_empty() {
            "nothing".into()
        } else {
            parts.join(", ")
        }
    }
}

fn open_read_only(db: &Path) -> Result<Connection, String> {
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("cannot open {} read-only: {e}", db.display()))?;
    conn.busy_timeout(Duration::from_secs(10))
        .map_err(|e| format!("busy_timeout: {e}"))?;
    Ok(conn)
}

fn sql_error(what: &str) -> impl Fn(rusqlite::Error) -> String + '_ {
    move |e| format!("reading {what}: {e}")
}

/// Checks the SQLite file: every acknowledged agent, task, completion and message of `ledger`.
pub fn check_database(db: &Path, ledger: &Ledger) -> Result<Missing, String> {
    let conn = open_read_only(db)?;
    let mut stmt = conn
        .prepare("SELECT agent_id, name FROM agents")
        .map_err(sql_error("agents"))?;
    let agents: HashMap<String, String> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(sql_error("agents"))?
        .collect::<Result<_, _>>()
        .map_err(sql_error("agents"))?;
    let mut stmt = conn
        .prepare("SELECT id, agent_id, task_name, status FROM agent_tasks")
        .map_err(sql_error("agent_tasks"))?;
    let tasks: HashMap<i64, (String, String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?))))
        .map_err(sql_error("agent_tasks"))?
        .collect::<Result<_, _>>()
        .map_err(sql_error("agent_tasks"))?;
    let mut stmt = conn
        .prepare("SELECT agent_id, content FROM agent_conversations WHERE sender = ?1")
        .map_err(sql_error("agent_conversations"))?;
    let lines: HashSet<(String, String)> = stmt
        .query_map([PLAYER_ID], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(sql_error("agent_conversations"))?
        .collect::<Result<_, _>>()
        .map_err(sql_error("agent_conversations"))?;

    let mut missing = Missing::default();
    for (id, ack) in &ledger.agents {
        if agents.get(id) != Some(&ack.name) {
            missing.agents.insert(id.clone());
        }
    }
    for (id, ack) in &ledger.tasks {
        match tasks.get(id) {
            Some((agent, name, status)) if *agent == ack.agent_id && *name == ack.task_name => {
                if ack.completed && status != "completed" {
                    missing.completions.insert(*id);
                }
            }
            _ => {
                missing.tasks.insert(*id);
                if ack.completed {
                    missing.completions.insert(*id);
                }
            }
        }
    }
    for m in &ledger.messages {
        if !lines.contains(&(m.agent_id.clone(), m.content.clone())) {
            missing.messages.insert(m.content.clone());
        }
    }
    Ok(missing)
}

/// Lines of ours still waiting in `agent_inbox` (`None` when the database has no such table).
pub fn inbox_pending(db: &Path) -> Result<Option<u64>, String> {
    let conn = open_read_only(db)?;
    let exists: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'agent_inbox'",
            [],
            |r| r.get(0),
        )
        .map_err(sql_error("sqlite_master"))?;
    if exists == 0 {
        return Ok(None);
    }
    let n: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM agent_inbox WHERE content LIKE 'kt%'",
            [],
            |r| r.get(0),
        )
        .map_err(sql_error("agent_inbox"))?;
    Ok(Some(n as u64))
}

/// The most pages one list request may take (a guard against a cursor that never ends).
const MAX_PAGES: usize = 100_000;

/// Sends `request` and, while the reply names a next page (`next_cursor`, or `cursor`), asks for
/// it with `cursor`; returns the items of every page's `field`.
async fn all_pages(
    conn: &mut Conn,
    mut request: Value,
    field: &str,
    next_id: &mut i64,
) -> Result<Vec<Value>, String> {
    let mut items = Vec::new();
    for _ in 0..MAX_PAGES {
        *next_id += 1;
        let reply = conn.call(request.clone(), *next_id).await?;
        let page = reply[field]
            .as_array()
            .ok_or_else(|| format!("{} has no {field} list: {reply}", request["type"]))?;
        items.extend(page.iter().cloned());
        let next = ["next_cursor", "cursor"]
            .iter()
            .find_map(|k| reply.get(*k).and_then(Value::as_str));
        match next {
            Some(cursor) => request["cursor"] = json!(cursor),
            None => return Ok(items),
        }
    }
    Err(format!(
        "{} did not end after {MAX_PAGES} pages",
        request["type"]
    ))
}

/// Checks through the restarted server's protocol: every acknowledged agent in
/// `list_stored_agents`, and for the agents given tasks in rounds `since_round` and later, every
/// acknowledged task (and completion) in `get_tasks`.
pub async fn check_protocol(
    url: &str,
    ledger: &Ledger,
    since_round: u32,
) -> Result<Missing, String> {
    let mut conn = Conn::open(url).await?;
    let mut next_id = 0;
    let stored = all_pages(
        &mut conn,
        json!({"type": "list_stored_agents"}),
        "agents",
        &mut next_id,
    )
    .await?;
    let stored: HashMap<&str, &str> = stored
        .iter()
        .filter_map(|a| Some((a["agent_id"].as_str()?, a["name"].as_str()?)))
        .collect();
    let mut missing = Missing::default();
    for (id, ack) in &ledger.agents {
        if stored.get(id.as_str()) != Some(&ack.name.as_str()) {
            missing.agents.insert(id.clone());
        }
    }
    let mut by_agent: HashMap<&str, Vec<i64>> = HashMap::new();
    for (id, ack) in ledger.tasks.iter().filter(|(_, t)| t.round >= since_round) {
        by_agent.entry(ack.agent_id.as_str()).or_default().push(*id);
    }
    let mut agents: Vec<&str> = by_agent.keys().copied().collect();
    agents.sort_unstable();
    for agent_id in agents {
        let rows = all_pages(
            &mut conn,
            json!({"type": "get_tasks", "agent_id": agent_id}),
            "tasks",
            &mut next_id,
        )
        .await;
        let rows = match rows {
            Ok(rows) => rows,
            // A lost agent is unknown: its tasks are lost with it.
            Err(e) if e.contains("unknown_agent") => Vec::new(),
            Err(e) => return Err(e),
        };
        let rows: HashMap<i64, &Value> = rows
            .iter()
            .filter_map(|t| Some((t["id"].as_i64()?, t)))
            .collect();
        for id in &by_agent[agent_id] {
            let ack = &ledger.tasks[id];
            match rows.get(id) {
                Some(row) if row["task_name"] == json!(ack.task_name) => {
                    if ack.completed && row["status"] != "completed" {
                        missing.completions.insert(*id);
                    }
                }
                _ => {
                    missing.tasks.insert(*id);
                    if ack.completed {
                        missing.completions.insert(*id);
                    }
                }
            }
        }
    }
    conn.close().await;
    Ok(missing)
}

#[cfg(test)]
mod tests {
    use agents_core::memory::{TaskRow, TaskStatus};

    use super::*;

    /// A database laid out like the server's (the columns the checks read).
    fn database(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("kt.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE agents (agent_id TEXT PRIMARY KEY, name TEXT NOT NULL);
             CREATE TABLE agent_tasks (id INTEGER PRIMARY KEY, agent_id TEXT, task_name TEXT,
                                       status TEXT);
             CREATE TABLE agent_conversations (id INTEGER PRIMARY KEY, agent_id TEXT,
                                               sender TEXT, content TEXT);
             INSERT INTO agents VALUES ('agent_001', 'kt0c0a1'), ('agent_002', 'other');
             INSERT INTO agent_tasks VALUES (1, 'agent_001', 'kt0c0t2', 'completed'),
                                            (2, 'agent_001', 'kt0c0t3', 'assigned'),
                                            (3, 'agent_002', 'someone else', 'assigned');
             INSERT INTO agent_conversations VALUES
                 (1, 'agent_001', 'player_0', 'kt0c0m4 hello'),
                 (2, 'agent_001', 'agent_001', 'kt0c0m5 hello');",
        )
        .unwrap();
        path
    }

    fn task(id: i64, agent: &str, name: &str) -> TaskRow {
        TaskRow {
            id,
            agent_id: agent.into(),
            task_name: name.into(),
            status: TaskStatus::Assigned,
            created_at: String::new(),
            completed_at: None,
        }
    }

    #[test]
    fn finds_exactly_the_missing_rows() {
        let dir = std::env::temp_dir().join(format!("xtask-kt-verify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = database(&dir);
        let mut l = Ledger::default();
        l.ack_spawn("agent_001", "kt0c0a1", 0);
        l.ack_spawn("agent_002", "kt0c1a1", 0); // same id, another name: not ours
        l.ack_spawn("agent_003", "kt0c2a1", 0); // absent
        for (id, name) in [
            (1, "kt0c0t2"),
            (2, "kt0c0t3"),
            (3, "kt0c1t9"),
            (4, "kt0c0t7"),
        ] {
            l.ack_assign(&task(id, "agent_001", name), 0);
        }
        l.ack_complete(1, &task(1, "agent_001", "kt0c0t2"), 0);
        l.ack_complete(2, &task(2, "agent_001", "kt0c0t3"), 0); // stored as assigned
        l.ack_complete(4, &task(4, "agent_001", "kt0c0t7"), 0); // row absent
        l.ack_message("agent_001", "kt0c0m4 hello", 0);
        l.ack_message("agent_001", "kt0c0m5 hello", 0); // only the agent's own line
        l.ack_message("agent_002", "kt0c0m4 hello", 0); // another agent's line

        let m = check_database(&db, &l).unwrap();
        assert_eq!(
            m.agents,
            BTreeSet::from(["agent_002".to_string(), "agent_003".to_string()])
        );
        assert_eq!(m.tasks, BTreeSet::from([3, 4]));
        assert_eq!(m.completions, BTreeSet::from([2, 4]));
        assert_eq!(
            m.messages,
            BTreeSet::from(["kt0c0m5 hello".to_string(), "kt0c0m4 hello".to_string()])
        );
        assert_eq!(m.total(), 8);
        assert!(m.describe().contains("2 agents"), "{}", m.describe());
        assert_eq!(inbox_pending(&db).unwrap(), None, "no agent_inbox table");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn merge_is_a_union() {
        let mut a = Missing::default();
        a.tasks.insert(1);
        let mut b = Missing::default();
        b.tasks.insert(1);
        b.agents.insert("agent_009".into());
        a.merge(&b);
        assert_eq!(a.total(), 2);
        assert_eq!(Missing::default().describe(), "nothing");
    }
}
