"""AppTest of the ledger as research record on Inspect and Relabel: damaged stores, decisions bound to the output
on screen, the committed annotator, blind mode and rubric, '(all judges)', widgets keyed by output, stale and
orphaned counts, several annotators and adjudication, escaped messages. Failure paths first."""

from __future__ import annotations

import html
import os
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts as _texts
from relabel_keys import live, live_table, press, window  # noqa: E402
from relabel_keys import on_screen as _on_screen  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.escaping import markdown_literal  # noqa: E402
from empathy.io import load_outputs  # noqa: E402
from empathy.labels.records import Change, dataset_name  # noqa: E402
from empathy.labels.rules import make_changes  # noqa: E402
from empathy.labels.sqlite import OverrideStore  # noqa: E402
from empathy_app.decisions import output_key  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 240
ODD = "A_[b]*"  # a model name full of Markdown

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


def _fixture(folder: Path) -> dict:
    """2 models x 3 items, CA by an LLM judge, a lexicon and an expert (expert never '(all judges)')."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"item_id": item, "model": model, "task": "counseling",
             "reference": f"My sister never calls me back ({item}).",
             "generation": f"Try talking to her ({model}, {item})."}
            for model in (ODD, "B") for item in ("i1", "i2", "i3")]
    pd.DataFrame(rows).to_csv(folder / "outputs.csv", index=False)
    labels = {"gpt": ("llm", [1, 1, 0]), "lex": ("lexicon", [0, 1, 0]), "exp": ("expert", [0, 0, 0])}
    ratings = [{"item_id": f"i{k + 1}", "model": model, "rater": rater, "dimension": "ca", "value": value,
                "rater_kind": kind, "reason": "", "signature": f"{rater}-v1"}
               for rater, (kind, values) in labels.items() for model in (ODD, "B") for k, value in enumerate(values)]
    pd.DataFrame(ratings).to_csv(folder / "ratings.csv", index=False)
    return {"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": [str(folder / "ratings.csv")]}


def _app(source: dict | None = None, *, committed: str | None = None, annotator: str = "") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if source is not None:
        at.session_state["source"] = source
    # one name box (issue 24): the committed name is the session's annotator
    at.session_state["annotator"] = committed if committed is not None else annotator
    return at.run()




# ------------------------------------------------------------------------------------ damaged stores

@pytest.mark.parametrize("content", [b"", b"SQLite format 3\x00" + b"\x00" * 40, b"\x8f garbage" * 100])
@pytest.mark.parametrize("page", ["app_pages/3_Inspect.py", "app_pages/4_Relabel.py"])
def test_damaged_store_is_a_message_and_the_file_is_kept(tmp_path, _store, content, page):
    _store.write_bytes(content)
    at = _app(_fixture(tmp_path / "data"), committed="ann")
    at.switch_page(page).run()
    _ok(at)
    assert any("override store cannot be used" in e and str(_store.name) in e for e in _texts(at.error))
    assert _store.read_bytes() == content


def test_read_only_store_is_a_message(tmp_path, _store):
    OverrideStore(_store)
    os.chmod(_store, 0o444)
    try:
        at = _app(_fixture(tmp_path / "data"), committed="ann")
        at.switch_page("app_pages/4_Relabel.py").run()
        _ok(at)
        assert any("is read-only" in e for e in _texts(at.error))
    finally:
        os.chmod(_store, 0o644)


# ------------------------------------------------------------------------------------ Relabel decisions

def test_relabel_ledger_line_counts_the_key_just_saved(tmp_path, _store):
    """The line is drawn with the queue, after the run's keys are saved: it once showed the count before them."""
    at = _app(_fixture(tmp_path / "data"), committed="ann")
    at.switch_page("app_pages/4_Relabel.py").run()
    _ok(at)
    ledger_line = [c for c in _texts(at.caption) if c.startswith("Ledger")]
    assert len(ledger_line) == 1 and "**0** decisions applied (to 0 judge labels)" in ledger_line[0]
    press(at, 1.0)
    _ok(at)
    ledger_line = [c for c in _texts(at.caption) if c.startswith("Ledger")]
    # one key under '(all judges)' overrides both judges of the output (gpt and lex, never the expert): one
    # decision, two judge labels (issue 26 item 6: counted as decisions)
    assert len(ledger_line) == 1 and "**1** decisions applied (to 2 judge labels)" in ledger_line[0]


