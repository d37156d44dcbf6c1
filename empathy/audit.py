"""A random audit of one judge on one dimension: the sampling design that makes human decisions an estimate.

Human decisions made from the disagreement-first or the by-influence queue are chosen *because* of what the
judge said, so their mean says nothing about a model's true rate. An audit draws the outputs to decide at
random, with known inclusion probabilities, before anyone looks at them; only decisions on drawn outputs
feed the estimators of :mod:`empathy.inference`.

The design (:class:`AuditDesign`, frozen):

* **Frame**: the outputs (``(item_id, model)`` rows of the outputs table) that ``judge`` rated on
  ``dimension`` with a value (a missing rating, NaN, is not in the frame: the estimate covers what the judge
  rated). The frame is sorted by model, task and item before drawing, so the draw depends on the data and the
  seed, never on the file's row order.
* **Strata**: one per model, or one per (model, task) with ``stratify_by_task``. ``per_model`` outputs are
  drawn from *each stratum* by simple random sampling without replacement; a stratum smaller than that is an
  error (an audit larger than the data), not a silent census.
* **Order**: the drawn outputs of all strata are put in one random order (a uniformly random permutation).
  Any prefix of that order is therefore, within every stratum, a simple random sample of the stratum: a human
  who decides in audit order and stops anywhere leaves a valid sample (:mod:`empathy.inference` counts the
  outputs skipped before the last decision, which break this).
* **Inclusion probability** of a drawn output: ``n_h / N_h`` of its stratum (drawn over frame size).
* **Reproducibility**: everything is drawn from ``np.random.default_rng(seed)`` (first the strata in sorted
  order, ``Generator.choice(N_h, n_h, replace=False)`` each, then one ``Generator.permutation`` of the drawn
  outputs); the same data, judge, dimension, size and seed give the same design, and :attr:`digest`.
* **Digest**: SHA-256 over a canonical JSON of every field (the frame's digest included), the design's name in
  signatures (``audit:<12 hex>``) and its integrity check when it is read back (:meth:`from_rows`).

Storage (:meth:`to_rows` / :meth:`from_rows`): one header row and one row per drawn output, plain values only,
so that either store backend can keep them in two tables. :meth:`from_rows` validates every row and the digest
and raises ``ValueError`` with one line naming the row and the field of a damaged design.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from empathy.io import require_frame

#: Version of the row format and of the digest's canonical form.
DESIGN_FORMAT = 1
#: Task label of outputs without a ``task`` column (one task).
NO_TASK = ""
HEADER_FIELDS: tuple[str, ...] = ("format", "digest", "seed", "judge", "dimension", "per_model", "stratify_by_task",
                                  "frame_digest", "n_frame", "n_drawn")
OUTPUT_FIELDS: tuple[str, ...] = ("position", "item_id", "model", "task", "stratum_size", "stratum_drawn",
                                  "inclusion")
_KEYS = ["item_id", "model"]


@dataclass(frozen=True)
class AuditOutput:
    """One drawn output: where it stands in audit order, its stratum's sizes and its inclusion probability."""

    position: int
    item_id: str
    model: str
    task: str
    stratum_size: int
    stratum_drawn: int

    @property
    def inclusion(self) -> float:
        """Inclusion probability ``n_h / N_h`` of simple random sampling in its stratum."""
        return self.stratum_drawn / self.stratum_size


