"""The metric registry and the dimension table: one entry per metric, read by every pipeline (issue 10)."""

from __future__ import annotations

import math
from types import MappingProxyType

import numpy as np
import pandas as pd
import pytest

from empathy import io
from empathy import metrics as m
from empathy.evaluate import TextFeatures, compute_metrics, plan_metrics
from empathy.labels.ledger import apply_overrides
from empathy.review import Recompute
from empathy.stability import metric_terms

NAN = float("nan")


def test_dimension_table_matches_the_loader_tables():
    # io and store still carry their own copies until the lead switches them to this table; they must agree
    assert dict(m.DIMENSION_RANGES) == io.DIMENSION_RANGES
    assert m.BINARY_DIMENSIONS == io.BINARY_DIMENSIONS
    assert m.REFERENCE_DIMENSIONS == {"e_ref", "u_ref"}
    assert {d for dims in m.METRIC_DIMENSIONS.values() for d in dims} == set(m.DIMENSIONS)


@pytest.mark.parametrize(("dimension", "value", "problem"), [
    ("e_ref", 0.0, None), ("e_ref", 1.0, None), ("e_gen", 1.5, "must be in [0, 1]"),
    ("e_gen", -0.1, "must be in [0, 1]"), ("u_ref", 7.0, None), ("u_gen", -1.0, "must be in [0, inf]"),
    ("ca", 1.0, None), ("ca", 0.5, "must be 0 or 1"), ("ca", 2.0, "must be 0 or 1"), ("ca", NAN, None),
])
def test_dimension_problem(dimension, value, problem):
    assert m.DIMENSIONS[dimension].problem(value) == problem


def test_dimension_rows_are_validated():
    with pytest.raises(ValueError, match="side must be one of"):
        m.Dimension("x", 0.0, 1.0, "both")
    with pytest.raises(ValueError, match="low 2 is above high 1"):
        m.Dimension("x", 2, 1, "output")


@pytest.mark.parametrize("name", ["sa", "BLEU", "", None])
def test_unknown_metric_names_the_culprit(name):
    with pytest.raises(ValueError, match=rf"unknown metric {name!r}; metrics are SA, EGM, CA, LD"):
        m.get_metric(name)


def test_registry_entries():
    assert m.METRICS == ("SA", "EGM", "CA", "LD")
    assert [s.name for s in m.METRIC_SPECS.values() if s.needs_sentences] == ["EGM"]
    assert [s.name for s in m.METRIC_SPECS.values() if s.needs_distancing] == ["LD"]
    assert not m.get_metric("LD").judged and m.get_metric("LD").scorer == "spacy-distancing"
    with pytest.raises(ValueError, match=r"unknown dimension\(s\) \['x_gen'\]"):
        m.MetricSpec("X", ("x_gen",), lambda x: (np.empty(0), np.empty(0, dtype=np.int8)))
    with pytest.raises(ValueError, match="needs a fixed scorer name"):
        m.MetricSpec("X", (), lambda x: (np.empty(0), np.empty(0, dtype=np.int8)))


def test_metric_terms_rejects_text_only_and_unknown_metrics():
    outputs = pd.DataFrame({"item_id": ["i1"], "model": ["m"]})
    ratings = pd.DataFrame({"item_id": ["i1"], "model": ["m"], "rater": ["a"], "dimension": ["ca"], "value": [1.0]})
    with pytest.raises(ValueError, match="metric must be one of"):
        metric_terms(outputs, ratings, "LD")
    with pytest.raises(ValueError, match="unknown metric 'XY'"):
        metric_terms(outputs, ratings, "XY")


def test_mean_by_group_equals_aggregate_per_group():
    terms = np.array([0.5, 0.25, NAN, 1.0, NAN, 0.0])
    status = np.array([m.OK, m.OK, m.MISSING, m.OK, m.UNDEFINED, m.OK], dtype=np.int8)
    group = np.array([0, 0, 0, 2, 2, 2])
    seen, mean, n, n_missing, n_undefined = m.mean_by_group(group, 3, terms, status)
    assert seen.tolist() == [0, 2]  # group 1 has no row: no result, not a zero
    assert mean.tolist() == [0.375, 0.5] and n.tolist() == [2, 2]
    assert n_missing.tolist() == [1, 0] and n_undefined.tolist() == [0, 1]
    for code, value in zip(seen, mean, strict=True):
        assert m.aggregate("X", terms[group == code], status[group == code]).value == value


# ---------------------------------------------------------------------- a new metric is one registry entry

OUTPUTS = pd.DataFrame({"item_id": ["i1", "i2", "i3"] * 2, "model": ["a"] * 3 + ["b"] * 3, "task": "t",
                        "reference": ["r1", "r2", "r3"] * 2, "generation": [f"g{k}" for k in range(6)]})
FEATURES = TextFeatures(np.ones(6), np.ones(6), np.zeros((6, 3)), np.zeros((6, 3)), "test")


def _ratings(rows):
    frame = pd.DataFrame(rows, columns=["item_id", "model", "rater", "dimension", "value"])
    return frame.assign(rater_kind="llm", reason="", signature="s")


