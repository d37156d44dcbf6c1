"""Sample-size stability (Table 7 style): hand-worked values, the published Table 7, the data-model helpers, CLI."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from empathy.evaluate import compute_metrics, text_features
from empathy.io import load_dataset
from empathy.paths import DEMO_DIR
from empathy.stability import (
    default_sizes,
    dimension_matrix,
    metric_matrix,
    metric_terms,
    parse_summary_cell,
    parse_summary_table,
    rank_stability,
    sample_size_stability,
)

# The paper's Table 7 (SA of ten models at 50/100/150/200 counseling items, mean ± sd), as published.
TABLE7 = """model,50,100,150,200
Claude-Sonnet-4.5,0.481 $\\pm$ 0.012,0.532 $\\pm$ 0.007,0.535 $\\pm$ 0.007,0.542 $\\pm$ 0.008
DeepSeek-V3.2,0.530 $\\pm$ 0.008,0.530 $\\pm$ 0.015,0.497 $\\pm$ 0.009,0.495 $\\pm$ 0.010
Doubao-Seed1.8,0.337 $\\pm$ 0.028,0.212 $\\pm$ 0.043,0.208 $\\pm$ 0.043,0.210 $\\pm$ 0.045
GPT-5.2,0.529 $\\pm$ 0.011,0.478 $\\pm$ 0.009,0.491 $\\pm$ 0.007,0.488 $\\pm$ 0.007
Gemini-3,0.512 $\\pm$ 0.003,0.366 $\\pm$ 0.042,0.363 $\\pm$ 0.050,0.368 $\\pm$ 0.046
Grok-4.1,0.515 $\\pm$ 0.015,0.423 $\\pm$ 0.015,0.439 $\\pm$ 0.013,0.431 $\\pm$ 0.014
GLM-4.7,0.509 $\\pm$ 0.050,0.416 $\\pm$ 0.041,0.425 $\\pm$ 0.035,0.425 $\\pm$ 0.032
Kimi-K2,0.487 $\\pm$ 0.063,0.344 $\\pm$ 0.069,0.356 $\\pm$ 0.064,0.365 $\\pm$ 0.057
Llama-4,0.529 $\\pm$ 0.005,0.514 $\\pm$ 0.002,0.513 $\\pm$ 0.002,0.511 $\\pm$ 0.002
Qwen3-VL,0.431 $\\pm$ 0.046,0.303 $\\pm$ 0.055,0.293 $\\pm$ 0.054,0.294 $\\pm$ 0.054
"""


def _separated(n_units: int = 30, seed: int = 3) -> pd.DataFrame:
    """Four groups whose values lie in disjoint bands, so every subset ranks them the same way."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({name: offset + rng.uniform(0, 1, n_units)
                         for name, offset in (("a", 0.0), ("b", 2.0), ("c", 4.0), ("d", 6.0))})


# ------------------------------------------------------------------------------------------- hand-worked


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_full_size_without_replacement_has_zero_sd_and_the_full_value(statistic):
    data = _separated()
    data.loc[[2, 7], "b"] = np.nan  # left out, as a missing rating
    result = sample_size_stability(data, [len(data)], n_resamples=20, seed=1, statistic=statistic)
    full_size = result.table.set_index("group")
    expected = getattr(data, statistic)()  # pandas skips NaN, as the metrics do
    for group in "abcd":
        assert full_size.loc[group, "sd"] == 0.0
        assert full_size.loc[group, "mean"] == pytest.approx(expected[group], abs=1e-12)
    assert full_size.loc["b", "n_units_mean"] == len(data) - 2
    assert result.full.set_index("group").loc["b", "n"] == len(data) - 2


def test_subset_means_of_three_values():
    # Units 1, 2, 3; size 2 -> subsets {1,2},{1,3},{2,3} with means 1.5, 2, 2.5, each with probability 1/3:
    # expected mean 2, sd sqrt(1/6) = 0.408.
    result = sample_size_stability(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), [2], n_resamples=4000, seed=0)
    row = result.table.iloc[0]
    assert row["mean"] == pytest.approx(2.0, abs=0.03)
    assert row["sd"] == pytest.approx(np.sqrt(1 / 6), abs=0.02)
    values = []
    sample_size_stability(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), [2], n_resamples=50, seed=0,
                          statistic=lambda v: values.append(float(np.mean(v))) or 0.0)
    assert set(values[1:]) <= {1.5, 2.0, 2.5}  # values[0] is the full-data call


