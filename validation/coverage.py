"""Coverage of the package's intervals on simulated data with a known truth (run: ``python -m validation.coverage``).

Issue 23, item 3: a nominal 95 % interval should contain the truth in 95 % of data sets. Each function here draws
``runs`` seeded data sets, computes the package's interval on each and counts how often it holds the truth:

* :func:`ppi_coverage` — the PPI++ interval of :func:`empathy.inference.ppi_mean` and the human-only interval
  beside it, for three models, each with its own true mean and a judge with its own bias and noise: a continuous
  term (standardised gamma, skewness ``skew``; the judge is truth + bias + normal noise) or a binary one (a CA
  judge with false alarms at rate ``noise`` and misses at half that rate). ``width_ratio``: mean PPI width over
  mean human-only width.
* :func:`bootstrap_coverage` — the item-cluster bootstrap of :mod:`empathy.bootstrap` on items x models terms
  with an item effect shared by every model (so the models' values are correlated, as on real data): the
  expanded percentile interval of each model's mean and of the difference of two models, and the plain
  percentile interval for comparison.
* :func:`cluster_rate_coverage` — the Disagreement map's cluster-aware interval
  (:func:`empathy.slice_tests.cluster_rate_interval`) against the Wilson interval over units, on events clustered
  by item (three outputs per item, two judges per output, an item-level rate drawn from a beta distribution).

``docs/statistics.md`` quotes :func:`markdown`'s tables; tests/test_inference.py, tests/test_bootstrap.py and
tests/test_slices.py recompute the rows they assert on.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from empathy.bootstrap import cluster_means, expanded_percentile
from empathy.inference import ppi_mean
from empathy.slice_tests import cluster_rate_interval, wilson_interval

#: (true mean, judge bias or false-alarm rate, judge noise) of the three simulated models.
PPI_MODELS: tuple[tuple[float, float, float], ...] = ((0.2, 0.10, 0.10), (0.5, -0.20, 0.20), (0.35, 0.05, 0.30))
#: True per-model means of the bootstrap simulation.
BOOTSTRAP_MEANS: tuple[float, ...] = (0.2, 0.3, 0.45)
SCALE = 0.25


@dataclass(frozen=True)
class Coverage:
    """How often an interval held the truth: ``coverage`` over ``cases`` intervals, beside a reference interval's."""

    label: str
    n: int
    cases: int
    coverage: float
    reference: float
    width_ratio: float

    def row(self) -> str:
        """The Markdown row docs/statistics.md quotes."""
        return f"| {self.label} | {self.n} | {self.coverage:.3f} | {self.reference:.3f} | {self.width_ratio:.2f} |"


def _skewed(rng: np.random.Generator, size: int | tuple[int, ...], skew: float) -> NDArray[np.float64]:
    """Standardised gamma noise (mean 0, sd 1) with skewness ``skew`` (> 0)."""
    shape = 4.0 / (skew * skew)
    return (rng.gamma(shape, 1.0, size) - shape) / math.sqrt(shape)


@functools.cache  # deterministic (seeded): the tests ask for the same rows twice
def ppi_coverage(kind: str, *, n: int = 80, big_n: int = 720, skew: float = 1.0, runs: int = 500,
                 seed: int = 2023) -> Coverage:
    """Coverage of the 95 % PPI++ interval (``coverage``) and the human-only one (``reference``)."""
    if kind not in ("continuous", "binary"):
        raise ValueError(f"kind must be 'continuous' or 'binary', got {kind!r}")
    rng = np.random.default_rng(seed)
    covered = covered_human = 0
    ratios = []
    for _ in range(runs):
        for mean, bias, noise in PPI_MODELS:
            if kind == "continuous":
                truth = mean + SCALE * _skewed(rng, n + big_n, skew)
                judged = truth + bias + rng.normal(0.0, noise, n + big_n)
            else:
                truth = (rng.random(n + big_n) < mean).astype(float)
                alarm = rng.random(n + big_n) < abs(bias) + noise / 2
                miss = rng.random(n + big_n) < noise / 2
                judged = np.where(truth == 1, np.where(miss, 0.0, 1.0), np.where(alarm, 1.0, 0.0))
            result = ppi_mean(truth[:n], judged[:n], judged[n:])
            covered += result.estimate.low <= mean <= result.estimate.high
            covered_human += result.human.low <= mean <= result.human.high
            ratios.append(result.estimate.width / result.human.width)
    cases = runs * len(PPI_MODELS)
    label = f"PPI++ ({kind}{f', skew {skew:g}' if kind == 'continuous' else ''})"
    return Coverage(label, n, cases, covered / cases, covered_human / cases, float(np.mean(ratios)))


