## The editor's [b]Agents[/b] debugger tab: every agent of the running game's [AgentRuntime]
## nodes, live, and the selected agent's recent decisions (with the memories each recalled and
## why), model calls, conversation, memories, state history and app session, with actions to talk to it, pause or resume its autonomous loop and
## terminate it.
##
## [AgentsDebuggerPlugin] adds one panel per debugger session and feeds it the game's
## [code]godot_agents:*[/code] messages ([method handle_message]); the panel asks for things by
## emitting [signal message_requested], which the plugin sends to the game. The message format is
## documented in [code]rust/godot/src/debugger.rs[/code]; the panel works without the editor too
## (tests feed it messages).
@tool
extends VBoxContainer

## The panel wants [param message] sent to the game with [param data] (for example
## [code]"godot_agents:pause", [runtime_id, "agent_001", true][/code]).
signal message_requested(message: String, data: Array)

## The capture's prefix.
const CAPTURE := "godot_agents"
## The agent list's columns: title and the report field shown.
const COLUMNS := [["Agent", "name"], ["Id", "agent_id"], ["Role", "role"], ["State", "state"],
	["Position", "position"], ["Task", "task"], ["Brain", "brain"]]
## The columns' least widths (the task takes the rest).
const COLUMN_WIDTHS := [90, 100, 70, 110, 100, 120, 70]
## State colours in the list.
const STATE_COLORS := {
	"idle": Color(0.7, 0.7, 0.7),
	"listening": Color(0.55, 0.8, 1.0),
	"thinking": Color(1.0, 0.85, 0.4),
	"speaking": Color(0.6, 1.0, 0.6),
}

## Runtime id → [code]{name, agents: Array, count, updated_msec}[/code].
var runtimes := {}
## The runtime shown.
var runtime_id := 0
## The agent selected ([code]""[/code]: none).
var agent_id := ""
## The selected agent's last detail (the game's JSON, parsed).
var detail := {}
## The last message that could not be read, and why ([code]""[/code]: none).
var last_problem := ""

var _runtime_picker: OptionButton
var _status: Label
var _tree: Tree
var _items := {}
var _title: Label
var _say: LineEdit
var _send: Button
var _pause: Button
var _terminate: Button
var _tabs: TabContainer
var _decisions: RichTextLabel
var _calls: RichTextLabel
var _conversation: RichTextLabel
var _memory: RichTextLabel
var _history: RichTextLabel
var _session: RichTextLabel


func _init() -> void:
	name = "Agents"
	size_flags_vertical = Control.SIZE_EXPAND_FILL
	var bar := HBoxContainer.new()
	add_child(bar)
	var label := Label.new()
	label.text = "Runtime:"
	bar.add_child(label)
	_runtime_picker = OptionButton.new()
	_runtime_picker.custom_minimum_size.x = 200
	_runtime_picker.item_selected.connect(_on_runtime_picked)
	bar.add_child(_runtime_picker)
	_status = Label.new()
	_status.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_status.text = "Waiting for an AgentRuntime in the running game…"
	bar.add_child(_status)

	var split := HSplitContainer.new()
	split.size_flags_vertical = Control.SIZE_EXPAND_FILL
	add_child(split)

	_tree = Tree.new()
	_tree.columns = COLUMNS.size()
	_tree.column_titles_visible = true
	_tree.hide_root = true
	_tree.select_mode = Tree.SELECT_ROW
	_tree.custom_minimum_size = Vector2(420, 160)
	_tree.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_tree.size_flags_stretch_ratio = 1.1
	for i in COLUMNS.size():
		_tree.set_column_title(i, COLUMNS[i][0])
		_tree.set_column_expand(i, i == 5)
		_tree.set_column_custom_minimum_width(i, COLUMN_WIDTHS[i])
		_tree.set_column_clip_content(i, true)
	_tree.create_item()
	_tree.item_selected.connect(_on_item_selected)
	split.add_child(_tree)

	var right := VBoxContainer.new()
	right.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	right.size_flags_stretch_ratio = 0.9
	right.custom_minimum_size.x = 360
	split.add_child(right)
	_title = Label.new()
	_title.text = "Select an agent."
	right.add_child(_title)
	var actions := HBoxContainer.new()
	right.add_child(actions)
	_say = LineEdit.new()
	_say.placeholder_text = "Say something to the agent…"
	_say.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_say.text_submitted.connect(func(_t): send_line())
	actions.add_child(_say)
	_send = Button.new()
	_send.text = "Send"
	_send.pressed.connect(send_line)
	actions.add_child(_send)
	_pause = Button.new()
	_pause.text = "Pause"
	_pause.tooltip_text = "Pause or resume the agent's autonomous loop (it still answers messages)."
	_pause.pressed.connect(toggle_pause)
	actions.add_child(_pause)
	_terminate = Button.new()
	_terminate.text = "Terminate"
	_terminate.pressed.connect(terminate)
	actions.add_child(_terminate)
	_tabs = TabContainer.new()
	_tabs.size_flags_vertical = Control.SIZE_EXPAND_FILL
	right.add_child(_tabs)
	_decisions = _text_tab("Decisions")
	_calls = _text_tab("Model calls")
	_conversation = _text_tab("Conversation")
	_memory = _text_tab("Memory")
	_history = _text_tab("State history")
	_session = _text_tab("Session")
	_update_actions()