@dataclass(frozen=True)
class AuditDesign:
    """A drawn audit: seed, judge, dimension, frame, strata and the drawn outputs in audit order.

    Build it with :func:`draw_audit`; read it back from stored rows with :meth:`from_rows`.

    Attributes
    ----------
    seed : int
        The seed of ``np.random.default_rng`` the draw used.
    judge, dimension : str
        The rater audited and the rating dimension its decisions are about.
    per_model : int
        Outputs drawn per stratum.
    stratify_by_task : bool
        Strata are (model, task) pairs instead of models.
    frame_digest : str
        SHA-256 of the frame's sorted ``(model, task, item_id)`` keys: the estimators refuse data whose frame
        differs (outputs added, removed or re-rated as missing since the draw).
    n_frame : int
        Outputs in the frame.
    outputs : tuple of AuditOutput
        The drawn outputs in audit order (``position`` 0, 1, ...).
    """

    seed: int
    judge: str
    dimension: str
    per_model: int
    stratify_by_task: bool
    frame_digest: str
    n_frame: int
    outputs: tuple[AuditOutput, ...]

    @cached_property
    def digest(self) -> str:
        """SHA-256 (hex) of the design's canonical JSON: its name in signatures and its integrity check.

        Computed once per design (the fields are frozen): it covers every drawn output, so a caller that reads
        it per output would otherwise hash the whole design for each one.
        """
        return _sha256(self._canonical())

    @property
    def short_digest(self) -> str:
        """The first 12 hex digits of :attr:`digest`, as signatures show it."""
        return self.digest[:12]

    def _canonical(self) -> object:
        return {"format": DESIGN_FORMAT, "seed": self.seed, "judge": self.judge, "dimension": self.dimension,
                "per_model": self.per_model, "stratify_by_task": self.stratify_by_task,
                "frame_digest": self.frame_digest, "n_frame": self.n_frame,
                "outputs": [[o.position, o.item_id, o.model, o.task, o.stratum_size, o.stratum_drawn]
                            for o in self.outputs]}

    def stratum_of(self, model: str, task: str) -> tuple[str, str]:
        """The stratum key of an output: ``(model, task)`` when stratified by task, else ``(model, NO_TASK)``."""
        return (model, task if self.stratify_by_task else NO_TASK)

    def frame(self) -> pd.DataFrame:
        """The drawn outputs as a table: position, item_id, model, task, stratum_size, stratum_drawn, inclusion."""
        return pd.DataFrame([{**{f: getattr(o, f) for f in OUTPUT_FIELDS if f != "inclusion"},
                              "inclusion": o.inclusion} for o in self.outputs], columns=list(OUTPUT_FIELDS))

    def signature_fields(self) -> dict[str, str]:
        """The design as signature fields: ``audit`` (short digest), the judge and dimension audited."""
        return {"audit": self.short_digest, "audit-judge": self.judge, "audit-dimension": self.dimension}

    def to_rows(self) -> tuple[dict[str, object], list[dict[str, object]]]:
        """The design as plain rows for storage: one header row and one row per drawn output (audit order).

        Every value is a ``str``, ``int``, ``float`` or ``bool``; :meth:`from_rows` reads them back exactly.
        """
        header: dict[str, object] = {"format": DESIGN_FORMAT, "digest": self.digest, "seed": self.seed,
                                     "judge": self.judge, "dimension": self.dimension, "per_model": self.per_model,
                                     "stratify_by_task": self.stratify_by_task, "frame_digest": self.frame_digest,
                                     "n_frame": self.n_frame, "n_drawn": len(self.outputs)}
        rows = [{"position": o.position, "item_id": o.item_id, "model": o.model, "task": o.task,
                 "stratum_size": o.stratum_size, "stratum_drawn": o.stratum_drawn, "inclusion": o.inclusion}
                for o in self.outputs]
        return header, rows

    @classmethod
    def from_rows(cls, header: Mapping[str, object], rows: Sequence[Mapping[str, object]]) -> AuditDesign:
        """Read a design back from :meth:`to_rows`' rows, validating every field and the digest.

        Raises
        ------
        ValueError
            One line naming the damaged row (``header`` or ``output row k``) and field: a missing or mistyped
            field, positions that are not 0..n-1, an output drawn twice, a stratum whose rows disagree on its
            sizes or whose drawn count does not match, an inclusion probability other than ``n_h / N_h``, or a
            digest that does not match the rows (a row changed after it was stored).
        """
        if not isinstance(header, Mapping):
            raise TypeError(f"audit design header must be a mapping, got {type(header).__name__}")
        if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence):
            raise TypeError(f"audit design rows must be a sequence of mappings, got {type(rows).__name__}")
        fmt = _field(header, "format", int, "header")
        if fmt != DESIGN_FORMAT:
            raise ValueError(f"audit design header: format {fmt} is not supported (this version reads {DESIGN_FORMAT})")
        seed = _field(header, "seed", int, "header")
        per_model = _field(header, "per_model", int, "header")
        n_frame = _field(header, "n_frame", int, "header")
        n_drawn = _field(header, "n_drawn", int, "header")
        if len(rows) != n_drawn:
            raise ValueError(f"audit design header: n_drawn is {n_drawn} but there are {len(rows)} output rows")
        outputs = tuple(_output_from_row(row, k) for k, row in enumerate(rows))
        design = cls(seed=seed, judge=_field(header, "judge", str, "header"),
                     dimension=_field(header, "dimension", str, "header"), per_model=per_model,
                     stratify_by_task=_field(header, "stratify_by_task", bool, "header"),
                     frame_digest=_field(header, "frame_digest", str, "header"), n_frame=n_frame, outputs=outputs)
        _check_outputs(design, rows)
        stored = _field(header, "digest", str, "header")
        if stored != design.digest:
            raise ValueError(f"audit design header: digest {stored[:12]}... does not match its rows "
                             f"({design.short_digest}...): the design was changed after it was stored")
        return design


