"""AppTest of the Judge report page: a data set with one human says why there is no Alt-Test; on the Kumar et al.
import the page shows each judge's verdict, the per-annotator tests and their signatures, equal to the CLI's."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.paths import shared_dataset  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGE = "app_pages/11_Judge_report.py"
TIMEOUT = 240  # s; a ceiling for a loaded machine, not an expectation
NAME = "kumar2025-empathic-communication"

pytestmark = pytest.mark.usefixtures("_store")


def _frame(at: AppTest, column: str):  # noqa: ANN202 - a pandas DataFrame
    """The first table shown with ``column`` (AppTest does not expose a dataframe's key)."""
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no dataframe with column {column!r}")


def test_one_human_per_output_says_why_there_is_no_alt_test():
    """The demo has one human rater (the author): no dimension can be tested, and the page says what it needs."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page(PAGE).run()
    _ok(at)
    assert any("needs two or more human annotators" in i.value for i in at.info)
    assert not at.dataframe


def test_kumar_import_shows_verdicts_with_signatures():
    directory = shared_dataset(NAME)
    if directory is None:
        pytest.skip(f"shared/datasets/{NAME} is absent")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/1_Data.py").run()
    at.radio(key="data_source_kind").set_value("kumar2025").run()
    at.button(key="data_load_kumar2025").click().run()
    _ok(at)
    at.switch_page(PAGE).run()
    _ok(at)
    at.selectbox(key="jr_dimension").set_value("level_emotional_reactions").run()
    _ok(at)
    dimension = "level_emotional_reactions"
    assert at.multiselect(key=f"jr_annotators_{dimension}").value == ["expert1", "expert2", "expert3"]
    assert at.multiselect(key=f"jr_judges_{dimension}").value == ["claude", "crowd", "gemini", "gpt"]
    assert at.number_input(key=f"jr_epsilon_{dimension}").value == pytest.approx(0.2)
    summary = _frame(at, "annotators_won").set_index("judge")
    assert summary.loc["gpt", "passed"] and summary.loc["gpt", "winning_rate"] == 1.0
    lines = [t for t in app_texts(at.markdown) if "the Alt-Test against 3 experts at epsilon 0.2" in t]
    assert len(lines) == 4 and any("**gpt** passes" in line for line in lines)
    captions = [c.value for c in at.caption if c.value.startswith("Signature:")]
    assert any("judge[gpt]" in c and "test:alt-test(calderon2025)" in c for c in captions)
    # the page's numbers are the library's
    from empathy.datasets.kumar2025 import import_kumar2025
    from empathy.judge_report.alt_test import alt_test

    expected = alt_test(import_kumar2025(directory).ratings, dimension, "claude")
    assert summary.loc["claude", "advantage_probability"] == pytest.approx(expected.advantage_probability)
    per_annotator = _frame(at, "annotator")
    mine = per_annotator[per_annotator["judge"] == "claude"]["p_value"].tolist()
    assert mine == pytest.approx([a.p_value for a in expected.annotators])
    # one annotator is not enough: the page asks for two instead of failing
    at.multiselect(key=f"jr_annotators_{dimension}").set_value(["expert1"]).run()
    _ok(at)
    assert any("two or more annotators" in i.value for i in at.info)


def test_the_lexicon_checks_run_offline_without_humans_and_a_failing_output_opens_in_inspect():
    """The demo has no second human (no Alt-Test, said first), yet the lexicon judge's repeatability, order and
    probes run offline with their signature; a failing output opens in Inspect at that output."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page(PAGE).run()
    _ok(at)
    assert any("needs two or more human annotators" in i.value for i in at.info)
    at.toggle(key="jr_lexicon_checks").set_value(True).run()
    _ok(at)
    probes = _frame(at, "violation_rate")
    assert {"names:ca", "solution-sentence:ca", "agentless:ld_agentless"} <= set(probes["probe"])
    repeat = _frame(at, "flip_rate")
    assert (repeat["flip_rate"] == 0).all()  # the lexicon judge is deterministic
    texts = " ".join(app_texts(at.caption) + app_texts(at.markdown) + app_texts(at.code))
    assert "probes:checklist(edits#" in texts and "repeatability:k=2" in texts
    failures = _frame(at, "why")
    chosen = at.selectbox(key="jr_checks_0_failing").value
    assert chosen == f"{failures['item_id'].iloc[0]} · {failures['model'].iloc[0]}"
    at.button(key="jr_checks_0_inspect").click().run()
    _ok(at)
    assert at.selectbox(key="_w_inspect_pick").value == chosen
