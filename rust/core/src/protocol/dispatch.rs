//! Runs a request against a runtime and the tool registry. `subscribe` is connection state, so
//! the connection handles it ([`Handled::Subscribe`]); everything else is answered here.

use super::pages::{self, List};
use super::{AgentInfo, ClientRequest, ErrorCode, ErrorMessage, RequestId, ServerMessage};
use crate::apps::{ActionOutcome, AppConfig, AppContext};
use crate::runtime::{AgentSnapshot, Runtime, RuntimeError};
use crate::tools::{ToolError, ToolRegistry};

/// Default `limit` of `get_conversation`.
pub const DEFAULT_CONVERSATION_LIMIT: u32 = 50;
/// Default `limit` of `get_state_history`.
pub const DEFAULT_HISTORY_LIMIT: u32 = 100;
/// Default `limit` of `list_agents`, `list_stored_agents` and `get_tasks`.
pub const DEFAULT_LIST_LIMIT: u32 = crate::limits::MAX_PAGE as u32;

/// What a request produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Handled {
    /// Send this reply.
    Reply(ServerMessage),
    /// A `subscribe`: the connection updates its filter and replies.
    Subscribe {
        /// Requested event types.
        events: Option<Vec<String>>,
        /// Requested agents.
        agents: Option<Vec<String>>,
    },
    /// An `app_register`: the connection registers the app (it handles its actions) and
    /// replies.
    RegisterApp(Box<AppConfig>),
    /// A campaign request: the connection runs it off the read loop ([`campaign`]) and replies
    /// when it is done (a GM turn waits for its model).
    Campaign(Box<ClientRequest>),
    /// An `app_human_action`: the connection replies once the app answered it.
    HumanAction {
        /// The app.
        app_id: String,
        /// The action.
        name: String,
        /// Its arguments.
        params: serde_json::Value,
    },
}

