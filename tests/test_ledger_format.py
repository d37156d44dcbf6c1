"""docs/ledger-format.md is a contract: every ledger key documented, the hash formula and its worked example as
the code computes them, and a ledger written by another tool (plain csv/json and hashlib, none of our functions)
imported by ``store import`` and applied by ``metrics --store``."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from empathy.cli import main
from empathy.evaluate import compute_metrics
from empathy.io import load_dataset
from empathy.labels.records import text_hash
from empathy.labels.schema import LEDGER_COLUMNS
from empathy.paths import DEMO_DIR

DOC = Path(__file__).resolve().parent.parent / "docs" / "ledger-format.md"


def _doc() -> str:
    return DOC.read_text(encoding="utf-8")


def _formula(reference: str, generation: str) -> str:
    """The doc's formula, written out here as another tool would (not our text_hash)."""
    payload = f"{len(reference)}:{reference}{len(generation)}:{generation}"
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def test_every_ledger_key_is_documented_and_no_other() -> None:
    keys = re.findall(r"^\| `([a-z_]+)` \|", _doc(), flags=re.MULTILINE)
    assert keys == list(LEDGER_COLUMNS)


def test_the_documented_formula_and_example_are_the_codes() -> None:
    doc = _doc()
    assert 'sha256( f"{len(r)}:{r}{len(g)}:{g}".encode("utf-8") ).hexdigest()[:16]' in doc
    reference, generation = "I am so sorry.", "That sounds hard. 😔"
    assert f"`r = \"{reference}\"` ({len(reference)} code points)" in doc
    assert f"`g = \"{generation}\"` ({len(generation)} code points, {len(generation.encode())} UTF-8" in doc
    example = re.search(r"text_hash = ([0-9a-f]{16})\n", doc)
    assert example is not None
    assert example.group(1) == _formula(reference, generation) == text_hash(reference, generation)
    for r, g in (("", ""), ("a\r\nb ", " c"), ("ab", "c"), ("a", "bc"), ("é", "😀" * 3)):
        assert _formula(r, g) == text_hash(r, g)
    assert _formula("ab", "c") != _formula("a", "bc")  # the length prefixes


@pytest.fixture()
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("outputs.csv", "ratings_lexicon.csv"):
        shutil.copy(DEMO_DIR / name, tmp_path / name)
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("EMPATHY_STORE", raising=False)
    return tmp_path


def _texts(outputs: Path) -> dict[tuple[str, str], tuple[str, str]]:
    with outputs.open(encoding="utf-8", newline="") as handle:
        return {(r["item_id"], r["model"]): (r["reference"], r["generation"]) for r in csv.DictReader(handle)}


def _lexicon_ca(outputs: Path) -> list[tuple[str, str, float]]:
    with (outputs.parent / "ratings_lexicon.csv").open(encoding="utf-8", newline="") as handle:
        return [(r["item_id"], r["model"], float(r["value"])) for r in csv.DictReader(handle)
                if r["dimension"] == "ca"]


def _metrics(capsys: pytest.CaptureFixture[str], folder: Path, store: Path) -> dict[tuple[str, str], float]:
    assert main(["metrics", str(folder / "outputs.csv"), "--ratings", str(folder / "ratings_lexicon.csv"),
                 "--store", str(store), "--pooled", "--no-ld", "--resamples", "0", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["metrics"]
    return {(r["model"], r["metric"]): r["value"] for r in rows if r["scorer"] == "lexicon"}


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_another_tools_ledger_is_imported_and_applied(demo: Path, capsys: pytest.CaptureFixture[str],
                                                      kind: str) -> None:
    outputs, store = demo / "outputs.csv", demo / "store.sqlite"
    texts = _texts(outputs)
    flipped = [(item, model, 1.0 - value) for item, model, value in _lexicon_ca(outputs)[:6]]
    records = [{"item_id": item, "model": model, "rater": "lexicon", "dimension": "ca", "value": int(value),
                "annotator": "ana", "reason": "scripted audit", "text_hash": _formula(*texts[(item, model)])}
               for item, model, value in flipped]
    ledger = demo / f"decisions.{kind}"
    with ledger.open("w", encoding="utf-8", newline="") as handle:
        if kind == "csv":
            writer = csv.DictWriter(handle, list(records[0]))
            writer.writeheader()
            writer.writerows(records)
        else:
            handle.writelines(json.dumps(record) + "\n" for record in records)
    before = _metrics(capsys, demo, store)
    assert main(["store", "import", str(ledger), "--store", str(store), "--outputs", str(outputs)]) == 0
    said = capsys.readouterr().out
    assert said.startswith("imported 6 decisions") and "all 6 made on the outputs' current text" in said
    after = _metrics(capsys, demo, store)
    # the oracle: the lexicon's ratings with the six values replaced by hand, scored by the library
    data = load_dataset(outputs, [demo / "ratings_lexicon.csv"])
    ratings = data.ratings.copy()
    for item, model, value in flipped:
        at = ((ratings["item_id"] == item) & (ratings["model"] == model) & (ratings["rater"] == "lexicon")
              & (ratings["dimension"] == "ca"))
        assert at.sum() == 1
        ratings.loc[at, "value"] = value
    expected = compute_metrics(data.outputs.assign(task="all"), ratings, include_ld=False).table
    expected = expected[expected["scorer"] == "lexicon"].set_index(["model", "metric"])["value"]
    changed = {model for _, model, _ in flipped}
    for model in changed:
        assert after[(model, "CA")] == pytest.approx(expected[(model, "CA")])
    assert any(after[(m, "CA")] != before[(m, "CA")] for m in changed)
    assert {k: v for k, v in after.items() if k[1] != "CA"} == pytest.approx(
        {k: v for k, v in before.items() if k[1] != "CA"})


def test_a_wrong_or_missing_hash_is_refused_naming_the_row(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outputs, store = demo / "outputs.csv", demo / "store.sqlite"
    texts = _texts(outputs)
    (item, model, value), other = _lexicon_ca(outputs)[0], _lexicon_ca(outputs)[1]
    rows = [{"item_id": item, "model": model, "rater": "lexicon", "dimension": "ca", "value": int(1 - value),
             "annotator": "ana", "text_hash": _formula(*texts[(item, model)])},
            {"item_id": other[0], "model": other[1], "rater": "lexicon", "dimension": "ca", "value": 1,
             "annotator": "ana", "text_hash": _formula(*texts[(item, model)])}]  # the first output's text
    ledger = demo / "decisions.csv"
    with ledger.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert main(["store", "import", str(ledger), "--store", str(store), "--outputs", str(outputs)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "decisions.csv" in err[0] and "row 3" in err[0] and "text_hash" in err[0]
    assert "made on other text" in err[0] and "nothing was imported" in err[0]
    pd.DataFrame(rows).drop(columns="text_hash").to_csv(ledger, index=False)
    assert main(["store", "import", str(ledger), "--store", str(store), "--outputs", str(outputs)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "row 2" in err[0] and "no text hash" in err[0]
