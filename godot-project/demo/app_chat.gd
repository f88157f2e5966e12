## The app bridge in a scene: tic-tac-toe whose O is played by a scripted agent, Ivy, by you, or
## by both, against the house (X, a simple GDScript opponent), with an AgentChatPanel showing the
## session (the human label, the agent joining, every action and its result, the rounds' events,
## control changes, what you say to Ivy) and a control-mode switch:
## - `agent`: Ivy plays O, the board is read-only for you;
## - `human`: you play O by clicking the board; Ivy is offered no action ("Human is in control");
## - `copilot`: both of you may place O.
##
## With a display:
##   godot --path godot-project res://demo/app_chat.tscn
## Headless (`cargo xtask demo` runs it): a scripted tour through the three control modes,
## printing the panel's lines as a transcript, then quitting with 0, or 1 when a step failed:
##   godot --headless --path godot-project res://demo/app_chat.tscn
## Screenshot of the tour under a virtual display (Xvfb):
##   xvfb-run -a -s "-screen 0 1280x720x24" godot --rendering-driver opengl3 \
##       --path godot-project res://demo/app_chat.tscn -- --tour --screenshot /tmp/app_chat.png
## User arguments: `--tour` (run the tour with a display too), `--seconds N` (quit after N
## seconds instead), `--screenshot PATH` (save the window as a PNG just before quitting, and
## print its visible labels as a `SHOT_LABELS:` line; after the tour it first lets Ivy start the
## next round, so the board is not empty).
##
## Part of the showcase (demo/menu.tscn): the Menu button or Esc go back to the menu. When you
## play, Ivy thinks with the demo brain (demo/demo_brain.gd: offline `scripted` unless a model is
## configured); the tour always plays on the scripted brain, whose moves it can check.
extends Control

const DemoUi := preload("res://demo/demo_ui.gd")
const DemoBrain := preload("res://demo/demo_brain.gd")

const DB_PATH := "user://demo_app_chat.db"
const LINES := [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]]
const CONTROL_MODES := ["agent", "human", "copilot"]
## Longest wait for one step of the tour, in seconds.
const STEP_SECONDS := 60.0

@onready var runtime: AgentRuntime = $AgentRuntime
@onready var app: AgentApp = $AgentApp
@onready var chat: AgentChatPanel = $Layout/Right/Rows/Chat
@onready var board_grid: GridContainer = $Layout/Left/Rows/Board
@onready var status: Label = $Layout/Left/Rows/Status
@onready var control_switch: OptionButton = $Layout/Left/Rows/Controls/ControlMode
@onready var header: PanelContainer = $Header

## "." empty, "O" the agent or you, "X" the house.
var board: Array = []
var round_number := 1
var score := {"O": 0, "X": 0, "draw": 0}
var cells: Array[Button] = []
var rng := RandomNumberGenerator.new()
## What went wrong in the tour.
var problems: Array[String] = []
## The demo brain (DemoBrain.resolve()); empty on the tour, which plays offline.
var brain := {}


func _enter_tree() -> void:
	# Runs before the children are ready (the runtime starts in its _ready): a fresh database, so
	# the app does not get an earlier run's session back.
	DemoUi.remove_database(DB_PATH)
	$AgentRuntime.database_path = DB_PATH
	if DisplayServer.get_name() == "headless" or "--tour" in OS.get_cmdline_user_args():
		# The tour: Ivy thinks faster.
		$AgentRuntime.thinking_seconds = 0.1
		$AgentRuntime.speaking_seconds = 0.05
	else:
		# You play: Ivy thinks with the demo brain (read when the runtime starts, in its _ready).
		brain = DemoBrain.resolve()
		if brain.brain != null:
			$AgentRuntime.default_brain_config = brain.brain


