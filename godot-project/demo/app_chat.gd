## The app bridge in a scene: an AgentApp ("tictactoe") that a scripted agent, Ivy, plays as O
## against the house (X, a simple GDScript opponent), and an AgentChatPanel showing the session:
## the human label, the agent joining, its actions and their results, the round's events, and
## the human talking to Ivy.
##
## With a display:
##   godot --path godot-project res://demo/app_chat.tscn
## Headless (prints the panel's lines and quits):
##   godot --headless --path godot-project res://demo/app_chat.tscn
## Screenshot under a virtual display (Xvfb):
##   xvfb-run -a -s "-screen 0 1280x720x24" godot --rendering-driver opengl3 \
##       --path godot-project res://demo/app_chat.tscn -- --seconds 10 --screenshot /tmp/app_chat.png
## User arguments: `--seconds N` (quit after N seconds; default: keep running with a display,
## 10 s headless), `--screenshot PATH` (save the window as a PNG just before quitting).
extends Control

const DB_PATH := "user://demo_app_chat.db"
const HEADLESS_SECONDS := 10.0
const LINES := [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]]

@onready var runtime: AgentRuntime = $AgentRuntime
@onready var app: AgentApp = $AgentApp
@onready var chat: AgentChatPanel = $Layout/Chat
@onready var board_grid: GridContainer = $Layout/Left/Board
@onready var status: Label = $Layout/Left/Status

## "." empty, "O" the agent, "X" the house.
var board: Array = []
var round_number := 1
var score := {"O": 0, "X": 0, "draw": 0}
var cells: Array[Label] = []
var rng := RandomNumberGenerator.new()


func _enter_tree() -> void:
	# Runs before the children are ready (the runtime starts in its _ready): a fresh database, so
	# the app does not get an earlier run's session back.
	for suffix in ["", "-wal", "-shm", "-journal"]:
		var path := ProjectSettings.globalize_path(DB_PATH + suffix)
		if FileAccess.file_exists(path):
			DirAccess.remove_absolute(path)
	$AgentRuntime.database_path = DB_PATH


func _ready() -> void:
	rng.seed = 11
	for i in 9:
		var cell := Label.new()
		cell.custom_minimum_size = Vector2(84, 84)
		cell.horizontal_alignment = HORIZONTAL_ALIGNMENT_CENTER
		cell.vertical_alignment = VERTICAL_ALIGNMENT_CENTER
		cell.add_theme_font_size_override("font_size", 44)
		var box := StyleBoxFlat.new()
		box.bg_color = Color(0.16, 0.17, 0.21)
		box.set_corner_radius_all(6)
		cell.add_theme_stylebox_override("normal", box)
		board_grid.add_child(cell)
		cells.append(cell)
	_new_board()

	# Bounded integers: the scripted brain picks arguments within minimum / maximum.
	var square := {"type": "integer", "minimum": 0, "maximum": 2}
	app.actions = [{
		"name": "place",
		"description": "Place your O on an empty square: row and col from 0 to 2.",
		"params": {"type": "object", "properties": {"row": square, "col": square},
			"required": ["row", "col"], "additionalProperties": false},
	}]
	app.action_handler = _on_action
	app.set_context({"state": _state(), "human_label": _label()})
	if not app.is_registered():
		push_error("the app did not register: " + app.get_last_error())
		return
	var id := runtime.spawn_agent({"name": "Ivy", "role": "tic-tac-toe player", "app_id": app.app_id,
		"prompt": "You play O. Be a good sport."})
	if id == "":
		push_error("spawn: " + runtime.get_last_error())
		return
	chat.send("Good luck, Ivy!")
	_finish_later()


## The agent's move: O on the square, then the house answers with X. Every answer carries the
## state, so the agent (static mode) is woken to play again, also after a refused move.
func _on_action(action: String, params: Dictionary, _by: String) -> Dictionary:
	if action != "place":
		return {"error": "unknown action " + action, "state": _state()}
	var square: int = params.row * 3 + params.col
	if board[square] != ".":
		return {"error": "That square is taken", "state": _state()}
	board[square] = "O"
	var winner := _winner()
	if winner == "":
		var free := range(9).filter(func(i): return board[i] == ".")
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
			"state": _state(), "events": [{"name": "roundEnded", "payload": {"winner": winner}}]}
	return {"result": "placed", "state": _state()}


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
		cells[i].add_theme_color_override("font_color",
			Color(0.55, 0.8, 1.0) if board[i] == "O" else Color(1.0, 0.55, 0.5))
	status.text = "Round %d — Ivy (O) %d · house (X) %d · draws %d" % [
		round_number, score.O, score.X, score.draw]


func _state() -> Dictionary:
	return {"board": "".join(board), "you": "O", "round": round_number}


func _label() -> String:
	return "⚔️ Round %d: Ivy (O) vs the house (X)" % round_number


func _finish_later() -> void:
	var seconds := HEADLESS_SECONDS if DisplayServer.get_name() == "headless" else 0.0
	var screenshot := ""
	var args := OS.get_cmdline_user_args()
	for i in args.size() - 1:
		if args[i] == "--seconds":
			seconds = float(args[i + 1])
		elif args[i] == "--screenshot":
			screenshot = args[i + 1]
	if seconds <= 0.0:
		return
	await get_tree().create_timer(seconds).timeout
	for line in chat.get_lines():
		print(line)
	if screenshot != "":
		await RenderingServer.frame_post_draw
		var image := get_viewport().get_texture().get_image()
		if image == null or image.is_empty():
			print("no image to save (headless?)")
		else:
			var error := image.save_png(screenshot)
			print("screenshot: %s (%s)" % [screenshot, error_string(error)])
	get_tree().quit()
