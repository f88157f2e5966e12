## `AgentRuntime.merge_speech_deltas`: the speech pieces one agent streams within a frame arrive
## as one `agent_speech_delta` signal (texts joined, `seq` the last piece's), still before the
## agent's `agent_spoke`. Runs an `openai` agent against the fake provider (`cargo xtask test`
## starts the `fakellm` binary and passes its URL in AGENTS_FAKE_LLM_URL); the node does not
## process while the agent decides, so every piece waits for one `drain_events()`.
extends "res://tests/test_base.gd"

const DB_DIR := "user://test_speech_merge"

var _url := OS.get_environment("AGENTS_FAKE_LLM_URL")
## Every signal received, in order: `[name, args…]`.
var events: Array = []


func test_pieces_of_one_frame_arrive_as_one_signal_before_the_line() -> void:
	if _url.is_empty():
		fail("not run: AGENTS_FAKE_LLM_URL is not set")
		return
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DB_DIR))
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "merge")
	rt.idle_think_seconds = 1000.0
	rt.speaking_seconds = 0.05
	rt.merge_speech_deltas = true
	rt.agent_speech_delta.connect(func(id, delta, seq): events.append(["delta", id, delta, seq]))
	rt.agent_spoke.connect(func(id, content, _to): events.append(["spoke", id, content]))
	rt.agent_error.connect(func(id, code, message): events.append(["error", id, code, message]))
	add_to_tree(rt)
	var id := rt.spawn_agent({"name": "Mira", "role": "the baker",
		"brain": {"provider": "openai", "model": "fake-merge", "base_url": _url + "/v1"}})
	assert_eq(id, "agent_001", rt.get_last_error())
	rt.drain_events()
	events.clear()
	rt.set_process(false)
	assert_true(rt.send_message(id, "Any bread left?"))
	# The decision is over once its call is traced and the agent is idle again: every event of
	# it is queued by then.
	var decided := await wait_until(func():
		return rt.get_agent_trace(id).size() == 1 and rt.get_agent_state(id)["state"] == "idle", 15.0)
	assert_true(decided, "the agent decided: %s" % [rt.get_agent_state(id)])
	rt.drain_events()
	rt.set_process(true)
	var deltas := events.filter(func(e): return e[0] == "delta")
	var spoke := events.filter(func(e): return e[0] == "spoke" and e[1] == id)
	assert_eq(spoke.size(), 1, "one line: %s" % [events])
	assert_eq(deltas.size(), 1, "the pieces came as one signal: %s" % [events])
	if deltas.size() != 1 or spoke.size() != 1:
		return
	assert_eq(deltas[0][1], id)
	assert_eq(deltas[0][2], spoke[0][2], "the merged text is the whole line")
	assert_true(deltas[0][3] >= 1, "seq is the last piece's (%d)" % deltas[0][3])
	assert_true(events.find(deltas[0]) < events.find(spoke[0]), "before the line: %s" % [events])
	assert_eq(events.filter(func(e): return e[0] == "error"), [], "no error")
