"""empathy.exports: the results table in the paper's Table 6 layout and the agreement table, as people's CSV."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

from empathy.escaping import unspreadsheet_cell
from empathy.evaluate import compute_metrics
from empathy.exports import agreement_csv, agreement_table, table6, table6_csv
from empathy.io import load_dataset
from empathy.paths import DEMO_DIR

SIG = "empathy:0.1.0|judge[gpt]:x"


def _results(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["model", "scorer", "metric", "value"])


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_table6_layout_with_the_papers_numbers():
    # The first two rows of the paper's Table 6 (GPT-5.2 and Claude-Sonnet-4.5 as judges), given long.
    results = _results([
        ("Claude-Sonnet-4.5", "GPT-5.2", "SA", 0.481), ("Claude-Sonnet-4.5", "GPT-5.2", "CA", 0.933),
        ("Claude-Sonnet-4.5", "Claude-Sonnet-4.5", "SA", 0.239),
        ("Claude-Sonnet-4.5", "Claude-Sonnet-4.5", "CA", 0.967),
        ("DeepSeek-V3.2", "GPT-5.2", "CA", 0.700), ("DeepSeek-V3.2", "GPT-5.2", "SA", 0.530),
        ("DeepSeek-V3.2", "Claude-Sonnet-4.5", "SA", 0.338), ("DeepSeek-V3.2", "Claude-Sonnet-4.5", "CA", 0.700),
        ("DeepSeek-V3.2", "spacy-distancing", "LD", 1.25), ("Claude-Sonnet-4.5", "spacy-distancing", "LD", 0.5),
        ("DeepSeek-V3.2", "GPT-5.2", "EGM", np.nan), ("Claude-Sonnet-4.5", "GPT-5.2", "EGM", np.nan),
    ])
    assert _rows(table6_csv(results, SIG)) == [
        ["model", "Claude-Sonnet-4.5", "Claude-Sonnet-4.5", "GPT-5.2", "GPT-5.2", "spacy-distancing", "signature"],
        ["", "SA", "CA", "SA", "CA", "LD", ""],
        ["Claude-Sonnet-4.5", "0.239", "0.967", "0.481", "0.933", "0.5", SIG],
        ["DeepSeek-V3.2", "0.338", "0.7", "0.53", "0.7", "1.25", SIG],
    ]  # EGM has no value under any judge: no column; LD's scorer last; SA before CA as in the paper


def test_table6_keeps_undefined_cells_empty_and_tasks_apart():
    results = _results([("A", "j", "SA", 0.5), ("B", "j", "SA", np.nan), ("A", "j", "CA", 1.0), ("B", "j", "CA", 0.0)])
    results = pd.concat([results.assign(task="news"), results.assign(task="counseling", value=[0.1, 0.2, 0.3, 0.4])])
    rows = _rows(table6_csv(results, SIG))
    assert rows[:2] == [["task", "model", "j", "j", "signature"], ["", "", "SA", "CA", ""]]
    assert rows[2:] == [["counseling", "A", "0.1", "0.3", SIG], ["counseling", "B", "0.2", "0.4", SIG],
                        ["news", "A", "0.5", "1.0", SIG], ["news", "B", "", "0.0", SIG]]


def test_table6_neutralises_formula_cells_but_not_numbers():
    results = _results([("=HYPERLINK(\"x\")", "+judge", "SA", -0.25), ("@m", "+judge", "SA", 0.5)])
    rows = _rows(table6_csv(results, "=sig"))
    assert rows[0] == ["model", "'+judge", "signature"]
    assert rows[2] == ["'=HYPERLINK(\"x\")", "-0.25", "'=sig"]  # a negative number stays a number
    assert rows[3] == ["'@m", "0.5", "'=sig"]
    assert unspreadsheet_cell(rows[2][0]) == "=HYPERLINK(\"x\")"


def test_table6_refuses_duplicates_and_missing_columns():
    with pytest.raises(ValueError, match="more than one value for model 'A'"):
        table6(_results([("A", "j", "SA", 0.5), ("A", "j", "SA", 0.6)]))
    with pytest.raises(ValueError, match="lacks the column"):
        table6(pd.DataFrame({"model": ["A"]}))
    with pytest.raises(TypeError, match="DataFrame"):
        table6([("A", "j", "SA", 0.5)])


def test_table6_of_the_demo_matches_the_long_results():
    dataset = load_dataset(DEMO_DIR / "outputs.csv", sorted(DEMO_DIR.glob("ratings*.csv")))
    report = compute_metrics(dataset.outputs, dataset.ratings)
    wide = table6(report.table)
    long = report.table.set_index(["model", "scorer", "metric"])["value"]
    assert len(wide.columns) == int(report.table.groupby(["scorer", "metric"])["value"].apply(
        lambda v: v.notna().any()).sum())
    for (scorer, metric) in wide.columns:
        for model in wide.index:
            expected = long[(model, scorer, metric)]
            assert wide.loc[model, (scorer, metric)] == pytest.approx(expected, nan_ok=True)
    rows = _rows(table6_csv(report.table, report.signature))
    assert all(row[-1] == str(report.signature) for row in rows[2:])
    assert float(rows[2][1]) == pytest.approx(long[(rows[2][0], rows[0][1], rows[1][1])])


def test_agreement_table_and_csv():
    agreement = pd.DataFrame({
        "task": ["all"] * 3, "metric": ["CA", "SA", "SA"], "scorer_a": ["a", "b", "a"], "scorer_b": ["b", "c", "b"],
        "spearman": [0.763158, np.nan, 0.3], "n_models": [5, 2, 5]})
    table = agreement_table(agreement)
    assert list(table.columns) == ["metric", "scorer_a", "scorer_b", "spearman", "n_models"]  # one task: no column
    assert table[["metric", "scorer_a", "scorer_b"]].values.tolist() == [["SA", "a", "b"], ["SA", "b", "c"],
                                                                         ["CA", "a", "b"]]
    assert _rows(agreement_csv(agreement, SIG)) == [
        ["metric", "scorer_a", "scorer_b", "spearman", "n_models", "signature"],
        ["SA", "a", "b", "0.3", "5", SIG], ["SA", "b", "c", "", "2", SIG], ["CA", "a", "b", "0.763158", "5", SIG]]
    two_tasks = agreement.assign(task=["news", "news", "counseling"], scorer_a=["=a", "b", "a"])
    rows = _rows(agreement_csv(two_tasks, SIG))
    assert rows[0][0] == "task" and rows[1][:3] == ["counseling", "SA", "a"]
    assert rows[3][:3] == ["news", "CA", "'=a"]


def test_the_agreement_csv_keeps_which_labels_each_row_rests_on():
    """Issue 26 item 5: the rows of :func:`empathy.review.agreement_labels` keep their provenance in the file."""
    from empathy.review import PROVENANCE_COLUMNS, agreement_labels

    agreement = pd.DataFrame({"task": ["all"], "metric": ["CA"], "scorer_a": ["a"], "scorer_b": ["b"],
                              "spearman": [1.0], "n_models": [3]})
    applied = pd.DataFrame({"item_id": ["i1", "i1"], "model": ["m", "m"], "rater": ["a", "b"], "dimension": ["ca"] * 2,
                            "value": [0.0, 0.0], "annotator": ["ann"] * 2, "role": ["annotator"] * 2,
                            "updated_at": ["t1"] * 2})
    rows = _rows(agreement_csv(agreement_labels(agreement, applied), SIG))
    assert rows[0] == ["metric", "scorer_a", "scorer_b", "spearman", "n_models", *PROVENANCE_COLUMNS, "signature"]
    assert rows[1][5:8] == ["with_overrides", "1", "1"]
    assert rows[1][8].startswith("on 1 output a human decision gave a and b the same label")
    judges_only = _rows(agreement_csv(agreement_labels(agreement, None), SIG))
    assert judges_only[1][5:9] == ["judges", "0", "0", ""]


def test_the_agreement_csv_carries_rhos_uncertainty_before_the_provenance():
    """A Table 6 row a researcher compares carries its interval, exact p and tau-b (issue 23), in the command line's
    key order, and the provenance after them."""
    from empathy.exports import AGREEMENT_UNCERTAINTY
    from empathy.review import PROVENANCE_COLUMNS, agreement_labels

    agreement = pd.DataFrame({"task": ["all"], "metric": ["CA"], "scorer_a": ["a"], "scorer_b": ["b"],
                              "spearman": [0.9], "n_models": [5], "ci_low": [0.6], "ci_high": [1.0],
                              "p_exact": [0.0833], "p_method": ["exact"], "p_se": [np.nan], "kendall_tau_b": [0.8],
                              "p_kendall": [0.0833], "n_items": [40]})
    rows = _rows(agreement_csv(agreement_labels(agreement, None), SIG))
    assert rows[0] == ["metric", "scorer_a", "scorer_b", "spearman", "n_models", *AGREEMENT_UNCERTAINTY,
                       *PROVENANCE_COLUMNS, "signature"]
    assert rows[1][5:13] == ["0.6", "1.0", "0.0833", "exact", "", "0.8", "0.0833", "40"]
    assert list(agreement_table(agreement.drop(columns=["p_se", "n_items"])).columns)[5:] == [
        "ci_low", "ci_high", "p_exact", "p_method", "kendall_tau_b", "p_kendall"]
