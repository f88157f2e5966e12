## AgentRuntime and AgentConfig end to end: spawning, every signal, queries, tasks, the player's
## messages, errors, stopping, and restarting on the same database. Each test has its own database
## under user://test_agent_runtime/ and short timings.
extends "res://tests/test_base.gd"

const DB_DIR := "user://test_agent_runtime"
const SIGNALS := [
	"agent_spawned", "agent_state_changed", "agent_moved", "agent_spoke", "agent_removed",
	"task_assigned", "task_completed", "collaboration_requested", "agent_error", "agent_replied",
]

## Every signal received, in order: `[signal_name, arg0, arg1, …]`.
var events: Array = []
## Set when an expected event did not come: the rest of the test fails fast instead of waiting.
var _gave_up := false


func before_each() -> void:
	events = []
	_gave_up = false
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DB_DIR))


## An AgentRuntime on `db` with short timings, every signal recorded into `events`, added to the
## tree (so it starts, unless `settings` turns autostart off).
func _runtime(db: String, settings := {}) -> AgentRuntime:
	var rt := AgentRuntime.new()
	rt.database_path = db
	rt.idle_think_seconds = 0.2
	rt.thinking_seconds = 0.05
	rt.speaking_seconds = 0.05
	for key in settings:
		rt.set(key, settings[key])
	_record_signals(rt)
	add_to_tree(rt)
	return rt


func _record_signals(rt: AgentRuntime) -> void:
	rt.agent_spawned.connect(func(id, agent_name, role, pos): events.append(["agent_spawned", id, agent_name, role, pos]))
	rt.agent_state_changed.connect(func(id, old, new): events.append(["agent_state_changed", id, old, new]))
	rt.agent_moved.connect(func(id, from, to): events.append(["agent_moved", id, from, to]))
	rt.agent_spoke.connect(func(id, content, to): events.append(["agent_spoke", id, content, to]))
	rt.agent_removed.connect(func(id, reason): events.append(["agent_removed", id, reason]))
	rt.task_assigned.connect(func(id, task_id, task): events.append(["task_assigned", id, task_id, task]))
	rt.task_completed.connect(func(id, task_id, task): events.append(["task_completed", id, task_id, task]))
	rt.collaboration_requested.connect(func(id, helper, task): events.append(["collaboration_requested", id, helper, task]))
	rt.agent_error.connect(func(id, code, message): events.append(["agent_error", id, code, message]))
	rt.agent_replied.connect(func(id, in_reply_to, reply): events.append(["agent_replied", id, in_reply_to, reply]))


## The recorded events of `kind` whose leading arguments equal `args` (`null` matches anything).
func _found(kind: String, args := []) -> Array:
	var out := []
	for e in events:
		if e[0] != kind:
			continue
		var ok := true
		for i in args.size():
			if args[i] != null and not deep_equal(e[i + 1], args[i]):
				ok = false
				break
		if ok:
			out.append(e)
	return out


## Waits (frame by frame) for an event of `kind` matching `args`; returns it, or fails and
## returns [] after `timeout` seconds.
func _expect(kind: String, args := [], timeout := 8.0) -> Array:
	var ok: bool = not _found(kind, args).is_empty()
	if not ok and not _gave_up:
		ok = await wait_until(func(): return not _found(kind, args).is_empty(), timeout)
	if not ok:
		fail("no %s%s%s; got %s" % [kind, args,
			" (after an earlier miss)" if _gave_up else " within %.1f s" % timeout, _summary()])
		_gave_up = true
		return [kind, null, null, null, null]
	return _found(kind, args)[0]


func _summary() -> String:
	var parts := []
	for e in events.slice(max(0, events.size() - 30)):
		parts.append(str(e))
	return "\n    " + "\n    ".join(parts)


## A brain reply in the tool-call contract; `calls` is `[[tool, args], …]`.
func _reply(calls: Array, text := "", dialog := "chat") -> Dictionary:
	var tool_calls := []
	for i in calls.size():
		tool_calls.append({"id": "call_%03d" % (i + 1), "tool": calls[i][0], "args": calls[i][1]})
	return {"assistant_text": text, "dialog_type": dialog, "tool_calls": tool_calls}


