## AgentNode's costs: `cargo xtask bench --only-nodes` runs it headless on a release build of
## the extension: `godot --headless --path <project> --script res://bench/node_bench.gd
## [-- --npcs N --frames F --seconds S --asks A]`.
##
## 1. N NPCs (default 500): a Node2D each, walking a little every frame, with an AgentNode
##    whose agent runs the scripted brain (autonomous, deciding every 2 s). Over at least F
##    frames and S seconds (`--frames`, default 600; `--seconds`, default 10) it samples the runtime's own measurement of its main-thread work per frame
##    — the position sync of every body that moved plus the drain of the frame's events into
##    the runtime's and the nodes' signals (`get_last_frame_drain_cpu_usec()`) — and prints
##    `NODE_BENCH frame npcs=… frames=… p50_us=… p99_us=… max_us=… events=…`.
## 2. One AgentNode whose scripted brain thinks and speaks in 0 s: A asks (default 200) awaited
##    one after the other; prints `NODE_BENCH ask asks=… p50_ms=… p99_ms=… frames=…` (the round
##    trip: the line stored, the agent's decision, its reply drained at the next frame, matched,
##    and the awaiting code resumed at the end of that frame; `frames`: frames per ask, p50).
##    Then the same pipeline without a frame: A asks drained on demand (`drain_events()`) until
##    each is matched: `NODE_BENCH ask_polled asks=… p50_ms=… p99_ms=…`.
## Phase 1 runs twice: at a game's pace (a 16.7 ms sleep between frames, `pace=paced_60fps`) and
## back to back (`pace=back_to_back`). The asks run back to back, so the round trip is not a
## frame sleep.
## Exits 0, or 1 when something went missing.
extends SceneTree

const DB := "user://bench_nodes.db"

var failed := false


func _initialize() -> void:
	# Headless Godot sleeps between frames (`low_processor_usage_mode_sleep_usec`): each phase
	# sets its pace.
	OS.low_processor_usage_mode = false
	for suffix in ["", "-wal", "-shm"]:
		var file := ProjectSettings.globalize_path(DB + suffix)
		if FileAccess.file_exists(file):
			DirAccess.remove_absolute(file)
	var npcs := _arg("--npcs", 500)
	var frames := _arg("--frames", 600)
	var seconds := _arg("--seconds", 10)
	var asks := _arg("--asks", 200)
	# A game's pace (headless Godot sleeps this long between frames), then back to back.
	OS.low_processor_usage_mode_sleep_usec = 16667
	await _frame_cost(npcs, frames, seconds, "paced_60fps")
	OS.low_processor_usage_mode_sleep_usec = 0
	await _frame_cost(npcs, frames, seconds, "back_to_back")
	await _ask_round_trip(asks)
	# A GDScript tool call: frames back to back, then at a game's 60 fps.
	await _tool_round_trip(asks, "back_to_back")
	OS.low_processor_usage_mode_sleep_usec = 16667
	await _tool_round_trip(asks, "paced_60fps")
	OS.low_processor_usage_mode_sleep_usec = 0
	quit(1 if failed else 0)


func _frame_cost(npcs: int, frames: int, seconds: int, pace: String) -> void:
	var rt := AgentRuntime.new()
	rt.database_path = DB
	rt.idle_think_seconds = 2.0
	rt.world_bounds = Rect2(0, 0, 2000, 2000)
	rt.max_drain_usec_per_frame = 0
	var events := [0]
	rt.agent_state_changed.connect(func(_id, _o, _n): events[0] += 1)
	var bodies: Array[Node2D] = []
	for i in npcs:
		var body := Node2D.new()
		body.position = Vector2(40 * (i % 40), 40 * (i / 40))
		var agent := AgentNode.new()
		var config := AgentConfig.new()
		config.name = "villager %d" % i
		config.role = "villager"
		config.use_initial_position = false
		agent.config = config
		agent.key = "villager_%d" % i
		agent.sync_position = _arg("--no-sync", 0) == 0
		agent.spoke.connect(func(_text, _to, _kind): events[0] += 1)
		body.add_child(agent)
		rt.add_child(body)
		bodies.append(body)
	root.add_child(rt)
	var spawned := func() -> bool:
		for body in bodies:
			if not (body.get_child(0) as AgentNode).is_spawned():
				return false
		return true
	var deadline := Time.get_ticks_msec() + 30000
	while not spawned.call():
		if Time.get_ticks_msec() > deadline:
			printerr("the NPCs did not spawn: %s" % rt.get_last_error())
			failed = true
			rt.free()
			return
		await process_frame
	await process_frame
	events[0] = 0
	var samples := PackedInt64Array()
	var until := Time.get_ticks_msec() + seconds * 1000
	var f := 0
	while f < frames or Time.get_ticks_msec() < until:
		for i in bodies.size():
			bodies[i].position += Vector2(0.5, 0.25) if (f + i) % 2 == 0 else Vector2(-0.5, -0.25)
		await process_frame
		samples.append(rt.get_last_frame_drain_cpu_usec())
		f += 1
	samples.sort()
	print("NODE_BENCH frame pace=%s npcs=%d frames=%d p50_us=%d p99_us=%d max_us=%d events=%d" % [
		pace, npcs, samples.size(), samples[samples.size() / 2], samples[int(samples.size() * 0.99)],
		samples[samples.size() - 1], events[0]])
	if events[0] == 0:
		printerr("no agent decided during the frames")
		failed = true
	rt.free()


