import math

import pytest

import qchess
from qchess.sim import State


def test_iswap_phase_and_split_merge_round_trip():
    s = State([0])
    s.iswap(0, 1)
    assert s.amplitudes() == [(0b10, 1j)]
    s = State([1])
    s.split(1, 16, 18)
    amps = dict(s.amplitudes())
    assert set(amps) == {1 << 16, 1 << 18}
    assert all(a == pytest.approx(1j / math.sqrt(2)) for a in amps.values())
    assert s.probability(16) == pytest.approx(0.5) and len(s) == 2
    s.merge(16, 18, 1)
    assert len(s) == 1 and s.probability(1) == pytest.approx(1.0)


def test_sqrt_iswap_interference():
    # Two square roots of iSwap make one iSwap: |01> -> i|10>.
    s = State([3])
    s.sqrt_iswap(3, 4)
    assert s.probability(4) == pytest.approx(0.5)
    s.sqrt_iswap(3, 4)
    (key, amp), = s.amplitudes()
    assert key == 1 << 4 and amp == pytest.approx(1j)


def test_controlled_gate_and_measurement():
    s = State([0, 1])
    s.iswap(0, 2, empty=[1])  # the path is blocked: nothing happens
    assert s.amplitudes() == [(0b11, 1)]
    s = State([0], seed=9)
    s.split(0, 1, 2)
    first = s.measure(1)
    assert s.measure(1) == first and len(s) == 1
    t = State([0], seed=9)
    t.split(0, 1, 2)
    assert t.measure(1) == first  # the same seed, the same outcome


def test_errors():
    s = State([0])
    for call in [lambda: s.iswap(0, 64), lambda: s.iswap(0, 0), lambda: s.probability(70),
                 lambda: s.measure(99), lambda: s.split(0, 1, 1), lambda: s.iswap(0, 1, empty=[80])]:
        with pytest.raises(qchess.QchessError) as e:
            call()
        assert e.value.kind == "sim"
    assert s.amplitudes() == [(1, 1)]
    with pytest.raises(qchess.QchessError):
        State([64])
    assert "1 basis states" in repr(s)
