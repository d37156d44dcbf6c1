"""The label budget: how many further audit decisions would separate each adjacent pair of models.

After an audit's decisions so far (:func:`empathy.inference.ppi_estimates`), the budget projects each model's
PPI++ variance to more decisions (:func:`empathy.inference.projected_se`) and asks how many would give a test of
the difference between two models adjacent in the ranking a chosen power. The observed difference of a pair that
is not yet separated overstates the true one (a winner's curse: among pairs whose difference is unclear, the
noisy ones are those that look large), so the budget plans on the difference shrunk toward 0 by its sampling
variance, and its promise is checked by simulation (``validation/budget_hit_rate.py``, docs/statistics.md).
See :func:`label_budget`; :func:`adjacent_pairs` gives the same neighbours' ``p_better`` for ``audit estimate``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from empathy import metrics as m
from empathy.distributions import normal_cdf, student_t_cdf
from empathy.inference import MeanEstimate, PPIMean, PPIReport, optimal_lambda, projected_se
from empathy.small_sample import satterthwaite_df, t_quantile
from empathy.vocabulary import DIRECTIONS, LOWER_IS_BETTER

DEFAULT_POWER = 0.8
#: Fewest audited outputs per model the budget plans on: below it the variances it projects are too uncertain.
MIN_PLAN = 15
#: The share of planned pairs a t-test separated after exactly the planned decisions, at power 0.8 and level
#: 0.95, in the simulation of :mod:`validation.budget_hit_rate` (its scenario in docs/statistics.md; a test
#: re-measures it).
MEASURED_HIT_RATE = {0.8: 0.83}
#: ``note`` of a pair the budget does not plan for.
SEPARATED_NOTE = "separated now: no further decisions needed"
NO_EVIDENCE_NOTE = "no difference to plan on: the two PPI values are equal"
UNREACHABLE_NOTE = "not reachable: even auditing every output of both models would not give the power"


def too_few_note(n_better: int, n_worse: int) -> str:
    """The ``note`` of a pair with fewer than :data:`MIN_PLAN` audited outputs on either model."""
    return (f"not planned: {min(n_better, n_worse)} audited outputs on a model, fewer than {MIN_PLAN}; the "
            f"variances to project are too uncertain (audit at least {MIN_PLAN} per model first)")


BUDGET_MODEL_COLUMNS: tuple[str, ...] = ("task", "metric", "model", "ppi_value", "n_audit", "half_width",
                                         "n_unlabelled")
BUDGET_PAIR_COLUMNS: tuple[str, ...] = ("task", "metric", "better", "worse", "difference", "se_difference",
                                        "separated", "planned_difference", "further_decisions", "further_better",
                                        "further_worse", "reachable", "hit_rate", "note")


@dataclass(frozen=True)
class LabelBudget:
    """Per model the interval's half-width now; per adjacent pair the further decisions to separate them.

    ``hit_rate`` is :data:`MEASURED_HIT_RATE` at the budget's power and level (``None``: not measured there).
    """

    models: pd.DataFrame
    pairs: pd.DataFrame
    confidence: float
    power: float
    hit_rate: float | None = None

    def signature_fields(self) -> dict[str, str]:
        """The criterion the budget answers: the t-test's level, the power and the planned difference."""
        return {"budget": f"t-test@{self.confidence:g},power={self.power:g},shrunk"}


def budget_promise(budget: LabelBudget) -> str:
    """What a budget promises, in words: its power and the hit rate a simulation measured for it."""
    measured = (f"a simulation saw {budget.hit_rate:.0%} of such plans separate their pair "
                "(docs/statistics.md, 'The label budget')" if budget.hit_rate is not None
                else "not measured by simulation at this power and level")
    return (f"promise: after exactly the further decisions asked for, the t-test separates the pair with "
            f"probability {budget.power:g} if the true difference is the planned one; {measured}")


def measured_hit_rate(confidence: float, power: float) -> float | None:
    """:data:`MEASURED_HIT_RATE` at ``power`` when ``confidence`` is 0.95 (the level it was measured at)."""
    if not math.isclose(confidence, 0.95):
        return None
    return next((rate for planned, rate in MEASURED_HIT_RATE.items() if math.isclose(planned, power)), None)


