//! The report card's suite file: scenarios of agents and the steps played on them, read from
//! JSON ([`Suite::parse`]) and checked before anything runs ([`Suite::check`]).
//!
//! A suite is `{"name", "about"?, "world"?, "scenarios": [...]}`. A scenario holds its agents
//! (a key, a name, a role, a prompt, a position, tasks, read-only tools given as data) and its
//! steps, each an object with one key: `say`, `ask`, `task`, `wait`, `restart`. Unknown fields
//! are an error; every error names the path of the field (`scenarios[0].steps[3].ask.to`).
//! docs/evaluation.md describes the format field by field.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who says a line when a `say` step names no speaker.
pub const PLAYER: &str = "player";

/// A suite: scenarios run one after the other, each on a fresh database.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// The suite's name (shown on the card).
    pub name: String,
    /// What it measures, for the reader.
    #[serde(default)]
    pub about: String,
    /// The world every scenario plays in.
    #[serde(default)]
    pub world: World,
    /// The scenarios, at least one.
    pub scenarios: Vec<Scenario>,
}

/// The world of a suite: its size, how far agents hear, and its places.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct World {
    /// Width and height in world units (default 100 × 100).
    #[serde(default = "default_size")]
    pub size: [f64; 2],
    /// Distance within which agents hear lines not addressed to them (default: the runtime's).
    #[serde(default)]
    pub hearing_radius: Option<f64>,
    /// The places of the world by name (`"old mill"`): names an agent may say that exist.
    #[serde(default)]
    pub places: Vec<String>,
}

fn default_size() -> [f64; 2] {
    [100.0, 100.0]
}

impl Default for World {
    fn default() -> Self {
        World {
            size: default_size(),
            hearing_radius: None,
            places: Vec::new(),
        }
    }
}

/// One scenario: agents and what happens to them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Its name, unique in the suite.
    pub name: String,
    /// What it tests, for the reader.
    #[serde(default)]
    pub about: String,
    /// Its agents, at least one.
    pub agents: Vec<AgentSpec>,
    /// A tabletop campaign one of its agents runs as game master (for `turn` steps).
    #[serde(default)]
    pub campaign: Option<CampaignSpec>,
    /// What happens, in order.
    pub steps: Vec<Step>,
}

/// A tabletop campaign of a scenario, loaded as it starts (and again, as it was given, after a
/// restart), its game master one of the scenario's agents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignSpec {
    /// The agent that is the game master (a key).
    pub gm: String,
    /// The player characters of a fresh campaign (default `["pc_001"]`).
    #[serde(default)]
    pub party: Vec<String>,
    /// A whole `campaign.json` (docs/campaigns.md) instead of a fresh campaign.
    #[serde(default)]
    pub campaign: Option<Value>,
}

/// One agent of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// The scenario's name for it (steps refer to it by this key); the runtime's agent key.
    pub key: String,
    /// Its display name.
    pub name: String,
    /// Its role (`"baker"`).
    pub role: String,
    /// Its role prompt, the persona.
    #[serde(default)]
    pub prompt: String,
    /// Where it stands (`[x, y]`; default the world's centre).
    #[serde(default)]
    pub position: Option<[f64; 2]>,
    /// Tasks assigned as it spawns.
    #[serde(default)]
    pub tasks: Vec<String>,
    /// Whether it decides on its own when idle (default true).
    #[serde(default = "yes")]
    pub autonomous: bool,
    /// Read-only tools it may call, answered from data.
    #[serde(default)]
    pub tools: Vec<ToolData>,
}

fn yes() -> bool {
    true
}

/// A read-only tool given as data: its answer is looked up by one of its arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolData {
    /// The tool's name (`check_stock`).
    pub name: String,
    /// What it does, for the brain.
    pub description: String,
    /// Its arguments: a JSON Schema of an object, or the shorthand `{"item": "string"}`
    /// (docs/gdscript-tools.md).
    pub parameters: Value,
    /// The argument whose value, lower-cased, picks the answer.
    pub answer_by: String,
    /// The answers by that value.
    pub answers: BTreeMap<String, Value>,
    /// The answer for any other value (default `{"error": "unknown <answer_by> '<value>'"}`,
    /// a failed call).
    #[serde(default)]
    pub otherwise: Option<Value>,
}

