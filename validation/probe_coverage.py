"""Coverage of a probe's violation-rate interval for a noisy judge, by simulation (the table of
docs/judge-report.md).

The judge flips a binary label (``ca``) at random: on item ``i`` with probability ``f_i``, independently on the
original and on the edited copy, so an invariance probe's output violates with probability
``2 f_i (1 - f_i)``. Two kinds of judge:

* **uniform** — every item has ``f_i = f`` (outputs independent);
* **item-dependent** — ``f_i ~ Beta(f c, (1 - f) c)`` with concentration ``c`` = :data:`CONCENTRATION`: the
  judge is unsure of some items and sure of others, so the outputs of one item (one per model) violate together.

The target is the judge's violation rate on the population of items, ``E[2 f_i (1 - f_i)] =
2 f - 2 (f^2 + f (1 - f) / (c + 1))``. Each cell draws :data:`REPS` seeded data sets of ``n`` items with ``m``
models' outputs each and counts how often the 95 % interval holds the target: the interval the probes report
(:func:`empathy.judge_report.probes.violation_interval`, the item as the unit) beside Wilson's over outputs (the
outputs taken as independent, as the probes did before).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from empathy.judge_report.probes import violation_interval, wilson

FLIP_RATES: tuple[float, ...] = (0.02, 0.1, 0.3)
JUDGES: tuple[str, ...] = ("uniform", "item-dependent")
ITEMS: tuple[int, ...] = (10, 30, 88, 200)
MODELS: tuple[int, ...] = (1, 5)
CONCENTRATION = 2.0
#: Simulated data sets per cell: a coverage near 0.95 is known to +-0.007 (one standard error).
REPS = 1000
CONFIDENCE = 0.95
#: A coverage at or above this holds the level within simulation error (about 3 standard errors below 0.95).
HOLDS = 0.93


def target(flip_rate: float, judge: str) -> float:
    """The judge's violation rate on the population of items."""
    spread = flip_rate * (1 - flip_rate) / (CONCENTRATION + 1) if judge == "item-dependent" else 0.0
    return 2 * flip_rate - 2 * (flip_rate ** 2 + spread)


@dataclass(frozen=True)
class Cell:
    """How often each interval held the target in one (flip rate, judge, items, models)."""

    flip_rate: float
    judge: str
    n_items: int
    n_models: int
    target: float
    item_interval: float
    output_wilson: float


def _seed(flip_rate: float, judge: str, n_items: int, n_models: int) -> int:
    """A fixed seed per cell (the same whatever other cells run)."""
    return (7100 + 1000 * FLIP_RATES.index(flip_rate) + 100 * JUDGES.index(judge) + 10 * ITEMS.index(n_items)
            + MODELS.index(n_models))


@functools.cache  # seeded: the page's table and the tests ask for the same cells
def cell(flip_rate: float, judge: str, n_items: int, n_models: int, reps: int = REPS) -> Cell:
    """One cell: ``reps`` simulated probe runs, each interval's coverage of :func:`target`."""
    rng = np.random.default_rng(_seed(flip_rate, judge, n_items, n_models))
    truth = target(flip_rate, judge)
    items = np.repeat(np.arange(n_items), n_models)
    held = np.zeros((2, reps), dtype=bool)
    for r in range(reps):
        per_item = (np.full(n_items, flip_rate) if judge == "uniform" else
                    rng.beta(flip_rate * CONCENTRATION, (1 - flip_rate) * CONCENTRATION, n_items))
        f = per_item[items]
        violated = (rng.random(f.size) < f) != (rng.random(f.size) < f)
        low, high = violation_interval(violated, items, CONFIDENCE)
        held[0, r] = low is not None and high is not None and low <= truth <= high
        low, high = wilson(int(violated.sum()), violated.size, CONFIDENCE)
        held[1, r] = low is not None and high is not None and low <= truth <= high
    return Cell(flip_rate, judge, n_items, n_models, truth, float(held[0].mean()), float(held[1].mean()))


def _text(coverage: float) -> str:
    return f"{coverage:.3f}" if coverage >= HOLDS else f"**{coverage:.3f}**"


def markdown(reps: int = REPS) -> str:
    """The table: a row per (judge, flip rate, models per item), a column per number of items; each cell the
    reported interval's coverage, then Wilson's over outputs."""
    lines = ["| judge | flip rate (violation rate) | models per item | "
             + " | ".join(f"{n} items" for n in ITEMS) + " |",
             "| --- | --- | ---: | " + " | ".join("---" for _ in ITEMS) + " |"]
    for judge in JUDGES:
        for flip_rate in FLIP_RATES:
            for n_models in MODELS:
                row = [cell(flip_rate, judge, n, n_models, reps) for n in ITEMS]
                lines.append(f"| {judge} | {flip_rate:g} ({row[0].target:.3f}) | {n_models} | "
                             + " | ".join(f"{_text(c.item_interval)} / {_text(c.output_wilson)}" for c in row)
                             + " |")
    found = [cell(f, j, n, m, reps) for j in JUDGES for f in FLIP_RATES for m in MODELS for n in ITEMS]
    clustered = [c.output_wilson for c in found if c.judge == "item-dependent" and c.n_models > 1]
    lowest_item, lowest_output = min(c.item_interval for c in found), min(c.output_wilson for c in found)
    lines += ["", f"*Coverage of nominal 95 % intervals, {reps:,} simulated probe runs per cell (a coverage near "
              f"0.95 is known to +-0.007), a fixed seed per cell: the probes' interval (item as the unit) / "
              f"Wilson's over outputs. Bold: below {HOLDS:.2f}. Item-dependent: the flip probability of an item "
              f"drawn from Beta with concentration {CONCENTRATION:g}. Lowest coverage: the probes' interval "
              f"{lowest_item:.3f}; Wilson's over outputs {lowest_output:.3f} "
              f"({min(clustered):.3f}-{max(clustered):.3f} where an item-dependent judge rates several models' "
              "outputs of an item). Generated by "
              "`python scripts/judge_report_doc.py --write`.*"]
    return "\n".join(lines)


__all__ = ["CONCENTRATION", "FLIP_RATES", "HOLDS", "ITEMS", "JUDGES", "MODELS", "REPS", "Cell", "cell", "markdown",
           "target"]