def shrinkage(difference: float, se: float) -> float:
    """``E[B | d]``, the posterior mean of the shrinkage factor ``B = se^2 / (tau^2 + se^2)`` of a difference ``d``.

    The normal-normal model ``delta ~ N(0, tau^2)``, ``d | delta ~ N(delta, se^2)`` with the uniform shrinkage
    prior (``B`` uniform on (0, 1); Christiansen & Morris 1997): the posterior of ``B`` is proportional to
    ``B^(1/2) exp(-a B)``, ``a = d^2 / (2 se^2)``, so ``E[B | d] = I(5/2) / I(3/2)`` with
    ``I(p) = int_0^1 B^(p-1) exp(-a B) dB``, ``I(1/2) = sqrt(pi / a) erf(sqrt(a))`` and
    ``I(p + 1) = (p I(p) - exp(-a)) / a``. It is 0.6 at ``d = 0`` and about ``3 se^2 / d^2`` for large ``d``.
    """
    if not se > 0:
        return 0.0
    a = difference * difference / (2.0 * se * se)
    if a < 1e-3:  # the recursion cancels: the first terms of the series
        return (0.4 - a * 2.0 / 7.0) / (2.0 / 3.0 - 0.4 * a)
    tail = math.exp(-a)
    half = math.sqrt(math.pi / a) * math.erf(math.sqrt(a))
    three_halves = (0.5 * half - tail) / a
    return (1.5 * three_halves - tail) / a / three_halves


def shrunk_difference(difference: float, se: float) -> float:
    """``|d| (1 - E[B | d])``: the posterior mean of ``|delta|``'s normal-normal estimate (:func:`shrinkage`).

    Among pairs whose difference is still unclear, the observed one overstates the truth (the noisy pairs are
    those that look large); the posterior mean under a prior that lets the data choose how far to shrink
    corrects that, where the plug-in moment estimate ``tau^2 = max(d^2 - se^2, 0)`` shrinks too little
    (its planned pairs are separated less often than promised: docs/statistics.md).
    """
    return abs(difference) * (1.0 - shrinkage(difference, se))


def difference_test(a: PPIMean, b: PPIMean, extra_a: int = 0, extra_b: int = 0) -> tuple[float, float]:
    """``(se, df)`` of the difference of two models' PPI estimates after ``extra_a`` / ``extra_b`` more decisions.

    The standard errors are :func:`empathy.inference.projected_se`; the degrees of freedom Welch-Satterthwaite's
    with ``n - 1`` per model (at most the PPI estimate's own, so the t quantile errs wide).
    """
    se_a, se_b = projected_se(a, extra_a), projected_se(b, extra_b)
    df = satterthwaite_df([(se_a * se_a, a.n + extra_a - 1.0), (se_b * se_b, b.n + extra_b - 1.0)])
    return math.hypot(se_a, se_b), df


def is_separated(difference: float, se: float, df: float, confidence: float) -> bool:
    """Whether the two-sided t-test at ``confidence`` rejects a zero difference: ``|d| > t_df se``."""
    if not se > 0:
        return bool(difference != 0)
    return bool(abs(difference) > t_quantile(confidence, df) * se)


def _one_sided(p: float, df: float) -> float:
    """The one-sided t quantile ``t_{df, p}`` (from the two-sided one: ``t_{df, p} = -t_{df, 1 - p}``)."""
    if p == 0.5:
        return 0.0
    return t_quantile(2 * p - 1, df) if p > 0.5 else -t_quantile(1 - 2 * p, df)