func test_defaults_and_config_resource() -> void:
	var rt := AgentRuntime.new()
	assert_eq(rt.database_path, "user://agents.db")
	assert_eq(rt.idle_think_seconds, 5.0)
	assert_eq(rt.world_bounds, Rect2(0, 0, 100, 100))
	assert_eq(rt.default_brain, "scripted")
	assert_eq(rt.thinking_seconds, 0.8)
	assert_eq(rt.speaking_seconds, 1.5)
	assert_eq(rt.hearing_radius, -1.0, "automatic: 15% of world_bounds' longer side")
	assert_eq(rt.player_id, "player_0")
	assert_eq(rt.seed, 0)
	assert_false(rt.resume_agents)
	assert_true(rt.autostart)
	assert_eq(rt.event_queue_capacity, 65536)
	assert_eq(rt.max_events_per_frame, 0)
	assert_eq(rt.max_drain_usec_per_frame, 1000)
	assert_false(rt.is_running(), "not running before it enters the tree")
	rt.free()

	var cfg := AgentConfig.new()
	assert_eq(cfg.to_dictionary(), {"name": "", "role": "", "prompt": "", "initial_position": {"x": 0, "y": 0},
		"autonomous": true})
	cfg.name = "Mira"
	cfg.role = "baker"
	cfg.prompt = "You bake bread.\nYou are cheerful."
	cfg.brain = "scripted"
	cfg.initial_position = Vector2(10, 20.5)
	cfg.idle_think_seconds = 3.0
	cfg.hearing_radius = 0.0
	cfg.seed = 7
	cfg.agent_id = "agent_004"
	cfg.tool_sets = PackedStringArray(["world", "games"])
	cfg.autonomous = false
	assert_eq(cfg.to_dictionary(), {
		"name": "Mira", "role": "baker", "prompt": "You bake bread.\nYou are cheerful.",
		"brain": "scripted", "initial_position": {"x": 10, "y": 20.5},
		"idle_think_seconds": 3.0, "hearing_radius": 0.0, "seed": 7, "agent_id": "agent_004",
		"tools": ["world", "games"], "autonomous": false})
	cfg.use_initial_position = false
	assert_false(cfg.to_dictionary().has("initial_position"))

	# Savable as .tres, and loads back with every field.
	var path := DB_DIR.path_join("mira.tres")
	assert_eq(ResourceSaver.save(cfg, path), OK)
	var back: AgentConfig = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)
	assert_true(back is AgentConfig)
	assert_eq(back.to_dictionary(), cfg.to_dictionary())
	assert_eq(back.prompt, "You bake bread.\nYou are cheerful.")


func test_spawn_from_config_and_dictionary() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "spawn"))
	assert_true(rt.is_running(), "running after _ready: %s" % rt.get_last_error())
	var cfg := AgentConfig.new()
	cfg.name = "Mira"
	cfg.role = "baker"
	cfg.initial_position = Vector2(10, 20)
	cfg.idle_think_seconds = 60.0
	assert_eq(rt.spawn_agent(cfg), "agent_001")
	assert_eq(rt.get_last_error(), "")
	var id2 := rt.spawn_agent({"name": "Bram", "role": "smith",
		"initial_position": {"x": 30, "y": 40}, "idle_think_seconds": 60})
	assert_eq(id2, "agent_002")
	var id3 := rt.spawn_agent({"name": "Tess", "cli_backend": "scripted",
		"initial_position": Vector2(5, 6), "idle_think_seconds": 60, "brain": ""})
	assert_eq(id3, "agent_003", rt.get_last_error())

	assert_eq(await _expect("agent_spawned", ["agent_001"]), ["agent_spawned", "agent_001", "Mira", "baker", Vector2(10, 20)])
	assert_eq(await _expect("agent_spawned", ["agent_002"]), ["agent_spawned", "agent_002", "Bram", "smith", Vector2(30, 40)])
	assert_eq(await _expect("agent_spawned", ["agent_003"]), ["agent_spawned", "agent_003", "Tess", "", Vector2(5, 6)])

	assert_eq(rt.list_agents(), PackedStringArray(["agent_001", "agent_002", "agent_003"]))
	var state := rt.get_agent_state("agent_001")
	assert_eq(state, {
		"agent_id": "agent_001", "name": "Mira", "role": "baker", "brain": "scripted",
		"state": "idle", "position": Vector2(10, 20), "current_task": "", "current_task_id": 0})
	var states := rt.get_agent_states()
	assert_eq(states.size(), 3)
	assert_eq(states[1]["name"], "Bram")
	assert_eq(rt.get_agent_state("agent_404"), {}, "unknown agents have an empty state")
	var stored := rt.get_stored_agents()
	assert_eq(stored.size(), 3)
	assert_eq(stored[0]["agent_id"], "agent_001")
	assert_eq(stored[0]["position"], Vector2(10, 20))
	assert_eq(stored[0]["removed_at"], null)


