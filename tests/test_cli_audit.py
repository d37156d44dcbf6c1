"""The command line of a random audit and of intervals (issue 23): ``audit draw|list|show|estimate|budget`` and the
interval and PPI fields of ``metrics --format json``, on the demo data, against the library that computes them
(itself tested against ppi-python, by hand and for coverage in tests/test_inference.py and tests/test_bootstrap.py).
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pandas as pd
import pytest

from empathy.audit import draw_audit
from empathy.bootstrap import judge_agreement, model_intervals
from empathy.cli import main
from empathy.evaluate import text_features
from empathy.inference import ALL_TASKS, ppi_estimates
from empathy.io import load_dataset
from empathy.label_budget import label_budget
from empathy.labels.audits import audit_decisions, audit_mark, load_design
from empathy.labels.ledger import ledger_status
from empathy.labels.records import dataset_name
from empathy.labels.rules import make_changes
from empathy.labels.sqlite import OverrideStore
from empathy.paths import DEMO_DIR
from empathy.stability import metric_matrix, metric_terms

DECIDED = 30  # of the 60 drawn outputs (12 per model), the first in audit order


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo data copied into a folder, with its store beside it (the default store of ``--store``)."""
    folder = tmp_path_factory.mktemp("demo")
    for name in ("outputs.csv", "ratings_author.csv", "ratings_lexicon.csv"):
        shutil.copy(DEMO_DIR / name, folder / name)
    return folder


@pytest.fixture(autouse=True)
def _cache(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "audit-cli-cache"))
    monkeypatch.delenv("EMPATHY_STORE", raising=False)


def _run(capsys, *args: str) -> tuple[str, str]:
    assert main(list(args)) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def _json(capsys, *args: str) -> dict:
    out, _ = _run(capsys, *args, "--format", "json")
    return json.loads(out)


def _files(folder) -> list[str]:
    return [str(folder / "outputs.csv"), "--ratings", str(folder / "ratings_author.csv"), "--ratings",
            str(folder / "ratings_lexicon.csv")]


@pytest.fixture(scope="module")
def audited(demo):
    """An audit of the lexicon judge's e_gen (12 per model, seed 1) drawn by the CLI into the store beside the data,
    its first 30 outputs decided in audit order with the author's values (as Relabel records them), and one
    decision on a drawn output made from the disagreement queue (never an audit decision)."""
    store_path = demo / ".empathy-overrides.sqlite"  # the default store: beside the outputs
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMPATHY_CACHE_DIR", str(demo / "cache"))
        patch.delenv("EMPATHY_STORE", raising=False)
        assert main(["audit", "draw", *_files(demo), "--judge", "lexicon", "--dimension", "e_gen", "--per-model", "12",
                     "--seed", "1", "--store", "--format", "json"]) == 0
    data = load_dataset(demo / "outputs.csv", [demo / "ratings_author.csv", demo / "ratings_lexicon.csv"])
    store = OverrideStore(store_path)
    name = dataset_name(demo / "outputs.csv", store_path=store_path)
    design = load_design(store, name, draw_audit(data.outputs, data.ratings, judge="lexicon", dimension="e_gen",
                                                 per_model=12, seed=1).digest)
    author = data.ratings[(data.ratings["rater"] == "author") & (data.ratings["dimension"] == "e_gen")]
    truth = author.set_index(["item_id", "model"])["value"]
    for output in design.outputs[:DECIDED]:
        value = float(truth[(output.item_id, output.model)])
        store.set_overrides(name, make_changes(data.outputs, data.ratings, output.item_id, output.model, ["lexicon"],
                                               "e_gen", value), annotator="ann",
                            audit=audit_mark(design, output.item_id, output.model))
    late = design.outputs[DECIDED + 3]  # decided, but not in audit order: it must not count
    store.set_overrides(name, make_changes(data.outputs, data.ratings, late.item_id, late.model, ["lexicon"], "e_gen",
                                           0.0), annotator="ann")
    decisions = audit_decisions(ledger_status(store.decisions(name), data.outputs).fresh, design).decisions
    return {"data": data, "design": design, "store": store_path, "decisions": decisions, "name": name}


# ------------------------------------------------------------------------------------------ audit draw, list, show

