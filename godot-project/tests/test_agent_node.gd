## AgentNode and AgentAsk end to end: a node under a character spawns its agent when it enters
## the tree, has its own signals, answers an awaited ask (matched to its line, several in flight),
## keeps a stored agent by key, refuses a duplicate key, finds an autoload runtime, and every
## failure resolves an ask instead of hanging. The scripted brain, short timings.
extends "res://tests/test_base.gd"

const DB_DIR := "user://test_agent_node"


func before_each() -> void:
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DB_DIR))


## An AgentRuntime on `db` with short timings (not added to the tree).
func _runtime(db: String) -> AgentRuntime:
	var rt := AgentRuntime.new()
	rt.database_path = db
	rt.idle_think_seconds = 60.0
	rt.thinking_seconds = 0.05
	rt.speaking_seconds = 0.05
	return rt


## A character (Node2D) named `name` carrying an AgentNode with a config for `name`.
func _npc(name: String, key := "", role := "villager") -> Node2D:
	var body := Node2D.new()
	body.name = name
	var agent := AgentNode.new()
	agent.name = "AgentNode"
	var config := AgentConfig.new()
	config.name = name
	config.role = role
	config.use_initial_position = false
	agent.config = config
	agent.key = key
	body.add_child(agent)
	return body


func _agent(npc: Node) -> AgentNode:
	return npc.get_node("AgentNode") as AgentNode


func test_a_node_under_a_character_spawns_and_answers_an_awaited_ask() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "ask"))
	var baker := _npc("Mira", "", "baker")
	rt.add_child(baker)
	add_to_tree(rt)
	var agent := _agent(baker)
	var spawned := []
	agent.spawned.connect(func(id, resumed): spawned.append([id, resumed]))
	var spoken := []
	agent.spoke.connect(func(text, to, kind): spoken.append([text, to, kind]))
	var states := []
	agent.state_changed.connect(func(old, new): states.append([old, new]))
	assert_true(await wait_until(func(): return agent.is_spawned(), 5.0), "spawned: " + agent.get_last_error())
	assert_eq(agent.get_runtime(), rt, "the ancestor runtime")
	assert_true(agent.get_agent_id().begins_with("agent_"), agent.get_agent_id())
	assert_eq(rt.get_agent_state(agent.get_agent_id())["name"], "Mira")
	var reply: Dictionary = await agent.ask("Good morning, is the bread ready?")
	assert_has_keys(reply, ["ok", "text", "actions", "error", "message_id", "agent_id"])
	assert_true(reply.ok, str(reply))
	assert_ne(reply.text, "", "it said something")
	assert_eq(reply.agent_id, agent.get_agent_id())
	assert_true(reply.message_id > 0, "the line's id")
	assert_eq(reply.error, {})
	assert_eq(spawned, [[agent.get_agent_id(), false]])
	assert_eq(spoken.size(), 1, "its own speech only: %s" % [spoken])
	assert_eq(spoken[0][0], reply.text)
	assert_contains(spoken[0][1], "player_0")
	assert_eq(spoken[0][2], AgentConstants.DIALOG_REPLY)
	assert_contains(states, ["thinking", "speaking"])
	# say() does not wait; replied names its line.
	var replied := []
	agent.replied.connect(func(r): replied.append(r))
	var line := agent.say("And the rye?")
	assert_true(line > reply.message_id, "ids increase")
	assert_true(await wait_until(func(): return replied.size() == 1, 5.0), "replied")
	assert_eq(replied[0].message_id, line)
	assert_eq(replied[0].in_reply_to, PackedInt64Array([line]))


func test_asks_in_flight_resolve_to_their_own_agents() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "flight"))
	var a := _npc("Ann")
	var b := _npc("Bob")
	rt.add_child(a)
	rt.add_child(b)
	add_to_tree(rt)
	assert_true(await wait_until(func(): return _agent(a).is_spawned() and _agent(b).is_spawned(), 5.0))
	var ask_a := _agent(a).ask_async("Hello Ann")
	var ask_b := _agent(b).ask_async("Hello Bob")
	assert_false(ask_a.is_finished(), "not before the agent answered")
	assert_true(await wait_until(func(): return ask_a.is_finished() and ask_b.is_finished(), 5.0))
	assert_eq(ask_a.get_reply().agent_id, _agent(a).get_agent_id())
	assert_eq(ask_b.get_reply().agent_id, _agent(b).get_agent_id())
	assert_eq(ask_a.get_reply().message_id, ask_a.get_message_id())
	assert_true(ask_a.get_reply().ok and ask_b.get_reply().ok)


