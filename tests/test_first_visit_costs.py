"""The first visit's costs at a lab's scale, each against the straightforward computation it replaced.

- The text features of a data set (:func:`empathy_app.compute._features`) read the outputs' two text columns as
  they are: the same features as the frame rebuilt from Python lists that it used to analyse, on rows in any
  order and with any index, and the analyser asked for the same distinct texts in the same order.
"""

import numpy as np
import pandas as pd
import pytest

from empathy.evaluate import text_features
from empathy_app import compute


def _outputs(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    refs = [f"reference {k}. It hurts." for k in range(7)]
    gens = [f"generation {k}: it is understood." for k in range(11)]
    n = 60
    frame = pd.DataFrame({"item_id": [f"i{k % 15}" for k in range(n)], "model": [f"m{k // 15}" for k in range(n)],
                          "task": "counseling", "reference": [refs[k] for k in rng.integers(0, 7, n)],
                          "generation": [gens[k] for k in rng.integers(0, 11, n)]})
    # a filtered, shuffled frame: its index is neither a range nor in order
    return frame.sample(frac=0.8, random_state=seed)


def _fake_analyser(asked: list[list[str]]):
    def analyse(texts, bar=None):
        asked.append(list(texts))
        sentences = np.array([len(t) % 5 + 1 for t in texts], dtype=float)
        densities = np.array([[len(t) / 100, t.count("i") / 10, t.count(".") / 3] for t in texts], dtype=float)
        return sentences, densities
    return analyse


def test_the_text_features_read_the_columns_as_they_are(monkeypatch):
    for seed in range(4):
        outputs = _outputs(seed)
        asked_now: list[list[str]] = []
        monkeypatch.setattr(compute, "_spacy_analyser", _fake_analyser(asked_now))
        monkeypatch.setattr(compute, "_features_held", lambda held={}: held)  # noqa: B006 - a fresh store per seed
        now = compute._features(f"test-features-{seed}", outputs)
        asked_before: list[list[str]] = []
        # the straightforward frame of before: Python lists, a new range index
        frame = pd.DataFrame({"item_id": range(len(outputs)), "model": "", "task": "",
                              "reference": outputs["reference"].tolist(),
                              "generation": outputs["generation"].tolist()})
        before = text_features(frame, _fake_analyser(asked_before), signature=now.signature)
        assert asked_now == asked_before and len(asked_now) == 1
        for field in ("sentences_ref", "sentences_gen", "densities_ref", "densities_gen"):
            np.testing.assert_array_equal(getattr(now, field), getattr(before, field))
        assert not np.isnan(now.densities_gen).any()


def test_a_background_parse_waits_for_the_page_to_begin_it(monkeypatch, tmp_path):
    """The parse starts when the page says its first screen is out (begin), not while the page builds it; without
    begin it starts anyway after START_WAIT_S (a page that stopped before its end)."""
    import threading

    import empathy.distancing as distancing

    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    seen: list[int] = []  # how many begin() calls there had been when each parse began parsing
    begun: list[int] = []
    called = threading.Event()
    original_begin = compute.BackgroundParse.begin

    def counted_begin(self) -> None:
        begun.append(1)
        original_begin(self)

    def recorded_analyze(texts, **kwargs):
        seen.append(len(begun))
        called.set()
        return iter(())

    monkeypatch.setattr(distancing, "analyze", recorded_analyze)
    monkeypatch.setattr(compute.BackgroundParse, "begin", counted_begin)
    monkeypatch.setattr(compute, "START_WAIT_S", 600.0)
    parse = compute.BackgroundParse(["one text.", "another text."])
    assert not parse.finished.wait(0.2) and seen == []  # nothing parsed before begin
    parse.begin()
    assert parse.finished.wait(60) and called.is_set() and seen == [1]
    monkeypatch.setattr(compute, "START_WAIT_S", 0.0)  # no begin: it starts by itself
    seen.clear()
    parse = compute.BackgroundParse(["one text."])
    assert parse.finished.wait(60) and seen == [1] and len(begun) == 1  # parsed though never begun


def test_a_background_parse_takes_no_new_round_while_a_key_queue_runs(monkeypatch, tmp_path):
    """Between two rounds of texts the parse waits for the key queues' runs in progress (at most YIELD_S); once none
    is, it goes on, and every text is parsed once, in the order it was before."""
    import itertools
    import threading

    import empathy.distancing as distancing

    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    rounds: list[list[str]] = []  # the texts analyze took, round by round

    def two_at_a_time(texts, **kwargs):
        stream = iter(texts)
        while True:
            taken = list(itertools.islice(stream, 2))
            if not taken:
                return
            rounds.append(taken)
            yield from (None for _ in taken)

    waiting = threading.Event()  # the parse is waiting for the runs to end
    original_wait = compute.QUEUE_RUNS.wait_idle

    def recorded_wait(timeout: float) -> bool:
        if compute.QUEUE_RUNS.count:
            waiting.set()
        return original_wait(timeout)

    monkeypatch.setattr(distancing, "analyze", two_at_a_time)
    monkeypatch.setattr(compute.QUEUE_RUNS, "wait_idle", recorded_wait)
    monkeypatch.setattr(compute, "START_WAIT_S", 0.0)
    monkeypatch.setattr(compute, "YIELD_S", 600.0)
    monkeypatch.setattr(compute, "_sentences_ahead", lambda texts: None)
    texts = [f"text {k}." for k in range(5)]
    with compute.QUEUE_RUNS.running():
        parse = compute.BackgroundParse(texts)
        assert waiting.wait(60)
        assert rounds == [texts[:2]]  # one round, then nothing while the run is on
    assert parse.finished.wait(60) and parse.error is None
    assert rounds == [texts[:2], texts[2:4], texts[4:]] and compute.QUEUE_RUNS.count == 0
    monkeypatch.setattr(compute, "YIELD_S", 0.0)  # the wait is bounded: a run that never ends stops nothing
    rounds.clear()
    with compute.QUEUE_RUNS.running():
        parse = compute.BackgroundParse(texts)
        assert parse.finished.wait(60) and parse.error is None
        assert rounds == [texts[:2], texts[2:4], texts[4:]]


@pytest.mark.usefixtures("_store", "_cache")
def test_relabel_begins_the_background_parse_once_its_run_is_drawn(tmp_path):
    """On a new data set Relabel starts the background parse and lets it begin at the end of its run (its first
    window built without spaCy loading beside it); the window shows the first output meanwhile."""
    pytest.importorskip("streamlit")
    from conftest import app_ok, open_page
    from relabel_keys import window
    from test_app_incremental import RELABEL, TIMEOUT, _data, _parses_of_this_test

    begun_before_the_window: list[bool] = []
    original_items = keyqueue_module().window_items

    def recorded_items(data, *args, **kwargs):
        begun_before_the_window.extend(p.started.is_set() for p in _parses_of_this_test())
        return original_items(data, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(keyqueue_module(), "window_items", recorded_items)
        at = open_page(RELABEL, _data(tmp_path / "data"), session={"annotator": "ann"}, timeout=TIMEOUT)
        app_ok(at)
        assert window(at)["items"]
        parses = _parses_of_this_test()
        assert parses and all(p.started.is_set() for p in parses)  # begun by the page's end
        assert begun_before_the_window == [False]  # not while the window was built
        for parse in parses:
            assert parse.finished.wait(TIMEOUT) and parse.error is None


def keyqueue_module():
    from empathy_app import keyqueue

    return keyqueue


def test_the_rater_value_texts_are_each_rows_own():
    """ItemSplits' ``values`` texts, written once per distinct row, equal each row's own join (randomised)."""
    from empathy.calibration import _described

    def straightforward(values, names):
        return [", ".join(f"{names[c]}={row[c]:g}" for c in range(len(names)) if not np.isnan(row[c]))
                for row in values]

    rng = np.random.default_rng(25)
    for trial in range(60):
        n, k = int(rng.integers(0, 200)), int(rng.integers(0, 6))
        values = (rng.choice([0.0, 1.0, 2.5, -1e-7, 3.14159, 5.0], size=(n, k)) if trial % 2
                  else rng.random((n, k)))
        values[rng.random((n, k)) < 0.25] = np.nan
        names = [f"rater {j}" for j in range(k)]
        assert _described(values, names) == straightforward(values, names)
