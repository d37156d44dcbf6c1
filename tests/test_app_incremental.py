"""AppTest: what guards the app's speed by design, not by the clock (issue 25).

- Relabel's CA queue is usable before the data set's texts are parsed: the first output is on screen and a key is
  saved while the background parse is held back, and nothing is parsed in the page's own thread (counted calls);
  once the background parse is through, the same output shows its marks.
- When the background parse ends during a run of the queue's fragment that carries a key, that fragment draws the
  marks and the page is not run again as a whole (that could swallow the flash of the key saved at that instant,
  and a whole-page rerun among keys in flight left keys with no output on screen in Chromium): the key is saved and
  its flash shown. The fragment has no timer: while the texts are parsed the page asks the browser's queue to poll
  (``poll_ms`` in the window it sends); the run that finds the parse done sends 0 (the browser stops), and a parse
  that ends while a run builds its window leaves ``poll_ms`` set, so that the next poll marks what it left plain.
- A decision on the key queue reads only the changed decisions (one full read of the ledger, then updates) and
  recomputes only the touched terms of the live metric (counted calls of a metric's terms function).
"""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok, app_texts, open_page  # noqa: E402
from relabel_keys import press, window  # noqa: E402

from empathy import distancing  # noqa: E402
from empathy import metrics as m  # noqa: E402
from empathy_app import compute, decisions, keyqueue, overrides  # noqa: E402
from empathy_app.session_keys import RELABEL_OUTCOMES  # noqa: E402

TIMEOUT = 240
RELABEL = "app_pages/4_Relabel.py"
BACKGROUND = "empathy-background-parse"

pytestmark = pytest.mark.usefixtures("_store", "_cache")  # an override store and an empty text cache of its own


def _data(folder: Path) -> dict:
    """2 models x 3 items, the CA labels of two judges; texts of their own (a word unique to the test), so that no
    other test's analysis of them is held in this process."""
    folder.mkdir(parents=True, exist_ok=True)
    word = uuid.uuid4().hex[:8]
    rows = [{"item_id": item, "model": model, "task": "counseling",
             "reference": f"I feel ignored by my sister ({item}, {word}). She never calls me back.",
             "generation": f"It is understood that communication issues occur ({model}, {word}). Try talking."}
            for model in ("A", "B") for item in ("i1", "i2", "i3")]
    pd.DataFrame(rows).to_csv(folder / "outputs.csv", index=False)
    labels = {"j1": [1, 0, 1, 1, 0, 0], "j2": [1, 1, 0, 0, 0, 1]}
    paths = []
    for judge, values in labels.items():
        ratings = [{"item_id": row["item_id"], "model": row["model"], "rater": judge, "dimension": "ca",
                    "value": value, "rater_kind": "llm", "reason": "", "signature": f"{judge}-sig"}
                   for row, value in zip(rows, values, strict=True)]
        pd.DataFrame(ratings).to_csv(folder / f"ratings_{judge}.csv", index=False)
        paths.append(str(folder / f"ratings_{judge}.csv"))
    return {"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": paths}


def _relabel(source: dict):
    return open_page(RELABEL, source, session={"annotator": "ann"}, timeout=TIMEOUT)


def _parses_of_this_test() -> list[compute.BackgroundParse]:
    """The background parses into this test's cache folder (the held ones are keyed by data set and folder)."""
    folder = str(distancing.default_cache_dir())
    return [parse for key, parse in compute._parses_held().items() if key.endswith(folder)]


