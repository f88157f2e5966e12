## Main-thread cost of AgentRuntime's per-frame drain while many agents stream model answers:
## `cargo xtask bench` starts the fake provider (`fakellm`, answering every request with a
## streamed line in small pieces) and runs this headless on a release build of the extension:
## `godot --headless --path <project> --script res://bench/stream_bench.gd [-- --merge-deltas]`,
## with the fake's URL in AGENTS_FAKE_LLM_URL. `--merge-deltas` sets the node's
## `merge_speech_deltas` (one signal per streaming agent per frame instead of one per piece).
##
## Spawns AGENTS (100) agents whose brain is the `openai` provider pointed at the fake, with a
## short idle time so each keeps deciding on its own, and lets them all stream at once (the
## limiter is raised to AGENTS). At 60 frames per second for SECONDS (10), it records each
## frame's drain — taking the queued events and emitting them as signals to GDScript handlers
## that count them (`get_last_frame_drain_usec()`, and the main thread's own CPU time in it,
## `get_last_frame_drain_cpu_usec()`). Prints one
## `STREAM_BENCH merge_deltas=… agents=… frames=… events=… deltas=… delta_chars=… lines=…
## line_chars=… p50_usec=… p99_usec=… max_usec=… mean_events_per_frame=… max_events_per_frame=…
## deltas_per_frame=… per_event_ns=… errors=…` line and exits with 0 (1 when nothing streamed, no
## line was said or an agent failed). `events` counts the events taken from the queue, `deltas`
## the `agent_speech_delta` signals, `delta_chars` / `line_chars` the characters they and the
## `agent_spoke` lines carried (equal but for lines cut by the window's ends).
extends SceneTree

const DB := "user://bench_stream.db"
const AGENTS := 100
const SECONDS := 10.0

var counts := {"delta": 0, "delta_chars": 0, "tool_call": 0, "spoke": 0, "spoke_chars": 0,
	"moved": 0, "state": 0, "error": 0}


func _initialize() -> void:
	var url := OS.get_environment("AGENTS_FAKE_LLM_URL")
	if url.is_empty():
		printerr("AGENTS_FAKE_LLM_URL is not set")
		quit(1)
		return
	Engine.max_fps = 60
	for suffix in ["", "-wal", "-shm"]:
		var file := ProjectSettings.globalize_path(DB + suffix)
		if FileAccess.file_exists(file):
			DirAccess.remove_absolute(file)
	var brain := AgentBrain.new()
	brain.provider = "openai"
	brain.model = "fake-stream"
	brain.base_url = url + "/v1"
	var rt := AgentRuntime.new()
	rt.database_path = DB
	rt.idle_think_seconds = 0.2
	rt.speaking_seconds = 0.1
	rt.max_concurrent_model_calls = AGENTS
	rt.max_concurrent_model_calls_per_endpoint = AGENTS
	rt.default_brain_config = brain
	var merge := "--merge-deltas" in OS.get_cmdline_user_args()
	rt.merge_speech_deltas = merge
	rt.agent_speech_delta.connect(func(_id, delta: String, _seq):
		counts["delta"] += 1
		counts["delta_chars"] += delta.length())
	rt.agent_tool_call.connect(func(_id, _tool, _call): counts["tool_call"] += 1)
	rt.agent_spoke.connect(func(_id, content: String, _to):
		counts["spoke"] += 1
		counts["spoke_chars"] += content.length())
	rt.agent_moved.connect(func(_id, _from, _to): counts["moved"] += 1)
	rt.agent_state_changed.connect(func(_id, _old, _new): counts["state"] += 1)
	rt.agent_error.connect(func(id, code, message):
		counts["error"] += 1
		if counts["error"] <= 5:
			printerr("agent_error %s %s %s" % [id, code, message]))
	root.add_child(rt)
	await process_frame
	for i in AGENTS:
		var id := rt.spawn_agent({"name": "villager %d" % i, "role": "villager",
			"initial_position": Vector2(randf_range(5, 95), randf_range(5, 95))})
		if id.is_empty():
			printerr("spawning failed: %s" % rt.get_last_error())
			quit(1)
			return
	# Let the first decisions start, then measure whole frames.
	for i in 30:
		await process_frame
	var drains := PackedInt64Array()
	var events := PackedInt64Array()
	var cpu := PackedInt64Array()
	var deltas_before: int = counts["delta"]
	var delta_chars_before: int = counts["delta_chars"]
	var lines_before: int = counts["spoke"]
	var line_chars_before: int = counts["spoke_chars"]
	var started := Time.get_ticks_usec()
	while Time.get_ticks_usec() - started < int(SECONDS * 1e6):
		await process_frame
		drains.append(rt.get_last_frame_drain_usec())
		cpu.append(rt.get_last_frame_drain_cpu_usec())
		events.append(rt.get_last_frame_event_count())
	var deltas: int = counts["delta"] - deltas_before
	var delta_chars: int = counts["delta_chars"] - delta_chars_before
	var lines: int = counts["spoke"] - lines_before
	var line_chars: int = counts["spoke_chars"] - line_chars_before
	rt.free()
	var sorted := drains.duplicate()
	sorted.sort()
	var cpu_sorted := cpu.duplicate()
	cpu_sorted.sort()
	var total_events := 0
	var max_events := 0
	for e in events:
		total_events += e
		max_events = max(max_events, e)
	var total_usec := 0
	for d in drains:
		total_usec += d
	var frames := sorted.size()
	print("STREAM_BENCH merge_deltas=%s agents=%d frames=%d events=%d deltas=%d delta_chars=%d lines=%d line_chars=%d p50_usec=%d p99_usec=%d max_usec=%d mean_events_per_frame=%.1f max_events_per_frame=%d deltas_per_frame=%.1f per_event_ns=%d errors=%d cpu_p50_usec=%d cpu_p99_usec=%d cpu_max_usec=%d" % [
		merge, AGENTS, frames, total_events, deltas, delta_chars, lines, line_chars, sorted[frames / 2],
		sorted[min(frames - 1, int(frames * 0.99))], sorted[frames - 1],
		float(total_events) / frames, max_events, float(deltas) / frames,
		(total_usec * 1000) / max(total_events, 1), counts["error"],
		cpu_sorted[frames / 2], cpu_sorted[min(frames - 1, int(frames * 0.99))],
		cpu_sorted[frames - 1]])
	if deltas == 0 or lines == 0:
		printerr("nothing streamed: %d deltas, %d lines" % [deltas, lines])
	quit(0 if deltas > 0 and lines > 0 and counts["error"] == 0 else 1)
