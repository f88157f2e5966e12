//! One error convention for every class, and the names a game compares strings against.
//!
//! Every class reports a failed call the same way: the call returns its failure value (`false`,
//! `""`, `0`, an empty result, or an [`AgentOperation`](crate::operation::AgentOperation) whose
//! result has `ok = false`), and the object keeps the failure as a code and a message —
//! `get_last_error_code()` and `get_last_error()`, both empty after a call that succeeded. The
//! classes with signals (`AgentRuntime`, `AgentNode`, `AgentApp`, `Campaign`) also emit
//! `error_occurred(code, message)`. A code is one of the `ERROR_*` constants of
//! the generated `AgentConstants` script: the runtime's codes ([`RuntimeErrorCode`]), the agents'
//! ([`AgentErrorCode`]) and the Godot layer's own ([`GodotErrorCode`]).
//!
//! [`constants_script`] writes `addons/godot_agents/agent_constants.gd`, a `class_name
//! AgentConstants` script of string constants (states, control modes, dialog types, error codes),
//! so that autocompletion offers them and a typo is a parse error instead of a comparison that is
//! never true. A test keeps the committed file equal to what the code generates.

use agents_core::agent_state::AgentState;
use agents_core::apps::{AppMode, ControlMode};
use agents_core::bus::AgentErrorCode;
use agents_core::campaign::turn::DIALOG_TYPES as GM_DIALOG_TYPES;
use agents_core::memory::MemoryKind;
use agents_core::moves::Movement;
use agents_core::runtime::RuntimeErrorCode;
use agents_core::tools::world::DIALOG_TYPES;
use godot::builtin::GString;

/// The codes only the Godot layer reports (wire form: [`GodotErrorCode::as_str`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GodotErrorCode {
    /// The `AgentRuntime` is not running (call `start()`, or turn `autostart` on).
    NotRunning,
    /// An `AgentNode` has no running agent: no `AgentRuntime` was found, the runtime has not
    /// started, or the spawn failed.
    NotSpawned,
    /// The agent stopped (terminated, its runtime stopped, its node left the tree) before it
    /// answered.
    AgentStopped,
    /// An `AgentApp` or a `Campaign` call that needs it registered, attached or loaded first.
    NotReady,
    /// A call's argument is wrong (a value that is not JSON, a name that is empty, an actor not
    /// in the party); the message names it.
    InvalidArgument,
    /// A file could not be read or written (a campaign's save); the message names it.
    FileError,
    /// A campaign turn could not start (one is running, no game master is attached).
    TurnRefused,
    /// A campaign turn failed after it started (the GM's brain failed, the runtime stopped).
    TurnFailed,
    /// An app's action was not carried out (its handler failed, it timed out).
    ActionFailed,
    /// A tool written in GDScript failed (its function returned `null` or an error, its object
    /// was freed).
    ToolFailed,
    /// A bug inside the extension (reported, never a crash).
    InternalError,
}

impl GodotErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [GodotErrorCode; 11] = [
        GodotErrorCode::NotRunning,
        GodotErrorCode::NotSpawned,
        GodotErrorCode::AgentStopped,
        GodotErrorCode::NotReady,
        GodotErrorCode::InvalidArgument,
        GodotErrorCode::FileError,
        GodotErrorCode::TurnRefused,
        GodotErrorCode::TurnFailed,
        GodotErrorCode::ActionFailed,
        GodotErrorCode::ToolFailed,
        GodotErrorCode::InternalError,
    ];

    /// The snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            GodotErrorCode::NotRunning => "not_running",
            GodotErrorCode::NotSpawned => "not_spawned",
            GodotErrorCode::AgentStopped => "agent_stopped",
            GodotErrorCode::NotReady => "not_ready",
            GodotErrorCode::InvalidArgument => "invalid_argument",
            GodotErrorCode::FileError => "file_error",
            GodotErrorCode::TurnRefused => "turn_refused",
            GodotErrorCode::TurnFailed => "turn_failed",
            GodotErrorCode::ActionFailed => "action_failed",
            GodotErrorCode::ToolFailed => "tool_failed",
            GodotErrorCode::InternalError => "internal_error",
        }
    }
}

