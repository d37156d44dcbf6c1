"""The ledger brought up to date from what the store changed (empathy.labels.ledger.updated_ledger with
OverrideStore.changed_decisions): equal to reading every decision again, after any sequence of writes."""

from __future__ import annotations

import gc
import weakref
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from empathy.labels import ledger as ledger_module
from empathy.labels.backends import open_store
from empathy.labels.decisions import decision_count
from empathy.labels.ledger import Ledger, ledger_status, open_ledger, updated_ledger
from empathy.labels.records import Change, output_hashes, text_hash
from empathy.vocabulary import LABEL_RULES

NAME = "outputs.csv"
ANNOTATORS = ("ann", "bea", "cal")


def _outputs(n: int = 8, models: tuple[str, ...] = ("m",)) -> pd.DataFrame:
    return pd.DataFrame({"item_id": [f"i{k // len(models)}" for k in range(n)],
                         "model": [models[k % len(models)] for k in range(n)], "task": "",
                         "reference": [f"reference {k}" for k in range(n)],
                         "generation": [f"generation {k}" for k in range(n)]})


def _same(updated: Ledger, fresh: Ledger) -> None:
    """Every frame equal (values, dtypes, row order), the digest and the counts too."""
    for name in ("decisions", "applied", "unresolved"):
        pd.testing.assert_frame_equal(getattr(updated, name), getattr(fresh, name), obj=name)
    for name in ("fresh", "stale", "orphaned"):
        pd.testing.assert_frame_equal(getattr(updated.status, name), getattr(fresh.status, name), obj=name)
    assert updated.digest == fresh.digest
    assert updated.counts == fresh.counts
    assert updated.decided == fresh.decided
    assert updated.decision_counts == fresh.decision_counts
    assert updated.decision_total == fresh.decision_total == decision_count(fresh.decisions)


def _change(rng: np.random.Generator, outputs: pd.DataFrame, item: int, *, fresh_only: bool = False) -> list[Change]:
    row = outputs.iloc[item]
    # a few decisions are bound to another text (stale) or to an output the loaded data lack (orphaned)
    stale, gone = rng.random() <= 0.15, rng.random() <= 0.1
    bound = text_hash(row["reference"], row["generation"]) if fresh_only or not stale else "0123456789abcdef"
    name = row["item_id"] if fresh_only or not gone else "gone"
    value = float(rng.integers(0, 2))
    raters = ["j1", "j2"] if rng.random() < 0.5 else ["j1"]
    return [Change(name, row["model"], rater, "ca", value, "", bound, 1.0 - value, "judge") for rater in raters]


