## The addon's README lists the real API: for `AgentRuntime`, every method and signal ClassDB
## lists (and nothing that is not there), and every property; for `AgentConfig`, every property.
## A method or signal added without a line in the README fails here, as a stale name does.
extends "res://tests/test_base.gd"

const README := "addons/godot_agents/README.md"

var _text := ""


func before_each() -> void:
	if _text.is_empty():
		var root := ProjectSettings.globalize_path("res://").path_join("..").simplify_path()
		_text = FileAccess.get_file_as_string(root.path_join(README))


## The paragraph that starts with `head` (up to the next blank line).
func _paragraph(head: String) -> String:
	var start := _text.find("\n" + head)
	if start < 0:
		return ""
	var end := _text.find("\n\n", start + 1)
	return _text.substr(start, end - start)


## The backticked names followed by `(` in `text`: `spawn_agent(config)` → spawn_agent.
func _called(text: String) -> PackedStringArray:
	var re := RegEx.create_from_string("`([a-z_][a-z0-9_]*)\\(")
	var out := PackedStringArray()
	for m in re.search_all(text):
		if not out.has(m.get_string(1)):
			out.append(m.get_string(1))
	return out


## The backticked words of `text`.
func _words(text: String) -> PackedStringArray:
	var re := RegEx.create_from_string("`([a-z_][a-z0-9_]*)`")
	var out := PackedStringArray()
	for m in re.search_all(text):
		out.append(m.get_string(1))
	return out


func _properties(cls: String) -> PackedStringArray:
	var out := PackedStringArray()
	for p in ClassDB.class_get_property_list(cls, true):
		if p.usage & PROPERTY_USAGE_EDITOR and not (p.usage & PROPERTY_USAGE_GROUP or p.usage & PROPERTY_USAGE_CATEGORY or p.usage & PROPERTY_USAGE_SUBGROUP):
			out.append(p.name)
	return out


## The class's own methods a user calls: not virtual, not `_`-prefixed, not a property's
## accessor.
func _methods(cls: String) -> PackedStringArray:
	var accessors := PackedStringArray()
	for p in _properties(cls):
		accessors.append("get_" + p)
		accessors.append("set_" + p)
		accessors.append("is_" + p)
	var out := PackedStringArray()
	for m in ClassDB.class_get_method_list(cls, true):
		var name: String = m.name
		if name.begins_with("_") or accessors.has(name) or m.flags & METHOD_FLAG_VIRTUAL \
				or ClassDB.class_has_method("Node", name):
			continue
		out.append(name)
	return out


func test_the_runtime_methods_are_the_real_ones() -> void:
	var listed := _called(_paragraph("Methods:"))
	var real := _methods("AgentRuntime")
	for name in real:
		assert_true(listed.has(name), "the README lists AgentRuntime.%s()" % name)
	for name in listed:
		assert_true(ClassDB.class_has_method("AgentRuntime", name),
				"AgentRuntime has the README's %s()" % name)


func test_the_runtime_signals_are_the_real_ones() -> void:
	var listed := _called(_paragraph("Signals (emitted"))
	var real := PackedStringArray()
	for s in ClassDB.class_get_signal_list("AgentRuntime", true):
		real.append(s.name)
	for name in real:
		assert_true(listed.has(name), "the README lists the signal %s" % name)
	for name in listed:
		assert_true(real.has(name), "AgentRuntime has the README's signal %s" % name)


func test_every_property_is_listed() -> void:
	var runtime := _words(_paragraph("Properties (read at"))
	for name in _properties("AgentRuntime"):
		assert_true(runtime.has(name), "the README lists AgentRuntime.%s" % name)
	var config := _words(_paragraph("`AgentConfig` (Resource)"))
	for name in _properties("AgentConfig"):
		assert_true(config.has(name), "the README lists AgentConfig.%s" % name)