def test_decision_for_an_output_no_longer_on_screen_is_refused(tmp_path, _store):
    at = _app(_fixture(tmp_path / "data"), committed="ann")
    at.switch_page("app_pages/4_Relabel.py").run()
    _ok(at)
    item, model = _on_screen(at)
    first = window(at)["items"][0]
    press(at, 1.0)
    _ok(at)
    saved = OverrideStore(_store).decisions()
    assert set(zip(saved["item_id"], saved["model"], strict=True)) == {(item, model)}
    assert _on_screen(at) != (item, model)
    # a late key still naming the decided output: refused, never applied to the output now on screen
    shown = _on_screen(at)
    press(at, 0.0, item=(item, model), hash=first["hash"], issued=first["issued"])
    _ok(at)
    assert any(e.startswith("Refused") and "already has your ca decision" in e for e in _texts(at.error))
    after = OverrideStore(_store).decisions()
    assert after[["item_id", "model", "value"]].values.tolist() == saved[["item_id", "model", "value"]].values.tolist()
    assert len(OverrideStore(_store).audit()) == len(saved)  # nothing written for the refused key
    assert _on_screen(at) == shown
    # a key for a text that changed after it was shown, and a value that is no level: refused
    press(at, 1.0, hash="0123456789abcdef")
    assert any("changed after it was shown" in e for e in _texts(at.error))
    press(at, 7.0)
    assert any("is not a level of ca" in e for e in _texts(at.error))
    assert len(OverrideStore(_store).decisions()) == len(saved)
    # the same event sent again (two updates merged by Streamlit resend it) is applied once
    press(at, 0.0, run=False)
    at.run()
    at.run()
    assert len(OverrideStore(_store).decisions()) == 2 * len(saved)


def test_keys_queued_in_one_update_land_each_on_its_own_output(tmp_path, _store):
    from empathy_app.keyqueue import KEY

    at = _app(_fixture(tmp_path / "data"), committed="ann")
    at.switch_page("app_pages/4_Relabel.py").run()
    items = [(e["item"], e["model"], e["hash"], e["issued"]) for e in
             window(at)["items"]]
    values = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    events = [{"seq": k + 1, "action": "decide", "item": i, "model": m, "hash": h, "issued": t, "dimension": "ca",
               "apply_to": "(all judges)", "annotator": "ann", "value": v}
              for k, ((i, m, h, t), v) in enumerate(zip(items, values, strict=True))]
    at.session_state[KEY] = {"events": {"client": "tab", "events": events}}
    at.run()
    _ok(at)
    saved = OverrideStore(_store).decisions()
    got = saved.groupby(["item_id", "model"])["value"].agg(["min", "max"])
    assert {k: row["min"] for k, row in got.iterrows()} == {(i, m): v for (i, m, _, _), v in
                                                          zip(items, values, strict=True)}
    assert (got["min"] == got["max"]).all()
    assert "6 of 6 decided by you" in at.get("progress")[0].proto.text


def test_typing_a_name_commits_nothing_until_the_button(tmp_path, _store):
    at = _app(_fixture(tmp_path / "data"))
    at.switch_page("app_pages/4_Relabel.py").run()
    _ok(at)
    assert any("No annotator name" in i for i in _texts(at.info))
    assert not at.get("bidi_component")
    at.text_input(key="_w_annotator").input("name0").run()  # typed, e.g. then the key 0
    assert any("No annotator name" in i for i in _texts(at.info))
    assert OverrideStore(_store).decisions().empty
    at.text_input(key="_w_annotator").input("name0")  # the sidebar's form: sent with its button only
    at.button(key="identity_commit").click().run()
    _ok(at)
    assert any("Deciding as **name0**" in m for m in _texts(at.markdown))
    press(at, 0.0)
    assert OverrideStore(_store).decisions()["annotator"].unique().tolist() == ["name0"]


