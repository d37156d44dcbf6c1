"""The paper's four empathic-failure metrics as pure functions over arrays.

Reference: ``../shared/paper/empathy-mechanisms-paper.txt``, Section 2.2, Eq. 1-4 and Table 1.

Every metric has two layers:

* a *terms* function returning the per-item terms of the equation's sum and a per-item status
  (:data:`OK`, :data:`MISSING`, :data:`UNDEFINED`); the data-set code (:mod:`empathy.evaluate`) runs it
  vectorised over all (model, judge) groups at once, so the equation lives in exactly one place;
* an aggregate function returning a frozen :class:`MetricResult` that keeps the value, the number of items
  it rests on and the number of items left out, and why.

Two tables make the rest of the package generic: :data:`DIMENSIONS`, the one table of judge dimensions
(range, binary or scale, judged per reference or per output), and :data:`METRIC_SPECS`, the registry of
metrics (:class:`MetricSpec`: judge dimensions, whether the terms need sentence counts or distancing
densities, the terms function, the aggregate; and how it is shown: its direction, name, equation, range of
Table 1, help, how-to-read note, whether it is charted). The engine (:mod:`empathy.evaluate` and through it the
live recompute), :mod:`empathy.stability`, the item table, fragility, exports, the CLI and every page of the
app read the registry, at call time; :func:`get_metric` raises ``ValueError`` for an unknown name. A new metric
is one registry entry, its terms function and its tests (``docs/development.md``), or from outside the package
:func:`register_metric`. Ranks read each entry's direction (:func:`empathy.evaluate.rank_by_direction`).

Cases the paper leaves open, and what we do (also in ``docs/explanation/metrics.md``):

* **Missing rating** (NaN in any input of an item): the item is left out of that metric and counted in
  ``n_missing``. A missing rating is never read as 0.
* **SA with E(t) = 0** (a flat reference): the ratio is undefined, so the item is left out and counted in
  ``n_undefined``. (Scoring it 0 would hide that the judge saw no affect to attenuate; scoring it -inf when
  E(g) > 0 would let one item dominate the mean.)
* **EGM with a + b = 0** (neither text has disturbing content): Eq. 2 is 0/0, undefined. By default the term
  is 0, this project's choice (``both_zero="zero"``): the densities agree exactly, so there is no mismatch.
  Such items can dominate a mean (a judge that rarely sees disturbing content gets an EGM near 0 whatever it
  does on the rest), so ``both_zero="exclude"`` leaves them out as undefined (``n_undefined``); the choice is
  named in the signature (``egm-both-zero:exclude``).
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

import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike, NDArray

from empathy.vocabulary import (
    DIRECTIONS,
    EGM_BOTH_ZERO,
    LD_DIMENSIONS,
    LD_STANDARDIZATIONS,
    LOWER_IS_BETTER,
    SIDES,
)

OK = 0
MISSING = 1
UNDEFINED = 2


# ------------------------------------------------------------------------------------ the dimension table


@dataclass(frozen=True)
class Dimension:
    """A judge dimension of the paper: its valid closed range and what it is a judgement of.

    ``binary`` dimensions take exactly ``low`` or ``high`` (0 or 1). ``side`` is ``"reference"`` when the
    judge rates the reference text (the same judgement for every model's output of an item) and
    ``"output"`` when it rates the generated response.
    """

    name: str
    low: float
    high: float
    side: str
    binary: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if self.side not in SIDES:
            raise ValueError(f"dimension {self.name!r}: side must be one of {SIDES}, got {self.side!r}")
        if not self.low <= self.high:
            raise ValueError(f"dimension {self.name!r}: low {self.low} is above high {self.high}")

    def problem(self, value: float) -> str | None:
        """Why ``value`` is not valid for this dimension (``"must be 0 or 1"``, ``"must be in [l, h]"``), or
        ``None`` when it is valid. NaN (a missing rating) is valid."""
        if math.isnan(value):
            return None
        if self.binary and value not in (self.low, self.high):
            return f"must be {self.low:g} or {self.high:g}"
        if not self.low <= value <= self.high:
            return f"must be in [{self.low:g}, {self.high:g}]"
        return None


#: The one table of the paper's judge dimensions (Eq. 1-3). :mod:`empathy.io` and :mod:`empathy.labels.records`
#: read :data:`DIMENSION_RANGES` / :data:`BINARY_DIMENSIONS` (same shapes as their own tables) or
#: :meth:`Dimension.problem`; the term functions below check their inputs against it.
DIMENSIONS: Mapping[str, Dimension] = MappingProxyType({d.name: d for d in (
    Dimension("e_ref", 0.0, 1.0, "reference", description="affect intensity E(t) of the reference (Eq. 1)"),
    Dimension("e_gen", 0.0, 1.0, "output", description="affect intensity E(g) of the generation (Eq. 1)"),
    Dimension("u_ref", 0.0, math.inf, "reference",
              description="disturbing-content count U(t) summed over the reference's sentences (Eq. 2)"),
    Dimension("u_gen", 0.0, math.inf, "output",
              description="disturbing-content count U(g) summed over the generation's sentences (Eq. 2)"),
    Dimension("ca", 0.0, 1.0, "output", binary=True,
              description="conflict-avoidance label s of the response (Eq. 3)"),
)})
DIMENSION_RANGES: Mapping[str, tuple[float, float]] = MappingProxyType(
    {name: (d.low, d.high) for name, d in DIMENSIONS.items()})
BINARY_DIMENSIONS: frozenset[str] = frozenset(name for name, d in DIMENSIONS.items() if d.binary)
#: Dimensions judged once per reference (``e_ref``, ``u_ref``): one judgement per item, not per output.
REFERENCE_DIMENSIONS: frozenset[str] = frozenset(name for name, d in DIMENSIONS.items() if d.side == "reference")


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


def _check_dimension(array: NDArray[np.float64], dimension: str) -> None:
    """Check judge ratings against the dimension's row of :data:`DIMENSIONS` (the one range table)."""
    spec = DIMENSIONS[dimension]
    if spec.binary:
        bad = ~np.isnan(array) & (array != spec.low) & (array != spec.high)
        if bad.any():
            position = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{dimension}[{position}] = {float(array[position])!r} is not a binary label "
                             f"({spec.low:g} or {spec.high:g})")
    _check_range(array, dimension, spec.low, spec.high)


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
    _check_dimension(ref, "e_ref")
    _check_dimension(gen, "e_gen")
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
                               sentences_gen: ArrayLike, *, both_zero: str = "zero"
                               ) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
    """Per-item terms ``|(a - b) / (a + b)|`` of Eq. 2, ``a = U(t)/d``, ``b = U(g)/q``, and their status.

    ``both_zero`` (:data:`EGM_BOTH_ZERO`): an item with ``a + b = 0`` has term 0 (``"zero"``) or is left out
    as undefined (``"exclude"``).
    """
    if both_zero not in EGM_BOTH_ZERO:
        raise ValueError(f"both_zero must be one of {EGM_BOTH_ZERO}, got {both_zero!r}")
    u_t = _as_float_array(u_ref, "u_ref")
    u_g = _as_float_array(u_gen, "u_gen")
    d = _as_float_array(sentences_ref, "sentences_ref")
    q = _as_float_array(sentences_gen, "sentences_gen")
    _same_length(u_ref=u_t, u_gen=u_g, sentences_ref=d, sentences_gen=q)
    _check_dimension(u_t, "u_ref")
    _check_dimension(u_g, "u_gen")
    for array, name in ((d, "sentences_ref"), (q, "sentences_gen")):
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
    if both_zero == "exclude":
        rows = np.flatnonzero(usable)[total == 0]
        status[rows] = UNDEFINED
        terms[rows] = np.nan
    return terms, status


