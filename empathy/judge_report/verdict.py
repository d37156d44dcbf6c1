"""One verdict line per judge and dimension: what a reviewer deciding whether the judge may replace the annotators
reads first, with the signature of everything behind it.

The line states the Alt-Test's outcome (against whom, at which epsilon, on how many instances, how many
annotators the judge beat, its advantage probability), then the length dependence beyond the annotators with its
interval where the outputs' texts are known (:mod:`empathy.judge_report.length`), and names what the report did
not measure, so that silence is never read as a pass: e.g. ``passes the Alt-Test against 3 experts at epsilon
0.2 (n = 50; wins against 3 of 3; advantage probability 0.89); length beyond the annotators r = 0.12 [-0.16,
0.38] (n = 50); not measured: order effect, repeatability, probes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from empathy.judge_report.alt_test import AltTestResult, unit_matrix
from empathy.judge_report.length import LengthDependence, length_dependence, word_counts

#: What a verdict names as not measured when the report has no such measurement.
UNMEASURED: tuple[str, ...] = ("order effect", "repeatability", "probes")
_PLURAL = {"expert": "experts", "human": "human annotators", "author": "authors", "crowd": "crowd raters",
           "": "annotators"}


@dataclass(frozen=True)
class Verdict:
    """The verdict of one judge on one dimension."""

    alt: AltTestResult
    length: LengthDependence | None
    line: str
    signature: str
    not_measured: tuple[str, ...] = field(default=UNMEASURED)

    @property
    def judge(self) -> str:
        """The judge."""
        return self.alt.judge

    @property
    def dimension(self) -> str:
        """The dimension."""
        return self.alt.dimension

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: judge, dimension, line, the Alt-Test's headline numbers, the length fields, signature."""
        alt = self.alt
        length = self.length.to_dict() if self.length is not None else {}
        return {"judge": alt.judge, "dimension": alt.dimension, "line": self.line, "passed": alt.passed,
                "winning_rate": alt.winning_rate, "advantage_probability": alt.advantage_probability,
                "epsilon": alt.epsilon, "scoring": alt.scoring, "n_instances": alt.n_instances,
                "n_annotators": len(alt.annotators), "annotators_won": sum(a.won for a in alt.annotators),
                **length, "not_measured": list(self.not_measured), "signature": self.signature}


def annotators_phrase(result: AltTestResult) -> str:
    """``3 experts``, ``2 human annotators``, or ``3 annotators (2 expert, 1 human)`` for mixed kinds."""
    kinds = [a.rater_kind for a in result.annotators]
    n = len(kinds)
    if len(set(kinds)) == 1:
        return f"{n} {_PLURAL.get(kinds[0], kinds[0] + 's')}"
    counts = pd.Series(kinds).replace("", "unstated").value_counts()
    return f"{n} annotators ({', '.join(f'{c} {k}' for k, c in counts.items())})"


def _interval(r: float | None, low: float | None, high: float | None) -> str:
    if r is None:
        return "undefined"
    return f"{r:.2f}" + (f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else "")


def _checks_parts(checks: Mapping[str, Any], dimension: str) -> tuple[list[str], list[str]]:
    """The verdict's phrases from a ``judge-check`` object (:mod:`empathy.judge_report.checks`) for one dimension,
    and what it leaves unmeasured there."""
    parts, missing = [], []
    order = {row["dimension"]: row for row in checks.get("order") or []}
    if dimension in order and order[dimension]["effect"] is not None:
        row = order[dimension]
        p = row["p_value"]
        parts.append(f"order effect {_interval(row['effect'], row['effect_low'], row['effect_high'])}"
                     + (f" (p = {p:.2g}; mean |d| {row['mean_abs']:.2f}; n = {row['n_items']} items)"
                        if p is not None else ""))
    else:
        missing.append("order effect")
    repeat = {row["dimension"]: row for row in checks.get("repeatability") or []}
    if dimension in repeat and repeat[dimension]["flip_rate"] is not None:
        row = repeat[dimension]
        alpha = _interval(row["alpha"], row["alpha_low"], row["alpha_high"])
        parts.append(f"flips between runs {_interval(row['flip_rate'], row['flip_low'], row['flip_high'])} "
                     f"(alpha across {row['k']} runs {alpha}; n = {row['n_outputs']})")
    else:
        missing.append("repeatability")
    probes = [row for row in checks.get("probes") or [] if row["dimension"] == dimension and row["passed"] is not None]
    if probes:
        failed = [row["probe"] for row in probes if not row["passed"]]
        parts.append(f"fails {len(failed)} of {len(probes)} probes" + (f" ({', '.join(failed)})" if failed else ""))
    else:
        missing.append("probes")
    return parts, missing


