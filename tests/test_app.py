"""Streamlit AppTest: failure paths, every page on the demo data, and live recompute after a CA override."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts as _texts
from conftest import load_path  # noqa: E402
from relabel_keys import on_screen, press, window  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.io import DataError  # noqa: E402
from empathy.labels.rules import effective_overrides, make_changes  # noqa: E402
from empathy.labels.sqlite import OverrideStore  # noqa: E402
from empathy_app.decisions import output_key  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGES = ["app_pages/1_Data.py", "app_pages/2_Overview.py", "app_pages/3_Inspect.py", "app_pages/4_Relabel.py",
         "app_pages/5_Agreement.py", "app_pages/8_Items.py"]
TIMEOUT = 240

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


def _app(source: dict | None = None, annotator: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if source is not None:
        at.session_state["source"] = source
    if annotator is not None:
        at.session_state["annotator"] = annotator
    return at.run()


# ------------------------------------------------------------------------------------- small fixture data

def _write_fixture(folder: Path, *, with_ratings: bool = True) -> Path:
    """3 models x 4 items, CA labels of two judges (values chosen for hand-worked CA and Spearman)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for model in ("A", "B", "C"):
        for item in ("i1", "i2", "i3", "i4"):
            rows.append({"item_id": item, "model": model, "task": "counseling",
                         "reference": f"I feel ignored by my sister ({item}). She never calls me back.",
                         "generation": f"It is understood that communication issues occur ({model}). Try talking."})
    pd.DataFrame(rows).to_csv(folder / "outputs.csv", index=False)
    if with_ratings:
        labels = {  # CA per model: j1 A .75 B .25 C .5 ; j2 A .5 B 0 C .5
            "j1": {"A": [1, 1, 1, 0], "B": [1, 0, 0, 0], "C": [1, 1, 0, 0]},
            "j2": {"A": [1, 1, 0, 0], "B": [0, 0, 0, 0], "C": [1, 1, 0, 0]},
        }
        for judge, per_model in labels.items():
            ratings = [{"item_id": f"i{k + 1}", "model": model, "rater": judge, "dimension": "ca", "value": v,
                        "rater_kind": "llm", "reason": "", "signature": f"{judge}-sig"}
                       for model, values in per_model.items() for k, v in enumerate(values)]
            pd.DataFrame(ratings).to_csv(folder / f"ratings_{judge}.csv", index=False)
    return folder


def _path_source(folder: Path) -> dict:
    ratings = sorted(str(p) for p in folder.glob("ratings*.csv"))
    return {"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": ratings}


def _dataframe_with(at: AppTest, column: str) -> pd.DataFrame:
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no dataframe with column {column!r}; have {[list(f.value.columns) for f in at.dataframe]}")


# ------------------------------------------------------------------------------------------ failure paths

def test_bad_ratings_file_error_names_file_row_and_column(tmp_path):
    folder = _write_fixture(tmp_path / "bad")
    (folder / "ratings_j3.csv").write_text("item_id,model,rater,dimension,value\ni1,A,j3,ca,1\ni2,A,j3,ca,2\n",
                                           encoding="utf-8")
    at = _app()
    load_path(at, folder)
    _ok(at)
    errors = _texts(at.error)
    assert any("ratings_j3.csv, row 3, column 'value'" in e and "must be 0 or 1" in e for e in errors), errors
    assert at.session_state["source"]["kind"] == "demo"  # the bad data did not replace the loaded data


def test_missing_path_and_folder_without_outputs(tmp_path):
    at = _app()
    load_path(at, tmp_path / "nowhere.csv")
    _ok(at)
    assert any("nowhere.csv: file not found" in e for e in _texts(at.error))
    (tmp_path / "empty").mkdir()
    at.text_input(key="data_path_text").input(str(tmp_path / "empty")).run()
    at.button(key="data_load_path").click().run()
    assert any("no outputs.csv" in e for e in _texts(at.error))


def test_bad_upload_error_names_the_uploaded_file():
    from empathy_app import loading

    bad = b"item_id,model,reference\nx,m,ref\n"
    with pytest.raises(DataError, match=r"^my outputs\.csv, column 'generation': missing required column"):
        loading.load_from_uploads(("my outputs.csv", bad), [])
    outputs = b"item_id,model,reference,generation\nx,m,ref,gen\n"
    ratings = b"item_id,model,rater,dimension,value\nx,m,j,e_ref,nope\n"
    with pytest.raises(DataError, match=r"^r\.csv, row 2, column 'value': not a number"):
        loading.load_from_uploads(("o.csv", outputs), [("r.csv", ratings)])
    loaded = loading.load_from_uploads(("o.csv", outputs), [("r.csv", ratings.replace(b"nope", b"0.5"))])
    assert loaded.summary()["ratings"] == 1


