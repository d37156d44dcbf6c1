"""The ledger: every human decision of a data set, sorted against the outputs now loaded, under a label rule.

* :func:`ledger_status` / :func:`open_ledger` — each decision is *fresh* (its text is unchanged), *stale* (the
  output's reference or generation changed since: listed, not applied until confirmed) or *orphaned* (the
  output is gone: kept, listed, not applied). :class:`Ledger` holds them and what applies: the fresh decisions
  reduced by the label rule (:func:`empathy.labels.rules.effective_overrides`), one override per rating.
  Every count a page shows and every metric with overrides goes through :attr:`Ledger.applied`.
* :func:`apply_overrides` / :func:`apply_ledger` — the effective ratings: each rating replaced by its override.
* :func:`annotator_ratings`, :func:`adjudication_list`, :func:`human_ratings` — each annotator as their own
  rater (kind ``human``), the disagreements to adjudicate, the humans' latest verdict as one rater. Agreement
  statistics over them live above this layer (:func:`empathy.review.human_agreement`).
* :func:`classify_rerun` — a judge re-run meets the ledger: every decision is *confirmed* (the new judge now
  agrees with the human), *still disputed*, *stale* or *orphaned*.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import weakref
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.arrays import ArrowStringArray

from empathy.labels.backends import open_for_reading
from empathy.labels.decisions import DECISION_KEY, decision_count
from empathy.labels.records import dataset_id, dataset_name, empty_decisions, in_commit_order, output_hashes
from empathy.labels.rules import Effective, effective_overrides, label_rule_field
from empathy.labels.schema import KEY_COLUMNS, ORDER_COLUMN
from empathy.labels.sqlite import OverrideStore
from empathy.vocabulary import LABEL_RULES

_ITEM_KEY = ["item_id", "model", "dimension"]


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

    A decision is tied to :func:`empathy.labels.records.text_hash` of the reference and generation it was made on; a
    decision stored without a hash (a version 1 ledger imported without the data) counts as stale, so it is
    applied only after someone confirms it on the current text. ``hashes``: the outputs'
    :func:`empathy.labels.records.output_hashes` when already computed. When every decision is fresh, ``fresh``
    is ``decisions`` itself (its index reset when it is not ``0..n-1``): like every frame of a ledger, not to be
    modified.
    """
    if decisions is None or decisions.empty:
        empty = empty_decisions()
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
    if fresh.all():  # the usual case: every decision on the text it was made on (no selection of every column)
        whole = decisions.reset_index(drop=True) if not isinstance(decisions.index, pd.RangeIndex) \
            or decisions.index.start != 0 or decisions.index.step != 1 else decisions
        return LedgerStatus(whole, whole.iloc[0:0], whole.iloc[0:0])
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
        """Rows per judge label: applied overrides, stale, orphaned and unresolved (what a metric replaces; a
        person reads :attr:`decision_counts`)."""
        return {"applied": len(self.applied), "stale": len(self.status.stale),
                "orphaned": len(self.status.orphaned), "unresolved": len(self.unresolved)}

    @cached_property
    def decision_counts(self) -> dict[str, int]:
        """The same four counts in human decisions (:func:`empathy.labels.decisions.decision_count`): a decision
        applied to two judges is 1; ``unresolved`` counts the disagreements per output and dimension. A ledger
        brought up to date by :func:`updated_ledger` from one whose counts were asked for counts only the rows that
        changed (:attr:`_decision_rows`)."""
        return {"applied": decision_count(self.applied), "stale": decision_count(self.status.stale),
                "orphaned": decision_count(self.status.orphaned), "unresolved": decision_count(self.unresolved)}

    @cached_property
    def decision_total(self) -> int:
        """Every human decision of the data set, whatever its status (:func:`~empathy.labels.decisions.decision_count`
        of :attr:`decisions`: the app's sidebar shows it). A ledger brought up to date by :func:`updated_ledger` from
        one whose total was asked counts only the rows that changed (:attr:`_all_decision_rows`)."""
        return len(self._all_decision_rows)

    @cached_property
    def _all_decision_rows(self) -> Counter:
        """How many rows of :attr:`decisions` each decision has (:func:`_decision_keys`)."""
        return _decision_keys(self.decisions)

    @cached_property
    def _decision_rows(self) -> dict[str, Counter]:
        """Per frame of :attr:`decision_counts`, how many rows each decision has (its key as
        :func:`~empathy.labels.decisions.decision_count` compares it): the counts are the numbers of keys."""
        return {name: _decision_keys(frame) for name, frame in self._counted_frames().items()}

    def _counted_frames(self) -> dict[str, pd.DataFrame]:
        return {"applied": self.applied, "stale": self.status.stale, "orphaned": self.status.orphaned,
                "unresolved": self.unresolved}

    @property
    def applied_decisions(self) -> int:
        """Human decisions in effect (what the app and the CLI say "N decisions" of)."""
        return self.decision_counts["applied"]

    @cached_property
    def decided(self) -> int:
        """Ratings anyone decided, whatever their status (a rating two annotators decided counts once).

        ``counts["applied"]`` of them apply; the others are stale, orphaned or unresolved. Equal to
        :meth:`empathy.labels.sqlite.OverrideStore.count` of the data set, read from the same decisions.
        """
        if self.decisions.empty:
            return 0
        return int(len(self.decisions[list(KEY_COLUMNS)].drop_duplicates()))

    @cached_property
    def digest(self) -> str:
        """12 hex digits of SHA-256 over the applied overrides (key, value, text hash), order-free.

        Names *which* human labels a results table rests on, not only how many (the signature's ``ledger``
        field); the empty ledger has the digest of nothing. Each applied row is its fields joined by U+001F
        (a float as ``repr``, anything else as ``str``), the rows sorted and each ended by U+001E. Computed
        once per ledger (the frames are not to be modified); a ledger brought up to date by
        :func:`updated_ledger` sorts only the rows that changed into the previous ledger's.
        """
        rows = self._digest_rows.ordered
        text = "\x1e".join(rows) + "\x1e" if rows else ""
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    @cached_property
    def _digest_rows(self) -> _DigestRows:
        return _DigestRows.of(self.applied)

    def signature_fields(self) -> dict[str, str]:
        """The signature's fields for this ledger: the label rule and the digest of the applied overrides."""
        key, value = label_rule_field(self.rule)
        return {key: value, "ledger": self.digest}

    def summary(self) -> str:
        """One line for the CLI and the app, in decisions, e.g. ``overrides: 100 decisions applied to 200 judge
        labels (labels: latest), 2 stale (...), 1 orphaned (...)``."""
        counts = self.decision_counts
        line = (f"overrides: {_plural(counts['applied'], 'decision')} applied to "
                f"{_plural(self.counts['applied'], 'judge label')} (labels: {self.rule}), {counts['stale']} stale "
                f"(text changed; not applied until confirmed), {counts['orphaned']} orphaned (output gone; kept)")
        if counts["unresolved"]:
            line += f", {counts['unresolved']} unresolved disagreements (judge label kept)"
        if self.adopted:
            line += f", {self.adopted} moved from a version 1 store"
        return line


