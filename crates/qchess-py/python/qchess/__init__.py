"""qchess: quantum chess from Python.

Three rule systems on one board, implemented in Rust (the qchess workspace):

* :class:`CantwellGame` - Cantwell quantum chess (occupancy superpositions, QCAN moves);
* :class:`NielsGame` - Niel's Chess (pieces in a box, dice collapses);
* :class:`AklGame` - Akl-style quantum chess (two-type pieces), with per-player views
  (:class:`AklView`);
* :mod:`qchess.sim` - the sparse state-vector simulator (``qchess.sim.State``);
* :mod:`qchess.env` - a Gymnasium-style environment (works without Gymnasium).

Every error is a :class:`QchessError` whose ``.kind`` names its kind (``"illegal_move"``,
``"notation"``, ...); the object it came from is unchanged. Games draw in notebooks
(``_repr_svg_``). The engine (``qchess.Engine``) does not exist yet.
"""

from ._qchess import (
    AklGame,
    AklView,
    CantwellGame,
    NielsGame,
    QchessError,
    __version__,
)
from . import sim

__all__ = [
    "AklGame",
    "AklView",
    "CantwellGame",
    "NielsGame",
    "QchessError",
    "sim",
    "__version__",
]
