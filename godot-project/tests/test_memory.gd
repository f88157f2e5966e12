## Agents remember, in the real Godot: an AgentNode's agent told something answers from memory
## after small talk (the scripted brain), memories are planted, recalled, paged and forgotten
## from GDScript, signals report what is remembered, the game clock is set and read, and an
## AgentMemory resource configures it all. Bad input is an error with a code, never a crash.
extends "res://tests/test_base.gd"

const DB_DIR := "user://test_memory"


## An AgentRuntime on `db` with short timings (not added to the tree).
func _runtime(db: String) -> AgentRuntime:
	var rt := AgentRuntime.new()
	rt.database_path = db
	rt.idle_think_seconds = 60.0
	rt.thinking_seconds = 0.05
	rt.speaking_seconds = 0.05
	return rt


## A character carrying an AgentNode for a baker who speaks only when spoken to.
func _baker() -> Node2D:
	var body := Node2D.new()
	body.name = "Mira"
	var agent := AgentNode.new()
	agent.name = "AgentNode"
	var config := AgentConfig.new()
	config.name = "Mira"
	config.role = "baker"
	config.autonomous = false
	agent.config = config
	body.add_child(agent)
	return body


func test_told_something_the_baker_answers_from_memory_after_small_talk() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "told"))
	var baker := _baker()
	rt.add_child(baker)
	add_to_tree(rt)
	var agent := baker.get_node("AgentNode") as AgentNode
	assert_true(await wait_until(func(): return agent.is_spawned(), 5.0), "spawned")
	var remembered := []
	agent.remembered.connect(func(memory): remembered.append(memory))
	var runtime_remembered := []
	rt.agent_remembered.connect(func(id, memory): runtime_remembered.append([id, memory]))
	await agent.ask("The cellar key is under the mat.")
	for line in ["Lovely weather today.", "How is the bread?", "The festival starts soon."]:
		await agent.ask(line)
	var reply: Dictionary = await agent.ask("Where is the cellar key?")
	assert_eq(reply.text, "You told me: “The cellar key is under the mat.”")
	# Every line heard and said became a memory, reported by both signals.
	assert_true(await wait_until(func(): return remembered.size() == 10, 5.0), "10 memories: %s" % [remembered])
	assert_has_keys(remembered[0], ["memory_id", "kind", "text", "importance", "game_time"])
	assert_eq(remembered[0].kind, AgentConstants.MEMORY_HEARD)
	assert_eq(remembered[0].text, "player_0 said to me: \"The cellar key is under the mat.\"")
	assert_eq(remembered[1].kind, AgentConstants.MEMORY_SAID)
	assert_eq(runtime_remembered.size(), 10)
	assert_eq(runtime_remembered[0][0], agent.get_agent_id())
	# The decision that answered says what it recalled, and why.
	var decisions: Array = rt.get_recent_decisions(agent.get_agent_id())
	var recalled: Array = decisions[-1].recalled
	var told := recalled.filter(func(r): return r.memory.text.contains("under the mat"))
	assert_eq(told.size(), 1, str(recalled))
	assert_eq(told[0].relevance, 1.0)
	assert_has_keys(told[0], ["memory", "score", "recency", "importance", "in_view"])


func test_an_agent_reflects_and_both_signals_report_it() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "reflect"))
	var baker := _baker()
	var memory := AgentMemory.new()
	memory.reflection_threshold = 12
	var agent := baker.get_node("AgentNode") as AgentNode
	agent.config.memory = memory
	rt.add_child(baker)
	add_to_tree(rt)
	assert_true(await wait_until(func(): return agent.is_spawned(), 5.0), "spawned")
	var reflected := []
	agent.reflected.connect(func(memories, drawn_by): reflected.append([memories, drawn_by]))
	var runtime_reflected := []
	rt.agent_reflected.connect(func(id, memories, drawn_by): runtime_reflected.append(id))
	for line in ["The lanterns are in the mill.", "Bring the lanterns at dusk.", "The lanterns need candles."]:
		await agent.ask(line)
	assert_true(await wait_until(func(): return reflected.size() >= 1, 5.0), "reflected")
	var drawn: Array = reflected[0][0]
	assert_eq(reflected[0][1], "rules")
	assert_eq(runtime_reflected[0], agent.get_agent_id())
	assert_has_keys(drawn[0], ["memory_id", "kind", "text", "about", "sources"])
	var thoughts := drawn.filter(func(m): return m.kind == AgentConstants.MEMORY_RELATIONSHIP)
	assert_eq(thoughts.size(), 1, str(drawn))
	assert_eq(thoughts[0].about, "player_0")
	assert_contains(thoughts[0].text, "lanterns")
	assert_true(thoughts[0].sources.size() >= 2, str(thoughts[0]))
	# Stored like any memory.
	var stream: Array = rt.get_memories(agent.get_agent_id(), 50)
	assert_true(stream.any(func(m): return m.id == thoughts[0].memory_id), "stored")