def test_the_ca_queue_works_before_the_background_parse(tmp_path):
    release = threading.Event()
    parsers: list[str] = []  # the thread of each distancing parse started
    original_run, original_parser = compute.BackgroundParse._run, distancing._Parser.__init__

    def held_run(self) -> None:
        release.wait(TIMEOUT)
        original_run(self)

    def counted_parser(self, *args, **kwargs) -> None:
        parsers.append(threading.current_thread().name)
        original_parser(self, *args, **kwargs)

    def no_sentences(*args, **kwargs):
        raise AssertionError("the judges' sentences were parsed before the distancing parse reached the texts")

    with pytest.MonkeyPatch.context() as patch:  # undone before the end (not the test's: it holds the cache folder)
        patch.setattr(compute.BackgroundParse, "_run", held_run)
        patch.setattr(distancing._Parser, "__init__", counted_parser)
        patch.setattr("empathy.judges.segment.sentence_spans", no_sentences)
        try:
            at = _relabel(_data(tmp_path / "data"))
            sent = window(at)
            first = sent["items"][0]
            assert sent["dimension"] == "ca" and first["decidable"]
            # the texts as they are, without marks, and the note that the marks come later
            assert "It is understood that communication issues occur" in first["gen"] and "<mark" not in first["gen"]
            assert "Marks appear when the text analysis reaches this output" in first["note"]
            assert any("Text analysis in the background" in text for text in app_texts(at.caption))
            # the live metric (CA: judge labels alone) is there without the texts
            assert sent["live"] is not None and {row["model"] for row in sent["live"]["models"]} == {"A", "B"}
            press(at, 1.0)
            app_ok(at)
            assert [o.kind for o in at.session_state[RELABEL_OUTCOMES]] == ["saved"]
            assert (window(at)["items"][0]["item"], window(at)["items"][0]["model"]) != (first["item"],
                                                                                         first["model"])
            assert parsers == []  # nothing parsed: neither by the page nor by the held background parse
        finally:
            release.set()
        for parse in _parses_of_this_test():
            assert parse.finished.wait(TIMEOUT) and parse.error is None
    at.run()
    app_ok(at)
    entry = window(at)["items"][0]
    assert "<mark" in entry["gen"] and "Marks appear" not in entry["note"]
    assert parsers and set(parsers) == {BACKGROUND}  # the distancing parse ran in the background thread only
    assert not any("Text analysis in the background" in text for text in app_texts(at.caption))


def test_the_background_parse_finds_the_window_s_sentences_the_page_marks(tmp_path):
    """The sentence boundaries of the texts the window is waiting for are found in the background parse's thread
    (memoised): the run that marks them looks nothing up itself, and draws the same marks as a page that finds them
    on its own (the memo forgotten). "Found" is either read from the distancing cache, where the parse stores
    each text's sentence offsets, or parsed: both are recorded."""
    from empathy.judges import segment

    release = threading.Event()
    original_run = compute.BackgroundParse._run
    originals = {name: getattr(segment, name) for name in ("_spans_of", "_stored")}
    threads: list[str] = []  # the thread of each look-up (cache or parse) of texts not in the memo

    def held_run(self) -> None:
        release.wait(TIMEOUT)
        original_run(self)

    def recorded(name: str):
        def call(*args, **kwargs):
            threads.append(threading.current_thread().name)
            return originals[name](*args, **kwargs)
        return call

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compute.BackgroundParse, "_run", held_run)
        for name in originals:
            patch.setattr(segment, name, recorded(name))
        try:
            at = _relabel(_data(tmp_path / "data"))
            assert "<mark" not in window(at)["items"][0]["gen"]
        finally:
            release.set()
        for parse in _parses_of_this_test():
            assert parse.finished.wait(TIMEOUT) and parse.error is None
        assert threads and set(threads) == {BACKGROUND}  # the window's texts, ahead of the page
        threads.clear()
        at.run()
        app_ok(at)
        ahead = window(at)["items"]
        assert all("<mark" in entry["gen"] or "<mark" in entry["ref"] for entry in ahead[:1])
        assert threads == []  # the page looked no sentence up: every boundary it marked on was found ahead
        segment.clear_memo()
        keyqueue._memo.clear()
        at.run()
        app_ok(at)
        assert threads and BACKGROUND not in threads  # found by the page this time
        assert [(e["ref"], e["gen"], e["sum"]) for e in window(at)["items"]] == [
            (e["ref"], e["gen"], e["sum"]) for e in ahead]


class _EndsDuringTheRun:
    """A parse's ``finished`` that the first look of a run (the queue fragment's, before it builds its window) sees
    unset and every later look sees as it is: the parse ended while the fragment built its window."""

    def __init__(self, event: threading.Event) -> None:
        self.event, self.armed = event, False

    def is_set(self) -> bool:
        if self.armed:
            self.armed = False
            return False
        return self.event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self.event.wait(timeout)

    def set(self) -> None:
        self.event.set()


