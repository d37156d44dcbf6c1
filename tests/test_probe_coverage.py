"""The probes' violation-rate interval, item as the unit: hand-worked ends, and its level held by simulation for
a noisy judge where Wilson's over outputs is not (validation/probe_coverage.py; the cells are cached, so the
page's check in tests/test_judge_report_doc.py and these share one simulation)."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from empathy.judge_report.probes import violation_interval, wilson
from validation.probe_coverage import FLIP_RATES, HOLDS, ITEMS, JUDGES, MODELS, cell, target


def test_one_output_per_item_is_wilson_at_the_korn_graubard_size():
    # 3 violations of 20 items, one output each: v = K/(K-1) sum (e - r)^2 / K^2 = r (1 - r) / (K - 1), so the
    # effective size is K - 1 = 19, times (z / t_19)^2
    z, t = stats.norm.ppf(0.975), stats.t.ppf(0.975, 19)
    n = 19 * (z / t) ** 2
    r = 3 / 20
    centre = (r + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(r * (1 - r) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low, high = violation_interval([True] * 3 + [False] * 17, list(range(20)))
    assert (low, high) == pytest.approx((centre - half, centre + half))


def test_no_violation_rests_on_the_items_not_the_outputs():
    # 40 outputs of 8 items, none violating: Wilson's upper end z^2 / (n + z^2) at the 8 items' size, times
    # (z / t_7)^2 as every cluster interval
    z, t = stats.norm.ppf(0.975), stats.t.ppf(0.975, 7)
    n = 8 * (z / t) ** 2
    low, high = violation_interval([False] * 40, [i // 5 for i in range(40)])
    assert low == 0.0 and high == pytest.approx(z * z / (n + z * z))
    assert high > wilson(0, 40)[1]
    assert violation_interval([], []) == (None, None)


def test_the_target_by_hand():
    assert target(0.1, "uniform") == pytest.approx(2 * 0.1 * 0.9)
    # Beta(0.2, 1.8): E f^2 = var + mean^2 = 0.09 / 3 + 0.01
    assert target(0.1, "item-dependent") == pytest.approx(2 * 0.1 - 2 * (0.09 / 3 + 0.01))


def test_the_interval_holds_its_level_where_wilson_over_outputs_does_not():
    cells = [cell(f, j, n, m) for j in JUDGES for f in FLIP_RATES for m in MODELS for n in ITEMS]
    assert min(c.item_interval for c in cells) >= HOLDS
    clustered = [c for c in cells if c.judge == "item-dependent" and c.n_models > 1]
    # the failure the interval exists for: about 0.85, more than ten standard errors below 0.95
    assert max(c.output_wilson for c in clustered) < 0.90


def test_rerun_rates_count_each_class_and_take_the_item_as_the_unit():
    import pandas as pd

    from empathy.judge_report.repeatability import rerun_rates
    from empathy.labels.ledger import RerunLedger

    def frame(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
        return pd.DataFrame(rows, columns=["item_id", "model", "dimension"])

    # ca: 6 confirmed and 2 disputed decisions on 4 items (two models each); e_gen: one stale, one orphaned
    confirmed = frame([(f"i{k // 2}", f"m{k % 2}", "ca") for k in range(6)])
    disputed = frame([("i3", "m0", "ca"), ("i3", "m1", "ca")])
    ledger = RerunLedger(confirmed, disputed, frame([("i9", "m0", "e_gen")]), frame([("i8", "m0", "e_gen")]))
    rates = rerun_rates(ledger).set_index("dimension")
    assert rates.loc["ca", ["confirmed", "disputed", "stale", "orphaned"]].tolist() == [6, 2, 0, 0]
    assert rates.loc["ca", "confirmed_share"] == pytest.approx(0.75)
    items = [f"i{k // 2}" for k in range(6)] + ["i3", "i3"]
    low, high = violation_interval([True] * 6 + [False] * 2, items)
    assert (rates.loc["ca", "confirmed_low"], rates.loc["ca", "confirmed_high"]) == pytest.approx((low, high))
    assert low < wilson(6, 8)[0]  # 4 items, not 8 independent decisions
    assert rates.loc["e_gen", ["stale", "orphaned"]].tolist() == [1, 1]
    assert pd.isna(rates.loc["e_gen", "confirmed_share"]) and pd.isna(rates.loc["e_gen", "confirmed_low"])
