## Model brains in Godot: an `AgentRuntime` whose agent thinks with the `openai` brain against the
## fake provider (`cargo xtask test` starts the `fakellm` binary and passes its URL in
## AGENTS_FAKE_LLM_URL; its first answer is "Fresh bread at the well!" in 3-character pieces with
## a `move` to (12, 14)). The streamed text arrives as `agent_speech_delta` signals on the main
## thread, in order and before `agent_spoke`; the move and the line are applied; the call is traced.
## An `AgentBrain` of the `cli` provider runs a command-line model (the script in
## AGENTS_CLI_MODEL_SCRIPT) through a repair. An `AgentEmbeddings` on the fake's `/v1/embeddings`
## makes vectors of memories: recall reports how close each is in meaning.
extends "res://tests/test_base.gd"

const DB_DIR := "user://test_model_brain"

var _url := OS.get_environment("AGENTS_FAKE_LLM_URL")
## Every signal received, in order: `[name, args…]`.
var events: Array = []
## Signals that arrived off the main thread (must stay 0).
var off_main := 0


func _note(event: Array) -> void:
	if OS.get_thread_caller_id() != OS.get_main_thread_id():
		off_main += 1
	events.append(event)


func _index(kind: String, id: String) -> int:
	for i in events.size():
		if events[i][0] == kind and events[i][1] == id:
			return i
	return -1


func test_the_inspector_offers_the_built_in_providers() -> void:
	var offered := {}
	for property in AgentBrain.new().get_property_list():
		if property["name"] == "provider":
			offered = property
	assert_eq(offered["hint"], PROPERTY_HINT_ENUM_SUGGESTION)
	assert_eq(offered["hint_string"], "anthropic,cli,local,ollama,openai,scripted")


## The usage flags of `brain`'s property `name`.
func _usage(brain: AgentBrain, name: String) -> int:
	for property in brain.get_property_list():
		if property["name"] == name:
			return property["usage"]
	return -1


func test_the_inspector_shows_the_chosen_providers_options() -> void:
	var brain := AgentBrain.new()
	brain.provider = "ollama"
	for shown in ["model", "base_url", "temperature", "num_ctx", "keep_alive", "token_budget"]:
		assert_true(_usage(brain, shown) & PROPERTY_USAGE_EDITOR, "ollama shows %s" % shown)
	for hidden in ["context_size", "gpu_layers", "command", "cli_backend", "model_sha256"]:
		assert_false(_usage(brain, hidden) & PROPERTY_USAGE_EDITOR, "ollama hides %s" % hidden)
		assert_true(_usage(brain, hidden) & PROPERTY_USAGE_STORAGE, "%s is still saved" % hidden)
	brain.provider = "local"
	assert_true(_usage(brain, "context_size") & PROPERTY_USAGE_EDITOR)
	assert_false(_usage(brain, "num_ctx") & PROPERTY_USAGE_EDITOR)
	brain.provider = "cli"
	assert_true(_usage(brain, "command") & PROPERTY_USAGE_EDITOR)
	assert_false(_usage(brain, "base_url") & PROPERTY_USAGE_EDITOR)
	# A brain the game registered declares nothing here: every field is offered.
	brain.provider = "my_brain"
	assert_true(_usage(brain, "context_size") & PROPERTY_USAGE_EDITOR)
	assert_true(_usage(brain, "num_ctx") & PROPERTY_USAGE_EDITOR)
	# Ollama's own options reach the brain object.
	brain.provider = "ollama"
	brain.model = "llama3.2"
	brain.num_ctx = 8192
	brain.keep_alive = "10m"
	var as_dict := brain.to_dictionary()
	assert_eq(as_dict["num_ctx"], 8192)
	assert_eq(as_dict["keep_alive"], "10m")
	brain.keep_alive = "300"
	assert_eq(brain.to_dictionary()["keep_alive"], 300, "a number of seconds")
	brain.keep_alive = "soon"
	assert_contains(brain.validate(), "brain.keep_alive")


