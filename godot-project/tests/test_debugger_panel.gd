## The editor's Agents debugger tab, fed the messages a game sends (the format of
## `rust/godot/src/debugger.rs`): the list follows the reports, a selection asks the game for the
## agent's detail, the detail tabs show the journal, and the actions send the game the right
## messages. Garbage is refused without changing anything. (The real editor and game run in
## `cargo xtask test --suite editor_debugger`.)
extends "res://tests/test_base.gd"

const PANEL := preload("res://addons/godot_agents/debugger/agents_debugger_panel.gd")

var panel
var sent := []


func before_each() -> void:
	panel = add_to_tree(PANEL.new())
	sent.clear()
	panel.message_requested.connect(func(message, data): sent.append([message, data]))


func _agent(id: String, name: String, state: String, paused := false) -> Dictionary:
	return {"agent_id": id, "name": name, "role": "baker", "state": state,
		"position": [10.5, 20.0], "task": "bake bread", "brain": "scripted", "paused": paused}


func _report(agents: Array) -> PackedByteArray:
	return JSON.stringify({"agents": agents, "count": agents.size()}).to_utf8_buffer()


func test_the_list_follows_the_reports() -> void:
	var agents := [_agent("agent_001", "Mira", "idle"), _agent("agent_002", "Tom", "thinking")]
	assert_true(panel.handle_message("godot_agents:agents", [7, "AgentRuntime", _report(agents)]))
	assert_eq(panel.runtime_id, 7)
	assert_eq(panel.listed_agents(), PackedStringArray(["agent_001", "agent_002"]))
	var first: TreeItem = panel._tree.get_root().get_child(0)
	assert_eq(first.get_text(0), "Mira")
	assert_eq(first.get_text(3), "idle")
	assert_eq(first.get_text(4), "(10.5, 20.0)")
	assert_eq(first.get_text(5), "bake bread")
	# The next report: Tom left, Ada came, Mira is paused and speaking; items are reused.
	agents = [_agent("agent_001", "Mira", "speaking", true), _agent("agent_003", "Ada", "idle")]
	assert_true(panel.handle_message("agents", [7, "AgentRuntime", _report(agents)]))
	assert_eq(panel.listed_agents(), PackedStringArray(["agent_001", "agent_003"]))
	assert_eq(panel._tree.get_root().get_child(0), first, "the row is updated in place")
	assert_eq(first.get_text(3), "speaking (paused)")
	assert_contains(panel._status.text, "2 agent(s)")


func test_selecting_an_agent_asks_for_its_detail_and_shows_it() -> void:
	panel.handle_message("godot_agents:agents", [7, "World", _report([_agent("agent_001", "Mira", "idle")])])
	panel.select_agent("agent_001")
	assert_eq(sent, [["godot_agents:select", [7, "agent_001"]]])
	var detail := {
		"agent_id": "agent_001", "running": true, "paused": false,
		"decisions": [{"number": 3, "started_at": "2026-11-25T10:00:00.000Z", "trigger": "message",
			"context": "1 line(s) heard, 2 agent(s) nearby, task 'bake bread', 5 tool(s), at (10, 20)",
			"calls": [{"id": "c1", "tool": "move", "args": {"x": 500, "y": 1}, "outcome": "failed",
				"detail": "outside the world bounds"},
				{"id": "c2", "tool": "speak", "args": {"content": "Hi"}, "outcome": "done"}],
			"spoken": ["Hi"], "latency_ms": 812, "model_calls": 1, "input_tokens": 420,
			"output_tokens": 31, "repairs": 1,
			"recalled": [{"memory": {"id": 4, "kind": "heard", "text": "player_0 said to me: \"The key is under the mat.\""},
				"score": 2.4, "recency": 0.98, "importance": 0.5, "relevance": 0.92, "in_view": false},
				{"memory": {"id": 5, "kind": "said", "text": "I said: \"Hi\""},
				"score": 1.0, "recency": 1.0, "importance": 0.0, "relevance": 0.1, "in_view": true},
				{"memory": {"id": 6, "kind": "fact", "text": "The cellar is damp."},
				"score": 1.9, "recency": 0.5, "importance": 0.6, "relevance": 0.8, "semantic": 0.75,
				"in_view": false}]}],
		"trace": [{"id": 1, "agent_id": "agent_001", "provider": "openai", "model": "gpt-test",
			"started_at": "2026-11-25T10:00:00.000Z", "latency_ms": 800, "input_tokens": 420,
			"output_tokens": 31, "cached_tokens": 0, "outcome": "ok", "repairs": 0, "error_code": null}],
		"conversation": [{"id": 1, "agent_id": "agent_001", "timestamp": "2026-11-25T10:00:00.000Z",
			"sender": "player_0", "content": "Hello [b]baker[/b]", "recipient": "agent_001"}],
		"state_history": [{"id": 1, "agent_id": "agent_001", "old_state": "idle",
			"new_state": "listening", "timestamp": "2026-11-25T10:00:00.000Z"}],
		"tasks": [], "session": null,
		"memories": [{"id": 4, "agent_id": "agent_001", "kind": "heard", "importance": 5,
			"text": "player_0 said to me: \"The key is under the mat.\"", "game_time": 61.0,
			"created_at": "2026-11-25T10:00:00.000Z", "superseded_by": 9}],
	}
	var bytes := JSON.stringify(detail).to_utf8_buffer()
	assert_true(panel.handle_message("godot_agents:detail", [7, "agent_001", bytes]))
	var decisions: String = panel.tab_text("Decisions")
	assert_contains(decisions, "#3 message")
	assert_contains(decisions, "812 ms, 1 model call(s), 420→31 tokens, 1 repair(s)")
	assert_contains(decisions, "task 'bake bread'")
	assert_contains(decisions, "move {\"x\":500,\"y\":1} → failed: outside the world bounds")
	assert_contains(decisions, "speak {\"content\":\"Hi\"} → done")
	assert_contains(decisions, "says “Hi”")
	assert_contains(decisions, "recalls #4 player_0 said to me: \"The key is under the mat.\" — score 2.40 (recency 0.98, importance 0.50, relevance 0.92)")
	assert_false(decisions.contains("recalls #5"), "a line the decision showed anyway is not listed")
	assert_contains(decisions, "recalls #6 The cellar is damp. — score 1.90 (recency 0.50, importance 0.60, relevance 0.80, meaning 0.75)")
	assert_contains(panel.tab_text("Memory"), "#4 heard (5) at 61 s: player_0 said to me: \"The key is under the mat.\" (replaced by #9)")
	assert_contains(panel.tab_text("Model calls"), "openai/gpt-test: ok, 800 ms, 420→31 tokens")
	assert_contains(panel.tab_text("Conversation"), "player_0 → agent_001: Hello [b]baker[/b]",
		"the text is shown as written, not as markup")
	assert_contains(panel.tab_text("State history"), "idle → listening")
	assert_contains(panel.tab_text("Session"), "No app session")
	# A detail for another agent (a selection since changed) is ignored.
	detail["decisions"] = []
	assert_true(panel.handle_message("detail", [7, "agent_009", JSON.stringify(detail).to_utf8_buffer()]))
	assert_contains(panel.tab_text("Decisions"), "#3 message")


