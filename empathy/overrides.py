"""Compatibility re-exports: the label rules and the ledger moved to :mod:`empathy.labels` (issue 22).

Nothing is defined here. Import from the new modules instead: targets, label rules, decision effects and
rubrics from :mod:`empathy.labels.rules`; ledger status, :class:`Ledger`, annotator ratings, adjudication and
re-run classification from :mod:`empathy.labels.ledger`. ``human_agreement`` moved above the labels layer to
:func:`empathy.review.human_agreement` and is not re-exported here (the labels layer imports no analysis
module). Kept while branches written against the old path are merged; new code must not import it.
"""

from __future__ import annotations

from empathy.labels.ledger import (
    Ledger,
    LedgerStatus,
    RerunLedger,
    adjudication_list,
    annotator_ratings,
    apply_ledger,
    classify_rerun,
    ledger_for_files,
    ledger_from_decisions,
    ledger_status,
    open_ledger,
    rerun_against_ledger,
)
from empathy.labels.rules import (
    ALL_JUDGES,
    JUDGE_KINDS,
    RUBRIC_SOURCE,
    RUBRICS,
    DecisionEffect,
    Effective,
    decision_effects,
    effective_overrides,
    label_rule_field,
    make_changes,
    override_targets,
    rubric,
)

__all__ = [
    "ALL_JUDGES",
    "DecisionEffect",
    "Effective",
    "JUDGE_KINDS",
    "Ledger",
    "LedgerStatus",
    "RUBRICS",
    "RUBRIC_SOURCE",
    "RerunLedger",
    "adjudication_list",
    "annotator_ratings",
    "apply_ledger",
    "classify_rerun",
    "decision_effects",
    "effective_overrides",
    "label_rule_field",
    "ledger_for_files",
    "ledger_from_decisions",
    "ledger_status",
    "make_changes",
    "open_ledger",
    "override_targets",
    "rerun_against_ledger",
    "rubric",
]
