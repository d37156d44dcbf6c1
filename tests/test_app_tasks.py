"""AppTest of the sidebar's task filter: per-task values equal compute_metrics(by_task=True); single-task data,
a task without ratings, data without tasks, and overrides of other tasks kept out."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts as _texts
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.evaluate import compute_metrics  # noqa: E402
from empathy.io import load_dataset  # noqa: E402
from empathy.labels.records import Change, dataset_id  # noqa: E402
from empathy.labels.sqlite import OverrideStore  # noqa: E402
from empathy.paths import DEMO_DIR  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 240  # s; a ceiling for a loaded machine, not an expectation
PAGES = ["app_pages/2_Overview.py", "app_pages/3_Inspect.py", "app_pages/4_Relabel.py", "app_pages/5_Agreement.py",
         "app_pages/7_Judge.py", "app_pages/9_Disagreement.py", "app_pages/1_Data.py"]

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


def _app(source: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if source is not None:
        at.session_state["source"] = source
    at.session_state["annotator"] = "tester"
    at.session_state["relabel_annotator"] = "tester"  # the name committed on the Relabel page
    return at.run()


def _pivot(at: AppTest) -> pd.DataFrame:
    for frame in at.dataframe:
        if "model" in frame.value.columns and any(" (" in c for c in frame.value.columns):
            return frame.value.set_index("model")
    raise AssertionError("no metrics pivot on the page")


def _counts(at: AppTest) -> pd.DataFrame:
    """The n of each value (in an expander under the values since issue 16: the values alone fit the width)."""
    frames = [f.value for f in at.dataframe if "model" in f.value.columns and any(" (" in c for c in f.value.columns)]
    assert len(frames) >= 2 and list(frames[1].columns) == list(frames[0].columns)
    return frames[1].set_index("model")


def _choose_task(at: AppTest, task: str) -> None:
    at.sidebar.selectbox(key="_w_task").set_value(task).run()
    _ok(at)


def _write(folder: Path, tasks: dict[str, str], rated_tasks: tuple[str, ...]) -> dict:
    """Models A, B x items (id -> task); CA labels of judge j1 on the items of ``rated_tasks``."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"item_id": item, "model": model, "task": task, "reference": f"My brother lied to me ({item}).",
             "generation": f"You should talk to him ({model})."} for model in ("A", "B")
            for item, task in tasks.items()]
    outputs = pd.DataFrame(rows)
    if not any(tasks.values()):
        outputs = outputs.drop(columns=["task"])
    outputs.to_csv(folder / "outputs.csv", index=False)
    ratings = [{"item_id": r["item_id"], "model": r["model"], "rater": "j1", "dimension": "ca",
                "value": float(r["model"] == "A" or r["item_id"].endswith("1"))}
               for r in rows if r["task"] in rated_tasks]
    pd.DataFrame(ratings, columns=["item_id", "model", "rater", "dimension", "value"]).to_csv(
        folder / "ratings_j1.csv", index=False)
    return {"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": [str(folder / "ratings_j1.csv")]}


# ------------------------------------------------------------------------------------ demo, per task

@pytest.fixture(scope="module")
def demo_by_task() -> pd.DataFrame:
    data = load_dataset(DEMO_DIR / "outputs.csv", sorted(DEMO_DIR.glob("ratings*.csv")))
    return compute_metrics(data.outputs, data.ratings, by_task=True).table


@pytest.mark.parametrize("task", ["counseling", "news", "translation"])
def test_overview_of_one_task_equals_compute_metrics_by_task(demo_by_task, task):
    at = _app()
    at.switch_page("app_pages/2_Overview.py").run()
    _ok(at)
    assert at.sidebar.selectbox(key="_w_task").options == ["All tasks", "counseling", "news", "translation"]
    _choose_task(at, task)
    pivot = _pivot(at)
    counts = _counts(at)
    expected = demo_by_task[(demo_by_task["task"] == task) & demo_by_task["value"].notna()]
    assert len(expected) >= 10
    for row in expected.itertuples():
        column = f"{row.metric} ({row.scorer})"
        assert abs(pivot.loc[row.model, column] - row.value) <= 5e-4 + 1e-12, (column, row.model)  # shown to 3 dp
        assert counts.loc[row.model, column] == row.n
    # no metric of another task leaks in: news has no CA, counseling no EGM ratings of its own kind
    shown = {c for c in pivot.columns if not c.startswith("n ") and pivot[c].notna().any()}
    assert shown == {f"{r.metric} ({r.scorer})" for r in expected.itertuples()}
    assert any(f"Task **{task}**" in c for c in _texts(at.caption))


def _signature(at: AppTest) -> str:
    return next(str(c.value) for c in at.code if str(c.value).startswith("empathy:"))


