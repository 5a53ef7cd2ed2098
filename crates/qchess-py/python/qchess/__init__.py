"""qchess: quantum chess from Python.

Three rule systems on one board, implemented in Rust (the qchess workspace):

* :class:`CantwellGame` - Cantwell quantum chess (occupancy superpositions, QCAN moves);
* :class:`NielsGame` - Niel's Chess (pieces in a box, dice collapses);
* :class:`AklGame` - Akl-style quantum chess (two-type pieces), with per-player views
  (:class:`AklView`);
* :class:`Engine` - the engine: ``Engine(level=3, seed=0).search(game, nodes=20000)``
  answers a :class:`SearchResult` (``best``, ``score``, ``pv``, ``depth``, ``nodes``) for any
  of the three games, ``best`` a move the game's ``play()`` accepts;
* :mod:`qchess.sim` - the sparse state-vector simulator (``qchess.sim.State``);
* :mod:`qchess.env` - a Gymnasium-style environment (works without Gymnasium).

Every error is a :class:`QchessError` whose ``.kind`` names its kind (``"illegal_move"``,
``"notation"``, ...); the object it came from is unchanged. Games draw in notebooks
(``_repr_svg_``). Moves, sampling, gates and engine searches release the GIL.
"""

from ._qchess import (
    AklGame,
    AklView,
    CantwellGame,
    Engine,
    NielsGame,
    QchessError,
    SearchResult,
    __version__,
)
from . import sim

__all__ = [
    "AklGame",
    "AklView",
    "CantwellGame",
    "Engine",
    "NielsGame",
    "QchessError",
    "SearchResult",
    "sim",
    "__version__",
]