@dataclass(frozen=True)
class _DigestRows:
    """The rows :attr:`Ledger.digest` hashes: each applied row's text, sorted.

    Kept without the rating keys: a ledger brought up to date finds the texts to take out from the previous
    ledger's rows of the changed keys (by key, each row's text held a second time with a tuple of its key's four
    texts: 2.5 MiB for 6,000 applied rows)."""

    ordered: list[str]

    @staticmethod
    def texts(applied: pd.DataFrame) -> list[str]:
        """Each applied row's text (its fields joined by U+001F), in the rows' order."""
        if not len(applied):
            return []
        columns = [c for c in ("item_id", "model", "rater", "dimension", "value", "text_hash") if c in applied.columns]
        # column by column, not row by row: iterating an Arrow-backed column element by element was most of the
        # cost (a 6,000-row ledger's digest on every Relabel key)
        fields = [[_digest_text(value) for value in _python_values(applied[column])] for column in columns]
        return ["\x1f".join(parts) for parts in zip(*fields, strict=True)]

    @classmethod
    def of(cls, applied: pd.DataFrame) -> _DigestRows:
        return cls(sorted(cls.texts(applied)))

    def updated(self, removed: Sequence[pd.DataFrame], added: pd.DataFrame) -> _DigestRows | None:
        """These rows, changed in place and returned, with the rows of ``removed`` (the changed rating keys' applied
        rows before, as :func:`_spliced` hands them back) taken out and ``added`` (their applied rows now) put in:
        O(changes) look-ups and insertions into the sorted texts. ``None`` when a removed row's text is not among
        them (the digest is then computed again from the applied rows: never a digest of rows that are not the
        ledger's)."""
        ordered = self.ordered
        for text in (text for frame in removed for text in self.texts(frame)):
            at = bisect.bisect_left(ordered, text)
            if at == len(ordered) or ordered[at] != text:
                return None
            del ordered[at]
        for text in self.texts(added):
            bisect.insort(ordered, text)
        return self


def _decision_keys(rows: pd.DataFrame) -> Counter:
    """How many rows of ``rows`` each decision has, by the columns and text that
    :func:`~empathy.labels.decisions.decision_count` compares (its count is the number of keys)."""
    if rows is None or not len(rows):
        return Counter()
    # column by column (a selection of several columns copies them; a text column without a missing value needs no
    # conversion): the same texts as ``rows[columns].astype(str)``
    columns = [column for column in DECISION_KEY if column in rows.columns]
    counts: Counter = Counter()
    # a chunk of rows at a time, each decision one text (its fields length-prefixed, so two different decisions
    # never make one key): 30,000 rows as tuples of seven texts, all at once, were 9 MiB of Relabel's peak. Kept as
    # the text's 128-bit BLAKE2b digest (49 bytes against the text's 140 for a team's decision: 1.5 MiB at 10,000
    # decisions); two decisions sharing one would need 2^64 decisions for even odds.
    for start in range(0, len(rows), _KEYED_ROWS_PER_CHUNK):
        chunk = rows.iloc[start:start + _KEYED_ROWS_PER_CHUNK]
        counts.update(_key_digest("".join(f"{len(text)}:{text}" for text in fields))
                      for fields in zip(*(_texts(chunk[column]) for column in columns), strict=True))
    return counts


def _key_digest(text: str) -> bytes:
    # surrogatepass: a lone surrogate in a name read from a file is hashed, not an error
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


#: Rows :func:`_decision_keys` turns into Python texts at once.
_KEYED_ROWS_PER_CHUNK = 2048


def _patched_counts(after: Counter, removed: pd.DataFrame, added: pd.DataFrame) -> Counter:
    """``after`` (:func:`_decision_keys` of a frame), changed in place to count the frame after its rows ``removed``
    were taken out and ``added`` put in; returned."""
    for key, count in _decision_keys(removed).items():
        left = after[key] - count
        if left > 0:
            after[key] = left
        else:
            del after[key]
    after.update(_decision_keys(added))
    return after


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def ledger_from_decisions(name: str, decisions: pd.DataFrame, outputs: pd.DataFrame, rule: str = "latest",
                          *, adopted: int = 0, hashes: Mapping[tuple[str, str], str] | None = None) -> Ledger:
    """:class:`Ledger` of already-read decisions (see :func:`open_ledger`)."""
    status = ledger_status(decisions, outputs, hashes)
    effective = effective_overrides(status.fresh, rule)
    return Ledger(name, rule, decisions, status, effective.effective, effective.unresolved, adopted)