/// The last failure of an object: its code and message, both empty after a success.
#[derive(Clone, Debug, Default)]
pub struct LastError {
    code: String,
    message: String,
}

impl LastError {
    /// Keeps a failure.
    pub fn set(&mut self, code: &str, message: impl Into<String>) {
        self.code = code.to_string();
        self.message = message.into();
    }

    /// Forgets it (the call succeeded).
    pub fn clear(&mut self) {
        self.code.clear();
        self.message.clear();
    }

    /// The message (`""` after a success).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The code for Godot.
    pub fn code_gstring(&self) -> GString {
        GString::from(self.code.as_str())
    }

    /// The message for Godot.
    pub fn message_gstring(&self) -> GString {
        GString::from(self.message.as_str())
    }
}

/// Where the generated constants script lives, relative to the repository.
pub const CONSTANTS_SCRIPT: &str = "addons/godot_agents/agent_constants.gd";

/// Set to `1` to rewrite [`CONSTANTS_SCRIPT`] instead of checking it.
pub const REGENERATE_ENV: &str = "GODOT_AGENTS_WRITE_CONSTANTS";

/// One group of constants: its heading, what it names, the prefix and the values.
struct Group {
    doc: &'static str,
    prefix: &'static str,
    all_name: &'static str,
    values: Vec<&'static str>,
}

/// Every error code a class can report, sorted, each once.
pub fn error_codes() -> Vec<&'static str> {
    let mut codes: Vec<&'static str> = RuntimeErrorCode::ALL
        .iter()
        .map(|c| c.as_str())
        .chain(AgentErrorCode::ALL.iter().map(|c| c.as_str()))
        .chain(GodotErrorCode::ALL.iter().map(|c| c.as_str()))
        .collect();
    codes.sort_unstable();
    codes.dedup();
    codes
}

fn groups() -> Vec<Group> {
    vec![
        Group {
            doc: "What an agent is doing: [signal AgentNode.state_changed], \
                  [signal AgentRuntime.agent_state_changed], [method AgentNode.get_state].",
            prefix: "STATE_",
            all_name: "STATES",
            values: AgentState::ALL.iter().map(|s| s.as_str()).collect(),
        },
        Group {
            doc: "Who carries out an agent's moves: the [code]movement[/code] of a config given \
                  to [method AgentRuntime.spawn_agent] (an [AgentNode] always asks for \
                  [code]requested[/code]).",
            prefix: "MOVEMENT_",
            all_name: "MOVEMENTS",
            values: Movement::ALL.iter().map(|m| m.as_str()).collect(),
        },
        Group {
            doc: "Who may act in an [AgentApp]: [member AgentApp.control_mode].",
            prefix: "CONTROL_",
            all_name: "CONTROL_MODES",
            values: ControlMode::ALL.iter().map(|m| m.as_str()).collect(),
        },
        Group {
            doc: "When an [AgentApp]'s agent gets the app's state: [member AgentApp.mode].",
            prefix: "APP_MODE_",
            all_name: "APP_MODES",
            values: AppMode::ALL.iter().map(|m| m.as_str()).collect(),
        },
        Group {
            doc: "What a memory is of: the [code]kind[/code] of [method AgentRuntime.remember] \
                  and of the memories [method AgentRuntime.recall] and \
                  [signal AgentRuntime.agent_remembered] give.",
            prefix: "MEMORY_",
            all_name: "MEMORY_KINDS",
            values: MemoryKind::ALL.iter().map(|k| k.as_str()).collect(),
        },
        Group {
            doc: "The kinds of an agent's line: [signal AgentNode.spoke]'s \
                  [code]dialog_type[/code] (a model may also use others).",
            prefix: "DIALOG_",
            all_name: "DIALOG_TYPES",
            values: DIALOG_TYPES.to_vec(),
        },
        Group {
            doc: "The kinds of a game master's line: the [code]dialog_type[/code] of \
                  [signal Campaign.turn_completed].",
            prefix: "GM_DIALOG_",
            all_name: "GM_DIALOG_TYPES",
            values: GM_DIALOG_TYPES.to_vec(),
        },
        Group {
            doc: "The code of a failure: [method AgentNode.get_last_error_code] (and the same \
                  method of every class), [signal AgentNode.error_occurred], \
                  [signal AgentRuntime.agent_error], and [code]error.code[/code] in an \
                  [AgentOperation]'s or an [AgentAsk]'s result.",
            prefix: "ERROR_",
            all_name: "ERROR_CODES",
            values: error_codes(),
        },
    ]
}

