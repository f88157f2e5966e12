//! The GM tools on a campaign file, as tools of a [`ToolRegistry`]: what `agents-server` offers
//! over MCP and `call_tool` (the GM tools' names, plus a `campaign` argument).
//!
//! Each tool takes the GM tool's own arguments plus `campaign` (a campaign file) and optionally
//! `turn_actor_id` (a party member; default the active actor). It loads the file, runs the one
//! call through [`Campaign::run_calls`] — the allowlist, the actor's state, the arguments, in that
//! order —, saves the file when the call was applied, and answers
//! `{applied_actions, tool_feedback}` (an error result when the call failed, with its `error` and
//! `reason` at the top level too). The schemas shown to MCP hosts name the arguments and require
//! only `campaign`: the campaign's checks, not the schema, decide a call's reason.
//!
//! What `campaign` may name is the registry's [`CampaignFiles`], chosen by who calls: any path
//! for the operator's own command line, a file inside the campaign directory for the untrusted
//! surfaces (WebSocket `call_tool`, MCP over HTTP and stdio), nothing when those have no
//! directory. Either way the file must be a regular campaign file of bounded size
//! ([`super::dir`]); a refused name is `reason: invalid_path`, a file that is no campaign
//! `invalid_campaign`, and neither is ever written. The tools do file I/O, so servers run them
//! off their async workers (they are registered as [`ToolSpec::searches`]).

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::dir::{CampaignDir, CampaignFile};
use super::gm::GmTool;
use super::{Campaign, CampaignError};
use crate::contract::ToolCall;
use crate::error_code::ErrorCode;
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// The argument naming the campaign file.
pub const CAMPAIGN_ARG: &str = "campaign";
/// The argument naming the turn actor.
pub const TURN_ACTOR_ARG: &str = "turn_actor_id";

/// What the `campaign` argument of the GM tools may name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CampaignFiles {
    /// Any path: the operator's own shell (`agents-server tool`), which is trusted.
    AnyPath,
    /// A path relative to this directory, staying inside it ([`CampaignDir`]): the untrusted
    /// surfaces of a server started with a campaign directory.
    Inside(PathBuf),
    /// Nothing: the untrusted surfaces of a server without a campaign directory.
    Refused,
}

impl CampaignFiles {
    /// [`CampaignFiles::Inside`] the directory when there is one, [`CampaignFiles::Refused`]
    /// otherwise: what a server's clients may name.
    pub fn for_clients(campaign_dir: Option<PathBuf>) -> CampaignFiles {
        campaign_dir.map_or(CampaignFiles::Refused, CampaignFiles::Inside)
    }

    /// The file `name` names, or why it may not be named.
    pub fn resolve(&self, name: &str) -> Result<CampaignFile, CampaignError> {
        match self {
            CampaignFiles::AnyPath => Ok(CampaignFile::any(name)),
            CampaignFiles::Inside(dir) => CampaignDir::new(dir).resolve(name),
            CampaignFiles::Refused => Err(CampaignError::NoCampaignDir),
        }
    }
}

/// The schema of `tool` on a file: its own properties, `campaign` and `turn_actor_id`; nothing
/// else (a misspelt argument is refused). The properties carry their type in their description
/// only: the campaign's checks, in their fixed order, judge the values (a dying actor's call is
/// `actor_state_restricted` before its arguments are looked at).
fn schema(tool: GmTool) -> Value {
    let own = tool.parameters();
    let mut properties = Map::new();
    for (name, property) in own["properties"].as_object().into_iter().flatten() {
        let kind = match &property["type"] {
            Value::String(t) => t.clone(),
            Value::Array(ts) => ts
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" or "),
            _ => "object".into(),
        };
        let text = property["description"].as_str().unwrap_or_default();
        properties.insert(
            name.clone(),
            json!({"description": format!("({kind}) {text}")}),
        );
    }
    if tool == GmTool::Move {
        properties.insert(
            "from_area_id".into(),
            json!({"description": "Never pass it: it is refused (the backend derives it)."}),
        );
    }
    properties.insert(
        CAMPAIGN_ARG.into(),
        json!({"type": "string", "description": "The campaign.json to act on (saved when the call is applied): a path; over WebSocket and MCP, relative to the server's campaign directory."}),
    );
    properties.insert(
        TURN_ACTOR_ARG.into(),
        json!({"description": "(string) The turn actor, a party member (default: the active actor)."}),
    );
    json!({"type": "object", "properties": properties, "required": [CAMPAIGN_ARG],
           "additionalProperties": false})
}