/// Answers one request. Never panics on bad input: every failure is an `error` reply.
pub fn handle(
    request: ClientRequest,
    request_id: Option<RequestId>,
    runtime: &Runtime,
    tools: &ToolRegistry,
) -> Handled {
    let id = request_id;
    let reply =
        match request {
            ClientRequest::Subscribe { events, agents } => {
                return Handled::Subscribe { events, agents };
            }
            request @ (ClientRequest::CampaignLoad { .. }
            | ClientRequest::CampaignToolCalls { .. }
            | ClientRequest::CampaignTurn { .. }
            | ClientRequest::CampaignState { .. }
            | ClientRequest::CampaignUnload { .. }) => {
                return Handled::Campaign(Box::new(request));
            }
            ClientRequest::AppRegister {
                app_id,
                mode,
                role_prompt,
                state,
                actions,
                control_mode,
                human_label,
                world_tools,
                history,
                action_timeout_seconds,
                game,
            } => {
                let defaults = AppConfig::new(&app_id);
                return Handled::RegisterApp(Box::new(AppConfig {
                    app_id,
                    mode,
                    role_prompt,
                    state,
                    actions,
                    control_mode,
                    human_label,
                    world_tools: world_tools.unwrap_or(defaults.world_tools),
                    history: history.unwrap_or(defaults.history),
                    action_timeout_seconds: action_timeout_seconds
                        .unwrap_or(defaults.action_timeout_seconds),
                    game,
                }));
            }
            ClientRequest::AppHumanAction {
                app_id,
                name,
                params,
            } => {
                return Handled::HumanAction {
                    app_id,
                    name,
                    params,
                };
            }
            ClientRequest::AppUnregister { app_id } => {
                runtime
                    .unregister_app(&app_id)
                    .map(|()| ServerMessage::AppUnregisterResponse {
                        request_id: id.clone(),
                        app_id,
                    })
            }
            ClientRequest::AppAttach { app_id, agent_id } => runtime
                .attach_app(&app_id, &agent_id)
                .map(|()| ServerMessage::AppAttachResponse {
                    request_id: id.clone(),
                    app_id,
                    agent_id,
                }),
            ClientRequest::AppDetach { app_id } => {
                runtime
                    .detach_app(&app_id)
                    .map(|agent_id| ServerMessage::AppDetachResponse {
                        request_id: id.clone(),
                        app_id,
                        agent_id,
                    })
            }
            ClientRequest::AppSetContext {
                app_id,
                state,
                actions,
                human_label,
            } => runtime
                .set_app_context(
                    &app_id,
                    AppContext {
                        state,
                        actions,
                        human_label,
                    },
                )
                .and_then(|()| runtime.app_session(&app_id))
                .map(|session| ServerMessage::AppSetContextResponse {
                    request_id: id.clone(),
                    app_id,
                    tools: session.tools,
                }),
            ClientRequest::AppSetControlMode {
                app_id,
                control_mode,
            } => runtime
                .set_app_control_mode(&app_id, control_mode)
                .map(|()| ServerMessage::AppSetControlModeResponse {
                    request_id: id.clone(),
                    app_id,
                    control_mode,
                }),
            ClientRequest::AppEvent {
                app_id,
                name,
                payload,
            } => runtime
                .emit_app_event(&app_id, &name, payload)
                .map(|event| ServerMessage::AppEventResponse {
                    request_id: id.clone(),
                    app_id,
                    text: event.text,
                }),
            ClientRequest::AppActionResult {
                app_id,
                action_id,
                result,
                state,
                error,
                actions,
            } => runtime
                .complete_app_action(
                    &app_id,
                    action_id,
                    ActionOutcome {
                        result,
                        state,
                        error,
                        actions,
                        events: Vec::new(),
                    },
                )
                .map(|()| ServerMessage::AppActionResultResponse {
                    request_id: id.clone(),
                    app_id,
                    action_id,
                }),
            ClientRequest::AppHumanSays { app_id, text } => runtime
                .app_human_says(&app_id, &text)
                .map(|()| ServerMessage::AppHumanSaysResponse {
                    request_id: id.clone(),
                    app_id,
                }),
            ClientRequest::GetAppSession { app_id } => {
                runtime.app_session(&app_id).map(|mut session| {
                    let left = session.fit(super::pages::MAX_PAGE_BYTES);
                    ServerMessage::GetAppSessionResponse {
                        request_id: id.clone(),
                        session: Box::new(session),
                        history_left_out: left.history,
                        events_left_out: left.events,
                        chat_left_out: left.chat,
                        state_left_out: left.state,
                    }
                })
            }
            ClientRequest::Ping {} => Ok(ServerMessage::Pong {
                request_id: id.clone(),
            }),
            ClientRequest::AgentSpawnRequest { agent_config } => {
                runtime
                    .spawn(*agent_config)
                    .map(|agent_id| ServerMessage::AgentSpawnResponse {
                        request_id: id.clone(),
                        agent_id,
                    })
            }
            ClientRequest::AgentTerminateRequest { agent_id } => {
                runtime
                    .terminate(&agent_id)
                    .map(|()| ServerMessage::AgentTerminateResponse {
                        request_id: id.clone(),
                        agent_id,
                    })
            }
            ClientRequest::GetAgentState { agent_id } => match runtime.state(&agent_id) {
                Some(s) => Ok(ServerMessage::GetAgentStateResponse {
                    request_id: id.clone(),
                    agent: agent_info(s),
                }),
                None => Err(RuntimeError::UnknownAgent(agent_id)),
            },
            ClientRequest::ListAgents { limit, cursor } => {
                let after = match cursor
                    .as_deref()
                    .map(|c| List::RunningAgents.key(c))
                    .transpose()
                {
                    Ok(after) => after,
                    Err(message) => return invalid(message, id),
                };
                let agents = runtime.list().into_iter().map(agent_info);
                let limit = limit.unwrap_or(DEFAULT_LIST_LIMIT) as usize;
                Ok(agents_page(
                    agents,
                    after.as_deref(),
                    limit,
                    false,
                    id.clone(),
                ))
            }
            ClientRequest::SendMessage {
                agent_id,
                content,
                sender,
            } => {
                let result = match &sender {
                    Some(sender) => runtime.send_message_from(sender, &agent_id, &content),
                    None => runtime.send_message(&agent_id, &content),
                };
                result.map(|()| ServerMessage::SendMessageResponse {
                    request_id: id.clone(),
                    agent_id,
                })
            }
            ClientRequest::AssignTask {
                agent_id,
                task_name,
            } => runtime.assign_task(&agent_id, &task_name).map(|task| {
                ServerMessage::AssignTaskResponse {
                    request_id: id.clone(),
                    task,
                }
            }),
            ClientRequest::CompleteTask { task_id } => {
                runtime
                    .complete_task(task_id)
                    .map(|task| ServerMessage::CompleteTaskResponse {
                        request_id: id.clone(),
                        task,
                    })
            }
            ClientRequest::GetConversation {
                agent_id,
                limit,
                cursor,
            } => {
                let before = match numeric_cursor(List::Conversation, &cursor) {
                    Ok(before) => before,
                    Err(message) => return invalid(message, id),
                };
                let limit = limit.unwrap_or(DEFAULT_CONVERSATION_LIMIT) as usize;
                runtime
                    .conversation_page(&agent_id, before, limit)
                    .map(|mut page| {
                        if pages::fit_from_end(&mut page.rows) {
                            page.next = page.rows.first().map(|r| r.id);
                        }
                        ServerMessage::GetConversationResponse {
                            request_id: id.clone(),
                            agent_id,
                            messages: page.rows,
                            next_cursor: page.next.map(|k| List::Conversation.cursor(k)),
                        }
                    })
            }
            ClientRequest::GetTasks {
                agent_id,
                limit,
                cursor,
            } => {
                let after = match numeric_cursor(List::Tasks, &cursor) {
                    Ok(after) => after,
                    Err(message) => return invalid(message, id),
                };
                let limit = limit.unwrap_or(DEFAULT_LIST_LIMIT) as usize;
                runtime.tasks_page(&agent_id, after, limit).map(|mut page| {
                    if pages::fit_from_start(&mut page.rows) {
                        page.next = page.rows.last().map(|r| r.id);
                    }
                    ServerMessage::GetTasksResponse {
                        request_id: id.clone(),
                        agent_id,
                        tasks: page.rows,
                        next_cursor: page.next.map(|k| List::Tasks.cursor(k)),
                    }
                })
            }
            ClientRequest::GetStateHistory {
                agent_id,
                limit,
                cursor,
            } => {
                let before = match numeric_cursor(List::StateHistory, &cursor) {
                    Ok(before) => before,
                    Err(message) => return invalid(message, id),
                };
                let limit = limit.unwrap_or(DEFAULT_HISTORY_LIMIT) as usize;
                runtime
                    .state_history_page(&agent_id, before, limit)
                    .map(|mut page| {
                        if pages::fit_from_end(&mut page.rows) {
                            page.next = page.rows.first().map(|r| r.id);
                        }
                        ServerMessage::GetStateHistoryResponse {
                            request_id: id.clone(),
                            agent_id,
                            transitions: page.rows,
                            next_cursor: page.next.map(|k| List::StateHistory.cursor(k)),
                        }
                    })
            }
            ClientRequest::GetAgentTrace {
                agent_id,
                limit,
                cursor,
            } => {
                let before = match numeric_cursor(List::Trace, &cursor) {
                    Ok(before) => before,
                    Err(message) => return invalid(message, id),
                };
                let limit = limit.unwrap_or(DEFAULT_HISTORY_LIMIT) as usize;
                runtime
                    .agent_trace_page(&agent_id, before, limit)
                    .map(|mut page| {
                        if pages::fit_from_end(&mut page.rows) {
                            page.next = page.rows.first().map(|r| r.id);
                        }
                        ServerMessage::GetAgentTraceResponse {
                            request_id: id.clone(),
                            agent_id,
                            calls: page.rows,
                            next_cursor: page.next.map(|k| List::Trace.cursor(k)),
                        }
                    })
            }
            ClientRequest::GetTokenUsage { agent_id } => token_usage(runtime, agent_id.as_deref())
                .map(|(spent, limit)| ServerMessage::GetTokenUsageResponse {
                    request_id: id.clone(),
                    agent_id,
                    spent,
                    limit,
                }),
            ClientRequest::SetTokenBudget { agent_id, limit } => {
                let set = match &agent_id {
                    Some(agent) => runtime.set_agent_token_budget(agent, limit),
                    None => {
                        runtime.set_token_budget(limit);
                        Ok(())
                    }
                };
                set.and_then(|()| token_usage(runtime, agent_id.as_deref()))
                    .map(|(spent, limit)| ServerMessage::SetTokenBudgetResponse {
                        request_id: id.clone(),
                        agent_id,
                        spent,
                        limit,
                    })
            }
            ClientRequest::ListStoredAgents { limit, cursor } => {
                let after = match numeric_cursor(List::StoredAgents, &cursor) {
                    Ok(after) => after,
                    Err(message) => return invalid(message, id),
                };
                let limit = limit.unwrap_or(DEFAULT_LIST_LIMIT) as usize;
                runtime.stored_agents_page(after, limit).map(|mut page| {
                    for row in &mut page.rows {
                        crate::brain::spec::redact_stored_config(&mut row.config);
                    }
                    if pages::fit_from_start(&mut page.rows) {
                        page.next = page
                            .rows
                            .last()
                            .and_then(|a| crate::memory::agent_number(&a.agent_id));
                    }
                    ServerMessage::ListStoredAgentsResponse {
                        request_id: id.clone(),
                        agents: page.rows,
                        next_cursor: page.next.map(|k| List::StoredAgents.cursor(k)),
                    }
                })
            }
            ClientRequest::ListTools {} => {
                let tools = match tools.llm_definitions() {
                    serde_json::Value::Array(list) => list,
                    other => vec![other],
                };
                Ok(ServerMessage::ListToolsResponse {
                    request_id: id.clone(),
                    tools,
                })
            }
            ClientRequest::CallTool { name, arguments } => {
                let args = arguments.unwrap_or_else(|| serde_json::json!({}));
                return Handled::Reply(match tools.call(&name, &args) {
                    Ok(output) => ServerMessage::CallToolResponse {
                        request_id: id,
                        name,
                        content: output.text_items(),
                        structured_content: output.structured,
                        is_error: output.is_error,
                    },
                    Err(e) => error(tool_code(&e), e.to_string(), id),
                });
            }
        };
    Handled::Reply(match reply {
        Ok(message) => message,
        Err(e) => error(ErrorCode::from_runtime(&e), e.to_string(), id),
    })
}

