## The agent town: five villagers (a baker, a smith, a guard, a farmer and the mayor) on a map
## with houses, a well and trees. Each villager is a `CharacterBody2D` with a `NavigationAgent2D`
## and an `AgentNode` (demo/villager.tscn): the node spawns its agent as it enters the tree, walks
## the body around the houses when the agent decides to move, and reports where it stands, so
## who hears whom follows the villagers on the map. They wander, talk, get tasks, ask each other
## for help, and the player greets the baker (`await ask(…)`). Every event is printed as a
## timeline with the game time.
##
## Headless (`cargo xtask demo`) it runs `duration_seconds` of game time, prints a summary, checks
## that the town did what it should (villagers walked and nobody stands inside a house, lines
## were said, the player got an answer, a collaboration, a completed task) and how the villagers
## talked — measured with `AgentRuntime.measure_lines`, per villager: no line quotes a line that
## itself quotes another, at most 10 % of its lines repeat its own earlier ones, at most 5 % echo
## another villager's, and every question the player asked it is answered by naming what was
## asked; the baker answers "Any rye left?" through her read-only GDScript tool `check_stock` —
## and quits with 0, or 1 when something is missing. With a display it draws the town with the villagers walking
## about, their names, a "…" while they think and speech bubbles that never cover each other, and
## the timeline in the town log; click a villager to talk to it: a talk box opens, you type a
## line, and the answer (`await villager.agent.ask(line)`) appears in its bubble and in the box
## (streamed as it is written, for a model). The Menu button or Esc go back to the showcase menu
## (demo/menu.tscn); Esc first closes the talk box.
##
## `--screenshot PATH` (user argument, with a display): the town runs until the villagers have
## spawned, walked and talked, clicks the baker (through the input path a real click takes), says
## a line to her in the talk box, waits for her answer, saves the window as a PNG and quits (0, or
## 1 when a step did not happen):
##   xvfb-run -a -s "-screen 0 1280x720x24" godot --rendering-driver opengl3 \
##       --path godot-project res://demo/town.tscn -- --screenshot /tmp/town.png
##
## The villagers (names, roles, prompts, positions, tasks) come from `demo/villagers.json`, which
## the Rust example town and the prompt-token bench read too; its world units are placed on the
## map by demo/town_map.gd, and the agents live in the map's pixels.
##
## The baker has a read-only GDScript tool, `check_stock` (villagers.json's `shop`: its name,
## description, parameters and the stock it answers from), registered on her AgentNode: asked
## whether there is rye left, she looks it up within her decision and answers from the result.
##
## By default the villagers think with the offline `scripted` brain. The demo brain
## (demo/demo_brain.gd: the AGENTS_DEMO_* environment variables of docs/brains.md, "Running the
## demo town on a real model", or the AgentBrain in demo/brain.tres) gives the runtime a default
## brain instead, so every villager thinks with that model: AGENTS_DEMO_PROVIDER (openai,
## anthropic, cli, local), AGENTS_DEMO_MODEL, AGENTS_DEMO_BASE_URL, AGENTS_DEMO_API_KEY_ENV,
## AGENTS_DEMO_COMMAND / AGENTS_DEMO_CLI_BACKEND (cli); AGENTS_DEMO_SECONDS and
## AGENTS_DEMO_TOKEN_BUDGET apply to the town. The mayor's scripted opening (she asks two
## villagers for help) is left out then, and a model is not required to walk or to ask for help:
## those two checks become notes in the output. The others (lines said, the player answered, a
## task completed) still hold.
extends Node2D

const DemoUi := preload("res://demo/demo_ui.gd")
const DemoBrain := preload("res://demo/demo_brain.gd")
const DemoHeader := preload("res://demo/demo_header.gd")
const TownMap := preload("res://demo/town_map.gd")
const Villager := preload("res://demo/villager.gd")
const VILLAGER_SCENE := preload("res://demo/villager.tscn")

## Seconds of game time the headless run lasts (long enough for the player's last line of
## villagers.json's player_later: a question about what the baker was told a minute before).
@export var duration_seconds := 80.0
## Seconds a villager works on a task before the town marks it done (if the villager did not
## finish it first).
@export var work_seconds := 20.0
## The town's database; deleted at start so every run begins with `agent_001`.
@export var database_path := "user://town.db"