def test_all_tasks_are_per_task_by_default_and_pooling_is_an_explicit_labelled_choice(demo_by_task):
    """Issue 15: with several tasks the app shows every value within its task (compute_metrics(by_task=True),
    a (task, model) row each); the sidebar's "Pool the tasks" gives compute_metrics(by_task=False), named
    tasks:pooled in the signature, on the Overview and in the Agreement page's Spearman table."""
    at = _app()
    at.switch_page("app_pages/2_Overview.py").run()
    _ok(at)
    # the values table, then the n's (same columns, in the expander)
    pivot, counts = [f.value.set_index(["task", "model"]) for f in at.dataframe if "task" in f.value.columns
                     and "model" in f.value.columns and any(" (" in c for c in f.value.columns)][:2]
    expected = demo_by_task[demo_by_task["value"].notna()]
    assert len(expected) >= 40 and set(pivot.index.get_level_values("task")) == {"counseling", "news", "translation"}
    for row in expected.itertuples():
        column = f"{row.metric} ({row.scorer})"
        assert abs(pivot.loc[(row.task, row.model), column] - row.value) <= 5e-4 + 1e-12, (row.task, column)
        assert counts.loc[(row.task, row.model), column] == row.n
    assert "tasks:" not in _signature(at)
    assert any("Computed **per task**" in c for c in _texts(at.caption))
    at.switch_page("app_pages/5_Agreement.py").run()
    _ok(at)
    pairs = next(f.value for f in at.dataframe if "scorer_a" in f.value.columns)
    assert set(pairs["task"]) <= {"counseling", "news", "translation"} and len(pairs) > 0

    at.sidebar.toggle(key="_w_pooled").set_value(True).run()
    _ok(at)
    assert at.session_state["pooled_tasks"] is True
    pairs = next(f.value for f in at.dataframe if "scorer_a" in f.value.columns)
    assert "task" not in pairs.columns
    at.switch_page("app_pages/2_Overview.py").run()
    data = load_dataset(DEMO_DIR / "outputs.csv", sorted(DEMO_DIR.glob("ratings*.csv")))
    pooled = compute_metrics(data.outputs, data.ratings, by_task=False)
    shown = _pivot(at)
    for row in pooled.table[pooled.table["value"].notna()].itertuples():
        assert abs(shown.loc[row.model, f"{row.metric} ({row.scorer})"] - row.value) <= 5e-4 + 1e-12
    fields = _signature(at).split("|")
    assert "tasks:pooled" in fields and set(str(pooled.signature).split("|")) < set(fields)
    assert any("**Tasks pooled**" in c for c in _texts(at.caption))


def test_counseling_ca_of_one_model_and_the_choice_holds_on_every_page(demo_by_task):
    at = _app()
    at.switch_page("app_pages/2_Overview.py").run()
    at.sidebar.toggle(key="_w_pooled").set_value(True).run()  # pooled: one value per model over all tasks
    all_tasks = float(_pivot(at).loc["hazel", "CA (author)"])
    sa_all = float(_pivot(at).loc["hazel", "SA (author)"])
    _choose_task(at, "counseling")
    ca = demo_by_task[(demo_by_task["task"] == "counseling") & (demo_by_task["model"] == "hazel")
                      & (demo_by_task["metric"] == "CA") & (demo_by_task["scorer"] == "author")]["value"].item()
    assert float(_pivot(at).loc["hazel", "CA (author)"]) == pytest.approx(ca, abs=5e-4 + 1e-12)
    assert all_tasks == pytest.approx(ca, abs=5e-4 + 1e-12)  # CA is rated on counseling only, so both agree here
    assert float(_pivot(at).loc["hazel", "SA (author)"]) != pytest.approx(sa_all, abs=5e-4 + 1e-12)
    for page in PAGES:
        at.switch_page(page).run()
        _ok(at)
        assert at.sidebar.selectbox(key="_w_task").value == "counseling", page
    at.switch_page("app_pages/3_Inspect.py").run()
    assert at.selectbox(key="inspect_task").options == ["(any)", "counseling"]
    at.switch_page("app_pages/4_Relabel.py").run()
    assert "of 41 decided" in at.get("progress")[0].proto.text  # the 41 counseling outputs only
    at.switch_page("app_pages/1_Data.py").run()
    assert {m.label: m.value for m in at.metric}["Items"] == str(
        pd.read_csv(DEMO_DIR / "outputs.csv")["item_id"].nunique())  # the Data page shows everything


# ----------------------------------------------------------------------------------- edge data sets

def test_a_single_task_data_set_has_no_filter_and_every_page_runs(tmp_path):
    source = _write(tmp_path / "one", {"i1": "counseling", "i2": "counseling", "i3": "counseling"}, ("counseling",))
    at = _app(source)
    for page in PAGES:
        at.switch_page(page).run()
        _ok(at)
        assert not at.error, (page, _texts(at.error))
        assert not [s for s in at.sidebar.selectbox if s.key == "_w_task"]
        assert any("counseling** (the only one)" in c for c in _texts(at.sidebar.caption))
    at.switch_page("app_pages/2_Overview.py").run()
    assert _pivot(at)["CA (j1)"].to_dict() == {"A": 1.0, "B": pytest.approx(1 / 3, abs=5e-4)}


