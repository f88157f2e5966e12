## The bar across the top of each showcase scene: the scene's title and a line about it, which
## brain its agents think with, and the way back to the menu (the Menu button, or Esc).
extends PanelContainer

const DemoUi := preload("res://demo/demo_ui.gd")
const DemoBrain := preload("res://demo/demo_brain.gd")

## The scene's title.
@export var title := "":
	set(value):
		title = value
		if _title:
			_title.text = value
## One line about the scene, under the title.
@export var subtitle := "":
	set(value):
		subtitle = value
		if _subtitle:
			_subtitle.text = value

var _title: Label
var _subtitle: Label
var _brain: Label
var _dot: ColorRect
var _back: Button


func _ready() -> void:
	set_anchors_and_offsets_preset(Control.PRESET_TOP_WIDE)
	custom_minimum_size.y = 64
	var style := DemoUi.box(Color(0.086, 0.098, 0.13), DemoUi.PANEL_BORDER, 0, 0, 20, 8)
	style.border_width_bottom = 1
	add_theme_stylebox_override("panel", style)

	var row := HBoxContainer.new()
	row.add_theme_constant_override("separation", 16)
	add_child(row)
	var texts := VBoxContainer.new()
	texts.add_theme_constant_override("separation", -2)
	texts.alignment = BoxContainer.ALIGNMENT_CENTER
	texts.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	row.add_child(texts)
	_title = DemoUi.label(title, 24)
	texts.add_child(_title)
	_subtitle = DemoUi.label(subtitle, 14, DemoUi.DIM)
	_subtitle.text_overrun_behavior = TextServer.OVERRUN_TRIM_ELLIPSIS
	texts.add_child(_subtitle)

	var chip := PanelContainer.new()
	chip.size_flags_vertical = Control.SIZE_SHRINK_CENTER
	chip.add_theme_stylebox_override("panel", DemoUi.box(Color(0.055, 0.063, 0.085), DemoUi.PANEL_BORDER, 14, 1, 12, 5))
	row.add_child(chip)
	var chip_row := HBoxContainer.new()
	chip_row.add_theme_constant_override("separation", 8)
	chip.add_child(chip_row)
	_dot = ColorRect.new()
	_dot.custom_minimum_size = Vector2(9, 9)
	_dot.size_flags_vertical = Control.SIZE_SHRINK_CENTER
	_dot.color = DemoUi.GREEN
	chip_row.add_child(_dot)
	_brain = DemoUi.label("", 14)
	_brain.text_overrun_behavior = TextServer.OVERRUN_TRIM_ELLIPSIS
	chip_row.add_child(_brain)

	_back = Button.new()
	_back.text = "Menu (Esc)"
	_back.focus_mode = Control.FOCUS_NONE
	_back.size_flags_vertical = Control.SIZE_SHRINK_CENTER
	_back.tooltip_text = "Back to the showcase menu"
	_back.pressed.connect(go_back)
	row.add_child(_back)
	set_brain("Brain: scripted (offline)")


## Shows the brain: [param text] (`Brain: scripted (offline)`), green for the offline brain,
## amber for a model, red for a configuration that did not work.
func set_brain(text: String, kind := "offline") -> void:
	_brain.text = text
	_brain.tooltip_text = text
	# Long texts (a configuration error) are cut; the tooltip has all of it.
	var font := _brain.get_theme_font("font")
	_brain.custom_minimum_size.x = minf(font.get_string_size(text, HORIZONTAL_ALIGNMENT_LEFT, -1, 14).x + 2.0, 460.0)
	_brain.mouse_filter = Control.MOUSE_FILTER_PASS
	_dot.color = {"offline": DemoUi.GREEN, "model": DemoUi.ACCENT}.get(kind, DemoUi.RED)
	if kind == "error":
		_brain.add_theme_color_override("font_color", DemoUi.RED)


## Shows the brain [method DemoBrain.resolve] found (or the scripted brain when [param resolved]
## is empty: a tour that always plays offline).
func show_brain(resolved: Dictionary, note := "") -> void:
	if resolved.is_empty():
		set_brain("Brain: scripted (offline%s)" % ("; " + note if note != "" else ""))
	elif resolved.error != "":
		set_brain(DemoBrain.describe(resolved), "error")
	elif resolved.brain == null:
		set_brain(DemoBrain.describe(resolved))
	else:
		set_brain(DemoBrain.describe(resolved), "model")


func _unhandled_input(event: InputEvent) -> void:
	if event.is_action_pressed("ui_cancel") and not event.is_echo():
		get_viewport().set_input_as_handled()
		go_back()


## Back to the menu.
func go_back() -> void:
	get_tree().change_scene_to_file.call_deferred(DemoUi.MENU_SCENE)