## Most of a villager's lines that may repeat its own earlier ones (case, punctuation aside).
const MAX_REPEATED_SHARE := 0.10
## Most of a villager's lines that may echo another villager's (AgentRuntime.measure_lines).
const MAX_ECHO_SHARE := 0.05

## The villagers and the town's layout, shared with the Rust example and the prompt bench.
const TOWN_FILE := "res://demo/villagers.json"

## The column beside the map: the town log and the talk box.
const SIDE := Rect2(848, 76, 416, 628)
## Longest wait for each step of the `--screenshot` run, in seconds.
const SHOT_STEP_SECONDS := 40.0
## What the screenshot run says to the baker.
const SHOT_LINE := "Hello Mira! Will there be bread for the festival?"
## Seconds after the start at which the player greets a villager (villagers.json's
## player_message).
const GREETING_AT := 3.0

## The town from TOWN_FILE: world_size, hearing_radius, player_message and villagers (each with
## pos as a Vector2 in world units and color as a Color).
var _town := {}
## The brain every villager thinks with (demo/demo_brain.gd); null: scripted.
var _model_brain: AgentBrain = null
## "provider model" of _model_brain, for the output.
var _model_label := ""
## Where _model_brain was configured (`AGENTS_DEMO_PROVIDER` or a file).
var _model_source := ""

@onready var runtime: AgentRuntime = $AgentRuntime
@onready var map: TownMap = $Map
## The villagers' parent (y-sorted: the one in front is drawn over the one behind).
@onready var villagers: Node2D = $Villagers

var _time := 0.0
var _finished := false
var _headless := false
## role → Villager.
var _by_role := {}
## agent id → Villager, as each spawns (the runtime's task and collaboration signals name agents
## by id).
var _by_id := {}
## task id → {agent_id, name, assigned_at}
var _open_tasks := {}
var _counts := {}
var _answered_player := false
## Why a villager asked about what it was told did not remember it ("" while none failed).
var _forgot := ""
var _problems: Array[String] = []
## Lines each villager said (Villager → count), for the model summary.
var _lines_by := {}
## Everything said, in order, as AgentRuntime.measure_lines reads it: `{speaker, to, text}`.
var _said := []
## Why the baker's look-up question was not answered through her tool ("" while it was not
## asked, or was).
var _unlooked := ""
var _log: RichTextLabel

# The talk box (with a display).
var _header: DemoHeader
var _talk_box: PanelContainer
var _talk_hint: Label
var _talk_title: Label
var _talk_state: Label
var _talk_log: RichTextLabel
var _talk_input: LineEdit
## The villager the player talks to (null: the box is closed).
var _talk_with: Villager = null
## Villager → [[who, text], …]: what the player and the villager said to each other.
var _talks := {}
## Villager → the answer it is streaming to the player.
var _talk_pending := {}
## Villager → how many of the player's lines to it are still awaited.
var _waiting := {}
## The `--screenshot` run has started.
var _shooting := false


func _ready() -> void:
	_headless = DisplayServer.get_name() == "headless"
	map.drawn = not _headless
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
	var starts: Array[Vector2] = []
	for v in _town.villagers:
		starts.append(map.to_level(v.pos))
	map.build(Vector2(size[0], size[1]), starts)
	# The agents live in the map's pixels: a move the brain decides is a point on the ground.
	runtime.world_bounds = map.walkable_bounds()
	runtime.hearing_radius = _town.hearing_radius * map.pixels_per_unit()
	if _model_brain:
		runtime.default_brain_config = _model_brain
	runtime.database_path = database_path
	runtime.task_assigned.connect(_on_task_assigned)
	runtime.task_completed.connect(_on_task_completed)
	runtime.collaboration_requested.connect(_on_collaboration)
	if not runtime.start():
		_fail("the runtime did not start: %s" % runtime.get_last_error())
		_finish()
		return
	_say("Agent town: %d villagers, %.0f s of game time, database %s" % [
		_town.villagers.size(), duration_seconds, database_path])
	if _model_brain:
		_say("Brain: %s (from %s), for every villager" % [_model_label, _model_source])
	else:
		_say("Brain: scripted (offline; set AGENTS_DEMO_PROVIDER or demo/brain.tres to think with a model)")
	_populate()


