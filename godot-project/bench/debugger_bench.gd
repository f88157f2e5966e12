## Main-thread cost of the Agents debugger's reporting: `cargo xtask bench --only-debugger` runs
## it on a release build of the extension, once on its own and once with `--remote-debug` to a
## debug server (xtask's stand-in for the editor, which reads everything the game sends):
## `godot --headless --path <project> --script res://bench/debugger_bench.gd [-- --agents N]`.
##
## Spawns N agents (default 1,000; scripted, thinking every 5 s, so the list keeps changing),
## waits 3 s, then for 10 s records every frame's `get_last_frame_debugger_usec()` (what the
## runtime spent on the debugger: checking for a session, obeying the tab, handing reports to
## `EngineDebugger`). Prints `DEBUGGER_BENCH session=… agents=… frames=… mean_usec=… p50_usec=…
## p99_usec=… max_usec=…` and exits with 0.
extends SceneTree

const DB := "user://bench_debugger.db"
const WARMUP_SECONDS := 3.0
const MEASURE_SECONDS := 10.0


func _initialize() -> void:
	var n := 1000
	var args := OS.get_cmdline_user_args()
	var i := args.find("--agents")
	if i >= 0 and i + 1 < args.size():
		n = int(args[i + 1])
	for suffix in ["", "-wal", "-shm"]:
		var file := ProjectSettings.globalize_path(DB + suffix)
		if FileAccess.file_exists(file):
			DirAccess.remove_absolute(file)
	var rt := AgentRuntime.new()
	rt.database_path = DB
	rt.world_bounds = Rect2(0, 0, 1000, 1000)
	rt.event_queue_capacity = 262144
	root.add_child(rt)
	await process_frame
	var rng := RandomNumberGenerator.new()
	rng.seed = 7
	for k in n:
		rt.spawn_agent({"name": "Villager %d" % k, "role": "villager",
			"initial_position": Vector2(rng.randf_range(0, 1000), rng.randf_range(0, 1000))})
	var session: bool = EngineDebugger.is_active()
	var start := Time.get_ticks_msec()
	while Time.get_ticks_msec() - start < WARMUP_SECONDS * 1000.0:
		await process_frame
	var samples := PackedInt64Array()
	start = Time.get_ticks_msec()
	while Time.get_ticks_msec() - start < MEASURE_SECONDS * 1000.0:
		await process_frame
		samples.append(rt.get_last_frame_debugger_usec())
	samples.sort()
	var total := 0
	for s in samples:
		total += s
	var count := samples.size()
	print("DEBUGGER_BENCH session=%s agents=%d frames=%d mean_usec=%.1f p50_usec=%d p99_usec=%d max_usec=%d" % [
		session, rt.list_agents().size(), count, float(total) / max(count, 1),
		samples[count / 2], samples[int(count * 0.99)], samples[count - 1]])
	rt.stop()
	quit(0)
