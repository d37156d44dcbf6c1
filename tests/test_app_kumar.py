"""AppTest of the app on the Kumar et al. (2025) import: the Data page source, every page, relabel -> Workbench.

Reads ``shared/datasets/kumar2025-empathic-communication`` through :func:`empathy.paths.shared_dataset` and skips
cleanly when it is absent (except the test that the source is not offered then).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from relabel_keys import on_screen, press, window  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.labels.ledger import apply_overrides  # noqa: E402
from empathy.labels.rules import effective_overrides  # noqa: E402
from empathy.labels.sqlite import OverrideStore  # noqa: E402
from empathy.paths import shared_dataset  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 240  # s; a ceiling for a loaded machine, not an expectation
NAME = "kumar2025-empathic-communication"
PAGES = ["app_pages/1_Data.py", "app_pages/2_Overview.py", "app_pages/3_Inspect.py", "app_pages/4_Relabel.py",
         "app_pages/5_Agreement.py", "app_pages/6_Workbench.py", "app_pages/7_Judge.py"]
DIMENSION = "level_emotional_reactions"  # EPITOME, scale 0-2

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


@pytest.fixture()
def kumar_dir() -> Path:
    directory = shared_dataset(NAME)
    if directory is None:
        pytest.skip(f"shared/datasets/{NAME} is absent")
    return directory


@pytest.fixture(scope="module")
def imported():
    directory = shared_dataset(NAME)
    if directory is None:
        pytest.skip(f"shared/datasets/{NAME} is absent")
    from empathy.datasets.kumar2025 import import_kumar2025

    return import_kumar2025(directory)


def _kumar_app(annotator: str | None = None) -> AppTest:
    """The app with the Kumar source chosen and loaded on the Data page, as a user does it."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if annotator is not None:
        at.session_state["annotator"] = annotator
        at.session_state["relabel_annotator"] = annotator  # committed on the Relabel page
    at.run()
    at.switch_page("app_pages/1_Data.py").run()
    _ok(at)
    at.radio(key="data_source_kind").set_value("kumar2025").run()
    at.button(key="data_load_kumar2025").click().run()
    _ok(at)
    return at


def _by_prefix(widgets, prefix: str) -> list:
    """Widgets keyed by output (``prefix|...``, see empathy_app.decisions.output_key)."""
    return [w for w in widgets if w.key and w.key.split("|")[0] == prefix]


def _level_prefixes(at: AppTest) -> list[str]:
    """The decision levels the Relabel queue offers (its buttons and keys), as ``relabel_level_<v>``."""
    return [f"relabel_level_{b['value']:g}" for b in window(at)["buttons"]]


def _frame(at: AppTest, column: str) -> pd.DataFrame:
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no dataframe with column {column!r}: {[list(f.value.columns) for f in at.dataframe]}")


def test_choosing_the_kumar_source_loads_it(kumar_dir, _store):
    at = _kumar_app()
    assert at.session_state["source"] == {"kind": "kumar2025", "directory": str(kumar_dir)}
    assert any("Loaded the Kumar et al. 2025 annotations" in s.value for s in at.success)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Items"] == "200" and metrics["Raters"] == "7" and metrics["Models"] == "4"
    assert any("**Outputs:** 200" in m.value for m in at.markdown)
    raters = next(m.value for m in at.markdown if "**Raters:**" in m.value)
    for rater in ("expert1", "expert2", "expert3", "crowd", "gpt", "claude", "gemini"):
        assert f"`{rater}`" in raters
    # The import report: per corpus 50 outputs, Perceived Empathy without text; what was dropped or merged.
    assert any(e.label.startswith("Import report:") for e in at.expander)
    items = _frame(at, "with_text").set_index("corpus")
    assert items["items"].to_dict() == {"epitome": 50, "lend_an_ear": 50, "empatheticdialogues": 50,
                                        "perceived_empathy": 50}
    assert items.loc["perceived_empathy", "with_text"] == 0
    report = "\n".join(m.value for m in at.markdown)
    assert "- **dropped** " in report and "- **merged** 162 · one row per utterance" in report
    assert "(18 of 18 agree)" in report
    # Overrides go to $EMPATHY_STORE here, never into the read-only shared folder.
    assert any(f"`{_store}` (from EMPATHY_STORE)" in c.value for c in at.caption)


def test_default_override_store_is_in_the_user_cache_dir(tmp_path, monkeypatch):
    from empathy_app import loading

    monkeypatch.delenv("EMPATHY_STORE", raising=False)
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    assert loading.store_path_for({"kind": "kumar2025", "directory": "/x"}, None) == \
        tmp_path / "cache" / "overrides-kumar2025.sqlite"
    monkeypatch.setenv("EMPATHY_STORE", str(tmp_path / "mine.sqlite"))
    assert loading.store_path_for({"kind": "kumar2025", "directory": "/x"}, None) == tmp_path / "mine.sqlite"


def test_source_not_offered_when_the_folder_is_absent(monkeypatch):
    from empathy_app import loading

    monkeypatch.setattr(loading, "import_directory", lambda name: None)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/1_Data.py").run()
    _ok(at)
    assert at.radio(key="data_source_kind").options == ["Demo data", "Upload files", "Path on this machine"]
    assert any(NAME in c.value and "offered here when" in c.value for c in at.caption)