## Adds the villagers (each spawns its agent as it enters the tree), the mayor last: her
## scripted opening names the agents she asks for help. Then the player's greeting and, with
## `--screenshot`, the screenshot run.
func _populate() -> void:
	var mayor: Dictionary = {}
	for v: Dictionary in _town.villagers:
		if v.role == "mayor" and not _model_brain:
			mayor = v
		else:
			_add_villager(v, [])
	if not mayor.is_empty():
		# The mayor's first decisions are scripted (a cut-scene): she asks the guard and the
		# farmer for help with the festival; after that her brain decides on its own.
		var guard: Villager = _by_role.guard
		var farmer: Villager = _by_role.farmer
		if not await _until(func() -> bool: return _finished or (guard.agent.is_spawned() and farmer.agent.is_spawned()),
				"the guard and the farmer spawned", 10.0):
			_finish()
			return
		if _finished:
			return
		_add_villager(mayor, [
			_reply([["collaborate", {"agent_id": guard.agent.get_agent_id(),
				"task_name": "guard the festival square",
				"message": "Tess, will you keep the square safe during the festival?"}]]),
			_reply([["move", _point(map.to_level(Vector2(35, 40)))], ["collaborate",
				{"agent_id": farmer.agent.get_agent_id(), "task_name": "deliver wheat to the bakery",
				"message": "Olek, Mira needs wheat for the festival bread."}]]),
		])
	var greeting: Dictionary = _town.player_message
	var greeted: Villager = _by_role[greeting.to]
	get_tree().create_timer(maxf(GREETING_AT - _time, 0.0)).timeout.connect(
		func() -> void: _player_says(greeted, greeting.text))
	# Later lines: the player tells the baker something, and a minute later asks about it.
	for line: Dictionary in _town.get("player_later", []):
		var to: Villager = _by_role[line.to]
		get_tree().create_timer(maxf(float(line.at) - _time, 0.0)).timeout.connect(
			func() -> void: _player_says(to, line.text, line.get("remembers", ""), line.get("tool", "")))
	var shot := DemoUi.screenshot_path()
	if shot != "" and not _headless:
		_shooting = true
		_screenshot_run(shot, greeted)


## One villager from [param v] (an entry of villagers.json), with [param script] as its
## scripted brain's first replies.
func _add_villager(v: Dictionary, script: Array[Dictionary]) -> void:
	var config := AgentConfig.new()
	config.name = v.name
	config.role = v.role
	config.prompt = v.prompt
	config.scripted_replies = script
	var villager: Villager = VILLAGER_SCENE.instantiate()
	villager.setup(config, v.color)
	if v.has("shop"):
		# Before the villager enters the tree: the tool is there from its agent's first decision.
		var shop: Dictionary = v.shop
		var node: AgentNode = villager.get_node("AgentNode")
		node.register_tool(shop.tool, shop.description, shop.parameters,
			func(args: Dictionary) -> Dictionary: return _look_up_stock(shop, args), true)
	villager.bounds = TownMap.MAP
	villager.position = map.to_level(v.pos)
	villagers.add_child(villager)
	_by_role[v.role] = villager
	var agent := villager.agent
	agent.spawned.connect(_on_spawned.bind(villager, v.get("task", "")))
	agent.state_changed.connect(_on_state_changed.bind(villager))
	agent.spoke.connect(_on_spoke.bind(villager))
	agent.speech_streamed.connect(_on_speech_streamed.bind(villager))
	agent.move_requested.connect(_on_move_requested.bind(villager))
	agent.move_finished.connect(_on_move_finished.bind(villager))
	agent.error_occurred.connect(_on_error.bind(villager))
	agent.removed.connect(_on_removed.bind(villager))


## Reads TOWN_FILE; on a problem, records it and returns {}.
func _load_town() -> Dictionary:
	var text := FileAccess.get_file_as_string(TOWN_FILE)
	var data: Variant = JSON.parse_string(text) if text != "" else null
	if not data is Dictionary or not data.get("villagers") is Array:
		_fail("%s is missing or not a town (%s)" % [TOWN_FILE, FileAccess.get_open_error()])
		return {}
	var list := []
	for v: Dictionary in data.villagers:
		var rgb: Array = v.color
		var villager := v.duplicate()
		villager.pos = Vector2(v.x, v.y)
		villager.color = Color(rgb[0], rgb[1], rgb[2])
		list.append(villager)
	data.villagers = list
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