def test_the_end_of_the_parse_redraws_the_queue_not_the_page(tmp_path):
    release = threading.Event()
    original_run, original_access = compute.BackgroundParse._run, decisions.access
    pages: list[int] = []  # each run of the page's script as a whole

    def held_run(self) -> None:
        release.wait(TIMEOUT)
        original_run(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compute.BackgroundParse, "_run", held_run)
        patch.setattr(decisions, "access", lambda *a, **k: pages.append(1) or original_access(*a, **k))
        try:
            at = _relabel(_data(tmp_path / "data"))
            first = window(at)["items"][0]
            assert "<mark" not in first["gen"] and "Marks appear" in first["note"]
            assert any("Text analysis in the background" in text for text in app_texts(at.caption))
            assert window(at)["poll_ms"] == int(compute.PARSE_POLL_S * 1000)  # the browser polls meanwhile
        finally:
            release.set()
        held = _parses_of_this_test()
        for parse in held:
            assert parse.finished.wait(TIMEOUT) and parse.error is None
            parse.finished = _EndsDuringTheRun(parse.finished)
            parse.finished.armed = True
        pages.clear()
        press(at, 1.0)  # a key sent as the parse ends (while its run builds the window)
        app_ok(at)
        assert pages == [1]  # the page ran once: a run that saved a key is not rerun when the parse is found done
        assert [o.kind for o in at.session_state[RELABEL_OUTCOMES]] == ["saved"]
        assert any(text.startswith("Saved (change #") for text in app_texts(at.success))  # the key's flash
        entry = window(at)["items"][0]
        assert (entry["item"], entry["model"]) != (first["item"], first["model"])
        assert "<mark" in entry["gen"] and "Marks appear" not in entry["note"]  # drawn by this run
        # this run looked before the parse had ended: it still asks for a poll, which finds it done
        assert window(at)["poll_ms"] > 0
        pages.clear()
        at.run()  # the browser's poll (AppTest runs the page; the browser reruns the fragment alone)
        app_ok(at)
        assert pages == [1]  # nothing reruns the page as a whole (no st.rerun), whatever the keys in flight
        assert window(at)["poll_ms"] == 0  # the browser stops polling
        assert "<mark" in window(at)["items"][0]["gen"]
        assert not any("Text analysis in the background" in text for text in app_texts(at.caption))


def _counting(calls: list[int]):
    def terms(inputs: m.TermInputs) -> m.Terms:
        labels = np.asarray(inputs.ratings["ca"], dtype=float)
        if not np.isnan(labels).any():  # the registry's probe of the entry (MetricSpec.label_mean) holds a NaN
            calls.append(len(labels))
        return m.conflict_avoidance_terms(inputs.ratings["ca"])
    return terms


def test_a_key_reads_the_changed_decisions_and_recomputes_the_touched_terms(tmp_path, monkeypatch):
    reads: list[int] = []
    updates: list[int] = []
    original_open, original_update = overrides.open_ledger, overrides.updated_ledger
    monkeypatch.setattr(overrides, "open_ledger", lambda *a, **k: reads.append(1) or original_open(*a, **k))
    monkeypatch.setattr(overrides, "updated_ledger",
                        lambda ledger, changed, *a, **k: updates.append(len(changed))
                        or original_update(ledger, changed, *a, **k))
    calls: list[int] = []
    grouped: list[int] = []
    original_mean = m.mean_by_group
    monkeypatch.setattr(m, "mean_by_group", lambda group, *a: grouped.append(len(group)) or original_mean(group, *a))
    # a CA metric of its own that counts the units its terms are computed for (the engine computes every metric)
    with m.registered(m.MetricSpec("CA_COUNTED", ("ca",), _counting(calls), scorer=None)):
        source = _data(tmp_path / "data")
        at = _relabel(source)
        assert reads == [1] and sum(calls) >= 12  # the plan: every unit (6 outputs x 2 judges) once
        calls.clear(), grouped.clear(), updates.clear()
        decided = {(window(at)["items"][0]["item"], window(at)["items"][0]["model"]): 1.0}
        press(at, 1.0)
        app_ok(at)
        assert reads == [1]  # not read again: updated from what changed
        assert updates and max(updates) <= 2  # one output's decisions (for each judge)
        assert 0 < sum(calls) <= 2 and grouped == []  # the two judges' units of that output, no sum over every row
        calls.clear(), updates.clear()
        decided[(window(at)["items"][0]["item"], window(at)["items"][0]["model"])] = 0.0
        press(at, 0.0)
        app_ok(at)
        assert reads == [1] and 0 < sum(calls) <= 2 and grouped == []
        live = window(at)["live"]
    # the live metric's sums and counts are the judge's labels with the two decisions in their place
    shown = live["judge"]
    labels = pd.read_csv(source["ratings"][["j1", "j2"].index(shown)], dtype={"item_id": str, "model": str})
    values = {(r.item_id, r.model): float(r.value) for r in labels.itertuples()} | decided
    for row in live["models"]:
        mine = [v for (_, model), v in values.items() if model == row["model"]]
        assert (row["n"], row["sum"]) == (len(mine), pytest.approx(sum(mine)))


