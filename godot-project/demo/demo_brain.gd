## Which brain the showcase's agents think with: the menu shows it, and the town, Ivy (the board
## game) and Morgana (the dungeon's game master) use it. Chosen by configuration, never in code,
## first match wins:
##
## 1. the AGENTS_DEMO_* environment variables (docs/brains.md, "Running the demo town on a real
##    model"): AGENTS_DEMO_PROVIDER (openai, anthropic, cli, local), AGENTS_DEMO_MODEL,
##    AGENTS_DEMO_BASE_URL, AGENTS_DEMO_API_KEY_ENV, AGENTS_DEMO_COMMAND,
##    AGENTS_DEMO_CLI_BACKEND, AGENTS_DEMO_MODEL_URL and AGENTS_DEMO_MODEL_SHA256 (local: a model
##    downloaded once into user://models);
## 2. AGENTS_DEMO_BRAIN: the path of an [AgentBrain] resource (`.tres`; `res://`, `user://` or a
##    file system path);
## 3. [constant BRAIN_FILE], `res://demo/brain.tres`, an [AgentBrain] you edit in the inspector
##    (its provider is `scripted` as shipped);
## 4. otherwise, and whenever the provider is `scripted`: the offline `scripted` brain.
##
## See demo/README.md.
extends RefCounted

## The brain resource of the demo project.
const BRAIN_FILE := "res://demo/brain.tres"


## The demo brain as `{brain, label, source, error}`: `brain` an [AgentBrain], or null for the
## offline `scripted` brain; `label` what to show (`scripted`, `openai llama3.1 at http://…`);
## `source` where it was configured (`AGENTS_DEMO_PROVIDER`, a file's path, or `""`); `error`
## what is wrong with the configuration (`""` when nothing is; then `brain` is null).
static func resolve() -> Dictionary:
	var provider := _env("AGENTS_DEMO_PROVIDER")
	if provider != "":
		if provider == "scripted":
			return _scripted()
		var brain := AgentBrain.new()
		brain.provider = provider
		brain.model = _env("AGENTS_DEMO_MODEL")
		brain.base_url = _env("AGENTS_DEMO_BASE_URL")
		brain.api_key_env = _env("AGENTS_DEMO_API_KEY_ENV")
		var command := _env("AGENTS_DEMO_COMMAND")
		if command != "":
			brain.command = command.split(" ", false)
		brain.cli_backend = _env("AGENTS_DEMO_CLI_BACKEND")
		brain.model_url = _env("AGENTS_DEMO_MODEL_URL")
		brain.model_sha256 = _env("AGENTS_DEMO_MODEL_SHA256")
		return _checked(brain, "AGENTS_DEMO_PROVIDER")
	var path := _env("AGENTS_DEMO_BRAIN")
	if path == "":
		path = BRAIN_FILE
		if not ResourceLoader.exists(path):
			return _scripted()
	var loaded: Resource = ResourceLoader.load(path) if ResourceLoader.exists(path) else null
	var file_brain := loaded as AgentBrain
	if file_brain == null:
		var result := _scripted()
		result.error = ("%s is not an AgentBrain resource" if loaded else "%s was not found") % path
		result.source = path
		return result
	if String(file_brain.provider).strip_edges() in ["", "scripted"]:
		var result := _scripted()
		result.source = path
		return result
	return _checked(file_brain, path)


## A short line saying which brain it is and where it comes from, for the scenes' headers.
static func describe(resolved: Dictionary) -> String:
	if resolved.error != "":
		return "Brain: scripted (%s)" % resolved.error
	if resolved.brain == null:
		return "Brain: scripted (offline)"
	return "Brain: %s" % resolved.label


## "provider model at base_url", as the town prints it.
static func label_of(brain: AgentBrain) -> String:
	var label := String(brain.provider)
	if brain.model != "":
		label += " " + brain.model
	elif brain.model_url != "":
		label += " " + brain.model_url
	if brain.base_url != "":
		label += " at " + brain.base_url
	return label


static func _checked(brain: AgentBrain, source: String) -> Dictionary:
	var invalid := brain.validate()
	if invalid != "":
		var result := _scripted()
		var what := "the AGENTS_DEMO_* brain" if source == "AGENTS_DEMO_PROVIDER" else source
		result.error = "%s: %s" % [what, invalid]
		result.source = source
		return result
	return {"brain": brain, "label": label_of(brain), "source": source, "error": ""}


static func _scripted() -> Dictionary:
	return {"brain": null, "label": "scripted", "source": "", "error": ""}


static func _env(name: String) -> String:
	return OS.get_environment(name).strip_edges()