## A reply of the tool-call contract: [param calls] are [tool, args] pairs.
func _reply(calls: Array, text := "", dialog := AgentConstants.DIALOG_COLLABORATION) -> Dictionary:
	var tool_calls := []
	for i in calls.size():
		tool_calls.append({"id": "call_%03d" % (i + 1), "tool": calls[i][0], "args": calls[i][1]})
	return {"assistant_text": text, "dialog_type": dialog, "tool_calls": tool_calls}


## A level point as a `move` call's arguments.
func _point(p: Vector2) -> Dictionary:
	return {"x": roundi(p.x), "y": roundi(p.y)}


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
	if not _headless:
		var mouse := get_global_mouse_position()
		var hovering := false
		for villager: Villager in villagers.get_children():
			villager.hovered = not hovering and villager.picks(mouse)
			hovering = hovering or villager.hovered
		Input.set_default_cursor_shape(Input.CURSOR_POINTING_HAND if hovering else Input.CURSOR_ARROW)
		# Bubbles that do not cover each other; the one the player talks to first.
		var taken: Array[Rect2] = []
		if _talk_with:
			_talk_with.place_bubble(taken)
		for villager: Villager in villagers.get_children():
			if villager != _talk_with:
				villager.place_bubble(taken)
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
		_say("walks: %d asked for, %d arrived, %d blocked" % [_counts.get("walks", 0),
			_counts.get("arrived", 0), _counts.get("blocked", 0)])
		_check_nobody_in_a_wall()
		runtime.stop()
	_say("events: %s" % [_counts])
	# A model decides for itself whether to walk or to ask for help (and the mayor's scripted
	# opening is left out): with a model those two are notes, not failures.
	var notes: Array[String] = []
	var checks := [["arrived", "nobody walked anywhere"], ["lines", "nobody said a line"],
		["task_completed", "no task was completed"], ["collaboration_requested", "nobody asked for help"]]
	for check in checks:
		if _counts.get(check[0], 0) > 0:
			continue
		var what := "%s in %.0f s" % [check[1], _time]
		if _model_brain and check[0] in ["arrived", "collaboration_requested"]:
			notes.append(what + " (not required of a model)")
		else:
			_fail(what)
	if not _answered_player:
		_fail("nobody answered the player")
	if _town.get("player_later", []).any(func(l: Dictionary) -> bool: return l.has("remembers")) \
			and _time >= _last_question_at() + 5.0 and _counts.get("remembered", 0) == 0:
		var what := _forgot if _forgot != "" else "the baker was not asked what she was told"
		if _model_brain:
			notes.append(what + " (not required of a model)")
		else:
			_fail(what)
	_check_how_they_talked(notes)
	if _model_brain:
		var speakers := []
		for villager in _lines_by:
			speakers.append("%s %d" % [villager.villager_name(), _lines_by[villager]])
		_say("model lines (%s): %d, by %s" % [_model_label, _counts.get("lines", 0),
			", ".join(speakers) if not speakers.is_empty() else "nobody"])
		for note in notes:
			_say("relaxed for a model: " + note)
	if _problems.is_empty() and _model_brain:
		_say("TOWN OK (model %s): the villagers talked with the model, answered the player and finished tasks" % _model_label)
	elif _problems.is_empty():
		_say("TOWN OK: the villagers walked around the houses, talked, answered the player and finished tasks together")
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


