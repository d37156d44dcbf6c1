"""A persistent SQLite cache of distancing results keyed by model, model version, rules and text hash."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..cachefiles import ensure_private_directory, ensure_private_file
from ..sqlite_wal import CACHE_BUSY_TIMEOUT_S, enable_wal
from .result import DistancingResult

#: Environment variable naming the cache folder.
CACHE_ENV = "EMPATHY_CACHE_DIR"
CACHE_FILE = "distancing.sqlite3"
# SQLite's default host-parameter limit is 32766 in current builds but 999 in old ones.
_QUERY_CHUNK = 900
#: The rule that picks and trims a parse's sentences (:func:`empathy.distancing.sentence_offsets`): part of the
#: key of the stored sentence offsets, so a change of the rule never returns offsets made by the old one.
SENTENCE_RULE = "1"


def default_cache_dir() -> Path:
    """``$EMPATHY_CACHE_DIR/distancing`` when set, else ``~/.cache/empathy/distancing``."""
    root = os.environ.get(CACHE_ENV)
    if root:
        return Path(root).expanduser() / "distancing"
    return Path.home() / ".cache" / "empathy" / "distancing"


def text_key(text: str) -> str:
    """The sha256 hex digest of the UTF-8 text (the per-text part of the cache key)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class DistancingCache:
    """Results stored as JSON in one SQLite file under ``directory``.

    Rows are keyed by (model, model version, rules version, sha256 of the text), so a new model or a rule
    change never returns a stale result. Beside them, each parsed text's sentence offsets (the sentences the
    judges rate and the app marks, :func:`empathy.judges.segment.sentence_spans`) keyed by (model, model version,
    :data:`SENTENCE_RULE`, sha256 of the text): the distancing rules do not move sentence boundaries, so a rule
    change keeps them, and a page that draws a parsed text needs no spaCy. Safe to share between processes
    (SQLite WAL mode). The file is created with mode 0600 (see :mod:`empathy.cachefiles`). An open cache is
    always true in a boolean context, however many rows it holds: ``len(cache)`` counts rows with
    ``SELECT COUNT(*)``, which costs a scan of the table, so callers test ``cache is None``.

    Parameters
    ----------
    directory
        Folder holding the database; created when missing. ``None`` uses :func:`default_cache_dir`.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        try:
            ensure_private_directory(self.directory)
        except OSError as exc:
            raise ValueError(f"cannot create distancing cache folder {self.directory}: {exc}") from exc
        self.path = self.directory / CACHE_FILE
        try:
            ensure_private_file(self.path)
        except OSError as exc:
            raise ValueError(f"cannot create distancing cache {self.path}: {exc}") from exc
        # The app reruns scripts in worker threads: one connection shared under a lock.
        self._lock = threading.Lock()
        try:
            self._conn = sqlite3.connect(str(self.path), timeout=CACHE_BUSY_TIMEOUT_S, check_same_thread=False)
            enable_wal(self._conn, CACHE_BUSY_TIMEOUT_S)
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS results (model TEXT NOT NULL, version TEXT NOT NULL,"
                " rules TEXT NOT NULL, text_sha256 TEXT NOT NULL, result TEXT NOT NULL,"
                " PRIMARY KEY (model, version, rules, text_sha256))"
            )
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS sentences (model TEXT NOT NULL, version TEXT NOT NULL,"
                " rule TEXT NOT NULL, text_sha256 TEXT NOT NULL, offsets TEXT NOT NULL,"
                " PRIMARY KEY (model, version, rule, text_sha256))"
            )
            self._conn.commit()
        except sqlite3.Error as exc:
            raise ValueError(f"cannot open distancing cache {self.path}: {exc}") from exc

    def _select(self, table: str, column: str, scope: tuple[str, str, str], keys: Sequence[str]
                ) -> list[tuple[str, str]]:
        """The ``(text_sha256, column)`` rows of ``table`` among ``keys`` under ``scope`` (the values of its
        model, version and rule columns), read in chunks of bound parameters; raises :class:`sqlite3.Error`."""
        rule = "rules" if table == "results" else "rule"
        unique = list(dict.fromkeys(keys))
        rows: list[tuple[str, str]] = []
        with self._lock:
            for i in range(0, len(unique), _QUERY_CHUNK):
                chunk = unique[i : i + _QUERY_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows += self._conn.execute(
                    f"SELECT text_sha256, {column} FROM {table} WHERE model=? AND version=? AND {rule}=?"
                    f" AND text_sha256 IN ({marks})",
                    (*scope, *chunk),
                ).fetchall()
        return rows

    def _insert(self, table: str, rows: list[tuple[str, str, str, str, str]]) -> None:
        """Store ``rows`` in ``table`` in one transaction; a failure warns (the analysis goes on)."""
        if not rows:
            return
        try:
            with self._lock, self._conn:
                self._conn.executemany(f"INSERT OR REPLACE INTO {table} VALUES (?, ?, ?, ?, ?)", rows)
        except sqlite3.Error as exc:
            warnings.warn(f"distancing cache {self.path} not written: {exc}", RuntimeWarning, stacklevel=2)

    def get_many(
        self, model: str, version: str, rules: str, keys: Sequence[str]
    ) -> dict[str, DistancingResult]:
        """The cached results among ``keys`` (text hashes), as a dict key -> result."""
        found: dict[str, DistancingResult] = {}
        try:
            for key, payload in self._select("results", "result", (model, version, rules), keys):
                found[key] = DistancingResult.from_json(json.loads(payload))
        except (sqlite3.Error, ValueError) as exc:
            # A damaged or locked cache must not stop an analysis: treat as misses.
            warnings.warn(f"distancing cache {self.path} unreadable, parsing instead: {exc}", RuntimeWarning,
                          stacklevel=2)
        return found

    def put_many(
        self, model: str, version: str, rules: str, items: Iterable[tuple[str, DistancingResult]]
    ) -> None:
        """Store (text hash, result) pairs in one transaction."""
        self._insert("results", [(model, version, rules, key, json.dumps(result.to_json(), separators=(",", ":")))
                                 for key, result in items])

    def get_sentences(self, model: str, version: str, keys: Sequence[str]
                      ) -> dict[str, tuple[tuple[int, int], ...]]:
        """The stored sentence offsets among ``keys`` (text hashes), as a dict key -> ``((start, end), ...)``.

        A damaged row or an unreadable cache counts as a miss (the caller parses), as for :meth:`get_many`.
        """
        found: dict[str, tuple[tuple[int, int], ...]] = {}
        try:
            rows = self._select("sentences", "offsets", (model, version, SENTENCE_RULE), keys)
        except sqlite3.Error as exc:
            warnings.warn(f"distancing cache {self.path} unreadable, parsing instead: {exc}", RuntimeWarning,
                          stacklevel=2)
            return found
        for key, payload in rows:
            try:
                found[key] = tuple((int(a), int(b)) for a, b in json.loads(payload))
            except (ValueError, TypeError):
                continue
        return found

    def put_sentences(self, model: str, version: str,
                      items: Iterable[tuple[str, Sequence[tuple[int, int]]]]) -> None:
        """Store (text hash, sentence offsets) pairs in one transaction."""
        self._insert("sentences", [(model, version, SENTENCE_RULE, key,
                                    json.dumps([[int(a), int(b)] for a, b in offsets], separators=(",", ":")))
                                   for key, offsets in items])

    def __bool__(self) -> bool:
        """Always true: an open cache, empty or not (without this, ``if cache`` would run ``__len__``)."""
        return True

    def __len__(self) -> int:
        """Number of stored results (all models); a full-table ``COUNT(*)``, so not for hot paths."""
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def clear(self) -> None:
        """Delete every stored result."""
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM results")
            self._conn.execute("DELETE FROM sentences")

    def close(self) -> None:
        """Close the database connection."""
        self._conn.close()

    def __enter__(self) -> DistancingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