func _ready() -> void:
	theme = DemoUi.theme()
	if brain.is_empty() and DemoBrain.resolve().brain != null:
		header.show_brain(brain, "the tour ignores the configured model")
	else:
		header.show_brain(brain)
	rng.seed = 11
	for i in 9:
		var cell := Button.new()
		cell.custom_minimum_size = Vector2(106, 106)
		cell.focus_mode = Control.FOCUS_NONE
		cell.add_theme_font_size_override("font_size", 58)
		for state in ["normal", "hover", "pressed", "disabled"]:
			var bg := Color(0.2, 0.225, 0.29) if state == "hover" else Color(0.125, 0.14, 0.18)
			var border := DemoUi.ACCENT.darkened(0.2) if state == "hover" else DemoUi.PANEL_BORDER
			cell.add_theme_stylebox_override(state, DemoUi.box(bg, border, 10, 1, 0, 0))
		cell.pressed.connect(_on_cell_pressed.bind(i))
		board_grid.add_child(cell)
		cells.append(cell)
	for mode in CONTROL_MODES:
		control_switch.add_item(mode)
	control_switch.item_selected.connect(func(index): _set_control(CONTROL_MODES[index]))
	_new_board()

	app.actions = _actions()
	app.action_handler = _on_action
	app.set_context({"state": _state(), "human_label": _label()})
	if not app.is_registered():
		push_error("the app did not register: " + app.get_last_error())
		return
	var id := runtime.spawn_agent({"name": "Ivy", "role": "tic-tac-toe player", "app_id": app.app_id,
		"prompt": "You play O. Be a good sport."})
	if id == "":
		if brain.get("brain") != null:
			# You play, with a configured model that did not work (a key not set, …): say so.
			status.text = "Ivy could not join: " + runtime.get_last_error()
			status.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
			header.set_brain("Brain: %s — refused" % brain.label, "error")
			_finish()
			return
		push_error("spawn: " + runtime.get_last_error())
		return
	chat.send("Good luck, Ivy!")
	_show_control()
	_finish()


## A move on the square, by Ivy or by you: O there, then the house answers with X. Every answer
## carries the state, so the agent (static mode) is woken to play again, also after a refused
## move.
func _on_action(action: String, params: Dictionary, _by: String) -> Dictionary:
	if action != "place":
		return {"error": "unknown action " + action, "state": _state()}
	# Only the empty squares are offered (the action's enum), so the app never sees a taken one.
	var square: int = params.square
	if board[square] != ".":
		return {"error": "That square is taken", "state": _state(), "actions": _actions()}
	board[square] = "O"
	var winner := _winner()
	if winner == "":
		var free := _free_squares()
		board[free[rng.randi_range(0, free.size() - 1)]] = "X"
		winner = _winner()
	_draw_board()
	if winner != "":
		score[winner] += 1
		round_number += 1
		_new_board()
		# The label of the next round once this answer is in (the chat shows it after the event).
		app.set_context.call_deferred({"human_label": _label()})
		# The event goes to the agent after the action's result.
		return {"result": "round over: " + ("a draw" if winner == "draw" else winner + " wins"),
			"state": _state(), "actions": _actions(),
			"events": [{"name": "roundEnded", "payload": {"winner": winner}}]}
	return {"result": "placed", "state": _state(), "actions": _actions()}


## The action on offer: `place` on one of the empty squares (0–8, row by row). The schema
## lists only those, so an agent — the scripted one included — never tries a taken square.
func _actions() -> Array:
	return [{
		"name": "place",
		"description": "Place O on an empty square. Squares are numbered 0 to 8, row by row " +
			"(0 1 2 / 3 4 5 / 6 7 8); only the empty ones are offered.",
		"params": {"type": "object", "properties": {"square": {"type": "integer",
			"enum": _free_squares()}}, "required": ["square"], "additionalProperties": false},
	}]


## You clicked a square: your move (refused by the app in `agent` mode).
func _on_cell_pressed(square: int) -> void:
	app.human_action("place", {"square": square})


func _set_control(mode: String) -> void:
	app.control_mode = mode
	if app.control_mode != mode:
		problems.append("control_mode %s: %s" % [mode, app.get_last_error()])
	_show_control()


func _show_control() -> void:
	control_switch.select(CONTROL_MODES.find(app.control_mode))
	for cell in cells:
		cell.disabled = app.control_mode == "agent"
	_draw_board()


func _free_squares() -> Array:
	return range(9).filter(func(i): return board[i] == ".")


func _winner() -> String:
	for line in LINES:
		var a: String = board[line[0]]
		if a != "." and a == board[line[1]] and a == board[line[2]]:
			return a
	return "draw" if not "." in board else ""


func _new_board() -> void:
	board = []
	board.resize(9)
	board.fill(".")
	_draw_board()


func _draw_board() -> void:
	for i in 9:
		cells[i].text = "" if board[i] == "." else board[i]
		var color := Color(0.55, 0.8, 1.0) if board[i] == "O" else Color(1.0, 0.55, 0.5)
		for key in ["font_color", "font_disabled_color", "font_hover_color", "font_pressed_color"]:
			cells[i].add_theme_color_override(key, color)
	var player: String = {"agent": "Ivy", "human": "you", "copilot": "you and Ivy"}[app.control_mode]
	status.text = "Round %d — O (%s) %d · house (X) %d · draws %d" % [
		round_number, player, score.O, score.X, score.draw]


