"""What the ledger of human overrides means for the data now loaded: targets, label rules, status, re-runs.

:mod:`empathy.store` keeps every annotator's decision durably; this module decides what they mean:

* :func:`override_targets` — the one rule of which ratings a decision replaces: ``"(all judges)"`` is every
  LLM or lexicon judge that rated the output, never an expert, crowd, human or author rater (those are what
  judges are checked against; choose one by name to relabel it). Inspect, Relabel and the CLI all call it.
* :func:`make_changes` — the decisions to store, each bound to the hash of the text the annotator read and the
  judge value and signature it replaces.
* :func:`ledger_status` / :func:`open_ledger` — each decision is *fresh* (its text is unchanged), *stale* (the
  output's reference or generation changed since: listed, not applied until confirmed) or *orphaned* (the
  output is gone: kept, listed, not applied).
* :func:`effective_overrides` — the label a metric uses when several humans decided the same rating, by a
  rule the researcher picks (:data:`LABEL_RULES`) and that the signature names (:func:`label_rule_field`).
* :func:`annotator_ratings`, :func:`human_agreement`, :func:`adjudication_list` — each annotator as their own
  rater (kind ``human``), human-human agreement where two or more decided, the disagreements to adjudicate.
* :func:`classify_rerun` — a judge re-run meets the ledger: every decision is *confirmed* (the new judge now
  agrees with the human), *still disputed*, *stale* or *orphaned*.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from empathy.agreement import krippendorff_by_dimension, pairwise_agreement
from empathy.store import (
    DECISION_COLUMNS,
    KEY_COLUMNS,
    Change,
    OverrideStore,
    apply_overrides,
    dataset_id,
    dataset_name,
    output_hashes,
)
from empathy.vocabulary import LABEL_RULES

#: The choice that applies a decision to every automatic judge of the output.
ALL_JUDGES = "(all judges)"
#: Rater kinds that "(all judges)" overwrites: automatic judges only.
JUDGE_KINDS: frozenset[str] = frozenset({"llm", "lexicon"})
_ITEM_KEY = ["item_id", "model", "dimension"]


def _empty_decisions() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=float if c in ("value", "judge_value") else object)
                         for c in DECISION_COLUMNS})


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
    """One :class:`empathy.store.Change` per rater, bound to the text and judge label it was decided on.

    Each carries :func:`empathy.store.text_hash` of the output's reference and generation, and the rater's
    own (judge) value and signature from ``ratings`` (``None``/``""`` where it did not rate).

    Raises
    ------
    ValueError
        When the output ``(item_id, model)`` is not in ``outputs`` or ``raters`` is empty.
    """
    if not raters:
        raise ValueError(f"no rater to apply the decision to for {item_id} / {model} ({dimension}); choose one "
                         "by name")
    row = outputs[(outputs["item_id"] == item_id) & (outputs["model"] == model)]
    if row.empty:
        raise ValueError(f"the output {item_id!r} / {model!r} is not in the data set")
    digest = output_hashes(row.iloc[:1])[(str(item_id), str(model))]
    here = ratings[(ratings["item_id"] == item_id) & (ratings["model"] == model) & (ratings["dimension"] == dimension)]
    by_rater = here.drop_duplicates("rater", keep="last").set_index("rater")
    changes = []
    for rater in raters:
        judge_value, signature = None, ""
        if rater in by_rater.index:
            found = by_rater.loc[rater]
            judge_value = None if pd.isna(found["value"]) else float(found["value"])
            signature = str(found["signature"]) if "signature" in by_rater.columns and pd.notna(
                found["signature"]) else ""
        changes.append(Change(str(item_id), str(model), str(rater), str(dimension), value, reason, digest,
                              judge_value, signature))
    return changes


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
        the most recent decision (by ``updated_at``) of anyone, an adjudication included;
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
        empty = _empty_decisions().assign(n_annotators=pd.Series(dtype=int))
        return Effective(empty, pd.DataFrame(columns=unresolved_columns), rule)
    frame = decisions.copy()
    if "role" not in frame.columns:
        frame["role"] = "annotator"
    if "annotator" not in frame.columns:
        frame["annotator"] = ""
    if "updated_at" in frame.columns:
        frame = frame.sort_values("updated_at", kind="stable")
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
    decided = pd.MultiIndex.from_frame(effective[keys]) if len(effective) else pd.MultiIndex.from_tuples(
        [], names=keys)
    left = annotators[~pd.MultiIndex.from_frame(annotators[keys]).isin(decided)] if len(annotators) else annotators
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


# ------------------------------------------------------------------------------------------ status

@dataclass(frozen=True)
class LedgerStatus:
    """Every decision of a data set sorted by whether it still applies to the loaded outputs."""

    fresh: pd.DataFrame
    stale: pd.DataFrame
    orphaned: pd.DataFrame

    @property
    def counts(self) -> dict[str, int]:
        return {"fresh": len(self.fresh), "stale": len(self.stale), "orphaned": len(self.orphaned)}


def ledger_status(decisions: pd.DataFrame, outputs: pd.DataFrame,
                  hashes: Mapping[tuple[str, str], str] | None = None) -> LedgerStatus:
    """Split decisions into fresh, stale (text changed, or no text hash recorded) and orphaned (output gone).

    A decision is tied to :func:`empathy.store.text_hash` of the reference and generation it was made on; a
    decision stored without a hash (a version 1 ledger imported without the data) counts as stale, so it is
    applied only after someone confirms it on the current text. ``hashes``: the outputs'
    :func:`empathy.store.output_hashes` when already computed.
    """
    if decisions is None or decisions.empty:
        empty = _empty_decisions()
        return LedgerStatus(empty, empty.copy(), empty.copy())
    hashes = output_hashes(outputs) if hashes is None else hashes
    pairs = list(zip(decisions["item_id"].astype(str).tolist(), decisions["model"].astype(str).tolist(),
                     strict=True))
    current = np.array([hashes.get(pair) for pair in pairs], dtype=object)
    orphaned = np.array([h is None for h in current], dtype=bool)
    stored = decisions["text_hash"].astype(str).to_numpy() if "text_hash" in decisions.columns else np.full(
        len(decisions), "", dtype=object)
    stale = ~orphaned & np.array([s == "" or s != c for s, c in zip(stored, current, strict=True)], dtype=bool)
    fresh = ~orphaned & ~stale
    parts = [decisions[mask].reset_index(drop=True) for mask in (fresh, stale, orphaned)]
    return LedgerStatus(*parts)


def _python_values(column: pd.Series) -> list:
    """The column's values as Python objects, a missing text as ``pd.NA`` whatever the string dtype."""
    if isinstance(column.dtype, (pd.StringDtype, pd.ArrowDtype)):
        return column.to_numpy(dtype=object, na_value=pd.NA).tolist()
    return column.tolist()


