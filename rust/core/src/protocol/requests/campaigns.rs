//! The tabletop campaign's requests. They run off the connection's read loop, one at a time
//! in the order they came ([`Handled::Later`]): a turn waits for its game master's model, and
//! a `campaign_state` pipelined behind a `campaign_load` sees the campaign loaded.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Cx, Handled, Request, Route, Runs, error, runtime_error};
use crate::campaign::page::Cursor;
use crate::protocol::{ProtocolErrorCode, RequestId, ServerMessage};
use crate::runtime::{CampaignSource, Runtime, RuntimeError};
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
    const WRITES: bool = true;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let _ = cx;
        Handled::Later(Box::new(move |runtime, request_id| {
            Box::pin(async move { self.answer(&runtime, request_id).await })
        }))
    }
}

impl CampaignLoad {
    /// The reply, once the request ran.
    async fn answer(self, runtime: &Runtime, id: Option<RequestId>) -> ServerMessage {
        let source = match (self.path, self.campaign) {
            (Some(path), None) => CampaignSource::Path(path),
            (None, Some(campaign)) => CampaignSource::Inline(campaign),
            _ => {
                return error(
                    ProtocolErrorCode::InvalidRequest,
                    "campaign_load needs exactly one of path and campaign",
                    id,
                );
            }
        };
        reply(
            runtime.load_campaign_async(source).await.map(|loaded| {
                let page = loaded.page;
                ServerMessage::CampaignLoadResponse {
                    request_id: id.clone(),
                    campaign_id: loaded.campaign_id,
                    warnings: loaded.warnings,
                    warnings_left_out: loaded.warnings_left_out,
                    campaign: page.campaign,
                    campaign_truncated: page.truncated,
                    area_count: page.area_count,
                    actor_count: page.actor_count,
                    next_cursor: page.next_cursor,
                }
            }),
            id,
        )
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
    const WRITES: bool = true;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let _ = cx;
        Handled::Later(Box::new(move |runtime, request_id| {
            Box::pin(async move { self.answer(&runtime, request_id).await })
        }))
    }
}

impl CampaignToolCalls {
    /// The reply, once the request ran.
    async fn answer(self, runtime: &Runtime, id: Option<RequestId>) -> ServerMessage {
        let calls = match crate::campaign::turn::parse_calls(&self.calls) {
            Ok(calls) => calls,
            Err(e) => return error(ProtocolErrorCode::InvalidRequest, format!("calls: {e}"), id),
        };
        let campaign_id = self.campaign_id;
        reply(
            runtime
                .campaign_tool_calls(&campaign_id, &calls, self.actor_id.as_deref())
                .await
                .map(|outcome| ServerMessage::CampaignToolCallsResponse {
                    request_id: id.clone(),
                    campaign_id,
                    applied_actions: outcome.applied_actions,
                    tool_feedback: outcome.tool_feedback,
                }),
            id,
        )
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
    const WRITES: bool = true;

    fn route(&self) -> Route<'_> {
        Route::BringHere(&self.gm_agent_id)
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let _ = cx;
        Handled::Later(Box::new(move |runtime, request_id| {
            Box::pin(async move { self.answer(&runtime, request_id).await })
        }))
    }
}

impl CampaignTurn {
    /// The reply, once the request ran.
    async fn answer(self, runtime: &Runtime, id: Option<RequestId>) -> ServerMessage {
        let campaign_id = self.campaign_id;
        reply(
            runtime
                .campaign_turn(
                    &campaign_id,
                    &self.gm_agent_id,
                    &self.user_input,
                    self.actor_id.as_deref(),
                )
                .await
                .map(|entry| ServerMessage::CampaignTurnResponse {
                    request_id: id.clone(),
                    campaign_id,
                    entry: Box::new(entry),
                }),
            id,
        )
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
    const WRITES: bool = false;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let _ = cx;
        Handled::Later(Box::new(move |runtime, request_id| {
            Box::pin(async move { self.answer(&runtime, request_id).await })
        }))
    }
}

impl CampaignState {
    /// The reply, once the request ran.
    async fn answer(self, runtime: &Runtime, id: Option<RequestId>) -> ServerMessage {
        let after = match self.cursor.as_deref().map(Cursor::parse).transpose() {
            Ok(after) => after,
            Err(e) => return error(ProtocolErrorCode::InvalidRequest, e, id),
        };
        let campaign_id = self.campaign_id;
        reply(
            runtime
                .campaign_state(&campaign_id, after.as_ref())
                .await
                .map(|(page, turns)| ServerMessage::CampaignStateResponse {
                    request_id: id.clone(),
                    campaign_id,
                    campaign: page.campaign,
                    turns,
                    campaign_truncated: page.truncated,
                    area_count: page.area_count,
                    actor_count: page.actor_count,
                    next_cursor: page.next_cursor,
                }),
            id,
        )
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
    const WRITES: bool = false;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let _ = cx;
        Handled::Later(Box::new(move |runtime, request_id| {
            Box::pin(async move { self.answer(&runtime, request_id).await })
        }))
    }
}

impl CampaignUnload {
    /// The reply, once the request ran.
    async fn answer(self, runtime: &Runtime, id: Option<RequestId>) -> ServerMessage {
        let campaign_id = self.campaign_id;
        reply(
            runtime
                .unload_campaign(&campaign_id)
                .map(|()| ServerMessage::CampaignUnloadResponse {
                    request_id: id.clone(),
                    campaign_id,
                }),
            id,
        )
    }
}

/// The reply for a runtime result.
fn reply(result: Result<ServerMessage, RuntimeError>, id: Option<RequestId>) -> ServerMessage {
    result.unwrap_or_else(|e| runtime_error(&e, id))
}