func _text_tab(title: String) -> RichTextLabel:
	var text := RichTextLabel.new()
	text.name = title
	text.bbcode_enabled = true
	text.scroll_following = false
	text.selection_enabled = true
	text.size_flags_vertical = Control.SIZE_EXPAND_FILL
	_tabs.add_child(text)
	return text


## Handles a message of the game ([code]godot_agents:agents[/code], [code]:detail[/code],
## [code]:stopped[/code]; the prefix is optional). Returns [code]false[/code] for a message that is
## not the capture's or cannot be read ([member last_problem] says why); nothing changes then.
func handle_message(message: String, data: Array) -> bool:
	var kind := message.trim_prefix(CAPTURE + ":")
	match kind:
		"agents":
			return _on_agents(data)
		"detail":
			return _on_detail(data)
		"stopped":
			return _on_stopped(data)
	return _problem("unknown message '%s'" % message)


## Forgets every runtime (the session ended).
func clear() -> void:
	runtimes.clear()
	runtime_id = 0
	_select_agent("")
	_refresh_runtimes()
	_refresh_tree()
	_status.text = "The game stopped."


## The agent ids the list shows, in order.
func listed_agents() -> PackedStringArray:
	var ids := PackedStringArray()
	for item in _tree.get_root().get_children():
		ids.append(item.get_metadata(0))
	return ids


## Selects an agent of the shown runtime, as a click in the list does.
func select_agent(id: String) -> void:
	if _items.has(id):
		_items[id].select(0)
	else:
		_select_agent(id)


## Sends the line edit's text to the selected agent.
func send_line() -> void:
	var text := _say.text.strip_edges()
	if agent_id == "" or text == "":
		return
	message_requested.emit(CAPTURE + ":send", [runtime_id, agent_id, text])
	_say.clear()


## Pauses the selected agent's autonomous loop, or resumes it.
func toggle_pause() -> void:
	if agent_id == "":
		return
	message_requested.emit(CAPTURE + ":pause", [runtime_id, agent_id, not _is_paused()])


## Terminates the selected agent.
func terminate() -> void:
	if agent_id == "":
		return
	message_requested.emit(CAPTURE + ":terminate", [runtime_id, agent_id])


## The text a detail tab shows ("Decisions", "Model calls", "Conversation", "Memory", "State history",
## "Session"), without markup.
func tab_text(title: String) -> String:
	var tab: RichTextLabel = _tabs.get_node_or_null(title)
	return tab.get_parsed_text() if tab != null else ""