func test_memories_are_planted_recalled_paged_and_forgotten() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "plant"))
	var memory := AgentMemory.new()
	memory.recall_limit = 3
	memory.relevance_weight = 2.0
	rt.memory = memory
	rt.game_time_scale = 60.0
	add_to_tree(rt)
	var id: String = rt.spawn_agent({"name": "Mira", "autonomous": false})
	assert_ne(id, "", rt.get_last_error())
	assert_true(rt.set_game_time(86400.0), "a day in")
	var time_now := rt.get_game_time()
	assert_true(time_now >= 86400.0 and time_now < 86400.0 + 60.0, str(time_now))
	var first: int = rt.remember(id, "The cellar key is under the mat.")
	assert_true(first > 0, rt.get_last_error())
	var moved: int = rt.remember(id, "Tom moved the cellar key to the shelf.", AgentConstants.MEMORY_OBSERVED, 9, "agent_002", PackedInt64Array([first]))
	assert_true(moved > first, rt.get_last_error())
	for i in 4:
		rt.remember(id, "Bread day %d went well." % i)
	var found: Array = rt.recall(id, "Where is the cellar key?", 2)
	assert_eq(found.size(), 2)
	assert_eq(found[0].memory.id, moved)
	assert_eq(found[0].memory.kind, "observed")
	assert_eq(found[0].memory.importance, 9)
	assert_eq(found[0].memory.about, "agent_002")
	assert_true(found[0].memory.game_time >= 86400.0, str(found[0]))
	var page: Array = rt.get_memories(id, 4)
	assert_eq(page.size(), 4)
	var older: Array = rt.get_memories(id, 10, page[0].id)
	assert_eq(older.map(func(m): return m.id), [first, moved])
	assert_eq(older[0].superseded_by, moved)
	assert_true(rt.forget_memory(id, first))
	assert_false(rt.forget_memory(id, first), "forgotten already")
	assert_eq(rt.get_last_error_code(), AgentConstants.ERROR_UNKNOWN_MEMORY)
	# Bad input: a code and a reason, nothing stored.
	assert_eq(rt.remember(id, ""), 0)
	assert_eq(rt.get_last_error_code(), AgentConstants.ERROR_INVALID_MESSAGE)
	assert_eq(rt.remember(id, "x", "gossip"), 0)
	assert_contains(rt.get_last_error(), "unknown memory kind 'gossip'")
	assert_eq(rt.remember(id, "x", "fact", 300), 0)
	assert_contains(rt.get_last_error(), "importance must be 1 to 10")
	assert_eq(rt.remember("agent_404", "x"), 0)
	assert_eq(rt.get_last_error_code(), AgentConstants.ERROR_UNKNOWN_AGENT)
	assert_eq(rt.recall("agent_404", "x"), [])
	assert_false(rt.set_game_time(NAN))
	assert_eq(rt.get_memories(id, 50).size(), 5)


func test_an_agent_with_memory_off_keeps_only_what_is_planted() -> void:
	var rt := _runtime(fresh_db(DB_DIR, "off"))
	var baker := _baker()
	var memory := AgentMemory.new()
	memory.enabled = false
	var node := baker.get_node("AgentNode") as AgentNode
	node.config.memory = memory
	rt.add_child(baker)
	add_to_tree(rt)
	assert_true(await wait_until(func(): return node.is_spawned(), 5.0), "spawned")
	assert_eq(node.config.to_dictionary().memory.enabled, false)
	await node.ask("The cellar key is under the mat.")
	assert_eq(node.get_memories(), [])
	var id := node.remember("The mill burned down.", "event", 8)
	assert_true(id > 0, node.get_last_error())
	assert_eq(node.get_memories().size(), 1)
	assert_eq(node.recall("mill")[0].memory.id, id)
	assert_true(node.forget_memory(id))
	assert_false(node.forget_memory(id))
	assert_eq(node.get_last_error_code(), AgentConstants.ERROR_UNKNOWN_MEMORY)


## A database_path that names a file the game keeps for something else (a save file) is refused
## before anything writes to it: start fails naming what was found, and the file is untouched.
func test_a_file_that_is_not_an_agents_database_is_refused_untouched() -> void:
	var dir := fresh_db(DB_DIR, "foreign").get_base_dir()
	DirAccess.make_dir_recursive_absolute(dir)
	var save := dir.path_join("save.json")
	var file := FileAccess.open(save, FileAccess.WRITE)
	file.store_string('{"level": 3, "gold": 120}')
	file.close()
	var before := FileAccess.get_file_as_bytes(save)
	var rt := AgentRuntime.new()
	rt.database_path = save
	rt.autostart = false
	add_to_tree(rt)
	assert_false(rt.start(), "start fails")
	assert_true(rt.get_last_error().contains("not an agents database"), rt.get_last_error())
	assert_true(rt.get_last_error().contains("nothing was changed"), rt.get_last_error())
	assert_false(rt.is_running())
	assert_eq(FileAccess.get_file_as_bytes(save), before, "the file is untouched")
	assert_false(FileAccess.file_exists(save + "-wal"), "no -wal beside it")
	assert_false(FileAccess.file_exists(save + "-shm"), "no -shm beside it")
