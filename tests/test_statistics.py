"""Issue 15's statistics: reference dimensions counted once per item, cluster bootstrap by item, the EGM
switch for a + b = 0, and per-task values in the live recompute."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from empathy import agreement as ag
from empathy import metrics as m
from empathy.evaluate import TextFeatures, compute_metrics, default_by_task
from empathy.labels.ledger import apply_overrides
from empathy.review import Recompute
from empathy.stability import metric_terms

ITEMS = [f"i{k}" for k in range(1, 7)]
# per item: the reference judgements of two raters (one per reference) and per (item, model) the output ones
E_REF = {"r1": [0.9, 0.2, 0.5, 0.7, 0.1, 0.4], "r2": [0.8, 0.3, 0.6, 0.5, 0.2, 0.1]}
E_GEN = {("r1", "A"): [0.1, 0.5, 0.3, 0.9, 0.2, 0.6], ("r1", "B"): [0.4, 0.4, 0.8, 0.7, 0.1, 0.3],
         ("r2", "A"): [0.2, 0.6, 0.1, 0.8, 0.3, 0.5], ("r2", "B"): [0.5, 0.2, 0.9, 0.6, 0.4, 0.1]}


def _ratings() -> pd.DataFrame:
    rows = []
    for rater, values in E_REF.items():
        for item, value in zip(ITEMS, values, strict=True):
            for model in ("A", "B"):  # the loader's long form repeats the reference judgement per output
                rows.append((item, model, rater, "e_ref", value))
    for (rater, model), values in E_GEN.items():
        rows += [(item, model, rater, "e_gen", value) for item, value in zip(ITEMS, values, strict=True)]
    return pd.DataFrame(rows, columns=["item_id", "model", "rater", "dimension", "value"])


def test_reference_dimension_counts_each_item_once():
    pairs = ag.pairwise_agreement(_ratings()).set_index("dimension")
    assert pairs.loc["e_ref", "n"] == 6  # not 12: one judgement per reference
    assert pairs.loc["e_ref", "spearman"] == pytest.approx(stats.spearmanr(E_REF["r1"], E_REF["r2"]).statistic)
    assert pairs.loc["e_gen", "n"] == 12  # output dimensions: one judgement per (item, model)
    alpha = ag.krippendorff_by_dimension(_ratings()).set_index("dimension")
    assert alpha.loc["e_ref", "n_units"] == 6 and alpha.loc["e_gen", "n_units"] == 12


def test_reference_copies_that_differ_are_averaged():
    ratings = _ratings()
    first = (ratings["dimension"] == "e_ref") & (ratings["item_id"] == "i1") & (ratings["rater"] == "r1")
    ratings.loc[first & (ratings["model"] == "B"), "value"] = 0.5  # copies 0.9 and 0.5: judgement 0.7
    pairs = ag.pairwise_agreement(ratings, dimensions=["e_ref"])
    expected = [0.7] + E_REF["r1"][1:]
    assert pairs["spearman"].item() == pytest.approx(stats.spearmanr(expected, E_REF["r2"]).statistic)


def _cluster_reference(x, y, items, n_resamples, seed):
    """Straightforward cluster bootstrap: draw items with replacement, take all their rows, scipy's rho."""
    clusters = sorted(set(items))
    members = {c: [k for k, item in enumerate(items) if item == c] for c in clusters}
    draws = np.random.default_rng(seed).integers(0, len(clusters), size=(n_resamples, len(clusters)))
    values = []
    for drawn in draws:
        rows = [k for c in drawn for k in members[clusters[c]]]
        a, b = x[rows], y[rows]
        if np.ptp(a) > 0 and np.ptp(b) > 0:
            values.append(stats.spearmanr(a, b).statistic)
    return np.percentile(values, [2.5, 97.5])


