"""Persistent cache of judge answers (SQLite), so that a re-run makes no calls.

The key is the SHA-256 of the endpoint (without credentials), the model, the protocol hash, the
temperature and the hash of the rendered input messages. Only valid, validated answers are stored: a
rating that ended missing is retried on the next run. Nothing secret is stored: the rows hold the key
digest, the parsed values, the raw answer text and the token counts.

The default location is ``$EMPATHY_CACHE_DIR/judges.sqlite`` (``~/.cache/empathy/judges.sqlite`` when the
variable is unset). The file is created with mode 0600 (raw answers are as private as the texts judged; see
:mod:`empathy.cachefiles`).

Durability: every answer is committed as it arrives (``commit_every=1``, the default). In WAL mode with
``synchronous=NORMAL`` a commit appends to the write-ahead log without an fsync, so it costs tens of
microseconds (``bench/bench_judge_cache.py``) against the hundreds of milliseconds an answer takes; a killed
process (SIGKILL, Ctrl-C, out of memory) loses no committed answer, because the log is in the operating
system's buffers. Only a power cut or an OS crash can lose the answers since the last checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from empathy.cachefiles import ensure_private_directory, ensure_private_file
from empathy.sqlite_wal import CACHE_BUSY_TIMEOUT_S, enable_wal

CACHE_ENV = "EMPATHY_CACHE_DIR"


def default_cache_path() -> Path:
    """``$EMPATHY_CACHE_DIR/judges.sqlite``, else ``~/.cache/empathy/judges.sqlite``."""
    root = os.environ.get(CACHE_ENV)
    base = Path(root) if root else Path.home() / ".cache" / "empathy"
    return base / "judges.sqlite"


def cache_key(endpoint: str, model: str, protocol_hash: str, messages: list[dict[str, str]],
              temperature: float) -> str:
    """The cache key of one request (hex SHA-256)."""
    input_hash = hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    payload = json.dumps({"endpoint": endpoint, "model": model, "protocol": protocol_hash,
                          "input": input_hash, "temperature": round(float(temperature), 6)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True)
class CachedAnswer:
    """A stored answer: validated values by dimension, raw text and token usage."""

    values: dict[str, float]
    raw: str
    prompt_tokens: int
    completion_tokens: int


class JudgeCache:
    """A SQLite file of answers keyed by :func:`cache_key`; safe to share between threads.

    Use as a context manager or call :meth:`close`. ``path=":memory:"`` keeps the cache in memory.

    Parameters
    ----------
    path
        The SQLite file (created 0600 when missing); ``None`` for :func:`default_cache_path`.
    commit_every
        Answers per commit. The default 1 commits each answer (see the module docstring: a killed run
        re-buys nothing). Larger values batch commits and may lose up to ``commit_every - 1`` answers.
    """

    _SCHEMA = ("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, endpoint TEXT, model TEXT, "
               "protocol TEXT, dims TEXT NOT NULL, raw TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, "
               "created REAL)")

    def __init__(self, path: str | Path | None = None, *, commit_every: int = 1):
        if isinstance(commit_every, bool) or not isinstance(commit_every, int) or commit_every < 1:
            raise ValueError(f"commit_every must be a positive integer, got {commit_every!r}")
        self.path = str(path) if path is not None else str(default_cache_path())
        if self.path != ":memory:":
            ensure_private_directory(Path(self.path).parent)
            ensure_private_file(Path(self.path))
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=CACHE_BUSY_TIMEOUT_S)
        if self.path != ":memory:":
            enable_wal(self._conn, CACHE_BUSY_TIMEOUT_S)
            # WAL + NORMAL: a commit is an append to the log, no fsync (module docstring: durability).
            self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(self._SCHEMA)
        self._conn.commit()
        self._pending = 0
        self._commit_every = commit_every

    def get(self, key: str) -> CachedAnswer | None:
        """The stored answer for ``key``, or ``None``."""
        with self._lock:
            row = self._conn.execute("SELECT dims, raw, prompt_tokens, completion_tokens FROM answers "
                                     "WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return CachedAnswer(values=json.loads(row[0]), raw=row[1] or "", prompt_tokens=int(row[2] or 0),
                            completion_tokens=int(row[3] or 0))

    def put(self, key: str, answer: CachedAnswer, *, endpoint: str = "", model: str = "",
            protocol: str = "") -> None:
        """Store an answer (replacing any previous one for ``key``)."""
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               (key, endpoint, model, protocol, json.dumps(answer.values), answer.raw,
                                answer.prompt_tokens, answer.completion_tokens, time.time()))
            self._pending += 1
            if self._pending >= self._commit_every:
                self._conn.commit()
                self._pending = 0

    def flush(self) -> None:
        """Commit pending writes."""
        with self._lock:
            self._conn.commit()
            self._pending = 0

    def __bool__(self) -> bool:
        """Always true: an open cache, empty or not (without this, ``if cache`` would run ``__len__``)."""
        return True

    def __len__(self) -> int:
        """Number of stored answers; a full-table ``COUNT(*)``, so not for hot paths."""
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def clear(self) -> None:
        """Delete every stored answer."""
        with self._lock:
            self._conn.execute("DELETE FROM answers")
            self._conn.commit()

    def close(self) -> None:
        """Commit and close the database."""
        with self._lock:
            self._conn.commit()
            self._conn.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
