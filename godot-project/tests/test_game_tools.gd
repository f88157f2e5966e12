## Every game tool through GameTools: definitions, the games that declare them (`games()`), a new
## game of each, legal moves, an apply, an illegal move, wrong-type arguments and unknown tools.
## The last test checks that every tool the registry lists was called here.
extends "res://tests/test_base.gd"

const CHESS_START := "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
const CHECKERS_START := ".b.b.b.b/b.b.b.b./.b.b.b.b/......../......../w.w.w.w./.w.w.w.w/w.w.w.w. w"

## Shared by all tests (a RefCounted: freed with the suite).
var tools := GameTools.new()
## Every tool called so far.
var called := {}


func call_tool(name: String, args: Dictionary) -> Dictionary:
	called[name] = true
	return tools.call_tool(name, args)


func assert_game_id(result: Dictionary) -> void:
	var id: String = result.get("gameId", "")
	var re := RegEx.create_from_string("^g_[0-9a-f]{32}$")
	assert_true(re.search(id) != null, "gameId %s" % id)


## Checks a legal apply: legal true, echoed gameId, status and turn present.
func assert_applied(result: Dictionary, game_type: String, game_id: String) -> void:
	assert_eq(result.get("legal"), true, str(result))
	assert_eq(result.get("gameType"), game_type)
	assert_eq(result.get("gameId"), game_id, "apply echoes the gameId")
	assert_contains(["in_progress", "game_over"], result.get("status"))
	assert_true(result.has("turn"), "turn in %s" % result)


## Checks an illegal apply: legal false, unchanged state, an error and a reason.
func assert_illegal(result: Dictionary, state_field: String, state: String) -> void:
	assert_eq(result.get("legal"), false, str(result))
	assert_eq(result.get(state_field), state, "the state is unchanged")
	assert_type(result.get("error"), TYPE_STRING)
	assert_type(result.get("reason"), TYPE_STRING)
	assert_true(tools.last_call_failed())


## Checks a wrong-type argument: invalid_args naming the field.
func assert_invalid_arg(name: String, args: Dictionary, field: String) -> void:
	var result := call_tool(name, args)
	assert_eq(result.get("reason"), "invalid_args", "%s with %s: %s" % [name, args, result])
	assert_eq(result.get("field"), field, "%s names the field" % name)
	assert_eq(result.get("tool"), name)
	assert_type(result.get("error"), TYPE_STRING)


func assert_choice(result: Dictionary, list_field: String, legal: Array, policy_key: String) -> void:
	assert_eq(result.get("type"), "opponent_choice", str(result))
	var options: Array = result.get(list_field, [])
	assert_false(options.is_empty(), "%s offers something" % list_field)
	assert_true(options.size() <= 20, "at most 20 candidates")
	for option in options:
		assert_contains(legal, option, "candidates are legal")
	var policy: Dictionary = result.get("policy", {})
	assert_eq(policy.get(policy_key), true)
	assert_eq(policy.get("chooseExactlyOne"), true)


func assert_suggestion(result: Dictionary, game_type: String, legal: Array) -> void:
	assert_eq(result.get("type"), "ai_move", str(result))
	assert_eq(result.get("gameType"), game_type)
	assert_true(result.has("move") and result.move in legal, "suggested move is legal: %s" % result)


## Every game tool, sorted: the `tools` of each game `GameTools.games()` lists (the public names
## are pinned by the Rust tests of the declarations).
func declared_tools() -> Array:
	var names := []
	for game in GameTools.games():
		names.append_array(Array(game.tools))
	names.sort()
	return names


func test_definitions() -> void:
	var expected := declared_tools()
	assert_true(expected.size() >= 30, "games() lists the game tools: %s" % [expected])
	var names := []
	for def in tools.list_tools():
		assert_has_keys(def, ["name", "description", "parameters", "read_only"])
		assert_type(def.get("read_only"), TYPE_BOOL)
		assert_eq(def.get("parameters", {}).get("type"), "object", "%s schema" % def.get("name"))
		assert_true(String(def.get("description", "")).length() > 10, "%s is described" % def.get("name"))
		names.append(def.name)
	assert_eq(names, expected, "the registry lists every declared game tool, sorted")
	assert_eq(Array(tools.tool_names()), expected)
	for name in expected:
		assert_true(tools.has_tool(name), name)
	assert_false(tools.has_tool("no_such_tool"))
	var read_only := {}
	for def in tools.list_tools():
		read_only[def.name] = def.read_only
	assert_eq(read_only.get("legal_chess_moves"), true)
	assert_eq(read_only.get("suggest_chess_move"), true)
	assert_eq(read_only.get("apply_chess_move"), false)