## How the villagers talked (AgentRuntime.measure_lines), per villager: no quote of a quote, at
## most 10 % repeated lines, at most 5 % echo, the player's questions answered; and the
## look-up question answered through its tool. For a model these are [param notes].
func _check_how_they_talked(notes: Array[String]) -> void:
	var problems: Array[String] = []
	for id: String in _by_id:
		var villager: Villager = _by_id[id]
		var who := villager.villager_name()
		var card: Dictionary = runtime.measure_lines(_said, id, who)
		if card.is_empty():
			problems.append("%s's lines could not be measured" % who)
			continue
		_say("%s: %d lines, repeated %.1f %%, echo %.1f %%, quotes of quotes %d, distinct-2 %.2f, questions answered %d/%d" % [
			who, card.lines, card.repeated_share * 100.0, card.echo_share * 100.0,
			card.quotes_of_quotes, card.distinct_2, card.answered, card.questions])
		if card.quotes_of_quotes > 0:
			problems.append("%s quoted a quote %d time(s); its echoes: %s" % [who, card.quotes_of_quotes, _some(card.echoed)])
		if card.repeated_share > MAX_REPEATED_SHARE:
			problems.append("%s repeated itself in %.1f %% of its lines" % [who, card.repeated_share * 100.0])
		if card.echo_share > MAX_ECHO_SHARE:
			problems.append("%s echoed others in %.1f %% of its lines: %s" % [who, card.echo_share * 100.0, _some(card.echoed)])
		if card.answered < card.questions:
			problems.append("%s left questions unanswered: %s" % [who, _some(card.unanswered)])
	for line: Dictionary in _town.get("player_later", []):
		if not line.has("tool") or _time < float(line.at) + 5.0:
			continue
		if _counts.get("looked_up", 0) == 0:
			problems.append(_unlooked if _unlooked != "" else "nobody answered \"%s\" through %s" % [line.text, line.tool])
	for p in problems:
		if _model_brain:
			notes.append(p + " (not required of a model)")
		else:
			_fail(p)


## The first three of [param items], and how many more there are.
func _some(items: Array) -> String:
	var shown := "; ".join(items.slice(0, 3).map(func(i: Variant) -> String: return str(i)))
	return shown + (" (and %d more)" % (items.size() - 3) if items.size() > 3 else "")


## The read-only `check_stock` of a villager's [param shop] (villagers.json): how many loaves of
## [code]args.item[/code] are left, as `{item, left}`.
func _look_up_stock(shop: Dictionary, args: Dictionary) -> Dictionary:
	_count("check_stock")
	var item := String(args.get("item", "")).to_lower()
	return {"item": item, "left": int(shop.stock.get(item, 0))}


## The answer [param reply] of [param villager] to a question it had to look up: through
## [param tool], naming the item and how many are left.
func _check_look_up(villager: Villager, tool: String, reply: Dictionary) -> void:
	var who := villager.villager_name()
	var calls: Array = reply.actions.filter(func(a: Dictionary) -> bool: return a.tool == tool)
	if calls.is_empty():
		_unlooked = "%s answered without %s: \"%s\"" % [who, tool, reply.text]
		return
	var item := String(calls[0].args.get("item", "")).to_lower()
	var stock: Dictionary = {}
	for v: Dictionary in _town.villagers:
		if v.name == who and v.has("shop"):
			stock = v.shop.stock
	var left := str(int(stock.get(item, 0)))
	if item == "" or not reply.text.contains(item) or not reply.text.contains(left):
		_unlooked = "%s looked %s up but answered \"%s\" (expected %s and %s)" % [who, tool, reply.text, item, left]
		return
	_count("looked_up")
	_say("%s %s looked it up with %s: \"%s\"" % [_stamp(), who, tool, reply.text])


## Walls are walls: no villager stands inside a house, the well or a tree.
func _check_nobody_in_a_wall() -> void:
	for villager: Villager in villagers.get_children():
		for outline in map.obstacles():
			if Geometry2D.is_point_in_polygon(villager.global_position, outline):
				_fail("%s stands inside an obstacle at %s" % [villager.villager_name(), villager.global_position])


func _fail(what: String) -> void:
	_problems.append(what)


func _say(line: String) -> void:
	print(line)
	if _log:
		_log.add_text(line + "\n")


func _stamp() -> String:
	return "[%5.1fs]" % _time


func _who(villager: Villager) -> String:
	return "%s (%s)" % [villager.villager_name(), villager.role]


## A name for [param id] (an agent or the player).
func _name_of(id: String) -> String:
	if _by_id.has(id):
		return _by_id[id].villager_name()
	if id == runtime.player_id:
		return "Player"
	return id if id != "" else "runtime"


