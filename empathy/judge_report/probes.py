"""Counterfactual probes per mechanism (CheckList, Ribeiro et al. ACL 2020): does the judge move when it must, and
only then?

Each probe pairs an edit of the generation (:mod:`empathy.judge_report.edits`) with a dimension and an
expectation:

* **invariance** (names swapped, the final full stop toggled, a neutral sentence appended): the judge's
  ``e_gen``, ``u_gen`` and ``ca`` must not change (by more than the tolerance);
* **directional**: affect words attenuated -> ``e_gen`` must not rise; a solution-giving sentence appended to a
  counseling response -> ``ca`` must not fall; graphic detail appended -> ``u_gen`` must not fall; a clause made
  agentless -> the agentless density of the distancing detector (the spaCy LD detector, not the judge) must
  rise.

A probe's **violation rate** is over the outputs it applies to (an edit that finds nothing to edit, a rating missing
on either side, or a row without the dimension is not counted), with a 95 % interval whose unit is the item
(:func:`violation_interval`): a judge unsure of an item is unsure of every model's output for it, and a Wilson
interval over outputs then undercovers (validation/probe_coverage.py). A directional probe also counts the outputs
that *could* move the expected way (not at the scale's end) and those that did: a judge blind to the edit never
violates "must not fall" but never moves either. A probe **fails** when any output violates it, or, directional,
when it moved none of the outputs that could move (CheckList's failure rate > 0; the rate and its interval say how
often). Failing outputs are listed with both values.

The cost of a probe run against an LLM judge is :func:`probe_requests` distinct requests, known before any call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from empathy.judge_report import edits

#: Tolerance on a unit-interval score (``e_gen``) below which a change is noise; counts and labels: exact.
DEFAULT_SCORE_TOLERANCE = 0.05
CONFIDENCE = 0.95
#: The detector's dimension of the agentless probe (not a judge's rating).
AGENTLESS = "ld_agentless"
#: The model name of an edited copy of an output: ``MODEL [probe:EDIT]`` (never a model of the data).
EDITED_MODEL = "{model} [probe:{edit}]"
COUNSELING_TASK = "counseling"
PROBE_COLUMNS: tuple[str, ...] = ("probe", "kind", "edit", "dimension", "expectation", "n_applicable",
                                  "n_violations", "violation_rate", "rate_low", "rate_high", "n_movable", "n_moved",
                                  "passed")
FAILURE_COLUMNS: tuple[str, ...] = ("probe", "item_id", "model", "dimension", "original", "edited", "why")


@dataclass(frozen=True)
class Probe:
    """One probe: an edit of the generation, the dimension it checks and what must happen to it.

    ``expectation``: ``same`` (invariance), ``not-up`` or ``not-down`` (directional; ``up`` for the detector's
    agentless density, which must strictly rise). ``task``: the only task whose rows it edits (``""``: all).
    """

    edit: str
    dimension: str
    expectation: str
    task: str = ""

    @property
    def name(self) -> str:
        """``edit:dimension``, e.g. ``names:ca``."""
        return f"{self.edit}:{self.dimension}"

    @property
    def kind(self) -> str:
        """``invariance`` or ``directional``."""
        return "invariance" if self.expectation == "same" else "directional"


#: Edit name -> the edit of a text (``make_agentless`` takes the spaCy model too: :func:`edit_function`).
EDITS: dict[str, Callable[[str], str | None]] = {
    "names": edits.swap_names, "punctuation": edits.toggle_final_period,
    "neutral-sentence": edits.add_neutral_sentence, "attenuate-affect": edits.attenuate_affect,
    "solution-sentence": edits.add_solution_sentence, "graphic-detail": edits.add_graphic_detail,
}
INVARIANCE_EDITS: tuple[str, ...] = ("names", "punctuation", "neutral-sentence")
JUDGE_DIMENSIONS: tuple[str, ...] = ("e_gen", "u_gen", "ca")
#: Every probe, invariance first.
PROBES: tuple[Probe, ...] = (
    *(Probe(edit, dimension, "same") for edit in INVARIANCE_EDITS for dimension in JUDGE_DIMENSIONS),
    Probe("attenuate-affect", "e_gen", "not-up"),
    Probe("solution-sentence", "ca", "not-down", COUNSELING_TASK),
    Probe("graphic-detail", "u_gen", "not-down"),
    Probe("agentless", AGENTLESS, "up"),
)
#: Fewest and most a dimension can be (the end a directional probe cannot pass).
SCALE_ENDS: dict[str, tuple[float, float]] = {"e_gen": (0.0, 1.0), "ca": (0.0, 1.0), "u_gen": (0.0, math.inf),
                                             AGENTLESS: (0.0, math.inf)}


@dataclass(frozen=True)
class ProbeResult:
    """The outcome of one probe (see the module docstring for the counts)."""

    probe: Probe
    n_applicable: int
    n_violations: int
    rate_low: float | None
    rate_high: float | None
    n_movable: int
    n_moved: int
    failures: pd.DataFrame = field(repr=False, compare=False, default_factory=pd.DataFrame)

    @property
    def violation_rate(self) -> float | None:
        """Violations over applicable outputs (``None`` when none applied)."""
        return self.n_violations / self.n_applicable if self.n_applicable else None

    @property
    def passed(self) -> bool | None:
        """No violation, and (directional) at least one movable output moved; ``None`` when none applied."""
        if not self.n_applicable:
            return None
        inert = self.probe.kind == "directional" and self.n_movable > 0 and self.n_moved == 0
        return self.n_violations == 0 and not inert

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the :data:`PROBE_COLUMNS` and the failing outputs."""
        probe = self.probe
        return {"probe": probe.name, "kind": probe.kind, "edit": probe.edit, "dimension": probe.dimension,
                "expectation": probe.expectation, "n_applicable": self.n_applicable,
                "n_violations": self.n_violations, "violation_rate": self.violation_rate,
                "rate_low": self.rate_low, "rate_high": self.rate_high, "n_movable": self.n_movable,
                "n_moved": self.n_moved, "passed": self.passed,
                "failures": self.failures.to_dict(orient="records")}


