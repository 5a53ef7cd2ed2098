"""A Gymnasium-style environment of Cantwell quantum chess.

``CantwellEnv`` follows the Gymnasium API (``reset(seed=...)`` -> ``(observation, info)``,
``step(action)`` -> ``(observation, reward, terminated, truncated, info)``) and works without
Gymnasium installed. When Gymnasium is installed the class is a ``gymnasium.Env`` with
``action_space`` / ``observation_space`` and is registered as ``"qchess/Cantwell-v0"``.

* **Actions**: a fixed vocabulary of ``ACTION_COUNT`` integers, independent of the position
  (:func:`encode_move` / :func:`decode_action`): from-to moves ``from*64 + to``, promotions,
  splits ``s^t1t2`` and merges ``s1s2^t``. ``info["action_mask"]`` marks the legal ones
  (``info["legal_moves"]`` lists them as QCAN); an illegal action raises
  :class:`qchess.QchessError` (kind ``"illegal_action"``) and changes nothing.
* **Observation**: 12 probability planes of 64 squares (a1 = 0): plane ``k`` holds, for
  each square, the probability that it holds piece ``PLANES[k]`` (``PNBRQKpnbrqk``). A list
  of lists, or a NumPy array of shape (12, 64) when NumPy is installed.
* **Reward**: 0 during the game; at its end +1 to the player who just moved if they won, -1
  if they lost, 0 for a draw. ``truncated`` after ``max_plies`` plies.
"""

from typing import Any, Dict, List, Optional, Tuple

from ._qchess import CantwellGame, QchessError

try:  # NumPy is optional
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the environment
    _np = None

try:  # Gymnasium is optional
    import gymnasium as _gym
except ImportError:  # pragma: no cover - depends on the environment
    _gym = None

PLANES = "PNBRQKpnbrqk"
"""The piece of each observation plane."""

_PROMOTIONS = "qrbn"
_MOVES = 64 * 64
_PROMO = _MOVES
_SPLIT = _PROMO + 64 * 64 * len(_PROMOTIONS)
_MERGE = _SPLIT + 64 * 64 * 64
ACTION_COUNT = _MERGE + 64 * 64 * 64
"""The size of the action vocabulary."""


def _sq(name: str) -> int:
    if len(name) != 2 or name[0] not in "abcdefgh" or name[1] not in "12345678":
        raise ValueError(name)
    return (ord(name[1]) - ord("1")) * 8 + (ord(name[0]) - ord("a"))