def test_output_dimension_bootstrap_resamples_items():
    pairs = ag.pairwise_agreement(_ratings(), dimensions=["e_gen"], bootstrap=400, seed=7)
    # rows in the matrix's order: (item, model) sorted
    x = np.array([E_GEN[("r1", m)][k] for k in range(6) for m in ("A", "B")])
    y = np.array([E_GEN[("r2", m)][k] for k in range(6) for m in ("A", "B")])
    items = [item for item in ITEMS for _ in ("A", "B")]
    low, high = _cluster_reference(x, y, items, 400, 7)
    assert pairs["n"].item() == 12
    assert pairs["spearman_low"].item() == pytest.approx(low, abs=1e-12)
    assert pairs["spearman_high"].item() == pytest.approx(high, abs=1e-12)
    # the same rows treated as 12 independent pairs: a narrower interval (0.33-0.95 vs 0.22-0.96 here)
    naive = ag.bootstrap_ci(ag.spearman, x, y, n_resamples=400, seed=7)
    assert naive.high - naive.low < high - low


def test_reference_dimension_bootstrap_is_over_items():
    pairs = ag.pairwise_agreement(_ratings(), dimensions=["e_ref"], bootstrap=300, seed=2)
    x, y = np.array(E_REF["r1"]), np.array(E_REF["r2"])
    plain = ag.bootstrap_ci(ag.spearman, x, y, n_resamples=300, seed=2)
    assert (pairs["spearman_low"].item(), pairs["spearman_high"].item()) == (plain.low, plain.high)


def test_singleton_clusters_are_the_ordinary_bootstrap():
    rng = np.random.default_rng(1)
    x = rng.random(20)
    y = x + rng.normal(0, 0.5, 20)
    plain = ag.bootstrap_ci(ag.spearman, x, y, n_resamples=200, seed=4)
    clustered = ag.bootstrap_ci(ag.spearman, x, y, n_resamples=200, seed=4, clusters=[f"c{k}" for k in range(20)])
    assert (plain.low, plain.high) == (clustered.low, clustered.high)


