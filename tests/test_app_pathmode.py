"""AppTest of path mode on the Data page: the user picks the ratings files (any name, beside the outputs or
elsewhere); with none, Overview computes LD from the texts alone."""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.paths import DEMO_DIR  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 240  # s; a ceiling for a loaded machine, not an expectation

pytestmark = pytest.mark.usefixtures("_store", "_cache")  # a store and caches of each test's own


@pytest.fixture()
def folder(tmp_path) -> Path:
    """The demo's outputs with its two ratings files under names path mode did not find before."""
    target = tmp_path / "run"
    target.mkdir()
    shutil.copy(DEMO_DIR / "outputs.csv", target / "outputs.csv")
    shutil.copy(DEMO_DIR / "ratings_author.csv", target / "ratings_author.csv")
    shutil.copy(DEMO_DIR / "ratings_lexicon.csv", target / "lexicon_judge.csv")
    (target / "notes.txt").write_text("not a table", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return target


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _data_page(folder: Path) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/1_Data.py").run()
    at.radio(key="data_source_kind").set_value("path").run()
    at.text_input(key="data_path_text").input(str(folder)).run()
    _ok(at)
    return at


def test_the_ratings_files_are_offered_and_chosen(folder):
    at = _data_page(folder)
    picker = at.multiselect[0]
    assert picker.label == "Ratings files"
    # every table beside the outputs (not the outputs, not notes.txt), the ratings* one chosen at first
    assert picker.options == ["lexicon_judge.csv", "ratings_author.csv"]
    assert picker.value == [str(folder / "ratings_author.csv")]
    picker.select(str(folder / "lexicon_judge.csv")).run()
    at.button(key="data_load_path").click().run()
    _ok(at)
    assert at.session_state["source"] == {"kind": "path", "outputs": str(folder / "outputs.csv"),
                                          "ratings": [str(folder / "ratings_author.csv"),
                                                      str(folder / "lexicon_judge.csv")]}
    assert any("with 2 ratings file(s)" in html.unescape(s.value) for s in at.success)


def test_a_ratings_file_elsewhere_by_path(folder, tmp_path):
    other = tmp_path / "elsewhere" / "judge.csv"
    shutil.move(folder / "lexicon_judge.csv", other)
    at = _data_page(folder)
    at.text_area(key="data_path_extra").input(str(other)).run()
    at.button(key="data_load_path").click().run()
    _ok(at)
    assert at.session_state["source"]["ratings"] == [str(folder / "ratings_author.csv"), str(other)]
    at.text_area(key="data_path_extra").input(str(tmp_path / "missing.csv")).run()
    at.button(key="data_load_path").click().run()
    assert any("missing.csv: file not found" in html.unescape(e.value) for e in at.error)


def test_no_ratings_file_still_gives_ld(folder):
    at = _data_page(folder)
    at.multiselect[0].unselect(str(folder / "ratings_author.csv")).run()
    at.button(key="data_load_path").click().run()
    _ok(at)
    assert at.session_state["source"]["ratings"] == []
    at.switch_page("app_pages/2_Overview.py").run()
    _ok(at)
    # the values table, then the n's in the expander (the same columns); per task, as the demo has tasks
    ld = "LD (spacy-distancing)"
    pivot, counts = [f.value.set_index(["task", "model"]) for f in at.dataframe
                     if list(f.value.columns) == ["task", "model", ld]][:2]
    assert set(pivot.index.get_level_values("model")) == {"fennel", "gorse", "hazel", "larch", "sorrel"}
    assert pivot[ld].notna().all()
    # every output counted once: LD does not read the ratings
    outputs = pd.read_csv(DEMO_DIR / "outputs.csv")
    assert counts[ld].to_dict() == outputs.groupby(["task", "model"]).size().to_dict()