def updated_ledger(ledger: Ledger, keys: pd.DataFrame, rows: pd.DataFrame, outputs: pd.DataFrame, *,
                   hashes: Mapping[tuple[str, str], str] | None = None) -> Ledger:
    """``ledger`` with the decisions ``keys`` replaced by ``rows``: what the store changed since it was read.

    ``keys`` and ``rows`` are :meth:`empathy.labels.sqlite.OverrideStore.changed_decisions` after the store's
    version the ledger was read at (a key without a row was removed). The result equals :func:`open_ledger` of
    the store now (every frame, row order and digest; ``tests/test_ledger_update.py``), but only the changed
    decisions are sorted against the outputs (fresh, stale, orphaned: each row's own text hash) and only the
    ratings they decide are reduced by the label rule again (one override per rating key: a key's override
    depends on that key's decisions alone); the other rows are kept as they were, in their order: the changed
    rows are found among the rows of the changed items only and the new ones inserted where they sort (no
    frame is sorted or indexed whole, so a decision costs about the same whatever the ledger's size).
    ``hashes``: the outputs' :func:`empathy.labels.records.output_hashes`, as for :func:`open_ledger`.
    """
    if keys.empty:
        return ledger
    row_key = [*KEY_COLUMNS, "annotator", "role"]
    changed_rows = _Keys.of(keys, row_key)
    # the total asked for before (the sidebar shows it after every key): patched from the rows taken out and put in
    total = ledger.__dict__.pop("_all_decision_rows", None)
    taken: list[pd.DataFrame] = []
    decisions = _spliced(ledger.decisions, rows, changed_rows, row_key, removed=taken if total is not None else None)
    if decisions.empty:  # every decision withdrawn: the empty ledger's own frames
        return ledger_from_decisions(ledger.name, decisions, outputs, ledger.rule, adopted=ledger.adopted,
                                     hashes=hashes)
    hashes = output_hashes(outputs) if hashes is None else hashes
    now = ledger_status(rows, outputs, hashes)
    removed: dict[str, list[pd.DataFrame]] = {}  # each counted frame's rows taken out, for the decision counts
    # every decision fresh before and after (the usual case): the fresh decisions are the decisions (the same rows
    # in the same order), spliced once
    every_fresh = not (len(ledger.status.stale) or len(ledger.status.orphaned) or len(now.stale) or len(now.orphaned))
    parts = [decisions if name == "fresh" and every_fresh else
             _spliced(old, new, changed_rows, row_key, empty=decisions.iloc[0:0],
                      removed=removed.setdefault(name, []) if name != "fresh" else None)
             for name, old, new in zip(("fresh", "stale", "orphaned"),
                                       (ledger.status.fresh, ledger.status.stale, ledger.status.orphaned),
                                       (now.fresh, now.stale, now.orphaned), strict=True)]
    status = LedgerStatus(*parts)
    changed_ratings = _Keys.of(keys, list(KEY_COLUMNS))
    fresh = status.fresh
    touched = _take_rows(fresh, np.flatnonzero(changed_ratings.rows_in(fresh)))
    effective = _few_reduced(touched, ledger.rule)
    applied = _spliced(ledger.applied, effective.effective, changed_ratings, list(KEY_COLUMNS),
                       removed=removed.setdefault("applied", []))
    whole = applied.empty
    if whole:  # nothing applies: the whole reduction, as open_ledger computes it (its empty frame)
        applied = effective_overrides(fresh, ledger.rule).effective
    unresolved = _spliced(ledger.unresolved, effective.unresolved, changed_ratings, list(KEY_COLUMNS),
                          empty=pd.DataFrame(columns=[*KEY_COLUMNS, "decisions"]),
                          removed=removed.setdefault("unresolved", []))
    updated = Ledger(ledger.name, ledger.rule, decisions, status, applied, unresolved, ledger.adopted)
    if total is not None:
        updated.__dict__["_all_decision_rows"] = _patched_counts(total, *taken, rows)
    if not whole:
        _remember_delta(applied, ledger.applied, keys[list(KEY_COLUMNS)].drop_duplicates(), effective.effective)
    # What the previous ledger carried is moved to this one and patched in place, not copied: a copy of a dict of
    # every applied row at every key is work in proportion to the ledger, and its garbage brings the collector's
    # full passes over every object of the process. Taken from the previous ledger (its __dict__), so that it is
    # computed again from its own frames should anyone ask it (its digest and counts, once computed, stay).
    digest_rows = ledger.__dict__.pop("_digest_rows", None)
    if digest_rows is not None:  # the previous digest's sorted rows, with the changed keys' replaced
        chosen = _take_rows(applied, np.flatnonzero(changed_ratings.rows_in(applied)))
        digest_rows = digest_rows.updated(removed["applied"], chosen)
        if digest_rows is not None:
            updated.__dict__["_digest_rows"] = digest_rows
    if "decision_counts" in ledger.__dict__ and not whole:
        # the counts asked for before (a page shows them after every key): the changed rows taken out and put in
        added = {"applied": effective.effective, "stale": now.stale, "orphaned": now.orphaned,
                 "unresolved": effective.unresolved}
        counters = ledger._decision_rows
        del ledger.__dict__["_decision_rows"]
        rows_by_decision = {name: _patched_counts(counter, *removed[name], added[name])
                            for name, counter in counters.items()}
        updated.__dict__["_decision_rows"] = rows_by_decision
        updated.__dict__["decision_counts"] = {name: len(counter) for name, counter in rows_by_decision.items()}
    return updated


#: How each applied frame :func:`updated_ledger` spliced came about, by the frame (held weakly: a frame gone is
#: forgotten): the frame, the serial of the frame it was spliced from, the rating keys that changed and their
#: applied rows now. The frame spliced from is named by its serial (:func:`frame_serial`), not held: the server
#: drops the ledger before at each key, and a consumer that located it must still know this frame is its successor.
_APPLIED_DELTAS: dict[int, tuple[weakref.ref, int, pd.DataFrame, pd.DataFrame]] = {}
#: The serial of each frame numbered by :func:`frame_serial` while it is alive (by ``id``; the entry goes with it).
_SERIALS: dict[int, tuple[weakref.ref, int]] = {}
_NEXT_SERIAL = itertools.count(1)


def frame_serial(frame: pd.DataFrame) -> int:
    """A number for ``frame`` that no other frame of this process ever gets (numbered on first use, kept while the
    frame is alive): what :func:`applied_delta` names the frame an applied frame was spliced from by."""
    key = id(frame)
    found = _SERIALS.get(key)
    if found is not None and found[0]() is frame:
        return found[1]
    serial = next(_NEXT_SERIAL)
    # the entry is removed when the frame is freed, before its id can be another frame's
    _SERIALS[key] = (weakref.ref(frame, lambda _ref, key=key: _SERIALS.pop(key, None)), serial)
    return serial


@dataclass(frozen=True)
class AppliedDelta:
    """How :func:`updated_ledger` made an applied frame (:func:`applied_delta`): ``previous``, the
    :func:`frame_serial` of the previous ledger's applied frame it was spliced from; ``keys``, the rating keys
    (:data:`~empathy.labels.schema.KEY_COLUMNS`) whose rows were replaced; ``rows``, their rows in the new frame
    (every row of those keys; the other rows are the previous frame's)."""

    previous: int
    keys: pd.DataFrame
    rows: pd.DataFrame


