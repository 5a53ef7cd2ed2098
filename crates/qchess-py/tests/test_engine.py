import threading
import time

import pytest

import qchess

# The score of a won game less the plies it takes (qchess_engine::WIN_SCORE).
WIN_SCORE = 100_000


def test_defaults_and_repr():
    e = qchess.Engine()
    assert (e.variant, e.level, e.seed) == (None, 3, 0)
    assert (e.depth, e.nodes, e.movetime_ms) == (None, None, None)
    e = qchess.Engine(variant="Niels", level=5, seed=9, depth=3, nodes=100, movetime_ms=50)
    assert (e.variant, e.level, e.seed, e.depth, e.nodes, e.movetime_ms) == (
        "niels", 5, 9, 3, 100, 50)
    assert repr(e) == (
        "Engine(variant='niels', level=5, seed=9, depth=3, nodes=100, movetime_ms=50)")
    assert repr(qchess.Engine()) == (
        "Engine(variant=None, level=3, seed=0, depth=None, nodes=None, movetime_ms=None)")


def test_cantwell_takes_the_king():
    # The queen on a1 takes the king on a8 down the open file: a won game in one ply.
    g = qchess.CantwellGame("k7/8/8/8/8/8/8/Q6K w - - 0 1", seed=1)
    before = g.to_json()
    r = qchess.Engine(seed=1).search(g, depth=2)
    assert isinstance(r, qchess.SearchResult)
    assert r.best == "a1a8" and r.pv[0] == "a1a8"
    assert WIN_SCORE - 10 <= r.score <= WIN_SCORE
    assert r.depth >= 1 and r.nodes > 0 and r.variant == "cantwell"
    assert r.to_dict() == {"best": r.best, "score": r.score, "pv": r.pv,
                           "depth": r.depth, "nodes": r.nodes}
    assert g.to_json() == before  # the search leaves the game as it was
    g.play(r.best)
    assert g.status == "white_wins"
    with pytest.raises(qchess.QchessError) as e:
        qchess.Engine().search(g)
    assert e.value.kind == "game_over"


def test_cantwell_same_seed_and_nodes_same_answer_and_playable():
    g = qchess.CantwellGame()
    a = qchess.Engine(level=2, seed=7, nodes=400).search(g)
    b = qchess.Engine(level=2, seed=7, nodes=400).search(g)
    assert a.to_dict() == b.to_dict()
    assert a.nodes <= 401
    assert a.best in g.legal_moves()
    assert g.play(a.best).startswith(a.best)
    # The game plays on with the engine's answers on both sides.
    e = qchess.Engine(seed=3, nodes=300)
    for _ in range(3):
        g.play(e.search(g).best)
    assert len(g.history) == 4


def test_limits_given_to_search_replace_the_defaults():
    g = qchess.CantwellGame()
    e = qchess.Engine(level=5, depth=1)
    assert e.search(g).depth == 1
    assert e.search(g, depth=2).depth == 2
    assert e.search(g, nodes=50).nodes <= 51


def test_niels_takes_the_knight():
    g = qchess.NielsGame("4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1", seed=2)
    r = qchess.Engine(seed=1).search(g, depth=2)
    assert r.best == "e4d5" and r.score > 0 and r.variant == "niels"
    a = qchess.Engine(seed=4, nodes=200).search(g)
    assert a.to_dict() == qchess.Engine(seed=4, nodes=200).search(g).to_dict()
    out = g.play(r.best)
    assert out["move"] == "e4d5" and out["captured"] == "n"


def test_niels_start_answer_is_playable():
    g = qchess.NielsGame(seed=5)
    r = qchess.Engine(seed=2, depth=1).search(g)
    assert r.best in g.legal_moves()
    assert g.play(r.best)["move"] == r.best


def test_niels_checkmate_is_game_over():
    g = qchess.NielsGame("k7/1Q6/1K6/8/8/8/8/8 b - - 0 1")
    assert g.status == "checkmate"
    with pytest.raises(qchess.QchessError) as e:
        qchess.Engine().search(g)
    assert e.value.kind == "game_over"


def test_akl_whole_turn_from_engine_answers():
    g = qchess.AklGame(seed=5)
    e = qchess.Engine(seed=1, nodes=2000)
    touch = e.search(g)
    assert touch.variant == "akl"
    assert touch.best in g.legal_moves()  # a square to touch
    assert touch.best == e.search(g).best
    t = g.play(touch.best)
    assert t["square"] == touch.best
    if t["turn"] == "awaiting_move":
        mv = e.search(g)
        assert mv.best in t["legal_moves"] and mv.best[:2] == touch.best
        assert g.play(mv.best)["turn"] == "done"
    assert g.side_to_move == "b" and len(g.history) == 1


def test_akl_engine_sees_only_the_side_to_moves_view():
    # Two set-ups with the same primaries and different hidden secondary types: White's view
    # is the same, so is the search (the unseen types are drawn from the engine's seed).
    a, b = qchess.AklGame(seed=5), qchess.AklGame(seed=6)
    assert a.position != b.position
    assert a.view("white").pieces() == b.view("white").pieces()
    e = qchess.Engine(seed=3, nodes=1500)
    assert e.search(a).to_dict() == e.search(b).to_dict()


def test_variant_restriction_and_bad_game():
    with pytest.raises(qchess.QchessError) as e:
        qchess.Engine(variant="niels").search(qchess.CantwellGame())
    assert e.value.kind == "variant"
    with pytest.raises(qchess.QchessError) as e:
        qchess.Engine().search("e2e4")
    assert e.value.kind == "variant"
    with pytest.raises(qchess.QchessError) as e:
        qchess.Engine(variant="chess")
    assert e.value.kind == "variant"
    assert qchess.Engine(variant="akl").search(qchess.AklGame(), depth=1).variant == "akl"


@pytest.mark.parametrize(
    "kwargs",
    [{"level": 0}, {"level": 6}, {"depth": 0}, {"depth": 65}, {"nodes": 0}, {"nodes": -5},
     {"movetime_ms": 0}],
)
def test_bad_options_raise_with_kind(kwargs):
    with pytest.raises(qchess.QchessError) as e:
        qchess.Engine(**kwargs)
    assert e.value.kind == "option"
    if "level" not in kwargs:
        g = qchess.CantwellGame()
        before = g.to_json()
        with pytest.raises(qchess.QchessError) as e:
            qchess.Engine().search(g, **kwargs)
        assert e.value.kind == "option"
        assert g.to_json() == before


def test_search_releases_the_gil():
    # A level-5 search on a time limit runs in a thread; this thread keeps running meanwhile
    # (with the GIL held by the search it would stall for the whole second).
    g = qchess.CantwellGame()
    found = []
    t = threading.Thread(
        target=lambda: found.append(qchess.Engine(level=5).search(g, movetime_ms=1000)))
    t.start()
    ticks, last, longest = 0, time.monotonic(), 0.0
    while t.is_alive():
        now = time.monotonic()
        longest = max(longest, now - last)
        last = now
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert found and found[0].best in g.legal_moves()
    assert ticks > 20 and longest < 0.5