def _sha256(value: object) -> str:
    text = json.dumps(value, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _field(row: Mapping[str, object], name: str, kind: type, where: str) -> object:
    """One field of a stored row, of type ``kind``; a bool is not an int, and an int-valued float is."""
    if name not in row:
        raise ValueError(f"audit design {where}: the field {name!r} is missing")
    value = row[name]
    if kind is int and isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    if kind is int and isinstance(value, np.integer):
        value = int(value)
    if kind is bool and isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value in (0, 1):
        value = bool(value)  # SQLite stores booleans as 0/1
    if kind is float and isinstance(value, (int, np.integer, np.floating)) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"audit design {where}: {name} must be {kind.__name__}, got {value!r}")
    return value


def _output_from_row(row: Mapping[str, object], k: int) -> AuditOutput:
    if not isinstance(row, Mapping):
        raise ValueError(f"audit design output row {k}: must be a mapping, got {type(row).__name__}")
    where = f"output row {k}"
    output = AuditOutput(position=_field(row, "position", int, where), item_id=_field(row, "item_id", str, where),
                         model=_field(row, "model", str, where), task=_field(row, "task", str, where),
                         stratum_size=_field(row, "stratum_size", int, where),
                         stratum_drawn=_field(row, "stratum_drawn", int, where))
    if output.position != k:
        raise ValueError(f"audit design {where}: position {output.position} where {k} was expected (rows must be "
                         "in audit order 0, 1, ...)")
    if not 1 <= output.stratum_drawn <= output.stratum_size:
        raise ValueError(f"audit design {where}: stratum_drawn {output.stratum_drawn} is not in "
                         f"[1, stratum_size {output.stratum_size}]")
    inclusion = _field(row, "inclusion", float, where)
    if not math.isclose(inclusion, output.inclusion, rel_tol=1e-12, abs_tol=1e-15):
        raise ValueError(f"audit design {where}: inclusion {inclusion!r} is not stratum_drawn / stratum_size "
                         f"= {output.stratum_drawn}/{output.stratum_size}")
    return output


