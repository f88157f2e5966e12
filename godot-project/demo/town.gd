## The agent town: five villagers (a baker, a smith, a guard, a farmer and the mayor) run by an
## AgentRuntime. They wander, talk, get tasks, ask each other for help, and the player greets the
## baker. Every event is printed as a timeline with the game time.
##
## Headless (`cargo xtask demo`) it runs `duration_seconds` of game time, prints a summary, checks
## that the town did what it should (moves, lines, an answer to the player, a collaboration, a
## completed task) and quits with 0, or 1 when something is missing. With a display it draws the
## town (houses, the festival square, fields, trees) with the villagers walking about, their
## names, a "…" while they think and speech bubbles with what they say, and the timeline in the
## town log; click a villager to talk to it: a talk box opens, you type a line, and its answer
## appears in its bubble and in the box (streamed as it is written, for a model). The Menu button
## or Esc go back to the showcase menu (demo/menu.tscn); Esc first closes the talk box.
##
## `--screenshot PATH` (user argument, with a display): the town runs until the villagers have
## spawned, moved and talked, clicks the baker (through the input path a real click takes), says
## a line to her in the talk box, waits for her answer, saves the window as a PNG and quits (0, or
## 1 when a step did not happen):
##   xvfb-run -a -s "-screen 0 1280x720x24" godot --rendering-driver opengl3 \
##       --path godot-project res://demo/town.tscn -- --screenshot /tmp/town.png
##
## The villagers (names, roles, prompts, positions, tasks) come from `demo/villagers.json`, which
## the Rust example town and the prompt-token bench read too.
##
## By default the villagers think with the offline `scripted` brain. The demo brain
## (demo/demo_brain.gd: the AGENTS_DEMO_* environment variables of docs/brains.md, "Running the
## demo town on a real model", or the AgentBrain in demo/brain.tres) gives the runtime a default
## brain instead, so every villager thinks with that model: AGENTS_DEMO_PROVIDER (openai,
## anthropic, cli), AGENTS_DEMO_MODEL, AGENTS_DEMO_BASE_URL, AGENTS_DEMO_API_KEY_ENV,
## AGENTS_DEMO_COMMAND / AGENTS_DEMO_CLI_BACKEND (cli); AGENTS_DEMO_SECONDS and
## AGENTS_DEMO_TOKEN_BUDGET apply to the town. The mayor's scripted opening (she asks two
## villagers for help) is left out then, and a model is not required to walk or to ask for help:
## those two checks become notes in the output. The others (lines said, the player answered, a
## task completed) still hold.
extends Node2D

const DemoUi := preload("res://demo/demo_ui.gd")
const DemoBrain := preload("res://demo/demo_brain.gd")
const Villager := preload("res://demo/villager.gd")
const DemoHeader := preload("res://demo/demo_header.gd")

## Seconds of game time the headless run lasts.
@export var duration_seconds := 30.0
## Seconds a villager works on a task before the town marks it done (if the villager did not
## finish it first).
@export var work_seconds := 20.0
## The town's database; deleted at start so every run begins with `agent_001`.
@export var database_path := "user://town.db"

## The villagers and the town's layout, shared with the Rust example and the prompt bench.
const TOWN_FILE := "res://demo/villagers.json"

## Where the town is drawn in the 1280×720 window, and the column beside it.
const MAP := Rect2(16, 76, 816, 628)
const SIDE := Rect2(848, 76, 416, 628)
## Margin inside MAP so that villagers at the world's edge (names and all) stay on the map.
const MAP_PAD := 46.0
## Longest wait for each step of the `--screenshot` run, in seconds.
const SHOT_STEP_SECONDS := 40.0
## What the screenshot run says to the baker.
const SHOT_LINE := "Hello Mira! Will there be bread for the festival?"

## The town from TOWN_FILE: world_size, hearing_radius, player_message and villagers (each with
## pos as a Vector2 and color as a Color).
var _town := {}
## The brain every villager thinks with (demo/demo_brain.gd); null: scripted.
var _model_brain: AgentBrain = null
## "provider model" of _model_brain, for the output.
var _model_label := ""
## Where _model_brain was configured (`AGENTS_DEMO_PROVIDER` or a file).
var _model_source := ""

@onready var runtime: AgentRuntime = $AgentRuntime

var _time := 0.0
var _finished := false
var _headless := false
## agent id → {name, role, color, pos (shown), target, state, streaming, node (the Villager,
## with a display)}
var _agents := {}
## task id → {agent_id, name, assigned_at}
var _open_tasks := {}
var _counts := {}
var _answered_player := false
var _problems: Array[String] = []
## Lines each villager said (agent id → count), for the model summary.
var _lines_by := {}
var _log: RichTextLabel

# The talk box (with a display).
var _header: DemoHeader
var _talk_box: PanelContainer
var _talk_hint: Label
var _talk_title: Label
var _talk_state: Label
var _talk_log: RichTextLabel
var _talk_input: LineEdit
## The villager the player talks to (`""`: the box is closed).
var _talk_id := ""
## agent id → [[who, text], …]: what the player and the villager said to each other.
var _talks := {}
## agent id → the line it is streaming after the player spoke to it.
var _talk_pending := {}
## agent ids the player spoke to that have not answered yet.
var _awaiting := {}
## The `--screenshot` run has started.
var _shooting := false