/// Answers a campaign request (`campaign_load`, `campaign_tool_calls`, `campaign_turn`,
/// `campaign_state`, `campaign_unload`); any other request is an internal error.
pub async fn campaign(
    request: ClientRequest,
    request_id: Option<RequestId>,
    runtime: &Runtime,
) -> ServerMessage {
    use crate::campaign::page::Cursor;
    use crate::runtime::CampaignSource;
    let id = request_id;
    let reply =
        match request {
            ClientRequest::CampaignLoad { path, campaign } => {
                let source = match (path, campaign) {
                    (Some(path), None) => CampaignSource::Path(path),
                    (None, Some(campaign)) => CampaignSource::Inline(campaign),
                    _ => {
                        return error(
                            ErrorCode::InvalidRequest,
                            "campaign_load needs exactly one of path and campaign",
                            id,
                        );
                    }
                };
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
                })
            }
            ClientRequest::CampaignToolCalls {
                campaign_id,
                calls,
                actor_id,
            } => {
                let calls = match crate::campaign::turn::parse_calls(&calls) {
                    Ok(calls) => calls,
                    Err(e) => return error(ErrorCode::InvalidRequest, format!("calls: {e}"), id),
                };
                runtime
                    .campaign_tool_calls(&campaign_id, &calls, actor_id.as_deref())
                    .await
                    .map(|outcome| ServerMessage::CampaignToolCallsResponse {
                        request_id: id.clone(),
                        campaign_id,
                        applied_actions: outcome.applied_actions,
                        tool_feedback: outcome.tool_feedback,
                    })
            }
            ClientRequest::CampaignTurn {
                campaign_id,
                gm_agent_id,
                user_input,
                actor_id,
            } => runtime
                .campaign_turn(&campaign_id, &gm_agent_id, &user_input, actor_id.as_deref())
                .await
                .map(|entry| ServerMessage::CampaignTurnResponse {
                    request_id: id.clone(),
                    campaign_id,
                    entry: Box::new(entry),
                }),
            ClientRequest::CampaignState {
                campaign_id,
                cursor,
            } => {
                let after = match cursor.as_deref().map(Cursor::parse).transpose() {
                    Ok(after) => after,
                    Err(e) => return error(ErrorCode::InvalidRequest, e, id),
                };
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
                    })
            }
            ClientRequest::CampaignUnload { campaign_id } => runtime
                .unload_campaign(&campaign_id)
                .map(|()| ServerMessage::CampaignUnloadResponse {
                    request_id: id.clone(),
                    campaign_id,
                }),
            other => {
                return error(
                    ErrorCode::InternalError,
                    format!("'{}' is not a campaign request", other.type_name()),
                    id,
                );
            }
        };
    match reply {
        Ok(message) => message,
        Err(e) => error(ErrorCode::from_runtime(&e), e.to_string(), id),
    }
}

