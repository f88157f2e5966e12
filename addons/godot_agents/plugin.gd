## Editor plugin of Godot Agents.
##
## The classes themselves come from the GDExtension (godot_agents.gdextension) and need no
## registration here. The plugin adds the [b]Agents[/b] tab to the Debugger panel (live agents of
## the running game, see [AgentsDebuggerPlugin]) and one entry to Project > Tools that lists the
## game tools the extension provides, which also shows at a glance whether the library loaded.
@tool
extends EditorPlugin

const MENU_ITEM := "Godot Agents: List Game Tools"
const DEBUGGER := preload("res://addons/godot_agents/debugger/agents_debugger_plugin.gd")

var _debugger: EditorDebuggerPlugin


func _enter_tree() -> void:
	add_tool_menu_item(MENU_ITEM, _list_game_tools)
	_debugger = DEBUGGER.new()
	add_debugger_plugin(_debugger)


func _exit_tree() -> void:
	remove_tool_menu_item(MENU_ITEM)
	if _debugger != null:
		remove_debugger_plugin(_debugger)
		_debugger = null


func _list_game_tools() -> void:
	if not ClassDB.class_exists("GameTools"):
		push_warning("Godot Agents: the GDExtension is not loaded; run `cargo xtask build`.")
		return
	var tools = ClassDB.instantiate("GameTools")
	var names: PackedStringArray = tools.tool_names()
	print("Godot Agents: %d game tools: %s" % [names.size(), ", ".join(names)])
