"""empathy.progress: counts, elapsed time and ETA from a fake clock; the hooks of analyze, load_dataset and the
Kumar import report every unit exactly once."""

from __future__ import annotations

import pandas as pd
import pytest

from empathy.distancing import DistancingCache, analyze
from empathy.io import load_dataset
from empathy.paths import DEMO_DIR, shared_dataset
from empathy.progress import Progress, Tracker, format_duration, track


class Clock:
    """A clock that returns the given readings in turn."""

    def __init__(self, *readings: float) -> None:
        self.readings = list(readings)

    def __call__(self) -> float:
        return self.readings.pop(0)


@pytest.mark.parametrize(("seconds", "expected"), [
    (0, "0 s"), (0.4, "0 s"), (7.6, "8 s"), (59.4, "59 s"), (60, "1 min"), (125, "2 min 5 s"),
    (3600, "1 h"), (3780, "1 h 3 min"), (179, "2 min 59 s"),
])
def test_format_duration(seconds, expected):
    assert format_duration(seconds) == expected


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf")])
def test_format_duration_refuses(bad):
    with pytest.raises(ValueError, match="seconds"):
        format_duration(bad)


@pytest.mark.parametrize(("done", "total", "elapsed", "fraction", "eta", "text"), [
    # 500 of 2,000 in 45 s: 11.1 per second, 1,500 left -> 135 s
    (500, 2000, 45.0, 0.25, 135.0, "500 of 2,000 texts (25%) · 45 s elapsed · about 2 min 15 s left"),
    (0, 2000, 3.0, 0.0, None, "0 of 2,000 texts (0%) · 3 s elapsed"),
    (2000, 2000, 179.0, 1.0, 0.0, "2,000 of 2,000 texts (100%) · 2 min 59 s elapsed · done"),
    (1, 3, 0.0, 1 / 3, None, "1 of 3 texts (33%) · 0 s elapsed"),
    (0, 0, 0.0, 1.0, 0.0, "0 of 0 texts (100%) · 0 s elapsed · done"),
])
def test_progress_snapshot(done, total, elapsed, fraction, eta, text):
    progress = Progress(done, total, elapsed, "texts")
    assert progress.fraction == pytest.approx(fraction)
    assert progress.eta == (None if eta is None else pytest.approx(eta))
    assert progress.describe() == text


def test_tracker_reports_counts_elapsed_and_eta():
    seen: list[Progress] = []
    # readings: construction, start, then one per advance
    tracker = Tracker(10, seen.append, stage="requests", clock=Clock(100.0, 100.0, 102.0, 106.0, 110.0))
    tracker.start()
    tracker.advance(2)
    tracker.advance(4)
    tracker.advance(4)
    assert [(p.done, p.elapsed) for p in seen] == [(0, 0.0), (2, 2.0), (6, 6.0), (10, 10.0)]
    assert [p.eta for p in seen] == [None, 8.0, 4.0, 0.0]  # 1 per second: 8 left, then 4, then done
    assert seen[1].describe() == "2 of 10 requests (20%) · 2 s elapsed · about 8 s left"


def test_tracker_throttles_but_always_reports_the_end():
    seen: list[Progress] = []
    tracker = Tracker(4, seen.append, clock=Clock(0.0, 0.0, 0.1, 0.2, 0.3, 0.4), min_interval=0.25)
    tracker.start()           # t=0.0 reported
    tracker.advance()         # t=0.1 too soon
    tracker.advance()         # t=0.2 too soon
    tracker.advance()         # t=0.3 reported (0.3 s after the last)
    tracker.advance()         # t=0.4 complete: always reported
    assert [p.done for p in seen] == [0, 3, 4]


def test_tracker_set_done_and_refusals():
    seen: list[Progress] = []
    tracker = Tracker(5, seen.append, clock=Clock(0.0, 1.0, 2.0))
    tracker.set_done(3)
    tracker.set_done(5)
    assert [p.done for p in seen] == [3, 5]
    with pytest.raises(ValueError, match="past the total"):
        tracker.advance(1)
    with pytest.raises(ValueError, match="done must be"):
        tracker.set_done(6)
    with pytest.raises(ValueError, match="total"):
        Tracker(-1, None)
    with pytest.raises(ValueError, match="n must be"):
        Tracker(3, None).advance(-1)


def test_track_yields_unchanged_and_reports_each():
    seen: list[Progress] = []
    items = list(track(["a", "b", "c"], 3, seen.append, clock=Clock(0.0, 0.0, 1.0, 2.0, 3.0)))
    assert items == ["a", "b", "c"]
    assert [p.done for p in seen] == [0, 1, 2, 3]


def test_analyze_reports_every_text_once_parsed_or_cached(tmp_path):
    texts = ["I lost my job today.", "The decision was announced.", "", "It is known that mistakes were made.",
             "I lost my job today."]
    cache = DistancingCache(tmp_path / "cache.sqlite")
    calls: list[tuple] = []
    first = list(analyze(texts, cache=cache, batch_size=2, progress=lambda *a: calls.append(a)))
    # one round of 8; the repeated text is parsed once per round but reported for each of its places
    assert sum(c[0] for c in calls) == len(texts)
    assert all(c == (1,) for c in calls)  # nothing was cached: every text reported as parsed, one by one
    again: list[tuple] = []
    second = list(analyze(texts, cache=cache, batch_size=2, progress=lambda *a: again.append(a)))
    # all cached: one call per round (rounds of batch_size * 4 = 8 texts: one round), marked as cache hits
    assert again == [(len(texts), True)]
    assert [r.counts for r in first] == [r.counts for r in second]


def test_a_resumed_run_estimates_from_the_parsed_texts_only():
    seen: list[Progress] = []
    tracker = Tracker(100, seen.append, stage="texts", clock=Clock(0.0, 0.0, 10.0))
    tracker.advance(50, skipped=True)   # half came from the cache at once (t=0)
    tracker.advance(10)                 # 10 parsed in 10 s: 1 per second
    assert seen[-1].rate == 1.0 and seen[-1].eta == 40.0  # not 60 per 10 s, which would promise 6.7 s
    assert seen[-1].describe() == "60 of 100 texts (60%) · 10 s elapsed · about 40 s left"
    assert seen[0].rate is None and seen[0].eta is None  # only cache hits so far: no rate to promise from


def test_load_dataset_reports_each_file():
    calls: list[int] = []
    ratings = sorted(DEMO_DIR.glob("ratings*.csv"))
    dataset = load_dataset(DEMO_DIR / "outputs.csv", ratings, progress=calls.append)
    assert calls == [1] * (1 + len(ratings))
    assert isinstance(dataset.ratings, pd.DataFrame) and len(dataset.ratings) > 0


def test_kumar_import_reports_import_steps():
    directory = shared_dataset("kumar2025-empathic-communication")
    if directory is None:
        pytest.skip("the Kumar et al. (2025) data set is not in ../shared")
    from empathy.datasets.kumar2025 import CORPORA, RATERS, import_kumar2025, import_steps

    calls: list[int] = []
    import_kumar2025(directory, progress=calls.append)
    assert import_steps() == 1 + len(CORPORA) * len(RATERS) == len(calls)
