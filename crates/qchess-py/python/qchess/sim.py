"""The sparse state-vector simulator: :class:`State` on 64 occupancy qubits.

Conventions are the Cantwell paper's: ``iswap`` maps |01> to i|10>; a split ``s -> t1, t2``
is ``sqrt_iswap(s, t1)`` then ``iswap(s, t2)``; a merge is the inverse of a split.
"""

from ._qchess import State

__all__ = ["State"]