@pytest.mark.parametrize("page", PAGES[1:])
def test_no_ratings_gives_a_clear_message_not_a_traceback(tmp_path, page):
    folder = _write_fixture(tmp_path / "noratings", with_ratings=False)
    at = _app(_path_source(folder), annotator="ann")
    at.switch_page(page).run()
    _ok(at)
    if page == "app_pages/3_Inspect.py":  # Inspect shows texts without ratings
        assert "No judge rated this output." in _texts(at.info)
    elif page == "app_pages/8_Items.py":  # Items still lists LD terms and counts, which need no rating
        assert any("has no ratings, so there are no judge terms" in i for i in _texts(at.info)), _texts(at.info)
    elif page == "app_pages/2_Overview.py":  # LD needs only the texts: computed without any rating
        assert any("no ratings yet: only **LD** is computed" in i for i in _texts(at.info)), _texts(at.info)
        # the values table, then the n's in the expander (AppTest does not expose a dataframe's key)
        ld_only = ["model", "LD (spacy-distancing)"]
        pivot, counts = [f.value for f in at.dataframe if list(f.value.columns) == ld_only][:2]
        assert pivot["LD (spacy-distancing)"].notna().all()
        assert (counts["LD (spacy-distancing)"] > 0).all()
    else:
        assert any("no ratings yet" in i for i in _texts(at.info)), _texts(at.info)


def test_broken_demo_source_shows_error_and_data_page_still_works(tmp_path):
    at = _app({"kind": "path", "outputs": str(tmp_path / "gone.csv"), "ratings": []})
    _ok(at)
    assert any("gone.csv: file not found" in e for e in _texts(at.error))
    at.switch_page("app_pages/2_Overview.py").run()
    _ok(at)
    assert any("Data" in i for i in _texts(at.info))


# ----------------------------------------------------------------------------------- every page, demo data

@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_on_demo_data(page):
    at = _app(annotator="tester")
    _ok(at)
    at.switch_page(page).run()
    _ok(at)
    assert not at.error, _texts(at.error)
    assert at.title[0].value in page