func _count(kind: String) -> void:
	_counts[kind] = _counts.get(kind, 0) + 1


# -- What the villagers' agents do (each AgentNode's own signals) ------------------------------


func _on_spawned(agent_id: String, _resumed: bool, villager: Villager, task: String) -> void:
	_count("spawned")
	_by_id[agent_id] = villager
	var at := villager.global_position
	_say("%s %s %s, the %s, appears at (%.0f, %.0f)" % [_stamp(), agent_id, villager.villager_name(),
		villager.role, at.x, at.y])
	if task != "":
		runtime.assign_task(agent_id, task)


func _on_state_changed(_old: String, new: String, villager: Villager) -> void:
	if new == AgentConstants.STATE_LISTENING:
		_say("%s %s listens" % [_stamp(), _who(villager)])
	if villager == _talk_with:
		_show_talk_state()


func _on_spoke(content: String, recipients: PackedStringArray, _kind: String, villager: Villager) -> void:
	_count("lines")
	_lines_by[villager] = _lines_by.get(villager, 0) + 1
	_said.append({"speaker": villager.agent.get_agent_id(), "to": Array(recipients), "text": content})
	var to := []
	for r in recipients:
		to.append(_name_of(r))
	var target := " → " + ", ".join(to) if not to.is_empty() else ""
	_say("%s %s%s: \"%s\"" % [_stamp(), _who(villager), target, content])


## A model's answer to the player as it streams in: shown in the talk box until it is whole
## (the villager shows it in its bubble itself).
func _on_speech_streamed(delta: String, villager: Villager) -> void:
	if _waiting.get(villager, 0) > 0:
		_talk_pending[villager] = _talk_pending.get(villager, "") + delta
		if villager == _talk_with:
			_show_talk()


func _on_move_requested(target: Variant, villager: Villager) -> void:
	_count("walks")
	var at := villager.global_position
	_say("%s %s walks (%.0f, %.0f) → (%.0f, %.0f)" % [_stamp(), _who(villager), at.x, at.y,
		target.x, target.y])


func _on_move_finished(arrived: bool, reason: String, villager: Villager) -> void:
	if arrived:
		_count("arrived")
	else:
		_count("blocked")
		_say("%s %s cannot get there: %s" % [_stamp(), _who(villager), reason])


func _on_error(code: String, message: String, villager: Villager) -> void:
	_count("errors")
	_say("%s (%s: %s — %s)" % [_stamp(), _who(villager), code, message])


func _on_removed(reason: String, villager: Villager) -> void:
	_count("removed")
	_say("%s %s leaves (%s)" % [_stamp(), _who(villager), reason])


# -- The runtime's own signals: tasks and help ---------------------------------------------------


func _on_task_assigned(id: String, task_id: int, task_name: String) -> void:
	_count("task_assigned")
	_open_tasks[task_id] = {"agent_id": id, "name": task_name, "assigned_at": _time}
	_say("%s task #%d for %s: %s" % [_stamp(), task_id, _name_of(id), task_name])


func _on_task_completed(id: String, task_id: int, task_name: String) -> void:
	_count("task_completed")
	_open_tasks.erase(task_id)
	_say("%s task #%d done by %s: %s" % [_stamp(), task_id, _name_of(id), task_name])


func _on_collaboration(id: String, helper_id: String, task_name: String) -> void:
	_count("collaboration_requested")
	_say("%s %s asks %s for help: %s" % [_stamp(), _name_of(id), _name_of(helper_id), task_name])


# -- The player talks ----------------------------------------------------------------------------


