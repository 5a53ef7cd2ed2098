"""Speed of a knight-split walk from Python, beside the numbers docs/benchmarks.md gives for
Google's `unitary` quantum chess.

Run:  pip install ./crates/qchess-py && python examples/python/knight_walk_speed.py [plies]

The walk: both sides play only knight moves, always the first legal knight split
(`s^t1t2`) in move-list order, or the first knight jump when no split is left; every move
doubles the superposition until the walk stops. It is deterministic (seed 0): the same
plies give the same final state size on every machine. The time is wall clock for the
whole walk, Python call overhead included.
"""

import os
import re
import sys
import time

import qchess

KNIGHT_FROM = re.compile(r"^([a-h][1-8])")


def knight_moves(g):
    """Legal moves of the side to move's knights: splits first, then jumps."""
    letters = "N" if g.side_to_move == "w" else "n"
    board = {}
    rows = g.fen.split()[0].split("/")
    for r, row in enumerate(rows):
        f = 0
        for c in row:
            if c.isdigit():
                f += int(c)
            else:
                board["abcdefgh"[f] + str(8 - r)] = c
                f += 1
    mine = [m for m in g.legal_moves() if board.get(KNIGHT_FROM.match(m).group(1)) == letters]
    return [m for m in mine if "^" in m and m.index("^") == 2] + [m for m in mine if "^" not in m]


def walk(plies):
    g = qchess.CantwellGame(seed=0)
    played = 0
    start = time.perf_counter()
    for _ in range(plies):
        moves = knight_moves(g)
        if not moves:
            break
        g.play(moves[0])
        played += 1
    return played, time.perf_counter() - start, g.state_size


def unitary_numbers():
    """Lines of docs/benchmarks.md that give a number for `unitary`, if any."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "benchmarks.md")
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    return [ln for ln in lines if "unitary" in ln.lower() and re.search(r"\d", ln)]


def main():
    plies = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    played, seconds, size = walk(plies)
    print(f"qchess (Python binding): knight-split walk, {played} plies, "
          f"final superposition {size} basis states, {seconds:.3f} s "
          f"({played / seconds:.1f} moves/s)")
    ref = unitary_numbers()
    if ref:
        print("docs/benchmarks.md on unitary:")
        for line in ref:
            print("   ", line.strip())
    else:
        print("docs/benchmarks.md gives no numbers for Google's `unitary` quantum chess yet, "
              "so there is nothing to compare against: no figure is invented here. "
              "Measure unitary on the same walk and add it to docs/benchmarks.md.")


if __name__ == "__main__":
    main()
