## Every GDScript block of the user-facing docs (README.md, addons/godot_agents/README.md,
## docs/*.md) compiles with this Godot and this extension's classes.
##
## A block with `extends` at its left margin is a whole script; one with other declarations there
## (`func`, `@onready`, `@export`, `signal`, `class_name`) is the body of a script extending
## Node; any other block (statements, `var`s) is a function body. A block marked "```gdscript fragment" is a piece that cannot
## stand alone, and is skipped.
extends "res://tests/test_base.gd"

const DOCS := ["README.md", "addons/godot_agents/README.md", "docs"]
const Blocks := preload("res://tests/gdscript_blocks.gd")


func _root() -> String:
	return ProjectSettings.globalize_path("res://").path_join("..").simplify_path()


## The markdown files to read, absolute.
func _files() -> PackedStringArray:
	var out := PackedStringArray()
	for entry in DOCS:
		var path := _root().path_join(entry)
		if entry.ends_with(".md"):
			out.append(path)
			continue
		for name in DirAccess.get_files_at(path):
			if name.ends_with(".md"):
				out.append(path.path_join(name))
	return out


## `[[line number, text, fragment], …]` for each ```gdscript block of `text`.
func _blocks(text: String) -> Array:
	var blocks := []
	var lines := text.split("\n")
	var i := 0
	while i < lines.size():
		var fence := lines[i].strip_edges()
		if fence.begins_with("```gdscript"):
			var start := i + 1
			var body := PackedStringArray()
			i += 1
			while i < lines.size() and lines[i].strip_edges() != "```":
				body.append(lines[i])
				i += 1
			blocks.append([start, "\n".join(body), "fragment" in fence])
		i += 1
	return blocks


func test_every_gdscript_block_of_the_docs_compiles() -> void:
	var count := 0
	for path in _files():
		var text := FileAccess.get_file_as_string(path)
		assert_ne(text, "", "%s reads" % path)
		for block in _blocks(text):
			if block[2]:
				continue
			count += 1
			var where := "%s:%d" % [path.trim_prefix(_root() + "/"), block[0]]
			assert_true(Blocks.compiles(block[1]), "the GDScript block at %s compiles" % where)
	assert_true(count >= 9, "found the docs' blocks (%d)" % count)