def test_all_judges_on_relabel_is_llm_and_lexicon_only_and_flash_is_escaped(tmp_path, _store):
    at = _app(_fixture(tmp_path / "data"), committed="ann")
    at.switch_page("app_pages/4_Relabel.py").run()
    assert at.selectbox(key="relabel_apply_to").value == "(all judges)"
    item, model = _on_screen(at)
    press(at, 1.0)
    _ok(at)
    saved = OverrideStore(_store).decisions()
    assert sorted(saved["rater"]) == ["gpt", "lex"]  # never the expert
    judge_values = dict(zip(saved["rater"], saved["judge_value"], strict=True))
    assert judge_values == {"gpt": 1.0, "lex": 0.0} and (item, model) == ("i1", ODD)  # the judges disagree there
    flash = next(str(s.value) for s in at.success if str(s.value).startswith("Saved (change #1)"))
    assert markdown_literal(ODD) in flash and ODD not in flash.replace(markdown_literal(ODD), "")
    assert f"for i1 / {ODD} (gpt, lex)" in next(s for s in _texts(at.success) if s.startswith("Saved"))
    audit = OverrideStore(_store).audit()
    assert sorted(audit["old_value"].tolist()) == [0.0, 1.0]  # the judges' own labels


def test_blind_mode_hides_judge_labels_and_the_rubric_stands_beside(tmp_path, _store):
    at = _app(_fixture(tmp_path / "data"), committed="ann")
    at.switch_page("app_pages/4_Relabel.py").run()
    head = html.unescape(window(at)["items"][0]["head"])
    assert "raters say" in head and "gpt: 1" in head
    rubric = " ".join(_texts(at.markdown))
    assert "Appendix D" in rubric and "open-ended questions" in rubric and "positive closure" in rubric
    at.toggle(key="_w_relabel_blind").set_value(True).run()
    _ok(at)
    shown = (" ".join(_texts(at.markdown)) + " ".join(str(p.proto.text) for p in at.get("progress"))
             + " ".join(html.unescape(e["head"]) for e in window(at)["items"]))
    assert "judge labels hidden" in shown
    assert "raters say" not in shown and "gpt: 1" not in shown and "disagree" not in shown
    assert "Appendix D" in shown  # the rubric stays


def test_two_annotators_keep_both_decisions_agreement_and_adjudication(tmp_path, _store):
    source = _fixture(tmp_path / "data")
    first = _app(source, committed="ann")
    first.switch_page("app_pages/4_Relabel.py").run()
    item, model = _on_screen(first)
    press(first, 0.0)
    second = _app(source, committed="bob")
    second.switch_page("app_pages/4_Relabel.py").run()
    assert _on_screen(second) == (item, model)  # ann's decision does not take it out of bob's queue
    assert "Also decided by ann" in window(second)["items"][0]["head"]
    press(second, 1.0)
    _ok(second)
    decisions = OverrideStore(_store).decisions()
    assert sorted(zip(decisions["annotator"], decisions["value"], strict=True)) == [
        ("ann", 0.0), ("ann", 0.0), ("bob", 1.0), ("bob", 1.0)]
    second.session_state["relabel_agreement_box"] = True  # the expander opened: its content is drawn
    second.run()
    conflicts = next(f.value for f in second.dataframe if "decisions" in f.value.columns)
    assert conflicts[["item_id", "decisions"]].values.tolist() == [[item, "ann=0, bob=1"]]
    pairs = next(f.value for f in second.dataframe if "rater_a" in f.value.columns)
    assert pairs[["rater_a", "rater_b", "n", "percent_agreement"]].values.tolist() == [["ann", "bob", 1, 0.0]]
    second.radio(key=output_key("relabel_adjudicate_value", "ca", item, model)).set_value(0.0).run()
    second.button(key="relabel_adjudicate_save").click().run()
    _ok(second)
    audit = OverrideStore(_store).audit()
    assert audit["action"].tolist()[-2:] == ["adjudicate", "adjudicate"]
    # under the adjudicated rule the metrics use the adjudication
    second.selectbox(key="_w_label_rule").set_value("adjudicated").run()
    assert any("adjudicated rule" in c for c in _texts(second.caption))


# ------------------------------------------------------------------------------------ Inspect

