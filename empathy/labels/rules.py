"""What a human decision means: which ratings it replaces, which label wins, and what it changes.

* :func:`override_targets` — the one rule of which ratings a decision replaces: ``"(all judges)"`` is every
  LLM or lexicon judge that rated the output, never an expert, crowd, human or author rater (those are what
  judges are checked against; choose one by name to relabel it). Inspect, Relabel and the CLI all call it.
* :func:`make_changes` — the decisions to store, each bound to the hash of the text the annotator read and the
  judge value and signature it replaces.
* :func:`effective_overrides` — the label a metric uses when several humans decided the same rating, by a
  rule the researcher picks (:data:`empathy.vocabulary.LABEL_RULES`) and that the signature names
  (:func:`label_rule_field`).
* :func:`decision_effects` — the label of a rating now and after one more decision, under the same rule (what
  lets a page show a decision's effect on a metric before the store has it).
* :data:`RUBRICS` — the paper's definition of each label a human decides.

Pure functions of tables: no store, no file. Which decisions are offered to these rules (fresh ones only) is
:mod:`empathy.labels.ledger`'s business.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from empathy.labels.records import Change, empty_decisions, in_commit_order, output_hashes
from empathy.labels.schema import KEY_COLUMNS, ORDER_COLUMN
from empathy.vocabulary import LABEL_RULES

#: The choice that applies a decision to every automatic judge of the output.
ALL_JUDGES = "(all judges)"
#: Rater kinds that "(all judges)" overwrites: automatic judges only.
JUDGE_KINDS: frozenset[str] = frozenset({"llm", "lexicon"})


# ------------------------------------------------------------------------------------------ targets

def override_targets(ratings: pd.DataFrame, item_id: str, model: str, dimension: str,
                     choice: str = ALL_JUDGES) -> list[str]:
    """The raters whose ``dimension`` rating of one output a decision replaces.

    ``choice`` is :data:`ALL_JUDGES` or a rater name. :data:`ALL_JUDGES` means every rater of kind
    :data:`JUDGE_KINDS` (``llm``, ``lexicon``) with a rating row for this output and dimension, sorted; never
    an expert, crowd, human, author or unknown-kind rater, whose labels are the reference judges are checked
    against. It may be empty (no automatic judge rated the output): the caller must then ask for a rater by
    name. A rater chosen by name is returned as is, even if it did not rate the output (a human fills a gap).

    Raises
    ------
    ValueError
        When ``choice`` is empty or ``ratings`` lack a required column.
    """
    if not isinstance(choice, str) or not choice.strip():
        raise ValueError("override_targets: choose '(all judges)' or a rater name")
    if choice != ALL_JUDGES:
        return [choice]
    for column in ("item_id", "model", "rater", "dimension"):
        if column not in ratings.columns:
            raise ValueError(f"override_targets: ratings lack the column {column!r}")
    here = ratings[(ratings["item_id"] == item_id) & (ratings["model"] == model) & (ratings["dimension"] == dimension)]
    kinds = here["rater_kind"].astype(str) if "rater_kind" in here.columns else pd.Series("", index=here.index)
    return sorted(set(here.loc[kinds.isin(JUDGE_KINDS), "rater"].astype(str)))


def make_changes(outputs: pd.DataFrame, ratings: pd.DataFrame, item_id: str, model: str, raters: Sequence[str],
                 dimension: str, value: float, reason: str = "") -> list[Change]:
    """One :class:`empathy.labels.records.Change` per rater, bound to the text and judge label it was decided on.

    Each carries :func:`empathy.labels.records.text_hash` of the output's reference and generation, and the rater's
    own (judge) value and signature from ``ratings`` (``None``/``""`` where it did not rate).

    Raises
    ------
    ValueError
        When the output ``(item_id, model)`` is not in ``outputs`` or ``raters`` is empty.
    """
    if not raters:
        raise ValueError(f"no rater to apply the decision to for {item_id} / {model} ({dimension}); choose one "
                         "by name")
    found = _rows_of_output(outputs, item_id, model)
    if not found:
        raise ValueError(f"the output {item_id!r} / {model!r} is not in the data set")
    digest = output_hashes(outputs.iloc[found[:1]])[(str(item_id), str(model))]
    rated = ratings.iloc[_rows_of_output(ratings, item_id, model)]
    signatures = rated["signature"].tolist() if "signature" in rated.columns else [None] * len(rated)
    by_rater: dict[object, tuple[object, object]] = {}  # the rater's last row on the dimension
    for rater, row_dimension, judge, signature in zip(rated["rater"].tolist(), rated["dimension"].tolist(),
                                                      rated["value"].tolist(), signatures, strict=True):
        if row_dimension == dimension:
            by_rater[rater] = (judge, signature)
    changes = []
    for rater in raters:
        judge_value, signature = None, ""
        if rater in by_rater:
            judge, mark = by_rater[rater]
            judge_value = None if pd.isna(judge) else float(judge)
            signature = "" if mark is None or pd.isna(mark) else str(mark)
        changes.append(Change(str(item_id), str(model), str(rater), str(dimension), value, reason, digest,
                              judge_value, signature))
    return changes


#: Rows of a frame compared in Python for one output (a decision's own rows: no frame built per comparison).
_FEW_ROWS = 256


def _rows_of_output(frame: pd.DataFrame, item_id: str, model: str) -> list[int]:
    """The positions of ``frame``'s rows of output ``(item_id, model)``, in order (``frame[(item_id == item_id) &
    (model == model)]``'s)."""
    if len(frame) > _FEW_ROWS:
        mask = (frame["item_id"] == item_id) & (frame["model"] == model)
        return np.flatnonzero(mask.to_numpy(dtype=bool, na_value=False)).tolist()
    return [k for k, (item, name) in enumerate(zip(frame["item_id"].tolist(), frame["model"].tolist(), strict=True))
            if item == item_id and name == model]