func _on_agents(data: Array) -> bool:
	if data.size() < 3 or typeof(data[0]) != TYPE_INT or typeof(data[2]) != TYPE_PACKED_BYTE_ARRAY:
		return _problem("agents needs [runtime_id: int, name: String, report: PackedByteArray]")
	var report = JSON.parse_string(data[2].get_string_from_utf8())
	if typeof(report) != TYPE_DICTIONARY or typeof(report.get("agents")) != TYPE_ARRAY:
		return _problem("agents: the report is not {\"agents\": [...]} JSON")
	var id: int = data[0]
	var known := runtimes.has(id)
	runtimes[id] = {"name": str(data[1]), "agents": report["agents"],
		"count": int(report.get("count", report["agents"].size())), "updated_msec": Time.get_ticks_msec()}
	if not known:
		_refresh_runtimes()
	if runtime_id == 0:
		_show_runtime(id)
	elif id == runtime_id:
		_refresh_tree()
	last_problem = ""
	return true


func _on_detail(data: Array) -> bool:
	if data.size() < 3 or typeof(data[0]) != TYPE_INT or typeof(data[2]) != TYPE_PACKED_BYTE_ARRAY:
		return _problem("detail needs [runtime_id: int, agent_id: String, detail: PackedByteArray]")
	var parsed = JSON.parse_string(data[2].get_string_from_utf8())
	if typeof(parsed) != TYPE_DICTIONARY:
		return _problem("detail: the detail is not a JSON object")
	if data[0] != runtime_id or str(data[1]) != agent_id:
		return true  # for a selection since changed
	detail = parsed
	_refresh_detail()
	last_problem = ""
	return true


func _on_stopped(data: Array) -> bool:
	if data.is_empty() or typeof(data[0]) != TYPE_INT:
		return _problem("stopped needs [runtime_id: int]")
	runtimes.erase(data[0])
	_refresh_runtimes()
	if data[0] == runtime_id:
		runtime_id = 0
		_select_agent("")
		if not runtimes.is_empty():
			_show_runtime(runtimes.keys()[0])
		else:
			_refresh_tree()
			_status.text = "The runtime stopped."
	return true


func _problem(why: String) -> bool:
	last_problem = why
	_status.text = "Unreadable message: " + why
	return false


func _show_runtime(id: int) -> void:
	runtime_id = id
	_select_agent("")
	for i in _runtime_picker.item_count:
		if _runtime_picker.get_item_metadata(i) == id:
			_runtime_picker.select(i)
	_refresh_tree()


func _refresh_runtimes() -> void:
	_runtime_picker.clear()
	for id in runtimes:
		_runtime_picker.add_item("%s (%d)" % [runtimes[id]["name"], id])
		_runtime_picker.set_item_metadata(_runtime_picker.item_count - 1, id)
		if id == runtime_id:
			_runtime_picker.select(_runtime_picker.item_count - 1)


func _on_runtime_picked(index: int) -> void:
	_show_runtime(_runtime_picker.get_item_metadata(index))


func _refresh_tree() -> void:
	var agents: Array = runtimes[runtime_id]["agents"] if runtimes.has(runtime_id) else []
	var seen := {}
	var root := _tree.get_root()
	for i in agents.size():
		var agent: Dictionary = agents[i]
		var id := str(agent.get("agent_id", ""))
		seen[id] = true
		var item: TreeItem = _items.get(id)
		if item == null:
			item = _tree.create_item(root)
			item.set_metadata(0, id)
			_items[id] = item
		if item.get_index() != i:
			item.move_before(root.get_child(i))
		for c in COLUMNS.size():
			item.set_text(c, _cell(agent, COLUMNS[c][1]))
		var state := str(agent.get("state", ""))
		item.set_custom_color(3, STATE_COLORS.get(state, Color.WHITE))
		if agent.get("paused", false):
			item.set_text(3, state + " (paused)")
	for id in _items.keys():
		if not seen.has(id):
			_items[id].free()
			_items.erase(id)
	if runtimes.has(runtime_id):
		var r: Dictionary = runtimes[runtime_id]
		_status.text = "%s: %d agent(s)" % [r["name"], r["count"]]
	if agent_id != "" and not seen.has(agent_id):
		_title.text = "%s is no longer running." % agent_id
	elif agent_id != "":
		_title.text = _agent_title(_find_agent(agent_id))
	_update_actions()