## The player says [param text] to [param villager] and awaits the answer: in the talk box (and,
## from the villager itself, in its bubble).
## The player says [param text] to [param villager]; with [param remembers], its answer must
## contain that (it remembers what it was told); with [param tool], it must come through that
## read-only tool and name what was asked about and the stock.
func _player_says(villager: Villager, text: String, remembers := "", tool := "") -> void:
	_say("%s Player → %s: \"%s\"" % [_stamp(), villager.villager_name(), text])
	_said.append({"speaker": runtime.player_id, "to": [villager.agent.get_agent_id()], "text": text})
	_talk_said(villager, "You", text)
	_waiting[villager] = _waiting.get(villager, 0) + 1
	_show_talk_state()
	var reply: Dictionary = await villager.agent.ask(text)
	_waiting[villager] -= 1
	_talk_pending.erase(villager)
	var who := villager.villager_name()
	if not reply.ok:
		_talk_said(villager, "", "(%s cannot answer: %s)" % [who, reply.error.message])
	elif reply.text != "":
		_answered_player = true
		_talk_said(villager, who, reply.text)
		if remembers != "" and reply.text.contains(remembers):
			_counts.remembered = _counts.get("remembered", 0) + 1
			_say("%s %s remembered what the player said earlier: \"%s\"" % [_stamp(), who, remembers])
		elif remembers != "":
			_forgot = "%s did not remember \"%s\" (answered \"%s\")" % [who, remembers, reply.text]
		if tool != "":
			_check_look_up(villager, tool, reply)
	else:
		var did := []
		for action in reply.actions:
			did.append(action.tool)
		_talk_said(villager, "", "(%s answers with %s)" % [who, ", ".join(did) if not did.is_empty() else "silence"])
	_show_talk_state()


func _unhandled_input(event: InputEvent) -> void:
	var click := event as InputEventMouseButton
	if click == null or not click.pressed or click.button_index != MOUSE_BUTTON_LEFT:
		return
	var at: Vector2 = (make_input_local(click) as InputEventMouseButton).position
	var villager := _villager_at(at)
	if villager:
		get_viewport().set_input_as_handled()
		_open_talk(villager)


func _input(event: InputEvent) -> void:
	# Esc closes the talk box first (the header's Esc, back to the menu, comes after).
	if _talk_with and event.is_action_pressed("ui_cancel") and not event.is_echo():
		get_viewport().set_input_as_handled()
		_close_talk()


## The villager under [param point] (the nearest one when several are), or null.
func _villager_at(point: Vector2) -> Villager:
	var best: Villager = null
	var best_distance := INF
	for villager: Villager in villagers.get_children():
		if villager.picks(point):
			var d := villager.global_position.distance_to(point)
			if d < best_distance:
				best = villager
				best_distance = d
	return best


func _open_talk(villager: Villager) -> void:
	if _talk_with:
		_talk_with.selected = false
	_talk_with = villager
	villager.selected = true
	_talk_title.text = "Talking to %s, the %s" % [villager.villager_name(), villager.role]
	_talk_input.placeholder_text = "Say something to %s…" % villager.villager_name()
	_talk_box.visible = true
	_talk_hint.visible = false
	_show_talk()
	_talk_input.grab_focus.call_deferred()


func _close_talk() -> void:
	if _talk_with:
		_talk_with.selected = false
	_talk_with = null
	_talk_box.visible = false
	_talk_hint.visible = true
	_talk_input.release_focus()


## The player typed [param text] in the talk box.
func _talk_submitted(text: String) -> void:
	text = text.strip_edges()
	if text == "" or _talk_with == null:
		return
	_talk_input.clear()
	_player_says(_talk_with, text)


func _talk_said(villager: Villager, who: String, text: String) -> void:
	if _headless:
		return
	if not _talks.has(villager):
		_talks[villager] = []
	# One answer to several questions asked while the villager was thinking (a slow model)
	# resolves each of them: it is shown once.
	if who != "You" and not _talks[villager].is_empty() and _talks[villager][-1] == [who, text]:
		return
	_talks[villager].append([who, text])
	if villager == _talk_with:
		_show_talk()


func _show_talk() -> void:
	if _talk_with == null:
		return
	var villager := _talk_with
	var color := villager.color.lightened(0.25)
	_talk_log.clear()
	var lines: Array = _talks.get(villager, [])
	if lines.is_empty() and not _talk_pending.has(villager):
		_talk_log.push_color(DemoUi.DIM)
		_talk_log.add_text("Say hello: %s answers in the bubble and here." % villager.villager_name())
		_talk_log.pop()
	for i in lines.size():
		var who: String = lines[i][0]
		if i > 0:
			_talk_log.newline()
		if who != "":
			_talk_log.push_color(DemoUi.GREEN if who == "You" else color)
			_talk_log.add_text(who + ": ")
			_talk_log.pop()
		_talk_log.add_text(lines[i][1])
	if _talk_pending.has(villager):
		if not lines.is_empty():
			_talk_log.newline()
		_talk_log.push_color(color)
		_talk_log.add_text(villager.villager_name() + ": ")
		_talk_log.pop()
		_talk_log.add_text(_talk_pending[villager] + " …")
	_show_talk_state()