def test_audit_draw_prints_the_design_the_library_draws(demo, capsys):
    payload = _json(capsys, "audit", "draw", *_files(demo), "--judge", "lexicon", "--dimension", "ca",
                    "--per-model", "3", "--seed", "5", "--stratify-by-task")
    data = load_dataset(demo / "outputs.csv", [demo / "ratings_author.csv", demo / "ratings_lexicon.csv"])
    design = draw_audit(data.outputs, data.ratings, judge="lexicon", dimension="ca", per_model=3, seed=5,
                        stratify_by_task=True)
    assert payload["design"]["digest"] == design.digest and payload["design"]["short_digest"] == design.short_digest
    assert payload["design"]["stratify_by_task"] is True and payload["stored"] is None
    assert [(r["position"], r["item_id"], r["model"]) for r in payload["outputs"]] == [
        (o.position, o.item_id, o.model) for o in design.outputs]
    assert payload["outputs"][0]["inclusion"] == pytest.approx(design.outputs[0].inclusion)
    assert f"audit:{design.short_digest}" in payload["signature"] and "judge[lexicon]:" in payload["signature"]
    assert "judge[author]" not in payload["signature"]  # the draw depends on the audited judge only
    out, _ = _run(capsys, "audit", "draw", *_files(demo), "--judge", "lexicon", "--dimension", "ca", "--per-model",
                  "3", "--seed", "5", "--stratify-by-task")
    assert out.startswith(f"audit {design.short_digest} ({design.digest}): 15 of 41 outputs") and "not kept" in out


def test_audit_list_and_show(audited, demo, capsys):
    design = audited["design"]
    listing = _json(capsys, "audit", "list", str(demo / "outputs.csv"))  # the store beside the outputs
    assert [d["digest"] for d in listing["designs"]] == [design.digest]
    shown = _json(capsys, "audit", "show", str(demo / "outputs.csv"), design.short_digest)
    assert shown["decided"] == DECIDED and shown["unmarked"] == 1
    assert [r["decided"] for r in shown["outputs"]] == [True] * DECIDED + [False] * (60 - DECIDED)
    assert shown["outputs"][0]["value"] == audited["decisions"]["value"].iloc[0]
    out, err = _run(capsys, "audit", "show", str(demo / "outputs.csv"))
    assert f"{DECIDED} of 60 decided in audit order" in out
    assert f"audit {design.short_digest}: {DECIDED} of 60 drawn outputs decided" in err
    assert "1 decided outside audit order (not used)" in err


# ------------------------------------------------------------------------------------------ estimates

def test_audit_estimate_and_budget_equal_the_library(audited, demo, capsys):
    data, design = audited["data"], audited["design"]
    report = ppi_estimates(data.outputs, data.ratings, design, audited["decisions"])
    payload = _json(capsys, "audit", "estimate", *_files(demo))
    got = pd.DataFrame(payload["estimates"])
    assert got["model"].tolist() == report.table["model"].tolist()
    for column in ("ppi_value", "ppi_low", "ppi_high", "human_value", "lam", "n_effective"):
        assert np.allclose(got[column].astype(float), report.table[column].astype(float), equal_nan=True), column
    assert got["n_decided"].sum() == report.table["n_decided"].sum()
    pooled = got[got["task"] == ALL_TASKS]
    assert int(pooled["n_decided"].sum()) == DECIDED and int(pooled["n_drawn"].sum()) == 60
    for field in ("estimator:ppi++", f"audit:{design.short_digest}", f"audit-decisions:{DECIDED}", "labels:latest"):
        assert field in payload["signature"].split("|")
    # p_better of adjacent models: T_df(d / se) with Welch-Satterthwaite df, checked against SciPy's t
    from scipy import stats

    for pair in payload["pairs"]:
        rows = report.table[(report.table["task"] == pair["task"]) & (report.table["metric"] == pair["metric"])
                            ].set_index("model")
        better, worse = rows.loc[pair["better"]], rows.loc[pair["worse"]]
        assert better["ppi_value"] <= worse["ppi_value"]  # every PPI metric: lower is better
        d, se = worse["ppi_value"] - better["ppi_value"], math.hypot(better["ppi_se"], worse["ppi_se"])
        v = (better["ppi_se"] ** 2, worse["ppi_se"] ** 2)
        df = (v[0] + v[1]) ** 2 / (v[0] ** 2 / (better["n_audit"] - 1) + v[1] ** 2 / (worse["n_audit"] - 1))
        assert pair["p_better"] == pytest.approx(stats.t.cdf(d / se, math.floor(df)), abs=1e-9)
    pooled_pairs = [p for p in payload["pairs"] if p["task"] == ALL_TASKS]
    assert len(pooled_pairs) == 4 * len({p["metric"] for p in pooled_pairs})  # five models: four neighbours
    budget = label_budget(report)
    got_budget = _json(capsys, "audit", "budget", *_files(demo))
    assert [p["further_decisions"] for p in got_budget["pairs"]] == [
        None if pd.isna(v) else int(v) for v in budget.pairs["further_decisions"]]
    assert [m["half_width"] for m in got_budget["models"]] == pytest.approx(budget.models["half_width"].tolist())
    assert got_budget["hit_rate"] == budget.hit_rate == 0.83  # the measured hit rate beside the plans
    assert [p["note"] for p in got_budget["pairs"]] == budget.pairs["note"].tolist()