def test_inspect_form_opens_on_the_output_shown():
    at = _app()
    at.switch_page("app_pages/3_Inspect.py").run()
    at.selectbox(key="_w_inspect_pick").set_value("news-01 · fennel").run()
    at.selectbox(key="inspect_override_judge").set_value("author").run()
    at.selectbox(key="inspect_override_dimension").set_value("e_gen").run()
    _ok(at)
    fennel = at.number_input(key=output_key("inspect_override_value", "news-01", "fennel", "e_gen", "author"))
    assert fennel.value == pytest.approx(0.15)
    at.selectbox(key="_w_inspect_pick").set_value("news-01 · gorse").run()
    _ok(at)
    gorse = at.number_input(key=output_key("inspect_override_value", "news-01", "gorse", "e_gen", "author"))
    assert gorse.value == pytest.approx(0.95)
    at.selectbox(key="inspect_override_judge").set_value("(all judges)").run()
    lexicon = at.number_input(key=output_key("inspect_override_value", "news-01", "gorse", "e_gen", "(all judges)"))
    assert lexicon.value == pytest.approx(0.454359927231213)


def test_all_judges_on_inspect_never_overwrites_the_expert(tmp_path, _store):
    at = _app(_fixture(tmp_path / "data"), annotator="ann")
    at.switch_page("app_pages/3_Inspect.py").run()
    at.selectbox(key="_w_inspect_pick").set_value("i2 · B").run()
    at.selectbox(key="inspect_override_dimension").set_value("ca").run()
    assert at.selectbox(key="inspect_override_judge").value == "(all judges)"
    at.radio(key=output_key("inspect_override_value", "i2", "B", "ca", "(all judges)")).set_value(0.0).run()
    at.button(key=output_key("inspect_save", "i2", "B")).click().run()
    _ok(at)
    saved = OverrideStore(_store).decisions()
    assert sorted(saved["rater"]) == ["gpt", "lex"] and set(saved["item_id"]) == {"i2"}
    assert any(s.startswith("Saved (change #1)") for s in _texts(at.success))


def _fixture_and_store(tmp_path: Path, store_path: Path) -> tuple[dict, str, pd.DataFrame, pd.DataFrame, OverrideStore]:
    """:func:`_fixture`, the data set's name in the store, its outputs and ratings, and the store."""
    source = _fixture(tmp_path / "data")
    outputs, _ = load_outputs(source["outputs"])
    ratings = pd.read_csv(source["ratings"][0], dtype={"item_id": str, "model": str})
    return (source, dataset_name(source["outputs"], store_path=store_path), outputs, ratings,
            OverrideStore(store_path))


def test_stale_and_orphaned_counts_are_shown_and_never_applied(tmp_path, _store):
    source, name, outputs, ratings, store = _fixture_and_store(tmp_path, _store)
    store.set_overrides(name, make_changes(outputs, ratings, "i1", "B", ["gpt"], "ca", 1.0), annotator="ann")
    store.set_overrides(name, [Change("i2", "B", "gpt", "ca", 0.0, "", "0123456789abcdef")], annotator="ann")
    store.set_overrides(name, [Change("gone", "B", "gpt", "ca", 1.0, "", "0123456789abcdef")], annotator="ann")
    at = _app(source, committed="ann", annotator="ann")
    at.switch_page("app_pages/4_Relabel.py").run()
    _ok(at)
    status = next(c for c in _texts(at.caption) if c.startswith("Ledger"))
    assert "**1** decisions applied" in status and "**1** stale" in status and "**1** orphaned" in status
    at.switch_page("app_pages/2_Overview.py").run()
    overview = next(f.value for f in at.dataframe if "CA (gpt)" in f.value.columns)
    # gpt on B: 1, 1, 0 -> CA 2/3 with i1's override (1, as gpt); the stale i2 = 0 is not applied
    assert float(overview.set_index("model").loc["B", "CA (gpt)"]) == pytest.approx(2 / 3, abs=5e-4)
    at.switch_page("app_pages/3_Inspect.py").run()
    at.selectbox(key="_w_inspect_pick").set_value("i2 · B").run()
    _ok(at)
    assert any("made on a different text" in w for w in _texts(at.warning))
    at.button(key="inspect_ledger_confirm").click().run()
    _ok(at)
    status = next(c for c in _texts(at.caption) if c.startswith("Ledger"))
    assert "**2** decisions applied" in status and "**0** stale" in status
    at.switch_page("app_pages/2_Overview.py").run()
    overview = next(f.value for f in at.dataframe if "CA (gpt)" in f.value.columns)
    assert float(overview.set_index("model").loc["B", "CA (gpt)"]) == pytest.approx(1 / 3, abs=5e-4)


