"""A decision recomputes only what it touches (issue 25 item 2, library side): :class:`empathy.evaluate.LiveMetrics`
behind :class:`empathy.review.Recompute`.

Guarded by counted calls (the terms function runs on the changed units only, ``mean_by_group`` is not re-run over
every row, LD is never recomputed) and by equality with the full recompute after every step of random decision
sequences: bit for bit with the plan evaluated on the patched values, to 1e-12 with ``compute_metrics`` on the
effective ratings (the reference path). The figures are in docs/benchmarks.md (``bench/bench_recompute.py``).
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest
from test_review import _assert_same, _synthetic

from empathy import metrics as m
from empathy.evaluate import LiveMetrics, compute_metrics, plan_metrics
from empathy.labels.ledger import apply_overrides
from empathy.review import Recompute

KEYS = ["item_id", "model", "rater", "dimension"]


def _decision(ratings: pd.DataFrame, rng: np.random.Generator, dimension: str | None = None) -> dict[str, object]:
    """A human value for one existing rating (NaN ones included: a judge call that failed)."""
    pool = ratings if dimension is None else ratings[ratings["dimension"] == dimension]
    row = pool.iloc[int(rng.integers(len(pool)))]
    values = {"ca": [0.0, 1.0], "u_ref": [0.0, 1.0, 3.0], "u_gen": [0.0, 2.0, 5.0]}
    value = (float(rng.choice(values[row["dimension"]])) if row["dimension"] in values
             else float(rng.choice([0.0, round(float(rng.random()), 3), 1.0])))  # e_ref = 0: an undefined SA term
    return {**{k: row[k] for k in KEYS}, "value": value}


def _step(overrides: pd.DataFrame, ratings: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """One move of an annotation session: decide, re-decide, withdraw, or a label rule that changes many at once."""
    move = rng.choice(["add", "add", "add", "change", "withdraw", "many", "none"], p=[.3, .2, .1, .15, .15, .05, .05])
    if move == "many":
        return pd.DataFrame([_decision(ratings, rng) for _ in range(int(rng.integers(50, 400)))])
    if move == "none" or (move in ("change", "withdraw") and overrides.empty):
        return pd.DataFrame(columns=[*KEYS, "value"]) if move == "none" else overrides
    if move == "withdraw":
        return overrides.drop(index=overrides.index[int(rng.integers(len(overrides)))]).reset_index(drop=True)
    if move == "change":
        changed = overrides.copy()
        position = int(rng.integers(len(changed)))
        changed.loc[position, "value"] = _decision(ratings[ratings["dimension"] == changed.loc[position, "dimension"]],
                                                   rng)["value"]
        return changed
    return pd.concat([overrides, pd.DataFrame([_decision(ratings, rng)])], ignore_index=True)


@pytest.mark.parametrize(("seed", "by_task", "egm_both_zero"), [(0, False, "zero"), (1, True, "exclude"),
                                                                (2, False, "exclude")])
def test_random_decision_sequences_equal_the_full_recompute(seed: int, by_task: bool, egm_both_zero: str) -> None:
    outputs, ratings, features = _synthetic(seed=seed)
    if by_task:
        outputs = outputs.assign(task=np.where(outputs["item_id"] < "i015", "news", "counseling"))
    settings = {"by_task": by_task, "egm_both_zero": egm_both_zero}
    engine = Recompute(outputs, ratings, features, **settings)
    plan = plan_metrics(outputs, ratings, features=features, **settings)
    rng = np.random.default_rng(seed)
    overrides = pd.DataFrame(columns=[*KEYS, "value"])
    for step in range(60):
        overrides = _step(overrides, ratings, rng)
        fast = engine.report(overrides)
        exact = plan.evaluate(plan.patch(overrides), n_overrides=len(overrides))
        pd.testing.assert_frame_equal(fast.table, exact.table, check_exact=True, obj=f"step {step}")
        pd.testing.assert_frame_equal(fast.agreement, exact.agreement, check_exact=True, obj=f"step {step}")
        if step % 10 == 9:  # the reference path (a new plan of the effective ratings), slower: every tenth step
            _assert_same(fast, compute_metrics(outputs, apply_overrides(ratings, overrides), features=features,
                                               n_overrides=len(overrides), **settings))


def _flip(ratings: pd.DataFrame, dimension: str, position: int) -> pd.DataFrame:
    """One decision that changes a rating: the opposite of a judge's (present) binary label, or 1 - a score."""
    row = ratings[(ratings["dimension"] == dimension) & ratings["value"].notna()].iloc[position]
    return pd.DataFrame([{**{k: row[k] for k in KEYS}, "value": 1.0 - row["value"]}])


