## Godot as a client of a server in ANOTHER process: Godot's own `WebSocketPeer` against the
## standalone `agents-server serve`, or against an `AgentRuntime` with its server enabled in a
## second Godot process (`res://server/serve.gd`). Checks the protocol of `docs/protocol.md`:
## welcome, subscribe, spawning an agent and receiving its state updates and speech, state and
## listing requests, a game tool call, errors that keep the connection usable, the token,
## two clients seeing each other's effects, termination.
##
## `cargo xtask test` starts each server and runs this suite against it:
## `godot --headless --path godot-project --script res://tests/run_tests.gd -- --dir res://tests/ws_client`
## with the environment variables
##   AGENTS_WS_URL     the server's `ws://HOST:PORT/ws` (required: without it the suite fails)
##   AGENTS_WS_TOKEN   the server's shared token ("" or unset: the server has none)
##   AGENTS_WS_TARGET  a name for the server in messages (`serve binary`, `godot node`)
##   AGENTS_WS_ALLOWED_ORIGIN  a browser origin the server allows (`--allow-origin`; unset: none)
extends "res://tests/ws_helpers.gd"

## Every state an agent reports.
const STATES := ["idle", "listening", "thinking", "speaking"]

var _url := OS.get_environment("AGENTS_WS_URL")
var _token := OS.get_environment("AGENTS_WS_TOKEN")
var _target := OS.get_environment("AGENTS_WS_TARGET")
var _allowed_origin := OS.get_environment("AGENTS_WS_ALLOWED_ORIGIN")
var _next_request := 0
var _reported_unconfigured := false


func _init() -> void:
	if _target.is_empty():
		_target = "server"


## False (after recording a failure) when the suite has no server to talk to: the suite never
## passes without one. The first test says why; the others say they did not run.
func _configured() -> bool:
	if not _url.is_empty():
		return true
	if _reported_unconfigured:
		fail("not run: AGENTS_WS_URL is not set")
	else:
		_reported_unconfigured = true
		fail("AGENTS_WS_URL is not set: this suite talks to a server in another process; run it "
			+ "with `cargo xtask test` (or set AGENTS_WS_URL=ws://HOST:PORT/ws and AGENTS_WS_TOKEN)")
	return false


## The headers that present the token (none when the server has no token).
func _auth() -> PackedStringArray:
	if _token.is_empty():
		return PackedStringArray()
	return PackedStringArray(["Authorization: Bearer %s" % _token])


## Opens an authorized connection and consumes its welcome; null (after a failed assertion) when
## the suite has no server ([method _configured]) or the connection does not open.
func _open() -> WebSocketPeer:
	if not _configured():
		return null
	var peer: WebSocketPeer = await ws_connect(_url, _auth())
	if not assert_eq(peer.get_ready_state(), WebSocketPeer.STATE_OPEN,
			"[%s] the socket to %s opens" % [_target, _url]):
		return null
	var welcome := await ws_receive(peer, func(m): return m.get("type") == "welcome")
	assert_eq(welcome.get("type"), "welcome", "[%s] welcome comes first" % _target)
	return peer


## A fresh request id (ints and strings alternate: both must be echoed unchanged).
func _rid() -> Variant:
	_next_request += 1
	return _next_request if _next_request % 2 == 0 else "req-%d" % _next_request


## The `agent_config` of a quick agent: short idle, thinking and speaking times.
func _quick_agent(agent_name: String) -> Dictionary:
	return {"name": agent_name, "role": "tester", "initial_position": {"x": 4, "y": 6},
		"idle_think_seconds": 0.3, "thinking_seconds": 0.05, "speaking_seconds": 0.05}


## Spawns an agent over `peer`; returns its id ("" after a failed assertion).
func _spawn(peer: WebSocketPeer, agent_name: String) -> String:
	var rid: Variant = _rid()
	var reply := await ws_request(peer, {"type": "agent_spawn_request", "request_id": rid,
		"agent_config": _quick_agent(agent_name)}, "agent_spawn_response")
	assert_eq(reply.get("type"), "agent_spawn_response", "[%s] spawn reply %s" % [_target, reply])
	var agent_id: String = str(reply.get("agent_id", ""))
	assert_true(agent_id.begins_with("agent_"), "[%s] agent_id %s" % [_target, agent_id])
	return agent_id