def _remember_delta(applied: pd.DataFrame, previous: pd.DataFrame, keys: pd.DataFrame, rows: pd.DataFrame) -> None:
    for key in [key for key, (ref, *_rest) in _APPLIED_DELTAS.items() if ref() is None]:
        del _APPLIED_DELTAS[key]
    _APPLIED_DELTAS[id(applied)] = (weakref.ref(applied), frame_serial(previous), keys, rows)


def applied_delta(applied: pd.DataFrame | None) -> AppliedDelta | None:
    """How :func:`updated_ledger` made the applied overrides ``applied`` (a :attr:`Ledger.applied`, not to be
    modified), whether or not the frame it was spliced from is still alive; ``None`` for any other frame. A
    consumer that kept what it derived from a frame (and its :func:`frame_serial`) redoes only the changed keys
    when ``previous`` is that serial."""
    if applied is None:
        return None
    found = _APPLIED_DELTAS.get(id(applied))
    if found is None or found[0]() is not applied:
        return None
    return AppliedDelta(found[1], found[2], found[3])


#: Up to how many rows :func:`_few_reduced` reduces in Python (more: :func:`effective_overrides` itself).
_FEW = 64


def _few_reduced(decisions: pd.DataFrame, rule: str) -> Effective:
    """:func:`empathy.labels.rules.effective_overrides` of ``decisions`` under ``rule``: in Python for a few rows (a
    key's, :func:`_reduced_in_python`), else the library's."""
    found = _reduced_in_python(decisions, rule)
    return effective_overrides(decisions, rule) if found is None else found


def _reduced_in_python(decisions: pd.DataFrame, rule: str) -> Effective | None:
    """:func:`empathy.labels.rules.effective_overrides` of a few ``decisions`` (a key's rows) under ``rule``, the
    same frames, found in Python. The library call's sorts, group-bys and merges cost milliseconds each even for two
    rows, at every key (30 ms under ``latest``, 70 under ``majority`` and ``adjudicated`` on this project's
    machines).

    In the store's commit order (``seq``, then ``updated_at``, then the rows' order:
    :func:`~empathy.labels.records.in_commit_order`): ``latest`` keeps each rating key's last decision; ``majority``
    and ``adjudicated`` its last adjudication if any, else the last annotator's row of the value chosen by strictly
    more annotators' rows than any other (``majority``) or by all of them (``adjudicated``), else the key is
    unresolved and listed with each annotator's value. ``n_annotators``: the annotators who decided the key; the
    keys sorted. ``None`` (the caller uses the library) for more than :data:`_FEW` rows, a frame without the
    store's columns, a key or a clock that is not text, or a missing order or value."""
    order_columns = [c for c in (ORDER_COLUMN, "updated_at") if c in decisions.columns]
    if (not len(decisions) or len(decisions) > _FEW or order_columns != [ORDER_COLUMN, "updated_at"]
            or not {"role", "annotator", "value", *KEY_COLUMNS} <= set(decisions.columns)
            or rule not in LABEL_RULES):
        return None
    seqs, stamps, values = (decisions[c].tolist() for c in (ORDER_COLUMN, "updated_at", "value"))
    keys = list(zip(*(decisions[c].tolist() for c in KEY_COLUMNS), strict=True))
    if not _plain(seqs, stamps, values if rule != "latest" else [], keys):
        return None
    roles, annotators = decisions["role"].tolist(), decisions["annotator"].tolist()
    in_order = sorted(range(len(keys)), key=lambda k: (seqs[k], stamps[k]))  # stable: ties keep their order
    people: dict[tuple, set] = {}
    for key, role, annotator in zip(keys, roles, annotators, strict=True):
        if role == "annotator":
            people.setdefault(key, set()).add(annotator)
    if rule == "latest":
        chosen, unresolved = {keys[position]: position for position in in_order}, {}
    else:
        chosen, unresolved = _voted(keys, roles, values, in_order, rule)
    kept = sorted(chosen)  # one row per key, the keys in order (the library's stable sort of unique keys)
    effective = decisions.take([chosen[key] for key in kept]).reset_index(drop=True)
    effective["n_annotators"] = np.array([len(people.get(key, ())) for key in kept], dtype=int)
    if not unresolved:
        left = pd.DataFrame(columns=[*KEY_COLUMNS, "decisions"])
    else:
        listed = sorted(unresolved)
        left = pd.DataFrame({**{column: pd.array([key[k] for key in listed], dtype=decisions[column].dtype)
                                for k, column in enumerate(KEY_COLUMNS)},
                             "decisions": pd.array([", ".join(f"{annotators[p]}={values[p]:g}" for p in unresolved[key])
                                                    for key in listed], dtype=decisions[KEY_COLUMNS[0]].dtype)})
    return Effective(effective, left, rule)


def _plain(seqs: list, stamps: list, values: list, keys: list[tuple]) -> bool:
    """Whether :func:`_reduced_in_python` may reduce these rows: no missing order or value, text clocks and keys."""
    return (not any(pd.isna(v) for v in (*seqs, *stamps, *values)) and all(isinstance(v, str) for v in stamps)
            and all(isinstance(v, str) for key in keys for v in key))


def _voted(keys: list[tuple], roles: list, values: list, in_order: list[int], rule: str
           ) -> tuple[dict[tuple, int], dict[tuple, list[int]]]:
    """:func:`_reduced_in_python` under ``majority`` or ``adjudicated``: the row kept for each key (positions, by
    key) and the annotators' rows of each unresolved key, in commit order (``in_order``)."""
    chosen: dict[tuple, int] = {}  # the last adjudication of each key
    votes: dict[tuple, dict[float, int]] = {}  # each value's annotator rows, per key
    last_of: dict[tuple, int] = {}  # the last annotator's row of each (key, value)
    rows_of: dict[tuple, list[int]] = {}
    for position in in_order:
        key, value = keys[position], values[position]
        if roles[position] == "adjudicator":
            chosen[key] = position
        elif roles[position] == "annotator":
            tally = votes.setdefault(key, {})
            tally[value] = tally.get(value, 0) + 1
            last_of[(*key, value)] = position
            rows_of.setdefault(key, []).append(position)
    unresolved: dict[tuple, list[int]] = {}
    for key, tally in votes.items():
        if key in chosen:
            continue
        if rule == "majority":
            top = max(tally.values())
            winners = [value for value, count in tally.items() if count == top]
        else:
            winners = list(tally)
        if len(winners) == 1:
            chosen[key] = last_of[(*key, winners[0])]
        else:
            unresolved[key] = rows_of[key]
    return chosen, unresolved