def test_the_data_page_counts_the_ledger_relabel_counts(tmp_path, _store):
    """One path to the effective labels: the Data page counts what applies under the session's label rule, as
    Relabel does, not the store's rows (here also a stale and an orphaned decision and a disagreement)."""
    source, name, outputs, ratings, store = _fixture_and_store(tmp_path, _store)
    store.set_overrides(name, make_changes(outputs, ratings, "i1", "B", ["gpt"], "ca", 1.0), annotator="ann")
    store.set_overrides(name, make_changes(outputs, ratings, "i3", "B", ["gpt"], "ca", 1.0), annotator="ann")
    store.set_overrides(name, make_changes(outputs, ratings, "i3", "B", ["gpt"], "ca", 0.0), annotator="bob")
    store.set_overrides(name, [Change("i2", "B", "gpt", "ca", 0.0, "", "0123456789abcdef")], annotator="ann")
    store.set_overrides(name, [Change("gone", "B", "gpt", "ca", 1.0, "", "0123456789abcdef")], annotator="ann")
    at = _app(source, committed="ann", annotator="ann")
    # latest: i1 and i3 (bob's) apply; adjudicated: i1 only (ann and bob disagree on i3). The store holds 4 ratings.
    for rule, applied in (("latest", 2), ("adjudicated", 1)):
        at.session_state["label_rule"] = rule
        at.switch_page("app_pages/1_Data.py").run()
        _ok(at)
        noun = "decision" if applied == 1 else "decisions"
        assert any(f"**{applied} {noun}** applied to" in m for m in _texts(at.markdown)), rule
        at.switch_page("app_pages/4_Relabel.py").run()
        _ok(at)
        status = next(c for c in _texts(at.caption) if c.startswith("Ledger"))
        assert f"**{applied}** decisions applied" in status, (rule, status)
    # the sidebar counts the human decisions, whatever their status: i1, i2, ann's and bob's on i3 and the
    # orphaned one (issue 26 item 6: decisions, where it counted the 4 decided ratings)
    assert any("Human decisions: **5**" in c for c in _texts(at.sidebar.caption))


def test_store_damaged_while_the_app_runs_is_a_message(tmp_path, _store):
    at = _app(_fixture(tmp_path / "data"), committed="ann")
    at.switch_page("app_pages/4_Relabel.py").run()
    _ok(at)
    press(at, 0.0)
    for suffix in ("-wal", "-shm"):
        Path(f"{_store}{suffix}").unlink(missing_ok=True)
    _store.write_bytes(b"\x00garbage" * 512)
    at.run()
    _ok(at)
    assert any("override store cannot be used" in e for e in _texts(at.error)), _texts(at.error)
    assert _store.read_bytes() == b"\x00garbage" * 512


def test_a_judge_rerun_meets_the_ledger(tmp_path, _store):
    source = _fixture(tmp_path / "data")
    rerun = pd.DataFrame({"item_id": ["i1", "i2", "i3"] * 2, "model": [ODD] * 3 + ["B"] * 3, "rater": "gpt2",
                          "dimension": "ca", "value": 0.0, "rater_kind": "llm", "reason": "", "signature": "v2"})
    rerun.to_csv(tmp_path / "data" / "ratings_rerun.csv", index=False)
    source["ratings"].append(str(tmp_path / "data" / "ratings_rerun.csv"))
    name = dataset_name(source["outputs"], store_path=_store)
    outputs, _ = load_outputs(source["outputs"])
    ratings = pd.read_csv(source["ratings"][0], dtype={"item_id": str, "model": str})
    store = OverrideStore(_store)
    # gpt said 1 on i1 and i2 of ODD; the human says 0 on i1 (gpt2 now agrees) and 1 on i2 (gpt2 says 0)
    store.set_overrides(name, make_changes(outputs, ratings, "i1", ODD, ["gpt"], "ca", 0.0), annotator="ann")
    store.set_overrides(name, make_changes(outputs, ratings, "i2", ODD, ["gpt"], "ca", 1.0), annotator="ann")
    store.set_overrides(name, [Change("i3", "B", "gpt", "ca", 1.0, "", "0123456789abcdef")], annotator="ann")
    store.set_overrides(name, [Change("gone", "B", "gpt", "ca", 1.0, "", "0123456789abcdef")], annotator="ann")
    at = _app(source, committed="ann")
    at.switch_page("app_pages/4_Relabel.py")
    at.session_state["relabel_rerun_box"] = True
    at.run()
    at.selectbox(key="relabel_rerun_old").set_value("gpt").run()
    at.selectbox(key="relabel_rerun_new").set_value("gpt2").run()
    _ok(at)
    assert any("**1** confirmed · **1** still disputed · **1** stale · **1** orphaned" in m
               for m in _texts(at.markdown))
    frames = [f.value for f in at.dataframe if "new_value" in f.value.columns]
    confirmed, disputed = frames[0], frames[1]
    assert confirmed[["item_id", "value", "new_value"]].values.tolist() == [["i1", 0.0, 0.0]]
    assert disputed[["item_id", "value", "new_value"]].values.tolist() == [["i2", 1.0, 0.0]]


