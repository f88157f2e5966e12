## The AgentRuntime node serving the WebSocket protocol, with Godot's own WebSocketPeer as the
## client: welcome, spawning an agent over the socket, its state updates and speech arriving as
## events, the node's signals seeing the same agents, errors, and the token.
extends "res://tests/ws_helpers.gd"

const DB_DIR := "user://test_websocket"


## A runtime serving WebSockets on a free port.
func _server(db: String, token := "") -> AgentRuntime:
	var rt := AgentRuntime.new()
	rt.database_path = db
	rt.idle_think_seconds = 0.2
	rt.thinking_seconds = 0.05
	rt.speaking_seconds = 0.05
	rt.websocket_enabled = true
	rt.websocket_port = 0
	rt.websocket_token = token
	add_to_tree(rt)
	return rt


func test_a_websocket_client_drives_the_same_agents_as_the_node() -> void:
	var rt := _server(fresh_db(DB_DIR, "drive"))
	var url := rt.get_websocket_url()
	assert_true(url.begins_with("ws://127.0.0.1:") and url.ends_with("/ws"), "url %s" % url)
	var spawned_signals: Array = []
	rt.agent_spawned.connect(func(id, agent_name, _role, _pos): spawned_signals.append([id, agent_name]))
	var peer: WebSocketPeer = await ws_connect(url)
	assert_eq(peer.get_ready_state(), WebSocketPeer.STATE_OPEN, "the socket opens")

	var welcome := await ws_receive(peer, func(m): return m.type == "welcome")
	assert_eq(welcome.get("protocol_version"), 1.0, "welcome names the protocol version")
	assert_contains(welcome.get("requests", []), "agent_spawn_request")

	ws_send(peer, {"type": "agent_spawn_request", "request_id": 7, "agent_config": {
		"name": "Assistant", "role": "helper", "initial_position": {"x": 10, "y": 10}}})
	var reply := await ws_receive(peer, func(m): return m.type == "agent_spawn_response")
	assert_eq(reply.get("request_id"), 7.0, "request_id echoed")
	var id: String = reply.get("agent_id", "")
	assert_eq(id, "agent_001")

	# The node sees the agent spawned over the socket: one runtime.
	await wait_until(func(): return not spawned_signals.is_empty(), 5.0)
	assert_eq(spawned_signals, [["agent_001", "Assistant"]], "the node's signal fired")
	assert_eq(rt.get_agent_state(id).get("name"), "Assistant")

	# Its autonomous decision arrives as agent_state_update events (the protocol's shape).
	var update := await ws_receive(peer, func(m): return m.type == "agent_state_update" and m.state == "thinking")
	assert_eq(update.get("agent_id"), id, "state update for the agent")
	assert_has_keys(update, ["state", "position", "current_task"], "agent_state_update fields")

	# Speech: the player's line over the socket is answered with agent_speech to player_0.
	ws_send(peer, {"type": "send_message", "request_id": "m1", "agent_id": id, "content": "Hello there!"})
	var sent := await ws_receive(peer, func(m): return m.type == "send_message_response")
	assert_eq(sent.get("request_id"), "m1", "string request_id echoed")
	var speech := await ws_receive(peer, func(m): return m.type == "agent_speech" and m.agent_id == id)
	assert_eq(speech.get("recipients"), ["player_0"], "the agent answers the player")
	assert_true(String(speech.get("content", "")).length() > 0, "with a line")

	# An agent spawned by the node is visible to the client.
	var local := rt.spawn_agent({"name": "Local", "role": "guard"})
	ws_send(peer, {"type": "get_agent_state", "request_id": 2, "agent_id": local})
	var state := await ws_receive(peer, func(m): return m.type == "get_agent_state_response")
	assert_eq(state.get("agent", {}).get("name"), "Local", "the client sees the node's agent")