func _ready() -> void:
	_headless = DisplayServer.get_name() == "headless"
	if _headless:
		Engine.max_fps = 60
	else:
		_build_ui()
	DemoUi.remove_database(database_path)

	_town = _load_town()
	if _town.is_empty():
		_finish()
		return
	_model_brain = _configure_brain()
	if not _problems.is_empty():
		_finish()
		return
	var size: Array = _town.world_size
	runtime.world_bounds = Rect2(0, 0, size[0], size[1])
	runtime.hearing_radius = _town.hearing_radius
	if _model_brain:
		runtime.default_brain_config = _model_brain
	runtime.database_path = database_path
	runtime.agent_spawned.connect(_on_spawned)
	runtime.agent_state_changed.connect(_on_state_changed)
	runtime.agent_moved.connect(_on_moved)
	runtime.agent_spoke.connect(_on_spoke)
	runtime.agent_removed.connect(_on_removed)
	runtime.task_assigned.connect(_on_task_assigned)
	runtime.task_completed.connect(_on_task_completed)
	runtime.collaboration_requested.connect(_on_collaboration)
	runtime.agent_error.connect(_on_error)
	runtime.agent_speech_delta.connect(_on_speech_delta)
	if not runtime.start():
		_fail("the runtime did not start: %s" % runtime.get_last_error())
		_finish()
		return
	var villagers: Array = _town.villagers
	_say("Agent town: %d villagers, %.0f s of game time, database %s" % [
		villagers.size(), duration_seconds, database_path])
	if _model_brain:
		_say("Brain: %s (from %s), for every villager" % [_model_label, _model_source])
	else:
		_say("Brain: scripted (offline; set AGENTS_DEMO_PROVIDER or demo/brain.tres to think with a model)")

	var ids := {}
	for v in villagers:
		var config := AgentConfig.new()
		config.name = v.name
		config.role = v.role
		config.prompt = v.prompt
		config.initial_position = v.pos
		var spec: Variant = config
		if v.role == "mayor" and not _model_brain:
			# The mayor's first decisions are scripted (a cut-scene): she asks the guard and the
			# farmer for help with the festival; after that her brain decides on its own.
			spec = config.to_dictionary()
			spec["script"] = [
				_reply([["collaborate", {"agent_id": ids.guard,
					"task_name": "guard the festival square",
					"message": "Tess, will you keep the square safe during the festival?"}]]),
				_reply([["move", {"x": 35, "y": 40}], ["collaborate", {"agent_id": ids.farmer,
					"task_name": "deliver wheat to the bakery",
					"message": "Olek, Mira needs wheat for the festival bread."}]]),
			]
		var id := runtime.spawn_agent(spec)
		if id == "":
			_fail("spawning %s failed: %s" % [v.name, runtime.get_last_error()])
			continue
		ids[v.role] = id
		_agents[id] = {"name": v.name, "role": v.role, "color": v.color, "pos": v.pos,
			"target": v.pos, "state": "idle", "streaming": "", "node": null}
		if not _headless:
			var node := Villager.new()
			node.setup(v.name, v.role, v.color)
			node.bounds = MAP
			node.position = _to_screen(v.pos)
			add_child(node)
			_agents[id].node = node
	if ids.size() != villagers.size():
		if not _headless:
			_header.set_brain("Brain: %s — refused: %s" % [_model_label, runtime.get_last_error()], "error")
			_talk_hint.visible = false
		_finish()
		return

	for v in villagers:
		if v.get("task", "") != "":
			runtime.assign_task(ids[v.role], v.task)
	var greeting: Dictionary = _town.player_message
	var greeted: String = ids[greeting.to]
	get_tree().create_timer(3.0).timeout.connect(func() -> void:
		_say("%s Player → %s: \"%s\"" % [_stamp(), _agents[greeted].name, greeting.text])
		_talk_said(greeted, "You", greeting.text)
		_awaiting[greeted] = true
		runtime.send_message(greeted, greeting.text))
	var shot := DemoUi.screenshot_path()
	if shot != "" and not _headless:
		_shooting = true
		_screenshot_run(shot, ids[greeting.to])


## Reads TOWN_FILE; on a problem, records it and returns {}.
func _load_town() -> Dictionary:
	var text := FileAccess.get_file_as_string(TOWN_FILE)
	var data: Variant = JSON.parse_string(text) if text != "" else null
	if not data is Dictionary or not data.get("villagers") is Array:
		_fail("%s is missing or not a town (%s)" % [TOWN_FILE, FileAccess.get_open_error()])
		return {}
	var villagers := []
	for v: Dictionary in data.villagers:
		var rgb: Array = v.color
		var villager := v.duplicate()
		villager.pos = Vector2(v.x, v.y)
		villager.color = Color(rgb[0], rgb[1], rgb[2])
		villagers.append(villager)
	data.villagers = villagers
	return data