def test_metrics_json_carries_intervals_ppi_rows_and_table6(audited, demo, capsys):
    data, design = audited["data"], audited["design"]
    payload = _json(capsys, "metrics", *_files(demo), "--store", "--pooled", "--no-ld", "--seed", "3",
                    "--resamples", "400")
    rows = payload["metrics"]
    judge_rows = [r for r in rows if r["estimator"] == "judge"]
    # the original keys first and unchanged, the new ones appended
    assert list(judge_rows[0])[:7] == ["model", "scorer", "metric", "value", "n", "n_missing", "n_undefined"]
    assert list(judge_rows[0])[7:] == ["estimator", "ci_low", "ci_high", "rank", "rank_low", "rank_high", "warning"]
    # pooled, SA and EGM rest on 23-25 items: no warning; CA on 7-9 counseling items: each says so
    assert all(r["warning"] is None for r in judge_rows if r["metric"] != "CA")
    assert all("fewer than 10" in r["warning"] for r in judge_rows if r["metric"] == "CA")
    # the judges' intervals are model_intervals' on the same items and seed (SA and EGM cover every item)
    for scorer in ("author", "lexicon"):
        for metric in ("SA", "EGM"):
            sentences = text_features(data.outputs).frame(data.outputs) if metric == "EGM" else None
            expected = model_intervals(metric_matrix(metric_terms(data.outputs, data.ratings if scorer == "author"
                                                                  else _applied(audited), metric,
                                                                  sentences=sentences), scorer),
                                       n_resamples=400, seed=3).models.set_index("model")
            # p_better of each adjacent pair: model_intervals' (the share of resamples the order survives)
            pairs = [r for r in payload["pairs"] if (r["scorer"], r["metric"]) == (scorer, metric)]
            library = model_intervals(metric_matrix(metric_terms(data.outputs, data.ratings if scorer == "author"
                                                                 else _applied(audited), metric,
                                                                 sentences=sentences), scorer),
                                      n_resamples=400, seed=3).pairs
            assert [(r["better"], r["worse"]) for r in pairs] == list(zip(library["better"], library["worse"],
                                                                          strict=True))
            assert [r["p_better"] for r in pairs] == pytest.approx(library["p_better"].tolist())
            for row in (r for r in judge_rows if (r["scorer"], r["metric"]) == (scorer, metric)):
                assert (row["ci_low"], row["ci_high"]) == pytest.approx(
                    (expected.loc[row["model"], "low"], expected.loc[row["model"], "high"])), (scorer, metric)
                assert (row["rank"], row["rank_low"], row["rank_high"]) == tuple(
                    int(expected.loc[row["model"], c]) for c in ("rank", "rank_low", "rank_high"))
    # beside each audited SA value, its PPI row: ppi_estimates' from the judge's own ratings
    report = ppi_estimates(data.outputs, data.ratings, design, audited["decisions"])
    expected = report.table[(report.table["task"] == ALL_TASKS)].set_index("model")
    ppi = [r for r in rows if r["estimator"] == "ppi"]
    assert {(r["scorer"], r["metric"]) for r in ppi} == {("lexicon", "SA")} and len(ppi) == 5
    for row in ppi:
        truth = expected.loc[row["model"]]
        assert (row["value"], row["ci_low"], row["ci_high"], row["human"]) == pytest.approx(
            (truth["ppi_value"], truth["ppi_low"], truth["ppi_high"], truth["human_value"]))
        assert row["n_audit"] == truth["n_audit"] and row["audit"] == design.short_digest
        assert row["ess_gain"] == pytest.approx(truth["ess_gain"])
        position = rows.index(row)
        assert (rows[position - 1]["estimator"], rows[position - 1]["model"]) == ("judge", row["model"])
    # Table 6 with its interval, exact p and tau-b: judge_agreement's (the lexicon side with the overrides applied)
    agreement = {r["metric"]: r for r in payload["agreement"]}
    both = pd.concat([data.ratings[data.ratings["rater"] == "author"], _applied(audited)])
    table = judge_agreement(metric_terms(data.outputs, both, "SA"), n_resamples=400, seed=3).table.iloc[0]
    sa = agreement["SA"]
    assert (sa["ci_low"], sa["ci_high"], sa["p_exact"], sa["kendall_tau_b"]) == pytest.approx(
        (table["ci_low"], table["ci_high"], table["p_exact"], table["kendall_tau_b"]))
    assert sa["p_method"] == "exact" and sa["n_models"] == 5
    fields = payload["signature"].split("|")
    for field in ("estimator:judge+ppi++", f"audit:{design.short_digest}", "resamples:400", "bootstrap-seed:3",
                  "interval:expanded-percentile", "bootstrap:items", f"audit-decisions:{DECIDED}"):
        assert field in fields, field


