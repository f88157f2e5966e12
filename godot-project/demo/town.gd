## The agent town: five villagers (a baker, a smith, a guard, a farmer and the mayor) run by an
## AgentRuntime. They wander, talk, get tasks, ask each other for help, and the player greets the
## baker. Every event is printed as a timeline with the game time.
##
## Headless (`cargo xtask demo`) it runs `duration_seconds` of game time, prints a summary, checks
## that the town did what it should (moves, lines, an answer to the player, a collaboration, a
## completed task) and quits with 0, or 1 when something is missing. With a display it draws the
## villagers as circles with name labels and speech bubbles, and keeps running.
##
## The villagers (names, roles, prompts, positions, tasks) come from `demo/villagers.json`, which
## the Rust example town and the prompt-token bench read too.
##
## By default the villagers think with the offline `scripted` brain. The AGENTS_DEMO_* environment
## variables (docs/brains.md, "Running the demo town on a real model") give the runtime a default
## brain instead, so every villager thinks with that model: AGENTS_DEMO_PROVIDER (openai,
## anthropic, cli), AGENTS_DEMO_MODEL, AGENTS_DEMO_BASE_URL, AGENTS_DEMO_API_KEY_ENV,
## AGENTS_DEMO_COMMAND / AGENTS_DEMO_CLI_BACKEND (cli), AGENTS_DEMO_SECONDS,
## AGENTS_DEMO_TOKEN_BUDGET. The mayor's scripted opening (she asks two villagers for help) is
## left out then, and a model is not required to walk or to ask for help: those two checks become
## notes in the output. The others (lines said, the player answered, a task completed) still hold.
extends Node2D

## Seconds of game time the headless run lasts.
@export var duration_seconds := 30.0
## Seconds a villager works on a task before the town marks it done (if the villager did not
## finish it first).
@export var work_seconds := 20.0
## The town's database; deleted at start so every run begins with `agent_001`.
@export var database_path := "user://town.db"

## The villagers and the town's layout, shared with the Rust example and the prompt bench.
const TOWN_FILE := "res://demo/villagers.json"

## The town from TOWN_FILE: world_size, hearing_radius, player_message and villagers (each with
## pos as a Vector2 and color as a Color).
var _town := {}
## The brain every villager thinks with, from the AGENTS_DEMO_* variables; null: scripted.
var _model_brain: AgentBrain = null
## "provider model" of _model_brain, for the output.
var _model_label := ""

@onready var runtime: AgentRuntime = $AgentRuntime

var _time := 0.0
var _finished := false
var _headless := false
## agent id → {name, role, color, pos (shown), target, line, line_until, state}
var _agents := {}
## task id → {agent_id, name, assigned_at}
var _open_tasks := {}
var _counts := {}
var _answered_player := false
var _problems: Array[String] = []
## Lines each villager said (agent id → count), for the model summary.
var _lines_by := {}
var _log: RichTextLabel


func _ready() -> void:
	_headless = DisplayServer.get_name() == "headless"
	if _headless:
		Engine.max_fps = 60
	else:
		_log = RichTextLabel.new()
		_log.scroll_following = true
		_log.position = Vector2(660, 10)
		_log.size = Vector2(480, 620)
		add_child(_log)
	for suffix in ["", "-wal", "-shm"]:
		var file := ProjectSettings.globalize_path(database_path + suffix)
		if FileAccess.file_exists(file):
			DirAccess.remove_absolute(file)

	_town = _load_town()
	if _town.is_empty():
		_finish()
		return
	_model_brain = _brain_from_environment()
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
		_say("Brain: %s (from AGENTS_DEMO_PROVIDER), for every villager" % _model_label)
	else:
		_say("Brain: scripted (offline; set AGENTS_DEMO_PROVIDER to think with a model)")

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
			"target": v.pos, "line": "", "line_until": 0.0, "state": "idle", "streaming": ""}
	if ids.size() != villagers.size():
		_finish()
		return

	for v in villagers:
		if v.get("task", "") != "":
			runtime.assign_task(ids[v.role], v.task)
	var greeting: Dictionary = _town.player_message
	var greeted: String = ids[greeting.to]
	get_tree().create_timer(3.0).timeout.connect(func() -> void:
		_say("%s Player → %s: \"%s\"" % [_stamp(), _agents[greeted].name, greeting.text])
		runtime.send_message(greeted, greeting.text))


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