@pytest.mark.parametrize("fresh_only", [False, True], ids=["some-stale-or-orphaned", "every-decision-fresh"])
@pytest.mark.parametrize("rule", LABEL_RULES)
def test_updated_ledger_equals_reading_it_again_after_every_write(store_location, rule, fresh_only, monkeypatch):
    """Every frame, the digest and the decision counts (both carried from the ledger before, not computed again)
    after random decisions, undos and adjudications; the spliced text columns' pieces joined every few writes
    (a low threshold here, so that the join happens many times). With every decision fresh, the fresh decisions
    are the decisions (one frame, spliced once per update)."""
    monkeypatch.setattr(ledger_module, "_MAX_CHUNKS", 4)
    spliced = []
    splice = ledger_module._spliced
    monkeypatch.setattr(ledger_module, "_spliced",
                        lambda frame, *a, **k: spliced.append(frame) or splice(frame, *a, **k))
    store = open_store(store_location)
    outputs = _outputs(12, ("m", "n", "o"))  # an item's outputs side by side: a new one goes among the others'
    hashes = output_hashes(outputs)
    rng = np.random.default_rng(len(rule))
    held = open_ledger(store, NAME, outputs, rule, hashes=hashes)
    version = store.version()
    _ = held.digest, held.decision_counts, held.decision_total  # computed: the next ones are carried over
    for step in range(70):
        kind = rng.random()
        annotator = str(rng.choice(ANNOTATORS))
        if kind < 0.6:
            store.set_overrides(NAME, _change(rng, outputs, int(rng.integers(0, len(outputs))), fresh_only=fresh_only),
                                annotator=annotator)
        elif kind < 0.8:
            store.undo_last(annotator, dataset_id=NAME)
        elif kind < 0.9:
            store.adjudicate(NAME, _change(rng, outputs, int(rng.integers(0, len(outputs))), fresh_only=fresh_only),
                             annotator="adj")
        else:  # another data set's write changes the version and nothing of this ledger
            store.set_overrides("other.csv", _change(rng, outputs, 0), annotator=annotator)
        if step % 3 == 2:
            continue  # several writes between two reads, as when other annotators decide meanwhile
        now = store.version()
        keys, rows = store.changed_decisions(NAME, version)
        before = held
        spliced.clear()
        held, version = updated_ledger(held, keys, rows, outputs, hashes=hashes), now
        if fresh_only and len(rows) and len(before.decisions):
            assert held.status.fresh is held.decisions
            assert not any(frame is before.status.fresh for frame in spliced[1:])  # spliced as the decisions only
        if len(keys) and len(held.applied):
            assert "decision_counts" in held.__dict__  # carried over, not computed from the frames
        if len(keys) and len(held.decisions):
            assert "_all_decision_rows" in held.__dict__  # the total too
            assert "_digest_rows" in held.__dict__  # and the digest's sorted rows
        _same(held, open_ledger(store, NAME, outputs, rule, hashes=hashes))
        for frame in (held.decisions, held.status.fresh, held.applied):
            assert all(frame[c].array._pa_array.num_chunks <= 4 * 4 for c in frame.columns
                       if hasattr(frame[c].array, "_pa_array")), "the pieces are joined"
    # everything withdrawn: the empty ledger
    for annotator in (*ANNOTATORS, "adj"):
        while len(store.undo_last(annotator, dataset_id=NAME)):
            pass
    keys, rows = store.changed_decisions(NAME, version)
    held = updated_ledger(held, keys, rows, outputs, hashes=hashes)
    fresh = open_ledger(store, NAME, outputs, rule, hashes=hashes)
    assert fresh.decisions.empty
    _same(held, fresh)


def test_a_digest_whose_rows_lack_a_changed_row_is_computed_again(tmp_path):
    """The digest's sorted rows are carried to the updated ledger when every changed key's row before is among them
    (the rows are kept without their keys); rows that lack one (here taken out by hand) are dropped and the digest
    is computed from the applied rows: never carried wrong."""
    store = open_store(str(tmp_path / "store.sqlite"))
    outputs = _outputs(4)
    rng = np.random.default_rng(3)
    for item in range(4):
        store.set_overrides(NAME, _change(rng, outputs, item, fresh_only=True), annotator="ann")
    for lacking in (False, True):
        version = store.version()
        held = open_ledger(store, NAME, outputs)
        assert held.digest  # its sorted rows computed, to be carried
        if lacking:  # item i2's rows, whose key the write below changes, taken out of the carried rows
            carried = held.__dict__["_digest_rows"].ordered
            carried[:] = [text for text in carried if not text.startswith("i2\x1f")]
        changes = [replace(change, value=1.0 - change.value) for change in _change(rng, outputs, 2, fresh_only=True)]
        store.set_overrides(NAME, changes, annotator="bea")
        keys, rows = store.changed_decisions(NAME, version)
        updated = updated_ledger(held, keys, rows, outputs)
        assert ("_digest_rows" in updated.__dict__) is not lacking
        assert updated.digest == open_ledger(store, NAME, outputs).digest


