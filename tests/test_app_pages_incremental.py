"""AppTest: Items and Disagreement recompute nothing on a rerun and only the decided output after a decision
(counted calls, not timings; issue 25). The numbers themselves are checked against the straightforward computation
in tests/test_items_incremental.py and tests/test_disagreement_incremental.py."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok, open_page  # noqa: E402

from empathy import calibration, items  # noqa: E402
from empathy import slices as sl  # noqa: E402
from empathy.labels.backends import open_store  # noqa: E402
from empathy.labels.records import Change, dataset_name, text_hash  # noqa: E402

pytestmark = pytest.mark.usefixtures("_store")
TIMEOUT = 240


def _data(folder: Path) -> dict:
    """3 models x 4 items, two judges' SA inputs and CA labels."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"item_id": f"i{i}", "model": model, "task": "counseling",
             "reference": f"I feel ignored by my sister, item {i}. She never calls me back.",
             "generation": f"It is understood that issues occur ({model}). Try talking to her."}
            for model in ("A", "B", "C") for i in range(4)]
    pd.DataFrame(rows).to_csv(folder / "outputs.csv", index=False)
    paths = []
    for number, judge in enumerate(("j1", "j2")):
        ratings = [{"item_id": row["item_id"], "model": row["model"], "rater": judge, "dimension": dimension,
                    "value": value, "rater_kind": "llm", "reason": "", "signature": f"{judge}-sig"}
                   for k, row in enumerate(rows)
                   for dimension, value in (("ca", float((k + number) % 2)), ("e_ref", 0.8), ("e_gen", 0.2 * number))]
        pd.DataFrame(ratings).to_csv(folder / f"ratings_{judge}.csv", index=False)
        paths.append(str(folder / f"ratings_{judge}.csv"))
    return {"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": paths}


def _decide(source: dict, item: str, model: str, value: float) -> None:
    """Another annotator's CA decision on ``(item, model)`` for both judges, written to the store."""
    outputs = pd.read_csv(source["outputs"], dtype=str)
    row = outputs[(outputs["item_id"] == item) & (outputs["model"] == model)].iloc[0]
    store = os.environ["EMPATHY_STORE"]
    name = dataset_name(source["outputs"], store_path=store)
    open_store(store).set_overrides(name, [
        Change(item, model, judge, "ca", value, text_hash=text_hash(row["reference"], row["generation"]),
               judge_value=1.0 - value, judge_signature=f"{judge}-sig") for judge in ("j1", "j2")],
        annotator="other")


def _count(monkeypatch, owner, name: str, calls: list, measure=lambda *a, **k: 1) -> None:
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(measure(*args, **kwargs))
        return original(*args, **kwargs)
    monkeypatch.setattr(owner, name, counted)


def test_items_rerun_computes_nothing_and_a_decision_one_row(tmp_path, monkeypatch):
    whole: list = []
    patched: list = []
    _count(monkeypatch, items.ItemTable, "_whole", whole)
    _count(monkeypatch, items.ItemTable, "_patch", patched, lambda self, rows, *a: len(rows))
    source = _data(tmp_path / "data")
    at = open_page("app_pages/8_Items.py", source, session={"annotator": "bench"}, timeout=TIMEOUT)
    assert len(whole) == 1 and patched == []  # the table once
    at.run()
    app_ok(at)
    assert len(whole) == 1 and patched == []  # a rerun: nothing
    _decide(source, "i2", "B", 1.0)
    at.run()
    app_ok(at)
    assert len(whole) == 1 and patched == [1]  # the decided output's row only
    caption = " ".join(c.value for c in at.caption)
    assert "12 of 12 outputs" in caption
    at.selectbox(key="items_overridden").set_value("with an override").run()
    app_ok(at)
    assert "1 of 12 outputs" in " ".join(c.value for c in at.caption)
    assert len(whole) == 1 and patched == [1]  # a filter reorders the table, recomputes none of it


def test_disagreement_rerun_computes_nothing_and_a_decision_only_the_decided_units(tmp_path, monkeypatch):
    events: list = []
    built: list = []
    patched: list = []
    _count(monkeypatch, sl, "judge_human_events", events)
    _count(monkeypatch, calibration.ItemSplits, "__init__", built)
    _count(monkeypatch, calibration, "_row_stats", patched, lambda values, names: len(values))
    source = _data(tmp_path / "data")
    _decide(source, "i1", "A", 0.0)
    at = open_page("app_pages/9_Disagreement.py", source, session={"annotator": "bench"}, timeout=TIMEOUT)
    assert len(events) == 1 and len(built) == 1
    first = list(patched)
    at.run()
    app_ok(at)
    assert len(events) == 1 and len(built) == 1 and patched == first  # a rerun: nothing
    _decide(source, "i3", "C", 1.0)
    at.run()
    app_ok(at)
    assert len(events) == 2  # the events of the new ledger
    assert len(built) == 1  # the judges' split table is not built again
    assert patched[len(first):] == [2]  # only the units the humans rated (two outputs) are redone
