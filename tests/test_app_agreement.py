"""AppTest of one truth for agreement and of counts in decisions (issue 26 items 5 and 6).

Table 6 follows the sidebar's "Include human overrides" on every page and says which labels it rests on; a
decision made for "(all judges)" writes the same human label into both judges of a pair, which the row warns
about. Wherever a person reads a count, one decision applied to two judges is one decision (two judge labels).
"""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts as _texts  # noqa: E402
from relabel_keys import on_screen, press  # noqa: E402
from test_app import _app, _dataframe_with, _path_source, _write_fixture  # noqa: E402

from empathy.labels.rules import effective_overrides  # noqa: E402
from empathy.labels.sqlite import OverrideStore  # noqa: E402

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


def _ca_row(at) -> dict:
    pairs = _dataframe_with(at, "scorer_a").set_index(["metric", "scorer_a", "scorer_b"])
    return pairs.loc[("CA", "j1", "j2")].to_dict()


def _human_label_boxes(at) -> list[str]:
    """The warning boxes about agreement that rests on human labels (not those about an interval)."""
    return [w for w in _texts(at.warning) if "rest partly on human labels" in w]


def test_one_all_judges_decision_is_one_decision_and_its_agreement_is_flagged(tmp_path, _store):
    folder = _write_fixture(tmp_path / "fixture")
    at = _app(_path_source(folder), annotator="ann")
    at.switch_page("app_pages/5_Agreement.py").run()
    _ok(at)
    assert _ca_row(at)["human_decisions"] == 0 and not _human_label_boxes(at)
    # the fixture's few items: rho's interval says it rests on fewer than 10
    assert any("rho interval rests on" in w and "(fewer than 10)" in w for w in _texts(at.warning))
    assert any("Labels: **the judges' own** (no human decision applies" in m for m in _texts(at.markdown))

    # one key on Relabel under "(all judges)": j1 and j2 both get the human label 0 for (i1, B)
    at.session_state["relabel_annotator"] = "ann"
    at.switch_page("app_pages/4_Relabel.py").run()
    assert on_screen(at) == ("i1", "B")
    press(at, 0.0)
    _ok(at)
    stored = effective_overrides(OverrideStore(_store).decisions()).effective
    assert sorted(stored["rater"]) == ["j1", "j2"] and set(stored["value"]) == {0.0}
    ledger = next(c for c in _texts(at.caption) if c.startswith("Ledger"))
    assert "**1** decisions applied (to 2 judge labels)" in ledger

    # counts: one decision, two judge labels, everywhere a person reads them
    at.switch_page("app_pages/2_Overview.py").run()
    _ok(at)
    assert any("Human decisions: **1**" in c for c in _texts(at.sidebar.caption))
    assert any("with 1 human decision** applied (2 judge labels replaced" in c for c in _texts(at.caption))
    signature = next(c.value for c in at.get("code") if "empathy:" in c.value)
    assert "|decisions:1|overridden_ratings:2" in signature
    assert any("Labels: **the judges' with 1 human decision** (2 judge labels replaced, latest rule" in c
               for c in _texts(at.caption))
    at.switch_page("app_pages/1_Data.py").run()
    _ok(at)
    assert any("**1 decision** applied to 2 judge labels" in m for m in _texts(at.markdown))

    # Table 6: with the human label in both judges, the row says so and the page warns
    at.switch_page("app_pages/5_Agreement.py").run()
    _ok(at)
    row = _ca_row(at)
    assert (row["labels"], row["human_decisions"], row["same_human_label"]) == ("with_overrides", 1, 1)
    warning = " ".join(_texts(at.warning))
    assert "1 agreement row rest partly on human labels" in warning
    assert "on 1 output a human decision gave j1 and j2 the same label" in warning
    assert any("Signature: " in c and "|decisions:1|" in c for c in _texts(at.caption))

    # the sidebar's switch off: the judges' own labels, no warning, on this page as on the others
    at.sidebar.toggle(key="_w_with_overrides").set_value(False).run()
    _ok(at)
    row = _ca_row(at)
    assert (row["labels"], row["human_decisions"], row["same_human_label"]) == ("judges", 0, 0)
    assert not _human_label_boxes(at)
    assert any("Labels: **the judges' own** (the sidebar's *Include human overrides* is off; 1 human decision "
               "not counted)" in m for m in _texts(at.markdown))
    assert any("Showing **judge-only** numbers; 1 human decision is ignored" in c for c in _texts(at.caption))


def test_the_workbench_pairs_say_which_labels_and_flag_a_shared_human_label(tmp_path, _store):
    folder = _write_fixture(tmp_path / "fixture")
    at = _app(_path_source(folder), annotator="ann")
    at.session_state["relabel_annotator"] = "ann"
    at.switch_page("app_pages/4_Relabel.py").run()
    press(at, 0.0)
    at.switch_page("app_pages/6_Workbench.py").run()
    _ok(at)
    assert any("Labels: **the judges' with 1 human decision**" in c for c in _texts(at.caption))
    assert any("`ca` / `j1` / `j2`: on 1 output a human decision gave j1 and j2 the same label" in w
               for w in _texts(at.warning)), _texts(at.warning)
