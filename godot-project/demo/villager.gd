## One villager of the town (demo/town.gd, scene demo/villager.tscn): a `CharacterBody2D` with a
## `NavigationAgent2D` and an `AgentNode` — the agent that decides for it. The node walks the
## body along the navigation mesh when its agent decides to move, and reports where it stands;
## this script only shows the villager: a figure in its colour, its name and role under it, "…"
## while it thinks, and a speech bubble with what it says (as it streams in, for a model).
extends CharacterBody2D

const DemoUi := preload("res://demo/demo_ui.gd")

## Widest speech bubble, in pixels.
const BUBBLE_WIDTH := 240.0
## How far from its feet a click still picks the villager.
const PICK_RADIUS := 26.0
const SKIN := Color(0.96, 0.84, 0.72)
const OUTLINE := Color(0.08, 0.09, 0.11, 0.85)

## The agent behind the villager.
@onready var agent: AgentNode = $AgentNode

var color := Color.WHITE
var role := ""
## What its agent is doing: `idle`, `listening`, `thinking` or `speaking`.
var state := "idle":
	set(value):
		state = value
		queue_redraw()
## The player is talking to this villager (the talk box is open).
var selected := false:
	set(value):
		selected = value
		queue_redraw()
## The mouse is over it.
var hovered := false:
	set(value):
		if hovered != value:
			hovered = value
			queue_redraw()
## Where bubbles must stay (global coordinates): the map.
var bounds := Rect2(0, 0, 1280, 720)

var _name: Label
var _role: Label
var _bubble: PanelContainer
var _bubble_text: Label
var _bubble_left := 0.0
## Which of place_bubble's places the bubble took last (-1: none yet).
var _bubble_slot := -1
var _clock := 0.0
var _last_position := Vector2.ZERO
var _walking := 0.0
## The line a model is writing, as it streams in.
var _streaming := ""


## Names the villager and gives its agent [param config]: call before adding it to the tree.
func setup(config: AgentConfig, tint: Color) -> void:
	role = config.role
	name = config.name
	color = tint
	$AgentNode.config = config
	_name = DemoUi.label(config.name, 15)
	_name.horizontal_alignment = HORIZONTAL_ALIGNMENT_CENTER
	_name.add_theme_color_override("font_outline_color", Color(0.05, 0.06, 0.08, 0.9))
	_name.add_theme_constant_override("outline_size", 5)
	_name.position = Vector2(-70, 18)
	_name.size = Vector2(140, 20)
	_name.z_index = 2
	_name.mouse_filter = Control.MOUSE_FILTER_IGNORE
	add_child(_name)
	_role = DemoUi.label(role, 12, Color(0.88, 0.9, 0.94))
	_role.horizontal_alignment = HORIZONTAL_ALIGNMENT_CENTER
	_role.add_theme_color_override("font_outline_color", Color(0.05, 0.06, 0.08, 0.85))
	_role.add_theme_constant_override("outline_size", 4)
	_role.position = Vector2(-70, 36)
	_role.size = Vector2(140, 16)
	_role.z_index = 2
	_role.mouse_filter = Control.MOUSE_FILTER_IGNORE
	add_child(_role)

	_bubble = PanelContainer.new()
	var style := DemoUi.box(Color(0.98, 0.98, 0.99, 0.96), Color(0.2, 0.22, 0.28, 0.5), 10, 1, 10, 6)
	style.shadow_color = Color(0, 0, 0, 0.35)
	style.shadow_size = 4
	style.shadow_offset = Vector2(0, 2)
	_bubble.add_theme_stylebox_override("panel", style)
	_bubble.z_index = 10
	_bubble.mouse_filter = Control.MOUSE_FILTER_IGNORE
	_bubble.visible = false
	_bubble.draw.connect(_draw_tail)
	add_child(_bubble)
	_bubble_text = DemoUi.label("", 14, Color(0.1, 0.11, 0.14))
	_bubble_text.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	_bubble_text.mouse_filter = Control.MOUSE_FILTER_IGNORE
	_bubble.add_child(_bubble_text)
	_last_position = position


