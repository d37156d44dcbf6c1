"""Streamlit AppTest of the Items page: failure paths, search, filters, worst-first order, one row's view."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import open_page  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.labels.records import Change, dataset_id  # noqa: E402
from empathy.labels.sqlite import OverrideStore  # noqa: E402
from empathy.paths import DEMO_DIR  # noqa: E402

PAGE = "app_pages/8_Items.py"
TIMEOUT = 240

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


def _page(source: dict | None = None) -> AppTest:
    return open_page(PAGE, source, timeout=TIMEOUT)


def _items(at: AppTest) -> pd.DataFrame:
    for frame in at.dataframe:
        if "item_id" in frame.value.columns and "generation" in frame.value.columns:
            return frame.value
    raise AssertionError(f"no item table; have {[list(f.value.columns) for f in at.dataframe]}")


def _demo_outputs() -> pd.DataFrame:
    return pd.read_csv(DEMO_DIR / "outputs.csv", dtype=str, keep_default_na=False)


def _non_increasing_then_nan(values: pd.Series) -> bool:
    array = values.to_numpy(dtype=float)
    known = ~np.isnan(array)
    first_nan = int(np.argmin(known)) if not known.all() else len(array)
    return bool(known[:first_nan].all() and not known[first_nan:].any()
                and np.all(np.diff(array[:first_nan]) <= 0))


# ------------------------------------------------------------------------------------------ failure paths

def test_no_ratings_says_so_and_still_lists_ld_and_counts(tmp_path):
    folder = tmp_path / "noratings"
    folder.mkdir()
    rows = [{"item_id": f"i{k}", "model": model, "task": "counseling",
             "reference": f"I feel ignored by my sister ({k}). She never calls me back.",
             "generation": f"It is understood that issues occur ({model}{k}). It was decided."}
            for model in ("A", "B") for k in range(1, 4)]
    pd.DataFrame(rows).to_csv(folder / "outputs.csv", index=False)
    at = _page({"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": []})
    assert any("no ratings" in str(i.value) for i in at.info), [str(i.value) for i in at.info]
    table = _items(at)
    assert len(table) == 6
    assert not [c for c in table.columns if c.startswith(("SA:", "EGM:", "CA:", "range:"))]
    assert table["LD"].notna().all()  # three items per model, texts with sentences
    assert (table["agentless_gen"] >= 1).all()  # "It was decided." is an agentless passive in every generation


def test_search_without_match_says_so():
    at = _page()
    at.text_input(key="items_search").input("no such text anywhere 8f3a").run()
    _ok(at)
    assert any("No output matches" in str(i.value) for i in at.info)


# -------------------------------------------------------------------------------------------- demo data

def test_demo_table_lists_every_output_worst_sa_first():
    at = _page()
    table = _items(at)
    assert len(table) == len(_demo_outputs()) == 121
    for column in ("SA:author", "SA:lexicon", "EGM:author", "CA:lexicon", "LD", "range:e_ref", "agentless_gen",
                   "overrides"):
        assert column in table.columns
    assert at.selectbox(key="items_sort").value == "SA:author"
    assert list(table.columns[:4]) == ["item_id", "model", "task", "SA:author"]
    assert _non_increasing_then_nan(table["SA:author"])
    # the open row is the worst one, shown side by side with the highlights' legend
    first = f"{table.iloc[0]['item_id']} · {table.iloc[0]['model']}"
    assert at.selectbox(key="items_pick").value == first
    assert any("Reference" in str(m.value) for m in at.markdown)


def test_search_narrows_rows_case_insensitively():
    at = _page()
    at.text_input(key="items_search").input("marrowby").run()
    _ok(at)
    table = _items(at)
    outputs = _demo_outputs()
    hit = (outputs["reference"].str.lower().str.contains("marrowby", regex=False)
           | outputs["generation"].str.lower().str.contains("marrowby", regex=False))
    assert 0 < len(table) == int(hit.sum()) < 121
    expected = set(zip(outputs.loc[hit, "item_id"], outputs.loc[hit, "model"], strict=True))
    assert set(zip(table["item_id"], table["model"], strict=True)) == expected
    at.text_input(key="items_search").input("NEWS-01").run()  # item ids too
    assert set(_items(at)["item_id"]) == {"news-01"}


@pytest.mark.parametrize("column", ["LD", "LD shift", "EGM:lexicon", "range:e_gen"])
def test_worst_first_order_follows_the_chosen_term(column):
    at = _page()
    at.selectbox(key="items_sort").set_value(column).run()
    _ok(at)
    table = _items(at)
    assert table.columns[3] == column
    assert _non_increasing_then_nan(table[column])
    assert table[column].notna().sum() > 0


def test_sorted_by_the_ld_shift_no_faithful_output_comes_first():
    at = _page()
    at.selectbox(key="items_sort").set_value("LD shift").run()
    _ok(at)
    notes = _demo_outputs().set_index(["item_id", "model"])["demo_note"]
    top = _items(at).head(10)
    assert not any("faithful" in notes[(item, model)] for item, model in zip(top["item_id"], top["model"], strict=True))
    assert any("more distanced than its reference" in c.value for c in at.caption)


def test_by_size_sorts_sa_by_magnitude_and_model_filter():
    at = _page()
    at.selectbox(key="items_sort").set_value("SA:lexicon").run()
    at.checkbox(key="items_abs").check().run()
    at.multiselect(key="items_models").set_value(["larch"]).run()
    _ok(at)
    table = _items(at)
    assert set(table["model"]) == {"larch"} and len(table) == 24
    magnitude = table["SA:lexicon"].abs()
    assert _non_increasing_then_nan(magnitude)
    assert table["SA:lexicon"].iloc[0] < 0  # under the lexicon judge the largest SA terms are negative


def test_min_count_filter_on_each_side():
    at = _page()
    baseline = _items(at)
    at.number_input(key="items_min_agentless").set_value(2).run()
    _ok(at)
    table = _items(at)
    assert (table["agentless_gen"] >= 2).all()
    assert len(table) == int((baseline["agentless_gen"] >= 2).sum()) < len(baseline)
    at.radio(key="items_side").set_value("reference").run()
    table = _items(at)
    assert (table["agentless_ref"] >= 2).all()
    assert len(table) == int((baseline["agentless_ref"] >= 2).sum())


def test_picking_a_row_opens_its_texts_and_terms():
    at = _page()
    at.text_input(key="items_search").input("news-02").run()
    at.selectbox(key="items_pick").set_value("news-02 · hazel").run()
    _ok(at)
    outputs = _demo_outputs()
    row = outputs[(outputs["item_id"] == "news-02") & (outputs["model"] == "hazel")].iloc[0]
    html = " ".join(str(m.value) for m in at.markdown)
    # the generation's first clause (its marks taken out: "died" is underlined as disturbing content) and a
    # distancing mark of the rendered text
    assert row["generation"].split(",")[0] in re.sub(r"</?mark[^>]*>", "", html) and 'class="ld-agentless"' in html
    assert any("news-02" in str(c.value) and "hazel" in str(c.value) for c in at.caption)
    terms = next(f.value for f in at.dataframe if list(f.value.columns) == ["term", "value", "status"])
    table = _items(at)
    mine = table[(table["item_id"] == "news-02") & (table["model"] == "hazel")].iloc[0]
    for record in terms.to_dict("records"):
        expected = mine[record["term"]]
        assert (math.isnan(expected) and math.isnan(record["value"])) or record["value"] == pytest.approx(expected)
    assert set(terms["status"]) <= {"ok", "missing", "undefined", "not rated"}
    labels = next(f.value for f in at.dataframe if "dimension" in f.value.columns).set_index("dimension")
    ratings = pd.concat([pd.read_csv(p) for p in sorted(DEMO_DIR.glob("ratings*.csv"))])
    given = ratings[(ratings["item_id"] == "news-02") & (ratings["model"] == "hazel")]
    assert len(given) == 8  # e_ref, e_gen, u_ref, u_gen by author and lexicon (no CA on news)
    for record in given.itertuples():  # shown to 3 decimals
        assert labels.loc[record.dimension, record.rater] == pytest.approx(record.value, abs=5e-4)
    # the SA term is (e_ref - e_gen) / e_ref of the judge's labels
    value = given.set_index(["rater", "dimension"])["value"]
    sa = (value["author", "e_ref"] - value["author", "e_gen"]) / value["author", "e_ref"]
    assert mine["SA:author"] == pytest.approx(sa)


def test_override_is_marked_filtered_and_counted_in_the_terms(_store):
    from empathy.io import load_dataset

    dataset = load_dataset(DEMO_DIR / "outputs.csv", sorted(DEMO_DIR.glob("ratings*.csv")))
    store = OverrideStore(_store)
    # author's e_gen of news-01/fennel is 0.15 with e_ref 0.8: SA term 0.8125; overridden to 0.4 -> 0.5
    store.set_overrides(dataset_id(dataset.outputs), [Change("news-01", "fennel", "author", "e_gen", 0.4, "")],
                        annotator="tester")
    at = _page()
    at.selectbox(key="items_overridden").set_value("with an override").run()
    _ok(at)
    table = _items(at)
    assert list(zip(table["item_id"], table["model"], strict=True)) == [("news-01", "fennel")]
    assert table.iloc[0]["overrides"] == 1 and table.iloc[0]["override_dimensions"] == "e_gen"
    assert table.iloc[0]["SA:author"] == pytest.approx((0.8 - 0.4) / 0.8)
    at.session_state["with_overrides"] = False  # the sidebar toggle: judge-only numbers
    at.run()
    assert _items(at).iloc[0]["SA:author"] == pytest.approx((0.8 - 0.15) / 0.8)


def test_why_empty_shows_the_status_columns():
    at = _page()
    assert not [c for c in _items(at).columns if c.endswith(" status")]
    at.checkbox(key="items_why").check().run()
    table = _items(at)
    assert "CA:author status" in table.columns
    news = table[table["task"] == "news"]
    assert set(news["CA:author status"]) == {"not rated"}  # CA is rated on counseling items only


def test_hostile_names_and_texts_stay_text(tmp_path, _store):
    folder = tmp_path / "hostile"
    folder.mkdir()
    model, item, rater = "**bold**_m", ":red[i1]", "[j](http://x.test)"
    rows = [{"item_id": i, "model": model, "task": "t",
             "reference": "We were told the plant would close. Everyone is scared.",
             "generation": "<script>alert(1)</script> It was decided that $x$ closures occur."}
            for i in (item, "i2", "i3")]
    pd.DataFrame(rows).to_csv(folder / "outputs.csv", index=False)
    ratings = [{"item_id": i, "model": model, "rater": rater, "dimension": d, "value": v}
               for i in (item, "i2", "i3") for d, v in (("e_ref", 0.8), ("e_gen", 0.4))]
    pd.DataFrame(ratings).to_csv(folder / "ratings_x.csv", index=False)
    from empathy.io import load_dataset

    dataset = load_dataset(folder / "outputs.csv", [folder / "ratings_x.csv"])
    OverrideStore(_store).set_overrides(dataset_id(dataset.outputs),
                                        [Change(item, model, rater, "e_gen", 0.2, "")], annotator="t")
    at = _page({"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": [str(folder / "ratings_x.csv")]})
    table = _items(at)
    assert f"SA:{rater}" in table.columns and table[f"SA:{rater}"].to_list() == pytest.approx([0.75, 0.5, 0.5])
    assert at.selectbox(key="items_pick").value == f"{item} · {model}"
    caption = next(str(c.value) for c in at.caption if str(c.value).startswith("Task "))
    assert f"`{item}`" in caption and f"`{model}`" in caption  # code spans: no Markdown, no directive
    assert "overridden: e&#95;gen" in caption  # markdown_literal
    generation = [str(m.value) for m in at.markdown if "alert" in str(m.value)]
    assert len(generation) == 1 and "&lt;script&gt;alert&#40;1&#41;&lt;/script&gt;" in generation[0]
    assert "<script" not in generation[0]


def test_the_sort_caption_names_a_judge_as_text(tmp_path):
    """Issue 27: the caption under the table names the sort column and with it a judge: a rater named as a
    Markdown image or a spreadsheet formula must reach the page as literal text (the browser fetched the image)."""
    folder = tmp_path / "raters"
    folder.mkdir()
    image, formula = "![i](http://payload.test/x.png)", '=HYPERLINK("http://payload.test/f","go")'
    pd.DataFrame([{"item_id": i, "model": "m", "reference": "We lost our home in the flood.",
                   "generation": "A flood occurred."} for i in ("1", "2")]).to_csv(folder / "outputs.csv", index=False)
    pd.DataFrame([{"item_id": i, "model": "m", "rater": rater, "dimension": d, "value": v}
                  for rater in (image, formula) for i in ("1", "2")
                  for d, v in (("e_ref", 0.8), ("e_gen", 0.4))]).to_csv(folder / "ratings_x.csv", index=False)
    at = _page({"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": [str(folder / "ratings_x.csv")]})
    for rater in (image, formula):
        at.selectbox(key="items_sort").set_value(f"SA:{rater}").run()
        _ok(at)
        caption = next(str(c.value) for c in at.caption if "outputs, worst SA" in str(c.value))
        assert "![" not in caption and "](" not in caption and "=HYPERLINK(" not in caption, caption
        assert "&#33;&#91;i&#93;&#40;http" in caption or "&#61;HYPERLINK&#40;" in caption, caption


def _top(at: AppTest) -> str:
    table = _items(at)
    return f"{table.iloc[0]['item_id']} · {table.iloc[0]['model']}"


def test_the_open_output_follows_the_tables_order():
    """Issue 26 item 4: after "Worst first by" changes (or a search, a filter, "By size"), the output open under
    the table is the new top row, not the one open before; a row picked since stays open on a rerun."""
    at = _page()
    first = _top(at)
    assert at.selectbox(key="items_pick").value == first
    for column in ("EGM:lexicon", "LD", "CA:lexicon", "range:e_gen"):
        at.selectbox(key="items_sort").set_value(column).run()
        _ok(at)
        top = _top(at)
        assert at.selectbox(key="items_pick").value == top, column
        # the open output's texts are the top row's
        assert any(c.startswith("Task `") and top.split(" · ")[0] in c for c in map(str, (c.value for c in at.caption)))
    tops = {_top(at)}
    at.checkbox(key="items_abs").check().run()
    assert at.selectbox(key="items_pick").value == _top(at)
    at.multiselect(key="items_models").set_value(["larch"]).run()
    assert at.selectbox(key="items_pick").value == _top(at) and _top(at).endswith("· larch")
    tops.add(_top(at))
    assert len(tops) == 2  # the top row did change: the test is not vacuous
    # a row picked by hand stays open across reruns that keep the order
    second = f"{_items(at).iloc[1]['item_id']} · {_items(at).iloc[1]['model']}"
    at.selectbox(key="items_pick").set_value(second).run()
    at.checkbox(key="items_why").check().run()  # shows more columns: the order is the same
    assert at.selectbox(key="items_pick").value == second


def test_a_large_table_lists_its_first_rows_in_order_and_says_so(monkeypatch):
    """The table and the picker are the first rows in the table's order (every row is sent to the browser on every
    run); the caption says how many match."""
    from empathy_app import views

    whole = _items(_page())  # every row (121 is under the limit)
    monkeypatch.setattr(views, "PREVIEW_ROWS", 5)
    at = _page()
    table = _items(at)
    assert len(table) == 5
    pd.testing.assert_frame_equal(table.reset_index(drop=True), whole.head(5).reset_index(drop=True))
    listed = [f"{i} · {m}" for i, m in zip(table["item_id"], table["model"], strict=True)]
    assert at.selectbox(key="items_pick").options == listed
    assert any("121 of 121 outputs" in c.value and "the table lists the first 5 (the CSV has every row)" in c.value
               for c in at.caption)
    at.switch_page("app_pages/1_Data.py").run()
    outputs = next(f.value for f in at.dataframe if "generation" in f.value.columns and "demo_note" in f.value.columns)
    assert len(outputs) == 5 and any("The first 5 of 121 rows." in c.value for c in at.caption)


def test_a_rerun_does_not_locate_the_ratings_again(monkeypatch):
    """Issue 25 (memory): the rating rows' output positions (3 million int64 at 200,000 outputs) are made when the
    item table is built, not on every run that finds it held."""
    from empathy_app import item_views
    from empathy_app.compute import RowIndex

    item_views._held.clear()
    calls = []
    real = RowIndex.rating_positions

    def counted(self):
        calls.append(1)
        return real(self)

    monkeypatch.setattr(RowIndex, "rating_positions", counted)
    at = _page()
    assert len(calls) == 1
    at.run()
    _ok(at)
    assert len(calls) == 1
