"""The reference a user might run instead of apply_chess_move: python-chess doing
FEN -> push UCI -> FEN + SAN on the same (FEN, UCI) pairs as the Rust bench.

Usage: python3 python_chess.py PAIRS_FILE   (lines: FEN<TAB>UCI)
Prints `python-chess <version>` and `ops_per_sec <n>` (best of 5 one-second-ish rounds).
"""
import sys
import time

import chess


def main() -> None:
    pairs = [line.rstrip("\n").split("\t") for line in open(sys.argv[1], encoding="utf-8") if line.strip()]

    def work(n: int) -> float:
        start = time.perf_counter()
        for i in range(n):
            fen, uci = pairs[i % len(pairs)]
            board = chess.Board(fen)
            move = board.parse_uci(uci)  # validates legality, as apply_chess_move does
            san = board.san(move)
            board.push(move)
            out = board.fen()
            # what apply_chess_move also reports
            board.is_check()
            board.is_game_over()
            assert san and out
        return time.perf_counter() - start

    work(len(pairs))
    n = 1000
    while work(n) < 0.2:
        n *= 2
    best = max(5 * n / work(5 * n) for _ in range(5))
    print(f"python-chess {chess.__version__}")
    print(f"ops_per_sec {best:.0f}")


if __name__ == "__main__":
    main()
