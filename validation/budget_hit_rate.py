"""Whether the label budget keeps its promise (run: ``python -m validation.budget_hit_rate``).

A budget promises that after exactly the further decisions it asks for, the pair's t-test separates the two models
with probability ``power``. :func:`hit_rate` checks that on simulated audits: each data set has ``models`` models
of ``outputs`` outputs each, a binary human term (a CA-like share, true per-model share uniform on
``spread``) and a judge with its own error rates per model (misses and false alarms each uniform on ``errors``);
``audited`` outputs per model are decided, the models ordered by their PPI values, and every adjacent pair planned
by :func:`empathy.label_budget.plan_pair`; a planned pair is then decided further by exactly its
``further_better`` / ``further_worse`` next outputs and tested again. ``hit_rate`` is the share of planned pairs
the test then separated. The truth is not needed: the promise is about what the test will say.

``docs/statistics.md`` quotes :func:`markdown`; tests/test_label_budget.py re-runs a smaller simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from empathy.inference import PPIMean, ppi_mean
from empathy.label_budget import (
    DEFAULT_POWER,
    MIN_PLAN,
    difference_test,
    further_decisions,
    is_separated,
    plan_pair,
)


@dataclass(frozen=True)
class HitRate:
    """What :func:`hit_rate` counted over the adjacent pairs of every simulated data set."""

    pairs: int
    separated_now: int
    separated_asked_more: int
    planned: int
    hits: int
    not_planned: int
    plugin_planned: int
    plugin_hits: int

    @property
    def rate(self) -> float:
        """Share of planned pairs separated after exactly the planned decisions."""
        return self.hits / self.planned if self.planned else math.nan

    @property
    def plugin_rate(self) -> float:
        """The same share for plans on the unshrunk observed difference (the budget's former rule)."""
        return self.plugin_hits / self.plugin_planned if self.plugin_planned else math.nan

    @property
    def se(self) -> float:
        """Binomial standard error of :attr:`rate`."""
        return math.sqrt(self.rate * (1 - self.rate) / self.planned) if self.planned else math.nan


def _data(rng: np.random.Generator, models: int, outputs: int, spread: tuple[float, float],
          errors: tuple[float, float]) -> list[tuple[np.ndarray, np.ndarray]]:
    data = []
    for share in rng.uniform(*spread, models):
        truth = (rng.random(outputs) < share).astype(float)
        miss, false_alarm = rng.uniform(*errors, 2)
        flip = np.where(truth == 1, rng.random(outputs) < miss, rng.random(outputs) < false_alarm)
        data.append((truth, np.where(flip, 1.0 - truth, truth)))
    return data


def hit_rate(*, datasets: int = 1500, models: int = 4, outputs: int = 400, audited: int = 20,
             spread: tuple[float, float] = (0.2, 0.8), errors: tuple[float, float] = (0.05, 0.3),
             confidence: float = 0.95, power: float = DEFAULT_POWER, seed: int = 0, plugin: bool = False
             ) -> HitRate:
    """Simulate ``datasets`` audits and count how often the budget's plans were kept (see the module docstring).

    ``plugin`` also plans every pair on its observed difference (the rule the shrinkage replaced) and counts its
    hits, for comparison.
    """
    rng = np.random.default_rng(seed)
    counts = dict.fromkeys(("pairs", "separated_now", "separated_asked_more", "planned", "hits", "not_planned",
                            "plugin_planned", "plugin_hits"), 0)

    def kept(data: list[tuple[np.ndarray, np.ndarray]], i: int, j: int, k_i: int, k_j: int) -> bool:
        a = ppi_mean(data[i][0][:audited + k_i], data[i][1][:audited + k_i], data[i][1][audited + k_i:], binary=True)
        b = ppi_mean(data[j][0][:audited + k_j], data[j][1][:audited + k_j], data[j][1][audited + k_j:], binary=True)
        se, df = difference_test(a, b)
        return is_separated(b.estimate.value - a.estimate.value, se, df, confidence)

    for _ in range(datasets):
        data = _data(rng, models, outputs, spread, errors)
        now = [ppi_mean(y[:audited], f[:audited], f[audited:], binary=True) for y, f in data]
        order = np.argsort([e.estimate.value for e in now], kind="stable")
        for i, j in zip(order, order[1:], strict=False):
            difference = now[j].estimate.value - now[i].estimate.value
            row = plan_pair(now[i], now[j], difference, confidence, power)
            counts["pairs"] += 1
            if row["separated"]:
                counts["separated_now"] += 1
                counts["separated_asked_more"] += int(row["further_decisions"] != 0)
                continue
            plain = plan_on_observed(now[i], now[j], difference, confidence, power) if plugin else None
            if plain is not None:
                counts["plugin_planned"] += 1
                counts["plugin_hits"] += kept(data, int(i), int(j), *plain)
            if not row["reachable"]:
                counts["not_planned"] += 1
                continue
            counts["planned"] += 1
            counts["hits"] += kept(data, int(i), int(j), int(row["further_better"]), int(row["further_worse"]))
    return HitRate(**counts)


def plan_on_observed(a: PPIMean, b: PPIMean, difference: float, confidence: float, power: float
                     ) -> tuple[int, int] | None:
    """The plan on the observed difference itself (no shrinkage), for :func:`hit_rate` with ``plugin``."""
    if min(a.n, b.n) < MIN_PLAN:
        return None
    return further_decisions(a, b, abs(difference), confidence, power)


def markdown(results: dict[str, HitRate]) -> str:
    """A Markdown table of :func:`hit_rate` results by scenario."""
    lines = ["| scenario | adjacent pairs | separated now (asked for more) | planned | hit rate (shrunk) | "
             "hit rate (observed difference) |", "|---|---|---|---|---|---|"]
    for name, r in results.items():
        lines.append(f"| {name} | {r.pairs} | {r.separated_now} ({r.separated_asked_more}) | {r.planned} | "
                     f"{r.rate:.3f} +- {r.se:.3f} | {r.plugin_rate:.3f} |")
    return "\n".join(lines)


#: The scenarios docs/statistics.md reports (keyword arguments of :func:`hit_rate`).
SCENARIOS: dict[str, dict[str, int]] = {
    "4 models, 20 of 400 outputs audited per model (the reference)": {"models": 4, "audited": 20},
    "3 models, 15 of 400 audited per model": {"models": 3, "audited": 15},
    "6 models, 40 of 2,000 outputs audited per model": {"models": 6, "audited": 40, "outputs": 2000},
    "8 models, 20 of 400 audited per model (close values)": {"models": 8, "audited": 20},
}


if __name__ == "__main__":
    print(markdown({name: hit_rate(plugin=True, **kwargs) for name, kwargs in SCENARIOS.items()}))