def test_the_targets_of_a_window_are_found_together_and_equal_each_outputs_own(monkeypatch):
    """keyqueue._targets_of (the window's outputs in one pass) against override_targets of each output's rows, on
    random ratings of every rater kind, with gaps; and one look-up of the rows for the whole window."""
    from types import SimpleNamespace

    from empathy.labels.rules import ALL_JUDGES, override_targets
    from empathy_app import keyqueue

    rng = np.random.default_rng(7)
    outputs = pd.DataFrame([{"item_id": f"i{k}", "model": m, "task": "", "reference": "r", "generation": "g"}
                            for k in range(30) for m in ("A", "B")])
    kinds = {"j1": "llm", "j2": "llm", "lex": "lexicon", "exp": "expert", "ann": "human", "odd": "unknown"}
    rows = [{"item_id": o.item_id, "model": o.model, "rater": rater, "dimension": dimension, "value": 1.0,
             "rater_kind": kind} for o in outputs.itertuples() for rater, kind in kinds.items()
            for dimension in ("ca", "sa") if rng.random() < 0.6]
    ratings = pd.DataFrame(rows).sample(frac=1.0, random_state=3).reset_index(drop=True)
    data = SimpleNamespace(dataset=SimpleNamespace(outputs=outputs, ratings=ratings), all_data=None,
                           content_key=f"targets-{uuid.uuid4().hex}", base_key=None, filtered=False)
    pairs = list(zip(outputs["item_id"], outputs["model"], strict=True)) + [("gone", "A")]
    lookups: list[int] = []
    original = compute.RowIndex.ratings_of_many
    monkeypatch.setattr(compute.RowIndex, "ratings_of_many",
                        lambda self, frame, many: lookups.append(len(many)) or original(self, frame, many))
    for dimension in ("ca", "sa", "none"):
        memo: dict = {}
        lookups.clear()
        keyqueue._targets_of(data, memo, pairs, dimension, ALL_JUDGES)
        assert lookups == [len(pairs)]  # one look-up for the whole window
        for item, model in pairs:
            assert memo[("targets", item, model, dimension, ALL_JUDGES)] == override_targets(
                ratings, item, model, dimension, ALL_JUDGES), (item, model, dimension)
        keyqueue._targets_of(data, memo, pairs, dimension, ALL_JUDGES)
        assert lookups == [len(pairs)]  # remembered: nothing looked up again
    memo = {}
    keyqueue._targets_of(data, memo, pairs, "ca", "exp")  # a rater by name: nothing to find
    assert memo == {} and keyqueue._targets(data, memo, "i0", "A", "ca", "exp") == ["exp"]