func test_a_key_keeps_the_stored_agent_and_is_unique() -> void:
	var db := fresh_db(DB_DIR, "key")
	var rt := _runtime(db)
	var first := _npc("Tom", "baker_tom")
	rt.add_child(first)
	add_to_tree(rt)
	assert_true(await wait_until(func(): return _agent(first).is_spawned(), 5.0))
	var id := _agent(first).get_agent_id()
	var reply: Dictionary = await _agent(first).ask("Remember the rye.")
	assert_true(reply.ok)
	# A second node with the key is refused, clearly; its ask resolves (no hang).
	var twin := _npc("Tom again", "baker_tom")
	var errors := []
	_agent(twin).error_occurred.connect(func(code, message): errors.append([code, message]))
	rt.add_child(twin)
	assert_true(await wait_until(func(): return errors.size() > 0, 5.0), "refused")
	assert_eq(errors[0][0], "already_running")
	assert_true("baker_tom" in errors[0][1] and id in errors[0][1], errors[0][1])
	assert_false(_agent(twin).is_spawned())
	var nothing: Dictionary = await _agent(twin).ask("Hello?")
	assert_false(nothing.ok)
	assert_eq(nothing.error.code, "not_spawned")
	twin.free()
	# The node leaves the tree (a scene change): the agent is released, not terminated...
	first.free()
	await wait_frames(2)
	assert_false(id in rt.list_agents(), "stopped")
	# ...and a new node with the key resumes it, with its memory.
	var again := _npc("Tom", "baker_tom")
	var resumed := []
	_agent(again).spawned.connect(func(agent_id, was_resumed): resumed.append([agent_id, was_resumed]))
	rt.add_child(again)
	assert_true(await wait_until(func(): return _agent(again).is_spawned(), 5.0))
	assert_eq(_agent(again).get_agent_id(), id, "the same stored agent")
	assert_true(await wait_until(func(): return resumed.size() == 1, 5.0))
	assert_eq(resumed, [[id, true]])
	assert_eq(rt.get_conversation(id)[0]["content"], "Remember the rye.")


func test_terminate_on_exit_and_an_ask_cut_short() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "terminate"))
	rt.thinking_seconds = 2.0
	var npc := _npc("Guard", "guard_1")
	_agent(npc).terminate_on_exit = true
	rt.add_child(npc)
	add_to_tree(rt)
	assert_true(await wait_until(func(): return _agent(npc).is_spawned(), 5.0))
	var id := _agent(npc).get_agent_id()
	var ask := _agent(npc).ask_async("Halt?")
	await wait_frames(2)
	npc.free()
	assert_true(ask.is_finished(), "finished when the node left")
	assert_false(ask.get_reply().ok)
	assert_eq(ask.get_reply().error.code, "agent_stopped")
	await wait_frames(2)
	assert_false(id in rt.list_agents())
	var stored := rt.get_stored_agents().filter(func(a): return a["agent_id"] == id)
	assert_ne(stored[0]["removed_at"], null, "terminated")


func test_an_autoload_runtime_is_found_and_no_runtime_is_an_error() -> void:
	# No runtime anywhere: a clear error, and an ask that resolves.
	var lonely := add_to_tree(_npc("Lonely"))
	var agent := _agent(lonely)
	await wait_frames(2)
	assert_false(agent.is_spawned())
	assert_true("found no AgentRuntime" in agent.get_last_error(), agent.get_last_error())
	var reply: Dictionary = await agent.ask("Anyone?")
	assert_eq(reply.error.code, "not_spawned")
	lonely.free()
	# A runtime that is a child of the root (what an autoload is) serves nodes anywhere.
	var rt: AgentRuntime = add_to_tree(_runtime(fresh_db(DB_DIR, "autoload")))
	var level := add_to_tree(Node.new())
	var npc := _npc("Pip")
	level.add_child(npc)
	assert_true(await wait_until(func(): return _agent(npc).is_spawned(), 5.0), _agent(npc).get_last_error())
	assert_eq(_agent(npc).get_runtime(), rt)


