## AgentApp, AgentAction and AgentChatPanel end to end (the app bridge, docs/apps.md):
## registering, attaching a scripted agent, actions through action_requested and action_handler,
## static and dynamic state delivery, the routing's refusals with their exact texts, the human's
## actions in every control mode, the session, the chat panel's lines, auto-registration through
## runtime_path, and built-in game apps. Each test has its own database under
## user://test_agent_app/ and short timings; agents only decide when the app wakes them.
extends "res://tests/test_base.gd"

const DB_DIR := "user://test_agent_app"
const PLACE := {"name": "place", "description": "Place mark", "params": {"row": "int", "col": "int"}}
const LABEL := "⚔️ Combat: Lv.15 Goblin"

## Signals of the app under test, in order: `[signal_name, arg0, …]`.
var events: Array = []
## `agent_error` signals of the runtime: `[agent_id, code, message]`.
var agent_errors: Array = []


func before_each() -> void:
	events = []
	agent_errors = []
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DB_DIR))


func _runtime(name: String, settings := {}) -> AgentRuntime:
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, name)
	rt.idle_think_seconds = 1000.0
	rt.thinking_seconds = 0.05
	rt.speaking_seconds = 0.05
	for key in settings:
		rt.set(key, settings[key])
	rt.agent_error.connect(func(id, code, message): agent_errors.append([id, code, message]))
	add_to_tree(rt)
	return rt


## An AgentApp with `settings`, its signals recorded into `events`, in the tree and registered
## with `rt` (unless `rt` is null).
func _app(rt: AgentRuntime, app_id: String, settings := {}) -> AgentApp:
	var app := AgentApp.new()
	app.name = app_id
	app.app_id = app_id
	for key in settings:
		app.set(key, settings[key])
	_record_signals(app)
	add_to_tree(app)
	if rt != null:
		assert_true(app.register(rt), "register: " + app.get_last_error())
	return app


func _record_signals(app: AgentApp) -> void:
	app.action_requested.connect(func(id, action, params, by): events.append(["action_requested", id, action, params, by]))
	app.action_recorded.connect(func(record): events.append(["action_recorded", record]))
	app.human_action_done.connect(func(id, record): events.append(["human_action_done", id, record]))
	app.chat_line.connect(func(role, text): events.append(["chat_line", role, text]))
	app.label_changed.connect(func(label): events.append(["label_changed", label]))
	app.event_emitted.connect(func(event_name, text): events.append(["event_emitted", event_name, text]))
	app.agent_attached.connect(func(id): events.append(["agent_attached", id]))
	app.agent_detached.connect(func(id, reason): events.append(["agent_detached", id, reason]))


func _of(kind: String) -> Array:
	return events.filter(func(e): return e[0] == kind)


## Waits until `count` events of `kind` were recorded; returns them (fails after `timeout`).
func _expect(kind: String, count := 1, timeout := 8.0) -> Array:
	var ok: bool = await wait_until(func(): return _of(kind).size() >= count, timeout)
	if not ok:
		fail("expected %d %s, got %d; events: %s" % [count, kind, _of(kind).size(), _summary()])
	return _of(kind)


## Waits for an agent_error of `agent_id` whose message contains `text`; returns the message.
func _expect_agent_error(agent_id: String, text: String, timeout := 8.0) -> String:
	var found := func():
		for e in agent_errors:
			if e[0] == agent_id and text in e[2]:
				return e[2]
		return ""
	var ok: bool = await wait_until(func(): return found.call() != "", timeout)
	if not ok:
		fail("no agent_error with '%s' for %s; got %s" % [text, agent_id, agent_errors])
	return found.call()


func _summary() -> String:
	var parts := []
	for e in events.slice(max(0, events.size() - 20)):
		parts.append(str(e))
	return "\n    " + "\n    ".join(parts)


## A scripted brain reply calling `tool` with `args`.
func _call(tool: String, args := {}) -> Dictionary:
	return {"assistant_text": "", "dialog_type": "chat",
		"tool_calls": [{"id": "call_001", "tool": tool, "args": args}]}


## A scripted agent attached to `app_id` as it spawns; its first replies are `script`.
func _agent(rt: AgentRuntime, app_id: String, script := []) -> String:
	var config := {"name": "Ivy", "role": "player", "app_id": app_id}
	if not script.is_empty():
		config["script"] = script
	var id := rt.spawn_agent(config)
	assert_ne(id, "", "spawn: " + rt.get_last_error())
	return id


