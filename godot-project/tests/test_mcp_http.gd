## MCP over Streamable HTTP at `/mcp` on the AgentRuntime node's WebSocket server, driven with
## Godot's own `HTTPClient` as a raw MCP client: initialize (session id), tools/list (the game tools of
## GameTools and the memory tools), tools/call, the token, and `mcp_enabled = false`.
extends "res://tests/test_base.gd"

const DB_DIR := "user://test_mcp_http"
const ACCEPT := "Accept: application/json, text/event-stream"


func _server(db: String, token := "", mcp := true) -> AgentRuntime:
	var rt := AgentRuntime.new()
	rt.database_path = db
	rt.websocket_enabled = true
	rt.websocket_port = 0
	rt.websocket_token = token
	rt.mcp_enabled = mcp
	add_to_tree(rt)
	return rt


## POSTs `message` (JSON-RPC) to the node's `/mcp`; returns {code, headers (lower-case keys),
## messages (the JSON-RPC messages of a JSON or an SSE body)}; {code: 0} when it fails.
func _post(url: String, message: Dictionary, headers: PackedStringArray) -> Dictionary:
	var rest := url.trim_prefix("http://")
	var host := rest.get_slice("/", 0)
	var path := rest.substr(host.length())
	var http := HTTPClient.new()
	if http.connect_to_host(host.get_slice(":", 0), int(host.get_slice(":", 1))) != OK:
		return {"code": 0}
	var connected := await wait_until(func():
		http.poll()
		return http.get_status() == HTTPClient.STATUS_CONNECTED or http.get_status() >= HTTPClient.STATUS_CANT_RESOLVE, 5.0)
	if not connected or http.get_status() != HTTPClient.STATUS_CONNECTED:
		return {"code": 0}
	var all_headers := PackedStringArray(["Content-Type: application/json", ACCEPT])
	all_headers.append_array(headers)
	if http.request(HTTPClient.METHOD_POST, path, all_headers, JSON.stringify(message)) != OK:
		return {"code": 0}
	var body := PackedByteArray()
	# Lambdas capture locals by value: the body goes through an Array.
	var chunks := [body]
	var done := await wait_until(func():
		http.poll()
		if http.get_status() == HTTPClient.STATUS_BODY:
			chunks[0].append_array(http.read_response_body_chunk())
			return false
		return http.get_status() != HTTPClient.STATUS_REQUESTING, 10.0)
	if not done or not http.has_response():
		return {"code": 0}
	var lower := {}
	var response_headers := http.get_response_headers_as_dictionary()
	for key in response_headers:
		lower[String(key).to_lower()] = response_headers[key]
	var text: String = chunks[0].get_string_from_utf8()
	var messages := []
	if String(lower.get("content-type", "")).begins_with("text/event-stream"):
		for line in text.split("\n"):
			# Priming events carry an empty `data:`; only JSON-RPC messages count.
			var data := line.substr(5).strip_edges() if line.begins_with("data:") else ""
			if data.begins_with("{"):
				var parsed = JSON.parse_string(data)
				if parsed is Dictionary:
					messages.append(parsed)
	elif String(lower.get("content-type", "")).begins_with("application/json"):
		var parsed = JSON.parse_string(text)
		if parsed is Dictionary:
			messages.append(parsed)
	var code := http.get_response_code()
	http.close()
	return {"code": code, "headers": lower, "messages": messages}


## The response (a message with `id`) among `messages`, else {}.
func _response(reply: Dictionary, id: int) -> Dictionary:
	for message in reply.get("messages", []):
		if message.has("id") and int(message["id"]) == id:
			return message
	return {}


func _initialize(url: String, auth: PackedStringArray) -> Dictionary:
	return await _post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
		"protocolVersion": "2025-06-18", "capabilities": {},
		"clientInfo": {"name": "godot-test", "version": "1.0"}}}, auth)


