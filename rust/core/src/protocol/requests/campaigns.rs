//! The tabletop campaign's requests. They run off the connection's read loop, one at a time
//! in the order they came ([`Handled::Later`]): a turn waits for its game master's model, and
//! a `campaign_state` pipelined behind a `campaign_load` sees the campaign loaded.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Answer, Cx, Refusal, Request, Route, Runs};
use crate::campaign::page::Cursor;
use crate::protocol::ProtocolErrorCode;
use crate::runtime::{CampaignSource, Runtime};
use crate::tools::ToolRegistry;

/// Load a tabletop campaign → `campaign_load_response`: `path` (a `campaign.json` under the
/// server's campaign directory, relative, saved back after every applied call) or
/// `campaign` (the campaign itself, kept in memory). Replaces a campaign loaded before under
/// the same id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignLoad {
    /// A file under the campaign directory (`camp_0001/campaign.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::MAX_CAMPAIGN_PATH_CHARS))]
    pub path: Option<String>,
    /// The campaign (`campaign.json`'s object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<Value>,
}

impl Request for CampaignLoad {
    type Reply = CampaignLoadResponse;
    const WRITES: bool = true;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let _ = cx;
        Answer::Later(Box::new(move |runtime| {
            Box::pin(async move { self.answer(&runtime).await })
        }))
    }
}

/// Reply to `campaign_load`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CampaignLoadResponse {
    /// The campaign's id, to name it in later requests.
    pub campaign_id: String,
    /// What was normalised while loading (`actor:pc_002:position_missing_area`): the first
    /// that fit 4 KiB of JSON.
    pub warnings: Vec<String>,
    /// How many more warnings there were (not sent).
    pub warnings_left_out: usize,
    /// The campaign as its file holds it; when it does not fit the reply, its first page
    /// (`campaign_truncated`; read the rest with `campaign_state` and `next_cursor`).
    pub campaign: Value,
    /// True when `campaign` leaves areas or actors out.
    pub campaign_truncated: bool,
    /// How many areas the campaign has.
    pub area_count: usize,
    /// How many actors the campaign has.
    pub actor_count: usize,
    /// Pass as `campaign_state`'s `cursor` for the next page; `null` when there is none.
    pub next_cursor: Option<String>,
}

impl CampaignLoad {
    /// The reply, once the request ran.
    async fn answer(self, runtime: &Runtime) -> Result<<Self as Request>::Reply, Refusal> {
        let source = match (self.path, self.campaign) {
            (Some(path), None) => CampaignSource::Path(path),
            (None, Some(campaign)) => CampaignSource::Inline(campaign),
            _ => {
                return Err(Refusal::new(
                    ProtocolErrorCode::InvalidRequest,
                    "campaign_load needs exactly one of path and campaign",
                ));
            }
        };
        (runtime.load_campaign_async(source).await.map(|loaded| {
            let page = loaded.page;
            CampaignLoadResponse {
                campaign_id: loaded.campaign_id,
                warnings: loaded.warnings,
                warnings_left_out: loaded.warnings_left_out,
                campaign: page.campaign,
                campaign_truncated: page.truncated,
                area_count: page.area_count,
                actor_count: page.actor_count,
                next_cursor: page.next_cursor,
            }
        }))
        .map_err(Refusal::from)
    }
}

/// Run GM tool calls on a loaded campaign → `campaign_tool_calls_response` (and a
/// `campaign_changed` event when a call was applied).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignToolCalls {
    /// The campaign.
    #[schemars(length(max = crate::limits::MAX_CAMPAIGN_ID_CHARS))]
    pub campaign_id: String,
    /// `[{id?, tool, args?, reason?}]`.
    pub calls: Value,
    /// The turn actor (a party member; default the active actor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub actor_id: Option<String>,
}

impl Request for CampaignToolCalls {
    type Reply = CampaignToolCallsResponse;
    const WRITES: bool = true;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let _ = cx;
        Answer::Later(Box::new(move |runtime| {
            Box::pin(async move { self.answer(&runtime).await })
        }))
    }
}

/// Reply to `campaign_tool_calls`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CampaignToolCallsResponse {
    /// The campaign.
    pub campaign_id: String,
    /// The applied calls: `{tool, args, result, timestamp}`.
    pub applied_actions: Vec<crate::campaign::AppliedAction>,
    /// `{"failed_calls": [{id, tool, status, reason, message}]}`, `null` when nothing failed.
    pub tool_feedback: Option<crate::campaign::ToolFeedback>,
}

impl CampaignToolCalls {
    /// The reply, once the request ran.
    async fn answer(self, runtime: &Runtime) -> Result<<Self as Request>::Reply, Refusal> {
        let calls = match crate::campaign::turn::parse_calls(&self.calls) {
            Ok(calls) => calls,
            Err(e) => {
                return Err(Refusal::new(
                    ProtocolErrorCode::InvalidRequest,
                    format!("calls: {e}"),
                ));
            }
        };
        let campaign_id = self.campaign_id;
        (runtime
            .campaign_tool_calls(&campaign_id, &calls, self.actor_id.as_deref())
            .await
            .map(|outcome| CampaignToolCallsResponse {
                campaign_id,
                applied_actions: outcome.applied_actions,
                tool_feedback: outcome.tool_feedback,
            }))
        .map_err(Refusal::from)
    }
}