## The demo brain (demo/demo_brain.gd), or null for the scripted brain. Also applies
## AGENTS_DEMO_SECONDS and AGENTS_DEMO_TOKEN_BUDGET; a bad value is a problem.
func _configure_brain() -> AgentBrain:
	var seconds := OS.get_environment("AGENTS_DEMO_SECONDS").strip_edges()
	if seconds != "":
		if not seconds.is_valid_float() or float(seconds) <= 0:
			_fail("AGENTS_DEMO_SECONDS must be a number of seconds, got %s" % seconds)
		else:
			duration_seconds = float(seconds)
	var budget := OS.get_environment("AGENTS_DEMO_TOKEN_BUDGET").strip_edges()
	if budget != "":
		if not budget.is_valid_int() or int(budget) < 0:
			_fail("AGENTS_DEMO_TOKEN_BUDGET must be a whole number of tokens, got %s" % budget)
		else:
			runtime.runtime_token_budget = int(budget)
	var resolved := DemoBrain.resolve()
	if _header:
		_header.show_brain(resolved)
	if resolved.error != "":
		_fail(resolved.error)
		return null
	_model_label = resolved.label
	_model_source = resolved.source
	return resolved.brain


func _reply(calls: Array, text := "", dialog := "collaboration") -> Dictionary:
	var tool_calls := []
	for i in calls.size():
		tool_calls.append({"id": "call_%03d" % (i + 1), "tool": calls[i][0], "args": calls[i][1]})
	return {"assistant_text": text, "dialog_type": dialog, "tool_calls": tool_calls}


func _process(delta: float) -> void:
	if _finished:
		return
	_time += delta
	# Work: a task assigned long enough ago is done.
	for task_id in _open_tasks.keys():
		var task: Dictionary = _open_tasks[task_id]
		if _time - task.assigned_at >= work_seconds:
			_open_tasks.erase(task_id)
			runtime.complete_task(task_id)
	# Shown positions glide towards the agents' real ones.
	var mouse := get_global_mouse_position() if not _headless else Vector2(-1000, -1000)
	var hovering := false
	for id in _agents:
		var a: Dictionary = _agents[id]
		a.pos = a.pos.move_toward(a.target, delta * 25.0)
		if a.node:
			a.node.position = _to_screen(a.pos)
			a.node.hovered = not hovering and a.node.picks(mouse)
			hovering = hovering or a.node.hovered
	if not _headless:
		Input.set_default_cursor_shape(Input.CURSOR_POINTING_HAND if hovering else Input.CURSOR_ARROW)
		# Bubbles that do not cover each other; the one the player talks to first.
		var taken: Array[Rect2] = []
		if _talk_id != "":
			_agents[_talk_id].node.place_bubble(taken)
		for id in _agents:
			if id != _talk_id and _agents[id].node:
				_agents[id].node.place_bubble(taken)
	if _headless and _time >= duration_seconds:
		_finish()


func _finish() -> void:
	if _finished:
		return
	_finished = true
	if runtime.is_running():
		_say("")
		_say("== after %.1f s ==" % _time)
		for id in runtime.list_agents():
			var state := runtime.get_agent_state(id)
			var done := 0
			var tasks := runtime.get_tasks(id)
			for t in tasks:
				if t.status == "completed":
					done += 1
			_say("%s %-5s %-7s at (%.0f, %.0f), %s, %d/%d tasks done, %d lines remembered" % [
				id, state.name, state.role, state.position.x, state.position.y, state.state,
				done, tasks.size(), runtime.get_conversation(id, 1000).size()])
		runtime.stop()
	_say("events: %s" % [_counts])
	# A model decides for itself whether to walk or to ask for help (and the mayor's scripted
	# opening is left out): with a model those two are notes, not failures.
	var relaxed := ["agent_moved", "collaboration_requested"] if _model_brain else []
	var notes: Array[String] = []
	for kind in ["agent_moved", "agent_spoke", "task_completed", "collaboration_requested"]:
		if _counts.get(kind, 0) == 0:
			if kind in relaxed:
				notes.append("no %s in %.0f s (not required of a model)" % [kind, _time])
			else:
				_fail("no %s in %.0f s" % [kind, _time])
	if not _answered_player:
		_fail("nobody answered the player")
	if _model_brain:
		var speakers := []
		for id in _lines_by:
			speakers.append("%s %d" % [_agents[id].name, _lines_by[id]])
		_say("model lines (%s): %d, by %s" % [_model_label, _counts.get("agent_spoke", 0),
			", ".join(speakers) if not speakers.is_empty() else "nobody"])
		for note in notes:
			_say("relaxed for a model: " + note)
	if _problems.is_empty() and _model_brain:
		_say("TOWN OK (model %s): the villagers talked with the model, answered the player and finished tasks" % _model_label)
	elif _problems.is_empty():
		_say("TOWN OK: the villagers moved, talked, answered the player and finished tasks together")
	else:
		_say("TOWN FAILED:")
		for p in _problems:
			_say("  " + p)
	if _headless:
		get_tree().quit(0 if _problems.is_empty() else 1)
	elif DemoUi.screenshot_path() != "" and not _shooting:
		# The town could not start (see the log): the screenshot shows why.
		_shooting = true
		_save_and_quit(DemoUi.screenshot_path())