## The agent ids of a `list_agents` request.
func _listed_ids(peer: WebSocketPeer) -> Array:
	var listed := await ws_request(peer, {"type": "list_agents", "request_id": _rid()}, "list_agents_response")
	var ids := []
	for agent in listed.get("agents", []):
		ids.append(agent.get("agent_id"))
	return ids


func _is_error(message: Dictionary, code: String, request_id: Variant) -> bool:
	var echoed: Variant = float(request_id) if request_id is int else request_id
	return assert_eq([message.get("type"), message.get("code"), message.get("request_id")],
		["error", code, echoed], "[%s] error %s: %s" % [_target, code, message])


func test_the_target_is_configured() -> void:
	if not _configured():
		return
	print("  test_remote_server.gd: talking to the %s at %s (token: %s)"
		% [_target, _url, "yes" if not _token.is_empty() else "no"])
	assert_true(_url.begins_with("ws://") and _url.ends_with("/ws"), "[%s] url %s" % [_target, _url])


func test_welcome_names_protocol_version_1() -> void:
	if not _configured():
		return
	var peer: WebSocketPeer = await ws_connect(_url, _auth())
	assert_eq(peer.get_ready_state(), WebSocketPeer.STATE_OPEN, "[%s] the socket opens" % _target)
	var welcome := await ws_receive(peer, func(m): return true)
	assert_eq(welcome.get("type"), "welcome", "[%s] the first message is the welcome" % _target)
	assert_eq(welcome.get("protocol_version"), 1.0, "[%s] protocol version 1" % _target)
	assert_true(str(welcome.get("server", "")).length() > 0, "[%s] welcome names the server" % _target)
	for request in ["agent_spawn_request", "agent_terminate_request", "get_agent_state",
			"list_agents", "send_message", "call_tool", "subscribe", "ping"]:
		assert_contains(welcome.get("requests", []), request, "[%s] welcome requests" % _target)
	for event in ["agent_spawned", "agent_state_update", "agent_speech", "agent_removed"]:
		assert_contains(welcome.get("events", []), event, "[%s] welcome events" % _target)


