"""The judge report against scripted OpenAI-compatible judges with planted faults (tests/planted_judge_server.py):
each fault is caught by the check built for it, and the unbiased scripted judge passes every check.

Also: the order test holds its nominal level by simulation, the flip-rate interval covers the planted rate, and
the offline lexicon judges run through every probe.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from planted_judge_server import PlantedJudgeServer, affect_score

from empathy.judge_report import probes as probes_module
from empathy.judge_report.length import length_dependence, word_counts
from empathy.judge_report.order import order_effects, order_requests, run_orders, t_interval
from empathy.judge_report.probes import PROBES, probe_requests, probes_frame, run_probes, summary
from empathy.judge_report.repeatability import repeatability, rerun
from empathy.judges.config import JudgeConfig, resolve_judge

OPENERS = ("I am devastated and scared.", "My boss John is furious with me.", "I feel awful about it.",
           "Everything is fine, I think.", "I hate how Mary treats me and I am angry.", "Nothing happened today.")
RESPONSES = ("That sounds terrible. What happened next?",
             "It sounds like you were hurt by what John said. Tell me more about it.",
             "You should talk to him. I am sure it will be fine.",
             "I hear how scared you are. What would help right now?",
             "That is awful. The decision was made by your manager, not you. How do you feel about it?",
             "You should take a break and rest")


NEWS = (("A bomb killed two people downtown on Monday.", "Two people were killed by a bomb downtown."),
        ("The storm left many homes flooded.", "Homes were flooded by the storm, Anna said."),
        ("Police said the driver was dead at the scene.", "The driver died at the scene"))


def _outputs(n: int = 36) -> pd.DataFrame:
    rows = []
    for i in range(n):
        # the day makes every output's requests distinct (independent flips)
        reference = f"{OPENERS[i % len(OPENERS)]} It went on for {i + 2} days."
        generation = RESPONSES[(i * 5) % len(RESPONSES)] + (" I am here for you." * (i % 4))
        rows.append((f"i{i:02d}", "m1", reference.strip(), generation, "counseling"))
    for i, (reference, generation) in enumerate(NEWS):  # the paper rates U on news only
        rows.append((f"n{i}", "m1", reference, generation, "news"))
    return pd.DataFrame(rows, columns=["item_id", "model", "reference", "generation", "task"])


OUTPUTS = _outputs()


@pytest.fixture(scope="module")
def server():
    with PlantedJudgeServer(hang=3.0) as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh(server):
    server.fault, server.flip_rate = "", 0.0
    server.reset()
    yield


def judge(server: PlantedJudgeServer, **changes) -> JudgeConfig:
    settings = {"name": "scripted", "base_url": server.base_url, "model": "planted", "backoff": 0.005,
                "backoff_max": 0.05, "timeout": 5.0, "max_retries": 1, "concurrency": 8, "segmentation": "regex"}
    return JudgeConfig(**{**settings, **changes})


def _by_name(results):
    return {r.probe.name: r for r in results}


# ------------------------------------------------------------------------------------------------ the unbiased judge

def test_the_unbiased_judge_passes_every_check(server):
    results = _by_name(run_probes(OUTPUTS, judge(server)))
    assert set(results) == {p.name for p in PROBES}
    for name, result in results.items():
        if result.n_applicable:
            assert result.passed, (name, result.failures)
    assert results["solution-sentence:ca"].n_moved == results["solution-sentence:ca"].n_movable > 0
    assert results["attenuate-affect:e_gen"].n_moved > 0
    first, second = run_orders(OUTPUTS, judge(server))
    for effect in order_effects(first, second):
        assert effect.effect == 0 and effect.mean_abs == 0 and effect.p_value == 1.0
    runs = rerun(OUTPUTS, judge(server), 3)
    for result in repeatability(runs, dimensions=["ca", "e_gen"], n_resamples=200):
        assert result.flip_rate == 0 and result.alpha == pytest.approx(1.0)


def test_the_cost_is_known_before_any_call(server):
    planned = probe_requests(OUTPUTS, judge(server))
    assert server.calls == 0 and planned > len(OUTPUTS)
    run_probes(OUTPUTS, judge(server))
    assert server.calls == planned  # one call per distinct request, none retried
    server.reset()
    distinct = len(OUTPUTS.drop_duplicates(["reference", "generation"]))  # one request per distinct pair and order
    assert order_requests(OUTPUTS, judge(server)) == 2 * distinct and server.calls == 0
    run_orders(OUTPUTS, judge(server))
    assert server.calls == 2 * distinct
    assert probe_requests(OUTPUTS, resolve_judge("lexicon", None)) == 0


# ------------------------------------------------------------------------------------------------ planted faults

def test_a_judge_that_ignores_the_second_text_shows_an_order_effect(server):
    server.fault = "ignore-second"
    first, second = run_orders(OUTPUTS, judge(server))
    effects = {e.dimension: e for e in order_effects(first, second)}
    for dimension in ("e_ref", "e_gen"):
        effect = effects[dimension]
        assert effect.abs_low > 0 and effect.p_value < 0.05, effect
    # by hand: under reference-first e_gen is the reference's score, under generation-first its own
    gen = np.array([affect_score(t) for t in OUTPUTS["generation"]])
    ref = np.array([affect_score(t) for t in OUTPUTS["reference"]])
    assert effects["e_gen"].effect == pytest.approx(float(np.mean(gen - ref)))
    assert effects["e_ref"].effect == pytest.approx(float(np.mean(gen - ref)))


def test_a_judge_that_rates_longer_texts_higher_is_caught_by_length_and_the_neutral_sentence(server):
    rng = np.random.default_rng(3)
    texts = OUTPUTS.copy()
    # affect words and length drawn independently: the truth does not depend on length (were it to, a judge more
    # accurate than the annotators' mean would show a partial correlation: docs/judge-report.md)
    texts["generation"] = [" ".join(["I hear you", *(["awful"] * int(c)), *(["and"] * int(k))]) + "."
                           for c, k in zip(rng.integers(0, 4, len(texts)), rng.integers(0, 30, len(texts)),
                                           strict=True)]
    truth = np.array([affect_score(t) for t in texts["generation"]])
    humans = pd.DataFrame({"item_id": texts["item_id"], "model": "m1"})
    for server_fault, caught in (("longer", True), ("", False)):
        server.fault = server_fault
        server.reset()
        from empathy.judges.run import run_judge

        ratings = run_judge(texts, judge(server), protocols="affect", cache=None).ratings
        rows = [ratings[ratings.dimension == "e_gen"]]
        for name, noise in (("h1", 0.05), ("h2", 0.05)):
            rows.append(humans.assign(rater=name, dimension="e_gen",
                                      value=truth + rng.normal(0, noise, len(truth)), rater_kind="expert"))
        frame = pd.concat(rows, ignore_index=True)
        matrix = frame.pivot_table(index=["item_id", "model"], columns="rater", values="value")
        length = length_dependence(matrix, "scripted", ["h1", "h2"], word_counts(texts), "e_gen")
        assert (length.partial_low > 0) is caught, (server_fault, length)
    server.fault = "longer"
    server.reset()
    results = _by_name(run_probes(OUTPUTS, judge(server), [p for p in PROBES if p.edit == "neutral-sentence"]))
    assert not results["neutral-sentence:e_gen"].passed
    assert results["neutral-sentence:e_gen"].n_violations == results["neutral-sentence:e_gen"].n_applicable


def test_a_judge_blind_to_an_appended_solution_fails_the_solution_probe(server):
    server.fault = "solution-blind"
    chosen = [p for p in PROBES if p.edit == "solution-sentence"]
    result = run_probes(OUTPUTS, judge(server), chosen)[0]
    assert result.n_movable > 0 and result.n_moved == 0 and result.n_violations == 0
    assert result.passed is False
    assert summary([result]) == (1, 1)


def test_a_judge_that_flips_at_random_has_that_flip_rate(server):
    server.fault, server.flip_rate, server.seed = "flip", 0.25, 7
    server.reset()
    outputs = _outputs(150)
    runs = rerun(outputs, judge(server), 3)
    result = repeatability(runs, dimensions=["ca"], n_resamples=400)[0]
    expected = 2 * 0.25 * 0.75
    assert result.flip_low <= expected <= result.flip_high, result
    assert result.flip_low > 0 and result.alpha < 0.8


# ------------------------------------------------------------------------------------------------ intervals and levels

def test_the_order_test_holds_its_level_on_an_unbiased_noisy_judge():
    rng = np.random.default_rng(11)
    rejected, covered = 0, 0
    trials = 600
    for _ in range(trials):
        truth = rng.uniform(0, 1, 40)
        a = truth + rng.normal(0, 0.1, 40)  # same noise law in both orders: no order effect
        b = truth + rng.normal(0, 0.1, 40)
        _, low, high, p = t_interval(b - a)
        rejected += p < 0.05
        covered += low <= 0 <= high
    assert 0.03 <= rejected / trials <= 0.075
    assert covered == trials - rejected  # the interval and the test agree


def test_the_flip_interval_covers_the_planted_rate_by_simulation():
    rng = np.random.default_rng(5)
    p, n, k, trials = 0.2, 50, 3, 120
    expected = 2 * p * (1 - p)
    covered = 0
    for trial in range(trials):
        truth = rng.integers(0, 2, n)
        runs = []
        for _ in range(k):
            flipped = np.where(rng.random(n) < p, 1 - truth, truth)
            runs.append(pd.DataFrame({"item_id": [f"i{j}" for j in range(n)], "model": "m", "dimension": "ca",
                                      "value": flipped.astype(float)}))
        result = repeatability(runs, n_resamples=300, seed=trial)[0]
        covered += result.flip_low <= expected <= result.flip_high
    assert covered / trials >= 0.9  # 95 % nominal; 120 trials put 0.9 about 2.5 standard errors below


# ------------------------------------------------------------------------------------------------ lexicon judges

def test_the_lexicon_judge_runs_through_every_probe_offline():
    results = _by_name(run_probes(OUTPUTS, resolve_judge("lexicon", None)))
    assert set(results) == {p.name for p in PROBES}
    for name, result in results.items():
        assert result.n_applicable > 0, name
    # VADER ignores a toggled full stop; the checklist counts the appended graphic sentence's two elements
    assert results["punctuation:e_gen"].passed and results["punctuation:u_gen"].passed
    assert results["graphic-detail:u_gen"].n_moved == results["graphic-detail:u_gen"].n_applicable
    # E is the mean over sentences: an added neutral sentence (intensity 0) dilutes every affective response
    neutral = results["neutral-sentence:e_gen"]
    assert neutral.n_violations > 0 and not neutral.passed
    assert results["agentless:ld_agentless"].passed
    table = probes_frame(list(results.values()))
    assert list(table.columns) == list(probes_module.PROBE_COLUMNS)
    runs = rerun(OUTPUTS, resolve_judge("lexicon", None), 2)
    assert all(r.flip_rate == 0 for r in repeatability(runs, dimensions=["e_gen", "ca"], n_resamples=100))


# ------------------------------------------------------------------------------------------------ the edits

def test_attenuation_weakens_affect_and_keeps_a_conjunction_so():
    from empathy.judge_report.edits import attenuate_affect

    text = "I love it, so they get to know you! I am so sad. So that is it. It is so very hard."
    assert attenuate_affect(text) == "I like it, so they get to know you. I am sad. So that is it. It is hard."
    assert attenuate_affect("The meeting is at noon.") is None