func test_autonomous_state_changes_and_moves() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "moves"))
	var id := rt.spawn_agent({"name": "Walker", "initial_position": Vector2(40, 40),
		"script": [_reply([["move", {"x": 60, "y": 55}]])]})
	assert_eq(id, "agent_001", rt.get_last_error())
	# Idle for 0.2 s: it thinks on its own, moves (its scripted first decision) and is idle again.
	await _expect("agent_state_changed", [id, "idle", "thinking"])
	assert_eq(await _expect("agent_moved", [id]), ["agent_moved", id, Vector2(40, 40), Vector2(60, 55)])
	await _expect("agent_state_changed", [id, "thinking", "idle"])
	assert_eq(rt.get_agent_state(id)["position"], Vector2(60, 55))
	var history := rt.get_state_history(id)
	assert_true(history.size() >= 2, "state history rows: %s" % [history])
	assert_eq(history[0]["old_state"], "idle")
	assert_eq(history[0]["new_state"], "thinking")
	assert_eq(history[0]["agent_id"], id)
	assert_type(history[0]["timestamp"], TYPE_STRING)
	assert_eq(rt.get_state_history(id, 1).size(), 1, "limit")
	# The scripted brain calls no model: its trace is empty (and an unknown agent is an error).
	assert_eq(rt.get_agent_trace(id), [])
	assert_eq(rt.get_agent_trace("agent_404"), [])
	assert_contains(rt.get_last_error(), "agent_404")


func test_refused_and_invalid_actions_go_back_for_repair_then_become_agent_errors() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "refused"))
	# A move outside the world, then a move after a line: each is sent back for repair (the
	# schemas a brain sees hold the world's bounds, and nothing may follow `speak`); the
	# second repair says the line alone.
	var id := rt.spawn_agent({"name": "Crier", "initial_position": Vector2(50, 50), "script": [
		_reply([["move", {"x": 500, "y": 5}]]),
		_reply([["speak", {"content": "Hear ye!"}], ["move", {"x": 1, "y": 1}]]),
		_reply([["speak", {"content": "Hear ye!"}]]),
	]})
	assert_eq(await _expect("agent_spoke", [id]), ["agent_spoke", id, "Hear ye!", PackedStringArray()])
	await _expect("agent_state_changed", [id, "speaking", "idle"])
	assert_true(_found("agent_moved", [id]).is_empty(), "no move happened")
	assert_true(_found("agent_error", [id]).is_empty(), "repaired, not failed")
	assert_eq(rt.get_agent_state(id)["position"], Vector2(50, 50))
	# The journal keeps what went back, with why.
	var decisions: Array = rt.get_recent_decisions(id)
	var first: Dictionary = decisions[0]
	assert_eq(first["repairs"], 2)
	var why: Array = first["rejected"].map(func(c): return c["tool"] + " " + c["detail"])
	assert_eq(why.size(), 2, str(why))
	assert_contains(why[0], "move invalid_args")
	assert_contains(why[0], "outside the world bounds")
	assert_contains(why[1], "move invalid_actor_state")
	assert_contains(why[1], "no call can follow `speak`")
	# Still wrong after the repairs: the decision fails with an agent_error naming why.
	var stubborn := rt.spawn_agent({"name": "Stubborn", "initial_position": Vector2(10, 10), "script": [
		_reply([["move", {"x": 500, "y": 5}]]),
		_reply([["move", {"x": 600, "y": 5}]]),
		_reply([["move", {"x": 700, "y": 5}]]),
	]})
	var failed := await _expect("agent_error", [stubborn, "brain_invalid_reply"])
	assert_contains(str(failed[3]), "outside the world bounds")
	assert_true(_found("agent_moved", [stubborn]).is_empty(), "nothing of it ran")


func test_say_returns_the_message_id_and_agent_said_carries_the_dialog_type() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "say"))
	var said := []
	rt.agent_said.connect(func(id, text, to, dialog_type): said.append([id, text, to, dialog_type]))
	var id := rt.spawn_agent({"name": "Mira", "role": "baker", "idle_think_seconds": 60})
	var message_id := rt.say(id, "Is the bread ready?")
	assert_true(message_id > 0, rt.get_last_error())
	# The player's line, and the answer: the fields of AgentNode.spoke, with the agent's id.
	assert_true(await wait_until(func(): return said.size() >= 2, 10.0), str(said))
	assert_eq(said[0], ["player_0", "Is the bread ready?", PackedStringArray([id]), "player"])
	assert_eq(said[1][0], id)
	assert_contains(said[1][2], "player_0")
	assert_eq(said[1][3], "reply")
	# The deprecated agent_spoke still comes, with its three arguments.
	assert_eq((await _expect("agent_spoke", ["player_0"])).slice(1), ["player_0", "Is the bread ready?", PackedStringArray([id])])
	# The decision's reply names the id say() returned.
	var replied := await _expect("agent_replied", [id])
	assert_eq(replied[2], PackedInt64Array([message_id]))
	# An error is 0 and says why.
	assert_eq(rt.say("nobody", "Hello?"), 0)
	assert_contains(rt.get_last_error(), "nobody")