## The AgentBrain the AGENTS_DEMO_* variables describe, or null for the scripted brain. Also
## applies AGENTS_DEMO_SECONDS and AGENTS_DEMO_TOKEN_BUDGET; a bad value is a problem.
func _brain_from_environment() -> AgentBrain:
	var seconds := OS.get_environment("AGENTS_DEMO_SECONDS").strip_edges()
	if seconds != "":
		if not seconds.is_valid_float() or float(seconds) <= 0:
			_fail("AGENTS_DEMO_SECONDS must be a number of seconds, got %s" % seconds)
		else:
			duration_seconds = float(seconds)
	var provider := OS.get_environment("AGENTS_DEMO_PROVIDER").strip_edges()
	if provider == "" or provider == "scripted":
		return null
	var brain := AgentBrain.new()
	brain.provider = provider
	brain.model = OS.get_environment("AGENTS_DEMO_MODEL").strip_edges()
	brain.base_url = OS.get_environment("AGENTS_DEMO_BASE_URL").strip_edges()
	brain.api_key_env = OS.get_environment("AGENTS_DEMO_API_KEY_ENV").strip_edges()
	var command := OS.get_environment("AGENTS_DEMO_COMMAND").strip_edges()
	if command != "":
		brain.command = command.split(" ", false)
	brain.cli_backend = OS.get_environment("AGENTS_DEMO_CLI_BACKEND").strip_edges()
	var budget := OS.get_environment("AGENTS_DEMO_TOKEN_BUDGET").strip_edges()
	if budget != "":
		if not budget.is_valid_int() or int(budget) < 0:
			_fail("AGENTS_DEMO_TOKEN_BUDGET must be a whole number of tokens, got %s" % budget)
		else:
			runtime.runtime_token_budget = int(budget)
	var invalid := brain.validate()
	if invalid != "":
		_fail("the AGENTS_DEMO_* brain: %s" % invalid)
	_model_label = provider
	if brain.model != "":
		_model_label += " " + brain.model
	if brain.base_url != "":
		_model_label += " at " + brain.base_url
	return brain


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
	for id in _agents:
		var a: Dictionary = _agents[id]
		a.pos = a.pos.move_toward(a.target, delta * 25.0)
	queue_redraw()
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
	for r in recipients:
		to.append(_agents[r].name if _agents.has(r) else ("Player" if r == runtime.player_id else r))
		if r == runtime.player_id:
			_answered_player = true
	if _agents.has(id):
		_agents[id].line = content
		_agents[id].line_until = _time + 3.0
		_agents[id].streaming = ""
		_lines_by[id] = _lines_by.get(id, 0) + 1
	var target := " → " + ", ".join(to) if not to.is_empty() else ""
	_say("%s %s%s: \"%s\"" % [_stamp(), _who(id), target, content])


## A model's line as it streams in: shown in the bubble until the whole line arrives.
func _on_speech_delta(id: String, delta: String, _seq: int) -> void:
	_count("agent_speech_delta")
	if _headless or not _agents.has(id):
		return
	var a: Dictionary = _agents[id]
	a.streaming += delta
	a.line = a.streaming
	a.line_until = _time + 3.0


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


## World (0..100) → screen.
func _to_screen(p: Vector2) -> Vector2:
	var b := runtime.world_bounds
	var area := Vector2(620, 620)
	return Vector2(10, 10) + (p - b.position) / b.size * area


func _draw() -> void:
	if _headless:
		return
	draw_rect(Rect2(10, 10, 620, 620), Color(0.16, 0.2, 0.16))
	var font := ThemeDB.fallback_font
	for id in _agents:
		var a: Dictionary = _agents[id]
		var at := _to_screen(a.pos)
		var ring := Color.WHITE if a.state == "idle" else Color.YELLOW
		draw_circle(at, 14.0, a.color)
		draw_arc(at, 15.0, 0.0, TAU, 24, ring, 2.0)
		var label := "%s (%s)" % [a.name, a.state]
		draw_string(font, at + Vector2(-40, 30), label, HORIZONTAL_ALIGNMENT_CENTER, 80, 12)
		if a.line != "" and _time < a.line_until:
			var text: String = a.line if a.line.length() <= 60 else a.line.substr(0, 57) + "…"
			var size := font.get_string_size(text, HORIZONTAL_ALIGNMENT_LEFT, -1, 12)
			var box := Rect2(at + Vector2(-size.x / 2 - 6, -44), size + Vector2(12, 10))
			draw_rect(box, Color(1, 1, 1, 0.92))
			draw_string(font, box.position + Vector2(6, size.y), text, HORIZONTAL_ALIGNMENT_LEFT, -1, 12, Color.BLACK)