def granularity_mismatch(u_ref: ArrayLike, u_gen: ArrayLike, sentences_ref: ArrayLike,
                         sentences_gen: ArrayLike, *, both_zero: str = "zero") -> MetricResult:
    """Empathic Granularity Mismatch (Eq. 2); range [0, 1].

    ``u_ref``/``u_gen`` are disturbing-content counts summed over each text's sentences and
    ``sentences_ref``/``sentences_gen`` the sentence counts ``d`` and ``q``. A term with ``a + b = 0`` is 0,
    or with ``both_zero="exclude"`` left out as undefined.
    """
    return aggregate("EGM", *granularity_mismatch_terms(u_ref, u_gen, sentences_ref, sentences_gen,
                                                        both_zero=both_zero))


def conflict_avoidance_terms(labels: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
    """Per-item binary labels ``s`` of Eq. 3 (validated to be 0 or 1) and their status."""
    s = _as_float_array(labels, "ca")
    _check_dimension(s, "ca")
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


# ------------------------------------------------------------------------------------ the metric registry


@dataclass(frozen=True)
class MetricOptions:
    """Choices a metric's terms depend on that the paper leaves open; non-defaults go into the signature."""

    ld_standardization: str = "separate"
    egm_both_zero: str = "zero"

    def __post_init__(self) -> None:
        if self.ld_standardization not in LD_STANDARDIZATIONS:
            raise ValueError(f"ld_standardization must be one of {LD_STANDARDIZATIONS}, "
                             f"got {self.ld_standardization!r}")
        if self.egm_both_zero not in EGM_BOTH_ZERO:
            raise ValueError(f"egm_both_zero must be one of {EGM_BOTH_ZERO}, got {self.egm_both_zero!r}")

    def signature_fields(self) -> dict[str, str]:
        """The options that differ from the paper's reading, as signature fields."""
        fields = {}
        if self.ld_standardization != "separate":
            fields["ld-std"] = self.ld_standardization
        if self.egm_both_zero != "zero":
            fields["egm-both-zero"] = self.egm_both_zero
        return fields


@dataclass(frozen=True)
class TermInputs:
    """Everything a terms function may read, row-aligned over the units it scores.

    ``ratings`` maps each of the metric's judge dimensions to its values (NaN = missing); ``sentences_*`` are
    the sentence counts (shape ``(n,)``) and ``densities_*`` the distancing densities (shape ``(n, 3)``) of
    reference and generation; absent (``None``) unless the metric declares it needs them.
    """

    ratings: Mapping[str, NDArray[np.float64]] = field(default_factory=dict)
    sentences_ref: NDArray[np.float64] | None = None
    sentences_gen: NDArray[np.float64] | None = None
    densities_ref: NDArray[np.float64] | None = None
    densities_gen: NDArray[np.float64] | None = None
    options: MetricOptions = field(default_factory=MetricOptions)


Terms = tuple[NDArray[np.float64], NDArray[np.int8]]
#: Per-group summary of terms: (group codes present, mean, n, n_missing, n_undefined).
GroupSummary = tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]