func test_an_ask_outside_the_tree_says_why_and_signals_it() -> void:
	var agent := AgentNode.new()
	agent.name = "Drifter"
	var errors := []
	agent.error_occurred.connect(func(code, message): errors.append([code, message]))
	var reply: Dictionary = await agent.ask("Hello?")
	assert_eq(reply.error.code, "not_spawned")
	assert_contains(reply.error.message, "AgentNode 'Drifter' has no running agent: it is not in the scene tree")
	assert_eq(errors.size(), 1, "the message points to error_occurred, so it is emitted: %s" % [errors])
	assert_eq(errors[0][1], reply.error.message)
	assert_eq(agent.get_last_error(), reply.error.message)
	# An unnamed node says so rather than leaving a blank.
	var unnamed := AgentNode.new()
	assert_eq(unnamed.say("Hi"), 0)
	assert_contains(unnamed.get_last_error(), "this AgentNode (unnamed) has no running agent")
	agent.free()
	unnamed.free()


func test_a_runtime_started_later_spawns_its_waiting_nodes() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "later"))
	rt.autostart = false
	var npc := _npc("Late")
	rt.add_child(npc)
	add_to_tree(rt)
	await wait_frames(3)
	assert_false(_agent(npc).is_spawned(), "waits for the runtime")
	assert_true(rt.start())
	assert_true(await wait_until(func(): return _agent(npc).is_spawned(), 5.0))
	# Stopped with its runtime, and back when it starts again.
	var removed := []
	_agent(npc).removed.connect(func(reason): removed.append(reason))
	rt.stop()
	assert_true(await wait_until(func(): return removed == ["shutdown"], 5.0), str(removed))
	assert_false(_agent(npc).is_spawned())
	assert_true(rt.start())
	assert_true(await wait_until(func(): return _agent(npc).is_spawned(), 5.0))


func test_the_body_position_is_the_agents() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "positions"))
	var walker := _npc("Walker")
	walker.position = Vector2(500, 300)
	var spatial := Node3D.new()
	spatial.name = "Knight"
	var knight := AgentNode.new()
	knight.config = AgentConfig.new()
	spatial.add_child(knight)
	spatial.position = Vector3(1, 2, 3)
	var fixed := _npc("Statue")
	fixed.position = Vector2(900, 900)
	_agent(fixed).sync_position = false
	rt.add_child(walker)
	rt.add_child(spatial)
	rt.add_child(fixed)
	add_to_tree(rt)
	assert_true(await wait_until(func(): return _agent(walker).is_spawned() and knight.is_spawned() and _agent(fixed).is_spawned(), 5.0))
	var at := func(node: AgentNode) -> Vector2: return rt.get_agent_state(node.get_agent_id())["position"]
	assert_true(await wait_until(func(): return at.call(_agent(walker)) == Vector2(500, 300), 2.0), str(at.call(_agent(walker))))
	assert_true(await wait_until(func(): return at.call(knight) == Vector2(1, 3), 2.0), "a Node3D reports x and z")
	assert_eq(at.call(_agent(fixed)), Vector2(50, 50), "sync off: the runtime world's centre")
	walker.position += Vector2(40, -20)
	assert_true(await wait_until(func(): return at.call(_agent(walker)) == Vector2(540, 280), 2.0), "follows the body")
	# Every body within position_sync_interval; 0: every frame.
	assert_eq(rt.position_sync_interval, 0.1)
	rt.position_sync_interval = 0.0
	walker.position += Vector2(1, 1)
	await wait_frames(1)
	assert_eq(at.call(_agent(walker)), Vector2(541, 281), "read the next frame")


