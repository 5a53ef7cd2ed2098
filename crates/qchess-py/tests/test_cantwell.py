import json
import math

import pytest

import qchess


def test_start_position():
    g = qchess.CantwellGame()
    probs = g.probabilities()
    assert len(probs) == 32 and all(p == 1.0 for p in probs.values())
    assert g.side_to_move == "w" and g.status == "ongoing" and g.state_size == 1
    assert len(g.legal_moves()) == 24  # 20 classical moves plus 4 knight splits
    assert "b1^a3c3" in g.legal_moves()
    assert g.fen.startswith("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w")


def test_split_knight_probabilities_amplitudes():
    g = qchess.CantwellGame()
    assert g.play("b1^a3c3") == "b1^a3c3"
    assert g.probability("a3") == 0.5 and g.probability("c3") == 0.5
    assert g.probability("b1") == 0.0
    assert g.state_size == 2
    amps = g.amplitudes()
    assert len(amps) == 2
    for squares, ancillas, amp in amps:
        assert ancillas == 0
        # The paper's split: sqrt-iSwap then iSwap gives i/sqrt(2) on both targets.
        assert amp == pytest.approx(1j / math.sqrt(2))
        assert ("a3" in squares.split()) != ("c3" in squares.split())
    assert g.history == ["b1^a3c3"]


def _close_positions(a, b, tol):
    """Same letters, flags and basis states; amplitudes within `tol`."""
    a, b = json.loads(a), json.loads(b)
    assert a["fen"] == b["fen"]
    assert a["fifty_move_reference"] == b["fifty_move_reference"]
    assert [e["board"] for e in a["amplitudes"]] == [e["board"] for e in b["amplitudes"]]
    for x, y in zip(a["amplitudes"], b["amplitudes"]):
        assert x["ancillas"] == y["ancillas"]
        assert abs(x["re"] - y["re"]) <= tol and abs(x["im"] - y["im"]) <= tol


def test_undo_restores_exactly():
    g = qchess.CantwellGame()
    before = g.to_json()
    g.play("g1^f3h3")
    # A split is taken back by its inverse gate (the merge), within rounding (issue 10).
    assert g.undo() == "g1^f3h3"
    _close_positions(g.to_json(), before, 1e-12)
    # A jump is taken back by the inverse iSwap, bit for bit.
    h = qchess.CantwellGame()
    start = h.to_json()
    h.play("g1f3")
    assert h.undo() == "g1f3"
    assert h.to_json() == start
    with pytest.raises(qchess.QchessError) as e:
        g.undo()
    assert e.value.kind == "undo"


def test_errors_have_kinds_and_change_nothing():
    g = qchess.CantwellGame()
    g.play("b1^a3c3")
    before = g.to_json()
    for move, kind in [("zz", "notation"), ("e7e4", "illegal_move"), ("e2e4", "illegal_move")]:
        with pytest.raises(qchess.QchessError) as e:
            g.play(move)
        assert e.value.kind == kind, (move, e.value.kind)
        assert e.value.message
        assert g.to_json() == before
    with pytest.raises(qchess.QchessError) as e:
        qchess.CantwellGame("not a fen")
    assert e.value.kind == "fen"
    with pytest.raises(qchess.QchessError) as e:
        g.probability("z9")
    assert e.value.kind == "square"


def test_json_round_trip_is_identical_text():
    g = qchess.CantwellGame()
    for m in ["b1^a3c3", "g8^f6h6", "e2e4"]:
        g.play(m)
    text = g.to_json()
    assert qchess.CantwellGame.from_json(text).to_json() == text
    assert "amplitudes" in json.loads(text)
    with pytest.raises(qchess.QchessError) as e:
        qchess.CantwellGame.from_json("{")
    assert e.value.kind == "position"


def test_sample_repeats_for_a_seed_and_follows_the_probabilities():
    g = qchess.CantwellGame()
    g.play("b1^a3c3")
    a = g.sample(400, seed=5)
    assert a == g.sample(400, 5)
    assert a != g.sample(400, seed=6)
    on_a3 = sum("a3" in board for board in a)
    assert all(("a3" in b) != ("c3" in b) for b in a)
    assert all(b.get("a3", "N") == "N" for b in a)
    # Binomial(400, 1/2): 5 standard deviations is +-50.
    assert 150 < on_a3 < 250
    assert g.state_size == 2  # sampling does not measure
    with pytest.raises(qchess.QchessError) as e:
        g.sample(10**9)
    assert e.value.kind == "shots"


def test_seeded_measurements_replay():
    def run(seed):
        g = qchess.CantwellGame(seed=seed)
        for m in ["b1^a3c3", "e7e6", "c3d5", "f8b4"]:
            try:
                g.play(m)
            except qchess.QchessError:
                pass
        return g.to_json(), g.history

    assert run(3) == run(3)


def test_probabilities_array_needs_numpy(numpy_missing):
    g = qchess.CantwellGame()
    if numpy_missing:
        with pytest.raises(qchess.QchessError) as e:
            g.probabilities(array=True)
        assert e.value.kind == "numpy_missing"
    else:
        arr = g.probabilities(array=True)
        assert arr.shape == (64,) and arr.sum() == 32


def test_repr_svg_draws_the_split():
    g = qchess.CantwellGame()
    g.play("b1^a3c3")
    svg = g._repr_svg_()
    assert svg.startswith("<svg")
    assert 'data-square="a3" data-probability="0.5"' in svg
    assert svg.count(">50%</text>") == 2
    assert "CantwellGame" in repr(g)
