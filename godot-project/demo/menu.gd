## The showcase's menu, the project's main scene: what Godot Agents is, a way into each of the
## three scenes, and which brain their agents think with (offline `scripted` unless a model is
## configured: demo/README.md, demo_brain.gd).
##
## - Town (`demo/town.tscn`): five villagers with their own days; click one to talk to it.
## - Board game vs agent (`demo/app_chat.tscn`): tic-tac-toe against Ivy through the app bridge,
##   with the chat panel.
## - Dungeon (`demo/dungeon.tscn`): a tabletop campaign with Morgana as the game master.
##
## Every scene goes back to the menu with its Menu button or Esc. Keys 1, 2 and 3 open the scenes.
##
## Headless there is nothing to look at: the menu runs the board-games printout
## (`demo/demo.tscn`) instead, which is what `cargo xtask demo` expects of the main scene.
## `--screenshot PATH` (user argument) saves the window and quits.
extends Control

const DemoUi := preload("res://demo/demo_ui.gd")
const DemoBrain := preload("res://demo/demo_brain.gd")

## The scene run headless (the main scene's printout).
const HEADLESS_SCENE := "res://demo/demo.tscn"

## The scenes: title (the button), scene, one line about it, icon.
const SCENES := [
	{"title": "Town", "scene": "res://demo/town.tscn", "icon": "town",
		"about": "Five villagers live their day: they walk, talk, work and help each other. Click one to talk to it."},
	{"title": "Board game vs agent", "scene": "res://demo/app_chat.tscn", "icon": "board",
		"about": "Tic-tac-toe against Ivy through the app bridge, with the chat panel. Take over, or play alongside."},
	{"title": "Dungeon", "scene": "res://demo/dungeon.tscn", "icon": "dungeon",
		"about": "A tabletop campaign run by Morgana, the game master. Say what your character does."},
]

@onready var cards: HBoxContainer = $Layout/Cards
@onready var brain_line: Label = $Layout/Brain/Rows/Line/Text
@onready var brain_hint: Label = $Layout/Brain/Rows/Hint
@onready var brain_dot: ColorRect = $Layout/Brain/Rows/Line/Dot

var _buttons: Array[Button] = []


func _ready() -> void:
	if DisplayServer.get_name() == "headless" and DemoUi.screenshot_path() == "":
		print("Showcase menu: headless, so running the board-games printout (%s)" % HEADLESS_SCENE)
		get_tree().change_scene_to_file.call_deferred(HEADLESS_SCENE)
		return
	theme = DemoUi.theme()
	resized.connect(queue_redraw)
	for spec in SCENES:
		cards.add_child(_card(spec))
	_show_brain()
	var shot := DemoUi.screenshot_path()
	if shot != "":
		var saved: bool = await DemoUi.save_screenshot(self, shot)
		get_tree().quit(0 if saved else 1)


func _card(spec: Dictionary) -> Control:
	var card := PanelContainer.new()
	card.custom_minimum_size = Vector2(360, 0)
	card.add_theme_stylebox_override("panel", DemoUi.box(Color(0.098, 0.113, 0.148, 0.92),
		DemoUi.PANEL_BORDER, 14, 1, 18, 18))
	var rows := VBoxContainer.new()
	rows.add_theme_constant_override("separation", 14)
	card.add_child(rows)
	var icon := CardIcon.new()
	icon.kind = spec.icon
	icon.custom_minimum_size = Vector2(0, 128)
	rows.add_child(icon)
	var button := Button.new()
	button.text = spec.title
	button.custom_minimum_size.y = 50
	button.add_theme_font_size_override("font_size", 22)
	button.tooltip_text = "Open %s (key %d)" % [spec.scene, _buttons.size() + 1]
	button.pressed.connect(_open.bind(spec.scene))
	rows.add_child(button)
	_buttons.append(button)
	var about := DemoUi.label(spec.about, 15, DemoUi.DIM)
	about.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	about.custom_minimum_size = Vector2(0, 66)
	rows.add_child(about)
	return card


