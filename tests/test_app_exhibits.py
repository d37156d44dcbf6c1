"""Streamlit AppTest of the Exhibits page, the Inspect pin control and the Relabel "by influence" order."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import open_page  # noqa: E402
from relabel_keys import on_screen  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402
from test_mechanism_marks import _distinct, _parse  # noqa: E402

from empathy.judges.segment import sentence_spans  # noqa: E402
from empathy.labels.exhibit_list import exhibit_list  # noqa: E402
from empathy.labels.sqlite import OverrideStore  # noqa: E402
from empathy.mechanisms import mechanism_marks  # noqa: E402
from empathy.paths import DEMO_DIR  # noqa: E402
from empathy_app.views import HIDE_SIDEBAR_CSS  # noqa: E402

PAGE = "app_pages/10_Exhibits.py"
TIMEOUT = 240

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


def _app(source: dict | None = None, page: str = PAGE) -> AppTest:
    at = open_page(page, source, session={"annotator": "ann", "relabel_annotator": "ann"}, timeout=TIMEOUT)
    _ok(at)  # nor an error shown
    return at


def _open_fragility(at: AppTest) -> AppTest:
    """The Ranking fragility tab opened (its content is computed while it is open only)."""
    at.session_state["exhibit_tabs"] = "Ranking fragility"
    at.run()
    _ok(at)
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _frame(at: AppTest, column: str) -> pd.DataFrame:
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no dataframe with {column!r}: {[list(f.value.columns) for f in at.dataframe]}")


def _exhibits(store_path: Path) -> pd.DataFrame:
    """The exhibit list of the one data set that has exhibits in the store."""
    (name,) = _exhibit_datasets(store_path)
    return exhibit_list(OverrideStore(store_path), name)


def _exhibit_datasets(store_path: Path) -> list[str]:
    import sqlite3

    rows = sqlite3.connect(store_path).execute("SELECT DISTINCT dataset_id FROM exhibits").fetchall()
    return [r[0] for r in rows]


def _html(at: AppTest) -> list[str]:
    # the sidebar's static keys-help script is an html element too: only the page's own
    return [str(e.proto.body) for e in at.get("html") if "<script>" not in str(e.proto.body)]


def test_curated_demo_exhibits_list_present_and_reorder(_store):
    at = _app()
    assert any("No exhibit yet" in str(i.value) for i in at.info)
    at.button(key="exhibits_curated").click().run()
    _ok(at)
    pinned = _exhibits(_store)
    assert pinned[["item_id", "model"]].values.tolist() == [
        ["news-07", "fennel"], ["news-01", "gorse"], ["co-02", "sorrel"], ["news-01", "larch"]]
    # presentation: one exhibit at a time, full width, stepping forward
    shown = _html(at)
    assert len(shown) == 1 and "1. news-07 &middot; fennel" in shown[0] and "Sentiment Attenuation" in shown[0]
    at.button(key="exhibit_next").click().run()
    _ok(at)
    assert "2. news-01 &middot; gorse" in _html(at)[0]
    assert at.get("download_button")
    # reorder: the CA exhibit up one place, then unpin the first
    at.button(key="exhibit_up_3_co-02_sorrel").click().run()
    _ok(at)
    assert _exhibits(_store)["item_id"].tolist() == ["news-07", "co-02", "news-01", "news-01"]
    at.button(key="exhibit_unpin_1_news-07_fennel").click().run()
    _ok(at)
    after = _exhibits(_store)
    assert after[["item_id", "position"]].values.tolist() == [["co-02", 1], ["news-01", 2], ["news-01", 3]]
    # edit a note
    at.text_area(key="exhibit_note_1_co-02_sorrel").input("look at the praise").run()
    at.button(key="exhibit_save_1_co-02_sorrel").click().run()
    _ok(at)
    assert _exhibits(_store)["note"].iloc[0] == "look at the praise"


def test_make_a_png_offers_it_for_download(_store):
    from empathy.exhibits import chromium_path

    if chromium_path() is None:
        pytest.skip("no Chromium to render the PNG")
    at = _app()
    at.button(key="exhibits_curated").click().run()
    assert not [b for b in at.get("download_button") if b.proto.label == "Download the PNG"]
    at.button(key="exhibit_png_make").click().run()
    _ok(at)  # the PNG's bytes are kept under their own key, not the download button's
    assert [b for b in at.get("download_button") if b.proto.label == "Download the PNG"]


def test_pin_from_inspect(_store):
    at = _app(page="app_pages/3_Inspect.py")
    at.text_area(key="inspect_exhibit_note").input("a <b>note</b>").run()
    at.button(key="inspect_exhibit_pin").click().run()
    _ok(at)
    pinned = _exhibits(_store)
    assert len(pinned) == 1 and pinned["note"].iloc[0] == "a <b>note</b>"
    assert any("Pinned as exhibit 1" in str(s.value) for s in at.success)
    at.switch_page(PAGE).run()
    _ok(at)
    body = _html(at)[0]
    assert "a &lt;b&gt;note&lt;/b&gt;" in body and "<b>note</b>" not in body


# ----------------------------------------------------------------- hand-worked fixture (tests/test_fragility)

def _write_tiny(folder: Path) -> dict:
    from test_fragility import OUTPUTS, RATINGS

    folder.mkdir(parents=True, exist_ok=True)
    outputs = OUTPUTS.copy()
    outputs["reference"] = [f"I feel hurt by what happened ({i})." for i in outputs["item_id"]]
    outputs["generation"] = [f"Such events occur ({m} {i})." for m, i in zip(outputs["model"], outputs["item_id"],
                                                                         strict=True)]
    outputs.to_csv(folder / "outputs.csv", index=False)
    RATINGS.to_csv(folder / "ratings_j.csv", index=False)
    return {"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": [str(folder / "ratings_j.csv")]}


def test_fragility_tab_hand_worked(tmp_path):
    at = _open_fragility(_app(_write_tiny(tmp_path / "tiny")))
    at.selectbox(key="exhibits_fragility_metric").set_value("CA").run()
    _ok(at)
    pairs = _frame(at, "flips_needed")
    # CA: a 1/4, b 2/4, c 3/4 -> two flips reorder each adjacent pair (tests/test_fragility.py)
    assert pairs[["better", "worse", "flips_needed"]].values.tolist() == [["a", "b", 2], ["b", "c", 2]]
    at.selectbox(key="exhibits_fragility_metric").set_value("SA").run()
    _ok(at)
    pairs = _frame(at, "shift_needed")
    assert pairs["shift_needed"].tolist() == pytest.approx([1.25])
    influence = _frame(at, "loo_value")
    top = influence[influence["model"] == "a"].iloc[0]
    assert top["item_id"] == "i3" and top["influence"] == pytest.approx(-7 / 12)
    assert len(_frame(at, "ratio_of_means")) == 2  # the two SA rankings differ here


def test_relabel_by_influence_order(tmp_path):
    at = _app(_write_tiny(tmp_path / "tiny"), page="app_pages/4_Relabel.py")
    shown = on_screen(at)
    at.radio(key="relabel_order").set_value("by influence").run()
    _ok(at)
    # leverage |influence| / gap: a's i3 and c's i4 both 1 (tests/test_fragility.py), i3 < i4 by item_id
    assert on_screen(at) == ("i3", "a")
    assert shown != ("i3", "a")  # the default order (disagreement) starts elsewhere


def test_no_ratings_is_a_message_not_a_traceback(tmp_path):
    source = _write_tiny(tmp_path / "none")
    source["ratings"] = []
    at = _open_fragility(_app(source))
    infos = [str(i.value) for i in at.info]
    assert any("No exhibit yet" in i for i in infos) and any("no ranking to be fragile" in i for i in infos), infos


def test_curated_button_goes_once_everything_is_pinned(_store):
    at = _app()
    at.button(key="exhibits_curated").click().run()
    _ok(at)
    assert not [b for b in at.button if b.key == "exhibits_curated"]
    assert len(_exhibits(_store)) == 4


def test_exported_html_names_the_data_set_not_a_path(tmp_path, monkeypatch):
    """Issue 27: a data set loaded by path is known in the app by the path of its outputs file; the HTML offered
    for download names it by its folder, and no path of this machine is in the page."""
    import empathy.exhibits as exhibits

    pages: list[str] = []
    original = exhibits.export_html

    def recording(*args: object, **kwargs: object) -> str:
        pages.append(original(*args, **kwargs))
        return pages[-1]

    monkeypatch.setattr(exhibits, "export_html", recording)  # the page imports it at each run
    source = _write_tiny(tmp_path / "study-7")
    at = _app(source, page="app_pages/3_Inspect.py")
    at.button(key="inspect_exhibit_pin").click().run()
    _ok(at)
    at.switch_page(PAGE).run()
    _ok(at)
    assert pages, "the Presentation tab offered no HTML"
    assert "<title>Exhibits: study-7</title>" in pages[-1] and "<h1>Exhibits: study-7</h1>" in pages[-1]
    assert str(tmp_path) not in pages[-1] and "outputs.csv" not in pages[-1]


def test_presentation_hides_the_sidebar_and_the_export_draws_all_four(monkeypatch, _store):
    """Issue 26 item 3: the exported page and Presentation draw the marks of all four mechanisms from the one
    renderer (counted here against the library's marks of each exhibit), and Presentation hides the sidebar."""
    import empathy.exhibits as exhibits

    pages: list[str] = []
    original = exhibits.export_html

    def recording(*args: object, **kwargs: object) -> str:
        pages.append(original(*args, **kwargs))
        return pages[-1]

    monkeypatch.setattr(exhibits, "export_html", recording)
    at = _app()
    at.button(key="exhibits_curated").click().run()
    _ok(at)
    assert HIDE_SIDEBAR_CSS not in [str(e.proto.body) for e in at.get("html")]  # the Exhibits tab is open
    at.session_state["exhibit_tabs"] = "Presentation"
    at.run()
    _ok(at)
    assert HIDE_SIDEBAR_CSS in [str(e.proto.body) for e in at.get("html")]
    assert any("the sidebar is hidden while this tab is open" in str(c.value) for c in at.caption)
    shown = [body for body in _html(at) if 'class="exhibit"' in body]
    assert len(shown) == 1 and "sa-affect" in shown[0] and "egm-disturbing" in shown[0]
    # the page offered for download: every exhibit's marks, one per span, as the library computes them
    sections = pages[-1].split('<section class="exhibit">')[1:]
    pinned = _exhibits(_store)
    assert len(sections) == len(pinned) == 4
    outputs = pd.read_csv(DEMO_DIR / "outputs.csv", dtype=str, keep_default_na=False)
    totals = dict.fromkeys(("ld", "egm-disturbing", "sa-affect", "ca-cue", "ca-tension"), 0)
    for section, record in zip(sections, pinned.to_dict("records"), strict=True):
        row = outputs[(outputs["item_id"] == record["item_id"]) & (outputs["model"] == record["model"])].iloc[0]
        texts = [row["reference"], row["generation"]]
        marks = mechanism_marks(*texts, distancing=exhibits.distancing_spans(texts),
                                sentence_spans=sentence_spans(texts), conflict=row["task"] == exhibits.CONFLICT_TASK)
        parsed = _parse(section)
        for number, side in enumerate((marks.reference, marks.generation)):
            weights = [float(m["data-weight"]) for m in _distinct(parsed.marks, "sa-affect", number).values()]
            assert len(weights) == len(side.affect.contributions)
            assert sum(weights) == pytest.approx(side.affect.intensity, abs=1e-12)
            assert len(_distinct(parsed.marks, "egm-disturbing", number)) == len(side.disturbing)
            cues = "ca-cue" if number else "ca-tension"
            assert len(_distinct(parsed.marks, cues, number)) == len(side.cues)
            ld = {m["data-mark"] for m in parsed.marks if m["side"] == str(number) and "data-mark" in m
                  and m.get("class", "").startswith("ld-")}
            assert len(ld) == len(side.distancing)
            totals["sa-affect"] += len(weights)
            totals["egm-disturbing"] += len(side.disturbing)
            totals[cues] += len(side.cues)
            totals["ld"] += len(ld)
    # the curated list has one clear exhibit of each mechanism: all four are in the file
    assert all(totals[kind] > 0 for kind in ("ld", "egm-disturbing", "sa-affect", "ca-cue")), totals
    at.session_state["exhibit_tabs"] = "Exhibits"
    at.run()
    assert HIDE_SIDEBAR_CSS not in [str(e.proto.body) for e in at.get("html")]


def test_the_fragility_is_computed_while_its_tab_is_open_only(tmp_path, monkeypatch):
    from empathy_app import exhibit_views

    calls: list[int] = []
    original = exhibit_views.fragility_section
    monkeypatch.setattr(exhibit_views, "fragility_section", lambda *a, **k: calls.append(1) or original(*a, **k))
    at = _app(_write_tiny(tmp_path / "lazy"))
    assert calls == [] and not [f for f in at.dataframe if "flips_needed" in f.value.columns]
    _open_fragility(at)
    assert calls == [1] and _frame(at, "flips_needed") is not None
    at.session_state["exhibit_tabs"] = "Exhibits"
    at.run()
    _ok(at)
    assert calls == [1]  # closed again: nothing computed
