## What an on-device model costs the game's frames: `cargo xtask bench --only-nodes` runs it
## headless on a release build of the extension with a small model file: `godot --headless
## --path <project> --script res://bench/model_frame_bench.gd -- --model <file.gguf> [--npcs 8
## --seconds 20]`.
##
## Frames are paced as a game's (a 16.7 ms sleep after each). Each frame it samples the
## runtime's own measurement of its main-thread work (`get_last_frame_drain_cpu_usec()`: the step
## of a model's copy out of the pack, the position sync, the drain of events into signals) and
## the time since the frame before. N NPCs (default 8: a Node2D each, walking a little every
## frame, with an AgentNode) go through four phases:
##
## 1. `idle`: on the scripted brain, nobody asked: the frames' pace without a model.
## 2. `copy`: the model, packed into a resource pack (PCKPacker) the bench loads, is named by the
##    NPCs' `local` brain as `res://bench_model/model.gguf`: the runtime copies it out of the
##    pack into the user folder, a slice of each frame, until the copy is complete.
## 3. `load`: every NPC is asked at once: the model loads, reads the prompts, until the first
##    streamed text arrives.
## 4. `stream`: every NPC is asked again as soon as it answers, for S seconds (`--seconds`):
##    answers generated and streamed together, text arriving every frame.
##
## Prints, for each phase, `MODEL_FRAMES phase=… frames=… work_p50_us=… work_p99_us=…
## work_max_us=… interval_p50_ms=… interval_p99_ms=… interval_max_ms=… late=…`: `late` counts
## the frames more than 2 ms slower than the idle phase's median frame. Exits 0, or 1 when
## something went missing.
extends SceneTree

const DB := "user://bench_model_frames.db"
const PACK := "user://bench_model.pck"
const PACKED_MODEL := "res://bench_model/model.gguf"
const COPY := "user://models/packed/bench_model/model.gguf"

var failed := false
var idle_median_ms := 0.0


func _initialize() -> void:
	OS.low_processor_usage_mode = false
	OS.low_processor_usage_mode_sleep_usec = 16667
	for path in [DB, DB + "-wal", DB + "-shm", PACK, COPY]:
		var file := ProjectSettings.globalize_path(path)
		if FileAccess.file_exists(file):
			DirAccess.remove_absolute(file)
	var model := _arg("--model", "")
	if model.is_empty() or not FileAccess.file_exists(model):
		printerr("--model names no file: '%s'" % model)
		quit(1)
		return
	var npcs := int(_arg("--npcs", "8"))
	var seconds := int(_arg("--seconds", "20"))
	if not _pack(model):
		quit(1)
		return
	await _run(npcs, seconds)
	quit(1 if failed else 0)


func _arg(name: String, default: String) -> String:
	var args := OS.get_cmdline_user_args()
	var at := args.find(name)
	return args[at + 1] if at >= 0 and at + 1 < args.size() else default


## Packs `model` into a resource pack at `PACKED_MODEL` and loads the pack.
func _pack(model: String) -> bool:
	var pack := ProjectSettings.globalize_path(PACK)
	var packer := PCKPacker.new()
	var ok := packer.pck_start(pack) == OK
	ok = ok and packer.add_file(PACKED_MODEL, model) == OK
	ok = ok and packer.flush() == OK
	ok = ok and ProjectSettings.load_resource_pack(pack)
	if not ok or not FileAccess.file_exists(PACKED_MODEL):
		printerr("cannot pack %s into %s" % [model, PACK])
		return false
	return true


func _brain(local: bool) -> AgentBrain:
	var brain := AgentBrain.new()
	if not local:
		brain.provider = "scripted"
		return brain
	brain.provider = "local"
	brain.model = PACKED_MODEL
	brain.sequences = 8
	brain.context_size = 2048
	brain.max_tokens = 48
	brain.temperature = 0.7
	brain.timeout_seconds = 600.0
	# `threads` is left to its default: the physical cores but one.
	return brain


func _run(npcs: int, seconds: int) -> void:
	var scripted := _runtime()
	var npc := await _spawn(scripted, npcs, false)
	await _sample("idle", npc[0], scripted, func(f): return f >= 300)
	scripted.free()

	# NPCs on the model: the copy out of the pack begins as they spawn.
	var rt := _runtime()
	var streamed := [0]
	rt.agent_speech_delta.connect(func(_id, _delta, _seq): streamed[0] += 1)
	npc = await _spawn(rt, npcs, true)
	var copied := ProjectSettings.globalize_path(COPY)
	var copy_done := func(_f: int) -> bool: return FileAccess.file_exists(copied)
	await _sample("copy", npc[0], rt, copy_done, 120.0)

	var busy := [0]
	var asking := [true]
	for i in npcs:
		_keep_asking(npc[1][i], i, asking, busy)
	var first_text := func(_f: int) -> bool: return streamed[0] > 0
	await _sample("load", npc[0], rt, first_text, 300.0)
	var until := Time.get_ticks_msec() + seconds * 1000
	streamed[0] = 0
	await _sample("stream", npc[0], rt, func(_f): return Time.get_ticks_msec() >= until)
	if streamed[0] == 0:
		printerr("no text was streamed")
		failed = true
	asking[0] = false
	var deadline := Time.get_ticks_msec() + 120000
	while busy[0] > 0 and Time.get_ticks_msec() < deadline:
		await process_frame
	rt.free()


