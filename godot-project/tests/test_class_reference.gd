## The class reference the library registers with the editor's help (`GameTools.class_reference()`,
## the documents `rust/godot/src/docs.rs` loads into the help): every class the library registers
## has one, with a description and a GDScript example; every property, method and signal that
## ClassDB lists is described; types and defaults read as GDScript does.
##
## gdext leaves a method, signal or property without a `///` comment out of the document, so the
## entries are checked against ClassDB rather than against the document alone.
extends "res://tests/test_base.gd"

## The classes the library registers (ClassDB finds any other one too).
const CLASSES := ["AgentAction", "AgentApp", "AgentBrain", "AgentConfig", "AgentRuntime",
	"Campaign", "GameTools"]

## What a Rust type or expression looks like in a `type` or `default` attribute (`GString`,
## `Option < Gd < AgentBrain > >`, `i64`, `()`, `GString :: from(…)`, `Vector2::ZERO`).
const RUST_LOOKS := "::|\\bGString\\b|\\bVar(Dictionary|Array)\\b|\\bOption\\b|\\bGd\\b|\\b[iuf](8|16|32|64)\\b|^\\(\\)$|\\bArray <|\\bVec\\b"

const Blocks := preload("res://tests/gdscript_blocks.gd")

var _reference: Dictionary


func before_each() -> void:
	if _reference.is_empty():
		_reference = GameTools.class_reference()


func _extension_classes() -> Array:
	var found := []
	for name in ClassDB.get_class_list():
		if ClassDB.class_get_api_type(name) == ClassDB.API_EXTENSION:
			found.append(String(name))
	found.sort()
	return found


## One class document as `{brief, description, methods: {name: {qualifiers, return, params:
## [{name, type, default}], description}}, signals: {…}, members: {name: {type, default,
## description}}}`; attribute values and texts unescaped. `default` is null when absent.
func _parse(xml: String) -> Dictionary:
	var doc := {"brief": "", "description": "", "methods": {}, "signals": {}, "members": {}}
	var parser := XMLParser.new()
	if parser.open_buffer(xml.to_utf8_buffer()) != OK:
		return doc
	var entry = null  # The method, signal or member being read.
	var text_target := ""  # Where the next text node goes.
	while parser.read() == OK:
		match parser.get_node_type():
			XMLParser.NODE_ELEMENT:
				var tag := parser.get_node_name()
				match tag:
					"brief_description", "description":
						text_target = "brief" if tag == "brief_description" else "description"
						if parser.is_empty():
							text_target = ""
					"method", "signal":
						entry = {"qualifiers": _attr(parser, "qualifiers"), "return": null,
							"params": [], "description": ""}
						doc["methods" if tag == "method" else "signals"][_attr(parser, "name")] = entry
					"return":
						if entry != null:
							entry["return"] = _attr(parser, "type")
					"param":
						if entry != null:
							entry["params"].append({"name": _attr(parser, "name"),
								"type": _attr(parser, "type"), "default": _attr(parser, "default")})
					"member":
						entry = {"type": _attr(parser, "type"), "default": _attr(parser, "default"),
							"description": ""}
						doc["members"][_attr(parser, "name")] = entry
						text_target = "member"
						if parser.is_empty():
							text_target = ""
			XMLParser.NODE_TEXT:
				var text := parser.get_node_data().xml_unescape().strip_edges()
				match text_target:
					"brief":
						doc["brief"] += text
					"description":
						if entry != null:
							entry["description"] += text
						else:
							doc["description"] += text
					"member":
						entry["description"] += text
			XMLParser.NODE_ELEMENT_END:
				match parser.get_node_name():
					"brief_description", "description":
						text_target = ""
					"member":
						text_target = ""
						entry = null
					"method", "signal":
						entry = null
	return doc


## An attribute, unescaped; null when absent.
func _attr(parser: XMLParser, name: String):
	if not parser.has_attribute(name):
		return null
	return parser.get_named_attribute_value(name).xml_unescape()


