## Tools written in GDScript: a Callable registered on the runtime (a named tool set) or on one
## AgentNode, called when an agent calls it — read-only results within the decision, coroutines
## awaited, failures (an error Dictionary, null, a freed object) as failed calls, bad
## registrations refused. The scripted brain plays exact replies.
extends "res://tests/test_base.gd"

const DB_DIR := "user://test_script_tools"

var stock := {"rye": 3, "spelt": 0}
var calls := []


class Door:
	extends RefCounted
	func open(_args: Dictionary) -> Dictionary:
		return {"opened": true}


func before_each() -> void:
	calls = []


func _runtime(db: String) -> AgentRuntime:
	var rt := AgentRuntime.new()
	rt.database_path = db
	rt.idle_think_seconds = 60.0
	rt.thinking_seconds = 0.02
	rt.speaking_seconds = 0.02
	return rt


## A character whose agent may call `sets` and first plays `replies`.
func _npc(name: String, sets: PackedStringArray, replies: Array[Dictionary]) -> Node2D:
	var body := Node2D.new()
	body.name = name
	var agent := AgentNode.new()
	agent.name = "AgentNode"
	var config := AgentConfig.new()
	config.name = name
	config.use_initial_position = false
	config.autonomous = false
	config.tool_sets = sets
	config.scripted_replies = replies
	agent.config = config
	body.add_child(agent)
	return body


func _call(tool: String, args: Dictionary, id := "c1") -> Dictionary:
	return {"assistant_text": "", "tool_calls": [{"id": id, "tool": tool, "args": args}]}


func check_stock(args: Dictionary) -> Dictionary:
	calls.append(["check_stock", args])
	return {"item": args.item, "count": stock.get(args.item, 0)}


func bake(args: Dictionary, call: AgentToolCall) -> Dictionary:
	calls.append(["bake", args, call.get_agent_id(), call.get_tool(), call.get_tool_set()])
	await tree.create_timer(0.1).timeout
	calls.append(["baked", call.is_cancelled()])
	return {"baked": args.item}


func test_a_read_only_tool_answers_within_the_decision_and_a_coroutine_is_awaited() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "shop"))
	assert_true(rt.register_tool("shop", "check_stock", "How many of an item the shop has.",
			{"item": "string"}, check_stock, true))
	assert_true(rt.register_tool("shop", "bake", "Bake loaves of an item.",
			{"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}, bake))
	assert_eq(rt.get_tool_names("shop"), PackedStringArray(["bake", "check_stock"]))
	assert_contains(rt.get_tool_sets(), "shop", "before start")
	var npc := _npc("Mira", ["world", "shop"], [
		_call("check_stock", {"item": "rye"}),
		{"assistant_text": "Three rye loaves left.", "dialog_type": "reply", "tool_calls": []},
		_call("bake", {"item": "spelt"}, "c2"),
	])
	rt.add_child(npc)
	add_to_tree(rt)
	var agent: AgentNode = npc.get_node("AgentNode")
	assert_true(await wait_until(func(): return agent.is_spawned(), 5.0), agent.get_last_error())
	assert_eq(rt.get_agent_tool_sets(agent.get_agent_id()), PackedStringArray(["world", "shop"]))
	var reply: Dictionary = await agent.ask("Any rye left?")
	assert_true(reply.ok, str(reply))
	assert_eq(calls, [["check_stock", {"item": "rye"}]])
	assert_eq(reply.text, "Three rye loaves left.", "the read's result came back within the decision")
	assert_eq(reply.actions[0].tool, "check_stock")
	assert_eq(reply.actions[0].outcome, "done")
	assert_eq(JSON.parse_string(reply.actions[0].detail), {"item": "rye", "count": 3.0})
	# A coroutine: the agent waits for it.
	calls.clear()
	reply = await agent.ask("Bake some spelt.")
	assert_true(reply.ok, str(reply))
	assert_eq(calls, [["bake", {"item": "spelt"}, agent.get_agent_id(), "bake", "shop"], ["baked", false]])
	assert_eq(reply.actions[0].outcome, "done", str(reply.actions))
	assert_eq(JSON.parse_string(reply.actions[0].detail), {"baked": "spelt"})


func test_failures_are_failed_calls_never_crashes() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "failures"))
	var door := Door.new()
	assert_true(rt.register_tool("mishaps", "refuse", "Always says no.", {},
			func(_args): return {"error": "the shop is closed"}))
	assert_true(rt.register_tool("mishaps", "nothing", "Returns nothing.", {},
			func(_args): return null))
	assert_true(rt.register_tool("mishaps", "node_back", "Returns an object.", {},
			func(_args): return RefCounted.new()))
	assert_true(rt.register_tool("mishaps", "open", "Opens a door.", {}, door.open))
	var npc := _npc("Bram", ["world", "mishaps"], [
		{"assistant_text": "", "tool_calls": [
			{"id": "c1", "tool": "refuse", "args": {}},
			{"id": "c2", "tool": "nothing", "args": {}},
			{"id": "c3", "tool": "node_back", "args": {}},
			{"id": "c4", "tool": "open", "args": {}}]},
	])
	rt.add_child(npc)
	add_to_tree(rt)
	var agent: AgentNode = npc.get_node("AgentNode")
	assert_true(await wait_until(func(): return agent.is_spawned(), 5.0))
	door = null  # the tool "open" now calls a freed object
	var reply: Dictionary = await agent.ask("Try everything.")
	assert_true(reply.ok, str(reply))
	var outcomes := {}
	for action in reply.actions:
		outcomes[action.tool] = [action.outcome, action.detail]
	assert_eq(outcomes.refuse, ["failed", "the shop is closed"])
	assert_eq(outcomes.nothing[0], "failed")
	assert_true(outcomes.nothing[1].contains("returned null"), outcomes.nothing[1])
	assert_eq(outcomes.node_back[0], "failed")
	assert_true(outcomes.node_back[1].contains("not JSON"), outcomes.node_back[1])
	assert_eq(outcomes.open[0], "failed")
	assert_true(outcomes.open[1].contains("its object was freed"), outcomes.open[1])
	# The agent lives on.
	reply = await agent.ask("Still there?")
	assert_true(reply.ok, str(reply))


func test_bad_registrations_are_refused_with_a_reason() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "bad"))
	add_to_tree(rt)
	var errors := []
	rt.agent_error.connect(func(_id, code, message): errors.append([code, message]))
	assert_false(rt.register_tool("", "x", "", {}, check_stock), "empty set")
	assert_false(rt.register_tool("shop", "", "", {}, check_stock), "empty name")
	assert_false(rt.register_tool("shop", "x", "", {}, func(): return 1), "no argument")
	assert_false(rt.register_tool("shop", "x", "", {"count": "integerish"}, check_stock), "bad shorthand")
	assert_false(rt.register_tool("shop", "x", "", {"type": "nonsense"}, check_stock), "bad schema")
	assert_false(rt.register_tool("world", "fly", "", {}, check_stock), "a built-in set")
	assert_eq(errors.size(), 6, str(errors))
	for e in errors:
		assert_eq(e[0], "invalid_config", e[1])
	assert_true(errors[2][1].contains("takes 0 arguments"), errors[2][1])
	assert_true(errors[5][1].contains("built in"), errors[5][1])
	assert_eq(rt.get_tool_names("world"), PackedStringArray(), "nothing half-registered")
	assert_false(rt.unregister_tool("shop", "nope"))