def test_cluster_labels_follow_dropped_pairs():
    x = np.array([1.0, 2.0, np.nan, 4.0, 5.0, 6.0, 7.0, 8.0])
    y = np.array([2.0, 1.0, 3.0, 5.0, 4.0, 7.0, 6.0, 8.0])
    items = ["a", "a", "b", "b", "c", "c", "d", "d"]
    result = ag.bootstrap_ci(ag.spearman, x, y, n_resamples=300, seed=0, clusters=items)
    keep = ~np.isnan(x)
    low, high = _cluster_reference(x[keep], y[keep], [i for i, k in zip(items, keep, strict=True) if k], 300, 0)
    assert (result.low, result.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    with pytest.raises(ValueError, match="one label per pair"):
        ag.bootstrap_ci(ag.spearman, x, y, clusters=items[:3])


# ---------------------------------------------------------------------------- EGM with a + b = 0: the switch


# item 1: a = b = 0 (term 0 or left out); item 2: a = 2/2 = 1, b = 0 -> 1; item 3: a = 1/1, b = 3/3 -> 0
U_REF, U_GEN, D, Q = [0, 2, 1], [0, 0, 3], [1, 2, 1], [4, 2, 3]


@pytest.mark.parametrize(("both_zero", "value", "n", "n_undefined"), [
    ("zero", 1 / 3, 3, 0),      # the paper's reading: (0 + 1 + 0) / 3
    ("exclude", 1 / 2, 2, 1),   # item 1 left out: (1 + 0) / 2
])
def test_egm_both_zero_switch(both_zero, value, n, n_undefined):
    result = m.granularity_mismatch(U_REF, U_GEN, D, Q, both_zero=both_zero)
    assert result.value == pytest.approx(value)
    assert (result.n, result.n_undefined) == (n, n_undefined)
    outputs = pd.DataFrame({"item_id": ["i1", "i2", "i3"], "model": "m", "task": "t", "reference": ["r1", "r2", "r3"],
                            "generation": ["g1", "g2", "g3"]})
    ratings = pd.DataFrame(
        [(f"i{k + 1}", "m", "j", "u_ref", float(U_REF[k])) for k in range(3)]
        + [(f"i{k + 1}", "m", "j", "u_gen", float(U_GEN[k])) for k in range(3)],
        columns=["item_id", "model", "rater", "dimension", "value"]).assign(rater_kind="llm", reason="", signature="s")
    features = TextFeatures(np.array(D, float), np.array(Q, float), np.zeros((3, 3)), np.zeros((3, 3)), "test")
    report = compute_metrics(outputs, ratings, features=features, include_ld=False, egm_both_zero=both_zero,
                             n_overrides=0)
    row = report.table.query("metric == 'EGM'").iloc[0]
    assert row["value"] == pytest.approx(value) and (row["n"], row["n_undefined"]) == (n, n_undefined)
    fields = str(report.signature).split("|")
    assert ("egm-both-zero:exclude" in fields) == (both_zero == "exclude")
    fast = Recompute(outputs, ratings, features, include_ld=False, egm_both_zero=both_zero).report(None)
    assert fast.table.equals(report.table) and str(fast.signature) == str(report.signature)
    terms = metric_terms(outputs, ratings, "EGM", sentences=features.frame(outputs), egm_both_zero=both_zero)
    assert terms["status"].tolist() == [m.UNDEFINED if both_zero == "exclude" else m.OK, m.OK, m.OK]


def test_egm_both_zero_is_validated():
    with pytest.raises(ValueError, match="both_zero must be one of"):
        m.granularity_mismatch([0], [0], [1], [1], both_zero="drop")
    with pytest.raises(ValueError, match="egm_both_zero must be one of"):
        m.MetricOptions(egm_both_zero="drop")


# ---------------------------------------------------------------------------- per task in the live recompute

def test_recompute_per_task_equals_compute_metrics_per_task():
    rng = np.random.default_rng(9)
    keys = [(f"i{k:02d}", f"m{j}") for j in range(5) for k in range(20)]
    outputs = pd.DataFrame({"item_id": [i for i, _ in keys], "model": [mo for _, mo in keys],
                            "task": ["even" if int(i[1:]) % 2 == 0 else "odd" for i, _ in keys],
                            "reference": [f"r {i}" for i, _ in keys], "generation": [f"g {i} {mo}" for i, mo in keys]})
    draws = {"e_ref": lambda: rng.random(), "e_gen": lambda: rng.random(), "u_ref": lambda: float(rng.integers(0, 3)),
             "u_gen": lambda: float(rng.integers(0, 3)), "ca": lambda: float(rng.integers(0, 2))}
    ratings = pd.DataFrame([(i, mo, judge, d, draw()) for judge in ("j0", "j1", "j2") for i, mo in keys
                            for d, draw in draws.items()], columns=["item_id", "model", "rater", "dimension", "value"])
    ratings = ratings.assign(rater_kind="llm", reason="", signature="s")
    n = len(outputs)
    features = TextFeatures(rng.integers(1, 6, n).astype(float), rng.integers(1, 6, n).astype(float),
                            rng.random((n, 3)), rng.random((n, 3)), "test")
    overrides = ratings[ratings["dimension"] == "ca"].sample(40, random_state=9)[
        ["item_id", "model", "rater", "dimension", "value"]].assign(value=lambda f: 1 - f["value"])
    fast = Recompute(outputs, ratings, features, by_task=True).report(overrides)
    slow = compute_metrics(outputs, apply_overrides(ratings, overrides), features=features, by_task=True,
                           n_overrides=len(overrides))
    assert set(fast.table["task"]) == {"even", "odd"} and fast.by_task
    pd.testing.assert_frame_equal(fast.table, slow.table, check_exact=False, rtol=1e-12, atol=1e-12)
    pd.testing.assert_frame_equal(fast.agreement, slow.agreement, check_exact=False, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("tasks", "expected"), [
    (["news", "counseling", "news"], True), (["news"] * 3, False), (["", "", ""], False), (None, False),
])
def test_default_by_task(tasks, expected):
    outputs = pd.DataFrame({"item_id": ["a", "b", "c"], "model": "m"})
    if tasks is not None:
        outputs["task"] = tasks
    assert default_by_task(outputs) is expected


# ---------------------------------------------------------------------------- issue 23: docs/statistics.md


def test_statistics_doc_worked_example_is_recomputed():
    """Every row of docs/statistics.md's worked example on the demo data comes from the code, as it is now."""
    from pathlib import Path

    from validation.statistics_example import demo_tables

    docs = (Path(__file__).resolve().parent.parent / "docs" / "statistics.md").read_text(encoding="utf-8")
    tables = demo_tables()
    assert set(tables) == {"sa_author", "ca_counseling", "agreement", "audit", "budget", "digest"}
    for name, lines in tables.items():
        assert lines, name
        for line in lines:
            assert line in docs, (name, line)
    # the example's claim: every PPI interval of the audit holds the full-data value
    for line in tables["audit"]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        low, high = (float(v) for v in cells[4].split("[")[1].rstrip("]").split(","))
        assert low <= float(cells[7]) <= high, line


def test_statistics_doc_coverage_table_is_recomputed():
    """docs/statistics.md's coverage table is validation.coverage.markdown(), every row recomputed (seeded)."""
    from pathlib import Path

    from validation.coverage import markdown

    docs = (Path(__file__).resolve().parent.parent / "docs" / "statistics.md").read_text(encoding="utf-8")
    assert markdown() in docs


# ----------------------------------------------------------------- intervals to distrust (issue 27)
def test_interval_warning_flags_zero_width_and_fewer_than_ten_units():
    # 4 items in clusters of 2 rows (8 pairs): the interval rests on 4 items, not 8 pairs
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    y = np.array([2.0, 1.0, 3.0, 5.0, 4.0, 7.0, 6.0, 8.0])
    clustered = ag.bootstrap_ci(ag.spearman, x, y, n_resamples=200, seed=0, clusters=list("aabbccdd"))
    assert clustered.n_units == 4 and not clustered.zero_width
    assert ag.interval_warning({"spearman": clustered}) == (
        "spearman interval rests on 4 items (fewer than 10): the percentile bootstrap understates the uncertainty "
        "here")
    # 12 pairs whose every resample has the same mean difference: a zero-width interval, not a precise one
    shifted = ag.bootstrap_ci(lambda a, b: float(np.mean(b - a)), np.arange(12.0), np.arange(12.0) + 1,
                              n_resamples=100, seed=0)
    assert (shifted.low, shifted.high, shifted.n_units, shifted.zero_width) == (1.0, 1.0, 12, True)
    assert ag.interval_warning({"bias": shifted}, unit="pairs") == (
        "bias interval [1, 1] has zero width: the percentile bootstrap understates the uncertainty here")
    # ten units and a real spread: nothing to say; an interval that is not shown is not flagged
    rng = np.random.default_rng(3)
    a = rng.random(10)
    wide = ag.bootstrap_ci(ag.spearman, a, a + rng.normal(0, 0.3, 10), n_resamples=200, seed=0)
    assert wide.n_units == ag.MIN_INTERVAL_UNITS and ag.interval_warning({"spearman": wide}) is None
    assert ag.interval_warning({"spearman": ag.ConfidenceInterval(None, None, 0.95, 10, 0, 3)}) is None


def test_pairwise_agreement_warns_beside_its_intervals():
    pairs = ag.pairwise_agreement(_ratings(), dimensions=["e_gen"], bootstrap=200, seed=0)
    assert pairs["warning"].item() == ("spearman interval rests on 6 items (fewer than 10): the percentile "
                                       "bootstrap understates the uncertainty here")
    assert "warning" not in ag.pairwise_agreement(_ratings(), dimensions=["e_gen"]).columns
