"""Pairs tables past :data:`empathy.agreement.MAX_PAIRED_SCORERS` scorers: only the first in name order are
paired, the values of those pairs are exactly what an input holding only them gives, and one line says so (the
command line's stderr, the Agreement page)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from empathy.agreement import MAX_PAIRED_SCORERS, pairing_notice, pairwise_agreement, spearman_pairs

N_RATERS = MAX_PAIRED_SCORERS + 10  # 60: 1,770 pairs uncut, 1,225 cut


def _names(n: int) -> list[str]:
    return [f"r{k:02d}" for k in range(n)]  # zero-padded: name order is number order


def _wide(folder: Path, n_raters: int, seed: int = 0) -> Path:
    """4 items x 4 models, a CA label per rater in wide form (``<rater>:ca`` columns)."""
    rng = np.random.default_rng(seed)
    rows = [{"item_id": f"i{i}", "model": f"m{m}", "reference": "I lost my job and I feel worthless.",
             "generation": "That sounds hard. Have you thought about updating your CV?"}
            for i in range(4) for m in range(4)]
    table = pd.DataFrame(rows)
    labels = rng.integers(0, 2, size=(len(table), N_RATERS))  # the same labels whatever n_raters keeps
    for k, name in enumerate(_names(n_raters)):
        table[f"{name}:ca"] = labels[:, k]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "outputs.csv"
    table.to_csv(path, index=False)
    return path


def _cli(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "empathy", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "EMPATHY_CACHE_DIR": str(cache)})


def test_the_notice_names_what_was_cut_and_says_nothing_at_the_cap():
    assert pairing_notice({"CA": MAX_PAIRED_SCORERS, "SA": 3}) is None
    assert pairing_notice({"CA": 60, "SA": 3, "EGM": 70}, "judges") == (
        "pairs only the first 50 judges in name order on CA, EGM (up to 70 judges: 2,415 pairs each); to pair "
        "others, keep only their ratings in the input")


def test_spearman_pairs_pairs_the_first_scored_ones():
    rng = np.random.default_rng(1)
    grid = rng.random((5, N_RATERS + 1))
    grid[:, 0] = np.nan  # a scorer without a value is not one of the 50
    names = ["unscored", *_names(N_RATERS)]
    rows = spearman_pairs(grid, names)
    assert len(rows) == MAX_PAIRED_SCORERS * (MAX_PAIRED_SCORERS - 1) // 2
    assert {r["scorer_a"] for r in rows} | {r["scorer_b"] for r in rows} == set(_names(MAX_PAIRED_SCORERS))
    assert rows == spearman_pairs(grid[:, : MAX_PAIRED_SCORERS + 1], names[: MAX_PAIRED_SCORERS + 1])


def test_rater_pairs_past_the_cap_equal_the_pairs_of_the_first_raters():
    rng = np.random.default_rng(2)
    ratings = pd.DataFrame([{"item_id": f"i{i}", "model": "m", "rater": name, "dimension": "ca",
                             "value": float(rng.integers(0, 2))} for i in range(6) for name in _names(N_RATERS)])
    cut = pairwise_agreement(ratings)
    kept = pairwise_agreement(ratings[ratings["rater"].isin(_names(MAX_PAIRED_SCORERS))])
    assert len(cut) == 1225
    pd.testing.assert_frame_equal(cut, kept)


def test_metrics_pairs_the_first_50_judges_and_says_so_in_one_line(tmp_path):
    wide = _wide(tmp_path / "all", N_RATERS)
    result = _cli("metrics", str(wide), "--no-ld", "--resamples", "20", "--format", "json", cache=tmp_path / "c")
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if "Table 6" in line]
    assert notes == ["empathy: note: Table 6 pairs only the first 50 scorers in name order on CA (up to 60 scorers: "
                     "1,770 pairs each); to pair others, keep only their ratings in the input"]
    payload = json.loads(result.stdout)
    assert len({row["scorer"] for row in payload["metrics"]}) == N_RATERS  # every judge is still scored
    first = _cli("metrics", str(_wide(tmp_path / "first", MAX_PAIRED_SCORERS)), "--no-ld", "--resamples", "20",
                 "--format", "json", cache=tmp_path / "c")
    assert first.returncode == 0 and "Table 6" not in first.stderr
    assert payload["agreement"] == json.loads(first.stdout)["agreement"]
    assert len(payload["agreement"]) == 1225


def test_the_agreement_command_says_so_too(tmp_path):
    result = _cli("agreement", str(_wide(tmp_path, N_RATERS)), "--bootstrap", "0", "--format", "json",
                  cache=tmp_path / "c")
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if "pairs only" in line] == [
        "empathy: note: the agreement table pairs only the first 50 raters in name order on ca (up to 60 raters: "
        "1,770 pairs each); to pair others, keep only their ratings in the input"]


@pytest.mark.usefixtures("_store")
def test_the_agreement_page_says_so(tmp_path):
    pytest.importorskip("streamlit")
    from conftest import app_ok, app_texts
    from test_app import _app

    at = _app({"kind": "path", "outputs": str(_wide(tmp_path, N_RATERS)), "ratings": []})
    at.switch_page("app_pages/5_Agreement.py").run()
    app_ok(at)
    assert any("Table 6 pairs only the first 50 scorers" in text for text in app_texts(at.info))
