"""AppTest of issue 23's app half: Relabel's "audit sample" order (drawing, stored designs, the audit mark through
the key queue and the value box, the label budget beside the queue) and the corrected values on the Overview.

Failure paths first: no audit, an audit of another dimension, a design drawn from other outputs, a damaged design,
a key without (or with a damaged) mark. Expected numbers come from the library on the store's decisions
(:func:`empathy.inference.ppi_estimates` on :func:`empathy.labels.audits.audit_decisions`), never from the page.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts, open_page  # noqa: E402
from relabel_keys import press, window  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.audit import draw_audit  # noqa: E402
from empathy.inference import ppi_estimates  # noqa: E402
from empathy.io import load_dataset  # noqa: E402
from empathy.labels.audits import audit_decisions, design_list, load_design, save_design  # noqa: E402
from empathy.labels.backends import open_store  # noqa: E402
from empathy.labels.ledger import open_ledger  # noqa: E402
from empathy.labels.roles import parse_roles  # noqa: E402
from empathy.paths import DEMO_DIR  # noqa: E402
from empathy_app import audit_views  # noqa: E402

RELABEL = "app_pages/4_Relabel.py"
OVERVIEW = "app_pages/2_Overview.py"
TIMEOUT = 240
SESSION = {"annotator": "ann", "relabel_annotator": "ann"}

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


def _demo():
    return load_dataset(DEMO_DIR / "outputs.csv", sorted(DEMO_DIR.glob("ratings_*.csv")))


def _author(dataset, dimension: str) -> dict[tuple[str, str], float]:
    """The demo author's labels of ``dimension``: they play the humans, as in docs/statistics.md (an output the
    author left unlabelled is decided 1)."""
    ratings = dataset.ratings
    rows = ratings[(ratings["rater"] == "author") & (ratings["dimension"] == dimension) & ratings["value"].notna()]
    labels = {(str(i), str(m)): float(v) for i, m, v in zip(rows["item_id"], rows["model"], rows["value"],
                                                           strict=True)}
    return {(str(i), str(m)): labels.get((str(i), str(m)), 1.0)
            for i, m in zip(ratings["item_id"], ratings["model"], strict=True)}


def _relabel(order: str = audit_views.AUDIT_ORDER) -> AppTest:
    at = open_page(RELABEL, session=SESSION, timeout=TIMEOUT)
    at.radio(key="relabel_order").set_value(order).run()
    _ok(at)
    return at


def _dataset_id(at: AppTest) -> str:
    return at.session_state["_data"].dataset_id


def _draw(at: AppTest, *, judge: str = "lexicon", per_model: int = 4, seed: int = 1) -> None:
    """Draw and save an audit with the page's form (its values are submitted with the button)."""
    at.selectbox(key="relabel_audit_judge").set_value(judge)
    at.number_input(key="relabel_audit_per_model").set_value(per_model)
    at.number_input(key="relabel_audit_seed").set_value(seed)
    at.button(key="relabel_audit_draw_save").click().run()
    _ok(at)


def _decide(at: AppTest, values: dict[tuple[str, str], float], count: int) -> list[tuple[str, str]]:
    """``count`` keys in audit order, each the author's label of the output on screen, each with the entry's mark
    (as the browser copies it into the event)."""
    decided = []
    for _ in range(count):
        entry = window(at)["items"][0]
        pair = (entry["item"], entry["model"])
        press(at, values[pair], audit=entry["audit"])
        _ok(at)
        decided.append(pair)
    return decided


def _expected(store_path: Path, dataset_id: str, dimension: str = "ca"):
    """The library's PPI report of the data set's only design of ``dimension``, from the store's decisions."""
    dataset = _demo()
    store = open_store(str(store_path))
    listed = design_list(store, dataset_id)
    digest = listed.loc[listed["dimension"] == dimension, "digest"].iloc[-1]
    design = load_design(store, dataset_id, digest)
    ledger = open_ledger(store, dataset_id, dataset.outputs, "latest")
    labels = audit_decisions(ledger.status.fresh, design, rule="latest")
    return ppi_estimates(dataset.outputs, dataset.ratings, design, labels.decisions), labels