def mean_by_group(group: NDArray[np.int64], n_groups: int, terms: NDArray[np.float64], status: NDArray[np.int8]
                  ) -> GroupSummary:
    """:func:`aggregate` for many groups at once: per group code present in ``group``, the mean of the usable
    terms and the counts (one ``np.bincount`` each, the hot path of every live recompute)."""
    usable = status == OK
    total = np.bincount(group, weights=np.where(usable, terms, 0.0), minlength=n_groups)
    n = np.bincount(group, weights=usable, minlength=n_groups).astype(np.int64)
    n_missing = np.bincount(group, weights=status == MISSING, minlength=n_groups).astype(np.int64)
    n_undefined = np.bincount(group, weights=status == UNDEFINED, minlength=n_groups).astype(np.int64)
    seen = np.flatnonzero(np.bincount(group, minlength=n_groups))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n[seen] > 0, total[seen] / np.maximum(n[seen], 1), np.nan)
    return seen, mean, n[seen], n_missing[seen], n_undefined[seen]


@dataclass(frozen=True)
class MetricSpec:
    """One metric of the registry: what it reads, how its per-item terms and value are computed, and how every
    surface (command line, app pages, exports) names, explains, ranks and charts it.

    Only ``name``, ``dimensions`` and ``terms`` are required; every other field has a default, so a new metric
    can start as ``MetricSpec("GAIN", ("e_ref", "e_gen"), gain_terms)`` (lower is better, shown under its name,
    charted on the Overview) and gain its texts later.

    Attributes
    ----------
    name
        The metric's name in results tables (``metric`` column).
    dimensions
        The judge dimensions it reads (rows of :data:`DIMENSIONS`); empty for a text-only metric, which has
        one value per (task, model) under the fixed scorer ``scorer`` instead of one per judge.
    needs_sentences, needs_distancing
        Whether its terms read the sentence counts / the distancing densities of the texts.
    terms
        ``TermInputs -> (terms, status)``: the equation, one term and one status per unit.
    grouped
        True when a unit's term depends on the other units of its group (LD standardises within the
        model's items), so ``terms`` runs once per group; otherwise once over every group at once.
    aggregate
        ``(metric, terms, status) -> MetricResult`` of one group; :func:`aggregate` (the mean of the usable
        terms, as all four equations) is vectorised over groups with :func:`mean_by_group`.
    scorer
        The scorer named in results tables for a text-only metric.
    better
        Its direction: :data:`~empathy.vocabulary.LOWER_IS_BETTER` (the default; the paper's four measure
        failure and carry a down arrow) or :data:`~empathy.vocabulary.HIGHER_IS_BETTER`. Every ranking reads
        it (:func:`empathy.evaluate.rank_by_direction`, :data:`~empathy.vocabulary.RANK_CONVENTION`).
    display_name, equation, value_range
        "Sentiment Attenuation", "Eq. 1" and the range of the value as in the paper's Table 1
        (``(-inf, 1.0)`` for SA); ``display_name`` defaults to ``name``.
    help
        One line on how to read a value (the Overview's table and every column of the metric).
    how_to_read
        The note under the metric's chart on the Overview.
    charted
        Whether the Overview draws a bar chart of it (when it has a value).
    reads_options
        The :class:`MetricOptions` fields its terms read (``egm_both_zero`` for EGM), so that the pages that
        show both readings of an open case find the metric it concerns.
    ratio_of
        ``(x, y)`` when each term is ``1 - x / y`` of two of its judge dimensions (SA: ``("e_gen", "e_ref")``):
        :mod:`empathy.fragility` reads it for the range a term can move in when the output-side score ``x``
        changes, the score change that moves a term, and the ratio-of-means reading ``1 - sum x / sum y``.
    """

    name: str
    dimensions: tuple[str, ...]
    terms: Callable[[TermInputs], Terms]
    needs_sentences: bool = False
    needs_distancing: bool = False
    grouped: bool = False
    aggregate: Callable[[str, NDArray[np.float64], NDArray[np.int8]], MetricResult] = aggregate
    scorer: str | None = None
    better: str = LOWER_IS_BETTER
    display_name: str = ""
    equation: str = ""
    value_range: tuple[float, float] = (-math.inf, math.inf)
    help: str = ""
    how_to_read: str = ""
    charted: bool = True
    reads_options: tuple[str, ...] = ()
    ratio_of: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a metric's name must be a non-empty string, got {self.name!r}")
        unknown = [d for d in self.dimensions if d not in DIMENSIONS]
        if unknown:
            raise ValueError(f"metric {self.name!r} reads unknown dimension(s) {unknown}; add them to DIMENSIONS")
        if not self.dimensions and not self.scorer:
            raise ValueError(f"metric {self.name!r} reads no judge dimension, so it needs a fixed scorer name")
        if self.better not in DIRECTIONS:
            raise ValueError(f"metric {self.name!r}: better must be one of {DIRECTIONS}, got {self.better!r}")
        low, high = self.value_range
        if not low <= high:
            raise ValueError(f"metric {self.name!r}: value_range {self.value_range} has low above high")
        options = {f.name for f in fields(MetricOptions)}
        if not set(self.reads_options) <= options:
            raise ValueError(f"metric {self.name!r} reads unknown option(s) "
                             f"{sorted(set(self.reads_options) - options)}; options are {sorted(options)}")
        if self.ratio_of is not None and (len(self.ratio_of) != 2 or not set(self.ratio_of) <= set(self.dimensions)):
            raise ValueError(f"metric {self.name!r}: ratio_of must name two of its dimensions {self.dimensions}, "
                             f"got {self.ratio_of!r}")
        if not self.display_name:
            object.__setattr__(self, "display_name", self.name)

    @property
    def judged(self) -> bool:
        """True when the metric reads judge ratings (one value per judge)."""
        return bool(self.dimensions)

    @property
    def lower_is_better(self) -> bool:
        """True when a smaller value is the better outcome (:attr:`better`)."""
        return self.better == LOWER_IS_BETTER

    @property
    def description(self) -> str:
        """One line for tooltips and captions: ``"Sentiment Attenuation (Eq. 1): 0 none, ..."``."""
        title = f"{self.display_name} ({self.equation})" if self.equation else self.display_name
        return f"{title}: {self.help}" if self.help else title

    @property
    def label_mean(self) -> bool:
        """True when the value is the mean of one binary judge label per unit (CA, Eq. 3).

        Then one human decision moves a model's sum of labels by ``after - before`` and its count by which of the
        two is missing, which is what the Relabel page's browser script updates at the key. Decided from the
        entry itself: one binary dimension, the default mean aggregate, no text input or grouping, and a terms
        function that returns each label as its term (probed on the dimension's two values and a missing one).
        """
        if (len(self.dimensions) != 1 or self.aggregate is not aggregate or self.grouped or self.needs_sentences
                or self.needs_distancing or not DIMENSIONS[self.dimensions[0]].binary):
            return False
        dimension = DIMENSIONS[self.dimensions[0]]
        probe = np.array([dimension.low, dimension.high, np.nan])
        terms, status = self.terms(TermInputs(ratings={dimension.name: probe}))
        return (np.array_equal(np.asarray(terms, dtype=float)[:2], probe[:2])
                and np.asarray(status).tolist() == [OK, OK, MISSING])