## `games()`: each game once, under its `gameType`, with its tools under their kinds; a board
## game's `state`, `move_arg` and `moves` drive a move (what `demo/ai_match.gd` relies on).
func test_games() -> void:
	var seen := {}
	for game in GameTools.games():
		assert_has_keys(game, ["game", "board", "tools"])
		assert_false(seen.has(game.game), "%s is listed once" % game.game)
		seen[game.game] = true
		for kind in ["new", "apply", "legal", "choose", "suggest", "spin", "roll"]:
			if game.has(kind):
				assert_contains(game.tools, game[kind], "%s's %s tool is one of its tools" % [game.game, kind])
		var first: Dictionary = call_tool(game.new, {"seed": 1}) if game.has("new") \
			else call_tool(game.roll, {"sides": 6, "seed": 1})
		assert_eq(first.get("gameType"), game.game, str(first))
		if not game.board:
			assert_false(game.has("suggest"), "%s: only board games have the AI" % game.game)
			continue
		assert_has_keys(game, ["new", "apply", "legal", "choose", "suggest", "state", "move_arg", "moves"])
		var legal := call_tool(game.legal, {game.state: first[game.state]})
		var moves: Array = legal.get(game.moves, [])
		assert_false(moves.is_empty(), "%s lists moves under %s: %s" % [game.game, game.moves, legal])
		var played := call_tool(game.apply, {game.state: first[game.state], game.move_arg: moves[0]})
		assert_eq(played.get("legal"), true, "%s plays %s: %s" % [game.game, moves[0], played])
	for game in ["chess", "checkers", "four_in_a_row", "tic_tac_toe", "mancala", "sea_battle",
			"blackjack", "slot", "rpg_dice"]:
		assert_true(seen.has(game), "games() lists %s" % game)


func test_unknown_tool() -> void:
	var result := tools.call_tool("no_such_tool", {"x": 1})
	assert_eq(result.get("reason"), "unknown_tool")
	assert_eq(result.get("tool"), "no_such_tool")
	assert_true(tools.last_call_failed())
	assert_contains(tools.last_error(), "no_such_tool")