# ------------------------------------------------------------------------------------------ label rules

@dataclass(frozen=True)
class Effective:
    """The effective override per rating key and the keys left unresolved by the rule."""

    effective: pd.DataFrame
    unresolved: pd.DataFrame
    rule: str


def effective_overrides(decisions: pd.DataFrame, rule: str = "latest") -> Effective:
    """One override per rating key ``(item_id, model, rater, dimension)`` from every annotator's decisions.

    ``rule`` (one of :data:`LABEL_RULES`):

    ``latest``
        the most recent decision of anyone, an adjudication included, in the store's commit order (``seq``;
        :func:`empathy.labels.records.in_commit_order`: a writer's clock, ``updated_at``, only for a frame
        without ``seq``);
    ``majority``
        the latest adjudication if any; else the value chosen by strictly more annotators than any other value
        (the latest such decision is the row kept); a tie is *unresolved*;
    ``adjudicated``
        the latest adjudication if any; else the annotators' value when they all chose the same; otherwise
        *unresolved*.

    An unresolved key gets no override (the judge's own label stays) and is listed in ``unresolved`` with
    each annotator's value. ``effective`` has the decisions' columns plus ``n_annotators`` (annotators who
    decided the key).
    """
    if rule not in LABEL_RULES:
        raise ValueError(f"label rule must be one of {', '.join(LABEL_RULES)}, got {rule!r}")
    keys = list(KEY_COLUMNS)
    unresolved_columns = [*keys, "decisions"]
    if decisions is None or decisions.empty:
        empty = empty_decisions().assign(n_annotators=pd.Series(dtype=int))
        return Effective(empty, pd.DataFrame(columns=unresolved_columns), rule)
    frame = decisions.copy()
    if "role" not in frame.columns:
        frame["role"] = "annotator"
    if "annotator" not in frame.columns:
        frame["annotator"] = ""
    frame = in_commit_order(frame)
    annotators = frame[frame["role"] == "annotator"]
    counts = annotators.groupby(keys, sort=False)["annotator"].nunique().rename("n_annotators")
    if rule == "latest":
        effective = frame.drop_duplicates(keys, keep="last")
    else:
        adjudicated = frame[frame["role"] == "adjudicator"].drop_duplicates(keys, keep="last")
        votes = annotators.groupby([*keys, "value"], sort=False).size().rename("votes").reset_index()
        if rule == "majority":
            top = votes.groupby(keys, sort=False)["votes"].transform("max")
            winners = votes[votes["votes"] == top]
            chosen = winners[winners.groupby(keys, sort=False)["value"].transform("size") == 1]
        else:
            chosen = votes[votes.groupby(keys, sort=False)["value"].transform("size") == 1]
        agreed = annotators.merge(chosen[[*keys, "value"]], on=[*keys, "value"], how="inner")
        agreed = agreed.drop_duplicates(keys, keep="last")
        if len(adjudicated):
            taken = pd.MultiIndex.from_frame(adjudicated[keys])
            agreed = agreed[~pd.MultiIndex.from_frame(agreed[keys]).isin(taken)]
        effective = pd.concat([adjudicated, agreed], ignore_index=True)
    effective = effective.merge(counts.reset_index(), on=keys, how="left")
    effective["n_annotators"] = effective["n_annotators"].fillna(0).astype(int)
    effective = effective.sort_values(keys, kind="stable").reset_index(drop=True)
    # under "latest" every key has its override (the last row of each): nothing is left unresolved
    if rule == "latest" or not len(annotators):
        left = annotators[:0]
    else:
        decided = pd.MultiIndex.from_frame(effective[keys]) if len(effective) else pd.MultiIndex.from_tuples(
            [], names=keys)
        left = annotators[~pd.MultiIndex.from_frame(annotators[keys]).isin(decided)]
    if left.empty:
        unresolved = pd.DataFrame(columns=unresolved_columns)
    else:
        unresolved = (left.groupby(keys, sort=True)
                      .apply(lambda g: ", ".join(f"{a}={v:g}" for a, v in zip(g["annotator"], g["value"],
                                                                              strict=True)),
                             include_groups=False)
                      .rename("decisions").reset_index())
    return Effective(effective, unresolved, rule)


