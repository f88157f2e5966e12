## Headless test runner:
## `godot --headless --path godot-project --script res://tests/run_tests.gd [-- --suite NAME ...]
## [--dir res://tests/ws_client]`
##
## Runs every `test_*.gd` suite of `res://tests` (or of the folder `--dir` names; sorted by file
## name; only the named ones with `--suite`), each test method in declaration order, prints one
## line per suite and finally `GODOT_TESTS_RESULT passed=N failed=N suites=N`, which
## `cargo xtask test` parses. Exits with 0 when nothing failed, else 1.
##
## Test methods (and `before_each` / `after_each`) may be coroutines (`await` frames or signals):
## the runner awaits each one, letting the SceneTree run frames meanwhile, and fails a test that
## has not finished after the suite's `test_timeout_seconds` (default 30). Nodes a test adds with
## the base's `add_to_tree()` are freed after `after_each`.
extends SceneTree

## The folder whose suites run unless `--dir` names another.
const DEFAULT_TESTS_DIR := "res://tests"


func _initialize() -> void:
	# The root becomes ready after _initialize: run the suites from the first frame on, so that
	# nodes a test adds to the tree get _ready at once.
	await process_frame
	var wanted := _user_arg_values("--suite")
	var dirs := _user_arg_values("--dir")
	var tests_dir: String = dirs[-1] if not dirs.is_empty() else DEFAULT_TESTS_DIR
	var files := []
	# Listed through ResourceLoader, which also sees the suites of an exported pack (stored
	# there compiled, under other names).
	for file in ResourceLoader.list_directory(tests_dir):
		if file.begins_with("test_") and file.ends_with(".gd") and file != "test_base.gd":
			if wanted.is_empty() or file in wanted or file.get_basename() in wanted:
				files.append(file)
	files.sort()

	var passed := 0
	var failed := 0
	if files.is_empty():
		print("FAIL runner: no suite in %s matches %s" % [tests_dir, wanted])
		failed += 1
	for file in files:
		var result: Array = await _run_suite(tests_dir.path_join(file), file)
		passed += result[0]
		failed += result[1]
		print("SUITE %s: %d passed, %d failed" % [file, result[0], result[1]])

	print("GODOT_TESTS_RESULT passed=%d failed=%d suites=%d" % [passed, failed, files.size()])
	quit(0 if failed == 0 else 1)


## The values given to the user argument `option` (`-- --suite a --suite b` → `["a", "b"]`).
func _user_arg_values(option: String) -> Array:
	var values := []
	var args := OS.get_cmdline_user_args()
	var i := 0
	while i < args.size():
		if args[i] == option and i + 1 < args.size():
			values.append(args[i + 1])
			i += 1
		i += 1
	return values


## Returns [passed, failed].
func _run_suite(path: String, file: String) -> Array:
	var script: Script = load(path)
	if script == null or not script.can_instantiate():
		print("FAIL %s: the suite does not load (see the errors above)" % file)
		return [0, 1]
	var suite = script.new()
	if not suite.has_method("assert_eq"):
		print("FAIL %s: the suite does not extend res://tests/test_base.gd" % file)
		return [0, 1]
	suite.suite_name = file
	suite.tree = self
	var methods := []
	for method in script.get_script_method_list():
		var name: String = method["name"]
		if name.begins_with("test_") and not name in methods:
			methods.append(name)
	if methods.is_empty():
		print("FAIL %s: no test_* methods" % file)
		return [0, 1]
	for name in methods:
		suite.current_test = name
		var before: int = suite.passed + suite.failed
		var started := Time.get_ticks_msec()
		var timeout_ms := int(suite.test_timeout_seconds * 1000.0)
		if suite.has_method("before_each"):
			await _call_with_timeout(suite, "before_each", timeout_ms)
		await _call_with_timeout(suite, name, timeout_ms)
		if suite.has_method("after_each"):
			await _call_with_timeout(suite, "after_each", timeout_ms)
		suite.free_tree_nodes()
		if suite.passed + suite.failed == before:
			suite.fail("the test asserted nothing (did it stop on a script error?)")
		print("  %s::%s (%d ms)" % [file, name, Time.get_ticks_msec() - started])
	return [suite.passed, suite.failed]


## Calls `suite.<method>()` and waits for it to finish (it may be a coroutine), frame by frame,
## at most `timeout_ms`; a method still running then counts as a failure.
func _call_with_timeout(suite: Object, method: String, timeout_ms: int) -> void:
	var state := {"done": false}
	var run := func() -> void:
		await suite.call(method)
		state["done"] = true
	run.call()
	var deadline := Time.get_ticks_msec() + timeout_ms
	while not state["done"]:
		if Time.get_ticks_msec() > deadline:
			suite.fail("%s did not finish within %d ms" % [method, timeout_ms])
			return
		await process_frame