func test_player_message_gets_an_answer() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "player"))
	var id := rt.spawn_agent({"name": "Mira", "role": "baker", "idle_think_seconds": 60})
	assert_true(rt.send_message(id, "Hello there, Mira!"))
	assert_eq(await _expect("agent_spoke", ["player_0"]),
		["agent_spoke", "player_0", "Hello there, Mira!", PackedStringArray([id])])
	await _expect("agent_state_changed", [id, "idle", "listening"])
	await _expect("agent_state_changed", [id, "listening", "thinking"])
	var answer := await _expect("agent_spoke", [id])
	assert_contains(answer[3], "player_0", "the answer is addressed to the player")
	assert_ne(answer[2], "")
	await _expect("agent_state_changed", [id, "thinking", "speaking"])
	await _expect("agent_state_changed", [id, "speaking", "idle"])
	# The decision's reply names the line it answered and carries what was said.
	var replied := await _expect("agent_replied", [id])
	assert_eq(replied[2].size(), 1, "one line answered")
	assert_type(replied[2], TYPE_PACKED_INT64_ARRAY)
	assert_eq(replied[3]["text"], answer[2])
	assert_eq(replied[3]["error"], {}, "no failure")
	var tools := []
	for action in replied[3]["actions"]:
		tools.append(action["tool"])
		assert_eq(action["outcome"], "done")
	assert_contains(tools, "speak")
	var lines := rt.get_conversation(id)
	var senders := []
	for row in lines:
		senders.append(row["sender"])
		assert_has_keys(row, ["id", "agent_id", "timestamp", "sender", "content", "recipient"])
	assert_contains(senders, "player_0")
	assert_contains(senders, id)
	assert_eq(lines[0]["content"], "Hello there, Mira!")
	assert_eq(lines[0]["recipient"], id)
	assert_type(lines[0]["id"], TYPE_INT)
	assert_eq(rt.get_conversation(id, 1).size(), 1, "limit")
	assert_false(rt.send_message(id, ""), "empty messages are refused")
	assert_eq(_found("agent_error", [id, "invalid_message"]).size(), 1)


func test_tasks_assigned_and_completed() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "tasks"))
	var id := rt.spawn_agent({"name": "Bram", "role": "smith", "idle_think_seconds": 60})
	var task_id := rt.assign_task(id, "forge a horseshoe")
	assert_true(task_id > 0, "task id %d" % task_id)
	assert_eq(await _expect("task_assigned", [id]), ["task_assigned", id, task_id, "forge a horseshoe"])
	var state := rt.get_agent_state(id)
	assert_eq(state["current_task"], "forge a horseshoe")
	assert_eq(state["current_task_id"], task_id)
	assert_true(rt.complete_task(task_id))
	assert_eq(await _expect("task_completed", [id]), ["task_completed", id, task_id, "forge a horseshoe"])
	assert_eq(rt.get_agent_state(id)["current_task"], "")
	var tasks := rt.get_tasks(id)
	assert_eq(tasks.size(), 1)
	assert_eq(tasks[0]["status"], "completed")
	assert_eq(tasks[0]["task_name"], "forge a horseshoe")
	assert_type(tasks[0]["completed_at"], TYPE_STRING)
	# Completing twice, or a task that does not exist, fails.
	assert_false(rt.complete_task(task_id))
	assert_eq(_found("agent_error", ["", "task_already_completed"]).size(), 1, _summary())
	assert_false(rt.complete_task(999999))
	assert_eq(_found("agent_error", ["", "unknown_task"]).size(), 1, _summary())
	assert_eq(rt.assign_task("agent_404", "x"), 0)
	assert_eq(rt.assign_task(id, ""), 0, "empty task names are refused")