def _check_outputs(design: AuditDesign, rows: Sequence[Mapping[str, object]]) -> None:
    """Cross-row checks: no output twice, each stratum's rows agree, and drawn counts equal the rows."""
    if design.per_model < 1:
        raise ValueError(f"audit design header: per_model must be at least 1, got {design.per_model}")
    seen: set[tuple[str, str]] = set()
    strata: dict[tuple[str, str], tuple[int, int, int]] = {}
    for k, output in enumerate(design.outputs):
        key = (output.item_id, output.model)
        if key in seen:
            raise ValueError(f"audit design output row {k}: output {key} is drawn twice")
        seen.add(key)
        stratum = design.stratum_of(output.model, output.task)
        size, drawn, count = strata.get(stratum, (output.stratum_size, output.stratum_drawn, 0))
        if (size, drawn) != (output.stratum_size, output.stratum_drawn):
            raise ValueError(f"audit design output row {k}: stratum {stratum} has size {output.stratum_size} and "
                             f"{output.stratum_drawn} drawn here but {size} and {drawn} on an earlier row")
        if drawn != design.per_model:
            raise ValueError(f"audit design output row {k}: stratum_drawn {drawn} is not per_model "
                             f"{design.per_model}")
        strata[stratum] = (size, drawn, count + 1)
    for stratum, (_, drawn, count) in strata.items():
        if count != drawn:
            raise ValueError(f"audit design: stratum {stratum} should have {drawn} output rows, has {count}")
    if sum(size for size, _, _ in strata.values()) > design.n_frame:
        raise ValueError(f"audit design header: n_frame {design.n_frame} is smaller than its strata's sizes")


# ------------------------------------------------------------------------------------------ the frame


def audit_frame(outputs: pd.DataFrame, ratings: pd.DataFrame, *, judge: str, dimension: str) -> pd.DataFrame:
    """The sampling frame: the outputs ``judge`` rated on ``dimension`` with a value, sorted by model, task, item.

    Columns: item_id, model, task (:data:`NO_TASK` when the outputs have no ``task`` column), judge_value.

    Raises
    ------
    TypeError
        When ``outputs`` or ``ratings`` is not a DataFrame, or judge/dimension are not strings.
    ValueError
        When a column is missing, the judge has no ratings (naming the raters there are), the judge did not rate
        the dimension (naming the dimensions it rated), or no output of the outputs table has such a rating.
    """
    require_frame(outputs, _KEYS, "outputs")
    require_frame(ratings, ("item_id", "model", "rater", "dimension", "value"), "ratings")
    for name, value in (("judge", judge), ("dimension", dimension)):
        if not isinstance(value, str) or not value.strip():
            raise TypeError(f"{name} must be a non-empty string, got {value!r}")
    raters = ratings["rater"].astype(str)
    if not (raters == judge).any():
        known = sorted(raters.unique())
        raise ValueError(f"judge {judge!r} has no ratings; raters are {', '.join(map(repr, known[:20]))}"
                         + (" ..." if len(known) > 20 else ""))
    mine = ratings[raters == judge]
    rated = mine[mine["dimension"].astype(str) == dimension]
    if rated.empty:
        known = sorted(mine["dimension"].astype(str).unique())
        raise ValueError(f"judge {judge!r} did not rate dimension {dimension!r}; it rated "
                         f"{', '.join(map(repr, known))}")
    rated = rated[rated["value"].notna()].astype({"item_id": str, "model": str})
    if rated.duplicated(_KEYS).any():
        key = tuple(rated.loc[rated.duplicated(_KEYS), _KEYS].iloc[0])
        raise ValueError(f"judge {judge!r} rated output {key} twice on {dimension!r}")
    frame = outputs[_KEYS].astype(str).copy()
    frame["task"] = outputs["task"].fillna(NO_TASK).astype(str).to_numpy() if "task" in outputs.columns else NO_TASK
    if frame.duplicated(_KEYS).any():
        key = tuple(frame.loc[frame.duplicated(_KEYS), _KEYS].iloc[0])
        raise ValueError(f"outputs hold output {key} twice")
    frame = frame.merge(rated[[*_KEYS, "value"]].rename(columns={"value": "judge_value"}), on=_KEYS, how="inner")
    if frame.empty:
        raise ValueError(f"no output of the outputs table has a rating by {judge!r} on {dimension!r}")
    return frame.sort_values(["model", "task", "item_id"], kind="stable").reset_index(drop=True)


