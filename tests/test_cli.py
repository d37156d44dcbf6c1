"""The CLI contract that scripts and notebooks depend on, checked on the bundled demo data."""

from __future__ import annotations

import csv
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
    result = run_cli("metrics", str(OUTPUTS), "--ratings", str(AUTHOR), "--format", "json", "--pooled",
                     env={"EMPATHY_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_metrics_json_shape(metrics_json):
    assert set(metrics_json) == {"metrics", "agreement", "pairs", "signature"}
    for row in metrics_json["pairs"]:
        assert 0.5 <= row["p_better"] <= 1 and row["difference_low"] <= row["difference"] <= row["difference_high"]
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
    assert "tasks:pooled" in fields  # the demo has three tasks: pooling them is labelled


def test_metrics_default_is_per_task_when_the_outputs_have_tasks(tmp_path, metrics_json):
    result = run_cli("metrics", str(OUTPUTS), "--ratings", str(AUTHOR), "--format", "json",
                     env={"EMPATHY_CACHE_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert {row["task"] for row in payload["metrics"]} == {"news", "translation", "counseling"}
    assert "tasks:pooled" not in payload["signature"].split("|")
    raw = pd.read_csv(AUTHOR).merge(pd.read_csv(OUTPUTS)[["item_id", "model", "task"]], on=["item_id", "model"])
    ca = raw[raw["dimension"] == "ca"].groupby(["task", "model"])["value"].mean()
    got = {(r["task"], r["model"]): r["value"] for r in payload["metrics"]
           if r["metric"] == "CA" and r["scorer"] == "author"}
    assert got == pytest.approx(ca.to_dict())
    # one task only: nothing to split, nothing pooled, no task column
    single, single_ratings = tmp_path / "one_task.csv", tmp_path / "one_task_ratings.csv"
    news = pd.read_csv(OUTPUTS).query("task == 'news'")
    news.to_csv(single, index=False)
    raw[raw["task"] == "news"].drop(columns="task").to_csv(single_ratings, index=False)
    one = run_cli("metrics", str(single), "--ratings", str(single_ratings), "--format", "json", "--no-ld",
                  env={"EMPATHY_CACHE_DIR": str(tmp_path)})
    assert one.returncode == 0, one.stderr
    payload = json.loads(one.stdout)
    assert "task" not in payload["metrics"][0] and "tasks:pooled" not in payload["signature"]
    both = run_cli("metrics", str(OUTPUTS), "--by-task", "--pooled")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_metrics_table_and_csv_formats(tmp_path):
    env = {"EMPATHY_CACHE_DIR": str(tmp_path)}
    table = run_cli("metrics", str(OUTPUTS), "--ratings", str(AUTHOR), "--format", "table", "--pooled", env=env)
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
    from empathy.io import load_dataset
    from empathy.labels.records import dataset_name
    from empathy.labels.rules import make_changes
    from empathy.labels.sqlite import OverrideStore

    dataset = load_dataset(OUTPUTS, [AUTHOR])
    store_path = tmp_path / "overrides.sqlite"
    store = OverrideStore(store_path)
    name = dataset_name(OUTPUTS, store_path=store_path)
    raw = pd.read_csv(AUTHOR)
    fennel = raw.query("model == 'fennel' and dimension == 'ca'")
    # flip every CA label of fennel that is 1 to 0: its CA must drop to 0 with the same n
    flipped = fennel.query("value == 1")
    for row in flipped.itertuples():
        store.set_overrides(name, make_changes(dataset.outputs, dataset.ratings, row.item_id, "fennel", ["author"],
                                               "ca", 0.0), annotator="test")
    # one decision made on a text that has since changed: stale, listed, never applied
    stale_item = fennel.query("value == 0").iloc[0]["item_id"]
    store.set_overrides(name, make_changes(dataset.outputs.assign(generation="an older text"), dataset.ratings,
                                           stale_item, "fennel", ["author"], "ca", 1.0), annotator="test")
    n_changed = len(flipped)
    result = run_cli("metrics", str(OUTPUTS), "--ratings", str(AUTHOR), "--overrides", str(store_path),
                     "--format", "json", "--pooled", env={"EMPATHY_CACHE_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    ca = next(r for r in payload["metrics"] if (r["model"], r["scorer"], r["metric"]) == ("fennel", "author", "CA"))
    assert ca["value"] == 0.0 and ca["n"] == fennel["value"].notna().sum()
    fields = payload["signature"].split("|")
    # one decision per flipped label, each on one judge: decisions and judge labels are equal here (issue 26 item
    # 6 named them; "overrides:N" and "overrides: N applied" before)
    assert f"decisions:{n_changed}" in fields and f"overridden_ratings:{n_changed}" in fields
    assert "labels:latest" in fields
    assert any(field.startswith("ledger:") and len(field) == len("ledger:") + 12 for field in fields)
    assert (f"overrides: {n_changed} decisions applied to {n_changed} judge labels (labels: latest), 1 stale"
            in result.stderr)


def test_building_the_parser_imports_no_heavy_library():
    """``--help``, ``--version`` and usage errors must not pay for spaCy, SciPy, openai or pandas."""
    code = ("import sys; from empathy.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('spacy', 'scipy', 'openai', 'pandas', 'numpy', 'sklearn') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("command", ["stability", "fragility"])
def test_metric_commands_help_imports_neither_numpy_nor_pandas(command):
    """``--metric`` is checked against the registry when the command runs (issue 22), not with ``choices=`` read
    from the registry, so that ``--help`` stays instant: it must not import NumPy (the registry's module does)."""
    code = (f"import sys\nfrom empathy.cli import main\ntry:\n    main([{command!r}, '--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'pandas', 'empathy.metrics') if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith(f"usage: empathy {command}") and "--metric METRIC" in done.stdout
    assert done.stderr.strip() == "[]", done.stderr


def test_version_and_help():
    from empathy import __version__

    version = run_cli("--version")
    assert (version.returncode, version.stdout.strip()) == (0, f"empathy {__version__}")
    for command in ("metrics", "agreement", "panels", "stability", "distancing", "judge", "standard", "import"):
        done = run_cli(command, "--help")
        assert done.returncode == 0 and done.stdout.startswith("usage: empathy " + command), command


def test_cli_constants_equal_the_libraries():
    """The parser spells out a few library constants to stay light; they must not drift."""
    from empathy import stability
    from empathy.cli import judges as judges_cli
    from empathy.cli import stability as stability_cli
    from empathy.judges.prompts import PROTOCOLS

    assert judges_cli.PROTOCOL_NAMES == tuple(PROTOCOLS)
    assert stability_cli.STATISTICS == stability.STATISTICS
    assert stability_cli.DEFAULT_RESAMPLES == stability.DEFAULT_RESAMPLES


def test_no_module_imports_a_command_module_upwards():
    """The library never imports the CLI package (only the two ``python -m`` entry points do), and the CLI
    modules import only ``common`` among themselves (``tests/test_layers.py`` checks every layer)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "empathy"
    allowed = {root / "__main__.py", root / "distancing" / "__main__.py"}
    for path in root.rglob("*.py"):
        names = [node.module for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ImportFrom)
                 and node.module] + [alias.name for node in ast.walk(ast.parse(path.read_text()))
                                     if isinstance(node, ast.Import) for alias in node.names]
        cli_imports = {n for n in names if n == "empathy.cli" or n.startswith("empathy.cli.")}
        if path.parent == root / "cli":
            assert cli_imports <= {"empathy.cli.common"} or path.name == "__init__.py", (path, cli_imports)
        elif path not in allowed:
            assert not cli_imports, (path, cli_imports)
        # the command table's module names are full strings, which the layer test reads as edges; no other CLI
        # module imports by name
        assert "importlib" not in names or path.parent != root / "cli" or path.name == "__init__.py", path


FORMULA_OUTPUTS = pd.DataFrame({
    "item_id": ["=HYPERLINK(\"http://x\")", "2"], "model": ["+cmd|' /C calc'!A0", "@SUM(A1)"],
    "reference": ["The river rose.", "Three people died."], "generation": ["Water changed.", "A fire occurred."],
    "author:ca": [1, 0],
})


def test_metrics_csv_neutralises_formulas_and_json_stays_exact(tmp_path):
    from empathy.escaping import unspreadsheet_cell

    path = tmp_path / "out.csv"
    FORMULA_OUTPUTS.to_csv(path, index=False)
    csv_run = run_cli("metrics", str(path), "--no-ld", "--format", "csv")
    assert csv_run.returncode == 0, csv_run.stderr
    frame = pd.read_csv(pd.io.common.StringIO(csv_run.stdout), dtype=str)
    assert set(frame["model"]) == {"'+cmd|' /C calc'!A0", "'@SUM(A1)"}
    assert {unspreadsheet_cell(m) for m in frame["model"]} == set(FORMULA_OUTPUTS["model"])
    assert not frame["value"].str.startswith("'").any()  # numbers (negative ones too) stay numbers
    json_run = run_cli("metrics", str(path), "--no-ld", "--format", "json")
    assert {row["model"] for row in json.loads(json_run.stdout)["metrics"]} == set(FORMULA_OUTPUTS["model"])


def test_table_format_escapes_terminal_controls(tmp_path):
    path = tmp_path / "out.csv"
    outputs = FORMULA_OUTPUTS.assign(model=["\x1b[2Jevil", "ok\rX"])
    outputs.to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC)  # pandas leaves a lone \r unquoted
    done = run_cli("metrics", str(path), "--no-ld", "--format", "table")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\r" not in done.stdout
    assert "\\x1b[2Jevil" in done.stdout and "ok\\x0dX" in done.stdout


def test_no_ld_without_egm_ratings_never_loads_spacy(tmp_path):
    """Issue 27: ``metrics --no-ld`` on CA ratings reads no text, so spaCy is never imported (a 5 MB cell used to
    cost minutes of parsing) and the signature names no parse (which texts EGM parses: tests/test_evaluate.py)."""
    path = tmp_path / "out.csv"
    pd.DataFrame({"item_id": ["1", "2"], "model": "a", "reference": ["The river rose.", "word " * 200_000],
                  "generation": ["Water changed.", "A fire."], "j:ca": [1, 0]}).to_csv(path, index=False)
    script = ("import contextlib, io, json, sys\nfrom empathy.cli import main\nout = io.StringIO()\n"
              f"with contextlib.redirect_stdout(out):\n    code = main(['metrics', {str(path)!r}, '--no-ld', "
              "'--format', 'json'])\nprint(json.dumps({'code': code, 'report': json.loads(out.getvalue()), "
              "'spacy': sorted(m for m in sys.modules if m.split('.')[0] == 'spacy')}))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "EMPATHY_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["code"] == 0 and result["spacy"] == []
    assert [(row["metric"], row["value"]) for row in result["report"]["metrics"]] == [("CA", 0.5)]
    assert "spacy" not in result["report"]["signature"]


def test_signature_line_and_people_csv_carry_no_control_or_bidi_character(tmp_path):
    """Issue 27: a rater named with an ANSI escape and a judge signature holding BEL and U+202E reach the
    signature line of ``--format table`` escaped like the table, and ``--format csv`` as escaped cells that read
    back exactly."""
    from empathy.escaping import unspreadsheet_cell

    outputs, ratings = tmp_path / "out.csv", tmp_path / "r.csv"
    FORMULA_OUTPUTS[["item_id", "model", "reference", "generation"]].to_csv(outputs, index=False)
    rater, signature = "j\x1b[2J", "v1\x07\u202eexe.txt"
    pd.DataFrame({"item_id": FORMULA_OUTPUTS["item_id"], "model": FORMULA_OUTPUTS["model"], "rater": rater,
                  "dimension": "ca", "value": [1, 0], "signature": signature}).to_csv(ratings, index=False)
    table = run_cli("metrics", str(outputs), "--ratings", str(ratings), "--no-ld", "--format", "table")
    assert table.returncode == 0, table.stderr
    line = next(line for line in table.stdout.splitlines() if line.startswith("signature: "))
    assert "judge[j\\x1b[2J]:v1\\x07\\u202eexe.txt" in line
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in table.stdout
    people = run_cli("metrics", str(outputs), "--ratings", str(ratings), "--no-ld", "--format", "csv")
    assert people.returncode == 0, people.stderr
    assert not any(raw in people.stdout for raw in ("\x1b", "\x07", "\u202e"))
    frame = pd.read_csv(pd.io.common.StringIO(people.stdout), dtype=str)
    assert {unspreadsheet_cell(s) for s in frame["scorer"]} == {rater}
    assert all(signature in unspreadsheet_cell(s) for s in frame["signature"])


def test_the_command_table_names_what_each_module_registers():
    """COMMAND_MODULES (the light name -> module table the command line starts from) lists every command each module
    of GROUP_MODULES registers, and nothing else."""
    import argparse
    import importlib

    from empathy.cli import COMMAND_MODULES, GROUP_MODULES

    registered = {}
    for group in GROUP_MODULES:
        commands = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(group).register(commands)
        registered.update({name: group for name in commands.choices})
    assert registered == COMMAND_MODULES


def test_a_command_imports_only_its_own_module(tmp_path):
    """A run builds the parser of its own command only (the others' modules are never imported)."""
    import subprocess
    import sys

    texts = tmp_path / "t.txt"
    texts.write_text("I am sad.\n", encoding="utf-8")
    code = ("import sys, runpy; sys.argv = ['empathy', 'distancing', sys.argv[1], '--no-cache'];"
            "\ntry:\n    runpy.run_module('empathy', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('empathy.cli.')), file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code, str(texts)], capture_output=True, text=True, timeout=300)
    loaded = result.stderr.strip().splitlines()[-1]
    assert "empathy.cli.distancing" in loaded and "empathy.cli.metrics" not in loaded, loaded
    assert "empathy.cli.agreement" not in loaded and "empathy.cli.store" not in loaded, loaded