func test_an_openai_agent_streams_moves_and_speaks() -> void:
	if _url.is_empty():
		fail("not run: AGENTS_FAKE_LLM_URL is not set")
		return
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DB_DIR))
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "openai")
	rt.idle_think_seconds = 1000.0
	rt.speaking_seconds = 0.05
	rt.agent_speech_delta.connect(func(id, delta, seq): _note(["delta", id, delta, seq]))
	rt.agent_tool_call.connect(func(id, tool, call_id): _note(["tool_call", id, tool, call_id]))
	rt.agent_moved.connect(func(id, _from, to): _note(["moved", id, to]))
	rt.agent_spoke.connect(func(id, content, _to): _note(["spoke", id, content]))
	rt.agent_error.connect(func(id, code, message): _note(["error", id, code, message]))
	add_to_tree(rt)
	var id := rt.spawn_agent({"name": "Mira", "role": "the baker",
		"initial_position": Vector2(10, 10),
		"brain": {"provider": "openai", "model": "fake-1", "base_url": _url + "/v1"}})
	assert_eq(id, "agent_001", rt.get_last_error())
	assert_eq(rt.get_agent_state(id)["brain"], "openai:fake-1")
	assert_true(rt.send_message(id, "Any bread left?"))
	var spoke := await wait_until(func(): return _index("spoke", id) >= 0, 15.0)
	assert_true(spoke, "the agent answered: %s" % [events])
	if not spoke:
		return
	var text := ""
	var last_seq := -1
	var last_delta := -1
	for i in events.size():
		var e: Array = events[i]
		if e[0] == "delta" and e[1] == id:
			text += e[2]
			assert_eq(e[3], last_seq + 1, "pieces are numbered in order")
			last_seq = e[3]
			last_delta = i
	assert_eq(text, "Fresh bread at the well!")
	assert_true(last_seq >= 7, "the text came in pieces (%d)" % [last_seq + 1])
	assert_true(last_delta < _index("spoke", id), "every piece before the line: %s" % [events])
	assert_eq(events[_index("spoke", id)][2], "Fresh bread at the well!")
	assert_eq(events[_index("tool_call", id)][2], "move")
	assert_eq(events[_index("moved", id)][2], Vector2(12, 14))
	assert_eq(_index("error", id), -1, "no error: %s" % [events])
	assert_eq(off_main, 0, "every signal on the main thread")
	var trace := rt.get_agent_trace(id)
	assert_eq(trace.size(), 1)
	assert_eq(trace[0]["provider"], "openai")
	assert_eq(trace[0]["model"], "fake-1")
	assert_eq(trace[0]["outcome"], "ok")
	assert_true(int(trace[0]["input_tokens"]) > 0, "tokens: %s" % [trace[0]])


func test_a_misconfigured_brain_is_refused_at_spawn() -> void:
	var rt := AgentRuntime.new()
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DB_DIR))
	rt.database_path = fresh_db(DB_DIR, "refused")
	rt.agent_error.connect(func(id, code, message): _note(["error", id, code, message]))
	add_to_tree(rt)
	assert_eq(rt.spawn_agent({"name": "Nope", "brain": {"provider": "openai"}}), "")
	assert_contains(rt.get_last_error(), "brain.model is required for the openai provider")
	assert_eq(rt.spawn_agent({"name": "Nope", "brain": {"provider": "openai", "modle": "x"}}), "")
	assert_contains(rt.get_last_error(), "unknown field `modle`")


func _semantic(rt: AgentRuntime, id: String, query: String, text: String) -> float:
	for found in rt.recall(id, query, 10):
		if found["memory"]["text"] == text and found.has("semantic"):
			return float(found["semantic"])
	return -1.0


func test_agent_embeddings_recall_memories_by_meaning() -> void:
	if _url.is_empty():
		fail("not run: AGENTS_FAKE_LLM_URL is not set")
		return
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DB_DIR))
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "embeddings")
	var embeddings := AgentEmbeddings.new()
	embeddings.base_url = _url + "/v1"
	embeddings.model = "fake-embed"
	embeddings.query_timeout_ms = 500
	rt.embeddings = embeddings
	add_to_tree(rt)
	var mira := rt.spawn_agent({"name": "Mira", "autonomous": false})
	var tom := rt.spawn_agent({"name": "Tom", "autonomous": false, "memory": {"semantic_weight": 0.0}})
	var key := "The cellar key is under the mat."
	assert_true(rt.remember(mira, key) > 0, rt.get_last_error())
	assert_true(rt.remember(tom, key) > 0, rt.get_last_error())
	var close := await wait_until(
		func(): return _semantic(rt, mira, "Where is the cellar key?", key) > 0.0, 15.0)
	assert_true(close, "the fact was recalled by meaning too")
	var found: Array = rt.recall(tom, "Where is the cellar key?", 5)
	assert_eq(found.size(), 1)
	assert_eq(found[0]["memory"]["text"], key)
	assert_false(found[0].has("semantic"), "words only for Tom: %s" % [found[0]])
	# A bad endpoint is named when the runtime starts.
	var bad := AgentRuntime.new()
	bad.database_path = fresh_db(DB_DIR, "bad_embeddings")
	var wrong := AgentEmbeddings.new()
	wrong.base_url = "ftp://example.com"
	wrong.model = "m"
	bad.embeddings = wrong
	bad.autostart = false
	add_to_tree(bad)
	assert_false(bad.start())
	assert_contains(bad.get_last_error(), "embeddings.base_url must be an http:// or https:// URL")