func _cell(agent: Dictionary, field: String) -> String:
	var value = agent.get(field)
	if value == null:
		return ""
	if field == "position" and value is Array and value.size() == 2:
		return "(%.1f, %.1f)" % [value[0], value[1]]
	return str(value)


func _find_agent(id: String) -> Dictionary:
	for agent in runtimes.get(runtime_id, {}).get("agents", []):
		if agent.get("agent_id") == id:
			return agent
	return {}


func _agent_title(agent: Dictionary) -> String:
	if agent.is_empty():
		return agent_id
	var title := "%s (%s), %s — %s" % [agent.get("name", ""), agent_id, agent.get("role", ""),
		agent.get("state", "")]
	if agent.get("paused", false):
		title += ", paused"
	return title


func _on_item_selected() -> void:
	var item := _tree.get_selected()
	if item != null:
		_select_agent(item.get_metadata(0))


func _select_agent(id: String) -> void:
	if id == agent_id:
		return
	agent_id = id
	detail = {}
	_refresh_detail()
	_title.text = _agent_title(_find_agent(id)) if id != "" else "Select an agent."
	_update_actions()
	if runtime_id != 0:
		message_requested.emit(CAPTURE + ":select", [runtime_id, id])


func _is_paused() -> bool:
	var agent := _find_agent(agent_id)
	if agent.has("paused"):
		return bool(agent["paused"])
	return bool(detail.get("paused", false))


func _update_actions() -> void:
	var running := agent_id != "" and _items.has(agent_id)
	for control in [_say, _send, _pause, _terminate]:
		if control is LineEdit:
			control.editable = running
		else:
			control.disabled = not running
	_pause.text = "Resume" if running and _is_paused() else "Pause"


func _refresh_detail() -> void:
	_decisions.text = _decisions_text(detail.get("decisions", []))
	_calls.text = _rows_text(detail.get("trace", []), _model_call_line)
	_conversation.text = _rows_text(detail.get("conversation", []), _line_of_conversation)
	_memory.text = _rows_text(detail.get("memories", []), _line_of_memory)
	_history.text = _rows_text(detail.get("state_history", []), _line_of_transition)
	var session = detail.get("session")
	_session.text = JSON.stringify(session, "  ") if session != null else "[i]No app session.[/i]"
	_update_actions()


