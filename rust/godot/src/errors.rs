//! One error convention for every class, and the names a game compares strings against.
//!
//! Every class reports a failed call the same way: the call returns its failure value (`false`,
//! `""`, `0`, an empty result, or an [`AgentOperation`](crate::operation::AgentOperation) whose
//! result has `ok = false`), and the object keeps the failure as a code and a message —
//! `get_last_error_code()` and `get_last_error()`, both empty after a call that succeeded. The
//! classes with signals (`AgentRuntime`, `AgentNode`, `AgentApp`, `Campaign`) also emit
//! `error_occurred(code, message)`. A code is one of the `ERROR_*` constants of
//! the generated `AgentConstants` script, which lists every [`ErrorCode`]: the runtime's codes
//! ([`RuntimeErrorCode`](agents_core::runtime::RuntimeErrorCode)), the agents'
//! ([`AgentErrorCode`](agents_core::bus::AgentErrorCode)), the Godot layer's own
//! ([`GodotErrorCode`]) and the rest of the one vocabulary.
//!
//! [`constants_script`] writes `addons/godot_agents/agent_constants.gd`, a `class_name
//! AgentConstants` script of string constants (states, control modes, dialog types, error codes),
//! so that autocompletion offers them and a typo is a parse error instead of a comparison that is
//! never true. A test keeps the committed file equal to what the code generates.

use agents_core::agent_state::AgentState;
use agents_core::apps::{AppMode, ControlMode};
use agents_core::campaign::turn::DIALOG_TYPES as GM_DIALOG_TYPES;
use agents_core::error_code::{Category, ErrorCode};
use agents_core::memory::MemoryKind;
use agents_core::moves::Movement;
use agents_core::tools::world::DIALOG_TYPES;
use godot::builtin::GString;

agents_core::error_code_subset! {
    /// The codes only the Godot layer reports (wire form: the snake_case name): a view of the
    /// error codes, whose names, categories and hints are written once in `agents_core`.
    pub enum GodotErrorCode: "Godot error code" {
        NotRunning,
        NotSpawned,
        AgentStopped,
        NotReady,
        InvalidArgument,
        FileError,
        TurnRefused,
        TurnFailed,
        ActionFailed,
        ToolFailed,
        InternalError,
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

/// Every error code, sorted: the one vocabulary ([`ErrorCode`]), so a code any surface reports
/// — the runtime's, an agent's, the Godot layer's, the protocol's, a failed call's reason —
/// has its constant.
pub fn error_codes() -> Vec<&'static str> {
    let mut codes: Vec<&'static str> = ErrorCode::NAMES.to_vec();
    codes.sort_unstable();
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
        Group {
            doc: "What kind of failure a code is — what the caller can do about it: \
                  [constant ERROR_CATEGORY_OF] gives each code's.",
            prefix: "ERROR_CATEGORY_",
            all_name: "ERROR_CATEGORIES",
            values: Category::NAMES.to_vec(),
        },
    ]
}

/// The `ERROR_CATEGORY_OF` constant: every error code's category, by code.
fn category_of() -> String {
    let mut codes = ErrorCode::ALL.to_vec();
    codes.sort_unstable_by_key(|c| c.as_str());
    let entries: Vec<String> = codes
        .iter()
        .map(|code| {
            format!(
                "\t\"{}\": ERROR_CATEGORY_{},\n",
                code.as_str(),
                code.category().as_str().to_uppercase()
            )
        })
        .collect();
    format!(
        "## Each error code's category, by code:\n\
         ## [code]input[/code], [code]not_found[/code], [code]conflict[/code] and \
         [code]denied[/code] ask the caller to\n\
         ## change something; [code]limit[/code] to wait; [code]unavailable[/code] to start or \
         reach what\n\
         ## is missing; [code]config[/code] to fix the configuration; [code]brain[/code], \
         [code]storage[/code] and\n\
         ## [code]internal[/code] report a failure elsewhere.\n\
         const ERROR_CATEGORY_OF: Dictionary[String, String] = {{\n{}}}\n",
        entries.concat()
    )
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
    out.push_str(&category_of());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use agents_core::bus::AgentErrorCode;
    use agents_core::runtime::RuntimeErrorCode;

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
    fn every_code_has_a_constant_and_the_views_are_of_it() {
        let codes = error_codes();
        assert_eq!(codes.len(), ErrorCode::ALL.len());
        for code in ErrorCode::ALL {
            assert!(codes.contains(&code.as_str()), "{code}");
        }
        // The views a class reports take their names from the one vocabulary.
        for code in GodotErrorCode::ALL {
            assert_eq!(ErrorCode::from(code).as_str(), code.as_str());
        }
        for code in RuntimeErrorCode::ALL {
            assert!(codes.contains(&code.as_str()), "{code}");
        }
        for code in AgentErrorCode::ALL {
            assert!(codes.contains(&code.as_str()), "{code}");
        }
        // `invalid_options` stays apart from `invalid_config` here (the protocol folds them).
        assert!(codes.contains(&"invalid_options") && codes.contains(&"invalid_config"));
        assert!(codes.contains(&"not_spawned") && codes.contains(&"not_json"));
        // And each has its category.
        let script = constants_script();
        for code in ErrorCode::ALL {
            let entry = format!(
                "\t\"{code}\": ERROR_CATEGORY_{},\n",
                code.category().as_str().to_uppercase()
            );
            assert!(script.contains(&entry), "{entry}");
        }
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
