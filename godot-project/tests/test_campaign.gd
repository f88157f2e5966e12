## Campaign (a Resource): GM tool calls with their check order and reasons, the effects'
## signals, campaign.json saved and loaded, and GM turns through a scripted agent of an
## AgentRuntime (the campaign format and the GM tool-call contract of docs/campaigns.md).
extends "res://tests/test_base.gd"

const DIR := "user://test_campaign"

## Signals of the campaign under test, in order: `[name, args...]`.
var seen: Array = []


func before_each() -> void:
	seen = []
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DIR))


func _watch(c: Campaign) -> Campaign:
	c.actor_moved.connect(func(id, from, to): seen.append(["actor_moved", id, from, to]))
	c.hp_changed.connect(func(id, old, new): seen.append(["hp_changed", id, old, new]))
	c.actor_state_changed.connect(func(id, old, new): seen.append(["actor_state_changed", id, old, new]))
	c.map_generated.connect(func(ids, parent): seen.append(["map_generated", Array(ids), parent]))
	c.turn_completed.connect(func(entry): seen.append(["turn_completed", entry]))
	c.turn_failed.connect(func(message): seen.append(["turn_failed", message]))
	return c


func _fresh(party := PackedStringArray(["pc_001", "pc_002"])) -> Campaign:
	var c := _watch(Campaign.new())
	c.reset(party)
	return c


func _clean(sub: String) -> String:
	var dir := DIR + "/" + sub
	var global := ProjectSettings.globalize_path(dir)
	DirAccess.make_dir_recursive_absolute(global)
	for f in DirAccess.get_files_at(global):
		DirAccess.remove_absolute(global + "/" + f)
	return dir


func test_a_fresh_campaign_has_the_starter_map() -> void:
	var c := Campaign.new()
	assert_eq(c.get_party(), PackedStringArray(["pc_001"]))
	assert_eq(c.get_active_actor_id(), "pc_001")
	assert_eq(c.get_allowlist(), PackedStringArray(["move", "hp_delta", "map_generate", "move_options"]))
	var areas := c.get_areas()
	assert_eq(areas.keys(), ["area_001", "area_002"])
	assert_eq(areas.area_001.name, "Starting Area")
	assert_eq(areas.area_001.reachable_area_ids, ["area_002"])
	assert_eq(areas.area_002.parent_area_id, null)
	assert_eq(c.get_connections(), [{"from_area_id": "area_001", "to_area_id": "area_002"}])
	var actor := c.get_actor("pc_001")
	assert_eq(actor.position, "area_001")
	assert_eq(actor.hp, 10)
	assert_eq(actor.character_state, "alive")
	assert_eq(c.get_actor("nobody"), {})