def _counting(calls: list[int]):
    def terms(inputs: m.TermInputs) -> m.Terms:
        calls.append(len(inputs.ratings["ca"]))
        return m.conflict_avoidance_terms(inputs.ratings["ca"])
    return terms


def test_a_decision_recomputes_only_the_touched_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    outputs, ratings, features = _synthetic(seed=7)
    calls: list[int] = []
    ld_calls: list[int] = []
    grouped: list[int] = []
    original_ld, original_mean = m.linguistic_distancing_terms, m.mean_by_group
    monkeypatch.setattr(m, "linguistic_distancing_terms", lambda *a, **k: ld_calls.append(1) or original_ld(*a, **k))
    monkeypatch.setattr(m, "mean_by_group", lambda group, *a: grouped.append(len(group)) or original_mean(group, *a))
    with m.registered(m.MetricSpec("CA2", ("ca",), _counting(calls), scorer=None)):
        engine = Recompute(outputs, ratings, features)
        n_units = len(engine.plan.values)
        assert calls and max(calls) > 1 and ld_calls  # the plan evaluated every unit once (LD once per group)
        calls.clear(), ld_calls.clear(), grouped.clear()
        first = _flip(ratings, "ca", 17)
        fast = engine.report(first)
        assert calls == [1]  # one unit's CA term, not the n_units of a full evaluation
        assert ld_calls == [] and grouped == []  # LD untouched; no group sum over every row
        second = pd.concat([first, _flip(ratings, "e_gen", 5)], ignore_index=True)
        engine.report(second)
        assert calls == [1]  # a decision on e_gen does not run the CA terms
        engine.report(second)
        assert calls == [1] and grouped == []  # the same overrides again: nothing recomputed
        engine.report(None)  # both withdrawn: one CA unit again (and SA's)
        assert calls == [1, 1] and n_units > 100
        _assert_same(fast, compute_metrics(outputs, apply_overrides(ratings, first), features=features,
                                           n_overrides=1))


def test_reports_already_made_keep_their_values() -> None:
    outputs, ratings, features = _synthetic(seed=8)
    live = LiveMetrics(plan_metrics(outputs, ratings, features=features))
    rng = np.random.default_rng(8)
    first = pd.DataFrame([_decision(ratings, rng, "ca")])
    before = live.report(first).table.copy()
    report = live.report(first)
    live.report(pd.DataFrame([_decision(ratings, rng, "ca") for _ in range(5)]))
    pd.testing.assert_frame_equal(report.table, before, check_exact=True)