func test_collaboration_and_agent_completion() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "collab"))
	var helper := rt.spawn_agent({"name": "Bram", "role": "smith", "idle_think_seconds": 60,
		"initial_position": Vector2(52, 50)})
	var asker := rt.spawn_agent({"name": "Mira", "role": "baker", "initial_position": Vector2(50, 50),
		"script": [
			_reply([["collaborate", {"agent_id": helper, "task_name": "carry flour",
				"message": "Bram, can you help me carry flour?"}]]),
			_reply([["complete_task", {}]], "The bread is baked!", "task_update"),
		]})
	var own_task := rt.assign_task(asker, "bake bread")
	assert_eq(await _expect("collaboration_requested", [asker]),
		["collaboration_requested", asker, helper, "carry flour"])
	var assigned := await _expect("task_assigned", [helper, null, "carry flour"])
	assert_true(assigned[2] > 0)
	assert_ne(assigned[2], own_task)
	assert_eq(rt.get_tasks(helper).size(), 1)
	assert_eq(rt.get_tasks(helper)[0]["task_name"], "carry flour")
	# The asker's next decision completes its own task (complete_task without an id: the current
	# task) and says so.
	assert_eq(await _expect("task_completed", [asker]), ["task_completed", asker, own_task, "bake bread"])
	await _expect("agent_spoke", [asker, "The bread is baked!"])
	assert_eq(rt.get_tasks(asker)[0]["status"], "completed")


func test_terminate_and_errors() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "terminate"))
	var id := rt.spawn_agent({"name": "Guard", "idle_think_seconds": 60})
	await _expect("agent_spawned", [id])
	assert_true(rt.terminate_agent(id))
	assert_eq(await _expect("agent_removed", [id]), ["agent_removed", id, "terminated"])
	assert_eq(rt.list_agents(), PackedStringArray())
	assert_eq(rt.get_agent_state(id), {})
	# Unknown agents.
	assert_false(rt.terminate_agent(id))
	assert_eq(_found("agent_error", [id, "unknown_agent"]).size(), 1, _summary())
	assert_contains(rt.get_last_error(), "unknown agent")
	assert_false(rt.send_message("agent_404", "hello?"))
	assert_eq(_found("agent_error", ["agent_404", "unknown_agent"]).size(), 1)
	# Bad configs: an unknown key, a wrong type, a negative time, an unknown brain, not a config.
	assert_eq(rt.spawn_agent({"name": "X", "nmae": "typo"}), "")
	assert_contains(rt.get_last_error(), "nmae")
	assert_eq(rt.spawn_agent({"name": 5}), "")
	assert_eq(rt.spawn_agent({"name": "X", "idle_think_seconds": -1}), "")
	assert_contains(rt.get_last_error(), "idle_think_seconds")
	assert_eq(rt.spawn_agent({"name": "X", "brain": "no_such_brain"}), "")
	assert_contains(rt.get_last_error(), "no_such_brain")
	assert_eq(rt.spawn_agent(42), "")
	assert_eq(rt.spawn_agent(RefCounted.new()), "")
	assert_eq(rt.spawn_agent({"agent_id": "agent_777"}), "", "resuming an id that is not stored")
	assert_eq(_found("agent_error", ["", "invalid_config"]).size(), 5, _summary())
	assert_eq(_found("agent_error", ["", "unknown_brain"]).size(), 1, _summary())
	assert_eq(_found("agent_error", ["agent_777", "unknown_agent"]).size(), 1, _summary())
	# A failure is followed by a success: the last error is cleared.
	assert_eq(rt.spawn_agent({"name": "Fine", "idle_think_seconds": 60}), "agent_002", "failed spawns use no id")
	assert_eq(rt.get_last_error(), "")


func test_not_running_and_bad_options() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "options"), {"autostart": false})
	assert_false(rt.is_running())
	assert_eq(rt.spawn_agent({"name": "X"}), "")
	assert_eq(_found("agent_error", ["", "not_running"]).size(), 1)
	assert_eq(rt.get_agent_states(), [] as Array[Dictionary])
	rt.seed = -3
	assert_false(rt.start())
	assert_contains(rt.get_last_error(), "seed")
	rt.seed = 1
	rt.world_bounds = Rect2(0, 0, -5, 10)
	assert_false(rt.start())
	assert_contains(rt.get_last_error(), "world_bounds")
	rt.world_bounds = Rect2(0, 0, 10, 10)
	rt.default_brain = ""
	assert_false(rt.start())
	rt.default_brain = "scripted"
	assert_eq(_found("agent_error", ["", "invalid_options"]).size(), 3)
	assert_true(rt.start())
	assert_true(rt.start(), "start while running is a no-op")
	assert_eq(rt.spawn_agent({"name": "X", "initial_position": Vector2(5, 5)}), "agent_001", rt.get_last_error())
	assert_eq(rt.spawn_agent({"name": "Y", "initial_position": Vector2(50, 50)}), "", "outside the 10×10 world")