func _fail(what: String) -> void:
	_problems.append(what)


func _say(line: String) -> void:
	print(line)
	if _log:
		_log.add_text(line + "\n")


func _stamp() -> String:
	return "[%5.1fs]" % _time


func _who(id: String) -> String:
	if _agents.has(id):
		return "%s (%s)" % [_agents[id].name, _agents[id].role]
	if id == runtime.player_id:
		return "Player"
	return id if id != "" else "runtime"


func _count(kind: String) -> void:
	_counts[kind] = _counts.get(kind, 0) + 1


func _on_spawned(id: String, agent_name: String, role: String, pos: Vector2) -> void:
	_count("agent_spawned")
	if _agents.has(id):
		_agents[id].target = pos
	_say("%s %s %s, the %s, appears at (%.0f, %.0f)" % [_stamp(), id, agent_name, role, pos.x, pos.y])


func _on_state_changed(id: String, _old: String, new: String) -> void:
	_count("agent_state_changed")
	if _agents.has(id):
		_agents[id].state = new
		if new == "thinking":
			_agents[id].streaming = ""
		if _agents[id].node:
			_agents[id].node.state = new
		if id == _talk_id:
			_show_talk_state()
	if new == "listening":
		_say("%s %s listens" % [_stamp(), _who(id)])


func _on_moved(id: String, from: Vector2, to: Vector2) -> void:
	_count("agent_moved")
	if _agents.has(id):
		_agents[id].target = to
	_say("%s %s walks (%.0f, %.0f) → (%.0f, %.0f)" % [_stamp(), _who(id), from.x, from.y, to.x, to.y])


func _on_spoke(id: String, content: String, recipients: PackedStringArray) -> void:
	if id == runtime.player_id:
		return  # printed when sent
	_count("agent_spoke")
	var to := []
	var to_player := false
	for r in recipients:
		to.append(_agents[r].name if _agents.has(r) else ("Player" if r == runtime.player_id else r))
		if r == runtime.player_id:
			_answered_player = true
			to_player = true
	if _agents.has(id):
		var a: Dictionary = _agents[id]
		a.streaming = ""
		_lines_by[id] = _lines_by.get(id, 0) + 1
		if a.node:
			a.node.say(content, _bubble_seconds(content))
	_talk_pending.erase(id)
	if to_player:
		_awaiting.erase(id)
		_talk_said(id, _agents[id].name if _agents.has(id) else id, content)
	elif id == _talk_id:
		_show_talk()
	var target := " → " + ", ".join(to) if not to.is_empty() else ""
	_say("%s %s%s: \"%s\"" % [_stamp(), _who(id), target, content])


## A model's line as it streams in: shown in the bubble (and, when it answers the player, in the
## talk box) until the whole line arrives.
func _on_speech_delta(id: String, delta: String, _seq: int) -> void:
	_count("agent_speech_delta")
	if _headless or not _agents.has(id):
		return
	var a: Dictionary = _agents[id]
	a.streaming += delta
	if a.node:
		a.node.say(a.streaming, _bubble_seconds(a.streaming))
	if _awaiting.has(id):
		_talk_pending[id] = a.streaming
		if id == _talk_id:
			_show_talk()


func _on_removed(id: String, reason: String) -> void:
	_count("agent_removed")
	_say("%s %s leaves (%s)" % [_stamp(), _who(id), reason])


func _on_task_assigned(id: String, task_id: int, task_name: String) -> void:
	_count("task_assigned")
	_open_tasks[task_id] = {"agent_id": id, "name": task_name, "assigned_at": _time}
	_say("%s task #%d for %s: %s" % [_stamp(), task_id, _who(id), task_name])


func _on_task_completed(id: String, task_id: int, task_name: String) -> void:
	_count("task_completed")
	_open_tasks.erase(task_id)
	_say("%s task #%d done by %s: %s" % [_stamp(), task_id, _who(id), task_name])


func _on_collaboration(id: String, helper_id: String, task_name: String) -> void:
	_count("collaboration_requested")
	_say("%s %s asks %s for help: %s" % [_stamp(), _who(id), _who(helper_id), task_name])


func _on_error(id: String, code: String, message: String) -> void:
	_count("agent_error")
	_say("%s (%s: %s — %s)" % [_stamp(), _who(id), code, message])


## How long a line stays in its bubble.
func _bubble_seconds(text: String) -> float:
	return clampf(2.5 + text.length() * 0.045, 3.5, 7.5)


## World (0..100) → screen.
func _to_screen(p: Vector2) -> Vector2:
	var b := runtime.world_bounds
	var area := MAP.grow(-MAP_PAD)
	return area.position + (p - b.position) / b.size * area.size


# -- The talk box -------------------------------------------------------------------------------


