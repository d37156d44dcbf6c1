"""Coverage of the audit's intervals at the sizes audits have (validation/small_audits.py), and the table of
docs/statistics.md that scripts/coverage_table.py writes from it.

Each cell is 500 seeded simulated audits (400 for the bootstrap): a coverage near 0.95 is known to +-0.01, so
0.95 and 0.90 are five standard errors apart. The issue's table had a row per audit size; each is a test here.
"""

from __future__ import annotations

import importlib.util
import math
import sys

import numpy as np
import pytest

from empathy.inference import ppi_mean
from empathy.paths import PROJECT_ROOT
from validation import small_audits
from validation.small_audits import BAND, Cell, bootstrap_cell, draw, frame_size, ppi_cells

spec = importlib.util.spec_from_file_location("coverage_table", PROJECT_ROOT / "scripts" / "coverage_table.py")
coverage_table = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = coverage_table
spec.loader.exec_module(coverage_table)  # type: ignore[union-attr]


def _acceptable(cell: Cell) -> None:
    """A cell holds its level, covers more, or every shortfall is warned; no zero-width interval goes unwarned."""
    assert cell.verdict in ("holds", "conservative", "warned"), cell
    if cell.verdict == "warned":
        assert cell.coverage < BAND[0] and (math.isnan(cell.unwarned_coverage)
                                            or cell.unwarned_coverage >= BAND[0]), cell
    else:
        assert cell.coverage >= BAND[0], cell
    assert cell.zero_width_unwarned == 0, cell


# the issue's rows: audited per model / outputs, and the true values (a share like CA; also a continuous mean)
ISSUE_ROWS = [(80, (0.5,)), (40, (0.5,)), (15, (0.5,)), (20, (0.05, 0.95)), (10, (0.05, 0.95))]


@pytest.mark.parametrize(("n", "truths"), ISSUE_ROWS, ids=[f"{n}-of-{frame_size(n)}" for n, _ in ISSUE_ROWS])
@pytest.mark.parametrize("kind", ["share", "mean"])
def test_ppi_and_human_only_hold_their_level_or_say_so(kind: str, n: int, truths: tuple[float, ...]) -> None:
    for truth in truths:
        ppi, human = ppi_cells(kind, n, truth)
        _acceptable(ppi)
        _acceptable(human)
        if kind == "share":  # exact intervals: a share's never needs a warning, at any size or true share
            assert min(ppi.coverage, human.coverage) >= BAND[0] and ppi.verdict != "warned"


def test_the_normal_intervals_they_replace_undercover_near_0_and_1() -> None:
    # the same audits through ppi-python's normal intervals (interval="normal"): the simulation tells them apart
    n, truth, reps = 20, 0.05, 500
    human, judge = draw("share", truth, reps, frame_size(n), np.random.default_rng(7))
    covered = zero = 0
    for r in range(reps):
        result = ppi_mean(human[r, :n], judge[r, :n], judge[r, n:], interval="normal")
        covered += result.estimate.low <= truth <= result.estimate.high
        zero += result.estimate.width <= 0
    assert covered / reps < 0.75 and zero > reps / 5  # the issue measured 0.49, and 118 of 250 of zero width
    assert ppi_cells("share", n, truth)[0].coverage >= 0.95


@pytest.mark.parametrize("truth", small_audits.TRUTHS)
@pytest.mark.parametrize("kind", ["share", "mean"])
def test_the_bootstrap_holds_its_level_or_says_so(kind: str, truth: float) -> None:
    for n in (10, 20, 80):
        _acceptable(bootstrap_cell(kind, n, truth))
    if truth != 0.5:  # near 0 or 1: the bootstrap cannot promise its level, and nearly always says so
        assert bootstrap_cell(kind, 80, truth).warned > 0.9


def test_verdicts_by_hand() -> None:
    def cell(coverage: float, unwarned: float) -> Cell:
        return Cell("share", 10, 0.5, "PPI++", 500, coverage, 0.5, unwarned, 0, 0)

    assert [cell(0.95, 0.95).verdict, cell(0.985, 0.99).verdict, cell(0.80, 0.94).verdict,
            cell(0.80, math.nan).verdict, cell(0.80, 0.90).verdict] == [
        "holds", "conservative", "warned", "warned", "fails"]
    assert cell(0.80, 0.94).text() == "0.800, 50% warned (warned)" and cell(0.95, 0.95).text() == "0.950, 50% warned"


def test_docs_statistics_holds_the_simulated_table() -> None:
    text = small_audits.block()
    assert coverage_table.documented(coverage_table.DOC) == text
    assert coverage_table.main(["--check"]) == 0
    # every cell of the table is acceptable (the table is what the tests above assert, cell by cell)
    for cell in small_audits.cells():
        _acceptable(cell)
    assert "(fails)" not in text