## The game places its characters: the agent starts where its body stands — not at the
## config's initial_position, and even outside the runtime's world_bounds (which limit only the
## runtime's own moves).
func test_the_agent_starts_where_its_body_stands() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "start"))
	rt.world_bounds = Rect2(100, 100, 50, 50)
	var guard := Node2D.new()
	guard.name = "Guard"
	guard.position = Vector2(-300, 5000)
	var agent := AgentNode.new()
	agent.config = AgentConfig.new()   # initial_position (0, 0), use_initial_position on
	guard.add_child(agent)
	rt.add_child(guard)
	var seen := {}
	agent.spawned.connect(func(id: String, _resumed: bool) -> void:
		seen["at"] = rt.get_agent_state(id)["position"])
	add_to_tree(rt)
	assert_true(await wait_until(func(): return agent.is_spawned(), 5.0), agent.get_last_error())
	assert_eq(seen.get("at"), Vector2(-300, 5000), "placed at the body when it spawned")
	assert_eq(agent.get_last_error(), "")


func test_an_observation_is_accepted_and_bad_ones_are_errors() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "observe"))
	var npc := _npc("Scout")
	rt.add_child(npc)
	add_to_tree(rt)
	var agent := _agent(npc)
	var errors := []
	agent.error_occurred.connect(func(code, message): errors.append(code))
	assert_false(agent.observe("Too early."), "not spawned yet")
	assert_eq(errors, ["not_spawned"])
	assert_true(await wait_until(func(): return agent.is_spawned(), 5.0))
	assert_true(agent.observe("The cellar door is locked."))
	assert_true(rt.observe(agent.get_agent_id(), "Smoke rises from the bakery."))
	assert_false(agent.observe("   "), "empty")
	assert_eq(errors, ["not_spawned", "invalid_message"])
	assert_false(rt.observe("agent_404", "Hello"))
	var reply: Dictionary = await agent.ask("What do you see?")
	assert_true(reply.ok, "it still answers: %s" % [reply])


## A character whose agent's first decision is a move to `to` (its config's scripted reply).
func _mover(name: String, to: Vector2) -> Node2D:
	var npc := _npc(name)
	var config: AgentConfig = _agent(npc).config
	config.autonomous = false
	config.scripted_replies = [{"assistant_text": "", "tool_calls": [
		{"id": "m1", "tool": "move", "args": {"x": to.x, "y": to.y}}]}]
	return npc


func test_a_move_walks_the_body_and_its_arrival_reaches_the_agent() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "walk"))
	rt.world_bounds = Rect2(-1000, -1000, 2000, 2000)
	var npc := _mover("Courier", Vector2(160, 40))
	npc.position = Vector2(100, 40)
	rt.add_child(npc)
	add_to_tree(rt)
	var agent := _agent(npc)
	agent.move_speed = 120.0
	var requested := []
	agent.move_requested.connect(func(target): requested.append(target))
	var finished := []
	agent.move_finished.connect(func(arrived, reason): finished.append([arrived, reason]))
	var runtime_finished := []
	rt.agent_move_finished.connect(func(id, move_id, outcome, reason): runtime_finished.append([id, move_id, outcome, reason]))
	assert_true(await wait_until(func(): return agent.is_spawned(), 5.0), agent.get_last_error())
	var moved := []
	rt.agent_moved.connect(func(id, from, to): moved.append(id))
	agent.say("Take this letter to the mill.")
	assert_true(await wait_until(func(): return requested.size() == 1, 5.0), "move_requested")
	assert_eq(requested[0], Vector2(160, 40), "a Vector2 for a Node2D")
	assert_true(agent.is_moving())
	assert_eq(agent.get_move_target(), Vector2(160, 40))
	assert_true(await wait_until(func(): return finished.size() == 1, 5.0), "move_finished")
	assert_eq(finished[0], [true, ""])
	assert_eq(runtime_finished, [[agent.get_agent_id(), 1, "arrived", ""]])
	assert_true(npc.position.distance_to(Vector2(160, 40)) < 0.01, "walked there: %s" % [npc.position])
	assert_false(agent.is_moving())
	assert_eq(agent.get_move_target(), null)
	assert_eq(moved, [], "the runtime moved no one itself")
	assert_false(agent.report_arrived(), "nothing under way")
	# The agent knows where it is: the body's position was synced.
	assert_true(await wait_until(func(): return rt.get_agent_state(agent.get_agent_id())["position"] == Vector2(160, 40), 2.0))


