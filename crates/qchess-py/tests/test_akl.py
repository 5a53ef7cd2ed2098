import pytest

import qchess


def test_seeded_setup_and_views():
    a, b = qchess.AklGame(seed=5), qchess.AklGame(seed=5)
    assert a.position == b.position
    assert qchess.AklGame(seed=6).position != a.position
    assert qchess.AklGame().position == qchess.AklGame(seed=0).position
    w = a.view("white").pieces()
    assert w["d1"] == {"color": "w", "quantum": True, "type": None, "known": ["Q"], "pair": None}
    assert w["e1"]["type"] == "K" and w["e1"]["quantum"] is False
    assert a.view("black").viewer == "b"
    own = qchess.AklGame(seed=5, visibility="own-pairs")
    assert len(own.view("white").pieces()["d1"]["pair"]) == 2
    assert own.view("white").pieces()["d8"]["pair"] is None
    assert "(Q" in a.view("white").render()


def test_touch_then_play_and_undo():
    g = qchess.AklGame(seed=1)
    assert "g1" in g.legal_moves()
    t = g.touch("g1")
    assert t["square"] == "g1" and t["collapsed"] is not None
    if t["turn"] == "awaiting_move":
        assert g.legal_moves() == t["legal_moves"]
        done = g.play(t["legal_moves"][0])
        assert done["turn"] == "done" and done["entry"].startswith("<")
    assert len(g.history) == 1 and g.side_to_move == "b"
    last = g.history[0]
    assert g.undo() == last
    assert g.history == [] and g.side_to_move == "w"
    with pytest.raises(qchess.QchessError) as e:
        g.undo()
    assert e.value.kind == "undo"


def test_whole_turn_notation_and_json_round_trip():
    g = qchess.AklGame(seed=11)
    g.play("f2 -> f3")
    g.play("e7 -> e5")
    assert g.history[0].startswith("<P|f2>")
    text = g.to_json()
    back = qchess.AklGame.from_json(text)
    assert back.to_json() == text and back.position == g.position


def test_errors_leave_the_game_unchanged():
    g = qchess.AklGame(seed=2)
    before = g.position
    for move, kind in [("e2 -> e5", "illegal_move"), ("<<", "notation"), ("e7 -> e5", "illegal_move")]:
        with pytest.raises(qchess.QchessError) as e:
            g.play(move)
        assert e.value.kind == kind, (move, e.value.kind)
        assert g.position == before and g.history == []
    with pytest.raises(qchess.QchessError) as e:
        g.touch("e4")
    assert e.value.kind == "illegal_move"
    with pytest.raises(qchess.QchessError) as e:
        g.touch("x9")
    assert e.value.kind == "notation"
    with pytest.raises(qchess.QchessError) as e:
        g.view("green")
    assert e.value.kind == "color"
    with pytest.raises(qchess.QchessError) as e:
        qchess.AklGame(visibility="all")
    assert e.value.kind == "visibility"
    with pytest.raises(qchess.QchessError) as e:
        qchess.AklGame(position="nonsense")
    assert e.value.kind == "position"
    with pytest.raises(qchess.QchessError) as e:
        qchess.AklGame.from_json('{"record": "1. nonsense"}')
    assert e.value.kind in ("record", "notation")


def test_amplitudes_probabilities_sample_svg():
    g = qchess.AklGame(seed=5)
    probs = g.probabilities()
    assert len(probs) == 32 and set(probs.values()) == {1.0}
    amps = g.amplitudes()
    assert amps["e1"] == {"K": 1.0}
    d1 = amps["d1"]
    assert "Q" in d1 and sum(a * a for a in d1.values()) == pytest.approx(1.0)
    s = g.sample(200, seed=3)
    assert s == g.sample(200, seed=3)
    assert all(board["e1"] == "K" for board in s)
    if len(d1) == 2:
        assert 50 < sum(board["d1"] == "Q" for board in s) < 150
    svg = g._repr_svg_()
    assert svg.count("data-square=") == 64 and 'data-known="Q"' in svg
    assert g.view("white")._repr_svg_() == svg
    assert g.status == "ongoing" and "AklGame" in repr(g)
