"""Streamlit AppTest of the Disagreement page: the map, a ranked slice's items, confusion cells, calibration."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts, open_page  # noqa: E402
from relabel_keys import window  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.calibration import confusion_cells  # noqa: E402
from empathy.io import load_dataset  # noqa: E402
from empathy.paths import DEMO_DIR  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGE = "app_pages/9_Disagreement.py"
TIMEOUT = 240

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


def _page() -> AppTest:
    return open_page(PAGE, timeout=TIMEOUT)


# AppTest keeps the key only of a selectable table; the others are found by their columns.
SIGNS = {
    "dis_ranked": {"feature", "slice", "p_holm"},
    "dis_slice_items": {"judge", "event", "human_value"},
    "dis_bias": {"bias_low", "slope"},
    "dis_splits": {"modal_share", "spread"},
}


def _frame(at: AppTest, key: str) -> pd.DataFrame:
    for frame in at.dataframe:
        columns = set(map(str, frame.value.columns))
        if frame.key == key or (key in SIGNS and SIGNS[key] <= columns):
            return frame.value
        if key == "dis_matrix" and columns and all(c.startswith("judge ") for c in columns):
            return frame.value
        if key == "dis_cell_items" and columns == {"item_id", "model"}:
            return frame.value
    raise AssertionError(f"no table {key}; have {[list(f.value.columns) for f in at.dataframe]}")


def _demo_ratings() -> pd.DataFrame:
    return load_dataset(DEMO_DIR / "outputs.csv", sorted(DEMO_DIR.glob("ratings_*.csv"))).ratings


def test_map_ranked_slices_and_items_on_the_demo() -> None:
    at = _page()
    assert at.selectbox(key="dis_dimension").value == "ca"
    assert len(at.get("plotly_chart")) >= 1
    ranked = _frame(at, "dis_ranked")
    assert len(ranked) and (ranked["n_units"] >= 5).all()
    # ranked by Holm p-value, then the raw p-value
    assert list(ranked["p_holm"]) == sorted(ranked["p_holm"])
    # demo: lexicon vs the author on CA disagree on 10 of 40 outputs
    assert "10 of 40 units disagree" in " ".join(c.value for c in at.caption)
    # every table carries the signature
    signatures = [c.value for c in at.caption if c.value.startswith("Signature:")]
    assert len(signatures) >= 4 and all("permutations:1000" in s for s in signatures[:2])
    assert at.get("download_button")  # the map as a people's CSV, signature in a column
    # opening the second ranked slice lists exactly its outputs' units
    names = at.selectbox(key="dis_slice").options
    at.selectbox(key="dis_slice").set_value(names[1]).run()
    _ok(at)
    items = _frame(at, "dis_slice_items")
    expected = int(ranked.iloc[1]["n_units"])
    assert len(items) == expected
    assert int(items["event"].sum()) == int(ranked.iloc[1]["events"])
    assert list(items["event"]) == sorted(items["event"], reverse=True)


def test_confusion_cells_are_one_selection_from_their_items() -> None:
    at = _page()
    cells = confusion_cells(_demo_ratings(), "ca")
    at.selectbox(key="dis_pair").set_value("fennel · lexicon").run()
    _ok(at)
    matrix = _frame(at, "dis_matrix")
    fennel = cells[cells["model"] == "fennel"]
    expected = {(h, j): n for h, j, n in zip(fennel["human_label"], fennel["judge_label"], fennel["count"],
                                             strict=True)}
    assert matrix.loc["human 1", "judge 0"] == expected[(1.0, 0.0)]
    options = at.selectbox(key="dis_cell").options
    target = next(o for o in options if o.startswith("human 1 → judge 0"))
    at.selectbox(key="dis_cell").set_value(target).run()
    _ok(at)
    items = _frame(at, "dis_cell_items")
    wanted = fennel[(fennel["human_label"] == 1) & (fennel["judge_label"] == 0)]["outputs"].iloc[0]
    assert list(zip(items["item_id"], items["model"], strict=True)) == wanted


def test_scores_show_the_calibration_curve_and_bias() -> None:
    at = _page()
    at.selectbox(key="dis_dimension").set_value("e_gen").run()
    _ok(at)
    bias = _frame(at, "dis_bias")
    assert set(bias["model"]) == {"fennel", "gorse", "hazel", "larch", "sorrel"}
    gorse = bias.set_index("model").loc["gorse"]
    assert gorse["bias_low"] <= gorse["bias"] <= gorse["bias_high"]
    assert len(at.get("plotly_chart")) >= 2  # the map and the calibration curve
    assert not _frame(at, "dis_splits").empty


def test_point_intervals_on_few_items_are_flagged() -> None:
    """Issue 27: on the demo's CA, hazel's bias and slope intervals are points resting on 9 items."""
    at = _page()
    _ok(at)
    bias = _frame(at, "dis_bias")
    hazel = bias.set_index("model").loc["hazel"]
    assert (hazel["bias_low"], hazel["bias_high"]) == (0, 0) and "9 items" in hazel["warning"]
    boxes = [w for w in app_texts(at.warning) if "to read with care" in w]
    assert len(boxes) == 1 and "hazel" in boxes[0] and "bias interval [0, 0] has zero width" in boxes[0]
    assert any("regression dilution" in c for c in app_texts(at.caption))


def test_judge_judge_needs_two_judges() -> None:
    at = _page()
    at.selectbox(key="dis_outcome").set_value("judge_judge").run()
    _ok(at)
    assert any("two judges" in i.value for i in at.info)


def test_open_in_inspect_lands_on_the_output() -> None:
    at = _page()
    opened = at.selectbox(key="dis_output").value
    at.button(key="dis_open_inspect").click().run()
    _ok(at)
    assert at.session_state["_w_inspect_pick"] == opened
    assert at.selectbox(key="_w_inspect_pick").value == opened


def test_the_page_runs_on_the_kumar_import() -> None:
    from empathy.paths import shared_dataset

    if shared_dataset("kumar2025-empathic-communication") is None:
        pytest.skip("shared/datasets/kumar2025-empathic-communication is absent")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/1_Data.py").run()
    at.radio(key="data_source_kind").set_value("kumar2025").run()
    at.button(key="data_load_kumar2025").click().run()
    _ok(at)
    at.switch_page(PAGE).run()
    _ok(at)
    at.selectbox(key="dis_dimension").set_value("empathy").run()  # EmpatheticDialogues, 1-5
    _ok(at)
    assert not at.error, [e.value for e in at.error]
    ranked = _frame(at, "dis_ranked")
    assert set(ranked["judge"]) == {"(all judges)"}
    # three LLM judges against the experts' mean on 50 conversations: 150 units
    assert any(" of 150 units disagree" in c.value for c in at.caption)
    assert _frame(at, "dis_matrix").shape[0] >= 2


def _relabel_pending(at: AppTest) -> list[tuple[str, str]]:
    """Every output of the Relabel queue: the window the key queue sent to the browser (the whole queue when it
    holds fewer than a window of outputs)."""
    return [(entry["item"], entry["model"]) for entry in window(at)["items"]]


def test_relabel_these_outputs_opens_relabel_on_exactly_the_cell() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["annotator"] = "ann"
    at.session_state["relabel_annotator"] = "ann"  # committed: the queue is shown
    at.run()
    at.switch_page(PAGE).run()
    _ok(at)
    at.selectbox(key="dis_pair").set_value("fennel · lexicon").run()
    target = next(o for o in at.selectbox(key="dis_cell").options if o.startswith("human 1 → judge 0"))
    at.selectbox(key="dis_cell").set_value(target).run()
    _ok(at)
    cells = confusion_cells(_demo_ratings(), "ca")
    wanted = cells[(cells["model"] == "fennel") & (cells["judge"] == "lexicon") & (cells["human_label"] == 1)
                   & (cells["judge_label"] == 0)]["outputs"].iloc[0]
    assert len(wanted) >= 2  # a cell of several outputs, so the filter is seen to keep more than one
    # the cell's labels in the paper's words beside it
    assert any("human 1" in c.value and "Conflict avoidance" in c.value for c in at.caption)
    button = at.button(key="dis_relabel_cell")
    assert button.label == f"Relabel these {len(wanted)} outputs"
    button.click().run()
    _ok(at)
    assert at.selectbox(key="relabel_dimension").value == "ca"
    assert any(f"Filtered to {len(wanted)} output(s)" in m.value for m in at.markdown)
    assert any("Rubric of ca" in m.value for m in at.markdown)
    assert f"0 of {len(wanted)} decided by you" in at.get("progress")[0].proto.text
    # AppTest reruns the page it last switched to, not the one st.switch_page opened: follow it by hand
    at.switch_page("app_pages/4_Relabel.py")
    assert sorted(_relabel_pending(at)) == sorted(wanted)
    # another dimension pauses the filter (the cell is a CA cell); back on CA it holds again
    at.selectbox(key="relabel_dimension").set_value("e_gen").run()
    _ok(at)
    assert any("it is paused while you relabel" in m.value for m in at.markdown)
    assert not at.get("progress")[0].proto.text.startswith(f"0 of {len(wanted)} ")
    at.selectbox(key="relabel_dimension").set_value("ca").run()
    assert f"of {len(wanted)} decided by you" in at.get("progress")[0].proto.text
    # clearing the filter gives back the whole queue: every output with a CA rating
    at.button(key="relabel_focus_clear").click().run()
    _ok(at)
    assert not any("Filtered to" in m.value for m in at.markdown)
    ratings = _demo_ratings()
    rated = len(ratings.loc[ratings["dimension"] == "ca", ["item_id", "model"]].drop_duplicates())
    assert f"0 of {rated} decided by you" in at.get("progress")[0].proto.text


def test_the_split_table_shows_the_first_rows_of_item_splits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page holds the split table's counts and first rows only: they equal the straightforward table's (the
    demo's judges and humans on u_gen), and the caption says how many rows there are."""
    from empathy.calibration import item_splits
    from empathy_app import views

    monkeypatch.setattr(views, "PREVIEW_ROWS", 3)
    at = _page()
    at.selectbox(key="dis_dimension").set_value("u_gen").run()
    _ok(at)
    expected = item_splits(_demo_ratings(), "u_gen")
    assert len(expected) > 3
    shown = _frame(at, "dis_splits")
    assert list(shown.columns) == list(expected.columns) and len(shown) == 3
    for column in ("item_id", "model", "values"):
        assert shown[column].astype(str).tolist() == expected[column].head(3).astype(str).tolist()
    for column in ("n_raters", "spread", "modal_share"):
        np.testing.assert_allclose(shown[column].to_numpy(float), expected[column].head(3).to_numpy(float))
    captions = " ".join(app_texts(at.caption))
    assert f"{int(expected['split'].sum())} of {len(expected)} units have raters" in captions
    assert f"The first 3 of {len(expected):,} rows." in captions
