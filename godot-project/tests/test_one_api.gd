## One Godot API: the AgentConstants script names what the classes report, and every class
## reports a failed call the same way — get_last_error_code() (an AgentConstants.ERROR_* value)
## and get_last_error(), both cleared by a call that succeeds, and error_occurred(code, message)
## on the classes with signals.
extends "res://tests/test_base.gd"

const CLASSES := ["AgentRuntime", "AgentNode", "AgentApp", "Campaign", "GameTools"]
const WITH_SIGNAL := ["AgentRuntime", "AgentNode", "AgentApp", "Campaign"]

## `[code, message]` of each error_occurred, in order.
var errors: Array = []


func before_each() -> void:
	errors = []


func _watch(object: Object) -> void:
	object.connect("error_occurred", func(code, message): errors.append([code, message]))


func test_every_class_reads_its_last_error_the_same_way() -> void:
	for name in CLASSES:
		assert_true(ClassDB.class_has_method(name, "get_last_error"), name)
		assert_true(ClassDB.class_has_method(name, "get_last_error_code"), name)
	for name in WITH_SIGNAL:
		assert_true(ClassDB.class_has_signal(name, "error_occurred"), name)
		var args: Array = ClassDB.class_get_signal(name, "error_occurred").args
		assert_eq(args.map(func(a): return a.name), ["code", "message"], name)


func test_the_constants_match_what_the_core_reports() -> void:
	assert_eq(AgentConstants.STATES, ["idle", "listening", "thinking", "speaking"])
	assert_eq(AgentConstants.STATE_THINKING, "thinking")
	assert_eq(AgentConstants.CONTROL_MODES, ["agent", "human", "copilot"])
	assert_contains(AgentConstants.DIALOG_TYPES, "task_update")
	assert_contains(AgentConstants.GM_DIALOG_TYPES, "scene_description")
	assert_contains(AgentConstants.MOVEMENTS, "requested")
	for code in ["unknown_agent", "not_spawned", "agent_stopped", "turn_failed", "lagged"]:
		assert_contains(AgentConstants.ERROR_CODES, code)
	# An AgentApp refuses a control mode that is not one of the constants, takes each of them.
	var app := AgentApp.new()
	for mode in AgentConstants.CONTROL_MODES:
		app.control_mode = mode
		assert_eq(app.control_mode, mode)
	app.free()


func test_runtime_failure_and_success() -> void:
	var runtime := AgentRuntime.new()
	runtime.autostart = false
	_watch(runtime)
	add_to_tree(runtime)
	assert_eq(runtime.spawn_agent({"name": "Mira"}), "")
	assert_eq(runtime.get_last_error_code(), AgentConstants.ERROR_NOT_RUNNING)
	assert_contains(runtime.get_last_error(), "not running")
	assert_eq(errors.size(), 1)
	assert_eq(errors[0][0], AgentConstants.ERROR_NOT_RUNNING)
	runtime.database_path = fresh_db("user://test_one_api", "runtime")
	assert_true(runtime.start())
	assert_eq(runtime.get_last_error_code(), "")
	assert_eq(runtime.send_message("agent_404", "Hello?"), false)
	assert_eq(runtime.get_last_error_code(), AgentConstants.ERROR_UNKNOWN_AGENT)
	assert_ne(runtime.spawn_agent({"name": "Mira"}), "")
	assert_eq(runtime.get_last_error_code(), "", "a success clears it")
	assert_eq(runtime.get_last_error(), "")
	for e in errors:
		assert_contains(AgentConstants.ERROR_CODES, e[0])


func test_node_failure_without_a_runtime() -> void:
	var holder := Node2D.new()
	var agent := AgentNode.new()
	_watch(agent)
	holder.add_child(agent)
	add_to_tree(holder)
	await wait_frames(1)
	assert_eq(agent.get_last_error_code(), AgentConstants.ERROR_NOT_SPAWNED)
	assert_eq(agent.get_state(), "", "no state while it does not run")
	var reply: Dictionary = await agent.ask("Anyone there?")
	assert_false(reply.ok)
	assert_eq(reply.error.code, AgentConstants.ERROR_NOT_SPAWNED)
	assert_true(errors.size() >= 1)
	assert_eq(errors[0][0], AgentConstants.ERROR_NOT_SPAWNED)


func test_node_state_follows_its_agent() -> void:
	var runtime := AgentRuntime.new()
	runtime.database_path = fresh_db("user://test_one_api", "state")
	runtime.thinking_seconds = 0.05
	var holder := Node2D.new()
	var agent := AgentNode.new()
	var config := AgentConfig.new()
	config.name = "Mira"
	config.autonomous = false
	agent.config = config
	holder.add_child(agent)
	runtime.add_child(holder)
	add_to_tree(runtime)
	await agent.spawned
	assert_eq(agent.get_state(), AgentConstants.STATE_IDLE)
	var states: Array = []
	agent.state_changed.connect(func(_old, new_state): states.append([new_state, agent.get_state()]))
	var reply: Dictionary = await agent.ask("Good morning!")
	assert_true(reply.ok, str(reply))
	assert_true(states.size() >= 2, str(states))
	for pair in states:
		assert_eq(pair[0], pair[1], "get_state() is what state_changed said")
		assert_contains(AgentConstants.STATES, pair[0])


func test_app_campaign_and_game_tools_report_codes() -> void:
	var app := AgentApp.new()
	_watch(app)
	assert_false(app.unregister())
	assert_eq(app.get_last_error_code(), AgentConstants.ERROR_NOT_READY)
	app.control_mode = "pilot"
	assert_eq(app.get_last_error_code(), AgentConstants.ERROR_INVALID_ARGUMENT)
	assert_contains(app.get_last_error(), "pilot")
	assert_eq(errors.map(func(e): return e[0]), [AgentConstants.ERROR_NOT_READY, AgentConstants.ERROR_INVALID_ARGUMENT])
	# A call that needs the registration fails once, with one signal.
	assert_false(app.attach("agent_001"))
	assert_eq(app.get_last_error_code(), AgentConstants.ERROR_NOT_READY)
	assert_eq(errors.size(), 3, str(errors))
	assert_eq(app.human_action("place", {}), 0)
	assert_eq(errors.size(), 4, str(errors))
	app.free()

	errors = []
	var campaign := Campaign.new()
	_watch(campaign)
	campaign.reset(PackedStringArray(["pc_001"]))
	assert_false(campaign.take_turn("I look around."))
	assert_eq(campaign.get_last_error_code(), AgentConstants.ERROR_TURN_REFUSED)
	var result: Dictionary = await campaign.turn("I look around.")
	assert_false(result.ok)
	assert_eq(result.error.code, AgentConstants.ERROR_TURN_REFUSED)
	assert_false(campaign.set_active_actor_id("nobody"))
	assert_eq(campaign.get_last_error_code(), AgentConstants.ERROR_INVALID_ARGUMENT)
	assert_true(campaign.set_active_actor_id("pc_001"))
	assert_eq(campaign.get_last_error_code(), "")
	assert_eq(errors[0][0], AgentConstants.ERROR_TURN_REFUSED)

	var tools := GameTools.new()
	var out: Dictionary = tools.call_tool("no_such_tool", {})
	assert_eq(tools.get_last_error_code(), "unknown_tool")
	assert_eq(tools.get_last_error(), out.error)
	assert_eq(tools.last_error(), out.error, "the older name still answers")
	tools.call_tool("new_tic_tac_toe_game", {})
	assert_eq(tools.get_last_error_code(), "")