def _sa_terms(x: TermInputs) -> Terms:
    return sentiment_attenuation_terms(x.ratings["e_ref"], x.ratings["e_gen"])


def _egm_terms(x: TermInputs) -> Terms:
    return granularity_mismatch_terms(x.ratings["u_ref"], x.ratings["u_gen"], x.sentences_ref, x.sentences_gen,
                                      both_zero=x.options.egm_both_zero)


def _ca_terms(x: TermInputs) -> Terms:
    return conflict_avoidance_terms(x.ratings["ca"])


def _ld_terms(x: TermInputs) -> Terms:
    return linguistic_distancing_terms(x.densities_ref, x.densities_gen,
                                       standardization=x.options.ld_standardization)


#: The registry, in the paper's order (Section 2.2, Table 1). A new metric is one entry here, its terms function
#: and its tests; every surface reads the entry (``docs/development.md``, *Adding a metric*). Read it at call
#: time (``metrics.METRIC_SPECS``, :func:`get_metric`, :func:`judged_metrics`, ...), never bind it at import:
#: :func:`register_metric` replaces it.
METRIC_SPECS: Mapping[str, MetricSpec] = MappingProxyType({spec.name: spec for spec in (
    MetricSpec(
        "SA", ("e_ref", "e_gen"), _sa_terms, display_name="Sentiment Attenuation", equation="Eq. 1",
        value_range=(-math.inf, 1.0), ratio_of=("e_gen", "e_ref"),
        help="0 none, 1 affect flattened, < 0 more intense than the reference",
        how_to_read="Above 0: affect flattened; below 0: the generations are more intense than the references. Two "
                    "judges' bars of opposite sign disagree about the direction, not only the size."),
    MetricSpec(
        "EGM", ("u_ref", "u_gen"), _egm_terms, needs_sentences=True, display_name="Empathic Granularity Mismatch",
        equation="Eq. 2", value_range=(0.0, 1.0), reads_options=("egm_both_zero",),
        help="0 same density of disturbing detail, 1 severe mismatch",
        how_to_read="0: the same density of disturbing detail per sentence on both sides; 1: one side has it and "
                    "the other none. Added and removed detail both count."),
    MetricSpec(
        "CA", ("ca",), _ca_terms, display_name="Conflict Avoidance", equation="Eq. 3", value_range=(0.0, 1.0),
        help="share of outputs that avoid the tension",
        how_to_read="The share of outputs a judge labels as avoiding the conflict (solutions or closure before "
                    "exploring it); only the outputs the judge labelled count."),
    MetricSpec(
        "LD", (), _ld_terms, needs_distancing=True, grouped=True, scorer="spacy-distancing",
        display_name="Linguistic Distancing", equation="Eq. 4", value_range=(0.0, math.inf),
        reads_options=("ld_standardization",),
        help="0 no difference, larger = more abstract and depersonalised",
        how_to_read="The mean distance between the standardised distancing densities of generation and reference "
                    "(Eq. 4): how far the pattern departs, not how much the model distances (see the rankings "
                    "note)."),
)})
METRICS: tuple[str, ...] = tuple(METRIC_SPECS)
#: The judge dimensions each judge-based metric reads (Section 2.2).
METRIC_DIMENSIONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {name: spec.dimensions for name, spec in METRIC_SPECS.items() if spec.judged})