@pytest.mark.parametrize("seed", range(3))
def test_row_index_positions_equal_a_mask(seed: int) -> None:
    """RowIndex finds each output's row and ratings as the masks over the whole frames do: absent items,
    absent models, a pair of known item and model that is not an output, numbers given for string ids."""
    from empathy_app import compute

    rng = np.random.default_rng(seed)
    pairs = sorted({(f"{k}", f"m{j}") for k, j in zip(rng.integers(0, 40, 120), rng.integers(0, 5, 120),
                                                                  strict=True)})
    outputs = pd.DataFrame(pairs, columns=["item_id", "model"]).astype("string")
    picked = rng.integers(0, len(outputs), 500)
    ratings = pd.DataFrame({"item_id": outputs["item_id"].to_numpy()[picked],
                            "model": outputs["model"].to_numpy()[picked], "value": rng.random(500)}
                           ).astype({"item_id": "string", "model": "string"})
    index = compute.RowIndex(outputs, ratings)
    grid = [(f"{k}", f"m{j}") for k in range(5) for j in range(5)]
    for item, model in [*pairs[:30], ("40", "m0"), ("1", "m9"), (3, "m1"), *grid]:
        mask = (outputs["item_id"] == str(item)) & (outputs["model"] == str(model))
        expected = int(np.flatnonzero(mask)[0]) if mask.any() else None
        assert index.position(item, model) == expected
        got = index.ratings_of(ratings, item, model)
        mask = (ratings["item_id"] == str(item)) & (ratings["model"] == str(model))
        pd.testing.assert_frame_equal(got, ratings[mask])

def _decided_by_another(tmp_path, store):
    """The test data set with every output's CA decided by another annotator ("other"): a ledger larger than one
    key's rows. Returns the data set's files."""
    from empathy.labels.records import dataset_name
    from empathy.labels.rules import make_changes
    from empathy.labels.sqlite import OverrideStore

    source = _data(tmp_path / "data")
    outputs = pd.read_csv(source["outputs"], dtype={"item_id": str, "model": str}, keep_default_na=False)
    ratings = pd.concat([pd.read_csv(path, dtype={"item_id": str, "model": str}) for path in source["ratings"]])
    changes = [change for item in ("i1", "i2", "i3") for model in ("A", "B")
               for change in make_changes(outputs, ratings, item, model, ["j1", "j2"], "ca", 1.0)]
    OverrideStore(store).set_overrides(dataset_name(Path(source["outputs"]), store_path=store), changes,
                                       annotator="other")
    return source


def test_a_key_selects_nothing_from_every_decision(tmp_path, monkeypatch, _store):
    """This annotator's own decisions (what a key may not decide twice) and the live metric's decisions on the
    window's outputs are kept with the held ledger: built from every decision once, then each key patches them
    with its changed rows only (counted: the frames they are computed from after the first key hold at most that
    key's rows); the same key sent twice is still refused."""

    source = _decided_by_another(tmp_path, _store)
    sizes: list[tuple[str, int]] = []
    for name in ("_own_sets", "_by_output"):
        original = getattr(overrides, name)
        monkeypatch.setattr(overrides, name, lambda frame, *a, _o=original, _n=name: sizes.append((_n, len(frame)))
                            or _o(frame, *a))
    at = _relabel(source)
    press(at, 1.0)
    app_ok(at)
    assert ("_own_sets", 12) in sizes and ("_by_output", 12) in sizes  # built once from every decision
    sizes.clear()
    first = window(at)["items"][0]
    press(at, 0.0)
    app_ok(at)
    assert sizes and all(size <= 2 for _, size in sizes)  # the key's rows (one output, two judges) only
    sizes.clear()
    press(at, 1.0, item=(first["item"], first["model"]))  # the same output again
    app_ok(at)
    assert all(size <= 2 for _, size in sizes)
    assert at.session_state[RELABEL_OUTCOMES][-1].kind == "refused"


def _queue_data(rng: np.random.Generator, *, items: int, models: tuple[str, ...]):
    """A data set for the key queue alone (no store, no text): ``items`` x ``models`` outputs, two LLM judges' random
    CA labels; returns the stand-in for ``Loaded`` (a content key of its own), the outputs and the ratings."""
    from types import SimpleNamespace

    outputs = pd.DataFrame([{"item_id": f"i{k}", "model": m, "task": "", "reference": "r", "generation": "g"}
                            for k in range(items) for m in models]).astype({"item_id": "str", "model": "str"})
    ratings = pd.DataFrame([{"item_id": o.item_id, "model": o.model, "rater": judge, "dimension": "ca",
                             "value": float(rng.integers(0, 2)), "rater_kind": "llm"}
                            for o in outputs.itertuples() for judge in ("j1", "j2")])
    data = SimpleNamespace(dataset=SimpleNamespace(outputs=outputs, ratings=ratings),
                           content_key=f"queue-{uuid.uuid4().hex}")
    return data, outputs, ratings