/// The text of [`CONSTANTS_SCRIPT`].
pub fn constants_script() -> String {
    let mut out = String::from(
        "# Generated from the extension's Rust code: do not edit. Regenerate with\n\
         # `GODOT_AGENTS_WRITE_CONSTANTS=1 cargo test -p godot-agents --lib constants`.\n\
         class_name AgentConstants\n\
         ## The names the agent classes use, as constants.\n\
         ##\n\
         ## States, movement, control and app modes, dialog types and error codes are strings \
         on every\n\
         ## surface (signals, results, the WebSocket protocol). Compare against these constants \
         and\n\
         ## autocompletion offers them, and a misspelt name fails to parse instead of never \
         matching:\n\
         ## [codeblock]\n\
         ## npc.state_changed.connect(func(_old: String, new_state: String):\n\
         ## \tif new_state == AgentConstants.STATE_THINKING:\n\
         ## \t\tbubble.text = \"…\")\n\
         ## var reply: Dictionary = await npc.ask(\"Is the bread ready?\")\n\
         ## if not reply.ok and reply.error.code == AgentConstants.ERROR_AGENT_STOPPED:\n\
         ## \tprint(\"the baker left\")\n\
         ## [/codeblock]\n\
         ## Each group also comes as an array ([constant STATES], [constant ERROR_CODES], …).\n",
    );
    for group in groups() {
        out.push_str(&format!("\n## {}\n", group.doc));
        for value in &group.values {
            out.push_str(&format!(
                "const {}{} := \"{value}\"\n",
                group.prefix,
                value.to_uppercase()
            ));
        }
        let names: Vec<String> = group
            .values
            .iter()
            .map(|v| format!("{}{}", group.prefix, v.to_uppercase()))
            .collect();
        out.push_str(&format!(
            "## Every value above.\nconst {}: Array[String] = [{}]\n",
            group.all_name,
            names.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_script_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(CONSTANTS_SCRIPT);
        let expected = constants_script();
        if std::env::var(REGENERATE_ENV).as_deref() == Ok("1") {
            std::fs::write(&path, &expected).unwrap();
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == expected,
            "{} is stale: run `{REGENERATE_ENV}=1 cargo test -p godot-agents --lib constants` \
             and commit it",
            path.display()
        );
    }

    #[test]
    fn godot_codes_are_listed_once_and_do_not_shadow_the_runtime_ones() {
        use GodotErrorCode::*;
        fn position(code: GodotErrorCode) -> usize {
            match code {
                NotRunning => 0,
                NotSpawned => 1,
                AgentStopped => 2,
                NotReady => 3,
                InvalidArgument => 4,
                FileError => 5,
                TurnRefused => 6,
                TurnFailed => 7,
                ActionFailed => 8,
                ToolFailed => 9,
                InternalError => 10,
            }
        }
        for (i, code) in GodotErrorCode::ALL.iter().enumerate() {
            assert_eq!(position(*code), i);
            assert!(
                !RuntimeErrorCode::ALL
                    .iter()
                    .any(|c| c.as_str() == code.as_str()),
                "{}",
                code.as_str()
            );
        }
        let codes = error_codes();
        assert!(codes.contains(&"unknown_agent") && codes.contains(&"lagged"));
        assert!(codes.contains(&"not_spawned") && codes.contains(&"agent_stopped"));
    }

    #[test]
    fn every_constant_is_a_gdscript_identifier_and_unique() {
        let text = constants_script();
        let mut names = std::collections::BTreeSet::new();
        for line in text.lines().filter(|l| l.starts_with("const ")) {
            let name = line[6..].split([' ', ':']).next().unwrap();
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
                "{name}"
            );
            assert!(names.insert(name.to_string()), "twice: {name}");
        }
        assert!(names.contains("STATE_THINKING") && names.contains("ERROR_UNKNOWN_AGENT"));
    }
}
