//! `GameTools`: the game tool registry of `agents-core`, callable from GDScript.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use agents_core::error_code::ErrorCode;
use agents_core::tools::games::{GAMES, GameDecl};
use agents_core::tools::{ToolOutput, ToolRegistry};
use godot::prelude::*;
use serde_json::{Value, json};

use crate::convert;
use crate::errors::{GodotErrorCode, LastError};

/// The process-wide registry, built on first use. `Err` holds the message of a registration
/// failure (a programming error in a built-in tool), reported by every call instead of crashing.
static REGISTRY: OnceLock<Result<ToolRegistry, String>> = OnceLock::new();

/// The shared registry of every game tool (built lazily, once per process).
pub fn registry() -> Result<&'static ToolRegistry, &'static str> {
    REGISTRY
        .get_or_init(|| {
            catch_unwind(ToolRegistry::with_game_tools).map_err(|panic| {
                panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "the tool registry could not be built".to_string())
            })
        })
        .as_ref()
        .map_err(String::as_str)
}

/// A game's entry of [`GameTools::games`]: `game`, `board`, `tools`, each tool's name under its
/// kind's key, and a board game's `state`, `move_arg` and `moves`.
pub fn game_json(game: &GameDecl) -> Value {
    let mut out = json!({
        "game": game.name,
        "board": game.board.is_some(),
        "tools": game.tool_names(),
    });
    for &kind in game.tools {
        out[kind.key()] = json!(game.tool(kind));
    }
    if let Some(board) = game.board {
        out["state"] = json!(board.position_field);
        out["move_arg"] = json!(board.move_arg);
        out["moves"] = json!(board.legal_field);
    }
    out
}

/// Runs one tool call with JSON arguments, never panicking: registry failures, unknown tools,
/// invalid arguments and handler panics all come back as failed outputs with `error` and `reason`.
pub fn call_json(name: &str, args: &Value) -> ToolOutput {
    let registry = match registry() {
        Ok(r) => r,
        Err(message) => {
            return ToolOutput::failed(json!({
                "error": format!("Internal error: {message}"),
                "reason": ErrorCode::InternalError.as_str(),
                "tool": name,
            }));
        }
    };
    catch_unwind(AssertUnwindSafe(|| registry.call_to_output(name, args))).unwrap_or_else(|_| {
        ToolOutput::failed(json!({
            "error": format!("Internal error in {name}"),
            "reason": ErrorCode::InternalError.as_str(),
            "tool": name,
        }))
    })
}

/// The game tools (chess, checkers, four-in-a-row, tic-tac-toe, mancala, sea battle, blackjack,
/// slot machine, RPG dice) as plain method calls.
///
/// Tools are stateless: every call carries the game's state string (`fen` for chess, `state` for
/// the others) and returns the new one. A typical turn:
///
/// ```gdscript
/// var tools := GameTools.new()
/// var game := tools.call_tool("new_four_in_a_row_game", {})
/// var ai := tools.call_tool("suggest_four_in_a_row_move", {"state": game.state})
/// game = tools.call_tool("apply_four_in_a_row_move", {"state": game.state, "column": ai.move})
/// ```
///
/// Arguments are checked against each tool's JSON Schema before the tool runs. Integers stay
/// integers and floats stay floats in both directions. On failure the returned Dictionary carries
/// `error` (a message) and `reason` (a code such as
/// `unknown_tool`, `invalid_args` with `field`, or a game's own
/// reason such as `column_full`).
#[derive(GodotClass)]
#[class(init, base = RefCounted)]
pub struct GameTools {
    last_notes: Vec<String>,
    last_failed: bool,
    last_error: LastError,
}

#[godot_api]
impl GameTools {
    /// Calls the tool [param name] with the arguments [param args] and returns its structured
    /// result.
    ///
    /// On failure the result carries `error` and `reason`:
    /// `unknown_tool` for a name that is not registered, `invalid_args`
    /// (plus `field`, the offending argument) when the arguments do not match the
    /// tool's schema or contain a value with no JSON form (an Object, a Callable, …), or the
    /// game's own reason for an illegal move (with `legal` = `false`).
    /// [method last_call_failed] and [method last_notes] describe the same call.
    #[func]
    pub fn call_tool(&mut self, name: GString, args: VarDictionary) -> VarDictionary {
        let name = name.to_string();
        let output = match convert::dictionary_to_json(&args) {
            Ok(map) => call_json(&name, &Value::Object(map)),
            Err(e) => ToolOutput::failed(json!({
                "error": format!("Invalid arguments for {name}: {e}"),
                "reason": ErrorCode::InvalidArgs.as_str(),
                "tool": name,
                "field": e.field_or("(arguments)"),
            })),
        };
        self.remember(&output);
        convert::json_to_dictionary(&output.structured)
    }