func _waits(seconds: float) -> void:
	await tree.create_timer(seconds).timeout


# ----------------------------------------------------------------------------------------------


func test_defaults_and_errors_without_a_runtime() -> void:
	var app := AgentApp.new()
	assert_eq(app.app_id, "")
	assert_eq(app.mode, "static")
	assert_eq(app.control_mode, "agent")
	assert_eq(app.role_prompt, "")
	assert_eq(app.human_label, "")
	assert_true(app.world_tools)
	assert_eq(app.history, 10)
	assert_eq(app.action_timeout_seconds, 30.0)
	assert_eq(app.actions, [])
	assert_eq(app.game, {})
	assert_false(app.action_handler.is_valid())
	assert_eq(app.runtime_path, NodePath(""))
	assert_false(app.is_registered())
	assert_eq(app.get_session(), {}, "no session before register")
	assert_contains(app.get_last_error(), "not registered")

	assert_false(app.attach("agent_001"))
	assert_eq(app.get_last_error(), "attach: the app is not registered")
	assert_eq(app.human_action("place", {}), 0)
	assert_false(app.human_says("hi"))
	assert_false(app.emit_event("roundEnded", null))
	assert_false(app.complete_action(1, "ok", null))
	assert_false(app.register(null))
	assert_eq(app.get_last_error(), "register: no AgentRuntime given (null)")

	# The control mode is checked even before registering; the property keeps its value.
	app.control_mode = "pilot"
	assert_eq(app.control_mode, "agent")
	assert_eq(app.get_last_error(), "control_mode: unknown control mode 'pilot' (use agent, human, copilot)")
	app.control_mode = "copilot"
	assert_eq(app.control_mode, "copilot")
	assert_eq(app.get_last_error(), "")

	# Actions: Dictionaries (keys checked) or AgentAction resources.
	app.actions = [{"name": "place", "parms": {}}]
	assert_eq(app.actions, [], "refused actions leave the property")
	assert_contains(app.get_last_error(), "actions[0]: unknown key 'parms'")
	app.actions = [3]
	assert_eq(app.get_last_error(), "set_actions: actions[0]: an action is a Dictionary or an AgentAction, got int")
	var flee := AgentAction.new()
	flee.name = "flee"
	flee.description = "Run away"
	flee.human_only = true
	assert_eq(flee.to_dictionary(), {"name": "flee", "description": "Run away", "params": {},
		"humanOnly": true, "agentOnly": false, "readOnly": false, "due": false})
	app.actions = [{"name": "place", "due": true}]
	assert_eq(app.get_last_error(), "", "due is a key of an action")
	app.actions = [PLACE, flee]
	assert_eq(app.actions.size(), 2)
	assert_eq(app.get_last_error(), "")

	# Before registering, set_state and set_context set what register() sends.
	assert_true(app.set_state({"board": "........."}))
	assert_eq(app.get_state(), {"board": "........."})
	assert_true(app.set_context({"human_label": LABEL, "state": {"board": "X........"}}))
	assert_eq(app.human_label, LABEL)
	assert_eq(app.get_state(), {"board": "X........"})
	assert_false(app.set_context({"humanlabel": "x"}))
	assert_eq(app.get_last_error(), "set_context: unknown key 'humanlabel' (use state, actions, human_label)")
	assert_false(app.set_state(Callable()), "a Callable has no JSON form")
	app.free()