func test_bad_input_gets_an_error_and_the_connection_stays_usable() -> void:
	var rt := _server(fresh_db(DB_DIR, "errors"))
	var peer: WebSocketPeer = await ws_connect(rt.get_websocket_url())
	await ws_receive(peer, func(m): return m.type == "welcome")
	peer.send_text("this is not json")
	var e1 := await ws_receive(peer, func(m): return m.type == "error")
	assert_eq(e1.get("code"), "not_json")
	ws_send(peer, {"type": "get_agent_state", "request_id": 3, "agent_id": "agent_404"})
	var e2 := await ws_receive(peer, func(m): return m.type == "error")
	assert_eq([e2.get("code"), e2.get("request_id")], ["unknown_agent", 3.0])
	peer.send(PackedByteArray([1, 2, 3]))
	var e3 := await ws_receive(peer, func(m): return m.type == "error")
	assert_eq(e3.get("code"), "binary_not_supported")
	ws_send(peer, {"type": "ping", "request_id": 4})
	var pong := await ws_receive(peer, func(m): return m.type == "pong")
	assert_eq(pong.get("request_id"), 4.0, "still usable")


func test_a_token_is_required_when_set() -> void:
	var rt := _server(fresh_db(DB_DIR, "token"), "s3cret")
	var url := rt.get_websocket_url()
	var refused: WebSocketPeer = await ws_connect(url)
	assert_eq(refused.get_ready_state(), WebSocketPeer.STATE_CLOSED, "no token: refused")
	var allowed: WebSocketPeer = await ws_connect(url, PackedStringArray(["Authorization: Bearer s3cret"]))
	assert_eq(allowed.get_ready_state(), WebSocketPeer.STATE_OPEN, "with the token: open")
	var welcome := await ws_receive(allowed, func(m): return m.type == "welcome")
	assert_eq(welcome.get("type"), "welcome")


func test_a_bad_websocket_setting_fails_start_clearly() -> void:
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "bad")
	rt.autostart = false
	rt.websocket_enabled = true
	rt.websocket_bind = "not an ip"
	add_to_tree(rt)
	assert_false(rt.start(), "start fails")
	assert_true(rt.get_last_error().contains("websocket_bind"), rt.get_last_error())
	assert_false(rt.is_running())
	assert_eq(rt.get_websocket_url(), "")


func test_an_open_bind_without_a_token_does_not_start() -> void:
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "open")
	rt.autostart = false
	rt.websocket_enabled = true
	rt.websocket_bind = "0.0.0.0"
	rt.websocket_port = 0
	add_to_tree(rt)
	assert_false(rt.start(), "start fails")
	assert_true(rt.get_last_error().contains("without a token"), rt.get_last_error())
	assert_false(rt.is_running())
	rt.websocket_insecure_no_token = true
	assert_true(rt.start(), "starts when told it is on purpose: %s" % rt.get_last_error())
	assert_true(rt.get_websocket_url().begins_with("ws://"), rt.get_websocket_url())


func test_web_pages_need_an_allowed_origin() -> void:
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "origin")
	rt.websocket_enabled = true
	rt.websocket_port = 0
	rt.websocket_allowed_origins = PackedStringArray(["https://game.example"])
	add_to_tree(rt)
	var url := rt.get_websocket_url()
	var foreign: WebSocketPeer = await ws_connect(url, PackedStringArray(["Origin: http://evil.example"]))
	assert_eq(foreign.get_ready_state(), WebSocketPeer.STATE_CLOSED, "a foreign page is refused")
	var listed: WebSocketPeer = await ws_connect(url, PackedStringArray(["Origin: https://game.example"]))
	assert_eq(listed.get_ready_state(), WebSocketPeer.STATE_OPEN, "a listed origin connects")
	var local: WebSocketPeer = await ws_connect(url, PackedStringArray(["Origin: http://localhost:8060"]))
	assert_eq(local.get_ready_state(), WebSocketPeer.STATE_OPEN, "a loopback page connects on a loopback bind")
	var native: WebSocketPeer = await ws_connect(url)
	assert_eq(native.get_ready_state(), WebSocketPeer.STATE_OPEN, "no Origin: a native client connects")