func _unhandled_input(event: InputEvent) -> void:
	var click := event as InputEventMouseButton
	if click == null or not click.pressed or click.button_index != MOUSE_BUTTON_LEFT:
		return
	var at: Vector2 = (make_input_local(click) as InputEventMouseButton).position
	var id := _villager_at(at)
	if id != "":
		get_viewport().set_input_as_handled()
		_open_talk(id)


func _input(event: InputEvent) -> void:
	# Esc closes the talk box first (the header's Esc, back to the menu, comes after).
	if _talk_id != "" and event.is_action_pressed("ui_cancel") and not event.is_echo():
		get_viewport().set_input_as_handled()
		_close_talk()


## The villager under [param point] (the nearest one when several are), or `""`.
func _villager_at(point: Vector2) -> String:
	var best := ""
	var best_distance := INF
	for id in _agents:
		var node: Villager = _agents[id].node
		if node and node.picks(point):
			var d := node.position.distance_to(point)
			if d < best_distance:
				best = id
				best_distance = d
	return best


func _open_talk(id: String) -> void:
	if _talk_id != "" and _agents.has(_talk_id):
		_agents[_talk_id].node.selected = false
	_talk_id = id
	var a: Dictionary = _agents[id]
	a.node.selected = true
	_talk_title.text = "Talking to %s, the %s" % [a.name, a.role]
	_talk_input.placeholder_text = "Say something to %s…" % a.name
	_talk_box.visible = true
	_talk_hint.visible = false
	_show_talk()
	_talk_input.grab_focus.call_deferred()


func _close_talk() -> void:
	if _talk_id != "" and _agents.has(_talk_id):
		_agents[_talk_id].node.selected = false
	_talk_id = ""
	_talk_box.visible = false
	_talk_hint.visible = true
	_talk_input.release_focus()


## The player says [param text] to the villager of the open talk box.
func _talk_submitted(text: String) -> void:
	text = text.strip_edges()
	if text == "" or _talk_id == "":
		return
	_talk_input.clear()
	_say("%s Player → %s: \"%s\"" % [_stamp(), _agents[_talk_id].name, text])
	if not runtime.send_message(_talk_id, text):
		_talk_said(_talk_id, "", "(%s cannot hear you: %s)" % [_agents[_talk_id].name, runtime.get_last_error()])
		return
	_awaiting[_talk_id] = true
	_talk_said(_talk_id, "You", text)


func _talk_said(id: String, who: String, text: String) -> void:
	if _headless:
		return
	if not _talks.has(id):
		_talks[id] = []
	_talks[id].append([who, text])
	if id == _talk_id:
		_show_talk()


func _show_talk() -> void:
	if _talk_id == "":
		return
	var a: Dictionary = _agents[_talk_id]
	var color: Color = a.color
	_talk_log.clear()
	var lines: Array = _talks.get(_talk_id, [])
	if lines.is_empty() and not _talk_pending.has(_talk_id):
		_talk_log.push_color(DemoUi.DIM)
		_talk_log.add_text("Say hello: %s answers in the bubble and here." % a.name)
		_talk_log.pop()
	for i in lines.size():
		var who: String = lines[i][0]
		if i > 0:
			_talk_log.newline()
		if who != "":
			_talk_log.push_color(DemoUi.GREEN if who == "You" else color.lightened(0.25))
			_talk_log.add_text(who + ": ")
			_talk_log.pop()
		_talk_log.add_text(lines[i][1])
	if _talk_pending.has(_talk_id):
		if not lines.is_empty():
			_talk_log.newline()
		_talk_log.push_color(color.lightened(0.25))
		_talk_log.add_text(a.name + ": ")
		_talk_log.pop()
		_talk_log.add_text(_talk_pending[_talk_id] + " …")
	_show_talk_state()


func _show_talk_state() -> void:
	if _talk_id == "":
		return
	var a: Dictionary = _agents[_talk_id]
	var doing := {"idle": "is listening to you", "listening": "is listening…",
		"thinking": "is thinking…", "speaking": "is speaking"}
	var state: String = doing.get(a.state, a.state)
	if a.state == "idle" and _awaiting.has(_talk_id):
		state = "will answer in a moment"
	_talk_state.text = "%s %s" % [a.name, state]


# -- Drawing ------------------------------------------------------------------------------------


