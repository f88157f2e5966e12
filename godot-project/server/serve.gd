## A headless Godot server: an `AgentRuntime` node serving the WebSocket protocol
## (`docs/protocol.md`), the way a headless Godot server export runs it.
##
## `godot --headless --path godot-project --script res://server/serve.gd -- [options]`
##
## Options (all optional):
##   --bind ADDRESS       address to listen on (default 127.0.0.1; 0.0.0.0 = every interface)
##   --port N             port (default 9080; 0 = a free one)
##   --db PATH            SQLite database (default user://agents_server.db)
##   --token TOKEN        clients must present it (also read from $AGENTS_SERVER_TOKEN)
##   --insecure-no-token  serve a non-loopback --bind without a token (refused otherwise)
##   --allow-origin ORIGIN   a browser origin allowed to connect (repeatable; `null`, `*` for any)
##   --allow-host HOST    a Host name allowed besides the loopback ones (repeatable)
##   --allow-client-brains   clients may spawn agents with a model brain object of their own
##                        (openai / anthropic, with their own api_key); off: profiles and presets
##   --client-brain-origins LIST   the origins such a brain may call (comma-separated; default any)
##   --no-client-presets  clients may not name the presets `scripted` and `claude`
##   --idle-think-seconds S   seconds an idle agent waits before deciding on its own
##   --resume             resume the agents stored in the database
##   --stop-file PATH     quit cleanly once this file exists (for scripts and tests)
##   --max-seconds S      quit cleanly after S seconds (0 = never; the default)
##   --max-fps N          frames per second of the main loop (default 120; the WebSocket server
##                        runs on its own threads, frames only pace the node's signals)
##
## Prints `AGENTS_NODE_SERVER_URL ws://HOST:PORT/ws` once it listens, `AGENTS_NODE_SERVER_STOPPED`
## when it has shut down; exits 1 when the runtime cannot start (the error is printed), 2 on bad
## options. Godot installs no SIGTERM handler: a SIGTERM ends the process at once (SQLite keeps
## every committed row); use --stop-file or --max-seconds for a clean stop.
extends SceneTree

var _runtime: AgentRuntime
var _stop_file := ""
var _max_seconds := 0.0
var _elapsed := 0.0
var _stopping := false


func _initialize() -> void:
	var options := _parse_options(OS.get_cmdline_user_args())
	if options.has("error"):
		printerr("serve.gd: %s" % options["error"])
		quit(2)
		return
	_stop_file = options.get("stop-file", "")
	_max_seconds = float(options.get("max-seconds", "0"))
	Engine.max_fps = int(options.get("max-fps", "120"))

	_runtime = AgentRuntime.new()
	_runtime.name = "AgentRuntime"
	_runtime.autostart = false
	_runtime.database_path = options.get("db", "user://agents_server.db")
	if options.has("idle-think-seconds"):
		_runtime.idle_think_seconds = float(options["idle-think-seconds"])
	_runtime.resume_agents = options.has("resume")
	_runtime.websocket_enabled = true
	_runtime.websocket_bind = options.get("bind", "127.0.0.1")
	_runtime.websocket_port = int(options.get("port", "9080"))
	_runtime.websocket_token = options.get("token", OS.get_environment("AGENTS_SERVER_TOKEN"))
	_runtime.websocket_insecure_no_token = options.has("insecure-no-token")
	_runtime.websocket_allowed_origins = PackedStringArray(options.get("allow-origin", []))
	_runtime.websocket_allowed_hosts = PackedStringArray(options.get("allow-host", []))
	_runtime.allow_client_brains = options.has("allow-client-brains")
	if options.has("client-brain-origins"):
		_runtime.client_brain_origins = PackedStringArray(String(options["client-brain-origins"]).split(","))
	_runtime.client_brain_presets = not options.has("no-client-presets")
	root.add_child(_runtime)
	if not _runtime.start():
		printerr("serve.gd: cannot start: %s" % _runtime.get_last_error())
		_shutdown(1)
		return
	print("AGENTS_NODE_SERVER_URL %s" % _runtime.get_websocket_url())


func _process(delta: float) -> bool:
	if _stopping:
		return false
	_elapsed += delta
	var stop := _max_seconds > 0.0 and _elapsed >= _max_seconds
	if not _stop_file.is_empty() and FileAccess.file_exists(_stop_file):
		stop = true
	if stop:
		_shutdown(0)
	return false


func _shutdown(code: int) -> void:
	_stopping = true
	if _runtime != null:
		_runtime.stop()
		_runtime.queue_free()
		_runtime = null
	print("AGENTS_NODE_SERVER_STOPPED")
	quit(code)


## `--name value` pairs and `--flag`s into a Dictionary (a repeatable option's values as an
## Array); unknown options are an error.
func _parse_options(args: PackedStringArray) -> Dictionary:
	const VALUED := ["bind", "port", "db", "token", "idle-think-seconds", "stop-file", "max-seconds", "max-fps", "client-brain-origins"]
	const REPEATED := ["allow-origin", "allow-host"]
	const FLAGS := ["resume", "insecure-no-token", "allow-client-brains", "no-client-presets"]
	var options := {}
	var i := 0
	while i < args.size():
		var arg := args[i]
		if not arg.begins_with("--"):
			return {"error": "unexpected argument '%s'" % arg}
		var key := arg.substr(2)
		if key in FLAGS:
			options[key] = "true"
		elif key in VALUED or key in REPEATED:
			if i + 1 >= args.size():
				return {"error": "--%s needs a value" % key}
			if key in REPEATED:
				var values: Array = options.get(key, [])
				values.append(args[i + 1])
				options[key] = values
			else:
				options[key] = args[i + 1]
			i += 1
		else:
			return {"error": "unknown option --%s (known: --%s, --%s, --%s)" % [key, ", --".join(VALUED), ", --".join(REPEATED), ", --".join(FLAGS)]}
		i += 1
	return options
