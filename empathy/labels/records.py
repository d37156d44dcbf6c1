"""What one human decision is, and the names and hashes that tie it to a data set and a text.

* :class:`Change` — one requested override: the rating key, the value, and what the decision was made on;
  :func:`validate_value` checks a value against its dimension's range (the one table,
  :data:`empathy.metrics.DIMENSION_RANGES`).
* :func:`text_hash` / :func:`output_hashes` — what a decision is bound to: a hash of the output's reference and
  generation. :func:`empathy.labels.ledger.ledger_status` compares them with the loaded data (fresh, stale,
  orphaned).
* :func:`dataset_name` — the stable *name* of a data set in a store (its outputs file, relative to the store's
  folder when it lies inside it, or a name given explicitly), so adding or removing outputs keeps every other
  override. :func:`dataset_id` is the legacy (version 1) key, a hash of the data set's ``(item_id, model)``
  keys, kept to find version 1 rows (:meth:`empathy.labels.sqlite.OverrideStore.adopt_legacy`).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from empathy.labels.locations import is_server_location
from empathy.labels.schema import ORDER_COLUMN, STORED_DECISION_COLUMNS
from empathy.metrics import BINARY_DIMENSIONS, DIMENSION_RANGES


@dataclass(frozen=True)
class Change:
    """One requested override: the rating key, the new value and what the decision was made on.

    ``text_hash`` is :func:`text_hash` of the output the annotator read (``""``: unknown, which
    :func:`empathy.labels.ledger.ledger_status` treats as stale); ``judge_value`` and ``judge_signature`` are
    the judge's rating it replaces (``None`` / ``""`` when the judge did not rate it).
    :func:`empathy.labels.rules.make_changes` fills all three from the data. ``audit_design`` and
    ``audit_position`` mark an audit decision (:class:`AuditMark`: the design's digest and the output's position
    in audit order; ``""`` and ``None`` for any other decision); set them through
    :meth:`empathy.labels.sqlite.OverrideStore.set_overrides`' ``audit`` parameter, which checks them.
    """

    item_id: str
    model: str
    rater: str
    dimension: str
    value: float
    reason: str = ""
    text_hash: str = ""
    judge_value: float | None = None
    judge_signature: str = ""
    audit_design: str = ""
    audit_position: int | None = None


@dataclass(frozen=True)
class AuditMark:
    """That a decision was made on a drawn output of a random audit, in audit order.

    ``design`` is the design's full digest (:attr:`empathy.audit.AuditDesign.digest`, 64 hex digits) and
    ``position`` the output's place in audit order (0, 1, ...); :func:`empathy.labels.audits.audit_mark` builds
    one from a design and an output. Only decisions carrying a mark feed the audit's estimators: decisions made
    from the disagreement-first or the by-influence queue never do.
    """

    design: str
    position: int

    def __post_init__(self) -> None:
        check_audit_mark(self.design, self.position)


def check_audit_mark(design: object, position: object) -> None:
    """Check an audit mark's two fields: both empty (``""``, ``None``) or a 64-hex digest and a position >= 0.

    Raises ``TypeError``/``ValueError`` naming the field.
    """
    if not isinstance(design, str):
        raise TypeError(f"audit_design must be a string, got {type(design).__name__}")
    if design == "":
        if position is not None:
            raise ValueError(f"audit_position {position!r} given without an audit design")
        return
    if len(design) != 64 or any(c not in "0123456789abcdef" for c in design):
        raise ValueError(f"audit_design must be a design's full digest (64 lowercase hex digits), got {design!r}")
    if isinstance(position, bool) or not isinstance(position, int | np.integer):
        raise TypeError(f"audit_position must be a whole number, got {position!r}")
    if position < 0:
        raise ValueError(f"audit_position must be at least 0, got {position}")


def validate_value(dimension: str, value: object) -> float:
    """Return ``value`` as a float after checking it against the dimension's range.

    Raises ``TypeError`` for a non-number and ``ValueError`` for NaN, infinity or a value outside
    :data:`empathy.metrics.DIMENSION_RANGES` (``ca`` must be exactly 0 or 1). Unknown dimensions take any finite
    number, as in :mod:`empathy.io`.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"override value for {dimension!r} must be a number, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"override value for {dimension!r} must be finite, got {number!r}")
    if dimension in DIMENSION_RANGES:
        low, high = DIMENSION_RANGES[dimension]
        if dimension in BINARY_DIMENSIONS and number not in (0.0, 1.0):
            raise ValueError(f"override value for {dimension!r} must be 0 or 1, got {number:g}")
        if not low <= number <= high:
            raise ValueError(f"override value for {dimension!r} must be in [{low:g}, {high:g}], "
                             f"got {number:g}")
    return number


