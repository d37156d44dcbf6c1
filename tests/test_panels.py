"""Panels (mean of the experts, of the LLMs) and their comparison with each other and the crowd."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import cohen_kappa_score

from empathy.agreement import pairwise_agreement
from empathy.io import validate_ratings
from empathy.panels import (
    compare_panels,
    default_panels,
    integer_scale_dimensions,
    panel_ratings,
    rater_vs_panel,
    round_half_up,
)
from empathy.paths import shared_dataset

# Five items on a 1-5 scale; two experts, two LLMs, a fractional crowd mean; e1 misses item 5.
VALUES = {
    "e1": ("expert", [1, 2, 3, 4, None]),
    "e2": ("expert", [2, 2, 4, 5, 5]),
    "l1": ("llm", [1, 3, 3, 5, 4]),
    "l2": ("llm", [2, 3, 4, 4, 5]),
    "crowd": ("crowd", [1.5, 2.5, 3.25, 4.5, 4.0]),
}


def _ratings(values: dict = VALUES, dimension: str = "d") -> pd.DataFrame:
    rows = [{"item_id": f"i{k + 1}", "model": "m", "rater": rater, "dimension": dimension,
             "value": np.nan if v is None else float(v), "rater_kind": kind, "reason": "", "signature": ""}
            for rater, (kind, series) in values.items() for k, v in enumerate(series)]
    return pd.DataFrame(rows)


def _panel_values(table: pd.DataFrame, rater: str) -> list[float]:
    return list(table[table["rater"] == rater].sort_values("item_id")["value"])


def test_default_panels_by_rater_kind():
    assert default_panels(_ratings()) == {"experts": ["e1", "e2"], "llms": ["l1", "l2"]}


def test_default_panels_skip_single_members_and_the_crowd():
    values = {"e1": ("expert", [1, 2, 3]), "l1": ("llm", [1, 2, 3]), "c1": ("crowd", [1, 2, 3]),
              "c2": ("crowd", [1, 2, 3]), "h1": ("human", [1, 2, 3]), "h2": ("human", [2, 2, 3])}
    assert default_panels(_ratings(values)) == {"humans": ["h1", "h2"]}


def test_panel_means_hand_worked():
    table = panel_ratings(_ratings())
    # experts: (1+2)/2, (2+2)/2, (3+4)/2, (4+5)/2, and item 5 only e2 -> 5
    assert _panel_values(table, "panel:experts") == [1.5, 2.0, 3.5, 4.5, 5.0]
    assert _panel_values(table, "panel:llms") == [1.5, 3.0, 3.5, 4.5, 4.5]
    experts = table[table["rater"] == "panel:experts"].set_index("item_id")
    assert experts.loc["i5", "reason"] == "mean of 1 of 2 panel members"
    assert experts.loc["i1", "rater_kind"] == "expert"
    assert len(table) == len(_ratings()) + 10
    validate_ratings(table)  # a table with panels is still valid ratings


def test_explicit_panels_and_errors():
    table = panel_ratings(_ratings(), {"mixed": ["e2", "l1"]})
    assert _panel_values(table, "panel:mixed") == [1.5, 2.5, 3.5, 5.0, 4.5]
    assert set(table.loc[table["rater"] == "panel:mixed", "rater_kind"]) == {""}
    with pytest.raises(ValueError, match=r"unknown rater\(s\) \['zz'\]"):
        panel_ratings(_ratings(), {"p": ["e1", "zz"]})
    with pytest.raises(TypeError, match="not the string"):
        panel_ratings(_ratings(), {"p": "e1"})


def test_a_unit_no_member_rated_gets_no_panel_row():
    values = {"e1": ("expert", [1, None]), "e2": ("expert", [2, None])}
    table = panel_ratings(_ratings(values))
    assert list(table.loc[table["rater"] == "panel:experts", "item_id"]) == ["i1"]


def test_compare_panels_statistics_equal_the_references():
    pairs = compare_panels(_ratings(), bootstrap=200, seed=0).set_index(["rater_a", "rater_b"])
    assert set(pairs.index) == {("panel:experts", "panel:llms"), ("crowd", "panel:experts"),
                                ("crowd", "panel:llms")}
    experts = [1.5, 2.0, 3.5, 4.5, 5.0]
    llms = [1.5, 3.0, 3.5, 4.5, 4.5]
    crowd = [1.5, 2.5, 3.25, 4.5, 4.0]
    row = pairs.loc[("panel:experts", "panel:llms")]
    assert row["n"] == 5
    assert row["spearman"] == pytest.approx(spearmanr(experts, llms).statistic)
    assert row["pearson"] == pytest.approx(pearsonr(experts, llms).statistic)
    assert row["spearman_low"] <= row["spearman"] <= row["spearman_high"]
    # the means are fractional: plain kappa is undefined; the rounded kappa rounds halves up (1.5 -> 2)
    assert row["kappa_quadratic"] is None or np.isnan(row["kappa_quadratic"])
    assert list(round_half_up(experts)) == [2, 2, 4, 5, 5]
    assert row["kappa_quadratic_rounded"] == pytest.approx(
        cohen_kappa_score([2, 2, 4, 5, 5], [2, 3, 4, 5, 5], weights="quadratic"))
    crowd_row = pairs.loc[("crowd", "panel:experts")]
    assert crowd_row["spearman"] == pytest.approx(spearmanr(crowd, experts).statistic)
    assert crowd_row["kappa_quadratic_rounded"] == pytest.approx(
        cohen_kappa_score([2, 3, 3, 5, 4], [2, 2, 4, 5, 5], weights="quadratic"))


def test_compare_panels_matches_pairwise_agreement_on_the_same_table():
    table = panel_ratings(_ratings())
    ours = compare_panels(table, bootstrap=100, seed=3)
    reference = pairwise_agreement(table, raters=["panel:experts", "panel:llms", "crowd"], bootstrap=100, seed=3)
    merged = ours.merge(reference, on=["dimension", "rater_a", "rater_b"], suffixes=("", "_ref"))
    assert len(merged) == 3
    for column in ("spearman", "spearman_low", "spearman_high", "pearson"):
        assert np.allclose(merged[column].astype(float), merged[f"{column}_ref"].astype(float))


def test_no_rounded_kappa_on_continuous_dimensions():
    values = {"e1": ("expert", [0.1, 0.4, 0.8, 0.3]), "e2": ("expert", [0.2, 0.5, 0.7, 0.3]),
              "l1": ("llm", [0.1, 0.6, 0.9, 0.2]), "l2": ("llm", [0.3, 0.5, 0.8, 0.1])}
    ratings = _ratings(values, dimension="e_ref")
    assert integer_scale_dimensions(ratings) == set()
    pairs = compare_panels(ratings, bootstrap=0)
    assert pairs["kappa_quadratic_rounded"].isna().all()
    assert integer_scale_dimensions(_ratings()) == {"d"}  # the crowd's fractions do not count


def test_rater_vs_panel():
    table = panel_ratings(_ratings())
    result = rater_vs_panel(table, "experts", raters=["l1", "l2", "crowd"]).set_index("rater")
    assert list(result.index) == ["l1", "l2", "crowd"]
    assert result.loc["l1", "spearman"] == pytest.approx(spearmanr([1, 3, 3, 5, 4],
                                                                   [1.5, 2.0, 3.5, 4.5, 5.0]).statistic)
    assert set(result["panel"]) == {"panel:experts"}
    assert result.loc["l1", "kappa_quadratic_rounded"] == pytest.approx(
        cohen_kappa_score([1, 3, 3, 5, 4], [2, 2, 4, 5, 5], weights="quadratic"))
    with pytest.raises(ValueError, match="panel:nobody"):
        rater_vs_panel(table, "nobody")


def test_cli_panels_json(tmp_path):
    path = tmp_path / "ratings.csv"
    _ratings().to_csv(path, index=False)
    result = subprocess.run([sys.executable, "-m", "empathy", "panels", str(path), "--bootstrap", "50",
                             "--format", "json"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = {(r["rater_a"], r["rater_b"]): r for r in json.loads(result.stdout)}
    assert rows[("panel:experts", "panel:llms")]["spearman"] == pytest.approx(
        spearmanr([1.5, 2.0, 3.5, 4.5, 5.0], [1.5, 3.0, 3.5, 4.5, 4.5]).statistic)
    assert rows[("panel:experts", "panel:llms")]["kappa_quadratic"] is None
    assert all("bootstrap:50" in r["signature"] for r in rows.values())


def test_cli_panels_bad_panel_spec(tmp_path):
    path = tmp_path / "ratings.csv"
    _ratings().to_csv(path, index=False)
    result = subprocess.run([sys.executable, "-m", "empathy", "panels", str(path), "--panel", "experts"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert "--panel: expected NAME=rater1,rater2" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_kumar2025_panels():
    directory = shared_dataset("kumar2025-empathic-communication")
    if directory is None:
        pytest.skip("shared/datasets/kumar2025-empathic-communication is absent")
    from empathy.datasets import import_kumar2025

    ratings = import_kumar2025(directory).ratings
    assert default_panels(ratings) == {"experts": ["expert1", "expert2", "expert3"],
                                       "llms": ["claude", "gemini", "gpt"]}
    pairs = compare_panels(ratings, dimensions=["empathy"], bootstrap=0)
    assert len(pairs) == 3 and (pairs["n"] == 50).all()
    table = panel_ratings(ratings)
    wide = table[table["dimension"] == "empathy"].pivot(index="item_id", columns="rater", values="value")
    expected = wide[["expert1", "expert2", "expert3"]].mean(axis=1)
    assert np.allclose(wide["panel:experts"], expected)


def test_docs_workbench_tables_match_the_bench():
    """docs/kumar2025.md's Workbench block is generated by bench/kumar2025_workbench.py; it must match the code."""
    directory = shared_dataset("kumar2025-empathic-communication")
    if directory is None:
        pytest.skip("shared/datasets/kumar2025-empathic-communication is absent")
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("kumar2025_workbench", root / "bench/kumar2025_workbench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    docs = (root / "docs/kumar2025.md").read_text(encoding="utf-8")
    assert f"{bench.BEGIN}\n{bench.build_block(directory)}\n{bench.END}" in docs