/// One step of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Someone says a line to an agent; the runner waits for the agent's answer.
    Say(Say),
    /// The player asks an agent a question; what a good answer holds.
    Ask(Ask),
    /// A task is assigned to an agent.
    Task(TaskStep),
    /// Game time passes.
    Wait(Wait),
    /// The runtime stops and a new one starts on the same database, the agents resumed.
    Restart(Restart),
    /// A game-master turn on the scenario's campaign.
    Turn(Turn),
}

/// A game-master turn: what the player says, and whose turn it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// What the player says to the game master.
    pub input: String,
    /// The acting character (default: the campaign's active actor).
    #[serde(default)]
    pub actor: Option<String>,
    /// Dice the player rolls with the turn, told to the game master after the input.
    #[serde(default)]
    pub roll: Option<Roll>,
    /// The GM tools the turn should apply (`move` for "I walk into the next room",
    /// `move_options` for "where can I go?", `hp_delta` for "a rat bites me"), measured by *GM
    /// turns applying the expected tools*; empty: no expectation.
    #[serde(default)]
    pub expect: Vec<crate::campaign::GmTool>,
}

/// Dice rolled with a turn, as the `roll_rpg_dice` tool rolls them, seeded by the run's seed,
/// the scenario and the step: the same run rolls the same dice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Roll {
    /// Faces per die: 4, 6, 8, 10, 12, 20 or 100.
    pub sides: i64,
    /// How many dice, 1–100 (default 1).
    #[serde(default = "one_die")]
    pub count: i64,
}

fn one_die() -> i64 {
    1
}

/// A line said to an agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Say {
    /// Who says it: `"player"` (the default) or an agent's key.
    #[serde(default = "player")]
    pub from: String,
    /// The agent it is said to (a key).
    pub to: String,
    /// The line.
    pub text: String,
    /// The line asks for help (only from an agent): answered when `to` says a line to `from`
    /// afterwards.
    #[serde(default)]
    pub help: bool,
}

fn player() -> String {
    PLAYER.to_string()
}

/// A question of the player's to an agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ask {
    /// The agent asked (a key).
    pub to: String,
    /// The question; it ends with `?`.
    pub text: String,
    /// What it measures.
    pub counts_for: Counts,
    /// Words or phrases a good answer holds, every one (compared by their words, case and
    /// punctuation aside); at least one unless `counts_for` is `responsiveness`.
    #[serde(default)]
    pub expect: Vec<String>,
    /// The read-only tool whose description matches the question (`counts_for: "tool"`).
    #[serde(default)]
    pub tool: Option<String>,
}

/// What a question measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Counts {
    /// A fact told earlier (after a restart when one came between).
    Memory,
    /// The agent's own name, role, tasks or relationships.
    Persona,
    /// Something a read-only tool of the agent answers.
    Tool,
    /// Only whether it is answered (every question counts for responsiveness).
    Responsiveness,
}

impl Counts {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Counts::Memory => "memory",
            Counts::Persona => "persona",
            Counts::Tool => "tool",
            Counts::Responsiveness => "responsiveness",
        }
    }
}

/// A task assigned to an agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskStep {
    /// The agent (a key).
    pub to: String,
    /// The task.
    pub name: String,
}

/// Game time passing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wait {
    /// Game seconds, more than 0 and at most an hour.
    pub seconds: f64,
}

/// A restart (no fields: `{"restart": {}}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Restart {}

/// Most game seconds one `wait` step may take.
pub const MAX_WAIT_SECONDS: f64 = 3600.0;

/// A suite that cannot be read or run: where (a path such as `scenarios[0].steps[2].ask.to`,
/// or `line 4 column 7`) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteError {
    /// Where in the file.
    pub at: String,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for SuiteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.at.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.at, self.message)
        }
    }
}

impl std::error::Error for SuiteError {}

fn error(at: impl Into<String>, message: impl Into<String>) -> SuiteError {
    SuiteError {
        at: at.into(),
        message: message.into(),
    }
}

