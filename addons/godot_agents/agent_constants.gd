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
const ERROR_AGENT_STOPPED := "agent_stopped"
const ERROR_ALREADY_RUNNING := "already_running"
const ERROR_APP_ATTACHED := "app_attached"
const ERROR_APP_EXISTS := "app_exists"
const ERROR_BRAIN_AUTH_FAILED := "brain_auth_failed"
const ERROR_BRAIN_CONTEXT_EXCEEDED := "brain_context_exceeded"
const ERROR_BRAIN_ERROR := "brain_error"
const ERROR_BRAIN_GRAMMAR_FAILED := "brain_grammar_failed"
const ERROR_BRAIN_INVALID_REPLY := "brain_invalid_reply"
const ERROR_BRAIN_MODEL_CHECKSUM_MISMATCH := "brain_model_checksum_mismatch"
const ERROR_BRAIN_MODEL_DOWNLOAD_FAILED := "brain_model_download_failed"
const ERROR_BRAIN_MODEL_INVALID := "brain_model_invalid"
const ERROR_BRAIN_MODEL_NOT_FOUND := "brain_model_not_found"
const ERROR_BRAIN_MODEL_TOO_LARGE := "brain_model_too_large"
const ERROR_BRAIN_TEMPLATE_FAILED := "brain_template_failed"
const ERROR_BUDGET_EXHAUSTED := "budget_exhausted"
const ERROR_DATABASE_ERROR := "database_error"
const ERROR_FILE_ERROR := "file_error"
const ERROR_INTERNAL_ERROR := "internal_error"
const ERROR_INVALID_ACTION := "invalid_action"
const ERROR_INVALID_ARGUMENT := "invalid_argument"
const ERROR_INVALID_CONFIG := "invalid_config"
const ERROR_INVALID_MESSAGE := "invalid_message"
const ERROR_INVALID_OPTIONS := "invalid_options"
const ERROR_INVALID_TRANSITION := "invalid_transition"
const ERROR_LAGGED := "lagged"
const ERROR_LIMIT_REACHED := "limit_reached"
const ERROR_NOT_READY := "not_ready"
const ERROR_NOT_RUNNING := "not_running"
const ERROR_NOT_SPAWNED := "not_spawned"
const ERROR_SHUT_DOWN := "shut_down"
const ERROR_STARTUP_FAILED := "startup_failed"
const ERROR_TASK_ALREADY_COMPLETED := "task_already_completed"
const ERROR_TOOL_FAILED := "tool_failed"
const ERROR_TURN_FAILED := "turn_failed"
const ERROR_TURN_REFUSED := "turn_refused"
const ERROR_UNKNOWN_ACTION := "unknown_action"
const ERROR_UNKNOWN_AGENT := "unknown_agent"
const ERROR_UNKNOWN_APP := "unknown_app"
const ERROR_UNKNOWN_BRAIN := "unknown_brain"
const ERROR_UNKNOWN_CAMPAIGN := "unknown_campaign"
const ERROR_UNKNOWN_MEMORY := "unknown_memory"
const ERROR_UNKNOWN_MOVE := "unknown_move"
const ERROR_UNKNOWN_TASK := "unknown_task"
## Every value above.
const ERROR_CODES: Array[String] = [ERROR_ACTION_FAILED, ERROR_ACTION_REFUSED, ERROR_AGENT_STOPPED, ERROR_ALREADY_RUNNING, ERROR_APP_ATTACHED, ERROR_APP_EXISTS, ERROR_BRAIN_AUTH_FAILED, ERROR_BRAIN_CONTEXT_EXCEEDED, ERROR_BRAIN_ERROR, ERROR_BRAIN_GRAMMAR_FAILED, ERROR_BRAIN_INVALID_REPLY, ERROR_BRAIN_MODEL_CHECKSUM_MISMATCH, ERROR_BRAIN_MODEL_DOWNLOAD_FAILED, ERROR_BRAIN_MODEL_INVALID, ERROR_BRAIN_MODEL_NOT_FOUND, ERROR_BRAIN_MODEL_TOO_LARGE, ERROR_BRAIN_TEMPLATE_FAILED, ERROR_BUDGET_EXHAUSTED, ERROR_DATABASE_ERROR, ERROR_FILE_ERROR, ERROR_INTERNAL_ERROR, ERROR_INVALID_ACTION, ERROR_INVALID_ARGUMENT, ERROR_INVALID_CONFIG, ERROR_INVALID_MESSAGE, ERROR_INVALID_OPTIONS, ERROR_INVALID_TRANSITION, ERROR_LAGGED, ERROR_LIMIT_REACHED, ERROR_NOT_READY, ERROR_NOT_RUNNING, ERROR_NOT_SPAWNED, ERROR_SHUT_DOWN, ERROR_STARTUP_FAILED, ERROR_TASK_ALREADY_COMPLETED, ERROR_TOOL_FAILED, ERROR_TURN_FAILED, ERROR_TURN_REFUSED, ERROR_UNKNOWN_ACTION, ERROR_UNKNOWN_AGENT, ERROR_UNKNOWN_APP, ERROR_UNKNOWN_BRAIN, ERROR_UNKNOWN_CAMPAIGN, ERROR_UNKNOWN_MEMORY, ERROR_UNKNOWN_MOVE, ERROR_UNKNOWN_TASK]
