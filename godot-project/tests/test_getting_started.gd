## The getting-started page's scene, built as the page describes and run with the page's own
## script (read from docs/getting-started.md): the baker spawns with her GDScript tool, answers
## the player's question from it (the offline brain looks the stock up), and walks the village on
## her own along the navigation mesh.
extends "res://tests/test_base.gd"

const PAGE := "docs/getting-started.md"


## The page's script: the first ```gdscript block after "## 3. The script".
func _page_script() -> String:
	var root := ProjectSettings.globalize_path("res://").path_join("..").simplify_path()
	var text := FileAccess.get_file_as_string(root.path_join(PAGE))
	var from := text.find("## 3. The script")
	var start := text.find("```gdscript\n", from) + "```gdscript\n".length()
	var end := text.find("\n```", start)
	return text.substr(start, end - start)


func test_the_page_scene_runs() -> void:
	var source := _page_script()
	assert_true(source.begins_with("extends Node2D"), source.left(40))
	var script := GDScript.new()
	script.source_code = source
	assert_eq(script.reload(), OK, "the page's script compiles")
	# The scene of step 2.
	var village := Node2D.new()
	village.name = "Village"
	var runtime := AgentRuntime.new()
	runtime.name = "AgentRuntime"
	runtime.database_path = fresh_db("user://test_getting_started", "village")
	runtime.world_bounds = Rect2(0, 0, 1280, 720)
	runtime.idle_think_seconds = 0.2
	runtime.thinking_seconds = 0.02
	runtime.speaking_seconds = 0.02
	village.add_child(runtime)
	var region := NavigationRegion2D.new()
	var polygon := NavigationPolygon.new()
	polygon.vertices = PackedVector2Array([Vector2(0, 0), Vector2(1280, 0), Vector2(1280, 720), Vector2(0, 720)])
	polygon.add_polygon(PackedInt32Array([0, 1, 2, 3]))
	region.navigation_polygon = polygon
	village.add_child(region)
	var baker := CharacterBody2D.new()
	baker.name = "Baker"
	baker.position = Vector2(200, 200)
	var shape := CollisionShape2D.new()
	var circle := CircleShape2D.new()
	circle.radius = 8.0
	shape.shape = circle
	baker.add_child(shape)
	baker.add_child(NavigationAgent2D.new())
	var agent := AgentNode.new()
	agent.name = "AgentNode"
	var config := AgentConfig.new()
	config.name = "Mira"
	config.role = "baker"
	config.use_initial_position = false
	agent.config = config
	agent.move_speed = 400.0
	baker.add_child(agent)
	village.add_child(baker)
	village.set_script(script)
	add_to_tree(village)
	assert_true(await wait_until(func(): return agent.is_spawned(), 5.0), agent.get_last_error())
	assert_eq(agent.get_tool_names(), PackedStringArray(["check_stock"]))
	# Enter: the player's line, answered.
	var enter := InputEventAction.new()
	enter.action = "ui_accept"
	enter.pressed = true
	village._unhandled_input(enter)
	var id := agent.get_agent_id()
	assert_true(await wait_until(func():
		var lines: Array = runtime.get_conversation(id, 10).map(func(r): return r.content)
		return lines.has("Good morning! Any rye left?") and lines.size() >= 2, 10.0),
		str(runtime.get_conversation(id, 10)))
	# Offline too, she looked the stock up with the page's read-only tool and answered from it.
	var answers: Array = runtime.get_conversation(id, 10).filter(func(r):
		return r.sender == id and r.recipient == runtime.player_id)
	assert_true(answers.any(func(r): return r.content.contains("rye") and r.content.contains("3")),
		str(runtime.get_conversation(id, 10)))
	# On her own she walks: a move requested, walked along the mesh, finished.
	var finished := []
	agent.move_finished.connect(func(arrived, why): finished.append([arrived, why]))
	assert_true(await wait_until(func(): return finished.size() >= 1, 12.0), "she walked")
	assert_true(finished[0][0], str(finished))
	assert_ne(baker.position, Vector2(200, 200), "the body moved")
