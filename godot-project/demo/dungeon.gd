## A tabletop campaign ([Campaign]) in a small dungeon, with Morgana, a scripted agent of an
## [AgentRuntime], as the game master: the map (rooms laid out by layer, one-way doors as arrows,
## two-way passages as double arrows), the party as coloured tokens with their hp in the room they
## stand in, and the turn log (what the player said, the GM's line, the applied calls; failures in
## red). Type what your character does in the line edit; the offline GM understands "where can I
## go?", a room's name or id one step away, "I drink a potion", "I step on a trap" and "explore
## deeper" (rust/core/src/brain/scripted/gm.rs).
##
## With a display:
##   godot --path godot-project res://demo/dungeon.tscn
## Headless (`cargo xtask demo` runs it): a scripted tour through every GM tool, printing each
## turn, then checks (every turn completed, a move and a map_generate applied, pc_001 in a
## generated room, the saved file loads back equal, the turn log is complete) and quits with 0
## (`DUNGEON DEMO OK`), or 1 (`DUNGEON DEMO FAILED:` and the problems):
##   godot --headless --path godot-project res://demo/dungeon.tscn
## Screenshot of the tour under a virtual display (Xvfb):
##   xvfb-run -a -s "-screen 0 1280x720x24" godot --rendering-driver opengl3 \
##       --path godot-project res://demo/dungeon.tscn -- --tour --screenshot /tmp/dungeon.png
## User arguments: `--tour` (run the tour with a display too), `--seconds N` (quit after N
## seconds instead), `--screenshot PATH` (save the window as a PNG just before quitting, and
## print its visible labels as a `SHOT_LABELS:` line).
##
## Part of the showcase (demo/menu.tscn): the Menu button or Esc go back to the menu. When you
## play, Morgana thinks with the demo brain (demo/demo_brain.gd: the offline `scripted` GM unless
## a model is configured); the tour always plays on the scripted GM, whose turns it can check.
extends Control

const DemoUi := preload("res://demo/demo_ui.gd")
const DemoBrain := preload("res://demo/demo_brain.gd")

const DB_PATH := "user://demo_dungeon.db"
const CAMPAIGN_DIR := "user://demo_dungeon"
const CAMPAIGN_PATH := CAMPAIGN_DIR + "/campaign.json"
const PARTY := ["pc_001", "pc_002"]
const GM_NAME := "Morgana"
## Longest wait for one turn of the tour, in seconds.
const TURN_SECONDS := 30.0

## Token colours of the party (others get EXTRA_COLORS in turn).
const TOKEN_COLORS := {"pc_001": Color(1.0, 0.68, 0.3), "pc_002": Color(0.45, 0.85, 0.95)}
const EXTRA_COLORS := [Color(0.78, 0.62, 1.0), Color(0.6, 1.0, 0.55)]
const ONE_WAY_COLOR := Color(0.95, 0.78, 0.42)
const TWO_WAY_COLOR := Color(0.55, 0.66, 0.82)
const GM_COLOR := Color(0.82, 0.72, 1.0)
const ACTION_COLOR := Color(0.7, 0.74, 0.8)
const FAILURE_COLOR := Color(1.0, 0.45, 0.4)
const DIM_COLOR := Color(0.55, 0.58, 0.65)

@onready var runtime: AgentRuntime = $AgentRuntime
@onready var map: Panel = $Layout/Left/Map
@onready var status: Label = $Layout/Left/Status
@onready var log_view: RichTextLabel = $Layout/Right/Log
@onready var actor_pick: OptionButton = $Layout/Right/Input/Actor
@onready var say: LineEdit = $Layout/Right/Input/Say
@onready var act_button: Button = $Layout/Right/Input/Act
@onready var header: PanelContainer = $Header

var campaign: Campaign
var gm_id := ""
## The turn entries seen (turn_completed), oldest first.
var entries: Array = []
## The messages of turn_failed.
var failures: Array = []
## [actor, old, new] of hp_changed not yet matched to a logged hp_delta.
var hp_events: Array = []
## Ids of the areas map_generate created.
var generated: Array = []
## What went wrong (the tour's checks).
var problems: Array[String] = []
## The demo brain (DemoBrain.resolve()); empty on the tour, which plays offline.
var brain := {}


