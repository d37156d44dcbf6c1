"""The team's shared queue state, kept in the store (both backends): skips, assignments and progress.

* **Skips** (:func:`skip_output`, :func:`unskip_output`, :func:`skipped_outputs`): an annotator sets an output
  aside on one dimension; the skip is a row of the store (durable across reloads, visible to the team) until
  they take it back. Skips keep the order they were made in (a per-data-set sequence the store assigns, never a
  clock).
* **Assignments** (:func:`plan_assignments`, :func:`assign`, :func:`assignments`, :func:`clear_assignments`):
  which outputs each annotator is given, so that human-human agreement has data by design (Argilla's task
  distribution gives each record to ``min_submitted`` annotators; LangSmith's annotation queues name reviewers
  per item). The design and its guarantees are :func:`plan_assignments`'s docstring.
* **Progress** (:func:`annotator_progress`): per annotator, outputs assigned, decided, skipped and remaining.

Functions over any store through :meth:`~empathy.labels.sqlite.OverrideStore.transaction` and
:meth:`~empathy.labels.sqlite.OverrideStore.fetch` (portable SQL), as :mod:`empathy.labels.exhibit_list`. With
roles (:mod:`empathy.labels.roles`) a skip needs the right to decide and an assignment the right to assign.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import numpy as np
import pandas as pd

from empathy.identifiers import fold, person_name_problem
from empathy.labels.records import check_text, utc_now
from empathy.labels.schema import ASSIGNMENT_COLUMNS, ORDER_COLUMN, SKIP_COLUMNS
from empathy.labels.sqlite import OverrideStore

#: The defaults of an assignment design: two annotators on a fifth of the outputs.
DEFAULT_K = 2
DEFAULT_OVERLAP = 0.2
_PAIR = ["item_id", "model"]
#: Columns of :func:`annotator_progress`.
PROGRESS_COLUMNS: tuple[str, ...] = ("annotator", "assigned", "decided", "skipped", "remaining")


# ------------------------------------------------------------------------------------------ skips

def skip_output(store: OverrideStore, dataset_id: str, item_id: str, model: str, dimension: str, *, annotator: str,
                reason: str = "") -> int:
    """Set an output aside for ``annotator`` on ``dimension`` (durable, shared); return its place in the data
    set's skip order (skipping it again moves it to the end)."""
    for name, value in (("dataset_id", dataset_id), ("item_id", item_id), ("model", model),
                        ("dimension", dimension), ("annotator", annotator)):
        check_text(name, value)
    if not isinstance(reason, str):
        raise TypeError(f"reason must be a string, got {type(reason).__name__}")
    who = annotator.strip()
    store.require(who, "decide")
    with store.transaction() as connection:
        seq = int(connection.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM skips WHERE dataset_id=?",
                                     (dataset_id,)).fetchone()[0])
        connection.execute(
            f"INSERT INTO skips ({', '.join(SKIP_COLUMNS)}) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (dataset_id, "
            "dimension, annotator, item_id, model) DO UPDATE SET reason=excluded.reason, at=excluded.at, "
            "seq=excluded.seq", (dataset_id, dimension, who, item_id, model, reason.strip(), utc_now(), seq))
    return seq


def unskip_output(store: OverrideStore, dataset_id: str, item_id: str, model: str, dimension: str, *,
                  annotator: str) -> bool:
    """Take a skip back (the output returns to the annotator's queue); False when it was not skipped."""
    who = check_text("annotator", annotator).strip()
    store.require(who, "decide")
    with store.transaction() as connection:
        cursor = connection.execute("DELETE FROM skips WHERE dataset_id=? AND dimension=? AND annotator=? AND "
                                    "item_id=? AND model=?", (dataset_id, dimension, who, item_id, model))
        return cursor.rowcount > 0


