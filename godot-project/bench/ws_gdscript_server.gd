## The WebSocket server a Godot user would write without Godot Agents: Godot's own `TCPServer` +
## `WebSocketPeer` in GDScript, polled from the main loop, keeping its agents in a Dictionary. It
## speaks the part of the protocol (`docs/protocol.md`) the latency benchmark uses — `welcome`,
## `ping`, `subscribe`, `agent_spawn_request`, `agent_terminate_request`, `get_agent_state` —
## with the same reply shapes, and answers anything else with an `error`. It is the baseline of
## `cargo bench -p agents-server --bench ws` (`cargo xtask bench --only-ws` starts it).
##
## `godot --headless --path PROJECT --script res://bench/ws_gdscript_server.gd -- [options]`
##
## Options (all optional):
##   --bind ADDRESS     address to listen on (default 127.0.0.1)
##   --port N           port (default 0 = a free one)
##   --stop-file PATH   quit cleanly once this file exists
##   --busy-fps N       frames per second while clients are connected (default 0 = unlimited:
##                      every frame polls every peer, the best latency GDScript can give). While
##                      busy it also sets `OS.low_processor_usage_mode_sleep_usec` to 0: headless
##                      Godot otherwise sleeps that long (6,900 µs by default) after every frame,
##                      which caps a polled server at ~145 frames/s (p50 ≈ 4 ms).
##   --headless-sleep   keep Godot's default per-frame sleep while busy (the server as shipped
##                      without that tuning)
##   --idle-fps N       frames per second with no client (default 30, so an idle server does not
##                      take a core from the other measurements)
##
## Prints `AGENTS_GDSCRIPT_SERVER_URL ws://HOST:PORT/ws` once it listens and
## `AGENTS_GDSCRIPT_SERVER_STOPPED` when it stops; exits 1 when it cannot listen, 2 on bad options.
extends SceneTree

const REQUESTS := ["ping", "agent_spawn_request", "agent_terminate_request", "get_agent_state", "subscribe"]
const EVENTS: Array[String] = []

var _server := TCPServer.new()
## Connected clients: `{"peer": WebSocketPeer, "welcomed": bool}`.
var _clients: Array[Dictionary] = []
## Agent id → the protocol's agent object (`agent_id`, `name`, `role`, `brain`, `state`,
## `position`, `current_task`, `current_task_id`).
var _agents := {}
var _next_agent := 1
var _stop_file := ""
var _busy_fps := 0
var _idle_fps := 30
var _stopped := false
var _keep_sleep := false
var _default_sleep_usec := OS.low_processor_usage_mode_sleep_usec
## Frames run, requests answered and microseconds spent while clients were connected.
var _busy_frames := 0
var _busy_requests := 0
var _busy_usec := 0
var _busy_seconds := 0.0


func _initialize() -> void:
	var options := _parse_options(OS.get_cmdline_user_args())
	if options.has("error"):
		printerr("ws_gdscript_server.gd: %s" % options["error"])
		quit(2)
		return
	var bind: String = options.get("bind", "127.0.0.1")
	var port := int(options.get("port", "0"))
	_stop_file = options.get("stop-file", "")
	_busy_fps = int(options.get("busy-fps", "0"))
	_idle_fps = int(options.get("idle-fps", "30"))
	_keep_sleep = options.has("headless-sleep")
	Engine.max_fps = _idle_fps
	var err := _server.listen(port, bind)
	if err != OK:
		printerr("ws_gdscript_server.gd: cannot listen on %s:%d: %s" % [bind, port, error_string(err)])
		_stopped = true
		quit(1)
		return
	print("AGENTS_GDSCRIPT_SERVER_URL ws://%s:%d/ws" % [bind, _server.get_local_port()])


func _process(delta: float) -> bool:
	if _stopped:
		return false
	var frame_start := Time.get_ticks_usec()
	var was_busy := not _clients.is_empty()
	if not _stop_file.is_empty() and FileAccess.file_exists(_stop_file):
		_stop()
		return false
	while _server.is_connection_available():
		var tcp := _server.take_connection()
		# As our server does: no Nagle delay on small replies.
		tcp.set_no_delay(true)
		var peer := WebSocketPeer.new()
		if peer.accept_stream(tcp) == OK:
			_clients.append({"peer": peer, "welcomed": false})
	var i := 0
	while i < _clients.size():
		var client: Dictionary = _clients[i]
		var peer: WebSocketPeer = client["peer"]
		peer.poll()
		var state := peer.get_ready_state()
		if state == WebSocketPeer.STATE_CLOSED:
			_clients.remove_at(i)
			continue
		if state == WebSocketPeer.STATE_OPEN:
			if not client["welcomed"]:
				client["welcomed"] = true
				peer.send_text(JSON.stringify(_welcome()))
			while peer.get_available_packet_count() > 0:
				var packet := peer.get_packet()
				var reply: Dictionary
				if peer.was_string_packet():
					reply = _handle(packet.get_string_from_utf8())
				else:
					reply = _error("binary_not_supported", "the protocol is JSON text", null)
				peer.send_text(JSON.stringify(reply))
				_busy_requests += 1
		i += 1
	Engine.max_fps = _idle_fps if _clients.is_empty() else _busy_fps
	var sleep_usec := _default_sleep_usec if _clients.is_empty() or _keep_sleep else 0
	if OS.low_processor_usage_mode_sleep_usec != sleep_usec:
		OS.low_processor_usage_mode_sleep_usec = sleep_usec
	if was_busy:
		_busy_frames += 1
		_busy_usec += Time.get_ticks_usec() - frame_start
		_busy_seconds += delta
	return false