func test_stop_emits_shutdown_removals_and_start_again() -> void:
	var db := fresh_db(DB_DIR, "stop")
	var rt := _runtime(db)
	var id := rt.spawn_agent({"name": "Farmer", "idle_think_seconds": 60})
	await _expect("agent_spawned", [id])
	rt.stop()
	assert_false(rt.is_running())
	assert_eq(_found("agent_removed", [id]), [["agent_removed", id, "shutdown"]], "emitted by stop()")
	assert_eq(rt.spawn_agent({"name": "X"}), "")
	rt.stop()
	assert_true(rt.start())
	assert_eq(rt.list_agents(), PackedStringArray(), "resume_agents is off")
	assert_eq(rt.spawn_agent({"agent_id": id}), id, rt.get_last_error())
	assert_eq(rt.get_agent_state(id)["name"], "Farmer")


func test_restart_on_the_same_database_keeps_history() -> void:
	var db := fresh_db(DB_DIR, "restart")
	var rt := _runtime(db)
	var mira := rt.spawn_agent({"name": "Mira", "role": "baker", "idle_think_seconds": 60,
		"initial_position": Vector2(20, 30)})
	assert_true(rt.send_message(mira, "Any bread left?"))
	await _expect("agent_spoke", [mira])
	await _expect("agent_state_changed", [mira, "speaking", "idle"])
	var task_id := rt.assign_task(mira, "bake rolls")
	assert_true(rt.flush())
	var lines_before := rt.get_conversation(mira)
	var history_before := rt.get_state_history(mira)
	assert_true(lines_before.size() >= 2)
	rt.free()  # leaves the tree: the runtime stops, memory is flushed, threads joined

	events = []
	var rt2 := _runtime(db)
	assert_eq(rt2.list_agents(), PackedStringArray(), "nothing resumes by default")
	assert_eq(rt2.get_conversation(mira), lines_before, "conversation survives the restart")
	assert_eq(rt2.get_state_history(mira), history_before, "state history survives the restart")
	var tasks := rt2.get_tasks(mira)
	assert_eq(tasks.size(), 1)
	assert_eq(tasks[0]["id"], task_id)
	assert_eq(tasks[0]["status"], "assigned")
	var stored := rt2.get_stored_agents()
	assert_eq(stored.size(), 1)
	assert_eq(stored[0]["name"], "Mira")
	# New ids continue after the stored ones; a stored id resumes with its name and position.
	assert_eq(rt2.spawn_agent({"name": "Bram", "idle_think_seconds": 60}), "agent_002")
	assert_eq(rt2.spawn_agent({"agent_id": mira, "idle_think_seconds": 60}), mira, rt2.get_last_error())
	assert_eq(await _expect("agent_spawned", [mira]), ["agent_spawned", mira, "Mira", "baker", Vector2(20, 30)])
	assert_eq(rt2.get_agent_state(mira)["current_task"], "bake rolls")
	assert_eq(rt2.spawn_agent({"agent_id": mira}), "", "already running")
	assert_eq(_found("agent_error", [mira, "already_running"]).size(), 1, _summary())


func test_resume_agents_brings_back_the_non_terminated() -> void:
	var db := fresh_db(DB_DIR, "resume")
	var rt := _runtime(db)
	var keep := rt.spawn_agent({"name": "Mayor", "role": "mayor", "idle_think_seconds": 60})
	var gone := rt.spawn_agent({"name": "Ghost", "idle_think_seconds": 60})
	assert_true(rt.terminate_agent(gone))
	await _expect("agent_removed", [gone])
	rt.free()

	events = []
	var rt2 := _runtime(db, {"resume_agents": true})
	assert_eq(rt2.list_agents(), PackedStringArray([keep]))
	assert_eq(await _expect("agent_spawned", [keep]), ["agent_spawned", keep, "Mayor", "mayor", Vector2(50, 50)])
	assert_true(_found("agent_spawned", [gone]).is_empty())
	assert_eq(rt2.spawn_agent({"name": "New", "idle_think_seconds": 60}), "agent_003")


