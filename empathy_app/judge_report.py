"""Judge report page views: the Alt-Test and the verdict line of each judge on one dimension.

The numbers come from :mod:`empathy.judge_report`; this module picks the raters the page offers, caches the report
per data set, ledger and options, and turns it into the tables and downloads. ``app_pages/11_Judge_report.py``
only lays it out. The team's own decisions (the ledger's annotators) join the annotators as raters of kind
``human``, as on the Disagreement page.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from empathy.judge_report.alt_test import DEFAULT_ANNOTATOR_KINDS, alt_test, annotators_frame, rater_kinds
from empathy.judge_report.verdict import Verdict, verdicts, verdicts_frame
from empathy_app.disagreement import with_humans


@dataclass(frozen=True)
class Report:
    """The verdicts of the judges asked for, and the judges refused (judge -> one-line reason)."""

    found: tuple[Verdict, ...]
    refused: tuple[tuple[str, str], ...]

    def summary(self) -> pd.DataFrame:
        """One row per judge: the verdict's numbers (no signature, no line)."""
        frame = verdicts_frame(self.found)
        return frame.drop(columns=["signature", "line", "not_measured"]) if len(frame) else frame

    def per_annotator(self) -> pd.DataFrame:
        """One row per judge and excluded annotator."""
        return annotators_frame([v.alt for v in self.found])

    def csv(self) -> pd.DataFrame:
        """The export: one row per verdict with its line and signature."""
        return verdicts_frame(self.found)

    def json(self) -> str:
        """The export as JSON: the verdicts, each with its full Alt-Test (per annotator)."""
        return json.dumps([{**v.to_dict(), "alt_test": v.alt.to_dict()} for v in self.found], indent=2)


def rated(ratings: pd.DataFrame, fresh_decisions: pd.DataFrame) -> pd.DataFrame:
    """The data set's ratings with each annotator of the ledger as a human rater."""
    return with_humans(ratings, fresh_decisions)


def testable_dimensions(ratings: pd.DataFrame) -> list[str]:
    """Dimensions on which two or more human raters (kinds expert, human, author) rated one output."""
    if "rater_kind" not in ratings.columns:
        return []
    humans = ratings[ratings["rater_kind"].fillna("").isin(DEFAULT_ANNOTATOR_KINDS) & ratings["value"].notna()]
    counts = humans.groupby(["dimension", "item_id", "model"], sort=False)["rater"].nunique()
    return sorted(set(counts[counts >= 2].index.get_level_values("dimension").astype(str)))


def raters_of(ratings: pd.DataFrame, dimension: str) -> tuple[list[str], list[str]]:
    """``(humans, others)``: the raters of ``dimension`` of the annotator kinds, and every other rater."""
    part = ratings[(ratings["dimension"] == dimension) & ratings["value"].notna()]
    kinds = rater_kinds(part)
    humans = sorted(r for r, k in kinds.items() if k in DEFAULT_ANNOTATOR_KINDS)
    return humans, sorted(r for r in kinds if r not in humans)


@st.cache_resource(show_spinner=False, max_entries=16)
def _report(key: str, _ratings: pd.DataFrame, _outputs: pd.DataFrame, dimension: str, judges: tuple[str, ...],
            annotators: tuple[str, ...], scoring: str | None, epsilon: float | None, min_instances: int) -> Report:
    found, refused = [], []
    results = []
    for judge in judges:
        try:
            results.append(alt_test(_ratings, dimension, judge, annotators=list(annotators), scoring=scoring,
                                    epsilon=epsilon, min_instances=min_instances))
        except ValueError as exc:
            refused.append((judge, str(exc)))
    found = verdicts(_ratings, results, _outputs)
    return Report(tuple(found), tuple(refused))


def report(key: str, ratings: pd.DataFrame, outputs: pd.DataFrame, dimension: str, judges: Sequence[str],
           annotators: Sequence[str], scoring: str | None, epsilon: float | None, min_instances: int) -> Report:
    """The :class:`Report` of ``judges`` on ``dimension`` against ``annotators``, made once per ``key`` (the data
    set and ledger) and options. Shared: not to be modified."""
    return _report(key, ratings, outputs, dimension, tuple(judges), tuple(annotators), scoring, epsilon,
                   min_instances)
