"""The paper's four empathic-failure metrics as pure functions over arrays.

Reference: ``../shared/paper/empathy-mechanisms-paper.txt``, Section 2.2, Eq. 1-4 and Table 1.

Every metric has two layers:

* a *terms* function returning the per-item terms of the equation's sum and a per-item status
  (:data:`OK`, :data:`MISSING`, :data:`UNDEFINED`); the data-set code (:mod:`empathy.evaluate`) runs it
  vectorised over all (model, judge) groups at once, so the equation lives in exactly one place;
* an aggregate function returning a frozen :class:`MetricResult` that keeps the value, the number of items
  it rests on and the number of items left out, and why.

Cases the paper leaves open, and what we do (also in the README):

* **Missing rating** (NaN in any input of an item): the item is left out of that metric and counted in
  ``n_missing``. A missing rating is never read as 0.
* **SA with E(t) = 0** (a flat reference): the ratio is undefined, so the item is left out and counted in
  ``n_undefined``. (Scoring it 0 would hide that the judge saw no affect to attenuate; scoring it -inf when
  E(g) > 0 would let one item dominate the mean.)
* **EGM with a + b = 0** (neither text has disturbing content): the densities agree exactly, so the term is 0.
  **EGM with zero sentences** on either side (an empty text): the density is undefined; the item is left out
  (``n_undefined``).
* **LD with sigma = 0** in a dimension on one side (every text of that side has the same density): the
  z-score of that dimension is 0 for every item of that side (no spread, so no standardised deviation).
  The standard deviation is the population one (``ddof = 0``, as ``scipy.stats.zscore``). LD needs at
  least two items with all six densities; with fewer it is ``None``. An item whose text has no sentence
  (densities NaN) is left out as undefined.
* **Out-of-range values** (E outside [0, 1], a negative count or sentence count, a CA label other than 0/1):
  ``ValueError`` naming the argument and the first offending position; the data loader rejects them earlier
  with file, row and column.
* **No usable item**: the value is ``None`` (``null`` in JSON), never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

OK = 0
MISSING = 1
UNDEFINED = 2

METRICS: tuple[str, ...] = ("SA", "EGM", "CA", "LD")
#: The judge dimensions each judge-based metric reads (Section 2.2).
METRIC_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "SA": ("e_ref", "e_gen"),
    "EGM": ("u_ref", "u_gen"),
    "CA": ("ca",),
}
#: Order of the distancing-density vector of Eq. 4.
LD_DIMENSIONS: tuple[str, str, str] = ("nominalization", "impersonal", "agentless")
#: ``"separate"`` is Eq. 4 as written: each side standardised with its own mean and sd.
LD_STANDARDIZATIONS: tuple[str, ...] = ("separate", "reference")


@dataclass(frozen=True)
class MetricResult:
    """The value of one metric over a set of items, with the counts it rests on.

    ``value`` is ``None`` when no item could be used. ``terms`` holds the per-item terms of the equation
    (NaN for items left out) and ``status`` why each item was used or left out.
    """

    metric: str
    value: float | None
    n: int
    n_missing: int
    n_undefined: int
    terms: NDArray[np.float64] = field(repr=False, compare=False)
    status: NDArray[np.int8] = field(repr=False, compare=False)

    @property
    def n_items(self) -> int:
        return self.n + self.n_missing + self.n_undefined

    def to_dict(self) -> dict[str, object]:
        return {"metric": self.metric, "value": self.value, "n": self.n, "n_missing": self.n_missing,
                "n_undefined": self.n_undefined}


def _as_float_array(values: ArrayLike, name: str) -> NDArray[np.float64]:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric") from None
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    return array


def _same_length(**arrays: NDArray[np.float64]) -> None:
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"inputs differ in length: {lengths}")


def _check_range(array: NDArray[np.float64], name: str, low: float, high: float) -> None:
    bad = ~np.isnan(array) & ((array < low) | (array > high))
    if bad.any():
        position = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{position}] = {float(array[position])!r} is outside [{low:g}, {high:g}]")


def aggregate(metric: str, terms: NDArray[np.float64], status: NDArray[np.int8]) -> MetricResult:
    """Mean of the usable terms (``status == OK``), with the counts of items left out."""
    usable = status == OK
    n = int(usable.sum())
    value = float(terms[usable].mean()) if n else None
    return MetricResult(metric=metric, value=value, n=n, n_missing=int((status == MISSING).sum()),
                        n_undefined=int((status == UNDEFINED).sum()), terms=terms, status=status)


def sentiment_attenuation_terms(e_ref: ArrayLike, e_gen: ArrayLike
                                ) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
    """Per-item terms ``(E(t) - E(g)) / E(t)`` of Eq. 1 and their status."""
    ref = _as_float_array(e_ref, "e_ref")
    gen = _as_float_array(e_gen, "e_gen")
    _same_length(e_ref=ref, e_gen=gen)
    _check_range(ref, "e_ref", 0.0, 1.0)
    _check_range(gen, "e_gen", 0.0, 1.0)
    status = np.full(len(ref), OK, dtype=np.int8)
    missing = np.isnan(ref) | np.isnan(gen)
    status[missing] = MISSING
    status[~missing & (ref == 0.0)] = UNDEFINED
    terms = np.full(len(ref), np.nan)
    usable = status == OK
    terms[usable] = (ref[usable] - gen[usable]) / ref[usable]
    return terms, status


def sentiment_attenuation(e_ref: ArrayLike, e_gen: ArrayLike) -> MetricResult:
    """Sentiment Attenuation (Eq. 1): mean of ``(E(t) - E(g)) / E(t)``; range (-inf, 1].

    Items with ``E(t) = 0`` are left out as undefined; items with a missing score are left out as missing.
    """
    return aggregate("SA", *sentiment_attenuation_terms(e_ref, e_gen))


def granularity_mismatch_terms(u_ref: ArrayLike, u_gen: ArrayLike, sentences_ref: ArrayLike,
                               sentences_gen: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
    """Per-item terms ``|(a - b) / (a + b)|`` of Eq. 2, ``a = U(t)/d``, ``b = U(g)/q``, and their status."""
    u_t = _as_float_array(u_ref, "u_ref")
    u_g = _as_float_array(u_gen, "u_gen")
    d = _as_float_array(sentences_ref, "sentences_ref")
    q = _as_float_array(sentences_gen, "sentences_gen")
    _same_length(u_ref=u_t, u_gen=u_g, sentences_ref=d, sentences_gen=q)
    for array, name in ((u_t, "u_ref"), (u_g, "u_gen"), (d, "sentences_ref"), (q, "sentences_gen")):
        _check_range(array, name, 0.0, np.inf)
    status = np.full(len(u_t), OK, dtype=np.int8)
    missing = np.isnan(u_t) | np.isnan(u_g)
    status[missing] = MISSING
    no_sentences = np.isnan(d) | np.isnan(q) | (d == 0) | (q == 0)
    status[~missing & no_sentences] = UNDEFINED
    terms = np.full(len(u_t), np.nan)
    usable = status == OK
    a = u_t[usable] / d[usable]
    b = u_g[usable] / q[usable]
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(total == 0, 0.0, np.abs(a - b) / np.where(total == 0, 1.0, total))
    terms[usable] = ratio
    return terms, status


def granularity_mismatch(u_ref: ArrayLike, u_gen: ArrayLike, sentences_ref: ArrayLike,
                         sentences_gen: ArrayLike) -> MetricResult:
    """Empathic Granularity Mismatch (Eq. 2); range [0, 1].

    ``u_ref``/``u_gen`` are disturbing-content counts summed over each text's sentences and
    ``sentences_ref``/``sentences_gen`` the sentence counts ``d`` and ``q``. A term with ``a + b = 0`` is 0.
    """
    return aggregate("EGM", *granularity_mismatch_terms(u_ref, u_gen, sentences_ref, sentences_gen))


def conflict_avoidance_terms(labels: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
    """Per-item binary labels ``s`` of Eq. 3 (validated to be 0 or 1) and their status."""
    s = _as_float_array(labels, "ca")
    bad = ~np.isnan(s) & (s != 0.0) & (s != 1.0)
    if bad.any():
        position = int(np.flatnonzero(bad)[0])
        raise ValueError(f"ca[{position}] = {float(s[position])!r} is not a binary label (0 or 1)")
    status = np.where(np.isnan(s), MISSING, OK).astype(np.int8)
    return s.copy(), status


def conflict_avoidance(labels: ArrayLike) -> MetricResult:
    """Conflict Avoidance (Eq. 3): the share of items labelled 1; range [0, 1]."""
    return aggregate("CA", *conflict_avoidance_terms(labels))


def _zscore(matrix: NDArray[np.float64], mean: NDArray[np.float64], sd: NDArray[np.float64]
            ) -> NDArray[np.float64]:
    safe = np.where(sd > 0, sd, 1.0)
    return np.where(sd > 0, (matrix - mean) / safe, 0.0)


def linguistic_distancing_terms(densities_ref: ArrayLike, densities_gen: ArrayLike, *,
                                standardization: str = "separate"
                                ) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
    """Per-item terms ``||z_t - z_g||_2`` of Eq. 4 and their status.

    ``densities_ref`` and ``densities_gen`` have shape ``(n, 3)`` in :data:`LD_DIMENSIONS` order (counts per
    sentence). ``standardization="separate"`` follows Eq. 4: each side uses its own mean and sd over the
    usable items. ``"reference"`` (not in the paper; offered because separate standardisation removes any
    shift of the whole model's style) standardises both sides with the reference statistics.
    """
    if standardization not in LD_STANDARDIZATIONS:
        raise ValueError(f"standardization must be one of {LD_STANDARDIZATIONS}, got {standardization!r}")
    ref = np.asarray(densities_ref, dtype=float)
    gen = np.asarray(densities_gen, dtype=float)
    for array, name in ((ref, "densities_ref"), (gen, "densities_gen")):
        if array.ndim != 2 or array.shape[1] != len(LD_DIMENSIONS):
            raise ValueError(f"{name} must have shape (n, 3), got {array.shape}")
        bad = ~np.isnan(array) & (array < 0)
        if bad.any():
            row, column = (int(x) for x in np.argwhere(bad)[0])
            raise ValueError(f"{name}[{row}, {column}] = {float(array[row, column])!r} is negative")
    if ref.shape != gen.shape:
        raise ValueError(f"densities_ref and densities_gen differ in shape: {ref.shape} vs {gen.shape}")
    status = np.where(np.isnan(ref).any(axis=1) | np.isnan(gen).any(axis=1), UNDEFINED, OK).astype(np.int8)
    terms = np.full(len(ref), np.nan)
    usable = status == OK
    if usable.sum() < 2:
        status[usable] = UNDEFINED
        return terms, status
    r, g = ref[usable], gen[usable]
    mean_r, sd_r = r.mean(axis=0), r.std(axis=0)
    if standardization == "separate":
        mean_g, sd_g = g.mean(axis=0), g.std(axis=0)
    else:
        mean_g, sd_g = mean_r, sd_r
    terms[usable] = np.linalg.norm(_zscore(r, mean_r, sd_r) - _zscore(g, mean_g, sd_g), axis=1)
    return terms, status


def linguistic_distancing(densities_ref: ArrayLike, densities_gen: ArrayLike, *,
                          standardization: str = "separate") -> MetricResult:
    """Linguistic Distancing (Eq. 4): mean L2 distance of z-scored distancing-density vectors; range [0, inf).

    Needs at least two usable items (else ``value`` is ``None``); see the module docstring for sigma = 0.
    """
    return aggregate("LD", *linguistic_distancing_terms(densities_ref, densities_gen,
                                                        standardization=standardization))