/// Tokens spent and the budget: a running agent's, or the runtime's.
fn token_usage(
    runtime: &Runtime,
    agent_id: Option<&str>,
) -> Result<(u64, Option<u64>), RuntimeError> {
    match agent_id {
        Some(agent) => runtime.agent_token_usage(agent),
        None => Ok(runtime.token_usage()),
    }
}

/// The key of a numeric cursor, if one was given.
fn numeric_cursor(list: List, cursor: &Option<String>) -> Result<Option<i64>, String> {
    cursor.as_deref().map(|c| list.number(c)).transpose()
}

/// The reply to a request with a bad cursor.
fn invalid(message: String, id: Option<RequestId>) -> Handled {
    Handled::Reply(error(ErrorCode::InvalidRequest, message, id))
}

/// An `error` message.
pub fn error(
    code: ErrorCode,
    message: impl Into<String>,
    request_id: Option<RequestId>,
) -> ServerMessage {
    ServerMessage::Error(ErrorMessage {
        code,
        message: message.into(),
        request_id,
    })
}

fn tool_code(e: &ToolError) -> ErrorCode {
    match e {
        ToolError::UnknownTool { .. } => ErrorCode::UnknownTool,
        ToolError::InvalidArguments { .. } => ErrorCode::InvalidArgs,
        ToolError::Refused { .. } => ErrorCode::ActionRefused,
        ToolError::Internal { .. }
        | ToolError::Asynchronous { .. }
        | ToolError::Cancelled { .. } => ErrorCode::InternalError,
    }
}

