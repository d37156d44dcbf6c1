"""The worker holds the effective ratings of the current overrides, not of every ledger since (issue 25 item 2, the
worker under 2 GB at 200,000 outputs): each decision makes a new effective frame, and the frames of ledgers past
were 27 MiB each there. Guarded by the frames alive and counted computations, not by a measurement."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from empathy.labels.ledger import apply_overrides  # noqa: E402
from empathy.review import EffectiveRatings  # noqa: E402
from empathy_app import compute  # noqa: E402


def _ratings(n_items: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [{"item_id": f"i{i}", "model": m, "rater": r, "dimension": "ca", "value": float(rng.integers(0, 2)),
             "rater_kind": "llm"} for i in range(n_items) for m in ("a", "b") for r in ("j0", "j1")]
    return pd.DataFrame(rows)


def _overrides(ratings: pd.DataFrame, count: int) -> pd.DataFrame:
    chosen = ratings.iloc[:count]
    return chosen[["item_id", "model", "rater", "dimension"]].assign(value=1.0 - chosen["value"].to_numpy())


def test_only_the_frames_a_run_reads_are_held_and_a_rerun_computes_none(monkeypatch):
    compute._effective.clear()
    ratings = _ratings()
    calls: list[int] = []
    original = EffectiveRatings.__call__
    monkeypatch.setattr(EffectiveRatings, "__call__", lambda self, o: calls.append(1) or original(self, o))
    alive = []
    for ledger in range(1, 6):  # five decisions, one after the other
        overrides = _overrides(ratings, ledger)
        frame = compute._effective("data", f"ledger-{ledger}", ratings, overrides)
        pd.testing.assert_frame_equal(frame, apply_overrides(ratings, overrides))
        alive.append(weakref.ref(frame))
        del frame
        # a Workbench run reads the judges' own labels too: both held, a rerun computes neither again
        plain = compute._effective("data", "none", ratings, None)
        calls.clear()
        assert compute._effective("data", f"ledger-{ledger}", ratings, overrides) is alive[-1]()
        assert compute._effective("data", "none", ratings, None) is plain
        assert calls == []
        del plain
    gc.collect()
    assert sum(ref() is not None for ref in alive) == 1  # the current ledger's; those past are gone
    assert compute.EFFECTIVE_FRAMES == 2
    compute._effective.clear()