def _digest_text(value: object) -> str:
    return repr(value) if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Ledger:
    """The overrides of one data set as they apply to its loaded outputs under a label rule.

    ``applied`` is what metrics use (fresh decisions reduced by the rule, one per rating key); ``stale``,
    ``orphaned`` and ``unresolved`` are listed, never applied.
    """

    name: str
    rule: str
    decisions: pd.DataFrame
    status: LedgerStatus
    applied: pd.DataFrame
    unresolved: pd.DataFrame
    adopted: int = 0

    @property
    def counts(self) -> dict[str, int]:
        """Applied overrides, stale, orphaned and unresolved decisions."""
        return {"applied": len(self.applied), "stale": len(self.status.stale),
                "orphaned": len(self.status.orphaned), "unresolved": len(self.unresolved)}

    @cached_property
    def digest(self) -> str:
        """12 hex digits of SHA-256 over the applied overrides (key, value, text hash), order-free.

        Names *which* human labels a results table rests on, not only how many (the signature's ``ledger``
        field); the empty ledger has the digest of nothing. Each applied row is its fields joined by U+001F
        (a float as ``repr``, anything else as ``str``), the rows sorted and each ended by U+001E. Computed
        once per ledger (the frames are not to be modified).
        """
        digest = hashlib.sha256()
        if len(self.applied):
            columns = [c for c in ("item_id", "model", "rater", "dimension", "value", "text_hash")
                       if c in self.applied.columns]
            # column by column, not row by row: iterating an Arrow-backed column element by element was most of
            # the cost (a 6,000-row ledger's digest on every Relabel key)
            fields = [[_digest_text(value) for value in _python_values(self.applied[column])] for column in columns]
            for row in sorted("\x1f".join(parts) for parts in zip(*fields, strict=True)):
                digest.update(row.encode("utf-8") + b"\x1e")
        return digest.hexdigest()[:12]

    def signature_fields(self) -> dict[str, str]:
        """The signature's fields for this ledger: the label rule and the digest of the applied overrides."""
        key, value = label_rule_field(self.rule)
        return {key: value, "ledger": self.digest}

    def summary(self) -> str:
        """One line for the CLI and the app, e.g. ``overrides: 12 applied (labels: latest), 2 stale, 1 orphaned``."""
        counts = self.counts
        line = (f"overrides: {counts['applied']} applied (labels: {self.rule}), {counts['stale']} stale "
                f"(text changed; not applied until confirmed), {counts['orphaned']} orphaned (output gone; kept)")
        if counts["unresolved"]:
            line += f", {counts['unresolved']} unresolved disagreements (judge label kept)"
        if self.adopted:
            line += f", {self.adopted} moved from a version 1 store"
        return line