func _enter_tree() -> void:
	# Runs before the runtime's _ready starts it: a fresh database (the turn numbers start at
	# turn_0001 again) and no campaign files of an earlier run.
	DemoUi.remove_database(DB_PATH)
	var dir := ProjectSettings.globalize_path(CAMPAIGN_DIR)
	if DirAccess.dir_exists_absolute(dir):
		for file in DirAccess.get_files_at(dir):
			DirAccess.remove_absolute(dir.path_join(file))
	$AgentRuntime.database_path = DB_PATH
	if not (DisplayServer.get_name() == "headless" or "--tour" in OS.get_cmdline_user_args()):
		# You play: Morgana thinks with the demo brain (read when the runtime starts).
		brain = DemoBrain.resolve()
		if brain.brain != null:
			$AgentRuntime.default_brain_config = brain.brain


func _ready() -> void:
	theme = DemoUi.theme()
	if brain.is_empty() and DemoBrain.resolve().brain != null:
		header.show_brain(brain, "the tour ignores the configured model")
	else:
		header.show_brain(brain)
	var style := StyleBoxFlat.new()
	style.bg_color = Color(0.07, 0.08, 0.1)
	style.border_color = Color(0.2, 0.22, 0.27)
	style.set_border_width_all(1)
	style.set_corner_radius_all(6)
	map.add_theme_stylebox_override("panel", style)
	map.draw.connect(_draw_map)
	map.resized.connect(map.queue_redraw)
	for id in PARTY:
		actor_pick.add_item(id)
	say.text_submitted.connect(func(text): _act(text, PARTY[actor_pick.selected]))
	act_button.pressed.connect(func(): _act(say.text, PARTY[actor_pick.selected]))

	campaign = Campaign.new()
	campaign.reset(PackedStringArray(PARTY))
	campaign.actor_moved.connect(func(_id, _from, _to): _refresh())
	campaign.hp_changed.connect(func(id, old, new):
		hp_events.append([id, old, new])
		_refresh())
	campaign.actor_state_changed.connect(func(_id, _old, _new): _refresh())
	campaign.map_generated.connect(func(ids, _parent):
		generated.append_array(Array(ids))
		_refresh())
	campaign.turn_completed.connect(_on_turn_completed)
	campaign.turn_failed.connect(_on_turn_failed)
	if not campaign.save_file(CAMPAIGN_PATH):
		problems.append("save_file: " + campaign.get_last_error())
	gm_id = runtime.spawn_agent({"name": GM_NAME, "role": "game master",
		"prompt": "You are the game master of a dungeon crawl. Be vivid and brief."})
	if gm_id == "":
		problems.append("spawn: " + runtime.get_last_error())
		if brain.get("brain") != null:
			# You play, with a configured model that did not work (a key not set, …): say so.
			_log_line(_color(FAILURE_COLOR, _esc("%s could not join: %s" % [GM_NAME, runtime.get_last_error()])))
			header.set_brain("Brain: %s — refused" % brain.label, "error")
	elif not campaign.attach_gm(runtime, gm_id):
		problems.append("attach_gm: " + campaign.get_last_error())
	if gm_id != "":
		_log_line("[color=#%s]%s is the game master. The party (%s) stands in the Starting Area.[/color]"
				% [DIM_COLOR.to_html(false), GM_NAME, ", ".join(PARTY)])
	_refresh()
	_finish()


## A turn for `actor` (from the line edit, or the tour).
func _act(text: String, actor: String) -> bool:
	text = text.strip_edges()
	if text == "":
		return false
	if not campaign.take_turn(text, actor):
		_log_line(_color(FAILURE_COLOR, _esc("Cannot act: " + campaign.get_last_error())))
		return false
	say.clear()
	_refresh()
	return true


func _on_turn_completed(entry: Dictionary) -> void:
	entries.append(entry)
	var who: String = entry.actor_id
	_log_line("[b]%s[/b] %s: \"%s\"" % [_color(DIM_COLOR, entry.turn_id),
		_color(_token_color(who), "[b]%s[/b]" % who), _esc(entry.user_input)])
	_log_line("    %s %s" % [_color(GM_COLOR, "[b]%s:[/b]" % GM_NAME), _esc(entry.assistant_text)])
	print("%s %s: \"%s\"" % [entry.turn_id, who, entry.user_input])
	print("    %s (%s): %s" % [GM_NAME, entry.dialog_type, entry.assistant_text])
	var actions: Array = entry.applied_actions
	if actions.is_empty():
		print("    applied: nothing")
	for action in actions:
		var line := _describe(action, who)
		_log_line("    " + _color(ACTION_COLOR, "• " + _esc(line)))
		print("    applied: " + line)
	var feedback: Variant = entry.tool_feedback
	if feedback is Dictionary:
		for failed in feedback.get("failed_calls", []):
			var line := "✗ %s %s (%s): %s" % [failed.tool, failed.status, failed.reason, failed.message]
			_log_line("    " + _color(FAILURE_COLOR, _esc(line)))
			print("    failed: " + line)
	_refresh()