    /// Like [method call_tool], with the arguments and the result as JSON text. Text that does not
    /// parse as JSON gives an `invalid_args` result.
    #[func]
    pub fn call_tool_json(&mut self, name: GString, args_json: GString) -> GString {
        let name = name.to_string();
        let text = args_json.to_string();
        let output = match serde_json::from_str::<Value>(if text.trim().is_empty() {
            "{}"
        } else {
            &text
        }) {
            Ok(args) => call_json(&name, &args),
            Err(e) => ToolOutput::failed(json!({
                "error": format!("Invalid arguments for {name}: not JSON: {e}"),
                "reason": ErrorCode::InvalidArgs.as_str(),
                "tool": name,
                "field": "(arguments)",
            })),
        };
        self.remember(&output);
        GString::from(output.structured.to_string().as_str())
    }

    /// Every tool as a Dictionary `{name, description, parameters, read_only}`, sorted
    /// by name; `parameters` is the JSON Schema of the arguments (the shape LLM chat
    /// APIs use for tool definitions).
    #[func]
    pub fn list_tools(&self) -> VarArray {
        let Ok(registry) = registry() else {
            return VarArray::new();
        };
        let mut out = VarArray::new();
        for tool in registry.tools() {
            let def = json!({
                "name": tool.name(),
                "description": tool.description(),
                "parameters": tool.input_schema(),
                "read_only": tool.is_read_only(),
            });
            out.push(&convert::json_to_variant(&def));
        }
        out
    }

    /// Every game of the game tools, one Dictionary each, in order: the two-player board games
    /// (chess, checkers, four-in-a-row, tic-tac-toe, mancala, sea battle), then blackjack, the
    /// slot machine and the RPG dice.
    ///
    /// Each has `game` (its name, the `gameType` of its results), `board` (true for a board
    /// game), `tools` (the names of its tools) and the name of each tool it has under its kind:
    /// `new`, `apply`, `legal`, `choose`, `suggest` (the built-in AI, board games only), `spin`
    /// (the slot machine), `roll` (the dice). A board game also has `state` (the argument and
    /// result field holding the position: `fen` in chess, `state` otherwise), `move_arg` (the
    /// move's argument of its `apply` tool) and `moves` (the field of its `legal` tool's result
    /// listing the moves).
    /// ```gdscript
    /// var tools := GameTools.new()
    /// for game in GameTools.games():
    ///     if game.board:
    ///         var snapshot := tools.call_tool(game.new, {})
    ///         var legal := tools.call_tool(game.legal, {game.state: snapshot[game.state]})
    ///         print(game.game, " opens with one of ", legal[game.moves])
    /// ```
    #[func]
    pub fn games() -> VarArray {
        let mut out = VarArray::new();
        for game in GAMES {
            out.push(&convert::json_to_variant(&game_json(game)));
        }
        out
    }

    /// The names of every tool, sorted.
    #[func]
    pub fn tool_names(&self) -> PackedStringArray {
        let Ok(registry) = registry() else {
            return PackedStringArray::new();
        };
        registry.tools().map(|t| GString::from(t.name())).collect()
    }

    /// True when a tool named [param name] exists.
    #[func]
    pub fn has_tool(&self, name: GString) -> bool {
        registry().is_ok_and(|r| r.get(&name.to_string()).is_some())
    }

    /// The text notes of the last call on this object (for example
    /// "No legal moves available; the game is over."); empty when there were none.
    #[func]
    pub fn last_notes(&self) -> PackedStringArray {
        self.last_notes
            .iter()
            .map(|n| GString::from(n.as_str()))
            .collect()
    }

    /// True when the last call on this object failed (an illegal move, an unparsable state,
    /// invalid arguments, an unknown tool, a value [method to_json] cannot convert, text
    /// [method from_json] cannot parse).
    #[func]
    pub fn last_call_failed(&self) -> bool {
        self.last_failed
    }

    /// The error message of the last failed call on this object; empty after a success (the
    /// same as [method get_last_error], kept for scripts written before it).
    #[func]
    pub fn last_error(&self) -> GString {
        self.last_error.message_gstring()
    }

    /// The error message of the last failed call on this object; empty after a success.
    #[func]
    pub fn get_last_error(&self) -> GString {
        self.last_error.message_gstring()
    }

    /// The code of the last failed call on this object: the failed result's `reason`
    /// (`unknown_tool`, `invalid_args`, or a game's own such as `column_full`), or
    /// `invalid_argument` for a value [method to_json] or [method from_json] cannot convert;
    /// empty after a success.
    #[func]
    pub fn get_last_error_code(&self) -> GString {
        self.last_error.code_gstring()
    }