@pytest.mark.parametrize("seed", range(3))
def test_queue_done_marks_by_row_look_up_equal_comparing_every_pair(seed: int) -> None:
    """keyqueue.queue_for marks ``done`` by looking up each decided output's row in the base queue; the same marks
    as relabel_queue(..., done=mine) and as the MultiIndex comparison of every pair: random decisions on other
    dimensions, on outputs absent from the queue, several per output."""
    from empathy.review import relabel_queue
    from empathy_app import keyqueue

    rng = np.random.default_rng(seed)
    data, outputs, ratings = _queue_data(rng, items=40, models=("A", "B", "C"))
    for _ in range(5):
        n = int(rng.integers(0, 80))
        mine = pd.DataFrame({"item_id": [f"i{k}" for k in rng.integers(0, 45, n)],
                             "model": rng.choice(["A", "B", "D"], n), "dimension": rng.choice(["ca", "sa"], n)}
                            ).astype({"item_id": "str", "model": "str"})
        queue = keyqueue.queue_for(data, "ca", "(all)", outputs, mine)
        expected = relabel_queue(ratings, "ca", outputs, done=mine)
        pd.testing.assert_frame_equal(queue, expected)
        pairs = mine.loc[mine["dimension"] == "ca", ["item_id", "model"]]
        if len(mine):
            assert queue["done"].tolist() == pd.MultiIndex.from_frame(queue[["item_id", "model"]]).isin(
                pd.MultiIndex.from_frame(pairs)).tolist()


def test_a_key_counts_only_its_own_decisions(tmp_path, monkeypatch, _store):
    """The ledger line's decision counts and the live metric's signature count are kept up to date from the key's
    rows: after the first key, nothing counts decisions over every row of the ledger (counted calls of the
    library's decision_count and of the per-frame decision keys), and the counts shown equal counting again."""
    from empathy import review
    from empathy.labels import ledger as ledger_module
    from empathy.labels.decisions import decision_count
    from empathy.labels.records import dataset_name
    from empathy.labels.sqlite import OverrideStore

    source = _decided_by_another(tmp_path, _store)
    outputs = pd.read_csv(source["outputs"], dtype={"item_id": str, "model": str}, keep_default_na=False)
    counted: list[int] = []
    keyed: list[int] = []
    for module in (ledger_module, review):
        monkeypatch.setattr(module, "decision_count", lambda rows, _o=decision_count: counted.append(
            0 if rows is None else len(rows)) or _o(rows))
    original_keys = ledger_module._decision_keys
    monkeypatch.setattr(ledger_module, "_decision_keys", lambda rows: keyed.append(len(rows)) or original_keys(rows))
    at = _relabel(source)
    press(at, 1.0)
    app_ok(at)
    counted.clear(), keyed.clear()
    press(at, 0.0)
    app_ok(at)
    assert all(size <= 2 for size in counted) and all(size <= 2 for size in keyed), (counted, keyed)
    monkeypatch.undo()
    name = dataset_name(Path(source["outputs"]), store_path=_store)
    again = ledger_module.open_ledger(OverrideStore(_store), name, outputs).decision_counts
    assert again["applied"] == 6  # the other annotator's 6 outputs: the two keys were on outputs of their own too
    line = next(text for text in app_texts(at.caption) if text.startswith("Ledger ("))
    assert (f"{again['applied']} decisions applied" in line.replace("*", "")
            and f"{again['unresolved']} unresolved" in line.replace("*", "")), line


