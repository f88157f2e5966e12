# Generated from the extension's Rust code: do not edit. Regenerate with
# `GODOT_AGENTS_WRITE_CONSTANTS=1 cargo test -p godot-agents --lib constants`.
class_name AgentConstants
## The names the agent classes use, as constants.
##
## States, movement, control and app modes, dialog types and error codes are strings on every
## surface (signals, results, the WebSocket protocol). Compare against these constants and
## autocompletion offers them, and a misspelt name fails to parse instead of never matching:
## [codeblock]
## npc.state_changed.connect(func(_old: String, new_state: String):
## 	if new_state == AgentConstants.STATE_THINKING:
## 		bubble.text = "…")
## var reply: Dictionary = await npc.ask("Is the bread ready?")
## if not reply.ok and reply.error.code == AgentConstants.ERROR_AGENT_STOPPED:
## 	print("the baker left")
## [/codeblock]
## Each group also comes as an array ([constant STATES], [constant ERROR_CODES], …).

## What an agent is doing: [signal AgentNode.state_changed], [signal AgentRuntime.agent_state_changed], [method AgentNode.get_state].
const STATE_IDLE := "idle"
const STATE_LISTENING := "listening"
const STATE_THINKING := "thinking"
const STATE_SPEAKING := "speaking"
## Every value above.
const STATES: Array[String] = [STATE_IDLE, STATE_LISTENING, STATE_THINKING, STATE_SPEAKING]

## Who carries out an agent's moves: the [code]movement[/code] of a config given to [method AgentRuntime.spawn_agent] (an [AgentNode] always asks for [code]requested[/code]).
const MOVEMENT_INSTANT := "instant"
const MOVEMENT_REQUESTED := "requested"
## Every value above.
const MOVEMENTS: Array[String] = [MOVEMENT_INSTANT, MOVEMENT_REQUESTED]

## Who may act in an [AgentApp]: [member AgentApp.control_mode].
const CONTROL_AGENT := "agent"
const CONTROL_HUMAN := "human"
const CONTROL_COPILOT := "copilot"
## Every value above.
const CONTROL_MODES: Array[String] = [CONTROL_AGENT, CONTROL_HUMAN, CONTROL_COPILOT]

## When an [AgentApp]'s agent gets the app's state: [member AgentApp.mode].
const APP_MODE_STATIC := "static"
const APP_MODE_DYNAMIC := "dynamic"
## Every value above.
const APP_MODES: Array[String] = [APP_MODE_STATIC, APP_MODE_DYNAMIC]

## What a memory is of: the [code]kind[/code] of [method AgentRuntime.remember] and of the memories [method AgentRuntime.recall] and [signal AgentRuntime.agent_remembered] give.
const MEMORY_HEARD := "heard"
const MEMORY_SAID := "said"
const MEMORY_DID := "did"
const MEMORY_OBSERVED := "observed"
const MEMORY_FACT := "fact"
const MEMORY_TASK := "task"
const MEMORY_EVENT := "event"
const MEMORY_INSIGHT := "insight"
const MEMORY_SUMMARY := "summary"
const MEMORY_RELATIONSHIP := "relationship"
## Every value above.
const MEMORY_KINDS: Array[String] = [MEMORY_HEARD, MEMORY_SAID, MEMORY_DID, MEMORY_OBSERVED, MEMORY_FACT, MEMORY_TASK, MEMORY_EVENT, MEMORY_INSIGHT, MEMORY_SUMMARY, MEMORY_RELATIONSHIP]

## The kinds of an agent's line: [signal AgentNode.spoke]'s [code]dialog_type[/code] (a model may also use others).
const DIALOG_REPLY := "reply"
const DIALOG_CHAT := "chat"
const DIALOG_TASK_UPDATE := "task_update"
const DIALOG_COLLABORATION := "collaboration"
const DIALOG_MONOLOGUE := "monologue"
## Every value above.
const DIALOG_TYPES: Array[String] = [DIALOG_REPLY, DIALOG_CHAT, DIALOG_TASK_UPDATE, DIALOG_COLLABORATION, DIALOG_MONOLOGUE]