def test_subsets_are_drawn_without_replacement():
    data = pd.DataFrame({"x": np.arange(20, dtype=float)})
    result = sample_size_stability(data, [5, 12, 20], n_resamples=30, seed=4,
                                   statistic=lambda v: float(len(np.unique(v))))
    table = result.table.set_index("size")
    for size in (5, 12, 20):
        assert table.loc[size, "mean"] == size
        assert table.loc[size, "sd"] == 0.0


def test_well_separated_groups_keep_their_ranking_at_every_size():
    result = sample_size_stability(_separated(), [3, 10, 20, 30], n_resamples=40, seed=0)
    assert len(result.rank_spearman) == 10  # C(5, 2): four sizes and the full data
    assert (result.rank_spearman["spearman"] == 1.0).all()
    assert (result.rank_spearman["n_groups"] == 4).all()
    assert result.resample_rank["spearman_mean"].to_numpy() == pytest.approx(1.0)
    assert (result.resample_rank["same_ranking"] == 1.0).all()


def test_averaged_columns_hide_what_one_subset_does():
    # Ten groups whose means differ by less than their noise: single small subsets scramble the ranking,
    # but the average over many subsets recovers the full-data values, so the Table-7 reading stays near 1.
    rng = np.random.default_rng(0)
    data = pd.DataFrame({f"g{k}": rng.normal(0.02 * k, 1.0, 200) for k in range(10)})
    result = sample_size_stability(data, [20, 200], n_resamples=300, seed=0)
    ranks = result.rank_spearman.set_index(["size_a", "size_b"])["spearman"]
    per_subset = result.resample_rank.set_index("size")
    assert ranks[(20, "all")] > 0.9
    assert per_subset.loc[20, "spearman_mean"] < 0.5
    assert per_subset.loc[20, "same_ranking"] == 0.0
    assert per_subset.loc[200, "spearman_mean"] == pytest.approx(1.0) and per_subset.loc[200, "spearman_sd"] == 0.0
    assert per_subset.loc[200, "same_ranking"] == 1.0


def test_seeded_runs_are_reproducible_and_seeds_differ():
    data = _separated()
    first = sample_size_stability(data, [5, 10], n_resamples=25, seed=7)
    again = sample_size_stability(data, [5, 10], n_resamples=25, seed=7)
    other = sample_size_stability(data, [5, 10], n_resamples=25, seed=8)
    pd.testing.assert_frame_equal(first.table, again.table)
    assert not np.allclose(first.table["mean"], other.table["mean"])


def test_sd_shrinks_with_size():
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x": rng.normal(0, 1, 200)})
    table = sample_size_stability(data, [20, 50, 100, 150], n_resamples=200, seed=0).table
    assert list(table["sd"]) == sorted(table["sd"], reverse=True)


def test_agreement_statistic_against_a_reference():
    data = pd.DataFrame({"ref": [1.0, 2, 3, 4, 5, 6], "same": [1.0, 2, 3, 4, 5, 6], "reversed": [6.0, 5, 4, 3, 2, 1]})
    result = sample_size_stability(data, [3, 6], n_resamples=10, seed=0, statistic="spearman", reference="ref")
    table = result.table.set_index(["group", "size"])
    assert set(result.table["group"]) == {"same", "reversed"}
    assert table.loc[("same", 3), "mean"] == 1.0 and table.loc[("same", 3), "sd"] == 0.0
    assert table.loc[("reversed", 6), "mean"] == -1.0


def test_wide_is_the_table7_layout():
    result = sample_size_stability(_separated(), [10, 30], n_resamples=10, seed=0)
    wide = result.wide()
    assert list(wide.columns) == ["group", "10", "30", "all"]
    assert wide.loc[0, "30"].endswith("± 0.000")
    payload = result.to_json()
    json.dumps(payload)
    assert payload["sizes"] == [10, 30] and payload["n_units"] == 30


@pytest.mark.parametrize("kwargs, error, match", [
    ({"sizes": [31]}, ValueError, "larger than the data"),
    ({"sizes": [0]}, ValueError, "at least 1"),
    ({"sizes": []}, ValueError, "non-empty"),
    ({"sizes": [5, 5]}, ValueError, "repeat"),
    ({"sizes": [2.5]}, TypeError, "integers"),
    ({"sizes": [5], "n_resamples": 1}, ValueError, "n_resamples"),
    ({"sizes": [5], "statistic": "mode"}, ValueError, "statistic"),
    ({"sizes": [5], "statistic": "spearman"}, ValueError, "reference"),
    ({"sizes": [5], "reference": "a"}, ValueError, "only used"),
    ({"sizes": [5], "groups": ["zz"]}, ValueError, "unknown group"),
])
def test_bad_arguments_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        sample_size_stability(_separated(), **kwargs)