@dataclass(frozen=True)
class _Keys:
    """The keys (``columns`` as text) of the changed rows, and their items: which rows of a frame they name is
    found among the rows of those items only (one column compared whole, the others on those rows)."""

    columns: tuple[str, ...]
    keys: set[tuple[str, ...]]
    items: list[str]

    @classmethod
    def of(cls, frame: pd.DataFrame, columns: list[str]) -> _Keys:
        keys = set(zip(*(frame[c].astype(str).tolist() for c in columns), strict=True))
        return cls(tuple(columns), keys, sorted({key[0] for key in keys}))

    def rows_in(self, frame: pd.DataFrame) -> np.ndarray:
        """A mask of the rows of ``frame`` whose key is one of these (``frame[columns].astype(str)`` compared)."""
        return self.near(frame)[0]

    def near(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[tuple[str, ...]]]:
        """:meth:`rows_in`'s mask, and the rows of ``frame`` of the changed items: their positions and keys."""
        mask = np.zeros(len(frame), dtype=bool)
        if not len(frame) or not self.keys:
            return mask, np.empty(0, dtype=np.int64), []
        first = frame[self.columns[0]]
        spans = _sorted_spans_of(first, self.items)
        if spans is None:  # not text, or not sorted as text: the column compared whole
            near = np.flatnonzero(first.astype(str).isin(self.items).to_numpy(dtype=bool))
            # the key's columns only, each taken alone (selecting several columns of a frame copies them whole)
            columns = [_texts(frame[c].iloc[near]) for c in self.columns] if len(near) else []
        else:
            near = _positions_of(spans)
            # each item's rows are one run: sliced (no copy of the values), not taken by position
            columns = [_span_texts(frame[c], spans) for c in self.columns] if len(near) else []
        found: list[tuple[str, ...]] = []
        if len(near):
            found = list(zip(*columns, strict=True))
            mask[near] = [key in self.keys for key in found]
        return mask, near, found


def _take_rows(frame: pd.DataFrame, positions: np.ndarray, columns: list[str] | None = None) -> pd.DataFrame:
    """``frame.iloc[positions]`` (of ``columns`` only, when given; ``positions`` ascending, the rows of a few
    items: close together), taken from the run of rows that holds them: a slice of the frame (no copy), then the few
    rows of it. A take from the whole frame reads every piece of its Arrow columns."""
    if not len(positions):
        block = frame.iloc[0:0]
        return block if columns is None else block[columns]
    low, high = int(positions[0]), int(positions[-1]) + 1
    block = frame.iloc[low:high]
    if columns is not None:
        block = block[columns]
    return block.iloc[positions - low]


def _span_texts(values: pd.Series, spans: Sequence[tuple[int, int]]) -> list[str]:
    """:func:`_texts` of the rows ``low:high`` of each of ``spans``, one after the other. An Arrow-backed text column's
    runs are read from its Arrow array (a slice, then its values): a pandas slice per run and column, and its test
    for missing values, cost more than the values (a key's 4 frames x 6 columns, at every key)."""
    chunked = getattr(values.array, "_pa_array", None) if isinstance(values.dtype, pd.StringDtype) else None
    texts: list[str] = []
    for low, high in spans:
        run = None if chunked is None else chunked.slice(low, high - low)
        if run is not None and run.null_count == 0:
            texts.extend(run.to_pylist())
        else:  # a missing value is the text pandas gives it, as _texts reads it
            texts.extend(_texts(values.iloc[low:high]))
    return texts


def _texts(values: pd.Series) -> list[str]:
    """``values.astype(str).tolist()``, without the conversion for a text column with no missing value (the store's
    key columns)."""
    if isinstance(values.dtype, pd.StringDtype) and not values.hasnans:
        return values.tolist()
    return values.astype(str).tolist()


def _reader(values: pd.Series) -> Callable[[int], object]:
    """The value of row ``k`` of ``values``, as a bisection reads it: an Arrow text column's straight from its Arrow
    array (2 us a step against ``iat``'s 10: a bisection of 30,000 rows reads 15 values, several per key), others
    by ``iat``. A missing value reads as ``None`` from Arrow, as NaN by ``iat``: either makes a comparison with
    text raise ``TypeError``."""
    if isinstance(values.array, ArrowStringArray):
        chunked = values.array._pa_array
        return lambda position: chunked[position].as_py()
    return values.iat.__getitem__


def _bound(values: pd.Series, value: str, *, after: bool) -> int:
    """Where ``value`` goes in the sorted ``values``: before the rows equal to it, or ``after`` them."""
    low, high = 0, len(values)
    read = _reader(values)
    while low < high:
        middle = (low + high) // 2
        here = read(middle)
        if value < here or (not after and value == here):
            high = middle
        else:
            low = middle + 1
    return low


#: Rows of an Arrow text column compared in one vectorised pass for the price of one item's bisection (measured:
#: a bisection step reads one value through pandas, about 10 us; the pass compares about 20,000 rows in that time).
_ROWS_PER_BISECTION = 20_000


def _sorted_spans_of(values: pd.Series, items: list[str]) -> list[tuple[int, int]] | None:
    """The runs ``(start, stop)`` of the rows of ``values`` (a frame's first key column, sorted as text: the order the
    store and the label rule give) equal to each of ``items`` (sorted), found by bisection: O(items x log rows),
    not a pass over the column; ascending, empty runs left out (adjacent runs may come joined). ``None`` when the
    column is not text sorted as text (the caller compares it whole).

    Many items in an Arrow column (a Relabel window's 100 outputs' items) are found in one pass of Arrow's
    ``is_in`` instead, whenever that pass costs less than their bisections (:data:`_ROWS_PER_BISECTION`): the
    cost is then the lesser of the two, still bounded by the items' count times the bisection's."""
    if not len(values) or not (isinstance(values.iat[0], str) and isinstance(values.iat[-1], str)):
        return None
    if values.iat[0] > values.iat[-1]:
        return None
    if len(items) * _ROWS_PER_BISECTION > len(values) and isinstance(values.array, ArrowStringArray):
        mask = pc.is_in(values.array._pa_array, value_set=pa.array(items, type=pa.string()))
        found = np.flatnonzero(mask.to_numpy(zero_copy_only=False).astype(bool, copy=False))
        if not len(found):
            return []
        breaks = np.flatnonzero(np.diff(found) != 1) + 1
        starts, stops = found[np.concatenate([[0], breaks])], found[np.concatenate([breaks - 1, [len(found) - 1]])] + 1
        return list(zip(starts.tolist(), stops.tolist(), strict=True))
    spans = []
    try:
        for item in items:
            low = _bound(values, item, after=False)
            high = _bound(values, item, after=True)
            if high > low:
                spans.append((low, high))
    except TypeError:  # a value that is not text
        return None
    return spans