def skipped_outputs(store: OverrideStore, dataset_id: str, *, annotator: str | None = None,
                    dimension: str | None = None) -> pd.DataFrame:
    """The data set's skips (of one annotator and dimension when given), in the order they were made.

    Columns: :data:`~empathy.labels.schema.SKIP_COLUMNS` without ``dataset_id``.
    """
    conditions, params = ["dataset_id=?"], [dataset_id]
    for column, value in (("annotator", annotator), ("dimension", dimension)):
        if value is not None:
            conditions.append(f"{column}=?")
            params.append(value.strip() if column == "annotator" else value)
    columns = [c for c in SKIP_COLUMNS if c != "dataset_id"]
    frame = pd.DataFrame(store.fetch(f"SELECT {', '.join(columns)} FROM skips WHERE {' AND '.join(conditions)} "
                                     "ORDER BY seq, annotator, item_id, model", params), columns=columns)
    frame[ORDER_COLUMN] = frame[ORDER_COLUMN].astype("int64")
    return frame


# ------------------------------------------------------------------------------------------ assignments

@dataclass(frozen=True)
class AssignmentPlan:
    """An assignment design: which annotator gets which output, in which order (see :func:`plan_assignments`).

    ``rows``: one per (annotator, output): ``annotator, item_id, model, position`` (the annotator's order, from
    0), ``copies`` (how many annotators share the output: ``k`` in the overlap set, else 1). ``digest``: 12 hex
    digits of SHA-256 over the parameters and every row (the design's name in the store).
    """

    rows: pd.DataFrame
    k: int
    overlap: float
    seed: int
    n_outputs: int
    n_overlap: int
    digest: str

    def loads(self) -> pd.Series:
        """Outputs per annotator (all annotators of the design, also those given none)."""
        return self.rows.groupby("annotator")["item_id"].size()

    def pair_counts(self) -> pd.DataFrame:
        """For each pair of annotators, the outputs both were given (``annotator_a < annotator_b``, ``shared``)."""
        shared = self.rows[self.rows["copies"] > 1]
        pairs = shared.merge(shared, on=_PAIR, suffixes=("_a", "_b"))
        pairs = pairs[pairs["annotator_a"] < pairs["annotator_b"]]
        return (pairs.groupby(["annotator_a", "annotator_b"]).size().rename("shared").reset_index())