def _applied(audited) -> pd.DataFrame:
    """The lexicon judge's ratings with the store's overrides applied (what ``metrics --store`` scores as judge)."""
    data = audited["data"]
    store = OverrideStore(audited["store"])
    from empathy.labels.ledger import apply_ledger, open_ledger

    ledger = open_ledger(store, audited["name"], data.outputs)
    ratings = apply_ledger(data.ratings, ledger)
    return ratings[ratings["rater"] == "lexicon"].drop(columns="overridden")


def test_metrics_without_resamples_or_store_keeps_p_and_tau(demo, capsys):
    payload = _json(capsys, "metrics", *_files(demo), "--pooled", "--no-ld", "--resamples", "0")
    assert all(r["ci_low"] is None and r["rank_low"] is None for r in payload["metrics"])
    assert all(r["estimator"] == "judge" for r in payload["metrics"])
    assert all(r["p_exact"] is not None and r["ci_low"] is None for r in payload["agreement"])
    fields = payload["signature"].split("|")
    assert "bootstrap:none" in fields and "estimator:judge" in fields and not any(f.startswith("resamples")
                                                                                  for f in fields)


def test_metrics_intervals_are_reproducible_and_follow_the_seed(demo, capsys):
    args = ["metrics", *_files(demo), "--pooled", "--no-ld", "--resamples", "200"]
    first = _json(capsys, *args, "--seed", "4")
    again = _json(capsys, *args, "--seed", "4")
    other = _json(capsys, *args, "--seed", "5")
    assert first == again
    assert [r["ci_low"] for r in first["metrics"]] != [r["ci_low"] for r in other["metrics"]]
    for row in first["metrics"]:
        if row["ci_low"] is not None:
            assert row["ci_low"] <= row["value"] + 1e-12 and row["value"] <= row["ci_high"] + 1e-12
            assert row["rank_low"] <= row["rank"] <= row["rank_high"] or math.isnan(row["value"])


def test_metrics_table_shows_the_ppi_rows(audited, demo, capsys):
    out, err = _run(capsys, "metrics", *_files(demo), "--store", "--pooled", "--no-ld", "--resamples", "50")
    ppi_lines = [line for line in out.splitlines() if " ppi " in line]
    assert len(ppi_lines) == 5 and all(audited["design"].short_digest in line for line in ppi_lines)
    assert "estimator:judge+ppi++" in out and "p_exact" in out and "kendall_tau_b" in out
    assert f"audit {audited['design'].short_digest}: {DECIDED} of 60" in err


def test_metrics_asked_for_a_design_of_another_frame_is_an_error(audited, demo, tmp_path, capsys):
    # the outputs lost a model since the draw: the frame changed, so the design no longer describes the data
    folder = tmp_path / "changed"
    folder.mkdir()
    outputs = pd.read_csv(demo / "outputs.csv")
    outputs[outputs["model"] != "fennel"].to_csv(folder / "outputs.csv", index=False)
    for name in ("ratings_author.csv", "ratings_lexicon.csv"):
        ratings = pd.read_csv(demo / name)
        ratings[ratings["model"] != "fennel"].to_csv(folder / name, index=False)
    args = ["metrics", *_files(folder), "--store", str(audited["store"]), "--store-name", audited["name"], "--pooled",
            "--no-ld", "--resamples", "0", "--format", "json"]
    assert main(args) == 0  # every stored design by default: a stale one is skipped, with a note
    captured = capsys.readouterr()
    assert "audit" in captured.err and "skipped" in captured.err and "draw a new audit" in captured.err
    assert all(r["estimator"] != "ppi" for r in json.loads(captured.out)["metrics"])
    assert main([*args, "--audit", audited["design"].short_digest]) == 2  # asked for by name: an error
    assert "changed since audit" in capsys.readouterr().err
