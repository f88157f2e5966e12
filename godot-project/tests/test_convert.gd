## Variant ⇄ JSON conversion through GameTools (the same code converts tool arguments and results).
extends "res://tests/test_base.gd"

var tools: GameTools


func before_each() -> void:
	tools = GameTools.new()


func after_each() -> void:
	tools = null


## JSON text → Variant → JSON text, and checks the Variant's type on the way.
func _round_trip_text(text: String, type: int) -> Variant:
	var value = tools.from_json(text)
	assert_false(tools.last_call_failed(), "from_json(%s): %s" % [text, tools.last_error()])
	assert_type(value, type, "from_json(%s)" % text)
	assert_eq(tools.to_json(value), text, "to_json(from_json(%s))" % text)
	return value


func test_scalars_keep_their_types() -> void:
	_round_trip_text("1", TYPE_INT)
	_round_trip_text("-42", TYPE_INT)
	_round_trip_text("1.0", TYPE_FLOAT)
	_round_trip_text("2.5", TYPE_FLOAT)
	_round_trip_text("true", TYPE_BOOL)
	_round_trip_text("null", TYPE_NIL)
	_round_trip_text("\"héllo\"", TYPE_STRING)
	assert_eq(tools.to_json(3), "3")
	assert_eq(tools.to_json(3.0), "3.0")
	assert_eq(tools.to_json(-0.5), "-0.5")


func test_large_integers_stay_exact() -> void:
	# 2^53 + 1 is not representable as a float; Godot's own JSON class would round it.
	var big = _round_trip_text("9007199254740993", TYPE_INT)
	assert_eq(big, 9007199254740993)
	_round_trip_text("9223372036854775807", TYPE_INT)
	_round_trip_text("-9223372036854775808", TYPE_INT)
	# Above i64::MAX only a float can hold it.
	assert_type(tools.from_json("18446744073709551615"), TYPE_FLOAT)


func test_nested_round_trip() -> void:
	var value := {
		"int": 7, "float": 7.0, "string": "s", "null": null, "bool": false,
		"list": [1, 2.5, "three", null, [4, {"deep": 5}], {}],
		"dict": {"a": {"b": {"c": [0.0, 0]}}},
	}
	var text := tools.to_json(value)
	assert_false(tools.last_call_failed(), tools.last_error())
	var back = tools.from_json(text)
	assert_eq(back, value, "nested round trip through %s" % text)
	assert_type(back["list"][0], TYPE_INT)
	assert_type(back["list"][1], TYPE_FLOAT)
	assert_type(back["dict"]["a"]["b"]["c"][0], TYPE_FLOAT)
	assert_type(back["dict"]["a"]["b"]["c"][1], TYPE_INT)
	assert_eq(tools.to_json([]), "[]")
	assert_eq(tools.to_json({}), "{}")


func test_string_like_types_become_strings() -> void:
	assert_eq(tools.to_json(&"name"), "\"name\"")
	assert_eq(tools.to_json(NodePath("a/b:c")), "\"a/b:c\"")
	assert_eq(tools.from_json(tools.to_json({&"key": &"value"})), {"key": "value"})


func test_dictionary_keys_become_strings() -> void:
	assert_eq(tools.from_json(tools.to_json({1: "one", true: "yes", 1.5: "x", &"n": 0})),
		{"1": "one", "true": "yes", "1.5": "x", "n": 0})
	tools.to_json({1: "int", "1": "string"})
	assert_true(tools.last_call_failed(), "keys 1 and \"1\" collide")
	assert_contains(tools.last_error(), "\"1\"")
	tools.to_json({Vector2(1, 2): 3})
	assert_true(tools.last_call_failed(), "a Vector2 key has no JSON form")
	assert_contains(tools.last_error(), "Vector2")


func test_vectors_colors_and_packed_arrays() -> void:
	assert_eq(tools.from_json(tools.to_json(Vector2i(3, -4))), {"x": 3, "y": -4})
	assert_eq(tools.from_json(tools.to_json(Vector2(0.5, 2))), {"x": 0.5, "y": 2.0})
	assert_eq(tools.from_json(tools.to_json(Vector3i(1, 2, 3))), {"x": 1, "y": 2, "z": 3})
	assert_eq(tools.from_json(tools.to_json(Vector3(1, 2, 3))), {"x": 1.0, "y": 2.0, "z": 3.0})
	assert_eq(tools.from_json(tools.to_json(Vector4i(1, 2, 3, 4))), {"x": 1, "y": 2, "z": 3, "w": 4})
	assert_eq(tools.from_json(tools.to_json(Color(1, 0, 0.5, 1))), {"r": 1.0, "g": 0.0, "b": 0.5, "a": 1.0})
	assert_eq(tools.from_json(tools.to_json(PackedInt32Array([1, 2]))), [1, 2])
	assert_eq(tools.from_json(tools.to_json(PackedInt64Array([3]))), [3])
	assert_eq(tools.from_json(tools.to_json(PackedByteArray([255, 0]))), [255, 0])
	assert_eq(tools.from_json(tools.to_json(PackedFloat64Array([1.0, 0.25]))), [1.0, 0.25])
	assert_eq(tools.from_json(tools.to_json(PackedStringArray(["a", "b"]))), ["a", "b"])
	assert_eq(tools.from_json(tools.to_json(PackedVector2Array([Vector2(1, 2)]))), [{"x": 1.0, "y": 2.0}])
	var typed: Array[int] = [1, 2, 3]
	assert_eq(tools.from_json(tools.to_json(typed)), [1, 2, 3])
	var typed_dict: Dictionary[String, int] = {"a": 1}
	assert_eq(tools.from_json(tools.to_json(typed_dict)), {"a": 1})