func test_the_token_can_travel_as_a_subprotocol_entry() -> void:
	# What a browser does (it cannot set headers): offer "godot-agents" and "agents.token.<token>";
	# the server selects "godot-agents" and never echoes the token.
	var rt := _server(fresh_db(DB_DIR, "subprotocol"), "s3cret")
	var peer := WebSocketPeer.new()
	peer.supported_protocols = PackedStringArray(["godot-agents", "agents.token.s3cret"])
	assert_eq(peer.connect_to_url(rt.get_websocket_url()), OK)
	await wait_until(func():
		peer.poll()
		var state := peer.get_ready_state()
		return state == WebSocketPeer.STATE_OPEN or state == WebSocketPeer.STATE_CLOSED, 5.0)
	assert_eq(peer.get_ready_state(), WebSocketPeer.STATE_OPEN, "open with the token as a subprotocol")
	assert_eq(peer.get_selected_protocol(), "godot-agents")
	peer.close()


## Campaigns over the node's socket: one loaded from campaign_dir by relative path, changed by a
## GM tool call (saved back to its file), the campaign_changed event and the node's signal.
func test_campaigns_load_from_the_campaign_dir() -> void:
	var dir := "user://test_websocket/campaigns"
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(dir + "/camp_0001"))
	var campaign := Campaign.new()
	campaign.reset(PackedStringArray(["pc_001"]))
	assert_true(campaign.save_file(dir + "/camp_0001/campaign.json"), campaign.get_last_error())
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "campaigns")
	rt.idle_think_seconds = 1000.0
	rt.websocket_enabled = true
	rt.websocket_port = 0
	rt.campaign_dir = dir
	var changed: Array = []
	rt.campaign_changed.connect(func(id, turn, actions): changed.append([id, turn, actions.size()]))
	add_to_tree(rt)
	var peer: WebSocketPeer = await ws_connect(rt.get_websocket_url())
	await ws_receive(peer, func(m): return m.type == "welcome")
	ws_send(peer, {"type": "campaign_load", "request_id": 1, "path": "../outside.json"})
	var refused := await ws_receive(peer, func(m): return m.get("request_id") == 1.0)
	assert_eq(refused.get("code"), "invalid_message")
	ws_send(peer, {"type": "campaign_load", "request_id": 2, "path": "camp_0001/campaign.json"})
	var loaded := await ws_receive(peer, func(m): return m.type == "campaign_load_response")
	assert_eq(loaded.get("campaign_id"), "camp_0001")
	ws_send(peer, {"type": "campaign_tool_calls", "request_id": 3, "campaign_id": "camp_0001",
		"calls": [{"tool": "move", "args": {"actor_id": "pc_001", "to_area_id": "area_002"}}]})
	var out := await ws_receive(peer, func(m): return m.type == "campaign_tool_calls_response")
	assert_eq(out.get("tool_feedback"), null)
	var event := await ws_receive(peer, func(m): return m.type == "campaign_changed")
	assert_eq(event.effects[0].effect, "actor_moved")
	assert_true(await wait_until(func(): return not changed.is_empty(), 5.0))
	assert_eq(changed[0], ["camp_0001", "", 1])
	var back := Campaign.new()
	assert_true(back.load_file(dir + "/camp_0001/campaign.json"))
	assert_eq(back.get_actor("pc_001").position, "area_002", "saved back to the file")
	peer.close()