func test_agent_brain_resources_profiles_keys_and_budgets() -> void:
	if _url.is_empty():
		fail("not run: AGENTS_FAKE_LLM_URL is not set")
		return
	events = []
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DB_DIR))
	const KEY_VAR := "AGENTS_GODOT_TEST_HANDED_KEY"
	const KEY := "sk-godot-handed-5e1f-never-saved"
	# A brain saved as .tres and loaded back: every field survives, and no key is in it.
	var brain := AgentBrain.new()
	brain.provider = "openai"
	brain.model = "fake-2"
	brain.base_url = _url + "/v1"
	brain.api_key_env = KEY_VAR
	brain.temperature = 0.3
	brain.token_budget = 100000
	brain.headers = {"X-Title": "godot-agents tests"}
	assert_eq(brain.validate(), "")
	assert_eq(brain.to_dictionary(), {"provider": "openai", "model": "fake-2",
		"base_url": _url + "/v1", "api_key_env": KEY_VAR, "temperature": 0.3,
		"token_budget": 100000, "headers": {"X-Title": "godot-agents tests"}})
	var path := DB_DIR + "/brain.tres"
	assert_eq(ResourceSaver.save(brain, path), OK)
	var loaded: AgentBrain = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)
	assert_eq(loaded.to_dictionary(), brain.to_dictionary())

	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "resources")
	rt.idle_think_seconds = 1000.0
	rt.speaking_seconds = 0.05
	rt.default_brain_config = loaded
	var baker := AgentBrain.new()
	baker.model = "fake-3"
	baker.base_url = _url + "/v1"
	rt.brain_profiles = {"baker": baker}
	rt.agent_spoke.connect(func(id, content, _to): _note(["spoke", id, content]))
	rt.agent_error.connect(func(id, code, message): _note(["error", id, code, message]))
	add_to_tree(rt)
	assert_true(rt.set_api_key(KEY_VAR, KEY))
	# The default brain, a profile, and a brain object on one AgentConfig.
	var ada := rt.spawn_agent({"name": "Ada"})
	assert_eq(rt.get_agent_state(ada).get("brain"), "default", rt.get_last_error())
	var config := AgentConfig.new()
	config.name = "Bo"
	config.brain = "baker"
	var bo := rt.spawn_agent(config)
	assert_eq(rt.get_agent_state(bo).get("brain"), "baker", rt.get_last_error())
	config.brain = ""
	var own := AgentBrain.new()
	own.model = "fake-4"
	own.base_url = _url + "/v1"
	config.brain_config = own
	config.name = "Cy"
	var cy := rt.spawn_agent(config)
	assert_eq(rt.get_agent_state(cy).get("brain"), "openai:fake-4", rt.get_last_error())
	assert_eq(config.to_dictionary()["brain"], {"provider": "openai", "model": "fake-4",
		"base_url": _url + "/v1"})
	# A Dictionary config may carry an AgentBrain too.
	var di := rt.spawn_agent({"name": "Di", "brain": own})
	assert_eq(rt.get_agent_state(di).get("brain"), "openai:fake-4", rt.get_last_error())

	# Tokens, as the fake counted them, against the budgets.
	assert_true(rt.send_message(ada, "Hello?"))
	assert_true(await wait_until(func(): return _index("spoke", ada) >= 0, 15.0), "%s" % [events])
	var usage := rt.get_token_usage(ada)
	assert_true(int(usage["spent"]) > 0, "spent: %s" % [usage])
	assert_eq(usage["limit"], 100000)
	assert_eq(rt.get_token_usage()["spent"], usage["spent"])
	assert_eq(rt.get_token_usage()["limit"], 0)
	assert_true(rt.set_token_budget(1, ada))
	assert_true(rt.send_message(ada, "Again?"))
	assert_true(await wait_until(func(): return _index("error", ada) >= 0, 15.0), "%s" % [events])
	assert_eq(events[_index("error", ada)][2], "budget_exhausted")
	assert_true(rt.set_token_budget(0, ada))
	assert_eq(rt.get_token_usage(ada)["limit"], 0)
	assert_true(rt.set_token_budget(50000))
	assert_eq(rt.runtime_token_budget, 50000)
	assert_eq(rt.get_token_usage()["limit"], 50000)
	assert_false(rt.set_token_budget(5, "agent_404"))
	assert_contains(rt.get_last_error(), "agent_404")

	# Bad settings are refused by name.
	var bad := AgentBrain.new()
	bad.model = "m"
	bad.headers = {"X-Count": 5}
	assert_contains(bad.validate(), "brain.headers must map text to text")
	assert_eq(rt.spawn_agent({"name": "Ed", "brain": bad}), "")
	assert_contains(rt.get_last_error(), "brain.headers")
	bad.headers = {}
	bad.temperature = 3.0
	assert_contains(bad.validate(), "brain.temperature")

	# The key handed over is in no file.
	rt.flush()
	for file in [path, rt.database_path]:
		var bytes := FileAccess.get_file_as_bytes(file)
		assert_true(bytes.size() > 0, file)
		var found := bytes.hex_encode().find(KEY.to_utf8_buffer().hex_encode())
		assert_eq(found, -1, "the key is in %s" % file)
	var tres := FileAccess.get_file_as_string(path)
	assert_false(tres.contains("sk-"), tres)