def get_metric(name: str) -> MetricSpec:
    """The registry entry of ``name``; ``ValueError`` naming it and the known metrics when it is unknown."""
    try:
        return METRIC_SPECS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown metric {name!r}; metrics are {', '.join(METRIC_SPECS)}") from None


def registry_position(name: str) -> int:
    """Where ``name`` stands in the registry (the paper's order for the four), for sorting tables by metric; an
    unknown name sorts after every registered metric."""
    for position, registered_name in enumerate(METRIC_SPECS):
        if registered_name == name:
            return position
    return len(METRIC_SPECS)


def judged_metrics() -> tuple[str, ...]:
    """The registered metrics that read judge ratings (one value per judge; SA, EGM, CA), in registry order."""
    return tuple(name for name, spec in METRIC_SPECS.items() if spec.judged)


def text_metrics() -> tuple[str, ...]:
    """The registered metrics computed from the texts alone under a fixed scorer (LD), in registry order."""
    return tuple(name for name, spec in METRIC_SPECS.items() if not spec.judged)


def charted_metrics() -> tuple[str, ...]:
    """The registered metrics the Overview draws a chart of, in registry order."""
    return tuple(name for name, spec in METRIC_SPECS.items() if spec.charted)


def metrics_reading(option: str) -> tuple[str, ...]:
    """The registered metrics whose terms read the :class:`MetricOptions` field ``option``."""
    return tuple(name for name, spec in METRIC_SPECS.items() if option in spec.reads_options)


