## AI-vs-AI matches through GameTools, shared by the demo scene and tests/test_ai_games.gd.
##
## Every board game is driven the same way: `suggest_<game>_move` picks a move for whoever is to
## move, the move is checked against `legal_<game>_moves`, and `apply_<game>_move` plays it, until
## the snapshot says `status == "game_over"` (or the ply cap is reached).
extends RefCounted

## The board games, one entry each as `GameTools.games()` lists them: the game (`game`), its
## tools' names (`new`, `apply`, `legal`, `suggest`, …), the state field (`state`), the move
## argument (`move_arg`) and the field of the legal-moves list (`moves`).
static func board_games() -> Array:
	return GameTools.games().filter(func(spec: Dictionary) -> bool: return spec.board)


## The entry of `GameTools.games()` for `game` (a board game or a house game), or an empty
## Dictionary.
static func spec_for(game: String) -> Dictionary:
	for spec in GameTools.games():
		if spec.game == game:
			return spec
	return {}


## Plays one AI-vs-AI game. Options: `max_plies` (default 400), `time_ms` (search budget per move,
## default 20), `seed` (default 1), `levels` (a Dictionary from a `turn` value to the AI level of
## that side, e.g. `{"w": "hard", "b": "easy"}`; sides not listed use the tool's default, hard),
## `log` (a Callable taking one String, called for every move).
## Returns `{game, plies, finished, status, winner, problems: Array[String], final_state, last}`;
## `problems` lists every illegal suggestion, failed call or inconsistency.
static func play(tools: Object, spec: Dictionary, options := {}) -> Dictionary:
	var max_plies: int = options.get("max_plies", 400)
	var time_ms: int = options.get("time_ms", 20)
	var base_seed: int = options.get("seed", 1)
	var logger: Callable = options.get("log", Callable())
	var levels: Dictionary = options.get("levels", {})
	var problems: Array[String] = []
	var snapshot: Dictionary = tools.call_tool(spec.new, {"seed": base_seed})
	var result := {"game": spec.game, "plies": 0, "finished": false, "status": "",
		"winner": null, "problems": problems, "final_state": "", "last": snapshot}
	if snapshot.has("error") or not snapshot.has(spec.state):
		problems.append("%s failed: %s" % [spec.new, snapshot])
		return result
	var state: String = snapshot[spec.state]
	var status: String = snapshot.get("status", "")
	var plies := 0
	while status != "game_over" and plies < max_plies:
		var legal: Dictionary = tools.call_tool(spec.legal, {spec.state: state})
		var moves: Array = legal.get(spec.moves, [])
		if moves.is_empty():
			problems.append("%s: no legal moves while status is %s: %s" % [spec.game, status, legal])
			break
		var args := {spec.state: state, "timeMs": time_ms, "seed": base_seed + plies}
		if levels.has(snapshot.get("turn")):
			args["level"] = levels[snapshot.get("turn")]
		var suggestion: Dictionary = tools.call_tool(spec.suggest, args)
		if suggestion.get("type") != "ai_move" or not suggestion.has("move"):
			problems.append("%s failed at ply %d: %s" % [spec.suggest, plies, suggestion])
			break
		var move = suggestion.move
		if not _contains_strictly(moves, move):
			problems.append("%s suggested %s, not among the legal moves %s"
				% [spec.suggest, var_to_str(move), moves])
			break
		var mover = snapshot.get("turn", "?")
		snapshot = tools.call_tool(spec.apply, {spec.state: state, spec.move_arg: move})
		if snapshot.get("legal") != true:
			problems.append("%s rejected the legal move %s: %s" % [spec.apply, var_to_str(move), snapshot])
			break
		state = snapshot[spec.state]
		status = snapshot.get("status", "")
		plies += 1
		if logger.is_valid():
			logger.call("%s ply %d: %s plays %s -> %s" % [spec.game, plies, mover, var_to_str(move), status])
	result.plies = plies
	result.status = status
	result.final_state = state
	result.last = snapshot
	result.finished = status == "game_over"
	if result.finished:
		result.winner = snapshot.get("winner")
		if result.winner == null:
			problems.append("%s: game over without a winner field: %s" % [spec.game, snapshot])
		var after: Dictionary = tools.call_tool(spec.legal, {spec.state: state})
		if not after.get(spec.moves, [null]).is_empty():
			problems.append("%s: legal moves listed after game over: %s" % [spec.game, after])
	return result


## `item in array`, but `1` does not match `1.0`.
static func _contains_strictly(array: Array, item: Variant) -> bool:
	for element in array:
		if typeof(element) == typeof(item) and element == item:
			return true
	return false


## Value of a blackjack hand's cards ("AS,8D" → 19), aces counting 11 while that does not bust.
static func blackjack_hand_value(cards: String) -> int:
	var total := 0
	var aces := 0
	for card in cards.split(",", false):
		var rank := card.substr(0, 1)
		match rank:
			"A":
				total += 11
				aces += 1
			"T", "J", "Q", "K":
				total += 10
			_:
				total += rank.to_int()
	while total > 21 and aces > 0:
		total -= 10
		aces -= 1
	return total


## The cards of the hand the player is playing, from a blackjack state string.
static func blackjack_active_cards(state: String) -> String:
	var hands := ""
	var index := 0
	for part in state.split("|"):
		if part.begins_with("P:"):
			hands = part.substr(2)
		elif part.begins_with("H:"):
			index = part.substr(2).to_int()
	var list := hands.split(";")
	if index < 0 or index >= list.size():
		return ""
	return list[index].split("@")[0]


## Plays one blackjack round: the player hits below 17 and stands otherwise (doubling never),
## the dealer follows blackjack's `choose` tool. Returns `{finished, actions, problems, state,
## last}`.
static func play_blackjack(tools: Object, base_seed: int, logger := Callable()) -> Dictionary:
	var spec := spec_for("blackjack")
	var problems: Array[String] = []
	var snapshot: Dictionary = tools.call_tool(spec.new, {"stack": 1000, "bet": 10, "seed": base_seed})
	var result := {"finished": false, "actions": 0, "problems": problems, "state": "", "last": snapshot}
	if not snapshot.has("state"):
		problems.append("%s failed: %s" % [spec.new, snapshot])
		return result
	var state: String = snapshot.state
	var actions := 0
	while snapshot.get("status") != "game_over" and actions < 50:
		var action := ""
		if snapshot.get("turn") == "dealer":
			var choice: Dictionary = tools.call_tool(spec.choose, {"state": state})
			var offered: Array = choice.get("actions", [])
			if offered.is_empty():
				problems.append("dealer has no action: %s" % choice)
				break
			action = offered[0]
		else:
			var legal: Dictionary = tools.call_tool(spec.legal, {"state": state})
			var offered: Array = legal.get("actions", [])
			if offered.is_empty():
				problems.append("player has no action: %s" % legal)
				break
			var value := blackjack_hand_value(blackjack_active_cards(state))
			action = "hit" if value < 17 and "hit" in offered else "stand"
			if not action in offered:
				action = offered[0]
		var mover = snapshot.get("turn", "?")
		snapshot = tools.call_tool(spec.apply, {"state": state, "action": action})
		if snapshot.get("legal") != true:
			problems.append("%s rejected %s: %s" % [spec.apply, action, snapshot])
			break
		state = snapshot.state
		actions += 1
		if logger.is_valid():
			logger.call("blackjack: %s %s -> %s" % [mover, action, snapshot.get("status")])
	result.actions = actions
	result.state = state
	result.last = snapshot
	result.finished = snapshot.get("status") == "game_over"
	return result