def _table(at: AppTest, column: str) -> pd.DataFrame:
    """A plain table (st.table) with ``column``, its index as columns."""
    for table in at.table:
        frame = table.value.reset_index()
        if column in frame.columns:
            return frame
    raise AssertionError(f"no table with {column}: {[list(t.value.reset_index().columns) for t in at.table]}")


def _intervals(at: AppTest) -> pd.DataFrame:
    for frame in at.dataframe:
        if {"ci_low", "rank_interval"} <= set(frame.value.columns):
            return frame.value
    raise AssertionError([list(f.value.columns) for f in at.dataframe])


# ------------------------------------------------------------------------------------------ failure paths

def test_no_audit_yet_says_so_and_offers_no_queue():
    at = _relabel()
    assert any("No audit of `ca` yet" in i for i in app_texts(at.info))
    assert not [c for c in at.get("bidi_component") if c.proto.component_name.endswith("empathy_relabel_queue")]
    # the other orders' decisions are said not to be a sample, whatever the order
    assert any("not a random sample and never feed the corrected estimates" in c for c in app_texts(at.caption))
    at.radio(key="relabel_order").set_value("judge disagreement").run()
    assert any("not a random sample" in c for c in app_texts(at.caption))


def test_overview_without_an_audit_has_intervals_and_no_corrected_column():
    at = open_page(OVERVIEW, timeout=TIMEOUT)
    shown = _intervals(at)
    assert "corrected" not in shown.columns
    assert any("No audit corrects these values yet" in c for c in app_texts(at.caption))


def test_an_audit_of_another_dimension(_store):
    at = _relabel()
    dataset = _demo()
    design = draw_audit(dataset.outputs, dataset.ratings, judge="lexicon", dimension="e_gen", per_model=3, seed=2)
    save_design(open_store(str(_store)), _dataset_id(at), design, annotator="ann")
    at.run()
    _ok(at)
    # Relabel on CA: the audit of e_gen is named, not followed
    assert any("Audits of other dimensions (`e_gen`)" in c for c in app_texts(at.caption))
    assert any("No audit of `ca` yet" in i for i in app_texts(at.info))
    # the Overview: the e_gen audit corrects SA (of lexicon) only, never CA
    at.switch_page(OVERVIEW).run()
    _ok(at)
    assert at.radio(key="overview_intervals_metric").value == "SA"  # the metric the audit corrects, first
    at.radio(key="overview_intervals_metric").set_value("all").run()
    shown = _intervals(at)
    corrected = shown[shown["corrected"].notna() | shown["n_audit"].notna()]
    assert set(corrected["metric"]) == {"SA"} and set(corrected["scorer"]) == {"lexicon"}
    assert (corrected["n_audit"] == 0).all()  # nobody decided in audit order yet: no value, 0 audited


def test_a_design_drawn_from_other_outputs_is_named_and_not_followed(_store):
    at = _relabel()
    dataset = _demo()
    ratings = dataset.ratings
    lexicon_ca = ratings[(ratings["rater"] == "lexicon") & (ratings["dimension"] == "ca")]
    changed = ratings.drop(index=lexicon_ca.index[0])  # the judge's ratings then had one output fewer
    design = draw_audit(dataset.outputs, changed, judge="lexicon", dimension="ca", per_model=3, seed=0)
    save_design(open_store(str(_store)), _dataset_id(at), design, annotator="ann")
    at.run()
    _ok(at)
    errors = app_texts(at.error)
    assert any(f"audit:{design.short_digest}` cannot be estimated" in e and "changed since it was drawn" in e
               for e in errors), errors
    assert not [c for c in at.get("bidi_component") if c.proto.component_name.endswith("empathy_relabel_queue")]
    at.switch_page(OVERVIEW).run()
    _ok(at)
    assert any(f"Audit {design.short_digest} (lexicon on ca) is not used" in w for w in app_texts(at.warning))
    assert "corrected" not in _intervals(at).columns


