"""Coverage of the audit's intervals at the sizes audits have, by simulation (the table of docs/statistics.md).

A grid of cells: an audit of ``n`` = 10, 15, 20, 40 and 80 outputs per model (of a frame of 200 outputs, 400 at
80) and a true mean near 0, at 0.5 and near 1, for two kinds of term:

* **share** — a binary term like CA: the human label is Bernoulli(truth) and the judge errs with a false alarm
  rate of 0.10 and a miss rate of 0.20 (so its own share is biased: 0.135 where the truth is 0.05);
* **mean** — a continuous term in [0, 1] like an EGM or SA average: Beta(4 truth, 4 (1 - truth)) (skewness
  about 3 near the ends, 0 at 0.5), the judge's term the human's + 0.1 + normal noise of sd 0.15, clipped to
  [0, 1].

Each cell draws ``reps`` seeded frames of independent outputs (the target is the super-population mean, the
truth above) and computes, with the package's own functions, the PPI++ and the human-only intervals of
:func:`empathy.inference.ppi_mean` (the ``n`` first outputs audited, the others not) and the item bootstrap's
expanded percentile interval of the human terms of ``n`` items (:func:`empathy.bootstrap.cluster_means`,
:func:`empathy.bootstrap.expanded_percentile`, with :func:`empathy.small_sample.bootstrap_value_warning`: a
judge value's interval in the results tables and its warning, here on terms whose mean is the truth). A cell
reports the coverage of nominal 95 % intervals, the share of them whose row warns that the level is not
promised (:func:`empathy.small_sample.level_not_promised`; any warning for the bootstrap) and a verdict
(:data:`VERDICTS`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from empathy.agreement import ConfidenceInterval
from empathy.bootstrap import cluster_means, expanded_percentile
from empathy.inference import ppi_mean
from empathy.small_sample import bootstrap_value_warning, level_not_promised

SIZES: tuple[int, ...] = (10, 15, 20, 40, 80)
TRUTHS: tuple[float, ...] = (0.05, 0.5, 0.95)
KINDS: tuple[str, ...] = ("share", "mean")
METHODS: tuple[str, ...] = ("PPI++", "human-only", "bootstrap")
#: Nominal coverage and the band a cell's coverage must fall in to hold its level without a word.
CONFIDENCE, BAND = 0.95, (0.93, 0.97)
#: Simulated audits per cell: the standard error of a coverage near 0.95 is 0.0097 at 500 (0.95 and 0.90 lie 5
#: of them apart), 0.011 at 400.
PPI_REPS, BOOTSTRAP_REPS = 500, 400
BOOTSTRAP_RESAMPLES = 1000
#: Below this many intervals without a warning a cell's unwarned coverage is not estimated.
MIN_UNWARNED = 30
#: What a cell's figures say: ``holds`` (coverage in :data:`BAND`), ``conservative`` (above it: exact intervals
#: cover more than their level where few values are possible), ``warned`` (below it, and the intervals without a
#: warning hold it, or too few are without one), ``fails`` (below it without a warning).
VERDICTS: tuple[str, ...] = ("holds", "conservative", "warned", "fails")
ALARM, MISS = 0.10, 0.20
CONCENTRATION, JUDGE_BIAS, JUDGE_NOISE = 4.0, 0.1, 0.15


def frame_size(n: int) -> int:
    """The outputs per model of the simulated frame: 200, or 400 for an audit of 80 (as the issue's table)."""
    return 400 if n >= 80 else 200


def _seed(kind: str, n: int, truth: float, method: str) -> int:
    """A fixed seed per cell (the same whatever other cells run)."""
    return 4400 + 1000 * KINDS.index(kind) + 100 * SIZES.index(n) + 10 * TRUTHS.index(truth) + (
        1 if method == "bootstrap" else 0)


def draw(kind: str, truth: float, reps: int, size: int, rng: np.random.Generator
         ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``reps`` frames of ``size`` outputs: the human terms and the judge's, each ``reps x size``."""
    if kind == "share":
        human = (rng.random((reps, size)) < truth).astype(float)
        flip = rng.random((reps, size)) < np.where(human == 1.0, MISS, ALARM)
        return human, np.where(flip, 1.0 - human, human)
    human = rng.beta(CONCENTRATION * truth, CONCENTRATION * (1.0 - truth), (reps, size))
    judge = np.clip(human + JUDGE_BIAS + rng.normal(0.0, JUDGE_NOISE, (reps, size)), 0.0, 1.0)
    return human, judge


@dataclass(frozen=True)
class Cell:
    """One cell of the table: how often one method's 95 % interval held the truth, and how often it warned."""

    kind: str
    n: int
    truth: float
    method: str
    reps: int
    coverage: float
    warned: float
    unwarned_coverage: float  # NaN when fewer than MIN_UNWARNED intervals carry no warning
    zero_width: int
    zero_width_unwarned: int  # intervals of zero width without a warning: never, by design

    @property
    def verdict(self) -> str:
        """One of :data:`VERDICTS`."""
        low, high = BAND
        if low <= round(self.coverage, 3) <= high:
            return "holds"
        if self.coverage > high:
            return "conservative"
        return "warned" if math.isnan(self.unwarned_coverage) or self.unwarned_coverage >= low else "fails"

    def text(self) -> str:
        """The cell as the table prints it: coverage, the share warned when any, the verdict when not ``holds``."""
        warned = f", {self.warned:.0%} warned" if self.warned else ""
        verdict = "" if self.verdict == "holds" else f" ({self.verdict})"
        return f"{self.coverage:.3f}{warned}{verdict}"


def _cell(kind: str, n: int, truth: float, method: str, covered: NDArray[np.bool_], warned: NDArray[np.bool_],
          zero: NDArray[np.bool_]) -> Cell:
    unwarned = covered[~warned]
    return Cell(kind, n, truth, method, len(covered), float(covered.mean()), float(warned.mean()),
                float(unwarned.mean()) if len(unwarned) >= MIN_UNWARNED else math.nan, int(zero.sum()),
                int((zero & ~warned).sum()))


@functools.cache  # seeded: the doc's table and the tests ask for the same cells
def ppi_cells(kind: str, n: int, truth: float, reps: int = PPI_REPS) -> tuple[Cell, Cell]:
    """The PPI++ and human-only cells of one (kind, n, truth): ``reps`` audits through :func:`ppi_mean`."""
    rng = np.random.default_rng(_seed(kind, n, truth, "PPI++"))
    human, judge = draw(kind, truth, reps, frame_size(n), rng)
    found = np.zeros((2, 3, reps), dtype=bool)  # (ppi, human) x (covered, warned, zero width)
    for r in range(reps):
        result = ppi_mean(human[r, :n], judge[r, :n], judge[r, n:], confidence=CONFIDENCE, binary=kind == "share")
        warned = level_not_promised(result.warning)
        for k, estimate in enumerate((result.estimate, result.human)):
            found[k, :, r] = (estimate.low <= truth <= estimate.high, warned, estimate.width <= 0)
    return (_cell(kind, n, truth, "PPI++", *found[0]), _cell(kind, n, truth, "human-only", *found[1]))


@functools.cache
def bootstrap_cell(kind: str, n: int, truth: float, reps: int = BOOTSTRAP_REPS,
                   n_resamples: int = BOOTSTRAP_RESAMPLES) -> Cell:
    """The item bootstrap's cell of one (kind, n, truth): the expanded percentile interval of ``n`` items' mean."""
    rng = np.random.default_rng(_seed(kind, n, truth, "bootstrap"))
    human, _ = draw(kind, truth, reps, n, rng)
    found = np.zeros((3, reps), dtype=bool)
    for r in range(reps):
        replicates = cluster_means(human[r][:, None], n_resamples=n_resamples, seed=r)
        low, high = expanded_percentile(replicates[:, 0], n, CONFIDENCE)
        warning = bootstrap_value_warning(ConfidenceInterval(low, high, CONFIDENCE, n_resamples, r, n), human[r],
                                          binary=kind == "share")
        found[:, r] = (low <= truth <= high, warning is not None, high <= low)
    return _cell(kind, n, truth, "bootstrap", *found)


def cells(*, ppi_reps: int = PPI_REPS, bootstrap_reps: int = BOOTSTRAP_REPS) -> Iterator[Cell]:
    """Every cell of the table, in its order (kind, method, truth, size)."""
    for kind in KINDS:
        for n in SIZES:
            for truth in TRUTHS:
                yield from ppi_cells(kind, n, truth, ppi_reps)
                yield bootstrap_cell(kind, n, truth, bootstrap_reps)


def markdown(*, ppi_reps: int = PPI_REPS, bootstrap_reps: int = BOOTSTRAP_REPS) -> str:
    """The generated table of docs/statistics.md: a row per (term, method, truth), a column per audit size."""
    table: dict[tuple[str, str, float], dict[int, Cell]] = {}
    for cell in cells(ppi_reps=ppi_reps, bootstrap_reps=bootstrap_reps):
        table.setdefault((cell.kind, cell.method, cell.truth), {})[cell.n] = cell
    lines = ["| term | interval | truth | " + " | ".join(f"n = {n}" for n in SIZES) + " |",
             "|---|---|---|" + "---|" * len(SIZES)]
    for kind in KINDS:
        for method in METHODS:
            for truth in TRUTHS:
                row = table[(kind, method, truth)]
                lines.append(f"| {kind} | {method} | {truth:g} | " + " | ".join(row[n].text() for n in SIZES) + " |")
    return "\n".join(lines)


#: The markers of the generated block in docs/statistics.md (scripts/coverage_table.py writes between them).
BEGIN = "<!-- BEGIN coverage-table (generated by scripts/coverage_table.py; do not edit) -->"
END = "<!-- END coverage-table -->"


def block() -> str:
    """What docs/statistics.md holds between :data:`BEGIN` and :data:`END`: the table and what it rests on."""
    return (markdown() + "\n\n"
            f"*Coverage of nominal 95 % intervals: {PPI_REPS} simulated audits per PPI++ and human-only cell, "
            f"{BOOTSTRAP_REPS} per bootstrap cell ({BOOTSTRAP_RESAMPLES:,} resamples each; a coverage near 0.95 is "
            f"known to +-0.010 and +-0.011), a fixed seed per cell. *x % warned*: the share of the intervals whose "
            "row carries a warning that the level is not promised. A verdict follows a coverage outside "
            f"{BAND[0]:.2f}-{BAND[1]:.2f}: *conservative* (above), *warned* (below, and the intervals without a "
            f"warning cover at least {BAND[0]:.2f}, or fewer than {MIN_UNWARNED} are without one), *fails* "
            "(below without a warning).*")
