"""Integer keys made dense: the distinct keys among ``[0, n_possible)`` and each key's rank among them.

Composite keys (an item code times the number of models plus a model code, ...) can range over the product of
their parts' sizes, which grows quadratically when every output has a model name of its own. :func:`unique_keys`
marks the keys seen in a table of ``n_possible`` flags only while that table is not much larger than the keys
themselves (linear, no sort of millions of keys), and sorts them otherwise, so memory stays linear in the keys.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

#: Beyond ``FACTOR`` x the number of keys (plus :data:`SLACK`) possible values, the keys are sorted, not marked.
FACTOR = 4
SLACK = 1_000_000


def unique_keys(keys: NDArray[np.integer], n_possible: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``np.unique(keys, return_inverse=True)`` for keys in ``[0, n_possible)``, in linear memory.

    Returns the sorted distinct keys and, per key, its position among them (both int64).
    """
    if n_possible > FACTOR * len(keys) + SLACK:
        keys_seen, inverse = np.unique(keys, return_inverse=True)
        return keys_seen.astype(np.int64, copy=False), inverse.astype(np.int64, copy=False)
    seen = np.zeros(n_possible, dtype=bool)
    seen[keys] = True
    rank = np.cumsum(seen, dtype=np.int64) - 1
    return np.flatnonzero(seen).astype(np.int64, copy=False), rank[keys]