func test_chess() -> void:
	var game := call_tool("new_chess_game", {"side": "black"})
	assert_eq(game.get("type"), "chess_snapshot")
	assert_eq(game.get("gameType"), "chess")
	assert_eq(game.get("fen"), CHESS_START)
	assert_eq(game.get("status"), "in_progress")
	assert_eq(game.get("turn"), "w")
	assert_eq(game.get("playerSide"), "black")
	assert_game_id(game)

	var legal := call_tool("legal_chess_moves", {"fen": CHESS_START})
	assert_eq(legal.get("type"), "legal_moves")
	var moves: Array = legal.get("movesUci", [])
	assert_eq(moves.size(), 20)
	assert_contains(moves, "e2e4")

	var after := call_tool("apply_chess_move", {"gameId": game.get("gameId", ""), "fen": CHESS_START, "moveUci": "e2e4"})
	assert_applied(after, "chess", game.get("gameId", ""))
	assert_eq(after.get("fen"), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
	assert_eq(after.get("turn"), "b")
	assert_eq(after.get("lastMove"), {"uci": "e2e4", "san": "e4"})
	assert_eq(after.get("check"), false)

	var illegal := call_tool("apply_chess_move", {"fen": CHESS_START, "moveUci": "e2e5"})
	assert_illegal(illegal, "fen", CHESS_START)
	assert_true(String(illegal.get("error", "")).begins_with("Illegal move"), str(illegal))

	assert_choice(call_tool("choose_chess_opponent_move", {"fen": after.get("fen", "")}), "movesUci",
		call_tool("legal_chess_moves", {"fen": after.get("fen", "")}).get("movesUci", []), "mustChooseFromMovesUci")
	assert_suggestion(call_tool("suggest_chess_move", {"fen": CHESS_START, "timeMs": 20}), "chess", moves)

	assert_invalid_arg("apply_chess_move", {"fen": 5, "moveUci": "e2e4"}, "fen")
	assert_invalid_arg("legal_chess_moves", {}, "fen")


func test_checkers() -> void:
	var game := call_tool("new_checkers_game", {})
	assert_eq(game.get("type"), "checkers_snapshot")
	assert_eq(game.get("state"), CHECKERS_START)
	assert_eq(game.get("turn"), "w")
	assert_game_id(game)

	var legal := call_tool("legal_checkers_moves", {"state": CHECKERS_START})
	assert_eq(legal.get("moves"), ["a3b4", "c3b4", "c3d4", "e3d4", "e3f4", "g3f4", "g3h4"])
	assert_eq(legal.get("mustCapture"), false)
	assert_eq(legal.get("forcedCaptures"), [])

	var after := call_tool("apply_checkers_move", {"gameId": game.get("gameId", ""), "state": CHECKERS_START, "move": "C3-D4"})
	assert_applied(after, "checkers", game.get("gameId", ""))
	assert_eq(after.get("turn"), "b")
	assert_eq(after.get("lastMove"), {"notation": "c3d4"})

	var illegal := call_tool("apply_checkers_move", {"state": CHECKERS_START, "move": "a3a4"})
	assert_illegal(illegal, "state", CHECKERS_START)
	assert_eq(illegal.get("error"), "Illegal move.")

	var reply_moves: Array = call_tool("legal_checkers_moves", {"state": after.get("state", "")}).get("moves", [])
	assert_choice(call_tool("choose_checkers_opponent_move", {"state": after.get("state", "")}), "moves",
		reply_moves, "mustChooseFromMoves")
	assert_suggestion(call_tool("suggest_checkers_move", {"state": after.get("state", ""), "timeMs": 20}), "checkers", reply_moves)

	assert_invalid_arg("apply_checkers_move", {"state": CHECKERS_START, "move": 34}, "move")


func test_four_in_a_row() -> void:
	var game := call_tool("new_four_in_a_row_game", {})
	assert_eq(game.get("type"), "four_in_a_row_snapshot")
	assert_eq(game.get("turn"), "player")
	assert_game_id(game)
	var start: String = game.get("state", "")
	assert_eq(call_tool("legal_four_in_a_row_moves", {"state": start}).get("moves"), [1, 2, 3, 4, 5, 6, 7])

	var after := call_tool("apply_four_in_a_row_move", {"gameId": game.get("gameId", ""), "state": start, "column": 4})
	assert_applied(after, "four_in_a_row", game.get("gameId", ""))
	assert_eq(after.get("turn"), "opponent")
	assert_eq(after.get("lastAction"), "4")

	# Fill column 1 (alternating players, nobody wins), then it is full.
	var state := start
	for i in 6:
		var r := call_tool("apply_four_in_a_row_move", {"state": state, "column": 1})
		assert_eq(r.get("legal"), true, "drop %d into column 1" % (i + 1))
		state = r.get("state", state)
	assert_false(1 in call_tool("legal_four_in_a_row_moves", {"state": state}).get("moves", [1]))
	var full := call_tool("apply_four_in_a_row_move", {"state": state, "column": 1})
	assert_illegal(full, "state", state)
	assert_eq(full.get("reason"), "column_full")
	assert_eq(full.get("error"), "Illegal move.")

	var moves: Array = call_tool("legal_four_in_a_row_moves", {"state": after.get("state", "")}).get("moves", [])
	assert_choice(call_tool("choose_four_in_a_row_opponent_move", {"state": after.get("state", "")}), "moves",
		moves, "mustChooseFromMoves")
	var ai := call_tool("suggest_four_in_a_row_move", {"state": after.get("state", ""), "timeMs": 20})
	assert_suggestion(ai, "four_in_a_row", moves)
	assert_type(ai.get("move"), TYPE_INT, "columns are ints")

	assert_invalid_arg("apply_four_in_a_row_move", {"state": start, "column": "3"}, "column")


func test_tic_tac_toe() -> void:
	var game := call_tool("new_tic_tac_toe_game", {"side": "O"})
	assert_eq(game.get("type"), "tic_tac_toe_snapshot")
	assert_eq(game.get("turn"), "player")
	assert_game_id(game)
	var start: String = game.get("state", "")
	var moves: Array = call_tool("legal_tic_tac_toe_moves", {"state": start}).get("moves", [])
	assert_eq(moves, ["A1", "B1", "C1", "A2", "B2", "C2", "A3", "B3", "C3"])

	var after := call_tool("apply_tic_tac_toe_move", {"gameId": game.get("gameId", ""), "state": start, "coord": "B2"})
	assert_applied(after, "tic_tac_toe", game.get("gameId", ""))
	assert_eq(after.get("turn"), "opponent")
	assert_eq(after.get("lastAction"), "B2")

	var taken := call_tool("apply_tic_tac_toe_move", {"state": after.get("state", ""), "coord": "B2"})
	assert_illegal(taken, "state", after.get("state", ""))
	assert_eq(taken.get("error"), "Illegal move.")

	var reply: Array = call_tool("legal_tic_tac_toe_moves", {"state": after.get("state", "")}).get("moves", [])
	assert_eq(reply.size(), 8)
	assert_choice(call_tool("choose_tic_tac_toe_opponent_move", {"state": after.get("state", "")}), "moves",
		reply, "mustChooseFromMoves")
	assert_suggestion(call_tool("suggest_tic_tac_toe_move", {"state": after.get("state", "")}), "tic_tac_toe", reply)

	assert_invalid_arg("apply_tic_tac_toe_move", {"state": start, "coord": ["B2"]}, "coord")


func test_mancala() -> void:
	var game := call_tool("new_mancala_game", {})
	assert_eq(game.get("type"), "mancala_snapshot")
	assert_eq(game.get("turn"), "player")
	assert_game_id(game)
	var start: String = game.get("state", "")
	assert_eq(call_tool("legal_mancala_moves", {"state": start}).get("moves"), [1, 2, 3, 4, 5, 6])

	# Pit 3 holds 4 seeds and ends in the store: an extra turn.
	var after := call_tool("apply_mancala_move", {"gameId": game.get("gameId", ""), "state": start, "pit": 3})
	assert_applied(after, "mancala", game.get("gameId", ""))
	assert_eq(after.get("turn"), "player")
	assert_true(String(after.get("lastAction", "")).begins_with("pit3"), str(after))
	assert_contains(String(after.get("lastAction", "")), "extra_turn")

	# Pit 3 is empty now.
	var empty := call_tool("apply_mancala_move", {"state": after.get("state", ""), "pit": 3})
	assert_illegal(empty, "state", after.get("state", ""))
	assert_eq(empty.get("error"), "Illegal move.")

	var moves: Array = call_tool("legal_mancala_moves", {"state": after.get("state", "")}).get("moves", [])
	assert_false(3 in moves)
	assert_choice(call_tool("choose_mancala_opponent_move", {"state": after.get("state", "")}), "moves",
		moves, "mustChooseFromMoves")
	assert_suggestion(call_tool("suggest_mancala_move", {"state": after.get("state", ""), "timeMs": 20}), "mancala", moves)

	assert_invalid_arg("apply_mancala_move", {"state": start, "pit": 2.5}, "pit")


func test_sea_battle() -> void:
	var game := call_tool("new_sea_battle_game", {"seed": 11})
	assert_eq(game.get("type"), "sea_battle_snapshot")
	assert_eq(game.get("turn"), "player")
	assert_game_id(game)
	assert_eq(call_tool("new_sea_battle_game", {"seed": 11}).get("state"), game.get("state", ""), "seeded fleets repeat")
	var start: String = game.get("state", "")
	var moves: Array = call_tool("legal_sea_battle_moves", {"state": start}).get("moves", [])
	assert_eq(moves.size(), 100)
	assert_eq(moves.slice(0, 3), ["A1", "B1", "C1"])

	var after := call_tool("apply_sea_battle_move", {"gameId": game.get("gameId", ""), "state": start, "coord": "A1"})
	assert_applied(after, "sea_battle", game.get("gameId", ""))
	assert_eq(after.get("turn"), "opponent")
	assert_true(String(after.get("lastAction", "")).begins_with("A1:"), str(after))

	var outside := call_tool("apply_sea_battle_move", {"state": start, "coord": "K11"})
	assert_illegal(outside, "state", start)

	var reply: Array = call_tool("legal_sea_battle_moves", {"state": after.get("state", "")}).get("moves", [])
	assert_eq(reply.size(), 100, "the opponent has not fired yet")
	assert_choice(call_tool("choose_sea_battle_opponent_move", {"state": after.get("state", "")}), "moves",
		reply, "mustChooseFromMoves")
	assert_suggestion(call_tool("suggest_sea_battle_move", {"state": after.get("state", ""), "seed": 3}), "sea_battle", reply)

	assert_invalid_arg("apply_sea_battle_move", {"state": start, "coord": 11}, "coord")


func test_blackjack() -> void:
	var game := call_tool("new_blackjack_game", {"stack": 1000, "bet": 10, "seed": 5})
	assert_eq(game.get("type"), "blackjack_snapshot")
	assert_eq(game.get("lastAction"), "deal")
	assert_game_id(game)
	assert_eq(call_tool("new_blackjack_game", {"stack": 1000, "bet": 10, "seed": 5}).get("state"),
		game.get("state", ""), "seeded shoes repeat")
	var state: String = game.get("state", "")
	# Find a seed without a natural, so the player has a decision.
	var deal_seed := 5
	while game.get("status") == "game_over" and deal_seed < 60:
		deal_seed += 1
		game = call_tool("new_blackjack_game", {"stack": 1000, "bet": 10, "seed": deal_seed})
		state = game.get("state", "")
	assert_eq(game.get("turn"), "player")

	var legal := call_tool("legal_blackjack_actions", {"state": state})
	assert_eq(legal.get("type"), "legal_actions")
	var actions: Array = legal.get("actions", [])
	assert_eq(actions.slice(0, 2), ["hit", "stand"])

	var stood := call_tool("apply_blackjack_action", {"gameId": game.get("gameId", ""), "state": state, "action": "stand"})
	assert_applied(stood, "blackjack", game.get("gameId", ""))
	assert_eq(stood.get("lastAction"), "stand")
	assert_eq(stood.get("turn"), "dealer")

	var dealer := call_tool("choose_blackjack_dealer_action", {"state": stood.get("state", "")})
	assert_eq(dealer.get("type"), "opponent_choice")
	assert_eq(dealer.get("actions", []).size(), 1, "the dealer has exactly one legal action")
	var policy: Dictionary = dealer.get("policy", {})
	assert_eq(policy.get("mustChooseFromActions"), true)
	assert_eq(policy.get("mustNotRevealDealerHoleCardInChat"), true)

	# The player cannot act on the dealer's turn.
	var wrong_turn := call_tool("apply_blackjack_action", {"state": stood.get("state", ""), "action": "double"})
	assert_illegal(wrong_turn, "state", stood.get("state", ""))

	assert_invalid_arg("apply_blackjack_action", {"state": state, "action": 1}, "action")
	assert_invalid_arg("new_blackjack_game", {"stack": "lots"}, "stack")


func test_slot() -> void:
	var game := call_tool("new_slot_game", {"stack": 1000, "bet": 10})
	assert_eq(game.get("type"), "slot_snapshot")
	assert_eq(game.get("stack"), 1000)
	assert_eq(game.get("bet"), 10)
	assert_eq(game.get("reels"), [])
	assert_eq(game.get("payout"), 0)
	var spin := call_tool("spin_slot", {"state": game.get("state", ""), "seed": 9})
	assert_eq(spin.get("legal"), true, str(spin))
	assert_eq(spin.get("lastAction"), "spin")
	assert_eq(spin.get("reels", []).size(), 3)
	assert_type(spin.get("payout"), TYPE_INT)
	assert_eq(spin.get("stack"), 1000 - 10 + int(spin.get("payout", 0)))
	assert_eq(call_tool("spin_slot", {"state": game.get("state", ""), "seed": 9}), spin, "seeded spins repeat")
	assert_invalid_arg("spin_slot", {"state": 3}, "state")


func test_dice() -> void:
	var roll := call_tool("roll_rpg_dice", {"sides": 20, "count": 2, "seed": 1})
	assert_eq(roll.get("type"), "rpg_dice_roll")
	assert_eq(roll.get("sides"), 20)
	assert_eq(roll.get("count"), 2)
	var rolls: Array = roll.get("rolls", [])
	assert_eq(rolls.size(), 2)
	for r in rolls:
		assert_true(r is int and r >= 1 and r <= 20, "roll %s in 1..20" % r)
	var bad := call_tool("roll_rpg_dice", {"sides": 7})
	assert_true(bad.has("error"), "d7 is refused: %s" % bad)
	assert_true(tools.last_call_failed())
	assert_invalid_arg("roll_rpg_dice", {"sides": "20"}, "sides")


func test_game_over_lists_are_empty_with_a_note() -> void:
	# Fool's mate: black has delivered mate, white has no moves.
	var mate := "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
	var legal := call_tool("legal_chess_moves", {"fen": mate})
	assert_eq(legal.get("movesUci"), [])
	assert_false(tools.last_call_failed())
	assert_contains(tools.last_notes(), "No legal moves available; the game is over.")
	var ai := call_tool("suggest_chess_move", {"fen": mate})
	assert_eq(ai.get("reason"), "game_over")
	assert_true(tools.last_call_failed())


func test_every_tool_was_called() -> void:
	var missing := []
	for name in tools.tool_names():
		if not called.has(name):
			missing.append(name)
	assert_eq(missing, [], "tools this suite never called")
