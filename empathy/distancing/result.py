"""The detector's result types: spans with their rule, and per-text counts and densities."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: The three distancing dimensions; this order is the order of the LD density vector (paper, Eq. 4).
LABELS: tuple[str, str, str] = ("nominalization", "impersonal", "agentless")


@dataclass(frozen=True)
class DistancingSpan:
    """One highlighted stretch of text: character offsets into the original text, label and firing rule."""

    start: int
    end: int
    label: str
    rule: str
    text: str

    def to_json(self) -> dict[str, Any]:
        """The span as a plain JSON-ready dict."""
        return {"start": self.start, "end": self.end, "label": self.label, "rule": self.rule, "text": self.text}


@dataclass(frozen=True)
class DistancingResult:
    """Per-text distancing analysis: sentence count, counts per label and every span.

    ``counts`` always has the three keys of :data:`LABELS`; ``spans`` are sorted by start offset.
    """

    sentences: int
    counts: dict[str, int]
    spans: tuple[DistancingSpan, ...]

    def densities(self) -> tuple[float, float, float]:
        """Counts per sentence, in :data:`LABELS` order.

        A text without sentences (empty or whitespace only) has undefined densities: ``(nan, nan, nan)``,
        so that the LD metric treats it as missing rather than as "no distancing".
        """
        if self.sentences <= 0:
            return (math.nan, math.nan, math.nan)
        n = float(self.sentences)
        return (self.counts[LABELS[0]] / n, self.counts[LABELS[1]] / n, self.counts[LABELS[2]] / n)

    def to_json(self) -> dict[str, Any]:
        """``{"sentences", "counts": {...}, "spans": [{"start", "end", "label", "rule", "text"}]}``."""
        return {
            "sentences": self.sentences,
            "counts": {label: int(self.counts[label]) for label in LABELS},
            "spans": [span.to_json() for span in self.spans],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DistancingResult:
        """Rebuild a result from :meth:`to_json` output (used by the cache)."""
        try:
            spans = tuple(
                DistancingSpan(int(s["start"]), int(s["end"]), str(s["label"]), str(s["rule"]), str(s["text"]))
                for s in data["spans"]
            )
            counts = {label: int(data["counts"][label]) for label in LABELS}
            return cls(sentences=int(data["sentences"]), counts=counts, spans=spans)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"distancing result JSON is malformed: {exc!r}") from exc
