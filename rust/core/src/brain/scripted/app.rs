//! Playing an app offline: the scripted brain picks one of the app actions it may call now, at
//! random (seeded), and fills its `params` with arguments its schema accepts
//! ([`crate::apps::sample`]). With no action of its own (the human is in control, it is not its
//! turn) it waits.

use serde_json::{Value, json};

use super::{BrainContext, BrainReply, ScriptedBrain};
use crate::apps::AppView;
use crate::tools::world::WAIT;

impl ScriptedBrain {
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
        let pick = offered[self.below(offered.len())];
        let name = pick["name"].as_str().unwrap_or_default().to_string();
        let args = crate::apps::sample::sample(&pick["parameters"], &mut self.rng);
        let call = self.call(&name, args, Some(format!("playing {}", app.app_id)));
        ScriptedBrain::act(vec![call])
    }
}