func _show_brain() -> void:
	var resolved := DemoBrain.resolve()
	if resolved.error != "":
		brain_dot.color = DemoUi.RED
		brain_line.text = "Brain: scripted, offline — the configured brain is not usable"
		brain_hint.text = resolved.error
		brain_hint.add_theme_color_override("font_color", DemoUi.RED)
	elif resolved.brain == null:
		brain_dot.color = DemoUi.GREEN
		brain_line.text = "Brain: scripted — offline and deterministic: no model, no key, no network"
		brain_hint.text = "To think with a real model, set provider and model in demo/brain.tres or AGENTS_DEMO_PROVIDER (demo/README.md)."
	else:
		brain_dot.color = DemoUi.ACCENT
		brain_line.text = "Brain: %s — a real model (from %s)" % [resolved.label, resolved.source]
		brain_hint.text = "The villagers, Ivy and Morgana think with it. Set the provider back to scripted for the offline brain (demo/README.md)."


func _open(scene: String) -> void:
	get_tree().change_scene_to_file(scene)


func _unhandled_input(event: InputEvent) -> void:
	if event is InputEventKey and event.pressed and not event.echo:
		var index: int = [KEY_1, KEY_2, KEY_3].find((event as InputEventKey).keycode)
		if index >= 0:
			get_viewport().set_input_as_handled()
			_open(SCENES[index].scene)


func _draw() -> void:
	var w := size.x
	var h := size.y
	draw_polygon(PackedVector2Array([Vector2.ZERO, Vector2(w, 0), Vector2(w, h), Vector2(0, h)]),
		PackedColorArray([Color(0.082, 0.098, 0.145), Color(0.094, 0.082, 0.14),
			Color(0.05, 0.055, 0.075), Color(0.05, 0.06, 0.07)]))
	# A faint network of agents behind everything.
	var rng := RandomNumberGenerator.new()
	rng.seed = 7
	var nodes: Array[Vector2] = []
	for i in 46:
		nodes.append(Vector2(rng.randf() * w, rng.randf() * h))
	for i in nodes.size():
		for j in range(i + 1, nodes.size()):
			var d := nodes[i].distance_to(nodes[j])
			if d < 170.0:
				draw_line(nodes[i], nodes[j], Color(0.55, 0.65, 0.95, 0.09 * (1.0 - d / 170.0)), 1.0, true)
	var palette := [DemoUi.ACCENT, DemoUi.BLUE, DemoUi.GREEN, Color(0.85, 0.5, 0.75)]
	for i in nodes.size():
		var c: Color = palette[i % palette.size()]
		c.a = 0.16
		draw_circle(nodes[i], 3.0 + (i % 3), c)


