//! The memory tools an MCP host gets from a server that runs agents (`/mcp` of `agents-server
//! serve` and of a Godot `AgentRuntime` with its server on): `remember`, `recall`,
//! `list_memories` and `forget_memory`, each naming the agent by id. They call the runtime as
//! the protocol's requests of the same names do, with the same limits and errors: an unknown
//! agent, a memory that cannot be stored, a memory the agent does not have are failed results
//! with a `reason` (`unknown_agent`, `invalid_message`, `unknown_memory`).

use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use crate::memory::{MAX_MEMORY_TEXT_CHARS, MemoryKind};
use crate::runtime::{MAX_RECALLED, Remember, Runtime, RuntimeError};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// The names of the memory tools.
pub const MEMORY_TOOLS: [&str; 4] = ["remember", "recall", "list_memories", "forget_memory"];

/// `tools` and the memory tools of `runtime`, as one registry for an MCP server. The tools
/// hold the runtime weakly: once it is gone they fail with `shut_down`.
pub fn with_memory_tools(tools: &ToolRegistry, runtime: &Arc<Runtime>) -> ToolRegistry {
    let mut registry = tools.subset(|_| true);
    for (spec, handler) in memory_tools(Arc::downgrade(runtime)) {
        if let Err(error) = registry.register(spec, handler) {
            // A registry that already has a tool of that name keeps its own.
            tracing::warn!("a memory tool is not served over MCP: {error}");
        }
    }
    registry
}

type Handler = Box<dyn Fn(&Value) -> ToolOutput + Send + Sync>;

fn memory_tools(runtime: Weak<Runtime>) -> Vec<(ToolSpec, Handler)> {
    let agent_id = json!({"type": "string", "minLength": 1, "maxLength": crate::limits::MAX_AGENT_ID_CHARS,
        "description": "The agent (agent_001), running or stored."});
    let kinds: Vec<&str> = MemoryKind::ALL.iter().map(|k| k.as_str()).collect();
    let remember = ToolSpec::new(
        "remember",
        "Plant a memory in an agent's stream (a fact it now knows, something it saw). It is \
         stamped with the game time now; importance 1-10 is judged from the text unless given. \
         `supersedes` lists older memory ids it replaces (a belief that turned out wrong). \
         Returns the memory's id.",
        json!({
            "type": "object",
            "properties": {
                "agent_id": agent_id,
                "text": {"type": "string", "minLength": 1, "maxLength": MAX_MEMORY_TEXT_CHARS},
                "kind": {"type": "string", "enum": kinds, "default": "fact"},
                "importance": {"type": "integer", "minimum": 1, "maximum": 10},
                "about": {"type": "string", "minLength": 1, "maxLength": 100},
                "supersedes": {"type": "array", "maxItems": 64,
                    "items": {"type": "integer", "minimum": 1, "maximum": i64::MAX}}
            },
            "required": ["agent_id", "text"],
            "additionalProperties": false
        }),
    );
    let recall = ToolSpec::new(
        "recall",
        "What an agent recalls for a query now, best first: each memory with its score and the \
         parts of it (recency, importance, relevance, each 0 to 1). Only looks.",
        json!({
            "type": "object",
            "properties": {
                "agent_id": agent_id,
                "query": {"type": "string", "maxLength": crate::limits::MAX_MESSAGE_CHARS},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RECALLED, "default": 10}
            },
            "required": ["agent_id", "query"],
            "additionalProperties": false
        }),
    )
    .read_only();
    let list = ToolSpec::new(
        "list_memories",
        "A page of an agent's memories, oldest first: the newest `limit` with an id below \
         `before` (absent: from the newest). `next` is the `before` of the page of older ones.",
        json!({
            "type": "object",
            "properties": {
                "agent_id": agent_id,
                "limit": {"type": "integer", "minimum": 1, "maximum": crate::limits::MAX_PAGE, "default": 50},
                "before": {"type": "integer", "minimum": 1, "maximum": i64::MAX}
            },
            "required": ["agent_id"],
            "additionalProperties": false
        }),
    )
    .read_only();
    let forget = ToolSpec::new(
        "forget_memory",
        "Forget one memory of an agent.",
        json!({
            "type": "object",
            "properties": {
                "agent_id": agent_id,
                "memory_id": {"type": "integer", "minimum": 1, "maximum": i64::MAX}
            },
            "required": ["agent_id", "memory_id"],
            "additionalProperties": false
        }),
    );
    let on = |runtime: &Weak<Runtime>, f: fn(&Runtime, &Value) -> Result<Value, RuntimeError>| {
        let runtime = runtime.clone();
        Box::new(move |args: &Value| match runtime.upgrade() {
            Some(rt) => match f(&rt, args) {
                Ok(result) => ToolOutput::ok(result),
                Err(e) => {
                    ToolOutput::failed(json!({"error": e.to_string(), "reason": e.code().as_str()}))
                }
            },
            None => ToolOutput::failed(
                json!({"error": "the runtime is shut down", "reason": crate::error_code::ErrorCode::ShutDown.as_str()}),
            ),
        }) as Handler
    };
    vec![
        (slow(remember), on(&runtime, remember_call)),
        (slow(recall), on(&runtime, recall_call)),
        (slow(list), on(&runtime, list_call)),
        (slow(forget), on(&runtime, forget_call)),
    ]
}