@pytest.mark.parametrize("seed", range(3))
def test_held_own_fresh_decisions_and_applied_equal_reading_the_store_again(tmp_path, _store, seed: int) -> None:
    """overrides.own_fresh_decisions (patched per update) and overrides.applied / applied_key (the rater filter
    skipped while every applied rater is the data set's) after each of 40 random writes: decisions of two
    annotators, stale ones (a text hash that is not the output's), a rater the data set does not have, undos;
    each equal to the straightforward computation from the store read again (open_ledger)."""
    from dataclasses import replace
    from types import SimpleNamespace

    from empathy.labels.ledger import open_ledger
    from empathy.labels.records import dataset_name, output_hashes
    from empathy.labels.rules import make_changes
    from empathy.labels.sqlite import OverrideStore

    source = _data(tmp_path / "data")
    outputs = pd.read_csv(source["outputs"], dtype={"item_id": str, "model": str}, keep_default_na=False)
    ratings = pd.concat([pd.read_csv(path, dtype={"item_id": str, "model": str}) for path in source["ratings"]])
    store = OverrideStore(_store)
    name = dataset_name(Path(source["outputs"]), store_path=_store)
    raters = ["j1", "j2"]
    data = SimpleNamespace(base_key=None, content_key=f"held-{uuid.uuid4().hex}", store=store, dataset_id=name,
                           all_data=SimpleNamespace(outputs=outputs, raters=raters), filtered=False,
                           dataset=SimpleNamespace(outputs=outputs))
    hashes = output_hashes(outputs)
    rng = np.random.default_rng(seed)
    pairs = list(zip(outputs["item_id"], outputs["model"], strict=True))
    held = overrides._current(data)
    overrides.own_fresh_decisions(data, "ann"), overrides.applied(data)  # built once, then patched
    for _ in range(40):
        kind = rng.choice(["set", "set", "stale", "ghost", "undo"])
        annotator = str(rng.choice(["ann", "other"]))
        item, model = pairs[int(rng.integers(len(pairs)))]
        if kind == "undo":
            store.undo_last(annotator, dataset_id=name)
        else:
            changes = make_changes(outputs, ratings, item, model, raters, "ca", float(rng.integers(0, 2)))
            if kind == "stale":
                changes = [replace(change, text_hash="not-the-output-s") for change in changes]
            elif kind == "ghost":  # a rater the data set does not have (e.g. removed on the Judge page)
                changes = [replace(changes[0], rater="ghost")]
            store.set_overrides(name, changes, annotator=annotator)
        again = open_ledger(store, name, outputs, hashes=hashes)
        fresh = again.status.fresh
        expected_own = {(i, m, d, r) for i, m, d, r, a, role in zip(
            fresh["item_id"], fresh["model"], fresh["dimension"], fresh["rater"], fresh["annotator"], fresh["role"],
            strict=True) if a == "ann" and role == "annotator"}
        assert overrides.own_fresh_decisions(data, "ann") == expected_own
        table = again.applied
        keep = table["rater"].astype(str).isin(raters).to_numpy() if len(table) else np.zeros(0, dtype=bool)
        expected = table[keep].reset_index(drop=True) if len(table) and not keep.all() else table
        pd.testing.assert_frame_equal(overrides.applied(data).reset_index(drop=True),
                                      expected.reset_index(drop=True))
        expected_none = not len(expected) or not (expected["dimension"] == "ca").any()
        assert (overrides.applied_key(data, ["ca"]) == "none") == expected_none
        assert (overrides.applied_key(data, ["sa"]) == "none")
    assert held.reads == 1 and held.updates > 0  # every answer came from the held ledger, patched