def test_every_page_runs_on_the_kumar_import(kumar_dir):
    at = _kumar_app(annotator="tester")
    for page in PAGES:
        at.switch_page(page).run()
        _ok(at)
        assert not at.error, [e.value for e in at.error]
    at.switch_page("app_pages/2_Overview.py").run()
    assert any("none of the paper's judge dimensions" in i.value for i in at.info)
    at.switch_page("app_pages/5_Agreement.py").run()
    assert any("No judge rated the paper's dimensions" in i.value for i in at.info)
    assert set(_frame(at, "alpha")["dimension"]) >= {DIMENSION, "empathy", "m_seen"}
    at.switch_page("app_pages/7_Judge.py").run()
    assert any("50 of these outputs have no text" in i.value for i in at.info)
    # Inspect on a Perceived Empathy output (no public text): a message, no empty boxes, the labels.
    at.switch_page("app_pages/3_Inspect.py").run()
    at.selectbox(key="inspect_task").set_value("perceived_empathy").run()
    _ok(at)
    assert any("has no text" in i.value for i in at.info)
    assert "m_seen" in set(_frame(at, "gpt")["dimension"])
    assert at.selectbox(key="inspect_override_dimension").options[0].startswith("m_")
    assert _by_prefix(at.radio, "inspect_override_value")[0].options == [str(v) for v in range(1, 8)]
    # Relabel on a Lend an Ear dimension: the 1-5 scale as five buttons.
    at.switch_page("app_pages/4_Relabel.py").run()
    at.selectbox(key="relabel_dimension").set_value("advice_giving").run()
    _ok(at)
    assert _level_prefixes(at) == [f"relabel_level_{v}" for v in range(1, 6)]


def test_relabel_gpt_on_real_data_changes_its_agreement_with_the_experts(kumar_dir, imported, _store):
    at = _kumar_app(annotator="tester")
    at.switch_page("app_pages/6_Workbench.py").run()
    at.selectbox(key="wb_dimension").set_value(DIMENSION).run()
    _ok(at)
    first = _frame(at, "spearman_after").set_index("rater")
    assert sorted(first.index) == ["claude", "gemini", "gpt"]
    assert first.loc["gpt", "spearman_after"] == first.loc["gpt", "spearman_before"]

    at.switch_page("app_pages/4_Relabel.py").run()
    at.selectbox(key="relabel_dimension").set_value(DIMENSION).run()
    at.selectbox(key="relabel_apply_to").set_value("gpt").run()
    _ok(at)
    assert _level_prefixes(at) == ["relabel_level_0", "relabel_level_1", "relabel_level_2"]  # EPITOME's 0-2

    decided = []
    for level in (2, 0, 2):
        decided.append((on_screen(at)[0], float(level)))
        press(at, float(level))
        _ok(at)
        assert any("Saved (change #" in s.value for s in at.success)

    store = OverrideStore(_store)
    saved = effective_overrides(store.decisions("kumar2025")).effective
    assert set(saved["rater"]) == {"gpt"} and set(saved["dimension"]) == {DIMENSION}
    assert sorted(zip(saved["item_id"], saved["value"], strict=True)) == sorted(decided)
    assert len({item for item, _ in decided}) == 3  # the queue moved on after each decision

    at.switch_page("app_pages/6_Workbench.py").run()
    at.selectbox(key="wb_dimension").set_value(DIMENSION).run()
    _ok(at)
    assert at.selectbox(key="wb_target").value == "panel:experts"
    live = _frame(at, "spearman_after").set_index("rater")
    from empathy.panels import panel_ratings, rater_vs_panel

    effective = apply_overrides(imported.ratings, saved).drop(columns="overridden")
    expected = rater_vs_panel(panel_ratings(effective[effective["dimension"] == DIMENSION]), "experts",
                              raters=["gpt"], dimensions=[DIMENSION]).iloc[0]
    original = rater_vs_panel(panel_ratings(imported.ratings[imported.ratings["dimension"] == DIMENSION]),
                              "experts", raters=["gpt"], dimensions=[DIMENSION]).iloc[0]
    assert live.loc["gpt", "overridden"] == 3
    assert live.loc["gpt", "spearman_after"] == pytest.approx(expected["spearman"])
    assert live.loc["gpt", "spearman_before"] == pytest.approx(original["spearman"])
    assert live.loc["gpt", "spearman_after"] != pytest.approx(live.loc["gpt", "spearman_before"])
    assert live.loc["claude", "change"] == 0.0

    at.session_state["with_overrides"] = False  # the sidebar toggle: the raters' own labels only
    at.run()
    live = _frame(at, "spearman_after").set_index("rater")
    assert live.loc["gpt", "spearman_after"] == pytest.approx(original["spearman"])


def test_all_judges_never_overwrites_the_experts_or_the_crowd(kumar_dir, _store):
    import sqlite3

    at = _kumar_app(annotator="tester")
    at.switch_page("app_pages/4_Relabel.py").run()
    at.selectbox(key="relabel_dimension").set_value(DIMENSION).run()
    assert at.selectbox(key="relabel_apply_to").value == "(all judges)"
    press(at, 2.0)
    _ok(at)
    with sqlite3.connect(_store) as connection:
        raters = {row[0] for row in connection.execute("SELECT rater FROM overrides")}
    assert raters and raters <= {"gpt", "claude", "gemini"}, raters
