"""The CLI contract that scripts and notebooks depend on, checked on the bundled demo data."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from empathy.paths import DEMO_DIR

OUTPUTS = DEMO_DIR / "outputs.csv"
AUTHOR = DEMO_DIR / "ratings_author.csv"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "empathy", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def metrics_json(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    result = run_cli("metrics", str(OUTPUTS), "--ratings", str(AUTHOR), "--format", "json",
                     env={"EMPATHY_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_metrics_json_shape(metrics_json):
    assert set(metrics_json) == {"metrics", "agreement", "signature"}
    for row in metrics_json["metrics"]:
        assert {"model", "scorer", "metric", "value", "n"} <= set(row)
        assert row["metric"] in {"SA", "EGM", "CA", "LD"}
        assert row["value"] is None or isinstance(row["value"], float)
        assert isinstance(row["n"], int)
    models = sorted(pd.read_csv(OUTPUTS)["model"].unique())
    ld = {row["model"]: row for row in metrics_json["metrics"] if row["metric"] == "LD"}
    assert sorted(ld) == models
    assert all(row["scorer"] == "spacy-distancing" and row["value"] >= 0 for row in ld.values())


def test_metrics_json_values_equal_the_equations_on_the_raw_file(metrics_json):
    raw = pd.read_csv(AUTHOR)
    wide = raw.pivot_table(index=["item_id", "model"], columns="dimension", values="value", dropna=False)
    got = {(r["model"], r["metric"]): r for r in metrics_json["metrics"] if r["scorer"] == "author"}
    for model, part in wide.groupby(level="model"):
        ca = part["ca"].dropna()
        assert got[(model, "CA")]["value"] == pytest.approx(ca.mean())
        assert got[(model, "CA")]["n"] == len(ca)
        usable = part.dropna(subset=["e_ref", "e_gen"])
        usable = usable[usable["e_ref"] > 0]
        sa = ((usable["e_ref"] - usable["e_gen"]) / usable["e_ref"]).mean()
        assert got[(model, "SA")]["value"] == pytest.approx(sa)
        assert got[(model, "SA")]["n"] == len(usable)


def test_metrics_signature(metrics_json):
    fields = metrics_json["signature"].split("|")
    assert fields[0].startswith("empathy:")
    assert any(f.startswith("ld:spacy:") for f in fields)
    assert "judge[author]:hand-assigned by the demo data author" in fields


def test_metrics_table_and_csv_formats(tmp_path):
    env = {"EMPATHY_CACHE_DIR": str(tmp_path)}
    table = run_cli("metrics", str(OUTPUTS), "--ratings", str(AUTHOR), "--format", "table", env=env)
    assert table.returncode == 0 and "signature: empathy:" in table.stdout
    csv = run_cli("metrics", str(OUTPUTS), "--ratings", str(AUTHOR), "--format", "csv", "--by-task", env=env)
    frame = pd.read_csv(pd.io.common.StringIO(csv.stdout))
    assert {"task", "model", "scorer", "metric", "value", "n", "signature"} <= set(frame.columns)
    assert set(frame["task"]) == {"news", "translation", "counseling"}


AGREEMENT_RATINGS = pd.DataFrame({
    "item_id": [str(i) for i in range(8)] * 3,
    "model": "m",
    "rater": ["a"] * 8 + ["b"] * 8 + ["c"] * 8,
    "dimension": "ca",
    "value": [1, 0, 1, 1, 0, 1, 0, 0] + [1, 0, 0, 1, 0, 1, 1, 0] + [1, 1, 1, 1, 0, 1, 0, 0],
})


def test_agreement_json_contract(tmp_path):
    path = tmp_path / "ratings.csv"
    AGREEMENT_RATINGS.to_csv(path, index=False)
    result = run_cli("agreement", str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert isinstance(rows, list) and len(rows) == 3
    for row in rows:
        assert {"dimension", "rater_a", "rater_b", "n", "spearman", "kappa", "kappa_quadratic"} <= set(row)
        a = AGREEMENT_RATINGS.query("rater == @row['rater_a']")["value"].to_numpy()
        b = AGREEMENT_RATINGS.query("rater == @row['rater_b']")["value"].to_numpy()
        assert row["n"] == 8
        assert row["kappa"] == pytest.approx(cohen_kappa_score(a, b))
        assert row["kappa_quadratic"] == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))
        assert row["spearman"] == pytest.approx(np.corrcoef(a, b)[0, 1])  # binary: Spearman = Pearson = phi
        assert row["alpha_level"] == "nominal"
    import krippendorff

    matrix = AGREEMENT_RATINGS.pivot(index="rater", columns="item_id", values="value").to_numpy(dtype=float)
    assert rows[0]["krippendorff_alpha"] == pytest.approx(krippendorff.alpha(matrix, level_of_measurement="nominal"))


def test_agreement_on_demo_wide_columns_is_reproducible(tmp_path):
    a = run_cli("agreement", str(AUTHOR), "--format", "json", "--bootstrap", "50", "--seed", "4")
    b = run_cli("agreement", str(AUTHOR), "--format", "json", "--bootstrap", "50", "--seed", "4")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    assert json.loads(a.stdout) == []  # one rater: no pairs


def test_every_subcommand_is_registered():
    result = run_cli("--help")
    for command in ("metrics", "agreement", "distancing", "judge", "standard", "import"):
        assert command in result.stdout


def test_metrics_apply_the_stored_overrides(tmp_path):
    from empathy.io import load_outputs
    from empathy.store import OverrideStore, dataset_id

    outputs, _ = load_outputs(OUTPUTS)
    store_path = tmp_path / "overrides.sqlite"
    store = OverrideStore(store_path)
    raw = pd.read_csv(AUTHOR)
    fennel = raw.query("model == 'fennel' and dimension == 'ca'")
    # flip every CA label of fennel that is 1 to 0: its CA must drop to 0 with the same n
    for row in fennel.query("value == 1").itertuples():
        store.set_override(dataset_id(outputs), row.item_id, "fennel", "author", "ca", 0.0, annotator="test")
    n_changed = int((fennel["value"] == 1).sum())
    result = run_cli("metrics", str(OUTPUTS), "--ratings", str(AUTHOR), "--overrides", str(store_path),
                     "--format", "json", env={"EMPATHY_CACHE_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    ca = next(r for r in payload["metrics"] if (r["model"], r["scorer"], r["metric"]) == ("fennel", "author", "CA"))
    assert ca["value"] == 0.0 and ca["n"] == fennel["value"].notna().sum()
    assert f"overrides:{n_changed}" in payload["signature"].split("|")