def further_decisions(a: PPIMean, b: PPIMean, planned: float, confidence: float, power: float
                      ) -> tuple[int, int] | None:
    """Fewest further decisions, added evenly to both models (each up to its unlabelled outputs), that give the
    t-test of a true difference ``planned`` the ``power``: ``(t_{df} + t_{df, power}) se(k) <= planned``
    (``t_{df, power}`` the one-sided quantile); ``None`` when even auditing everything does not."""

    def enough(k: int) -> bool:
        se, df = difference_test(a, b, min(k, a.n_unlabelled), min(k, b.n_unlabelled))
        return (t_quantile(confidence, df) + _one_sided(power, df)) * se <= planned

    top = max(a.n_unlabelled, b.n_unlabelled)
    if not planned > 0 or not enough(top):
        return None
    low, high = 0, top
    while low < high:  # se falls and df grows as decisions are added: the first k that is enough
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid + 1
    return min(low, a.n_unlabelled), min(low, b.n_unlabelled)


def plan_pair(a: PPIMean, b: PPIMean, difference: float, confidence: float, power: float) -> dict[str, object]:
    """The budget of one pair (the pair columns of :data:`BUDGET_PAIR_COLUMNS` from ``se_difference`` on).

    ``a`` and ``b`` carry the variance pieces of the two models (``estimate`` is not read); ``difference`` is
    the observed difference of their PPI values.
    """
    se, df = difference_test(a, b)
    separated = is_separated(difference, se, df, confidence)
    planned = shrunk_difference(difference, se)
    row: dict[str, object] = {"se_difference": se, "separated": separated, "planned_difference": planned,
                              "further_decisions": None, "further_better": None, "further_worse": None,
                              "reachable": False, "hit_rate": None, "note": None}
    if separated:
        return {**row, "further_decisions": 0, "further_better": 0, "further_worse": 0, "reachable": True,
                "note": SEPARATED_NOTE}
    if min(a.n, b.n) < MIN_PLAN:
        return {**row, "note": too_few_note(a.n, b.n)}
    if planned <= 0:
        return {**row, "note": NO_EVIDENCE_NOTE}
    further = further_decisions(a, b, planned, confidence, power)
    if further is None:
        return {**row, "note": UNREACHABLE_NOTE}
    return {**row, "further_decisions": sum(further), "further_better": further[0], "further_worse": further[1],
            "reachable": True, "hit_rate": measured_hit_rate(confidence, power)}


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


def label_budget(report: PPIReport, *, power: float = DEFAULT_POWER, direction: str = LOWER_IS_BETTER
                 ) -> LabelBudget:
    """The label budget: after the audit's decisions so far, how many more separate each adjacent pair of models.

    Rows are the design's own samples: the pooled rows of an unstratified design (one simple random sample per
    model), or the (task, model) strata of a stratified one; domain rows are left out (future decisions fall in
    a task only by chance). Per model: ``half_width``, half the current PPI interval's width. Per pair of models
    adjacent in the PPI values' order (``direction``: which end is better), :func:`plan_pair`:

    * ``separated``: a two-sided t-test at the report's level rejects a zero difference now (``se_difference``
      from the small-sample standard errors, Welch-Satterthwaite degrees of freedom, :func:`difference_test`);
      such a pair needs 0 further decisions;
    * ``planned_difference``: the observed difference shrunk toward 0 by its sampling variance
      (:func:`shrunk_difference`). Planning on the observed difference itself promises too much: the pairs a
      budget is asked about are those whose difference is still unclear, where noise inflates it;
    * ``further_decisions``: the fewest that give the t-test ``power`` against ``planned_difference``
      (:func:`further_decisions`), the variances (judge, human, their covariance) kept at their current
      estimates and ``lambda`` re-tuned to the new sizes (:func:`empathy.inference.projected_se`); the two models'
      estimates treated as independent (separate draws per model; shared items usually make them positively
      correlated, which makes this conservative); further decisions split evenly (a model whose outputs are
      all audited takes no more);
    * ``hit_rate``: the share of such plans a simulation saw kept (:data:`MEASURED_HIT_RATE`; ``None`` where
      not measured or no plan is made); ``note`` says why a pair has no plan: fewer than :data:`MIN_PLAN`
      audited outputs on a model, equal values, or not reachable within the frame (the usual answer for a
      small difference: the shrunk difference of a pair with ``|d|`` near ``se`` is a fraction of it).

    Raises
    ------
    ValueError
        For a ``power`` outside (0, 1) or an unknown ``direction``.
    """
    if isinstance(power, bool) or not isinstance(power, (int, float)) or not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    table = report.table
    design_rows = table[(table["scheme"] == "srs") & table["ppi_value"].notna()]
    model_rows, pair_rows = [], []
    for (metric, task), part in design_rows.groupby(["metric", "task"], sort=False):
        ordered = part.sort_values("ppi_value", ascending=direction == LOWER_IS_BETTER, kind="stable")
        for row in ordered.to_dict("records"):
            pieces = _components_of(report, task, metric, row["model"])
            model_rows.append({"task": task, "metric": metric, "model": row["model"], "ppi_value": row["ppi_value"],
                               "n_audit": row["n_audit"], "half_width": (row["ppi_high"] - row["ppi_low"]) / 2,
                               "n_unlabelled": pieces.n_unlabelled if pieces else 0})
        records = ordered.to_dict("records")
        for better, worse in zip(records, records[1:], strict=False):
            a = _components_of(report, task, metric, better["model"])
            b = _components_of(report, task, metric, worse["model"])
            difference = float(worse["ppi_value"] - better["ppi_value"])
            base = {"task": task, "metric": metric, "better": better["model"], "worse": worse["model"],
                    "difference": difference}
            if a is None or b is None:
                continue
            pair_rows.append({**base, **plan_pair(a, b, difference, report.confidence, float(power))})
    return LabelBudget(pd.DataFrame(model_rows, columns=list(BUDGET_MODEL_COLUMNS)),
                       pd.DataFrame(pair_rows, columns=list(BUDGET_PAIR_COLUMNS)), report.confidence, float(power),
                       measured_hit_rate(report.confidence, float(power)))


