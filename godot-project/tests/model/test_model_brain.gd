## Model brains in Godot: an `AgentRuntime` whose agent thinks with the `openai` brain against the
## fake provider (`cargo xtask test` starts the `fakellm` binary and passes its URL in
## AGENTS_FAKE_LLM_URL; its first answer is "Fresh bread at the well!" in 3-character pieces with
## a `move` to (12, 14)). The streamed text arrives as `agent_speech_delta` signals on the main
## thread, in order and before `agent_spoke`; the move and the line are applied; the call is traced.
extends "res://tests/test_base.gd"

const DB_DIR := "user://test_model_brain"

var _url := OS.get_environment("AGENTS_FAKE_LLM_URL")
## Every signal received, in order: `[name, args…]`.
var events: Array = []
## Signals that arrived off the main thread (must stay 0).
var off_main := 0


func _note(event: Array) -> void:
	if OS.get_thread_caller_id() != OS.get_main_thread_id():
		off_main += 1
	events.append(event)


func _index(kind: String, id: String) -> int:
	for i in events.size():
		if events[i][0] == kind and events[i][1] == id:
			return i
	return -1


func test_an_openai_agent_streams_moves_and_speaks() -> void:
	if _url.is_empty():
		fail("not run: AGENTS_FAKE_LLM_URL is not set")
		return
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DB_DIR))
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "openai")
	rt.idle_think_seconds = 1000.0
	rt.speaking_seconds = 0.05
	rt.agent_speech_delta.connect(func(id, delta, seq): _note(["delta", id, delta, seq]))
	rt.agent_tool_call.connect(func(id, tool, call_id): _note(["tool_call", id, tool, call_id]))
	rt.agent_moved.connect(func(id, _from, to): _note(["moved", id, to]))
	rt.agent_spoke.connect(func(id, content, _to): _note(["spoke", id, content]))
	rt.agent_error.connect(func(id, code, message): _note(["error", id, code, message]))
	add_to_tree(rt)
	var id := rt.spawn_agent({"name": "Mira", "role": "the baker",
		"initial_position": Vector2(10, 10),
		"brain": {"provider": "openai", "model": "fake-1", "base_url": _url + "/v1"}})
	assert_eq(id, "agent_001", rt.get_last_error())
	assert_eq(rt.get_agent_state(id)["brain"], "openai:fake-1")
	assert_true(rt.send_message(id, "Any bread left?"))
	var spoke := await wait_until(func(): return _index("spoke", id) >= 0, 15.0)
	assert_true(spoke, "the agent answered: %s" % [events])
	if not spoke:
		return
	var text := ""
	var last_seq := -1
	var last_delta := -1
	for i in events.size():
		var e: Array = events[i]
		if e[0] == "delta" and e[1] == id:
			text += e[2]
			assert_eq(e[3], last_seq + 1, "pieces are numbered in order")
			last_seq = e[3]
			last_delta = i
	assert_eq(text, "Fresh bread at the well!")
	assert_true(last_seq >= 7, "the text came in pieces (%d)" % [last_seq + 1])
	assert_true(last_delta < _index("spoke", id), "every piece before the line: %s" % [events])
	assert_eq(events[_index("spoke", id)][2], "Fresh bread at the well!")
	assert_eq(events[_index("tool_call", id)][2], "move")
	assert_eq(events[_index("moved", id)][2], Vector2(12, 14))
	assert_eq(_index("error", id), -1, "no error: %s" % [events])
	assert_eq(off_main, 0, "every signal on the main thread")
	var trace := rt.get_agent_trace(id)
	assert_eq(trace.size(), 1)
	assert_eq(trace[0]["provider"], "openai")
	assert_eq(trace[0]["model"], "fake-1")
	assert_eq(trace[0]["outcome"], "ok")
	assert_true(int(trace[0]["input_tokens"]) > 0, "tokens: %s" % [trace[0]])


func test_a_misconfigured_brain_is_refused_at_spawn() -> void:
	var rt := AgentRuntime.new()
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DB_DIR))
	rt.database_path = fresh_db(DB_DIR, "refused")
	rt.agent_error.connect(func(id, code, message): _note(["error", id, code, message]))
	add_to_tree(rt)
	assert_eq(rt.spawn_agent({"name": "Nope", "brain": {"provider": "openai"}}), "")
	assert_contains(rt.get_last_error(), "brain.model is required for the openai provider")
	assert_eq(rt.spawn_agent({"name": "Nope", "brain": {"provider": "openai", "modle": "x"}}), "")
	assert_contains(rt.get_last_error(), "unknown field `modle`")
