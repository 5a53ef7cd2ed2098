"""Cantwell (2019), section 11, from Python: Bell states and interference in one minute.

Run:  pip install ./crates/qchess-py && python examples/python/paper_bell_interference.py

The circuits use qchess.sim.State (one qubit per square, a1 = 0, b1 = 1, a2 = 8, b2 = 9) with
the paper's gates: a jump is an iSwap (|01> -> i|10>), a split s^t1t2 is sqrt-iSwap(s, t1)
then iSwap(s, t2). The last part shows the same interference through a real game.
"""

import math

import qchess
from qchess.sim import State

A1, B1, A2, B2 = 0, 1, 8, 9
H = 1 / math.sqrt(2)


def kets(state):
    """The amplitudes as {occupied squares: amplitude}."""
    names = {A1: "a1", B1: "b1", A2: "a2", B2: "b2"}
    out = {}
    for basis, amp in state.amplitudes():
        out[",".join(n for q, n in names.items() if basis >> q & 1)] = amp
    return out


def close(a, b):
    return abs(a - b) < 1e-12


# --- Bell states, eq. 45-48: a king on a1 split to a2 and b1, then jumps -------------------
king = State([A1])
king.split(A1, A2, B1)        # a1^a2b1: i/sqrt2 (|a2> + |b1>)
king.iswap(B1, A1)            # b1a1 (jump)
king.iswap(B1, A2)            # b1a2 (jump): the king is on a1 or b1...
psi = kets(king)
print("after a1^a2b1, b1a1, b1a2:", psi)
# ...in a Bell state of the (b1, a1) pair: both amplitudes of equal size, the pair never
# both empty or both full (Psi+ up to a global phase, eq. 46).
assert set(psi) == {"a1", "b1"}
assert close(abs(psi["a1"]), H) and close(abs(psi["b1"]), H)
assert close(psi["a1"] / psi["b1"], 1), "Psi+: the relative phase is +1"

king.iswap(A1, A2)            # a1a2
king.iswap(A2, A1)            # a2a1: i * i = -1 on the a1 branch only
psi = kets(king)
print("after a1a2, a2a1:         ", psi)
assert close(psi["a1"] / psi["b1"], -1), "Psi-: the relative phase is -1 (eq. 48)"

# --- Interference, section 11.2: three splits of a king on a1 -------------------------------
for last, expected in [((B1, A1, B2), {"a1": 0.7285533905932737, "b2": 0.0214466094067262}),
                       ((B1, B2, A1), {"a1": 0.0214466094067262, "b2": 0.7285533905932737})]:
    s = State([A1])
    s.split(A1, A2, B1)       # a1^a2b1
    s.split(A2, A1, B2)       # a2^a1b2
    s.split(*last)            # b1^a1b2 or b1^b2a1
    p = {name: s.probability(q) for name, q in [("a1", A1), ("b1", B1), ("a2", A2), ("b2", B2)]}
    print(f"a1^a2b1, a2^a1b2, then b1 split to {last[1:]}:",
          {k: round(v, 16) for k, v in p.items()})
    # The a1 and b2 branches interfere: not the 1/4 each a classical coin would give.
    assert abs(p["a1"] - expected["a1"]) < 1e-12 and abs(p["b2"] - expected["b2"]) < 1e-12
    assert abs(p["b1"] - 0.25) < 1e-12 and p["a2"] < 1e-24

# --- The same interference in a game: split a knight and merge it back ---------------------
g = qchess.CantwellGame()
g.play("b1^a3c3")
print("after b1^a3c3:", {sq: g.probability(sq) for sq in ("b1", "a3", "c3")})
g.play("e7e6")
g.play("a3c3^b1")             # the merge undoes the split: the knight is on b1 for certain
print("after a3c3^b1:", {sq: g.probability(sq) for sq in ("b1", "a3", "c3")})
assert g.probability("b1") == 1.0 and g.state_size == 1
print("All of section 11's values reproduced.")