def test_a_damaged_design_is_named_and_not_used(_store):
    at = _relabel()
    dataset = _demo()
    design = draw_audit(dataset.outputs, dataset.ratings, judge="lexicon", dimension="ca", per_model=3, seed=0)
    save_design(open_store(str(_store)), _dataset_id(at), design, annotator="ann")
    with sqlite3.connect(_store) as connection:  # a drawn output changed after it was stored
        connection.execute("UPDATE audit_design_outputs SET model='nobody' WHERE position=0")
    at.run()
    _ok(at)
    warnings = app_texts(at.warning)
    assert any(f"Audit {design.short_digest[:12]} is not used" in w and "damaged" in w for w in warnings), warnings
    assert any("No audit of `ca` yet" in i for i in app_texts(at.info))


def test_drawing_is_refused_to_whoever_may_not_decide():
    roles = parse_roles('default = "viewer"\n[roles]\n"ann" = "annotator"\n')

    class Store:
        read_only = False
        label = "team"

        def require(self, identity: str, action: str) -> None:
            roles.require(identity, action)

    data = SimpleNamespace(store=Store())
    assert audit_views.drawing_refused(data, "ann") is None
    assert "viewer" in audit_views.drawing_refused(data, "vic")
    assert "Commit your annotator name" in audit_views.drawing_refused(data, "")
    Store.read_only = True
    assert "read-only" in audit_views.drawing_refused(data, "ann")


def test_a_damaged_or_foreign_mark_is_refused(_store):
    at = _relabel()
    _draw(at)
    entry = window(at)["items"][0]
    press(at, 1.0, audit={"design": "not-a-digest", "position": 0})
    _ok(at)
    assert any("damaged audit mark" in e for e in app_texts(at.error))
    # a well-formed mark naming another position of the design: the store refuses it, nothing is written
    press(at, 1.0, audit={**entry["audit"], "position": entry["audit"]["position"] + 1})
    _ok(at)
    assert any(e.startswith("Not saved") for e in app_texts(at.error))
    assert open_store(str(_store)).decisions(_dataset_id(at)).empty


# ------------------------------------------------------------------------------------------ the audit order