/// A tool that reads or writes the database: run off the server's async workers.
fn slow(mut spec: ToolSpec) -> ToolSpec {
    spec.searches = true;
    spec
}

fn agent(args: &Value) -> &str {
    args["agent_id"].as_str().unwrap_or_default()
}

fn remember_call(rt: &Runtime, args: &Value) -> Result<Value, RuntimeError> {
    let mut fields = args.as_object().cloned().unwrap_or_default();
    let agent_id = agent(args).to_string();
    fields.remove("agent_id");
    let memory: Remember = serde_json::from_value(Value::Object(fields))
        .map_err(|e| RuntimeError::InvalidMessage(format!("invalid memory: {e}")))?;
    let memory_id = rt.remember(&agent_id, memory)?;
    Ok(json!({"agent_id": agent_id, "memory_id": memory_id, "game_time": rt.game_time()}))
}

fn recall_call(rt: &Runtime, args: &Value) -> Result<Value, RuntimeError> {
    let limit = args["limit"].as_u64().unwrap_or(10) as usize;
    let query = args["query"].as_str().unwrap_or_default();
    let memories = rt.recall(agent(args), query, limit.min(MAX_RECALLED))?;
    Ok(json!({"agent_id": agent(args), "game_time": rt.game_time(), "memories": memories}))
}

/// A memory id argument: absent is `None`; the schema keeps it within 1 to 2⁶³ − 1, and a
/// value that is not (had the schema been bypassed) is an error naming it, never another id.
fn memory_id(args: &Value, field: &str) -> Result<Option<i64>, RuntimeError> {
    match &args[field] {
        Value::Null => Ok(None),
        v => v.as_i64().filter(|id| *id >= 1).map(Some).ok_or_else(|| {
            RuntimeError::InvalidMessage(format!(
                "{field} must be a memory id from 1 to {}, got {v}",
                i64::MAX
            ))
        }),
    }
}

fn list_call(rt: &Runtime, args: &Value) -> Result<Value, RuntimeError> {
    let limit = args["limit"].as_u64().unwrap_or(50) as usize;
    let page = rt.memories_page(
        agent(args),
        memory_id(args, "before")?,
        limit.min(crate::limits::MAX_PAGE),
    )?;
    Ok(json!({"agent_id": agent(args), "memories": page.rows, "next": page.next}))
}