func test_a_spawned_agent_reports_its_states_and_answers_the_player() -> void:
	var peer: WebSocketPeer = await _open()
	if peer == null:
		return
	var rid: Variant = _rid()
	var sub := await ws_request(peer, {"type": "subscribe", "request_id": rid, "events": [
		"agent_state_update", "agent_speech", "agent_spawned", "agent_removed"]}, "subscribe_response")
	assert_eq(sub.get("type"), "subscribe_response", "[%s] subscribe: %s" % [_target, sub])
	assert_eq(sub.get("events"), ["agent_removed", "agent_spawned", "agent_speech", "agent_state_update"],
		"[%s] the filter in force, sorted" % _target)
	assert_eq(sub.get("agents"), null, "[%s] every agent" % _target)

	# agent_spawn_request → confirmation with the agent id, request_id echoed.
	rid = _rid()
	var config := _quick_agent("Remote Mira")
	ws_send(peer, {"type": "agent_spawn_request", "request_id": rid, "agent_config": config})
	var reply := await ws_reply(peer, "agent_spawn_response", rid)
	assert_eq(reply.get("type"), "agent_spawn_response", "[%s] spawn confirmation %s" % [_target, reply])
	assert_eq(reply.get("request_id"), float(rid) if rid is int else rid, "[%s] request_id echoed" % _target)
	var id: String = str(reply.get("agent_id", ""))
	assert_true(id.begins_with("agent_"), "[%s] agent_id %s" % [_target, id])

	var spawned := await ws_receive(peer, func(m):
		return m.get("type") == "agent_spawned" and m.get("agent_id") == id)
	assert_eq([spawned.get("name"), spawned.get("role"), spawned.get("position"), spawned.get("resumed")],
		["Remote Mira", "tester", {"x": 4.0, "y": 6.0}, false], "[%s] agent_spawned %s" % [_target, spawned])

	# The player's line makes it listen, think and speak; it answers the player.
	rid = _rid()
	var sent := await ws_request(peer, {"type": "send_message", "request_id": rid, "agent_id": id,
		"content": "Good morning, Mira!"}, "send_message_response")
	assert_eq([sent.get("type"), sent.get("agent_id")], ["send_message_response", id],
		"[%s] send_message reply %s" % [_target, sent])
	var said := await ws_receive(peer, func(m):
		return m.get("type") == "agent_speech" and m.get("agent_id") == "player_0")
	assert_eq([said.get("content"), said.get("recipients")], ["Good morning, Mira!", [id]],
		"[%s] the player's line is an agent_speech event %s" % [_target, said])
	for state in ["listening", "thinking", "speaking"]:
		var update := await ws_receive(peer, func(m):
			return m.get("type") == "agent_state_update" and m.get("agent_id") == id \
				and m.get("state") == state)
		assert_eq(update.get("state"), state, "[%s] agent_state_update to %s" % [_target, state])
		assert_has_keys(update, ["agent_id", "state", "old_state", "position", "current_task"],
			"[%s] agent_state_update fields" % _target)
		assert_contains(STATES, update.get("old_state"), "[%s] old_state" % _target)
	var answer := await ws_receive(peer, func(m):
		return m.get("type") == "agent_speech" and m.get("agent_id") == id \
			and m.get("recipients", []).has("player_0"), 10.0)
	assert_eq(answer.get("recipients"), ["player_0"], "[%s] the agent answers the player: %s" % [_target, answer])
	assert_true(str(answer.get("content", "")).length() > 0, "[%s] with a line" % _target)

	# Its state and the list of agents.
	rid = _rid()
	var state := await ws_request(peer, {"type": "get_agent_state", "request_id": rid, "agent_id": id},
		"get_agent_state_response")
	var agent: Dictionary = state.get("agent", {})
	assert_eq([agent.get("agent_id"), agent.get("name"), agent.get("role")], [id, "Remote Mira", "tester"],
		"[%s] get_agent_state %s" % [_target, state])
	assert_contains(STATES, agent.get("state"), "[%s] a known state" % _target)
	assert_has_keys(agent.get("position", {}), ["x", "y"], "[%s] position" % _target)
	var ids := await _listed_ids(peer)
	assert_contains(ids, id, "[%s] list_agents includes the agent" % _target)

	# Terminating it: the reply, then agent_removed; afterwards it is unknown.
	rid = _rid()
	var ended := await ws_request(peer, {"type": "agent_terminate_request", "request_id": rid, "agent_id": id},
		"agent_terminate_response")
	assert_eq([ended.get("type"), ended.get("agent_id")], ["agent_terminate_response", id],
		"[%s] terminate reply %s" % [_target, ended])
	var removed := await ws_receive(peer, func(m):
		return m.get("type") == "agent_removed" and m.get("agent_id") == id)
	assert_eq(removed.get("reason"), "terminated", "[%s] agent_removed %s" % [_target, removed])
	rid = _rid()
	var gone := await ws_request(peer, {"type": "get_agent_state", "request_id": rid, "agent_id": id},
		"get_agent_state_response")
	_is_error(gone, "unknown_agent", rid)