func _build_ui() -> void:
	var layer := CanvasLayer.new()
	layer.name = "UI"
	add_child(layer)
	var root := Control.new()
	root.name = "Root"
	root.theme = DemoUi.theme()
	root.mouse_filter = Control.MOUSE_FILTER_IGNORE
	root.set_anchors_and_offsets_preset(Control.PRESET_FULL_RECT)
	layer.add_child(root)
	_header = DemoHeader.new()
	_header.title = "Agent town"
	_header.subtitle = "Five villagers of an AgentRuntime live their day. Click one to talk to it."
	root.add_child(_header)

	var side := PanelContainer.new()
	side.position = SIDE.position
	side.size = SIDE.size
	root.add_child(side)
	var rows := VBoxContainer.new()
	rows.add_theme_constant_override("separation", 8)
	side.add_child(rows)
	rows.add_child(DemoUi.label("Town log", 18))
	_log = RichTextLabel.new()
	_log.scroll_following = true
	_log.size_flags_vertical = Control.SIZE_EXPAND_FILL
	_log.add_theme_font_size_override("normal_font_size", 13)
	_log.add_theme_color_override("default_color", Color(0.78, 0.8, 0.86))
	rows.add_child(_log)

	_talk_hint = DemoUi.label("Click a villager on the map to talk to them.", 15, DemoUi.ACCENT)
	_talk_hint.horizontal_alignment = HORIZONTAL_ALIGNMENT_CENTER
	_talk_hint.custom_minimum_size.y = 40
	_talk_hint.vertical_alignment = VERTICAL_ALIGNMENT_CENTER
	rows.add_child(_talk_hint)

	_talk_box = PanelContainer.new()
	_talk_box.add_theme_stylebox_override("panel", DemoUi.box(Color(0.075, 0.086, 0.115),
		DemoUi.ACCENT.darkened(0.35), 10, 1, 12, 10))
	_talk_box.visible = false
	rows.add_child(_talk_box)
	var talk := VBoxContainer.new()
	talk.add_theme_constant_override("separation", 6)
	_talk_box.add_child(talk)
	var top := HBoxContainer.new()
	talk.add_child(top)
	_talk_title = DemoUi.label("", 17, DemoUi.ACCENT)
	_talk_title.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	top.add_child(_talk_title)
	var close := Button.new()
	close.text = "Close"
	close.focus_mode = Control.FOCUS_NONE
	close.add_theme_font_size_override("font_size", 13)
	close.pressed.connect(_close_talk)
	top.add_child(close)
	_talk_state = DemoUi.label("", 13, DemoUi.DIM)
	talk.add_child(_talk_state)
	_talk_log = RichTextLabel.new()
	_talk_log.custom_minimum_size.y = 170
	_talk_log.scroll_following = true
	_talk_log.add_theme_font_size_override("normal_font_size", 14)
	talk.add_child(_talk_log)
	var input_row := HBoxContainer.new()
	input_row.add_theme_constant_override("separation", 6)
	talk.add_child(input_row)
	_talk_input = LineEdit.new()
	_talk_input.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_talk_input.text_submitted.connect(_talk_submitted)
	input_row.add_child(_talk_input)
	var send := Button.new()
	send.text = "Say"
	send.pressed.connect(func() -> void: _talk_submitted(_talk_input.text))
	input_row.add_child(send)
	queue_redraw()


func _exit_tree() -> void:
	if not _headless:
		Input.set_default_cursor_shape(Input.CURSOR_ARROW)