func _ready() -> void:
	agent.state_changed.connect(func(_old: String, new: String) -> void:
		state = new
		if new == AgentConstants.STATE_THINKING:
			_streaming = "")
	agent.spoke.connect(func(text: String, _to: PackedStringArray, _kind: String) -> void:
		_streaming = ""
		say(text, bubble_seconds(text)))
	agent.speech_streamed.connect(func(delta: String) -> void:
		_streaming += delta
		say(_streaming, bubble_seconds(_streaming)))


## The villager's name.
func villager_name() -> String:
	return String(name)


## How long a line stays in its bubble.
static func bubble_seconds(text: String) -> float:
	return clampf(2.5 + text.length() * 0.045, 3.5, 7.5)


## Shows [param text] in the bubble for [param seconds].
func say(text: String, seconds: float) -> void:
	text = text.strip_edges()
	if text == "":
		return
	if text.length() > 160:
		text = text.substr(0, 157) + "…"
	var font := _bubble_text.get_theme_font("font")
	var width := font.get_string_size(text, HORIZONTAL_ALIGNMENT_LEFT, -1, 14).x + 2.0
	_bubble_text.custom_minimum_size.x = minf(width, BUBBLE_WIDTH)
	_bubble_text.text = text
	_bubble.reset_size()
	_bubble_left = seconds
	if not _bubble.visible:
		_bubble_slot = -1
	_bubble.visible = true
	_bubble.modulate.a = 1.0
	place_bubble([])


## The line in the bubble while it shows, else `""`.
func bubble_text() -> String:
	return _bubble_text.text if _bubble.visible else ""


## Whether a click at [param global_point] picks this villager.
func picks(global_point: Vector2) -> bool:
	return global_position.distance_to(global_point + Vector2(0, 8)) <= PICK_RADIUS


func _process(delta: float) -> void:
	_clock += delta
	var moved := position.distance_to(_last_position)
	_last_position = position
	_walking = clampf(_walking + (delta * 4.0 if moved > 0.01 else -delta * 4.0), 0.0, 1.0)
	if _bubble.visible:
		_bubble_left -= delta
		if _bubble_left <= 0.0:
			_bubble.visible = false
		else:
			_bubble.modulate.a = clampf(_bubble_left / 0.4, 0.0, 1.0)
	if _walking > 0.0 or state == "thinking" or state == "listening":
		queue_redraw()


## Places the bubble where it covers none of [param taken] (global rectangles of the bubbles
## placed before it), and adds its own: above the head (centred, else shifted aside), else below
## the feet, always inside [member bounds]; where it was last frame when that is still free;
## where it covers the least when no place is free.
func place_bubble(taken: Array[Rect2]) -> void:
	if not _bubble.visible:
		return
	var bubble_size := _bubble.get_combined_minimum_size()
	_bubble.size = bubble_size
	var above := -58.0 - bubble_size.y
	var below := 62.0
	var half := bubble_size.x * 0.5
	var candidates: Array[Vector2] = [Vector2(-half, above), Vector2(-half - half + 24.0, above),
		Vector2(-24.0, above), Vector2(-half, below), Vector2(-half - half + 24.0, below),
		Vector2(-24.0, below)]
	var order: Array[int] = [0, 1, 2, 3, 4, 5]
	if _bubble_slot >= 0:
		order.erase(_bubble_slot)
		order.push_front(_bubble_slot)
	# The first place that covers no other bubble, else the one that covers the least.
	var chosen := order[0]
	var least := INF
	for i in order:
		var trial := _inside(Rect2(global_position + candidates[i], bubble_size))
		var covered := 0.0
		for other in taken:
			covered += other.grow(4.0).intersection(trial).get_area()
		if covered < least:
			chosen = i
			least = covered
		if covered == 0.0:
			break
	_bubble_slot = chosen
	var rect := _inside(Rect2(global_position + candidates[chosen], bubble_size))
	taken.append(rect)
	var at := (rect.position - global_position).round()
	if at != _bubble.position:
		_bubble.position = at
		_bubble.queue_redraw()