def test_non_numeric_column_is_named():
    with pytest.raises(TypeError, match="'b'"):
        sample_size_stability(pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}), [1])


@pytest.mark.parametrize("n, expected", [(200, [50, 100, 150, 200]), (4, [1, 2, 3, 4]), (2, [1, 2]),
                                         (25, [6, 12, 19, 25])])
def test_default_sizes(n, expected):
    assert default_sizes(n) == expected


# ---------------------------------------------------------------------------------------- Table 7


@pytest.mark.parametrize("cell, expected", [("0.481 $\\pm$ 0.012", (0.481, 0.012)), ("0.5 ± 0.1", (0.5, 0.1)),
                                            ("0.5 +- 0.1", (0.5, 0.1)), ("0.25", (0.25, None)), (0.3, (0.3, None))])
def test_parse_summary_cell(cell, expected):
    assert parse_summary_cell(cell) == expected


def _table7() -> pd.DataFrame:
    from io import StringIO

    return parse_summary_table(pd.read_csv(StringIO(TABLE7), dtype=str))


def test_table7_rank_stability_reproduces_the_papers_reading():
    ranks = rank_stability(_table7()).set_index(["size_a", "size_b"])["spearman"]
    # 100 vs 150 and 100 vs 200: two models swap neighbouring ranks (Doubao/Qwen3-VL below 0.3; GPT-5.2 and
    # DeepSeek-V3.2): rho = 1 - 6 * (1 + 1) / (10 * 99) = 0.98788. 150 vs 200: identical order.
    assert ranks[("100", "150")] == pytest.approx(1 - 12 / 990)
    assert ranks[("100", "200")] == pytest.approx(1 - 12 / 990)
    assert ranks[("150", "200")] == pytest.approx(1.0)
    means = _table7()
    for a, b in itertools.combinations(means.columns, 2):
        assert ranks[(a, b)] == pytest.approx(spearmanr(means[a], means[b]).statistic)
    # "the 50-instance setting exhibits greater fluctuation": its rank agreement is far lower.
    assert ranks[("50", "100")] == pytest.approx(0.6444, abs=1e-4)