## The town under the villagers: grass, paths, the festival square, houses, fields, trees.
func _draw() -> void:
	if _headless:
		return
	draw_rect(Rect2(Vector2.ZERO, get_viewport_rect().size), DemoUi.BG)
	var ground := DemoUi.box(Color(0.27, 0.42, 0.26), Color(0.2, 0.3, 0.2), 12, 2)
	draw_style_box(ground, MAP)
	var font := ThemeDB.fallback_font
	var rng := RandomNumberGenerator.new()
	rng.seed = 4
	var inner := MAP.grow(-10)
	# Grass tufts and flowers.
	for i in 420:
		var p := Vector2(rng.randf_range(inner.position.x, inner.end.x), rng.randf_range(inner.position.y, inner.end.y))
		var shade := Color(0.33, 0.52, 0.3) if i % 2 == 0 else Color(0.23, 0.36, 0.22)
		draw_line(p, p + Vector2(-2, -5), shade, 1.5, true)
		draw_line(p, p + Vector2(2, -6), shade, 1.5, true)
	for i in 36:
		var p := Vector2(rng.randf_range(inner.position.x, inner.end.x), rng.randf_range(inner.position.y, inner.end.y))
		draw_circle(p, 2.2, [Color(0.98, 0.9, 0.5), Color(0.95, 0.6, 0.7), Color(0.85, 0.85, 1.0)][i % 3])

	var square := _to_screen(Vector2(45, 55))
	var bakery := _to_screen(Vector2(17, 17))
	var forge := _to_screen(Vector2(84, 15))
	var hall := _to_screen(Vector2(50, 24))
	var post := _to_screen(Vector2(74, 86))
	var farm := _to_screen(Vector2(33, 96))
	# Paths from the square to every door.
	var path := Color(0.56, 0.48, 0.36)
	for door in [bakery, forge, hall, post, farm]:
		draw_line(square, door + Vector2(0, 8), path, 20.0, true)
		draw_circle(door + Vector2(0, 8), 10.0, path)
	# The fields.
	var fields := Rect2(_to_screen(Vector2(1, 80)), Vector2(176, 96))
	for row in 8:
		var y := fields.position.y + 6 + row * 12
		var crop := Color(0.86, 0.72, 0.36) if row < 4 else Color(0.5, 0.66, 0.3)
		draw_line(Vector2(fields.position.x, y), Vector2(fields.end.x, y), crop, 7.0, true)
	# The festival square, its well and bunting.
	_ellipse(square, Vector2(150, 92), Color(0.62, 0.57, 0.48))
	_ellipse(square, Vector2(138, 82), Color(0.68, 0.63, 0.53))
	_ellipse(square + Vector2(0, 4), Vector2(26, 14), Color(0.3, 0.3, 0.33))
	_ellipse(square, Vector2(24, 13), Color(0.45, 0.46, 0.5))
	_ellipse(square, Vector2(17, 8), Color(0.3, 0.55, 0.85))
	var flags := [DemoUi.RED, DemoUi.ACCENT, DemoUi.BLUE, DemoUi.GREEN, Color(0.85, 0.5, 0.75)]
	for side in [-1.0, 1.0]:
		var a := square + Vector2(side * 128, -54)
		var b := square + Vector2(side * 22, -30)
		draw_line(a + Vector2(0, 26), a, Color(0.4, 0.3, 0.22), 3.0)
		for i in 6:
			var t := (i + 0.5) / 6.0
			var p := a.lerp(b, t) + Vector2(0, sin(t * PI) * 10.0)
			draw_colored_polygon(PackedVector2Array([p - Vector2(5, 0), p + Vector2(5, 0), p + Vector2(0, 10)]), flags[i % flags.size()])
		draw_polyline(PackedVector2Array([a, a.lerp(b, 0.5) + Vector2(0, 10), b]), Color(0.9, 0.9, 0.9, 0.6), 1.0, true)
	_sign(font, square + Vector2(0, 44), "Festival square")
	# Houses: door (bottom centre), size, walls, roof, name.
	var busy: Array[Rect2] = [fields.grow(14), Rect2(square - Vector2(170, 110), Vector2(340, 220))]
	busy.append(_house(font, bakery, Vector2(112, 64), Color(0.88, 0.8, 0.64), Color(0.76, 0.34, 0.27), "Bakery"))
	busy.append(_house(font, forge, Vector2(104, 60), Color(0.56, 0.54, 0.52), Color(0.34, 0.36, 0.42), "Forge"))
	draw_rect(Rect2(forge + Vector2(28, -92), Vector2(14, 26)), Color(0.3, 0.3, 0.32))
	for i in 3:
		draw_circle(forge + Vector2(36 + i * 7, -100 - i * 10), 6.0 + i * 2, Color(0.75, 0.75, 0.78, 0.45 - i * 0.12))
	busy.append(_house(font, hall, Vector2(150, 76), Color(0.86, 0.84, 0.78), Color(0.48, 0.34, 0.6), "Town hall"))
	for i in 4:
		draw_rect(Rect2(hall + Vector2(-56 + i * 34, -60), Vector2(8, 42)), Color(0.96, 0.95, 0.9))
	busy.append(_house(font, post, Vector2(70, 86), Color(0.6, 0.6, 0.62), Color(0.28, 0.42, 0.72), "Guard post"))
	busy.append(_house(font, farm, Vector2(92, 58), Color(0.72, 0.3, 0.26), Color(0.45, 0.25, 0.2), "Farm"))
	# Trees, where nothing else is.
	var trees := 0
	var tries := 0
	while trees < 22 and tries < 600:
		tries += 1
		var p := Vector2(rng.randf_range(MAP.position.x + 30, MAP.end.x - 30), rng.randf_range(MAP.position.y + 40, MAP.end.y - 24))
		var free := true
		for r in busy:
			if r.grow(26).has_point(p):
				free = false
				break
		for door in [bakery, forge, hall, post, farm]:
			if Geometry2D.get_closest_point_to_segment(p, square, door).distance_to(p) < 34.0:
				free = false
		if not free:
			continue
		busy.append(Rect2(p - Vector2(34, 34), Vector2(68, 68)))
		_tree(p, 15.0 + rng.randf() * 7.0)
		trees += 1


## A house with its door at [param door]; returns the rectangle it covers (sign included).
func _house(font: Font, door: Vector2, size: Vector2, walls: Color, roof: Color, title: String) -> Rect2:
	var base := Rect2(door - Vector2(size.x * 0.5, size.y), size)
	draw_rect(Rect2(base.position + Vector2(4, 6), base.size), Color(0, 0, 0, 0.22))
	draw_rect(base, walls)
	draw_rect(base, walls.darkened(0.35), false, 2.0)
	var top := base.position.y
	draw_colored_polygon(PackedVector2Array([Vector2(base.position.x - 10, top + 2),
		Vector2(door.x, top - size.y * 0.55), Vector2(base.end.x + 10, top + 2)]), roof)
	draw_polyline(PackedVector2Array([Vector2(base.position.x - 10, top + 2),
		Vector2(door.x, top - size.y * 0.55), Vector2(base.end.x + 10, top + 2)]), roof.darkened(0.3), 2.0, true)
	draw_rect(Rect2(door + Vector2(-9, -24), Vector2(18, 24)), walls.darkened(0.55))
	if size.x > 80:
		for x in [-size.x * 0.32, size.x * 0.32 - 16]:
			draw_rect(Rect2(door + Vector2(x, -size.y * 0.62), Vector2(16, 14)), Color(0.98, 0.86, 0.5))
	_sign(font, door + Vector2(0, -size.y - size.y * 0.55 - 10), title)
	var top_y := door.y - size.y * 1.55 - 22
	return Rect2(door.x - size.x * 0.5 - 12, top_y, size.x + 24, door.y + 12 - top_y)


