"""Human decisions counted as a person made them, and the labels behind an agreement row (issue 26 items 5-6)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from test_cli import run_cli

from empathy.cli import main
from empathy.labels.decisions import decision_count, pair_decisions
from empathy.labels.ledger import open_ledger
from empathy.labels.records import dataset_name
from empathy.labels.rules import ALL_JUDGES, make_changes, override_targets
from empathy.labels.sqlite import OverrideStore
from empathy.review import PROVENANCE_COLUMNS, agreement_labels
from empathy.signature import Signature


def _row(item, model, rater, dimension, value, annotator="ann", at="t1", role="annotator"):
    return {"item_id": item, "model": model, "rater": rater, "dimension": dimension, "value": value,
            "annotator": annotator, "role": role, "updated_at": at}


# One "(all judges)" decision on i1 (two rows), one by name on i2 for j1 only, and on i3 two annotators who
# chose the same value for j1 and j2 separately (two decisions, but both judges carry the same human label).
APPLIED = pd.DataFrame([
    _row("i1", "A", "j1", "ca", 1.0), _row("i1", "A", "j2", "ca", 1.0),
    _row("i2", "A", "j1", "ca", 0.0, at="t2"),
    _row("i3", "B", "j1", "ca", 0.0, annotator="ann", at="t3"), _row("i3", "B", "j2", "ca", 0.0, annotator="bob",
                                                                        at="t4"),
    _row("i4", "B", "j1", "e_gen", 0.3, at="t5"), _row("i4", "B", "j2", "e_gen", 0.3, at="t5"),
])


@pytest.mark.parametrize(("rows", "expected"), [
    (APPLIED, 5),  # i1 (both judges) 1, i2 1, i3 2 (two annotators), i4 1
    (APPLIED[APPLIED["item_id"] == "i1"], 1),
    (APPLIED.drop(columns=["annotator", "role", "updated_at"]), 4),  # without who and when: i3's are one
    (APPLIED.iloc[:0], 0),
    (None, 0),
])
def test_decision_count_hand_worked(rows, expected):
    assert decision_count(rows) == expected


def test_pair_decisions_hand_worked():
    ca = pair_decisions(APPLIED, "j1", "j2", ["ca"])
    assert (ca.decisions, ca.shared) == (4, 2)  # i1 and i3 carry the same human label on both judges
    assert "on 2 outputs a human decision gave j1 and j2 the same label" in ca.warning
    assert pair_decisions(APPLIED, "j1", "j2", ["e_ref", "e_gen"]).shared == 1
    only_a = pair_decisions(APPLIED, "j1", "j2", ["ca"], outputs=pd.DataFrame({"item_id": ["i2"], "model": ["A"]}))
    assert (only_a.decisions, only_a.shared, only_a.warning) == (1, 0, None)
    assert pair_decisions(APPLIED, "j1", "j3", ["ca"]).shared == 0  # j3 has no human label
    assert pair_decisions(None, "j1", "j2", ["ca"]).decisions == 0
    differ = APPLIED.assign(value=[1.0, 0.0, 0.0, 0.0, 0.0, 0.3, 0.3])  # i1's judges now differ
    assert pair_decisions(differ, "j1", "j2", ["ca"]).shared == 1


def _pair_decisions_by_frames(applied, rater_a, rater_b, dimensions, outputs=None):
    """The straightforward computation (the earlier code): masks, a MultiIndex and a groupby."""
    rows = applied[applied["rater"].astype(str).isin([rater_a, rater_b]) & applied["dimension"].isin(dimensions)]
    if outputs is not None:
        keep = pd.MultiIndex.from_arrays([outputs["item_id"].astype(str), outputs["model"].astype(str)])
        rows = rows[pd.MultiIndex.from_arrays([rows["item_id"].astype(str), rows["model"].astype(str)]).isin(keep)]
    if rows.empty:
        return 0, 0
    columns = [c for c in ("item_id", "model", "dimension", "annotator", "role", "value", "updated_at")
               if c in rows.columns]
    count = len(rows[columns].astype(str).drop_duplicates())
    keyed = rows.assign(**{c: rows[c].astype(str) for c in ("item_id", "model", "dimension", "rater")})
    both = keyed.groupby(["item_id", "model", "dimension"], sort=False).agg(raters=("rater", "nunique"),
                                                                          values=("value", "nunique"))
    shared = int(((both["raters"] == 2) & (both["values"] == 1)).sum()) if rater_a != rater_b else 0
    return count, shared


@pytest.mark.parametrize("seed", range(6))
def test_pair_decisions_equal_the_frame_computation_on_random_ledgers(seed):
    # few items, judges, values and times, so that decisions collide, pairs share labels and values are missing
    rng = np.random.default_rng(seed)
    size = 300
    applied = pd.DataFrame({
        "item_id": rng.choice(["i1", "i2", "i3", "i4", "i5"], size), "model": rng.choice(["A", "B"], size),
        "rater": rng.choice(["j1", "j2", "j3"], size), "dimension": rng.choice(["ca", "e_gen", "e_ref"], size),
        "value": rng.choice([0.0, 1.0, 0.5, np.nan], size), "annotator": rng.choice(["ann", "bob"], size),
        "role": "annotator", "updated_at": rng.choice(["t1", "t2", "t3"], size)})
    if seed % 2:
        applied = applied.astype({c: "string[pyarrow]" for c in ("item_id", "model", "rater", "dimension")})
    outputs = pd.DataFrame({"item_id": ["i1", "i3", "i9"], "model": ["A", "B", "A"]})
    for a, b in (("j1", "j2"), ("j2", "j3"), ("j1", "j1")):
        for dimensions in (["ca"], ["e_ref", "e_gen"], ["ca", "e_gen"]):
            for scope in (None, outputs):
                found = pair_decisions(applied, a, b, dimensions, scope)
                assert (found.decisions, found.shared) == _pair_decisions_by_frames(applied, a, b, dimensions, scope)
    assert decision_count(applied) == len(applied[list(applied.columns.drop("rater"))].astype(str).drop_duplicates())


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: decision_count(pd.DataFrame({"item_id": ["i"]})), ValueError, "model, dimension"),
    (lambda: decision_count([1]), TypeError, "DataFrame"),
    (lambda: pair_decisions(APPLIED.drop(columns="rater"), "a", "b", ["ca"]), ValueError, "rater"),
    (lambda: pair_decisions(APPLIED, "j1", "j2", ["ca"], outputs=pd.DataFrame({"x": [1]})), ValueError, "item_id"),
])
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_signature_names_decisions_and_judge_labels():
    assert str(Signature(version="v", overrides=6, decisions=3)) == "empathy:v|decisions:3|overridden_ratings:6"
    assert str(Signature(version="v", overrides=2)) == "empathy:v|overridden_ratings:2"
    assert "overrides" not in str(Signature(version="v"))


# ------------------------------------------------------------------------------------------ a real store
def _dataset(tmp_path):
    """Two LLM judges rating CA of 3 items x 4 models, disagreeing on a few; written as files for the CLI."""
    models = ["A", "B", "C", "D"]
    outputs = pd.DataFrame([{"item_id": f"i{i}", "model": m, "task": "counseling", "reference": f"narrative {i}",
                             "generation": f"reply {i} by {m}"} for i in range(3) for m in models])
    j1 = {("i0", "A"): 1, ("i1", "A"): 1, ("i0", "B"): 1}
    j2 = {("i0", "A"): 1, ("i2", "A"): 1, ("i0", "C"): 1}
    rows = [{"item_id": r.item_id, "model": r.model, "rater": name, "dimension": "ca",
             "value": float(labels.get((r.item_id, r.model), 0)), "rater_kind": "llm", "reason": "",
             "signature": f"{name}-sig"}
            for r in outputs.itertuples() for name, labels in (("j1", j1), ("j2", j2))]
    ratings = pd.DataFrame(rows)
    outputs_path, ratings_path = tmp_path / "outputs.csv", tmp_path / "ratings.csv"
    outputs.to_csv(outputs_path, index=False)
    ratings.to_csv(ratings_path, index=False)
    return outputs, ratings, outputs_path, ratings_path


def _decide(store, name, outputs, ratings, item, model, value, choice=ALL_JUDGES):
    raters = override_targets(ratings, item, model, "ca", choice)
    store.set_overrides(name, make_changes(outputs, ratings, item, model, raters, "ca", value), annotator="ann")


def test_all_judges_decisions_are_counted_once_and_their_agreement_flagged(tmp_path):
    outputs, ratings, outputs_path, ratings_path = _dataset(tmp_path)
    store_path = tmp_path / "overrides.sqlite"
    store = OverrideStore(store_path)
    name = dataset_name(outputs_path, store_path=store_path)
    _decide(store, name, outputs, ratings, "i1", "B", 1.0)  # both judges said 0: now both 1
    _decide(store, name, outputs, ratings, "i2", "D", 1.0)  # idem
    _decide(store, name, outputs, ratings, "i1", "A", 0.0, choice="j1")  # by name: one judge
    ledger = open_ledger(store, name, outputs)
    assert ledger.counts["applied"] == 5 and ledger.applied_decisions == 3
    assert ledger.decision_counts == {"applied": 3, "stale": 0, "orphaned": 0, "unresolved": 0}
    assert ledger.summary().startswith("overrides: 3 decisions applied to 5 judge labels (labels: latest)")
    table = agreement_labels(pd.DataFrame({"metric": ["CA", "LD"], "scorer_a": ["j1", "spacy"],
                                           "scorer_b": ["j2", "spacy"]}), ledger.applied, outputs)
    assert table[list(PROVENANCE_COLUMNS)].values.tolist()[0][:3] == ["with_overrides", 3, 2]
    assert table["human_decisions"].tolist()[1] == 0 and table["warning"].tolist()[1] is None
    judges_only = agreement_labels(table[["metric", "scorer_a", "scorer_b"]], None)
    assert judges_only["labels"].tolist() == ["judges", "judges"] and judges_only["warning"].isna().all()

    env = {"EMPATHY_CACHE_DIR": str(tmp_path / "cache")}
    result = run_cli("metrics", str(outputs_path), "--ratings", str(ratings_path), "--overrides", str(store_path),
                     "--no-ld", "--format", "json", env=env)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    (row,) = [r for r in payload["agreement"] if r["metric"] == "CA"]
    assert (row["labels"], row["human_decisions"], row["same_human_label"]) == ("with_overrides", 3, 2)
    assert "agreement a human created" in row["warning"]
    fields = payload["signature"].split("|")
    assert "decisions:3" in fields and "overridden_ratings:5" in fields
    assert "overrides: 3 decisions applied to 5 judge labels" in result.stderr
    per_task = json.loads(run_cli("metrics", str(outputs_path), "--ratings", str(ratings_path), "--overrides",
                                  str(store_path), "--no-ld", "--by-task", "--format", "json", env=env).stdout)
    (row,) = [r for r in per_task["agreement"] if r["metric"] == "CA"]
    assert (row["task"], row["human_decisions"], row["same_human_label"]) == ("counseling", 3, 2)
    plain = json.loads(run_cli("metrics", str(outputs_path), "--ratings", str(ratings_path), "--no-ld",
                               "--format", "json", env=env).stdout)
    (row,) = [r for r in plain["agreement"] if r["metric"] == "CA"]
    assert (row["labels"], row["human_decisions"], row["same_human_label"], row["warning"]) == ("judges", 0, 0, None)
    assert not any(f.startswith("decisions:") for f in plain["signature"].split("|"))
    table = run_cli("metrics", str(outputs_path), "--ratings", str(ratings_path), "--overrides", str(store_path),
                    "--no-ld", "--format", "table", env=env)
    assert "with_overrides" in table.stdout and "warning: on 2 outputs a human decision gave j1 and j2" in table.stdout


def test_agreement_command_rows_say_they_are_the_raters_own_labels(tmp_path, capsys):
    _, _, _, ratings_path = _dataset(tmp_path)
    assert main(["agreement", str(ratings_path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(row["labels"] == "judges" for row in rows)


def test_recompute_signature_counts_decisions_on_request(tmp_path):
    import numpy as np

    from empathy.evaluate import text_features
    from empathy.review import Recompute

    outputs, ratings, outputs_path, _ = _dataset(tmp_path)
    features = text_features(outputs, lambda texts: (np.ones(len(texts)), np.zeros((len(texts), 3))), signature="x")
    engine = Recompute(outputs, ratings, features, include_ld=False)
    applied = APPLIED[APPLIED["item_id"] == "i1"].assign(item_id="i1", model="A")
    fields = str(engine.report(applied, decisions=True).signature).split("|")
    assert "decisions:1" in fields and "overridden_ratings:2" in fields
    assert not any(f.startswith("decisions:") for f in str(engine.report(applied).signature).split("|"))