def test_table7_cli_summary(tmp_path):
    path = tmp_path / "table7.csv"
    path.write_text(TABLE7, encoding="utf-8")
    result = _run("stability", str(path), "--summary", "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = {(r["size_a"], r["size_b"]): r for r in json.loads(result.stdout)["rank_spearman"]}
    assert rows[("150", "200")]["spearman"] == pytest.approx(1.0)
    assert rows[("100", "150")]["n_groups"] == 10


def test_table7_structure_from_per_item_terms():
    # A per-model table of per-item terms (what the paper resampled) -> Table 7's layout and rank Spearman.
    rng = np.random.default_rng(0)
    levels = {"m1": 0.2, "m2": 0.35, "m3": 0.5, "m4": 0.65}
    terms = pd.DataFrame({m: np.clip(rng.normal(mu, 0.05, 200), -1, 1) for m, mu in levels.items()})
    result = sample_size_stability(terms, [50, 100, 150, 200], n_resamples=100, seed=0)
    wide = result.wide()
    assert list(wide.columns) == ["group", "50", "100", "150", "200", "all"]
    assert list(wide["group"]) == list(levels)
    assert (result.rank_spearman["spearman"] == 1.0).all()
    sd = result.table.pivot(index="group", columns="size", values="sd")
    assert (sd[200] == 0).all() and (sd[50] > sd[150]).all()


# ------------------------------------------------------------------------------- from the data model


def _demo():
    return load_dataset(DEMO_DIR / "outputs.csv", [DEMO_DIR / "ratings_author.csv"])


def _sentences(texts):
    # a fixed stand-in analyser: sentence count = number of '.', at least 1; no distancing densities
    return (np.array([max(t.count("."), 1) for t in texts], dtype=float), np.zeros((len(texts), 3)))


@pytest.mark.parametrize("metric", ["SA", "EGM", "CA"])
def test_metric_terms_full_mean_equals_compute_metrics(metric):
    dataset = _demo()
    features = text_features(dataset.outputs, _sentences, signature="test")
    report = compute_metrics(dataset.outputs, dataset.ratings, features=features, include_ld=False)
    terms = metric_terms(dataset.outputs, dataset.ratings, metric,
                         sentences=features.frame(dataset.outputs))
    matrix = metric_matrix(terms)
    result = sample_size_stability(matrix, [len(matrix)], n_resamples=2, seed=0)
    expected = report.table[report.table["metric"] == metric].set_index("model")
    full = result.full.set_index("group")
    for model in expected.index:
        assert full.loc[model, "value"] == pytest.approx(expected.loc[model, "value"], abs=1e-12)
        assert full.loc[model, "n"] == expected.loc[model, "n"]


def test_metric_terms_statuses():
    outputs = pd.DataFrame({"item_id": ["i1", "i2", "i3"], "model": "m", "reference": "", "generation": ""})
    ratings = pd.DataFrame({"item_id": ["i1", "i1", "i2", "i2", "i3"], "model": "m", "rater": "j",
                            "dimension": ["e_ref", "e_gen", "e_ref", "e_gen", "e_ref"],
                            "value": [0.8, 0.2, 0.0, 0.1, 0.5]})
    terms = metric_terms(outputs, ratings, "SA").set_index("item_id")
    assert terms.loc["i1", "term"] == pytest.approx(0.75)
    assert list(terms["status"]) == [0, 2, 1]  # OK, UNDEFINED (E(t) = 0), MISSING (no e_gen)
    assert np.isnan(terms.loc["i2", "term"]) and np.isnan(terms.loc["i3", "term"])


def test_metric_matrix_needs_a_judge_when_there_are_several():
    terms = pd.DataFrame({"item_id": ["i1", "i1"], "model": "m", "judge": ["a", "b"], "term": [0.1, 0.2],
                          "status": 0})
    with pytest.raises(ValueError, match="choose one of"):
        metric_matrix(terms)
    assert metric_matrix(terms, "b").loc["i1", "m"] == 0.2
    with pytest.raises(ValueError, match="EGM needs"):
        metric_terms(pd.DataFrame({"item_id": ["i1"], "model": ["m"]}),
                     pd.DataFrame({"item_id": ["i1"], "model": ["m"], "rater": ["a"], "dimension": ["u_ref"],
                                   "value": [1.0]}), "EGM")


def test_dimension_matrix():
    ratings = pd.DataFrame({"item_id": ["i1", "i1", "i2"], "model": "m", "rater": ["a", "b", "a"],
                            "dimension": "d", "value": [1.0, 2.0, 3.0]})
    matrix = dimension_matrix(ratings, "d")
    assert list(matrix.columns) == ["a", "b"]
    assert np.isnan(matrix.loc[("i2", "m"), "b"])
    with pytest.raises(ValueError, match="no ratings on dimension 'x'"):
        dimension_matrix(ratings, "x")


# ------------------------------------------------------------------------------------------------- CLI


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "empathy", *args], capture_output=True, text=True, timeout=300)