def test_sessions_sharing_one_engine_each_get_their_own_overrides() -> None:
    """The app shares one engine per data set between sessions (threads), each under its own overrides."""
    outputs, ratings, features = _synthetic(seed=9)
    engine = Recompute(outputs, ratings, features)
    plan = engine.plan
    rng = np.random.default_rng(9)
    sets = [pd.DataFrame([_decision(ratings, rng) for _ in range(k)]) for k in (1, 3, 20, 60)]
    expected = [plan.evaluate(plan.patch(s), n_overrides=len(s)).table for s in sets]
    failures: list[str] = []

    def session(index: int) -> None:
        for _ in range(15):
            try:
                pd.testing.assert_frame_equal(engine.report(sets[index]).table, expected[index], check_exact=True)
            except AssertionError as exc:
                failures.append(str(exc))

    threads = [threading.Thread(target=session, args=(i,)) for i in range(len(sets))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_a_long_ledger_is_located_as_a_short_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above a few hundred changes the names are looked up in pandas indexes instead of dictionaries: the same
    cells, values (later rows winning) and refusals."""
    import empathy.evaluate as evaluate

    outputs, ratings, features = _synthetic(seed=10)
    plan = plan_metrics(outputs, ratings, features=features)
    rng = np.random.default_rng(10)
    many = pd.DataFrame([_decision(ratings, rng) for _ in range(900)])  # repeats included: later rows win
    unknown = pd.concat([many, many.iloc[[3]].assign(rater="nobody")], ignore_index=True)
    assert len(many) > evaluate._DICT_LOOKUPS
    fast = [plan.locate(many), plan.locate(unknown)]
    monkeypatch.setattr(evaluate, "_DICT_LOOKUPS", 10**9)
    cells, written = plan.locate(many)
    np.testing.assert_array_equal(fast[0][0], cells)
    np.testing.assert_array_equal(fast[0][1], written)
    assert fast[1] is None and plan.locate(unknown) is None
    assert len(cells) < len(many)  # some cells decided twice


def test_effective_ratings_prepared_once_equal_apply_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    from empathy.review import EffectiveRatings

    outputs, ratings, features = _synthetic(seed=11)
    ratings = ratings.astype({k: "string" for k in KEYS})  # as load_ratings gives them; the store's are objects
    effective = EffectiveRatings(ratings)
    sizes: list[int] = []
    original = pd.MultiIndex.from_frame
    monkeypatch.setattr(pd.MultiIndex, "from_frame", lambda frame, *a, **k: sizes.append(len(frame)) or
                        original(frame, *a, **k))
    factorize = pd.factorize  # the key index codes the ratings' keys once, at construction
    monkeypatch.setattr(pd, "factorize", lambda values, *a, **k: sizes.append(len(values)) or
                        factorize(values, *a, **k))
    rng = np.random.default_rng(11)
    gap = pd.DataFrame([{"item_id": "i000", "model": "m0", "rater": "j2", "dimension": "ca", "value": 1.0}])
    cases = [None, pd.DataFrame(columns=[*KEYS, "value"]), gap,
             *(pd.DataFrame([_decision(ratings, rng) for _ in range(k)]).astype({k: object for k in KEYS})
               for k in (1, 2, 40, 400))]
    for overrides in cases:
        sizes.clear()
        got = effective(overrides)
        fast = overrides is not None and len(overrides) and overrides is not gap
        assert not fast or max(sizes, default=0) < len(ratings)  # never the ratings' keys again
        pd.testing.assert_frame_equal(got, apply_overrides(ratings, overrides), check_exact=True)
    with pytest.raises(ValueError, match="overrides lack the column 'value'"):
        effective(gap.drop(columns="value"))
    twice = pd.concat([ratings, ratings.iloc[:1]], ignore_index=True)  # a key held twice: apply_overrides' path
    pd.testing.assert_frame_equal(EffectiveRatings(twice)(cases[-1]), apply_overrides(twice, cases[-1]))


@pytest.mark.parametrize("seed", range(4))
def test_key_index_rows_equal_a_multiindex_lookup(seed: int) -> None:
    """The int64-coded key index finds the same rows as a MultiIndex of the same keys: absent keys, values
    unknown to a column, missing key values, object against string dtypes; a key held twice is not unique."""
    from empathy.review import _KeyIndex

    rng = np.random.default_rng(seed)
    n = 300
    frame = pd.DataFrame({"item_id": [f"i{k}" for k in rng.integers(0, 30, n)],
                          "model": [f"m{k}" for k in rng.integers(0, 5, n)],
                          "rater": [f"r{k}" for k in rng.integers(0, 4, n)],
                          "dimension": rng.choice(["ca", "e_gen", "u_ref"], n)})
    frame.loc[rng.random(n) < 0.03, "model"] = None
    frame = frame.drop_duplicates(ignore_index=True).astype("string" if seed % 2 else object)
    index = _KeyIndex(frame, list(frame.columns))
    assert index.unique
    probe = pd.DataFrame({"item_id": [f"i{k}" for k in rng.integers(0, 33, 80)],
                          "model": [f"m{k}" for k in rng.integers(0, 6, 80)],
                          "rater": [f"r{k}" for k in rng.integers(0, 4, 80)],
                          "dimension": rng.choice(["ca", "e_gen", "u_ref", "x"], 80)})
    probe = pd.concat([probe, frame.iloc[rng.integers(0, len(frame), 40)].astype(object)], ignore_index=True)
    expected = pd.MultiIndex.from_frame(frame).get_indexer(pd.MultiIndex.from_frame(probe))
    np.testing.assert_array_equal(index.rows_of(probe), expected)
    assert (expected >= 0).sum() >= 40
    assert not _KeyIndex(pd.concat([frame, frame.iloc[:1]]), list(frame.columns)).unique
