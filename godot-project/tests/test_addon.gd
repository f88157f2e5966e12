## The addon as the editor shows it: every class the extension registers has an icon listed in
## `godot_agents.gdextension` whose SVG loads, and the GDScript classes of the addon carry theirs.
extends "res://tests/test_base.gd"

const GDEXTENSION := "res://addons/godot_agents/godot_agents.gdextension"

## The classes the library registers (also found through ClassDB below, so a new class without
## an icon fails).
const CLASSES := ["AgentRuntime", "AgentConfig", "AgentBrain", "AgentApp", "AgentAction",
	"Campaign", "GameTools"]


func _extension_classes() -> Array:
	var found := []
	for name in ClassDB.get_class_list():
		if ClassDB.class_get_api_type(name) == ClassDB.API_EXTENSION:
			found.append(name)
	found.sort()
	return found


func test_every_class_has_an_icon_that_loads() -> void:
	var config := ConfigFile.new()
	assert_eq(config.load(GDEXTENSION), OK)
	var classes := _extension_classes()
	for name in CLASSES:
		assert_contains(classes, name, "the library registers %s" % name)
	for name in classes:
		assert_true(config.has_section_key("icons", name), "%s has an icon in the .gdextension" % name)
		var path: String = config.get_value("icons", name, "")
		var text := FileAccess.get_file_as_string(path)
		assert_true(text.begins_with("<svg"), "%s: %s is an SVG" % [name, path])
		var image := Image.new()
		assert_eq(image.load_svg_from_string(text, 1.0), OK, "%s's icon loads" % name)
		assert_eq(image.get_size(), Vector2i(16, 16), "%s's icon is 16×16" % name)


func test_the_chat_panel_script_has_its_icon() -> void:
	var source := FileAccess.get_file_as_string("res://addons/godot_agents/agent_chat_panel.gd")
	assert_contains(source, "@icon(\"res://addons/godot_agents/icons/agent_chat_panel.svg\")")