def ledger_from_decisions(name: str, decisions: pd.DataFrame, outputs: pd.DataFrame, rule: str = "latest",
                          *, adopted: int = 0, hashes: Mapping[tuple[str, str], str] | None = None) -> Ledger:
    """:class:`Ledger` of already-read decisions (see :func:`open_ledger`)."""
    status = ledger_status(decisions, outputs, hashes)
    effective = effective_overrides(status.fresh, rule)
    return Ledger(name, rule, decisions, status, effective.effective, effective.unresolved, adopted)


def open_ledger(store: OverrideStore, name: str, outputs: pd.DataFrame, rule: str = "latest", *,
                adopt_legacy: bool = True, hashes: Mapping[tuple[str, str], str] | None = None,
                legacy_id: str | None = None) -> Ledger:
    """Read a data set's decisions and sort them against the loaded ``outputs``.

    With ``adopt_legacy`` the rows a version 1 store kept under the outputs' key-set hash
    (:func:`empathy.store.dataset_id`, or ``legacy_id`` when already computed) are first moved to ``name``
    (:meth:`OverrideStore.adopt_legacy`). ``hashes``: the outputs' :func:`empathy.store.output_hashes` when
    already computed (the app caches them per data set). Raises :class:`empathy.store.StoreError` for a
    damaged store.
    """
    adopted = 0
    if adopt_legacy and any(other != name for other in store.dataset_ids()):
        hashes = output_hashes(outputs) if hashes is None else hashes
        adopted = store.adopt_legacy(legacy_id or dataset_id(outputs), name, hashes)
    return ledger_from_decisions(name, store.decisions(name), outputs, rule, adopted=adopted, hashes=hashes)


# ------------------------------------------------------------------------------------------ several humans

def annotator_ratings(decisions: pd.DataFrame) -> pd.DataFrame:
    """Each annotator as their own rater: long-form ratings with ``rater`` = annotator, ``rater_kind`` human.

    One rating per ``(item_id, model, dimension, annotator)``: a decision applied to several judges is one
    human judgement (the annotator's latest, should they differ). Adjudications are left out (they are a
    resolution, not an independent judgement).
    """
    columns = ["item_id", "model", "rater", "dimension", "value", "rater_kind", "reason", "signature"]
    if decisions is None or decisions.empty:
        return pd.DataFrame({c: pd.Series(dtype=float if c == "value" else object) for c in columns})
    frame = decisions[decisions.get("role", pd.Series("annotator", index=decisions.index)) == "annotator"]
    if "updated_at" in frame.columns:
        frame = frame.sort_values("updated_at", kind="stable")
    frame = frame.drop_duplicates([*_ITEM_KEY, "annotator"], keep="last")
    out = pd.DataFrame({"item_id": frame["item_id"].astype(str), "model": frame["model"].astype(str),
                        "rater": frame["annotator"].astype(str), "dimension": frame["dimension"].astype(str),
                        "value": frame["value"].astype(float), "rater_kind": "human", "reason": "",
                        "signature": "human"})
    return out.sort_values(["item_id", "model", "dimension", "rater"]).reset_index(drop=True)