func _on_turn_failed(message: String) -> void:
	failures.append(message)
	_log_line(_color(FAILURE_COLOR, _esc("The turn failed: " + message)))
	print("turn failed: " + message)
	_refresh()


## An applied call, compactly: `move pc_001 area_001 → area_002`, `hp pc_001 10 → 8`, …
func _describe(action: Dictionary, turn_actor: String) -> String:
	var args: Dictionary = action.args if action.args is Dictionary else {}
	var result: Dictionary = action.result if action.result is Dictionary else {}
	match action.tool:
		"move":
			return "move %s %s → %s" % [args.get("actor_id", turn_actor),
				result.get("from_area_id", "?"), result.get("to_area_id", "?")]
		"move_options":
			var ids: Array = result.get("options", []).map(func(o): return o.to_area_id)
			return "move_options %s: %s" % [args.get("actor_id", turn_actor),
				", ".join(ids) if not ids.is_empty() else "none"]
		"hp_delta":
			var target: String = args.get("target_character_id", turn_actor)
			var new_hp: int = result.get("new_hp", 0)
			var old_hp := new_hp - int(args.get("delta", 0))
			for i in hp_events.size():
				if hp_events[i][0] == target:
					old_hp = hp_events[i][1]
					hp_events.remove_at(i)
					break
			return "hp %s %d → %d" % [target, old_hp, new_hp]
		"map_generate":
			var ids: Array = result.get("created_area_ids", [])
			var parent: Variant = args.get("parent_area_id")
			var span: String = "%s…%s" % [ids[0], ids[-1]] if ids.size() > 1 else ", ".join(ids)
			return "map_generate under %s: %s (%d exits)" % [
				parent if parent is String else "the root", span, result.get("created_connections", 0)]
	return "%s %s" % [action.tool, JSON.stringify(args)]


func _refresh() -> void:
	map.queue_redraw()
	var areas := campaign.get_areas()
	var actors := campaign.get_actors()
	var parts: Array = []
	for id in PARTY:
		var a: Dictionary = actors.get(id, {})
		var where: Variant = a.get("position")
		var room: String = areas[where].name if where is String and areas.has(where) else "off the map"
		parts.append("%s in %s, %d hp%s" % [id, room, a.get("hp", 0),
			"" if a.get("character_state", "alive") == "alive" else " (%s)" % a.character_state])
	var state := "%s is deciding…" % GM_NAME if campaign.is_turn_running() else "%d turns" % entries.size()
	status.text = "%s\n%s · saved to %s" % [" · ".join(parts), state, CAMPAIGN_PATH]
	act_button.disabled = campaign.is_turn_running()


func _log_line(bbcode: String) -> void:
	log_view.append_text(bbcode + "\n")


func _color(color: Color, bbcode: String) -> String:
	return "[color=#%s]%s[/color]" % [color.to_html(false), bbcode]


## Text shown as it is (no BBCode).
func _esc(text: String) -> String:
	return text.replace("[", "\u0001").replace("]", "[rb]").replace("\u0001", "[lb]")


func _token_color(id: String) -> Color:
	if TOKEN_COLORS.has(id):
		return TOKEN_COLORS[id]
	return EXTRA_COLORS[maxi(PARTY.find(id), 0) % EXTRA_COLORS.size()]


# -- The map ------------------------------------------------------------------------------------


## The area's layer: 0 for a root area, one more than its parent's otherwise.
func _depth(id: String, areas: Dictionary, depth: Dictionary) -> int:
	if depth.has(id):
		return depth[id]
	depth[id] = 0  # a guard against a parent cycle
	var parent: Variant = areas[id].get("parent_area_id")
	if parent is String and areas.has(parent) and parent != id:
		depth[id] = _depth(parent, areas, depth) + 1
	return depth[id]


