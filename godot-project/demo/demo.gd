## The demo: every board game played AI against AI through GameTools, a blackjack round, dice
## rolls and slot spins, each move printed. Headless (`cargo xtask demo`) it quits when done with
## exit code 0, or 1 when anything went wrong; in a window it shows the log and stays open.
extends Node

const AiMatch := preload("res://demo/ai_match.gd")

## Search budget per AI move, in milliseconds.
@export var time_ms := 20
## Chess games are cut off after this many plies (the other games always finish).
@export var chess_ply_cap := 200
## AI level of each side per game (keyed by the snapshot's `turn`); the stronger side makes sure
## chess and checkers (which has no draw rule) reach a result. Games not listed: hard against hard.
@export var levels := {
	"chess": {"w": "hard", "b": "random"},
	"checkers": {"w": "hard", "b": "easy"},
}
## Seed of every random choice, so runs repeat.
@export var rng_seed := 2024

var _log_label: RichTextLabel
var _failures: Array[String] = []


func _ready() -> void:
	if DisplayServer.get_name() != "headless":
		_log_label = RichTextLabel.new()
		_log_label.set_anchors_preset(Control.PRESET_FULL_RECT)
		_log_label.scroll_following = true
		_log_label.bbcode_enabled = false
		add_child(_log_label)
	_run()
	_say("")
	if _failures.is_empty():
		_say("DEMO OK: every game finished with legal moves only")
	else:
		_say("DEMO FAILED:")
		for failure in _failures:
			_say("  " + failure)
	if DisplayServer.get_name() == "headless":
		get_tree().quit(0 if _failures.is_empty() else 1)


func _say(line: String) -> void:
	print(line)
	if _log_label:
		_log_label.add_text(line + "\n")


func _run() -> void:
	var tools := GameTools.new()
	_say("Godot Agents demo: %d game tools" % tools.list_tools().size())
	for spec in AiMatch.board_games():
		_say("")
		_say("== %s (%s) ==" % [spec.game, levels.get(spec.game, "hard against hard")])
		var cap: int = chess_ply_cap if spec.game == "chess" else 1000
		var result := AiMatch.play(tools, spec, {
			"max_plies": cap, "time_ms": time_ms, "seed": rng_seed, "log": _say,
			"levels": levels.get(spec.game, {})})
		for problem in result.problems:
			_failures.append(problem)
		if result.finished:
			_say("%s: game over after %d plies, winner: %s" % [spec.game, result.plies, result.winner])
		elif spec.game == "chess" and result.plies >= cap and result.problems.is_empty():
			_say("chess: stopped at the %d-ply cap (FEN %s)" % [cap, result.final_state])
		else:
			_failures.append("%s did not finish (%d plies)" % [spec.game, result.plies])

	_say("")
	_say("== blackjack ==")
	var hand := AiMatch.play_blackjack(tools, rng_seed, _say)
	_failures.append_array(hand.problems)
	if hand.finished:
		_say("blackjack: game over, state %s" % hand.state)
	else:
		_failures.append("the blackjack round did not finish")

	_say("")
	_say("== RPG dice ==")
	var dice := AiMatch.spec_for("rpg_dice")
	for sides in [4, 6, 8, 10, 12, 20, 100]:
		var roll: Dictionary = tools.call_tool(dice.roll, {"sides": sides, "count": 2, "seed": rng_seed + sides})
		if roll.has("error"):
			_failures.append("%s d%d: %s" % [dice.roll, sides, roll.error])
		else:
			_say("2d%d: %s = %s" % [sides, roll.rolls, roll.total])

	_say("")
	_say("== slot machine ==")
	var machine := AiMatch.spec_for("slot")
	var slot: Dictionary = tools.call_tool(machine.new, {"stack": 100, "bet": 10, "seed": rng_seed})
	if slot.has("error"):
		_failures.append("%s: %s" % [machine.new, slot.error])
		return
	for spin in 3:
		slot = tools.call_tool(machine.spin, {"state": slot.state, "seed": rng_seed + spin})
		if slot.has("error"):
			_failures.append("%s: %s" % [machine.spin, slot.error])
			return
		_say("spin %d: %s payout %s, stack %s" % [spin + 1, " ".join(slot.reels), slot.payout, slot.stack])
