"""Bootstraps of as many items share one kept count matrix (:func:`empathy.bootstrap._cluster_sums`): the
Overview's second EGM reading reads the default reading's resamples instead of drawing and holding its own. The
intervals, before and after random decisions, are those of a bootstrap that drew its own (randomised data); counted
draws show the sharing, and that it lasts only while a bootstrap holds the matrix."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pandas as pd
import pytest
from test_live_intervals import RESAMPLES, SEED, _assert_same, _decisions, _plan, _whole

from empathy import bootstrap
from empathy import metrics as m
from empathy.bootstrap import LiveIntervals
from empathy.metrics import judged_metrics


def _live(plan) -> LiveIntervals:
    return LiveIntervals(plan, metrics=judged_metrics(), n_resamples=RESAMPLES, seed=SEED)


def _equal(a: bootstrap.TableIntervals, b: bootstrap.TableIntervals) -> None:
    pd.testing.assert_frame_equal(a.values, b.values)
    pd.testing.assert_frame_equal(a.agreement, b.agreement)


@pytest.mark.parametrize(("seed", "by_task"), [(0, True), (1, True), (2, False)])
def test_a_bootstrap_on_shared_counts_equals_one_that_drew_its_own(seed, by_task, monkeypatch):
    plan, ratings = _plan(seed, by_task=by_task)
    default = _live(plan)
    exclude = plan.reading(m.MetricOptions(egm_both_zero="exclude"))
    shared = _live(exclude)
    assert all(a[2] is b[2] for a, b in zip(default._sums, shared._sums, strict=True))
    monkeypatch.setattr(bootstrap, "_KEPT_COUNTS", weakref.WeakValueDictionary())
    own = _live(exclude)  # nothing to share: draws its own
    assert all(a[2] is not b[2] for a, b in zip(default._sums, own._sums, strict=True))
    _equal(shared.base, own.base)
    _assert_same(shared.base, _whole(exclude, None))
    applied: list[pd.DataFrame] = []
    for decision in _decisions(ratings, 300 + seed, 5):
        applied.append(decision)
        changes = pd.concat(applied, ignore_index=True)
        _equal(shared.table(changes), own.table(changes))
        _assert_same(shared.table(changes), _whole(exclude, changes))
        _equal(default.table(changes), own_default(plan, changes, monkeypatch))


def own_default(plan, changes: pd.DataFrame, monkeypatch) -> bootstrap.TableIntervals:
    """The default reading's table from a bootstrap that drew its own resamples."""
    monkeypatch.setattr(bootstrap, "_KEPT_COUNTS", weakref.WeakValueDictionary())
    return _live(plan).table(changes)


def test_the_second_bootstrap_draws_nothing_and_the_matrix_is_read_only(monkeypatch):
    plan, _ = _plan(5)
    monkeypatch.setattr(bootstrap, "_KEPT_COUNTS", weakref.WeakValueDictionary())
    draws: list[int] = []
    original = bootstrap.resample_counts

    def counted(*args, **kwargs):
        draws.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(bootstrap, "resample_counts", counted)
    first = _live(plan)
    # two tasks of 18 items each: their draws were the same matrix already (one seed), now held once
    assert len(first._sums) == 2 and len(draws) == 1 and first._sums[0][2] is first._sums[1][2]
    second = _live(plan.reading(m.MetricOptions(egm_both_zero="exclude")))
    assert len(draws) == 1  # the second reading draws nothing
    matrix = second._sums[0][2]
    assert matrix is first._sums[0][2] and not matrix.flags.writeable
    with pytest.raises(ValueError):
        matrix[0, 0] = 1
    del first, second, matrix
    gc.collect()
    _live(plan)  # no bootstrap holds the matrices any more: drawn again, not kept alive by the sharing
    assert len(draws) == 2


def test_tasks_of_as_many_items_drew_the_same_counts_before_sharing():
    # what makes the sharing exact: the draws depend on the number of items, the resamples and the seed alone
    a = np.concatenate(list(bootstrap.resample_counts(18, RESAMPLES, SEED)))
    b = np.concatenate(list(bootstrap.resample_counts(18, RESAMPLES, SEED)))
    assert np.array_equal(a, b) and not np.array_equal(a[:, :17], np.concatenate(
        list(bootstrap.resample_counts(17, RESAMPLES, SEED))))


def test_each_row_s_task_and_column_are_held_narrow_and_equal():
    plan, _ = _plan(3)
    live = _live(plan)
    assert live._row_task.dtype == np.int8 and live._row_column.dtype == np.int16
    for index, table in enumerate(live._layout.tasks):
        mine = np.flatnonzero(live._row_task == index)
        assert len(mine) and live._row_column[mine].max() < table.array.shape[1]
    # the intervals themselves: test_live_intervals.py compares them with the whole recompute after decisions
