"""The label budget (empathy.label_budget): the planned difference, the plan worked by hand, the pairs it does not
plan for, and by simulation that its promise is kept."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from empathy.audit import AuditDesign, AuditOutput, audit_frame, frame_digest
from empathy.inference import optimal_lambda, ppi_estimates, ppi_mean, projected_se
from empathy.label_budget import (
    MEASURED_HIT_RATE,
    MIN_PLAN,
    NO_EVIDENCE_NOTE,
    SEPARATED_NOTE,
    UNREACHABLE_NOTE,
    label_budget,
    plan_pair,
    shrinkage,
    shrunk_difference,
)
from empathy.small_sample import t_quantile
from validation.budget_hit_rate import hit_rate


def _design(outputs: pd.DataFrame, ratings: pd.DataFrame, drawn: list[tuple[str, str]]) -> AuditDesign:
    """An unstratified CA design of judge ``j`` drawing exactly ``drawn`` (the budget does not care how)."""
    frame = audit_frame(outputs, ratings, judge="j", dimension="ca")
    per_model = len(drawn) // frame["model"].nunique()
    size = frame.groupby("model").size()
    return AuditDesign(seed=0, judge="j", dimension="ca", per_model=per_model, stratify_by_task=False,
                       frame_digest=frame_digest(frame), n_frame=len(frame),
                       outputs=tuple(AuditOutput(k, i, m, "t", int(size[m]), per_model)
                                     for k, (i, m) in enumerate(drawn)))


def _two_models(n_audit: int, seed: int = 5, rates: tuple[float, float] = (0.3, 0.45), items: int = 200
                ) -> tuple[pd.DataFrame, pd.DataFrame, AuditDesign, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    outputs = pd.DataFrame([{"item_id": f"i{k}", "model": m, "task": "t"} for k in range(items) for m in ("a", "b")])
    size = 2 * items
    truth = np.where(outputs["model"] == "a", rng.random(size) < rates[0], rng.random(size) < rates[1]).astype(float)
    judged = np.where(rng.random(size) < 0.15, 1 - truth, truth)
    ratings = outputs[["item_id", "model"]].assign(rater="j", dimension="ca", value=judged)
    drawn = [(f"i{k}", m) for k in range(n_audit) for m in ("a", "b")]
    decisions = pd.DataFrame({"item_id": [i for i, _ in drawn], "model": [m for _, m in drawn],
                              "value": truth[:2 * n_audit]})
    return outputs, ratings, _design(outputs, ratings, drawn), decisions


def test_shrinkage_is_the_posterior_mean_under_the_uniform_shrinkage_prior() -> None:
    # E[B | d] with B uniform on (0, 1) and likelihood B^(1/2) exp(-B d^2 / 2 se^2), by quadrature
    grid = (np.arange(200_000) + 0.5) / 200_000
    for d, se in ((0.0, 0.1), (0.003, 0.1), (0.1, 0.1), (0.2, 0.1), (0.05, 0.01), (1.0, 0.01)):
        weight = np.sqrt(grid) * np.exp(-grid * d * d / (2 * se * se))
        assert shrinkage(d, se) == pytest.approx(float((grid * weight).sum() / weight.sum()), abs=1e-6)
        assert shrunk_difference(-d, se) == pytest.approx(d * (1 - shrinkage(d, se)))
    assert shrinkage(0.0, 0.1) == pytest.approx(0.6)  # E[B] of the prior times the likelihood at d = 0: (2/5)/(2/3)
    assert shrinkage(1.0, 0.01) == pytest.approx(3 * 0.01 ** 2, rel=1e-3)  # about 3 se^2 / d^2 far out
    assert shrunk_difference(0.2, 0.0) == 0.2


def test_plan_worked_from_the_projection() -> None:
    outputs, ratings, design, decisions = _two_models(30, seed=8, rates=(0.3, 0.4), items=1500)
    report = ppi_estimates(outputs, ratings, design, decisions)
    budget = label_budget(report)
    pair = budget.pairs.iloc[0]
    rows = report.table.set_index("model")
    assert (pair["better"], pair["worse"]) == tuple(rows["ppi_value"].sort_values().index)
    assert pair["difference"] == pytest.approx(rows.loc[pair["worse"], "ppi_value"] - rows.loc[pair["better"],
                                                                                               "ppi_value"])
    assert budget.models.set_index("model")["half_width"].to_dict() == pytest.approx(
        ((rows["ppi_high"] - rows["ppi_low"]) / 2).to_dict())
    components = report.components.set_index("model")

    def se_df(k: int) -> tuple[float, float]:
        pieces = []
        for model in ("a", "b"):
            c = components.loc[model]
            n, big_n = int(c["n"]) + k, int(c["n_unlabelled"]) - k
            lam = optimal_lambda(n, big_n, c["cov"], c["var_f_all"])
            pieces.append((lam * lam * c["var_f_unlabelled"] / (big_n - 1) + (
                c["var_y"] - 2 * lam * c["cov"] + lam * lam * c["var_f_labelled"]) / (n - 1), n - 1))
        total = sum(v for v, _ in pieces)
        return math.sqrt(total), total * total / sum(v * v / d for v, d in pieces)

    se0, df0 = se_df(0)
    assert pair["se_difference"] == pytest.approx(se0)
    assert not pair["separated"] and abs(pair["difference"]) <= t_quantile(0.95, df0) * se0
    assert pair["planned_difference"] == pytest.approx(abs(pair["difference"]) * (1 - shrinkage(pair["difference"],
                                                                                                 se0)))
    assert pair["planned_difference"] < abs(pair["difference"])
    # the answer k (per model) is the first with (t_df + t_df,0.8) se(k) <= the planned difference
    assert pair["reachable"] and pair["note"] is None

    def enough(k: int) -> bool:
        se, df = se_df(k)
        return (t_quantile(0.95, df) + t_quantile(0.6, df)) * se <= pair["planned_difference"]

    k = int(pair["further_decisions"]) // 2
    assert pair["further_better"] == pair["further_worse"] == k
    assert enough(k) and not enough(k - 1)
    assert pair["hit_rate"] == MEASURED_HIT_RATE[0.8] == budget.hit_rate
    assert budget.signature_fields() == {"budget": "t-test@0.95,power=0.8,shrunk"}
    assert label_budget(report, power=0.5).pairs["further_decisions"].iloc[0] <= \
        label_budget(report, power=0.9).pairs["further_decisions"].iloc[0]
    assert label_budget(report, power=0.9).hit_rate is None  # measured at 0.8 only: not claimed elsewhere


def test_a_separated_pair_needs_no_more_decisions() -> None:
    outputs, ratings, design, decisions = _two_models(40, rates=(0.1, 0.9))
    pair = label_budget(ppi_estimates(outputs, ratings, design, decisions)).pairs.iloc[0]
    assert pair["separated"] and pair["further_decisions"] == pair["further_better"] == pair["further_worse"] == 0
    assert pair["reachable"] and pair["note"] == SEPARATED_NOTE


def test_pairs_without_a_plan_say_why() -> None:
    outputs, ratings, design, decisions = _two_models(MIN_PLAN - 1)
    pair = label_budget(ppi_estimates(outputs, ratings, design, decisions)).pairs.iloc[0]
    if not pair["separated"]:
        assert pair["further_decisions"] is None and not pair["reachable"]
        assert pair["note"].startswith(f"not planned: {MIN_PLAN - 1} audited outputs on a model, fewer than 15")
    outputs, ratings, design, decisions = _two_models(30)
    same = ppi_mean([1.0, 0.0] * 10, [1.0, 0.0] * 10, [1.0, 0.0] * 20)
    row = plan_pair(same, same, 0.0, 0.95, 0.8)
    assert row["note"] == NO_EVIDENCE_NOTE and row["further_decisions"] is None and not row["separated"]
    small = ppi_mean([1.0, 0.0, 1.0, 1.0] * 5, [1.0, 0.0, 1.0, 0.0] * 5, [1.0, 0.0] * 3)
    other = ppi_mean([1.0, 0.0, 0.0, 1.0] * 5, [1.0, 0.0, 1.0, 0.0] * 5, [1.0, 0.0] * 3)
    row = plan_pair(small, other, 0.01, 0.95, 0.8)  # six unlabelled outputs each cannot separate a 0.01 gap
    assert row["note"] == UNREACHABLE_NOTE and not row["reachable"] and row["hit_rate"] is None


def test_bad_budget_inputs() -> None:
    outputs, ratings, design, decisions = _two_models(30)
    report = ppi_estimates(outputs, ratings, design, decisions)
    with pytest.raises(ValueError, match=r"power must be in \(0, 1\)"):
        label_budget(report, power=80)
    with pytest.raises(ValueError, match="direction must be one of"):
        label_budget(report, direction="up")
    with pytest.raises(ValueError, match="extra must be a whole number"):
        projected_se(ppi_mean([1.0, 0.0], [1.0, 0.0], [0.0]), 2)


def test_the_budget_keeps_its_promise_in_simulation() -> None:
    # fixed seed, seconds: the share of planned pairs a t-test separated after exactly the planned decisions
    result = hit_rate(datasets=1000, seed=1, plugin=True)
    assert result.planned >= 200
    assert abs(result.rate - 0.8) <= 0.05, result
    assert abs(result.rate - MEASURED_HIT_RATE[0.8]) <= 0.06, result  # the figure the rows quote
    assert result.plugin_rate < 0.7  # the plug-in difference it replaced promised too much
    assert result.separated_now > 100 and result.separated_asked_more == 0