fn failure(message: String, reason: ErrorCode) -> ToolOutput {
    ToolOutput::failed(json!({"error": message, "reason": reason.as_str()}))
}

/// Runs `tool` with `args` on the campaign file they name, as `files` allows.
fn run(tool: GmTool, args: &Value, files: &CampaignFiles) -> ToolOutput {
    let Some(name) = args.get(CAMPAIGN_ARG).and_then(Value::as_str) else {
        return failure(
            format!("{tool}: {CAMPAIGN_ARG} (a path) is required"),
            ErrorCode::InvalidArgs,
        );
    };
    let actor = match args.get(TURN_ACTOR_ARG) {
        None | Some(Value::Null) => None,
        Some(Value::String(a)) => Some(a.as_str()),
        Some(_) => {
            return failure(
                format!("{tool}: {TURN_ACTOR_ARG} must be a string"),
                ErrorCode::InvalidArgs,
            );
        }
    };
    let loaded = files
        .resolve(name)
        .and_then(|file| Ok((file.load()?, file)));
    let (mut campaign, file): (Campaign, CampaignFile) = match loaded {
        Ok((loaded, file)) => (loaded.campaign, file),
        Err(e) => return failure(format!("{tool}: {e}"), e.file_code()),
    };
    let mut own = args.as_object().cloned().unwrap_or_default();
    own.remove(CAMPAIGN_ARG);
    own.remove(TURN_ACTOR_ARG);
    let call = ToolCall::new("call_001", tool.as_str(), Value::Object(own));
    let outcome = match campaign.run_calls(std::slice::from_ref(&call), actor) {
        Ok(outcome) => outcome,
        Err(e) => return failure(format!("{tool}: {e}"), ErrorCode::InvalidArgs),
    };
    if !outcome.applied_actions.is_empty()
        && !tool.is_read_only()
        && let Err(e) = file.save(&campaign)
    {
        return failure(
            format!("{tool}: the call was applied but not saved: {e}"),
            ErrorCode::SaveFailed,
        );
    }
    let mut structured = outcome.to_json();
    match outcome
        .tool_feedback
        .as_ref()
        .and_then(|f| f.failed_calls.first())
    {
        // A failed result names the failure at the top level too, as every tool's does.
        Some(failed) => {
            structured["error"] = json!(failed.message);
            structured["reason"] = json!(failed.reason.as_str());
            ToolOutput::failed(structured)
        }
        None => ToolOutput::ok(structured),
    }
}

/// Adds the four GM tools on campaign files to `registry`, their `campaign` argument naming
/// what `files` allows.
///
/// # Panics
///
/// When a tool of the same name is registered already (they are registered once, at start-up).
pub fn register(registry: &mut ToolRegistry, files: CampaignFiles) {
    for tool in GmTool::ALL {
        let description = format!(
            "Tabletop GM tool on a campaign file: {} Pass `campaign` (the campaign.json path) \
             and optionally `turn_actor_id`.",
            tool.description()
        );
        // File I/O: off the servers' async workers.
        let mut spec = ToolSpec::new(tool.as_str(), description, schema(tool)).searches();
        if tool.is_read_only() {
            spec = spec.read_only();
        }
        let files = files.clone();
        if let Err(e) = registry.register(spec, move |args| run(tool, args, &files)) {
            panic!("the GM tool {tool} could not be registered: {e}");
        }
    }
}