func _show_talk_state() -> void:
	if _talk_with == null:
		return
	var villager := _talk_with
	var doing := {"idle": "is listening to you", "listening": "is listening…",
		"thinking": "is thinking…", "speaking": "is speaking"}
	var state: String = doing.get(villager.state, villager.state)
	if villager.state == AgentConstants.STATE_IDLE and _waiting.get(villager, 0) > 0:
		state = "will answer in a moment"
	_talk_state.text = "%s %s" % [villager.villager_name(), state]


# -- The window -----------------------------------------------------------------------------------


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


func _exit_tree() -> void:
	if not _headless:
		Input.set_default_cursor_shape(Input.CURSOR_ARROW)


# -- The screenshot run -------------------------------------------------------------------------


## Waits for a lively town, clicks [param baker] like a player would, talks to her, waits for
## her answer, saves the window at [param path] and quits.
func _screenshot_run(path: String, baker: Villager) -> void:
	# A model decides for itself whether to walk and what to remember (as in the headless
	# checks), and answers far slower than the scripted brain: a local one on a small CPU takes
	# a minute for the villagers' first decisions.
	var step := SHOT_STEP_SECONDS * (6.0 if _model_brain else 1.0)
	if await _until(_lively, "the villagers spawned, walked and talked", step) \
			and (_model_brain or await _until(func() -> bool: return _counts.get("remembered", 0) > 0,
				"the baker remembered what the player told her a minute before",
				_last_question_at() + SHOT_STEP_SECONDS)):
		var who := baker.villager_name()
		await _click(baker)
		if await _until(func() -> bool: return _talk_with == baker, "the click on %s opened the talk box" % who):
			_talk_input.text = SHOT_LINE
			_talk_input.text_submitted.emit(SHOT_LINE)
			if await _until(_answered.bind(baker), "%s answered the player in the talk box" % who, step):
				await get_tree().create_timer(0.4).timeout
	var bubbles := 0
	for villager: Villager in villagers.get_children():
		if villager.bubble_text() != "":
			bubbles += 1
	if bubbles == 0:
		_fail("no speech bubble is showing")
	print("town screenshot: %d spawned, %d walks, %d lines, %d bubbles showing, talking to %s" % [
		_counts.get("spawned", 0), _counts.get("walks", 0), _counts.get("lines", 0),
		bubbles, _talk_with.villager_name() if _talk_with else "nobody"])
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


## When the player asks the last question about something said earlier (villagers.json's
## player_later), in seconds.
func _last_question_at() -> float:
	var at := 0.0
	for line: Dictionary in _town.get("player_later", []):
		if line.has("remembers"):
			at = maxf(at, float(line.at))
	return at


## Everybody spawned, somebody walked, a few lines were said.
func _lively() -> bool:
	return _counts.get("spawned", 0) == _town.villagers.size() \
		and (_counts.get("arrived", 0) > 0 or _model_brain) \
		and _counts.get("lines", 0) >= 3 and _time >= 5.0


## The last line of the talk with [param villager] is its answer to SHOT_LINE.
func _answered(villager: Villager) -> bool:
	var lines: Array = _talks.get(villager, [])
	var asked := -1
	for i in lines.size():
		if lines[i][0] == "You" and lines[i][1] == SHOT_LINE:
			asked = i
	return asked >= 0 and lines.slice(asked + 1).any(func(l: Array) -> bool: return l[0] != "You")


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


## Waits until [param done] holds, at most [param seconds]; records a problem naming
## [param what] when it does not.
func _until(done: Callable, what: String, seconds := SHOT_STEP_SECONDS) -> bool:
	var deadline := Time.get_ticks_msec() + int(seconds * 1000)
	while not done.call():
		if Time.get_ticks_msec() > deadline:
			_fail("%s did not happen within %d s" % [what, seconds])
			return false
		await get_tree().process_frame
	return true
