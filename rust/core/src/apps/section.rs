//! The app an agent plays, as a section of its decision's context ([`crate::brain::Section`]):
//! the lines a model reads, and how the offline `scripted` brain plays.
//!
//! Offline, when the app offers the read-only `suggest_move` (the game apps: the built-in AI's
//! pick, `{"action", "params"}`), the scripted brain asks it, then plays what it suggests.
//! Otherwise it picks one of the app actions it may call now at random (seeded) and fills its
//! `params` with arguments its schema accepts ([`super::sample`]). With no action of its own (the
//! human is in control, it is not its turn) it waits. While a move is due
//! ([`super::ActionDef::due`]) the app plays first, and a line to answer is answered beside the
//! move.

use std::fmt::Write;

use serde_json::{Value, json};

use super::{AppView, ControlMode};
use crate::brain::section::act;
use crate::brain::{BrainContext, BrainReply, ScriptedPlay, Section, budget};
use crate::tools::world::WAIT;

/// The read-only action that suggests the next move (the game apps offer it).
pub const SUGGEST: &str = "suggest_move";

impl Section for AppView {
    fn key(&self) -> &'static str {
        "app"
    }

    fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Who the agent is in the app, the state, what it may do, what happened: the state cut
    /// to [`budget::APP_STATE_TOKENS`], each action or event line to
    /// [`budget::APP_LOG_LINE_CHARS`], the newest actions and the newest events each within
    /// [`budget::APP_LOG_TOKENS`].
    fn situation_lines(&self, _context: &BrainContext) -> Option<String> {
        let mut out = format!(
            "You play app {} ({} mode, {} in control).",
            self.app_id, self.mode, self.control_mode
        );
        if !self.role_prompt.trim().is_empty() {
            let _ = write!(out, " {}", self.role_prompt.trim());
        }
        if let Some(label) = &self.human_label {
            let _ = write!(out, "\nNow: {label}");
        }
        let state = self.state.to_string();
        if budget::tokens(&state) > budget::APP_STATE_TOKENS {
            let _ = write!(
                out,
                "\nApp state (cut to its first {} characters of {}): {}",
                budget::APP_STATE_TOKENS * 4,
                state.chars().count(),
                budget::cut_to(&state, budget::APP_STATE_TOKENS)
            );
        } else {
            let _ = write!(out, "\nApp state: {state}");
        }
        if self.actions.is_empty() {
            out.push_str(match self.control_mode {
                ControlMode::Human => {
                    "\nThe human is in control: you have no app actions now; you may talk."
                }
                _ => "\nNo app actions are available to you now.",
            });
        } else {
            let _ = write!(
                out,
                "\nYour app actions now (tools): {}.",
                self.actions.join(", ")
            );
            if !self.due.is_empty() {
                let _ = write!(
                    out,
                    "\nIt is your move: your answer must call {}.",
                    self.due.join(" or ")
                );
            }
        }
        let line = |text: String| crate::limits::cut_copy(&text, budget::APP_LOG_LINE_CHARS);
        if !self.history.is_empty() {
            out.push_str("\nLast actions, oldest first:");
            let (actions, earlier) =
                budget::newest_within(&self.history, budget::APP_LOG_TOKENS, |a| {
                    let outcome = match &a.error {
                        None => format!("ok {}", a.result),
                        Some(e) => {
                            format!("failed: {}", serde_json::to_string(e).unwrap_or_default())
                        }
                    };
                    line(format!(
                        "#{} {} {} {} → {outcome}",
                        a.action_id, a.by, a.name, a.params
                    ))
                });
            for text in budget::left_out(earlier, "actions")
                .into_iter()
                .chain(actions)
            {
                let _ = write!(out, "\n{text}");
            }
        }
        let (events, earlier) = budget::newest_within(&self.events, budget::APP_LOG_TOKENS, |e| {
            line(format!("System: {e}"))
        });
        for text in budget::left_out(earlier, "events")
            .into_iter()
            .chain(events)
        {
            let _ = write!(out, "\n{text}");
        }
        Some(out)
    }

    fn scripted(&self, context: &BrainContext, play: &mut ScriptedPlay<'_>) -> Option<BrainReply> {
        Some(self.play(context, play))
    }

    fn summary(&self) -> Option<String> {
        Some(format!(
            "app '{}' ({})",
            self.app_id,
            self.control_mode.as_str()
        ))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl AppView {
    /// Plays what `suggest_move` answered earlier in this decision, if it did.
    fn take_suggestion(
        &self,
        context: &BrainContext,
        play: &mut ScriptedPlay<'_>,
    ) -> Option<BrainReply> {
        let hint = context
            .steps
            .last()?
            .results
            .iter()
            .find(|r| r.tool == SUGGEST && !r.is_error)?;
        let action = hint.result["result"]["action"].as_str()?;
        if !self.actions.iter().any(|a| a == action) {
            return None;
        }
        let params = hint.result["result"]["params"].clone();
        let call = play.call(action, params, Some("the built-in AI's pick".into()));
        Some(act(vec![call]))
    }

    /// An offline decision in this app.
    fn play(&self, context: &BrainContext, play: &mut ScriptedPlay<'_>) -> BrainReply {
        let tool = |name: &str| {
            context
                .tools
                .iter()
                .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        };
        let offered: Vec<&Value> = self.actions.iter().filter_map(|name| tool(name)).collect();
        if offered.is_empty() {
            if tool(WAIT).is_some() {
                let call = play.call(WAIT, json!({}), Some("no app action is mine now".into()));
                return act(vec![call]);
            }
            return BrainReply {
                assistant_text: "I'll wait for my turn.".into(),
                dialog_type: "monologue".into(),
                tool_calls: Vec::new(),
            };
        }
        if let Some(reply) = self.take_suggestion(context, play) {
            return reply;
        }
        if offered.iter().any(|t| t["name"] == SUGGEST) {
            let call = play.call(SUGGEST, json!({}), Some("asking for a hint".into()));
            return act(vec![call]);
        }
        let pick = offered[play.below(offered.len())];
        let name = pick["name"].as_str().unwrap_or_default().to_string();
        let args = super::sample::sample(&pick["parameters"], play.rng());
        let call = play.call(&name, args, Some(format!("playing {}", self.app_id)));
        act(vec![call])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::AppMode;
    use crate::brain::scripted::ScriptedBrain;
    use crate::brain::{Brain, BrainSettings, llm::prompt};

    fn board() -> AppView {
        AppView {
            app_id: "board".into(),
            mode: AppMode::Static,
            control_mode: ControlMode::Agent,
            role_prompt: "You play O.".into(),
            state: json!({"cells": "X........"}),
            human_label: None,
            actions: vec!["place".into()],
            due: Vec::new(),
            history: Vec::new(),
            events: vec!["Event: roundStarted".into()],
        }
    }

    #[test]
    fn a_huge_state_and_a_long_log_stay_within_their_budgets() {
        use crate::apps::ActionRecord;
        let mut app = board();
        app.state = json!({"cells": "x".repeat(200_000)});
        app.history = (1..=100)
            .map(|i| ActionRecord {
                action_id: i,
                name: "place".into(),
                params: json!({"cell": 1}),
                by: crate::apps::Actor::Agent,
                ok: true,
                result: json!({"board": "r".repeat(50_000)}),
                error: None,
                at: String::new(),
            })
            .collect();
        app.events = (1..=100)
            .map(|i| format!("Event {i}: {}", "e".repeat(16_000)))
            .collect();
        let context = BrainContext::detached("agent_001", "Ivy");
        let lines = app.situation_lines(&context).unwrap();
        let most = budget::APP_STATE_TOKENS + 2 * budget::APP_LOG_TOKENS + 100;
        assert!(budget::tokens(&lines) <= most, "{}", budget::tokens(&lines));
        assert!(lines.contains("App state (cut to its first 8000 characters of 200"));
        assert!(lines.contains("earlier actions, not shown)\n#"));
        assert!(lines.contains("#100 "), "the newest action");
        assert!(lines.contains("earlier events, not shown)"));
        assert!(lines.contains("System: Event 100: "), "the newest event");
    }

    #[tokio::test]
    async fn an_app_is_a_section_that_the_brains_read_without_knowing_apps() {
        let mut context = BrainContext::detached("agent_001", "Ivy");
        context.tools = vec![json!({"name": "place", "description": "", "parameters": {
            "type": "object", "properties": {"cell": {"type": "integer", "minimum": 0,
            "maximum": 8}}, "required": ["cell"], "additionalProperties": false}})];
        context.sections.put(board());
        // Its JSON is the context's `app` field (what the `cli` brain sends).
        let json = serde_json::to_value(&context).unwrap();
        assert_eq!(json["app"]["app_id"], "board");
        assert_eq!(json["app"]["actions"], json!(["place"]));
        // A model reads its lines in the situation; the system prompt stays the agent's.
        let situation = prompt::situation(&context);
        assert!(
            situation.contains("You play app board (static mode, agent in control). You play O."),
            "{situation}"
        );
        assert!(
            situation.contains("Your app actions now (tools): place."),
            "{situation}"
        );
        assert!(
            situation.contains("System: Event: roundStarted"),
            "{situation}"
        );
        assert!(prompt::identity(&context).starts_with("You are Ivy (agent_001)"));
        assert!(prompt::system_prompt(&context).contains("You are Ivy (agent_001)"));
        // Offline, the scripted brain plays one of its actions with valid arguments.
        let mut brain = ScriptedBrain::new(&BrainSettings::default());
        let reply = brain.decide(&context).await.unwrap();
        assert_eq!(reply.tool_calls.len(), 1, "{reply:?}");
        assert_eq!(reply.tool_calls[0].tool, "place");
        let cell = reply.tool_calls[0].args["cell"].as_i64().unwrap();
        assert!((0..=8).contains(&cell), "{reply:?}");
        assert_eq!(board().summary().as_deref(), Some("app 'board' (agent)"));
    }
}
