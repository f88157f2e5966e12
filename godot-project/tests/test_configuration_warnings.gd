## The configuration warnings of `AgentRuntime` and `AgentApp` (the yellow triangle in the Scene
## dock), through their `get_configuration_warnings()`, the method the editor's
## `_get_configuration_warnings` answers with: each problem warns, and a node set up correctly
## has none. The nodes stay out of the tree, so that no runtime starts.
extends "res://tests/test_base.gd"

const DIR := "user://test_configuration_warnings"
## A key variable no test machine sets.
const UNSET_KEY := "GODOT_AGENTS_TEST_KEY_NEVER_SET"
## A key variable the tests set.
const SET_KEY := "GODOT_AGENTS_TEST_KEY_SET_BY_TEST"

var _freed: Array[Object] = []


func before_each() -> void:
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DIR))
	OS.set_environment(SET_KEY, "sk-test-not-a-real-key")


func after_each() -> void:
	OS.unset_environment(SET_KEY)
	for node in _freed:
		if is_instance_valid(node):
			node.free()
	_freed.clear()


func _runtime() -> AgentRuntime:
	var runtime := AgentRuntime.new()
	runtime.database_path = DIR.path_join("agents.db")
	_freed.append(runtime)
	return runtime


func _keyless_brain(provider := "openai") -> AgentBrain:
	var brain := AgentBrain.new()
	brain.provider = provider
	brain.model = "gpt-4o-mini"
	brain.api_key_env = UNSET_KEY
	return brain


## The one warning among `warnings` that contains every piece of `pieces`, failing unless there
## is exactly one warning.
func _assert_one_warning(warnings: PackedStringArray, pieces: Array, what: String) -> void:
	assert_eq(warnings.size(), 1, "%s: one warning, got %s" % [what, warnings])
	if warnings.size() == 1:
		for piece in pieces:
			assert_contains(warnings[0], piece, what)


func test_a_runtime_set_up_correctly_has_no_warning() -> void:
	assert_eq(_runtime().get_configuration_warnings(), PackedStringArray())
	# The default path too (user:// exists or can be created).
	var runtime := _runtime()
	runtime.database_path = "user://agents.db"
	assert_eq(runtime.get_configuration_warnings(), PackedStringArray())
	# A missing folder is created at start: no warning.
	runtime.database_path = DIR.path_join("not/yet/there/agents.db")
	assert_eq(runtime.get_configuration_warnings(), PackedStringArray())


func test_an_unusable_database_path_warns() -> void:
	var runtime := _runtime()
	runtime.database_path = ""
	_assert_one_warning(runtime.get_configuration_warnings(), ["database_path is empty"],
		"an empty path")
	runtime.database_path = "res://agents.db"
	_assert_one_warning(runtime.get_configuration_warnings(),
		["res://agents.db", "read-only in an exported game", "user://"], "a res:// path")
	runtime.database_path = DIR
	_assert_one_warning(runtime.get_configuration_warnings(), ["is a folder"], "a folder")
	# A file where a folder should be: the folder cannot be created.
	var file := FileAccess.open(DIR.path_join("a_file"), FileAccess.WRITE)
	file.store_string("not a folder")
	file.close()
	runtime.database_path = DIR.path_join("a_file/sub/agents.db")
	_assert_one_warning(runtime.get_configuration_warnings(),
		["cannot be created", "a_file is a file, not a folder"], "a file in the way")


func test_the_warnings_touch_nothing() -> void:
	var runtime := _runtime()
	var path := DIR.path_join("untouched/agents.db")
	runtime.database_path = path
	runtime.get_configuration_warnings()
	assert_false(DirAccess.dir_exists_absolute(ProjectSettings.globalize_path(DIR.path_join(
		"untouched"))), "no folder is created")
	assert_false(FileAccess.file_exists(path), "no database is created")


func test_a_brain_without_its_key_warns() -> void:
	var runtime := _runtime()
	runtime.default_brain_config = _keyless_brain()
	_assert_one_warning(runtime.get_configuration_warnings(),
		["default_brain_config", "openai", UNSET_KEY, "set_api_key"], "the default brain")

	runtime.default_brain_config = null
	runtime.brain_profiles = {"smart": _keyless_brain("anthropic")}
	_assert_one_warning(runtime.get_configuration_warnings(),
		["brain_profiles[\"smart\"]", "anthropic", UNSET_KEY], "a profile")