func test_a_local_brain_thinks_with_a_model_file_in_the_game() -> void:
	var file := OS.get_environment("AGENTS_TINY_MODEL")
	if file.is_empty():
		fail("not run: AGENTS_TINY_MODEL is not set")
		return
	events = []
	# The model is read from the user folder, named as the game names it.
	assert_eq(DirAccess.copy_absolute(file, ProjectSettings.globalize_path("user://tiny.gguf")), OK)
	var brain := AgentBrain.new()
	brain.provider = "local"
	brain.model = "user://tiny.gguf"
	brain.threads = 1
	brain.sequences = 2
	brain.context_size = 8192
	brain.max_tokens = 200
	brain.seed = 3
	assert_eq(brain.validate(), "")
	var as_dict := brain.to_dictionary()
	assert_eq(as_dict["model"], ProjectSettings.globalize_path("user://tiny.gguf"))
	assert_eq(as_dict["seed"], 3)
	assert_false(as_dict.has("top_p"), "unset options are left out")
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "local")
	rt.idle_think_seconds = 1000.0
	rt.speaking_seconds = 0.05
	rt.agent_error.connect(func(id, code, message): _note(["error", id, code, message]))
	add_to_tree(rt)
	var config := AgentConfig.new()
	config.name = "Mira"
	config.role = "the baker"
	config.brain_config = brain
	var id := rt.spawn_agent(config)
	assert_false(id.is_empty(), rt.get_last_error())
	assert_true(rt.send_message(id, "Come to the well?"))
	var decided := await wait_until(func(): return rt.get_agent_trace(id).size() > 0, 30.0)
	assert_true(decided, "the agent decided: %s" % [events])
	for row in rt.get_agent_trace(id):
		assert_eq(row["provider"], "local")
		assert_ne(row["outcome"], "invalid_reply", "constrained answers keep the contract")
	for e in events:
		assert_false(String(e[2]).begins_with("brain_"), "no brain error: %s" % [e])
	# A missing file is refused at spawn, naming it.
	brain.model = "user://no-such-model.gguf"
	var refused := rt.spawn_agent(config)
	assert_eq(refused, "")
	assert_contains(rt.get_last_error(), "does not exist")
	# The same files named in a Dictionary's brain: the user folder, and the project (the
	# file itself while the project runs from source), as through an AgentBrain.
	var options := {"provider": "local", "threads": 1, "sequences": 2, "context_size": 8192, "max_tokens": 200}
	var user_brain := options.duplicate()
	user_brain["model"] = "user://tiny.gguf"
	var from_user := rt.spawn_agent({"name": "Lio", "brain": user_brain})
	assert_false(from_user.is_empty(), rt.get_last_error())
	var in_project := "res://tests/model/tiny_copy.gguf"
	assert_eq(DirAccess.copy_absolute(file, ProjectSettings.globalize_path(in_project)), OK)
	var project_brain := options.duplicate()
	project_brain["model"] = in_project
	var from_project := rt.spawn_agent({"name": "Ada", "brain": project_brain})
	var error := rt.get_last_error()
	rt.terminate_agent(from_project)
	DirAccess.remove_absolute(ProjectSettings.globalize_path(in_project))
	assert_false(from_project.is_empty(), error)