def wilson(events: int, n: int, confidence: float = CONFIDENCE) -> tuple[float | None, float | None]:
    """Wilson score interval of ``events / n`` (``(None, None)`` when ``n`` is 0)."""
    from empathy.slice_tests import wilson_interval

    if n <= 0:
        return None, None
    low, high = wilson_interval([events], [n], confidence)
    return float(low[0]), float(high[0])


def violation_interval(violated: ArrayLike, items: ArrayLike, confidence: float = CONFIDENCE
                       ) -> tuple[float | None, float | None]:
    """The interval of the share of ``violated`` outputs, the item being the unit: the cluster-aware Wilson
    interval of :func:`empathy.slice_tests.cluster_rate_interval` (Wilson's over outputs when each item has one
    output, at the items' effective size). ``(None, None)`` when there are no outputs."""
    from empathy.slice_tests import cluster_rate_interval

    flags = np.asarray(violated, dtype=float)
    if not len(flags):
        return None, None
    low, high = cluster_rate_interval(np.zeros(len(flags), dtype=np.int64), flags, np.ones(len(flags)),
                                      np.asarray(items, dtype=object), confidence=confidence)
    return float(low[0]), float(high[0])


def edited_outputs(outputs: pd.DataFrame, probes: Sequence[Probe] = PROBES) -> pd.DataFrame:
    """One edited copy of each output per judge edit the probes use (``model`` renamed :data:`EDITED_MODEL`,
    columns ``edit`` and ``source_model`` added); outputs an edit does not apply to are left out. The agentless
    edit (the detector's, not the judge's) is made by :func:`agentless_results`, not here."""
    wanted = list(dict.fromkeys(p.edit for p in probes if p.edit in EDITS))
    task = outputs["task"].astype(str) if "task" in outputs.columns else pd.Series("", index=outputs.index)
    rows = []
    for edit in wanted:
        tasks = {p.task for p in probes if p.edit == edit}
        for position, record in enumerate(outputs.itertuples(index=False)):
            row_task = task.iloc[position]
            if "" not in tasks and row_task not in tasks:
                continue
            generation = record.generation if isinstance(record.generation, str) else ""
            changed = EDITS[edit](generation) if generation.strip() else None
            if changed is None:
                continue
            row = record._asdict()
            row.update(generation=changed, edit=edit, source_model=str(record.model),
                       model=EDITED_MODEL.format(model=record.model, edit=edit))
            rows.append(row)
    columns = [*outputs.columns, "edit", "source_model"]
    return pd.DataFrame(rows, columns=list(dict.fromkeys(columns)))