@dataclass(frozen=True)
class HumanAgreement:
    """Human-human agreement on the outputs decided by two or more annotators."""

    pairs: pd.DataFrame = field(default_factory=pd.DataFrame)
    alpha: pd.DataFrame = field(default_factory=pd.DataFrame)
    n_items: int = 0


def human_agreement(decisions: pd.DataFrame) -> HumanAgreement:
    """Agreement between annotators, on the ``(item_id, model, dimension)`` decided by two or more of them.

    ``pairs``: :func:`empathy.agreement.pairwise_agreement` of every annotator pair (n, Cohen's kappa, percent
    agreement, Spearman...); ``alpha``: Krippendorff's alpha per dimension over all annotators
    (:func:`empathy.agreement.krippendorff_by_dimension`, nominal for binary labels). ``n_items``: how many
    ``(item, model, dimension)`` had two or more annotators.
    """
    ratings = annotator_ratings(decisions)
    if ratings.empty:
        return HumanAgreement(pd.DataFrame(), pd.DataFrame(), 0)
    size = ratings.groupby(["item_id", "model", "dimension"])["rater"].transform("nunique")
    shared = ratings[size >= 2]
    n_items = int(len(shared.drop_duplicates(["item_id", "model", "dimension"])))
    if shared.empty:
        return HumanAgreement(pd.DataFrame(), pd.DataFrame(), 0)
    return HumanAgreement(pairwise_agreement(shared), krippendorff_by_dimension(shared), n_items)


def adjudication_list(decisions: pd.DataFrame) -> pd.DataFrame:
    """The outputs where annotators disagree: one row per ``(item_id, model, dimension)``.

    Columns: ``item_id, model, dimension, decisions`` (``"ann=value, ..."``), ``n_annotators``,
    ``adjudicated`` (the latest adjudication's value, NaN when none yet).
    """
    columns = ["item_id", "model", "dimension", "decisions", "n_annotators", "adjudicated"]
    ratings = annotator_ratings(decisions)
    if ratings.empty:
        return pd.DataFrame(columns=columns)
    spread = ratings.groupby(_ITEM_KEY)["value"].transform("nunique")
    split = ratings[spread > 1]
    if split.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for key, group in split.groupby(_ITEM_KEY, sort=True):
        rows.append({**dict(zip(_ITEM_KEY, key, strict=True)),
                     "decisions": ", ".join(f"{r}={v:g}" for r, v in zip(group["rater"], group["value"],
                                                                         strict=True)),
                     "n_annotators": int(group["rater"].nunique()), "adjudicated": np.nan})
    table = pd.DataFrame(rows, columns=columns)
    adjudications = decisions[decisions.get("role", pd.Series("annotator", index=decisions.index)) == "adjudicator"]
    if len(adjudications):
        latest = (adjudications.sort_values("updated_at", kind="stable")
                  .drop_duplicates(_ITEM_KEY, keep="last").set_index(_ITEM_KEY)["value"])
        table["adjudicated"] = [float(latest.get(tuple(k), np.nan)) for k in table[_ITEM_KEY].itertuples(index=False)]
    return table


# ------------------------------------------------------------------------------------------ judge re-runs

@dataclass(frozen=True)
class RerunLedger:
    """Every decision classified against a re-run judge's ratings."""

    confirmed: pd.DataFrame
    disputed: pd.DataFrame
    stale: pd.DataFrame
    orphaned: pd.DataFrame

    @property
    def counts(self) -> dict[str, int]:
        return {"confirmed": len(self.confirmed), "disputed": len(self.disputed), "stale": len(self.stale),
                "orphaned": len(self.orphaned)}

    def summary(self) -> str:
        """One line, e.g. ``re-run vs overrides: 7 confirmed, 3 still disputed, 1 stale, 0 orphaned``."""
        c = self.counts
        return (f"re-run vs overrides: {c['confirmed']} confirmed (judge now agrees with the human), "
                f"{c['disputed']} still disputed, {c['stale']} stale (text changed), {c['orphaned']} orphaned "
                "(output gone)")


