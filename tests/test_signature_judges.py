"""Each rater's signature read from the ratings (``empathy.signature.judge_signatures``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from empathy.signature import judge_signatures


def _ratings(raters, signatures):
    return pd.DataFrame({"rater": raters, "signature": signatures, "value": 1.0})


@pytest.mark.parametrize(("ratings", "expected"), [
    (_ratings(["a", "a", "b"], ["s1", "s1", "s2"]), {"a": "s1", "b": "s2"}),
    # two runs mixed: both shown, sorted, joined by "+"
    (_ratings(["a", "a", "b"], ["s2", "s1", "s2"]), {"a": "s1+s2", "b": "s2"}),
    # no signature (empty or missing): unsigned; one signed row is enough
    (_ratings(["a", "b", "b", "c"], ["", None, "s3", np.nan]), {"a": "unsigned", "b": "s3", "c": "unsigned"}),
    (pd.DataFrame({"rater": ["b", "a"], "value": [1.0, 0.0]}), {"a": "unsigned", "b": "unsigned"}),
    (_ratings([], []), {}),
])
def test_judge_signatures_hand_worked(ratings, expected):
    assert judge_signatures(ratings) == expected


@pytest.mark.parametrize(("rows", "distinct"), [(5000, 4), (300, 250)])
def test_judge_signatures_equal_a_group_by(rows, distinct):
    # few signatures (found by counting) and about one per row (found by sorting): the same as a group-by
    rng = np.random.default_rng(distinct)
    raters = rng.choice([f"judge{k}" for k in range(5)], rows)
    signatures = np.array([f"sig{k}" for k in rng.integers(0, distinct, rows)], dtype=object)
    signatures[rng.random(rows) < 0.05] = ""
    ratings = _ratings(raters, signatures).astype({"rater": "string[pyarrow]", "signature": "string[pyarrow]"})
    expected = {}
    for rater, part in ratings.groupby("rater"):
        found = sorted({s for s in part["signature"] if s})
        expected[rater] = "+".join(found) if found else "unsigned"
    assert judge_signatures(ratings) == expected