def test_cli_metric_json_matches_the_api():
    result = _run("stability", str(DEMO_DIR / "outputs.csv"), "--ratings", str(DEMO_DIR / "ratings_author.csv"),
                  "--metric", "CA", "--sizes", "4,8", "--resamples", "30", "--seed", "2", "--format", "json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    dataset = _demo()
    matrix = metric_matrix(metric_terms(dataset.outputs, dataset.ratings, "CA"))
    expected = sample_size_stability(matrix, [4, 8], n_resamples=30, seed=2)
    assert payload["metric"] == "CA" and payload["judge"] == "author"
    assert [r["mean"] for r in payload["stability"]] == pytest.approx(list(expected.table["mean"]), nan_ok=True)
    assert "seed:2" in payload["signature"]


def test_cli_dimension_table():
    result = _run("stability", str(DEMO_DIR / "ratings_author.csv"), "--dimension", "e_ref", "--sizes", "30,121",
                  "--resamples", "10")
    assert result.returncode == 0, result.stderr
    assert "author" in result.stdout and "± 0.000" in result.stdout and "signature:" in result.stdout


def test_cli_per_item(tmp_path):
    path = tmp_path / "terms.csv"
    pd.DataFrame({"item_id": [f"i{k}" for k in range(6)], "m1": [0.1, 0.2, 0.1, 0.2, 0.1, 0.2],
                  "m2": [0.5, 0.6, 0.5, 0.6, 0.5, None]}).to_csv(path, index=False)
    result = _run("stability", str(path), "--per-item", "--sizes", "6", "--resamples", "5", "--format", "json")
    assert result.returncode == 0, result.stderr
    full = {r["group"]: r for r in json.loads(result.stdout)["full"]}
    assert full["m1"]["value"] == pytest.approx(0.15) and full["m2"]["n"] == 5


@pytest.mark.parametrize("content, args, message", [
    ("item_id,m1\ni1,0.1\ni2,abc\n", ["--per-item", "--sizes", "1"], "row 3, column 'm1': not a number: 'abc'"),
    ("model,50,100\nA,0.5 ± 0.1,0.4\nB,0.3,x\n", ["--summary"], "row 3, column '100'"),
    ("item_id,m1\ni1,0.1\ni2,0.2\n", ["--per-item", "--sizes", "3"], "size 3 is larger than the data"),
    ("item_id,m1\ni1,0.1\ni2,0.2\n", ["--per-item", "--sizes", "a,b"], "--sizes: 'a' is not a whole number"),
])
def test_cli_bad_input_is_one_line_exit_2(tmp_path, content, args, message):
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    result = _run("stability", str(path), *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_cli_metric_with_several_judges_asks_for_one():
    result = _run("stability", str(DEMO_DIR / "outputs.csv"), "--ratings", str(DEMO_DIR / "ratings_author.csv"),
                  "--ratings", str(DEMO_DIR / "ratings_lexicon.csv"), "--metric", "SA")
    assert result.returncode == 2
    assert "several judges rated it; choose one with --judge (author, lexicon)" in result.stderr


def test_cli_bad_ratings_file_names_row_and_column(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("item_id,model,rater,dimension,value\ni1,m,a,ca,0.5\n", encoding="utf-8")
    result = _run("stability", str(path), "--dimension", "ca")
    assert result.returncode == 2
    assert "r.csv, row 2, column 'value'" in result.stderr


@pytest.mark.parametrize("size", [3, 7, 40])
def test_vectorised_statistics_equal_the_per_subset_loop(size):
    from empathy.agreement import spearman
    from empathy.stability import _fast

    rng = np.random.default_rng(size)
    column = rng.integers(1, 6, 40).astype(float)  # ties and constant subsets happen
    reference = rng.integers(1, 4, 40).astype(float)
    subsets = np.sort(rng.random((300, 40)).argsort(axis=1)[:, :size], axis=1)
    fast = _fast("spearman", column, reference, subsets)
    loop = np.array([np.nan if (r := spearman(column[s], reference[s])) is None else r for s in subsets])
    assert np.array_equal(np.isnan(fast), np.isnan(loop))
    assert fast[~np.isnan(fast)] == pytest.approx(loop[~np.isnan(loop)], abs=1e-12)
    column[5] = np.nan
    assert _fast("spearman", column, reference, subsets) is None  # missing values: the loop handles them
    means = _fast("mean", column, None, subsets)
    assert means == pytest.approx([np.nanmean(column[s]) for s in subsets], abs=1e-12, nan_ok=True)


# ------------------------------------------------------------- --metric reads the registry at run time (issue 22)

@pytest.mark.parametrize(("command", "metric", "why"), [
    ("stability", "LD", "LD reads no judge rating"), ("stability", "BLEU", "not a registered metric"),
    ("stability", "sa", "not a registered metric"), ("fragility", "LD", "LD reads no judge rating"),
])
def test_cli_metric_outside_the_judged_metrics_is_one_line_exit_2(command, metric, why):
    result = _run(command, str(DEMO_DIR / "outputs.csv"), "--ratings", str(DEMO_DIR / "ratings_author.csv"),
                  "--metric", metric)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (f"empathy: error: --metric: invalid choice {metric!r} ({why}); choose from SA, "
                                     "EGM, CA")


def test_cli_metric_accepts_a_registered_metric():
    """A metric registered from Python (empathy.metrics.register_metric) is a --metric choice at once."""
    from empathy import metrics as m
    from empathy.cli import main

    def gain(x: m.TermInputs) -> m.Terms:  # E(g) - E(t)
        ref, gen = x.ratings["e_ref"], x.ratings["e_gen"]
        return gen - ref, np.where(np.isnan(ref) | np.isnan(gen), m.MISSING, m.OK).astype(np.int8)

    args = ["stability", str(DEMO_DIR / "outputs.csv"), "--ratings", str(DEMO_DIR / "ratings_author.csv"),
            "--metric", "GAIN", "--sizes", "8", "--resamples", "3", "--format", "json"]
    with m.registered(m.MetricSpec("GAIN", ("e_ref", "e_gen"), gain)), contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(args) == 0
    payload = json.loads(out.getvalue())
    dataset = _demo()
    author = dataset.ratings[dataset.ratings["rater"] == "author"]
    wide = author.pivot_table(index=["item_id", "model"], columns="dimension", values="value", aggfunc="first")
    expected = (wide["e_gen"] - wide["e_ref"]).groupby(level="model").mean()
    full = {row["group"]: row["value"] for row in payload["full"]}
    assert payload["metric"] == "GAIN" and full == pytest.approx(expected.to_dict())
    assert main(args) == 2  # unregistered again
