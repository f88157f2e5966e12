## A chat panel for an [AgentApp]: the session's chat (the agent's lines, the human's, system
## lines such as [code]🎮 ⚔️ Combat: Lv.15 Goblin[/code]), its actions as compact lines
## ([code]#3 agent place { col: 2, row: 1 } → ok[/code]) and its events
## ([code]Event: roundEnded — { winner: X }[/code]), and a line edit for the human to talk to the
## agent ([method AgentApp.human_says]). Or a talk panel for any agent: point [member agent_path]
## at an [AgentNode] and the panel shows what you say, what the agent answers (a model brain's
## text as it streams in), and why it could not answer; sending asks it
## ([method AgentNode.ask]).
##
## Point [member app_path] at an [AgentApp] (or set [member app]); the panel reads the app's
## transcript ([method AgentApp.get_transcript]) every frame, so it shows what the app's session
## already holds (also a session restored from the database) and everything after. Add it to a
## scene like any [Control]; its children (log, line edit, send button) are internal.
##
## [codeblock]
## var panel := AgentChatPanel.new()
## panel.app_path = ^"../AgentApp"
## panel.custom_minimum_size = Vector2(420, 300)
## add_child(panel)
## [/codeblock]
@icon("res://addons/godot_agents/icons/agent_chat_panel.svg")
class_name AgentChatPanel
extends VBoxContainer

## The human sent [param text] to the agent (from the line edit or [method send]).
signal message_sent(text: String)

## Colors of the lines, by kind: the agent's, the human's, system lines, actions, events.
const COLORS := {
	"agent": Color(0.55, 0.8, 1.0),
	"human": Color(0.6, 1.0, 0.6),
	"system": Color(1.0, 0.85, 0.4),
	"action": Color(0.78, 0.78, 0.82),
	"event": Color(1.0, 0.62, 0.35),
}

## The [AgentApp] to follow (resolved when the panel is in the tree, and again while not found).
@export var app_path: NodePath:
	set(value):
		app_path = value
		_app = null
		_reset()

## The [AgentNode] to talk to, when the panel is not following an app: its lines, its streamed
## text and its failures, and what you send it.
@export var agent_path: NodePath:
	set(value):
		agent_path = value
		_set_agent(null)

## How many lines the panel keeps (the oldest go first).
@export_range(10, 2000, 1) var max_lines := 200

## Show the app's actions ([code]#3 agent place … → ok[/code]).
@export var show_actions := true

## Show the events the agent got ([code]Event: roundEnded — { winner: X }[/code]).
@export var show_events := true

## The line edit's placeholder.
@export var placeholder := "Say something to the agent…":
	set(value):
		placeholder = value
		if _input != null:
			_input.placeholder_text = value

## The app followed: the node at [member app_path], or the one set here.
var app: Node:
	set(value):
		_app = value
		_reset()
	get:
		return _resolve()

var _app: Node = null
## The AgentNode followed, and the entry its streamed text goes into (-1: none).
var _agent: Node = null
var _live := -1
## [line, color] pairs shown, oldest first.
var _entries: Array = []
var _seq := 0
var _epoch := -1
var _dirty := false
var _log: RichTextLabel
var _input: LineEdit
var _send: Button
## True while a line is being handed to the agent (its error is shown as the answer).
var _asking := false


func _init() -> void:
	_log = RichTextLabel.new()
	_log.name = "Log"
	_log.bbcode_enabled = false
	_log.scroll_following = true
	_log.selection_enabled = true
	_log.size_flags_vertical = Control.SIZE_EXPAND_FILL
	_log.custom_minimum_size = Vector2(0, 80)
	add_child(_log, false, Node.INTERNAL_MODE_FRONT)
	var row := HBoxContainer.new()
	row.name = "InputRow"
	_input = LineEdit.new()
	_input.name = "Input"
	_input.placeholder_text = placeholder
	_input.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_input.text_submitted.connect(_on_submitted)
	row.add_child(_input)
	_send = Button.new()
	_send.name = "Send"
	_send.text = "Send"
	_send.pressed.connect(func(): _on_submitted(_input.text))
	row.add_child(_send)
	add_child(row, false, Node.INTERNAL_MODE_BACK)


func _process(_delta: float) -> void:
	refresh()


## The [AgentNode] talked to: the node at [member agent_path], or the one given here.
func set_agent(node: Node) -> void:
	_set_agent(node)


## The [AgentNode] talked to (null when none).
func get_agent() -> Node:
	return _resolve_agent()