def _output_keys(outputs: pd.DataFrame | Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The distinct ``(item_id, model)`` pairs, sorted (so the design depends on the set, not the row order)."""
    if isinstance(outputs, pd.DataFrame):
        for column in _PAIR:
            if column not in outputs.columns:
                raise ValueError(f"assign: outputs lack the column {column!r}")
        pairs = zip(outputs["item_id"].astype(str), outputs["model"].astype(str), strict=True)
    else:
        pairs = []
        for position, key in enumerate(outputs):
            if not isinstance(key, (tuple, list)) or len(key) != 2:
                raise TypeError(f"assign: output {position} is {key!r}, not an (item_id, model) pair")
            pairs.append((str(key[0]), str(key[1])))
    return sorted(set(pairs))


def _check_design(annotators: Sequence[str], k: object, overlap: object, seed: object) -> list[str]:
    """The annotators (stripped, distinct, sorted) after checking every parameter of a design."""
    if isinstance(annotators, str):
        raise TypeError("assign: annotators is one string; give a list of names")
    people = sorted({check_text("annotator", name).strip() for name in annotators})
    if not people:
        raise ValueError("assign: no annotators given")
    seen: dict[str, str] = {}
    for person in people:
        problem = person_name_problem(person)
        if problem:
            raise ValueError(f"assign: {problem}")
        # one person typed twice (alice, ALICE, ａｌｉｃｅ) would get two shares of the outputs
        if fold(person) in seen:
            raise ValueError(f"assign: {seen[fold(person)]!r} and {person!r} name one annotator (names are compared "
                             "ignoring case and width); give each person once")
        seen[fold(person)] = person
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= len(people):
        raise ValueError(f"assign: k (annotators per overlapping output) must be an integer from 1 to the "
                         f"{len(people)} annotators, got {k!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int | float) or not 0.0 <= float(overlap) <= 1.0:
        raise ValueError(f"assign: overlap (the share of outputs given to k annotators) must be in [0, 1], "
                         f"got {overlap!r}")
    if float(overlap) > 0 and k < 2:
        raise ValueError("assign: an overlap needs k >= 2 annotators per overlapping output")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= int(seed) < 2 ** 63:
        raise ValueError(f"assign: seed must be an integer in [0, 2**63), got {seed!r}")
    return people


def _pick(load: np.ndarray, shared: np.ndarray, chosen: list[int], priority: np.ndarray) -> int:
    """The next annotator for an output: the least loaded; among those, for the first place the one with a partner
    (among the least loaded) they share the fewest outputs with, for a later place the one sharing the fewest
    outputs with the annotators already chosen; then the first in the rotating random priority."""
    if chosen:
        together = shared[:, chosen].sum(axis=1)
    else:
        barred = np.eye(len(load), dtype=bool) | (load[None, :] > load.min())
        together = np.where(barred, np.iinfo(np.int64).max, shared).min(axis=1)
    order = np.lexsort((priority, together, load))
    return int(next(a for a in order if a not in chosen))


def plan_assignments(outputs: pd.DataFrame | Sequence[tuple[str, str]], annotators: Sequence[str], *,
                     k: int = DEFAULT_K, overlap: float = DEFAULT_OVERLAP, seed: int = 0) -> AssignmentPlan:
    """A deterministic, balanced assignment of outputs to annotators with an overlap quota (nothing stored).

    The design, with ``N`` distinct outputs and ``A`` annotators:

    1. The outputs (sorted ``(item_id, model)`` pairs, so the row order of the data does not matter) are put in
       one random order, ``np.random.default_rng(seed).permutation(N)``.
    2. The first ``ceil(overlap * N)`` outputs of that order form the *overlap set*: each is given to ``k``
       distinct annotators; every other output to one. ``overlap = 1`` gives every output to ``k`` annotators
       (Argilla's ``min_submitted = k``), ``overlap = 0`` splits the outputs among the annotators.
    3. Outputs are given one by one in that order; each place goes to the annotator with the fewest outputs so
       far; among those, to spread the pairs of an overlapping output, the first place goes to one who has a
       little-used partner (the fewest outputs shared with any other least-loaded annotator) and each later
       place to the one sharing the fewest outputs with those already chosen for it; then to the first in a
       random priority order (drawn from the same generator) rotated by one at each output.
    4. Each annotator's outputs are in the order of step 1 (``position`` 0, 1, ...): the overlap set first, so
       agreement data come in from the start, and in a random order that says nothing about the judges.

    Guarantees (tested): each output of the overlap set has exactly ``k`` distinct annotators and every other
    output exactly one; the annotators' numbers of outputs differ by at most one, in the overlap set and in
    total (step 3 always fills the least loaded); the same outputs, annotators, ``k``, ``overlap`` and ``seed``
    give the same design and digest, whatever the order they are given in. Pairs are spread by step 3's second
    key, measured (not proven) over 3 to 8 annotators, ``k`` 2 and 3, 10 to 500 overlapping outputs: the pair
    counts differ by at most 3, and every pair shares an output once the overlap set offers two places per pair
    (``m * k * (k - 1) / 2 >= A * (A - 1)``); e.g. 4 annotators, ``k = 2``, 60 overlapping outputs: each of the
    6 pairs shares 10. Time grows as ``N * k * A`` (100,000 outputs, 10 annotators: about 2 s).

    Raises
    ------
    ValueError
        For no outputs or annotators, ``k`` outside ``1..A``, ``overlap`` outside ``[0, 1]`` (or above 0 with
        ``k = 1``), or a ``seed`` outside ``[0, 2**63)``.
    """
    people = _check_design(annotators, k, overlap, seed)
    keys = _output_keys(outputs)
    if not keys:
        raise ValueError("assign: no outputs given")
    rng = np.random.default_rng(int(seed))
    order = rng.permutation(len(keys))
    priority = rng.permutation(len(people))
    n_overlap = min(len(keys), math.ceil(float(overlap) * len(keys) - 1e-9))
    load = np.zeros(len(people), dtype=np.int64)
    shared = np.zeros((len(people), len(people)), dtype=np.int64)
    rows: list[tuple[str, str, str, int]] = []
    for step, index in enumerate(order):
        copies = k if step < n_overlap else 1
        rotated = (priority + step) % len(people)
        chosen: list[int] = []
        for _ in range(copies):
            chosen.append(_pick(load, shared, chosen, rotated))
        for a in chosen:
            load[a] += 1
            for b in chosen:
                shared[a, b] += a != b
            rows.append((people[a], *keys[index], copies))
    frame = pd.DataFrame(rows, columns=["annotator", "item_id", "model", "copies"])
    frame.insert(3, "position", frame.groupby("annotator").cumcount().astype(int))
    payload = {"k": k, "overlap": float(overlap), "seed": int(seed), "annotators": people,
               "rows": frame.to_numpy().tolist()}
    digest = hashlib.sha256(json.dumps(payload, default=int).encode("utf-8")).hexdigest()[:12]
    return AssignmentPlan(frame, k, float(overlap), int(seed), len(keys), n_overlap, digest)


def assign(store: OverrideStore, dataset_id: str, outputs: pd.DataFrame | Sequence[tuple[str, str]],
           annotators: Sequence[str], *, k: int = DEFAULT_K, overlap: float = DEFAULT_OVERLAP, seed: int = 0,
           by: str = "", replace: bool = False) -> AssignmentPlan:
    """Plan (:func:`plan_assignments`) and store an assignment design for a data set; return the plan.

    One transaction. A data set holds one design at a time: when it already has one, ``replace=True`` replaces
    it (decisions and skips stay), otherwise ``ValueError`` names the design in place. ``by`` (who assigns) is
    recorded, and with roles must be allowed to assign (an adjudicator).
    """
    check_text("dataset_id", dataset_id)
    store.require(by, "assign")
    plan = plan_assignments(outputs, annotators, k=k, overlap=overlap, seed=seed)
    at = utc_now()
    values = [(dataset_id, row.annotator, row.item_id, row.model, int(row.position), int(row.copies), plan.digest,
               plan.seed, plan.k, plan.overlap, by.strip(), at) for row in plan.rows.itertuples(index=False)]
    with store.transaction() as connection:
        held = connection.execute("SELECT design, COUNT(*) FROM assignments WHERE dataset_id=? GROUP BY design",
                                  (dataset_id,)).fetchall()
        if held and not replace:
            raise ValueError(f"assign: {dataset_id} already has the assignment design {held[0][0]} "
                             f"({sum(int(n) for _, n in held)} rows); replace it explicitly (replace=True)")
        connection.execute("DELETE FROM assignments WHERE dataset_id=?", (dataset_id,))
        connection.executemany(f"INSERT INTO assignments ({', '.join(ASSIGNMENT_COLUMNS)}) VALUES "
                               f"({', '.join('?' for _ in ASSIGNMENT_COLUMNS)})", values)
    return plan


def assignments(store: OverrideStore, dataset_id: str, *, annotator: str | None = None) -> pd.DataFrame:
    """The data set's stored assignments (of one annotator when given), by annotator and position.

    Columns: :data:`~empathy.labels.schema.ASSIGNMENT_COLUMNS` without ``dataset_id``.
    """
    conditions, params = ["dataset_id=?"], [dataset_id]
    if annotator is not None:
        conditions.append("annotator=?")
        params.append(annotator.strip())
    columns = [c for c in ASSIGNMENT_COLUMNS if c != "dataset_id"]
    frame = pd.DataFrame(store.fetch(f"SELECT {', '.join(columns)} FROM assignments WHERE "
                                     f"{' AND '.join(conditions)} ORDER BY annotator, position", params),
                         columns=columns)
    for column in ("position", "copies", "seed", "k"):
        frame[column] = frame[column].astype("int64")
    frame["overlap"] = frame["overlap"].astype(float)
    return frame


def clear_assignments(store: OverrideStore, dataset_id: str, *, by: str = "") -> int:
    """Remove a data set's assignment design (decisions and skips stay); return the rows removed."""
    store.require(by, "assign")
    with store.transaction() as connection:
        return int(connection.execute("DELETE FROM assignments WHERE dataset_id=?", (dataset_id,)).rowcount)


# ------------------------------------------------------------------------------------------ progress

def _pairs(frame: pd.DataFrame, outputs: AbstractSet[tuple[str, str]] | None) -> pd.DataFrame:
    """``annotator, item_id, model`` of ``frame``, distinct, kept to ``outputs`` when given."""
    pairs = frame[["annotator", *_PAIR]].astype(str).drop_duplicates()
    if outputs is not None:
        keep = np.array([pair in outputs for pair in zip(pairs["item_id"], pairs["model"], strict=True)],
                        dtype=bool)
        pairs = pairs[keep]
    return pairs


def annotator_progress(store: OverrideStore, dataset_id: str, *, dimension: str | None = None,
                       outputs: pd.DataFrame | AbstractSet[tuple[str, str]] | None = None,
                       decisions: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per annotator: outputs ``assigned``, ``decided``, ``skipped`` and ``remaining`` (what Relabel and Data show).

    ``decided``: outputs the annotator decided in their own name (role ``annotator``; on ``dimension`` when given;
    assigned or not; stale ones included: the store's record of work done). ``skipped``: outputs they skipped (on
    ``dimension`` when given) and have not decided. ``remaining``: assigned outputs neither decided nor skipped.
    ``outputs`` (the loaded data, or the set of its ``(item_id, model)`` pairs when already at hand: a set is not
    built again) keeps the counts to its outputs. One row per annotator with an assignment, a decision or a skip,
    sorted by name; columns :data:`PROGRESS_COLUMNS`. ``decisions``: the data set's decisions as
    :meth:`OverrideStore.decisions` reads them, when at hand (a page's held ledger,
    :attr:`empathy.labels.ledger.Ledger.decisions`: read from the store again, 30,000 rows cost a page 30 MiB
    and tens of milliseconds at each full run).
    """
    keys = outputs if outputs is None or isinstance(outputs, AbstractSet) else set(_output_keys(outputs))
    if decisions is None:
        decisions = store.decisions(dataset_id)
    decisions = decisions[decisions["role"] == "annotator"]
    if dimension is not None:
        decisions = decisions[decisions["dimension"] == dimension]
    decided = _pairs(decisions, keys)
    skipped = _pairs(skipped_outputs(store, dataset_id, dimension=dimension), keys)
    assigned = _pairs(assignments(store, dataset_id), keys)

    def keyed(frame: pd.DataFrame) -> set[tuple[str, str, str]]:
        return set(zip(frame["annotator"], frame["item_id"], frame["model"], strict=True))

    done, aside, given = keyed(decided), keyed(skipped), keyed(assigned)
    aside -= done
    rows = []
    for person in sorted({key[0] for key in done | aside | given}):
        mine_given = {key for key in given if key[0] == person}
        rows.append({"annotator": person, "assigned": len(mine_given),
                     "decided": sum(key[0] == person for key in done),
                     "skipped": sum(key[0] == person for key in aside),
                     "remaining": len(mine_given - done - aside)})
    return pd.DataFrame(rows, columns=list(PROGRESS_COLUMNS)).astype(
        {c: "int64" for c in PROGRESS_COLUMNS[1:]})
