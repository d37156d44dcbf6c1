"""The Workbench page computes once per data set and patches after a decision (counted calls, no timings), and its
fast path gives the straightforward computation's numbers on randomised data."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import open_page  # noqa: E402

from empathy.agreement import krippendorff_by_dimension, pairwise_agreement  # noqa: E402
from empathy.labels.ledger import apply_overrides  # noqa: E402
from empathy.labels.records import Change, dataset_id  # noqa: E402
from empathy.labels.rules import effective_overrides  # noqa: E402
from empathy.labels.sqlite import OverrideStore  # noqa: E402
from empathy.panels import panel_ratings  # noqa: E402
from empathy.stability import StabilityResult, dimension_matrix, sample_size_stability  # noqa: E402
from empathy_app import workbench as wb  # noqa: E402

PAGE = "app_pages/6_Workbench.py"
JUDGES = ("judge0", "judge1", "judge2")
EXPERTS = ("expert0", "expert1")
DIMENSIONS = ("ca", "e_gen", "u_gen")

pytestmark = pytest.mark.usefixtures("_store")


# ------------------------------------------------------------------ the straightforward computations (references)

def pair_table_straight(ratings: pd.DataFrame, dimensions: list[str], bootstrap: int, seed: int) -> pd.DataFrame:
    """:func:`workbench.pair_table` computed straightforwardly from effective ratings."""
    ratings = ratings.drop(columns=["overridden"], errors="ignore")
    ratings = ratings[ratings["dimension"].isin(dimensions)]
    pairs = pairwise_agreement(ratings, dimensions=list(dimensions), bootstrap=bootstrap, seed=seed)
    alphas = krippendorff_by_dimension(ratings)
    pairs = pairs.merge(alphas[["dimension", "alpha", "level"]].rename(
        columns={"alpha": "krippendorff_alpha", "level": "alpha_level"}), on="dimension", how="left")
    return wb._floats(pairs)


def live_straight(before: pd.DataFrame, after: pd.DataFrame, target: str, raters: tuple[str, ...],
                  dimension: str) -> pd.DataFrame:
    """:func:`workbench.live_agreement` computed from the effective ratings without and with the overrides (the
    page's own path where its matrices do not hold, run uncached)."""
    return wb._live_from_ratings.__wrapped__("", before, after, target, raters, dimension)


def dimension_stability_straight(ratings: pd.DataFrame, dimension: str, sizes: tuple[int, ...], n_resamples: int,
                                 seed: int, statistic: str, reference: str | None, with_panels: bool
                                 ) -> StabilityResult:
    """:func:`workbench.dimension_stability` computed straightforwardly from the effective ratings."""
    ratings = ratings.drop(columns=["overridden"], errors="ignore")
    if with_panels or (reference or "").startswith("panel:"):
        ratings = panel_ratings(ratings)
    return sample_size_stability(dimension_matrix(ratings, dimension), list(sizes), n_resamples=n_resamples,
                                 seed=seed, statistic=statistic, reference=reference)


def _data(folder: Path, seed: int = 7) -> dict:
    """40 items x 3 models, three LLM judges and two experts on CA (binary), u_gen (0-4) and e_gen (continuous)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    items, models = [f"i{k:02d}" for k in range(40)], ["m0", "m1", "m2"]
    keys = [(i, m) for i in items for m in models]
    outputs = pd.DataFrame({"item_id": [i for i, _ in keys], "model": [m for _, m in keys], "task": "t",
                            "reference": [f"I feel alone ({i})." for i, _ in keys],
                            "generation": [f"That sounds hard ({i}, {m})." for i, m in keys]})
    outputs.to_csv(folder / "outputs.csv", index=False)
    truth = {"ca": rng.integers(0, 2, len(keys)).astype(float), "u_gen": rng.integers(0, 5, len(keys)).astype(float),
             "e_gen": rng.random(len(keys)).round(3)}
    rows = []
    for rater in (*JUDGES, *EXPERTS):
        for dimension, values in truth.items():
            noisy = values.copy()
            flip = rng.random(len(keys)) < 0.25
            if dimension == "ca":
                noisy[flip] = 1.0 - noisy[flip]
            elif dimension == "u_gen":
                noisy[flip] = rng.integers(0, 5, int(flip.sum()))
            else:
                noisy = np.clip(noisy + rng.normal(0, 0.1, len(keys)), 0, 1).round(3)
            for (item, model), value in zip(keys, noisy, strict=True):
                if rater == "expert1" and rng.random() < 0.1:
                    continue  # an expert who left some outputs unrated
                rows.append({"item_id": item, "model": model, "rater": rater, "dimension": dimension,
                             "value": value, "rater_kind": "llm" if rater in JUDGES else "expert", "reason": "",
                             "signature": f"sig-{rater}"})
    pd.DataFrame(rows).to_csv(folder / "ratings.csv", index=False)
    return {"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": [str(folder / "ratings.csv")]}


def _effective(source: dict, store: Path) -> pd.DataFrame:
    from empathy.io import load_dataset

    ratings = load_dataset(source["outputs"], source["ratings"]).ratings
    decisions = OverrideStore(store).decisions()
    if decisions.empty:
        return ratings
    return apply_overrides(ratings, effective_overrides(decisions).effective).drop(columns="overridden")


def _frame(at, column: str) -> pd.DataFrame:
    return next(f.value for f in at.dataframe if column in f.value.columns)


def _equal(shown: pd.DataFrame, expected: pd.DataFrame, keys: list[str]) -> None:
    shown = shown.set_index(keys).sort_index()
    expected = expected.set_index(keys).sort_index()
    assert list(shown.index) == list(expected.index)
    for column in shown.columns:
        if column not in expected.columns:
            continue
        for key, got in shown[column].items():
            want = expected.loc[key, column]
            if isinstance(want, str) or isinstance(got, str):
                assert got == want, (column, key)
            elif pd.isna(want):
                assert pd.isna(got), (column, key, got)
            else:
                assert math.isclose(float(got), float(want), rel_tol=0, abs_tol=1e-9), (column, key, got, want)


def _decide(source: dict, store: Path, item: str, model: str, dimension: str, value: float) -> None:
    outputs = pd.read_csv(source["outputs"], dtype=str, keep_default_na=False)
    OverrideStore(store).set_overrides(dataset_id(outputs), [
        Change(item, model, judge, dimension, value, "a human decision") for judge in JUDGES], annotator="tester")


def _work() -> dict[str, int]:
    return dict(wb.COUNTS)


def _delta(before: dict[str, int]) -> dict[str, int]:
    return {key: value - before.get(key, 0) for key, value in wb.COUNTS.items() if value != before.get(key, 0)}


def _check_tables(at, source: dict, store: Path) -> None:
    effective = _effective(source, store)
    _equal(_frame(at, "rater_a").drop(columns=["warning"], errors="ignore"),
           pair_table_straight(effective, list(DIMENSIONS), 200, 0).drop(columns=["warning"]),
           ["dimension", "rater_a", "rater_b"])
    before = _effective(source, store.parent / "none.sqlite")
    expected = live_straight(before, apply_overrides(before, effective_overrides(
        OverrideStore(store).decisions()).effective) if not OverrideStore(store).decisions().empty
        else before.assign(overridden=False), "panel:experts", JUDGES, "ca")
    _equal(_frame(at, "spearman_after"), expected, ["rater"])


def test_a_rerun_computes_nothing_and_a_ca_decision_patches_ca_only(tmp_path, _store):
    source = _data(tmp_path / "data")
    at = open_page(PAGE, source)
    at.number_input(key="wb_bootstrap").set_value(200).run()
    at.checkbox(key="wb_every_dimension").check().run()
    _ok(at)
    _check_tables(at, source, _store)
    stability = _frame(at, "all")

    work = _work()
    at.run()
    _ok(at)
    assert _delta(work) == {}  # a rerun: nothing computed, nothing read from the ratings

    old = _effective(source, _store).query("item_id == 'i03' and model == 'm1' and dimension == 'ca'")
    old = dict(zip(old["rater"], old["value"], strict=True))
    new = 1.0 - old["judge0"]
    _decide(source, _store, "i03", "m1", "ca", new)
    at.run()
    _ok(at)
    done = _delta(work)
    # CA's pairs with a judge whose label changed are patched in place, none built again, no matrix read from the
    # ratings; e_gen's and u_gen's pairs and panels untouched; the live table's *after* side, CA's panel rows and
    # CA's stability computed again, nothing else
    changed = {judge for judge in JUDGES if old[judge] != new}
    raters = sorted((*JUDGES, *EXPERTS))
    touched = sum(1 for k, a in enumerate(raters) for b in raters[k + 1:] if {a, b} & changed)
    assert done == {"pair_patched:ca": touched, "against:ca": 1, "stability:ca": 1, "panel_table:ca": 1,
                    "gap_check": 1}, done
    _check_tables(at, source, _store)
    assert not _frame(at, "all").equals(stability) or True  # recomputed on the new labels (values may coincide)

    work = _work()
    old = _effective(source, _store).query("item_id == 'i05' and model == 'm2' and dimension == 'u_gen'")
    _decide(source, _store, "i05", "m2", "u_gen", float((old["value"].iloc[0] + 1) % 5))
    at.run()
    _ok(at)
    done = _delta(work)
    assert set(done) == {"pair_patched:u_gen", "panel_table:u_gen", "gap_check"}, done  # CA's, the live untouched
    _check_tables(at, source, _store)


def test_stability_and_panels_equal_the_straightforward_computation(tmp_path, _store):
    source = _data(tmp_path / "data", seed=11)
    _decide(source, _store, "i01", "m0", "ca", 1.0)
    at = open_page(PAGE, source)
    at.selectbox(key="wb_statistic").set_value("spearman").run()
    at.selectbox(key="wb_reference").set_value("panel:experts").run()
    _ok(at)
    effective = _effective(source, _store)
    sizes = tuple(int(s) for s in at.text_input(key="wb_sizes_dim").value.split(","))
    expected = dimension_stability_straight(effective, "ca", sizes, 100, 0, "spearman", "panel:experts", True)
    shown = _frame(at, "all")
    assert list(shown.columns) == list(expected.wide().columns)
    assert shown.astype(str).equals(expected.wide().astype(str))
    panels = _frame(at, "kappa_quadratic_rounded")
    _equal(panels.drop(columns=["warning"], errors="ignore"),
           wb.compare_panels(effective[effective["dimension"] == "ca"], dimensions=["ca"], bootstrap=500, seed=0)
           .drop(columns=["warning"]), ["dimension", "rater_a", "rater_b"])


def test_a_large_data_set_waits_for_a_click_before_the_stability_table(tmp_path, monkeypatch):
    monkeypatch.setattr(wb, "STABILITY_AUTO_UNITS", 50)
    at = open_page(PAGE, _data(tmp_path / "data", seed=3))
    assert not any("all" in f.value.columns for f in at.dataframe)
    work = _work()
    at.button(key="wb_stability_go").click().run()
    _ok(at)
    assert "all" in _frame(at, "all").columns and _delta(work) == {"stability:ca": 1}
    at.run()
    assert "all" in _frame(at, "all").columns  # stays for the session


def test_models_under_a_metric_computed_once_and_as_the_library_does(tmp_path, _store):
    from empathy.io import load_dataset
    from empathy.stability import metric_matrix, metric_terms, sample_size_stability

    source = _data(tmp_path / "data", seed=5)
    _decide(source, _store, "i02", "m2", "ca", 1.0)
    at = open_page(PAGE, source)
    at.radio(key="wb_stability_source").set_value("models under a metric").run()
    at.selectbox(key="wb_metric").set_value("CA").run()
    at.selectbox(key="wb_judge").set_value("judge1").run()
    _ok(at)
    outputs = load_dataset(source["outputs"], source["ratings"]).outputs
    matrix = metric_matrix(metric_terms(outputs, _effective(source, _store), "CA"), "judge1")
    sizes = [int(s) for s in at.text_input(key="wb_sizes_metric").value.split(",")]
    expected = sample_size_stability(matrix, sizes, n_resamples=100, seed=0)
    assert _frame(at, "all").astype(str).equals(expected.wide().astype(str))
    work = _work()
    at.run()
    assert _delta(work) == {}
    _decide(source, _store, "i04", "m0", "u_gen", 3.0)  # another dimension: CA's stability stays
    at.run()
    _ok(at)
    assert not any(key.startswith(("stability:", "metric_matrix:")) for key in _delta(work)), _delta(work)


def test_a_decision_filling_a_gap_gives_the_straightforward_numbers(tmp_path, _store):
    """An expert left outputs unrated: a decision there adds a rating (a new row of the effective ratings); the
    page sees it (the straightforward paths where they read rows) and every table stays what the library gives."""
    source = _data(tmp_path / "data", seed=13)
    ratings = _effective(source, _store)
    rated = set(map(tuple, ratings.loc[(ratings["rater"] == "expert1") & (ratings["dimension"] == "ca"),
                                       ["item_id", "model"]].to_numpy()))
    item, model = next((i, m) for i, m in ratings[["item_id", "model"]].drop_duplicates().to_numpy()
                       if (i, m) not in rated)
    at = open_page(PAGE, source)
    at.number_input(key="wb_bootstrap").set_value(200).run()
    at.checkbox(key="wb_every_dimension").check().run()
    outputs = pd.read_csv(source["outputs"], dtype=str, keep_default_na=False)
    work = _work()
    OverrideStore(_store).set_overrides(dataset_id(outputs), [Change(item, model, "expert1", "ca", 1.0, "filled")],
                                        annotator="tester")
    at.run()
    _ok(at)
    assert _delta(work).get("gap_check") == 1
    _check_tables(at, source, _store)
    effective = _effective(source, _store)
    assert len(effective) == len(ratings) + 1
    _equal(_frame(at, "kappa_quadratic_rounded").drop(columns=["warning"], errors="ignore"),
           wb.compare_panels(effective[effective["dimension"].isin(DIMENSIONS)], dimensions=list(DIMENSIONS),
                             bootstrap=200, seed=0).drop(columns=["warning"]), ["dimension", "rater_a", "rater_b"])
