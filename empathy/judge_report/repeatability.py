"""Repeatability: the same judge re-run ``k`` times on the same outputs, with its configured temperature and seed.

For each dimension, over the outputs rated in every run:

* the **flip rate**: the share of run pairs that disagree on an output (a change beyond the tolerance: 0 for
  counts and labels, :data:`empathy.judge_report.probes.DEFAULT_SCORE_TOLERANCE` on a unit-interval score),
  averaged over outputs; it estimates the chance that two runs disagree, whatever ``k``. A judge that flips a
  binary label with probability ``p`` per call has ``2 p (1 - p)``. Beside it, the share of outputs on which any
  run differs (it grows with ``k``);
* **Krippendorff's alpha** with the runs as raters (:func:`empathy.agreement.krippendorff_alpha`, the level by
  :func:`empathy.agreement.default_alpha_level`): 1 for a judge that repeats itself.

Both intervals come from one item-cluster bootstrap (:func:`empathy.bootstrap.resample_counts`: the items are
the independent units, an item's outputs move together): the expanded percentile interval for the flip rate
(a ratio of means, as the project's metrics) and the percentile interval for alpha. A judge whose every run
agrees has flip rate 0 with a zero-width interval: the interval then says nothing, and the report says so.

:func:`rerun_rates` turns the override ledger's re-run classes (:class:`empathy.labels.ledger.RerunLedger`) into
numbers: per dimension, the share of the team's decisions a re-run judge now confirms, with an item-unit interval.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from empathy.judge_report.probes import DEFAULT_SCORE_TOLERANCE, violation_interval

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
REPEATABILITY_COLUMNS: tuple[str, ...] = ("dimension", "k", "n_outputs", "n_items", "flip_rate", "flip_low",
                                          "flip_high", "any_flip", "alpha", "alpha_level", "alpha_low", "alpha_high")


@dataclass(frozen=True)
class Repeatability:
    """The repeatability of a judge on one dimension across ``k`` runs."""

    dimension: str
    k: int
    n_outputs: int
    n_items: int
    flip_rate: float | None
    flip_low: float | None
    flip_high: float | None
    any_flip: float | None
    alpha: float | None
    alpha_level: str
    alpha_low: float | None
    alpha_high: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (:data:`REPEATABILITY_COLUMNS`)."""
        return {name: getattr(self, name) for name in REPEATABILITY_COLUMNS}


