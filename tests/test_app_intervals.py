"""AppTest of the intervals the pages show (issue 23 item 4, app half): the Overview's bootstrap intervals, rank
intervals and error bars, Table 6 with rho's interval, exact p and tau-b on Agreement, the Disagreement map's
cluster-aware intervals and exact p-values; each equal to the library's on the same data, computed once per data
set and overrides (never on a rerun that changes nothing).
"""

from __future__ import annotations

import base64
import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts, open_page  # noqa: E402
from relabel_keys import press  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy import bootstrap  # noqa: E402
from empathy.bootstrap import table_intervals  # noqa: E402
from empathy.evaluate import plan_metrics, text_features  # noqa: E402
from empathy.io import load_dataset  # noqa: E402
from empathy.metrics import judged_metrics  # noqa: E402
from empathy.paths import DEMO_DIR  # noqa: E402
from empathy_app import intervals  # noqa: E402
from empathy_app.markup import html as plotly_text  # noqa: E402

TIMEOUT = 240

pytestmark = pytest.mark.usefixtures("_store")


@pytest.fixture(scope="module")
def library() -> object:
    """The library's intervals of the demo, per task (the app's default), 1,000 resamples, seed 0."""
    dataset = load_dataset(DEMO_DIR / "outputs.csv", sorted(DEMO_DIR.glob("ratings_*.csv")))
    plan = plan_metrics(dataset.outputs, dataset.ratings, features=text_features(dataset.outputs), by_task=True)
    return table_intervals(plan.item_terms(metrics=judged_metrics()), n_resamples=1000, seed=0)


