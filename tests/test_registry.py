"""The metric registry and the dimension table: one entry per metric, read by every pipeline (issue 10)."""

from __future__ import annotations

import math
from types import MappingProxyType

import numpy as np
import pandas as pd
import pytest

from empathy import io
from empathy import metrics as m
from empathy.evaluate import TextFeatures, compute_metrics, plan_metrics, rank_by_direction, rankings
from empathy.fragility import fragility
from empathy.labels.ledger import apply_overrides
from empathy.review import Recompute, ranking_shift
from empathy.stability import metric_terms
from empathy.vocabulary import HIGHER_IS_BETTER, LOWER_IS_BETTER

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


# ------------------------------------------------- what every surface reads from an entry (issue 22)

def _no_terms(x: m.TermInputs) -> m.Terms:
    return np.empty(0), np.empty(0, dtype=np.int8)


def test_the_paper_entries_carry_table_1():
    # (display name, equation, range of Table 1); all four carry the paper's down arrow: lower is better
    expected = {"SA": ("Sentiment Attenuation", "Eq. 1", (-math.inf, 1.0)),
                "EGM": ("Empathic Granularity Mismatch", "Eq. 2", (0.0, 1.0)),
                "CA": ("Conflict Avoidance", "Eq. 3", (0.0, 1.0)),
                "LD": ("Linguistic Distancing", "Eq. 4", (0.0, math.inf))}
    for name, (title, equation, value_range) in expected.items():
        spec = m.get_metric(name)
        assert (spec.display_name, spec.equation, spec.value_range) == (title, equation, value_range), name
        assert spec.better == LOWER_IS_BETTER and spec.lower_is_better and spec.charted, name
        assert spec.help and spec.how_to_read, name
    assert m.get_metric("SA").description == ("Sentiment Attenuation (Eq. 1): 0 none, 1 affect flattened, < 0 more "
                                              "intense than the reference")
    assert m.metrics_reading("egm_both_zero") == ("EGM",) and m.metrics_reading("ld_standardization") == ("LD",)
    assert m.get_metric("SA").ratio_of == ("e_gen", "e_ref")
    assert m.judged_metrics() == ("SA", "EGM", "CA") and m.text_metrics() == ("LD",)
    assert m.charted_metrics() == m.METRICS and m.label_mean_metrics() == {"CA"}


def test_new_fields_have_defaults():
    spec = m.MetricSpec("GAIN", ("e_ref", "e_gen"), _gain_terms)
    assert (spec.better, spec.display_name, spec.equation, spec.value_range, spec.help, spec.how_to_read,
            spec.charted, spec.reads_options, spec.ratio_of) == (
        LOWER_IS_BETTER, "GAIN", "", (-math.inf, math.inf), "", "", True, (), None)
    assert spec.description == "GAIN" and not spec.label_mean


@pytest.mark.parametrize(("changes", "message"), [
    ({"better": "down"}, r"metric 'X': better must be one of \('lower', 'higher'\), got 'down'"),
    ({"better": None}, r"metric 'X': better must be one of"),
    ({"value_range": (1.0, 0.0)}, r"metric 'X': value_range \(1.0, 0.0\) has low above high"),
    ({"reads_options": ("egm_both_one",)}, r"metric 'X' reads unknown option\(s\) \['egm_both_one'\]"),
    ({"ratio_of": ("e_gen", "u_ref")}, r"metric 'X': ratio_of must name two of its dimensions"),
])
def test_entries_are_validated_naming_the_metric(changes, message):
    with pytest.raises(ValueError, match=message):
        m.MetricSpec("X", ("e_ref", "e_gen"), _no_terms, **changes)


def test_label_mean_is_decided_from_the_entry():
    def engagement(x: m.TermInputs) -> m.Terms:  # 1 - s: a binary label, but not the label itself
        terms, status = m.conflict_avoidance_terms(x.ratings["ca"])
        return 1.0 - terms, status

    assert m.get_metric("CA").label_mean
    assert not m.MetricSpec("E", ("ca",), engagement).label_mean
    assert not m.MetricSpec("M", ("ca",), m.get_metric("CA").terms, aggregate=_median).label_mean
    assert not m.get_metric("SA").label_mean and not m.get_metric("LD").label_mean


def test_register_metric_and_undo():
    spec = m.MetricSpec("GAIN", ("e_ref", "e_gen"), _gain_terms, better=HIGHER_IS_BETTER)
    before = (m.METRIC_SPECS, m.METRICS, dict(m.METRIC_DIMENSIONS))
    undo = m.register_metric(spec)
    try:
        assert m.METRICS == ("SA", "EGM", "CA", "LD", "GAIN") and m.get_metric("GAIN") is spec
        assert m.METRIC_DIMENSIONS["GAIN"] == ("e_ref", "e_gen") and "GAIN" in m.judged_metrics()
        assert m.registry_position("GAIN") == 4 and m.registry_position("nope") == 5
        with pytest.raises(ValueError, match="metric 'GAIN' is already registered"):
            m.register_metric(spec)
    finally:
        undo()
    assert (m.METRIC_SPECS, m.METRICS, dict(m.METRIC_DIMENSIONS)) == before
    undo()  # a second undo changes nothing
    assert m.METRICS == ("SA", "EGM", "CA", "LD")
    with pytest.raises(TypeError, match="needs a MetricSpec, got str"):
        m.register_metric("GAIN")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError), m.registered(spec):  # removed also when the block raises
        assert "GAIN" in m.METRIC_SPECS
        raise RuntimeError
    assert "GAIN" not in m.METRIC_SPECS and "GAIN" not in m.registry_token()


