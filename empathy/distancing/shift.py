"""The distancing shift: how much more distanced a generation is than its own reference, one scale for all outputs.

The per-item LD term of Eq. 4 is ``||z_t - z_g||_2`` with each side standardised within its model: it measures how
far an output's distancing *pattern* departs from the model's usual one, in either direction, and it is never
negative. Sorted as "worst first" it brings up outputs that are unusual for their model, which is often a faithful
output of a model that usually distances. An analyst asking "which generations are more distanced than their
reference?" needs a signed difference on one common scale instead:

    shift_i = sum_k (d_g,k(i) - d_t,k(i)) / sigma_t,k

where ``d`` are the three distancing densities (per sentence: nominalizations, impersonal subjects, agentless
clauses), and ``sigma_t,k`` is the population standard deviation of dimension ``k`` over the references of every
usable output of the data set (the same for every model, so shifts of different models compare). Positive: the
generation uses more distancing than its reference (by that many reference standard deviations, summed over the
three dimensions); 0: as much; negative: less. A dimension in which every reference has the same density
(``sigma = 0``) is left out of the sum; the shift is undefined (NaN) for an output whose either text has no
sentence, and for every output when no dimension has a spread or fewer than two outputs are usable.

This is a view for error analysis, not a metric of the paper: the Overview's LD stays Eq. 4.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: The item table's column of the shift, and what the app calls it.
SHIFT_COLUMN = "LD shift"


def distancing_shift(densities_ref: ArrayLike, densities_gen: ArrayLike) -> NDArray[np.float64]:
    """Per output, the generation's distancing minus its reference's, in reference standard deviations (module
    docstring); NaN where undefined.

    Parameters
    ----------
    densities_ref, densities_gen
        Shape ``(n, 3)``: the distancing densities of each output's reference and generation (NaN for a text
        without sentences).

    Returns
    -------
    ndarray
        Shape ``(n,)``.
    """
    ref = np.asarray(densities_ref, dtype=float)
    gen = np.asarray(densities_gen, dtype=float)
    if ref.ndim != 2 or ref.shape != gen.shape:
        raise ValueError(f"densities_ref and densities_gen must have the same shape (n, k), got {ref.shape} and "
                         f"{gen.shape}")
    shift = np.full(len(ref), np.nan)
    usable = ~(np.isnan(ref).any(axis=1) | np.isnan(gen).any(axis=1))
    if usable.sum() < 2:
        return shift
    sd = ref[usable].std(axis=0)
    spread = sd > 0
    if not spread.any():
        return shift
    shift[usable] = ((gen[usable][:, spread] - ref[usable][:, spread]) / sd[spread]).sum(axis=1)
    return shift