def probe_requests(outputs: pd.DataFrame, judge: Any, probes: Sequence[Probe] = PROBES, *,
                   task_protocols: Any = "paper") -> int:
    """Distinct requests a probe run sends to ``judge`` (originals and edited copies; 0 for the lexicon judge)."""
    from empathy.judges.run import planned_requests

    edited = edited_outputs(outputs, probes)
    both = pd.concat([outputs, edited[outputs.columns]], ignore_index=True)
    return planned_requests(both, judge, task_protocols=task_protocols)


def _moved(expectation: str, before: float, after: float, tolerance: float) -> tuple[bool, bool, bool]:
    """(violated, could move the expected way, moved the expected way)."""
    if expectation == "same":
        return abs(after - before) > tolerance, False, False
    if expectation == "not-up":
        return after - before > tolerance, before > 0, after < before
    if expectation == "not-down":
        return before - after > tolerance, True, after > before
    return after <= before, True, after > before  # "up": must strictly rise


def compare(probe: Probe, pairs: pd.DataFrame, tolerance: float) -> ProbeResult:
    """A :class:`ProbeResult` from ``pairs`` (``item_id, model, original, edited``; rows with a missing side are
    not applicable)."""
    usable = pairs.dropna(subset=["original", "edited"])
    top = SCALE_ENDS.get(probe.dimension, (0.0, math.inf))[1]
    violations, movable, moved = 0, 0, 0
    flags: list[bool] = []
    failing = []
    for row in usable.itertuples(index=False):
        before, after = float(row.original), float(row.edited)
        violated, can, did = _moved(probe.expectation, before, after, tolerance)
        if probe.expectation == "not-down":
            can = before < top
        violations += violated
        flags.append(violated)
        movable += can
        moved += can and did
        if violated:
            why = {"same": "changed", "not-up": "rose", "not-down": "fell", "up": "did not rise"}[probe.expectation]
            failing.append({"probe": probe.name, "item_id": row.item_id, "model": row.model,
                            "dimension": probe.dimension, "original": before, "edited": after, "why": why})
    low, high = violation_interval(flags, usable["item_id"].astype(str).to_numpy())
    return ProbeResult(probe, len(usable), violations, low, high, movable, moved,
                       pd.DataFrame(failing, columns=list(FAILURE_COLUMNS)))


def _tolerance(dimension: str, score_tolerance: float) -> float:
    return score_tolerance if dimension == "e_gen" else 0.0


def judge_probe_results(original: pd.DataFrame, edited_ratings: pd.DataFrame, edited: pd.DataFrame,
                        probes: Sequence[Probe] = PROBES, *,
                        score_tolerance: float = DEFAULT_SCORE_TOLERANCE) -> list[ProbeResult]:
    """The judge probes' results from the judge's ratings of the originals and of the edited copies."""
    value = original.set_index(["item_id", "model", "dimension"])["value"]
    value = value[~value.index.duplicated(keep="last")]
    again = edited_ratings.set_index(["item_id", "model", "dimension"])["value"]
    again = again[~again.index.duplicated(keep="last")]
    found = []
    for probe in probes:
        if probe.edit not in EDITS:
            continue
        rows = edited[edited["edit"] == probe.edit]
        keys_before = list(zip(rows["item_id"].astype(str), rows["source_model"].astype(str),
                               [probe.dimension] * len(rows), strict=True))
        keys_after = list(zip(rows["item_id"].astype(str), rows["model"].astype(str),
                              [probe.dimension] * len(rows), strict=True))
        pairs = pd.DataFrame({"item_id": rows["item_id"].astype(str).to_numpy(),
                              "model": rows["source_model"].astype(str).to_numpy(),
                              "original": value.reindex(keys_before).to_numpy(dtype=float) if keys_before else [],
                              "edited": again.reindex(keys_after).to_numpy(dtype=float) if keys_after else []})
        found.append(compare(probe, pairs, _tolerance(probe.dimension, score_tolerance)))
    return found


