"""Prediction-powered estimates (issue 23, items 2, 3 and 5): equal to ppi-python, covering their truth, worked by
hand, and the label budget."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from empathy.audit import AuditDesign, AuditOutput, audit_frame, frame_digest
from empathy.evaluate import TextFeatures, compute_metrics
from empathy.inference import (
    ALL_TASKS,
    PPI_COLUMNS,
    optimal_lambda,
    ppi_estimates,
    ppi_mean,
    ppi_metrics,
    projected_se,
)
from validation.coverage import ppi_coverage


@pytest.fixture(scope="module")
def ppi_py():
    """``ppi_py.ppi`` and ``ppi_py.baselines`` (the test oracle, requirements-dev.txt).

    Importing the package runs ``warnings.simplefilter("ignore")``; the import happens inside
    ``catch_warnings`` so that the rest of the suite keeps its warning filters.
    """
    with warnings.catch_warnings():
        import ppi_py.baselines as baselines
        import ppi_py.ppi as ppi
    return ppi, baselines


def _oracle_lambda(ppi, y, yhat, unlabelled):
    """The lambda ``ppi_mean_ci(lam=None)`` computes, by the same calls it makes."""
    y2, f2, u2 = (np.asarray(a, float).reshape(-1, 1) for a in (y, yhat, unlabelled))
    point = ppi.ppi_mean_pointestimate(y2, f2, u2, lam=1)
    return ppi._calc_lam_glm(y2 - point, f2 - point, u2 - point, np.eye(1), coord=None, clip=True)


def _synthetic(seed: int, kind: str, n: int, big_n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if kind == "binary":  # a CA-like judge that over-calls: 0 -> 1 with 0.25, 1 -> 0 with 0.1
        truth = (rng.random(n + big_n) < 0.4).astype(float)
        flip = np.where(truth == 1, rng.random(n + big_n) < 0.1, rng.random(n + big_n) < 0.25)
        judged = np.where(flip, 1 - truth, truth)
    elif kind == "anti":  # a judge that gets it backwards: lambda clips at 0
        truth = rng.normal(0.3, 0.2, n + big_n)
        judged = 1 - truth + rng.normal(0, 0.05, n + big_n)
    elif kind == "exact":  # a judge on half the humans' scale with much unlabelled data: lambda clips at 1
        truth = rng.normal(0.3, 0.2, n + big_n)
        judged = truth / 2
    else:  # a skewed SA-like term and a biased, noisy judge
        truth = 0.4 + 0.3 * (rng.exponential(1.0, n + big_n) - 1.0)
        judged = truth + 0.15 + rng.normal(0, 0.15, n + big_n)
    return truth[:n], judged[:n], judged[n:]


CASES = [(s, kind, n, big_n) for s, (kind, n, big_n) in enumerate(
    [("continuous", 50, 950), ("continuous", 7, 30), ("binary", 80, 2000), ("binary", 12, 3), ("anti", 40, 400),
     ("exact", 30, 3000), ("continuous", 200, 200)])]


@pytest.mark.parametrize(("seed", "kind", "n", "big_n"), CASES)
def test_equal_to_ppi_python(ppi_py, seed: int, kind: str, n: int, big_n: int) -> None:
    ppi, baselines = ppi_py
    y, yhat, unlabelled = _synthetic(seed, kind, n, big_n)
    result = ppi_mean(y, yhat, unlabelled, confidence=0.95, interval="normal")
    point = float(np.ravel(ppi.ppi_mean_pointestimate(y, yhat, unlabelled, lam=None))[0])
    low, high = (float(np.ravel(v)[0]) for v in ppi.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05, lam=None))
    lam = float(_oracle_lambda(ppi, y, yhat, unlabelled))
    assert abs(result.lam - lam) < 1e-9
    assert abs(result.estimate.value - point) < 1e-9
    assert abs(result.estimate.low - low) < 1e-9 and abs(result.estimate.high - high) < 1e-9
    classical = baselines.classical_mean_ci(y, alpha=0.05)
    assert abs(result.human.low - classical[0]) < 1e-9 and abs(result.human.high - classical[1]) < 1e-9
    if kind == "anti":
        assert result.lam == 0.0
    if kind == "exact":
        assert result.lam == 1.0
    small = ppi_mean(y, yhat, unlabelled, confidence=0.95)  # the default: same value and lambda, unbiased pieces
    assert small.estimate.value == result.estimate.value and small.lam == result.lam
    assert projected_se(small, 0) == pytest.approx(small.estimate.se, rel=1e-12)
    assert small.estimate.se > result.estimate.se and small.human.se == pytest.approx(
        float(np.std(y, ddof=1)) / math.sqrt(n), rel=1e-12)


def test_fixed_lambda_is_ppi_and_classical(ppi_py) -> None:
    ppi, _ = ppi_py
    y, yhat, unlabelled = _synthetic(3, "continuous", 40, 300)
    for lam in (0.0, 0.4, 1.0):
        result = ppi_mean(y, yhat, unlabelled, lam=lam, confidence=0.9, interval="normal")
        low, high = (float(np.ravel(v)[0]) for v in ppi.ppi_mean_ci(y, yhat, unlabelled, alpha=0.1, lam=lam))
        assert (result.estimate.low, result.estimate.high) == pytest.approx((low, high), abs=1e-9)
    assert ppi_mean(y, yhat, unlabelled, lam=0.0).estimate.value == pytest.approx(y.mean())


def test_where_ppi_python_returns_nan_we_fall_back_to_the_human_mean() -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0])
    constant = ppi_mean(y, np.ones(4), np.ones(10))  # a judge with no spread carries no information
    assert constant.lam == 0.0 and constant.estimate.value == pytest.approx(0.75)
    census = ppi_mean(y, np.array([1.0, 0.0, 0.0, 1.0]), np.array([]))  # every output audited
    assert census.lam == 0.0 and census.n_unlabelled == 0
    assert (census.estimate.low, census.estimate.high) == pytest.approx((census.human.low, census.human.high))
    assert optimal_lambda(4, 0, 1.0, 1.0) == 0.0


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    (([1.0], [1.0], [0.0, 1.0]), {}, "at least 2 audited outputs"),
    (([1.0, 0.0], [1.0], [0.0]), {}, "differ in length"),
    (([1.0, np.nan], [1.0, 0.0], [0.0]), {}, r"y\[1\] = nan is not a finite number"),
    (([1.0, 0.0], [1.0, 0.0], [[0.0]]), {}, "yhat_unlabelled must be one-dimensional"),
    (([1.0, 0.0], [1.0, 0.0], [0.0]), {"lam": 1.5}, r"lam must be None or a number in \[0, 1\]"),
    (([1.0, 0.0], [1.0, 0.0], [0.0]), {"confidence": 95}, r"confidence must be in \(0, 1\)"),
])
def test_bad_ppi_inputs(args, kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        ppi_mean(*args, **kwargs)
    with pytest.raises(TypeError, match="y must be numeric"):
        ppi_mean(["a", "b"], [1.0, 0.0], [0.0])


# ------------------------------------------------------------------------------------------ coverage

@pytest.mark.parametrize("kind", ["continuous", "binary"])
def test_ppi_interval_covers_and_is_narrower(kind: str) -> None:
    # 500 seeded data sets x 3 models (each its own truth, judge bias and noise), 80 audited of 800 outputs
    result = ppi_coverage(kind)
    assert result.cases == 1500
    assert 0.93 <= result.coverage <= 0.97, result
    assert 0.93 <= result.reference <= 0.97, result  # the human-only interval, same data
    assert result.width_ratio < 0.85, result  # an informative judge narrows the interval
    docs = (Path(__file__).resolve().parent.parent / "docs" / "statistics.md").read_text(encoding="utf-8")
    assert result.row() in docs, result.row()  # docs/statistics.md quotes this very row


# ------------------------------------------------------------------------------------------ the table


def _design(outputs: pd.DataFrame, ratings: pd.DataFrame, judge: str, dimension: str,
            drawn: list[tuple[str, str]], *, stratify: bool = False) -> AuditDesign:
    """A design drawing exactly ``drawn`` (in that order): the estimators do not care how it was drawn."""
    frame = audit_frame(outputs, ratings, judge=judge, dimension=dimension)
    task = dict(zip(zip(frame["item_id"], frame["model"], strict=True), frame["task"], strict=True))

    def stratum(item: str, model: str) -> tuple[str, str]:
        return (model, task[(item, model)] if stratify else "")

    size = frame.assign(stratum=[stratum(i, m) for i, m in zip(frame["item_id"], frame["model"], strict=True)]
                        ).groupby("stratum").size()
    per = pd.Series([stratum(i, m) for i, m in drawn]).value_counts()
    assert per.nunique() == 1
    per_model = int(per.iloc[0])
    return AuditDesign(seed=0, judge=judge, dimension=dimension, per_model=per_model, stratify_by_task=stratify,
                       frame_digest=frame_digest(frame), n_frame=len(frame),
                       outputs=tuple(AuditOutput(k, i, m, task[(i, m)], int(size[stratum(i, m)]), per_model)
                                     for k, (i, m) in enumerate(drawn)))


def _ca_data() -> tuple[pd.DataFrame, pd.DataFrame]:
    # One model, six outputs; the judge says CA = 1, 1, 1, 0, 0, 0.
    outputs = pd.DataFrame({"item_id": [f"i{k}" for k in range(1, 7)], "model": "m", "task": "t"})
    ratings = outputs[["item_id", "model"]].assign(rater="j", dimension="ca", value=[1.0, 1, 1, 0, 0, 0])
    return outputs, ratings


def test_ppi_row_worked_by_hand() -> None:
    # Audited i1, i2, i4, i5: humans say 1, 0, 0, 0 where the judge said 1, 1, 0, 0; i3 and i6 (judge 1, 0) are
    # not audited. cov0(Y, f) = 0.5 / 4 = 1/8; var(f over all six, ddof 1) = 1.5 / 5 = 3/10;
    # lambda = (1/8) / ((1 + 4/2) * 3/10) = 5/36. theta = lambda * 1/2 + (1/4 - lambda * 1/2) = 1/4.
    # Unbiased pieces: se^2 = lambda^2 var0(f~) / (N - 1) + var0(Y - lambda f) / (n - 1)
    #   = (25/1296)(1/4)/1 + (204.25/1296)/3, Welch-Satterthwaite df from (N - 1, n - 1) = (1, 3).
    # CA is a share: the human-only interval is Clopper-Pearson for 1 of 4, and PPI's t interval, resting on one
    # positive label and one disagreement, is widened to hold it and clipped to [0, 1].
    from scipy import stats

    outputs, ratings = _ca_data()
    design = _design(outputs, ratings, "j", "ca", [("i1", "m"), ("i2", "m"), ("i4", "m"), ("i5", "m")])
    decisions = pd.DataFrame({"item_id": ["i1", "i2", "i4", "i5", "i3", "i1"], "model": "m",
                              "dimension": ["ca", "ca", "ca", "ca", "e_gen", "e_gen"],
                              "value": [1.0, 0.0, 0.0, 0.0, 0.3, 0.4]})
    report = ppi_estimates(outputs, ratings, design, decisions)
    assert list(report.table.columns) == list(PPI_COLUMNS)
    assert report.table["task"].tolist() == [ALL_TASKS]  # one task: pooled rows only
    row = report.table.iloc[0]
    imputed, audited = 6.25 / 1296, 204.25 / 1296 / 3
    se = math.sqrt(imputed + audited)
    df = (imputed + audited) ** 2 / (imputed ** 2 / 1 + audited ** 2 / 3)
    half = float(stats.t.ppf(0.975, math.floor(df))) * se
    exact = (float(stats.beta.ppf(0.025, 1, 4)), float(stats.beta.ppf(0.975, 2, 3)))
    low, high = max(min(0.25 - half, exact[0]), 0.0), min(max(0.25 + half, exact[1]), 1.0)
    expected = {"metric": "CA", "scheme": "srs", "n_frame": 6, "n_drawn": 4, "n_decided": 4, "n_audit": 4,
                "n_pending": 0, "n_skipped": 0, "n_undefined": 0, "judge_value": 0.5, "human_value": 0.25,
                "ppi_value": 0.25, "lam": float(Fraction(5, 36)), "ppi_se": se, "ppi_low": low, "ppi_high": high,
                "human_low": exact[0], "human_high": exact[1],
                "n_effective": 4 * ((exact[1] - exact[0]) / (high - low)) ** 2}
    for key, value in expected.items():
        assert row[key] == (pytest.approx(value, abs=1e-9) if isinstance(value, float) else value), key
    assert "widened to the exact (Clopper-Pearson) human-only interval" in row["warning"]
    assert report.n_ignored == 0  # the e_gen rows are another dimension's, not decisions on undrawn outputs
    fields = report.signature_fields()
    assert fields["estimator"] == "ppi++" and fields["audit"] == design.digest[:12]
    assert fields["audit-decisions"] == "4"
    long = report.estimator_rows()
    assert long["estimator"].tolist() == ["judge", "human", "ppi"]
    assert long.set_index("estimator").loc["ppi", "ci_low"] == pytest.approx(low)


def test_pending_skipped_and_ignored_decisions() -> None:
    outputs, ratings = _ca_data()
    design = _design(outputs, ratings, "j", "ca", [("i1", "m"), ("i2", "m"), ("i4", "m"), ("i5", "m")])
    # decided in audit order except position 1 (i2): skipped; position 3 (i5): pending; i6 is not drawn
    decisions = pd.DataFrame({"item_id": ["i1", "i4", "i6"], "model": "m", "value": [1.0, 0.0, 1.0]})
    report = ppi_estimates(outputs, ratings, design, decisions)
    row = report.table.iloc[0]
    assert (row["n_decided"], row["n_audit"], row["n_pending"], row["n_skipped"]) == (2, 2, 2, 1)
    assert report.n_ignored == 1
    # the unlabelled set is every undecided output: i2, i3, i5, i6 (judge 1, 1, 0, 0)
    check = ppi_mean([1.0, 0.0], [1.0, 0.0], [1.0, 1.0, 0.0, 0.0])
    assert row["ppi_value"] == pytest.approx(check.estimate.value)
    one = ppi_estimates(outputs, ratings, design, decisions.iloc[:1]).table.iloc[0]
    assert one["n_audit"] == 1 and math.isnan(one["ppi_value"]) and one["judge_value"] == 0.5


def _sa_data() -> tuple[pd.DataFrame, pd.DataFrame]:
    # Two models, two tasks, three items per task. Judge j: e_ref 0.8 everywhere, e_gen 0.4 (model a), 0.2 (b).
    outputs = pd.DataFrame([{"item_id": f"{t}{k}", "model": m, "task": t} for t in ("n", "c") for k in range(3)
                            for m in ("a", "b")])
    rows = []
    for item, model in zip(outputs["item_id"], outputs["model"], strict=True):
        rows += [(item, model, "j", "e_ref", 0.8), (item, model, "j", "e_gen", 0.4 if model == "a" else 0.2)]
    return outputs, pd.DataFrame(rows, columns=["item_id", "model", "rater", "dimension", "value"])


def test_sa_term_takes_the_human_generation_and_the_judge_reference() -> None:
    outputs, ratings = _sa_data()
    drawn = [("n0", "a"), ("n1", "a"), ("c0", "a"), ("n0", "b"), ("n1", "b"), ("c0", "b")]
    design = _design(outputs, ratings, "j", "e_gen", drawn)
    # humans: e_gen 0.2 and 0.6 on model a's audited outputs -> SA terms (0.8-0.2)/0.8 = 0.75, (0.8-0.6)/0.8 = 0.25
    decisions = pd.DataFrame({"item_id": ["n0", "n1", "c0", "n0", "n1", "c0"], "model": ["a"] * 3 + ["b"] * 3,
                              "dimension": "e_gen", "value": [0.2, 0.6, 0.2, 0.2, 0.2, 0.2]})
    report = ppi_estimates(outputs, ratings, design, decisions)
    assert ppi_metrics(None, "e_gen")[0].name == "SA" and set(report.table["metric"]) == {"SA"}
    pooled = report.table[report.table["task"] == ALL_TASKS].set_index("model")
    assert pooled.loc["a", "judge_value"] == pytest.approx(0.5)  # (0.8 - 0.4) / 0.8
    assert pooled.loc["a", "human_value"] == pytest.approx((0.75 + 0.25 + 0.75) / 3)
    assert pooled.loc["b", "human_value"] == pytest.approx(0.75)
    assert pooled.loc["b", "judge_value"] == pytest.approx(0.75)
    # a constant judge term per model: lambda = 0, the PPI value is the human mean
    assert pooled.loc["a", "lam"] == 0.0 and pooled.loc["a", "ppi_value"] == pooled.loc["a", "human_value"]
    tasks = report.table[report.table["task"] != ALL_TASKS]
    assert set(tasks["scheme"]) == {"domain"} and set(tasks["task"]) == {"n", "c"}
    assert tasks.set_index(["task", "model"]).loc[("c", "a"), "n_audit"] == 1  # one audited output: no estimate
    assert math.isnan(tasks.set_index(["task", "model"]).loc[("c", "a"), "ppi_value"])
    # the judge-only value is the Overview's (compute_metrics on the judge's ratings)
    features = TextFeatures(np.ones(12), np.ones(12), np.zeros((12, 3)), np.zeros((12, 3)), "test")
    table = compute_metrics(outputs, ratings, features=features, include_ld=False).table
    overview = table[table["metric"] == "SA"].set_index("model")["value"]
    assert pooled["judge_value"].to_dict() == pytest.approx(overview.to_dict())


def test_stratified_pooled_row_weights_the_strata() -> None:
    rng = np.random.default_rng(1)
    outputs = pd.DataFrame([{"item_id": f"{t}{k}", "model": "m", "task": t} for t, size in (("x", 8), ("y", 4))
                            for k in range(size)])
    ratings = outputs[["item_id", "model"]].assign(rater="j", dimension="e_gen", value=rng.random(12).round(2))
    ratings = pd.concat([ratings, ratings.assign(dimension="e_ref", value=0.9)], ignore_index=True)
    drawn = [("x0", "m"), ("y1", "m"), ("x3", "m"), ("y2", "m"), ("x5", "m"), ("y3", "m")]
    design = _design(outputs, ratings, "j", "e_gen", drawn, stratify=True)
    decisions = pd.DataFrame({"item_id": [i for i, _ in drawn], "model": "m", "value": rng.random(6).round(2)})
    report = ppi_estimates(outputs, ratings, design, decisions)
    table = report.table.set_index("task")
    assert table.loc["all", "scheme"] == "stratified" and set(table.loc[["x", "y"], "scheme"]) == {"srs"}
    weights = {"x": 8 / 12, "y": 4 / 12}
    expected = sum(w * table.loc[t, "ppi_value"] for t, w in weights.items())
    se = math.sqrt(sum(w * w * table.loc[t, "ppi_se"] ** 2 for t, w in weights.items()))
    assert table.loc["all", "ppi_value"] == pytest.approx(expected)
    assert table.loc["all", "ppi_se"] == pytest.approx(se)
    assert table.loc["all", "judge_value"] == pytest.approx(
        sum(w * table.loc[t, "judge_value"] for t, w in weights.items()))
    assert table.loc["all", "n_audit"] == 6
    assert report.signature_fields()["audit-decisions"] == "6"


def test_bad_estimator_inputs_name_the_culprit() -> None:
    outputs, ratings = _ca_data()
    design = _design(outputs, ratings, "j", "ca", [("i1", "m"), ("i2", "m")])
    decisions = pd.DataFrame({"item_id": ["i1", "i2"], "model": "m", "value": [1.0, 0.0]})
    with pytest.raises(ValueError, match=r"decision on output \('i1', 'm'\): ca = 2.0 must be 0 or 1"):
        ppi_estimates(outputs, ratings, design, decisions.assign(value=[2.0, 0.0]))
    with pytest.raises(ValueError, match=r"decision on output \('i2', 'm'\): value 'yes' is not a number"):
        ppi_estimates(outputs, ratings, design, decisions.assign(value=[1.0, "yes"]))
    with pytest.raises(ValueError, match=r"decisions hold output \('i1', 'm'\) twice"):
        ppi_estimates(outputs, ratings, design, pd.concat([decisions, decisions.iloc[:1]]))
    with pytest.raises(ValueError, match="metric 'SA' cannot be corrected by an audit of 'ca'"):
        ppi_estimates(outputs, ratings, design, decisions, metrics=["SA"])
    with pytest.raises(ValueError, match="unknown metric 'XX'"):
        ppi_estimates(outputs, ratings, design, decisions, metrics=["XX"])
    with pytest.raises(ValueError, match="changed since audit .* was drawn"):
        ppi_estimates(outputs.iloc[:5], ratings, design, decisions)
    with pytest.raises(ValueError, match="decisions lacks the column"):
        ppi_estimates(outputs, ratings, design, decisions.drop(columns="value"))
    with pytest.raises(ValueError, match="no metric that is a mean of per-item judge terms reads dimension 'tone'"):
        ppi_metrics(None, "tone")