func test_register_errors_name_the_field() -> void:
	var rt := _runtime("register_errors", {"autostart": false})
	var app := _app(null, "board", {"actions": [PLACE]})
	assert_false(app.register(rt))
	assert_contains(app.get_last_error(), "the AgentRuntime is not running")
	assert_true(rt.start())

	app.app_id = ""
	assert_false(app.register(rt))
	assert_eq(app.get_last_error(), "register: app_id is empty")
	app.app_id = "board"
	app.actions = [{"name": "place", "params": {"row": "integr"}}]
	assert_eq(app.actions.size(), 1, "not checked before registering")
	assert_false(app.register(rt))
	assert_eq(app.get_last_error(), "register: action 'place': params.row: unknown type 'integr' (use int, number, string or bool)")
	app.actions = [{"name": "hint", "readOnly": true, "due": true}]
	assert_false(app.register(rt))
	assert_eq(app.get_last_error(), "register: action 'hint': a due action is the agent's to take: it cannot be readOnly or humanOnly")
	app.actions = [PLACE]
	app.history = 0
	assert_false(app.register(rt))
	assert_eq(app.get_last_error(), "register: history must be between 1 and 100, got 0")
	app.history = 10
	app.game = {"name": "tic_tac_toe", "oponent": "ai"}
	assert_false(app.register(rt))
	assert_contains(app.get_last_error(), "game: unknown field `oponent`")
	app.game = {}

	assert_true(app.register(rt), app.get_last_error())
	assert_true(app.is_registered())
	assert_false(app.register(rt), "twice")
	assert_eq(app.get_last_error(), "register: the app is registered as 'board' already (unregister() first)")
	var other := _app(null, "board")
	assert_false(other.register(rt))
	assert_eq(other.get_last_error(), "register: an app with id 'board' is registered already")
	assert_false(app.detach(), "no agent")
	assert_eq(app.get_last_error(), "detach: app 'board' has no agent attached")
	assert_false(app.attach("agent_404"))
	assert_eq(app.get_last_error(), "attach: unknown agent 'agent_404'")
	assert_false(app.complete_action(99, "ok", null))
	assert_eq(app.get_last_error(), "complete_action: app 'board' has no action 99 waiting for an answer")
	assert_false(app.emit_event("", null))
	assert_contains(app.get_last_error(), "an event needs a name")
	assert_false(app.human_says("  "))
	assert_eq(app.get_last_error(), "human_says: text must not be empty")

	assert_true(app.unregister())
	assert_false(app.is_registered())
	assert_false(app.unregister())
	assert_true(other.register(rt), "the id is free again")


func test_static_mode_agent_plays_through_action_requested() -> void:
	var rt := _runtime("static")
	var app := _app(rt, "board", {"actions": [PLACE], "world_tools": false,
		"role_prompt": "You play O at tic-tac-toe."})
	assert_true(app.set_state({"moves": 0}))
	var session := app.get_session()
	# Static mode tool generation: `place` with {row: integer, col: integer}.
	assert_eq(session.tools.size(), 1)
	assert_eq(session.tools[0].name, "place")
	assert_eq(session.tools[0].description, "Place mark")
	assert_eq(session.tools[0].parameters.properties.row.type, "integer")
	assert_eq(session.tools[0].parameters.properties.col.type, "integer")

	var id := rt.spawn_agent({"name": "Ivy", "role": "player"})
	assert_true(app.attach(id), app.get_last_error())
	assert_eq(app.get_agent_id(), id)
	assert_eq(_of("agent_attached"), [["agent_attached", id]])

	# Valid action: forwarded to the game with its params, by the agent.
	var requested := await _expect("action_requested")
	var first: Array = requested[0]
	assert_eq(first[1], 1, "the first action's id")
	assert_eq(first[2], "place")
	assert_type(first[3].get("row"), TYPE_INT)
	assert_type(first[3].get("col"), TYPE_INT)
	assert_eq(first[4], "agent")
	assert_contains(_of("chat_line"), ["chat_line", "system", "Ivy joined"])

	# Turn-based state update: the answer's new state wakes the agent, which acts again.
	await _waits(0.3)
	assert_eq(_of("action_requested").size(), 1, "nothing until the game answers")
	assert_true(app.complete_action(first[1], "placed", {"moves": 1}), app.get_last_error())
	var again := await _expect("action_requested", 2)
	assert_eq(again[1][2], "place")
	var recorded := await _expect("action_recorded")
	var record: Dictionary = recorded[0][1]
	assert_eq(record.action_id, 1)
	assert_eq(record.name, "place")
	assert_eq(record.by, "agent")
	assert_true(record.ok)
	assert_eq(record.result, "placed")
	assert_eq(record.error, "")
	assert_eq(record.params, first[3])
	assert_eq(app.get_state(), {"moves": 1})
	assert_false(app.complete_action(first[1], "again", null), "answered already")

	# An answer without a new state does not wake the agent; an event does.
	assert_true(app.complete_action(again[1][1], "placed", null))
	await _waits(1.0)
	assert_eq(_of("action_requested").size(), 2, "no new state, no new decision")
	assert_true(app.emit_event("yourTurn", null))
	await _expect("action_requested", 3)
	assert_true(app.fail_action(_of("action_requested")[2][1], "That square is taken"))
	var failed: Array = await _expect("action_recorded", 3)
	assert_false(failed[2][1].ok)
	assert_eq(failed[2][1].error, "That square is taken")

	var history: Array = app.get_session().history
	assert_eq(history.size(), 3)
	assert_eq(history.map(func(r): return r.action_id), [1, 2, 3])

	# Detaching: the agent leaves and is told about.
	assert_true(app.detach())
	assert_eq(app.get_agent_id(), "")
	await _expect("agent_detached")
	assert_eq(_of("agent_detached")[0], ["agent_detached", id, "detached"])
	assert_false(app.get_session().has("agent_id"))