func _runtime() -> AgentRuntime:
	var rt := AgentRuntime.new()
	rt.database_path = DB
	rt.idle_think_seconds = 100000.0
	rt.speaking_seconds = 0.0
	rt.world_bounds = Rect2(0, 0, 2000, 2000)
	rt.agent_error.connect(_on_agent_error)
	root.add_child(rt)
	return rt


func _on_agent_error(id: String, code: String, message: String) -> void:
	printerr("%s: %s %s" % [id, code, message])
	failed = true


## `npcs` NPCs in `rt`, on the model (`local`) or the scripted brain, spawned: `[bodies, agents]`.
func _spawn(rt: AgentRuntime, npcs: int, local: bool) -> Array:
	var bodies: Array[Node2D] = []
	var agents: Array[AgentNode] = []
	for i in npcs:
		var body := Node2D.new()
		body.position = Vector2(40 * i, 40)
		var agent := AgentNode.new()
		var config := AgentConfig.new()
		config.name = "villager %d" % i
		config.role = "villager"
		config.prompt = "You sell bread in a small market town. Keep your lines short."
		config.autonomous = false
		config.use_initial_position = false
		config.brain_config = _brain(local)
		agent.config = config
		agent.key = "%s_%d" % ["model" if local else "scripted", i]
		body.add_child(agent)
		rt.add_child(body)
		bodies.append(body)
		agents.append(agent)
	var deadline := Time.get_ticks_msec() + 30000
	while agents.any(func(a): return not a.is_spawned()):
		if Time.get_ticks_msec() > deadline:
			printerr("the NPCs did not spawn: %s" % rt.get_last_error())
			failed = true
			break
		await process_frame
	return [bodies, agents]


## Asks `agent` again as soon as it answers, while `asking[0]`.
func _keep_asking(agent: AgentNode, i: int, asking: Array, busy: Array) -> void:
	busy[0] += 1
	var n := 0
	while asking[0]:
		var reply: Dictionary = await agent.ask("Good morning! Is there fresh bread today? (%d)" % n)
		n += 1
		if not reply.ok and asking[0]:
			printerr("villager %d: %s" % [i, reply.error])
			failed = true
			break
	busy[0] -= 1


## Samples frames until `done.call(frames)` (or `limit` seconds pass: a failure), and prints them.
func _sample(phase: String, bodies: Array[Node2D], rt: AgentRuntime, done: Callable,
		limit := 60.0) -> void:
	var work := PackedInt64Array()
	var intervals := PackedFloat64Array()
	var last := Time.get_ticks_usec()
	var started := Time.get_ticks_msec()
	var f := 0
	while not done.call(f):
		if Time.get_ticks_msec() - started > limit * 1000.0:
			printerr("phase %s did not end in %d s" % [phase, limit])
			failed = true
			break
		for i in bodies.size():
			bodies[i].position += Vector2(0.5, 0.25) if (f + i) % 2 == 0 else Vector2(-0.5, -0.25)
		await process_frame
		var now := Time.get_ticks_usec()
		intervals.append((now - last) / 1000.0)
		last = now
		work.append(rt.get_last_frame_drain_cpu_usec())
		f += 1
	if work.is_empty():
		printerr("phase %s had no frame" % phase)
		failed = true
		return
	work.sort()
	intervals.sort()
	if phase == "idle":
		idle_median_ms = intervals[intervals.size() / 2]
	var late := 0
	for interval in intervals:
		if interval > idle_median_ms + 2.0:
			late += 1
	print(("MODEL_FRAMES phase=%s frames=%d work_p50_us=%d work_p99_us=%d work_max_us=%d "
			+ "interval_p50_ms=%.2f interval_p99_ms=%.2f interval_max_ms=%.2f late=%d") % [
		phase, work.size(), work[work.size() / 2], work[int(work.size() * 0.99)],
		work[work.size() - 1], intervals[intervals.size() / 2],
		intervals[int(intervals.size() * 0.99)], intervals[intervals.size() - 1], late])
