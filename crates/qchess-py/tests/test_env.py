import pytest

import qchess
from qchess import env as E


def test_action_vocabulary_round_trips():
    for m in ["e2e4", "b1^a3c3", "a3c3^b1", "e7e8q", "a2a1n"]:
        a = E.encode_move(m)
        assert a is not None and 0 <= a < E.ACTION_COUNT
        assert E.decode_action(a) == m
    assert E.encode_move("e2e4.m1") == E.encode_move("e2e4")
    assert E.encode_move("nonsense") is None
    with pytest.raises(ValueError):
        E.decode_action(E.ACTION_COUNT)


def test_reset_step_observation_and_mask():
    env = E.CantwellEnv(max_plies=3)
    obs, info = env.reset(seed=1)
    planes = [list(p) for p in obs]
    assert len(planes) == 12 and all(len(p) == 64 for p in planes)
    assert planes[E.PLANES.index("N")][1] == 1.0  # knight on b1
    assert sum(map(sum, planes)) == 32
    mask = info["action_mask"]
    assert sum(mask) == 24 == len(info["legal_moves"])
    obs, reward, terminated, truncated, info = env.step(E.encode_move("b1^a3c3"))
    assert reward == 0.0 and not terminated and not truncated
    knights = list(obs[E.PLANES.index("N")])
    assert knights[16] == 0.5 and knights[18] == 0.5 and knights[1] == 0.0
    assert info["side_to_move"] == "b"
    env.step(E.encode_move("e7e6"))
    *_, truncated, _ = env.step(E.encode_move("e2e3"))
    assert truncated


def test_illegal_action_raises_and_changes_nothing():
    env = E.CantwellEnv()
    env.reset()
    before = env.game.to_json()
    with pytest.raises(qchess.QchessError) as e:
        env.step(E.encode_move("e2e5"))
    assert e.value.kind == "illegal_action"
    with pytest.raises(qchess.QchessError):
        env.step(-1)
    assert env.game.to_json() == before
    with pytest.raises(qchess.QchessError):
        E.CantwellEnv(max_plies=0)


def test_reward_when_a_king_is_captured():
    env = E.CantwellEnv()
    env.reset(options={"fen": "k7/8/8/8/8/8/8/R3K3 w - - 0 1"})
    obs, reward, terminated, truncated, info = env.step(E.encode_move("a1a8"))
    assert terminated and reward == 1.0 and info["status"] == "white_wins"
    assert sum(map(sum, obs)) == 2  # the rook on a8 and the white king
    # From Black's side: Black captures White's king and gets +1.
    env.reset(options={"fen": "r3k3/8/8/8/8/8/8/K7 b - - 0 1"})
    obs, reward, terminated, truncated, info = env.step(E.encode_move("a8a1"))
    assert terminated and reward == 1.0 and info["status"] == "black_wins"


def test_render_is_svg():
    env = E.CantwellEnv()
    env.reset()
    assert env.render().startswith("<svg")
