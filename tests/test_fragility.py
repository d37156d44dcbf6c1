"""Ranking fragility on a data set small enough to work by hand (values in the comments)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from empathy.evaluate import plan_metrics, text_features
from empathy.fragility import flips_to_reverse, fragility, influence_order, order_queue, sa_ratio_of_means

ITEMS = ["i1", "i2", "i3", "i4"]
MODELS = ["a", "b", "c"]
OUTPUTS = pd.DataFrame({
    "item_id": ITEMS * 3, "model": [m for m in MODELS for _ in ITEMS], "task": "t",
    "reference": [f"ref {i}" for i in ITEMS] * 3,
    "generation": [f"{m} {i}" for m in MODELS for i in ITEMS]})
E_REF = {"i1": 0.5, "i2": 0.8, "i3": 0.2, "i4": 1.0}
# SA terms (E(t) - E(g)) / E(t):  a: 0, .5, -2, .5 -> -0.25;  b: .5, 0, 0, (missing) -> 1/6
E_GEN = {"a": [0.5, 0.4, 0.6, 0.5], "b": [0.25, 0.8, 0.2, math.nan]}
# CA: a 1/4, b 2/4, c 3/4
CA = {"a": [0, 0, 1, 0], "b": [1, 0, 1, 0], "c": [1, 1, 1, 0]}


def _rows():
    def row(item, model, dimension, value):
        return {"item_id": item, "model": model, "rater": "j", "dimension": dimension, "value": value,
                "rater_kind": "llm", "reason": "", "signature": "j-sig"}

    rows = []
    for model, scores in E_GEN.items():
        for item, e_gen in zip(ITEMS, scores, strict=True):
            rows += [row(item, model, "e_ref", E_REF[item]), row(item, model, "e_gen", e_gen)]
    for model, labels in CA.items():
        rows += [row(item, model, "ca", label) for item, label in zip(ITEMS, labels, strict=True)]
    return pd.DataFrame(rows)


RATINGS = _rows()


def analyser(texts):
    return np.ones(len(texts)), np.zeros((len(texts), 3))


@pytest.fixture(scope="module")
def plan():
    return plan_metrics(OUTPUTS, RATINGS, features=text_features(OUTPUTS, analyser, signature="x"),
                        include_ld=False)


@pytest.mark.parametrize(("k_a", "n_a", "k_b", "n_b", "expected"), [
    (1, 4, 2, 4, (2, 0, 2)),   # .25 vs .5: two 1s of b -> 0 (b = 0 < .25); one flip only ties
    (2, 4, 3, 4, (2, 0, 2)),   # .5 vs .75
    (1, 5, 1, 2, (1, 0, 1)),   # .2 vs .5: b has 2 labels, one flip takes it to 0
    (0, 1, 1, 1, (2, 1, 1)),   # 0 vs 1: flipping one side only ties
    (1, 1, 1, 1, (1, 0, 1)),   # a tie is broken by one flip
    (0, 2, 0, 2, (1, 1, 0)),   # both 0: b has no 1 to flip, so one 0 of a
    (0, 3, 2, 3, (3, 1, 2)),   # 0 vs 2/3: two flips on b only tie at 0, so one on a as well
])
def test_flips_to_reverse(k_a, n_a, k_b, n_b, expected):
    assert flips_to_reverse(k_a, n_a, k_b, n_b) == expected
    total, x, y = expected
    assert (k_a + x) / n_a > (k_b - y) / n_b


@pytest.mark.parametrize("args", [(3, 2, 1, 2), (1, 2, -1, 2), (0, 0, 0, 1)])
def test_flips_to_reverse_rejects_bad_counts(args):
    with pytest.raises(ValueError, match="k <= n"):
        flips_to_reverse(*args)


def test_item_terms_match_the_table(plan):
    terms = plan.item_terms()
    table = plan.evaluate().table
    usable = terms[terms["status"] == 0].groupby(["metric", "scorer", "model"])["term"].mean()
    for row in table.itertuples():
        assert usable[(row.metric, row.scorer, row.model)] == pytest.approx(row.value)
    sa_a = terms[(terms["metric"] == "SA") & (terms["model"] == "a")].set_index("item_id")
    assert sa_a.loc[["i1", "i2", "i3", "i4"], "term"].tolist() == pytest.approx([0.0, 0.5, -2.0, 0.5])
    assert sa_a.loc["i3", "e_gen"] == pytest.approx(0.6)
    b4 = terms[(terms["metric"] == "SA") & (terms["model"] == "b") & (terms["item_id"] == "i4")].iloc[0]
    assert b4["status"] == 1 and math.isnan(b4["term"])


def test_ca_pairs_flips(plan):
    pairs = fragility(plan).pairs
    ca = pairs[pairs["metric"] == "CA"].reset_index(drop=True)
    assert ca[["better", "worse", "flips_needed", "flips_better", "flips_worse"]].values.tolist() == [
        ["a", "b", 2, 0, 2], ["b", "c", 2, 0, 2]]
    assert ca["gap"].tolist() == pytest.approx([0.25, 0.25])
    assert set(ca["kind"]) == {"flips"}


def test_sa_pair_shift(plan):
    pairs = fragility(plan).pairs
    sa = pairs[pairs["metric"] == "SA"].iloc[0]
    # a = -0.25 (n 4), b = 1/6 (n 3): gap 5/12. Raising an a-term needs > 4 * 5/12 = 5/3 (only i3, term -2, has
    # room up to 1); lowering a b-term needs > 3 * 5/12 = 1.25: i1 (room .5 - (1 - 1/.5) = 1.5) and i3 (room 4).
    assert (sa["better"], sa["worse"]) == ("a", "b")
    assert sa["gap"] == pytest.approx(5 / 12)
    assert sa["shift_needed"] == pytest.approx(1.25)
    assert (sa["shift_model"], sa["shift_item"]) == ("b", "i3")
    # as a judge score: b's i3 E(g) + 1.25 * 0.2 = 0.45 ties (term -1.25, mean -0.25); a's side needs 5/3 * .2
    assert sa["score_shift"] == pytest.approx(0.25)
    assert sa["score_item"] == "i3"
    assert sa["kind"] == "shift" and pd.isna(sa["flips_needed"])


def test_leave_one_out_influence(plan):
    influence = fragility(plan, top=4).influence
    sa_a = influence[(influence["metric"] == "SA") & (influence["model"] == "a")]
    top = sa_a.iloc[0]
    # i3: (-2 - (-0.25)) / 3 = -7/12; without it a = (0 + .5 + .5) / 3 = 1/3
    assert top["item_id"] == "i3"
    assert top["term"] == pytest.approx(-2.0)
    assert top["influence"] == pytest.approx(-7 / 12)
    assert top["loo_value"] == pytest.approx(1 / 3)
    ca_a = influence[(influence["metric"] == "CA") & (influence["model"] == "a")].set_index("item_id")
    assert ca_a.loc["i3", "influence"] == pytest.approx(0.25)    # (1 - .25) / 3
    assert ca_a.loc["i1", "influence"] == pytest.approx(-1 / 12)  # (0 - .25) / 3
    assert len(fragility(plan, top=1).influence.query("metric == 'CA' and model == 'a'")) == 1


def test_ratio_of_means(plan):
    rom = sa_ratio_of_means(plan.item_terms()).set_index("model")
    # a: 1 - 2.0 / 2.5 = .2; b over its usable items i1-i3: 1 - 1.25 / 1.5 = 1/6 -> the ranking flips
    assert rom.loc["a", "ratio_of_means"] == pytest.approx(0.2)
    assert rom.loc["b", "ratio_of_means"] == pytest.approx(1 / 6)
    assert rom.loc["a", "mean_of_ratios"] == pytest.approx(-0.25)
    assert rom[["rank_mean_of_ratios", "rank_ratio_of_means"]].loc["a"].tolist() == [1, 2]
    assert rom["differs"].tolist() == [True, True]


def test_influence_order_and_queue(plan):
    order = influence_order(plan.item_terms(), "ca")
    # leverage = |influence| / gap to the nearest model: a's i3 .25/.25 = 1, c's i4 (0 - .75)/3 -> 1;
    # every b item 1/6 / .25 = 2/3; the rest 1/3
    assert order[["item_id", "model"]].head(6).values.tolist() == [
        ["i3", "a"], ["i4", "c"], ["i1", "b"], ["i2", "b"], ["i3", "b"], ["i4", "b"]]
    assert order["leverage"].head(3).tolist() == pytest.approx([1.0, 1.0, 2 / 3])
    assert set(order["metric"]) == {"CA"}
    queue = pd.DataFrame({"item_id": ["i1", "i3", "zz"], "model": ["a", "a", "a"], "done": False})
    ordered = order_queue(queue, order)
    assert ordered["item_id"].tolist() == ["i3", "i1", "zz"]
    assert math.isnan(ordered["leverage"].iloc[2])


def test_overrides_patched_values_change_the_answer(plan):
    # one flip of c's i4 to 1 makes c 4/4; b vs c then needs flips so that b > 1: impossible with b's zeros?
    # b 2/4 vs c 4/4: x=0 needs y > (4*4 - 2*4)/4 = 2 -> 3 flips; x=1: y > 1 -> 3; x=2: y > 0 -> 3
    changes = pd.DataFrame([{"item_id": "i4", "model": "c", "rater": "j", "dimension": "ca", "value": 1.0}])
    pairs = fragility(plan, plan.patch(changes)).pairs
    bc = pairs[(pairs["metric"] == "CA") & (pairs["better"] == "b")].iloc[0]
    assert bc["flips_needed"] == 3


def test_bad_arguments(plan):
    with pytest.raises(ValueError, match="LD reads no judge rating"):
        fragility(plan, metrics=["LD"])
    with pytest.raises(ValueError, match="unknown metric"):
        fragility(plan, metrics=["XX"])
    with pytest.raises(ValueError, match="top"):
        fragility(plan, top=0)


def test_json_is_plain(plan):
    import json

    payload = fragility(plan).to_json()
    assert set(payload) == {"pairs", "influence", "ratio_of_means", "order"}
    json.dumps(payload, allow_nan=False)


def test_cli_json(tmp_path, capsys):
    import json

    from empathy.cli import main

    OUTPUTS.to_csv(tmp_path / "out.csv", index=False)
    RATINGS.drop(columns=["reason", "signature"]).to_csv(tmp_path / "r.csv", index=False)
    code = main(["fragility", str(tmp_path / "out.csv"), "--ratings", str(tmp_path / "r.csv"), "--metric", "CA",
                 "--metric", "SA", "--top", "1", "--format", "json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    ca = [p for p in payload["pairs"] if p["metric"] == "CA"]
    assert [(p["better"], p["worse"], p["flips_needed"]) for p in ca] == [("a", "b", 2), ("b", "c", 2)]
    sa = next(p for p in payload["pairs"] if p["metric"] == "SA")
    assert sa["shift_needed"] == pytest.approx(1.25) and sa["flips_needed"] is None
    assert [(r["model"], r["item_id"]) for r in payload["influence"] if r["metric"] == "SA"] == [("a", "i3"),
                                                                                                ("b", "i1")]
    assert "judge[j]" in payload["signature"] and "ld:" not in payload["signature"]
    rom = {r["model"]: r["ratio_of_means"] for r in payload["ratio_of_means"]}
    assert rom == pytest.approx({"a": 0.2, "b": 1 / 6})


def test_cli_table_names_the_pairs(tmp_path, capsys):
    from empathy.cli import main

    OUTPUTS.to_csv(tmp_path / "out.csv", index=False)
    RATINGS.drop(columns=["reason", "signature"]).to_csv(tmp_path / "r.csv", index=False)
    assert main(["fragility", str(tmp_path / "out.csv"), "--ratings", str(tmp_path / "r.csv"), "--metric", "CA"]) == 0
    out = capsys.readouterr().out
    assert "flips_needed" in out and "signature:" in out


def test_by_influence_reorders_the_relabel_queue(plan):
    from empathy.fragility import by_influence
    from empathy.review import relabel_queue

    queue = relabel_queue(RATINGS, "ca", OUTPUTS)
    ordered = by_influence(queue, plan, "ca")
    assert len(ordered) == len(queue) and set(ordered.columns) >= set(queue.columns) | {"leverage"}
    assert ordered[["item_id", "model"]].head(2).values.tolist() == [["i3", "a"], ["i4", "c"]]


@pytest.mark.parametrize(("room_a", "n_a", "room_b", "n_b", "gap", "expected"), [
    ([0.5, 0.5], 2, [0.2], 1, 0.6, 3),     # contributions .25 .25 .2: .7 > .6 needs all three
    ([0.5, 0.5], 2, [0.2], 1, 0.5, 3),     # .25 + .25 = .5 only ties
    ([0.5, 0.5], 2, [0.2], 1, 0.45, 2),
    ([0.5, 0.5], 2, [0.2], 1, 0.7, None),  # everything together only ties
    ([0.0, 3.0], 4, [1.5, 0.25, 4.0], 3, 5 / 12, 1),  # the SA pair of the fixture: b's i3 alone (4/3)
])
def test_items_to_reverse(room_a, n_a, room_b, n_b, gap, expected):
    from empathy.fragility import items_to_reverse

    assert items_to_reverse(np.array(room_a), n_a, np.array(room_b), n_b, gap) == expected


def test_items_needed_column(plan):
    pairs = fragility(plan).pairs.set_index("metric")
    assert pairs.loc["SA", "items_needed"] == 1
    assert pairs.loc["CA", "items_needed"].tolist() == [2, 2]