#: Columns of :func:`adjacent_pairs`.
ORDER_COLUMNS: tuple[str, ...] = ("task", "metric", "better", "worse", "difference", "se_difference", "df",
                                  "p_better")


def adjacent_pairs(report: PPIReport) -> pd.DataFrame:
    """Per (task, metric) of a PPI report, the models adjacent in the PPI values' order and ``p_better``.

    Every row with a PPI value takes part (pooled, stratified and per-task rows alike), ordered in the metric's
    direction (:attr:`empathy.metrics.MetricSpec.better`). ``difference`` is worse minus better in that
    direction (0 or more), ``se_difference`` the two standard errors combined as independent, ``df``
    Welch-Satterthwaite's with ``n_audit - 1`` per model, and ``p_better = T_df(difference / se)``: under the
    t approximation of the estimates and a flat prior on the true difference, the probability that the model
    ranked better is truly better (0.5: the audit cannot tell them apart; it equals one minus the one-sided
    p-value of "no better"). A zero ``se`` gives 1 for a positive difference and 0.5 for none.
    """
    table = report.table[report.table["ppi_value"].notna()]
    rows = []
    for (task, metric), part in table.groupby(["task", "metric"], sort=False):
        lower = m.get_metric(str(metric)).better == LOWER_IS_BETTER
        records = part.sort_values(["ppi_value", "model"], ascending=[lower, True], kind="stable").to_dict("records")
        for better, worse in zip(records, records[1:], strict=False):
            difference = float(worse["ppi_value"] - better["ppi_value"]) * (1.0 if lower else -1.0)
            se_b, se_w = float(better["ppi_se"]), float(worse["ppi_se"])
            se = math.hypot(se_b, se_w)
            df = satterthwaite_df([(se_b * se_b, better["n_audit"] - 1.0), (se_w * se_w, worse["n_audit"] - 1.0)])
            if se > 0:
                p_better = student_t_cdf(difference / se, max(int(math.floor(df)), 1)) if math.isfinite(df) \
                    else normal_cdf(difference / se)
            else:
                p_better = 1.0 if difference > 0 else 0.5
            rows.append({"task": task, "metric": metric, "better": better["model"], "worse": worse["model"],
                         "difference": difference, "se_difference": se, "df": df, "p_better": p_better})
    return pd.DataFrame(rows, columns=list(ORDER_COLUMNS))