def _array(value: object) -> np.ndarray:
    """A Plotly figure's array as its JSON holds it: a list, or NumPy's bytes in base64 (``dtype``, ``bdata``)."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
    return np.asarray(value)


def _frame(at: AppTest, *columns: str) -> pd.DataFrame:
    for frame in at.dataframe:
        if set(columns) <= set(map(str, frame.value.columns)):
            return frame.value
    raise AssertionError([list(f.value.columns) for f in at.dataframe])


def test_overview_intervals_are_the_librarys(library):
    at = open_page("app_pages/2_Overview.py", timeout=TIMEOUT)
    shown = _frame(at, "ci_low", "rank_interval")
    keys = ["task", "model", "scorer", "metric"]
    merged = shown.merge(library.values, on=keys, suffixes=("", "_lib"))
    # 3 tasks x 5 models x 2 judges x SA and EGM, and CA in counseling only
    assert len(merged) == len(library.values) == 70
    assert np.allclose(merged["ci_low"].astype(float), merged["ci_low_lib"].astype(float), equal_nan=True)
    assert np.allclose(merged["ci_high"].astype(float), merged["ci_high_lib"].astype(float), equal_nan=True)
    assert (merged["rank_interval"] == [intervals.rank_range(lo, hi) for lo, hi in
                                        zip(merged["rank_low"], merged["rank_high"], strict=True)]).all()
    # LD has a value and no interval (its standardisation ties a model's terms together)
    ld = shown[shown["metric"] == "LD"]
    assert len(ld) == 15 and ld["ci_low"].isna().all()
    # the rankings carry their rank intervals beside them
    ranks = _frame(at, "CA (lexicon)", "CA (lexicon) 95 %")
    hazel = ranks[(ranks["task"] == "counseling") & (ranks["model"] == "hazel")].iloc[0]
    expected = library.values.set_index(keys).loc[("counseling", "hazel", "lexicon", "CA")]
    assert hazel["CA (lexicon) 95 %"] == intervals.rank_range(expected["rank_low"], expected["rank_high"])
    # the charts' error bars are the intervals: CA's chart, lexicon's bars of the counseling panel
    spec = json.loads(next(c for c in at.get("plotly_chart") if "CA by model" in c.proto.spec).proto.spec)
    bars = next(t for t in spec["data"] if t.get("name") == "lexicon" and t.get("error_y"))
    part = shown[(shown["metric"] == "CA") & (shown["scorer"] == "lexicon") & (shown["task"] == "counseling")]
    part = part.set_index("model").loc[list(bars["x"])]
    assert np.allclose(_array(bars["error_y"]["array"]), (part["ci_high"] - part["value"]).to_numpy(float))
    assert np.allclose(_array(bars["error_y"]["arrayminus"]), (part["value"] - part["ci_low"]).to_numpy(float))
    signature = next(c for c in app_texts(at.caption) if c.startswith("Signature:") and "resamples:" in c)
    assert "resamples:1000" in signature and "bootstrap-seed:0" in signature and "estimator:judge" in signature
    # each model with the next one and p_better, the library's, with its meaning in plain words under it
    pairs = _frame(at, "better", "worse", "p_better")
    pair_keys = ["task", "scorer", "metric", "better", "worse"]
    merged = pairs.merge(library.pairs, on=pair_keys, suffixes=("", "_lib"))
    assert len(merged) == len(pairs) == len(library.pairs) > 0
    assert np.allclose(merged["p_better"].astype(float), merged["p_better_lib"].astype(float))
    assert intervals.P_BETTER_MEANING in app_texts(at.caption)


def test_the_bootstrap_runs_once_per_data_set_and_overrides(monkeypatch):
    # the whole bootstrap (drawing resamples) once per data set; a new set of overrides updates it once, a rerun not
    draws: list[int] = []
    updates: list[int] = []
    original_draws = bootstrap.resample_counts
    original_table = bootstrap.LiveIntervals.table

    def counted_draws(*args: object, **kwargs: object) -> object:
        draws.append(1)
        return original_draws(*args, **kwargs)

    def counted_table(self: object, *args: object, **kwargs: object) -> object:
        updates.append(1)
        return original_table(self, *args, **kwargs)

    monkeypatch.setattr(bootstrap, "resample_counts", counted_draws)
    monkeypatch.setattr(bootstrap.LiveIntervals, "table", counted_table)
    # an earlier test of this process may have left the demo's tables (cached per overrides) and a bootstrap (at most
    # two held, data set x scope) that this test's pages evict: start from none, so every draw counted is this test's
    intervals._live.clear()
    intervals._intervals.clear()
    at = open_page("app_pages/2_Overview.py", session={"annotator": "ann", "relabel_annotator": "ann"},
                   timeout=TIMEOUT)
    first, first_updates = len(draws), len(updates)
    at.run()
    at.switch_page("app_pages/5_Agreement.py").run()  # the judges' own labels: with no override, the same table
    _ok(at)
    assert (len(draws), len(updates)) == (first, first_updates)
    at.switch_page("app_pages/4_Relabel.py").run()
    press(at, 1.0)  # one decision: the overrides change
    _ok(at)
    at.switch_page("app_pages/2_Overview.py").run()
    _ok(at)
    assert (len(draws), len(updates)) == (first, first_updates + 1)  # updated, nothing resampled
    at.run()
    assert (len(draws), len(updates)) == (first, first_updates + 1)


def test_table6_with_interval_exact_p_and_tau(library):
    at = open_page("app_pages/5_Agreement.py", timeout=TIMEOUT)
    shown = _frame(at, "spearman", "p_exact", "kendall_tau_b")
    keys = ["task", "metric", "scorer_a", "scorer_b"]
    merged = shown.merge(library.agreement, on=keys, suffixes=("", "_lib"))
    assert len(merged) == len(shown) == 7
    for column in ("ci_low", "ci_high", "p_exact", "kendall_tau_b", "p_kendall"):
        assert np.allclose(merged[column].astype(float), merged[f"{column}_lib"].astype(float), equal_nan=True)
    # docs/statistics.md, Table 6 on the demo: CA of author vs lexicon (counseling), rho 0.763, exact p 0.167
    ca = shown[(shown["metric"] == "CA")].iloc[0]
    assert round(float(ca["spearman"]), 3) == 0.763 and round(float(ca["p_exact"]), 3) == 0.167
    assert round(float(ca["kendall_tau_b"]), 3) == 0.667 and ca["p_method"] == "exact"
    assert any("no rho below 1 reaches p < 0.083" in c for c in app_texts(at.caption))
    signature = next(c for c in app_texts(at.caption) if c.startswith("Signature:") and "resamples:" in c)
    assert "bootstrap-seed:0" in signature and "interval:expanded-percentile" in signature


def test_disagreement_intervals_take_the_item_as_unit_and_p_is_exact_by_default():
    at = open_page("app_pages/9_Disagreement.py", timeout=TIMEOUT)
    ranked = _frame(at, "rate_low", "rate_high", "p_method")
    assert (ranked["p_method"] == "exact").all() and ranked["p_se"].isna().all()
    # the map's error bars are the cluster-aware intervals, not Wilson's
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    points = [(y, x, low, high) for trace in spec["data"]
              for y, x, high, low in zip(_array(trace["y"]), _array(trace["x"]), _array(trace["error_x"]["array"]),
                                         _array(trace["error_x"]["arrayminus"]), strict=True)]
    assert "item as unit" in spec["layout"]["xaxis"]["title"]["text"]
    first = ranked.iloc[0]
    label = f"{plotly_text(first['feature'])} · {plotly_text(first['slice'])}"  # Plotly labels are HTML
    y, x, low, high = next(p for p in points if p[0] == label)
    assert x - low == pytest.approx(first["rate_low"]) and x + high == pytest.approx(first["rate_high"])
    signature = next(c for c in app_texts(at.caption) if c.startswith("Signature:"))
    assert "p:exact-where-computable" in signature and "rate-interval:cluster-wilson(item)" in signature
    # Monte Carlo on request: its standard error is shown
    at.checkbox(key="dis_exact").uncheck().run()
    _ok(at)
    ranked = _frame(at, "rate_low", "p_method")
    assert (ranked["p_method"] == "monte-carlo").all() and ranked["p_se"].notna().all()
    assert any("by Monte Carlo (1,000 permutations); the largest standard error is" in c
               for c in app_texts(at.caption))


def test_the_overview_plans_the_ratings_once_for_both_egm_readings(monkeypatch):
    # the EGM "exclude" reading beside the default shares the default plan's layout (issue 25 item 2): one layout
    # of the ratings per data set and scope on the Overview's first visit, and the second reading built from the first
    from empathy import evaluate
    from empathy.review import Recompute
    from empathy_app import compute

    layouts: list[int] = []
    readings: list[tuple[str | None, str | None]] = []
    original_layout, original_reading = evaluate._layout, Recompute.reading

    def counted_layout(*args: object, **kwargs: object) -> object:
        layouts.append(1)
        return original_layout(*args, **kwargs)

    def counted_reading(self: Recompute, **kwargs: str | None) -> Recompute:
        readings.append((kwargs.get("egm_both_zero"), kwargs.get("ld_standardization")))
        return original_reading(self, **kwargs)

    monkeypatch.setattr(evaluate, "_layout", counted_layout)
    monkeypatch.setattr(Recompute, "reading", counted_reading)
    compute._engine.clear()  # engines an earlier test of this process left: every plan counted is this test's
    at = open_page("app_pages/2_Overview.py", timeout=TIMEOUT)
    assert any(s.value.startswith("EGM under both readings") for s in at.subheader)  # the second reading is shown
    assert readings == [("exclude", "separate")]
    assert len(layouts) == 1
    at.radio(key="overview_ld_standardization").set_value("reference").run()  # LD's other reading: no new layout
    _ok(at)
    assert len(layouts) == 1 and ("zero", "reference") in readings
