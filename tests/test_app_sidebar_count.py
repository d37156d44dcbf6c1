"""AppTest: the sidebar's count of human decisions after Relabel's keys (issue 25).

A key on Relabel reruns the queue's fragment alone, not the sidebar: the fragment redraws the count in the sidebar's
place for it (:func:`empathy_app.sidebar.show_decision_count`), after the run's keys are saved. Checked here:

- after each key (and an undo) the sidebar says as many human decisions as the store holds, counted by the
  library's ``decision_count`` (on the tree before, the count stayed one key behind: the sidebar was drawn
  before the fragment saved the key);
- one count line, in the sidebar (the fragment's replaces the sidebar's own in its ``st.empty``);
- the count is patched from the key's rows, not counted over every row of the ledger (counted calls), and
  equals counting the store's decisions again;
- a page without the fragment (Data) draws the count itself.

AppTest runs the page as a whole on each key (the browser reruns the fragment alone:
``tests/test_browser_sidebar_count.py``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok, app_texts, open_page  # noqa: E402
from relabel_keys import press  # noqa: E402

from empathy.labels import ledger as ledger_module  # noqa: E402
from empathy.labels.decisions import decision_count  # noqa: E402
from empathy.labels.records import dataset_name  # noqa: E402
from empathy.labels.rules import make_changes  # noqa: E402
from empathy.labels.sqlite import OverrideStore  # noqa: E402

RELABEL = "app_pages/4_Relabel.py"
COUNT = "Human decisions: "

pytestmark = pytest.mark.usefixtures("_cache")


def _data(folder: Path) -> dict:
    """2 models x 4 items with CA labels of two judges."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"item_id": f"i{k}", "model": model, "task": "counseling",
             "reference": f"My sister never calls me back ({k}).", "generation": f"Try calling her ({model}, {k})."}
            for model in ("A", "B") for k in range(4)]
    pd.DataFrame(rows).to_csv(folder / "outputs.csv", index=False)
    ratings = [{"item_id": r["item_id"], "model": r["model"], "rater": judge, "dimension": "ca",
                "value": (k + j) % 2, "rater_kind": "llm", "reason": "", "signature": f"{judge}-v1"}
               for j, judge in enumerate(("j1", "j2")) for k, r in enumerate(rows)]
    pd.DataFrame(ratings).to_csv(folder / "ratings.csv", index=False)
    return {"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": [str(folder / "ratings.csv")]}


def _counts(at) -> list[str]:
    """The sidebar's count lines (the number as the user reads it)."""
    return [text.split(" · ")[0].replace("*", "") for text in app_texts(at.sidebar.caption) if text.startswith(COUNT)]


def _stored(store: Path, source: dict) -> int:
    """Human decisions in the store, counted by the library (what the sidebar is to say)."""
    decisions = OverrideStore(store).decisions(dataset_name(Path(source["outputs"]), store_path=store))
    return decision_count(decisions)


def test_the_sidebar_counts_every_key_of_the_queue(tmp_path, _store):
    source = _data(tmp_path / "data")
    at = open_page(RELABEL, source, session={"annotator": "ann"})
    assert _counts(at) == [f"{COUNT}0"]
    press(at, 1.0)
    app_ok(at)
    assert _stored(_store, source) == 1
    assert _counts(at) == [f"{COUNT}1"]  # the tree before: still 0 (drawn before the fragment saved the key)
    press(at, 0.0)
    press(at, 1.0)
    app_ok(at)
    assert _stored(_store, source) == 3 and _counts(at) == [f"{COUNT}3"]
    press(at, action="undo")
    app_ok(at)
    assert _stored(_store, source) == 2 and _counts(at) == [f"{COUNT}2"]
    # a page without the queue draws the count itself: the same number
    at.switch_page("app_pages/1_Data.py").run()
    app_ok(at)
    assert _counts(at) == [f"{COUNT}2"]


def test_the_count_after_a_key_is_patched_not_counted_over_the_ledger(tmp_path, _store, monkeypatch):
    """Another annotator's 8 decisions (16 rows) in the store first; after the first key nothing counts decisions
    over every row (counted calls of the per-frame decision keys and of decision_count): the sidebar's total is
    the one carried by the ledger, patched with the key's rows, and equals counting the store again."""
    source = _data(tmp_path / "data")
    outputs = pd.read_csv(source["outputs"], dtype={"item_id": str, "model": str}, keep_default_na=False)
    ratings = pd.read_csv(source["ratings"][0], dtype={"item_id": str, "model": str})
    changes = [change for item in outputs["item_id"].unique() for model in ("A", "B")
               for change in make_changes(outputs, ratings, item, model, ["j1", "j2"], "ca", 1.0)]
    OverrideStore(_store).set_overrides(dataset_name(Path(source["outputs"]), store_path=_store), changes,
                                        annotator="other")
    keyed: list[int] = []
    counted: list[int] = []
    original_keys = ledger_module._decision_keys
    monkeypatch.setattr(ledger_module, "_decision_keys", lambda rows: keyed.append(len(rows)) or original_keys(rows))
    monkeypatch.setattr(ledger_module, "decision_count",
                        lambda rows, _o=decision_count: counted.append(0 if rows is None else len(rows)) or _o(rows))
    at = open_page(RELABEL, source, session={"annotator": "ann"})
    assert _counts(at) == [f"{COUNT}8"]
    assert max(keyed) >= 16  # the first count: every row once
    press(at, 1.0)
    app_ok(at)
    keyed.clear(), counted.clear()
    press(at, 0.0)
    app_ok(at)
    assert keyed and all(size <= 2 for size in keyed) and all(size <= 2 for size in counted), (keyed, counted)
    monkeypatch.undo()
    assert _stored(_store, source) == 10 and _counts(at) == [f"{COUNT}10"]