def _bootstrap_terms(rng: np.random.Generator, kind: str, n_items: int, skew: float) -> NDArray[np.float64]:
    """Items x models terms with a shared item effect; model ``j``'s true mean is ``BOOTSTRAP_MEANS[j]``."""
    means = np.array(BOOTSTRAP_MEANS)
    if kind == "continuous":
        item = _skewed(rng, (n_items, 1), skew)
        own = _skewed(rng, (n_items, len(means)), skew)
        return means + SCALE * (0.6 * item + 0.8 * own)
    # binary: a hard item raises every model's rate by 0.15, an easy one lowers it (half of each): means exact
    shift = np.where(rng.random((n_items, 1)) < 0.5, 0.15, -0.15)
    return (rng.random((n_items, len(means))) < means + shift).astype(float)


@functools.cache  # deterministic (seeded): the tests ask for the same rows twice
def bootstrap_coverage(kind: str, *, n_items: int = 40, skew: float = 1.0, runs: int = 500,
                       n_resamples: int = 1000, seed: int = 2024) -> tuple[Coverage, ...]:
    """Coverage of the expanded percentile intervals of each model's mean and of the difference of models 2 and 1
    (``coverage``), beside the plain percentile interval's (``reference``; width ratio expanded / plain)."""
    if kind not in ("continuous", "binary"):
        raise ValueError(f"kind must be 'continuous' or 'binary', got {kind!r}")
    rng = np.random.default_rng(seed)
    means = np.array(BOOTSTRAP_MEANS)
    counts = {"model": [0, 0, []], "difference": [0, 0, []]}
    alpha = 0.05
    for run in range(runs):
        terms = _bootstrap_terms(rng, kind, n_items, skew)
        replicates = cluster_means(terms, n_resamples=n_resamples, seed=run)
        cases = [("model", replicates[:, j], means[j]) for j in range(len(means))]
        cases.append(("difference", replicates[:, 2] - replicates[:, 1], means[2] - means[1]))
        for name, values, truth in cases:
            low, high = expanded_percentile(values, n_items)
            plain_low, plain_high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
            counts[name][0] += low <= truth <= high
            counts[name][1] += plain_low <= truth <= plain_high
            if plain_high > plain_low:
                counts[name][2].append((high - low) / (plain_high - plain_low))
    result = []
    for name, (expanded, plain, ratios) in counts.items():
        cases_n = runs * (len(means) if name == "model" else 1)
        label = f"bootstrap {name} ({kind}{f', skew {skew:g}' if kind == 'continuous' else ''})"
        result.append(Coverage(label, n_items, cases_n, expanded / cases_n, plain / cases_n, float(np.mean(ratios))))
    return tuple(result)


@functools.cache  # deterministic (seeded): the tests ask for the same rows twice
def cluster_rate_coverage(*, n_items: int = 40, runs: int = 1000, seed: int = 2025) -> Coverage:
    """Coverage of the cluster-aware slice-rate interval (``coverage``) and of Wilson over units (``reference``)."""
    rng = np.random.default_rng(seed)
    covered = covered_wilson = 0
    ratios = []
    truth = 0.25  # beta(1, 3) item rates
    outputs, judges = 3, 2
    for _ in range(runs):
        rates = np.repeat(rng.beta(1.0, 3.0, n_items), outputs)
        events = rng.binomial(judges, rates).astype(float)
        units = np.full(len(events), float(judges))
        low, high = cluster_rate_interval(np.zeros(len(events), dtype=np.int64), events, units,
                                          np.repeat(np.arange(n_items), outputs))
        w_low, w_high = wilson_interval([events.sum()], [units.sum()])
        covered += low[0] <= truth <= high[0]
        covered_wilson += w_low[0] <= truth <= w_high[0]
        ratios.append((high[0] - low[0]) / (w_high[0] - w_low[0]))
    return Coverage("slice rate, item clusters", n_items, runs, covered / runs, covered_wilson / runs,
                    float(np.mean(ratios)))


def markdown() -> str:
    """The coverage tables of docs/statistics.md (every row recomputed; about 20 s)."""
    lines = ["| interval | n | coverage | reference | width ratio |", "|---|---|---|---|---|"]
    rows = [ppi_coverage("continuous"), ppi_coverage("binary")]
    rows += [ppi_coverage("continuous", n=n, big_n=9 * n, skew=skew) for skew, n in ((1.0, 30), (2.0, 30),
                                                                                      (2.0, 80), (2.0, 200))]
    rows += [*bootstrap_coverage("continuous"), *bootstrap_coverage("binary")]
    rows += [*bootstrap_coverage("continuous", n_items=15), *bootstrap_coverage("binary", n_items=15)]
    rows.append(cluster_rate_coverage())
    return "\n".join(lines + [row.row() for row in rows])


if __name__ == "__main__":
    print(markdown())