func test_action_handler_answers_on_the_main_thread() -> void:
	var rt := _runtime("handler")
	var calls := []
	var app := _app(null, "counter", {"actions": [{"name": "bump", "description": "Add one",
		"params": {"by": "int"}}], "world_tools": false})
	app.set_state({"n": 0})
	app.action_handler = func(action: String, params: Dictionary, by: String):
		calls.append([action, params, by])
		# The handler may call back into the app.
		var n: int = app.get_state().n + 1
		return {"result": "n is %d" % n, "state": {"n": n}}
	assert_true(app.register(rt), app.get_last_error())
	var id := _agent(rt, "counter")
	assert_true(await wait_until(func(): return calls.size() >= 3), "the agent keeps acting: %s" % [calls])
	assert_eq(_of("action_requested"), [], "no signal with a handler")
	assert_eq(calls[0][0], "bump")
	assert_type(calls[0][1].get("by"), TYPE_INT)
	assert_eq(calls[0][2], "agent")
	var recorded := await _expect("action_recorded", 2)
	assert_eq(recorded[0][1].result, "n is 1")
	assert_eq(recorded[1][1].result, "n is 2")
	assert_eq(app.get_agent_id(), id)

	# A handler that takes the wrong arguments fails the action; the agent is told.
	app.action_handler = func(action: String): return "never"
	assert_true(await wait_until(func(): return _of("action_recorded").any(func(e): return not e[1].ok)))
	var bad: Dictionary = _of("action_recorded").filter(func(e): return not e[1].ok)[0][1]
	assert_eq(bad.error, "action_handler must take 3 arguments (action, params, by), it takes 1")
	# An answer with unknown keys too.
	app.action_handler = func(a, p, b): return {"reslt": 1}
	app.set_state({"n": 100})
	assert_true(await wait_until(func(): return _of("action_recorded").any(func(e): return "unknown key 'reslt'" in e[1].error)))
	app.action_handler = Callable()
	app.unregister()
	await _expect("agent_detached")
	assert_eq(_of("agent_detached")[0], ["agent_detached", id, "unregistered"])


func test_action_not_available_and_invalid_arguments() -> void:
	var rt := _runtime("not_available")
	var app := _app(rt, "board", {"actions": [PLACE], "world_tools": false})
	# The agent calls a tool that is not in the action list, three times (the runtime repairs
	# twice): refused with the routing's text, and nothing reaches the game.
	var id := _agent(rt, "board", [_call("fly"), _call("fly"), _call("fly")])
	var message := await _expect_agent_error(id, "Action not available")
	assert_contains(message, "Action not available: 'fly' is not one of the app's actions now (available: place)")
	assert_contains(message, "tool_not_allowed")
	assert_eq(_of("action_requested").filter(func(e): return e[2] == "fly"), [])

	# The human is told the same; in agent mode that check comes first.
	var request := app.human_action("fly", {})
	assert_eq(request, 1)
	var done := await _expect("human_action_done")
	assert_eq(done[0][1], request)
	assert_false(done[0][2].ok)
	assert_eq(done[0][2].action_id, 0)
	assert_eq(done[0][2].error, "Action not available: 'fly' is not one of the app's actions now (available: place)")

	# Invalid arguments: refused naming the field, before the game sees them.
	app.control_mode = "copilot"
	var bad := app.human_action("place", {"row": "one", "col": 2})
	done = await _expect("human_action_done", 2)
	assert_eq(done[1][1], bad)
	assert_true(done[1][2].error.begins_with("Invalid arguments for place: "), done[1][2].error)
	assert_contains(done[1][2].error, "row")
	assert_eq(_of("action_requested").filter(func(e): return e[4] == "human"), [])