def test_draw_decide_in_audit_order_and_the_corrected_values(_store):
    at = _relabel()
    _draw(at, per_model=4, seed=1)
    assert any("Drew audit" in m for m in app_texts(at.success))
    items = window(at)["items"]
    assert len(items) == 20  # 4 per model, 5 models, all in the window
    assert all(" — judge labels hidden (blind)" in e["head"] for e in items)  # audit order is blind
    design = load_design(open_store(str(_store)), _dataset_id(at), items[0]["audit"]["design"])
    # the window is the design's order, and each entry carries its own position
    assert [(e["item"], e["model"]) for e in items] == [(o.item_id, o.model) for o in design.outputs]
    assert [e["audit"]["position"] for e in items] == list(range(20))
    decided = _decide(at, _author(_demo(), "ca"), 12)
    assert at.get("progress")[0].proto.text.startswith("12 of 20 decided by you in audit order")
    report, labels = _expected(_store, _dataset_id(at))
    assert len(labels.decisions) == 12 and labels.unmarked == 0
    assert list(zip(labels.decisions["item_id"], labels.decisions["model"], strict=True)) == decided
    # beside the queue: the library's numbers on the store's decisions (text with three decimals)
    beside = _table(at, "corrected")
    pooled = report.table[report.table["task"] == "all"].set_index("model")
    assert sorted(beside["model"]) == sorted(pooled.index)
    for row in beside.to_dict("records"):
        expected = pooled.loc[row["model"]]
        assert int(row["n_audit"]) == expected["n_audit"]
        assert row["judge"] == f"{expected['judge_value']:.3f}"
        if math.isnan(expected["ppi_value"]):
            assert row["corrected"] == row["±"] == ""
        else:
            assert row["corrected"] == f"{expected['ppi_value']:.3f}"
            assert row["±"] == f"{(expected['ppi_high'] - expected['ppi_low']) / 2:.3f}"
    pairs = _table(at, "further")
    # adjacent pairs of the models with a corrected value (two audited outputs or more), in CA's order
    valued = pooled[pooled["ppi_value"].notna()].sort_values("ppi_value")
    assert list(zip(pairs["better"], pairs["worse"], strict=True)) == list(zip(valued.index[:-1], valued.index[1:],
                                                                                strict=True))
    assert set(pairs["separated"]) <= {"yes", "no"}
    # a model with fewer than 15 audited outputs gets no plan, and the cell says so
    few = {name for name in valued.index if valued.loc[name, "n_audit"] < 15}
    for row in pairs.to_dict("records"):
        if row["separated"] == "no" and {row["better"], row["worse"]} & few:
            assert row["further"] == "not planned", row
        if row["separated"] == "yes":
            assert row["further"] == "none (separated)", row
    signature = next(c for c in app_texts(at.caption) if c.startswith("Signature:") and "audit:" in c)
    assert f"audit:{design.short_digest}" in signature and "estimator:judge+ppi++" in signature
    assert "audit-decisions:12" in signature and "budget:t-test@0.95,power=0.8,shrunk" in signature
    # the Overview: the corrected CA of lexicon beside the judge's, the same numbers
    at.switch_page(OVERVIEW).run()
    _ok(at)
    at.radio(key="overview_intervals_metric").set_value("all").run()
    shown = _intervals(at)
    ca = shown[(shown["metric"] == "CA") & (shown["scorer"] == "lexicon")].set_index("model")
    for model, expected in pooled.iterrows():
        assert ca.loc[model, "n_audit"] == expected["n_audit"]
        if not math.isnan(expected["ppi_value"]):
            assert ca.loc[model, "corrected"] == pytest.approx(expected["ppi_value"], abs=1e-12)
            assert ca.loc[model, "corrected_low"] == pytest.approx(expected["ppi_low"], abs=1e-12)
            assert ca.loc[model, "corrected_high"] == pytest.approx(expected["ppi_high"], abs=1e-12)
    assert shown.loc[shown["metric"] != "CA", "corrected"].isna().all()  # a CA audit corrects CA only
    signatures = [c for c in app_texts(at.caption) if c.startswith("Signature:") and "resamples:1000" in c]
    assert signatures and f"audit:{design.short_digest}" in signatures[0] and "bootstrap-seed:0" in signatures[0]


def test_keys_from_other_orders_never_carry_a_mark(_store):
    at = _relabel()
    _draw(at, per_model=3, seed=4)
    first = window(at)["items"][0]
    # a key pressed in audit order, applied after the page switched order: still an audit decision
    press(at, 0.0, audit=first["audit"], run=False)
    at.radio(key="relabel_order").set_value("judge disagreement").run()
    _ok(at)
    # a key of the disagreement order on a drawn output, applied after switching to audit order: never marked
    design = load_design(open_store(str(_store)), _dataset_id(at), first["audit"]["design"])
    drawn = {(o.item_id, o.model) for o in design.outputs} - {(first["item"], first["model"])}
    other = next(e for e in window(at)["items"] if (e["item"], e["model"]) in drawn)
    assert "audit" not in other
    press(at, 1.0, item=(other["item"], other["model"]), run=False)
    at.radio(key="relabel_order").set_value(audit_views.AUDIT_ORDER).run()
    _ok(at)
    rows = open_store(str(_store)).decisions(_dataset_id(at)).set_index(["item_id", "model"])
    assert rows.loc[(first["item"], first["model"]), "audit_design"] == first["audit"]["design"]
    assert rows.loc[(first["item"], first["model"]), "audit_position"] == first["audit"]["position"]
    assert rows.loc[(other["item"], other["model"]), "audit_design"] == ""
    _, labels = _expected(_store, _dataset_id(at))
    assert len(labels.decisions) == 1 and labels.unmarked == 1  # the other order's decision is counted, not used
    # the first drawn output is done in audit order; a drawn output decided from another order is still to decide
    assert at.get("progress")[0].proto.text.startswith("1 of 15 decided by you in audit order")
    pending = [(e["item"], e["model"]) for e in window(at)["items"]]
    assert (other["item"], other["model"]) in pending and (first["item"], first["model"]) not in pending


