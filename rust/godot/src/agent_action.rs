//! `AgentAction`: one action of an [`AgentApp`](crate::agent_app::AgentApp) as a resource, for
//! the inspector (the Dictionary form works too).

use agents_core::apps::ActionDef;
use godot::prelude::*;
use serde_json::Value;

use crate::convert;

/// One action an [AgentApp] offers: it becomes a tool of the agent attached to the app (unless
/// [member human_only]). Put these in [member AgentApp.actions] from the inspector, or use the
/// Dictionary form `{name, description, params, humanOnly, agentOnly, readOnly, due}` in code:
///
/// ```gdscript
/// var place := AgentAction.new()
/// place.name = "place"
/// place.description = "Place your mark"
/// place.params = {"row": "int", "col": "int"}
/// $AgentApp.actions = [place, {"name": "resign", "description": "Give up", "humanOnly": true}]
/// ```
#[derive(GodotClass)]
#[class(init, base = Resource)]
pub struct AgentAction {
    /// The tool's name: 1 to 64 letters, digits, `_` or `-` (`place`).
    #[export(placeholder = "place")]
    name: GString,
    /// What it does, for the agent's model (`Place your mark`).
    #[export(multiline)]
    description: GString,
    /// Its arguments: the shorthand `{"row": "int", "col": "int"}` (types `int`, `number`,
    /// `string`, `bool`; every field required), or a JSON Schema object
    /// (`{"type": "object", "properties": …}`). Empty: no arguments.
    #[export]
    params: VarDictionary,
    /// Only the human may trigger it ([method AgentApp.human_action]); the agent never sees it.
    #[export_group(name = "Access")]
    #[export]
    human_only: bool,
    /// Only the agent may trigger it; [method AgentApp.human_action] is refused.
    #[export]
    agent_only: bool,
    /// It only reads (a hint, a look at something) and changes nothing: its result goes back
    /// to the agent within the same decision.
    #[export]
    read_only: bool,
    /// The agent must take it now (its move in a turn-based game): while an offered action is
    /// due, the agent's answer must call one of them (after any look-ups) or it goes back to
    /// the brain for repair. Set it on the actions of the agent's turn
    /// ([method AgentApp.set_actions]); never with [member human_only] or [member read_only].
    #[export]
    due: bool,
}

#[godot_api]
impl AgentAction {
    /// The action's Dictionary form
    /// `{name, description, params, humanOnly, agentOnly, readOnly, due}` (the shape
    /// [member AgentApp.actions] also accepts).
    #[func]
    pub fn to_dictionary(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        for (key, value) in [
            ("name", self.name.to_variant()),
            ("description", self.description.to_variant()),
            ("params", self.params.to_variant()),
            ("humanOnly", self.human_only.to_variant()),
            ("agentOnly", self.agent_only.to_variant()),
            ("readOnly", self.read_only.to_variant()),
            ("due", self.due.to_variant()),
        ] {
            d.set(&key.to_variant(), &value);
        }
        d
    }
}

impl AgentAction {
    /// The core action (checked when the app registers or sets its actions).
    pub fn to_core(&self) -> Result<ActionDef, String> {
        let params = if self.params.is_empty() {
            Value::Null
        } else {
            Value::Object(
                convert::dictionary_to_json(&self.params)
                    .map_err(|e| format!("action '{}': params: {e}", self.name))?,
            )
        };
        Ok(ActionDef {
            name: self.name.to_string(),
            description: self.description.to_string(),
            params,
            human_only: self.human_only,
            agent_only: self.agent_only,
            read_only: self.read_only,
            due: self.due,
        })
    }
}