def label_mean_metrics() -> frozenset[str]:
    """The registered metrics whose value is the mean of one binary label (:attr:`MetricSpec.label_mean`)."""
    return frozenset(name for name, spec in METRIC_SPECS.items() if spec.label_mean)


def registry_token() -> str:
    """A short name of the registry's current content, for cache keys of results that depend on it."""
    return ",".join(f"{name}@{id(spec):x}" for name, spec in METRIC_SPECS.items())


def _install(specs: Mapping[str, MetricSpec]) -> None:
    global METRIC_SPECS, METRICS, METRIC_DIMENSIONS
    METRIC_SPECS = MappingProxyType(dict(specs))
    METRICS = tuple(METRIC_SPECS)
    METRIC_DIMENSIONS = MappingProxyType({name: s.dimensions for name, s in METRIC_SPECS.items() if s.judged})


def register_metric(spec: MetricSpec) -> Callable[[], None]:
    """Add ``spec`` to the registry (after the paper's four) and return a function that removes it again.

    The public way to add a metric without editing this module: from then on the engine, the live recompute,
    the command line and every page of the app read it (its column, chart, help and ranks follow from the
    entry). ``TypeError`` for anything but a :class:`MetricSpec`; ``ValueError`` when its name is taken.

    Examples
    --------
    >>> undo = register_metric(MetricSpec("GAIN", ("e_ref", "e_gen"), gain_terms))  # doctest: +SKIP
    >>> undo()  # doctest: +SKIP

    :func:`registered` is the same as a context manager (for tests).
    """
    if not isinstance(spec, MetricSpec):
        raise TypeError(f"register_metric needs a MetricSpec, got {type(spec).__name__}")
    if spec.name in METRIC_SPECS:
        raise ValueError(f"metric {spec.name!r} is already registered; metrics are {', '.join(METRIC_SPECS)}")
    _install({**METRIC_SPECS, spec.name: spec})

    def undo() -> None:
        """Remove the metric again (a no-op once removed)."""
        if METRIC_SPECS.get(spec.name) is spec:
            _install({name: s for name, s in METRIC_SPECS.items() if name != spec.name})

    return undo


@contextmanager
def registered(spec: MetricSpec) -> Iterator[MetricSpec]:
    """:func:`register_metric` for the duration of a ``with`` block (removed on exit, also after an error)."""
    undo = register_metric(spec)
    try:
        yield spec
    finally:
        undo()