## Each area's box: layers as rows (top down), an area's children in its parent's order.
func _layout(map_size: Vector2, areas: Dictionary, box_h: float) -> Dictionary:
	var depth := {}
	var rows: Array = []
	for id in areas:
		var d := _depth(id, areas, depth)
		while rows.size() <= d:
			rows.append([])
		rows[d].append(id)
	var order := {}
	for row in rows:
		row.sort_custom(func(a, b):
			var pa: int = order.get(areas[a].get("parent_area_id"), -1)
			var pb: int = order.get(areas[b].get("parent_area_id"), -1)
			return pa < pb if pa != pb else a < b)
		for i in row.size():
			order[row[i]] = i
	var top := 44.0
	var row_h := minf(190.0, (map_size.y - top - 28.0) / maxf(rows.size(), 1))
	var height := minf(box_h, row_h - 36.0)
	var y0 := top + maxf(0.0, (map_size.y - top - 28.0 - row_h * rows.size()) * 0.5)
	var boxes := {}
	for d in rows.size():
		var row: Array = rows[d]
		var cell := map_size.x / row.size()
		var width := minf(168.0, cell - 26.0)
		for i in row.size():
			var center := Vector2(cell * (i + 0.5), y0 + row_h * (d + 0.5))
			boxes[row[i]] = {"rect": Rect2(center - Vector2(width, height) * 0.5, Vector2(width, height)),
				"row": d, "index": i}
	return boxes


func _draw_map() -> void:
	if campaign == null:
		return
	var font := ThemeDB.fallback_font
	var areas := campaign.get_areas()
	var actors := campaign.get_actors()
	var box_h := 46.0 + 20.0 * maxf(PARTY.size(), 1)
	var boxes := _layout(map.size, areas, box_h)

	# The legend.
	var y := 22.0
	_arrow(Vector2(14, y), Vector2(54, y), ONE_WAY_COLOR, false)
	map.draw_string(font, Vector2(62, y + 5), "one-way door", HORIZONTAL_ALIGNMENT_LEFT, -1, 13, DIM_COLOR)
	_arrow(Vector2(170, y), Vector2(210, y), TWO_WAY_COLOR, true)
	map.draw_string(font, Vector2(218, y + 5), "two-way passage", HORIZONTAL_ALIGNMENT_LEFT, -1, 13, DIM_COLOR)
	map.draw_string(font, Vector2(map.size.x - 250, y + 5), "%d rooms · %d doors" % [
		areas.size(), campaign.get_connections().size()], HORIZONTAL_ALIGNMENT_RIGHT, 236, 13, DIM_COLOR)

	# The doors.
	var edges := {}
	for c in campaign.get_connections():
		edges[c.from_area_id + ">" + c.to_area_id] = true
	for c in campaign.get_connections():
		var from: String = c.from_area_id
		var to: String = c.to_area_id
		if not (boxes.has(from) and boxes.has(to)):
			continue
		var both := edges.has(to + ">" + from)
		if both and from > to:
			continue  # drawn once, from the smaller id
		var a: Dictionary = boxes[from]
		var b: Dictionary = boxes[to]
		var color := TWO_WAY_COLOR if both else ONE_WAY_COLOR
		if a.row == b.row and absi(a.index - b.index) > 1:
			_arc(a.rect, b.rect, color, both)
		else:
			var start := _border(a.rect, b.rect.get_center())
			var end := _border(b.rect, a.rect.get_center())
			_arrow(start, end, color, both)

	# The rooms and the party.
	var here := {}
	for id in PARTY:
		var pos: Variant = actors.get(id, {}).get("position")
		if pos is String:
			if not here.has(pos):
				here[pos] = []
			here[pos].append(id)
	for id in boxes:
		var r: Rect2 = boxes[id].rect
		var area: Dictionary = areas[id]
		var occupied := here.has(id)
		var box := StyleBoxFlat.new()
		box.bg_color = Color(0.15, 0.17, 0.22) if area.get("parent_area_id") == null else Color(0.12, 0.18, 0.19)
		box.border_color = Color(0.85, 0.78, 0.5) if occupied else Color(0.36, 0.4, 0.48)
		box.set_border_width_all(2)
		box.set_corner_radius_all(10)
		map.draw_style_box(box, r)
		map.draw_string(font, r.position + Vector2(0, 19), area.name, HORIZONTAL_ALIGNMENT_CENTER,
			r.size.x, 14, Color(0.95, 0.95, 0.97))
		map.draw_string(font, r.position + Vector2(0, 34), id, HORIZONTAL_ALIGNMENT_CENTER,
			r.size.x, 11, DIM_COLOR)
		var k := 0
		for actor_id in here.get(id, []):
			var actor: Dictionary = actors[actor_id]
			var row_y := r.position.y + 52.0 + 20.0 * k
			if row_y > r.end.y - 4:
				break
			var color := _token_color(actor_id)
			var dying: bool = actor.get("character_state", "alive") != "alive"
			map.draw_circle(Vector2(r.position.x + 16, row_y - 4), 7.0, color)
			map.draw_arc(Vector2(r.position.x + 16, row_y - 4), 7.5, 0, TAU, 24,
				FAILURE_COLOR if dying else Color(0.05, 0.05, 0.07), 1.5, true)
			var label := "%s  %d hp%s" % [actor_id, actor.get("hp", 0), " dying" if dying else ""]
			map.draw_string(font, Vector2(r.position.x + 28, row_y), label, HORIZONTAL_ALIGNMENT_LEFT,
				r.size.x - 32, 13, FAILURE_COLOR if dying else color)
			k += 1