## A small drawing for a card: the town, the board, the dungeon.
class CardIcon extends Control:
	var kind := "town"

	func _draw() -> void:
		var r := Rect2(Vector2.ZERO, size)
		var bg := StyleBoxFlat.new()
		bg.bg_color = Color(0.06, 0.07, 0.095)
		bg.set_corner_radius_all(10)
		draw_style_box(bg, r)
		var c := r.get_center()
		match kind:
			"town":
				_town(c)
			"board":
				_board(c)
			"dungeon":
				_dungeon(c)

	func _town(c: Vector2) -> void:
		draw_rect(Rect2(8, size.y - 44, size.x - 16, 36), Color(0.25, 0.4, 0.26))
		var houses := [[-110.0, Color(0.78, 0.36, 0.3)], [-20.0, Color(0.45, 0.5, 0.62)], [80.0, Color(0.62, 0.42, 0.75)]]
		for house in houses:
			var x: float = c.x + house[0]
			draw_rect(Rect2(x, size.y - 74, 46, 34), Color(0.86, 0.8, 0.68))
			draw_colored_polygon(PackedVector2Array([Vector2(x - 6, size.y - 74),
				Vector2(x + 23, size.y - 98), Vector2(x + 52, size.y - 74)]), house[1])
			draw_rect(Rect2(x + 17, size.y - 58, 12, 18), Color(0.4, 0.28, 0.2))
		var folk := [[-60.0, Color(0.95, 0.75, 0.35)], [40.0, Color(0.35, 0.55, 0.95)], [135.0, Color(0.45, 0.8, 0.4)]]
		for f in folk:
			var at := Vector2(c.x + f[0], size.y - 24)
			draw_circle(at + Vector2(0, -8), 8.0, f[1])
			draw_circle(at + Vector2(0, -20), 6.0, Color(0.96, 0.84, 0.72))
		var bubble := Rect2(c.x - 52, 12, 84, 30)
		var style := StyleBoxFlat.new()
		style.bg_color = Color(0.96, 0.96, 0.98)
		style.set_corner_radius_all(9)
		draw_style_box(style, bubble)
		draw_colored_polygon(PackedVector2Array([Vector2(c.x - 24, 41), Vector2(c.x - 12, 41),
			Vector2(c.x - 40, 62)]), Color(0.96, 0.96, 0.98))
		for i in 3:
			draw_circle(Vector2(c.x - 30 + i * 20, 27), 4.0, Color(0.3, 0.32, 0.4))

	func _board(c: Vector2) -> void:
		var cell := 34.0
		var o := c - Vector2(cell * 1.5, cell * 1.5) + Vector2(-40, 0)
		var line := Color(0.4, 0.44, 0.55)
		for i in [1, 2]:
			draw_line(o + Vector2(cell * i, 4), o + Vector2(cell * i, cell * 3 - 4), line, 3.0, true)
			draw_line(o + Vector2(4, cell * i), o + Vector2(cell * 3 - 4, cell * i), line, 3.0, true)
		var marks := {0: "O", 2: "X", 4: "O", 5: "X", 8: "O"}
		for i in marks:
			var m := o + Vector2((i % 3 + 0.5) * cell, (floori(i / 3.0) + 0.5) * cell)
			if marks[i] == "O":
				draw_arc(m, 10.0, 0, TAU, 24, Color(0.55, 0.8, 1.0), 3.5, true)
			else:
				draw_line(m - Vector2(9, 9), m + Vector2(9, 9), Color(1.0, 0.55, 0.5), 3.5, true)
				draw_line(m + Vector2(-9, 9), m + Vector2(9, -9), Color(1.0, 0.55, 0.5), 3.5, true)
		var chat := Rect2(c.x + 40, c.y - 42, 92, 84)
		var style := StyleBoxFlat.new()
		style.bg_color = Color(0.12, 0.135, 0.18)
		style.border_color = Color(0.28, 0.31, 0.4)
		style.set_border_width_all(1)
		style.set_corner_radius_all(8)
		draw_style_box(style, chat)
		var colors := [Color(0.55, 0.8, 1.0), Color(0.6, 1.0, 0.6), Color(1.0, 0.85, 0.4), Color(0.78, 0.78, 0.82)]
		for i in 4:
			draw_line(chat.position + Vector2(10, 16 + i * 17), chat.position + Vector2(82 - (i % 2) * 22, 16 + i * 17),
				colors[i], 4.0, true)

	func _dungeon(c: Vector2) -> void:
		var rooms := [Rect2(c.x - 130, c.y - 44, 70, 40), Rect2(c.x - 35, c.y - 44, 70, 40),
			Rect2(c.x + 60, c.y - 44, 70, 40), Rect2(c.x - 35, c.y + 16, 70, 40)]
		var door := Color(0.95, 0.78, 0.42)
		var passage := Color(0.55, 0.66, 0.82)
		draw_line(Vector2(c.x - 60, c.y - 24), Vector2(c.x - 41, c.y - 24), door, 2.5, true)
		draw_colored_polygon(PackedVector2Array([Vector2(c.x - 36, c.y - 24), Vector2(c.x - 45, c.y - 29), Vector2(c.x - 45, c.y - 19)]), door)
		draw_line(Vector2(c.x + 35, c.y - 24), Vector2(c.x + 60, c.y - 24), passage, 2.5, true)
		draw_line(Vector2(c.x, c.y - 4), Vector2(c.x, c.y + 16), passage, 2.5, true)
		for i in rooms.size():
			var style := StyleBoxFlat.new()
			style.bg_color = Color(0.15, 0.17, 0.22) if i < 3 else Color(0.12, 0.18, 0.19)
			style.border_color = Color(0.85, 0.78, 0.5) if i == 1 else Color(0.36, 0.4, 0.48)
			style.set_border_width_all(2)
			style.set_corner_radius_all(7)
			draw_style_box(style, rooms[i])
		draw_circle(Vector2(c.x - 14, c.y - 24), 6.0, Color(1.0, 0.68, 0.3))
		draw_circle(Vector2(c.x + 6, c.y - 24), 6.0, Color(0.45, 0.85, 0.95))
		draw_circle(Vector2(c.x + 95, c.y - 24), 5.0, Color(1.0, 0.45, 0.4))
