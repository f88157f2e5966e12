## Base of the suites that talk to a WebSocket server (`docs/protocol.md`) with Godot's own
## `WebSocketPeer`: `extends "res://tests/ws_helpers.gd"` (it extends the test base).
##
## Every peer opened with [method ws_connect] gets an inbox: [method ws_receive] keeps the
## messages it reads past, so a test can wait for a reply and still find the events that arrived
## before it (the protocol does not fix the order of a reply and the events its request causes).
## Peers are closed after each test ([method ws_close_all], called by `after_each`; a suite that
## overrides `after_each` calls it too).
extends "res://tests/test_base.gd"

var _ws_peers: Array[WebSocketPeer] = []
## Per peer (by instance id): the messages read from it and not yet picked.
var _ws_inbox := {}


func after_each() -> void:
	ws_close_all()


## Closes every peer [method ws_connect] opened and forgets their inboxes.
func ws_close_all() -> void:
	for peer in _ws_peers:
		peer.close()
	_ws_peers.clear()
	_ws_inbox.clear()


## Connects to `url` and waits (at most 5 s) until the socket is open or closed; returns the peer.
## `states` (optional) receives every ready state seen while waiting, so a test can tell "refused"
## (never `STATE_OPEN`) from "opened, then closed".
func ws_connect(url: String, headers := PackedStringArray(), states: Array = []) -> WebSocketPeer:
	var peer := WebSocketPeer.new()
	peer.handshake_headers = headers
	_ws_peers.append(peer)
	_ws_inbox[peer.get_instance_id()] = []
	assert_eq(peer.connect_to_url(url), OK, "connect_to_url %s" % url)
	await wait_until(func():
		peer.poll()
		var state := peer.get_ready_state()
		if states.is_empty() or states[-1] != state:
			states.append(state)
		return state == WebSocketPeer.STATE_OPEN or state == WebSocketPeer.STATE_CLOSED, 5.0)
	return peer


## Reads what has arrived on `peer` into its inbox (JSON objects only; anything else is kept as
## `{"type": "<not a JSON object>", "text": …}` so a test can see it).
func ws_poll(peer: WebSocketPeer) -> void:
	peer.poll()
	var inbox: Array = _ws_inbox.get_or_add(peer.get_instance_id(), [])
	while peer.get_available_packet_count() > 0:
		var text := peer.get_packet().get_string_from_utf8()
		var message = JSON.parse_string(text)
		if message is Dictionary:
			inbox.append(message)
		else:
			inbox.append({"type": "<not a JSON object>", "text": text})


## Returns (and removes from the inbox) the first message of `peer` that satisfies `pick`,
## waiting up to `timeout_seconds` for it; `{}` when none came (or the socket closed).
func ws_receive(peer: WebSocketPeer, pick: Callable, timeout_seconds := 5.0) -> Dictionary:
	# Lambdas capture locals by value: collect into an Array (a reference type).
	var found := []
	await wait_until(func():
		ws_poll(peer)
		var inbox: Array = _ws_inbox[peer.get_instance_id()]
		for i in inbox.size():
			if pick.call(inbox[i]):
				found.append(inbox[i])
				inbox.remove_at(i)
				return true
		return peer.get_ready_state() == WebSocketPeer.STATE_CLOSED, timeout_seconds)
	return found[0] if not found.is_empty() else {}


## Waits for the reply of type `reply_type` or an `error` carrying `request_id` (a reply to
## another request never matches); `{}` on timeout. An integer `request_id` comes back as a float
## (Godot's JSON parser reads every number as a float) and matches.
func ws_reply(peer: WebSocketPeer, reply_type: String, request_id: Variant, timeout_seconds := 5.0) -> Dictionary:
	var echoed: Variant = float(request_id) if request_id is int else request_id
	return await ws_receive(peer, func(m):
		return (m.get("type") == reply_type or m.get("type") == "error") \
			and deep_equal(m.get("request_id"), echoed), timeout_seconds)


## Sends `message` as one JSON text frame (asserting that the peer took it).
func ws_send(peer: WebSocketPeer, message: Dictionary) -> void:
	assert_eq(peer.send_text(JSON.stringify(message)), OK, "send_text %s" % message.get("type"))


## Sends `message` (which carries a `request_id`) and waits for its reply: `reply_type`, or an
## `error` with the same `request_id`.
func ws_request(peer: WebSocketPeer, message: Dictionary, reply_type: String, timeout_seconds := 5.0) -> Dictionary:
	ws_send(peer, message)
	return await ws_reply(peer, reply_type, message.get("request_id"), timeout_seconds)