def test_data_without_tasks_and_a_task_without_ratings(tmp_path):
    at = _app(_write(tmp_path / "none", {"i1": "", "i2": "", "i3": ""}, ("",)))
    at.switch_page("app_pages/2_Overview.py").run()
    _ok(at)
    assert not [s for s in at.sidebar.selectbox if s.key == "_w_task"]
    assert _pivot(at)["CA (j1)"].to_dict() == {"A": 1.0, "B": pytest.approx(1 / 3, abs=5e-4)}

    source = _write(tmp_path / "two", {"c1": "counseling", "c2": "counseling", "n1": "news", "x1": ""},
                    ("counseling",))
    at = _app(source)
    at.switch_page("app_pages/2_Overview.py").run()
    assert at.sidebar.selectbox(key="_w_task").options == ["All tasks", "counseling", "news", "(no task)"]
    for task, page in [("news", "app_pages/2_Overview.py"), ("news", "app_pages/5_Agreement.py"),
                       ("(no task)", "app_pages/4_Relabel.py")]:
        at.switch_page(page).run()
        _choose_task(at, task)
        assert any(f"No rating of the task **{task}**" in i for i in _texts(at.info)), (page, _texts(at.info))
    at.switch_page("app_pages/3_Inspect.py").run()
    _choose_task(at, "news")
    assert at.selectbox(key="_w_inspect_pick").options == ["n1 · A", "n1 · B"]
    _choose_task(at, "(no task)")
    assert at.selectbox(key="_w_inspect_pick").options == ["x1 · A", "x1 · B"]

    # loading a data set without the chosen task falls back to all tasks
    at.session_state["source"] = _write(tmp_path / "other", {"k1": "translation", "k2": "news"}, ("news",))
    at.run()
    _ok(at)
    assert at.sidebar.selectbox(key="_w_task").value == "" == at.session_state["task"]  # "" is All tasks


def test_overrides_of_other_tasks_stay_out_of_a_task(tmp_path, _store):
    source = _write(tmp_path / "two", {"c1": "counseling", "c2": "counseling", "n1": "news", "n2": "news"},
                    ("counseling", "news"))
    outputs = pd.read_csv(source["outputs"], dtype=str, keep_default_na=False)
    OverrideStore(_store).set_overrides(dataset_id(outputs), [Change("n2", "B", "j1", "ca", 1.0, "")],
                                        annotator="someone")
    at = _app(source)
    at.switch_page("app_pages/2_Overview.py").run()
    at.sidebar.toggle(key="_w_pooled").set_value(True).run()  # pooled: one value per model over both tasks
    assert _pivot(at)["CA (j1)"].to_dict() == {"A": 1.0, "B": 0.75}  # n1 B and the override of n2 B
    _choose_task(at, "counseling")
    assert _pivot(at)["CA (j1)"].to_dict() == {"A": 1.0, "B": 0.5}
    assert any("with 0 human decisions" in c for c in _texts(at.caption))
    _choose_task(at, "news")
    assert _pivot(at)["CA (j1)"].to_dict() == {"A": 1.0, "B": 1.0}
    assert any("with 1 human decision**" in c for c in _texts(at.caption))
    at.switch_page("app_pages/1_Data.py").run()
    assert len(next(f.value for f in at.dataframe if "annotator" in f.value.columns)) == 1


def test_the_overview_shows_both_egm_readings_where_they_differ(demo_by_task):
    """Issue 15: EGM with a + b = 0 counted as 0 (the default, Eq. 2 as written) and left out, side by side for
    every (task, model, judge) where they differ, with the signature of the second reading."""
    data = load_dataset(DEMO_DIR / "outputs.csv", sorted(DEMO_DIR.glob("ratings*.csv")))
    left_out = compute_metrics(data.outputs, data.ratings, by_task=True, egm_both_zero="exclude").table
    at = _app()
    at.switch_page("app_pages/2_Overview.py").run()
    _ok(at)
    shown = next(f.value for f in at.dataframe if "EGM (a+b=0 left out)" in f.value.columns)
    merged = demo_by_task[demo_by_task["metric"] == "EGM"].merge(
        left_out[left_out["metric"] == "EGM"], on=["task", "model", "scorer"], suffixes=("", "_out"))
    differ = merged[(merged["value"] - merged["value_out"]).abs() > 1e-12]
    assert len(differ) == len(shown) >= 10  # 22 on the demo
    for row in differ.itertuples():
        line = shown[(shown["task"] == row.task) & (shown["model"] == row.model) & (shown["scorer"] == row.scorer)]
        assert line["EGM (a+b=0 as 0)"].item() == pytest.approx(row.value, abs=5e-4 + 1e-12)
        assert line["EGM (a+b=0 left out)"].item() == pytest.approx(row.value_out, abs=5e-4 + 1e-12)
        assert line["n (as 0)"].item() == row.n and line["n (left out)"].item() == row.n_out
    assert any("egm-both-zero:exclude" in str(c.value) for c in at.caption)
