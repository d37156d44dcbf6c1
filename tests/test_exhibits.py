"""Exhibits: the store's ordered list, the hand-worked metric delta of an override, the offline HTML page."""

from __future__ import annotations

import html
import re
import sqlite3

import numpy as np
import pandas as pd
import pytest
from test_fragility import OUTPUTS, RATINGS

from empathy.evaluate import text_features
from empathy.exhibits import (
    MECHANISMS,
    chromium_path,
    dataset_title,
    exhibit_html,
    exhibit_view,
    export_html,
    export_png,
    metric_delta,
    read_curated,
)
from empathy.io import DataError, load_dataset
from empathy.labels.backends import open_store
from empathy.labels.exhibit_list import exhibit_list, move_exhibit, pin_exhibit, unpin_exhibit
from empathy.labels.schema import SCHEMA_VERSION
from empathy.labels.sqlite import OverrideStore
from empathy.paths import PROJECT_ROOT
from empathy.review import Recompute


def analyser(texts):
    return np.ones(len(texts)), np.zeros((len(texts), 3))


@pytest.fixture(scope="module")
def recompute():
    return Recompute(OUTPUTS, RATINGS, text_features(OUTPUTS, analyser, signature="x"), include_ld=False)


def _override(item, model, dimension, value):
    return {"item_id": item, "model": model, "rater": "j", "dimension": dimension, "value": value}


# This output's two overrides and one elsewhere (b's i1 CA 1 -> 0, which must not appear in the delta).
OVERRIDES = pd.DataFrame([_override("i3", "a", "ca", 0.0), _override("i3", "a", "e_gen", 0.2),
                          _override("i1", "b", "ca", 0.0)])
NO_SPANS = ([], [])


def test_metric_delta_by_hand(recompute):
    delta = metric_delta(recompute, OVERRIDES, "i3", "a")
    # SA of a: terms 0, .5, -2, .5 -> -0.25; with E(g) of i3 0.6 -> 0.2 the term is 0: (0 + .5 + 0 + .5)/4 = .25
    # CA of a: 0, 0, 1, 0 -> .25; with i3 -> 0 it is 0. b's CA (.25 with its own override either way) is unchanged.
    assert delta[["metric", "scorer", "model"]].values.tolist() == [["SA", "j", "a"], ["CA", "j", "a"]]
    assert delta["without"].tolist() == pytest.approx([-0.25, 0.25])
    assert delta["with"].tolist() == pytest.approx([0.25, 0.0])
    assert delta["delta"].tolist() == pytest.approx([0.5, -0.25])
    assert metric_delta(recompute, OVERRIDES, "i2", "a").empty
    assert metric_delta(recompute, None, "i3", "a").empty


def test_exhibit_view_labels(recompute):
    view = exhibit_view(OUTPUTS, RATINGS, OVERRIDES, "i3", "a", note="why", recompute=recompute, spans=NO_SPANS)
    assert view.labels["dimension"].tolist() == ["e_ref", "e_gen", "ca"]  # the paper's order
    labels = view.labels.set_index("dimension")
    assert labels.loc["ca", ["judge", "label", "overridden"]].tolist() == [1.0, 0.0, True]
    assert labels.loc["e_gen", ["judge", "label"]].tolist() == pytest.approx([0.6, 0.2])
    assert not labels.loc["e_ref", "overridden"]
    assert view.overridden and view.reference == "ref i3" and view.generation == "a i3"
    plain = exhibit_view(OUTPUTS, RATINGS, None, "i2", "b", spans=NO_SPANS)
    assert not plain.overridden and plain.delta.empty
    with pytest.raises(ValueError, match=r"\(i9, a\) is not in the data set"):
        exhibit_view(OUTPUTS, RATINGS, None, "i9", "a", spans=NO_SPANS)


def test_html_is_self_contained_and_escaped(recompute):
    hostile = OUTPUTS.copy()
    hostile.loc[0, "generation"] = '<script>alert(1)</script><img src=x onerror=alert(2)>'
    view = exhibit_view(hostile, RATINGS, OVERRIDES, "i1", "a", note='<b onclick="x()">note</b>',
                        recompute=recompute, spans=([], [{"start": 0, "end": 8, "label": "agentless"}]))
    page = export_html([view, exhibit_view(OUTPUTS, RATINGS, OVERRIDES, "i3", "a", recompute=recompute,
                                           spans=NO_SPANS)], title="Demo <1>", signature="sig")
    assert page.startswith("<!DOCTYPE html>")
    assert re.search(r"https?://", page) is None
    for fetch in ("<script", "<img", "<link", "url(", "@import", "<iframe"):
        assert fetch not in page.lower()
    assert re.search(r"<[^>]*\b(src|href)\s*=", page) is None  # data's "src=" is text after an escaped "&lt;"
    assert "&lt;script&gt;" in page and "&lt;b onclick=&#34;x()&#34;&gt;note&lt;/b&gt;" in page
    assert "Demo &lt;1&gt;" in page and "<style>" in page
    assert page.count('<section class="exhibit">') == 2
    assert "+0.500" in page and "-0.250" in page  # the delta of the second exhibit
    assert '<mark class="ld-agentless"' in page
    assert "No exhibits pinned" in export_html([])
    assert "1. i1" in exhibit_html(view, position=1)


