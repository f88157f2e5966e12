//! Playing an app offline. When the app offers the read-only `suggest_move` (the game apps:
//! the built-in AI's pick, `{"action", "params"}`), the scripted brain asks it, then plays what
//! it suggests. Otherwise it picks one of the app actions it may call now at random (seeded)
//! and fills its `params` with arguments its schema accepts ([`crate::apps::sample`]). With no
//! action of its own (the human is in control, it is not its turn) it waits.

use serde_json::{Value, json};

use super::{BrainContext, BrainReply, ScriptedBrain};
use crate::apps::AppView;
use crate::tools::world::WAIT;

/// The read-only action that suggests the next move (the game apps offer it).
pub const SUGGEST: &str = "suggest_move";

impl ScriptedBrain {
    /// Plays what `suggest_move` answered earlier in this decision, if it did.
    fn take_suggestion(&mut self, ctx: &BrainContext, app: &AppView) -> Option<BrainReply> {
        let hint = ctx
            .steps
            .last()?
            .results
            .iter()
            .find(|r| r.tool == SUGGEST && !r.is_error)?;
        let action = hint.result["result"]["action"].as_str()?;
        if !app.actions.iter().any(|a| a == action) {
            return None;
        }
        let params = hint.result["result"]["params"].clone();
        let call = self.call(action, params, Some("the built-in AI's pick".into()));
        Some(ScriptedBrain::act(vec![call]))
    }

    /// A decision in `app`.
    pub(super) fn play(&mut self, ctx: &BrainContext, app: &AppView) -> BrainReply {
        let tool = |name: &str| {
            ctx.tools
                .iter()
                .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        };
        let offered: Vec<&Value> = app.actions.iter().filter_map(|name| tool(name)).collect();
        if offered.is_empty() {
            if tool(WAIT).is_some() {
                let call = self.call(WAIT, json!({}), Some("no app action is mine now".into()));
                return ScriptedBrain::act(vec![call]);
            }
            return BrainReply {
                assistant_text: "I'll wait for my turn.".into(),
                dialog_type: "monologue".into(),
                tool_calls: Vec::new(),
            };
        }
        if let Some(reply) = self.take_suggestion(ctx, app) {
            return reply;
        }
        if offered.iter().any(|t| t["name"] == SUGGEST) {
            let call = self.call(SUGGEST, json!({}), Some("asking for a hint".into()));
            return ScriptedBrain::act(vec![call]);
        }
        let pick = offered[self.below(offered.len())];
        let name = pick["name"].as_str().unwrap_or_default().to_string();
        let args = crate::apps::sample::sample(&pick["parameters"], &mut self.rng);
        let call = self.call(&name, args, Some(format!("playing {}", app.app_id)));
        ScriptedBrain::act(vec![call])
    }
}