## The kinds of a game master's line: the [code]dialog_type[/code] of [signal Campaign.turn_completed].
const GM_DIALOG_SCENE_DESCRIPTION := "scene_description"
const GM_DIALOG_ACTION_PROMPT := "action_prompt"
const GM_DIALOG_RESOLUTION_SUMMARY := "resolution_summary"
const GM_DIALOG_RULE_EXPLANATION := "rule_explanation"
## Every value above.
const GM_DIALOG_TYPES: Array[String] = [GM_DIALOG_SCENE_DESCRIPTION, GM_DIALOG_ACTION_PROMPT, GM_DIALOG_RESOLUTION_SUMMARY, GM_DIALOG_RULE_EXPLANATION]

## The code of a failure: [method AgentNode.get_last_error_code] (and the same method of every class), [signal AgentNode.error_occurred], [signal AgentRuntime.agent_error], and [code]error.code[/code] in an [AgentOperation]'s or an [AgentAsk]'s result.
const ERROR_ACTION_FAILED := "action_failed"
const ERROR_ACTION_REFUSED := "action_refused"
const ERROR_ACTOR_STATE_RESTRICTED := "actor_state_restricted"
const ERROR_AGENT_STOPPED := "agent_stopped"
const ERROR_AGENT_UNREACHABLE := "agent_unreachable"
const ERROR_ALREADY_RUNNING := "already_running"
const ERROR_APP_ATTACHED := "app_attached"
const ERROR_APP_EXISTS := "app_exists"
const ERROR_APP_GONE := "app_gone"
const ERROR_APP_NOT_OWNED := "app_not_owned"
const ERROR_APP_REFUSED := "app_refused"
const ERROR_BINARY_NOT_SUPPORTED := "binary_not_supported"
const ERROR_BRAIN_AUTH_FAILED := "brain_auth_failed"
const ERROR_BRAIN_BAD_REQUEST := "brain_bad_request"
const ERROR_BRAIN_CONTEXT_EXCEEDED := "brain_context_exceeded"
const ERROR_BRAIN_ERROR := "brain_error"
const ERROR_BRAIN_GRAMMAR_FAILED := "brain_grammar_failed"
const ERROR_BRAIN_INVALID_REPLY := "brain_invalid_reply"
const ERROR_BRAIN_INVALID_RESPONSE := "brain_invalid_response"
const ERROR_BRAIN_KEY_MISSING := "brain_key_missing"
const ERROR_BRAIN_MODEL_CHECKSUM_MISMATCH := "brain_model_checksum_mismatch"
const ERROR_BRAIN_MODEL_DOWNLOAD_FAILED := "brain_model_download_failed"
const ERROR_BRAIN_MODEL_INVALID := "brain_model_invalid"
const ERROR_BRAIN_MODEL_MISSING := "brain_model_missing"
const ERROR_BRAIN_MODEL_NOT_FOUND := "brain_model_not_found"
const ERROR_BRAIN_MODEL_TOO_LARGE := "brain_model_too_large"
const ERROR_BRAIN_NOT_ALLOWED := "brain_not_allowed"
const ERROR_BRAIN_PROVIDER_ERROR := "brain_provider_error"
const ERROR_BRAIN_RATE_LIMITED := "brain_rate_limited"
const ERROR_BRAIN_SERVER_ERROR := "brain_server_error"
const ERROR_BRAIN_TEMPLATE_FAILED := "brain_template_failed"
const ERROR_BRAIN_TIMEOUT := "brain_timeout"
const ERROR_BRAIN_UNREACHABLE := "brain_unreachable"
const ERROR_BUDGET_EXHAUSTED := "budget_exhausted"
const ERROR_CANCELLED := "cancelled"
const ERROR_CLI_EXIT_STATUS := "cli_exit_status"
const ERROR_CLI_INVALID_OUTPUT := "cli_invalid_output"
const ERROR_CLI_NOT_FOUND := "cli_not_found"
const ERROR_CLI_OUTPUT_TOO_LARGE := "cli_output_too_large"
const ERROR_CLI_REPORTED_ERROR := "cli_reported_error"
const ERROR_CLI_SPAWN_FAILED := "cli_spawn_failed"
const ERROR_CLI_TIMEOUT := "cli_timeout"
const ERROR_DATABASE_ERROR := "database_error"
const ERROR_DUPLICATE_CALL_ID := "duplicate_call_id"
const ERROR_DUPLICATE_FIELD := "duplicate_field"
const ERROR_FILE_ERROR := "file_error"
const ERROR_HUMAN_IN_CONTROL := "human_in_control"
const ERROR_HUMAN_ONLY := "human_only"
const ERROR_INTERNAL_ERROR := "internal_error"
const ERROR_INVALID_ACTION := "invalid_action"
const ERROR_INVALID_ACTOR_STATE := "invalid_actor_state"
const ERROR_INVALID_ARGS := "invalid_args"
const ERROR_INVALID_ARGUMENT := "invalid_argument"
const ERROR_INVALID_CAMPAIGN := "invalid_campaign"
const ERROR_INVALID_CONFIG := "invalid_config"
const ERROR_INVALID_FILTER := "invalid_filter"
const ERROR_INVALID_JSON := "invalid_json"
const ERROR_INVALID_MESSAGE := "invalid_message"
const ERROR_INVALID_OPTIONS := "invalid_options"
const ERROR_INVALID_PATH := "invalid_path"
const ERROR_INVALID_REQUEST := "invalid_request"
const ERROR_INVALID_TRANSITION := "invalid_transition"
const ERROR_LAGGED := "lagged"
const ERROR_LIMIT_REACHED := "limit_reached"
const ERROR_MISSING_TYPE := "missing_type"
const ERROR_NOT_AN_OBJECT := "not_an_object"
const ERROR_NOT_JSON := "not_json"
const ERROR_NOT_READY := "not_ready"
const ERROR_NOT_RUNNING := "not_running"
const ERROR_NOT_SPAWNED := "not_spawned"
const ERROR_RATE_LIMITED := "rate_limited"
const ERROR_SAVE_FAILED := "save_failed"
const ERROR_SHUT_DOWN := "shut_down"
const ERROR_STARTUP_FAILED := "startup_failed"
const ERROR_TASK_ALREADY_COMPLETED := "task_already_completed"
const ERROR_TOOL_FAILED := "tool_failed"
const ERROR_TOOL_NOT_ALLOWED := "tool_not_allowed"
const ERROR_TURN_FAILED := "turn_failed"
const ERROR_TURN_REFUSED := "turn_refused"
const ERROR_UNAUTHORIZED := "unauthorized"
const ERROR_UNKNOWN_ACTION := "unknown_action"
const ERROR_UNKNOWN_AGENT := "unknown_agent"
const ERROR_UNKNOWN_APP := "unknown_app"
const ERROR_UNKNOWN_BRAIN := "unknown_brain"
const ERROR_UNKNOWN_CAMPAIGN := "unknown_campaign"
const ERROR_UNKNOWN_MEMORY := "unknown_memory"
const ERROR_UNKNOWN_MOVE := "unknown_move"
const ERROR_UNKNOWN_PROVIDER := "unknown_provider"
const ERROR_UNKNOWN_TASK := "unknown_task"
const ERROR_UNKNOWN_TOOL := "unknown_tool"
const ERROR_UNKNOWN_TYPE := "unknown_type"
## Every value above.
const ERROR_CODES: Array[String] = [ERROR_ACTION_FAILED, ERROR_ACTION_REFUSED, ERROR_ACTOR_STATE_RESTRICTED, ERROR_AGENT_STOPPED, ERROR_AGENT_UNREACHABLE, ERROR_ALREADY_RUNNING, ERROR_APP_ATTACHED, ERROR_APP_EXISTS, ERROR_APP_GONE, ERROR_APP_NOT_OWNED, ERROR_APP_REFUSED, ERROR_BINARY_NOT_SUPPORTED, ERROR_BRAIN_AUTH_FAILED, ERROR_BRAIN_BAD_REQUEST, ERROR_BRAIN_CONTEXT_EXCEEDED, ERROR_BRAIN_ERROR, ERROR_BRAIN_GRAMMAR_FAILED, ERROR_BRAIN_INVALID_REPLY, ERROR_BRAIN_INVALID_RESPONSE, ERROR_BRAIN_KEY_MISSING, ERROR_BRAIN_MODEL_CHECKSUM_MISMATCH, ERROR_BRAIN_MODEL_DOWNLOAD_FAILED, ERROR_BRAIN_MODEL_INVALID, ERROR_BRAIN_MODEL_MISSING, ERROR_BRAIN_MODEL_NOT_FOUND, ERROR_BRAIN_MODEL_TOO_LARGE, ERROR_BRAIN_NOT_ALLOWED, ERROR_BRAIN_PROVIDER_ERROR, ERROR_BRAIN_RATE_LIMITED, ERROR_BRAIN_SERVER_ERROR, ERROR_BRAIN_TEMPLATE_FAILED, ERROR_BRAIN_TIMEOUT, ERROR_BRAIN_UNREACHABLE, ERROR_BUDGET_EXHAUSTED, ERROR_CANCELLED, ERROR_CLI_EXIT_STATUS, ERROR_CLI_INVALID_OUTPUT, ERROR_CLI_NOT_FOUND, ERROR_CLI_OUTPUT_TOO_LARGE, ERROR_CLI_REPORTED_ERROR, ERROR_CLI_SPAWN_FAILED, ERROR_CLI_TIMEOUT, ERROR_DATABASE_ERROR, ERROR_DUPLICATE_CALL_ID, ERROR_DUPLICATE_FIELD, ERROR_FILE_ERROR, ERROR_HUMAN_IN_CONTROL, ERROR_HUMAN_ONLY, ERROR_INTERNAL_ERROR, ERROR_INVALID_ACTION, ERROR_INVALID_ACTOR_STATE, ERROR_INVALID_ARGS, ERROR_INVALID_ARGUMENT, ERROR_INVALID_CAMPAIGN, ERROR_INVALID_CONFIG, ERROR_INVALID_FILTER, ERROR_INVALID_JSON, ERROR_INVALID_MESSAGE, ERROR_INVALID_OPTIONS, ERROR_INVALID_PATH, ERROR_INVALID_REQUEST, ERROR_INVALID_TRANSITION, ERROR_LAGGED, ERROR_LIMIT_REACHED, ERROR_MISSING_TYPE, ERROR_NOT_AN_OBJECT, ERROR_NOT_JSON, ERROR_NOT_READY, ERROR_NOT_RUNNING, ERROR_NOT_SPAWNED, ERROR_RATE_LIMITED, ERROR_SAVE_FAILED, ERROR_SHUT_DOWN, ERROR_STARTUP_FAILED, ERROR_TASK_ALREADY_COMPLETED, ERROR_TOOL_FAILED, ERROR_TOOL_NOT_ALLOWED, ERROR_TURN_FAILED, ERROR_TURN_REFUSED, ERROR_UNAUTHORIZED, ERROR_UNKNOWN_ACTION, ERROR_UNKNOWN_AGENT, ERROR_UNKNOWN_APP, ERROR_UNKNOWN_BRAIN, ERROR_UNKNOWN_CAMPAIGN, ERROR_UNKNOWN_MEMORY, ERROR_UNKNOWN_MOVE, ERROR_UNKNOWN_PROVIDER, ERROR_UNKNOWN_TASK, ERROR_UNKNOWN_TOOL, ERROR_UNKNOWN_TYPE]