## Reads what the app added since the last frame (the panel does this every frame; call it to
## see new lines at once).
func refresh() -> void:
	var followed := _resolve()
	if followed == null:
		_resolve_agent()
		if _dirty:
			_redraw()
		return
	var epoch: int = followed.get_transcript_epoch()
	if epoch != _epoch:
		_epoch = epoch
		_seq = 0
		_entries.clear()
		_dirty = true
	for item in followed.get_transcript(_seq):
		_seq = item.seq
		match item.kind:
			"action":
				if show_actions:
					_entries.append([item.line, COLORS.action])
			"event":
				if show_events:
					_entries.append([item.line, COLORS.event])
			_:
				_entries.append([item.line, COLORS.get(item.role, COLORS.system)])
		_dirty = true
	while _entries.size() > max_lines:
		_entries.pop_front()
	if _dirty:
		_redraw()


## The lines shown, oldest first, as plain text.
func get_lines() -> PackedStringArray:
	refresh()
	var out := PackedStringArray()
	for entry in _entries:
		out.append(entry[0])
	return out


## Sends [param text] to the agent as the human ([method AgentApp.human_says]), as the line edit
## does: the line appears with the next refresh. Returns [code]false[/code] for an empty text
## or without an app (see the app's [method AgentApp.get_last_error]).
func send(text: String) -> bool:
	if text.strip_edges().is_empty():
		return false
	var followed := _resolve()
	if followed == null:
		var talked_to := _resolve_agent()
		if talked_to == null:
			return false
		_ask(talked_to, text)
		message_sent.emit(text)
		return true
	if not followed.human_says(text):
		return false
	message_sent.emit(text)
	return true


## Clears the panel; it then shows only what is added from now on.
func clear() -> void:
	_entries.clear()
	_dirty = true
	_redraw()


## The line edit the human types in.
func get_line_edit() -> LineEdit:
	return _input


func _on_submitted(text: String) -> void:
	if send(text):
		_input.clear()


func _resolve() -> Node:
	if _app != null and not is_instance_valid(_app):
		_app = null
		_reset()
	if _app == null and not app_path.is_empty() and is_inside_tree():
		var found := get_node_or_null(app_path)
		if found != null and found.is_class("AgentApp"):
			_app = found
	return _app


func _resolve_agent() -> Node:
	if _agent != null and not is_instance_valid(_agent):
		_agent = null
	if _agent == null and not agent_path.is_empty() and is_inside_tree():
		var found := get_node_or_null(agent_path)
		if found != null and found.is_class("AgentNode"):
			_set_agent(found)
	return _agent


func _set_agent(node: Node) -> void:
	if _agent != null and is_instance_valid(_agent):
		for connection in [["spoke", _on_spoke], ["speech_streamed", _on_streamed],
				["error_occurred", _on_error]]:
			if _agent.is_connected(connection[0], connection[1]):
				_agent.disconnect(connection[0], connection[1])
	_agent = node
	_live = -1
	if node != null:
		node.connect("spoke", _on_spoke)
		node.connect("speech_streamed", _on_streamed)
		node.connect("error_occurred", _on_error)


## The name the agent's lines go under: its config's name, else its character's.
func _agent_name() -> String:
	if _agent == null:
		return "Agent"
	var config = _agent.get("config")
	if config != null and not str(config.name).is_empty():
		return config.name
	var body := _agent.get_parent()
	return body.name if body != null else "Agent"


func _ask(node: Node, text: String) -> void:
	_add("You: " + text, COLORS.human)
	# A line that cannot be sent is also the node's error_occurred: shown once, as the answer.
	_asking = true
	var finished: Signal = node.ask(text)
	_asking = false
	var reply: Dictionary = await finished
	if not reply.ok:
		_add("(%s could not answer: %s)" % [_agent_name(), reply.error.message], COLORS.system)


func _on_streamed(delta: String) -> void:
	if _live < 0:
		_add(_agent_name() + ": ", COLORS.agent)
		_live = _entries.size() - 1
	_entries[_live][0] += delta
	_dirty = true


func _on_spoke(text: String, _recipients: PackedStringArray, _dialog_type: String) -> void:
	var line := "%s: %s" % [_agent_name(), text]
	if _live >= 0 and _live < _entries.size():
		_entries[_live][0] = line
		_live = -1
		_dirty = true
	else:
		_add(line, COLORS.agent)


func _on_error(code: String, message: String) -> void:
	if _asking:
		return
	_live = -1
	_add("(%s: %s)" % [code, message], COLORS.system)


func _add(line: String, color: Color) -> void:
	_entries.append([line, color])
	while _entries.size() > max_lines:
		_entries.pop_front()
		_live -= 1
	_dirty = true


func _reset() -> void:
	_epoch = -1
	_seq = 0
	_entries.clear()
	_dirty = true


func _redraw() -> void:
	_dirty = false
	_log.clear()
	for i in _entries.size():
		if i > 0:
			_log.newline()
		_log.push_color(_entries[i][1])
		_log.add_text(_entries[i][0])
		_log.pop()