def test_a_splice_joins_one_text_column_at_a_time_and_keeps_the_rows():
    """Text columns past the pieces' limit are joined one per splice (the one of most pieces), not all at once (a copy
    of every column while the frame before is held); a column of more than four times the limit is joined at once.
    The rows are those of concatenating and taking, whatever was joined."""
    limit = ledger_module._MAX_CHUNKS
    rows = 4 * limit
    texts = [f"t{k:04d}" for k in range(rows)]

    def pieced(count: int) -> pd.Series:  # one text column of ``count`` pieces
        bounds = np.linspace(0, rows, count + 1).astype(int)
        return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array(
            [pa.array(texts[a:b], type=pa.large_string()) for a, b in zip(bounds[:-1], bounds[1:], strict=True)])))

    frame = pd.DataFrame({"a": pieced(limit + 1), "b": pieced(limit + 3), "c": pieced(limit + 2),
                          "n": np.arange(rows, dtype=float)})

    def splice(frame: pd.DataFrame, at: int) -> pd.DataFrame:
        new = pd.DataFrame({"a": ["new"], "b": ["new"], "c": ["new"], "n": [-1.0]}).astype(frame.dtypes.to_dict())
        order = np.insert(np.arange(len(frame)), at, len(frame))
        out = ledger_module._in_order(frame, new, order)
        pd.testing.assert_frame_equal(out, pd.concat([frame, new], ignore_index=True).take(order)
                                      .reset_index(drop=True))
        return out

    def pieces(frame: pd.DataFrame) -> dict[str, int]:
        return {c: frame[c].array._pa_array.num_chunks for c in "abc"}

    assert min(pieces(frame).values()) > limit
    joined = []
    for step in range(3):
        frame = splice(frame, 7 + step)
        now = pieces(frame)
        assert sum(count == 1 for count in now.values()) == 1, now  # one column joined by this splice
        joined.append(next(c for c, count in now.items() if count == 1))
    assert joined == ["b", "c", "a"]  # most pieces first
    assert max(pieces(frame).values()) <= 5  # each joined once, a few splices' pieces since
    frame = pd.DataFrame({"a": pieced(4 * limit + 1), "b": pieced(4 * limit + 2), "c": pieced(2),
                          "n": np.arange(rows, dtype=float)})
    assert pieces(splice(frame, 3)) == {"a": 1, "b": 1, "c": 4}  # beyond four times the limit: joined at once


def test_changed_decisions_names_removed_keys_and_reads_by_key(store_location):
    """A confirmation keeps the decision's ``seq`` but changes its text hash: read by key, it is in the change."""
    store = open_store(store_location)
    outputs = _outputs(2)
    first = Change("i0", "m", "j1", "ca", 1.0, "", "0123456789abcdef", 0.0, "judge")  # stale: another text
    store.set_overrides(NAME, [first], annotator="ann")
    store.set_overrides(NAME, [Change("i1", "m", "j1", "ca", 1.0, "", "", 0.0, "judge")], annotator="ann")
    version = store.version()
    keys, rows = store.changed_decisions(NAME, version)
    assert keys.empty and rows.empty
    assert store.changed_since(NAME, version) is False
    store.confirm(NAME, store.decisions(NAME).iloc[[0]], output_hashes(outputs), annotator="ann")
    store.set_overrides(NAME, [Change("i1", "m", "j2", "ca", 0.0, "", "", 1.0, "judge")], annotator="bea")
    store.undo_last("bea", dataset_id=NAME)  # a first decision undone: its row is gone
    keys, rows = store.changed_decisions(NAME, version)
    assert sorted(map(tuple, keys[["item_id", "rater", "annotator"]].to_numpy().tolist())) == [
        ("i0", "j1", "ann"), ("i1", "j2", "bea")]
    assert store.changed_since(NAME, version) is True  # the one look-up agrees with the keys found
    assert store.changed_since("another data set", 0) is False
    assert rows[["item_id", "rater", "annotator"]].to_numpy().tolist() == [["i0", "j1", "ann"]]
    assert rows["text_hash"].tolist() == [output_hashes(outputs)[("i0", "m")]]
    assert list(rows.columns) == list(store.decisions(NAME).columns)
    assert rows.dtypes.to_dict() == store.decisions(NAME).dtypes.to_dict()


