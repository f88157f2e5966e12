## Main-thread cost of AgentRuntime's event drain: `cargo xtask bench` runs it headless on a
## release build of the extension:
## `godot --headless --path <project> --script res://bench/drain_bench.gd [-- --agents N]`.
##
## Spawns N agents (default 10,000) in one frame with a long idle time (so they stay idle), then
## sums, over the frames that drain them, the node's own measurement of draining the N
## `agent_spawned` events and emitting them to a connected GDScript handler that counts
## (`get_last_frame_drain_usec()`); then the same for N terminations (`agent_removed`). Prints one
## `DRAIN_BENCH signal=… events=… frames=… drain_usec=… per_event_ns=…` line per phase and exits
## with 0 (1 when events went missing).
extends SceneTree

const DB := "user://bench_drain.db"

var counts := {"agent_spawned": 0, "agent_removed": 0, "other": 0}
var failed := false


func _initialize() -> void:
	var n := _agents_wanted()
	for suffix in ["", "-wal", "-shm"]:
		var file := ProjectSettings.globalize_path(DB + suffix)
		if FileAccess.file_exists(file):
			DirAccess.remove_absolute(file)
	var rt := AgentRuntime.new()
	rt.database_path = DB
	rt.idle_think_seconds = 3600.0
	rt.event_queue_capacity = max(65536, 2 * n)
	rt.agent_spawned.connect(func(_id, _n, _r, _p): counts["agent_spawned"] += 1)
	rt.agent_removed.connect(func(_id, _reason): counts["agent_removed"] += 1)
	rt.agent_state_changed.connect(func(_id, _o, _n): counts["other"] += 1)
	rt.agent_error.connect(func(id, code, message):
		counts["other"] += 1
		printerr("agent_error %s %s %s" % [id, code, message]))
	root.add_child(rt)
	await process_frame

	var started := Time.get_ticks_usec()
	var ids := PackedStringArray()
	for i in n:
		ids.append(rt.spawn_agent({"name": "villager %d" % i, "idle_think_seconds": 3600}))
	var spawn_usec := Time.get_ticks_usec() - started
	print("DRAIN_BENCH spawn agents=%d spawn_call_usec=%d per_spawn_us=%.1f" % [
		n, spawn_usec, float(spawn_usec) / n])
	if ids.has(""):
		printerr("spawning failed: %s" % rt.get_last_error())
		failed = true
	await _measure(rt, "agent_spawned", n)

	started = Time.get_ticks_usec()
	for id in ids:
		rt.terminate_agent(id)
	print("DRAIN_BENCH terminate agents=%d terminate_call_usec=%d" % [n, Time.get_ticks_usec() - started])
	await _measure(rt, "agent_removed", n)

	rt.free()
	print("DRAIN_BENCH done other_events=%d" % counts["other"])
	quit(1 if failed else 0)


## Sums the node's per-frame drain measurements until `n` events of `kind` were handled.
func _measure(rt: AgentRuntime, kind: String, n: int) -> void:
	var events := 0
	var usec := 0
	var frames := 0
	var busiest := 0
	var deadline := Time.get_ticks_msec() + 120000
	while counts[kind] < n and Time.get_ticks_msec() < deadline:
		await process_frame
		# process_frame comes before the nodes process: these are the previous frame's numbers.
		var frame_events := rt.get_last_frame_event_count()
		if frame_events > 0:
			events += frame_events
			usec += rt.get_last_frame_drain_usec()
			frames += 1
			busiest = max(busiest, frame_events)
	await process_frame
	var frame_events := rt.get_last_frame_event_count()
	if frame_events > 0:
		events += frame_events
		usec += rt.get_last_frame_drain_usec()
		frames += 1
	if counts[kind] < n:
		printerr("only %d of %d %s events arrived" % [counts[kind], n, kind])
		failed = true
	print("DRAIN_BENCH signal=%s events=%d frames=%d busiest_frame_events=%d drain_usec=%d per_event_ns=%d" % [
		kind, events, frames, busiest, usec, (usec * 1000) / max(events, 1)])


func _agents_wanted() -> int:
	var args := OS.get_cmdline_user_args()
	var i := args.find("--agents")
	if i >= 0 and i + 1 < args.size() and args[i + 1].is_valid_int():
		return max(1, int(args[i + 1]))
	return 10000
