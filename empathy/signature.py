"""Reproducibility signatures for results tables, in the style of sacrebleu's.

A signature is a ``|``-separated list of ``key:value`` fields, e.g.::

    empathy:0.1.0|ld:spacy:core_web_sm-3.8.0+rules-1|judge[lexicon]:lexicon-v1|seed:0|decisions:3|overridden_ratings:6

It names the package version, the spaCy model, version and rule set behind LD, each judge (rater) with the
signature stored beside its ratings (model and prompt hash for LLM judges), the random seed, and how many
human decisions the numbers include (``decisions``: one "(all judges)" decision is one) and how many judge
labels those decisions replaced (``overridden_ratings``). Two tables with the same signature were computed the
same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from empathy import __version__

_FORBIDDEN = str.maketrans({"|": "/", "\n": " ", "\r": " "})


def _clean(value: object) -> str:
    return str(value).translate(_FORBIDDEN).strip()


@dataclass(frozen=True)
class Signature:
    """What a results table depends on; ``str()`` gives the one-line signature."""

    version: str = __version__
    distancing: str | None = None
    judges: Mapping[str, str] = field(default_factory=dict)
    seed: int | None = None
    #: judge labels (ratings) replaced by human overrides; printed as ``overridden_ratings``
    overrides: int | None = None
    extra: Mapping[str, str] = field(default_factory=dict)
    #: distinct human decisions behind those overrides (:func:`empathy.labels.decisions.decision_count`)
    decisions: int | None = None

    def fields(self) -> list[tuple[str, str]]:
        items = [("empathy", self.version)]
        if self.distancing:
            items.append(("ld", self.distancing))
        for rater in sorted(self.judges):
            items.append((f"judge[{_clean(rater)}]", self.judges[rater] or "unsigned"))
        for key in sorted(self.extra):
            items.append((key, self.extra[key]))
        if self.seed is not None:
            items.append(("seed", str(self.seed)))
        if self.decisions is not None:
            items.append(("decisions", str(self.decisions)))
        if self.overrides is not None:
            items.append(("overridden_ratings", str(self.overrides)))
        return [(_clean(k), _clean(v)) for k, v in items]

    def __str__(self) -> str:
        return "|".join(f"{key}:{value}" for key, value in self.fields())


def judge_signatures(ratings: pd.DataFrame) -> dict[str, str]:
    """The signature of each rater, from the ``signature`` column of the ratings.

    A rater whose rows carry several different signatures (ratings from different runs mixed together) gets
    them all, joined with ``+``, so the mix is visible rather than hidden.
    """
    result: dict[str, str] = {}
    if ratings.empty:
        return result
    if "signature" not in ratings.columns:
        return {str(rater): "unsigned" for rater in sorted(ratings["rater"].unique())}
    rater_codes, rater_names = pd.factorize(ratings["rater"])
    signature_codes, signature_names = pd.factorize(ratings["signature"])
    cells = rater_codes.astype(np.int64) * (len(signature_names) + 1) + signature_codes + 1
    size = len(rater_names) * (len(signature_names) + 1)
    # few raters and signatures (3 x 3 at 200,000 outputs): the pairs found by counting, not by sorting 3 million
    # codes; a table of many (a signature per row) is sorted instead
    combined = np.flatnonzero(np.bincount(cells, minlength=size)) if size <= 4 * len(cells) else np.unique(cells)
    found: dict[str, set[str]] = {str(name): set() for name in rater_names}
    for code in combined:
        rater, signature = divmod(int(code), len(signature_names) + 1)
        if signature > 0 and signature_names[signature - 1]:
            found[str(rater_names[rater])].add(str(signature_names[signature - 1]))
    for rater in sorted(found):
        result[rater] = "+".join(sorted(found[rater])) if found[rater] else "unsigned"
    return result
