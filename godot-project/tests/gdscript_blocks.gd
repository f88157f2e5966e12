## A GDScript example as a script that can be compiled: shared by the tests that compile the
## docs' blocks (`test_docs_gdscript.gd`) and the class reference's examples
## (`test_class_reference.gd`).
##
## A block with `extends` at its left margin is a whole script; one with other declarations there
## (`func`, `@onready`, `@export`, `signal`, `class_name`) is the body of a script extending
## Node; any other block (statements, `var`s) is a function body.
extends RefCounted

const DECLARATIONS := ["func ", "@onready", "@export", "signal ", "class_name ", "static func "]


## The block as a script source.
static func as_script(block: String) -> String:
	var whole := false
	var declarations := false
	for line in block.split("\n"):
		if line.begins_with("extends "):
			whole = true
		for word in DECLARATIONS:
			if line.begins_with(word):
				declarations = true
	# A final newline: a one-line lambda at the very end of a file does not parse without one.
	if whole:
		return block + "\n"
	if declarations:
		return "extends Node\n\n" + block + "\n"
	var indent := "\t" if block.contains("\n\t") or block.begins_with("\t") else "    "
	var body := PackedStringArray()
	for line in block.split("\n"):
		body.append(indent + line if not line.strip_edges().is_empty() else "")
	return "extends Node\n\n\nfunc _snippet() -> void:\n" + "\n".join(body) + "\n" + indent + "pass\n"


## Whether `block` compiles (as [method as_script] makes it a script).
static func compiles(block: String) -> bool:
	var script := GDScript.new()
	script.source_code = as_script(block)
	return script.reload() == OK
