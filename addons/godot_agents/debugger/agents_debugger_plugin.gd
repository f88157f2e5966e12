## Adds the [b]Agents[/b] tab to the editor's Debugger panel: one [AgentsDebuggerPanel] per
## debugger session, fed the running game's [code]godot_agents:*[/code] messages, its actions
## sent back to the game. [code]plugin.gd[/code] registers it.
##
## The game side is built into [AgentRuntime]: in a debug build, while a debugger session is
## active, every runtime reports its agents up to twice a second (see
## [code]rust/godot/src/debugger.rs[/code] for the messages); a release export reports nothing.
@tool
extends EditorDebuggerPlugin

const PANEL := preload("res://addons/godot_agents/debugger/agents_debugger_panel.gd")

## Session id → its panel.
var panels := {}


func _has_capture(capture: String) -> bool:
	return capture == PANEL.CAPTURE


func _capture(message: String, data: Array, session_id: int) -> bool:
	var panel = panels.get(session_id)
	if panel == null:
		return false
	return panel.handle_message(message, data)


func _setup_session(session_id: int) -> void:
	var panel = PANEL.new()
	panels[session_id] = panel
	var session := get_session(session_id)
	panel.message_requested.connect(func(message: String, data: Array):
		if session.is_active():
			session.send_message(message, data))
	session.stopped.connect(panel.clear)
	session.add_session_tab(panel)