func test_a_brain_with_its_key_or_without_need_of_one_has_no_warning() -> void:
	var runtime := _runtime()
	var with_key := _keyless_brain()
	with_key.api_key_env = SET_KEY
	var local := _keyless_brain()
	local.base_url = "http://127.0.0.1:11434/v1"
	var scripted := AgentBrain.new()
	scripted.provider = "scripted"
	var cli := AgentBrain.new()
	cli.provider = "cli"
	cli.cli_backend = "claude"
	runtime.default_brain_config = with_key
	runtime.brain_profiles = {"local": local, "scripted": scripted, "cli": cli}
	assert_eq(runtime.get_configuration_warnings(), PackedStringArray())


func test_other_brain_problems_warn_too() -> void:
	var runtime := _runtime()
	var no_model := _keyless_brain()
	no_model.api_key_env = SET_KEY
	no_model.model = ""
	runtime.brain_profiles = {"no_model": no_model}
	_assert_one_warning(runtime.get_configuration_warnings(),
		["brain_profiles[\"no_model\"]", "brain.model is required for the openai provider"], "a brain without a model")
	var hot := _keyless_brain()
	hot.api_key_env = SET_KEY
	hot.temperature = 3.0
	runtime.brain_profiles = {"hot": hot}
	_assert_one_warning(runtime.get_configuration_warnings(),
		["brain_profiles[\"hot\"]", "temperature"], "a brain validate() refuses")
	runtime.brain_profiles = {"text": "scripted"}
	_assert_one_warning(runtime.get_configuration_warnings(),
		["brain_profiles[\"text\"]", "not an AgentBrain"], "a profile that is no brain")
	var on_device := AgentBrain.new()
	on_device.provider = "local"
	on_device.model = "res://models/missing.gguf"
	runtime.brain_profiles = {"npc": on_device}
	_assert_one_warning(runtime.get_configuration_warnings(),
		["brain_profiles[\"npc\"]", "res://models/missing.gguf does not exist", "model_url"],
		"a local brain whose file is missing")
	on_device.model = ""
	on_device.model_url = "https://example.com/m.gguf"
	on_device.model_sha256 = "ab".repeat(32)
	assert_eq(Array(runtime.get_configuration_warnings()), [], "a download warns of nothing")


func test_every_problem_is_listed() -> void:
	var runtime := _runtime()
	runtime.database_path = "res://agents.db"
	runtime.default_brain_config = _keyless_brain()
	runtime.brain_profiles = {"smart": _keyless_brain("anthropic")}
	assert_eq(runtime.get_configuration_warnings().size(), 3)


## An app and a runtime under one parent, out of the tree.
func _app_beside(sibling: Node) -> AgentApp:
	var parent := Node.new()
	_freed.append(parent)
	sibling.name = "Sibling"
	parent.add_child(sibling)
	var app := AgentApp.new()
	app.app_id = "tictactoe"
	parent.add_child(app)
	return app


func test_an_app_with_its_runtime_has_no_warning() -> void:
	var app := _app_beside(AgentRuntime.new())
	app.runtime_path = NodePath("../Sibling")
	assert_eq(app.get_configuration_warnings(), PackedStringArray())


func test_an_app_without_a_runtime_warns() -> void:
	var app := _app_beside(Node2D.new())
	_assert_one_warning(app.get_configuration_warnings(),
		["No AgentRuntime", "runtime_path", "register()"], "no runtime_path")
	app.runtime_path = NodePath("../Missing")
	_assert_one_warning(app.get_configuration_warnings(), ["../Missing", "leads to no node"],
		"a path to nothing")
	app.runtime_path = NodePath("../Sibling")
	_assert_one_warning(app.get_configuration_warnings(),
		["../Sibling", "Node2D", "not an AgentRuntime"], "a path to another node")


func test_an_app_without_an_id_warns() -> void:
	var app := _app_beside(AgentRuntime.new())
	app.runtime_path = NodePath("../Sibling")
	app.app_id = ""
	_assert_one_warning(app.get_configuration_warnings(), ["app_id is empty"], "no app_id")


## The nodes are tool classes (so that the editor asks them for warnings); outside the editor
## they behave as before: a runtime in the tree starts, an app registers.
func test_outside_the_editor_the_nodes_still_run() -> void:
	assert_false(Engine.is_editor_hint())
	var parent := Node.new()
	var runtime := AgentRuntime.new()
	runtime.name = "AgentRuntime"
	runtime.database_path = fresh_db(DIR, "running")
	parent.add_child(runtime)
	var app := AgentApp.new()
	app.app_id = "warnings_app"
	app.runtime_path = NodePath("../AgentRuntime")
	parent.add_child(app)
	add_to_tree(parent)
	assert_true(runtime.is_running(), "the runtime started")
	assert_true(await wait_until(func(): return app.is_registered()), "the app registered")