func test_agents_decide_with_a_real_model_in_the_game() -> void:
	var file := OS.get_environment("AGENTS_TEST_MODEL")
	if file.is_empty():
		fail("not run: AGENTS_TEST_MODEL is not set (cargo xtask test fetches Gemma 3 270M)")
		return
	events = []
	var brain := AgentBrain.new()
	brain.provider = "local"
	brain.model = file
	brain.threads = 2
	brain.sequences = 2
	brain.context_size = 3072
	brain.max_tokens = 128
	brain.temperature = 0.7
	assert_eq(brain.validate(), "")
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "gemma")
	rt.idle_think_seconds = 1000.0
	rt.speaking_seconds = 0.05
	rt.agent_error.connect(func(id, code, message): _note(["error", id, code, message]))
	rt.agent_replied.connect(func(id, _ids, reply): _note(["replied", id, reply]))
	rt.agent_speech_delta.connect(func(id, delta, _seq): _note(["delta", id, delta]))
	add_to_tree(rt)
	var ids: Array[String] = []
	for agent_name in ["Mira", "Tomas"]:
		var config := AgentConfig.new()
		config.name = agent_name
		config.role = "the baker"
		config.brain_config = brain
		var id := rt.spawn_agent(config)
		assert_false(id.is_empty(), rt.get_last_error())
		ids.append(id)
	for id in ids:
		assert_true(rt.send_message(id, "Good morning! Is there fresh bread today?"))
	var replied := func() -> bool:
		return ids.all(func(id): return events.any(func(e): return e[0] == "replied" and e[1] == id))
	assert_true(await wait_until(replied, 240.0), "both agents decided: %s" % [events])
	for e in events:
		# What the world refuses (acting while speaking) is the game's answer to a decision;
		# no brain error (a broken contract, a failed model) may occur.
		if e[0] == "error":
			assert_false(String(e[2]).begins_with("brain_"), "no brain error: %s" % [e])
		if e[0] == "replied":
			assert_eq(e[2]["error"], {}, "decided: %s" % [e])
			assert_false(String(e[2]["text"]).begins_with("{"), "no JSON said: %s" % [e])
	for id in ids:
		for row in rt.get_agent_trace(id):
			assert_eq(row["provider"], "local")
			# Every answer is one the brain could read; how often one needed a repair is a rate,
			# measured over 500 decisions by the local benchmark (docs/benchmarks.md).
			assert_ne(row["outcome"], "invalid_reply", "constrained answers keep the contract: %s" % [row])


func test_a_local_model_is_downloaded_into_the_user_folder_with_progress() -> void:
	var fake := OS.get_environment("AGENTS_FAKE_LLM_URL")
	var sha := OS.get_environment("AGENTS_TINY_MODEL_SHA256")
	if fake.is_empty() or sha.is_empty():
		fail("not run: AGENTS_FAKE_LLM_URL or AGENTS_TINY_MODEL_SHA256 is not set")
		return
	events = []
	var cache := "user://test_models"
	if DirAccess.dir_exists_absolute(cache):
		for f in DirAccess.get_files_at(cache):
			DirAccess.remove_absolute(cache + "/" + f)
	var brain := AgentBrain.new()
	brain.provider = "local"
	brain.model_url = fake + "/_fake/files/tiny.gguf"
	brain.model_sha256 = sha
	brain.model_cache = cache
	brain.threads = 1
	brain.sequences = 2
	brain.context_size = 8192
	brain.max_tokens = 120
	assert_eq(brain.validate(), "")
	var as_dict := brain.to_dictionary()
	assert_eq(as_dict["model_cache"], ProjectSettings.globalize_path(cache))
	assert_false(as_dict.has("model"))
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "download")
	rt.idle_think_seconds = 1000.0
	rt.speaking_seconds = 0.05
	rt.agent_error.connect(func(id, code, message): _note(["error", id, code, message]))
	rt.model_download_progress.connect(func(id, url, received, total): _note(["progress", id, url, received, total]))
	add_to_tree(rt)
	var config := AgentConfig.new()
	config.name = "Mira"
	config.role = "the baker"
	config.brain_config = brain
	var id := rt.spawn_agent(config)
	assert_false(id.is_empty(), rt.get_last_error())
	assert_true(rt.send_message(id, "Come to the well?"))
	var decided := await wait_until(func(): return rt.get_agent_trace(id).size() > 0, 30.0)
	assert_true(decided, "the agent decided: %s" % [events])
	var last: Array = []
	for e in events:
		if e[0] == "progress":
			last = e
		assert_ne(e[0], "error", "no error: %s" % [e])
	assert_false(last.is_empty(), "progress was reported")
	assert_eq(last[1], id)
	assert_eq(last[2], brain.model_url)
	assert_true(last[3] > 0, "bytes arrived")
	assert_eq(last[3], last[4], "the last report is the whole file")
	var files := DirAccess.get_files_at(cache)
	assert_eq(files.size(), 1, "one checked file in the cache: %s" % [files])
	assert_true(files[0].ends_with("-tiny.gguf"))
	# A wrong hash is refused in the decision, by its own code, and the file is not kept.
	brain.model_sha256 = "ab".repeat(32)
	brain.model_cache = "user://test_models_wrong"
	var wrong := rt.spawn_agent(config)
	assert_false(wrong.is_empty(), rt.get_last_error())
	events = []
	assert_true(rt.send_message(wrong, "Hello?"))
	var refused := await wait_until(func(): return events.any(func(e): return e[0] == "error"), 20.0)
	assert_true(refused, "the mismatch was reported: %s" % [events])
	for e in events:
		if e[0] == "error":
			assert_eq(e[2], "brain_model_checksum_mismatch")


