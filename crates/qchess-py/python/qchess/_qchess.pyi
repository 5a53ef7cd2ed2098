"""Type stubs of the native module qchess._qchess."""

from typing import Any, Dict, List, Optional, Tuple, Union

__version__: str

class QchessError(Exception):
    """An error of the qchess package; the object it came from is unchanged."""

    kind: str
    """Machine-readable kind: "illegal_move", "notation", "position", "json", ..."""
    message: str
    """What is wrong."""

class CantwellGame:
    """Cantwell quantum chess; measurements drawn from a ChaCha8 stream seeded by `seed`."""

    def __init__(self, fen: Optional[str] = None, *, seed: int = 0) -> None: ...
    def play(self, move: str) -> str:
        """Play a QCAN move; returns it as recorded (with .m0/.m1 when it measured)."""
    def undo(self) -> str:
        """Take back the last move; returns its notation."""
    def legal_moves(self) -> List[str]:
        """The legal moves of the side to move, in QCAN."""
    def probabilities(self, array: bool = False) -> Any:
        """Square -> occupancy probability (positive ones); a NumPy array of 64 with array=True."""
    def probability(self, square: str) -> float:
        """The occupancy probability of one square."""
    def amplitudes(self) -> List[Tuple[str, int, complex]]:
        """(occupied squares, capture-ancilla bits, amplitude) of every basis state."""
    def sample(self, shots: int, seed: int = 0) -> List[Dict[str, str]]:
        """`shots` classical boards (square -> letter) drawn without changing the game."""
    def to_json(self) -> str:
        """The current position as JSON."""
    @classmethod
    def from_json(cls, text: str, *, seed: int = 0) -> "CantwellGame":
        """A game at the position `to_json` wrote."""
    @property
    def fen(self) -> str: ...
    @property
    def side_to_move(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def history(self) -> List[str]: ...
    @property
    def state_size(self) -> int: ...
    def _repr_svg_(self) -> str: ...

class NielsGame:
    """Niel's Chess; dice drawn from a ChaCha8 stream seeded by `seed`."""

    def __init__(
        self,
        position: Optional[str] = None,
        *,
        rules: str = "",
        board: str = "8x8",
        seed: int = 0,
    ) -> None: ...
    def play(self, move: str) -> Dict[str, Any]:
        """Play a move; returns rolls, collapses and capture outcome."""
    def undo(self) -> str:
        """Take back the last move; returns it."""
    def legal_moves(self) -> List[str]: ...
    def probabilities(self, array: bool = False) -> Any:
        """Square -> chance the square holds its piece; NumPy array of 64 with array=True."""
    def amplitudes(self) -> Dict[str, float]:
        """Signed amplitude of every indefinite half."""
    def sample(self, shots: int, seed: int = 0) -> List[Dict[str, str]]:
        """`shots` boards with every pair collapsed (square -> letter)."""
    def outcomes(self, move: str) -> List[Tuple[str, float, Dict[str, Any]]]:
        """Every way `move` can end: (position after, probability, outcome)."""
    def to_json(self) -> str: ...
    @classmethod
    def from_json(cls, text: str, *, seed: int = 0) -> "NielsGame": ...
    @property
    def position(self) -> str: ...
    @property
    def side_to_move(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def result(self) -> str: ...
    @property
    def in_check(self) -> bool: ...
    @property
    def history(self) -> List[str]: ...
    def _repr_svg_(self) -> str: ...

class AklView:
    """What one player may know of an Akl game."""

    @property
    def viewer(self) -> str: ...
    def pieces(self) -> Dict[str, Dict[str, Any]]:
        """Square -> {color, quantum, type, known, pair} as this player sees it."""
    def render(self) -> str: ...
    def _repr_svg_(self) -> str: ...

class AklGame:
    """Akl-style quantum chess; `seed` draws the set-up and every collapse."""

    def __init__(
        self,
        *,
        seed: int = 0,
        position: Optional[str] = None,
        visibility: str = "revealed",
    ) -> None: ...
    def touch(self, square: str) -> Dict[str, Any]: ...
    def play(self, move: str) -> Dict[str, Any]: ...
    def undo(self) -> Optional[str]: ...
    def legal_moves(self) -> List[str]: ...
    def probabilities(self, array: bool = False) -> Any: ...
    def amplitudes(self) -> Dict[str, Dict[str, float]]: ...
    def sample(self, shots: int, seed: int = 0) -> List[Dict[str, str]]: ...
    def view(self, color: str) -> AklView: ...
    def to_json(self) -> str: ...
    @classmethod
    def from_json(cls, text: str, *, seed: int = 0) -> "AklGame": ...
    @property
    def position(self) -> str: ...
    @property
    def side_to_move(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def history(self) -> List[str]: ...
    def _repr_svg_(self) -> str: ...

class SearchResult:
    """What one engine search found (frozen)."""

    @property
    def best(self) -> str:
        """The move to play, in the notation the searched game's play() accepts."""
    @property
    def score(self) -> float:
        """Expected value of `best` in centipawns from the side to move's view (+-100000: forced)."""
    @property
    def pv(self) -> List[str]:
        """The expected line, `best` first (replies after the most likely outcomes)."""
    @property
    def depth(self) -> int:
        """The deepest iteration completed (plies)."""
    @property
    def nodes(self) -> int:
        """Nodes visited."""
    @property
    def variant(self) -> str:
        """The variant searched: "cantwell", "niels" or "akl"."""
    def to_dict(self) -> Dict[str, Any]:
        """{"best", "score", "pv", "depth", "nodes"}."""

class Engine:
    """The qchess engine (expectimax on exact outcome probabilities); searches release the GIL.

    In Akl it decides from the side to move's view only (unseen types drawn from `seed`).
    Bad options raise QchessError with kind "option" or "variant".
    """

    def __init__(
        self,
        *,
        variant: Optional[str] = None,
        level: int = 3,
        seed: int = 0,
        depth: Optional[int] = None,
        nodes: Optional[int] = None,
        movetime_ms: Optional[int] = None,
    ) -> None: ...
    def search(
        self,
        game: Union[CantwellGame, NielsGame, AklGame],
        depth: Optional[int] = None,
        nodes: Optional[int] = None,
        movetime_ms: Optional[int] = None,
    ) -> SearchResult:
        """Search `game` (unchanged); the limits given replace the engine's defaults.

        Raises QchessError: "game_over", "option", "variant", "position".
        """
    @property
    def variant(self) -> Optional[str]: ...
    @property
    def level(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def depth(self) -> Optional[int]: ...
    @property
    def nodes(self) -> Optional[int]: ...
    @property
    def movetime_ms(self) -> Optional[int]: ...

class State:
    """Sparse state of 64 occupancy qubits (qchess.sim.State)."""

    def __init__(self, occupied: List[int] = ..., *, seed: int = 0) -> None: ...
    def iswap(self, a: int, b: int, empty: Optional[List[int]] = None) -> None: ...
    def sqrt_iswap(self, a: int, b: int, empty: Optional[List[int]] = None) -> None: ...
    def split(self, s: int, t1: int, t2: int, empty: Optional[List[int]] = None) -> None: ...
    def merge(self, s1: int, s2: int, t: int, empty: Optional[List[int]] = None) -> None: ...
    def probability(self, q: int) -> float: ...
    def measure(self, q: int) -> bool: ...
    def amplitudes(self) -> List[Tuple[int, complex]]: ...
    def __len__(self) -> int: ...