func test_the_actions_send_the_game_their_messages() -> void:
	panel.handle_message("agents", [7, "World", _report([_agent("agent_001", "Mira", "idle")])])
	panel.select_agent("agent_001")
	sent.clear()
	panel._say.text = "  Good morning!  "
	panel.send_line()
	panel.toggle_pause()
	panel.terminate()
	assert_eq(sent, [
		["godot_agents:send", [7, "agent_001", "Good morning!"]],
		["godot_agents:pause", [7, "agent_001", true]],
		["godot_agents:terminate", [7, "agent_001"]],
	])
	assert_eq(panel._say.text, "", "the line is cleared once sent")
	# Paused in the next report: the button resumes.
	panel.handle_message("agents", [7, "World", _report([_agent("agent_001", "Mira", "idle", true)])])
	assert_eq(panel._pause.text, "Resume")
	sent.clear()
	panel.toggle_pause()
	assert_eq(sent, [["godot_agents:pause", [7, "agent_001", false]]])
	# Terminated: gone from the next report, the actions are disabled.
	panel.handle_message("agents", [7, "World", _report([])])
	assert_true(panel._terminate.disabled)
	assert_contains(panel._title.text, "no longer running")


func test_garbage_is_refused_and_changes_nothing() -> void:
	panel.handle_message("agents", [7, "World", _report([_agent("agent_001", "Mira", "idle")])])
	var cases := [
		["godot_agents:agents", []],
		["godot_agents:agents", ["7", "World", _report([])]],
		["godot_agents:agents", [7, "World", "not bytes"]],
		["godot_agents:agents", [7, "World", "{oops".to_utf8_buffer()]],
		["godot_agents:agents", [7, "World", JSON.stringify([1, 2]).to_utf8_buffer()]],
		["godot_agents:detail", [7]],
		["godot_agents:detail", [7, "agent_001", "[1]".to_utf8_buffer()]],
		["godot_agents:stopped", ["seven"]],
		["godot_agents:explode", [7]],
	]
	for c in cases:
		assert_false(panel.handle_message(c[0], c[1]), "refused: %s %s" % c)
		assert_ne(panel.last_problem, "", "says why: %s" % [c])
	assert_eq(panel.listed_agents(), PackedStringArray(["agent_001"]))
	assert_eq(sent, [])


func test_a_stopped_runtime_leaves_and_the_next_one_shows() -> void:
	panel.handle_message("agents", [7, "Town", _report([_agent("agent_001", "Mira", "idle")])])
	panel.handle_message("agents", [8, "Arena", _report([_agent("agent_005", "Rex", "idle")])])
	assert_eq(panel.runtime_id, 7, "the first runtime stays shown")
	assert_eq(panel._runtime_picker.item_count, 2)
	assert_true(panel.handle_message("stopped", [7]))
	assert_eq(panel.runtime_id, 8)
	assert_eq(panel.listed_agents(), PackedStringArray(["agent_005"]))
	panel.clear()
	assert_eq(panel.listed_agents(), PackedStringArray())
	assert_eq(panel._runtime_picker.item_count, 0)