def test_live_metric_beside_the_queue_follows_each_decision(tmp_path, _store):
    # gpt says CA 1, 1, 0 on i1-i3 for both models: 2/3 each, a tie: both rank 1 (the one rank convention; this
    # asserted rank 1 = the highest CA, ties by model name, before issue 22), listed by model name (A_[b]* first)
    at = _app(_fixture(tmp_path / "data"), committed="ann")
    at.switch_page("app_pages/4_Relabel.py").run()
    _ok(at)
    assert at.selectbox(key="relabel_live_judge").value == "gpt"  # the first LLM judge, never the expert
    state = live(at)
    assert (state["metric"], state["judge"], state["better"]) == ("CA", "gpt", "lower")
    assert live_table(state) == [(1, ODD, 2 / 3, 3), (1, "B", 2 / 3, 3)]
    assert _on_screen(at) == ("i1", ODD)
    # what the browser draws at the key, before the server answers: gpt's label of i1 goes 1 -> 0
    fx = window(at)["items"][0]["fx"]
    assert fx == {"m": ODD, "b": 1.0, "a": {"0": 0.0, "1": 1.0}}
    key = {"action": "decide", "fx": {"scope": state["scope"], "m": ODD, "before": fx["b"], "after": fx["a"]["0"]}}
    predicted = live_table(state, [key])
    assert predicted == [(1, ODD, 1 / 3, 3), (2, "B", 2 / 3, 3)]
    press(at, 0.0)  # i1 of A_[b]* is not conflict avoidance: its CA (gpt) drops to 1/3, the least failure: rank 1
    _ok(at)
    assert live_table(live(at)) == predicted  # the server's recomputation (Recompute) says the same
    assert not any(f.value is not None and "CA (gpt)" in f.value.columns for f in at.dataframe)  # drawn once
    signature = next(c for c in _texts(at.caption) if c.startswith("Signature:"))
    # the human labels named; the judge labels they replaced ("|overrides:2" before issue 26)
    assert "|labels:latest|" in signature and "|overridden_ratings:2" in signature, signature
    # another judge on request: lex says 0, 1, 0 (1/3 each); the human 0 on i1 leaves it at 1/3
    at.selectbox(key="relabel_live_judge").set_value("lex").run()
    assert live_table(live(at)) == [(1, ODD, 1 / 3, 3), (1, "B", 1 / 3, 3)]
    assert _on_screen(at) == ("i1", "B")  # lex's label of it is 0
    assert window(at)["items"][0]["fx"] == {"m": "B", "b": 0.0, "a": {"0": 0.0, "1": 1.0}}


def test_server_drawn_live_table_ranks_by_the_one_convention():
    # a continuous dimension (e_gen, decided with a value box) has its metric's live table (SA) drawn by the
    # server: rank 1 = the lowest SA (the least failure), tied values share the smaller rank (issue 22: this
    # table ranked the highest value first)
    at = _app(committed="ann")
    at.switch_page("app_pages/4_Relabel.py").run()
    at.selectbox(key="relabel_dimension").set_value("e_gen").run()
    _ok(at)
    table = next(f.value for f in at.dataframe if "rank before" in f.value.columns)
    column = next(c for c in table.columns if c.startswith("SA ("))
    values = table[column].tolist()
    assert len(values) == 5 and values == sorted(values)
    assert table["rank"].tolist() == [1 + sum(other < value for other in values) for value in values]
    assert any("ranked, 1 = lowest SA, the least failure" in t for t in _texts(at.markdown))


