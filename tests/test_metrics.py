"""The four metrics of Section 2.2 on hand-worked examples, open cases included."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from empathy import metrics as m

NAN = float("nan")

# (e_ref, e_gen, expected SA, n, n_missing, n_undefined) — each value worked by hand from Eq. 1.
SA_CASES = [
    ([0.8, 0.5, 0.4], [0.4, 0.5, 0.6], 0.0, 3, 0, 0),            # 0.5, 0, -0.5
    ([1.0, 0.5], [0.25, 0.1], 0.775, 2, 0, 0),                    # 0.75, 0.8
    ([0.5], [0.0], 1.0, 1, 0, 0),                                 # total flattening: the maximum, 1
    ([0.2], [0.6], -2.0, 1, 0, 0),                                # more intense than the reference: negative
    ([0.0, 0.5], [0.2, 0.25], 0.5, 1, 0, 1),                      # E(t) = 0 is undefined and left out
    ([0.0, 0.0], [0.0, 0.3], None, 0, 0, 2),                      # nothing usable: None, never 0
    ([NAN, 0.5], [0.2, 0.25], 0.5, 1, 1, 0),                      # a missing rating is left out, not 0
    ([0.6, 0.9], [0.3, NAN], 0.5, 1, 1, 0),
]


@pytest.mark.parametrize(("e_ref", "e_gen", "expected", "n", "n_missing", "n_undefined"), SA_CASES)
def test_sentiment_attenuation(e_ref, e_gen, expected, n, n_missing, n_undefined):
    result = m.sentiment_attenuation(e_ref, e_gen)
    if expected is None:
        assert result.value is None
    else:
        assert result.value == pytest.approx(expected, abs=1e-12)
    assert (result.n, result.n_missing, result.n_undefined) == (n, n_missing, n_undefined)


# (u_ref, u_gen, sentences_ref, sentences_gen, expected EGM, n, n_undefined)
EGM_CASES = [
    ([2], [1], [4], [2], 0.0, 1, 0),                 # a = b = 0.5: equal densities
    ([3], [0], [3], [5], 1.0, 1, 0),                 # a = 1, b = 0: the maximum
    ([1], [2], [2], [2], 1 / 3, 1, 0),               # |0.5 - 1| / 1.5
    ([0], [0], [4], [3], 0.0, 1, 0),                 # a + b = 0: no disturbing content anywhere, term 0
    ([1, 0], [2, 0], [2, 0], [2, 3], 1 / 3, 1, 1),   # an empty reference (0 sentences) is undefined
    ([4, 1], [1, 1], [4, 1], [2, 4], (1 / 3 + 0.6) / 2, 2, 0),  # (1, .5) -> 1/3; (1, .25) -> .6
]


@pytest.mark.parametrize(("u_ref", "u_gen", "d", "q", "expected", "n", "n_undefined"), EGM_CASES)
def test_granularity_mismatch(u_ref, u_gen, d, q, expected, n, n_undefined):
    result = m.granularity_mismatch(u_ref, u_gen, d, q)
    assert result.value == pytest.approx(expected, abs=1e-12)
    assert (result.n, result.n_undefined) == (n, n_undefined)


def test_granularity_mismatch_missing_count():
    result = m.granularity_mismatch([1, NAN], [1, 2], [1, 1], [1, 1])
    assert (result.value, result.n, result.n_missing) == (0.0, 1, 1)


@pytest.mark.parametrize(("labels", "expected", "n", "n_missing"), [
    ([1, 0, 1], 2 / 3, 3, 0),
    ([1, 1, 1, 1], 1.0, 4, 0),
    ([0, 0], 0.0, 2, 0),
    ([1, 0, 1, NAN], 2 / 3, 3, 1),
    ([NAN], None, 0, 1),
])
def test_conflict_avoidance(labels, expected, n, n_missing):
    result = m.conflict_avoidance(labels)
    assert result.value == (None if expected is None else pytest.approx(expected))
    assert (result.n, result.n_missing) == (n, n_missing)


def test_linguistic_distancing_hand_worked():
    # ref: mean (2,0,0), sd (1,0,0) -> z = (-1,0,0), (1,0,0); the 2nd and 3rd columns have sd 0 -> z = 0.
    # gen: mean (0,1,0), sd (0,1,0) -> z = (0,1,0), (0,-1,0). Differences (-1,-1,0), (1,1,0): both sqrt(2).
    ref = [[1, 0, 0], [3, 0, 0]]
    gen = [[0, 2, 0], [0, 0, 0]]
    result = m.linguistic_distancing(ref, gen)
    assert result.value == pytest.approx(math.sqrt(2))
    assert result.n == 2


def test_linguistic_distancing_reference_standardization():
    # gen standardised with the reference's mean (2,0,0) and sd (1,0,0): z = (-2,0,0) twice; distances 1 and 3.
    result = m.linguistic_distancing([[1, 0, 0], [3, 0, 0]], [[0, 2, 0], [0, 0, 0]], standardization="reference")
    assert result.value == pytest.approx(2.0)


def test_linguistic_distancing_matches_scipy_zscore():
    rng = np.random.default_rng(7)
    ref = rng.gamma(2.0, 0.3, size=(50, 3))
    gen = rng.gamma(1.5, 0.4, size=(50, 3))
    expected = np.linalg.norm(stats.zscore(ref, axis=0) - stats.zscore(gen, axis=0), axis=1).mean()
    assert m.linguistic_distancing(ref, gen).value == pytest.approx(expected, rel=1e-12)


def test_linguistic_distancing_is_zero_for_identical_sides():
    rng = np.random.default_rng(1)
    ref = rng.random((10, 3))
    assert m.linguistic_distancing(ref, ref).value == pytest.approx(0.0, abs=1e-12)


def test_linguistic_distancing_open_cases():
    # one usable item: no spread to standardise with -> None
    single = m.linguistic_distancing([[1, 0, 0]], [[0, 1, 0]])
    assert single.value is None and single.n_undefined == 1
    # an empty text (densities NaN) is left out; the remaining two items give the hand-worked sqrt(2)
    result = m.linguistic_distancing([[1, 0, 0], [3, 0, 0], [NAN, NAN, NAN]], [[0, 2, 0], [0, 0, 0], [1, 1, 1]])
    assert result.value == pytest.approx(math.sqrt(2))
    assert (result.n, result.n_undefined) == (2, 1)
    # every dimension constant on both sides: all z-scores 0, LD 0
    assert m.linguistic_distancing([[1, 1, 1]] * 3, [[2, 0, 5]] * 3).value == 0.0


@pytest.mark.parametrize(("call", "message"), [
    (lambda: m.sentiment_attenuation([1.5], [0.2]), r"e_ref\[0\] = 1.5 is outside \[0, 1\]"),
    (lambda: m.sentiment_attenuation([0.5], [-0.1]), r"e_gen\[0\]"),
    (lambda: m.sentiment_attenuation([0.5, 0.2], [0.1]), "differ in length"),
    (lambda: m.granularity_mismatch([-1], [0], [1], [1]), r"u_ref\[0\] = -1.0"),
    (lambda: m.conflict_avoidance([1, 0.5]), r"ca\[1\] = 0.5 is not a binary label"),
    (lambda: m.linguistic_distancing([[1, 2]], [[1, 2]]), r"shape \(n, 3\)"),
    (lambda: m.linguistic_distancing([[1, 2, 3]], [[1, 2, 3], [1, 1, 1]]), "differ in shape"),
    (lambda: m.linguistic_distancing([[1, 2, 3]], [[1, 2, 3]], standardization="pooled"), "standardization"),
    (lambda: m.conflict_avoidance(["yes"]), "must be numeric"),
])
def test_metric_validation(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()