func test_a_cli_brain_runs_a_command_line_model() -> void:
	var script := OS.get_environment("AGENTS_CLI_MODEL_SCRIPT")
	if script.is_empty():
		fail("not run: AGENTS_CLI_MODEL_SCRIPT is not set")
		return
	events = []
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DB_DIR))
	var record := ProjectSettings.globalize_path(DB_DIR + "/cli_requests")
	DirAccess.make_dir_recursive_absolute(record)
	for f in DirAccess.get_files_at(record):
		DirAccess.remove_absolute(record + "/" + f)
	var brain := AgentBrain.new()
	brain.provider = "cli"
	brain.command = PackedStringArray(["python3", script, "repair", record])
	brain.timeout_seconds = 20.0
	assert_eq(brain.validate(), "")
	var as_dict := brain.to_dictionary()
	assert_eq(as_dict["provider"], "cli")
	assert_eq(as_dict["command"], ["python3", script, "repair", record])
	var rt := AgentRuntime.new()
	rt.database_path = fresh_db(DB_DIR, "cli")
	rt.idle_think_seconds = 1000.0
	rt.speaking_seconds = 0.05
	rt.agent_moved.connect(func(id, _from, to): _note(["moved", id, to]))
	rt.agent_spoke.connect(func(id, content, _to): _note(["spoke", id, content]))
	rt.agent_error.connect(func(id, code, message): _note(["error", id, code, message]))
	add_to_tree(rt)
	var config := AgentConfig.new()
	config.name = "Mira"
	config.role = "the baker"
	config.initial_position = Vector2(10, 10)
	config.use_initial_position = true
	config.brain_config = brain
	var id := rt.spawn_agent(config)
	assert_eq(rt.get_agent_state(id).get("brain"), "cli", rt.get_last_error())
	assert_true(rt.send_message(id, "Come to the well?"))
	var spoke := await wait_until(func(): return _index("spoke", id) >= 0, 20.0)
	assert_true(spoke, "the agent answered: %s" % [events])
	if not spoke:
		return
	# The script refused its first answer's arguments and repaired it (two runs).
	assert_eq(events[_index("moved", id)][2], Vector2(12, 14))
	assert_eq(events[_index("spoke", id)][2], "Coming, player_0!")
	assert_eq(_index("error", id), -1, "no error: %s" % [events])
	var trace := rt.get_agent_trace(id)
	assert_eq(trace.size(), 2)
	assert_eq(trace[1]["provider"], "cli")
	assert_eq(trace[1]["repairs"], 1)
	assert_eq(int(trace[1]["output_tokens"]), 7)
	# A command that is not installed is refused at spawn.
	var missing := AgentBrain.new()
	missing.provider = "cli"
	missing.cli_backend = "claude"
	missing.command = PackedStringArray(["agents-no-such-claude"])
	config.brain_config = missing
	assert_eq(rt.spawn_agent(config), "")
	assert_contains(rt.get_last_error(), "the program 'agents-no-such-claude' was not found on PATH")