## What kind of failure a code is — what the caller can do about it: [constant ERROR_CATEGORY_OF] gives each code's.
const ERROR_CATEGORY_INPUT := "input"
const ERROR_CATEGORY_NOT_FOUND := "not_found"
const ERROR_CATEGORY_CONFLICT := "conflict"
const ERROR_CATEGORY_DENIED := "denied"
const ERROR_CATEGORY_LIMIT := "limit"
const ERROR_CATEGORY_UNAVAILABLE := "unavailable"
const ERROR_CATEGORY_CONFIG := "config"
const ERROR_CATEGORY_BRAIN := "brain"
const ERROR_CATEGORY_STORAGE := "storage"
const ERROR_CATEGORY_INTERNAL := "internal"
## Every value above.
const ERROR_CATEGORIES: Array[String] = [ERROR_CATEGORY_INPUT, ERROR_CATEGORY_NOT_FOUND, ERROR_CATEGORY_CONFLICT, ERROR_CATEGORY_DENIED, ERROR_CATEGORY_LIMIT, ERROR_CATEGORY_UNAVAILABLE, ERROR_CATEGORY_CONFIG, ERROR_CATEGORY_BRAIN, ERROR_CATEGORY_STORAGE, ERROR_CATEGORY_INTERNAL]
## Each error code's category, by code:
## [code]input[/code], [code]not_found[/code], [code]conflict[/code] and [code]denied[/code] ask the caller to
## change something; [code]limit[/code] to wait; [code]unavailable[/code] to start or reach what
## is missing; [code]config[/code] to fix the configuration; [code]brain[/code], [code]storage[/code] and
## [code]internal[/code] report a failure elsewhere.
const ERROR_CATEGORY_OF: Dictionary[String, String] = {
	"action_failed": ERROR_CATEGORY_UNAVAILABLE,
	"action_refused": ERROR_CATEGORY_CONFLICT,
	"actor_state_restricted": ERROR_CATEGORY_CONFLICT,
	"agent_stopped": ERROR_CATEGORY_UNAVAILABLE,
	"agent_unreachable": ERROR_CATEGORY_UNAVAILABLE,
	"already_running": ERROR_CATEGORY_CONFLICT,
	"app_attached": ERROR_CATEGORY_CONFLICT,
	"app_exists": ERROR_CATEGORY_CONFLICT,
	"app_gone": ERROR_CATEGORY_NOT_FOUND,
	"app_not_owned": ERROR_CATEGORY_DENIED,
	"app_refused": ERROR_CATEGORY_CONFLICT,
	"binary_not_supported": ERROR_CATEGORY_INPUT,
	"brain_auth_failed": ERROR_CATEGORY_BRAIN,
	"brain_bad_request": ERROR_CATEGORY_BRAIN,
	"brain_context_exceeded": ERROR_CATEGORY_BRAIN,
	"brain_error": ERROR_CATEGORY_BRAIN,
	"brain_grammar_failed": ERROR_CATEGORY_BRAIN,
	"brain_invalid_reply": ERROR_CATEGORY_BRAIN,
	"brain_invalid_response": ERROR_CATEGORY_BRAIN,
	"brain_key_missing": ERROR_CATEGORY_CONFIG,
	"brain_model_checksum_mismatch": ERROR_CATEGORY_BRAIN,
	"brain_model_download_failed": ERROR_CATEGORY_BRAIN,
	"brain_model_invalid": ERROR_CATEGORY_BRAIN,
	"brain_model_missing": ERROR_CATEGORY_CONFIG,
	"brain_model_not_found": ERROR_CATEGORY_BRAIN,
	"brain_model_too_large": ERROR_CATEGORY_BRAIN,
	"brain_not_allowed": ERROR_CATEGORY_DENIED,
	"brain_provider_error": ERROR_CATEGORY_BRAIN,
	"brain_rate_limited": ERROR_CATEGORY_BRAIN,
	"brain_server_error": ERROR_CATEGORY_BRAIN,
	"brain_template_failed": ERROR_CATEGORY_BRAIN,
	"brain_timeout": ERROR_CATEGORY_BRAIN,
	"brain_unreachable": ERROR_CATEGORY_BRAIN,
	"budget_exhausted": ERROR_CATEGORY_LIMIT,
	"cancelled": ERROR_CATEGORY_UNAVAILABLE,
	"cli_exit_status": ERROR_CATEGORY_BRAIN,
	"cli_invalid_output": ERROR_CATEGORY_BRAIN,
	"cli_not_found": ERROR_CATEGORY_CONFIG,
	"cli_output_too_large": ERROR_CATEGORY_BRAIN,
	"cli_reported_error": ERROR_CATEGORY_BRAIN,
	"cli_spawn_failed": ERROR_CATEGORY_BRAIN,
	"cli_timeout": ERROR_CATEGORY_BRAIN,
	"database_error": ERROR_CATEGORY_STORAGE,
	"duplicate_call_id": ERROR_CATEGORY_INPUT,
	"duplicate_field": ERROR_CATEGORY_INPUT,
	"file_error": ERROR_CATEGORY_STORAGE,
	"human_in_control": ERROR_CATEGORY_CONFLICT,
	"human_only": ERROR_CATEGORY_DENIED,
	"internal_error": ERROR_CATEGORY_INTERNAL,
	"invalid_action": ERROR_CATEGORY_INPUT,
	"invalid_actor_state": ERROR_CATEGORY_INPUT,
	"invalid_args": ERROR_CATEGORY_INPUT,
	"invalid_argument": ERROR_CATEGORY_INPUT,
	"invalid_campaign": ERROR_CATEGORY_INPUT,
	"invalid_config": ERROR_CATEGORY_INPUT,
	"invalid_filter": ERROR_CATEGORY_INPUT,
	"invalid_json": ERROR_CATEGORY_INPUT,
	"invalid_message": ERROR_CATEGORY_INPUT,
	"invalid_options": ERROR_CATEGORY_CONFIG,
	"invalid_path": ERROR_CATEGORY_INPUT,
	"invalid_request": ERROR_CATEGORY_INPUT,
	"invalid_transition": ERROR_CATEGORY_CONFLICT,
	"lagged": ERROR_CATEGORY_LIMIT,
	"limit_reached": ERROR_CATEGORY_LIMIT,
	"missing_type": ERROR_CATEGORY_INPUT,
	"not_an_object": ERROR_CATEGORY_INPUT,
	"not_json": ERROR_CATEGORY_INPUT,
	"not_ready": ERROR_CATEGORY_CONFLICT,
	"not_running": ERROR_CATEGORY_UNAVAILABLE,
	"not_spawned": ERROR_CATEGORY_UNAVAILABLE,
	"rate_limited": ERROR_CATEGORY_LIMIT,
	"save_failed": ERROR_CATEGORY_STORAGE,
	"shut_down": ERROR_CATEGORY_UNAVAILABLE,
	"startup_failed": ERROR_CATEGORY_INTERNAL,
	"task_already_completed": ERROR_CATEGORY_CONFLICT,
	"tool_failed": ERROR_CATEGORY_INTERNAL,
	"tool_not_allowed": ERROR_CATEGORY_DENIED,
	"turn_failed": ERROR_CATEGORY_BRAIN,
	"turn_refused": ERROR_CATEGORY_CONFLICT,
	"unauthorized": ERROR_CATEGORY_DENIED,
	"unknown_action": ERROR_CATEGORY_NOT_FOUND,
	"unknown_agent": ERROR_CATEGORY_NOT_FOUND,
	"unknown_app": ERROR_CATEGORY_NOT_FOUND,
	"unknown_brain": ERROR_CATEGORY_NOT_FOUND,
	"unknown_campaign": ERROR_CATEGORY_NOT_FOUND,
	"unknown_memory": ERROR_CATEGORY_NOT_FOUND,
	"unknown_move": ERROR_CATEGORY_NOT_FOUND,
	"unknown_provider": ERROR_CATEGORY_CONFIG,
	"unknown_task": ERROR_CATEGORY_NOT_FOUND,
	"unknown_tool": ERROR_CATEGORY_NOT_FOUND,
	"unknown_type": ERROR_CATEGORY_INPUT,
}
