## Base of every test suite: `extends "res://tests/test_base.gd"`.
##
## A suite's methods named `test_*` run in declaration order; each assertion counts as one test.
## Optional hooks: `before_each()` / `after_each()` around every test method.
## A failed assertion prints `FAIL <suite>::<test>: <what>` and the run fails.
##
## Tests and hooks may `await` (frames with `await wait_frames(n)`, a condition with
## `await wait_until(func(): return ...)`, or any signal); each must finish within
## `test_timeout_seconds`. `add_to_tree(node)` puts a node under the SceneTree's root (so it gets
## `_ready`, `_process` and signals every frame); the runner frees it after the test.
extends RefCounted

## Assertions that held.
var passed := 0
## Assertions that failed.
var failed := 0
## The suite file name, set by the runner.
var suite_name := ""
## The test method running now, set by the runner.
var current_test := ""
## The SceneTree running the tests, set by the runner.
var tree: SceneTree
## How long one test method (or hook) may take, in seconds.
var test_timeout_seconds := 30.0

var _tree_nodes: Array[Node] = []


## Adds `node` under the SceneTree's root (it becomes ready now) and returns it; the runner frees
## it after the test (after `after_each`), unless the test freed it already.
func add_to_tree(node: Node) -> Node:
	tree.root.add_child(node)
	_tree_nodes.append(node)
	return node


## Frees the nodes of [method add_to_tree] that are still alive (the runner calls this after each
## test).
func free_tree_nodes() -> void:
	for node in _tree_nodes:
		if is_instance_valid(node):
			node.free()
	_tree_nodes.clear()


## A fresh SQLite database path `<dir>/<name>.db` (e.g. `user://test_x/a.db`): the folder is
## created, an old database there and its `-wal`, `-shm` and `-journal` files removed.
func fresh_db(dir: String, name: String) -> String:
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(dir))
	var path := dir.path_join(name + ".db")
	for suffix in ["", "-wal", "-shm", "-journal"]:
		var global := ProjectSettings.globalize_path(path + suffix)
		if FileAccess.file_exists(global):
			DirAccess.remove_absolute(global)
	return path


## Waits `count` process frames.
func wait_frames(count := 1) -> void:
	for i in count:
		await tree.process_frame


## Waits frame by frame until `condition.call()` is true; returns false (without failing) when
## `timeout_seconds` pass first.
func wait_until(condition: Callable, timeout_seconds := 10.0) -> bool:
	var deadline := Time.get_ticks_msec() + int(timeout_seconds * 1000.0)
	while not condition.call():
		if Time.get_ticks_msec() > deadline:
			return false
		await tree.process_frame
	return true


func _record(ok: bool, what: String, message: String) -> bool:
	if ok:
		passed += 1
	else:
		failed += 1
		var text := "FAIL %s::%s: %s" % [suite_name, current_test, what]
		if message != "":
			text += " — " + message
		print(text)
	return ok


## A value with its type, for failure messages: `3 (int)`, `"a" (String)`.
static func describe(value: Variant) -> String:
	var shown := var_to_str(value) if typeof(value) != TYPE_OBJECT else str(value)
	if shown.length() > 300:
		shown = shown.substr(0, 300) + "…"
	return "%s (%s)" % [shown, type_string(typeof(value))]


## Deep equality that also compares types: `1` and `1.0` differ, as do `"a"` and `&"a"`.
## Dictionaries compare by content, whatever the key order.
static func deep_equal(a: Variant, b: Variant) -> bool:
	if typeof(a) != typeof(b):
		return false
	match typeof(a):
		TYPE_ARRAY:
			if a.size() != b.size():
				return false
			for i in a.size():
				if not deep_equal(a[i], b[i]):
					return false
			return true
		TYPE_DICTIONARY:
			if a.size() != b.size():
				return false
			for key in a:
				if not b.has(key) or not deep_equal(a[key], b[key]):
					return false
			return true
		_:
			return a == b


## Passes when `actual` and `expected` are deeply equal with the same types.
func assert_eq(actual: Variant, expected: Variant, message := "") -> bool:
	return _record(deep_equal(actual, expected),
		"expected %s, got %s" % [describe(expected), describe(actual)], message)


## Passes when the values differ (in value or type).
func assert_ne(actual: Variant, unexpected: Variant, message := "") -> bool:
	return _record(not deep_equal(actual, unexpected),
		"expected anything but %s" % describe(unexpected), message)


## Passes when `condition` is true.
func assert_true(condition: bool, message := "") -> bool:
	return _record(condition, "expected true", message)


## Passes when `condition` is false.
func assert_false(condition: bool, message := "") -> bool:
	return _record(not condition, "expected false", message)


## Passes when `value` has the Variant type `type` (`TYPE_INT`, `TYPE_FLOAT`, …).
func assert_type(value: Variant, type: int, message := "") -> bool:
	return _record(typeof(value) == type,
		"expected a %s, got %s" % [type_string(type), describe(value)], message)


## Passes when `dict` has every key of `keys`.
func assert_has_keys(dict: Dictionary, keys: Array, message := "") -> bool:
	var missing := []
	for key in keys:
		if not dict.has(key):
			missing.append(key)
	return _record(missing.is_empty(),
		"missing keys %s in %s" % [missing, describe(dict)], message)


## Passes when `container` (Array, Dictionary keys, String, PackedStringArray) contains `item`.
func assert_contains(container: Variant, item: Variant, message := "") -> bool:
	return _record(item in container,
		"%s does not contain %s" % [describe(container), describe(item)], message)


## Records a failure with a message.
func fail(message: String) -> bool:
	return _record(false, "failed", message)