func test_calls_effects_and_failures() -> void:
	var c := _fresh()
	var out := c.call_tools([
		{"id": "call_1", "tool": "move", "args": {"actor_id": "pc_001", "to_area_id": "area_002"}},
		{"id": "call_2", "tool": "hp_delta", "args": {"target_character_id": "pc_002", "delta": -10, "cause": "trap"}},
		{"id": "call_3", "tool": "move", "args": {"actor_id": "pc_001", "to_area_id": "area_001"}},
		{"id": "call_4", "tool": "teleport", "args": {}},
	])
	assert_eq(out.applied_actions.size(), 2)
	assert_eq(out.applied_actions[0].result, {"from_area_id": "area_001", "to_area_id": "area_002"})
	assert_type(out.applied_actions[1].result.new_hp, TYPE_INT)
	assert_true(out.applied_actions[0].timestamp.ends_with("+00:00"))
	var failed: Array = out.tool_feedback.failed_calls
	assert_eq(failed.map(func(f): return [f.id, f.status, f.reason]), [
		["call_3", "error", "invalid_args"], ["call_4", "rejected", "tool_not_allowed"]])
	assert_contains(failed[0].message, "not reachable from area_002")
	assert_eq(seen, [
		["actor_moved", "pc_001", "area_001", "area_002"],
		["hp_changed", "pc_002", 10, 0],
		["actor_state_changed", "pc_002", "alive", "dying"],
	])
	# The dying actor as turn actor: only healing itself.
	out = c.call_tools([
		{"id": "a", "tool": "move_options", "args": {}},
		{"id": "b", "tool": "hp_delta", "args": {"target_character_id": "pc_002", "delta": 2, "cause": "potion"}},
		{"id": "c", "tool": "hp_delta", "args": {"target_character_id": "pc_002", "delta": 2.5, "cause": "potion"}},
	], "pc_002")
	assert_eq(out.tool_feedback.failed_calls.map(func(f): return [f.id, f.reason]),
		[["a", "actor_state_restricted"], ["c", "invalid_args"]])
	assert_eq(c.get_actor("pc_002").hp, 2)
	assert_eq(c.get_actor("pc_002").character_state, "alive")
	# Nothing failed: tool_feedback is null.
	out = c.call_tools([{"tool": "move_options", "args": {"actor_id": "pc_002"}}])
	assert_eq(out.tool_feedback, null)
	assert_eq(out.applied_actions[0].result.options, [{"to_area_id": "area_002", "name": "Side Room"}])
	assert_eq(c.get_action_log().size(), 4)
	# A batch that cannot run at all.
	out = c.call_tools([{"args": {}}])
	assert_contains(out.error, "call [0]: no tool name")
	out = c.call_tools([], "npc_9")
	assert_contains(out.error, "turn actor 'npc_9' is not in the party")
	assert_contains(c.get_last_error(), "npc_9")


func test_map_generate_matches_the_conformance_vector() -> void:
	var c := _fresh()
	var out := c.call_tools([{"tool": "map_generate", "args": {"parent_area_id": null, "theme": "Forest",
		"constraints": {"size": 4, "seed": "alpha"}}}])
	assert_eq(out.applied_actions[0].result.created_area_ids, ["area_003", "area_004", "area_005", "area_006"])
	assert_eq(out.applied_actions[0].result.created_connections, 5)
	assert_eq(seen, [["map_generated", ["area_003", "area_004", "area_005", "area_006"], ""]])
	var edges := c.get_connections().filter(func(e): return e.to_area_id >= "area_003")
	assert_eq(edges.map(func(e): return e.from_area_id + ">" + e.to_area_id),
		["area_001>area_003", "area_003>area_004", "area_003>area_006", "area_004>area_005", "area_005>area_006"])
	assert_eq(c.get_area("area_006").name, "Forest Area 04")


func test_files_save_load_and_autosave() -> void:
	var dir := _clean("files")
	var c := _fresh()
	assert_false(c.save_file(), "no path yet")
	assert_contains(c.get_last_error(), "no path")
	assert_true(c.save_file(dir + "/campaign.json"), c.get_last_error())
	assert_eq(c.path, dir + "/campaign.json")
	# Autosave after an applied call.
	c.call_tools([{"tool": "move", "args": {"actor_id": "pc_001", "to_area_id": "area_002"}}])
	var back := Campaign.new()
	assert_true(back.load_file(dir + "/campaign.json"), back.get_last_error())
	assert_eq(back.get_actor("pc_001").position, "area_002")
	assert_eq(back.to_json(), c.to_json())
	# A broken file is refused naming every problem; the campaign stays as it was.
	var broken := FileAccess.open(dir + "/broken.json", FileAccess.WRITE)
	broken.store_string('{"allowlist": 3, "map": {"areas": {"a": {"reachable_area_ids": ["a", "zz"]}}}}')
	broken.close()
	assert_false(back.load_file(dir + "/broken.json"))
	assert_contains(back.get_last_error(), "allowlist: expected an array of strings")
	assert_contains(back.get_last_error(), "area:a:reachable_self_loop")
	assert_contains(back.get_last_error(), "area:a:reachable_missing_target")
	assert_eq(back.get_actor("pc_001").position, "area_002")
	assert_false(back.load_json("not json"))
	assert_contains(back.get_last_error(), "not JSON")


