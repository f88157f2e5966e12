## The showcase's look, shared by the menu and its three scenes: colours, a theme (buttons, line
## edits, panels, font sizes), panel styles, and the screenshot helpers every scene uses for
## `--screenshot PATH` (save the window, and print the texts of its visible labels and buttons
## as one `SHOT_LABELS: a | b | c` line, which `cargo xtask test` checks).
extends RefCounted

const MENU_SCENE := "res://demo/menu.tscn"

const BG := Color(0.067, 0.078, 0.102)
const PANEL := Color(0.106, 0.122, 0.157)
const PANEL_BORDER := Color(0.2, 0.227, 0.29)
const TEXT := Color(0.93, 0.94, 0.96)
const DIM := Color(0.6, 0.64, 0.72)
const ACCENT := Color(0.98, 0.74, 0.36)
const BLUE := Color(0.5, 0.76, 1.0)
const GREEN := Color(0.5, 0.88, 0.55)
const RED := Color(1.0, 0.47, 0.42)

## Deletes the SQLite database at [param path] ([code]user://[/code] globalized) with its WAL,
## shared-memory and journal files, so a scene starts from a fresh one.
static func remove_database(path: String) -> void:
	for suffix in ["", "-wal", "-shm", "-journal"]:
		var file := ProjectSettings.globalize_path(path + suffix)
		if FileAccess.file_exists(file):
			DirAccess.remove_absolute(file)


## The prefix of the labels line printed for a screenshot.
const LABELS_PREFIX := "SHOT_LABELS: "

static var _theme: Theme = null


## The theme of the demo scenes (set it on a scene's root Control).
static func theme() -> Theme:
	if _theme != null:
		return _theme
	var t := Theme.new()
	t.default_font_size = 16
	t.set_color("font_color", "Label", TEXT)

	t.set_stylebox("normal", "Button", box(Color(0.165, 0.185, 0.24), Color(0.28, 0.31, 0.4), 8, 1, 14, 7))
	t.set_stylebox("hover", "Button", box(Color(0.21, 0.235, 0.3), ACCENT.darkened(0.15), 8, 1, 14, 7))
	t.set_stylebox("pressed", "Button", box(Color(0.13, 0.145, 0.19), ACCENT, 8, 1, 14, 7))
	t.set_stylebox("disabled", "Button", box(Color(0.13, 0.14, 0.17), Color(0.2, 0.22, 0.27), 8, 1, 14, 7))
	var focus := box(Color(0, 0, 0, 0), ACCENT, 8, 2, 14, 7)
	focus.draw_center = false
	t.set_stylebox("focus", "Button", focus)
	for key in ["font_color", "font_focus_color"]:
		t.set_color(key, "Button", TEXT)
	t.set_color("font_hover_color", "Button", Color.WHITE)
	t.set_color("font_pressed_color", "Button", ACCENT)
	t.set_color("font_disabled_color", "Button", DIM.darkened(0.3))

	t.set_stylebox("normal", "LineEdit", box(Color(0.055, 0.063, 0.085), PANEL_BORDER, 6, 1, 10, 6))
	var edit_focus := box(Color(0, 0, 0, 0), ACCENT.darkened(0.1), 6, 1, 10, 6)
	edit_focus.draw_center = false
	t.set_stylebox("focus", "LineEdit", edit_focus)
	t.set_color("font_color", "LineEdit", TEXT)
	t.set_color("font_placeholder_color", "LineEdit", DIM.darkened(0.15))
	t.set_color("caret_color", "LineEdit", ACCENT)

	t.set_stylebox("panel", "PanelContainer", box(PANEL, PANEL_BORDER, 10, 1, 14, 12))
	t.set_stylebox("panel", "Panel", box(PANEL, PANEL_BORDER, 10, 1, 0, 0))
	t.set_color("default_color", "RichTextLabel", TEXT)
	_theme = t
	return t


## A rounded box: background, border colour, corner radius, border width, margins (x, y).
static func box(bg: Color, border: Color, radius := 10, border_width := 1, margin_x := 12,
		margin_y := 10) -> StyleBoxFlat:
	var style := StyleBoxFlat.new()
	style.bg_color = bg
	style.border_color = border
	style.set_border_width_all(border_width)
	style.set_corner_radius_all(radius)
	style.content_margin_left = margin_x
	style.content_margin_right = margin_x
	style.content_margin_top = margin_y
	style.content_margin_bottom = margin_y
	style.anti_aliasing = true
	return style


## A Label in the demo's style.
static func label(text: String, size := 16, color := TEXT) -> Label:
	var l := Label.new()
	l.text = text
	l.add_theme_font_size_override("font_size", size)
	l.add_theme_color_override("font_color", color)
	return l


# -- Screenshots --------------------------------------------------------------------------------


## The value after `--screenshot` in the user arguments (after `--`), or `""`.
static func screenshot_path() -> String:
	return arg_value("--screenshot")


## The value after [param flag] in the user arguments, or `""`.
static func arg_value(flag: String) -> String:
	var args := OS.get_cmdline_user_args()
	for i in args.size() - 1:
		if args[i] == flag:
			return args[i + 1]
	return ""


## The texts of the visible Labels and Buttons under [param root] (internal children too), in
## tree order, each once, newlines as spaces.
static func visible_texts(root: Node) -> PackedStringArray:
	var out := PackedStringArray()
	_collect(root, out)
	return out


static func _collect(node: Node, out: PackedStringArray) -> void:
	if node is CanvasItem and not (node as CanvasItem).is_visible_in_tree():
		return
	var text := ""
	if node is Label:
		text = (node as Label).text
	elif node is Button:
		text = (node as Button).text
	text = " ".join(text.replace("|", "/").split("\n", false)).strip_edges()
	if text != "" and not text in out:
		out.append(text)
	for child in node.get_children(true):
		_collect(child, out)


## Prints the `SHOT_LABELS:` line of [param root], then saves its viewport as a PNG at
## [param path] after the next frame is drawn. Returns whether the file was written.
static func save_screenshot(root: Node, path: String) -> bool:
	var tree := root.get_tree()
	for i in 3:
		await tree.process_frame
	await RenderingServer.frame_post_draw
	print(LABELS_PREFIX + " | ".join(visible_texts(root)))
	var image := root.get_viewport().get_texture().get_image()
	if image == null or image.is_empty():
		print("no image to save (headless?)")
		return false
	var error := image.save_png(path)
	print("screenshot: %s (%s)" % [path, error_string(error)])
	return error == OK
