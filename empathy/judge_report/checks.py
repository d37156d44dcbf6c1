"""The judge checks that need the judge itself: repeatability, order effect and probes, planned and costed first.

:func:`plan_checks` counts the distinct requests each check sends (nothing is called), so that the cost is shown
and compared with the cap before a paid endpoint is called; :func:`run_checks` runs them and returns the
``judge-check`` object (JSON-ready: ``judge``, ``requests``, ``repeatability``, ``order``, ``probes``,
``failures`` and the signatures), which ``judge-report --checks`` folds into the verdict lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from empathy.judge_report import order, probes, repeatability

CHECKS: tuple[str, ...] = ("repeatability", "order", "probes")


@dataclass(frozen=True)
class CheckPlan:
    """Distinct requests per check (a request is one call unless retried; a cached answer costs none)."""

    repeatability: int
    order: int
    probes: int
    retries: int

    @property
    def total(self) -> int:
        """All requests."""
        return self.repeatability + self.order + self.probes

    def describe(self, judge: Any) -> str:
        """One line: the cost, before any call."""
        where = "offline (no call)" if judge.kind == "lexicon" else f"{judge.model} @ {judge.endpoint}"
        return (f"judge-check {judge.name} ({where}): {self.total} requests (repeatability {self.repeatability}, "
                f"order {self.order}, probes {self.probes}); each retried at most {self.retries} times")


def plan_checks(outputs: pd.DataFrame, judge: Any, chosen: Sequence[str], *, k: int, sample: pd.DataFrame
                ) -> CheckPlan:
    """The :class:`CheckPlan` of ``chosen`` checks (repeatability on ``sample``, ``k`` runs)."""
    from empathy.judges.run import planned_requests

    per_run = planned_requests(sample, judge, task_protocols="paper") if "repeatability" in chosen else 0
    return CheckPlan(per_run * k, order.order_requests(outputs, judge) if "order" in chosen else 0,
                     probes.probe_requests(outputs, judge) if "probes" in chosen else 0,
                     0 if judge.kind == "lexicon" else judge.max_retries)


def run_checks(outputs: pd.DataFrame, judge: Any, chosen: Sequence[str], *, k: int, sample: pd.DataFrame,
               sample_size: int | None, seed: int, cache: Any = None, secrets: Any = None,
               n_resamples: int = repeatability.DEFAULT_RESAMPLES) -> dict[str, Any]:
    """Run the ``chosen`` checks; return the ``judge-check`` object."""
    from empathy import __version__

    judge_signature = (f"empathy:{__version__}|judge[{judge.name}]:kind={judge.kind};model={judge.model or '-'};"
                       f"endpoint={judge.endpoint or '-'};T={judge.temperature:g};tasks=paper")
    found: dict[str, Any] = {"judge": judge.name, "checks": list(chosen)}
    if "repeatability" in chosen:
        runs = repeatability.rerun(sample, judge, k, secrets=secrets)
        found["repeatability"] = [r.to_dict() for r in repeatability.repeatability(runs, n_resamples=n_resamples,
                                                                                   seed=seed)]
        found["repeatability_signature"] = repeatability.repeatability_signature(judge_signature, k, sample_size,
                                                                                 seed, n_resamples)
    if "order" in chosen:
        if judge.kind == "lexicon":
            found["order"] = []  # the lexicon judge scores each text alone: no order to test
        else:
            first, second = order.run_orders(outputs, judge, cache=cache, secrets=secrets)
            found["order"] = [r.to_dict() for r in order.order_effects(first, second)]
        found["order_signature"] = order.order_signature(judge_signature)
    if "probes" in chosen:
        results = probes.run_probes(outputs, judge, cache=cache, secrets=secrets)
        found["probes"] = [{k: v for k, v in r.to_dict().items() if k != "failures"} for r in results]
        found["failures"] = probes.failures_frame(results).to_dict(orient="records")
        found["probes_signature"] = probes.probes_signature(judge_signature, probes.DEFAULT_SCORE_TOLERANCE)
    found["signature"] = "|".join(found[f"{name}_signature"] for name in chosen if f"{name}_signature" in found)
    return found