func test_gm_turns_through_a_scripted_agent() -> void:
	var dir := _clean("turns")
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DIR, "turns")
	rt.idle_think_seconds = 1000.0
	add_to_tree(rt)
	var gm := rt.spawn_agent({"name": "Morgana", "role": "game master"})
	var c := _fresh()
	assert_true(c.save_file(dir + "/campaign.json"))
	assert_false(c.take_turn("hello"), "no GM yet")
	assert_contains(c.get_last_error(), "no game master attached")
	assert_false(c.attach_gm(rt, "agent_404"))
	assert_true(c.attach_gm(rt, gm), c.get_last_error())
	assert_eq(c.get_gm_agent_id(), gm)

	assert_true(c.take_turn("Where can I go?"), c.get_last_error())
	assert_false(c.take_turn("again"), "one turn at a time")
	assert_true(c.is_turn_running())
	assert_true(await wait_until(func(): return not c.is_turn_running(), 10.0), "the turn ended")
	var entry: Dictionary = seen[-1][1]
	assert_eq(seen[-1][0], "turn_completed")
	assert_eq(entry.turn_id, "turn_0001")
	assert_eq(entry.applied_actions[0].tool, "move_options")
	assert_contains(entry.assistant_text, "Side Room")
	assert_eq(entry.tool_feedback, null)

	seen = []
	assert_true(c.take_turn("I go to the side room", "pc_002"))
	assert_true(await wait_until(func(): return not c.is_turn_running(), 10.0))
	assert_eq(seen[0], ["actor_moved", "pc_002", "area_001", "area_002"])
	assert_eq(seen[1][0], "turn_completed")
	assert_eq(seen[1][1].turn_id, "turn_0002")
	assert_eq(seen[1][1].actor_id, "pc_002")
	assert_eq(c.get_turn_log().size(), 2)
	# Saved, and the turns appended to turn_log.jsonl beside the file.
	var back := Campaign.new()
	assert_true(back.load_file(dir + "/campaign.json"))
	assert_eq(back.get_actor("pc_002").position, "area_002")
	assert_eq(back.get_turn_log().map(func(t): return t.turn_id), ["turn_0001", "turn_0002"])
	# Bad turn actors are refused before anything starts.
	assert_false(c.take_turn("hi", "npc_1"))
	assert_contains(c.get_last_error(), "not in the party")


func test_a_turn_can_be_awaited_and_a_refused_one_resolves_too() -> void:
	var dir := _clean("awaited")
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DIR, "awaited")
	rt.idle_think_seconds = 1000.0
	add_to_tree(rt)
	var gm := rt.spawn_agent({"name": "Morgana", "role": "game master"})
	var c := _fresh()
	assert_true(c.save_file(dir + "/campaign.json"))
	var refused: Dictionary = await c.turn("hello")
	assert_false(refused.ok)
	assert_eq(refused.error.code, "turn_refused")
	assert_contains(refused.error.message, "no game master attached")
	assert_true(c.attach_gm(rt, gm), c.get_last_error())
	var result: Dictionary = await c.turn("Where can I go?")
	assert_true(result.ok, str(result))
	assert_eq(result.error, {})
	assert_eq(result.entry.turn_id, "turn_0001")
	assert_contains(result.entry.assistant_text, "Side Room")
	# The object form: polled, then the same result.
	var op: AgentOperation = c.turn_async("I go to the side room", "pc_002")
	assert_false(op.is_finished())
	var busy: Dictionary = await c.turn("again")
	assert_eq(busy.error.code, "turn_refused", "one turn at a time")
	var done: Dictionary = await op.finished
	assert_true(done.ok, str(done))
	assert_eq(op.get_result().entry.actor_id, "pc_002")
	# A GM whose runtime stopped: the awaited turn fails, never hangs.
	rt.stop()
	var stopped: Dictionary = await c.turn("Anyone there?")
	assert_false(stopped.ok)
	assert_eq(stopped.error.code, "turn_refused")