def check_text(name: str, value: object) -> str:
    """``value`` when it is a non-blank string; ``TypeError``/``ValueError`` naming ``name`` otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be empty")
    return value


def optional_float(value: object) -> float | None:
    """``value`` as a finite float, else ``None`` (missing, not a number, NaN or infinite)."""
    if value is None:
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def utc_now() -> str:
    """The writer's clock when a change is recorded: UTC, ISO 8601 with microseconds.

    A record only: which change came last is the store's commit order (``seq``), never this time (two laptops'
    clocks disagree).
    """
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def empty_decisions() -> pd.DataFrame:
    """A decisions table with no rows and the columns of :data:`empathy.labels.schema.STORED_DECISION_COLUMNS`."""
    kinds = {"value": float, "judge_value": float, ORDER_COLUMN: "int64"}
    return pd.DataFrame({c: pd.Series(dtype=kinds.get(c, object)) for c in STORED_DECISION_COLUMNS})


def in_commit_order(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (decisions or audit rows) sorted oldest first by the store's commit order.

    By ``seq`` when the frame has it (``updated_at`` breaks ties: decisions of a version 1 store without history,
    backfilled with 0); a frame without ``seq`` (built by hand, or an exported ledger read back) by
    ``updated_at``; otherwise as given. The sort is stable: rows that tie keep their order, so ``keep="last"``
    after it is the latest.
    """
    columns = [c for c in (ORDER_COLUMN, "updated_at") if c in frame.columns]
    if not columns:
        return frame
    return frame.sort_values(columns, kind="stable")


#: Hex digits of :func:`text_hash` (the first ones of the SHA-256).
TEXT_HASH_LENGTH = 16


def text_hash(reference: str, generation: str) -> str:
    """16-hex-digit SHA-256 of an output's reference and generation: what a human decision was made on.

    Length-prefixed, so moving text from one side to the other changes it. The formula is a contract (another
    tool's ledger computes it: docs/ledger-format.md): ``sha256(f"{len(r)}:{r}{len(g)}:{g}".encode("utf-8"))``,
    lengths in code points, the first 16 lowercase hex digits.
    """
    reference, generation = str(reference), str(generation)
    payload = f"{len(reference)}:{reference}{len(generation)}:{generation}"
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:TEXT_HASH_LENGTH]


def output_hashes(outputs: pd.DataFrame) -> dict[tuple[str, str], str]:
    """:func:`text_hash` of every output, keyed by ``(item_id, model)``."""
    for column in ("item_id", "model", "reference", "generation"):
        if column not in outputs.columns:
            raise ValueError(f"output_hashes: outputs lack the column {column!r}")
    columns = [outputs[c].astype(str).tolist() for c in ("item_id", "model", "reference", "generation")]
    return {(item, model): text_hash(ref, gen) for item, model, ref, gen in zip(*columns, strict=True)}


def dataset_id(outputs: pd.DataFrame) -> str:
    """Legacy (version 1) key of a data set: a SHA-256 of its sorted ``(item_id, model)`` keys, 16 hex digits.

    Row order and extra columns do not change it; adding or removing an output does, which is why version 2
    keys a data set by :func:`dataset_name` instead. Kept to find version 1 rows
    (:meth:`empathy.labels.sqlite.OverrideStore.adopt_legacy`).
    """
    for column in ("item_id", "model"):
        if column not in outputs.columns:
            raise ValueError(f"dataset_id: outputs lack the column {column!r}")
    keys = sorted(zip(outputs["item_id"].astype(str).tolist(), outputs["model"].astype(str).tolist(), strict=True))
    digest = hashlib.sha256()
    for item, model in keys:
        digest.update(f"{len(item)}:{item}{len(model)}:{model}\n".encode())
    return digest.hexdigest()[:16]


def dataset_name(outputs_path: str | Path | None = None, *, store_path: str | Path | None = None,
                 explicit: str | None = None) -> str:
    """The stable name under which a data set's overrides are kept.

    ``explicit`` wins (e.g. ``"kumar2025"`` or an uploaded file's name). Otherwise the outputs file: relative
    to the store's folder when it lies inside it (the default store sits beside the data, so moving the
    folder keeps the name), else its absolute path; for a PostgreSQL store (``store_path`` a URL) its folder
    and file name, ``demo/outputs.csv``, so that every annotator of a team names it alike. The name does not
    depend on the outputs' contents.

    Raises
    ------
    ValueError
        When neither a name nor an outputs path is given, or the name is empty.
    """
    if explicit is not None:
        if not str(explicit).strip():
            raise ValueError("dataset_name: the explicit name is empty")
        return str(explicit).strip()
    if outputs_path is None:
        raise ValueError("dataset_name: give the outputs file or an explicit name")
    path = Path(outputs_path).expanduser().resolve()
    if is_server_location(store_path):
        # A team's server store: each annotator has the data at another absolute path, so the name is the
        # outputs file with its folder (data/demo/outputs.csv -> demo/outputs.csv), the same on every machine.
        return f"{path.parent.name}/{path.name}" if path.parent.name else path.name
    if store_path is not None:
        folder = Path(store_path).expanduser().resolve().parent
        try:
            return path.relative_to(folder).as_posix()
        except ValueError:
            pass
    return path.as_posix()