def _positions_of(spans: list[tuple[int, int]]) -> np.ndarray:
    """The positions of the rows of ``spans`` (``(start, stop)`` runs), in their order."""
    if not spans:
        return np.empty(0, dtype=np.int64)
    return np.concatenate([np.arange(low, high, dtype=np.int64) for low, high in spans])


def _sorted_rows_of(values: pd.Series, items: list[str]) -> np.ndarray | None:
    """The positions of the rows of ``values`` (a frame's first key column, sorted as text) equal to one of
    ``items`` (sorted), found by bisection (:func:`_sorted_spans_of`); ``None`` when the column is not text sorted
    as text (the caller compares it whole)."""
    spans = _sorted_spans_of(values, items)
    return None if spans is None else _positions_of(spans)


def rows_of_items(decisions: pd.DataFrame, items: list[str]) -> np.ndarray:
    """The positions of the rows of ``decisions`` whose ``item_id`` is one of ``items``, ascending: by bisection when
    the frame is sorted by item as the store and :class:`Ledger` keep it (O(items x log rows)), else by comparing
    the column whole."""
    values = decisions["item_id"]
    wanted = sorted(set(map(str, items)))
    near = _sorted_rows_of(values, wanted)
    if near is None:
        near = np.flatnonzero(values.astype(str).isin(wanted).to_numpy(dtype=bool))
    return np.sort(near)


def decisions_of_items(decisions: pd.DataFrame, items: list[str], columns: list[str] | None = None) -> pd.DataFrame:
    """The rows of ``decisions`` whose ``item_id`` is one of ``items`` (in the frame's order, with its index; of
    ``columns`` only, when given): found by bisection (:func:`rows_of_items`) and taken from the run of rows that
    holds them, not by comparing or taking from the whole frame."""
    return _take_rows(decisions, rows_of_items(decisions, items), columns)