func test_mcp_over_http_lists_and_calls_the_game_tools() -> void:
	var rt := _server(fresh_db(DB_DIR, "mcp"), "mcp-secret")
	var url := rt.get_mcp_url()
	assert_true(url.begins_with("http://127.0.0.1:") and url.ends_with("/mcp"), "url %s" % url)
	var auth := PackedStringArray(["Authorization: Bearer mcp-secret"])

	var refused := await _initialize(url, PackedStringArray())
	assert_eq(refused.get("code"), 401, "no token: HTTP 401")

	var init := await _initialize(url, auth)
	assert_eq(init.get("code"), 200, "initialize: HTTP 200")
	var result: Dictionary = _response(init, 1).get("result", {})
	assert_eq(result.get("serverInfo", {}).get("name"), "godot-agents", "serverInfo.name")
	assert_true(result.get("capabilities", {}).has("tools"), "tools capability")
	var session: String = init.get("headers", {}).get("mcp-session-id", "")
	assert_ne(session, "", "a session id")
	var with_session := auth.duplicate()
	with_session.append("Mcp-Session-Id: " + session)
	with_session.append("MCP-Protocol-Version: " + String(result.get("protocolVersion", "2025-06-18")))

	var ack := await _post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, with_session)
	assert_eq(ack.get("code"), 202, "initialized notification accepted")

	var listed := await _post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, with_session)
	var tools: Array = _response(listed, 2).get("result", {}).get("tools", [])
	var names := []
	for tool in tools:
		names.append(tool.get("name"))
	names.sort()
	# The game tools, and the memories of the runtime's agents.
	var expected := ["remember", "recall", "list_memories", "forget_memory"]
	for tool in GameTools.new().list_tools():
		expected.append(tool.get("name"))
	expected.sort()
	assert_eq(names, expected, "tools/list is the GameTools registry and the memory tools")

	var called := await _post(url, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
		"params": {"name": "new_tic_tac_toe_game", "arguments": {}}}, with_session)
	var call_result: Dictionary = _response(called, 3).get("result", {})
	assert_eq(call_result.get("isError"), false, "tools/call succeeds")
	assert_true(String(call_result.get("structuredContent", {}).get("state", "")).contains("G:"), "a tic-tac-toe state")

	var unknown := await _post(url, {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
		"params": {"name": "no_such_tool", "arguments": {}}}, with_session)
	var error: Dictionary = _response(unknown, 4).get("error", {})
	assert_eq(error.get("code"), -32602.0, "unknown tool: invalid params")
	assert_true(String(error.get("message", "")).contains("no_such_tool"), "names the tool")


func test_mcp_can_be_turned_off() -> void:
	var rt := _server(fresh_db(DB_DIR, "nomcp"), "", false)
	assert_ne(rt.get_websocket_url(), "", "the WebSocket serves")
	assert_eq(rt.get_mcp_url(), "", "no MCP url")
	var url := rt.get_websocket_url().replace("ws://", "http://").replace("/ws", "/mcp")
	var reply := await _initialize(url, PackedStringArray())
	assert_eq(reply.get("code"), 404, "/mcp is not served")


func test_allowed_hosts_reach_mcp_on_loopback_and_open_binds() -> void:
	# DNS-rebinding protection: only loopback names and `websocket_allowed_hosts` pass, on a
	# loopback bind (the node's own check) and on an open one (MCP's check stays on there).
	for bind in ["127.0.0.1", "0.0.0.0"]:
		var rt := AgentRuntime.new()
		rt.database_path = fresh_db(DB_DIR, "hosts_" + bind)
		rt.websocket_enabled = true
		rt.websocket_bind = bind
		rt.websocket_port = 0
		rt.websocket_insecure_no_token = true
		rt.websocket_allowed_hosts = PackedStringArray(["game.local"])
		add_to_tree(rt)
		var url := rt.get_mcp_url().replace("0.0.0.0", "127.0.0.1")
		assert_ne(url, "", "[%s] serves MCP: %s" % [bind, rt.get_last_error()])
		var port := url.trim_prefix("http://").get_slice("/", 0).get_slice(":", 1)
		for host in ["game.local", "localhost"]:
			var ok := await _initialize(url, PackedStringArray(["Host: %s:%s" % [host, port]]))
			assert_eq(ok.get("code"), 200, "[%s] Host %s: HTTP 200" % [bind, host])
		var foreign := await _initialize(url, PackedStringArray(["Host: evil.example:%s" % port]))
		assert_eq(foreign.get("code"), 403, "[%s] a foreign Host: HTTP 403" % bind)
		rt.stop()
