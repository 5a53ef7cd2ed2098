import pytest

import qchess


def test_start_and_box_move():
    g = qchess.NielsGame()
    assert g.side_to_move == "w" and g.status == "ongoing" and g.result == "*"
    assert "b1^a3c3:oo" in g.legal_moves()
    out = g.play("b1^a3c3:oo")
    assert out["move"] == "b1^a3c3:oo"
    assert out["rolls"] == [] and out["captured"] is None
    probs = g.probabilities()
    assert probs["a3"] == 0.5 and probs["c3"] == 0.5 and probs["e1"] == 1.0
    amps = g.amplitudes()
    assert amps["a3"] == pytest.approx(2 ** -0.5) and amps["c3"] == pytest.approx(2 ** -0.5)
    assert g.history == ["b1^a3c3:oo"]
    assert "[Nro|1]" in g.position or "[Nbo|1]" in g.position


def test_capture_of_a_pair_rolls_the_dice():
    # Schools paper, Fig. 4-5: the pawn on f5 attacks the rook pair e6 / d4.
    pos = "4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1"
    g = qchess.NielsGame(pos, seed=1)
    outs = g.outcomes("f5e6")
    assert sorted(round(p, 12) for _, p, _ in outs) == [0.5, 0.5]
    out = g.play("f5e6")
    assert len(out["rolls"]) == 1 and 1 <= out["rolls"][0] <= 6
    # Rolls 1-3 collapse to the blue mark (e6): captured; 4-6 to red (d4).
    assert (out["captured"] == "r") == (out["rolls"][0] <= 3)
    assert g.undo() == "f5e6"
    assert g.position == pos


def test_unequal_pair_probabilities():
    g = qchess.NielsGame("4k3/8/4[rro|1]3/8/3[rbp|1]4/8/8/4K3 w - - 0 1")
    p = g.probabilities()
    assert p["e6"] == pytest.approx(4 / 6) and p["d4"] == pytest.approx(2 / 6)
    assert g.amplitudes()["d4"] < 0  # the blue mark faces its owner
    h = qchess.NielsGame("4k3/8/4[rro|1]3/8/3[rbp|1]4/8/8/4K3 w - - 0 1", rules="hadamard")
    assert h.probabilities()["e6"] == 0.5


def test_sample_repeats_and_collapses_pairs():
    g = qchess.NielsGame()
    g.play("b1^a3c3:oo")
    s = g.sample(300, seed=2)
    assert s == g.sample(300, seed=2)
    assert all(("a3" in b) != ("c3" in b) for b in s)
    assert 100 < sum("a3" in b for b in s) < 200


def test_json_round_trip_and_errors():
    g = qchess.NielsGame(seed=4)
    g.play("b1^a3c3:oo")
    g.play("e7e5")
    text = g.to_json()
    back = qchess.NielsGame.from_json(text)
    assert back.to_json() == text and back.position == g.position
    before = g.position
    for move, kind in [("b1b2b3", "notation"), ("e2e5", "illegal_move")]:
        with pytest.raises(qchess.QchessError) as e:
            g.play(move)
        assert e.value.kind == kind
        assert g.position == before
    with pytest.raises(qchess.QchessError) as e:
        qchess.NielsGame(rules="nonsense")
    assert e.value.kind == "rules"
    with pytest.raises(qchess.QchessError) as e:
        qchess.NielsGame(board="9x9")
    assert e.value.kind == "board"
    with pytest.raises(qchess.QchessError) as e:
        qchess.NielsGame.from_json("[]")
    assert e.value.kind == "json"
    with pytest.raises(qchess.QchessError) as e:
        qchess.NielsGame().undo()
    assert e.value.kind == "undo"


def test_small_board_and_svg():
    g = qchess.NielsGame(board="5x6")
    svg = g._repr_svg_()
    assert svg.count("data-square=") == 30
    g.play("b1^a3c3:oo")
    assert 'data-mark="red"' in g._repr_svg_()
    assert g.in_check is False
    assert "NielsGame" in repr(g)