func test_every_class_the_library_registers_has_a_document() -> void:
	var classes := _extension_classes()
	for name in CLASSES:
		assert_contains(classes, name, "the library registers %s" % name)
	var documented := _reference.keys()
	documented.sort()
	assert_eq(documented, classes, "one document per extension class, and no other")
	for name in _reference:
		var xml: String = _reference[name]
		assert_true(xml.begins_with("<?xml"), "%s: an XML document" % name)
		assert_contains(xml, "<class name=\"%s\" inherits=\"%s\"" % [name,
			ClassDB.get_parent_class(name)], "%s: its class element" % name)


func test_every_class_is_described_with_a_gdscript_example() -> void:
	for name in _reference:
		var doc := _parse(_reference[name])
		assert_true(not doc["brief"].is_empty(), "%s has a brief description" % name)
		assert_contains(doc["description"], "[codeblock lang=gdscript]",
			"%s's description has a GDScript example" % name)


## Every GDScript example of the class reference — a class's, a method's, a signal's, a
## property's — compiles with this Godot and this extension's classes.
func test_every_example_compiles() -> void:
	var count := 0
	var re := RegEx.create_from_string("(?s)\\[codeblock lang=gdscript\\](.*?)\\[/codeblock\\]")
	for name in _reference:
		var doc := _parse(_reference[name])
		var texts := {"": doc["description"]}
		for kind in ["methods", "signals", "members"]:
			for entry in doc[kind]:
				texts["%s %s" % [kind, entry]] = doc[kind][entry]["description"]
		for where in texts:
			for m in re.search_all(texts[where]):
				count += 1
				var block := _dedent(m.get_string(1).strip_edges(false, true).trim_prefix("\n"))
				assert_true(Blocks.compiles(block), "the example of %s %s compiles:\n%s" % [name, where, block])
	assert_true(count >= 10, "found the class reference's examples (%d)" % count)


## `block` without the indentation all its lines share (the document indents a member's text).
func _dedent(block: String) -> String:
	var lines := block.split("\n")
	var common := -1
	for line in lines:
		if line.strip_edges().is_empty():
			continue
		var width := line.length() - line.lstrip("\t ").length()
		common = width if common < 0 else mini(common, width)
	if common <= 0:
		return block
	var out := PackedStringArray()
	for line in lines:
		out.append(line.substr(common) if line.length() >= common else line.strip_edges())
	return "\n".join(out)


## Every property, signal and method of each class (those Godot lists in its help: not the
## getters and setters of properties, nor names starting with `_`) has a description.
func test_every_property_method_and_signal_is_described() -> void:
	var missing := []
	for name in _reference:
		var doc := _parse(_reference[name])
		var accessors := {}
		for property in ClassDB.class_get_property_list(name, true):
			if property["usage"] & (PROPERTY_USAGE_GROUP | PROPERTY_USAGE_SUBGROUP
					| PROPERTY_USAGE_CATEGORY | PROPERTY_USAGE_INTERNAL):
				continue
			var prop: String = property["name"]
			accessors[String(ClassDB.class_get_property_getter(name, prop))] = true
			accessors[String(ClassDB.class_get_property_setter(name, prop))] = true
			if not doc["members"].has(prop) or doc["members"][prop]["description"].is_empty():
				missing.append("%s.%s (property)" % [name, prop])
		for method in ClassDB.class_get_method_list(name, true):
			var method_name: String = method["name"]
			if method_name.begins_with("_") or accessors.has(method_name):
				continue
			if not doc["methods"].has(method_name) \
					or doc["methods"][method_name]["description"].is_empty():
				missing.append("%s.%s() (method)" % [name, method_name])
		for signal_info in ClassDB.class_get_signal_list(name, true):
			var signal_name: String = signal_info["name"]
			if not doc["signals"].has(signal_name) \
					or doc["signals"][signal_name]["description"].is_empty():
				missing.append("%s.%s (signal)" % [name, signal_name])
	missing.sort()
	assert_eq(missing, [], "entries without a description")