def verdict_line(result: AltTestResult, length: LengthDependence | None,
                 checks: Mapping[str, Any] | None = None) -> str:
    """The one-line verdict of a judge on a dimension (``checks``: the judge's ``judge-check`` object)."""
    won = sum(a.won for a in result.annotators)
    outcome = "passes" if result.passed else "fails"
    parts = [f"{outcome} the Alt-Test against {annotators_phrase(result)} at epsilon {result.epsilon:g} "
             f"(n = {result.n_instances}; wins against {won} of {len(result.annotators)}; advantage probability "
             f"{result.advantage_probability:.2f})"]
    if length is not None:
        judge_r = _interval(length.partial, length.partial_low, length.partial_high)
        humans_r = _interval(length.annotators, length.annotators_low, length.annotators_high)
        parts.append(f"length beyond the annotators r = {judge_r} (annotators' own {humans_r}; n = {length.n})")
    else:
        parts.append("length not measured (no output texts)")
    found, missing = _checks_parts(checks, result.dimension) if checks else ([], list(UNMEASURED))
    parts += found
    if missing:
        parts.append("not measured: " + ", ".join(missing))
    return "; ".join(parts)


def verdicts(ratings: pd.DataFrame, results: Sequence[AltTestResult], outputs: pd.DataFrame | None = None,
             checks: Mapping[str, Mapping[str, Any]] | None = None) -> list[Verdict]:
    """The :class:`Verdict` of each Alt-Test result, with the length dependence where ``outputs`` has texts and
    the order effect, repeatability and probes of ``checks`` (judge name -> its ``judge-check`` object)."""
    words = word_counts(outputs) if outputs is not None and "generation" in outputs.columns else None
    found = []
    for result in results:
        names = [a.annotator for a in result.annotators]
        length = None
        if words is not None:
            matrix = unit_matrix(ratings, result.dimension, [*names, result.judge])
            if matrix.index.nlevels == 2:
                matrix.index = pd.MultiIndex.from_arrays([matrix.index.get_level_values(0).astype(str),
                                                          matrix.index.get_level_values(1).astype(str)])
                length = length_dependence(matrix, result.judge, names, words, result.dimension)
        fields = "verdict:alt-test+length" if length is not None else "verdict:alt-test"
        signature = f"{result.signature}|{fields}"
        if length is not None:
            signature += "|length:partial-r(log1p-words;annotator-mean);fisher-z-95"
        checked = (checks or {}).get(result.judge)
        if checked:
            signature += f"|checks:{checked.get('signature', '')}"
        missing = tuple(_checks_parts(checked, result.dimension)[1]) if checked else UNMEASURED
        found.append(Verdict(result, length, verdict_line(result, length, checked), signature, missing))
    return found


def verdicts_frame(found: Sequence[Verdict]) -> pd.DataFrame:
    """One row per verdict (the CSV / JSON export): the :meth:`Verdict.to_dict` fields, ``not_measured`` joined."""
    rows = []
    for verdict in found:
        row = verdict.to_dict()
        row["not_measured"] = ", ".join(row["not_measured"])  # type: ignore[arg-type]
        rows.append(row)
    return pd.DataFrame(rows)