fn forget_call(rt: &Runtime, args: &Value) -> Result<Value, RuntimeError> {
    let memory_id = memory_id(args, "memory_id")?
        .ok_or_else(|| RuntimeError::InvalidMessage("memory_id is required".into()))?;
    rt.forget(agent(args), memory_id)?;
    Ok(json!({"agent_id": agent(args), "memory_id": memory_id, "forgotten": true}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::RuntimeOptions;

    #[tokio::test]
    async fn an_mcp_host_plants_recalls_pages_and_forgets_through_the_tools() {
        let dir = tempfile::tempdir().unwrap();
        let rt = Arc::new(
            Runtime::start_on(
                tokio::runtime::Handle::current(),
                RuntimeOptions::with_database(dir.path().join("agents.db")),
            )
            .unwrap(),
        );
        let id = rt
            .spawn(crate::runtime::AgentConfig {
                autonomous: Some(false),
                ..crate::runtime::AgentConfig::named("Mira", "baker")
            })
            .unwrap();
        let tools = with_memory_tools(&ToolRegistry::with_game_tools(), &rt);
        assert!(tools.get("new_chess_game").is_some(), "the game tools stay");
        let call = |name: &str, args: Value| tools.call_to_output(name, &args);
        let out = call(
            "remember",
            json!({"agent_id": id, "text": "The cellar key is under the mat.", "importance": 8}),
        );
        assert!(!out.is_error, "{}", out.structured);
        let key = out.structured["memory_id"].as_i64().unwrap();
        let out = call("recall", json!({"agent_id": id, "query": "cellar key"}));
        assert_eq!(out.structured["memories"][0]["memory"]["id"], key);
        assert_eq!(out.structured["memories"][0]["memory"]["importance"], 8);
        let out = call("list_memories", json!({"agent_id": id, "limit": 5}));
        assert_eq!(out.structured["memories"].as_array().unwrap().len(), 1);
        assert_eq!(out.structured["next"], Value::Null);
        let out = call("forget_memory", json!({"agent_id": id, "memory_id": key}));
        assert!(!out.is_error, "{}", out.structured);
        // Errors are results with a reason; bad arguments are refused by the schema.
        let out = call("forget_memory", json!({"agent_id": id, "memory_id": key}));
        assert_eq!(out.structured["reason"], "unknown_memory");
        let out = call("remember", json!({"agent_id": "agent_404", "text": "x"}));
        assert_eq!(out.structured["reason"], "unknown_agent");
        let out = call("remember", json!({"agent_id": id, "text": "   "}));
        assert_eq!(out.structured["reason"], "invalid_message");
        for bad in [
            json!({"agent_id": id, "text": "x", "file": "/etc/passwd"}),
            json!({"agent_id": id, "text": "x", "importance": 11}),
            json!({"agent_id": id, "text": "x".repeat(MAX_MEMORY_TEXT_CHARS + 1)}),
            json!({"agent_id": id, "text": "x", "kind": "gossip"}),
        ] {
            let out = call("remember", bad.clone());
            assert_eq!(
                out.structured["reason"], "invalid_args",
                "{bad} → {}",
                out.structured
            );
        }
        let out = call("recall", json!({"agent_id": id, "query": "x", "limit": 51}));
        assert_eq!(out.structured["reason"], "invalid_args");
        // Ids past 2⁶³ − 1 are refused as such, never read as another id (or as no cursor).
        let huge: Value = serde_json::from_str("18446744073709551616").unwrap();
        for (tool, args) in [
            ("forget_memory", json!({"agent_id": id, "memory_id": huge})),
            (
                "forget_memory",
                json!({"agent_id": id, "memory_id": 1u64 << 63}),
            ),
            ("forget_memory", json!({"agent_id": id, "memory_id": 0})),
            (
                "list_memories",
                json!({"agent_id": id, "before": 1u64 << 63}),
            ),
            ("list_memories", json!({"agent_id": id, "before": huge})),
        ] {
            let out = call(tool, args.clone());
            assert_eq!(
                out.structured["reason"], "invalid_args",
                "{args} → {}",
                out.structured
            );
            let error = out.structured["error"].as_str().unwrap();
            assert!(!error.contains("memory 0"), "{error}");
        }
        // A value over its limit is named by its size, not echoed back.
        let long = "x".repeat(MAX_MEMORY_TEXT_CHARS + 1);
        let out = call("remember", json!({"agent_id": id, "text": long}));
        let error = out.structured["error"].as_str().unwrap();
        assert!(error.len() < 300, "{error}");
        assert!(error.contains("2001 characters"), "{error}");
        // Once the runtime is gone, the tools say so.
        rt.shutdown(std::time::Duration::from_secs(1));
        drop(rt);
        let out = call("recall", json!({"agent_id": id, "query": "x"}));
        assert_eq!(out.structured["reason"], "shut_down");
    }
}