func _ask_round_trip(asks: int) -> void:
	var rt := AgentRuntime.new()
	rt.database_path = DB
	rt.idle_think_seconds = 3600.0
	rt.thinking_seconds = 0.0
	rt.speaking_seconds = 0.0
	var body := Node2D.new()
	var agent := AgentNode.new()
	var config := AgentConfig.new()
	config.name = "Mira"
	config.role = "baker"
	config.autonomous = false
	agent.config = config
	body.add_child(agent)
	rt.add_child(body)
	root.add_child(rt)
	while not agent.is_spawned():
		await process_frame
	var times := PackedFloat64Array()
	var frame_counts := PackedInt64Array()
	for i in asks:
		var started := Time.get_ticks_usec()
		var first_frame := Engine.get_process_frames()
		var reply: Dictionary = await agent.ask("Is the bread ready? (%d)" % i)
		times.append((Time.get_ticks_usec() - started) / 1000.0)
		frame_counts.append(Engine.get_process_frames() - first_frame)
		if not reply.ok:
			printerr("ask %d failed: %s" % [i, reply.error])
			failed = true
			break
	# The pipeline alone, without waiting for a frame: drain on demand until the reply is
	# matched (`is_finished()` is true as soon as it is; `finished` follows at the frame's end).
	var polled := PackedFloat64Array()
	for i in asks:
		var started := Time.get_ticks_usec()
		var pending := agent.ask_async("And the rye? (%d)" % i)
		while not pending.is_finished():
			rt.drain_events()
		polled.append((Time.get_ticks_usec() - started) / 1000.0)
		if not pending.get_reply().ok:
			printerr("polled ask %d failed: %s" % [i, pending.get_reply().error])
			failed = true
			break
	polled.sort()
	print("NODE_BENCH ask_polled asks=%d p50_ms=%.3f p99_ms=%.3f" % [
		polled.size(), polled[polled.size() / 2], polled[int(polled.size() * 0.99)]])
	times.sort()
	frame_counts.sort()
	print("NODE_BENCH ask asks=%d p50_ms=%.2f p99_ms=%.2f frames=%d" % [
		times.size(), times[times.size() / 2], times[int(times.size() * 0.99)],
		frame_counts[frame_counts.size() / 2]])
	rt.free()


## `calls` GDScript tool calls, one per ask, each timed by the runtime from the agent's call to
## the answer back on its side (`get_last_tool_call_usec()`): the hop to the main thread (the
## next frame), the Callable, the result back. Prints `NODE_BENCH tool pace=… calls=… p50_us=…
## p99_us=…`.
func _tool_round_trip(calls: int, pace: String) -> void:
	# An agent's scripted replies are at most 100.
	calls = mini(calls, 100)
	var rt := AgentRuntime.new()
	rt.database_path = DB
	rt.idle_think_seconds = 3600.0
	rt.thinking_seconds = 0.0
	rt.speaking_seconds = 0.0
	rt.register_tool("bench", "ping", "Answers pong.", {"n": "int"},
			func(args): return {"pong": args.n})
	var body := Node2D.new()
	var agent := AgentNode.new()
	var config := AgentConfig.new()
	config.name = "Pinger"
	config.autonomous = false
	config.tool_sets = ["world", "bench"]
	var replies: Array[Dictionary] = []
	for i in calls:
		replies.append({"assistant_text": "", "tool_calls": [
			{"id": "c%d" % i, "tool": "ping", "args": {"n": i}}]})
	config.scripted_replies = replies
	agent.config = config
	body.add_child(agent)
	rt.add_child(body)
	root.add_child(rt)
	while not agent.is_spawned():
		if agent.get_last_error() != "":
			printerr("the pinger did not spawn: %s" % agent.get_last_error())
			failed = true
			rt.free()
			return
		await process_frame
	var times := PackedInt64Array()
	for i in calls:
		var reply: Dictionary = await agent.ask("Ping %d" % i)
		if not reply.ok or reply.actions.is_empty() or reply.actions[0].outcome != "done":
			printerr("tool call %d failed: %s" % [i, reply])
			failed = true
			break
		times.append(rt.get_last_tool_call_usec())
	times.sort()
	if times.size() > 0:
		print("NODE_BENCH tool pace=%s calls=%d p50_us=%d p99_us=%d" % [
			pace, times.size(), times[times.size() / 2], times[int(times.size() * 0.99)]])
	rt.free()


## The integer user argument `--name N` (after `--`), or `default`.
func _arg(name: String, default: int) -> int:
	var args := OS.get_cmdline_user_args()
	var i := args.find(name)
	return int(args[i + 1]) if i >= 0 and i + 1 < args.size() else default
