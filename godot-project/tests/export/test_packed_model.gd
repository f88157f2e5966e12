## A `local` model inside an exported game's pack. Run from a real export of this project
## (`cargo xtask test` exports it with `--export-pack`, Gemma 3 270M at res://models/npc.gguf,
## and runs this suite from the pack with a fresh user folder): llama.cpp cannot open a file
## inside the pack, so the model is copied once to user://models/packed/ — agents wait for it
## and report its progress — and used from there afterwards.
extends "res://tests/test_base.gd"

const MODEL := "res://models/npc.gguf"
const COPY := "user://models/packed/models/npc.gguf"
const DB_DIR := "user://test_packed_model"

var events: Array = []


func _init() -> void:
	test_timeout_seconds = 300.0


func _note(event: Array) -> void:
	events.append(event)


func _brain(model: String) -> AgentBrain:
	var brain := AgentBrain.new()
	brain.provider = "local"
	brain.model = model
	brain.threads = 2
	brain.sequences = 2
	brain.context_size = 3072
	brain.max_tokens = 64
	return brain


func _runtime(name: String) -> AgentRuntime:
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, name)
	rt.idle_think_seconds = 1000.0
	rt.speaking_seconds = 0.05
	rt.agent_error.connect(func(id, code, message): _note(["error", id, code, message]))
	rt.agent_replied.connect(func(id, _ids, reply): _note(["replied", id, reply]))
	rt.model_download_progress.connect(func(id, url, received, total): _note(["progress", id, url, received, total]))
	add_to_tree(rt)
	return rt


func _spawn(rt: AgentRuntime, agent_name: String, brain: AgentBrain) -> String:
	var config := AgentConfig.new()
	config.name = agent_name
	config.role = "the baker"
	config.brain_config = brain
	return rt.spawn_agent(config)


func test_the_project_runs_from_an_exported_pack() -> void:
	assert_true(FileAccess.file_exists(MODEL), "the model is in the pack")
	var global := ProjectSettings.globalize_path(MODEL)
	assert_false(FileAccess.file_exists(global) and global.is_absolute_path(),
		"res:// is no folder on disk here: %s" % global)
	assert_false(FileAccess.file_exists(COPY), "the user folder is fresh")


func test_a_model_in_the_pack_is_copied_once_with_progress() -> void:
	events = []
	var rt := _runtime("first")
	var ids: Array[String] = []
	for agent_name in ["Mira", "Tomas"]:
		var id := _spawn(rt, agent_name, _brain(MODEL))
		assert_false(id.is_empty(), rt.get_last_error())
		ids.append(id)
	for id in ids:
		assert_true(rt.send_message(id, "Good morning! Is there fresh bread today?"))
	# How long the copy takes, in time and frames (docs/benchmarks.md).
	var started := Time.get_ticks_usec()
	var first_frame := Engine.get_process_frames()
	assert_true(await wait_until(func(): return FileAccess.file_exists(COPY), 120.0), "copied")
	print("    the copy of %d MB took %.2f s over %d frames" % [
		FileAccess.get_file_as_bytes(MODEL).size() >> 20, (Time.get_ticks_usec() - started) / 1e6,
		Engine.get_process_frames() - first_frame])
	var replied := func() -> bool:
		return ids.all(func(id): return events.any(func(e): return e[0] == "replied" and e[1] == id))
	assert_true(await wait_until(replied, 240.0), "both agents decided: %s" % [events])
	var size := FileAccess.get_file_as_bytes(MODEL).size()
	for id in ids:
		var reports := events.filter(func(e): return e[0] == "progress" and e[1] == id)
		assert_false(reports.is_empty(), "%s reported the copy" % id)
		if reports.is_empty():
			continue
		assert_eq(reports[-1][2], MODEL, "named by its res:// path")
		assert_eq(reports[-1][3], size, "the last report is the whole file")
		assert_eq(reports[-1][4], size)
	for e in events:
		# What the world refuses (acting while speaking, a task that is not open) is the game's
		# answer to a decision; no brain error (a failed copy, a failed model) may occur.
		if e[0] == "error":
			assert_false(String(e[2]).begins_with("brain_"), "no brain error: %s" % [e])
		if e[0] == "replied":
			assert_eq(e[2]["error"], {}, "decided: %s" % [e])
	assert_true(FileAccess.file_exists(COPY), "the copy is in the user folder")
	assert_eq(FileAccess.get_file_as_bytes(COPY), FileAccess.get_file_as_bytes(MODEL),
		"the copy is the file")
	assert_false(FileAccess.file_exists(COPY + ".partial"), "nothing half-written is left")
	for id in ids:
		var trace := rt.get_agent_trace(id)
		assert_false(trace.is_empty())
		if not trace.is_empty():
			assert_eq(trace[0]["model"], ProjectSettings.globalize_path(COPY), "the copy was loaded")


func test_the_copy_is_used_afterwards_without_copying_again() -> void:
	assert_true(FileAccess.file_exists(COPY), "the first test made the copy")
	var modified := FileAccess.get_modified_time(COPY)
	events = []
	var rt := _runtime("second")
	var id := _spawn(rt, "Ilse", _brain(MODEL))
	assert_false(id.is_empty(), rt.get_last_error())
	assert_true(rt.send_message(id, "Is the market open tomorrow?"))
	var replied := func() -> bool: return events.any(func(e): return e[0] == "replied")
	assert_true(await wait_until(replied, 240.0), "the agent decided: %s" % [events])
	assert_false(events.any(func(e): return e[0] == "progress"), "no copy this time: %s" % [events])
	assert_eq(FileAccess.get_modified_time(COPY), modified, "the copy was not written again")


func test_a_model_missing_from_the_pack_is_refused_at_spawn() -> void:
	var rt := _runtime("missing")
	var id := _spawn(rt, "Bram", _brain("res://models/missing.gguf"))
	assert_true(id.is_empty(), "spawn refused")
	assert_contains(rt.get_last_error(), "res://models/missing.gguf")
	assert_contains(rt.get_last_error(), "does not exist")


## Last: the game ends while a model is deciding. The runtime shuts down with its node, and
## the extension waits for the model's thread to finish its decode step before Godot unloads
## the library (a crash at exit otherwise; the runner's exit code tells).
func test_the_game_ends_cleanly_while_a_model_decides() -> void:
	events = []
	var rt := _runtime("ending")
	var id := _spawn(rt, "Rosa", _brain(MODEL))
	assert_false(id.is_empty(), rt.get_last_error())
	assert_true(rt.send_message(id, "Tell me a long story about the mill."))
	var thinking := func() -> bool: return rt.get_agent_state(id).state == "thinking"
	assert_true(await wait_until(thinking, 30.0), "the agent is deciding")
	await tree.create_timer(0.5).timeout
	assert_true(events.all(func(e): return e[0] != "replied"), "still deciding when the test ends")