def agentless_results(outputs: pd.DataFrame, *, nlp: Any = None, cache: Any = False) -> ProbeResult:
    """The agentless probe on the distancing detector: each output's generation with the ``by`` agent of its first
    agented passive removed must have a higher agentless density (agentless constructions per sentence)."""
    from empathy.distancing import analyze, load_model

    probe = next(p for p in PROBES if p.edit == "agentless")
    model = nlp if nlp is not None else load_model()
    rows = []
    for record in outputs.itertuples(index=False):
        text = record.generation if isinstance(record.generation, str) else ""
        changed = edits.make_agentless(text, model) if text.strip() else None
        if changed is not None:
            rows.append((str(record.item_id), str(record.model), text, changed))
    if not rows:
        return compare(probe, pd.DataFrame(columns=["item_id", "model", "original", "edited"]), 0.0)
    results = analyze([t for r in rows for t in (r[2], r[3])], cache=cache)
    densities = [result.densities()[2] for result in results]
    pairs = pd.DataFrame({"item_id": [r[0] for r in rows], "model": [r[1] for r in rows],
                          "original": densities[0::2], "edited": densities[1::2]})
    return compare(probe, pairs, 0.0)


def run_probes(outputs: pd.DataFrame, judge: Any, probes: Sequence[Probe] = PROBES, *, cache: Any = None,
               task_protocols: Any = "paper", score_tolerance: float = DEFAULT_SCORE_TOLERANCE,
               secrets: Any = None, nlp: Any = None) -> list[ProbeResult]:
    """Every probe of ``probes`` against ``judge`` (a :class:`empathy.judges.config.JudgeConfig`): one judge run
    over the originals and their edited copies (cost: :func:`probe_requests`), then the detector's agentless
    probe. The caller checks the cost against its cap before calling this."""
    from empathy.judges.run import run_judge

    edited = edited_outputs(outputs, probes)
    both = pd.concat([outputs, edited[outputs.columns]], ignore_index=True)
    ratings = run_judge(both, judge, cache=cache, task_protocols=task_protocols, secrets=secrets).ratings
    ratings = ratings.astype({"item_id": str, "model": str})
    originals = ratings[~ratings["model"].str.contains(" [probe:", regex=False)]
    found = judge_probe_results(originals, ratings, edited, probes, score_tolerance=score_tolerance)
    if any(p.edit == "agentless" for p in probes):
        found.append(agentless_results(outputs, nlp=nlp))
    return found


def probes_frame(results: Sequence[ProbeResult]) -> pd.DataFrame:
    """One row per probe (:data:`PROBE_COLUMNS`)."""
    rows = [{k: v for k, v in r.to_dict().items() if k != "failures"} for r in results]
    return pd.DataFrame(rows, columns=list(PROBE_COLUMNS))


def failures_frame(results: Sequence[ProbeResult]) -> pd.DataFrame:
    """Every failing output of every probe (:data:`FAILURE_COLUMNS`)."""
    parts = [r.failures for r in results if len(r.failures)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(FAILURE_COLUMNS))


def probes_signature(judge_signature: str, score_tolerance: float) -> str:
    """The probes' part of a signature: the edits' texts, the tolerance, the interval, the failure rule."""
    import hashlib

    texts = "\x00".join([edits.NEUTRAL_SENTENCE, edits.SOLUTION_SENTENCE, edits.GRAPHIC_SENTENCE,
                         repr(edits.NAME_PAIRS), repr(sorted(edits.ATTENUATIONS.items())), repr(edits.INTENSIFIERS),
                         repr(edits.NOT_INTENSIFIED)])
    digest = hashlib.sha256(texts.encode()).hexdigest()[:10]
    return (f"{judge_signature}|probes:checklist(edits#{digest})|tolerance:e_gen={score_tolerance:g},others=0|"
            f"interval:cluster-wilson-95(item)|fail:any-violation-or-inert")


def summary(results: Sequence[ProbeResult]) -> tuple[int, int]:
    """(failed, tested): probes that failed, of those that applied to at least one output."""
    tested = [r for r in results if r.passed is not None]
    return sum(not r.passed for r in tested), len(tested)


__all__ = ["AGENTLESS", "DEFAULT_SCORE_TOLERANCE", "PROBES", "Probe", "ProbeResult", "agentless_results",
           "compare", "edited_outputs", "failures_frame", "judge_probe_results", "probe_requests", "probes_frame",
           "probes_signature", "run_probes", "summary", "violation_interval", "wilson"]
