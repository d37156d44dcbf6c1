"""The label budget: how many further audit decisions would separate each adjacent pair of models.

After an audit's decisions so far (:func:`empathy.inference.ppi_estimates`), the budget projects each model's
PPI++ variance to more decisions (:func:`empathy.inference.projected_se`) and asks how many would let a test of
the difference between two models adjacent in the ranking reach a chosen power. See :func:`label_budget`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from empathy.distributions import normal_ppf
from empathy.inference import MeanEstimate, PPIMean, PPIReport, optimal_lambda, projected_se
from empathy.vocabulary import DIRECTIONS, LOWER_IS_BETTER

DEFAULT_POWER = 0.8
BUDGET_MODEL_COLUMNS: tuple[str, ...] = ("task", "metric", "model", "ppi_value", "n_audit", "half_width",
                                         "n_unlabelled")
BUDGET_PAIR_COLUMNS: tuple[str, ...] = ("task", "metric", "better", "worse", "difference", "se_difference",
                                        "separated", "further_decisions", "further_better", "further_worse",
                                        "reachable")


@dataclass(frozen=True)
class LabelBudget:
    """Per model the interval's half-width now; per adjacent pair the further decisions to separate them."""

    models: pd.DataFrame
    pairs: pd.DataFrame
    confidence: float
    power: float

    def signature_fields(self) -> dict[str, str]:
        """The criterion the budget answers: the z-test's level and the power."""
        return {"budget": f"z-test@{self.confidence:g},power={self.power:g}"}


def _components_of(report: PPIReport, task: object, metric: object, model: object) -> PPIMean | None:
    part = report.components
    hit = part[(part["task"] == task) & (part["metric"] == metric) & (part["model"] == model)]
    if hit.empty:
        return None
    c = hit.iloc[0]
    zero = MeanEstimate(math.nan, math.nan, math.nan, math.nan, int(c["n"]))
    return PPIMean(zero, zero, optimal_lambda(int(c["n"]), int(c["n_unlabelled"]), float(c["cov"]),
                                              float(c["var_f_all"])),
                   int(c["n"]), int(c["n_unlabelled"]), float(c["cov"]), float(c["var_y"]),
                   float(c["var_f_labelled"]), float(c["var_f_unlabelled"]), float(c["var_f_all"]))


def _further(a: PPIMean, b: PPIMean, target_se: float) -> tuple[int, int] | None:
    """Fewest further decisions, added evenly to both models (each up to its unlabelled outputs), that bring the
    standard error of the difference down to ``target_se``; ``None`` when even auditing everything does not."""

    def se_at(k: int) -> float:
        return math.hypot(projected_se(a, min(k, a.n_unlabelled)), projected_se(b, min(k, b.n_unlabelled)))

    top = max(a.n_unlabelled, b.n_unlabelled)
    if se_at(top) > target_se:
        return None
    low, high = 0, top
    while low < high:  # the se falls as decisions are added: the first k that reaches the target
        mid = (low + high) // 2
        if se_at(mid) <= target_se:
            high = mid
        else:
            low = mid + 1
    return min(low, a.n_unlabelled), min(low, b.n_unlabelled)


def label_budget(report: PPIReport, *, power: float = DEFAULT_POWER, direction: str = LOWER_IS_BETTER
                 ) -> LabelBudget:
    """The label budget: after the audit's decisions so far, how many more separate each adjacent pair of models.

    Rows are the design's own samples: the pooled rows of an unstratified design (one simple random sample per
    model), or the (task, model) strata of a stratified one; domain rows are left out (future decisions fall in
    a task only by chance). Per model: ``half_width`` of the current PPI interval. Per pair of models adjacent
    in the PPI values' order (``direction``: which end is better): the further decisions needed for a
    two-sided z-test of their difference at the report's level to reach ``power``, assuming

    * the true difference is the current PPI difference (a plug-in: when it overstates the difference, the
      budget is too small; it is a planning figure, not a guarantee);
    * the variances (judge, human, their covariance) stay at their current estimates and ``lambda`` is re-tuned
      to the new sizes (:func:`projected_se`);
    * the two models' estimates are independent (separate draws per model; they share items, whose effects the
      judge's terms carry into both unlabelled means, usually with a positive covariance, which makes this
      conservative);
    * further decisions go evenly to both models (a model whose outputs are all audited takes no more).

    So the criterion is ``se_diff <= |difference| / (z_{1-alpha/2} + z_power)``; ``separated`` says whether the
    current ``|difference| > z se_diff`` already (the z-test rejects equality). ``further_decisions`` is
    ``None`` (``reachable`` False) when even a full audit of both would not reach the target, e.g. a difference of
    0.

    Raises
    ------
    ValueError
        For a ``power`` outside (0, 1) or an unknown ``direction``.
    """
    if isinstance(power, bool) or not isinstance(power, (int, float)) or not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    z = normal_ppf(1.0 - (1.0 - report.confidence) / 2.0)
    needed = z + normal_ppf(power)
    table = report.table
    design_rows = table[(table["scheme"] == "srs") & table["ppi_value"].notna()]
    model_rows, pair_rows = [], []
    for (metric, task), part in design_rows.groupby(["metric", "task"], sort=False):
        ordered = part.sort_values("ppi_value", ascending=direction == LOWER_IS_BETTER, kind="stable")
        for row in ordered.to_dict("records"):
            pieces = _components_of(report, task, metric, row["model"])
            model_rows.append({"task": task, "metric": metric, "model": row["model"], "ppi_value": row["ppi_value"],
                               "n_audit": row["n_audit"], "half_width": z * row["ppi_se"],
                               "n_unlabelled": pieces.n_unlabelled if pieces else 0})
        records = ordered.to_dict("records")
        for better, worse in zip(records, records[1:], strict=False):
            a = _components_of(report, task, metric, better["model"])
            b = _components_of(report, task, metric, worse["model"])
            difference = float(worse["ppi_value"] - better["ppi_value"])
            se_difference = math.hypot(better["ppi_se"], worse["ppi_se"])
            further = (_further(a, b, abs(difference) / needed) if a is not None and b is not None and difference
                       else None)
            pair_rows.append({"task": task, "metric": metric, "better": better["model"], "worse": worse["model"],
                              "difference": difference, "se_difference": se_difference,
                              "separated": bool(abs(difference) > z * se_difference),
                              "further_decisions": None if further is None else sum(further),
                              "further_better": None if further is None else further[0],
                              "further_worse": None if further is None else further[1],
                              "reachable": further is not None})
    return LabelBudget(pd.DataFrame(model_rows, columns=list(BUDGET_MODEL_COLUMNS)),
                       pd.DataFrame(pair_rows, columns=list(BUDGET_PAIR_COLUMNS)), report.confidence, float(power))