func test_a_node_has_tools_of_its_own_that_go_with_it() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "node_tools"))
	var npc := _npc("Tom", [], [_call("ring_bell", {"times": 2})])
	var other := _npc("Ann", [], [_call("ring_bell", {"times": 1})])
	var agent: AgentNode = npc.get_node("AgentNode")
	var rung := []
	assert_true(agent.register_tool("ring_bell", "Ring the shop bell.", {"times": "int"},
			func(args): rung.append(args.times); return {"rang": args.times}))
	assert_eq(agent.get_tool_names(), PackedStringArray(["ring_bell"]))
	rt.add_child(npc)
	rt.add_child(other)
	add_to_tree(rt)
	var ann: AgentNode = other.get_node("AgentNode")
	assert_true(await wait_until(func(): return agent.is_spawned() and ann.is_spawned(), 5.0))
	var sets := rt.get_agent_tool_sets(agent.get_agent_id())
	assert_eq(sets.size(), 2, str(sets))
	assert_eq(sets[0], "world")
	assert_true(sets[1].begins_with("node:"), sets[1])
	var reply: Dictionary = await agent.ask("Ring twice.")
	assert_eq(rung, [2])
	assert_eq(reply.actions[0].outcome, "done")
	# Another agent cannot call it: its answer is refused, nothing rings.
	reply = await ann.ask("Ring once.")
	assert_eq(rung, [2], "only its own agent may ring")
	# The set goes with the node.
	var node_set: String = sets[1]
	assert_contains(rt.get_tool_sets(), node_set)
	npc.free()
	assert_false(rt.get_tool_sets().has(node_set), "removed with the node")


## The tool_sets hint of an AgentConfig as the inspector reads it.
func _tool_sets_hint(config: AgentConfig) -> String:
	for p in config.get_property_list():
		if p.name == "tool_sets":
			return p.hint_string
	return ""


func test_the_inspector_picker_offers_built_in_declared_and_registered_sets() -> void:
	const SETTING := "godot_agents/tool_sets"
	assert_true(ProjectSettings.has_setting(SETTING), "the extension declares the setting")
	var config := AgentConfig.new()
	var hint := _tool_sets_hint(config)
	assert_true(hint.begins_with("%d/%d:" % [TYPE_STRING, PROPERTY_HINT_ENUM_SUGGESTION]), hint)
	var names := hint.split(":")[1].split(",")
	assert_eq(names[0], "world")
	assert_eq(names[1], "games")
	assert_false(names.has("quests"))
	# Declared in the project setting: offered, and no warning for a node that names it.
	var before: PackedStringArray = ProjectSettings.get_setting(SETTING)
	ProjectSettings.set_setting(SETTING, PackedStringArray(["quests"]))
	assert_contains(_tool_sets_hint(config).split(":")[1].split(","), "quests")
	var agent := AgentNode.new()
	config.tool_sets = PackedStringArray(["world", "quests", "recipes"])
	agent.config = config
	var warnings := agent.get_configuration_warnings()
	var about := func(found: PackedStringArray, set_name: String) -> bool:
		return Array(found).any(func(w: String) -> bool: return w.contains("'%s'" % set_name))
	assert_false(about.call(warnings, "quests"), str(warnings))
	assert_true(about.call(warnings, "recipes"), "an undeclared set is warned about: %s" % str(warnings))
	ProjectSettings.set_setting(SETTING, before)
	# Registered by a script while the game runs: offered from then on.
	var rt := _runtime(fresh_db(DB_DIR, "picker"))
	add_to_tree(rt)
	assert_true(rt.register_tool("recipes", "find_recipe", "Finds a recipe.", {"dish": "string"}, check_stock))
	assert_contains(_tool_sets_hint(config).split(":")[1].split(","), "recipes")
	warnings = agent.get_configuration_warnings()
	assert_false(about.call(warnings, "recipes"), str(warnings))
	agent.free()