func _stop() -> void:
	_stopped = true
	for client in _clients:
		(client["peer"] as WebSocketPeer).close(1001, "server shutting down")
	_clients.clear()
	_server.stop()
	if _busy_frames > 0:
		print("AGENTS_GDSCRIPT_SERVER_STATS while clients were connected: %d frames in %.1f s (%.0f fps), %d requests (%.1f per frame), %.2f ms of script per frame" % [
			_busy_frames, _busy_seconds, _busy_frames / maxf(_busy_seconds, 0.001), _busy_requests,
			float(_busy_requests) / _busy_frames, _busy_usec / 1000.0 / _busy_frames])
	print("AGENTS_GDSCRIPT_SERVER_STOPPED")
	quit(0)


func _welcome() -> Dictionary:
	return {
		"type": "welcome",
		"protocol_version": 1,
		"server": "gdscript-baseline",
		"requests": REQUESTS,
		"events": EVENTS,
	}


## One request's reply.
func _handle(text: String) -> Dictionary:
	var json := JSON.new()
	if json.parse(text) != OK:
		return _error("not_json", json.get_error_message(), null)
	if typeof(json.data) != TYPE_DICTIONARY:
		return _error("not_an_object", "a request is a JSON object", null)
	var request: Dictionary = json.data
	var request_id = request.get("request_id")
	# JSON numbers parse as floats: echo a whole number as the integer the client sent.
	if typeof(request_id) == TYPE_FLOAT and request_id == floorf(request_id):
		request_id = int(request_id)
	var type = request.get("type")
	if typeof(type) != TYPE_STRING:
		return _error("missing_type", "the request has no string type", request_id)
	match type:
		"ping":
			return {"type": "pong", "request_id": request_id}
		"get_agent_state":
			var agent_id = request.get("agent_id")
			if not _agents.has(agent_id):
				return _error("unknown_agent", "no running agent %s" % str(agent_id), request_id)
			return {"type": "get_agent_state_response", "request_id": request_id, "agent": _agents[agent_id]}
		"agent_spawn_request":
			var config = request.get("agent_config")
			if typeof(config) != TYPE_DICTIONARY:
				return _error("invalid_request", "agent_config must be an object", request_id)
			var agent_id := "agent_%03d" % _next_agent
			_next_agent += 1
			var position = config.get("initial_position", {"x": 50, "y": 50})
			_agents[agent_id] = {
				"agent_id": agent_id,
				"name": str(config.get("name", agent_id)),
				"role": str(config.get("role", "")),
				"brain": str(config.get("brain", "scripted")),
				"state": "idle",
				"position": position,
				"current_task": null,
				"current_task_id": null,
			}
			return {"type": "agent_spawn_response", "request_id": request_id, "agent_id": agent_id}
		"agent_terminate_request":
			var agent_id = request.get("agent_id")
			if not _agents.erase(agent_id):
				return _error("unknown_agent", "no running agent %s" % str(agent_id), request_id)
			return {"type": "agent_terminate_response", "request_id": request_id, "agent_id": agent_id}
		"subscribe":
			return {"type": "subscribe_response", "request_id": request_id, "events": request.get("events"), "agents": request.get("agents")}
	return _error("unknown_type", "unknown request type %s" % type, request_id)


func _error(code: String, message: String, request_id) -> Dictionary:
	return {"type": "error", "code": code, "message": message, "request_id": request_id}


## `--name value` pairs into a Dictionary; unknown options are an error.
func _parse_options(args: PackedStringArray) -> Dictionary:
	const VALUED := ["bind", "port", "stop-file", "busy-fps", "idle-fps"]
	const FLAGS := ["headless-sleep"]
	var options := {}
	var i := 0
	while i < args.size():
		var arg := args[i]
		var key := arg.substr(2)
		if arg.begins_with("--") and key in FLAGS:
			options[key] = "true"
			i += 1
			continue
		if not arg.begins_with("--") or not key in VALUED:
			return {"error": "unknown option '%s' (known: --%s, --%s)" % [arg, ", --".join(VALUED), ", --".join(FLAGS)]}
		if i + 1 >= args.size():
			return {"error": "--%s needs a value" % key}
		options[key] = args[i + 1]
		i += 2
	return options
