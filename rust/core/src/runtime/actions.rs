//! World actions as tools (SKELETON — the brain helper implements `world_tools`/`parse_action`).

use crate::brain::ToolCall;
use crate::tools::{ToolError, ToolRegistry};

/// A validated world action.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Move to `(x, y)` (must be inside the world bounds).
    Move {
        /// Target x.
        x: f64,
        /// Target y.
        y: f64,
    },
    /// Stay idle; the next autonomous decision comes after `seconds` (default: the idle time).
    Wait {
        /// Seconds to wait.
        seconds: Option<f64>,
    },
    /// Say something.
    Speak {
        /// The line.
        content: String,
        /// Who to (default: whoever is being answered, else nearby agents).
        recipients: Option<Vec<String>>,
        /// Kind of line.
        dialog_type: Option<String>,
    },
    /// Ask another agent to help with a task (it gets the task assigned).
    Collaborate {
        /// The helper.
        agent_id: String,
        /// The task (default: the asker's current task).
        task_name: Option<String>,
        /// What to say when asking.
        message: Option<String>,
    },
    /// Mark a task completed (default: the current task).
    CompleteTask {
        /// The task id.
        task_id: Option<i64>,
    },
}

/// The registry of world tools (`move`, `wait`, `speak`, `collaborate`, `complete_task`).
pub fn world_tools() -> &'static ToolRegistry {
    todo!()
}

/// Validates a tool call against [`world_tools`] and turns it into an [`Action`].
pub fn parse_action(call: &ToolCall) -> Result<Action, ToolError> {
    let _ = call;
    todo!()
}

/// The world tools in LLM shape (`name`, `description`, `parameters`), for `BrainContext.tools`.
pub fn world_tool_definitions() -> Vec<serde_json::Value> {
    todo!()
}
