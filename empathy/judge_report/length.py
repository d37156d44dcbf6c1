"""Does the judge reward length more than the annotators do? The partial correlation with output length.

For one judge and dimension, on the outputs the judge and at least one annotator rated and whose generation has
text: ``r = corr(judge, log(1 + words) | annotators' mean)``, the Pearson partial correlation of the judge's
rating with the output's length once the annotators' mean rating is accounted for. A judge that sees what the
annotators see and nothing else has ``r`` = 0 whatever the annotators' own dependence on length (a longer
answer that *is* better is rated higher by both); ``r`` > 0 is length rewarded beyond the annotators. Beside
it, the annotators' own correlation with length, ``corr(annotators' mean, log(1 + words))``.

Both come with a Fisher-z 95 % interval (``atanh(r) +- z / sqrt(n - 3 - k)``, ``k`` = 1 covariate for the
partial correlation, 0 for the plain one): exact in the limit for normal data; its coverage on this shape of
data is checked by simulation in ``tests/test_judge_report_length.py``. Reported as an effect with its
uncertainty, never against a fixed threshold. Words are whitespace-separated tokens of ``generation``; the log
keeps a few very long outputs from setting the correlation alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from empathy.metrics import REFERENCE_DIMENSIONS

CONFIDENCE = 0.95
#: Fewest outputs for which an interval is given (Fisher's z needs n > 3 + k).
MIN_OUTPUTS = 10


@dataclass(frozen=True)
class LengthDependence:
    """The judge's partial correlation with length and the annotators' correlation with it."""

    n: int
    partial: float | None
    partial_low: float | None
    partial_high: float | None
    annotators: float | None
    annotators_low: float | None
    annotators_high: float | None

    def to_dict(self) -> dict[str, object]:
        """JSON-ready fields, prefixed ``length_``."""
        return {"length_n": self.n, "length_partial_r": self.partial, "length_partial_low": self.partial_low,
                "length_partial_high": self.partial_high, "length_annotators_r": self.annotators,
                "length_annotators_low": self.annotators_low, "length_annotators_high": self.annotators_high}


def fisher_interval(r: float, n: int, covariates: int = 0, confidence: float = CONFIDENCE
                    ) -> tuple[float, float] | tuple[None, None]:
    """Fisher-z interval of a (partial) correlation ``r`` on ``n`` observations; ``(None, None)`` when too few."""
    from scipy.stats import norm

    dof = n - 3 - covariates
    if dof <= 0 or not math.isfinite(r):
        return None, None
    z = math.atanh(min(max(r, -0.999999999), 0.999999999))
    half = float(norm.ppf(0.5 + confidence / 2)) / math.sqrt(dof)
    return math.tanh(z - half), math.tanh(z + half)


def _corr(x: NDArray[np.float64], y: NDArray[np.float64]) -> float | None:
    if np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def partial_correlation(x: NDArray[np.float64], y: NDArray[np.float64], z: NDArray[np.float64]) -> float | None:
    """Pearson correlation of ``x`` and ``y`` after regressing each on ``z`` (``None`` when undefined)."""
    design = np.column_stack([np.ones(len(z)), z])
    rx = x - design @ np.linalg.lstsq(design, x, rcond=None)[0]
    ry = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
    scale = max(float(np.abs(x).max(initial=0)), float(np.abs(y).max(initial=0)), 1.0)
    if np.std(rx) <= 1e-12 * scale or np.std(ry) <= 1e-12 * scale:
        return None
    return _corr(rx, ry)


def word_counts(outputs: pd.DataFrame) -> pd.Series:
    """Words (whitespace tokens) of each output's ``generation``, indexed by ``(item_id, model)``; an empty
    generation (a text not public) is NaN, not 0."""
    text = outputs["generation"].fillna("").astype(str)
    counts = text.str.split().str.len().astype(float)
    counts[text.str.strip() == ""] = np.nan
    return pd.Series(counts.to_numpy(), index=pd.MultiIndex.from_frame(outputs[["item_id", "model"]].astype(str)))


def length_dependence(matrix: pd.DataFrame, judge: str, annotators: Sequence[str], words: pd.Series,
                      dimension: str) -> LengthDependence | None:
    """:class:`LengthDependence` of ``judge`` from a units x raters ``matrix`` (index ``item_id, model``) and the
    outputs' ``words``; ``None`` for a reference dimension (a reference's rating does not depend on the
    generation's length) or when fewer than :data:`MIN_OUTPUTS` outputs have a length and both ratings."""
    if dimension in REFERENCE_DIMENSIONS:
        return None
    lengths = words.reindex(matrix.index).to_numpy(dtype=float)
    judge_values = matrix[judge].to_numpy(dtype=float)
    humans = matrix[list(annotators)].to_numpy(dtype=float)
    counted = (~np.isnan(humans)).sum(axis=1)
    mean = np.divide(np.nansum(humans, axis=1), counted, out=np.full(len(counted), np.nan), where=counted > 0)
    usable = ~np.isnan(lengths) & ~np.isnan(judge_values) & ~np.isnan(mean)
    n = int(usable.sum())
    if n < MIN_OUTPUTS:
        return None
    log_length = np.log1p(lengths[usable])
    partial = partial_correlation(judge_values[usable], log_length, mean[usable])
    plain = _corr(mean[usable], log_length)
    partial_low, partial_high = fisher_interval(partial, n, 1) if partial is not None else (None, None)
    plain_low, plain_high = fisher_interval(plain, n, 0) if plain is not None else (None, None)
    return LengthDependence(n, partial, partial_low, partial_high, plain, plain_low, plain_high)