## The node's server draws the same line as agents-server: a client names the game's brain
## profiles (or a preset) and builds no brain of its own — no command runs, no variable is
## read — while the game's own code may spawn any brain.
func test_a_client_names_brains_and_builds_none() -> void:
	var marker := ProjectSettings.globalize_path("user://test_websocket/ran")
	DirAccess.remove_absolute(marker)
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "brains")
	rt.idle_think_seconds = 1000.0
	rt.websocket_enabled = true
	rt.websocket_port = 0
	var local := AgentBrain.new()
	local.provider = "scripted"
	rt.brain_profiles = {"local": local}
	add_to_tree(rt)
	var peer: WebSocketPeer = await ws_connect(rt.get_websocket_url())
	await ws_receive(peer, func(m): return m.type == "welcome")
	var run := await ws_request(peer, {"type": "agent_spawn_request", "request_id": 1,
		"agent_config": {"name": "Probe", "brain": {"provider": "cli",
			"command": ["sh", "-c", "id > '%s'" % marker]}}}, "agent_spawn_response")
	assert_eq(run.get("code"), "brain_not_allowed", "a command from a client: %s" % run)
	assert_true(String(run.get("message", "")).contains("allow_client_brains"), "names the switch")
	var leak := await ws_request(peer, {"type": "agent_spawn_request", "request_id": 2,
		"agent_config": {"name": "Probe", "brain": {"provider": "openai", "model": "m",
			"base_url": "http://127.0.0.1:9/v1", "api_key_env": "HOME"}}}, "agent_spawn_response")
	assert_eq(leak.get("code"), "brain_not_allowed", "a variable from a client: %s" % leak)
	var named := await ws_request(peer, {"type": "agent_spawn_request", "request_id": 3,
		"agent_config": {"name": "Named", "brain": "local"}}, "agent_spawn_response")
	assert_eq(named.get("type"), "agent_spawn_response", "a profile by name: %s" % named)
	var preset := await ws_request(peer, {"type": "agent_spawn_request", "request_id": 4,
		"agent_config": {"name": "Preset", "cli_backend": "scripted"}}, "agent_spawn_response")
	assert_eq(preset.get("type"), "agent_spawn_response", "a preset by cli_backend: %s" % preset)
	# The game's own code is trusted: it may spawn a brain object.
	var own := rt.spawn_agent({"name": "Own", "brain": {"provider": "openai", "model": "m",
		"base_url": "http://127.0.0.1:9/v1"}})
	assert_ne(own, "", "the game's own brain object: %s" % rt.get_last_error())
	await tree.create_timer(0.3).timeout
	assert_false(FileAccess.file_exists(marker), "the command never ran")


## With allow_client_brains a client brings a model brain with its own key, to the origins the
## game lists; presets can be turned off.
func test_client_brains_follow_the_nodes_policy() -> void:
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "policy")
	rt.idle_think_seconds = 1000.0
	rt.websocket_enabled = true
	rt.websocket_port = 0
	rt.allow_client_brains = true
	rt.client_brain_origins = PackedStringArray(["http://127.0.0.1:11434"])
	rt.client_brain_presets = false
	add_to_tree(rt)
	var peer: WebSocketPeer = await ws_connect(rt.get_websocket_url())
	await ws_receive(peer, func(m): return m.type == "welcome")
	var elsewhere := await ws_request(peer, {"type": "agent_spawn_request", "request_id": 1,
		"agent_config": {"brain": {"provider": "openai", "model": "m", "api_key": "k",
			"base_url": "http://127.0.0.1:9/v1"}}}, "agent_spawn_response")
	assert_eq(elsewhere.get("code"), "brain_not_allowed")
	assert_true(String(elsewhere.get("message", "")).contains("http://127.0.0.1:9 is not an origin"), str(elsewhere))
	var listed := await ws_request(peer, {"type": "agent_spawn_request", "request_id": 2,
		"agent_config": {"brain": {"provider": "openai", "model": "m", "api_key": "",
			"base_url": "http://127.0.0.1:11434/v1"}}}, "agent_spawn_response")
	assert_eq(listed.get("type"), "agent_spawn_response", "a listed origin: %s" % listed)
	var preset := await ws_request(peer, {"type": "agent_spawn_request", "request_id": 3,
		"agent_config": {"brain": "scripted"}}, "agent_spawn_response")
	assert_eq(preset.get("code"), "brain_not_allowed", "presets off: %s" % preset)
	# base_url null is the provider's default address (api.openai.com): not listed, refused as
	# when it is left out.
	var null_url := await ws_request(peer, {"type": "agent_spawn_request", "request_id": 4,
		"agent_config": {"brain": {"provider": "openai", "model": "m", "api_key": "k",
			"base_url": null}}}, "agent_spawn_response")
	assert_eq(null_url.get("code"), "brain_not_allowed", "base_url null: %s" % null_url)
	assert_true(String(null_url.get("message", "")).contains("https://api.openai.com is not an origin"), str(null_url))
	# A duration that would keep an agent thinking for ever is refused, naming its limit.
	var slow := await ws_request(peer, {"type": "agent_spawn_request", "request_id": 5,
		"agent_config": {"name": "Slow", "thinking_seconds": 1e20}}, "agent_spawn_response")
	assert_eq(slow.get("type"), "error", "thinking_seconds 1e20: %s" % slow)
	assert_true(String(slow.get("message", "")).contains("thinking_seconds"), str(slow))
	assert_true(String(slow.get("message", "")).contains("600"), str(slow))


