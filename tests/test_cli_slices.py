"""``empathy slices`` and ``empathy calibration`` on a data set worked by hand (JSON contract, exit codes)."""

from __future__ import annotations

import json
import math

import pytest

from empathy.cli import main

# Six outputs of model m: task a (items 1-2) and b (3-6). The expert and the LLM judge g disagree on CA on items
# 4 and 5; the generations have 1, 2, ..., 6 words.
OUTPUTS = "item_id,model,task,reference,generation\n" + "".join(
    f"{i},m,{'a' if i <= 2 else 'b'},Reference {i}.,{' '.join(['word'] * i)}\n" for i in range(1, 7))
HUMAN = [0, 1, 0, 0, 1, 1]
JUDGE = [0, 1, 0, 1, 0, 1]
RATINGS = "item_id,model,rater,dimension,value,rater_kind\n" + "".join(
    f"{i + 1},m,expert,ca,{HUMAN[i]},expert\n{i + 1},m,g,ca,{JUDGE[i]},llm\n" for i in range(6))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "out.csv").write_text(OUTPUTS)
    (tmp_path / "r.csv").write_text(RATINGS)
    return tmp_path


def _json(capsys, args: list[str]) -> dict:
    assert main(args) == 0
    captured = capsys.readouterr()

    def strict(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")  # Infinity or NaN would break strict parsers

    return json.loads(captured.out, parse_constant=strict)


def test_slices_json_by_hand(files, capsys) -> None:
    payload = _json(capsys, ["slices", str(files / "out.csv"), "--ratings", str(files / "r.csv"), "--dimension",
                             "ca", "--feature", "task", "--feature", "length_gen", "--cut", "length_gen=4",
                             "--permutations", "20", "--format", "json", "--min-units", "1"])
    rows = {(r["feature"], r["slice"]): r for r in payload["slices"]}
    assert payload["n_units"] == 6 and payload["n_events"] == 2 and payload["threshold"] == 0.5
    # length >= 4 words: items 4, 5, 6 hold both disagreements: rate 2/3, exact p = 8/20 (see test_slices)
    high = rows[("length_gen", ">= 4")]
    assert (high["events"], high["n_units"], high["p_method"]) == (2, 3, "exact")
    assert high["rate"] == pytest.approx(2 / 3) and high["p_value"] == pytest.approx(0.4)
    assert high["outputs"] == [["4", "m"], ["5", "m"], ["6", "m"]]
    # task a: C(6, 2) = 15 choices, 7 as extreme (see test_slices); 15 <= 20 permutations, so exact
    assert rows[("task", "a")]["p_value"] == pytest.approx(7 / 15)
    # Holm over the four slices
    assert sorted(r["p_holm"] for r in payload["slices"]) == pytest.approx(
        sorted([min(1, 4 * 0.4), min(1, 4 * 0.4), 1.0, 1.0]))
    assert "permutations:20" in payload["signature"] and "seed:0" in payload["signature"]
    assert payload["findings"] and "where" in payload["findings"][0]


def test_slices_table_and_csv(files, capsys) -> None:
    base = ["slices", str(files / "out.csv"), "--ratings", str(files / "r.csv"), "--dimension", "ca", "--feature",
            "task", "--min-units", "1"]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "2 of 6 units disagree" in out and "signature:" in out
    assert main([*base, "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("outcome,dimension,judge,feature,slice")
    assert "1 / m; 2 / m" in out


def test_calibration_json_by_hand(files, capsys) -> None:
    payload = _json(capsys, ["calibration", str(files / "out.csv"), "--ratings", str(files / "r.csv"),
                             "--dimension", "ca", "--bootstrap", "50", "--format", "json"])
    cells = {(c["human_label"], c["judge_label"]): c for c in payload["confusion"]}
    # human 0 / judge 0: items 1, 3; 0 / 1: item 4; 1 / 0: item 5; 1 / 1: items 2, 6
    assert {k: c["count"] for k, c in cells.items()} == {(0, 0): 2, (0, 1): 1, (1, 0): 1, (1, 1): 2}
    assert cells[(1, 0)]["outputs"] == [["5", "m"]]
    bias = payload["bias"][0]
    assert bias["bias"] == pytest.approx(0.0) and bias["n"] == 6
    splits = [s for s in payload["splits"] if s["split"]]
    assert sorted(s["item_id"] for s in splits) == ["4", "5"]
    # six items: the intervals are flagged, and with one human there is no dilution benchmark
    assert bias["warning"].endswith("rest on 6 items (fewer than 10): the percentile bootstrap understates the "
                                    "uncertainty here")
    assert bias["human_slope"] is None
    assert "bootstrap:50" in payload["signature"]


def test_calibration_on_the_demo_warns_about_hazels_point_intervals(capsys) -> None:
    """Issue 27: hazel's CA bias [0, 0] and slope [1, 1] rest on 9 items; a line under the table says so."""
    from empathy.paths import DEMO_DIR

    args = ["calibration", str(DEMO_DIR / "ratings_author.csv"), "--ratings", str(DEMO_DIR / "ratings_lexicon.csv"),
            "--dimension", "ca"]
    assert main([*args, "--format", "table"]) == 0
    out = capsys.readouterr().out
    assert ("warning: hazel / lexicon: bias interval [0, 0] has zero width; slope interval [1, 1] has zero width; "
            "bias and slope intervals rest on 9 items (fewer than 10)") in out
    assert "human_slope: one human's slope on the mean of the other humans" in out
    hazel = next(row for row in _json(capsys, [*args, "--format", "json"])["bias"] if row["model"] == "hazel")
    assert (hazel["bias_low"], hazel["bias_high"], hazel["slope_low"], hazel["slope_high"]) == (0, 0, 1, 1)
    assert "zero width" in hazel["warning"] and "9 items" in hazel["warning"]


def test_slices_judge_judge_and_per_judge(files, capsys, tmp_path) -> None:
    more = RATINGS + "".join(f"{i},m,h2,ca,{1 if i in (1, 4) else 0},llm\n" for i in range(1, 7))
    (tmp_path / "r2.csv").write_text(more)
    payload = _json(capsys, ["slices", str(files / "out.csv"), "--ratings", str(tmp_path / "r2.csv"),
                             "--dimension", "ca", "--outcome", "judge_judge", "--feature", "task", "--format",
                             "json"])
    # g vs h2 differ on items 1, 2, 6 (g: 0 1 0 1 0 1; h2: 1 0 0 1 0 0): task a 2/2, task b 1/4
    rows = {r["slice"]: r for r in payload["slices"]}
    assert (rows["a"]["events"], rows["a"]["n_units"]) == (2, 2)
    assert (rows["b"]["events"], rows["b"]["n_units"]) == (1, 4)
    payload = _json(capsys, ["slices", str(files / "out.csv"), "--ratings", str(tmp_path / "r2.csv"),
                             "--dimension", "ca", "--feature", "task", "--per-judge", "--format", "json"])
    assert {r["judge"] for r in payload["slices"]} == {"(all judges)", "g", "h2"}


def test_cli_constants_equal_the_library() -> None:
    from empathy import slices
    from empathy.cli import slices as slices_cli

    assert slices_cli.OUTCOME_CHOICES == slices.OUTCOMES
    # every feature computed from the texts or text-derived densities is recognised as needing the parser
    text_features = [f for f in slices.FEATURES if f not in ("affect_gap", "length_gen", "task")]
    assert all(f.startswith(slices_cli._TEXT_FEATURE_PREFIXES) for f in text_features)


def test_slices_override_rate_and_ledger_humans(files, capsys) -> None:
    from empathy.io import load_dataset
    from empathy.labels.records import dataset_name
    from empathy.labels.rules import make_changes
    from empathy.labels.sqlite import OverrideStore

    dataset = load_dataset(files / "out.csv", [files / "r.csv"])
    store_path = files / "overrides.sqlite"
    store = OverrideStore(store_path)
    name = dataset_name(files / "out.csv", store_path=store_path)
    # The annotator overrides g on items 4 and 5 (to the expert's label) and confirms g's label on item 6.
    for item, value in (("4", 0.0), ("5", 1.0), ("6", 1.0)):
        store.set_overrides(name, make_changes(dataset.outputs, dataset.ratings, item, "m", ["g"], "ca", value),
                            annotator="ann")
    base = ["slices", str(files / "out.csv"), "--ratings", str(files / "r.csv"), "--dimension", "ca", "--feature",
            "task", "--overrides", str(store_path), "--format", "json"]
    payload = _json(capsys, [*base, "--outcome", "override"])
    rows = {r["slice"]: r for r in payload["slices"]}
    # task a (items 1, 2): no override; task b (3-6): 2 of 4 judge labels overridden (item 6 was a confirmation)
    assert (rows["a"]["events"], rows["b"]["events"], rows["b"]["n_units"]) == (0, 2, 4)
    assert "labels:latest" in payload["signature"] and "outcome:override" in payload["signature"]
    # judge_human: the annotator joins the expert as a human; on 4 and 5 the humans (expert, ann) agree with
    # each other and g disagrees with both (|g - 0| = 1 on 4; |0 - 1| = 1 on 5); on 6 all say 1.
    payload = _json(capsys, [*base, "--outcome", "judge_human"])
    assert payload["n_units"] == 6 and payload["n_events"] == 2


def test_slices_are_exact_by_default_and_monte_carlo_on_request(files, capsys) -> None:
    base = ["slices", str(files / "out.csv"), "--ratings", str(files / "r.csv"), "--dimension", "ca", "--feature",
            "task", "--permutations", "5", "--min-units", "1"]
    # task a: 15 arrangements, more than 5 permutations: exact only through its null distribution (Fisher)
    rows = {r["slice"]: r for r in _json(capsys, [*base, "--format", "json"])["slices"]}
    assert (rows["a"]["p_method"], rows["a"]["p_se"]) == ("exact", None)
    assert rows["a"]["p_value"] == pytest.approx(7 / 15)
    carlo = {r["slice"]: r for r in _json(capsys, [*base, "--format", "json", "--monte-carlo"])["slices"]}
    p = carlo["a"]["p_value"]
    assert carlo["a"]["p_method"] == "monte-carlo" and carlo["a"]["p_se"] == pytest.approx(math.sqrt(p * (1 - p) / 5))
    assert main(base) == 0
    assert "p-values: 2 of 2 exact" in capsys.readouterr().out
    assert main([*base, "--monte-carlo"]) == 0
    out = capsys.readouterr().out
    assert "p-values: 0 of 2 exact; 2 by Monte Carlo over 5 permutations (standard error in p_se, at most" in out