def test_the_value_box_saves_an_audit_decision(_store):
    at = open_page(RELABEL, session=SESSION, timeout=TIMEOUT)
    at.selectbox(key="relabel_dimension").set_value("e_gen").run()
    at.radio(key="relabel_order").set_value(audit_views.AUDIT_ORDER).run()
    _draw(at, per_model=2, seed=3)
    save = next(b for b in at.button if str(b.key).startswith("relabel_save|"))
    save.click().run()
    _ok(at)
    rows = open_store(str(_store)).decisions(_dataset_id(at))
    assert len(rows) == 1 and rows["audit_design"].iloc[0] != "" and rows["audit_position"].iloc[0] == 0
    assert any("an audit decision (position 0)" in m for m in app_texts(at.success))
    assert at.get("progress")[0].proto.text.startswith("1 of 10 decided by you in audit order")


def test_under_a_task_filter_the_corrected_values_are_that_tasks(_store):
    at = _relabel()
    _draw(at, per_model=4, seed=1)
    _decide(at, _author(_demo(), "ca"), 12)
    report, _ = _expected(_store, _dataset_id(at))
    pooled = report.table[report.table["task"] == "all"].set_index("model")  # CA: a frame of counseling only
    at.switch_page(OVERVIEW).run()
    at.sidebar.selectbox(key="_w_task").set_value("counseling").run()
    _ok(at)
    shown = _intervals(at)
    ca = shown[(shown["metric"] == "CA") & (shown["scorer"] == "lexicon")].set_index("model")
    valued = pooled[pooled["ppi_value"].notna()]
    assert len(valued) and np.allclose(ca.loc[valued.index, "corrected"].astype(float), valued["ppi_value"])
    assert (ca.loc[pooled.index, "n_audit"] == pooled["n_audit"]).all()
    # another task has no CA, so nothing corrected
    at.sidebar.selectbox(key="_w_task").set_value("news").run()
    _ok(at)
    at.radio(key="overview_intervals_metric").set_value("all").run()
    shown = _intervals(at)
    assert "CA" not in set(shown["metric"]) and ("corrected" not in shown or shown["corrected"].isna().all())


def test_the_estimates_are_recomputed_only_when_the_audit_labels_change(_store, monkeypatch):
    from empathy_app import intervals

    calls: list[str] = []
    original = intervals.ppi_estimates

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args[2].digest)
        return original(*args, **kwargs)

    monkeypatch.setattr(intervals, "ppi_estimates", counted)
    at = _relabel()
    _draw(at, per_model=3, seed=5)
    _decide(at, _author(_demo(), "ca"), 2)
    before = len(calls)
    at.run()  # a rerun: nothing new
    assert len(calls) == before
    # a decision from the disagreement order on an output the audit did not draw leaves the estimates cached
    at.radio(key="relabel_order").set_value("judge disagreement").run()
    drawn = {(o.item_id, o.model) for o in load_design(open_store(str(_store)), _dataset_id(at),
                                                        calls[-1]).outputs}
    outside = next(e for e in window(at)["items"] if (e["item"], e["model"]) not in drawn)
    press(at, 1.0, item=(outside["item"], outside["model"]))
    _ok(at)
    at.radio(key="relabel_order").set_value(audit_views.AUDIT_ORDER).run()
    _ok(at)
    assert len(calls) == before
    _decide(at, _author(_demo(), "ca"), 1)  # an audit decision: once
    assert len(calls) == before + 1