func test_the_game_can_carry_out_moves_and_report_a_blocked_path() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "blocked"))
	rt.world_bounds = Rect2(-1000, -1000, 2000, 2000)
	var npc := _mover("Guard", Vector2(300, 0))
	rt.add_child(npc)
	add_to_tree(rt)
	var agent := _agent(npc)
	agent.drive_movement = false
	var errors := []
	agent.error_occurred.connect(func(code, message): errors.append(code))
	var finished := []
	agent.move_finished.connect(func(arrived, reason): finished.append([arrived, reason]))
	# The game's handler answers at once, inside the signal.
	agent.move_requested.connect(func(_target): agent.report_blocked("the gate is locked"))
	assert_true(await wait_until(func(): return agent.is_spawned(), 5.0))
	var reply: Dictionary = await agent.ask("Open the gate.")
	assert_true(reply.ok, str(reply))
	assert_eq(reply.actions[0].tool, "move")
	assert_true(await wait_until(func(): return finished.size() == 1, 5.0), "move_finished")
	assert_eq(finished[0], [false, "the gate is locked"])
	assert_eq(npc.position, Vector2.ZERO, "the game did not move it")
	assert_false(agent.report_arrived(), "already finished")
	assert_false(agent.report_blocked(""), "needs a reason, and nothing is under way")
	assert_eq(errors, ["unknown_move", "unknown_move"])
	# The runtime's own method reports an unknown move as an error too.
	assert_false(rt.finish_move(agent.get_agent_id(), 7))


func test_a_navigation_agent_is_followed_and_a_target_off_the_map_is_blocked() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "navigation"))
	rt.world_bounds = Rect2(-1000, -1000, 2000, 2000)
	# A walkable square 0..200 × 0..200.
	var region := NavigationRegion2D.new()
	var polygon := NavigationPolygon.new()
	polygon.vertices = PackedVector2Array([Vector2(0, 0), Vector2(200, 0), Vector2(200, 200), Vector2(0, 200)])
	polygon.add_polygon(PackedInt32Array([0, 1, 2, 3]))
	region.navigation_polygon = polygon
	rt.add_child(region)
	var npc := _mover("Ranger", Vector2(150, 150))
	npc.position = Vector2(20, 20)
	var nav := NavigationAgent2D.new()
	npc.add_child(nav)
	var lost := _mover("Lost", Vector2(600, 600))
	lost.position = Vector2(100, 100)
	lost.add_child(NavigationAgent2D.new())
	rt.add_child(npc)
	rt.add_child(lost)
	add_to_tree(rt)
	var finished := {}
	for body in [npc, lost]:
		var agent := _agent(body)
		agent.move_speed = 400.0
		agent.move_finished.connect(func(arrived, reason): finished[body.name] = [arrived, reason])
	assert_true(await wait_until(func(): return _agent(npc).is_spawned() and _agent(lost).is_spawned(), 5.0))
	_agent(npc).say("Patrol the far corner.")
	_agent(lost).say("Go home.")
	assert_true(await wait_until(func(): return finished.size() == 2, 5.0), str(finished))
	assert_eq(finished["Ranger"], [true, ""], "followed the path")
	assert_true(npc.position.distance_to(Vector2(150, 150)) <= nav.target_desired_distance + 0.5, str(npc.position))
	assert_false(finished["Lost"][0])
	assert_true(finished["Lost"][1].begins_with("(600, 600) is off the navigation map"), finished["Lost"][1])
	assert_eq(lost.position, Vector2(100, 100), "it did not set off")