def test_landing_opens_on_demo_data_without_configuration():
    at = _app()
    _ok(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Models"] == "5"
    assert int(metrics["Items"]) >= 8


def test_inspect_shows_script_generation_as_escaped_text():
    at = _app()
    at.switch_page("app_pages/3_Inspect.py").run()
    at.selectbox(key="_w_inspect_pick").set_value("co-09 · hazel").run()
    _ok(at)
    html_blocks = [m.value for m in at.markdown if m.value.startswith('<div class="ld-text"')]
    generation = [h for h in html_blocks if "test branch held up" in h]
    assert generation, html_blocks
    assert "&lt;script&gt;alert&#40;1&#41;&lt;/script&gt;" in generation[0]
    assert "&lt;img src=x onerror=alert&#40;2&#41;&gt;" in generation[0]
    assert "<script" not in generation[0] and "<img" not in generation[0]


# --------------------------------------------------------------------------------- live recompute behaviour

def _ca(at: AppTest) -> dict[str, float]:
    pivot = _dataframe_with(at, "CA (j2)").set_index("model")
    return {model: float(pivot.loc[model, "CA (j2)"]) for model in pivot.index}


def _spearman(at: AppTest) -> float:
    pairs = _dataframe_with(at, "scorer_a")
    row = pairs[(pairs["metric"] == "CA") & (pairs["scorer_a"] == "j1") & (pairs["scorer_b"] == "j2")]
    return float(row["spearman"].iloc[0])


def test_ca_override_through_inspect_updates_metrics_spearman_and_toggle(tmp_path, _store):
    folder = _write_fixture(tmp_path / "fixture")
    at = _app(_path_source(folder), annotator="ann")
    at.switch_page("app_pages/2_Overview.py").run()
    _ok(at)
    assert _ca(at) == {"A": 0.5, "B": 0.0, "C": 0.5}
    at.switch_page("app_pages/5_Agreement.py").run()
    _ok(at)
    # j1 ranks A > C > B; j2 ties A and C: rho = 1.5 / sqrt(3) = 0.866
    assert _spearman(at) == pytest.approx(math.sqrt(3) / 2, abs=5e-4)

    at.switch_page("app_pages/3_Inspect.py").run()
    at.selectbox(key="_w_inspect_pick").set_value("i3 · A").run()
    at.selectbox(key="inspect_override_judge").set_value("j2").run()
    at.selectbox(key="inspect_override_dimension").set_value("ca").run()
    at.radio(key=output_key("inspect_override_value", "i3", "A", "ca", "j2")).set_value(1.0).run()
    at.text_input(key="inspect_override_reason").input("asks nothing, jumps to advice").run()
    at.button(key=output_key("inspect_save", "i3", "A")).click().run()
    _ok(at)
    assert any("Saved" in s for s in _texts(at.success)), (_texts(at.success), _texts(at.error))
    # durable before "Saved": another connection sees it
    stored = effective_overrides(OverrideStore(_store).decisions()).effective
    assert stored[["item_id", "model", "rater", "dimension", "value"]].values.tolist() == [["i3", "A", "j2", "ca", 1.0]]
    assert stored["annotator"].tolist() == ["ann"]

    at.switch_page("app_pages/2_Overview.py").run()
    assert _ca(at) == {"A": 0.75, "B": 0.0, "C": 0.5}
    at.switch_page("app_pages/5_Agreement.py").run()
    _ok(at)
    # one truth (issue 26 item 5; the page's own judges-only toggle is gone): Table 6 follows the sidebar's
    # "Include human overrides" (on), so the override recomputes the Spearman, and the row says which labels it
    # rests on; only j2 carries the human label, so no agreement was written into both judges
    assert _spearman(at) == pytest.approx(1.0)
    row = _dataframe_with(at, "scorer_a").set_index(["metric", "scorer_a", "scorer_b"]).loc[("CA", "j1", "j2")]
    assert (row["labels"], row["human_decisions"], row["same_human_label"]) == ("with_overrides", 1, 0)
    assert any("Labels: **the judges' with 1 human decision**" in m for m in _texts(at.markdown))
    # no agreement resting on a human label; the only box is rho's interval on the fixture's few items
    assert [w for w in _texts(at.warning) if "to read with care" not in w] == []
    human = _dataframe_with(at, "judge").set_index("judge")
    assert human.loc["j2", "percent_agreement"] == 0.0 and human.loc["j1", "percent_agreement"] == 1.0
    moves = _dataframe_with(at, "rank_after")
    assert moves[(moves["scorer"] == "j2") & (moves["model"] == "A")]["value_after"].tolist() == [0.75]

    # the sidebar's switch off: the judges' own labels, on every page
    at.sidebar.toggle(key="_w_with_overrides").set_value(False).run()
    _ok(at)
    assert _spearman(at) == pytest.approx(math.sqrt(3) / 2, abs=5e-4)
    row = _dataframe_with(at, "scorer_a").set_index(["metric", "scorer_a", "scorer_b"]).loc[("CA", "j1", "j2")]
    assert (row["labels"], row["human_decisions"]) == ("judges", 0)
    assert any("Labels: **the judges' own**" in m for m in _texts(at.markdown))
    at.switch_page("app_pages/2_Overview.py").run()
    assert _ca(at) == {"A": 0.5, "B": 0.0, "C": 0.5}


def test_relabel_queue_decision_undo_and_restart(tmp_path, _store):
    folder = _write_fixture(tmp_path / "fixture")
    at = _app(_path_source(folder))
    at.switch_page("app_pages/4_Relabel.py").run()
    _ok(at)
    assert any("annotator name" in i for i in _texts(at.info))
    at.text_input(key="_w_annotator").input("rel")  # the sidebar's one name box, committed with its button
    at.button(key="identity_commit").click().run()
    _ok(at)
    # disagreements first: (i1, B) is the first item where j1 = 1 and j2 = 0 (items sorted by id within ties)
    first = window(at)["items"][0]
    assert (first["item"], first["model"]) == ("i1", "B") and "judges disagree" in first["head"]
    press(at, 0.0)
    _ok(at)
    store = OverrideStore(_store)
    decided = effective_overrides(store.decisions()).effective
    assert decided[["item_id", "model", "rater", "value"]].values.tolist() == [["i1", "B", "j1", 0.0],
                                                                             ["i1", "B", "j2", 0.0]]
    assert decided["annotator"].tolist() == ["rel", "rel"]
    assert on_screen(at) == ("i3", "A")
    assert "1 of 12 decided" in at.get("progress")[0].proto.text
    press(at, action="undo")
    assert effective_overrides(store.decisions()).effective.empty
    assert len(store.audit()) == 4  # two sets + two undos

    # a restarted app (new session, same store file) shows a saved override
    press(at, 1.0)
    restarted = _app(_path_source(folder))
    restarted.switch_page("app_pages/2_Overview.py").run()
    assert _ca(restarted)["B"] == 0.25


def test_relabel_a_score_dimension_with_the_number_input(tmp_path, _store):
    folder = _write_fixture(tmp_path / "fixture")
    extra = [{"item_id": f"i{k}", "model": m, "rater": "j1", "dimension": "e_gen", "value": 0.5, "rater_kind": "llm"}
             for m in ("A", "B", "C") for k in range(1, 5)]
    pd.DataFrame(extra).to_csv(folder / "ratings_scores.csv", index=False)
    at = _app(_path_source(folder), annotator="num")
    at.session_state["relabel_annotator"] = "num"
    at.switch_page("app_pages/4_Relabel.py").run()
    at.selectbox(key="relabel_dimension").set_value("e_gen").run()
    _ok(at)
    at.number_input(key=output_key("relabel_value", "e_gen", "i1", "A", "(all judges)")).set_value(0.8).run()
    at.button(key=output_key("relabel_save", "e_gen", "i1", "A")).click().run()
    _ok(at)
    stored = effective_overrides(OverrideStore(_store).decisions()).effective
    assert stored[["item_id", "model", "rater", "dimension", "value"]].values.tolist() == [
        ["i1", "A", "j1", "e_gen", 0.8]]
    assert "1 of 12 decided" in at.get("progress")[0].proto.text


# ------------------------------------------------------------------------------------------ per-rerun cost

def test_alpha_follows_an_override_of_its_dimension(tmp_path, _store, monkeypatch):
    # Nominal alpha of j1 and j2 on the 12 CA labels, by hand (Krippendorff 2011): n = 24 values.
    # Before: 10 ones, 14 zeros, 2 disagreeing units (A/i3, B/i1): 1 - 23 * 4 / (2 * 10 * 14) = 0.67143.
    # After j2's A/i3 is overridden to 1: 11 ones, 13 zeros, 1 unit: 1 - 23 * 2 / (2 * 11 * 13) = 0.83916.
    # The alpha after the decision is the kept matrix's (LiveAlpha), not the full computation's: counted calls.
    from empathy import agreement

    full: list[int] = []
    original = agreement.krippendorff_by_dimension

    def counted(*args: object, **kwargs: object) -> object:
        full.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(agreement, "krippendorff_by_dimension", counted)
    folder = _write_fixture(tmp_path / "fixture")
    at = _app(_path_source(folder), annotator="ann")
    at.switch_page("app_pages/5_Agreement.py").run()
    _ok(at)
    alpha = _dataframe_with(at, "alpha").set_index("dimension")
    assert alpha.loc["ca", "alpha"] == round(1 - 23 * 4 / 280, 3) == 0.671
    base = at.session_state["_base"].dataset
    changes = make_changes(base.outputs, base.ratings, "i3", "A", ["j2"], "ca", 1.0)
    OverrideStore(_store).set_overrides(_name(at), changes, annotator="x")
    before = len(full)
    at.run()  # another session's override: the next rerun sees it (the sidebar includes human overrides)
    _ok(at)
    alpha = _dataframe_with(at, "alpha").set_index("dimension")
    assert alpha.loc["ca", "alpha"] == round(1 - 23 * 2 / 286, 3) == 0.839
    assert len(full) == before  # the decision's alpha from the kept matrix, not the full computation
    at.sidebar.toggle(key="_w_with_overrides").set_value(False).run()  # the judges' own labels
    _ok(at)
    assert _dataframe_with(at, "alpha").set_index("dimension").loc["ca", "alpha"] == 0.671
    at.sidebar.toggle(key="_w_with_overrides").set_value(True).run()
    assert _dataframe_with(at, "alpha").set_index("dimension").loc["ca", "alpha"] == 0.839


def test_alpha_by_dimension_equals_the_library_on_the_effective_ratings(tmp_path, _store, monkeypatch):
    from empathy.agreement import krippendorff_by_dimension
    from empathy.io import DIMENSION_RANGES
    from empathy.labels.ledger import apply_overrides
    from empathy_app.overrides import overrides_key

    at = _app(annotator="ann")  # demo data: two raters on five dimensions
    data_id = _name(at)
    outputs = at.session_state["_base"].dataset.outputs
    ratings = at.session_state["_base"].dataset.ratings
    picks = ratings.drop_duplicates(["dimension"]).head(3)
    changes = [change for r in picks.itertuples()
               for change in make_changes(outputs, ratings, r.item_id, r.model, [r.rater], r.dimension,
                                          float(DIMENSION_RANGES.get(r.dimension, (0, 1))[0]))]
    OverrideStore(_store).set_overrides(data_id, changes, annotator="ann")
    at.switch_page("app_pages/5_Agreement.py").run()  # the sidebar includes human overrides (its default)
    _ok(at)
    shown = _dataframe_with(at, "alpha").reset_index(drop=True)
    current = effective_overrides(OverrideStore(_store).decisions(data_id)).effective
    expected = krippendorff_by_dimension(apply_overrides(ratings, current).drop(columns=["overridden"]))
    expected["alpha"] = expected["alpha"].astype(float).round(3)
    pd.testing.assert_frame_equal(shown, expected, check_dtype=False)
    assert overrides_key(None) == "none" and overrides_key(current) != overrides_key(current[:1])


def test_data_set_keys_are_computed_once_per_source_not_per_rerun(tmp_path, monkeypatch):
    from empathy_app import loading

    calls = {"content_key": 0}

    def counting(name, function):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(loading, "content_key", counting("content_key", loading.content_key))
    folder = _write_fixture(tmp_path / "fixture")
    at = _app(_path_source(folder), annotator="ann")
    _ok(at)
    assert calls == {"content_key": 1}
    for page in ("app_pages/2_Overview.py", "app_pages/5_Agreement.py", "app_pages/6_Workbench.py"):
        at.switch_page(page).run()
        at.run()
        _ok(at)
    assert calls == {"content_key": 1}
    # An edited file is a new token: the keys are computed again, and the page shows the new data.
    ratings = folder / "ratings_j2.csv"
    table = pd.read_csv(ratings, dtype=str)
    table.loc[(table["item_id"] == "i3") & (table["model"] == "A"), "value"] = "1"
    table.to_csv(ratings, index=False)
    os.utime(ratings, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    at.switch_page("app_pages/2_Overview.py").run()
    _ok(at)
    assert calls == {"content_key": 2}
    assert _ca(at) == {"A": 0.75, "B": 0.0, "C": 0.5}


def test_standard_metrics_are_computed_on_demand_only(monkeypatch):
    from empathy_app import compute

    calls = []
    original = compute.standard_per_model
    monkeypatch.setattr(compute, "standard_per_model", lambda data: calls.append(data.content_key) or original(data))
    at = _app()
    at.switch_page("app_pages/2_Overview.py").run()
    _ok(at)
    assert calls == []  # a visit computes no standard metric
    assert [b.key for b in at.button if b.key == "overview_std_compute"] == ["overview_std_compute"]
    assert not [s for s in at.selectbox if s.key == "overview_std_metric"]
    at.button(key="overview_std_compute").click().run()
    _ok(at)
    assert len(calls) == 1
    assert at.selectbox(key="overview_std_metric").value == "rouge_l"
    at.run()  # kept for the data set: no button to press again
    _ok(at)
    assert len(calls) == 2 and not [b for b in at.button if b.key == "overview_std_compute"]


def test_streamlit_listens_on_this_machine_only_by_default():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] == "127.0.0.1"


def test_effective_key_follows_only_the_overrides_of_its_dimensions(tmp_path):
    from empathy_app import compute, loading

    folder = _write_fixture(tmp_path / "fixture")
    outputs, ratings = loading.demo_files(folder)
    dataset = loading.load_from_paths(outputs, ratings)
    store = OverrideStore(tmp_path / "store.sqlite")
    data = loading.Loaded(dataset=dataset, name="fixture", data_dir=folder, dataset_id="outputs.csv",
                          content_key=loading.content_key(dataset), store=store)

    def keys() -> tuple[str, str, str]:
        return (compute.effective_key(data, ["ca"], with_overrides=True),
                compute.effective_key(data, ["e_ref"], with_overrides=True),
                compute.effective_key(data, with_overrides=True))

    start = keys()
    assert start[0] != start[1]  # the scope is part of the key
    store.set_overrides(data.dataset_id, make_changes(dataset.outputs, dataset.ratings, "i1", "A", ["j1"], "e_ref",
                                                      0.5), annotator="x")
    after_e_ref = keys()  # an override of e_ref (a rating no judge gave: it is added) leaves ca's key alone
    assert after_e_ref[0] == start[0] and after_e_ref[1] != start[1] and after_e_ref[2] != start[2]
    store.set_overrides(data.dataset_id, make_changes(dataset.outputs, dataset.ratings, "i1", "A", ["j1"], "ca", 0.0),
                        annotator="x")
    after_ca = keys()
    assert after_ca[0] != after_e_ref[0] and after_ca[1] == after_e_ref[1]
    assert compute.effective_key(data, ["ca"], with_overrides=False) == f"{data.content_key}:none:ca"  # judge-only


def test_the_rater_count_is_that_of_the_effective_ratings(tmp_path):
    # Agreement's "at least two raters" reads the count without building the effective ratings: the data set's
    # raters and those of the overrides that apply, equal to counting the effective ratings' (with a gap filled)
    from empathy_app import compute, loading

    folder = _write_fixture(tmp_path / "fixture")
    outputs, ratings = loading.demo_files(folder)
    dataset = loading.load_from_paths(outputs, ratings)
    store = OverrideStore(tmp_path / "store.sqlite")
    data = loading.Loaded(dataset=dataset, name="fixture", data_dir=folder, dataset_id="outputs.csv",
                          content_key=loading.content_key(dataset), store=store)

    def both(with_overrides: bool) -> tuple[int, int]:
        effective = compute.effective_ratings(data, with_overrides=with_overrides)
        return compute.rater_count(data, with_overrides=with_overrides), int(effective["rater"].nunique())

    start = both(True)
    assert start[0] == start[1] == dataset.ratings["rater"].nunique() >= 2
    for dimension in ("ca", "e_ref"):  # a judge's label replaced; a rating no judge gave added (a new row)
        store.set_overrides(data.dataset_id, make_changes(dataset.outputs, dataset.ratings, "i1", "A", ["j1"],
                                                          dimension, 0.0), annotator="x")
        assert both(True) == start and both(False) == start
    assert len(compute.effective_ratings(data, with_overrides=True)) == len(dataset.ratings) + 1


def _name(at) -> str:
    """The store name of the data set the app has loaded (what its overrides are kept under)."""
    from empathy_app import loading

    source = at.session_state["source"]
    path = Path(os.environ["EMPATHY_STORE"])
    return loading.store_dataset_name(source, path)


def test_every_table_carries_the_signature_and_it_names_the_ledger(tmp_path, _store):
    """Agreement and Workbench tables carry the signature; with overrides it names the label rule and a
    digest of the applied overrides (which human labels)."""
    folder = _write_fixture(tmp_path / "fixture")
    at = _app(_path_source(folder), annotator="ann")
    at.switch_page("app_pages/5_Agreement.py").run()
    _ok(at)
    before = [c for c in _texts(at.caption) if c.startswith("Signature: ")]
    assert len(before) == 2 and all("empathy:" in c for c in before)  # Table 6 and alpha
    # Table 6 follows the sidebar's switch (on; issue 26 item 5, where it was judge-only with no ledger field):
    # the signature names the (empty) ledger and counts its decisions
    assert all("|decisions:0|" in c and "overridden_ratings:0" in c for c in before)
    base = at.session_state["_base"].dataset
    OverrideStore(_store).set_overrides(_name(at), make_changes(base.outputs, base.ratings, "i3", "A", ["j2"], "ca",
                                                                1.0), annotator="x")
    at.run()
    _ok(at)
    human = [c for c in _texts(at.caption) if c.startswith("Signature: ")][-1]  # the human-vs-judges table
    assert "labels:latest" in human and "overridden_ratings:1" in human  # "overrides:1" before issue 26
    digest = next(field for field in human.split("|") if field.startswith("ledger:"))
    assert len(digest) == len("ledger:") + 12
    at.switch_page("app_pages/6_Workbench.py").run()
    _ok(at)
    workbench = [c for c in _texts(at.caption) if c.startswith("Signature: ")]
    assert workbench and all("|bootstrap:" in c and "|seed:0" in c for c in workbench)
    assert all(digest in c for c in workbench)  # the sidebar toggle (on by default) applies the override