def _first_position(frame: pd.DataFrame, column: str, value: str) -> int:
    """Where ``value`` goes in ``frame``'s ``column`` (sorted): after every row equal to it or before it."""
    read = _reader(frame[column])
    low, high = 0, len(frame)
    while low < high:
        middle = (low + high) // 2
        if value < read(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _places(frame: pd.DataFrame, gone: np.ndarray, near: np.ndarray, near_keys: list[tuple[str, ...]],
            wanted: list[tuple[str, ...]], column: str) -> list[int]:
    """Where each key of ``wanted`` goes among the rows of ``frame`` (sorted) that are not ``gone``, counted in
    those rows: among the rows of its item when the frame has some (``near``, their keys), else by the item."""
    blocks: dict[str, list[tuple[tuple[str, ...], int]]] = {}
    for position, key, removed in zip(near.tolist(), near_keys, gone[near].tolist(), strict=True):
        if not removed:
            blocks.setdefault(key[0], []).append((key, position))
    places = []
    for key in wanted:
        block = blocks.get(key[0])
        if block:
            found = bisect.bisect_right([k for k, _ in block], key)
            position = block[found][1] if found < len(block) else block[-1][1] + 1
        else:
            position = _first_position(frame, column, key[0])
        places.append(position - int(gone[:position].sum()))
    return places


#: The columns of the rows :func:`_spliced` takes out that it hands back: those a decision is counted by
#: (:data:`~empathy.labels.decisions.DECISION_KEY`) and those of a row of :attr:`Ledger.digest`.
_REMOVED_COLUMNS: tuple[str, ...] = (*DECISION_KEY, "rater", "text_hash")


def _spliced(frame: pd.DataFrame, new: pd.DataFrame, changed: _Keys, columns: list[str], *,
             empty: pd.DataFrame | None = None, removed: list[pd.DataFrame] | None = None) -> pd.DataFrame:
    """``frame`` (sorted by ``columns``, ``changed``'s columns, unique per row: the order the store and the label
    rule give) without its rows whose key is in ``changed``, plus ``new`` (rows of changed keys), sorted by
    ``columns`` as a stable sort of the two would: each new row inserted where it goes among the rows of its item
    (no whole sort, no index of the whole frame). ``empty``: what an empty result is. ``removed``: a list the rows
    taken out of ``frame`` are appended to (one frame)."""
    if not len(frame) and not len(new):  # nothing before, nothing now (a ledger's stale or orphaned rows, mostly)
        if removed is not None:
            removed.append(frame)
        return new.reset_index(drop=True) if empty is None else empty
    gone, near, near_keys = changed.near(frame)
    if removed is not None:  # the columns a decision is counted by (decision_count's) and a digest row's, of the
        # rows taken out
        removed.append(_take_rows(frame, np.flatnonzero(gone), [c for c in _REMOVED_COLUMNS if c in frame.columns]))
    kept_count = len(frame) - int(gone.sum())
    wanted = list(zip(*(new[c].tolist() for c in columns), strict=True))
    textual = all(isinstance(value, str) for key in wanted for value in key)
    if len(new) > 1:  # the few new rows in order by their keys (a stable sort, in Python: no frame sort)
        new = (new.take(sorted(range(len(new)), key=wanted.__getitem__)) if textual
               else new.sort_values(columns, kind="stable"))
        wanted = sorted(wanted) if textual else list(zip(*(new[c].tolist() for c in columns), strict=True))
    if kept_count == 0 or len(new) == 0:
        out = new if kept_count == 0 else _in_order(frame, new, np.flatnonzero(~gone))
    elif textual:
        places = _places(frame, gone, near, near_keys, wanted, columns[0])
        order = np.insert(np.flatnonzero(~gone), places, len(frame) + np.arange(len(new)))
        out = _in_order(frame, new[list(frame.columns)], order)
    else:  # a key that is not text (not from a store): the sort itself
        kept = frame[~gone] if gone.any() else frame
        out = pd.concat([kept, new[list(kept.columns)]], ignore_index=True).sort_values(columns, kind="stable")
    if len(out) == 0 and empty is not None:
        return empty
    return out.reset_index(drop=True)


#: How many pieces a text column of a spliced frame may hold before they are joined into one (see :func:`_in_order`).
_MAX_CHUNKS = 64


def _in_order(frame: pd.DataFrame, new: pd.DataFrame, order: np.ndarray) -> pd.DataFrame:
    """The rows ``order`` of ``frame`` and ``new`` stacked (``order`` counts ``frame``'s rows first, then ``new``'s),
    as ``pd.concat([frame, new]).take(order)`` gives them, built column by column from runs of consecutive rows: a
    run is a slice, and a text column (Arrow) of slices is joined without copying its values, so that a splice of a
    few rows into a large frame costs about the same whatever its size (and allocates a few objects per column,
    not a frame per run). The pieces of those columns are joined into one once they are more than
    :data:`_MAX_CHUNKS` (a copy every so many splices, not at every one), one column per call unless a column has
    more than four times as many. A column whose dtype differs between the two frames: ``pd.concat`` itself (its
    rules for the common dtype)."""
    from pandas.arrays import ArrowStringArray, NumpyExtensionArray

    if not len(order):
        return frame.iloc[0:0]
    size = len(frame)
    # a run ends where the next position is not the next row, and between the old frame's rows and the new ones
    ends = np.flatnonzero((np.diff(order) != 1) | ((order[:-1] < size) != (order[1:] < size))) + 1
    starts = np.concatenate([[0], ends]).tolist()
    stops = np.concatenate([ends, [len(order)]]).tolist()
    runs = [(first >= size, first - (size if first >= size else 0), stop - start)
            for start, stop, first in zip(starts, stops, order[starts].tolist(), strict=True)]
    from_new = any(is_new for is_new, _, _ in runs)
    columns = {}
    pieces: dict[str, pa.ChunkedArray] = {}
    for column in frame.columns:
        old = frame[column].array
        added = new[column].array if from_new else old
        if added.dtype != old.dtype:
            return _compacted(pd.concat([frame, new[list(frame.columns)]], ignore_index=True).take(order)
                              .reset_index(drop=True))
        parts = [(added if is_new else old)[first:first + length] for is_new, first, length in runs]
        if isinstance(old, ArrowStringArray):
            pieces[column] = pa.chunked_array([chunk for part in parts for chunk in part._pa_array.chunks],
                                              type=old._pa_array.type)
        elif isinstance(old, NumpyExtensionArray):
            columns[column] = np.concatenate([part.to_numpy() for part in parts])
        else:
            columns[column] = type(old)._concat_same_type(parts)
    # One text column joined per splice, the one of most pieces past the limit: the text columns of a frame are
    # spliced alike and pass the limit together, and joining them all at once copied every column while the frame
    # before was still held (10.5 MiB at 30,000 decision rows, the Relabel server's peak). Another column past the
    # limit waits a splice or a few (a few pieces each); they stay staggered afterwards. A splice of many runs (a
    # large batch) leaves no column of more than four times the limit.
    over = [column for column, chunks in pieces.items() if chunks.num_chunks > _MAX_CHUNKS]
    joined = {column for column in over if pieces[column].num_chunks > 4 * _MAX_CHUNKS}
    if over:
        joined.add(max(over, key=lambda column: pieces[column].num_chunks))
    for column, chunks in pieces.items():
        columns[column] = ArrowStringArray(chunks.combine_chunks() if column in joined else chunks,
                                           dtype=frame[column].dtype)
    return pd.DataFrame(columns, columns=frame.columns, copy=False)


def _compacted(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each Arrow text column of more than :data:`_MAX_CHUNKS` pieces joined into one (the same
    values and dtype)."""
    from pandas.arrays import ArrowStringArray

    joined = {}
    for column in frame.columns:
        values = frame[column].array
        if isinstance(values, ArrowStringArray) and values._pa_array.num_chunks > _MAX_CHUNKS:
            joined[column] = ArrowStringArray(values._pa_array.combine_chunks(), dtype=values.dtype)
    if not joined:
        return frame
    out = frame.copy(deep=False)
    for column, values in joined.items():
        out[column] = values
    return out


def open_ledger(store: OverrideStore, name: str, outputs: pd.DataFrame, rule: str = "latest", *,
                adopt_legacy: bool = True, hashes: Mapping[tuple[str, str], str] | None = None,
                legacy_id: str | None = None) -> Ledger:
    """Read a data set's decisions and sort them against the loaded ``outputs``.

    With ``adopt_legacy`` the rows a version 1 store kept under the outputs' key-set hash
    (:func:`empathy.labels.records.dataset_id`, or ``legacy_id`` when already computed) are first moved to
    ``name`` (:meth:`OverrideStore.adopt_legacy`; not in a store opened for reading). ``hashes``: the outputs'
    :func:`empathy.labels.records.output_hashes` when already computed (the app caches them per data set).
    Raises :class:`empathy.labels.locations.StoreError` for a damaged store.
    """
    adopted = 0
    # a store opened for reading is never written: its version 1 rows stay under their old key
    if adopt_legacy and not store.read_only and any(other != name for other in store.dataset_ids()):
        hashes = output_hashes(outputs) if hashes is None else hashes
        adopted = store.adopt_legacy(legacy_id or dataset_id(outputs), name, hashes)
    return ledger_from_decisions(name, store.decisions(name), outputs, rule, adopted=adopted, hashes=hashes)


# ------------------------------------------------------------------------------------------ several humans

def annotator_ratings(decisions: pd.DataFrame) -> pd.DataFrame:
    """Each annotator as their own rater: long-form ratings with ``rater`` = annotator, ``rater_kind`` human.

    One rating per ``(item_id, model, dimension, annotator)``: a decision applied to several judges is one
    human judgement (the annotator's latest in commit order, should they differ). Adjudications are left out (they are a
    resolution, not an independent judgement).
    """
    columns = ["item_id", "model", "rater", "dimension", "value", "rater_kind", "reason", "signature"]
    if decisions is None or decisions.empty:
        return pd.DataFrame({c: pd.Series(dtype=float if c == "value" else object) for c in columns})
    frame = in_commit_order(decisions[decisions.get("role", pd.Series("annotator", index=decisions.index))
                                      == "annotator"])
    frame = frame.drop_duplicates([*_ITEM_KEY, "annotator"], keep="last")
    out = pd.DataFrame({"item_id": frame["item_id"].astype(str), "model": frame["model"].astype(str),
                        "rater": frame["annotator"].astype(str), "dimension": frame["dimension"].astype(str),
                        "value": frame["value"].astype(float), "rater_kind": "human", "reason": "",
                        "signature": "human"})
    return out.sort_values(["item_id", "model", "dimension", "rater"]).reset_index(drop=True)



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
        latest = (in_commit_order(adjudications)
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
                   rater_map: Mapping[str, str] | None = None, tolerance: float = 0.0,
                   hashes: Mapping[tuple[str, str], str] | None = None) -> RerunLedger:
    """Classify every decision of the ledger against a re-run judge's ratings.

    ``orphaned``: the output is gone; ``stale``: its text changed since the decision (see
    :func:`ledger_status`); otherwise ``confirmed`` when the re-run judge's value for the same rating (rater
    renamed through ``rater_map``, e.g. ``{"gpt4": "gpt4-prompt-v2"}``) is within ``tolerance`` of the human
    value (0: equal), and ``disputed`` when it differs or the re-run did not rate it (``new_value`` NaN).
    Only decisions of raters the re-run covers are classified (a decision on another judge is not about
    this re-run). ``confirmed`` and ``disputed`` carry the ``new_value``. ``hashes``: the outputs'
    :func:`empathy.labels.records.output_hashes` when already computed. Only the rows of ``new_ratings`` for the
    decided outputs are read, so the re-run's ratings of those outputs are enough.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance!r}")
    mapping = dict(rater_map or {})
    rerun_raters = set(new_ratings["rater"].astype(str))
    if decisions is None or decisions.empty:
        empty = empty_decisions()
        return RerunLedger(empty, empty.copy(), empty.copy(), empty.copy())
    covered = decisions[decisions["rater"].astype(str).map(lambda r: mapping.get(r, r)).isin(rerun_raters)]
    status = ledger_status(covered.reset_index(drop=True), outputs, hashes)
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


# ------------------------------------------------------------------------------------------ CLI helpers

def ledger_for_files(store_path: str | Path, outputs_path: str | Path, outputs: pd.DataFrame, *,
                     rule: str = "latest", name: str | None = None) -> Ledger:
    """The ledger of a data set given by its files, as the CLI needs it (``metrics --overrides``, ``judge``).

    ``store_path`` is a SQLite file or a ``postgresql://`` URL. The data set's name is
    :func:`empathy.labels.records.dataset_name` of ``outputs_path`` relative to the store (or ``name``). Raises
    :class:`empathy.labels.locations.StoreError` (a :class:`empathy.io.DataError`: one line, exit 2) for a
    damaged or unreachable store. A store that cannot be written is opened for reading (an archived ledger can
    be re-measured).
    """
    store = open_for_reading(store_path)
    label = dataset_name(outputs_path, store_path=store_path, explicit=name)
    return open_ledger(store, label, outputs, rule)


def apply_ledger(ratings: pd.DataFrame, ledger: Ledger) -> pd.DataFrame:
    """``ratings`` with the ledger's applied overrides (stale, orphaned and unresolved ones never)."""
    return apply_overrides(ratings, ledger.applied)


def rerun_against_ledger(ledger: Ledger, new_ratings: pd.DataFrame, outputs: pd.DataFrame, *,
                         rater_map: Mapping[str, str] | None = None, tolerance: float = 0.0) -> RerunLedger:
    """:func:`classify_rerun` of every decision of ``ledger`` (for ``judge`` to print its :meth:`summary`)."""
    return classify_rerun(ledger.decisions, new_ratings, outputs, rater_map=rater_map, tolerance=tolerance)


# ------------------------------------------------------------------------------------------ effective ratings

def apply_overrides(ratings: pd.DataFrame, overrides: pd.DataFrame | None) -> pd.DataFrame:
    """Effective ratings: each rating replaced by its override where one exists.

    Returns a copy of ``ratings`` with a boolean column ``overridden``. An override of a rating absent from
    ``ratings`` (a judge that never rated that output) is added as a new row, so a human can fill a gap.
    """
    for column in (*KEY_COLUMNS, "value"):
        if column not in ratings.columns:
            raise ValueError(f"apply_overrides: ratings lack the column {column!r}")
    out = ratings.copy()
    out["overridden"] = False
    if overrides is None or len(overrides) == 0:
        return out
    for column in (*KEY_COLUMNS, "value"):
        if column not in overrides.columns:
            raise ValueError(f"apply_overrides: overrides lack the column {column!r}")
    keys = list(KEY_COLUMNS)
    table = overrides[[*keys, "value"]].drop_duplicates(keys, keep="last")
    index = pd.MultiIndex.from_frame(out[keys])
    override_index = pd.MultiIndex.from_frame(table[keys])
    positions = override_index.get_indexer(index)
    hit = positions >= 0
    if hit.any():
        values = out["value"].to_numpy(dtype=float, copy=True)
        values[hit] = table["value"].to_numpy(dtype=float)[positions[hit]]
        out["value"] = values
        out["overridden"] = hit
    unmatched = ~override_index.isin(index)
    if unmatched.any():
        extra = table[unmatched].copy()
        for column in out.columns:
            if column not in extra.columns:
                extra[column] = "" if out[column].dtype == object else np.nan
        extra["overridden"] = True
        out = pd.concat([out, extra[out.columns]], ignore_index=True)
    return out


def human_ratings(overrides: pd.DataFrame, *, rater: str = "human") -> pd.DataFrame:
    """The human verdicts implied by the overrides, as long-form ratings of one rater named ``rater``.

    For each ``(item_id, model, dimension)`` the most recent override (in commit order,
    :func:`empathy.labels.records.in_commit_order`) wins, whichever judge's rating it replaced. Used to compare
    human labels with each judge's own labels.
    """
    columns = ["item_id", "model", "rater", "dimension", "value", "rater_kind", "reason", "signature"]
    if overrides is None or len(overrides) == 0:
        return pd.DataFrame({c: pd.Series(dtype=float if c == "value" else str) for c in columns})
    frame = in_commit_order(overrides)
    frame = frame.drop_duplicates(["item_id", "model", "dimension"], keep="last")
    out = pd.DataFrame({
        "item_id": frame["item_id"].astype(str), "model": frame["model"].astype(str), "rater": rater,
        "dimension": frame["dimension"].astype(str), "value": frame["value"].astype(float),
        "rater_kind": "human", "reason": "", "signature": "",
    })
    return out.sort_values(["item_id", "model", "dimension"]).reset_index(drop=True)