func test_call_tool_runs_a_game_tool() -> void:
	var peer: WebSocketPeer = await _open()
	if peer == null:
		return
	var rid: Variant = _rid()
	var tools := await ws_request(peer, {"type": "list_tools", "request_id": rid}, "list_tools_response")
	var names := []
	for t in tools.get("tools", []):
		names.append(t.get("name"))
	assert_contains(names, "roll_rpg_dice", "[%s] list_tools" % _target)
	assert_contains(names, "apply_tic_tac_toe_move", "[%s] list_tools" % _target)

	# A seeded dice roll: two d20s, the total is their sum, the same seed gives the same rolls.
	var rolls := []
	for attempt in 2:
		rid = _rid()
		var reply := await ws_request(peer, {"type": "call_tool", "request_id": rid, "name": "roll_rpg_dice",
			"arguments": {"sides": 20, "count": 2, "seed": 1}}, "call_tool_response")
		var result: Dictionary = reply.get("structured_content", {})
		assert_eq([reply.get("type"), reply.get("name"), reply.get("is_error")],
			["call_tool_response", "roll_rpg_dice", false], "[%s] call_tool reply %s" % [_target, reply])
		var dice: Array = result.get("rolls", [])
		assert_eq(dice.size(), 2, "[%s] two rolls %s" % [_target, result])
		var sum := 0.0
		for d in dice:
			assert_true(d >= 1.0 and d <= 20.0, "[%s] a d20 shows 1..20, got %s" % [_target, d])
			sum += d
		assert_eq(result.get("total"), sum, "[%s] the total is the sum" % _target)
		rolls.append(dice)
	assert_eq(rolls[0], rolls[1], "[%s] the same seed rolls the same" % _target)

	# Tic-tac-toe: a new game, a legal move, then the same square again is illegal (is_error).
	rid = _rid()
	var game := await ws_request(peer, {"type": "call_tool", "request_id": rid, "name": "new_tic_tac_toe_game",
		"arguments": {}}, "call_tool_response")
	var board: String = str(game.get("structured_content", {}).get("state", ""))
	assert_true(board.begins_with("G:"), "[%s] a game state string %s" % [_target, game])
	rid = _rid()
	var moved := await ws_request(peer, {"type": "call_tool", "request_id": rid, "name": "apply_tic_tac_toe_move",
		"arguments": {"state": board, "coord": "B2"}}, "call_tool_response")
	var after: Dictionary = moved.get("structured_content", {})
	assert_eq([moved.get("is_error"), after.get("legal")], [false, true], "[%s] B2 is legal: %s" % [_target, moved])
	rid = _rid()
	var again := await ws_request(peer, {"type": "call_tool", "request_id": rid, "name": "apply_tic_tac_toe_move",
		"arguments": {"state": after.get("state", ""), "coord": "B2"}}, "call_tool_response")
	assert_eq([again.get("type"), again.get("is_error"), again.get("structured_content", {}).get("legal")],
		["call_tool_response", true, false], "[%s] B2 again is illegal: %s" % [_target, again])


func test_errors_keep_the_connection_usable() -> void:
	var peer: WebSocketPeer = await _open()
	if peer == null:
		return
	peer.send_text("this is not json")
	_is_error(await ws_receive(peer, func(m): return m.get("type") == "error"), "not_json", null)
	peer.send_text("[1, 2, 3]")
	_is_error(await ws_receive(peer, func(m): return m.get("type") == "error"), "not_an_object", null)
	var rid: Variant = _rid()
	_is_error(await ws_request(peer, {"type": "no_such_request", "request_id": rid}, "none"), "unknown_type", rid)
	rid = _rid()
	_is_error(await ws_request(peer, {"type": "get_agent_state", "request_id": rid, "agent_id": "agent_404"},
		"get_agent_state_response"), "unknown_agent", rid)
	rid = _rid()
	_is_error(await ws_request(peer, {"type": "get_agent_state", "request_id": rid, "agent_id": 7},
		"get_agent_state_response"), "invalid_request", rid)
	rid = _rid()
	_is_error(await ws_request(peer, {"type": "call_tool", "request_id": rid, "name": "no_such_tool"},
		"call_tool_response"), "unknown_tool", rid)
	rid = _rid()
	_is_error(await ws_request(peer, {"type": "call_tool", "request_id": rid, "name": "roll_rpg_dice",
		"arguments": {"sides": "twenty"}}, "call_tool_response"), "invalid_args", rid)
	peer.send(PackedByteArray([1, 2, 3]))
	_is_error(await ws_receive(peer, func(m): return m.get("type") == "error"), "binary_not_supported", null)
	rid = _rid()
	var pong := await ws_request(peer, {"type": "ping", "request_id": rid}, "pong")
	assert_eq(pong.get("type"), "pong", "[%s] still usable after the errors: %s" % [_target, pong])
	assert_eq(peer.get_ready_state(), WebSocketPeer.STATE_OPEN, "[%s] still open" % _target)