func test_control_modes_and_the_humans_actions() -> void:
	var rt := _runtime("control")
	var analyze := AgentAction.new()
	analyze.name = "analyze"
	analyze.description = "Study the enemy"
	analyze.agent_only = true
	var app := _app(rt, "fight", {"control_mode": "human", "world_tools": false, "actions": [
		{"name": "attack", "description": "Attack"},
		{"name": "flee", "description": "Run away", "humanOnly": true},
		analyze,
	]})
	app.action_handler = func(action, params, by): return {"result": "%s by %s" % [action, by]}

	# Agent action blocked in human mode: "Human is in control", and no tools offered.
	assert_eq(app.get_session().tools, [])
	var id := _agent(rt, "fight", [_call("attack"), _call("attack"), _call("attack")])
	var message := await _expect_agent_error(id, "Human is in control")
	assert_contains(message, "human_in_control: Human is in control")

	# The human acts in human mode; agentOnly stays the agent's.
	var attack := app.human_action("attack", {})
	var done := await _expect("human_action_done")
	assert_eq(done[0][1], attack)
	assert_true(done[0][2].ok)
	assert_eq(done[0][2].by, "human")
	assert_eq(done[0][2].result, "attack by human")
	assert_type(done[0][2].action_id, TYPE_INT)
	assert_true(done[0][2].action_id > 0)
	app.human_action("analyze", {})
	done = await _expect("human_action_done", 2)
	assert_eq(done[1][2].error, "Action 'analyze' is agentOnly: only the agent can trigger it")

	# Copilot action partitioning: humanOnly is never the agent's, only the human's.
	app.control_mode = "copilot"
	assert_eq(app.control_mode, "copilot")
	var offered: Array = app.get_session().tools.map(func(t): return t.name)
	offered.sort()
	assert_eq(offered, ["analyze", "attack"])
	app.human_action("flee", {})
	done = await _expect("human_action_done", 3)
	assert_true(done[2][2].ok, str(done[2][2]))
	assert_eq(done[2][2].result, "flee by human")
	assert_contains(_of("chat_line"), ["chat_line", "system", "Control: copilot"])

	# Agent mode: the human is refused.
	app.control_mode = "agent"
	app.human_action("attack", {})
	done = await _expect("human_action_done", 4)
	assert_false(done[3][2].ok)
	assert_eq(done[3][2].error, "Agent is in control")
	assert_eq(app.get_session().control_mode, "agent")

	# The humans' handled actions are in the session's history, marked as theirs.
	var history: Array = app.get_session().history.filter(func(r): return r.by == "human")
	assert_eq(history.map(func(r): return r.name), ["attack", "flee"])


## A burst of actions longer than the session's history reaches the signals and the transcript
## whole, each event after the record of the action that raised it.
func test_a_burst_longer_than_the_history_loses_nothing() -> void:
	var rt := _runtime("burst")
	var app := _app(rt, "burst", {"control_mode": "human", "history": 2, "actions": [PLACE]})
	app.action_handler = func(_action, params, _by):
		if params.row == 4:
			return {"result": params.row, "events": [{"name": "fifth", "payload": {"row": 4}}]}
		return {"result": params.row}
	for row in 8:
		app.human_action("place", {"row": row, "col": 0})
	var recorded := await _expect("action_recorded", 8)
	assert_eq(recorded.size(), 8)
	var ids := recorded.map(func(e): return e[1].action_id)
	ids.sort()
	assert_eq(ids, [1, 2, 3, 4, 5, 6, 7, 8])
	await _expect("event_emitted")
	var lines := app.get_transcript().filter(func(i): return i.kind != "chat").map(func(i): return i.line)
	assert_eq(lines.size(), 9, str(lines))
	# The actions run at once, so records of other actions may come between; the event still
	# comes after the record of the action that raised it.
	var event_at := lines.find("Event: fifth — { row: 4 }")
	var record_at := -1
	for i in lines.size():
		if lines[i].ends_with("place { col: 0, row: 4 } → ok: 4"):
			record_at = i
	assert_true(record_at >= 0 and event_at > record_at, str(lines))
	assert_eq(app.get_session().history.size(), 2)


