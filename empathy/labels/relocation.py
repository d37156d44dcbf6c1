"""Moving the uploads' store out of the working directory, where versions before issue 24 created it.

Uploaded data sets used to keep their decisions in ``<working directory>/.empathy-cache/overrides.sqlite``
(:func:`empathy.labels.locations.working_directory_store`): started from another folder, the app created a new,
empty store and the decisions seemed lost. The store now lives with the uploads
(:func:`empathy.labels.locations.default_store_path` without a data folder). :func:`adopt_working_directory_store`
finds a store left at the old place and moves it, never silently and never losing a row:

* the new place has no store, or an empty one: every row is copied (decisions, audit trail with its ids and
  commit order, exhibits, skips, assignments: :func:`empathy.labels.transfer.migrate_store`, one transaction,
  counts verified), then the old file is renamed ``overrides.sqlite.moved`` (with its ``-wal``/``-shm``), kept
  until the user deletes it;
* both hold decisions: nothing is moved or merged, and the message names both stores, their decisions, and the
  two commands that bring the old decisions over;
* the new place is a server (``$EMPATHY_STORE``): nothing is moved; the message says how to copy.

Every outcome that finds an old store returns a :class:`Relocation` whose ``message`` the app shows (one line).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from empathy.labels.backends import open_for_reading
from empathy.labels.exhibit_list import exhibit_rows
from empathy.labels.locations import StoreError, is_server_location, mask_location, working_directory_store
from empathy.labels.transfer import migrate_store, queue_rows, store_rows

#: Suffix the old store is renamed with once its rows are copied.
MOVED_SUFFIX = ".moved"


@dataclass(frozen=True)
class Relocation:
    """What :func:`adopt_working_directory_store` found and did: the two places, whether rows moved, a message."""

    old: Path
    new: str
    moved: bool
    decisions: int
    message: str


def _rows_held(location: str | Path) -> tuple[int, int]:
    """``(decisions, all rows)`` of the store at ``location`` (opened for reading when it cannot be written)."""
    store = open_for_reading(location)
    decisions, audit = store_rows(store)
    skips, assignments = queue_rows(store)
    return len(decisions), len(decisions) + len(audit) + len(exhibit_rows(store)) + len(skips) + len(assignments)


def _set_aside(old: Path) -> Path:
    """Rename the old store (and its companions) with :data:`MOVED_SUFFIX`; return the new name."""
    target = old.with_name(old.name + MOVED_SUFFIX)
    for suffix in ("-wal", "-shm", ""):  # the main file last: until then the old store is still whole
        companion = Path(f"{old}{suffix}")
        if companion.exists():
            os.replace(companion, Path(f"{target}{suffix}"))
    return target


def _merge_hint(old: Path, new: str) -> str:
    return (f"to bring the old decisions over: python -m empathy store export '{old}' old-ledger.jsonl && "
            f"python -m empathy store import old-ledger.jsonl --store '{mask_location(new)}'")


def adopt_working_directory_store(target: str | Path, *, cwd: str | Path | None = None) -> Relocation | None:
    """Find the uploads' store a version before issue 24 left in the working directory and move it to ``target``.

    ``target`` is where the uploads' store lives now (:func:`empathy.labels.locations.default_store_path`);
    ``cwd`` the folder to look in (default: the working directory). Returns ``None`` when there is no old store
    (or it is ``target`` itself), else a :class:`Relocation` saying what happened (see the module docstring).
    Raises :class:`empathy.labels.locations.StoreError` when a store cannot be read or the copy does not match;
    the old store is then left where it was.
    """
    old = working_directory_store(cwd)
    if not old.is_file():
        return None
    new = str(target)
    if not is_server_location(new) and Path(new).expanduser().resolve() == old.resolve():
        return None
    decisions, held = _rows_held(old)
    if is_server_location(new):
        return Relocation(old, new, False, decisions, (
            f"An earlier version kept the uploads' decisions in {old} ({decisions} decisions); EMPATHY_STORE names "
            f"the store in use, so nothing was moved; {_merge_hint(old, new)}"))
    if not held:
        moved = _set_aside(old)
        return Relocation(old, new, False, 0, f"Set aside an empty uploads store left by an earlier version in the "
                                              f"working directory ({moved}).")
    current, current_rows = _rows_held(new) if Path(new).exists() else (0, 0)
    if current_rows:
        return Relocation(old, new, False, decisions, (
            f"Two uploads stores: {new} (in use, {current} decisions) and {old} (left in the working directory by an "
            f"earlier version, {decisions} decisions); both kept, nothing merged; {_merge_hint(old, new)}"))
    report = migrate_store(old, new, translate_names=False)  # into the empty store: one verified transaction
    try:
        moved = _set_aside(old)
    except OSError as error:
        raise StoreError(old, f"was copied to {new} ({report.decisions} decisions) but cannot be renamed "
                         f"({error.strerror or error}); delete or move it by hand") from None
    return Relocation(old, new, True, report.decisions, (
        f"Moved the uploads' override store from {old} to {new} ({report.decisions} decisions, {report.audit} audit "
        f"rows): it no longer depends on the folder the app starts in. The old file is kept as {moved}."))