## Where the line from the centre of `rect` towards `toward` leaves it.
func _border(rect: Rect2, toward: Vector2) -> Vector2:
	var c := rect.get_center()
	var d := toward - c
	if d.is_zero_approx():
		return c
	var t := INF
	if absf(d.x) > 0.001:
		t = minf(t, rect.size.x * 0.5 / absf(d.x))
	if absf(d.y) > 0.001:
		t = minf(t, rect.size.y * 0.5 / absf(d.y))
	return c + d * t


## A door from `from` to `to` (a head at both ends when `both`).
func _arrow(from: Vector2, to: Vector2, color: Color, both: bool) -> void:
	var d := (to - from).normalized()
	var start := from + d * (9.0 if both else 2.0)
	var end := to - d * 9.0
	map.draw_line(start, end, color, 2.0, true)
	_head(to, d, color)
	if both:
		_head(from, -d, color)


## A door between two rooms of a row that are not side by side: an arc below the row.
func _arc(a: Rect2, b: Rect2, color: Color, both: bool) -> void:
	var p0 := Vector2(a.get_center().x + (8.0 if b.position.x > a.position.x else -8.0), a.end.y)
	var p2 := Vector2(b.get_center().x, b.end.y)
	var p1 := (p0 + p2) * 0.5 + Vector2(0, 26.0 + 0.05 * absf(p2.x - p0.x))
	var points := PackedVector2Array()
	for i in 21:
		var t := i / 20.0
		points.append(p0.lerp(p1, t).lerp(p1.lerp(p2, t), t))
	map.draw_polyline(points, color, 2.0, true)
	_head(p2, (p2 - points[-3]).normalized(), color)
	if both:
		_head(p0, (p0 - points[2]).normalized(), color)


func _head(tip: Vector2, d: Vector2, color: Color) -> void:
	var n := Vector2(-d.y, d.x)
	map.draw_colored_polygon(PackedVector2Array([tip, tip - d * 11.0 + n * 5.5,
		tip - d * 11.0 - n * 5.5]), color)


# -- Quitting, and the tour ---------------------------------------------------------------------


func _finish() -> void:
	var args := OS.get_cmdline_user_args()
	var headless := DisplayServer.get_name() == "headless"
	var tour := headless or "--tour" in args
	var seconds := 0.0
	var screenshot := ""
	for i in args.size() - 1:
		if args[i] == "--seconds":
			seconds = float(args[i + 1])
			tour = false
		elif args[i] == "--screenshot":
			screenshot = args[i + 1]
	if tour:
		if problems.is_empty():
			await _tour(0.0 if headless else 0.35)
	elif seconds > 0.0:
		await get_tree().create_timer(seconds).timeout
	else:
		return
	if screenshot != "":
		await DemoUi.save_screenshot(self, screenshot)
	if not tour:
		get_tree().quit()
		return
	print("")
	if problems.is_empty():
		print("DUNGEON DEMO OK: %d GM turns by %s (move, move_options, hp_delta, map_generate), %s saved and loaded back"
				% [entries.size(), GM_NAME, CAMPAIGN_PATH])
	else:
		print("DUNGEON DEMO FAILED:")
		for problem in problems:
			print("  " + problem)
	get_tree().quit(0 if problems.is_empty() else 1)