/// One page of `list_agents` from running agents sorted by id: those after `after`, at most
/// `limit`, within the page's byte budget. `more`: agents that are not in `agents` follow the
/// last of them (a part of the world whose list was cut), so a `next_cursor` is given.
pub fn agents_page(
    agents: impl IntoIterator<Item = AgentInfo>,
    after: Option<&str>,
    limit: usize,
    more: bool,
    request_id: Option<RequestId>,
) -> ServerMessage {
    let mut agents: Vec<AgentInfo> = agents
        .into_iter()
        .filter(|a| after.is_none_or(|after| crate::runtime::id_order(&a.agent_id, after).is_gt()))
        .take(limit.saturating_add(1))
        .collect();
    let more = more || agents.len() > limit;
    agents.truncate(limit);
    let cut = pages::fit_from_start(&mut agents);
    let next_cursor = (more || cut)
        .then(|| {
            agents
                .last()
                .map(|a| List::RunningAgents.cursor(&a.agent_id))
        })
        .flatten();
    ServerMessage::ListAgentsResponse {
        request_id,
        agents,
        next_cursor,
    }
}

/// A runtime snapshot as protocol `AgentInfo`.
pub fn agent_info(s: AgentSnapshot) -> AgentInfo {
    AgentInfo {
        agent_id: s.agent_id,
        name: s.name,
        role: s.role,
        brain: s.brain,
        state: s.state,
        position: s.position,
        current_task_id: s.current_task.as_ref().map(|t| t.id),
        current_task: s.current_task.map(|t| t.task_name),
    }
}