func _decisions_text(decisions) -> String:
	if decisions is Dictionary and decisions.has("error"):
		return "[color=orange]%s[/color]" % decisions["error"]
	if not decisions is Array or decisions.is_empty():
		return "[i]No decision yet.[/i]"
	var out := PackedStringArray()
	for i in range(decisions.size() - 1, -1, -1):
		var d: Dictionary = decisions[i]
		var head := "[b]#%d[/b] %s, %s — %d ms" % [d.get("number", 0), d.get("trigger", ""),
			d.get("started_at", ""), d.get("latency_ms", 0)]
		if int(d.get("model_calls", 0)) > 0:
			head += ", %d model call(s), %d→%d tokens" % [d.get("model_calls", 0),
				d.get("input_tokens", 0), d.get("output_tokens", 0)]
		if int(d.get("repairs", 0)) > 0:
			head += ", %d repair(s)" % d["repairs"]
		out.append(head)
		out.append("  [color=gray]%s[/color]" % _escape(str(d.get("context", ""))))
		for call in d.get("calls", []):
			var colour: String = {"done": "lightgreen", "failed": "salmon",
				"refused": "orange"}.get(call.get("outcome", ""), "white")
			var line := "  %s %s → [color=%s]%s[/color]" % [call.get("tool", ""),
				_escape(compact_json(call.get("args", {}))), colour, call.get("outcome", "")]
			if call.get("detail") != null:
				line += ": " + _escape(str(call["detail"]))
			out.append(line)
		for recalled in d.get("recalled", []):
			if recalled.get("in_view", false):
				continue
			var memory: Dictionary = recalled.get("memory", {})
			var meaning := ""
			if recalled.get("semantic") != null:
				meaning = ", meaning %.2f" % float(recalled["semantic"])
			out.append("  [color=plum]recalls #%d[/color] %s — score %.2f (recency %.2f, importance %.2f, relevance %.2f%s)" % [
				memory.get("id", 0), _escape(str(memory.get("text", ""))), recalled.get("score", 0.0),
				recalled.get("recency", 0.0), recalled.get("importance", 0.0), recalled.get("relevance", 0.0),
				meaning])
		for said in d.get("spoken", []):
			out.append("  [color=lightblue]says “%s”[/color]" % _escape(str(said)))
		if d.get("failure") != null:
			out.append("  [color=salmon]failed: %s[/color]" % _escape(str(d["failure"])))
	return "\n".join(out)


func _rows_text(rows, line: Callable) -> String:
	if rows is Dictionary and rows.has("error"):
		return "[color=orange]%s[/color]" % rows["error"]
	if not rows is Array or rows.is_empty():
		return "[i]Nothing yet.[/i]"
	var out := PackedStringArray()
	for row in rows:
		out.append(line.call(row))
	return "\n".join(out)


func _model_call_line(row: Dictionary) -> String:
	var line := "%s %s/%s: %s, %d ms, %d→%d tokens" % [row.get("started_at", ""),
		row.get("provider", ""), row.get("model", ""), row.get("outcome", ""),
		row.get("latency_ms", 0), row.get("input_tokens", 0), row.get("output_tokens", 0)]
	if row.get("error_code") != null:
		line += " [color=salmon](%s)[/color]" % row["error_code"]
	return line


func _line_of_conversation(row: Dictionary) -> String:
	var to := " → %s" % row["recipient"] if row.get("recipient") != null else ""
	return "%s [b]%s[/b]%s: %s" % [row.get("timestamp", ""),
		row.get("sender", ""), to, _escape(str(row.get("content", "")))]


func _line_of_memory(row: Dictionary) -> String:
	var line := "#%d [b]%s[/b] (%d) at %.0f s: %s" % [row.get("id", 0), row.get("kind", ""),
		row.get("importance", 0), row.get("game_time", 0.0), _escape(str(row.get("text", "")))]
	if row.get("superseded_by") != null:
		line += " [color=orange](replaced by #%d)[/color]" % row["superseded_by"]
	return line


func _line_of_transition(row: Dictionary) -> String:
	return "%s %s → %s" % [row.get("timestamp", ""), row.get("old_state", ""),
		row.get("new_state", "")]


## [param value] as compact JSON, whole numbers without a fraction (JSON parsing in Godot makes
## every number a float: [code]{"x": 500}[/code] stays [code]{"x":500}[/code], not
## [code]{"x":500.0}[/code]).
static func compact_json(value) -> String:
	match typeof(value):
		TYPE_FLOAT:
			if is_finite(value) and value == floorf(value) and absf(value) < 1e15:
				return str(int(value))
			return JSON.stringify(value)
		TYPE_DICTIONARY:
			var parts := PackedStringArray()
			for key in value:
				parts.append("%s:%s" % [JSON.stringify(str(key)), compact_json(value[key])])
			return "{" + ",".join(parts) + "}"
		TYPE_ARRAY:
			var parts := PackedStringArray()
			for item in value:
				parts.append(compact_json(item))
			return "[" + ",".join(parts) + "]"
	return JSON.stringify(value)


func _escape(text: String) -> String:
	return text.replace("[", "[lb]")