impl Suite {
    /// Reads a suite from JSON text and checks it ([`Suite::check`]).
    pub fn parse(text: &str) -> Result<Suite, SuiteError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let suite: Suite = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let inner = e.inner();
            let at = e.path().to_string();
            let message = if inner.is_syntax() || inner.is_eof() || at == "." {
                inner.to_string()
            } else {
                // Serde's message ends with the position; the path says where.
                let text = inner.to_string();
                match text.rfind(" at line ") {
                    Some(cut) => text[..cut].to_string(),
                    None => text,
                }
            };
            error(if at == "." { String::new() } else { at }, message)
        })?;
        suite.check()?;
        Ok(suite)
    }

    /// Checks what the types cannot: names unique and non-empty, steps naming agents and
    /// tools that exist, questions ending with `?`, numbers in range, tools' parameters.
    pub fn check(&self) -> Result<(), SuiteError> {
        if self.name.trim().is_empty() {
            return Err(error("name", "must not be empty"));
        }
        let [w, h] = self.world.size;
        if !(w.is_finite() && h.is_finite() && w > 0.0 && h > 0.0) {
            return Err(error("world.size", "must be two positive numbers"));
        }
        if let Some(r) = self.world.hearing_radius
            && !(r.is_finite() && r >= 0.0)
        {
            return Err(error(
                "world.hearing_radius",
                "must be a non-negative number",
            ));
        }
        if self.scenarios.is_empty() {
            return Err(error("scenarios", "give at least one scenario"));
        }
        let mut names = Vec::new();
        for (i, scenario) in self.scenarios.iter().enumerate() {
            let at = format!("scenarios[{i}]");
            if scenario.name.trim().is_empty() {
                return Err(error(format!("{at}.name"), "must not be empty"));
            }
            if names.contains(&&scenario.name) {
                return Err(error(
                    format!("{at}.name"),
                    format!("scenario '{}' is named twice", scenario.name),
                ));
            }
            names.push(&scenario.name);
            scenario.check(&at, &self.world)?;
        }
        Ok(())
    }
}

impl Scenario {
    /// The agent with `key`.
    pub fn agent(&self, key: &str) -> Option<&AgentSpec> {
        self.agents.iter().find(|a| a.key == key)
    }