func test_copilot_human_only_refused_for_the_agent() -> void:
	var rt := _runtime("copilot")
	var app := _app(rt, "fight", {"control_mode": "copilot", "world_tools": false, "actions": [
		{"name": "attack", "description": "Attack"},
		{"name": "flee", "description": "Run away", "humanOnly": true},
	]})
	var id := _agent(rt, "fight", [_call("flee"), _call("flee"), _call("flee")])
	var message := await _expect_agent_error(id, "humanOnly")
	assert_contains(message, "human_only: Action 'flee' is humanOnly: only the human can trigger it")
	assert_eq(_of("action_requested").filter(func(e): return e[2] == "flee"), [])


func test_dynamic_context_labels_events_and_the_session() -> void:
	var rt := _runtime("dynamic")
	var app := _app(rt, "shop", {"mode": "dynamic", "world_tools": false,
		"role_prompt": "You run the shop.", "actions": [{"name": "browse", "description": "Look"}]})
	app.action_handler = func(action, params, by): return {"result": "bought " + str(params.get("item", ""))}
	var id := _agent(rt, "shop")
	await _expect("agent_attached")

	# Dynamic mode tool update: new actions are the agent's tools.
	assert_true(app.set_context({
		"state": {"gold": 12},
		"actions": [{"name": "buy", "description": "Buy an item", "params": {"item": "string"}},
			{"name": "leave", "description": "Leave the shop"}],
		"human_label": LABEL,
	}), app.get_last_error())
	assert_eq(app.actions.size(), 2)
	assert_eq(app.human_label, LABEL)
	var names: Array = app.get_session().tools.map(func(t): return t.name)
	assert_eq(names, ["buy", "leave"])

	# Human label display: "🎮 <label>", once.
	var labels := await _expect("label_changed")
	assert_eq(labels[0], ["label_changed", LABEL])
	assert_contains(_of("chat_line"), ["chat_line", "system", "🎮 ⚔️ Combat: Lv.15 Goblin"])
	app.human_label = LABEL
	app.set_context({"humanLabel": LABEL})
	await wait_frames(10)
	assert_eq(_of("label_changed").size(), 1, "the same label is not shown again")

	# Game event notification: "Event: roundEnded — { winner: X }".
	assert_true(app.emit_event("roundEnded", {"winner": "X"}), app.get_last_error())
	var emitted := await _expect("event_emitted")
	assert_eq(emitted[0], ["event_emitted", "roundEnded", "Event: roundEnded — { winner: X }"])

	# The session: everything the agent's context of the app holds.
	var session := app.get_session()
	assert_has_keys(session, ["app_id", "mode", "control_mode", "role_prompt", "state",
		"human_label", "agent_id", "actions", "tools", "history", "events", "chat"])
	assert_eq(session.app_id, "shop")
	assert_eq(session.mode, "dynamic")
	assert_eq(session.control_mode, "agent")
	assert_eq(session.role_prompt, "You run the shop.")
	assert_eq(session.state, {"gold": 12})
	assert_eq(session.human_label, LABEL)
	assert_eq(session.agent_id, id)
	assert_eq(session.actions[0].params.properties.item.type, "string")
	assert_eq(session.events[-1].name, "roundEnded")
	assert_eq(session.events[-1].payload, {"winner": "X"})
	assert_eq(session.events[-1].text, "Event: roundEnded — { winner: X }")
	var chat: Array = session.chat.map(func(l): return [l.role, l.text])
	assert_contains(chat, ["system", "Ivy joined"])
	assert_contains(chat, ["system", "🎮 ⚔️ Combat: Lv.15 Goblin"])

	# The agent sees its history: its actions and their outcomes (dynamic mode: the game
	# answers without waking it; the events do).
	for i in 3:
		app.emit_event("tick", {"n": i})
		await wait_until(func(): return _of("action_recorded").size() > i)
	var history: Array = app.get_session().history
	assert_true(history.size() >= 3, "three actions: %s" % [history])
	assert_true(history.all(func(r): return r.by == "agent" and r.ok))


