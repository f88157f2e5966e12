## Talk to any agent: a baker with an `AgentNode` in a small square, and the addon's chat panel
## (`AgentChatPanel`) following that node — what you say, what she answers (a model brain's text
## growing as it streams), why she could not. The panel's line edit asks her (`AgentNode.ask`).
##
## With a display:
##   godot --path godot-project res://demo/talk.tscn
## Headless, or with `--tour`: one line to the baker, her answer checked, then quits with 0
## (`TALK DEMO OK`) or 1 (`TALK DEMO FAILED: …`). Screenshot of the tour under a virtual display:
##   xvfb-run -a -s "-screen 0 1280x720x24" godot --rendering-driver opengl3 \
##       --path godot-project res://demo/talk.tscn -- --tour --screenshot /tmp/talk.png
extends Control

const DemoUi := preload("res://demo/demo_ui.gd")

const DB_PATH := "user://demo_talk.db"
const LINE := "Good morning, Mira! Is the bread ready?"

var runtime: AgentRuntime
var baker: AgentNode
var panel: AgentChatPanel


func _ready() -> void:
	theme = DemoUi.theme()
	DemoUi.remove_database(DB_PATH)
	var background := ColorRect.new()
	background.color = Color(0.1, 0.12, 0.16)
	background.set_anchors_preset(Control.PRESET_FULL_RECT)
	add_child(background)
	var title := DemoUi.label("Talk to an agent", 26)
	title.position = Vector2(32, 20)
	add_child(title)
	# The square: the runtime and the baker.
	var square := Node2D.new()
	square.name = "Square"
	add_child(square)
	runtime = AgentRuntime.new()
	runtime.name = "AgentRuntime"
	runtime.database_path = DB_PATH
	runtime.world_bounds = Rect2(0, 0, 1280, 720)
	runtime.thinking_seconds = 0.3
	runtime.speaking_seconds = 0.3
	square.add_child(runtime)
	var body := Node2D.new()
	body.name = "Baker"
	body.position = Vector2(300, 380)
	var look := Polygon2D.new()
	var points := PackedVector2Array()
	for i in 24:
		points.append(Vector2.from_angle(TAU * i / 24.0) * 26.0)
	look.polygon = points
	look.color = Color(1.0, 0.7, 0.35)
	body.add_child(look)
	var name_label := DemoUi.label("Mira, the baker", 18)
	name_label.position = Vector2(-64, 34)
	body.add_child(name_label)
	baker = AgentNode.new()
	baker.name = "AgentNode"
	var config := AgentConfig.new()
	config.name = "Mira"
	config.role = "baker"
	config.prompt = "You run the bakery on the square."
	config.autonomous = false
	baker.config = config
	body.add_child(baker)
	square.add_child(body)
	# The panel, following the baker's node.
	var heading := DemoUi.label("Talking to Mira", 18)
	heading.position = Vector2(700, 84)
	add_child(heading)
	panel = AgentChatPanel.new()
	panel.position = Vector2(700, 120)
	panel.size = Vector2(540, 560)
	panel.placeholder = "Say something to Mira…"
	add_child(panel)
	panel.agent_path = panel.get_path_to(baker)
	_tour_if_asked()


func _tour_if_asked() -> void:
	var args := OS.get_cmdline_user_args()
	if DisplayServer.get_name() != "headless" and not "--tour" in args:
		return
	var problems := []
	var deadline := Time.get_ticks_msec() + 10000
	while not baker.is_spawned() and Time.get_ticks_msec() < deadline:
		await get_tree().process_frame
	if not baker.is_spawned():
		problems.append("the baker did not spawn: " + baker.get_last_error())
	else:
		panel.get_line_edit().text = LINE
		panel.get_line_edit().text_submitted.emit(LINE)
		deadline = Time.get_ticks_msec() + 10000
		while panel.get_lines().size() < 2 and Time.get_ticks_msec() < deadline:
			await get_tree().process_frame
		var lines := panel.get_lines()
		print("-- the talk panel --")
		for line in lines:
			print(line)
		if lines.size() < 2 or lines[0] != "You: " + LINE or not lines[1].begins_with("Mira: "):
			problems.append("the panel does not show the line and Mira's answer: %s" % [lines])
		if panel.get_line_edit().text != "":
			problems.append("the line edit was not cleared after sending")
	var screenshot := DemoUi.screenshot_path()
	if screenshot != "":
		await DemoUi.save_screenshot(self, screenshot)
	if problems.is_empty():
		print("TALK DEMO OK: Mira answered through the talk panel")
	else:
		print("TALK DEMO FAILED: " + "; ".join(problems))
	get_tree().quit(0 if problems.is_empty() else 1)
