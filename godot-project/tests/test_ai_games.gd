## AI-vs-AI games to the end for every board game, with only legal moves
## (`suggest_<game>_move` + `apply_<game>_move`, checked against `legal_<game>_moves`).
extends "res://tests/test_base.gd"

const AiMatch := preload("res://demo/ai_match.gd")
## Chess: short searches and a ply cap keep the suite fast; the game must stay legal throughout.
const CHESS_TIME_MS := 10
const CHESS_PLY_CAP := 60

var tools := GameTools.new()


func _play(game: String, options := {}) -> Dictionary:
	var spec := AiMatch.spec_for(game)
	assert_false(spec.is_empty(), "%s is a known board game" % game)
	var result := AiMatch.play(tools, spec, options)
	for problem in result.problems:
		fail(problem)
	print("    %s: %d plies, status %s, winner %s" % [game, result.plies, result.status, result.winner])
	return result


func _assert_finished(result: Dictionary) -> void:
	assert_true(result.problems.is_empty(), "%s: only legal moves" % result.game)
	assert_eq(result.status, "game_over", "%s reaches game over" % result.game)
	assert_contains(["player", "opponent", "draw", "w", "b"], result.winner, "%s has a winner" % result.game)


func test_chess() -> void:
	var result := _play("chess", {"time_ms": CHESS_TIME_MS, "max_plies": CHESS_PLY_CAP, "seed": 3})
	assert_true(result.problems.is_empty(), "chess: only legal moves")
	assert_true(result.status == "game_over" or result.plies == CHESS_PLY_CAP,
		"chess ends or reaches the cap (%d plies, %s)" % [result.plies, result.status])
	if result.status == "game_over":
		assert_contains(["w", "b", "draw"], result.winner)


func test_checkers() -> void:
	# Checkers has no draw rule (the state carries no move counters), and two equal searches can
	# shuffle kings forever: a hard white against an easy black always gets a result.
	_assert_finished(_play("checkers",
		{"time_ms": 10, "max_plies": 600, "seed": 5, "levels": {"w": "hard", "b": "easy"}}))


func test_checkers_hard_against_hard_stays_legal() -> void:
	var result := _play("checkers", {"time_ms": 10, "max_plies": 120, "seed": 6})
	assert_true(result.problems.is_empty(), "checkers: only legal moves")
	assert_true(result.status == "game_over" or result.plies == 120)


func test_four_in_a_row() -> void:
	var result := _play("four_in_a_row", {"time_ms": 10, "seed": 7})
	_assert_finished(result)
	assert_true(result.plies <= 42, "at most 42 drops")


func test_tic_tac_toe() -> void:
	var result := _play("tic_tac_toe", {"time_ms": 10, "seed": 9})
	_assert_finished(result)
	# Perfect play on both sides always draws.
	assert_eq(result.winner, "draw", "two perfect tic-tac-toe players draw")


func test_mancala() -> void:
	_assert_finished(_play("mancala", {"time_ms": 10, "seed": 11}))


func test_sea_battle() -> void:
	var result := _play("sea_battle", {"time_ms": 10, "seed": 13})
	_assert_finished(result)
	assert_true(result.plies <= 200, "at most 200 shots")


## Every board game `GameTools.games()` lists is driven by its entry alone: a few plies of each
## stay legal (a new board game needs no change to `demo/ai_match.gd`).
func test_every_listed_board_game_plays_legally() -> void:
	var games := AiMatch.board_games()
	var names := games.map(func(spec: Dictionary) -> String: return spec.game)
	for game in ["chess", "checkers", "four_in_a_row", "tic_tac_toe", "mancala", "sea_battle"]:
		assert_contains(names, game, "board_games() lists %s" % game)
	assert_false("blackjack" in names, "blackjack is a house game")
	for spec in games:
		var result := AiMatch.play(tools, spec, {"time_ms": 5, "max_plies": 8, "seed": 21})
		assert_true(result.problems.is_empty(), "%s: only legal moves: %s" % [spec.game, result.problems])
		assert_true(result.plies > 0, "%s: played" % spec.game)