## One stored agent that cannot start (its brain profile is gone) does not keep the others
## down: they resume, it waits, stored, with its reason, until it is spawned with a brain.
func test_resume_agents_leaves_one_that_cannot_start_waiting() -> void:
	var db := fresh_db(DB_DIR, "resume_waiting")
	var village := AgentBrain.new()
	village.provider = "scripted"
	var rt := _runtime(db, {"brain_profiles": {"village": village}})
	var keep := rt.spawn_agent({"name": "Mayor", "role": "mayor", "idle_think_seconds": 60})
	var stuck := rt.spawn_agent({"name": "Smith", "role": "smith", "brain": "village", "idle_think_seconds": 60})
	assert_ne(stuck, "", rt.get_last_error())
	rt.free()

	events = []
	var rt2 := _runtime(db, {"resume_agents": true})
	assert_true(rt2.is_running(), "the runtime starts: %s" % rt2.get_last_error())
	assert_eq(rt2.list_agents(), PackedStringArray([keep]), "the one that can start runs")
	var entry: Dictionary = rt2.get_stored_agents().filter(func(a): return a["agent_id"] == stuck)[0]
	var waiting: Dictionary = entry.get("waiting_for", {})
	assert_eq(waiting.get("reason"), "brain", "it waits for its brain: %s" % entry)
	assert_true(String(waiting.get("message", "")).contains("village"), str(waiting))
	assert_false(entry.has("removed_at") and entry["removed_at"] != null, "still stored, not removed")
	# Given a brain, it starts, and waits no more.
	assert_eq(rt2.spawn_agent({"agent_id": stuck, "brain": "scripted", "idle_think_seconds": 60}), stuck, rt2.get_last_error())
	var again: Dictionary = rt2.get_stored_agents().filter(func(a): return a["agent_id"] == stuck)[0]
	assert_false(again.has("waiting_for"), "no longer waiting: %s" % again)


func test_slow_reader_lags_without_blocking() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "lag"), {"event_queue_capacity": 4})
	for i in 12:
		assert_ne(rt.spawn_agent({"name": "A%d" % i, "idle_think_seconds": 60}), "")
	var lag := await _expect("agent_error", ["", "lagged"])
	assert_contains(str(lag[3]), "missed")
	assert_true(_found("agent_spawned").size() < 12)
	assert_eq(rt.list_agents().size(), 12, "the agents run whatever the reader does")


func test_a_drain_budget_spreads_a_burst_over_frames_and_loses_nothing() -> void:
	# A 1 µs budget: each frame emits what fits (at least one event), the rest waits.
	var rt := _runtime(fresh_db(DB_DIR, "budget"), {"process_mode": Node.PROCESS_MODE_DISABLED, "max_drain_usec_per_frame": 1})
	var ids := []
	for i in 200:
		ids.append(rt.spawn_agent({"name": "V%d" % i, "idle_think_seconds": 60}))
	await wait_frames(2)
	rt.process_mode = Node.PROCESS_MODE_INHERIT
	await wait_frames(1)
	var first := rt.get_last_frame_event_count()
	assert_true(first >= 1 and first < 200, "one frame took %d of 200" % first)
	var ok := await wait_until(func(): return _found("agent_spawned").size() == 200, 10.0)
	assert_true(ok, "every spawn arrived: %d" % _found("agent_spawned").size())
	var order := []
	for e in _found("agent_spawned"):
		order.append(e[1])
	assert_eq(order, ids, "in order")
	var bad := AgentRuntime.new()
	bad.database_path = fresh_db(DB_DIR, "budget_bad")
	bad.autostart = false
	bad.max_drain_usec_per_frame = -5
	add_to_tree(bad)
	assert_false(bad.start())
	assert_contains(bad.get_last_error(), "max_drain_usec_per_frame must be 0 (no limit) or more, got -5")


func test_events_wait_while_not_processing_and_drain_on_demand() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "drain"), {"process_mode": Node.PROCESS_MODE_DISABLED, "max_events_per_frame": 1})
	var a := rt.spawn_agent({"name": "A", "idle_think_seconds": 60})
	var b := rt.spawn_agent({"name": "B", "idle_think_seconds": 60})
	await wait_frames(3)
	assert_eq(events, [], "nothing is emitted while the node does not process")
	assert_eq(rt.drain_events(1), 1)
	assert_eq(events.size(), 1)
	assert_eq(rt.drain_events(), 1)
	assert_eq(_found("agent_spawned").size(), 2)
	assert_eq(rt.drain_events(), 0)
	# Processing again, at most one event per frame.
	rt.process_mode = Node.PROCESS_MODE_INHERIT
	rt.terminate_agent(a)
	rt.terminate_agent(b)
	await wait_frames(1)
	assert_true(rt.get_last_frame_event_count() <= 1)
	await _expect("agent_removed", [b])
	assert_true(rt.get_last_frame_drain_usec() >= 0)


