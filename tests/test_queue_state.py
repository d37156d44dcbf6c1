"""The team's queue state in the store (issue 24 item 4): skips, assignments, progress; and the blind queue order
(item 6). Store tests run on both backends (``store_location``)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from empathy.audit import draw_audit
from empathy.labels.backends import open_store
from empathy.labels.ledger import open_ledger
from empathy.labels.queue_state import (
    annotator_progress,
    assign,
    assignments,
    clear_assignments,
    plan_assignments,
    skip_output,
    skipped_outputs,
    unskip_output,
)
from empathy.labels.records import Change
from empathy.labels.transfer import migrate_store
from empathy.review import annotator_queue, blind_queue, blind_seed, relabel_queue

DS = "ds"


def _keys(n: int) -> list[tuple[str, str]]:
    return [(f"i{index:03d}", "m") for index in range(n)]


# ------------------------------------------------------------------------------------------ skips

def test_skips_are_durable_shared_and_can_be_taken_back(store_location):
    store = open_store(store_location)
    assert skip_output(store, DS, "i1", "m", "ca", annotator="alice", reason="unclear") == 1
    assert skip_output(store, DS, "i2", "m", "ca", annotator="alice") == 2
    assert skip_output(store, DS, "i1", "m", "ca", annotator="bob") == 3
    assert skip_output(store, DS, "i1", "m", "sa", annotator="alice") == 4
    reopened = open_store(store_location)  # another session, another process: the same skips
    mine = skipped_outputs(reopened, DS, annotator="alice", dimension="ca")
    assert mine[["item_id", "reason", "seq"]].values.tolist() == [["i1", "unclear", 1], ["i2", "", 2]]
    assert len(skipped_outputs(reopened, DS)) == 4
    # skipping again moves it to the end; taking it back removes only that skip
    assert skip_output(reopened, DS, "i1", "m", "ca", annotator="alice") == 5
    assert skipped_outputs(reopened, DS, annotator="alice", dimension="ca")["item_id"].tolist() == ["i2", "i1"]
    assert unskip_output(reopened, DS, "i1", "m", "ca", annotator="alice") is True
    assert unskip_output(reopened, DS, "i1", "m", "ca", annotator="alice") is False
    assert skipped_outputs(store, DS, annotator="alice", dimension="ca")["item_id"].tolist() == ["i2"]
    assert skipped_outputs(store, DS, annotator="bob")["item_id"].tolist() == ["i1"]
    assert store.audit(DS).empty  # a skip is no decision


@pytest.mark.parametrize(("field", "kwargs", "error"), [
    ("annotator", {"annotator": " "}, ValueError),
    ("item_id", {"item_id": ""}, ValueError),
    ("reason", {"reason": 3}, TypeError),
])
def test_a_bad_skip_is_refused(tmp_path, field, kwargs, error):
    store = open_store(tmp_path / "o.sqlite")
    arguments = {"item_id": "i1", "annotator": "alice", **kwargs}
    with pytest.raises(error, match=field):
        skip_output(store, DS, arguments.pop("item_id"), "m", "ca", **arguments)
    assert skipped_outputs(store, DS).empty


# ------------------------------------------------------------------------------------------ the design

@pytest.mark.parametrize(("n", "people", "k", "overlap", "n_overlap", "loads"), [
    # hand-worked: ceil(overlap * N) outputs to k annotators, the rest to one; load = places / annotators, +-1
    (10, 2, 2, 0.2, 2, (6, 6)),            # 2 x 2 + 8 = 12 places
    (10, 3, 2, 0.2, 2, (4, 4, 4)),         # 12 places over 3
    (10, 3, 2, 0.25, 3, (4, 4, 5)),        # ceil(2.5) = 3: 6 + 7 = 13 places
    (7, 3, 3, 1.0, 7, (7, 7, 7)),          # everyone labels everything
    (9, 4, 2, 0.0, 0, (2, 2, 2, 3)),       # no overlap: a split
    (5, 2, 1, 0.0, 0, (2, 3)),
])
def test_the_plan_gives_each_output_its_copies_and_balances_the_load(n, people, k, overlap, n_overlap, loads):
    names = [f"p{index}" for index in range(people)]
    plan = plan_assignments(_keys(n), names, k=k, overlap=overlap, seed=11)
    assert plan.n_outputs == n and plan.n_overlap == n_overlap
    assert tuple(sorted(plan.loads().reindex(names, fill_value=0))) == loads
    per_output = plan.rows.groupby(["item_id", "model"])["annotator"].agg(["size", "nunique"])
    assert (per_output["size"] == per_output["nunique"]).all()  # k distinct annotators, never one twice
    assert sorted(per_output["size"].tolist()) == sorted([k] * n_overlap + [1] * (n - n_overlap))
    overlapping = plan.rows[plan.rows["copies"] > 1].groupby("annotator").size().reindex(names, fill_value=0)
    assert overlapping.max() - overlapping.min() <= 1
    # each annotator's order: 0..n-1, the overlap set first
    for _, mine in plan.rows.groupby("annotator"):
        assert mine["position"].tolist() == list(range(len(mine)))
        copies = mine["copies"].tolist()
        assert copies == sorted(copies, reverse=True)


def test_the_plan_is_deterministic_and_ignores_the_input_order():
    keys = _keys(40)
    first = plan_assignments(keys, ["ann", "bob", "cy"], k=2, overlap=0.3, seed=5)
    again = plan_assignments(list(reversed(keys)), ["cy", "ann", "bob", "ann"], k=2, overlap=0.3, seed=5)
    pd.testing.assert_frame_equal(first.rows, again.rows)
    assert first.digest == again.digest and len(first.digest) == 12
    other = plan_assignments(keys, ["ann", "bob", "cy"], k=2, overlap=0.3, seed=6)
    assert other.digest != first.digest
    frame = pd.DataFrame({"item_id": [k[0] for k in keys], "model": "m", "extra": 1})
    assert plan_assignments(frame, ["ann", "bob", "cy"], k=2, overlap=0.3, seed=5).digest == first.digest


def test_the_pairs_of_annotators_are_spread():
    plan = plan_assignments(_keys(60), ["a", "b", "c", "d"], k=2, overlap=1.0, seed=1)
    assert plan.pair_counts()["shared"].tolist() == [10] * 6
    # the measured bound of the docstring, over its whole grid
    for people, k, m, seed in itertools.product(range(3, 9), (2, 3), (10, 37, 60, 100, 500), (3, 4)):
        if k > people:
            continue
        plan = plan_assignments(_keys(m), [f"p{index}" for index in range(people)], k=k, overlap=1.0, seed=seed)
        shared = plan.pair_counts()["shared"]
        pairs = people * (people - 1) // 2
        if m * k * (k - 1) >= people * (people - 1) * 2:
            assert len(shared) == pairs, (people, k, m)
        if len(shared) == pairs:
            assert shared.max() - shared.min() <= 3, (people, k, m, seed)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"annotators": []}, "no annotators"),
    ({"annotators": "alice"}, "one string"),
    ({"k": 4}, "k .annotators per overlapping output"),
    ({"k": 0}, "k .annotators per overlapping output"),
    ({"overlap": 1.5}, "overlap"),
    ({"overlap": 0.2, "k": 1}, "needs k >= 2"),
    ({"seed": -1}, "seed"),
    ({"outputs": []}, "no outputs"),
    ({"outputs": [("i1",)]}, "not an .item_id, model. pair"),
    ({"annotators": ["alice", "ALICE", "bob"]}, "annotators 'ALICE' and 'alice' differ only in case"),
    ({"annotators": ["alice", "\uff41lice", "bob"]}, "differ only in case, width"),
])
def test_a_bad_design_is_refused(kwargs, message):
    arguments = {"outputs": _keys(5), "annotators": ["a", "b", "c"], "k": 2, "overlap": 0.2, "seed": 0, **kwargs}
    with pytest.raises((ValueError, TypeError), match=message):
        plan_assignments(arguments.pop("outputs"), arguments.pop("annotators"), **arguments)


def test_one_person_written_twice_is_refused_by_store_assign(tmp_path, capsys):
    from empathy.cli import main

    outputs = tmp_path / "outputs.csv"
    pd.DataFrame({"item_id": ["i1", "i2"], "model": ["m", "m"], "generation": ["a", "b"],
                  "reference": ["r", "s"]}).to_csv(outputs, index=False)
    store = tmp_path / "s.sqlite"
    assert main(["store", "assign", str(outputs), "--store", str(store), "--annotators", "alice,ALICE"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'ALICE' and 'alice'" in err


# ------------------------------------------------------------------------------------------ stored designs

def test_assignments_are_stored_replaced_and_cleared(store_location):
    store = open_store(store_location)
    plan = assign(store, DS, _keys(10), ["alice", "bob"], k=2, overlap=0.2, seed=3, by="lead")
    stored = assignments(store, DS)
    assert len(stored) == 12 and set(stored["design"]) == {plan.digest} and set(stored["assigned_by"]) == {"lead"}
    assert set(stored["k"]) == {2} and set(stored["overlap"]) == {0.2} and set(stored["seed"]) == {3}
    expected = plan.rows.sort_values(["annotator", "position"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(stored[["annotator", "item_id", "model", "position", "copies"]], expected)
    assert assignments(store, DS, annotator="alice")["position"].tolist() == list(range(6))
    with pytest.raises(ValueError, match=f"already has the assignment design {plan.digest}"):
        assign(store, DS, _keys(10), ["alice", "bob", "cy"], seed=4)
    assert len(assignments(store, DS)) == 12  # nothing written
    again = assign(store, DS, _keys(10), ["alice", "bob", "cy"], seed=4, replace=True)
    assert set(assignments(store, DS)["design"]) == {again.digest}
    assert clear_assignments(store, DS) == len(again.rows)
    assert assignments(store, DS).empty


def test_progress_per_annotator_hand_worked(store_location):
    store = open_store(store_location)
    plan = assign(store, DS, _keys(6), ["alice", "bob"], k=2, overlap=1 / 3, seed=2)
    alice = assignments(store, DS, annotator="alice")[["item_id", "model"]].values.tolist()
    bob = assignments(store, DS, annotator="bob")[["item_id", "model"]].values.tolist()
    assert plan.n_overlap == 2 and len(alice) == len(bob) == 4
    # alice decides two of hers (one on two judges: one output) and one not given to her; skips one of hers
    store.set_overrides(DS, [Change(*alice[0], "j1", "ca", 1), Change(*alice[0], "j2", "ca", 1)], annotator="alice")
    store.set_override(DS, *alice[1], "j1", "ca", 0, annotator="alice")
    foreign = next(pair for pair in _keys(6) if list(pair) not in alice)
    store.set_override(DS, *foreign, "j1", "ca", 0, annotator="alice")
    skip_output(store, DS, *alice[2], "ca", annotator="alice")
    skip_output(store, DS, *alice[0], "ca", annotator="alice")  # skipped, then decided anyway: decided
    # bob adjudicates (not his own decision), decides on another dimension, skips one
    store.adjudicate(DS, [Change(*bob[0], "j1", "ca", 1)], annotator="bob")
    store.set_override(DS, *bob[1], "j1", "sa", 0.5, annotator="bob")
    skip_output(store, DS, *bob[2], "ca", annotator="bob")
    # carol has neither an assignment nor a decision but skipped an output
    skip_output(store, DS, "i000", "m", "ca", annotator="carol")
    table = annotator_progress(store, DS, dimension="ca")
    assert table.values.tolist() == [["alice", 4, 3, 1, 1], ["bob", 4, 0, 1, 3], ["carol", 0, 0, 1, 0]]
    # the decisions at hand (a page's held ledger: open_ledger's, spliced per key) give the same table, and the
    # store's decisions are then not read again
    held = open_ledger(store, DS, pd.DataFrame(_keys(6), columns=["item_id", "model"]).assign(
        task="", reference="r", generation="g")).decisions
    reads = []
    real_read = store.decisions
    store.decisions = lambda *args, **kwargs: reads.append(args) or real_read(*args, **kwargs)
    pd.testing.assert_frame_equal(annotator_progress(store, DS, dimension="ca", decisions=held), table)
    assert reads == []
    del store.decisions
    every = annotator_progress(store, DS)  # every dimension: bob's sa decision counts
    assert every.set_index("annotator").loc["bob"].tolist() == [4, 1, 1, 2]
    # only the loaded outputs count: without alice's first output
    loaded = pd.DataFrame([pair for pair in _keys(6) if list(pair) != alice[0]], columns=["item_id", "model"])
    assert annotator_progress(store, DS, dimension="ca", outputs=loaded).set_index("annotator").loc[
        "alice"].tolist() == [3, 2, 1, 1]
    assert list(annotator_progress(store, "nothing").columns) == ["annotator", "assigned", "decided", "skipped",
                                                                   "remaining"]


def test_migration_copies_the_queue_state(tmp_path, postgres_url):
    source = open_store(tmp_path / "a.sqlite")
    plan = assign(source, DS, _keys(8), ["alice", "bob"], seed=1)
    skip_output(source, DS, "i001", "m", "ca", annotator="alice", reason="later")
    report = migrate_store(tmp_path / "a.sqlite", postgres_url, translate_names=False)
    assert (report.skips, report.assignments) == (1, len(plan.rows))
    assert "(with 1 skips and 10 assignments)" in report.summary()
    server = open_store(postgres_url)
    pd.testing.assert_frame_equal(assignments(server, DS), assignments(source, DS))
    pd.testing.assert_frame_equal(skipped_outputs(server, DS), skipped_outputs(source, DS))
    assert skip_output(server, DS, "i002", "m", "ca", annotator="alice") == 2  # the skip order goes on


# ------------------------------------------------------------------------------------------ blind order

def _ratings() -> pd.DataFrame:
    rows = []
    for index in range(12):
        for judge, value in (("j1", 1.0), ("j2", float(index % 3 == 0))):
            rows.append({"item_id": f"i{index:02d}", "model": "m", "rater": judge, "dimension": "ca",
                         "value": value, "rater_kind": "llm", "reason": "", "signature": "s"})
    return pd.DataFrame(rows)


def test_the_blind_order_is_seeded_random_and_never_follows_the_judges():
    queue = relabel_queue(_ratings(), "ca")
    assert queue["disagree"].tolist() == [True] * 8 + [False] * 4  # what blind mode must not reveal
    blind = blind_queue(queue, seed=7)
    # the reference: numpy's permutation of the rows sorted by key
    keys = sorted(queue["item_id"])
    expected = [keys[i] for i in np.random.default_rng(7).permutation(len(keys))]
    assert blind["item_id"].tolist() == expected
    assert list(blind.columns) == list(queue.columns)
    # the judges' labels do not move it: the same outputs with other labels (other disagreements) give the
    # same order, and so does the queue in any row order
    other = _ratings().assign(value=1.0)
    assert blind_queue(relabel_queue(other, "ca"), seed=7)["item_id"].tolist() == expected
    assert blind_queue(queue.iloc[::-1], seed=7)["item_id"].tolist() == expected
    assert blind_queue(queue, seed=8)["item_id"].tolist() != expected
    with pytest.raises(ValueError, match="seed"):
        blind_queue(queue, seed=-1)
    with pytest.raises(ValueError, match="model"):
        blind_queue(queue.drop(columns="model"), seed=1)


def test_the_blind_order_can_follow_an_audit_design():
    ratings = _ratings()
    outputs = ratings[["item_id", "model"]].drop_duplicates().assign(reference="r", generation="g", task="t")
    design = draw_audit(outputs, ratings, judge="j1", dimension="ca", per_model=4, seed=3)
    blind = blind_queue(relabel_queue(ratings, "ca"), seed=7, audit=design)
    drawn = [o.item_id for o in design.outputs]
    assert blind["item_id"].tolist()[:4] == drawn
    rest = [key for key in blind_queue(relabel_queue(ratings, "ca"), seed=7)["item_id"] if key not in drawn]
    assert blind["item_id"].tolist()[4:] == rest


def test_blind_seeds_differ_per_annotator_and_stay_put():
    assert blind_seed("ds", "ca", "alice") == blind_seed("ds", "ca", "alice")
    seeds = {blind_seed("ds", "ca", "alice"), blind_seed("ds", "ca", "bob"), blind_seed("ds", "sa", "alice"),
             blind_seed("ds2", "ca", "alice"), blind_seed("d", "sca", "alice")}
    assert len(seeds) == 5 and all(0 <= seed < 2 ** 63 for seed in seeds)


def test_an_annotators_queue_keeps_their_outputs_and_puts_skips_last():
    queue = pd.DataFrame({"item_id": ["a", "b", "c", "d", "e"], "model": "m", "spread": [5, 4, 3, 2, 1]})
    assigned = pd.DataFrame({"item_id": ["e", "b", "c", "a"], "model": "m", "position": [0, 1, 2, 3]})
    skipped = pd.DataFrame({"item_id": ["c", "a"], "model": "m", "seq": [1, 2]})
    assert annotator_queue(queue, assigned=assigned, skipped=skipped)["item_id"].tolist() == ["b", "e", "c", "a"]
    assert annotator_queue(queue, skipped=skipped)["item_id"].tolist() == ["b", "d", "e", "c", "a"]
    assert annotator_queue(queue, assigned=assigned.iloc[:0])["item_id"].tolist() == list("abcde")