/// One GM turn on a loaded campaign, answered by agent `gm_agent_id` →
/// `campaign_turn_response` with the turn-log entry (sent once the GM answered).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignTurn {
    /// The campaign.
    #[schemars(length(max = crate::limits::MAX_CAMPAIGN_ID_CHARS))]
    pub campaign_id: String,
    /// The agent acting as game master.
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub gm_agent_id: String,
    /// What the player says.
    #[schemars(length(max = crate::limits::MAX_MESSAGE_CHARS))]
    pub user_input: String,
    /// The turn actor (a party member; default the active actor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub actor_id: Option<String>,
}

impl Request for CampaignTurn {
    type Reply = CampaignTurnResponse;
    const WRITES: bool = true;

    fn route(&self) -> Route<'_> {
        Route::BringHere(&self.gm_agent_id)
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let _ = cx;
        Answer::Later(Box::new(move |runtime| {
            Box::pin(async move { self.answer(&runtime).await })
        }))
    }
}

/// Reply to `campaign_turn`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CampaignTurnResponse {
    /// The campaign.
    pub campaign_id: String,
    /// The turn-log entry.
    pub entry: Box<crate::campaign::turn::TurnEntry>,
}

impl CampaignTurn {
    /// The reply, once the request ran.
    async fn answer(self, runtime: &Runtime) -> Result<<Self as Request>::Reply, Refusal> {
        let campaign_id = self.campaign_id;
        (runtime
            .campaign_turn(
                &campaign_id,
                &self.gm_agent_id,
                &self.user_input,
                self.actor_id.as_deref(),
            )
            .await
            .map(|entry| CampaignTurnResponse {
                campaign_id,
                entry: Box::new(entry),
            }))
        .map_err(Refusal::from)
    }
}

/// A loaded campaign as its file holds it → `campaign_state_response`: whole when it fits
/// a reply, otherwise a page of its areas and actors (`cursor`: the `next_cursor` of the
/// page before).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignState {
    /// The campaign.
    #[schemars(length(max = crate::limits::MAX_CAMPAIGN_ID_CHARS))]
    pub campaign_id: String,
    /// Where the page starts: the `next_cursor` of the previous page (none: the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 128))]
    pub cursor: Option<String>,
}

impl Request for CampaignState {
    type Reply = CampaignStateResponse;
    const WRITES: bool = false;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let _ = cx;
        Answer::Later(Box::new(move |runtime| {
            Box::pin(async move { self.answer(&runtime).await })
        }))
    }
}

/// Reply to `campaign_state`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CampaignStateResponse {
    /// The campaign.
    pub campaign_id: String,
    /// The campaign as its file holds it; when it does not fit the reply (or a `cursor`
    /// was given), a page of it (`campaign_truncated`).
    pub campaign: Value,
    /// How many turns its log holds.
    pub turns: u64,
    /// True when `campaign` leaves areas or actors out.
    pub campaign_truncated: bool,
    /// How many areas the campaign has.
    pub area_count: usize,
    /// How many actors the campaign has.
    pub actor_count: usize,
    /// Pass as `cursor` for the next page; `null` when there is none.
    pub next_cursor: Option<String>,
}

impl CampaignState {
    /// The reply, once the request ran.
    async fn answer(self, runtime: &Runtime) -> Result<<Self as Request>::Reply, Refusal> {
        let after = match self.cursor.as_deref().map(Cursor::parse).transpose() {
            Ok(after) => after,
            Err(e) => return Err(Refusal::new(ProtocolErrorCode::InvalidRequest, e)),
        };
        let campaign_id = self.campaign_id;
        (runtime
            .campaign_state(&campaign_id, after.as_ref())
            .await
            .map(|(page, turns)| CampaignStateResponse {
                campaign_id,
                campaign: page.campaign,
                turns,
                campaign_truncated: page.truncated,
                area_count: page.area_count,
                actor_count: page.actor_count,
                next_cursor: page.next_cursor,
            }))
        .map_err(Refusal::from)
    }
}

/// Unload a campaign → `campaign_unload_response`: requests naming it are then answered
/// `unknown_campaign`, and its room counts toward the cap of loaded campaigns again. Its
/// file and its turn log are kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CampaignUnload {
    /// The campaign.
    #[schemars(length(max = crate::limits::MAX_CAMPAIGN_ID_CHARS))]
    pub campaign_id: String,
}

impl Request for CampaignUnload {
    type Reply = CampaignUnloadResponse;
    const WRITES: bool = false;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let _ = cx;
        Answer::Later(Box::new(move |runtime| {
            Box::pin(async move { self.answer(&runtime).await })
        }))
    }
}

/// Reply to `campaign_unload`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CampaignUnloadResponse {
    /// The campaign unloaded.
    pub campaign_id: String,
}

impl CampaignUnload {
    /// The reply, once the request ran.
    async fn answer(self, runtime: &Runtime) -> Result<<Self as Request>::Reply, Refusal> {
        let campaign_id = self.campaign_id;
        (runtime
            .unload_campaign(&campaign_id)
            .map(|()| CampaignUnloadResponse { campaign_id }))
        .map_err(Refusal::from)
    }
}