func test_values_without_json_form_are_errors() -> void:
	var ref := RefCounted.new()
	assert_eq(tools.to_json({"state": {"inner": [1, ref]}}), "")
	assert_true(tools.last_call_failed())
	assert_contains(tools.last_error(), "'state.inner.1' is of type Object")
	assert_eq(tools.to_json(Callable(self, "before_each")), "")
	assert_contains(tools.last_error(), "Callable")
	assert_eq(tools.to_json(NAN), "")
	assert_contains(tools.last_error(), "NaN")
	assert_eq(tools.to_json([INF]), "")
	assert_contains(tools.last_error(), "'0'")
	assert_eq(tools.to_json(Rect2()), "")
	assert_contains(tools.last_error(), "Rect2")
	# A success clears the error.
	assert_eq(tools.to_json(1), "1")
	assert_false(tools.last_call_failed())
	assert_eq(tools.last_error(), "")


func test_self_containing_array_is_an_error_not_a_crash() -> void:
	var cyclic := []
	cyclic.append(cyclic)
	assert_eq(tools.to_json(cyclic), "")
	assert_contains(tools.last_error(), "deeper than")
	cyclic.clear()  # break the cycle so nothing leaks


func test_invalid_json_text() -> void:
	assert_eq(tools.from_json("{not json"), null)
	assert_true(tools.last_call_failed())
	assert_contains(tools.last_error(), "not JSON")


func test_tool_arguments_and_results_keep_types() -> void:
	var roll := tools.call_tool("roll_rpg_dice", {"sides": 6, "count": 3, "seed": 42})
	assert_false(tools.last_call_failed(), str(roll))
	assert_type(roll.get("sides"), TYPE_INT)
	assert_type(roll.get("total"), TYPE_INT)
	assert_type(roll.get("rolls"), TYPE_ARRAY)
	var sum := 0
	for r in roll.get("rolls", []):
		assert_type(r, TYPE_INT, "each roll is an int")
		sum += int(r)
	assert_eq(roll.get("total"), sum)
	# The same seed gives the same rolls.
	assert_eq(tools.call_tool("roll_rpg_dice", {"sides": 6, "count": 3, "seed": 42}), roll)


func test_unconvertible_arguments_name_the_field() -> void:
	var node_ref := RefCounted.new()
	var out := tools.call_tool("roll_rpg_dice", {"sides": 6, "extra": {"deep": node_ref}})
	assert_true(tools.last_call_failed())
	assert_eq(out.get("reason"), "invalid_args")
	assert_eq(out.get("field"), "extra.deep")
	assert_eq(out.get("tool"), "roll_rpg_dice")
	# A float where the schema wants an integer stays a float and is rejected by the schema.
	out = tools.call_tool("roll_rpg_dice", {"sides": 6, "count": 1.5})
	assert_eq(out.get("reason"), "invalid_args")
	assert_eq(out.get("field"), "count")


func test_call_tool_json() -> void:
	var text := tools.call_tool_json("roll_rpg_dice", "{\"sides\": 4, \"count\": 2, \"seed\": 7}")
	var parsed = tools.from_json(text)
	assert_type(parsed, TYPE_DICTIONARY)
	assert_eq(parsed.get("count"), 2)
	assert_eq(parsed, tools.call_tool("roll_rpg_dice", {"sides": 4, "count": 2, "seed": 7}))
	var bad_text := tools.call_tool_json("roll_rpg_dice", "{oops")
	assert_true(tools.last_call_failed())
	assert_eq(tools.from_json(bad_text).get("reason"), "invalid_args")


func test_typed_dictionary_arguments() -> void:
	var typed: Dictionary[String, int] = {"sides": 6, "count": 2, "seed": 5}
	var from_typed := tools.call_tool("roll_rpg_dice", typed)
	assert_false(tools.last_call_failed(), str(from_typed))
	assert_eq(from_typed, tools.call_tool("roll_rpg_dice", {"sides": 6, "count": 2, "seed": 5}))