## Keeps the warnings Godot reports while it is added (`OS.add_logger`).
class WarningLog extends Logger:
	var lines: Array[String] = []
	var _lock := Mutex.new()

	func _log_error(_function: String, _file: String, _line: int, code: String, rationale: String,
			_editor_notify: bool, error_type: int, _backtraces: Array[ScriptBacktrace]) -> void:
		if error_type == ERROR_TYPE_WARNING:
			_lock.lock()
			lines.append(code + " " + rationale)
			_lock.unlock()

	func _log_message(_message: String, _error: bool) -> void:
		pass

	func joined() -> String:
		_lock.lock()
		var text := "\n".join(lines)
		_lock.unlock()
		return text


func test_properties_set_after_start_and_a_world_of_other_units_are_warned_of() -> void:
	var log := WarningLog.new()
	OS.add_logger(log)
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db("user://test_agent_runtime", "late")
	add_to_tree(rt)
	assert_true(rt.is_running(), "autostart in its own _ready")
	# What a parent's _ready does after: too late for these.
	rt.world_bounds = Rect2(0, 0, 1280, 720)
	rt.idle_think_seconds = 3.0
	rt.max_events_per_frame = 50  # read every frame: no warning
	await wait_frames(2)
	var text := log.joined()
	assert_contains(text, "AgentRuntime.idle_think_seconds, AgentRuntime.world_bounds were changed after the runtime started and are not applied")
	assert_contains(text, "Set them in the inspector, or turn autostart off and call start() after setting them.")
	assert_false("max_events_per_frame" in text, text)
	assert_eq(text.count("were changed after"), 1, "once for each change: %s" % text)
	# A body in pixels in the default 100 x 100 world is named with the fix.
	rt.stop()
	rt.world_bounds = Rect2(0, 0, 100, 100)
	assert_true(rt.start())
	var npc := Node2D.new()
	npc.position = Vector2(640, 300)
	var agent := AgentNode.new()
	npc.add_child(agent)
	rt.add_child(npc)
	assert_true(await wait_until(func(): return log.joined().contains("outside AgentRuntime.world_bounds"), 5.0), log.joined())
	assert_contains(log.joined(), "is at (640, 300), outside AgentRuntime.world_bounds (0, 0, 100, 100)")
	assert_contains(log.joined(), "hearing_radius: 15 now")
	OS.remove_logger(log)



func test_measure_lines_measures_one_agents_lines() -> void:
	# The measures need no running runtime.
	var rt := _runtime(fresh_db(DB_DIR, "measure"), {"autostart": false})
	var said: Array[Dictionary] = [
		{"speaker": "agent_002", "to": ["agent_001"], "text": "The mill wheel is broken again today."},
		{"speaker": "player_0", "to": ["agent_001"], "text": "Good morning, Mira! Any rye left?"},
		{"speaker": "agent_001", "to": ["player_0"], "text": "Let me check… rye — left: 3."},
		# Five of Bram's words in a row, twice: two echoes, one of them a repeat.
		{"speaker": "agent_001", "to": ["agent_002"], "text": "So the mill wheel is broken, you say."},
		{"speaker": "agent_001", "to": ["agent_002"], "text": "so the mill wheel is broken you say"},
		{"speaker": "player_0", "to": ["agent_001"], "text": "Is the oven hot?"},
	]
	var card := rt.measure_lines(said, "agent_001", "Mira")
	assert_has_keys(card, ["lines", "repeated", "repeated_share", "echoes", "echo_share",
		"quotes_of_quotes", "distinct_2", "questions", "answered", "unanswered", "echoed"])
	assert_eq(card.lines, 3)
	assert_eq([card.repeated, card.echoes, card.quotes_of_quotes], [1, 2, 0])
	assert_true(is_equal_approx(card.repeated_share, 1.0 / 3.0), str(card.repeated_share))
	assert_true(is_equal_approx(card.echo_share, 2.0 / 3.0), str(card.echo_share))
	# The rye question was answered by naming rye; the oven question got no answer.
	assert_eq([card.questions, card.answered], [2, 1])
	assert_contains(card.unanswered[0], "Is the oven hot?")
	# Bram said his line first: nothing of his is an echo.
	var bram := rt.measure_lines(said, "agent_002", "Bram")
	assert_eq([bram.lines, bram.echoes, bram.repeated], [1, 0, 0])
	# An untyped Array reads the same.
	assert_eq(rt.measure_lines(Array(said), "agent_001", "Mira"), card)
	# A line that is not {speaker, to, text} is an error, and nothing is measured.
	assert_eq(rt.measure_lines([{"speaker": "agent_001", "text": 3}], "agent_001"), {})
	assert_eq(rt.get_last_error_code(), "invalid_message")
