"""The order effect of the affect protocol: does a score depend on which text the judge is shown first?

Under ``affect_order = "both"`` a judge rates every output's two texts in each order and the run averages them.
Here the two orders are run apart, as ``reference-first`` and ``generation-first`` (the very requests a
``both`` run makes, so its answer cache serves them), and for each affect dimension (``e_ref``, ``e_gen``) and
output ``d = score(generation first) - score(reference first)``.

The **order effect** is the mean of ``d`` over items (an item's outputs share its reference: ``d`` is first
averaged within the item, the independent unit), with a Student t 95 % interval and the paired two-sided
t-test of mean zero over items; beside it the mean ``|d|`` (how much a score moves with the order, whichever
way) with its own t interval. Effects with their uncertainty, no threshold. A judge that reads only Text A
(ignores the second text) shows ``|d|`` near the two texts' difference; a judge with a position bias ``b``
shows ``-b`` on ``e_ref`` and ``+b`` on ``e_gen``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

CONFIDENCE = 0.95
AFFECT_DIMENSIONS: tuple[str, ...] = ("e_ref", "e_gen")
ORDER_COLUMNS: tuple[str, ...] = ("dimension", "n_outputs", "n_items", "effect", "effect_low", "effect_high",
                                  "p_value", "mean_abs", "abs_low", "abs_high")


@dataclass(frozen=True)
class OrderEffect:
    """The order effect on one affect dimension."""

    dimension: str
    n_outputs: int
    n_items: int
    effect: float | None
    effect_low: float | None
    effect_high: float | None
    p_value: float | None
    mean_abs: float | None
    abs_low: float | None
    abs_high: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (:data:`ORDER_COLUMNS`)."""
        return {name: getattr(self, name) for name in ORDER_COLUMNS}


def t_interval(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float, float, float | None]:
    """Mean, Student t interval and two-sided p-value of mean zero (``None`` for zero spread: then the interval
    is the point and the p-value 1 when the mean is 0, 0 otherwise)."""
    from scipy.stats import t as student

    n = len(values)
    mean = float(np.mean(values))
    spread = float(np.std(values, ddof=1)) if n > 1 else 0.0
    if spread <= 1e-12 * max(1.0, abs(mean)):
        return mean, mean, mean, 1.0 if abs(mean) <= 1e-12 else 0.0
    se = spread / math.sqrt(n)
    half = float(student.ppf(0.5 + confidence / 2, n - 1)) * se
    p = float(2 * student.sf(abs(mean) / se, n - 1))
    return mean, mean - half, mean + half, p


def order_effects(reference_first: pd.DataFrame, generation_first: pd.DataFrame,
                  dimensions: Sequence[str] = AFFECT_DIMENSIONS) -> list[OrderEffect]:
    """:class:`OrderEffect` per dimension from the ratings of the two orders' runs (long form)."""
    found = []
    for dimension in dimensions:
        sides = []
        for ratings in (reference_first, generation_first):
            chosen = ratings[ratings["dimension"] == dimension]
            sides.append(chosen.groupby([chosen["item_id"].astype(str), chosen["model"].astype(str)])["value"].last())
        paired = pd.concat(sides, axis=1, keys=["a", "b"]).dropna()
        if paired.empty:
            found.append(OrderEffect(dimension, 0, 0, *([None] * 7)))
            continue
        d = paired["b"] - paired["a"]
        by_item = pd.DataFrame({"d": d, "abs": d.abs()}).groupby(level=0).mean()
        if len(by_item) < 2:
            found.append(OrderEffect(dimension, len(paired), len(by_item), float(d.mean()), None, None, None,
                                     float(d.abs().mean()), None, None))
            continue
        effect, low, high, p = t_interval(by_item["d"].to_numpy())
        mean_abs, abs_low, abs_high, _ = t_interval(by_item["abs"].to_numpy())
        found.append(OrderEffect(dimension, len(paired), len(by_item), effect, low, high, p, mean_abs,
                                 max(abs_low, 0.0), abs_high))
    return found


def run_orders(outputs: pd.DataFrame, judge: Any, *, cache: Any = None, secrets: Any = None
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The affect ratings of ``judge`` with each text first (cost: twice the affect requests of the outputs, the
    requests of ``affect_order = "both"``)."""
    from empathy.judges.run import run_judge

    runs = []
    for order in ("reference-first", "generation-first"):
        runs.append(run_judge(outputs, judge.replace(affect_order=order), protocols="affect", cache=cache,
                              task_protocols="all", secrets=secrets).ratings)
    return runs[0], runs[1]


def order_requests(outputs: pd.DataFrame, judge: Any) -> int:
    """Distinct requests of :func:`run_orders` (0 for the lexicon judge, which rates each text alone)."""
    from empathy.judges.run import planned_requests

    return planned_requests(outputs, judge.replace(affect_order="both"), protocols="affect", task_protocols="all")


def orders_frame(results: Sequence[OrderEffect]) -> pd.DataFrame:
    """One row per dimension (:data:`ORDER_COLUMNS`)."""
    return pd.DataFrame([r.to_dict() for r in results], columns=list(ORDER_COLUMNS))


def order_signature(judge_signature: str) -> str:
    """The order part of a signature."""
    return (f"{judge_signature}|order:generation-first-minus-reference-first|unit:item-mean|"
            f"test:paired-t(two-sided)|interval:t-95")