## Every GM tool: the ways out, a move, a new layer under the room, a move into it, a trap, a
## potion, and a turn of pc_002.
func _tour(pause: float) -> void:
	print("Dungeon: %s (scripted) is the GM of %s; party %s" % [GM_NAME, CAMPAIGN_PATH, ", ".join(PARTY)])
	print("")
	var turns := [
		["pc_001", "Where can I go?"],
		["pc_001", "I go to the side room"],
		["pc_001", "Let's explore deeper"],
		["pc_001", "Where can I go?"],
		["pc_001", ""],  # into the new layer's entry, by its name
		["pc_001", "I step on a trap"],
		["pc_001", "I drink a potion"],
		["pc_002", "I go to the side room too"],
		["pc_002", "I drink a potion"],
	]
	var taken := 0
	for turn in turns:
		var actor: String = turn[0]
		var text: String = turn[1]
		if text == "":
			if generated.is_empty():
				problems.append("no area was generated to move into")
				continue
			var entry_id: String = generated[0]
			var areas := campaign.get_areas()
			for id in generated:
				if areas[id].name.ends_with("Entry"):
					entry_id = id
			text = "I climb down into the %s" % areas[entry_id].name
		if pause > 0.0:
			actor_pick.select(PARTY.find(actor))
			say.text = text
			await get_tree().create_timer(pause).timeout
		var before := entries.size() + failures.size()
		if not _act(text, actor):
			problems.append("take_turn(\"%s\", %s): %s" % [text, actor, campaign.get_last_error()])
			continue
		taken += 1
		if not await _until(func(): return entries.size() + failures.size() > before,
				"turn \"%s\"" % text):
			return
		print("")
	_check(taken)


func _check(taken: int) -> void:
	var tools := {}
	for entry in entries:
		for action in entry.applied_actions:
			tools[action.tool] = tools.get(action.tool, 0) + 1
	var actors := campaign.get_actors()
	var pc1: Dictionary = actors.get("pc_001", {})
	print("-- summary --")
	print("turns: %d completed, %d failed; applied calls: %s" % [entries.size(), failures.size(),
		", ".join(tools.keys().map(func(t): return "%s ×%d" % [t, tools[t]]))])
	print("rooms: %d (generated: %s); doors: %d" % [campaign.get_areas().size(),
		", ".join(generated), campaign.get_connections().size()])
	for id in PARTY:
		var a: Dictionary = actors.get(id, {})
		print("%s: %s, %d hp, %s" % [id, a.get("position"), a.get("hp", 0), a.get("character_state", "?")])

	if entries.size() != taken or not failures.is_empty():
		problems.append("%d of %d turns completed (failed: %s)" % [entries.size(), taken, failures])
	for tool in ["move", "move_options", "hp_delta", "map_generate"]:
		if not tools.has(tool):
			problems.append("no %s was applied" % tool)
	if pc1.get("position") not in generated:
		problems.append("pc_001 is in %s, not in a generated area %s" % [pc1.get("position"), generated])
	if pc1.get("hp", 0) != 11:
		problems.append("pc_001 has %s hp, expected 11 (10 − 2 + 3)" % pc1.get("hp"))
	var log_size := campaign.get_turn_log().size()
	if log_size != taken:
		problems.append("get_turn_log() has %d turns, expected %d" % [log_size, taken])
	var back := Campaign.new()
	if not back.load_file(CAMPAIGN_PATH):
		problems.append("load_file(%s): %s" % [CAMPAIGN_PATH, back.get_last_error()])
	else:
		if back.to_json() != campaign.to_json():
			problems.append("the campaign loaded back from %s differs from the one played" % CAMPAIGN_PATH)
		if back.get_turn_log().size() != taken:
			problems.append("the turn log beside the file has %d turns, expected %d"
				% [back.get_turn_log().size(), taken])
		print("loaded back: %s, %d rooms, %d turns in turn_log.jsonl" % [CAMPAIGN_PATH,
			back.get_areas().size(), back.get_turn_log().size()])


func _until(done: Callable, what: String) -> bool:
	var deadline := Time.get_ticks_msec() + int(TURN_SECONDS * 1000)
	while not done.call():
		if Time.get_ticks_msec() > deadline:
			problems.append("%s did not complete within %d s" % [what, TURN_SECONDS])
			return false
		await get_tree().process_frame
	return true
