"""Another reading of the open cases costs what differs (issue 25 item 2, Overview's first visit):
:meth:`empathy.evaluate.MetricPlan.reading` and :meth:`empathy.review.Recompute.reading`.

The Overview shows EGM under both readings of a + b = 0 (and LD under either standardisation): the second plan
shares the first one's layout, judge signatures, row order, Table 6 grid and untouched slices. Guarded by equality
with a plan built from scratch under the same options (every slice field by field, the layout, the reports, the
per-item terms and the patched values, on randomised data) and by counted calls (a reading builds no layout, reads
no judge signature, and builds only the slices of the metrics that read a changed option; the terms of a plan are
computed once for its live recompute and its bootstrap).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from test_live_recompute import KEYS, _step
from test_review import _synthetic

from empathy import evaluate
from empathy import metrics as m
from empathy.bootstrap import LiveIntervals
from empathy.codes import unique_keys
from empathy.evaluate import LiveMetrics, MetricSlice, plan_metrics
from empathy.review import Recompute

READINGS = [m.MetricOptions(ld_standardization=ld, egm_both_zero=egm)
            for ld, egm in itertools.product(m.LD_STANDARDIZATIONS, m.EGM_BOTH_ZERO)]


def _data(seed: int, by_task: bool):
    outputs, ratings, features = _synthetic(seed=seed, n_models=5, n_items=24)
    # zero sentence counts on both sides for some outputs: EGM's a + b = 0 with a zero denominator too
    rng = np.random.default_rng(seed)
    zero = rng.random(len(outputs)) < 0.2
    features = evaluate.TextFeatures(np.where(zero, 0.0, features.sentences_ref),
                                     np.where(zero, 0.0, features.sentences_gen), features.densities_ref,
                                     features.densities_gen, features.signature)
    if by_task:
        outputs = outputs.assign(task=np.where(outputs["item_id"] < "i012", "news", "counseling"))
    return outputs, ratings, features


def _assert_same_value(a: object, b: object, where: str) -> None:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and a.shape == b.shape, where
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=where)
    elif isinstance(a, pd.Index):
        pd.testing.assert_index_equal(a, b, exact=True, obj=where)
    elif isinstance(a, tuple) and a and isinstance(a[0], np.ndarray):
        assert len(a) == len(b), where
        for position, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_same_value(x, y, f"{where}[{position}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            _assert_same_value(a[key], b[key], f"{where}[{key}]")
    else:
        assert a == b, where


def _assert_same_slice(a: MetricSlice, b: MetricSlice) -> None:
    where = a.spec.name
    assert a.spec is b.spec, where
    for name in ("rows", "group", "groups", "columns", "fixed"):
        _assert_same_value(getattr(a, name), getattr(b, name), f"{where}.{name}")
    assert a.inputs.options == b.inputs.options, where
    for name in ("ratings", "sentences_ref", "sentences_gen", "densities_ref", "densities_gen"):
        _assert_same_value(getattr(a.inputs, name), getattr(b.inputs, name), f"{where}.inputs.{name}")


def _assert_same_plan(fast: evaluate.MetricPlan, scratch: evaluate.MetricPlan, changes: pd.DataFrame) -> None:
    assert fast.options == scratch.options and fast.by_task == scratch.by_task
    assert [p.spec.name for p in fast.slices] == [p.spec.name for p in scratch.slices]
    for a, b in zip(fast.slices, scratch.slices, strict=True):
        _assert_same_slice(a, b)
    for name in ("items", "models", "tasks", "raters", "dimensions"):
        _assert_same_value(getattr(fast.layout, name), getattr(scratch.layout, name), f"layout.{name}")
    for name in ("output_of", "output_task", "output_model", "keys", "values", "present"):
        _assert_same_value(getattr(fast.layout, name), getattr(scratch.layout, name), f"layout.{name}")
    assert str(fast.evaluate().signature) == str(scratch.evaluate().signature)
    for values in (None, fast.patch(changes)):
        a, b = fast.evaluate(values, seed=3, n_overrides=len(changes)), scratch.evaluate(
            values, seed=3, n_overrides=len(changes))
        pd.testing.assert_frame_equal(a.table, b.table, check_exact=True)
        pd.testing.assert_frame_equal(a.agreement, b.agreement, check_exact=True)
        assert str(a.signature) == str(b.signature)
        pd.testing.assert_frame_equal(fast.item_terms(values), scratch.item_terms(values), check_exact=True)
    for part_fast, part_scratch in zip(fast.slices, scratch.slices, strict=True):
        for x, y in zip(fast.own_terms(part_fast), part_scratch.terms(scratch.values), strict=True):
            np.testing.assert_array_equal(x, y)
    located, expected = fast.locate(changes), scratch.locate(changes)
    for x, y in zip(located, expected, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize(("seed", "by_task", "include_ld"), [(0, False, True), (1, True, True), (2, True, False),
                                                             (3, False, False)])
def test_a_reading_equals_the_plan_built_from_scratch(seed: int, by_task: bool, include_ld: bool) -> None:
    outputs, ratings, features = _data(seed, by_task)
    rng = np.random.default_rng(seed)
    changes = pd.DataFrame(columns=[*KEYS, "value"])
    for _ in range(8):
        changes = _step(changes, ratings, rng)
    for start, target in itertools.product(READINGS, READINGS):
        plan = plan_metrics(outputs, ratings, features=features, by_task=by_task, include_ld=include_ld,
                            ld_standardization=start.ld_standardization, egm_both_zero=start.egm_both_zero)
        plan.own_terms(plan.slices[0])  # a term computed before the reading is shared, not reused wrongly
        scratch = plan_metrics(outputs, ratings, features=features, by_task=by_task, include_ld=include_ld,
                               ld_standardization=target.ld_standardization, egm_both_zero=target.egm_both_zero)
        fast = plan.reading(target)
        assert fast.layout is plan.layout  # shared, not rebuilt
        _assert_same_plan(fast, scratch, changes)
        # the reading leaves the plan it came from as it was
        _assert_same_plan(plan, plan_metrics(outputs, ratings, features=features, by_task=by_task,
                                             include_ld=include_ld, ld_standardization=start.ld_standardization,
                                             egm_both_zero=start.egm_both_zero), changes)


def test_the_readings_differ_where_they_should() -> None:
    # not a vacuous equality: on these data the EGM values of the two readings differ, and LD's
    outputs, ratings, features = _data(0, False)
    plan = plan_metrics(outputs, ratings, features=features)
    zero = plan.evaluate().table
    exclude = plan.reading(m.MetricOptions(egm_both_zero="exclude")).evaluate().table
    reference = plan.reading(m.MetricOptions(ld_standardization="reference")).evaluate().table
    egm, ld = zero["metric"] == "EGM", zero["metric"] == "LD"
    assert not np.allclose(zero.loc[egm, "value"], exclude.loc[egm, "value"], equal_nan=True)
    assert not np.allclose(zero.loc[ld, "value"], reference.loc[ld, "value"], equal_nan=True)
    pd.testing.assert_frame_equal(zero[~egm], exclude[~egm])
    pd.testing.assert_frame_equal(zero[~ld], reference[~ld])


def _counting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, counts: dict[str, int]) -> None:
    original = getattr(owner, name)
    counts[name] = 0

    def counted(*args: object, **kwargs: object) -> object:
        counts[name] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)


def test_a_reading_builds_no_layout_and_only_the_slices_that_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    outputs, ratings, features = _data(4, True)
    plan = plan_metrics(outputs, ratings, features=features, by_task=True)
    counts: dict[str, int] = {}
    for name in ("_layout", "judge_signatures", "_judged_slice", "_text_slice", "_skeleton", "_agreement_plan"):
        _counting(monkeypatch, evaluate, name, counts)
    plan.reading(m.MetricOptions(egm_both_zero="exclude"))
    assert counts == {"_layout": 0, "judge_signatures": 0, "_judged_slice": 1, "_text_slice": 0, "_skeleton": 0,
                      "_agreement_plan": 0}  # EGM's slice alone
    plan.reading(m.MetricOptions(ld_standardization="reference"))
    assert counts["_text_slice"] == 1 and counts["_judged_slice"] == 1 and counts["_layout"] == 0
    assert plan.reading(plan.options) is plan
    plan_metrics(outputs, ratings, features=features, by_task=True, egm_both_zero="exclude")  # the counter counts
    assert counts["_layout"] == 1 and counts["judge_signatures"] == 1


def test_each_metric_s_terms_are_computed_once_per_plan_and_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    outputs, ratings, features = _data(5, False)
    computed: list[str] = []
    original = MetricSlice.terms

    def counted(self: MetricSlice, values: np.ndarray) -> object:
        computed.append(self.spec.name)
        return original(self, values)

    monkeypatch.setattr(MetricSlice, "terms", counted)
    plan = plan_metrics(outputs, ratings, features=features)
    computed.clear()  # LD's fixed summary at planning time does not go through the terms
    LiveMetrics(plan)
    LiveIntervals(plan, metrics=m.judged_metrics(), n_resamples=20, seed=0)  # the bootstrap reads the same terms
    assert sorted(computed) == sorted(m.judged_metrics())
    computed.clear()
    exclude = plan.reading(m.MetricOptions(egm_both_zero="exclude"))
    LiveMetrics(exclude)
    assert computed == ["EGM"]  # SA's and CA's terms are the default reading's


def test_own_terms_are_read_only() -> None:
    outputs, ratings, features = _data(6, False)
    plan = plan_metrics(outputs, ratings, features=features)
    terms, status = plan.own_terms(plan.slices[0])
    with pytest.raises(ValueError, match="read-only"):
        terms[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        status[0] = 0


@pytest.mark.parametrize("seed", [7, 8])
def test_an_engine_s_reading_follows_decisions_as_one_built_from_scratch(seed: int) -> None:
    outputs, ratings, features = _data(seed, seed % 2 == 0)
    by_task = seed % 2 == 0
    base = Recompute(outputs, ratings, features, by_task=by_task)
    reading = base.reading(egm_both_zero="exclude", ld_standardization="reference")
    scratch = Recompute(outputs, ratings, features, by_task=by_task, egm_both_zero="exclude",
                        ld_standardization="reference")
    assert reading.settings == scratch.settings and reading.plan.layout is base.plan.layout
    rng = np.random.default_rng(seed)
    mine, theirs = pd.DataFrame(columns=[*KEYS, "value"]), pd.DataFrame(columns=[*KEYS, "value"])
    for step in range(25):
        mine, theirs = _step(mine, ratings, rng), _step(theirs, ratings, rng)
        base.report(theirs)  # the default engine's own overrides never reach the reading's
        a, b = reading.report(mine), scratch.report(mine)
        pd.testing.assert_frame_equal(a.table, b.table, check_exact=True, obj=f"step {step}")
        pd.testing.assert_frame_equal(a.agreement, b.agreement, check_exact=True, obj=f"step {step}")
        assert str(a.signature) == str(b.signature)


@pytest.mark.parametrize("seed", range(6))
def test_the_layout_s_linear_unique_equals_np_unique(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_possible = int(rng.integers(1, 5000))
    keys = rng.integers(0, n_possible, int(rng.integers(0, 3 * n_possible))).astype(np.int64)
    expected = np.unique(keys, return_inverse=True)
    for possible in (n_possible, 10 * len(keys) + 2_000_000):  # marked, and sorted (too many possible keys)
        found = unique_keys(keys, possible)
        for x, y in zip(found, expected, strict=True):
            np.testing.assert_array_equal(x, y)
            assert x.dtype == np.int64


@pytest.mark.parametrize("dtype", [object, "string"])
def test_first_seen_equals_pd_unique_and_its_codes(dtype: object) -> None:
    rng = np.random.default_rng(0)
    names = np.array(["j2", "j0", "human", "j1"], dtype=object)[rng.integers(0, 4, 500)]
    for column in (pd.Series(names, dtype=dtype), pd.Series([*names[:50], None, *names[50:]], dtype=dtype)):
        codes, distinct = evaluate._first_seen(column)
        expected = pd.Index(pd.unique(column))
        pd.testing.assert_index_equal(distinct, expected)
        np.testing.assert_array_equal(codes, evaluate._codes(expected, column))



def test_a_reading_s_rebuilt_slices_share_their_rows_groups_and_text_features() -> None:
    # a slice built again for another reading (EGM's, LD's) holds no array of its own but its terms' options:
    # the same objects as the plan's, and the values of a plan built from scratch (checked above)
    outputs, ratings, features = _data(9, True)
    plan = plan_metrics(outputs, ratings, features=features, by_task=True)
    other = plan.reading(m.MetricOptions(egm_both_zero="exclude", ld_standardization="reference"))
    scratch = plan_metrics(outputs, ratings, features=features, by_task=True, egm_both_zero="exclude",
                           ld_standardization="reference")
    for part, mine, built in zip(plan.slices, other.slices, scratch.slices, strict=True):
        assert mine.rows is part.rows and mine.group is part.group and mine.groups is part.groups
        for name in ("sentences_ref", "sentences_gen", "densities_ref", "densities_gen"):
            assert getattr(mine.inputs, name) is getattr(part.inputs, name), (part.spec.name, name)
        assert mine.inputs.options == other.options
        _assert_same_slice(mine, built)
    ld = [p.spec.name for p in plan.slices].index("LD")
    assert not np.array_equal(plan.slices[ld].fixed[0], other.slices[ld].fixed[0], equal_nan=True)


def test_the_live_metrics_of_two_readings_share_their_group_members() -> None:
    outputs, ratings, features = _data(10, False)
    plan = plan_metrics(outputs, ratings, features=features)
    default, exclude = LiveMetrics(plan), LiveMetrics(plan.reading(m.MetricOptions(egm_both_zero="exclude")))
    patchable = [(a, b) for a, b in zip(default._parts, exclude._parts, strict=True) if a.patchable]
    assert {a.part.spec.name for a, _ in patchable} == set(m.judged_metrics())
    for a, b in patchable:
        assert a.members is b.members  # one list of positions per slice, whatever the reading
        expected = evaluate._group_positions(a.part.group, len(a.part.groups))
        assert len(a.members) == len(expected)
        for found, wanted in zip(a.members, expected, strict=True):
            np.testing.assert_array_equal(found, wanted)
            assert not found.flags.writeable
        assert a.terms is not b.terms and a.status is not b.status  # each patches its own
    # each still follows its own overrides: the reading's reports equal a plan built from scratch
    scratch = LiveMetrics(plan_metrics(outputs, ratings, features=features, egm_both_zero="exclude"))
    rng = np.random.default_rng(10)
    changes = pd.DataFrame(columns=[*KEYS, "value"])
    for step in range(12):
        changes = _step(changes, ratings, rng)
        default.report(_step(changes, ratings, rng))
        a, b = exclude.report(changes), scratch.report(changes)
        pd.testing.assert_frame_equal(a.table, b.table, check_exact=True, obj=f"step {step}")