func test_chat_panel_shows_the_session() -> void:
	var rt := _runtime("panel")
	var app := _app(rt, "board", {"actions": [PLACE]})
	app.action_handler = func(action, params, by): return {"result": "placed"}
	var panel := AgentChatPanel.new()
	panel.app_path = NodePath("../" + app.name)
	add_to_tree(panel)
	assert_eq(panel.app, app)
	assert_eq(panel.get_lines(), PackedStringArray())
	app.human_label = "Round 1"
	assert_true(await wait_until(func(): return panel.get_lines() == PackedStringArray(["🎮 Round 1"])),
		"the label's line: %s" % [panel.get_lines()])

	var id := _agent(rt, "board", [_call("place", {"row": 1, "col": 2})])
	assert_true(await wait_until(func(): return "#1 agent place { col: 2, row: 1 } → ok: placed" in panel.get_lines()),
		"the action's line: %s" % [panel.get_lines()])
	app.set_context({"human_label": LABEL})
	app.emit_event("roundEnded", {"winner": "X"})
	assert_true(panel.send("Well played, Ivy"))
	assert_false(panel.send("   "))
	# The line edit sends too, and is cleared.
	panel.get_line_edit().text = "From the box"
	panel.get_line_edit().text_submitted.emit("From the box")
	assert_eq(panel.get_line_edit().text, "")
	assert_true(await wait_until(func():
		var lines := panel.get_lines()
		return "Event: roundEnded — { winner: X }" in lines and "You: From the box" in lines),
		"lines: %s" % [panel.get_lines()])
	var lines := panel.get_lines()
	assert_eq(lines[0], "🎮 Round 1")
	assert_eq(lines[1], "Ivy joined")
	assert_contains(lines, "🎮 ⚔️ Combat: Lv.15 Goblin")
	assert_contains(lines, "You: Well played, Ivy")
	assert_true(lines.find("You: Well played, Ivy") < lines.find("You: From the box"), "in order")
	# The agent answers the human in the chat.
	assert_true(await wait_until(func(): return Array(panel.get_lines()).any(func(l): return l.begins_with("Ivy: "))),
		"the agent's line: %s" % [panel.get_lines()])

	# Options: no actions; a short panel keeps the last lines.
	panel.show_actions = false
	panel.max_lines = 10
	panel.app = app
	assert_false(Array(panel.get_lines()).any(func(l): return l.begins_with("#")))
	assert_true(panel.get_lines().size() <= 10)

	# A restored session comes back in the panel (same app id, new registration).
	app.unregister()
	assert_true(rt.flush())
	await wait_frames(2)
	assert_true(app.register(rt), app.get_last_error())
	panel.show_actions = true
	panel.max_lines = 200
	panel.app = app
	var restored := panel.get_lines()
	assert_contains(restored, "#1 agent place { col: 2, row: 1 } → ok: placed")
	assert_contains(restored, "You: Well played, Ivy")
	assert_eq(rt.get_agent_state(id).agent_id, id, "the agent keeps running")


func test_runtime_path_registers_and_follows_the_runtime() -> void:
	# The app comes first in the tree: it starts the runtime (autostart) and registers in _ready.
	var scene := Node.new()
	var app := AgentApp.new()
	app.name = "App"
	app.app_id = "auto"
	app.actions = [PLACE]
	app.runtime_path = NodePath("../Runtime")
	_record_signals(app)
	scene.add_child(app)
	var rt := AgentRuntime.new()
	rt.name = "Runtime"
	rt.database_path = fresh_db(DB_DIR, "auto")
	rt.idle_think_seconds = 1000.0
	rt.thinking_seconds = 0.05
	scene.add_child(rt)
	add_to_tree(scene)
	assert_true(app.is_registered(), app.get_last_error())
	assert_eq(app.get_session().app_id, "auto")
	# An agent config resource attaches at spawn.
	var config := AgentConfig.new()
	config.name = "Ivy"
	config.app_id = "auto"
	assert_eq(config.to_dictionary().app_id, "auto")
	var id := rt.spawn_agent(config)
	assert_ne(id, "", rt.get_last_error())
	await _expect("agent_attached")
	assert_eq(app.get_agent_id(), id)

	# The runtime stops: the app is no longer registered; it registers again once it runs.
	rt.stop()
	await wait_frames(2)
	assert_false(app.is_registered())
	assert_true(rt.start())
	assert_true(await wait_until(func(): return app.is_registered()), app.get_last_error())
	assert_eq(app.get_agent_id(), "", "the agent stopped with the runtime")

	# Leaving the tree unregisters it (the id is free for another app).
	scene.remove_child(app)
	var other := _app(rt, "auto")
	assert_true(other.is_registered())
	app.free()

	# A runtime_path that is not an AgentRuntime is reported.
	var wrong := AgentApp.new()
	wrong.app_id = "wrong"
	wrong.runtime_path = NodePath("..")
	add_to_tree(wrong)
	assert_false(wrong.is_registered())
	assert_contains(wrong.get_last_error(), "is not an AgentRuntime")