# affect gain E(g) - E(t): a hypothetical new metric reading the SA dimensions
RATINGS = _ratings([
    ("i1", "a", "j", "e_ref", 0.5), ("i1", "a", "j", "e_gen", 0.75),   # +0.25
    ("i2", "a", "j", "e_ref", 0.5), ("i2", "a", "j", "e_gen", 0.25),   # -0.25
    ("i3", "a", "j", "e_ref", 0.25), ("i3", "a", "j", "e_gen", NAN),   # missing
    ("i1", "b", "j", "e_ref", 0.0), ("i1", "b", "j", "e_gen", 1.0),    # +1 (defined here, unlike SA)
    ("i2", "b", "j", "e_ref", 0.5), ("i2", "b", "j", "e_gen", 1.0),    # +0.5
    ("i3", "b", "j", "e_ref", 0.5), ("i3", "b", "j", "e_gen", 0.75),   # +0.25
    ("i1", "a", "k", "e_ref", 0.5), ("i1", "a", "k", "e_gen", 0.5),    # 0
    ("i1", "b", "k", "e_ref", 0.5), ("i1", "b", "k", "e_gen", 0.0),    # -0.5
])


def _gain_terms(x: m.TermInputs) -> m.Terms:
    ref, gen = x.ratings["e_ref"], x.ratings["e_gen"]
    status = np.where(np.isnan(ref) | np.isnan(gen), m.MISSING, m.OK).astype(np.int8)
    return gen - ref, status


def _median(metric, terms, status):
    usable = status == m.OK
    return m.MetricResult(metric, float(np.median(terms[usable])) if usable.any() else None, int(usable.sum()),
                          int((status == m.MISSING).sum()), int((status == m.UNDEFINED).sum()), terms, status)


@pytest.fixture
def with_gain(monkeypatch):
    def register(spec: m.MetricSpec) -> None:
        specs = {**m.METRIC_SPECS, spec.name: spec}
        monkeypatch.setattr(m, "METRIC_SPECS", MappingProxyType(specs))
        monkeypatch.setattr(m, "METRICS", tuple(specs))
    return register


# b/j terms +1, +0.5, +0.25: mean 0.5833, median 0.5; after the override of i2 (term 0): mean 0.4167, median 0.25
@pytest.mark.parametrize(("aggregate", "b_j", "b_j_after"), [
    (m.aggregate, 1.75 / 3, 1.25 / 3),
    (_median, 0.5, 0.25),
])
def test_a_new_registry_entry_flows_through_every_pipeline(with_gain, aggregate, b_j, b_j_after):
    with_gain(m.MetricSpec("GAIN", ("e_ref", "e_gen"), _gain_terms, aggregate=aggregate))
    report = compute_metrics(OUTPUTS, RATINGS, features=FEATURES, include_ld=False)
    gain = report.table[report.table["metric"] == "GAIN"].set_index(["model", "scorer"])
    expected = {("a", "j"): (0.0, 2, 1), ("b", "j"): (pytest.approx(b_j), 3, 0), ("a", "k"): (0.0, 1, 0),
                ("b", "k"): (-0.5, 1, 0)}
    assert {key: (row.value, row.n, row.n_missing) for key, row in gain.iterrows()} == expected
    assert list(report.table["metric"].unique()) == ["SA", "GAIN"]  # registry order
    pair = report.agreement[report.agreement["metric"] == "GAIN"]
    assert pair[["scorer_a", "scorer_b", "n_models"]].values.tolist() == [["j", "k", 2]]
    # the live recompute is the same plan: an override moves the new metric too
    override = pd.DataFrame({"item_id": ["i2"], "model": ["b"], "rater": ["j"], "dimension": ["e_gen"],
                             "value": [0.5]})
    fast = Recompute(OUTPUTS, RATINGS, FEATURES, include_ld=False).report(override).table
    slow = compute_metrics(OUTPUTS, apply_overrides(RATINGS, override), features=FEATURES, include_ld=False,
                           n_overrides=1).table
    pd.testing.assert_frame_equal(fast, slow)
    moved = fast[(fast["metric"] == "GAIN") & (fast["model"] == "b") & (fast["scorer"] == "j")]["value"].item()
    assert moved == pytest.approx(b_j_after)
    # and stability reads it from the registry
    terms = metric_terms(OUTPUTS, RATINGS, "GAIN").set_index(["judge", "model", "item_id"])
    assert terms.loc[("j", "b", "i1"), "term"] == 1.0 and math.isnan(terms.loc[("j", "a", "i3"), "term"])


def test_patch_later_rows_win_and_unknown_keys_fall_back():
    plan = plan_metrics(OUTPUTS, RATINGS, features=FEATURES, include_ld=False)
    changes = pd.DataFrame({"item_id": ["i1", "i1"], "model": ["a", "a"], "rater": ["j", "j"],
                            "dimension": ["e_gen", "e_gen"], "value": [0.1, 0.25]})
    patched = plan.patch(changes)
    sa = plan.evaluate(patched).table.set_index(["metric", "model", "scorer"])["value"]
    assert sa[("SA", "a", "j")] == pytest.approx((0.5 + 0.5) / 2)  # (0.5-0.25)/0.5 and (0.5-0.25)/0.5
    assert plan.patch(None) is plan.values and plan.evaluate().table.equals(compute_metrics(
        OUTPUTS, RATINGS, features=FEATURES, include_ld=False).table)
    for key, value in (("rater", "z"), ("item_id", "i9"), ("dimension", "ca")):
        assert plan.patch(changes.assign(**{key: value})) is None, key
    # k never rated (i3, b): a new unit, so the plan cannot take it
    assert plan.patch(changes.assign(item_id="i3", model="b", rater="k")) is None