func _state() -> Dictionary:
	return {"board": "".join(board), "you": "O", "round": round_number}


func _label() -> String:
	return "⚔️ Round %d: O vs the house (X)" % round_number


# -- Quitting, and the tour ---------------------------------------------------------------------


func _finish() -> void:
	var args := OS.get_cmdline_user_args()
	var tour := DisplayServer.get_name() == "headless" or "--tour" in args
	var seconds := 0.0
	var screenshot := ""
	for i in args.size() - 1:
		if args[i] == "--seconds":
			seconds = float(args[i + 1])
			tour = false
		elif args[i] == "--screenshot":
			screenshot = args[i + 1]
	if tour:
		await _tour()
	elif seconds > 0.0:
		await get_tree().create_timer(seconds).timeout
	else:
		return
	print("")
	print("-- the chat panel --")
	for line in chat.get_lines():
		print(line)
	if screenshot != "":
		if tour:
			# Ivy starts the next round: a board with marks on it (no failure if not).
			var deadline := Time.get_ticks_msec() + 10000
			while board.count(".") > 5 and Time.get_ticks_msec() < deadline:
				await get_tree().process_frame
		await DemoUi.save_screenshot(self, screenshot)
	if not tour:
		get_tree().quit()
		return
	print("")
	if problems.is_empty():
		print("APP DEMO OK: Ivy played, you played, both played, in agent, human and copilot control")
	else:
		print("APP DEMO FAILED:")
		for problem in problems:
			print("  " + problem)
	get_tree().quit(0 if problems.is_empty() else 1)


## Ivy plays a round; you take over and finish the next; you play alongside Ivy; Ivy plays on
## alone until another round ends.
func _tour() -> void:
	_step("agent control: Ivy plays O until a round ends")
	await _until_round_over("Ivy's round")

	_step("human control: you play O (first free square each time) until the round ends")
	_set_control("human")
	var start := round_number
	while round_number == start and problems.is_empty():
		await _human_move("human")

	_step("copilot control: you place one O, Ivy plays on")
	_set_control("copilot")
	await _human_move("copilot")
	var agent_moves := _moves_by("agent")
	if not await _until(func(): return _moves_by("agent") > agent_moves, "an agent move in copilot"):
		return

	_step("agent control again: Ivy plays on until a round ends")
	_set_control("agent")
	await _until_round_over("Ivy's last round")

	var lines := "\n".join(chat.get_lines())
	for expected in ["Ivy joined", "Control: human", "Control: copilot", "Control: agent",
			"You: Good luck, Ivy!", "Event: roundEnded"]:
		if not expected in lines:
			problems.append("the chat panel has no line with '%s'" % expected)
	for by in ["agent", "human"]:
		if _moves_by(by) == 0:
			problems.append("no move by the %s was recorded" % by)


func _step(text: String) -> void:
	print("== " + text)


## One move of yours on the first free square; fails the tour when it is refused.
func _human_move(mode: String) -> void:
	var free := _free_squares()
	var square: int = free[0]
	var request := app.human_action("place", {"square": square})
	if request == 0:
		problems.append("human_action in %s: %s" % [mode, app.get_last_error()])
		return
	var done: Array = []
	var on_done := func(id, record): if id == request: done.append(record)
	app.human_action_done.connect(on_done)
	await _until(func(): return not done.is_empty(), "your move in " + mode)
	app.human_action_done.disconnect(on_done)
	if not done.is_empty() and not done[0].ok:
		# The square went to Ivy in copilot (a race the game settles): not a failure.
		if mode != "copilot" or done[0].error != "That square is taken":
			problems.append("your move in %s was refused: %s" % [mode, done[0].error])


## Handled moves in the session by `by` (`agent` or `human`).
func _moves_by(by: String) -> int:
	return app.get_transcript().filter(func(item):
		return item.kind == "action" and item.role == by and item.record.ok).size()


func _until_round_over(what: String) -> void:
	var start := round_number
	await _until(func(): return round_number > start, what)


func _until(done: Callable, what: String) -> bool:
	var deadline := Time.get_ticks_msec() + int(STEP_SECONDS * 1000)
	while not done.call():
		if Time.get_ticks_msec() > deadline:
			problems.append("%s did not happen within %d s" % [what, STEP_SECONDS])
			return false
		await get_tree().process_frame
	return true