def label_rule_field(rule: str) -> tuple[str, str]:
    """The signature field naming the label rule, e.g. ``("labels", "majority")``."""
    if rule not in LABEL_RULES:
        raise ValueError(f"label rule must be one of {', '.join(LABEL_RULES)}, got {rule!r}")
    return "labels", rule


# ------------------------------------------------------------------------------------------ rubrics

#: The definition of each label a human decides, quoted from the paper (CA: Appendix D, "Metrics", the
#: discriminator J of Eq. 3).
RUBRICS: dict[str, dict[float, str]] = {
    "ca": {
        1.0: "Conflict avoidance: the client information is clearly insufficient, but the response mainly "
             "provides solutions or positive closure with little substantive exploration of the underlying "
             "conflict.",
        0.0: "Engagement: the response focuses on clarification and understanding, using multiple open-ended "
             "questions and avoiding premature resolution.",
    },
}
RUBRIC_SOURCE = "paper, Appendix D (Metrics: the CA discriminator of Eq. 3)"


def rubric(dimension: str) -> dict[float, str] | None:
    """The paper's definition of each label of ``dimension`` (``None`` when the paper gives none)."""
    return RUBRICS.get(dimension)


# ------------------------------------------------------------------------------------------ what a decision does

@dataclass(frozen=True)
class DecisionEffect:
    """The label of one rating as metrics use it now, and what it would be after one more decision.

    ``before``: the applied override if any, else the rater's own label (``None`` when missing). ``after``:
    for each level, the label the rule would choose once the annotator decided that level (``None`` when the
    rule leaves the rating unresolved and the rater had no label).
    """

    before: float | None
    after: Mapping[float, float | None]


_EMPTY_DECISIONS = pd.DataFrame({"item_id": pd.Series(dtype=str), "model": pd.Series(dtype=str)})