    /// Converts [param value] to JSON text exactly as [method call_tool] converts arguments:
    /// integers stay integers (`1`) and floats stay floats (`1.0`);
    /// StringName and NodePath become strings; Vector2/3/4(i) become `{x, y, z, w}`
    /// objects and Color `{r, g, b, a}`; dictionary keys become strings. A value with no
    /// JSON form (an Object, a Callable, NaN, an array containing itself) gives an empty String,
    /// and [method last_error] names the offending path.
    #[func]
    pub fn to_json(&mut self, value: Variant) -> GString {
        self.last_notes.clear();
        match convert::variant_to_json(&value) {
            Ok(json) => {
                self.succeed();
                GString::from(json.to_string().as_str())
            }
            Err(e) => {
                self.fail(e.to_string());
                GString::new()
            }
        }
    }

    /// Parses JSON text exactly as [method call_tool] converts results: integers become
    /// `int` (also beyond 2^53, unlike `JSON.parse_string`), floats stay
    /// `float` (`2.0` too), objects become Dictionaries with String keys.
    /// Text that is not JSON gives `null`, and [method last_error] says why.
    #[func]
    pub fn from_json(&mut self, text: GString) -> Variant {
        self.last_notes.clear();
        match serde_json::from_str::<Value>(&text.to_string()) {
            Ok(json) => {
                self.succeed();
                convert::json_to_variant(&json)
            }
            Err(e) => {
                self.fail(format!("not JSON: {e}"));
                Variant::nil()
            }
        }
    }

    /// The class reference XML the library registers with the editor's help, for tools that
    /// publish docs: class name (`AgentRuntime`, …, this class too) → the class's document in
    /// Godot's class reference format (as `godot --doctool` writes it: `<class>` with
    /// `<brief_description>`, `<description>`, `<methods>`, `<signals>`, `<members>`). The
    /// descriptions are the library's; types and defaults are read from what the library
    /// registered, written as GDScript writes them (`String`, `"user://agents.db"`,
    /// `Rect2(0, 0, 100, 100)`).
    /// ```gdscript
    /// var docs := GameTools.class_reference()
    /// for name in docs:
    ///     FileAccess.open("user://docs/%s.xml" % name, FileAccess.WRITE).store_string(docs[name])
    /// ```
    #[func]
    pub fn class_reference() -> VarDictionary {
        let mut out = VarDictionary::new();
        for (class, xml) in crate::docs::class_reference() {
            out.set(&class.to_variant(), &xml.to_variant());
        }
        out
    }
}

impl GameTools {
    fn remember(&mut self, output: &ToolOutput) {
        self.last_failed = output.is_error;
        self.last_notes = output.notes.clone();
        if output.is_error {
            let field = |key: &str| {
                output
                    .structured
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or("failed")
            };
            self.last_error.set(field("reason"), field("error"));
        } else {
            self.last_error.clear();
        }
    }

    fn succeed(&mut self) {
        self.last_failed = false;
        self.last_error.clear();
    }

    fn fail(&mut self, message: String) {
        self.last_failed = true;
        self.last_error
            .set(GodotErrorCode::InvalidArgument.as_str(), message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `games()` lists every declared game under the keys the demo reads, and every tool the
    /// registry has, once.
    #[test]
    fn the_games_list_every_game_and_tool() {
        let entries: Vec<Value> = GAMES.iter().map(|g| game_json(g)).collect();
        let names: Vec<&str> = entries
            .iter()
            .map(|e| e["game"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "chess",
                "checkers",
                "four_in_a_row",
                "tic_tac_toe",
                "mancala",
                "sea_battle",
                "blackjack",
                "slot",
                "rpg_dice"
            ]
        );
        let mut tools: Vec<&str> = entries
            .iter()
            .flat_map(|e| e["tools"].as_array().unwrap())
            .map(|t| t.as_str().unwrap())
            .collect();
        tools.sort_unstable();
        let registry = ToolRegistry::with_game_tools();
        let registered: Vec<&str> = registry.tools().map(|t| t.name()).collect();
        assert_eq!(tools, registered);
        let mancala = &entries[4];
        assert_eq!(
            mancala,
            &json!({
                "game": "mancala", "board": true,
                "tools": ["new_mancala_game", "apply_mancala_move", "legal_mancala_moves",
                          "choose_mancala_opponent_move", "suggest_mancala_move"],
                "new": "new_mancala_game", "apply": "apply_mancala_move",
                "legal": "legal_mancala_moves", "choose": "choose_mancala_opponent_move",
                "suggest": "suggest_mancala_move",
                "state": "state", "move_arg": "pit", "moves": "moves",
            })
        );
        assert_eq!(entries[0]["state"], "fen");
        assert_eq!(entries[0]["moves"], "movesUci");
        for entry in &entries {
            let board = entry["board"] == true;
            for key in ["suggest", "state", "move_arg", "moves"] {
                assert_eq!(entry.get(key).is_some(), board, "{entry}");
            }
        }
        assert_eq!(entries[7]["spin"], "spin_slot");
        assert_eq!(entries[8]["roll"], "roll_rpg_dice");
    }
}