func test_a_body_that_makes_no_headway_is_blocked() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "stuck"))
	rt.world_bounds = Rect2(-1000, -1000, 2000, 2000)
	var wall := StaticBody2D.new()
	var wall_shape := CollisionShape2D.new()
	var rect := RectangleShape2D.new()
	rect.size = Vector2(20, 400)
	wall_shape.shape = rect
	wall.add_child(wall_shape)
	wall.position = Vector2(100, 0)
	rt.add_child(wall)
	var body := CharacterBody2D.new()
	body.name = "Mule"
	var shape := CollisionShape2D.new()
	var circle := CircleShape2D.new()
	circle.radius = 8.0
	shape.shape = circle
	body.add_child(shape)
	var agent := AgentNode.new()
	agent.name = "AgentNode"
	var config := AgentConfig.new()
	config.name = "Mule"
	config.use_initial_position = false
	config.autonomous = false
	config.scripted_replies = [{"assistant_text": "", "tool_calls": [
		{"id": "m1", "tool": "move", "args": {"x": 200, "y": 0}}]}]
	agent.config = config
	agent.move_speed = 200.0
	agent.stuck_seconds = 0.3
	body.add_child(agent)
	rt.add_child(body)
	add_to_tree(rt)
	var finished := []
	agent.move_finished.connect(func(arrived, reason): finished.append([arrived, reason]))
	assert_true(await wait_until(func(): return agent.is_spawned(), 5.0))
	agent.say("Cross the wall.")
	assert_true(await wait_until(func(): return finished.size() == 1, 5.0), "blocked")
	assert_false(finished[0][0])
	assert_true(finished[0][1].begins_with("stuck at"), finished[0][1])
	assert_true(body.position.x < 100.0 - 10.0 + 0.5, "the wall held: %s" % [body.position])


func test_the_chat_panel_talks_to_any_agent_and_shows_streamed_text() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "panel"))
	var npc := _npc("Mira", "", "baker")
	rt.add_child(npc)
	var panel := AgentChatPanel.new()
	panel.agent_path = ^"../Mira/AgentNode"
	rt.add_child(panel)
	var agent := _agent(npc)
	# Before it spawns: the failure is shown, nothing hangs.
	add_to_tree(rt)
	assert_eq(panel.get_agent(), agent)
	assert_true(panel.send("Too early?"))
	assert_true(await wait_until(func(): return panel.get_lines().size() >= 2, 5.0), str(panel.get_lines()))
	assert_eq(panel.get_lines()[0], "You: Too early?")
	assert_true(panel.get_lines()[1].begins_with("(Mira could not answer:"), panel.get_lines()[1])
	assert_true(await wait_until(func(): return agent.is_spawned(), 5.0))
	panel.clear()
	assert_true(panel.send("Good morning, is the bread ready?"))
	assert_false(panel.send("   "), "nothing to send")
	assert_true(await wait_until(func(): return panel.get_lines().size() >= 2, 5.0), str(panel.get_lines()))
	var lines := panel.get_lines()
	assert_eq(lines[0], "You: Good morning, is the bread ready?")
	assert_true(lines[1].begins_with("Mira: ") and lines[1].length() > 6, lines[1])
	# A model brain's text grows in one line as it streams, then becomes the line said.
	panel.clear()
	agent.speech_streamed.emit("Fresh ")
	agent.speech_streamed.emit("bread at")
	assert_eq(panel.get_lines(), PackedStringArray(["Mira: Fresh bread at"]))
	agent.spoke.emit("Fresh bread at noon!", PackedStringArray(["player_0"]), AgentConstants.DIALOG_REPLY)
	assert_eq(panel.get_lines(), PackedStringArray(["Mira: Fresh bread at noon!"]))
	agent.error_occurred.emit("brain_error", "the model server is down")
	assert_eq(panel.get_lines()[1], "(brain_error: the model server is down)")


func test_the_editor_warns_about_a_node_that_cannot_be_placed() -> void:
	var holder := Node.new()
	holder.name = "Holder"
	var agent := AgentNode.new()
	agent.config = AgentConfig.new()
	holder.add_child(agent)
	var warnings: PackedStringArray = agent.get_configuration_warnings()
	var placed := Array(warnings).filter(func(w): return "is not a Node2D or a Node3D" in w)
	assert_eq(placed.size(), 1, str(warnings))
	assert_contains(placed[0], "Holder, a Node")
	agent.sync_position = false
	warnings = agent.get_configuration_warnings()
	assert_false(Array(warnings).any(func(w): return "is not a Node2D" in w), "sync off: no warning")
	var body := Node2D.new()
	var other := AgentNode.new()
	other.config = AgentConfig.new()
	body.add_child(other)
	assert_false(Array(other.get_configuration_warnings()).any(func(w): return "is not a Node2D" in w))
	holder.free()
	body.free()