def test_an_annotators_own_decisions_patched_per_update_equal_selecting_them_again(store_location):
    """empathy_app.overrides' per-annotator sets (own decisions; audit decisions with their mark), built once and
    patched with each update's changed rows, equal the selection from every decision after random decisions,
    audit decisions, undos and adjudications."""
    pytest.importorskip("streamlit")
    from empathy.audit import draw_audit
    from empathy.labels.audits import audit_mark, save_design
    from empathy_app.overrides import EFFECT_FIELDS, _by_output, _own_sets, _patch_by_output, _patch_own

    store = open_store(store_location)
    outputs = _outputs()
    rng = np.random.default_rng(25)
    ratings = pd.DataFrame({"item_id": outputs["item_id"], "model": "m", "rater": "j1", "dimension": "ca",
                            "value": [float(k % 2) for k in range(len(outputs))], "rater_kind": "llm"})
    designs = [draw_audit(outputs, ratings, judge="j1", dimension="ca", per_model=len(outputs), seed=seed)
               for seed in (1, 2)]
    for design in designs:
        save_design(store, NAME, design)
    held = {name: _own_sets(store.decisions(NAME), name) for name in (*ANNOTATORS, "adj")}
    hashes = output_hashes(outputs)
    indexes = {rater: _by_output(open_ledger(store, NAME, outputs).status.fresh, rater, "ca") for rater in ("j1", "j2")}

    def shown(index: dict) -> dict:  # each output's rows in the index's order, as text (NaN equal to NaN)
        return {pair: [tuple(map(repr, rows[key])) for key in sorted(rows)] for pair, rows in index.items()}
    version = store.version()
    seen_audit = seen_undo = 0
    for step in range(90):
        kind = rng.random()
        annotator = str(rng.choice(ANNOTATORS))
        item = int(rng.integers(0, len(outputs)))
        if kind < 0.4:
            store.set_overrides(NAME, _change(rng, outputs, item), annotator=annotator)
        elif kind < 0.6:
            mark = audit_mark(designs[int(rng.integers(0, 2))], f"i{item}", "m")
            changes = [replace(change, item_id=f"i{item}") for change in _change(rng, outputs, item)]  # not "gone"
            seen_audit += store.set_overrides(NAME, changes, annotator=annotator, audit=mark) > 0
        elif kind < 0.8:
            seen_undo += len(store.undo_last(annotator, dataset_id=NAME)) > 0
        else:
            store.adjudicate(NAME, _change(rng, outputs, item), annotator="adj")
        if step % 3 == 2:
            continue
        keys, rows = store.changed_decisions(NAME, version)
        version = store.version()
        everyone = store.decisions(NAME)
        for name, sets in held.items():
            _patch_own(sets, name, keys, rows)
            assert sets == _own_sets(everyone, name), (step, name)
        fresh_rows = open_ledger(store, NAME, outputs).status.fresh
        for rater, index in indexes.items():
            _patch_by_output(index, rater, "ca", keys, ledger_status(rows, outputs, hashes).fresh)
            assert shown(index) == shown(_by_output(fresh_rows, rater, "ca")), (step, rater)
            # in the fresh decisions' own order (by output, then annotator and role), the fields the live metric
            # reads
            here = fresh_rows[(fresh_rows["rater"] == rater)][list(EFFECT_FIELDS)]
            assert [row for _, rows in sorted(shown(index).items()) for row in rows] == [
                tuple(map(repr, row)) for row in here.itertuples(index=False)
                if (str(row.item_id), str(row.model)) in index] or not index
    assert seen_audit and seen_undo and any(held[name][1] for name in ANNOTATORS)


@pytest.mark.parametrize("dtype", [pd.StringDtype("pyarrow"), "str", pd.StringDtype("python"), object])
def test_the_texts_of_runs_read_from_arrow_equal_the_pandas_slices(dtype):
    """ledger._span_texts (runs of an Arrow-backed text column read from its Arrow array) against _texts of each
    pandas slice, for a column of several pieces, with and without a missing value in a run, and other dtypes."""
    values = pd.concat([pd.Series([f"v{k}" for k in range(n, n + 7)], dtype=dtype) for n in (0, 7, 14)],
                       ignore_index=True)
    with_missing = values.copy()
    with_missing.iloc[9] = None
    spans = [(0, 3), (5, 11), (13, 21)]  # runs across the pieces' bounds
    for column in (values, with_missing):
        expected = [text for low, high in spans for text in ledger_module._texts(column.iloc[low:high])]
        assert repr(ledger_module._span_texts(column, spans)) == repr(expected)  # a missing value as _texts has it


def test_the_rows_of_changed_items_found_by_bisection_equal_comparing_the_column_whole():
    """empathy.labels.ledger._sorted_rows_of against the whole column's isin, on random sorted ids with repeats;
    a column that is not text is left to the whole comparison (None)."""
    from empathy.labels.ledger import _sorted_rows_of

    rng = np.random.default_rng(7)
    for _ in range(200):
        values = pd.Series(sorted(f"i{k}" for k in rng.integers(0, 30, int(rng.integers(1, 60)))))
        items = sorted({f"i{k}" for k in rng.integers(0, 35, int(rng.integers(1, 5)))})
        expected = np.flatnonzero(values.isin(items).to_numpy())
        assert _sorted_rows_of(values, items).tolist() == expected.tolist()
    assert _sorted_rows_of(pd.Series([1, 2, 3]), ["1"]) is None
    assert _sorted_rows_of(pd.Series([], dtype=object), ["1"]) is None