# ------------------------------------------------------------------------------ the one rank convention

def _table(rows):
    return pd.DataFrame(rows, columns=["task", "scorer", "metric", "model", "value"])


def test_rank_by_direction_hand_worked():
    table = _table([
        ("t", "j", "CA", "a", 0.5), ("t", "j", "CA", "b", 0.25), ("t", "j", "CA", "c", 0.5), ("t", "j", "CA", "d", 1.0),
        ("t", "j", "CA", "e", NAN),   # undefined: no rank
        ("t", "k", "CA", "a", 0.9),   # another judge: a ranking of its own
        ("u", "j", "CA", "a", 0.1),   # another task too
    ])
    # lower is better: b 1; a and c tie at 2 (min: both 2, the next is 4); d 4
    assert rank_by_direction(table).tolist() == [2, 1, 2, 4, pd.NA, 1, 1]
    assert str(rank_by_direction(table).dtype) == "Int64"
    assert rank_by_direction(table, ()).tolist() == [3, 2, 3, 6, pd.NA, 5, 1]  # one ranking over every row
    with m.registered(m.MetricSpec("UP", ("ca",), m.get_metric("CA").terms, better=HIGHER_IS_BETTER)):
        up = table.assign(metric="UP")
        assert rank_by_direction(up).tolist() == [2, 4, 2, 1, pd.NA, 1, 1]  # higher is better: d first
    with pytest.raises(ValueError, match="unknown metric 'UP'"):
        rank_by_direction(up)


def test_rankings_and_ranking_shift_read_the_direction():
    table = _table([("all", "j", "SA", "a", 0.2), ("all", "j", "SA", "b", -0.1), ("all", "j", "SA", "c", 0.2)])
    assert rankings(table).set_index("model")["rank"].to_dict() == {"a": 2, "b": 1, "c": 2}
    with m.registered(m.MetricSpec("UP", ("e_ref", "e_gen"), _gain_terms, better=HIGHER_IS_BETTER)):
        before = table.assign(metric="UP")
        after = before.assign(value=[0.2, 0.3, 0.1])
        moves = ranking_shift(before, after).set_index("model")
        # before: a, c tie at 1 (highest), b 3; after: b 1, a 2, c 3
        assert moves["rank_before"].to_dict() == {"a": 1.0, "b": 3.0, "c": 1.0}
        assert moves["rank_after"].to_dict() == {"a": 2.0, "b": 1.0, "c": 3.0}
        assert moves["moved"].to_dict() == {"a": -1.0, "b": 2.0, "c": -2.0}


def test_fragility_of_a_higher_is_better_metric_mirrors_its_lower_is_better_twin():
    # ENGAGE = 1 - CA per item, higher is better: the same ranking as CA and the same flips reorder each pair
    def engage(x: m.TermInputs) -> m.Terms:
        terms, status = m.conflict_avoidance_terms(x.ratings["ca"])
        return 1.0 - terms, status

    items = ["i1", "i2", "i3", "i4"]
    labels = {"a": [0, 0, 1, 0], "b": [1, 0, 1, 0], "c": [1, 1, 1, 0]}  # CA 1/4, 2/4, 3/4
    outputs = pd.DataFrame({"item_id": items * 3, "model": [k for k in labels for _ in items], "task": "t",
                            "reference": "r", "generation": "g"})
    ratings = _ratings([(i, model, "j", "ca", float(v)) for model, values in labels.items()
                        for i, v in zip(items, values, strict=True)])
    features = TextFeatures(np.ones(12), np.ones(12), np.zeros((12, 3)), np.zeros((12, 3)), "test")
    with m.registered(m.MetricSpec("ENGAGE", ("ca",), engage, better=HIGHER_IS_BETTER, value_range=(0.0, 1.0))):
        plan = plan_metrics(outputs, ratings, features=features, include_ld=False)
        pairs = fragility(plan, metrics=["CA", "ENGAGE"]).pairs.set_index(["metric", "rank"])
    columns = ["better", "worse", "flips_needed", "flips_better", "flips_worse"]
    assert pairs.loc["CA", columns].values.tolist() == [["a", "b", 2, 0, 2], ["b", "c", 2, 0, 2]]
    assert pairs.loc["ENGAGE", columns].values.tolist() == pairs.loc["CA", columns].values.tolist()
    assert pairs.loc["ENGAGE", "value_better"].tolist() == [0.75, 0.5]
