"""The Alternative Annotator Test (empathy.judge_report.alt_test): a hand-worked example, an independent
implementation on random data, the Wilcoxon branch, Benjamini-Yekutieli by hand, the refusals, and the JSON
contract of ``empathy alt-test`` on the Kumar et al. import (skipped when the shared data is absent)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from empathy.judge_report.alt_test import (
    alt_test,
    alt_test_arrays,
    benjamini_yekutieli,
    default_epsilon,
    default_scoring,
)
from empathy.paths import shared_dataset

ROOT = Path(__file__).resolve().parent.parent


def _ratings(humans: dict[str, list[float]], judge: list[float], kind: str = "expert") -> pd.DataFrame:
    """Long ratings of one dimension ``d``: one output per position, NaN cells left out."""
    rows = []
    for rater, values in [*humans.items(), ("J", judge)]:
        for position, value in enumerate(values):
            if not math.isnan(value):
                rows.append({"item_id": f"i{position:03d}", "model": "m", "rater": rater, "dimension": "d",
                             "value": float(value), "rater_kind": "llm" if rater == "J" else kind})
    return pd.DataFrame(rows)


def _patterns(counts: dict[str, int]) -> tuple[dict[str, list[float]], list[float]]:
    """Instances built from three patterns (A, B, C humans; J the judge) on a 0/1 label:
    P1 all four say 1; P2 the humans say 1, the judge 0; P3 A says 1, B, C and the judge 0."""
    shapes = {"P1": (1, 1, 1, 1), "P2": (1, 1, 1, 0), "P3": (1, 0, 0, 0)}
    cells = [shapes[name] for name, n in counts.items() for _ in range(n)]
    humans = {name: [float(c[k]) for c in cells] for k, name in enumerate("ABC")}
    return humans, [float(c[3]) for c in cells]


def test_hand_worked_example_fails_at_epsilon_02():
    """40 instances: 30 x P1, 6 x P2, 4 x P3, accuracy, epsilon 0.2.

    Excluding A: P1 is a tie (d = 0), P2 a human win (d = 1), P3 a judge win (others 0, 0: judge 1, A 0; d = -1):
    mean d = (6 - 4) / 40 = 0.05, sum of squares 10, s^2 = (10 - 40 * 0.05^2) / 39 = 9.9 / 39; rho_f = 34 / 40,
    rho_h = 36 / 40. Excluding B (or C): P3's others are A = 1, C = 0, the judge and B both score 0.5 (a tie):
    mean d = 6 / 40 = 0.15, s^2 = (6 - 40 * 0.15^2) / 39 = 5.1 / 39; rho_f = 34 / 40, rho_h = 1.
    """
    humans, judge = _patterns({"P1": 30, "P2": 6, "P3": 4})
    result = alt_test(_ratings(humans, judge), "d", "J")
    assert result.scoring == "accuracy" and result.epsilon == 0.2 and result.n_instances == 40
    by_name = {a.annotator: a for a in result.annotators}
    t_a = (0.05 - 0.2) / math.sqrt(9.9 / 39 / 40)
    t_b = (0.15 - 0.2) / math.sqrt(5.1 / 39 / 40)
    assert by_name["A"].statistic == pytest.approx(t_a, rel=1e-12)
    assert by_name["A"].p_value == pytest.approx(stats.t.cdf(t_a, 39), rel=1e-10)
    assert by_name["B"].p_value == pytest.approx(stats.t.cdf(t_b, 39), rel=1e-10)
    assert by_name["C"].p_value == by_name["B"].p_value
    assert (by_name["A"].judge_advantage, by_name["A"].human_advantage) == (34 / 40, 36 / 40)
    assert (by_name["B"].judge_advantage, by_name["B"].human_advantage) == (34 / 40, 1.0)
    assert by_name["A"].mean_difference == pytest.approx(0.05)
    # BY at m = 3: thresholds k * 0.05 / (3 * 11/6); p_A = 0.034 > 0.0091, so nothing is rejected
    assert by_name["A"].p_value == pytest.approx(0.0336, abs=5e-4)
    assert not any(a.won for a in result.annotators)
    assert result.winning_rate == 0 and not result.passed
    assert result.advantage_probability == pytest.approx(34 / 40)


def test_hand_worked_example_passes():
    """60 instances: 50 x P1, 2 x P2, 8 x P3. Excluding A: mean d = (2 - 8) / 60 = -0.1, s^2 = (10 - 60 * 0.01) / 59;
    excluding B or C: mean d = 2 / 60, s^2 = (2 - 60 / 900) / 59. All three far below epsilon: all won."""
    humans, judge = _patterns({"P1": 50, "P2": 2, "P3": 8})
    result = alt_test(_ratings(humans, judge), "d", "J")
    by_name = {a.annotator: a for a in result.annotators}
    t_a = (-0.1 - 0.2) / math.sqrt(9.4 / 59 / 60)
    t_b = (2 / 60 - 0.2) / math.sqrt((2 - 60 / 900) / 59 / 60)
    assert by_name["A"].p_value == pytest.approx(stats.t.cdf(t_a, 59), rel=1e-9)
    assert by_name["B"].p_value == pytest.approx(stats.t.cdf(t_b, 59), rel=1e-9)
    assert result.winning_rate == 1 and result.passed
    assert result.advantage_probability == pytest.approx(58 / 60)
    # a margin of 0 asks the judge to be better: excluding B it never is (d >= 0, p > 0.5), and excluding A
    # t = -0.1 / se gives p = 0.029, above BY's smallest threshold 0.05 / (3 * 11/6) = 0.0091: no win at all
    strict = alt_test(_ratings(humans, judge), "d", "J", epsilon=0.0)
    strict_a = strict.annotators[0]
    assert strict_a.p_value == pytest.approx(stats.t.cdf(-0.1 / math.sqrt(9.4 / 59 / 60), 59), rel=1e-9)
    assert 0.0091 < strict_a.p_value < 0.05 and strict.annotators[1].p_value > 0.5
    assert strict.winning_rate == 0 and not strict.passed


def test_benjamini_yekutieli_by_hand():
    """m = 4, c(4) = 25/12: thresholds k * 0.05 / (4 * 25/12) = 0.006 k; 0.001 and 0.01 pass, 0.02 > 0.018 does not.
    Adjusted: m c(m) p / k = (25/3) p / k, made monotone from the end and capped at 1."""
    rejected, adjusted = benjamini_yekutieli([0.02, 0.001, 0.5, 0.01], 0.05)
    assert rejected.tolist() == [False, True, False, True]
    assert adjusted == pytest.approx([25 / 3 * 0.02 / 3, 25 / 3 * 0.001, 1.0, 25 / 3 * 0.01 / 2])
    assert ((adjusted <= 0.05) == rejected).all()


def test_wilcoxon_below_30_instances():
    """20 instances (14 P1, 2 P2, 4 P3) with --min-instances 10: annotator A is tested with the signed-rank test
    of d - 0.2: |x| = 0.2 (14 values, mid-rank 7.5), 0.8 (2, mid-rank 15.5), 1.2 (4, mid-rank 18.5); the two
    positives give W+ = 31. With ties and n > 13 SciPy uses the normal approximation: mean n(n+1)/4 = 105,
    variance 20*21*41/24 - (2730 + 6 + 60)/48 = 659.25."""
    humans, judge = _patterns({"P1": 14, "P2": 2, "P3": 4})
    with pytest.raises(ValueError, match=r"at least 30 instances per annotator .*'A' has 20"):
        alt_test(_ratings(humans, judge), "d", "J")
    result = alt_test(_ratings(humans, judge), "d", "J", min_instances=10)
    a = result.annotators[0]
    assert a.test == "wilcoxon" and a.statistic == 31
    assert a.p_value == pytest.approx(stats.norm.cdf((31 - 105) / math.sqrt(659.25)), rel=1e-9)
    assert "small-n:wilcoxon(<30)" in result.signature and "min-instances:10" in result.signature


def test_refusals_one_human_and_unknown_raters():
    humans, judge = _patterns({"P1": 40})
    one = _ratings({"A": humans["A"]}, judge)
    with pytest.raises(ValueError, match=r"at least two human annotators on 'd'; 1 of kinds .* \(A\)"):
        alt_test(one, "d", "J")
    both = _ratings(humans, judge)
    with pytest.raises(ValueError, match="--judge: rater 'X'"):
        alt_test(both, "d", "X")
    with pytest.raises(ValueError, match="--annotators: the judge 'J'"):
        alt_test(both, "d", "J", annotators=["A", "J"])
    with pytest.raises(ValueError, match="--dimension: no rating of 'e'"):
        alt_test(both, "e", "J")
    # instances with one human only are dropped and counted; if none is left, the test refuses
    sparse = {"A": humans["A"][:20] + [math.nan] * 20, "B": [math.nan] * 20 + humans["B"][20:]}
    with pytest.raises(ValueError, match="no instance has the judge's rating and at least 2"):
        alt_test(_ratings(sparse, judge), "d", "J")


def test_defaults_follow_the_paper():
    assert default_epsilon(["expert", "expert"]) == 0.2
    assert default_epsilon(["human"]) == 0.15
    assert default_epsilon(["expert", "crowd"]) == 0.1
    assert default_epsilon(["lexicon"]) == 0.1  # a kind that says nothing of expertise: the strictest
    assert default_scoring(np.array([0.0, 1.0, np.nan]), "x") == "accuracy"
    assert default_scoring(np.array([1.0, 3.0, 5.0]), "x") == "neg-rmse"
    assert default_scoring(np.array([1.0, 1.0]), "ca") == "accuracy"


# --- an independent implementation, written from the paper's description --------------------------------------
def _independent(humans: dict[str, dict[int, float]], judge: dict[int, float], scoring: str, epsilon: float,
                 q: float = 0.05) -> tuple[float, float, list[float]]:
    """Winning rate, advantage probability and p-values by plain loops (no code shared with the package)."""
    def score(prediction: float, annotations: list[float]) -> float:
        if scoring == "accuracy":
            return sum(prediction == a for a in annotations) / len(annotations)
        return -math.sqrt(sum((prediction - a) ** 2 for a in annotations) / len(annotations))

    if scoring == "rank":
        def percentiles(values: dict[int, float]) -> dict[int, float]:
            keys = sorted(values)
            ranks = stats.rankdata([values[k] for k in keys])
            return {k: (r - 0.5) / len(keys) for k, r in zip(keys, ranks, strict=True)}
        usable = {i for i in judge if sum(i in h for h in humans.values()) >= 2}
        humans = {n: percentiles({i: v for i, v in h.items() if i in usable}) for n, h in humans.items()}
        judge = percentiles({i: v for i, v in judge.items() if i in usable})
        scoring = "neg-rmse"
    p_values, advantages = [], []
    for excluded, mine in humans.items():
        d, wins = [], []
        for instance, value in mine.items():
            others = [h[instance] for name, h in humans.items() if name != excluded and instance in h]
            if instance not in judge or not others:
                continue
            s_judge, s_human = score(judge[instance], others), score(value, others)
            tie = abs(s_judge - s_human) < 1e-9
            w_f = 1 if (s_judge > s_human or tie) else 0
            w_h = 1 if (s_human > s_judge or tie) else 0
            d.append(w_h - w_f)
            wins.append(w_f)
        n = len(d)
        mean = sum(d) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
        p_values.append(float(stats.t.cdf((mean - epsilon) / (sd / math.sqrt(n)), n - 1)))
        advantages.append(sum(wins) / n)
    m = len(p_values)
    c = sum(1 / k for k in range(1, m + 1))
    ordered = sorted(range(m), key=lambda k: p_values[k])
    largest = 0
    for position, k in enumerate(ordered, start=1):
        if p_values[k] <= position * q / (m * c):
            largest = position
    return largest / m, sum(advantages) / m, p_values


@pytest.mark.parametrize("scoring", ["accuracy", "neg-rmse", "rank"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_matches_an_independent_implementation_on_random_data(scoring, seed):
    rng = np.random.default_rng(seed)
    n, names = 90, ["h1", "h2", "h3", "h4"]
    truth = rng.integers(1, 6, size=n)
    humans = {}
    for name in names:
        noisy = np.clip(truth + rng.integers(-1, 2, size=n) * (rng.random(n) < 0.4), 1, 5)
        present = rng.random(n) > 0.15
        humans[name] = {i: float(noisy[i]) for i in range(n) if present[i]}
    judge_values = np.clip(truth + rng.integers(-1, 2, size=n) * (rng.random(n) < rng.uniform(0.1, 0.6)), 1, 5)
    judge = {i: float(judge_values[i]) for i in range(n) if rng.random() > 0.05}
    epsilon = float(rng.choice([0.1, 0.15, 0.2]))
    matrix = np.full((n, len(names)), np.nan)
    for k, name in enumerate(names):
        for i, v in humans[name].items():
            matrix[i, k] = v
    judge_vector = np.array([judge.get(i, np.nan) for i in range(n)])
    tests, tallies = alt_test_arrays(matrix, judge_vector, scoring=scoring, epsilon=epsilon, names=names)
    winning, advantage, p_values = _independent(humans, judge, scoring, epsilon)
    assert [t.p_value for t in tests] == pytest.approx(p_values, rel=1e-9, abs=1e-15)
    assert sum(t.won for t in tests) / len(tests) == winning
    assert float(np.mean([t.judge_advantage for t in tests])) == pytest.approx(advantage, rel=1e-12)
    assert tallies["n_instances"] == sum(1 for i in judge if sum(i in h for h in humans.values()) >= 2)


# --- the command line ---------------------------------------------------------------------------------------
def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "empathy", *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT)


def test_cli_refusals_are_one_line(tmp_path):
    humans, judge = _patterns({"P1": 20, "P3": 5})
    path = tmp_path / "r.csv"
    _ratings(humans, judge).to_csv(path, index=False)
    result = _cli("alt-test", str(path), "--dimension", "d", "--judge", "J")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "'A' has 25" in result.stderr and "--min-instances" in result.stderr
    one = tmp_path / "one.csv"
    _ratings({"A": humans["A"]}, judge).to_csv(one, index=False)
    result = _cli("alt-test", str(one), "--dimension", "d", "--judge", "J", "--min-instances", "10")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "at least two human annotators" in result.stderr
    result = _cli("alt-test", str(path), "--dimension", "d", "--judge", "J", "--epsilon", "nan")
    assert result.returncode == 2 and "--epsilon" in result.stderr and result.stderr.count("\n") == 1


@pytest.fixture(scope="module")
def kumar(tmp_path_factory) -> Path:
    directory = shared_dataset("kumar2025-empathic-communication")
    if directory is None:
        pytest.skip("shared/datasets/kumar2025-empathic-communication is absent")
    out = tmp_path_factory.mktemp("kumar")
    result = _cli("import", "kumar2025", str(directory), "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


def test_cli_json_contract_on_kumar(kumar):
    result = _cli("alt-test", str(kumar / "ratings.csv"), "--dimension", "level_emotional_reactions",
                  "--judge", "gpt", "--judge", "crowd", "--annotator-kind", "expert", "--format", "json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert [p["judge"] for p in payload] == ["gpt", "crowd"]
    for entry in payload:
        for key in ("judge", "dimension", "winning_rate", "advantage_probability", "passed", "epsilon", "scoring",
                    "n_instances", "annotators", "signature"):
            assert key in entry
        assert entry["epsilon"] == 0.2 and entry["scoring"] == "neg-rmse" and entry["n_instances"] == 50
        assert [a["annotator"] for a in entry["annotators"]] == ["expert1", "expert2", "expert3"]
        assert all({"p_value", "won"} <= set(a) for a in entry["annotators"])
        assert entry["winning_rate"] == sum(a["won"] for a in entry["annotators"]) / 3
        assert "epsilon:0.2" in entry["signature"] and f"judge[{entry['judge']}]" in entry["signature"]
    # GPT-4o wins against every expert on EPITOME's emotional reactions
    assert payload[0]["passed"] and payload[0]["winning_rate"] == 1.0
    table = _cli("alt-test", str(kumar / "ratings.csv"), "--dimension", "empathy", "--judge", "gpt")
    assert table.returncode == 0 and "signature: empathy:" in table.stdout
