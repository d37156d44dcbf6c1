"""Random audits in the store: saving and reading designs, marking audit decisions, and the audit's labels.

A random audit (:mod:`empathy.audit`) is what makes human decisions an estimate: the outputs to decide are drawn
at random before anyone looks at them, and only decisions made on them *in audit order* feed the estimators of
:mod:`empathy.inference`. This module keeps the design and the marks in the override store (both backends,
portable SQL through :meth:`~empathy.labels.sqlite.OverrideStore.transaction` and
:meth:`~empathy.labels.sqlite.OverrideStore.fetch`; tables in :mod:`empathy.labels.schema`, version 4):

* :func:`save_design` / :func:`design_list` / :func:`load_design` / :func:`load_designs`: a design's header and
  drawn outputs, keyed by (data set, digest), read back through :meth:`empathy.audit.AuditDesign.from_rows`
  (a damaged row, e.g. one changed after it was stored, raises :class:`~empathy.labels.locations.StoreError`:
  one line, exit 2 on the command line);
* :func:`audit_mark`: the mark of a decision on a drawn output (design digest and position) that
  :meth:`~empathy.labels.sqlite.OverrideStore.set_overrides` takes as ``audit=`` and checks against the stored
  design;
* :func:`audit_decisions`: for one design, the audit decisions resolved to one label per output under a label
  rule: what :func:`empathy.inference.ppi_estimates` takes as ``decisions``.

Which decisions are audit decisions. A decision row carries the mark of the change that set its current value
(:mod:`empathy.labels.sqlite`): made in audit order, it has the design's digest and the output's position; a
later decision of the same annotator on the same rating from the disagreement-first or by-influence queue
clears it (the value is then no longer an audit decision, and the output counts as pending), and undoing that
decision restores it. :func:`audit_decisions` reads fresh decisions only (the text they were made on is the
loaded one), marked with the design's digest, on its dimension, at the position the design drew the output;
everything else (unmarked decisions, stale ones, marks that do not match) is left out and counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from empathy.audit import HEADER_FIELDS, OUTPUT_FIELDS, AuditDesign
from empathy.labels.locations import StoreError
from empathy.labels.records import AuditMark, check_text, utc_now
from empathy.labels.rules import effective_overrides
from empathy.labels.schema import DESIGN_COLUMNS, DESIGN_OUTPUT_COLUMNS
from empathy.labels.sqlite import OverrideStore

#: The largest seed a store keeps (a signed 64-bit integer on both backends).
MAX_SEED = 2 ** 63 - 1
#: Columns of :attr:`AuditDecisions.decisions`: one label per decided drawn output.
DECISION_COLUMNS: tuple[str, ...] = ("item_id", "model", "dimension", "value", "position", "n_annotators")
#: Columns of :func:`design_list`.
LIST_COLUMNS: tuple[str, ...] = ("digest", "judge", "dimension", "per_model", "stratify_by_task", "seed", "n_drawn",
                                 "n_frame", "annotator", "created_at")
_HEADER_SELECT = ", ".join(DESIGN_COLUMNS)
_OUTPUT_SELECT = ", ".join(DESIGN_OUTPUT_COLUMNS)


# ------------------------------------------------------------------------------------------ designs

def save_design(store: OverrideStore, dataset_id: str, design: AuditDesign, *, annotator: str = "") -> bool:
    """Store an audit design of a data set (header and drawn outputs, one transaction); True if it was new.

    Saving a design that is already stored (same data set and digest: the digest covers every field) changes
    nothing and returns False.

    Raises
    ------
    TypeError, ValueError
        For a ``design`` that is not an :class:`~empathy.audit.AuditDesign`, an empty data-set name or a seed
        beyond :data:`MAX_SEED`.
    """
    check_text("dataset_id", dataset_id)
    if not isinstance(design, AuditDesign):
        raise TypeError(f"design must be an AuditDesign, got {type(design).__name__}")
    if not isinstance(annotator, str):
        raise TypeError(f"annotator must be a string, got {type(annotator).__name__}")
    if design.seed > MAX_SEED:
        raise ValueError(f"the seed {design.seed} is too large to store (at most {MAX_SEED})")
    header, rows = design.to_rows()
    digest = str(header["digest"])
    values = {**header, "stratify_by_task": int(bool(header["stratify_by_task"])), "annotator": annotator.strip(),
              "created_at": utc_now()}
    with store.transaction() as connection:
        held = connection.execute("SELECT 1 FROM audit_designs WHERE dataset_id=? AND digest=?",
                                  (dataset_id, digest)).fetchone()
        if held is not None:
            return False
        connection.execute(f"INSERT INTO audit_designs (dataset_id, {_HEADER_SELECT}) VALUES "
                           f"({', '.join('?' for _ in range(len(DESIGN_COLUMNS) + 1))})",
                           (dataset_id, *(values[c] for c in DESIGN_COLUMNS)))
        connection.executemany(f"INSERT INTO audit_design_outputs (dataset_id, digest, {_OUTPUT_SELECT}) VALUES "
                               f"({', '.join('?' for _ in range(len(DESIGN_OUTPUT_COLUMNS) + 2))})",
                               [(dataset_id, digest, *(row[c] for c in DESIGN_OUTPUT_COLUMNS))
                                for row in rows])
    return True


def design_list(store: OverrideStore, dataset_id: str) -> pd.DataFrame:
    """The designs stored for a data set, oldest first: :data:`LIST_COLUMNS` (headers only, not validated)."""
    check_text("dataset_id", dataset_id)
    frame = pd.DataFrame(store.fetch(f"SELECT {', '.join(LIST_COLUMNS)} FROM audit_designs WHERE dataset_id=? "
                                     "ORDER BY created_at, digest", (dataset_id,)), columns=list(LIST_COLUMNS))
    frame["stratify_by_task"] = frame["stratify_by_task"].astype(bool)
    return frame


def _digest_of(store: OverrideStore, dataset_id: str, digest: str) -> str:
    """The full digest a digest or its prefix (at least 6 hex digits) names among the data set's designs."""
    if not isinstance(digest, str):
        raise TypeError(f"digest must be a string, got {type(digest).__name__}")
    wanted = digest.strip().lower().removeprefix("audit:")
    if len(wanted) < 6:
        raise ValueError(f"audit design {digest!r}: give at least 6 hex digits of its digest")
    known = [str(row[0]) for row in store.fetch("SELECT digest FROM audit_designs WHERE dataset_id=? ORDER BY "
                                                "digest", (dataset_id,))]
    hits = [d for d in known if d.startswith(wanted)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise ValueError(f"audit design {digest!r} is ambiguous in data set {dataset_id!r}: "
                         f"{', '.join(d[:12] for d in hits)}")
    listed = ", ".join(d[:12] for d in known) if known else "none"
    raise ValueError(f"no audit design {digest!r} in data set {dataset_id!r} of {store.label}; its designs: {listed}")


def load_design(store: OverrideStore, dataset_id: str, digest: str) -> AuditDesign:
    """The stored design of a data set named by its digest (or a prefix of 6 or more hex digits, ``audit:``
    allowed), validated by :meth:`~empathy.audit.AuditDesign.from_rows`.

    Raises
    ------
    ValueError
        When no design (or more than one) of the data set has that digest, naming the designs there are.
    StoreError
        When the stored rows are damaged (a field missing or mistyped, an output changed after it was stored:
        the digest no longer matches), naming the store, the design, the row and the field.
    """
    check_text("dataset_id", dataset_id)
    full = _digest_of(store, dataset_id, digest)
    header_rows = store.fetch(f"SELECT {_HEADER_SELECT} FROM audit_designs WHERE dataset_id=? AND digest=?",
                              (dataset_id, full))
    outputs = store.fetch(f"SELECT {_OUTPUT_SELECT} FROM audit_design_outputs WHERE dataset_id=? AND digest=? "
                          "ORDER BY position", (dataset_id, full))
    header = dict(zip(DESIGN_COLUMNS, header_rows[0], strict=True))
    try:
        return AuditDesign.from_rows({k: header[k] for k in HEADER_FIELDS},
                                     [dict(zip(DESIGN_OUTPUT_COLUMNS, row, strict=True)) for row in outputs])
    except (TypeError, ValueError) as error:
        raise StoreError(store.label, f"holds a damaged audit design {full[:12]} of data set {dataset_id!r} "
                         f"({error}); draw it again or restore the store from a backup") from None


def load_designs(store: OverrideStore, dataset_id: str) -> list[AuditDesign]:
    """Every stored design of a data set, oldest first (each validated as :func:`load_design` does)."""
    return [load_design(store, dataset_id, digest) for digest in design_list(store, dataset_id)["digest"]]


def design_rows(store: OverrideStore) -> tuple[list[tuple], list[tuple]]:
    """Every design header row (``dataset_id`` then :data:`~empathy.labels.schema.DESIGN_COLUMNS`) and drawn
    output row (``dataset_id, digest`` then :data:`~empathy.labels.schema.DESIGN_OUTPUT_COLUMNS`), as stored.

    The raw material of :func:`empathy.labels.transfer.migrate_store`.
    """
    headers = store.fetch(f"SELECT dataset_id, {_HEADER_SELECT} FROM audit_designs ORDER BY dataset_id, digest")
    outputs = store.fetch(f"SELECT dataset_id, digest, {_OUTPUT_SELECT} FROM audit_design_outputs ORDER BY "
                          "dataset_id, digest, position")
    return headers, outputs


# ------------------------------------------------------------------------------------------ marks and labels

def audit_mark(design: AuditDesign, item_id: str, model: str) -> AuditMark:
    """The mark of a decision on the drawn output ``(item_id, model)`` of ``design``, for ``set_overrides(...,
    audit=...)``.

    Raises ``ValueError`` when the design did not draw that output (a decision on it is not an audit decision).
    """
    for output in design.outputs:
        if output.item_id == item_id and output.model == model:
            return AuditMark(design.digest, output.position)
    raise ValueError(f"audit {design.short_digest} did not draw output ({item_id!r}, {model!r}): a decision on it is "
                     "not an audit decision")


@dataclass(frozen=True)
class AuditDecisions:
    """The audit decisions of one design, one label per decided drawn output, and what was left out.

    ``decisions`` (:data:`DECISION_COLUMNS`, in audit order) is what :func:`empathy.inference.ppi_estimates`
    takes. ``unresolved``: decided drawn outputs whose annotators disagree and the label rule leaves open (no
    label); ``mismatched``: marked decisions whose output or position is not the design's (from an imported
    ledger of another design with the same digest prefix, say); ``unmarked``: fresh decisions on drawn outputs
    of the design's dimension that are *not* audit decisions (made from another queue), never used; ``stale``:
    drawn outputs without a label whose decisions on the design's dimension are all stale (made on other text,
    or naming none: an imported ledger's, say), never used until re-decided.
    """

    decisions: pd.DataFrame
    design: AuditDesign
    rule: str
    unresolved: int
    mismatched: int
    unmarked: int
    stale: int = 0

    def summary(self) -> str:
        """One line for the command line and the app."""
        line = (f"audit {self.design.short_digest}: {len(self.decisions)} of {len(self.design.outputs)} drawn outputs "
                f"decided in audit order (labels: {self.rule})")
        extras = [f"{n} {what}" for n, what in ((self.unresolved, "unresolved disagreements (no label)"),
                                                 (self.unmarked, "decided outside audit order (not used)"),
                                                 (self.mismatched, "marks that do not match the design (not used)"),
                                                 (self.stale, "with stale decisions only (made on other text or "
                                                  "naming none: not used until re-decided)"))
                  if n]
        return line + (", " + ", ".join(extras) if extras else "")


def audit_decisions(decisions: pd.DataFrame, design: AuditDesign, *, rule: str = "latest",
                    stale: pd.DataFrame | None = None) -> AuditDecisions:
    """The audit decisions of ``design`` resolved to one label per drawn output under the label ``rule``.

    ``decisions``: the data set's *fresh* decisions (:attr:`empathy.labels.ledger.Ledger.status` ``.fresh``: made
    on the text now loaded), any rater and dimension. Kept: rows marked with the design's digest, of its
    dimension, on the output the design drew at the marked position. A decision applied to several judges is
    one human judgement of the output (the annotator's latest row, whichever judge's rating it replaced);
    several annotators' judgements are then resolved by ``rule`` exactly as the ledger resolves them
    (:func:`empathy.labels.rules.effective_overrides`: ``latest``, ``majority``, ``adjudicated``), a
    disagreement the rule leaves open giving no label. Decisions from the disagreement-first or by-influence
    queues carry no mark and are never kept. ``stale``: the data set's stale decisions
    (:attr:`empathy.labels.ledger.Ledger.status` ``.stale``), only counted (:attr:`AuditDecisions.stale`).
    """
    if not isinstance(design, AuditDesign):
        raise TypeError(f"design must be an AuditDesign, got {type(design).__name__}")
    drawn = pd.DataFrame([(o.item_id, o.model, o.position) for o in design.outputs],
                         columns=["item_id", "model", "position"])
    empty = pd.DataFrame({c: pd.Series(dtype=float if c == "value" else object) for c in DECISION_COLUMNS})
    if decisions is None or decisions.empty:
        return AuditDecisions(empty, design, rule, 0, 0, 0, _stale_outputs(stale, design, drawn, set()))
    frame = decisions.astype({"item_id": str, "model": str, "dimension": str})
    frame = frame[frame["dimension"] == design.dimension]
    marks = frame["audit_design"].fillna("").astype(str) if "audit_design" in frame.columns else pd.Series(
        "", index=frame.index)
    positions = (pd.to_numeric(frame["audit_position"], errors="coerce") if "audit_position" in frame.columns
                 else pd.Series(float("nan"), index=frame.index))
    on_drawn = frame.merge(drawn, on=["item_id", "model"], how="left")["position"].to_numpy()
    mine = (marks == design.digest).to_numpy()
    matches = mine & (positions.to_numpy() == on_drawn)
    unmarked = frame[~mine & ~pd.isna(on_drawn)][["item_id", "model"]].drop_duplicates()
    mismatched = int((mine & ~matches).sum())
    kept = frame[matches].copy()
    if "updated_at" in kept.columns:
        kept = kept.sort_values("updated_at", kind="stable")
    if "role" not in kept.columns:
        kept["role"] = "annotator"
    # one judgement per output and annotator: a decision applied to several judges' ratings is one decision
    kept = kept.drop_duplicates(["item_id", "model", "annotator", "role"], keep="last").assign(rater=design.judge)
    resolved = effective_overrides(kept, rule)
    chosen = resolved.effective.merge(drawn, on=["item_id", "model"], how="inner").sort_values("position")
    table = chosen.assign(dimension=design.dimension)[list(DECISION_COLUMNS)].reset_index(drop=True)
    table = table.astype({"value": float, "position": int, "n_annotators": int})
    decided = set(zip(table["item_id"], table["model"], strict=True))
    unmarked = unmarked[[key not in decided for key in zip(unmarked["item_id"], unmarked["model"], strict=True)]]
    return AuditDecisions(table, design, rule, len(resolved.unresolved), mismatched, len(unmarked),
                          _stale_outputs(stale, design, drawn, decided))


def _stale_outputs(stale: pd.DataFrame | None, design: AuditDesign, drawn: pd.DataFrame,
                   decided: set[tuple[str, str]]) -> int:
    """Drawn outputs without a label that have stale decisions on the design's dimension."""
    if stale is None or stale.empty:
        return 0
    rows = stale.astype({"item_id": str, "model": str, "dimension": str})
    rows = rows[rows["dimension"] == design.dimension].merge(drawn, on=["item_id", "model"], how="inner")
    keys = set(zip(rows["item_id"], rows["model"], strict=True))
    return len(keys - decided)


def audit_queue(design: AuditDesign, labels: AuditDecisions) -> pd.DataFrame:
    """The design's drawn outputs in audit order with what is decided: :meth:`~empathy.audit.AuditDesign.frame`'s
    columns plus ``decided`` (bool) and ``value`` (the audit label, NaN while pending).

    The next output to decide in audit order is the first row with ``decided`` False; deciding in this order
    and stopping anywhere leaves a random sample of every stratum (:mod:`empathy.audit`).
    """
    frame = design.frame()
    labelled = labels.decisions[["item_id", "model", "value"]]
    frame = frame.merge(labelled, on=["item_id", "model"], how="left")
    frame["decided"] = frame["value"].notna()
    return frame[[*OUTPUT_FIELDS, "decided", "value"]]