    fn check(&self, at: &str, world: &World) -> Result<(), SuiteError> {
        if self.agents.is_empty() {
            return Err(error(format!("{at}.agents"), "give at least one agent"));
        }
        for (i, agent) in self.agents.iter().enumerate() {
            let at = format!("{at}.agents[{i}]");
            for (field, value) in [
                ("key", &agent.key),
                ("name", &agent.name),
                ("role", &agent.role),
            ] {
                if value.trim().is_empty() {
                    return Err(error(format!("{at}.{field}"), "must not be empty"));
                }
            }
            if agent.key == PLAYER {
                return Err(error(
                    format!("{at}.key"),
                    format!("'{PLAYER}' is the player's name in steps; pick another key"),
                ));
            }
            if self.agents[..i].iter().any(|a| a.key == agent.key) {
                return Err(error(
                    format!("{at}.key"),
                    format!("agent '{}' is listed twice", agent.key),
                ));
            }
            if let Some([x, y]) = agent.position
                && !(x.is_finite()
                    && y.is_finite()
                    && (0.0..=world.size[0]).contains(&x)
                    && (0.0..=world.size[1]).contains(&y))
            {
                return Err(error(
                    format!("{at}.position"),
                    format!(
                        "[{x}, {y}] is outside the world (0..{} × 0..{})",
                        world.size[0], world.size[1]
                    ),
                ));
            }
            for (t, tool) in agent.tools.iter().enumerate() {
                tool.check(&format!("{at}.tools[{t}]"))?;
                if agent.tools[..t].iter().any(|o| o.name == tool.name) {
                    return Err(error(
                        format!("{at}.tools[{t}].name"),
                        format!("tool '{}' is listed twice", tool.name),
                    ));
                }
            }
        }
        if let Some(campaign) = &self.campaign
            && self.agent(&campaign.gm).is_none()
        {
            return Err(error(
                format!("{at}.campaign.gm"),
                format!("no agent '{}' in scenario '{}'", campaign.gm, self.name),
            ));
        }
        let keys = || {
            self.agents
                .iter()
                .map(|a| a.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let known = |field: String, key: &str| {
            if self.agent(key).is_some() {
                Ok(())
            } else {
                Err(error(
                    field,
                    format!(
                        "no agent '{key}' in scenario '{}' (its agents: {})",
                        self.name,
                        keys()
                    ),
                ))
            }
        };
        for (i, step) in self.steps.iter().enumerate() {
            let at = format!("{at}.steps[{i}]");
            match step {
                Step::Say(say) => {
                    known(format!("{at}.say.to"), &say.to)?;
                    if say.from != PLAYER {
                        known(format!("{at}.say.from"), &say.from)?;
                    } else if say.help {
                        return Err(error(
                            format!("{at}.say.help"),
                            "only an agent asks another for help (give `from`)",
                        ));
                    }
                    if say.from == say.to {
                        return Err(error(
                            format!("{at}.say.from"),
                            "an agent does not say a line to itself",
                        ));
                    }
                    nonempty_line(&format!("{at}.say.text"), &say.text)?;
                }
                Step::Ask(ask) => {
                    known(format!("{at}.ask.to"), &ask.to)?;
                    nonempty_line(&format!("{at}.ask.text"), &ask.text)?;
                    if !ask.text.trim_end().ends_with('?') {
                        return Err(error(format!("{at}.ask.text"), "a question ends with '?'"));
                    }
                    if ask.counts_for != Counts::Responsiveness && ask.expect.is_empty() {
                        return Err(error(
                            format!("{at}.ask.expect"),
                            format!(
                                "a {} question says what its answer holds",
                                ask.counts_for.as_str()
                            ),
                        ));
                    }
                    for (e, expected) in ask.expect.iter().enumerate() {
                        if crate::eval::lines::words(expected).is_empty() {
                            return Err(error(format!("{at}.ask.expect[{e}]"), "must hold a word"));
                        }
                    }
                    match (&ask.tool, ask.counts_for) {
                        (Some(tool), _) => {
                            let agent = self.agent(&ask.to).map(|a| &a.tools[..]).unwrap_or(&[]);
                            if !agent.iter().any(|t| &t.name == tool) {
                                return Err(error(
                                    format!("{at}.ask.tool"),
                                    format!("agent '{}' has no tool '{tool}'", ask.to),
                                ));
                            }
                        }
                        (None, Counts::Tool) => {
                            return Err(error(
                                format!("{at}.ask.tool"),
                                "a tool question names the tool that answers it",
                            ));
                        }
                        (None, _) => {}
                    }
                }
                Step::Task(task) => {
                    known(format!("{at}.task.to"), &task.to)?;
                    nonempty_line(&format!("{at}.task.name"), &task.name)?;
                }
                Step::Wait(wait) => {
                    if !(wait.seconds.is_finite()
                        && wait.seconds > 0.0
                        && wait.seconds <= MAX_WAIT_SECONDS)
                    {
                        return Err(error(
                            format!("{at}.wait.seconds"),
                            format!(
                                "must be more than 0 and at most {MAX_WAIT_SECONDS}, got {}",
                                wait.seconds
                            ),
                        ));
                    }
                }
                Step::Restart(_) => {}
                Step::Turn(turn) => {
                    if self.campaign.is_none() {
                        return Err(error(
                            format!("{at}.turn"),
                            format!("scenario '{}' has no campaign to take a turn on", self.name),
                        ));
                    }
                    nonempty_line(&format!("{at}.turn.input"), &turn.input)?;
                    if let Some(roll) = turn.roll {
                        use agents_games::dice::{MAX_COUNT, SUPPORTED_SIDES, check};
                        check(roll.sides, roll.count).map_err(|e| {
                            let sides = SUPPORTED_SIDES.map(|s| s.to_string()).join(", ");
                            match e.reason {
                                "unsupported_sides" => error(
                                    format!("{at}.turn.roll.sides"),
                                    format!("must be one of {sides}, got {}", roll.sides),
                                ),
                                _ => error(
                                    format!("{at}.turn.roll.count"),
                                    format!("must be 1 to {MAX_COUNT}, got {}", roll.count),
                                ),
                            }
                        })?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl ToolData {
    /// The tool's arguments as a JSON Schema (the shorthand expanded).
    pub fn schema(&self) -> Result<Value, String> {
        crate::apps::action::params_schema(&self.parameters)
    }

    /// The answer for `args`: `Ok` an answer, `Err` a failed call's output.
    pub fn answer(&self, args: &Value) -> Result<Value, Value> {
        let key = match &args[&self.answer_by] {
            Value::String(s) => s.trim().to_lowercase(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        if let Some(answer) = self.answers.get(&key) {
            return Ok(answer.clone());
        }
        match &self.otherwise {
            Some(answer) => Ok(answer.clone()),
            None => Err(serde_json::json!({
                "error": format!("unknown {} '{key}'", self.answer_by)
            })),
        }
    }

    fn check(&self, at: &str) -> Result<(), SuiteError> {
        crate::apps::action::check_name(&self.name).map_err(|e| error(format!("{at}.name"), e))?;
        if self.description.trim().is_empty() {
            return Err(error(format!("{at}.description"), "must not be empty"));
        }
        let schema = self
            .schema()
            .map_err(|e| error(format!("{at}.parameters"), e))?;
        if schema["properties"].get(&self.answer_by).is_none() {
            return Err(error(
                format!("{at}.answer_by"),
                format!("'{}' is not one of the tool's parameters", self.answer_by),
            ));
        }
        if let Some(bad) = self.answers.keys().find(|k| k.to_lowercase() != **k) {
            return Err(error(
                format!("{at}.answers.{bad}"),
                "answers are looked up lower-cased: write the key in lower case",
            ));
        }
        Ok(())
    }
}

fn nonempty_line(at: &str, text: &str) -> Result<(), SuiteError> {
    if text.trim().is_empty() {
        return Err(error(at, "must not be empty"));
    }
    crate::limits::check_chars(at, text, crate::limits::MAX_MESSAGE_CHARS).map_err(|e| error(at, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{
        "name": "tiny",
        "world": {"places": ["old mill"]},
        "scenarios": [{
            "name": "one",
            "agents": [{"key": "baker", "name": "Mira", "role": "baker",
                "tools": [{"name": "check_stock", "description": "Loaves left.",
                           "parameters": {"item": "string"}, "answer_by": "item",
                           "answers": {"rye": {"left": 3}}}]},
                       {"key": "smith", "name": "Bram", "role": "smith"}],
            "steps": [
                {"say": {"to": "baker", "text": "The lanterns are in the old mill."}},
                {"say": {"from": "smith", "to": "baker", "text": "Can you help me?", "help": true}},
                {"task": {"to": "baker", "name": "bake bread"}},
                {"wait": {"seconds": 5}},
                {"restart": {}},
                {"ask": {"to": "baker", "text": "Where are the lanterns?", "counts_for": "memory",
                         "expect": ["old mill"]}},
                {"ask": {"to": "baker", "text": "Any rye left?", "counts_for": "tool",
                         "tool": "check_stock", "expect": ["rye", "3"]}}
            ]
        }]
    }"#;

    fn with(from: &str, to: &str) -> String {
        GOOD.replacen(from, to, 1)
    }

    fn err(text: &str) -> String {
        Suite::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn a_good_suite_reads() {
        let suite = Suite::parse(GOOD).unwrap();
        assert_eq!(suite.scenarios[0].steps.len(), 7);
        assert!(matches!(suite.scenarios[0].steps[4], Step::Restart(_)));
        let tool = &suite.scenarios[0].agents[0].tools[0];
        assert_eq!(
            tool.answer(&serde_json::json!({"item": "Rye"})),
            Ok(serde_json::json!({"left": 3}))
        );
        assert!(tool.answer(&serde_json::json!({"item": "spelt"})).is_err());
    }

    #[test]
    fn mistakes_name_their_field() {
        let cases = [
            (
                with("\"seconds\": 5", "\"seconds\": \"5\""),
                "scenarios[0].steps[3].wait.seconds: invalid type: string \"5\", expected f64",
            ),
            (
                with("\"counts_for\": \"memory\"", "\"counts_for\": \"memry\""),
                "scenarios[0].steps[5].ask.counts_for: unknown variant `memry`",
            ),
            (
                with("\"role\": \"smith\"", "\"role\": \"smith\", \"colour\": 1"),
                "scenarios[0].agents[1].colour: unknown field `colour`, expected one of `key`",
            ),
            (
                with(
                    "{\"to\": \"baker\", \"text\": \"Where",
                    "{\"to\": \"bakr\", \"text\": \"Where",
                ),
                "scenarios[0].steps[5].ask.to: no agent 'bakr' in scenario 'one' (its agents: baker, smith)",
            ),
            (
                with("lanterns?", "lanterns"),
                "scenarios[0].steps[5].ask.text: a question ends with '?'",
            ),
            (
                with("\"expect\": [\"old mill\"]", "\"expect\": []"),
                "scenarios[0].steps[5].ask.expect: a memory question says what its answer holds",
            ),
            (
                with("\"tool\": \"check_stock\"", "\"tool\": \"check_stok\""),
                "scenarios[0].steps[6].ask.tool: agent 'baker' has no tool 'check_stok'",
            ),
            (
                with("\"answer_by\": \"item\"", "\"answer_by\": \"loaf\""),
                "scenarios[0].agents[0].tools[0].answer_by: 'loaf' is not one of the tool's parameters",
            ),
            (
                with("\"seconds\": 5", "\"seconds\": 0"),
                "scenarios[0].steps[3].wait.seconds: must be more than 0 and at most 3600, got 0",
            ),
            (
                with("{\"restart\": {}}", "{\"reboot\": {}}"),
                "scenarios[0].steps[4]: unknown variant `reboot`",
            ),
            (
                with("\"from\": \"smith\"", "\"from\": \"baker\""),
                "scenarios[0].steps[1].say.from: an agent does not say a line to itself",
            ),
            (
                with(
                    "{\"restart\": {}}",
                    "{\"turn\": {\"input\": \"I open the door.\"}}",
                ),
                "scenarios[0].steps[4].turn: scenario 'one' has no campaign to take a turn on",
            ),
            (
                with(
                    "\"steps\": [",
                    "\"campaign\": {\"gm\": \"wizard\"}, \"steps\": [",
                ),
                "scenarios[0].campaign.gm: no agent 'wizard' in scenario 'one'",
            ),
        ];
        for (text, want) in cases {
            let got = err(&text);
            assert!(got.starts_with(want), "got {got:?}, want {want:?}");
        }
        let rolled = |roll: &str| {
            with(
                "\"steps\": [",
                &format!(
                    "\"campaign\": {{\"gm\": \"baker\"}}, \"steps\": [\
                     {{\"turn\": {{\"input\": \"I swing.\", \"roll\": {roll}}}}},"
                ),
            )
        };
        assert!(Suite::parse(&rolled(r#"{"sides": 20}"#)).is_ok());
        assert_eq!(
            err(&rolled(r#"{"sides": 7}"#)),
            "scenarios[0].steps[0].turn.roll.sides: must be one of 4, 6, 8, 10, 12, 20, 100, got 7"
        );
        assert_eq!(
            err(&rolled(r#"{"sides": 6, "count": 0}"#)),
            "scenarios[0].steps[0].turn.roll.count: must be 1 to 100, got 0"
        );
        assert!(
            err(&rolled(r#"{"sides": 6, "faces": 2}"#)).contains("unknown field `faces`"),
            "{}",
            err(&rolled(r#"{"sides": 6, "faces": 2}"#))
        );
        let expecting = |tools: &str| {
            with(
                "\"steps\": [",
                &format!(
                    "\"campaign\": {{\"gm\": \"baker\"}}, \"steps\": [\
                     {{\"turn\": {{\"input\": \"Where now?\", \"expect\": {tools}}}}},"
                ),
            )
        };
        let parsed = Suite::parse(&expecting(r#"["move_options"]"#)).unwrap();
        let Step::Turn(turn) = &parsed.scenarios[0].steps[0] else {
            panic!("{parsed:?}");
        };
        assert_eq!(turn.expect, [crate::campaign::GmTool::MoveOptions]);
        let unknown = err(&expecting(r#"["fly"]"#));
        assert!(
            unknown.contains("scenarios[0].steps[0].turn.expect[0]")
                && unknown.contains("move_options"),
            "{unknown}"
        );
        assert!(
            err("{\"name\": ").contains("line 1"),
            "{}",
            err("{\"name\": ")
        );
        assert_eq!(
            err(r#"{"name": "x", "scenarios": []}"#),
            "scenarios: give at least one scenario"
        );
    }
}