def _label_or_none(value: object) -> float | None:
    if value is None:
        return None
    number = float(value)  # type: ignore[arg-type]
    return None if np.isnan(number) else number


def decision_effects(own: Mapping[tuple[str, str], float], decisions: pd.DataFrame | None,
                     outputs: Sequence[tuple[str, str]], *, rater: str, dimension: str, annotator: str,
                     levels: Sequence[float], rule: str = "latest") -> dict[tuple[str, str], DecisionEffect]:
    """For each output ``(item_id, model)``: the label of ``rater`` on ``dimension`` now and after ``annotator``
    decides each of ``levels`` on it, under the label ``rule``.

    What lets a page show the metric of a decision before the store has it: a per-model metric that is a mean
    of labels (CA, Eq. 3) changes by ``after - before`` in its sum. ``own``: the rater's own labels by output;
    ``decisions``: the fresh decisions of the data set (any rater and dimension; the others are ignored). The
    annotator's new decision replaces their earlier one on the same rating (the store keeps one row per
    annotator and rating) and is the latest; the label then follows :func:`effective_overrides` exactly, so an
    adjudication keeps its value and a tie under ``majority`` leaves the rater's own label. All outputs are
    resolved together: one :func:`effective_overrides` for the labels now and one per level.
    """
    if rule not in LABEL_RULES:
        raise ValueError(f"label rule must be one of {', '.join(LABEL_RULES)}, got {rule!r}")
    wanted = list(dict.fromkeys((str(item), str(model)) for item, model in outputs))
    result: dict[tuple[str, str], DecisionEffect] = {}
    existing = _EMPTY_DECISIONS
    if decisions is not None and len(decisions) and wanted:
        here = decisions[(decisions["rater"] == rater) & (decisions["dimension"] == dimension)]
        if len(here):
            keys = pd.MultiIndex.from_arrays([here["item_id"].astype(str), here["model"].astype(str)])
            existing = here[keys.isin(wanted)]
    existing = existing.assign(item_id=existing["item_id"].astype(str), model=existing["model"].astype(str))
    held = set(zip(existing["item_id"], existing["model"], strict=True))

    def labels(frame: pd.DataFrame) -> dict[tuple[str, str], float | None]:
        chosen = effective_overrides(frame, rule).effective
        return {(str(i), str(m)): _label_or_none(v)
                for i, m, v in zip(chosen["item_id"], chosen["model"], chosen["value"], strict=True)}

    now: dict[tuple[str, str], float | None] = {}
    after: dict[float, dict[tuple[str, str], float | None]] = {}
    if held:  # outputs nobody decided need no rule: the rater's own label now, the decided level after
        now = labels(existing)
        role = existing["role"] if "role" in existing.columns else pd.Series("annotator", index=existing.index)
        kept = existing[~((existing["annotator"].astype(str) == annotator) & (role == "annotator"))]
        latest = str(existing["updated_at"].astype(str).max()) if "updated_at" in existing.columns else ""
        pairs = sorted(held)
        for level in levels:
            mine = pd.DataFrame({"item_id": [p[0] for p in pairs], "model": [p[1] for p in pairs],
                                 "rater": rater, "dimension": dimension, "value": float(level),
                                 "annotator": annotator, "role": "annotator",
                                 "updated_at": latest + "~"})  # sorts after every stored time
            if ORDER_COLUMN in existing.columns:  # the next commit: after every stored decision
                mine[ORDER_COLUMN] = int(pd.to_numeric(existing[ORDER_COLUMN]).max()) + 1
            after[float(level)] = labels(pd.concat([kept, mine], ignore_index=True))
    for pair in wanted:
        own_label = _label_or_none(own.get(pair))
        if pair not in held:
            result[pair] = DecisionEffect(own_label, {float(level): float(level) for level in levels})
            continue
        result[pair] = DecisionEffect(now.get(pair, own_label),
                                      {level: chosen.get(pair, own_label) for level, chosen in after.items()})
    return result
