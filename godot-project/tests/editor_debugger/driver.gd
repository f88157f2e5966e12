## Test-only editor plugin: drives the Agents debugger tab of a real editor against a real game
## (`cargo xtask test --suite editor_debugger`, under Xvfb). Does nothing unless the environment
## variable GODOT_AGENTS_EDITOR_DRIVER names the JSON file to write the outcome to.
##
## It starts GODOT_AGENTS_EDITOR_SCENE (default: the town) under the editor's debugger — with the
## editor's Play, or, when GODOT_AGENTS_EDITOR_GAME holds a JSON array with the command that runs
## Godot (an installation that needs a loader or a wrapper), as that command with
## `--remote-debug` to the editor's debug server (which xtask keeps open through the project's
## `debug_options/keep_server_open` metadata, the Debug menu's "Keep Debug Server Open") — waits for
## the tab to list the game's agents, selects one and waits for its decisions, pauses and resumes
## it, talks to it, terminates another, shows the tab, saves the editor window as a PNG next to
## the JSON file, stops the game and quits. Every step's outcome goes into the JSON file; xtask
## checks it.
@tool
extends EditorPlugin

const PANEL_SCRIPT := "res://addons/godot_agents/debugger/agents_debugger_panel.gd"
const LINE := "Hello from the debugger"

var _out := ""
var _game_pid := 0
var _result := {"problems": []}


func _enter_tree() -> void:
	_out = OS.get_environment("GODOT_AGENTS_EDITOR_DRIVER")
	if _out != "":
		print("EDITOR_DRIVER: driving the Agents tab, writing ", _out)
		_run.call_deferred()


func _run() -> void:
	await _seconds(2.0)
	var scene := OS.get_environment("GODOT_AGENTS_EDITOR_SCENE")
	if scene == "":
		scene = "res://demo/town.tscn"
	var panel = _find_panel(EditorInterface.get_base_control())
	if panel == null:
		_finish("the Agents tab is not in the editor (is the Godot Agents plugin enabled?)")
		return
	_result["tab_found"] = true
	var game := OS.get_environment("GODOT_AGENTS_EDITOR_GAME")
	if game == "":
		EditorInterface.play_custom_scene(scene)
	else:
		var command: Array = JSON.parse_string(game)
		var port: int = EditorInterface.get_editor_settings().get_setting("network/debug/remote_port")
		var args := PackedStringArray(command.slice(1))
		args.append_array(["--path", ProjectSettings.globalize_path("res://"), scene,
			"--remote-debug", "tcp://127.0.0.1:%d" % port])
		_game_pid = OS.create_process(command[0], args)
		if _game_pid <= 0:
			_finish("could not start the game: %s %s" % [command[0], args])
			return
	_result["scene"] = scene
	print("EDITOR_DRIVER: playing ", scene)
	if not await _until(func(): return panel.listed_agents().size() >= 2, 90.0):
		_finish("the tab listed %d agent(s) within 90 s (status: %s)" % [
			panel.listed_agents().size(), panel._status.text])
		return
	var ids: PackedStringArray = panel.listed_agents()
	_result["agents"] = ids.size()
	_result["status"] = panel._status.text
	var first := ids[0]
	panel.select_agent(first)
	_result["decisions"] = 0
	if await _until(func(): return panel.detail.get("decisions", []).size() > 0, 45.0):
		_result["decisions"] = panel.detail["decisions"].size()
		_result["decisions_text"] = panel.tab_text("Decisions").left(400)
	else:
		_problem("no decision of %s within 45 s" % first)
	panel.toggle_pause()
	_result["paused"] = await _until(func(): return panel._find_agent(first).get("paused", false), 10.0)
	panel.toggle_pause()
	_result["resumed"] = await _until(func(): return not panel._find_agent(first).get("paused", true), 10.0)
	panel._say.text = LINE
	panel.send_line()
	_result["line_in_conversation"] = await _until(
		func(): return panel.tab_text("Conversation").contains(LINE), 15.0)
	# Once the agent answered it, the line is a memory in its stream.
	_result["line_in_memory"] = await _until(
		func(): return panel.tab_text("Memory").contains(LINE), 15.0)
	var second := ids[1]
	panel.select_agent(second)
	panel.terminate()
	_result["terminated"] = await _until(func(): return not second in panel.listed_agents(), 10.0)
	panel.select_agent(first)
	await _until(func(): return panel.detail.get("agent_id", "") == first, 5.0)
	for step in ["paused", "resumed", "line_in_conversation", "line_in_memory", "terminated"]:
		if not _result[step]:
			_problem("step '%s' did not happen" % step)
	_show(panel)
	await _seconds(1.5)
	var png := _out.get_basename() + ".png"
	var image := EditorInterface.get_base_control().get_viewport().get_texture().get_image()
	_result["screenshot"] = png if image.save_png(png) == OK else ""
	_result["tab_visible"] = panel.is_visible_in_tree()
	_result["tab_size"] = [panel.size.x, panel.size.y]
	_finish("")


## Shows the tab: the bottom panel's Debugger, its Agents tab.
func _show(panel: Control) -> void:
	var node: Node = panel
	while node != null and node != EditorInterface.get_base_control():
		var parent := node.get_parent()
		if parent is TabContainer:
			parent.current_tab = parent.get_tab_idx_from_control(node)
		if node is Control and not node.visible:
			node.show()
		node = parent
	# Give the bottom panel room to show the list and the detail.
	var ancestor := panel.get_parent()
	while ancestor != null:
		if ancestor is SplitContainer and ancestor.vertical:
			ancestor.split_offset = -420
			break
		ancestor = ancestor.get_parent()


func _find_panel(node: Node) -> Node:
	var script = node.get_script()
	if script != null and script.resource_path == PANEL_SCRIPT:
		return node
	for child in node.get_children(true):
		var found := _find_panel(child)
		if found != null:
			return found
	return null


func _until(condition: Callable, timeout_seconds: float) -> bool:
	var deadline := Time.get_ticks_msec() + int(timeout_seconds * 1000.0)
	while Time.get_ticks_msec() < deadline:
		if condition.call():
			return true
		await get_tree().process_frame
	return condition.call()


func _seconds(s: float) -> void:
	await get_tree().create_timer(s).timeout


func _problem(why: String) -> void:
	_result["problems"].append(why)


func _finish(problem: String) -> void:
	if problem != "":
		_problem(problem)
	if EditorInterface.is_playing_scene():
		EditorInterface.stop_playing_scene()
	if _game_pid > 0:
		OS.kill(_game_pid)
	var file := FileAccess.open(_out, FileAccess.WRITE)
	file.store_string(JSON.stringify(_result, "  "))
	file.close()
	print("EDITOR_DRIVER_DONE ", _out)
	await _seconds(1.0)
	get_tree().quit(0 if _result["problems"].is_empty() else 1)