## What a client sends the node's server is bounded as on agents-server: an observation longer
## than a memory (2,000 characters) is refused at the door, naming the limit.
func test_an_over_long_observation_is_refused_at_the_door() -> void:
	var rt := _server(fresh_db(DB_DIR, "observe"))
	var id := rt.spawn_agent({"name": "Watcher", "role": "guard"})
	var peer: WebSocketPeer = await ws_connect(rt.get_websocket_url())
	await ws_receive(peer, func(m): return m.type == "welcome")
	var long := await ws_request(peer, {"type": "observe", "request_id": 1, "agent_id": id,
		"text": "x".repeat(2001)}, "observe_response")
	assert_eq(long.get("type"), "error", "2,001 characters: %s" % long)
	assert_true(String(long.get("message", "")).contains("2000"), str(long))
	assert_true(String(long.get("message", "")).length() < 400, "the text is not echoed back")
	var fits := await ws_request(peer, {"type": "observe", "request_id": 2, "agent_id": id,
		"text": "x".repeat(2000)}, "observe_response")
	assert_eq(fits.get("type"), "observe_response", "2,000 characters fit: %s" % fits)


## The node's memory ceiling (AgentRuntime.memory, 5,000 by default) is the operator's: a client
## may lower it for its agent, never lift it nor turn it off.
func test_a_client_lowers_the_memory_ceiling_but_never_lifts_it() -> void:
	var rt := _server(fresh_db(DB_DIR, "ceiling"))
	var peer: WebSocketPeer = await ws_connect(rt.get_websocket_url())
	await ws_receive(peer, func(m): return m.type == "welcome")
	var request_id := 0
	for cap in [0, 5001]:
		request_id += 1
		var refused := await ws_request(peer, {"type": "agent_spawn_request", "request_id": request_id,
			"agent_config": {"name": "Hoarder", "memory": {"max_memories": cap}}}, "agent_spawn_response")
		assert_eq(refused.get("code"), "invalid_config", "max_memories %d: %s" % [cap, refused])
		assert_true(String(refused.get("message", "")).contains("max_memories"), str(refused))
	var lowered := await ws_request(peer, {"type": "agent_spawn_request", "request_id": 9,
		"agent_config": {"name": "Modest", "memory": {"max_memories": 300}}}, "agent_spawn_response")
	assert_eq(lowered.get("type"), "agent_spawn_response", "a lower ceiling: %s" % lowered)
	# The game's own code is trusted: it may spawn an agent without a ceiling.
	assert_ne(rt.spawn_agent({"name": "Archivist", "memory": {"max_memories": 0}}), "", rt.get_last_error())