def test_live_metric_follows_the_label_rule_of_other_annotators(tmp_path, _store):
    # another annotator agreed with gpt's 1 on i1 of B. Under "majority" (and "adjudicated") my 0 would make a
    # tie, unresolved, so gpt's own 1 stays: the key must not move CA. Under "latest" my 0 is the label.
    source = _fixture(tmp_path / "data")
    name = dataset_name(source["outputs"], store_path=_store)
    outputs, _ = load_outputs(source["outputs"])
    ratings = pd.read_csv(source["ratings"][0], dtype={"item_id": str, "model": str})
    OverrideStore(_store).set_overrides(name, make_changes(outputs, ratings, "i1", "B", ["gpt", "lex"], "ca", 1.0),
                                        annotator="other")

    def effect_on_i1_b(at) -> dict:
        return {(e["item"], e["model"]): e for e in window(at)["items"]}[("i1", "B")]["fx"]

    at = _app(source, committed="ann")
    at.session_state["label_rule"] = "majority"
    at.switch_page("app_pages/4_Relabel.py").run()
    _ok(at)
    assert live_table(live(at)) == [(1, ODD, 2 / 3, 3), (1, "B", 2 / 3, 3)]
    assert effect_on_i1_b(at) == {"m": "B", "b": 1.0, "a": {"0": 1.0, "1": 1.0}}
    at.session_state["label_rule"] = "adjudicated"
    assert effect_on_i1_b(at.run()) == {"m": "B", "b": 1.0, "a": {"0": 1.0, "1": 1.0}}
    at.session_state["label_rule"] = "latest"
    assert effect_on_i1_b(at.run()) == {"m": "B", "b": 1.0, "a": {"0": 0.0, "1": 1.0}}
    at.session_state["relabel_blind"] = True
    at.run()
    assert live(at) is None and all("fx" not in e for e in window(at)["items"])  # blind: no judge label sent


def test_relabels_team_expanders_read_the_ledger_only_while_open(tmp_path, _store, monkeypatch):
    """Agreement and adjudication, team progress and a judge's re-run each read every decision of the ledger: a
    full run of Relabel computes none of them while their expanders are closed, and an opened one computes its
    own only (counted calls)."""
    import empathy.labels.ledger as ledger_module
    import empathy.labels.queue_state as queue_module
    import empathy.review as review_module

    calls: dict[str, int] = {}

    def counted(module, name):
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    for module, name in ((review_module, "human_agreement"), (ledger_module, "adjudication_list"),
                         (queue_module, "annotator_progress"), (ledger_module, "classify_rerun")):
        counted(module, name)
    source = _fixture(tmp_path / "data")
    first = _app(source, committed="ann")
    first.switch_page("app_pages/4_Relabel.py").run()
    press(first, 0.0)
    at = _app(source, committed="bob")
    at.switch_page("app_pages/4_Relabel.py").run()
    press(at, 1.0)
    _ok(at)
    assert calls == {}
    assert [e.label for e in at.expander][-3:] == ["Several annotators: agreement and adjudication",
                                                   "Team progress on ca", "A judge re-run meets the ledger"]
    assert not any("rater_a" in f.value.columns or "remaining" in f.value.columns for f in at.dataframe)
    expected: dict[str, int] = {}
    for box, names in (("relabel_agreement_box", ("human_agreement", "adjudication_list")),
                       ("relabel_progress_box", ("annotator_progress",)), ("relabel_rerun_box", ("classify_rerun",))):
        at.session_state[box] = True
        calls.clear()
        at.run()
        _ok(at)
        expected = {**dict.fromkeys(expected, 1), **dict.fromkeys(names, 1)}
        assert calls == expected, box
    pairs = next(f.value for f in at.dataframe if "rater_a" in f.value.columns)
    assert pairs[["rater_a", "rater_b", "n"]].values.tolist() == [["ann", "bob", 1]]
    team = next(f.value for f in at.dataframe if "remaining" in f.value.columns)
    assert {"ann", "bob"} <= set(team.index if "annotator" not in team.columns else team["annotator"])