def frame_digest(frame: pd.DataFrame) -> str:
    """SHA-256 of a frame's sorted ``(model, task, item_id)`` keys (:func:`audit_frame`'s order)."""
    # lists first: iterating pandas' Arrow-backed strings element by element costs ~1 us a value
    keys = sorted(zip(frame["model"].tolist(), frame["task"].tolist(), frame["item_id"].tolist(), strict=True))
    return _sha256(keys)  # JSON writes a tuple as the list it was: the same text, without a copy per key


def _check_whole(value: object, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a whole number, got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be at least {low}, got {value}")
    return int(value)


def draw_audit(outputs: pd.DataFrame, ratings: pd.DataFrame, *, judge: str, dimension: str, per_model: int,
               seed: int, stratify_by_task: bool = False) -> AuditDesign:
    """Draw a random audit of ``judge`` on ``dimension``: ``per_model`` outputs per stratum, in random order.

    Parameters
    ----------
    outputs : DataFrame
        The outputs table (item_id, model, optional task).
    ratings : DataFrame
        Long ratings (item_id, model, rater, dimension, value): the frame is what ``judge`` rated.
    judge, dimension : str
        The rater audited and the dimension (e.g. ``"ca"``) the humans will decide.
    per_model : int
        Outputs drawn per stratum (per model, or per (model, task) with ``stratify_by_task``).
    seed : int
        Seed of ``np.random.default_rng``; the same inputs and seed give the same design.
    stratify_by_task : bool
        Draw ``per_model`` outputs from every (model, task) stratum instead of from every model.

    Returns
    -------
    AuditDesign
        The design (see the module docstring for the sampling rules).

    Raises
    ------
    TypeError, ValueError
        From :func:`audit_frame` (an unknown judge or dimension, naming what exists), for a ``per_model`` or
        ``seed`` that is not a whole number (>= 1, >= 0), or when ``per_model`` is larger than a stratum
        (naming the stratum and its size: an audit larger than the data).
    """
    per_model = _check_whole(per_model, "per_model", 1)
    seed = _check_whole(seed, "seed", 0)
    if not isinstance(stratify_by_task, bool):
        raise TypeError(f"stratify_by_task must be True or False, got {stratify_by_task!r}")
    frame = audit_frame(outputs, ratings, judge=judge, dimension=dimension)
    strata = (frame.groupby(["model", "task"], sort=True) if stratify_by_task
              else frame.groupby("model", sort=True))
    rng = np.random.default_rng(seed)
    drawn: list[tuple[str, str, str, int]] = []
    for key, part in strata:
        size = len(part)
        if per_model > size:
            where = f"model {key[0]!r} in task {key[1]!r}" if stratify_by_task else f"model {_first(key)!r}"
            raise ValueError(f"an audit of {per_model} per {'stratum' if stratify_by_task else 'model'} is larger "
                             f"than the data: {where} has {size} output(s) rated by {judge!r} on {dimension!r}")
        chosen = part.iloc[np.sort(rng.choice(size, per_model, replace=False))]
        drawn += [(i, m, t, size) for i, m, t in zip(chosen["item_id"], chosen["model"], chosen["task"],
                                                      strict=True)]
    order = rng.permutation(len(drawn))
    audit = tuple(AuditOutput(position=p, item_id=drawn[k][0], model=drawn[k][1], task=drawn[k][2],
                              stratum_size=drawn[k][3], stratum_drawn=per_model) for p, k in enumerate(order))
    return AuditDesign(seed=seed, judge=judge, dimension=dimension, per_model=per_model,
                       stratify_by_task=stratify_by_task, frame_digest=frame_digest(frame), n_frame=len(frame),
                       outputs=audit)


def _first(key: object) -> object:
    """A groupby key of one column: pandas gives a 1-tuple when grouping by a list, a scalar otherwise."""
    return key[0] if isinstance(key, tuple) else key