@pytest.mark.skipif(chromium_path() is None, reason="no Chromium for the PNG export")
def test_png_export(tmp_path, recompute):
    view = exhibit_view(OUTPUTS, RATINGS, OVERRIDES, "i3", "a", recompute=recompute, spans=NO_SPANS)
    target = export_png(export_html([view]), tmp_path / "x.png", width=800, height=600)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("store_location", ["sqlite", "postgresql"], indirect=True)
def test_store_exhibit_list(store_location):
    store = open_store(store_location)
    assert pin_exhibit(store, "d", "i1", "a", "first") == 1
    assert pin_exhibit(store, "d", "i2", "a") == 2
    assert pin_exhibit(store, "d", "i3", "b", "third", annotator="ann") == 3
    assert pin_exhibit(store, "other", "i1", "a") == 1  # lists are per data set
    assert pin_exhibit(store, "d", "i1", "a", "new note") == 1  # pinning again edits the note, keeps the place
    assert move_exhibit(store, "d", "i3", "b", -1) == 2
    frame = exhibit_list(store, "d")
    assert frame[["item_id", "model", "position", "note"]].values.tolist() == [
        ["i1", "a", 1, "new note"], ["i3", "b", 2, "third"], ["i2", "a", 3, ""]]
    assert move_exhibit(store, "d", "i1", "a", 10) == 3  # clamped
    assert unpin_exhibit(store, "d", "i3", "b") and not unpin_exhibit(store, "d", "i3", "b")
    assert exhibit_list(store, "d")[["item_id", "position"]].values.tolist() == [["i2", 1], ["i1", 2]]
    assert len(exhibit_list(store, "other")) == 1
    with pytest.raises(ValueError, match="not an exhibit"):
        move_exhibit(store, "d", "zz", "a", 1)
    with pytest.raises(ValueError, match="item_id must not be empty"):
        pin_exhibit(store, "d", " ", "a")
    with pytest.raises(TypeError, match="note must be a string"):
        pin_exhibit(store, "d", "i1", "a", None)


def test_version_2_store_gets_the_exhibits_table(tmp_path):
    path = tmp_path / "s.sqlite"
    store = OverrideStore(path)
    store.set_override("d", "i1", "a", "j", "ca", 1.0, annotator="ann")
    connection = sqlite3.connect(path)
    # back to version 2: without what versions 3 (exhibits), 4 (commit order, queue state), 5 (audits) and 6 (read
    # indexes) added
    for statement in ("DROP INDEX audit_dataset_seq", "DROP INDEX audit_batch", "DROP TABLE exhibits",
                      "DROP INDEX audit_seq", "ALTER TABLE overrides DROP COLUMN seq",
                      "ALTER TABLE audit DROP COLUMN seq", "DROP TABLE skips", "DROP TABLE assignments",
                      "DROP TABLE audit_design_outputs", "DROP TABLE audit_designs",
                      *(f"ALTER TABLE {table} DROP COLUMN {column}" for table in ("overrides", "audit")
                        for column in ("audit_design", "audit_position"))):
        connection.execute(statement)
    connection.execute("PRAGMA user_version=2")
    connection.commit()
    connection.close()
    reopened = OverrideStore(path)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert len(reopened.decisions("d")) == 1
    assert pin_exhibit(reopened, "d", "i1", "a") == 1


def test_curated_demo_exhibits_show_each_mechanism():
    demo = PROJECT_ROOT / "data"
    dataset = load_dataset(demo / "outputs.csv", [demo / "ratings_author.csv"])
    curated = read_curated(demo / "exhibits.csv", dataset.outputs)
    assert curated["mechanism"].tolist() == list(MECHANISMS)
    author = dataset.ratings.set_index(["item_id", "model", "dimension"])["value"]
    sa, egm, ca, ld = curated.itertuples()
    assert 1 - author[(sa.item_id, sa.model, "e_gen")] / author[(sa.item_id, sa.model, "e_ref")] > 0.85
    assert author[(egm.item_id, egm.model, "u_gen")] >= 2 * author[(egm.item_id, egm.model, "u_ref")]
    assert author[(ca.item_id, ca.model, "ca")] == 1.0
    generation = dataset.outputs.set_index(["item_id", "model"]).loc[(ld.item_id, ld.model), "generation"]
    from empathy.exhibits import distancing_spans

    labels = {span.label for span in distancing_spans([generation])[0]}
    assert labels >= {"nominalization", "impersonal", "agentless"}