func test_the_token_is_required_when_set() -> void:
	if not _configured():
		return
	if _token.is_empty():
		# Nothing to refuse: a server without a token lets a bare connection in.
		var bare: WebSocketPeer = await ws_connect(_url)
		assert_eq(bare.get_ready_state(), WebSocketPeer.STATE_OPEN, "[%s] no token: open" % _target)
		return
	# HTTP 401 at the upgrade: the peer ends CLOSED without ever being OPEN.
	for headers in [PackedStringArray(), PackedStringArray(["Authorization: Bearer wrong-%s" % _token])]:
		var states := []
		var refused: WebSocketPeer = await ws_connect(_url, headers, states)
		assert_eq(refused.get_ready_state(), WebSocketPeer.STATE_CLOSED,
			"[%s] refused with headers %s" % [_target, headers])
		assert_false(WebSocketPeer.STATE_OPEN in states, "[%s] never open: states %s" % [_target, states])
	var allowed: WebSocketPeer = await ws_connect(_url, _auth())
	assert_eq(allowed.get_ready_state(), WebSocketPeer.STATE_OPEN, "[%s] Authorization: Bearer opens" % _target)
	var welcome := await ws_receive(allowed, func(m): return true)
	assert_eq(welcome.get("type"), "welcome", "[%s] and is served" % _target)


func test_only_allowed_web_origins_connect() -> void:
	if not _configured():
		return
	# A foreign page and the opaque origin: HTTP 403 at the upgrade, even with the right token.
	for origin in ["http://evil.example", "null"]:
		var headers := _auth()
		headers.append("Origin: " + origin)
		var states := []
		var refused: WebSocketPeer = await ws_connect(_url, headers, states)
		assert_eq(refused.get_ready_state(), WebSocketPeer.STATE_CLOSED,
			"[%s] Origin %s is refused" % [_target, origin])
		assert_false(WebSocketPeer.STATE_OPEN in states, "[%s] never open: states %s" % [_target, states])
	# The origin the server was told to allow, and a loopback page (the bind is loopback).
	var allowed := ["http://localhost:8060"]
	if not _allowed_origin.is_empty():
		allowed.append(_allowed_origin)
	for origin in allowed:
		var headers := _auth()
		headers.append("Origin: " + origin)
		var peer: WebSocketPeer = await ws_connect(_url, headers)
		assert_eq(peer.get_ready_state(), WebSocketPeer.STATE_OPEN, "[%s] Origin %s connects" % [_target, origin])
		var welcome := await ws_receive(peer, func(m): return true)
		assert_eq(welcome.get("type"), "welcome", "[%s] and is served" % _target)
		peer.close()


func test_two_clients_see_each_others_effects() -> void:
	if not _configured():
		return
	var a: WebSocketPeer = await _open()
	var b: WebSocketPeer = await _open()
	if a == null or b == null:
		return
	# A spawns; B sees the agent appear and can list it.
	var id := await _spawn(a, "Shared Sam")
	var seen := await ws_receive(b, func(m): return m.get("type") == "agent_spawned" and m.get("agent_id") == id)
	assert_eq(seen.get("name"), "Shared Sam", "[%s] B sees A's spawn: %s" % [_target, seen])
	var ids := await _listed_ids(b)
	assert_contains(ids, id, "[%s] B lists A's agent" % _target)

	# B talks to it; A hears the player's line and the agent's answer.
	var rid: Variant = _rid()
	var sent := await ws_request(b, {"type": "send_message", "request_id": rid, "agent_id": id,
		"content": "Hello from B"}, "send_message_response")
	assert_eq(sent.get("type"), "send_message_response", "[%s] B's message %s" % [_target, sent])
	var heard := await ws_receive(a, func(m):
		return m.get("type") == "agent_speech" and m.get("content") == "Hello from B")
	assert_eq(heard.get("recipients"), [id], "[%s] A hears B's line: %s" % [_target, heard])
	var answer := await ws_receive(a, func(m):
		return m.get("type") == "agent_speech" and m.get("agent_id") == id \
			and m.get("recipients", []).has("player_0"), 10.0)
	assert_true(str(answer.get("content", "")).length() > 0, "[%s] A hears the answer: %s" % [_target, answer])

	# B terminates it; A sees it removed.
	rid = _rid()
	var ended := await ws_request(b, {"type": "agent_terminate_request", "request_id": rid, "agent_id": id},
		"agent_terminate_response")
	assert_eq(ended.get("type"), "agent_terminate_response", "[%s] B terminates: %s" % [_target, ended])
	var removed := await ws_receive(a, func(m): return m.get("type") == "agent_removed" and m.get("agent_id") == id)
	assert_eq(removed.get("reason"), "terminated", "[%s] A sees it removed: %s" % [_target, removed])