def sample_outputs(outputs: pd.DataFrame, n: int | None, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """``n`` outputs drawn without replacement by ``default_rng(seed)`` (all of them when ``n`` is ``None`` or at
    least their number), in their original order."""
    if n is None or n >= len(outputs):
        return outputs.reset_index(drop=True)
    if n < 1:
        raise ValueError(f"the sample needs at least one output, got {n}")
    chosen = np.sort(np.random.default_rng(seed).choice(len(outputs), size=n, replace=False))
    return outputs.iloc[chosen].reset_index(drop=True)


def rerun(outputs: pd.DataFrame, judge: Any, k: int, *, task_protocols: Any = "paper", secrets: Any = None
          ) -> list[pd.DataFrame]:
    """The ratings of ``k`` runs of ``judge`` over ``outputs``, each sent afresh (no answer cache: a cached answer
    would repeat itself). Cost: ``k`` times :func:`empathy.judges.run.planned_requests`."""
    from empathy.judges.run import run_judge

    if k < 2:
        raise ValueError(f"repeatability needs at least 2 runs, got {k}")
    return [run_judge(outputs, judge, cache=None, task_protocols=task_protocols, secrets=secrets).ratings
            for _ in range(k)]


def _tolerance(dimension: str, values: np.ndarray) -> float:
    present = values[~np.isnan(values)]
    whole = bool(len(present)) and bool(np.all(present == np.round(present)))
    return 0.0 if whole or dimension not in ("e_gen", "e_ref") else DEFAULT_SCORE_TOLERANCE


def _run_matrix(runs: Sequence[pd.DataFrame], dimension: str) -> pd.DataFrame:
    columns = []
    for number, ratings in enumerate(runs):
        chosen = ratings[ratings["dimension"] == dimension]
        series = chosen.groupby([chosen["item_id"].astype(str), chosen["model"].astype(str)])["value"].last()
        columns.append(series.rename(number))
    return pd.concat(columns, axis=1).dropna()


def repeatability(runs: Sequence[pd.DataFrame], *, dimensions: Sequence[str] | None = None,
                  n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> list[Repeatability]:
    """:class:`Repeatability` per dimension of ``runs`` (long-form ratings of one judge, one frame per run)."""
    from empathy.agreement import default_alpha_level, krippendorff_alpha
    from empathy.bootstrap import expanded_levels, resample_counts

    if len(runs) < 2:
        raise ValueError(f"repeatability needs at least 2 runs, got {len(runs)}")
    names = dimensions or sorted(set().union(*(set(r["dimension"].astype(str)) for r in runs)))
    found = []
    for dimension in names:
        matrix = _run_matrix(runs, dimension)
        values = matrix.to_numpy(dtype=float)
        level = default_alpha_level(values.ravel(), dimension)
        if len(matrix) < 2:
            found.append(Repeatability(dimension, len(runs), len(matrix), 0, None, None, None, None, None, level,
                                       None, None))
            continue
        tolerance = _tolerance(dimension, values)
        pairs = list(itertools.combinations(range(values.shape[1]), 2))
        unit_flip = np.mean([np.abs(values[:, a] - values[:, b]) > tolerance + 1e-12 for a, b in pairs], axis=0)
        items, codes = np.unique(matrix.index.get_level_values(0), return_inverse=True)
        flip_sum = np.bincount(codes, weights=unit_flip, minlength=len(items))
        units = np.bincount(codes, minlength=len(items)).astype(float)
        resampled_flip, resampled_alpha = [], []
        for counts in resample_counts(len(items), n_resamples, seed):
            resampled_flip.append((counts @ flip_sum) / (counts @ units))
            for row in counts:
                columns = np.repeat(np.arange(len(matrix)), row[codes].astype(int))
                resampled_alpha.append(krippendorff_alpha(values[columns].T, level))
        flips = np.concatenate(resampled_flip)
        low_level, high_level = expanded_levels(len(items)) if len(items) >= 2 else (0.025, 0.975)
        flip_low, flip_high = (float(np.quantile(flips, low_level)), float(np.quantile(flips, high_level)))
        defined = np.array([a for a in resampled_alpha if a is not None], dtype=float)
        alpha = krippendorff_alpha(values.T, level)
        alpha_low, alpha_high = ((float(np.quantile(defined, 0.025)), float(np.quantile(defined, 0.975)))
                                 if len(defined) >= n_resamples / 2 else (None, None))
        found.append(Repeatability(dimension, len(runs), len(matrix), len(items), float(unit_flip.mean()),
                                   flip_low, flip_high, float((unit_flip > 0).mean()), alpha, level, alpha_low,
                                   alpha_high))
    return found


def repeatability_frame(results: Sequence[Repeatability]) -> pd.DataFrame:
    """One row per dimension (:data:`REPEATABILITY_COLUMNS`)."""
    return pd.DataFrame([r.to_dict() for r in results], columns=list(REPEATABILITY_COLUMNS))


def rerun_rates(rerun_ledger: Any) -> pd.DataFrame:
    """The ledger's re-run classes as numbers, per dimension: confirmed, disputed, stale and orphaned decisions,
    and the share of the fresh (confirmed or disputed) decisions the re-run confirms, with the probes' interval
    (the item as the unit: :func:`empathy.judge_report.probes.violation_interval`)."""
    parts = {name: getattr(rerun_ledger, name) for name in ("confirmed", "disputed", "stale", "orphaned")}
    dimensions = sorted({str(d) for frame in parts.values() if len(frame) for d in frame["dimension"]})
    rows = []
    for dimension in dimensions:
        counts = {name: int((frame["dimension"].astype(str) == dimension).sum()) if len(frame) else 0
                  for name, frame in parts.items()}
        fresh = counts["confirmed"] + counts["disputed"]
        flags, items = [], []
        for name in ("confirmed", "disputed"):
            frame = parts[name]
            if len(frame):
                chosen = frame[frame["dimension"].astype(str) == dimension]
                flags += [name == "confirmed"] * len(chosen)
                items += chosen["item_id"].astype(str).tolist()
        low, high = violation_interval(flags, items)
        rows.append({"dimension": dimension, **counts, "confirmed_share": counts["confirmed"] / fresh if fresh
                     else None, "confirmed_low": low, "confirmed_high": high})
    return pd.DataFrame(rows, columns=["dimension", "confirmed", "disputed", "stale", "orphaned", "confirmed_share",
                                       "confirmed_low", "confirmed_high"])


def repeatability_signature(judge_signature: str, k: int, n: int | None, seed: int, n_resamples: int) -> str:
    """The repeatability part of a signature."""
    return (f"{judge_signature}|repeatability:k={k};sample={'all' if n is None else n};sample-seed={seed};"
            f"cache=off|flip:pairwise(tolerance:e={DEFAULT_SCORE_TOLERANCE:g},others=0)|"
            f"interval:item-cluster-bootstrap(n={n_resamples},seed={seed};flip=expanded-percentile;"
            "alpha=percentile)")