func test_defaults_read_as_gdscript() -> void:
	var runtime: Dictionary = _parse(_reference["AgentRuntime"])["members"]
	assert_eq(runtime["database_path"]["default"], "\"user://agents.db\"")
	assert_eq(runtime["database_path"]["type"], "String")
	assert_eq(runtime["world_bounds"]["default"], "Rect2(0, 0, 100, 100)")
	assert_eq(runtime["idle_think_seconds"]["default"], "5.0")
	assert_eq(runtime["idle_think_seconds"]["type"], "float")
	assert_eq(runtime["autostart"]["default"], "true")
	assert_eq(runtime["event_queue_capacity"]["default"], "65536")
	assert_eq(runtime["event_queue_capacity"]["type"], "int")
	assert_eq(runtime["default_brain_config"]["type"], "AgentBrain")
	assert_eq(runtime["default_brain_config"]["default"], "null")
	assert_eq(runtime["brain_profiles"]["type"], "Dictionary")
	assert_eq(runtime["brain_profiles"]["default"], "{}")
	assert_eq(runtime["websocket_allowed_origins"]["type"], "PackedStringArray")
	assert_eq(runtime["websocket_allowed_origins"]["default"], "PackedStringArray()")
	var brain: Dictionary = _parse(_reference["AgentBrain"])["members"]
	assert_eq(brain["provider"]["default"], "\"openai\"")
	assert_eq(brain["temperature"]["default"], "-1.0")
	assert_eq(brain["max_retries"]["default"], "-1")
	var config: Dictionary = _parse(_reference["AgentConfig"])["members"]
	assert_eq(config["prompt"]["default"], "\"\"")
	assert_eq(config["initial_position"]["default"], "Vector2(0, 0)")
	var app: Dictionary = _parse(_reference["AgentApp"])["members"]
	assert_eq(app["runtime_path"]["default"], "NodePath(\"\")")
	assert_eq(app["actions"]["type"], "Array")
	assert_eq(app["action_handler"]["type"], "Callable")


func test_method_and_signal_types_read_as_gdscript() -> void:
	var runtime := _parse(_reference["AgentRuntime"])
	var conversation: Dictionary = runtime["methods"]["get_conversation"]
	assert_eq(conversation["return"], "Dictionary[]")
	assert_eq(conversation["params"][0]["type"], "String")
	assert_eq(conversation["params"][1]["type"], "int")
	assert_eq(conversation["params"][1]["default"], "50", "a parameter default")
	assert_eq(runtime["methods"]["spawn_agent"]["params"][0]["type"], "Variant")
	assert_eq(runtime["methods"]["stop"]["return"], "void")
	assert_eq(runtime["methods"]["is_running"]["qualifiers"], "const")
	assert_eq(runtime["signals"]["agent_spoke"]["params"][2]["type"], "PackedStringArray")
	var app := _parse(_reference["AgentApp"])
	assert_eq(app["methods"]["register"]["params"][0]["type"], "AgentRuntime")
	var tools := _parse(_reference["GameTools"])
	assert_eq(tools["methods"]["class_reference"]["qualifiers"], "static")


## No `type` or `default` anywhere is left as Rust wrote it, and every member's default is what
## ClassDB says the property starts with, as `var_to_str` writes it.
func test_no_rust_type_or_expression_is_left() -> void:
	var rust := RegEx.create_from_string(RUST_LOOKS)
	var found := []
	for name in _reference:
		var doc := _parse(_reference[name])
		for kind in ["methods", "signals"]:
			for entry_name in doc[kind]:
				var entry: Dictionary = doc[kind][entry_name]
				var values := [entry["return"]]
				for param in entry["params"]:
					values.append_array([param["type"], param["default"]])
				for value in values:
					if value != null and rust.search(value) != null:
						found.append("%s.%s: %s" % [name, entry_name, value])
		for member_name in doc["members"]:
			var member: Dictionary = doc["members"][member_name]
			for value in [member["type"], member["default"]]:
				if value != null and rust.search(value) != null:
					found.append("%s.%s: %s" % [name, member_name, value])
			var real = ClassDB.class_get_property_default_value(name, member_name)
			if member["default"] != null and typeof(real) != TYPE_NIL:
				assert_eq(member["default"], var_to_str(real).replace("\n", " "),
					"%s.%s's default is var_to_str of the real one" % [name, member_name])
	assert_eq(found, [], "types and defaults still written in Rust")