def test_the_rows_of_many_items_found_in_one_arrow_pass_equal_comparing_the_column_whole(monkeypatch):
    """Many items in an Arrow column (a Relabel window's): _sorted_rows_of finds them in one vectorised pass, not by
    a bisection per item (ledger._bound is never called), and the rows are those of the whole comparison: items
    present, absent, adjacent, first and last, a column of one chunk or of many (a spliced frame's)."""
    import pyarrow as pa

    from empathy.labels import ledger as ledger_module

    def no_bisection(*args, **kwargs):
        raise AssertionError("a bisection per item where one pass costs less")

    monkeypatch.setattr(ledger_module, "_bound", no_bisection)
    rng = np.random.default_rng(11)
    for trial in range(120):
        texts = sorted(f"i{k:03d}" for k in rng.integers(0, 60, int(rng.integers(1, 400))))
        if trial % 2:  # several chunks, as a splice leaves a text column
            cuts = sorted(set(rng.integers(0, len(texts), 4).tolist()) | {0, len(texts)})
            pieces = [texts[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if b > a]
            array = pa.chunked_array([pa.array(piece, type=pa.string()) for piece in pieces], type=pa.string())
            values = pd.Series(pd.arrays.ArrowStringArray(array))
        else:
            values = pd.Series(texts, dtype="string[pyarrow]")
        items = sorted({f"i{k:03d}" for k in rng.integers(0, 64, int(rng.integers(2, 40)))} | {texts[0], texts[-1]})
        expected = np.flatnonzero(values.isin(items).to_numpy(dtype=bool))
        assert ledger_module._sorted_rows_of(values, items).tolist() == expected.tolist()
    values = pd.Series(["a", "b"], dtype="string[pyarrow]")
    assert ledger_module._sorted_rows_of(values, ["c", "d"]).tolist() == []


@pytest.mark.parametrize("rule", LABEL_RULES)
@pytest.mark.parametrize("seed", range(12))
def test_a_few_decisions_reduced_in_python_equal_the_label_rule(seed, rule):
    """ledger._reduced_in_python (a key's rows reduced in Python, each label rule) against
    empathy.labels.rules.effective_overrides on random rows: ties in ``seq`` broken by ``updated_at`` and then by
    the rows' order, several annotators and adjudications of a rating, ties of votes (unresolved), keys out of
    order; the same frames, the unresolved list's text included."""
    from empathy.labels.ledger import _reduced_in_python
    from empathy.labels.rules import effective_overrides

    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(int(rng.integers(1, 40))):
        rows.append({"item_id": f"i{rng.integers(0, 4)}", "model": str(rng.choice(["m", "n"])),
                     "rater": str(rng.choice(["j1", "j2"])), "dimension": "ca", "value": float(rng.integers(0, 2)),
                     "annotator": str(rng.choice([*ANNOTATORS, "adj"])), "role": str(rng.choice(
                         ["annotator", "annotator", "annotator", "adjudicator"] if seed % 2 else ["annotator"])),
                     "updated_at": f"2026-12-0{rng.integers(1, 3)}", "reason": "", "text_hash": "h",
                     "seq": int(rng.integers(1, 6))})
    frame = pd.DataFrame(rows).astype({c: "str" for c in ("item_id", "model", "rater", "dimension", "annotator",
                                                          "role", "updated_at", "reason", "text_hash")})
    fast = _reduced_in_python(frame, rule)
    slow = effective_overrides(frame, rule)
    pd.testing.assert_frame_equal(fast.effective, slow.effective)
    pd.testing.assert_frame_equal(fast.unresolved, slow.unresolved)
    assert fast.rule == slow.rule == rule
    assert _reduced_in_python(frame.drop(columns="seq"), rule) is None  # not the store's columns: the library's


def test_the_python_reduction_lists_a_tie_as_the_library_does():
    """A hand-worked tie: under ``majority`` two annotators against two leave the key unresolved (listed in commit
    order), a third annotator's vote settles it on the last row of the winning value; an adjudication wins under
    every rule; ``adjudicated`` wants all annotators to agree."""
    from empathy.labels.ledger import _reduced_in_python
    from empathy.labels.rules import effective_overrides

    def decision(item, annotator, value, seq, role="annotator"):
        return {"item_id": item, "model": "m", "rater": "j", "dimension": "ca", "value": value,
                "annotator": annotator, "role": role, "updated_at": "t", "reason": "", "text_hash": "h", "seq": seq}

    frame = pd.DataFrame([decision("a", "bea", 1.0, 4), decision("a", "ann", 0.0, 2), decision("a", "cal", 1.0, 3),
                          decision("a", "dan", 0.0, 1),
                          decision("b", "ann", 1.0, 5), decision("b", "bea", 0.0, 6), decision("b", "cal", 0.0, 7),
                          decision("c", "ann", 1.0, 8), decision("c", "adj", 0.0, 9, "adjudicator")]).astype(
        {c: "str" for c in ("item_id", "model", "rater", "dimension", "annotator", "role", "updated_at", "reason",
                            "text_hash")})
    expected = {"latest": ({"a": ("bea", 1.0), "b": ("cal", 0.0), "c": ("adj", 0.0)}, []),
                "majority": ({"b": ("cal", 0.0), "c": ("adj", 0.0)}, [("a", "dan=0, ann=0, cal=1, bea=1")]),
                "adjudicated": ({"c": ("adj", 0.0)}, [("a", "dan=0, ann=0, cal=1, bea=1"),
                                                      ("b", "ann=1, bea=0, cal=0")])}
    for rule, (kept, listed) in expected.items():
        fast = _reduced_in_python(frame, rule)
        assert {i: (a, v) for i, a, v in zip(fast.effective["item_id"], fast.effective["annotator"],
                                             fast.effective["value"], strict=True)} == kept, rule
        assert list(zip(fast.unresolved["item_id"], fast.unresolved["decisions"], strict=True)) == listed, rule
        pd.testing.assert_frame_equal(fast.effective, effective_overrides(frame, rule).effective)
        pd.testing.assert_frame_equal(fast.unresolved, effective_overrides(frame, rule).unresolved)


@pytest.mark.parametrize("seed", range(4))
def test_decided_meanwhile_by_bisection_equals_comparing_the_column_whole(seed):
    """keyqueue.decided_meanwhile on a ledger's decisions (sorted by item: the item's rows found by bisection,
    ledger.rows_of_items) selects the same rows, in the same order and with the same index, as the whole comparison,
    for items present and absent."""
    pytest.importorskip("streamlit")
    from empathy.labels.ledger import rows_of_items
    from empathy_app.keyqueue import decided_meanwhile

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    frame = pd.DataFrame({"item_id": [f"i{k}" for k in rng.integers(0, 30, n)], "model": rng.choice(["m", "n"], n),
                          "dimension": "ca", "annotator": rng.choice(list(ANNOTATORS), n),
                          "seq": rng.integers(1, 50, n)}).astype({"item_id": "str", "model": "str",
                                                                 "annotator": "str"})
    frame = frame.sort_values(["item_id", "model"], kind="stable").reset_index(drop=True)
    for item in [*(f"i{k}" for k in range(32)), "z"]:
        expected = np.flatnonzero((frame["item_id"] == item).to_numpy())
        assert rows_of_items(frame, [item]).tolist() == expected.tolist()
        for model in ("m", "n"):
            fast = decided_meanwhile(frame, item, model, "ca", annotator="ann", shown_at=20, sorted_by_item=True)
            slow = decided_meanwhile(frame, item, model, "ca", annotator="ann", shown_at=20)
            pd.testing.assert_frame_equal(fast, slow)


@pytest.mark.parametrize("rule", LABEL_RULES)
def test_the_live_metric_locates_only_the_changed_keys_of_an_updated_ledger(tmp_path, rule, monkeypatch):
    """empathy.evaluate.LiveMetrics.report of each updated ledger's applied overrides (spliced from the frame of the
    call before: empathy.labels.ledger.applied_delta) locates the changed rating keys only (counted: the plan's
    locate never sees more rows than the write changed) and writes the same cells and values as locating the
    whole frame; the report equals the plan evaluated on the patched values. Writes on outputs the plan lacks
    (orphaned) and several writes between two reports included."""
    from empathy.evaluate import LiveMetrics, plan_metrics

    outputs = _outputs(12)
    ratings = pd.DataFrame([{"item_id": f"i{k}", "model": "m", "rater": judge, "dimension": "ca",
                             "value": float((k + len(judge)) % 2), "rater_kind": "llm"}
                            for k in range(12) for judge in ("j1", "j2")])
    plan = plan_metrics(outputs, ratings, include_ld=False)
    live = LiveMetrics(plan)
    store = open_store(str(tmp_path / "o.sqlite"))
    hashes = output_hashes(outputs)
    rng = np.random.default_rng(len(rule) + 1)
    held = open_ledger(store, NAME, outputs, rule, hashes=hashes)
    version = store.version()
    located: list[int] = []
    original = type(plan).locate
    monkeypatch.setattr(type(plan), "locate", lambda self, changes: located.append(
        0 if changes is None else len(changes)) or original(self, changes))
    spliced = 0
    for step in range(40):
        annotator = str(rng.choice(ANNOTATORS))
        if rng.random() < 0.75:
            store.set_overrides(NAME, _change(rng, outputs, int(rng.integers(0, len(outputs)))),
                                annotator=annotator)
        else:
            store.undo_last(annotator, dataset_id=NAME)
        if step % 4 == 3:
            continue
        keys, rows = store.changed_decisions(NAME, version)
        # the ledger before is not kept (the server drops it at each key): the frame it was spliced from is known
        # by its serial only, and the live metric must still locate the changed keys alone
        previous, before = ledger_module.frame_serial(held.applied), len(held.applied)
        frame_before = weakref.ref(held.applied)
        held, version = updated_ledger(held, keys, rows, outputs, hashes=hashes), store.version()
        if frame_before() is not None:  # held in a reference cycle: collected only when asked (slow in a big heap)
            gc.collect()
        assert frame_before() is None or frame_before() is held.applied
        located.clear()
        report = live.report(held.applied)
        delta = ledger_module.applied_delta(held.applied)
        whole = original(plan, held.applied)
        if delta is not None and delta.previous == previous and before and len(held.applied):
            spliced += 1
            assert located and max(located) <= len(keys), (located, len(keys))  # the changed keys only
        assert report is not None and whole is not None
        if len(held.applied):  # what it writes: the same cells and values as locating the whole frame
            np.testing.assert_array_equal(live._located[1], whole[0])
            np.testing.assert_array_equal(live._located[2], whole[1])
        expected = plan.evaluate(plan.patch(held.applied))
        pd.testing.assert_frame_equal(report.table, expected.table)
    assert spliced > 5


@pytest.mark.parametrize("dtype", ["string[pyarrow]", "str", object])
def test_the_bisections_read_values_as_a_sorted_list_does(dtype):
    # the bisections read an Arrow text column straight from its array, other columns by iat: each place found is
    # Python's bisect's on the same values, for present and absent values, at both ends, in several Arrow chunks
    import bisect

    rng = np.random.default_rng(7)
    words = sorted(f"i{k:03d}" for k in rng.integers(0, 400, 300))
    column = pd.Series(words, dtype=dtype)
    if dtype == "string[pyarrow]":  # as a spliced frame holds it: several chunks
        column = pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([words[:100], words[100:250], words[250:]])))
        assert column.array._pa_array.num_chunks == 3
    frame = pd.DataFrame({"item_id": column})
    for value in ["", "i000", words[0], words[57], words[-1], "i2", "i999", "z", *words[::31]]:
        assert ledger_module._bound(column, value, after=False) == bisect.bisect_left(words, value)
        assert ledger_module._bound(column, value, after=True) == bisect.bisect_right(words, value)
        assert ledger_module._first_position(frame, "item_id", value) == bisect.bisect_right(words, value)
    with_missing = pd.Series([*words[:5], None], dtype=dtype)
    with pytest.raises(TypeError):  # a missing value is not text: the callers' signal to compare the column whole
        ledger_module._bound(with_missing, "i999", after=True)


def test_a_frame_serial_is_the_frames_own_while_it_lives_and_never_another_frames():
    first = pd.DataFrame({"a": [1]})
    serial = ledger_module.frame_serial(first)
    assert ledger_module.frame_serial(first) == serial  # stable while alive
    seen = {serial}
    ids = set()
    for _ in range(50):  # frames freed and made again (a frame is freed at its last reference, so its id is
        # reused): each a serial never given before; no gc.collect per frame (a second each in the suite's heap)
        frame = pd.DataFrame({"a": [2]})
        ids.add(id(frame))
        number = ledger_module.frame_serial(frame)
        assert number not in seen
        seen.add(number)
        del frame
    assert len(ids) < 50  # ids were reused, so the serials did not come from the ids
    assert ledger_module.frame_serial(first) == serial
    del first
    gc.collect()
    assert all(ref() is not None for ref, _ in ledger_module._SERIALS.values())  # the freed frames' entries gone