def _name(index: int) -> str:
    return "abcdefgh"[index % 8] + "12345678"[index // 8]


def encode_move(move: str) -> Optional[int]:
    """The action number of a QCAN move, or None if it is not in the vocabulary."""
    m = move.split(".")[0].strip()
    try:
        if "^" in m:
            left, right = m.split("^")
            if len(left) == 2 and len(right) == 4:
                return _SPLIT + (_sq(left) * 64 + _sq(right[:2])) * 64 + _sq(right[2:])
            if len(left) == 4 and len(right) == 2:
                return _MERGE + (_sq(left[:2]) * 64 + _sq(left[2:])) * 64 + _sq(right)
            return None
        if len(m) == 4:
            return _sq(m[:2]) * 64 + _sq(m[2:])
        if len(m) == 5 and m[4].lower() in _PROMOTIONS:
            base = _sq(m[:2]) * 64 + _sq(m[2:4])
            return _PROMO + base * len(_PROMOTIONS) + _PROMOTIONS.index(m[4].lower())
    except ValueError:
        return None
    return None


def decode_action(action: int) -> str:
    """The QCAN move of an action number (the inverse of :func:`encode_move`)."""
    a = int(action)
    if not 0 <= a < ACTION_COUNT:
        raise ValueError(f"action {a} is outside 0..{ACTION_COUNT - 1}")
    if a < _PROMO:
        return _name(a // 64) + _name(a % 64)
    if a < _SPLIT:
        base, p = divmod(a - _PROMO, len(_PROMOTIONS))
        return _name(base // 64) + _name(base % 64) + _PROMOTIONS[p]
    if a < _MERGE:
        s, rest = divmod(a - _SPLIT, 64 * 64)
        return _name(s) + "^" + _name(rest // 64) + _name(rest % 64)
    rest, t = divmod(a - _MERGE, 64)
    return _name(rest // 64) + _name(rest % 64) + "^" + _name(t)


def _error(kind: str, message: str) -> QchessError:
    err = QchessError(message)
    err.kind = kind
    err.message = message
    return err


_Base: Any = _gym.Env if _gym is not None else object


class CantwellEnv(_Base):  # type: ignore[misc]
    """Cantwell quantum chess as a Gymnasium-style environment (see the module docs)."""

    metadata = {"render_modes": ["svg"]}

    def __init__(self, max_plies: int = 200, render_mode: Optional[str] = None) -> None:
        if max_plies < 1:
            raise _error("argument", "max_plies must be at least 1")
        self.max_plies = max_plies
        self.render_mode = render_mode
        self.game = CantwellGame()
        self._legal: List[str] = []
        self._plies = 0
        if _gym is not None:
            from gymnasium import spaces

            self.action_space = spaces.Discrete(ACTION_COUNT)
            self.observation_space = spaces.Box(0.0, 1.0, shape=(12, 64), dtype=_np.float32)

    def _observation(self) -> Any:
        planes = [[0.0] * 64 for _ in PLANES]
        probs = self.game.probabilities()
        rows = self.game.fen.split()[0].split("/")
        for r, row in enumerate(rows):
            rank = 7 - r
            file = 0
            for c in row:
                if c.isdigit():
                    file += int(c)
                    continue
                sq = rank * 8 + file
                planes[PLANES.index(c)][sq] = probs.get(_name(sq), 0.0)
                file += 1
        if _np is not None:
            return _np.asarray(planes, dtype=_np.float32)
        return planes

    def _info(self) -> Dict[str, Any]:
        self._legal = self.game.legal_moves()
        mask = bytearray(ACTION_COUNT)
        for m in self._legal:
            a = encode_move(m)
            if a is not None:
                mask[a] = 1
        action_mask: Any = mask
        if _np is not None:
            action_mask = _np.frombuffer(bytes(mask), dtype=_np.uint8).astype(bool)
        return {
            "legal_moves": list(self._legal),
            "action_mask": action_mask,
            "side_to_move": self.game.side_to_move,
            "status": self.game.status,
        }

    def reset(
        self, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[Any, Dict[str, Any]]:
        """Starts a new game; `seed` seeds its measurements (default 0)."""
        if _gym is not None:
            super().reset(seed=seed)
        fen = (options or {}).get("fen")
        self.game = CantwellGame(fen, seed=0 if seed is None else int(seed))
        self._plies = 0
        return self._observation(), self._info()

    def step(self, action: int) -> Tuple[Any, float, bool, bool, Dict[str, Any]]:
        """Plays the move of `action`; raises QchessError("illegal_action") if not legal."""
        try:
            move = decode_action(action)
        except ValueError as e:
            raise _error("illegal_action", str(e)) from None
        legal = {encode_move(m): m for m in self._legal}
        if int(action) not in legal:
            raise _error("illegal_action", f"{move} is not a legal move here")
        mover = self.game.side_to_move
        self.game.play(legal[int(action)])
        self._plies += 1
        status = self.game.status
        terminated = status != "ongoing"
        reward = 0.0
        if terminated and status != "draw":
            winner = "w" if status == "white_wins" else "b"
            reward = 1.0 if winner == mover else -1.0
        truncated = not terminated and self._plies >= self.max_plies
        return self._observation(), reward, terminated, truncated, self._info()

    def render(self) -> str:
        """The SVG picture of the position."""
        return self.game._repr_svg_()


if _gym is not None:  # pragma: no cover - depends on the environment
    try:
        _gym.register(id="qchess/Cantwell-v0", entry_point="qchess.env:CantwellEnv")
    except Exception:  # already registered (re-import)
        pass

__all__ = ["ACTION_COUNT", "PLANES", "CantwellEnv", "decode_action", "encode_move"]