func _sign(font: Font, center: Vector2, title: String) -> void:
	var width := font.get_string_size(title, HORIZONTAL_ALIGNMENT_LEFT, -1, 13).x
	var plate := Rect2(center - Vector2(width * 0.5 + 8, 11), Vector2(width + 16, 20))
	var style := DemoUi.box(Color(0.1, 0.11, 0.14, 0.8), Color(0, 0, 0, 0), 6, 0)
	draw_style_box(style, plate)
	draw_string(font, Vector2(plate.position.x + 8, center.y + 4), title, HORIZONTAL_ALIGNMENT_LEFT,
		-1, 13, Color(0.95, 0.92, 0.84))


func _tree(p: Vector2, r: float) -> void:
	_ellipse(p + Vector2(4, r * 0.9), Vector2(r * 0.9, r * 0.35), Color(0, 0, 0, 0.22))
	draw_rect(Rect2(p + Vector2(-3, 0), Vector2(6, r * 0.9)), Color(0.4, 0.28, 0.18))
	draw_circle(p, r, Color(0.16, 0.34, 0.18))
	draw_circle(p + Vector2(-r * 0.3, -r * 0.25), r * 0.7, Color(0.22, 0.44, 0.24))
	draw_circle(p + Vector2(r * 0.25, -r * 0.4), r * 0.45, Color(0.3, 0.52, 0.3))


func _ellipse(center: Vector2, radii: Vector2, fill: Color) -> void:
	var points := PackedVector2Array()
	for i in 40:
		var a := TAU * i / 40.0
		points.append(center + Vector2(cos(a) * radii.x, sin(a) * radii.y))
	draw_colored_polygon(points, fill)


# -- The screenshot run -------------------------------------------------------------------------


## Waits for a lively town, clicks [param baker] like a player would, talks to her, waits for
## her answer, saves the window at [param path] and quits.
func _screenshot_run(path: String, baker: String) -> void:
	if await _until(_lively, "the villagers spawned, moved and talked"):
		var who := String(_agents[baker].name)
		await _click(_agents[baker].node)
		if await _until(func() -> bool: return _talk_id == baker, "the click on %s opened the talk box" % who):
			_talk_input.text = SHOT_LINE
			_talk_input.text_submitted.emit(SHOT_LINE)
			if await _until(_answered.bind(baker), "%s answered the player in the talk box" % who):
				await get_tree().create_timer(0.4).timeout
	var bubbles := 0
	for id in _agents:
		if _agents[id].node.bubble_text() != "":
			bubbles += 1
	if bubbles == 0:
		_fail("no speech bubble is showing")
	print("town screenshot: %d spawned, %d moves, %d lines, %d bubbles showing, talking to %s" % [
		_counts.get("agent_spawned", 0), _counts.get("agent_moved", 0), _counts.get("agent_spoke", 0),
		bubbles, _agents[_talk_id].name if _talk_id != "" else "nobody"])
	_save_and_quit(path)


## Saves the window at [param path], says whether the screenshot run went well, and quits.
func _save_and_quit(path: String) -> void:
	var saved: bool = await DemoUi.save_screenshot(self, path)
	if not saved:
		_fail("the screenshot was not saved")
	if _problems.is_empty():
		print("TOWN SCREENSHOT OK")
	else:
		print("TOWN SCREENSHOT FAILED:")
		for p in _problems:
			print("  " + p)
	get_tree().quit(0 if _problems.is_empty() else 1)


## Everybody spawned, somebody walked, a few lines were said.
func _lively() -> bool:
	return _counts.get("agent_spawned", 0) == _agents.size() and _counts.get("agent_moved", 0) > 0 \
		and _counts.get("agent_spoke", 0) >= 3 and _time >= 5.0


## The last line of the talk with [param id] is its answer to SHOT_LINE.
func _answered(id: String) -> bool:
	var lines: Array = _talks.get(id, [])
	return lines.size() >= 2 and lines[-1][0] != "You" and lines[-2][1] == SHOT_LINE


## A left click on [param node], as the window gets it from the mouse: through Input, the
## viewport and _unhandled_input.
func _click(node: Node2D) -> void:
	var at := get_viewport().get_screen_transform() * node.get_global_transform_with_canvas().origin
	for pressed in [true, false]:
		var event := InputEventMouseButton.new()
		event.button_index = MOUSE_BUTTON_LEFT
		event.pressed = pressed
		event.position = at
		event.global_position = at
		if pressed:
			event.button_mask = MOUSE_BUTTON_MASK_LEFT
		Input.parse_input_event(event)
		await get_tree().process_frame


func _until(done: Callable, what: String) -> bool:
	var deadline := Time.get_ticks_msec() + int(SHOT_STEP_SECONDS * 1000)
	while not done.call():
		if Time.get_ticks_msec() > deadline:
			_fail("%s did not happen within %d s" % [what, SHOT_STEP_SECONDS])
			return false
		await get_tree().process_frame
	return true