@pytest.mark.parametrize(("content", "fragments"), [
    ("item_id,model,mechanism,note\nnews-01,gorse,XX,n\n", ["row 2", "column 'mechanism'", "'XX'"]),
    ("item_id,model,mechanism,note\nnews-01,gorse,EGM,n\nnope,gorse,SA,n\n",
     ["row 3", "column 'item_id'", "(nope, gorse)"]),
    ("item_id,model,note\nnews-01,gorse,n\n", ["column 'mechanism'", "missing column"]),
])
def test_curated_bad_file(tmp_path, content, fragments):
    path = tmp_path / "ex.csv"
    path.write_text(content)
    outputs = pd.DataFrame({"item_id": ["news-01"], "model": ["gorse"]})
    with pytest.raises(DataError) as error:
        read_curated(path, outputs)
    for fragment in fragments:
        assert fragment in str(error.value)


@pytest.mark.parametrize(("name", "title"), [
    ("/home/ann/projects/study-3/outputs.csv", "study-3"),       # a data folder: named by the folder
    ("C:\\Users\\ann\\study\\outputs.jsonl", "study"),
    ("data/outputs.parquet", "data"),
    ("/srv/runs/run7.csv", "run7.csv"),                          # another file: named by the file
    ("../outputs.csv", "outputs.csv"),
    ("demo data", "demo data"),                                  # not a path: kept
    ("upload.csv", "upload.csv"),
    ("Kumar et al. (2025)", "Kumar et al. (2025)"),
])
def test_dataset_title_is_never_a_path(name, title):
    assert dataset_title(name) == title


def test_export_names_the_data_set_not_its_path(recompute):
    view = exhibit_view(OUTPUTS, RATINGS, OVERRIDES, "i3", "a", recompute=recompute, spans=NO_SPANS)
    page = export_html([view], dataset="/home/ann/secret-project/study-3/outputs.csv", signature="sig")
    assert "<title>Exhibits: study-3</title>" in page and "<h1>Exhibits: study-3</h1>" in page
    assert "/home" not in page and "secret-project" not in page


def test_exported_demo_exhibits_draw_all_four_mechanisms_counted():
    """The exported page of the curated demo exhibits (issue 26): per side, one LD mark per distancing span, one
    EGM underline per element the lexicon judge counts (its u), SA marks whose weights add up to its E, and on
    the CA exhibit one cue mark per cue behind its CA label."""
    from test_mechanism_marks import _distinct, _parse

    from empathy.judges import lexicon

    demo = PROJECT_ROOT / "data"
    dataset = load_dataset(demo / "outputs.csv", [demo / "ratings_author.csv", demo / "ratings_lexicon.csv"])
    curated = read_curated(demo / "exhibits.csv", dataset.outputs)
    views = [exhibit_view(dataset.outputs, dataset.ratings, None, row.item_id, row.model, note=row.note)
             for row in curated.itertuples()]
    page = export_html(views, title="Exhibits", signature="sig")
    parsed = _parse(page)
    assert parsed.sides + 1 == 2 * len(views)
    lexicon_values = (dataset.ratings.query("rater == 'lexicon'")
                      .set_index(["item_id", "model", "dimension"])["value"])
    for number, view in enumerate(views):
        key = (view.item_id, view.model)
        for offset, side, suffix in ((0, view.marks.reference, "ref"), (1, view.marks.generation, "gen")):
            marks = [m for m in parsed.marks if m["side"] == str(2 * number + offset)]
            ld = sum(len(_distinct(marks, f"ld-{label}")) for label in ("nominalization", "impersonal", "agentless"))
            assert ld == len(side.distancing)
            assert len(_distinct(marks, "egm-disturbing")) == lexicon_values[(*key, f"u_{suffix}")]
            weights = [float(m["data-weight"]) for m in _distinct(marks, "sa-affect").values()]
            assert sum(weights) == pytest.approx(lexicon_values[(*key, f"e_{suffix}")], abs=1e-12)
    by_mechanism = dict(zip(curated["mechanism"], views, strict=True))
    egm = by_mechanism["EGM"]  # the flood article with graphic detail added: underlined now
    assert lexicon_values[(egm.item_id, egm.model, "u_gen")] >= 2
    ca = by_mechanism["CA"]
    cues = [m for m in parsed.marks if m["side"] == str(2 * views.index(ca) + 1)]
    assert len(_distinct(cues, "ca-cue")) == len(ca.marks.conflict.cues) > 0
    assert ca.marks.conflict.label == lexicon_values[(ca.item_id, ca.model, "ca")]
    assert lexicon.lost_summary(by_mechanism["SA"].marks.reference.affect,
                                by_mechanism["SA"].marks.generation.affect) in html.unescape("".join(parsed.text))
    assert "legend" in page and page.count('class="ld-legend"') == len(views)