def classify_rerun(decisions: pd.DataFrame, new_ratings: pd.DataFrame, outputs: pd.DataFrame, *,
                   rater_map: Mapping[str, str] | None = None, tolerance: float = 0.0) -> RerunLedger:
    """Classify every decision of the ledger against a re-run judge's ratings.

    ``orphaned``: the output is gone; ``stale``: its text changed since the decision (see
    :func:`ledger_status`); otherwise ``confirmed`` when the re-run judge's value for the same rating (rater
    renamed through ``rater_map``, e.g. ``{"gpt4": "gpt4-prompt-v2"}``) is within ``tolerance`` of the human
    value (0: equal), and ``disputed`` when it differs or the re-run did not rate it (``new_value`` NaN).
    Only decisions of raters the re-run covers are classified (a decision on another judge is not about
    this re-run). ``confirmed`` and ``disputed`` carry the ``new_value``.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance!r}")
    mapping = dict(rater_map or {})
    rerun_raters = set(new_ratings["rater"].astype(str))
    if decisions is None or decisions.empty:
        empty = _empty_decisions()
        return RerunLedger(empty, empty.copy(), empty.copy(), empty.copy())
    covered = decisions[decisions["rater"].astype(str).map(lambda r: mapping.get(r, r)).isin(rerun_raters)]
    status = ledger_status(covered.reset_index(drop=True), outputs)
    fresh = status.fresh.copy()
    fresh["new_rater"] = fresh["rater"].astype(str).map(lambda r: mapping.get(r, r))
    lookup = (new_ratings.drop_duplicates(["item_id", "model", "rater", "dimension"], keep="last")
              .set_index(["item_id", "model", "rater", "dimension"])["value"])
    index = pd.MultiIndex.from_arrays([fresh["item_id"].astype(str), fresh["model"].astype(str),
                                       fresh["new_rater"], fresh["dimension"].astype(str)])
    positions = lookup.index.get_indexer(index) if len(lookup) else np.full(len(fresh), -1)
    values = lookup.to_numpy(dtype=float)
    fresh["new_value"] = [values[p] if p >= 0 else np.nan for p in positions]
    agrees = (fresh["new_value"] - fresh["value"]).abs() <= tolerance
    return RerunLedger(fresh[agrees].reset_index(drop=True), fresh[~agrees].reset_index(drop=True),
                       status.stale, status.orphaned)


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


# ------------------------------------------------------------------------------------------ CLI helpers

def ledger_for_files(store_path: str | Path, outputs_path: str | Path, outputs: pd.DataFrame, *,
                     rule: str = "latest", name: str | None = None) -> Ledger:
    """The ledger of a data set given by its files, as the CLI needs it (``metrics --overrides``, ``judge``).

    ``store_path`` is a SQLite file or a ``postgresql://`` URL. The data set's name is
    :func:`empathy.store.dataset_name` of ``outputs_path`` relative to the store (or ``name``). Raises
    :class:`empathy.store.StoreError` (a :class:`empathy.io.DataError`: one line, exit 2) for a damaged or
    unreachable store.
    """
    store = OverrideStore(store_path)
    label = dataset_name(outputs_path, store_path=store_path, explicit=name)
    return open_ledger(store, label, outputs, rule)


def apply_ledger(ratings: pd.DataFrame, ledger: Ledger) -> pd.DataFrame:
    """``ratings`` with the ledger's applied overrides (stale, orphaned and unresolved ones never)."""
    return apply_overrides(ratings, ledger.applied)


def rerun_against_ledger(ledger: Ledger, new_ratings: pd.DataFrame, outputs: pd.DataFrame, *,
                         rater_map: Mapping[str, str] | None = None, tolerance: float = 0.0) -> RerunLedger:
    """:func:`classify_rerun` of every decision of ``ledger`` (for ``judge`` to print its :meth:`summary`)."""
    return classify_rerun(ledger.decisions, new_ratings, outputs, rater_map=rater_map, tolerance=tolerance)


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
            after[float(level)] = labels(pd.concat([kept, mine], ignore_index=True))
    for pair in wanted:
        own_label = _label_or_none(own.get(pair))
        if pair not in held:
            result[pair] = DecisionEffect(own_label, {float(level): float(level) for level in levels})
            continue
        result[pair] = DecisionEffect(now.get(pair, own_label),
                                      {level: chosen.get(pair, own_label) for level, chosen in after.items()})
    return result