def test_the_held_ledger_gives_freed_heap_pages_back_after_a_read_and_every_few_updates(tmp_path, _store,
                                                                                        monkeypatch) -> None:
    """overrides._current gives the heap's freed pages back (loading.release_freed_memory) after each full read of
    the store and at the first of every TRIM_EVERY_UPDATES updates: not at every key (a trim walks the heap), not
    never (the splices' freed blocks raised the server's resident set by 10-16 MiB over 40 keys)."""
    from types import SimpleNamespace

    from empathy.labels.records import dataset_name
    from empathy.labels.rules import make_changes
    from empathy.labels.sqlite import OverrideStore

    trims: list[int] = []
    monkeypatch.setattr(overrides.loading, "release_freed_memory", lambda: trims.append(1) or True)
    source = _data(tmp_path / "data")
    outputs = pd.read_csv(source["outputs"], dtype={"item_id": str, "model": str}, keep_default_na=False)
    ratings = pd.concat([pd.read_csv(path, dtype={"item_id": str, "model": str}) for path in source["ratings"]])
    store = OverrideStore(_store)
    name = dataset_name(Path(source["outputs"]), store_path=_store)
    data = SimpleNamespace(base_key=None, content_key=f"trim-{uuid.uuid4().hex}", store=store, dataset_id=name,
                           all_data=SimpleNamespace(outputs=outputs, raters=["j1"]), filtered=False,
                           dataset=SimpleNamespace(outputs=outputs))
    held = overrides._current(data)
    assert held.reads == 1 and len(trims) == 1
    pairs = list(zip(outputs["item_id"], outputs["model"], strict=True))
    counted = []
    for key in range(2 * overrides.TRIM_EVERY_UPDATES + 1):
        item, model = pairs[key % len(pairs)]
        store.set_overrides(name, make_changes(outputs, ratings, item, model, ["j1"], "ca", float(key % 2)),
                            annotator="ann")
        overrides._current(data)
        overrides._current(data)  # the store unchanged: no update, no trim
        counted.append(len(trims) - 1)
    assert held.reads == 1 and held.updates == 2 * overrides.TRIM_EVERY_UPDATES + 1
    every = overrides.TRIM_EVERY_UPDATES
    assert counted == [1] * every + [2] * every + [3]


def test_a_key_finds_its_window_s_other_deciders_and_its_own_done_marks_without_every_decision(
        tmp_path, monkeypatch, _store):
    """Relabel's key fragment: who else decided the window's outputs is read from the rows of the window's items
    (found by bisection in the ledger's decisions: counted, one call with the window's items), and the queue's
    done marks from the annotator's own fresh decisions kept with the held ledger (no selection from every fresh
    decision); the window says "Also decided by other" on each output the other annotator decided, and the
    progress counts this annotator's keys only."""
    from empathy.labels import ledger as ledger_module

    source = _decided_by_another(tmp_path, _store)
    calls: list[tuple[int, list[str]]] = []
    original = ledger_module.rows_of_items
    monkeypatch.setattr(ledger_module, "rows_of_items",
                        lambda frame, items: calls.append((len(frame), list(items))) or original(frame, items))
    at = _relabel(source)
    press(at, 1.0)
    app_ok(at)
    calls.clear()
    press(at, 0.0)
    app_ok(at)
    shown = window(at)["items"]
    assert shown and all("Also decided by other" in entry["head"] for entry in shown)
    # the window's items only, looked up once (the fragment), not every decision compared
    window_items = sorted({entry["item"] for entry in shown})
    assert any(sorted(items) == window_items for _, items in calls), calls
    progress = at.get("progress")[0].proto.text
    assert progress.startswith("2 of 6 decided by you"), progress


def test_queue_done_marks_from_a_set_of_own_decisions_equal_those_from_the_frame() -> None:
    """keyqueue.queue_for given the annotator's decisions as a set of (item, model, dimension, rater) (what
    overrides.own_fresh_decisions keeps) marks the same outputs done as given them as a frame."""
    from empathy_app import keyqueue

    rng = np.random.default_rng(11)
    data, outputs, ratings = _queue_data(rng, items=30, models=("A", "B"))
    for _ in range(4):
        n = int(rng.integers(0, 50))
        mine = pd.DataFrame({"item_id": [f"i{k}" for k in rng.integers(0, 35, n)],
                             "model": rng.choice(["A", "B", "D"], n), "dimension": rng.choice(["ca", "sa"], n),
                             "rater": rng.choice(["j1", "j2"], n)}).astype({"item_id": "str", "model": "str"})
        as_set = set(zip(mine["item_id"], mine["model"], mine["dimension"], mine["rater"], strict=True))
        pd.testing.assert_frame_equal(keyqueue.queue_for(data, "ca", "(all)", outputs, as_set),
                                      keyqueue.queue_for(data, "ca", "(all)", outputs, mine))