func test_built_in_game_app_needs_no_handler() -> void:
	var rt := _runtime("game")
	var app := _app(rt, "ttt", {"game": {"name": "tic_tac_toe", "opponent": "ai", "level": "easy", "seed": 7},
		"world_tools": false})
	var state: Dictionary = app.get_state()
	assert_eq(state.get("game"), "tic_tac_toe", str(state))
	assert_eq(state.get("turn"), "you")
	_agent(rt, "ttt")
	assert_true(await wait_until(func():
		return _of("action_recorded").any(func(e): return e[1].name == "move" and e[1].ok)),
		"the agent moved: %s" % [_summary()])
	assert_eq(_of("action_requested"), [], "the built-in game handles its actions")
	assert_ne(app.get_state().position, state.position)


## A house game: the human at the controls (human control mode) plays blackjack from the app's
## actions; the agent is offered nothing, and the shoe never shows.
func test_house_game_played_by_the_human() -> void:
	var rt := _runtime("house")
	var app := _app(rt, "bj", {"game": {"name": "blackjack", "stack": 40, "bet": 10, "seed": 3},
		"control_mode": "human", "world_tools": false})
	var state: Dictionary = app.get_state()
	assert_eq(state.get("game"), "blackjack", str(state))
	assert_false(state.has("state"), "the state string stays in the app")
	assert_eq(app.get_session().tools, [])
	var rounds := 0
	for step in 12:
		var names: Array = app.get_session().actions.map(func(a): return a.name)
		if names.is_empty():
			break
		var pick: String = "stand" if "stand" in names else names[0]
		app.human_action(pick, {})
		var done := await _expect("human_action_done", step + 1)
		assert_true(done[step][2].ok, str(done[step][2]))
		if pick == "deal" or app.get_state().status == "game_over":
			rounds += 1
	assert_true(rounds >= 2, "rounds played: %d, events: %s" % [rounds, _summary()])
	var overs := _of("event_emitted").filter(func(e): return e[1] == "game_over")
	assert_true(overs.size() >= 1, _summary())
	assert_contains(overs[0][2], "Event: game_over — { ")
	var bad := _app(null, "bad", {"game": {"name": "sea_battle", "opponent": "human"}})
	assert_false(bad.register(rt))
	assert_contains(bad.get_last_error(), "game.opponent: sea_battle is played against the built-in AI only")


func test_awaited_human_actions_and_a_handler_that_awaits() -> void:
	var rt := _runtime("awaited")
	var app := _app(rt, "oven", {"control_mode": "human", "world_tools": false, "actions": [
		{"name": "bake", "description": "Bake a loaf", "params": {"item": "string"}},
		{"name": "burn", "description": "Burn it"},
	]})
	var steps := []
	# The handler awaits (an animation, a timer) before it answers.
	app.action_handler = func(action, params, by):
		steps.append("started " + action)
		await tree.create_timer(0.05).timeout
		steps.append("finished " + action)
		if action == "burn":
			return {"error": "the oven is cold"}
		return {"result": "baked " + params.item, "state": {"loaves": 1}}
	var result: Dictionary = await app.perform("bake", {"item": "rye"})
	assert_true(result.ok, str(result))
	assert_eq(result.error, {})
	assert_eq(result.record.result, "baked rye")
	assert_eq(result.record.by, "human")
	assert_eq(steps, ["started bake", "finished bake"], "answered when the coroutine ended")
	assert_eq(app.get_state(), {"loaves": 1})
	# The game fails it: action_failed, with the game's reason.
	result = await app.perform("burn", {})
	assert_false(result.ok)
	assert_eq(result.error.code, "action_failed")
	assert_eq(result.error.message, "the oven is cold")
	# Refused before the game sees it: action_refused.
	result = await app.perform("bake", {"item": 3})
	assert_eq(result.error.code, "action_refused", str(result))
	result = await app.perform("fly", {})
	assert_eq(result.error.code, "action_refused")
	assert_contains(result.error.message, "Action not available")
	app.control_mode = "agent"
	var op: AgentOperation = app.perform_async("bake", {"item": "spelt"})
	await op.finished
	assert_eq(op.get_result().error.message, "Agent is in control")
	# Not registered: resolves at once.
	app.unregister()
	result = await app.perform("bake", {"item": "rye"})
	assert_eq(result.error.code, "action_refused")