## [param rect] moved inside [member bounds].
func _inside(rect: Rect2) -> Rect2:
	var lo := bounds.position + Vector2(4, 4)
	var hi := bounds.end - Vector2(4, 4) - rect.size
	rect.position = Vector2(clampf(rect.position.x, lo.x, maxf(lo.x, hi.x)),
		clampf(rect.position.y, lo.y, maxf(lo.y, hi.y)))
	return rect


## The bubble's tail, towards the head (drawn by the bubble, in its coordinates).
func _draw_tail() -> void:
	var size := _bubble.size
	var head := -_bubble.position + Vector2(0, -30)
	var fill := Color(0.98, 0.98, 0.99, 0.96)
	if _bubble.position.y < 0:
		var x := clampf(head.x, 14.0, size.x - 14.0)
		_bubble.draw_colored_polygon(PackedVector2Array([Vector2(x - 7, size.y - 1),
			Vector2(x + 7, size.y - 1), Vector2(lerpf(x, head.x, 0.5), size.y + 12)]), fill)
	else:
		var x := clampf(head.x, 14.0, size.x - 14.0)
		_bubble.draw_colored_polygon(PackedVector2Array([Vector2(x - 6, 1), Vector2(x + 6, 1),
			Vector2(lerpf(x, head.x, 0.5), -7)]), fill)


func _draw() -> void:
	var bob := sin(_clock * 12.0) * 2.0 * _walking
	# Shadow and, when picked or hovered, a ring at the feet.
	_ellipse(Vector2(0, 14), Vector2(17, 6), Color(0, 0, 0, 0.3))
	if selected or hovered:
		var ring := DemoUi.ACCENT if selected else Color(1, 1, 1, 0.7)
		_ellipse_outline(Vector2(0, 14), Vector2(22, 8), ring, 2.5)
	# Legs, body, head.
	var stride := sin(_clock * 12.0) * 4.0 * _walking
	draw_line(Vector2(-4, 4), Vector2(-4 - stride, 14), OUTLINE, 4.0, true)
	draw_line(Vector2(4, 4), Vector2(4 + stride, 14), OUTLINE, 4.0, true)
	var body := Rect2(-11, -14 + bob, 22, 22)
	var style := StyleBoxFlat.new()
	style.bg_color = color
	style.border_color = OUTLINE
	style.set_border_width_all(2)
	style.corner_radius_top_left = 11
	style.corner_radius_top_right = 11
	style.corner_radius_bottom_left = 5
	style.corner_radius_bottom_right = 5
	style.anti_aliasing = true
	draw_style_box(style, body)
	draw_circle(Vector2(0, -22 + bob), 9.5, OUTLINE)
	draw_circle(Vector2(0, -22 + bob), 8.0, SKIN)
	draw_circle(Vector2(-3, -23 + bob), 1.3, OUTLINE)
	draw_circle(Vector2(3, -23 + bob), 1.3, OUTLINE)
	# Thinking: three dots that take turns.
	if state == "thinking" or state == "listening":
		var plate := Rect2(-19, -52 + bob, 38, 16)
		var back := StyleBoxFlat.new()
		back.bg_color = Color(0.1, 0.11, 0.14, 0.85)
		back.set_corner_radius_all(8)
		draw_style_box(back, plate)
		for i in 3:
			var on := int(_clock * 4.0) % 3 == i
			var dot := DemoUi.ACCENT if state == "thinking" else DemoUi.BLUE
			draw_circle(plate.position + Vector2(9 + i * 10, 8), 3.0 if on else 2.2,
				dot if on else dot.darkened(0.45))


func _ellipse(center: Vector2, radii: Vector2, fill: Color) -> void:
	draw_colored_polygon(_ellipse_points(center, radii), fill)


func _ellipse_outline(center: Vector2, radii: Vector2, line: Color, width: float) -> void:
	var points := _ellipse_points(center, radii)
	points.append(points[0])
	draw_polyline(points, line, width, true)


func _ellipse_points(center: Vector2, radii: Vector2) -> PackedVector2Array:
	var points := PackedVector2Array()
	for i in 28:
		var a := TAU * i / 28.0
		points.append(center + Vector2(cos(a) * radii.x, sin(a) * radii.y))
	return points
